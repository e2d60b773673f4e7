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

/* dbl += column sums of dpre[N,O], split by columns */
static void sage_bias_grad(nn_real *dbl, const nn_real *dpre, int N, int O,
                           const dlp_nn_sage_exec *e) {
    sage_db_ctx dc = {dbl, dpre, N, O};
    dlp_nn_workers_run(e ? e->workers : NULL,
                       O >= 64 ? dlp_nn_threads_for((size_t)N * O) : 1, O,
                       sage_db_range, &dc);
}

static int sage_threads(const dlp_nn_graph *g, int F) {
    return dlp_nn_threads_for(((size_t)g->n_nodes + (size_t)g->n_edges) * (size_t)F);
}

/* out[n] = pre[n] / max(|pre[n]|, 1e-12), nrm[n] that divisor */
static void sage_normalize(nn_real *out, nn_real *nrm, const nn_real *pre,
                           int N, int O) {
    for (int n = 0; n < N; n++) {
        const nn_real *r = pre + (size_t)n * O;
        double s = 0;
        for (int k = 0; k < O; k++) s += (double)r[k] * r[k];
        double nv = sqrt(s);
        if (nv < 1e-12) nv = 1e-12;
        nrm[n] = (nn_real)nv;
        for (int k = 0; k < O; k++) out[(size_t)n * O + k] = r[k] / nrm[n];
    }
}

/* y = p / max(|p|, eps): dp = (dy - y (y.dy)) / |p| when |p| > eps; the
 * gradient at the unnormalised rows into dp */
static void sage_normalize_backward(nn_real *dp_all, const nn_real *dout,
                                    const nn_real *out, const nn_real *nrm,
                                    int N, int O) {
    for (int n = 0; n < N; n++) {
        const nn_real *dy = dout + (size_t)n * O;
        const nn_real *y = out + (size_t)n * O;
        nn_real *dp = dp_all + (size_t)n * O;
        double yd = 0;
        for (int k = 0; k < O; k++) yd += (double)y[k] * dy[k];
        bool clamped = nrm[n] <= (nn_real)1e-12;
        for (int k = 0; k < O; k++)
            dp[k] = clamped ? dy[k] / nrm[n]
                            : (nn_real)((dy[k] - y[k] * yd) / nrm[n]);
    }
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
    if (c.normalize) sage_normalize(out, nrm, pre, N, c.O);
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
        sage_normalize_backward(dpre_ws, dout, out, nrm, N, c.O);
        dpre = dpre_ws;
    }
    /* dagg = dpre @ Wl is only needed to reach dx; written (beta 0), which
     * gives the same values as zeroing and accumulating */
    if (dx) dlp_nn_gemm(false, false, N, c.I, c.O, 1, dpre, c.O, Wl, c.I, 0, dagg_ws, c.I);
    dlp_nn_linear_backward(NULL, dWl, NULL, dpre, agg, Wl, N, c.I, c.O);
    if (dbl) sage_bias_grad(dbl, dpre, N, c.O, e);
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

/* ---- a first layer whose input starts with a one-hot block (dlp_nn_cat) --
 * Row n of the input is [base + scale[k] at k = cat[n] | x[n]] (dim + D
 * columns). Its products with the weights' block columns are row lookups:
 *   x_full @ Wr^T = cr + tr[cat n] + x @ Wr_D^T,
 *   cr = sum_k base[k] Wr[:, k], tr[k] = scale[k] Wr[:, k],
 * and the mean over in-neighbours likewise (cl, tl, for nodes with any),
 * so the layer's GEMMs run over the D dense columns only. The inference
 * DIPPM's input is 79 op one-hot columns of 113: its first layer's
 * products shrink ~3x. Results equal the dense layer's on the full rows
 * up to rounding (tests/test_nn_grad.c). */

/* tab [2 dim O + 2 O]: tl | tr | cl | cr from Wl, Wr [O, I] */
static void sage_cat_tables(nn_real *tab, const dlp_nn_cat *cat,
                            const nn_real *Wl, const nn_real *Wr, int I,
                            int O) {
    const int dim = cat->dim;
    nn_real *tl = tab, *tr = tab + (size_t)dim * O;
    nn_real *cl = tr + (size_t)dim * O, *cr = cl + O;
    for (int o = 0; o < O; o++) {
        const nn_real *wl = Wl + (size_t)o * I, *wr = Wr + (size_t)o * I;
        double sl = 0, sr = 0;
        for (int k = 0; k < dim; k++) {
            tl[(size_t)k * O + o] = cat->scale[k] * wl[k];
            tr[(size_t)k * O + o] = cat->scale[k] * wr[k];
            sl += (double)cat->base[k] * wl[k];
            sr += (double)cat->base[k] * wr[k];
        }
        cl[o] = (nn_real)sl;
        cr[o] = (nn_real)sr;
    }
}

typedef struct {
    nn_real *agg, *o;          /* [N,D], [N,O] */
    const nn_real *x, *b, *tab;
    const int32_t *cat;
    const dlp_nn_graph *g;
    int D, O, dim;
} sage_cat_fwd_ctx;

/* agg[i] = mean_{j->i} x[j] over the D dense columns; o[i] = b + cr +
 * tr[cat i] + (in-degree > 0) (cl + mean_{j->i} tl[cat j]) */
static void sage_cat_fwd_range(void *vctx, int lo, int hi) {
    sage_cat_fwd_ctx *c = vctx;
    const int D = c->D, O = c->O;
    const nn_real *tl = c->tab, *tr = tl + (size_t)c->dim * O;
    const nn_real *cl = tr + (size_t)c->dim * O, *cr = cl + O;
    const int32_t *ptr = c->g->in_ptr, *src = c->g->in_src;
    for (int i = lo; i < hi; i++) {
        nn_real *a = c->agg + (size_t)i * D, *o = c->o + (size_t)i * O;
        memset(a, 0, (size_t)D * sizeof *a);
        for (int f = 0; f < O; f++) o[f] = (c->b ? c->b[f] : 0) + cr[f];
        if (c->cat[i] >= 0) {
            const nn_real *t = tr + (size_t)c->cat[i] * O;
            for (int f = 0; f < O; f++) o[f] += t[f];
        }
        int p0 = ptr[i], p1 = ptr[i + 1];
        if (p1 == p0) continue;
        nn_real s = (nn_real)1 / (nn_real)(p1 - p0);
        for (int p = p0; p < p1; p++) {
            int j = src[p];
            const nn_real *xs = c->x + (size_t)j * D;
            for (int f = 0; f < D; f++) a[f] += xs[f];
            if (c->cat[j] >= 0) {
                const nn_real *t = tl + (size_t)c->cat[j] * O;
                for (int f = 0; f < O; f++) o[f] += s * t[f];
            }
        }
        for (int f = 0; f < D; f++) a[f] *= s;
        for (int f = 0; f < O; f++) o[f] += cl[f];
    }
}

size_t dlp_nn_sage_cat_tab_size(int dim, int O) {
    return 2 * (size_t)dim * O + 2 * (size_t)O;
}

void dlp_nn_sage_forward_cat(nn_real *out, nn_real *agg, nn_real *pre,
                             nn_real *nrm, nn_real *tab, const nn_real *x,
                             const dlp_nn_cat *cat, const nn_real *Wl,
                             const nn_real *bl, const nn_real *Wr,
                             const dlp_nn_graph *g, dlp_nn_sage_cfg c,
                             const dlp_nn_sage_exec *e) {
    const int N = g->n_nodes, D = c.I - cat->dim;
    nn_real *o = c.normalize ? pre : out;
    sage_cat_tables(tab, cat, Wl, Wr, c.I, c.O);
    sage_cat_fwd_ctx fc = {agg, o, x, bl, tab, cat->cat, g, D, c.O, cat->dim};
    dlp_nn_workers_run(e ? e->workers : NULL, sage_threads(g, D + c.O), N,
                       sage_cat_fwd_range, &fc);
    dlp_nn_gemm(false, true, N, c.O, D, 1, agg, D, Wl + cat->dim, c.I, 1, o, c.O);
    dlp_nn_gemm(false, true, N, c.O, D, 1, x, D, Wr + cat->dim, c.I, 1, o, c.O);
    if (c.normalize) sage_normalize(out, nrm, pre, N, c.O);
}

/* The weight gradients of the block's columns: with dp = d(pre-norm out),
 *   dWr[:, k] += base[k] sum_n dp[n] + scale[k] sum_{cat n = k} dp[n]
 *   dWl[:, k] += base[k] sum_{deg n > 0} dp[n]
 *              + scale[k] sum_{cat j = k} sum_{j->n} dp[n] / deg n
 * accumulated in tab (gl | gr | sd | sa, one pass over nodes and edges). */
static void sage_cat_wgrad(nn_real *dWl, nn_real *dWr, nn_real *tab,
                           const nn_real *dp, const dlp_nn_cat *cat,
                           const dlp_nn_graph *g, int I, int O) {
    const int dim = cat->dim, N = g->n_nodes;
    nn_real *gl = tab, *gr = tab + (size_t)dim * O;
    nn_real *sd = gr + (size_t)dim * O, *sa = sd + O;
    memset(tab, 0, dlp_nn_sage_cat_tab_size(dim, O) * sizeof *tab);
    for (int n = 0; n < N; n++) {
        const nn_real *d = dp + (size_t)n * O;
        for (int f = 0; f < O; f++) sa[f] += d[f];
        if (cat->cat[n] >= 0) {
            nn_real *t = gr + (size_t)cat->cat[n] * O;
            for (int f = 0; f < O; f++) t[f] += d[f];
        }
        int p0 = g->in_ptr[n], p1 = g->in_ptr[n + 1];
        if (p1 == p0) continue;
        for (int f = 0; f < O; f++) sd[f] += d[f];
        nn_real s = (nn_real)1 / (nn_real)(p1 - p0);
        for (int p = p0; p < p1; p++) {
            int j = g->in_src[p];
            if (cat->cat[j] < 0) continue;
            nn_real *t = gl + (size_t)cat->cat[j] * O;
            for (int f = 0; f < O; f++) t[f] += s * d[f];
        }
    }
    for (int o = 0; o < O; o++) {
        nn_real *wl = dWl + (size_t)o * I, *wr = dWr + (size_t)o * I;
        for (int k = 0; k < dim; k++) {
            wl[k] += cat->base[k] * sd[o] + cat->scale[k] * gl[(size_t)k * O + o];
            wr[k] += cat->base[k] * sa[o] + cat->scale[k] * gr[(size_t)k * O + o];
        }
    }
}

void dlp_nn_sage_backward_cat(nn_real *dWl, nn_real *dbl, nn_real *dWr,
                              nn_real *tab, nn_real *dpre_ws,
                              const nn_real *dout, const nn_real *out,
                              const nn_real *agg, const nn_real *nrm,
                              const nn_real *x, const dlp_nn_cat *cat,
                              const dlp_nn_graph *g, dlp_nn_sage_cfg c,
                              const dlp_nn_sage_exec *e) {
    const int N = g->n_nodes, D = c.I - cat->dim;
    const nn_real *dpre = dout;
    if (c.normalize) {
        sage_normalize_backward(dpre_ws, dout, out, nrm, N, c.O);
        dpre = dpre_ws;
    }
    dlp_nn_gemm(true, false, c.O, D, N, 1, dpre, c.O, agg, D, 1, dWl + cat->dim, c.I);
    dlp_nn_gemm(true, false, c.O, D, N, 1, dpre, c.O, x, D, 1, dWr + cat->dim, c.I);
    if (dbl) sage_bias_grad(dbl, dpre, N, c.O, e);
    sage_cat_wgrad(dWl, dWr, tab, dpre, cat, g, c.I, c.O);
}
