/* test_blend.c — blend kinds (src/pred/pred_blend.c) and booster storage
 * (src/tree/: UBJSON written, JSON of older files read, tree_convert.c).
 *
 * Oracles: the blend rule on hand-made numbers; a "dippm+kern" file
 * trained on the kern fixture (tests/fixtures/kern/gen.py: eight MLPs with
 * kernel traces and latency / energy / power labels) against DIPPM and
 * kern trained separately on the same split (both train deterministically
 * with one thread and a fixed seed): latency = their geometric mean,
 * memory and power DIPPM's, energy = blended latency x DIPPM's power, and
 * the blend's recorded validation error = the MAPE of that geometric mean
 * on the validation models; a save / load round trip; `dlperf predict`'s
 * set choosing it and naming it; the same file with JSON boosters (as
 * files before UBJSON held them) predicting the same numbers; damaged,
 * truncated and inconsistent files refused with a message naming the
 * problem. */
#include "check.h"
#include "kern_blobs.h"
#include "dlperf.h"
#include "model/model.h"
#include "eval/eval.h"
#include "pred/pred_train.h"
#include "tree/tree.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define KFIX "tests/fixtures/kern/data"
#define LAT DLP_T_INF_LATENCY_MS
#define MEM DLP_T_INF_MEMORY_MIB
#define ENE DLP_T_INF_ENERGY_J
#define POW DLP_T_INF_POWER_W

/* ---- the rule --------------------------------------------------------------- */

static void test_combine_rule(void) {
    double p[2 * DLP_T_COUNT], out[DLP_T_COUNT];
    int from[DLP_T_COUNT];
    for (int i = 0; i < 2 * DLP_T_COUNT; i++) p[i] = NAN;
    /* part 0: DIPPM-like (all four), part 1: kern-like (latency only) */
    p[LAT] = 4;    p[MEM] = 500;  p[ENE] = 2;   p[POW] = 100;
    p[DLP_T_COUNT + LAT] = 9;
    dlp_pred_blend_combine(p, 2, out, from);
    CHECK_CLOSE(out[LAT], 6, 1e-12);
    CHECK(from[LAT] == -1);
    CHECK(out[MEM] == 500 && from[MEM] == 0);
    CHECK(out[POW] == 100 && from[POW] == 0);
    CHECK_CLOSE(out[ENE], 6 * 100 / 1e3, 1e-12);   /* latency x power */
    CHECK(from[ENE] == -1);
    CHECK(isnan(out[DLP_T_TRAIN_STEP_MS]) && from[DLP_T_TRAIN_STEP_MS] == -1);
    /* both predict energy: its geometric mean, not latency x power */
    p[DLP_T_COUNT + ENE] = 8;
    dlp_pred_blend_combine(p, 2, out, NULL);
    CHECK_CLOSE(out[ENE], 4, 1e-12);
    /* a part without latency: energy stays the other part's */
    p[DLP_T_COUNT + ENE] = NAN;
    p[DLP_T_COUNT + LAT] = -3;   /* not positive: not a prediction */
    dlp_pred_blend_combine(p, 2, out, from);
    CHECK(out[LAT] == 4 && from[LAT] == 0);
    CHECK(out[ENE] == 2 && from[ENE] == 0);
    /* three parts, one target each way */
    double q[3 * DLP_T_COUNT];
    for (int i = 0; i < 3 * DLP_T_COUNT; i++) q[i] = NAN;
    q[DLP_T_LLM_THROUGHPUT] = 2;
    q[DLP_T_COUNT + DLP_T_LLM_THROUGHPUT] = 4;
    q[2 * DLP_T_COUNT + DLP_T_LLM_THROUGHPUT] = 8;
    dlp_pred_blend_combine(q, 3, out, from);
    CHECK_CLOSE(out[DLP_T_LLM_THROUGHPUT], 4, 1e-12);
}

/* dlperf eval's blend of two kinds' records follows the same rule */
static void test_eval_blend(void) {
    int32_t ex[2] = {0, 1}, fold[2] = {0, 0};
    double pa[2 * DLP_T_COUNT], pb[2 * DLP_T_COUNT];
    for (int i = 0; i < 2 * DLP_T_COUNT; i++) pa[i] = pb[i] = NAN;
    for (int r = 0; r < 2; r++) {
        double *a = pa + r * DLP_T_COUNT, *b = pb + r * DLP_T_COUNT;
        a[LAT] = 2 + r; a[MEM] = 100; a[ENE] = 1; a[POW] = 300;
        b[LAT] = 8 + r;
    }
    double ra[2 * DLP_T_COUNT];   /* A's predictions before a 0.9 calibration */
    for (int i = 0; i < 2 * DLP_T_COUNT; i++) ra[i] = pa[i] / 0.9;
    dlp_eval_result A = {2, ex, fold, pa, 1, "dippm", DLP_SPLIT_LMO, 0, ra};
    dlp_eval_result B = {2, ex, fold, pb, 1, "kern", DLP_SPLIT_LMO, 0, NULL};
    const dlp_eval_result *parts[2] = {&A, &B};
    dlp_eval_result out;
    dlp_error err;
    CHECK(dlp_eval_blend(parts, 2, "dippm+kern", &out, &err) == DLP_OK);
    CHECK(out.n == 2 && !strcmp(out.kind, "dippm+kern"));
    for (int r = 0; r < 2 && out.pred; r++) {
        const double *o = out.pred + r * DLP_T_COUNT;
        double lat = sqrt((2.0 + r) * (8.0 + r));
        /* the raw blend: A's raw values, B's (uncalibrated) predictions */
        CHECK_CLOSE(out.raw[r * DLP_T_COUNT + LAT], sqrt((2.0 + r) / 0.9 * (8.0 + r)), 1e-12);
        CHECK_CLOSE(o[LAT], lat, 1e-12);
        CHECK(o[MEM] == 100 && o[POW] == 300);
        CHECK_CLOSE(o[ENE], lat * 300 / 1e3, 1e-12);
    }
    dlp_eval_result_free(&out);
    /* other records than the first part's: refused */
    int32_t ex2[2] = {0, 2};
    B.ex = ex2;
    CHECK(dlp_eval_blend(parts, 2, "dippm+kern", &out, &err) == DLP_ERR_ARG);
    CHECK(strstr(err.msg, "same folds") != NULL);
}

static void test_kind_names(void) {
    char buf[64];
    const char *parts[DLP_PRED_BLEND_MAX];
    int n = -1;
    dlp_error err;
    CHECK(dlp_pred_blend_parts("dippm+kern", buf, sizeof buf, parts, &n,
                               &err) == DLP_OK);
    CHECK(n == 2 && !strcmp(parts[0], "dippm") && !strcmp(parts[1], "kern"));
    CHECK(dlp_pred_blend_parts("xgb", buf, sizeof buf, parts, &n, &err) ==
              DLP_OK && n == 1);
    CHECK(dlp_pred_blend_parts("dippm+nope", buf, sizeof buf, parts, &n,
                               &err) == DLP_ERR_NOT_FOUND);
    CHECK(strstr(err.msg, "'nope'") != NULL);
    CHECK(dlp_pred_blend_parts("dippm+", buf, sizeof buf, parts, &n, &err) ==
          DLP_ERR_NOT_FOUND);
    CHECK(dlp_pred_blend_parts("xgb+xgb+xgb+xgb+xgb", buf, sizeof buf, parts,
                               &n, &err) == DLP_ERR_ARG);
    CHECK(dlp_pred_kind_find("dippm+kern") != NULL);
    CHECK(dlp_pred_kind_find("dippm+kern+xgb") != NULL);
    CHECK(dlp_pred_kind_find("dippm+") == NULL);
    CHECK(dlp_pred_kind_find("blend") == NULL);
    CHECK(dlp_pred_kind_find("dippm+nope") == NULL);
}

/* ---- trained on the fixture ------------------------------------------------ */

static dlp_dataset *DS;
static dlp_examples E;
static int32_t TR[64], VA[64], TE[64];
static int NTR, NVA, NTE;
static dlp_predictor *PD, *PK, *PB;   /* dippm, kern, dippm+kern */
static dlp_nn_file FB;                /* the blend's model file */
static char DIR_[64];

static dlp_train_opts opts(void) {
    dlp_train_opts o;
    dlp_train_opts_init(&o);
    o.epochs = 4;
    o.threads = 1;
    return o;
}

static void setup(void) {
    dlp_error err;
    if (dlp_dataset_open(KFIX, &DS, &err) ||
        dlp_examples_build(&E, DS, DLP_MODE_INFERENCE, NULL, &err)) {
        fprintf(stderr, "setup: %s\n", err.msg);
        exit(1);
    }
    for (int i = 0; i < E.n; i++) {
        const char *m = E.models[E.ex[i].model];
        if (!strcmp(m, "m6") || !strcmp(m, "m7")) TE[NTE++] = i;
        else if (!strcmp(m, "m5")) VA[NVA++] = i;
        else TR[NTR++] = i;
    }
    dlp_train_opts o = opts();
    if (dlp_pred_train("dippm", &E, TR, NTR, VA, NVA, &o, &PD, NULL, &err) ||
        dlp_pred_train("kern", &E, TR, NTR, VA, NVA, &o, &PK, NULL, &err) ||
        dlp_pred_train("dippm+kern", &E, TR, NTR, VA, NVA, &o, &PB, &FB,
                       &err)) {
        fprintf(stderr, "setup: %s\n", err.msg);
        exit(1);
    }
    snprintf(DIR_, sizeof DIR_, "/tmp/dlp_test_blend_XXXXXX");
    if (!mkdtemp(DIR_)) exit(1);
}

static void path_in(char *p, size_t cap, const char *name) {
    snprintf(p, cap, "%s/%s", DIR_, name);
}

/* predictions of p on the test examples: pred[i][t], NAN where none */
static void predict_all(const dlp_predictor *p, double *pred, const char **by) {
    dlp_error err;
    for (int i = 0; i < NTE; i++) {
        dlp_pred_result r;
        CHECK_MSG(dlp_pred_example(p, &E, TE[i], &r, &err) == DLP_OK, "%s",
                  err.msg);
        for (int t = 0; t < DLP_T_COUNT; t++) {
            pred[i * DLP_T_COUNT + t] = r.v[t].valid ? r.v[t].value : NAN;
            if (by) by[i * DLP_T_COUNT + t] = r.v[t].valid ? r.v[t].by : NULL;
        }
    }
}

static void test_blend_is_geometric_mean(void) {
    CHECK(!strcmp(PB->meta.kind, "dippm+kern"));
    CHECK(PB->meta.targets == (1u << LAT | 1u << MEM | 1u << ENE | 1u << POW));
    CHECK(PB->meta.runtimes == 0 && PB->meta.precisions == 0);
    static double d[64 * DLP_T_COUNT], k[64 * DLP_T_COUNT], b[64 * DLP_T_COUNT];
    static const char *by[64 * DLP_T_COUNT];
    predict_all(PD, d, NULL);
    predict_all(PK, k, NULL);
    predict_all(PB, b, by);
    for (int i = 0; i < NTE; i++) {
        const double *D = d + i * DLP_T_COUNT, *K = k + i * DLP_T_COUNT,
                     *B = b + i * DLP_T_COUNT;
        const char **Y = by + i * DLP_T_COUNT;
        CHECK(isnan(K[MEM]) && isnan(K[ENE]) && isnan(K[POW]));
        CHECK_CLOSE(B[LAT], sqrt(D[LAT] * K[LAT]), 1e-9);
        CHECK(B[MEM] == D[MEM] && B[POW] == D[POW]);
        CHECK_CLOSE(B[ENE], B[LAT] * D[POW] / 1e3, 1e-9);
        CHECK(Y[LAT] && !strcmp(Y[LAT], "dippm+kern"));
        CHECK(Y[ENE] && !strcmp(Y[ENE], "dippm+kern"));
        CHECK(Y[MEM] && !strcmp(Y[MEM], "dippm"));
        CHECK(Y[POW] && !strcmp(Y[POW], "dippm"));
    }
    /* the recorded validation error is the blend's own */
    dlp_error err;
    double ape = 0;
    int n = 0;
    for (int i = 0; i < NVA; i++) {
        dlp_pred_result rd, rk;
        CHECK(dlp_pred_example(PD, &E, VA[i], &rd, &err) == DLP_OK);
        CHECK(dlp_pred_example(PK, &E, VA[i], &rk, &err) == DLP_OK);
        double y = E.ex[VA[i]].y[LAT];
        double f = sqrt(rd.v[LAT].value * rk.v[LAT].value);
        ape += fabs(f - y) / y;
        n++;
    }
    CHECK(n > 0);
    CHECK_CLOSE(PB->meta.val_error[LAT], ape / n, 1e-6);
    CHECK_CLOSE(PB->meta.val_error[MEM], PD->meta.val_error[MEM], 1e-9);
    CHECK(isfinite(PB->meta.val_error[ENE]) && isfinite(PB->meta.resid_lo[LAT]));
}

/* the storage format of kern's booster `name` in a blend file */
static int booster_format(const dlp_nn_file *f, const char *name) {
    char b[96], l[96];
    snprintf(b, sizeof b, "blend/1/blob/%s", name);
    snprintf(l, sizeof l, "blend/1/bloblen/%s", name);
    const dlp_nn_entry *e = dlp_nn_file_get(f, b, DLP_NN_I64);
    const dlp_nn_entry *n = dlp_nn_file_get(f, l, DLP_NN_I64);
    if (!e || !n || n->count != 1) return -2;
    return dlp_tree_format_of(e->data, (size_t)*(const int64_t *)n->data);
}

static void test_roundtrip(void) {
    char path[128];
    path_in(path, sizeof path, "dippm+kern-inference.dlpm");
    dlp_error err;
    CHECK_MSG(dlp_nn_file_save(&FB, path, &err) == DLP_OK, "%s", err.msg);
    dlp_predictor *q = NULL;
    CHECK_MSG(dlp_predictor_load(path, NULL, &q, &err) == DLP_OK, "%s",
              err.msg);
    if (!q) return;
    CHECK(!strcmp(q->meta.kind, "dippm+kern"));
    static double a[64 * DLP_T_COUNT], b[64 * DLP_T_COUNT];
    predict_all(PB, a, NULL);
    predict_all(q, b, NULL);
    for (int i = 0; i < NTE * DLP_T_COUNT; i++)
        CHECK(isnan(a[i]) ? isnan(b[i]) : a[i] == b[i]);
    for (int t = 0; t < DLP_T_COUNT; t++)
        CHECK(isnan(q->meta.val_error[t]) ||
              fabs(q->meta.val_error[t] - PB->meta.val_error[t]) < 1e-6);
    /* its boosters are forests (since the eightieth session), no blobs:
     * nothing for convert to re-encode */
    CHECK(booster_format(&FB, "kern/node") == -2);
    CHECK(booster_format(&FB, "kern/graph") == -2);
    CHECK(dlp_nn_file_get(&FB, "blend/1/forest/kern/node/trees", DLP_NN_I64));
    CHECK(dlp_nn_file_get(&FB, "blend/1/forest/kern/graph/trees", DLP_NN_I64));
    int nb = -1, nc = -1;
    dlp_nn_file f = {0};
    CHECK(dlp_nn_file_load(&f, path, &err) == DLP_OK);
    CHECK(dlp_tree_file_convert(&f, DLP_TREE_UBJ, &nb, &nc, &err) == DLP_OK);
    CHECK(nb == 0 && nc == 0);
    dlp_nn_file_free(&f);
    dlp_predictor_free(q);
}

/* the blend in a models directory: chosen where its recorded error is the
 * lowest, and named in the JSON */
static void test_predict_set(void) {
    char path[128], bpath[128];
    dlp_error err;
    path_in(bpath, sizeof bpath, "dippm+kern-inference.dlpm");
    CHECK(dlp_nn_file_save(&FB, bpath, &err) == DLP_OK);
    /* a DIPPM file whose latency error is recorded higher, memory lower */
    dlp_nn_file fd = {0};
    dlp_predictor *tmp = NULL;
    dlp_train_opts o = opts();
    CHECK(dlp_pred_train("dippm", &E, TR, NTR, VA, NVA, &o, &tmp, &fd, &err) ==
          DLP_OK);
    dlp_predictor_free(tmp);
    for (int i = 0; i < fd.n; i++)
        if (!strcmp(fd.e[i].name, "pred/per_target")) {
            float *v = fd.e[i].data;
            v[LAT] = (float)(PB->meta.val_error[LAT] * 2 + 0.01);
            v[MEM] = (float)(PB->meta.val_error[MEM] / 2);
        }
    path_in(path, sizeof path, "dippm-inference.dlpm");
    CHECK(dlp_nn_file_save(&fd, path, &err) == DLP_OK);
    dlp_nn_file_free(&fd);
    dlp_predictor_set *ps = NULL;
    CHECK_MSG(dlp_predictor_open(DIR_, &ps, &err) == DLP_OK, "%s", err.msg);
    if (!ps) return;
    /* the blend is a slow kind: it competes only with --best */
    dlp_predictor_set_best(ps, 1);
    bool named = false;
    for (int i = 0; i < dlp_predictor_set_size(ps); i++)
        named |= strstr(dlp_predictor_set_name(ps, i),
                        "dippm+kern (dippm+kern-inference.dlpm)") != NULL;
    CHECK(named);
    void *bytes = NULL;
    size_t len = 0;
    char hash[17];
    snprintf(hash, sizeof hash, "%.16s", E.fg_hash[E.ex[TE[0]].fg]);
    CHECK(dlp_dataset_graph_bytes(DS, hash, &bytes, &len, &err) == DLP_OK);
    dlp_model *m = NULL;
    CHECK(bytes && dlp_model_open_memory(bytes, len, "m.onnx", &m, &err) == DLP_OK);
    if (m) {
        dlp_predict_config c;
        dlp_predict_config_init(&c);
        c.device = "H100";
        c.precision = "fp16";
        c.batch = 8;
        dlp_predict_result r;
        CHECK_MSG(dlp_predict(ps, m, &c, &r, &err) == DLP_OK, "%s", err.msg);
        CHECK(r.latency_ms.valid && !strcmp(r.latency_ms.by, "dippm+kern"));
        CHECK(r.memory_mib.valid && !strcmp(r.memory_mib.by, "dippm"));
        char *json = NULL;
        CHECK(dlp_predict_to_json(&r, "m", &json, &err) == DLP_OK);
        CHECK(json && strstr(json, "\"latency_ms\":\"dippm+kern\"") != NULL);
        free(json);
        /* the latency is the blend's (the set ran the blend file) */
        dlp_pred_config pc;
        dlp_pred_config_init(&pc);
        dlp_model_set_batch(m, 8, &err);
        dlp_model_analyze(m, &err);
        CHECK(dlp_device_find("H100", &pc.device, &err) == DLP_OK);
        pc.precision = DLP_PREC_FP16;
        pc.batch = 8;
        dlp_pred_input in = {&m->graph, &pc, NULL, NULL};
        dlp_pred_result pr;
        dlp_pred_result_init(&pr);
        CHECK(dlp_predictor_predict(PB, &in, &pr, &err) == DLP_OK);
        CHECK_CLOSE(r.latency_ms.value, pr.v[LAT].value, 1e-12);
        dlp_model_free(m);
    }
    free(bytes);
    dlp_predictor_close(ps);
    unlink(path);
}

/* The blend file as written before the eightieth session, its kern
 * component's boosters XGBoost blobs (kern_blobs.h: other boosters than
 * the trained forests), UBJSON: it loads and predicts; as JSON (what
 * files before UBJSON held) the same numbers, and back to UBJSON the same
 * bytes; its blobs turned into forests (dlp_tree_file_forests, `dlperf
 * tree convert --forests`) the same numbers to float32 rounding. */
static void test_json_boosters(void) {
    dlp_error err;
    dlp_nn_file fl = {0}, f = {0};
    CHECK_MSG(kern_blobs_file(&FB, "blend/1/", &fl, &err) == DLP_OK, "%s",
              err.msg);
    CHECK(booster_format(&fl, "kern/node") == DLP_TREE_UBJ);
    CHECK(booster_format(&fl, "kern/graph") == DLP_TREE_UBJ);
    for (int i = 0; i < fl.n; i++)
        CHECK(dlp_nn_file_add_copy(&f, fl.e[i].name, &fl.e[i], &err) ==
              DLP_OK);
    int nb = 0, nc = 0;
    CHECK(dlp_tree_file_convert(&f, DLP_TREE_JSON, &nb, &nc, &err) == DLP_OK);
    CHECK(nb == 2 && nc == 2);
    CHECK(booster_format(&f, "kern/node") == DLP_TREE_JSON);
    CHECK(booster_format(&f, "kern/graph") == DLP_TREE_JSON);
    char path[128], lpath[128];
    path_in(path, sizeof path, "json.dlpm");
    path_in(lpath, sizeof lpath, "legacy.dlpm");
    CHECK(dlp_nn_file_save(&f, path, &err) == DLP_OK);
    CHECK(dlp_nn_file_save(&fl, lpath, &err) == DLP_OK);
    dlp_predictor *q = NULL, *ql = NULL, *qf = NULL;
    CHECK_MSG(dlp_predictor_load(path, NULL, &q, &err) == DLP_OK, "%s",
              err.msg);
    CHECK_MSG(dlp_predictor_load(lpath, NULL, &ql, &err) == DLP_OK, "%s",
              err.msg);
    static double a[64 * DLP_T_COUNT], b[64 * DLP_T_COUNT],
        c[64 * DLP_T_COUNT], t[64 * DLP_T_COUNT];
    predict_all(PB, t, NULL);
    if (ql) predict_all(ql, a, NULL);
    if (q) predict_all(q, b, NULL);
    int differs = 0;
    for (int i = 0; q && ql && i < NTE * DLP_T_COUNT; i++) {
        CHECK(isnan(a[i]) ? isnan(b[i]) : a[i] == b[i]);
        differs += i % DLP_T_COUNT == LAT && fabs(a[i] / t[i] - 1) > 1e-3;
    }
    CHECK(differs > 0);   /* the blobs answered, not the trained forests */
    dlp_predictor_free(q);
    /* and back: the UBJSON bytes of the legacy file */
    CHECK(dlp_tree_file_convert(&f, DLP_TREE_UBJ, &nb, &nc, &err) == DLP_OK);
    CHECK(nb == 2 && nc == 2);
    const char *names[] = {"blend/1/blob/kern/node", "blend/1/blob/kern/graph"};
    for (int k = 0; k < 2; k++) {
        const dlp_nn_entry *x = dlp_nn_file_get(&f, names[k], DLP_NN_I64);
        const dlp_nn_entry *y = dlp_nn_file_get(&fl, names[k], DLP_NN_I64);
        CHECK(x && y && x->count == y->count &&
              !memcmp(x->data, y->data, (size_t)x->count * 8));
    }
    /* the legacy file's boosters as forests: the same numbers */
    int nconv = -1;
    CHECK(dlp_tree_file_forests(&fl, &nconv, &err) == DLP_OK && nconv == 2);
    CHECK(booster_format(&fl, "kern/node") == -2);
    CHECK(dlp_predictor_from_file(&fl, NULL, &qf, &err) == DLP_OK);
    if (qf) predict_all(qf, c, NULL);
    for (int i = 0; qf && ql && i < NTE * DLP_T_COUNT; i++)
        CHECK(isnan(a[i]) ? isnan(c[i]) : fabs(c[i] / a[i] - 1) < 1e-5);
    dlp_predictor_free(ql);
    dlp_predictor_free(qf);
    dlp_nn_file_free(&f);
    dlp_nn_file_free(&fl);
    unlink(path);
    unlink(lpath);
}

/* a copy of the blend file with entry `name` changed by fn, saved (valid
 * CRC) and loaded: the status, err filled */
static dlp_status load_altered_of(const dlp_nn_file *src,
                                  void (*fn)(dlp_nn_file *, void *), void *arg,
                                  dlp_error *err) {
    dlp_nn_file f = {0};
    for (int i = 0; i < src->n; i++)
        dlp_nn_file_add_copy(&f, src->e[i].name, &src->e[i], err);
    fn(&f, arg);
    char path[128];
    path_in(path, sizeof path, "altered.dlpm");
    dlp_status st = dlp_nn_file_save(&f, path, err);
    dlp_predictor *q = NULL;
    if (!st) st = dlp_predictor_load(path, NULL, &q, err);
    CHECK((st == DLP_OK) == (q != NULL));
    dlp_predictor_free(q);
    dlp_nn_file_free(&f);
    unlink(path);
    return st;
}

static dlp_status load_altered(void (*fn)(dlp_nn_file *, void *), void *arg,
                               dlp_error *err) {
    return load_altered_of(&FB, fn, arg, err);
}

static void drop_part(dlp_nn_file *f, void *arg) {
    const char *prefix = arg;
    for (int i = f->n - 1; i >= 0; i--)
        if (!strncmp(f->e[i].name, prefix, strlen(prefix)))
            dlp_nn_file_remove(f, f->e[i].name, f->e[i].kind);
}

static void set_str(dlp_nn_file *f, void *arg) {
    const char *const *kv = arg;
    dlp_nn_file_remove(f, kv[0], DLP_NN_STR);
    dlp_error err;
    dlp_nn_file_add_str(f, kv[0], kv[1], &err);
}

static void set_schema(dlp_nn_file *f, void *arg) {
    const int64_t *v = arg;
    dlp_nn_file_remove(f, "blend/schema", DLP_NN_I64);
    dlp_error err;
    dlp_nn_file_add_i64(f, "blend/schema", v, 3, &err);
}

/* the node booster's bytes: byte at `at` set to `to`, or cut to half
 * (stored again as a blob of that length) */
typedef struct { long at; int to; bool cut; } damage;
static void damage_booster(dlp_nn_file *f, void *arg) {
    const damage *d = arg;
    dlp_nn_entry *e = NULL;
    for (int i = 0; i < f->n; i++)
        if (!strcmp(f->e[i].name, "blend/1/blob/kern/node")) e = &f->e[i];
    if (!e) return;
    if (!d->cut) {
        ((unsigned char *)e->data)[d->at] = (unsigned char)d->to;
        return;
    }
    const dlp_nn_entry *l = dlp_nn_file_get(f, "blend/1/bloblen/kern/node",
                                            DLP_NN_I64);
    size_t n = (size_t)*(const int64_t *)l->data / 2;
    dlp_nn_file half = {0};
    dlp_error err;
    dlp_pred_blob_add(&half, "kern/node", e->data, n, &err);
    dlp_nn_file_remove(f, "blend/1/blob/kern/node", DLP_NN_I64);
    dlp_nn_file_remove(f, "blend/1/bloblen/kern/node", DLP_NN_I64);
    for (int i = 0; i < half.n; i++) {
        char name[96];
        snprintf(name, sizeof name, "blend/1/%s", half.e[i].name);
        dlp_nn_file_add_copy(f, name, &half.e[i], &err);
    }
    dlp_nn_file_free(&half);
}

static void test_bad_files(void) {
    dlp_error err;
    /* a truncated file */
    char path[128];
    path_in(path, sizeof path, "trunc.dlpm");
    CHECK(dlp_nn_file_save(&FB, path, &err) == DLP_OK);
    CHECK(truncate(path, 5000) == 0);
    dlp_predictor *q = NULL;
    CHECK(dlp_predictor_load(path, NULL, &q, &err) != DLP_OK && !q);
    CHECK(strstr(err.msg, "trunc.dlpm") != NULL);
    unlink(path);
    /* a component missing */
    CHECK(load_altered(drop_part, "blend/1/", &err) == DLP_ERR_FORMAT);
    CHECK_MSG(strstr(err.msg, "component 1 ('kern')") != NULL, "%s", err.msg);
    /* a component of another kind than the file's name says */
    const char *kv[2] = {"blend/0/pred/kind", "linreg"};
    CHECK(load_altered(set_str, (void *)kv, &err) == DLP_ERR_FORMAT);
    CHECK_MSG(strstr(err.msg, "'linreg'") != NULL, "%s", err.msg);
    /* the kind names an unknown part, or one part */
    const char *kv2[2] = {"pred/kind", "dippm+nope"};
    CHECK(load_altered(set_str, (void *)kv2, &err) == DLP_ERR_NOT_FOUND);
    CHECK(strstr(err.msg, "'nope'") != NULL);
    const char *kv3[2] = {"pred/kind", "dippm+"};
    CHECK(load_altered(set_str, (void *)kv3, &err) != DLP_OK);
    /* schema: another version, another count, an unknown energy rule */
    const int64_t s1[3] = {2, 2, 1}, s2[3] = {1, 3, 1}, s3[3] = {1, 2, 9};
    CHECK(load_altered(set_schema, (void *)s1, &err) == DLP_ERR_UNSUPPORTED);
    CHECK(strstr(err.msg, "retrain") != NULL);
    CHECK(load_altered(set_schema, (void *)s2, &err) == DLP_ERR_FORMAT);
    CHECK(load_altered(set_schema, (void *)s3, &err) == DLP_ERR_FORMAT);
    /* a booster damaged inside a file with a valid checksum (a file of
     * blobs, as before the eightieth session): its key length's marker,
     * a length made huge, the bytes cut to half */
    dlp_nn_file fl = {0};
    CHECK(kern_blobs_file(&FB, "blend/1/", &fl, &err) == DLP_OK);
    damage d1 = {1, 'x', false}, d2 = {2, 0x7f, false}, d3 = {0, 0, true};
    CHECK(load_altered_of(&fl, damage_booster, &d1, &err) == DLP_ERR_FORMAT);
    CHECK_MSG(strstr(err.msg, "not XGBoost JSON or UBJSON") != NULL, "%s",
              err.msg);
    CHECK(load_altered_of(&fl, damage_booster, &d2, &err) == DLP_ERR_FORMAT);
    CHECK_MSG(strstr(err.msg, "malformed XGBoost UBJSON") != NULL, "%s",
              err.msg);
    CHECK(load_altered_of(&fl, damage_booster, &d3, &err) == DLP_ERR_FORMAT);
    CHECK_MSG(strstr(err.msg, "component 1 ('kern')") != NULL, "%s", err.msg);
    dlp_nn_file_free(&fl);
    /* a forest of the kern component without its words */
    CHECK(load_altered(drop_part, "blend/1/forest/kern/graph/words", &err) ==
          DLP_ERR_FORMAT);
    CHECK_MSG(strstr(err.msg, "forest/kern/graph") != NULL, "%s", err.msg);
    /* training: a blend of one kind, or with --init-from */
    dlp_predictor *p = NULL;
    dlp_train_opts o = opts();
    CHECK(dlp_pred_train("dippm+nope", &E, TR, NTR, VA, NVA, &o, &p, NULL,
                         &err) == DLP_ERR_NOT_FOUND && !p);
    o.init_from = "x.dlpm";
    CHECK(dlp_pred_train("dippm+kern", &E, TR, NTR, VA, NVA, &o, &p, NULL,
                         &err) == DLP_ERR_ARG && !p);
    CHECK(strstr(err.msg, "init-from") != NULL);
}

/* the blend assembled from component files trained before on the same
 * split (parts_from, `dlperf train --parts`): the same file entries, the
 * same predictions and validation errors as the blend trained in one go;
 * a part trained here beside a part from a file; files of another kind
 * or split, a missing file and a count that does not match refused with
 * the file named */
static void save_trained(const char *kind, const int32_t *va, int nva,
                         const char *name, char *path, size_t cap) {
    dlp_error err;
    dlp_train_opts o = opts();
    dlp_predictor *p = NULL;
    dlp_nn_file f = {0};
    path_in(path, cap, name);
    CHECK_MSG(dlp_pred_train(kind, &E, TR, NTR, va, nva, &o, &p, &f, &err) ==
                  DLP_OK && dlp_nn_file_save(&f, path, &err) == DLP_OK,
              "%s", err.msg);
    dlp_predictor_free(p);
    dlp_nn_file_free(&f);
}

static void test_parts_from(void) {
    char pd[128], pk[128], other[128];
    save_trained("dippm", VA, NVA, "part-dippm.dlpm", pd, sizeof pd);
    save_trained("kern", VA, NVA, "part-kern.dlpm", pk, sizeof pk);
    /* validated on the test models instead: another split */
    save_trained("dippm", TE, NTE, "other-dippm.dlpm", other, sizeof other);
    dlp_error err;
    const char *both[2] = {pd, pk}, *one[2] = {pd, NULL};
    for (int k = 0; k < 2; k++) {
        dlp_train_opts o = opts();
        o.parts_from = k ? one : both;
        o.n_parts_from = 2;
        dlp_predictor *p = NULL;
        dlp_nn_file f = {0};
        CHECK_MSG(dlp_pred_train("dippm+kern", &E, TR, NTR, VA, NVA, &o, &p,
                                 &f, &err) == DLP_OK, "%s", err.msg);
        if (!p) continue;
        /* the payload entries are those of the blend trained at once */
        int same = 0, payload = 0;
        for (int i = 0; i < FB.n; i++) {
            if (strncmp(FB.e[i].name, "blend/", 6) ||
                strstr(FB.e[i].name, "/pred/"))
                continue;
            payload++;
            const dlp_nn_entry *x = dlp_nn_file_get(&f, FB.e[i].name,
                                                    FB.e[i].kind);
            same += x && x->count == FB.e[i].count &&
                    !memcmp(x->data, FB.e[i].data,
                            (size_t)x->count * dlp_nn_elem_size(x->kind));
        }
        CHECK(payload > 4);
        CHECK_MSG(same == payload, "%d of %d entries the same", same, payload);
        static double a[64 * DLP_T_COUNT], b[64 * DLP_T_COUNT];
        predict_all(PB, a, NULL);
        predict_all(p, b, NULL);
        for (int i = 0; i < NTE * DLP_T_COUNT; i++)
            CHECK(isnan(a[i]) ? isnan(b[i]) : a[i] == b[i]);
        for (int t = 0; t < DLP_T_COUNT; t++)
            CHECK(isnan(PB->meta.val_error[t])
                      ? isnan(p->meta.val_error[t])
                      : p->meta.val_error[t] == PB->meta.val_error[t]);
        dlp_predictor_free(p);
        dlp_nn_file_free(&f);
    }
    struct { const char *f0, *f1; int n; const char *msg; } bad[] = {
        {other, pk, 2, "not trained on this split"},
        {pk, pd, 2, "is a 'kern' model file"},
        {pd, "/nonexistent/x.dlpm", 2, "/nonexistent/x.dlpm"},
        {pd, pk, 1, "1 component files for the 2 parts"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        dlp_train_opts o = opts();
        const char *v[2] = {bad[k].f0, bad[k].f1};
        o.parts_from = v;
        o.n_parts_from = bad[k].n;
        dlp_predictor *p = NULL;
        dlp_nn_file f = {0};
        CHECK(dlp_pred_train("dippm+kern", &E, TR, NTR, VA, NVA, &o, &p, &f,
                             &err) != DLP_OK && !p && f.n == 0);
        CHECK_MSG(strstr(err.msg, bad[k].msg) != NULL, "%zu: %s", k, err.msg);
    }
    /* no validation part (fewer than 4 models): both measured on the
     * training part, the file checked there */
    char pn[128];
    save_trained("dippm", VA, 0, "noval-dippm.dlpm", pn, sizeof pn);
    {
        dlp_train_opts o = opts();
        const char *v[2] = {pn, NULL};
        o.parts_from = v;
        o.n_parts_from = 2;
        dlp_predictor *p = NULL;
        dlp_nn_file f = {0};
        CHECK_MSG(dlp_pred_train("dippm+kern", &E, TR, NTR, VA, 0, &o, &p, &f,
                                 &err) == DLP_OK, "%s", err.msg);
        dlp_predictor_free(p);
        dlp_nn_file_free(&f);
        o.parts_from = both;   /* validated on VA: not this set */
        CHECK(dlp_pred_train("dippm+kern", &E, TR, NTR, VA, 0, &o, &p, &f,
                             &err) != DLP_OK && !p);
        CHECK_MSG(strstr(err.msg, "not trained on this split") != NULL, "%s",
                  err.msg);
    }
    unlink(pn);
    unlink(pd);
    unlink(pk);
    unlink(other);
}

int main(void) {
    RUN(test_combine_rule);
    RUN(test_eval_blend);
    RUN(test_kind_names);
    setup();
    RUN(test_blend_is_geometric_mean);
    RUN(test_roundtrip);
    RUN(test_predict_set);
    RUN(test_json_boosters);
    RUN(test_bad_files);
    RUN(test_parts_from);
    char path[128];
    path_in(path, sizeof path, "dippm+kern-inference.dlpm");
    unlink(path);
    rmdir(DIR_);
    dlp_predictor_free(PD);
    dlp_predictor_free(PK);
    dlp_predictor_free(PB);
    dlp_nn_file_free(&FB);
    dlp_examples_free(&E);
    dlp_dataset_free(DS);
    return CHECK_DONE();
}
