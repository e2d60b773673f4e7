/*
 * cmd_predict.c — `dlperf predict`: latency, peak memory, energy,
 * throughput, power and MIG advice for a model file on a GPU, from the
 * trained predictors in models/. With a directory instead of a file, every
 * *.onnx in it is predicted (the NAS use case), in parallel, one result per
 * line in file-name order.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "predict/predict_host.h"
#include "core/core.h"

static void usage(FILE *f) {
    fprintf(f,
"usage: dlperf predict MODEL.onnx|DIR --device NAME [--precision fp32|fp16|bf16]\n"
"                      [--runtime eager|graph] [--dim NAME=V]... [--batch N]\n"
"                      [--mode inference|training|llm] [--sms N | --mig PROFILE]\n"
"                      [--slo-ms X] [--json] [--models DIR] [--measured DIR]\n"
"                      [--jobs N] [--best] [--host-us X] [--resolution R|HxW]\n\n"
"Predicts, without the GPU, the model's latency, peak memory, energy,\n"
"throughput and average power on the device, with ~90%% intervals, and\n"
"recommends the smallest MIG profile that holds it (and meets --slo-ms).\n\n"
"  --device NAME     GPU (dlperf devices lists them), e.g. h100\n"
"  --precision P     fp32 (default), fp16 or bf16 (a training step at fp16 /\n"
"                    bf16: mixed precision, autocast over fp32 weights)\n"
"  --runtime R       graph (CUDA graph replay, default) or eager\n"
"  --dim NAME=V      bind a symbolic dimension (e.g. seq=128)\n"
"  --batch N         batch size (1..65536; default: as exported, else 1)\n"
"  --resolution R    image models: predict at R x R (or HxW) pixels instead\n"
"                    of the exported size (1..%d per side)\n"
"  --mode M          inference (default), training (step time and memory)\n"
"                    or llm (language-model throughput)\n"
"  --sms N           predict for an N-SM partition of the GPU\n"
"  --mig PROFILE     predict for a MIG instance (e.g. 3g.40gb)\n"
"  --slo-ms X        latency goal the recommended MIG profile must meet\n"
"  --json            one JSON object (one line per model for a DIR)\n"
"  --models DIR      trained predictors (default: the repository's models/)\n"
"  --measured DIR    measured device figures (data/devices)\n"
"  --jobs N          threads for a directory (default: online CPUs)\n"
"  --best            let slow predictors (kern, DIPPM+kern: ~50 ms per\n"
"                    process instead of ~5) compete by held-out error too;\n"
"                    with the shipped table DIPPM still wins (models/)\n"
"  --host-us X       eager inference, LLM or training: the host's dispatch\n"
"                    time per eager op, in us (docs/PREDICT.md has the\n"
"                    probe); the eager latency (step) is corrected for it\n"
"                    (models/host.csv; --mode llm: models/host-llm.csv;\n"
"                    --mode training: models/host-training.csv)\n"
"  -h, --help        this text\n", DLP_PREDICT_MAX_SIDE);
}

static int parse_i64(const char *s, long long lo, long long hi, long long *out) {
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) return -1;
    *out = v;
    return 0;
}

/* "R" or "HxW", each side 1..DLP_PREDICT_MAX_SIDE; 0 or -1 (bad). */
static int parse_resolution(const char *v, int64_t *h, int64_t *w) {
    char buf[64];
    long long a, b;
    snprintf(buf, sizeof buf, "%s", v);
    char *x = strchr(buf, 'x');
    if (x) *x = 0;
    if (parse_i64(buf, 1, DLP_PREDICT_MAX_SIDE, &a) ||
        (x && parse_i64(x + 1, 1, DLP_PREDICT_MAX_SIDE, &b)))
        return -1;
    *h = a;
    *w = x ? b : a;
    return 0;
}

static void print_value(FILE *f, const char *label,
                        const dlp_predict_value *v, const char *unit) {
    if (!v->valid) {
        fprintf(f, "  %-12s (no predictor)\n", label);
        return;
    }
    fprintf(f, "  %-12s %12.4g %-9s [%.4g .. %.4g]  %s", label, v->value, unit,
           v->lo, v->hi, v->by ? v->by : "");
    if (v->err_pct > 0 && v->err_basis)
        fprintf(f, " (MAPE %.1f%%, %s)", v->err_pct, v->err_basis);
    fputc('\n', f);
}

static void print_text(FILE *f, const char *name,
                       const dlp_predict_result *r) {
    bool amp = !strcmp(r->mode, "training") && strcmp(r->precision, "fp32");
    fprintf(f, "%s on %s%s%s, %s %s%s %s, batch %lld", name, r->device,
           r->partition[0] ? " " : "", r->partition, r->mode, r->precision,
           amp ? " autocast" : "", r->runtime, (long long)r->batch);
    if (r->seq) fprintf(f, ", seq %lld", (long long)r->seq);
    if (r->height > 0 && r->width > 0)
        fprintf(f, ", %lldx%lld px", (long long)r->height, (long long)r->width);
    fprintf(f, "\n");
    print_value(f, "latency", &r->latency_ms, "ms");
    print_value(f, "memory", &r->memory_mib, "MiB");
    print_value(f, "energy", &r->energy_j, "J");
    print_value(f, "throughput", &r->throughput_per_s, "samples/s");
    print_value(f, "power", &r->power_w, "W");
    if (r->host_us > 0)
        fprintf(f, "  host         %.3g us per eager op: latency x %.3f, "
                "energy x %.3f (%s)\n", r->host_us, r->host_factor,
                r->host_energy_factor,
                dlp_host_file(dlp_host_mode_parse(r->mode)));
    else if (r->host_ref_us > 0)
        fprintf(f, "  host         predicted for a host of %.3g us per eager "
                "op (--host-us X: yours)\n", r->host_ref_us);
    if (r->partition[0])
        fprintf(f, "  partition scaling: %s (docs/PREDICT.md, SM partitions)\n", r->scaling);
    fprintf(f, "  MIG profile  %s  (%s)\n", r->mig_profile[0] ? r->mig_profile : "-",
           r->mig_note);
    if (r->ood) fprintf(f, "  OUT OF DISTRIBUTION\n");
    if (r->extrapolated) fprintf(f, "  EXTRAPOLATED device\n");
    for (int i = 0; i < r->n_reasons; i++) fprintf(f, "  note: %s\n", r->reasons[i]);
}

/* Predicts one file; *line gets the output (JSON or text, malloc'd). */
static dlp_status predict_one(dlp_predictor_set *ps, const char *path,
                              const dlp_predict_config *c, bool json,
                              char **line, dlp_error *err) {
    *line = NULL;
    dlp_model *m = NULL;
    dlp_status st = dlp_model_open(path, &m, err);
    dlp_predict_result r;
    if (!st) st = dlp_predict(ps, m, c, &r, err);
    dlp_model_free(m);
    if (st) return st;
    const char *name = strrchr(path, '/');
    name = name ? name + 1 : path;
    if (json) return dlp_predict_to_json(&r, name, line, err);
    /* text: capture print_text through a memory stream */
    size_t len = 0;
    FILE *f = open_memstream(line, &len);
    if (!f) return DLP_ERR_NOMEM;
    print_text(f, name, &r);
    fclose(f);
    return DLP_OK;
}

/* ---- directory mode ---------------------------------------------------- */

typedef struct {
    dlp_predictor_set *ps;
    const dlp_predict_config *c;
    bool json;
    char **paths, **out;
    atomic_int failed;
} dir_job;

static void json_error(char **out, const char *name, const char *msg) {
    size_t cap = 2 * (strlen(name) + strlen(msg)) + 64;
    char *s = malloc(cap);
    if (!s) return;
    size_t k = (size_t)snprintf(s, cap, "{\"model\":\"");
    for (const char *p = name; *p && k + 4 < cap; p++) {
        unsigned char c = (unsigned char)*p;
        if (c == '"' || c == '\\') s[k++] = '\\';
        s[k++] = c < 0x20 || c >= 0x80 ? '?' : *p;
    }
    k += (size_t)snprintf(s + k, cap - k, "\",\"error\":\"");
    for (const char *p = msg; *p && k + 4 < cap; p++) {
        if (*p == '"' || *p == '\\') s[k++] = '\\';
        unsigned char c = (unsigned char)*p;
        s[k++] = c < 0x20 || c >= 0x80 ? '?' : *p;   /* always valid JSON */
    }
    snprintf(s + k, cap - k, "\"}");
    *out = s;
}

/* model i of the directory (dlp_parallel_each): its line, or its error
 * as one; never stops the others */
static bool dir_item(void *arg, int i) {
    dir_job *j = arg;
    dlp_error err = {0};
    if (predict_one(j->ps, j->paths[i], j->c, j->json, &j->out[i], &err)) {
        atomic_fetch_add(&j->failed, 1);
        const char *name = strrchr(j->paths[i], '/');
        name = name ? name + 1 : j->paths[i];
        if (j->json) {
            json_error(&j->out[i], name, err.msg);
        } else {
            size_t cap = strlen(name) + strlen(err.msg) + 32;
            j->out[i] = malloc(cap);
            if (j->out[i])
                snprintf(j->out[i], cap, "%s: error: %s\n", name, err.msg);
        }
    }
    return true;
}

static int predict_dir(dlp_predictor_set *ps, const char *dir,
                       const dlp_predict_config *c, bool json, int jobs) {
    char **names = NULL, **paths = NULL;
    int n = 0, rc = 0;
    dlp_error err;
    dlp_dir_filter f = {".onnx", NULL, false};
    if (dlp_dir_list(dir, &f, &names, &n, &err)) {
        fprintf(stderr, "dlperf predict: %s\n", err.msg);
        return 1;
    }
    if (n && !(paths = calloc((size_t)n, sizeof *paths))) rc = 1;
    for (int i = 0; !rc && i < n; i++) {
        size_t pl = strlen(dir) + strlen(names[i]) + 2;
        if (!(paths[i] = malloc(pl))) { rc = 1; break; }
        snprintf(paths[i], pl, "%s/%s", dir, names[i]);
    }
    dlp_dir_list_free(names, n);
    if (rc) {
        fprintf(stderr, "dlperf predict: out of memory\n");
    } else if (n == 0) {
        fprintf(stderr, "dlperf predict: no .onnx files in %s\n", dir);
        rc = 1;
    } else {
        char **out = calloc((size_t)n, sizeof *out);
        dir_job j = {ps, c, json, paths, out, 0};
        if (!out) {
            fprintf(stderr, "dlperf predict: out of memory\n");
            rc = 1;
        } else {
            dlp_parallel_each(jobs, n, dir_item, &j);
            for (int i = 0; i < n; i++) {
                if (out[i]) {
                    fputs(out[i], stdout);
                    if (json) fputc('\n', stdout);
                }
                free(out[i]);
            }
            free(out);
            int failed = atomic_load(&j.failed);
            if (failed) {
                fprintf(stderr, "dlperf predict: %d of %d models failed\n",
                        failed, n);
                rc = 1;
            }
        }
    }
    for (int i = 0; paths && i < n; i++) free(paths[i]);
    free(paths);
    return rc;
}

/* ---- main ---------------------------------------------------------------- */

int cmd_predict(int argc, char **argv) {
    cli_heap_hugepages();
    dlp_predict_config c;
    dlp_predict_config_init(&c);
    const char *model = NULL, *models_dir = NULL;
    bool json = false, best = false;
    long long jobs = sysconf(_SC_NPROCESSORS_ONLN);
    if (jobs < 1) jobs = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define NEED_VALUE()                                                         \
    do {                                                                     \
        if (!v || (v[0] == '-' && v[1] == '-')) {                            \
            fprintf(stderr, "dlperf predict: %s needs a value\n", a);        \
            return 2;                                                        \
        }                                                                    \
        i++;                                                                 \
    } while (0)
        long long n;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--json")) {
            json = true;
        } else if (!strcmp(a, "--best")) {
            best = true;
        } else if (!strcmp(a, "--device")) {
            NEED_VALUE();
            c.device = v;
        } else if (!strcmp(a, "--precision")) {
            NEED_VALUE();
            c.precision = v;
        } else if (!strcmp(a, "--runtime")) {
            NEED_VALUE();
            c.runtime = v;
        } else if (!strcmp(a, "--mode")) {
            NEED_VALUE();
            c.mode = v;
        } else if (!strcmp(a, "--mig")) {
            NEED_VALUE();
            c.mig = v;
        } else if (!strcmp(a, "--models")) {
            NEED_VALUE();
            models_dir = v;
        } else if (!strcmp(a, "--measured")) {
            NEED_VALUE();
            c.measured_dir = v;
        } else if (!strcmp(a, "--batch")) {
            NEED_VALUE();
            if (parse_i64(v, 1, 65536, &n)) {
                fprintf(stderr, "dlperf predict: --batch '%s' is not an "
                        "integer in 1..65536\n", v);
                return 2;
            }
            c.batch = n;
        } else if (!strcmp(a, "--sms")) {
            NEED_VALUE();
            if (parse_i64(v, 1, 100000, &n)) {
                fprintf(stderr, "dlperf predict: --sms '%s' is not a positive "
                        "integer\n", v);
                return 2;
            }
            c.sms = (int)n;
        } else if (!strcmp(a, "--jobs")) {
            NEED_VALUE();
            if (parse_i64(v, 1, 64, &n)) {
                fprintf(stderr, "dlperf predict: --jobs '%s' is not in "
                        "1..64\n", v);
                return 2;
            }
            jobs = n;
        } else if (!strcmp(a, "--slo-ms")) {
            NEED_VALUE();
            char *end;
            double x = strtod(v, &end);
            if (end == v || *end || !(x > 0) || x > 1e9) {
                fprintf(stderr, "dlperf predict: --slo-ms '%s' is not a "
                        "positive number of milliseconds\n", v);
                return 2;
            }
            c.slo_ms = x;
        } else if (!strcmp(a, "--host-us")) {
            NEED_VALUE();
            char *end;
            double x = strtod(v, &end);
            if (end == v || *end || !(x > 0) || !isfinite(x)) {
                fprintf(stderr, "dlperf predict: --host-us '%s' is not a "
                        "positive number of microseconds\n", v);
                return 2;
            }
            c.host_us = x;
        } else if (!strcmp(a, "--resolution")) {
            NEED_VALUE();
            if (parse_resolution(v, &c.height, &c.width)) {
                fprintf(stderr, "dlperf predict: --resolution wants R or HxW "
                        "with integers in 1..%d, got '%s'\n",
                        DLP_PREDICT_MAX_SIDE, v);
                return 2;
            }
        } else if (!strcmp(a, "--dim")) {
            NEED_VALUE();
            const char *eq = strchr(v, '=');
            if (!eq || eq == v || parse_i64(eq + 1, 1, 1LL << 31, &n)) {
                fprintf(stderr, "dlperf predict: --dim wants NAME=VALUE with "
                        "a positive integer, got '%s'\n", v);
                return 2;
            }
            if (c.n_dims == DLP_PREDICT_MAX_DIMS) {
                fprintf(stderr, "dlperf predict: at most %d --dim options\n",
                        DLP_PREDICT_MAX_DIMS);
                return 2;
            }
            size_t nl = (size_t)(eq - v);
            char *name = malloc(nl + 1);   /* lives until exit */
            if (!name) return 1;
            memcpy(name, v, nl);
            name[nl] = 0;
            c.dim_names[c.n_dims] = name;
            c.dim_values[c.n_dims++] = n;
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "dlperf predict: unknown option '%s'\n", a);
            usage(stderr);
            return 2;
        } else if (!model) {
            model = a;
        } else {
            fprintf(stderr, "dlperf predict: more than one model given ('%s', "
                    "'%s')\n", model, a);
            return 2;
        }
#undef NEED_VALUE
    }
    if (!model || !c.device) {
        fprintf(stderr, "dlperf predict: %s\n",
                !model ? "no model given" : "no --device given (e.g. h100)");
        usage(stderr);
        return 2;
    }
    char buf[PATH_MAX + 32];
    if (!models_dir) models_dir = cli_default_models(buf, sizeof buf);
    dlp_error err = {0};
    dlp_predictor_set *ps = NULL;
    if (dlp_predictor_open(models_dir, &ps, &err)) {
        fprintf(stderr, "dlperf predict: %s\n", err.msg);
        return 1;
    }
    dlp_predictor_set_best(ps, best);
    int rc = 0;
    struct stat st;
    if (stat(model, &st) == 0 && S_ISDIR(st.st_mode)) {
        c.skip_absent_dims = 1;   /* mixed models: bind dims where present */
        rc = predict_dir(ps, model, &c, json, (int)jobs);
    } else {
        char *line = NULL;
        if (predict_one(ps, model, &c, json, &line, &err)) {
            fprintf(stderr, "dlperf predict: %s\n", err.msg);
            rc = 1;
        } else {
            fputs(line, stdout);
            if (json) fputc('\n', stdout);
        }
        free(line);
    }
    dlp_predictor_close(ps);
    for (int i = 0; i < c.n_dims; i++) free((char *)c.dim_names[i]);
    return rc;
}
