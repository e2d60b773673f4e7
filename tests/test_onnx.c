/*
 * test_onnx.c — the ONNX reader against the onnx package.
 *
 * tests/gen_reader_fixtures.py writes tiny models (torch exports and
 * onnx.helper graphs) to tests/fixtures/reader/NAME.onnx and, as the
 * oracle, NAME.json: what the onnx package reads from each file (nodes,
 * attributes, every named tensor's dtype/dims/flags/bytes/small constants,
 * subgraphs by path). Each fixture is read with dlp_model_open and compared
 * field by field. Also: the protobuf decoder's edge cases, binding dims,
 * the batch size and opening from memory.
 */
#include "check.h"
#include "model/model.h"
#include "onnx/onnx.h"
#include "onnx/pb.h"

#include <cjson/cJSON.h>
#include <sys/mman.h>
#include <unistd.h>

#define FIX "tests/fixtures/reader/"


static cJSON *load_json(const char *name) {
    char path[256];
    snprintf(path, sizeof path, FIX "%s.json", name);
    char *s = check_slurp(path, NULL);
    if (!s) return NULL;
    cJSON *j = cJSON_Parse(s);
    free(s);
    return j;
}

static dlp_model *open_fix(const char *name) {
    char path[256];
    snprintf(path, sizeof path, FIX "%s.onnx", name);
    dlp_error err;
    dlp_model *m = NULL;
    dlp_status st = dlp_model_open(path, &m, &err);
    CHECK_MSG(st == DLP_OK, "%s: %s", name, err.msg);
    return st == DLP_OK ? m : NULL;
}

/* "main/<node name or #k>/<attr>/..." -> the subgraph */
static dlp_graph *graph_at(dlp_graph *g, const char *path) {
    if (strncmp(path, "main", 4) != 0) return NULL;
    const char *p = path + 4;
    while (*p == '/') {
        p++;
        const char *s = strchr(p, '/');
        if (!s) return NULL;
        size_t nl = (size_t)(s - p);
        const char *an = s + 1;
        const char *e = strchr(an, '/');
        size_t al = e ? (size_t)(e - an) : strlen(an);
        dlp_graph *next = NULL;
        for (size_t i = 0; i < g->n_nodes && !next; i++) {
            const dlp_node *n = &g->nodes[i];
            char alt[32];
            snprintf(alt, sizeof alt, "#%zu", i);
            bool match = (strlen(n->name) == nl && !strncmp(n->name, p, nl)) ||
                         (!n->name[0] && strlen(alt) == nl &&
                          !strncmp(alt, p, nl));
            if (!match) continue;
            for (int a = 0; a < n->n_attrs; a++)
                if (strlen(n->attrs[a].name) == al &&
                    !strncmp(n->attrs[a].name, an, al))
                    next = n->attrs[a].graph;
        }
        if (!next) return NULL;
        g = next;
        p = an + al;
    }
    return *p ? NULL : g;
}

static const char *vname(const dlp_graph *g, int v) {
    return v < 0 ? "" : g->values[v].name;
}

static void check_const(const char *what, const cJSON *jc, const int64_t *iv,
                        const double *fv, int64_t n) {
    if (!jc || cJSON_IsNull(jc)) {
        CHECK_MSG(!iv && !fv, "%s: contents should be unknown", what);
        return;
    }
    int jn = cJSON_GetArraySize(jc);
    CHECK_MSG((iv || fv) && n == jn, "%s: %lld constant elements, want %d",
              what, (long long)n, jn);
    if (!(iv || fv) || n != jn) return;
    for (int i = 0; i < jn; i++) {
        double want = cJSON_GetArrayItem(jc, i)->valuedouble;
        double got = iv ? (double)iv[i] : fv[i];
        CHECK_MSG(got == want || fabs(got - want) <= 1e-6 * fabs(want),
                  "%s[%d] = %.17g, want %.17g", what, i, got, want);
    }
}

static void check_shape(const dlp_graph *g, const char *name,
                        const dlp_shape *s, const cJSON *js) {
    const dlp_graph *root = g;
    while (root->parent) root = root->parent;
    if (!js || cJSON_IsNull(js)) {
        CHECK_MSG(s->rank == -1, "%s: rank %d, want unknown", name, s->rank);
        return;
    }
    int r = cJSON_GetArraySize(js);
    CHECK_MSG(s->rank == r, "%s: rank %d, want %d", name, s->rank, r);
    if (s->rank != r) return;
    for (int i = 0; i < r; i++) {
        const cJSON *d = cJSON_GetArrayItem(js, i);
        const dlp_dim *dd = &s->dims[i];
        if (cJSON_IsNumber(d)) {
            CHECK_MSG(dd->value == (int64_t)d->valuedouble && dd->sym == -1,
                      "%s dim %d: %lld, want %g", name, i,
                      (long long)dd->value, d->valuedouble);
        } else if (cJSON_IsString(d)) {
            CHECK_MSG(dd->value == -1 && dd->sym >= 0 &&
                          (size_t)dd->sym < root->n_syms &&
                          !strcmp(root->syms[dd->sym], d->valuestring),
                      "%s dim %d: want symbol %s", name, i, d->valuestring);
        } else {
            CHECK_MSG(dd->value == -1 && dd->sym == -1,
                      "%s dim %d: want unknown", name, i);
        }
    }
}

static bool has_flag(const cJSON *flags, const char *f) {
    const cJSON *x;
    cJSON_ArrayForEach(x, flags) if (!strcmp(x->valuestring, f)) return true;
    return false;
}

static void check_graph(const dlp_graph *g, const cJSON *jg) {
    const char *path = cJSON_GetObjectItem(jg, "path")->valuestring;
    const cJSON *nodes = cJSON_GetObjectItem(jg, "nodes");
    CHECK_MSG(g->n_nodes == (size_t)cJSON_GetArraySize(nodes),
              "%s: %zu nodes, want %d", path, g->n_nodes,
              cJSON_GetArraySize(nodes));
    CHECK_MSG(g->topo != NULL, "%s: not sorted", path);
    int k = 0;
    const cJSON *jn;
    cJSON_ArrayForEach(jn, nodes) {
        if ((size_t)k >= g->n_nodes) break;
        const dlp_node *n = &g->nodes[k++];
        CHECK(!strcmp(n->name, cJSON_GetObjectItem(jn, "name")->valuestring));
        CHECK(!strcmp(n->op_type,
                      cJSON_GetObjectItem(jn, "op_type")->valuestring));
        CHECK_MSG(!strcmp(n->domain,
                          cJSON_GetObjectItem(jn, "domain")->valuestring),
                  "node %s domain '%s'", n->name, n->domain);
        const cJSON *ins = cJSON_GetObjectItem(jn, "inputs");
        const cJSON *outs = cJSON_GetObjectItem(jn, "outputs");
        CHECK(n->n_inputs == cJSON_GetArraySize(ins));
        CHECK(n->n_outputs == cJSON_GetArraySize(outs));
        for (int i = 0; i < n->n_inputs && i < cJSON_GetArraySize(ins); i++)
            CHECK_MSG(!strcmp(vname(g, n->inputs[i]),
                              cJSON_GetArrayItem(ins, i)->valuestring),
                      "node %s input %d", n->name, i);
        for (int i = 0; i < n->n_outputs && i < cJSON_GetArraySize(outs); i++)
            CHECK_MSG(!strcmp(vname(g, n->outputs[i]),
                              cJSON_GetArrayItem(outs, i)->valuestring),
                      "node %s output %d", n->name, i);
        const cJSON *attrs = cJSON_GetObjectItem(jn, "attrs");
        CHECK(n->n_attrs == cJSON_GetArraySize(attrs));
        const cJSON *ja;
        cJSON_ArrayForEach(ja, attrs) {
            const dlp_attr *a = dlp_node_attr(n, ja->string);
            CHECK_MSG(a != NULL, "node %s lacks attribute %s", n->name,
                      ja->string);
            if (!a) continue;
            int type = cJSON_GetObjectItem(ja, "type")->valueint;
            CHECK_MSG((int)a->type == type, "attr %s type %d want %d",
                      ja->string, a->type, type);
            const cJSON *x;
            if ((x = cJSON_GetObjectItem(ja, "i")))
                CHECK(a->i == (int64_t)x->valuedouble);
            if ((x = cJSON_GetObjectItem(ja, "f")))
                CHECK_CLOSE(a->f, x->valuedouble, 1e-7);
            if ((x = cJSON_GetObjectItem(ja, "s")))
                CHECK(a->s && !strcmp(a->s, x->valuestring));
            if ((x = cJSON_GetObjectItem(ja, "ints"))) {
                CHECK(a->n == cJSON_GetArraySize(x));
                for (int i = 0; i < a->n && i < cJSON_GetArraySize(x); i++)
                    CHECK(a->ints[i] ==
                          (int64_t)cJSON_GetArrayItem(x, i)->valuedouble);
            }
            if ((x = cJSON_GetObjectItem(ja, "floats"))) {
                CHECK(a->n == cJSON_GetArraySize(x));
                for (int i = 0; i < a->n && i < cJSON_GetArraySize(x); i++)
                    CHECK_CLOSE(a->floats[i],
                                cJSON_GetArrayItem(x, i)->valuedouble, 1e-7);
            }
            if ((x = cJSON_GetObjectItem(ja, "strings"))) {
                CHECK(a->n == cJSON_GetArraySize(x));
                for (int i = 0; i < a->n && i < cJSON_GetArraySize(x); i++)
                    CHECK(!strcmp(a->strings[i],
                                  cJSON_GetArrayItem(x, i)->valuestring));
            }
            if ((x = cJSON_GetObjectItem(ja, "tensor"))) {
                CHECK(a->tensor >= 0 && (size_t)a->tensor < g->n_values);
                if (a->tensor < 0) continue;
                const dlp_value *t = &g->values[a->tensor];
                CHECK((int)t->dtype ==
                      cJSON_GetObjectItem(x, "dtype")->valueint);
                check_shape(g, "attr tensor", &t->shape,
                            cJSON_GetObjectItem(x, "dims"));
                check_const("attr tensor", cJSON_GetObjectItem(x, "const"),
                            t->ival, t->fval, t->n_const);
                /* attribute tensors stay out of the name map */
                CHECK(t->name[0] == 0);
            }
            if (cJSON_GetObjectItem(ja, "graph"))
                CHECK(a->graph != NULL && a->graph->parent == g);
        }
    }
    /* graph inputs / outputs */
    const cJSON *jin = cJSON_GetObjectItem(jg, "inputs");
    const cJSON *jout = cJSON_GetObjectItem(jg, "outputs");
    CHECK_MSG(g->n_inputs == (size_t)cJSON_GetArraySize(jin),
              "%s: %zu inputs, want %d", path, g->n_inputs,
              cJSON_GetArraySize(jin));
    for (size_t i = 0; i < g->n_inputs && i < (size_t)cJSON_GetArraySize(jin); i++)
        CHECK(!strcmp(vname(g, g->inputs[i]),
                      cJSON_GetArrayItem(jin, (int)i)->valuestring));
    CHECK(g->n_outputs == (size_t)cJSON_GetArraySize(jout));
    for (size_t i = 0; i < g->n_outputs && i < (size_t)cJSON_GetArraySize(jout); i++)
        CHECK(!strcmp(vname(g, g->outputs[i]),
                      cJSON_GetArrayItem(jout, (int)i)->valuestring));
    /* every named tensor */
    const cJSON *vals = cJSON_GetObjectItem(jg, "values");
    size_t named = 0;
    for (size_t i = 0; i < g->n_values; i++) named += g->values[i].name[0] != 0;
    CHECK_MSG(named == (size_t)cJSON_GetArraySize(vals),
              "%s: %zu named tensors, want %d", path, named,
              cJSON_GetArraySize(vals));
    const cJSON *jv;
    cJSON_ArrayForEach(jv, vals) {
        int v = dlp_graph_find(g, jv->string);
        CHECK_MSG(v >= 0, "%s: tensor %s missing", path, jv->string);
        if (v < 0) continue;
        const dlp_value *val = &g->values[v];
        char what[300];
        snprintf(what, sizeof what, "%s: %s", path, jv->string);
        CHECK_MSG((int)val->dtype == cJSON_GetObjectItem(jv, "dtype")->valueint,
                  "%s dtype %d want %d", what, val->dtype,
                  cJSON_GetObjectItem(jv, "dtype")->valueint);
        check_shape(g, what, &val->shape, cJSON_GetObjectItem(jv, "shape"));
        const cJSON *fl = cJSON_GetObjectItem(jv, "flags");
        CHECK_MSG(!!(val->flags & DLP_V_INPUT) == has_flag(fl, "input"),
                  "%s input flag", what);
        CHECK_MSG(!!(val->flags & DLP_V_INITIALIZER) ==
                      has_flag(fl, "initializer"),
                  "%s initializer flag", what);
        CHECK_MSG(!!(val->flags & DLP_V_OUTPUT) == has_flag(fl, "output"),
                  "%s output flag", what);
        CHECK_MSG(!!(val->flags & DLP_V_EXTERNAL) == has_flag(fl, "external"),
                  "%s external flag", what);
        CHECK_MSG(!!(val->flags & DLP_V_OUTER) == has_flag(fl, "outer"),
                  "%s outer flag", what);
        CHECK_MSG(val->stored_bytes ==
                      (int64_t)cJSON_GetObjectItem(jv, "stored_bytes")->valuedouble,
                  "%s stored_bytes %lld", what, (long long)val->stored_bytes);
        /* contents: outer values share the enclosing scope's */
        if (!(val->flags & DLP_V_OUTER))
            check_const(what, cJSON_GetObjectItem(jv, "const"), val->ival,
                        val->fval, val->n_const);
        if (val->flags & DLP_V_OUTER) CHECK(val->producer == -1);
    }
}

static void check_fixture(const char *name) {
    cJSON *j = load_json(name);
    CHECK_MSG(j != NULL, "%s.json missing (run tests/gen_reader_fixtures.py)",
              name);
    dlp_model *m = open_fix(name);
    if (!j || !m) {
        cJSON_Delete(j);
        dlp_model_free(m);
        return;
    }
    dlp_graph *g = &m->graph;
    CHECK(g->opset == cJSON_GetObjectItem(j, "opset")->valueint);
    CHECK(g->ir_version == cJSON_GetObjectItem(j, "ir_version")->valueint);
    const cJSON *jg;
    size_t total = 0;
    cJSON_ArrayForEach(jg, cJSON_GetObjectItem(j, "graphs")) {
        const char *path = cJSON_GetObjectItem(jg, "path")->valuestring;
        dlp_graph *sg = graph_at(g, path);
        CHECK_MSG(sg != NULL, "%s: no graph at %s", name, path);
        if (!sg) continue;
        total += sg->n_nodes;
        check_graph(sg, jg);
    }
    CHECK(total == (size_t)cJSON_GetObjectItem(j, "total_nodes")->valueint);
    /* params: float initializer elements of the main graph */
    int64_t params = 0;
    for (size_t i = 0; i < g->n_values; i++) {
        const dlp_value *v = &g->values[i];
        int64_t n;
        if ((v->flags & DLP_V_INITIALIZER) && dlp_dtype_is_float(v->dtype) &&
            dlp_shape_numel(&v->shape, &n))
            params += n;
    }
    CHECK_MSG(params == (int64_t)cJSON_GetObjectItem(j, "params")->valuedouble,
              "%s: params %lld", name, (long long)params);
    const cJSON *syms = cJSON_GetObjectItem(j, "symbols");
    CHECK(g->n_syms == (size_t)cJSON_GetArraySize(syms));
    const cJSON *s;
    cJSON_ArrayForEach(s, syms) {
        bool found = false;
        for (size_t i = 0; i < g->n_syms; i++)
            found |= !strcmp(g->syms[i], s->valuestring);
        CHECK_MSG(found, "%s: symbol %s", name, s->valuestring);
        CHECK(true);
    }
    cJSON_Delete(j);
    dlp_model_free(m);
}

static void fixture_raw_weights(void) { check_fixture("raw_weights"); }
static void fixture_typed_weights(void) { check_fixture("typed_weights"); }
static void fixture_external_present(void) { check_fixture("external_present"); }
static void fixture_external_absent(void) { check_fixture("external_absent"); }
static void fixture_constants(void) { check_fixture("constants"); }
static void fixture_if_outer(void) { check_fixture("if_outer"); }
static void fixture_value_info(void) { check_fixture("value_info"); }
static void fixture_opset7(void) { check_fixture("opset7"); }
static void fixture_opset21(void) { check_fixture("opset21"); }
static void fixture_ir3_inputs(void) { check_fixture("ir3_inputs"); }
static void fixture_functions(void) {
    check_fixture("functions");
    dlp_model *m = open_fix("functions");
    if (!m) return;
    CHECK(dlp_model_warning_count(m) == 2);
    const char *w = dlp_model_warning(m, 0);
    CHECK(w && strstr(w, "call1") && strstr(w, "LinearRelu") &&
          strstr(w, "not expanded"));
    dlp_model_free(m);
}

/* External data: present -> small int tensor read, no warning; absent ->
 * one warning naming the tensor, still no error. */
static void external_warnings(void) {
    dlp_model *m = open_fix("external_present");
    if (m) {
        CHECK(dlp_model_warning_count(m) == 0);
        int v = dlp_graph_find(&m->graph, "idx");
        CHECK(v >= 0 && m->graph.values[v].ival &&
              m->graph.values[v].ival[199] == 199 * 3 - 7);
        v = dlp_graph_find(&m->graph, "W");
        CHECK(v >= 0 && !m->graph.values[v].fval);
        dlp_model_free(m);
    }
    m = open_fix("external_absent");
    if (m) {
        CHECK(dlp_model_warning_count(m) == 1);
        const char *w = dlp_model_warning(m, 0);
        CHECK(w && strstr(w, "'idx'") && strstr(w, "not found"));
        CHECK(dlp_model_warning(m, 1) == NULL);
        CHECK(dlp_model_warning(m, -1) == NULL);
        dlp_model_free(m);
    }
}

static void bind_and_batch(void) {
    dlp_model *m = open_fix("value_info");
    if (!m) return;
    dlp_error err;
    dlp_graph *g = &m->graph;
    CHECK(dlp_model_bind_dim(m, "seq", 7, &err) == DLP_OK);
    CHECK(dlp_model_bind_dim(m, "nosuch", 7, &err) == DLP_ERR_NOT_FOUND);
    CHECK(strstr(err.msg, "nosuch") && strstr(err.msg, "'batch'") &&
          strstr(err.msg, "'seq'"));
    CHECK(dlp_model_bind_dim(m, "seq", 0, &err) == DLP_ERR_ARG);
    CHECK(strstr(err.msg, "seq") != NULL);
    CHECK(dlp_model_bind_dim(m, "seq", ((int64_t)1 << 31) + 1, &err) ==
          DLP_ERR_ARG);
    CHECK(dlp_model_set_batch(m, 0, &err) == DLP_ERR_ARG);
    CHECK(dlp_model_set_batch(m, 4, &err) == DLP_OK);
    CHECK(m->batch == 4);
    int b = -1, s = -1;
    for (size_t i = 0; i < g->n_syms; i++) {
        if (!strcmp(g->syms[i], "batch")) b = (int)i;
        if (!strcmp(g->syms[i], "seq")) s = (int)i;
    }
    CHECK(b >= 0 && g->sym_values[b] == 4);
    CHECK(s >= 0 && g->sym_values[s] == 7);
    dlp_model_free(m);

    /* fixed batch dims are overridden */
    m = open_fix("opset7");
    if (!m) return;
    CHECK(dlp_model_set_batch(m, 8, &err) == DLP_OK);
    const dlp_value *x = &m->graph.values[m->graph.inputs[0]];
    CHECK(x->shape.dims[0].value == 8 && x->shape.dims[1].value == 3);
    CHECK(dlp_model_bind_dim(m, "batch", 2, &err) == DLP_ERR_NOT_FOUND);
    CHECK(strstr(err.msg, "none") != NULL);
    dlp_model_free(m);
}

static void open_memory_same(void) {
    size_t len;
    char *b = check_slurp(FIX "raw_weights.onnx", &len);
    CHECK(b != NULL);
    if (!b) return;
    dlp_model *m = NULL, *f = open_fix("raw_weights");
    dlp_error err;
    CHECK(dlp_model_open_memory(b, len, "mem", &m, &err) == DLP_OK);
    if (m && f) {
        CHECK(m->graph.n_nodes == f->graph.n_nodes);
        CHECK(m->graph.n_values == f->graph.n_values);
        CHECK(m->path == NULL);
    }
    dlp_model_free(m);
    dlp_model_free(f);
    free(b);
    dlp_model_free(NULL);
    CHECK(dlp_model_open_memory(NULL, 4, "x", &m, &err) == DLP_ERR_ARG);
    CHECK(dlp_model_open("", &m, &err) == DLP_ERR_ARG);
    CHECK(dlp_model_open("tests/fixtures/reader/nope.onnx", &m, &err) ==
          DLP_ERR_IO);
    CHECK(strstr(err.msg, "nope.onnx") != NULL);
    CHECK(dlp_model_open("tests/fixtures/reader", &m, &err) == DLP_ERR_IO);
    CHECK(m == NULL);
}

/* Weight bytes are never touched: a model whose big raw_data payload lies
 * on PROT_NONE pages must open (any read there would fault). The model is
 * x -> MatMul(W) -> y with W float32 [512, 1024] (2 MiB of raw_data). */
static void weights_untouched(void) {
    const size_t rows = 512, cols = 1024, nbytes = rows * cols * 4;
    /* TensorProto: dims=1 x2, data_type=2, name=8, raw_data=9 (last) */
    uint8_t tp[64];
    size_t t = 0;
    tp[t++] = 0x08; tp[t++] = 0x80; tp[t++] = 0x04;            /* 512 */
    tp[t++] = 0x08; tp[t++] = 0x80; tp[t++] = 0x08;            /* 1024 */
    tp[t++] = 0x10; tp[t++] = 0x01;                            /* FLOAT */
    tp[t++] = 0x42; tp[t++] = 0x01; tp[t++] = 'W';             /* name */
    tp[t++] = 0x4a;                                            /* raw */
    size_t rl = nbytes;
    while (rl >= 0x80) { tp[t++] = (uint8_t)(rl | 0x80); rl >>= 7; }
    tp[t++] = (uint8_t)rl;
    size_t tensor_len = t + nbytes;
    /* graph: node (MatMul x,W -> y), input x, output y, initializer */
    const uint8_t node[] = {0x0a, 0x01, 'x', 0x0a, 0x01, 'W', 0x12, 0x01,
                            'y', 0x22, 0x06, 'M', 'a', 't', 'M', 'u', 'l'};
    const uint8_t vi_x[] = {0x0a, 0x01, 'x'};
    const uint8_t vi_y[] = {0x0a, 0x01, 'y'};
    uint8_t gh[32];
    size_t gl = 0;
    size_t graph_len = 2 + sizeof node + 2 + sizeof vi_x + 2 + sizeof vi_y;
    uint8_t ih[8];
    size_t il = 0;
    size_t v = tensor_len;
    ih[il++] = 0x2a;
    while (v >= 0x80) { ih[il++] = (uint8_t)(v | 0x80); v >>= 7; }
    ih[il++] = (uint8_t)v;
    graph_len += il + tensor_len;
    /* model: ir_version=8, opset_import {version 17}, graph */
    const uint8_t mh[] = {0x08, 0x08, 0x42, 0x02, 0x10, 0x11};
    gh[gl++] = 0x3a;
    v = graph_len;
    while (v >= 0x80) { gh[gl++] = (uint8_t)(v | 0x80); v >>= 7; }
    gh[gl++] = (uint8_t)v;
    size_t total = sizeof mh + gl + graph_len;
    long pg = sysconf(_SC_PAGESIZE);
    size_t map_len = (total + 3 * (size_t)pg) & ~((size_t)pg - 1);
    uint8_t *mem = mmap(NULL, map_len, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(mem != MAP_FAILED);
    if (mem == MAP_FAILED) return;
    uint8_t *p = mem;
    memcpy(p, mh, sizeof mh); p += sizeof mh;
    memcpy(p, gh, gl); p += gl;
    *p++ = 0x0a; *p++ = (uint8_t)sizeof node; memcpy(p, node, sizeof node);
    p += sizeof node;
    *p++ = 0x5a; *p++ = (uint8_t)sizeof vi_x; memcpy(p, vi_x, sizeof vi_x);
    p += sizeof vi_x;
    *p++ = 0x62; *p++ = (uint8_t)sizeof vi_y; memcpy(p, vi_y, sizeof vi_y);
    p += sizeof vi_y;
    memcpy(p, ih, il); p += il;
    memcpy(p, tp, t); p += t;
    uint8_t *raw = p; /* nbytes of weights follow: leave them zero */
    CHECK((size_t)(raw + nbytes - mem) == total);
    /* protect every whole page inside the payload */
    uintptr_t lo = ((uintptr_t)raw + (uintptr_t)pg - 1) & ~((uintptr_t)pg - 1);
    uintptr_t hi = ((uintptr_t)raw + nbytes) & ~((uintptr_t)pg - 1);
    CHECK(hi > lo && mprotect((void *)lo, hi - lo, PROT_NONE) == 0);
    dlp_model *m = NULL;
    dlp_error err;
    dlp_status st = dlp_model_open_memory(mem, total, "guarded", &m, &err);
    CHECK_MSG(st == DLP_OK, "%s", err.msg);
    if (m) {
        int w = dlp_graph_find(&m->graph, "W");
        CHECK(w >= 0 && m->graph.values[w].stored_bytes == (int64_t)nbytes);
        CHECK(w >= 0 && !m->graph.values[w].fval);
        CHECK(m->graph.n_nodes == 1 && m->graph.n_inputs == 1);
        dlp_model_free(m);
    }
    munmap(mem, map_len);
}

/* Fuzzer findings (tests/fixtures/reader/fuzz/): the reader opens them. */
static void fuzz_reproducers(void) {
    static const char *const files[] = {"pad_overflow", "slice_overflow"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        char name[64];
        snprintf(name, sizeof name, "fuzz/%s", files[i]);
        dlp_model *m = open_fix(name);
        CHECK(m && m->graph.topo);
        dlp_model_free(m);
    }
}

/* ---- protobuf decoder ---- */

static void pb_varints(void) {
    uint64_t v;
    const uint8_t a[] = {0x96, 0x01};
    const uint8_t *p = a;
    CHECK(dlp_pb_varint(&p, a + 2, &v) && v == 150 && p == a + 2);
    const uint8_t mx[] = {0xff, 0xff, 0xff, 0xff, 0xff,
                          0xff, 0xff, 0xff, 0xff, 0x01};
    p = mx;
    CHECK(dlp_pb_varint(&p, mx + 10, &v) && v == UINT64_MAX);
    const uint8_t over[] = {0xff, 0xff, 0xff, 0xff, 0xff,
                            0xff, 0xff, 0xff, 0xff, 0x02};
    p = over;
    CHECK(!dlp_pb_varint(&p, over + 10, &v)); /* 65 bits */
    const uint8_t eleven[] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
                              0x80, 0x80, 0x80, 0x80, 0x00};
    p = eleven;
    CHECK(!dlp_pb_varint(&p, eleven + 11, &v));
    p = a;
    CHECK(!dlp_pb_varint(&p, a + 1, &v)); /* truncated */
    /* -1 as int64 is a 10-byte varint */
    const uint8_t m1[] = {0xff, 0xff, 0xff, 0xff, 0xff,
                          0xff, 0xff, 0xff, 0xff, 0x01};
    p = m1;
    CHECK(dlp_pb_varint(&p, m1 + 10, &v) && (int64_t)v == -1);
}

static void pb_fields(void) {
    /* field 1 varint 150, field 2 "hi", field 3 fixed32, field 4 fixed64 */
    const uint8_t msg[] = {0x08, 0x96, 0x01, 0x12, 0x02, 'h', 'i',
                           0x1d, 1, 0, 0, 0,
                           0x21, 2, 0, 0, 0, 0, 0, 0, 0};
    dlp_pb r = dlp_pb_begin(msg, sizeof msg);
    dlp_pb_field f;
    dlp_error err;
    CHECK(dlp_pb_next(&r, &f, &err) == DLP_OK && f.num == 1 && f.u == 150);
    CHECK(dlp_pb_next(&r, &f, &err) == DLP_OK && f.num == 2 && f.len == 2 &&
          f.data == msg + 5);
    CHECK(dlp_pb_next(&r, &f, &err) == DLP_OK && f.num == 3 && f.u == 1);
    CHECK(dlp_pb_next(&r, &f, &err) == DLP_OK && f.num == 4 && f.u == 2);
    CHECK(dlp_pb_next(&r, &f, &err) == DLP_OK && f.end);
    /* length past the end */
    const uint8_t bad[] = {0x12, 0x05, 'h', 'i'};
    r = dlp_pb_begin(bad, sizeof bad);
    CHECK(dlp_pb_next(&r, &f, &err) == DLP_ERR_FORMAT);
    CHECK(strstr(err.msg, "declares 5 bytes") != NULL);
    /* field number 0, group wire type, truncated fixed32 */
    const uint8_t z[] = {0x00, 0x01};
    r = dlp_pb_begin(z, 2);
    CHECK(dlp_pb_next(&r, &f, &err) == DLP_ERR_FORMAT);
    const uint8_t grp[] = {0x0b, 0x0c};
    r = dlp_pb_begin(grp, 2);
    CHECK(dlp_pb_next(&r, &f, &err) == DLP_ERR_FORMAT);
    CHECK(strstr(err.msg, "wire type 3") != NULL);
    const uint8_t t32[] = {0x1d, 1, 0};
    r = dlp_pb_begin(t32, 3);
    CHECK(dlp_pb_next(&r, &f, &err) == DLP_ERR_FORMAT);
    /* huge declared length (2^63) */
    const uint8_t huge[] = {0x12, 0xff, 0xff, 0xff, 0xff, 0xff,
                            0xff, 0xff, 0xff, 0x7f, 'x'};
    r = dlp_pb_begin(huge, sizeof huge);
    CHECK(dlp_pb_next(&r, &f, &err) == DLP_ERR_FORMAT);
}

static void pb_packed(void) {
    /* packed varints 1, 300, -1 */
    const uint8_t pk[] = {0x0a, 13, 0x01, 0xac, 0x02, 0xff, 0xff, 0xff, 0xff,
                          0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
    dlp_pb r = dlp_pb_begin(pk, sizeof pk);
    dlp_pb_field f;
    dlp_error err;
    CHECK(dlp_pb_next(&r, &f, &err) == DLP_OK);
    size_t n = 0, got = 0;
    uint64_t out[3];
    CHECK(dlp_pb_count(&f, DLP_PB_VARINT, &n) && n == 3);
    CHECK(dlp_pb_fetch(&f, DLP_PB_VARINT, out, &got, 3) && got == 3);
    CHECK(out[0] == 1 && out[1] == 300 && (int64_t)out[2] == -1);
    got = 0;
    CHECK(!dlp_pb_fetch(&f, DLP_PB_VARINT, out, &got, 2)); /* no room */
    /* packed floats whose length is not a multiple of 4 */
    const uint8_t pf[] = {0x0a, 3, 0, 0, 0};
    r = dlp_pb_begin(pf, sizeof pf);
    CHECK(dlp_pb_next(&r, &f, &err) == DLP_OK);
    CHECK(!dlp_pb_count(&f, DLP_PB_I32, &n));
    /* a packed varint run ending mid-varint */
    const uint8_t pt[] = {0x0a, 2, 0x01, 0x80};
    r = dlp_pb_begin(pt, sizeof pt);
    CHECK(dlp_pb_next(&r, &f, &err) == DLP_OK);
    CHECK(!dlp_pb_count(&f, DLP_PB_VARINT, &n));
}

static void pb_depth(void) {
    /* 100 nested length-delimited fields: sub() must stop at the limit */
    enum { D = 100 };
    uint8_t buf[4 * D];
    size_t len = 0; /* built inside out at the end of buf */
    for (int i = 0; i < D; i++) {
        size_t inner = len;
        uint8_t hdr[4];
        size_t h = 0;
        hdr[h++] = 0x0a;
        if (inner < 128) {
            hdr[h++] = (uint8_t)inner;
        } else {
            hdr[h++] = (uint8_t)(0x80 | (inner & 0x7f));
            hdr[h++] = (uint8_t)(inner >> 7);
        }
        memcpy(buf + sizeof buf - inner - h, hdr, h);
        len = inner + h;
    }
    const uint8_t *start = buf + sizeof buf - len;
    dlp_pb r = dlp_pb_begin(start, len), s;
    dlp_pb_field f;
    dlp_error err;
    dlp_status st = DLP_OK;
    int depth = 0;
    while (st == DLP_OK) {
        if (dlp_pb_next(&r, &f, &err) != DLP_OK || f.end) break;
        st = dlp_pb_sub(&r, &f, "nested", &s, &err);
        if (st == DLP_OK) {
            r = s;
            depth++;
        }
    }
    CHECK(st == DLP_ERR_LIMIT && depth == DLP_PB_MAX_DEPTH);
    CHECK(strstr(err.msg, "nested deeper") != NULL);
}

int main(void) {
    RUN(pb_varints);
    RUN(pb_fields);
    RUN(pb_packed);
    RUN(pb_depth);
    RUN(fixture_raw_weights);
    RUN(fixture_typed_weights);
    RUN(fixture_external_present);
    RUN(fixture_external_absent);
    RUN(fixture_constants);
    RUN(fixture_if_outer);
    RUN(fixture_value_info);
    RUN(fixture_opset7);
    RUN(fixture_opset21);
    RUN(fixture_ir3_inputs);
    RUN(fixture_functions);
    RUN(external_warnings);
    RUN(bind_and_batch);
    RUN(open_memory_same);
    RUN(weights_untouched);
    RUN(fuzz_reproducers);
    return CHECK_DONE();
}
