/*
 * cmd_tree.c — `dlperf tree fit DATA_DIR [--mode M] [-o FILE]`: trains the
 * XGBoost predictor (src/tree/) of one mode on a dataset's labels, prints
 * its leave-models-out cross-validation next to the kinds asked for with
 * --compare (same folds), and writes the model file (models/xgb-M.dlpm).
 * `dlperf tree optime DATA_DIR [--train] [--folds K] [--seed S]
 * [--threads N]`: the operator-time model's cross-validated error on the
 * probes (data/probes optime files; --train: the optrain files' forward +
 * backward times) next to the roofline's.
 * `dlperf tree convert FILE [-o OUT] [--json | --forests]`: re-encodes the XGBoost
 * boosters of a model file as UBJSON (or JSON), for files written before
 * boosters were stored as UBJSON, and writes a file of an older format
 * version in this build's (nn.h: version 3 checks large byte arrays when
 * first read).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "eval/eval.h"
#include "pred/pred_train.h"
#include "tree/tree.h"

static void usage(FILE *f) {
    fprintf(f,
"usage: dlperf tree fit DATA_DIR [--mode inference|training|llm]\n"
"                       [-o FILE.dlpm] [--device NAME]\n"
"                       [--split lmo|random|mc|lofo] [--compare KINDS]\n"
"                       [--epochs N] [--rounds N] [--depth D] [--eta X]\n"
"                       [--subsample F] [--colsample F]\n"
"                       [--method hist|exact] [--seed S] [--threads N]\n"
"                       [--fit-cache DIR]\n\n"
"Trains the XGBoost predictor of a mode (default llm: throughput, peak\n"
"memory, energy per sample; inference: latency, peak memory, energy;\n"
"training: step time, peak memory, power) on DATA_DIR's labels and prints its\n"
"held-out accuracy (MAPE, RMSPE, Kendall's tau, within 10%%; overall and\n"
"per family; the progress lines give each runtime's MAPE where the mode\n"
"has boosters per runtime: llm and inference) on the split (default:\n"
"5-fold leave-models-out), next to the --compare kinds (e.g.\n"
"dippm,roofline,linreg) trained and tested on the same folds. With -o it\n"
"also writes the model trained on every example.\n"
"Boosters: --rounds, --depth, --eta (default, every mode's: 1500 rounds of\n"
"depth 5 at eta 0.02); --subsample and --colsample, the share of rows and of\n"
"features each tree draws, in (0, 1] (default 0.5 and 0.5 for the llm\n"
"energy per sample, 0.8 and 0.8 for every other booster); --method, the\n"
"split search: hist (default, XGBoost's histogram method) or exact.\n"
"--fit-cache DIR: the probes' forests (operator times, cuDNN workspaces)\n"
"taken from DIR where an earlier call fitted the same ones, and written\n"
"there (scripts/train_models.sh gives every call of a run one folder).\n"
"\n"
"usage: dlperf tree optime DATA_DIR [--train] [--folds K] [--seed S]\n"
"                          [--threads N]\n\n"
"Cross-validates the operator-time model (the times of convolutions,\n"
"products, memory-bound operators and fused attention, docs/COST.md) on\n"
"DATA_DIR/probes' optime, optrain and memop files' forward times: random K\n"
"folds (default 5), MAPE of its time and of the roofline alone, per kind and\n"
"precision, and per memory-bound category. --train: the training-step model,\n"
"on the optrain and memop files' forward + backward times (the roofline:\n"
"three forward rooflines).\n"
"\n"
"usage: dlperf tree convert FILE.dlpm [-o OUT.dlpm] [--json | --forests]\n\n"
"Re-encodes the XGBoost boosters inside a model file as UBJSON (loads ~13x\n"
"faster than the JSON of files written before; --json: back to JSON) and\n"
"writes the file to OUT (default: FILE itself), in this build's file format\n"
"when it was older (format 3: a prediction reads only the forests it walks),\n"
"its operator-time forests in a side file beside it (optime-HASH.dlps, which\n"
"the model files of a directory share, docs/PREDICT.md) when they were inside\n"
"it. Predictions are unchanged. --forests: the xgb and kern predictors'\n"
"boosters (in a blend too) stored as dlperf's own forests instead, which\n"
"predict walks without XGBoost parsing them (what training writes since\n"
"the seventy-ninth session, for kern the eightieth); the same predictions\n"
"to float32 rounding.\n");
}

static int convert(int argc, char **argv) {
    const char *in = NULL, *out = NULL;
    dlp_tree_format to = DLP_TREE_UBJ;
    bool forests = false;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "-o") && i + 1 < argc) out = argv[++i];
        else if (!strcmp(argv[i], "--json")) to = DLP_TREE_JSON;
        else if (!strcmp(argv[i], "--forests")) forests = true;
        else if (argv[i][0] == '-' || in) {
            fprintf(stderr, "dlperf tree convert: unexpected '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        } else in = argv[i];
    }
    if (!in || (forests && to == DLP_TREE_JSON)) {
        if (in) fprintf(stderr, "dlperf tree convert: --json or --forests, "
                        "not both\n");
        usage(stderr);
        return 2;
    }
    if (!out) out = in;
    dlp_error err = {0};
    dlp_nn_file f = {0};
    int nb = 0, nc = 0, nf = 0;
    dlp_status st = dlp_nn_file_load(&f, in, &err);
    if (!st) st = dlp_tree_file_convert(&f, to, &nb, &nc, &err);
    if (!st && forests) st = dlp_tree_file_forests(&f, &nf, &err);
    uint32_t ver = f.version;
    /* forests inside the file: moved out to their side file */
    bool inside = !f.n_side && dlp_nn_file_group_entries(&f, dlp_pred_shared_groups);
    bool write = nc > 0 || nf > 0 || strcmp(out, in) != 0 ||
                 ver < DLP_NN_FILE_VERSION_PLAIN || inside;
    if (!st && write)
        st = dlp_nn_file_save_shared(&f, out, dlp_pred_shared_groups, &err);
    dlp_nn_file_free(&f);
    if (st) {
        fprintf(stderr, "dlperf tree convert: %s: %s\n", in, err.msg);
        return 1;
    }
    if (forests)
        printf("%s: %d booster(s) stored as forests (%d other booster(s)"
               " as UBJSON), file format %u%s%s\n", in, nf, nb - nf, ver,
               write ? ", written to " : " (unchanged)", write ? out : "");
    else
        printf("%s: %d of %d booster(s) re-encoded as %s, file format %u%s%s\n",
               in, nc, nb, to == DLP_TREE_JSON ? "JSON" : "UBJSON", ver,
               write ? ", written to " : " (unchanged)", write ? out : "");
    return 0;
}

static int optime(int argc, char **argv) {
    const char *dir = NULL;
    int folds = 5, threads = 1;
    long long seed = 1;
    bool train = false;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--train")) train = true;
        else if (!strcmp(argv[i], "--folds") && i + 1 < argc) folds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc) seed = atoll(argv[++i]);
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = atoi(argv[++i]);
        else if (argv[i][0] == '-' || dir) {
            fprintf(stderr, "dlperf tree optime: unexpected '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        } else dir = argv[i];
    }
    if (!dir || folds < 2 || folds > 100 || threads < 1 || threads > 256) {
        usage(stderr);
        return 2;
    }
    char pdir[4096];
    snprintf(pdir, sizeof pdir, "%s/probes", dir);
    dlp_error err = {0};
    dlp_optime_probes p;
    dlp_optime_heldout_stats s;
    dlp_status st = dlp_optime_probes_read(pdir, train, &p, &err);
    if (!st && !p.n)
        st = dlp_fail(&err, DLP_ERR_NOT_FOUND, "no operator-time probes%s in %s",
                      train ? " with training times" : "", pdir);
    if (!st) st = dlp_optime_heldout(&p, folds, (uint64_t)seed, threads, &s, &err);
    if (st) {
        fprintf(stderr, "dlperf tree optime: %s\n", err.msg);
        dlp_optime_probes_free(&p);
        return 1;
    }
    printf("%zu probes%s from %d file(s) (%d malformed, %d of unknown cards); "
           "%d-fold random split, seed %lld\n", p.n,
           train ? " (forward + backward times)" : "", p.n_files, p.n_bad,
           p.n_unknown_gpu, folds, seed);
    printf("%-7s %-5s %7s %10s %10s\n", "kind", "prec", "probes", "model", "roofline");
    static const char *const kind[DLP_OP_NKIND] = {"conv", "mm", "mem", "attn"};
    for (int k = 0; k < DLP_OP_NKIND; k++)
        for (int pr = 0; pr < DLP_PREC_COUNT; pr++)
            if (s.n[k][pr])
                printf("%-7s %-5s %7d %9.2f%% %9.2f%%\n", kind[k],
                       dlp_precision_name((dlp_precision)pr), s.n[k][pr],
                       s.mape[k][pr], s.roof_mape[k][pr]);
    for (int c = 0; c < DLP_MEM_NCAT; c++)
        if (s.n_cat[c])
            printf("mem %-7s %7d %9.2f%% %9.2f%%\n", dlp_mem_cat_name[c], s.n_cat[c],
                   s.mape_cat[c], s.roof_mape_cat[c]);
    dlp_optime_probes_free(&p);
    return 0;
}

static void progress(void *user, const char *line) {
    (void)user;
    fprintf(stderr, "tree: %s\n", line);
}

int cmd_tree(int argc, char **argv) {
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "convert")) return convert(argc, argv);
    if (!strcmp(argv[1], "optime")) return optime(argc, argv);
    if (strcmp(argv[1], "fit")) {
        fprintf(stderr, "dlperf tree: unknown subcommand '%s'\n", argv[1]);
        usage(stderr);
        return 2;
    }
    dlp_tree_fit_opts o;
    dlp_tree_fit_opts_default(&o);
    o.progress = progress;
    const char *dir = NULL, *out = NULL;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        bool takes = !strcmp(a, "-o") || !strcmp(a, "--device") ||
                     !strcmp(a, "--mode") ||
                     !strcmp(a, "--split") || !strcmp(a, "--compare") ||
                     !strcmp(a, "--epochs") || !strcmp(a, "--rounds") ||
                     !strcmp(a, "--depth") || !strcmp(a, "--eta") ||
                     !strcmp(a, "--subsample") || !strcmp(a, "--colsample") ||
                     !strcmp(a, "--seed") || !strcmp(a, "--threads") ||
                     !strcmp(a, "--method") || !strcmp(a, "--fit-cache");
        if (takes && !v) {
            fprintf(stderr, "dlperf tree: %s needs a value\n", a);
            return 2;
        }
        char *end = NULL;
        if (!strcmp(a, "-o")) out = v;
        else if (!strcmp(a, "--device")) o.device = v;
        else if (!strcmp(a, "--compare")) o.compare = v;
        else if (!strcmp(a, "--mode")) {
            dlp_error e;
            if (dlp_mode_parse(v, &o.mode, &e)) {
                fprintf(stderr, "dlperf tree: %s\n", e.msg);
                return 2;
            }
            if (!dlp_tree_layout_of(o.mode)) {
                fprintf(stderr, "dlperf tree: the trees do not predict "
                        "mode %s\n", v);
                return 2;
            }
        }
        else if (!strcmp(a, "--epochs")) o.epochs = (int)strtol(v, &end, 10);
        else if (!strcmp(a, "--method")) {
            if (strcmp(v, "hist") && strcmp(v, "exact")) {
                fprintf(stderr, "dlperf tree: --method is hist or exact, "
                        "not '%s'\n", v);
                return 2;
            }
            o.tp.hist = !strcmp(v, "hist");
        }
        else if (!strcmp(a, "--split")) {
            dlp_split_kind k;
            dlp_error e;
            if (dlp_split_parse(v, &k, &e)) {
                fprintf(stderr, "dlperf tree: %s\n", e.msg);
                return 2;
            }
            o.split = (int)k;
        }
        else if (!strcmp(a, "--rounds")) o.tp.rounds = (int)strtol(v, &end, 10);
        else if (!strcmp(a, "--depth")) o.tp.max_depth = (int)strtol(v, &end, 10);
        else if (!strcmp(a, "--eta")) o.tp.eta = strtod(v, &end);
        else if (!strcmp(a, "--subsample")) o.tp.subsample = strtod(v, &end);
        else if (!strcmp(a, "--colsample")) o.tp.colsample = strtod(v, &end);
        else if (!strcmp(a, "--seed")) o.seed = o.tp.seed = strtoull(v, &end, 10);
        else if (!strcmp(a, "--threads")) o.tp.threads = (int)strtol(v, &end, 10);
        else if (!strcmp(a, "--fit-cache")) {
            dlp_error e;
            if (dlp_forest_cache_set(v, &e)) {
                fprintf(stderr, "dlperf tree: %s\n", e.msg);
                return 2;
            }
        }
        else if (a[0] == '-') {
            fprintf(stderr, "dlperf tree: unknown option '%s'\n", a);
            return 2;
        } else if (!dir) {
            dir = a;
        } else {
            fprintf(stderr, "dlperf tree: more than one dataset given\n");
            return 2;
        }
        if (takes) {
            /* 0 would read as "the mode's default" (tree.h), so the
             * booster sizes must be given as positive numbers */
            bool nonpos = (!strcmp(a, "--rounds") && o.tp.rounds <= 0) ||
                          (!strcmp(a, "--depth") && o.tp.max_depth <= 0) ||
                          (!strcmp(a, "--eta") && !(o.tp.eta > 0)) ||
                          (!strcmp(a, "--subsample") &&
                           !(o.tp.subsample > 0 && o.tp.subsample <= 1)) ||
                          (!strcmp(a, "--colsample") &&
                           !(o.tp.colsample > 0 && o.tp.colsample <= 1));
            if ((end && (*end || end == v)) || nonpos) {
                fprintf(stderr, "dlperf tree: bad value '%s' for %s\n", v, a);
                return 2;
            }
            i++;
        }
    }
    if (!dir) {
        usage(stderr);
        return 2;
    }
    dlp_dataset *ds = NULL;
    if (cli_open_dataset("tree", dir, &ds)) return 1;
    dlp_error err = {0};
    dlp_tree_report rep;
    dlp_status st = dlp_tree_fit(ds, &o, out, &rep, &err);
    dlp_dataset_free(ds);
    if (st) {
        fprintf(stderr, "dlperf tree: %s\n", err.msg);
        return 1;
    }
    cli_fit_cache_note("tree");
    printf("examples %d (graphs %d, models %d, families %d), split %s "
           "(%d folds), xgb training %.1f s CPU\n", rep.examples, rep.graphs,
           rep.models, rep.families, dlp_split_name((dlp_split_kind)o.split),
           rep.folds, rep.train_s_xgb);
    printf("%-24s %-10s %-14s %5s %8s %8s %7s %7s\n", "target", "kind",
           "family", "n", "MAPE%", "RMSPE%", "<=10%", "tau");
    const dlp_tree_layout *L = dlp_tree_layout_of(o.mode);
    for (int t = 0; t < DLP_TREE_NT; t++)
        for (int i = 0; i < rep.n_rows; i++) {
            const dlp_tree_row *r = &rep.rows[i];
            if (r->target != L->targets[t]) continue;
            printf("%-24s %-10s %-14s %5d %8.2f %8.2f %7.1f %7.3f\n",
                   dlp_target_column(r->target), r->kind,
                   r->family[0] ? r->family : "(all)", r->n, 100 * r->mape,
                   100 * r->rmspe, 100 * r->acc10, r->tau);
        }
    dlp_tree_report_free(&rep);
    return 0;
}
