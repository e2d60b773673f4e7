/*
 * feat_optime.c — the shape of a convolution (any group count), a matrix
 * product, a memory-bound operator (elementwise, normalization, softmax,
 * pooling) or a fused attention as the operator-time model sees it
 * (feat.h: dlp_op_shape), from a graph node or from a probe's record
 * (tools/collect/probe_optime.py and probe_memop.py, read by
 * src/pred/pred_optime.c): one feature function for both, so that the
 * model is trained and applied on the same numbers, and one work count
 * (FLOPs, bytes) for the roofline time the model's target is relative
 * to.
 */
#include "feat.h"

#include <math.h>
#include <string.h>

static float lg2(double v) { return (float)log2(v > 1e-30 ? v : 1e-30); }

const char *const dlp_mem_cat_name[DLP_MEM_NCAT] = {
    "unary", "binary", "bn", "ln", "gn", "softmax", "pool", "copy", "mfill",
    "gather", "resize"};

/* log2 of a size, 0 for an unset (0) one */
static float lgz(int64_t v) { return v > 0 ? (float)log2((double)v) : 0.f; }

static double elem_size(dlp_precision p) { return p == DLP_PREC_FP32 ? 4 : 2; }

void dlp_op_shape_work(const dlp_op_shape *s, dlp_precision p, double *flops,
                       double *bytes) {
    double es = elem_size(p);
    if (s->kind == DLP_OP_CONV) {
        double cg = (double)s->c / (double)s->g;
        *flops = 2.0 * s->n * s->k * s->ho * s->wo * cg * s->kh * s->kw;
        *bytes = es * ((double)s->n * s->c * s->h * s->w +
                       (double)s->n * s->k * s->ho * s->wo +
                       (double)s->k * cg * s->kh * s->kw);
    } else if (s->kind == DLP_OP_MM) {
        *flops = 2.0 * s->b * s->m * s->kk * s->nn;
        *bytes = es * ((double)s->b * s->m * s->kk +
                       (double)(s->bw ? s->b : 1) * s->kk * s->nn +
                       (double)s->b * s->m * s->nn);
    } else if (s->kind == DLP_OP_ATTN) {   /* QK^T and PV; q, k, v, out */
        double bh = (double)s->b * s->m;
        *flops = 4.0 * bh * s->kk * s->d * s->nn;
        *bytes = es * 2.0 * bh * s->nn * (double)(s->kk + s->d);
    } else {
        double e = (double)s->e, out = e;
        if (s->cat == DLP_MEM_POOL || s->cat == DLP_MEM_RESIZE)
            out = (double)s->n * s->c * s->ho * s->wo;
        *flops = s->cat == DLP_MEM_POOL && s->fn != DLP_FN_GAVG
                     ? out * s->kh * s->kh
                 : s->cat == DLP_MEM_RESIZE ? out : e;
        *bytes = es * (e + out + (s->cat == DLP_MEM_BINARY ? (double)s->ye : 0));
        if (s->cat == DLP_MEM_MFILL) *bytes += (double)s->ye;   /* bool mask */
        if (s->cat == DLP_MEM_GATHER) *bytes += 8.0 * (double)s->r; /* int64 index */
    }
}

double dlp_op_shape_roof_us(const dlp_op_shape *s, dlp_precision p,
                            const dlp_feat_device *d) {
    double flops, bytes;
    dlp_op_shape_work(s, p, &flops, &bytes);
    double tc = flops / d->peak_tc_flops, tm = bytes / d->mem_bw;
    return (tc > tm ? tc : tm) * 1e6;
}

void dlp_op_shape_features(const dlp_op_shape *s, dlp_precision p, float *x) {
    memset(x, 0, DLP_OPTIME_NF * sizeof *x);
    double flops, bytes;
    dlp_op_shape_work(s, p, &flops, &bytes);
    x[0] = p == DLP_PREC_FP16 ? 1.f : 0.f;
    x[1] = p == DLP_PREC_BF16 ? 1.f : 0.f;
    x[2] = lg2(flops);
    x[3] = lg2(bytes);
    x[4] = lg2(flops / bytes);
    if (s->kind == DLP_OP_CONV) {
        x[5] = lg2((double)s->n);
        x[6] = lg2((double)s->c);
        x[7] = lg2((double)s->h);
        x[8] = lg2((double)s->w);
        x[9] = lg2((double)s->k);
        x[10] = (float)s->kh;
        x[11] = (float)s->kw;
        x[12] = (float)s->s;
        x[13] = (float)s->p;
        x[14] = lg2((double)s->g);
        x[15] = lg2((double)s->c / (double)s->g);
        x[16] = s->g > 1 && s->g == s->c ? 1.f : 0.f;
        x[17] = s->cl ? 1.f : 0.f;
        x[18] = lg2((double)s->ho);
        x[19] = lg2((double)s->wo);
        x[20] = lg2((double)s->n * s->ho * s->wo);
        x[21] = (s->c / s->g) % 8 == 0 && s->k % 8 == 0 ? 1.f : 0.f;
        /* outputs per group: with x[14] and x[15] it tells a grouped
         * convolution's shape apart (cuDNN's backward of a grouped fp32
         * convolution with few channels per group runs up to 40x its
         * forward in the optrain probes); docs/COST.md, "Outputs per
         * group" */
        x[22] = lg2((double)s->k / (double)s->g);
    } else if (s->kind == DLP_OP_MM) {
        x[5] = lg2((double)s->b);
        x[6] = lg2((double)s->m);
        x[7] = lg2((double)s->kk);
        x[8] = lg2((double)s->nn);
        x[9] = s->bw ? 1.f : 0.f;
        x[10] = lg2((double)s->b * s->m);
        x[11] = s->m % 8 == 0 ? 1.f : 0.f;
        x[12] = s->kk % 8 == 0 ? 1.f : 0.f;
        x[13] = s->nn % 8 == 0 ? 1.f : 0.f;
        x[14] = lg2((double)(s->m < s->nn ? s->m : s->nn));
        x[DLP_OPTIME_BIAS_X] = s->bias ? 1.f : 0.f;   /* the epilogue */
    } else if (s->kind == DLP_OP_ATTN) {
        x[5] = lgz(s->b);
        x[6] = lgz(s->m);
        x[7] = lgz(s->kk);
        x[8] = lgz(s->d);
        x[9] = (float)s->nn;
        x[10] = s->causal ? 1.f : 0.f;
        x[11] = lgz(s->b * s->m);
        x[12] = lgz(s->b * s->m * s->kk);
        x[13] = s->nn % 8 == 0 ? 1.f : 0.f;
        x[14] = s->masked ? 1.f : 0.f;
        x[15] = s->masked ? lgz(s->b * s->kk * s->d) : 0.f;   /* the mask */
        x[16] = s->d % 16 == 0 ? 1.f : 0.f;   /* keys: the masked kernels
                                                pad an unaligned mask */
        x[17] = s->bcast ? 1.f : 0.f;         /* the math path */
        x[18] = (float)s->hbias;              /* the math path, biased */
        x[19] = s->hbias ? lgz((s->hbias >= 2 ? s->b : 1) * s->m * s->kk * s->d)
                         : 0.f;
    } else {
        x[DLP_OPTIME_CAT_X] = (float)s->cat;
        x[6] = (float)s->fn;
        x[7] = lgz(s->e);
        x[8] = lgz(s->ye);
        x[9] = s->ye > 0 ? lgz(s->e) - lgz(s->ye) : 0.f;
        x[10] = lgz(s->r);
        x[11] = lgz(s->d);
        x[12] = lgz(s->n);
        x[13] = lgz(s->c);
        x[14] = lgz(s->h * s->w);
        x[15] = lgz(s->g);
        x[16] = (float)s->kh;
        x[17] = (float)s->s;
        x[18] = (float)s->p;
        x[19] = lgz(s->ho * s->wo);
        x[20] = s->d > 0 && s->d % 8 == 0 ? 1.f : 0.f;
        x[21] = (float)s->bc;
        if (s->cat == DLP_MEM_GATHER)   /* PyTorch's vectorized kernel */
            x[21] = s->n == 1 && (int64_t)elem_size(p) * s->d % 16 == 0 ? 1.f : 0.f;
        if (s->cat == DLP_MEM_RESIZE) {   /* one thread's loop over planes */
            x[16] = lgz(s->ho * s->wo) - lgz(s->h * s->w);   /* the scale */
            x[17] = s->ho == s->h && s->wo == s->w ? 1.f : 0.f;   /* a copy */
            x[20] = s->cl ? 1.f : 0.f;
            x[21] = lgz(s->n * s->c);
        }
    }
}

/* Whether a shape's dims are all known and positive. */
static bool known(const dlp_shape *s) {
    for (int i = 0; i < s->rank; i++)
        if (s->dims[i].value <= 0) return false;
    return s->rank > 0;
}

static int64_t attr_at(const dlp_node *n, const char *name, int i, int64_t def) {
    const dlp_attr *a = dlp_node_attr(n, name);
    if (!a || a->type != DLP_ATTR_INTS || a->n <= i) return def;
    return a->ints[i];
}

/* A 2-D Conv of known 4-D shapes: its input [N, C, H, W], weight [K,
 * C/g, kh, kw] and output. */
static bool conv_shape(const dlp_graph *g, const dlp_node *n, dlp_op_shape *o) {
    if (n->n_inputs < 2 || n->inputs[0] < 0 || n->inputs[1] < 0 ||
        n->n_outputs < 1 || n->outputs[0] < 0)
        return false;
    const dlp_shape *x = &g->values[n->inputs[0]].shape,
                    *w = &g->values[n->inputs[1]].shape,
                    *y = &g->values[n->outputs[0]].shape;
    if (x->rank != 4 || w->rank != 4 || y->rank != 4 || !known(x) ||
        !known(w) || !known(y))
        return false;
    o->kind = DLP_OP_CONV;
    o->n = x->dims[0].value; o->c = x->dims[1].value;
    o->h = x->dims[2].value; o->w = x->dims[3].value;
    o->k = w->dims[0].value; o->kh = w->dims[2].value; o->kw = w->dims[3].value;
    o->ho = y->dims[2].value; o->wo = y->dims[3].value;
    o->g = dlp_node_attr_int(n, "group", 1);
    if (o->g < 1 || o->c % o->g || o->c / o->g != w->dims[1].value) return false;
    o->s = attr_at(n, "strides", 0, 1);
    o->p = attr_at(n, "pads", 0, 0);
    dlp_conv_shape cs;   /* the workspace model's layout rule, dense only */
    o->cl = o->g == 1 && dlp_feat_conv_shape(g, n, &cs) ? cs.cl
                                                      : (o->h == 1 && o->w == 1);
    return true;
}

/* A MatMul of A [..., M, K] by B [K, N] (one GEMM over every row of A,
 * as at::matmul folds them) or by B [..., K, N] (a batched product), or a
 * Gemm of A [M, K] (transA) by B [K, N] (transB). */
static bool mm_shape(const dlp_graph *g, const dlp_node *n, dlp_op_shape *o) {
    if (n->n_inputs < 2 || n->inputs[0] < 0 || n->inputs[1] < 0)
        return false;
    const dlp_shape *a = &g->values[n->inputs[0]].shape,
                    *b = &g->values[n->inputs[1]].shape;
    if (a->rank < 2 || b->rank < 2 || !known(a) || !known(b)) return false;
    o->kind = DLP_OP_MM;
    int64_t m = a->dims[a->rank - 2].value, k = a->dims[a->rank - 1].value;
    int64_t kb = b->dims[b->rank - 2].value, nn = b->dims[b->rank - 1].value;
    if (!strcmp(n->op_type, "Gemm")) {
        if (a->rank != 2 || b->rank != 2) return false;
        if (dlp_node_attr_int(n, "transA", 0)) { int64_t t = m; m = k; k = t; }
        if (dlp_node_attr_int(n, "transB", 0)) { int64_t t = kb; kb = nn; nn = t; }
    }
    if (k != kb) return false;
    int64_t lead_a = 1, lead_b = 1;
    for (int i = 0; i < a->rank - 2; i++) lead_a *= a->dims[i].value;
    for (int i = 0; i < b->rank - 2; i++) lead_b *= b->dims[i].value;
    o->kk = k;
    o->nn = nn;
    if (lead_b == 1) {          /* a Linear's weight: one GEMM */
        o->b = 1;
        o->m = lead_a * m;
        o->bw = false;
    } else {
        o->b = lead_a > lead_b ? lead_a : lead_b;
        o->m = m;
        o->bw = true;
    }
    return true;
}

/* Input i's shape when known, else NULL. */
static const dlp_shape *in_shape(const dlp_graph *g, const dlp_node *n, int i) {
    if (n->n_inputs <= i || n->inputs[i] < 0) return NULL;
    const dlp_shape *s = &g->values[n->inputs[i]].shape;
    return known(s) ? s : NULL;
}

static const dlp_shape *out_shape(const dlp_graph *g, const dlp_node *n) {
    if (n->n_outputs < 1 || n->outputs[0] < 0) return NULL;
    const dlp_shape *s = &g->values[n->outputs[0]].shape;
    return known(s) ? s : NULL;
}

static int64_t numel(const dlp_shape *s) {
    int64_t e;
    return dlp_shape_numel(s, &e) ? e : -1;
}

/* [n, c, h, w] of a rank 2-4 tensor (rank 3: w 1; rank 2: h = w = 1) */
static bool nchw(const dlp_shape *x, dlp_op_shape *o) {
    if (x->rank < 2 || x->rank > 4) return false;
    o->n = x->dims[0].value; o->c = x->dims[1].value;
    o->h = x->rank > 2 ? x->dims[2].value : 1;
    o->w = x->rank > 3 ? x->dims[3].value : 1;
    return true;
}

/* The probe's unary functions, by the ONNX operators that run as one
 * such kernel: the cheap ones as relu, the transcendental ones as exp
 * (the erf of a GELU chain carries its one kernel: feat_kern.c) */
static int unary_fn(const char *op) {
    static const struct { const char *op; int fn; } tab[] = {
        {"Relu", DLP_FN_RELU}, {"LeakyRelu", DLP_FN_RELU}, {"Clip", DLP_FN_RELU},
        {"Abs", DLP_FN_RELU}, {"Neg", DLP_FN_RELU}, {"PRelu", DLP_FN_RELU},
        {"Gelu", DLP_FN_GELU}, {"Erf", DLP_FN_GELU},
        {"Sigmoid", DLP_FN_SIGMOID}, {"Tanh", DLP_FN_TANH},
        {"HardSwish", DLP_FN_HARDSWISH}, {"HardSigmoid", DLP_FN_HARDSIGMOID},
        {"Exp", DLP_FN_EXP}, {"Log", DLP_FN_EXP}, {"Sqrt", DLP_FN_EXP},
        {"Reciprocal", DLP_FN_EXP}, {"Softplus", DLP_FN_EXP},
        {"Elu", DLP_FN_EXP}, {"Selu", DLP_FN_EXP}, {"Mish", DLP_FN_EXP},
        {"Sin", DLP_FN_EXP}, {"Cos", DLP_FN_EXP}, {"Pow", DLP_FN_EXP}};
    for (size_t i = 0; i < sizeof tab / sizeof *tab; i++)
        if (!strcmp(op, tab[i].op)) return tab[i].fn;
    return -1;
}

/* Elements of input i: a rank-0 scalar 1, unknown -1. */
static int64_t in_numel(const dlp_graph *g, const dlp_node *n, int i) {
    if (n->n_inputs <= i || n->inputs[i] < 0) return -1;
    const dlp_shape *s = &g->values[n->inputs[i]].shape;
    if (s->rank == 0) return 1;
    return known(s) ? numel(s) : -1;
}

/* Add, Sub, Mul, Div of known shapes: the output's elements, the smaller
 * operand's and how it is broadcast (dlp_op_shape.bc). */
static bool binary_shape(const dlp_graph *g, const dlp_node *n, dlp_op_shape *o) {
    const dlp_shape *y = out_shape(g, n);
    int64_t ea = in_numel(g, n, 0), eb = in_numel(g, n, 1);
    if (!y || ea < 1 || eb < 1) return false;
    const dlp_shape *sm = &g->values[n->inputs[ea <= eb ? 0 : 1]].shape;
    o->e = numel(y);
    o->ye = ea < eb ? ea : eb;
    o->d = y->dims[y->rank - 1].value;
    if (o->e < 1) return false;
    if (o->ye == o->e) o->bc = 0;
    else if (o->ye == 1) o->bc = 3;
    else if (sm->dims[sm->rank - 1].value == 1) o->bc = 1;
    else if (sm->dims[sm->rank - 1].value == o->d) o->bc = 2;
    else o->bc = 4;
    o->fn = !strcmp(n->op_type, "Add") || !strcmp(n->op_type, "Sub")
                ? DLP_FN_ADD : DLP_FN_MUL;
    return true;
}

/* A pooling of a 4-D tensor: MaxPool / AveragePool of a square or
 * rectangular window (its height's), GlobalAveragePool, GlobalMaxPool, a
 * ReduceMean over the last two dims. */
static bool pool_shape(const dlp_graph *g, const dlp_node *n, dlp_op_shape *o) {
    const dlp_shape *x = in_shape(g, n, 0), *y = out_shape(g, n);
    if (!x || !y || x->rank != 4 || y->rank != 4 || !nchw(x, o)) return false;
    o->ho = y->dims[2].value;
    o->wo = y->dims[3].value;
    const char *op = n->op_type;
    if (!strcmp(op, "MaxPool") || !strcmp(op, "AveragePool")) {
        if (n->n_outputs > 1 && n->outputs[1] >= 0) return false;  /* indices */
        o->fn = op[0] == 'M' ? DLP_FN_MAX : DLP_FN_AVG;
        o->kh = attr_at(n, "kernel_shape", 0, 0);
        o->s = attr_at(n, "strides", 0, 1);
        o->p = attr_at(n, "pads", 0, 0);
        return o->kh > 0;
    }
    if (!strcmp(op, "ReduceMean")) {
        const dlp_attr *ax = dlp_node_attr(n, "axes");
        if (!ax || ax->type != DLP_ATTR_INTS || ax->n != 2) return false;
        for (int i = 0; i < 2; i++) {
            int64_t a = ax->ints[i] < 0 ? ax->ints[i] + 4 : ax->ints[i];
            if (a != 2 && a != 3) return false;
        }
        if (ax->ints[0] == ax->ints[1]) return false;
    }
    o->fn = DLP_FN_GAVG;
    return o->ho == 1 && o->wo == 1;
}

/* A Reshape / Flatten of a Transpose's output: the layout copy PyTorch
 * makes of a permuted tensor (feat_kern.c: reshape_copies decides that
 * it launches one), the Transpose's input permuted. */
static bool copy_shape(const dlp_graph *g, const dlp_node *n, dlp_op_shape *o) {
    const dlp_node *t = n->n_inputs > 0 ? dlp_feat_producer_of(g, n->inputs[0]) : NULL;
    const dlp_shape *x = t && !strcmp(t->op_type, "Transpose") ? in_shape(g, t, 0) : NULL;
    if (!x) return false;
    const dlp_attr *perm = dlp_node_attr(t, "perm");
    int r = x->rank;
    /* no perm: the dims reversed, the last one moved */
    bool keeps_last = perm && perm->type == DLP_ATTR_INTS && perm->ints &&
                      perm->n == r && perm->ints[r - 1] == r - 1;
    o->cat = DLP_MEM_COPY;
    o->e = numel(x);
    o->d = keeps_last ? x->dims[r - 1].value : 1;
    o->r = o->d > 0 ? o->e / o->d : 0;
    return o->e > 0 && o->d > 0;
}

int dlp_mfill_bcast(const int64_t x[4], const int64_t m[4]) {
    bool same = true;
    for (int i = 0; i < 4; i++) {
        if (m[i] != x[i] && m[i] != 1) return -1;
        same &= m[i] == x[i];
    }
    if (same) return 0;
    bool b = m[0] == x[0], h = m[1] == x[1], l = m[2] == x[2], sq = m[3] == x[3];
    if (b && !h && l && sq) return 1;
    if (b && !h && !l && sq) return 2;
    if (!b && !h && l && sq) return 3;
    return 4;
}

/* A masked fill of attention scores, Where(mask, c, x) with c a scalar
 * and x the output's shape, rank 4 (or its trailing dims padded with
 * leading 1s), the mask broadcast to it. Whether x is a Softmax's scores
 * is op_records' to decide (feat.c). */
static bool mfill_shape(const dlp_graph *g, const dlp_node *n, dlp_op_shape *o) {
    const dlp_shape *m = in_shape(g, n, 0), *x = in_shape(g, n, 2),
                    *y = out_shape(g, n);
    if (!m || !x || !y || in_numel(g, n, 1) != 1 || y->rank < 2 ||
        y->rank > 4 || x->rank != y->rank || m->rank > y->rank)
        return false;
    int64_t xs[4] = {1, 1, 1, 1}, ms[4] = {1, 1, 1, 1};
    for (int i = 0; i < y->rank; i++) {
        if (x->dims[i].value != y->dims[i].value) return false;
        xs[4 - y->rank + i] = y->dims[i].value;
    }
    for (int i = 0; i < m->rank; i++) ms[4 - m->rank + i] = m->dims[i].value;
    int bc = dlp_mfill_bcast(xs, ms);
    if (bc < 0) return false;
    o->cat = DLP_MEM_MFILL;
    o->bc = (uint8_t)bc;
    o->n = xs[0]; o->c = xs[1]; o->h = xs[2]; o->w = xs[3];
    o->e = numel(y);
    o->ye = numel(m);
    o->d = xs[3];
    return o->e > 0 && o->ye > 0;
}

/* Gather(x, idx, axis) of a float tensor x of known shape: x seen as [n,
 * R, d] around the axis, r = idx's elements. Whether its kernel runs is
 * feat.c's to decide (op_records). */
static bool gather_shape(const dlp_graph *g, const dlp_node *n, dlp_op_shape *o) {
    const dlp_shape *x = in_shape(g, n, 0);
    int64_t r = in_numel(g, n, 1);
    if (!x || r < 1 || !dlp_dtype_is_float(g->values[n->inputs[0]].dtype))
        return false;
    int64_t ax = dlp_node_attr_int(n, "axis", 0);
    if (ax < 0) ax += x->rank;
    if (ax < 0 || ax >= x->rank) return false;
    o->cat = DLP_MEM_GATHER;
    o->ye = numel(x);
    if (o->ye < 1) return false;
    o->n = o->d = 1;            /* each at most ye */
    for (int i = 0; i < x->rank; i++) {
        if (i < ax) o->n *= x->dims[i].value;
        if (i > ax) o->d *= x->dims[i].value;
    }
    if ((double)o->n * (double)r * (double)o->d > 0x1p50) return false;
    o->r = r;
    o->e = o->n * r * o->d;
    return true;
}

/* Resize (opset 10+) or Upsample of a float [N, C, H, W] to [N, C, Ho,
 * Wo]: the interpolation's mode, linear with align_corners when its
 * coordinates say so; false for another rank or a resize of N or C. Its
 * input's layout (cl) is the layout pass's to say (feat.c, op_records). */
static bool resize_shape(const dlp_graph *g, const dlp_node *n, dlp_op_shape *o) {
    const dlp_shape *x = in_shape(g, n, 0), *y = out_shape(g, n);
    if (!x || !y || x->rank != 4 || y->rank != 4 || !nchw(x, o) ||
        y->dims[0].value != o->n || y->dims[1].value != o->c ||
        !dlp_dtype_is_float(g->values[n->inputs[0]].dtype))
        return false;
    const char *mode = dlp_node_attr_str(n, "mode", "nearest");
    const char *ct = dlp_node_attr_str(n, "coordinate_transformation_mode",
                                       "half_pixel");
    if (!strcmp(mode, "nearest")) o->fn = DLP_RESIZE_NEAREST;
    else if (!strcmp(mode, "cubic")) o->fn = DLP_RESIZE_CUBIC;
    else if (!strcmp(mode, "linear") || !strcmp(mode, "bilinear"))
        o->fn = strcmp(ct, "align_corners") ? DLP_RESIZE_LINEAR
                                            : DLP_RESIZE_LINEAR_AC;
    else return false;
    o->cat = DLP_MEM_RESIZE;
    o->ho = y->dims[2].value;
    o->wo = y->dims[3].value;
    o->e = numel(x);
    return o->e > 0;
}

/* An InstanceNormalization of [N, G, L] that normalizes a Reshape of an
 * [N, C, ...] tensor (C a multiple of G, the same elements): the exporter's
 * nn.GroupNorm (feat.c, match_group_norm), which PyTorch runs as one
 * group norm of the Reshape's input in G groups, as the probes record it
 * (probe_memop.py "gn": c = C, the spatial size H W). o has n, c = G
 * and e from the node's own input; any other input keeps them. */
static void group_norm_input(const dlp_graph *g, const dlp_node *n,
                             dlp_op_shape *o) {
    const dlp_node *p = dlp_feat_producer_of(g, n->inputs[0]);
    if (!p || strcmp(p->op_type, "Reshape")) return;
    const dlp_shape *r = in_shape(g, p, 0);
    if (!r || r->rank < 3 || r->rank > 4 || numel(r) != o->e) return;
    int64_t rn = r->dims[0].value, rc = r->dims[1].value;
    if (rn != o->n || rc < o->c || o->c < 1 || rc % o->c) return;
    o->c = rc;
}

/* The memory-bound operators of dlp_mem_cat; false for any other node or
 * an unknown shape. */
static bool mem_shape(const dlp_graph *g, const dlp_node *n, dlp_op_shape *o) {
    const char *op = n->op_type;
    const dlp_shape *x = in_shape(g, n, 0);
    o->kind = DLP_OP_MEM;
    int fn = unary_fn(op);
    if (fn >= 0) {
        if (!x || (!strcmp(op, "Pow") && in_numel(g, n, 1) != 1)) return false;
        o->cat = DLP_MEM_UNARY;
        o->fn = (uint8_t)fn;
        o->e = numel(x);
        o->d = x->dims[x->rank - 1].value;
        return o->e > 0;
    }
    if (!strcmp(op, "Add") || !strcmp(op, "Sub") || !strcmp(op, "Mul") ||
        !strcmp(op, "Div")) {
        o->cat = DLP_MEM_BINARY;
        return binary_shape(g, n, o);
    }
    if (!strcmp(op, "MaxPool") || !strcmp(op, "AveragePool") ||
        !strcmp(op, "GlobalAveragePool") || !strcmp(op, "GlobalMaxPool") ||
        !strcmp(op, "ReduceMean")) {
        o->cat = DLP_MEM_POOL;
        o->e = x ? numel(x) : -1;
        return o->e > 0 && pool_shape(g, n, o);
    }
    if (!x) return false;
    o->e = numel(x);
    if (o->e < 1) return false;
    if (!strcmp(op, "BatchNormalization")) {
        o->cat = DLP_MEM_BN;
        return nchw(x, o);
    }
    if (!strcmp(op, "InstanceNormalization") ||
        !strcmp(op, "GroupNormalization")) {
        o->cat = DLP_MEM_GN;
        if (!nchw(x, o)) return false;
        o->g = op[0] == 'I' ? o->c : dlp_node_attr_int(n, "num_groups", 0);
        if (op[0] == 'I' && x->rank == 3) group_norm_input(g, n, o);
        o->h = o->e / (o->n * o->c);   /* the spatial size, flattened */
        o->w = 1;
        return o->g > 0 && o->c % o->g == 0;
    }
    if (!strcmp(op, "Reshape") || !strcmp(op, "Flatten"))
        return copy_shape(g, n, o);
    if (!strcmp(op, "Where")) return mfill_shape(g, n, o);
    if (!strcmp(op, "Gather")) return gather_shape(g, n, o);
    if (!strcmp(op, "Resize") || !strcmp(op, "Upsample"))
        return resize_shape(g, n, o);
    bool ln = !strcmp(op, "LayerNormalization");
    if (ln || !strcmp(op, "Softmax")) {
        int64_t ax = dlp_node_attr_int(n, "axis", -1);
        if (ax < 0) ax += x->rank;
        if (ax < 0 || ax >= x->rank || (!ln && ax != x->rank - 1)) return false;
        o->cat = ln ? DLP_MEM_LN : DLP_MEM_SOFTMAX;
        o->d = 1;
        for (int i = (int)ax; i < x->rank; i++) o->d *= x->dims[i].value;
        o->r = o->e / o->d;
        return true;
    }
    return false;
}

dlp_op_shape dlp_op_shape_at(const dlp_op_shape *s, dlp_runtime rt) {
    dlp_op_shape o = *s;
    if (s->kind == DLP_OP_ATTN && s->gmask) {
        o.masked = rt == DLP_RT_GRAPH;
        o.bcast = rt == DLP_RT_GRAPH && s->gmask == 1;
        o.causal = rt != DLP_RT_GRAPH && s->gmask == 2;
    }
    if (s->kind == DLP_OP_ATTN && s->hbias) o.hbias = rt == DLP_RT_GRAPH ? 3 : 1;
    return o;
}

bool dlp_feat_op_shape(const dlp_graph *g, const dlp_node *n, dlp_op_shape *o) {
    memset(o, 0, sizeof *o);
    if (!strcmp(n->op_type, "Conv")) return conv_shape(g, n, o);
    if (!strcmp(n->op_type, "MatMul") || !strcmp(n->op_type, "Gemm"))
        return mm_shape(g, n, o);
    return mem_shape(g, n, o);
}

bool dlp_feat_attn_shape(const dlp_graph *g, const dlp_node *sm,
                         const dlp_node *pv, dlp_op_shape *o) {
    memset(o, 0, sizeof *o);
    const dlp_shape *x = in_shape(g, sm, 0), *v = in_shape(g, pv, 1);
    if (!x || !v || x->rank < 3 || x->rank > 4 || v->rank < 2) return false;
    o->kind = DLP_OP_ATTN;
    o->b = x->dims[0].value;
    o->m = x->rank == 4 ? x->dims[1].value : 1;
    o->kk = x->dims[x->rank - 2].value;
    o->d = x->dims[x->rank - 1].value;
    o->nn = v->dims[v->rank - 1].value;
    return v->dims[v->rank - 2].value == o->d;
}
