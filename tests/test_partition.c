/*
 * test_partition.c — the learned SM-partition model (src/predict/
 * predict_part.h) on the real traces of data/: the measured factors against
 * a direct sum of the kernel rows, leave-models-out error below the
 * roofline factor's on the same points (both computed here), monotone
 * factors >= 1, the shipped models/partition.csv against a refit, the file
 * reader's errors, bad SM counts, and the predict path ("learned" vs
 * "roofline" scaling).
 */
#include "check.h"
#include "roofline_file.h"
#include "dlperf.h"
#include "predict/predict.h"
#include "predict/predict_part.h"
#include "model/model.h"
#include "nn/nn.h"
#include "pred/pred.h"

#include <unistd.h>

#define DATA "data"
#define MODELS "models"
#define RESNET "tests/fixtures/models/resnet50.onnx"

static dlp_dataset *DS;
static dlp_part_set SET;
static bool have_set;

static void load_set(void) {
    dlp_error err;
    if (dlp_dataset_open(DATA, &DS, &err)) {
        fprintf(stderr, "cannot open %s: %s\n", DATA, err.msg);
        return;
    }
    have_set = dlp_part_set_load(DS, &SET, &err) == DLP_OK;
    if (!have_set) fprintf(stderr, "partition set: %s\n", err.msg);
}

/* the aggregation, checked against a plain sum over the kernel rows */
static void test_measured_factors(void) {
    CHECK(have_set);
    if (!have_set) return;
    CHECK(SET.n >= 20);      /* 26 configurations in the 2026-11-26 batches */
    dlp_dataset_counts c;
    dlp_dataset_get_counts(DS, &c);
    for (int i = 0; i < SET.n; i += 5) {
        const dlp_part_sample *x = &SET.s[i];
        double sum[200] = {0};
        for (size_t r = 0; r < c.kernels; r++) {
            const dlp_kernel_row *k = dlp_dataset_kernel(DS, r);
            if (strcmp(k->mode, "eager") || strcmp(k->c.hash, x->hash) ||
                strcmp(k->c.device, x->device) || k->c.rep != x->rep ||
                k->batch != x->batch || k->seq != x->seq ||
                k->height != x->height || k->width != x->width ||
                strcmp(k->precision, dlp_precision_name(x->prec)) ||
                k->sms < 0 || k->sms >= 200)
                continue;
            sum[k->sms] += k->duration_us;
        }
        CHECK_CLOSE(x->full_us, sum[0], 1e-9);
        CHECK(x->n >= 1);
        for (int k = 0; k < x->n; k++) {
            CHECK_CLOSE(x->meas[k], sum[x->sms[k]] / sum[0], 1e-9);
            if (k) CHECK(x->sms[k] > x->sms[k - 1]);
        }
    }
}

/* held-out error of the learned factor vs the roofline factor's */
static void test_cross_validation_beats_roofline(void) {
    if (!have_set) return;
    dlp_part_cv cv;
    dlp_error err;
    CHECK_MSG(dlp_part_cross_validate(&SET, 5, &cv, NULL, &err) == DLP_OK,
              "%s", err.msg);
    printf("  5-fold leave-models-out factor MAPE: learned %.2f%%, "
           "roofline eager %.2f%%, graph %.2f%% (%d points, %d models)\n",
           cv.learned, cv.roof_eager, cv.roof_graph, cv.n_points, cv.n_models);
    CHECK(cv.n_models >= 20 && cv.folds == 5);
    CHECK(cv.learned > 0 && cv.learned < cv.roof_eager);
    CHECK(cv.learned < cv.roof_graph);
    /* a deliberately wrong model (no kernel ever scales) must do worse */
    dlp_part_model flat = {0.2, 1e9, 1, 0, 0, 0, 0, 0, 0};
    double e = 0;
    int n = 0;
    for (int i = 0; i < SET.n; i++)
        for (int k = 0; k < SET.s[i].n; k++, n++) {
            double f = dlp_part_profile_factor(&flat, &SET.s[i].prof,
                                               SET.s[i].sms[k], 1);
            e += fabs(f - SET.s[i].meas[k]) / SET.s[i].meas[k] * 100;
        }
    CHECK(e / n > cv.learned);
}

/* fewer SMs are never faster, and never faster than the whole GPU */
static void test_monotone(void) {
    if (!have_set) return;
    dlp_part_model m;
    dlp_error err;
    CHECK_MSG(dlp_part_fit(&SET, NULL, &m, &err) == DLP_OK, "%s", err.msg);
    int bad = 0;
    for (int i = 0; i < SET.n; i++) {
        const dlp_part_profile *p = &SET.s[i].prof;
        double prev = INFINITY;
        for (int s = 1; s <= p->sm_count; s++) {
            double f = dlp_part_profile_factor(&m, p, s, 1);
            if (!(f >= 1) || f > prev * (1 + 1e-12)) bad++;
            prev = f;
        }
        CHECK(dlp_part_profile_factor(&m, p, p->sm_count, 1) == 1);
        /* a bandwidth cap (MIG) never makes it faster either */
        CHECK(dlp_part_profile_factor(&m, p, 16, 0.125) >=
              dlp_part_profile_factor(&m, p, 16, 1));
    }
    CHECK_MSG(bad == 0, "%d non-monotone points", bad);
}

/* models/partition.csv is the model fitted on data/ */
static void test_shipped_file_matches_refit(void) {
    if (!have_set) return;
    dlp_part_model m, f;
    dlp_error err;
    CHECK_MSG(dlp_part_fit(&SET, NULL, &m, &err) == DLP_OK, "%s", err.msg);
    CHECK_MSG(dlp_part_load(MODELS "/" DLP_PART_FILE, &f, &err) == DLP_OK,
              "%s (refit: dlperf partition fit data -o models/partition.csv)",
              err.msg);
    CHECK_CLOSE(f.lat_us, m.lat_us, 0.02);
    CHECK_CLOSE(f.elems_per_sm, m.elems_per_sm, 0.02);
    CHECK_CLOSE(f.bw_sms, m.bw_sms, 0.02);
    CHECK(f.n_configs == SET.n);
}

static void write_text(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    if (!f) return;
    fputs(text, f);
    fclose(f);
}

static void test_file_round_trip_and_errors(void) {
    char dir[] = "/tmp/dlp_part_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char p[256];
    snprintf(p, sizeof p, "%s/p.csv", dir);
    dlp_part_model m = {1.5, 300, 64, 26, 26, 104, 5, 12.5, 27}, r;
    dlp_error err;
    CHECK(dlp_part_save(p, &m, &err) == DLP_OK);
    CHECK_MSG(dlp_part_load(p, &r, &err) == DLP_OK, "%s", err.msg);
    CHECK(r.lat_us == m.lat_us && r.elems_per_sm == m.elems_per_sm &&
          r.bw_sms == m.bw_sms && r.n_configs == 26 && r.folds == 5);
    static const char *const bad[] = {
        "lat_us,1\nelems_per_sm,2\nbw_sms,3\n",                  /* no format */
        "format,dlperf-partition-2\nlat_us,1\nelems_per_sm,2\nbw_sms,3\n",
        "format,dlperf-partition-1\nlat_us,1\nbw_sms,3\n",        /* missing */
        "format,dlperf-partition-1\nlat_us,nan\nelems_per_sm,2\nbw_sms,3\n",
        "format,dlperf-partition-1\nlat_us,1x\nelems_per_sm,2\nbw_sms,3\n",
        "format,dlperf-partition-1\nlat_us,1\nelems_per_sm,0\nbw_sms,3\n",
        "format,dlperf-partition-1\nlat_us,-1\nelems_per_sm,2\nbw_sms,3\n",
        "format,dlperf-partition-1\nlat_us 1\n",
        NULL};
    for (int i = 0; bad[i]; i++) {
        write_text(p, bad[i]);
        CHECK_MSG(dlp_part_load(p, &r, &err) == DLP_ERR_FORMAT, "case %d", i);
        CHECK(strstr(err.msg, p) != NULL);
    }
    unlink(p);
    CHECK(dlp_part_load(p, &r, &err) == DLP_ERR_IO);
    rmdir(dir);
}

static void test_bad_sms(void) {
    dlp_model *mod = NULL;
    dlp_error err;
    CHECK_MSG(dlp_model_open(RESNET, &mod, &err) == DLP_OK, "%s", err.msg);
    if (!mod) return;
    CHECK(dlp_model_set_batch(mod, 8, &err) == DLP_OK);
    CHECK(dlp_model_analyze(mod, &err) == DLP_OK);
    dlp_device d;
    CHECK(dlp_device_load("H100", NULL, &d, &err) == DLP_OK);
    dlp_part_model m = {0.25, 300, 90, 0, 0, 0, 0, 0, 0};
    double f = 0;
    CHECK(dlp_part_factor(&m, &mod->graph, &d, DLP_PREC_FP16, 0, NULL, &f,
                          &err) == DLP_ERR_ARG);
    CHECK(dlp_part_factor(&m, &mod->graph, &d, DLP_PREC_FP16, -3, NULL, &f,
                          &err) == DLP_ERR_ARG);
    CHECK(dlp_part_factor(&m, &mod->graph, &d, DLP_PREC_FP16,
                          d.sm_count + 1, NULL, &f, &err) == DLP_ERR_ARG);
    CHECK(strstr(err.msg, "out of range") != NULL);
    CHECK(dlp_part_factor(NULL, &mod->graph, &d, DLP_PREC_FP16, 16, NULL, &f,
                          &err) == DLP_ERR_ARG);
    CHECK(dlp_part_factor(&m, &mod->graph, &d, DLP_PREC_FP16, d.sm_count,
                          NULL, &f, &err) == DLP_OK && f == 1);
    double f16 = 0, f66 = 0;
    CHECK(dlp_part_factor(&m, &mod->graph, &d, DLP_PREC_FP16, 16, NULL, &f16,
                          &err) == DLP_OK);
    CHECK(dlp_part_factor(&m, &mod->graph, &d, DLP_PREC_FP16, 66, NULL, &f66,
                          &err) == DLP_OK);
    CHECK(f16 > f66 && f66 > 1);
    dlp_mig_profile mig;
    CHECK(dlp_device_mig(&d, "1g.10gb", &mig, &err) == DLP_OK);
    CHECK(dlp_part_factor(&m, &mod->graph, &d, DLP_PREC_FP16, 0, &mig, &f,
                          &err) == DLP_OK && f > 1);
    dlp_model_free(mod);
}

/* predict: "learned" with models/partition.csv, "roofline" without; the
 * latency grows by the model's factor; bad SM counts are errors */
static double predict_lat(const char *dir, int sms, const char *mig,
                          char *scaling, dlp_status *st) {
    dlp_predictor_set *ps = NULL;
    dlp_model *mod = NULL;
    dlp_error err;
    double lat = 0;
    *st = dlp_predictor_open(dir, &ps, &err);
    if (!*st) *st = dlp_model_open(RESNET, &mod, &err);
    if (!*st) {
        dlp_predict_config c;
        dlp_predict_config_init(&c);
        c.device = "H100";
        c.precision = "fp16";
        c.batch = 8;
        c.sms = sms;
        c.mig = mig;
        dlp_predict_result r;
        *st = dlp_predict(ps, mod, &c, &r, &err);
        if (!*st) {
            lat = r.latency_ms.value;
            strcpy(scaling, r.scaling);
        }
    }
    if (*st) fprintf(stderr, "  predict: %s\n", err.msg);
    dlp_model_free(mod);
    dlp_predictor_close(ps);
    return lat;
}

/* a roofline predictor file of the inference targets */
static bool write_roofline(const char *dir) {
    char path[400];
    dlp_error err;
    snprintf(path, sizeof path, "%s/a_inf.dlpm", dir);
    return roofline_file_write(path, DLP_MODE_INFERENCE,
                               1u << DLP_T_INF_LATENCY_MS |
                                   1u << DLP_T_INF_MEMORY_MIB,
                               &err);
}

static void test_predict_scaling(void) {
    dlp_part_model m;
    dlp_error err;
    CHECK_MSG(dlp_part_load(MODELS "/" DLP_PART_FILE, &m, &err) == DLP_OK,
              "%s", err.msg);
    char dir[] = "/tmp/dlp_part_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    CHECK(write_roofline(dir));
    char sc[32] = "", cmd[512], p[256];
    dlp_status st;
    /* without a partition file: roofline */
    double full = predict_lat(dir, 0, NULL, sc, &st);
    CHECK(st == DLP_OK && !strcmp(sc, "none") && full > 0);
    double roof = predict_lat(dir, 32, NULL, sc, &st);
    CHECK(st == DLP_OK && !strcmp(sc, "roofline") && roof > full);
    /* with the shipped one: learned, by the model file's factor */
    snprintf(p, sizeof p, "%s/" DLP_PART_FILE, dir);
    CHECK(dlp_part_save(p, &m, &err) == DLP_OK);
    double part = predict_lat(dir, 32, NULL, sc, &st);
    CHECK(st == DLP_OK && !strcmp(sc, "learned"));
    dlp_model *mod = NULL;
    CHECK(dlp_model_open(RESNET, &mod, &err) == DLP_OK);
    if (mod) {
        dlp_model_set_batch(mod, 8, &err);
        dlp_model_analyze(mod, &err);
        dlp_device d;
        dlp_device_load("H100", NULL, &d, &err);
        double f = 0;
        CHECK(dlp_part_factor(&m, &mod->graph, &d, DLP_PREC_FP16, 32, NULL,
                              &f, &err) == DLP_OK);
        CHECK_CLOSE(part / full, f, 1e-9);
        dlp_model_free(mod);
    }
    (void)predict_lat(dir, 0, "1g.10gb", sc, &st);
    CHECK(st == DLP_OK && !strcmp(sc, "learned"));
    (void)predict_lat(dir, 133, NULL, sc, &st);
    CHECK(st == DLP_ERR_ARG);
    (void)predict_lat(dir, -1, NULL, sc, &st);
    CHECK(st == DLP_ERR_ARG);
    /* a malformed partition file fails the open, naming it */
    write_text(p, "format,dlperf-partition-1\nlat_us,1\n");
    dlp_predictor_set *ps = NULL;
    CHECK(dlp_predictor_open(dir, &ps, &err) == DLP_ERR_FORMAT);
    CHECK(strstr(err.msg, DLP_PART_FILE) != NULL);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
}

int main(void) {
    load_set();
    RUN(test_measured_factors);
    RUN(test_cross_validation_beats_roofline);
    RUN(test_monotone);
    RUN(test_shipped_file_matches_refit);
    RUN(test_file_round_trip_and_errors);
    RUN(test_bad_sms);
    RUN(test_predict_scaling);
    if (have_set) dlp_part_set_free(&SET);
    dlp_dataset_free(DS);
    return CHECK_DONE();
}
