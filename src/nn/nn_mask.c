/* nn_mask.c — masked-feature pre-training pieces (GraphMAE, used by GIN in
 * GNN+LLM): choose the masked nodes, swap their features for a learnable
 * token, gather rows for the reconstruction loss; forward and backward. */
#include "nn.h"

#include <math.h>
#include <stdlib.h>

static int cmp_i32(const void *a, const void *b) {
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* idx[N] scratch and result: a partial Fisher-Yates over 0..N-1 */
int dlp_nn_mask_select(int32_t *idx, int N, double rate, dlp_nn_rng *r) {
    if (N <= 0 || !(rate > 0)) return 0;
    if (rate > 1) rate = 1;
    int K = (int)lround(rate * N);
    if (K < 1) K = 1;
    for (int i = 0; i < N; i++) idx[i] = i;
    for (int i = 0; i < K; i++) {
        int j = i + (int)dlp_nn_rng_below(r, (uint64_t)(N - i));
        int32_t t = idx[i]; idx[i] = idx[j]; idx[j] = t;
    }
    qsort(idx, (size_t)K, sizeof *idx, cmp_i32);
    return K;
}

/* x[N,F], token[F] -> out[N,F] */
void dlp_nn_mask_forward(nn_real *out, const nn_real *x, const nn_real *token,
                         const int32_t *idx, int K, int N, int F) {
    int k = 0;
    for (int n = 0; n < N; n++) {
        const nn_real *src = x + (size_t)n * F;
        if (k < K && idx[k] == n) { src = token; k++; }
        nn_real *o = out + (size_t)n * F;
        for (int f = 0; f < F; f++) o[f] = src[f];
    }
}

void dlp_nn_mask_backward(nn_real *dx, nn_real *dtoken, const nn_real *dout,
                          const int32_t *idx, int K, int N, int F) {
    int k = 0;
    for (int n = 0; n < N; n++) {
        const nn_real *d = dout + (size_t)n * F;
        if (k < K && idx[k] == n) {
            if (dtoken) for (int f = 0; f < F; f++) dtoken[f] += d[f];
            k++;
        } else if (dx) {
            nn_real *o = dx + (size_t)n * F;
            for (int f = 0; f < F; f++) o[f] += d[f];
        }
    }
}

/* x[N,F] -> out[K,F] */
void dlp_nn_gather_rows_forward(nn_real *out, const nn_real *x,
                                const int32_t *idx, int K, int F) {
    for (int k = 0; k < K; k++)
        for (int f = 0; f < F; f++)
            out[(size_t)k * F + f] = x[(size_t)idx[k] * F + f];
}

void dlp_nn_gather_rows_backward(nn_real *dx, const nn_real *dout,
                                 const int32_t *idx, int K, int F) {
    for (int k = 0; k < K; k++)
        for (int f = 0; f < F; f++)
            dx[(size_t)idx[k] * F + f] += dout[(size_t)k * F + f];
}
