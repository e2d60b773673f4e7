/*
 * cost.c — fills dlp_node.cost for every node of a graph and its subgraphs:
 * the byte and element counts every node has (parameters read, weight
 * bytes, activation bytes in and out), then the operator's MACs and FLOPs
 * from cost_ops.c. Nodes inside If/Loop/Scan bodies are costed once (trip
 * counts are not known statically). Conventions: docs/COST.md.
 */
#include "cost.h"
#include "../model/model.h"

#include <string.h>

bool dlp_cost_numel(const dlp_graph *g, int v, int64_t *out) {
    if (v < 0 || (size_t)v >= g->n_values) return false;
    return dlp_shape_numel(&g->values[v].shape, out);
}

const dlp_shape *dlp_cost_in_shape(const dlp_graph *g, const dlp_node *n,
                                   int k) {
    if (k >= n->n_inputs || n->inputs[k] < 0) return NULL;
    const dlp_shape *s = &g->values[n->inputs[k]].shape;
    return dlp_shape_known(s) ? s : NULL;
}

/* The initializer a value stands for: itself, or for a value captured from
 * an enclosing scope, the outer value of the same name. NULL if none. */
static const dlp_value *initializer_of(const dlp_graph *g, int v) {
    const dlp_value *val = &g->values[v];
    if (val->flags & DLP_V_INITIALIZER) return val;
    if (!(val->flags & DLP_V_OUTER)) return NULL;
    for (const dlp_graph *p = g->parent; p; p = p->parent) {
        int w = dlp_graph_find(p, val->name);
        if (w < 0) continue;
        if (p->values[w].flags & DLP_V_INITIALIZER) return &p->values[w];
        if (!(p->values[w].flags & DLP_V_OUTER)) return NULL;
    }
    return NULL;
}

/* Bytes of a tensor: numel x element size, 0 when unknown. */
static int64_t value_bytes(const dlp_value *val, int64_t *elems) {
    int64_t n = 0, b = 0;
    if (!dlp_shape_numel(&val->shape, &n)) n = -1;
    if (elems) *elems = n;
    if (n >= 0 && !dlp_mul_i64(n, (int64_t)dlp_dtype_size(val->dtype), &b))
        b = INT64_MAX;
    return n >= 0 ? b : 0;
}

static void cost_node(const dlp_graph *g, dlp_node *n) {
    dlp_cost *c = &n->cost;
    memset(c, 0, sizeof *c);
    bool known = true;
    for (int k = 0; k < n->n_inputs; k++) {
        int v = n->inputs[k];
        if (v < 0) continue;
        const dlp_value *init = initializer_of(g, v);
        if (init) {
            int64_t e = 0;
            int64_t b = value_bytes(init, &e);
            if (init->stored_bytes > 0) b = init->stored_bytes;
            c->weight_bytes += b;
            if (dlp_dtype_is_float(init->dtype) && e > 0) c->params += e;
        } else {
            int64_t e = 0;
            int64_t b = value_bytes(&g->values[v], &e);
            if (e < 0) known = false;
            c->in_bytes += b;
        }
    }
    for (int k = 0; k < n->n_outputs; k++) {
        int v = n->outputs[k];
        if (v < 0) continue;
        int64_t e = 0;
        c->out_bytes += value_bytes(&g->values[v], &e);
        if (e < 0) known = false;
        else c->out_elems += e;
    }
    double macs = 0, flops = 0;
    if (!dlp_cost_op(g, n, &macs, &flops)) known = false;
    c->macs = macs;
    c->flops = flops;
    c->known = known;
}

void dlp_cost_graph(dlp_graph *g) {
    for (size_t i = 0; i < g->n_nodes; i++) {
        dlp_node *n = &g->nodes[i];
        cost_node(g, n);
        for (int a = 0; a < n->n_attrs; a++)
            if (n->attrs[a].graph) dlp_cost_graph(n->attrs[a].graph);
    }
}
