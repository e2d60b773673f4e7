/*
 * cmd_dataset.c — `dlperf dataset stats DIR [--json] [--all]`: loads a
 * dataset (data/FORMAT.md), validates it and prints its statistics.
 * Exit status: 0 valid (warnings allowed), 1 invalid or unreadable, 2 usage.
 * The numbers come from dlp_dataset_check's JSON report; --json prints that
 * report as is.
 * `dlperf dataset extract DIR HASH [-o FILE]` writes one graph file of the
 * packs (to stdout by default), e.g. to run `dlperf inspect` on it.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "eval/eval.h"

static void usage(FILE *f) {
    fprintf(f,
            "usage: dlperf dataset stats DIR [--json] [--all]\n"
            "       dlperf dataset extract DIR HASH [-o FILE]\n"
            "       dlperf dataset kernels DIR [--configs]\n"
            "  stats validates the dataset in DIR (data/FORMAT.md) and prints\n"
            "  its statistics; exit 0 when valid, 1 with the problems listed.\n"
            "  --json  the full report as JSON (docs/DATASET_STATS.md)\n"
            "  --all   list every problem (default: the first 20 of each)\n"
            "  extract writes the graph file HASH from its pack (stdout or FILE)\n"
            "  kernels compares the eager kernel count of the featurizer (and\n"
            "  schema 8's node rule) with the kernels of every eager trace in\n"
            "  DIR, per family (means; ratio: geometric mean of est / measured);\n"
            "  --configs  one line per configuration instead (hash, model,\n"
            "             variant, precision, batch, measured, estimate)\n");
}

static double num(const cJSON *o, const char *k) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

/* "a 3, b 2" from {"a":3,"b":2}, at most 12 entries. */
static void print_counts(const char *label, const cJSON *o) {
    printf("  %-11s", label);
    int i = 0, n = cJSON_GetArraySize(o);
    const cJSON *it;
    cJSON_ArrayForEach(it, o) {
        if (i == 12) {
            printf(", ... (%d more)", n - 12);
            break;
        }
        printf("%s%s %g", i ? ", " : "", it->string, it->valuedouble);
        i++;
    }
    printf("%s\n", n ? "" : "-");
}

static void print_summary(const char *label, const cJSON *s) {
    if (!s || num(s, "n") == 0) {
        printf("  %-20s -\n", label);
        return;
    }
    printf("  %-20s min %-10.4g median %-10.4g max %-10.4g (n=%g)\n", label,
           num(s, "min"), num(s, "median"), num(s, "max"), num(s, "n"));
}

static void print_kind(const char *name, const cJSON *k) {
    if (!k || num(k, "rows") == 0) {
        printf("\n%s: no rows\n", name);
        return;
    }
    printf("\n%s: %g rows, %g configurations (%g graphs), %g with both reps, "
           "%g flagged\n", name, num(k, "rows"), num(k, "configs"),
           num(k, "graphs"), num(k, "pairs"), num(k, "flagged_pairs"));
    print_counts("devices", cJSON_GetObjectItemCaseSensitive(k, "devices"));
    print_counts("runtimes", cJSON_GetObjectItemCaseSensitive(k, "runtimes"));
    print_counts("precisions", cJSON_GetObjectItemCaseSensitive(k, "precisions"));
    print_counts("families", cJSON_GetObjectItemCaseSensitive(k, "families"));
    const cJSON *it;
    cJSON_ArrayForEach(it, k) {
        if (cJSON_IsObject(it) && cJSON_GetObjectItemCaseSensitive(it, "median") &&
            cJSON_GetObjectItemCaseSensitive(it, "n"))
            print_summary(it->string, it);
    }
    const cJSON *noise = cJSON_GetObjectItemCaseSensitive(k, "noise");
    if (cJSON_GetArraySize(noise) == 0) return;
    printf("  noise floor |rep0-rep1|/rep0, median / p90 / mean over pairs:\n");
    const cJSON *rt;
    cJSON_ArrayForEach(rt, noise) {
        printf("    %-8s", rt->string);
        const cJSON *m;
        cJSON_ArrayForEach(m, rt) {
            if (num(m, "pairs") == 0)
                printf("  %s -", m->string);
            else
                printf("  %s %.2f%% / %.2f%% / %.2f%% (%g)", m->string,
                       100 * num(m, "median"), 100 * num(m, "p90"),
                       100 * num(m, "mean"), num(m, "pairs"));
        }
        printf("\n");
    }
    const cJSON *xd = cJSON_GetObjectItemCaseSensitive(k, "cross_device");
    if (!xd) return;
    printf("  eager across cards: |eager ratio / graph ratio - 1| of one "
           "configuration labeled\n  on two cards (their hosts and eager "
           "noise), median / p90 / mean over pairs; floor: the\n  error of a "
           "host-blind prediction at the pair's geometric middle:\n");
    cJSON_ArrayForEach(rt, xd) {
        if (num(rt, "pairs") == 0)
            printf("    %-10s -\n", rt->string);
        else
            printf("    %-10s %.2f%% / %.2f%% / %.2f%%, floor %.2f%% (%g)\n",
                   rt->string, 100 * num(rt, "median"), 100 * num(rt, "p90"),
                   100 * num(rt, "mean"), 100 * num(rt, "floor"), num(rt, "pairs"));
    }
    const cJSON *hp = cJSON_GetObjectItemCaseSensitive(k, "host_probe");
    if (!hp) return;
    printf("  eager rep 0 / rep 1 against the host probe host_us, ln ratio on ln "
           "ratio:\n");
    cJSON_ArrayForEach(rt, hp) {
        if (num(rt, "pairs") < 3)
            printf("    %-10s - (%g pairs)\n", rt->string, num(rt, "pairs"));
        else
            printf("    %-10s correlation %.2f, slope %.2f (%g pairs)\n", rt->string,
                   num(rt, "corr"), num(rt, "slope"), num(rt, "pairs"));
    }
    const cJSON *fp = cJSON_GetObjectItemCaseSensitive(k, "fresh_probe");
    if (!cJSON_GetArraySize(fp)) return;
    printf("  a fresh process's host probe (env.json, before / after the "
           "batch; geometric mean)\n  against the medians of the batch's "
           "own probes, us per eager op (their ratio to it):\n");
    const cJSON *b;
    cJSON_ArrayForEach(b, fp) {
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(b, "batch");
        double f = num(b, "fresh_us");
        char us[4][24];
        static const char *const key[4] = {"start_us", "end_us",
                                           "inference_us", "training_us"};
        for (int j = 0; j < 4; j++) {
            const cJSON *v = cJSON_GetObjectItemCaseSensitive(b, key[j]);
            if (!cJSON_IsNumber(v))
                snprintf(us[j], sizeof us[j], "-");
            else if (j < 2)
                snprintf(us[j], sizeof us[j], "%.2f", v->valuedouble);
            else
                snprintf(us[j], sizeof us[j], "%.2f (x%.2f)", v->valuedouble,
                         v->valuedouble / f);
        }
        printf("    %-28s %s / %s (%.2f)  eager inference %s  training %s\n",
               cJSON_IsString(id) ? id->valuestring : "?", us[0], us[1], f,
               us[2], us[3]);
    }
}

static void print_problems(const char *label, const cJSON *a, int total,
                           bool all) {
    if (total == 0) return;
    printf("\n%s (%d):\n", label, total);
    int i = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, a) {
        if (!all && i == 20) break;
        printf("  %s\n", it->valuestring);
        i++;
    }
    if (i < cJSON_GetArraySize(a))
        printf("  ... %d more (--all lists them)\n", total - i);
    else if (i < total)
        printf("  ... %d more (the report keeps the first %d)\n", total - i, i);
}

static void print_report(const cJSON *r, bool all) {
    int ne = (int)num(r, "n_errors"), nw = (int)num(r, "n_warnings");
    const cJSON *dir = cJSON_GetObjectItemCaseSensitive(r, "dir");
    printf("dataset %s: %s (%d errors, %d warnings)\n",
           cJSON_IsString(dir) ? dir->valuestring : "?",
           ne ? "INVALID" : "valid", ne, nw);
    printf("graphs %g in %g packs; %g batches; %g labeled graphs\n",
           num(r, "graphs"), num(r, "packs"), num(r, "batches"),
           num(r, "labeled_graphs"));
    printf("labeled configurations: inference %g, training %g, llm %g; "
           "kernel traces %g; failures %g\n", num(r, "labeled_inference"),
           num(r, "labeled_training"), num(r, "labeled_llm"),
           num(r, "kernel_traces"), num(r, "failures"));
    if (num(r, "training_memory_withdrawn") > 0)
        printf("training memory withdrawn (measured after CUDA-graph "
               "inference in the same worker, data/README.md): %g rows\n",
               num(r, "training_memory_withdrawn"));
    const cJSON *devs = cJSON_GetObjectItemCaseSensitive(r, "devices");
    printf("devices:");
    const cJSON *it;
    cJSON_ArrayForEach(it, devs) printf(" %s", it->valuestring);
    printf("%s\n", cJSON_GetArraySize(devs) ? "" : " -");
    if (num(r, "failures") > 0)
        print_counts("failures",
                     cJSON_GetObjectItemCaseSensitive(r, "failure_stages"));
    print_kind("inference", cJSON_GetObjectItemCaseSensitive(r, "inference"));
    print_kind("training", cJSON_GetObjectItemCaseSensitive(r, "training"));
    print_kind("llm", cJSON_GetObjectItemCaseSensitive(r, "llm"));
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(r, "kernels");
    if (k && num(k, "rows") > 0) {
        printf("\nkernels: %g rows, %g traced configurations (%g graphs), "
               "%g rows mapped to graph nodes\n", num(k, "rows"),
               num(k, "configs"), num(k, "graphs"), num(k, "mapped_rows"));
        print_counts("modes", cJSON_GetObjectItemCaseSensitive(k, "modes"));
    }
    print_problems("errors", cJSON_GetObjectItemCaseSensitive(r, "errors"), ne,
                   all);
    print_problems("warnings", cJSON_GetObjectItemCaseSensitive(r, "warnings"),
                   nw, all);
}

static int extract(int argc, char **argv) {
    const char *dir = NULL, *hash = NULL, *out = NULL;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "-o") && i + 1 < argc) {
            out = argv[++i];
        } else if (argv[i][0] == '-' || (dir && hash)) {
            fprintf(stderr, "dlperf dataset extract: unexpected argument '%s'\n",
                    argv[i]);
            return 2;
        } else if (!dir) {
            dir = argv[i];
        } else {
            hash = argv[i];
        }
    }
    if (!dir || !hash) {
        usage(stderr);
        return 2;
    }
    dlp_dataset *ds = NULL;
    if (cli_open_dataset("dataset", dir, &ds)) return 1;
    dlp_error err;
    void *bytes = NULL;
    size_t len = 0;
    dlp_status s = dlp_dataset_graph_bytes(ds, hash, &bytes, &len, &err);
    dlp_dataset_free(ds);
    if (s != DLP_OK) {
        fprintf(stderr, "dlperf dataset: %s\n", err.msg);
        return 1;
    }
    FILE *f = out ? fopen(out, "wb") : stdout;
    bool ok = f && fwrite(bytes, 1, len, f) == len;
    if (out && f && fclose(f) != 0) ok = false;
    free(bytes);
    if (!ok) {
        fprintf(stderr, "dlperf dataset: cannot write %s\n", out ? out : "stdout");
        return 1;
    }
    return 0;
}

/* |log(estimate / measured)| of k: median and 90th percentile, and the
 * correlation of the logs */
static void kernel_summary(const char *what, const dlp_kcount *k, size_t n,
                           bool node_rule) {
    double *e = malloc((n ? n : 1) * sizeof *e);
    if (!e) return;
    double sx = 0, sy = 0, sxx = 0, syy = 0, sxy = 0;
    for (size_t i = 0; i < n; i++) {   /* a call launches one at least */
        double x = log(fmax(node_rule ? k[i].node_rule : k[i].estimated, 1));
        double y = log(fmax(k[i].measured, 1));
        e[i] = fabs(x - y);
        sx += x; sy += y; sxx += x * x; syy += y * y; sxy += x * y;
    }
    qsort(e, n, sizeof *e, dlp_cmp_double);
    double vx = sxx - sx * sx / n, vy = syy - sy * sy / n;
    printf("  %-34s median |log ratio| %.3f  p90 %.3f  log correlation %.3f\n",
           what, dlp_quantile_sorted(e, n, 0.5), dlp_quantile_sorted(e, n, 0.9),
           vx > 0 && vy > 0 ? (sxy - sx * sy / n) / sqrt(vx * vy) : 0);
    free(e);
}

static int cmp_family(const void *a, const void *b) {
    return strcmp(((const dlp_kcount *)a)->family, ((const dlp_kcount *)b)->family);
}

/* dlperf dataset kernels DIR: the eager kernel count against the traces */
static int kernels(int argc, char **argv) {
    bool configs = argc == 4 && !strcmp(argv[3], "--configs");
    if ((argc != 3 && !configs) || argv[2][0] == '-') {
        bool help = argc == 3 && (!strcmp(argv[2], "-h") || !strcmp(argv[2], "--help"));
        usage(help ? stdout : stderr);
        return help ? 0 : 2;
    }
    dlp_dataset *ds = NULL;
    if (cli_open_dataset("dataset", argv[2], &ds)) return 1;
    dlp_error err;
    dlp_kcount *k = NULL;
    size_t n = 0, failed = 0;
    dlp_status s = dlp_eval_kernel_counts(ds, &k, &n, &failed, &err);
    if (s != DLP_OK || !n) {
        fprintf(stderr, "dlperf dataset: %s\n",
                s ? err.msg : "no eager kernel traces in the dataset");
        dlp_dataset_free(ds);
        free(k);
        return 1;
    }
    if (configs) {
        printf("hash,model,variant,precision,batch,seq,measured,estimate\n");
        for (size_t i = 0; i < n; i++)
            printf("%s,%s,\"%s\",%s,%lld,%lld,%d,%.0f\n", k[i].hash, k[i].model,
                   k[i].variant, k[i].precision, (long long)k[i].batch,
                   (long long)k[i].seq, k[i].measured, k[i].estimated);
        free(k);
        dlp_dataset_free(ds);
        return 0;
    }
    qsort(k, n, sizeof *k, cmp_family);
    printf("%-16s %4s %9s %9s %9s %9s %9s\n", "family", "n", "measured",
           "estimate", "ratio", "node rule", "ratio");
    for (size_t i = 0; i < n;) {
        size_t j = i;
        double m = 0, e = 0, r = 0, nr = 0, rn = 0;
        for (; j < n && !strcmp(k[j].family, k[i].family); j++) {
            m += k[j].measured;
            e += k[j].estimated;
            nr += k[j].node_rule;
            r += log(fmax(k[j].estimated, 1) / fmax(k[j].measured, 1));
            rn += log(fmax(k[j].node_rule, 1) / fmax(k[j].measured, 1));
        }
        double c = (double)(j - i);
        printf("%-16s %4zu %9.0f %9.0f %9.3f %9.0f %9.3f\n", k[i].family, j - i,
               m / c, e / c, exp(r / c), nr / c, exp(rn / c));
        i = j;
    }
    printf("%zu eager trace configurations (%zu left out: graph failed)\n", n,
           failed);
    kernel_summary("estimate (feat_kern.c):", k, n, false);
    kernel_summary("node rule (feature schema <= 8):", k, n, true);
    free(k);
    dlp_dataset_free(ds);
    return 0;
}

int cmd_dataset(int argc, char **argv) {
    const char *dir = NULL;
    bool json = false, all = false;
    if (argc >= 2 && !strcmp(argv[1], "extract")) return extract(argc, argv);
    if (argc >= 2 && !strcmp(argv[1], "kernels")) return kernels(argc, argv);
    if (argc < 2 || strcmp(argv[1], "stats") != 0) {
        if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
            usage(stdout);
            return 0;
        }
        usage(stderr);
        return 2;
    }
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--json")) {
            json = true;
        } else if (!strcmp(argv[i], "--all")) {
            all = true;
        } else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return 0;
        } else if (argv[i][0] == '-' || dir) {
            fprintf(stderr, "dlperf dataset stats: unexpected argument '%s'\n",
                    argv[i]);
            usage(stderr);
            return 2;
        } else {
            dir = argv[i];
        }
    }
    if (!dir) {
        usage(stderr);
        return 2;
    }
    dlp_dataset *ds = NULL;
    if (cli_open_dataset("dataset", dir, &ds)) return 1;
    dlp_error err;
    char *report = NULL;
    int ne = 0, nw = 0;
    dlp_status s = dlp_dataset_check(ds, &report, &ne, &nw, &err);
    dlp_dataset_free(ds);
    if (s != DLP_OK) {
        fprintf(stderr, "dlperf dataset: %s\n", err.msg);
        return 1;
    }
    if (json) {
        printf("%s\n", report);
    } else {
        cJSON *r = cJSON_Parse(report);
        if (!r) {
            fprintf(stderr, "dlperf dataset: out of memory\n");
            free(report);
            return 1;
        }
        print_report(r, all);
        cJSON_Delete(r);
    }
    free(report);
    return ne ? 1 : 0;
}
