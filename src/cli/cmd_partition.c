/*
 * cmd_partition.c — `dlperf partition fit DATA_DIR [-o FILE] [--folds K]
 * [--points]`: fits the learned SM-partition latency model
 * (src/predict/predict_part.h) on the dataset's green-context kernel
 * traces, prints its leave-models-out error next to the roofline factor's
 * on the same points, and with -o writes the model fitted on every
 * configuration (models/partition.csv, which `dlperf predict --sms/--mig`
 * loads). Exit: 0 ok, 1 failure, 2 usage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "predict/predict_part.h"

static void usage(FILE *f) {
    fprintf(f,
"usage: dlperf partition fit DATA_DIR [-o FILE] [--folds K] [--points]\n\n"
"Fits the SM-partition latency model (3 parameters, least squares on log\n"
"factors) on DATA_DIR's eager kernel traces run on the whole GPU and in\n"
"green contexts of fewer SMs, and prints the factor's MAPE on held-out\n"
"models (K-fold, configurations grouped by graph hash; default one fold\n"
"per model) next to the roofline factor's (eager and graph launch floors).\n"
"--points prints every held-out point. With -o it writes the model fitted\n"
"on every configuration (models/partition.csv is what predict loads).\n");
}

int cmd_partition(int argc, char **argv) {
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (strcmp(argv[1], "fit")) {
        fprintf(stderr, "dlperf partition: unknown subcommand '%s'\n", argv[1]);
        usage(stderr);
        return 2;
    }
    const char *dir = NULL, *out = NULL;
    int folds = 0;
    bool points = false;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-o") || !strcmp(a, "--folds")) {
            if (!v) {
                fprintf(stderr, "dlperf partition: %s needs a value\n", a);
                return 2;
            }
            if (!strcmp(a, "-o")) {
                out = v;
            } else {
                char *end;
                long k = strtol(v, &end, 10);
                if (end == v || *end || k < 2 || k > 100000) {
                    fprintf(stderr, "dlperf partition: bad value '%s' for "
                            "--folds (2 or more)\n", v);
                    return 2;
                }
                folds = (int)k;
            }
            i++;
        } else if (!strcmp(a, "--points")) {
            points = true;
        } else if (a[0] == '-') {
            fprintf(stderr, "dlperf partition: unknown option '%s'\n", a);
            return 2;
        } else if (!dir) {
            dir = a;
        } else {
            fprintf(stderr, "dlperf partition: more than one dataset given\n");
            return 2;
        }
    }
    if (!dir) {
        usage(stderr);
        return 2;
    }
    dlp_dataset *ds = NULL;
    if (cli_open_dataset("partition", dir, &ds)) return 1;
    dlp_error err = {0};
    dlp_part_set set;
    dlp_status st = dlp_part_set_load(ds, &set, &err);
    if (st) {
        dlp_dataset_free(ds);
        fprintf(stderr, "dlperf partition: %s\n", err.msg);
        return 1;
    }
    int np = 0;
    for (int i = 0; i < set.n; i++) np += set.s[i].n;
    double *pred = calloc((size_t)(np ? np : 1), sizeof *pred);
    dlp_part_cv cv;
    dlp_part_model m;
    if (!pred) st = dlp_fail(&err, DLP_ERR_NOMEM, "out of memory");
    if (!st) st = dlp_part_cross_validate(&set, folds, &cv, pred, &err);
    if (!st) st = dlp_part_fit(&set, NULL, &m, &err);
    if (!st) {
        printf("configurations %d (models %d, %d skipped), points %d, "
               "leave-models-out %d folds\n", cv.n_configs, cv.n_models,
               set.n_skipped, cv.n_points, cv.folds);
        printf("%-22s %8s %8s\n", "factor T(sms)/T(all)", "MAPE%", "max%");
        printf("%-22s %8.2f %8.2f\n", "learned (held out)", cv.learned,
               cv.learned_max);
        printf("%-22s %8.2f %8.2f\n", "roofline, eager", cv.roof_eager,
               cv.roof_eager_max);
        printf("%-22s %8.2f %8s\n", "roofline, graph", cv.roof_graph, "");
        printf("fitted on all: lat_us %.4g, elems_per_sm %.4g, bw_sms %.4g\n",
               m.lat_us, m.elems_per_sm, m.bw_sms);
        if (points) {
            printf("\n%-16s %-15s %-5s %5s %5s %4s %9s %8s %8s %8s\n", "hash",
                   "device", "prec", "batch", "seq", "sms", "full_us",
                   "meas", "learned", "roofline");
            int p = 0;
            for (int i = 0; i < set.n; i++) {
                const dlp_part_sample *x = &set.s[i];
                for (int k = 0; k < x->n; k++, p++)
                    printf("%-16s %-15s %-5s %5lld %5lld %4d %9.0f %8.3f "
                           "%8.3f %8.3f\n", x->hash, x->device,
                           dlp_precision_name(x->prec), (long long)x->batch,
                           (long long)x->seq, x->sms[k], x->full_us,
                           x->meas[k], pred[p], x->roof_eager[k]);
            }
        }
        m.n_models = cv.n_models;
        m.folds = cv.folds;
        m.cv_mape = cv.learned;
        m.roofline_mape = cv.roof_eager;
        if (out && !(st = dlp_part_save(out, &m, &err)))
            printf("wrote %s\n", out);
    }
    free(pred);
    dlp_part_set_free(&set);
    dlp_dataset_free(ds);
    if (st) {
        fprintf(stderr, "dlperf partition: %s\n", err.msg);
        return 1;
    }
    return 0;
}
