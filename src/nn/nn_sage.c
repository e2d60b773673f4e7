/* nn_sage.c — GraphSAGE convolution (mean aggregation, root weight,
 * optional L2 normalisation of the output rows), forward and backward.
 * The aggregation is fused with the pass that follows or precedes it, so
 * each layer touches its N x I / N x O buffers as few times as possible:
 *   forward:  one pass (agg rows + bias rows), two GEMMs;
 *   backward: two GEMMs into dagg / dx (written, no zeroing), two weight
 *             GEMMs, one pass (dx += gathered dagg, then the ReLU mask). */
#include "nn.h"

#include <math.h>
#include <string.h>

typedef struct {
    nn_real *agg, *o;          /* [N,I], [N,O] */
    const nn_real *x, *b;      /* [N,I], [O] */
    const dlp_nn_graph *g;
    int I, O;
} sage_fwd_ctx;

/* agg[i] = mean_{j->i} x[j]; o[i] = b (or 0) */
static void sage_fwd_range(void *vctx, int lo, int hi) {
    sage_fwd_ctx *c = vctx;
    const int I = c->I, O = c->O;
    const int32_t *ptr = c->g->in_ptr, *src = c->g->in_src;
    for (int i = lo; i < hi; i++) {
        nn_real *a = c->agg + (size_t)i * I;
        memset(a, 0, (size_t)I * sizeof *a);
        int p0 = ptr[i], p1 = ptr[i + 1];
        for (int p = p0; p < p1; p++) {
            const nn_real *xs = c->x + (size_t)src[p] * I;
            for (int f = 0; f < I; f++) a[f] += xs[f];
        }
        if (p1 > p0) {
            nn_real s = (nn_real)1 / (nn_real)(p1 - p0);
            for (int f = 0; f < I; f++) a[f] *= s;
        }
        nn_real *o = c->o + (size_t)i * O;
        if (c->b) memcpy(o, c->b, (size_t)O * sizeof *o);
        else memset(o, 0, (size_t)O * sizeof *o);
    }
}

typedef struct {
    nn_real *dx;               /* [N,I] */
    const nn_real *dagg;       /* [N,I] */
    const nn_real *mask;       /* [N,I] or NULL */
    const dlp_nn_graph *g;
    int I;
} sage_bwd_ctx;

/* dx[j] += sum_{j->i} dagg[i] / deg i; then dx[j] = mask[j] > 0 ? dx[j] : 0 */
static void sage_bwd_range(void *vctx, int lo, int hi) {
    sage_bwd_ctx *c = vctx;
    const int I = c->I;
    const dlp_nn_graph *g = c->g;
    for (int j = lo; j < hi; j++) {
        nn_real *o = c->dx + (size_t)j * I;
        for (int p = g->out_ptr[j]; p < g->out_ptr[j + 1]; p++) {
            int i = g->out_dst[p];
            const nn_real *d = c->dagg + (size_t)i * I;
            nn_real s = (nn_real)1 / (nn_real)(g->in_ptr[i + 1] - g->in_ptr[i]);
            for (int f = 0; f < I; f++) o[f] += d[f] * s;
        }
        if (c->mask) {
            const nn_real *m = c->mask + (size_t)j * I;
            for (int f = 0; f < I; f++) o[f] = dlp_nn_relu_mask(m[f], o[f]);
        }
    }
}

typedef struct {
    nn_real *db;               /* [O] */
    const nn_real *d;          /* [N,O] */
    int N, O;
} sage_db_ctx;

/* db[o] += sum_n d[n,o] for columns [lo, hi): each column summed in row
 * order, whatever the split */
static void sage_db_range(void *vctx, int lo, int hi) {
    sage_db_ctx *c = vctx;
    for (int n = 0; n < c->N; n++) {
        const nn_real *r = c->d + (size_t)n * c->O;
        for (int o = lo; o < hi; o++) c->db[o] += r[o];
    }
}

static int sage_threads(const dlp_nn_graph *g, int F) {
    return dlp_nn_threads_for(((size_t)g->n_nodes + (size_t)g->n_edges) * (size_t)F);
}

/* out[N,O] = mean_agg(x)[N,I] @ Wl[O,I]^T + bl[O] + x[N,I] @ Wr[O,I]^T
 * normalize: pre[N,O] keeps the unnormalised rows, nrm[N] max(|pre|,1e-12) */
void dlp_nn_sage_forward_ex(nn_real *out, nn_real *agg, nn_real *pre,
                            nn_real *nrm, const nn_real *x, const nn_real *Wl,
                            const nn_real *bl, const nn_real *Wr,
                            const dlp_nn_graph *g, dlp_nn_sage_cfg c,
                            const dlp_nn_sage_exec *e) {
    const int N = g->n_nodes;
    nn_real *o = c.normalize ? pre : out;
    sage_fwd_ctx fc = {agg, o, x, bl, g, c.I, c.O};
    dlp_nn_workers_run(e ? e->workers : NULL, sage_threads(g, c.I), N,
                       sage_fwd_range, &fc);
    dlp_nn_gemm(false, true, N, c.O, c.I, 1, agg, c.I, Wl, c.I, 1, o, c.O);
    dlp_nn_gemm(false, true, N, c.O, c.I, 1, x, c.I, Wr, c.I, 1, o, c.O);
    if (!c.normalize) return;
    for (int n = 0; n < N; n++) {
        const nn_real *r = pre + (size_t)n * c.O;
        double s = 0;
        for (int k = 0; k < c.O; k++) s += (double)r[k] * r[k];
        double nv = sqrt(s);
        if (nv < 1e-12) nv = 1e-12;
        nrm[n] = (nn_real)nv;
        for (int k = 0; k < c.O; k++) out[(size_t)n * c.O + k] = r[k] / nrm[n];
    }
}

void dlp_nn_sage_forward(nn_real *out, nn_real *agg, nn_real *pre,
                         nn_real *nrm, const nn_real *x, const nn_real *Wl,
                         const nn_real *bl, const nn_real *Wr,
                         const dlp_nn_graph *g, dlp_nn_sage_cfg c) {
    dlp_nn_sage_forward_ex(out, agg, pre, nrm, x, Wl, bl, Wr, g, c, NULL);
}

/* dagg_ws[N,I], dpre_ws[N,O] (normalize only) are scratch. */
void dlp_nn_sage_backward_ex(nn_real *dx, nn_real *dWl, nn_real *dbl,
                             nn_real *dWr, nn_real *dagg_ws, nn_real *dpre_ws,
                             const nn_real *dout, const nn_real *out,
                             const nn_real *agg, const nn_real *nrm,
                             const nn_real *x, const nn_real *Wl,
                             const nn_real *Wr, const dlp_nn_graph *g,
                             dlp_nn_sage_cfg c, const dlp_nn_sage_exec *e) {
    const int N = g->n_nodes;
    const nn_real *dpre = dout;
    if (c.normalize) {
        /* y = p / max(|p|, eps): dp = (dy - y (y.dy)) / |p| when |p| > eps */
        for (int n = 0; n < N; n++) {
            const nn_real *dy = dout + (size_t)n * c.O;
            const nn_real *y = out + (size_t)n * c.O;
            nn_real *dp = dpre_ws + (size_t)n * c.O;
            double yd = 0;
            for (int k = 0; k < c.O; k++) yd += (double)y[k] * dy[k];
            bool clamped = nrm[n] <= (nn_real)1e-12;
            for (int k = 0; k < c.O; k++)
                dp[k] = clamped ? dy[k] / nrm[n]
                                : (nn_real)((dy[k] - y[k] * yd) / nrm[n]);
        }
        dpre = dpre_ws;
    }
    /* dagg = dpre @ Wl is only needed to reach dx; written (beta 0), which
     * gives the same values as zeroing and accumulating */
    if (dx) dlp_nn_gemm(false, false, N, c.I, c.O, 1, dpre, c.O, Wl, c.I, 0, dagg_ws, c.I);
    dlp_nn_linear_backward(NULL, dWl, NULL, dpre, agg, Wl, N, c.I, c.O);
    if (dbl) { /* column sums, split by columns */
        sage_db_ctx dc = {dbl, dpre, N, c.O};
        dlp_nn_workers_run(e ? e->workers : NULL,
                           c.O >= 64 ? dlp_nn_threads_for((size_t)N * c.O) : 1,
                           c.O, sage_db_range, &dc);
    }
    if (dx) dlp_nn_gemm(false, false, N, c.I, c.O, 1, dpre, c.O, Wr, c.I,
                        e && e->dx_write ? 0 : 1, dx, c.I);
    dlp_nn_linear_backward(NULL, dWr, NULL, dpre, x, Wr, N, c.I, c.O);
    if (!dx) return;
    sage_bwd_ctx bc = {dx, dagg_ws, e ? e->relu_in : NULL, g, c.I};
    dlp_nn_workers_run(e ? e->workers : NULL, sage_threads(g, c.I), N,
                       sage_bwd_range, &bc);
}

void dlp_nn_sage_backward(nn_real *dx, nn_real *dWl, nn_real *dbl,
                          nn_real *dWr, nn_real *dagg_ws, nn_real *dpre_ws,
                          const nn_real *dout, const nn_real *out,
                          const nn_real *agg, const nn_real *nrm,
                          const nn_real *x, const nn_real *Wl,
                          const nn_real *Wr, const dlp_nn_graph *g,
                          dlp_nn_sage_cfg c) {
    dlp_nn_sage_backward_ex(dx, dWl, dbl, dWr, dagg_ws, dpre_ws, dout, out, agg,
                            nrm, x, Wl, Wr, g, c, NULL);
}
