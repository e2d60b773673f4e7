/* nn_lstm.c — a one-layer LSTM over short sequences (torch.nn.LSTM
 * semantics, zero initial state) with backpropagation through time, and the
 * edge-pair encoder input LILOU uses: edge k becomes the sequence
 * [x_src, x_dst]. */
#include "nn.h"

#include <math.h>
#include <string.h>

static inline nn_real sigm(nn_real z) { return (nn_real)(1.0 / (1.0 + exp(-(double)z))); }

/* x[T,B,I] -> hs[T,B,Hd]; cs[T,B,Hd]; gates[T,B,4Hd] = (i, f, g, o) */
void dlp_nn_lstm_forward(nn_real *hs, nn_real *cs, nn_real *gates,
                         const nn_real *x, const nn_real *Wih,
                         const nn_real *Whh, const nn_real *bih,
                         const nn_real *bhh, int T, int B, int I, int Hd) {
    const int G4 = 4 * Hd;
    for (int t = 0; t < T; t++) {
        nn_real *gt = gates + (size_t)t * B * G4;
        for (int b = 0; b < B; b++)
            for (int k = 0; k < G4; k++)
                gt[(size_t)b * G4 + k] = (bih ? bih[k] : 0) + (bhh ? bhh[k] : 0);
        dlp_nn_gemm(false, true, B, G4, I, 1, x + (size_t)t * B * I, I, Wih, I,
                    1, gt, G4);
        if (t > 0)
            dlp_nn_gemm(false, true, B, G4, Hd, 1, hs + (size_t)(t - 1) * B * Hd,
                        Hd, Whh, Hd, 1, gt, G4);
        for (int b = 0; b < B; b++) {
            nn_real *gb = gt + (size_t)b * G4;
            const nn_real *cprev = t > 0 ? cs + ((size_t)(t - 1) * B + b) * Hd : NULL;
            nn_real *c = cs + ((size_t)t * B + b) * Hd;
            nn_real *h = hs + ((size_t)t * B + b) * Hd;
            for (int k = 0; k < Hd; k++) {
                nn_real ig = sigm(gb[k]), fg = sigm(gb[Hd + k]);
                nn_real gg = (nn_real)tanh(gb[2 * Hd + k]), og = sigm(gb[3 * Hd + k]);
                gb[k] = ig; gb[Hd + k] = fg; gb[2 * Hd + k] = gg; gb[3 * Hd + k] = og;
                c[k] = (cprev ? fg * cprev[k] : 0) + ig * gg;
                h[k] = og * (nn_real)tanh(c[k]);
            }
        }
    }
}

/* ws: dG[B,4Hd] | dh[B,Hd] | dc[B,Hd] */
void dlp_nn_lstm_backward(nn_real *dx, nn_real *dWih, nn_real *dWhh,
                          nn_real *dbih, nn_real *dbhh, nn_real *ws,
                          const nn_real *dhs, const nn_real *hs,
                          const nn_real *cs, const nn_real *gates,
                          const nn_real *x, const nn_real *Wih,
                          const nn_real *Whh, int T, int B, int I, int Hd) {
    const int G4 = 4 * Hd;
    nn_real *dG = ws, *dh = ws + (size_t)B * G4, *dc = dh + (size_t)B * Hd;
    memset(dh, 0, (size_t)2 * B * Hd * sizeof *dh);
    for (int t = T - 1; t >= 0; t--) {
        const nn_real *gt = gates + (size_t)t * B * G4;
        for (int b = 0; b < B; b++) {
            const nn_real *gb = gt + (size_t)b * G4;
            const nn_real *c = cs + ((size_t)t * B + b) * Hd;
            const nn_real *cprev = t > 0 ? cs + ((size_t)(t - 1) * B + b) * Hd : NULL;
            const nn_real *dho = dhs + ((size_t)t * B + b) * Hd;
            nn_real *dhb = dh + (size_t)b * Hd, *dcb = dc + (size_t)b * Hd;
            nn_real *dgb = dG + (size_t)b * G4;
            for (int k = 0; k < Hd; k++) {
                nn_real ig = gb[k], fg = gb[Hd + k], gg = gb[2 * Hd + k],
                        og = gb[3 * Hd + k];
                nn_real dhk = dhb[k] + dho[k];
                nn_real tc = (nn_real)tanh(c[k]);
                nn_real dck = dcb[k] + dhk * og * (1 - tc * tc);
                dgb[k] = dck * gg * ig * (1 - ig);
                dgb[Hd + k] = cprev ? dck * cprev[k] * fg * (1 - fg) : 0;
                dgb[2 * Hd + k] = dck * ig * (1 - gg * gg);
                dgb[3 * Hd + k] = dhk * tc * og * (1 - og);
                dcb[k] = dck * fg;
            }
        }
        const nn_real *xt = x + (size_t)t * B * I;
        if (dWih) dlp_nn_gemm(true, false, G4, I, B, 1, dG, G4, xt, I, 1, dWih, I);
        if (dx) dlp_nn_gemm(false, false, B, I, G4, 1, dG, G4, Wih, I, 1,
                            dx + (size_t)t * B * I, I);
        for (int b = 0; b < B; b++)
            for (int k = 0; k < G4; k++) {
                nn_real v = dG[(size_t)b * G4 + k];
                if (dbih) dbih[k] += v;
                if (dbhh) dbhh[k] += v;
            }
        if (t > 0) {
            if (dWhh)
                dlp_nn_gemm(true, false, G4, Hd, B, 1, dG, G4,
                            hs + (size_t)(t - 1) * B * Hd, Hd, 1, dWhh, Hd);
            dlp_nn_gemm(false, false, B, Hd, G4, 1, dG, G4, Whh, Hd, 0, dh, Hd);
        }
    }
}

/* xn[N,F] -> xe[2,E,F] in in-CSR edge order */
void dlp_nn_edge_pairs_forward(nn_real *xe, const nn_real *xn,
                               const dlp_nn_graph *g, int F) {
    const size_t E = (size_t)g->n_edges;
    for (int i = 0; i < g->n_nodes; i++)
        for (int p = g->in_ptr[i]; p < g->in_ptr[i + 1]; p++) {
            memcpy(xe + (size_t)p * F, xn + (size_t)g->in_src[p] * F,
                   (size_t)F * sizeof *xe);
            memcpy(xe + (E + p) * F, xn + (size_t)i * F, (size_t)F * sizeof *xe);
        }
}

void dlp_nn_edge_pairs_backward(nn_real *dxn, const nn_real *dxe,
                                const dlp_nn_graph *g, int F) {
    const size_t E = (size_t)g->n_edges;
    for (int i = 0; i < g->n_nodes; i++)
        for (int p = g->in_ptr[i]; p < g->in_ptr[i + 1]; p++) {
            nn_real *ds = dxn + (size_t)g->in_src[p] * F, *dd = dxn + (size_t)i * F;
            const nn_real *a = dxe + (size_t)p * F, *b = dxe + (E + p) * F;
            for (int f = 0; f < F; f++) { ds[f] += a[f]; dd[f] += b[f]; }
        }
}
