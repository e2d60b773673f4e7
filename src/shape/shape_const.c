/*
 * shape_const.c — ops that create tensors, with their contents when small:
 * Constant, ConstantOfShape, Range, EyeLike, RandomNormal/RandomUniform,
 * and the mask builders of causal attention, Trilu and CumSum, which are
 * folded when their input is constant.
 */
#include "shape.h"

#include <math.h>
#include <string.h>

/* Constant: value (tensor), value_int(s), value_float(s). */
static dlp_status sh_constant(dlp_sctx *c) {
    const dlp_attr *a;
    dlp_shape sc = dlp_shape_of_rank(0);
    if ((a = dlp_node_attr(c->n, "value")) && a->type == DLP_ATTR_TENSOR) {
        if (a->tensor < 0 || (size_t)a->tensor >= c->g->n_values)
            return dlp_sh_bad(c, "value tensor missing");
        const dlp_value *t = &c->g->values[a->tensor];
        if (t->ival)
            return dlp_sh_set_ints(c, 0, t->dtype, &t->shape, t->ival,
                                   t->n_const);
        if (t->fval)
            return dlp_sh_set_nums(c, 0, t->dtype, &t->shape, t->fval,
                                   t->n_const);
        return dlp_sh_set(c, 0, t->dtype, &t->shape);
    }
    if ((a = dlp_node_attr(c->n, "value_int")) && a->type == DLP_ATTR_INT)
        return dlp_sh_set_ints(c, 0, DLP_DT_INT64, &sc, &a->i, 1);
    if ((a = dlp_node_attr(c->n, "value_float")) && a->type == DLP_ATTR_FLOAT)
        return dlp_sh_set_nums(c, 0, DLP_DT_FLOAT, &sc, &a->f, 1);
    if ((a = dlp_node_attr(c->n, "value_ints")) && a->type == DLP_ATTR_INTS) {
        dlp_shape s = dlp_shape_of_rank(1);
        s.dims[0] = dlp_dim_of(a->n);
        int64_t dummy = 0;
        return dlp_sh_set_ints(c, 0, DLP_DT_INT64, &s, a->n ? a->ints : &dummy,
                               a->n);
    }
    if ((a = dlp_node_attr(c->n, "value_floats")) &&
        a->type == DLP_ATTR_FLOATS) {
        dlp_shape s = dlp_shape_of_rank(1);
        s.dims[0] = dlp_dim_of(a->n);
        double dummy = 0;
        return dlp_sh_set_nums(c, 0, DLP_DT_FLOAT, &s,
                               a->n ? a->floats : &dummy, a->n);
    }
    if ((a = dlp_node_attr(c->n, "value_string")))
        return dlp_sh_set(c, 0, DLP_DT_STRING, &sc);
    if ((a = dlp_node_attr(c->n, "value_strings"))) {
        dlp_shape s = dlp_shape_of_rank(1);
        s.dims[0] = dlp_dim_of(a->n);
        return dlp_sh_set(c, 0, DLP_DT_STRING, &s);
    }
    return dlp_sh_bad(c, "no value attribute");
}

/* ConstantOfShape(shape) filled with `value` (default float 0). */
static dlp_status sh_constant_of_shape(dlp_sctx *c) {
    dlp_dtype dt = DLP_DT_FLOAT;
    double fill = 0;
    bool have = false;
    const dlp_attr *a = dlp_node_attr(c->n, "value");
    if (a && a->type == DLP_ATTR_TENSOR && a->tensor >= 0 &&
        (size_t)a->tensor < c->g->n_values) {
        const dlp_value *t = &c->g->values[a->tensor];
        dt = t->dtype;
        if (t->ival && t->n_const >= 1) { fill = (double)t->ival[0]; have = true; }
        if (t->fval && t->n_const >= 1) { fill = t->fval[0]; have = true; }
    } else {
        have = true;
    }
    dlp_sh_set_dtype(c, 0, dt);
    const int64_t *sv;
    int64_t ns;
    int64_t specbuf[DLP_MAX_RANK];
    dlp_dim symd[DLP_MAX_RANK];
    int nsym;
    if (!dlp_sh_ints(c, 0, &sv, &ns)) {
        if (dlp_sh_symdims(c, 0, specbuf, symd, &nsym)) {
            dlp_shape o = dlp_shape_of_rank(nsym);
            for (int i = 0; i < nsym; i++) {
                if (specbuf[i] != DLP_SPEC_SYM && specbuf[i] < 0)
                    return dlp_sh_bad(c, "negative dim");
                o.dims[i] = specbuf[i] == DLP_SPEC_SYM ? symd[i]
                                                       : dlp_dim_of(specbuf[i]);
            }
            return dlp_sh_set(c, 0, dt, &o);
        }
        const dlp_shape *ss = dlp_sh_shape(c, 0);
        if (ss && ss->rank == 1 && ss->dims[0].value >= 0) {
            dlp_shape o = dlp_shape_of_rank((int)ss->dims[0].value);
            return dlp_sh_set(c, 0, dt, &o);
        }
        return DLP_OK;
    }
    if (ns > DLP_MAX_RANK) return DLP_OK;
    for (int64_t i = 0; i < ns; i++)
        if (sv[i] < 0) return dlp_sh_bad(c, "negative dim %lld",
                                         (long long)sv[i]);
    dlp_shape o = dlp_shape_from(sv, (int)ns);
    dlp_status st = dlp_sh_set(c, 0, dt, &o);
    int64_t n;
    if (st != DLP_OK || !have || !dlp_sh_small(&o, &n)) return st;
    double *r = dlp_sh_alloc(c, (size_t)(n ? n : 1), sizeof *r);
    if (!r) return dlp_sh_nomem(c);
    for (int64_t k = 0; k < n; k++) r[k] = fill;
    return dlp_sh_set_nums(c, 0, dt, &o, r, n);
}

/* Range(start, limit, delta): max(ceil((limit - start) / delta), 0). */
static dlp_status sh_range(dlp_sctx *c) {
    dlp_dtype dt = dlp_sh_dtype(c, 0);
    dlp_shape o = dlp_shape_of_rank(1);
    double s, l, d;
    if (!dlp_sh_scalar_num(c, 0, &s) || !dlp_sh_scalar_num(c, 1, &l) ||
        !dlp_sh_scalar_num(c, 2, &d)) {
        /* Range(0, n, 1) with a symbolic n has n elements */
        dlp_symvec lim;
        if (dlp_sh_scalar_num(c, 0, &s) && dlp_sh_scalar_num(c, 2, &d) &&
            s == 0 && d == 1 && dlp_sh_symvec(c, 1, &lim) && lim.n == 1 &&
            !lim.known[0])
            o.dims[0] = lim.e[0];
        return dlp_sh_set(c, 0, dt, &o);
    }
    if (d == 0) return dlp_sh_bad(c, "delta 0");
    double len = ceil((l - s) / d);
    if (!(len < 1e15)) return dlp_sh_bad(c, "range too long");
    int64_t n = len > 0 ? (int64_t)len : 0;
    o.dims[0] = dlp_dim_of(n);
    dlp_status st = dlp_sh_set(c, 0, dt, &o);
    if (st != DLP_OK || n > DLP_MAX_CONST_ELEMS) return st;
    int64_t si, di;
    if (!dlp_dtype_is_float(dt) && dlp_sh_scalar_int(c, 0, &si) &&
        dlp_sh_scalar_int(c, 2, &di)) {
        int64_t *r = dlp_sh_alloc(c, (size_t)(n ? n : 1), sizeof *r);
        if (!r) return dlp_sh_nomem(c);
        bool ov = false;
        for (int64_t k = 0; k < n; k++)
            r[k] = dlp_ck_add(&ov, si, dlp_ck_mul(&ov, k, di));
        if (ov) return DLP_OK;
        return dlp_sh_set_ints(c, 0, dt, &o, r, n);
    }
    double *r = dlp_sh_alloc(c, (size_t)(n ? n : 1), sizeof *r);
    if (!r) return dlp_sh_nomem(c);
    for (int64_t k = 0; k < n; k++) r[k] = s + (double)k * d;
    return dlp_sh_set_nums(c, 0, dt, &o, r, n);
}

static dlp_status sh_eyelike(dlp_sctx *c) {
    dlp_dtype dt = (dlp_dtype)dlp_node_attr_int(c->n, "dtype",
                                                dlp_sh_dtype(c, 0));
    const dlp_shape *x = dlp_sh_shape(c, 0);
    if (x && x->rank != 2) return dlp_sh_bad(c, "input rank %d != 2", x->rank);
    return dlp_sh_set(c, 0, dt, x);
}

/* RandomNormal / RandomUniform: shape and dtype attributes. */
static dlp_status sh_random(dlp_sctx *c) {
    dlp_dtype dt = (dlp_dtype)dlp_node_attr_int(c->n, "dtype", DLP_DT_FLOAT);
    const dlp_attr *a = dlp_node_attr(c->n, "shape");
    if (!a || a->type != DLP_ATTR_INTS || a->n > DLP_MAX_RANK)
        return dlp_sh_set(c, 0, dt, NULL);
    dlp_shape o = dlp_shape_from(a->ints, a->n);
    return dlp_sh_set(c, 0, dt, &o);
}

/* Trilu: keeps element (i, j) of the last two dims when j - i >= k (upper)
 * or j - i <= k (lower), else 0. */
static dlp_status sh_trilu(dlp_sctx *c) {
    dlp_dtype dt = dlp_sh_dtype(c, 0);
    const dlp_shape *x = dlp_sh_shape(c, 0);
    dlp_status st = dlp_sh_set(c, 0, dt, x);
    dlp_value *v = dlp_sh_in(c, 0);
    int64_t n;
    if (st != DLP_OK || !x || x->rank < 2 || !dlp_value_is_const(v) ||
        !dlp_sh_small(x, &n) || n != v->n_const)
        return st;
    if (x->rank < 2) return dlp_sh_bad(c, "input rank %d < 2", x->rank);
    int64_t k = 0;
    if (dlp_sh_in(c, 1) && !dlp_sh_scalar_int(c, 1, &k)) return DLP_OK;
    bool upper = dlp_node_attr_int(c->n, "upper", 1) != 0;
    int64_t rows = x->dims[x->rank - 2].value, cols = x->dims[x->rank - 1].value;
    int64_t *src = dlp_sh_alloc(c, (size_t)(n ? n : 1), sizeof *src);
    if (!src) return dlp_sh_nomem(c);
    const double *f;
    int64_t nf;
    if (!dlp_sh_nums(c, 0, &f, &nf)) return DLP_OK;
    double *r = dlp_sh_alloc(c, (size_t)(n ? n : 1), sizeof *r);
    if (!r) return dlp_sh_nomem(c);
    for (int64_t q = 0; q < n; q++) {
        int64_t j = q % cols, i = (q / cols) % rows;
        bool keep = upper ? j - i >= k : j - i <= k;
        r[q] = keep ? f[q] : 0;
    }
    return dlp_sh_set_nums(c, 0, dt, x, r, n);
}

/* CumSum(x, axis): folded with `exclusive` and `reverse`. */
static dlp_status sh_cumsum(dlp_sctx *c) {
    dlp_dtype dt = dlp_sh_dtype(c, 0);
    const dlp_shape *x = dlp_sh_shape(c, 0);
    dlp_status st = dlp_sh_set(c, 0, dt, x);
    dlp_value *v = dlp_sh_in(c, 0);
    int64_t n, axv;
    if (st != DLP_OK || !x || !dlp_value_is_const(v) || !dlp_sh_small(x, &n) ||
        n != v->n_const || !dlp_sh_scalar_int(c, 1, &axv))
        return st;
    int axis;
    if (!dlp_axis(axv, x->rank, &axis)) return dlp_sh_bad(c, "bad axis");
    bool excl = dlp_node_attr_int(c->n, "exclusive", 0) != 0;
    bool rev = dlp_node_attr_int(c->n, "reverse", 0) != 0;
    int64_t is[DLP_MAX_RANK];
    dlp_sh_strides(x, is);
    int64_t d = x->dims[axis].value, s = is[axis];
    const double *f;
    int64_t nf;
    if (!dlp_sh_nums(c, 0, &f, &nf)) return DLP_OK;
    double *r = dlp_sh_alloc(c, (size_t)(n ? n : 1), sizeof *r);
    if (!r) return dlp_sh_nomem(c);
    for (int64_t q = 0; q < n; q++) {
        if ((q / s) % d != 0) continue; /* q starts a line along axis */
        double acc = 0;
        for (int64_t t = 0; t < d; t++) {
            int64_t j = rev ? d - 1 - t : t, off = q + j * s;
            if (excl) { r[off] = acc; acc += f[off]; }
            else { acc += f[off]; r[off] = acc; }
        }
    }
    return dlp_sh_set_nums(c, 0, dt, x, r, n);
}

const dlp_shape_op dlp_shape_ops_const[] = {
    {"Constant", sh_constant}, {"ConstantOfShape", sh_constant_of_shape},
    {"Range", sh_range}, {"EyeLike", sh_eyelike},
    {"RandomNormal", sh_random}, {"RandomUniform", sh_random},
    {"Trilu", sh_trilu}, {"CumSum", sh_cumsum},
    {NULL, NULL},
};
