/*
 * shape_elementwise.c — shapes and constant folding of elementwise ops:
 * unary maps (output shape = input shape), numpy-broadcasting binary and
 * variadic ops, comparisons (bool), Where, Clip, Cast/CastLike, Dropout.
 *
 * Folding: when every input is constant and the output has at most
 * DLP_MAX_CONST_ELEMS elements, the contents are computed — in int64 when
 * the inputs are integer tensors (shape arithmetic), otherwise in double.
 */
#include "shape.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef enum {
    OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_POW, OP_MOD, OP_FMOD, OP_MAX, OP_MIN,
    OP_AND, OP_OR, OP_XOR, OP_EQ, OP_LT, OP_LE, OP_GT, OP_GE, OP_SHL, OP_SHR,
    OP_BAND, OP_BOR, OP_BXOR, OP_NONE
} binop;

/* ---- folding kernels ---------------------------------------------------- */

static bool bin_i(binop op, int64_t a, int64_t b, int64_t *o) {
    switch (op) {
    case OP_ADD: return dlp_add_i64(a, b, o);
    case OP_SUB: return !__builtin_sub_overflow(a, b, o);
    case OP_MUL: return dlp_mul_i64(a, b, o);
    case OP_DIV:
        if (b == 0 || (a == INT64_MIN && b == -1)) return false;
        *o = a / b; /* truncation, as ONNX runtimes do for integers */
        return true;
    case OP_MOD: /* sign of the divisor (Python) */
        if (b == 0 || (a == INT64_MIN && b == -1)) return false;
        *o = a % b;
        if (*o != 0 && ((*o < 0) != (b < 0))) *o += b;
        return true;
    case OP_FMOD:
        if (b == 0 || (a == INT64_MIN && b == -1)) return false;
        *o = a % b;
        return true;
    case OP_POW: { /* by squaring: O(log b); overflow -> not folded */
        if (b < 0) return false;
        int64_t r = 1, base = a;
        for (int64_t e = b; e > 0; e >>= 1) {
            if ((e & 1) && !dlp_mul_i64(r, base, &r)) return false;
            if (e > 1 && !dlp_mul_i64(base, base, &base)) return false;
        }
        *o = r;
        return true;
    }
    case OP_MAX: *o = a > b ? a : b; return true;
    case OP_MIN: *o = a < b ? a : b; return true;
    case OP_AND: *o = (a != 0) && (b != 0); return true;
    case OP_OR: *o = (a != 0) || (b != 0); return true;
    case OP_XOR: *o = (a != 0) != (b != 0); return true;
    case OP_EQ: *o = a == b; return true;
    case OP_LT: *o = a < b; return true;
    case OP_LE: *o = a <= b; return true;
    case OP_GT: *o = a > b; return true;
    case OP_GE: *o = a >= b; return true;
    case OP_SHL:
        if (b < 0 || b > 63) return false;
        *o = (int64_t)((uint64_t)a << b);
        return true;
    case OP_SHR:
        if (b < 0 || b > 63) return false;
        *o = (int64_t)((uint64_t)a >> b);
        return true;
    case OP_BAND: *o = a & b; return true;
    case OP_BOR: *o = a | b; return true;
    case OP_BXOR: *o = a ^ b; return true;
    case OP_NONE: break;
    }
    return false;
}

static double bin_f(binop op, double a, double b) {
    switch (op) {
    case OP_ADD: return a + b;
    case OP_SUB: return a - b;
    case OP_MUL: return a * b;
    case OP_DIV: return a / b;
    case OP_POW: return pow(a, b);
    case OP_MOD: {
        double r = fmod(a, b);
        if (r != 0 && ((r < 0) != (b < 0))) r += b;
        return r;
    }
    case OP_FMOD: return fmod(a, b);
    case OP_MAX: return a > b ? a : b;
    case OP_MIN: return a < b ? a : b;
    case OP_AND: return (a != 0) && (b != 0);
    case OP_OR: return (a != 0) || (b != 0);
    case OP_XOR: return (a != 0) != (b != 0);
    case OP_EQ: return a == b;
    case OP_LT: return a < b;
    case OP_LE: return a <= b;
    case OP_GT: return a > b;
    case OP_GE: return a >= b;
    default: return NAN;
    }
}

/* Walks the broadcast of up to 3 inputs onto an output, element by
 * element in row-major order: off[j] is the flat index into input j of
 * the current output element. The offsets are carried from one element
 * to the next rather than stored, since a folded constant can hold
 * DLP_MAX_CONST_ELEMS elements and a language model's masks fold at
 * every layer (an offset table per input was most of the featurizer's
 * allocations, eighty-eighth session). */
typedef struct {
    int64_t numel;
    int rank, nin;
    int64_t dim[DLP_MAX_RANK], idx[DLP_MAX_RANK];
    int64_t stride[3][DLP_MAX_RANK], off[3];
} bcast_iter;

static bool bcast_start(const dlp_shape *out, int nin,
                        const dlp_shape *const *ins, bcast_iter *bi) {
    memset(bi, 0, sizeof *bi);
    if (!dlp_shape_numel(out, &bi->numel) || bi->numel > DLP_MAX_CONST_ELEMS)
        return false;
    bi->rank = out->rank;
    bi->nin = nin;
    for (int d = 0; d < out->rank; d++) bi->dim[d] = out->dims[d].value;
    for (int j = 0; j < nin; j++) {
        int64_t s = 1;
        for (int d = ins[j]->rank - 1; d >= 0; d--) {
            int od = d + (out->rank - ins[j]->rank);
            bi->stride[j][od] = ins[j]->dims[d].value == 1 ? 0 : s;
            s *= ins[j]->dims[d].value;
        }
    }
    return true;
}

/* to the next output element */
static void bcast_next(bcast_iter *bi) {
    for (int d = bi->rank - 1; d >= 0; d--) {
        bi->idx[d]++;
        for (int j = 0; j < bi->nin; j++) bi->off[j] += bi->stride[j][d];
        if (bi->idx[d] < bi->dim[d]) return;
        for (int j = 0; j < bi->nin; j++)
            bi->off[j] -= bi->stride[j][d] * bi->idx[d];
        bi->idx[d] = 0;
    }
}

/* Folds a binary op over constant inputs a, b into output 0. */
static dlp_status fold_binary(dlp_sctx *c, binop op, int ia, int ib,
                              const dlp_shape *out, dlp_dtype odt) {
    dlp_value *a = dlp_sh_in(c, ia), *b = dlp_sh_in(c, ib);
    if (!dlp_value_is_const(a) || !dlp_value_is_const(b)) return DLP_OK;
    const dlp_shape *ins[2] = {&a->shape, &b->shape};
    bcast_iter bi;
    if (!bcast_start(out, 2, ins, &bi)) return DLP_OK;
    if (a->ival && b->ival) {
        int64_t *r = dlp_sh_alloc(c, (size_t)(bi.numel ? bi.numel : 1),
                                  sizeof *r);
        if (!r) return dlp_sh_nomem(c);
        for (int64_t k = 0; k < bi.numel; k++, bcast_next(&bi))
            if (!bin_i(op, a->ival[bi.off[0]], b->ival[bi.off[1]], &r[k]))
                return DLP_OK;
        return dlp_sh_set_ints(c, 0, odt, out, r, bi.numel);
    }
    const double *fa, *fb;
    int64_t na, nb;
    if (!dlp_sh_nums_kept(c, 0, odt, bi.numel) ||
        !dlp_sh_nums(c, ia, &fa, &na) || !dlp_sh_nums(c, ib, &fb, &nb))
        return DLP_OK;
    double *r = dlp_sh_alloc(c, (size_t)(bi.numel ? bi.numel : 1), sizeof *r);
    if (!r) return dlp_sh_nomem(c);
    for (int64_t k = 0; k < bi.numel; k++, bcast_next(&bi)) {
        r[k] = bin_f(op, fa[bi.off[0]], fb[bi.off[1]]);
        if (!dlp_dtype_is_float(odt) && !isfinite(r[k])) return DLP_OK;
    }
    return dlp_sh_set_nums(c, 0, odt, out, r, bi.numel);
}

/* ---- unary -------------------------------------------------------------- */

/* Output 0 has input 0's shape and dtype. */
static dlp_status sh_same(dlp_sctx *c) {
    return dlp_sh_set(c, 0, dlp_sh_dtype(c, 0), dlp_sh_shape(c, 0));
}

static dlp_status sh_identity(dlp_sctx *c) { return dlp_sh_copy(c, 0, 0); }

static bool un_f(const char *op, double x, double *o) {
    if (!strcmp(op, "Neg")) *o = -x;
    else if (!strcmp(op, "Abs")) *o = fabs(x);
    else if (!strcmp(op, "Sqrt")) *o = sqrt(x);
    else if (!strcmp(op, "Floor")) *o = floor(x);
    else if (!strcmp(op, "Ceil")) *o = ceil(x);
    else if (!strcmp(op, "Round")) *o = nearbyint(x); /* half to even */
    else if (!strcmp(op, "Sign")) *o = (x > 0) - (x < 0);
    else if (!strcmp(op, "Reciprocal")) *o = 1.0 / x;
    else if (!strcmp(op, "Relu")) *o = x > 0 ? x : 0;
    else if (!strcmp(op, "Exp")) *o = exp(x);
    else if (!strcmp(op, "Log")) *o = log(x);
    else if (!strcmp(op, "Not")) *o = x == 0;
    else if (!strcmp(op, "Sigmoid")) *o = 1.0 / (1.0 + exp(-x));
    else if (!strcmp(op, "Tanh")) *o = tanh(x);
    else if (!strcmp(op, "Erf")) *o = erf(x);
    else if (!strcmp(op, "Sin")) *o = sin(x);
    else if (!strcmp(op, "Cos")) *o = cos(x);
    else return false;
    return true;
}

/* Same shape, folded when constant. */
static dlp_status sh_unary_fold(dlp_sctx *c) {
    dlp_status st = sh_same(c);
    if (st != DLP_OK) return st;
    dlp_value *x = dlp_sh_in(c, 0);
    if (!dlp_value_is_const(x) || !dlp_sh_out(c, 0)) return DLP_OK;
    const char *op = c->n->op_type;
    int64_t n = x->n_const;
    if (x->ival && (!strcmp(op, "Neg") || !strcmp(op, "Abs") ||
                    !strcmp(op, "Not") || !strcmp(op, "Sign") ||
                    !strcmp(op, "Relu") || !strcmp(op, "Floor") ||
                    !strcmp(op, "Ceil") || !strcmp(op, "Round"))) {
        int64_t *r = dlp_sh_alloc(c, (size_t)(n ? n : 1), sizeof *r);
        if (!r) return dlp_sh_nomem(c);
        for (int64_t k = 0; k < n; k++) {
            int64_t v = x->ival[k];
            if (v == INT64_MIN) return DLP_OK;
            if (!strcmp(op, "Neg")) r[k] = -v;
            else if (!strcmp(op, "Abs")) r[k] = v < 0 ? -v : v;
            else if (!strcmp(op, "Not")) r[k] = v == 0;
            else if (!strcmp(op, "Sign")) r[k] = (v > 0) - (v < 0);
            else if (!strcmp(op, "Relu")) r[k] = v > 0 ? v : 0;
            else r[k] = v;
        }
        return dlp_sh_set_ints(c, 0, x->dtype, &x->shape, r, n);
    }
    const double *f;
    if (!dlp_sh_nums(c, 0, &f, &n)) return DLP_OK;
    double *r = dlp_sh_alloc(c, (size_t)(n ? n : 1), sizeof *r);
    if (!r) return dlp_sh_nomem(c);
    for (int64_t k = 0; k < n; k++)
        if (!un_f(op, f[k], &r[k])) return DLP_OK;
    return dlp_sh_set_nums(c, 0, x->dtype, &x->shape, r, n);
}

static dlp_status sh_isnan(dlp_sctx *c) {
    return dlp_sh_set(c, 0, DLP_DT_BOOL, dlp_sh_shape(c, 0));
}

/* Converts constant contents of input 0 to dtype t into output 0. */
static dlp_status cast_to(dlp_sctx *c, dlp_dtype t) {
    dlp_value *x = dlp_sh_in(c, 0);
    dlp_status st = dlp_sh_set(c, 0, t, dlp_sh_shape(c, 0));
    if (st != DLP_OK || !dlp_value_is_const(x)) return st;
    int64_t n = x->n_const;
    if (dlp_dtype_is_float(t)) {
        const double *f;
        if (!dlp_sh_nums(c, 0, &f, &n)) return DLP_OK;
        return dlp_sh_set_nums(c, 0, t, &x->shape, f, n);
    }
    if (t == DLP_DT_STRING || t == DLP_DT_UNDEFINED) return DLP_OK;
    int64_t *r = dlp_sh_alloc(c, (size_t)(n ? n : 1), sizeof *r);
    if (!r) return dlp_sh_nomem(c);
    for (int64_t k = 0; k < n; k++) {
        if (x->ival) {
            r[k] = x->ival[k];
        } else {
            double v = x->fval[k];
            if (!(v > -9.2e18 && v < 9.2e18)) return DLP_OK;
            r[k] = (int64_t)v; /* truncation toward zero */
        }
        if (t == DLP_DT_BOOL) r[k] = x->ival ? x->ival[k] != 0
                                             : x->fval[k] != 0;
        else if (t == DLP_DT_INT32) r[k] = (int32_t)r[k];
        else if (t == DLP_DT_UINT8) r[k] = (uint8_t)r[k];
        else if (t == DLP_DT_INT8) r[k] = (int8_t)r[k];
        else if (t == DLP_DT_INT16) r[k] = (int16_t)r[k];
        else if (t == DLP_DT_UINT16) r[k] = (uint16_t)r[k];
        else if (t == DLP_DT_UINT32) r[k] = (uint32_t)r[k];
    }
    return dlp_sh_set_ints(c, 0, t, &x->shape, r, n);
}

static dlp_status sh_cast(dlp_sctx *c) {
    return cast_to(c, (dlp_dtype)dlp_node_attr_int(c->n, "to", 0));
}

static dlp_status sh_castlike(dlp_sctx *c) {
    return cast_to(c, dlp_sh_dtype(c, 1));
}

/* Clip: bounds from attributes (opset < 11) or optional inputs. */
static dlp_status sh_clip(dlp_sctx *c) {
    dlp_value *x = dlp_sh_in(c, 0);
    dlp_status st = sh_same(c);
    if (st != DLP_OK || !dlp_value_is_const(x)) return st;
    double lo = -INFINITY, hi = INFINITY;
    if (c->opset < 11) {
        lo = dlp_node_attr_float(c->n, "min", lo);
        hi = dlp_node_attr_float(c->n, "max", hi);
    } else {
        if (dlp_sh_in(c, 1) && !dlp_sh_scalar_num(c, 1, &lo)) return DLP_OK;
        if (dlp_sh_in(c, 2) && !dlp_sh_scalar_num(c, 2, &hi)) return DLP_OK;
    }
    const double *f;
    int64_t n;
    if (!dlp_sh_nums(c, 0, &f, &n)) return DLP_OK;
    double *r = dlp_sh_alloc(c, (size_t)(n ? n : 1), sizeof *r);
    if (!r) return dlp_sh_nomem(c);
    for (int64_t k = 0; k < n; k++)
        r[k] = f[k] < lo ? lo : f[k] > hi ? hi : f[k];
    return dlp_sh_set_nums(c, 0, x->dtype, &x->shape, r, n);
}

/* Dropout: output, optional bool mask of the same shape. */
static dlp_status sh_dropout(dlp_sctx *c) {
    dlp_status st = dlp_sh_copy(c, 0, 0);
    if (st != DLP_OK) return st;
    return dlp_sh_set(c, 1, c->opset >= 10 ? DLP_DT_BOOL : dlp_sh_dtype(c, 0),
                      dlp_sh_shape(c, 0));
}

/* ---- binary and variadic ------------------------------------------------ */

static binop binop_of(const dlp_node *n) {
    static const struct { const char *op; binop b; } map[] = {
        {"Add", OP_ADD}, {"Sub", OP_SUB}, {"Mul", OP_MUL}, {"Div", OP_DIV},
        {"Pow", OP_POW}, {"Max", OP_MAX}, {"Min", OP_MIN}, {"Sum", OP_ADD},
        {"And", OP_AND}, {"Or", OP_OR}, {"Xor", OP_XOR}, {"Equal", OP_EQ},
        {"Less", OP_LT}, {"LessOrEqual", OP_LE}, {"Greater", OP_GT},
        {"GreaterOrEqual", OP_GE}, {"BitwiseAnd", OP_BAND},
        {"BitwiseOr", OP_BOR}, {"BitwiseXor", OP_BXOR},
    };
    for (size_t i = 0; i < sizeof map / sizeof *map; i++)
        if (!strcmp(n->op_type, map[i].op)) return map[i].b;
    if (!strcmp(n->op_type, "Mod"))
        return dlp_node_attr_int(n, "fmod", 0) ? OP_FMOD : OP_MOD;
    if (!strcmp(n->op_type, "BitShift")) {
        const char *d = dlp_node_attr_str(n, "direction", "LEFT");
        return !strcmp(d, "RIGHT") ? OP_SHR : OP_SHL;
    }
    return OP_NONE;
}

static bool is_compare(binop op) {
    return op == OP_EQ || op == OP_LT || op == OP_LE || op == OP_GT ||
           op == OP_GE || op == OP_AND || op == OP_OR || op == OP_XOR;
}

/* Broadcasts inputs [0, nin) into *out; warns on incompatibility. */
static int broadcast_inputs(dlp_sctx *c, int nin, dlp_shape *out) {
    const dlp_shape *s0 = NULL;
    dlp_shape acc;
    for (int i = 0; i < nin; i++) {
        if (!dlp_sh_in(c, i)) continue;
        const dlp_shape *s = dlp_sh_shape(c, i);
        if (!s) return 1;
        if (!s0) {
            acc = *s;
            s0 = s;
            continue;
        }
        dlp_shape r;
        int rc = dlp_shape_broadcast(&acc, s, &r);
        if (rc < 0) {
            char a[128] = "", b[128] = "";
            size_t la = 0, lb = 0;
            for (int d = 0; d < acc.rank; d++)
                la += (size_t)snprintf(a + la, la < sizeof a ? sizeof a - la : 0,
                                       "%s%lld", d ? "," : "",
                                       (long long)acc.dims[d].value);
            for (int d = 0; d < s->rank; d++)
                lb += (size_t)snprintf(b + lb, lb < sizeof b ? sizeof b - lb : 0,
                                       "%s%lld", d ? "," : "",
                                       (long long)s->dims[d].value);
            dlp_sh_bad(c, "cannot broadcast [%s] with [%s]", a, b);
            return -1;
        }
        acc = r;
    }
    if (!s0) return 1;
    *out = acc;
    return 0;
}

static dlp_status sh_binary(dlp_sctx *c) {
    binop op = binop_of(c->n);
    dlp_dtype dt = is_compare(op) ? DLP_DT_BOOL : dlp_sh_dtype(c, 0);
    if (!strcmp(c->n->op_type, "And") || !strcmp(c->n->op_type, "Or") ||
        !strcmp(c->n->op_type, "Xor"))
        dt = DLP_DT_BOOL;
    dlp_shape out;
    int rc = broadcast_inputs(c, 2, &out);
    if (rc < 0) return DLP_OK;
    if (rc > 0) {
        dlp_sh_set_dtype(c, 0, dt);
        return DLP_OK;
    }
    dlp_status st = dlp_sh_set(c, 0, dt, &out);
    if (st != DLP_OK || op == OP_NONE) return st;
    return fold_binary(c, op, 0, 1, &out, dt);
}

/* Max/Min/Sum/Mean over any number of inputs. */
static dlp_status sh_variadic(dlp_sctx *c) {
    dlp_shape out;
    dlp_dtype dt = dlp_sh_dtype(c, 0);
    int rc = broadcast_inputs(c, c->n->n_inputs, &out);
    if (rc < 0) return DLP_OK;
    if (rc > 0) {
        dlp_sh_set_dtype(c, 0, dt);
        return DLP_OK;
    }
    dlp_status st = dlp_sh_set(c, 0, dt, &out);
    if (st != DLP_OK || c->n->n_inputs != 2) {
        if (st == DLP_OK && c->n->n_inputs == 1) return dlp_sh_copy(c, 0, 0);
        return st;
    }
    if (!strcmp(c->n->op_type, "Mean")) return DLP_OK;
    return fold_binary(c, binop_of(c->n), 0, 1, &out, dt);
}

static dlp_status sh_where(dlp_sctx *c) {
    dlp_dtype dt = dlp_sh_dtype(c, 1);
    if (dt == DLP_DT_UNDEFINED) dt = dlp_sh_dtype(c, 2);
    dlp_shape out;
    int rc = broadcast_inputs(c, 3, &out);
    if (rc < 0) return DLP_OK;
    if (rc > 0) {
        dlp_sh_set_dtype(c, 0, dt);
        return DLP_OK;
    }
    dlp_status st = dlp_sh_set(c, 0, dt, &out);
    if (st != DLP_OK) return st;
    dlp_value *v[3];
    for (int i = 0; i < 3; i++) {
        v[i] = dlp_sh_in(c, i);
        if (!dlp_value_is_const(v[i])) return DLP_OK;
    }
    const dlp_shape *ins[3] = {&v[0]->shape, &v[1]->shape, &v[2]->shape};
    bcast_iter bi;
    if (!bcast_start(&out, 3, ins, &bi)) return DLP_OK;
    const double *cf;
    int64_t nc;
    if (!(v[1]->ival && v[2]->ival) && !dlp_sh_nums_kept(c, 0, dt, bi.numel))
        return DLP_OK;
    if (!dlp_sh_nums(c, 0, &cf, &nc)) return DLP_OK;
    if (v[1]->ival && v[2]->ival) {
        int64_t *r = dlp_sh_alloc(c, (size_t)(bi.numel ? bi.numel : 1),
                                  sizeof *r);
        if (!r) return dlp_sh_nomem(c);
        for (int64_t k = 0; k < bi.numel; k++, bcast_next(&bi))
            r[k] = cf[bi.off[0]] != 0 ? v[1]->ival[bi.off[1]]
                                      : v[2]->ival[bi.off[2]];
        return dlp_sh_set_ints(c, 0, dt, &out, r, bi.numel);
    }
    const double *fa, *fb;
    int64_t na, nb;
    if (!dlp_sh_nums(c, 1, &fa, &na) || !dlp_sh_nums(c, 2, &fb, &nb))
        return DLP_OK;
    double *r = dlp_sh_alloc(c, (size_t)(bi.numel ? bi.numel : 1), sizeof *r);
    if (!r) return dlp_sh_nomem(c);
    for (int64_t k = 0; k < bi.numel; k++, bcast_next(&bi))
        r[k] = cf[bi.off[0]] != 0 ? fa[bi.off[1]] : fb[bi.off[2]];
    return dlp_sh_set_nums(c, 0, dt, &out, r, bi.numel);
}

/* PRelu: X broadcast with slope. */
static dlp_status sh_prelu(dlp_sctx *c) {
    dlp_shape out;
    int rc = broadcast_inputs(c, 2, &out);
    if (rc < 0) return DLP_OK;
    if (rc > 0) return sh_same(c);
    return dlp_sh_set(c, 0, dlp_sh_dtype(c, 0), &out);
}

/* Random*Like / Bernoulli: input's shape, dtype from the attribute. */
static dlp_status sh_random_like(dlp_sctx *c) {
    dlp_dtype dt = (dlp_dtype)dlp_node_attr_int(c->n, "dtype",
                                                dlp_sh_dtype(c, 0));
    return dlp_sh_set(c, 0, dt, dlp_sh_shape(c, 0));
}

const dlp_shape_op dlp_shape_ops_elementwise[] = {
    /* unary maps, folded when constant */
    {"Neg", sh_unary_fold}, {"Abs", sh_unary_fold}, {"Sqrt", sh_unary_fold},
    {"Floor", sh_unary_fold}, {"Ceil", sh_unary_fold},
    {"Round", sh_unary_fold}, {"Sign", sh_unary_fold},
    {"Reciprocal", sh_unary_fold}, {"Relu", sh_unary_fold},
    {"Exp", sh_unary_fold}, {"Log", sh_unary_fold}, {"Not", sh_unary_fold},
    {"Sigmoid", sh_unary_fold}, {"Tanh", sh_unary_fold},
    {"Erf", sh_unary_fold}, {"Sin", sh_unary_fold}, {"Cos", sh_unary_fold},
    /* unary maps */
    {"LeakyRelu", sh_same}, {"Elu", sh_same}, {"Selu", sh_same},
    {"Celu", sh_same}, {"Gelu", sh_same}, {"HardSigmoid", sh_same},
    {"HardSwish", sh_same}, {"Softplus", sh_same}, {"Softsign", sh_same},
    {"Mish", sh_same}, {"Tan", sh_same}, {"Asin", sh_same},
    {"Acos", sh_same}, {"Atan", sh_same}, {"Sinh", sh_same},
    {"Cosh", sh_same}, {"Asinh", sh_same}, {"Acosh", sh_same},
    {"Atanh", sh_same}, {"ThresholdedRelu", sh_same}, {"Shrink", sh_same},
    {"BitwiseNot", sh_same}, {"Softmax", sh_same}, {"LogSoftmax", sh_same},
    {"Hardmax", sh_same}, {"LRN", sh_same},
    {"MeanVarianceNormalization", sh_same}, {"LpNormalization", sh_same},
    {"InstanceNormalization", sh_same}, {"GroupNormalization", sh_same},
    {"ReverseSequence", sh_same},
    {"Identity", sh_identity}, {"IsNaN", sh_isnan}, {"IsInf", sh_isnan},
    {"Cast", sh_cast}, {"CastLike", sh_castlike}, {"Clip", sh_clip},
    {"Dropout", sh_dropout}, {"PRelu", sh_prelu},
    {"Bernoulli", sh_random_like}, {"RandomNormalLike", sh_random_like},
    {"RandomUniformLike", sh_random_like},
    /* binary, numpy broadcasting */
    {"Add", sh_binary}, {"Sub", sh_binary}, {"Mul", sh_binary},
    {"Div", sh_binary}, {"Pow", sh_binary}, {"Mod", sh_binary},
    {"BitShift", sh_binary}, {"And", sh_binary}, {"Or", sh_binary},
    {"Xor", sh_binary}, {"Equal", sh_binary}, {"Less", sh_binary},
    {"LessOrEqual", sh_binary}, {"Greater", sh_binary},
    {"GreaterOrEqual", sh_binary}, {"BitwiseAnd", sh_binary},
    {"BitwiseOr", sh_binary}, {"BitwiseXor", sh_binary},
    {"Max", sh_variadic}, {"Min", sh_variadic}, {"Sum", sh_variadic},
    {"Mean", sh_variadic}, {"Where", sh_where},
    {NULL, NULL},
};
