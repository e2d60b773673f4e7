/*
 * feat_optime.c — the shape of a convolution (any group count) or of a
 * matrix product as the operator-time model sees it (feat.h:
 * dlp_op_shape), from a graph node or from a probe's record
 * (tools/collect/probe_optime.py, read by src/pred/pred_optime.c): one
 * feature function for both, so that the model is trained and applied on
 * the same numbers, and one work count (FLOPs, bytes) for the roofline
 * time the model's target is relative to.
 */
#include "feat.h"

#include <math.h>
#include <string.h>

static float lg2(double v) { return (float)log2(v > 1e-30 ? v : 1e-30); }

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
    } else {
        *flops = 2.0 * s->b * s->m * s->kk * s->nn;
        *bytes = es * ((double)s->b * s->m * s->kk +
                       (double)(s->bw ? s->b : 1) * s->kk * s->nn +
                       (double)s->b * s->m * s->nn);
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
    } else {
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

bool dlp_feat_op_shape(const dlp_graph *g, const dlp_node *n, dlp_op_shape *o) {
    memset(o, 0, sizeof *o);
    if (!strcmp(n->op_type, "Conv")) return conv_shape(g, n, o);
    if (!strcmp(n->op_type, "MatMul") || !strcmp(n->op_type, "Gemm"))
        return mm_shape(g, n, o);
    return false;
}
