/*
 * shape_tensor.c — shapes of layout ops, with constant folding of small
 * tensors: Shape, Size, Reshape, Flatten, Transpose, Squeeze, Unsqueeze,
 * Concat, Split, Slice, Expand, Tile, Pad, DepthToSpace, SpaceToDepth,
 * Resize, Upsample.
 *
 * These carry the shape arithmetic of exported transformers
 * (Shape -> Gather -> Unsqueeze -> Concat -> Reshape): every op here folds
 * its output contents when its inputs are constant. Dims copied from an
 * input keep their symbol.
 */
#include "shape.h"

#include <math.h>
#include <string.h>

/* ---- Shape / Size --------------------------------------------------------- */

/* Shape: dims [start, end) of the input (opset 15 attributes). */
static dlp_status sh_shape(dlp_sctx *c) {
    const dlp_shape *x = dlp_sh_shape(c, 0);
    dlp_sh_set_dtype(c, 0, DLP_DT_INT64);
    if (!x) return DLP_OK;
    int64_t r = x->rank;
    int64_t s = dlp_node_attr_int(c->n, "start", 0);
    int64_t e = dlp_node_attr_int(c->n, "end", r);
    if (s < 0) s += r;
    if (e < 0) e += r;
    s = s < 0 ? 0 : s > r ? r : s;
    e = e < 0 ? 0 : e > r ? r : e;
    int64_t len = e > s ? e - s : 0;
    dlp_shape o = dlp_shape_of_rank(1);
    o.dims[0] = dlp_dim_of(len);
    int64_t v[DLP_MAX_RANK];
    bool known = true;
    for (int64_t i = 0; i < len; i++) {
        v[i] = x->dims[s + i].value;
        if (v[i] < 0) known = false;
    }
    if (!known) return dlp_sh_set(c, 0, DLP_DT_INT64, &o);
    return dlp_sh_set_ints(c, 0, DLP_DT_INT64, &o, v, len);
}

static dlp_status sh_size(dlp_sctx *c) {
    dlp_shape o = dlp_shape_of_rank(0);
    const dlp_shape *x = dlp_sh_shape(c, 0);
    int64_t n;
    if (x && dlp_shape_numel(x, &n))
        return dlp_sh_set_ints(c, 0, DLP_DT_INT64, &o, &n, 1);
    return dlp_sh_set(c, 0, DLP_DT_INT64, &o);
}

/* ---- Reshape / Flatten ---------------------------------------------------- */

static bool same_dim(dlp_dim a, dlp_dim b) {
    if (a.sym >= 0 && a.sym == b.sym) return true;
    return false;
}

/* Output shape of Reshape(x, spec): 0 copies (unless allowzero), -1 is
 * inferred. Unknown input dims cancel against output dims with the same
 * symbol or copied by 0. */
static dlp_status sh_reshape(dlp_sctx *c) {
    dlp_dtype dt = dlp_sh_dtype(c, 0);
    dlp_sh_set_dtype(c, 0, dt);
    const int64_t *spec;
    int64_t ns, specbuf[DLP_MAX_RANK];
    dlp_dim symd[DLP_MAX_RANK];
    int nsym;
    bool found;
    if (c->opset < 5) {
        const dlp_attr *a = dlp_node_attr(c->n, "shape");
        if (!a || a->type != DLP_ATTR_INTS) return DLP_OK;
        spec = a->ints;
        ns = a->n;
    } else if (!dlp_sh_ints_attr_or_input(c, "", 1, &spec, &ns, &found)) {
        if (dlp_sh_symdims(c, 1, specbuf, symd, &nsym)) {
            spec = specbuf;
            ns = nsym;
            goto have_spec;
        }
        const dlp_shape *ss = dlp_sh_shape(c, 1);
        if (ss && ss->rank == 1 && ss->dims[0].value >= 0 &&
            ss->dims[0].value <= DLP_MAX_RANK) {
            dlp_shape o = dlp_shape_of_rank((int)ss->dims[0].value);
            return dlp_sh_set(c, 0, dt, &o);
        }
        return DLP_OK;
    }
have_spec:
    if (ns > DLP_MAX_RANK) return DLP_OK;
    bool allowzero = dlp_node_attr_int(c->n, "allowzero", 0) != 0;
    const dlp_shape *x = dlp_sh_shape(c, 0);
    dlp_shape o = dlp_shape_of_rank((int)ns);
    int infer = -1;
    for (int i = 0; i < ns; i++) {
        if (spec[i] == DLP_SPEC_SYM) {
            o.dims[i] = symd[i];
        } else if (spec[i] == 0 && !allowzero) {
            if (!x) continue;
            if (i >= x->rank)
                return dlp_sh_bad(c, "shape copies dim %d of a rank-%d input",
                                  i, x->rank);
            o.dims[i] = x->dims[i];
        } else if (spec[i] == -1) {
            if (infer >= 0) return dlp_sh_bad(c, "more than one -1 in shape");
            infer = i;
        } else if (spec[i] < -1) {
            return dlp_sh_bad(c, "shape entry %lld", (long long)spec[i]);
        } else {
            o.dims[i] = dlp_dim_of(spec[i]);
        }
    }
    if (x) {
        /* cancel identical symbolic / copied dims, then compare products */
        bool used_in[DLP_MAX_RANK] = {false}, used_out[DLP_MAX_RANK] = {false};
        for (int i = 0; i < ns; i++) {
            if (i == infer) continue;
            if (spec[i] == 0 && !allowzero && i < x->rank) {
                used_in[i] = used_out[i] = true;
                continue;
            }
        }
        for (int i = 0; i < ns; i++) {
            if (i == infer || used_out[i] || o.dims[i].sym < 0) continue;
            for (int j = 0; j < x->rank; j++)
                if (!used_in[j] && same_dim(o.dims[i], x->dims[j])) {
                    used_in[j] = used_out[i] = true;
                    break;
                }
        }
        int64_t pin = 1, pout = 1;
        bool kin = true, kout = true;
        for (int j = 0; j < x->rank; j++) {
            if (used_in[j]) continue;
            if (x->dims[j].value < 0) { kin = false; continue; }
            if (!dlp_mul_i64(pin, x->dims[j].value, &pin))
                return dlp_fail(c->err, DLP_ERR_LIMIT, "tensor '%s': element "
                                "count overflows int64",
                                dlp_sh_in(c, 0)->name);
        }
        for (int i = 0; i < ns; i++) {
            if (i == infer || used_out[i]) continue;
            if (o.dims[i].value < 0) { kout = false; continue; }
            if (!dlp_mul_i64(pout, o.dims[i].value, &pout))
                return dlp_fail(c->err, DLP_ERR_LIMIT, "node '%s': reshape "
                                "target element count overflows int64",
                                c->n->name);
        }
        if (infer >= 0) {
            if (kin && kout) {
                if (pout == 0 || pin % pout != 0)
                    return dlp_sh_bad(c, "cannot reshape %lld elements into "
                                      "a multiple of %lld", (long long)pin,
                                      (long long)pout);
                o.dims[infer] = dlp_dim_of(pin / pout);
                /* a lone unknown symbolic dim moved to the -1 slot */
            }
        } else if (kin && kout && pin != pout) {
            return dlp_sh_bad(c, "cannot reshape %lld elements into %lld",
                              (long long)pin, (long long)pout);
        }
        if (infer >= 0 && o.dims[infer].value < 0 && kout && pout == 1) {
            /* all known dims cancel: the -1 takes the one unknown input dim */
            int left = -1, cnt = 0;
            for (int j = 0; j < x->rank; j++)
                if (!used_in[j] && x->dims[j].value != 1) { left = j; cnt++; }
            if (cnt == 1) o.dims[infer] = x->dims[left];
        }
    }
    dlp_status st = dlp_sh_set(c, 0, dt, &o);
    if (st != DLP_OK) return st;
    return dlp_sh_fold_same(c, 0, 0, &o);
}

static dlp_status sh_flatten(dlp_sctx *c) {
    dlp_dtype dt = dlp_sh_dtype(c, 0);
    const dlp_shape *x = dlp_sh_shape(c, 0);
    dlp_sh_set_dtype(c, 0, dt);
    if (!x) return DLP_OK;
    int64_t axis = dlp_node_attr_int(c->n, "axis", 1);
    if (axis < 0) axis += x->rank;
    if (axis < 0 || axis > x->rank)
        return dlp_sh_bad(c, "axis out of range");
    dlp_shape o = dlp_shape_of_rank(2);
    o.dims[0] = o.dims[1] = dlp_dim_of(1);
    for (int i = 0; i < x->rank; i++)
        if (!dlp_dim_mul(o.dims[i < axis ? 0 : 1], x->dims[i],
                         &o.dims[i < axis ? 0 : 1]))
            return dlp_sh_bad(c, "dim overflow");
    dlp_status st = dlp_sh_set(c, 0, dt, &o);
    if (st != DLP_OK) return st;
    return dlp_sh_fold_same(c, 0, 0, &o);
}

/* ---- Transpose ------------------------------------------------------------ */

static dlp_status sh_transpose(dlp_sctx *c) {
    dlp_dtype dt = dlp_sh_dtype(c, 0);
    const dlp_shape *x = dlp_sh_shape(c, 0);
    dlp_sh_set_dtype(c, 0, dt);
    if (!x) return DLP_OK;
    int perm[DLP_MAX_RANK];
    const dlp_attr *a = dlp_node_attr(c->n, "perm");
    if (a && a->type == DLP_ATTR_INTS) {
        if (a->n != x->rank)
            return dlp_sh_bad(c, "perm has %d entries for rank %d", a->n,
                              x->rank);
        bool seen[DLP_MAX_RANK] = {false};
        for (int i = 0; i < x->rank; i++) {
            if (!dlp_axis(a->ints[i], x->rank, &perm[i]) || seen[perm[i]])
                return dlp_sh_bad(c, "bad perm");
            seen[perm[i]] = true;
        }
    } else {
        for (int i = 0; i < x->rank; i++) perm[i] = x->rank - 1 - i;
    }
    dlp_shape o = dlp_shape_of_rank(x->rank);
    for (int i = 0; i < x->rank; i++) o.dims[i] = x->dims[perm[i]];
    dlp_status st = dlp_sh_set(c, 0, dt, &o);
    int64_t n;
    if (st != DLP_OK || !dlp_value_is_const(dlp_sh_in(c, 0)) ||
        !dlp_sh_small(&o, &n))
        return st;
    int64_t *src = dlp_sh_alloc(c, (size_t)(n ? n : 1), sizeof *src);
    if (!src) return dlp_sh_nomem(c);
    int64_t is[DLP_MAX_RANK], idx[DLP_MAX_RANK] = {0};
    dlp_sh_strides(x, is);
    for (int64_t k = 0; k < n; k++) {
        int64_t off = 0;
        for (int d = 0; d < o.rank; d++) off += idx[d] * is[perm[d]];
        src[k] = off;
        for (int d = o.rank - 1; d >= 0; d--) {
            if (++idx[d] < o.dims[d].value) break;
            idx[d] = 0;
        }
    }
    return dlp_sh_fold_pick(c, 0, 0, &o, src, n);
}

/* ---- Squeeze / Unsqueeze -------------------------------------------------- */

static dlp_status sh_squeeze(dlp_sctx *c) {
    dlp_dtype dt = dlp_sh_dtype(c, 0);
    const dlp_shape *x = dlp_sh_shape(c, 0);
    dlp_sh_set_dtype(c, 0, dt);
    if (!x) return DLP_OK;
    const int64_t *axes = NULL;
    int64_t na = 0;
    bool found = false;
    if (!dlp_sh_ints_attr_or_input(c, "axes", 1, &axes, &na, &found) &&
        found)
        return DLP_OK;
    bool drop[DLP_MAX_RANK] = {false};
    if (found && na > 0) {
        for (int64_t i = 0; i < na; i++) {
            int ax;
            if (!dlp_axis(axes[i], x->rank, &ax))
                return dlp_sh_bad(c, "axis %lld out of range",
                                  (long long)axes[i]);
            if (x->dims[ax].value >= 0 && x->dims[ax].value != 1)
                return dlp_sh_bad(c, "squeezing dim %d of size %lld", ax,
                                  (long long)x->dims[ax].value);
            drop[ax] = true;
        }
    } else {
        for (int i = 0; i < x->rank; i++) {
            if (x->dims[i].value < 0) return DLP_OK; /* rank unknown */
            drop[i] = x->dims[i].value == 1;
        }
    }
    dlp_shape o = dlp_shape_of_rank(0);
    for (int i = 0; i < x->rank; i++)
        if (!drop[i]) o.dims[o.rank++] = x->dims[i];
    dlp_status st = dlp_sh_set(c, 0, dt, &o);
    if (st != DLP_OK) return st;
    return dlp_sh_fold_same(c, 0, 0, &o);
}

static dlp_status sh_unsqueeze(dlp_sctx *c) {
    dlp_dtype dt = dlp_sh_dtype(c, 0);
    const dlp_shape *x = dlp_sh_shape(c, 0);
    dlp_sh_set_dtype(c, 0, dt);
    const int64_t *axes = NULL;
    int64_t na = 0;
    bool found = false;
    if (!dlp_sh_ints_attr_or_input(c, "axes", 1, &axes, &na, &found))
        return found ? DLP_OK : dlp_sh_bad(c, "no axes");
    if (!x) return DLP_OK;
    int r = x->rank + (int)na;
    if (na > DLP_MAX_RANK || r > DLP_MAX_RANK) return DLP_OK;
    bool ins[DLP_MAX_RANK] = {false};
    for (int64_t i = 0; i < na; i++) {
        int ax;
        if (!dlp_axis(axes[i], r, &ax) || ins[ax])
            return dlp_sh_bad(c, "bad axis %lld", (long long)axes[i]);
        ins[ax] = true;
    }
    dlp_shape o = dlp_shape_of_rank(r);
    for (int i = 0, j = 0; i < r; i++)
        o.dims[i] = ins[i] ? dlp_dim_of(1) : x->dims[j++];
    dlp_status st = dlp_sh_set(c, 0, dt, &o);
    if (st != DLP_OK) return st;
    return dlp_sh_fold_same(c, 0, 0, &o);
}

/* ---- Concat / Split ------------------------------------------------------- */

static dlp_status sh_concat(dlp_sctx *c) {
    dlp_dtype dt = DLP_DT_UNDEFINED;
    int rank = -1;
    for (int i = 0; i < c->n->n_inputs; i++) {
        if (dt == DLP_DT_UNDEFINED) dt = dlp_sh_dtype(c, i);
        const dlp_shape *s = dlp_sh_shape(c, i);
        if (s) rank = s->rank;
    }
    dlp_sh_set_dtype(c, 0, dt);
    if (rank < 0) return DLP_OK;
    int axis;
    if (!dlp_axis(dlp_node_attr_int(c->n, "axis", 0), rank, &axis))
        return dlp_sh_bad(c, "axis out of range for rank %d", rank);
    dlp_shape o = dlp_shape_of_rank(rank);
    o.dims[axis] = dlp_dim_of(0);
    bool all_const = true;
    for (int i = 0; i < c->n->n_inputs; i++) {
        dlp_value *v = dlp_sh_in(c, i);
        if (!v) continue;
        if (!dlp_value_is_const(v)) all_const = false;
        const dlp_shape *s = dlp_sh_shape(c, i);
        if (!s) {
            o.dims[axis] = dlp_dim_unknown();
            all_const = false;
            continue;
        }
        if (s->rank != rank)
            return dlp_sh_bad(c, "inputs of rank %d and %d", rank, s->rank);
        for (int d = 0; d < rank; d++) {
            if (d == axis) {
                if (o.dims[d].value >= 0 && s->dims[d].value >= 0)
                    o.dims[d] = dlp_dim_of(o.dims[d].value + s->dims[d].value);
                else
                    o.dims[d] = dlp_dim_unknown();
                continue;
            }
            dlp_dim m = o.dims[d];
            if (i == 0 || m.value < 0) {
                if (m.value < 0 && s->dims[d].value < 0 && m.sym >= 0)
                    continue;
                if (m.value < 0) o.dims[d] = s->dims[d];
            } else if (s->dims[d].value >= 0 && s->dims[d].value != m.value) {
                return dlp_sh_bad(c, "dim %d differs: %lld vs %lld", d,
                                  (long long)m.value,
                                  (long long)s->dims[d].value);
            } else if (m.sym < 0 && s->dims[d].sym >= 0) {
                o.dims[d] = s->dims[d];
            }
        }
    }
    dlp_status st = dlp_sh_set(c, 0, dt, &o);
    int64_t n;
    if (st != DLP_OK || !all_const || !dlp_sh_small(&o, &n)) return st;
    /* fold: walk the output; outer x (axis block of input i) x inner */
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < axis; d++) outer *= o.dims[d].value;
    for (int d = axis + 1; d < rank; d++) inner *= o.dims[d].value;
    bool ints = true;
    for (int i = 0; i < c->n->n_inputs; i++)
        if (dlp_sh_in(c, i) && !dlp_sh_in(c, i)->ival) ints = false;
    int64_t *ri = NULL;
    double *rf = NULL;
    if (ints) ri = dlp_sh_alloc(c, (size_t)(n ? n : 1), sizeof *ri);
    else rf = dlp_sh_alloc(c, (size_t)(n ? n : 1), sizeof *rf);
    if (!ri && !rf) return dlp_sh_nomem(c);
    int64_t k = 0;
    for (int64_t ou = 0; ou < outer; ou++)
        for (int i = 0; i < c->n->n_inputs; i++) {
            dlp_value *v = dlp_sh_in(c, i);
            if (!v) continue;
            int64_t blk = v->shape.dims[axis].value * inner;
            const double *f = NULL;
            int64_t nf;
            if (!ints && !dlp_sh_nums(c, i, &f, &nf)) return DLP_OK;
            for (int64_t j = 0; j < blk; j++, k++) {
                int64_t src = ou * blk + j;
                if (src >= v->n_const || k >= n) return DLP_OK;
                if (ints) ri[k] = v->ival[src];
                else rf[k] = f[src];
            }
        }
    if (k != n) return DLP_OK;
    if (ints) return dlp_sh_set_ints(c, 0, dt, &o, ri, n);
    return dlp_sh_set_nums(c, 0, dt, &o, rf, n);
}

/* Folds output oi as x[..., start:start+len, ...] along axis. */
static dlp_status fold_axis_range(dlp_sctx *c, int oi, const dlp_shape *x,
                                  int axis, int64_t start,
                                  const dlp_shape *o) {
    int64_t n;
    if (!dlp_value_is_const(dlp_sh_in(c, 0)) || !dlp_sh_small(o, &n))
        return DLP_OK;
    int64_t *src = dlp_sh_alloc(c, (size_t)(n ? n : 1), sizeof *src);
    if (!src) return dlp_sh_nomem(c);
    int64_t is[DLP_MAX_RANK], idx[DLP_MAX_RANK] = {0};
    dlp_sh_strides(x, is);
    for (int64_t k = 0; k < n; k++) {
        int64_t off = 0;
        for (int d = 0; d < o->rank; d++)
            off += (idx[d] + (d == axis ? start : 0)) * is[d];
        src[k] = off;
        for (int d = o->rank - 1; d >= 0; d--) {
            if (++idx[d] < o->dims[d].value) break;
            idx[d] = 0;
        }
    }
    return dlp_sh_fold_pick(c, oi, 0, o, src, n);
}

static dlp_status sh_split(dlp_sctx *c) {
    dlp_dtype dt = dlp_sh_dtype(c, 0);
    int nout = c->n->n_outputs;
    for (int i = 0; i < nout; i++) dlp_sh_set_dtype(c, i, dt);
    const dlp_shape *x = dlp_sh_shape(c, 0);
    if (!x || nout <= 0) return DLP_OK;
    int axis;
    if (!dlp_axis(dlp_node_attr_int(c->n, "axis", 0), x->rank, &axis))
        return dlp_sh_bad(c, "axis out of range");
    const int64_t *split = NULL;
    int64_t ns = 0;
    bool found = false;
    if (!dlp_sh_ints_attr_or_input(c, "split", 1, &split, &ns, &found) &&
        found)
        return DLP_OK;
    int64_t d = x->dims[axis].value;
    int64_t sizes[256];
    if (nout > 256) return DLP_OK;
    if (found && ns > 0) {
        if (ns != nout)
            return dlp_sh_bad(c, "split has %lld entries for %d outputs",
                              (long long)ns, nout);
        int64_t sum = 0;
        for (int i = 0; i < nout; i++) {
            if (split[i] < 0) return dlp_sh_bad(c, "negative split");
            sizes[i] = split[i];
            if (!dlp_add_i64(sum, split[i], &sum))
                return dlp_sh_bad(c, "split sizes overflow");
        }
        if (d >= 0 && sum != d)
            return dlp_sh_bad(c, "split sums to %lld, dim is %lld",
                              (long long)sum, (long long)d);
    } else {
        if (d < 0) {
            for (int i = 0; i < nout; i++) {
                dlp_shape o = *x;
                o.dims[axis] = dlp_dim_unknown();
                dlp_sh_set(c, i, dt, &o);
            }
            return DLP_OK;
        }
        /* equal parts; opset 18 num_outputs allows a smaller last part */
        int64_t part = (d + nout - 1) / nout;
        if (c->opset < 18 && d % nout != 0)
            return dlp_sh_bad(c, "dim %lld not divisible into %d outputs",
                              (long long)d, nout);
        for (int i = 0; i < nout; i++) {
            int64_t left = d - part * i;
            sizes[i] = left < part ? (left > 0 ? left : 0) : part;
        }
    }
    int64_t start = 0;
    for (int i = 0; i < nout; i++) {
        dlp_shape o = *x;
        o.dims[axis] = dlp_dim_of(sizes[i]);
        dlp_status st = dlp_sh_set(c, i, dt, &o);
        if (st == DLP_OK) st = fold_axis_range(c, i, x, axis, start, &o);
        if (st != DLP_OK) return st;
        start += sizes[i];
    }
    return DLP_OK;
}

/* ---- Slice ---------------------------------------------------------------- */

static dlp_status sh_slice(dlp_sctx *c) {
    dlp_dtype dt = dlp_sh_dtype(c, 0);
    const dlp_shape *x = dlp_sh_shape(c, 0);
    dlp_sh_set_dtype(c, 0, dt);
    if (!x) return DLP_OK;
    const int64_t *starts, *ends, *axes = NULL, *steps = NULL;
    int64_t ns, ne, na = 0, nst = 0;
    bool f1, f2, f3 = false, f4 = false;
    if (c->opset < 10) {
        const dlp_attr *a = dlp_node_attr(c->n, "starts");
        const dlp_attr *b = dlp_node_attr(c->n, "ends");
        const dlp_attr *ax = dlp_node_attr(c->n, "axes");
        if (!a || !b || a->type != DLP_ATTR_INTS || b->type != DLP_ATTR_INTS)
            return dlp_sh_bad(c, "starts/ends missing");
        starts = a->ints; ns = a->n;
        ends = b->ints; ne = b->n;
        if (ax && ax->type == DLP_ATTR_INTS) { axes = ax->ints; na = ax->n; }
    } else {
        bool ok = dlp_sh_ints_attr_or_input(c, "", 1, &starts, &ns, &f1) &&
                  dlp_sh_ints_attr_or_input(c, "", 2, &ends, &ne, &f2);
        if (ok && dlp_sh_in(c, 3))
            ok = dlp_sh_ints_attr_or_input(c, "", 3, &axes, &na, &f3);
        if (ok && dlp_sh_in(c, 4))
            ok = dlp_sh_ints_attr_or_input(c, "", 4, &steps, &nst, &f4);
        if (!ok) {
            /* unknown bounds: only the untouched axes are known */
            dlp_shape o = *x;
            if (dlp_sh_in(c, 3) && dlp_sh_ints(c, 3, &axes, &na)) {
                for (int64_t i = 0; i < na; i++) {
                    int ax;
                    if (dlp_axis(axes[i], x->rank, &ax))
                        o.dims[ax] = dlp_dim_unknown();
                }
            } else {
                for (int i = 0; i < o.rank; i++) o.dims[i] = dlp_dim_unknown();
            }
            return dlp_sh_set(c, 0, dt, &o);
        }
    }
    if (ns != ne || (axes && na != ns) || (steps && nst != ns))
        return dlp_sh_bad(c, "starts/ends/axes/steps lengths differ");
    dlp_shape o = *x;
    int64_t st_of[DLP_MAX_RANK], step_of[DLP_MAX_RANK];
    bool touched[DLP_MAX_RANK] = {false};
    for (int i = 0; i < x->rank; i++) { st_of[i] = 0; step_of[i] = 1; }
    for (int64_t i = 0; i < ns; i++) {
        int ax;
        if (!dlp_axis(axes ? axes[i] : i, x->rank, &ax) || touched[ax])
            return dlp_sh_bad(c, "bad axis");
        touched[ax] = true;
        int64_t step = steps ? steps[i] : 1;
        if (step == 0) return dlp_sh_bad(c, "step 0");
        int64_t s = starts[i], e = ends[i], d = x->dims[ax].value;
        if (d < 0) {
            /* full-range slices keep the dim */
            if (step == 1 && s == 0 && e >= INT32_MAX) continue;
            /* x[..., -k:] of an unknown dim: k (for a dim of at least k) */
            if (step == 1 && s < 0 && s > -INT32_MAX && e >= INT32_MAX) {
                o.dims[ax] = dlp_dim_of(-s);
                continue;
            }
            o.dims[ax] = dlp_dim_unknown();
            continue;
        }
        if (s < 0) s += d;
        if (e < 0) e += d;
        int64_t len;
        if (step > 0) {
            s = s < 0 ? 0 : s > d ? d : s;
            e = e < 0 ? 0 : e > d ? d : e;
            len = e > s ? 1 + (e - s - 1) / step : 0;
        } else {
            s = s < 0 ? -1 : s > d - 1 ? d - 1 : s;
            e = e < -1 ? -1 : e > d - 1 ? d - 1 : e;
            len = s > e ? (step == INT64_MIN ? 1 : 1 + (s - e - 1) / -step)
                        : 0;
        }
        st_of[ax] = s;
        step_of[ax] = step;
        if (len != d || o.dims[ax].value != d) o.dims[ax] = dlp_dim_of(len);
    }
    dlp_status st = dlp_sh_set(c, 0, dt, &o);
    int64_t n;
    if (st != DLP_OK || !dlp_value_is_const(dlp_sh_in(c, 0)) ||
        !dlp_sh_small(&o, &n))
        return st;
    int64_t *src = dlp_sh_alloc(c, (size_t)(n ? n : 1), sizeof *src);
    if (!src) return dlp_sh_nomem(c);
    int64_t is[DLP_MAX_RANK], idx[DLP_MAX_RANK] = {0};
    dlp_sh_strides(x, is);
    for (int64_t k = 0; k < n; k++) {
        int64_t off = 0;
        for (int d = 0; d < o.rank; d++)
            off += (st_of[d] + idx[d] * step_of[d]) * is[d];
        src[k] = off;
        for (int d = o.rank - 1; d >= 0; d--) {
            if (++idx[d] < o.dims[d].value) break;
            idx[d] = 0;
        }
    }
    return dlp_sh_fold_pick(c, 0, 0, &o, src, n);
}

/* ---- Expand / Tile / Pad -------------------------------------------------- */

/* Folds a broadcast of input 0 onto known shape o. */
static dlp_status fold_broadcast_to(dlp_sctx *c, const dlp_shape *x,
                                    const dlp_shape *o) {
    int64_t n;
    if (!dlp_value_is_const(dlp_sh_in(c, 0)) || !dlp_sh_small(o, &n))
        return DLP_OK;
    int64_t *src = dlp_sh_alloc(c, (size_t)(n ? n : 1), sizeof *src);
    if (!src) return dlp_sh_nomem(c);
    int64_t is[DLP_MAX_RANK], st[DLP_MAX_RANK] = {0}, idx[DLP_MAX_RANK] = {0};
    dlp_sh_strides(x, is);
    int off0 = o->rank - x->rank;
    for (int d = 0; d < x->rank; d++)
        st[off0 + d] = x->dims[d].value == 1 ? 0 : is[d];
    for (int64_t k = 0; k < n; k++) {
        int64_t off = 0;
        for (int d = 0; d < o->rank; d++) off += idx[d] * st[d];
        src[k] = off;
        for (int d = o->rank - 1; d >= 0; d--) {
            if (++idx[d] < o->dims[d].value) break;
            idx[d] = 0;
        }
    }
    return dlp_sh_fold_pick(c, 0, 0, o, src, n);
}

static dlp_status sh_expand(dlp_sctx *c) {
    dlp_dtype dt = dlp_sh_dtype(c, 0);
    dlp_sh_set_dtype(c, 0, dt);
    const dlp_shape *x = dlp_sh_shape(c, 0);
    const int64_t *sv;
    int64_t ns;
    int64_t specbuf[DLP_MAX_RANK];
    dlp_dim symd[DLP_MAX_RANK];
    int nsym;
    if (!dlp_sh_ints(c, 1, &sv, &ns)) {
        const dlp_shape *ss = dlp_sh_shape(c, 1);
        if (x && dlp_sh_symdims(c, 1, specbuf, symd, &nsym)) {
            dlp_shape target = dlp_shape_of_rank(nsym), o;
            for (int i = 0; i < nsym; i++) {
                if (specbuf[i] != DLP_SPEC_SYM && specbuf[i] < 0)
                    return dlp_sh_bad(c, "negative target dim");
                target.dims[i] = specbuf[i] == DLP_SPEC_SYM
                                     ? symd[i] : dlp_dim_of(specbuf[i]);
            }
            int rc = dlp_shape_broadcast(x, &target, &o);
            if (rc < 0) return dlp_sh_bad(c, "cannot expand to the target shape");
            return rc > 0 ? DLP_OK : dlp_sh_set(c, 0, dt, &o);
        }
        if (x && ss && ss->rank == 1 && ss->dims[0].value >= 0) {
            int64_t r = ss->dims[0].value > x->rank ? ss->dims[0].value
                                                    : x->rank;
            dlp_shape o = dlp_shape_of_rank((int)r);
            return dlp_sh_set(c, 0, dt, &o);
        }
        return DLP_OK;
    }
    if (ns > DLP_MAX_RANK || !x) return DLP_OK;
    dlp_shape target = dlp_shape_from(sv, (int)ns), o;
    for (int64_t i = 0; i < ns; i++)
        if (sv[i] < 0) return dlp_sh_bad(c, "negative target dim");
    int rc = dlp_shape_broadcast(x, &target, &o);
    if (rc < 0) return dlp_sh_bad(c, "cannot expand to the target shape");
    if (rc > 0) return DLP_OK;
    dlp_status st = dlp_sh_set(c, 0, dt, &o);
    if (st != DLP_OK) return st;
    return fold_broadcast_to(c, x, &o);
}

static dlp_status sh_tile(dlp_sctx *c) {
    dlp_dtype dt = dlp_sh_dtype(c, 0);
    dlp_sh_set_dtype(c, 0, dt);
    const dlp_shape *x = dlp_sh_shape(c, 0);
    if (!x) return DLP_OK;
    const int64_t *rep;
    int64_t nr;
    if (!dlp_sh_ints(c, 1, &rep, &nr)) {
        dlp_shape o = dlp_shape_of_rank(x->rank);
        return dlp_sh_set(c, 0, dt, &o);
    }
    if (nr != x->rank)
        return dlp_sh_bad(c, "repeats has %lld entries for rank %d",
                          (long long)nr, x->rank);
    dlp_shape o = *x;
    for (int i = 0; i < x->rank; i++) {
        if (rep[i] < 0) return dlp_sh_bad(c, "negative repeat");
        if (!dlp_dim_mul(x->dims[i], dlp_dim_of(rep[i]), &o.dims[i]))
            return dlp_fail(c->err, DLP_ERR_LIMIT, "node '%s': tiled dim "
                            "overflows int64", c->n->name);
    }
    dlp_status st = dlp_sh_set(c, 0, dt, &o);
    int64_t n;
    if (st != DLP_OK || !dlp_value_is_const(dlp_sh_in(c, 0)) ||
        !dlp_sh_small(&o, &n))
        return st;
    int64_t *src = dlp_sh_alloc(c, (size_t)(n ? n : 1), sizeof *src);
    if (!src) return dlp_sh_nomem(c);
    int64_t is[DLP_MAX_RANK], idx[DLP_MAX_RANK] = {0};
    dlp_sh_strides(x, is);
    for (int64_t k = 0; k < n; k++) {
        int64_t off = 0;
        for (int d = 0; d < o.rank; d++)
            off += (idx[d] % x->dims[d].value) * is[d];
        src[k] = off;
        for (int d = o.rank - 1; d >= 0; d--) {
            if (++idx[d] < o.dims[d].value) break;
            idx[d] = 0;
        }
    }
    return dlp_sh_fold_pick(c, 0, 0, &o, src, n);
}

static dlp_status sh_pad(dlp_sctx *c) {
    dlp_dtype dt = dlp_sh_dtype(c, 0);
    dlp_sh_set_dtype(c, 0, dt);
    const dlp_shape *x = dlp_sh_shape(c, 0);
    if (!x) return DLP_OK;
    const int64_t *pads, *axes = NULL;
    int64_t np, na = 0;
    bool found;
    if (c->opset < 11) {
        const dlp_attr *a = dlp_node_attr(c->n, "pads");
        if (!a || a->type != DLP_ATTR_INTS) return DLP_OK;
        pads = a->ints;
        np = a->n;
    } else if (!dlp_sh_ints_attr_or_input(c, "", 1, &pads, &np, &found)) {
        dlp_shape o = dlp_shape_of_rank(x->rank);
        return dlp_sh_set(c, 0, dt, &o);
    }
    if (dlp_sh_in(c, 3) && !dlp_sh_ints(c, 3, &axes, &na)) {
        dlp_shape o = dlp_shape_of_rank(x->rank);
        return dlp_sh_set(c, 0, dt, &o);
    }
    int nax = axes ? (int)na : x->rank;
    if (np != 2 * nax)
        return dlp_sh_bad(c, "pads has %lld entries for %d axes",
                          (long long)np, nax);
    dlp_shape o = *x;
    for (int i = 0; i < nax; i++) {
        int ax = i;
        if (axes && !dlp_axis(axes[i], x->rank, &ax))
            return dlp_sh_bad(c, "bad axis");
        int64_t d = x->dims[ax].value;
        if (d < 0) {
            if (pads[i] != 0 || pads[nax + i] != 0)
                o.dims[ax] = dlp_dim_unknown();
            continue;
        }
        bool ov = false;
        int64_t v = dlp_ck_add(&ov, dlp_ck_add(&ov, d, pads[i]), pads[nax + i]);
        if (ov || v < 0) return dlp_sh_bad(c, "bad padded size");
        if (v != d) o.dims[ax] = dlp_dim_of(v);
    }
    return dlp_sh_set(c, 0, dt, &o);
}

/* ---- DepthToSpace / SpaceToDepth ------------------------------------------ */

static dlp_status sh_depth_space(dlp_sctx *c) {
    dlp_dtype dt = dlp_sh_dtype(c, 0);
    const dlp_shape *x = dlp_sh_shape(c, 0);
    dlp_sh_set_dtype(c, 0, dt);
    if (!x) return DLP_OK;
    if (x->rank != 4) return dlp_sh_bad(c, "input rank %d != 4", x->rank);
    int64_t b = dlp_node_attr_int(c->n, "blocksize", 0);
    if (b <= 0 || b > ((int64_t)1 << 20))
        return dlp_sh_bad(c, "blocksize %lld", (long long)b);
    bool d2s = !strcmp(c->n->op_type, "DepthToSpace");
    dlp_shape o = dlp_shape_of_rank(4);
    o.dims[0] = x->dims[0];
    int64_t ch = x->dims[1].value;
    if (ch >= 0) {
        if (d2s && ch % (b * b) != 0)
            return dlp_sh_bad(c, "channels %lld not divisible by %lld",
                              (long long)ch, (long long)(b * b));
        bool ov = false;
        int64_t v = d2s ? ch / (b * b) : dlp_ck_mul(&ov, ch, b * b);
        if (ov) return dlp_sh_bad(c, "channels overflow");
        o.dims[1] = dlp_dim_of(v);
    }
    for (int i = 2; i < 4; i++) {
        int64_t v = x->dims[i].value;
        if (v < 0) continue;
        if (!d2s && v % b != 0)
            return dlp_sh_bad(c, "spatial dim %lld not divisible by %lld",
                              (long long)v, (long long)b);
        o.dims[i] = dlp_dim_of(d2s ? v * b : v / b);
    }
    return dlp_sh_set(c, 0, dt, &o);
}

/* ---- Resize / Upsample ---------------------------------------------------- */

/* Resize: sizes win over scales; out = floor(in * scale). */
static dlp_status resize_like(dlp_sctx *c, int scales_i, int sizes_i) {
    dlp_dtype dt = dlp_sh_dtype(c, 0);
    dlp_sh_set_dtype(c, 0, dt);
    const dlp_shape *x = dlp_sh_shape(c, 0);
    if (!x) return DLP_OK;
    dlp_shape o = *x;
    int r = x->rank;
    int ax[DLP_MAX_RANK];
    int nax = r;
    for (int i = 0; i < r; i++) ax[i] = i;
    const dlp_attr *aa = dlp_node_attr(c->n, "axes");
    if (aa && aa->type == DLP_ATTR_INTS) {
        if (aa->n > r) return dlp_sh_bad(c, "too many axes");
        nax = aa->n;
        for (int i = 0; i < nax; i++)
            if (!dlp_axis(aa->ints[i], r, &ax[i]))
                return dlp_sh_bad(c, "bad axis");
    }
    const int64_t *sizes;
    int64_t nsz;
    const double *scales = NULL;
    int64_t nsc = 0;
    const dlp_attr *sa = dlp_node_attr(c->n, "scales");
    dlp_value *szv = dlp_sh_in(c, sizes_i);
    if (szv && szv->shape.rank == 1 && szv->shape.dims[0].value > 0) {
        if (!dlp_sh_ints(c, sizes_i, &sizes, &nsz)) {
            for (int i = 0; i < nax; i++) o.dims[ax[i]] = dlp_dim_unknown();
            return dlp_sh_set(c, 0, dt, &o);
        }
        if (nsz != nax)
            return dlp_sh_bad(c, "sizes has %lld entries for %d axes",
                              (long long)nsz, nax);
        const char *pol = dlp_node_attr_str(c->n, "keep_aspect_ratio_policy",
                                            "stretch");
        if (strcmp(pol, "stretch") != 0) {
            double sc = strcmp(pol, "not_larger") == 0 ? INFINITY : 0;
            for (int i = 0; i < nax; i++) {
                int64_t d = x->dims[ax[i]].value;
                if (d <= 0) return dlp_sh_set(c, 0, dt, NULL);
                double s = (double)sizes[i] / (double)d;
                sc = strcmp(pol, "not_larger") == 0 ? fmin(sc, s) : fmax(sc, s);
            }
            for (int i = 0; i < nax; i++) {
                double v = floor((double)x->dims[ax[i]].value * sc + 0.5);
                if (!(v >= 0 && v < 1e15)) return dlp_sh_bad(c, "bad size");
                o.dims[ax[i]] = dlp_dim_of((int64_t)v);
            }
            return dlp_sh_set(c, 0, dt, &o);
        }
        for (int i = 0; i < nax; i++) {
            if (sizes[i] < 0) return dlp_sh_bad(c, "negative size");
            o.dims[ax[i]] = dlp_dim_of(sizes[i]);
        }
        return dlp_sh_set(c, 0, dt, &o);
    }
    if (sa && sa->type == DLP_ATTR_FLOATS) {
        scales = sa->floats;
        nsc = sa->n;
    } else if (!dlp_sh_nums(c, scales_i, &scales, &nsc)) {
        for (int i = 0; i < nax; i++) o.dims[ax[i]] = dlp_dim_unknown();
        return dlp_sh_set(c, 0, dt, &o);
    }
    if (nsc == 0) return dlp_sh_bad(c, "neither scales nor sizes");
    if (nsc != nax)
        return dlp_sh_bad(c, "scales has %lld entries for %d axes",
                          (long long)nsc, nax);
    for (int i = 0; i < nax; i++) {
        int64_t d = x->dims[ax[i]].value;
        if (scales[i] == 1.0) continue;
        if (!(scales[i] > 0) || !(scales[i] < 1e9))
            return dlp_sh_bad(c, "scale %g", scales[i]);
        double v = floor((double)d * scales[i] + 1e-9);
        if (d >= 0 && !(v < 1e15)) return dlp_sh_bad(c, "scaled size too big");
        o.dims[ax[i]] = d < 0 ? dlp_dim_unknown() : dlp_dim_of((int64_t)v);
    }
    return dlp_sh_set(c, 0, dt, &o);
}

static dlp_status sh_resize(dlp_sctx *c) {
    if (c->opset < 11) return resize_like(c, 1, -1);
    return resize_like(c, 2, 3);
}

static dlp_status sh_upsample(dlp_sctx *c) { return resize_like(c, 1, -1); }

const dlp_shape_op dlp_shape_ops_tensor[] = {
    {"Shape", sh_shape}, {"Size", sh_size}, {"Reshape", sh_reshape},
    {"Flatten", sh_flatten}, {"Transpose", sh_transpose},
    {"Squeeze", sh_squeeze}, {"Unsqueeze", sh_unsqueeze},
    {"Concat", sh_concat}, {"Split", sh_split}, {"Slice", sh_slice},
    {"Expand", sh_expand}, {"Tile", sh_tile}, {"Pad", sh_pad},
    {"DepthToSpace", sh_depth_space}, {"SpaceToDepth", sh_depth_space},
    {"Resize", sh_resize}, {"Upsample", sh_upsample},
    {NULL, NULL},
};
