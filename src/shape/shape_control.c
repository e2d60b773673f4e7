/*
 * shape_control.c — control flow: If, Loop, Scan. Their bodies are inferred
 * as subgraphs (values captured from enclosing scopes are copied in by the
 * driver). If takes the branch chosen by a constant condition, or the dims
 * both branches agree on. Loop and Scan are best effort: loop-carried values
 * start from the node's inputs and dims that change in the body become
 * unknown; scan outputs get the trip count as a new leading (or
 * scan_output_axes) dim when it is known.
 */
#include "shape.h"

#include <string.h>

static dlp_graph *attr_graph(dlp_sctx *c, const char *name) {
    const dlp_attr *a = dlp_node_attr(c->n, name);
    return a && a->type == DLP_ATTR_GRAPH ? a->graph : NULL;
}

static dlp_value *sub_out(dlp_graph *g, size_t i) {
    return g && i < g->n_outputs && g->outputs[i] >= 0
               ? &g->values[g->outputs[i]] : NULL;
}

static dlp_value *sub_in(dlp_graph *g, size_t i) {
    return g && i < g->n_inputs && g->inputs[i] >= 0
               ? &g->values[g->inputs[i]] : NULL;
}

/* Dims of a and b where they agree; rank -1 when ranks differ. */
static dlp_shape merge(const dlp_shape *a, const dlp_shape *b) {
    if (a->rank < 0 || a->rank != b->rank) return dlp_shape_unknown();
    dlp_shape o = *a;
    for (int i = 0; i < a->rank; i++) {
        dlp_dim x = a->dims[i], y = b->dims[i];
        if (x.value >= 0 && x.value == y.value) {
            if (x.sym < 0) o.dims[i] = y;
        } else if (x.value < 0 && y.value < 0 && x.sym >= 0 && x.sym == y.sym) {
            o.dims[i] = x;
        } else {
            o.dims[i] = dlp_dim_unknown();
        }
    }
    return o;
}

static void set_value(dlp_value *v, dlp_dtype t, const dlp_shape *s) {
    if (!v) return;
    if (t != DLP_DT_UNDEFINED) v->dtype = t;
    v->shape = s ? *s : dlp_shape_unknown();
    v->ival = NULL;
    v->fval = NULL;
    v->n_const = 0;
}

static dlp_status sh_if(dlp_sctx *c) {
    dlp_graph *tg = attr_graph(c, "then_branch"), *eg = attr_graph(c, "else_branch");
    dlp_status st = dlp_shape_infer_sub(c, tg);
    if (st == DLP_OK) st = dlp_shape_infer_sub(c, eg);
    if (st != DLP_OK) return st;
    int64_t cond;
    bool known = dlp_sh_scalar_int(c, 0, &cond);
    for (int i = 0; i < c->n->n_outputs; i++) {
        dlp_value *t = sub_out(tg, (size_t)i), *e = sub_out(eg, (size_t)i);
        dlp_value *pick = known ? (cond ? t : e) : NULL;
        dlp_value *o = dlp_sh_out(c, i);
        if (!o) continue;
        if (pick) {
            if (pick->ival)
                st = dlp_sh_set_ints(c, i, pick->dtype, &pick->shape,
                                     pick->ival, pick->n_const);
            else if (pick->fval)
                st = dlp_sh_set_nums(c, i, pick->dtype, &pick->shape,
                                     pick->fval, pick->n_const);
            else
                st = dlp_sh_set(c, i, pick->dtype, &pick->shape);
        } else if (t && e) {
            dlp_shape m = merge(&t->shape, &e->shape);
            st = dlp_sh_set(c, i, t->dtype ? t->dtype : e->dtype, &m);
        } else if (t || e) {
            dlp_sh_set_dtype(c, i, (t ? t : e)->dtype);
        }
        if (st != DLP_OK) return st;
    }
    return DLP_OK;
}

/* Loop(M, cond, v...) with body(iter, cond, v...) -> (cond, v..., scan...). */
static dlp_status sh_loop(dlp_sctx *c) {
    dlp_graph *b = attr_graph(c, "body");
    if (!b) return dlp_sh_bad(c, "no body");
    int n_carried = c->n->n_inputs - 2;
    if (n_carried < 0) n_carried = 0;
    dlp_shape sc = dlp_shape_of_rank(0);
    set_value(sub_in(b, 0), DLP_DT_INT64, &sc);
    set_value(sub_in(b, 1), DLP_DT_BOOL, &sc);
    for (int k = 0; k < n_carried; k++) {
        dlp_value *in = dlp_sh_in(c, 2 + k);
        set_value(sub_in(b, 2 + (size_t)k), in ? in->dtype : DLP_DT_UNDEFINED,
                  in && in->shape.rank >= 0 ? &in->shape : NULL);
    }
    dlp_status st = dlp_shape_infer_sub(c, b);
    if (st != DLP_OK) return st;
    /* dims that change across an iteration become unknown; infer again */
    bool changed = false;
    for (int k = 0; k < n_carried; k++) {
        dlp_value *bi = sub_in(b, 2 + (size_t)k), *bo = sub_out(b, 1 + (size_t)k);
        if (!bi || !bo) continue;
        dlp_shape m = merge(&bi->shape, &bo->shape);
        if (memcmp(&m, &bi->shape, sizeof m) != 0) {
            set_value(bi, bi->dtype, &m);
            changed = true;
        }
    }
    if (changed && (st = dlp_shape_infer_sub(c, b)) != DLP_OK) return st;
    int64_t trip = -1, m;
    dlp_value *bcond = sub_out(b, 0);
    bool cond_free = !dlp_sh_in(c, 1) ||
                     (bcond && bcond->ival && bcond->n_const == 1 &&
                      bcond->ival[0] != 0);
    if (dlp_sh_in(c, 0) && dlp_sh_scalar_int(c, 0, &m) && cond_free && m >= 0)
        trip = m;
    for (int k = 0; k < n_carried; k++) {
        dlp_value *bi = sub_in(b, 2 + (size_t)k), *bo = sub_out(b, 1 + (size_t)k);
        if (!bo) continue;
        dlp_shape s = bi ? merge(&bi->shape, &bo->shape) : bo->shape;
        if ((st = dlp_sh_set(c, k, bo->dtype, &s)) != DLP_OK) return st;
    }
    for (int k = n_carried; k < c->n->n_outputs; k++) {
        dlp_value *bo = sub_out(b, 1 + (size_t)k);
        if (!bo) continue;
        if (bo->shape.rank < 0 || bo->shape.rank + 1 > DLP_MAX_RANK) {
            dlp_sh_set_dtype(c, k, bo->dtype);
            continue;
        }
        dlp_shape s = dlp_shape_of_rank(bo->shape.rank + 1);
        s.dims[0] = trip >= 0 ? dlp_dim_of(trip) : dlp_dim_unknown();
        for (int d = 0; d < bo->shape.rank; d++) s.dims[d + 1] = bo->shape.dims[d];
        if ((st = dlp_sh_set(c, k, bo->dtype, &s)) != DLP_OK) return st;
    }
    return DLP_OK;
}

/* Scan (opset >= 9): N states then M scan inputs; body gets slices. */
static dlp_status sh_scan(dlp_sctx *c) {
    dlp_graph *b = attr_graph(c, "body");
    if (!b) return dlp_sh_bad(c, "no body");
    if (c->opset < 9) return dlp_sh_bad(c, "Scan before opset 9");
    int m = (int)dlp_node_attr_int(c->n, "num_scan_inputs", 0);
    int n_state = c->n->n_inputs - m;
    if (m <= 0 || n_state < 0) return dlp_sh_bad(c, "bad num_scan_inputs");
    const dlp_attr *iax = dlp_node_attr(c->n, "scan_input_axes");
    const dlp_attr *oax = dlp_node_attr(c->n, "scan_output_axes");
    dlp_dim seq = dlp_dim_unknown();
    for (int k = 0; k < n_state; k++) {
        dlp_value *in = dlp_sh_in(c, k);
        set_value(sub_in(b, (size_t)k), in ? in->dtype : DLP_DT_UNDEFINED,
                  in && in->shape.rank >= 0 ? &in->shape : NULL);
    }
    for (int k = 0; k < m; k++) {
        dlp_value *in = dlp_sh_in(c, n_state + k);
        dlp_value *bi = sub_in(b, (size_t)(n_state + k));
        if (!in || in->shape.rank < 1) {
            set_value(bi, in ? in->dtype : DLP_DT_UNDEFINED, NULL);
            continue;
        }
        int ax = 0;
        if (iax && iax->type == DLP_ATTR_INTS && k < iax->n &&
            !dlp_axis(iax->ints[k], in->shape.rank, &ax))
            return dlp_sh_bad(c, "bad scan_input_axes");
        if (seq.value < 0) seq = in->shape.dims[ax];
        dlp_shape s = dlp_shape_of_rank(in->shape.rank - 1);
        for (int d = 0, q = 0; d < in->shape.rank; d++)
            if (d != ax) s.dims[q++] = in->shape.dims[d];
        set_value(bi, in->dtype, &s);
    }
    dlp_status st = dlp_shape_infer_sub(c, b);
    if (st != DLP_OK) return st;
    for (int k = 0; k < c->n->n_outputs; k++) {
        dlp_value *bo = sub_out(b, (size_t)k);
        if (!bo) continue;
        if (k < n_state) {
            dlp_value *bi = sub_in(b, (size_t)k);
            dlp_shape s = bi ? merge(&bi->shape, &bo->shape) : bo->shape;
            if ((st = dlp_sh_set(c, k, bo->dtype, &s)) != DLP_OK) return st;
            continue;
        }
        int r = bo->shape.rank;
        if (r < 0 || r + 1 > DLP_MAX_RANK) {
            dlp_sh_set_dtype(c, k, bo->dtype);
            continue;
        }
        int ax = 0, j = k - n_state;
        if (oax && oax->type == DLP_ATTR_INTS && j < oax->n &&
            !dlp_axis(oax->ints[j], r + 1, &ax))
            return dlp_sh_bad(c, "bad scan_output_axes");
        dlp_shape s = dlp_shape_of_rank(r + 1);
        for (int d = 0, q = 0; d < r + 1; d++)
            s.dims[d] = d == ax ? seq : bo->shape.dims[q++];
        if ((st = dlp_sh_set(c, k, bo->dtype, &s)) != DLP_OK) return st;
    }
    return DLP_OK;
}

const dlp_shape_op dlp_shape_ops_control[] = {
    {"If", sh_if}, {"Loop", sh_loop}, {"Scan", sh_scan},
    {NULL, NULL},
};
