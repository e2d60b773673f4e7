/* nn_pool.c — per-graph sum/mean/max (and mean beside cost-weighted mean)
 * pooling of node features and the concatenation of graph embeddings with
 * static feature vectors. */
#include "nn.h"

#include <string.h>

int dlp_nn_pool_dim(dlp_nn_pool p, int F) {
    return p == DLP_NN_POOL_MEAN_COST ? 2 * F : F;
}

/* out[G, 2F]: [mean | sum of node_w[n] x[n]] */
static void pool_mean_cost_forward(nn_real *out, const nn_real *x,
                                   const dlp_nn_graph *g, int F) {
    for (int gi = 0; gi < g->n_graphs; gi++) {
        int a = g->graph_ptr[gi], b = g->graph_ptr[gi + 1];
        nn_real *o = out + (size_t)gi * 2 * F, *ow = o + F;
        memset(o, 0, (size_t)2 * F * sizeof *o);
        for (int n = a; n < b; n++) {
            const nn_real *xn = x + (size_t)n * F;
            nn_real w = g->node_w[n];
            for (int f = 0; f < F; f++) {
                o[f] += xn[f];
                ow[f] += w * xn[f];
            }
        }
        if (b > a)
            for (int f = 0; f < F; f++) o[f] /= (nn_real)(b - a);
    }
}

static void pool_mean_cost_backward(nn_real *dx, const nn_real *dout,
                                    const dlp_nn_graph *g, int F) {
    for (int gi = 0; gi < g->n_graphs; gi++) {
        int a = g->graph_ptr[gi], b = g->graph_ptr[gi + 1];
        const nn_real *d = dout + (size_t)gi * 2 * F, *dw = d + F;
        nn_real s = b > a ? (nn_real)1 / (nn_real)(b - a) : 0;
        for (int n = a; n < b; n++) {
            nn_real w = g->node_w[n];
            nn_real *dn = dx + (size_t)n * F;
            for (int f = 0; f < F; f++) dn[f] += d[f] * s + dw[f] * w;
        }
    }
}

/* x[N,F] -> out[G,F] */
void dlp_nn_pool_forward(nn_real *out, int32_t *arg, const nn_real *x,
                         const dlp_nn_graph *g, int F, dlp_nn_pool p) {
    if (p == DLP_NN_POOL_MEAN_COST) {
        pool_mean_cost_forward(out, x, g, F);
        return;
    }
    for (int gi = 0; gi < g->n_graphs; gi++) {
        int a = g->graph_ptr[gi], b = g->graph_ptr[gi + 1];
        nn_real *o = out + (size_t)gi * F;
        memset(o, 0, (size_t)F * sizeof *o);
        if (p == DLP_NN_POOL_MAX) {
            for (int f = 0; f < F; f++) arg[(size_t)gi * F + f] = -1;
            if (a == b) continue;
            for (int f = 0; f < F; f++) {
                o[f] = x[(size_t)a * F + f];
                arg[(size_t)gi * F + f] = a;
            }
            for (int n = a + 1; n < b; n++)
                for (int f = 0; f < F; f++)
                    if (x[(size_t)n * F + f] > o[f]) {
                        o[f] = x[(size_t)n * F + f];
                        arg[(size_t)gi * F + f] = n;
                    }
            continue;
        }
        for (int n = a; n < b; n++)
            for (int f = 0; f < F; f++) o[f] += x[(size_t)n * F + f];
        if (p == DLP_NN_POOL_MEAN && b > a)
            for (int f = 0; f < F; f++) o[f] /= (nn_real)(b - a);
    }
}

void dlp_nn_pool_backward(nn_real *dx, const nn_real *dout,
                          const int32_t *arg, const dlp_nn_graph *g, int F,
                          dlp_nn_pool p) {
    if (p == DLP_NN_POOL_MEAN_COST) {
        pool_mean_cost_backward(dx, dout, g, F);
        return;
    }
    for (int gi = 0; gi < g->n_graphs; gi++) {
        int a = g->graph_ptr[gi], b = g->graph_ptr[gi + 1];
        const nn_real *d = dout + (size_t)gi * F;
        if (p == DLP_NN_POOL_MAX) {
            for (int f = 0; f < F; f++) {
                int n = arg[(size_t)gi * F + f];
                if (n >= 0) dx[(size_t)n * F + f] += d[f];
            }
            continue;
        }
        nn_real s = (p == DLP_NN_POOL_MEAN && b > a) ? (nn_real)1 / (nn_real)(b - a) : 1;
        for (int n = a; n < b; n++)
            for (int f = 0; f < F; f++) dx[(size_t)n * F + f] += d[f] * s;
    }
}

/* out[R,A+B] = [a | b] */
void dlp_nn_concat_forward(nn_real *out, const nn_real *a, const nn_real *b,
                           int R, int A, int B) {
    for (int r = 0; r < R; r++) {
        if (A) memcpy(out + (size_t)r * (A + B), a + (size_t)r * A, (size_t)A * sizeof *out);
        if (B) memcpy(out + (size_t)r * (A + B) + A, b + (size_t)r * B, (size_t)B * sizeof *out);
    }
}

void dlp_nn_concat_backward(nn_real *da, nn_real *db, const nn_real *dout,
                            int R, int A, int B) {
    for (int r = 0; r < R; r++) {
        const nn_real *d = dout + (size_t)r * (A + B);
        if (da) for (int k = 0; k < A; k++) da[(size_t)r * A + k] += d[k];
        if (db) for (int k = 0; k < B; k++) db[(size_t)r * B + k] += d[A + k];
    }
}
