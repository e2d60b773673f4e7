/*
 * test_nn_grad.c — finite-difference gradient checks for every layer and
 * loss of src/nn, in double precision: this translation unit compiles the
 * engine itself with -DDLP_NN_DOUBLE semantics by #including its .c files
 * (so nn_real is double here and nothing of src/nn is taken from
 * libdlperf.a). Each check compares the analytic gradient of
 * L = sum(out .* R) (R random) with central differences, on a batch holding
 * a hub node with 300 in-neighbours, isolated nodes, self-loops, a duplicate
 * edge, a chain, a one-node graph and an empty graph.
 */
#define DLP_NN_DOUBLE 1
#include "nn/nn_rng.c"
#include "nn/nn_thread.c"
#include "nn/nn_graph.c"
#include "nn/nn_params.c"
#include "nn/nn_linear.c"
#include "nn/nn_aggregate.c"
#include "nn/nn_sage.c"
#include "nn/nn_gcn.c"
#include "nn/nn_gin.c"
#include "nn/nn_gat.c"
#include "nn/nn_lstm.c"
#include "nn/nn_norm.c"
#include "nn/nn_act.c"
#include "nn/nn_exp.c"
#include "nn/nn_pool.c"
#include "nn/nn_loss.c"
#include "nn/nn_edge.c"
#include "nn/nn_optim.c"
#include "nn/nn_file.c"
#include "nn/nn_sage_model.c"
#include "nn/nn_mask.c"

#include "check.h"

_Static_assert(sizeof(nn_real) == sizeof(double), "gradcheck runs in double");

/* ---- fixtures ---------------------------------------------------------- */
static dlp_nn_graph G;      /* the test batch */
static dlp_nn_rng RNG;

static void build_graph(void) {
    /* graph 0: 330 nodes; hub 0 <- 1..300; random edges among 1..320;
     * loops at 5 and 7; duplicate 2->3; 321..329 isolated */
    static int32_t s0[1000], d0[1000];
    int e = 0;
    for (int j = 1; j <= 300; j++) { s0[e] = j; d0[e] = 0; e++; }
    dlp_nn_rng r;
    dlp_nn_rng_seed(&r, 7);
    for (int k = 0; k < 400; k++) {
        s0[e] = 1 + (int)dlp_nn_rng_below(&r, 320);
        d0[e] = 1 + (int)dlp_nn_rng_below(&r, 320);
        e++;
    }
    s0[e] = 5; d0[e] = 5; e++;
    s0[e] = 7; d0[e] = 7; e++;
    s0[e] = 2; d0[e] = 3; e++;
    s0[e] = 2; d0[e] = 3; e++;
    s0[e] = 0; d0[e] = 9; e++;
    static int32_t s1[] = {0, 1, 2, 3}, d1[] = {1, 2, 3, 4};
    dlp_nn_graph_desc gd[4] = {
        {330, e, s0, d0, NULL}, {5, 4, s1, d1, NULL}, {1, 0, NULL, NULL, NULL},
        {0, 0, NULL, NULL, NULL}};
    dlp_error err;
    DLP_ASSERT(dlp_nn_graph_build(&G, gd, NULL, 4, 0, &err) == DLP_OK);
    /* cost-readout weights: positive, summing to 1 over each graph */
    static float w[336];
    for (int gi = 0; gi < G.n_graphs; gi++) {
        double sum = 0;
        for (int n = G.graph_ptr[gi]; n < G.graph_ptr[gi + 1]; n++)
            sum += w[n] = (float)(0.1 + dlp_nn_rng_below(&r, 100));
        for (int n = G.graph_ptr[gi]; n < G.graph_ptr[gi + 1]; n++)
            w[n] = (float)(w[n] / sum);
    }
    G.node_w = w;
}

static nn_real *rnd(size_t n, double scale) {
    nn_real *a = malloc((n ? n : 1) * sizeof *a);
    DLP_ASSERT(a);
    for (size_t k = 0; k < n; k++) a[k] = (nn_real)(scale * dlp_nn_rng_normal(&RNG));
    return a;
}
static nn_real *zeros(size_t n) {
    nn_real *a = calloc(n ? n : 1, sizeof *a);
    DLP_ASSERT(a);
    return a;
}
static double dot(const nn_real *a, const nn_real *b, size_t n) {
    double s = 0;
    for (size_t k = 0; k < n; k++) s += a[k] * b[k];
    return s;
}

/* Central differences of f over up to 150 sampled elements of a[n]; every
 * sample must satisfy |ga - gn| <= 1e-6 + 1e-5 |gn|. */
typedef double (*gc_fn)(void *ctx);
static double gc_worst(gc_fn f, void *ctx, nn_real *a, const nn_real *ga,
                       size_t n, size_t *worst_k) {
    const double h = 1e-5;
    size_t step = n > 150 ? n / 150 : 1;
    double worst = 0;
    *worst_k = 0;
    for (size_t k = 0; k < n; k += step) {
        nn_real keep = a[k];
        a[k] = keep + h;
        double fp = f(ctx);
        a[k] = keep - h;
        double fm = f(ctx);
        a[k] = keep;
        double gn = (fp - fm) / (2 * h);
        double e = fabs(ga[k] - gn) / (1e-6 + 1e-5 * fabs(gn));
        if (!(e <= worst)) { worst = e; *worst_k = k; }
    }
    return worst;
}
#define gc_check(f, ctx, a, ga, n, what)                                     \
    do {                                                                     \
        size_t wk_;                                                          \
        double w_ = gc_worst(f, ctx, a, ga, n, &wk_);                        \
        CHECK_MSG(w_ <= 1.0, "%s: element %zu off by %.3g x tolerance",      \
                  what, wk_, w_);                                            \
    } while (0)

/* ---- linear -------------------------------------------------------------- */
typedef struct { nn_real *x, *W, *b, *R, *out; int N, I, O; } lin_ctx;
static double lin_f(void *v) {
    lin_ctx *c = v;
    dlp_nn_linear_forward(c->out, c->x, c->W, c->b, c->N, c->I, c->O);
    return dot(c->out, c->R, (size_t)c->N * c->O);
}
static void test_linear(void) {
    lin_ctx c = {.N = 7, .I = 5, .O = 3};
    c.x = rnd(35, 1); c.W = rnd(15, 1); c.b = rnd(3, 1); c.R = rnd(21, 1); c.out = zeros(21);
    nn_real *dx = zeros(35), *dW = zeros(15), *db = zeros(3);
    lin_f(&c);
    dlp_nn_linear_backward(dx, dW, db, c.R, c.x, c.W, c.N, c.I, c.O);
    gc_check(lin_f, &c, c.x, dx, 35, "linear dx");
    gc_check(lin_f, &c, c.W, dW, 15, "linear dW");
    gc_check(lin_f, &c, c.b, db, 3, "linear db");
    free(c.x); free(c.W); free(c.b); free(c.R); free(c.out); free(dx); free(dW); free(db);
}

/* ---- SAGE ---------------------------------------------------------------- */
typedef struct { nn_real *x, *Wl, *bl, *Wr, *R, *out, *agg, *pre, *nrm; dlp_nn_sage_cfg c; } sage_ctx;
static double sage_f(void *v) {
    sage_ctx *c = v;
    dlp_nn_sage_forward(c->out, c->agg, c->pre, c->nrm, c->x, c->Wl, c->bl, c->Wr, &G, c->c);
    return dot(c->out, c->R, (size_t)G.n_nodes * c->c.O);
}
static void sage_case(bool normalize) {
    const int N = G.n_nodes, I = 4, O = 3;
    sage_ctx c = {.c = {I, O, normalize}};
    c.x = rnd((size_t)N * I, 1); c.Wl = rnd(O * I, 0.5); c.bl = rnd(O, 0.5);
    c.Wr = rnd(O * I, 0.5); c.R = rnd((size_t)N * O, 1); c.out = zeros((size_t)N * O);
    c.agg = zeros((size_t)N * I); c.pre = zeros((size_t)N * O); c.nrm = zeros(N);
    nn_real *dx = zeros((size_t)N * I), *dWl = zeros(O * I), *dbl = zeros(O),
            *dWr = zeros(O * I), *w1 = zeros((size_t)N * I), *w2 = zeros((size_t)N * O);
    sage_f(&c);
    dlp_nn_sage_backward(dx, dWl, dbl, dWr, w1, w2, c.R, c.out, c.agg, c.nrm, c.x, c.Wl,
                         c.Wr, &G, c.c);
    gc_check(sage_f, &c, c.x, dx, (size_t)N * I, "sage dx");
    gc_check(sage_f, &c, c.x + 0, dx + 0, 4, "sage dx hub");
    gc_check(sage_f, &c, c.Wl, dWl, O * I, "sage dWl");
    gc_check(sage_f, &c, c.bl, dbl, O, "sage dbl");
    gc_check(sage_f, &c, c.Wr, dWr, O * I, "sage dWr");
    free(c.x); free(c.Wl); free(c.bl); free(c.Wr); free(c.R); free(c.out); free(c.agg);
    free(c.pre); free(c.nrm); free(dx); free(dWl); free(dbl); free(dWr); free(w1); free(w2);
}
static void test_sage(void) { sage_case(false); }
static void test_sage_normalize(void) { sage_case(true); }

/* ---- GCN ----------------------------------------------------------------- */
typedef struct { nn_real *x, *W, *b, *R, *out, *h; int I, O; } gcn_ctx;
static double gcn_f(void *v) {
    gcn_ctx *c = v;
    dlp_nn_gcn_forward(c->out, c->h, c->x, c->W, c->b, &G, c->I, c->O);
    return dot(c->out, c->R, (size_t)G.n_nodes * c->O);
}
static void test_gcn(void) {
    const int N = G.n_nodes, I = 4, O = 3;
    gcn_ctx c = {.I = I, .O = O};
    c.x = rnd((size_t)N * I, 1); c.W = rnd(O * I, 0.5); c.b = rnd(O, 0.5);
    c.R = rnd((size_t)N * O, 1); c.out = zeros((size_t)N * O); c.h = zeros((size_t)N * O);
    nn_real *dx = zeros((size_t)N * I), *dW = zeros(O * I), *db = zeros(O), *ws = zeros((size_t)N * O);
    gcn_f(&c);
    dlp_nn_gcn_backward(dx, dW, db, ws, c.R, c.x, c.W, &G, I, O);
    gc_check(gcn_f, &c, c.x, dx, (size_t)N * I, "gcn dx");
    gc_check(gcn_f, &c, c.W, dW, O * I, "gcn dW");
    gc_check(gcn_f, &c, c.b, db, O, "gcn db");
    free(c.x); free(c.W); free(c.b); free(c.R); free(c.out); free(c.h); free(dx); free(dW);
    free(db); free(ws);
}

/* ---- GIN with a 2-layer MLP ------------------------------------------------ */
typedef struct { nn_real *x, eps, *W1, *b1, *W2, *b2, *R, *z, *u, *r, *out; int F, Hh, O; } gin_ctx;
static double gin_f(void *v) {
    gin_ctx *c = v;
    int N = G.n_nodes;
    dlp_nn_gin_forward(c->z, c->x, c->eps, &G, c->F);
    dlp_nn_linear_forward(c->u, c->z, c->W1, c->b1, N, c->F, c->Hh);
    dlp_nn_act_forward(c->r, c->u, (size_t)N * c->Hh, DLP_NN_RELU, 0);
    dlp_nn_linear_forward(c->out, c->r, c->W2, c->b2, N, c->Hh, c->O);
    return dot(c->out, c->R, (size_t)N * c->O);
}
static void test_gin(void) {
    const int N = G.n_nodes, F = 3, Hh = 5, O = 2;
    gin_ctx c = {.F = F, .Hh = Hh, .O = O, .eps = 0.3};
    c.x = rnd((size_t)N * F, 1); c.W1 = rnd(Hh * F, 0.5); c.b1 = rnd(Hh, 0.5);
    c.W2 = rnd(O * Hh, 0.5); c.b2 = rnd(O, 0.5); c.R = rnd((size_t)N * O, 1);
    c.z = zeros((size_t)N * F); c.u = zeros((size_t)N * Hh); c.r = zeros((size_t)N * Hh);
    c.out = zeros((size_t)N * O);
    nn_real *dx = zeros((size_t)N * F), deps = 0, *dW1 = zeros(Hh * F), *db1 = zeros(Hh),
            *dW2 = zeros(O * Hh), *db2 = zeros(O), *dr = zeros((size_t)N * Hh),
            *du = zeros((size_t)N * Hh), *dz = zeros((size_t)N * F);
    gin_f(&c);
    dlp_nn_linear_backward(dr, dW2, db2, c.R, c.r, c.W2, N, Hh, O);
    dlp_nn_act_backward(du, dr, c.u, c.r, (size_t)N * Hh, DLP_NN_RELU, 0);
    dlp_nn_linear_backward(dz, dW1, db1, du, c.z, c.W1, N, F, Hh);
    dlp_nn_gin_backward(dx, &deps, dz, c.x, c.eps, &G, F);
    gc_check(gin_f, &c, c.x, dx, (size_t)N * F, "gin dx");
    gc_check(gin_f, &c, &c.eps, &deps, 1, "gin deps");
    gc_check(gin_f, &c, c.W1, dW1, Hh * F, "gin dW1");
    gc_check(gin_f, &c, c.b2, db2, O, "gin db2");
    free(c.x); free(c.W1); free(c.b1); free(c.W2); free(c.b2); free(c.R); free(c.z);
    free(c.u); free(c.r); free(c.out); free(dx); free(dW1); free(db1); free(dW2); free(db2);
    free(dr); free(du); free(dz);
}

/* ---- GAT ----------------------------------------------------------------- */
typedef struct { nn_real *x, *W, *as_, *ad_, *b, *ae, *R, *out; dlp_nn_gat_saved s; dlp_nn_gat_cfg c; } gat_ctx;
static double gat_f(void *v) {
    gat_ctx *c = v;
    dlp_nn_rng r;
    dlp_nn_rng_seed(&r, 99); /* the same dropout mask on every call */
    dlp_nn_gat_forward(c->out, c->s, c->x, c->W, c->as_, c->ad_, c->b, c->ae, &G, c->c, &r);
    return dot(c->out, c->R, (size_t)G.n_nodes * dlp_nn_gat_out_dim(c->c));
}
static void gat_case(bool concat, double dropout, bool edge_logits) {
    const int N = G.n_nodes, E = G.n_edges, I = 3, C = 2, H = 2;
    gat_ctx c = {.c = {I, C, H, concat, 0.2, dropout}};
    int OD = dlp_nn_gat_out_dim(c.c);
    c.x = rnd((size_t)N * I, 1); c.W = rnd(H * C * I, 0.7); c.as_ = rnd(H * C, 0.7);
    c.ad_ = rnd(H * C, 0.7); c.b = rnd(OD, 0.5); c.R = rnd((size_t)N * OD, 1);
    c.out = zeros((size_t)N * OD);
    c.s.h = zeros((size_t)N * H * C); c.s.as = zeros((size_t)N * H); c.s.ad = zeros((size_t)N * H);
    c.s.alpha = zeros(((size_t)E + N) * H); c.s.mask = zeros(((size_t)E + N) * H);
    c.ae = edge_logits ? rnd(((size_t)E + N) * H, 1) : NULL;
    nn_real *dae = zeros(((size_t)E + N) * H);
    nn_real *dx = zeros((size_t)N * I), *dW = zeros(H * C * I), *das = zeros(H * C),
            *dad = zeros(H * C), *db = zeros(OD), *dh = zeros((size_t)N * H * C),
            *de = zeros(((size_t)E + 3 * N) * H);
    gat_f(&c);
    dlp_nn_gat_backward(dx, dW, das, dad, db, edge_logits ? dae : NULL, dh, de, c.R, c.s, c.x,
                        c.W, c.as_, c.ad_, c.ae, &G, c.c);
    if (edge_logits) gc_check(gat_f, &c, c.ae, dae, ((size_t)E + N) * H, "gat dae");
    gc_check(gat_f, &c, c.x, dx, (size_t)N * I, "gat dx");
    gc_check(gat_f, &c, c.W, dW, H * C * I, "gat dW");
    gc_check(gat_f, &c, c.as_, das, H * C, "gat datt_src");
    gc_check(gat_f, &c, c.ad_, dad, H * C, "gat datt_dst");
    gc_check(gat_f, &c, c.b, db, OD, "gat dbias");
    /* softmax: every node's attention (incl. its self-loop) sums to 1 */
    double worst = 0;
    for (int i = 0; i < N; i++)
        for (int h = 0; h < H; h++) {
            double s = c.s.alpha[((size_t)E + i) * H + h];
            for (int p = G.in_ptr[i]; p < G.in_ptr[i + 1]; p++) s += c.s.alpha[(size_t)p * H + h];
            worst = fmax(worst, fabs(s - 1));
        }
    CHECK(worst < 1e-12);
    free(c.x); free(c.W); free(c.as_); free(c.ad_); free(c.b); free(c.R); free(c.out);
    free(c.s.h); free(c.s.as); free(c.s.ad); free(c.s.alpha); free(c.s.mask);
    free(dx); free(dW); free(das); free(dad); free(db); free(dh); free(de);
    free(c.ae); free(dae);
}
static void test_gat_concat(void) { gat_case(true, 0, false); }
static void test_gat_mean_dropout(void) { gat_case(false, 0.3, false); }
static void test_gat_edge_logits(void) { gat_case(true, 0.2, true); }

/* ---- LSTM over edge pairs ----------------------------------------------------- */
typedef struct { nn_real *x, *xe, *Wih, *Whh, *bih, *bhh, *hs, *cs, *gates, *R; int F, Hd; } lstm_ctx;
static double lstm_f(void *v) {
    lstm_ctx *c = v;
    int E = G.n_edges;
    dlp_nn_edge_pairs_forward(c->xe, c->x, &G, c->F);
    dlp_nn_lstm_forward(c->hs, c->cs, c->gates, c->xe, c->Wih, c->Whh, c->bih, c->bhh, 2, E,
                        c->F, c->Hd);
    return dot(c->hs, c->R, (size_t)2 * E * c->Hd);
}
static void test_lstm(void) {
    const int N = G.n_nodes, E = G.n_edges, F = 3, Hd = 4;
    lstm_ctx c = {.F = F, .Hd = Hd};
    c.x = rnd((size_t)N * F, 1); c.xe = zeros((size_t)2 * E * F);
    c.Wih = rnd(4 * Hd * F, 0.5); c.Whh = rnd(4 * Hd * Hd, 0.5);
    c.bih = rnd(4 * Hd, 0.5); c.bhh = rnd(4 * Hd, 0.5);
    c.hs = zeros((size_t)2 * E * Hd); c.cs = zeros((size_t)2 * E * Hd);
    c.gates = zeros((size_t)2 * E * 4 * Hd); c.R = rnd((size_t)2 * E * Hd, 1);
    nn_real *dx = zeros((size_t)N * F), *dxe = zeros((size_t)2 * E * F),
            *dWih = zeros(4 * Hd * F), *dWhh = zeros(4 * Hd * Hd), *dbih = zeros(4 * Hd),
            *dbhh = zeros(4 * Hd), *ws = zeros((size_t)6 * E * Hd);
    lstm_f(&c);
    dlp_nn_lstm_backward(dxe, dWih, dWhh, dbih, dbhh, ws, c.R, c.hs, c.cs, c.gates, c.xe,
                         c.Wih, c.Whh, 2, E, F, Hd);
    dlp_nn_edge_pairs_backward(dx, dxe, &G, F);
    gc_check(lstm_f, &c, c.x, dx, (size_t)N * F, "lstm dx");
    gc_check(lstm_f, &c, c.Wih, dWih, 4 * Hd * F, "lstm dWih");
    gc_check(lstm_f, &c, c.Whh, dWhh, 4 * Hd * Hd, "lstm dWhh");
    gc_check(lstm_f, &c, c.bih, dbih, 4 * Hd, "lstm dbih");
    gc_check(lstm_f, &c, c.bhh, dbhh, 4 * Hd, "lstm dbhh");
    free(c.x); free(c.xe); free(c.Wih); free(c.Whh); free(c.bih); free(c.bhh); free(c.hs);
    free(c.cs); free(c.gates); free(c.R); free(dx); free(dxe); free(dWih); free(dWhh);
    free(dbih); free(dbhh); free(ws);
}

/* ---- norms ---------------------------------------------------------------- */
typedef struct { nn_real *x, *g, *b, *R, *out, *mean, *rstd, *rm, *rv; int N, C, kind; bool train; } norm_ctx;
static double norm_f(void *v) {
    norm_ctx *c = v;
    if (c->kind == 0) {
        for (int k = 0; k < c->C; k++) { c->rm[k] = 0.1 * k; c->rv[k] = 1 + 0.2 * k; }
        dlp_nn_batchnorm_forward(c->out, c->mean, c->rstd, c->x, c->g, c->b, c->rm, c->rv,
                                 c->train, 0.1, 1e-5, c->N, c->C);
    } else if (c->kind == 1) {
        dlp_nn_layernorm_forward(c->out, c->mean, c->rstd, c->x, c->g, c->b, 1e-5, c->N, c->C);
    } else {
        dlp_nn_graphsizenorm_forward(c->out, c->x, &G, c->C);
    }
    return dot(c->out, c->R, (size_t)c->N * c->C);
}
static void norm_case(int kind, bool train) {
    int N = kind == 2 ? G.n_nodes : 9, C = 4;
    norm_ctx c = {.N = N, .C = C, .kind = kind, .train = train};
    c.x = rnd((size_t)N * C, 1); c.g = rnd(C, 1); c.b = rnd(C, 1); c.R = rnd((size_t)N * C, 1);
    c.out = zeros((size_t)N * C); c.mean = zeros(N); c.rstd = zeros(N);
    c.rm = zeros(C); c.rv = zeros(C);
    nn_real *dx = zeros((size_t)N * C), *dg = zeros(C), *db = zeros(C);
    norm_f(&c);
    if (kind == 0)
        dlp_nn_batchnorm_backward(dx, dg, db, c.R, c.x, c.mean, c.rstd, c.g, train, N, C);
    else if (kind == 1)
        dlp_nn_layernorm_backward(dx, dg, db, c.R, c.x, c.mean, c.rstd, c.g, N, C);
    else
        dlp_nn_graphsizenorm_backward(dx, c.R, &G, C);
    gc_check(norm_f, &c, c.x, dx, (size_t)N * C, "norm dx");
    if (kind < 2) {
        gc_check(norm_f, &c, c.g, dg, C, "norm dgamma");
        gc_check(norm_f, &c, c.b, db, C, "norm dbeta");
    }
    free(c.x); free(c.g); free(c.b); free(c.R); free(c.out); free(c.mean); free(c.rstd);
    free(c.rm); free(c.rv); free(dx); free(dg); free(db);
}
static void test_batchnorm_train(void) { norm_case(0, true); }
static void test_batchnorm_eval(void) { norm_case(0, false); }
static void test_layernorm(void) { norm_case(1, false); }
static void test_graphsizenorm(void) { norm_case(2, false); }

/* ---- activations, PReLU, dropout ---------------------------------------------------- */
typedef struct { nn_real *x, *a, *R, *out, *mask; size_t n; int act, np, C; } act_ctx;
static double act_f(void *v) {
    act_ctx *c = v;
    if (c->act >= 0) {
        dlp_nn_act_forward(c->out, c->x, c->n, (dlp_nn_act)c->act, c->act == DLP_NN_ELU ? 1.3 : 0.1);
    } else if (c->act == -1) {
        dlp_nn_prelu_forward(c->out, c->x, c->a, c->np, (int)(c->n / c->C), c->C);
    } else {
        dlp_nn_rng r;
        dlp_nn_rng_seed(&r, 5);
        dlp_nn_dropout_forward(c->out, c->mask, c->x, c->n, 0.4, &r);
    }
    return dot(c->out, c->R, c->n);
}
static void test_activations(void) {
    for (int a = -3; a <= DLP_NN_TANH; a++) {
        act_ctx c = {.n = 60, .act = a < -2 ? -1 : a, .np = a == -3 ? 1 : 4, .C = 4};
        if (a == -2) c.act = -1;           /* PReLU per channel */
        if (a == -1) c.act = -2;           /* dropout */
        c.x = rnd(60, 1.5); c.a = rnd(4, 0.3); c.R = rnd(60, 1); c.out = zeros(60); c.mask = zeros(60);
        nn_real *dx = zeros(60), *da = zeros(4);
        act_f(&c);
        if (c.act >= 0)
            dlp_nn_act_backward(dx, c.R, c.x, c.out, 60, (dlp_nn_act)c.act, c.act == DLP_NN_ELU ? 1.3 : 0.1);
        else if (c.act == -1)
            dlp_nn_prelu_backward(dx, da, c.R, c.x, c.a, c.np, 15, 4);
        else
            dlp_nn_dropout_backward(dx, c.R, c.mask, 60);
        char what[32];
        snprintf(what, sizeof what, "activation %d dx", a);
        gc_check(act_f, &c, c.x, dx, 60, what);
        if (c.act == -1) gc_check(act_f, &c, c.a, da, (size_t)c.np, "prelu da");
        free(c.x); free(c.a); free(c.R); free(c.out); free(c.mask); free(dx); free(da);
    }
}

/* ---- pooling and concat ----------------------------------------------------- */
typedef struct { nn_real *x, *R, *out; int32_t *arg; int F; dlp_nn_pool p; } pool_ctx;
static double pool_f(void *v) {
    pool_ctx *c = v;
    dlp_nn_pool_forward(c->out, c->arg, c->x, &G, c->F, c->p);
    return dot(c->out, c->R, (size_t)G.n_graphs * dlp_nn_pool_dim(c->p, c->F));
}
static void test_pooling(void) {
    for (int p = 0; p <= DLP_NN_POOL_LAST; p++) {
        /* pools added later draw from a copy of the generator, so the
         * tests after this one keep the inputs they were written with */
        dlp_nn_rng keep_rng = RNG;
        const int N = G.n_nodes, F = 3, P = dlp_nn_pool_dim((dlp_nn_pool)p, F);
        pool_ctx c = {.F = F, .p = (dlp_nn_pool)p};
        c.x = rnd((size_t)N * F, 1); c.R = rnd((size_t)G.n_graphs * P, 1);
        c.out = zeros((size_t)G.n_graphs * P);
        c.arg = malloc((size_t)G.n_graphs * F * sizeof *c.arg);
        nn_real *dx = zeros((size_t)N * F);
        pool_f(&c);
        dlp_nn_pool_backward(dx, c.R, c.arg, &G, F, c.p, c.x, c.out);
        gc_check(pool_f, &c, c.x, dx, (size_t)N * F, "pool dx");
        for (int k = 0; k < P; k++)   /* the empty graph pools to 0 */
            CHECK(c.out[3 * P + k] == 0);
        if (p == DLP_NN_POOL_MEAN_COST) {   /* graph 1 (5 nodes) by hand */
            int a = G.graph_ptr[1];
            for (int f = 0; f < F; f++) {
                double m = 0, wm = 0;
                for (int n = a; n < a + 5; n++) {
                    m += c.x[(size_t)n * F + f] / 5;
                    wm += G.node_w[n] * c.x[(size_t)n * F + f];
                }
                CHECK(fabs(c.out[P + f] - m) < 1e-5 &&
                      fabs(c.out[P + F + f] - wm) < 1e-5);
            }
        }
        if (p == DLP_NN_POOL_MEAN_LSE) {   /* graph 1 by hand, in double */
            int a = G.graph_ptr[1];
            for (int f = 0; f < F; f++) {
                double m = 0, s = 0;
                for (int n = a; n < a + 5; n++) {
                    m += c.x[(size_t)n * F + f] / 5;
                    s += G.node_w[n] * exp((double)c.x[(size_t)n * F + f]);
                }
                CHECK(fabs(c.out[P + f] - m) < 1e-5 &&
                      fabs(c.out[P + F + f] - log(s)) < 1e-5);
            }
            /* no overflow where exp(x) would: x + 1000 pools to lse + 1000 */
            nn_real keep[5 * 3];
            for (int k = 0; k < 5 * F; k++) {
                keep[k] = c.x[(size_t)a * F + k];
                c.x[(size_t)a * F + k] += 1000;
            }
            nn_real before = c.out[P + F];
            pool_f(&c);
            CHECK(isfinite(c.out[P + F]) && fabs(c.out[P + F] - before - 1000) < 1e-2);
            for (int k = 0; k < 5 * F; k++) c.x[(size_t)a * F + k] = keep[k];
        }
        free(c.x); free(c.R); free(c.out); free(c.arg); free(dx);
        if (p > DLP_NN_POOL_MEAN_COST) RNG = keep_rng;
    }
    CHECK(dlp_nn_pool_dim(DLP_NN_POOL_MEAN, 7) == 7 &&
          dlp_nn_pool_dim(DLP_NN_POOL_MEAN_COST, 7) == 14 &&
          dlp_nn_pool_dim(DLP_NN_POOL_MEAN_LSE, 7) == 14);
    CHECK(dlp_nn_pool_weighted(DLP_NN_POOL_MEAN_LSE) &&
          dlp_nn_pool_weighted(DLP_NN_POOL_MEAN_COST) &&
          !dlp_nn_pool_weighted(DLP_NN_POOL_MEAN));
}
typedef struct { nn_real *a, *b, *R, *out; } cat_ctx;
static double cat_f(void *v) {
    cat_ctx *c = v;
    dlp_nn_concat_forward(c->out, c->a, c->b, 4, 3, 2);
    return dot(c->out, c->R, 20);
}
static void test_concat(void) {
    cat_ctx c = {rnd(12, 1), rnd(8, 1), rnd(20, 1), zeros(20)};
    nn_real *da = zeros(12), *db = zeros(8);
    cat_f(&c);
    dlp_nn_concat_backward(da, db, c.R, 4, 3, 2);
    gc_check(cat_f, &c, c.a, da, 12, "concat da");
    gc_check(cat_f, &c, c.b, db, 8, "concat db");
    free(c.a); free(c.b); free(c.R); free(c.out); free(da); free(db);
}

/* ---- edge decoder ---------------------------------------------------------- */
typedef struct { nn_real *z, *R, *s; int32_t *src, *dst; int K, F; } ed_ctx;
static double ed_f(void *v) {
    ed_ctx *c = v;
    dlp_nn_edge_dot_forward(c->s, c->z, c->src, c->dst, c->K, c->F);
    return dot(c->s, c->R, (size_t)c->K);
}
static void test_edge_decoder(void) {
    ed_ctx c = {.K = 40, .F = 3};
    c.z = rnd((size_t)G.n_nodes * 3, 1); c.R = rnd(40, 1); c.s = zeros(40);
    c.src = malloc(40 * sizeof(int32_t)); c.dst = malloc(40 * sizeof(int32_t));
    dlp_nn_rng r;
    dlp_nn_rng_seed(&r, 3);
    CHECK(dlp_nn_negative_sample(c.src, c.dst, 40, &G, &r) == 40);
    for (int k = 0; k < 40; k++) {
        CHECK(c.src[k] != c.dst[k]);
        CHECK(G.node_graph[c.src[k]] == G.node_graph[c.dst[k]]);
    }
    c.src[0] = 5; c.dst[0] = 5; /* a loop pair differentiates twice */
    nn_real *dz = zeros((size_t)G.n_nodes * 3);
    ed_f(&c);
    dlp_nn_edge_dot_backward(dz, c.R, c.z, c.src, c.dst, 40, 3);
    gc_check(ed_f, &c, c.z, dz, (size_t)G.n_nodes * 3, "edge dot dz");
    free(c.z); free(c.R); free(c.s); free(c.src); free(c.dst); free(dz);
}

/* ---- losses --------------------------------------------------------------- */
typedef struct { nn_real *p, *y; int32_t lab[6]; int kind, n; } loss_ctx;
static double loss_eval(loss_ctx *c, nn_real *d) {
    switch (c->kind) {
    case 0: return dlp_nn_mse_loss(d, c->p, c->y, c->n);
    case 1: return dlp_nn_rmse_loss(d, c->p, c->y, c->n);
    case 2: return dlp_nn_huber_loss(d, c->p, c->y, c->n, 0.7);
    case 3: return dlp_nn_mape_loss(d, c->p, c->y, c->n, 1e-3);
    case 4: return dlp_nn_bce_logits_loss(d, c->p, c->y, c->n);
    case 5: return dlp_nn_cross_entropy_loss(d, c->p, c->lab, 6, 4);
    case 6: return dlp_nn_sce_loss(d, c->p, c->y, 6, 4, 2.0);
    default: return dlp_nn_sce_loss(d, c->p, c->y, 6, 4, 1.0);
    }
}
static double loss_f(void *v) { return loss_eval(v, NULL); }
static void test_losses(void) {
    for (int k = 0; k <= 7; k++) {
        loss_ctx c = {.kind = k, .n = 24};
        c.p = rnd(24, 1.5); c.y = rnd(24, 1);
        if (k == 4)
            for (int i = 0; i < 24; i++) c.y[i] = i % 3 == 0;
        for (int i = 0; i < 6; i++) c.lab[i] = i % 4;
        nn_real *d = zeros(24);
        double l = loss_eval(&c, d);
        CHECK(l == l && l >= 0);
        char what[32];
        snprintf(what, sizeof what, "loss %d", k);
        gc_check(loss_f, &c, c.p, d, 24, what);
        free(c.p); free(c.y); free(d);
    }
    /* known values */
    nn_real p[2] = {1, 3}, y[2] = {0, 1};
    CHECK_CLOSE(dlp_nn_mse_loss(NULL, p, y, 2), 2.5, 1e-12);
    CHECK_CLOSE(dlp_nn_rmse_loss(NULL, p, y, 2), sqrt(2.5), 1e-12);
    CHECK_CLOSE(dlp_nn_huber_loss(NULL, p, y, 2, 1.0), (0.5 + 1.5) / 2, 1e-12);
    CHECK_CLOSE(dlp_nn_mape_loss(NULL, p, y, 2, 1e-3), (1 / 1e-3 + 2) / 2, 1e-9);
    int32_t bad[1] = {7};
    CHECK(isnan(dlp_nn_cross_entropy_loss(NULL, p, bad, 1, 2)));
}

/* ---- masked-feature pre-training: mask -> GIN -> Linear -> SCE on masked rows */
typedef struct { nn_real *x, *token, *W, *xm, *z, *h, *hg, *yg; int32_t *idx; int K, F; } mae_ctx;
static double mae_f(void *v) {
    mae_ctx *c = v;
    int N = G.n_nodes, F = c->F;
    dlp_nn_mask_forward(c->xm, c->x, c->token, c->idx, c->K, N, F);
    dlp_nn_gin_forward(c->z, c->xm, 0.1, &G, F);
    dlp_nn_linear_forward(c->h, c->z, c->W, NULL, N, F, F);
    dlp_nn_gather_rows_forward(c->hg, c->h, c->idx, c->K, F);
    dlp_nn_gather_rows_forward(c->yg, c->x, c->idx, c->K, F); /* target: originals */
    return dlp_nn_sce_loss(NULL, c->hg, c->yg, c->K, F, 2.0);
}
static void test_masked_pretraining(void) {
    const int N = G.n_nodes, F = 3;
    mae_ctx c = {.F = F};
    c.x = rnd((size_t)N * F, 1); c.token = rnd(F, 0.5); c.W = rnd(F * F, 0.7);
    c.xm = zeros((size_t)N * F); c.z = zeros((size_t)N * F); c.h = zeros((size_t)N * F);
    c.hg = zeros((size_t)N * F); c.yg = zeros((size_t)N * F);
    c.idx = malloc((size_t)N * sizeof *c.idx);
    dlp_nn_rng r;
    dlp_nn_rng_seed(&r, 21);
    c.K = dlp_nn_mask_select(c.idx, N, 0.3, &r);
    CHECK(c.K == (int)lround(0.3 * N));
    bool sorted = true;
    for (int k = 1; k < c.K; k++) sorted &= c.idx[k] > c.idx[k - 1];
    CHECK(sorted);
    mae_f(&c);
    nn_real *dhg = zeros((size_t)N * F), *dh = zeros((size_t)N * F), *dz = zeros((size_t)N * F),
            *dxm = zeros((size_t)N * F), *dW = zeros(F * F), *dtok = zeros(F), *dx = zeros((size_t)N * F);
    dlp_nn_sce_loss(dhg, c.hg, c.yg, c.K, F, 2.0);
    dlp_nn_gather_rows_backward(dh, dhg, c.idx, c.K, F);
    dlp_nn_linear_backward(dz, dW, NULL, dh, c.z, c.W, N, F, F);
    dlp_nn_gin_backward(dxm, NULL, dz, c.xm, 0.1, &G, F);
    dlp_nn_mask_backward(dx, dtok, dxm, c.idx, c.K, N, F);
    /* x also enters through the target rows; the SCE target is a constant in
     * GraphMAE, so compare only on unmasked rows, whose only path is the
     * encoder input */
    for (int k = 0; k < c.K; k++)
        for (int f = 0; f < F; f++) dx[(size_t)c.idx[k] * F + f] = 0;
    gc_check(mae_f, &c, c.token, dtok, F, "mask dtoken");
    gc_check(mae_f, &c, c.W, dW, F * F, "mae dW");
    int un = 0;
    while (un < c.K && c.idx[un] == un) un++; /* first unmasked node */
    gc_check(mae_f, &c, c.x + (size_t)un * F, dx + (size_t)un * F, F, "mask dx unmasked");
    CHECK(dlp_nn_mask_select(c.idx, 0, 0.5, &r) == 0 && dlp_nn_mask_select(c.idx, 5, 0.0, &r) == 0);
    CHECK(dlp_nn_mask_select(c.idx, 5, 0.01, &r) == 1);
    free(c.x); free(c.token); free(c.W); free(c.xm); free(c.z); free(c.h); free(c.hg); free(c.yg);
    free(c.idx); free(dhg); free(dh); free(dz); free(dxm); free(dW); free(dtok); free(dx);
}

/* ---- the whole SAGE model ------------------------------------------------------ */
typedef struct { dlp_nn_sage_model m; nn_real *x, *st, *out, *R; } sm_ctx;
static double sm_f(void *v) {
    sm_ctx *c = v;
    dlp_error err;
    DLP_ASSERT(dlp_nn_sage_model_forward(&c->m, &G, c->x, c->st, c->out, &err) == DLP_OK);
    return dot(c->out, c->R, (size_t)G.n_graphs * c->m.cfg.out_dim);
}
static void sm_case(dlp_nn_pool pool, bool normalize) {
    dlp_nn_sage_model_cfg cfg = {4, 6, 3, 2, 3, 5, 2, pool, normalize};
    sm_ctx c;
    dlp_error err;
    CHECK(dlp_nn_sage_model_init(&c.m, &cfg, 11, &err) == DLP_OK);
    c.x = rnd((size_t)G.n_nodes * 4, 1); c.st = rnd((size_t)G.n_graphs * 2, 1);
    c.out = zeros((size_t)G.n_graphs * 2); c.R = rnd((size_t)G.n_graphs * 2, 1);
    dlp_nn_params_zero_grad(&c.m.params);
    sm_f(&c);
    dlp_nn_sage_model_backward(&c.m, &G, c.x, c.st, c.R);
    dlp_nn_params *p = &c.m.params;
    for (int t = 0; t < p->n_tensors; t++)
        gc_check(sm_f, &c, p->w + p->t[t].off, p->g + p->t[t].off, p->t[t].n, p->t[t].name);
    dlp_nn_sage_model_free(&c.m);
    free(c.x); free(c.st); free(c.out); free(c.R);
}
static void test_sage_model_mean(void) { sm_case(DLP_NN_POOL_MEAN, false); }
static void test_sage_model_max_norm(void) { sm_case(DLP_NN_POOL_MAX, true); }
static void test_sage_model_mean_cost(void) { sm_case(DLP_NN_POOL_MEAN_COST, false); }
static void test_sage_model_mean_lse(void) { sm_case(DLP_NN_POOL_MEAN_LSE, true); }

/* The model with its first layer's input a one-hot block passed sparse
 * (dlp_nn_cat): the finite-difference check on every tensor, and the same
 * outputs and gradients as the dense input holding the block's full rows
 * (the oracle: the plain layer). Nodes with no hot column (cat -1), with
 * no in-neighbours, a hub and an empty graph are in the batch. */
#define CAT_DIM 5
#define CAT_DENSE 3
typedef struct { dlp_nn_sage_model m; nn_real *x, *st, *out, *R; dlp_nn_cat cat; } smc_ctx;
static double smc_f(void *v) {
    smc_ctx *c = v;
    dlp_error err;
    DLP_ASSERT(dlp_nn_sage_model_forward_cat(&c->m, &G, c->x, &c->cat, c->st,
                                             c->out, &err) == DLP_OK);
    return dot(c->out, c->R, (size_t)G.n_graphs * c->m.cfg.out_dim);
}
static void smc_case(dlp_nn_pool pool, bool normalize) {
    const int I = CAT_DIM + CAT_DENSE, N = G.n_nodes;
    dlp_nn_sage_model_cfg cfg = {I, 6, 3, 2, 3, 5, 2, pool, normalize};
    smc_ctx c;
    sm_ctx d;
    dlp_error err;
    CHECK(dlp_nn_sage_model_init(&c.m, &cfg, 11, &err) == DLP_OK);
    CHECK(dlp_nn_sage_model_init(&d.m, &cfg, 11, &err) == DLP_OK);
    int32_t *cat = malloc((size_t)N * sizeof *cat);
    nn_real *scale = rnd(CAT_DIM, 1), *base = rnd(CAT_DIM, 1);
    DLP_ASSERT(cat);
    for (int n = 0; n < N; n++) cat[n] = (int)dlp_nn_rng_below(&RNG, CAT_DIM + 1) - 1;
    c.cat = (dlp_nn_cat){CAT_DIM, cat, scale, base};
    c.x = rnd((size_t)N * CAT_DENSE, 1); c.st = rnd((size_t)G.n_graphs * 2, 1);
    c.out = zeros((size_t)G.n_graphs * 2); c.R = rnd((size_t)G.n_graphs * 2, 1);
    /* the dense twin: the block's rows written out */
    d.x = zeros((size_t)N * I); d.st = c.st; d.R = c.R;
    d.out = zeros((size_t)G.n_graphs * 2);
    for (int n = 0; n < N; n++) {
        nn_real *r = d.x + (size_t)n * I;
        for (int k = 0; k < CAT_DIM; k++) r[k] = base[k] + (k == cat[n] ? scale[k] : 0);
        for (int k = 0; k < CAT_DENSE; k++) r[CAT_DIM + k] = c.x[(size_t)n * CAT_DENSE + k];
    }
    dlp_nn_params_zero_grad(&c.m.params);
    dlp_nn_params_zero_grad(&d.m.params);
    smc_f(&c);
    sm_f(&d);
    double worst = 0;
    for (int k = 0; k < G.n_graphs * 2; k++)
        worst = fmax(worst, fabs(c.out[k] - d.out[k]) / (1e-12 + fabs(d.out[k])));
    CHECK_MSG(worst < 1e-9, "one-hot block: outputs off the dense input's by %.3g", worst);
    dlp_nn_sage_model_backward_cat(&c.m, &G, c.x, &c.cat, c.st, c.R);
    dlp_nn_sage_model_backward(&d.m, &G, d.x, d.st, d.R);
    dlp_nn_params *p = &c.m.params, *q = &d.m.params;
    worst = 0;
    for (size_t k = 0; k < p->n; k++)
        worst = fmax(worst, fabs(p->g[k] - q->g[k]) / (1e-9 + fabs(q->g[k])));
    CHECK_MSG(worst < 1e-7, "one-hot block: gradients off the dense input's by %.3g", worst);
    for (int t = 0; t < p->n_tensors; t++)
        gc_check(smc_f, &c, p->w + p->t[t].off, p->g + p->t[t].off, p->t[t].n, p->t[t].name);
    /* a column outside the block is refused, not read */
    cat[3] = CAT_DIM;
    CHECK(dlp_nn_sage_model_forward_cat(&c.m, &G, c.x, &c.cat, c.st, c.out, &err) == DLP_ERR_ARG);
    cat[3] = -2;
    CHECK(dlp_nn_sage_model_predict_cat(&c.m, &G, c.x, &c.cat, c.st, c.out, &err) == DLP_ERR_ARG);
    c.cat.dim = I + 1;
    CHECK(dlp_nn_sage_model_forward_cat(&c.m, &G, c.x, &c.cat, c.st, c.out, &err) == DLP_ERR_ARG);
    dlp_nn_sage_model_free(&c.m);
    dlp_nn_sage_model_free(&d.m);
    free(cat); free(scale); free(base);
    free(c.x); free(c.st); free(c.out); free(c.R); free(d.x); free(d.out);
}
static void test_sage_model_cat_lse(void) { smc_case(DLP_NN_POOL_MEAN_LSE, false); }
static void test_sage_model_cat_norm(void) { smc_case(DLP_NN_POOL_MEAN, true); }

/* A wrong gradient must be caught: the checker is not vacuous. */
static void test_checker_catches_errors(void) {
    lin_ctx c = {.N = 3, .I = 2, .O = 2};
    c.x = rnd(6, 1); c.W = rnd(4, 1); c.b = rnd(2, 1); c.R = rnd(6, 1); c.out = zeros(6);
    nn_real *dW = zeros(4);
    lin_f(&c);
    dlp_nn_linear_backward(NULL, dW, NULL, c.R, c.x, c.W, 3, 2, 2);
    dW[1] *= 1.001;
    size_t wk;
    CHECK_MSG(gc_worst(lin_f, &c, c.W, dW, 4, &wk) > 1.0 && wk == 1,
              "the checker accepted a wrong gradient");
    free(c.x); free(c.W); free(c.b); free(c.R); free(c.out); free(dW);
}

int main(void) {
    dlp_nn_rng_seed(&RNG, 1234);
    build_graph();
    RUN(test_checker_catches_errors);
    RUN(test_linear);
    RUN(test_sage);
    RUN(test_sage_normalize);
    RUN(test_gcn);
    RUN(test_gin);
    RUN(test_gat_concat);
    RUN(test_gat_mean_dropout);
    RUN(test_gat_edge_logits);
    RUN(test_lstm);
    RUN(test_batchnorm_train);
    RUN(test_batchnorm_eval);
    RUN(test_layernorm);
    RUN(test_graphsizenorm);
    RUN(test_activations);
    RUN(test_pooling);
    RUN(test_concat);
    RUN(test_edge_decoder);
    RUN(test_losses);
    RUN(test_masked_pretraining);
    RUN(test_sage_model_mean);
    RUN(test_sage_model_mean_cost);
    RUN(test_sage_model_max_norm);
    RUN(test_sage_model_mean_lse);
    RUN(test_sage_model_cat_lse);
    RUN(test_sage_model_cat_norm);
    dlp_nn_graph_free(&G);
    return CHECK_DONE();
}
