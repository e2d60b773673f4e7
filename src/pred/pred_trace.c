/* pred_trace.c — kernel traces as training data: the eager kernel traces of
 * kernels.csv.zst (rep 0, whole GPU and SM partitions; compiled traces are
 * not used) grouped per configuration, and each trace's kernel durations
 * attributed to the nodes of the configuration's analysed graph, so a
 * per-node latency model (pred_kern.c) can learn from them.
 *
 * Attribution rule (dlp_trace_attribute):
 *   - a kernel whose `nodes` column lists m nodes of the graph splits its
 *     duration among them in proportion to each node's roofline time at
 *     the trace's device and precision (equal shares when they are all 0).
 *     Roofline rather than equal shares: a kernel listing a MatMul and the
 *     Add of its bias, or a decomposed LayerNorm's seven nodes, spends its
 *     time where the work is; equal shares would give a 2-FLOP Add half of
 *     a GEMM's time, a target the node's own features cannot explain. The
 *     per-configuration sum is the same either way.
 *   - names absent from the graph are counted (dlp_examples.trace_unmatched)
 *     and ignored; a kernel none of whose names match is unmapped.
 *   - an unmapped kernel (mostly BatchNorm, folded into the Conv in the
 *     exported graph, elementwise and NCHW<->NHWC layout kernels, each
 *     launched right after or before the node it belongs to) is charged to
 *     the nodes of the nearest preceding mapped kernel in launch order
 *     (kernel_idx), else of the next one, split the same way.
 *   - rows with a duration <= 0 or not finite are dropped (counted).
 * The per-node times of a trace sum to the sum of its kept durations.
 */
#include "pred_train.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_kernel(const void *a, const void *b) {
    const dlp_trace_kernel *x = a, *y = b;
    return (x->idx > y->idx) - (x->idx < y->idx);
}

/* roofline weight of kernel j's matched nodes */
static double kernel_weight(const int *at, const int *ids, int j,
                            const double *weight) {
    double w = 0;
    for (int u = at[j]; weight && u < at[j + 1]; u++)
        w += weight[ids[u]] > 0 ? weight[ids[u]] : 0;
    return w;
}

dlp_status dlp_trace_attribute(dlp_trace_kernel *k, int n,
                               const char *const *names, int n_nodes,
                               const double *weight, dlp_trace_rule rule,
                               double *node_us, dlp_trace_stats *st,
                               dlp_error *err) {
    memset(st, 0, sizeof *st);
    for (int i = 0; i < n_nodes; i++) node_us[i] = 0;
    if (n <= 0)
        return dlp_fail(err, DLP_ERR_NOT_FOUND, "empty kernel trace");
    qsort(k, (size_t)n, sizeof *k, cmp_kernel);
    dlp_strmap map;
    if (!dlp_strmap_init(&map, (size_t)n_nodes + 16))
        return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    for (int i = 0; i < n_nodes; i++)
        if (names[i] && names[i][0] &&
            !dlp_strmap_put(&map, names[i], strlen(names[i]), i)) {
            dlp_strmap_free(&map);
            return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
        }
    /* matched node ids of kernel j: ids[at[j] .. at[j + 1]) */
    int *at = malloc((size_t)(n + 1) * sizeof *at);
    size_t cap = (size_t)n * 2 + 16, used = 0;
    int *ids = malloc(cap * sizeof *ids);
    signed char *keep = calloc((size_t)n, 1);
    dlp_status rc = DLP_OK;
    if (!at || !ids || !keep) rc = dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    for (int j = 0; j < n && !rc; j++) {
        at[j] = (int)used;
        keep[j] = isfinite(k[j].us) && k[j].us > 0;
        if (!keep[j]) { st->bad++; continue; }
        st->kernels++;
        for (const char *p = k[j].nodes; p && *p && !rc;) {
            const char *q = strchr(p, '|');
            size_t len = q ? (size_t)(q - p) : strlen(p);
            if (len) {
                st->names++;
                int id = dlp_strmap_get(&map, p, len);
                bool dup = false;
                for (size_t u = (size_t)at[j]; id >= 0 && u < used; u++)
                    dup |= ids[u] == id;
                if (id < 0) st->unmatched++;
                else if (!dup) {
                    if (used == cap) {
                        int *g = realloc(ids, 2 * cap * sizeof *g);
                        if (!g) { rc = dlp_fail(err, DLP_ERR_NOMEM, "out of memory"); break; }
                        ids = g;
                        cap *= 2;
                    }
                    ids[used++] = id;
                }
            }
            p = q ? q + 1 : NULL;
        }
    }
    if (!rc) at[n] = (int)used;
    /* the mapped kernel each kept kernel is charged to: itself, else the
     * nearest preceding mapped one, else the next one */
    int prev = -1;
    for (int j = 0; j < n && !rc; j++) {
        if (!keep[j]) continue;
        int owner = at[j + 1] > at[j] ? j : prev;
        if (owner != j && (owner < 0 || rule == DLP_TRACE_HEAVIER)) {
            int next = -1;
            for (int u = j + 1; u < n && next < 0; u++)
                if (keep[u] && at[u + 1] > at[u]) next = u;
            if (owner < 0 ||
                (next >= 0 && kernel_weight(at, ids, next, weight) >
                                  kernel_weight(at, ids, owner, weight)))
                owner = next;
        }
        if (owner < 0) {
            rc = dlp_fail(err, DLP_ERR_NOT_FOUND, "no kernel of the trace "
                          "names a node of the graph (%d kernels)", n);
            break;
        }
        if (owner == j) prev = j;
        else st->unmapped++;
        double wsum = kernel_weight(at, ids, owner, weight);
        int m = at[owner + 1] - at[owner];
        for (int u = at[owner]; u < at[owner + 1]; u++) {
            double share = wsum > 0 ? (weight[ids[u]] > 0 ? weight[ids[u]] : 0) / wsum
                                    : 1.0 / m;
            node_us[ids[u]] += k[j].us * share;
        }
        st->total_us += k[j].us;
    }
    free(at);
    free(ids);
    free(keep);
    dlp_strmap_free(&map);
    return rc;
}

/* ---- building the set ----------------------------------------------------- */

dlp_status dlp_traces_collect(dlp_examples *E, const dlp_dataset *ds,
                              const dlp_examples_opts *o,
                              dlp_trace_slot_fn slot_of, dlp_error *err) {
    dlp_dataset_counts cnt;
    dlp_dataset_get_counts(ds, &cnt);
    if (!cnt.kernels) return DLP_OK;
    int32_t *which = malloc(cnt.kernels * sizeof *which);  /* trace of row */
    dlp_strmap keys;
    dlp_arena arena = {0};
    if (!which || !dlp_strmap_init(&keys, 1024)) {
        free(which);
        return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    }
    dlp_status st = DLP_OK;
    /* DLP_TRACE_HEAVIER gave the same held-out kernel-sum error (29.2%
     * vs 29.1%, docs/EVAL.md "Results, fourth session: kern") */
    E->trace_rule = DLP_TRACE_PRECEDING;
    int last = -1;
    const dlp_kernel_row *last_row = NULL;
    for (size_t i = 0; i < cnt.kernels && !st; i++) {
        const dlp_kernel_row *r = dlp_dataset_kernel(ds, i);
        which[i] = -1;
        if (!r->mode || strcmp(r->mode, "eager") || r->c.rep != 0 ||
            !r->c.hash || !r->c.device || !r->precision)
            continue;
        if (o->device && strcmp(o->device, r->c.device)) continue;
        /* rows of one trace are consecutive in the files: reuse the last
         * key when nothing of it changed */
        if (last >= 0 && last_row && last_row->c.hash == r->c.hash &&
            last_row->c.device == r->c.device &&
            last_row->precision == r->precision && last_row->sms == r->sms &&
            last_row->batch == r->batch && last_row->seq == r->seq &&
            last_row->height == r->height && last_row->width == r->width) {
            which[i] = last;
            E->trace[last].n_rows++;
            continue;
        }
        dlp_precision prec;
        dlp_error e2;
        if (dlp_precision_parse(r->precision, &prec, &e2)) continue;
        if (o->precision >= 0 && (int)prec != o->precision) continue;
        char key[256];
        int kl = snprintf(key, sizeof key, "%s|%s|%d|%lld|%lld|%lld|%lld|%lld",
                          r->c.hash, r->c.device, (int)prec,
                          (long long)r->batch, (long long)r->seq,
                          (long long)r->height, (long long)r->width,
                          (long long)r->sms);
        if (kl <= 0 || kl >= (int)sizeof key) continue;
        int t = dlp_strmap_get(&keys, key, (size_t)kl);
        if (t < 0) {
            const dlp_graph_info *gi = dlp_dataset_find_graph(ds, r->c.hash);
            dlp_device dev;
            if (!gi || dlp_device_find(r->c.device, &dev, &e2)) continue;
            if (r->sms < 0 || (dev.sm_count > 0 && r->sms > dev.sm_count))
                continue;
            if (E->n_trace == E->cap_trace) {
                int nc = E->cap_trace ? 2 * E->cap_trace : 64;
                dlp_trace *a = realloc(E->trace, (size_t)nc * sizeof *a);
                if (!a) { st = dlp_fail(err, DLP_ERR_NOMEM, "out of memory"); break; }
                E->trace = a;
                E->cap_trace = nc;
            }
            t = E->n_trace++;
            dlp_trace *x = &E->trace[t];
            memset(x, 0, sizeof *x);
            dlp_pred_config_init(&x->cfg);
            x->cfg.device = dev;
            x->cfg.mode = DLP_MODE_INFERENCE;
            x->cfg.precision = prec;
            x->cfg.runtime = DLP_RT_EAGER;
            x->cfg.batch = r->batch > 0 ? r->batch : 1;
            x->cfg.seq = r->seq;
            x->cfg.height = r->height;
            x->cfg.width = r->width;
            x->cfg.sms = (int)r->sms;
            x->model = dlp_examples_intern(&E->models, &E->n_models, gi->model);
            x->family = dlp_examples_intern(&E->families, &E->n_families, gi->family);
            x->fg = slot_of(E, r->c.hash, x->cfg.batch, r->seq, r->height,
                            r->width);
            char *k = dlp_arena_strndup(&arena, key, (size_t)kl);
            if (x->model < 0 || x->family < 0 || x->fg < 0 || !k ||
                !dlp_strmap_put(&keys, k, (size_t)kl, t)) {
                st = dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
                break;
            }
        }
        which[i] = t;
        E->trace[t].n_rows++;
        last = t;
        last_row = r;
    }
    /* group the rows per trace (counting sort) */
    int64_t total = 0;
    for (int t = 0; t < E->n_trace; t++) {
        E->trace[t].rows_at = total;
        total += E->trace[t].n_rows;
        E->trace[t].n_rows = 0;
    }
    if (!st && total) {
        E->trace_rows = malloc((size_t)total * sizeof *E->trace_rows);
        if (!E->trace_rows) st = dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
        for (size_t i = 0; i < cnt.kernels && !st; i++) {
            if (which[i] < 0) continue;
            dlp_trace *x = &E->trace[which[i]];
            E->trace_rows[x->rows_at + x->n_rows++] = (int32_t)i;
        }
        E->n_trace_rows = total;
    }
    free(which);
    dlp_strmap_free(&keys);
    dlp_arena_free(&arena);
    return st;
}

dlp_status dlp_traces_attribute_slot(dlp_examples *E, const dlp_dataset *ds,
                                     int f, const dlp_graph *g,
                                     dlp_error *err) {
    const dlp_feat_graph *fg = &E->fg[f];
    int N = fg->n_nodes;
    bool any = false;
    for (int t = 0; t < E->n_trace && !any; t++) any = E->trace[t].fg == f;
    if (!any) return DLP_OK;
    if ((size_t)N != g->n_nodes)
        return dlp_fail(err, DLP_ERR_ARG, "trace attribution: graph has %zu "
                        "nodes, its features %d", g->n_nodes, N);
    const char **names = malloc((size_t)(N ? N : 1) * sizeof *names);
    double *w = malloc((size_t)(N ? N : 1) * sizeof *w);
    double *us = malloc((size_t)(N ? N : 1) * sizeof *us);
    dlp_status st = DLP_OK;
    if (!names || !w || !us) st = dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    for (int i = 0; i < N && !st; i++) names[i] = g->nodes[i].name;
    for (int t = 0; t < E->n_trace && !st; t++) {
        dlp_trace *x = &E->trace[t];
        if (x->fg != f || x->node_us) continue;
        dlp_trace_kernel *k = malloc((size_t)(x->n_rows ? x->n_rows : 1) * sizeof *k);
        if (!k) { st = dlp_fail(err, DLP_ERR_NOMEM, "out of memory"); break; }
        for (int j = 0; j < x->n_rows; j++) {
            const dlp_kernel_row *r = dlp_dataset_kernel(ds, (size_t)E->trace_rows[x->rows_at + j]);
            k[j].idx = r->kernel_idx;
            k[j].us = r->duration_us;
            k[j].nodes = r->nodes;
        }
        dlp_feat_node_roofline_us(fg, &x->cfg, w);
        dlp_trace_stats s;
        dlp_error e2;
        dlp_status a = dlp_trace_attribute(k, x->n_rows, names, N, w,
                                           E->trace_rule, us, &s, &e2);
        free(k);
        if (a == DLP_ERR_NOMEM) { st = dlp_fail(err, a, "%s", e2.msg); break; }
        if (a) continue;   /* nothing maps: dropped in dlp_traces_finish */
        x->node_us = malloc((size_t)(N ? N : 1) * sizeof *x->node_us);
        if (!x->node_us) { st = dlp_fail(err, DLP_ERR_NOMEM, "out of memory"); break; }
        for (int i = 0; i < N; i++) x->node_us[i] = (float)us[i];
        x->kernel_us = s.total_us;
        x->n_kernels = s.kernels;
        x->n_bad = s.bad;
        x->n_unmapped = s.unmapped;
        x->n_names = s.names;
        x->n_unmatched = s.unmatched;
    }
    free(names);
    free(w);
    free(us);
    return st;
}

void dlp_traces_finish(dlp_examples *E, const bool *bad_fg) {
    int k = 0;
    for (int t = 0; t < E->n_trace; t++) {
        dlp_trace *x = &E->trace[t];
        if (!x->node_us || (bad_fg && bad_fg[x->fg]) || !(x->kernel_us > 0)) {
            free(x->node_us);
            E->n_trace_dropped++;
            continue;
        }
        E->trace_names += x->n_names;
        E->trace_unmatched += x->n_unmatched;
        x->rows_at = 0;
        x->n_rows = 0;
        E->trace[k++] = *x;
    }
    E->n_trace = k;
    free(E->trace_rows);
    E->trace_rows = NULL;
    E->n_trace_rows = 0;
}

void dlp_traces_free(dlp_examples *E) {
    for (int t = 0; t < E->n_trace; t++) free(E->trace[t].node_us);
    free(E->trace);
    free(E->trace_rows);
    E->trace = NULL;
    E->trace_rows = NULL;
    E->n_trace = E->cap_trace = 0;
}
