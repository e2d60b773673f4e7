/*
 * cmd_inspect.c — `dlperf inspect MODEL`: reads an ONNX graph, infers its
 * shapes and prints its size and cost: a summary and a per-operator-type
 * table, or with --json the whole analysed graph (dlp_model_to_json);
 * with --device the node times the predictors read (cli_optimes.c).
 * Warnings go to stderr. Exit status: 0 ok, 1 model error, 2 usage error.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_optimes.h"

#define MAX_DIMS 64

static const char *usage_text =
    "usage: dlperf inspect MODEL.onnx [--dim NAME=V]... [--batch N] [--json]\n"
    "                     [--top K] [--device NAME [--precision P]\n"
    "                     [--runtime R] [--mode M] [--models DIR]\n"
    "                     [--measured DIR]]\n"
    "\n"
    "Reads an ONNX model without running it: shapes, parameters, MACs, FLOPs,\n"
    "activation memory. External weight files may be absent.\n"
    "\n"
    "  --dim NAME=V  bind the symbolic dimension NAME (e.g. seq=128)\n"
    "  --batch N     bind the first dimension of every input to N\n"
    "  --json        print the analysed graph as JSON (summary, nodes,\n"
    "                warnings) instead of the tables\n"
    "  --top K       rows of the per-operator table (default 15, 0 = all)\n"
    "  --device NAME also print every node's time on that GPU as the\n"
    "                predictors read it (the operator-time forests of\n"
    "                DIR/dippm-<mode>.dlpm) next to the roofline's: the\n"
    "                sum, the op types and the slowest --top nodes\n"
    "  --precision P fp32 (default), fp16 or bf16, with --device\n"
    "  --runtime R   graph (default) or eager, with --device\n"
    "  --mode M      inference (default), training or llm, with\n"
    "                --device: that mode's file; in training a node's\n"
    "                time is a third of its forward + backward in a\n"
    "                step (the forward's scale, as the features read it)\n"
    "  --models DIR  trained predictors (default: the repository's models/)\n"
    "  --measured DIR measured device figures (data/devices)\n"
    "  -h, --help    this text\n";

static int usage_error(const char *fmt, const char *arg) {
    fprintf(stderr, "dlperf: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, " (see 'dlperf inspect --help')\n");
    return 2;
}

/* Parses a positive decimal int64; false on junk, overflow or <= 0. */
static bool parse_pos(const char *s, int64_t *out) {
    if (!s || !*s) return false;
    errno = 0;
    char *end = NULL;
    long long v = strtoll(s, &end, 10);
    if (errno || *end || v <= 0) return false;
    *out = (int64_t)v;
    return true;
}

static void human(char *buf, size_t n, double v, const char *unit) {
    const char *pre[] = {"", "K", "M", "G", "T", "P"};
    int i = 0;
    while (v >= 1000 && i < 5) {
        v /= 1000;
        i++;
    }
    snprintf(buf, n, i ? "%.3f %s%s" : "%.0f %s%s", v, pre[i], unit);
}

static void bytes_h(char *buf, size_t n, double v) {
    const char *pre[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int i = 0;
    while (v >= 1024 && i < 4) {
        v /= 1024;
        i++;
    }
    snprintf(buf, n, i ? "%.2f %s" : "%.0f %s", v, pre[i]);
}

typedef struct {
    const char *op;
    long count;
    double macs, flops;
} op_row;

static int cmp_rows(const void *a, const void *b) {
    const op_row *x = a, *y = b;
    if (x->flops != y->flops) return x->flops < y->flops ? 1 : -1;
    if (x->macs != y->macs) return x->macs < y->macs ? 1 : -1;
    return strcmp(x->op, y->op);
}

/* Prints the per-op-type table (dlp_model_op_stats). */
static int print_ops(const dlp_model *m, const dlp_summary *s, int top) {
    dlp_error err;
    dlp_op_stat *st = NULL;
    int nrows = 0;
    if (dlp_model_op_stats(m, &st, &nrows, &err) != DLP_OK) {
        fprintf(stderr, "dlperf: %s\n", err.msg);
        return 1;
    }
    op_row *rows = calloc(nrows ? (size_t)nrows : 1, sizeof *rows);
    if (!rows) {
        free(st);
        fprintf(stderr, "dlperf: out of memory\n");
        return 1;
    }
    for (int r = 0; r < nrows; r++) {
        rows[r].op = st[r].op;
        rows[r].count = (long)st[r].count;
        rows[r].macs = st[r].macs;
        rows[r].flops = st[r].flops;
    }
    qsort(rows, (size_t)nrows, sizeof *rows, cmp_rows);
    int shown = top > 0 && top < nrows ? top : nrows;
    printf("\n%-24s %7s %14s %14s %7s\n", "op", "count", "MACs", "FLOPs",
           "FLOPs%");
    char a[32], b[32];
    for (int r = 0; r < shown; r++) {
        human(a, sizeof a, rows[r].macs, "");
        human(b, sizeof b, rows[r].flops, "");
        printf("%-24s %7ld %14s %14s %6.1f%%\n", rows[r].op, rows[r].count, a,
               b, s->flops > 0 ? 100.0 * rows[r].flops / s->flops : 0.0);
    }
    if (shown < nrows) {
        op_row o = {"(other)", 0, 0, 0};
        for (int r = shown; r < nrows; r++) {
            o.count += rows[r].count;
            o.macs += rows[r].macs;
            o.flops += rows[r].flops;
        }
        human(a, sizeof a, o.macs, "");
        human(b, sizeof b, o.flops, "");
        printf("%-24s %7ld %14s %14s %6.1f%%\n", o.op, o.count, a, b,
               s->flops > 0 ? 100.0 * o.flops / s->flops : 0.0);
    }
    free(rows);
    free(st);
    return 0;
}

static void print_summary(const char *path, const dlp_summary *s) {
    char b1[32], b2[32];
    printf("file                %s\n", path);
    printf("opset               %d\n", s->opset);
    printf("nodes               %" PRId64 "\n", s->nodes);
    printf("edges               %" PRId64 "\n", s->edges);
    printf("tensors             %" PRId64 "\n", s->tensors);
    human(b1, sizeof b1, (double)s->params, "");
    printf("params              %" PRId64 " (%s)\n", s->params, b1);
    bytes_h(b1, sizeof b1, (double)s->weight_bytes);
    printf("weight bytes        %" PRId64 " (%s)\n", s->weight_bytes, b1);
    human(b1, sizeof b1, s->macs, "MAC");
    human(b2, sizeof b2, s->flops, "FLOP");
    printf("MACs                %.0f (%s)\n", s->macs, b1);
    printf("FLOPs               %.0f (%s)\n", s->flops, b2);
    bytes_h(b1, sizeof b1, (double)s->activation_bytes);
    printf("activation bytes    %" PRId64 " (%s)\n", s->activation_bytes, b1);
    bytes_h(b1, sizeof b1, (double)s->peak_activation_bytes);
    printf("peak activations    %" PRId64 " (%s)\n", s->peak_activation_bytes,
           b1);
    printf("unshaped tensors    %" PRId64 "\n", s->unshaped_tensors);
}

/* With --device and no --batch: the batch as exported (*cfg_batch, the
 * first input's first dimension when fixed) and -1, or 1 to bind when an
 * input's batch is an unbound symbol (predict's default). */
static int64_t default_batch(const dlp_model *m, int64_t *cfg_batch) {
    const dlp_graph *g = &m->graph;
    for (size_t i = 0; i < g->n_inputs; i++) {
        int sym = dlp_graph_input_batch_sym(g, i);
        if (sym >= 0 && g->sym_values[sym] < 0) return *cfg_batch = 1;
    }
    for (size_t i = 0; i < g->n_inputs; i++) {
        const dlp_shape *s = &g->values[g->inputs[i]].shape;
        if (s->rank >= 1 && s->dims[0].value > 0) {
            *cfg_batch = s->dims[0].value;
            break;
        }
    }
    return -1;
}

int cmd_inspect(int argc, char **argv) {
    cli_heap_hugepages();   /* a one-shot process: cli_heap.c */
    const char *path = NULL;
    const char *dim_name[MAX_DIMS];
    int64_t dim_val[MAX_DIMS];
    int n_dims = 0;
    int64_t batch = -1;
    int64_t top = 15;
    bool json = false;
    static char namebuf[MAX_DIMS][128];
    const char *device = NULL, *prec = "fp32", *rt = "graph";
    const char *mode = "inference";
    const char *models_dir = NULL, *measured = NULL;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(usage_text, stdout);
            return 0;
        } else if (!strcmp(a, "--json")) {
            json = true;
        } else if (!strcmp(a, "--device") || !strcmp(a, "--precision") ||
                   !strcmp(a, "--runtime") || !strcmp(a, "--models") ||
                   !strcmp(a, "--measured") || !strcmp(a, "--mode")) {
            if (i + 1 >= argc) return usage_error("%s needs a value", a);
            const char *v = argv[++i];
            if (!strcmp(a, "--device")) device = v;
            else if (!strcmp(a, "--precision")) prec = v;
            else if (!strcmp(a, "--runtime")) rt = v;
            else if (!strcmp(a, "--models")) models_dir = v;
            else if (!strcmp(a, "--mode")) mode = v;
            else measured = v;
        } else if (!strcmp(a, "--dim") || !strcmp(a, "--batch") ||
                   !strcmp(a, "--top")) {
            if (i + 1 >= argc) return usage_error("%s needs a value", a);
            const char *v = argv[++i];
            if (!strcmp(a, "--batch")) {
                if (!parse_pos(v, &batch))
                    return usage_error("--batch wants a positive integer, "
                                       "got '%s'", v);
            } else if (!strcmp(a, "--top")) {
                if (!strcmp(v, "0")) top = 0;
                else if (!parse_pos(v, &top))
                    return usage_error("--top wants a count, got '%s'", v);
            } else {
                const char *eq = strchr(v, '=');
                if (!eq || eq == v)
                    return usage_error("--dim wants NAME=VALUE, got '%s'", v);
                if (n_dims == MAX_DIMS)
                    return usage_error("too many --dim options (%s)", v);
                size_t len = (size_t)(eq - v);
                if (len >= sizeof namebuf[0])
                    return usage_error("--dim name too long: '%s'", v);
                if (!parse_pos(eq + 1, &dim_val[n_dims]))
                    return usage_error("--dim wants a positive integer "
                                       "value, got '%s'", v);
                memcpy(namebuf[n_dims], v, len);
                namebuf[n_dims][len] = '\0';
                dim_name[n_dims] = namebuf[n_dims];
                n_dims++;
            }
        } else if (a[0] == '-' && a[1]) {
            return usage_error("unknown option '%s'", a);
        } else if (path) {
            return usage_error("more than one model given ('%s')", a);
        } else {
            path = a;
        }
    }
    if (!path) return usage_error("%s", "no model file given");
    if (json && device)
        return usage_error("%s", "--device prints tables; drop --json");
    dlp_pred_config c;
    dlp_pred_config_init(&c);
    if (device) {
        dlp_error e;
        if (dlp_precision_parse(prec, &c.precision, &e) ||
            dlp_runtime_parse(rt, &c.runtime, &e) ||
            dlp_mode_parse(mode, &c.mode, &e))
            return usage_error("%s", e.msg);
        if (dlp_device_load(device, measured, &c.device, &e)) {
            fprintf(stderr, "dlperf: %s\n", e.msg);
            return 1;
        }
        c.batch = batch > 0 ? batch : 1;
        if (dlp_pred_config_check(&c, &e)) {
            fprintf(stderr, "dlperf: %s\n", e.msg);
            return 1;
        }
    }

    dlp_error err;
    dlp_model *m = NULL;
    int rc = 1;
    char *text = NULL;
    if (dlp_model_open(path, &m, &err) != DLP_OK) goto fail;
    if (dlp_model_check_binds(m, batch > 0 ? batch : -1, n_dims, dim_name,
                              dim_val, &err) != DLP_OK)
        goto fail;
    for (int i = 0; i < n_dims; i++)
        if (dlp_model_bind_dim(m, dim_name[i], dim_val[i], &err) != DLP_OK)
            goto fail;
    if (device && batch <= 0) batch = default_batch(m, &c.batch);
    if (batch > 0 && dlp_model_set_batch(m, batch, &err) != DLP_OK) goto fail;
    if (dlp_model_analyze(m, &err) != DLP_OK) goto fail;
    if (json && dlp_model_to_json(m, &text, &err) != DLP_OK) goto fail;
    for (int i = 0; i < dlp_model_warning_count(m); i++)
        fprintf(stderr, "dlperf: warning: %s\n", dlp_model_warning(m, i));
    if (json) {
        fputs(text, stdout);
        fputc('\n', stdout);
        rc = 0;
    } else {
        dlp_summary s;
        if (dlp_model_summary(m, &s) != DLP_OK) {
            snprintf(err.msg, sizeof err.msg, "cannot summarise '%s'", path);
            goto fail;
        }
        print_summary(path, &s);
        rc = print_ops(m, &s, (int)(top > 100000 ? 100000 : top));
        if (!rc && device) {
            char buf[4096];
            rc = cli_print_op_times(m, &c, models_dir ? models_dir
                                          : cli_default_models(buf, sizeof buf),
                                    (int)(top > 100000 ? 100000 : top));
        }
    }
    free(text);
    dlp_model_free(m);
    return rc;
fail:
    fprintf(stderr, "dlperf: %s\n", err.msg);
    free(text);
    dlp_model_free(m);
    return 1;
}
