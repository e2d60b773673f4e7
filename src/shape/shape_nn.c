/*
 * shape_nn.c — shapes of the neural-network ops: Conv, ConvTranspose,
 * pooling, normalisation layers, Gemm, MatMul, Einsum, the quantized
 * variants, RoiAlign, GridSample, NonMaxSuppression.
 *
 * Windowed output size (Conv, pooling), per spatial dim with input `in`,
 * kernel k, dilation d, stride s, pads pb/pe, effective kernel
 * ek = (k-1)*d + 1:
 *   NOTSET: floor((in + pb + pe - ek) / s) + 1   (ceil with ceil_mode, then
 *           one less when the last window would start inside the end pad,
 *           as PyTorch and onnxruntime do)
 *   SAME_UPPER / SAME_LOWER: ceil(in / s)
 *   VALID: floor((in - ek) / s) + 1
 * ConvTranspose: s*(in-1) + output_padding + ek - pb - pe, or in*s for SAME,
 * or the output_shape attribute.
 */
#include "shape.h"

#include <string.h>

/* Reads an INTS attribute of exactly `n` entries into out (default def). */
static bool attr_ints_n(const dlp_node *node, const char *name, int n,
                        int64_t def, int64_t *out) {
    for (int i = 0; i < n; i++) out[i] = def;
    const dlp_attr *a = dlp_node_attr(node, name);
    if (!a || a->type != DLP_ATTR_INTS) return true;
    if (a->n != n) return false;
    for (int i = 0; i < n; i++) out[i] = a->ints[i];
    return true;
}

static int64_t div_floor(int64_t a, int64_t b) {
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
    return q;
}
static int64_t div_ceil(int64_t a, int64_t b) { return -div_floor(-a, b); }

/* Spatial output dims of a windowed op over input shape x (rank >= 3),
 * kernel k[nsp]. `transpose` selects the ConvTranspose rule. False after a
 * warning (dlp_sh_bad) on inconsistent attributes. */
static bool window_dims(dlp_sctx *c, const dlp_shape *x,
                              const int64_t *k, bool transpose,
                              bool ceil_mode, dlp_shape *out) {
    int nsp = x->rank - 2;
    int64_t strides[DLP_MAX_RANK], dil[DLP_MAX_RANK], pads[2 * DLP_MAX_RANK];
    int64_t outpad[DLP_MAX_RANK], oshape[DLP_MAX_RANK];
    if (!attr_ints_n(c->n, "strides", nsp, 1, strides) ||
        !attr_ints_n(c->n, "dilations", nsp, 1, dil) ||
        !attr_ints_n(c->n, "pads", 2 * nsp, 0, pads) ||
        !attr_ints_n(c->n, "output_padding", nsp, 0, outpad))
        return (dlp_sh_bad(c, "strides/dilations/pads do not match %d spatial "
                          "dims", nsp), false);
    for (int i = 0; i < nsp; i++)
        if (strides[i] <= 0 || dil[i] <= 0 || k[i] <= 0)
            return (dlp_sh_bad(c, "non-positive kernel, stride or dilation"), false);
    const char *ap = dlp_node_attr_str(c->n, "auto_pad", "NOTSET");
    bool same = !strcmp(ap, "SAME_UPPER") || !strcmp(ap, "SAME_LOWER");
    bool valid = !strcmp(ap, "VALID");
    if (transpose) {
        const dlp_attr *os = dlp_node_attr(c->n, "output_shape");
        if (os && os->type == DLP_ATTR_INTS && os->n >= nsp) {
            for (int i = 0; i < nsp; i++) oshape[i] = os->ints[os->n - nsp + i];
            for (int i = 0; i < nsp; i++)
                out->dims[2 + i] = dlp_dim_of(oshape[i]);
            return true;
        }
    }
    for (int i = 0; i < nsp; i++) {
        int64_t in = x->dims[2 + i].value;
        if (in < 0) {
            out->dims[2 + i] = dlp_dim_unknown();
            continue;
        }
        bool ov = false;
        int64_t ek = dlp_ck_add(&ov, dlp_ck_mul(&ov, k[i] - 1, dil[i]), 1);
        int64_t pb = pads[i], pe = pads[nsp + i], o;
        if (valid) pb = pe = 0;
        int64_t padded = dlp_ck_add(&ov, dlp_ck_add(&ov, in, pb), pe);
        if (transpose) {
            if (same) {
                o = dlp_ck_mul(&ov, in, strides[i]);
            } else {
                o = dlp_ck_mul(&ov, strides[i], in - 1);
                o = dlp_ck_add(&ov, o, dlp_ck_add(&ov, outpad[i], ek));
                o = dlp_ck_sub(&ov, o, dlp_ck_add(&ov, pb, pe));
            }
        } else if (same) {
            o = div_ceil(in, strides[i]);
        } else {
            int64_t span = dlp_ck_sub(&ov, padded, ek);
            if (ov) return (dlp_sh_bad(c, "attributes overflow int64"), false);
            if (span < 0)
                return (dlp_sh_bad(c, "kernel %lld larger than padded input "
                                   "%lld", (long long)ek, (long long)padded),
                        false);
            if (ceil_mode) {
                o = span / strides[i] + (span % strides[i] != 0) + 1;
                /* the last window must start inside the input or left pad */
                if (dlp_ck_mul(&ov, o - 1, strides[i]) >=
                    dlp_ck_add(&ov, in, pb))
                    o--;
            } else {
                o = span / strides[i] + 1;
            }
        }
        if (ov) return (dlp_sh_bad(c, "attributes overflow int64"), false);
        if (o < 0) return (dlp_sh_bad(c, "negative output size"), false);
        out->dims[2 + i] = dlp_dim_of(o);
    }
    return true;
}

/* Conv-like: data input xi, weight input wi, output dtype dt. */
static dlp_status conv_like(dlp_sctx *c, int xi, int wi, dlp_dtype dt,
                            bool transpose) {
    if (dt == DLP_DT_UNDEFINED) dt = dlp_sh_dtype(c, xi);
    dlp_sh_set_dtype(c, 0, dt);
    const dlp_shape *x = dlp_sh_shape(c, xi), *w = dlp_sh_shape(c, wi);
    if (!x) return DLP_OK;
    if (x->rank < 3) return dlp_sh_bad(c, "input rank %d < 3", x->rank);
    int nsp = x->rank - 2;
    int64_t k[DLP_MAX_RANK];
    const dlp_attr *ks = dlp_node_attr(c->n, "kernel_shape");
    if (ks && ks->type == DLP_ATTR_INTS) {
        if (ks->n != nsp)
            return dlp_sh_bad(c, "kernel_shape has %d dims, input has %d "
                              "spatial dims", ks->n, nsp);
        for (int i = 0; i < nsp; i++) k[i] = ks->ints[i];
    } else {
        if (!w) return DLP_OK;
        if (w->rank != x->rank)
            return dlp_sh_bad(c, "weight rank %d != input rank %d", w->rank,
                              x->rank);
        for (int i = 0; i < nsp; i++) {
            k[i] = w->dims[2 + i].value;
            if (k[i] < 0) {
                dlp_shape o = dlp_shape_of_rank(x->rank);
                o.dims[0] = x->dims[0];
                return dlp_sh_set(c, 0, dt, &o);
            }
        }
    }
    int64_t group = dlp_node_attr_int(c->n, "group", 1);
    if (group <= 0) return dlp_sh_bad(c, "group %lld", (long long)group);
    dlp_shape o = dlp_shape_of_rank(x->rank);
    o.dims[0] = x->dims[0];
    if (w && w->rank >= 2) {
        if (transpose) {
            if (!dlp_dim_mul(w->dims[1], dlp_dim_of(group), &o.dims[1]))
                return dlp_sh_bad(c, "channel overflow");
        } else {
            o.dims[1] = w->dims[0];
            int64_t cin = x->dims[1].value, wc = w->dims[1].value;
            if (cin >= 0 && wc >= 0 && cin != wc * group)
                return dlp_sh_bad(c, "input has %lld channels, weight expects "
                                  "%lld x group %lld", (long long)cin,
                                  (long long)wc, (long long)group);
        }
    }
    if (!window_dims(c, x, k, transpose, false, &o)) return DLP_OK;
    return dlp_sh_set(c, 0, dt, &o);
}

static dlp_status sh_conv(dlp_sctx *c) {
    return conv_like(c, 0, 1, DLP_DT_UNDEFINED, false);
}
static dlp_status sh_conv_transpose(dlp_sctx *c) {
    return conv_like(c, 0, 1, DLP_DT_UNDEFINED, true);
}
static dlp_status sh_conv_integer(dlp_sctx *c) {
    return conv_like(c, 0, 1, DLP_DT_INT32, false);
}
static dlp_status sh_qlinear_conv(dlp_sctx *c) {
    dlp_dtype dt = dlp_sh_dtype(c, 7);
    return conv_like(c, 0, 3, dt ? dt : dlp_sh_dtype(c, 0), false);
}

/* MaxPool / AveragePool / LpPool: kernel_shape attribute. */
static dlp_status sh_pool(dlp_sctx *c) {
    dlp_dtype dt = dlp_sh_dtype(c, 0);
    dlp_sh_set_dtype(c, 0, dt);
    dlp_sh_set_dtype(c, 1, DLP_DT_INT64);
    const dlp_shape *x = dlp_sh_shape(c, 0);
    if (!x) return DLP_OK;
    if (x->rank < 3) return dlp_sh_bad(c, "input rank %d < 3", x->rank);
    int nsp = x->rank - 2;
    const dlp_attr *ks = dlp_node_attr(c->n, "kernel_shape");
    if (!ks || ks->type != DLP_ATTR_INTS || ks->n != nsp)
        return dlp_sh_bad(c, "kernel_shape missing or not %d dims", nsp);
    dlp_shape o = dlp_shape_of_rank(x->rank);
    o.dims[0] = x->dims[0];
    o.dims[1] = x->dims[1];
    bool ceil_mode = dlp_node_attr_int(c->n, "ceil_mode", 0) != 0;
    if (!window_dims(c, x, ks->ints, false, ceil_mode, &o)) return DLP_OK;
    dlp_sh_set(c, 0, dt, &o);
    return dlp_sh_set(c, 1, DLP_DT_INT64, &o);
}

static dlp_status sh_global_pool(dlp_sctx *c) {
    const dlp_shape *x = dlp_sh_shape(c, 0);
    dlp_dtype dt = dlp_sh_dtype(c, 0);
    if (!x) return dlp_sh_set(c, 0, dt, NULL);
    if (x->rank < 2) return dlp_sh_bad(c, "input rank %d < 2", x->rank);
    dlp_shape o = *x;
    for (int i = 2; i < o.rank; i++) o.dims[i] = dlp_dim_of(1);
    return dlp_sh_set(c, 0, dt, &o);
}

/* BatchNormalization: Y like X; running / saved stats like the mean. */
static dlp_status sh_batchnorm(dlp_sctx *c) {
    dlp_status st = dlp_sh_set(c, 0, dlp_sh_dtype(c, 0), dlp_sh_shape(c, 0));
    for (int i = 1; i < c->n->n_outputs && st == DLP_OK; i++)
        st = dlp_sh_set(c, i, dlp_sh_dtype(c, 3), dlp_sh_shape(c, 3));
    return st;
}

/* LayerNormalization: Y like X; Mean / InvStdDev with dims >= axis = 1. */
static dlp_status sh_layernorm(dlp_sctx *c) {
    const dlp_shape *x = dlp_sh_shape(c, 0);
    dlp_status st = dlp_sh_set(c, 0, dlp_sh_dtype(c, 0), x);
    if (st != DLP_OK || !x) return st;
    int axis;
    if (!dlp_axis(dlp_node_attr_int(c->n, "axis", -1), x->rank, &axis))
        return dlp_sh_bad(c, "axis out of range");
    dlp_shape m = *x;
    for (int i = axis; i < m.rank; i++) m.dims[i] = dlp_dim_of(1);
    dlp_dtype sdt = (dlp_dtype)dlp_node_attr_int(c->n, "stash_type", 1);
    dlp_sh_set(c, 1, sdt, &m);
    return dlp_sh_set(c, 2, sdt, &m);
}

static dlp_status sh_gemm(dlp_sctx *c) {
    dlp_dtype dt = dlp_sh_dtype(c, 0);
    dlp_sh_set_dtype(c, 0, dt);
    const dlp_shape *a = dlp_sh_shape(c, 0), *b = dlp_sh_shape(c, 1);
    if (!a || !b) return DLP_OK;
    if (a->rank != 2 || b->rank != 2)
        return dlp_sh_bad(c, "Gemm needs rank-2 inputs, got %d and %d",
                          a->rank, b->rank);
    bool ta = dlp_node_attr_int(c->n, "transA", 0) != 0;
    bool tb = dlp_node_attr_int(c->n, "transB", 0) != 0;
    dlp_dim m = a->dims[ta ? 1 : 0], ka = a->dims[ta ? 0 : 1];
    dlp_dim kb = b->dims[tb ? 1 : 0], n = b->dims[tb ? 0 : 1];
    if (ka.value >= 0 && kb.value >= 0 && ka.value != kb.value)
        return dlp_sh_bad(c, "inner dims %lld and %lld differ",
                          (long long)ka.value, (long long)kb.value);
    dlp_shape o = dlp_shape_of_rank(2);
    o.dims[0] = m;
    o.dims[1] = n;
    return dlp_sh_set(c, 0, dt, &o);
}

/* numpy matmul of inputs ai, bi with output dtype dt. */
static dlp_status matmul_like(dlp_sctx *c, int ai, int bi, dlp_dtype dt) {
    dlp_sh_set_dtype(c, 0, dt);
    const dlp_shape *pa = dlp_sh_shape(c, ai), *pb = dlp_sh_shape(c, bi);
    if (!pa || !pb) return DLP_OK;
    if (pa->rank == 0 || pb->rank == 0)
        return dlp_sh_bad(c, "MatMul of a scalar");
    dlp_shape a = *pa, b = *pb;
    bool va = a.rank == 1, vb = b.rank == 1;
    if (va) { a.rank = 2; a.dims[1] = a.dims[0]; a.dims[0] = dlp_dim_of(1); }
    if (vb) { b.rank = 2; b.dims[1] = dlp_dim_of(1); }
    dlp_dim ka = a.dims[a.rank - 1], kb = b.dims[b.rank - 2];
    if (ka.value >= 0 && kb.value >= 0 && ka.value != kb.value)
        return dlp_sh_bad(c, "inner dims %lld and %lld differ",
                          (long long)ka.value, (long long)kb.value);
    dlp_shape ba = a, bb = b, bo;
    ba.rank -= 2;
    bb.rank -= 2;
    if (dlp_shape_broadcast(&ba, &bb, &bo) < 0)
        return dlp_sh_bad(c, "batch dims do not broadcast");
    dlp_shape o = dlp_shape_of_rank(bo.rank + 2);
    if (o.rank < 0) return DLP_OK;
    for (int i = 0; i < bo.rank; i++) o.dims[i] = bo.dims[i];
    int r = bo.rank;
    if (!va) o.dims[r++] = a.dims[a.rank - 2];
    if (!vb) o.dims[r++] = b.dims[b.rank - 1];
    o.rank = r;
    return dlp_sh_set(c, 0, dt, &o);
}

static dlp_status sh_matmul(dlp_sctx *c) {
    return matmul_like(c, 0, 1, dlp_sh_dtype(c, 0));
}
static dlp_status sh_matmul_integer(dlp_sctx *c) {
    return matmul_like(c, 0, 1, DLP_DT_INT32);
}
static dlp_status sh_qlinear_matmul(dlp_sctx *c) {
    dlp_dtype dt = dlp_sh_dtype(c, 7);
    return matmul_like(c, 0, 3, dt ? dt : dlp_sh_dtype(c, 0));
}

/* ---- Einsum --------------------------------------------------------------- */

/* One term of an equation: letters, with '.' standing for the ellipsis. */
typedef struct {
    char l[DLP_MAX_RANK + 3];
    int n;          /* letters incl. one '.' for the ellipsis */
    int ell;        /* position of the ellipsis or -1 */
} ein_term;

static bool ein_parse(const char *s, const char *end, ein_term *t) {
    t->n = 0;
    t->ell = -1;
    while (s < end) {
        if (*s == ' ') { s++; continue; }
        if (*s == '.') {
            if (end - s < 3 || s[1] != '.' || s[2] != '.' || t->ell >= 0)
                return false;
            if (t->n >= (int)sizeof t->l) return false;
            t->ell = t->n;
            t->l[t->n++] = '.';
            s += 3;
            continue;
        }
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z')))
            return false;
        if (t->n >= (int)sizeof t->l) return false;
        t->l[t->n++] = *s++;
    }
    return true;
}

static dlp_status sh_einsum(dlp_sctx *c) {
    dlp_dtype dt = dlp_sh_dtype(c, 0);
    dlp_sh_set_dtype(c, 0, dt);
    const char *eq = dlp_node_attr_str(c->n, "equation", NULL);
    if (!eq) return dlp_sh_bad(c, "no equation");
    const char *arrow = strstr(eq, "->");
    const char *lhs_end = arrow ? arrow : eq + strlen(eq);
    dlp_dim letter[128];
    bool seen[128] = {false};
    int count[128] = {0};
    for (int i = 0; i < 128; i++) letter[i] = dlp_dim_unknown();
    dlp_shape ell = dlp_shape_of_rank(0);
    bool have_ell = false;
    const char *p = eq;
    int in = 0;
    while (p <= lhs_end) {
        const char *q = p;
        while (q < lhs_end && *q != ',') q++;
        ein_term t;
        if (!ein_parse(p, q, &t)) return dlp_sh_bad(c, "bad equation '%s'", eq);
        if (in >= c->n->n_inputs)
            return dlp_sh_bad(c, "equation '%s' names more inputs than the "
                              "node has", eq);
        const dlp_shape *s = dlp_sh_shape(c, in);
        if (!s) return DLP_OK;
        int nl = t.n - (t.ell >= 0);
        if ((t.ell < 0 && s->rank != nl) || (t.ell >= 0 && s->rank < nl))
            return dlp_sh_bad(c, "input %d has rank %d, term has %d letters",
                              in, s->rank, nl);
        int ne = s->rank - nl, d = 0;
        for (int k = 0; k < t.n; k++) {
            if (t.l[k] == '.') {
                dlp_shape e = dlp_shape_of_rank(ne);
                for (int j = 0; j < ne; j++) e.dims[j] = s->dims[d + j];
                if (have_ell) {
                    if (dlp_shape_broadcast(&ell, &e, &ell) < 0)
                        return dlp_sh_bad(c, "ellipsis dims do not broadcast");
                } else {
                    ell = e;
                    have_ell = true;
                }
                d += ne;
                continue;
            }
            int ch = (unsigned char)t.l[k];
            dlp_dim dd = s->dims[d++];
            if (seen[ch]) {
                if (!dlp_dim_broadcast(letter[ch], dd, &letter[ch]))
                    return dlp_sh_bad(c, "letter '%c' has sizes that differ",
                                      ch);
            } else {
                letter[ch] = dd;
                seen[ch] = true;
            }
            count[ch]++;
        }
        in++;
        p = q + 1;
    }
    dlp_shape o = dlp_shape_of_rank(0);
    if (arrow) {
        ein_term t;
        if (!ein_parse(arrow + 2, arrow + strlen(arrow), &t))
            return dlp_sh_bad(c, "bad equation '%s'", eq);
        int r = 0;
        for (int k = 0; k < t.n; k++) {
            if (t.l[k] == '.') {
                if (r + ell.rank > DLP_MAX_RANK) return DLP_OK;
                for (int j = 0; j < ell.rank; j++) o.dims[r++] = ell.dims[j];
                continue;
            }
            int ch = (unsigned char)t.l[k];
            if (!seen[ch])
                return dlp_sh_bad(c, "output letter '%c' not in inputs", ch);
            if (r >= DLP_MAX_RANK) return DLP_OK;
            o.dims[r++] = letter[ch];
        }
        o.rank = r;
    } else {
        int r = 0;
        for (int j = 0; j < ell.rank && have_ell; j++) o.dims[r++] = ell.dims[j];
        for (int ch = 0; ch < 128; ch++)
            if (count[ch] == 1) {
                if (r >= DLP_MAX_RANK) return DLP_OK;
                o.dims[r++] = letter[ch];
            }
        o.rank = r;
    }
    return dlp_sh_set(c, 0, dt, &o);
}

/* ---- quantization --------------------------------------------------------- */

static dlp_status sh_quantize(dlp_sctx *c) {
    dlp_dtype dt = (dlp_dtype)dlp_node_attr_int(c->n, "output_dtype", 0);
    if (dt == DLP_DT_UNDEFINED) dt = dlp_sh_dtype(c, 2);
    if (dt == DLP_DT_UNDEFINED) dt = DLP_DT_UINT8;
    return dlp_sh_set(c, 0, dt, dlp_sh_shape(c, 0));
}

static dlp_status sh_dequantize(dlp_sctx *c) {
    dlp_dtype dt = c->opset >= 19 ? dlp_sh_dtype(c, 1) : DLP_DT_FLOAT;
    if (dt == DLP_DT_UNDEFINED) dt = DLP_DT_FLOAT;
    return dlp_sh_set(c, 0, dt, dlp_sh_shape(c, 0));
}

static dlp_status sh_dynamic_quantize(dlp_sctx *c) {
    dlp_shape sc = dlp_shape_of_rank(0);
    dlp_sh_set(c, 0, DLP_DT_UINT8, dlp_sh_shape(c, 0));
    dlp_sh_set(c, 1, DLP_DT_FLOAT, &sc);
    return dlp_sh_set(c, 2, DLP_DT_UINT8, &sc);
}

/* ---- detection / sampling ------------------------------------------------ */

static dlp_status sh_roialign(dlp_sctx *c) {
    dlp_dtype dt = dlp_sh_dtype(c, 0);
    const dlp_shape *x = dlp_sh_shape(c, 0), *r = dlp_sh_shape(c, 1);
    dlp_shape o = dlp_shape_of_rank(4);
    if (x && x->rank == 4) o.dims[1] = x->dims[1];
    if (r && r->rank == 2) o.dims[0] = r->dims[0];
    o.dims[2] = dlp_dim_of(dlp_node_attr_int(c->n, "output_height", 1));
    o.dims[3] = dlp_dim_of(dlp_node_attr_int(c->n, "output_width", 1));
    return dlp_sh_set(c, 0, dt, &o);
}

static dlp_status sh_max_roi_pool(dlp_sctx *c) {
    const dlp_shape *x = dlp_sh_shape(c, 0), *r = dlp_sh_shape(c, 1);
    const dlp_attr *ps = dlp_node_attr(c->n, "pooled_shape");
    if (!x || !ps || ps->type != DLP_ATTR_INTS || ps->n != x->rank - 2)
        return dlp_sh_set(c, 0, dlp_sh_dtype(c, 0), NULL);
    dlp_shape o = dlp_shape_of_rank(x->rank);
    if (r && r->rank == 2) o.dims[0] = r->dims[0];
    o.dims[1] = x->dims[1];
    for (int i = 0; i < ps->n; i++) o.dims[2 + i] = dlp_dim_of(ps->ints[i]);
    return dlp_sh_set(c, 0, dlp_sh_dtype(c, 0), &o);
}

static dlp_status sh_grid_sample(dlp_sctx *c) {
    dlp_dtype dt = dlp_sh_dtype(c, 0);
    const dlp_shape *x = dlp_sh_shape(c, 0), *gr = dlp_sh_shape(c, 1);
    if (!x || !gr) return dlp_sh_set(c, 0, dt, NULL);
    if (gr->rank != x->rank)
        return dlp_sh_bad(c, "grid rank %d != input rank %d", gr->rank,
                          x->rank);
    dlp_shape o = *x;
    for (int i = 2; i < x->rank; i++) o.dims[i] = gr->dims[i - 1];
    return dlp_sh_set(c, 0, dt, &o);
}

static dlp_status sh_nms(dlp_sctx *c) {
    dlp_shape o = dlp_shape_of_rank(2);
    o.dims[1] = dlp_dim_of(3);
    return dlp_sh_set(c, 0, DLP_DT_INT64, &o);
}

const dlp_shape_op dlp_shape_ops_nn[] = {
    {"Conv", sh_conv}, {"ConvTranspose", sh_conv_transpose},
    {"ConvInteger", sh_conv_integer}, {"QLinearConv", sh_qlinear_conv},
    {"MaxPool", sh_pool}, {"AveragePool", sh_pool}, {"LpPool", sh_pool},
    {"GlobalAveragePool", sh_global_pool}, {"GlobalMaxPool", sh_global_pool},
    {"GlobalLpPool", sh_global_pool},
    {"BatchNormalization", sh_batchnorm},
    {"LayerNormalization", sh_layernorm},
    {"Gemm", sh_gemm}, {"MatMul", sh_matmul},
    {"MatMulInteger", sh_matmul_integer},
    {"QLinearMatMul", sh_qlinear_matmul}, {"Einsum", sh_einsum},
    {"QuantizeLinear", sh_quantize}, {"DequantizeLinear", sh_dequantize},
    {"DynamicQuantizeLinear", sh_dynamic_quantize},
    {"RoiAlign", sh_roialign}, {"MaxRoiPool", sh_max_roi_pool},
    {"GridSample", sh_grid_sample}, {"NonMaxSuppression", sh_nms},
    {NULL, NULL},
};
