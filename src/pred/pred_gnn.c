/* pred_gnn.c — the GNN regressor behind DIPPM and TraPPM (pred_gnn.h):
 * batching featurized graphs, feature standardisation, the priors (ridge
 * on log y, additive model, and for memory log(analytic estimate) + ridge
 * correction; per target the one best on the validation part),
 * masked Huber training on log targets with Adam, cosine LR and early
 * stopping on validation MAPE, fine-tuning from an existing model file
 * (transfer), saving/loading, and prediction. */
#include "pred_gnn.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GNN_VERSION 2
#define HUBER_DELTA 0.1   /* in log units: quadratic below ~10% error */
#define MAX_EMB 128
#define NADD 11           /* additive prior features (add_feats) */
enum { PRIOR_RIDGE = 0, PRIOR_ADD = 1, PRIOR_LOGEST = 2 };
/* PRIOR_LOGEST (memory targets): log(analytic estimate) + a ridge
 * correction on the standardized static row, fitted to log(y / estimate);
 * the ridge penalty is picked on the validation part among these
 * (INFINITY: the estimate as it is; 1e9: in effect a constant offset). The estimate alone is already
 * within ~13% on held-out models while a free ridge on log y is not, so
 * the correction is kept small. */
static const double LOGEST_LAMBDAS[] = {INFINITY, 1e9, 1e3, 1e2, 10};
#define N_LOGEST_LAMBDAS (int)(sizeof LOGEST_LAMBDAS / sizeof *LOGEST_LAMBDAS)
#define RANGE_SLACK 3.4   /* ln 30: at most 30x beyond the training labels */
#define XFULL_ROWS 64     /* full node-feature rows featurized at a time */
#define GNN_MAX_NETS DLP_MAX_MEMBERS
/* --readout (DLP_READOUT_*): the pool of the even and of the odd members
 * of an ensemble (mixed: the weighted readout for the odd ones only) */
static const dlp_nn_pool READOUT_POOLS[][2] = {
    [DLP_READOUT_MEAN] = {DLP_NN_POOL_MEAN, DLP_NN_POOL_MEAN},
    [DLP_READOUT_COST] = {DLP_NN_POOL_MEAN_COST, DLP_NN_POOL_MEAN_COST},
    [DLP_READOUT_MIXED] = {DLP_NN_POOL_MEAN, DLP_NN_POOL_MEAN_COST},
    [DLP_READOUT_LSE] = {DLP_NN_POOL_MEAN_LSE, DLP_NN_POOL_MEAN_LSE},
    [DLP_READOUT_MIXED_LSE] = {DLP_NN_POOL_MEAN, DLP_NN_POOL_MEAN_LSE},
};
/* cost readout (--readout mean+cost): a node's weight is its roofline time
 * plus this floor, in microseconds, over the graph's sum; the floor keeps
 * graphs of zero-cost nodes (shape arithmetic) defined and gives every
 * node about a launch's worth */
#define COST_FLOOR_US 1.0

typedef struct {
    char kind[16];
    dlp_gnn_arch arch;
    int nt;
    dlp_target ts[DLP_T_COUNT];
    int sdim;                        /* static dim incl. GAE embedding */
    int edim;                        /* GAE embedding dim (0: none) */
    float node_mean[DLP_FEAT_NODE_DIM], node_std[DLP_FEAT_NODE_DIM];
    int n_cols;                      /* node columns the network reads: */
    int32_t cols[DLP_FEAT_NODE_DIM]; /* op types absent from training dropped */
    /* the first ob.n of them are the op type's one-hot, which the network
     * reads as a block passed sparse (dlp_op_block); m->x holds the other
     * n_cols - ob.n columns */
    dlp_op_block ob;
    float *st_mean, *st_std;         /* [sdim] */
    float y_mu[DLP_T_COUNT];
    bool has_range;                  /* log-label range of the training part: */
    float y_lo[DLP_T_COUNT], y_hi[DLP_T_COUNT]; /* predictions are clamped to
                                        it widened by RANGE_SLACK */
    float *prior;                    /* [nt][sdim + 1], NULL: none */
    int pk[DLP_T_COUNT];             /* per target j: PRIOR_* */
    float add_w[DLP_T_COUNT][NADD];  /* additive prior weights */
    uint8_t net_off[DLP_T_COUNT];    /* per target j: 1 = prior alone (the
                                        network's residual did not help on
                                        the validation part) */
    /* the networks: one, or an ensemble of n_net members of the same
     * architecture trained from different seeds (and batch orders) on the
     * same data, whose log-space residuals are averaged; the priors,
     * standardisation and gates are shared */
    int n_net;
    dlp_nn_pool pool[GNN_MAX_NETS];  /* per member: MEAN, or MEAN_COST /
                                        MEAN_LSE (the cost readouts) */
    /* [n_net], zeroed by set_members once n_net is known: a network's
     * struct is ~19 KB (its tensor table), and a fixed array of
     * GNN_MAX_NETS made every loaded model clear 150 KB (~38 page faults,
     * ~0.5 ms of a ResNet-50 `dlperf predict`) for its one or two */
    dlp_nn_sage_model *net;
    dlp_gae *gae;
    /* scratch */
    float *x, *st, *out, *out1, *xfull, *w;
    size_t x_cap, st_cap, out_cap, out1_cap, xfull_cap, w_cap;
    int32_t *cat;                    /* [nodes]: ob.pos of each node's op */
    size_t cat_cap;
    dlp_nn_cat catv;                 /* the last forward's block */
    double *roof;
    size_t roof_cap;
    dlp_optime *ot;         /* operator times its features read (NULL:
                               the roofline's; files before them) */
    dlp_convws *ws;         /* a training step's cuDNN workspaces, which
                               its memory estimate reads (NULL: the walk's
                               rule; inference, files before them) */
    struct gnn_inputs *in;  /* while training: the examples' inputs
                               derived once (NULL: derived per forward) */
} gnn;

static void inputs_free(struct gnn_inputs *in);

/* ---- per-thread prediction scratch ----------------------------------------
 * A prediction borrows its two large buffers from the calling thread's
 * scratch instead of using the model's own: the network's input rows (x)
 * and one workspace, TraPPM's encoder's first, then the SAGE network's. So
 * the predictors of one request (DIPPM, then TraPPM's encoder and network)
 * reuse the same pages rather than each faulting in its own: ~1,000 page
 * faults fewer for a 2,000-node graph, each ~3 us on the project's VM.
 * Borrowing swaps pointers with the model's buffers and swaps back before
 * the prediction returns (a model trained in this process keeps its own).
 * A thread's scratch is freed when the thread exits, or when the last GNN
 * model is freed (for the thread that frees it: the CLI's main thread). */
typedef struct {
    float *x;
    size_t x_cap;
    nn_real *ws;
    size_t ws_cap;
} gnn_scratch;

static pthread_key_t scratch_key;
static pthread_once_t scratch_once = PTHREAD_ONCE_INIT;
static bool scratch_ok;
static int n_models; /* live gnn models (atomic) */

static void scratch_free(void *p) {
    gnn_scratch *s = p;
    if (!s) return;
    free(s->x);
    free(s->ws);
    free(s);
}

static void scratch_key_init(void) {
    scratch_ok = pthread_key_create(&scratch_key, scratch_free) == 0;
}

/* The calling thread's scratch, created on first use; NULL if that fails
 * (the model's own buffers are used then). */
static gnn_scratch *scratch_get(void) {
    pthread_once(&scratch_once, scratch_key_init);
    if (!scratch_ok) return NULL;
    gnn_scratch *s = pthread_getspecific(scratch_key);
    if (s) return s;
    s = calloc(1, sizeof *s);
    if (s && pthread_setspecific(scratch_key, s) != 0) {
        free(s);
        s = NULL;
    }
    return s;
}

static void swap_f(float **a, size_t *acap, float **b, size_t *bcap) {
    float *p = *a; *a = *b; *b = p;
    size_t c = *acap; *acap = *bcap; *bcap = c;
}

static void swap_r(nn_real **a, size_t *acap, nn_real **b, size_t *bcap) {
    nn_real *p = *a; *a = *b; *b = p;
    size_t c = *acap; *acap = *bcap; *bcap = c;
}

static gnn *gnn_new(void) {
    gnn *m = calloc(1, sizeof *m);
    if (!m) return NULL;
    m->n_net = 1;
    for (int k = 0; k < GNN_MAX_NETS; k++) m->pool[k] = DLP_NN_POOL_MEAN;
    __atomic_add_fetch(&n_models, 1, __ATOMIC_ACQ_REL);
    return m;
}

/* m->net for n members (n_net = n), zeroed; once per model */
static bool set_members(gnn *m, int n) {
    DLP_ASSERT(!m->net && n >= 1 && n <= GNN_MAX_NETS);
    m->net = calloc((size_t)n, sizeof *m->net);
    if (!m->net) return false;
    m->n_net = n;
    return true;
}

static void gnn_release(gnn *m) {
    if (!m) return;
    free(m->st_mean); free(m->st_std); free(m->prior);
    for (int k = 0; m->net && k < m->n_net; k++) dlp_nn_sage_model_free(&m->net[k]);
    free(m->net);
    dlp_gae_free(m->gae);
    dlp_optime_free(m->ot);
    dlp_convws_free(m->ws);
    free(m->x); free(m->st); free(m->out); free(m->out1); free(m->xfull);
    free(m->cat);
    free(m->w); free(m->roof);
    inputs_free(m->in);
    free(m);
    if (__atomic_sub_fetch(&n_models, 1, __ATOMIC_ACQ_REL) == 0) {
        pthread_once(&scratch_once, scratch_key_init);
        if (scratch_ok) {
            scratch_free(pthread_getspecific(scratch_key));
            pthread_setspecific(scratch_key, NULL);
        }
    }
}

static bool grow(float **p, size_t *cap, size_t need) {
    if (need <= *cap) return true;
    size_t n = need + need / 2 + 16;
    float *q = realloc(*p, n * sizeof *q);
    if (!q) return false;
    *p = q;
    *cap = n;
    return true;
}

void dlp_op_block_setup(dlp_op_block *b, const int32_t *cols, int n_cols,
                        const float *mean, const float *std) {
    for (int k = 0; k <= DLP_FEAT_NOPS; k++) b->pos[k] = -1;
    b->n = 0;
    while (b->n < n_cols && cols[b->n] <= DLP_FEAT_NOPS) {
        int k = cols[b->n];
        b->pos[k] = (int16_t)b->n;
        b->scale[b->n] = (nn_real)1 / std[k];
        b->base[b->n] = -mean[k] / std[k];
        b->n++;
    }
}

static void cat_setup(gnn *m) {
    dlp_op_block_setup(&m->ob, m->cols, m->n_cols, m->node_mean, m->node_std);
}

static bool any_weighted(const gnn *m) {
    for (int k = 0; k < m->n_net; k++)
        if (dlp_nn_pool_weighted(m->pool[k])) return true;
    return false;
}

/* The cost readout's node weights of graph fg under c into w[n_nodes]:
 * (roofline us + COST_FLOOR_US) / their sum over the graph. roof: scratch
 * of *roof_cap doubles, grown here. */
static bool cost_weights(double **roof, size_t *roof_cap,
                         const dlp_feat_graph *fg, const dlp_pred_config *c,
                         float *w) {
    int n = fg->n_nodes;
    if (!dlp_grow((void **)roof, roof_cap, n ? (size_t)n : 1, sizeof **roof))
        return false;
    double *r = *roof, sum = 0;
    dlp_feat_node_roofline_us(fg, c, r);
    for (int i = 0; i < n; i++) {
        double t = r[i];
        r[i] = (isfinite(t) && t > 0 ? t : 0) + COST_FLOOR_US;
        sum += r[i];
    }
    for (int i = 0; i < n; i++) w[i] = (float)(r[i] / sum);
    return true;
}

/* The network's dense node columns of graph fg under c, standardized, into
 * x[n_nodes][n_cols - ob.n]; xfull: scratch of XFULL_ROWS full rows (only
 * the kept columns of each row go on, so the rows need not all be held at
 * once). */
static void node_rows(const gnn *m, const dlp_feat_graph *fg,
                      const dlp_pred_config *c, float *xfull, float *x) {
    const int nd = m->n_cols - m->ob.n;
    for (int r0 = 0; r0 < fg->n_nodes; r0 += XFULL_ROWS) {
        int r1 = fg->n_nodes - r0 < XFULL_ROWS ? fg->n_nodes : r0 + XFULL_ROWS;
        dlp_feat_nodes_range(fg, c, r0, r1, xfull);
        for (int r = r0; r < r1; r++) {
            const float *src = xfull + (size_t)(r - r0) * DLP_FEAT_NODE_DIM;
            float *dst = x + (size_t)r * nd;
            for (int j = m->ob.n; j < m->n_cols; j++) {
                int k = m->cols[j];
                dst[j - m->ob.n] = (src[k] - m->node_mean[k]) / m->node_std[k];
            }
        }
    }
}

/* Static features of one graph+config (standardized), [sdim]. emb may be
 * NULL when edim == 0. */
static void static_row(const gnn *m, const dlp_feat_graph *fg,
                       const dlp_pred_config *c, const float *emb, float *o) {
    dlp_feat_static(fg, c, o);
    for (int k = 0; k < m->edim; k++) o[DLP_FEAT_STATIC_DIM + k] = emb[k];
    for (int k = 0; k < m->sdim; k++)
        o[k] = (o[k] - m->st_mean[k]) / m->st_std[k];
}

/* Additive prior features, natural units: an analytical decomposition the
 * prior weights by least squares on relative error:
 * [1, compute ms, memory ms, roofline ms, kernel launches eager, kernel
 *  launches graph, weights MiB, peak activations + cuBLAS workspaces MiB
 *  (the liveness estimate less weights), activations saved for backward
 *  MiB (training),
 *  batch, per-kernel floored roofline ms]. */
static void add_feats(const dlp_feat_graph *fg, const dlp_pred_config *c,
                      double *f) {
    dlp_feat_roofline r;
    dlp_feat_roofline_of(fg, c, &r);
    double s = c->precision == DLP_PREC_FP32 ? 1.0 : 0.5;
    f[0] = 1;
    f[1] = r.compute_ms;
    f[2] = r.memory_ms;
    f[3] = r.roofline_ms;
    double kl = r.kernels * (c->device.launch_us > 0 ? c->device.launch_us : 5) * 1e-3;
    f[4] = c->runtime == DLP_RT_EAGER ? kl : 0;
    f[5] = c->runtime == DLP_RT_EAGER ? 0 : kl;
    f[6] = r.weights_mib;
    f[7] = r.mem_mib - r.weights_mib;   /* activations + workspaces */
    f[8] = fg->saved_act_bytes * s / 1048576.0;
    f[9] = (double)c->batch;
    f[10] = r.kernel_ms;
}

/* log-space prior of target j (minus y_mu), from the standardized static
 * row st or the additive model. */
static double prior_of(const gnn *m, int j, const float *st,
                       const dlp_feat_graph *fg, const dlp_pred_config *c) {
    if (!m->prior) return 0;
    if (m->pk[j] == PRIOR_LOGEST) {
        const float *w = m->prior + (size_t)j * (m->sdim + 1);
        double est = dlp_feat_mem_estimate_mib(fg, c);
        double z = log(est > 1e-3 ? est : 1e-3) - m->y_mu[m->ts[j]] + w[0];
        for (int k = 0; k < m->sdim; k++) z += w[k + 1] * st[k];
        return z;
    }
    if (m->pk[j] == PRIOR_ADD) {
        double f[NADD], z = 0;
        add_feats(fg, c, f);
        for (int k = 0; k < NADD; k++) z += m->add_w[j][k] * f[k];
        double floor_ = exp(m->y_mu[m->ts[j]]) * 1e-3;
        return log(z > floor_ ? z : floor_) - m->y_mu[m->ts[j]];
    }
    const float *w = m->prior + (size_t)j * (m->sdim + 1);
    double z = w[0];
    for (int k = 0; k < m->sdim; k++) z += w[k + 1] * st[k];
    return z;
}

/* The members' mean output into m->out[no] from the prepared inputs m->x,
 * m->st. The members run one after another on member 0's workspace (the
 * calling thread's scratch during a prediction) instead of each faulting
 * in its own. */
static dlp_status predict_members(gnn *m, const dlp_nn_graph *g, size_t no,
                                  dlp_error *err) {
    dlp_status st = dlp_nn_sage_model_predict_cat(&m->net[0], g, m->x, &m->catv,
                                                  m->st, m->out, err);
    if (st || m->n_net == 1) return st;
    if (!grow(&m->out1, &m->out1_cap, no))
        return dlp_fail(err, DLP_ERR_NOMEM, "gnn: out of memory");
    for (int k = 1; k < m->n_net && !st; k++) {
        dlp_nn_sage_model *net = &m->net[k];
        swap_r(&net->ws, &net->ws_cap, &m->net[0].ws, &m->net[0].ws_cap);
        st = dlp_nn_sage_model_predict_cat(net, g, m->x, &m->catv, m->st,
                                           m->out1, err);
        swap_r(&net->ws, &net->ws_cap, &m->net[0].ws, &m->net[0].ws_cap);
        for (size_t i = 0; !st && i < no; i++) m->out[i] += m->out1[i];
    }
    for (size_t i = 0; i < no; i++) m->out[i] /= (float)m->n_net;
    return st;
}

/* ---- the examples' inputs, derived once per training --------------------
 * Besides the network, a forward derives from each example its
 * standardized node rows, the cost readout's node weights, its static row
 * and its priors. They are fixed once the statistics and priors are set,
 * yet were derived again at every forward of every epoch: ~7% of the
 * samples of an inference DIPPM epoch (perf, eighty-ninth session). A
 * training derives them once, before the members train, with the same
 * functions the forward calls, so the numbers, and the files, are the
 * same (bench/train_bench.sh says so: 4,000 inference examples, 22.5 ->
 * 21.0 s an epoch). The node rows are held up to INPUTS_BUDGET bytes, in
 * the order the training part lists its examples (dlp_train_opts
 * .input_bytes sets another budget, or none); an example beyond it, or
 * all of them when the memory cannot be had, has its rows derived per
 * forward as before. */
#define INPUTS_BUDGET ((size_t)3 << 30)

typedef struct gnn_inputs {
    int64_t *node_off; /* [n_ex]: the example's first node in x, -1: none */
    float *x;          /* [nodes][n_cols - ob.n] */
    float *w;          /* [nodes]: cost weights, NULL: no member reads them */
    uint8_t *has;      /* [n_ex]: st and prior hold the example */
    float *st;         /* [n_ex][sdim] */
    double *prior;     /* [n_ex][nt] */
} gnn_inputs;

static void inputs_free(gnn_inputs *in) {
    if (!in) return;
    free(in->node_off); free(in->x); free(in->w); free(in->has);
    free(in->st); free(in->prior);
    free(in);
}

/* Forward on graphs fgs[0..n-1] with configs cfgs, embeddings embs (rows
 * of edim or NULL): writes log-space predictions logy[n][nt] (prior and
 * mean included). ex: the examples' indices in the set m->in was derived
 * from (NULL: none; their inputs are derived here). net: the member whose
 * output is used, or -1 for the average of all (a prediction). train:
 * leaves activations for a backward on m->net[net], net >= 0 (else the
 * network's lighter predict-only forward runs: same outputs). */
static dlp_status gnn_forward(gnn *m, const dlp_feat_graph *const *fgs,
                              const dlp_pred_config *const *cfgs,
                              const float *const *embs, const int32_t *ex,
                              int n, int net, bool train, dlp_nn_graph *g,
                              double *logy, dlp_error *err) {
    dlp_nn_graph_desc descs[256];
    memset(descs, 0, sizeof descs);
    if (n > 256) return dlp_fail(err, DLP_ERR_LIMIT, "gnn: batch too large");
    const gnn_inputs *in = ex ? m->in : NULL;
    size_t N = 0;
    for (int i = 0; i < n; i++) {
        descs[i].n_nodes = fgs[i]->n_nodes;
        descs[i].n_edges = fgs[i]->n_edges;
        descs[i].src = fgs[i]->src;
        descs[i].dst = fgs[i]->dst;
        N += (size_t)fgs[i]->n_nodes;
    }
    dlp_status st = dlp_nn_graph_build(g, descs, NULL, n, DLP_NN_UNDIRECTED, err);
    if (st) return st;
    /* the weights, where a member this forward runs reads them (training
     * runs one member; a prediction all) */
    if (net >= 0 ? dlp_nn_pool_weighted(m->pool[net]) : any_weighted(m)) {
        if (!grow(&m->w, &m->w_cap, N ? N : 1))
            return dlp_fail(err, DLP_ERR_NOMEM, "gnn: out of memory");
        for (int i = 0, o = 0; i < n; o += fgs[i]->n_nodes, i++) {
            int64_t no = in && in->w ? in->node_off[ex[i]] : -1;
            if (no >= 0)
                memcpy(m->w + o, in->w + no, (size_t)fgs[i]->n_nodes * sizeof *m->w);
            else if (!cost_weights(&m->roof, &m->roof_cap, fgs[i], cfgs[i], m->w + o))
                return dlp_fail(err, DLP_ERR_NOMEM, "gnn: out of memory");
        }
        g->node_w = m->w;
    }
    const int nd = m->n_cols - m->ob.n;    /* dense columns of x */
    if (!grow(&m->x, &m->x_cap, (N ? N : 1) * (size_t)(nd ? nd : 1)) ||
        !dlp_grow((void **)&m->cat, &m->cat_cap, N ? N : 1, sizeof *m->cat) ||
        !grow(&m->st, &m->st_cap, (size_t)n * m->sdim) ||
        !grow(&m->out, &m->out_cap, (size_t)n * m->nt) ||
        !grow(&m->xfull, &m->xfull_cap, (size_t)XFULL_ROWS * DLP_FEAT_NODE_DIM))
        return dlp_fail(err, DLP_ERR_NOMEM, "gnn: out of memory");
    size_t off = 0;
    for (int i = 0; i < n; i++) {
        float *x = m->x + off * (size_t)nd;
        for (int r = 0; r < fgs[i]->n_nodes; r++)
            m->cat[off + (size_t)r] = m->ob.pos[fgs[i]->op[r]];
        int64_t no = in ? in->node_off[ex[i]] : -1;
        if (no >= 0)
            memcpy(x, in->x + (size_t)no * nd,
                   (size_t)fgs[i]->n_nodes * nd * sizeof *x);
        else
            node_rows(m, fgs[i], cfgs[i], m->xfull, x);
        off += (size_t)fgs[i]->n_nodes;
        if (in && in->has[ex[i]])
            memcpy(m->st + (size_t)i * m->sdim, in->st + (size_t)ex[i] * m->sdim,
                   (size_t)m->sdim * sizeof *m->st);
        else
            static_row(m, fgs[i], cfgs[i], embs ? embs[i] : NULL,
                       m->st + (size_t)i * m->sdim);
    }
    m->catv = (dlp_nn_cat){m->ob.n, m->cat, m->ob.scale, m->ob.base};
    DLP_ASSERT(net < m->n_net && (net >= 0 || !train));
    if (train)
        st = dlp_nn_sage_model_forward_cat(&m->net[net], g, m->x, &m->catv,
                                           m->st, m->out, err);
    else if (net >= 0)
        st = dlp_nn_sage_model_predict_cat(&m->net[net], g, m->x, &m->catv,
                                           m->st, m->out, err);
    else
        st = predict_members(m, g, (size_t)n * m->nt, err);
    if (st) return st;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m->nt; j++) {
            double prior = in && in->has[ex[i]]
                               ? in->prior[(size_t)ex[i] * m->nt + j]
                               : prior_of(m, j, m->st + (size_t)i * m->sdim,
                                          fgs[i], cfgs[i]);
            double z = (m->net_off[j] ? 0 : m->out[i * m->nt + j]) +
                       m->y_mu[m->ts[j]] + prior;
            if (m->has_range) {   /* no wild extrapolation */
                double lo = m->y_lo[m->ts[j]] - RANGE_SLACK;
                double hi = m->y_hi[m->ts[j]] + RANGE_SLACK;
                z = z < lo ? lo : z > hi ? hi : z;
            }
            logy[i * m->nt + j] = z;
        }
    return DLP_OK;
}

/* One thread's share of inputs_derive: examples u[lo..hi) */
typedef struct {
    const gnn *m;
    const dlp_examples *E;
    const float *embs;
    const int32_t *u;
    gnn_inputs *in;
} inputs_job;

static void inputs_range(void *ctx, int lo, int hi) {
    inputs_job *j = ctx;
    const gnn *m = j->m;
    gnn_inputs *in = j->in;
    double *roof = NULL;
    size_t roof_cap = 0;
    float *xfull = malloc((size_t)XFULL_ROWS * DLP_FEAT_NODE_DIM * sizeof *xfull);
    const int nd = m->n_cols - m->ob.n;
    for (int i = lo; i < hi; i++) {
        int32_t e = j->u[i];
        const dlp_example *x = &j->E->ex[e];
        const dlp_feat_graph *fg = &j->E->fg[x->fg];
        float *st = in->st + (size_t)e * m->sdim;
        static_row(m, fg, &x->cfg,
                   j->embs ? j->embs + (size_t)x->fg * m->edim : NULL, st);
        for (int t = 0; t < m->nt; t++)
            in->prior[(size_t)e * m->nt + t] = prior_of(m, t, st, fg, &x->cfg);
        in->has[e] = 1;
        int64_t no = in->node_off[e];
        if (no < 0) continue;
        /* out of memory for the scratch: derived per forward instead */
        if (!xfull || (in->w && !cost_weights(&roof, &roof_cap, fg, &x->cfg,
                                              in->w + no))) {
            in->node_off[e] = -1;
            continue;
        }
        node_rows(m, fg, &x->cfg, xfull, in->x + (size_t)no * nd);
    }
    free(xfull);
    free(roof);
}

/* m->in for the examples tr[0..ntr) and vi[0..nv) (the training and
 * validation parts), node rows up to budget bytes, on the engine's
 * threads; each example's inputs are its own, so they do not depend on the
 * thread count. Out of memory: m->in stays NULL (or holds fewer node rows)
 * and forwards derive the rest. */
static void inputs_derive(gnn *m, const dlp_examples *E, const int32_t *tr,
                          int ntr, const int32_t *vi, int nv,
                          const float *embs, size_t budget) {
    gnn_inputs *in = calloc(1, sizeof *in);
    int32_t *u = malloc((size_t)(ntr + nv + 1) * sizeof *u);
    size_t n_ex = E->n ? (size_t)E->n : 1;
    if (in) {
        in->node_off = malloc(n_ex * sizeof *in->node_off);
        in->has = calloc(n_ex, 1);
        in->st = malloc(n_ex * m->sdim * sizeof *in->st);
        in->prior = malloc(n_ex * m->nt * sizeof *in->prior);
    }
    if (!in || !u || !in->node_off || !in->has || !in->st || !in->prior) {
        inputs_free(in);
        free(u);
        return;
    }
    const size_t nd = (size_t)(m->n_cols - m->ob.n);
    const size_t per_node = (nd + (any_weighted(m) ? 1 : 0)) * sizeof(float);
    for (size_t e = 0; e < n_ex; e++) in->node_off[e] = -1;
    int nu = 0;
    size_t nodes = 0;
    for (int p = 0; p < 2; p++)
        for (int i = 0; i < (p ? nv : ntr); i++) {
            int32_t e = p ? vi[i] : tr[i];
            if (in->has[e]) continue;   /* vi is tr without a validation part */
            in->has[e] = 1;
            u[nu++] = e;
            size_t nn = (size_t)E->fg[E->ex[e].fg].n_nodes;
            if ((nodes + nn) * per_node <= budget) {
                in->node_off[e] = (int64_t)nodes;
                nodes += nn;
            }
        }
    memset(in->has, 0, n_ex);
    in->x = malloc((nodes ? nodes : 1) * (nd ? nd : 1) * sizeof *in->x);
    if (any_weighted(m)) in->w = malloc((nodes ? nodes : 1) * sizeof *in->w);
    if (!in->x || (any_weighted(m) && !in->w)) {
        free(in->x); free(in->w);
        in->x = in->w = NULL;
        for (size_t e = 0; e < n_ex; e++) in->node_off[e] = -1;
    }
    inputs_job j = {m, E, embs, u, in};
    dlp_nn_parallel_for(dlp_nn_threads(), nu, inputs_range, &j);
    free(u);
    m->in = in;
}

/* ---- training ------------------------------------------------------------ */
/* Embeddings of every featurized graph of E (TraPPM), [n_fg][edim]. */
static dlp_status embed_all(gnn *m, const dlp_examples *E, float **out,
                            dlp_error *err) {
    *out = NULL;
    if (!m->edim) return DLP_OK;
    float *e = calloc((size_t)(E->n_fg ? E->n_fg : 1) * m->edim, sizeof *e);
    if (!e) return dlp_fail(err, DLP_ERR_NOMEM, "gnn: out of memory");
    for (int f = 0; f < E->n_fg; f++) {
        if (!E->fg[f].op) continue;   /* skipped graph */
        dlp_status st = dlp_gae_embed(m->gae, &E->fg[f], e + (size_t)f * m->edim, err);
        if (st) { free(e); return st; }
    }
    *out = e;
    return DLP_OK;
}

static dlp_status set_stats(gnn *m, const dlp_examples *E, const int32_t *tr,
                            int ntr, const float *embs, dlp_error *err) {
    /* node stats over a sample of training nodes */
    size_t cap = 200000, n = 0;
    float *buf = malloc(cap * DLP_FEAT_NODE_DIM * sizeof *buf);
    float *row = NULL;
    size_t row_cap = 0;
    if (!buf) return dlp_fail(err, DLP_ERR_NOMEM, "gnn: out of memory");
    int step = 1;
    while ((size_t)ntr / step > 2000) step++;
    for (int i = 0; i < ntr && n < cap; i += step) {
        const dlp_example *x = &E->ex[tr[i]];
        const dlp_feat_graph *fg = &E->fg[x->fg];
        if (!grow(&row, &row_cap, (size_t)(fg->n_nodes + 1) * DLP_FEAT_NODE_DIM)) {
            free(buf); free(row);
            return dlp_fail(err, DLP_ERR_NOMEM, "gnn: out of memory");
        }
        dlp_feat_nodes(fg, &x->cfg, row);
        for (int r = 0; r < fg->n_nodes && n < cap; r++, n++)
            memcpy(buf + n * DLP_FEAT_NODE_DIM, row + (size_t)r * DLP_FEAT_NODE_DIM,
                   DLP_FEAT_NODE_DIM * sizeof *buf);
    }
    dlp_colstats(buf, n, DLP_FEAT_NODE_DIM, m->node_mean, m->node_std);
    free(buf); free(row);
    /* op one-hot columns of ops absent from every training graph carry no
     * information: drop them (the network's input shrinks ~3x) */
    char present[DLP_FEAT_NOPS + 1] = {0};
    for (int i = 0; i < ntr; i++) {
        const dlp_feat_graph *fg = &E->fg[E->ex[tr[i]].fg];
        for (int r = 0; r < fg->n_nodes; r++) present[fg->op[r]] = 1;
    }
    present[DLP_FEAT_NOPS] = 1;
    m->n_cols = 0;
    for (int k = 0; k < DLP_FEAT_NODE_DIM; k++)
        if (k > DLP_FEAT_NOPS || present[k]) m->cols[m->n_cols++] = k;
    cat_setup(m);
    float *S = malloc((size_t)ntr * m->sdim * sizeof *S);
    if (!S) return dlp_fail(err, DLP_ERR_NOMEM, "gnn: out of memory");
    for (int i = 0; i < ntr; i++) {
        const dlp_example *x = &E->ex[tr[i]];
        float *o = S + (size_t)i * m->sdim;
        dlp_feat_static(&E->fg[x->fg], &x->cfg, o);
        for (int k = 0; k < m->edim; k++)
            o[DLP_FEAT_STATIC_DIM + k] = embs[(size_t)x->fg * m->edim + k];
    }
    dlp_colstats(S, (size_t)ntr, m->sdim, m->st_mean, m->st_std);
    free(S);
    for (int j = 0; j < m->nt; j++) {
        double s = 0;
        int c = 0;
        for (int i = 0; i < ntr; i++) {
            double y = E->ex[tr[i]].y[m->ts[j]];
            if (y > 0) { s += log(y); c++; }
        }
        m->y_mu[m->ts[j]] = c ? (float)(s / c) : 0;
        double lo = INFINITY, hi = -INFINITY;
        for (int i = 0; i < ntr; i++) {
            double y = E->ex[tr[i]].y[m->ts[j]];
            if (y > 0) { lo = fmin(lo, log(y)); hi = fmax(hi, log(y)); }
        }
        m->y_lo[m->ts[j]] = c ? (float)lo : -60;
        m->y_hi[m->ts[j]] = c ? (float)hi : 60;
    }
    m->has_range = true;
    return DLP_OK;
}

/* Standardized static rows of examples idx[0..n) into S[n][sdim]. */
static void static_rows(const gnn *m, const dlp_examples *E, const int32_t *idx,
                        int n, const float *embs, float *S) {
    for (int i = 0; i < n; i++) {
        const dlp_example *x = &E->ex[idx[i]];
        static_row(m, &E->fg[x->fg], &x->cfg,
                   embs ? embs + (size_t)x->fg * m->edim : NULL,
                   S + (size_t)i * m->sdim);
    }
}

/* MAPE of target j's current prior over examples idx[0..n) (static rows
 * S); INFINITY when none is labelled. */
static double prior_mape(const gnn *m, int j, const dlp_examples *E,
                         const int32_t *idx, int n, const float *S) {
    double e = 0;
    int c = 0;
    for (int i = 0; i < n; i++) {
        const dlp_example *x = &E->ex[idx[i]];
        double yv = x->y[m->ts[j]];
        if (!(yv > 0)) continue;
        double z = prior_of(m, j, S + (size_t)i * m->sdim, &E->fg[x->fg], &x->cfg);
        e += fabs(exp(z + m->y_mu[m->ts[j]]) / yv - 1);
        c++;
    }
    return c ? e / c : INFINITY;
}

/* Fits the priors of every target on the training part and keeps, per
 * target, the one with the lower MAPE on the validation part (the training
 * part when there is no labelled validation part): the ridge on log y, the
 * additive model, and for memory targets log(estimate) + correction. */
static dlp_status fit_prior(gnn *m, const dlp_examples *E, const int32_t *tr,
                            int ntr, const int32_t *va, int nva,
                            const float *embs, dlp_error *err) {
    int d = m->sdim + 1;
    double *X = malloc((size_t)ntr * d * sizeof *X);
    double *y = malloc((size_t)ntr * sizeof *y);
    double *w = malloc((size_t)d * sizeof *w);
    double *wbest = malloc((size_t)d * sizeof *wbest);
    float *Str = malloc((size_t)ntr * m->sdim * sizeof *Str);
    float *Sva = malloc((size_t)(nva > 0 ? nva : 1) * m->sdim * sizeof *Sva);
    m->prior = calloc((size_t)m->nt * d, sizeof *m->prior);
    dlp_status st = DLP_OK;
    if (!X || !y || !w || !wbest || !Str || !Sva || !m->prior)
        st = dlp_fail(err, DLP_ERR_NOMEM, "gnn: out of memory");
    if (!st) {
        static_rows(m, E, tr, ntr, embs, Str);
        if (nva > 0) static_rows(m, E, va, nva, embs, Sva);
    }
    for (int i = 0; i < ntr && !st; i++) {
        X[(size_t)i * d] = 1;
        for (int k = 0; k < m->sdim; k++)
            X[(size_t)i * d + 1 + k] = Str[(size_t)i * m->sdim + k];
    }
    for (int j = 0; j < m->nt && !st; j++) {
        float *pj = m->prior + (size_t)j * d;
        for (int i = 0; i < ntr; i++) {
            double v = E->ex[tr[i]].y[m->ts[j]];
            y[i] = v > 0 ? log(v) - m->y_mu[m->ts[j]] : NAN;
        }
        dlp_error e2;
        if (dlp_ridge_fit(X, y, ntr, d, 1.0, w, &e2)) continue; /* no labels */
        /* where the choice is made: validation if it has labels */
        const int32_t *ev = tr;
        const float *Sev = Str;
        int nev = ntr;
        for (int i = 0; i < nva; i++)
            if (E->ex[va[i]].y[m->ts[j]] > 0) { ev = va; Sev = Sva; nev = nva; break; }
        for (int k = 0; k < d; k++) pj[k] = (float)w[k];
        m->pk[j] = PRIOR_RIDGE;
        double best = prior_mape(m, j, E, ev, nev, Sev);
        int best_k = PRIOR_RIDGE;
        memcpy(wbest, w, (size_t)d * sizeof *w);
        /* additive model on relative error: rows scaled by 1/y, columns
         * by their RMS for conditioning */
        double *A = malloc((size_t)ntr * NADD * sizeof *A);
        double *one = malloc((size_t)ntr * sizeof *one);
        double sc[NADD] = {0}, wa[NADD];
        if (!A || !one) { free(A); free(one); st = dlp_fail(err, DLP_ERR_NOMEM, "out of memory"); break; }
        for (int i = 0; i < ntr; i++) {
            const dlp_example *x = &E->ex[tr[i]];
            double yv = x->y[m->ts[j]], f[NADD];
            add_feats(&E->fg[x->fg], &x->cfg, f);
            one[i] = yv > 0 ? 1 : NAN;
            for (int k = 0; k < NADD; k++) {
                A[(size_t)i * NADD + k] = yv > 0 ? f[k] / yv : 0;
                sc[k] += A[(size_t)i * NADD + k] * A[(size_t)i * NADD + k];
            }
        }
        for (int k = 0; k < NADD; k++) sc[k] = sc[k] > 0 ? sqrt(sc[k] / ntr) : 1;
        for (int i = 0; i < ntr; i++)
            for (int k = 0; k < NADD; k++) A[(size_t)i * NADD + k] /= sc[k];
        bool ok = !dlp_ridge_fit(A, one, ntr, NADD, 1e-3, wa, &e2);
        free(A); free(one);
        for (int k = 0; k < NADD; k++) m->add_w[j][k] = ok ? (float)(wa[k] / sc[k]) : 0;
        if (ok) {
            m->pk[j] = PRIOR_ADD;
            double e = prior_mape(m, j, E, ev, nev, Sev);
            if (e < best) { best = e; best_k = PRIOR_ADD; }
        }
        /* log(estimate) + ridge correction on log(y / estimate) */
        for (int l = 0; dlp_target_is_memory(m->ts[j]) && l < N_LOGEST_LAMBDAS; l++) {
            for (int i = 0; i < ntr; i++) {
                const dlp_example *x = &E->ex[tr[i]];
                double yv = x->y[m->ts[j]];
                double est = dlp_feat_mem_estimate_mib(&E->fg[x->fg], &x->cfg);
                y[i] = yv > 0 ? log(yv / (est > 1e-3 ? est : 1e-3)) : NAN;
            }
            if (isinf(LOGEST_LAMBDAS[l]))       /* the estimate as it is */
                memset(w, 0, (size_t)d * sizeof *w);
            else if (dlp_ridge_fit(X, y, ntr, d, LOGEST_LAMBDAS[l], w, &e2))
                break;
            for (int k = 0; k < d; k++) pj[k] = (float)w[k];
            m->pk[j] = PRIOR_LOGEST;
            double e = prior_mape(m, j, E, ev, nev, Sev);
            if (e < best) {
                best = e;
                best_k = PRIOR_LOGEST;
                memcpy(wbest, w, (size_t)d * sizeof *w);
            }
        }
        m->pk[j] = best_k;
        for (int k = 0; k < d; k++)   /* ridge or log-estimate weights */
            pj[k] = (float)(best_k == PRIOR_ADD ? 0 : wbest[k]);
    }
    free(X); free(y); free(w); free(wbest); free(Str); free(Sva);
    return st;
}

static dlp_status add_cols(const gnn *m, dlp_nn_file *f, dlp_error *err) {
    int64_t c[DLP_FEAT_NODE_DIM];
    for (int j = 0; j < m->n_cols; j++) c[j] = m->cols[j];
    return dlp_nn_file_add_i64(f, "gnn/cols", c, (uint64_t)m->n_cols, err);
}

static dlp_status add_range(const gnn *m, dlp_nn_file *f, dlp_error *err) {
    if (!m->has_range) return DLP_OK;
    float r[2 * DLP_T_COUNT];
    for (int t = 0; t < DLP_T_COUNT; t++) { r[t] = m->y_lo[t]; r[DLP_T_COUNT + t] = m->y_hi[t]; }
    return dlp_nn_file_add_f32(f, "gnn/y_range", r, 2 * DLP_T_COUNT, err);
}

static dlp_status gnn_save(const gnn *m, dlp_nn_file *f, dlp_error *err) {
    const dlp_nn_sage_model_cfg *c = &m->net[0].cfg;
    int64_t arch[12] = {GNN_VERSION, c->in_dim, c->hidden, c->n_sage,
                        c->static_dim, c->n_fc, c->fc_hidden, c->out_dim,
                        m->edim, m->prior != NULL, m->nt, DLP_FEAT_SCHEMA};
    int64_t ts[DLP_T_COUNT];
    for (int j = 0; j < m->nt; j++) ts[j] = m->ts[j];
    float ymu[DLP_T_COUNT];
    memcpy(ymu, m->y_mu, sizeof ymu);
    dlp_status st;
    if ((st = dlp_nn_file_add_str(f, "gnn/kind", m->kind, err)) ||
        (st = dlp_nn_file_add_i64(f, "gnn/arch", arch, 12, err)) ||
        (st = dlp_nn_file_add_i64(f, "gnn/targets", ts, (uint64_t)m->nt, err)) ||
        (st = dlp_nn_file_add_f32(f, "gnn/node_mean", m->node_mean, DLP_FEAT_NODE_DIM, err)) ||
        (st = dlp_nn_file_add_f32(f, "gnn/node_std", m->node_std, DLP_FEAT_NODE_DIM, err)) ||
        (st = add_cols(m, f, err)) ||
        (st = dlp_nn_file_add_f32(f, "gnn/st_mean", m->st_mean, (uint64_t)m->sdim, err)) ||
        (st = dlp_nn_file_add_f32(f, "gnn/st_std", m->st_std, (uint64_t)m->sdim, err)) ||
        (st = dlp_nn_file_add_f32(f, "gnn/y_mu", ymu, DLP_T_COUNT, err)) ||
        (st = add_range(m, f, err)) ||
        (st = dlp_nn_file_add_params(f, &m->net[0].params, err)))
        return st;
    if (any_weighted(m)) {   /* absent: the mean readout; else one per member */
        int64_t pl[GNN_MAX_NETS];
        for (int k = 0; k < m->n_net; k++) pl[k] = m->pool[k];
        if ((st = dlp_nn_file_add_i64(f, "gnn/pool", pl, (uint64_t)m->n_net, err)))
            return st;
    }
    if (m->n_net > 1) {   /* absent: one network (files before ensembles) */
        int64_t nm = m->n_net;
        if ((st = dlp_nn_file_add_i64(f, "gnn/members", &nm, 1, err))) return st;
        for (int k = 1; k < m->n_net; k++) {
            char pre[24];
            snprintf(pre, sizeof pre, "member%d/", k);
            if ((st = dlp_nn_file_add_params_as(f, pre, &m->net[k].params, err)))
                return st;
        }
    }
    if (m->prior) {
        int64_t pk[DLP_T_COUNT];
        float aw[DLP_T_COUNT * NADD];
        for (int j = 0; j < m->nt; j++) {
            pk[j] = m->pk[j];
            for (int k = 0; k < NADD; k++) aw[j * NADD + k] = m->add_w[j][k];
        }
        if ((st = dlp_nn_file_add_f32(f, "gnn/prior", m->prior,
                                      (uint64_t)m->nt * (m->sdim + 1), err)) ||
            (st = dlp_nn_file_add_i64(f, "gnn/prior_kind", pk, (uint64_t)m->nt, err)) ||
            (st = dlp_nn_file_add_f32(f, "gnn/add_w", aw, (uint64_t)m->nt * NADD, err)))
            return st;
        int64_t off[DLP_T_COUNT];
        for (int j = 0; j < m->nt; j++) off[j] = m->net_off[j];
        if ((st = dlp_nn_file_add_i64(f, "gnn/net_off", off, (uint64_t)m->nt, err)))
            return st;
    }
    if (m->gae && (st = dlp_gae_save(m->gae, f, err))) return st;
    if (m->ot && (st = dlp_optime_save(m->ot, f, err))) return st;
    if (m->ws && (st = dlp_convws_save(m->ws, f, err))) return st;
    return DLP_OK;
}

static dlp_status gnn_from_file(gnn **out, const dlp_nn_file *f,
                                dlp_error *err) {
    *out = NULL;
    const dlp_nn_entry *a = dlp_nn_file_get(f, "gnn/arch", DLP_NN_I64);
    const dlp_nn_entry *k = dlp_nn_file_get(f, "gnn/kind", DLP_NN_STR);
    const dlp_nn_entry *t = dlp_nn_file_get(f, "gnn/targets", DLP_NN_I64);
    if (!a || a->count != 12 || !k || !t)
        return dlp_fail(err, DLP_ERR_FORMAT, "gnn model: missing 'gnn/arch', "
                        "'gnn/kind' or 'gnn/targets'");
    const int64_t *v = a->data;
    if (v[0] != GNN_VERSION)
        return dlp_fail(err, DLP_ERR_UNSUPPORTED, "gnn model version %lld, this "
                        "build reads %d", (long long)v[0], GNN_VERSION);
    if (v[11] != DLP_FEAT_SCHEMA)
        return dlp_fail(err, DLP_ERR_UNSUPPORTED, "gnn model uses feature schema "
                        "%lld, this build has %d: retrain it", (long long)v[11],
                        DLP_FEAT_SCHEMA);
    const dlp_nn_entry *ce = dlp_nn_file_get(f, "gnn/cols", DLP_NN_I64);
    if (!ce || (int64_t)ce->count != v[1])
        return dlp_fail(err, DLP_ERR_FORMAT, "gnn model: missing or malformed "
                        "'gnn/cols'");
    for (uint64_t j = 0; j < ce->count; j++) {
        int64_t c = ((const int64_t *)ce->data)[j];
        if (c < 0 || c >= DLP_FEAT_NODE_DIM ||
            (j > 0 && c <= ((const int64_t *)ce->data)[j - 1]))
            return dlp_fail(err, DLP_ERR_FORMAT, "gnn model: bad column list");
    }
    if (v[1] < 1 || v[1] > DLP_FEAT_NODE_DIM || v[2] < 1 || v[2] > 4096 || v[3] < 1 ||
        v[3] > DLP_NN_MAX_LAYERS || v[5] < 1 || v[5] > DLP_NN_MAX_LAYERS ||
        v[6] < 1 || v[6] > 4096 || v[8] < 0 || v[8] > MAX_EMB ||
        v[4] != DLP_FEAT_STATIC_DIM + v[8] || v[10] < 1 ||
        v[10] > DLP_T_COUNT || v[7] != v[10] || (int64_t)t->count != v[10])
        return dlp_fail(err, DLP_ERR_FORMAT, "gnn model: architecture values "
                        "out of range");
    gnn *m = gnn_new();
    if (!m) return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    snprintf(m->kind, sizeof m->kind, "%s", (const char *)k->data);
    m->n_cols = (int)ce->count;
    for (int j = 0; j < m->n_cols; j++)
        m->cols[j] = (int32_t)((const int64_t *)ce->data)[j];
    m->nt = (int)v[10];
    for (int j = 0; j < m->nt; j++) {
        int64_t tj = ((const int64_t *)t->data)[j];
        if (tj < 0 || tj >= DLP_T_COUNT) {
            gnn_release(m);
            return dlp_fail(err, DLP_ERR_FORMAT, "gnn model: bad target id");
        }
        m->ts[j] = (dlp_target)tj;
    }
    m->edim = (int)v[8];
    m->sdim = (int)v[4];
    dlp_nn_sage_model_cfg c = {(int)v[1], (int)v[2], (int)v[3], (int)v[4],
                               (int)v[5], (int)v[6], (int)v[7],
                               DLP_NN_POOL_MEAN, false};
    m->st_mean = malloc((size_t)m->sdim * sizeof *m->st_mean);
    m->st_std = malloc((size_t)m->sdim * sizeof *m->st_std);
    float ymu[DLP_T_COUNT];
    dlp_status st = DLP_OK;
    if (!m->st_mean || !m->st_std) st = dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    const dlp_nn_entry *me = dlp_nn_file_get(f, "gnn/members", DLP_NN_I64);
    if (me) {   /* optional: an ensemble */
        int64_t nm = me->count == 1 ? *(const int64_t *)me->data : 0;
        if (nm < 1 || nm > GNN_MAX_NETS)
            st = dlp_fail(err, DLP_ERR_FORMAT, "gnn model: bad 'gnn/members'");
        else m->n_net = (int)nm;
    }
    const dlp_nn_entry *pe = dlp_nn_file_get(f, "gnn/pool", DLP_NN_I64);
    if (!st && pe) {   /* optional: the readout of each member, absent: mean */
        for (int k = 0; !st && k < m->n_net; k++) {
            int64_t pl = (int64_t)pe->count == m->n_net ? ((const int64_t *)pe->data)[k] : -1;
            if (pl != DLP_NN_POOL_MEAN && pl != DLP_NN_POOL_MEAN_COST &&
                pl != DLP_NN_POOL_MEAN_LSE)
                st = dlp_fail(err, DLP_ERR_FORMAT, "gnn model: bad 'gnn/pool'");
            else m->pool[k] = (dlp_nn_pool)pl;
        }
    }
    if (!st && !set_members(m, m->n_net)) st = dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    for (int k = 0; !st && k < m->n_net; k++) {
        char pre[24];
        snprintf(pre, sizeof pre, k ? "member%d/" : "param/", k);
        c.pool = m->pool[k];
        st = dlp_nn_sage_model_alloc(&m->net[k], &c, err);
        if (!st) st = dlp_nn_file_read_params_as(f, pre, &m->net[k].params, err);
    }
    if (!st) st = dlp_nn_file_read_f32(f, "gnn/node_mean", m->node_mean, DLP_FEAT_NODE_DIM, err);
    if (!st) st = dlp_nn_file_read_f32(f, "gnn/node_std", m->node_std, DLP_FEAT_NODE_DIM, err);
    if (!st) cat_setup(m);
    if (!st) st = dlp_nn_file_read_f32(f, "gnn/st_mean", m->st_mean, (uint64_t)m->sdim, err);
    if (!st) st = dlp_nn_file_read_f32(f, "gnn/st_std", m->st_std, (uint64_t)m->sdim, err);
    if (!st) st = dlp_nn_file_read_f32(f, "gnn/y_mu", ymu, DLP_T_COUNT, err);
    if (!st) memcpy(m->y_mu, ymu, sizeof ymu);
    if (!st && dlp_nn_file_get(f, "gnn/y_range", DLP_NN_F32)) {  /* optional */
        float r[2 * DLP_T_COUNT];
        st = dlp_nn_file_read_f32(f, "gnn/y_range", r, 2 * DLP_T_COUNT, err);
        for (int t = 0; !st && t < DLP_T_COUNT; t++) {
            m->y_lo[t] = r[t];
            m->y_hi[t] = r[DLP_T_COUNT + t];
        }
        m->has_range = !st;
    }
    if (!st && v[9]) {
        m->prior = malloc((size_t)m->nt * (m->sdim + 1) * sizeof *m->prior);
        if (!m->prior) st = dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
        else st = dlp_nn_file_read_f32(f, "gnn/prior", m->prior,
                                       (uint64_t)m->nt * (m->sdim + 1), err);
        const dlp_nn_entry *pk = dlp_nn_file_get(f, "gnn/prior_kind", DLP_NN_I64);
        float aw[DLP_T_COUNT * NADD];
        if (!st && (!pk || (int)pk->count != m->nt))
            st = dlp_fail(err, DLP_ERR_FORMAT, "gnn model: no 'gnn/prior_kind'");
        if (!st) st = dlp_nn_file_read_f32(f, "gnn/add_w", aw, (uint64_t)m->nt * NADD, err);
        for (int j = 0; !st && j < m->nt; j++) {
            int64_t v2 = ((const int64_t *)pk->data)[j];
            if (v2 != PRIOR_RIDGE && v2 != PRIOR_ADD && v2 != PRIOR_LOGEST)
                st = dlp_fail(err, DLP_ERR_FORMAT, "gnn model: bad prior kind");
            m->pk[j] = (int)v2;
            for (int k = 0; k < NADD; k++) m->add_w[j][k] = aw[j * NADD + k];
        }
        const dlp_nn_entry *no = dlp_nn_file_get(f, "gnn/net_off", DLP_NN_I64);
        if (!st && no && (int)no->count != m->nt)   /* optional */
            st = dlp_fail(err, DLP_ERR_FORMAT, "gnn model: bad 'gnn/net_off'");
        for (int j = 0; !st && no && j < m->nt; j++)
            m->net_off[j] = ((const int64_t *)no->data)[j] != 0;
    }
    if (!st && m->edim) {
        st = dlp_gae_load(&m->gae, f, err);
        if (!st && dlp_gae_dim(m->gae) != m->edim)
            st = dlp_fail(err, DLP_ERR_FORMAT, "gnn model: embedding size mismatch");
    }
    if (!st) st = dlp_optime_load(f, &m->ot, err);
    if (!st) st = dlp_convws_load(f, &m->ws, err);
    if (st) { gnn_release(m); return st; }
    *out = m;
    return DLP_OK;
}

/* Masked Huber on log values: writes d/dpred into dout[n*nt]. */
static double huber_masked(float *dout, const double *pred, const double *y,
                           int n) {
    double loss = 0;
    int cnt = 0;
    for (int i = 0; i < n; i++) cnt += isfinite(y[i]);
    for (int i = 0; i < n; i++) {
        if (!isfinite(y[i])) { dout[i] = 0; continue; }
        double r = pred[i] - y[i], a = fabs(r);
        loss += a <= HUBER_DELTA ? 0.5 * r * r : HUBER_DELTA * (a - 0.5 * HUBER_DELTA);
        double g = a <= HUBER_DELTA ? r : (r > 0 ? HUBER_DELTA : -HUBER_DELTA);
        dout[i] = (float)(cnt ? g / cnt : 0);
    }
    return cnt ? loss / cnt : 0;
}

/* The featurized graphs, configs and embeddings (NULL rows without
 * TraPPM's) of examples idx[0..nb-1]: one batch's inputs. */
static void gather(const gnn *m, const dlp_examples *E, const float *embs,
                   const int32_t *idx, int nb, const dlp_feat_graph **fgs,
                   const dlp_pred_config **cfgs, const float **eb) {
    for (int i = 0; i < nb; i++) {
        const dlp_example *x = &E->ex[idx[i]];
        fgs[i] = &E->fg[x->fg];
        cfgs[i] = &x->cfg;
        eb[i] = embs ? embs + (size_t)x->fg * m->edim : NULL;
    }
}

/* MAPE of every target over idx into mapes[nt] (NAN: no label; batched
 * forward, no grad) of member net, or of the members' average (-1). */
static dlp_status eval_mapes(gnn *m, int net, const dlp_examples *E,
                             const float *embs, const int32_t *idx, int n,
                             int bs, double *mapes, dlp_error *err) {
    dlp_nn_graph g = {0};
    double logy[256 * DLP_T_COUNT], s[DLP_T_COUNT] = {0};
    int c[DLP_T_COUNT] = {0};
    for (int b0 = 0; b0 < n; b0 += bs) {
        int nb = n - b0 < bs ? n - b0 : bs;
        const dlp_feat_graph *fgs[256];
        const dlp_pred_config *cfgs[256];
        const float *eb[256];
        gather(m, E, embs, idx + b0, nb, fgs, cfgs, eb);
        dlp_status st = gnn_forward(m, fgs, cfgs, embs ? eb : NULL, idx + b0,
                                    nb, net, false, &g, logy, err);
        dlp_nn_graph_free(&g);
        if (st) return st;
        for (int i = 0; i < nb; i++)
            for (int j = 0; j < m->nt; j++) {
                double y = E->ex[idx[b0 + i]].y[m->ts[j]];
                if (!(y > 0)) continue;
                s[j] += fabs(exp(logy[i * m->nt + j]) - y) / y;
                c[j]++;
            }
    }
    for (int j = 0; j < m->nt; j++) mapes[j] = c[j] ? s[j] / c[j] : NAN;
    return DLP_OK;
}

/* Keeps the network's residual for target j only where it lowers j's MAPE
 * on idx (the validation part) below the prior's alone: early stopping
 * watches the first target only, and on few held-out families (LLM) the
 * memory residual can undo a good analytic prior. */
static dlp_status gate_net(gnn *m, const dlp_examples *E, const float *embs,
                           const int32_t *idx, int n, dlp_error *err) {
    double with[DLP_T_COUNT], without[DLP_T_COUNT];
    if (!m->prior) return DLP_OK;
    memset(m->net_off, 0, sizeof m->net_off);
    dlp_status st = eval_mapes(m, -1, E, embs, idx, n, 64, with, err);
    if (st) return st;
    memset(m->net_off, 1, sizeof m->net_off);
    st = eval_mapes(m, -1, E, embs, idx, n, 64, without, err);
    if (st) return st;
    for (int j = 0; j < m->nt; j++)
        m->net_off[j] = isfinite(with[j]) && isfinite(without[j]) &&
                        without[j] < with[j];
    return DLP_OK;
}

/* MAPE of the first target over idx (batched forward, no grad) of member
 * net. */
static dlp_status eval_mape(gnn *m, int net, const dlp_examples *E,
                            const float *embs, const int32_t *idx, int n,
                            int bs, double *mape, dlp_error *err) {
    double all[DLP_T_COUNT];
    dlp_status st = eval_mapes(m, net, E, embs, idx, n, bs, all, err);
    if (!st) *mape = all[0];
    return st;
}

/* Seed of ensemble member k: member 0 keeps the caller's seed, so a
 * one-member model is the model trained before ensembles existed. */
static uint64_t member_seed(uint64_t seed, int k) {
    return seed + (uint64_t)k * DLP_MEMBER_SEED_STEP;
}

typedef struct {
    int epochs, bs, patience;
    double lr;
} fit_cfg;

/* One step of the weights' moving average (--ema): a <- a + (1 - d)(w - a),
 * the decay d held at (1 + t) / (10 + t) while that is lower, so that the
 * first steps' weights, far from any minimum, leave the average quickly. */
static void ema_step(nn_real *a, const nn_real *w, size_t n, double decay,
                     long t) {
    double warm = (1.0 + (double)t) / (10.0 + (double)t);
    nn_real r = (nn_real)(1.0 - (decay < warm ? decay : warm));
    for (size_t i = 0; i < n; i++) a[i] += r * (w[i] - a[i]);
}

/* Fits member k: AdamW, cosine LR, masked Huber on log targets,
 * early stopping on the validation MAPE of the first target (vi: the
 * validation part, or the training part when there is none). */
static dlp_status fit_member(gnn *m, int k, const dlp_gnn_arch *a,
                             const dlp_examples *E, const int32_t *tr,
                             int ntr, const int32_t *vi, int nv,
                             const float *embs, const fit_cfg *fc,
                             const dlp_train_opts *o, dlp_error *err) {
    dlp_nn_sage_model *net = &m->net[k];
    int bs = fc->bs;
    int32_t *order = malloc((size_t)ntr * sizeof *order);
    double *logy = malloc((size_t)bs * m->nt * sizeof *logy);
    double *yb = malloc((size_t)bs * m->nt * sizeof *yb);
    float *dout = malloc((size_t)bs * m->nt * sizeof *dout);
    dlp_nn_graph g = {0};
    dlp_nn_early_stop es = {0};
    dlp_status st = DLP_OK;
    /* --ema: the weights' moving average and, while it is validated, the
     * weights themselves */
    size_t nw = net->params.n;
    nn_real *ema = NULL, *held = NULL;
    if (o->ema > 0) {
        ema = malloc((nw ? nw : 1) * sizeof *ema);
        held = malloc((nw ? nw : 1) * sizeof *held);
        if (ema && held) memcpy(ema, net->params.w, nw * sizeof *ema);
    }
    if (!order || !logy || !yb || !dout || (o->ema > 0 && (!ema || !held)))
        st = dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    /* a network loaded to fine-tune (--init-from) has weights only */
    if (!st) st = dlp_nn_params_alloc_grads(&net->params, err);
    if (!st) st = dlp_nn_early_stop_init(&es, &net->params, fc->patience, 1e-4, err);
    dlp_nn_opt opt = dlp_nn_opt_default(DLP_NN_ADAMW, fc->lr);
    opt.weight_decay = 1e-4;
    dlp_nn_rng rng;
    dlp_nn_rng_seed(&rng, member_seed(o->seed, k) ^ 0x9e3779b97f4a7c15ull);
    char label[32];
    if (m->n_net > 1)
        snprintf(label, sizeof label, "%s %d/%d", a->kind, k + 1, m->n_net);
    else
        snprintf(label, sizeof label, "%s", a->kind);
    for (int i = 0; order && i < ntr; i++) order[i] = tr[i];
    int epochs = fc->epochs;
    long steps_per_epoch = (ntr + bs - 1) / bs, step = 0;
    double t0 = dlp_now_s();
    for (int ep = 0; ep < epochs && !st; ep++) {
        dlp_nn_rng_shuffle(&rng, order, ntr);
        double loss_sum = 0;
        int nb_done = 0;
        for (int b0 = 0; b0 < ntr && !st; b0 += bs, step++) {
            int nb = ntr - b0 < bs ? ntr - b0 : bs;
            const dlp_feat_graph *fgs[256];
            const dlp_pred_config *cfgs[256];
            const float *eb[256];
            gather(m, E, embs, order + b0, nb, fgs, cfgs, eb);
            for (int i = 0; i < nb; i++) {
                const dlp_example *x = &E->ex[order[b0 + i]];
                for (int j = 0; j < m->nt; j++) {
                    double y = x->y[m->ts[j]];
                    yb[i * m->nt + j] = y > 0 ? log(y) : NAN;
                }
            }
            dlp_nn_params_zero_grad(&net->params);
            st = gnn_forward(m, fgs, cfgs, embs ? eb : NULL, order + b0, nb,
                             k, true, &g, logy, err);
            if (st) break;
            loss_sum += huber_masked(dout, logy, yb, nb * m->nt);
            nb_done++;
            dlp_nn_sage_model_backward_cat(net, &g, m->x, &m->catv, m->st,
                                           dout);
            dlp_nn_graph_free(&g);
            dlp_nn_clip_grad_norm(&net->params, 5.0);
            opt.lr = dlp_nn_lr_cosine(fc->lr, fc->lr * 0.02, step,
                                      steps_per_epoch * (long)epochs);
            dlp_nn_opt_step(&net->params, &opt);
            if (ema) ema_step(ema, net->params.w, nw, o->ema, step);
        }
        if (st) break;
        double vm = NAN;
        st = eval_mape(m, k, E, embs, vi, nv, 64, &vm, err);
        if (st) break;
        bool on_ema = false;   /* the average validated lower */
        if (ema) {
            double ve = NAN;
            memcpy(held, net->params.w, nw * sizeof *held);
            memcpy(net->params.w, ema, nw * sizeof *ema);
            st = eval_mape(m, k, E, embs, vi, nv, 64, &ve, err);
            if (st) break;
            on_ema = isfinite(ve) && !(ve >= vm);
            if (on_ema) vm = ve;
            else memcpy(net->params.w, held, nw * sizeof *held);
        }
        bool stop = dlp_nn_early_stop_update(&es, &net->params,
                                             isfinite(vm) ? vm : 1e9);
        if (on_ema) memcpy(net->params.w, held, nw * sizeof *held);
        if (o->progress) {
            double el = dlp_now_s() - t0;
            dlp_train_progress pr = {label, ep + 1, epochs,
                                     nb_done ? loss_sum / nb_done : 0, vm, el,
                                     el / (ep + 1) * (epochs - ep - 1)};
            o->progress(o->user, &pr);
        }
        if (stop) break;
    }
    if (!st) dlp_nn_early_stop_restore(&es, &net->params);
    dlp_nn_early_stop_free(&es);
    free(ema);
    free(held);
    dlp_nn_graph_free(&g);
    free(order); free(logy); free(yb); free(dout);
    return st;
}

/* ---- ensemble members trained at once ------------------------------------
 * With --threads T >= 2 and n >= 2 members, P = min(T, n) members train at
 * the same time, each on T / P engine and BLAS threads (the engine's count
 * is process-wide: it is set for the duration and restored). Measured on 2
 * cores (twenty-fifth session, LLM DIPPM hidden 64, 2 epochs): one member
 * on 2 threads 68 s, on 1 thread 80 s; with 2 threads OpenBLAS's idle
 * thread spins in sched_yield (perf: ~30% of the samples) while the
 * engine's own kernels run, so two members side by side on one thread
 * each finish in about the time of one on two. A member's numbers depend
 * only on its seed and its thread count, never on which thread runs it or
 * when, so a given (T, n) trains the same files every time. Each member
 * trains on a shallow copy of the model (a "view") with its own scratch
 * buffers: the shared fields (statistics, priors, embeddings, the member
 * array) are read-only while members train, and member k writes only
 * m->net[k]. */
typedef struct {
    gnn *m;
    const dlp_gnn_arch *a;
    const dlp_examples *E;
    const int32_t *tr, *vi;
    int ntr, nv, hidden;
    const float *embs;
    const fit_cfg *fc;
    const dlp_train_opts *o;       /* the caller's (progress through lock) */
    dlp_train_opts mo;             /* what members see */
    pthread_mutex_t lock;          /* next, progress, the first error */
    int next;
    dlp_status st;
    dlp_error err;
} members_job;

/* k's network: initialized (unless fine-tuning) and fitted on view */
static dlp_status train_member(gnn *view, int k, const members_job *j,
                               const dlp_train_opts *o, dlp_error *err) {
    gnn *m = view;
    dlp_status st = DLP_OK;
    if (!o->init_from) {
        dlp_nn_sage_model_cfg c = {m->n_cols, j->hidden, j->a->n_sage, m->sdim,
                                   j->a->n_fc, j->hidden, m->nt, m->pool[k],
                                   false};
        st = dlp_nn_sage_model_init(&m->net[k], &c, member_seed(o->seed, k),
                                    err);
    }
    if (!st)
        st = fit_member(m, k, j->a, j->E, j->tr, j->ntr, j->vi, j->nv,
                        j->embs, j->fc, o, err);
    return st;
}

static void members_progress(void *user, const dlp_train_progress *p) {
    members_job *j = user;
    pthread_mutex_lock(&j->lock);
    j->o->progress(j->o->user, p);
    pthread_mutex_unlock(&j->lock);
}

static void *members_worker(void *arg) {
    members_job *j = arg;
    gnn view = *j->m;   /* own scratch, the rest shared */
    view.x = view.st = view.out = view.out1 = view.xfull = view.w = NULL;
    view.x_cap = view.st_cap = view.out_cap = view.out1_cap = 0;
    view.xfull_cap = view.w_cap = view.roof_cap = 0;
    view.roof = NULL;
    view.cat = NULL;
    view.cat_cap = 0;
    for (;;) {
        pthread_mutex_lock(&j->lock);
        int k = j->st ? j->m->n_net : j->next++;
        pthread_mutex_unlock(&j->lock);
        if (k >= j->m->n_net) break;
        dlp_error err;
        dlp_status st = train_member(&view, k, j, &j->mo, &err);
        if (st) {
            pthread_mutex_lock(&j->lock);
            if (!j->st) {
                j->st = st;
                j->err = err;
            }
            pthread_mutex_unlock(&j->lock);
        }
    }
    free(view.x); free(view.st); free(view.out); free(view.out1);
    free(view.xfull); free(view.w); free(view.roof); free(view.cat);
    return NULL;
}

/* Trains every member of m: P at once as above, or one after another on
 * the caller's thread count (T = 1, or one member). */
static dlp_status train_members(gnn *m, const dlp_gnn_arch *a,
                                const dlp_examples *E, const int32_t *tr,
                                int ntr, const int32_t *vi, int nv,
                                int hidden, const float *embs,
                                const fit_cfg *fc, const dlp_train_opts *o,
                                dlp_error *err) {
    members_job j = {m, a, E, tr, vi, ntr, nv, hidden, embs, fc, o, *o,
                     PTHREAD_MUTEX_INITIALIZER, 0, DLP_OK, {0}};
    int T = dlp_nn_threads();
    int P = T < m->n_net ? T : m->n_net;
    if (P < 2) {
        dlp_status st = DLP_OK;
        for (int k = 0; k < m->n_net && !st; k++)
            st = train_member(m, k, &j, o, err);
        return st;
    }
    if (o->progress) {
        j.mo.progress = members_progress;
        j.mo.user = &j;
    }
    pthread_t tid[GNN_MAX_NETS];
    bool started[GNN_MAX_NETS] = {false};
    dlp_nn_set_threads(T / P);
    for (int t = 1; t < P; t++)
        started[t] = pthread_create(&tid[t], NULL, members_worker, &j) == 0;
    members_worker(&j);   /* the caller is one of them */
    for (int t = 1; t < P; t++)
        if (started[t]) pthread_join(tid[t], NULL);
    dlp_nn_set_threads(T);
    pthread_mutex_destroy(&j.lock);
    if (j.st && err) *err = j.err;
    return j.st;
}

dlp_status dlp_gnn_train(const dlp_gnn_arch *a, const dlp_examples *E,
                         const int32_t *tr, int ntr, const int32_t *va,
                         int nva, const dlp_train_opts *o,
                         dlp_pred_meta *meta, dlp_nn_file *out,
                         dlp_error *err) {
    dlp_status st = DLP_OK;
    gnn *m = NULL;
    float *embs = NULL;
    int hidden = o->hidden ? o->hidden : 64;
    fit_cfg fc = {o->epochs ? o->epochs : 60,
                  o->graphs_per_batch ? o->graphs_per_batch : 16,
                  o->patience ? o->patience : 12, o->lr > 0 ? o->lr : 2e-3};
    if (fc.bs > 256) fc.bs = 256;
    if (!(o->ema >= 0 && o->ema < 1))
        return dlp_fail(err, DLP_ERR_ARG, "moving-average decay %g: 0 (off) "
                        "to below 1", o->ema);
    if (o->members < 0 || o->members > GNN_MAX_NETS)
        return dlp_fail(err, DLP_ERR_ARG, "%d ensemble members: 1 to %d",
                        o->members, GNN_MAX_NETS);
    int n_readouts = (int)(sizeof READOUT_POOLS / sizeof *READOUT_POOLS);
    if (o->readout < 0 || o->readout >= n_readouts)
        return dlp_fail(err, DLP_ERR_ARG, "readout %d: 0 to %d (DLP_READOUT_*)",
                        o->readout, n_readouts - 1);
    if (o->init_from) {   /* transfer: start from a trained model */
        dlp_nn_file src = {0};
        st = dlp_nn_file_load(&src, o->init_from, err);
        if (!st) st = gnn_from_file(&m, &src, err);
        dlp_nn_file_free(&src);
        if (st) return st;
        if (strcmp(m->kind, a->kind)) {
            gnn_release(m);
            return dlp_fail(err, DLP_ERR_ARG, "cannot fine-tune a %s model as %s",
                            m->kind, a->kind);
        }
        if (!o->lr) fc.lr = 5e-4;
    } else {
        m = gnn_new();
        if (!m) return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
        snprintf(m->kind, sizeof m->kind, "%s", a->kind);
        m->arch = *a;
        m->nt = dlp_mode_targets(E->mode, m->ts);
        if (!set_members(m, o->members ? o->members : 1)) {
            gnn_release(m);
            return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
        }
        for (int k = 0; k < m->n_net; k++)
            m->pool[k] = READOUT_POOLS[o->readout][k % 2];
        if (a->use_gae) {
            if (E->n_pool < 1) {
                gnn_release(m);
                return dlp_fail(err, DLP_ERR_ARG, "%s needs the unlabeled graph "
                                "pool (build examples with the pool)", a->kind);
            }
            st = dlp_gae_pretrain(&m->gae, E->pool, E->n_pool, 32,
                                  o->epochs ? (o->epochs + 1) / 2 : 20,
                                  o->seed, o, err);
            if (st) { gnn_release(m); return st; }
            m->edim = dlp_gae_dim(m->gae);
        }
        m->sdim = DLP_FEAT_STATIC_DIM + m->edim;
        m->st_mean = malloc((size_t)m->sdim * sizeof *m->st_mean);
        m->st_std = malloc((size_t)m->sdim * sizeof *m->st_std);
        if (!m->st_mean || !m->st_std) st = dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    }
    /* inference: the convolutions' and products' times from the
     * operator-time model, in every feature while it trains (a transfer
     * keeps the model it starts from) */
    if (!st && !o->init_from && !o->no_optime)
        st = dlp_optime_examples_fit(E, &m->ot, err);
    else if (!st && m->ot)
        st = dlp_optime_annotate_all(m->ot, E, err);
    /* training: the step's cuDNN workspaces in its memory estimate
     * (docs/COST.md), fitted on the probes of the models it trains on (a
     * transfer keeps the model it starts from) */
    if (!st && !o->init_from && E->mode == DLP_MODE_TRAINING)
        st = dlp_convws_examples_fit(E, tr, ntr, va, nva, &m->ws, err);
    if (!st) st = dlp_convws_examples_annotate(m->ws, E, err);
    if (!st) st = embed_all(m, E, &embs, err);
    if (!st && !o->init_from) st = set_stats(m, E, tr, ntr, embs, err);
    if (!st && !o->init_from && !o->no_prior)
        st = fit_prior(m, E, tr, ntr, va, nva, embs, err);
    const int32_t *vi = nva ? va : tr;
    int nv = nva ? nva : ntr;
    if (!st && o->input_bytes >= 0)
        inputs_derive(m, E, tr, ntr, vi, nv, embs,
                      o->input_bytes ? (size_t)o->input_bytes : INPUTS_BUDGET);
    if (!st)
        st = train_members(m, a, E, tr, ntr, vi, nv, hidden, embs, &fc, o,
                           err);
    if (!st && !o->init_from) st = gate_net(m, E, embs, vi, nv, err);
    inputs_free(m->in);
    m->in = NULL;
    if (!st) {
        for (int j = 0; j < m->nt; j++) meta->targets |= 1u << m->ts[j];
        st = gnn_save(m, out, err);
    }
    dlp_optime_examples_clear(E);
    dlp_convws_examples_clear(E);
    free(embs);
    gnn_release(m);
    return st;
}

/* ---- the predictor side -------------------------------------------------- */
dlp_status dlp_gnn_load(dlp_predictor *p, const dlp_nn_file *f,
                        dlp_error *err) {
    gnn *m;
    dlp_status st = gnn_from_file(&m, f, err);
    if (st) return st;
    if (strcmp(m->kind, p->meta.kind)) {
        gnn_release(m);
        return dlp_fail(err, DLP_ERR_FORMAT, "model file says kind '%s' but "
                        "holds a '%s' network", p->meta.kind, m->kind);
    }
    p->impl = m;
    return DLP_OK;
}

dlp_status dlp_gnn_predict(const dlp_predictor *p, const dlp_pred_input *in,
                           dlp_pred_result *out, dlp_error *err) {
    gnn *m = p->impl;
    dlp_feat_graph local;
    const dlp_feat_graph *fg;
    dlp_feat_graph view;   /* with the operator times it was trained on */
    float *eff;
    dlp_status st = dlp_optime_pred_feat(m->ot, in, &local, &fg, &view, &eff,
                                         out, err);
    if (st) return st;
    /* a training step's memory estimate with its workspaces (wview is
     * view, shared, whatever it answers) */
    dlp_feat_graph wview;
    st = dlp_convws_train_view(m->ws, &view, in->cfg, &wview, err);
    const dlp_feat_graph *vg = &wview;
    float emb[MAX_EMB];
    const float *eb[1] = {emb};
    gnn_scratch *sc = scratch_get();
    if (!st && m->edim) {
        if (sc) dlp_gae_swap_ws(m->gae, &sc->ws, &sc->ws_cap);
        st = dlp_gae_embed(m->gae, vg, emb, err);
        if (sc) dlp_gae_swap_ws(m->gae, &sc->ws, &sc->ws_cap);
    }
    double logy[DLP_T_COUNT];
    dlp_nn_graph g = {0};
    if (sc) {
        swap_f(&m->x, &m->x_cap, &sc->x, &sc->x_cap);
        swap_r(&m->net[0].ws, &m->net[0].ws_cap, &sc->ws, &sc->ws_cap);
    }
    if (!st) st = gnn_forward(m, &vg, &in->cfg, m->edim ? eb : NULL, NULL, 1, -1,
                              false, &g, logy, err);
    if (sc) {
        swap_f(&m->x, &m->x_cap, &sc->x, &sc->x_cap);
        swap_r(&m->net[0].ws, &m->net[0].ws_cap, &sc->ws, &sc->ws_cap);
    }
    dlp_nn_graph_free(&g);
    free(eff);
    if (fg == &local) dlp_feat_graph_free(&local);
    if (st) return st;
    for (int j = 0; j < m->nt; j++) {
        double z = logy[j];
        if (z > 60) z = 60;
        if (z < -60) z = -60;
        out->v[m->ts[j]].valid = true;
        out->v[m->ts[j]].value = exp(z);
    }
    return DLP_OK;
}

void dlp_gnn_free(dlp_predictor *p) {
    gnn_release(p->impl);
    p->impl = NULL;
}
