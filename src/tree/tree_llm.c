/*
 * tree_llm.c — reads a transformer's architecture (layers, heads, hidden
 * size, vocabulary, FFN width, gating) from the patterns of its analysed
 * ONNX graph (dlp_llm_arch_read, the reference) or from its featurized
 * form (dlp_llm_arch_from_feat, what the predictor uses, since training
 * and evaluation hold only featurized graphs). Rules in tree.h.
 */
#include "tree/tree.h"
#include "feat/feat.h"

#include <math.h>
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

/* Tally of projection widths [hidden, X]: the FFN width is the most frequent
 * X wider than hidden, not the vocabulary and not a fused QKV. Both readers
 * below (graph and featurized graph) feed it. */
typedef struct {
    int64_t widths[MAX_WIDTHS];
    int counts[MAX_WIDTHS], n;
} width_tally;

static void tally_add(width_tally *t, const dlp_llm_arch *a, int64_t x) {
    if (x <= a->hidden || x == a->vocab || x == 3 * a->hidden) return;
    int k = 0;
    while (k < t->n && t->widths[k] != x) k++;
    if (k == t->n) {
        if (t->n == MAX_WIDTHS) return;
        t->widths[t->n] = x;
        t->counts[t->n++] = 0;
    }
    t->counts[k]++;
}

/* Sets intermediate (most frequent width, the wider on ties) and gated
 * (two such projections per layer: gate and up). */
static void tally_apply(const width_tally *t, dlp_llm_arch *a) {
    int best = -1;
    for (int k = 0; k < t->n; k++)
        if (best < 0 || t->counts[k] > t->counts[best] ||
            (t->counts[k] == t->counts[best] && t->widths[k] > t->widths[best]))
            best = k;
    if (best >= 0) {
        a->intermediate = t->widths[best];
        a->gated = a->layers > 0 && t->counts[best] >= 2 * a->layers;
    }
}

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
    width_tally tally = {0};
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
        tally_add(&tally, out, x);
    }
    tally_apply(&tally, out);
}

/* ---- the same from a featurized graph ------------------------------------ */
/* Training and evaluation only hold dlp_feat_graph (src/feat/feat.h), so
 * the predictor reads the architecture from it, by the same rules, through
 * the node features: shapes are stored as log2(1 + d) right-aligned in 6
 * slots (input = first non-initializer input), parameters as log1p. An
 * embedding is a Gather with a rank-3 output [B, S, hidden] and hidden x
 * vocab parameters; a projection is a MatMul/Gemm with parameters whose
 * input's last dim is hidden. */
#define IN_D(d, k) ((d)[DLP_FEAT_NATTR + (k)])
#define IN_RANK(d) ((d)[DLP_FEAT_NATTR + DLP_FEAT_SHAPE_DIMS])
#define OUT_D(d, k) ((d)[DLP_FEAT_NATTR + DLP_FEAT_SHAPE_DIMS + 1 + (k)])
#define OUT_RANK(d) ((d)[DLP_FEAT_NATTR + 2 * DLP_FEAT_SHAPE_DIMS + 1])
#define LOG_PARAMS(d) ((d)[DLP_FEAT_NATTR + 2 * (DLP_FEAT_SHAPE_DIMS + 1) + 2])

static int64_t unlog2(float v) {
    return v <= 0 ? 0 : (int64_t)llround(exp2((double)v) - 1.0);
}

void dlp_llm_arch_from_feat(const dlp_feat_graph *fg, dlp_llm_arch *out) {
    memset(out, 0, sizeof *out);
    if (!fg || fg->n_nodes <= 0) return;
    int op_softmax = dlp_feat_op_index("", "Softmax");
    int op_gather = dlp_feat_op_index("", "Gather");
    int op_matmul = dlp_feat_op_index("", "MatMul");
    int op_gemm = dlp_feat_op_index("", "Gemm");
    const int last = DLP_FEAT_SHAPE_DIMS - 1;
    for (int i = 0; i < fg->n_nodes; i++) {
        const float *d = fg->dense + (size_t)i * DLP_FEAT_DENSE;
        int op = fg->op[i];
        if (op == op_softmax && IN_RANK(d) >= 3) {
            out->layers++;
            if (IN_RANK(d) == 4 && unlog2(IN_D(d, 3)) > out->heads)
                out->heads = unlog2(IN_D(d, 3));
        } else if (op == op_gather && OUT_RANK(d) == 3 && LOG_PARAMS(d) > 0) {
            int64_t hidden = unlog2(OUT_D(d, last));
            double params = expm1((double)LOG_PARAMS(d));
            int64_t vocab = hidden > 0 ? llround(params / (double)hidden) : 0;
            if (vocab > out->vocab) {
                out->vocab = vocab;
                out->hidden = hidden;
            }
        }
    }
    if (!out->hidden) return;
    width_tally tally = {0};
    for (int i = 0; i < fg->n_nodes; i++) {
        const float *d = fg->dense + (size_t)i * DLP_FEAT_DENSE;
        int op = fg->op[i];
        if ((op != op_matmul && op != op_gemm) || LOG_PARAMS(d) <= 0) continue;
        if (unlog2(IN_D(d, last)) != out->hidden) continue;
        int64_t x = unlog2(OUT_D(d, last));
        tally_add(&tally, out, x);
    }
    tally_apply(&tally, out);
}
