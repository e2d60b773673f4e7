/*
 * analyze.c — the analysis stage of a dlp_model: shape inference then the
 * cost model (dlp_model_analyze), the whole-model totals (dlp_model_summary)
 * and the JSON form of the analysed graph (dlp_model_to_json, printed by
 * `dlperf inspect --json`).
 *
 * Counting rules (docs/COST.md): every graph and subgraph value is counted
 * once where it is declared (values captured from an enclosing scope are
 * counted in that scope); attribute tensors are not graph values.
 */
#include "model.h"
#include "../cost/cost.h"

#include <cjson/cJSON.h>
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
        if (is_activation(g, v)) sat_add(&s->activation_bytes, value_bytes(v));
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
 * a tensor is live from its producer until its last consumer; graph inputs
 * from the start; graph outputs until the end. */
static dlp_status peak_bytes(const dlp_graph *g, int64_t *peak) {
    *peak = 0;
    size_t nv = g->n_values, nn = g->n_nodes;
    if (!g->topo && nn) return DLP_ERR_GRAPH;
    int *last = malloc((nv ? nv : 1) * sizeof *last);
    if (!last) return DLP_ERR_NOMEM;
    for (size_t i = 0; i < nv; i++) last[i] = -1;
    int end = (int)nn; /* "until the end" */
    for (size_t t = 0; t < nn; t++) {
        const dlp_node *n = &g->nodes[g->topo[t]];
        for (int k = 0; k < n->n_inputs; k++)
            if (n->inputs[k] >= 0 && last[n->inputs[k]] < (int)t)
                last[n->inputs[k]] = (int)t;
        for (int a = 0; a < n->n_attrs; a++)
            if (n->attrs[a].graph)
                mark_captures(g, n->attrs[a].graph, (int)t, last);
    }
    for (size_t i = 0; i < g->n_outputs; i++) last[g->outputs[i]] = end;
    int64_t live = 0, best = 0;
    for (size_t i = 0; i < g->n_inputs; i++)
        if (is_activation(g, &g->values[g->inputs[i]]))
            sat_add(&live, value_bytes(&g->values[g->inputs[i]]));
    best = live;
    for (size_t t = 0; t < nn; t++) {
        const dlp_node *n = &g->nodes[g->topo[t]];
        for (int k = 0; k < n->n_outputs; k++) {
            int v = n->outputs[k];
            if (v >= 0 && is_activation(g, &g->values[v]))
                sat_add(&live, value_bytes(&g->values[v]));
        }
        if (live > best) best = live;
        /* free what dies here: inputs read for the last time, and outputs
         * nobody reads */
        for (int k = 0; k < n->n_inputs; k++) {
            int v = n->inputs[k];
            if (v < 0 || last[v] != (int)t || !is_activation(g, &g->values[v]))
                continue;
            live -= value_bytes(&g->values[v]);
            last[v] = -2; /* freed once even if read twice by this node */
        }
        for (int k = 0; k < n->n_outputs; k++) {
            int v = n->outputs[k];
            if (v >= 0 && last[v] == -1 && is_activation(g, &g->values[v])) {
                live -= value_bytes(&g->values[v]);
                last[v] = -2;
            }
        }
    }
    free(last);
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
    if (unshaped)
        dlp_warn(&m->warnings,
                 "%lld tensor(s) have unknown shapes (first: '%s'); their "
                 "costs count as 0", (long long)unshaped, first);
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

/* ---- JSON ---------------------------------------------------------------- */

/* [ints, symbol strings, or null] */
static cJSON *shape_json(const dlp_graph *g, const dlp_shape *s) {
    if (s->rank < 0) return cJSON_CreateNull();
    const dlp_graph *root = g;
    while (root->parent) root = root->parent;
    cJSON *a = cJSON_CreateArray();
    if (!a) return NULL;
    for (int i = 0; i < s->rank; i++) {
        const dlp_dim *d = &s->dims[i];
        cJSON *x;
        if (d->value >= 0) x = cJSON_CreateNumber((double)d->value);
        else if (d->sym >= 0 && (size_t)d->sym < root->n_syms)
            x = cJSON_CreateString(root->syms[d->sym]);
        else x = cJSON_CreateNull();
        if (!x || !cJSON_AddItemToArray(a, x)) {
            cJSON_Delete(x);
            cJSON_Delete(a);
            return NULL;
        }
    }
    return a;
}

static bool add_node(cJSON *arr, const dlp_graph *g, const dlp_node *n,
                     const char *parent) {
    cJSON *o = cJSON_CreateObject();
    if (!o || !cJSON_AddItemToArray(arr, o)) {
        cJSON_Delete(o);
        return false;
    }
    if (!cJSON_AddStringToObject(o, "name", n->name) ||
        !cJSON_AddStringToObject(o, "op", n->op_type))
        return false;
    if (n->domain[0] && !cJSON_AddStringToObject(o, "domain", n->domain))
        return false;
    if (parent && !cJSON_AddStringToObject(o, "parent", parent)) return false;
    cJSON *in = cJSON_AddArrayToObject(o, "inputs");
    if (!in) return false;
    for (int k = 0; k < n->n_inputs; k++) {
        int v = n->inputs[k];
        cJSON *s = cJSON_CreateString(v >= 0 ? g->values[v].name : "");
        if (!s || !cJSON_AddItemToArray(in, s)) {
            cJSON_Delete(s);
            return false;
        }
    }
    cJSON *outs = cJSON_AddArrayToObject(o, "outputs");
    if (!outs) return false;
    for (int k = 0; k < n->n_outputs; k++) {
        int v = n->outputs[k];
        if (v < 0) continue;
        const dlp_value *val = &g->values[v];
        cJSON *t = cJSON_CreateObject();
        if (!t || !cJSON_AddItemToArray(outs, t)) {
            cJSON_Delete(t);
            return false;
        }
        cJSON *sh = shape_json(g, &val->shape);
        if (!sh) return false;
        if (!cJSON_AddStringToObject(t, "name", val->name) ||
            !cJSON_AddStringToObject(t, "dtype", dlp_dtype_name(val->dtype))) {
            cJSON_Delete(sh);
            return false;
        }
        cJSON_AddItemToObject(t, "shape", sh);
    }
    if (!cJSON_AddNumberToObject(o, "macs", n->cost.macs) ||
        !cJSON_AddNumberToObject(o, "flops", n->cost.flops) ||
        !cJSON_AddNumberToObject(o, "params", (double)n->cost.params))
        return false;
    /* subgraph nodes follow their parent node */
    for (int a = 0; a < n->n_attrs; a++) {
        const dlp_graph *sub = n->attrs[a].graph;
        if (!sub) continue;
        for (size_t i = 0; i < sub->n_nodes; i++) {
            size_t idx = sub->topo ? (size_t)sub->topo[i] : i;
            if (!add_node(arr, sub, &sub->nodes[idx], n->name)) return false;
        }
    }
    return true;
}

static cJSON *model_json(const dlp_model *m, const dlp_summary *s) {
    cJSON *root = cJSON_CreateObject();
    if (!root) return NULL;
    cJSON *sum = cJSON_AddObjectToObject(root, "summary");
    if (!sum) goto fail;
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
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        if (!cJSON_AddNumberToObject(sum, f[i].k, f[i].v)) goto fail;
    cJSON *nodes = cJSON_AddArrayToObject(root, "nodes");
    if (!nodes) goto fail;
    const dlp_graph *g = &m->graph;
    for (size_t i = 0; i < g->n_nodes; i++) {
        size_t idx = g->topo ? (size_t)g->topo[i] : i;
        if (!add_node(nodes, g, &g->nodes[idx], NULL)) goto fail;
    }
    cJSON *w = cJSON_AddArrayToObject(root, "warnings");
    if (!w) goto fail;
    for (size_t i = 0; i < m->warnings.n; i++) {
        cJSON *x = cJSON_CreateString(m->warnings.msgs[i]);
        if (!x || !cJSON_AddItemToArray(w, x)) {
            cJSON_Delete(x);
            goto fail;
        }
    }
    return root;
fail:
    cJSON_Delete(root);
    return NULL;
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
    cJSON *root = model_json(m, &s);
    if (!root) return dlp_fail(err, DLP_ERR_NOMEM, "out of memory building JSON");
    *out = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    if (!*out) return dlp_fail(err, DLP_ERR_NOMEM, "out of memory printing JSON");
    return DLP_OK;
}
