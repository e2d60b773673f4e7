/*
 * tree_llm.c — reads a transformer's architecture (layers, heads, hidden
 * size, vocabulary, FFN width, gating) from the patterns of its analysed
 * ONNX graph, for the tree model's feature vector. Rules in tree.h.
 */
#include "tree/tree.h"

#include <string.h>

/* Rank-2 floating initializer feeding input k of n: its dims, else false. */
static bool weight_dims(const dlp_graph *g, const dlp_node *n, int k,
                        int64_t *d0, int64_t *d1) {
    if (k >= n->n_inputs || n->inputs[k] < 0) return false;
    const dlp_value *v = &g->values[n->inputs[k]];
    if (!(v->flags & DLP_V_INITIALIZER) || !dlp_dtype_is_float(v->dtype))
        return false;
    if (v->shape.rank != 2 || v->shape.dims[0].value < 1 ||
        v->shape.dims[1].value < 1)
        return false;
    *d0 = v->shape.dims[0].value;
    *d1 = v->shape.dims[1].value;
    return true;
}

#define MAX_WIDTHS 64

void dlp_llm_arch_read(const dlp_graph *g, dlp_llm_arch *out) {
    memset(out, 0, sizeof *out);
    if (!g) return;
    /* pass 1: embeddings and attention softmaxes */
    for (size_t i = 0; i < g->n_nodes; i++) {
        const dlp_node *n = &g->nodes[i];
        if (n->domain[0]) continue;
        int64_t d0, d1;
        if (!strcmp(n->op_type, "Gather") && weight_dims(g, n, 0, &d0, &d1)) {
            if (d0 > out->vocab) {
                out->vocab = d0;
                out->hidden = d1;
            }
        } else if (!strcmp(n->op_type, "Softmax") && n->n_inputs > 0 &&
                   n->inputs[0] >= 0) {
            const dlp_shape *s = &g->values[n->inputs[0]].shape;
            if (s->rank < 3) continue;
            int64_t axis = dlp_node_attr_int(n, "axis", -1);
            if (axis != -1 && axis != s->rank - 1) continue;
            out->layers++;
            if (s->rank == 4 && s->dims[1].value > out->heads)
                out->heads = s->dims[1].value;
        }
    }
    if (!out->hidden) return;
    /* pass 2: FFN width = the most frequent projection [hidden, X] with X
     * wider than hidden, not the vocabulary and not a fused QKV */
    int64_t widths[MAX_WIDTHS];
    int counts[MAX_WIDTHS], nw = 0;
    for (size_t i = 0; i < g->n_nodes; i++) {
        const dlp_node *n = &g->nodes[i];
        if (n->domain[0]) continue;
        int64_t d0, d1, x = 0;
        if (!strcmp(n->op_type, "MatMul") && weight_dims(g, n, 1, &d0, &d1)) {
            if (d0 == out->hidden) x = d1;
        } else if (!strcmp(n->op_type, "Gemm") &&
                   weight_dims(g, n, 1, &d0, &d1)) {
            bool tb = dlp_node_attr_int(n, "transB", 0) != 0;
            if (tb && d1 == out->hidden) x = d0;
            if (!tb && d0 == out->hidden) x = d1;
        }
        if (x <= out->hidden || x == out->vocab || x == 3 * out->hidden)
            continue;
        int k = 0;
        while (k < nw && widths[k] != x) k++;
        if (k == nw) {
            if (nw == MAX_WIDTHS) continue;
            widths[nw] = x;
            counts[nw++] = 0;
        }
        counts[k]++;
    }
    int best = -1;
    for (int k = 0; k < nw; k++)
        if (best < 0 || counts[k] > counts[best] ||
            (counts[k] == counts[best] && widths[k] > widths[best]))
            best = k;
    if (best >= 0) {
        out->intermediate = widths[best];
        out->gated = out->layers > 0 && counts[best] >= 2 * out->layers;
    }
}
