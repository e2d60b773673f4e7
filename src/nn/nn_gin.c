/* nn_gin.c — GIN aggregation z = (1 + eps) x + sum of neighbours, with a
 * learnable or fixed eps; the inner MLP is built from nn_linear/nn_act by
 * the caller (so any depth or norm fits in it). */
#include "nn.h"

/* x[N,F] -> z[N,F] */
void dlp_nn_gin_forward(nn_real *z, const nn_real *x, nn_real eps,
                        const dlp_nn_graph *g, int F) {
    dlp_nn_sum_aggregate_forward(z, x, g, F);
    size_t n = (size_t)g->n_nodes * F;
    for (size_t k = 0; k < n; k++) z[k] += (1 + eps) * x[k];
}

/* dx += (1 + eps) dz + scatter(dz); deps += sum dz . x */
void dlp_nn_gin_backward(nn_real *dx, nn_real *deps, const nn_real *dz,
                         const nn_real *x, nn_real eps, const dlp_nn_graph *g,
                         int F) {
    size_t n = (size_t)g->n_nodes * F;
    if (deps) {
        double s = 0;
        for (size_t k = 0; k < n; k++) s += (double)dz[k] * x[k];
        *deps += (nn_real)s;
    }
    if (!dx) return;
    for (size_t k = 0; k < n; k++) dx[k] += (1 + eps) * dz[k];
    dlp_nn_sum_aggregate_backward(dx, dz, g, F);
}
