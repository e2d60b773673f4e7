/*
 * analyze.c — the analysis stage of a dlp_model: shape inference then the
 * cost model (dlp_model_analyze), the whole-model totals (dlp_model_summary)
 * and the JSON form of the analysed graph (dlp_model_to_json, printed by
 * `dlperf inspect --json`, written without a JSON library for speed).
 *
 * Counting rules (docs/COST.md): every graph and subgraph value is counted
 * once where it is declared (values captured from an enclosing scope are
 * counted in that scope); attribute tensors are not graph values.
 */
#include "model.h"
#include "../cost/cost.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A named value of g that this graph declares (not an attribute tensor,
 * not a capture of an enclosing scope's value). */
static bool declared(const dlp_value *v) {
    return v->name[0] != '\0' && !(v->flags & DLP_V_OUTER);
}

static int64_t value_bytes(const dlp_value *v) {
    int64_t n = 0, b = 0;
    if (!dlp_shape_numel(&v->shape, &n)) return 0;
    if (!dlp_mul_i64(n, (int64_t)dlp_dtype_size(v->dtype), &b)) return INT64_MAX;
    return b;
}

static int64_t init_bytes(const dlp_value *v) {
    return v->stored_bytes > 0 ? v->stored_bytes : value_bytes(v);
}

/* Activations: declared, non-initializer values not made by a Constant. */
static bool is_activation(const dlp_graph *g, const dlp_value *v) {
    if (!declared(v) || (v->flags & DLP_V_INITIALIZER)) return false;
    if (v->producer >= 0 &&
        !strcmp(g->nodes[v->producer].op_type, "Constant"))
        return false;
    return true;
}

static void sat_add(int64_t *acc, int64_t x) {
    if (!dlp_add_i64(*acc, x, acc)) *acc = INT64_MAX;
}

/* Totals of g and its subgraphs, except peak and opset. */
static void summarize(const dlp_graph *g, dlp_summary *s) {
    for (size_t i = 0; i < g->n_values; i++) {
        const dlp_value *v = &g->values[i];
        if (!declared(v)) continue;
        s->tensors++;
        if (v->flags & DLP_V_INITIALIZER) {
            sat_add(&s->weight_bytes, init_bytes(v));
            int64_t n = 0;
            if (dlp_dtype_is_float(v->dtype) && dlp_shape_numel(&v->shape, &n))
                sat_add(&s->params, n);
            continue;
        }
        if (!dlp_shape_known(&v->shape)) s->unshaped_tensors++;
        else if (is_activation(g, v))
            sat_add(&s->activation_bytes, value_bytes(v));
    }
    for (size_t i = 0; i < g->n_nodes; i++) {
        const dlp_node *n = &g->nodes[i];
        s->nodes++;
        s->macs += n->cost.macs;
        s->flops += n->cost.flops;
        /* edges: distinct (tensor, consumer) pairs with a producing node */
        for (int k = 0; k < n->n_inputs; k++) {
            int v = n->inputs[k];
            if (v < 0 || g->values[v].producer < 0) continue;
            bool dup = false;
            for (int j = 0; j < k && !dup; j++) dup = n->inputs[j] == v;
            if (!dup) s->edges++;
        }
        for (int a = 0; a < n->n_attrs; a++)
            if (n->attrs[a].graph)
                summarize(n->attrs[a].graph, s);
    }
}

/* Marks in last[] the main-graph values that subgraph `sub` (nested in the
 * node at topo position pos) reads from outside. */
static void mark_captures(const dlp_graph *main, const dlp_graph *sub,
                          int pos, int *last) {
    for (size_t i = 0; i < sub->n_values; i++) {
        const dlp_value *v = &sub->values[i];
        if (!(v->flags & DLP_V_OUTER)) continue;
        int w = dlp_graph_find(main, v->name);
        if (w >= 0 && last[w] < pos) last[w] = pos;
    }
    for (size_t i = 0; i < sub->n_nodes; i++)
        for (int a = 0; a < sub->nodes[i].n_attrs; a++)
            if (sub->nodes[i].attrs[a].graph)
                mark_captures(main, sub->nodes[i].attrs[a].graph, pos, last);
}

/* Peak of live activation bytes over the main graph in topological order:
 * a tensor is live from its producer until its last consumer (a node whose
 * subgraph reads it counts as a consumer); graph inputs from the start;
 * graph outputs until the end. Deaths are bucketed by position (CSR). */
static dlp_status peak_bytes(const dlp_graph *g, int64_t *peak) {
    *peak = 0;
    size_t nv = g->n_values, nn = g->n_nodes;
    if (!g->topo && nn) return DLP_ERR_GRAPH;
    int *last = malloc((nv ? nv : 1) * sizeof *last);
    int64_t *bytes = malloc((nv ? nv : 1) * sizeof *bytes); /* -1: not an
                                                               activation */
    int *head = calloc(nn + 2, sizeof *head);
    int *dies = malloc((nv ? nv : 1) * sizeof *dies);
    if (!last || !bytes || !head || !dies) {
        free(last); free(bytes); free(head); free(dies);
        return DLP_ERR_NOMEM;
    }
    for (size_t i = 0; i < nv; i++) {
        last[i] = -1;
        bytes[i] = is_activation(g, &g->values[i])
                       ? value_bytes(&g->values[i]) : -1;
    }
    for (size_t t = 0; t < nn; t++) {
        const dlp_node *n = &g->nodes[g->topo[t]];
        for (int k = 0; k < n->n_inputs; k++)
            if (n->inputs[k] >= 0) last[n->inputs[k]] = (int)t;
        for (int a = 0; a < n->n_attrs; a++)
            if (n->attrs[a].graph)
                mark_captures(g, n->attrs[a].graph, (int)t, last);
    }
    for (size_t i = 0; i < g->n_outputs; i++) last[g->outputs[i]] = (int)nn;
    /* a value produced but never read dies right where it is produced */
    for (size_t t = 0; t < nn; t++) {
        const dlp_node *n = &g->nodes[g->topo[t]];
        for (int k = 0; k < n->n_outputs; k++)
            if (n->outputs[k] >= 0 && last[n->outputs[k]] < 0)
                last[n->outputs[k]] = (int)t;
    }
    /* bucket activations by the position after which they die (CSR) */
    for (size_t i = 0; i < nv; i++)
        if (last[i] >= 0 && last[i] < (int)nn && bytes[i] >= 0)
            head[last[i] + 1]++;
    for (size_t t = 0; t < nn + 1; t++) head[t + 1] += head[t];
    for (size_t i = 0; i < nv; i++)
        if (last[i] >= 0 && last[i] < (int)nn && bytes[i] >= 0)
            dies[head[last[i]]++] = (int)i;
    /* head[t] now ends bucket t; bucket t starts at head[t-1] (0 for t 0) */
    int64_t live = 0, best = 0;
    for (size_t i = 0; i < g->n_inputs; i++)
        if (bytes[g->inputs[i]] > 0) sat_add(&live, bytes[g->inputs[i]]);
    best = live;
    for (size_t t = 0; t < nn; t++) {
        const dlp_node *n = &g->nodes[g->topo[t]];
        for (int k = 0; k < n->n_outputs; k++) {
            int v = n->outputs[k];
            if (v >= 0 && bytes[v] > 0) sat_add(&live, bytes[v]);
        }
        if (live > best) best = live;
        for (int e = t ? head[t - 1] : 0; e < head[t]; e++)
            live -= bytes[dies[e]];
    }
    free(last);
    free(bytes);
    free(head);
    free(dies);
    *peak = best;
    return DLP_OK;
}

static void warn_unshaped(dlp_model *m, const dlp_graph *g, int64_t *count,
                          const char **first) {
    for (size_t i = 0; i < g->n_values; i++) {
        const dlp_value *v = &g->values[i];
        if (!declared(v) || (v->flags & DLP_V_INITIALIZER)) continue;
        if (!dlp_shape_known(&v->shape)) {
            if (!*first) *first = v->name;
            (*count)++;
        }
    }
    for (size_t i = 0; i < g->n_nodes; i++) {
        const dlp_node *n = &g->nodes[i];
        if (!dlp_cost_op_known(n->domain, n->op_type))
            dlp_warn(&m->warnings,
                     "no cost formula for op '%s%s%s': its MACs and FLOPs "
                     "count as 0", n->domain, n->domain[0] ? "." : "",
                     n->op_type);
        for (int a = 0; a < n->n_attrs; a++)
            if (n->attrs[a].graph) warn_unshaped(m, n->attrs[a].graph, count, first);
    }
}

dlp_status dlp_model_analyze(dlp_model *m, dlp_error *err) {
    if (!m) return dlp_fail(err, DLP_ERR_ARG, "dlp_model_analyze: model is NULL");
    dlp_status st = dlp_shape_infer(&m->graph, &m->warnings, err);
    if (st != DLP_OK) return st;
    dlp_cost_graph(&m->graph);
    int64_t unshaped = 0;
    const char *first = NULL;
    warn_unshaped(m, &m->graph, &unshaped, &first);
    if (unshaped) {
        /* name the symbols still unbound: usually the reason */
        char syms[256] = "";
        size_t len = 0;
        for (size_t i = 0; i < m->graph.n_syms && len + 4 < sizeof syms; i++) {
            if (m->graph.sym_values[i] >= 0) continue;
            int k = snprintf(syms + len, sizeof syms - len, "%s'%s'",
                             len ? ", " : "", m->graph.syms[i]);
            if (k < 0 || (size_t)k >= sizeof syms - len) break;
            len += (size_t)k;
        }
        dlp_warn(&m->warnings,
                 "%lld tensor(s) have unknown shapes (first: '%s'); their "
                 "costs count as 0%s%s%s", (long long)unshaped, first,
                 len ? "; unbound symbolic dims: " : "", syms,
                 len ? " (bind them before analysis)" : "");
    }
    m->analyzed = true;
    return DLP_OK;
}

dlp_status dlp_model_summary(const dlp_model *m, dlp_summary *out) {
    if (!m || !out) return DLP_ERR_ARG;
    memset(out, 0, sizeof *out);
    if (!m->analyzed) return DLP_ERR_ARG;
    summarize(&m->graph, out);
    out->opset = m->graph.opset;
    dlp_status st = peak_bytes(&m->graph, &out->peak_activation_bytes);
    return st;
}

/* ---- per-op-type totals ---- */
typedef struct {
    dlp_op_stat *rows;
    size_t n, cap;
    dlp_strmap index; /* op type -> row */
    bool oom;
} op_acc;

static void op_stats_walk(const dlp_graph *g, op_acc *acc) {
    for (size_t i = 0; i < g->n_nodes && !acc->oom; i++) {
        const dlp_node *n = &g->nodes[i];
        size_t len = strlen(n->op_type);
        int r = dlp_strmap_get(&acc->index, n->op_type, len);
        if (r < 0) {
            if (!dlp_grow((void **)&acc->rows, &acc->cap, acc->n + 1,
                          sizeof *acc->rows) ||
                !dlp_strmap_put(&acc->index, n->op_type, len, (int)acc->n)) {
                acc->oom = true;
                return;
            }
            r = (int)acc->n++;
            acc->rows[r] = (dlp_op_stat){n->op_type, 0, 0, 0};
        }
        acc->rows[r].count++;
        acc->rows[r].macs += n->cost.macs;
        acc->rows[r].flops += n->cost.flops;
        for (int a = 0; a < n->n_attrs; a++)
            if (n->attrs[a].graph) op_stats_walk(n->attrs[a].graph, acc);
    }
}

dlp_status dlp_model_op_stats(const dlp_model *m, dlp_op_stat **out, int *n,
                              dlp_error *err) {
    if (!m || !out || !n)
        return dlp_fail(err, DLP_ERR_ARG, "dlp_model_op_stats: NULL argument");
    *out = NULL;
    *n = 0;
    if (!m->analyzed)
        return dlp_fail(err, DLP_ERR_ARG,
                        "dlp_model_op_stats: analyse the model first");
    op_acc acc = {0};
    if (!dlp_strmap_init(&acc.index, 64))
        return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    op_stats_walk(&m->graph, &acc);
    dlp_strmap_free(&acc.index);
    if (acc.oom) {
        free(acc.rows);
        return dlp_fail(err, DLP_ERR_NOMEM, "out of memory counting op types");
    }
    *out = acc.rows;
    *n = (int)acc.n;
    return DLP_OK;
}

/* ---- JSON ---------------------------------------------------------------- */
/* Written directly into a growable buffer: cJSON's number printing
 * (sprintf + sscanf round trip per number) dominated inspect's run time on
 * 5,000-node graphs. The output is plain RFC 8259 JSON that cJSON (and
 * Python's json) parse; tests/test_inspect.py reads it back. */

typedef struct {
    char *p;
    size_t n, cap;
    bool oom;
} jbuf;

static void jput(jbuf *b, const char *s, size_t len) {
    if (b->oom) return;
    if (b->n + len + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->n + len + 1) {
            if (cap > SIZE_MAX / 2) { b->oom = true; return; }
            cap *= 2;
        }
        char *q = realloc(b->p, cap);
        if (!q) { b->oom = true; return; }
        b->p = q;
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, len);
    b->n += len;
    b->p[b->n] = '\0';
}

static void jlit(jbuf *b, const char *s) { jput(b, s, strlen(s)); }

static void jint(jbuf *b, int64_t v) {
    char tmp[24];
    int i = (int)sizeof tmp;
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do {
        tmp[--i] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0) tmp[--i] = '-';
    jput(b, tmp + i, sizeof tmp - (size_t)i);
}

/* Integral values below 2^53 print as integers, others with %.17g. */
static void jnum(jbuf *b, double v) {
    if (v == v && v > -9007199254740992.0 && v < 9007199254740992.0 &&
        v == (double)(int64_t)v) {
        jint(b, (int64_t)v);
        return;
    }
    char tmp[32];
    if (v != v || v - v != 0) { jlit(b, "null"); return; }  /* NaN, inf */
    int k = snprintf(tmp, sizeof tmp, "%.17g", v);
    jput(b, tmp, (size_t)k);
}

static void jstr(jbuf *b, const char *s) {
    static const char hex[] = "0123456789abcdef";
    jput(b, "\"", 1);
    const char *run = s;
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c >= 0x20 && c != '"' && c != '\\') continue;
        jput(b, run, (size_t)(s - run));
        char e[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
        if (c == '"' || c == '\\') { e[1] = (char)c; jput(b, e, 2); }
        else if (c == '\n') jput(b, "\\n", 2);
        else if (c == '\t') jput(b, "\\t", 2);
        else jput(b, e, 6);
        run = s + 1;
    }
    jput(b, run, (size_t)(s - run));
    jput(b, "\"", 1);
}

static void jkey(jbuf *b, const char *k) {
    jstr(b, k);
    jput(b, ":", 1);
}

/* [ints, symbol strings, or null], or null when the rank is unknown */
static void shape_json(jbuf *b, const dlp_graph *g, const dlp_shape *s) {
    if (s->rank < 0) { jlit(b, "null"); return; }
    const dlp_graph *root = g;
    while (root->parent) root = root->parent;
    jput(b, "[", 1);
    for (int i = 0; i < s->rank; i++) {
        const dlp_dim *d = &s->dims[i];
        if (i) jput(b, ",", 1);
        if (d->value >= 0) jint(b, d->value);
        else if (d->sym >= 0 && (size_t)d->sym < root->n_syms)
            jstr(b, root->syms[d->sym]);
        else jlit(b, "null");
    }
    jput(b, "]", 1);
}

static void node_json(jbuf *b, const dlp_graph *g, const dlp_node *n,
                      const char *parent, bool *first) {
    if (!*first) jput(b, ",", 1);
    *first = false;
    jlit(b, "{\"name\":");
    jstr(b, n->name);
    jlit(b, ",\"op\":");
    jstr(b, n->op_type);
    if (n->domain[0]) { jlit(b, ",\"domain\":"); jstr(b, n->domain); }
    if (parent) { jlit(b, ",\"parent\":"); jstr(b, parent); }
    jlit(b, ",\"inputs\":[");
    for (int k = 0; k < n->n_inputs; k++) {
        if (k) jput(b, ",", 1);
        jstr(b, n->inputs[k] >= 0 ? g->values[n->inputs[k]].name : "");
    }
    jlit(b, "],\"outputs\":[");
    bool f = true;
    for (int k = 0; k < n->n_outputs; k++) {
        int v = n->outputs[k];
        if (v < 0) continue;
        const dlp_value *val = &g->values[v];
        if (!f) jput(b, ",", 1);
        f = false;
        jlit(b, "{\"name\":");
        jstr(b, val->name);
        jlit(b, ",\"dtype\":");
        jstr(b, dlp_dtype_name(val->dtype));
        jlit(b, ",\"shape\":");
        shape_json(b, g, &val->shape);
        jput(b, "}", 1);
    }
    jlit(b, "],\"macs\":");
    jnum(b, n->cost.macs);
    jlit(b, ",\"flops\":");
    jnum(b, n->cost.flops);
    jlit(b, ",\"params\":");
    jint(b, n->cost.params);
    jput(b, "}", 1);
    /* subgraph nodes follow their parent node */
    for (int a = 0; a < n->n_attrs; a++) {
        const dlp_graph *sub = n->attrs[a].graph;
        if (!sub) continue;
        for (size_t i = 0; i < sub->n_nodes; i++) {
            size_t idx = sub->topo ? (size_t)sub->topo[i] : i;
            node_json(b, sub, &sub->nodes[idx], n->name, first);
        }
    }
}

static void model_json(jbuf *b, const dlp_model *m, const dlp_summary *s) {
    const struct { const char *k; double v; } f[] = {
        {"nodes", (double)s->nodes},
        {"edges", (double)s->edges},
        {"params", (double)s->params},
        {"weight_bytes", (double)s->weight_bytes},
        {"macs", s->macs},
        {"flops", s->flops},
        {"activation_bytes", (double)s->activation_bytes},
        {"peak_activation_bytes", (double)s->peak_activation_bytes},
        {"unshaped_tensors", (double)s->unshaped_tensors},
        {"tensors", (double)s->tensors},
        {"opset", (double)s->opset},
    };
    jlit(b, "{\"summary\":{");
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
        if (i) jput(b, ",", 1);
        jkey(b, f[i].k);
        jnum(b, f[i].v);
    }
    jlit(b, "},\"nodes\":[");
    const dlp_graph *g = &m->graph;
    bool first = true;
    for (size_t i = 0; i < g->n_nodes; i++) {
        size_t idx = g->topo ? (size_t)g->topo[i] : i;
        node_json(b, g, &g->nodes[idx], NULL, &first);
    }
    jlit(b, "],\"warnings\":[");
    for (size_t i = 0; i < m->warnings.n; i++) {
        if (i) jput(b, ",", 1);
        jstr(b, m->warnings.msgs[i]);
    }
    jlit(b, "]}");
}

dlp_status dlp_model_to_json(const dlp_model *m, char **out, dlp_error *err) {
    if (!m || !out)
        return dlp_fail(err, DLP_ERR_ARG, "dlp_model_to_json: NULL argument");
    *out = NULL;
    if (!m->analyzed)
        return dlp_fail(err, DLP_ERR_ARG,
                        "model not analysed: call dlp_model_analyze first");
    dlp_summary s;
    dlp_status st = dlp_model_summary(m, &s);
    if (st != DLP_OK) return dlp_fail(err, st, "cannot summarise the model");
    jbuf b = {NULL, 0, 0, false};
    model_json(&b, m, &s);
    if (b.oom) {
        free(b.p);
        return dlp_fail(err, DLP_ERR_NOMEM, "out of memory writing JSON");
    }
    *out = b.p;
    return DLP_OK;
}
