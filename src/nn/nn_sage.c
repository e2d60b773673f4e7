/* nn_sage.c — GraphSAGE convolution (mean aggregation, root weight,
 * optional L2 normalisation of the output rows), forward and backward. */
#include "nn.h"

#include <math.h>
#include <string.h>

/* out[N,O] = mean_agg(x)[N,I] @ Wl[O,I]^T + bl[O] + x[N,I] @ Wr[O,I]^T
 * normalize: pre[N,O] keeps the unnormalised rows, nrm[N] max(|pre|,1e-12) */
void dlp_nn_sage_forward(nn_real *out, nn_real *agg, nn_real *pre,
                         nn_real *nrm, const nn_real *x, const nn_real *Wl,
                         const nn_real *bl, const nn_real *Wr,
                         const dlp_nn_graph *g, dlp_nn_sage_cfg c) {
    const int N = g->n_nodes;
    dlp_nn_mean_aggregate_forward(agg, x, g, c.I);
    nn_real *o = c.normalize ? pre : out;
    dlp_nn_linear_forward(o, agg, Wl, bl, N, c.I, c.O);
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

/* dagg_ws[N,I], dpre_ws[N,O] (normalize only) are scratch. */
void dlp_nn_sage_backward(nn_real *dx, nn_real *dWl, nn_real *dbl,
                          nn_real *dWr, nn_real *dagg_ws, nn_real *dpre_ws,
                          const nn_real *dout, const nn_real *out,
                          const nn_real *agg, const nn_real *nrm,
                          const nn_real *x, const nn_real *Wl,
                          const nn_real *Wr, const dlp_nn_graph *g,
                          dlp_nn_sage_cfg c) {
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
    /* dagg = dpre @ Wl is only needed to reach dx */
    if (dx) memset(dagg_ws, 0, (size_t)N * c.I * sizeof *dagg_ws);
    dlp_nn_linear_backward(dx ? dagg_ws : NULL, dWl, dbl, dpre, agg, Wl, N, c.I, c.O);
    dlp_nn_linear_backward(dx, dWr, NULL, dpre, x, Wr, N, c.I, c.O);
    if (dx) dlp_nn_mean_aggregate_backward(dx, dagg_ws, g, c.I);
}
