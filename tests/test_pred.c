/* test_pred.c — predictors: names and configs, the model-file header and
 * blobs, linear regression recovering a known power law exactly, a tiny
 * DIPPM and TraPPM trained on the fixture dataset whose saved files load
 * back and give bit-identical predictions, corrupt/truncated/foreign files
 * rejected with a clear message, predictor sets choosing by validation
 * error, bad configs (batch 0, precision the card lacks, unknown MIG);
 * the MAPE calibration factor against a brute-force minimum; inference
 * energy from two estimates. */
#include "check.h"
#include "xz_write.h"
#include "pred/pred_train.h"
#include "model/model.h"

#include <cjson/cJSON.h>

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FIXTURE "tests/fixtures/dataset/valid"

static char tmpdir[64];

static void h100(dlp_pred_config *c) {
    dlp_pred_config_init(c);
    dlp_error err;
    DLP_ASSERT(dlp_device_find("H100-SXM5-80GB", &c->device, &err) == DLP_OK);
}

/* What each kind costs to run decides how predict shares files: every
 * built-in kind states it, a blend costs its costliest part. */
static void test_kind_cost(void) {
    for (const dlp_pred_vtable *const *k = dlp_pred_builtin_kinds(); *k; k++)
        CHECK_MSG((*k)->cost >= DLP_PRED_COST_FREE && (*k)->cost <= DLP_PRED_COST_SLOW,
                  "%s: cost %d", (*k)->kind, (int)(*k)->cost);
    CHECK(dlp_pred_kind_cost("roofline", NULL) == DLP_PRED_COST_FREE);
    CHECK(dlp_pred_kind_cost("linreg", NULL) == DLP_PRED_COST_FREE);
    CHECK(dlp_pred_kind_cost("roofline+linreg", NULL) == DLP_PRED_COST_FREE);
    CHECK(dlp_pred_kind_cost("dippm", NULL) == DLP_PRED_COST_MODEL);
    CHECK(dlp_pred_kind_cost("roofline+trappm", NULL) == DLP_PRED_COST_MODEL);
    CHECK(dlp_pred_kind_cost("kern", NULL) == DLP_PRED_COST_SLOW);
    CHECK(dlp_pred_kind_cost("dippm+kern", NULL) == DLP_PRED_COST_SLOW);
    CHECK(dlp_pred_kind_cost("kern+roofline", NULL) == DLP_PRED_COST_SLOW);
    /* not built in (xgb without src/tree's list): assumed a model */
    CHECK(dlp_pred_kind_cost("xgb", NULL) == DLP_PRED_COST_MODEL);
    CHECK(dlp_pred_kind_cost("", NULL) == DLP_PRED_COST_MODEL);
}

static void test_names(void) {
    dlp_error err;
    for (int t = 0; t < DLP_T_COUNT; t++) {
        dlp_target u;
        CHECK(dlp_target_parse(dlp_target_name((dlp_target)t), &u, &err) == DLP_OK);
        CHECK((int)u == t);
        CHECK(dlp_target_unit((dlp_target)t) != NULL);
    }
    dlp_target u;
    CHECK(dlp_target_parse("step_ms", &u, &err) == DLP_OK && u == DLP_T_TRAIN_STEP_MS);
    CHECK(dlp_target_parse("memory_mib", &u, &err) == DLP_ERR_NOT_FOUND);
    CHECK(strstr(err.msg, "ambiguous") != NULL);
    CHECK(dlp_target_parse("speed", &u, &err) == DLP_ERR_NOT_FOUND);
    dlp_precision p;
    CHECK(dlp_precision_parse("BF16", &p, &err) == DLP_OK && p == DLP_PREC_BF16);
    CHECK(dlp_precision_parse("fp64", &p, &err) == DLP_ERR_ARG);
    dlp_runtime r;
    CHECK(dlp_runtime_parse("graph", &r, &err) == DLP_OK && r == DLP_RT_GRAPH);
    CHECK(dlp_runtime_parse("jit", &r, &err) == DLP_ERR_ARG);
    CHECK(dlp_target_mode(DLP_T_LLM_THROUGHPUT) == DLP_MODE_LLM);
}

static void test_config_check(void) {
    dlp_error err;
    dlp_pred_config c;
    h100(&c);
    CHECK(dlp_pred_config_check(&c, &err) == DLP_OK);
    c.batch = 0;
    CHECK(dlp_pred_config_check(&c, &err) == DLP_ERR_ARG);
    CHECK(strstr(err.msg, "batch") != NULL);
    c.batch = 1 << 30;
    CHECK(dlp_pred_config_check(&c, &err) == DLP_ERR_ARG);
    c.batch = 1;
    c.sms = 1000;
    CHECK(dlp_pred_config_check(&c, &err) == DLP_ERR_ARG);
    c.sms = 0;
    CHECK(dlp_device_mig(&c.device, "3g.40gb", &c.mig, &err) == DLP_OK);
    c.has_mig = true;
    CHECK(dlp_pred_config_check(&c, &err) == DLP_OK);
    c.mig.name = "9g.99gb";
    CHECK(dlp_pred_config_check(&c, &err) == DLP_ERR_NOT_FOUND);
    c.has_mig = false;
    CHECK(dlp_device_find("V100-SXM2-16GB", &c.device, &err) == DLP_OK);
    c.precision = DLP_PREC_BF16;
    CHECK(dlp_pred_config_check(&c, &err) == DLP_ERR_UNSUPPORTED);
    CHECK(strstr(err.msg, "bf16") != NULL);
}

static void test_meta_blob_roundtrip(void) {
    dlp_error err;
    dlp_nn_file f = {0};
    dlp_pred_meta m, r;
    dlp_pred_meta_init(&m, "xgb", DLP_MODE_LLM);
    m.targets = 1u << DLP_T_LLM_THROUGHPUT | 1u << DLP_T_LLM_MEMORY_MIB;
    m.runtimes = 1u << DLP_RT_GRAPH;
    m.precisions = 1u << DLP_PREC_BF16;
    snprintf(m.devices, sizeof m.devices, "H100-SXM5-80GB,H200-SXM-141GB");
    m.val_error[DLP_T_LLM_THROUGHPUT] = 0.05;
    m.resid_lo[DLP_T_LLM_THROUGHPUT] = -0.1;
    m.resid_hi[DLP_T_LLM_THROUGHPUT] = 0.2;
    m.batch_min = 1; m.batch_max = 64;
    m.data_precisions = 1u << DLP_PREC_BF16 | 1u << DLP_PREC_FP16;
    m.scale[DLP_T_LLM_THROUGHPUT] = 0.93;
    CHECK(dlp_pred_meta_write(&m, &f, &err) == DLP_OK);
    unsigned char blob[1001];
    for (int i = 0; i < 1001; i++) blob[i] = (unsigned char)(i * 7 + (i == 500 ? 0 : 1));
    blob[10] = 0;   /* embedded NULs survive */
    CHECK(dlp_pred_blob_add(&f, "booster", blob, sizeof blob, &err) == DLP_OK);
    char path[] = "/tmp/dlp_test_pred_XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    CHECK(dlp_nn_file_save(&f, path, &err) == DLP_OK);
    dlp_nn_file g = {0};
    CHECK(dlp_nn_file_load(&g, path, &err) == DLP_OK);
    CHECK(dlp_pred_meta_read(&g, &r, &err) == DLP_OK);
    CHECK(!strcmp(r.kind, "xgb") && r.mode == DLP_MODE_LLM);
    CHECK(r.targets == m.targets && r.runtimes == m.runtimes && r.precisions == m.precisions);
    CHECK(dlp_pred_meta_has_device(&r, "H200-SXM-141GB"));
    CHECK(!dlp_pred_meta_has_device(&r, "H200"));
    CHECK_CLOSE(r.val_error[DLP_T_LLM_THROUGHPUT], 0.05, 1e-6);
    CHECK(isnan(r.val_error[DLP_T_LLM_MEMORY_MIB]));
    CHECK(r.batch_max == 64);
    CHECK(r.data_precisions == m.data_precisions);
    CHECK_CLOSE(r.scale[DLP_T_LLM_THROUGHPUT], 0.93, 1e-6);
    CHECK(r.scale[DLP_T_LLM_MEMORY_MIB] == 1);
    const void *b;
    size_t n;
    CHECK(dlp_pred_blob_get(&g, "booster", &b, &n, &err) == DLP_OK);
    CHECK(n == sizeof blob && !memcmp(b, blob, n));
    CHECK(dlp_pred_blob_get(&g, "other", &b, &n, &err) == DLP_ERR_FORMAT);
    CHECK(dlp_pred_blob_exists(&g, "booster") &&
          !dlp_pred_blob_exists(&g, "other") &&
          !dlp_pred_blob_exists(&g, "boost"));
    /* removal: both entries go, at the top level or under a scope */
    CHECK(dlp_pred_blob_add(&g, "booster2", blob, sizeof blob, &err) == DLP_OK);
    CHECK(dlp_pred_blob_remove(&g, "", "booster2"));
    CHECK(!dlp_pred_blob_exists(&g, "booster2") &&
          !dlp_nn_file_get(&g, "bloblen/booster2", DLP_NN_I64) &&
          dlp_pred_blob_exists(&g, "booster"));
    CHECK(!dlp_pred_blob_remove(&g, "", "booster2"));
    dlp_nn_file sc = {0};
    CHECK(dlp_pred_blob_add(&sc, "kern/node", blob, sizeof blob, &err) == DLP_OK);
    for (int i = 0; i < sc.n; i++) {
        char scoped[96];
        snprintf(scoped, sizeof scoped, "blend/1/%s", sc.e[i].name);
        CHECK(dlp_nn_file_add_copy(&g, scoped, &sc.e[i], &err) == DLP_OK);
    }
    dlp_nn_file_free(&sc);
    CHECK(dlp_nn_file_get(&g, "blend/1/blob/kern/node", DLP_NN_I64) != NULL);
    CHECK(dlp_pred_blob_remove(&g, "blend/1/", "kern/node"));
    CHECK(!dlp_nn_file_get(&g, "blend/1/blob/kern/node", DLP_NN_I64) &&
          !dlp_nn_file_get(&g, "blend/1/bloblen/kern/node", DLP_NN_I64));
    /* coverage rules */
    dlp_pred_config c;
    h100(&c);
    c.mode = DLP_MODE_LLM;
    c.precision = DLP_PREC_BF16;
    c.runtime = DLP_RT_GRAPH;
    CHECK(dlp_pred_meta_covers(&r, DLP_T_LLM_THROUGHPUT, &c));
    CHECK(!dlp_pred_meta_covers(&r, DLP_T_LLM_ENERGY_PER_SAMPLE, &c));
    c.runtime = DLP_RT_EAGER;
    CHECK(!dlp_pred_meta_covers(&r, DLP_T_LLM_THROUGHPUT, &c));
    /* an unknown kind is refused by name */
    dlp_predictor *p = NULL;
    CHECK(dlp_predictor_from_file(&g, NULL, &p, &err) == DLP_ERR_UNSUPPORTED);
    CHECK(strstr(err.msg, "xgb") != NULL);
    /* a data-precision mask past the known precisions is refused */
    dlp_nn_file h = {0};
    m.data_precisions = 0;
    int64_t bad = 1 << DLP_PREC_COUNT;
    CHECK(dlp_pred_meta_write(&m, &h, &err) == DLP_OK);
    CHECK(dlp_nn_file_add_i64(&h, "pred/data_precisions", &bad, 1, &err) == DLP_OK);
    CHECK(dlp_pred_meta_read(&h, &r, &err) == DLP_ERR_FORMAT);
    CHECK(strstr(err.msg, "data_precisions") != NULL);
    dlp_nn_file_free(&h);
    /* a calibration factor outside [0.5, 2] is refused, by target */
    memset(&h, 0, sizeof h);
    m.scale[DLP_T_LLM_THROUGHPUT] = 5;
    CHECK(dlp_pred_meta_write(&m, &h, &err) == DLP_OK);
    CHECK(dlp_pred_meta_read(&h, &r, &err) == DLP_ERR_FORMAT);
    CHECK(strstr(err.msg, "pred/scale") && strstr(err.msg, "throughput"));
    dlp_nn_file_free(&h);
    dlp_nn_file_free(&f);
    dlp_nn_file_free(&g);
    unlink(path);
}

/* Inference examples E with room for n_ex examples and nb featurized
 * graphs: resnet18 at batch 1, 2, 4, ... 2^(nb-1); false (and a failed
 * check) when the fixture does not load. */
static bool resnet18_examples(dlp_examples *E, int nb, int n_ex) {
    memset(E, 0, sizeof *E);
    E->mode = DLP_MODE_INFERENCE;
    E->fg = calloc((size_t)nb, sizeof *E->fg);
    E->ex = calloc((size_t)n_ex, sizeof *E->ex);
    dlp_error err;
    for (int k = 0; k < nb; k++) {
        dlp_model *m = NULL;
        CHECK(dlp_model_open("tests/fixtures/models/resnet18.onnx", &m, &err) == DLP_OK);
        if (!m) return false;
        dlp_model_set_batch(m, 1 << k, &err);
        CHECK(dlp_model_analyze(m, &err) == DLP_OK);
        CHECK(dlp_feat_graph_build(&E->fg[k], &m->graph, 1 << k, 0, 0, 0, &err) == DLP_OK);
        dlp_model_free(m);
    }
    return true;
}

/* Synthetic examples: one graph per batch size of resnet18 and a scaled
 * label y = 3 * FLOPs^0.8 * params^0.1 -> linreg must recover it. */
static void test_linreg_exact(void) {
    dlp_examples E;
    int nb = 6;
    if (!resnet18_examples(&E, nb, nb)) return;
    dlp_error err;
    for (int k = 0; k < nb; k++) {
        /* vary params artificially so both slopes are identifiable */
        E.fg[k].params *= 1 + k % 3;
        dlp_example *x = &E.ex[k];
        dlp_pred_config_init(&x->cfg);
        dlp_device_find("H100", &x->cfg.device, &err);
        x->cfg.batch = 1 << k;
        x->fg = k;
        for (int t = 0; t < DLP_T_COUNT; t++) x->y[t] = NAN;
        x->y[DLP_T_INF_LATENCY_MS] = 3 * pow(1 + E.fg[k].flops_total, 0.8) *
                                     pow(1 + E.fg[k].params, 0.1);
    }
    E.n = nb;
    E.n_fg = nb;
    int32_t tr[6] = {0, 1, 2, 3, 4, 5};
    dlp_predictor *p = NULL;
    CHECK(dlp_pred_train("linreg", &E, tr, nb, NULL, 0, NULL, &p, NULL, &err) == DLP_OK);
    CHECK(p && (p->meta.targets == 1u << DLP_T_INF_LATENCY_MS));
    for (int k = 0; p && k < nb; k++) {
        dlp_pred_result r;
        CHECK(dlp_pred_example(p, &E, k, &r, &err) == DLP_OK);
        CHECK_MSG(fabs(r.v[0].value / E.ex[k].y[0] - 1) < 2e-3, "%g vs %g",
                  r.v[0].value, E.ex[k].y[0]);
    }
    CHECK(p && p->meta.val_error[0] < 2e-3);
    if (p) {   /* far outside the trained batch range: flagged, not refused */
        dlp_pred_config c = E.ex[0].cfg;
        c.batch = 20000;
        dlp_pred_input in = {NULL, &c, &E.fg[0], NULL};
        dlp_pred_result r;
        dlp_pred_result_init(&r);
        CHECK(dlp_predictor_predict(p, &in, &r, &err) == DLP_OK);
        CHECK(r.ood && strstr(r.ood_reason, "batch") != NULL);
        /* the examples are fp32: another precision is flagged by name */
        CHECK(p->meta.data_precisions == 1u << DLP_PREC_FP32);
        c = E.ex[0].cfg;
        c.precision = DLP_PREC_BF16;
        dlp_pred_result_init(&r);
        CHECK(dlp_predictor_predict(p, &in, &r, &err) == DLP_OK);
        CHECK_MSG(r.ood && strstr(r.ood_reason, "no bf16 inference data"),
                  "%s", r.ood_reason);
        dlp_pred_result_init(&r);
        in.cfg = &E.ex[2].cfg;
        CHECK(dlp_predictor_predict(p, &in, &r, &err) == DLP_OK);
        CHECK(!r.ood);
        CHECK(!r.extrapolated);
        dlp_pred_result_init(&r);
        c = E.ex[2].cfg;
        dlp_device_find("A100-SXM4-80GB", &c.device, &err);
        in.cfg = &c;
        strcpy(p->meta.devices, "H100-SXM5-80GB");
        CHECK(dlp_predictor_predict(p, &in, &r, &err) == DLP_OK);
        CHECK(r.extrapolated);
    }
    dlp_predictor_free(p);
    for (int k = 0; k < nb; k++) dlp_feat_graph_free(&E.fg[k]);
    free(E.fg);
    free(E.ex);
}

/* The roofline's eager inference memory factor: labels of every eager
 * example at F x the estimate (CUDA-graph ones at the estimate) give the
 * factor F, applied to eager predictions only and kept through a model
 * file; F below 1 gives 1 (a memory estimate is never lowered), above the
 * cap the cap; a file with a factor outside [1, 1.05] is refused. */
static void test_roofline_eager_scale(void) {
    dlp_examples E;
    int nb = 4;
    if (!resnet18_examples(&E, nb, 2 * nb)) return;
    dlp_error err;
    double est[8];
    const double F[3] = {1.02, 0.97, 1.2}, want[3] = {1.02, 1, 1.05};
    for (int f = 0; f < 3; f++) {
        for (int i = 0; i < 2 * nb; i++) {
            dlp_example *x = &E.ex[i];
            dlp_pred_config_init(&x->cfg);
            dlp_device_find("H100", &x->cfg.device, &err);
            x->fg = i / 2;
            x->model = i / 2;
            x->cfg.batch = 1 << (i / 2);
            x->cfg.runtime = i % 2 ? DLP_RT_GRAPH : DLP_RT_EAGER;
            dlp_feat_roofline r;
            DLP_ASSERT(dlp_convws_roofline(NULL, &E.fg[x->fg], &x->cfg, &r, &err) == DLP_OK);
            est[i] = r.mem_mib;
            for (int t = 0; t < DLP_T_COUNT; t++) x->y[t] = NAN;
            x->y[DLP_T_INF_MEMORY_MIB] = r.mem_mib * (i % 2 ? 1 : F[f]);
        }
        E.n = 2 * nb;
        E.n_fg = nb;
        int32_t tr[8] = {0, 1, 2, 3, 4, 5, 6, 7};
        dlp_predictor *p = NULL, *q = NULL;
        dlp_nn_file file = {0};
        CHECK(dlp_pred_train("roofline", &E, tr, 2 * nb, NULL, 0, NULL, &p, &file,
                             &err) == DLP_OK);
        CHECK(dlp_predictor_from_file(&file, NULL, &q, &err) == DLP_OK);
        for (int i = 0; p && q && i < 2 * nb; i++) {
            dlp_pred_result r, rq;
            CHECK(dlp_pred_example(p, &E, i, &r, &err) == DLP_OK);
            CHECK(dlp_pred_example(q, &E, i, &rq, &err) == DLP_OK);
            double m = r.v[DLP_T_INF_MEMORY_MIB].value;
            CHECK_MSG(fabs(m / (est[i] * (i % 2 ? 1 : want[f])) - 1) < 1e-6,
                      "labels x%g, %s: %g vs estimate %g", F[f], i % 2 ? "graph" : "eager",
                      m, est[i]);
            CHECK(rq.v[DLP_T_INF_MEMORY_MIB].value == m);
        }
        dlp_predictor_free(p);
        dlp_predictor_free(q);
        if (f == 0) {   /* a factor below 1 in the file: refused */
            for (int i = 0; i < file.n; i++)
                if (!strcmp(file.e[i].name, "roofline/eager_mem_scale"))
                    *(float *)file.e[i].data = 0.5f;
            q = NULL;
            CHECK(dlp_predictor_from_file(&file, NULL, &q, &err) == DLP_ERR_FORMAT && !q);
        }
        dlp_nn_file_free(&file);
    }
    for (int k = 0; k < nb; k++) dlp_feat_graph_free(&E.fg[k]);
    free(E.fg);
    free(E.ex);
}

/* sum_i |c f_i - y_i| / y_i */
static double ape_sum(const double *y, const double *f, int n, double c) {
    double s = 0;
    for (int i = 0; i < n; i++)
        if (y[i] > 0 && f[i] > 0) s += fabs(c * f[i] - y[i]) / y[i];
    return s;
}

/* The calibration factor is the exact minimiser of the MAPE sum: no point
 * of a fine grid, and none of the candidate ratios, does better. */
static void test_mape_factor(void) {
    CHECK(dlp_mape_factor(NULL, NULL, 0) == 1);
    double y[7] = {1, 2, 4, 1, 3, 0, 5}, f[7] = {2, 4, 8, 2, 6, 1, -1};
    CHECK(dlp_mape_factor(y, f, 7) == 0.5);   /* every valid f is 2y */
    uint64_t s = 12345;
    enum { N = 401 };
    double yy[N], ff[N];
    for (int i = 0; i < N; i++) {   /* skewed ratios: log-normal-ish */
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        double u = (double)(s >> 11) / 9007199254740992.0;
        yy[i] = 1 + 100 * u;
        ff[i] = yy[i] * exp(0.6 * (u - 0.3) * (u - 0.3) + 0.2 * sin(i));
    }
    double c = dlp_mape_factor(yy, ff, N), best = ape_sum(yy, ff, N, c);
    CHECK(c > 0.5 && c < 1.5);
    for (double g = 0.5; g <= 1.5; g += 1e-4)
        CHECK_MSG(ape_sum(yy, ff, N, g) >= best - 1e-9, "c %g: %g < %g at %g", c,
                  ape_sum(yy, ff, N, g), best, g);
    for (int i = 0; i < N; i++)
        CHECK(ape_sum(yy, ff, N, yy[i] / ff[i]) >= best - 1e-9);
    /* shrunk: groups that agree keep the factor (jackknife variance 0),
     * two groups that pull apart give 1, so does one group */
    int grp[N];
    double y3[3 * N], f3[3 * N];
    int g3[3 * N];
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < N; i++) {
            y3[k * N + i] = yy[i];
            f3[k * N + i] = ff[i];
            g3[k * N + i] = 7 * k;
        }
    CHECK_CLOSE(dlp_mape_factor_shrunk(y3, f3, g3, 3 * N, 2), c, 1e-12);
    CHECK(dlp_mape_factor_shrunk(y3, f3, g3, 3 * N, 4) == 1);   /* 3 groups < 4 */
    for (int i = 0; i < N; i++) {
        grp[i] = i % 2;
        ff[i] = yy[i] * (i % 2 ? 1.25 : 0.8);
    }
    CHECK(dlp_mape_factor_shrunk(yy, ff, grp, N, 2) == 1);
    for (int i = 0; i < N; i++) grp[i] = 3;
    CHECK(dlp_mape_factor_shrunk(yy, ff, grp, N, 2) == 1);
}

/* linreg trained with and without calibration on the same noisy power
 * law (120 examples over resnet18 at 6 batch sizes; labels scattered by a
 * skewed factor): the calibrated file's latency factor is the shrunk MAPE
 * minimiser of the uncalibrated validation predictions, its predictions
 * are theirs times it, its validation MAPE lower; memory keeps factor 1,
 * and so does every target with too few validation models. */
static void test_linreg_calibrated(void) {
    enum { NB = 6, N = 120 };
    dlp_examples E;
    if (!resnet18_examples(&E, NB, N)) return;
    dlp_error err;
    uint64_t s = 99;
    int32_t tr[N / 2], va[N / 2];
    for (int i = 0; i < N; i++) {
        dlp_example *x = &E.ex[i];
        int k = i % NB;
        dlp_pred_config_init(&x->cfg);
        dlp_device_find("H100", &x->cfg.device, &err);
        x->cfg.batch = 1 << k;
        x->fg = k;
        x->model = (i / 2) % 30;   /* 30 models in each half */
        for (int t = 0; t < DLP_T_COUNT; t++) x->y[t] = NAN;
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        double u = (double)(s >> 11) / 9007199254740992.0;
        double noise = exp(0.5 * u * u * u - 0.1);   /* a long upper tail */
        x->y[DLP_T_INF_LATENCY_MS] = 3 * pow(1 + E.fg[k].flops_total, 0.8) * noise;
        x->y[DLP_T_INF_MEMORY_MIB] = 100 * (1 + k) * noise;
        if (i % 2) va[i / 2] = i; else tr[i / 2] = i;
    }
    E.n = N;
    E.n_fg = NB;
    dlp_train_opts o;
    dlp_train_opts_init(&o);
    dlp_predictor *p = NULL, *q = NULL, *pf = NULL;
    dlp_nn_file file = {0};
    CHECK(dlp_pred_train("linreg", &E, tr, N / 2, va, N / 2, &o, &p, &file, &err) == DLP_OK);
    /* the file's predictor (its header carries the factor) predicts the same */
    CHECK(dlp_predictor_from_file(&file, NULL, &pf, &err) == DLP_OK);
    dlp_nn_file_free(&file);
    o.no_calibration = true;
    CHECK(dlp_pred_train("linreg", &E, tr, N / 2, va, N / 2, &o, &q, NULL, &err) == DLP_OK);
    if (!p || !q || !pf) {
        dlp_predictor_free(p); dlp_predictor_free(q); dlp_predictor_free(pf);
        return;
    }
    CHECK(pf->meta.scale[DLP_T_INF_LATENCY_MS] == p->meta.scale[DLP_T_INF_LATENCY_MS]);
    const int L = DLP_T_INF_LATENCY_MS;
    double sc = p->meta.scale[L];
    CHECK_MSG(sc > 0.5 && sc < 1 && sc != 1, "factor %g", sc);
    CHECK(p->meta.scale[DLP_T_INF_MEMORY_MIB] == 1);
    CHECK(q->meta.scale[L] == 1);
    double y[N / 2], f[N / 2];
    int g[N / 2];
    for (int i = 0; i < N / 2; i++) {
        dlp_pred_result rp, rq;
        CHECK(dlp_pred_example(p, &E, va[i], &rp, &err) == DLP_OK);
        CHECK(dlp_pred_example(q, &E, va[i], &rq, &err) == DLP_OK);
        dlp_pred_result rf;
        CHECK(dlp_pred_example(pf, &E, va[i], &rf, &err) == DLP_OK);
        CHECK(rf.v[L].value == rp.v[L].value);
        CHECK_CLOSE(rp.v[L].value, rq.v[L].value * sc, 1e-9 * rp.v[L].value);
        CHECK(rp.v[DLP_T_INF_MEMORY_MIB].value == rq.v[DLP_T_INF_MEMORY_MIB].value);
        y[i] = E.ex[va[i]].y[L];
        f[i] = rq.v[L].value;
        g[i] = E.ex[va[i]].model;
    }
    CHECK(sc == (float)dlp_mape_factor_shrunk(y, f, g, N / 2, DLP_CAL_MIN_MODELS));
    /* between 1 and the minimiser of a convex sum: no worse than 1 */
    double c = dlp_mape_factor(y, f, N / 2);
    CHECK_MSG(sc >= c && sc < 1, "shrunk %g, exact %g", sc, c);
    CHECK(p->meta.val_error[L] < q->meta.val_error[L]);
    CHECK_CLOSE(p->meta.val_error[L], ape_sum(y, f, N / 2, sc) / (N / 2), 1e-9);
    dlp_predictor_free(p);
    dlp_predictor_free(q);
    dlp_predictor_free(pf);
    /* fewer validation models than DLP_CAL_MIN_MODELS: no factor */
    for (int i = 0; i < N; i++) E.ex[i].model = (i / 2) % (DLP_CAL_MIN_MODELS - 1);
    o.no_calibration = false;
    p = NULL;
    CHECK(dlp_pred_train("linreg", &E, tr, N / 2, va, N / 2, &o, &p, NULL, &err) == DLP_OK);
    CHECK(p && p->meta.scale[L] == 1);
    dlp_predictor_free(p);
    for (int k = 0; k < NB; k++) dlp_feat_graph_free(&E.fg[k]);
    free(E.fg);
    free(E.ex);
}

static dlp_status examples_on(dlp_examples *E, dlp_pred_mode mode, bool pool,
                              int threads) {
    dlp_error err;
    dlp_dataset *ds = NULL;
    dlp_status st = dlp_dataset_open(FIXTURE, &ds, &err);
    if (st) { fprintf(stderr, "%s\n", err.msg); return st; }
    dlp_examples_opts o = {NULL, -1, -1, pool, NULL, NULL, threads, NULL};
    st = dlp_examples_build(E, ds, mode, &o, &err);
    if (st) fprintf(stderr, "%s\n", err.msg);
    dlp_dataset_free(ds);
    return st;
}

static dlp_status examples(dlp_examples *E, dlp_pred_mode mode, bool pool) {
    return examples_on(E, mode, pool, 1);
}

/* the graph features that tell two featurizations apart */
static bool same_feat_graph(const dlp_feat_graph *a, const dlp_feat_graph *b) {
    if (a->n_nodes != b->n_nodes || a->n_edges != b->n_edges ||
        a->n_kernels != b->n_kernels || a->batch != b->batch ||
        a->seq != b->seq || a->macs != b->macs ||
        a->flops_total != b->flops_total || a->act_bytes != b->act_bytes ||
        a->params != b->params || a->mem_weight_bytes != b->mem_weight_bytes ||
        a->saved_train_bytes != b->saved_train_bytes)
        return false;
    for (int i = 0; i < a->n_nodes; i++)
        if (a->op[i] != b->op[i] || a->kern[i] != b->kern[i]) return false;
    return true;
}

/* Featurizing on several threads gives the examples one thread gives:
 * the same examples, bindings, features, pool and messages, in the same
 * order (the bindings are claimed from a shared counter, pred_data.c). */
static void test_examples_threads(void) {
    dlp_examples A, B;
    CHECK(examples_on(&A, DLP_MODE_INFERENCE, true, 1) == DLP_OK);
    CHECK(examples_on(&B, DLP_MODE_INFERENCE, true, 3) == DLP_OK);
    CHECK(A.n == B.n && A.n_fg == B.n_fg && A.n_pool == B.n_pool &&
          A.n_trace == B.n_trace && A.n_skipped_graphs == B.n_skipped_graphs);
    CHECK(A.n_pool > 1 && A.n_fg > 1);
    for (int i = 0; i < A.n && i < B.n; i++) {
        CHECK(A.ex[i].fg == B.ex[i].fg);
        CHECK(A.ex[i].y[DLP_T_INF_LATENCY_MS] == B.ex[i].y[DLP_T_INF_LATENCY_MS]);
    }
    for (int f = 0; f < A.n_fg && f < B.n_fg; f++)
        CHECK_MSG(same_feat_graph(&A.fg[f], &B.fg[f]), "binding %d", f);
    for (int j = 0; j < A.n_pool && j < B.n_pool; j++)
        CHECK_MSG(same_feat_graph(&A.pool[j], &B.pool[j]), "pool graph %d", j);
    dlp_examples_free(&A);
    dlp_examples_free(&B);
}

static void test_examples(void) {
    dlp_examples E;
    CHECK(examples(&E, DLP_MODE_INFERENCE, true) == DLP_OK);
    CHECK(E.n > 0 && E.n_fg > 0 && E.n_models >= 2 && E.n_families >= 2);
    CHECK(E.n_pool >= E.n_models);
    for (int i = 0; i < E.n; i++) {
        CHECK(E.ex[i].y[DLP_T_INF_LATENCY_MS] > 0);
        CHECK(E.ex[i].fg >= 0 && E.ex[i].fg < E.n_fg);
        CHECK(E.fg[E.ex[i].fg].batch == E.ex[i].cfg.batch);
    }
    dlp_examples_free(&E);
    dlp_examples T;
    CHECK(examples(&T, DLP_MODE_TRAINING, false) == DLP_OK);
    for (int i = 0; i < T.n; i++) CHECK(T.ex[i].y[DLP_T_TRAIN_STEP_MS] > 0);
    dlp_examples_free(&T);
}

/* A label measured at a size the graph cannot take is not an example of
 * that graph: the fixture's graph adds a [1,3,8,8] table to its input and
 * is labeled at 8 px and at 16 / 32 px (tests/fixtures/dataset/gen.py,
 * conflict_dataset(), whose counts expected.json holds). */
static void test_examples_drop_conflicts(void) {
    char *js = check_slurp("tests/fixtures/dataset/expected.json", NULL);
    cJSON *root = js ? cJSON_Parse(js) : NULL;
    cJSON *c = cJSON_GetObjectItem(root, "conflict");
    CHECK(c != NULL);
    if (!c) { cJSON_Delete(root); free(js); return; }
    int want_n = cJSON_GetObjectItem(c, "examples")->valueint;
    int want_conf = cJSON_GetObjectItem(c, "conflict_bindings")->valueint;
    cJSON *kept = cJSON_GetObjectItem(c, "kept_batches");
    dlp_error err;
    dlp_dataset *ds = NULL;
    CHECK(dlp_dataset_open("tests/fixtures/dataset/conflict", &ds, &err) == DLP_OK);
    dlp_examples E, T;
    CHECK(ds && dlp_examples_build(&E, ds, DLP_MODE_INFERENCE, NULL, &err) == DLP_OK);
    CHECK_MSG(E.n == want_n, "%d examples, want %d", E.n, want_n);
    CHECK(E.n_conflict_bindings == want_conf);
    CHECK(E.n_skipped_graphs == want_conf);
    /* on two threads: the same counts and messages, in the same order */
    dlp_examples_opts two = {NULL, -1, -1, false, NULL, NULL, 2, NULL};
    CHECK(ds && dlp_examples_build(&T, ds, DLP_MODE_INFERENCE, &two, &err) == DLP_OK);
    CHECK(T.n == E.n && T.n_conflict_bindings == want_conf &&
          T.n_skipped_graphs == want_conf);
    for (int i = 0; i < T.n_skipped_graphs && i < DLP_EXAMPLES_SKIPPED_KEEP; i++)
        CHECK(!strcmp(T.skipped[i].msg, E.skipped[i].msg));
    dlp_examples_free(&T);
    for (int i = 0; i < E.n_skipped_graphs && i < DLP_EXAMPLES_SKIPPED_KEEP; i++)
        CHECK_MSG(strstr(E.skipped[i].msg, "contradict") != NULL, "%s",
                  E.skipped[i].msg);
    for (int i = 0; i < E.n; i++) {
        const dlp_pred_config *x = &E.ex[i].cfg;
        CHECK(x->height == 8 && x->width == 8);
        bool listed = false;
        cJSON *b;
        cJSON_ArrayForEach(b, kept) listed |= b->valueint == x->batch;
        CHECK_MSG(listed, "batch %lld kept", (long long)x->batch);
    }
    dlp_examples_free(&E);
    dlp_dataset_free(ds);
    cJSON_Delete(root);
    free(js);
}

/* Eager labels brought to a reference host (dlp_examples_opts.host_norm):
 * a one-batch dataset beside the valid fixture's graphs whose rows are
 * written here, and the factors recomputed from the host model's formula
 * (models/host.csv's header): f = (host / ref)^(h beta), h = 1 - graph /
 * eager of the rep means; energy / (1 + gamma (f - 1)). */
/* A dataset folder dir (made from its template) of one batch b of the
 * fixture: its graphs and env.json linked, its label files left to the
 * caller; the open label file named `labels` in *f. */
static bool hostnorm_dir(char *dir, const char *b, const char *labels,
                         FILE **f) {
    char p[512], cwd[400], src[600], dst[600];
    *f = NULL;
    if (!mkdtemp(dir) || !getcwd(cwd, sizeof cwd)) return false;
    snprintf(p, sizeof p, "%s/batches", dir);
    if (mkdir(p, 0755)) return false;
    snprintf(p, sizeof p, "%s/batches/%s", dir, b);
    if (mkdir(p, 0755)) return false;
    snprintf(src, sizeof src, "%s/" FIXTURE "/graphs", cwd);
    snprintf(dst, sizeof dst, "%s/graphs", dir);
    if (symlink(src, dst)) return false;
    snprintf(src, sizeof src, "%s/" FIXTURE "/batches/%s/env.json", cwd, b);
    snprintf(dst, sizeof dst, "%s/batches/%s/env.json", dir, b);
    if (symlink(src, dst)) return false;
    snprintf(dst, sizeof dst, "%s/batches/%s/%s", dir, b, labels);
    *f = fopen(dst, "w");
    return *f != NULL;
}

static void rm_dir(const char *dir) {
    char p[512];
    snprintf(p, sizeof p, "rm -rf '%s'", dir);
    CHECK(system(p) == 0);
}

static const char INF_HEADER[] =
    "protocol,batch_id,hash,device,rep,status,runtime,precision,batch,seq,"
    "height,width,latency_ms,latency_p10_ms,latency_p90_ms,memory_mib,"
    "mem_reserved_mib,nvml_used_mib,energy_j,power_w,host_us\n";

/* One eager inference row (its fields after the header's first three,
 * device on) into dir's batch b, the file written with its header. */
static bool hostnorm_inf_row(const char *dir, const char *b, const char *h,
                             const char *rest) {
    char p[600];
    snprintf(p, sizeof p, "%s/batches/%s/inference.csv", dir, b);
    FILE *f = fopen(p, "w");
    if (!f) return false;
    fputs(INF_HEADER, f);
    fprintf(f, "p1,%s,%s,%s\n", b, h, rest);
    return fclose(f) == 0;
}

/* dir's dataset, its examples of mode as measured (A) and brought to n's
 * host (B); false when the dataset or an example set fails (named). */
typedef struct {
    dlp_dataset *ds;
    dlp_examples A, B;
    bool ok;
} hostnorm_sets;

static hostnorm_sets hostnorm_build(const char *dir, dlp_pred_mode mode,
                                    const dlp_host_norm *n) {
    hostnorm_sets s = {0};
    dlp_error err;
    dlp_examples_opts o = {NULL, -1, -1, false, NULL, NULL, 1, n};
    CHECK_MSG(dlp_dataset_open(dir, &s.ds, &err) == DLP_OK, "%s", err.msg);
    if (!s.ds) return s;
    bool a = dlp_examples_build(&s.A, s.ds, mode, NULL, &err) == DLP_OK;
    CHECK_MSG(a, "%s", err.msg);
    bool b = a && dlp_examples_build(&s.B, s.ds, mode, &o, &err) == DLP_OK;
    CHECK_MSG(!a || b, "%s", err.msg);
    if (a && !b) dlp_examples_free(&s.A);
    s.ok = a && b;
    return s;
}

/* dlp_examples_host_norm on the sets built: the set built as measured
 * brought to n's host is the set built with it, bit for bit; that one
 * brought back (NULL) is as measured; and brought to n again, the same
 * (each time from the measured labels, never compounded) */
static void hostnorm_again(hostnorm_sets *s, const dlp_host_norm *n) {
    dlp_examples *A = &s->A, *B = &s->B;
    dlp_error err;
    size_t ny = sizeof A->ex[0].y;
    double *meas = malloc((size_t)(A->n ? A->n : 1) * ny);
    DLP_ASSERT(meas);
    for (int i = 0; i < A->n; i++) memcpy(meas + i * DLP_T_COUNT, A->ex[i].y, ny);
    CHECK(A->meas_kept && B->meas_kept);
    for (int round = 0; round < 2; round++) {
        CHECK_MSG(dlp_examples_host_norm(A, n, &err) == DLP_OK, "%s", err.msg);
        CHECK(A->n_host_normed == B->n_host_normed && A->n == B->n);
        CHECK(!memcmp(&A->host_norm, &B->host_norm, sizeof A->host_norm));
        for (int i = 0; i < A->n && i < B->n; i++) {
            CHECK(!memcmp(A->ex[i].y, B->ex[i].y, ny));
            CHECK(A->ex[i].host_f == B->ex[i].host_f);
        }
        CHECK(dlp_examples_host_norm(A, NULL, &err) == DLP_OK);
        CHECK(A->n_host_normed == 0);
        for (int i = 0; i < A->n; i++)
            CHECK(!memcmp(A->ex[i].y, meas + i * DLP_T_COUNT, ny) &&
                  A->ex[i].host_f == 1);
    }
    CHECK(dlp_examples_host_norm(NULL, n, &err) == DLP_ERR_ARG);
    free(meas);
}

static void hostnorm_free(hostnorm_sets *s, const char *dir) {
    if (s->ok) {
        dlp_examples_free(&s->A);
        dlp_examples_free(&s->B);
    }
    dlp_dataset_free(s->ds);
    rm_dir(dir);
}

static void test_examples_host_norm(void) {
    char dir[] = "/tmp/dlp_hostnorm_XXXXXX";
    const char *b = "20261126T0400-vision-a";
    FILE *f;
    CHECK(hostnorm_dir(dir, b, "inference.csv", &f));
    if (!f) return;
    const char *h = "2d9105cb3fcd5924";
    fputs(INF_HEADER, f);
    /* runtime, precision, batch, rep, latency, energy, power, host_us */
    static const struct {
        const char *rt, *prec;
        int batch, rep;
        double ms, j, w;
        const char *host;
    } rows[] = {
        {"eager", "fp32", 1, 0, 10, 3.0, 300, "12"},   /* twin: graph 4 */
        {"eager", "fp32", 1, 1, 12, 3.6, 300, "12"},
        {"graph", "fp32", 1, 0, 4, 1.6, 400, ""},
        {"graph", "fp32", 1, 1, 4, 1.6, 400, ""},
        {"eager", "fp16", 1, 0, 8, 2.0, 250, ""},      /* no probe */
        {"graph", "fp16", 1, 0, 3, 1.2, 400, ""},
        {"eager", "fp32", 8, 0, 20, 6.0, 300, "6"},    /* no twin */
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        fprintf(f, "p1,%s,%s,H100-SXM5-80GB,%d,ok,%s,%s,%d,,224,224,%g,%g,%g,"
                "100,120,600,%g,%g,%s\n", b, h, rows[i].rep, rows[i].rt,
                rows[i].prec, rows[i].batch, rows[i].ms, rows[i].ms * 0.98,
                rows[i].ms * 1.02, rows[i].j, rows[i].w, rows[i].host);
    fclose(f);
    dlp_host_norm n = {1.352, 8.409, 0.684, 0, 0, 0, 0, 0};
    hostnorm_sets S = hostnorm_build(dir, DLP_MODE_INFERENCE, &n);
    dlp_examples *A = &S.A, *B = &S.B;
    if (!S.ok) { hostnorm_free(&S, dir); return; }
    CHECK(A->n == 5 && B->n == 5 && A->n_host_normed == 0 && B->n_host_normed == 1);
    double hh = 1 - 4.0 / 11.0;
    double want_f = exp(hh * 1.352 * log(12 / 8.409));
    double want_fe = 1 + 0.684 * (want_f - 1);
    CHECK_CLOSE(dlp_host_norm_factor(&n, 12, hh), want_f, 1e-12);
    CHECK(dlp_host_norm_factor(&n, NAN, hh) == 1 &&
          dlp_host_norm_factor(&n, 12, NAN) == 1 &&
          dlp_host_norm_factor(NULL, 12, hh) == 1);
    for (int i = 0; i < A->n && i < B->n; i++) {
        const dlp_example *a = &A->ex[i], *x = &B->ex[i];
        bool target = a->cfg.runtime == DLP_RT_EAGER &&
                      a->cfg.precision == DLP_PREC_FP32 && a->cfg.batch == 1;
        if (target) {
            CHECK_CLOSE(a->host_us, 12, 1e-12);
            CHECK_CLOSE(x->host_f, want_f, 1e-9);
            CHECK_CLOSE(x->y[DLP_T_INF_LATENCY_MS], 11 / want_f, 1e-9);
            CHECK_CLOSE(x->y[DLP_T_INF_ENERGY_J], 3.3 / want_fe, 1e-9);
            CHECK_CLOSE(x->y[DLP_T_INF_POWER_W], 300 * want_f / want_fe, 1e-6);
            CHECK(want_f > 1.1);   /* a slow host: the label shrinks */
        } else {   /* no probe, no twin, or not eager: as measured */
            CHECK(x->host_f == 1);
            CHECK(x->y[DLP_T_INF_LATENCY_MS] == a->y[DLP_T_INF_LATENCY_MS]);
            CHECK(x->y[DLP_T_INF_ENERGY_J] == a->y[DLP_T_INF_ENERGY_J]);
        }
        CHECK(x->y[DLP_T_INF_MEMORY_MIB] == a->y[DLP_T_INF_MEMORY_MIB]);
    }
    hostnorm_again(&S, &n);
    /* eager rows only (--runtime eager): the twins still read, then gone,
     * so the labels cannot be brought to another host afterwards */
    dlp_examples_opts eo = {NULL, DLP_RT_EAGER, -1, false, NULL, NULL, 1, &n};
    dlp_examples C;
    dlp_error err;
    CHECK(S.ds && dlp_examples_build(&C, S.ds, DLP_MODE_INFERENCE, &eo, &err) == DLP_OK);
    CHECK(C.n == 3 && C.n_host_normed == 1);
    CHECK(!C.meas_kept && dlp_examples_host_norm(&C, NULL, &err) == DLP_ERR_ARG);
    for (int i = 0; i < C.n; i++) {
        CHECK(C.ex[i].cfg.runtime == DLP_RT_EAGER);
        if (C.ex[i].cfg.precision == DLP_PREC_FP32 && C.ex[i].cfg.batch == 1)
            CHECK_CLOSE(C.ex[i].y[DLP_T_INF_LATENCY_MS], 11 / want_f, 1e-9);
    }
    dlp_examples_free(&C);
    hostnorm_free(&S, dir);
}

/* LLM labels to the reference host: the probe from the configuration's
 * eager inference row, the share from the throughputs (1 - eager /
 * graph), the throughput multiplied by f, energy per sample divided by
 * the energy factor; memory and the CUDA-graph rows as measured */
static void test_examples_host_norm_llm(void) {
    char dir[] = "/tmp/dlp_hostnorm_XXXXXX";
    const char *b = "20261126T0500-lm-a", *h = "31441ceb1d5a9eb9";
    FILE *f;
    CHECK(hostnorm_dir(dir, b, "llm.csv", &f));
    if (!f) return;
    fprintf(f, "protocol,batch_id,hash,device,rep,status,runtime,precision,"
            "batch,seq,latency_ms,throughput_samples_s,memory_mib,"
            "energy_per_sample_j,power_w\n");
    /* runtime, batch, throughput, energy per sample */
    static const struct {
        const char *rt;
        int batch;
        double thr, j;
    } rows[] = {
        {"eager", 1, 5, 40}, {"graph", 1, 7, 30},   /* probe 12 us */
        {"eager", 2, 9, 44}, {"graph", 2, 12, 33},  /* no probe */
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        fprintf(f, "p1,%s,%s,H100-SXM5-80GB,0,ok,%s,bf16,%d,128,%g,%g,18000,"
                "%g,450\n", b, h, rows[i].rt, rows[i].batch,
                1e3 * rows[i].batch / rows[i].thr, rows[i].thr, rows[i].j);
    fclose(f);
    CHECK(hostnorm_inf_row(dir, b, h, "H100-SXM5-80GB,0,ok,eager,bf16,1,128,"
                           ",,200,190,210,18000,19000,20000,80,400,12"));
    dlp_host_norm n = {1.341, 9.109, 0.846, 0, 0, 0, 0, 0};
    hostnorm_sets S = hostnorm_build(dir, DLP_MODE_LLM, &n);
    dlp_examples *A = &S.A, *B = &S.B;
    if (!S.ok) { hostnorm_free(&S, dir); return; }
    CHECK(A->n == 4 && B->n == 4 && A->n_host_normed == 0 && B->n_host_normed == 1);
    double want_f = exp((1 - 5.0 / 7.0) * 1.341 * log(12 / 9.109));
    double want_fe = 1 + 0.846 * (want_f - 1);
    for (int i = 0; i < A->n && i < B->n; i++) {
        const dlp_example *a = &A->ex[i], *x = &B->ex[i];
        if (a->cfg.runtime == DLP_RT_EAGER && a->cfg.batch == 1) {
            /* the probe the norm reads: the inference row's; the
             * example's own (its LLM rows') none */
            CHECK_CLOSE(B->host_probe[i], 12, 1e-12);
            CHECK(isnan(x->host_us));
            CHECK_CLOSE(x->host_f, want_f, 1e-9);
            CHECK_CLOSE(x->y[DLP_T_LLM_THROUGHPUT], 5 * want_f, 1e-9);
            CHECK_CLOSE(x->y[DLP_T_LLM_ENERGY_PER_SAMPLE], 40 / want_fe, 1e-9);
            CHECK(want_f > 1.05);   /* a slow host: throughput grows */
        } else {
            CHECK(x->host_f == 1);
            CHECK(x->y[DLP_T_LLM_THROUGHPUT] == a->y[DLP_T_LLM_THROUGHPUT]);
            CHECK(x->y[DLP_T_LLM_ENERGY_PER_SAMPLE] ==
                  a->y[DLP_T_LLM_ENERGY_PER_SAMPLE]);
        }
        CHECK(x->y[DLP_T_LLM_MEMORY_MIB] == a->y[DLP_T_LLM_MEMORY_MIB]);
    }
    hostnorm_again(&S, &n);
    hostnorm_free(&S, dir);
}

/* Training steps to the reference host by the power rule: the probe the
 * rows' own, else their batch's eager inference median; h from the
 * measured power on the fit's board; the step divided by f, the power
 * multiplied by f / fe; a step without power, or without any probe, as
 * measured */
static void test_examples_host_norm_training(void) {
    char dir[] = "/tmp/dlp_hostnorm_XXXXXX";
    const char *b = "20261126T0400-vision-a", *h = "2d9105cb3fcd5924";
    FILE *f;
    CHECK(hostnorm_dir(dir, b, "training.csv", &f));
    if (!f) return;
    fprintf(f, "protocol,batch_id,hash,device,rep,status,precision,batch,"
            "height,width,optimizer,step_ms,step_p10_ms,step_p90_ms,"
            "memory_mib,mem_reserved_mib,energy_j,power_w,host_us\n");
    static const struct {
        const char *prec;
        int batch;
        double ms;
        const char *w, *host;
    } rows[] = {
        {"fp32", 8, 50, "320", "12"},   /* own probe */
        {"fp16", 8, 30, "350", ""},     /* the batch's median: 10 */
        {"fp32", 16, 90, "400", "12"},  /* above power_hi_w: h = 0 */
        {"bf16", 8, 40, "", "12"},      /* no power */
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        fprintf(f, "p1,%s,%s,H100-SXM5-80GB,0,ok,%s,%d,224,224,adamw,%g,%g,"
                "%g,2500,2800,,%s,%s\n", b, h, rows[i].prec, rows[i].batch,
                rows[i].ms, rows[i].ms * 0.98, rows[i].ms * 1.02, rows[i].w,
                rows[i].host);
    fclose(f);
    CHECK(hostnorm_inf_row(dir, b, h, "H100-SXM5-80GB,0,ok,eager,fp32,1,,224,"
                           "224,5,4.9,5.1,100,120,600,1.5,300,10"));
    dlp_host_norm n = {0.57, 8.8, 0.49, 0, 300, 360, 700, 0};
    hostnorm_sets S = hostnorm_build(dir, DLP_MODE_TRAINING, &n);
    dlp_examples *A = &S.A, *B = &S.B;
    if (!S.ok) { hostnorm_free(&S, dir); return; }
    CHECK(A->n == 4 && B->n == 4 && A->n_host_normed == 0 && B->n_host_normed == 3);
    dlp_device dev;
    CHECK(dlp_device_find("H100-SXM5-80GB", &dev, NULL) == DLP_OK);
    double tdp = dev.tdp_w;
    for (int i = 0; i < A->n && i < B->n; i++) {
        const dlp_example *a = &A->ex[i], *x = &B->ex[i];
        double w = a->y[DLP_T_TRAIN_POWER_W], step = a->y[DLP_T_TRAIN_STEP_MS];
        double host = a->cfg.precision == DLP_PREC_FP16 ? 10 : 12;
        if (!(w > 0)) {
            CHECK(x->host_f == 1 && x->y[DLP_T_TRAIN_STEP_MS] == step);
            continue;
        }
        double hh = (360 - w * 700 / tdp) / 60;
        hh = hh < 0 ? 0 : hh > 1 ? 1 : hh;
        double want_f = exp(hh * 0.57 * log(host / 8.8));
        double want_fe = 1 + 0.49 * (want_f - 1);
        CHECK_CLOSE(B->host_probe[i], host, 1e-12);
        CHECK(host == 10 ? isnan(x->host_us) : x->host_us == host);
        CHECK_CLOSE(x->host_f, want_f, 1e-9);
        CHECK_CLOSE(x->y[DLP_T_TRAIN_STEP_MS], step / want_f, 1e-9);
        CHECK_CLOSE(x->y[DLP_T_TRAIN_POWER_W], w * want_f / want_fe, 1e-6);
        CHECK(x->y[DLP_T_TRAIN_MEMORY_MIB] == a->y[DLP_T_TRAIN_MEMORY_MIB]);
        if (a->cfg.batch == 16) CHECK(x->host_f == 1);
        else CHECK(want_f > 1.01);
    }
    /* the share's rules */
    CHECK_CLOSE(dlp_host_norm_share(&n, 50, NAN, 330), 0.5, 1e-12);
    CHECK(isnan(dlp_host_norm_share(&n, 50, NAN, NAN)));
    dlp_host_norm tau = {0.5, 8, 0.5, 16, 0, 0, 0, 0}, g = {1, 8, 1, 0, 0, 0, 0, 0};
    CHECK_CLOSE(dlp_host_norm_share(&tau, 64, NAN, NAN), 0.25, 1e-12);
    CHECK(dlp_host_norm_share(&tau, 8, NAN, NAN) == 1);
    CHECK_CLOSE(dlp_host_norm_share(&g, 10, 4, NAN), 0.6, 1e-12);
    CHECK(isnan(dlp_host_norm_share(&g, 10, NAN, NAN)) &&
          isnan(dlp_host_norm_share(NULL, 10, 4, NAN)));
    hostnorm_again(&S, &n);
    hostnorm_free(&S, dir);
}

/* Every fifth example of E into va[nva], the others into tr[ntr]
 * (allocated: the caller frees both). */
static void split_fifth(const dlp_examples *E, int32_t **tr, int *ntr,
                        int32_t **va, int *nva) {
    *tr = malloc((size_t)(E->n ? E->n : 1) * sizeof **tr);
    *va = malloc((size_t)(E->n ? E->n : 1) * sizeof **va);
    DLP_ASSERT(*tr && *va);
    *ntr = *nva = 0;
    for (int i = 0; i < E->n; i++) {
        if (i % 5 == 0) (*va)[(*nva)++] = i;
        else (*tr)[(*ntr)++] = i;
    }
}

/* Train a tiny GNN (members: ensemble size; readout: DLP_READOUT_*),
 * save, load, compare predictions bit for bit; then corrupt the file in
 * several ways. */
static void gnn_roundtrip(const char *kind, int members, int readout) {
    dlp_examples E;
    if (examples(&E, DLP_MODE_INFERENCE, !strcmp(kind, "trappm"))) { CHECK(0); return; }
    int32_t *tr, *va;
    int ntr, nva;
    split_fifth(&E, &tr, &ntr, &va, &nva);
    dlp_train_opts o;
    dlp_train_opts_init(&o);
    o.epochs = 3;
    o.hidden = 8;
    o.members = members;
    o.readout = readout;
    dlp_error err;
    dlp_predictor *p = NULL;
    dlp_nn_file f = {0};
    CHECK(dlp_pred_train(kind, &E, tr, ntr, va, nva, &o, &p, &f, &err) == DLP_OK);
    /* the readout is recorded, one per member, only when some member's is
     * not the mean (mixed with one member: none is) */
    const dlp_nn_entry *pe = dlp_nn_file_get(&f, "gnn/pool", DLP_NN_I64);
    bool mixed = readout == DLP_READOUT_MIXED || readout == DLP_READOUT_MIXED_LSE;
    bool some = readout == DLP_READOUT_COST || readout == DLP_READOUT_LSE ||
                (mixed && members > 1);
    int odd = readout == DLP_READOUT_COST || readout == DLP_READOUT_MIXED
                  ? DLP_NN_POOL_MEAN_COST : DLP_NN_POOL_MEAN_LSE;
    CHECK((pe != NULL) == some);
    if (pe) {
        CHECK((int)pe->count == members);
        for (int k = 0; k < members && (int)pe->count == members; k++)
            CHECK(((const int64_t *)pe->data)[k] ==
                  (!mixed || k % 2 ? odd : DLP_NN_POOL_MEAN));
    }
    char path[128];
    snprintf(path, sizeof path, "%s/%s.dlpm", tmpdir, kind);
    if (pe) {   /* a readout value no build knows: refused, naming the entry */
        int64_t keep = ((int64_t *)pe->data)[0];
        ((int64_t *)pe->data)[0] = 7;
        CHECK(dlp_nn_file_save(&f, path, &err) == DLP_OK);
        dlp_predictor *z = NULL;
        CHECK(dlp_predictor_load(path, NULL, &z, &err) == DLP_ERR_FORMAT &&
              strstr(err.msg, "gnn/pool") && z == NULL);
        ((int64_t *)pe->data)[0] = keep;
    }
    CHECK(dlp_nn_file_save(&f, path, &err) == DLP_OK);
    dlp_predictor *q = NULL;
    CHECK(dlp_predictor_load(path, NULL, &q, &err) == DLP_OK);
    CHECK(p && q && !strcmp(q->meta.kind, kind));
    CHECK(q && isfinite(q->meta.val_error[DLP_T_INF_LATENCY_MS]));
    for (int i = 0; p && q && i < E.n; i++) {
        dlp_pred_result a, b;
        CHECK(dlp_pred_example(p, &E, i, &a, &err) == DLP_OK);
        CHECK(dlp_pred_example(q, &E, i, &b, &err) == DLP_OK);
        for (int t = 0; t < DLP_T_COUNT; t++) {
            CHECK(a.v[t].valid == b.v[t].valid);
            CHECK(a.v[t].value == b.v[t].value);
            if (a.v[t].valid) CHECK(a.v[t].lo <= a.v[t].value && a.v[t].value <= a.v[t].hi);
        }
    }
    /* the same prediction from the graph itself (featurized inside) */
    if (q) {
        dlp_dataset *ds = NULL;
        dlp_dataset_open(FIXTURE, &ds, &err);
        const char *h = E.fg_hash[E.ex[0].fg];
        char hash[17];
        snprintf(hash, sizeof hash, "%.16s", h);
        void *bytes = NULL;
        size_t len = 0;
        CHECK(dlp_dataset_graph_bytes(ds, hash, &bytes, &len, &err) == DLP_OK);
        dlp_model *m = NULL;
        CHECK(dlp_model_open_memory(bytes, len, hash, &m, &err) == DLP_OK);
        if (m) {
            dlp_model_set_batch(m, E.ex[0].cfg.batch, &err);
            if (E.ex[0].cfg.seq > 0) dlp_model_bind_dim(m, "seq", E.ex[0].cfg.seq, &err);
            dlp_feat_bind_resolution(&m->graph, E.ex[0].cfg.height, E.ex[0].cfg.width);
            CHECK(dlp_model_analyze(m, &err) == DLP_OK);
            dlp_pred_input in = {&m->graph, &E.ex[0].cfg, NULL, NULL};
            dlp_pred_result a, b;
            dlp_pred_result_init(&a);
            CHECK(dlp_predictor_predict(q, &in, &a, &err) == DLP_OK);
            CHECK(dlp_pred_example(q, &E, 0, &b, &err) == DLP_OK);
            CHECK(a.v[0].value == b.v[0].value);
            dlp_model_free(m);
        }
        free(bytes);
        dlp_dataset_free(ds);
    }
    /* corruption: one flipped byte in the middle, truncation, garbage */
    FILE *fp = fopen(path, "r+b");
    CHECK(fp != NULL);
    if (fp) {
        fseek(fp, 0, SEEK_END);
        long sz = ftell(fp);
        fseek(fp, sz / 2, SEEK_SET);
        int c = fgetc(fp);
        fseek(fp, sz / 2, SEEK_SET);
        fputc(c ^ 0x5a, fp);
        fclose(fp);
        dlp_predictor *z = NULL;
        CHECK(dlp_predictor_load(path, NULL, &z, &err) != DLP_OK);
        CHECK(z == NULL);
        CHECK(strstr(err.msg, path) != NULL);
        CHECK(truncate(path, sz / 3) == 0);
        CHECK(dlp_predictor_load(path, NULL, &z, &err) != DLP_OK);
        fp = fopen(path, "wb");
        fputs("not a model file at all", fp);
        fclose(fp);
        CHECK(dlp_predictor_load(path, NULL, &z, &err) != DLP_OK);
        CHECK(dlp_predictor_load("/nonexistent/x.dlpm", NULL, &z, &err) == DLP_ERR_IO);
    }
    unlink(path);
    dlp_predictor_free(p);
    dlp_predictor_free(q);
    dlp_nn_file_free(&f);
    free(tr); free(va);
    dlp_examples_free(&E);
}

/* DIPPM on training steps reads the step's cuDNN workspaces (docs/
 * COST.md, "cuDNN workspaces in the training step"): trained with probes
 * in which every fp32 3x3 convolution takes 256 MiB (p = 0.92 from the
 * classifier's trees, above the 0.83 that a workspace four times the
 * estimate needs), its file carries the
 * workspace model, predicts the same after a save and load, and answers
 * another peak memory than the same network trained without probes
 * (same seed: only the memory estimate of the convolution steps among
 * its features differs). */
static void test_dippm_training_ws(void) {
    dlp_examples E;
    if (examples(&E, DLP_MODE_TRAINING, false)) { CHECK(0); return; }
    /* the fixture's graphs hold no convolution: every other graph
     * becomes memest_convbn (a 3x3 conv, BatchNorm, ReLU, a 1x1 conv;
     * fixed shapes), so that the workspace raises the estimate of some
     * steps and not of others (a uniform shift would vanish in the
     * standardized features) */
    dlp_model *mo = NULL;
    dlp_error err;
    DLP_ASSERT(dlp_model_open("tests/fixtures/memest/memest_convbn.onnx", &mo, &err) == DLP_OK);
    DLP_ASSERT(dlp_model_analyze(mo, &err) == DLP_OK);
    for (int k = 0; k < E.n_fg; k += 2) {
        int64_t b = E.fg[k].batch;
        dlp_feat_graph_free(&E.fg[k]);
        DLP_ASSERT(dlp_feat_graph_build(&E.fg[k], &mo->graph, b, 0, 0, 0, &err) == DLP_OK);
    }
    dlp_model_free(mo);
    char dir[128], path[192];
    snprintf(dir, sizeof dir, "%s/probes", tmpdir);
    DLP_ASSERT(mkdir(dir, 0700) == 0);
    snprintf(path, sizeof path, "%s/w-convws.jsonl.xz", dir);
    char text[16384];
    int n = snprintf(text, sizeof text, "{\"spec\": \"timm:probed\", \"prec\": "
                     "\"fp32\", \"convs\": [");
    for (int i = 0; i < 48; i++) {
        int b = 1 << (i % 6), c = 4 << (i % 5), h = 4 << (i % 4);
        n += snprintf(text + n, sizeof text - (size_t)n,
                      "%s{\"x\": [%d, %d, %d, %d], \"w\": [%d, %d, 3, 3], "
                      "\"y\": [%d, %d, %d, %d], \"s\": [1, 1], \"p\": [1, 1], "
                      "\"d\": [1, 1], \"g\": 1, \"cl\": false, "
                      "\"extra_mib\": %d, \"in_mib\": 0.1, \"out_mib\": 0.1}",
                      i ? ", " : "", b, c, h, h, c, c, b, c, h, h, 256);
    }
    snprintf(text + n, sizeof text - (size_t)n, "]}\n");
    write_xz(path, text);
    dlp_convws_calls calls;
    DLP_ASSERT(dlp_convws_calls_read(dir, &calls, &err) == DLP_OK && calls.n == 48);
    int32_t *tr, *va;
    int ntr, nva;
    split_fifth(&E, &tr, &ntr, &va, &nva);
    dlp_train_opts o;
    dlp_train_opts_init(&o);
    o.epochs = 2;
    o.hidden = 8;
    dlp_predictor *p = NULL, *p0 = NULL, *q = NULL;
    dlp_nn_file f = {0};
    dlp_convws_calls *own = E.convws;   /* the fixture's (none), freed with E */
    E.convws = &calls;
    CHECK(dlp_pred_train("dippm", &E, tr, ntr, va, nva, &o, &p, &f, &err) == DLP_OK);
    E.convws = NULL;
    CHECK(dlp_pred_train("dippm", &E, tr, ntr, va, nva, &o, &p0, NULL, &err) == DLP_OK);
    E.convws = own;
    CHECK(dlp_nn_file_get(&f, "convws/cls/trees", DLP_NN_I64) != NULL);
    snprintf(path, sizeof path, "%s/dippm-training.dlpm", tmpdir);
    CHECK(dlp_nn_file_save(&f, path, &err) == DLP_OK);
    CHECK(dlp_predictor_load(path, NULL, &q, &err) == DLP_OK);
    int differ = 0, conv = 0;
    for (int i = 0; p && p0 && q && i < E.n; i++) {
        dlp_pred_result a, b, z;
        CHECK(dlp_pred_example(p, &E, i, &a, &err) == DLP_OK);
        CHECK(dlp_pred_example(q, &E, i, &b, &err) == DLP_OK);
        CHECK(dlp_pred_example(p0, &E, i, &z, &err) == DLP_OK);
        int t = DLP_T_TRAIN_MEMORY_MIB;
        CHECK(a.v[t].valid && a.v[t].value == b.v[t].value);
        conv += E.fg[E.ex[i].fg].n_convs > 0 && E.ex[i].cfg.precision == DLP_PREC_FP32;
        differ += a.v[t].value != z.v[t].value;
    }
    CHECK_MSG(conv == 0 || differ > 0, "%d of %d fp32 conv steps differ", differ, conv);
    CHECK(conv > 0);
    dlp_predictor_free(p);
    dlp_predictor_free(p0);
    dlp_predictor_free(q);
    dlp_nn_file_free(&f);
    dlp_convws_calls_free(&calls);
    unlink(path);
    snprintf(path, sizeof path, "%s/w-convws.jsonl.xz", dir);
    unlink(path);
    rmdir(dir);
    free(tr); free(va);
    dlp_examples_free(&E);
}

static void test_dippm_roundtrip(void) { gnn_roundtrip("dippm", 1, DLP_READOUT_MEAN); }
static void test_trappm_roundtrip(void) { gnn_roundtrip("trappm", 1, DLP_READOUT_MEAN); }
static void test_ensemble_roundtrip(void) {
    gnn_roundtrip("dippm", 3, DLP_READOUT_MEAN);
    gnn_roundtrip("trappm", 2, DLP_READOUT_MEAN);
}
static void test_cost_readout_roundtrip(void) {
    gnn_roundtrip("dippm", 2, DLP_READOUT_COST);
    gnn_roundtrip("trappm", 1, DLP_READOUT_COST);
    gnn_roundtrip("dippm", 3, DLP_READOUT_MIXED);
    gnn_roundtrip("dippm", 1, DLP_READOUT_MIXED);
    gnn_roundtrip("dippm", 1, DLP_READOUT_LSE);
    gnn_roundtrip("dippm", 2, DLP_READOUT_MIXED_LSE);
}

/* a readout no build knows: an error naming it, not the mean readout */
static void test_unknown_readout(void) {
    dlp_examples E;
    if (examples(&E, DLP_MODE_INFERENCE, false)) { CHECK(0); return; }
    int32_t tr[8], va[2] = {8, 9};
    for (int i = 0; i < 8; i++) tr[i] = i;
    for (int bad = -1; bad <= DLP_READOUT_MIXED_LSE + 1;
         bad += DLP_READOUT_MIXED_LSE + 2) {
        dlp_train_opts o;
        dlp_train_opts_init(&o);
        o.epochs = 1;
        o.hidden = 8;
        o.readout = bad;
        dlp_error err;
        dlp_predictor *p = NULL;
        dlp_nn_file f = {0};
        CHECK(E.n >= 10 && dlp_pred_train("dippm", &E, tr, 8, va, 2, &o, &p,
                                          &f, &err) == DLP_ERR_ARG);
        CHECK(strstr(err.msg, "readout") != NULL && p == NULL);
        dlp_nn_file_free(&f);
    }
    dlp_examples_free(&E);
}

/* One DIPPM trained as it is (seed s, no prior: the network alone), on
 * the same split. */
static dlp_predictor *train_one(const dlp_examples *E, const int32_t *tr,
                                int ntr, const int32_t *va, int nva,
                                uint64_t seed, int members) {
    dlp_train_opts o;
    dlp_train_opts_init(&o);
    o.epochs = 3;
    o.hidden = 8;
    o.no_prior = true;
    o.seed = seed;
    o.members = members;
    dlp_error err;
    dlp_predictor *p = NULL;
    dlp_nn_file f = {0};
    CHECK_MSG(dlp_pred_train("dippm", E, tr, ntr, va, nva, &o, &p, &f, &err)
              == DLP_OK, "%s", err.msg);
    dlp_nn_file_free(&f);
    return p;
}

/* The inference examples, every fourth one for validation (tr, va: to
 * free). */
static int quarter_split(dlp_examples *E, int32_t **tr, int *ntr,
                         int32_t **va, int *nva) {
    if (examples(E, DLP_MODE_INFERENCE, false)) return -1;
    *tr = malloc((size_t)E->n * sizeof **tr);
    *va = malloc((size_t)E->n * sizeof **va);
    *ntr = *nva = 0;
    for (int i = 0; *tr && *va && i < E->n; i++) {
        if (i % 4 == 0) (*va)[(*nva)++] = i;
        else (*tr)[(*ntr)++] = i;
    }
    return *tr && *va ? 0 : -1;
}

/* An ensemble of two is the mean, in log space, of the two networks
 * trained alone from the members' seeds (member k: seed + k *
 * DLP_MEMBER_SEED_STEP); more members than the limit, or negative, are
 * refused. */
static void test_ensemble_is_mean(void) {
    dlp_examples E;
    int32_t *tr, *va;
    int ntr, nva;
    if (quarter_split(&E, &tr, &ntr, &va, &nva)) { CHECK(0); return; }
    uint64_t s = 11;
    dlp_predictor *a = train_one(&E, tr, ntr, va, nva, s, 1);
    dlp_predictor *b = train_one(&E, tr, ntr, va, nva, s + DLP_MEMBER_SEED_STEP, 1);
    dlp_predictor *e = train_one(&E, tr, ntr, va, nva, s, 2);
    dlp_error err;
    int differ = 0;
    for (int i = 0; a && b && e && i < E.n; i++) {
        dlp_pred_result ra, rb, re;
        CHECK(dlp_pred_example(a, &E, i, &ra, &err) == DLP_OK);
        CHECK(dlp_pred_example(b, &E, i, &rb, &err) == DLP_OK);
        CHECK(dlp_pred_example(e, &E, i, &re, &err) == DLP_OK);
        for (int t = 0; t < DLP_T_COUNT; t++) {
            if (!re.v[t].valid) continue;
            double want = 0.5 * (log(ra.v[t].value) + log(rb.v[t].value));
            CHECK_MSG(fabs(log(re.v[t].value) - want) < 1e-5,
                      "example %d target %d: %g vs mean %g", i, t,
                      log(re.v[t].value), want);
            differ += fabs(log(ra.v[t].value) - log(rb.v[t].value)) > 1e-4;
        }
    }
    CHECK_MSG(differ > 0, "the two members must differ");
    dlp_predictor_free(a);
    dlp_predictor_free(b);
    dlp_predictor_free(e);
    dlp_train_opts o;
    dlp_train_opts_init(&o);
    dlp_predictor *p = NULL;
    dlp_nn_file f = {0};
    o.members = 9;
    CHECK(dlp_pred_train("dippm", &E, tr, ntr, va, nva, &o, &p, &f, &err) == DLP_ERR_ARG);
    CHECK(strstr(err.msg, "members") != NULL && p == NULL);
    o.members = -1;
    CHECK(dlp_pred_train("dippm", &E, tr, ntr, va, nva, &o, &p, &f, &err) == DLP_ERR_ARG);
    dlp_nn_file_free(&f);
    free(tr); free(va);
    dlp_examples_free(&E);
}

static void count_progress(void *user, const dlp_train_progress *p) {
    (void)p;
    ++*(int *)user;
}

/* Members trained at once (--threads 2: each on one thread, pred_gnn.c
 * train_members) give the file that training them one after another on
 * one thread gives, entry for entry, for 2 and for 3 members (3: one
 * thread takes two); the engine's thread count is restored and every
 * member reports its epochs. */
/* The examples' network inputs derived once and held (pred_gnn.c
 * inputs_derive) train the same networks as inputs derived at every
 * forward: all of them held, none (input_bytes < 0) and some (a budget
 * that holds the node rows of a few examples only), two members with the
 * cost-weighted lse readout (so the node weights are held too), every
 * entry of the files bit for bit. */
static void test_inputs_held(void) {
    dlp_examples E;
    int32_t *tr, *va;
    int ntr, nva;
    if (quarter_split(&E, &tr, &ntr, &va, &nva)) { CHECK(0); return; }
    const long long budgets[3] = {-1, 0, 6000};
    dlp_nn_file f[3] = {{0}, {0}, {0}};
    for (int b = 0; b < 3; b++) {
        dlp_train_opts o;
        dlp_train_opts_init(&o);
        o.epochs = 3;
        o.patience = 10;
        o.hidden = 8;
        o.seed = 7;
        o.members = 2;
        o.readout = DLP_READOUT_MIXED_LSE;
        o.input_bytes = budgets[b];
        dlp_error err;
        dlp_predictor *p = NULL;
        CHECK_MSG(dlp_pred_train("dippm", &E, tr, ntr, va, nva, &o, &p,
                                 &f[b], &err) == DLP_OK, "%s", err.msg);
        dlp_predictor_free(p);
    }
    for (int b = 1; b < 3; b++) {
        int same = 0;
        for (int i = 0; i < f[0].n; i++) {
            const dlp_nn_entry *a = &f[0].e[i];
            const dlp_nn_entry *c = dlp_nn_file_get(&f[b], a->name, a->kind);
            bool eq = c && c->count == a->count &&
                      !memcmp(a->data, c->data,
                              (size_t)a->count * dlp_nn_elem_size(a->kind));
            if (!eq) fprintf(stderr, "  budget %lld differs: %s\n", budgets[b], a->name);
            same += eq;
        }
        CHECK_MSG(f[0].n > 10 && same == f[0].n && f[b].n == f[0].n,
                  "budget %lld: %d of %d entries the same", budgets[b], same,
                  f[0].n);
    }
    for (int b = 0; b < 3; b++) dlp_nn_file_free(&f[b]);
    free(tr); free(va);
    dlp_examples_free(&E);
}

static void test_members_at_once(void) {
    dlp_examples E;
    int32_t *tr, *va;
    int ntr, nva;
    if (quarter_split(&E, &tr, &ntr, &va, &nva)) { CHECK(0); return; }
    for (int members = 2; members <= 3; members++) {
        dlp_nn_file f[2] = {{0}, {0}};
        int calls[2] = {0, 0};
        for (int par = 0; par < 2; par++) {
            dlp_nn_set_threads(par ? 2 : 1);
            dlp_train_opts o;
            dlp_train_opts_init(&o);
            o.epochs = 3;
            o.patience = 10;
            o.hidden = 8;
            o.seed = 5;
            o.members = members;
            o.readout = DLP_READOUT_MIXED_LSE;
            o.progress = count_progress;
            o.user = &calls[par];
            dlp_error err;
            dlp_predictor *p = NULL;
            CHECK_MSG(dlp_pred_train("dippm", &E, tr, ntr, va, nva, &o, &p,
                                     &f[par], &err) == DLP_OK, "%s", err.msg);
            CHECK(dlp_nn_threads() == (par ? 2 : 1));
            dlp_predictor_free(p);
        }
        dlp_nn_set_threads(1);
        CHECK(calls[0] == 3 * members && calls[1] == 3 * members);
        int same = 0;
        for (int i = 0; i < f[0].n; i++) {
            const dlp_nn_entry *a = &f[0].e[i];
            const dlp_nn_entry *b = dlp_nn_file_get(&f[1], a->name, a->kind);
            bool eq = b && b->count == a->count &&
                      !memcmp(a->data, b->data,
                              (size_t)a->count * dlp_nn_elem_size(a->kind));
            /* the validation errors and quantiles are measured after
             * training, by predictions on 2 threads against 1: OpenBLAS's
             * sums may round differently there, so those are compared to
             * 1e-4 relative; the networks themselves bit for bit */
            if (!eq && b && b->count == a->count &&
                !strcmp(a->name, "pred/per_target")) {
                const float *x = a->data, *y = b->data;
                eq = true;
                for (uint64_t q = 0; q < a->count; q++)
                    eq &= (isnan(x[q]) && isnan(y[q])) ||
                          fabs(x[q] - y[q]) <= 1e-4 * fabs(x[q]) + 1e-7;
            }
            if (!eq) fprintf(stderr, "  differs: %s\n", a->name);
            same += eq;
        }
        CHECK_MSG(f[0].n > 10 && same == f[0].n && f[1].n == f[0].n,
                  "%d members: %d of %d entries the same", members, same,
                  f[0].n);
        dlp_nn_file_free(&f[0]);
        dlp_nn_file_free(&f[1]);
    }
    free(tr); free(va);
    dlp_examples_free(&E);
}

/* A set of two files: the one with the lower validation error wins per
 * target; an empty directory is an error; a broken file fails the set. */
/* Inference energy from two estimates (pred.c combine_energy): a
 * predictor answering latency, energy and power gets energy sqrt(E x P x
 * L / 1e3) before the calibration factors, its interval moved with it;
 * one without power, or of another mode, keeps its energy; latency and
 * power are untouched. */
static double fake_l, fake_e, fake_p;   /* 0: not answered */
static dlp_status fake_predict(const dlp_predictor *p, const dlp_pred_input *in,
                               dlp_pred_result *out, dlp_error *err) {
    (void)p, (void)in, (void)err;
    const double v[3] = {fake_l, fake_e, fake_p};
    const dlp_target t[3] = {DLP_T_INF_LATENCY_MS, DLP_T_INF_ENERGY_J,
                             DLP_T_INF_POWER_W};
    for (int i = 0; i < 3; i++)
        if (v[i] != 0)
            out->v[t[i]] = (dlp_pred_value){.valid = true, .value = v[i],
                                             .lo = 0.8 * v[i], .hi = 1.5 * v[i]};
    return DLP_OK;
}

static void test_energy_two_estimates(void) {
    static const dlp_pred_vtable vt = {"fake", NULL, fake_predict, NULL,
                                       DLP_PRED_COST_MODEL};
    dlp_predictor p = {.vt = &vt};
    dlp_pred_meta_init(&p.meta, "fake", DLP_MODE_INFERENCE);
    p.meta.scale[DLP_T_INF_ENERGY_J] = 0.9f;
    p.meta.scale[DLP_T_INF_LATENCY_MS] = 1.1f;
    dlp_pred_config c;
    h100(&c);
    dlp_feat_graph fg;
    memset(&fg, 0, sizeof fg);
    dlp_pred_input in = {NULL, &c, &fg, NULL};
    dlp_pred_result r;
    dlp_error err;
    fake_l = 2.0, fake_e = 1.0, fake_p = 400;      /* P x L: 0.8 J */
    dlp_pred_result_init(&r);
    CHECK_MSG(dlp_predictor_predict(&p, &in, &r, &err) == DLP_OK, "%s", err.msg);
    double e = sqrt(1.0 * 0.8) * (double)0.9f;
    CHECK_CLOSE(r.v[DLP_T_INF_ENERGY_J].value, e, 1e-12);
    CHECK_CLOSE(r.v[DLP_T_INF_ENERGY_J].lo, 0.8 * e, 1e-12);
    CHECK_CLOSE(r.v[DLP_T_INF_ENERGY_J].hi, 1.5 * e, 1e-12);
    CHECK_CLOSE(r.v[DLP_T_INF_LATENCY_MS].value, 2.0 * (double)1.1f, 1e-12);
    CHECK_CLOSE(r.v[DLP_T_INF_POWER_W].value, 400, 1e-12);
    /* no power: the direct energy */
    fake_p = 0;
    dlp_pred_result_init(&r);
    CHECK(dlp_predictor_predict(&p, &in, &r, &err) == DLP_OK);
    CHECK_CLOSE(r.v[DLP_T_INF_ENERGY_J].value, (double)0.9f, 1e-12);
    /* power from another predictor before this one: not this one's */
    dlp_pred_result_init(&r);
    r.v[DLP_T_INF_POWER_W] = (dlp_pred_value){.valid = true, .value = 100};
    CHECK(dlp_predictor_predict(&p, &in, &r, &err) == DLP_OK);
    CHECK_CLOSE(r.v[DLP_T_INF_ENERGY_J].value, (double)0.9f, 1e-12);
    /* a non-finite answer is still refused, not combined */
    fake_p = 400, fake_e = NAN;
    dlp_pred_result_init(&r);
    CHECK(dlp_predictor_predict(&p, &in, &r, &err) == DLP_ERR_UNSUPPORTED);
    fake_e = 1.0;
}

static void test_set(void) {
    dlp_examples E;
    if (examples(&E, DLP_MODE_INFERENCE, false)) { CHECK(0); return; }
    int32_t *all = malloc((size_t)E.n * sizeof *all);
    for (int i = 0; i < E.n; i++) all[i] = i;
    dlp_error err;
    char dir[96], p1[128], p2[128];
    snprintf(dir, sizeof dir, "%s/set", tmpdir);
    mkdir(dir, 0700);
    dlp_pred_set *s = NULL;
    CHECK(dlp_pred_set_load(dir, NULL, &s, &err) == DLP_ERR_NOT_FOUND);
    const char *kinds[2] = {"linreg", "roofline"};
    double verr[2][DLP_T_COUNT];
    for (int k = 0; k < 2; k++) {
        dlp_predictor *p = NULL;
        dlp_nn_file f = {0};
        CHECK(dlp_pred_train(kinds[k], &E, all, E.n, all, E.n, NULL, &p, &f, &err) == DLP_OK);
        snprintf(k ? p2 : p1, sizeof p1, "%s/%s.dlpm", dir, kinds[k]);
        CHECK(dlp_nn_file_save(&f, k ? p2 : p1, &err) == DLP_OK);
        for (int t = 0; t < DLP_T_COUNT; t++) verr[k][t] = p ? p->meta.val_error[t] : NAN;
        dlp_predictor_free(p);
        dlp_nn_file_free(&f);
    }
    CHECK(dlp_pred_set_load(dir, NULL, &s, &err) == DLP_OK);
    CHECK(dlp_pred_set_count(s) == 2);
    dlp_pred_config c = E.ex[0].cfg;
    for (int t = 0; s && t < 4; t++) {
        const dlp_predictor *b = dlp_pred_set_best(s, (dlp_target)t, &c);
        CHECK(b != NULL);
        int want = verr[1][t] < verr[0][t];
        if (b) CHECK(!strcmp(b->meta.kind, kinds[want]));
    }
    dlp_pred_input in = {NULL, &c, &E.fg[E.ex[0].fg], NULL};
    dlp_pred_result r;
    CHECK(s && dlp_pred_set_predict(s, &in, &r, &err) == DLP_OK);
    for (int t = 0; t < 4; t++) CHECK(r.v[t].valid && r.v[t].by != NULL);
    c.mode = DLP_MODE_LLM;
    CHECK(s && dlp_pred_set_predict(s, &in, &r, &err) == DLP_ERR_NOT_FOUND);
    dlp_pred_set_free(s);
    FILE *fp = fopen(p1, "wb");
    fputs("garbage", fp);
    fclose(fp);
    s = NULL;
    CHECK(dlp_pred_set_load(dir, NULL, &s, &err) != DLP_OK);
    CHECK(s == NULL && strstr(err.msg, "linreg.dlpm") != NULL);
    unlink(p1); unlink(p2); rmdir(dir);
    free(all);
    dlp_examples_free(&E);
}

int main(void) {
    snprintf(tmpdir, sizeof tmpdir, "/tmp/dlp_test_pred_XXXXXX");
    if (!mkdtemp(tmpdir)) return 1;
    RUN(test_names);
    RUN(test_kind_cost);
    RUN(test_config_check);
    RUN(test_meta_blob_roundtrip);
    RUN(test_linreg_exact);
    RUN(test_roofline_eager_scale);
    RUN(test_mape_factor);
    RUN(test_linreg_calibrated);
    RUN(test_examples);
    RUN(test_examples_threads);
    RUN(test_examples_drop_conflicts);
    RUN(test_examples_host_norm);
    RUN(test_examples_host_norm_llm);
    RUN(test_examples_host_norm_training);
    RUN(test_dippm_roundtrip);
    RUN(test_dippm_training_ws);
    RUN(test_trappm_roundtrip);
    RUN(test_ensemble_roundtrip);
    RUN(test_cost_readout_roundtrip);
    RUN(test_unknown_readout);
    RUN(test_ensemble_is_mean);
    RUN(test_members_at_once);
    RUN(test_inputs_held);
    RUN(test_energy_two_estimates);
    RUN(test_set);
    rmdir(tmpdir);
    return CHECK_DONE();
}
