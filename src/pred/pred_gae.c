/* pred_gae.c — TraPPM's graph autoencoder: an encoder of 4 GraphSAGE
 * layers (the first three followed by BatchNorm, ReLU and dropout 0.5), an
 * inner-product decoder scoring node pairs, trained by binary
 * cross-entropy on the graph's edges against as many negative pairs drawn
 * inside the same graph. Pre-trained on the unlabeled pool (every graph of
 * the dataset index, labelled or not); its sum-pooled node embeddings are
 * then frozen graph features for the supervised branch (pred_gnn.c).
 * Input: the device-independent node features (op one-hot, attributes,
 * shapes, costs), standardized with statistics of the pool. */
#include "pred_gnn.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define L DLP_GAE_LAYERS
#define IN DLP_GAE_IN
#define DROPOUT 0.5
#define BN_MOMENTUM 0.1
#define BN_EPS 1e-5

struct dlp_gae {
    int H;
    dlp_nn_params p;
    int wl[L], bl[L], wr[L], gam[L - 1], bet[L - 1];
    float rm[L - 1][256], rv[L - 1][256];   /* BN running stats (H <= 256) */
    float mean[IN], std[IN];
    int in;                  /* columns read: op types absent from the */
    int32_t cols[IN];        /* pool dropped */
    /* the first ob.n of them are the op type's one-hot, read by the first
     * layer as a block passed sparse (dlp_op_block); x holds the rest */
    dlp_op_block ob;
    /* workspace */
    nn_real *ws;
    size_t ws_cap;
    int32_t *cat;            /* [nodes] of the batch */
    size_t cat_cap;
};

typedef struct {
    nn_real *tab;         /* the first layer's one-hot tables */
    dlp_nn_cat cat;       /* the batch's block */
    nn_real *x, *agg[L], *s[L], *b[L - 1], *r[L - 1], *mask[L - 1], *h[L];
    nn_real *bm[L - 1], *br[L - 1];
    nn_real *hb[L];       /* dropout outputs (inputs of layers 1..L-1) */
    nn_real *dz, *dh, *dr, *dagg;
} views;

static int lin(const dlp_gae *e, int l) { return l == 0 ? e->in : e->H; }
/* the width of layer l's dense input (x, agg) */
static int lin_dense(const dlp_gae *e, int l) {
    return l == 0 ? e->in - e->ob.n : e->H;
}

static void cat_setup(dlp_gae *e) {
    dlp_op_block_setup(&e->ob, e->cols, e->in, e->mean, e->std);
}

/* infer: an embedding forward only (no dropout, nothing kept for a
 * backward): the layers share their aggregation, SAGE and batch-norm
 * buffers and alternate two ReLU outputs, about half the fresh pages of the
 * training layout (~560 page faults fewer for a 2,000-node graph). */
static dlp_status layout(dlp_gae *e, size_t N, views *v, bool infer,
                         dlp_error *err) {
    size_t H = (size_t)e->H, D = (size_t)lin_dense(e, 0), need = N * D;
    size_t dmax = D > H ? D : H;
    size_t ntab = dlp_nn_sage_cat_tab_size(e->ob.n, e->H);
    need += ntab;
    if (infer) {
        need += N * dmax + 4 * N * H + 2 * H;
    } else {
        for (int l = 0; l < L; l++) need += N * lin_dense(e, l) + N * H;
        need += (L - 1) * (4 * N * H + 2 * H) + N * H * 3 + N * dmax;
    }
    if (need > e->ws_cap) {
        nn_real *w = realloc(e->ws, need * sizeof *w);
        if (!w) return dlp_fail(err, DLP_ERR_NOMEM, "gae: out of memory");
        e->ws = w;
        e->ws_cap = need;
    }
    if (!dlp_grow((void **)&e->cat, &e->cat_cap, N ? N : 1, sizeof *e->cat))
        return dlp_fail(err, DLP_ERR_NOMEM, "gae: out of memory");
    v->cat = (dlp_nn_cat){e->ob.n, e->cat, e->ob.scale, e->ob.base};
    nn_real *q = e->ws;
    v->tab = q; q += ntab;
    v->x = q; q += N * D;
    if (infer) {
        nn_real *agg = q, *s = agg + N * dmax, *b = s + N * H, *r0 = b + N * H;
        nn_real *r1 = r0 + N * H, *bm = r1 + N * H, *br = bm + H;
        for (int l = 0; l < L; l++) {
            v->agg[l] = agg;
            v->s[l] = s;
            if (l == L - 1) break;
            v->b[l] = b;
            v->r[l] = l % 2 ? r1 : r0;
            v->bm[l] = bm;
            v->br[l] = br;
            v->mask[l] = NULL;
            v->hb[l + 1] = NULL;
        }
        v->hb[0] = NULL;
        v->dz = v->dh = v->dr = v->dagg = NULL;
        v->h[0] = v->x;
        for (int l = 1; l < L; l++) v->h[l] = NULL;
        return DLP_OK;
    }
    for (int l = 0; l < L; l++) {
        v->agg[l] = q; q += N * lin_dense(e, l);
        v->s[l] = q; q += N * H;
    }
    for (int l = 0; l < L - 1; l++) {
        v->b[l] = q; q += N * H;
        v->r[l] = q; q += N * H;
        v->mask[l] = q; q += N * H;
        v->bm[l] = q; q += H;
        v->br[l] = q; q += H;
        v->hb[l + 1] = q; q += N * H;
    }
    v->hb[0] = NULL;
    v->dz = q; q += N * H;
    v->dh = q; q += N * H;
    v->dr = q; q += N * H;
    v->dagg = q; q += N * dmax;   /* layers 1.. (the first has no dx) */
    v->h[0] = v->x;
    for (int l = 1; l < L; l++) v->h[l] = NULL;
    return DLP_OK;
}

/* The rows of graph fg: its ops' one-hot columns into cat[n_nodes], the
 * other selected columns (standardized) into dst[n_nodes, in - ob.n].
 * The columns past the one-hot are the dense features, in order. */
static void fill_x(const dlp_gae *e, const dlp_feat_graph *fg, nn_real *dst,
                   int32_t *cat) {
    const int D = lin_dense(e, 0);
    for (int i = 0; i < fg->n_nodes; i++) {
        cat[i] = e->ob.pos[fg->op[i]];
        const float *dn = fg->dense + (size_t)i * DLP_FEAT_DENSE;
        nn_real *o = dst + (size_t)i * D;
        for (int j = e->ob.n; j < e->in; j++) {
            int k = e->cols[j];
            o[j - e->ob.n] = (dn[k - DLP_FEAT_NOPS - 1] - e->mean[k]) / e->std[k];
        }
    }
}

static dlp_nn_sage_cfg scfg(const dlp_gae *e, int l) {
    dlp_nn_sage_cfg c = {lin(e, l), e->H, false};
    return c;
}

/* SAGE layer l on hin (the first: on the one-hot block and x) */
static void sage_fwd(dlp_gae *e, const dlp_nn_graph *g, views *v, int l,
                     const nn_real *hin) {
    const nn_real *wl = dlp_nn_params_w(&e->p, e->wl[l]);
    const nn_real *bl = dlp_nn_params_w(&e->p, e->bl[l]);
    const nn_real *wr = dlp_nn_params_w(&e->p, e->wr[l]);
    if (l == 0)
        dlp_nn_sage_forward_cat(v->s[l], v->agg[l], NULL, NULL, v->tab, hin,
                                &v->cat, wl, bl, wr, g, scfg(e, l), NULL);
    else
        dlp_nn_sage_forward(v->s[l], v->agg[l], NULL, NULL, hin, wl, bl, wr, g,
                            scfg(e, l));
}

/* Encoder forward; z = v->s[L-1]. train: batch statistics + dropout. */
static void encode(dlp_gae *e, const dlp_nn_graph *g, views *v, bool train,
                   dlp_nn_rng *rng) {
    int N = g->n_nodes, H = e->H;
    const nn_real *hin = v->x;
    for (int l = 0; l < L; l++) {
        sage_fwd(e, g, v, l, hin);
        if (l == L - 1) break;
        nn_real rm[256], rv[256];
        for (int k = 0; k < H; k++) { rm[k] = e->rm[l][k]; rv[k] = e->rv[l][k]; }
        dlp_nn_batchnorm_forward(v->b[l], v->bm[l], v->br[l], v->s[l],
                                 dlp_nn_params_w(&e->p, e->gam[l]),
                                 dlp_nn_params_w(&e->p, e->bet[l]), rm, rv,
                                 train && N > 1, (nn_real)BN_MOMENTUM,
                                 (nn_real)BN_EPS, N, H);
        for (int k = 0; k < H; k++) { e->rm[l][k] = (float)rm[k]; e->rv[l][k] = (float)rv[k]; }
        dlp_nn_act_forward(v->r[l], v->b[l], (size_t)N * H, DLP_NN_RELU, 0);
        if (train) {
            dlp_nn_dropout_forward(v->hb[l + 1], v->mask[l], v->r[l],
                                   (size_t)N * H, (nn_real)DROPOUT, rng);
            v->h[l + 1] = v->hb[l + 1];
        } else {
            v->h[l + 1] = v->r[l];
        }
        hin = v->h[l + 1];
    }
}

/* Lays out and allocates the encoder's parameters (zeroed). */
static dlp_status alloc_gae(dlp_gae *e, int H, dlp_error *err) {
    char nm[32];
    for (int l = 0; l < L; l++) {
        snprintf(nm, sizeof nm, "gae%d.wl", l); e->wl[l] = dlp_nn_params_add(&e->p, nm, H, lin(e, l));
        snprintf(nm, sizeof nm, "gae%d.bl", l); e->bl[l] = dlp_nn_params_add(&e->p, nm, H, 1);
        snprintf(nm, sizeof nm, "gae%d.wr", l); e->wr[l] = dlp_nn_params_add(&e->p, nm, H, lin(e, l));
        if (l < L - 1) {
            snprintf(nm, sizeof nm, "gae%d.gamma", l); e->gam[l] = dlp_nn_params_add(&e->p, nm, H, 1);
            snprintf(nm, sizeof nm, "gae%d.beta", l); e->bet[l] = dlp_nn_params_add(&e->p, nm, H, 1);
        }
    }
    return dlp_nn_params_alloc(&e->p, err);
}

/* alloc_gae, then torch's Linear initialisation, BatchNorm gamma 1 and
 * running statistics (0, 1): a fresh encoder to pre-train. */
static dlp_status init_gae(dlp_gae *e, int H, uint64_t seed, dlp_error *err) {
    dlp_status st = alloc_gae(e, H, err);
    if (st) return st;
    dlp_nn_rng r;
    dlp_nn_rng_seed(&r, seed);
    for (int l = 0; l < L; l++) {
        double b = 1.0 / sqrt((double)lin(e, l));
        dlp_nn_init_uniform(dlp_nn_params_w(&e->p, e->wl[l]), (size_t)H * lin(e, l), b, &r);
        dlp_nn_init_uniform(dlp_nn_params_w(&e->p, e->bl[l]), (size_t)H, b, &r);
        dlp_nn_init_uniform(dlp_nn_params_w(&e->p, e->wr[l]), (size_t)H * lin(e, l), b, &r);
        if (l < L - 1) {
            nn_real *gm = dlp_nn_params_w(&e->p, e->gam[l]);
            for (int k = 0; k < H; k++) { gm[k] = 1; e->rm[l][k] = 0; e->rv[l][k] = 1; }
        }
    }
    return DLP_OK;
}

int dlp_gae_dim(const dlp_gae *g) { return g ? g->H : 0; }

void dlp_gae_swap_ws(dlp_gae *g, nn_real **ws, size_t *cap) {
    nn_real *p = g->ws;
    size_t c = g->ws_cap;
    g->ws = *ws;
    g->ws_cap = *cap;
    *ws = p;
    *cap = c;
}

void dlp_gae_free(dlp_gae *g) {
    if (!g) return;
    dlp_nn_params_free(&g->p);
    free(g->ws);
    free(g->cat);
    free(g);
}

static dlp_status build_batch(const dlp_feat_graph *const *fgs, int n,
                              dlp_nn_graph *g, dlp_error *err) {
    dlp_nn_graph_desc d[64];
    memset(d, 0, sizeof d);
    for (int i = 0; i < n; i++) {
        d[i].n_nodes = fgs[i]->n_nodes;
        d[i].n_edges = fgs[i]->n_edges;
        d[i].src = fgs[i]->src;
        d[i].dst = fgs[i]->dst;
    }
    return dlp_nn_graph_build(g, d, NULL, n, DLP_NN_UNDIRECTED, err);
}

dlp_status dlp_gae_pretrain(dlp_gae **out, const dlp_feat_graph *pool,
                            int n_pool, int hidden, int epochs, uint64_t seed,
                            const dlp_train_opts *o, dlp_error *err) {
    *out = NULL;
    if (hidden < 1 || hidden > 128) hidden = 32;
    dlp_gae *e = calloc(1, sizeof *e);
    if (!e) return dlp_fail(err, DLP_ERR_NOMEM, "gae: out of memory");
    e->H = hidden;
    dlp_status st = DLP_OK;
    /* input statistics over (a sample of) the pool */
    size_t tot = 0;
    for (int i = 0; i < n_pool; i++) tot += (size_t)pool[i].n_nodes;
    size_t cap = tot < 100000 ? tot : 100000;
    float *buf = calloc((cap ? cap : 1) * IN, sizeof *buf);
    if (!st && !buf) st = dlp_fail(err, DLP_ERR_NOMEM, "gae: out of memory");
    if (!st) {
        size_t n = 0;
        for (int i = 0; i < n_pool && n < cap; i++)
            for (int r = 0; r < pool[i].n_nodes && n < cap; r++, n++) {
                float *o2 = buf + n * IN;
                memset(o2, 0, (DLP_FEAT_NOPS + 1) * sizeof *o2);
                o2[pool[i].op[r]] = 1;
                memcpy(o2 + DLP_FEAT_NOPS + 1, pool[i].dense + (size_t)r * DLP_FEAT_DENSE,
                       DLP_FEAT_DENSE * sizeof *o2);
            }
        dlp_colstats(buf, n, IN, e->mean, e->std);
        char present[DLP_FEAT_NOPS + 1] = {0};
        for (int i = 0; i < n_pool; i++)
            for (int r = 0; r < pool[i].n_nodes; r++) present[pool[i].op[r]] = 1;
        present[DLP_FEAT_NOPS] = 1;
        e->in = 0;
        for (int k = 0; k < IN; k++)
            if (k > DLP_FEAT_NOPS || present[k]) e->cols[e->in++] = k;
        cat_setup(e);
        st = init_gae(e, hidden, seed, err);
    }
    free(buf);
    int32_t *order = malloc((size_t)(n_pool ? n_pool : 1) * sizeof *order);
    if (!st && !order) st = dlp_fail(err, DLP_ERR_NOMEM, "gae: out of memory");
    dlp_nn_rng rng;
    dlp_nn_rng_seed(&rng, seed * 7 + 3);
    dlp_nn_opt opt = dlp_nn_opt_default(DLP_NN_ADAM, 5e-3);
    int32_t *ps = NULL, *pd = NULL;
    nn_real *score = NULL, *lab = NULL, *dsc = NULL;
    size_t kcap = 0;
    dlp_nn_graph g = {0};
    for (int i = 0; i < n_pool; i++) order[i] = i;
    double t0 = dlp_now_s();
    const int B = 8;
    for (int ep = 0; ep < epochs && !st; ep++) {
        dlp_nn_rng_shuffle(&rng, order, n_pool);
        double lsum = 0;
        int nb = 0;
        for (int b0 = 0; b0 < n_pool && !st; b0 += B) {
            int n = n_pool - b0 < B ? n_pool - b0 : B;
            const dlp_feat_graph *fgs[64];
            size_t N = 0, E2 = 0;
            for (int i = 0; i < n; i++) {
                fgs[i] = &pool[order[b0 + i]];
                N += (size_t)fgs[i]->n_nodes;
                E2 += (size_t)fgs[i]->n_edges;
            }
            if (N < 2 || E2 == 0) continue;
            st = build_batch(fgs, n, &g, err);
            views v;
            if (!st) st = layout(e, N, &v, false, err);
            if (st) break;
            size_t off = 0;
            for (int i = 0; i < n; i++) {
                fill_x(e, fgs[i], v.x + off * (size_t)lin_dense(e, 0), e->cat + off);
                off += (size_t)fgs[i]->n_nodes;
            }
            size_t K = 2 * E2;
            if (K > kcap) {
                kcap = K;
                int32_t *a = realloc(ps, K * sizeof *a); if (a) ps = a;
                int32_t *b = realloc(pd, K * sizeof *b); if (b) pd = b;
                nn_real *c = realloc(score, K * sizeof *c); if (c) score = c;
                nn_real *d2 = realloc(lab, K * sizeof *d2); if (d2) lab = d2;
                nn_real *f2 = realloc(dsc, K * sizeof *f2); if (f2) dsc = f2;
                if (!a || !b || !c || !d2 || !f2) {
                    st = dlp_fail(err, DLP_ERR_NOMEM, "gae: out of memory");
                    break;
                }
            }
            /* positives: the graph's own (directed) edges */
            size_t k = 0, base = 0;
            for (int i = 0; i < n; i++) {
                for (int q = 0; q < fgs[i]->n_edges; q++, k++) {
                    ps[k] = (int32_t)(base + (size_t)fgs[i]->src[q]);
                    pd[k] = (int32_t)(base + (size_t)fgs[i]->dst[q]);
                    lab[k] = 1;
                }
                base += (size_t)fgs[i]->n_nodes;
            }
            int nneg = dlp_nn_negative_sample(ps + k, pd + k, (int)E2, &g, &rng);
            for (int q = 0; q < nneg; q++) lab[k + q] = 0;
            int KK = (int)k + nneg;
            encode(e, &g, &v, true, &rng);
            const nn_real *z = v.s[L - 1];
            int H = e->H;
            dlp_nn_edge_dot_forward(score, z, ps, pd, KK, H);
            lsum += dlp_nn_bce_logits_loss(dsc, score, lab, KK);
            nb++;
            dlp_nn_params_zero_grad(&e->p);
            memset(v.dz, 0, N * H * sizeof *v.dz);
            dlp_nn_edge_dot_backward(v.dz, dsc, z, ps, pd, KK, H);
            /* back through the encoder: dcur = d(output of layer l) */
            nn_real *dcur = v.dz;
            for (int l = L - 1; l >= 0; l--) {
                if (l == 0) {
                    dlp_nn_sage_backward_cat(dlp_nn_params_g(&e->p, e->wl[l]),
                                             dlp_nn_params_g(&e->p, e->bl[l]),
                                             dlp_nn_params_g(&e->p, e->wr[l]),
                                             v.tab, NULL, dcur, v.s[l], v.agg[l],
                                             NULL, v.h[l], &v.cat, &g,
                                             scfg(e, l), NULL);
                    break;
                }
                nn_real *dhin = v.dh;
                memset(dhin, 0, N * H * sizeof *dhin);
                dlp_nn_sage_backward(dhin, dlp_nn_params_g(&e->p, e->wl[l]),
                                     dlp_nn_params_g(&e->p, e->bl[l]),
                                     dlp_nn_params_g(&e->p, e->wr[l]),
                                     v.dagg, NULL, dcur, v.s[l], v.agg[l], NULL,
                                     v.h[l], dlp_nn_params_w(&e->p, e->wl[l]),
                                     dlp_nn_params_w(&e->p, e->wr[l]), &g,
                                     scfg(e, l));
                if (l == 0) break;
                int j = l - 1;   /* h[l] = dropout(relu(bn(s[j]))) */
                memset(v.dr, 0, N * H * sizeof *v.dr);
                dlp_nn_dropout_backward(v.dr, v.dh, v.mask[j], N * H);
                memset(v.dz, 0, N * H * sizeof *v.dz);
                dlp_nn_act_backward(v.dz, v.dr, v.b[j], v.r[j], N * H, DLP_NN_RELU, 0);
                memset(v.dh, 0, N * H * sizeof *v.dh);
                dlp_nn_batchnorm_backward(v.dh, dlp_nn_params_g(&e->p, e->gam[j]),
                                          dlp_nn_params_g(&e->p, e->bet[j]),
                                          v.dz, v.s[j], v.bm[j], v.br[j],
                                          dlp_nn_params_w(&e->p, e->gam[j]),
                                          N > 1, (int)N, H);
                memcpy(v.dz, v.dh, N * H * sizeof *v.dz);
                dcur = v.dz;
            }
            dlp_nn_graph_free(&g);
            dlp_nn_clip_grad_norm(&e->p, 5.0);
            dlp_nn_opt_step(&e->p, &opt);
        }
        if (o && o->progress && !st) {
            double el = dlp_now_s() - t0;
            dlp_train_progress pr = {"trappm-gae", ep + 1, epochs,
                                     nb ? lsum / nb : 0, NAN, el,
                                     el / (ep + 1) * (epochs - ep - 1)};
            o->progress(o->user, &pr);
        }
    }
    dlp_nn_graph_free(&g);
    free(order); free(ps); free(pd); free(score); free(lab); free(dsc);
    if (st) { dlp_gae_free(e); return st; }
    *out = e;
    return DLP_OK;
}

dlp_status dlp_gae_embed(dlp_gae *e, const dlp_feat_graph *fg, float *emb,
                         dlp_error *err) {
    int H = e->H;
    for (int k = 0; k < H; k++) emb[k] = 0;
    if (fg->n_nodes == 0) return DLP_OK;
    dlp_nn_graph g = {0};
    const dlp_feat_graph *fgs[1] = {fg};
    dlp_status st = build_batch(fgs, 1, &g, err);
    views v;
    if (!st) st = layout(e, (size_t)fg->n_nodes, &v, true, err);
    if (!st) {
        fill_x(e, fg, v.x, e->cat);
        encode(e, &g, &v, false, NULL);
        const nn_real *z = v.s[L - 1];
        for (int i = 0; i < fg->n_nodes; i++)
            for (int k = 0; k < H; k++) emb[k] += (float)z[(size_t)i * H + k];
    }
    dlp_nn_graph_free(&g);
    return st;
}

static dlp_status save_cols(const dlp_gae *e, dlp_nn_file *f, dlp_error *err) {
    int64_t c[IN];
    for (int j = 0; j < e->in; j++) c[j] = e->cols[j];
    return dlp_nn_file_add_i64(f, "gae/cols", c, (uint64_t)e->in, err);
}

dlp_status dlp_gae_save(const dlp_gae *e, dlp_nn_file *f, dlp_error *err) {
    int64_t h = e->H;
    dlp_status st;
    if ((st = dlp_nn_file_add_i64(f, "gae/hidden", &h, 1, err)) ||
        (st = dlp_nn_file_add_f32(f, "gae/mean", e->mean, IN, err)) ||
        (st = dlp_nn_file_add_f32(f, "gae/std", e->std, IN, err)) ||
        (st = save_cols(e, f, err)) ||
        (st = dlp_nn_file_add_params(f, &e->p, err)))
        return st;
    for (int l = 0; l < L - 1; l++) {
        char nm[32];
        snprintf(nm, sizeof nm, "gae/rm%d", l);
        if ((st = dlp_nn_file_add_f32(f, nm, e->rm[l], (uint64_t)e->H, err))) return st;
        snprintf(nm, sizeof nm, "gae/rv%d", l);
        if ((st = dlp_nn_file_add_f32(f, nm, e->rv[l], (uint64_t)e->H, err))) return st;
    }
    return DLP_OK;
}

dlp_status dlp_gae_load(dlp_gae **out, const dlp_nn_file *f, dlp_error *err) {
    *out = NULL;
    const dlp_nn_entry *h = dlp_nn_file_get(f, "gae/hidden", DLP_NN_I64);
    if (!h || h->count != 1)
        return dlp_fail(err, DLP_ERR_FORMAT, "trappm: no 'gae/hidden' entry");
    int64_t H = *(const int64_t *)h->data;
    if (H < 1 || H > 128)
        return dlp_fail(err, DLP_ERR_FORMAT, "trappm: bad encoder width %lld",
                        (long long)H);
    dlp_gae *e = calloc(1, sizeof *e);
    if (!e) return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    e->H = (int)H;
    const dlp_nn_entry *ce = dlp_nn_file_get(f, "gae/cols", DLP_NN_I64);
    dlp_status st = DLP_OK;
    if (!ce || ce->count < 1 || ce->count > IN)
        st = dlp_fail(err, DLP_ERR_FORMAT, "trappm: missing or malformed 'gae/cols'");
    for (uint64_t j = 0; !st && j < ce->count; j++) {
        int64_t c = ((const int64_t *)ce->data)[j];
        if (c < 0 || c >= IN || (j && c <= e->cols[j - 1]))
            st = dlp_fail(err, DLP_ERR_FORMAT, "trappm: bad encoder column list");
        else e->cols[j] = (int32_t)c;
    }
    if (!st) {
        e->in = (int)ce->count;
        st = alloc_gae(e, e->H, err); /* every value is read below */
    }
    if (!st) st = dlp_nn_file_read_params(f, &e->p, err);
    if (!st) st = dlp_nn_file_read_f32(f, "gae/mean", e->mean, IN, err);
    if (!st) st = dlp_nn_file_read_f32(f, "gae/std", e->std, IN, err);
    if (!st) cat_setup(e);
    for (int l = 0; l < L - 1 && !st; l++) {
        char nm[32];
        snprintf(nm, sizeof nm, "gae/rm%d", l);
        st = dlp_nn_file_read_f32(f, nm, e->rm[l], (uint64_t)e->H, err);
        snprintf(nm, sizeof nm, "gae/rv%d", l);
        if (!st) st = dlp_nn_file_read_f32(f, nm, e->rv[l], (uint64_t)e->H, err);
    }
    if (st) { dlp_gae_free(e); return st; }
    *out = e;
    return DLP_OK;
}
