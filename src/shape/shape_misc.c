/*
 * shape_misc.c — less common ops: losses (SoftmaxCrossEntropyLoss,
 * NegativeLogLikelihoodLoss), window generators (Hann/Hamming/Blackman),
 * Unique, MaxUnpool, CenterCropPad, Det, Multinomial.
 */
#include "shape.h"

#include <string.h>

/* Loss(scores [N, C, d...], labels [N, d...]): reduction none -> [N, d...],
 * else a scalar; SoftmaxCrossEntropyLoss's log_prob is like the scores. */
static dlp_status sh_loss(dlp_sctx *c) {
    dlp_dtype dt = dlp_sh_dtype(c, 0);
    const dlp_shape *x = dlp_sh_shape(c, 0);
    const char *red = dlp_node_attr_str(c->n, "reduction", "mean");
    dlp_sh_set(c, 1, dt, x);
    if (strcmp(red, "none") != 0) {
        dlp_shape sc = dlp_shape_of_rank(0);
        return dlp_sh_set(c, 0, dt, &sc);
    }
    if (!x) return dlp_sh_set(c, 0, dt, NULL);
    if (x->rank < 2) return dlp_sh_bad(c, "scores rank %d < 2", x->rank);
    dlp_shape o = dlp_shape_of_rank(x->rank - 1);
    o.dims[0] = x->dims[0];
    for (int i = 2; i < x->rank; i++) o.dims[i - 1] = x->dims[i];
    return dlp_sh_set(c, 0, dt, &o);
}

static dlp_status sh_window(dlp_sctx *c) {
    dlp_dtype dt = (dlp_dtype)dlp_node_attr_int(c->n, "output_datatype",
                                                DLP_DT_FLOAT);
    dlp_shape o = dlp_shape_of_rank(1);
    int64_t n;
    if (dlp_sh_scalar_int(c, 0, &n)) {
        if (n < 0) return dlp_sh_bad(c, "negative size");
        o.dims[0] = dlp_dim_of(n);
    }
    return dlp_sh_set(c, 0, dt, &o);
}

static dlp_status sh_unique(dlp_sctx *c) {
    dlp_dtype dt = dlp_sh_dtype(c, 0);
    const dlp_shape *x = dlp_sh_shape(c, 0);
    const dlp_attr *a = dlp_node_attr(c->n, "axis");
    dlp_shape v = dlp_shape_of_rank(1);
    dlp_sh_set_dtype(c, 0, dt);
    for (int i = 1; i < 4; i++) dlp_sh_set_dtype(c, i, DLP_DT_INT64);
    if (!x) return DLP_OK;
    if (a && a->type == DLP_ATTR_INT) {
        int axis;
        if (!dlp_axis(a->i, x->rank, &axis)) return dlp_sh_bad(c, "bad axis");
        dlp_shape y = *x;
        y.dims[axis] = dlp_dim_unknown();
        dlp_sh_set(c, 0, dt, &y);
        dlp_sh_set(c, 1, DLP_DT_INT64, &v);
        dlp_shape inv = dlp_shape_of_rank(1);
        inv.dims[0] = x->dims[axis];
        dlp_sh_set(c, 2, DLP_DT_INT64, &inv);
        return dlp_sh_set(c, 3, DLP_DT_INT64, &v);
    }
    dlp_sh_set(c, 0, dt, &v);
    dlp_sh_set(c, 1, DLP_DT_INT64, &v);
    dlp_shape inv = dlp_shape_of_rank(1);
    int64_t n;
    if (dlp_shape_numel(x, &n)) inv.dims[0] = dlp_dim_of(n);
    dlp_sh_set(c, 2, DLP_DT_INT64, &inv);
    return dlp_sh_set(c, 3, DLP_DT_INT64, &v);
}

/* MaxUnpool: output_shape input, else (in-1)*stride + kernel - pads. */
static dlp_status sh_max_unpool(dlp_sctx *c) {
    dlp_dtype dt = dlp_sh_dtype(c, 0);
    const dlp_shape *x = dlp_sh_shape(c, 0);
    dlp_sh_set_dtype(c, 0, dt);
    if (!x) return DLP_OK;
    const int64_t *os;
    int64_t nos;
    if (dlp_sh_in(c, 2)) {
        if (!dlp_sh_ints(c, 2, &os, &nos) || nos > DLP_MAX_RANK) {
            dlp_shape o = dlp_shape_of_rank(x->rank);
            return dlp_sh_set(c, 0, dt, &o);
        }
        dlp_shape o = dlp_shape_from(os, (int)nos);
        return dlp_sh_set(c, 0, dt, &o);
    }
    int nsp = x->rank - 2;
    const dlp_attr *k = dlp_node_attr(c->n, "kernel_shape");
    const dlp_attr *s = dlp_node_attr(c->n, "strides");
    const dlp_attr *p = dlp_node_attr(c->n, "pads");
    if (s && s->type != DLP_ATTR_INTS) s = NULL;
    if (p && p->type != DLP_ATTR_INTS) p = NULL;
    if (nsp < 1 || !k || k->type != DLP_ATTR_INTS || k->n != nsp ||
        (s && s->n != nsp) || (p && p->n != 2 * nsp))
        return dlp_sh_bad(c, "kernel_shape/strides/pads do not match");
    dlp_shape o = *x;
    for (int i = 0; i < nsp; i++) {
        int64_t in = x->dims[2 + i].value;
        if (in < 0) { o.dims[2 + i] = dlp_dim_unknown(); continue; }
        int64_t st = s ? s->ints[i] : 1;
        bool ov = false;
        int64_t v = dlp_ck_add(&ov, dlp_ck_mul(&ov, in - 1, st), k->ints[i]);
        if (p)
            v = dlp_ck_sub(&ov, v, dlp_ck_add(&ov, p->ints[i], p->ints[nsp + i]));
        if (ov || v < 0) return dlp_sh_bad(c, "bad output size");
        o.dims[2 + i] = dlp_dim_of(v);
    }
    return dlp_sh_set(c, 0, dt, &o);
}

static dlp_status sh_center_crop_pad(dlp_sctx *c) {
    dlp_dtype dt = dlp_sh_dtype(c, 0);
    const dlp_shape *x = dlp_sh_shape(c, 0);
    dlp_sh_set_dtype(c, 0, dt);
    if (!x) return DLP_OK;
    const int64_t *sv;
    int64_t ns;
    const dlp_attr *a = dlp_node_attr(c->n, "axes");
    if (a && a->type != DLP_ATTR_INTS) a = NULL;
    int nax = a ? a->n : x->rank;
    dlp_shape o = *x;
    if (!dlp_sh_ints(c, 1, &sv, &ns)) {
        for (int i = 0; i < nax; i++) {
            int ax = i;
            if (a && !dlp_axis(a->ints[i], x->rank, &ax))
                return dlp_sh_bad(c, "bad axis");
            o.dims[ax] = dlp_dim_unknown();
        }
        return dlp_sh_set(c, 0, dt, &o);
    }
    if (ns != nax) return dlp_sh_bad(c, "shape has %lld entries for %d axes",
                                     (long long)ns, nax);
    for (int i = 0; i < nax; i++) {
        int ax = i;
        if (a && !dlp_axis(a->ints[i], x->rank, &ax))
            return dlp_sh_bad(c, "bad axis");
        if (sv[i] < 0) return dlp_sh_bad(c, "negative size");
        o.dims[ax] = dlp_dim_of(sv[i]);
    }
    return dlp_sh_set(c, 0, dt, &o);
}

static dlp_status sh_det(dlp_sctx *c) {
    const dlp_shape *x = dlp_sh_shape(c, 0);
    dlp_dtype dt = dlp_sh_dtype(c, 0);
    if (!x) return dlp_sh_set(c, 0, dt, NULL);
    if (x->rank < 2) return dlp_sh_bad(c, "input rank %d < 2", x->rank);
    dlp_shape o = *x;
    o.rank -= 2;
    return dlp_sh_set(c, 0, dt, &o);
}

static dlp_status sh_multinomial(dlp_sctx *c) {
    dlp_dtype dt = (dlp_dtype)dlp_node_attr_int(c->n, "dtype", DLP_DT_INT32);
    const dlp_shape *x = dlp_sh_shape(c, 0);
    if (!x || x->rank != 2) return dlp_sh_set(c, 0, dt, NULL);
    dlp_shape o = *x;
    o.dims[1] = dlp_dim_of(dlp_node_attr_int(c->n, "sample_size", 1));
    return dlp_sh_set(c, 0, dt, &o);
}

const dlp_shape_op dlp_shape_ops_misc[] = {
    {"SoftmaxCrossEntropyLoss", sh_loss},
    {"NegativeLogLikelihoodLoss", sh_loss},
    {"HannWindow", sh_window}, {"HammingWindow", sh_window},
    {"BlackmanWindow", sh_window}, {"Unique", sh_unique},
    {"MaxUnpool", sh_max_unpool}, {"CenterCropPad", sh_center_crop_pad},
    {"Det", sh_det}, {"Multinomial", sh_multinomial},
    {NULL, NULL},
};
