/*
 * cmd_host.c — `dlperf host fit PREDICTIONS DATA_DIR [-o FILE] [--kind K]`:
 * fits the host-aware eager correction (src/predict/predict_host.h) on the
 * held-out eager latency predictions of an evaluation (`dlperf eval
 * --predictions`) whose labels carry the host probe host_us, prints the
 * eager MAPE of those predictions as given and corrected (each fold by the
 * fit on the other folds), overall and per device, and with -o writes the
 * correction fitted on every sample (models/host.csv, which `dlperf
 * predict --host-us` loads). `dlperf host apply PREDICTIONS DATA_DIR
 * [--host FILE] [--kind K] [--mode M]` applies a fitted file (default
 * models/host.csv) as it is to such predictions, e.g. `dlperf eval
 * --models`'s of a new batch, and prints the same table. `--mode llm`:
 * the LLM predictors' eager throughput instead (models/host-llm.csv);
 * `--mode training`: the training step (models/host-training.csv).
 * `dlperf host replicates ROWS [--host FILE]`: eager configurations
 * measured more than once in the collector's rows ROWS, how far one
 * measurement is from the other as is and moved by the correction in
 * FILE from one host_us to the other (predict_host.h, replicates).
 * Exit: 0 ok, 1 failure, 2 usage.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "predict/predict_host.h"

static void usage(FILE *f) {
    fprintf(f,
"usage: dlperf host fit PREDICTIONS DATA_DIR [-o FILE] [--kind K]\n"
"                       [--fit-device NAME] [--mode inference|llm|training]\n"
"                       [--two-sided] [--by-batch]\n"
"                       [--own-probe | --batch-host | --fresh-host]\n\n"
"Fits eager' = eager x exp(h x beta x ln(host_us / ref_us)), h = 1 -\n"
"graph / eager of the predicted latencies, on the held-out eager latency\n"
"predictions of kind K (default dippm) in PREDICTIONS (`dlperf eval\n"
"--predictions`) whose labels in DATA_DIR carry host_us, the host's\n"
"dispatch time per eager op. Prints their MAPE as predicted and corrected\n"
"(each fold by the fit on the other folds). With -o it writes the fit on\n"
"every sample (models/host.csv is what `dlperf predict --host-us` loads).\n"
"Then energy' = energy x (1 + energy_gamma x (f - 1)), f the latency's\n"
"factor, is fitted on the same configurations' eager energy predictions\n"
"(llm: per sample), energy_gamma in 0..1 minimizing their MAPE.\n"
"--fit-device NAME fits the cross-fitting's corrections on that card's\n"
"samples only (the others are corrected by it: a test on another card).\n"
"--mode llm: the eager throughput predictions of an `eval --mode llm`\n"
"run instead, as latencies batch / throughput (models/host-llm.csv is\n"
"what `dlperf predict --mode llm --host-us` loads).\n"
"--mode training: the step time predictions of an `eval --mode training`\n"
"run (a step has no CUDA-graph twin), h = min(1, tau_ms / step) of the\n"
"predicted step, tau_ms over a grid of 1-1024 ms, or h = clamp((power_hi_w\n"
"- P) / (power_hi_w - power_lo_w), 0, 1) of the step's predicted power P,\n"
"100-700 W in 20 W steps on the first sample's card's board power (other\n"
"cards' powers scaled to it; predict scales the card's), whichever leaves\n"
"the smaller residual; the host of a label is its own host_us, else the\n"
"median of its batch's eager inference rows; energy = predicted power x\n"
"step (models/host-training.csv is what `dlperf predict --mode training\n"
"--host-us` loads). Its table adds the steps by the host's source: the\n"
"label's own probe, its batch's median.\n"
"--two-sided fits one slope for hosts slower than ref_us (beta) and\n"
"another for quicker ones (beta_quick), ref_us over a grid of 1%% steps\n"
"across the samples' hosts: one beta on ln(host_us / ref_us) may fit\n"
"only one side of the reference (docs/PREDICT.md, host correction).\n"
"--own-probe fits and scores only the samples whose label carries its own\n"
"probe (training rows since p59a; every eager inference row).\n"
"--batch-host takes as each label's host the median probe of its batch\n"
"(training: of the batch's training rows' own probes, else of its eager\n"
"inference rows) instead of its own: the host's level, which a reading\n"
"taken before serving can know, not the moment of the measurement, which\n"
"it cannot. --fresh-host takes its batch's fresh-process reading\n"
"(env.json host_probe_start_us / host_probe_end_us, geometric mean; since\n"
"p69a): what tools/host_probe.py, run before serving, gives a user. The\n"
"file records the source (host_source 0 own, 1 batch, 2 fresh) and the\n"
"figures at the host's level (level_mape: with --batch-host or\n"
"--fresh-host the cross-fitted ones, else this fit applied with the batch\n"
"medians), which `dlperf predict --host-us` reports.\n"
"--by-batch adds a table by the labels' batch: n, the median host_us, the\n"
"mean ln(measured / predicted) of the latencies (llm: batch / throughput)\n"
"as given and corrected, and both MAPEs; labels measured in several\n"
"batches go under (several). A host that a batch ran on shows as a shift\n"
"of all of its samples.\n\n"
"usage: dlperf host apply PREDICTIONS DATA_DIR [--host FILE] [--kind K]\n"
"                         [--mode inference|llm|training] [--by-batch]\n"
"                         [--own-probe | --batch-host | --fresh-host]\n\n"
"Applies the fitted correction in FILE (default models/host.csv, with\n"
"--mode llm models/host-llm.csv, with --mode training\n"
"models/host-training.csv) as it is, refitting nothing, to the same\n"
"kind of predictions (e.g. those of `dlperf eval --models` on a new\n"
"batch) and prints their eager MAPE as predicted and corrected, overall\n"
"and per device, of the latencies and the energies (--by-batch: and the\n"
"table by batch of host fit).\n\n"
"usage: dlperf host replicates ROWS [--host FILE]\n\n"
"ROWS: the collector's inference rows of one or more batches (CSV with\n"
"batch_id, as data/FORMAT.md's inference.csv; plain or .xz). For every\n"
"eager configuration measured twice (rep 0 and rep 1 of a batch, or in\n"
"two batches), the earlier measurement stands for the later: prints,\n"
"per pair of batches, the gap as is and moved by the correction in FILE\n"
"(default models/host.csv) from the earlier host_us to the later's,\n"
"h = 1 - graph / eager of the earlier's own latencies. The gaps bound\n"
"what a predictor blind to the host's state can reach. beta* is the\n"
"beta fitted on the pairs themselves (least squares of ln(later /\n"
"earlier) on h ln(host_us ratio)), moved* the mean gap it leaves,\n"
"graph %% the median gap of the same measurements' CUDA-graph twins;\n"
"graph +%% and power +%% their signed shift later / earlier (geometric\n"
"mean) of the CUDA-graph latency and power: what another card (or day)\n"
"does to the same configurations (data/probes/repeats.csv: the rows\n"
"`run_batch.py --reference` measured again, beside the stored ones).\n"
"host: the pairs with host_us on both sides, which the moved and beta*\n"
"columns are over.\n"
"Training rows (a step_ms column, as data/FORMAT.md's training.csv;\n"
"data/probes/repeats-training.csv, what `run_batch.py --train-reference`\n"
"measured again) pair every two steps of a configuration, host_us or\n"
"not; they have no CUDA-graph twin, step +%% and step W+%% are the\n"
"signed shifts of the steps' own time and power, and the moved gap\n"
"needs a training fit in FILE (tau_ms or power_hi_w > 0; `dlperf host\n"
"fit --mode training`; the power rule takes the earlier step's measured\n"
"power, a rep 1 row its batch's rep 0 power), else beta* takes h = 1.\n");
}

static void print_repl(const char *a, const char *b,
                       const dlp_host_repl_pair *q) {
    printf("%-28s %-28s %6d %6d %8.2f %8.2f %9.2f %9.2f %9.2f %9.2f %7.3f "
           "%9.2f %8.3f %8.2f %8.2f\n", a, b, q->n, q->n_host, q->host_a,
           q->host_b, q->gap, q->gap_med, q->gap_cor, q->gap_cor_med,
           q->beta_fit, q->gap_fit, q->graph_med, q->graph_shift,
           q->power_shift);
}

/* host replicates: 0 ok, 1 failure. */
static int replicates(const char *rows, const char *path) {
    dlp_host_model m;
    dlp_error err = {0};
    dlp_host_repl r = {0};
    dlp_status st = dlp_host_load(path, &m, &err);
    if (!st) st = dlp_host_replicates(rows, &m, &r, &err);
    if (st) {
        dlp_host_repl_free(&r);
        fprintf(stderr, "dlperf host: %s\n", err.msg);
        return 1;
    }
    if (r.training)
        printf("training-step replicates of %s, moved by %s %s; %d rows "
               "without host_us (in the gap as is only)\n", rows, path,
               dlp_host_is_training(&m) ? "(a training fit)"
                            : "(not a training fit: nothing moved; beta* "
                              "with h = 1)", r.n_no_host);
    else
        printf("eager replicates of %s, moved by %s (beta %.4g, ref_us %.4g); "
               "%d eager rows without host_us, %d pairs without both "
               "CUDA-graph rows\n", rows, path, m.beta, m.ref_us,
               r.n_no_host, r.n_no_graph);
    printf("%-28s %-28s %6s %6s %8s %8s %9s %9s %9s %9s %7s %9s %8s %8s "
           "%8s\n", "earlier", "later", "n", "host", "host_us", "host_us",
           "as is %", "median", "moved %", "median", "beta*", "moved* %",
           "graph %", r.training ? "step +%" : "graph +%",
           r.training ? "step W+%" : "power +%");
    for (int i = 0; i < r.n_pairs; i++) {
        const dlp_host_repl_pair *q = &r.pairs[i];
        print_repl(r.batches[q->a],
                   q->a == q->b ? "(rep 0 -> rep 1)" : r.batches[q->b], q);
    }
    if (r.all_same.n) print_repl("all", "(within a batch)", &r.all_same);
    if (r.all_across.n) print_repl("all", "(across batches)", &r.all_across);
    dlp_host_repl_free(&r);
    return 0;
}

/* The table of host fit / apply: per device and overall, n and the eager
 * MAPE as given and corrected, of the latencies (llm: the throughputs)
 * and of the energies. */
static void print_table(const char *kind, const dlp_host_set *set,
                        const dlp_host_cv *cv, const char *how) {
    bool training = set->mode == DLP_HOST_TRAINING;
    printf("%s %s predictions %d: with host_us %d (%d models, "
           "%s), %d without host_us, %d without a %s prediction\n",
           kind, dlp_host_quantity(set->mode), set->n_eager, set->n,
           set->n_models, how, set->n_no_host, set->n_no_graph,
           training ? "power" : "CUDA-graph");
    printf("%-16s %6s %12s %12s\n", "device", "n", "as given %", "corrected %");
    for (int d = 0; d < set->n_devices; d++)
        if (cv->dev_n[d])
            printf("%-16s %6d %12.2f %12.2f\n", set->devices[d], cv->dev_n[d],
                   cv->dev_blind[d], cv->dev_host[d]);
    printf("%-16s %6d %12.2f %12.2f\n", "all", set->n, cv->blind, cv->host);
    if (training && cv->own_n && cv->median_n) {   /* by the host's source */
        printf("%-16s %6d %12.2f %12.2f\n", "own probe", cv->own_n,
               cv->own_blind, cv->own_host);
        printf("%-16s %6d %12.2f %12.2f\n", "batch median", cv->median_n,
               cv->median_blind, cv->median_host);
    }
    if (!cv->e_n) {
        printf("%s energy: no prediction of the same configurations\n",
               training ? "step" : "eager");
        return;
    }
    printf("%s energy%s, the same configurations:\n",
           training ? "step (predicted power x step)" : "eager",
           set->mode == DLP_HOST_LLM ? " per sample" : "");
    for (int d = 0; d < set->n_devices; d++)
        if (cv->dev_e_n[d])
            printf("%-16s %6d %12.2f %12.2f\n", set->devices[d],
                   cv->dev_e_n[d], cv->dev_e_blind[d], cv->dev_e_host[d]);
    printf("%-16s %6d %12.2f %12.2f\n", "all", cv->e_n, cv->e_blind,
           cv->e_host);
}

/* --by-batch: per batch of the labels (set->batches; "(several)" for
 * labels measured in more than one), n, the median host_us of its
 * samples, the mean ln(measured / predicted) of the latencies (llm: batch
 * / throughput) as given and as corrected (cor[i]), and their MAPE: a
 * batch's host shows as a shift of all of its samples. */
static void print_batches(const dlp_host_set *set, const double *cor) {
    double *h = malloc((set->n ? (size_t)set->n : 1) * sizeof *h);
    if (!h) {
        printf("by batch: out of memory\n");
        return;
    }
    printf("by batch, mean ln(measured / predicted) and MAPE:\n");
    printf("%-24s %6s %9s %9s %9s %10s %11s\n", "batch", "n", "host_us",
           "ln given", "ln corr.", "as given %", "corrected %");
    for (int b = 0; b <= set->n_batches; b++) {
        int want = b < set->n_batches ? b : -1, n = 0;
        double lg = 0, lc = 0, ag = 0, ac = 0;
        for (int i = 0; i < set->n; i++) {
            const dlp_host_sample *x = &set->s[i];
            if (x->batch != want) continue;
            h[n++] = x->host_us;
            lg += log(x->actual_ms / x->eager_ms);
            lc += log(x->actual_ms / cor[i]);
            ag += dlp_host_ape(set->mode, x->eager_ms, x->actual_ms);
            ac += dlp_host_ape(set->mode, cor[i], x->actual_ms);
        }
        if (!n) continue;
        printf("%-24s %6d %9.3f %+9.4f %+9.4f %10.2f %11.2f\n",
               want >= 0 ? set->batches[want] : "(several)", n,
               dlp_quantile(h, (size_t)n, 0.5), lg / n,
               lc / n, 100 * ag / n, 100 * ac / n);
    }
    free(h);
}

/* the corrected latencies of set's samples (malloc'd; NULL when out of
 * memory, reported on stderr), for --by-batch */
static double *corrected_array(const dlp_host_set *set) {
    double *c = malloc((set->n ? (size_t)set->n : 1) * sizeof *c);
    if (!c) fprintf(stderr, "dlperf host: out of memory\n");
    return c;
}

/* host apply: the file's correction on set (freed here); by_batch: the
 * table by batch too. 0 ok, 1 failure. */
static int apply_file(const char *path, const char *kind, dlp_host_set *set,
                      bool by_batch) {
    dlp_host_model m;
    dlp_host_cv cv;
    dlp_error err = {0};
    double *cor = by_batch ? corrected_array(set) : NULL;
    if (by_batch && !cor) {
        dlp_host_set_free(set);
        return 1;
    }
    dlp_status st = dlp_host_load(path, &m, &err);
    if (!st) st = dlp_host_apply(set, &m, &cv, cor, &err);
    if (!st) {
        char how[600];
        char quick[48] = "";
        if (m.beta_quick > 0)
            snprintf(quick, sizeof quick, ", beta_quick %.4g below it",
                     m.beta_quick);
        snprintf(how, sizeof how, "corrected by %s: beta %.4g, ref_us %.4g%s, "
                 "tau_ms %.4g, power_lo_w %.4g, power_hi_w %.4g (on %.4g W "
                 "boards), energy_gamma %.4g", path, m.beta, m.ref_us, quick,
                 m.tau_ms, m.power_lo_w, m.power_hi_w, m.power_tdp_w,
                 m.gamma);
        print_table(kind, set, &cv, how);
        if (cor) print_batches(set, cor);
    }
    free(cor);
    dlp_host_set_free(set);
    if (st) {
        fprintf(stderr, "dlperf host: %s\n", err.msg);
        return 1;
    }
    return 0;
}

/* m's level_mape and energy_level_mape, the figures of a reading of the
 * host rather than of the measurement's moment: a fit on such readings
 * (src batch or fresh), its cross-fitted ones; a fit on the labels' own
 * probes, it applied with each sample's batch median probe as its host
 * (*set moved to that level; unmeasured, 0, where no sample has one);
 * printed */
static void host_level(dlp_host_set *set, dlp_host_source src,
                       const dlp_host_cv *cv, dlp_host_model *m) {
    dlp_host_cv lv = *cv;
    dlp_error err;
    if (src == DLP_HOST_SRC_OWN &&
        (dlp_host_set_source(set, DLP_HOST_SRC_BATCH, &err) ||
         dlp_host_apply(set, m, &lv, NULL, &err))) {
        printf("host's level: unmeasured (%s)\n", err.msg);
        return;
    }
    m->level_mape = lv.host;
    m->energy_level_mape = lv.e_n ? lv.e_host : 0;
    printf("host's level (%s): %s %.2f -> %.2f%%",
           src == DLP_HOST_SRC_FRESH ? "each label's batch's fresh reading"
                                     : "each label's batch median probe",
           src == DLP_HOST_SRC_OWN ? "this fit" : "cross-fitted", lv.blind,
           lv.host);
    if (lv.e_n) printf(", energy %.2f -> %.2f%%", lv.e_blind, lv.e_host);
    printf(" (%d samples)\n", set->n);
}

int cmd_host(int argc, char **argv) {
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    bool apply = !strcmp(argv[1], "apply");
    bool repl = !strcmp(argv[1], "replicates");
    if (strcmp(argv[1], "fit") && !apply && !repl) {
        fprintf(stderr, "dlperf host: unknown subcommand '%s'\n", argv[1]);
        usage(stderr);
        return 2;
    }
    const char *preds = NULL, *dir = NULL, *out = NULL, *kind = "dippm",
               *fit_dev = NULL, *host = NULL, *mode = "inference";
    int src = -1;   /* dlp_host_source given by an option */
    bool two_sided = false, by_batch = false;
    int n_src = 0;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (!repl && (!strcmp(a, "--own-probe") ||
                      !strcmp(a, "--batch-host") ||
                      !strcmp(a, "--fresh-host"))) {
            src = !strcmp(a, "--own-probe")    ? DLP_HOST_SRC_OWN
                  : !strcmp(a, "--batch-host") ? DLP_HOST_SRC_BATCH
                                               : DLP_HOST_SRC_FRESH;
            n_src++;
            continue;
        }
        if (!apply && !repl && !strcmp(a, "--two-sided")) {
            two_sided = true;
            continue;
        }
        if (!repl && !strcmp(a, "--by-batch")) {
            by_batch = true;
            continue;
        }
        if (repl && strcmp(a, "--host") && a[0] == '-') {
            fprintf(stderr, "dlperf host replicates: unknown option '%s'\n", a);
            return 2;
        }
        bool mine = apply || repl ? !strcmp(a, "--host")
                          : !strcmp(a, "-o") || !strcmp(a, "--fit-device");
        if (mine || !strcmp(a, "--kind") || !strcmp(a, "--mode")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "dlperf host: %s needs a value\n", a);
                return 2;
            }
            if (!strcmp(a, "-o")) out = argv[++i];
            else if (!strcmp(a, "--kind")) kind = argv[++i];
            else if (!strcmp(a, "--host")) host = argv[++i];
            else if (!strcmp(a, "--mode")) mode = argv[++i];
            else fit_dev = argv[++i];
        } else if (a[0] == '-') {
            fprintf(stderr, "dlperf host: unknown option '%s'\n", a);
            return 2;
        } else if (!preds) {
            preds = a;
        } else if (!dir) {
            dir = a;
        } else {
            fprintf(stderr, "dlperf host: unexpected argument '%s'\n", a);
            return 2;
        }
    }
    if (repl && preds && !dir)
        return replicates(preds, host ? host : "models/" DLP_HOST_FILE);
    if (!dir || repl) {
        usage(stderr);
        return 2;
    }
    if (n_src > 1) {
        fprintf(stderr, "dlperf host: --own-probe, --batch-host, "
                "--fresh-host: one host source at a time\n");
        return 2;
    }
    dlp_host_mode hmode = dlp_host_mode_parse(mode);
    if (hmode == DLP_HOST_N_MODES) {
        fprintf(stderr, "dlperf host: --mode %s: the host correction is for "
                "eager inference, llm or training\n", mode);
        return 2;
    }
    char deflt[64];
    if (!host) {
        snprintf(deflt, sizeof deflt, "models/%s", dlp_host_file(hmode));
        host = deflt;
    }
    dlp_dataset *ds = NULL;
    if (cli_open_dataset("host", dir, &ds)) return 1;
    dlp_error err = {0};
    dlp_host_set set;
    dlp_host_cv cv;
    dlp_host_model m;
    dlp_status st = dlp_host_set_load(preds, ds, kind, hmode, &set, &err);
    dlp_dataset_free(ds);
    if (!st && src >= 0) {
        st = dlp_host_set_source(&set, (dlp_host_source)src, &err);
        if (st) dlp_host_set_free(&set);
    }
    if (st) {
        fprintf(stderr, "dlperf host: %s\n", err.msg);
        return 1;
    }
    if (apply) return apply_file(host, kind, &set, by_batch);
    set.two_sided = two_sided;
    int fd = -1;
    if (fit_dev) {
        while (++fd < set.n_devices && strcmp(set.devices[fd], fit_dev)) {}
        int n_dev = 0;
        for (int i = 0; fd < set.n_devices && i < set.n; i++)
            n_dev += set.s[i].device == fd;
        if (n_dev < 2)
            st = dlp_fail(&err, DLP_ERR_NOT_FOUND, "--fit-device %s: %d "
                          "sample(s) of that device", fit_dev, n_dev);
    }
    double *cor = NULL;
    if (!st && by_batch && !(cor = corrected_array(&set))) {
        dlp_host_set_free(&set);
        return 1;
    }
    if (!st) st = dlp_host_cross_validate(&set, fd, &cv, cor, &err);
    if (!st) st = dlp_host_fit(&set, NULL, &m, &err);
    if (!st) {
        char how[32];
        snprintf(how, sizeof how, "%d folds", cv.folds);
        print_table(kind, &set, &cv, how);
        if (fit_dev)
            printf("(corrections fitted on the %s samples of the other "
                   "folds)\n", fit_dev);
        if (cor) print_batches(&set, cor);
        printf("fitted on all: beta %.4g", m.beta);
        if (m.beta_quick > 0)
            printf(" above ref_us, beta_quick %.4g below", m.beta_quick);
        printf(", ref_us %.4g, tau_ms %.4g, power_lo_w %.4g, power_hi_w "
               "%.4g (on %.4g W boards), energy_gamma %.4g (%d energy "
               "samples)\n", m.ref_us, m.tau_ms, m.power_lo_w, m.power_hi_w,
               m.power_tdp_w, m.gamma, m.n_energy);
        m.host_source = src > 0 ? src : DLP_HOST_SRC_OWN;
        m.folds = cv.folds;
        m.blind_mape = cv.blind;
        m.host_mape = cv.host;
        m.energy_blind_mape = cv.e_blind;
        m.energy_host_mape = cv.e_host;
        host_level(&set, (dlp_host_source)m.host_source, &cv, &m);
        if (out && !(st = dlp_host_save(out, &m, &err)))
            printf("wrote %s\n", out);
    }
    free(cor);
    dlp_host_set_free(&set);
    if (st) {
        fprintf(stderr, "dlperf host: %s\n", err.msg);
        return 1;
    }
    return 0;
}
