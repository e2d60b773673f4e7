/* nn_gcn.c — GCN convolution (Kipf & Welling) with one self-loop per node
 * and symmetric normalisation, forward and backward. Self-loop edges already
 * in the graph are skipped and replaced by the implicit loop, as PyG's
 * add_remaining_self_loops does. */
#include "nn.h"

#include <math.h>
#include <string.h>

static inline nn_real gcn_deg(const dlp_nn_graph *g, int i) {
    return (nn_real)(1 + g->in_ptr[i + 1] - g->in_ptr[i] - g->loops[i]);
}

typedef struct {
    nn_real *out;
    const nn_real *h, *b;
    const dlp_nn_graph *g;
    int O;
} nn_gcn_ctx;

/* out_i = h_i / d_i + sum_{j->i, j!=i} h_j / sqrt(d_i d_j) + b */
static void gcn_fwd_range(void *vctx, int lo, int hi) {
    nn_gcn_ctx *c = vctx;
    const dlp_nn_graph *g = c->g;
    const int O = c->O;
    for (int i = lo; i < hi; i++) {
        nn_real *o = c->out + (size_t)i * O;
        nn_real di = gcn_deg(g, i);
        const nn_real *hi_ = c->h + (size_t)i * O;
        for (int k = 0; k < O; k++) o[k] = hi_[k] / di + (c->b ? c->b[k] : 0);
        for (int p = g->in_ptr[i]; p < g->in_ptr[i + 1]; p++) {
            int j = g->in_src[p];
            if (j == i) continue;
            nn_real s = (nn_real)1 / (nn_real)sqrt((double)di * gcn_deg(g, j));
            const nn_real *hj = c->h + (size_t)j * O;
            for (int k = 0; k < O; k++) o[k] += s * hj[k];
        }
    }
}

/* dh_j = dout_j / d_j + sum_{j->i, i!=j} dout_i / sqrt(d_i d_j) */
static void gcn_bwd_range(void *vctx, int lo, int hi) {
    nn_gcn_ctx *c = vctx;
    const dlp_nn_graph *g = c->g;
    const int O = c->O;
    const nn_real *dout = c->h;
    for (int j = lo; j < hi; j++) {
        nn_real *o = c->out + (size_t)j * O;
        nn_real dj = gcn_deg(g, j);
        const nn_real *dj_ = dout + (size_t)j * O;
        for (int k = 0; k < O; k++) o[k] = dj_[k] / dj;
        for (int p = g->out_ptr[j]; p < g->out_ptr[j + 1]; p++) {
            int i = g->out_dst[p];
            if (i == j) continue;
            nn_real s = (nn_real)1 / (nn_real)sqrt((double)dj * gcn_deg(g, i));
            const nn_real *di = dout + (size_t)i * O;
            for (int k = 0; k < O; k++) o[k] += s * di[k];
        }
    }
}

/* x[N,I], W[O,I], b[O] -> out[N,O]; saves h[N,O] = x W^T */
void dlp_nn_gcn_forward(nn_real *out, nn_real *h, const nn_real *x,
                        const nn_real *W, const nn_real *b,
                        const dlp_nn_graph *g, int I, int O) {
    dlp_nn_linear_forward(h, x, W, NULL, g->n_nodes, I, O);
    nn_gcn_ctx c = {out, h, b, g, O};
    size_t work = ((size_t)g->n_nodes + (size_t)g->n_edges) * (size_t)O;
    dlp_nn_parallel_for(dlp_nn_threads_for(work), g->n_nodes, gcn_fwd_range, &c);
}

/* dh_ws[N,O] scratch */
void dlp_nn_gcn_backward(nn_real *dx, nn_real *dW, nn_real *db,
                         nn_real *dh_ws, const nn_real *dout, const nn_real *x,
                         const nn_real *W, const dlp_nn_graph *g, int I, int O) {
    nn_gcn_ctx c = {dh_ws, dout, NULL, g, O};
    size_t work = ((size_t)g->n_nodes + (size_t)g->n_edges) * (size_t)O;
    dlp_nn_parallel_for(dlp_nn_threads_for(work), g->n_nodes, gcn_bwd_range, &c);
    if (db)
        for (int n = 0; n < g->n_nodes; n++)
            for (int k = 0; k < O; k++) db[k] += dout[(size_t)n * O + k];
    dlp_nn_linear_backward(dx, dW, NULL, dh_ws, x, W, g->n_nodes, I, O);
}
