/* feat.c — the featurizer (schema in feat.h): op vocabulary, per-node
 * dense features and edges of one analysed graph (dlp_feat_graph), and the
 * config-dependent assembly of node and static features, with the
 * analytical roofline they include. */
#include "feat.h"

#include "../model/model.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- vocabulary ---------------------------------------------------------- */
/* Every op the cost model knows (default domain) plus common com.microsoft
 * fused ops. Order is part of the schema: append only, bump the schema. */
static const char *const OPS[] = {
    "Abs", "Acos", "Acosh", "Add", "And", "ArgMax",
    "ArgMin", "Asin", "Asinh", "Atan", "Atanh", "AveragePool",
    "BatchNormalization", "BitShift", "BitwiseAnd", "BitwiseNot", "BitwiseOr",
    "BitwiseXor", "Cast", "CastLike", "Ceil", "Celu", "Clip", "Compress",
    "Concat", "Constant", "ConstantOfShape", "Conv", "ConvInteger",
    "ConvTranspose", "Cos", "Cosh", "CumSum", "DepthToSpace",
    "DequantizeLinear", "Div", "Dropout", "Einsum", "Elu", "Equal", "Erf",
    "Exp", "Expand", "EyeLike", "FastGelu", "Flatten", "Floor", "GRU",
    "Gather", "GatherElements", "GatherND", "Gelu", "Gemm",
    "GlobalAveragePool", "GlobalLpPool", "GlobalMaxPool", "Greater",
    "GreaterOrEqual", "GroupNormalization", "HardSigmoid", "HardSwish",
    "Hardmax", "Identity", "If", "InstanceNormalization", "IsInf", "IsNaN",
    "LRN", "LSTM", "LayerNormalization", "LeakyRelu", "Less", "LessOrEqual",
    "Log", "LogSoftmax", "Loop", "LpPool", "MatMul", "MatMulInteger", "Max",
    "MaxPool", "Mean", "Min", "Mish", "Mod", "Mul", "Neg",
    "NonMaxSuppression", "NonZero", "Not", "OneHot", "Or", "PRelu", "Pad",
    "Pow", "QLinearConv", "QLinearMatMul", "QuantizeLinear",
    "RMSNormalization", "RNN", "Range", "Reciprocal", "ReduceLogSum",
    "ReduceLogSumExp", "ReduceMax", "ReduceMean", "ReduceMin", "ReduceProd",
    "ReduceSum", "ReduceSumSquare", "Relu", "Reshape", "Resize", "Round",
    "Scan", "Scatter", "ScatterElements", "ScatterND", "Selu", "Shape",
    "Shrink", "Sigmoid", "Sign", "SimplifiedLayerNormalization", "Sin",
    "Sinh", "Size", "Slice", "Softmax", "Softplus", "Softsign",
    "SpaceToDepth", "Split", "Sqrt", "Squeeze", "Sub", "Sum", "Tan", "Tanh",
    "ThresholdedRelu", "Tile", "TopK", "Transpose", "Trilu", "Unsqueeze",
    "Upsample", "Where", "Xor",
    /* com.microsoft fused ops */
    "Attention", "MultiHeadAttention", "SkipLayerNormalization",
    "EmbedLayerNormalization", "BiasGelu", "FusedMatMul", "QuickGelu",
    "FusedConv", "BiasSoftmax", "GroupQueryAttention", "RotaryEmbedding",
    "SkipSimplifiedLayerNormalization", "MatMulNBits", "GatedRelativePositionBias",
    "Gelu_ms", "DynamicQuantizeLinear", "Col2Im", "GridSample",
    "AffineGrid", "Bernoulli", "BlackmanWindow", "CenterCropPad", "DFT",
    "HammingWindow", "HannWindow", "ImageDecoder", "MeanVarianceNormalization",
    "Multinomial", "NegativeLogLikelihoodLoss", "Optional", "RandomNormal",
    "RandomNormalLike", "RandomUniform", "RandomUniformLike", "ReverseSequence",
    "RoiAlign", "STFT", "SequenceAt", "SequenceConstruct", "SequenceEmpty",
    "SequenceErase", "SequenceInsert", "SequenceLength", "SoftmaxCrossEntropyLoss",
    "SplitToSequence", "StringNormalizer", "TfIdfVectorizer", "Unique",
    "Det", "Binarizer", "ConcatFromSequence", "LpNormalization",
    "MaxRoiPool", "MaxUnpool", "MelWeightMatrix", "OptionalGetElement",
    "OptionalHasElement", "RegexFullMatch", "StringConcat", "StringSplit",
    "DeformConv", "Swish",
};
#define N_VOCAB ((int)(sizeof OPS / sizeof OPS[0]))
_Static_assert(sizeof OPS / sizeof OPS[0] == DLP_FEAT_NOPS,
               "DLP_FEAT_NOPS must equal the vocabulary size");

int dlp_feat_op_index(const char *domain, const char *op_type) {
    if (!op_type) return -1;
    if (domain && domain[0] && strcmp(domain, "ai.onnx") &&
        strcmp(domain, "com.microsoft"))
        return -1;
    /* first-character test before strcmp: this runs for every node of
     * every prediction (callgrind: strcmp was 15% of a 2,000-node predict) */
    for (int i = 0; i < N_VOCAB; i++)
        if (OPS[i][0] == op_type[0] && !strcmp(OPS[i], op_type)) return i;
    return -1;
}

const char *dlp_feat_op_name(int i) {
    if (i == DLP_FEAT_NOPS) return "other";
    return i >= 0 && i < N_VOCAB ? OPS[i] : NULL;
}

static const char *const DENSE_NAMES[DLP_FEAT_DENSE] = {
    "kernel_h", "kernel_w", "stride_h", "stride_w", "pad_begin", "pad_end",
    "dilation_h", "dilation_w", "log2_groups", "n_axes", "axis", "trans",
    "in_d0", "in_d1", "in_d2", "in_d3", "in_d4", "in_d5", "in_rank",
    "out_d0", "out_d1", "out_d2", "out_d3", "out_d4", "out_d5", "out_rank",
    "log_macs", "log_flops", "log_params", "log_bytes", "cost_known",
};
static const char *const ROOF_NAMES[DLP_FEAT_NROOF] = {
    "roof_compute_us", "roof_memory_us", "roof_max_us"};

const char *dlp_feat_node_name(int i) {
    if (i < 0 || i >= DLP_FEAT_NODE_DIM) return NULL;
    if (i <= DLP_FEAT_NOPS) return dlp_feat_op_name(i);
    i -= DLP_FEAT_NOPS + 1;
    if (i < DLP_FEAT_DENSE) return DENSE_NAMES[i];
    return ROOF_NAMES[i - DLP_FEAT_DENSE];
}

static const char *const STATIC_NAMES[DLP_FEAT_STATIC_BASE] = {
    "log_macs", "log_flops", "log_params", "log_weight_bytes",
    "log_act_bytes", "log_peak_act_bytes", "log_nodes", "log_edges",
    "log_io_bytes", "log_unknown_ops",
    "n_conv", "n_matmul", "n_norm", "n_activation", "n_elementwise",
    "n_softmax", "n_pool", "n_datamove", "n_reduce", "n_other",
    "log2_batch", "log2_seq", "log2_height", "log2_width",
    "prec_fp32", "prec_fp16", "prec_bf16", "rt_eager", "rt_graph",
    "log_roof_compute_ms", "log_roof_memory_ms", "log_roofline_ms",
    "log_launch_ms", "log_roof_plus_launch_ms", "log_weights_mib",
    "log_peak_act_mib", "log_mem_estimate_mib", "log_train_mem_mib",
    "log_flops_per_byte", "log_sum_act_out_mib", "log_kernel_roof_ms",
    "log_kernels", "mask_bidir_graph", "log_scores_mib",
};

const char *dlp_feat_static_name(int i) {
    if (i < 0 || i >= DLP_FEAT_STATIC_DIM) return NULL;
    if (i < DLP_FEAT_STATIC_BASE) return STATIC_NAMES[i];
    if (i == DLP_FEAT_STATIC_DIM - 1) return "dev_sm_share";
    return dlp_device_feature_name(i - DLP_FEAT_STATIC_BASE);
}

/* ---- op categories ------------------------------------------------------- */
enum { CAT_CONV, CAT_MATMUL, CAT_NORM, CAT_ACT, CAT_ELEM, CAT_SOFTMAX,
       CAT_POOL, CAT_DATA, CAT_REDUCE, CAT_OTHER };

bool dlp_feat_in_list(const char *op, const char *const *l) {
    for (; *l; l++)
        if ((*l)[0] == op[0] && !strcmp(op, *l)) return true;
    return false;
}

static int op_category(const char *op) {
    static const char *const conv[] = {"Conv", "ConvTranspose", "ConvInteger",
                                       "QLinearConv", "FusedConv",
                                       "DeformConv", NULL};
    static const char *const mm[] = {"MatMul", "Gemm", "Einsum",
                                     "MatMulInteger", "QLinearMatMul",
                                     "FusedMatMul", "Attention",
                                     "MultiHeadAttention", "LSTM", "GRU",
                                     "RNN", "MatMulNBits",
                                     "GroupQueryAttention", NULL};
    static const char *const norm[] = {
        "BatchNormalization", "LayerNormalization", "GroupNormalization",
        "InstanceNormalization", "RMSNormalization",
        "SimplifiedLayerNormalization", "SkipLayerNormalization",
        "SkipSimplifiedLayerNormalization", "EmbedLayerNormalization", "LRN",
        "LpNormalization", "MeanVarianceNormalization", NULL};
    static const char *const act[] = {
        "Relu", "Gelu", "FastGelu", "BiasGelu", "QuickGelu", "Sigmoid",
        "Tanh", "HardSwish", "HardSigmoid", "LeakyRelu", "PRelu", "Elu",
        "Selu", "Celu", "Mish", "Softplus", "Softsign", "Erf", "Clip",
        "ThresholdedRelu", "Swish", NULL};
    static const char *const sm[] = {"Softmax", "LogSoftmax", "BiasSoftmax",
                                     "Hardmax", NULL};
    static const char *const pool[] = {"MaxPool", "AveragePool",
                                       "GlobalAveragePool", "GlobalMaxPool",
                                       "LpPool", "GlobalLpPool", NULL};
    static const char *const data[] = {
        "Reshape", "Transpose", "Concat", "Split", "Slice", "Gather",
        "GatherElements", "GatherND", "Squeeze", "Unsqueeze", "Flatten",
        "Expand", "Tile", "Pad", "Resize", "Upsample", "Cast", "Identity",
        "Shape", "Constant", "ConstantOfShape", "Range", "Where",
        "ScatterND", "ScatterElements", "DepthToSpace", "SpaceToDepth",
        "Dropout", "CastLike", "Size", "Trilu", NULL};
    static const char *const red[] = {
        "ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd",
        "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp", "ArgMax",
        "ArgMin", "CumSum", "TopK", NULL};
    static const char *const elem[] = {
        "Add", "Sub", "Mul", "Div", "Pow", "Sqrt", "Exp", "Log", "Neg", "Abs",
        "Reciprocal", "Max", "Min", "Equal", "Less", "Greater", "Not", "And",
        "Or", "Sum", "Mean", "Sin", "Cos", "Floor", "Ceil", "Round", "Sign",
        "LessOrEqual", "GreaterOrEqual", "Mod", "IsNaN", "IsInf", NULL};
    if (dlp_feat_in_list(op, conv)) return CAT_CONV;
    if (dlp_feat_in_list(op, mm)) return CAT_MATMUL;
    if (dlp_feat_in_list(op, norm)) return CAT_NORM;
    if (dlp_feat_in_list(op, act)) return CAT_ACT;
    if (dlp_feat_in_list(op, sm)) return CAT_SOFTMAX;
    if (dlp_feat_in_list(op, pool)) return CAT_POOL;
    if (dlp_feat_in_list(op, data)) return CAT_DATA;
    if (dlp_feat_in_list(op, red)) return CAT_REDUCE;
    if (dlp_feat_in_list(op, elem)) return CAT_ELEM;
    return CAT_OTHER;
}

/* ---- one graph ----------------------------------------------------------- */
static int64_t vbytes(const dlp_value *v) {
    int64_t n = 0, b = 0;
    if (!dlp_shape_numel(&v->shape, &n)) return 0;
    if (!dlp_mul_i64(n, (int64_t)dlp_dtype_size(v->dtype), &b)) return 0;
    return b;
}

/* Bytes of initializer v: its stored data, or by its shape where the
 * stored graph was stripped of weights. */
static double init_bytes(const dlp_value *v) {
    return (double)(v->stored_bytes > 0 ? v->stored_bytes : vbytes(v));
}

static bool is_act(const dlp_graph *g, const dlp_value *v) {
    if (v->flags & DLP_V_INITIALIZER) return false;
    if (v->producer >= 0 && !strcmp(g->nodes[v->producer].op_type, "Constant"))
        return false;
    return true;
}

static float lg(double x) { return (float)log1p(x > 0 ? x : 0); }
static float lg2(double x) { return (float)log2(1.0 + (x > 0 ? x : 0)); }

static void shape_feats(float *o, const dlp_graph *g, int v) {
    for (int k = 0; k <= DLP_FEAT_SHAPE_DIMS; k++) o[k] = 0;
    if (v < 0) return;
    const dlp_shape *s = &g->values[v].shape;
    if (s->rank < 0) { o[DLP_FEAT_SHAPE_DIMS] = -1; return; }
    /* right-aligned: the innermost dims land in the same slots */
    int r = s->rank;
    for (int k = 0; k < r && k < DLP_FEAT_SHAPE_DIMS; k++) {
        const dlp_dim *d = &s->dims[r - 1 - k];
        o[DLP_FEAT_SHAPE_DIMS - 1 - k] = d->value >= 0 ? lg2((double)d->value)
                                                       : -1;
    }
    o[DLP_FEAT_SHAPE_DIMS] = (float)r;
}

static void attr_pair(const dlp_node *n, const char *name, float def,
                      float *a, float *b) {
    const dlp_attr *at = dlp_node_attr(n, name);
    *a = *b = def;
    if (!at || at->type != DLP_ATTR_INTS || at->n < 1) return;
    *a = (float)at->ints[0];
    *b = (float)at->ints[at->n > 1 ? 1 : 0];
}

/* The kernel's size: its kernel_shape, else for a Conv its weight's
 * spatial dims (the attribute is optional); 0 when neither says. */
static void kernel_pair(const dlp_graph *g, const dlp_node *n, float *a,
                        float *b) {
    attr_pair(n, "kernel_shape", 0, a, b);
    if (*a == 0 && !strcmp(n->op_type, "Conv") && n->n_inputs > 1 &&
        n->inputs[1] >= 0) {
        const dlp_shape *w = &g->values[n->inputs[1]].shape;
        if (w->rank >= 3) {
            *a = (float)w->dims[2].value;
            *b = (float)w->dims[w->rank > 3 ? 3 : 2].value;
        }
    }
}

static void attr_feats(float *o, const dlp_graph *g, const dlp_node *n) {
    kernel_pair(g, n, &o[DLP_FEAT_ATTR_KH], &o[DLP_FEAT_ATTR_KW]);
    attr_pair(n, "strides", 0, &o[2], &o[3]);
    const dlp_attr *p = dlp_node_attr(n, "pads");
    o[4] = o[5] = 0;
    if (p && p->type == DLP_ATTR_INTS) {
        for (int k = 0; k < p->n; k++) o[k < p->n / 2 ? 4 : 5] += (float)p->ints[k];
    }
    attr_pair(n, "dilations", 0, &o[6], &o[7]);
    int64_t groups = dlp_node_attr_int(n, "group", 1);
    o[DLP_FEAT_ATTR_LOG2_GROUP] = (float)log2((double)(groups > 0 ? groups : 1));
    const dlp_attr *ax = dlp_node_attr(n, "axes");
    o[9] = ax && ax->type == DLP_ATTR_INTS ? (float)ax->n : 0;
    if (!ax && n->n_inputs > 1 && !strncmp(n->op_type, "Reduce", 6) &&
        n->inputs[1] >= 0 && g->values[n->inputs[1]].ival)
        o[9] = (float)g->values[n->inputs[1]].n_const;
    int64_t axis = dlp_node_attr_int(n, "axis", INT64_MIN);
    if (axis == INT64_MIN && ax && ax->type == DLP_ATTR_INTS && ax->n > 0)
        axis = ax->ints[0];
    o[10] = axis == INT64_MIN ? 0 : (float)(axis < 0 ? axis : axis + 1);
    o[11] = (float)(dlp_node_attr_int(n, "transA", 0) +
                    2 * dlp_node_attr_int(n, "transB", 0));
}

int dlp_feat_bind_resolution(dlp_graph *g, int64_t height, int64_t width) {
    if (height <= 0 || width <= 0) return 0;
    int n = 0;
    for (size_t i = 0; i < g->n_inputs; i++) {
        dlp_value *v = &g->values[g->inputs[i]];
        if (v->shape.rank != 4 || !dlp_dtype_is_float(v->dtype)) continue;
        v->shape.dims[2].value = height;
        v->shape.dims[2].sym = -1;
        v->shape.dims[3].value = width;
        v->shape.dims[3].sym = -1;
        n++;
    }
    return n;
}

dlp_status dlp_feat_model_at(const void *bytes, size_t len, const char *hash,
                             int64_t batch, int64_t seq, int64_t height,
                             int64_t width, dlp_model **out, dlp_error *err) {
    dlp_model *m = NULL;
    *out = NULL;
    dlp_status st = dlp_model_open_memory(bytes, len, hash, &m, err);
    if (st) return st;
    st = dlp_model_set_batch(m, batch, err);
    if (!st && seq > 0) {
        dlp_error e2;
        (void)dlp_model_bind_dim(m, "seq", seq, &e2);   /* absent: fine */
    }
    if (!st) dlp_feat_bind_resolution(&m->graph, height, width);
    if (!st) st = dlp_model_analyze(m, err);
    if (st) {
        dlp_model_free(m);
        return st;
    }
    *out = m;
    return DLP_OK;
}

void dlp_feat_graph_free(dlp_feat_graph *fg) {
    if (!fg) return;
    free(fg->op); free(fg->tc); free(fg->kern); free(fg->node_cat); free(fg->dense); free(fg->flops);
    free(fg->half_f32); free(fg->clamp_elems);
    free(fg->in_sdpa); free(fg->eager_kern); free(fg->half_kern);
    free(fg->bytes); free(fg->src); free(fg->dst);
    free(fg->convs); free(fg->train_curve); free(fg->ops); free(fg->node_op);
    free(fg->sdpa_pv); free(fg->op_eff); free(fg->battn); free(fg->battn_op);
    free(fg->val_cl); free(fg->mha); free(fg->mha_work); free(fg->mha_op);
    memset(fg, 0, sizeof *fg);
}

/* ---- peak memory: liveness of PyTorch's allocations ----------------------
 * The inference labels are torch.cuda.max_memory_allocated() over one call
 * in torch.inference_mode: weights + inputs (allocated before the call) +
 * every intermediate from the moment its producer runs until its last
 * consumer ran (the caching allocator frees a block when its tensor dies,
 * and reuses it for the next allocation). The ONNX graph is the exported
 * trace of that call, so walking it in topological order with last-use
 * frees reproduces the peak, once what the export changed is undone:
 *   - views: Reshape, Flatten, (Un)Squeeze, Transpose, Expand, Identity,
 *     Dropout (inference) alias their input in PyTorch (view(), permute(),
 *     expand()): no new block; the storage lives until its last alias dies.
 *   - shape arithmetic (Shape, Size, Constant and what the exporter traced
 *     from Python ints) is host-side: no device block.
 *   - in-place activations (ReLU(inplace=True) and friends, the default in
 *     torchvision and timm CNNs): an activation whose input dies at it
 *     writes into that input's block.
 *   - fused attention: F.scaled_dot_product_attention is exported (opset
 *     14 symbolic) as Mul(q, sqrt(scale)), Mul(k^T, sqrt(scale)), MatMul,
 *     [Add mask], Softmax, [Dropout], MatMul; on the GPU it is one flash /
 *     memory-efficient kernel that never materialises the [.., S, S]
 *     scores. The pattern (both MatMul operands scaled by a Mul: eager
 *     attention code scales the product, or one operand) marks those
 *     intermediates virtual. */
#define VIEW_OPS {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose", \
                  "Expand", "Identity", "Dropout", NULL}
#define HOST_OPS {"Shape", "Size", "Constant", NULL}
#define INPLACE_OPS {"Relu", "Clip", "LeakyRelu", "HardSwish", \
                     "HardSigmoid", "ScatterND", NULL}

/* Whether value x is a weight (an initializer of more than
 * DLP_MEM_MASK_CONST_MAX elements, by its shape: stripped graphs keep no
 * data for large initializers) rather than a constant scalar. */
static bool is_weight_init(const dlp_value *x) {
    if (!(x->flags & DLP_V_INITIALIZER)) return false;
    int64_t n = 0;
    if (!dlp_shape_numel(&x->shape, &n)) n = (int64_t)x->n_const;
    return n > DLP_MEM_MASK_CONST_MAX || (int64_t)x->n_const > DLP_MEM_MASK_CONST_MAX;
}

/* the node producing value v, or NULL */
const dlp_node *dlp_feat_producer_of(const dlp_graph *g, int v) {
    if (v < 0 || g->values[v].producer < 0) return NULL;
    return &g->nodes[g->values[v].producer];
}

bool dlp_feat_uses_of(const dlp_graph *g, dlp_feat_uses *u) {
    size_t V = g->n_values ? g->n_values : 1, E = 0;
    for (size_t i = 0; i < g->n_nodes; i++) E += (size_t)g->nodes[i].n_inputs;
    u->n = calloc(V, sizeof *u->n);
    u->start = calloc(V + 1, sizeof *u->start);
    u->node = malloc((E ? E : 1) * sizeof *u->node);
    int *fill = calloc(V, sizeof *fill);
    if (!u->n || !u->start || !u->node || !fill) {
        free(fill);
        dlp_feat_uses_free(u);
        return false;
    }
    for (size_t i = 0; i < g->n_nodes; i++)
        for (int k = 0; k < g->nodes[i].n_inputs; k++)
            if (g->nodes[i].inputs[k] >= 0) u->n[g->nodes[i].inputs[k]]++;
    for (size_t v = 0; v < g->n_values; v++)
        u->start[v + 1] = u->start[v] + u->n[v];
    for (size_t i = 0; i < g->n_nodes; i++)
        for (int k = 0; k < g->nodes[i].n_inputs; k++) {
            int v = g->nodes[i].inputs[k];
            if (v >= 0) u->node[u->start[v] + fill[v]++] = (int)i;
        }
    free(fill);
    return true;
}

void dlp_feat_uses_free(dlp_feat_uses *u) {
    free(u->n);
    free(u->start);
    free(u->node);
    u->n = u->start = u->node = NULL;
}

int dlp_feat_sole_use(const dlp_feat_uses *u, int v) {
    return v >= 0 && u->n[v] == 1 ? u->node[u->start[v]] : -1;
}

int dlp_feat_readers(const dlp_feat_uses *u, int v, int *c, int max) {
    int n = 0;
    if (v < 0) return 0;
    /* a node reading v through several inputs has consecutive slots */
    for (int e = u->start[v]; e < u->start[v] + u->n[v] && n < max; e++)
        if (!n || c[n - 1] != u->node[e]) c[n++] = u->node[e];
    return n;
}

/* The initializer behind v when v is a constant the exporter folded from
 * a per-call computation on weights: an initializer named after its
 * consumer ("onnx::Add_<n>"), possibly read through Identity
 * (deduplicated) or views, of v's element count; -1 otherwise. */
static int folded_const(const dlp_graph *g, int v) {
    int64_t nv = 0;
    if (!dlp_shape_numel(&g->values[v].shape, &nv)) return -1;
    for (int d = 0; d < 4 && v >= 0; d++) {
        const dlp_value *x = &g->values[v];
        int64_t n = 0;
        if (x->flags & DLP_V_INITIALIZER)
            return is_weight_init(x) && x->name &&
                   !strncmp(x->name, "onnx::", 6) &&
                   dlp_shape_numel(&x->shape, &n) && n == nv ? v : -1;
        const dlp_node *p = dlp_feat_producer_of(g, v);
        if (!p || p->n_inputs < 1 ||
            (strcmp(p->op_type, "Identity") && strcmp(p->op_type, "Unsqueeze") &&
             strcmp(p->op_type, "Reshape")))
            return -1;
        v = p->inputs[0];
    }
    return -1;
}

/* The PV product after softmax output u: forward through Cast / Dropout
 * / the NaN guard (Where(IsNaN(w), 0, w), which the SDPA symbolic adds)
 * to a MatMul reading it as its first operand. Returns that node, -1
 * when the chain is another; the values passed on the way go to
 * fchain[*nf ..] (at most 6) and the one the MatMul reads to *last. */
static int pv_after(const dlp_graph *g, const dlp_feat_uses *us, int u,
                    int *fchain, int *nf, int *last) {
    int cs[3];
    for (;;) {
        int m = dlp_feat_readers(us, u, cs, 3);
        if (m == 2) {                       /* IsNaN + Where */
            int a = cs[0], b = cs[1];
            if (strcmp(g->nodes[a].op_type, "IsNaN")) { a = cs[1]; b = cs[0]; }
            if (strcmp(g->nodes[a].op_type, "IsNaN") ||
                strcmp(g->nodes[b].op_type, "Where") || *nf >= 6)
                return -1;
            fchain[(*nf)++] = g->nodes[a].outputs[0];
            fchain[(*nf)++] = u;
            u = g->nodes[b].outputs[0];
            continue;
        }
        if (m != 1) return -1;
        const dlp_node *n = &g->nodes[cs[0]];
        if (!strcmp(n->op_type, "MatMul") && n->inputs[0] == u) {
            *last = u;
            return cs[0];
        }
        if (*nf >= 6 || (strcmp(n->op_type, "Cast") &&
                         strcmp(n->op_type, "Dropout")))
            return -1;
        fchain[(*nf)++] = u;
        u = n->outputs[0];
    }
}

/* Marks virt[] for the outputs of the exported SDPA pattern around the
 * Softmax node s; returns true on a match, with the QK^T and PV MatMul
 * nodes in *qk and *pv, and in *fbias the initializer of a folded
 * constant bias on the scores (-1: none). Without a match *qk and *pv
 * still name the products of an SDPA call with a learned bias (-1: none). */
static bool mark_sdpa(const dlp_graph *g, const dlp_feat_uses *us,
                      const uint8_t *dyn, int s, uint8_t *virt, uint8_t *fused,
                      uint8_t *masknode, bool *biased, int *qk, int *pv,
                      int *fbias) {
    *biased = false;
    *qk = *pv = *fbias = -1;
    bool bias = false;
    int wbias = -1;
    const dlp_node *sm = &g->nodes[s];
    if (sm->n_inputs < 1 || sm->n_outputs < 1) return false;
    /* back from the Softmax through the mask Add / Where / Cast to QK^T */
    int chain[8], nc = 0, v = sm->inputs[0];
    const dlp_node *p = dlp_feat_producer_of(g, v);
    const dlp_node *cn[8];
    while (p && nc < 4 && (!strcmp(p->op_type, "Add") ||
                           !strcmp(p->op_type, "Where") ||
                           !strcmp(p->op_type, "Cast"))) {
        cn[nc] = p;
        chain[nc++] = p->outputs[0];
        v = !strcmp(p->op_type, "Where") ? p->inputs[2] : p->inputs[0];
        if (!strcmp(p->op_type, "Add")) {   /* the scores may be either */
            const dlp_node *a = dlp_feat_producer_of(g, p->inputs[0]);
            if (!a || strcmp(a->op_type, "MatMul")) v = p->inputs[1];
            /* an additive bias computed from a weight or from input data
             * (T5's relative position bias): PyTorch runs this attention
             * with the scores materialised (T5 memory grows by ~10 bytes
             * per score element: scores, biased scores, softmax), so no
             * fusion; shape-only masks stay fused. A bias the exporter
             * folded into a weight initializer (BEiT's relative position
             * bias at its fixed image size) is a float attn_mask of an
             * SDPA call: fused, the scores never built (see below) */
            int o = p->inputs[v == p->inputs[0] ? 1 : 0];
            if (o >= 0 && !(g->values[o].flags & DLP_V_INPUT)) {
                int f = folded_const(g, o);
                if (f >= 0) wbias = f;
                else if (dyn[o] || is_weight_init(&g->values[o])) bias = true;
            }
        }
        p = dlp_feat_producer_of(g, v);
    }
    if (!p || strcmp(p->op_type, "MatMul") || p->n_inputs < 2) {
        *biased = bias;
        return false;
    }
    const dlp_node *mq = dlp_feat_producer_of(g, p->inputs[0]);
    const dlp_node *mk = dlp_feat_producer_of(g, p->inputs[1]);
    /* a learned bias on the SDPA call itself (timm's BEiT passes its
     * relative position bias as attn_mask): the memory-efficient kernel
     * takes a float mask and keeps the scores unmaterialised */
    bool call = mq && mk && !strcmp(mq->op_type, "Mul") && !strcmp(mk->op_type, "Mul");
    if (!call || bias) {
        *biased = bias || wbias >= 0;
        /* still an SDPA call: *pv names its PV product (the kernel's
         * output layout, feat_layout.c) */
        int fc[8], nfc = 0, last = -1;
        if (call) {
            *qk = (int)(p - g->nodes);
            *pv = pv_after(g, us, sm->outputs[0], fc, &nfc, &last);
        }
        return false;
    }
    int sc = p->outputs[0];
    int fchain[8], nf = 0, u = -1;
    *pv = pv_after(g, us, sm->outputs[0], fchain, &nf, &u);
    if (*pv < 0) return false;
    fused[*pv] = 1;                       /* PV product: inside the kernel */
    virt[sc] = 1;
    *qk = (int)(p - g->nodes);
    fused[p - g->nodes] = 1;
    fused[mq - g->nodes] = fused[mk - g->nodes] = 1;  /* the scales */
    for (int i = 0; i < nc; i++) {
        virt[chain[i]] = 1;
        masknode[cn[i] - g->nodes] = 1;
    }
    for (int i = 0; i < nf; i++)       /* NaN guard, Cast, Dropout */
        if (g->values[fchain[i]].producer >= 0)
            fused[g->values[fchain[i]].producer] = 1;
    /* a constant float attn_mask too: the memory-efficient kernel pads
     * the [1, heads, Sq, Sk] mask before it expands it (a view), so no
     * block of the scores' size is built. Allocator history at the peak
     * (thirtieth session, H200, eager): beit_base_patch16_384 fp16 b64
     * and fp32 b32 peak in the MLP (fc1 and GELU outputs, 216 MiB each,
     * three token-sized blocks), not at the attention */
    virt[sm->outputs[0]] = 1;
    for (int i = 0; i < nf; i++) virt[fchain[i]] = 1;
    virt[u] = 1;
    *fbias = wbias;
    if (us->n[p->inputs[0]] == 1) virt[p->inputs[0]] = 1;
    if (us->n[p->inputs[1]] == 1) virt[p->inputs[1]] = 1;
    return true;
}

/* Bytes PyTorch's math attention path allocates besides its inputs, for
 * the fused-pattern attention whose QK^T and PV products are nodes qk and
 * pv, at fp32 (h 0) or half precision (h 1); 0 when the shapes are not
 * known. The fused kernels take 4-D [B, heads, S, D] operands only;
 * others (NesT's and Hiera's [B, heads, windows, N, D]) go to
 * _scaled_dot_product_attention_math (ATen attention.cpp), which keeps the
 * scaled query, scales the key in a temporary, and runs _safe_softmax
 * (float scores, float softmax, a bool block of the scores' shape:
 * DLP_MEM_MATH_SDPA_BYTES); at half precision it first upcasts query, key
 * and value to float. Its operands are permuted views of one qkv
 * projection, so at::matmul, folding their batch dimensions, copies each
 * into a contiguous block. The largest of the block sets live at the
 * QK^T product (scaled query and key, their copies, scores), at the
 * softmax (scaled query, scores, softmax, bool) and at the PV product
 * (scaled query, softmax, the value's copy, float output). Key and value
 * are read at their own sizes: Hiera's stage transitions pool the query
 * to a quarter of the tokens and attend over all of them. NesT fp16 rows
 * sat 42% under the estimate (17 MiB per image at nest_small's first
 * level) without it. Allocator history at the peak (twenty-ninth session,
 * H200, eager): hiera_tiny fp16 b64, the qkv projection of the first
 * stage-2 block (220.5 MiB), four float blocks of its key's size (147
 * MiB: key, value, scaled key, its copy), float query-sized ones (36.75)
 * and the scores (24.5); twins_svt_small fp16 b128, the qkv (147), float
 * scores (150) and seven float blocks of the query's size (98). */
static void math_sdpa_bytes(const dlp_graph *g, int qk, int pv, double out[2]) {
    out[0] = out[1] = 0;
    int64_t ns = 0, nq = 0, nk = 0, nv = 0, no = 0;
    const dlp_node *a = &g->nodes[qk], *b = &g->nodes[pv];
    if (a->n_inputs < 2 || a->n_outputs < 1 || b->n_inputs < 2 ||
        b->n_outputs < 1 || a->inputs[0] < 0 || a->inputs[1] < 0 ||
        a->outputs[0] < 0 || b->inputs[1] < 0 || b->outputs[0] < 0 ||
        !dlp_shape_numel(&g->values[a->outputs[0]].shape, &ns) ||
        !dlp_shape_numel(&g->values[a->inputs[0]].shape, &nq) ||
        !dlp_shape_numel(&g->values[a->inputs[1]].shape, &nk) ||
        !dlp_shape_numel(&g->values[b->inputs[1]].shape, &nv) ||
        !dlp_shape_numel(&g->values[b->outputs[0]].shape, &no))
        return;
    double m = fmax(fmax(8.0 * nq + 8.0 * nk + 4.0 * ns,
                         4.0 * nq + DLP_MEM_MATH_SDPA_BYTES * ns),
                    4.0 * nq + 4.0 * ns + 4.0 * nv + 4.0 * no);
    out[0] = m;
    out[1] = m + 4.0 * (double)(nq + nk + nv);     /* float q, k, v */
}

/* Whether the values of the fused attention whose PV product is node pv
 * are repeated to more heads than they have: the export of SDPA's
 * enable_gqa (and of Hugging Face's repeat_kv) reads V through
 * Unsqueeze -> Expand -> Reshape from a [B, kv_heads, S, D] tensor to
 * [B, heads, S, D]. */
static bool sdpa_gqa(const dlp_graph *g, int pv) {
    const dlp_node *m = &g->nodes[pv];
    if (m->n_inputs < 2 || m->inputs[1] < 0) return false;
    const dlp_value *v = &g->values[m->inputs[1]];
    static const char *const chain[] = {"Reshape", "Expand", "Unsqueeze"};
    const dlp_node *p = NULL;
    int x = m->inputs[1];
    for (int i = 0; i < 3; i++) {
        p = dlp_feat_producer_of(g, x);
        if (!p || strcmp(p->op_type, chain[i]) || p->n_inputs < 1 ||
            p->inputs[0] < 0)
            return false;
        x = p->inputs[0];
    }
    const dlp_value *kv = &g->values[x];
    return v->shape.rank == 4 && kv->shape.rank == 4 &&
           v->shape.dims[1].value > 0 && kv->shape.dims[1].value > 0 &&
           v->shape.dims[1].value > kv->shape.dims[1].value;
}

/* The bias of an attention left unfused by a learned additive bias
 * (Softmax node s, mark_sdpa's *biased), when the exporter applied a mask
 * the model never builds to it: Where(mask, bias, -inf) with the mask
 * computed from shapes and constants alone (Hugging Face's T5 given input
 * ids only). PyTorch adds the bias as it is, [1, heads, Sq, Sk], held from
 * the first layer to the last; the exported Where broadcasts it to the
 * batch. Sets alias[] of the Where's output to the bias, so that the walk
 * counts one block of the bias' size, live until the last layer reads it
 * (allocator history in feat.h, DLP_MEM_BIAS_BOOL_BYTES). */
static void alias_unmasked_bias(const dlp_graph *g, const uint8_t *dyn, int s,
                                int *alias) {
    const dlp_node *sm = &g->nodes[s];
    const dlp_node *p = sm->n_inputs > 0 ? dlp_feat_producer_of(g, sm->inputs[0])
                                         : NULL;
    while (p && p->n_inputs >= 1 && !strcmp(p->op_type, "Cast"))
        p = dlp_feat_producer_of(g, p->inputs[0]);
    if (!p || strcmp(p->op_type, "Add") || p->n_inputs != 2) return;
    for (int k = 0; k < 2; k++) {
        const dlp_node *w = dlp_feat_producer_of(g, p->inputs[k]);
        if (!w || strcmp(w->op_type, "Where") || w->n_inputs != 3 ||
            w->n_outputs != 1 || w->inputs[0] < 0 || w->inputs[1] < 0)
            continue;
        int64_t nb, nw;
        if (dyn[w->inputs[0]] || !dyn[w->inputs[1]] ||
            !dlp_shape_numel(&g->values[w->inputs[1]].shape, &nb) ||
            !dlp_shape_numel(&g->values[w->outputs[0]].shape, &nw) || nb > nw)
            continue;
        alias[w->outputs[0]] = w->inputs[1];
    }
}

/* Marks mark[] (1) for the nodes of an attention left unfused by a learned
 * additive bias around the Softmax node s (mark_sdpa's *biased): back
 * through the bias Add / Where / Cast chain to the QK^T MatMul and the
 * Muls scaling its operands, forward through Cast / Dropout / the NaN
 * guard to the PV MatMul. PyTorch runs all of them in float at half
 * precision (half_f32; DLP_FP16_CLAMP_BYTES in feat.h gives the trace
 * evidence), as one call of its math path (battn). Returns the query's
 * elements. */
static double mark_math_attn(const dlp_graph *g, const dlp_feat_uses *us,
                             int s, uint8_t *mark) {
    const dlp_node *sm = &g->nodes[s];
    if (sm->n_inputs < 1 || sm->n_outputs < 1) return 0;
    const dlp_node *p = dlp_feat_producer_of(g, sm->inputs[0]), *chain[4];
    int nc = 0;
    while (p && nc < 4 && (!strcmp(p->op_type, "Add") ||
                           !strcmp(p->op_type, "Where") ||
                           !strcmp(p->op_type, "Cast"))) {
        chain[nc++] = p;
        int v = !strcmp(p->op_type, "Where") ? p->inputs[2] : p->inputs[0];
        if (!strcmp(p->op_type, "Add")) {
            const dlp_node *a = dlp_feat_producer_of(g, p->inputs[0]);
            if (!a || strcmp(a->op_type, "MatMul")) v = p->inputs[1];
        }
        p = dlp_feat_producer_of(g, v);
    }
    if (!p || strcmp(p->op_type, "MatMul") || p->n_inputs < 2) return 0;
    int64_t nq = 0;
    if (p->inputs[0] < 0 || !dlp_shape_numel(&g->values[p->inputs[0]].shape, &nq))
        nq = 0;
    mark[p - g->nodes] = 1;
    for (int k = 0; k < 2; k++) {
        const dlp_node *m = dlp_feat_producer_of(g, p->inputs[k]);
        if (m && !strcmp(m->op_type, "Mul")) mark[m - g->nodes] = 1;
    }
    for (int i = 0; i < nc; i++) mark[chain[i] - g->nodes] = 1;
    mark[s] = 1;
    int u = sm->outputs[0], cs[3];
    for (int steps = 0; steps < 6; steps++) {
        int m = dlp_feat_readers(us, u, cs, 3);
        if (m == 2) {                       /* IsNaN + Where */
            int a = cs[0], b = cs[1];
            if (strcmp(g->nodes[a].op_type, "IsNaN")) { a = cs[1]; b = cs[0]; }
            if (strcmp(g->nodes[a].op_type, "IsNaN") ||
                strcmp(g->nodes[b].op_type, "Where"))
                return (double)nq;
            mark[a] = mark[b] = 1;
            u = g->nodes[b].outputs[0];
            continue;
        }
        if (m != 1) return (double)nq;
        const dlp_node *n = &g->nodes[cs[0]];
        if (!strcmp(n->op_type, "MatMul") && n->inputs[0] == u) {
            mark[cs[0]] = 1;          /* PV product */
            return (double)nq;
        }
        if (strcmp(n->op_type, "Cast") && strcmp(n->op_type, "Dropout"))
            return (double)nq;
        mark[cs[0]] = 1;
        u = n->outputs[0];
    }
    return (double)nq;
}

/* Hugging Face's fp16 inf clamp (T5): after each sub-layer's residual Add
 * -- an Add of two float activations of the output's shape [B, S, D] --
 * of a graph with a learned-bias attention and a sequence dimension, the
 * hidden states are checked (isinf().any()) and clamped; clamp_elems[] of
 * those Adds gets their element count. The other Adds of T5 are a
 * constant's (the norm's epsilon), int64 [S, S] position buckets or the
 * rank-4 score bias. */
static void mark_clamps(dlp_feat_graph *fg, const dlp_graph *g) {
    for (size_t i = 0; i < g->n_nodes; i++) {
        const dlp_node *n = &g->nodes[i];
        if (strcmp(n->op_type, "Add") || n->n_inputs != 2 ||
            n->n_outputs < 1 || n->outputs[0] < 0 || fg->half_f32[i])
            continue;
        const dlp_value *y = &g->values[n->outputs[0]];
        int64_t ne = 0;
        if (y->shape.rank != 3 || !dlp_dtype_is_float(y->dtype) ||
            !dlp_shape_numel(&y->shape, &ne) || ne <= 0)
            continue;
        bool ok = true;
        for (int k = 0; k < 2 && ok; k++) {
            int v = n->inputs[k];
            int64_t nk = 0;
            ok = v >= 0 && is_act(g, &g->values[v]) &&
                 !(g->values[v].flags & DLP_V_INPUT) &&
                 dlp_shape_numel(&g->values[v].shape, &nk) && nk == ne;
        }
        if (!ok) continue;
        fg->clamp_elems[i] = (float)ne;
    }
}

static bool is_blas(const char *op) {
    return !strcmp(op, "MatMul") || !strcmp(op, "Gemm");
}

/* Whether autograd saves input k of n for backward (PyTorch's derivative
 * formulas): matmul / conv save their activation operands, products and
 * quotients the other operand when that one needs a gradient (an
 * activation or a weight, not a constant scalar), normalisations and
 * nonlinearities defined on their input save it. Additions, views, data
 * movement, casts and pooling by averaging save nothing. */
static bool saves_input(const dlp_graph *g, const dlp_node *n, int k) {
    static const char *const all[] = {
        "MatMul", "Gemm", "Conv", "ConvTranspose", "Pow", "Erf",
        "LayerNormalization", "BatchNormalization", "InstanceNormalization",
        "GroupNormalization", "Sin", "Cos", "Log", "Clip", "HardSwish",
        "HardSigmoid", "LeakyRelu", "Gelu", "MaxPool", "Mish", "Softplus",
        "Elu", "Selu", "PRelu", "ReduceMax", "ReduceMin", "Abs",
        "ReduceL2", "Einsum", NULL};
    if (dlp_feat_in_list(n->op_type, all)) return true;
    if (!strcmp(n->op_type, "Mul") || !strcmp(n->op_type, "Div")) {
        if (n->n_inputs != 2) return false;
        int o = n->inputs[1 - k];
        if (o < 0) return false;
        const dlp_value *x = &g->values[o];
        if (x->flags & DLP_V_INITIALIZER)
            return x->n_const > DLP_MEM_MASK_CONST_MAX;
        return is_act(g, x) || (!strcmp(n->op_type, "Div") && k == 1);
    }
    return false;
}

/* A recurrent layer run by cuDNN (ONNX LSTM, GRU, RNN). */
static bool is_rnn(const dlp_node *n) {
    static const char *const rnn_ops[] = {"LSTM", "GRU", "RNN", NULL};
    return dlp_feat_in_list(n->op_type, rnn_ops);
}

/* Per step, direction and hidden unit, how many elements of its reserve
 * buffer cuDNN's training forward of a recurrent layer writes and
 * autograd keeps beside the input and output _cudnn_rnn saves: LSTM 5,
 * GRU 6, measured (tools/collect/probe_rnn.py on an H200, PyTorch 2.11,
 * cuDNN 9.19: the saved reserve of 288 one-layer configurations each,
 * 5.000-5.005 and 6.000-6.005 units at batch 64 and above, both in
 * float32 and under fp16 autocast, in the input's element size; a few
 * percent more at batch 1); a plain RNN 1 (the pre-activation of each
 * step; not measured). docs/COST.md, "A recurrent layer's saved state". */
static double rnn_reserve_per_unit(const char *op) {
    return !strcmp(op, "LSTM") ? 5 : !strcmp(op, "GRU") ? 6 : 1;
}

/* Whether recurrent node n's input is a copy PyTorch made before the
 * call, which _cudnn_rnn saves as its input: a block of its own, not the
 * view's base. The exporter writes `x.permute(...).reshape(...)` as
 * Transpose -> Reshape, and reshaping the non-contiguous permuted tensor
 * copies it (Sequencer2D's vertical LSTM: the columns gathered into
 * sequences; tests/gen_rnn_fixture.py checks the copy against CPU
 * PyTorch); a batch_first layer's own Transpose to time-major, which the
 * exporter adds after it, runs inside the call. */
static bool rnn_input_copied(const dlp_graph *g, const dlp_node *n) {
    if (!is_rnn(n) || n->n_inputs < 1 || n->inputs[0] < 0) return false;
    const dlp_node *p = dlp_feat_producer_of(g, n->inputs[0]);
    if (p && !strcmp(p->op_type, "Transpose") && p->n_inputs > 0 &&
        p->inputs[0] >= 0)
        p = dlp_feat_producer_of(g, p->inputs[0]);
    if (!p || strcmp(p->op_type, "Reshape") || p->n_inputs < 1 || p->inputs[0] < 0)
        return false;
    const dlp_node *q = dlp_feat_producer_of(g, p->inputs[0]);
    return q && !strcmp(q->op_type, "Transpose");
}

/* Bytes of the reserve buffer of recurrent node n in training
 * (rnn_reserve_per_unit x steps x batch x directions x hidden_size, in
 * the input's element size); 0 for any other node or unknown shapes. */
static double rnn_reserve_bytes(const dlp_graph *g, const dlp_node *n) {
    if (!is_rnn(n) || n->n_inputs < 1 || n->inputs[0] < 0) return 0;
    const dlp_value *x = &g->values[n->inputs[0]];
    if (x->shape.rank != 3 || x->shape.dims[0].value < 0 || x->shape.dims[1].value < 0)
        return 0;
    int64_t hidden = dlp_node_attr_int(n, "hidden_size", -1);
    if (hidden <= 0) return 0;
    const char *dir = dlp_node_attr_str(n, "direction", "forward");
    double dirs = !strcmp(dir, "bidirectional") ? 2 : 1;
    return rnn_reserve_per_unit(n->op_type) * (double)x->shape.dims[0].value *
           (double)x->shape.dims[1].value * dirs * (double)hidden *
           (double)dlp_dtype_size(x->dtype);
}

/* Whether node n's backward keeps its output k for the training estimate's
 * blocks alone: a recurrent layer's Y (_cudnn_rnn saves its output
 * beside the input and the reserve; not the last states). */
static bool train_saves_output(const dlp_node *n, int k) {
    return k == 0 && is_rnn(n);
}

/* Whether node n's backward keeps its input k for the training estimate's
 * blocks alone (saves_input's other rules hold for every count): an
 * AveragePool's input (AvgPool2DBackward0 saves it: PoolFormer's token
 * mixer, DenseNet's transitions; pool_saved_input), and a Mul's operand
 * whose other operand is a module's parameter (a named initializer: a
 * '.' in its name, not the exporter's "onnx::") that saves_input takes
 * for a constant: one of at most DLP_MEM_MASK_CONST_MAX elements
 * (StarReLU's one-element scale in the MetaFormers, counted only where
 * the exporter merged it into an Identity) or one whose contents the file
 * does not hold (n_const 0: a stripped weight). The counts the inference and
 * LLM networks read (saved_act_bytes, the v65 count) stay as they were
 * trained on. */
static bool train_saves_input(const dlp_graph *g, const dlp_node *n, int k) {
    if (k == 0 && (!strcmp(n->op_type, "AveragePool") || is_rnn(n))) return true;
    if (strcmp(n->op_type, "Mul") || n->n_inputs != 2 || n->inputs[1 - k] < 0)
        return false;
    const dlp_value *x = &g->values[n->inputs[1 - k]];
    return (x->flags & DLP_V_INITIALIZER) && x->name && strchr(x->name, '.') &&
           strncmp(x->name, "onnx::", 6);
}

/* The value whose block an AveragePool's backward keeps for its input v
 * (train_saves_input). avg_pool2d saves its unpadded input, and the
 * exporter writes the padding of a count_include_pad pool as a constant
 * Pad -> AveragePool (pads 0), so when v is such a Pad's output, read by
 * the pool alone, the Pad's input (torchvision's inception_v3 at batch
 * 2: 18.3 MB over autograd's 197.7 MB with the padded copies); v
 * otherwise. */
static int pool_saved_input(const dlp_graph *g, const dlp_feat_uses *us,
                            int v) {
    int c[2];
    if (v < 0 || dlp_feat_readers(us, v, c, 2) != 1) return v;
    const dlp_node *p = dlp_feat_producer_of(g, v);
    if (!p || strcmp(p->op_type, "Pad") || p->n_inputs < 1 || p->inputs[0] < 0 ||
        strcmp(dlp_node_attr_str(p, "mode", "constant"), "constant"))
        return v;
    return p->inputs[0];
}

/* Whether MatMul n multiplies two activations of rank 3 or more (a
 * batched product: at::matmul folds both operands' batch dimensions). */
static bool batched_matmul(const dlp_graph *g, const dlp_node *n) {
    if (strcmp(n->op_type, "MatMul") || n->n_inputs != 2) return false;
    for (int k = 0; k < 2; k++) {
        int x = n->inputs[k];
        if (x < 0 || !is_act(g, &g->values[x]) || g->values[x].shape.rank < 3)
            return false;
    }
    return true;
}

/* Whether MatMul n is a Linear (a 2-D weight initializer as its second
 * operand) on a Transpose's output that moves the last axis: at::matmul
 * folds the input to [-1, in_features] with reshape, which copies a
 * permuted input, and the product saves that copy for backward, not the
 * view's base (CaiT's talking heads: a Linear over the heads of the
 * permuted [B, heads, N, N] scores, before and after the softmax, whose
 * output the softmax saves besides). Under autocast the half copy the
 * cast makes is the saved block already (amp_half_ops). */
static bool linear_folds_copy(const dlp_graph *g, const dlp_node *n) {
    if (strcmp(n->op_type, "MatMul") || n->n_inputs != 2 || n->inputs[0] < 0 ||
        n->inputs[1] < 0)
        return false;
    const dlp_value *w = &g->values[n->inputs[1]];
    if (!(w->flags & DLP_V_INITIALIZER) || w->shape.rank != 2) return false;
    const dlp_node *t = dlp_feat_producer_of(g, n->inputs[0]);
    if (!t || strcmp(t->op_type, "Transpose")) return false;
    const dlp_attr *a = dlp_node_attr(t, "perm");
    int r = g->values[n->inputs[0]].shape.rank;
    return a && a->type == DLP_ATTR_INTS && a->n == r && r >= 3 &&
           a->ints[r - 1] != r - 1;
}

/* The value whose storage a saved v keeps alive in PyTorch: v itself,
 * or, when v is a Slice or Split of an activation (views there, copies in
 * the liveness above), the tensor it was cut from, followed through
 * chains of them. With views, also through the ops that never copy
 * (Squeeze, Unsqueeze, Identity, Transpose) between the cuts: the dynamo exporter
 * writes qkv.unbind(0) as Slice -> Squeeze per part, so the value
 * attention saves is the Squeeze's, whose base is the whole qkv
 * projection (naflexvit: only v reached the product, q and k through
 * the scale's Mul of the exported SDPA, so 1 of the 3 parts counted). Not
 * through Reshape: nn.MultiheadAttention's
 * k.contiguous().view(...) after chunk copies each part (torchvision's
 * ViT, test_train_saved_torchvision). Without views, the inference and
 * LLM features' count (saved_train_bytes_v65). */
static int slice_base(const dlp_graph *g, int v, const uint8_t *virt,
                      const uint8_t *hostv, const int *troot, bool views) {
    int base = v;
    for (int hops = 0; hops < 16; hops++) {
        const dlp_node *p = dlp_feat_producer_of(g, v);
        if (!p || p->n_inputs < 1 || p->inputs[0] < 0) break;
        int x = p->inputs[0];
        if (virt[x] || hostv[x] || !is_act(g, &g->values[x])) break;
        bool cut = !strcmp(p->op_type, "Slice") || !strcmp(p->op_type, "Split");
        bool view = !strcmp(p->op_type, "Squeeze") || !strcmp(p->op_type, "Unsqueeze") ||
                    !strcmp(p->op_type, "Identity") || !strcmp(p->op_type, "Transpose");
        if (!cut && (!views || !view || troot[x] != troot[v])) break;
        v = x;
        if (cut) base = x;
    }
    return base;
}

/* The single use of value v (its consumer node), or NULL when v has
 * another number of uses (dlp_feat_sole_use). */
static const dlp_node *only_use(const dlp_graph *g, const dlp_feat_uses *us,
                                int v) {
    int i = dlp_feat_sole_use(us, v);
    return i >= 0 ? &g->nodes[i] : NULL;
}

/* The erf form of GELU around Erf node e, as the exporter writes nn.GELU
 * and F.gelu (opset < 20): d = Div(x, sqrt 2) or Mul(x, 1 / sqrt 2) -> e
 * -> a = Add(., 1) -> m = Mul(x, .) [-> Mul(0.5)], the Erf's and the Add's
 * outputs each read by the next node alone. Sets *d, *a, *m on a match. */
static bool match_erf_gelu(const dlp_graph *g, const dlp_feat_uses *us,
                           const dlp_node *e, const dlp_node **d,
                           const dlp_node **a, const dlp_node **m) {
    if (strcmp(e->op_type, "Erf") || e->n_inputs != 1 || e->n_outputs != 1 ||
        e->outputs[0] < 0)
        return false;
    *d = dlp_feat_producer_of(g, e->inputs[0]);
    if (!*d || (strcmp((*d)->op_type, "Div") && strcmp((*d)->op_type, "Mul")) ||
        (*d)->n_inputs != 2 || (*d)->inputs[0] < 0 || (*d)->inputs[1] < 0 ||
        !is_act(g, &g->values[(*d)->inputs[0]]) ||
        is_act(g, &g->values[(*d)->inputs[1]]))
        return false;
    int x = (*d)->inputs[0];
    *a = only_use(g, us, e->outputs[0]);
    if (!*a || strcmp((*a)->op_type, "Add") || (*a)->n_inputs != 2 ||
        (*a)->n_outputs != 1)
        return false;
    int one = (*a)->inputs[(*a)->inputs[0] == e->outputs[0] ? 1 : 0];
    if (one < 0 || is_act(g, &g->values[one])) return false;
    *m = only_use(g, us, (*a)->outputs[0]);
    return *m && !strcmp((*m)->op_type, "Mul") && (*m)->n_inputs == 2 &&
           (*m)->n_outputs == 1 &&
           (*m)->inputs[(*m)->inputs[0] == (*a)->outputs[0] ? 1 : 0] == x;
}

/* SiLU as the exporter writes nn.SiLU and F.silu around Sigmoid node n:
 * Sigmoid(x) -> Mul(x, s), the sigmoid read by that Mul alone. Returns
 * the Mul's node index, or -1. */
static int match_silu(const dlp_graph *g, const dlp_feat_uses *us,
                      const dlp_node *n) {
    if (strcmp(n->op_type, "Sigmoid") || n->n_inputs < 1 || n->n_outputs < 1 ||
        n->inputs[0] < 0 || n->outputs[0] < 0)
        return -1;
    int x = n->inputs[0], sg = n->outputs[0];
    const dlp_node *m = only_use(g, us, sg);
    if (!m || strcmp(m->op_type, "Mul") || m->n_inputs != 2 ||
        !((m->inputs[0] == x && m->inputs[1] == sg) ||
          (m->inputs[1] == x && m->inputs[0] == sg)))
        return -1;
    return (int)(m - g->nodes);
}

/* GELU's erf form for training: autograd runs one GELU and saves x alone
 * (GeluBackward reads its input); the scaled input and 1 + erf are
 * temporaries of the one kernel that no backward reads, though
 * saves_input would count them (for Erf and for the Mul). Marks those two
 * values in tmp[] (docs/COST.md, training peak memory, gives the
 * measurement). */
static void mark_gelu_temps(const dlp_graph *g, const dlp_feat_uses *us,
                            uint8_t *tmp) {
    for (size_t i = 0; i < g->n_nodes; i++) {
        const dlp_node *d, *a, *m;
        if (!match_erf_gelu(g, us, &g->nodes[i], &d, &a, &m))
            continue;
        tmp[d->outputs[0]] = 1;
        tmp[a->outputs[0]] = 1;
    }
}

/* Whether every activation the values below u come from, through at most
 * 8 elementwise nodes (Mul, Add, Sub, Div, Pow), is x, and every such
 * value other than x is read inside that region only; marks them in tmp
 * when so. */
static bool x_region_temps(const dlp_graph *g, const dlp_feat_uses *us, int u,
                           int x, int tsink, uint8_t *tmp) {
    static const char *const elem[] = {"Mul", "Add", "Sub", "Div", "Pow", NULL};
    int nodes[8], nn = 0, vals[8], nv = 0, stack[16], ns = 0;
    stack[ns++] = u;
    while (ns > 0) {
        int v = stack[--ns];
        if (v == x) continue;
        bool seen = false;
        for (int i = 0; i < nv; i++) seen |= vals[i] == v;
        if (seen) continue;
        const dlp_node *p = dlp_feat_producer_of(g, v);
        if (!p || !dlp_feat_in_list(p->op_type, elem) || nn == 8 || nv == 8) return false;
        nodes[nn++] = g->values[v].producer;
        vals[nv++] = v;
        for (int k = 0; k < p->n_inputs; k++) {
            int w = p->inputs[k];
            if (w < 0 || !is_act(g, &g->values[w])) continue;
            if (ns == 16) return false;
            stack[ns++] = w;
        }
    }
    /* the region's values are read by its nodes (or the tanh) alone */
    for (int i = 0; i < nv; i++) {
        int c[10];
        int nc = dlp_feat_readers(us, vals[i], c, 10);
        for (int j = 0; j < nc; j++) {
            bool in = c[j] == tsink;
            for (int k = 0; k < nn; k++) in |= c[j] == nodes[k];
            if (!in) return false;
        }
    }
    for (int i = 0; i < nv; i++) tmp[vals[i]] = 1;
    return true;
}

/* The tanh form of GELU (nn.GELU(approximate="tanh"), timm's
 * EfficientViT and others) as the exporter writes it:
 * u = c1 * (x + c2 * x^3) -> Tanh -> Add(1) -> Mul(h, .) with h = x or
 * 0.5 x. Autograd runs one GELU and saves x alone; the cube, the inner
 * value, the tanh and 1 + tanh are temporaries of the one kernel, though
 * saves_input / saves_output would count them. Marks them in tmp[]. */
static void mark_gelu_tanh_temps(const dlp_graph *g, const dlp_feat_uses *us,
                                 uint8_t *tmp) {
    for (size_t i = 0; i < g->n_nodes; i++) {
        const dlp_node *n = &g->nodes[i];
        if (strcmp(n->op_type, "Tanh") || n->n_inputs != 1 || n->n_outputs != 1 ||
            n->inputs[0] < 0 || n->outputs[0] < 0)
            continue;
        int c[2], t = n->outputs[0];
        if (dlp_feat_readers(us, t, c, 2) != 1) continue;
        const dlp_node *a = &g->nodes[c[0]];
        if (strcmp(a->op_type, "Add") || a->n_inputs != 2 || a->n_outputs != 1 ||
            a->outputs[0] < 0)
            continue;
        int one = a->inputs[a->inputs[0] == t ? 1 : 0];
        if (one < 0 || is_act(g, &g->values[one])) continue;
        if (dlp_feat_readers(us, a->outputs[0], c, 2) != 1) continue;
        const dlp_node *m = &g->nodes[c[0]];
        if (strcmp(m->op_type, "Mul") || m->n_inputs != 2) continue;
        int h = m->inputs[m->inputs[0] == a->outputs[0] ? 1 : 0];
        if (h < 0 || !is_act(g, &g->values[h])) continue;
        /* x is h, or h = x * constant (the 0.5, read by m alone) */
        const dlp_node *hp = dlp_feat_producer_of(g, h);
        int x0 = -1;
        if (hp && !strcmp(hp->op_type, "Mul") && hp->n_inputs == 2 &&
            dlp_feat_readers(us, h, c, 2) == 1)
            for (int k = 0; k < 2; k++)
                if (hp->inputs[k] >= 0 && is_act(g, &g->values[hp->inputs[k]]) &&
                    hp->inputs[1 - k] >= 0 &&
                    !is_act(g, &g->values[hp->inputs[1 - k]]))
                    x0 = hp->inputs[k];
        /* x = h itself, else x0 (x_region_temps marks only on success) */
        if (!x_region_temps(g, us, n->inputs[0], h, (int)i, tmp)) {
            if (x0 < 0 || !x_region_temps(g, us, n->inputs[0], x0, (int)i, tmp))
                continue;
            tmp[h] = 1;
        }
        tmp[t] = 1;
        tmp[a->outputs[0]] = 1;
    }
}

/* Whether value x is the exporter's copy of a deduplicated initializer
 * (torch.onnx merges initializers of equal value): the output of an
 * Identity that reads one. */
static bool dedup_copy(const dlp_graph *g, const dlp_value *x) {
    const dlp_node *p = dlp_feat_producer_of(g, (int)(x - g->values));
    return p && !strcmp(p->op_type, "Identity") && p->n_inputs >= 1 &&
           p->inputs[0] >= 0 && (g->values[p->inputs[0]].flags & DLP_V_INITIALIZER);
}

/* timm's LeViT, EfficientFormer(V2) and TinyViT gather their attention
 * biases, attention_biases[:, attention_bias_idxs], once in eval mode and
 * keep the result (attention_bias_cache) from the warm-up call on; the
 * export writes the Gather of the table by the int64 index on every call.
 * Adds each such [heads, Nq, Nk] result to fg->bias_cache_bytes (4 B per
 * element, scaled to the precision like the weights); the walk allocates
 * no block for it (a Gather of constants). The index is an initializer or
 * a Constant node's output; the table an initializer or, where the
 * exporter merged equal tables (timm initialises them to zeros, so the
 * blocks of a stage share one), an Identity's copy of one: levit_512_s8
 * counted 10.2 of its 4 x 9.4 MiB first-stage biases without those
 * (fp16). Allocator history
 * (twenty-ninth session, H200, eager): levit_conv_384_s8 fp16 b2 holds
 * 167.8 MiB before the forward against 53.8 MiB of parameters. Whether
 * node n is such a Gather (its kernel runs in the warm-up call only). */
static bool cached_bias(const dlp_graph *g, const dlp_node *n) {
    static const char sfx[] = "attention_biases";
    const size_t ls = sizeof sfx - 1;
    if (strcmp(n->op_type, "Gather") || n->n_inputs < 2 || n->n_outputs < 1 ||
        n->inputs[0] < 0 || n->inputs[1] < 0 || n->outputs[0] < 0)
        return false;
    const dlp_value *t = &g->values[n->inputs[0]];
    size_t ln = t->name ? strlen(t->name) : 0;
    return ((t->flags & DLP_V_INITIALIZER) || dedup_copy(g, t)) &&
           !is_act(g, &g->values[n->inputs[1]]) && ln >= ls &&
           !strcmp(t->name + ln - ls, sfx);
}

/* bias_cache_bytes and buffer_bytes of the cached biases (cached_bias) */
static void bias_cache(dlp_feat_graph *fg, const dlp_graph *g) {
    for (size_t i = 0; i < g->n_nodes; i++) {
        const dlp_node *n = &g->nodes[i];
        int64_t ne = 0;
        if (!cached_bias(g, n) ||
            !dlp_shape_numel(&g->values[n->outputs[0]].shape, &ne))
            continue;
        const dlp_value *ix = &g->values[n->inputs[1]];
        fg->bias_cache_bytes += 4.0 * (double)ne;
        /* the index, the module's int64 buffer, when the export wrote it
         * as a Constant node (an initializer is one of param_bytes') */
        if (!(ix->flags & DLP_V_INITIALIZER)) fg->buffer_bytes += (double)vbytes(ix);
    }
}

/* GroupNorm as the exporter writes nn.GroupNorm: Reshape(x, [B, G, -1])
 * -> InstanceNormalization n -> Reshape(back) -> Mul(weight) -> Add(bias).
 * PyTorch runs one native_group_norm, affine included, which saves x and
 * per-group statistics; the normalized tensor (the Mul's activation
 * operand, and the InstanceNormalization output it is a view of) is a
 * temporary of that one op. Returns the Mul node when n starts the
 * pattern, with the normalized tensor's two values in *y and *z. */
static const dlp_node *match_group_norm(const dlp_graph *g,
                                        const dlp_feat_uses *us, const dlp_node *n,
                                        int *y, int *z) {
    if (strcmp(n->op_type, "InstanceNormalization") || n->n_outputs < 1 ||
        n->outputs[0] < 0)
        return NULL;
    int c[2];
    *y = n->outputs[0];
    if (dlp_feat_readers(us, *y, c, 2) != 1) return NULL;
    const dlp_node *r = &g->nodes[c[0]];
    if (strcmp(r->op_type, "Reshape") || r->n_outputs < 1 || r->outputs[0] < 0)
        return NULL;
    *z = r->outputs[0];
    if (dlp_feat_readers(us, *z, c, 2) != 1) return NULL;
    const dlp_node *m = &g->nodes[c[0]];
    if (strcmp(m->op_type, "Mul") || m->n_inputs != 2) return NULL;
    int w = m->inputs[m->inputs[0] == *z ? 1 : 0];
    if (w < 0 || (is_act(g, &g->values[w]) && !dedup_copy(g, &g->values[w])))
        return NULL;                                        /* the gamma */
    return m;
}

/* The training estimate's group norms (match_group_norm): marks the
 * normalized tensor in tmp[]. */
static void mark_group_norm_temps(const dlp_graph *g, const dlp_feat_uses *us,
                                  uint8_t *tmp) {
    for (size_t i = 0; i < g->n_nodes; i++) {
        int y, z;
        if (!match_group_norm(g, us, &g->nodes[i], &y, &z)) continue;
        tmp[y] = 1;
        tmp[z] = 1;
    }
}

/* The inference walk's group norms: one output block, native_group_norm's
 * (the Mul's output, which the bias Add's output shares: alias[], which
 * the training count does not read); the normalized tensor is no block
 * (onek[]). timm's efficientnet_b0_gn fp16 b32: three [32, 96, 112, 112]
 * blocks counted at each GroupNormAct (the normalized tensor, Mul, Add)
 * where PyTorch has its output alone, 30% over the measured peak. */
static void alias_group_norm(const dlp_graph *g, const dlp_feat_uses *us,
                             uint8_t *onek, int *alias) {
    for (size_t i = 0; i < g->n_nodes; i++) {
        int y, z;
        const dlp_node *m = match_group_norm(g, us, &g->nodes[i], &y, &z);
        if (!m || m->n_outputs < 1 || m->outputs[0] < 0) continue;
        onek[y] = onek[z] = 1;
        int mo = m->outputs[0], ai = dlp_feat_sole_use(us, mo);
        if (ai < 0) continue;
        const dlp_node *a = &g->nodes[ai];
        if (strcmp(a->op_type, "Add") || a->n_outputs < 1 || a->outputs[0] < 0 ||
            a->n_inputs != 2)
            continue;
        int b = a->inputs[a->inputs[0] == mo ? 1 : 0];
        if (b >= 0 && (!is_act(g, &g->values[b]) || dedup_copy(g, &g->values[b])) &&
            vbytes(&g->values[a->outputs[0]]) == vbytes(&g->values[mo]))
            alias[a->outputs[0]] = mo;
    }
}

/* SiLU for training (match_silu): its backward reads x; the sigmoid is a
 * temporary of the one op (after a Conv or a BatchNormalization
 * mark_fused_acts already makes it virtual). */
static void mark_silu_temps(const dlp_graph *g, const dlp_feat_uses *us,
                            uint8_t *tmp) {
    for (size_t i = 0; i < g->n_nodes; i++)
        if (match_silu(g, us, &g->nodes[i]) >= 0)
            tmp[g->nodes[i].outputs[0]] = 1;
}

/* Whether n's output is saved (ops whose derivative is written in their
 * result). */
static bool saves_output(const char *op) {
    static const char *const out[] = {"Relu", "Sigmoid", "Tanh", "Softmax",
                                      "LogSoftmax", "Exp", "Sqrt", NULL};
    return dlp_feat_in_list(op, out);
}

/* Input + output bytes of a Conv that is not depthwise (groups == input
 * channels), 0 for any other node; *dense is set when groups == 1 and
 * *pointwise when, besides, the kernel and strides are all 1. */
static double conv_io_bytes(const dlp_graph *g, const dlp_node *n,
                            bool *dense, bool *pointwise) {
    *dense = *pointwise = false;
    if (strcmp(n->op_type, "Conv") || n->n_inputs < 1 || n->inputs[0] < 0 ||
        n->n_outputs < 1 || n->outputs[0] < 0)
        return 0;
    const dlp_value *x = &g->values[n->inputs[0]];
    int64_t groups = dlp_node_attr_int(n, "group", 1);
    if (groups > 1 && x->shape.rank >= 2 && x->shape.dims[1].value == groups)
        return 0;                                   /* depthwise */
    float kh, kw, sh, sw;
    kernel_pair(g, n, &kh, &kw);
    attr_pair(n, "strides", 1, &sh, &sw);
    *dense = groups == 1;
    *pointwise = *dense && kh <= 1 && kw <= 1 && sh <= 1 && sw <= 1;
    return (double)vbytes(x) + (double)vbytes(&g->values[n->outputs[0]]);
}

/* What an inference Conv allocates besides its output while it runs, at
 * fp32 (half = false) or fp16 / bf16, from conv_io_bytes' results:
 * DLP_MEM_CONV_WS_FACTOR x (input + output bytes) for a grouped (not
 * depthwise) conv at any precision and a dense one at half precision
 * unless it is pointwise with stride 1; a dense fp32 conv nothing (feat.h:
 * the per-convolution probe). The training walk counts the factor x io for
 * every conv that is not depthwise (max_conv_ws_bytes). */
static double conv_extra_bytes(double io, bool dense, bool pointwise, bool half) {
    if (dense && (!half || pointwise)) return 0;
    return DLP_MEM_CONV_WS_FACTOR * io;
}

/* The fp16 cuDNN workspace, bytes, of a dense 7x7 stride-1 Conv of a
 * 3-channel image batch of N > 1 at 96-256 px (feat.h:
 * DLP_MEM_FP16_STEM_WS_MIB), in place of conv_extra_bytes' input +
 * output (the probe measured all the call allocates besides its output);
 * 0 for any other node. */
static double fp16_stem_ws_bytes(const dlp_graph *g, const dlp_node *n) {
    if (strcmp(n->op_type, "Conv") || n->n_inputs < 1 || n->inputs[0] < 0)
        return 0;
    const dlp_shape *x = &g->values[n->inputs[0]].shape;
    float kh, kw, sh, sw;
    kernel_pair(g, n, &kh, &kw);
    attr_pair(n, "strides", 1, &sh, &sw);
    if (x->rank != 4 || x->dims[1].value != 3 || kh != 7 || kw != 7 ||
        sh != 1 || sw != 1 || dlp_node_attr_int(n, "group", 1) != 1)
        return 0;
    int64_t b = x->dims[0].value, h = x->dims[2].value, w = x->dims[3].value;
    int64_t r = h > w ? h : w, lo = h < w ? h : w;
    if (b < 2 || lo < 96 || r > 256) return 0;
    double mib = r < 128 ? DLP_MEM_FP16_STEM_WS_96_MIB
                 : r <= 224 ? DLP_MEM_FP16_STEM_WS_MIB
                            : DLP_MEM_FP16_STEM_WS_256_MIB;
    return (double)b * mib * 1048576.0;
}

/* A Conv whose BatchNormalization the eval-mode export folded into it.
 * The legacy exporter names the folded weight "onnx::Conv_<n>". The
 * dynamo exporter (torch.export, what the dataset uses where the legacy
 * one fails: HaloNet's unfold, VOLO's Col2Im) keeps the weight's module
 * name, drops the folded zero bias, and leaves the conv's output the name
 * of the batch norm's result it replaced, the tuple element "getitem_<n>"
 * of `_native_batch_norm_legit_no_training` (halonet26t: Conv(input,
 * m.stem.conv1.conv.weight) -> getitem -> Relu); a convolution's own
 * output is "conv2d_<n>" / "convolution_<n>". */
bool dlp_feat_folded_bn(const dlp_graph *g, const dlp_node *n) {
    if (strcmp(n->op_type, "Conv") || n->n_inputs < 2 || n->inputs[1] < 0 ||
        n->n_outputs < 1 || n->outputs[0] < 0)
        return false;
    const char *w = g->values[n->inputs[1]].name;
    const char *y = g->values[n->outputs[0]].name;
    return (w && !strncmp(w, "onnx::Conv", 10)) ||
           (y && !strncmp(y, "getitem", 7));
}

/* Output bytes of a Conv with a folded BatchNormalization
 * (dlp_feat_folded_bn), 0 for any other node: PyTorch runs the BatchNorm
 * as its own op, whose output is a second block of the conv output's
 * size until the conv output is freed. */
static double folded_bn_bytes(const dlp_graph *g, const dlp_node *n) {
    return dlp_feat_folded_bn(g, n) ? (double)vbytes(&g->values[n->outputs[0]])
                                    : 0;
}

/* For a Conv with a folded BatchNorm (folded_bn_bytes), the position in
 * g->topo of the last node of the norm module that ran the BatchNorm and
 * an activation, when its output's first reader is that activation: a
 * node named "<S>/act/..." whose module <S> does not hold the conv (timm's
 * BatchNormAct2d: norm1 = BN + act; the export names the act's ops
 * ".../norm1/act/<Op>"). PyTorch's caller holds the conv output, the
 * module's argument, until <S> returns: beside the BatchNorm's output and
 * the activation's. -1 otherwise (a BatchNorm that is its own module, as
 * in torchvision's ResNet, frees the conv output when it returns). pos[]
 * is each node's position in g->topo. */
static int norm_act_end(const dlp_graph *g, const dlp_node *n, const int *pos,
                        const dlp_feat_uses *us) {
    int v = n->outputs[0], first = -1;
    for (int e = us->start[v]; e < us->start[v + 1]; e++)
        if (first < 0 || pos[us->node[e]] < pos[first]) first = us->node[e];
    if (first < 0 || !g->nodes[first].name || !n->name) return -1;
    /* an activation the walk counts as PyTorch runs it, in place or one
     * kernel (the erf GELU begins with a Div); the tanh GELU's exported
     * temporaries (maxvit_*_tf) already stand in for the held block */
    static const char *const acts[] = {"Relu", "Clip", "Sigmoid", "HardSwish",
                                       "HardSigmoid", "LeakyRelu", "Elu",
                                       "Gelu", "Div", NULL};
    const char *c = g->nodes[first].name, *a = strstr(c, "/act/");
    if (!a || !dlp_feat_in_list(g->nodes[first].op_type, acts)) return -1;
    size_t L = (size_t)(a - c);
    if (!strncmp(n->name, c, L) && n->name[L] == '/') return -1;
    int end = pos[first];
    for (size_t t = (size_t)end + 1; t < g->n_nodes; t++) {
        const char *m = g->nodes[g->topo[t]].name;
        if (!m || strncmp(m, c, L) || m[L] != '/') break;
        end = (int)t;
    }
    return end;
}

static void raise_peak(double *peak, double live) {
    if (live > *peak) *peak = live;
}

/* Whether value v is a group norm's output (match_group_norm): the bias
 * Add after its Mul */
static bool group_norm_out(const dlp_graph *g, const dlp_feat_uses *us, int v) {
    const dlp_node *a = dlp_feat_producer_of(g, v);
    if (!a || strcmp(a->op_type, "Add") || a->n_inputs != 2) return false;
    for (int k = 0; k < 2; k++) {
        const dlp_node *m = dlp_feat_producer_of(g, a->inputs[k]);
        if (!m || strcmp(m->op_type, "Mul")) continue;
        for (int j = 0; j < m->n_inputs; j++) {
            const dlp_node *r = dlp_feat_producer_of(g, m->inputs[j]);
            const dlp_node *in = r && !strcmp(r->op_type, "Reshape")
                                     ? dlp_feat_producer_of(g, r->inputs[0]) : NULL;
            int y, z;
            if (in && match_group_norm(g, us, in, &y, &z) == m) return true;
        }
    }
    return false;
}

/* SiLU after a convolution or a norm (torchvision / timm CNN blocks,
 * timm's GroupNormAct), which PyTorch runs as one in-place op
 * (nn.SiLU(inplace=True)) and the exporter decomposes into Sigmoid(x) ->
 * Mul(x, s): the sigmoid is never allocated (virt[]; after a group norm
 * onek[] and silu_gn[node] set: the training count keeps those as
 * exported) and the product writes into x when x dies there;
 * *silu_x[node] = x for that Mul. The sigmoid must have the Mul as its
 * single use. Elsewhere the decomposition stays as exported: counting
 * Hugging Face MLPs' SiLU, or the erf form of GELU, as one kernel made
 * the LLaMA / Qwen2 / Mistral, BERT, ViT and Swin rows worse (the
 * exported order of the MLP's branches is not PyTorch's), while only
 * ConvNeXt's improved. */
static void mark_fused_acts(const dlp_graph *g, const dlp_feat_uses *us,
                            uint8_t *virt, uint8_t *onek, int *silu_x,
                            uint8_t *silu_gn) {
    for (size_t i = 0; i < g->n_nodes; i++) {
        const dlp_node *n = &g->nodes[i];
        int m = match_silu(g, us, n);
        if (m < 0) continue;
        const dlp_node *px = dlp_feat_producer_of(g, n->inputs[0]);
        if (px && (!strcmp(px->op_type, "Conv") ||
                   !strcmp(px->op_type, "BatchNormalization")))
            virt[n->outputs[0]] = 1;
        else if (group_norm_out(g, us, n->inputs[0]))
            onek[n->outputs[0]] = silu_gn[m] = 1;
        else
            continue;
        silu_x[m] = n->inputs[0];
    }
}

/* A Linear layer's bias, which the exporter writes as MatMul -> Add of a
 * constant: PyTorch adds it into the product's block (addmm's epilogue
 * for 2-D and contiguous 3-D inputs, matmul then an in-place add_ for
 * the rest), so the Add's output is the MatMul output's block when the
 * Add is its only reader. Sets alias[] of those Add outputs to the
 * product. Not when the MatMul reads a Transpose's output: matmul copies
 * a permuted input to a contiguous block first, of the size the Add's
 * block stands for (CaiT's talking heads, a Linear over the heads of the
 * permuted scores: 49 fp16 rows 0.06 points worse with the alias).
 * Evidence: torchvision ConvNeXt-T at fp16, b64 224 px, held its
 * LayerNorm output, the fc1 product and the bias Add's output at the
 * peak, one channel block (49 MiB) over the measured (docs/COST.md). */
static void alias_linear_bias(const dlp_graph *g, const dlp_feat_uses *us,
                              int *alias) {
    for (size_t i = 0; i < g->n_nodes; i++) {
        const dlp_node *n = &g->nodes[i];
        if (strcmp(n->op_type, "Add") || n->n_outputs != 1 || n->outputs[0] < 0 ||
            !dlp_feat_linear_bias(g, n))
            continue;
        for (int k = 0; k < 2; k++) {
            int v = n->inputs[k];
            const dlp_node *p = dlp_feat_producer_of(g, v);
            if (!p || strcmp(p->op_type, "MatMul") || us->n[v] != 1 ||
                vbytes(&g->values[v]) != vbytes(&g->values[n->outputs[0]]))
                continue;
            bool permuted = false;
            for (int j = 0; j < p->n_inputs; j++) {
                const dlp_node *q = dlp_feat_producer_of(g, p->inputs[j]);
                if (q && !strcmp(q->op_type, "Transpose")) permuted = true;
            }
            if (!permuted) alias[n->outputs[0]] = v;
        }
    }
}

/* Activations as the one kernel PyTorch runs: F.silu and F.gelu (Hugging
 * Face's SiLU and GELU, timm's and torchvision's nn.GELU / nn.SiLU), which
 * the exporter writes as Sigmoid(x) -> Mul(x, s) and Div(x, sqrt 2) -> Erf
 * -> Add(1) -> Mul(x, .) [-> Mul(0.5)]: only the result is a tensor; marks
 * the other values in tmp[], which the inference walk does not allocate
 * (match_silu, match_erf_gelu; the training estimate marks fewer:
 * mark_gelu_temps, mark_silu_temps). The result is allocated at Mul(x, .), beside x; a
 * trailing Mul(0.5) writes into it (alias[] names that block). Allocator
 * history (twenty-sixth session): bert-base fp16 4 x 128 holds the
 * intermediate dense output and one GELU output at its peak, no erf
 * temporaries. GPT-2's NewGELU is Python arithmetic, a
 * kernel per op, and its tanh form does not match. Counted as exported
 * before the caller frames of hold_module_inputs, the temporaries stood in
 * for the blocks those frames hold. */
static void mark_one_kernel_acts(const dlp_graph *g, const dlp_feat_uses *us,
                                 uint8_t *tmp, int *alias) {
    for (size_t i = 0; i < g->n_nodes; i++) {
        const dlp_node *n = &g->nodes[i], *d, *a, *m;
        if (match_silu(g, us, n) >= 0) {
            tmp[n->outputs[0]] = 1;
            continue;
        }
        if (!match_erf_gelu(g, us, n, &d, &a, &m)) continue;
        int x = n->inputs[0];
        if (d->n_outputs == 1 && us->n[x] == 1) tmp[x] = 1;
        tmp[n->outputs[0]] = 1;
        tmp[a->outputs[0]] = 1;
        const dlp_node *h = only_use(g, us, m->outputs[0]);
        if (h && !strcmp(h->op_type, "Mul") && h->n_outputs == 1 &&
            h->outputs[0] >= 0)
            alias[h->outputs[0]] = m->outputs[0];
    }
}

/* Whether initializer x, the input of an Identity, is a parameter the
 * exporter deduplicated (torch.onnx merges initializers of equal value and
 * reads the copies through Identity nodes; PyTorch holds each module's own
 * tensor): a module parameter ("m.blocks.1.norm1.weight"), or a conv
 * weight with BatchNorm folded in by the legacy exporter ("onnx::Conv_<n>",
 * darknetaa53: 11.4 M initializer elements + 24.6 M through Identity =
 * its 36.0 M parameters). Other folded values are not: a transposed
 * Linear weight ("onnx::MatMul_<n>") is deduplicated when one parameter is
 * used twice (CoaT's shared convolutional position encodings: coat_tiny's
 * initializers are its parameters less the module-named copies alone),
 * and "onnx::Add_<n>" (BEiT's relative position bias) is computed from a
 * table at every call. */
static bool is_dedup_param(const dlp_value *x) {
    if (!is_weight_init(x)) return false;
    if (!x->name || strncmp(x->name, "onnx::", 6)) return true;
    return !strncmp(x->name + 6, "Conv_", 5);
}

/* Appends initializer x (its elements, element size, whether float) to
 * the allocator replay's lists at *na (param_bytes, feat_alloc.c). */
static void replay_add(const dlp_value *x, int64_t *el, uint8_t *es,
                       uint8_t *fl, size_t *na) {
    if (!dlp_shape_numel(&x->shape, &el[*na])) return;
    es[*na] = (uint8_t)dlp_dtype_size(x->dtype);
    fl[(*na)++] = dlp_dtype_is_float(x->dtype);
}

/* Bytes of the module's parameters as PyTorch holds them (see
 * DLP_MEM_WSTD_DEPTH and is_dedup_param): every initializer, less the
 * exporter's folded copies of a standardised weight that feed only its
 * batch statistics, plus one more copy per Identity of a deduplicated
 * parameter; and the allocator's slack around them (feat_alloc.c).
 * Returns false when out of memory. */
static bool param_bytes(dlp_feat_graph *fg, const dlp_graph *g) {
    size_t V = g->n_values ? g->n_values : 1;
    uint8_t *skip = calloc(V, 1);
    int *stack = malloc(V * sizeof *stack), *depth = malloc(V * sizeof *depth);
    if (!skip || !stack || !depth) {
        free(skip); free(stack); free(depth);
        return false;
    }
    for (size_t i = 0; i < g->n_nodes; i++) {
        const dlp_node *n = &g->nodes[i];
        if (strcmp(n->op_type, "BatchNormalization") || n->n_inputs < 5 ||
            dlp_node_attr_int(n, "training_mode", 0) != 1 || n->inputs[0] < 0 ||
            !is_weight_init(&g->values[n->inputs[0]]))
            continue;
        int64_t nw = 0;
        if (!dlp_shape_numel(&g->values[n->inputs[0]].shape, &nw)) continue;
        int sp = 0;
        for (int k = 3; k < 5; k++)
            if (n->inputs[k] >= 0) { stack[sp] = n->inputs[k]; depth[sp++] = 0; }
        while (sp > 0) {
            int v = stack[--sp], d = depth[sp];
            const dlp_value *x = &g->values[v];
            int64_t ne = 0;
            if (x->flags & DLP_V_INITIALIZER) {
                if (v != n->inputs[0] && dlp_shape_numel(&x->shape, &ne) &&
                    ne == nw)
                    skip[v] = 1;
                continue;
            }
            const dlp_node *p = dlp_feat_producer_of(g, v);
            if (!p || d >= DLP_MEM_WSTD_DEPTH) continue;
            for (int k = 0; k < p->n_inputs && sp < (int)V; k++)
                if (p->inputs[k] >= 0) {
                    stack[sp] = p->inputs[k];
                    depth[sp++] = d + 1;
                }
        }
    }
    double b = 0;
    /* the tensors in the order the module registered them, for the
     * allocator's replay (feat_alloc.c) */
    size_t na = 0;
    int64_t *ael = malloc(V * sizeof *ael);
    uint8_t *aes = malloc(V), *afl = malloc(V);
    if (!ael || !aes || !afl) {
        free(ael); free(aes); free(afl); free(skip); free(stack); free(depth);
        return false;
    }
    for (size_t v = 0; v < g->n_values; v++) {
        const dlp_value *x = &g->values[v];
        if (!(x->flags & DLP_V_INITIALIZER) || skip[v]) continue;
        replay_add(x, ael, aes, afl, &na);
        /* Module.half() casts floating tensors only: an integer buffer
         * (LeViT's attention_bias_idxs, BERT's position_ids) keeps its
         * bytes at every precision (the exporter's small shape operands
         * stay with the weights) */
        if (is_weight_init(x) && x->dtype != DLP_DT_UNDEFINED &&
            !dlp_dtype_is_float(x->dtype))
            fg->buffer_bytes += init_bytes(x);
        else
            b += init_bytes(x);
    }
    for (size_t i = 0; i < g->n_nodes; i++) {
        const dlp_node *n = &g->nodes[i];
        if (strcmp(n->op_type, "Identity") || n->n_inputs < 1 ||
            n->inputs[0] < 0 || !is_dedup_param(&g->values[n->inputs[0]]))
            continue;
        const dlp_value *x = &g->values[n->inputs[0]];
        b += init_bytes(x);
        if (na < V) replay_add(x, ael, aes, afl, &na);
    }
    bool ok = dlp_feat_alloc_slack(ael, aes, afl, na, fg->alloc_slack_bytes) == 0;
    free(ael); free(aes); free(afl);
    if (!ok) { free(skip); free(stack); free(depth); return false; }
    /* a folded relative position bias is the export's, not a parameter
     * (buffer_bytes stands for it; mem_liveness, which runs first, found
     * them) */
    fg->mem_weight_bytes = b - fg->folded_bias_bytes;
    bias_cache(fg, g);
    free(skip); free(stack); free(depth);
    return true;
}

/* Length of the module scope of an exported node name
 * ("/m/h.0/mlp/act/Mul_3" -> "/m/h.0/mlp/act"), 0 without one. */
static size_t scope_len(const char *name) {
    const char *sl = name ? strrchr(name, '/') : NULL;
    return sl && sl != name ? (size_t)(sl - name) : 0;
}

/* The scope "<...>/encoder/layer.<N>" of node name s: its length, 0 when
 * s is in no such scope. */
static size_t layer_scope_len(const char *s) {
    const char *p = s ? strstr(s, "/encoder/layer.") : NULL;
    if (!p) return 0;
    p += strlen("/encoder/layer.");
    if (*p < '0' || *p > '9') return 0;
    while (*p >= '0' && *p <= '9') p++;
    return *p == '/' ? (size_t)(p - s) : 0;
}

/* Length of the common scope of node names a and b (whole '/'-separated
 * components; scope_len bounds each name). */
static size_t common_scope(const char *a, size_t la, const char *b, size_t lb) {
    size_t c = 0;
    for (size_t i = 1; i <= la && i <= lb; i++) {
        if (a[i - 1] != b[i - 1]) break;
        if ((i == la || a[i] == '/') && (i == lb || b[i] == '/')) c = i;
    }
    return c;
}

/* Hugging Face's DeBERTa-v2 encoder keeps every layer's input, the
 * embeddings' output and each layer's output, until the encoder returns
 * (allocator history, twenty-sixth session: deberta-v3-base fp32 16 x 512
 * holds the embeddings' and 11 layers' [16, 512, 768] outputs at the
 * last layer's softmax; BERT, whose encoder has the same scope names,
 * frees them). The graph is DeBERTa-v2 by its module names (an attention
 * with query_proj under /encoder/layer.<N>/). Extends last[] of each
 * activation a layer scope reads from outside itself to the encoder's
 * last node and marks it in ext_next (-2) for hold_module_inputs' lists. */
static void hold_encoder_states(const dlp_graph *g, int *last, int *ext_next) {
    size_t N = g->n_nodes;
    int enc_end = -1;
    bool deberta = false;
    for (size_t t = 0; t < N; t++) {
        const char *s = g->nodes[g->topo[t]].name;
        if (!layer_scope_len(s)) continue;
        enc_end = (int)t;
        if (strstr(s, "/attention/self/query_proj/")) deberta = true;
    }
    if (!deberta) return;
    for (size_t t = 0; t < N; t++) {
        const dlp_node *n = &g->nodes[g->topo[t]];
        size_t L = layer_scope_len(n->name);
        if (!L) continue;
        for (int k = 0; k < n->n_inputs; k++) {
            int v = n->inputs[k];
            if (v < 0 || !is_act(g, &g->values[v])) continue;
            const dlp_node *p = dlp_feat_producer_of(g, v);
            if (p && p->name &&
                common_scope(p->name, scope_len(p->name), n->name, L) == L)
                continue;                      /* made inside the layer */
            if (last[v] < enc_end) { last[v] = enc_end; ext_next[v] = -2; }
        }
    }
}

/* Whether node name q is in a direct child scope of scope s[0 .. c):
 * "<s>/<child>/<op>", one level below. */
static bool direct_child(const char *q, const char *s, size_t c) {
    size_t lq = scope_len(q);
    return lq > c && !strncmp(q, s, c) && q[c] == '/' &&
           !memchr(q + c + 1, '/', lq - c - 1);
}

/* The last position at or before `e` (and after t) of a node of scope
 * s[0 .. L) that is not a view, a slice or a host op: where the module
 * last computes (GhostNet's module ends with out[:, :chs], a view). */
static int last_compute(const dlp_graph *g, const char *s, size_t L, int e,
                        int t) {
    static const char *const views[] = VIEW_OPS;
    static const char *const host[] = HOST_OPS;
    for (; e > t; e--) {
        const dlp_node *q = &g->nodes[g->topo[e]];
        if (q->name && !strncmp(q->name, s, L) && q->name[L] == '/' &&
            strcmp(q->op_type, "Slice") && !dlp_feat_in_list(q->op_type, views) &&
            !dlp_feat_in_list(q->op_type, host))
            break;
    }
    return e;
}

/* Whether value x is a constant scalar: not an activation (is_act), of
 * one element. */
static bool const_scalar(const dlp_graph *g, int x) {
    int64_t n = 0;
    return x >= 0 && !is_act(g, &g->values[x]) &&
           dlp_shape_numel(&g->values[x].shape, &n) && n == 1;
}

/* Where a caller that passed a value to the module call ending at
 * position e still holds it: e, or the next node when that node is a
 * Mul of the call's result by a constant scalar in the caller's scope
 * c[0 .. lc). The caller's expression `out = gain * module(out)` (timm's
 * NFNet blocks: `self.attn_gain * self.attn_last(out)`) keeps the old
 * `out` bound until the assignment, so it lives through the Mul
 * (fifty-third session, tools/collect/probe_memory.py on the H200:
 * eca_nfnet_l2 fp16 64 x 320 px peaks there with conv3's output, the
 * attention's, the Mul's and the shortcut, four 200 MiB blocks; the
 * estimate freed conv3's output at the call's return, 196.8 MiB under). */
static int caller_expr_end(const dlp_graph *g, int e, const char *c, size_t lc) {
    static const char *const host[] = HOST_OPS;
    if (e < 0) return e;
    const dlp_node *r = &g->nodes[g->topo[e]];
    int t = e + 1;                      /* past the constant's own node */
    while ((size_t)t < g->n_nodes && t <= e + 4 &&
           dlp_feat_in_list(g->nodes[g->topo[t]].op_type, host))
        t++;
    if ((size_t)t >= g->n_nodes || r->n_outputs < 1 || r->outputs[0] < 0)
        return e;
    const dlp_node *m = &g->nodes[g->topo[t]];
    if (strcmp(m->op_type, "Mul") || m->n_inputs != 2 || !m->name ||
        scope_len(m->name) != lc || strncmp(m->name, c, lc))
        return e;
    int o = r->outputs[0];
    if ((m->inputs[0] == o && const_scalar(g, m->inputs[1])) ||
        (m->inputs[1] == o && const_scalar(g, m->inputs[0])))
        return t;
    return e;
}

/* Extends last[v] to e and marks it for hold_module_inputs' lists. */
static void hold_until(int *last, int *ext_next, int v, int e) {
    if (last[v] < e) { last[v] = e; ext_next[v] = -2; }
}

/* Length of the GPT-2 block scope "<...>/h.<N>" of node name s, 0 when s
 * is in none. */
static size_t gpt2_block_len(const char *s) {
    const char *p = s ? strstr(s, "/h.") : NULL;
    if (!p || p[3] < '0' || p[3] > '9') return 0;
    p += 3;
    while (*p >= '0' && *p <= '9') p++;
    return *p == '/' ? (size_t)(p - s) : 0;
}

/* True when node name q lies in scope s (length L) / `branch` / ... */
static bool in_branch(const char *q, const char *s, size_t L,
                      const char *branch) {
    size_t b = strlen(branch);
    return q && !strncmp(q, s, L) && q[L] == '/' && !strncmp(q + L + 1, branch, b) &&
           q[L + 1 + b] == '/';
}

/* The first place at or after `from` in node name nm where `word` is a
 * whole scope component ("/word/"), or NULL. */
static const char *scope_component(const char *nm, const char *from,
                                   const char *word) {
    size_t w = strlen(word);
    for (const char *at = from; (at = strstr(at, word)) != NULL; at++)
        if (at > nm && at[-1] == '/' && at[w] == '/') return at;
    return NULL;
}

/* Submodule outputs a module keeps in locals until it returns, though the
 * export reads them last earlier, named by the module's child scopes
 * (timm; forty-third session, tools/collect/probe_memory.py on an H200):
 * - MobileOneBlock (FastViT, MobileOne; the train-time branches, as the
 *   collector runs it) binds identity_out = identity(x) and scale_out =
 *   conv_scale(x), sums them into out (`scale_out + 0` without an
 *   identity: a new tensor) and adds each conv_kxk branch into out in
 *   place. fastvit_sa12 fp16 64 x 256 peaks in the stem's first block
 *   with scale_out, out, the conv_kxk conv output and its BatchNorm's
 *   live, 4 x 128 MiB; the walk had three.
 * - CrossStage / CrossStage3 (CSPNet, CS3-DarkNet) bind x = conv_exp(x),
 *   split it, x1 = blocks(x1) (CrossStage: xb = conv_transition_b(...))
 *   and call conv_transition on their concatenation: x and x1 (xb) stay
 *   through conv_transition. cs3sedarknet_xdw fp16 64 x 256 peaks at
 *   conv_transition's BatchNorm with conv_exp's 128 MiB output and the
 *   blocks' 64 MiB output live (data/probes/20261130-probe-memory-36list).
 *   Only where the module itself reads them (CrossStage rebinds xb, the
 *   blocks' output, by conv_transition_b's).
 * - StarNet's Block binds x1, x2 = f1(x), f2(x) and keeps both through
 *   act(x1) * x2, g and dwconv2: starnet_s2 fp16 64 x 160 peaks at the
 *   product with x1, x2, act(x1) and the product live (4 x 25 MiB).
 * An output of S/<branch>/ read in S outside that branch (by S's own
 * nodes only, where so marked) is held to S's last node that computes,
 * when S has the child scope S/<marker>; end maps each scope to its last
 * position (hold_module_inputs' map). */
static bool hold_branch_locals(const dlp_graph *g, const dlp_strmap *end,
                               int *last, int *ext_next) {
    static const struct {
        const char *marker, *branch[3];
        bool own_reader;   /* only a node of S itself reads it */
    } mods[] = {{"conv_kxk.0", {"identity", "conv_scale", NULL}, true},
                {"conv_exp", {"conv_exp", "blocks", "conv_transition_b"}, true},
                {"dwconv2", {"f1", "f2", NULL}, false}};
    enum { NMOD = sizeof mods / sizeof *mods };
    /* the modules the graph has at all (most have none: a transformer's
     * 4,000 edges would each search three names for nothing) */
    bool has[NMOD] = {false}, any = false;
    for (size_t i = 0; i < g->n_nodes; i++)
        for (size_t m = 0; m < NMOD && g->nodes[i].name; m++)
            if (!has[m] && scope_component(g->nodes[i].name, g->nodes[i].name,
                                           mods[m].marker))
                has[m] = any = true;
    char *key = NULL;
    size_t cap = 0;
    for (size_t t = 0; any && t < g->n_nodes; t++) {
        const dlp_node *n = &g->nodes[g->topo[t]];
        size_t L = n->name ? scope_len(n->name) : 0;
        for (int k = 0; L && k < n->n_inputs; k++) {
            int v = n->inputs[k];
            const dlp_node *p = v >= 0 ? dlp_feat_producer_of(g, v) : NULL;
            if (!p || !p->name || !is_act(g, &g->values[v])) continue;
            for (size_t m = 0; m < NMOD; m++)
                for (int b = 0; has[m] && b < 3 && mods[m].branch[b]; b++) {
                    /* S: p's scope up to "/<branch>/", n in S, not in the branch */
                    const char *br = mods[m].branch[b];
                    for (const char *at = scope_component(p->name, p->name, br); at;
                         at = scope_component(p->name, at + 1, br)) {
                        size_t S = (size_t)(at - p->name) - 1;
                        if (strncmp(n->name, p->name, S) || n->name[S] != '/' ||
                            in_branch(n->name, p->name, S, br) ||
                            (mods[m].own_reader && L != S))
                            continue;
                        size_t need = S + strlen(mods[m].marker) + 2;
                        if (need > cap) {
                            char *q = realloc(key, need);
                            if (!q) { free(key); return false; }
                            key = q;
                            cap = need;
                        }
                        memcpy(key, p->name, S);
                        key[S] = '/';
                        strcpy(key + S + 1, mods[m].marker);
                        if (dlp_strmap_get(end, key, need - 1) < 0) continue;
                        hold_until(last, ext_next, v,
                                   last_compute(g, p->name, S,
                                                dlp_strmap_get(end, p->name, S), (int)t));
                    }
                }
        }
    }
    free(key);
    return true;
}

/* Hugging Face's GPT-2 keeps two locals the export reads last earlier
 * (allocator history, thirty-first session: gpt2 bf16 16 x 1024 peaks in
 * the first block's MLP with the token embedding `inputs_embeds` of
 * GPT2Model.forward and the block's `attn_output` live beside the
 * residual sum, the ln_2 output and the MLP's blocks: 787.4 MiB, where
 * the walk had 736.2 without those two [16, 1024, 768] blocks):
 * GPT2Model.forward holds `inputs_embeds` and `position_embeds` (the wte
 * and wpe outputs) until it returns, and GPT2Block.forward its
 * `attn_output` (the attention module's output read by the residual Add)
 * until it returns. The graph is GPT-2 by its module names (/wte/, /wpe/,
 * /h.<N>/attn/c_attn/). Extends last[] and marks ext_next (-2) as
 * hold_encoder_states does; end maps each scope to its last position
 * (hold_module_inputs' map). */
static void hold_gpt2_locals(const dlp_graph *g, const dlp_strmap *end,
                             int *last, int *ext_next) {
    size_t N = g->n_nodes;
    bool gpt2 = false, wte = false;
    for (size_t i = 0; i < N && !(gpt2 && wte); i++) {
        const char *s = g->nodes[i].name;
        if (!s) continue;
        if (strstr(s, "/wte/")) wte = true;
        size_t b = gpt2_block_len(s);
        if (b && !strncmp(s + b, "/attn/c_attn/", 13)) gpt2 = true;
    }
    if (!gpt2 || !wte) return;
    for (size_t t = 0; t < N; t++) {
        const dlp_node *n = &g->nodes[g->topo[t]];
        if (strcmp(n->op_type, "Add") || !n->name) continue;
        size_t L = scope_len(n->name), b = gpt2_block_len(n->name);
        for (int k = 0; k < n->n_inputs; k++) {
            int v = n->inputs[k];
            if (v < 0 || !is_act(g, &g->values[v])) continue;
            const dlp_node *p = dlp_feat_producer_of(g, v);
            if (!p || !p->name) continue;
            int e = -1;
            if (!b && (strstr(p->name, "/wte/") || strstr(p->name, "/wpe/")))
                e = (int)N - 1;                 /* the model's embeddings */
            else if (b && L == b && gpt2_block_len(p->name) == b &&
                     !strncmp(p->name, n->name, b) &&
                     !strncmp(p->name + b, "/attn/", 6))
                e = dlp_strmap_get(end, n->name, b);   /* attn_output */
            hold_until(last, ext_next, v, e);
        }
    }
}

/* A local passed to two calls: a value that one submodule call of a
 * scope returns and two or more others read (the scope being the deepest
 * that holds its producer and every reader) is a variable of that
 * module's forward, alive until it returns, not only until the second
 * call. Not a value the forward computes itself: that one the code
 * rebinds (timm's NF blocks, out = act1(x) * beta read by downsample and
 * conv1, then out = conv1(out); DPN's x_in = cat(x)). timm's ResNetV2
 * pre-activation block binds x_preact = norm1(x), reads it in downsample
 * and conv1 and keeps it through conv2 and conv3 (allocator history,
 * thirty-first session, resnetv2_50d_gn fp16 b16 288 px: the norm1 output
 * beside conv1's, norm2's and conv2's outputs at the peak). Extends last[]
 * as hold_until; false when out of memory. */
static bool hold_shared_locals(const dlp_graph *g, int *last, int *ext_next) {
    size_t V = g->n_values ? g->n_values : 1, N = g->n_nodes;
    size_t *cl = malloc(V * sizeof *cl);
    const char **anc = calloc(V, sizeof *anc), **child = calloc(V, sizeof *child);
    uint8_t *multi = calloc(V, 1);
    if (!cl || !anc || !child || !multi) {
        free(cl); free(anc); free(child); free(multi);
        return false;
    }
    /* the deepest scope of each value's producer and readers */
    for (size_t v = 0; v < g->n_values; v++) {
        const dlp_node *p = dlp_feat_producer_of(g, (int)v);
        anc[v] = p ? p->name : NULL;
        cl[v] = scope_len(anc[v]);
    }
    for (size_t i = 0; i < N; i++) {
        const dlp_node *n = &g->nodes[i];
        for (int k = 0; k < n->n_inputs; k++) {
            int v = n->inputs[k];
            if (v >= 0 && anc[v])
                cl[v] = common_scope(anc[v], cl[v], n->name, scope_len(n->name));
        }
    }
    /* readers inside two different submodule calls of that scope */
    for (size_t i = 0; i < N; i++) {
        const dlp_node *n = &g->nodes[i];
        size_t L = scope_len(n->name);
        for (int k = 0; k < n->n_inputs; k++) {
            int v = n->inputs[k];
            if (v < 0 || !anc[v] || !cl[v] || L <= cl[v]) continue;
            const char *c = n->name + cl[v] + 1;    /* the call's name */
            size_t lc = strcspn(c, "/");
            if (!child[v]) child[v] = c;
            else if (strncmp(child[v], c, lc) || child[v][lc] != '/') multi[v] = 1;
        }
    }
    /* held to the end of the call that is running: the nodes of the scope
     * that follow the last reader without a node of another scope between
     * (a scope name that several calls reuse, ALBERT's shared layer, ends
     * each time). Node t + 1 stays in a scope of length L that holds node
     * t when the two share a scope of length >= L (cs[t]); nl[t] is the
     * next position whose cs is lower than cs[t], so the walk to the first
     * cs below L skips runs (a scan node by node was quadratic: a 2,000
     * node transformer's prediction took 5 ms longer) */
    int *cs = malloc((N ? N : 1) * sizeof *cs), *nl = malloc((N ? N : 1) * sizeof *nl);
    if (!cs || !nl) {
        free(cs); free(nl); free(cl); free(anc); free(child); free(multi);
        return false;
    }
    for (size_t t = 0; t + 1 < N; t++) {
        const char *a = g->nodes[g->topo[t]].name, *b = g->nodes[g->topo[t + 1]].name;
        cs[t] = a && b ? (int)common_scope(a, scope_len(a), b, scope_len(b)) : 0;
    }
    if (N) cs[N - 1] = -1;
    for (size_t t = N; t-- > 0;) {      /* next lower: a monotonic chain */
        int j = (int)t + 1;
        while (j < (int)N && cs[j] >= cs[t]) j = nl[j];
        nl[t] = j < (int)N ? j : (int)N - 1;
    }
    for (size_t v = 0; v < g->n_values; v++) {
        if (!multi[v] || scope_len(anc[v]) <= cl[v] ||
            !is_act(g, &g->values[v]) || last[v] < 0 || last[v] >= (int)N ||
            (g->values[v].flags & (DLP_V_INPUT | DLP_V_OUTPUT)))
            continue;
        int e = last[v];
        while (cs[e] >= (int)cl[v]) e = nl[e];
        hold_until(last, ext_next, (int)v, last_compute(g, anc[v], cl[v], e, last[v]));
    }
    free(cs); free(nl); free(cl); free(anc); free(child); free(multi);
    return true;
}

/* A module's caller holds its arguments until it returns: the caller's
 * variable keeps the tensor it passed, though the export may read it last
 * earlier. In a TorchScript export node names are module paths; a value
 * read by node n is held until the last node of the outermost scope of n
 * that does not contain the value's producer: the module call that received
 * it, directly or through its own callees. Hugging Face's NewGELU computes
 * 0.5 * x first and reads x no more after the cube, while the MLP holds x
 * (distilgpt2 bf16 32 x 1024: the MLP input beside three activation
 * temporaries); GPT-2's block holds its input through the attention and
 * BERT's encoder the layer's input through its feed-forward
 * (tools/collect/probe_memory.py, twenty-first and twenty-sixth sessions).
 * A scope whose first node comes after the producer was entered before the
 * value existed: its name is reused by several calls (ALBERT's shared
 * layer), and it holds nothing. Values made and read in one scope are its
 * locals, which the code may rebind: not held. The positions are those of
 * g->topo, the file's order (dlp_graph_toposort), which is the order the
 * exporter recorded the calls. Extends last[] and lists the values so held
 * by the position they die at (ext_head[N], ext_next[V]: -1 ends a list;
 * -2 on entry marks a value already extended); false when out of memory.
 *
 * Two locals are held all the same (thirty-first session, allocator
 * history of tools/collect/probe_memory.py on an H200):
 * - the parts a module concatenates: the outputs of its submodules read
 *   by a Concat of its own scope are its variables or the items of a list
 *   it builds (timm's HGNet / VoVNet `output.append(x)`, Res2Net's `spo`,
 *   SelecSLS' d1, d2, d3), alive until it returns, i.e. its last node that
 *   computes (not the model's root scope, whose Concat parts are tokens);
 *   timm VoVNet's `conv_mid` (SequentialAppendList) appends to a list its
 *   caller, the OSA block, made and holds through conv_concat and the
 *   attention gate: its parts live until the block returns (forty-third
 *   session: ese_vovnet19b_dw fp16 32 x 224 peaks at conv_concat with the
 *   three [32, 128, 56, 56] parts live, 329.2 MiB measured, 251.8
 *   estimated without them);
 * - a concatenation that a chain of leaf submodules reads, BatchNorm
 *   first: torchvision DenseNet's bn_function keeps `concated_features`
 *   while it calls conv1(relu1(norm1(...))) and returns after conv1.
 *   densenet121 fp16 32 x 224: a [32, 224, 56, 56] concat (42.9 MiB) and
 *   its BatchNorm output, both live at conv1 beside its 24.5 MiB output
 *   and the block's features (211.7 MiB measured; 186.1 before, 210.6
 *   now). A BatchNorm inside a composite submodule (DPN's c1x1_a/bn, whose
 *   caller rebinds x_in) does not count. */
static bool hold_module_inputs(const dlp_graph *g, int *last, int *ext_head,
                               int *ext_next) {
    size_t N = g->n_nodes;
    dlp_strmap first, end;
    int *pos = malloc((N ? N : 1) * sizeof *pos);
    if (!pos || !dlp_strmap_init(&first, N)) { free(pos); return false; }
    if (!dlp_strmap_init(&end, N)) {
        dlp_strmap_free(&first);
        free(pos);
        return false;
    }
    bool ok = true;
    /* the first and last position of every scope and enclosing scope */
    for (size_t t = 0; t < N && ok; t++) {
        const dlp_node *n = &g->nodes[g->topo[t]];
        size_t L = scope_len(n->name);
        pos[g->topo[t]] = (int)t;
        for (size_t i = 1; i <= L && ok; i++) {
            if (i < L && n->name[i] != '/') continue;
            if (dlp_strmap_get(&first, n->name, i) < 0)
                ok = dlp_strmap_put(&first, n->name, i, (int)t);
            if (ok) ok = dlp_strmap_put(&end, n->name, i, (int)t);
        }
    }
    for (size_t t = 0; t < N && ok; t++) {
        const dlp_node *n = &g->nodes[g->topo[t]];
        size_t L = scope_len(n->name);
        if (!L) continue;
        /* a Concat's parts made by submodules of its scope (not the root) */
        bool parts = !strcmp(n->op_type, "Concat") && memchr(n->name + 1, '/', L - 1);
        for (int k = 0; k < n->n_inputs; k++) {
            int v = n->inputs[k];
            if (v < 0 || !is_act(g, &g->values[v])) continue;
            const dlp_node *p = dlp_feat_producer_of(g, v);
            if (parts && p && p->name && scope_len(p->name) > L &&
                !strncmp(p->name, n->name, L) && p->name[L] == '/') {
                size_t H = L;   /* VoVNet's conv_mid: its caller's list */
                if (L >= 9 && !strncmp(n->name + L - 9, "/conv_mid", 9))
                    while (H > 0 && n->name[--H] != '/') {}
                if (!H) H = L;
                hold_until(last, ext_next, v,
                           last_compute(g, n->name, H,
                                        dlp_strmap_get(&end, n->name, H), (int)t));
            }
            size_t c = p ? common_scope(n->name, L, p->name, scope_len(p->name)) : 0;
            /* DenseNet's concatenation, held through the leaf calls after
             * its BatchNorm up to the first Conv */
            if (p && c > 0 && !strcmp(p->op_type, "Concat") &&
                scope_len(p->name) == c && !strcmp(n->op_type, "BatchNormalization") &&
                direct_child(n->name, p->name, c))
                for (size_t u = t + 1; u < N; u++) {
                    const dlp_node *q = &g->nodes[g->topo[u]];
                    if (!q->name || !direct_child(q->name, p->name, c)) break;
                    if (!strcmp(q->op_type, "Conv")) {
                        hold_until(last, ext_next, v, (int)u);
                        break;
                    }
                }
            if (c >= L) continue;              /* a local of n's scope */
            size_t a = c + 1;                  /* the call that received v */
            while (a < L && n->name[a] != '/') a++;
            int e = dlp_strmap_get(&end, n->name, a);
            if (p && pos[p - g->nodes] > dlp_strmap_get(&first, n->name, a))
                continue;                      /* a reused scope name */
            hold_until(last, ext_next, v, caller_expr_end(g, e, n->name, c));
        }
    }
    if (ok) hold_gpt2_locals(g, &end, last, ext_next);
    if (ok) ok = hold_branch_locals(g, &end, last, ext_next);
    if (ok) ok = hold_shared_locals(g, last, ext_next);
    /* the walk frees a block at a node that reads or writes it; a value
     * held past its last reader is freed from these lists instead */
    for (size_t t = 0; t < N; t++) ext_head[t] = -1;
    for (size_t v = 0; v < g->n_values && ok; v++)
        if (ext_next[v] == -2 && last[v] >= 0 && last[v] < (int)N) {
            ext_next[v] = ext_head[last[v]];
            ext_head[last[v]] = (int)v;
        } else {
            ext_next[v] = -1;
        }
    dlp_strmap_free(&end);
    dlp_strmap_free(&first);
    free(pos);
    return ok;
}

/* Frees storage block r of the liveness walk when its last alias died at
 * or before position t; returns the bytes freed. */
static double free_if_dead(double *alloc, const int *rlast, int r, int t) {
    double b = alloc[r];
    if (b <= 0 || rlast[r] > t) return 0;
    alloc[r] = 0;
    return b;
}

/* Whether value x keeps its bytes at half precision: an integer or bool
 * tensor (Module.half() casts the parameters, and the forward's floating
 * results follow them; index and mask tensors do not) */
static bool fixed_size(const dlp_value *x) {
    return x->dtype != DLP_DT_UNDEFINED && !dlp_dtype_is_float(x->dtype);
}

/* free_if_dead for block r and then, as each is freed, the blocks its
 * copy was made from (keep[], -1 ends); the bytes of fixed[] blocks among
 * them are also subtracted from *fix */
static double free_chain(const uint8_t *fixed, double *alloc, const int *rlast,
                         const int *keep, int r, int t, double *fix) {
    double b = 0;
    for (; r >= 0; r = keep[r]) {
        double f = free_if_dead(alloc, rlast, r, t);
        if (f <= 0) break;
        b += f;
        if (fixed[r]) *fix -= f;
    }
    return b;
}

/* Bytes of the int64 indices PyTorch's CUDA max_pool2d allocates while
 * it runs (max_pool2d_with_indices, the indices dropped on return) for a
 * MaxPool whose export has no indices output; 0 for any other node. */
static double maxpool_index_bytes(const dlp_graph *g, const dlp_node *n) {
    int64_t k = 0;
    if (strcmp(n->op_type, "MaxPool") || n->n_outputs != 1 || n->outputs[0] < 0 ||
        !dlp_shape_numel(&g->values[n->outputs[0]].shape, &k))
        return 0;
    return 8.0 * (double)k;
}

/* Appends a dense convolution's record (feat.h: dlp_feat_conv) to
 * fg->convs; false when out of memory. */
static bool add_conv_record(dlp_feat_graph *fg, const dlp_conv_shape *cs,
                            double live, double live_half, bool post, int tpos) {
    if ((fg->n_convs & (fg->n_convs - 1)) == 0) {   /* 0, 1, 2, 4, ...: grow */
        size_t cap = fg->n_convs ? 2 * (size_t)fg->n_convs : 4;
        dlp_feat_conv *p = realloc(fg->convs, cap * sizeof *p);
        if (!p) return false;
        fg->convs = p;
    }
    dlp_feat_conv *r = &fg->convs[fg->n_convs++];
    dlp_conv_shape_features(cs, r->x);
    r->live_bytes = live;
    r->live_half_bytes = live_half;
    r->post = post;
    r->tpos = tpos;
    return true;
}

/* What autograd keeps of the attention around Softmax s in a training
 * step, where the exported pattern misleads the saved-block rules. An
 * SDPA call with a learned bias (mark_sdpa: not hit, qk and pv set; timm's
 * relative position biases of ViT-relpos, MaxViT, TinyViT) runs the
 * memory-efficient kernel, which saves q, k, v, the bias, its output and
 * the log-sum-exp: the softmax and what follows it to the PV product are
 * never built (nosave[]). A fused call on operands that are not 4-D
 * (NesT's [B, heads, blocks, N, D]) runs the math path
 * (math_sdpa_bytes), which saves the scaled query and the float softmax,
 * and at half precision float copies of key and value too (out[0]: the
 * graph's bytes, out[1]: an autocast step's). */
static void train_attention(const dlp_graph *g, const dlp_feat_uses *us, int s,
                            bool hit, int qk, int pv, uint8_t *nosave,
                            double out[2]) {
    const dlp_node *sm = &g->nodes[s];
    if (qk < 0 || pv < 0 || sm->n_inputs < 1 || sm->n_outputs < 1 ||
        sm->outputs[0] < 0)
        return;
    if (!hit) {
        int fc[8], nf = 0, u = -1;
        nosave[sm->outputs[0]] = 1;
        if (pv_after(g, us, sm->outputs[0], fc, &nf, &u) >= 0)
            for (int i = 0; i < nf; i++) nosave[fc[i]] = 1;
        return;
    }
    const dlp_node *a = &g->nodes[qk], *b = &g->nodes[pv];
    if (g->values[sm->inputs[0]].shape.rank == 4 || a->n_inputs < 2 ||
        b->n_inputs < 2 || a->inputs[0] < 0 || a->inputs[1] < 0 || b->inputs[1] < 0)
        return;
    double sc = (double)vbytes(&g->values[sm->inputs[0]]),
           q = (double)vbytes(&g->values[a->inputs[0]]),
           k = (double)vbytes(&g->values[a->inputs[1]]),
           v = (double)vbytes(&g->values[b->inputs[1]]);
    out[0] += sc + q;
    out[1] += sc + q + k + v;
}

/* Whether weight value w is computed in the forward from the parameters,
 * a new tensor each step: through Reshapes, a training-mode
 * BatchNormalization of the weight (F.batch_norm in timm's StdConv2d /
 * ScaledStdConv2d) or arithmetic on it (a standardisation written out);
 * not an initializer, nor the exporter's Identity of a deduplicated one
 * (the parameter itself). */
static bool computed_weight(const dlp_graph *g, int w) {
    const dlp_node *p = dlp_feat_producer_of(g, w);
    for (int k = 0; p && !strcmp(p->op_type, "Reshape") && k < 4; k++)
        p = p->n_inputs > 0 && p->inputs[0] >= 0 ? dlp_feat_producer_of(g, p->inputs[0])
                                                  : NULL;
    if (!p) return false;
    if (!strcmp(p->op_type, "BatchNormalization"))
        return dlp_node_attr_int(p, "training_mode", 0) == 1;
    return !strcmp(p->op_type, "Sub") || !strcmp(p->op_type, "Div") ||
           !strcmp(p->op_type, "Mul");
}

/* Lower-precision and float32 ops of torch.autocast (CUDA) as ONNX
 * exports them: the first run in half precision whatever their inputs,
 * the second in float32. Resize is not one: CUDA autocast's float32
 * lists hold no upsample op (only the CPU's do), so it runs in its
 * input's dtype; taken as float32 it broke HRNet's half steps (5% under
 * -> 16-20% over) while fixing GhostNetV2 / V3's (10-20% under, a gap
 * still unexplained; docs/COST.md). */
static const char *const amp_half_ops[] = {"Conv", "ConvTranspose", "Gemm",
                                           "MatMul", "Einsum", "LSTM", "GRU",
                                           "RNN", NULL};
static const char *const amp_f32_ops[] = {
    "Softmax", "LogSoftmax", "LayerNormalization", "GroupNormalization",
    "Exp", "Log", "Pow", "ReduceSum", "ReduceL2", "ReduceLogSumExp",
    "Softplus", "Reciprocal", "Cast", "CumSum", NULL};

/* Float32 ops of amp_f32_ops that autocast runs with a float32 dtype
 * argument (its "set_opt_dtype" / "append_dtype" ops: norm, sum, softmax)
 * instead of casting their input: the output is float32, but the kernel
 * reads the half input as it is, so no float32 copy of it exists and
 * the input the backward saves is the half tensor itself (x.norm in
 * ConvNeXt-V2's global response norm, F.normalize). */
static const char *const amp_f32_nocopy_ops[] = {"ReduceL2", "ReduceSum",
                                                 "Softmax", "LogSoftmax",
                                                 "CumSum", NULL};

/* Whether node n runs in float32 under autocast: an op of amp_f32_ops,
 * or the InstanceNormalization of an exported nn.GroupNorm
 * (match_group_norm), which is F.group_norm, on autocast's float32 list
 * (a plain InstanceNormalization is not): it saves a float32 copy of its
 * half input and gives a float32 output, which the activation after it
 * saves and the next convolution copies to half again. timm's
 * resnet50_gn bf16 / fp16 b32: the training estimate 9-12% under the
 * measured peaks without it. */
static bool amp_f32_node(const dlp_graph *g, const dlp_feat_uses *us,
                         const dlp_node *n) {
    int y, z;
    return dlp_feat_in_list(n->op_type, amp_f32_ops) ||
           match_group_norm(g, us, n, &y, &z) != NULL;
}

/* af[v]: the factor on value v's graph bytes in an autocast step (fp16 /
 * bf16 training, tools/collect/measure.py): 0.5 for a float activation
 * the step holds in half precision, 1 otherwise. A lower-precision op
 * (and the bias Add of a Linear) gives half; a float32 op (and an
 * explicit Cast) float32; BatchNormalization keeps its input's type;
 * any other op promotes: float32 when an activation or a parameter
 * (is_weight_init: not a scalar, not a Resize's scales) among its float
 * inputs is float32 (a half token stream plus a float32 position
 * embedding, or a residual Add of a float32 stream, gives float32). The
 * model's input is float32. */
static void amp_factors(const dlp_graph *g, const dlp_feat_uses *us,
                        double *af) {
    for (size_t v = 0; v < g->n_values; v++) af[v] = 1;
    for (size_t t = 0; t < g->n_nodes; t++) {
        const dlp_node *n = &g->nodes[g->topo[t]];
        bool half;
        if (dlp_feat_in_list(n->op_type, amp_half_ops) || dlp_feat_linear_bias(g, n)) {
            half = true;
        } else if (amp_f32_node(g, us, n)) {
            half = false;
        } else if (!strcmp(n->op_type, "BatchNormalization")) {
            half = n->n_inputs > 0 && n->inputs[0] >= 0 && af[n->inputs[0]] < 1;
        } else {
            /* a Resize's scales and roi are arguments, not operands */
            int nh = 0, nf = 0, nk = !strcmp(n->op_type, "Resize") ? 1 : n->n_inputs;
            for (int k = 0; k < nk; k++) {
                int v = n->inputs[k];
                if (v < 0 || g->values[v].dtype != DLP_DT_FLOAT) continue;
                if (!is_act(g, &g->values[v]) && !is_weight_init(&g->values[v]))
                    continue;
                if (af[v] < 1) nh++;
                else nf++;
            }
            half = nh > 0 && nf == 0;
        }
        for (int k = 0; k < n->n_outputs; k++) {
            int v = n->outputs[k];
            if (v >= 0 && half && g->values[v].dtype == DLP_DT_FLOAT) af[v] = 0.5;
        }
    }
}

/* ---- the training step's memory through its backward -------------------
 * (docs/COST.md, "Peak memory (training)", forty-second session.) The
 * collector's step (tools/collect/measure.py) starts with the gradients
 * set to None and the momentum buffers of the step before: weights and
 * momentum (2 W) are held throughout. The forward leaves the saved blocks;
 * the backward then runs the nodes in reverse. At node t's backward the
 * step holds, besides 2 W: the weight gradients of the nodes from t on
 * (each weight's gradient is made by its last user's backward), the saved
 * blocks whose earliest saver is at or before t (that saver's backward
 * frees them), the gradient of every block that needs one and is live in
 * the forward at t (made by the backward of its last user, consumed by
 * its producer's), and t's convolution workspace. Under autocast (fp16 /
 * bf16 steps) a Conv / MatMul / Gemm also saves the half copy of its
 * weight, freed by its backward. fg->train_curve gets one point per node;
 * dlp_feat_mem_estimate_of takes the largest. Blocks in the walk's bytes
 * (the graph's fp32 types); weights as shares of the weights. */
static bool train_curve(dlp_feat_graph *fg, const dlp_graph *g,
                        const int *troot, const uint8_t *saved, const int *smin,
                        const double *xs, const double *af, const uint8_t *virt,
                        const uint8_t *hostv, const int *last, const int *tpos) {
    size_t N = g->n_nodes, V = g->n_values ? g->n_values : 1;
    free(fg->train_curve);
    fg->train_curve = NULL;
    fg->n_train_curve = 0;
    if (!N) return true;
    double *sv = calloc(2 * N, sizeof *sv), *gd = calloc(2 * (N + 1), sizeof *gd),
           *wb = calloc(N, sizeof *wb), *hb = calloc(N, sizeof *hb);
    int *wl = malloc(V * sizeof *wl), *wf = malloc(V * sizeof *wf),
        *lc = malloc(V * sizeof *lc);
    uint8_t *rg = calloc(V, 1);
    dlp_feat_train_point *c = malloc(N * sizeof *c);
    bool ok = sv && gd && wb && hb && wl && wf && lc && rg && c;
    if (!ok) goto out;
    for (size_t v = 0; v < V; v++) { wl[v] = lc[v] = -1; wf[v] = INT_MAX; }
    /* what needs a gradient: whatever a weight flows into (the input
     * does not); each weight's last user, and the first user of one a
     * half-precision product casts */
    for (size_t t = 0; t < N; t++) {
        const dlp_node *n = &g->nodes[g->topo[t]];
        bool r = false, hw = dlp_feat_in_list(n->op_type, amp_half_ops);
        for (int k = 0; k < n->n_inputs; k++) {
            int v = n->inputs[k];
            if (v < 0) continue;
            if (is_weight_init(&g->values[v])) {
                r = true;
                wl[v] = (int)t;
                if (hw && (int)t < wf[v]) wf[v] = (int)t;
            } else if (rg[v]) {
                r = true;
            }
        }
        for (int k = 0; k < n->n_outputs; k++)
            if (r && n->outputs[k] >= 0) rg[n->outputs[k]] = 1;
    }
    double wtot = 0;
    for (size_t v = 0; v < g->n_values; v++) {
        if (wl[v] < 0) continue;
        double b = init_bytes(&g->values[v]);
        wb[wl[v]] += b;
        wtot += b;
        if (wf[v] < INT_MAX) hb[wf[v]] += b;
    }
    for (size_t v = 0; v < g->n_values; v++) {
        if ((saved[v] & 8) && smin[v] < INT_MAX)
            sv[smin[v]] += (double)vbytes(&g->values[v]);
        if ((saved[v] & 4) && smin[V + v] < INT_MAX)
            sv[N + smin[V + v]] += (double)vbytes(&g->values[v]) * af[v];
        /* the gradients, per storage block: from the producer of the
         * block to the last user of any value in it */
        if (rg[v] && !virt[v] && !hostv[v] && is_act(g, &g->values[v]) &&
            last[v] > lc[troot[v]])
            lc[troot[v]] = last[v];
    }
    for (size_t v = 0; v < g->n_values; v++) {
        int p = g->values[v].producer;
        if (lc[v] < 0 || troot[v] != (int)v || p < 0) continue;
        int a = tpos[p], e = lc[v] < (int)N ? lc[v] : (int)N - 1;
        if (e < a) continue;
        double b = (double)vbytes(&g->values[v]);
        gd[a] += b;
        gd[e + 1] -= b;
        gd[N + 1 + a] += b * af[v];
        gd[N + 1 + e + 1] -= b * af[v];
    }
    double s = 0, gr = 0, h = 0, sa = 0, ga = 0;
    for (size_t t = 0; t < N; t++) {   /* prefix sums: what is live at t */
        s += sv[t] + xs[t];
        sa += sv[N + t] + xs[N + t];
        gr += gd[t];
        ga += gd[N + 1 + t];
        h += hb[t];
        bool dense, pointwise;
        double ws = DLP_MEM_CONV_WS_FACTOR *
                    conv_io_bytes(g, &g->nodes[g->topo[t]], &dense, &pointwise);
        c[t].act = s + gr + ws;
        c[t].act_amp = sa + ga + 0.5 * ws;
        c[t].ws = ws;
        c[t].fwd = s;
        c[t].fwd_amp = sa;
        c[t].half_w = wtot > 0 ? h / wtot : 0;
    }
    double w = 0;
    for (size_t t = N; t-- > 0;) {     /* suffix sums: gradients made */
        w += wb[t];
        c[t].grad_w = wtot > 0 ? w / wtot : 1;
    }
    fg->train_curve = c;
    fg->n_train_curve = (int)N;
    c = NULL;
out:
    free(sv); free(gd); free(wb); free(hb); free(wl); free(wf); free(lc);
    free(rg); free(c);
    return ok;
}

/* Fills fg->peak_act_bytes, peak_pre_blas_bytes, peak_post_blas_bytes,
 * n_blas, n_sdpa. Returns false when out of memory. */
static bool mem_liveness(dlp_feat_graph *fg, const dlp_graph *g,
                         const dlp_feat_uses *us) {
    static const char *const views[] = VIEW_OPS;
    static const char *const host[] = HOST_OPS;
    static const char *const inplace[] = INPLACE_OPS;
    static const char *const clone_inpl[] = {"Clip", "HardSwish", "HardSigmoid",
                                             NULL};
    size_t V = g->n_values ? g->n_values : 1, N = g->n_nodes;
    int *last = malloc(V * sizeof *last), *root = malloc(V * sizeof *root),
        *rlast = malloc(V * sizeof *rlast);
    double *alloc = calloc(V, sizeof *alloc);
    /* extra[2 i + h]: the blocks the attention around Softmax i adds to
     * what the walk has live there (attn_extra_bytes in feat.h) */
    double *extra = calloc(2 * (N ? N : 1), sizeof *extra);
    /* held[t]: conv outputs a norm-act module's caller holds, freed after
     * position t (norm_act_end); tpos: each node's position in g->topo */
    double *held = calloc(N ? N : 1, sizeof *held);
    int *tpos = malloc((N ? N : 1) * sizeof *tpos);
    /* onek / alias1k: mark_one_kernel_acts and alias_unmasked_bias (the
     * inference walk only; the training count below reads virt) */
    uint8_t *virt = calloc(V, 1), *hostv = calloc(V, 1), *onek = calloc(V, 1),
            *fused = calloc(N ? N : 1, 1), *masknode = calloc(N ? N : 1, 1),
            *dyn = calloc(V, 1), *fseen = calloc(V, 1);
    int *silu_x = malloc((N ? N : 1) * sizeof *silu_x);
    int *alias1k = malloc(V * sizeof *alias1k);
    int *ext_head = NULL, *ext_next = NULL;
    /* the layout rule (feat_layout.c): lsdpa[i] its attention marks,
     * lcopy[v] a view op's output that is a copy, ltmp[i] the contiguous
     * copies node i makes of its inputs while it runs */
    uint8_t *lsdpa = calloc(N ? N : 1, 1), *lcopy = calloc(V, 1),
            *lact = calloc(V, 1), *fixed = calloc(V, 1);
    double *ltmp = calloc(N ? N : 1, sizeof *ltmp);
    /* lmm[2 i + k]: at::matmul's copy of MatMul i's operand k, which the
     * product saves for backward instead of the operand (training) */
    double *lmm = calloc(2 * (N ? N : 1), sizeof *lmm);
    int *keep = malloc(V * sizeof *keep);   /* a copy's source block, -1 */
    /* the group norms (alias_group_norm, mark_fused_acts), and troot: the
     * storage block of each value for the training count, as exported
     * (without the inference walk's group-norm and layout rules) */
    int *gnal = malloc(V * sizeof *gnal), *troot = malloc(V * sizeof *troot);
    uint8_t *silugn = calloc(N ? N : 1, 1);
    /* the training count's attention rules: tnosave[v], a value an SDPA
     * call with a learned bias never builds; tmath[2 i + a], the blocks
     * the math path of the attention around Softmax i saves (a 0: the
     * graph's bytes, 1: an autocast step's) */
    uint8_t *tnosave = calloc(V, 1);
    double *tmath = calloc(2 * (N ? N : 1), sizeof *tmath);
    bool ok = lsdpa && lcopy && lact && fixed && ltmp && lmm && keep && gnal && troot &&
              silugn && tnosave && tmath &&
              last && root && rlast && alloc && extra && held && tpos &&
              virt && hostv && onek && alias1k && fused && masknode && dyn &&
              fseen && silu_x;
    if (!ok) goto out;
    for (size_t i = 0; i < N; i++) silu_x[i] = -1;
    for (size_t t = 0; t < N; t++) tpos[g->topo[t]] = (int)t;
    for (size_t v = 0; v < V; v++) alias1k[v] = keep[v] = gnal[v] = -1;
    for (size_t v = 0; v < g->n_values; v++) {
        last[v] = rlast[v] = -1;
        root[v] = troot[v] = (int)v;
    }
    for (size_t t = 0; t < N; t++) {
        const dlp_node *n = &g->nodes[g->topo[t]];
        for (int k = 0; k < n->n_inputs; k++)
            if (n->inputs[k] >= 0) last[n->inputs[k]] = (int)t;
    }
    for (size_t i = 0; i < g->n_outputs; i++) last[g->outputs[i]] = (int)N;
    for (size_t i = 0; i < g->n_inputs; i++) last[g->inputs[i]] = (int)N;
    ext_head = malloc((N ? N : 1) * sizeof *ext_head);
    ext_next = malloc(V * sizeof *ext_next);
    if (!ext_head || !ext_next) { ok = false; goto out; }
    for (size_t v = 0; v < V; v++) ext_next[v] = -1;
    hold_encoder_states(g, last, ext_next);
    if (!hold_module_inputs(g, last, ext_head, ext_next)) { ok = false; goto out; }
    /* attention masks the model never builds: values computed from shapes
     * and constants only (no input data, no weight), every use of which
     * is an SDPA mask operand or feeds only such values, are virtual */
    for (size_t t = 0; t < N; t++) {
        const dlp_node *n = &g->nodes[g->topo[t]];
        bool d = false;
        if (!dlp_feat_in_list(n->op_type, host))
            for (int k = 0; k < n->n_inputs; k++) {
                int v = n->inputs[k];
                if (v < 0) continue;
                const dlp_value *x = &g->values[v];
                if (dyn[v] || (x->flags & DLP_V_INPUT) || is_weight_init(x))
                    d = true;
            }
        for (int k = 0; k < n->n_outputs; k++)
            if (n->outputs[k] >= 0) dyn[n->outputs[k]] = d;
    }
    for (size_t i = 0; i < N; i++) {
        if (strcmp(g->nodes[i].op_type, "Softmax")) continue;
        bool biased = false;
        int qk = -1, pv = -1, fb = -1;
        bool hit = mark_sdpa(g, us, dyn, (int)i, virt, fused, masknode,
                             &biased, &qk, &pv, &fb);
        int64_t ne = 0;
        const dlp_node *sm = &g->nodes[i];
        train_attention(g, us, (int)i, hit, qk, pv, tnosave, &tmath[2 * i]);
        const dlp_shape *ss = &g->values[sm->inputs[0]].shape;
        if (!dlp_shape_numel(ss, &ne)) ne = 0;
        if (pv >= 0 && ss->rank == 4) lsdpa[pv] = 2;
        if (qk >= 0 && !lsdpa[qk]) lsdpa[qk] = 1;
        if (hit) {
            fg->in_sdpa[i] = 2;
            fg->sdpa_pv[i] = pv;
            fg->n_sdpa++;
            if ((double)ne > fg->max_scores_elems)
                fg->max_scores_elems = (double)ne;
            if (ss->rank == 4 && ss->dims[1].value > 0 &&
                (double)ne / (double)ss->dims[1].value > fg->max_mask_elems)
                fg->max_mask_elems = (double)ne / (double)ss->dims[1].value;
            if (pv >= 0 && sdpa_gqa(g, pv) && (double)ne > fg->max_gqa_scores_elems)
                fg->max_gqa_scores_elems = (double)ne;
            /* the math path: its blocks (above), and at half precision
             * its products and softmax in float (time, kernels) */
            if (ss->rank != 4) {
                math_sdpa_bytes(g, qk, pv, &extra[2 * i]);
                mark_math_attn(g, us, (int)i, fg->half_f32);
            }
            /* a folded relative position bias (timm's BEiT): the module
             * holds a small table and an int64 [Sq, Sk] index buffer, not
             * the folded [1, heads, Sq, Sk] constant; each call gathers
             * the table by the index and permutes the result into a
             * contiguous block, two bias-sized blocks at the model
             * precision live as the kernel starts. Allocator history
             * (thirtieth session, H200, eager): beit_base_patch16_384
             * fp16 b1 peaks at the attention with two 7.62 MiB blocks
             * (12 x 577 x 577 x 2 B) beside qkv and two token blocks, and
             * holds ~30 MiB more than its parameters before the forward
             * (12 x 577 x 577 x 8 B of indices) */
            int64_t nb = 0;
            if (fb >= 0 && ss->rank == 4 && ss->dims[2].value > 0 &&
                ss->dims[3].value > 0 &&
                dlp_shape_numel(&g->values[fb].shape, &nb)) {
                fg->buffer_bytes +=
                    8.0 * (double)ss->dims[2].value * (double)ss->dims[3].value;
                if (!fseen[fb]) {
                    fseen[fb] = 1;
                    fg->folded_bias_bytes += init_bytes(&g->values[fb]);
                }
                extra[2 * i] += 2.0 * 4 * (double)nb;
                extra[2 * i + 1] += 2.0 * 2 * (double)nb;
            }
        } else if (biased) {
            if ((double)ne > fg->max_biased_scores_elems)
                fg->max_biased_scores_elems = (double)ne;
            /* float at half precision: language models only (Swin /
             * MaxViT keep theirs in the model's precision) */
            if (fg->seq > 0) {
                double nq = mark_math_attn(g, us, (int)i, fg->half_f32);
                if (nq > fg->max_biased_q_elems) fg->max_biased_q_elems = nq;
                alias_unmasked_bias(g, dyn, (int)i, alias1k);
                /* an SDPA call (its products found): one attention of
                 * the operator-time model (op_records), T5's bias a
                 * [1, H, L, S] mask whose head axis is innermost, which
                 * no fused kernel takes (probe_sdpa.py --kernels,
                 * forty-ninth session: t5-base fp16 8 x 512 runs float
                 * SIMT products and a float softmax over the scores in
                 * both runtimes, 7.2 of its 11.0 ms eagerly) */
                if (pv >= 0) {
                    mark_math_attn(g, us, (int)i, fg->battn);
                    fg->battn[i] = 2;
                    fg->sdpa_pv[i] = pv;
                }
            }
        }
    }
    for (size_t i = 0; i < N; i++)     /* the other nodes of the patterns */
        if (!fg->in_sdpa[i] && (fused[i] || masknode[i])) fg->in_sdpa[i] = 1;
    if (fg->n_sdpa)
        for (size_t t = N; t-- > 0;) {
            const dlp_node *n = &g->nodes[g->topo[t]];
            if (dlp_feat_in_list(n->op_type, host)) continue;   /* never on device */
            for (int k = 0; k < n->n_outputs; k++) {
                int v = n->outputs[k];
                if (v < 0 || dyn[v] || !us->n[v] ||
                    (g->values[v].flags & DLP_V_OUTPUT))
                    continue;
                bool all = true;
                for (int e = us->start[v]; e < us->start[v + 1] && all; e++) {
                    const dlp_node *c = &g->nodes[us->node[e]];
                    if (masknode[us->node[e]]) continue;
                    for (int j = 0; j < c->n_outputs && all; j++)
                        if (c->outputs[j] >= 0 && !virt[c->outputs[j]]) all = false;
                    if (c->n_outputs == 0) all = false;
                }
                if (all) { virt[v] = 1; fg->n_mask_virt++; }
            }
        }
    /* a virtual mask is causal when it compares two index tensors (query
     * position against key position: LessOrEqual(kv, q) in the exported
     * HF masks); a bidirectional one (BERT-style encoders) compares an
     * index with a constant; virtual values without a comparison are
     * shape arithmetic around an unmasked attention (ViT). See DLP_MEM_GRAPH_BIDIR_SCORE_BYTES. */
    if (fg->n_mask_virt) {
        static const char *const cmp[] = {"Less", "LessOrEqual", "Greater",
                                          "GreaterOrEqual", NULL};
        bool causal = false;
        int ncmp = 0;
        for (size_t i = 0; i < N && !causal; i++) {
            const dlp_node *n = &g->nodes[i];
            if (n->n_outputs < 1 || n->outputs[0] < 0 || !virt[n->outputs[0]] ||
                n->n_inputs < 2 || !dlp_feat_in_list(n->op_type, cmp))
                continue;
            int nonconst = 0;
            for (int k = 0; k < 2; k++) {
                int v = n->inputs[k];
                const dlp_node *pn = dlp_feat_producer_of(g, v);
                if (v >= 0 && !(g->values[v].flags & DLP_V_INITIALIZER) &&
                    !(pn && !strcmp(pn->op_type, "Constant")))
                    nonconst++;
            }
            causal = nonconst == 2;
            ncmp++;
        }
        /* no comparison at all: shape arithmetic, not a mask (ViT) */
        fg->mask_bidir = ncmp > 0 && !causal;
        fg->mask_causal = causal;
    }
    /* index grids of a slice assignment: the exporter lowers
     * x[:, :, a:, b:] = y (MViTv2's relative position term) to ScatterND
     * with int64 indices built from shapes (Range, Expand, Concat: 8
     * bytes x rank per element of the slice), which PyTorch never builds
     * (copy_ into a view of x). A value computed from shapes and
     * constants only whose every use is a ScatterND's indices, or feeds
     * only such values, is not allocated; the ScatterND writes into its
     * data operand when that dies there (INPLACE_OPS). */
    for (size_t t = N; t-- > 0;) {
        const dlp_node *n = &g->nodes[g->topo[t]];
        if (dlp_feat_in_list(n->op_type, host)) continue;
        for (int k = 0; k < n->n_outputs; k++) {
            int v = n->outputs[k];
            if (v < 0 || dyn[v] || virt[v] || !us->n[v] ||
                (g->values[v].flags & DLP_V_OUTPUT))
                continue;
            bool all = true;
            for (int e = us->start[v]; e < us->start[v + 1] && all; e++) {
                const dlp_node *c = &g->nodes[us->node[e]];
                if (!strcmp(c->op_type, "ScatterND") && c->n_inputs == 3 &&
                    c->inputs[1] == v && c->inputs[0] != v &&
                    c->inputs[2] != v)
                    continue;
                for (int j = 0; j < c->n_outputs && all; j++)
                    if (c->outputs[j] >= 0 && !virt[c->outputs[j]]) all = false;
                if (c->n_outputs == 0) all = false;
            }
            if (all) virt[v] = 1;
        }
    }
    for (size_t i = 0; i < N; i++)
        if (fg->in_sdpa[i] && !lsdpa[i]) lsdpa[i] = 1;
    for (size_t v = 0; v < g->n_values; v++)
        lact[v] = !virt[v] && is_act(g, &g->values[v]);
    fg->val_cl = calloc(V, 1);
    if (!fg->val_cl || dlp_feat_layout(g, lact, lsdpa, lcopy, ltmp, fg->val_cl, lmm) != 0) {
        ok = false;
        goto out;
    }
    mark_fused_acts(g, us, virt, onek, silu_x, silugn);
    mark_one_kernel_acts(g, us, onek, alias1k);
    alias_linear_bias(g, us, alias1k);
    alias_group_norm(g, us, onek, gnal);
    /* storage of each value: its own block, an alias of an input's, or
     * none; live counts the walk's bytes (the graph's types, halved at
     * half precision afterwards), fix those of the live blocks that keep
     * their bytes at half precision (fixed[]: fixed_size, and a float
     * that the forward computes from shapes and constants alone, dyn[]
     * unset: torch.ones / arange build float32 whatever the module's
     * type, DeBERTa's extended mask, the decoders' position tables),
     * which count twice at half precision (h 1) so that halving leaves
     * them whole */
    for (size_t v = 0; v < g->n_values; v++)
        fixed[v] = fixed_size(&g->values[v]) ||
                   (g->values[v].producer >= 0 && !dyn[v]);
    double live = 0, fix = 0;
    for (size_t i = 0; i < g->n_inputs; i++) {
        const dlp_value *x = &g->values[g->inputs[i]];
        if (x->flags & DLP_V_INITIALIZER) continue;
        alloc[g->inputs[i]] = (double)vbytes(x);
        rlast[g->inputs[i]] = (int)N;
        live += alloc[g->inputs[i]];
        if (fixed[g->inputs[i]]) fix += alloc[g->inputs[i]];
    }
    /* [0] fp32, [1] half, [2] half without the dense convolutions'
     * extras (peak_half_nodense_bytes) */
    double peak_pre[3] = {live, live + fix, live + fix}, peak_post[3] = {0, 0, 0};
    fg->fp16_stem_peak_bytes[0] = fg->fp16_stem_peak_bytes[1] = 0;
    free(fg->convs);
    fg->convs = NULL;
    fg->n_convs = 0;
    bool post = false;
    for (size_t t = 0; t < N; t++) {
        const dlp_node *n = &g->nodes[g->topo[t]];
        int in0 = n->n_inputs > 0 ? n->inputs[0] : -1;
        bool silu = silu_x[g->topo[t]] >= 0;
        if (silu) in0 = silu_x[g->topo[t]];   /* the in-place operand */
        bool all_host = true;
        for (int k = 0; k < n->n_inputs; k++) {
            int v = n->inputs[k];
            if (v >= 0 && !hostv[v] && is_act(g, &g->values[v]))
                all_host = false;
        }
        bool in_act = in0 >= 0 && is_act(g, &g->values[in0]) && !hostv[in0] &&
                      !virt[in0];
        bool is_view = dlp_feat_in_list(n->op_type, views) && in_act;
        /* torch.split / chunk / unbind return views of their input, every
         * one of them: the input's block lives until the last part dies
         * (swinv2_cr's q, k, v keep the whole qkv projection until the PV
         * product) */
        bool is_split = !strcmp(n->op_type, "Split") && in_act;
        /* Hugging Face language models (a graph with a sequence
         * dimension) apply nn.ReLU() / F.relu out of place: OPT's
         * fc1 -> ReLU -> fc2 holds both [tokens, ffn] blocks at the peak
         * (allocator history, twenty-first session) */
        bool relu_oop = fg->seq > 0 && !strcmp(n->op_type, "Relu");
        bool is_inpl = (silu || dlp_feat_in_list(n->op_type, inplace)) && in_act &&
                       !relu_oop &&
                       !(g->values[in0].flags & DLP_V_INPUT) &&
                       rlast[root[in0]] == (int)t && n->n_outputs == 1 &&
                       vbytes(&g->values[n->outputs[0]]) ==
                           vbytes(&g->values[in0]);
        if (is_blas(n->op_type) && !fused[g->topo[t]]) {
            post = true;
            fg->n_blas++;
        }
        if (dlp_feat_linear_bias(g, n)) fg->n_linear_bias++;
        for (int k = 0; k < n->n_outputs; k++) {
            int v = n->outputs[k];
            if (v < 0) continue;
            if (dlp_feat_in_list(n->op_type, host) || (all_host && n->n_inputs > 0 &&
                                              strcmp(n->op_type, "ConstantOfShape"))) {
                hostv[v] = 1;
                continue;
            }
            if (virt[v] || onek[v] || !is_act(g, &g->values[v])) continue;
            bool tinpl = is_inpl && !silugn[g->topo[t]];
            troot[v] = (((is_view || tinpl) && k == 0) || is_split) ? troot[in0]
                       : alias1k[v] >= 0 ? troot[alias1k[v]] : (int)v;
            int al = alias1k[v] >= 0 ? alias1k[v] : gnal[v];
            if ((((is_view && !lcopy[v]) || is_inpl) && k == 0) || is_split) {
                root[v] = root[in0];
            } else if (al >= 0) {
                root[v] = root[al];
            } else {
                alloc[v] = (double)vbytes(&g->values[v]);
                live += alloc[v];
                if (fixed[v]) fix += alloc[v];
                fg->sum_alloc_bytes += alloc[v];
                /* a reshape that copies (feat_layout.c): the code keeps
                 * what it copied in a local while it works on the copy
                 * (SwinV2's padded shifted_x through the window
                 * attention, BoTNet's qkv projection through its heads) */
                if (is_view && k == 0) keep[v] = root[in0];
            }
            if (last[v] > rlast[root[v]]) rlast[root[v]] = last[v];
            for (int r = keep[root[v]]; r >= 0; r = keep[r])
                if (rlast[r] < rlast[root[v]]) rlast[r] = rlast[root[v]];
        }
        /* a convolution's cuDNN workspace is live while it runs */
        bool dense, pointwise;
        double io = conv_io_bytes(g, n, &dense, &pointwise);
        if (DLP_MEM_CONV_WS_FACTOR * io > fg->max_conv_ws_bytes)
            fg->max_conv_ws_bytes = DLP_MEM_CONV_WS_FACTOR * io;
        /* CUDA's max_pool2d runs max_pool2d_with_indices and drops the
         * int64 indices after it returns: one per output element while
         * it runs, at every precision (the walk's half units: x 2) */
        double pidx = maxpool_index_bytes(g, n);
        for (int h = 0; h < 3; h++)
            raise_peak(post ? &peak_post[h] : &peak_pre[h],
                       live + (h ? fix : 0) +
                           (h == 2 && dense ? 0
                                            : conv_extra_bytes(io, dense, pointwise, h > 0)) +
                           ltmp[g->topo[t]] + (h ? 2 : 1) * pidx);
        /* a dense 2-D convolution's record for the workspace model
         * (feat_convws.c): what is live while it runs */
        dlp_conv_shape cs1;
        bool cs_ok = dense && dlp_feat_conv_shape(g, n, &cs1);
        if (cs_ok && fg->val_cl[n->inputs[0]]) cs1.cl = true;   /* a layout
                                        the pass found channels-last */
        if (cs_ok && !add_conv_record(
                fg, &cs1, live + ltmp[g->topo[t]],
                live + fix + ltmp[g->topo[t]], post, (int)t)) {
            ok = false;
            goto out;
        }
        double stem = fp16_stem_ws_bytes(g, n);
        if (stem > 0)   /* fp16 bytes, the walk's fp32 units: x 2 */
            raise_peak(&fg->fp16_stem_peak_bytes[post],
                       live + fix + fmax(conv_extra_bytes(io, dense, pointwise, true),
                                   2 * stem));
        if (fg->in_sdpa[g->topo[t]] == 2 && live > fg->sdpa_live_bytes)
            fg->sdpa_live_bytes = live;
        /* an attention's own blocks (the math path's, a relative
         * position bias') on what is live at its softmax, the walk's
         * bytes at the precision (half: 2 of every 4) */
        for (int h = 0; h < 2; h++)
            if (extra[2 * g->topo[t] + h] > 0)
                fg->attn_extra_bytes[h] = fmax(fg->attn_extra_bytes[h],
                                               (live + (h ? fix : 0)) * (h ? 0.5 : 1) +
                                                   extra[2 * g->topo[t] + h]);
        /* free the blocks whose last alias died here (or was never used) */
        for (int k = 0; k < n->n_inputs + n->n_outputs; k++) {
            int v = k < n->n_inputs ? n->inputs[k] : n->outputs[k - n->n_inputs];
            if (v >= 0) live -= free_chain(fixed, alloc, rlast, keep, root[v], (int)t, &fix);
        }
        for (int v = ext_head[t]; v >= 0; v = ext_next[v])
            live -= free_chain(fixed, alloc, rlast, keep, root[v], (int)t, &fix);
        live -= held[t];
        /* a folded BatchNorm's output, next to the conv output it reads,
         * after the conv's input may have been freed; in a norm-act
         * module the conv output stays until the module returns */
        double bn = folded_bn_bytes(g, n);
        int hend = bn > 0 ? norm_act_end(g, n, tpos, us) : -1;
        if (hend > (int)t) {
            live += bn;
            held[hend] += bn;
        } else if (bn > 0) {
            for (int h = 0; h < 3; h++)
                raise_peak(post ? &peak_post[h] : &peak_pre[h],
                           live + (h ? fix : 0) + bn);
        }
    }
    /* training: the blocks autograd saves for backward (see
     * saves_input / saves_output), counted once per storage block */
    {
        uint8_t *saved = calloc(V, 1), *gtmp = calloc(V, 1);
        double mcopies = 0;   /* the batched products' saved copies */
        double wcomp = 0;     /* the computed weights' (computed_weight) */
        double rsv = 0;       /* the recurrent layers' reserve buffers and
                               * copied inputs (rnn_input_copied) */
        /* smin[r]: the position of block r's earliest saver, whose
         * backward frees it; xs[t]: bytes node t saves outside the
         * blocks (indices, a folded BN's output, a clone) */
        int *smin = malloc(2 * V * sizeof *smin);
        double *xs = calloc(2 * (N ? N : 1), sizeof *xs), *af = malloc(V * sizeof *af);
        if (!saved || !gtmp || !smin || !xs || !af) {
            free(saved); free(gtmp); free(smin); free(xs); free(af);
            ok = false;
            goto out;
        }
        /* the same for an autocast step (amp_factors): smin[V + r], and
         * xs[N + t] in its own bytes, with the copies an op casting its
         * input saves (a Linear's half copy of a float32 input, a
         * Softmax's float32 copy of a half one) */
        double *xa = xs + (N ? N : 1);
        for (size_t v = 0; v < 2 * V; v++) smin[v] = INT_MAX;
        amp_factors(g, us, af);
        mark_gelu_temps(g, us, gtmp);
        mark_gelu_tanh_temps(g, us, gtmp);
        mark_group_norm_temps(g, us, gtmp);
        mark_silu_temps(g, us, gtmp);
        for (size_t t = 0; t < N; t++) {
            const dlp_node *n = &g->nodes[g->topo[t]];
            /* an in-place activation whose derivative reads its input
             * (SiLU, Clip as ReLU6, HardSwish, HardSigmoid; not ReLU or
             * LeakyReLU, whose in-place forms read the result): autograd
             * saves a clone of the input x before the op overwrites it, a
             * block of its own (torchvision EfficientNet-B0 at batch 8:
             * 188 MiB of its 675 MiB saved; tests/gen_train_saved.py) */
            int cx = silu_x[g->topo[t]] >= 0 ? silu_x[g->topo[t]]
                     : dlp_feat_in_list(n->op_type, clone_inpl) && n->n_inputs > 0
                         ? n->inputs[0] : -1;
            if (cx >= 0 && !(n->n_outputs > 0 && n->outputs[0] >= 0 &&
                             !virt[cx] && troot[n->outputs[0]] == troot[cx]))
                cx = -1;
            for (int k = 0; k < n->n_inputs + n->n_outputs; k++) {
                bool in = k < n->n_inputs;
                int v = in ? n->inputs[k] : n->outputs[k - n->n_inputs];
                if (v < 0 || virt[v] || hostv[v] || !is_act(g, &g->values[v]))
                    continue;
                /* bit 1: saved, as exported (the static feature's
                 * count); bit 2: the training estimate's blocks, i.e.
                 * not an erf GELU's temporaries, and a saved slice's
                 * base instead of the slice; bit 16: bit 2 before the
                 * batched products' copies (saved_train_bytes_v65) */
                bool all = in ? saves_input(g, n, k) : saves_output(n->op_type);
                bool tonly = !all && (in ? train_saves_input(g, n, k)
                                         : train_saves_output(n, k - n->n_inputs));
                /* an in-place SiLU's input: the clone is what its
                 * backward keeps; the block of x holds the SiLU's output
                 * from here on, saved only if a later op saves that
                 * (timm's DarkBlock: the SiLU into the residual Add,
                 * which saves nothing; CSPDarkNet 7% over without this),
                 * so x is no training block (bits 2, 8, 4). Clip /
                 * HardSwish stay as they were: the torchvision MobileNets'
                 * autograd counts (test_memest) move away by 0.3-0.7%
                 * under the same rule. The counts the networks read keep
                 * x (bits 1, 16). */
                bool clone_only = all && in && v == cx && silu_x[g->topo[t]] >= 0;
                if (all || tonly) {
                    /* a slice or split is a view in PyTorch: saving it
                     * keeps its whole base alive (ShuffleNetV2's chunk of
                     * the shuffled tensor, saved by the branch's conv) */
                    if (all) saved[troot[v]] |= 1;
                    int sv = tonly && !strcmp(n->op_type, "AveragePool")
                                 ? pool_saved_input(g, us, v) : v;
                    int r = gtmp[v] ? -1
                                    : troot[slice_base(g, sv, virt, hostv, troot, true)];
                    int r16 = gtmp[v] ? -1
                                      : troot[slice_base(g, sv, virt, hostv, troot, false)];
                    /* a Linear's folded copy of a permuted input
                     * (linear_folds_copy), a recurrent layer's copied
                     * input (rnn_input_copied): a block of its own, freed
                     * by the node's backward, not the view's base */
                    bool fold = in && k == 0 &&
                                (linear_folds_copy(g, n) || rnn_input_copied(g, n));
                    /* a batched product's operand that at::matmul copies
                     * to fold its batch dimensions (feat_layout.c): the
                     * copy is the block bmm saves, freed by its
                     * backward (HaloNet's unfolded keys and values) */
                    double mc = in && !fold && batched_matmul(g, n)
                                    ? lmm[2 * (size_t)g->topo[t] + (size_t)k] : 0;
                    if (fold) {
                        fg->saved_train_bytes += (double)vbytes(&g->values[v]);
                        xs[t] += (double)vbytes(&g->values[v]);
                        if (is_rnn(n)) rsv += (double)vbytes(&g->values[v]);
                    } else if (mc > 0) {
                        fg->saved_train_bytes += mc;
                        mcopies += mc;
                        xs[t] += mc;
                        if (r16 >= 0) saved[r16] |= 16;   /* the count before */
                    } else {
                        if (r >= 0 && !clone_only) saved[r] |= 2;
                        if (r16 >= 0 && !tonly) saved[r16] |= 16;
                    }
                    /* bits 8 and 4: the step's blocks for train_curve,
                     * fp32 and autocast (train_attention's rules too) */
                    if (r >= 0 && !tnosave[v] && !clone_only) {
                        if (!fold && !(mc > 0)) {
                            saved[r] |= 8;
                            if ((int)t < smin[r]) smin[r] = (int)t;
                        }
                        bool fl = g->values[v].dtype == DLP_DT_FLOAT,
                             to_half = dlp_feat_in_list(n->op_type, amp_half_ops),
                             to_f32 = amp_f32_node(g, us, n) &&
                                      !dlp_feat_in_list(n->op_type, amp_f32_nocopy_ops);
                        if (in && fl && ((to_half && af[v] == 1) || (to_f32 && af[v] < 1))) {
                            xa[t] += (double)vbytes(&g->values[v]) * (to_half ? 0.5 : 1);
                        } else if (mc > 0) {
                            xa[t] += mc * af[v];
                        } else {
                            saved[r] |= 4;
                            if ((int)t < smin[V + r]) smin[V + r] = (int)t;
                        }
                    }
                }
            }
            xs[t] += tmath[2 * g->topo[t]];
            xa[t] += tmath[2 * g->topo[t] + 1];
            /* a convolution whose weight the forward computes from the
             * parameters (weight standardisation: timm's ScaledStdConv2d
             * in the NF nets, StdConv2d in BiT, exported as a training-mode
             * BatchNormalization of the weight; hostv, no activation)
             * saves that weight, a tensor of its own, not a parameter;
             * under autocast its half copy, the float32 one dying at the
             * cast (nf_resnet101 fp32 b8: 12% under without it, the
             * model's 44.5 M weights) */
            if (!strcmp(n->op_type, "Conv") && n->n_inputs > 1 && n->inputs[1] >= 0 &&
                hostv[n->inputs[1]] && g->values[n->inputs[1]].dtype == DLP_DT_FLOAT &&
                computed_weight(g, n->inputs[1])) {
                double b = (double)vbytes(&g->values[n->inputs[1]]);
                fg->saved_train_bytes += b;
                wcomp += b;
                xs[t] += b;
                xa[t] += 0.5 * b;
            }
            /* MaxPool saves its int64 argmax indices, one per output */
            int64_t ne;
            if (!strcmp(n->op_type, "MaxPool") && n->n_outputs > 0 &&
                n->outputs[0] >= 0 && is_act(g, &g->values[n->outputs[0]]) &&
                dlp_shape_numel(&g->values[n->outputs[0]].shape, &ne)) {
                fg->saved_train_bytes += 8.0 * (double)ne;
                xs[t] += 8.0 * (double)ne;
                xa[t] += 8.0 * (double)ne;
            }
            /* a recurrent layer's cuDNN reserve buffer (gates and
             * states of every step), in half under autocast */
            double rs = rnn_reserve_bytes(g, n);
            fg->saved_train_bytes += rs;
            rsv += rs;
            xs[t] += rs;
            xa[t] += 0.5 * rs;
            /* BatchNormalization folded into this Conv by the eval-mode
             * export (dlp_feat_folded_bn): in training the conv output
             * and the BN output are two blocks, both saved (by the BN and
             * by what follows it) */
            double bn = folded_bn_bytes(g, n);
            if (bn > 0) {
                fg->saved_act_bytes += bn;
                fg->saved_train_bytes += bn;
                xs[t] += bn;
                xa[t] += bn * af[n->outputs[0]];
            }
            /* the in-place activation's clone of its input (cx) */
            if (cx >= 0) {
                fg->saved_train_bytes += (double)vbytes(&g->values[cx]);
                xs[t] += (double)vbytes(&g->values[cx]);
                xa[t] += (double)vbytes(&g->values[cx]) * af[cx];
            }
        }
        double blocks = 0, blocks_v65 = 0;
        for (size_t v = 0; v < g->n_values; v++) {
            if (saved[v] & 1) fg->saved_act_bytes += (double)vbytes(&g->values[v]);
            if (saved[v] & 2) blocks += (double)vbytes(&g->values[v]);
            if (saved[v] & 16) blocks_v65 += (double)vbytes(&g->values[v]);
        }
        fg->saved_train_bytes_v65 = fg->saved_train_bytes - mcopies - wcomp - rsv + blocks_v65;
        fg->saved_train_bytes += blocks;
        ok = train_curve(fg, g, troot, saved, smin, xs, af, virt, hostv, last, tpos);
        free(saved); free(gtmp); free(smin); free(xs); free(af);
        if (!ok) goto out;
    }
    for (int h = 0; h < 2; h++) {
        fg->peak_pre_blas_bytes[h] = peak_pre[h];
        fg->peak_post_blas_bytes[h] = peak_post[h];
        fg->peak_act_bytes_at[h] = fmax(peak_pre[h], peak_post[h]);
    }
    fg->peak_half_nodense_bytes[0] = peak_pre[2];
    fg->peak_half_nodense_bytes[1] = peak_post[2];
    fg->peak_act_bytes = fg->peak_act_bytes_at[0];
out:
    free(last); free(root); free(rlast); free(alloc); free(extra);
    free(held); free(tpos); free(virt); free(hostv); free(onek); free(fused);
    free(masknode); free(dyn); free(fseen);
    free(lsdpa); free(lcopy); free(lact); free(fixed); free(ltmp); free(lmm); free(keep);
    free(gnal); free(troot); free(silugn); free(tnosave); free(tmath);
    free(silu_x);
    free(alias1k);
    free(ext_head);
    free(ext_next);
    return ok;
}

/* A Where masking attention scores that a Softmax reads next (the masked
 * fill of an attention the exporter spelled out, DeBERTa's): its mfill
 * shape. PyTorch runs it as two kernels, a copy and the fill, which the
 * kernel count (feat_kern.c) leaves out like every Where's: a model's
 * features stay the ones it was fitted on. */
static bool mfill_scores(const dlp_graph *g, const dlp_node *n, dlp_op_shape *s,
                         const dlp_feat_uses *u) {
    int c = dlp_feat_sole_use(u, n->n_outputs > 0 ? n->outputs[0] : -1);
    return dlp_feat_op_shape(g, n, s) && s->kind == DLP_OP_MEM &&
           s->cat == DLP_MEM_MFILL && c >= 0 &&
           !strcmp(g->nodes[c].op_type, "Softmax");
}

/* Whether product n (not batched) runs with a Linear's bias in cuBLAS's
 * epilogue: a Gemm's C, or the bias Add (dlp_feat_linear_bias) that alone
 * reads a MatMul's output. */
static bool product_bias(const dlp_graph *g, const dlp_node *n,
                         const dlp_feat_uses *u) {
    if (!strcmp(n->op_type, "Gemm")) return dlp_feat_linear_bias(g, n);
    int c = dlp_feat_sole_use(u, n->n_outputs > 0 ? n->outputs[0] : -1);
    return c >= 0 && dlp_feat_linear_bias(g, &g->nodes[c]);
}

/* fg->ops: the convolutions and the products outside fused attention
 * (in_sdpa, set by the walk), the memory-bound nodes that launch a
 * kernel (eager_kern: dlp_feat_count_kernels first), the masked fills
 * of scores (mfill_scores) and each fused attention at its Softmax;
 * false when out of memory. */
static bool op_records(dlp_feat_graph *fg, const dlp_graph *g,
                       const dlp_feat_uses *u) {
    size_t cap = 0;
    dlp_op_shape s;
    fg->node_op = malloc((size_t)(fg->n_nodes ? fg->n_nodes : 1) * sizeof *fg->node_op);
    if (!fg->node_op) return false;
    for (int i = 0; i < fg->n_nodes; i++) {
        fg->node_op[i] = -1;
        const dlp_node *n = &g->nodes[i];
        bool ok;
        if (fg->in_sdpa[i] == 2) {
            ok = fg->sdpa_pv[i] >= 0 &&
                 dlp_feat_attn_shape(g, n, &g->nodes[fg->sdpa_pv[i]], &s);
            s.gmask = fg->mask_causal ? 2 : fg->mask_bidir ? 1 : 0;
        } else if (!strcmp(n->op_type, "Where"))
            ok = !fg->in_sdpa[i] && mfill_scores(g, n, &s, u);
        else if (cached_bias(g, n))
            ok = false;   /* no kernel after the warm-up call */
        else
            ok = !fg->in_sdpa[i] &&
                 (fg->eager_kern[i] > 0 || fg->tc[i]) &&   /* a memory-bound
                                                  node that launches a kernel,
                                                  or any conv or product */
                 dlp_feat_op_shape(g, n, &s);
        if (!ok) continue;
        if (s.kind == DLP_OP_MM && !s.bw) s.bias = product_bias(g, n, u);
        /* the input's layout, as the layout pass found it: a resize's
         * kernel and a convolution's (a channels-last depthwise one at
         * half precision launches a cuDNN kernel per channel) */
        if (s.kind == DLP_OP_MEM && s.cat == DLP_MEM_RESIZE)
            s.cl = fg->val_cl && fg->val_cl[n->inputs[0]];
        if (s.kind == DLP_OP_CONV && fg->val_cl && fg->val_cl[n->inputs[0]])
            s.cl = true;
        if (!dlp_grow((void **)&fg->ops, &cap, (size_t)fg->n_ops + 1, sizeof *fg->ops))
            return false;
        fg->node_op[i] = fg->n_ops;
        fg->ops[fg->n_ops++] = (dlp_feat_op){i, s};
    }
    /* the biased attentions, whole (their nodes keep their own records:
     * a model fitted before the hbias probes times them one by one) */
    for (int i = 0; i < fg->n_nodes; i++) {
        if (fg->battn[i] != 2 ||
            !dlp_feat_attn_shape(g, &g->nodes[i], &g->nodes[fg->sdpa_pv[i]], &s))
            continue;
        s.hbias = 1;
        if (!dlp_grow((void **)&fg->ops, &cap, (size_t)fg->n_ops + 1, sizeof *fg->ops))
            return false;
        fg->battn_op[i] = fg->n_ops;
        fg->ops[fg->n_ops++] = (dlp_feat_op){i, s};
    }
    /* the slow path's work of nn.MultiheadAttention (feat_mha.c) */
    for (int w = 0; w < fg->n_mha_work; w++) {
        if (!dlp_grow((void **)&fg->ops, &cap, (size_t)fg->n_ops + 1, sizeof *fg->ops))
            return false;
        fg->mha_op[fg->mha_work[w].node] = fg->n_ops;
        fg->ops[fg->n_ops++] = fg->mha_work[w];
    }
    return true;
}

#define DLP_FEAT_MAX_NODES 2000000

dlp_status dlp_feat_graph_build(dlp_feat_graph *fg, const dlp_graph *g,
                                int64_t batch, int64_t seq, int64_t height,
                                int64_t width, dlp_error *err) {
    memset(fg, 0, sizeof *fg);
    size_t N = g->n_nodes;
    if (N > DLP_FEAT_MAX_NODES)
        return dlp_fail(err, DLP_ERR_LIMIT, "graph has %zu nodes, featurizer "
                        "limit is %d", N, DLP_FEAT_MAX_NODES);
    if (N && !g->topo)
        return dlp_fail(err, DLP_ERR_ARG, "featurizer needs an analysed graph");
    fg->n_nodes = (int)N;
    fg->batch = batch; fg->seq = seq; fg->height = height; fg->width = width;
    fg->n_shape_conflicts = g->n_shape_conflicts;
    size_t n1 = N ? N : 1;
    fg->op = calloc(n1, sizeof *fg->op);
    fg->tc = calloc(n1, 1);
    fg->kern = calloc(n1, 1);
    fg->node_cat = calloc(n1, 1);
    fg->half_f32 = calloc(n1, 1);
    fg->in_sdpa = calloc(n1, 1);
    fg->sdpa_pv = malloc(n1 * sizeof *fg->sdpa_pv);
    fg->battn = calloc(n1, 1);
    fg->battn_op = malloc(n1 * sizeof *fg->battn_op);
    fg->mha_op = malloc(n1 * sizeof *fg->mha_op);
    fg->eager_kern = calloc(n1, 1);
    fg->half_kern = calloc(n1, 1);
    fg->clamp_elems = calloc(n1, sizeof *fg->clamp_elems);
    fg->dense = calloc(n1 * DLP_FEAT_DENSE, sizeof *fg->dense);
    fg->flops = calloc(n1, sizeof *fg->flops);
    fg->bytes = calloc(n1, sizeof *fg->bytes);
    /* edges: one per (producer node, consumer node, input slot) */
    size_t E = 0;
    for (size_t i = 0; i < N; i++)
        for (int k = 0; k < g->nodes[i].n_inputs; k++) {
            int v = g->nodes[i].inputs[k];
            if (v >= 0 && g->values[v].producer >= 0) E++;
        }
    fg->src = malloc((E ? E : 1) * sizeof *fg->src);
    fg->dst = malloc((E ? E : 1) * sizeof *fg->dst);
    if (!fg->op || !fg->tc || !fg->kern || !fg->node_cat || !fg->dense || !fg->flops || !fg->bytes ||
        !fg->src || !fg->dst || !fg->half_f32 || !fg->clamp_elems ||
        !fg->in_sdpa || !fg->sdpa_pv || !fg->eager_kern || !fg->half_kern ||
        !fg->battn || !fg->battn_op || !fg->mha_op) {
        dlp_feat_graph_free(fg);
        return dlp_fail(err, DLP_ERR_NOMEM, "featurizer: out of memory");
    }
    for (size_t i = 0; i < N; i++) fg->sdpa_pv[i] = fg->battn_op[i] = fg->mha_op[i] = -1;
    for (size_t i = 0; i < N; i++) {
        const dlp_node *n = &g->nodes[i];
        for (int k = 0; k < n->n_inputs; k++) {
            int v = n->inputs[k];
            if (v >= 0 && g->values[v].producer >= 0) {
                fg->src[fg->n_edges] = g->values[v].producer;
                fg->dst[fg->n_edges] = (int32_t)i;
                fg->n_edges++;
            }
        }
        int op = dlp_feat_op_index(n->domain, n->op_type);
        if (op < 0) {
            if (!fg->n_unknown)
                snprintf(fg->unknown_op, sizeof fg->unknown_op, "%s%s%s",
                         n->domain && n->domain[0] ? n->domain : "",
                         n->domain && n->domain[0] ? "." : "", n->op_type);
            fg->n_unknown++;
            op = DLP_FEAT_NOPS;
        }
        fg->op[i] = (int16_t)op;
        int cat = op_category(n->op_type);
        fg->cat[cat]++;
        fg->node_cat[i] = (uint8_t)cat;
        fg->tc[i] = cat == CAT_CONV || cat == CAT_MATMUL;
        {
            static const char *const views[] = {
                "Constant", "Shape", "Reshape", "Squeeze", "Unsqueeze",
                "Flatten", "Identity", "Dropout", "Size", NULL};
            fg->kern[i] = !dlp_feat_in_list(n->op_type, views) &&
                          n->cost.out_elems > 64;
            fg->n_kernels += fg->kern[i];
        }
        float *d = fg->dense + i * DLP_FEAT_DENSE;
        attr_feats(d, g, n);
        int in0 = -1;
        for (int k = 0; k < n->n_inputs && in0 < 0; k++)
            if (n->inputs[k] >= 0 && !(g->values[n->inputs[k]].flags &
                                       DLP_V_INITIALIZER))
                in0 = n->inputs[k];
        shape_feats(d + DLP_FEAT_NATTR, g, in0);
        shape_feats(d + DLP_FEAT_NATTR + DLP_FEAT_SHAPE_DIMS + 1, g,
                    n->n_outputs > 0 ? n->outputs[0] : -1);
        const dlp_cost *c = &n->cost;
        double bytes = (double)c->in_bytes + (double)c->out_bytes +
                       (double)c->weight_bytes;
        float *cf = d + DLP_FEAT_NATTR + 2 * (DLP_FEAT_SHAPE_DIMS + 1);
        cf[0] = lg(c->macs);
        cf[1] = lg(c->flops);
        cf[2] = lg((double)c->params);
        cf[3] = lg(bytes);
        cf[4] = c->known ? 1.f : 0.f;
        if (!c->known) fg->n_uncosted++;
        double fl = c->flops > 2 * c->macs ? c->flops : 2 * c->macs;
        fg->flops[i] = (float)fl;
        fg->bytes[i] = (float)bytes;
        fg->macs += c->macs;
        fg->flops_total += c->flops;
        fg->params += (double)c->params;
        fg->sum_act_out_bytes += (double)c->out_bytes;
    }
    /* weights, activations, io and peak live activations (topo order) */
    for (size_t v = 0; v < g->n_values; v++) {
        const dlp_value *x = &g->values[v];
        if (x->flags & DLP_V_INITIALIZER)
            fg->weight_bytes += init_bytes(x);
        else if (is_act(g, x))
            fg->act_bytes += (double)vbytes(x);
        if (x->flags & (DLP_V_INPUT | DLP_V_OUTPUT))
            fg->io_bytes += (double)vbytes(x);
    }
    dlp_feat_uses u;
    if (!dlp_feat_uses_of(g, &u)) {
        dlp_feat_graph_free(fg);
        return dlp_fail(err, DLP_ERR_NOMEM, "featurizer: out of memory");
    }
    bool ok = mem_liveness(fg, g, &u) && param_bytes(fg, g);
    if (ok && fg->max_biased_scores_elems > 0 && fg->seq > 0) mark_clamps(fg, g);
    ok = ok && dlp_feat_mha(fg, g, &u) && dlp_feat_count_kernels(fg, g, &u) &&
         op_records(fg, g, &u);
    dlp_feat_uses_free(&u);
    if (!ok) {
        dlp_feat_graph_free(fg);
        return dlp_fail(err, DLP_ERR_NOMEM, "featurizer: out of memory");
    }
    return DLP_OK;
}

/* ---- config-dependent assembly ------------------------------------------ */
void dlp_feat_device_of(const dlp_pred_config *c, dlp_feat_device *o) {
    const dlp_device *d = &c->device;
    o->sm_share = o->mem_share = 1.0;
    if (c->has_mig && d->sm_count > 0) {
        o->sm_share = (double)c->mig.sm_count / d->sm_count;
        o->mem_share = c->mig.mem_eighths / 8.0;
    } else if (c->sms > 0 && d->sm_count > 0) {
        o->sm_share = (double)c->sms / d->sm_count;
    }
    double tc = d->fp32_tflops, simt = d->fp32_tflops;
    if (c->precision == DLP_PREC_FP16) {
        tc = d->fp16_tc_tflops;
        simt = 2 * d->fp32_tflops;
    } else if (c->precision == DLP_PREC_BF16) {
        tc = d->bf16_tc_tflops > 0 ? d->bf16_tc_tflops : d->fp16_tc_tflops;
        simt = 2 * d->fp32_tflops;
    }
    if (tc <= 0) tc = d->fp32_tflops > 0 ? d->fp32_tflops : 1;
    if (simt <= 0) simt = 1;
    o->peak_tc_flops = tc * 1e12 * o->sm_share;
    o->peak_simt_flops = simt * 1e12 * o->sm_share;
    o->peak_fp32_flops = (d->fp32_tflops > 0 ? d->fp32_tflops : 1) * 1e12 *
                         o->sm_share;
    o->mem_bw = (d->mem_bw_gbs > 0 ? d->mem_bw_gbs : 1000) * 1e9 * o->mem_share;
    o->launch_s = (d->launch_us > 0 ? d->launch_us : 5) * 1e-6;
    o->mem_mib = d->mem_mib * o->mem_share;
}

static double prec_scale(dlp_precision p) {
    return p == DLP_PREC_FP32 ? 1.0 : 0.5;
}

double dlp_feat_conv_live_bytes(const dlp_feat_conv *r, dlp_precision p) {
    return p == DLP_PREC_FP32 ? r->live_bytes : r->live_half_bytes * prec_scale(p);
}

/* Node i's compute time (FLOPs at the tensor-core or SIMT peak) and memory
 * time (bytes at the precision's scale over the bandwidth), seconds, at
 * precision p. At fp16 / bf16 a half_f32 node runs at the FP32 CUDA-core
 * peak with 4-byte elements; at fp16 a clamped node also moves its
 * clamp's bytes, *tclamp (NULL: added to *tmem). */
static void node_times(const dlp_feat_graph *fg, int i,
                       const dlp_feat_device *d, dlp_precision p,
                       double *tcmp, double *tmem, double *tclamp) {
    double s = prec_scale(p);
    if (p != DLP_PREC_FP32 && fg->half_f32[i]) {
        *tcmp = fg->flops[i] / d->peak_fp32_flops;
        *tmem = fg->bytes[i] / d->mem_bw;
    } else {
        *tcmp = fg->flops[i] / (fg->tc[i] ? d->peak_tc_flops
                                          : d->peak_simt_flops);
        *tmem = fg->bytes[i] * s / d->mem_bw;
    }
    double tc = p == DLP_PREC_FP16 && fg->clamp_elems[i] > 0
                    ? fg->clamp_elems[i] * DLP_FP16_CLAMP_BYTES / d->mem_bw
                    : 0;
    if (tclamp) *tclamp = tc;
    else *tmem += tc;
}

/* Node i's time at runtime rt, seconds: the operator-time model's
 * (fg->op_eff) for a node it times, 0 for the other nodes of an
 * attention it times, else max(compute, memory). A half_f32 node runs
 * in float at fp16 / bf16 (node_times): its fp32 time. A biased
 * attention (battn) the model times whole is its Softmax's time, at p
 * (the probes ran it at p, on the math path). */
static double node_time(const dlp_feat_graph *fg, int i, const dlp_feat_device *d,
                        dlp_runtime rt, dlp_precision p, double tcmp,
                        double tmem) {
    int k = fg->op_eff ? fg->node_op[i] : -1;
    if (fg->op_eff && fg->attn_eff && fg->in_sdpa[i] == 1)
        return 0;                 /* inside an attention the model times */
    if (fg->op_eff && fg->battn_eff && fg->battn[i]) {
        int a = fg->battn_op[i];
        return a < 0 ? 0 : dlp_op_shape_roof_us(&fg->ops[a].shape, p, d) * 1e-6 *
                               exp2(fg->op_eff[dlp_op_eff_at(a, rt, p)]);
    }
    if (k >= 0) {
        dlp_precision q = p;
        dlp_feat_device f32;
        if (p != DLP_PREC_FP32 && fg->half_f32[i]) {   /* the float peak, as
                                                          node_times takes it */
            q = DLP_PREC_FP32;
            f32 = *d;
            f32.peak_tc_flops = d->peak_fp32_flops;
            d = &f32;
        }
        double e = fg->op_eff[dlp_op_eff_at(k, rt, q)];
        if (!isnan(e))          /* NaN: a kind the model has no forest for */
            return dlp_op_shape_roof_us(&fg->ops[k].shape, q, d) * 1e-6 * exp2(e);
    }
    return tcmp > tmem ? tcmp : tmem;
}

/* Whether node i does its nn.MultiheadAttention's slow-path work under c
 * (feat_mha.c): always for DLP_MHA_SLOW, in a training step for
 * DLP_MHA_SLOW_TRAIN. */
static bool mha_slow(const dlp_feat_graph *fg, int i, const dlp_pred_config *c) {
    return fg->mha_op && fg->mha_op[i] >= 0 &&
           (fg->mha[i] == DLP_MHA_SLOW ||
            (fg->mha[i] == DLP_MHA_SLOW_TRAIN && c->mode == DLP_MODE_TRAINING));
}

/* That work's time, seconds: its record's roofline, scaled by the
 * operator-time model where it has one; 0 when node i has none under c.
 * *tmem (may be NULL): its roofline alone. */
static double mha_time(const dlp_feat_graph *fg, int i, const dlp_feat_device *d,
                       const dlp_pred_config *c, double *tmem) {
    if (tmem) *tmem = 0;
    if (!mha_slow(fg, i, c)) return 0;
    int k = fg->mha_op[i];
    double t = dlp_op_shape_roof_us(&fg->ops[k].shape, c->precision, d) * 1e-6;
    if (tmem) *tmem = t;
    if (fg->op_eff) {
        double e = fg->op_eff[dlp_op_eff_at(k, c->runtime, c->precision)];
        if (!isnan(e)) t *= exp2(e);
    }
    return t;
}

void dlp_feat_node_roofline_us(const dlp_feat_graph *fg,
                               const dlp_pred_config *c, double *out) {
    dlp_feat_device d;
    dlp_feat_device_of(c, &d);
    for (int i = 0; i < fg->n_nodes; i++) {
        double tcmp, tmem;
        node_times(fg, i, &d, c->precision, &tcmp, &tmem, NULL);
        out[i] = (node_time(fg, i, &d, c->runtime, c->precision, tcmp, tmem) +
                  mha_time(fg, i, &d, c, NULL)) * 1e6;
    }
}

static void roofline_memory(const dlp_feat_graph *fg, const dlp_pred_config *c,
                            const double *ws_peak, dlp_feat_roofline *o);

void dlp_feat_roofline_of(const dlp_feat_graph *fg, const dlp_pred_config *c,
                          dlp_feat_roofline *o) {
    dlp_feat_roofline_ws(fg, c, NULL, o);
}

double dlp_feat_inference_mem_mib(const dlp_feat_graph *fg,
                                  const dlp_pred_config *c,
                                  const double *ws_peak) {
    dlp_feat_roofline o;
    roofline_memory(fg, c, ws_peak, &o);
    return o.mem_mib;
}

void dlp_feat_roofline_ws(const dlp_feat_graph *fg, const dlp_pred_config *c,
                          const double *ws_peak, dlp_feat_roofline *o) {
    dlp_feat_device d;
    dlp_feat_device_of(c, &d);
    double comp = 0, mem = 0, roof = 0, kr = 0;
    int nclamp = 0, nslow = 0;
    bool half = c->precision != DLP_PREC_FP32;
    for (int k = 0; k < DLP_FEAT_NCAT; k++) o->roof_cat_ms[k] = o->kernels_cat[k] = 0;
    o->roof_gconv_ms = o->kernels_gconv = o->roof_kconv_ms = o->kernels_kconv = 0;
    for (int i = 0; i < fg->n_nodes; i++) {
        double tcmp, tmem, tcl, tmha;
        node_times(fg, i, &d, c->precision, &tcmp, &tmem, &tcl);
        double t0 = node_time(fg, i, &d, c->runtime, c->precision, tcmp, tmem) +
                    mha_time(fg, i, &d, c, &tmha),
               t = t0 + tcl;
        bool slow = mha_slow(fg, i, c);
        comp += tcmp;
        mem += tmem + tcl + tmha;
        roof += t;
        /* the node's eager kernels, each at least a launch; a node whose
         * work runs inside another's kernel (SDPA, bias epilogue, GELU)
         * adds its roofline time alone; a slow-path attention node its
         * copy or bias add */
        int nk = fg->eager_kern[i] + (half ? fg->half_kern[i] : 0) + slow;
        nslow += slow;
        if (nk) kr += t0 > nk * d.launch_s ? t0 : nk * d.launch_s;
        else if (fg->kern[i]) kr += t0;
        int k = fg->node_cat[i] < DLP_FEAT_NCAT ? fg->node_cat[i] : CAT_OTHER;
        o->roof_cat_ms[k] += t * 1e3;
        o->kernels_cat[k] += nk;
        if (k == CAT_CONV) {   /* the node's attributes (attr_feats) */
            const float *a = fg->dense + (size_t)i * DLP_FEAT_DENSE;
            if (a[DLP_FEAT_ATTR_LOG2_GROUP] > 0) {
                o->roof_gconv_ms += t * 1e3;
                o->kernels_gconv += nk;
            }
            if (a[DLP_FEAT_ATTR_KH] * a[DLP_FEAT_ATTR_KW] >= 25) {
                o->roof_kconv_ms += t * 1e3;
                o->kernels_kconv += nk;
            }
        }
        if (tcl > 0) {    /* the fp16 clamp's kernels: a launch floor each */
            double fl = DLP_FP16_CLAMP_KERNELS * d.launch_s;
            kr += tcl > fl ? tcl : fl;
            o->kernels_cat[k] += DLP_FP16_CLAMP_KERNELS;
            nclamp++;
        }
    }
    o->kernel_ms = kr * 1e3;
    o->kernels = fg->n_eager_kernels + (half ? fg->n_half_kernels : 0) +
                 (double)DLP_FP16_CLAMP_KERNELS * nclamp + nslow;
    o->compute_ms = comp * 1e3;
    o->memory_ms = mem * 1e3;
    o->roofline_ms = roof * 1e3;
    o->launch_ms = fg->n_nodes * d.launch_s * 1e3;
    roofline_memory(fg, c, ws_peak, o);
}

/* The memory fields of dlp_feat_roofline_ws (weights_mib .. mem_mib),
 * which read none of its times. */
static void roofline_memory(const dlp_feat_graph *fg, const dlp_pred_config *c,
                            const double *ws_peak, dlp_feat_roofline *o) {
    double s = prec_scale(c->precision);
    o->weights_mib = fg->weight_bytes * s / 1048576.0;
    o->mem_weights_mib = fg->mem_weight_bytes * s / 1048576.0;
    o->buffers_mib = fg->buffer_bytes / 1048576.0;
    int h = c->precision != DLP_PREC_FP32;
    o->peak_act_mib = fg->peak_act_bytes_at[h] * s / 1048576.0;
    /* eager: one workspace, allocated by the warm-up call (before the
     * measured one); graph: that one, the warm-up side stream's, and the
     * capture stream's from the first matmul on */
    double pre = fg->peak_pre_blas_bytes[h] * s / 1048576.0,
           post = fg->peak_post_blas_bytes[h] * s / 1048576.0;
    if (ws_peak && h) {   /* the model's workspaces in place of the rule's */
        pre = fg->peak_half_nodense_bytes[0] * s / 1048576.0;
        post = fg->peak_half_nodense_bytes[1] * s / 1048576.0;
        o->peak_act_mib = fmax(pre, post);
    }
    if (c->precision == DLP_PREC_FP16) {   /* a 3-channel 7x7 stem's workspace */
        pre = fmax(pre, fg->fp16_stem_peak_bytes[0] * s / 1048576.0);
        post = fmax(post, fg->fp16_stem_peak_bytes[1] * s / 1048576.0);
        o->peak_act_mib = fmax(o->peak_act_mib, fmax(pre, post));
    }
    if (ws_peak) {   /* conv workspaces */
        pre = fmax(pre, ws_peak[0] / 1048576.0);
        post = fmax(post, ws_peak[1] / 1048576.0);
        o->peak_act_mib = fmax(o->peak_act_mib, fmax(pre, post));
    }
    /* attention blocks the walk does not see (feat.h): a decoder's causal
     * mask under capture, through the forward and, as an additive copy,
     * at the attention; the math path of fp32 grouped-query attention */
    double whole = 0, at_sdpa = 0;
    if (c->runtime == DLP_RT_GRAPH && fg->mask_causal && !fg->mask_bidir) {
        whole = DLP_MEM_GRAPH_CAUSAL_MASK_BYTES * fg->max_mask_elems / 1048576.0;
        at_sdpa = 4 * s * fg->max_mask_elems / 1048576.0;
    }
    if (c->runtime != DLP_RT_GRAPH && c->precision == DLP_PREC_FP32)
        at_sdpa = DLP_MEM_MATH_SDPA_BYTES * fg->max_gqa_scores_elems / 1048576.0;
    double sdpa = at_sdpa > 0 ? fg->sdpa_live_bytes * s / 1048576.0 + at_sdpa : 0;
    /* and, any runtime, an attention's own blocks (the math path of
     * attention on operands that are not 4-D, a relative position bias)
     * with what is live at it */
    sdpa = fmax(sdpa, fg->attn_extra_bytes[h] / 1048576.0);
    pre += whole;
    post = fmax(post + whole, sdpa + whole);
    double act = fmax(o->peak_act_mib + whole, sdpa + whole);
    if (!fg->n_blas)
        o->mem_mib = o->mem_weights_mib + act;
    else if (c->runtime == DLP_RT_GRAPH)
        o->mem_mib = o->mem_weights_mib + DLP_MEM_CUBLAS_WS_MIB +
                     DLP_MEM_GRAPH_WS_MIB +
                     (pre > post + DLP_MEM_GRAPH_WS_MIB
                          ? pre : post + DLP_MEM_GRAPH_WS_MIB);
    else
        o->mem_mib = o->mem_weights_mib + act + DLP_MEM_CUBLAS_WS_MIB;
    /* the module's buffers, and the attention biases an eval-mode module
     * caches from its first call on */
    o->mem_mib += o->buffers_mib + fg->bias_cache_bytes * s / 1048576.0;
    /* and the allocator's slack around the parameters (feat_alloc.c) */
    o->mem_mib += fg->alloc_slack_bytes[h] / 1048576.0;
    /* cuBLASLt's workspace, per stream a Linear layer with a bias ran on */
    if (fg->n_linear_bias)
        o->mem_mib += DLP_MEM_CUBLASLT_WS_MIB *
                      (c->runtime == DLP_RT_GRAPH ? DLP_MEM_GRAPH_LT_WS : 1);
    /* a language model's attention with a learned bias (T5) upcasts its
     * softmax to float at half precision (vision models' relative
     * position biases, Swin / MaxViT, do not) */
    if (c->precision != DLP_PREC_FP32 && fg->seq > 0)
        o->mem_mib += (DLP_MEM_BIAS_SOFTMAX_F32_BYTES *
                           fg->max_biased_scores_elems +
                       DLP_MEM_BIAS_MATH_HALF_Q_BYTES * fg->max_biased_q_elems) /
                      1048576.0;
    /* and the math path's bool block of the scores' shape, any precision */
    if (fg->seq > 0)
        o->mem_mib += DLP_MEM_BIAS_BOOL_BYTES * fg->max_biased_scores_elems /
                      1048576.0;
    /* the bias expanded to the batch under capture */
    if (fg->seq > 0 && c->runtime == DLP_RT_GRAPH)
        o->mem_mib += 4 * s * fg->max_biased_scores_elems / 1048576.0;
    /* under capture, a bidirectional virtual mask is built and attention
     * runs with its [.., S, S] scores materialised */
    if (c->runtime == DLP_RT_GRAPH && fg->mask_bidir)
        o->mem_mib += DLP_MEM_GRAPH_BIDIR_SCORE_BYTES * fg->max_scores_elems /
                      1048576.0;
}

/* The training step's peak (MiB): 3 x the weights (weights, gradients,
 * momentum) at weight_scale x their fp32 bytes, the buffers, the two
 * cuBLAS workspaces, and the saved blocks and the largest conv workspace at
 * act_scale x their fp32 bytes. */
static double train_mem_mib(const dlp_feat_graph *fg, const dlp_feat_roofline *r,
                            double weight_scale, double act_scale,
                            double saved_bytes) {
    return 3 * fg->mem_weight_bytes * weight_scale / 1048576.0 +
           r->buffers_mib + DLP_MEM_TRAIN_BLAS_WS_MIB +
           (saved_bytes + DLP_MEM_TRAIN_CONV_WS * fg->max_conv_ws_bytes) *
               act_scale / 1048576.0;
}

/* Bytes held at the backward of train point p (the walk's rule for its
 * convolution workspace; buffers and cuBLAS workspaces not counted). */
static double train_point_bytes(const dlp_feat_train_point *p, double W,
                                double act_scale) {
    return act_scale < 1 ? W * (2 + p->grad_w + 0.5 * p->half_w) + p->act_amp
                         : W * (2 + p->grad_w) + p->act;
}

/* The training step's peak (MiB) on fg->train_curve (train_curve): the
 * largest of 2 W + its gradients made + act_scale x the blocks and, at
 * half precision, the half copies of the weights; the buffers and the two
 * cuBLAS workspaces on top. */
static double train_peak_mib(const dlp_feat_graph *fg, const dlp_feat_roofline *r,
                             double act_scale) {
    if (!fg->n_train_curve)
        return train_mem_mib(fg, r, 1.0, act_scale, fg->saved_train_bytes);
    double W = fg->mem_weight_bytes, best = 0;
    for (int t = 0; t < fg->n_train_curve; t++) {
        double b = train_point_bytes(&fg->train_curve[t], W, act_scale);
        if (b > best) best = b;
    }
    return best / 1048576.0 + r->buffers_mib + DLP_MEM_TRAIN_BLAS_WS_MIB;
}

double dlp_feat_train_bwd_mib(const dlp_feat_graph *fg, const dlp_pred_config *c,
                              const dlp_feat_roofline *r, int t,
                              double ws_bytes) {
    if (t < 0 || t >= fg->n_train_curve) return 0;
    const dlp_feat_train_point *p = &fg->train_curve[t];
    double act_scale = prec_scale(c->precision);
    double b = train_point_bytes(p, fg->mem_weight_bytes, act_scale) -
               (act_scale < 1 ? 0.5 : 1.0) * p->ws + ws_bytes;
    return b / 1048576.0 + r->buffers_mib + DLP_MEM_TRAIN_BLAS_WS_MIB;
}

double dlp_feat_train_fwd_mib(const dlp_feat_graph *fg, const dlp_pred_config *c,
                              const dlp_feat_roofline *r, int t,
                              double ws_bytes) {
    if (t < 0 || t >= fg->n_train_curve) return 0;
    const dlp_feat_train_point *p = &fg->train_curve[t];
    double W = fg->mem_weight_bytes, act_scale = prec_scale(c->precision);
    double b = act_scale < 1 ? W * (2 + 0.5 * p->half_w) + p->fwd_amp
                             : 2 * W + p->fwd;
    return (b + ws_bytes) / 1048576.0 + r->buffers_mib + DLP_MEM_TRAIN_BLAS_WS_MIB;
}

double dlp_feat_mem_estimate_of(const dlp_feat_graph *fg,
                                const dlp_pred_config *c,
                                const dlp_feat_roofline *r) {
    /* a training step at fp16 / bf16 is mixed precision (autocast, what the
     * collector measures, tools/collect/measure.py): fp32 weights,
     * gradients and momentum, the saved blocks at half (docs/COST.md) */
    if (c->mode == DLP_MODE_TRAINING) {
        int h = c->precision != DLP_PREC_FP32;
        if (fg->train_ws_peak[h]) return fg->train_ws_mib[h];
        return fmax(train_peak_mib(fg, r, prec_scale(c->precision)),
                    fg->train_ws_mib[h]);
    }
    return r->mem_mib;
}

double dlp_feat_mem_estimate_mib(const dlp_feat_graph *fg,
                                 const dlp_pred_config *c) {
    dlp_feat_roofline r;
    dlp_feat_roofline_of(fg, c, &r);
    return dlp_feat_mem_estimate_of(fg, c, &r);
}

void dlp_feat_nodes(const dlp_feat_graph *fg, const dlp_pred_config *c,
                    float *out) {
    dlp_feat_nodes_range(fg, c, 0, fg->n_nodes, out);
}

void dlp_feat_nodes_range(const dlp_feat_graph *fg, const dlp_pred_config *c,
                          int lo, int hi, float *out) {
    dlp_feat_device d;
    dlp_feat_device_of(c, &d);
    for (int i = lo; i < hi; i++) {
        float *o = out + (size_t)(i - lo) * DLP_FEAT_NODE_DIM;
        memset(o, 0, (DLP_FEAT_NOPS + 1) * sizeof *o);
        o[fg->op[i]] = 1.f;
        memcpy(o + DLP_FEAT_NOPS + 1, fg->dense + (size_t)i * DLP_FEAT_DENSE,
               DLP_FEAT_DENSE * sizeof *o);
        double tcmp, tmem;
        node_times(fg, i, &d, c->precision, &tcmp, &tmem, NULL);
        tcmp *= 1e6;
        tmem *= 1e6;
        float *r = o + DLP_FEAT_NOPS + 1 + DLP_FEAT_DENSE;
        r[0] = lg(tcmp);
        r[1] = lg(tmem);
        r[2] = lg((node_time(fg, i, &d, c->runtime, c->precision, tcmp * 1e-6,
                             tmem * 1e-6) +
                   mha_time(fg, i, &d, c, NULL)) * 1e6);
    }
}

void dlp_feat_static(const dlp_feat_graph *fg, const dlp_pred_config *c,
                     float *o) {
    dlp_feat_roofline r;
    dlp_feat_roofline_of(fg, c, &r);
    dlp_feat_device d;
    dlp_feat_device_of(c, &d);
    int k = 0;
    o[k++] = lg(fg->macs);
    o[k++] = lg(fg->flops_total);
    o[k++] = lg(fg->params);
    o[k++] = lg(fg->weight_bytes);
    o[k++] = lg(fg->act_bytes);
    o[k++] = lg(fg->peak_act_bytes);
    o[k++] = lg(fg->n_nodes);
    o[k++] = lg(fg->n_edges);
    o[k++] = lg(fg->io_bytes);
    o[k++] = lg(fg->n_unknown);
    for (int i = 0; i < DLP_FEAT_NCAT; i++) o[k++] = lg((double)fg->cat[i]);
    o[k++] = lg2((double)c->batch);
    o[k++] = lg2((double)c->seq);
    o[k++] = lg2((double)c->height);
    o[k++] = lg2((double)c->width);
    for (int p = 0; p < DLP_PREC_COUNT; p++) o[k++] = (int)c->precision == p;
    for (int t = 0; t < DLP_RT_COUNT; t++) o[k++] = (int)c->runtime == t;
    o[k++] = lg(r.compute_ms);
    o[k++] = lg(r.memory_ms);
    o[k++] = lg(r.roofline_ms);
    o[k++] = lg(r.launch_ms);
    o[k++] = lg(r.roofline_ms + r.launch_ms);
    o[k++] = lg(r.weights_mib);
    o[k++] = lg(r.peak_act_mib);
    o[k++] = lg(r.mem_mib);
    /* the training memory estimate, whatever the mode; inference and
     * LLM rows keep the form their shipped networks were trained on, all
     * of it at the precision's scale (the weights too, as if the step ran
     * in pure half precision) */
    o[k++] = lg(c->mode == DLP_MODE_TRAINING
                    ? dlp_feat_mem_estimate_of(fg, c, &r)
                    : train_mem_mib(fg, &r, prec_scale(c->precision),
                                    prec_scale(c->precision),
                                    fg->saved_train_bytes_v65));
    o[k++] = lg(fg->flops_total / (fg->act_bytes + fg->weight_bytes + 1));
    o[k++] = lg(fg->sum_act_out_bytes * prec_scale(c->precision) / 1048576.0);
    o[k++] = lg(r.kernel_ms);
    o[k++] = lg(r.kernels);
    /* BERT-like encoders under capture: the bidirectional mask path
     * materialises the scores (dlp_feat_mem_estimate_of's rule) */
    o[k++] = c->runtime == DLP_RT_GRAPH && fg->mask_bidir;
    o[k++] = lg(fmax(fg->max_scores_elems, fg->max_biased_scores_elems) *
                4 * prec_scale(c->precision) / 1048576.0);
    DLP_ASSERT(k == DLP_FEAT_STATIC_BASE);
    double dev[DLP_DEVICE_NFEATURES];
    dlp_device_features(&c->device, c->has_mig ? &c->mig : NULL, dev,
                        DLP_DEVICE_NFEATURES);
    if (!c->has_mig && c->sms > 0) {      /* SM partition: SM-bound figures */
        dev[0] = c->sms;
        dev[6] *= d.sm_share;
        dev[7] *= d.sm_share;
        dev[8] *= d.sm_share;
    }
    for (int i = 0; i < DLP_DEVICE_NFEATURES; i++) o[k++] = lg(dev[i]);
    o[k++] = (float)d.sm_share;
    DLP_ASSERT(k == DLP_FEAT_STATIC_DIM);
}
