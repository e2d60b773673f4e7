/* nn_edge.c — edge reconstruction for graph autoencoders: the inner-product
 * decoder (forward and backward) and negative sampling of non-edges inside
 * each graph of a batch. */
#include "nn.h"

/* z[N,F] -> score[K] = z[src_k] . z[dst_k] */
void dlp_nn_edge_dot_forward(nn_real *score, const nn_real *z,
                             const int32_t *src, const int32_t *dst, int K,
                             int F) {
    for (int k = 0; k < K; k++) {
        const nn_real *a = z + (size_t)src[k] * F, *b = z + (size_t)dst[k] * F;
        double s = 0;
        for (int f = 0; f < F; f++) s += (double)a[f] * b[f];
        score[k] = (nn_real)s;
    }
}

void dlp_nn_edge_dot_backward(nn_real *dz, const nn_real *dscore,
                              const nn_real *z, const int32_t *src,
                              const int32_t *dst, int K, int F) {
    for (int k = 0; k < K; k++) {
        const nn_real *a = z + (size_t)src[k] * F, *b = z + (size_t)dst[k] * F;
        nn_real *da = dz + (size_t)src[k] * F, *db = dz + (size_t)dst[k] * F;
        for (int f = 0; f < F; f++) {
            da[f] += dscore[k] * b[f];
            db[f] += dscore[k] * a[f];
        }
    }
}

static bool has_edge(const dlp_nn_graph *g, int u, int v) {
    for (int p = g->out_ptr[u]; p < g->out_ptr[u + 1]; p++)
        if (g->out_dst[p] == v) return true;
    return false;
}

int dlp_nn_negative_sample(int32_t *src, int32_t *dst, int K,
                           const dlp_nn_graph *g, dlp_nn_rng *r) {
    int n_ok = 0;
    for (int gi = 0; gi < g->n_graphs; gi++)
        if (g->graph_ptr[gi + 1] - g->graph_ptr[gi] >= 2) n_ok++;
    if (n_ok == 0 || K <= 0) return 0;
    for (int k = 0; k < K; k++) {
        int gi;
        do gi = (int)dlp_nn_rng_below(r, (uint64_t)g->n_graphs);
        while (g->graph_ptr[gi + 1] - g->graph_ptr[gi] < 2);
        int a = g->graph_ptr[gi], n = g->graph_ptr[gi + 1] - a, u = a, v = a + 1;
        for (int tries = 0; tries < 32; tries++) {
            u = a + (int)dlp_nn_rng_below(r, (uint64_t)n);
            v = a + (int)dlp_nn_rng_below(r, (uint64_t)n - 1);
            if (v >= u) v++;                    /* never a loop */
            if (!has_edge(g, u, v)) break;
        }
        src[k] = u; dst[k] = v;
    }
    return K;
}
