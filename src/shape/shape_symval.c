/*
 * shape_symval.c — symbolic contents of small integer tensors ("shape
 * values"), so that unbound symbolic dims survive shape arithmetic:
 * Shape(x[batch, seq, 64]) holds (batch, seq, 64) even though batch and seq
 * have no value, Gather/Concat/Unsqueeze/Slice/... carry the entries along,
 * and Reshape/Expand/ConstantOfShape/Range read them back as dims that keep
 * their symbol. Once every symbol is bound the same tensors are plain
 * constants (ival) and none of this is used.
 *
 * The entries live in a side table of the current inference run (one
 * dlp_symvec per value of rank <= 1 with at most DLP_MAX_RANK elements);
 * they are never stored in the graph. An entry is known (a number), a
 * symbol, or unknown.
 */
#include "shape.h"

#include <string.h>

/* Reads input i as a symbolic vector: from constant contents or the table. */
bool dlp_sh_symvec(dlp_sctx *c, int i, dlp_symvec *out) {
    dlp_value *v = dlp_sh_in(c, i);
    if (!v || v->shape.rank > 1) return false;
    if (v->ival && dlp_value_is_const(v) && v->n_const <= DLP_MAX_RANK) {
        out->n = (int)v->n_const;
        out->rank = v->shape.rank;
        for (int k = 0; k < out->n; k++) {
            out->e[k].value = v->ival[k];
            out->e[k].sym = -1;
            out->known[k] = true;
        }
        return true;
    }
    const dlp_symvec *t = dlp_shape_symvec_get(c, c->n->inputs[i]);
    if (!t) return false;
    *out = *t;
    return true;
}

/* Stores a symbolic vector for output oi; all-known vectors become plain
 * constant contents. */
static dlp_status put(dlp_sctx *c, int oi, dlp_symvec *sv) {
    dlp_value *o = dlp_sh_out(c, oi);
    if (!o || sv->n < 0 || sv->n > DLP_MAX_RANK) return DLP_OK;
    bool all = true, any = false;
    for (int k = 0; k < sv->n; k++) {
        if (!sv->known[k]) all = false;
        if (sv->known[k] || sv->e[k].sym >= 0) any = true;
    }
    dlp_shape s = dlp_shape_of_rank(sv->rank);
    if (sv->rank == 1) s.dims[0] = dlp_dim_of(sv->n);
    dlp_dtype dt = o->dtype != DLP_DT_UNDEFINED ? o->dtype : DLP_DT_INT64;
    if (all) {
        int64_t v[DLP_MAX_RANK];
        for (int k = 0; k < sv->n; k++) v[k] = sv->e[k].value;
        return dlp_sh_set_ints(c, oi, dt, &s, v, sv->n);
    }
    if (o->shape.rank < 0) dlp_sh_set(c, oi, dt, &s);
    if (!any) return DLP_OK;
    return dlp_shape_symvec_put(c, c->n->outputs[oi], sv);
}

static dlp_symvec sv_empty(int rank, int n) {
    dlp_symvec s;
    memset(&s, 0, sizeof s);
    s.rank = rank;
    s.n = n;
    for (int k = 0; k < DLP_MAX_RANK; k++) s.e[k] = dlp_dim_unknown();
    return s;
}

static dlp_status sym_shape(dlp_sctx *c) {
    const dlp_shape *x = dlp_sh_shape(c, 0);
    if (!x) return DLP_OK;
    int64_t r = x->rank;
    int64_t s = dlp_node_attr_int(c->n, "start", 0);
    int64_t e = dlp_node_attr_int(c->n, "end", r);
    if (s < 0) s += r;
    if (e < 0) e += r;
    s = s < 0 ? 0 : s > r ? r : s;
    e = e < 0 ? 0 : e > r ? r : e;
    dlp_symvec sv = sv_empty(1, e > s ? (int)(e - s) : 0);
    for (int k = 0; k < sv.n; k++) {
        sv.e[k] = x->dims[s + k];
        sv.known[k] = sv.e[k].value >= 0;
    }
    return put(c, 0, &sv);
}

static dlp_status sym_gather(dlp_sctx *c) {
    dlp_symvec d;
    const int64_t *iv;
    int64_t ni;
    int64_t axis = dlp_node_attr_int(c->n, "axis", 0);
    if (!dlp_sh_symvec(c, 0, &d) || d.rank != 1 || (axis != 0 && axis != -1) ||
        !dlp_sh_ints(c, 1, &iv, &ni) || ni > DLP_MAX_RANK)
        return DLP_OK;
    const dlp_shape *is = dlp_sh_shape(c, 1);
    dlp_symvec o = sv_empty(is ? is->rank : 1, (int)ni);
    if (o.rank > 1) return DLP_OK;
    for (int k = 0; k < ni; k++) {
        int64_t j = iv[k] < 0 ? iv[k] + d.n : iv[k];
        if (j < 0 || j >= d.n) return DLP_OK;
        o.e[k] = d.e[j];
        o.known[k] = d.known[j];
    }
    return put(c, 0, &o);
}

/* Unsqueeze / Squeeze / Reshape / Identity / Cast / Flatten: same entries,
 * rank taken from the output. */
static dlp_status sym_same(dlp_sctx *c) {
    dlp_symvec d;
    dlp_value *o = dlp_sh_out(c, 0);
    if (!o || !dlp_sh_symvec(c, 0, &d)) return DLP_OK;
    if (o->shape.rank > 1 || (o->shape.rank == 0 && d.n != 1)) return DLP_OK;
    if (o->shape.rank == 1 && o->shape.dims[0].value != d.n) return DLP_OK;
    if (o->shape.rank >= 0) d.rank = o->shape.rank;
    return put(c, 0, &d);
}

static dlp_status sym_concat(dlp_sctx *c) {
    dlp_symvec o = sv_empty(1, 0);
    for (int i = 0; i < c->n->n_inputs; i++) {
        dlp_symvec d;
        if (!dlp_sh_in(c, i)) continue;
        if (!dlp_sh_symvec(c, i, &d) || d.rank != 1 ||
            o.n + d.n > DLP_MAX_RANK)
            return DLP_OK;
        for (int k = 0; k < d.n; k++) {
            o.e[o.n] = d.e[k];
            o.known[o.n++] = d.known[k];
        }
    }
    return put(c, 0, &o);
}

static dlp_status sym_slice(dlp_sctx *c) {
    dlp_symvec d;
    const int64_t *st, *en, *steps = NULL;
    int64_t ns, ne, nst;
    if (c->opset < 10 || !dlp_sh_symvec(c, 0, &d) || d.rank != 1 ||
        !dlp_sh_ints(c, 1, &st, &ns) || !dlp_sh_ints(c, 2, &en, &ne) ||
        ns != 1 || ne != 1)
        return DLP_OK;
    if (dlp_sh_in(c, 4) && (!dlp_sh_ints(c, 4, &steps, &nst) || nst != 1))
        return DLP_OK;
    int64_t step = steps ? steps[0] : 1, n = d.n;
    int64_t s = st[0] < 0 ? st[0] + n : st[0], e = en[0] < 0 ? en[0] + n : en[0];
    dlp_symvec o = sv_empty(1, 0);
    if (step > 0) {
        s = s < 0 ? 0 : s > n ? n : s;
        e = e < 0 ? 0 : e > n ? n : e;
        for (int64_t k = s; k < e; k += step) {
            o.e[o.n] = d.e[k];
            o.known[o.n++] = d.known[k];
        }
    } else if (step < 0) {
        s = s < 0 ? -1 : s > n - 1 ? n - 1 : s;
        e = e < -1 ? -1 : e > n - 1 ? n - 1 : e;
        for (int64_t k = s; k > e; k += step) {
            o.e[o.n] = d.e[k];
            o.known[o.n++] = d.known[k];
        }
    }
    return put(c, 0, &o);
}

/* Elementwise int arithmetic / comparisons where one side decides: x*1,
 * x+0, x-0, x/1, max/min with a known bigger/smaller... kept to identities
 * and, for Equal, symbol == negative constant (always false: dims are
 * >= 0), which resolves the Where(Equal(shape, -1), 1, shape) pattern. */
static dlp_status sym_binary(dlp_sctx *c) {
    dlp_symvec a, b;
    if (!dlp_sh_symvec(c, 0, &a) || !dlp_sh_symvec(c, 1, &b)) return DLP_OK;
    int n = a.n > b.n ? a.n : b.n;
    if ((a.n != n && a.n != 1) || (b.n != n && b.n != 1)) return DLP_OK;
    const char *op = c->n->op_type;
    dlp_symvec o = sv_empty(a.rank > b.rank ? a.rank : b.rank, n);
    for (int k = 0; k < n; k++) {
        dlp_dim x = a.e[a.n == 1 ? 0 : k], y = b.e[b.n == 1 ? 0 : k];
        bool kx = a.known[a.n == 1 ? 0 : k], ky = b.known[b.n == 1 ? 0 : k];
        if (kx && ky) {
            int64_t v = 0;
            if (!strcmp(op, "Mul")) { if (!dlp_mul_i64(x.value, y.value, &v)) return DLP_OK; }
            else if (!strcmp(op, "Add")) { if (!dlp_add_i64(x.value, y.value, &v)) return DLP_OK; }
            else if (!strcmp(op, "Sub")) {
                if (__builtin_sub_overflow(x.value, y.value, &v)) return DLP_OK;
            } else if (!strcmp(op, "Div")) {
                if (!y.value || (x.value == INT64_MIN && y.value == -1))
                    return DLP_OK;
                v = x.value / y.value;
            }
            else if (!strcmp(op, "Equal")) v = x.value == y.value;
            else return DLP_OK;
            o.e[k] = dlp_dim_of(v);
            o.known[k] = true;
            continue;
        }
        if (!strcmp(op, "Equal")) {
            if ((kx && x.value < 0) || (ky && y.value < 0)) {
                o.e[k] = dlp_dim_of(0);
                o.known[k] = true;
            } else if (!kx && !ky && x.sym >= 0 && x.sym == y.sym) {
                o.e[k] = dlp_dim_of(1);
                o.known[k] = true;
            }
            continue;
        }
        if ((!strcmp(op, "Mul") && ky && y.value == 1) ||
            (!strcmp(op, "Div") && ky && y.value == 1) ||
            ((!strcmp(op, "Add") || !strcmp(op, "Sub")) && ky && y.value == 0))
            o.e[k] = x;
        else if ((!strcmp(op, "Mul") && kx && x.value == 1) ||
                 (!strcmp(op, "Add") && kx && x.value == 0))
            o.e[k] = y;
    }
    return put(c, 0, &o);
}

static dlp_status sym_where(dlp_sctx *c) {
    dlp_symvec cd, a, b;
    if (!dlp_sh_symvec(c, 0, &cd) || !dlp_sh_symvec(c, 1, &a) ||
        !dlp_sh_symvec(c, 2, &b))
        return DLP_OK;
    int n = cd.n > a.n ? cd.n : a.n;
    if (b.n > n) n = b.n;
    if ((cd.n != n && cd.n != 1) || (a.n != n && a.n != 1) ||
        (b.n != n && b.n != 1))
        return DLP_OK;
    dlp_symvec o = sv_empty(1, n);
    for (int k = 0; k < n; k++) {
        int kc = cd.n == 1 ? 0 : k;
        if (!cd.known[kc]) continue;
        const dlp_symvec *p = cd.e[kc].value ? &a : &b;
        int kp = p->n == 1 ? 0 : k;
        o.e[k] = p->e[kp];
        o.known[k] = p->known[kp];
    }
    return put(c, 0, &o);
}

dlp_status dlp_shape_symprop(dlp_sctx *c) {
    dlp_value *o = dlp_sh_out(c, 0);
    if (!o || o->ival || o->fval) return DLP_OK;
    if (o->dtype != DLP_DT_INT64 && o->dtype != DLP_DT_INT32 &&
        o->dtype != DLP_DT_BOOL && o->dtype != DLP_DT_UNDEFINED)
        return DLP_OK;
    if (o->shape.rank > 1) return DLP_OK;
    const char *op = c->n->op_type;
    if (!strcmp(op, "Shape")) return sym_shape(c);
    if (!strcmp(op, "Gather")) return sym_gather(c);
    if (!strcmp(op, "Unsqueeze") || !strcmp(op, "Squeeze") ||
        !strcmp(op, "Reshape") || !strcmp(op, "Identity") ||
        !strcmp(op, "Cast") || !strcmp(op, "Flatten"))
        return sym_same(c);
    if (!strcmp(op, "Concat")) return sym_concat(c);
    if (!strcmp(op, "Slice")) return sym_slice(c);
    if (!strcmp(op, "Mul") || !strcmp(op, "Add") || !strcmp(op, "Sub") ||
        !strcmp(op, "Div") || !strcmp(op, "Equal"))
        return sym_binary(c);
    if (!strcmp(op, "Where")) return sym_where(c);
    return DLP_OK;
}

bool dlp_sh_symdims(dlp_sctx *c, int i, int64_t *spec, dlp_dim *dims,
                    int *n) {
    dlp_symvec sv;
    if (!dlp_sh_symvec(c, i, &sv) || sv.rank != 1) return false;
    *n = sv.n;
    for (int k = 0; k < sv.n; k++) {
        spec[k] = sv.known[k] ? sv.e[k].value : DLP_SPEC_SYM;
        dims[k] = sv.known[k] ? dlp_dim_unknown() : sv.e[k];
        dims[k].value = -1;
    }
    return true;
}
