/* nn_aggregate.c — neighbourhood sum and mean, forward and backward. The
 * forward reads the CSR by destination (each node gathers its in-edges),
 * the backward the CSR by source (each node gathers the gradients of the
 * nodes it feeds), so both run row-parallel without atomics and in a fixed
 * summation order. */
#include "nn.h"

#include <string.h>

typedef struct {
    nn_real *out;
    const nn_real *in;
    const dlp_nn_graph *g;
    int F;
    bool mean;
} nn_agg_ctx;

/* agg[i] = (1/deg i if mean) sum_{j->i} x[j] */
static void agg_fwd_range(void *vctx, int lo, int hi) {
    nn_agg_ctx *c = vctx;
    const int F = c->F;
    for (int i = lo; i < hi; i++) {
        nn_real *o = c->out + (size_t)i * F;
        memset(o, 0, (size_t)F * sizeof *o);
        int p0 = c->g->in_ptr[i], p1 = c->g->in_ptr[i + 1];
        for (int p = p0; p < p1; p++) {
            const nn_real *xs = c->in + (size_t)c->g->in_src[p] * F;
            for (int f = 0; f < F; f++) o[f] += xs[f];
        }
        if (c->mean && p1 > p0) {
            nn_real s = (nn_real)1 / (nn_real)(p1 - p0);
            for (int f = 0; f < F; f++) o[f] *= s;
        }
    }
}

/* dx[j] += sum_{j->i} dagg[i] (/ deg i if mean) */
static void agg_bwd_range(void *vctx, int lo, int hi) {
    nn_agg_ctx *c = vctx;
    const int F = c->F;
    const dlp_nn_graph *g = c->g;
    for (int j = lo; j < hi; j++) {
        nn_real *o = c->out + (size_t)j * F;
        for (int p = g->out_ptr[j]; p < g->out_ptr[j + 1]; p++) {
            int i = g->out_dst[p];
            const nn_real *d = c->in + (size_t)i * F;
            if (c->mean) {
                nn_real s = (nn_real)1 / (nn_real)(g->in_ptr[i + 1] - g->in_ptr[i]);
                for (int f = 0; f < F; f++) o[f] += d[f] * s;
            } else {
                for (int f = 0; f < F; f++) o[f] += d[f];
            }
        }
    }
}

static void agg_run(nn_real *out, const nn_real *in, const dlp_nn_graph *g,
                    int F, bool mean, bool fwd) {
    nn_agg_ctx c = {out, in, g, F, mean};
    size_t work = ((size_t)g->n_nodes + (size_t)g->n_edges) * (size_t)F;
    dlp_nn_parallel_for(dlp_nn_threads_for(work), g->n_nodes,
                        fwd ? agg_fwd_range : agg_bwd_range, &c);
}

void dlp_nn_mean_aggregate_forward(nn_real *agg, const nn_real *x,
                                   const dlp_nn_graph *g, int F) {
    agg_run(agg, x, g, F, true, true);
}
void dlp_nn_mean_aggregate_backward(nn_real *dx, const nn_real *dagg,
                                    const dlp_nn_graph *g, int F) {
    agg_run(dx, dagg, g, F, true, false);
}
void dlp_nn_sum_aggregate_forward(nn_real *agg, const nn_real *x,
                                  const dlp_nn_graph *g, int F) {
    agg_run(agg, x, g, F, false, true);
}
void dlp_nn_sum_aggregate_backward(nn_real *dx, const nn_real *dagg,
                                   const dlp_nn_graph *g, int F) {
    agg_run(dx, dagg, g, F, false, false);
}
