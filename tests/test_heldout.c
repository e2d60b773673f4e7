/*
 * test_heldout.c — the held-out error table (src/pred/pred_heldout.c),
 * `dlperf eval --record`'s rows (src/eval/eval_record.c) and `dlperf
 * predict`'s choice by them (dlp_predict_set_choose, predict_set.c).
 *
 * Oracles: MAPEs of hand-made records computed by hand; the file's text
 * line by line; a merge of two runs (replaced vs kept rows). For the
 * choice, a models directory of header-only files of made-up kinds whose
 * validation errors order them opposite to the held-out rows: the chosen
 * file per target and runtime is worked out in the comments (the scan never
 * loads a file, so kinds need not be loadable). A roofline directory with
 * a table predicts end to end. Damaged tables fail the open with file and
 * line.
 */
#include "check.h"
#include "roofline_file.h"
#include "dlperf.h"
#include "eval/eval.h"
#include "model/model.h"
#include "pred/pred_heldout.h"
#include "predict/predict.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LAT DLP_T_INF_LATENCY_MS
#define MEM DLP_T_INF_MEMORY_MIB
#define ENE DLP_T_INF_ENERGY_J
#define POW DLP_T_INF_POWER_W

static void write_text(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    if (!f) { perror(path); exit(1); }
    fputs(text, f);
    fclose(f);
}

static char *read_text(const char *path) {
    static char buf[8192];
    FILE *f = fopen(path, "r");
    if (!f) return NULL;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

/* ---- recording ------------------------------------------------------------- */

/* Four inference examples (graph, graph, eager, eager) with latency and
 * memory labels (energy, power unmeasured) and a result predicting them
 * off by known ratios. */
static dlp_example EX[4];
static void make_records(dlp_examples *E, dlp_eval_result *r, const char *kind,
                         const double lat_ratio[4]) {
    memset(E, 0, sizeof *E);
    memset(r, 0, sizeof *r);
    E->mode = DLP_MODE_INFERENCE;
    E->ex = EX;
    E->n = 4;
    static int32_t ex[4] = {0, 1, 2, 3}, fold[4] = {0, 1, 0, 1};
    static double pred[4][DLP_T_COUNT];
    for (int i = 0; i < 4; i++) {
        memset(&EX[i], 0, sizeof EX[i]);
        dlp_pred_config_init(&EX[i].cfg);
        EX[i].cfg.runtime = i < 2 ? DLP_RT_GRAPH : DLP_RT_EAGER;
        for (int t = 0; t < DLP_T_COUNT; t++) {
            EX[i].y[t] = NAN;
            pred[i][t] = NAN;
        }
        EX[i].y[LAT] = 10.0 * (i + 1);
        EX[i].y[MEM] = 100;
        pred[i][LAT] = EX[i].y[LAT] * lat_ratio[i];
        pred[i][MEM] = 104;   /* 4% off everywhere */
        pred[i][ENE] = 1;     /* no label: no row */
    }
    r->n = 4;
    r->ex = ex;
    r->fold = fold;
    r->pred = &pred[0][0];
    r->n_folds = 2;
    snprintf(r->kind, sizeof r->kind, "%s", kind);
    r->split = DLP_SPLIT_LMO;
}

static void test_record_rows(void) {
    dlp_examples E;
    dlp_eval_result r;
    /* latency off by +10%, -30% (graph), +20%, -20% (eager) */
    const double lr[4] = {1.1, 0.7, 1.2, 0.8};
    make_records(&E, &r, "dippm+kern", lr);
    dlp_heldout h = {0};
    dlp_error err;
    CHECK(dlp_eval_record(&E, &r, true, "test", &h, &err) == DLP_OK);
    /* latency and memory, each graph / eager / all: 6 rows */
    CHECK(h.n == 6);
    const dlp_heldout_row *g = dlp_heldout_find(&h, DLP_MODE_INFERENCE,
                                                DLP_RT_GRAPH, "dippm+kern",
                                                LAT, "lmo");
    const dlp_heldout_row *e = dlp_heldout_find(&h, DLP_MODE_INFERENCE,
                                                DLP_RT_EAGER, "dippm+kern",
                                                LAT, "lmo");
    const dlp_heldout_row *a = dlp_heldout_find(&h, DLP_MODE_INFERENCE,
                                                DLP_HELDOUT_ALL_RT,
                                                "dippm+kern", LAT, "lmo");
    CHECK(g && e && a);
    if (g && e && a) {
        CHECK(g->n == 2 && e->n == 2 && a->n == 4);
        CHECK_CLOSE(g->mape_pct, 20.0, 1e-9);   /* (10 + 30) / 2 */
        CHECK_CLOSE(e->mape_pct, 20.0, 1e-9);   /* (20 + 20) / 2 */
        CHECK_CLOSE(a->mape_pct, 20.0, 1e-9);
        CHECK(!strcmp(g->source, "test"));
    }
    const dlp_heldout_row *m = dlp_heldout_find(&h, DLP_MODE_INFERENCE,
                                                DLP_RT_EAGER, "dippm+kern",
                                                MEM, "lmo");
    CHECK(m && fabs(m->mape_pct - 4.0) < 1e-9);
    CHECK(!dlp_heldout_find(&h, DLP_MODE_INFERENCE, DLP_RT_GRAPH,
                            "dippm+kern", ENE, "lmo"));
    /* examples filtered by runtime: no "all" row */
    dlp_heldout_free(&h);
    CHECK(dlp_eval_record(&E, &r, false, NULL, &h, &err) == DLP_OK);
    CHECK(h.n == 4);
    CHECK(!dlp_heldout_find(&h, DLP_MODE_INFERENCE, DLP_HELDOUT_ALL_RT,
                            "dippm+kern", LAT, "lmo"));
    /* training ignores the runtime: "all" rows only, whatever the flag */
    dlp_heldout_free(&h);
    E.mode = DLP_MODE_TRAINING;
    for (int i = 0; i < 4; i++) {
        EX[i].y[DLP_T_TRAIN_STEP_MS] = 50;
        r.pred[i * DLP_T_COUNT + DLP_T_TRAIN_STEP_MS] = 55;
    }
    CHECK(dlp_eval_record(&E, &r, false, NULL, &h, &err) == DLP_OK);
    CHECK(h.n == 1);
    const dlp_heldout_row *t = h.n ? &h.rows[0] : NULL;
    CHECK(t && t->mode == DLP_MODE_TRAINING &&
          t->runtime == DLP_HELDOUT_ALL_RT &&
          t->target == DLP_T_TRAIN_STEP_MS && t->n == 4 &&
          fabs(t->mape_pct - 10.0) < 1e-9);
    dlp_heldout_free(&h);
}

/* Two runs into one file: the second replaces the rows of its keys and
 * keeps the others; the text is what the header documents. */
static void test_record_merge(void) {
    char dir[] = "/tmp/dlp_test_heldout_XXXXXX";
    if (!mkdtemp(dir)) return;
    char path[300];
    snprintf(path, sizeof path, "%s/heldout.csv", dir);
    dlp_examples E;
    dlp_eval_result r;
    dlp_error err;
    dlp_heldout h = {0};
    bool found = true;
    /* missing file: empty table, not an error */
    CHECK(dlp_heldout_read(path, &h, &found, &err) == DLP_OK && !found &&
          h.n == 0);
    /* run 1: dippm (graph latency 20%) and kern */
    const double r1[4] = {1.1, 0.7, 1.2, 0.8}, r2[4] = {1.5, 1.5, 1.5, 1.5};
    make_records(&E, &r, "dippm", r1);
    CHECK(dlp_eval_record(&E, &r, true, "run1, data", &h, &err) == DLP_OK);
    make_records(&E, &r, "kern", r2);
    CHECK(dlp_eval_record(&E, &r, true, "run1, data", &h, &err) == DLP_OK);
    CHECK(h.n == 12);
    CHECK(dlp_heldout_write(path, &h, &err) == DLP_OK);
    const char *txt = read_text(path);
    const char *first = DLP_HELDOUT_HEADER "\n"
        "inference,eager,dippm,latency_ms,lmo,2,20.0000,run1; data\n";
    CHECK(txt && !strncmp(txt, first, strlen(first)));
    CHECK(txt && strstr(txt, "\ninference,all,kern,memory_mib,lmo,4,4.0000,"
                        "run1; data\n"));
    /* run 2, read back from the file: dippm again with latency 50% off */
    CHECK(dlp_heldout_read(path, &h, &found, &err) == DLP_OK && found);
    CHECK(h.n == 12);
    make_records(&E, &r, "dippm", r2);
    CHECK(dlp_eval_record(&E, &r, true, "run2", &h, &err) == DLP_OK);
    CHECK(h.n == 12);   /* every key replaced, none added */
    /* and a training run: added */
    E.mode = DLP_MODE_TRAINING;
    for (int i = 0; i < 4; i++) EX[i].y[DLP_T_TRAIN_STEP_MS] = 50;
    for (int i = 0; i < 4; i++) r.pred[i * DLP_T_COUNT + DLP_T_TRAIN_STEP_MS] = 40;
    CHECK(dlp_eval_record(&E, &r, true, "run2", &h, &err) == DLP_OK);
    CHECK(h.n == 13);
    CHECK(dlp_heldout_write(path, &h, &err) == DLP_OK);
    CHECK(dlp_heldout_read(path, &h, &found, &err) == DLP_OK && h.n == 13);
    const dlp_heldout_row *d = dlp_heldout_find(&h, DLP_MODE_INFERENCE,
                                                DLP_RT_GRAPH, "dippm", LAT,
                                                "lmo");
    const dlp_heldout_row *k = dlp_heldout_find(&h, DLP_MODE_INFERENCE,
                                                DLP_RT_GRAPH, "kern", LAT,
                                                "lmo");
    const dlp_heldout_row *t = dlp_heldout_find(&h, DLP_MODE_TRAINING,
                                                DLP_HELDOUT_ALL_RT, "dippm",
                                                DLP_T_TRAIN_STEP_MS, "lmo");
    CHECK(d && fabs(d->mape_pct - 50) < 1e-9 && !strcmp(d->source, "run2"));
    CHECK(k && fabs(k->mape_pct - 50) < 1e-9 &&
          !strcmp(k->source, "run1; data"));                 /* kept */
    CHECK(t && fabs(t->mape_pct - 20) < 1e-9);
    /* other splits are their own keys */
    dlp_heldout_row x = h.rows[0];
    snprintf(x.split, sizeof x.split, "random");
    CHECK(dlp_heldout_put(&h, &x, &err) == DLP_OK && h.n == 14);
    dlp_heldout_free(&h);
    CHECK(!read_text(path) || unlink(path) == 0);
    rmdir(dir);
}

/* ---- choosing ------------------------------------------------------------- */

/* A header-only inference file of kind `kind` covering `targets` with
 * validation errors err4 on the four inference targets. */
static void write_kind_file(const char *dir, const char *name, const char *kind,
                            uint32_t targets, const double err4[4]) {
    dlp_pred_meta m;
    dlp_pred_meta_init(&m, kind, DLP_MODE_INFERENCE);
    m.targets = targets;
    for (int t = 0; t < 4; t++) m.val_error[t] = err4[t];
    dlp_nn_file f = {0};
    dlp_error err;
    char path[300];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    dlp_pred_meta_write(&m, &f, &err);
    dlp_nn_file_add_str(&f, "x/version", "1", &err);
    CHECK(dlp_nn_file_save(&f, path, &err) == DLP_OK);
    dlp_nn_file_free(&f);
}

static const char *const FILES[4] = {"a.dlpm", "b.dlpm", "c.dlpm", "d.dlpm"};

/* a: dippm, b: dippm+kern, c: trappm (all four targets), d: kern (latency
 * only). By validation error: latency d (0.12) < a (0.16) < b (0.18);
 * memory c (0.0495) < a = b (0.062); energy a (0.20) < b (0.21). */
static void make_choice_dir(char *dir) {
    write_kind_file(dir, FILES[0], "dippm", 0xF,
                    (const double[4]){0.16, 0.062, 0.20, 0.10});
    write_kind_file(dir, FILES[1], "dippm+kern", 0xF,
                    (const double[4]){0.18, 0.062, 0.21, 0.10});
    write_kind_file(dir, FILES[2], "trappm", 0xF,
                    (const double[4]){0.30, 0.0495, 0.40, 0.30});
    write_kind_file(dir, FILES[3], "kern", 1u << LAT,
                    (const double[4]){0.12, NAN, NAN, NAN});
}

/* Held-out rows opposite to the validation order: CUDA-graph latency
 * favours the blend, eager DIPPM; memory (runtime "all" only) TraPPM but
 * DIPPM within 10%; kern has no row; a non-lmo row must not count. */
static const char *const TABLE =
    DLP_HELDOUT_HEADER "\n"
    "inference,graph,dippm,latency_ms,lmo,2024,19.00,s\n"
    "inference,graph,dippm+kern,latency_ms,lmo,2024,17.02,s\n"
    "inference,eager,dippm,latency_ms,lmo,2032,25.15,s\n"
    "inference,eager,dippm+kern,latency_ms,lmo,2032,25.56,s\n"
    "\n"
    "inference,all,dippm,memory_mib,lmo,4056,5.80,s\n"
    "inference,-,trappm,memory_mib,lmo,4056,5.50,s\n"
    "inference,graph,kern,latency_ms,random,300,1.00,s\n"
    "training,all,kern,step_ms,lmo,300,1.00,s\n";

static void choose_with(const char *dir, dlp_runtime rt, int on,
                        int best[DLP_T_COUNT],
                        dlp_choice_basis basis[DLP_T_COUNT]) {
    dlp_predictor_set *ps = NULL;
    dlp_error err;
    for (int t = 0; t < DLP_T_COUNT; t++) best[t] = -2;
    CHECK_MSG(dlp_predictor_open(dir, &ps, &err) == DLP_OK, "%s", err.msg);
    if (!ps) return;
    dlp_pred_config pc;
    dlp_pred_config_init(&pc);
    dlp_device_find("h100", &pc.device, &err);
    pc.runtime = rt;
    dlp_predictor_set_best(ps, on);
    dlp_predict_set_choose(ps, &pc, best, basis);
    dlp_predictor_close(ps);
}

/* --best: the slow kinds (kern, dippm+kern) compete */
static void choose(const char *dir, dlp_runtime rt, int best[DLP_T_COUNT],
                   dlp_choice_basis basis[DLP_T_COUNT]) {
    choose_with(dir, rt, 1, best, basis);
}

static void cleanup_dir(const char *dir) {
    char path[300];
    for (int k = 0; k < 4; k++) {
        snprintf(path, sizeof path, "%s/%s", dir, FILES[k]);
        unlink(path);
    }
    snprintf(path, sizeof path, "%s/" DLP_HELDOUT_FILE, dir);
    unlink(path);
    rmdir(dir);
}

static void test_choice_by_heldout(void) {
    char dir[] = "/tmp/dlp_test_choice_XXXXXX";
    if (!mkdtemp(dir)) return;
    make_choice_dir(dir);
    char path[300];
    snprintf(path, sizeof path, "%s/" DLP_HELDOUT_FILE, dir);
    int best[DLP_T_COUNT];
    dlp_choice_basis basis[DLP_T_COUNT];

    /* no table: validation errors. latency d (kern, 0.12; a's 0.16 is not
     * within 10%); memory c (a's 0.062 > 0.0495 x 1.1); energy a, power
     * riding on it */
    choose(dir, DLP_RT_GRAPH, best, basis);
    CHECK(best[LAT] == 3 && best[MEM] == 2 && best[ENE] == 0 &&
          best[POW] == 0);
    for (int t = 0; t < 4; t++) CHECK(basis[t] == DLP_CHOICE_VALIDATION);
    CHECK(best[DLP_T_TRAIN_STEP_MS] == -1 &&
          basis[DLP_T_TRAIN_STEP_MS] == DLP_CHOICE_NONE);

    /* a table whose rows name no covering kind (training, non-lmo):
     * unchanged */
    write_text(path, DLP_HELDOUT_HEADER "\n"
               "training,all,kern,step_ms,lmo,300,1.00,s\n"
               "inference,graph,kern,latency_ms,random,300,1.00,s\n"
               "inference,graph,xgb,latency_ms,lmo,300,1.00,s\n");
    int b2[DLP_T_COUNT];
    dlp_choice_basis s2[DLP_T_COUNT];
    choose(dir, DLP_RT_GRAPH, b2, s2);
    CHECK(!memcmp(best, b2, sizeof best) && !memcmp(basis, s2, sizeof basis));

    /* the table. CUDA graph: latency b (17.02 < 19.00; kern, though best
     * on validation, has no row: out; a's 19.00 > 17.02 x 1.1: not
     * shared); memory by the "all" rows: c (5.50); energy by validation:
     * a (0.20). Memory could join a (5.80 / 5.50: 5.5% more error),
     * energy could join b (0.21 / 0.20: 5.0% more): the smaller loss goes
     * first, so energy moves to b, and memory, alone in c, has no row for
     * b and stays. Two files (b, c), as the other order would load (b, a) */
    write_text(path, TABLE);
    choose(dir, DLP_RT_GRAPH, best, basis);
    CHECK(best[LAT] == 1 && basis[LAT] == DLP_CHOICE_HELDOUT);
    CHECK(best[MEM] == 2 && basis[MEM] == DLP_CHOICE_HELDOUT_ALL);
    CHECK(best[ENE] == 1 && basis[ENE] == DLP_CHOICE_VALIDATION);
    CHECK(best[POW] == 1 && basis[POW] == DLP_CHOICE_VALIDATION);
    /* eager: latency a (25.15 < 25.56); one file for everything */
    choose(dir, DLP_RT_EAGER, best, basis);
    CHECK(best[LAT] == 0 && basis[LAT] == DLP_CHOICE_HELDOUT);
    CHECK(best[MEM] == 0 && best[ENE] == 0 && best[POW] == 0);

    /* the same table with the blend's graph row above DIPPM's: a wins
     * graph latency too (the order is the table's, not the files') */
    write_text(path, DLP_HELDOUT_HEADER "\n"
               "inference,graph,dippm,latency_ms,lmo,2024,19.00,s\n"
               "inference,graph,dippm+kern,latency_ms,lmo,2024,21.50,s\n");
    choose(dir, DLP_RT_GRAPH, best, basis);
    CHECK(best[LAT] == 0 && basis[LAT] == DLP_CHOICE_HELDOUT);
    CHECK(best[MEM] == 2 && basis[MEM] == DLP_CHOICE_VALIDATION);
    /* eager has no row there: validation (kern) */
    choose(dir, DLP_RT_EAGER, best, basis);
    CHECK(best[LAT] == 3 && basis[LAT] == DLP_CHOICE_VALIDATION);
    CHECK(!strcmp(dlp_choice_basis_name(DLP_CHOICE_HELDOUT), "heldout"));

    /* without --best the slow kinds sit out: the table's graph latency
     * goes to a (DIPPM), not the blend; with no table a too (kern's 0.12
     * and the blend are out) */
    write_text(path, TABLE);
    choose_with(dir, DLP_RT_GRAPH, 0, best, basis);
    CHECK(best[LAT] == 0 && basis[LAT] == DLP_CHOICE_HELDOUT);
    CHECK(best[MEM] == 0 && best[ENE] == 0);
    unlink(path);
    choose_with(dir, DLP_RT_GRAPH, 0, best, basis);
    CHECK(best[LAT] == 0 && basis[LAT] == DLP_CHOICE_VALIDATION);
    CHECK(best[MEM] == 2);
    cleanup_dir(dir);
}

/* A slow kind still answers a target no other file covers, without
 * --best: a directory holding only kern predicts latency with it. */
static void test_slow_kind_alone(void) {
    char dir[] = "/tmp/dlp_test_slow_XXXXXX";
    if (!mkdtemp(dir)) return;
    write_kind_file(dir, FILES[3], "kern", 1u << LAT,
                    (const double[4]){0.12, NAN, NAN, NAN});
    int best[DLP_T_COUNT];
    dlp_choice_basis basis[DLP_T_COUNT];
    choose_with(dir, DLP_RT_GRAPH, 0, best, basis);
    CHECK(best[LAT] == 0 && basis[LAT] == DLP_CHOICE_VALIDATION);
    CHECK(best[MEM] == -1);
    cleanup_dir(dir);
}

/* A roofline directory with a table: the prediction runs, loading the
 * chosen file once, and is the one without the table. */
static void test_predict_with_table(void) {
    char dir[] = "/tmp/dlp_test_choice_XXXXXX";
    if (!mkdtemp(dir)) return;
    char path[300];
    dlp_error err;
    snprintf(path, sizeof path, "%s/a.dlpm", dir);
    CHECK(roofline_file_write(path, DLP_MODE_INFERENCE, 0xF, &err));
    dlp_model *m = NULL;
    CHECK(dlp_model_open("tests/fixtures/models/resnet18.onnx", &m, &err) ==
          DLP_OK);
    if (!m) return;
    dlp_predict_config c;
    dlp_predict_config_init(&c);
    c.device = "h100";
    c.batch = 2;
    dlp_predict_result r0, r1;
    dlp_predictor_set *ps = NULL;
    CHECK(dlp_predictor_open(dir, &ps, &err) == DLP_OK);
    CHECK(ps && dlp_predict(ps, m, &c, &r0, &err) == DLP_OK);
    dlp_predictor_close(ps);
    snprintf(path, sizeof path, "%s/" DLP_HELDOUT_FILE, dir);
    write_text(path, DLP_HELDOUT_HEADER "\n"
               "inference,graph,roofline,latency_ms,lmo,10,50.0,s\n");
    CHECK_MSG(dlp_predictor_open(dir, &ps, &err) == DLP_OK, "%s", err.msg);
    CHECK(ps && dlp_predict(ps, m, &c, &r1, &err) == DLP_OK);
    CHECK(ps && ps->files[0].n_inst == 1);
    CHECK(r0.latency_ms.valid && r1.latency_ms.valid &&
          r0.latency_ms.value == r1.latency_ms.value);
    /* the answer carries the error it was chosen by: the table's 50% */
    CHECK_MSG(fabs(r1.latency_ms.err_pct - 50.0) < 1e-9 && r1.latency_ms.err_basis &&
              !strcmp(r1.latency_ms.err_basis, "heldout"),
              "%g %s", r1.latency_ms.err_pct,
              r1.latency_ms.err_basis ? r1.latency_ms.err_basis : "NULL");
    CHECK(!r0.latency_ms.err_basis ||
          !strcmp(r0.latency_ms.err_basis, "validation"));
    CHECK(r1.throughput_per_s.err_pct == 0 && !r1.throughput_per_s.err_basis);
    dlp_predictor_close(ps);
    dlp_model_free(m);
    unlink(path);
    snprintf(path, sizeof path, "%s/a.dlpm", dir);
    unlink(path);
    rmdir(dir);
}

/* ---- bad tables ------------------------------------------------------------ */

static void test_malformed_table(void) {
    char dir[] = "/tmp/dlp_test_choice_XXXXXX";
    if (!mkdtemp(dir)) return;
    make_choice_dir(dir);
    char path[300];
    snprintf(path, sizeof path, "%s/" DLP_HELDOUT_FILE, dir);
    const char *ok = "inference,graph,dippm,latency_ms,lmo,1,19.0,s\n";
    struct { const char *row; const char *why; } bad[] = {
        {"inference,graph,dippm,latency_ms,lmo,1,19.0\n", "7 fields"},
        {"inference,graph,dippm,latency_ms,lmo,1,19.0,s,x\n", "9 fields"},
        {"serving,graph,dippm,latency_ms,lmo,1,19.0,s\n", "unknown mode"},
        {"inference,cuda,dippm,latency_ms,lmo,1,19.0,s\n", "unknown runtime"},
        {"inference,graph,,latency_ms,lmo,1,19.0,s\n", "bad kind"},
        {"inference,graph,Dippm,latency_ms,lmo,1,19.0,s\n", "bad kind"},
        {"inference,graph,dippm,step_ms,lmo,1,19.0,s\n", "not a target"},
        {"inference,graph,dippm,latency_ms,,1,19.0,s\n", "bad split"},
        {"inference,graph,dippm,latency_ms,lmo,-1,19.0,s\n", "bad count"},
        {"inference,graph,dippm,latency_ms,lmo,1,19%,s\n", "bad mape_pct"},
        {"inference,graph,dippm,latency_ms,lmo,1,-2,s\n", "bad mape_pct"},
        {"inference,graph,dippm,latency_ms,lmo,1,nan,s\n", "bad mape_pct"},
        {"inference,graph,dippm,latency_ms,lmo,2,18.0,t\n", "a second row"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        char text[512];
        snprintf(text, sizeof text, "%s\n%s%s", DLP_HELDOUT_HEADER, ok,
                 bad[k].row);
        write_text(path, text);
        dlp_predictor_set *ps = NULL;
        dlp_error err;
        CHECK_MSG(dlp_predictor_open(dir, &ps, &err) == DLP_ERR_FORMAT && !ps,
                  "case %zu", k);
        CHECK_MSG(strstr(err.msg, "heldout.csv:3:") &&
                  strstr(err.msg, bad[k].why), "case %zu: %s", k, err.msg);
        dlp_predictor_close(ps);
    }
    /* header missing or wrong; empty file */
    const char *heads[] = {ok, "mode,runtime,kind,target,split,n,mape\n", ""};
    const char *where[] = {"heldout.csv:1:", "heldout.csv:1:", "heldout.csv: "};
    for (int k = 0; k < 3; k++) {
        write_text(path, heads[k]);
        dlp_predictor_set *ps = NULL;
        dlp_error err;
        CHECK(dlp_predictor_open(dir, &ps, &err) == DLP_ERR_FORMAT && !ps);
        CHECK_MSG(strstr(err.msg, where[k]) && strstr(err.msg, "header"),
                  "%s", err.msg);
    }
    /* a line too long */
    char big[2100];
    snprintf(big, sizeof big, "%s\n", DLP_HELDOUT_HEADER);
    size_t l = strlen(big);
    memset(big + l, 'x', 1500);
    big[l + 1500] = 0;
    write_text(path, big);
    dlp_predictor_set *ps = NULL;
    dlp_error err;
    CHECK(dlp_predictor_open(dir, &ps, &err) == DLP_ERR_FORMAT);
    CHECK(strstr(err.msg, "heldout.csv:2: line too long"));
    /* a 600-byte source is read whole; one over DLP_HELDOUT_SOURCE_MAX - 1
     * bytes is refused by name */
    for (int k = 0; k < 2; k++) {
        size_t ls = k ? DLP_HELDOUT_SOURCE_MAX : 600;
        snprintf(big, sizeof big, "%s\ninference,graph,dippm,latency_ms,lmo,1,19.0,",
                 DLP_HELDOUT_HEADER);
        l = strlen(big);
        memset(big + l, 's', ls);
        big[l + ls] = 0;
        write_text(path, big);
        dlp_status st = dlp_predictor_open(dir, &ps, &err);
        if (k) {
            CHECK(st == DLP_ERR_FORMAT && strstr(err.msg, "source longer"));
        } else {
            CHECK_MSG(st == DLP_OK && ps && ps->heldout.n == 1 &&
                      strlen(ps->heldout.rows[0].source) == ls, "%s", err.msg);
            dlp_predictor_close(ps);
        }
        ps = NULL;
    }
    /* CRLF line ends and "-" for all runtimes are fine */
    write_text(path, DLP_HELDOUT_HEADER "\r\n"
               "inference,-,dippm,latency_ms,lmo,1,19.0,\r\n");
    CHECK_MSG(dlp_predictor_open(dir, &ps, &err) == DLP_OK, "%s", err.msg);
    CHECK(ps && ps->heldout.n == 1 &&
          ps->heldout.rows[0].runtime == DLP_HELDOUT_ALL_RT);
    dlp_predictor_close(ps);
    cleanup_dir(dir);
}

int main(void) {
    RUN(test_record_rows);
    RUN(test_record_merge);
    RUN(test_choice_by_heldout);
    RUN(test_slow_kind_alone);
    RUN(test_predict_with_table);
    RUN(test_malformed_table);
    return CHECK_DONE();
}
