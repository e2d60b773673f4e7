/*
 * cmd_eval.c — `dlperf eval DATA --kind K[,K..] --split S[,S..]`: trains
 * each kind on every fold of each split and reports, per target, MAPE,
 * RMSPE, RMSE, Kendall's tau and accuracy within 10%, overall and per
 * family; then, per target and family, whether each learned kind beats both
 * baselines (linreg, roofline) when they were evaluated too. Writes an
 * actual-vs-predicted SVG per kind, split and target with --plot-dir, and
 * the same tables as Markdown with --markdown FILE (appended), and with
 * --record FILE the overall MAPE per kind, split, runtime and target
 * merged into FILE, the held-out error table `dlperf predict` chooses
 * files by (src/pred/pred_heldout.h; models/heldout.csv). A kind
 * "a+b" is a blend (src/eval/eval_run.c); when a and b ran before it in
 * the same call, their records are blended instead of retrained. With
 * --predictions FILE every test record of every run goes to FILE as CSV
 * (src/eval/eval_predictions.c).
 * With --models DIR nothing is trained: each kind's file of the mode,
 * DIR/<kind>-<mode>.dlpm, is scored on every example of DATA (split
 * "none"), e.g. the shipped models/ on a new batch of measurements.
 * Exit: 0 ok, 1 failure, 2 usage.
 */
#include <math.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli.h"
#include "learn_cli.h"
#include "eval/eval.h"
#include "predict/predict.h"

/* mkdir -p: every missing directory of path; 0 or -1 (errno set) */
static int mkdir_p(const char *path) {
    char buf[1024];
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof buf) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(buf, path, n + 1);
    for (char *p = buf + 1; ; p++) {
        if (*p != '/' && *p) continue;
        char c = *p;
        *p = 0;
        if (mkdir(buf, 0777) && errno != EEXIST) return -1;
        *p = c;
        if (!c) break;
    }
    struct stat st;
    if (stat(path, &st) || !S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        return -1;
    }
    return 0;
}

static void usage(FILE *f) {
    fprintf(f, "usage: dlperf eval DATA [--kind K,..] [--split S,..] [options]\n"
               "  --kind     linreg,roofline,dippm,trappm,xgb,kern or a blend a+b\n"
               "             (default: "
               "linreg,roofline,dippm)\n"
               "  --split    random,mc,lmo,lofo,lgo or all (default: lmo;\n"
               "             lgo: 5-fold leave-graphs-out)\n"
               "  --plot-dir DIR     actual-vs-predicted SVGs\n"
               "  --markdown FILE    append the tables as Markdown\n"
               "  --record FILE      merge the overall MAPE per kind, split,\n"
               "                     runtime and target into FILE (CSV; as\n"
               "                     models/heldout.csv, read by predict)\n"
               "  --predictions FILE every held-out prediction next to its\n"
               "                     label (CSV, one row per record and target)\n"
               "  --top-models N     per target, the N models with the largest\n"
               "                     share of the error (default 5, 0: none)\n"
               "  --split-seed N     the folds' seed (default: --seed), so runs\n"
               "                     that differ in --seed alone share the folds\n"
               "  --models DIR       train nothing: score each kind's trained\n"
               "                     file DIR/<kind>-<mode>.dlpm on every\n"
               "                     example of DATA (split none; e.g. the\n"
               "                     shipped models/ on a new batch)\n"
               "%s", learn_opts_help());
}

static void pct(FILE *f, double x) {
    if (isfinite(x)) fprintf(f, "%7.2f%%", 100 * x);
    else fprintf(f, "%8s", "-");
}

/* the top models by share of target t's error, to stdout (and md) */
static void print_model_shares(const dlp_examples *E, const dlp_eval_result *r,
                               dlp_target t, int top, FILE *md) {
    dlp_model_share *s;
    int n;
    dlp_error err;
    if (dlp_eval_model_shares(E, r, t, -1, &s, &n, &err)) {
        fprintf(stderr, "dlperf eval: %s\n", err.msg);
        return;
    }
    if (n > 1) {
        printf("  largest shares of the %s error (of %d models):\n",
               dlp_target_name(t), n);
        if (md)
            fprintf(md, "\nLargest shares of the %s error (of %d models):\n\n"
                    "| model | family | n | share | MAPE | median predicted/actual |\n"
                    "|---|---|---|---|---|---|\n", dlp_target_name(t), n);
    }
    for (int i = 0; n > 1 && i < n && i < top; i++) {
        printf("    %-34s %-14s %6d  share %5.1f%%  MAPE %7.2f%%  ratio %.3f\n",
               E->models[s[i].model], E->families[s[i].family], s[i].n,
               100 * s[i].share, 100 * s[i].mape, s[i].median_ratio);
        if (md)
            fprintf(md, "| %s | %s | %d | %.1f%% | %.2f%% | %.3f |\n",
                    E->models[s[i].model], E->families[s[i].family], s[i].n,
                    100 * s[i].share, 100 * s[i].mape, s[i].median_ratio);
    }
    free(s);
}

static void fold_cb(void *user, int i, int n, const dlp_fold *fo) {
    const learn_opts *o = user;
    if (!o->quiet)
        fprintf(stderr, "-- %s (%d/%d): train %d, val %d, test %d\n", fo->name,
                i + 1, n, fo->ntr, fo->nva, fo->nte);
}

typedef struct {
    const char *kind;
    dlp_split_kind split;
    dlp_eval_result r;
    bool ok;
} run;

/* --record: the evaluated runs merged into the table at path (read again
 * now: another eval may have written it meanwhile). 0 ok, 1 failure. */
/* The source column of --record's rows: the day, the data (its newest
 * batch and the feature schema) and the options that shape a run, so a
 * row says what measured it (no commas: the table is CSV). */
static void record_source(char *buf, size_t cap, const learn_opts *o,
                          const dlp_dataset *ds, uint64_t split_seed) {
    char day[16] = "";
    time_t now = time(NULL);
    struct tm tm;
    if (gmtime_r(&now, &tm)) strftime(day, sizeof day, "%Y-%m-%d", &tm);
    const char *last = dlp_dataset_last_batch(ds);
    const dlp_train_opts *t = &o->train;
    size_t k = 0;
#define ADD(...)                                                              \
    do {                                                                      \
        if (k < cap) {                                                        \
            int w_ = snprintf(buf + k, cap - k, __VA_ARGS__);                 \
            k = w_ < 0 ? cap : k + (size_t)w_;                                \
        }                                                                     \
    } while (0)
    ADD("%s %s", day, o->data);
    if (last) ADD(" through %s", last);
    ADD("; schema %d; seed %llu; split-seed %llu", DLP_FEAT_SCHEMA,
        (unsigned long long)t->seed, (unsigned long long)split_seed);
    if (o->device) ADD("; device %s", o->device);
    if (o->runtime >= 0)
        ADD("; runtime %s", dlp_runtime_name((dlp_runtime)o->runtime));
    if (o->precision >= 0)
        ADD("; precision %s", dlp_precision_name((dlp_precision)o->precision));
    if (t->epochs > 0) ADD("; epochs %d", t->epochs);
    if (t->patience > 0) ADD("; patience %d", t->patience);
    if (t->hidden > 0) ADD("; hidden %d", t->hidden);
    if (t->lr > 0) ADD("; lr %g", t->lr);
    if (t->members > 1) ADD("; members %d", t->members);
    if (t->ema > 0) ADD("; ema %g", t->ema);
    if (t->readout > 0 && learn_readout_name(t->readout))
        ADD("; readout %s", learn_readout_name(t->readout));
    if (t->no_optime) ADD("; no-optime");
    if (t->refit) ADD("; refit");
#undef ADD
    for (char *c = buf; *c; c++)   /* a path or device name with a comma */
        if (*c == ',' || *c == '\n' || *c == '"') *c = ' ';
}

static int write_record(const char *path, const learn_opts *o,
                        const dlp_dataset *ds, uint64_t split_seed,
                        const dlp_examples *E, const run *runs, int n) {
    char source[320];
    record_source(source, sizeof source, o, ds, split_seed);
    if (o->has_host_norm) {   /* which labels the errors are against */
        size_t k = strlen(source);
        snprintf(source + k, sizeof source - k, "; host-norm %.4g us: "
                 "errors against the labels %s", o->host_norm.ref_us,
                 E->n_host_normed ? "moved to that host" : "as measured");
    }
    dlp_heldout h = {0};
    dlp_error err;
    dlp_status st = dlp_heldout_read(path, &h, NULL, &err);
    int rows = 0, lmo = 0, done = 0;
    for (int q = 0; !st && q < n; q++) {
        if (!runs[q].ok) continue;
        done++;
        int before = h.n;
        st = dlp_eval_record(E, &runs[q].r, o->runtime < 0, source, &h, &err);
        rows += h.n - before;
        lmo += runs[q].split == DLP_SPLIT_LMO;
    }
    if (!st) st = dlp_heldout_write(path, &h, &err);
    if (st) fprintf(stderr, "dlperf eval: --record: %s\n", err.msg);
    else if (!o->quiet)
        fprintf(stderr, "recorded %d kind x split runs in %s (%d rows, %d "
                "new)%s\n", done, path, h.n, rows,
                lmo ? "" : "; predict reads only split lmo rows");
    dlp_heldout_free(&h);
    return st ? 1 : 0;
}

/* print_asmeasured's cells: per run, target and runtime (each
 * dlp_runtime, then DLP_RT_COUNT for all), c counting them in that
 * order. Training steps have no runtime (eval_record.c): "all" only. */
#define ASM_NRT (DLP_RT_COUNT + 1)
static bool asm_cell_kept(const dlp_examples *E, const run *R, int rt) {
    return R->ok && (E->mode != DLP_MODE_TRAINING || rt == DLP_RT_COUNT);
}
static dlp_status asm_metrics(const dlp_examples *E, const run *R,
                              dlp_target t, int rt, dlp_metrics *m,
                              dlp_error *err) {
    return dlp_eval_metrics_runtime(E, &R->r, t,
                                    rt == DLP_RT_COUNT ? DLP_HELDOUT_ALL_RT : rt,
                                    m, err);
}

/* --host-norm trains on and tabulates labels moved to the reference host;
 * `dlperf predict` without --host-us meets them as measured. Prints per
 * run, target and runtime the MAPE against both (stdout, and mdf when
 * given) and leaves E's labels as measured. 0 done (or nothing moved), 1
 * when the labels cannot be brought back (a runtime filter left the
 * CUDA-graph twins out; said on stderr, E's labels left moved). */
static int print_asmeasured(dlp_examples *E, const run *runs, int n,
                            FILE *mdf) {
    if (E->n_host_normed == 0) return 0;
    dlp_target ts[DLP_T_COUNT];
    int nt = dlp_mode_targets(E->mode, ts);
    size_t cells = (size_t)n * (size_t)nt * ASM_NRT, c = 0;
    dlp_metrics *moved = calloc(cells ? cells : 1, sizeof *moved);
    dlp_error err;
    dlp_status st = moved ? DLP_OK
                          : dlp_fail(&err, DLP_ERR_NOMEM, "out of memory");
    for (int q = 0; q < n && !st; q++)
        for (int j = 0; j < nt && !st; j++)
            for (int rt = 0; rt < ASM_NRT && !st; rt++, c++)
                if (asm_cell_kept(E, &runs[q], rt))
                    st = asm_metrics(E, &runs[q], ts[j], rt, &moved[c], &err);
    double ref = E->host_norm.ref_us;
    int normed = E->n_host_normed;
    if (!st) st = dlp_examples_host_norm(E, NULL, &err);
    if (st) {
        fprintf(stderr, "dlperf eval: the labels as measured: %s\n", err.msg);
        free(moved);
        return 1;
    }
    printf("\n== against the labels as measured (what `dlperf predict` "
           "without --host-us meets; the tables above: the labels of "
           "%d examples moved to a %.4g us host) ==\n", normed, ref);
    printf("%-12s %-26s %-8s %6s %9s %12s\n", "kind", "target", "runtime",
           "n", "moved", "as measured");
    if (mdf)
        fprintf(mdf, "\nAgainst the labels as measured (what `dlperf "
                "predict` without `--host-us` meets; the tables above: the "
                "labels of %d examples moved to a %.4g us host):\n\n"
                "| kind | target | runtime | n | MAPE, moved labels | MAPE, "
                "labels as measured |\n|---|---|---|---|---|---|\n", normed,
                ref);
    c = 0;
    for (int q = 0; q < n && !st; q++)
        for (int j = 0; j < nt && !st; j++)
            for (int rt = 0; rt < ASM_NRT && !st; rt++, c++) {
                if (!asm_cell_kept(E, &runs[q], rt) || moved[c].n == 0) continue;
                dlp_metrics m;
                if ((st = asm_metrics(E, &runs[q], ts[j], rt, &m, &err))) break;
                const char *rn = rt == DLP_RT_COUNT
                                     ? "all" : dlp_runtime_name((dlp_runtime)rt);
                printf("%-12s %-26s %-8s %6d ", runs[q].kind,
                       dlp_target_name(ts[j]), rn, m.n);
                pct(stdout, moved[c].mape);
                printf("  ");
                pct(stdout, m.mape);
                printf("\n");
                if (mdf)
                    fprintf(mdf, "| %s | %s | %s | %d | %.2f%% | %.2f%% |\n",
                            runs[q].kind, dlp_target_name(ts[j]), rn, m.n,
                            100 * moved[c].mape, 100 * m.mape);
            }
    free(moved);
    if (st) fprintf(stderr, "dlperf eval: %s\n", err.msg);
    return st ? 1 : 0;
}

/* --models: kind's file of E's mode in dir scored on every example of E
 * (dlp_eval_score). 0 ok, 1 failure (said on stderr). */
static int score_file(const char *dir, const char *kind, const dlp_examples *E,
                      dlp_eval_result *out) {
    char path[1024];
    int w = snprintf(path, sizeof path, "%s/%s-%s%s", dir, kind,
                     dlp_mode_name(E->mode), DLP_PRED_FILE_EXT);
    dlp_error err;
    dlp_predictor *p = NULL;
    dlp_status st = w < 0 || (size_t)w >= sizeof path
                        ? dlp_fail(&err, DLP_ERR_ARG, "path too long: %s/...", dir)
                        : dlp_predictor_load(path, dlp_predict_extra_kinds(), &p, &err);
    if (!st) st = dlp_eval_score(E, p, out, &err);
    if (st) fprintf(stderr, "dlperf eval: --models: %s: %s\n", path, err.msg);
    dlp_predictor_free(p);
    return st ? 1 : 0;
}

int cmd_eval(int argc, char **argv) {
    learn_opts o;
    learn_opts_init(&o);
    char kinds_s[256] = "linreg,roofline,dippm", splits_s[64] = "lmo";
    const char *plot_dir = NULL, *md = NULL, *record = NULL, *preds = NULL,
               *models = NULL;
    bool split_given = false;
    int top_models = 5;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int r = learn_opt(&o, argc, argv, &i);
        if (r < 0) return 2;
        if (r) continue;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) { usage(stdout); return 0; }
        bool valued = !strcmp(a, "--kind") || !strcmp(a, "--split") ||
                      !strcmp(a, "--plot-dir") || !strcmp(a, "--markdown") ||
                      !strcmp(a, "--record") || !strcmp(a, "--predictions") ||
                      !strcmp(a, "--top-models") || !strcmp(a, "--models");
        if (valued && i + 1 >= argc) {
            fprintf(stderr, "dlperf eval: %s needs a value\n", a);
            return 2;
        }
        if (!strcmp(a, "--kind")) snprintf(kinds_s, sizeof kinds_s, "%s", argv[++i]);
        else if (!strcmp(a, "--split")) {
            snprintf(splits_s, sizeof splits_s, "%s", argv[++i]);
            split_given = true;
        }
        else if (!strcmp(a, "--models")) models = argv[++i];
        else if (!strcmp(a, "--plot-dir")) plot_dir = argv[++i];
        else if (!strcmp(a, "--markdown")) md = argv[++i];
        else if (!strcmp(a, "--record")) record = argv[++i];
        else if (!strcmp(a, "--predictions")) preds = argv[++i];
        else if (!strcmp(a, "--top-models")) {
            char *end;
            long v = strtol(argv[++i], &end, 10);
            if (*end || v < 0 || v > 1000) {
                fprintf(stderr, "dlperf eval: --top-models wants 0..1000, "
                        "not %s\n", argv[i]);
                return 2;
            }
            top_models = (int)v;
        }
        else if (a[0] == '-') {
            fprintf(stderr, "dlperf eval: unknown option %s\n", a);
            usage(stderr);
            return 2;
        } else if (!o.data) o.data = a;
        else { usage(stderr); return 2; }
    }
    if (!o.data) { usage(stderr); return 2; }
    if (models && (split_given || record || o.split_seed >= 0)) {
        fprintf(stderr, "dlperf eval: --models scores trained files on every "
                "example: no --split, --split-seed or --record with it\n");
        return 2;
    }
    if (models) snprintf(splits_s, sizeof splits_s, "none");
    if (!strcmp(splits_s, "all")) snprintf(splits_s, sizeof splits_s, "random,mc,lmo,lofo,lgo");
    const char *kinds[8];
    int nk = 0;
    bool need_pool = false;
    for (char *s = strtok(kinds_s, ","); s && nk < 8; s = strtok(NULL, ",")) {
        char buf[256];
        const char *parts[DLP_EVAL_MAX_PARTS];
        dlp_error e;
        int np = dlp_eval_kind_parts(s, buf, sizeof buf, parts, &e);
        if (np < 0) {
            fprintf(stderr, "dlperf eval: %s\n", e.msg);
            return 2;
        }
        kinds[nk++] = s;
        for (int j = 0; j < np; j++)
            if (!strcmp(parts[j], "trappm")) need_pool = true;
    }
    dlp_split_kind splits[DLP_SPLIT_COUNT];
    int ns = 0;
    for (char *s = strtok(splits_s, ","); s && ns < DLP_SPLIT_COUNT; s = strtok(NULL, ",")) {
        dlp_error err;
        if (models) splits[ns] = DLP_SPLIT_NONE;
        else if (dlp_split_parse(s, &splits[ns], &err)) {
            fprintf(stderr, "dlperf eval: %s\n", err.msg);
            return 2;
        }
        ns++;
    }
    if (record) {   /* a damaged table fails now, not after the training */
        dlp_heldout h = {0};
        dlp_error err;
        dlp_status st = dlp_heldout_read(record, &h, NULL, &err);
        dlp_heldout_free(&h);
        if (st) {
            fprintf(stderr, "dlperf eval: --record: %s\n", err.msg);
            return 1;
        }
    }
    if (preds) {    /* an unwritable path fails now, not after the training */
        FILE *f = fopen(preds, "w");
        if (!f || fclose(f)) {
            fprintf(stderr, "dlperf eval: --predictions: cannot write %s: %s\n",
                    preds, strerror(errno));
            return 1;
        }
    }
    if (o.train.threads > 0) dlp_nn_set_threads(o.train.threads);
    dlp_dataset *ds = NULL;
    dlp_examples E;
    /* a scored TraPPM file carries its encoder: no pool to featurize */
    if (learn_examples(&o, need_pool && !models, &ds, &E)) return 1;
    if (plot_dir && mkdir_p(plot_dir)) {
        fprintf(stderr, "dlperf eval: cannot create %s: %s\n", plot_dir,
                strerror(errno));
        dlp_examples_free(&E);
        dlp_dataset_free(ds);
        return 1;
    }
    FILE *mdf = NULL;
    if (md && !(mdf = fopen(md, "a"))) {
        fprintf(stderr, "dlperf eval: cannot write %s\n", md);
        dlp_examples_free(&E);
        dlp_dataset_free(ds);
        return 1;
    }
    dlp_target ts[DLP_T_COUNT];
    int nt = dlp_mode_targets(o.mode, ts);
    run *runs = calloc((size_t)(nk * ns), sizeof *runs);
    int failed_files = 0;   /* --models: files that could not be scored */
    int rc = runs ? 0 : 1;
    for (int s = 0; s < ns && !rc; s++)
        for (int k = 0; k < nk && !rc; k++) {
            run *R = &runs[s * nk + k];
            R->kind = kinds[k];
            R->split = splits[s];
            if (!o.quiet)
                fprintf(stderr, "== %s, split %s\n", kinds[k], dlp_split_name(splits[s]));
            dlp_error err;
            /* a blend whose parts ran before it in this split reuses their
             * records (same seed: the same folds and models) */
            char buf[256];
            const char *parts[DLP_EVAL_MAX_PARTS];
            const dlp_eval_result *pr[DLP_EVAL_MAX_PARTS];
            int np = dlp_eval_kind_parts(kinds[k], buf, sizeof buf, parts, &err);
            int found = 0;
            for (int j = 0; np > 1 && j < np; j++)
                for (int q = 0; q < k; q++)
                    if (runs[s * nk + q].ok && !strcmp(kinds[q], parts[j])) {
                        pr[found++] = &runs[s * nk + q].r;
                        break;
                    }
            if (models) {
                if (score_file(models, kinds[k], &E, &R->r)) {
                    failed_files++;
                    continue;   /* report the others, then exit 1 */
                }
            } else if (np > 1 && found == np) {
                if (dlp_eval_blend(pr, np, kinds[k], &R->r, &err)) {
                    fprintf(stderr, "dlperf eval: %s\n", err.msg);
                    continue;
                }
            } else if (dlp_eval_run(&E, kinds[k], splits[s],
                                    o.split_seed >= 0 ? (uint64_t)o.split_seed
                                                    : o.train.seed,
                                    &o.train, fold_cb, &o, &R->r, &err)) {
                fprintf(stderr, "dlperf eval: %s/%s: %s\n", kinds[k],
                        dlp_split_name(splits[s]), err.msg);
                continue;   /* report the others */
            }
            R->ok = true;
        }
    for (int q = 0; q < nk * ns && !rc; q++) {
        run *R = &runs[q];
        if (!R->ok) continue;
        const char *sn = dlp_split_name(R->split);
        if (models)
            printf("\n== %s, %s, the file in %s: %d predictions ==\n",
                   R->kind, dlp_mode_name(o.mode), models, R->r.n);
        else
            printf("\n== %s, %s, split %s: %d folds, %d test predictions, "
                   "training %.0f s ==\n", R->kind, dlp_mode_name(o.mode), sn,
                   R->r.n_folds, R->r.n, R->r.train_s);
        printf("%-26s %-14s %6s %8s %8s %10s %7s %8s\n", "target", "family",
               "n", "MAPE", "RMSPE", "RMSE", "tau", "in 10%");
        if (mdf)
            fprintf(mdf, "\n#### %s — %s, split `%s` (%d folds, %d test "
                    "predictions)\n\n| target | family | n | MAPE | RMSPE | "
                    "RMSE | Kendall tau | within 10%% |\n|---|---|---|---|---|"
                    "---|---|---|\n", R->kind, dlp_mode_name(o.mode), sn,
                    R->r.n_folds, R->r.n);
        for (int j = 0; j < nt; j++) {
            for (int fam = -1; fam < E.n_families; fam++) {
                dlp_metrics m;
                dlp_eval_metrics(&E, &R->r, ts[j], fam, &m);
                if (m.n == 0) continue;
                const char *fn = fam < 0 ? "all" : E.families[fam];
                printf("%-26s %-14s %6d ", fam < 0 ? dlp_target_name(ts[j]) : "",
                       fn, m.n);
                pct(stdout, m.mape);
                printf(" ");
                pct(stdout, m.rmspe);
                printf(" %10.4g %7.3f ", m.rmse, m.tau);
                pct(stdout, m.acc10);
                printf("\n");
                if (mdf)
                    fprintf(mdf, "| %s | %s | %d | %.2f%% | %.2f%% | %.4g | "
                            "%.3f | %.1f%% |\n", dlp_target_name(ts[j]), fn,
                            m.n, 100 * m.mape, 100 * m.rmspe, m.rmse, m.tau,
                            100 * m.acc10);
            }
            if (top_models)
                print_model_shares(&E, &R->r, ts[j], top_models, mdf);
            if (plot_dir) {
                int n = R->r.n;
                double *y = malloc((size_t)(n ? n : 1) * sizeof *y);
                double *p = malloc((size_t)(n ? n : 1) * sizeof *p);
                int *g = malloc((size_t)(n ? n : 1) * sizeof *g);
                if (y && p && g) {
                    for (int i = 0; i < n; i++) {
                        y[i] = E.ex[R->r.ex[i]].y[ts[j]];
                        p[i] = R->r.pred[(size_t)i * DLP_T_COUNT + ts[j]];
                        g[i] = E.ex[R->r.ex[i]].family;
                    }
                    char path[1024], title[256];
                    snprintf(path, sizeof path, "%s/%s-%s-%s.svg", plot_dir,
                             R->kind, sn, dlp_target_name(ts[j]));
                    dlp_metrics m;
                    dlp_eval_metrics(&E, &R->r, ts[j], -1, &m);
                    snprintf(title, sizeof title, "%s, split %s: %s (MAPE "
                             "%.2f%%, n=%d)", R->kind, sn,
                             dlp_target_name(ts[j]), 100 * m.mape, m.n);
                    dlp_error err;
                    if (m.n && dlp_svg_scatter(path, title, dlp_target_unit(ts[j]),
                                               y, p, g,
                                               (const char *const *)E.families,
                                               E.n_families, n, &err))
                        fprintf(stderr, "dlperf eval: %s\n", err.msg);
                    else if (m.n && !o.quiet)
                        fprintf(stderr, "wrote %s\n", path);
                }
                free(y); free(p); free(g);
            }
        }
    }
    /* learned kinds vs both baselines, per split, target and family */
    for (int s = 0; s < ns && !rc; s++) {
        const run *lr = NULL, *rf = NULL;
        for (int k = 0; k < nk; k++) {
            const run *R = &runs[s * nk + k];
            if (!R->ok) continue;
            if (!strcmp(R->kind, "linreg")) lr = R;
            if (!strcmp(R->kind, "roofline")) rf = R;
        }
        if (!lr || !rf) continue;
        for (int k = 0; k < nk; k++) {
            const run *R = &runs[s * nk + k];
            if (!R->ok || R == lr || R == rf) continue;
            int lose = 0, total = 0;
            for (int j = 0; j < nt; j++)
                for (int fam = -1; fam < E.n_families; fam++) {
                    dlp_metrics a, b, c;
                    dlp_eval_metrics(&E, &R->r, ts[j], fam, &a);
                    dlp_eval_metrics(&E, &lr->r, ts[j], fam, &b);
                    dlp_eval_metrics(&E, &rf->r, ts[j], fam, &c);
                    if (!a.n) continue;
                    total++;
                    bool beats = a.mape < b.mape && a.mape < c.mape;
                    if (!beats) {
                        if (!lose)
                            printf("\n%s does not beat both baselines (split %s) on:\n",
                                   R->kind, dlp_split_name(R->split));
                        printf("  %-26s %-14s %s %.2f%% vs linreg %.2f%%, "
                               "roofline %.2f%%\n", dlp_target_name(ts[j]),
                               fam < 0 ? "all" : E.families[fam], R->kind,
                               100 * a.mape, 100 * b.mape, 100 * c.mape);
                        if (mdf)
                            fprintf(mdf, "%s- %s does not beat both baselines "
                                    "(split `%s`) on %s / %s: %.2f%% vs linreg "
                                    "%.2f%%, roofline %.2f%%\n", lose ? "" : "\n",
                                    R->kind, dlp_split_name(R->split),
                                    dlp_target_name(ts[j]),
                                    fam < 0 ? "all" : E.families[fam],
                                    100 * a.mape, 100 * b.mape, 100 * c.mape);
                        lose++;
                    }
                }
            if (!lose)
                printf("\n%s beats both baselines on every target and family "
                       "(split %s, %d cells)\n", R->kind,
                       dlp_split_name(R->split), total);
            if (!lose && mdf)
                fprintf(mdf, "\n%s beats both baselines on every target and "
                        "family (split `%s`, %d cells).\n", R->kind,
                        dlp_split_name(R->split), total);
        }
    }
    /* the record holds the errors against the labels as measured, what
     * predict's expected_error_pct without --host-us stands for; the
     * predictions file the moved labels the tables printed */
    dlp_host_norm moved_to = E.host_norm;
    bool was_moved = E.n_host_normed > 0;
    if (!rc && was_moved && print_asmeasured(&E, runs, nk * ns, mdf))
        fprintf(stderr, "dlperf eval: the errors against the moved labels "
                "only (printed above, and in --record)\n");
    if (record && !rc)
        rc = write_record(record, &o, ds,
                          o.split_seed >= 0 ? (uint64_t)o.split_seed : o.train.seed,
                          &E, runs, nk * ns);
    if (!rc && was_moved && E.n_host_normed == 0) {
        dlp_error err;
        if (dlp_examples_host_norm(&E, &moved_to, &err)) {
            fprintf(stderr, "dlperf eval: %s\n", err.msg);
            rc = 1;
        }
    }
    if (preds && !rc) {
        const dlp_eval_result *ok[8 * DLP_SPLIT_COUNT];
        int n_ok = 0;
        for (int q = 0; q < nk * ns; q++)
            if (runs[q].ok) ok[n_ok++] = &runs[q].r;
        dlp_error err;
        if (dlp_eval_write_predictions(preds, &E, ok, n_ok, &err)) {
            fprintf(stderr, "dlperf eval: --predictions: %s\n", err.msg);
            rc = 1;
        } else if (!o.quiet)
            fprintf(stderr, "wrote %s\n", preds);
    }
    if (failed_files && !rc) rc = 1;
    cli_fit_cache_note("eval");
    for (int q = 0; runs && q < nk * ns; q++) dlp_eval_result_free(&runs[q].r);
    free(runs);
    if (mdf) fclose(mdf);
    dlp_examples_free(&E);
    dlp_dataset_free(ds);
    return rc;
}
