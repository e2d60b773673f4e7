/*
 * test_cost.c — the cost model's per-operator formulas on hand-built graphs
 * (graph.h API, independent of the ONNX reader and of shape inference).
 * Expected values are worked out by hand in each test's comment.
 */
#include "check.h"
#include "cost/cost.h"
#include "model/model.h"

#include <cjson/cJSON.h>
#include <stdarg.h>

static dlp_arena arena;
static dlp_graph g;

static void reset(void) {
    dlp_graph_free(&g);
    dlp_arena_free(&arena);
    memset(&arena, 0, sizeof arena);
    dlp_error err;
    DLP_ASSERT(dlp_graph_init(&g, &arena, NULL, &err) == DLP_OK);
    g.opset = 17;
}

/* A float32 value with the given dims (-1 = unknown); rank -1 for none. */
static int val(dlp_graph *gr, const char *name, int rank, ...) {
    int v = dlp_graph_value(gr, name, strlen(name));
    DLP_ASSERT(v >= 0);
    dlp_value *x = &gr->values[v];
    x->dtype = DLP_DT_FLOAT;
    x->shape.rank = rank;
    va_list ap;
    va_start(ap, rank);
    for (int i = 0; i < rank; i++) {
        x->shape.dims[i].value = va_arg(ap, int);
        x->shape.dims[i].sym = -1;
    }
    va_end(ap);
    return v;
}

static int init(dlp_graph *gr, int v) {
    gr->values[v].flags |= DLP_V_INITIALIZER;
    return v;
}

/* Node with inputs/outputs given as value indices (terminated by list
 * lengths); attributes added with attr_*. */
static dlp_node *node(dlp_graph *gr, const char *op, int ni, const int *in,
                      int no, const int *out) {
    int k = dlp_graph_add_node(gr);
    DLP_ASSERT(k >= 0);
    dlp_node *n = &gr->nodes[k];
    n->name = op;
    n->op_type = op;
    n->n_inputs = ni;
    n->n_outputs = no;
    n->inputs = dlp_arena_calloc(gr->arena, (size_t)(ni ? ni : 1), sizeof(int));
    n->outputs = dlp_arena_calloc(gr->arena, (size_t)(no ? no : 1), sizeof(int));
    n->attrs = dlp_arena_calloc(gr->arena, 8, sizeof(dlp_attr));
    if (ni) memcpy(n->inputs, in, (size_t)ni * sizeof(int));
    if (no) memcpy(n->outputs, out, (size_t)no * sizeof(int));
    for (int i = 0; i < no; i++) gr->values[out[i]].producer = k;
    return n;
}

static dlp_attr *attr(dlp_node *n, const char *name, dlp_attr_type t) {
    dlp_attr *a = &n->attrs[n->n_attrs++];
    a->name = name;
    a->type = t;
    a->tensor = -1;
    return a;
}
static void attr_int(dlp_node *n, const char *name, int64_t v) {
    attr(n, name, DLP_ATTR_INT)->i = v;
}
static void attr_float(dlp_node *n, const char *name, double v) {
    attr(n, name, DLP_ATTR_FLOAT)->f = v;
}
static void attr_str(dlp_node *n, const char *name, const char *s) {
    attr(n, name, DLP_ATTR_STRING)->s = s;
}
static void attr_ints(dlp_node *n, const char *name, int cnt, ...) {
    dlp_attr *a = attr(n, name, DLP_ATTR_INTS);
    a->n = cnt;
    a->ints = dlp_arena_calloc(&arena, (size_t)cnt, sizeof(int64_t));
    va_list ap;
    va_start(ap, cnt);
    for (int i = 0; i < cnt; i++) a->ints[i] = va_arg(ap, int);
    va_end(ap);
}

#define IN(...) (int)(sizeof((int[]){__VA_ARGS__}) / sizeof(int)), (int[]){__VA_ARGS__}

/* ResNet-50 stem: X [1,3,224,224] * W [64,3,7,7] stride 2 -> [1,64,112,112].
 * MACs = 64*112*112 * 3*7*7 = 118,013,952 (the well-known 118 M);
 * FLOPs = 2 MACs + 802,816 bias adds; params 9408 + 64; weights 4 bytes. */
static void conv_stem(void) {
    reset();
    int x = val(&g, "x", 4, 1, 3, 224, 224);
    int w = init(&g, val(&g, "w", 4, 64, 3, 7, 7));
    int b = init(&g, val(&g, "b", 1, 64));
    int y = val(&g, "y", 4, 1, 64, 112, 112);
    dlp_node *n = node(&g, "Conv", IN(x, w, b), IN(y));
    attr_ints(n, "kernel_shape", 2, 7, 7);
    dlp_cost_graph(&g);
    CHECK(n->cost.known);
    CHECK_CLOSE(n->cost.macs, 118013952.0, 0);
    CHECK_CLOSE(n->cost.flops, 2 * 118013952.0 + 802816.0, 0);
    CHECK(n->cost.params == 9408 + 64);
    CHECK(n->cost.weight_bytes == (9408 + 64) * 4);
    CHECK(n->cost.in_bytes == 3 * 224 * 224 * 4);
    CHECK(n->cost.out_elems == 802816);
    CHECK(n->cost.out_bytes == 802816 * 4);
}

/* Depthwise 3x3, 32 groups: W [32,1,3,3], Y [1,32,56,56]:
 * MACs = 32*56*56 * 1*9 = 903,168; no bias: FLOPs = 2 MACs. */
static void conv_depthwise(void) {
    reset();
    int x = val(&g, "x", 4, 1, 32, 56, 56);
    int w = init(&g, val(&g, "w", 4, 32, 1, 3, 3));
    int y = val(&g, "y", 4, 1, 32, 56, 56);
    dlp_node *n = node(&g, "Conv", IN(x, w), IN(y));
    attr_int(n, "group", 32);
    dlp_cost_graph(&g);
    CHECK_CLOSE(n->cost.macs, 903168.0, 0);
    CHECK_CLOSE(n->cost.flops, 2 * 903168.0, 0);
    CHECK(n->cost.params == 288);
}

/* ConvTranspose X [1,16,8,8], W [16,8,4,4] stride 2 -> [1,8,16,16]: each
 * input element is scattered to 8 channels x 16 taps:
 * MACs = 1024 * 8 * 16 = 131,072 (not out elems x Cin x k = 524,288). */
static void conv_transpose(void) {
    reset();
    int x = val(&g, "x", 4, 1, 16, 8, 8);
    int w = init(&g, val(&g, "w", 4, 16, 8, 4, 4));
    int y = val(&g, "y", 4, 1, 8, 16, 16);
    dlp_node *n = node(&g, "ConvTranspose", IN(x, w), IN(y));
    dlp_cost_graph(&g);
    CHECK_CLOSE(n->cost.macs, 131072.0, 0);
}

/* Batched MatMul [2,4,8,16] x [2,4,16,32] -> [2,4,8,32]: 2*4*8*32*16. */
static void matmul_batched(void) {
    reset();
    int a = val(&g, "a", 4, 2, 4, 8, 16);
    int b = val(&g, "b", 4, 2, 4, 16, 32);
    int y = val(&g, "y", 4, 2, 4, 8, 32);
    dlp_node *n = node(&g, "MatMul", IN(a, b), IN(y));
    dlp_cost_graph(&g);
    CHECK_CLOSE(n->cost.macs, 32768.0, 0);
    CHECK_CLOSE(n->cost.flops, 65536.0, 0);
    CHECK(n->cost.params == 0);   /* no initializer read */
    CHECK(n->cost.in_bytes == (2 * 4 * 8 * 16 + 2 * 4 * 16 * 32) * 4);
}

/* 1-D A: [16] x [3,16,5] -> [3,5]: 15 outputs x K 16 = 240 MACs. */
static void matmul_vector(void) {
    reset();
    int a = val(&g, "a", 1, 16);
    int b = init(&g, val(&g, "b", 3, 3, 16, 5));
    int y = val(&g, "y", 2, 3, 5);
    dlp_node *n = node(&g, "MatMul", IN(a, b), IN(y));
    dlp_cost_graph(&g);
    CHECK_CLOSE(n->cost.macs, 240.0, 0);
    CHECK(n->cost.params == 240);
}

/* Gemm transA: A [16,8] -> M 8, K 16; B [16,4]; Y [8,4]: MACs 512;
 * FLOPs 1024 + 32 (alpha 2) + 32 (C add) + 32 (beta 0.5) = 1120. */
static void gemm(void) {
    reset();
    int a = val(&g, "a", 2, 16, 8);
    int b = init(&g, val(&g, "b", 2, 16, 4));
    int c = init(&g, val(&g, "c", 1, 4));
    int y = val(&g, "y", 2, 8, 4);
    dlp_node *n = node(&g, "Gemm", IN(a, b, c), IN(y));
    attr_int(n, "transA", 1);
    attr_float(n, "alpha", 2.0);
    attr_float(n, "beta", 0.5);
    dlp_cost_graph(&g);
    CHECK_CLOSE(n->cost.macs, 512.0, 0);
    CHECK_CLOSE(n->cost.flops, 1120.0, 0);
    CHECK(n->cost.params == 68);
}

/* Einsum: contraction b,i,j,k = 2*3*4*5 = 120 MACs; with an ellipsis
 * [7,3,4] x [7,4,5] = 7 * 60 = 420; one operand "ij->i" on [3,4] sums 12. */
static void einsum(void) {
    reset();
    int a = val(&g, "a", 3, 2, 3, 4), b = val(&g, "b", 3, 2, 4, 5);
    int y = val(&g, "y", 3, 2, 3, 5);
    dlp_node *n = node(&g, "Einsum", IN(a, b), IN(y));
    attr_str(n, "equation", "bij,bjk->bik");
    int c = val(&g, "c", 3, 7, 3, 4), d = val(&g, "d", 3, 7, 4, 5);
    int z = val(&g, "z", 3, 7, 3, 5);
    dlp_node *m = node(&g, "Einsum", IN(c, d), IN(z));
    attr_str(m, "equation", "...ij,...jk->...ik");
    int e = val(&g, "e", 2, 3, 4), f = val(&g, "f", 1, 3);
    dlp_node *r = node(&g, "Einsum", IN(e), IN(f));
    attr_str(r, "equation", "ij->i");
    dlp_cost_graph(&g);
    n = &g.nodes[0]; m = &g.nodes[1]; r = &g.nodes[2];
    CHECK_CLOSE(n->cost.macs, 120.0, 0);
    CHECK_CLOSE(m->cost.macs, 420.0, 0);
    CHECK_CLOSE(r->cost.macs, 0.0, 0);
    CHECK_CLOSE(r->cost.flops, 12.0, 0);
    CHECK(n->cost.known && m->cost.known && r->cost.known);
}

/* LSTM X [5,2,10], W [1,80,10], R [1,80,20] (hidden 20, 4 gates):
 * MACs = 5 steps * 2 batch * 80 * (10 + 20) = 24,000. */
static void lstm(void) {
    reset();
    int x = val(&g, "x", 3, 5, 2, 10);
    int w = init(&g, val(&g, "w", 3, 1, 80, 10));
    int r = init(&g, val(&g, "r", 3, 1, 80, 20));
    int y = val(&g, "y", 4, 5, 1, 2, 20);
    dlp_node *n = node(&g, "LSTM", IN(x, w, r), IN(y));
    dlp_cost_graph(&g);
    CHECK_CLOSE(n->cost.macs, 24000.0, 0);
    CHECK(n->cost.params == 800 + 1600);
}

/* FLOP-only ops with the constants of docs/COST.md. */
static void flops_only(void) {
    reset();
    int a = val(&g, "a", 2, 2, 3), b = init(&g, val(&g, "b", 1, 3));
    int s = val(&g, "s", 2, 2, 3);
    node(&g, "Add", IN(a, b), IN(s));                       /* 6 */
    int sm = val(&g, "sm", 2, 2, 3);
    node(&g, "Softmax", IN(s), IN(sm));                     /* 5*6 = 30 */
    int sc = init(&g, val(&g, "sc", 1, 3)), bi = init(&g, val(&g, "bi", 1, 3));
    int ln = val(&g, "ln", 2, 2, 3);
    node(&g, "LayerNormalization", IN(sm, sc, bi), IN(ln)); /* 7*6 = 42 */
    int x = val(&g, "x", 4, 1, 4, 7, 7);
    int bs = init(&g, val(&g, "bs", 1, 4)), bb = init(&g, val(&g, "bb", 1, 4));
    int bm = init(&g, val(&g, "bm", 1, 4)), bv = init(&g, val(&g, "bv", 1, 4));
    int bn = val(&g, "bn", 4, 1, 4, 7, 7);
    node(&g, "BatchNormalization", IN(x, bs, bb, bm, bv), IN(bn)); /* 392 */
    int mp = val(&g, "mp", 4, 1, 4, 3, 3);
    dlp_node *p = node(&g, "MaxPool", IN(bn), IN(mp));
    attr_ints(p, "kernel_shape", 2, 3, 3);                  /* 36*9 = 324 */
    int gp = val(&g, "gp", 4, 1, 4, 1, 1);
    node(&g, "GlobalAveragePool", IN(bn), IN(gp));          /* 196 */
    int rs = val(&g, "rs", 2, 1, 4);
    node(&g, "Reshape", IN(gp), IN(rs));                    /* 0 */
    int sum = val(&g, "sum", 2, 1, 4);
    node(&g, "Sum", IN(rs, rs, rs), IN(sum));               /* 2*4 = 8 */
    dlp_cost_graph(&g);
    const double want[] = {6, 30, 42, 392, 324, 196, 0, 8};
    for (size_t i = 0; i < g.n_nodes; i++) {
        CHECK_MSG(g.nodes[i].cost.flops == want[i], "%s: %g != %g",
                  g.nodes[i].op_type, g.nodes[i].cost.flops, want[i]);
        CHECK(g.nodes[i].cost.macs == 0);
        CHECK(g.nodes[i].cost.known);
    }
    CHECK(g.nodes[3].cost.params == 16);
}

/* Unknown shapes and unknown ops: known = false, costs 0. */
static void unknown(void) {
    reset();
    int x = val(&g, "x", 4, -1, 3, 224, 224);
    int w = init(&g, val(&g, "w", 4, 64, 3, 7, 7));
    int y = val(&g, "y", 4, -1, 64, 112, 112);
    dlp_node *n = node(&g, "Conv", IN(x, w), IN(y));
    int z = val(&g, "z", -1);
    dlp_node *u = node(&g, "FooBar", IN(y), IN(z));
    int q = val(&g, "q", 2, 2, 2);
    int r = val(&g, "r", 2, 2, 2);
    dlp_node *v = node(&g, "Relu", IN(q), IN(r));
    v->domain = "com.example";   /* a foreign domain is not ours to cost */
    dlp_cost_graph(&g);
    n = &g.nodes[0]; u = &g.nodes[1]; v = &g.nodes[2];
    CHECK(!n->cost.known && n->cost.macs == 0);
    CHECK(n->cost.params == 9408);   /* weights are known regardless */
    CHECK(!u->cost.known && u->cost.flops == 0);
    CHECK(!v->cost.known && v->cost.flops == 0);
    CHECK(!dlp_cost_op_known("", "FooBar"));
    CHECK(dlp_cost_op_known("", "Conv"));
}

/* A subgraph node reading an initializer of the enclosing graph counts it
 * as its parameters; subgraph nodes are costed. */
static void subgraph_outer(void) {
    reset();
    int c = val(&g, "cond", 0);
    int w = init(&g, val(&g, "w", 2, 8, 8));
    (void)w;
    int y = val(&g, "y", 2, 4, 8);
    dlp_node *n = node(&g, "If", IN(c), IN(y));
    dlp_graph *sub = dlp_arena_alloc(&arena, sizeof *sub);
    dlp_error err;
    CHECK(dlp_graph_init(sub, &arena, &g, &err) == DLP_OK);
    int x = val(sub, "x", 2, 4, 8);
    sub->values[x].flags |= DLP_V_INPUT;
    int wo = val(sub, "w", 2, 8, 8);
    sub->values[wo].flags |= DLP_V_OUTER;
    int o = val(sub, "o", 2, 4, 8);
    node(sub, "MatMul", IN(x, wo), IN(o));
    dlp_attr *a = attr(n, "then_branch", DLP_ATTR_GRAPH);
    a->graph = sub;
    dlp_cost_graph(&g);
    CHECK(sub->nodes[0].cost.params == 64);
    CHECK_CLOSE(sub->nodes[0].cost.macs, 4 * 8 * 8.0, 0);
    CHECK(g.nodes[0].cost.known);
    dlp_graph_free(sub);   /* dlp_graph_free(&g) frees attribute graphs too */
    a->graph = NULL;
}

/* Summary and JSON of a hand-built model (no reader, no shape inference):
 *   x [1,4] f32, cond bool scalar: inputs; W [4,4] initializer
 *   A MatMul(x, W) -> a; B Relu(a) -> b; C Add(a, b) -> c;
 *   K Constant -> k [1]; D Mul(c, k) -> d (output);
 *   E If(cond) -> e [1,4] (output), then-branch: Identity(x captured) -> y.
 * Topological order (the file's, dlp_graph_toposort): A B C K D E.
 * Live bytes: start x 16 + cond 1 = 17; A +16 = 33; B +16 = 49; C +16 = 65
 * (peak; x lives on, read last by E's branch), a, b die: 33; D +16 = 49,
 * c dies: 33; E +16 = 49, x and cond die: 32.
 * activation bytes: x a b c d e y 7 x 16 + cond 1 = 113 (k: Constant).
 * tensors: x cond W a b c k d e + y = 10 (the captured x not again).
 * edges: a->B, a->C, b->C, c->D, k->D = 5. nodes: 6 + 1 = 7.
 * MACs 16; FLOPs 32 + 4 + 4 + 4 = 44. */
static void summary_json(void) {
    dlp_model *m = calloc(1, sizeof *m);
    dlp_error err;
    CHECK(dlp_graph_init(&m->graph, &m->arena, NULL, &err) == DLP_OK);
    dlp_graph *gr = &m->graph;
    gr->opset = 17;
    int x = val(gr, "x", 2, 1, 4);
    int cond = val(gr, "cond", 0);
    gr->values[cond].dtype = DLP_DT_BOOL;
    gr->values[x].flags |= DLP_V_INPUT;
    gr->values[cond].flags |= DLP_V_INPUT;
    dlp_graph_add_input(gr, x);
    dlp_graph_add_input(gr, cond);
    int w = init(gr, val(gr, "W", 2, 4, 4));
    int a = val(gr, "a", 2, 1, 4), b = val(gr, "b", 2, 1, 4);
    int c = val(gr, "c", 2, 1, 4), k = val(gr, "k", 1, 1);
    int d = val(gr, "d", 2, 1, 4), e = val(gr, "e", 2, 1, 4);
    node(gr, "MatMul", IN(x, w), IN(a));
    node(gr, "Relu", IN(a), IN(b));
    node(gr, "Add", IN(a, b), IN(c));
    node(gr, "Constant", 0, NULL, IN(k));
    node(gr, "Mul", IN(c, k), IN(d));
    dlp_node *nif = node(gr, "If", IN(cond), IN(e));
    dlp_graph_add_output(gr, d);
    dlp_graph_add_output(gr, e);
    gr->values[d].flags |= DLP_V_OUTPUT;
    gr->values[e].flags |= DLP_V_OUTPUT;
    dlp_graph *sub = dlp_arena_alloc(&m->arena, sizeof *sub);
    CHECK(dlp_graph_init(sub, &m->arena, gr, &err) == DLP_OK);
    int xo = val(sub, "x", 2, 1, 4);
    sub->values[xo].flags |= DLP_V_OUTER;
    int y = val(sub, "y", 2, 1, 4);
    node(sub, "Identity", IN(xo), IN(y));
    dlp_graph_add_output(sub, y);
    dlp_attr *at = attr(nif, "then_branch", DLP_ATTR_GRAPH);
    at->graph = sub;
    CHECK(dlp_graph_toposort(gr, &err) == DLP_OK);
    CHECK(dlp_graph_toposort(sub, &err) == DLP_OK);
    dlp_cost_graph(gr);
    dlp_summary s;
    CHECK(dlp_model_summary(m, &s) == DLP_ERR_ARG);  /* not analysed yet */
    char *js = NULL;
    CHECK(dlp_model_to_json(m, &js, &err) == DLP_ERR_ARG && !js);
    m->analyzed = true;
    CHECK(dlp_model_summary(m, &s) == DLP_OK);
    CHECK(s.nodes == 7);
    CHECK(s.edges == 5);
    CHECK(s.params == 16);
    CHECK(s.weight_bytes == 64);
    CHECK(s.tensors == 10);
    CHECK(s.activation_bytes == 113);
    CHECK_MSG(s.peak_activation_bytes == 65, "peak %lld",
              (long long)s.peak_activation_bytes);
    CHECK(s.unshaped_tensors == 0);
    CHECK_CLOSE(s.macs, 16.0, 0);
    CHECK_CLOSE(s.flops, 44.0, 0);
    CHECK(s.opset == 17);
    CHECK(dlp_model_to_json(m, &js, &err) == DLP_OK && js);
    cJSON *root = js ? cJSON_Parse(js) : NULL;
    CHECK(root != NULL);
    if (root) {
        cJSON *sum = cJSON_GetObjectItem(root, "summary");
        CHECK(cJSON_GetNumberValue(cJSON_GetObjectItem(sum, "peak_activation_bytes")) == 65);
        cJSON *nodes = cJSON_GetObjectItem(root, "nodes");
        CHECK(cJSON_GetArraySize(nodes) == 7);
        cJSON *n0 = cJSON_GetArrayItem(nodes, 0);
        CHECK(!strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(n0, "op")), "MatMul"));
        CHECK(cJSON_GetNumberValue(cJSON_GetObjectItem(n0, "macs")) == 16);
        cJSON *o = cJSON_GetArrayItem(cJSON_GetObjectItem(n0, "outputs"), 0);
        CHECK(!strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(o, "dtype")), "float32"));
        CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(o, "shape")) == 2);
        /* the If's branch node follows it and names it as parent */
        const char *par = cJSON_GetStringValue(
            cJSON_GetObjectItem(cJSON_GetArrayItem(nodes, 6), "parent"));
        CHECK(par && !strcmp(par, "If"));
        CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(root, "warnings")) == 0);
        cJSON_Delete(root);
    }
    free(js);
    /* an unknown dim: symbol string in JSON, counted as unshaped */
    gr->values[b].shape.dims[0].value = -1;
    gr->values[b].shape.dims[0].sym = dlp_graph_sym(gr, "batch", 5);
    CHECK(dlp_model_summary(m, &s) == DLP_OK && s.unshaped_tensors == 1);
    CHECK(dlp_model_to_json(m, &js, &err) == DLP_OK);
    CHECK(js && strstr(js, "\"shape\":[\"batch\",4]"));
    free(js);
    dlp_model_free(m);
}

int main(void) {
    RUN(conv_stem);
    RUN(conv_depthwise);
    RUN(conv_transpose);
    RUN(matmul_batched);
    RUN(matmul_vector);
    RUN(gemm);
    RUN(einsum);
    RUN(lstm);
    RUN(flops_only);
    RUN(unknown);
    RUN(subgraph_outer);
    RUN(summary_json);
    dlp_graph_free(&g);
    dlp_arena_free(&arena);
    return CHECK_DONE();
}
