/* feat_kern.c — how many GPU kernels PyTorch's eager mode launches for
 * each node of an exported graph (the count behind the static features
 * log_kernels / log_kernel_roof_ms and the launch terms of the roofline).
 *
 * The ONNX graph is the exporter's decomposition of the eager call, so
 * node count and kernel count differ in both directions; the rules below
 * come from the eager kernel traces of the dataset (kernels.csv.zst,
 * fp16 / bf16, H100 and H200: docs/COST.md, "Kernel count", gives the
 * before/after comparison on the 217 traced configurations):
 *   - no kernel: views and shape arithmetic (Reshape, Transpose, Slice,
 *     Split, Expand, Squeeze, Cast, ...: PyTorch aliases or computes them
 *     on the host), mask building (Where, Equal, Range, IsNaN, ... on
 *     [S, S]-sized or smaller tensors: measured 0.0-0.04 kernels per
 *     node), the bias Add of a MatMul / Gemm (cuBLAS epilogue), the nodes
 *     of an exported SDPA call other than its Softmax (one flash /
 *     memory-efficient kernel), the elementwise nodes of the erf form of
 *     GELU other than the Erf (one GELU kernel);
 *   - one copy kernel: a Reshape / Flatten of a Transpose's output
 *     (reshape of a non-contiguous tensor copies);
 *   - a Conv: one kernel, plus BatchNorm's three when the exporter folded
 *     one into it (dlp_feat_folded_bn: the legacy exporter's
 *     "onnx::Conv_<n>" weight, or the dynamo exporter's "getitem_<n>"
 *     output; ATen's inference batch norm launches two small kernels and
 *     the transform),
 *     or one bias add for a bias of its own; at fp16 / bf16 a spatial
 *     (k > 1), non-grouped convolution adds cuDNN's three NCHW <-> NHWC
 *     conversions (input, weight, output) — half_kern; 1x1 convolutions
 *     run as a GEMM without them;
 *   - an unfolded BatchNormalization: three; any other node whose output
 *     has more than 64 elements: one.
 * fp32 traces are not in the dataset: the layout conversions are counted
 * at half precision only. */
#include "feat.h"

#include <stdlib.h>
#include <string.h>

/* the kernels an attention left in float at half precision adds
 * (mark_math_attn): q, k, v upcast, the output's downcast and copy, and
 * the safe softmax's isneginf / all / fill / where (T5 encoder traces) */
#define HALF_F32_ATTN_KERNELS 9

static bool is(const dlp_node *n, const char *op) {
    return n && !strcmp(n->op_type, op);
}

/* v holds a constant: an initializer, or a Constant node's output, read
 * directly or through Identity (the exporter's deduplicated parameters) */
static bool is_const(const dlp_graph *g, int v) {
    for (int d = 0; d < 4 && v >= 0; d++) {
        if (g->values[v].flags & DLP_V_INITIALIZER) return true;
        const dlp_node *p = dlp_feat_producer_of(g, v);
        if (is(p, "Constant")) return true;
        if (!is(p, "Identity") || p->n_inputs < 1) return false;
        v = p->inputs[0];
    }
    return false;
}

/* a Gather of one element along an axis by a constant scalar index
 * (q, k, v = qkv[0], qkv[1], qkv[2]): a view in PyTorch */
static bool select_view(const dlp_graph *g, const dlp_node *n) {
    return n->n_inputs == 2 && n->inputs[1] >= 0 && !is_const(g, n->inputs[0]) &&
           is_const(g, n->inputs[1]) && g->values[n->inputs[1]].shape.rank == 0;
}

/* The erf form of GELU, Div|Mul(x, c) -> Erf -> Add(1) -> Mul(x | x/2, .)
 * [-> Mul(0.5)]: its elementwise nodes but the Erf get no kernel. */
static void gelu_erf(const dlp_graph *g, int e, const dlp_feat_uses *u,
                     uint8_t *none) {
    const dlp_node *n = &g->nodes[e];
    if (n->n_inputs != 1 || n->n_outputs != 1) return;
    const dlp_node *d = dlp_feat_producer_of(g, n->inputs[0]);
    if (!(is(d, "Div") || is(d, "Mul")) || d->n_inputs != 2) return;
    int a = dlp_feat_sole_use(u, n->outputs[0]);
    if (a < 0 || !is(&g->nodes[a], "Add") || g->nodes[a].n_outputs != 1) return;
    int m = dlp_feat_sole_use(u, g->nodes[a].outputs[0]);
    if (m < 0 || !is(&g->nodes[m], "Mul") || g->nodes[m].n_outputs != 1) return;
    none[d - g->nodes] = none[a] = none[m] = 1;
    /* the halving, before (0.5 * x) or after the product */
    const dlp_node *mn = &g->nodes[m];
    for (int k = 0; k < mn->n_inputs; k++) {
        const dlp_node *h = dlp_feat_producer_of(g, mn->inputs[k]);
        if (is(h, "Mul") && h != &g->nodes[a] && u->n[mn->inputs[k]] == 1)
            none[h - g->nodes] = 1;
    }
    int h = dlp_feat_sole_use(u, mn->outputs[0]);
    if (h >= 0 && is(&g->nodes[h], "Mul") && g->nodes[h].n_inputs == 2 &&
        (is_const(g, g->nodes[h].inputs[0]) || is_const(g, g->nodes[h].inputs[1])))
        none[h] = 1;
}

/* an Add / Sub of a constant to a MatMul / Gemm output: the bias epilogue */
static bool bias_epilogue(const dlp_graph *g, const dlp_node *n) {
    if (!(is(n, "Add") || is(n, "Sub")) || n->n_inputs != 2) return false;
    for (int k = 0; k < 2; k++) {
        const dlp_node *p = dlp_feat_producer_of(g, n->inputs[k]);
        if ((is(p, "MatMul") || is(p, "Gemm")) && is_const(g, n->inputs[1 - k]))
            return true;
    }
    return false;
}

bool dlp_feat_linear_bias(const dlp_graph *g, const dlp_node *n) {
    if (is(n, "Gemm")) return n->n_inputs > 2 && n->inputs[2] >= 0;
    if (!bias_epilogue(g, n)) return false;
    for (int k = 0; k < 2; k++) {
        const dlp_node *p = dlp_feat_producer_of(g, n->inputs[k]);
        if (is(p, "MatMul") && p->n_inputs == 2 &&
            (is_const(g, p->inputs[0]) || is_const(g, p->inputs[1])))
            return true;
    }
    return false;
}

/* A Reshape / Flatten copies when its input is a Transpose's
 * (non-contiguous) output, except around a fused attention: the kernel
 * reads strided q, k, v, and writes its output [B, S, heads, D], so the
 * transpose back is contiguous already. */
static int reshape_copies(const dlp_feat_graph *fg, const dlp_graph *g,
                          const dlp_node *n, const dlp_feat_uses *u) {
    const dlp_node *t = n->n_inputs > 0 ? dlp_feat_producer_of(g, n->inputs[0]) : NULL;
    if (!is(t, "Transpose") || n->cost.out_elems <= 64 || n->n_outputs < 1)
        return 0;
    const dlp_node *src = t->n_inputs > 0 ? dlp_feat_producer_of(g, t->inputs[0]) : NULL;
    if (src && fg->in_sdpa[src - g->nodes]) return 0;
    int c = dlp_feat_sole_use(u, n->outputs[0]);
    return c >= 0 && fg->in_sdpa[c] ? 0 : 1;
}

static int conv_kernels(const dlp_graph *g, const dlp_node *n, int *half) {
    *half = 0;
    int k = 1;
    if (dlp_feat_folded_bn(g, n))
        k += 3;
    else if (n->n_inputs > 2 && n->inputs[2] >= 0)
        k += 1;
    int64_t group = dlp_node_attr_int(n, "group", 1);
    const dlp_attr *ks = dlp_node_attr(n, "kernel_shape");
    bool spatial = false;
    if (ks && ks->ints)
        for (int i = 0; i < ks->n; i++) spatial |= ks->ints[i] > 1;
    else if (n->n_inputs > 1 && n->inputs[1] >= 0) {   /* from the weight */
        const dlp_shape *w = &g->values[n->inputs[1]].shape;
        for (int i = 2; i < w->rank; i++) spatial |= w->dims[i].value > 1;
    }
    /* depthwise (one input channel per group) runs ATen's own kernel */
    int64_t cpg = n->n_inputs > 1 && n->inputs[1] >= 0 &&
                          g->values[n->inputs[1]].shape.rank > 1
                      ? g->values[n->inputs[1]].shape.dims[1].value
                      : -1;
    if (spatial && (group == 1 || cpg > 1)) *half = 3;
    return k;
}

bool dlp_feat_count_kernels(dlp_feat_graph *fg, const dlp_graph *g,
                            const dlp_feat_uses *u) {
    static const char *const none_ops[] = {
        "Constant", "Shape", "Size", "Reshape", "Flatten", "Squeeze",
        "Unsqueeze", "Identity", "Dropout", "Transpose", "Slice", "Split",
        "Expand", "Cast", "Where", "Equal", "ConstantOfShape", "Range",
        "IsNaN", "IsInf", "Not", "And", "Or", "Less", "Greater",
        "LessOrEqual", "GreaterOrEqual", "Mod", "Trilu", NULL};
    size_t N = g->n_nodes;
    uint8_t *none = calloc(N ? N : 1, 1);
    if (!none) return false;
    for (size_t i = 0; i < N; i++)
        if (is(&g->nodes[i], "Erf")) gelu_erf(g, (int)i, u, none);
    fg->n_eager_kernels = fg->n_half_kernels = 0;
    for (size_t i = 0; i < N; i++) {
        const dlp_node *n = &g->nodes[i];
        int k = 0, half = 0;
        if (fg->in_sdpa[i] == 2 || (is(n, "Softmax") && fg->half_f32[i])) {
            /* one attention kernel; in float at half precision (a learned
             * bias, or the math path of 5-D operands) the float path's */
            k = 1;
            if (fg->half_f32[i]) half = HALF_F32_ATTN_KERNELS;
        }
        else if (fg->in_sdpa[i] || none[i] || bias_epilogue(g, n) ||
                 fg->mha[i] == DLP_MHA_VIEW)
            k = 0;
        else if (is(n, "Gather") && select_view(g, n)) k = 0;
        else if (is(n, "Reshape") || is(n, "Flatten"))
            k = reshape_copies(fg, g, n, u);
        else if (is(n, "Cast") && dlp_node_attr_int(n, "to", 0) == 1 &&
                 n->cost.out_elems > 64)
            half = 1;                  /* .float() of a half tensor */
        else if (dlp_feat_in_list(n->op_type, none_ops) || n->cost.out_elems <= 64) k = 0;
        else if (is(n, "Conv")) k = conv_kernels(g, n, &half);
        else if (is(n, "BatchNormalization")) k = 3;
        else k = 1;
        fg->eager_kern[i] = (uint8_t)k;
        fg->half_kern[i] = (uint8_t)half;
        fg->n_eager_kernels += k;
        fg->n_half_kernels += half;
    }
    free(none);
    return true;
}
