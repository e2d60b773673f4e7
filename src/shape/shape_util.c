/*
 * shape_util.c — helpers shared by the op shape functions: dims and
 * broadcasting, reading node inputs (shapes, constant contents), writing
 * outputs, warnings that name the node.
 */
#include "shape.h"

#include <stdio.h>
#include <string.h>

dlp_shape dlp_shape_of_rank(int rank) {
    dlp_shape s = dlp_shape_unknown();
    if (rank >= 0 && rank <= DLP_MAX_RANK) s.rank = rank;
    return s;
}

dlp_shape dlp_shape_from(const int64_t *dims, int rank) {
    dlp_shape s = dlp_shape_of_rank(rank);
    for (int i = 0; i < s.rank; i++)
        s.dims[i] = dlp_dim_of(dims[i] >= 0 ? dims[i] : -1);
    return s;
}

bool dlp_dim_broadcast(dlp_dim a, dlp_dim b, dlp_dim *out) {
    if (a.value == 1) { *out = b; return true; }
    if (b.value == 1) { *out = a; return true; }
    if (a.value >= 0 && b.value >= 0) {
        if (a.value != b.value) return false;
        *out = a.sym >= 0 ? a : b;
        return true;
    }
    if (a.value >= 0) { *out = a; return true; }  /* b unknown: b == a or 1 */
    if (b.value >= 0) { *out = b; return true; }
    if (a.sym >= 0 && a.sym == b.sym) { *out = a; return true; }
    *out = dlp_dim_unknown();
    return true;
}

int dlp_shape_broadcast(const dlp_shape *a, const dlp_shape *b,
                        dlp_shape *out) {
    if (a->rank < 0 || b->rank < 0) return 1;
    int r = a->rank > b->rank ? a->rank : b->rank;
    dlp_shape s = dlp_shape_of_rank(r);
    for (int i = 0; i < r; i++) {
        int ia = i - (r - a->rank), ib = i - (r - b->rank);
        dlp_dim da = ia >= 0 ? a->dims[ia] : dlp_dim_of(1);
        dlp_dim db = ib >= 0 ? b->dims[ib] : dlp_dim_of(1);
        if (!dlp_dim_broadcast(da, db, &s.dims[i])) return -1;
    }
    *out = s;
    return 0;
}

bool dlp_dim_mul(dlp_dim a, dlp_dim b, dlp_dim *out) {
    if (a.value == 1) { *out = b; return true; }
    if (b.value == 1) { *out = a; return true; }
    if (a.value == 0 || b.value == 0) { *out = dlp_dim_of(0); return true; }
    if (a.value < 0 || b.value < 0) { *out = dlp_dim_unknown(); return true; }
    int64_t v;
    if (!dlp_mul_i64(a.value, b.value, &v)) return false;
    *out = dlp_dim_of(v);
    return true;
}

bool dlp_axis(int64_t axis, int rank, int *out) {
    if (rank < 0) return false;
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) return false;
    *out = (int)axis;
    return true;
}

dlp_value *dlp_sh_in(dlp_sctx *c, int i) {
    if (i < 0 || i >= c->n->n_inputs || c->n->inputs[i] < 0) return NULL;
    return &c->g->values[c->n->inputs[i]];
}

const dlp_shape *dlp_sh_shape(dlp_sctx *c, int i) {
    dlp_value *v = dlp_sh_in(c, i);
    return v && v->shape.rank >= 0 ? &v->shape : NULL;
}

dlp_dtype dlp_sh_dtype(dlp_sctx *c, int i) {
    dlp_value *v = dlp_sh_in(c, i);
    return v ? v->dtype : DLP_DT_UNDEFINED;
}

bool dlp_value_is_const(const dlp_value *v) {
    int64_t n;
    return v && (v->ival || v->fval) && dlp_shape_numel(&v->shape, &n) &&
           n == v->n_const;
}

bool dlp_sh_ints(dlp_sctx *c, int i, const int64_t **vals, int64_t *n) {
    dlp_value *v = dlp_sh_in(c, i);
    if (!v || !v->ival || !dlp_value_is_const(v)) return false;
    *vals = v->ival;
    *n = v->n_const;
    return true;
}

bool dlp_sh_nums(dlp_sctx *c, int i, const double **vals, int64_t *n) {
    dlp_value *v = dlp_sh_in(c, i);
    if (!dlp_value_is_const(v)) return false;
    if (v->fval) {
        *vals = v->fval;
        *n = v->n_const;
        return true;
    }
    if (!v->ival) return false;
    double *d = dlp_sh_alloc(c, (size_t)(v->n_const ? v->n_const : 1),
                             sizeof *d);
    if (!d) return false;
    for (int64_t k = 0; k < v->n_const; k++) d[k] = (double)v->ival[k];
    *vals = d;
    *n = v->n_const;
    return true;
}

bool dlp_sh_scalar_int(dlp_sctx *c, int i, int64_t *out) {
    dlp_value *v = dlp_sh_in(c, i);
    if (!dlp_value_is_const(v) || v->n_const < 1) return false;
    if (v->ival) { *out = v->ival[0]; return true; }
    if (v->fval && v->fval[0] > -9.2e18 && v->fval[0] < 9.2e18) {
        *out = (int64_t)v->fval[0];
        return true;
    }
    return false;
}

bool dlp_sh_scalar_num(dlp_sctx *c, int i, double *out) {
    dlp_value *v = dlp_sh_in(c, i);
    if (!dlp_value_is_const(v) || v->n_const < 1) return false;
    if (v->ival) { *out = (double)v->ival[0]; return true; }
    if (v->fval) { *out = v->fval[0]; return true; }
    return false;
}

bool dlp_sh_ints_attr_or_input(dlp_sctx *c, const char *name, int i,
                               const int64_t **vals, int64_t *n, bool *found) {
    const dlp_attr *a = dlp_node_attr(c->n, name);
    if (a && a->type == DLP_ATTR_INTS) {
        *found = true;
        *vals = a->ints;
        *n = a->n;
        return true;
    }
    if (a && a->type == DLP_ATTR_INT) {
        *found = true;
        *vals = &a->i;
        *n = 1;
        return true;
    }
    if (dlp_sh_in(c, i)) {
        *found = true;
        return dlp_sh_ints(c, i, vals, n);
    }
    *found = false;
    return false;
}

dlp_value *dlp_sh_out(dlp_sctx *c, int i) {
    if (i < 0 || i >= c->n->n_outputs || c->n->outputs[i] < 0) return NULL;
    return &c->g->values[c->n->outputs[i]];
}

void dlp_sh_set_dtype(dlp_sctx *c, int i, dlp_dtype t) {
    dlp_value *o = dlp_sh_out(c, i);
    if (o && t != DLP_DT_UNDEFINED) o->dtype = t;
}

dlp_status dlp_sh_set(dlp_sctx *c, int i, dlp_dtype t, const dlp_shape *s) {
    dlp_value *o = dlp_sh_out(c, i);
    if (!o) return DLP_OK;
    if (t != DLP_DT_UNDEFINED) o->dtype = t;
    o->shape = s ? *s : dlp_shape_unknown();
    if (o->shape.rank > DLP_MAX_RANK) o->shape = dlp_shape_unknown();
    return DLP_OK;
}

static dlp_status set_const(dlp_sctx *c, int i, dlp_dtype t,
                            const dlp_shape *s, const int64_t *iv,
                            const double *fv, int64_t n) {
    dlp_value *o = dlp_sh_out(c, i);
    if (!o) return DLP_OK;
    dlp_sh_set(c, i, t, s);
    if (n < 0 || n > DLP_MAX_CONST_ELEMS) return DLP_OK;
    if (!iv && n > DLP_SHAPE_MAX_FLOAT_CONST) return DLP_OK;
    int64_t numel;
    if (!dlp_shape_numel(&o->shape, &numel) || numel != n) return DLP_OK;
    size_t cnt = (size_t)(n ? n : 1);
    if (iv) {
        int64_t *p = dlp_sh_alloc(c, cnt, sizeof *p);
        if (!p) return dlp_sh_nomem(c);
        if (n) memcpy(p, iv, (size_t)n * sizeof *p);
        o->ival = p;
    } else {
        double *p = dlp_sh_alloc(c, cnt, sizeof *p);
        if (!p) return dlp_sh_nomem(c);
        if (n) memcpy(p, fv, (size_t)n * sizeof *p);
        o->fval = p;
    }
    o->n_const = n;
    return DLP_OK;
}

dlp_status dlp_sh_set_ints(dlp_sctx *c, int i, dlp_dtype t,
                           const dlp_shape *s, const int64_t *vals,
                           int64_t n) {
    return set_const(c, i, t, s, vals, NULL, n);
}

/* the dtype dlp_sh_set_nums(c, i, t, ...) stores its numbers as */
static dlp_dtype nums_dtype(dlp_sctx *c, int i, dlp_dtype t) {
    if (t != DLP_DT_UNDEFINED) return t;
    dlp_value *o = dlp_sh_out(c, i);
    return o ? o->dtype : DLP_DT_UNDEFINED;
}

static bool nums_as_ints(dlp_dtype dt) {
    return dt != DLP_DT_UNDEFINED && !dlp_dtype_is_float(dt);
}

bool dlp_sh_nums_kept(dlp_sctx *c, int i, dlp_dtype t, int64_t n) {
    return n >= 0 && n <= DLP_MAX_CONST_ELEMS &&
           (nums_as_ints(nums_dtype(c, i, t)) || n <= DLP_SHAPE_MAX_FLOAT_CONST);
}

dlp_status dlp_sh_set_nums(dlp_sctx *c, int i, dlp_dtype t,
                           const dlp_shape *s, const double *vals, int64_t n) {
    dlp_dtype dt = nums_dtype(c, i, t);
    if (nums_as_ints(dt)) {
        /* integer or bool result held as doubles: convert */
        if (n < 0 || n > DLP_MAX_CONST_ELEMS) return dlp_sh_set(c, i, t, s);
        int64_t *iv = dlp_sh_alloc(c, (size_t)(n ? n : 1), sizeof *iv);
        if (!iv) return dlp_sh_nomem(c);
        for (int64_t k = 0; k < n; k++) {
            double x = vals[k];
            if (!(x > -9.2e18 && x < 9.2e18)) return dlp_sh_set(c, i, t, s);
            iv[k] = dt == DLP_DT_BOOL ? (x != 0) : (int64_t)x;
        }
        return set_const(c, i, t, s, iv, NULL, n);
    }
    return set_const(c, i, t, s, NULL, vals, n);
}

dlp_status dlp_sh_copy(dlp_sctx *c, int i, int j) {
    dlp_value *src = dlp_sh_in(c, j);
    if (!src) return DLP_OK;
    if (src->ival)
        return dlp_sh_set_ints(c, i, src->dtype, &src->shape, src->ival,
                               src->n_const);
    if (src->fval)
        return dlp_sh_set_nums(c, i, src->dtype, &src->shape, src->fval,
                               src->n_const);
    return dlp_sh_set(c, i, src->dtype, &src->shape);
}

dlp_status dlp_sh_bad(dlp_sctx *c, const char *fmt, ...) {
    char msg[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    dlp_warn(c->w, "node '%s' (%s): %s; outputs left unshaped", c->n->name,
             c->n->op_type, msg);
    c->root->n_shape_conflicts++;
    for (int i = 0; i < c->n->n_outputs; i++) {
        dlp_value *o = dlp_sh_out(c, i);
        if (!o) continue;
        o->shape = dlp_shape_unknown();
        o->ival = NULL;
        o->fval = NULL;
        o->n_const = 0;
    }
    return DLP_OK;
}

void *dlp_sh_alloc(dlp_sctx *c, size_t n, size_t size) {
    return dlp_arena_calloc(c->g->arena, n ? n : 1, size);
}

dlp_status dlp_sh_nomem(dlp_sctx *c) {
    return dlp_fail(c->err, DLP_ERR_NOMEM,
                    "out of memory inferring shapes at node '%s' (%s)",
                    c->n->name, c->n->op_type);
}

void dlp_sh_strides(const dlp_shape *s, int64_t *strides) {
    int64_t k = 1;
    for (int d = s->rank - 1; d >= 0; d--) {
        strides[d] = k;
        k *= s->dims[d].value > 0 ? s->dims[d].value : 1;
    }
}

bool dlp_sh_small(const dlp_shape *s, int64_t *numel) {
    return dlp_shape_numel(s, numel) && *numel <= DLP_MAX_CONST_ELEMS;
}

dlp_status dlp_sh_fold_pick(dlp_sctx *c, int oi, int ij, const dlp_shape *os,
                            const int64_t *src, int64_t n) {
    dlp_value *x = dlp_sh_in(c, ij);
    dlp_value *o = dlp_sh_out(c, oi);
    if (!o || !dlp_value_is_const(x)) return DLP_OK;
    for (int64_t k = 0; k < n; k++)
        if (src[k] < 0 || src[k] >= x->n_const) return DLP_OK;
    dlp_dtype dt = o->dtype != DLP_DT_UNDEFINED ? o->dtype : x->dtype;
    if (x->ival) {
        int64_t *r = dlp_sh_alloc(c, (size_t)(n ? n : 1), sizeof *r);
        if (!r) return dlp_sh_nomem(c);
        for (int64_t k = 0; k < n; k++) r[k] = x->ival[src[k]];
        return dlp_sh_set_ints(c, oi, dt, os, r, n);
    }
    double *r = dlp_sh_alloc(c, (size_t)(n ? n : 1), sizeof *r);
    if (!r) return dlp_sh_nomem(c);
    for (int64_t k = 0; k < n; k++) r[k] = x->fval[src[k]];
    return dlp_sh_set_nums(c, oi, dt, os, r, n);
}

dlp_status dlp_sh_fold_same(dlp_sctx *c, int oi, int ij, const dlp_shape *os) {
    dlp_value *x = dlp_sh_in(c, ij);
    if (!dlp_value_is_const(x)) return DLP_OK;
    int64_t n;
    if (!dlp_shape_numel(os, &n) || n != x->n_const) return DLP_OK;
    dlp_value *o = dlp_sh_out(c, oi);
    dlp_dtype dt = o && o->dtype != DLP_DT_UNDEFINED ? o->dtype : x->dtype;
    if (x->ival) return dlp_sh_set_ints(c, oi, dt, os, x->ival, n);
    return dlp_sh_set_nums(c, oi, dt, os, x->fval, n);
}
