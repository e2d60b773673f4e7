/*
 * test_tree.c — src/tree/: the XGBoost wrapper against known functions
 * (a step + linear target it must learn, a constant it must reproduce),
 * save/load round trips, bad input (shapes, NaN targets, garbage payloads),
 * the transformer architecture read from graphs exported by PyTorch
 * (tests/gen_model_fixtures.py configs: 2 layers, 4 heads, width 64,
 * vocabulary 1000, FFN 256 or gated 172), and the "xgb" predictor kind
 * end to end: fit on the fixture dataset, write, load, predict, for the
 * language-model layout and the graph layout of inference and training.
 */
#include "check.h"
#include "dlperf.h"
#include "feat/feat.h"
#include "model/model.h"
#include "pred/pred.h"
#include "tree/tree.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FIX "tests/fixtures/"

static double u01(uint64_t *s) {
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(*s >> 11) / 9007199254740992.0;
}

/* y = 2 x0 + [x1 > 0.5], x2 noise: trees must get it within 0.1 RMSE */
static void test_learns_known_function(void) {
    enum { N = 600, D = 3, NT = 200 };
    static float x[N * D], y[N], xt[NT * D], yt[NT], p[NT];
    uint64_t s = 7;
    for (int i = 0; i < N + NT; i++) {
        float *r = i < N ? x + i * D : xt + (i - N) * D;
        for (int k = 0; k < D; k++) r[k] = (float)u01(&s);
        float v = 2 * r[0] + (r[1] > 0.5f);
        if (i < N) y[i] = v; else yt[i - N] = v;
    }
    dlp_tree_params tp;
    dlp_tree_params_default(&tp);
    tp.rounds = 150;
    tp.threads = 1;
    dlp_tree *t = NULL;
    dlp_error err;
    CHECK_MSG(dlp_tree_train(x, N, D, y, &tp, &t, &err) == DLP_OK, "%s", err.msg);
    CHECK(dlp_tree_nfeatures(t) == D);
    CHECK(dlp_tree_predict(t, xt, NT, D, p, &err) == DLP_OK);
    double se = 0;
    for (int i = 0; i < NT; i++) se += (p[i] - yt[i]) * (p[i] - yt[i]);
    double rmse = sqrt(se / NT);
    CHECK_MSG(rmse < 0.1, "rmse %g", rmse);
    /* save / load: the same numbers bit for bit, from UBJSON (what is
     * written) and from JSON (what older files hold) */
    void *buf = NULL, *js = NULL;
    size_t len = 0, jlen = 0;
    CHECK(dlp_tree_save(t, &buf, &len, &err) == DLP_OK);
    CHECK(len > 100 && ((char *)buf)[0] == '{');
    CHECK(dlp_tree_format_of(buf, len) == DLP_TREE_UBJ);
    CHECK(dlp_ubj_check(buf, len, NULL));
    CHECK(dlp_tree_save_as(t, DLP_TREE_JSON, &js, &jlen, &err) == DLP_OK);
    CHECK(dlp_tree_format_of(js, jlen) == DLP_TREE_JSON);
    CHECK(!dlp_ubj_check(js, jlen, NULL));
    static float p2[NT], p3[NT];
    dlp_tree *t2 = NULL, *tj = NULL;
    CHECK_MSG(dlp_tree_load(buf, len, &t2, &err) == DLP_OK, "%s", err.msg);
    CHECK(t2 && dlp_tree_predict(t2, xt, NT, D, p2, &err) == DLP_OK);
    CHECK(!memcmp(p, p2, sizeof p));
    CHECK_MSG(dlp_tree_load(js, jlen, &tj, &err) == DLP_OK, "%s", err.msg);
    CHECK(tj && dlp_tree_predict(tj, xt, NT, D, p3, &err) == DLP_OK);
    CHECK(!memcmp(p, p3, sizeof p));
    /* JSON -> UBJSON again: the same bytes */
    void *again = NULL;
    size_t alen = 0;
    CHECK(tj && dlp_tree_save(tj, &again, &alen, &err) == DLP_OK);
    CHECK(alen == len && again && !memcmp(again, buf, len));
    free(again);
    /* a deliberately wrong width is refused */
    CHECK(dlp_tree_predict(t2, xt, NT, D + 1, p2, &err) == DLP_ERR_ARG);
    CHECK(strstr(err.msg, "expects 3 features") != NULL);
    /* truncated payloads are refused, not crashed on: every length of the
     * first 64 bytes and a few past the middle */
    dlp_tree *t3 = NULL;
    for (size_t n = 0; n < len; n += n < 64 ? 1 : len / 7) {
        CHECK(dlp_tree_load(buf, n, &t3, &err) == DLP_ERR_FORMAT && !t3);
        CHECK(dlp_tree_load(js, n < jlen ? n : jlen - 1, &t3, &err) !=
                  DLP_OK && !t3);
    }
    /* damaged structure: a key length's marker, a length past the end */
    char *mut = malloc(len);
    memcpy(mut, buf, len);
    mut[1] = 'x';
    CHECK(dlp_tree_load(mut, len, &t3, &err) == DLP_ERR_FORMAT && !t3);
    CHECK(strstr(err.msg, "XGBoost") != NULL);
    memcpy(mut, buf, len);
    mut[2] = 0x7f;
    CHECK(dlp_tree_load(mut, len, &t3, &err) == DLP_ERR_FORMAT && !t3);
    CHECK(strstr(err.msg, "malformed XGBoost UBJSON at byte") != NULL);
    free(mut);
    /* damaged JSON text: XGBoost's parser refuses it */
    mut = malloc(jlen);
    memcpy(mut, js, jlen);
    memset(mut + jlen / 3, 'x', 40);
    CHECK(dlp_tree_load(mut, jlen, &t3, &err) != DLP_OK && !t3);
    CHECK(strstr(err.msg, "XGBoost") != NULL);
    free(mut);
    free(buf);
    free(js);
    dlp_tree_free(t);
    dlp_tree_free(t2);
    dlp_tree_free(tj);
    dlp_tree_free(NULL);
}

/* dlp_ubj_check on hand-written UBJSON (big-endian lengths) */
static bool ubj(const char *s, size_t n) { return dlp_ubj_check(s, n, NULL); }
#define UBJ(lit) ubj(lit, sizeof(lit) - 1)

static void test_ubj_check(void) {
    CHECK(UBJ("{}"));
    CHECK(UBJ("{i\x01" "aZ}"));                          /* {"a": null} */
    CHECK(UBJ("{L\0\0\0\0\0\0\0\x02" "abSi\x02hi}"));    /* {"ab": "hi"} */
    CHECK(UBJ("[$d#i\x02\x3f\x80\0\0\x40\0\0\0"));       /* [1.0f, 2.0f] */
    CHECK(!UBJ("[$d#i\x02\x3f\x80\0\0\x40\0\0"));        /* one byte short */
    CHECK(UBJ("[#i\x02i\x01U\xff"));                     /* counted, untyped */
    CHECK(UBJ("[$S#i\x02i\x01" "ai\x01" "b"));           /* typed strings */
    CHECK(UBJ("{$l#i\x01i\x01k\0\0\0\x07"));             /* typed object */
    CHECK(UBJ("[NTFZi\x05]"));                           /* no-op, constants */
    CHECK(UBJ("SU\x03" "abc"));                          /* a bare string */
    CHECK(!UBJ("{i\x01" "aZ"));                          /* unterminated */
    CHECK(!UBJ("{i\xff" "aZ}"));                         /* negative length */
    CHECK(!UBJ("{L\x7f\0\0\0\0\0\0\0aZ}"));              /* length past the end */
    CHECK(!UBJ("[$Z#L\x7f\xff\xff\xff\xff\xff\xff\xff")); /* free elements */
    CHECK(!UBJ("[$d]"));                                 /* '$' without '#' */
    CHECK(!UBJ("[$[#i\x01]"));                           /* typed containers */
    CHECK(!UBJ("[#i\x03i\x01"));                         /* count past the end */
    CHECK(!UBJ("{}x"));                                  /* trailing bytes */
    CHECK(!UBJ("{i\x01" "aq}"));                         /* unknown marker */
    CHECK(!UBJ("{i\x01" "a}"));                          /* key without value */
    CHECK(!dlp_ubj_check(NULL, 4, NULL) && !UBJ(""));
    size_t at = 0;
    CHECK(!dlp_ubj_check("{i\x01" "aZ}zz", 8, &at) && at == 6);
    /* nesting: 64 levels pass, 70 do not */
    char deep[200];
    for (int d = 64; d <= 70; d += 6) {
        int n = 0;
        for (int i = 0; i <= d; i++) deep[n++] = '[';
        for (int i = 0; i <= d; i++) deep[n++] = ']';
        CHECK(dlp_ubj_check(deep, (size_t)n, NULL) == (d == 64));
    }
    /* formats */
    CHECK(dlp_tree_format_of("{\"learner\":{}}", 14) == DLP_TREE_JSON);
    CHECK(dlp_tree_format_of("{L}", 3) == DLP_TREE_UBJ);
    CHECK(dlp_tree_format_of("{x}", 3) < 0);
    CHECK(dlp_tree_format_of("{\0", 2) < 0);
    CHECK(dlp_tree_format_of("[]", 2) < 0);
    CHECK(dlp_tree_format_of(NULL, 0) < 0);
}

static void test_constant_target(void) {
    float x[8] = {0, 1, 2, 3, 4, 5, 6, 7}, y[8], p[8];
    for (int i = 0; i < 8; i++) y[i] = 3.25f;
    dlp_tree_params tp;
    dlp_tree_params_default(&tp);
    tp.subsample = 1;
    tp.rounds = 200;
    tp.eta = 0.3;
    dlp_tree *t = NULL;
    dlp_error err;
    CHECK(dlp_tree_train(x, 8, 1, y, &tp, &t, &err) == DLP_OK);
    CHECK(dlp_tree_predict(t, x, 8, 1, p, &err) == DLP_OK);
    for (int i = 0; i < 8; i++) CHECK_CLOSE(p[i], 3.25, 1e-3);
    dlp_tree_free(t);
}

/* Mode and target defaults fill only the fields left at 0: every mode's
 * boosters are deeper and longer than the generic ones (since the
 * eighty-second session inference's too), the LLM energy boosters sample
 * fewer rows and columns a tree, the other targets the generic 0.8, and
 * what dlperf tree fit's --rounds / --depth / --eta / --subsample /
 * --colsample set stays. */
static void test_params_for_mode(void) {
    dlp_tree_params g, p;
    dlp_tree_params_default(&g);
    dlp_tree_fit_opts o;
    dlp_tree_fit_opts_default(&o);
    CHECK(o.tp.rounds == 0 && o.tp.max_depth == 0 && o.tp.eta == 0 &&
          o.tp.subsample == 0 && o.tp.colsample == 0);
    p = o.tp;
    dlp_tree_params_for_mode(&p, DLP_MODE_LLM);
    CHECK(p.rounds == 1500 && p.max_depth == 5);
    CHECK_CLOSE(p.eta, 0.02, 1e-12);
    CHECK(p.max_depth > g.max_depth && p.rounds > g.rounds);
    CHECK(p.subsample == 0 && p.colsample == 0);   /* the target's */
    CHECK_CLOSE(p.min_child_weight, g.min_child_weight, 1e-12);
    /* the LLM energy boosters sample half the rows and features, the
     * others the generic 0.8 */
    dlp_tree_params q = p;
    dlp_tree_params_for_target(&q, DLP_MODE_LLM, DLP_T_LLM_ENERGY_PER_SAMPLE);
    CHECK_CLOSE(q.subsample, 0.5, 1e-12);
    CHECK_CLOSE(q.colsample, 0.5, 1e-12);
    q = p;
    dlp_tree_params_for_target(&q, DLP_MODE_LLM, DLP_T_LLM_THROUGHPUT);
    CHECK_CLOSE(q.subsample, g.subsample, 1e-12);
    CHECK_CLOSE(q.colsample, g.colsample, 1e-12);
    q = p;
    q.colsample = 0.9;
    dlp_tree_params_for_target(&q, DLP_MODE_LLM, DLP_T_LLM_ENERGY_PER_SAMPLE);
    CHECK_CLOSE(q.colsample, 0.9, 1e-12);
    CHECK_CLOSE(q.subsample, 0.5, 1e-12);
    p = o.tp;
    dlp_tree_params_for_mode(&p, DLP_MODE_INFERENCE);
    CHECK(p.rounds == 1500 && p.max_depth == 5);
    CHECK_CLOSE(p.eta, 0.02, 1e-12);
    dlp_tree_params_for_target(&p, DLP_MODE_INFERENCE, DLP_T_INF_ENERGY_J);
    CHECK_CLOSE(p.subsample, g.subsample, 1e-12);
    CHECK_CLOSE(p.colsample, g.colsample, 1e-12);
    p = o.tp;
    dlp_tree_params_for_mode(&p, DLP_MODE_TRAINING);
    CHECK(p.rounds == 1500 && p.max_depth == 5);
    CHECK_CLOSE(p.eta, 0.02, 1e-12);
    p = o.tp;
    p.rounds = 30;
    p.eta = 0.5;
    dlp_tree_params_for_mode(&p, DLP_MODE_LLM);
    CHECK(p.rounds == 30 && p.max_depth == 5);
    CHECK_CLOSE(p.eta, 0.5, 1e-12);
    /* the split search: the generic boosters (convolution workspaces)
     * keep the exact one; the modes' take the histogram method unless
     * told (tree fit --method exact) */
    CHECK(g.hist == 0 && o.tp.hist < 0);
    p = o.tp;
    dlp_tree_params_for_mode(&p, DLP_MODE_INFERENCE);
    CHECK(p.hist == 1);
    dlp_tree_params_of_mode(&p, DLP_MODE_TRAINING);
    CHECK(p.hist == 1);
    p = o.tp;
    p.hist = 0;
    dlp_tree_params_for_mode(&p, DLP_MODE_LLM);
    CHECK(p.hist == 0);
}

static void test_bad_input(void) {
    float x[4] = {1, 2, 3, 4}, y[4] = {1, NAN, 3, 4};
    dlp_tree_params tp;
    dlp_tree_params_default(&tp);
    dlp_tree *t = NULL;
    dlp_error err;
    CHECK(dlp_tree_train(x, 4, 1, y, &tp, &t, &err) == DLP_ERR_ARG);
    CHECK(strstr(err.msg, "not finite") && !t);
    y[1] = 2;
    CHECK(dlp_tree_train(x, 1, 1, y, &tp, &t, &err) == DLP_ERR_ARG);
    CHECK(dlp_tree_train(x, 4, 0, y, &tp, &t, &err) == DLP_ERR_ARG);
    tp.rounds = 0;
    CHECK(dlp_tree_train(x, 4, 1, y, &tp, &t, &err) == DLP_ERR_ARG);
    CHECK(dlp_tree_load("garbage", 7, &t, &err) == DLP_ERR_FORMAT);
    CHECK(dlp_tree_load("{}", 2, &t, &err) != DLP_OK);
    CHECK(dlp_tree_load(NULL, 0, &t, &err) == DLP_ERR_FORMAT);
    CHECK(dlp_tree_predict(NULL, x, 1, 1, y, &err) == DLP_ERR_ARG);
}

/* ---- architecture from graphs ---------------------------------------------- */

/* reads the arch both ways; they must agree */
static void arch_of(const char *file, dlp_llm_arch *a) {
    memset(a, 0, sizeof *a);
    dlp_model *m = NULL;
    dlp_error err;
    if (dlp_model_open(file, &m, &err)) {
        CHECK_MSG(0, "%s: %s", file, err.msg);
        return;
    }
    dlp_model_set_batch(m, 2, &err);
    dlp_model_bind_dim(m, "seq", 16, &err);
    CHECK(dlp_model_analyze(m, &err) == DLP_OK);
    dlp_llm_arch_read(&m->graph, a);
    dlp_feat_graph fg;
    CHECK(dlp_feat_graph_build(&fg, &m->graph, 2, 16, 0, 0, &err) == DLP_OK);
    dlp_llm_arch b;
    dlp_llm_arch_from_feat(&fg, &b);
    CHECK_MSG(!memcmp(a, &b, sizeof b),
              "%s: graph %lld/%lld/%lld/%lld/%lld/%d feat %lld/%lld/%lld/%lld/"
              "%lld/%d", file, (long long)a->layers, (long long)a->heads,
              (long long)a->hidden, (long long)a->vocab,
              (long long)a->intermediate, a->gated, (long long)b.layers,
              (long long)b.heads, (long long)b.hidden, (long long)b.vocab,
              (long long)b.intermediate, b.gated);
    dlp_feat_graph_free(&fg);
    dlp_model_free(m);
}

static void test_arch_read(void) {
    dlp_llm_arch a;
    arch_of(FIX "models/bert_tiny.onnx", &a);
    CHECK(a.layers == 2 && a.heads == 4 && a.hidden == 64 && a.vocab == 1000);
    CHECK(a.intermediate == 256 && !a.gated);
    arch_of(FIX "models/gpt_tiny.onnx", &a);
    CHECK(a.layers == 2 && a.heads == 4 && a.hidden == 64 && a.vocab == 1000);
    CHECK(a.intermediate == 256 && !a.gated);
    arch_of(FIX "models/llama_tiny.onnx", &a);
    CHECK_MSG(a.layers == 2 && a.heads == 4 && a.hidden == 64 &&
                  a.vocab == 1000,
              "%lld %lld %lld %lld", (long long)a.layers, (long long)a.heads,
              (long long)a.hidden, (long long)a.vocab);
    CHECK(a.intermediate == 172 && a.gated);
    /* a CNN is not a transformer */
    arch_of(FIX "models/resnet18.onnx", &a);
    CHECK(a.layers == 0 && a.hidden == 0 && a.vocab == 0);
    dlp_llm_arch_read(NULL, &a);
    CHECK(a.layers == 0);
}

/* ---- the predictor kind ------------------------------------------------------ */

/* the xgb model file at path, loaded with the tree kind; NULL (and a
 * failed check) when it does not load */
static dlp_predictor *load_xgb(const char *path) {
    static const dlp_pred_vtable *const extra[] = {&dlp_tree_pred_vtable, NULL};
    dlp_predictor *p = NULL;
    dlp_error err;
    CHECK_MSG(dlp_predictor_load(path, extra, &p, &err) == DLP_OK, "%s",
              err.msg);
    CHECK(!p || !strcmp(p->meta.kind, "xgb"));
    return p;
}

/* A request on the H100 (CUDA-graph runtime unless set otherwise). */
static dlp_pred_config h100_config(dlp_pred_mode mode, dlp_precision prec,
                                   int64_t batch, int64_t seq) {
    dlp_pred_config c;
    dlp_pred_config_init(&c);
    dlp_error err;
    CHECK(dlp_device_find("h100", &c.device, &err) == DLP_OK);
    c.mode = mode;
    c.runtime = DLP_RT_GRAPH;
    c.precision = prec;
    c.batch = batch;
    c.seq = seq;
    return c;
}

/* The fit's "... CV: MAPE P% over N (eager E% over NE, graph G% over NG)"
 * progress lines, parsed. */
typedef struct {
    int n;
    double pooled[DLP_TREE_NT], mape[DLP_TREE_NT][2];
    int total[DLP_TREE_NT], count[DLP_TREE_NT][2], split[DLP_TREE_NT];
} runtime_lines;

static void collect_runtime_line(void *user, const char *line) {
    runtime_lines *r = user;
    const char *cv = strstr(line, "CV: MAPE ");
    if (!cv || r->n >= DLP_TREE_NT) return;
    int i = r->n++;
    r->split[i] = 0;
    if (sscanf(cv, "CV: MAPE %lf%% over %d", &r->pooled[i], &r->total[i]) != 2)
        return;
    const char *e = strstr(cv, "(eager "), *g = strstr(cv, "graph ");
    r->split[i] += e && sscanf(e, "(eager %lf%% over %d", &r->mape[i][0],
                               &r->count[i][0]) == 2;
    r->split[i] += g && sscanf(g, "graph %lf%% over %d", &r->mape[i][1],
                               &r->count[i][1]) == 2;
}

static void test_fit_write_load_predict(void) {
    dlp_dataset *ds = NULL;
    dlp_error err;
    CHECK_MSG(dlp_dataset_open(FIX "dataset/valid", &ds, &err) == DLP_OK, "%s",
              err.msg);
    if (!ds) return;
    dlp_tree_fit_opts o;
    dlp_tree_fit_opts_default(&o);
    o.tp.rounds = 30;
    o.tp.threads = 1;
    o.compare = "roofline";
    char path[] = "/tmp/dlp_test_tree_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    close(fd);
    dlp_tree_report rep;
    CHECK_MSG(dlp_tree_fit(ds, &o, path, &rep, &err) == DLP_OK, "%s",
              err.msg);
    CHECK(rep.examples == 6 && rep.graphs == 6 && rep.models == 2);
    /* rows: xgb and roofline for every target, same held-out count */
    int n_xgb = 0, n_roof = 0;
    for (int i = 0; i < rep.n_rows; i++) {
        const dlp_tree_row *r = &rep.rows[i];
        if (r->family[0]) continue;
        if (!strcmp(r->kind, "xgb")) {
            n_xgb++;
            CHECK(r->n > 0 && isfinite(r->mape));
        }
        if (!strcmp(r->kind, "roofline")) n_roof++;
    }
    CHECK(n_xgb == DLP_TREE_NT && n_roof == DLP_TREE_NT);
    dlp_tree_report_free(&rep);
    /* a device without rows: too few examples, a clear error */
    o.device = "A100-SXM4-80GB";
    o.compare = NULL;
    CHECK(dlp_tree_fit(ds, &o, NULL, &rep, &err) != DLP_OK);
    CHECK(strstr(err.msg, "llm") != NULL && rep.n_rows == 0);
    dlp_dataset_free(ds);

    static const dlp_pred_vtable *const extra[] = {&dlp_tree_pred_vtable, NULL};
    dlp_predictor *p = load_xgb(path);
    if (p) {
        CHECK(p->meta.mode == DLP_MODE_LLM);
        CHECK(p->meta.targets >> DLP_T_LLM_THROUGHPUT & 1);
        CHECK(dlp_pred_meta_has_device(&p->meta, "H100-SXM5-80GB"));
        CHECK(isfinite(p->meta.resid_lo[DLP_T_LLM_MEMORY_MIB]));
        /* the precisions of its examples, recorded for the OOD flag */
        CHECK(p->meta.data_precisions &&
              p->meta.data_precisions == p->meta.precisions);
        /* predict a real transformer graph: finite values, interval around */
        dlp_model *m = NULL;
        CHECK(dlp_model_open(FIX "models/gpt_tiny.onnx", &m, &err) == DLP_OK);
        dlp_model_set_batch(m, 4, &err);
        dlp_model_bind_dim(m, "seq", 128, &err);
        CHECK(dlp_model_analyze(m, &err) == DLP_OK);
        dlp_pred_config c = h100_config(DLP_MODE_LLM, DLP_PREC_BF16, 4, 128);
        dlp_pred_input in = {&m->graph, &c, NULL, NULL};
        dlp_pred_result r1, r2;
        dlp_pred_result_init(&r1);
        dlp_pred_result_init(&r2);
        CHECK_MSG(dlp_predictor_predict(p, &in, &r1, &err) == DLP_OK, "%s",
                  err.msg);
        CHECK(dlp_predictor_predict(p, &in, &r2, &err) == DLP_OK);
        const dlp_pred_value *v = &r1.v[DLP_T_LLM_THROUGHPUT];
        CHECK(v->valid && v->value > 0 && v->lo <= v->value && v->hi >= v->value);
        CHECK(!strcmp(v->by, "xgb"));
        CHECK(r1.v[DLP_T_LLM_MEMORY_MIB].valid);
        CHECK(v->value == r2.v[DLP_T_LLM_THROUGHPUT].value);   /* determinism */
        /* the model is the base times exp(tree): check the base is used */
        dlp_feat_graph fg;
        CHECK(dlp_feat_graph_build(&fg, &m->graph, 4, 128, 0, 0, &err) == DLP_OK);
        float x[DLP_TREE_NFEAT];
        double base[DLP_TREE_NT];
        dlp_tree_llm_features(&fg, &c, NULL, x, base);
        CHECK(x[0] == 2 && x[1] == 4 && x[2] == 64);   /* layers heads hidden */
        CHECK(base[0] > 0 && base[1] > 0 && base[2] > 0);
        dlp_feat_graph_free(&fg);
        dlp_model_free(m);
        /* a CNN is flagged out of distribution */
        CHECK(dlp_model_open(FIX "models/resnet18.onnx", &m, &err) == DLP_OK);
        dlp_model_set_batch(m, 4, &err);
        CHECK(dlp_model_analyze(m, &err) == DLP_OK);
        in.graph = &m->graph;
        dlp_pred_result_init(&r1);
        CHECK(dlp_predictor_predict(p, &in, &r1, &err) == DLP_OK);
        CHECK(r1.ood && strstr(r1.ood_reason, "not a transformer"));
        dlp_model_free(m);
        dlp_predictor_free(p);
    }
    /* without the extra kind the file is refused by name */
    CHECK(dlp_predictor_load(path, NULL, &p, &err) == DLP_ERR_UNSUPPORTED);
    CHECK(strstr(err.msg, "xgb") != NULL);
    /* a wrong tree schema is refused */
    dlp_nn_file f = {0};
    CHECK(dlp_nn_file_load(&f, path, &err) == DLP_OK);
    for (int i = 0; i < f.n; i++)
        if (!strcmp(f.e[i].name, "xgb/schema")) ((int64_t *)f.e[i].data)[0] = 99;
    CHECK(dlp_predictor_from_file(&f, extra, &p, &err) == DLP_ERR_UNSUPPORTED);
    CHECK(strstr(err.msg, "schema 99") != NULL);
    dlp_nn_file_free(&f);
    unlink(path);
}

/* The fixture dataset's language-model examples into *E (*ds open; free
 * both); false, with a failed check, when they cannot be built. */
static bool fixture_llm_examples(dlp_dataset **ds, dlp_examples *E) {
    dlp_error err;
    *ds = NULL;
    if (dlp_dataset_open(FIX "dataset/valid", ds, &err)) {
        CHECK_MSG(0, "%s", err.msg);
        return false;
    }
    if (dlp_examples_build(E, *ds, DLP_MODE_LLM, NULL, &err)) {
        CHECK_MSG(0, "%s", err.msg);
        dlp_dataset_free(*ds);
        return false;
    }
    return true;
}

/* The xgb predictor of an in-memory model file; NULL, with a failed
 * check, when it does not load. */
static dlp_predictor *xgb_from_file(const dlp_nn_file *f) {
    static const dlp_pred_vtable *const extra[] = {&dlp_tree_pred_vtable, NULL};
    dlp_predictor *p = NULL;
    dlp_error err;
    CHECK_MSG(dlp_predictor_from_file(f, extra, &p, &err) == DLP_OK, "%s",
              err.msg);
    return p;
}

/* the src/pred trainer signature: train, write, load, predict */
static void test_pred_train_signature(void) {
    dlp_dataset *ds = NULL;
    dlp_error err;
    dlp_examples E;
    if (!fixture_llm_examples(&ds, &E)) return;
    int32_t idx[64];
    int n = E.n < 64 ? E.n : 64;
    for (int i = 0; i < n; i++) idx[i] = i;
    dlp_pred_meta meta;
    dlp_pred_meta_init(&meta, "xgb", DLP_MODE_LLM);
    dlp_nn_file f = {0};
    dlp_train_opts o;
    dlp_train_opts_init(&o);
    CHECK_MSG(dlp_tree_pred_train(&E, idx, n - 2, idx + n - 2, 2, &o, &meta,
                                  &f, &err) == DLP_OK, "%s", err.msg);
    CHECK(meta.targets >> DLP_T_LLM_THROUGHPUT & 1);
    CHECK(dlp_pred_meta_write(&meta, &f, &err) == DLP_OK);
    dlp_predictor *p = xgb_from_file(&f);
    dlp_pred_result r;
    if (p) {
        CHECK(dlp_pred_example(p, &E, 0, &r, &err) == DLP_OK);
        CHECK(r.v[DLP_T_LLM_THROUGHPUT].valid &&
              r.v[DLP_T_LLM_THROUGHPUT].value > 0);
    }
    dlp_predictor_free(p);
    dlp_nn_file_free(&f);
    /* inference has its own (graph) layout: trains, and says so in the file */
    dlp_examples Ei;
    CHECK(dlp_examples_build(&Ei, ds, DLP_MODE_INFERENCE, NULL, &err) == DLP_OK);
    dlp_nn_file g = {0};
    dlp_pred_meta mi;
    dlp_pred_meta_init(&mi, "xgb", DLP_MODE_INFERENCE);
    int ni = Ei.n < 64 ? Ei.n : 64;
    for (int i = 0; i < ni; i++) idx[i] = i;
    CHECK_MSG(dlp_tree_pred_train(&Ei, idx, ni, NULL, 0, &o, &mi, &g, &err) ==
              DLP_OK, "%s", err.msg);
    CHECK(mi.targets >> DLP_T_INF_LATENCY_MS & 1);
    CHECK(!(mi.targets >> DLP_T_LLM_THROUGHPUT & 1));
    const dlp_nn_entry *se = dlp_nn_file_get(&g, "xgb/schema", DLP_NN_I64);
    CHECK(se && ((const int64_t *)se->data)[0] == DLP_TREE_GSCHEMA &&
          ((const int64_t *)se->data)[1] == DLP_TREE_NGFEAT);
    CHECK(dlp_tree_layout_of(DLP_MODE_TRAINING)->schema == DLP_TREE_TSCHEMA &&
          DLP_TREE_TSCHEMA != DLP_TREE_GSCHEMA);
    dlp_nn_file_free(&g);
    dlp_examples_free(&Ei);
    dlp_examples_free(&E);
    dlp_dataset_free(ds);
}

/* The graph layout (inference, training): the per-category roofline
 * times add up to the featurizer's roofline sum and the per-category
 * kernels to its kernel count; names cover every feature once; bases are
 * the documented ones; fit on the fixture dataset's inference rows, write,
 * load, predict a CNN. */
static void test_graph_layout(void) {
    const dlp_tree_layout *L = dlp_tree_layout_of(DLP_MODE_INFERENCE);
    CHECK(L && L->nfeat == DLP_TREE_NGFEAT && L->schema == DLP_TREE_GSCHEMA);
    CHECK(L && L->targets[0] == DLP_T_INF_LATENCY_MS);
    const dlp_tree_layout *T = dlp_tree_layout_of(DLP_MODE_TRAINING);
    CHECK(T && T->targets[0] == DLP_T_TRAIN_STEP_MS && T->nfeat == L->nfeat &&
          T->schema == DLP_TREE_TSCHEMA);
    if (!L || !T) return;
    for (int i = 0; i < L->nfeat; i++) {
        const char *a = dlp_tree_feature_name(L, i);
        CHECK_MSG(a && a[0], "feature %d has no name", i);
        for (int j = 0; a && j < i; j++)
            CHECK_MSG(strcmp(a, dlp_tree_feature_name(L, j)), "feature %d and "
                      "%d are both '%s'", j, i, a);
    }
    CHECK(dlp_tree_feature_name(L, L->nfeat) == NULL);
    dlp_error err;
    dlp_model *m = NULL;
    CHECK(dlp_model_open(FIX "models/resnet18.onnx", &m, &err) == DLP_OK);
    if (!m) return;
    dlp_model_set_batch(m, 8, &err);
    CHECK(dlp_model_analyze(m, &err) == DLP_OK);
    dlp_feat_graph fg;
    CHECK(dlp_feat_graph_build(&fg, &m->graph, 8, 0, 0, 0, &err) == DLP_OK);
    dlp_pred_config c = h100_config(DLP_MODE_INFERENCE, DLP_PREC_FP16, 8, 0);
    dlp_feat_roofline r;
    dlp_feat_roofline_of(&fg, &c, &r);
    const double *roof = r.roof_cat_ms, *kern = r.kernels_cat;
    double sr = 0, sk = 0;
    for (int k = 0; k < DLP_FEAT_NCAT; k++) {
        CHECK(roof[k] >= 0 && kern[k] >= 0);
        sr += roof[k];
        sk += kern[k];
    }
    CHECK_MSG(fabs(sr - r.roofline_ms) <= 1e-9 * r.roofline_ms, "%g vs %g", sr,
              r.roofline_ms);
    CHECK(sk == r.kernels && sk > 0);
    for (int k = 1; k < DLP_FEAT_NCAT; k++)   /* a ResNet's time is in its */
        CHECK(roof[0] > roof[k]);             /* convolutions above all */
    /* ResNet-18's 20 convolutions, each with its folded BatchNorm's three
     * kernels, and cuDNN's three layout conversions around the 17 spatial
     * ones at fp16 (feat_kern.c) */
    CHECK(kern[0] == 20 * 4 + 17 * 3);
    float x[DLP_TREE_NFEAT_MAX];
    double base[DLP_TREE_NT];
    dlp_tree_features(L, &fg, &c, NULL, x, base);
    CHECK(fabs(base[0] - r.kernel_ms) <= 1e-12 * r.kernel_ms);
    CHECK(fabs(base[1] - dlp_feat_mem_estimate_mib(&fg, &c)) < 1e-9);
    CHECK(fabs(base[2] - c.device.tdp_w * r.kernel_ms / 1e3) < 1e-9);
    c.runtime = DLP_RT_EAGER;
    dlp_tree_features(L, &fg, &c, NULL, x, base);
    CHECK(fabs(base[0] - (r.roofline_ms + r.launch_ms)) <= 1e-9 * base[0]);
    c.mode = DLP_MODE_TRAINING;
    dlp_tree_features(T, &fg, &c, NULL, x, base);
    dlp_feat_roofline_of(&fg, &c, &r);
    /* the step: kernel floors x 4.0 + 0.0537 ms per forward kernel */
    CHECK(r.kernels > 0 && r.kernel_ms > 0);
    CHECK(fabs(base[0] - (4.0 * r.kernel_ms + 0.0537 * r.kernels)) <= 1e-9 * base[0]);
    CHECK(base[2] == c.device.tdp_w);
    dlp_feat_graph_free(&fg);

    /* fit, write, load, predict */
    dlp_dataset *ds = NULL;
    CHECK_MSG(dlp_dataset_open(FIX "dataset/valid", &ds, &err) == DLP_OK, "%s",
              err.msg);
    dlp_tree_fit_opts o;
    dlp_tree_fit_opts_default(&o);
    o.mode = DLP_MODE_INFERENCE;
    o.tp.rounds = 30;
    o.tp.threads = 1;
    runtime_lines rl = {0};
    o.progress = collect_runtime_line;
    o.user = &rl;
    char path[] = "/tmp/dlp_test_treeg_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    close(fd);
    dlp_tree_report rep;
    CHECK_MSG(ds && dlp_tree_fit(ds, &o, path, &rep, &err) == DLP_OK, "%s",
              err.msg);
    int n_xgb = 0;
    for (int i = 0; i < rep.n_rows; i++)
        if (!rep.rows[i].family[0] && !strcmp(rep.rows[i].kind, "xgb")) {
            n_xgb++;
            CHECK(dlp_target_mode(rep.rows[i].target) == DLP_MODE_INFERENCE);
        }
    CHECK(n_xgb == DLP_TREE_NT);
    /* the progress line of each target splits its held-out MAPE by runtime
     * (the layout's booster groups): both runtimes' rows are in the
     * fixture, their counts add up to the pooled count and their MAPEs,
     * weighted by count, to the pooled MAPE (each printed to 0.01) */
    CHECK(rl.n == DLP_TREE_NT);
    for (int i = 0; i < rl.n; i++) {
        CHECK(rl.split[i] == 2);
        CHECK(rl.count[i][0] + rl.count[i][1] == rl.total[i]);
        double w = (rl.mape[i][0] * rl.count[i][0] +
                    rl.mape[i][1] * rl.count[i][1]) /
                   (rl.total[i] > 0 ? rl.total[i] : 1);
        CHECK_MSG(fabs(w - rl.pooled[i]) <= 0.011, "%g vs %g", w,
                  rl.pooled[i]);
    }
    dlp_tree_report_free(&rep);
    dlp_dataset_free(ds);
    static const dlp_pred_vtable *const extra[] = {&dlp_tree_pred_vtable, NULL};
    dlp_predictor *p = load_xgb(path);
    if (p) {
        CHECK(p->meta.mode == DLP_MODE_INFERENCE);
        c.mode = DLP_MODE_INFERENCE;
        c.runtime = DLP_RT_GRAPH;
        dlp_pred_input in = {&m->graph, &c, NULL, NULL};
        dlp_pred_result res;
        dlp_pred_result_init(&res);
        CHECK_MSG(dlp_predictor_predict(p, &in, &res, &err) == DLP_OK, "%s",
                  err.msg);
        const dlp_pred_value *v = &res.v[DLP_T_INF_LATENCY_MS];
        CHECK(v->valid && v->value > 0 && isfinite(v->value));
        CHECK(v->by && !strcmp(v->by, "xgb"));
        CHECK(res.v[DLP_T_INF_MEMORY_MIB].valid &&
              res.v[DLP_T_INF_MEMORY_MIB].value > 0);
        CHECK(!res.ood || !strstr(res.ood_reason, "transformer"));
        dlp_predictor_free(p);
    }
    /* the file of another layout's schema is refused, naming the mode */
    dlp_nn_file f = {0};
    CHECK(dlp_nn_file_load(&f, path, &err) == DLP_OK);
    for (int i = 0; i < f.n; i++)
        if (!strcmp(f.e[i].name, "xgb/schema"))
            ((int64_t *)f.e[i].data)[0] = DLP_TREE_SCHEMA;
    CHECK(dlp_predictor_from_file(&f, extra, &p, &err) == DLP_ERR_UNSUPPORTED);
    CHECK(strstr(err.msg, "inference") != NULL);
    dlp_nn_file_free(&f);
    unlink(path);
    dlp_model_free(m);
}

/* The attention features of the LLM layout (schema 4) on Hugging Face
 * exports (tests/fixtures/memest): DistilBERT's bidirectional mask against
 * GPT-2's causal one, and the largest attention's scores [B, heads, S, S]
 * in MiB at bf16 (log10(1 + x)), heads as the architecture reader finds
 * them. */
static int feature_index(const dlp_tree_layout *L, const char *name) {
    for (int i = 0; i < L->nfeat; i++)
        if (!strcmp(dlp_tree_feature_name(L, i), name)) return i;
    return -1;
}

static void llm_attention_of(const char *file, int seq, float *bidir,
                             float *scores, float *heads) {
    *bidir = *scores = *heads = -1;
    dlp_error err;
    dlp_model *m = NULL;
    if (dlp_model_open(file, &m, &err)) {
        CHECK_MSG(0, "%s: %s", file, err.msg);
        return;
    }
    dlp_model_set_batch(m, 2, &err);
    dlp_model_bind_dim(m, "seq", seq, &err);
    CHECK(dlp_model_analyze(m, &err) == DLP_OK);
    dlp_feat_graph fg;
    CHECK(dlp_feat_graph_build(&fg, &m->graph, 2, seq, 0, 0, &err) == DLP_OK);
    dlp_pred_config c = h100_config(DLP_MODE_LLM, DLP_PREC_BF16, 2, seq);
    const dlp_tree_layout *L = dlp_tree_layout_of(DLP_MODE_LLM);
    float x[DLP_TREE_NFEAT];
    double base[DLP_TREE_NT];
    dlp_tree_llm_features(&fg, &c, NULL, x, base);
    int ib = feature_index(L, "mask_bidir"), is = feature_index(L, "log_scores_mib");
    CHECK(ib >= 0 && is >= 0);
    if (ib >= 0 && is >= 0) {
        *bidir = x[ib];
        *scores = x[is];
        *heads = x[1];
    }
    dlp_feat_graph_free(&fg);
    dlp_model_free(m);
}

static void test_llm_attention_features(void) {
    float bidir, scores, heads;
    for (int seq = 64; seq <= 256; seq *= 2) {
        llm_attention_of("tests/fixtures/memest/hf_distilbert.onnx", seq, &bidir,
                         &scores, &heads);
        double want = log10(1 + 2.0 * heads * seq * seq * 2 / 1048576.0);
        CHECK_MSG(bidir == 1, "distilbert: mask_bidir %g", bidir);
        CHECK_MSG(heads > 1 && fabs(scores - want) < 1e-5,
                  "distilbert S=%d: scores %g, want %g (%g heads)", seq, scores,
                  want, heads);
        llm_attention_of("tests/fixtures/memest/hf_gpt2.onnx", seq, &bidir,
                         &scores, &heads);
        want = log10(1 + 2.0 * heads * seq * seq * 2 / 1048576.0);
        CHECK_MSG(bidir == 0, "gpt2: mask_bidir %g", bidir);
        CHECK_MSG(heads > 1 && fabs(scores - want) < 1e-5,
                  "gpt2 S=%d: scores %g, want %g (%g heads)", seq, scores, want,
                  heads);
    }
}

/* llm schema 5: a booster per target and runtime, each trained on its
 * runtime's rows alone. The fixture's language-model rows (CUDA graph)
 * are split: every other one relabeled eager, its throughput a third.
 * Oracle: a booster trained here with dlp_tree_train on one runtime's
 * features and log(label / base) gives, through the file, the same
 * predictions (same parameters, seed and thread); a file trained on CUDA-
 * graph rows alone has no eager trees, and an eager request is flagged
 * with no value. */
static void test_llm_boosters_per_runtime(void) {
    const dlp_tree_layout *L = dlp_tree_layout_of(DLP_MODE_LLM);
    CHECK(L && L->by_runtime && dlp_tree_groups(L) == DLP_RT_COUNT);
    CHECK(dlp_tree_layout_of(DLP_MODE_INFERENCE)->by_runtime);
    CHECK(!dlp_tree_layout_of(DLP_MODE_TRAINING)->by_runtime);
    dlp_dataset *ds = NULL;
    dlp_error err;
    dlp_examples E;
    if (!fixture_llm_examples(&ds, &E)) return;
    CHECK(E.n >= 4);
    int32_t idx[64];
    int n = E.n < 64 ? E.n : 64;
    for (int i = 0; i < n; i++) idx[i] = i;
    dlp_train_opts o;
    dlp_train_opts_init(&o);
    o.threads = 1;
    /* graph rows alone: no eager boosters */
    dlp_pred_meta meta;
    dlp_pred_meta_init(&meta, "xgb", DLP_MODE_LLM);
    dlp_nn_file f = {0};
    CHECK_MSG(dlp_tree_pred_train(&E, idx, n, NULL, 0, &o, &meta, &f, &err) ==
              DLP_OK, "%s", err.msg);
    CHECK(dlp_pred_meta_write(&meta, &f, &err) == DLP_OK);
    CHECK(dlp_nn_file_get(&f, "forest/xgb/throughput_samples_s/graph/trees",
                          DLP_NN_I64) != NULL);
    CHECK(dlp_nn_file_get(&f, "forest/xgb/throughput_samples_s/eager/trees",
                          DLP_NN_I64) == NULL);
    /* boosters are stored as forests, not XGBoost blobs */
    CHECK(!dlp_pred_blob_exists(&f, "xgb/throughput_samples_s/graph"));
    const dlp_nn_entry *oe = dlp_nn_file_get(&f, "xgb/offset", DLP_NN_F32);
    CHECK(oe && oe->count == (size_t)(DLP_TREE_NT * DLP_RT_COUNT));
    dlp_predictor *p = xgb_from_file(&f);
    dlp_pred_result r;
    if (p) {
        dlp_pred_config keep = E.ex[0].cfg;
        E.ex[0].cfg.runtime = DLP_RT_EAGER;
        CHECK(dlp_pred_example(p, &E, 0, &r, &err) == DLP_OK);
        CHECK(!r.v[DLP_T_LLM_THROUGHPUT].valid);
        CHECK_MSG(r.ood && strstr(r.ood_reason, "no eager trees"), "ood %d: %s", r.ood, r.ood_reason);
        E.ex[0].cfg = keep;
        CHECK(dlp_pred_example(p, &E, 0, &r, &err) == DLP_OK);
        CHECK(r.v[DLP_T_LLM_THROUGHPUT].valid);
    }
    dlp_predictor_free(p);
    dlp_nn_file_free(&f);
    /* both runtimes: every other row eager, a third the throughput */
    for (int i = 1; i < n; i += 2) {
        E.ex[i].cfg.runtime = DLP_RT_EAGER;
        E.ex[i].y[DLP_T_LLM_THROUGHPUT] /= 3;
    }
    dlp_pred_meta_init(&meta, "xgb", DLP_MODE_LLM);
    dlp_nn_file g = {0};
    CHECK_MSG(dlp_tree_pred_train(&E, idx, n, NULL, 0, &o, &meta, &g, &err) ==
              DLP_OK, "%s", err.msg);
    CHECK(dlp_pred_meta_write(&meta, &g, &err) == DLP_OK);
    p = xgb_from_file(&g);
    dlp_tree_params tp;
    dlp_tree_params_of_mode(&tp, DLP_MODE_LLM);
    dlp_tree_params_for_target(&tp, DLP_MODE_LLM, DLP_T_LLM_THROUGHPUT);
    tp.seed = o.seed;
    tp.threads = 1;
    for (int rt = 0; rt < DLP_RT_COUNT && p; rt++) {
        float x[64 * DLP_TREE_NFEAT], y[64];
        double base[64][DLP_TREE_NT];
        int m = 0;
        for (int i = 0; i < n; i++) {
            if ((int)E.ex[i].cfg.runtime != rt) continue;
            dlp_llm_arch a;
            dlp_llm_arch_from_feat(&E.fg[E.ex[i].fg], &a);
            dlp_tree_llm_features(&E.fg[E.ex[i].fg], &E.ex[i].cfg, &a,
                                  x + (size_t)m * DLP_TREE_NFEAT, base[m]);
            y[m] = (float)log(E.ex[i].y[DLP_T_LLM_THROUGHPUT] / base[m][0]);
            idx[m++] = i;
        }
        CHECK(m >= 2);
        dlp_tree *t = NULL;
        CHECK_MSG(dlp_tree_train(x, (size_t)m, DLP_TREE_NFEAT, y, &tp, &t,
                                 &err) == DLP_OK, "%s", err.msg);
        /* the same file with this runtime's throughput as the XGBoost
         * booster (files before the forests), and that file converted to
         * forests (dlperf tree convert --forests) */
        dlp_nn_file h = {0}, h2 = {0};
        dlp_predictor *ph = NULL, *ph2 = NULL;
        if (t) {
            char bn[64], fp[80];
            snprintf(bn, sizeof bn, "xgb/throughput_samples_s/%s",
                     dlp_runtime_name((dlp_runtime)rt));
            dlp_tree_forest_prefix(bn, fp, sizeof fp);
            for (int i = 0; i < g.n; i++)
                if (strncmp(g.e[i].name, fp, strlen(fp)))
                    CHECK(dlp_nn_file_add_copy(&h, g.e[i].name, &g.e[i],
                                               &err) == DLP_OK);
            void *buf = NULL;
            size_t len = 0;
            CHECK(dlp_tree_save(t, &buf, &len, &err) == DLP_OK);
            CHECK(dlp_pred_blob_add(&h, bn, buf, len, &err) == DLP_OK);
            free(buf);
            for (int i = 0; i < h.n; i++)
                CHECK(dlp_nn_file_add_copy(&h2, h.e[i].name, &h.e[i],
                                           &err) == DLP_OK);
            int nconv = -1;
            CHECK_MSG(dlp_tree_file_forests(&h2, &nconv, &err) == DLP_OK,
                      "%s", err.msg);
            CHECK(nconv == 1 && !dlp_pred_blob_exists(&h2, bn));
            char trees[96];
            snprintf(trees, sizeof trees, "%s/trees", fp);
            CHECK(dlp_nn_file_get(&h2, trees, DLP_NN_I64) != NULL);
            ph = xgb_from_file(&h);
            ph2 = xgb_from_file(&h2);
        }
        for (int k = 0; k < m && t; k++) {
            float yp;
            CHECK(dlp_tree_predict(t, x + (size_t)k * DLP_TREE_NFEAT, 1,
                                   DLP_TREE_NFEAT, &yp, &err) == DLP_OK);
            double want = base[k][0] * exp((double)yp);
            dlp_predictor *ps[3] = {p, ph, ph2};
            for (int q = 0; q < 3; q++) {
                if (!ps[q]) continue;
                CHECK(dlp_pred_example(ps[q], &E, idx[k], &r, &err) ==
                      DLP_OK);
                double got = r.v[DLP_T_LLM_THROUGHPUT].value;
                CHECK_MSG(r.v[DLP_T_LLM_THROUGHPUT].valid &&
                          fabs(got / want - 1) < 1e-5,
                          "%s row %d, file %d: %g, its runtime's booster %g",
                          dlp_runtime_name((dlp_runtime)rt), idx[k], q, got,
                          want);
            }
        }
        CHECK(ph && ph2);
        dlp_predictor_free(ph);
        dlp_predictor_free(ph2);
        dlp_nn_file_free(&h);
        dlp_nn_file_free(&h2);
        dlp_tree_free(t);
    }
    dlp_predictor_free(p);
    /* a forest of another feature count is refused at load, named */
    CHECK(dlp_nn_file_get(&g, "forest/xgb/memory_mib/eager/trees",
                          DLP_NN_I64) != NULL);
    for (int i = 0; i < g.n; i++)
        if (!strcmp(g.e[i].name, "forest/xgb/memory_mib/eager/trees")) {
            int64_t *nf = g.e[i].data;
            int64_t keep = nf[0];
            nf[0] = keep - 1;
            static const dlp_pred_vtable *const extra[] = {
                &dlp_tree_pred_vtable, NULL};
            dlp_predictor *q = NULL;
            CHECK(dlp_predictor_from_file(&g, extra, &q, &err) ==
                  DLP_ERR_FORMAT && !q);
            CHECK_MSG(strstr(err.msg, "forest/xgb/memory_mib/eager") &&
                      strstr(err.msg, "features"), "%s", err.msg);
            nf[0] = keep;
        }
    /* a forest is checked when first walked: a corrupt CUDA-graph
     * throughput forest (its first tree's root splitting on a feature
     * past the layout's) loads, fails the graph requests with a message
     * naming it, and leaves the eager ones */
    dlp_nn_entry *be = NULL;
    for (int i = 0; i < g.n; i++)
        if (!strcmp(g.e[i].name, "forest/xgb/throughput_samples_s/graph/words"))
            be = &g.e[i];
    CHECK(be && be->count >= 8);
    if (be) {
        ((uint8_t *)be->data)[4] = 0xfe;   /* bits 32-46: feature 0x7ffe */
        ((uint8_t *)be->data)[5] = 0x7f;
    }
    p = xgb_from_file(&g);
    if (p && be) {
        int eg = -1, ee = -1;
        for (int i = 0; i < n; i++)
            if (E.ex[i].cfg.runtime == DLP_RT_GRAPH) eg = i;
            else ee = i;
        CHECK(dlp_pred_example(p, &E, ee, &r, &err) == DLP_OK &&
              r.v[DLP_T_LLM_THROUGHPUT].valid);
        CHECK(dlp_pred_example(p, &E, eg, &r, &err) == DLP_ERR_FORMAT);
        CHECK_MSG(strstr(err.msg, "xgb/throughput_samples_s/graph") != NULL,
                  "%s", err.msg);
        CHECK(dlp_pred_example(p, &E, eg, &r, &err) == DLP_ERR_FORMAT);
        CHECK(dlp_pred_example(p, &E, ee, &r, &err) == DLP_OK);
    }
    dlp_predictor_free(p);
    dlp_nn_file_free(&g);
    dlp_examples_free(&E);
    dlp_dataset_free(ds);
}

int main(void) {
    RUN(test_learns_known_function);
    RUN(test_constant_target);
    RUN(test_ubj_check);
    RUN(test_params_for_mode);
    RUN(test_bad_input);
    RUN(test_arch_read);
    RUN(test_fit_write_load_predict);
    RUN(test_pred_train_signature);
    RUN(test_graph_layout);
    RUN(test_llm_attention_features);
    RUN(test_llm_boosters_per_runtime);
    return CHECK_DONE();
}
