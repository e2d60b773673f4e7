/*
 * shape_index.c — shapes of indexing ops, with constant folding: Gather,
 * GatherElements, GatherND, ScatterND, ScatterElements (Scatter), and the
 * data-dependent ones: NonZero, Compress (known only when their input is
 * constant), TopK, OneHot.
 *
 *   Gather(data [d0..dr-1], idx [i..], axis a) -> d[:a] + idx.shape + d[a+1:]
 *   GatherND(data, idx [.., k], batch_dims b) -> idx[:-1] + data[b+k:]
 */
#include "shape.h"

#include <string.h>

static dlp_status sh_gather(dlp_sctx *c) {
    dlp_dtype dt = dlp_sh_dtype(c, 0);
    dlp_sh_set_dtype(c, 0, dt);
    const dlp_shape *x = dlp_sh_shape(c, 0), *ix = dlp_sh_shape(c, 1);
    if (!x || !ix) return DLP_OK;
    int axis;
    if (!dlp_axis(dlp_node_attr_int(c->n, "axis", 0), x->rank, &axis))
        return dlp_sh_bad(c, "axis out of range for rank %d", x->rank);
    int r = x->rank - 1 + ix->rank;
    if (r > DLP_MAX_RANK) return DLP_OK;
    dlp_shape o = dlp_shape_of_rank(r);
    int k = 0;
    for (int i = 0; i < axis; i++) o.dims[k++] = x->dims[i];
    for (int i = 0; i < ix->rank; i++) o.dims[k++] = ix->dims[i];
    for (int i = axis + 1; i < x->rank; i++) o.dims[k++] = x->dims[i];
    dlp_status st = dlp_sh_set(c, 0, dt, &o);
    const int64_t *iv;
    int64_t ni, n;
    if (st != DLP_OK || !dlp_value_is_const(dlp_sh_in(c, 0)) ||
        !dlp_sh_ints(c, 1, &iv, &ni) || !dlp_sh_small(&o, &n))
        return st;
    int64_t d = x->dims[axis].value;
    int64_t inner = 1, outer = 1;
    for (int i = axis + 1; i < x->rank; i++) inner *= x->dims[i].value;
    for (int i = 0; i < axis; i++) outer *= x->dims[i].value;
    if (outer * ni * inner != n) return DLP_OK;
    int64_t *src = dlp_sh_alloc(c, (size_t)(n ? n : 1), sizeof *src);
    if (!src) return dlp_sh_nomem(c);
    int64_t q = 0;
    for (int64_t ou = 0; ou < outer; ou++)
        for (int64_t j = 0; j < ni; j++) {
            int64_t id = iv[j] < 0 ? iv[j] + d : iv[j];
            if (id < 0 || id >= d)
                return dlp_sh_bad(c, "index %lld out of range for dim %lld",
                                  (long long)iv[j], (long long)d);
            for (int64_t in = 0; in < inner; in++)
                src[q++] = (ou * d + id) * inner + in;
        }
    return dlp_sh_fold_pick(c, 0, 0, &o, src, n);
}

static dlp_status sh_gather_elements(dlp_sctx *c) {
    dlp_dtype dt = dlp_sh_dtype(c, 0);
    const dlp_shape *x = dlp_sh_shape(c, 0), *ix = dlp_sh_shape(c, 1);
    if (x && ix && x->rank != ix->rank)
        return dlp_sh_bad(c, "indices rank %d != data rank %d", ix->rank,
                          x->rank);
    return dlp_sh_set(c, 0, dt, ix);
}

static dlp_status sh_gather_nd(dlp_sctx *c) {
    dlp_dtype dt = dlp_sh_dtype(c, 0);
    dlp_sh_set_dtype(c, 0, dt);
    const dlp_shape *x = dlp_sh_shape(c, 0), *ix = dlp_sh_shape(c, 1);
    if (!x || !ix) return DLP_OK;
    int64_t b = dlp_node_attr_int(c->n, "batch_dims", 0);
    if (ix->rank < 1) return dlp_sh_bad(c, "indices of rank 0");
    int64_t k = ix->dims[ix->rank - 1].value;
    if (k < 0) return DLP_OK;
    if (b < 0 || b > x->rank || b + k > x->rank)
        return dlp_sh_bad(c, "index depth %lld + batch_dims %lld > rank %d",
                          (long long)k, (long long)b, x->rank);
    int r = ix->rank - 1 + x->rank - (int)(b + k);
    if (r > DLP_MAX_RANK) return DLP_OK;
    dlp_shape o = dlp_shape_of_rank(r);
    int q = 0;
    for (int i = 0; i < ix->rank - 1; i++) o.dims[q++] = ix->dims[i];
    for (int i = (int)(b + k); i < x->rank; i++) o.dims[q++] = x->dims[i];
    return dlp_sh_set(c, 0, dt, &o);
}

/* ScatterND: data's shape; folded when data, indices, updates are constant
 * (reduction none/add/mul/max/min). */
static dlp_status sh_scatter_nd(dlp_sctx *c) {
    dlp_dtype dt = dlp_sh_dtype(c, 0);
    const dlp_shape *x = dlp_sh_shape(c, 0);
    dlp_status st = dlp_sh_set(c, 0, dt, x);
    dlp_value *dv = dlp_sh_in(c, 0), *uv = dlp_sh_in(c, 2);
    const int64_t *iv;
    int64_t ni, n;
    if (st != DLP_OK || !x || !dlp_value_is_const(dv) ||
        !dlp_value_is_const(uv) || !dlp_sh_ints(c, 1, &iv, &ni) ||
        !dlp_sh_small(x, &n) || n != dv->n_const)
        return st;
    const dlp_shape *is = dlp_sh_shape(c, 1);
    if (!is || is->rank < 1) return DLP_OK;
    int64_t k = is->dims[is->rank - 1].value;
    if (k <= 0 || k > x->rank) return DLP_OK;
    int64_t nidx = k ? ni / k : 0, slice = 1;
    for (int i = (int)k; i < x->rank; i++) slice *= x->dims[i].value;
    if (nidx * slice != uv->n_const) return DLP_OK;
    const char *red = dlp_node_attr_str(c->n, "reduction", "none");
    int64_t strides[DLP_MAX_RANK];
    dlp_sh_strides(x, strides);
    const double *df, *uf;
    int64_t nd, nu;
    if (!dlp_sh_nums(c, 0, &df, &nd) || !dlp_sh_nums(c, 2, &uf, &nu))
        return DLP_OK;
    double *r = dlp_sh_alloc(c, (size_t)(n ? n : 1), sizeof *r);
    if (!r) return dlp_sh_nomem(c);
    memcpy(r, df, (size_t)n * sizeof *r);
    for (int64_t j = 0; j < nidx; j++) {
        int64_t off = 0;
        for (int64_t a = 0; a < k; a++) {
            int64_t id = iv[j * k + a], d = x->dims[a].value;
            if (id < 0) id += d;
            if (id < 0 || id >= d) return dlp_sh_bad(c, "index out of range");
            off += id * strides[a];
        }
        for (int64_t s = 0; s < slice; s++) {
            double u = uf[j * slice + s], *t = &r[off + s];
            if (!strcmp(red, "add")) *t += u;
            else if (!strcmp(red, "mul")) *t *= u;
            else if (!strcmp(red, "max")) *t = *t > u ? *t : u;
            else if (!strcmp(red, "min")) *t = *t < u ? *t : u;
            else *t = u;
        }
    }
    return dlp_sh_set_nums(c, 0, dt, x, r, n);
}

static dlp_status sh_scatter_elements(dlp_sctx *c) {
    return dlp_sh_set(c, 0, dlp_sh_dtype(c, 0), dlp_sh_shape(c, 0));
}

/* Counts non-zero entries of constant input i; -1 when not constant. */
static int64_t count_nonzero(dlp_sctx *c, int i) {
    dlp_value *v = dlp_sh_in(c, i);
    if (!dlp_value_is_const(v)) return -1;
    int64_t cnt = 0;
    for (int64_t k = 0; k < v->n_const; k++)
        cnt += v->ival ? v->ival[k] != 0 : v->fval[k] != 0;
    return cnt;
}

static dlp_status sh_nonzero(dlp_sctx *c) {
    const dlp_shape *x = dlp_sh_shape(c, 0);
    dlp_shape o = dlp_shape_of_rank(2);
    if (x) o.dims[0] = dlp_dim_of(x->rank);
    int64_t cnt = count_nonzero(c, 0);
    if (cnt >= 0 && x) o.dims[1] = dlp_dim_of(cnt);
    dlp_status st = dlp_sh_set(c, 0, DLP_DT_INT64, &o);
    int64_t n;
    if (st != DLP_OK || cnt < 0 || !dlp_sh_small(&o, &n)) return st;
    dlp_value *v = dlp_sh_in(c, 0);
    int64_t *r = dlp_sh_alloc(c, (size_t)(n ? n : 1), sizeof *r);
    if (!r) return dlp_sh_nomem(c);
    int64_t is[DLP_MAX_RANK], q = 0;
    dlp_sh_strides(x, is);
    for (int64_t k = 0; k < v->n_const; k++) {
        bool nz = v->ival ? v->ival[k] != 0 : v->fval[k] != 0;
        if (!nz) continue;
        int64_t rem = k;
        for (int d = 0; d < x->rank; d++) {
            r[d * cnt + q] = rem / is[d];
            rem %= is[d];
        }
        q++;
    }
    return dlp_sh_set_ints(c, 0, DLP_DT_INT64, &o, r, n);
}

static dlp_status sh_compress(dlp_sctx *c) {
    dlp_dtype dt = dlp_sh_dtype(c, 0);
    const dlp_shape *x = dlp_sh_shape(c, 0);
    dlp_sh_set_dtype(c, 0, dt);
    if (!x) return DLP_OK;
    int64_t cnt = count_nonzero(c, 1);
    const dlp_attr *a = dlp_node_attr(c->n, "axis");
    if (!a) {
        dlp_shape o = dlp_shape_of_rank(1);
        if (cnt >= 0) o.dims[0] = dlp_dim_of(cnt);
        return dlp_sh_set(c, 0, dt, &o);
    }
    int axis;
    if (!dlp_axis(a->i, x->rank, &axis)) return dlp_sh_bad(c, "bad axis");
    dlp_shape o = *x;
    o.dims[axis] = cnt >= 0 ? dlp_dim_of(cnt) : dlp_dim_unknown();
    return dlp_sh_set(c, 0, dt, &o);
}

static dlp_status sh_topk(dlp_sctx *c) {
    dlp_dtype dt = dlp_sh_dtype(c, 0);
    dlp_sh_set_dtype(c, 0, dt);
    dlp_sh_set_dtype(c, 1, DLP_DT_INT64);
    const dlp_shape *x = dlp_sh_shape(c, 0);
    if (!x) return DLP_OK;
    int axis;
    if (!dlp_axis(dlp_node_attr_int(c->n, "axis", -1), x->rank, &axis))
        return dlp_sh_bad(c, "bad axis");
    int64_t k = -1;
    if (c->opset < 10) k = dlp_node_attr_int(c->n, "k", -1);
    else if (!dlp_sh_scalar_int(c, 1, &k)) k = -1;
    dlp_shape o = *x;
    if (k >= 0 && x->dims[axis].value >= 0 && k > x->dims[axis].value)
        return dlp_sh_bad(c, "k %lld larger than dim %lld", (long long)k,
                          (long long)x->dims[axis].value);
    o.dims[axis] = k >= 0 ? dlp_dim_of(k) : dlp_dim_unknown();
    dlp_sh_set(c, 0, dt, &o);
    return dlp_sh_set(c, 1, DLP_DT_INT64, &o);
}

static dlp_status sh_onehot(dlp_sctx *c) {
    dlp_dtype dt = dlp_sh_dtype(c, 2);
    dlp_sh_set_dtype(c, 0, dt);
    const dlp_shape *ix = dlp_sh_shape(c, 0);
    if (!ix || ix->rank + 1 > DLP_MAX_RANK) return DLP_OK;
    int r = ix->rank + 1, axis;
    if (!dlp_axis(dlp_node_attr_int(c->n, "axis", -1), r, &axis))
        return dlp_sh_bad(c, "bad axis");
    double depth;
    dlp_dim dd = dlp_dim_unknown();
    if (dlp_sh_scalar_num(c, 1, &depth)) {
        if (!(depth >= 1 && depth < 1e12)) return dlp_sh_bad(c, "bad depth");
        dd = dlp_dim_of((int64_t)depth);
    }
    dlp_shape o = dlp_shape_of_rank(r);
    for (int i = 0, j = 0; i < r; i++) o.dims[i] = i == axis ? dd : ix->dims[j++];
    return dlp_sh_set(c, 0, dt, &o);
}

const dlp_shape_op dlp_shape_ops_index[] = {
    {"Gather", sh_gather}, {"GatherElements", sh_gather_elements},
    {"GatherND", sh_gather_nd}, {"ScatterND", sh_scatter_nd},
    {"ScatterElements", sh_scatter_elements}, {"Scatter", sh_scatter_elements},
    {"NonZero", sh_nonzero}, {"Compress", sh_compress}, {"TopK", sh_topk},
    {"OneHot", sh_onehot},
    {NULL, NULL},
};
