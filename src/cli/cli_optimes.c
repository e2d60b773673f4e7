/*
 * cli_optimes.c — `dlperf inspect MODEL --device NAME`: the time of every
 * node as the predictors' features read it (the operator-time forests of
 * the shipped file of the mode; with --mode training a third of each
 * node's forward + backward in a step, dlp_optime_probes_read; computed
 * by dlp_optime_node_us), next to the roofline's
 * time alone: the sum, the share per op type and the slowest nodes. What
 * a diagnosis of one model's prediction starts from (docs/COST.md, "An
 * exported GroupNorm, as the probes record it").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_optimes.h"
#include "feat/feat.h"
#include "nn/nn.h"
#include "pred/pred_train.h"

typedef struct {
    const char *op;
    int count;
    double us, roof;
} type_row;

typedef struct {
    int node;
    double us;
} node_row;

static int cmp_type(const void *a, const void *b) {
    const type_row *x = a, *y = b;
    if (x->us != y->us) return x->us < y->us ? 1 : -1;
    return strcmp(x->op, y->op);
}

static int cmp_node(const void *a, const void *b) {
    const node_row *x = a, *y = b;
    if (x->us != y->us) return x->us < y->us ? 1 : -1;
    return x->node - y->node;
}

/* The per-op-type sums of us / roof over the graph's nodes into *rows
 * (sorted by time); their count, -1 when out of memory. */
static int type_rows(const dlp_graph *g, const double *us, const double *roof,
                     type_row **rows) {
    int n = 0;
    *rows = calloc(g->n_nodes ? g->n_nodes : 1, sizeof **rows);
    if (!*rows) return -1;
    for (size_t i = 0; i < g->n_nodes; i++) {
        const char *op = g->nodes[i].op_type;
        int r = 0;
        while (r < n && strcmp((*rows)[r].op, op)) r++;
        if (r == n) (*rows)[n++].op = op;
        (*rows)[r].count++;
        (*rows)[r].us += us[i];
        (*rows)[r].roof += roof[i];
    }
    qsort(*rows, (size_t)n, sizeof **rows, cmp_type);
    return n;
}

static void print_times(const dlp_graph *g, const dlp_pred_config *c,
                        const char *file, const double *us,
                        const double *roof, const type_row *types, int nt,
                        node_row *nodes, int top) {
    double sum = 0, rsum = 0;
    for (size_t i = 0; i < g->n_nodes; i++) {
        sum += us[i];
        rsum += roof[i];
        nodes[i] = (node_row){(int)i, us[i]};
    }
    printf("\n%s node times on %s, %s, %s runtime, batch %lld (forests of "
           "%s)\n", dlp_mode_name(c->mode), c->device.name,
           dlp_precision_name(c->precision), dlp_runtime_name(c->runtime),
           (long long)c->batch, file);
    printf("sum %.1f us (roofline alone %.1f us) over %zu nodes\n", sum, rsum,
           g->n_nodes);
    printf("\n%-24s %7s %12s %7s %12s\n", "op", "count", "time us", "time%",
           "roofline us");
    for (int r = 0; r < nt && (top <= 0 || r < top); r++)
        printf("%-24s %7d %12.1f %6.1f%% %12.1f\n", types[r].op, types[r].count,
               types[r].us, sum > 0 ? 100 * types[r].us / sum : 0.0,
               types[r].roof);
    qsort(nodes, g->n_nodes, sizeof *nodes, cmp_node);
    printf("\n%-56s %-22s %10s %12s\n", "node", "op", "time us", "roofline us");
    for (size_t k = 0; k < g->n_nodes && (top <= 0 || (int)k < top); k++) {
        const dlp_node *n = &g->nodes[nodes[k].node];
        const char *name = n->name && n->name[0] ? n->name : "(unnamed)";
        size_t len = strlen(name);
        printf("%s%-*s %-22s %10.1f %12.1f\n", len > 56 ? "..." : "",
               len > 56 ? 53 : 56, len > 56 ? name + len - 53 : name,
               n->op_type, nodes[k].us,
               roof[nodes[k].node]);
    }
}

int cli_print_op_times(const dlp_model *m, const dlp_pred_config *c,
                       const char *models_dir, int top) {
    char file[4096];
    snprintf(file, sizeof file, "%s/dippm-%s%s", models_dir,
             dlp_mode_name(c->mode), DLP_PRED_FILE_EXT);
    dlp_error err;
    dlp_nn_file f = {0};
    dlp_optime *ot = NULL;
    dlp_feat_graph fg;
    bool built = false;
    const dlp_graph *g = &m->graph;
    double *us = malloc((g->n_nodes ? g->n_nodes : 1) * sizeof *us);
    double *roof = malloc((g->n_nodes ? g->n_nodes : 1) * sizeof *roof);
    node_row *nodes = malloc((g->n_nodes ? g->n_nodes : 1) * sizeof *nodes);
    type_row *types = NULL;
    int rc = 1;
    if (!us || !roof || !nodes) {
        snprintf(err.msg, sizeof err.msg, "out of memory");
        goto out;
    }
    if (dlp_nn_file_load(&f, file, &err) || dlp_optime_load(&f, &ot, &err))
        goto out;
    if (!ot) {
        snprintf(err.msg, sizeof err.msg, "'%.400s' holds no operator times",
                 file);
        goto out;
    }
    if (dlp_feat_graph_build(&fg, g, c->batch, 0, 0, 0, &err)) goto out;
    built = true;
    if (dlp_optime_node_us(ot, &fg, c, us, roof, &err)) goto out;
    int nt = type_rows(g, us, roof, &types);
    if (nt < 0) {
        snprintf(err.msg, sizeof err.msg, "out of memory");
        goto out;
    }
    print_times(g, c, file, us, roof, types, nt, nodes, top);
    rc = 0;
out:
    if (rc) fprintf(stderr, "dlperf: %s\n", err.msg);
    if (built) dlp_feat_graph_free(&fg);
    dlp_optime_free(ot);
    dlp_nn_file_free(&f);
    free(us);
    free(roof);
    free(nodes);
    free(types);
    return rc;
}
