/*
 * infer.c — the shape inference driver: dlp_shape_infer walks the graph's
 * nodes in topological order and calls each op's shape function, found in a
 * table keyed by op_type (the tables live in shape_*.c, one per op family).
 *
 * Before the walk, symbolic dims of every value take their bound value from
 * the main graph's sym_values (or go back to unknown when unbound), so the
 * same graph can be analysed again after re-binding. Outputs of known ops
 * are recomputed from scratch (the file's value_info shapes only keep their
 * dtype); outputs of unknown ops keep the file's shapes and get a warning.
 * Subgraphs (If/Loop/Scan bodies) are inferred by the control-flow shape
 * functions through dlp_shape_infer_sub, which reuses the run's op table.
 */
#include "shape.h"
#include "model/model.h"

#include <stdlib.h>
#include <string.h>

struct dlp_shape_run {
    dlp_strmap ops;      /* op_type -> index into `fns` */
    dlp_shape_fn *fns;
    size_t n_fns;
    dlp_graph *root;
    dlp_warnings *w;
    dlp_error *err;
    dlp_symvec **sv;     /* symbolic contents of the current graph's values */
    size_t n_sv;
};

static const dlp_shape_op *const op_tables[] = {
    dlp_shape_ops_elementwise, dlp_shape_ops_nn, dlp_shape_ops_tensor,
    dlp_shape_ops_index, dlp_shape_ops_const, dlp_shape_ops_reduce,
    dlp_shape_ops_control, dlp_shape_ops_seq, dlp_shape_ops_misc,
};

static dlp_status run_init(dlp_shape_run *r, dlp_graph *root,
                           dlp_warnings *w, dlp_error *err) {
    memset(r, 0, sizeof *r);
    r->root = root;
    r->w = w;
    r->err = err;
    size_t total = 0;
    for (size_t t = 0; t < sizeof op_tables / sizeof *op_tables; t++)
        for (const dlp_shape_op *o = op_tables[t]; o->op; o++) total++;
    r->fns = calloc(total ? total : 1, sizeof *r->fns);
    if (!r->fns || !dlp_strmap_init(&r->ops, total * 2)) {
        free(r->fns);
        return dlp_fail(err, DLP_ERR_NOMEM, "out of memory building op table");
    }
    for (size_t t = 0; t < sizeof op_tables / sizeof *op_tables; t++)
        for (const dlp_shape_op *o = op_tables[t]; o->op; o++) {
            r->fns[r->n_fns] = o->fn;
            if (!dlp_strmap_put(&r->ops, o->op, strlen(o->op),
                                (int)r->n_fns)) {
                dlp_strmap_free(&r->ops);
                free(r->fns);
                return dlp_fail(err, DLP_ERR_NOMEM,
                                "out of memory building op table");
            }
            r->n_fns++;
        }
    return DLP_OK;
}

static void run_free(dlp_shape_run *r) {
    dlp_strmap_free(&r->ops);
    free(r->fns);
}

/* Dims carrying a symbol take the symbol's bound value (or -1). */
static void resolve_syms(const dlp_graph *root, dlp_shape *s) {
    for (int d = 0; d < s->rank && d < DLP_MAX_RANK; d++) {
        int sym = s->dims[d].sym;
        if (sym < 0) continue;
        if ((size_t)sym < root->n_syms && root->sym_values &&
            root->sym_values[sym] >= 0)
            s->dims[d].value = root->sym_values[sym];
        else
            s->dims[d].value = -1;
    }
}

/* A value captured from an enclosing scope: copy what is known there. */
static void resolve_outer(dlp_graph *g, dlp_value *v) {
    for (dlp_graph *p = g->parent; p; p = p->parent) {
        int idx = dlp_graph_find(p, v->name);
        if (idx < 0) continue;
        const dlp_value *src = &p->values[idx];
        if (src->dtype != DLP_DT_UNDEFINED) v->dtype = src->dtype;
        v->shape = src->shape;
        v->ival = src->ival;
        v->fval = src->fval;
        v->n_const = src->n_const;
        return;
    }
}

/* Checks a freshly inferred output against the size limits. */
static dlp_status check_limits(dlp_sctx *c, dlp_value *v) {
    if (v->shape.rank < 0) return DLP_OK;
    int64_t numel = 1;
    for (int d = 0; d < v->shape.rank; d++) {
        int64_t x = v->shape.dims[d].value;
        if (x < -1) {
            v->shape.dims[d].value = -1;
            continue;
        }
        if (x < 0) continue;
        if (x > DLP_SHAPE_MAX_DIM)
            return dlp_fail(c->err, DLP_ERR_LIMIT,
                            "tensor '%s' (output of node '%s', %s): dim %d "
                            "is %lld, above the 2^40 limit",
                            v->name, c->n->name, c->n->op_type, d,
                            (long long)x);
        if (!dlp_mul_i64(numel, x, &numel))
            return dlp_fail(c->err, DLP_ERR_LIMIT,
                            "tensor '%s' (output of node '%s', %s): element "
                            "count overflows int64",
                            v->name, c->n->name, c->n->op_type);
    }
    return DLP_OK;
}

static bool default_domain(const char *d) {
    return !d || !d[0] || strcmp(d, "ai.onnx") == 0;
}

static dlp_status infer_graph(dlp_shape_run *r, dlp_graph *g);

static dlp_status infer_node(dlp_shape_run *r, dlp_graph *g, dlp_node *n) {
    dlp_sctx c = {r, g, r->root, n, r->root->opset, r->w, r->err};
    if (c.opset <= 0) c.opset = 21;
    int idx = -1;
    if (default_domain(n->domain))
        idx = dlp_strmap_get(&r->ops, n->op_type, strlen(n->op_type));
    if (idx < 0) {
        dlp_warn(r->w, "unknown op '%s' (domain '%s'): outputs left unshaped",
                 n->op_type, n->domain ? n->domain : "");
        for (int i = 0; i < n->n_outputs; i++) { /* the file's shapes */
            dlp_value *o = dlp_sh_out(&c, i);
            dlp_status st = o ? check_limits(&c, o) : DLP_OK;
            if (st != DLP_OK) return st;
        }
        return DLP_OK;
    }
    for (int i = 0; i < n->n_outputs; i++) {
        dlp_value *o = dlp_sh_out(&c, i);
        if (!o) continue;
        o->shape = dlp_shape_unknown();
        o->ival = NULL;
        o->fval = NULL;
        o->n_const = 0;
    }
    dlp_status st = r->fns[idx](&c);
    if (st == DLP_OK) st = dlp_shape_symprop(&c);
    if (st != DLP_OK) return st;
    for (int i = 0; i < n->n_outputs; i++) {
        dlp_value *o = dlp_sh_out(&c, i);
        if (!o) continue;
        st = check_limits(&c, o);
        if (st != DLP_OK) return st;
    }
    return DLP_OK;
}

/* Inputs and initializers: dims within the limits too. */
static dlp_status check_source(dlp_shape_run *r, const dlp_value *v) {
    for (int d = 0; d < v->shape.rank; d++)
        if (v->shape.dims[d].value > DLP_SHAPE_MAX_DIM)
            return dlp_fail(r->err, DLP_ERR_LIMIT,
                            "tensor '%s': dim %d is %lld, above the 2^40 "
                            "limit", v->name, d,
                            (long long)v->shape.dims[d].value);
    return DLP_OK;
}

static dlp_status prepare_values(dlp_shape_run *r, dlp_graph *g) {
    for (size_t i = 0; i < g->n_values; i++) {
        dlp_value *v = &g->values[i];
        if (v->flags & DLP_V_OUTER) resolve_outer(g, v);
        resolve_syms(r->root, &v->shape);
        if (v->producer < 0) {
            dlp_status st = check_source(r, v);
            if (st != DLP_OK) return st;
        }
        /* an in-file empty initializer is a known constant */
        int64_t numel;
        if ((v->flags & DLP_V_INITIALIZER) && !(v->flags & DLP_V_EXTERNAL) &&
            !v->ival && !v->fval && dlp_shape_numel(&v->shape, &numel) &&
            numel == 0) {
            if (dlp_dtype_is_float(v->dtype)) {
                v->fval = dlp_arena_calloc(g->arena, 1, sizeof *v->fval);
                if (!v->fval) goto nomem;
            } else {
                v->ival = dlp_arena_calloc(g->arena, 1, sizeof *v->ival);
                if (!v->ival) goto nomem;
            }
            v->n_const = 0;
        }
    }
    return DLP_OK;
nomem:
    return dlp_fail(r->err, DLP_ERR_NOMEM, "out of memory preparing shapes");
}

const dlp_symvec *dlp_shape_symvec_get(dlp_sctx *c, int value) {
    dlp_shape_run *r = c->run;
    if (value < 0 || (size_t)value >= r->n_sv) return NULL;
    return r->sv[value];
}

dlp_status dlp_shape_symvec_put(dlp_sctx *c, int value, const dlp_symvec *s) {
    dlp_shape_run *r = c->run;
    if (value < 0 || (size_t)value >= r->n_sv) return DLP_OK;
    if (!r->sv[value]) {
        r->sv[value] = malloc(sizeof *r->sv[value]);
        if (!r->sv[value]) return dlp_sh_nomem(c);
    }
    *r->sv[value] = *s;
    return DLP_OK;
}

static void free_symvecs(dlp_symvec **sv, size_t n) {
    for (size_t i = 0; sv && i < n; i++) free(sv[i]);
    free(sv);
}

static dlp_status infer_graph(dlp_shape_run *r, dlp_graph *g) {
    dlp_status st = prepare_values(r, g);
    if (st != DLP_OK) return st;
    if (!g->topo) {
        st = dlp_graph_toposort(g, r->err);
        if (st != DLP_OK) return st;
    }
    dlp_symvec **saved = r->sv;
    size_t saved_n = r->n_sv;
    r->n_sv = g->n_values;
    r->sv = calloc(g->n_values ? g->n_values : 1, sizeof *r->sv);
    if (!r->sv) {
        r->sv = saved;
        r->n_sv = saved_n;
        return dlp_fail(r->err, DLP_ERR_NOMEM, "out of memory inferring "
                        "shapes");
    }
    for (size_t k = 0; k < g->n_nodes && st == DLP_OK; k++)
        st = infer_node(r, g, &g->nodes[g->topo[k]]);
    free_symvecs(r->sv, r->n_sv);
    r->sv = saved;
    r->n_sv = saved_n;
    return st;
}

dlp_status dlp_shape_infer_sub(dlp_sctx *c, dlp_graph *sub) {
    if (!sub) return DLP_OK;
    return infer_graph(c->run, sub);
}

dlp_status dlp_shape_infer(dlp_graph *g, dlp_warnings *w, dlp_error *err) {
    if (!g) return dlp_fail(err, DLP_ERR_ARG, "dlp_shape_infer: no graph");
    dlp_graph *root = g;
    while (root->parent) root = root->parent;
    dlp_shape_run r;
    dlp_status st = run_init(&r, root, w, err);
    if (st != DLP_OK) return st;
    if (g == root) root->n_shape_conflicts = 0;
    st = infer_graph(&r, g);
    run_free(&r);
    return st;
}
