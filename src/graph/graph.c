/* graph.c — graph construction, lookup and topological order. */
#include "graph.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

dlp_status dlp_graph_init(dlp_graph *g, dlp_arena *arena, dlp_graph *parent,
                          dlp_error *err) {
    memset(g, 0, sizeof *g);
    g->arena = arena;
    g->parent = parent;
    g->depth = parent ? parent->depth + 1 : 0;
    if (g->depth > DLP_MAX_SUBGRAPH_DEPTH)
        return dlp_fail(err, DLP_ERR_LIMIT,
                        "subgraphs nested deeper than %d levels",
                        DLP_MAX_SUBGRAPH_DEPTH);
    g->opset = parent ? parent->opset : 0;
    if (!dlp_strmap_init(&g->by_name, 64))
        return dlp_fail(err, DLP_ERR_NOMEM, "out of memory creating graph");
    return DLP_OK;
}

void dlp_graph_free(dlp_graph *g) {
    if (!g) return;
    for (size_t i = 0; i < g->n_nodes; i++) {
        dlp_node *n = &g->nodes[i];
        for (int a = 0; a < n->n_attrs; a++)
            if (n->attrs[a].graph) {
                dlp_graph_free(n->attrs[a].graph);
            }
    }
    free(g->values);
    free(g->nodes);
    free(g->inputs);
    free(g->outputs);
    free(g->syms);
    free(g->sym_values);
    free(g->topo);
    dlp_strmap_free(&g->by_name);
    memset(g, 0, sizeof *g);
}

int dlp_graph_find(const dlp_graph *g, const char *name) {
    return dlp_strmap_get(&g->by_name, name, strlen(name));
}

int dlp_graph_anon_value(dlp_graph *g) {
    if (g->n_values >= INT32_MAX ||
        !dlp_grow((void **)&g->values, &g->cap_values, g->n_values + 1,
                  sizeof *g->values))
        return -1;
    dlp_value *v = &g->values[g->n_values];
    memset(v, 0, sizeof *v);
    v->name = "";
    v->shape.rank = -1;
    v->producer = -1;
    return (int)g->n_values++;
}

int dlp_graph_value(dlp_graph *g, const char *name, size_t len) {
    int idx = dlp_strmap_get(&g->by_name, name, len);
    if (idx >= 0) return idx;
    char *copy = dlp_arena_strndup(g->arena, name, len);
    if (!copy) return -1;
    idx = dlp_graph_anon_value(g);
    if (idx < 0) return -1;
    g->values[idx].name = copy;
    if (!dlp_strmap_put(&g->by_name, copy, len, idx)) return -1;
    return idx;
}

int dlp_graph_add_node(dlp_graph *g) {
    if (g->n_nodes >= INT32_MAX ||
        !dlp_grow((void **)&g->nodes, &g->cap_nodes, g->n_nodes + 1,
                  sizeof *g->nodes))
        return -1;
    dlp_node *n = &g->nodes[g->n_nodes];
    memset(n, 0, sizeof *n);
    n->name = "";
    n->op_type = "";
    n->domain = "";
    return (int)g->n_nodes++;
}

bool dlp_graph_add_input(dlp_graph *g, int v) {
    if (!dlp_grow((void **)&g->inputs, &g->cap_inputs, g->n_inputs + 1,
                  sizeof *g->inputs))
        return false;
    g->inputs[g->n_inputs++] = v;
    return true;
}

bool dlp_graph_add_output(dlp_graph *g, int v) {
    if (!dlp_grow((void **)&g->outputs, &g->cap_outputs, g->n_outputs + 1,
                  sizeof *g->outputs))
        return false;
    g->outputs[g->n_outputs++] = v;
    return true;
}

int dlp_graph_input_batch_sym(const dlp_graph *g, size_t i) {
    if (i >= g->n_inputs) return -1;
    const dlp_shape *s = &g->values[g->inputs[i]].shape;
    int sym = s->rank >= 1 ? s->dims[0].sym : -1;
    return sym >= 0 && (size_t)sym < g->n_syms ? sym : -1;
}

int dlp_graph_sym(dlp_graph *g, const char *name, size_t len) {
    while (g->parent) g = g->parent;
    for (size_t i = 0; i < g->n_syms; i++)
        if (strlen(g->syms[i]) == len && memcmp(g->syms[i], name, len) == 0)
            return (int)i;
    size_t cap = g->cap_syms;
    if (!dlp_grow((void **)&g->syms, &cap, g->n_syms + 1, sizeof *g->syms))
        return -1;
    size_t cap2 = g->cap_syms;
    if (!dlp_grow((void **)&g->sym_values, &cap2, g->n_syms + 1,
                  sizeof *g->sym_values))
        return -1;
    g->cap_syms = cap < cap2 ? cap : cap2;
    char *copy = dlp_arena_strndup(g->arena, name, len);
    if (!copy) return -1;
    g->syms[g->n_syms] = copy;
    g->sym_values[g->n_syms] = -1;
    return (int)g->n_syms++;
}

const dlp_attr *dlp_node_attr(const dlp_node *n, const char *name) {
    for (int i = 0; i < n->n_attrs; i++)
        if (strcmp(n->attrs[i].name, name) == 0) return &n->attrs[i];
    return NULL;
}

int64_t dlp_node_attr_int(const dlp_node *n, const char *name, int64_t def) {
    const dlp_attr *a = dlp_node_attr(n, name);
    return a && a->type == DLP_ATTR_INT ? a->i : def;
}

double dlp_node_attr_float(const dlp_node *n, const char *name, double def) {
    const dlp_attr *a = dlp_node_attr(n, name);
    return a && a->type == DLP_ATTR_FLOAT ? a->f : def;
}

const char *dlp_node_attr_str(const dlp_node *n, const char *name,
                              const char *def) {
    const dlp_attr *a = dlp_node_attr(n, name);
    return a && a->type == DLP_ATTR_STRING && a->s ? a->s : def;
}

/* "'name' (Op)", or "#i (Op)" for an unnamed node, plus the subgraph it
 * lives in: error messages must let the user find the node. */
static const char *node_label(const dlp_graph *g, size_t i, char *buf,
                              size_t n) {
    const dlp_node *nd = &g->nodes[i];
    int k = nd->name[0]
                ? snprintf(buf, n, "'%.200s' (%.60s)", nd->name, nd->op_type)
                : snprintf(buf, n, "#%zu (%.60s)", i, nd->op_type);
    if (g->parent && k > 0 && (size_t)k < n)
        snprintf(buf + k, n - (size_t)k, " in subgraph '%.100s'",
                 g->name ? g->name : "");
    return buf;
}

/* Implicit inputs: values that node `consumer`'s subgraphs (at any depth)
 * capture from g (flagged DLP_V_OUTER by the reader) must be produced
 * before it. Appends (producer, consumer) pairs; false on OOM. */
static bool collect_captures(const dlp_graph *g, const dlp_graph *sub,
                             int consumer, int **pairs, size_t *n,
                             size_t *cap) {
    for (size_t i = 0; i < sub->n_values; i++) {
        const dlp_value *v = &sub->values[i];
        if (!(v->flags & DLP_V_OUTER) || !v->name[0]) continue;
        int k = dlp_graph_find(g, v->name);
        if (k < 0 || g->values[k].producer < 0 ||
            g->values[k].producer == consumer)
            continue;
        if (!dlp_grow((void **)pairs, cap, 2 * (*n + 1), sizeof **pairs))
            return false;
        (*pairs)[2 * *n] = g->values[k].producer;
        (*pairs)[2 * *n + 1] = consumer;
        (*n)++;
    }
    for (size_t i = 0; i < sub->n_nodes; i++)
        for (int a = 0; a < sub->nodes[i].n_attrs; a++)
            if (sub->nodes[i].attrs[a].graph &&
                !collect_captures(g, sub->nodes[i].attrs[a].graph, consumer,
                                  pairs, n, cap))
                return false;
    return true;
}

/* A binary min-heap of node positions (the ready set of the sort). */
static void heap_push(int *h, size_t *n, int x) {
    size_t i = (*n)++;
    while (i > 0 && h[(i - 1) / 2] > x) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = x;
}

static int heap_pop(int *h, size_t *n) {
    int top = h[0], x = h[--*n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= *n) break;
        if (c + 1 < *n && h[c + 1] < h[c]) c++;
        if (h[c] >= x) break;
        h[i] = h[c];
        i = c;
    }
    if (*n) h[i] = x;
    return top;
}

/* Kahn's algorithm over value producers, taking the ready node that comes
 * first in the file: a file already in topological order (ONNX requires
 * it) keeps its order, which is the execution order exporters write, and
 * which the memory walk (feat.c) follows. A FIFO of ready nodes would run
 * every branch as early as it can (each layer's mask cast at the start). */
dlp_status dlp_graph_toposort(dlp_graph *g, dlp_error *err) {
    size_t nn = g->n_nodes;
    free(g->topo);
    g->topo = NULL;
    int *indeg = calloc(nn ? nn : 1, sizeof *indeg);
    int *order = malloc((nn ? nn : 1) * sizeof *order);
    /* implicit edges from subgraph captures */
    int *pairs = NULL;
    size_t n_pairs = 0, cap_pairs = 0;
    bool cap_ok = true;
    for (size_t i = 0; i < nn && cap_ok; i++)
        for (int a = 0; a < g->nodes[i].n_attrs && cap_ok; a++)
            if (g->nodes[i].attrs[a].graph)
                cap_ok = collect_captures(g, g->nodes[i].attrs[a].graph,
                                          (int)i, &pairs, &n_pairs,
                                          &cap_pairs);
    /* consumer lists in CSR form */
    size_t n_edges = n_pairs;
    for (size_t i = 0; i < nn; i++) n_edges += (size_t)g->nodes[i].n_inputs;
    int *head = calloc(nn + 1, sizeof *head);
    int *adj = malloc((n_edges ? n_edges : 1) * sizeof *adj);
    int *hp = malloc((nn ? nn : 1) * sizeof *hp);
    if (!indeg || !order || !head || !adj || !hp || !cap_ok) {
        free(indeg); free(order); free(head); free(adj); free(hp); free(pairs);
        return dlp_fail(err, DLP_ERR_NOMEM, "out of memory sorting %zu nodes",
                        nn);
    }
    for (size_t e = 0; e < n_pairs; e++) {
        indeg[pairs[2 * e + 1]]++;
        head[pairs[2 * e] + 1]++;
    }
    dlp_status st = DLP_OK;
    for (size_t i = 0; i < nn && st == DLP_OK; i++) {
        const dlp_node *n = &g->nodes[i];
        for (int k = 0; k < n->n_inputs; k++) {
            int v = n->inputs[k];
            if (v < 0) continue;
            const dlp_value *val = &g->values[v];
            if (val->producer >= 0) {
                indeg[i]++;
                head[val->producer + 1]++;
            } else if (!(val->flags & (DLP_V_INPUT | DLP_V_INITIALIZER |
                                       DLP_V_OUTER)) &&
                       val->n_const == 0 && !val->ival && !val->fval) {
                char lb[400];
                st = dlp_fail(err, DLP_ERR_GRAPH,
                              "node %s reads tensor '%.200s' that no node, "
                              "input or initializer produces",
                              node_label(g, i, lb, sizeof lb), val->name);
                break;
            }
        }
    }
    if (st == DLP_OK) {
        for (size_t i = 0; i < nn; i++) head[i + 1] += head[i];
        int *fill = calloc(nn + 1, sizeof *fill);
        if (!fill) {
            st = dlp_fail(err, DLP_ERR_NOMEM, "out of memory sorting nodes");
        } else {
            for (size_t i = 0; i < nn; i++) {
                const dlp_node *n = &g->nodes[i];
                for (int k = 0; k < n->n_inputs; k++) {
                    int v = n->inputs[k];
                    if (v < 0 || g->values[v].producer < 0) continue;
                    int p = g->values[v].producer;
                    adj[head[p] + fill[p]++] = (int)i;
                }
            }
            for (size_t e = 0; e < n_pairs; e++) {
                int p = pairs[2 * e];
                adj[head[p] + fill[p]++] = pairs[2 * e + 1];
            }
            free(fill);
            size_t qt = 0, hn = 0;   /* order[] length, heap size */
            for (size_t i = 0; i < nn; i++)
                if (indeg[i] == 0) heap_push(hp, &hn, (int)i);
            while (hn) {
                int u = heap_pop(hp, &hn);
                order[qt++] = u;
                for (int e = head[u]; e < head[u + 1]; e++)
                    if (--indeg[adj[e]] == 0) heap_push(hp, &hn, adj[e]);
            }
            if (qt != nn) {
                size_t bad = 0;
                while (bad < nn && indeg[bad] == 0) bad++;
                /* a tensor on the cycle: an input of `bad` whose producer
                 * was never released either */
                const char *via = "?";
                for (int k = 0; bad < nn && k < g->nodes[bad].n_inputs; k++) {
                    int v = g->nodes[bad].inputs[k];
                    if (v >= 0 && g->values[v].producer >= 0 &&
                        indeg[g->values[v].producer] > 0) {
                        via = g->values[v].name;
                        break;
                    }
                }
                /* or one its subgraphs capture */
                for (size_t e = 0; bad < nn && via[0] == '?' && e < n_pairs;
                     e++) {
                    int p = pairs[2 * e];
                    if (pairs[2 * e + 1] == (int)bad && indeg[p] > 0 &&
                        g->nodes[p].n_outputs > 0 && g->nodes[p].outputs[0] >= 0)
                        via = g->values[g->nodes[p].outputs[0]].name;
                }
                char lb[400] = "?";
                if (bad < nn) node_label(g, bad, lb, sizeof lb);
                st = dlp_fail(err, DLP_ERR_GRAPH,
                              "graph has a cycle through node %s, which reads "
                              "tensor '%.200s'",
                              lb, via);
            }
        }
    }
    free(indeg); free(head); free(adj); free(hp); free(pairs);
    if (st != DLP_OK) {
        free(order);
        return st;
    }
    g->topo = order;
    return DLP_OK;
}

bool dlp_shape_known(const dlp_shape *s) {
    if (s->rank < 0) return false;
    for (int i = 0; i < s->rank; i++)
        if (s->dims[i].value < 0) return false;
    return true;
}

bool dlp_shape_numel(const dlp_shape *s, int64_t *out) {
    if (!dlp_shape_known(s)) return false;
    int64_t n = 1;
    for (int i = 0; i < s->rank; i++)
        if (!dlp_mul_i64(n, s->dims[i].value, &n)) return false;
    *out = n;
    return true;
}
