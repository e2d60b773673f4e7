/*
 * cost_ops.c — the per-operator MAC and FLOP formulas of the cost model.
 *
 * MACs count multiply-accumulates of the contraction ops only (Conv,
 * ConvTranspose, MatMul, Gemm, Einsum, recurrent cells), the convention of
 * published model op counts (torchvision "GFLOPS", fvcore). FLOPs count every
 * floating-point operation: 2 per MAC plus the ops of every other node with
 * the per-element constants below (table in docs/COST.md).
 */
#include "cost.h"

#include <stdlib.h>
#include <string.h>

/* FLOPs per element of the normalisations and softmax (docs/COST.md). */
#define DLP_FLOPS_BATCHNORM 2  /* x * a + b with a, b folded per channel */
#define DLP_FLOPS_NORM 5       /* mean, centre, square+acc, scale by rstd */
#define DLP_FLOPS_RMSNORM 3    /* square+acc, scale by rstd */
#define DLP_FLOPS_AFFINE 1     /* each of scale and bias, when present */
#define DLP_FLOPS_SOFTMAX 5    /* max, subtract, exp, sum, divide */

typedef struct {
    double macs, flops;
} op_cost;

typedef bool (*op_fn)(const dlp_graph *g, const dlp_node *n, int64_t out,
                      op_cost *c);

/* ---- helpers ------------------------------------------------------------ */

static int64_t shape_prod(const dlp_shape *s, int from, int to) {
    int64_t p = 1;
    for (int i = from; i < to; i++) p *= s->dims[i].value;
    return p;
}

static bool in_numel(const dlp_graph *g, const dlp_node *n, int k,
                     int64_t *out) {
    return k < n->n_inputs && dlp_cost_numel(g, n->inputs[k], out);
}

static bool has_input(const dlp_node *n, int k) {
    return k < n->n_inputs && n->inputs[k] >= 0;
}

/* ---- contraction ops: MACs --------------------------------------------- */

/* Conv: MACs = out elems x (Cin/group) x kernel area; W [Cout, Cin/g, k...] */
static bool op_conv(const dlp_graph *g, const dlp_node *n, int64_t out,
                    op_cost *c) {
    const dlp_shape *w = dlp_cost_in_shape(g, n, 1);
    if (!w || w->rank < 2 || out < 0) return false;
    c->macs = (double)out * (double)shape_prod(w, 1, w->rank);
    c->flops = 2 * c->macs + (has_input(n, 2) ? (double)out : 0);
    return true;
}

/* ConvTranspose: MACs = in elems x (Cout/group) x kernel area;
 * W [Cin, Cout/g, k...] */
static bool op_conv_transpose(const dlp_graph *g, const dlp_node *n,
                              int64_t out, op_cost *c) {
    const dlp_shape *w = dlp_cost_in_shape(g, n, 1);
    int64_t in = 0;
    if (!w || w->rank < 2 || !in_numel(g, n, 0, &in) || out < 0) return false;
    c->macs = (double)in * (double)shape_prod(w, 1, w->rank);
    c->flops = 2 * c->macs + (has_input(n, 2) ? (double)out : 0);
    return true;
}

/* MatMul (numpy semantics): A [..., M, K] x B [..., K, N] -> [..., M, N];
 * MACs = out elems x K (a 1-D A is [K]). Also the integer variants. */
static bool op_matmul(const dlp_graph *g, const dlp_node *n, int64_t out,
                      op_cost *c) {
    const dlp_shape *a = dlp_cost_in_shape(g, n, 0);
    if (!a || a->rank < 1 || out < 0) return false;
    c->macs = (double)out * (double)a->dims[a->rank - 1].value;
    c->flops = 2 * c->macs;
    return true;
}

/* Gemm: Y = alpha op(A) op(B) + beta C; A [M, K] (transA: [K, M]).
 * MACs = M N K; FLOPs add M N for alpha != 1, for C, for beta != 1. */
static bool op_gemm(const dlp_graph *g, const dlp_node *n, int64_t out,
                    op_cost *c) {
    const dlp_shape *a = dlp_cost_in_shape(g, n, 0);
    if (!a || a->rank != 2 || out < 0) return false;
    int64_t k = a->dims[dlp_node_attr_int(n, "transA", 0) ? 0 : 1].value;
    c->macs = (double)out * (double)k;
    c->flops = 2 * c->macs;
    if (dlp_node_attr_float(n, "alpha", 1.0) != 1.0) c->flops += (double)out;
    if (has_input(n, 2)) {
        c->flops += (double)out;
        if (dlp_node_attr_float(n, "beta", 1.0) != 1.0)
            c->flops += (double)out;
    }
    return true;
}

/* Einsum: the size of every distinct index letter (and of the ellipsis
 * dims) is read from the operands; with two or more operands
 * MACs = (operands - 1) x product of all index sizes; with one operand it is
 * a transpose/reduction: FLOPs = input elems if an index is summed away. */
static bool op_einsum(const dlp_graph *g, const dlp_node *n, int64_t out,
                      op_cost *c) {
    const char *eq = dlp_node_attr_str(n, "equation", NULL);
    if (!eq || out < 0) return false;
    int64_t size[128];
    for (int i = 0; i < 128; i++) size[i] = -1;
    int64_t ell = 1;   /* product of the broadcast ellipsis dims */
    int nops = 0;
    const char *p = eq;
    bool in_lhs = true, reduces = false;
    const char *arrow = strstr(eq, "->");
    while (*p && in_lhs) {
        const dlp_shape *s = dlp_cost_in_shape(g, n, nops);
        if (!s) return false;
        /* operand term: letters and at most one "..." */
        int nlet = 0, has_ell = 0;
        const char *q = p;
        while (*q && *q != ',' && *q != '-') {
            if (*q == '.') { has_ell = 1; q += 3; continue; }
            if (*q != ' ') nlet++;
            q++;
        }
        int ell_rank = s->rank - nlet;
        if (ell_rank < 0 || (!has_ell && ell_rank != 0)) return false;
        int d = 0;
        int64_t e = 1;
        for (q = p; *q && *q != ',' && *q != '-';) {
            if (*q == '.') {
                for (int r = 0; r < ell_rank; r++) e *= s->dims[d++].value;
                q += 3;
                continue;
            }
            if (*q != ' ') {
                unsigned char ch = (unsigned char)*q;
                if (ch >= 128) return false;
                int64_t v = s->dims[d++].value;
                if (size[ch] < 0 || size[ch] == 1) size[ch] = v;
            }
            q++;
        }
        if (e > ell) ell = e;
        nops++;
        p = q;
        if (*p == ',') p++;
        else in_lhs = false;
    }
    if (nops != n->n_inputs) return false;
    double all = (double)ell;
    for (int ch = 0; ch < 128; ch++) {
        if (size[ch] < 0) continue;
        all *= (double)size[ch];
        if (arrow && !strchr(arrow + 2, ch)) reduces = true;
    }
    if (nops >= 2) {
        c->macs = (nops - 1) * all;
        c->flops = 2 * c->macs;
    } else if (reduces || !arrow) {
        int64_t in = 0;
        if (!in_numel(g, n, 0, &in)) return false;
        c->flops = (double)in;
    }
    return true;
}

/* LSTM/GRU/RNN: X [seq, batch, input], W [dirs, gates*hidden, input],
 * R [dirs, gates*hidden, hidden]: MACs = seq x batch x dirs x gates x
 * hidden x (input + hidden); FLOPs = 2 MACs + a few per gate element. */
static bool op_rnn(const dlp_graph *g, const dlp_node *n, int64_t out,
                   op_cost *c) {
    (void)out;
    const dlp_shape *x = dlp_cost_in_shape(g, n, 0);
    const dlp_shape *w = dlp_cost_in_shape(g, n, 1);
    const dlp_shape *r = dlp_cost_in_shape(g, n, 2);
    if (!x || !w || !r || x->rank != 3 || w->rank != 3 || r->rank != 3)
        return false;
    int64_t layout = dlp_node_attr_int(n, "layout", 0);
    int64_t seq = x->dims[layout ? 1 : 0].value;
    int64_t batch = x->dims[layout ? 0 : 1].value;
    double gates_h = (double)w->dims[1].value;  /* gates x hidden */
    double per = gates_h * (double)(w->dims[2].value + r->dims[2].value);
    c->macs = (double)seq * (double)batch * (double)w->dims[0].value * per;
    c->flops = 2 * c->macs + 4.0 * (double)seq * (double)batch *
                                 (double)w->dims[0].value * gates_h;
    return true;
}

/* ---- everything else: FLOPs only --------------------------------------- */

static bool op_zero(const dlp_graph *g, const dlp_node *n, int64_t out,
                    op_cost *c) {
    (void)g; (void)n; (void)out; (void)c;
    return true;
}

/* 1 FLOP per output element (transcendentals counted as 1). */
static bool op_elementwise(const dlp_graph *g, const dlp_node *n, int64_t out,
                           op_cost *c) {
    (void)g; (void)n;
    if (out < 0) return false;
    c->flops = (double)out;
    return true;
}

/* Sum/Max/Min/Mean of k inputs: k - 1 per output element (+1 for Mean). */
static bool op_variadic(const dlp_graph *g, const dlp_node *n, int64_t out,
                        op_cost *c) {
    (void)g;
    if (out < 0) return false;
    int k = n->n_inputs > 1 ? n->n_inputs - 1 : 0;
    if (!strcmp(n->op_type, "Mean")) k++;
    c->flops = (double)out * k;
    return true;
}

/* Reductions, cumulative sums, global pooling: 1 per input element. */
static bool op_reduce(const dlp_graph *g, const dlp_node *n, int64_t out,
                      op_cost *c) {
    (void)out;
    int64_t in = 0;
    if (!in_numel(g, n, 0, &in)) return false;
    c->flops = (double)in;
    return true;
}

/* MaxPool/AveragePool/LpPool: kernel area per output element. */
static bool op_pool(const dlp_graph *g, const dlp_node *n, int64_t out,
                    op_cost *c) {
    (void)g;
    const dlp_attr *k = dlp_node_attr(n, "kernel_shape");
    if (!k || k->type != DLP_ATTR_INTS || out < 0) return false;
    double area = 1;
    for (int i = 0; i < k->n; i++) area *= (double)k->ints[i];
    c->flops = (double)out * area;
    return true;
}

static bool op_batchnorm(const dlp_graph *g, const dlp_node *n, int64_t out,
                         op_cost *c) {
    (void)g; (void)n;
    if (out < 0) return false;
    c->flops = (double)out * DLP_FLOPS_BATCHNORM;
    return true;
}

/* LayerNorm (scale input 1, bias 2), GroupNorm/InstanceNorm (scale 1,
 * bias 2), RMSNorm / SimplifiedLayerNormalization (scale 1). */
static bool op_norm(const dlp_graph *g, const dlp_node *n, int64_t out,
                    op_cost *c) {
    (void)g;
    int64_t in = 0;
    if (!in_numel(g, n, 0, &in)) return false;
    (void)out;
    bool rms = !strcmp(n->op_type, "RMSNormalization") ||
               !strcmp(n->op_type, "SimplifiedLayerNormalization");
    double per = rms ? DLP_FLOPS_RMSNORM : DLP_FLOPS_NORM;
    if (has_input(n, 1)) per += DLP_FLOPS_AFFINE;
    if (has_input(n, 2)) per += DLP_FLOPS_AFFINE;
    c->flops = (double)in * per;
    return true;
}

static bool op_softmax(const dlp_graph *g, const dlp_node *n, int64_t out,
                       op_cost *c) {
    (void)g; (void)n;
    if (out < 0) return false;
    c->flops = (double)out * DLP_FLOPS_SOFTMAX;
    return true;
}

/* LRN: a window of `size` squares summed, then scale and power. */
static bool op_lrn(const dlp_graph *g, const dlp_node *n, int64_t out,
                   op_cost *c) {
    (void)g;
    if (out < 0) return false;
    c->flops = (double)out * (double)(dlp_node_attr_int(n, "size", 1) + 3);
    return true;
}

/* Resize/Upsample: nearest is data movement; linear/cubic 1 per output. */
static bool op_resize(const dlp_graph *g, const dlp_node *n, int64_t out,
                      op_cost *c) {
    (void)g;
    if (out < 0) return false;
    const char *mode = dlp_node_attr_str(n, "mode", "nearest");
    c->flops = strcmp(mode, "nearest") ? (double)out : 0;
    return true;
}

/* ---- the table (sorted by name for bsearch) ----------------------------- */

typedef struct {
    const char *name;
    op_fn fn;
} op_entry;

static const op_entry ops[] = {
    {"Abs", op_elementwise}, {"Acos", op_elementwise},
    {"Acosh", op_elementwise}, {"Add", op_elementwise},
    {"And", op_elementwise}, {"ArgMax", op_reduce}, {"ArgMin", op_reduce},
    {"Asin", op_elementwise}, {"Asinh", op_elementwise},
    {"Atan", op_elementwise}, {"Atanh", op_elementwise},
    {"AveragePool", op_pool}, {"BatchNormalization", op_batchnorm},
    {"BitShift", op_elementwise}, {"BitwiseAnd", op_elementwise},
    {"BitwiseNot", op_elementwise}, {"BitwiseOr", op_elementwise},
    {"BitwiseXor", op_elementwise}, {"Cast", op_zero},
    {"CastLike", op_zero}, {"Ceil", op_elementwise}, {"Celu", op_elementwise},
    {"Clip", op_elementwise}, {"Compress", op_zero}, {"Concat", op_zero},
    {"Constant", op_zero}, {"ConstantOfShape", op_zero}, {"Conv", op_conv},
    {"ConvInteger", op_conv}, {"ConvTranspose", op_conv_transpose},
    {"Cos", op_elementwise}, {"Cosh", op_elementwise}, {"CumSum", op_reduce},
    {"DepthToSpace", op_zero}, {"DequantizeLinear", op_elementwise},
    {"Div", op_elementwise}, {"Dropout", op_zero}, {"Einsum", op_einsum},
    {"Elu", op_elementwise}, {"Equal", op_elementwise},
    {"Erf", op_elementwise}, {"Exp", op_elementwise}, {"Expand", op_zero},
    {"EyeLike", op_zero}, {"FastGelu", op_elementwise}, {"Flatten", op_zero},
    {"Floor", op_elementwise}, {"GRU", op_rnn}, {"Gather", op_zero},
    {"GatherElements", op_zero}, {"GatherND", op_zero},
    {"Gelu", op_elementwise}, {"Gemm", op_gemm},
    {"GlobalAveragePool", op_reduce}, {"GlobalLpPool", op_reduce},
    {"GlobalMaxPool", op_reduce}, {"Greater", op_elementwise},
    {"GreaterOrEqual", op_elementwise}, {"GroupNormalization", op_norm},
    {"HardSigmoid", op_elementwise}, {"HardSwish", op_elementwise},
    {"Hardmax", op_reduce}, {"Identity", op_zero}, {"If", op_zero},
    {"InstanceNormalization", op_norm}, {"IsInf", op_elementwise},
    {"IsNaN", op_elementwise}, {"LRN", op_lrn}, {"LSTM", op_rnn},
    {"LayerNormalization", op_norm}, {"LeakyRelu", op_elementwise},
    {"Less", op_elementwise}, {"LessOrEqual", op_elementwise},
    {"Log", op_elementwise}, {"LogSoftmax", op_softmax}, {"Loop", op_zero},
    {"LpPool", op_pool}, {"MatMul", op_matmul}, {"MatMulInteger", op_matmul},
    {"Max", op_variadic}, {"MaxPool", op_pool}, {"Mean", op_variadic},
    {"Min", op_variadic}, {"Mish", op_elementwise}, {"Mod", op_elementwise},
    {"Mul", op_elementwise}, {"Neg", op_elementwise},
    {"NonMaxSuppression", op_zero}, {"NonZero", op_zero},
    {"Not", op_elementwise}, {"OneHot", op_zero}, {"Or", op_elementwise},
    {"PRelu", op_elementwise}, {"Pad", op_zero}, {"Pow", op_elementwise},
    {"QLinearConv", op_conv}, {"QLinearMatMul", op_matmul},
    {"QuantizeLinear", op_elementwise}, {"RMSNormalization", op_norm},
    {"RNN", op_rnn}, {"Range", op_zero}, {"Reciprocal", op_elementwise},
    {"ReduceL1", op_reduce}, {"ReduceL2", op_reduce},
    {"ReduceLogSum", op_reduce}, {"ReduceLogSumExp", op_reduce},
    {"ReduceMax", op_reduce}, {"ReduceMean", op_reduce},
    {"ReduceMin", op_reduce}, {"ReduceProd", op_reduce},
    {"ReduceSum", op_reduce}, {"ReduceSumSquare", op_reduce},
    {"Relu", op_elementwise}, {"Reshape", op_zero}, {"Resize", op_resize},
    {"Round", op_elementwise}, {"Scan", op_zero}, {"Scatter", op_zero},
    {"ScatterElements", op_zero}, {"ScatterND", op_zero},
    {"Selu", op_elementwise}, {"Shape", op_zero}, {"Shrink", op_elementwise},
    {"Sigmoid", op_elementwise}, {"Sign", op_elementwise},
    {"SimplifiedLayerNormalization", op_norm}, {"Sin", op_elementwise},
    {"Sinh", op_elementwise}, {"Size", op_zero}, {"Slice", op_zero},
    {"Softmax", op_softmax}, {"Softplus", op_elementwise},
    {"Softsign", op_elementwise}, {"SpaceToDepth", op_zero},
    {"Split", op_zero}, {"Sqrt", op_elementwise}, {"Squeeze", op_zero},
    {"Sub", op_elementwise}, {"Sum", op_variadic}, {"Tan", op_elementwise},
    {"Tanh", op_elementwise}, {"ThresholdedRelu", op_elementwise},
    {"Tile", op_zero}, {"TopK", op_reduce}, {"Transpose", op_zero},
    {"Trilu", op_zero}, {"Unsqueeze", op_zero}, {"Upsample", op_resize},
    {"Where", op_elementwise}, {"Xor", op_elementwise},
};

static int cmp_entry(const void *key, const void *e) {
    return strcmp((const char *)key, ((const op_entry *)e)->name);
}

static const op_entry *find_op(const char *domain, const char *op_type) {
    /* default domain, plus Microsoft contrib ops sharing standard names */
    if (domain && domain[0] && strcmp(domain, "ai.onnx") &&
        strcmp(domain, "com.microsoft"))
        return NULL;
    return bsearch(op_type, ops, sizeof ops / sizeof ops[0], sizeof ops[0],
                   cmp_entry);
}

bool dlp_cost_op_known(const char *domain, const char *op_type) {
    return find_op(domain, op_type) != NULL;
}

bool dlp_cost_op(const dlp_graph *g, const dlp_node *n, double *macs,
                 double *flops) {
    *macs = 0;
    *flops = 0;
    const op_entry *e = find_op(n->domain, n->op_type);
    if (!e) return false;
    /* output 0's element count; -1 when unknown */
    int64_t out = -1;
    if (n->n_outputs > 0 && !dlp_cost_numel(g, n->outputs[0], &out)) out = -1;
    op_cost c = {0, 0};
    if (!e->fn(g, n, out, &c)) return false;
    *macs = c.macs;
    *flops = c.flops;
    return true;
}
