/* nn_graph.c — packs graphs into one block-diagonal batch and builds the
 * two CSR views the layers read (by destination for aggregation, by source
 * for the backward gathers). Counting sorts keep each node's edges in input
 * order, so a batch is a pure function of its inputs. */
#include "nn.h"

#include <stdlib.h>
#include <string.h>

/* Walks a description's edges in order, edge list or CSR alike:
 *   for (desc_it it = desc_begin(d); desc_next(&it, d, &s, &t);) ...  */
typedef struct { int e, u; } desc_it;
static bool desc_next(desc_it *it, const dlp_nn_graph_desc *d, int32_t *s,
                      int32_t *t) {
    if (it->e >= d->n_edges) return false;
    if (d->ptr) {
        while (d->ptr[it->u + 1] <= it->e) it->u++;
        *s = it->u;
    } else {
        *s = d->src[it->e];
    }
    *t = d->dst[it->e];
    it->e++;
    return true;
}

static bool desc_csr_ok(const dlp_nn_graph_desc *d) {
    if (d->ptr[0] != 0 || d->ptr[d->n_nodes] != d->n_edges) return false;
    for (int u = 0; u < d->n_nodes; u++)
        if (d->ptr[u + 1] < d->ptr[u]) return false;
    return true;
}

void dlp_nn_graph_free(dlp_nn_graph *g) {
    if (!g) return;
    free(g->in_ptr); free(g->in_src); free(g->out_ptr); free(g->out_dst);
    free(g->out_eid); free(g->graph_ptr); free(g->node_graph);
    free(g->loops);
    memset(g, 0, sizeof *g);
}

dlp_status dlp_nn_graph_build(dlp_nn_graph *g, const dlp_nn_graph_desc *graphs,
                              const int32_t *idx, int count, unsigned flags,
                              dlp_error *err) {
    memset(g, 0, sizeof *g);
    if (count < 0 || (count > 0 && !graphs))
        return dlp_fail(err, DLP_ERR_ARG, "nn graph: bad graph list");
    bool undirected = flags & DLP_NN_UNDIRECTED;
    int64_t N = 0, E = 0;
    for (int k = 0; k < count; k++) {
        const dlp_nn_graph_desc *d = &graphs[idx ? idx[k] : k];
        if (d->n_nodes < 0 || d->n_edges < 0 ||
            (d->n_edges > 0 && (!(d->src || d->ptr) || !d->dst)))
            return dlp_fail(err, DLP_ERR_ARG,
                            "nn graph %d: bad node/edge counts", k);
        if (d->ptr && !desc_csr_ok(d))
            return dlp_fail(err, DLP_ERR_GRAPH,
                            "nn graph %d: CSR pointers not increasing from 0 "
                            "to n_edges", k);
        int32_t s, t;
        for (desc_it it = {0, 0}; desc_next(&it, d, &s, &t);) {
            if (s < 0 || s >= d->n_nodes || t < 0 || t >= d->n_nodes)
                return dlp_fail(err, DLP_ERR_GRAPH,
                                "nn graph %d: edge %d (%d->%d) outside 0..%d",
                                k, it.e - 1, s, t, d->n_nodes - 1);
            E += (undirected && s != t) ? 2 : 1;
        }
        N += d->n_nodes;
    }
    if (N > INT32_MAX - 1 || E > INT32_MAX - 1)
        return dlp_fail(err, DLP_ERR_LIMIT, "nn graph: batch too large");
    g->n_nodes = (int)N; g->n_edges = (int)E; g->n_graphs = count;
    int32_t *src = malloc(((size_t)E + 1) * sizeof *src);
    int32_t *dst = malloc(((size_t)E + 1) * sizeof *dst);
    g->in_ptr = calloc((size_t)N + 1, sizeof(int32_t));
    g->out_ptr = calloc((size_t)N + 1, sizeof(int32_t));
    g->in_src = malloc(((size_t)E + 1) * sizeof(int32_t));
    g->out_dst = malloc(((size_t)E + 1) * sizeof(int32_t));
    g->out_eid = malloc(((size_t)E + 1) * sizeof(int32_t));
    g->graph_ptr = malloc(((size_t)count + 1) * sizeof(int32_t));
    g->node_graph = malloc(((size_t)N + 1) * sizeof(int32_t));
    g->loops = calloc((size_t)N + 1, sizeof(int32_t));
    int32_t *fill = calloc((size_t)N + 1, sizeof(int32_t));
    if (!g->loops || !src || !dst || !g->in_ptr || !g->out_ptr || !g->in_src ||
        !g->out_dst || !g->out_eid || !g->graph_ptr || !g->node_graph ||
        !fill) {
        free(src); free(dst); free(fill);
        dlp_nn_graph_free(g);
        return dlp_fail(err, DLP_ERR_NOMEM, "nn graph: out of memory");
    }
    /* global edge list */
    int32_t base = 0, e_out = 0;
    for (int k = 0; k < count; k++) {
        const dlp_nn_graph_desc *d = &graphs[idx ? idx[k] : k];
        g->graph_ptr[k] = base;
        for (int i = 0; i < d->n_nodes; i++) g->node_graph[base + i] = k;
        int32_t s, t;
        for (desc_it it = {0, 0}; desc_next(&it, d, &s, &t);) {
            src[e_out] = base + s; dst[e_out] = base + t;
            e_out++;
            if (undirected && s != t) {
                src[e_out] = base + t; dst[e_out] = base + s;
                e_out++;
            }
        }
        base += d->n_nodes;
    }
    g->graph_ptr[count] = base;
    /* in-CSR by destination; remember each edge's slot */
    for (int e = 0; e < E; e++) {
        g->in_ptr[dst[e] + 1]++;
        if (src[e] == dst[e]) g->loops[dst[e]]++;
    }
    for (int i = 0; i < N; i++) g->in_ptr[i + 1] += g->in_ptr[i];
    int32_t *slot = malloc(((size_t)E + 1) * sizeof *slot);
    if (!slot) {
        free(src); free(dst); free(fill);
        dlp_nn_graph_free(g);
        return dlp_fail(err, DLP_ERR_NOMEM, "nn graph: out of memory");
    }
    for (int e = 0; e < E; e++) {
        int32_t p = g->in_ptr[dst[e]] + fill[dst[e]]++;
        g->in_src[p] = src[e];
        slot[e] = p;
    }
    memset(fill, 0, ((size_t)N + 1) * sizeof *fill);
    for (int e = 0; e < E; e++) g->out_ptr[src[e] + 1]++;
    for (int i = 0; i < N; i++) g->out_ptr[i + 1] += g->out_ptr[i];
    for (int e = 0; e < E; e++) {
        int32_t p = g->out_ptr[src[e]] + fill[src[e]]++;
        g->out_dst[p] = dst[e];
        g->out_eid[p] = slot[e];
    }
    free(slot); free(src); free(dst); free(fill);
    return DLP_OK;
}
