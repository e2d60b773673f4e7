/*
 * shape_reduce.c — reductions: ReduceSum/Mean/Max/Min/Prod/L1/L2/LogSum/
 * LogSumExp/SumSquare (axes attribute before opset 18 — ReduceSum before
 * 13 — and an optional input after; keepdims; noop_with_empty_axes) and
 * ArgMax/ArgMin. ReduceSum/Prod/Max/Min/Mean are folded when constant.
 */
#include "shape.h"

#include <string.h>

/* Opset where the op's axes moved from attribute to input. */
static int axes_input_opset(const char *op) {
    return !strcmp(op, "ReduceSum") ? 13 : 18;
}

static dlp_status sh_reduce(dlp_sctx *c) {
    dlp_dtype dt = dlp_sh_dtype(c, 0);
    dlp_sh_set_dtype(c, 0, dt);
    const dlp_shape *x = dlp_sh_shape(c, 0);
    if (!x) return DLP_OK;
    bool keep = dlp_node_attr_int(c->n, "keepdims", 1) != 0;
    const int64_t *axes = NULL;
    int64_t na = 0;
    if (c->opset >= axes_input_opset(c->n->op_type) && dlp_sh_in(c, 1)) {
        if (!dlp_sh_ints(c, 1, &axes, &na)) {
            if (keep) {
                dlp_shape o = dlp_shape_of_rank(x->rank);
                return dlp_sh_set(c, 0, dt, &o);
            }
            return DLP_OK;
        }
    } else {
        const dlp_attr *a = dlp_node_attr(c->n, "axes");
        if (a && a->type == DLP_ATTR_INTS) { axes = a->ints; na = a->n; }
    }
    bool red[DLP_MAX_RANK] = {false};
    if (na == 0) {
        if (dlp_node_attr_int(c->n, "noop_with_empty_axes", 0))
            return dlp_sh_copy(c, 0, 0);
        for (int i = 0; i < x->rank; i++) red[i] = true;
    }
    for (int64_t i = 0; i < na; i++) {
        int ax;
        if (!dlp_axis(axes[i], x->rank, &ax))
            return dlp_sh_bad(c, "axis %lld out of range for rank %d",
                              (long long)axes[i], x->rank);
        red[ax] = true;
    }
    dlp_shape o = dlp_shape_of_rank(0);
    for (int i = 0; i < x->rank; i++) {
        if (!red[i]) o.dims[o.rank++] = x->dims[i];
        else if (keep) o.dims[o.rank++] = dlp_dim_of(1);
    }
    dlp_status st = dlp_sh_set(c, 0, dt, &o);
    dlp_value *v = dlp_sh_in(c, 0);
    int64_t n, nin;
    const char *op = c->n->op_type;
    int kind = !strcmp(op, "ReduceSum") ? 0 : !strcmp(op, "ReduceProd") ? 1
             : !strcmp(op, "ReduceMax") ? 2 : !strcmp(op, "ReduceMin") ? 3
             : !strcmp(op, "ReduceMean") ? 4 : -1;
    if (st != DLP_OK || kind < 0 || !dlp_value_is_const(v) ||
        !dlp_sh_small(&o, &n) || !dlp_shape_numel(x, &nin) || nin == 0)
        return st;
    int64_t *cnt = dlp_sh_alloc(c, (size_t)(n ? n : 1), sizeof *cnt);
    if (!cnt) return dlp_sh_nomem(c);
    int64_t idx[DLP_MAX_RANK] = {0};
    int64_t *ri = NULL;
    double *rf = NULL;
    const double *f = NULL;
    if (v->ival && kind != 4) {
        ri = dlp_sh_alloc(c, (size_t)(n ? n : 1), sizeof *ri);
        if (!ri) return dlp_sh_nomem(c);
    } else {
        int64_t nf;
        rf = dlp_sh_alloc(c, (size_t)(n ? n : 1), sizeof *rf);
        if (!rf) return dlp_sh_nomem(c);
        if (!dlp_sh_nums(c, 0, &f, &nf)) return DLP_OK;
    }
    for (int64_t k = 0; k < nin; k++) {
        int64_t off = 0;
        for (int d = 0; d < x->rank; d++)
            if (!red[d]) off = off * x->dims[d].value + idx[d];
        if (ri) {
            int64_t a = v->ival[k], *t = &ri[off];
            if (!cnt[off]) *t = a;
            else if (kind == 0) { if (!dlp_add_i64(*t, a, t)) return DLP_OK; }
            else if (kind == 1) { if (!dlp_mul_i64(*t, a, t)) return DLP_OK; }
            else if (kind == 2) { if (a > *t) *t = a; }
            else if (a < *t) *t = a;
        } else {
            double a = f[k], *t = &rf[off];
            if (!cnt[off]) *t = a;
            else if (kind == 0 || kind == 4) *t += a;
            else if (kind == 1) *t *= a;
            else if (kind == 2) { if (a > *t) *t = a; }
            else if (a < *t) *t = a;
        }
        cnt[off]++;
        for (int d = x->rank - 1; d >= 0; d--) {
            if (++idx[d] < x->dims[d].value) break;
            idx[d] = 0;
        }
    }
    if (ri) return dlp_sh_set_ints(c, 0, dt, &o, ri, n);
    if (kind == 4)
        for (int64_t k = 0; k < n; k++) rf[k] /= (double)cnt[k];
    return dlp_sh_set_nums(c, 0, dt, &o, rf, n);
}

static dlp_status sh_argmax(dlp_sctx *c) {
    dlp_sh_set_dtype(c, 0, DLP_DT_INT64);
    const dlp_shape *x = dlp_sh_shape(c, 0);
    if (!x) return DLP_OK;
    int axis;
    if (!dlp_axis(dlp_node_attr_int(c->n, "axis", 0), x->rank, &axis))
        return dlp_sh_bad(c, "axis out of range");
    bool keep = dlp_node_attr_int(c->n, "keepdims", 1) != 0;
    dlp_shape o = dlp_shape_of_rank(0);
    for (int i = 0; i < x->rank; i++) {
        if (i != axis) o.dims[o.rank++] = x->dims[i];
        else if (keep) o.dims[o.rank++] = dlp_dim_of(1);
    }
    return dlp_sh_set(c, 0, DLP_DT_INT64, &o);
}

const dlp_shape_op dlp_shape_ops_reduce[] = {
    {"ReduceSum", sh_reduce}, {"ReduceMean", sh_reduce},
    {"ReduceMax", sh_reduce}, {"ReduceMin", sh_reduce},
    {"ReduceProd", sh_reduce}, {"ReduceL1", sh_reduce},
    {"ReduceL2", sh_reduce}, {"ReduceLogSum", sh_reduce},
    {"ReduceLogSumExp", sh_reduce}, {"ReduceSumSquare", sh_reduce},
    {"ArgMax", sh_argmax}, {"ArgMin", sh_argmax},
    {NULL, NULL},
};
