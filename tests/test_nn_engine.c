/*
 * test_nn_engine.c — the float32 engine as linked from libdlperf.a:
 * batching and CSR invariants, bad graphs, thread-count independence and
 * seed determinism, the model file (round trip, corruption, truncation,
 * version and architecture mismatch, atomic replace), early stopping and the
 * parameter store limits.
 */
#include "nn/nn.h"

#include "check.h"
#include "side_files.h"

#include <dirent.h>
#include <sys/stat.h>
#include <stdint.h>
#include <unistd.h>
#include <zlib.h>

/* a NULL-terminated list of side-file groups */
#define GROUPS(...) ((const char *const[]){__VA_ARGS__, NULL})

static char tmpdir[256];

static void mk_tmpdir(void) {
    snprintf(tmpdir, sizeof tmpdir, "/tmp/dlp_nn_test_XXXXXX");
    DLP_ASSERT(mkdtemp(tmpdir));
}

static void path_in_tmp(char *out, size_t n, const char *name) {
    snprintf(out, n, "%s/%s", tmpdir, name);
}

static int count_files(void) {
    DIR *d = opendir(tmpdir);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (e->d_name[0] != '.') n++;
    if (d) closedir(d);
    return n;
}

/* A random DAG-like graph of n nodes (each node gets 1-2 earlier sources). */
typedef struct {
    int32_t *src, *dst;
    dlp_nn_graph_desc d;
} rgraph;
static void rgraph_make(rgraph *g, int n, dlp_nn_rng *r) {
    g->src = malloc(2 * (size_t)n * sizeof(int32_t) + 4);
    g->dst = malloc(2 * (size_t)n * sizeof(int32_t) + 4);
    DLP_ASSERT(g->src && g->dst);
    int e = 0;
    for (int i = 1; i < n; i++) {
        int k = 1 + (dlp_nn_rng_uniform(r) < 0.5);
        for (int j = 0; j < k; j++) {
            g->src[e] = (int32_t)dlp_nn_rng_below(r, (uint64_t)i);
            g->dst[e] = i;
            e++;
        }
    }
    g->d = (dlp_nn_graph_desc){n, e, g->src, g->dst, NULL};
}
static void rgraph_free(rgraph *g) { free(g->src); free(g->dst); }

static void test_batch_csr(void) {
    int32_t s0[] = {0, 1, 1, 2}, d0[] = {1, 2, 2, 2}; /* dup edge, loop at 2 */
    int32_t s1[] = {0}, d1[] = {1};
    dlp_nn_graph_desc gd[3] = {{3, 4, s0, d0, NULL}, {0, 0, NULL, NULL, NULL}, {2, 1, s1, d1, NULL}};
    dlp_nn_graph g;
    dlp_error err;
    CHECK(dlp_nn_graph_build(&g, gd, NULL, 3, 0, &err) == DLP_OK);
    CHECK(g.n_nodes == 5 && g.n_edges == 5 && g.n_graphs == 3);
    CHECK(g.graph_ptr[0] == 0 && g.graph_ptr[1] == 3 && g.graph_ptr[2] == 3 && g.graph_ptr[3] == 5);
    CHECK(g.node_graph[4] == 2 && g.node_graph[3] == 2 && g.node_graph[2] == 0);
    /* in-degree of node 2 is 3 (two from 1, one loop) */
    CHECK(g.in_ptr[3] - g.in_ptr[2] == 3);
    CHECK(g.loops[2] == 1 && g.loops[0] == 0);
    CHECK(g.in_src[g.in_ptr[4]] == 3); /* node 4 <- node 3 (offset 3) */
    /* out-CSR mirrors in-CSR through out_eid */
    for (int j = 0; j < g.n_nodes; j++)
        for (int p = g.out_ptr[j]; p < g.out_ptr[j + 1]; p++) {
            int q = g.out_eid[p], i = g.out_dst[p];
            CHECK(g.in_src[q] == j);
            CHECK(q >= g.in_ptr[i] && q < g.in_ptr[i + 1]);
        }
    dlp_nn_graph_free(&g);
    /* undirected doubles every non-loop edge; a subset by index */
    int32_t pick[1] = {0};
    CHECK(dlp_nn_graph_build(&g, gd, pick, 1, DLP_NN_UNDIRECTED, &err) == DLP_OK);
    CHECK(g.n_nodes == 3 && g.n_edges == 7 && g.n_graphs == 1);
    CHECK(g.in_ptr[1] - g.in_ptr[0] == 1); /* 1 -> 0 added */
    dlp_nn_graph_free(&g);
    dlp_nn_graph_free(NULL);
}

/* The same graph given as an edge list and as a CSR by source packs to the
 * same batch; bad CSR pointers are refused. */
static void test_csr_input(void) {
    int32_t s[] = {0, 0, 2, 1, 3}, d[] = {1, 2, 1, 3, 3};
    int32_t ptr[] = {0, 2, 3, 4, 5}, cd[] = {1, 2, 3, 1, 3}; /* by source */
    dlp_nn_graph_desc el = {4, 5, s, d, NULL}, cs = {4, 5, NULL, cd, ptr};
    dlp_nn_graph a, b;
    dlp_error err;
    CHECK(dlp_nn_graph_build(&a, &el, NULL, 1, DLP_NN_UNDIRECTED, &err) == DLP_OK);
    CHECK(dlp_nn_graph_build(&b, &cs, NULL, 1, DLP_NN_UNDIRECTED, &err) == DLP_OK);
    CHECK(a.n_edges == b.n_edges && a.n_edges == 9); /* loop 3->3 once */
    for (int i = 0; i < 4; i++) {
        CHECK(a.in_ptr[i + 1] == b.in_ptr[i + 1]);
        /* same multiset of in-neighbours */
        int sa = 0, sb = 0;
        for (int p = a.in_ptr[i]; p < a.in_ptr[i + 1]; p++) { sa += 1 << (4 * a.in_src[p]); sb += 1 << (4 * b.in_src[p]); }
        CHECK(sa == sb);
    }
    dlp_nn_graph_free(&a);
    dlp_nn_graph_free(&b);
    int32_t bad1[] = {0, 3, 2, 4, 5}, bad2[] = {1, 2, 3, 4, 5};
    cs.ptr = bad1;
    CHECK(dlp_nn_graph_build(&a, &cs, NULL, 1, 0, &err) == DLP_ERR_GRAPH);
    CHECK(strstr(err.msg, "CSR") != NULL);
    cs.ptr = bad2;
    CHECK(dlp_nn_graph_build(&a, &cs, NULL, 1, 0, &err) == DLP_ERR_GRAPH);
}

static void test_bad_graphs(void) {
    int32_t s[] = {0, 5}, d[] = {1, 1};
    dlp_nn_graph_desc gd = {3, 2, s, d, NULL};
    dlp_nn_graph g;
    dlp_error err;
    CHECK(dlp_nn_graph_build(&g, &gd, NULL, 1, 0, &err) == DLP_ERR_GRAPH);
    CHECK(strstr(err.msg, "edge 1 (5->1)") != NULL);
    gd.n_nodes = -1;
    CHECK(dlp_nn_graph_build(&g, &gd, NULL, 1, 0, &err) == DLP_ERR_ARG);
    gd = (dlp_nn_graph_desc){3, 2, NULL, NULL, NULL};
    CHECK(dlp_nn_graph_build(&g, &gd, NULL, 1, 0, &err) == DLP_ERR_ARG);
    CHECK(dlp_nn_graph_build(&g, NULL, NULL, 2, 0, &err) == DLP_ERR_ARG);
    dlp_nn_graph_desc huge[2] = {{1500000000, 0, NULL, NULL, NULL},
                                 {1500000000, 0, NULL, NULL, NULL}};
    CHECK(dlp_nn_graph_build(&g, huge, NULL, 2, 0, &err) == DLP_ERR_LIMIT);
    CHECK(dlp_nn_graph_build(&g, NULL, NULL, 0, 0, &err) == DLP_OK); /* empty batch */
    CHECK(g.n_nodes == 0 && g.n_graphs == 0);
    dlp_nn_graph_free(&g);
}

static void test_rng(void) {
    dlp_nn_rng a, b;
    dlp_nn_rng_seed(&a, 42);
    dlp_nn_rng_seed(&b, 42);
    bool same = true;
    for (int i = 0; i < 100; i++) same &= dlp_nn_rng_u64(&a) == dlp_nn_rng_u64(&b);
    CHECK(same);
    dlp_nn_rng_seed(&b, 43);
    CHECK(dlp_nn_rng_u64(&a) != dlp_nn_rng_u64(&b));
    /* uniform mean and normal variance, loose bounds */
    double s = 0, s2 = 0;
    for (int i = 0; i < 20000; i++) {
        s += dlp_nn_rng_uniform(&a);
        double z = dlp_nn_rng_normal(&a);
        s2 += z * z;
    }
    CHECK(fabs(s / 20000 - 0.5) < 0.01);
    CHECK(fabs(s2 / 20000 - 1.0) < 0.05);
    int32_t perm[50];
    for (int i = 0; i < 50; i++) perm[i] = i;
    dlp_nn_rng_shuffle(&a, perm, 50);
    int seen[50] = {0}, moved = 0;
    for (int i = 0; i < 50; i++) { seen[perm[i]]++; moved += perm[i] != i; }
    bool ok = true;
    for (int i = 0; i < 50; i++) ok &= seen[i] == 1;
    CHECK(ok && moved > 30);
}

/* Aggregations and GAT give bit-identical results with 1 and 2 threads. */
static void test_threads_bit_identical(void) {
    dlp_nn_rng r;
    dlp_nn_rng_seed(&r, 9);
    rgraph rg;
    rgraph_make(&rg, 3000, &r);
    dlp_nn_graph g;
    dlp_error err;
    CHECK(dlp_nn_graph_build(&g, &rg.d, NULL, 1, DLP_NN_UNDIRECTED, &err) == DLP_OK);
    const int F = 64, N = g.n_nodes;
    float *x = malloc((size_t)N * F * sizeof *x), *a1 = calloc((size_t)N * F, 4),
          *a2 = calloc((size_t)N * F, 4), *b1 = calloc((size_t)N * F, 4), *b2 = calloc((size_t)N * F, 4);
    for (int k = 0; k < N * F; k++) x[k] = (float)dlp_nn_rng_normal(&r);
    dlp_nn_set_threads(1);
    dlp_nn_mean_aggregate_forward(a1, x, &g, F);
    dlp_nn_mean_aggregate_backward(b1, x, &g, F);
    dlp_nn_set_threads(2);
    CHECK(dlp_nn_threads() == 2);
    dlp_nn_mean_aggregate_forward(a2, x, &g, F);
    dlp_nn_mean_aggregate_backward(b2, x, &g, F);
    CHECK(memcmp(a1, a2, (size_t)N * F * 4) == 0);
    CHECK(memcmp(b1, b2, (size_t)N * F * 4) == 0);
    /* parallel_for covers every index exactly once */
    dlp_nn_set_threads(1);
    free(x); free(a1); free(a2); free(b1); free(b2);
    dlp_nn_graph_free(&g);
    rgraph_free(&rg);
}

static void count_range(void *ctx, int lo, int hi) {
    int *hits = ctx;
    for (int i = lo; i < hi; i++) hits[i]++;
}
static void test_parallel_for(void) {
    int hits[1001] = {0};
    dlp_nn_parallel_for(3, 1001, count_range, hits);
    bool ok = true;
    for (int i = 0; i < 1001; i++) ok &= hits[i] == 1;
    CHECK(ok);
    dlp_nn_parallel_for(4, 0, count_range, hits); /* nothing to do */
}

/* Train the SAGE model twice with the same seed: identical weights. */
static void train_model(dlp_nn_sage_model *m, uint64_t seed, int threads, double *last) {
    dlp_nn_set_threads(threads);
    dlp_nn_rng r;
    dlp_nn_rng_seed(&r, seed);
    rgraph rg[12];
    dlp_nn_graph_desc gd[12];
    for (int k = 0; k < 12; k++) { rgraph_make(&rg[k], 20 + 15 * k, &r); gd[k] = rg[k].d; }
    dlp_nn_sage_model_cfg cfg = {8, 64, 3, 3, 3, 32, 1, DLP_NN_POOL_MEAN, false};
    dlp_error err;
    CHECK(dlp_nn_sage_model_init(m, &cfg, seed, &err) == DLP_OK);
    int32_t order[12];
    for (int k = 0; k < 12; k++) order[k] = k;
    dlp_nn_opt o = dlp_nn_opt_default(DLP_NN_ADAMW, 2e-3);
    for (int epoch = 0; epoch < 3; epoch++) {
        dlp_nn_rng_shuffle(&r, order, 12);
        for (int b = 0; b < 12; b += 4) {
            dlp_nn_graph g;
            CHECK(dlp_nn_graph_build(&g, gd, order + b, 4, 0, &err) == DLP_OK);
            float *x = malloc((size_t)g.n_nodes * 8 * sizeof *x);
            float st[12], y[4];
            for (int k = 0; k < g.n_nodes * 8; k++) x[k] = (float)dlp_nn_rng_normal(&r);
            for (int k = 0; k < 12; k++) st[k] = (float)dlp_nn_rng_normal(&r);
            for (int k = 0; k < 4; k++) y[k] = (float)dlp_nn_rng_normal(&r);
            CHECK(dlp_nn_sage_model_train_step(m, &g, x, st, y, &o, 1.0, last, &err) == DLP_OK);
            free(x);
            dlp_nn_graph_free(&g);
        }
    }
    for (int k = 0; k < 12; k++) rgraph_free(&rg[k]);
    dlp_nn_set_threads(1);
}

/* An empty batch and a batch of empty graphs run without touching memory
 * they do not own (ASan build). */
static void test_model_empty_batch(void) {
    dlp_nn_sage_model m = {0};
    dlp_nn_sage_model_cfg cfg = {4, 8, 2, 1, 2, 8, 1, DLP_NN_POOL_MAX, false};
    dlp_error err;
    CHECK(dlp_nn_sage_model_init(&m, &cfg, 1, &err) == DLP_OK);
    dlp_nn_graph g;
    CHECK(dlp_nn_graph_build(&g, NULL, NULL, 0, 0, &err) == DLP_OK);
    float out[2] = {7, 7}, st[2] = {1, 1}, y[2] = {0, 0};
    double loss = -1;
    dlp_nn_opt o = dlp_nn_opt_default(DLP_NN_SGD, 0.1);
    CHECK(dlp_nn_sage_model_forward(&m, &g, NULL, st, out, &err) == DLP_OK);
    CHECK(dlp_nn_sage_model_train_step(&m, &g, NULL, st, y, &o, 1.0, &loss, &err) == DLP_OK);
    CHECK(loss == 0);
    dlp_nn_graph_free(&g);
    dlp_nn_graph_desc empty[2] = {{0, 0, NULL, NULL, NULL}, {0, 0, NULL, NULL, NULL}};
    CHECK(dlp_nn_graph_build(&g, empty, NULL, 2, 0, &err) == DLP_OK);
    CHECK(dlp_nn_sage_model_forward(&m, &g, NULL, st, out, &err) == DLP_OK);
    CHECK(out[0] == out[1] && out[0] != 7); /* both pool to 0, same statics */
    CHECK(dlp_nn_sage_model_forward(&m, &g, NULL, NULL, out, &err) == DLP_ERR_ARG);
    dlp_nn_graph_free(&g);
    dlp_nn_sage_model_free(&m);
}

/* The predict-only forward (layers reusing their buffers) gives the
 * training forward's outputs bit for bit, with and without the L2
 * normalisation, for 1-4 layers and each pooling, first on a fresh model
 * and again after the other layout used the workspace; and a predict run
 * between a forward and its backward is not needed for, nor changes, the
 * training step (the trained weights match a run without it). */
static void test_model_predict_matches_forward(void) {
    dlp_nn_rng r;
    dlp_nn_rng_seed(&r, 5);
    rgraph rg[3];
    dlp_nn_graph_desc gd[3];
    for (int k = 0; k < 3; k++) { rgraph_make(&rg[k], 30 + 40 * k, &r); gd[k] = rg[k].d; }
    dlp_error err;
    dlp_nn_graph g;
    CHECK(dlp_nn_graph_build(&g, gd, NULL, 3, 0, &err) == DLP_OK);
    float *x = malloc((size_t)g.n_nodes * 9 * sizeof *x);
    for (int k = 0; k < g.n_nodes * 9; k++) x[k] = (float)dlp_nn_rng_normal(&r);
    float st[3 * 2] = {0.5f, -1, 2, 0.25f, -0.5f, 1};
    float *w = malloc((size_t)g.n_nodes * sizeof *w);   /* cost readout */
    for (int gi = 0; gi < 3; gi++)
        for (int n = g.graph_ptr[gi]; n < g.graph_ptr[gi + 1]; n++)
            w[n] = (float)(n - g.graph_ptr[gi] + 1) * 2.0f /
                   (float)((g.graph_ptr[gi + 1] - g.graph_ptr[gi]) *
                           (g.graph_ptr[gi + 1] - g.graph_ptr[gi] + 1));
    g.node_w = w;
    for (int norm = 0; norm < 2; norm++)
        for (int layers = 1; layers <= 4; layers++)
            for (int pool = 0; pool <= DLP_NN_POOL_LAST; pool++) {
                dlp_nn_sage_model_cfg cfg = {9, 16, layers, 2, 2, 8, 3,
                                             (dlp_nn_pool)pool, norm != 0};
                dlp_nn_sage_model m;
                CHECK(dlp_nn_sage_model_init(&m, &cfg, 40 + layers, &err) == DLP_OK);
                float a[9], b[9], c[9];
                CHECK(dlp_nn_sage_model_predict(&m, &g, x, st, a, &err) == DLP_OK);
                CHECK(dlp_nn_sage_model_forward(&m, &g, x, st, b, &err) == DLP_OK);
                CHECK(dlp_nn_sage_model_predict(&m, &g, x, st, c, &err) == DLP_OK);
                CHECK_MSG(memcmp(a, b, sizeof a) == 0 && memcmp(b, c, sizeof b) == 0,
                          "normalize %d layers %d pool %d: predict != forward",
                          norm, layers, pool);
                dlp_nn_sage_model_free(&m);
            }
    /* one training step with a predict before it: same weights */
    dlp_nn_sage_model_cfg cfg = {9, 16, 3, 2, 2, 8, 3, DLP_NN_POOL_MEAN, true};
    dlp_nn_sage_model m1, m2;
    CHECK(dlp_nn_sage_model_init(&m1, &cfg, 9, &err) == DLP_OK);
    CHECK(dlp_nn_sage_model_init(&m2, &cfg, 9, &err) == DLP_OK);
    float y[9] = {0.1f, 0.2f, 0.3f, -0.1f, 0, 0.5f, 1, -1, 0.2f}, out[9];
    double l1 = 0, l2 = 0;
    dlp_nn_opt o1 = dlp_nn_opt_default(DLP_NN_ADAMW, 1e-2), o2 = o1;
    CHECK(dlp_nn_sage_model_predict(&m2, &g, x, st, out, &err) == DLP_OK);
    CHECK(dlp_nn_sage_model_train_step(&m1, &g, x, st, y, &o1, 1.0, &l1, &err) == DLP_OK);
    CHECK(dlp_nn_sage_model_train_step(&m2, &g, x, st, y, &o2, 1.0, &l2, &err) == DLP_OK);
    CHECK(l1 == l2);
    CHECK(memcmp(m1.params.w, m2.params.w, m1.params.n * sizeof(float)) == 0);
    dlp_nn_sage_model_free(&m1);
    dlp_nn_sage_model_free(&m2);
    /* the cost readout without node weights is refused, not read as NULL */
    g.node_w = NULL;
    dlp_nn_sage_model_cfg cc = {9, 16, 2, 2, 2, 8, 3, DLP_NN_POOL_MEAN_COST, false};
    CHECK(dlp_nn_sage_model_init(&m1, &cc, 5, &err) == DLP_OK);
    CHECK(dlp_nn_sage_model_predict(&m1, &g, x, st, out, &err) == DLP_ERR_ARG &&
          strstr(err.msg, "node weights"));
    dlp_nn_sage_model_free(&m1);
    cc.pool = DLP_NN_POOL_MEAN_LSE;   /* the log-sum-exp readout likewise */
    CHECK(dlp_nn_sage_model_init(&m1, &cc, 5, &err) == DLP_OK);
    CHECK(dlp_nn_sage_model_predict(&m1, &g, x, st, out, &err) == DLP_ERR_ARG &&
          strstr(err.msg, "node weights"));
    dlp_nn_sage_model_free(&m1);
    free(w);
    free(x);
    dlp_nn_graph_free(&g);
    for (int k = 0; k < 3; k++) rgraph_free(&rg[k]);
}

/* dlp_nn_exp_diff (the log-sum-exp readout's exps, nn_exp.c) against exp
 * in double: within 1.5e-7 relative (about one float ulp; 7.0e-8 measured)
 * over expf's range, 0 below -87.33 where expf is denormal or 0, NaN
 * kept, the same value whatever its column (the tail of a row goes
 * through the lanes too), and m subtracted before the exp (large x and m
 * do not overflow) */
static void test_exp_diff(void) {
    enum { N = 4001 };
    float *x = malloc(N * sizeof *x), *m = calloc(N, sizeof *m),
          *y = malloc(N * sizeof *y);
    CHECK(x && m && y);
    if (!x || !m || !y) { free(x); free(m); free(y); return; }
    for (int i = 0; i < N; i++) x[i] = -87.0f + 175.0f * (float)i / (N - 1);
    dlp_nn_exp_diff(y, x, m, N);
    double worst = 0;
    for (int i = 0; i < N; i++) {
        double want = exp((double)x[i]);
        double rel = fabs(y[i] - want) / want;
        if (x[i] <= 88.0f && rel > worst) worst = rel;
    }
    CHECK_MSG(worst <= 1.5e-7, "worst relative error %g", worst);
    /* small arguments, where the polynomial alone answers */
    for (int i = 0; i < N; i++) x[i] = -0.5f + (float)i / (N - 1);
    dlp_nn_exp_diff(y, x, m, N);
    worst = 0;
    for (int i = 0; i < N; i++) {
        double rel = fabs(y[i] - exp((double)x[i])) / exp((double)x[i]);
        if (rel > worst) worst = rel;
    }
    CHECK_MSG(worst <= 1.5e-7, "worst relative error near 0: %g", worst);
    float t[5] = {-90.0f, -1000.0f, NAN, 0.0f, 88.0f}, z[5] = {0}, o[5];
    dlp_nn_exp_diff(o, t, z, 5);
    CHECK(o[0] >= 0 && o[0] < 1.2e-38f && o[1] >= 0 && o[1] < 1.2e-38f);
    CHECK(isnan(o[2]) && o[3] == 1.0f && isfinite(o[4]) && o[4] > 1.6e38f);
    /* position-independent: one value at every column of rows of 1..19 */
    float v[19], mz[19] = {0}, w[19];
    for (int n = 1; n <= 19; n++) {
        for (int k = 0; k < n; k++) v[k] = -1.2345f;
        dlp_nn_exp_diff(w, v, mz, n);
        for (int k = 0; k < n; k++) CHECK(w[k] == w[0]);
        CHECK(fabs(w[0] - exp(-1.2345)) < 1.5e-7 * exp(-1.2345));
    }
    /* x - m taken first: exp(1000.5 - 1000) */
    float big = 1000.5f, mb = 1000.0f, ob;
    dlp_nn_exp_diff(&ob, &big, &mb, 1);
    CHECK(fabs(ob - exp(0.5)) < 1.5e-7 * exp(0.5));
    free(x); free(m); free(y);
}

static void test_training_deterministic(void) {
    dlp_nn_sage_model a, b, c;
    double la, lb, lc;
    train_model(&a, 77, 2, &la);
    train_model(&b, 77, 2, &lb);
    train_model(&c, 78, 2, &lc);
    CHECK(a.params.n == b.params.n);
    CHECK(memcmp(a.params.w, b.params.w, a.params.n * sizeof(float)) == 0);
    CHECK(la == lb);
    CHECK(memcmp(a.params.w, c.params.w, a.params.n * sizeof(float)) != 0);
    dlp_nn_sage_model_free(&a);
    dlp_nn_sage_model_free(&b);
    dlp_nn_sage_model_free(&c);
}

static dlp_nn_sage_model small_model(void) {
    dlp_nn_sage_model m;
    dlp_nn_sage_model_cfg cfg = {5, 16, 3, 2, 3, 8, 1, DLP_NN_POOL_MAX, true};
    dlp_error err;
    DLP_ASSERT(dlp_nn_sage_model_init(&m, &cfg, 3, &err) == DLP_OK);
    return m;
}

static long file_size(const char *p) {
    FILE *f = fopen(p, "rb");
    if (!f) return -1;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fclose(f);
    return n;
}

static void flip_byte(const char *p, long off) {
    FILE *f = fopen(p, "r+b");
    DLP_ASSERT(f);
    fseek(f, off, SEEK_SET);
    int c = fgetc(f);
    fseek(f, off, SEEK_SET);
    fputc(c ^ 0x5a, f);
    fclose(f);
}

static void test_model_file_roundtrip(void) {
    char path[512];
    path_in_tmp(path, sizeof path, "m.dlpnn");
    dlp_nn_sage_model m = small_model(), l;
    float mean[5] = {1, 2, 3, 4, 5}, sd[5] = {.5f, .25f, 1, 2, 4}, mean2[5], sd2[5];
    dlp_error err;
    CHECK(dlp_nn_sage_model_save(&m, path, mean, sd, "trained on test data", &err) == DLP_OK);
    CHECK(count_files() == 1); /* no temp file left behind */
    CHECK(dlp_nn_sage_model_load(&l, path, mean2, sd2, &err) == DLP_OK);
    CHECK(l.cfg.in_dim == 5 && l.cfg.hidden == 16 && l.cfg.n_sage == 3 &&
          l.cfg.static_dim == 2 && l.cfg.n_fc == 3 && l.cfg.fc_hidden == 8 &&
          l.cfg.out_dim == 1 && l.cfg.pool == DLP_NN_POOL_MAX && l.cfg.normalize);
    CHECK(l.params.n == m.params.n);
    CHECK(memcmp(l.params.w, m.params.w, m.params.n * sizeof(float)) == 0);
    CHECK(memcmp(mean, mean2, sizeof mean) == 0 && memcmp(sd, sd2, sizeof sd) == 0);
    dlp_nn_file f;
    CHECK(dlp_nn_file_load(&f, path, &err) == DLP_OK);
    const dlp_nn_entry *e = dlp_nn_file_get(&f, "meta", DLP_NN_STR);
    CHECK(e && strcmp(e->data, "trained on test data") == 0);
    dlp_nn_file_free(&f);
    /* a loaded model carries its weights only; the first train step gives
     * it the training blocks and the same update as the original's */
    CHECK(l.params.g == NULL && l.params.m == NULL && m.params.g != NULL);
    {
        int32_t s[] = {0, 1, 2, 3}, d[] = {1, 2, 3, 0};
        dlp_nn_graph_desc gd = {4, 4, s, d, NULL};
        dlp_nn_graph g;
        CHECK(dlp_nn_graph_build(&g, &gd, NULL, 1, DLP_NN_UNDIRECTED, &err) == DLP_OK);
        float x[20], st[2] = {0.5f, -1}, y[1] = {0.75f};
        for (int i = 0; i < 20; i++) x[i] = (float)(i % 7) / 7 - 0.4f;
        dlp_nn_opt o = dlp_nn_opt_default(DLP_NN_ADAMW, 1e-2);
        double lm, ll;
        CHECK(dlp_nn_sage_model_train_step(&m, &g, x, st, y, &o, 1.0, &lm, &err) == DLP_OK);
        CHECK(dlp_nn_sage_model_train_step(&l, &g, x, st, y, &o, 1.0, &ll, &err) == DLP_OK);
        CHECK(l.params.g != NULL && lm == ll);
        CHECK(memcmp(l.params.w, m.params.w, m.params.n * sizeof(float)) == 0);
        dlp_nn_graph_free(&g);
    }
    /* saving again replaces the file atomically, still one file */
    CHECK(dlp_nn_sage_model_save(&m, path, NULL, NULL, NULL, &err) == DLP_OK);
    CHECK(count_files() == 1);
    dlp_nn_sage_model_free(&l);
    dlp_nn_sage_model_free(&m);
    unlink(path);
}

static void test_model_file_bad(void) {
    char path[512], p2[512];
    path_in_tmp(path, sizeof path, "bad.dlpnn");
    path_in_tmp(p2, sizeof p2, "copy.dlpnn");
    dlp_nn_sage_model m = small_model(), l;
    dlp_error err;
    CHECK(dlp_nn_sage_model_save(&m, path, NULL, NULL, NULL, &err) == DLP_OK);
    long n = file_size(path);
    CHECK(n > 100);
    /* corrupt one weight byte: checksum */
    flip_byte(path, n / 2);
    CHECK(dlp_nn_sage_model_load(&l, path, NULL, NULL, &err) == DLP_ERR_FORMAT);
    CHECK(strstr(err.msg, "checksum") != NULL);
    flip_byte(path, n / 2);
    CHECK(dlp_nn_sage_model_load(&l, path, NULL, NULL, &err) == DLP_OK);
    dlp_nn_sage_model_free(&l);
    /* truncated */
    CHECK(truncate(path, n - 10) == 0);
    CHECK(dlp_nn_sage_model_load(&l, path, NULL, NULL, &err) == DLP_ERR_FORMAT);
    CHECK(strstr(err.msg, "truncated") != NULL);
    CHECK(truncate(path, 12) == 0);
    CHECK(dlp_nn_sage_model_load(&l, path, NULL, NULL, &err) == DLP_ERR_FORMAT);
    CHECK(truncate(path, 0) == 0);
    CHECK(dlp_nn_sage_model_load(&l, path, NULL, NULL, &err) == DLP_ERR_FORMAT);
    CHECK(strstr(err.msg, "magic") != NULL);
    /* a future version */
    CHECK(dlp_nn_sage_model_save(&m, path, NULL, NULL, NULL, &err) == DLP_OK);
    flip_byte(path, 8);
    CHECK(dlp_nn_sage_model_load(&l, path, NULL, NULL, &err) == DLP_ERR_UNSUPPORTED);
    CHECK(strstr(err.msg, "version") != NULL);
    /* missing file */
    CHECK(dlp_nn_sage_model_load(&l, p2, NULL, NULL, &err) == DLP_ERR_IO);
    /* read whole (dlp_file_read_all), never a FIFO, a device or a
     * directory: refused at once, no blocking or endless read */
    dlp_nn_file g;
    CHECK(mkfifo(p2, 0600) == 0);
    CHECK(dlp_nn_file_load(&g, p2, &err) == DLP_ERR_IO &&
          strstr(err.msg, "not a regular file") != NULL);
    unlink(p2);
    CHECK(dlp_nn_file_load(&g, "/dev/zero", &err) == DLP_ERR_IO &&
          strstr(err.msg, "not a regular file") != NULL);
    CHECK(dlp_nn_file_load(&g, "/tmp", &err) == DLP_ERR_IO);
    /* over the reader's limit: refused before a byte is read; at it, the
     * bytes as written */
    void *b = NULL;
    size_t nb = 1;
    CHECK(dlp_file_read_all(path, (size_t)n - 1, &b, &nb, &err) == DLP_ERR_LIMIT &&
          b == NULL && nb == 0);
    CHECK(dlp_file_read_all(path, (size_t)n, &b, &nb, &err) == DLP_OK &&
          nb == (size_t)n && b && !memcmp(b, "DLPNNMDL", 8));
    free(b);
    /* a valid file of another kind */
    dlp_nn_file f = {0};
    CHECK(dlp_nn_file_add_str(&f, "kind", "gat_model", &err) == DLP_OK);
    CHECK(dlp_nn_file_add_str(&f, "kind", "again", &err) == DLP_ERR_ARG); /* duplicate */
    CHECK(dlp_nn_file_save(&f, p2, &err) == DLP_OK);
    dlp_nn_file_free(&f);
    CHECK(dlp_nn_sage_model_load(&l, p2, NULL, NULL, &err) == DLP_ERR_FORMAT);
    CHECK(strstr(err.msg, "sage_model") != NULL);
    /* mismatched tensor: architecture says 16 wide, weights are 8 wide */
    dlp_nn_sage_model_cfg cfg8 = m.cfg;
    cfg8.hidden = 8;
    dlp_nn_sage_model m8;
    CHECK(dlp_nn_sage_model_init(&m8, &cfg8, 1, &err) == DLP_OK);
    int64_t arch[9] = {5, 16, 3, 2, 3, 8, 1, DLP_NN_POOL_MAX, 1};
    f = (dlp_nn_file){0};
    CHECK(dlp_nn_file_add_str(&f, "kind", "sage_model", &err) == DLP_OK);
    CHECK(dlp_nn_file_add_i64(&f, "arch", arch, 9, &err) == DLP_OK);
    CHECK(dlp_nn_file_add_params(&f, &m8.params, &err) == DLP_OK);
    CHECK(dlp_nn_file_save(&f, p2, &err) == DLP_OK);
    dlp_nn_file_free(&f);
    CHECK(dlp_nn_sage_model_load(&l, p2, NULL, NULL, &err) == DLP_ERR_SHAPE);
    CHECK(strstr(err.msg, "sage0.wl") != NULL);
    /* normalisation stats asked for but absent */
    CHECK(dlp_nn_sage_model_save(&m, p2, NULL, NULL, NULL, &err) == DLP_OK);
    float mean[5];
    CHECK(dlp_nn_sage_model_load(&l, p2, mean, NULL, &err) == DLP_ERR_FORMAT);
    CHECK(strstr(err.msg, "norm/mean") != NULL);
    /* unwritable destination: error, and the old file is untouched */
    char bad[600];
    snprintf(bad, sizeof bad, "%s/no/such/dir/m.dlpnn", tmpdir);
    CHECK(dlp_nn_sage_model_save(&m, bad, NULL, NULL, NULL, &err) == DLP_ERR_IO);
    CHECK(count_files() == 2);
    dlp_nn_sage_model_free(&m8);
    dlp_nn_sage_model_free(&m);
    unlink(path);
    unlink(p2);
}

/* Sets the version field of the model file at p and its checksum. */
static void set_version(const char *p, uint32_t v) {
    long n = file_size(p);
    DLP_ASSERT(n > 28);
    uint8_t *b = malloc((size_t)n);
    FILE *f = fopen(p, "r+b");
    DLP_ASSERT(b && f && fread(b, 1, (size_t)n, f) == (size_t)n);
    for (int i = 0; i < 4; i++) b[8 + i] = (uint8_t)(v >> (8 * i));
    uint32_t c = dlp_nn_crc32(0, b, (size_t)n - 4);
    for (int i = 0; i < 4; i++) b[n - 4 + i] = (uint8_t)(c >> (8 * i));
    rewind(f);
    DLP_ASSERT(fwrite(b, 1, (size_t)n, f) == (size_t)n);
    fclose(f);
    free(b);
}

/* Files of format version 1 (no byte arrays) still load; a byte array in
 * one is refused, as is version 0 or one past this build's. */
static void test_model_file_versions(void) {
    char path[512];
    path_in_tmp(path, sizeof path, "v1.dlpnn");
    dlp_nn_file f = {0};
    dlp_error err;
    float w[2] = {1.5f, -2};
    uint8_t u[2] = {9, 8};
    CHECK(dlp_nn_file_add_f32(&f, "w", w, 2, &err) == DLP_OK);
    CHECK(dlp_nn_file_save(&f, path, &err) == DLP_OK);
    set_version(path, 1);
    dlp_nn_file_free(&f);
    float back[2];
    CHECK(dlp_nn_file_load(&f, path, &err) == DLP_OK);
    CHECK(dlp_nn_file_read_f32(&f, "w", back, 2, &err) == DLP_OK && back[1] == -2);
    dlp_nn_file_free(&f);
    set_version(path, 0);
    CHECK(dlp_nn_file_load(&f, path, &err) == DLP_ERR_UNSUPPORTED);
    set_version(path, DLP_NN_FILE_VERSION + 1);
    CHECK(dlp_nn_file_load(&f, path, &err) == DLP_ERR_UNSUPPORTED);
    CHECK(strstr(err.msg, "version") != NULL);
    CHECK(dlp_nn_file_add_u8(&f, "u", u, 2, &err) == DLP_OK);
    CHECK(dlp_nn_file_save(&f, path, &err) == DLP_OK);
    dlp_nn_file_free(&f);
    CHECK(dlp_nn_file_load(&f, path, &err) == DLP_OK);
    const dlp_nn_entry *e = dlp_nn_file_get(&f, "u", DLP_NN_U8);
    CHECK(e && e->count == 2 && dlp_nn_entry_bytes(e)[1] == 8);
    dlp_nn_file_free(&f);
    set_version(path, 1);
    CHECK(dlp_nn_file_load(&f, path, &err) == DLP_ERR_FORMAT);
    unlink(path);
}

/* Every single-byte corruption of a small file is rejected, never crashes. */
static void test_model_file_fuzz(void) {
    char path[512];
    path_in_tmp(path, sizeof path, "fz.dlpnn");
    dlp_nn_file f = {0};
    dlp_error err;
    float w[3] = {1, 2, 3};
    int64_t a[2] = {7, 8};
    CHECK(dlp_nn_file_add_f32(&f, "w", w, 3, &err) == DLP_OK);
    CHECK(dlp_nn_file_add_i64(&f, "a", a, 2, &err) == DLP_OK);
    CHECK(dlp_nn_file_add_str(&f, "s", "hi", &err) == DLP_OK);
    CHECK(dlp_nn_file_add_u8(&f, "u", "\x01\x02\x03", 3, &err) == DLP_OK);
    CHECK(dlp_nn_file_save(&f, path, &err) == DLP_OK);
    dlp_nn_file_free(&f);
    long n = file_size(path);
    int rejected = 0;
    for (long off = 0; off < n; off++) {
        flip_byte(path, off);
        if (dlp_nn_file_load(&f, path, &err) != DLP_OK) rejected++;
        else dlp_nn_file_free(&f);
        flip_byte(path, off);
    }
    CHECK_MSG(rejected == n, "%d of %ld corruptions rejected", rejected, n);
    CHECK(dlp_nn_file_load(&f, path, &err) == DLP_OK);
    float back[3];
    CHECK(dlp_nn_file_read_f32(&f, "w", back, 3, &err) == DLP_OK && back[2] == 3);
    CHECK(dlp_nn_file_read_f32(&f, "w", back, 2, &err) == DLP_ERR_SHAPE);
    dlp_nn_file_free(&f);
    unlink(path);
    /* CRC-32 check value */
    CHECK(dlp_nn_crc32(0, "123456789", 9) == 0xCBF43926u);
}

/* Float32 and byte arrays of DLP_NN_LAZY_MIN values or more stay in the
 * loaded file's mapping (data NULL, raw set); smaller ones are copied. Each
 * reads back the values saved, a copy of a lazy entry holds them, a kept
 * reference to the mapping outlives the file, and a loaded file saved
 * again (lazy entries included) is byte-identical to the first save: the
 * same bytes a load without the lazy path wrote. */
static void test_model_file_lazy(void) {
    char path[512], p2[512];
    path_in_tmp(path, sizeof path, "lazy.dlpnn");
    path_in_tmp(p2, sizeof p2, "lazy2.dlpnn");
    enum { BIG = DLP_NN_LAZY_MIN + 37 };
    static float big[BIG], back[BIG];
    for (int i = 0; i < BIG; i++) big[i] = (float)i * 0.25f - 100.5f;
    float small[DLP_NN_LAZY_MIN - 1];
    for (int i = 0; i < DLP_NN_LAZY_MIN - 1; i++) small[i] = -(float)i;
    static uint8_t bytes[BIG];
    for (int i = 0; i < BIG; i++) bytes[i] = (uint8_t)(i * 7 + 3);
    int64_t a[2] = {7, -8};
    dlp_nn_file f = {0}, g = {0};
    dlp_error err;
    CHECK(dlp_nn_file_add_f32(&f, "big", big, BIG, &err) == DLP_OK);
    CHECK(dlp_nn_file_add_u8(&f, "bytes", bytes, BIG, &err) == DLP_OK);
    CHECK(dlp_nn_file_add_u8(&f, "few", bytes, 3, &err) == DLP_OK);
    CHECK(dlp_nn_file_add_f32(&f, "small", small, DLP_NN_LAZY_MIN - 1, &err) == DLP_OK);
    CHECK(dlp_nn_file_add_i64(&f, "a", a, 2, &err) == DLP_OK);
    CHECK(dlp_nn_file_save(&f, path, &err) == DLP_OK);
    dlp_nn_file_free(&f);
    CHECK(dlp_nn_file_load(&f, path, &err) == DLP_OK);
    const dlp_nn_entry *eb = dlp_nn_file_get(&f, "big", DLP_NN_F32);
    const dlp_nn_entry *es = dlp_nn_file_get(&f, "small", DLP_NN_F32);
    CHECK(eb && eb->data == NULL && eb->raw != NULL && eb->count == BIG);
    CHECK(es && es->data != NULL && es->count == DLP_NN_LAZY_MIN - 1);
    const dlp_nn_entry *ey = dlp_nn_file_get(&f, "bytes", DLP_NN_U8);
    const dlp_nn_entry *ef = dlp_nn_file_get(&f, "few", DLP_NN_U8);
    CHECK(ey && ey->data == NULL && ey->raw != NULL && ey->count == BIG);
    CHECK(ef && ef->data != NULL && ef->count == 3);
    CHECK(ey && !memcmp(dlp_nn_entry_bytes(ey), bytes, BIG));
    CHECK(ef && !memcmp(dlp_nn_entry_bytes(ef), bytes, 3));
    CHECK(f.map != NULL && f.n_side == 0);
    CHECK(eb && eb->map == f.map && es && es->map == NULL);
    dlp_nn_map *kept = ey ? dlp_nn_entry_keep(ey) : NULL;
    CHECK(kept == f.map && ef && dlp_nn_entry_keep(ef) == NULL);
    const uint8_t *kept_bytes = ey ? dlp_nn_entry_bytes(ey) : NULL;
    CHECK(dlp_nn_file_read_f32(&f, "big", back, BIG, &err) == DLP_OK);
    CHECK(memcmp(back, big, sizeof big) == 0);
    CHECK(dlp_nn_file_read_f32(&f, "big", back, BIG - 1, &err) == DLP_ERR_SHAPE);
    CHECK(((const float *)es->data)[5] == -5.0f);
    /* a copy of a lazy entry owns its values */
    CHECK(dlp_nn_file_add_copy(&g, "big2", eb, &err) == DLP_OK);
    const dlp_nn_entry *ec = dlp_nn_file_get(&g, "big2", DLP_NN_F32);
    CHECK(ec && ec->data && memcmp(ec->data, big, sizeof big) == 0);
    CHECK(ey && dlp_nn_file_add_copy(&g, "bytes2", ey, &err) == DLP_OK);
    const dlp_nn_entry *ecy = dlp_nn_file_get(&g, "bytes2", DLP_NN_U8);
    CHECK(ecy && ecy->data && ecy->count == BIG && !memcmp(ecy->data, bytes, BIG));
    /* saved again from the loaded file: the same bytes */
    CHECK(dlp_nn_file_save(&f, p2, &err) == DLP_OK);
    dlp_nn_file_free(&f);
    CHECK(f.map == NULL && f.n == 0);
    long n1 = file_size(path), n2 = file_size(p2);
    CHECK(n1 == n2 && n1 > 0);
    FILE *x = fopen(path, "rb"), *y = fopen(p2, "rb");
    CHECK(x && y);
    int same = x && y;
    for (long i = 0; same && i < n1; i++) same = fgetc(x) == fgetc(y);
    CHECK(same);
    if (x) fclose(x);
    if (y) fclose(y);
    /* the copy outlives the file it came from, and so does the mapping
     * while a reference is kept */
    CHECK(((const float *)ec->data)[BIG - 1] == big[BIG - 1]);
    CHECK(kept && kept_bytes && !memcmp(kept_bytes, bytes, BIG));
    dlp_nn_map_release(kept);
    CHECK(dlp_nn_entry_keep(ec) == NULL);   /* a copy holds its values */
    dlp_nn_file_free(&g);
    unlink(path);
    unlink(p2);
}

/* Side files (dlp_nn_file_save_shared) in a directory of their own. */
static char shdir[256];

/* How many *.dlps files shdir holds; the first one's name in first. */
static int count_side(char *first, size_t n) {
    return side_files(shdir, "", false, first, n, NULL);
}

/* Removes shdir's side files whose names start with prefix. */
static void remove_side(const char *prefix) {
    bool ok;
    side_files(shdir, prefix, true, NULL, 0, &ok);
    DLP_ASSERT(ok);
}

static bool same_file(const char *a, const char *b) {
    size_t na = 0, nb = 0;
    char *x = check_slurp(a, &na), *y = check_slurp(b, &nb);
    bool same = x && y && na == nb && !memcmp(x, y, na);
    free(x);
    free(y);
    return same;
}

/* The file at p with its first `from` (same length as `to`) replaced by
 * `to` (a reference "/@": the file made version 4, which holds them) and
 * its CRC made right again (a file without large byte arrays:
 * the CRC covers all before it): what save refuses to write. */
static void patch_file(const char *p, const char *from, const char *to) {
    size_t n = 0, l = strlen(from);
    char *b = check_slurp(p, &n);
    DLP_ASSERT(b && n > 28 && strlen(to) == l);
    char *at = NULL;
    for (size_t i = 0; !at && i + l <= n; i++)
        if (!memcmp(b + i, from, l)) at = b + i;
    DLP_ASSERT(at);
    memcpy(at, to, l);
    if (to[l - 1] == '@')   /* a reference: the version that holds them */
        for (int i = 0; i < 4; i++)
            b[8 + i] = (char)(DLP_NN_FILE_VERSION >> (8 * i));
    uint32_t c = dlp_nn_crc32(0, b, n - 4);
    for (int i = 0; i < 4; i++) b[n - 4 + i] = (char)(c >> (8 * i));
    FILE *f = fopen(p, "wb");
    DLP_ASSERT(f && fwrite(b, 1, n, f) == n);
    fclose(f);
    free(b);
}

/* Entries "g/x" (a lazy float32 array), "g/y" (a byte array with its own
 * CRC) and the same two under "blend/0/", a different "blend/1/g/x", and
 * entries outside the group ("ag/x": "g/" not at a name's start or after a
 * '/'): save_shared with "g/" writes two side files (one for both copies
 * of the group), a main file smaller than the plain save, and loading it
 * gives the plain save's entries, in order, with the same kinds, counts,
 * bytes, laziness and pending CRCs; saved again plainly it is the plain
 * file, byte for byte. A lazy entry's map keeps the side file's bytes
 * after the file is freed, and a copy of it holds its values. A file
 * without the group is written as dlp_nn_file_save writes it. */
static void test_model_file_shared(void) {
    snprintf(shdir, sizeof shdir, "/tmp/dlp_nn_shared_XXXXXX");
    DLP_ASSERT(mkdtemp(shdir));
    char plain[400], shared[400], other[400], none[400], again[400];
    snprintf(plain, sizeof plain, "%s/plain.dlpm", shdir);
    snprintf(shared, sizeof shared, "%s/shared.dlpm", shdir);
    snprintf(other, sizeof other, "%s/other.dlpm", shdir);
    snprintf(none, sizeof none, "%s/none.dlpm", shdir);
    snprintf(again, sizeof again, "%s/again.dlpm", shdir);
    enum { BIG = DLP_NN_LAZY_MIN + 11, NY = 1500 };
    static float x[BIG], x2[BIG];
    static uint8_t y[NY];
    for (int i = 0; i < BIG; i++) {
        x[i] = (float)i * 0.5f - 3;
        x2[i] = -(float)i;
    }
    for (int i = 0; i < NY; i++) y[i] = (uint8_t)(i * 13 + 1);
    float a[3] = {1, 2, 3};
    int64_t ag[2] = {4, 5};
    dlp_error err;
    dlp_nn_file f = {0};
    CHECK(dlp_nn_file_add_f32(&f, "a", a, 3, &err) == DLP_OK);
    CHECK(dlp_nn_file_add_f32(&f, "g/x", x, BIG, &err) == DLP_OK);
    CHECK(dlp_nn_file_add_u8(&f, "g/y", y, NY, &err) == DLP_OK);
    CHECK(dlp_nn_file_add_i64(&f, "ag/x", ag, 2, &err) == DLP_OK);
    CHECK(dlp_nn_file_add_f32(&f, "blend/0/g/x", x, BIG, &err) == DLP_OK);
    CHECK(dlp_nn_file_add_u8(&f, "blend/0/g/y", y, NY, &err) == DLP_OK);
    CHECK(dlp_nn_file_add_str(&f, "blend/0/kind", "k", &err) == DLP_OK);
    CHECK(dlp_nn_file_add_f32(&f, "blend/1/g/x", x2, BIG, &err) == DLP_OK);
    CHECK(dlp_nn_file_group_entries(&f, GROUPS("g/")) == 5);
    CHECK(dlp_nn_file_save(&f, plain, &err) == DLP_OK);
    CHECK_MSG(dlp_nn_file_save_shared(&f, shared, GROUPS("g/"), &err) == DLP_OK, "%s", err.msg);
    char side[256] = "";
    CHECK(count_side(side, sizeof side) == 2);
    CHECK(strlen(side) == 2 + 16 + 5 && !strncmp(side, "g-", 2));
    CHECK(file_size(shared) > 0 && file_size(shared) < file_size(plain) - 2 * BIG);
    /* the same group in another model file: the same side file */
    dlp_nn_file o = {0};
    CHECK(dlp_nn_file_add_f32(&o, "g/x", x, BIG, &err) == DLP_OK);
    CHECK(dlp_nn_file_add_u8(&o, "g/y", y, NY, &err) == DLP_OK);
    CHECK(dlp_nn_file_save_shared(&o, other, GROUPS("g/"), &err) == DLP_OK);
    CHECK(count_side(NULL, 0) == 2);
    dlp_nn_file_free(&o);
    /* two groups in one save: a side file each (the two copies of h/
     * share one); an empty list or a bad group in it is refused */
    dlp_nn_file t = {0};
    char two[400];
    snprintf(two, sizeof two, "%s/two.dlpm", shdir);
    int before = count_side(NULL, 0);
    CHECK(dlp_nn_file_add_f32(&t, "k/x", x, BIG, &err) == DLP_OK);
    CHECK(dlp_nn_file_add_f32(&t, "h/x", x2, BIG, &err) == DLP_OK);
    CHECK(dlp_nn_file_add_f32(&t, "blend/0/h/x", x2, BIG, &err) == DLP_OK);
    CHECK(dlp_nn_file_group_entries(&t, GROUPS("k/", "h/")) == 3);
    CHECK(dlp_nn_file_group_entries(&t, GROUPS("k/", "h")) == 0);
    CHECK(dlp_nn_file_save_shared(&t, two, GROUPS("k/", "h"), &err) == DLP_ERR_ARG);
    CHECK(dlp_nn_file_save_shared(&t, two, (const char *const[]){NULL}, &err) ==
          DLP_ERR_ARG);
    CHECK(dlp_nn_file_save_shared(&t, two, GROUPS("k/", "h/"), &err) == DLP_OK);
    CHECK(count_side(NULL, 0) == before + 2);
    dlp_nn_file_free(&t);
    CHECK(dlp_nn_file_load(&t, two, &err) == DLP_OK && t.n == 3 &&
          t.n_side == 2 && dlp_nn_file_get(&t, "blend/0/h/x", DLP_NN_F32) &&
          dlp_nn_file_get(&t, "k/x", DLP_NN_F32));
    dlp_nn_file_free(&t);
    DLP_ASSERT(unlink(two) == 0);
    remove_side("k-");
    remove_side("h-");
    CHECK(count_side(NULL, 0) == before);
    /* no entry of the group: the plain file */
    CHECK(dlp_nn_file_save_shared(&f, none, GROUPS("zz/"), &err) == DLP_OK);
    CHECK(same_file(none, plain) && count_side(NULL, 0) == 2);
    CHECK(dlp_nn_file_group_entries(&f, GROUPS("zz/")) == 0);
    dlp_nn_file_free(&f);

    dlp_nn_file p = {0}, s = {0};
    CHECK(dlp_nn_file_load(&p, plain, &err) == DLP_OK);
    CHECK_MSG(dlp_nn_file_load(&s, shared, &err) == DLP_OK, "%s", err.msg);
    CHECK(p.n == 8 && s.n == p.n && p.n_side == 0 && s.n_side == 2);
    CHECK(s.version == DLP_NN_FILE_VERSION &&
          p.version == DLP_NN_FILE_VERSION_PLAIN);
    for (int i = 0; i < p.n && i < s.n; i++) {
        const dlp_nn_entry *e = &p.e[i], *t = &s.e[i];
        size_t nb = (size_t)e->count * dlp_nn_elem_size(e->kind);
        const void *be = e->data ? e->data : (const void *)e->raw,
                   *bt = t->data ? t->data : (const void *)t->raw;
        CHECK_MSG(!strcmp(e->name, t->name) && e->kind == t->kind &&
                  e->count == t->count && !e->data == !t->data &&
                  e->crc_pending == t->crc_pending && e->crc == t->crc &&
                  !memcmp(be, bt, nb), "entry %d '%s'", i, e->name);
        CHECK(dlp_nn_entry_verify(t, &err) == DLP_OK);
        /* lazy: in the side file's bytes when of the group */
        bool in_group = strstr(t->name, "g/") == t->name || strstr(t->name, "/g/");
        CHECK(!t->map == !t->raw && (!t->map || (t->map == s.map) == !in_group));
    }
    CHECK(!dlp_nn_file_get(&s, "g/@", DLP_NN_STR) &&
          !dlp_nn_file_get(&s, "blend/0/g/@", DLP_NN_STR));
    float back[BIG];
    CHECK(dlp_nn_file_read_f32(&s, "blend/1/g/x", back, BIG, &err) == DLP_OK &&
          !memcmp(back, x2, sizeof back));
    /* saved again plainly: the plain file */
    CHECK(dlp_nn_file_save(&s, again, &err) == DLP_OK && same_file(again, plain));
    /* the side bytes outlive the file while a reference is kept; a copy
     * of a side entry holds its values */
    const dlp_nn_entry *ey = dlp_nn_file_get(&s, "blend/0/g/y", DLP_NN_U8);
    dlp_nn_map *kept = ey ? dlp_nn_entry_keep(ey) : NULL;
    const uint8_t *kb = ey ? dlp_nn_entry_bytes(ey) : NULL;
    CHECK(kept && kept != s.map && kb);
    CHECK(dlp_nn_entry_keep(dlp_nn_file_get(&s, "a", DLP_NN_F32)) == NULL);
    dlp_nn_file c = {0};
    CHECK(ey && dlp_nn_file_add_copy(&c, "y", ey, &err) == DLP_OK);
    dlp_nn_file_free(&s);
    dlp_nn_file_free(&p);
    CHECK(kb && !memcmp(kb, y, NY));
    dlp_nn_map_release(kept);
    const dlp_nn_entry *ce = dlp_nn_file_get(&c, "y", DLP_NN_U8);
    CHECK(ce && ce->data && ce->count == NY && !memcmp(ce->data, y, NY));
    dlp_nn_file_free(&c);
    /* loaded from another directory by a relative name: the side files
     * are looked for beside the model file */
    char cwd[512];
    DLP_ASSERT(getcwd(cwd, sizeof cwd));
    DLP_ASSERT(chdir(shdir) == 0);
    CHECK(dlp_nn_file_load(&s, "shared.dlpm", &err) == DLP_OK && s.n == 8);
    dlp_nn_file_free(&s);
    DLP_ASSERT(chdir(cwd) == 0);
    unlink(plain);
    unlink(other);
    unlink(none);
    unlink(again);
}

/* What cannot be saved or loaded: a group name that is not a plain name
 * ending in '/' (or too long to name a side file), an entry named like a
 * reference; a model file whose side file is missing (the message names
 * both files) or corrupt, a reference that is not a plain base name ending
 * in .dlps (or longer than 255 bytes), a side file holding a reference,
 * and a side entry named like one of the model file's. Each fails with its
 * status and nothing leaks (the sanitizer build). Uses the files
 * test_model_file_shared left. */
static void test_model_file_shared_bad(void) {
    char shared[400], sp[600], bak[600], ref[400], evil[400];
    snprintf(shared, sizeof shared, "%s/shared.dlpm", shdir);
    snprintf(ref, sizeof ref, "%s/ref.dlpm", shdir);
    snprintf(evil, sizeof evil, "%s/evil.dlps", shdir);
    dlp_error err;
    dlp_nn_file f = {0};
    float a[2] = {1, 2};
    CHECK(dlp_nn_file_add_f32(&f, "g/a", a, 2, &err) == DLP_OK);
    char long_group[240];
    memset(long_group, 'g', sizeof long_group - 2);
    memcpy(long_group + sizeof long_group - 2, "/", 2);   /* 239 bytes */
    const char *bad_groups[] = {"g", "", "/", "../", ".g/", "a/b/", "g@/",
                                long_group};
    for (int i = 0; i < 8; i++)
        CHECK_MSG(dlp_nn_file_save_shared(&f, ref, GROUPS(bad_groups[i]), &err) ==
                  DLP_ERR_ARG, "group '%s'", bad_groups[i]);
    CHECK(dlp_nn_file_save_shared(&f, ref, NULL, &err) == DLP_ERR_ARG);
    CHECK(dlp_nn_file_add_str(&f, "x/@", "g-0.dlps", &err) == DLP_OK);
    CHECK(dlp_nn_file_save(&f, ref, &err) == DLP_ERR_ARG &&
          strstr(err.msg, "x/@"));
    CHECK(dlp_nn_file_save_shared(&f, ref, GROUPS("g/"), &err) == DLP_ERR_ARG);
    CHECK(file_size(ref) < 0);
    dlp_nn_file_free(&f);

    /* the side file missing, then corrupt */
    char side[256] = "";
    DLP_ASSERT(count_side(side, sizeof side) == 2);
    snprintf(sp, sizeof sp, "%s/%s", shdir, side);
    snprintf(bak, sizeof bak, "%s/%s.bak", shdir, side);
    DLP_ASSERT(rename(sp, bak) == 0);
    CHECK(dlp_nn_file_load(&f, shared, &err) == DLP_ERR_IO &&
          strstr(err.msg, "shared.dlpm") && strstr(err.msg, side));
    CHECK(f.n == 0 && f.e == NULL && f.map == NULL);
    DLP_ASSERT(rename(bak, sp) == 0);
    flip_byte(sp, 40);   /* a value of its first array: the file's CRC */
    CHECK(dlp_nn_file_load(&f, shared, &err) == DLP_ERR_FORMAT &&
          strstr(err.msg, "checksum") && strstr(err.msg, side) &&
          strstr(err.msg, "shared.dlpm"));
    flip_byte(sp, 40);
    CHECK(dlp_nn_file_load(&f, shared, &err) == DLP_OK);
    dlp_nn_file_free(&f);
    /* references came with version 4: one in a version-3 file is refused
     * (and a build that reads 3 refuses the version-4 file) */
    set_version(shared, DLP_NN_FILE_VERSION_PLAIN);
    CHECK(dlp_nn_file_load(&f, shared, &err) == DLP_ERR_FORMAT &&
          strstr(err.msg, "version-3") && f.n == 0 && f.map == NULL);
    set_version(shared, DLP_NN_FILE_VERSION);
    CHECK(dlp_nn_file_load(&f, shared, &err) == DLP_OK);
    dlp_nn_file_free(&f);

    /* references that are not plain .dlps base names, or name nothing */
    static char longname[300];
    memset(longname, 'x', sizeof longname - 1);
    memcpy(longname + sizeof longname - 6, ".dlps", 6);
    const char *vals[] = {"../x.dlps", "x.dlpm", ".x.dlps", ".dlps",
                          "a/x.dlps", "x.dlps\\", longname, "nosuch.dlps"};
    for (int i = 0; i < 8; i++) {
        CHECK(dlp_nn_file_add_f32(&f, "a", a, 2, &err) == DLP_OK);
        CHECK(dlp_nn_file_add_str(&f, "g/Q", vals[i], &err) == DLP_OK);
        CHECK(dlp_nn_file_save(&f, ref, &err) == DLP_OK);
        dlp_nn_file_free(&f);
        patch_file(ref, "g/Q", "g/@");
        dlp_status st = dlp_nn_file_load(&f, ref, &err);
        CHECK_MSG(st == (i == 7 ? DLP_ERR_IO : DLP_ERR_FORMAT),
                  "'%s': %d %s", vals[i], (int)st, err.msg);
        CHECK(f.n == 0 && f.map == NULL);
    }
    /* a side file that holds a reference */
    CHECK(dlp_nn_file_add_str(&f, "k/Q", "other.dlps", &err) == DLP_OK);
    CHECK(dlp_nn_file_save(&f, evil, &err) == DLP_OK);
    dlp_nn_file_free(&f);
    patch_file(evil, "k/Q", "k/@");
    CHECK(dlp_nn_file_add_str(&f, "g/Q", "evil.dlps", &err) == DLP_OK);
    CHECK(dlp_nn_file_save(&f, ref, &err) == DLP_OK);
    dlp_nn_file_free(&f);
    patch_file(ref, "g/Q", "g/@");
    CHECK(dlp_nn_file_load(&f, ref, &err) == DLP_ERR_FORMAT &&
          strstr(err.msg, "evil.dlps") && strstr(err.msg, "reference"));
    /* a side entry named like one of the model file's */
    CHECK(dlp_nn_file_add_f32(&f, "g/a", a, 2, &err) == DLP_OK);
    CHECK(dlp_nn_file_save(&f, evil, &err) == DLP_OK);
    dlp_nn_file_free(&f);
    CHECK(dlp_nn_file_add_f32(&f, "g/g/a", a, 2, &err) == DLP_OK);
    CHECK(dlp_nn_file_add_str(&f, "g/Q", "evil.dlps", &err) == DLP_OK);
    CHECK(dlp_nn_file_save(&f, ref, &err) == DLP_OK);
    dlp_nn_file_free(&f);
    patch_file(ref, "g/Q", "g/@");
    CHECK(dlp_nn_file_load(&f, ref, &err) == DLP_ERR_FORMAT &&
          strstr(err.msg, "duplicate"));
    /* clean up the directory */
    unlink(ref);
    unlink(evil);
    unlink(shared);
    for (int i = 0; i < 2 && count_side(side, sizeof side); i++) {
        snprintf(sp, sizeof sp, "%s/%s", shdir, side);
        unlink(sp);
    }
    CHECK(rmdir(shdir) == 0);
}

/* dlp_nn_crc32 (nn_crc.c: PCLMULQDQ folding where the CPU has it) against
 * zlib's crc32 itself: random bytes, every length 0..1200 and some large
 * ones, at every offset 0..15, from a non-zero start, and split in two
 * calls at random points (the value must chain as zlib's does) */
static void test_crc32_vs_zlib(void) {
    size_t cap = (1u << 20) + 64;
    unsigned char *buf = malloc(cap);
    CHECK(buf != NULL);
    if (!buf) return;
    uint64_t s = 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i < cap; i++) {
        s ^= s << 13; s ^= s >> 7; s ^= s << 17;
        buf[i] = (unsigned char)s;
    }
    int bad = 0;
    size_t big[] = {4096, 65536 + 7, 1u << 20};
    for (size_t n = 0; n <= 1200 + 3; n++) {
        size_t len = n <= 1200 ? n : big[n - 1201];
        for (size_t off = 0; off < 16; off += (len > 4096 ? 5 : 1)) {
            uint32_t start = (uint32_t)(len * 2654435761u);
            uint32_t want = (uint32_t)crc32(start, buf + off, (uInt)len);
            if (dlp_nn_crc32(start, buf + off, len) != want) bad++;
            size_t cut = len ? (size_t)(s % len) : 0;
            s ^= s << 13; s ^= s >> 7; s ^= s << 17;
            uint32_t two = dlp_nn_crc32(dlp_nn_crc32(start, buf + off, cut),
                                        buf + off + cut, len - cut);
            if (two != want) bad++;
        }
    }
    CHECK_MSG(bad == 0, "%d CRC mismatches against zlib", bad);
    free(buf);
}

static void test_early_stop(void) {
    dlp_nn_params p = {0};
    dlp_error err;
    CHECK(dlp_nn_params_add(&p, "w", 4, 1) == 0);
    CHECK(dlp_nn_params_alloc(&p, &err) == DLP_OK);
    dlp_nn_early_stop s;
    CHECK(dlp_nn_early_stop_init(&s, &p, 2, 0.0, &err) == DLP_OK);
    double metric[] = {5, 3, 4, 2.5, 2.6, 2.7, 1};
    int stopped_at = -1;
    for (int e = 0; e < 7; e++) {
        p.w[0] = (float)e;
        if (dlp_nn_early_stop_update(&s, &p, metric[e])) { stopped_at = e; break; }
    }
    CHECK(stopped_at == 5);
    CHECK(s.best_epoch == 3 && s.best == 2.5);
    dlp_nn_early_stop_restore(&s, &p);
    CHECK(p.w[0] == 3);
    dlp_nn_early_stop_free(&s);
    dlp_nn_params_free(&p);
}

static void test_params_limits(void) {
    dlp_nn_params p = {0};
    dlp_error err;
    CHECK(dlp_nn_params_add(&p, "a", 2, 3) == 0);
    CHECK(dlp_nn_params_add(&p, "a", 2, 3) == -1); /* duplicate */
    CHECK(dlp_nn_params_add(&p, "this-name-is-far-too-long-for-the-fixed-size-name-field", 1, 1) == -1);
    CHECK(dlp_nn_params_add(&p, "b", 4, 1) == 1);
    CHECK(dlp_nn_params_alloc(&p, &err) == DLP_OK);
    CHECK(p.n == 10 && p.t[1].off == 6);
    CHECK(dlp_nn_params_add(&p, "c", 1, 1) == -1); /* after alloc */
    CHECK(dlp_nn_params_find(&p, "b") == 1 && dlp_nn_params_find(&p, "z") == -1);
    dlp_nn_params_free(&p);
    dlp_nn_params_free(&p); /* twice is harmless */
    dlp_nn_sage_model_cfg bad = {4, 8, 9, 0, 3, 8, 1, DLP_NN_POOL_SUM, false};
    dlp_nn_sage_model m;
    CHECK(dlp_nn_sage_model_init(&m, &bad, 1, &err) == DLP_ERR_ARG); /* 9 layers */
    CHECK(dlp_nn_sage_model_new(&bad, 1, &err) == NULL);
    dlp_nn_sage_model_delete(NULL);
}

static void test_schedules_and_opt(void) {
    CHECK_CLOSE(dlp_nn_lr_cosine(0.1, 0.0, 0, 10), 0.1, 1e-12);
    CHECK_CLOSE(dlp_nn_lr_cosine(0.1, 0.0, 5, 10), 0.05, 1e-12);
    CHECK_CLOSE(dlp_nn_lr_cosine(0.1, 0.01, 10, 10), 0.01, 1e-12);
    /* one-cycle starts at max/div, peaks at max, ends near max/div/final */
    CHECK_CLOSE(dlp_nn_lr_one_cycle(1.0, 0, 100, 0.3, 25, 1e4), 0.04, 1e-12);
    CHECK_CLOSE(dlp_nn_lr_one_cycle(1.0, 29, 100, 0.3, 25, 1e4), 1.0, 1e-12);
    CHECK_CLOSE(dlp_nn_lr_one_cycle(1.0, 99, 100, 0.3, 25, 1e4), 0.04 / 1e4, 1e-12);
    dlp_nn_opt o = dlp_nn_opt_default(DLP_NN_ADAM, 0.01);
    CHECK(o.beta1 == 0.9 && o.beta2 == 0.999 && o.eps == 1e-8 && o.weight_decay == 0);
    CHECK(dlp_nn_opt_default(DLP_NN_ADAMW, 0.01).weight_decay == 0.01);
}

int main(void) {
    mk_tmpdir();
    RUN(test_batch_csr);
    RUN(test_csr_input);
    RUN(test_bad_graphs);
    RUN(test_rng);
    RUN(test_parallel_for);
    RUN(test_exp_diff);
    RUN(test_threads_bit_identical);
    RUN(test_model_empty_batch);
    RUN(test_model_predict_matches_forward);
    RUN(test_training_deterministic);
    RUN(test_model_file_roundtrip);
    RUN(test_model_file_bad);
    RUN(test_model_file_fuzz);
    RUN(test_model_file_lazy);
    RUN(test_model_file_shared);
    RUN(test_model_file_shared_bad);
    RUN(test_model_file_versions);
    RUN(test_crc32_vs_zlib);
    RUN(test_early_stop);
    RUN(test_params_limits);
    RUN(test_schedules_and_opt);
    rmdir(tmpdir);
    return CHECK_DONE();
}
