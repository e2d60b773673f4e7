/*
 * cmd_train.c — `dlperf train DATA --kind K --mode M -o FILE`: builds the
 * examples of one mode from a dataset, trains a predictor on them (15% of
 * the models held out for early stopping and for the validation error and
 * residual quantiles recorded in the file) and writes the model file.
 * Progress (featurizing, then epoch, loss, validation error, time left) on
 * stderr. Exit: 0 ok, 1 failure, 2 usage.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "learn_cli.h"
#include "eval/eval.h"
#include "predict/predict_host.h"
#include "tree/tree.h"

void learn_opts_init(learn_opts *o) {
    memset(o, 0, sizeof *o);
    o->mode = DLP_MODE_INFERENCE;
    o->runtime = o->precision = -1;
    dlp_train_opts_init(&o->train);
    o->train.threads = 2;
    o->pool_max = 600;
    o->train.progress = learn_progress;
    o->split_seed = -1;
}

const char *learn_opts_help(void) {
    return "  --mode inference|training|llm   which labels (default inference)\n"
           "  --device NAME      only rows of this device\n"
           "  --runtime eager|graph, --precision fp32|fp16|bf16   filters\n"
           "  --epochs N --lr X --hidden N --batch-graphs N --patience N\n"
           "  --seed N --threads N --no-prior (GNN without the ridge prior)\n"
           "  --no-calibration   keep the learned kinds' predictions as fitted (by\n"
           "                     default each target but peak memory is multiplied\n"
           "                     by the factor minimising its validation MAPE)\n"
           "  --refit            xgb (no early stopping): once validated, trained\n"
           "                     again on the training and validation examples\n"
           "                     (the file keeps the first fit's validation\n"
           "                     figures); in a blend, its xgb part, once the\n"
           "                     blend is validated\n"
           "  --no-optime        DIPPM/TraPPM: node times from the roofline, not\n"
           "                     the operator-time model of data/probes (A/B)\n"
           "  --members N        DIPPM/TraPPM: an ensemble of N networks from\n"
           "                     different seeds, averaged (default 1, at most 8)\n"
           "  --ema D            DIPPM/TraPPM: keep a moving average of each\n"
           "                     network's weights (decay D a step, e.g. 0.999);\n"
           "                     early stopping keeps it where its validation\n"
           "                     error is the lower (default 0: off)\n"
           "  --readout R        DIPPM/TraPPM graph readout: mean (of the node\n"
           "                     embeddings; default), mean+cost (beside it their\n"
           "                     mean weighted by roofline time), mean+lse (beside\n"
           "                     it log sum of roofline share x exp(embedding)),\n"
           "                     mixed / mixed-lse (mean+cost / mean+lse for the\n"
           "                     odd members of an ensemble, mean for the others)\n"
           "  --pool-max N       TraPPM pre-training on an even sample of N graphs\n"
           "                     of the index (default 600; 0 = all)\n"
           "  --host-norm FILE   eager labels brought to the reference host of\n"
           "                     FILE (a `dlperf host fit` file: models/host.csv,\n"
           "                     for llm models/host-llm.csv, for training\n"
           "                     models/host-training.csv)\n"
           "                     before training, so that the eager predictions\n"
           "                     are for that host (eval: the held-out labels too,\n"
           "                     so its errors are those of predictions moved to\n"
           "                     each label's host)\n"
           "  --fit-cache DIR    the probes' forests (operator times, cuDNN\n"
           "                     workspaces) taken from DIR where an earlier call\n"
           "                     fitted the same ones, and written there\n"
           "  --init-from FILE   fine-tune FILE (transfer learning)\n"
           "  --shots N          train on N random training examples only\n"
           "  --quiet            no progress lines\n";
}

static int need(int argc, char **argv, int i) {
    if (i + 1 >= argc) {
        fprintf(stderr, "dlperf: %s needs a value\n", argv[i]);
        return 0;
    }
    return 1;
}

/* --readout's names, indexed by DLP_READOUT_* */
static const char *const READOUTS[] = {"mean", "mean+cost", "mixed", "mean+lse",
                                       "mixed-lse"};

const char *learn_readout_name(int readout) {
    int n = (int)(sizeof READOUTS / sizeof READOUTS[0]);
    return readout >= 0 && readout < n ? READOUTS[readout] : NULL;
}

int learn_opt(learn_opts *o, int argc, char **argv, int *i) {
    const char *a = argv[*i];
    dlp_error err;
    if (!strcmp(a, "--quiet")) { o->quiet = true; o->train.progress = NULL; return 1; }
    if (!strcmp(a, "--no-prior")) { o->train.no_prior = true; return 1; }
    if (!strcmp(a, "--no-calibration")) { o->train.no_calibration = true; return 1; }
    if (!strcmp(a, "--refit")) { o->train.refit = true; return 1; }
    if (!strcmp(a, "--no-optime")) { o->train.no_optime = true; return 1; }
    if (!strcmp(a, "--split-seed")) {
        if (!need(argc, argv, *i)) return -1;
        const char *v = argv[++*i];
        char *end;
        long long x = strtoll(v, &end, 10);
        if (end == v || *end || x < 0) {
            fprintf(stderr, "dlperf: --split-seed wants a number >= 0, not "
                    "'%s'\n", v);
            return -1;
        }
        o->split_seed = x;
        return 1;
    }
    static const char *const valued[] = {
        "--mode", "--device", "--runtime", "--precision", "--epochs", "--lr",
        "--hidden", "--batch-graphs", "--patience", "--seed", "--threads",
        "--init-from", "--shots", "--pool-max", "--members", "--readout",
        "--host-norm", "--fit-cache", "--ema", NULL};
    int k = 0;
    while (valued[k] && strcmp(valued[k], a)) k++;
    if (!valued[k]) return 0;
    if (!need(argc, argv, *i)) return -1;
    const char *v = argv[++*i];
    char *end;
    switch (k) {
    case 0:
        if (dlp_mode_parse(v, &o->mode, &err)) goto bad;
        return 1;
    case 1: o->device = v; return 1;
    case 11: o->train.init_from = v; return 1;
    case 17:
        if (dlp_forest_cache_set(v, &err)) goto bad;
        return 1;
    case 16: {
        dlp_host_model hm;
        if (dlp_host_load(v, &hm, &err)) goto bad;
        o->host_norm = dlp_host_norm_of(&hm);
        o->has_host_norm = true;
        return 1;
    }
    case 15:
        for (int r = 0; learn_readout_name(r); r++)
            if (!strcmp(v, learn_readout_name(r))) {
                o->train.readout = r;
                return 1;
            }
        fprintf(stderr, "dlperf: --readout is mean, mean+cost, mixed, "
                "mean+lse or mixed-lse, not '%s'\n", v);
        return -1;
    case 2: {
        dlp_runtime r;
        if (dlp_runtime_parse(v, &r, &err)) goto bad;
        o->runtime = (int)r;
        return 1;
    }
    case 3: {
        dlp_precision p;
        if (dlp_precision_parse(v, &p, &err)) goto bad;
        o->precision = (int)p;
        return 1;
    }
    default: break;
    }
    double x = strtod(v, &end);
    if (*end || !(x >= 0) || x > 1e9) {
        fprintf(stderr, "dlperf: bad value '%s' for %s\n", v, a);
        return -1;
    }
    switch (k) {
    case 4: o->train.epochs = (int)x; break;
    case 5: o->train.lr = x; break;
    case 6: o->train.hidden = (int)x; break;
    case 7: o->train.graphs_per_batch = (int)x; break;
    case 8: o->train.patience = (int)x; break;
    case 9: o->train.seed = (uint64_t)x; break;
    case 10: o->train.threads = (int)x; break;
    case 12: o->train.shots = (int)x; break;
    case 13: o->pool_max = (int)x; break;
    case 14: o->train.members = (int)x; break;
    case 18:
        if (!(x < 1)) {
            fprintf(stderr, "dlperf: --ema wants a decay in [0, 1), not "
                    "'%s'\n", v);
            return -1;
        }
        o->train.ema = x;
        break;
    }
    return 1;
bad:
    fprintf(stderr, "dlperf: %s\n", err.msg);
    return -1;
}

static void feat_progress(void *user, int done, int total) {
    (void)user;
    if (done % 20 == 0 || done + 1 == total)
        fprintf(stderr, "\rfeaturizing graphs %d/%d", done + 1, total);
}

void learn_progress(void *user, const dlp_train_progress *p) {
    (void)user;
    if (isfinite(p->val_error))
        fprintf(stderr, "[%s] epoch %d/%d  loss %.5f  val MAPE %.2f%%  "
                "%.0fs elapsed, ~%.0fs left\n", p->kind, p->epoch, p->epochs,
                p->loss, 100 * p->val_error, p->elapsed_s, p->eta_s);
    else
        fprintf(stderr, "[%s] epoch %d/%d  loss %.5f  %.0fs elapsed, ~%.0fs "
                "left\n", p->kind, p->epoch, p->epochs, p->loss, p->elapsed_s,
                p->eta_s);
}

/* A --host-norm fit for the mode it was given with: 0, else a message
 * printed and 1. */
static int host_norm_check(const learn_opts *o) {
    /* a training fit takes its share from the step (tau_ms, power), an
     * inference or LLM one from the CUDA-graph twin: each fits its mode */
    bool train_fit = dlp_host_norm_is_training(&o->host_norm);
    if (o->has_host_norm && train_fit != (o->mode == DLP_MODE_TRAINING)) {
        fprintf(stderr, "dlperf: --host-norm: %s\n", train_fit
                ? "a training step's fit (its share comes from the step's "
                  "power or length) is for --mode training; give an "
                  "inference one (models/host.csv, for llm "
                  "models/host-llm.csv)"
                : "training steps take a training step's fit "
                  "(models/host-training.csv), not an inference or LLM one");
        return 1;
    }
    return 0;
}

/* The line saying how many labels o's --host-norm moved (none without) */
static void host_norm_note(const learn_opts *o, const dlp_examples *E) {
    if (o->has_host_norm && !o->quiet)
        fprintf(stderr, "%s labels of %d examples brought to a host of "
                "%.4g us (--host-norm)\n",
                o->mode == DLP_MODE_TRAINING ? "step" : "eager",
                E->n_host_normed, o->host_norm.ref_us);
}

int learn_examples(const learn_opts *o, bool pool, dlp_dataset **ds,
                   dlp_examples *E) {
    dlp_error err;
    if (host_norm_check(o)) return 1;
    if (dlp_dataset_open(o->data, ds, &err)) {
        fprintf(stderr, "dlperf: %s\n", err.msg);
        return 1;
    }
    dlp_examples_opts eo = {o->device, o->runtime, o->precision, pool,
                            o->quiet ? NULL : feat_progress, NULL,
                            o->train.threads,
                            o->has_host_norm ? &o->host_norm : NULL};
    if (dlp_examples_build_pool(E, *ds, o->mode, &eo, o->pool_max, &err)) {
        if (!o->quiet) fputc('\n', stderr);
        fprintf(stderr, "dlperf: %s\n", err.msg);
        dlp_dataset_free(*ds);
        *ds = NULL;
        return 1;
    }
    if (!o->quiet)
        fprintf(stderr, "\n%d %s examples, %d graph bindings, %d models, %d "
                "families, devices %s%s\n", E->n, dlp_mode_name(o->mode),
                E->n_fg, E->n_models, E->n_families, E->devices,
                E->n_skipped_graphs ? " (some graphs failed to load)" : "");
    host_norm_note(o, E);
    if (E->n_skipped_graphs)
        fprintf(stderr, "dlperf: warning: %d graph bindings could not be "
                "featurized and were skipped (%d of them: the graph's shapes "
                "contradict the measured input size)\n", E->n_skipped_graphs,
                E->n_conflict_bindings);
    for (int i = 0; i < E->n_skipped_graphs && i < DLP_EXAMPLES_SKIPPED_KEEP; i++)
        fprintf(stderr, "  %s\n", E->skipped[i].msg);
    return 0;
}

static void usage(FILE *f) {
    fprintf(f, "usage: dlperf train DATA --kind KIND -o FILE [options]\n"
               "       dlperf train DATA [options] --kind K1 -o F1 [options]"
               " --kind K2 -o F2 [options]...\n"
               "  trains a predictor on the labels in DATA (data/FORMAT.md)\n"
               "  --kind linreg|roofline|dippm|trappm|xgb|kern, or a blend a+b\n"
               "                     (dippm+kern: one file holding both, trained on\n"
               "                     the same split; geometric mean of their predictions)\n"
               "  -o FILE            model file to write (.dlpm)\n"
               "  --parts F1,F2      a blend: its components from these model files\n"
               "                     (one per part, in order; '-' trains that part),\n"
               "                     trained before on the same data, --seed and\n"
               "                     filters (checked: their validation errors must\n"
               "                     match on this split)\n"
               "  --split-seed N     the seed of the validation split (default:\n"
               "                     --seed), so that files differing in --seed\n"
               "                     alone (the networks' initialisation and\n"
               "                     batch order) validate on the same models\n"
               "  Several --kind: the examples are read and featurized once and\n"
               "  the files trained one after another, in order, each the same\n"
               "  as its own call would write; the options before the first\n"
               "  --kind are every file's, those after a --kind its file's\n"
               "  alone (--host-norm included); --mode, --device, --runtime and\n"
               "  --precision must be the same for all, --pool-max for all\n"
               "  TraPPMs that pre-train on the graph pool. A file\n"
               "  that fails does not stop the others (exit 1 at the end).\n"
               "%s", learn_opts_help());
}

#define TRAIN_JOBS_MAX 16

/* One file to train: its kind, path, --parts and options */
typedef struct {
    learn_opts o;
    const char *kind, *outp, *partsv;
    char pbuf[4096];                       /* partsv split at its commas */
    const char *from[DLP_PRED_BLEND_MAX];  /* per part: a file or NULL */
    bool pool;   /* a TraPPM part pre-trains on the graph pool */
} train_job;

/* J's --parts split into from[], one file or '-' per part of np: 0, else
 * the message printed and 2 */
static int parts_split(train_job *J, int np) {
    /* --parts: one file (or '-') per component of the blend */
    int nf = 0;
    if (np < 2 || strlen(J->partsv) >= sizeof J->pbuf) {
        fprintf(stderr, "dlperf train: --parts is for a blend kind a+b, "
                "one file per part\n");
        return 2;
    }
    memcpy(J->pbuf, J->partsv, strlen(J->partsv) + 1);
    for (char *s = J->pbuf, *e; s; s = e) {
        e = strchr(s, ',');
        if (e) *e++ = 0;
        if (nf == np || !*s) { nf = -1; break; }
        J->from[nf++] = strcmp(s, "-") ? s : NULL;
    }
    if (nf != np) {
        fprintf(stderr, "dlperf train: --parts names one file or '-' per "
                "part of '%s' (%d), comma-separated\n", J->kind, np);
        return 2;
    }
    J->o.train.parts_from = J->from;
    J->o.train.n_parts_from = np;
    return 0;
}

/* Checks J's kind and --parts, and points its options at the parts'
 * files: 0, else the message printed and 2 (a usage error). */
static int job_prepare(train_job *J) {
    char kbuf[DLP_PRED_KIND_MAX];
    const char *parts[DLP_PRED_BLEND_MAX];
    int np = 0;
    dlp_error kerr;
    if (dlp_pred_blend_parts(J->kind, kbuf, sizeof kbuf, parts, &np, &kerr)) {
        fprintf(stderr, "dlperf train: %s (kinds: linreg, roofline, dippm, "
                "trappm, xgb, kern, or a blend a+b)\n", kerr.msg);
        return 2;
    }
    memset(J->from, 0, sizeof J->from);
    if (J->partsv && parts_split(J, np)) return 2;
    /* a TraPPM part pre-trains on the pool, unless fine-tuned
     * (--init-from) or taken from a file (--parts) */
    J->pool = false;
    for (int q = 0; q < np; q++)
        if (!strcmp(parts[q], "trappm") && !J->o.train.init_from && !J->from[q])
            J->pool = true;
    return 0;
}

/* Trains job J (job_prepare'd) on the examples E: 0 written, 1 failed
 * (the message printed, prefixed with tag). */
static int train_one(train_job *J, dlp_examples *E, const char *tag) {
    learn_opts *o = &J->o;
    const char *kind = J->kind, *outp = J->outp;
    if (o->train.threads > 0) dlp_nn_set_threads(o->train.threads);
    /* 15% of the models held out for validation */
    int n = E->n, *grp = malloc((size_t)n * sizeof *grp), *fam = malloc((size_t)n * sizeof *fam);
    int32_t *tr = malloc((size_t)n * sizeof *tr), *va = malloc((size_t)n * sizeof *va);
    int ntr = 0, nva = 0, rc = 1;
    dlp_error err;
    if (!grp || !fam || !tr || !va) { fprintf(stderr, "dlperf: out of memory\n"); goto out; }
    for (int i = 0; i < n; i++) { grp[i] = E->ex[i].model; fam[i] = E->ex[i].family; }
    dlp_fold *F = NULL;
    int K = 0;
    uint64_t split_seed = o->split_seed >= 0 ? (uint64_t)o->split_seed
                                             : o->train.seed;
    if (E->n_models >= 4 &&
        !dlp_split_make(DLP_SPLIT_LMO, grp, fam, n, split_seed, &F, &K, &err) && K > 0) {
        /* fold 0's train+val as training, its val for validation; fold 0's
         * test is folded back into training */
        for (int i = 0; i < F[0].ntr; i++) tr[ntr++] = F[0].train[i];
        for (int i = 0; i < F[0].nte; i++) tr[ntr++] = F[0].test[i];
        for (int i = 0; i < F[0].nva; i++) va[nva++] = F[0].val[i];
    } else {
        for (int i = 0; i < n; i++) {
            if (n >= 8 && i % 7 == 3) va[nva++] = i;
            else tr[ntr++] = i;
        }
    }
    dlp_folds_free(F, K);
    fprintf(stderr, "training %s on %d examples, validating on %d\n", kind,
            o->train.shots > 0 && o->train.shots < ntr ? o->train.shots : ntr, nva);
    dlp_predictor *p = NULL;
    dlp_nn_file file = {0};
    if (dlp_pred_train(kind, E, tr, ntr, va, nva, &o->train, &p, &file, &err) ||
        dlp_nn_file_save_shared(&file, outp, dlp_pred_shared_groups, &err)) {
        fprintf(stderr, "dlperf train: %s%s\n", tag, err.msg);
    } else {
        printf("wrote %s (%s, %s)\n", outp, kind, dlp_mode_name(o->mode));
        for (int t = 0; t < DLP_T_COUNT; t++)
            if (p->meta.targets >> t & 1) {
                printf("  %-26s validation MAPE %6.2f%%  interval x[%.3f, %.3f]",
                       dlp_target_name((dlp_target)t), 100 * p->meta.val_error[t],
                       exp(p->meta.resid_lo[t]), exp(p->meta.resid_hi[t]));
                if (p->meta.scale[t] != 1)   /* docs/PREDICT.md, "Calibration" */
                    printf("  calibrated x%.4f", p->meta.scale[t]);
                printf("\n");
            }
        fflush(stdout);
        cli_fit_cache_note("train");
        rc = 0;
    }
    dlp_nn_file_free(&file);
    dlp_predictor_free(p);
out:
    free(grp); free(fam); free(tr); free(va);
    return rc;
}

/* the options that choose the examples differ between a and b */
static bool examples_differ(const learn_opts *a, const learn_opts *b) {
    return a->mode != b->mode || a->runtime != b->runtime ||
           a->precision != b->precision ||
           ((a->device || b->device) &&
            (!a->device || !b->device || strcmp(a->device, b->device)));
}

int cmd_train(int argc, char **argv) {
    double t0 = dlp_now_s();
    learn_opts base;       /* the options before the first --kind */
    learn_opts_init(&base);
    learn_opts *cur = &base;
    train_job jobs[TRAIN_JOBS_MAX];
    int nj = 0;
    const char *data = NULL, *outp0 = NULL, *parts0 = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int r = learn_opt(cur, argc, argv, &i);
        if (r < 0) return 2;
        if (r) continue;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) { usage(stdout); return 0; }
        if ((!strcmp(a, "--kind") || !strcmp(a, "-o") ||
             !strcmp(a, "--parts")) && !need(argc, argv, i))
            return 2;
        if (!strcmp(a, "--kind")) {
            if (nj == TRAIN_JOBS_MAX) {
                fprintf(stderr, "dlperf train: at most %d --kind\n",
                        TRAIN_JOBS_MAX);
                return 2;
            }
            memset(&jobs[nj], 0, sizeof jobs[nj]);
            jobs[nj].o = base;
            jobs[nj].kind = argv[++i];
            cur = &jobs[nj++].o;
        } else if (!strcmp(a, "-o") || !strcmp(a, "--parts")) {
            /* before the first --kind: the first file's */
            const char **slot = nj ? (a[1] == 'o' ? &jobs[nj - 1].outp
                                                  : &jobs[nj - 1].partsv)
                                   : (a[1] == 'o' ? &outp0 : &parts0);
            if (*slot) {
                fprintf(stderr, "dlperf train: %s given twice for one "
                        "--kind\n", a);
                return 2;
            }
            *slot = argv[++i];
        } else if (a[0] == '-') {
            fprintf(stderr, "dlperf train: unknown option %s\n", a);
            usage(stderr);
            return 2;
        } else if (!data) data = a;
        else { usage(stderr); return 2; }
    }
    if (nj && outp0) {
        if (jobs[0].outp) { usage(stderr); return 2; }
        jobs[0].outp = outp0;
    }
    if (nj && parts0) {
        if (jobs[0].partsv) { usage(stderr); return 2; }
        jobs[0].partsv = parts0;
    }
    if (!data || !nj) { usage(stderr); return 2; }
    int pool_job = -1;   /* a TraPPM pre-trains on the graph pool */
    for (int k = 0; k < nj; k++) {
        train_job *J = &jobs[k];
        J->o.data = data;
        if (!J->outp) { usage(stderr); return 2; }
        if (job_prepare(J) || host_norm_check(&J->o)) return 2;
        for (int q = 0; q < k; q++)
            if (!strcmp(jobs[q].outp, J->outp)) {
                fprintf(stderr, "dlperf train: %s is the -o of two --kind\n",
                        J->outp);
                return 2;
            }
        if (examples_differ(&J->o, &jobs[0].o)) {
            fprintf(stderr, "dlperf train: --kind %s chooses other examples "
                    "than --kind %s (--mode, --device, --runtime or "
                    "--precision): give those before the first --kind\n",
                    J->kind, jobs[0].kind);
            return 2;
        }
        if (nj > 1 && J->o.has_host_norm && J->o.runtime >= 0 &&
            J->o.mode != DLP_MODE_TRAINING) {
            fprintf(stderr, "dlperf train: --host-norm with --runtime takes "
                    "one --kind per call (the filter leaves out the "
                    "CUDA-graph twins the host norm needs)\n");
            return 2;
        }
        if (J->pool) {
            if (pool_job >= 0 && J->o.pool_max != jobs[pool_job].o.pool_max) {
                fprintf(stderr, "dlperf train: --kind %s and --kind %s "
                        "pre-train on the graph pool: one --pool-max for "
                        "both\n", jobs[pool_job].kind, J->kind);
                return 2;
            }
            if (pool_job < 0) pool_job = k;
        }
    }
    if (jobs[0].o.train.threads > 0) dlp_nn_set_threads(jobs[0].o.train.threads);
    dlp_dataset *ds = NULL;
    dlp_examples E;
    /* one file: its examples built with its host norm (as always); several:
     * built as measured, each file's norm applied before it trains */
    learn_opts eo = jobs[0].o;
    if (nj > 1) eo.has_host_norm = false;
    if (pool_job >= 0) eo.pool_max = jobs[pool_job].o.pool_max;
    if (learn_examples(&eo, pool_job >= 0, &ds, &E)) return 1;
    int failed = 0;
    for (int k = 0; k < nj; k++) {
        train_job *J = &jobs[k];
        char tag[512] = "";
        if (nj > 1) {
            double el = dlp_now_s() - t0;
            fprintf(stderr, "== dlperf train, %d of %d, %d:%02d into the "
                    "call: %s -> %s\n", k + 1, nj, (int)el / 60, (int)el % 60,
                    J->kind, J->outp);
            snprintf(tag, sizeof tag, "%s -> %s: ", J->kind, J->outp);
            dlp_error err;
            if (dlp_examples_host_norm(&E, J->o.has_host_norm
                                               ? &J->o.host_norm : NULL,
                                       &err)) {
                fprintf(stderr, "dlperf train: %s%s\n", tag, err.msg);
                failed++;
                continue;
            }
            host_norm_note(&J->o, &E);
        }
        failed += train_one(J, &E, tag);
    }
    dlp_examples_free(&E);
    dlp_dataset_free(ds);
    return failed ? 1 : 0;
}
