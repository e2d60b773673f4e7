/* nn_pool.c — per-graph sum/mean/max (and the mean beside a cost-weighted
 * mean or a cost-weighted log-sum-exp) pooling of node features and the
 * concatenation of graph embeddings with static feature vectors. */
#include "nn.h"

#include <math.h>
#include <string.h>

bool dlp_nn_pool_weighted(dlp_nn_pool p) {
    return p == DLP_NN_POOL_MEAN_COST || p == DLP_NN_POOL_MEAN_LSE;
}

int dlp_nn_pool_dim(dlp_nn_pool p, int F) {
    return dlp_nn_pool_weighted(p) ? 2 * F : F;
}

/* out[G, 2F]: [mean | log sum_n node_w[n] exp(x[n])], the second half
 * computed from the largest x[n, f] of the graph down, so no exp
 * overflows; an empty graph pools to 0. Nodes are walked row by row (the
 * rows are contiguous) with the sums kept in double, LSE_CHUNK columns at
 * a time; a row's exps come from dlp_nn_exp_diff (nn_exp.c: eight at a
 * time; the readout's expf calls were ~14% of the mean+lse member's
 * training samples). */
#define LSE_CHUNK 256
static void pool_mean_lse_forward(nn_real *out, const nn_real *x,
                                  const dlp_nn_graph *g, int F) {
    double s[LSE_CHUNK];
    nn_real e[LSE_CHUNK];
    for (int gi = 0; gi < g->n_graphs; gi++) {
        int a = g->graph_ptr[gi], b = g->graph_ptr[gi + 1];
        nn_real *o = out + (size_t)gi * 2 * F, *ol = o + F;
        memset(o, 0, (size_t)2 * F * sizeof *o);
        if (b == a) continue;
        for (int f = 0; f < F; f++) ol[f] = x[(size_t)a * F + f];
        for (int n = a; n < b; n++) {
            const nn_real *xn = x + (size_t)n * F;
            for (int f = 0; f < F; f++) {
                o[f] += xn[f];
                if (xn[f] > ol[f]) ol[f] = xn[f];
            }
        }
        for (int f0 = 0; f0 < F; f0 += LSE_CHUNK) {
            int nf = F - f0 < LSE_CHUNK ? F - f0 : LSE_CHUNK;
            const nn_real *m = ol + f0;
            for (int f = 0; f < nf; f++) s[f] = 0;
            for (int n = a; n < b; n++) {
                nn_real w = g->node_w[n];
                dlp_nn_exp_diff(e, x + (size_t)n * F + f0, m, nf);
                for (int f = 0; f < nf; f++) s[f] += w * e[f];
            }
            for (int f = 0; f < nf; f++)
                ol[f0 + f] += (nn_real)log(s[f] > 0 ? s[f] : 1e-300);
        }
        for (int f = 0; f < F; f++) o[f] /= (nn_real)(b - a);
    }
}

/* d out_lse[f] / d x[n, f] = node_w[n] exp(x[n, f] - out_lse[f]): the
 * node's share of the graph's sum */
static void pool_mean_lse_backward(nn_real *dx, const nn_real *dout,
                                   const dlp_nn_graph *g, int F,
                                   const nn_real *x, const nn_real *out) {
    nn_real e[LSE_CHUNK];
    for (int gi = 0; gi < g->n_graphs; gi++) {
        int a = g->graph_ptr[gi], b = g->graph_ptr[gi + 1];
        const nn_real *d = dout + (size_t)gi * 2 * F, *dl = d + F;
        const nn_real *ol = out + (size_t)gi * 2 * F + F;
        nn_real s = b > a ? (nn_real)1 / (nn_real)(b - a) : 0;
        for (int n = a; n < b; n++) {
            nn_real w = g->node_w[n];
            const nn_real *xn = x + (size_t)n * F;
            nn_real *dn = dx + (size_t)n * F;
            for (int f0 = 0; f0 < F; f0 += LSE_CHUNK) {
                int nf = F - f0 < LSE_CHUNK ? F - f0 : LSE_CHUNK;
                dlp_nn_exp_diff(e, xn + f0, ol + f0, nf);
                for (int f = 0; f < nf; f++)
                    dn[f0 + f] += d[f0 + f] * s + dl[f0 + f] * w * e[f];
            }
        }
    }
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
    if (p == DLP_NN_POOL_MEAN_LSE) {
        pool_mean_lse_forward(out, x, g, F);
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
                          dlp_nn_pool p, const nn_real *x, const nn_real *out) {
    if (p == DLP_NN_POOL_MEAN_COST) {
        pool_mean_cost_backward(dx, dout, g, F);
        return;
    }
    if (p == DLP_NN_POOL_MEAN_LSE) {
        pool_mean_lse_backward(dx, dout, g, F, x, out);
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
