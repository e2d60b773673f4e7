/*
 * onnx_read.c — ModelProto -> dlp_graph: the schema walk over the protobuf
 * wire format (pb.c), following graph.h's contract.
 *
 * ModelProto: ir_version=1 opset_import=8 (domain=1 version=2) graph=7.
 * GraphProto: node=1 name=2 initializer=5 input=11 output=12 value_info=13
 *             sparse_initializer=15.
 * NodeProto:  input=1 output=2 name=3 op_type=4 attribute=5 domain=7.
 * AttributeProto: name=1 f=2 i=3 s=4 t=5 g=6 floats=7 ints=8 strings=9
 *             tensors=10 graphs=11 type=20 (ref_attr_name=21 is only used
 *             inside functions, which are not read).
 *
 * A graph's fields may come in any order, so the graph is read in passes
 * (each a cheap walk that skips other fields by length): count, then
 * initializers, inputs, value_info, nodes, outputs. Subgraph names that
 * refer to an enclosing scope are resolved once the whole model is read.
 */
#include "onnx.h"

#include <stdio.h>
#include <string.h>

#define NAMEF(len) (int)((len) > 200 ? 200 : (len))

static dlp_status read_graph(dlp_onnx_ctx *c, dlp_graph *g, const dlp_pb *r,
                             dlp_error *err);

/* ---- attributes -------------------------------------------------------- */

static dlp_status read_attr(dlp_onnx_ctx *c, dlp_graph *g, int node,
                            const dlp_pb *parent, const dlp_pb_field *f,
                            dlp_attr *a, dlp_error *err) {
    dlp_pb r;
    dlp_status st = dlp_pb_sub(parent, f, "AttributeProto", &r, err);
    if (st) return st;
    memset(a, 0, sizeof *a);
    a->tensor = -1;
    a->name = "";
    bool has_f = false, has_i = false, has_s = false, has_t = false,
         has_g = false, has_type = false;
    size_t n_floats = 0, n_ints = 0, n_strings = 0, n_tensors = 0,
           n_graphs = 0;
    dlp_pb_field e, t_f, g_f, gs_f, s_f;
    memset(&s_f, 0, sizeof s_f);
    memset(&t_f, 0, sizeof t_f);
    memset(&g_f, 0, sizeof g_f);
    memset(&gs_f, 0, sizeof gs_f);
    int64_t type = 0;
    while ((st = dlp_pb_next(&r, &e, err)) == DLP_OK && !e.end) {
        size_t k;
        switch (e.num) {
        case 1:
            if (e.wire == DLP_PB_LEN) {
                a->name = dlp_arena_strndup(g->arena, (const char *)e.data,
                                            e.len);
                if (!a->name) return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
            }
            break;
        case 2:
            if (e.wire == DLP_PB_I32) {
                uint32_t b = (uint32_t)e.u;
                float fl;
                memcpy(&fl, &b, sizeof fl);
                a->f = fl;
                has_f = true;
            }
            break;
        case 3:
            if (e.wire == DLP_PB_VARINT) {
                a->i = (int64_t)e.u;
                has_i = true;
            }
            break;
        case 4: if (e.wire == DLP_PB_LEN) { s_f = e; has_s = true; } break;
        case 5: if (e.wire == DLP_PB_LEN) { t_f = e; has_t = true; } break;
        case 6: if (e.wire == DLP_PB_LEN) { g_f = e; has_g = true; } break;
        case 7:
            if (!dlp_pb_count(&e, DLP_PB_I32, &k)) goto bad;
            n_floats += k;
            break;
        case 8:
            if (!dlp_pb_count(&e, DLP_PB_VARINT, &k)) goto bad;
            n_ints += k;
            break;
        case 9: if (e.wire == DLP_PB_LEN) n_strings++; break;
        case 10: if (e.wire == DLP_PB_LEN) n_tensors++; break;
        case 11:
            if (e.wire == DLP_PB_LEN) {
                if (!n_graphs) gs_f = e;
                n_graphs++;
            }
            break;
        case 20:
            if (e.wire == DLP_PB_VARINT) {
                type = (int64_t)e.u;
                has_type = true;
            }
            break;
        default: break;
        }
    }
    if (st) return st;
    if (!has_type) { /* old files: infer from the field present */
        type = has_g ? DLP_ATTR_GRAPH : has_t ? DLP_ATTR_TENSOR
             : has_s ? DLP_ATTR_STRING : n_ints ? DLP_ATTR_INTS
             : n_floats ? DLP_ATTR_FLOATS : n_strings ? DLP_ATTR_STRINGS
             : n_graphs ? DLP_ATTR_GRAPHS : n_tensors ? DLP_ATTR_TENSORS
             : has_i ? DLP_ATTR_INT : has_f ? DLP_ATTR_FLOAT
             : DLP_ATTR_UNDEFINED;
    }
    if (type < 0 || type > 14) type = DLP_ATTR_UNDEFINED;
    a->type = (dlp_attr_type)type;
    if (n_floats > INT32_MAX || n_ints > INT32_MAX || n_strings > INT32_MAX ||
        n_tensors > INT32_MAX || n_graphs > INT32_MAX)
        return dlp_fail(err, DLP_ERR_LIMIT, "attribute '%s' has too many "
                        "elements", a->name);
    const dlp_node *nd = &g->nodes[node];
    char what[320];
    switch (a->type) {
    case DLP_ATTR_STRING:
        a->s = has_s ? dlp_arena_strndup(g->arena, (const char *)s_f.data,
                                         s_f.len)
                     : "";
        if (!a->s) return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
        break;
    case DLP_ATTR_FLOATS:
    case DLP_ATTR_INTS: {
        bool isf = a->type == DLP_ATTR_FLOATS;
        size_t n = isf ? n_floats : n_ints, got = 0;
        uint64_t *bits = dlp_arena_calloc(g->arena, n ? n : 1, sizeof *bits);
        if (!bits) return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
        dlp_pb r2 = r;
        r2.p = f->data;
        while ((st = dlp_pb_next(&r2, &e, err)) == DLP_OK && !e.end)
            if (e.num == (isf ? 7u : 8u) &&
                !dlp_pb_fetch(&e, isf ? DLP_PB_I32 : DLP_PB_VARINT, bits, &got,
                              n))
                goto bad;
        if (st) return st;
        a->n = (int)got;
        if (isf) {
            /* convert in place: a double fits in the uint64 slot */
            double *d = (double *)(void *)bits;
            for (size_t i = 0; i < got; i++) {
                uint32_t b = (uint32_t)bits[i];
                float fl;
                memcpy(&fl, &b, sizeof fl);
                d[i] = fl;
            }
            a->floats = d;
        } else {
            a->ints = (int64_t *)(void *)bits;
        }
        break;
    }
    case DLP_ATTR_STRINGS: {
        a->strings = dlp_arena_calloc(g->arena, n_strings ? n_strings : 1,
                                      sizeof *a->strings);
        if (!a->strings) return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
        dlp_pb r2 = r;
        r2.p = f->data;
        int k = 0;
        while ((st = dlp_pb_next(&r2, &e, err)) == DLP_OK && !e.end)
            if (e.num == 9 && e.wire == DLP_PB_LEN && (size_t)k < n_strings) {
                a->strings[k] = dlp_arena_strndup(g->arena,
                                                  (const char *)e.data, e.len);
                if (!a->strings[k++])
                    return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
            }
        if (st) return st;
        a->n = k;
        break;
    }
    case DLP_ATTR_TENSOR:
        if (!has_t) break;
        snprintf(what, sizeof what, "attribute '%s' of node '%s' (%s)",
                 a->name, nd->name, nd->op_type);
        a->tensor = dlp_onnx_anon_value(c, g, err);
        if (a->tensor < 0) return err ? err->code : DLP_ERR_NOMEM;
        if ((st = dlp_onnx_tensor(c, g, &r, &t_f, what, a->tensor, NULL, err)))
            return st;
        break;
    case DLP_ATTR_TENSORS:
        a->n = (int)n_tensors;
        break;
    case DLP_ATTR_GRAPH:
    case DLP_ATTR_GRAPHS: {
        if (!has_g && !n_graphs) break;
        a->n = a->type == DLP_ATTR_GRAPHS ? (int)n_graphs : 1;
        /* GRAPHS: only the first graph is kept (no ONNX op uses GRAPHS) */
        const dlp_pb_field *gf = has_g ? &g_f : &gs_f;
        dlp_graph *sg = dlp_arena_alloc(g->arena, sizeof *sg);
        if (!sg) return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
        if ((st = dlp_graph_init(sg, g->arena, g, err))) return st;
        a->graph = sg;  /* owned by the node now: freed with g */
        sg->ir_version = g->ir_version;
        dlp_pb gr;
        if ((st = dlp_pb_sub(&r, gf, "GraphProto", &gr, err))) return st;
        if ((st = read_graph(c, sg, &gr, err))) return st;
        break;
    }
    default:
        break;
    }
    return DLP_OK;
bad:
    return dlp_fail(err, DLP_ERR_FORMAT,
                    "node '%s' (%s): malformed repeated field in attribute "
                    "'%s' at byte %zu",
                    g->nodes[node].name, g->nodes[node].op_type, a->name,
                    e.offset);
}

/* ---- nodes ------------------------------------------------------------- */

/* Fills the output value of a Constant node from its value* attribute. */
static dlp_status constant_output(dlp_onnx_ctx *c, dlp_graph *g, int node,
                                  dlp_error *err) {
    (void)c;
    const dlp_node *n = &g->nodes[node];
    if (n->n_outputs < 1 || n->outputs[0] < 0 || n->domain[0]) return DLP_OK;
    dlp_value *out = &g->values[n->outputs[0]];
    for (int i = 0; i < n->n_attrs; i++) {
        const dlp_attr *a = &n->attrs[i];
        if (strcmp(a->name, "value") == 0 && a->type == DLP_ATTR_TENSOR &&
            a->tensor >= 0) {
            const dlp_value *t = &g->values[a->tensor];
            out->dtype = t->dtype;
            out->shape = t->shape;
            out->ival = t->ival;
            out->fval = t->fval;
            out->n_const = t->n_const;
            return DLP_OK;
        }
        bool scalar = strcmp(a->name, "value_int") == 0 ||
                      strcmp(a->name, "value_float") == 0;
        bool list = strcmp(a->name, "value_ints") == 0 ||
                    strcmp(a->name, "value_floats") == 0;
        if (!scalar && !list) continue;
        bool isf = strstr(a->name, "float") != NULL;
        out->dtype = isf ? DLP_DT_FLOAT : DLP_DT_INT64;
        int64_t cnt = scalar ? 1 : a->n;
        out->shape.rank = scalar ? 0 : 1;
        if (!scalar) {
            out->shape.dims[0].value = cnt;
            out->shape.dims[0].sym = -1;
        }
        if (isf && cnt <= DLP_ONNX_MAX_FLOAT_CONST) {
            double *d = dlp_arena_calloc(g->arena, (size_t)(cnt ? cnt : 1),
                                         sizeof *d);
            if (!d) return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
            for (int64_t k = 0; k < cnt; k++)
                d[k] = scalar ? a->f : a->floats[k];
            out->fval = d;
            out->n_const = cnt;
        } else if (!isf && cnt <= DLP_MAX_CONST_ELEMS) {
            int64_t *v = dlp_arena_calloc(g->arena, (size_t)(cnt ? cnt : 1),
                                          sizeof *v);
            if (!v) return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
            for (int64_t k = 0; k < cnt; k++)
                v[k] = scalar ? a->i : a->ints[k];
            out->ival = v;
            out->n_const = cnt;
        }
        return DLP_OK;
    }
    return DLP_OK;
}

static dlp_status read_node(dlp_onnx_ctx *c, dlp_graph *g,
                            const dlp_pb *parent, const dlp_pb_field *f,
                            dlp_error *err) {
    dlp_pb r;
    dlp_status st = dlp_pb_sub(parent, f, "NodeProto", &r, err);
    if (st) return st;
    int idx = dlp_graph_add_node(g);
    if (idx < 0) return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    /* pass 1: counts and the node's own strings */
    size_t ni = 0, no = 0, na = 0;
    dlp_pb_field e;
    const char *name = NULL, *op = NULL, *dom = NULL;
    size_t name_len = 0, op_len = 0, dom_len = 0;
    while ((st = dlp_pb_next(&r, &e, err)) == DLP_OK && !e.end) {
        if (e.wire != DLP_PB_LEN) continue;
        switch (e.num) {
        case 1: ni++; break;
        case 2: no++; break;
        case 3: name = (const char *)e.data; name_len = e.len; break;
        case 4: op = (const char *)e.data; op_len = e.len; break;
        case 5: na++; break;
        case 7: dom = (const char *)e.data; dom_len = e.len; break;
        default: break;
        }
    }
    if (st) return st;
    if (ni > INT32_MAX || no > INT32_MAX || na > INT32_MAX)
        return dlp_fail(err, DLP_ERR_LIMIT, "node at byte %zu has too many "
                        "inputs, outputs or attributes", f->offset);
    dlp_node *n = &g->nodes[idx];
    if (name && !(n->name = dlp_arena_strndup(g->arena, name, name_len)))
        return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    if (!op || op_len == 0)
        return dlp_fail(err, DLP_ERR_FORMAT,
                        "node '%s' (#%d at byte %zu) has no op_type", n->name,
                        idx, f->offset);
    if (!(n->op_type = dlp_arena_strndup(g->arena, op, op_len)))
        return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    if (dom && !(dom_len == 7 && memcmp(dom, "ai.onnx", 7) == 0) &&
        !(n->domain = dlp_arena_strndup(g->arena, dom, dom_len)))
        return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    n->inputs = dlp_arena_calloc(g->arena, ni ? ni : 1, sizeof *n->inputs);
    n->outputs = dlp_arena_calloc(g->arena, no ? no : 1, sizeof *n->outputs);
    n->attrs = dlp_arena_calloc(g->arena, na ? na : 1, sizeof *n->attrs);
    if (!n->inputs || !n->outputs || !n->attrs)
        return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    /* pass 2: inputs, outputs, attributes (attributes may read subgraphs,
     * which never add nodes to g, so n stays valid) */
    r.p = f->data;
    while ((st = dlp_pb_next(&r, &e, err)) == DLP_OK && !e.end) {
        if (e.wire != DLP_PB_LEN) continue;
        if (e.num == 1) {
            int v = -1;
            if (e.len) {
                v = dlp_onnx_value(c, g, (const char *)e.data, e.len, err);
                if (v < 0) return err ? err->code : DLP_ERR_NOMEM;
            }
            n->inputs[n->n_inputs++] = v;
        } else if (e.num == 2) {
            int v = -1;
            if (e.len) {
                v = dlp_onnx_value(c, g, (const char *)e.data, e.len, err);
                if (v < 0) return err ? err->code : DLP_ERR_NOMEM;
                dlp_value *val = &g->values[v];
                if (val->producer >= 0)
                    return dlp_fail(err, DLP_ERR_GRAPH,
                                    "tensor '%s' is produced by two nodes: "
                                    "'%s' (%s) and '%s' (%s)",
                                    val->name, g->nodes[val->producer].name,
                                    g->nodes[val->producer].op_type, n->name,
                                    n->op_type);
                if (val->flags & (DLP_V_INPUT | DLP_V_INITIALIZER))
                    return dlp_fail(err, DLP_ERR_GRAPH,
                                    "node '%s' (%s) writes tensor '%s', which "
                                    "is also a graph input or initializer",
                                    n->name, n->op_type, val->name);
                val->producer = idx;
            }
            n->outputs[n->n_outputs++] = v;
        } else if (e.num == 5) {
            dlp_attr *a = &n->attrs[n->n_attrs];
            st = read_attr(c, g, idx, &r, &e, a, err);
            n = &g->nodes[idx];
            n->n_attrs++; /* counted even on failure: its graph gets freed */
            if (st) return st;
        }
    }
    if (st) return st;
    if (c->funcs.count) {
        char key[300];
        int kl = snprintf(key, sizeof key, "%s:%s", n->domain, n->op_type);
        if (kl > 0 && (size_t)kl < sizeof key &&
            dlp_strmap_get(&c->funcs, key, (size_t)kl) >= 0 &&
            c->n_func_calls++ < 8)
            dlp_warn(c->warnings,
                     "node '%s' calls the model-local function '%s' "
                     "(domain '%s'), which is not expanded: its body is "
                     "not analysed",
                     n->name, n->op_type, n->domain);
    }
    if (strcmp(n->op_type, "Constant") == 0)
        return constant_output(c, g, idx, err);
    return DLP_OK;
}

/* ---- graphs ------------------------------------------------------------ */

static dlp_status apply_vinfo(dlp_graph *g, int v, const dlp_onnx_vinfo *vi) {
    dlp_value *val = &g->values[v];
    if (!vi->has_type) return DLP_OK;
    /* an initializer's own dims and dtype are authoritative */
    if ((val->flags & DLP_V_INITIALIZER) && val->dtype != DLP_DT_UNDEFINED)
        return DLP_OK;
    if (vi->dtype != DLP_DT_UNDEFINED) val->dtype = vi->dtype;
    if (vi->shape.rank >= 0) val->shape = vi->shape;
    return DLP_OK;
}

static dlp_status read_graph(dlp_onnx_ctx *c, dlp_graph *g, const dlp_pb *gr,
                             dlp_error *err) {
    dlp_pb r = *gr;
    dlp_pb_field e;
    dlp_status st;
    size_t nn = 0;
    /* pass 0: count nodes before allocating anything for them */
    while ((st = dlp_pb_next(&r, &e, err)) == DLP_OK && !e.end) {
        if (e.num == 1) {
            if (e.wire != DLP_PB_LEN)
                return dlp_fail(err, DLP_ERR_FORMAT,
                                "GraphProto.node at byte %zu has wire type "
                                "%d",
                                e.offset, e.wire);
            nn++;
            if (c->n_nodes + (int64_t)nn > DLP_ONNX_MAX_NODES)
                return dlp_fail(err, DLP_ERR_LIMIT,
                                "graph has more than %d nodes",
                                DLP_ONNX_MAX_NODES);
        } else if (e.num == 2 && e.wire == DLP_PB_LEN) {
            if (!(g->name = dlp_arena_strndup(g->arena, (const char *)e.data,
                                              e.len)))
                return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
        }
    }
    if (st) return st;
    c->n_nodes += (int64_t)nn;
    if (!g->name) g->name = "";
    if (!dlp_grow((void **)&g->nodes, &g->cap_nodes, nn, sizeof *g->nodes))
        return dlp_fail(err, DLP_ERR_NOMEM, "out of memory for %zu nodes", nn);

    /* pass 1: initializers */
    r = *gr;
    while ((st = dlp_pb_next(&r, &e, err)) == DLP_OK && !e.end) {
        int v;
        if (e.num == 5) {
            size_t before = g->n_values;
            if ((st = dlp_onnx_tensor(c, g, &r, &e, "initializer", -1, &v,
                                      err)))
                return st;
            if (g->n_values == before &&
                (g->values[v].flags & DLP_V_INITIALIZER))
                return dlp_fail(err, DLP_ERR_FORMAT,
                                "initializer '%s' appears twice",
                                g->values[v].name);
            g->values[v].flags |= DLP_V_INITIALIZER;
        } else if (e.num == 15) {
            if ((st = dlp_onnx_sparse_tensor(c, g, &r, &e, &v, err)))
                return st;
            g->values[v].flags |= DLP_V_INITIALIZER;
        }
    }
    if (st) return st;

    /* pass 2: inputs (those that are initializers too are not inputs) */
    r = *gr;
    while ((st = dlp_pb_next(&r, &e, err)) == DLP_OK && !e.end) {
        if (e.num != 11) continue;
        dlp_onnx_vinfo vi;
        if ((st = dlp_onnx_value_info(c, g, &r, &e, true, &vi, err))) return st;
        if (!vi.name_len)
            return dlp_fail(err, DLP_ERR_FORMAT,
                            "graph input at byte %zu has no name", e.offset);
        int v = dlp_onnx_value(c, g, vi.name, vi.name_len, err);
        if (v < 0) return err ? err->code : DLP_ERR_NOMEM;
        apply_vinfo(g, v, &vi);
        if (!(g->values[v].flags & (DLP_V_INITIALIZER | DLP_V_INPUT))) {
            g->values[v].flags |= DLP_V_INPUT;
            if (!dlp_graph_add_input(g, v))
                return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
        }
    }
    if (st) return st;

    /* pass 3: value_info (hints; a bad dim there reads as unknown) */
    r = *gr;
    while ((st = dlp_pb_next(&r, &e, err)) == DLP_OK && !e.end) {
        if (e.num != 13) continue;
        dlp_onnx_vinfo vi;
        if ((st = dlp_onnx_value_info(c, g, &r, &e, false, &vi, err)))
            return st;
        if (!vi.name_len) continue;
        int v = dlp_onnx_value(c, g, vi.name, vi.name_len, err);
        if (v < 0) return err ? err->code : DLP_ERR_NOMEM;
        apply_vinfo(g, v, &vi);
    }
    if (st) return st;

    /* pass 4: nodes */
    r = *gr;
    while ((st = dlp_pb_next(&r, &e, err)) == DLP_OK && !e.end)
        if (e.num == 1 && (st = read_node(c, g, &r, &e, err))) return st;
    if (st) return st;

    /* pass 5: outputs */
    r = *gr;
    while ((st = dlp_pb_next(&r, &e, err)) == DLP_OK && !e.end) {
        if (e.num != 12) continue;
        dlp_onnx_vinfo vi;
        if ((st = dlp_onnx_value_info(c, g, &r, &e, false, &vi, err)))
            return st;
        if (!vi.name_len)
            return dlp_fail(err, DLP_ERR_FORMAT,
                            "graph output at byte %zu has no name", e.offset);
        int v = dlp_onnx_value(c, g, vi.name, vi.name_len, err);
        if (v < 0) return err ? err->code : DLP_ERR_NOMEM;
        apply_vinfo(g, v, &vi);
        if (!(g->values[v].flags & DLP_V_OUTPUT)) {
            g->values[v].flags |= DLP_V_OUTPUT;
            if (!dlp_graph_add_output(g, v))
                return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
        }
    }
    return st;
}

/* A value is defined in g when something in g gives it contents. */
static bool defined_here(const dlp_value *v) {
    return v->producer >= 0 ||
           (v->flags & (DLP_V_INPUT | DLP_V_INITIALIZER | DLP_V_OUTER)) ||
           v->ival || v->fval;
}

/* Marks the values of every subgraph under g that come from an enclosing
 * scope (DLP_V_OUTER), copying what the outer value knows. Parents first,
 * so a grandchild sees its parent's marks. */
static void resolve_outer(dlp_graph *g) {
    if (g->parent) {
        for (size_t i = 0; i < g->n_values; i++) {
            dlp_value *v = &g->values[i];
            if (defined_here(v) || !v->name[0]) continue;
            for (const dlp_graph *p = g->parent; p; p = p->parent) {
                int k = dlp_graph_find(p, v->name);
                if (k < 0 || !defined_here(&p->values[k])) continue;
                const dlp_value *o = &p->values[k];
                v->flags |= DLP_V_OUTER;
                if (v->dtype == DLP_DT_UNDEFINED) v->dtype = o->dtype;
                if (v->shape.rank < 0) v->shape = o->shape;
                if (!v->ival && !v->fval) {
                    v->ival = o->ival;
                    v->fval = o->fval;
                    v->n_const = o->n_const;
                }
                break;
            }
        }
    }
    for (size_t i = 0; i < g->n_nodes; i++) {
        const dlp_node *n = &g->nodes[i];
        for (int a = 0; a < n->n_attrs; a++)
            if (n->attrs[a].graph) resolve_outer(n->attrs[a].graph);
    }
}

/* Orders the nodes of g and of every subgraph (after resolve_outer, so
 * subgraph captures count as implicit inputs of their node). */
static dlp_status sort_all(dlp_graph *g, dlp_error *err) {
    dlp_status st = dlp_graph_toposort(g, err);
    for (size_t i = 0; i < g->n_nodes && st == DLP_OK; i++) {
        const dlp_node *n = &g->nodes[i];
        for (int a = 0; a < n->n_attrs && st == DLP_OK; a++)
            if (n->attrs[a].graph) st = sort_all(n->attrs[a].graph, err);
    }
    return st;
}

/* ---- the model --------------------------------------------------------- */

static dlp_status not_onnx(dlp_error *err, dlp_status st) {
    if (!err) return st;
    char inner[sizeof err->msg];
    memcpy(inner, err->msg, sizeof inner);
    inner[sizeof inner - 1] = 0;
    return dlp_fail(err, st, "not an ONNX model: %.480s", inner);
}

static dlp_status read_model(dlp_onnx_ctx *c, const uint8_t *bytes,
                             size_t len, dlp_arena *arena, dlp_graph *g,
                             dlp_warnings *w, dlp_error *err) {
    dlp_pb top = dlp_pb_begin(bytes, len);
    dlp_pb r = top;
    dlp_pb_field e, graph_f;
    bool have_graph = false, have_opset = false;
    int64_t ir = 0, opset = 0;
    dlp_status st;
    static const char *const names[] = {[1] = "ir_version", [7] = "graph",
                                        [8] = "opset_import"};
    while ((st = dlp_pb_next(&r, &e, err)) == DLP_OK && !e.end) {
        int want = e.num == 1 ? DLP_PB_VARINT
                 : e.num == 7 || e.num == 8 ? DLP_PB_LEN : -1;
        if (want >= 0 && e.wire != want)
            return dlp_fail(err, DLP_ERR_FORMAT,
                            "not an ONNX model: ModelProto field %u (%s) has "
                            "wire type %d",
                            e.num, names[e.num], e.wire);
        if (e.num == 1) {
            ir = (int64_t)e.u;
        } else if (e.num == 7) {
            graph_f = e;
            have_graph = true;
        } else if (e.num == 25 && e.wire == DLP_PB_LEN) {
            /* FunctionProto: name=1 domain=10; remember "domain:name" */
            dlp_pb fr;
            if ((st = dlp_pb_sub(&r, &e, "FunctionProto", &fr, err)))
                break;
            dlp_pb_field o;
            const uint8_t *fn = NULL, *fd = NULL;
            size_t fnl = 0, fdl = 0;
            while ((st = dlp_pb_next(&fr, &o, err)) == DLP_OK && !o.end) {
                if (o.num == 1 && o.wire == DLP_PB_LEN) { fn = o.data; fnl = o.len; }
                if (o.num == 10 && o.wire == DLP_PB_LEN) { fd = o.data; fdl = o.len; }
            }
            if (st) break;
            if (fn && fnl + fdl < 280) {
                char *key = dlp_arena_alloc(arena, fnl + fdl + 2);
                if (!key) {
                    st = dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
                    break;
                }
                if (fdl) memcpy(key, fd, fdl);
                key[fdl] = ':';
                memcpy(key + fdl + 1, fn, fnl);
                if ((!c->funcs.cap && !dlp_strmap_init(&c->funcs, 16)) ||
                    !dlp_strmap_put(&c->funcs, key, fnl + fdl + 1, 1)) {
                    st = dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
                    break;
                }
            }
        } else if (e.num == 8) {
            dlp_pb or;
            if ((st = dlp_pb_sub(&r, &e, "OperatorSetIdProto", &or, err)))
                return not_onnx(err, st);
            dlp_pb_field o;
            const uint8_t *dom = NULL;
            size_t dlen = 0;
            int64_t ver = -1;
            while ((st = dlp_pb_next(&or, &o, err)) == DLP_OK && !o.end) {
                if (o.num == 1 && o.wire == DLP_PB_LEN) {
                    dom = o.data;
                    dlen = o.len;
                } else if (o.num == 2 && o.wire == DLP_PB_VARINT) {
                    ver = (int64_t)o.u;
                }
            }
            if (st) return not_onnx(err, st);
            if (ver >= 0 && (dlen == 0 || (dlen == 7 && memcmp(dom, "ai.onnx",
                                                                7) == 0))) {
                opset = ver;
                have_opset = true;
            }
        }
    }
    if (st) return not_onnx(err, st);
    if (!have_graph)
        return dlp_fail(err, DLP_ERR_FORMAT,
                        "not an ONNX model: no graph (ModelProto field 7)");
    /* a protobuf of another schema rarely has a graph with nodes or inputs:
     * check that before complaining about the opset */
    dlp_pb gr;
    if ((st = dlp_pb_sub(&top, &graph_f, "GraphProto", &gr, err)))
        return not_onnx(err, st);
    {
        dlp_pb s = gr;
        size_t found = 0;
        while ((st = dlp_pb_next(&s, &e, err)) == DLP_OK && !e.end)
            if ((e.num == 1 || e.num == 5 || e.num == 11) &&
                e.wire == DLP_PB_LEN)
                found++;
        if (st) return not_onnx(err, st);
        if (!found)
            return dlp_fail(err, DLP_ERR_FORMAT,
                            "not an ONNX model: the graph has no nodes, "
                            "inputs or initializers");
    }
    if (!have_opset)
        return dlp_fail(err, DLP_ERR_FORMAT,
                        "model has no opset_import for the default ONNX "
                        "domain");
    if (opset < DLP_ONNX_MIN_OPSET || opset > DLP_ONNX_MAX_OPSET)
        return dlp_fail(err, DLP_ERR_UNSUPPORTED,
                        "ONNX opset %lld is not supported (supported: %d to "
                        "%d)",
                        (long long)opset, DLP_ONNX_MIN_OPSET,
                        DLP_ONNX_MAX_OPSET);
    if ((st = dlp_graph_init(g, arena, NULL, err))) return st;
    g->opset = (int)opset;
    g->ir_version = ir;
    if (!dlp_strmap_init(&c->syms, 16)) {
        dlp_graph_free(g);
        return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    }
    st = read_graph(c, g, &gr, err);
    dlp_strmap_free(&c->syms);
    if (c->n_func_calls > 8)
        dlp_warn(w, "%lld more nodes call model-local functions, which are "
                 "not expanded",
                 (long long)(c->n_func_calls - 8));
    if (c->n_ext_warn > 8)
        dlp_warn(w, "%lld more small tensors have unreadable external data; "
                 "their contents are unknown",
                 (long long)(c->n_ext_warn - 8));
    if (st == DLP_OK) {
        resolve_outer(g);
        st = sort_all(g, err);
    }
    if (st) {
        dlp_graph_free(g);
        return st;
    }
    return DLP_OK;
}

dlp_status dlp_onnx_read(const uint8_t *bytes, size_t len, const char *dir,
                         dlp_arena *arena, dlp_graph *g, dlp_warnings *w,
                         dlp_error *err) {
    memset(g, 0, sizeof *g);
    if (len == 0)
        return dlp_fail(err, DLP_ERR_FORMAT, "not an ONNX model: empty file");
    dlp_onnx_ctx c = {.dir = dir, .arena = arena, .warnings = w};
    dlp_status st = read_model(&c, bytes, len, arena, g, w, err);
    dlp_strmap_free(&c.funcs);
    dlp_strmap_free(&c.syms);
    return st;
}
