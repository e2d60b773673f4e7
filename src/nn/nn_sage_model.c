/* nn_sage_model.c — the DIPPM-style predictor network built on the engine:
 * SAGE layers with ReLU, per-graph pooling, concatenation with static
 * features, then fully connected layers. Shows the pattern for predictors:
 * declare tensors in a dlp_nn_params, keep activations in one workspace,
 * chain layer forwards, then the backwards in reverse. */
#include "nn.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {  /* views into the workspace for one batch */
    nn_real *h[DLP_NN_MAX_LAYERS + 1];    /* h[0] unused (x); h[l+1] = relu(s[l]) [N,H],
                                             the same array as s[l] unless normalize */
    nn_real *s[DLP_NN_MAX_LAYERS];        /* SAGE outputs [N,H] */
    nn_real *agg[DLP_NN_MAX_LAYERS];      /* [N, d_l] */
    nn_real *pre[DLP_NN_MAX_LAYERS];      /* [N,H] (normalize) */
    nn_real *nrm[DLP_NN_MAX_LAYERS];      /* [N] */
    nn_real *pool, *z;                    /* [G,P], [G,P+S]; P = pooled width */
    nn_real *u[DLP_NN_MAX_LAYERS];        /* FC outputs [G, d_k] */
    nn_real *r[DLP_NN_MAX_LAYERS];        /* relu(u) [G, d_k] */
    /* backward scratch */
    nn_real *dhA, *dhB, *ds, *dagg, *dpre; /* [N, dmax] each */
    nn_real *dz, *duA, *duB;               /* [G, fmax] */
    nn_real *tab;                          /* the first layer's one-hot
                                              tables (dlp_nn_cat), or NULL */
} nn_sm_views;

static int sm_fc_out(const dlp_nn_sage_model_cfg *c, int k) {
    return k == c->n_fc - 1 ? c->out_dim : c->fc_hidden;
}
static int sm_pool_dim(const dlp_nn_sage_model_cfg *c) {
    return dlp_nn_pool_dim(c->pool, c->hidden);
}
static int sm_fc_in(const dlp_nn_sage_model_cfg *c, int k) {
    return k == 0 ? sm_pool_dim(c) + c->static_dim : c->fc_hidden;
}

/* Lays out the workspace for N nodes, G graphs; base NULL only measures.
 * cat_dim: the first layer's input is a one-hot block of that many columns
 * passed sparse (dlp_nn_cat) and in_dim - cat_dim dense ones.
 * infer: a forward that keeps nothing for a backward, so the SAGE layers
 * share one aggregation buffer and take turns with two output buffers (for
 * a 2,000-node graph, 0.8 MB fewer fresh pages to fault in) and no gradient
 * buffers are laid out; the views a forward reads are the same ones. */
static size_t sm_layout(const dlp_nn_sage_model_cfg *c, size_t N, size_t G,
                        int cat_dim, nn_real *base, nn_sm_views *v,
                        bool infer) {
    size_t off = 0;
#define TAKE(ptr, cnt) do { if (base) (ptr) = base + off; off += (cnt); off = (off + 15) & ~(size_t)15; } while (0)
    size_t H = (size_t)c->hidden, P = (size_t)sm_pool_dim(c);
    size_t in = (size_t)(c->in_dim - cat_dim); /* the first layer's dense input */
    size_t dmax = H > in ? H : in;
    size_t fmax = P + (size_t)c->static_dim;
    if ((size_t)c->fc_hidden > fmax) fmax = (size_t)c->fc_hidden;
    if ((size_t)c->out_dim > fmax) fmax = (size_t)c->out_dim;
    nn_sm_views dummy;
    if (!v) v = &dummy;
    v->tab = NULL;
    if (cat_dim > 0) TAKE(v->tab, dlp_nn_sage_cat_tab_size(cat_dim, c->hidden));
    if (infer) {
        /* layer l reads h[l] and writes agg, pre, nrm and s[l] (then h[l+1]):
         * s (or, normalised, h) alternates, so no layer writes what it reads */
        nn_real *s2[2] = {NULL, NULL}, *h2[2] = {NULL, NULL}, *agg = NULL;
        nn_real *pre = NULL, *nrm = NULL;
        TAKE(s2[0], N * H);
        if (c->normalize) {
            TAKE(h2[0], N * H); TAKE(h2[1], N * H);
            TAKE(pre, N * H); TAKE(nrm, N);
            s2[1] = s2[0];
        } else {
            TAKE(s2[1], N * H);
        }
        TAKE(agg, N * dmax);
        for (int l = 0; base && l < c->n_sage; l++) {
            v->s[l] = s2[l % 2];
            v->h[l + 1] = c->normalize ? h2[l % 2] : v->s[l];
            v->agg[l] = agg;
            v->pre[l] = pre;
            v->nrm[l] = nrm;
        }
        TAKE(v->pool, G * P);
        TAKE(v->z, G * (P + (size_t)c->static_dim));
        for (int k = 0; k < c->n_fc; k++) {
            TAKE(v->u[k], G * (size_t)sm_fc_out(c, k));
            TAKE(v->r[k], G * (size_t)sm_fc_out(c, k));
        }
        return off;
    }
    for (int l = 0; l < c->n_sage; l++) {
        size_t dl = l == 0 ? in : H;
        TAKE(v->s[l], N * H);
        /* ReLU runs in place unless the L2 normalisation's backward needs
         * the SAGE output itself */
        if (c->normalize) TAKE(v->h[l + 1], N * H);
        else if (base) v->h[l + 1] = v->s[l];
        TAKE(v->agg[l], N * dl);
        if (c->normalize) { TAKE(v->pre[l], N * H); TAKE(v->nrm[l], N); }
        else { v->pre[l] = NULL; v->nrm[l] = NULL; }
    }
    TAKE(v->pool, G * P);
    TAKE(v->z, G * (P + (size_t)c->static_dim));
    for (int k = 0; k < c->n_fc; k++) {
        TAKE(v->u[k], G * (size_t)sm_fc_out(c, k));
        TAKE(v->r[k], G * (size_t)sm_fc_out(c, k));
    }
    TAKE(v->dhA, N * dmax); TAKE(v->dhB, N * dmax); TAKE(v->ds, N * dmax);
    TAKE(v->dagg, N * dmax); TAKE(v->dpre, N * dmax);
    TAKE(v->dz, G * fmax); TAKE(v->duA, G * fmax); TAKE(v->duB, G * fmax);
#undef TAKE
    return off;
}

static dlp_status sm_check_cfg(const dlp_nn_sage_model_cfg *c, dlp_error *err) {
    if (c->in_dim < 1 || c->hidden < 1 || c->n_sage < 1 ||
        c->n_sage > DLP_NN_MAX_LAYERS || c->static_dim < 0 || c->n_fc < 1 ||
        c->n_fc > DLP_NN_MAX_LAYERS || (c->n_fc > 1 && c->fc_hidden < 1) ||
        c->out_dim < 1 || c->in_dim > (1 << 20) || c->hidden > (1 << 16) ||
        c->static_dim > (1 << 20) || c->fc_hidden > (1 << 16) ||
        c->out_dim > (1 << 16) || (int)c->pool < 0 || c->pool > DLP_NN_POOL_LAST)
        return dlp_fail(err, DLP_ERR_ARG,
                        "sage model: bad architecture (in %d hidden %d layers %d "
                        "static %d fc %d x %d out %d)", c->in_dim, c->hidden,
                        c->n_sage, c->static_dim, c->n_fc, c->fc_hidden, c->out_dim);
    return DLP_OK;
}

dlp_status dlp_nn_sage_model_alloc(dlp_nn_sage_model *m,
                                   const dlp_nn_sage_model_cfg *cfg,
                                   dlp_error *err) {
    memset(m, 0, sizeof *m);
    dlp_status st = sm_check_cfg(cfg, err);
    if (st) return st;
    m->cfg = *cfg;
    const dlp_nn_sage_model_cfg *c = cfg;
    dlp_nn_params *p = &m->params;
    char nm[DLP_NN_NAME_MAX];
    for (int l = 0; l < c->n_sage; l++) {
        int dl = l == 0 ? c->in_dim : c->hidden;
        snprintf(nm, sizeof nm, "sage%d.wl", l); m->t_wl[l] = dlp_nn_params_add(p, nm, c->hidden, dl);
        snprintf(nm, sizeof nm, "sage%d.bl", l); m->t_bl[l] = dlp_nn_params_add(p, nm, c->hidden, 1);
        snprintf(nm, sizeof nm, "sage%d.wr", l); m->t_wr[l] = dlp_nn_params_add(p, nm, c->hidden, dl);
    }
    for (int k = 0; k < c->n_fc; k++) {
        snprintf(nm, sizeof nm, "fc%d.w", k);
        m->t_fw[k] = dlp_nn_params_add(p, nm, sm_fc_out(c, k), sm_fc_in(c, k));
        snprintf(nm, sizeof nm, "fc%d.b", k);
        m->t_fb[k] = dlp_nn_params_add(p, nm, sm_fc_out(c, k), 1);
    }
    return dlp_nn_params_alloc_weights(p, err);
}

dlp_status dlp_nn_sage_model_init(dlp_nn_sage_model *m,
                                  const dlp_nn_sage_model_cfg *cfg,
                                  uint64_t seed, dlp_error *err) {
    dlp_status st = dlp_nn_sage_model_alloc(m, cfg, err);
    if (!st) st = dlp_nn_params_alloc_grads(&m->params, err);
    if (st) return st;
    dlp_nn_params *p = &m->params;
    dlp_nn_rng r;
    dlp_nn_rng_seed(&r, seed);
    /* torch.nn.Linear default: U(-1/sqrt(fan_in), 1/sqrt(fan_in)) */
    for (int t = 0; t < p->n_tensors; t++) {
        int fan_in = p->t[t].cols;
        if (p->t[t].cols == 1) { /* bias: fan_in of its weight (previous) */
            fan_in = p->t[t - 1].cols;
        }
        dlp_nn_init_uniform(dlp_nn_params_w(p, t), p->t[t].n,
                            1.0 / sqrt((double)fan_in), &r);
    }
    return DLP_OK;
}

void dlp_nn_sage_model_free(dlp_nn_sage_model *m) {
    if (!m) return;
    dlp_nn_params_free(&m->params);
    free(m->ws);
    free(m->arg);
    dlp_nn_workers_delete(m->workers);
    m->ws = NULL; m->arg = NULL; m->ws_cap = m->arg_cap = 0;
    m->workers = NULL;
}

/* The model's worker pool matches the current thread count (started on
 * first use; without it the kernels start threads per call, same results). */
static void sm_workers(dlp_nn_sage_model *m) {
    int t = dlp_nn_threads();
    if (t <= 1 || (m->workers && dlp_nn_workers_count(m->workers) == t)) return;
    dlp_nn_workers_delete(m->workers);
    m->workers = dlp_nn_workers_new(t);
}

typedef struct {
    nn_real *x;
    int F;
} sm_relu_ctx;

/* x = relu(x) on rows [lo, hi) of x[.,F] */
static void sm_relu_range(void *vctx, int lo, int hi) {
    sm_relu_ctx *c = vctx;
    nn_real *x = c->x + (size_t)lo * c->F;
    size_t n = (size_t)(hi - lo) * c->F;
    for (size_t k = 0; k < n; k++) x[k] = dlp_nn_relu_mask(x[k], x[k]);
}

static dlp_status sm_workspace(dlp_nn_sage_model *m, const dlp_nn_graph *g,
                               int cat_dim, nn_sm_views *v, bool infer,
                               dlp_error *err) {
    size_t need = sm_layout(&m->cfg, (size_t)g->n_nodes, (size_t)g->n_graphs,
                            cat_dim, NULL, NULL, infer);
    if (need < 16) need = 16; /* an empty batch still gets valid views */
    if (need > m->ws_cap) {
        /* 1.5x headroom: batches vary in size, and every fresh block costs
         * page faults on first touch */
        if (need < m->ws_cap + m->ws_cap / 2) need = m->ws_cap + m->ws_cap / 2;
        free(m->ws);
        m->ws = malloc(need * sizeof(nn_real));
        m->ws_cap = m->ws ? need : 0;
        if (!m->ws) return dlp_fail(err, DLP_ERR_NOMEM, "sage model: workspace of %zu values", need);
    }
    size_t na = (size_t)g->n_graphs * (size_t)m->cfg.hidden;
    if (m->cfg.pool == DLP_NN_POOL_MAX && na > m->arg_cap) {
        free(m->arg);
        m->arg = malloc(na * sizeof *m->arg);
        m->arg_cap = m->arg ? na : 0;
        if (!m->arg) return dlp_fail(err, DLP_ERR_NOMEM, "sage model: out of memory");
    }
    sm_layout(&m->cfg, (size_t)g->n_nodes, (size_t)g->n_graphs, cat_dim, m->ws,
              v, infer);
    return DLP_OK;
}

static dlp_nn_sage_cfg sm_sage_cfg(const dlp_nn_sage_model_cfg *c, int l) {
    dlp_nn_sage_cfg s = {l == 0 ? c->in_dim : c->hidden, c->hidden, c->normalize};
    return s;
}

typedef struct {
    nn_real *ds;
    const nn_real *dh, *h;
    int F;
} sm_mask_ctx;

/* ds = h > 0 ? dh : 0 on rows [lo, hi) */
static void sm_mask_range(void *vctx, int lo, int hi) {
    sm_mask_ctx *c = vctx;
    size_t a = (size_t)lo * c->F, b = (size_t)hi * c->F;
    for (size_t k = a; k < b; k++) c->ds[k] = dlp_nn_relu_mask(c->h[k], c->dh[k]);
}

/* cat (NULL: none) describes the first layer's one-hot block; x then
 * holds the other columns only */
static dlp_status sm_check_cat(const dlp_nn_sage_model *m, const dlp_nn_cat *cat,
                               const dlp_nn_graph *g, dlp_error *err) {
    if (!cat || cat->dim == 0) return DLP_OK;
    if (cat->dim < 0 || cat->dim > m->cfg.in_dim ||
        (g->n_nodes > 0 && (!cat->cat || !cat->scale || !cat->base)))
        return dlp_fail(err, DLP_ERR_ARG, "sage model: bad one-hot block "
                        "(%d of %d columns)", cat->dim, m->cfg.in_dim);
    for (int n = 0; n < g->n_nodes; n++)
        if (cat->cat[n] < -1 || cat->cat[n] >= cat->dim)
            return dlp_fail(err, DLP_ERR_ARG, "sage model: node %d's one-hot "
                            "column %d outside [-1, %d)", n, cat->cat[n], cat->dim);
    return DLP_OK;
}

static dlp_status sm_forward(dlp_nn_sage_model *m, const dlp_nn_graph *g,
                             const nn_real *x, const dlp_nn_cat *cat,
                             const nn_real *st, nn_real *out, bool infer,
                             dlp_error *err) {
    const dlp_nn_sage_model_cfg *c = &m->cfg;
    dlp_status cs = sm_check_cat(m, cat, g, err);
    if (cs) return cs;
    int cat_dim = cat ? cat->dim : 0;
    if (c->static_dim > 0 && !st && g->n_graphs > 0)
        return dlp_fail(err, DLP_ERR_ARG, "sage model: static features missing");
    if (dlp_nn_pool_weighted(c->pool) && !g->node_w && g->n_nodes > 0)
        return dlp_fail(err, DLP_ERR_ARG, "sage model: cost pooling without "
                        "node weights");
    nn_sm_views v;
    dlp_status status = sm_workspace(m, g, cat_dim, &v, infer, err);
    if (status) return status;
    sm_workers(m);
    dlp_nn_sage_exec ex = {m->workers, false, NULL};
    dlp_nn_params *p = &m->params;
    const int N = g->n_nodes, G = g->n_graphs, H = c->hidden;
    const nn_real *hin = x;
    for (int l = 0; l < c->n_sage; l++) {
        if (l == 0 && cat_dim > 0)
            dlp_nn_sage_forward_cat(v.s[l], v.agg[l], v.pre[l], v.nrm[l], v.tab,
                                    hin, cat, dlp_nn_params_w(p, m->t_wl[l]),
                                    dlp_nn_params_w(p, m->t_bl[l]),
                                    dlp_nn_params_w(p, m->t_wr[l]), g,
                                    sm_sage_cfg(c, l), &ex);
        else
            dlp_nn_sage_forward_ex(v.s[l], v.agg[l], v.pre[l], v.nrm[l], hin,
                                   dlp_nn_params_w(p, m->t_wl[l]), dlp_nn_params_w(p, m->t_bl[l]),
                                   dlp_nn_params_w(p, m->t_wr[l]), g, sm_sage_cfg(c, l), &ex);
        if (c->normalize) {
            dlp_nn_act_forward(v.h[l + 1], v.s[l], (size_t)N * H, DLP_NN_RELU, 0);
        } else { /* in place (h[l+1] is s[l]), row-parallel */
            sm_relu_ctx rc = {v.s[l], H};
            dlp_nn_workers_run(m->workers, dlp_nn_threads_for((size_t)N * H / 8), N,
                               sm_relu_range, &rc);
        }
        hin = v.h[l + 1];
    }
    dlp_nn_pool_forward(v.pool, m->arg, hin, g, H, c->pool);
    dlp_nn_concat_forward(v.z, v.pool, st, G, sm_pool_dim(c), c->static_dim);
    const nn_real *a = v.z;
    for (int k = 0; k < c->n_fc; k++) {
        int I = sm_fc_in(c, k), O = sm_fc_out(c, k);
        dlp_nn_linear_forward(v.u[k], a, dlp_nn_params_w(p, m->t_fw[k]),
                              dlp_nn_params_w(p, m->t_fb[k]), G, I, O);
        if (k < c->n_fc - 1) {
            dlp_nn_act_forward(v.r[k], v.u[k], (size_t)G * O, DLP_NN_RELU, 0);
            a = v.r[k];
        }
    }
    memcpy(out, v.u[c->n_fc - 1], (size_t)G * c->out_dim * sizeof *out);
    return DLP_OK;
}

dlp_status dlp_nn_sage_model_forward(dlp_nn_sage_model *m,
                                     const dlp_nn_graph *g, const nn_real *x,
                                     const nn_real *st, nn_real *out,
                                     dlp_error *err) {
    return sm_forward(m, g, x, NULL, st, out, false, err);
}

dlp_status dlp_nn_sage_model_predict(dlp_nn_sage_model *m,
                                     const dlp_nn_graph *g, const nn_real *x,
                                     const nn_real *st, nn_real *out,
                                     dlp_error *err) {
    return sm_forward(m, g, x, NULL, st, out, true, err);
}

dlp_status dlp_nn_sage_model_forward_cat(dlp_nn_sage_model *m,
                                         const dlp_nn_graph *g,
                                         const nn_real *x,
                                         const dlp_nn_cat *cat,
                                         const nn_real *st, nn_real *out,
                                         dlp_error *err) {
    return sm_forward(m, g, x, cat, st, out, false, err);
}

dlp_status dlp_nn_sage_model_predict_cat(dlp_nn_sage_model *m,
                                         const dlp_nn_graph *g,
                                         const nn_real *x,
                                         const dlp_nn_cat *cat,
                                         const nn_real *st, nn_real *out,
                                         dlp_error *err) {
    return sm_forward(m, g, x, cat, st, out, true, err);
}

void dlp_nn_sage_model_backward(dlp_nn_sage_model *m, const dlp_nn_graph *g,
                                const nn_real *x, const nn_real *st,
                                const nn_real *dout) {
    dlp_nn_sage_model_backward_cat(m, g, x, NULL, st, dout);
}

void dlp_nn_sage_model_backward_cat(dlp_nn_sage_model *m,
                                    const dlp_nn_graph *g, const nn_real *x,
                                    const dlp_nn_cat *cat, const nn_real *st,
                                    const nn_real *dout) {
    (void)st;
    const dlp_nn_sage_model_cfg *c = &m->cfg;
    int cat_dim = cat ? cat->dim : 0;
    nn_sm_views v;
    sm_layout(c, (size_t)g->n_nodes, (size_t)g->n_graphs, cat_dim, m->ws, &v,
              false);
    dlp_nn_params *p = &m->params;
    const int N = g->n_nodes, G = g->n_graphs, H = c->hidden;
    /* FC stack, last to first. du = d(u_k), the gradient at fc k's output;
     * da = d(its input), which is dz for fc 0 and d(r_{k-1}) otherwise,
     * from which the ReLU gives the next du (written back into du). */
    nn_real *du = v.duA, *da_buf = v.duB;
    memcpy(du, dout, (size_t)G * c->out_dim * sizeof *du);
    for (int k = c->n_fc - 1; k >= 0; k--) {
        int I = sm_fc_in(c, k), O = sm_fc_out(c, k);
        const nn_real *a = k == 0 ? v.z : v.r[k - 1];
        nn_real *da = k == 0 ? v.dz : da_buf;
        memset(da, 0, (size_t)G * I * sizeof *da);
        dlp_nn_linear_backward(da, dlp_nn_params_g(p, m->t_fw[k]),
                               dlp_nn_params_g(p, m->t_fb[k]), du, a,
                               dlp_nn_params_w(p, m->t_fw[k]), G, I, O);
        if (k > 0) { /* through the ReLU after fc k-1: I == its width */
            memset(du, 0, (size_t)G * I * sizeof *du);
            dlp_nn_act_backward(du, da, v.u[k - 1], v.r[k - 1], (size_t)G * I,
                                DLP_NN_RELU, 0);
        }
    }
    /* pooled part of the concatenation -> node gradients of the last layer */
    nn_real *dpool = v.duB; /* free now */
    memset(dpool, 0, (size_t)G * sm_pool_dim(c) * sizeof *dpool);
    dlp_nn_concat_backward(dpool, NULL, v.dz, G, sm_pool_dim(c), c->static_dim);
    nn_real *dh = v.dhA;
    memset(dh, 0, (size_t)N * H * sizeof *dh);
    dlp_nn_pool_backward(dh, dpool, m->arg, g, H, c->pool, v.h[c->n_sage], v.pool);
    /* through the last ReLU: ds = dh where s > 0 (h > 0 exactly there) */
    sm_mask_ctx mc = {v.ds, dh, v.h[c->n_sage], H};
    dlp_nn_workers_run(m->workers, dlp_nn_threads_for((size_t)N * H / 8), N,
                       sm_mask_range, &mc);
    /* each SAGE backward then writes d(its input) already masked by the ReLU
     * before it, i.e. the ds of the layer below: no zeroing, no mask pass */
    nn_real *ds = v.ds;
    for (int l = c->n_sage - 1; l >= 0; l--) {
        dlp_nn_sage_cfg sc = sm_sage_cfg(c, l);
        const nn_real *hin = l == 0 ? x : v.h[l];
        nn_real *dx = l == 0 ? NULL : ds == v.dhB ? v.dhA : v.dhB;
        dlp_nn_sage_exec ex = {m->workers, true, l == 0 ? NULL : v.h[l]};
        if (l == 0 && cat_dim > 0) {
            dlp_nn_sage_backward_cat(dlp_nn_params_g(p, m->t_wl[l]),
                                     dlp_nn_params_g(p, m->t_bl[l]),
                                     dlp_nn_params_g(p, m->t_wr[l]), v.tab,
                                     v.dpre, ds, v.s[l], v.agg[l], v.nrm[l],
                                     hin, cat, g, sc, &ex);
            break;
        }
        dlp_nn_sage_backward_ex(dx, dlp_nn_params_g(p, m->t_wl[l]),
                                dlp_nn_params_g(p, m->t_bl[l]),
                                dlp_nn_params_g(p, m->t_wr[l]), v.dagg, v.dpre, ds,
                                v.s[l], v.agg[l], v.nrm[l], hin,
                                dlp_nn_params_w(p, m->t_wl[l]),
                                dlp_nn_params_w(p, m->t_wr[l]), g, sc, &ex);
        ds = dx;
    }
}

dlp_status dlp_nn_sage_model_train_step(dlp_nn_sage_model *m,
                                        const dlp_nn_graph *g,
                                        const nn_real *x, const nn_real *st,
                                        const nn_real *y, const dlp_nn_opt *o,
                                        double clip, double *loss,
                                        dlp_error *err) {
    dlp_status gs = dlp_nn_params_alloc_grads(&m->params, err);
    if (gs) return gs;
    size_t n = (size_t)g->n_graphs * m->cfg.out_dim;
    nn_real *out = malloc((n ? n : 1) * 2 * sizeof *out);
    if (!out) return dlp_fail(err, DLP_ERR_NOMEM, "sage model: out of memory");
    nn_real *dout = out + n;
    dlp_nn_params_zero_grad(&m->params);
    dlp_status s = dlp_nn_sage_model_forward(m, g, x, st, out, err);
    if (!s) {
        *loss = dlp_nn_mse_loss(dout, out, y, (int)n);
        dlp_nn_sage_model_backward(m, g, x, st, dout);
        if (clip > 0) dlp_nn_clip_grad_norm(&m->params, clip);
        dlp_nn_opt_step_ex(&m->params, o, m->workers);
    }
    free(out);
    return s;
}

#define SM_ARCH_LEN 9
dlp_status dlp_nn_sage_model_save(const dlp_nn_sage_model *m,
                                  const char *path, const nn_real *feat_mean,
                                  const nn_real *feat_std, const char *meta,
                                  dlp_error *err) {
    const dlp_nn_sage_model_cfg *c = &m->cfg;
    int64_t arch[SM_ARCH_LEN] = {c->in_dim, c->hidden, c->n_sage, c->static_dim,
                                 c->n_fc, c->fc_hidden, c->out_dim, c->pool,
                                 c->normalize};
    dlp_nn_file f = {0};
    dlp_status st = dlp_nn_file_add_str(&f, "kind", "sage_model", err);
    if (!st) st = dlp_nn_file_add_i64(&f, "arch", arch, SM_ARCH_LEN, err);
    if (!st) st = dlp_nn_file_add_params(&f, &m->params, err);
    if (!st && feat_mean) st = dlp_nn_file_add_f32(&f, "norm/mean", feat_mean, (uint64_t)c->in_dim, err);
    if (!st && feat_std) st = dlp_nn_file_add_f32(&f, "norm/std", feat_std, (uint64_t)c->in_dim, err);
    if (!st && meta) st = dlp_nn_file_add_str(&f, "meta", meta, err);
    if (!st) st = dlp_nn_file_save(&f, path, err);
    dlp_nn_file_free(&f);
    return st;
}

dlp_status dlp_nn_sage_model_load(dlp_nn_sage_model *m, const char *path,
                                  nn_real *feat_mean, nn_real *feat_std,
                                  dlp_error *err) {
    memset(m, 0, sizeof *m);
    dlp_nn_file f;
    dlp_status st = dlp_nn_file_load(&f, path, err);
    if (st) return st;
    const dlp_nn_entry *kind = dlp_nn_file_get(&f, "kind", DLP_NN_STR);
    const dlp_nn_entry *arch = dlp_nn_file_get(&f, "arch", DLP_NN_I64);
    if (!kind || strcmp(kind->data, "sage_model") != 0) {
        st = dlp_fail(err, DLP_ERR_FORMAT, "model file: %s does not hold a sage_model", path);
        goto done;
    }
    if (!arch || arch->count != SM_ARCH_LEN) {
        st = dlp_fail(err, DLP_ERR_FORMAT, "model file: %s: bad architecture entry", path);
        goto done;
    }
    const int64_t *a = arch->data;
    for (int i = 0; i < SM_ARCH_LEN; i++)
        if (a[i] < 0 || a[i] > (1 << 20)) {
            st = dlp_fail(err, DLP_ERR_FORMAT, "model file: %s: architecture value %d out of range", path, i);
            goto done;
        }
    dlp_nn_sage_model_cfg c = {(int)a[0], (int)a[1], (int)a[2], (int)a[3], (int)a[4],
                               (int)a[5], (int)a[6], (dlp_nn_pool)a[7], a[8] != 0};
    st = dlp_nn_sage_model_alloc(m, &c, err);
    if (!st) st = dlp_nn_file_read_params(&f, &m->params, err);
    if (!st && feat_mean) st = dlp_nn_file_read_f32(&f, "norm/mean", feat_mean, (uint64_t)c.in_dim, err);
    if (!st && feat_std) st = dlp_nn_file_read_f32(&f, "norm/std", feat_std, (uint64_t)c.in_dim, err);
    if (st) dlp_nn_sage_model_free(m);
done:
    dlp_nn_file_free(&f);
    return st;
}

dlp_nn_sage_model *dlp_nn_sage_model_new(const dlp_nn_sage_model_cfg *cfg,
                                         uint64_t seed, dlp_error *err) {
    dlp_nn_sage_model *m = malloc(sizeof *m);
    if (!m) {
        dlp_fail(err, DLP_ERR_NOMEM, "sage model: out of memory");
        return NULL;
    }
    if (dlp_nn_sage_model_init(m, cfg, seed, err) != DLP_OK) {
        dlp_nn_sage_model_free(m);
        free(m);
        return NULL;
    }
    return m;
}

void dlp_nn_sage_model_delete(dlp_nn_sage_model *m) {
    if (!m) return;
    dlp_nn_sage_model_free(m);
    free(m);
}

dlp_nn_params *dlp_nn_sage_model_params(dlp_nn_sage_model *m) { return &m->params; }
