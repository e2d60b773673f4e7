/*
 * test_bad_input.c — hostile and broken model files. Each case is crafted
 * here as protobuf bytes (a tiny writer below) or derived from a real
 * fixture, opened from memory or a temp file, and must fail with the right
 * status and a one-line message naming the problem — never crash, hang or
 * allocate without bound (this binary also runs under ASan + UBSan).
 */
#include "check.h"
#include "model/model.h"
#include "onnx/onnx.h"

#include <sys/stat.h>
#include <unistd.h>

/* ---- a minimal protobuf writer ---- */
typedef struct {
    uint8_t *b;
    size_t n, cap;
} buf;

static void put(buf *o, const void *p, size_t n) {
    if (!n) return;
    if (o->n + n > o->cap) {
        size_t c = o->cap ? o->cap : 64;
        while (c < o->n + n) c *= 2;
        uint8_t *nb = realloc(o->b, c);
        if (!nb) abort();
        o->b = nb;
        o->cap = c;
    }
    memcpy(o->b + o->n, p, n);
    o->n += n;
}
static void varint(buf *o, uint64_t v) {
    uint8_t t[10];
    size_t k = 0;
    do {
        t[k] = (uint8_t)(v & 0x7f);
        v >>= 7;
        if (v) t[k] |= 0x80;
        k++;
    } while (v);
    put(o, t, k);
}
static void tag(buf *o, int f, int w) { varint(o, (uint64_t)f << 3 | (uint64_t)w); }
static void pint(buf *o, int f, int64_t v) { tag(o, f, 0); varint(o, (uint64_t)v); }
static void pbytes(buf *o, int f, const void *p, size_t n) {
    tag(o, f, 2);
    varint(o, n);
    put(o, p, n);
}
static void pstr(buf *o, int f, const char *s) { pbytes(o, f, s, strlen(s)); }
static void pmsg(buf *o, int f, buf *m) { /* consumes m */
    pbytes(o, f, m->b, m->n);
    free(m->b);
    memset(m, 0, sizeof *m);
}
static void bfree(buf *o) { free(o->b); memset(o, 0, sizeof *o); }

/* NodeProto */
static void node(buf *g, const char *op, const char *name, const char *in0,
                 const char *in1, const char *out) {
    buf n = {0};
    if (in0) pstr(&n, 1, in0);
    if (in1) pstr(&n, 1, in1);
    if (out) pstr(&n, 2, out);
    if (name) pstr(&n, 3, name);
    if (op) pstr(&n, 4, op);
    pmsg(g, 1, &n);
}
/* ValueInfoProto with a float tensor type of the given dims */
static void vinfo(buf *g, int field, const char *name, int rank,
                  const int64_t *dims) {
    buf vi = {0}, tp = {0}, tt = {0}, sh = {0};
    pstr(&vi, 1, name);
    pint(&tt, 1, 1);
    for (int i = 0; i < rank; i++) {
        buf d = {0};
        pint(&d, 1, dims[i]);
        pmsg(&sh, 1, &d);
    }
    pmsg(&tt, 2, &sh);
    pmsg(&tp, 1, &tt);
    pmsg(&vi, 2, &tp);
    pmsg(g, field, &vi);
}
/* TensorProto initializer (dtype, dims, optional raw bytes) */
static void init(buf *g, const char *name, int dtype, int rank,
                 const int64_t *dims, const void *raw, size_t rawlen) {
    buf t = {0};
    for (int i = 0; i < rank; i++) pint(&t, 1, dims[i]);
    pint(&t, 2, dtype);
    pstr(&t, 8, name);
    if (raw) pbytes(&t, 9, raw, rawlen);
    pmsg(g, 5, &t);
}
/* ModelProto around graph g (consumed); opset < 0: no opset_import */
static buf model(buf *g, int64_t opset) {
    buf m = {0};
    pint(&m, 1, 8);
    if (opset >= 0) {
        buf o = {0};
        pstr(&o, 1, "");
        pint(&o, 2, opset);
        pmsg(&m, 8, &o);
    }
    pmsg(&m, 7, g);
    return m;
}

static dlp_status open_buf(const buf *b, dlp_error *err) {
    dlp_model *m = NULL;
    memset(err, 0, sizeof *err);
    dlp_status st = dlp_model_open_memory(b->b, b->n, "test", &m, err);
    if (st == DLP_OK) dlp_model_free(m);
    else CHECK(m == NULL && err->msg[0] && !strchr(err->msg, '\n'));
    if (getenv("DLP_VERBOSE") && st != DLP_OK) printf("  -> %s\n", err->msg);
    return st;
}

/* one-line input x -> Relu -> y graph: a valid baseline */
static buf relu_graph(void) {
    buf g = {0};
    int64_t d[2] = {1, 4};
    vinfo(&g, 11, "x", 2, d);
    node(&g, "Relu", "relu", "x", NULL, "y");
    vinfo(&g, 12, "y", 2, d);
    return g;
}

#define EXPECT(st, code, ...)                                                \
    do {                                                                     \
        const char *subs[] = {__VA_ARGS__};                                  \
        CHECK_MSG((st) == (code), "status %d (%s), want %d", (st), err.msg,  \
                  (code));                                                   \
        for (size_t i_ = 0; i_ < sizeof subs / sizeof *subs; i_++)           \
            CHECK_MSG(strstr(err.msg, subs[i_]) != NULL,                     \
                      "message '%s' lacks '%s'", err.msg, subs[i_]);         \
    } while (0)

static void baseline_ok(void) {
    dlp_error err;
    buf g = relu_graph(), m = model(&g, 17);
    CHECK(open_buf(&m, &err) == DLP_OK);
    bfree(&m);
}

static void empty_and_garbage(void) {
    dlp_error err;
    buf e = {0};
    uint8_t z = 0;
    e.b = &z;
    EXPECT(open_buf(&e, &err), DLP_ERR_FORMAT, "not an ONNX model", "empty");
    /* empty file on disk */
    char path[] = "/tmp/dlp_bad_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd >= 0) {
        close(fd);
        dlp_model *m = NULL;
        EXPECT(dlp_model_open(path, &m, &err), DLP_ERR_FORMAT, "empty");
        /* a text file */
        FILE *f = fopen(path, "w");
        if (f) {
            fputs("{\"this\": \"is json, not onnx\"}\n", f);
            fclose(f);
        }
        EXPECT(dlp_model_open(path, &m, &err), DLP_ERR_FORMAT,
               "not an ONNX model");
        CHECK(m == NULL);
        unlink(path);
    }
    /* random bytes: never OK, always one line */
    uint64_t s = 12345;
    uint8_t rb[4096];
    int ok = 0;
    for (int it = 0; it < 2000; it++) {
        size_t n = 1 + (size_t)(s % sizeof rb);
        for (size_t i = 0; i < n; i++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            rb[i] = (uint8_t)(s >> 56);
        }
        buf r = {rb, n, n};
        ok += open_buf(&r, &err) == DLP_OK;
    }
    CHECK(ok == 0);
    /* over-long varint as the first tag */
    uint8_t ov[12];
    memset(ov, 0xff, sizeof ov);
    buf o = {ov, sizeof ov, sizeof ov};
    EXPECT(open_buf(&o, &err), DLP_ERR_FORMAT, "not an ONNX model");
}

static void truncated_files(void) {
    /* every prefix of a real torch export must fail cleanly */
    FILE *f = fopen("tests/fixtures/reader/raw_weights.onnx", "rb");
    CHECK(f != NULL);
    if (!f) return;
    static uint8_t data[1 << 16];
    size_t n = fread(data, 1, sizeof data, f);
    fclose(f);
    dlp_error err;
    int ok = 0, trunc_msgs = 0;
    for (size_t len = 1; len < n; len++) {
        buf b = {data, len, len};
        dlp_status st = open_buf(&b, &err);
        ok += st == DLP_OK;
        trunc_msgs += strstr(err.msg, "truncated") != NULL;
    }
    CHECK_MSG(ok == 0, "%d prefixes opened", ok);
    CHECK(trunc_msgs > (int)n / 2);
    buf full = {data, n, n};
    CHECK(open_buf(&full, &err) == DLP_OK);
}

static void other_protobuf(void) {
    dlp_error err;
    /* field 1 is a string, not ir_version's varint */
    buf a = {0};
    pstr(&a, 1, "hello");
    pint(&a, 2, 5);
    EXPECT(open_buf(&a, &err), DLP_ERR_FORMAT, "not an ONNX model",
           "ir_version");
    bfree(&a);
    /* a valid protobuf of another schema, no field 7 */
    buf b = {0};
    pint(&b, 1, 3);
    pstr(&b, 2, "producer");
    pint(&b, 3, 99);
    EXPECT(open_buf(&b, &err), DLP_ERR_FORMAT, "not an ONNX model",
           "no graph");
    bfree(&b);
    /* field 7 holds a message of unrelated fields */
    buf c = {0}, inner = {0};
    pint(&inner, 3, 1);
    pint(&inner, 4, 2);
    pstr(&c, 2, "x");
    pmsg(&c, 7, &inner);
    EXPECT(open_buf(&c, &err), DLP_ERR_FORMAT, "not an ONNX model",
           "no nodes");
    bfree(&c);
    /* a bare TensorProto (an ONNX test-data .pb file) */
    buf t = {0};
    pint(&t, 1, 2);
    pint(&t, 1, 3);
    pint(&t, 2, 1);
    pstr(&t, 8, "input_0");
    float raw[6] = {0};
    pbytes(&t, 9, raw, sizeof raw);
    EXPECT(open_buf(&t, &err), DLP_ERR_FORMAT, "not an ONNX model");
    bfree(&t);
    /* a bare GraphProto (the graph without its ModelProto) */
    buf gp = relu_graph();
    EXPECT(open_buf(&gp, &err), DLP_ERR_FORMAT, "not an ONNX model");
    bfree(&gp);
    /* field 7 as a varint */
    buf d = {0};
    pint(&d, 7, 1);
    EXPECT(open_buf(&d, &err), DLP_ERR_FORMAT, "not an ONNX model", "graph");
    bfree(&d);
}

static void opsets(void) {
    dlp_error err;
    buf g = relu_graph(), m = model(&g, -1);
    EXPECT(open_buf(&m, &err), DLP_ERR_FORMAT, "no opset_import");
    bfree(&m);
    g = relu_graph();
    m = model(&g, 5);
    EXPECT(open_buf(&m, &err), DLP_ERR_UNSUPPORTED, "opset 5", "7 to 23");
    bfree(&m);
    g = relu_graph();
    m = model(&g, 99);
    EXPECT(open_buf(&m, &err), DLP_ERR_UNSUPPORTED, "opset 99");
    bfree(&m);
    /* only a non-default domain */
    g = relu_graph();
    m = model(&g, -1);
    buf o = {0};
    pstr(&o, 1, "ai.onnx.ml");
    pint(&o, 2, 3);
    pmsg(&m, 8, &o);
    EXPECT(open_buf(&m, &err), DLP_ERR_FORMAT, "no opset_import");
    bfree(&m);
    /* "ai.onnx" spelled out is the default domain */
    g = relu_graph();
    m = model(&g, -1);
    pstr(&o, 1, "ai.onnx");
    pint(&o, 2, 13);
    pmsg(&m, 8, &o);
    CHECK(open_buf(&m, &err) == DLP_OK);
    bfree(&m);
}

static void bad_dims(void) {
    dlp_error err;
    int64_t neg[2] = {3, -2};
    buf g = relu_graph();
    init(&g, "w_neg", 1, 2, neg, NULL, 0);
    buf m = model(&g, 17);
    EXPECT(open_buf(&m, &err), DLP_ERR_FORMAT, "w_neg", "negative");
    bfree(&m);
    /* a graph input with a negative dim */
    g = (buf){0};
    vinfo(&g, 11, "in_neg", 2, neg);
    node(&g, "Relu", "relu", "in_neg", NULL, "y");
    m = model(&g, 17);
    EXPECT(open_buf(&m, &err), DLP_ERR_FORMAT, "in_neg", "negative");
    bfree(&m);
    /* absurd dim */
    int64_t big[2] = {4, ((int64_t)1 << 40) + 1};
    g = relu_graph();
    init(&g, "w_big", 1, 2, big, NULL, 0);
    m = model(&g, 17);
    EXPECT(open_buf(&m, &err), DLP_ERR_LIMIT, "w_big", "2^40");
    bfree(&m);
    g = (buf){0};
    vinfo(&g, 11, "in_big", 2, big);
    node(&g, "Relu", "relu", "in_big", NULL, "y");
    m = model(&g, 17);
    EXPECT(open_buf(&m, &err), DLP_ERR_LIMIT, "in_big", "2^40");
    bfree(&m);
    /* each dim fine, product overflows int64 */
    int64_t ov[3] = {(int64_t)1 << 40, (int64_t)1 << 40, 16};
    g = relu_graph();
    init(&g, "w_ovf", 1, 3, ov, NULL, 0);
    m = model(&g, 17);
    EXPECT(open_buf(&m, &err), DLP_ERR_LIMIT, "w_ovf", "overflow");
    bfree(&m);
    g = (buf){0};
    vinfo(&g, 11, "in_ovf", 3, ov);
    node(&g, "Relu", "relu", "in_ovf", NULL, "y");
    m = model(&g, 17);
    EXPECT(open_buf(&m, &err), DLP_ERR_LIMIT, "in_ovf", "overflow");
    bfree(&m);
    /* numel fits but bytes (x16 for complex128) overflow */
    int64_t ov2[2] = {(int64_t)1 << 40, (int64_t)1 << 20};
    g = relu_graph();
    init(&g, "w_ovf2", 15, 2, ov2, NULL, 0);
    m = model(&g, 17);
    EXPECT(open_buf(&m, &err), DLP_ERR_LIMIT, "w_ovf2", "overflow");
    bfree(&m);
    /* a big but sane declared weight with no bytes: fine (stripped model) */
    int64_t ok[2] = {1 << 20, 1 << 12};
    g = relu_graph();
    init(&g, "w_ok", 1, 2, ok, NULL, 0);
    m = model(&g, 17);
    CHECK(open_buf(&m, &err) == DLP_OK);
    bfree(&m);
    /* rank above DLP_MAX_RANK: unshaped, not an error */
    int64_t r10[10] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 2};
    g = (buf){0};
    vinfo(&g, 11, "x10", 10, r10);
    node(&g, "Relu", "relu", "x10", NULL, "y");
    m = model(&g, 17);
    dlp_model *mm = NULL;
    CHECK(dlp_model_open_memory(m.b, m.n, "t", &mm, &err) == DLP_OK);
    if (mm) {
        CHECK(mm->graph.values[mm->graph.inputs[0]].shape.rank == -1);
        dlp_model_free(mm);
    }
    bfree(&m);
}

/* A graph input with `n` distinct dim_param names: past the symbol limit
 * it is refused, without quadratic lookups. */
static void many_symbols(void) {
    dlp_error err;
    for (int pass = 0; pass < 2; pass++) {
        int n = pass ? DLP_ONNX_MAX_SYMS + 1 : DLP_ONNX_MAX_SYMS;
        buf g = {0}, vi = {0}, tp = {0}, tt = {0}, sh = {0};
        pstr(&vi, 1, "x");
        pint(&tt, 1, 1);
        for (int i = 0; i < n; i++) {
            buf d = {0};
            char name[32];
            snprintf(name, sizeof name, "s%d", i);
            pstr(&d, 2, name);
            pmsg(&sh, 1, &d);
            /* repeats of known names are free */
            buf d2 = {0};
            pstr(&d2, 2, "s0");
            pmsg(&sh, 1, &d2);
        }
        pmsg(&tt, 2, &sh);
        pmsg(&tp, 1, &tt);
        pmsg(&vi, 2, &tp);
        pmsg(&g, 11, &vi);
        node(&g, "Relu", "relu", "x", NULL, "y");
        buf m = model(&g, 17);
        if (pass)
            EXPECT(open_buf(&m, &err), DLP_ERR_LIMIT, "symbolic dimension");
        else
            CHECK_MSG(open_buf(&m, &err) == DLP_OK, "%s", err.msg);
        bfree(&m);
    }
}

static void bad_tensor_data(void) {
    dlp_error err;
    int64_t d[1] = {4};
    float three[3] = {1, 2, 3};
    buf g = relu_graph();
    init(&g, "w_short", 1, 1, d, three, sizeof three);
    buf m = model(&g, 17);
    EXPECT(open_buf(&m, &err), DLP_ERR_FORMAT, "w_short", "raw_data",
           "12 bytes", "16");
    bfree(&m);
    /* int64_data with too many elements for its dims */
    g = relu_graph();
    buf t = {0};
    pint(&t, 1, 2);
    pint(&t, 2, 7);
    pstr(&t, 8, "shape_bad");
    for (int i = 0; i < 3; i++) pint(&t, 7, i);
    pmsg(&g, 5, &t);
    m = model(&g, 17);
    EXPECT(open_buf(&m, &err), DLP_ERR_FORMAT, "shape_bad");
    bfree(&m);
    /* initializer without a name */
    g = relu_graph();
    init(&g, "", 1, 1, d, NULL, 0);
    m = model(&g, 17);
    EXPECT(open_buf(&m, &err), DLP_ERR_FORMAT, "initializer", "no name");
    bfree(&m);
    /* the same initializer twice */
    g = relu_graph();
    init(&g, "twice", 1, 1, d, NULL, 0);
    init(&g, "twice", 1, 1, d, NULL, 0);
    m = model(&g, 17);
    EXPECT(open_buf(&m, &err), DLP_ERR_FORMAT, "twice", "twice");
    bfree(&m);
    /* external data outside the model directory: not read, warned */
    g = relu_graph();
    t = (buf){0};
    pint(&t, 1, 2);
    pint(&t, 2, 7);
    pstr(&t, 8, "escape");
    buf kv = {0};
    pstr(&kv, 1, "location");
    pstr(&kv, 2, "../../../../etc/passwd");
    pmsg(&t, 13, &kv);
    pint(&t, 14, 1);
    pmsg(&g, 5, &t);
    m = model(&g, 17);
    char path[] = "/tmp/dlp_bad_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd >= 0) {
        CHECK(write(fd, m.b, m.n) == (ssize_t)m.n);
        close(fd);
        dlp_model *mm = NULL;
        CHECK(dlp_model_open(path, &mm, &err) == DLP_OK);
        if (mm) {
            int v = dlp_graph_find(&mm->graph, "escape");
            CHECK(v >= 0 && !mm->graph.values[v].ival &&
                  (mm->graph.values[v].flags & DLP_V_EXTERNAL));
            CHECK(dlp_model_warning_count(mm) == 1 &&
                  strstr(dlp_model_warning(mm, 0), "escape"));
            dlp_model_free(mm);
        }
        unlink(path);
    }
    bfree(&m);
}

/* Small int64 [2] tensor in an external file that is too short, or whose
 * offset/length entries disagree: contents unknown, one warning, no error. */
static void bad_external(void) {
    char dir[] = "/tmp/dlp_ext_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char path[64], data[64];
    snprintf(path, sizeof path, "%s/m.onnx", dir);
    snprintf(data, sizeof data, "%s/w.bin", dir);
    FILE *f = fopen(data, "wb");
    CHECK(f != NULL);
    if (!f) return;
    const int64_t vals[3] = {7, 8, 9};
    fwrite(vals, 1, sizeof vals, f); /* 24 bytes */
    fclose(f);
    static const struct {
        const char *off, *len, *warn;
        bool readable;
    } cases[] = {
        {"0", "16", NULL, true},        /* fine: 7, 8 */
        {"8", NULL, NULL, true},        /* fine: 8, 9 */
        {"16", "16", "shorter", false}, /* past the end */
        {"99999999999", NULL, "shorter", false},
        {"0", "8", "length", false},    /* length disagrees with dims */
        {"-5", NULL, NULL, true},       /* unparsable offset reads as 0 */
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        buf g = relu_graph(), t = {0}, kv = {0};
        pint(&t, 1, 2);
        pint(&t, 2, 7);
        pstr(&t, 8, "ext");
        pstr(&kv, 1, "location");
        pstr(&kv, 2, "w.bin");
        pmsg(&t, 13, &kv);
        pstr(&kv, 1, "offset");
        pstr(&kv, 2, cases[c].off);
        pmsg(&t, 13, &kv);
        if (cases[c].len) {
            pstr(&kv, 1, "length");
            pstr(&kv, 2, cases[c].len);
            pmsg(&t, 13, &kv);
        }
        pint(&t, 14, 1);
        pmsg(&g, 5, &t);
        buf m = model(&g, 17);
        f = fopen(path, "wb");
        CHECK(f && fwrite(m.b, 1, m.n, f) == m.n);
        if (f) fclose(f);
        bfree(&m);
        dlp_model *mm = NULL;
        dlp_error err;
        CHECK_MSG(dlp_model_open(path, &mm, &err) == DLP_OK, "%s", err.msg);
        if (!mm) continue;
        const dlp_value *v = &mm->graph.values[dlp_graph_find(&mm->graph, "ext")];
        CHECK_MSG(!!v->ival == cases[c].readable, "case %zu", c);
        if (v->ival && cases[c].readable)
            CHECK(v->n_const == 2 && v->ival[0] == (c == 1 ? 8 : 7));
        if (cases[c].warn)
            CHECK_MSG(dlp_model_warning_count(mm) == 1 &&
                          strstr(dlp_model_warning(mm, 0), cases[c].warn),
                      "case %zu: %s", c,
                      dlp_model_warning_count(mm) ? dlp_model_warning(mm, 0)
                                                  : "no warning");
        else
            CHECK(dlp_model_warning_count(mm) == 0);
        dlp_model_free(mm);
    }
    /* 20 small tensors in a missing file: 8 warnings and a summary */
    buf g = relu_graph();
    for (int i = 0; i < 20; i++) {
        buf t = {0}, kv = {0};
        char name[16];
        snprintf(name, sizeof name, "e%d", i);
        pint(&t, 1, 2);
        pint(&t, 2, 7);
        pstr(&t, 8, name);
        pstr(&kv, 1, "location");
        pstr(&kv, 2, "missing.bin");
        pmsg(&t, 13, &kv);
        pint(&t, 14, 1);
        pmsg(&g, 5, &t);
    }
    buf m = model(&g, 17);
    f = fopen(path, "wb");
    CHECK(f && fwrite(m.b, 1, m.n, f) == m.n);
    if (f) fclose(f);
    bfree(&m);
    dlp_model *mm = NULL;
    dlp_error err;
    CHECK(dlp_model_open(path, &mm, &err) == DLP_OK);
    if (mm) {
        CHECK(dlp_model_warning_count(mm) == 9);
        const char *last = dlp_model_warning(mm, 8);
        CHECK(last && strstr(last, "12 more"));
        dlp_model_free(mm);
    }
    unlink(path);
    unlink(data);
    rmdir(dir);
}

static void bad_graphs(void) {
    dlp_error err;
    int64_t d[2] = {1, 4};
    /* cycle: a -> b -> a */
    buf g = {0};
    vinfo(&g, 11, "x", 2, d);
    node(&g, "Add", "first", "x", "b", "a");
    node(&g, "Relu", "second", "a", NULL, "b");
    vinfo(&g, 12, "b", 2, d);
    buf m = model(&g, 17);
    EXPECT(open_buf(&m, &err), DLP_ERR_GRAPH, "cycle", "first", "tensor 'b'");
    bfree(&m);
    /* dangling input */
    g = relu_graph();
    node(&g, "Add", "adder", "y", "ghost", "z");
    m = model(&g, 17);
    EXPECT(open_buf(&m, &err), DLP_ERR_GRAPH, "adder", "ghost");
    bfree(&m);
    /* two producers */
    g = relu_graph();
    node(&g, "Relu", "again", "x", NULL, "y");
    m = model(&g, 17);
    EXPECT(open_buf(&m, &err), DLP_ERR_GRAPH, "'y'", "relu", "again");
    bfree(&m);
    /* a node writing a graph input */
    g = relu_graph();
    node(&g, "Relu", "clobber", "y", NULL, "x");
    m = model(&g, 17);
    EXPECT(open_buf(&m, &err), DLP_ERR_GRAPH, "clobber", "'x'");
    bfree(&m);
    /* node without op_type */
    g = relu_graph();
    node(&g, NULL, "noop", "y", NULL, "z");
    m = model(&g, 17);
    EXPECT(open_buf(&m, &err), DLP_ERR_FORMAT, "noop", "op_type");
    bfree(&m);
    /* GraphProto.node as a varint */
    g = relu_graph();
    pint(&g, 1, 5);
    m = model(&g, 17);
    EXPECT(open_buf(&m, &err), DLP_ERR_FORMAT, "node");
    bfree(&m);
    /* huge declared length inside the graph */
    g = relu_graph();
    tag(&g, 1, 2);
    varint(&g, (uint64_t)1 << 62);
    m = model(&g, 17);
    EXPECT(open_buf(&m, &err), DLP_ERR_FORMAT, "declares");
    bfree(&m);
    /* attribute ints packed payload ending mid-varint */
    g = relu_graph();
    buf n = {0}, a = {0};
    pstr(&n, 1, "y");
    pstr(&n, 2, "z");
    pstr(&n, 3, "packed_bad");
    pstr(&n, 4, "Transpose");
    pstr(&a, 1, "perm");
    pint(&a, 20, 7);
    uint8_t bad[2] = {0x01, 0x80};
    pbytes(&a, 8, bad, 2);
    pmsg(&n, 5, &a);
    pmsg(&g, 1, &n);
    m = model(&g, 17);
    EXPECT(open_buf(&m, &err), DLP_ERR_FORMAT, "perm");
    bfree(&m);
}

/* If nodes nested `depth` deep; the innermost branch reads outer "x". */
static buf nested_if(int depth) {
    buf inner = {0};
    node(&inner, "Identity", "leaf", "x", NULL, "o0");
    vinfo(&inner, 12, "o0", 0, NULL);
    for (int i = 1; i < depth; i++) {
        buf g = {0}, n = {0}, a = {0};
        char out[16];
        snprintf(out, sizeof out, "o%d", i);
        pstr(&n, 1, "c");
        pstr(&n, 2, out);
        pstr(&n, 3, "if");
        pstr(&n, 4, "If");
        pstr(&a, 1, "then_branch");
        pint(&a, 20, 5);
        pmsg(&a, 6, &inner);
        pmsg(&n, 5, &a);
        pmsg(&g, 1, &n);
        vinfo(&g, 12, out, 0, NULL);
        inner = g;
    }
    /* main graph: inputs x, c */
    buf main = {0};
    vinfo(&main, 11, "x", 0, NULL);
    vinfo(&main, 11, "c", 0, NULL);
    /* splice the nested graph's fields into main */
    put(&main, inner.b, inner.n);
    bfree(&inner);
    return model(&main, 17);
}

static void deep_subgraphs(void) {
    dlp_error err;
    buf m = nested_if(DLP_MAX_SUBGRAPH_DEPTH + 1); /* depth 16 below main */
    CHECK_MSG(open_buf(&m, &err) == DLP_OK, "%s", err.msg);
    bfree(&m);
    m = nested_if(DLP_MAX_SUBGRAPH_DEPTH + 2);
    EXPECT(open_buf(&m, &err), DLP_ERR_LIMIT, "nested deeper", "16");
    bfree(&m);
    m = nested_if(200);
    EXPECT(open_buf(&m, &err), DLP_ERR_LIMIT, "nested deeper");
    bfree(&m);
}

/* main: If(c) whose branch reads "t", written before the Relu producing
 * "t": the capture is an implicit input, so Relu must sort first. With
 * `cyclic`, Relu reads the If's output instead of x: a cycle. */
static buf capture_model(bool cyclic) {
    buf br = {0};
    node(&br, "Identity", "leaf", "t", NULL, "b_out");
    vinfo(&br, 12, "b_out", 0, NULL);
    buf g = {0}, n = {0}, a = {0};
    vinfo(&g, 11, "x", 0, NULL);
    vinfo(&g, 11, "c", 0, NULL);
    pstr(&n, 1, "c");
    pstr(&n, 2, "y");
    pstr(&n, 3, "cond");
    pstr(&n, 4, "If");
    pstr(&a, 1, "then_branch");
    pint(&a, 20, 5);
    pmsg(&a, 6, &br);
    pmsg(&n, 5, &a);
    pmsg(&g, 1, &n);
    node(&g, "Relu", "relu", cyclic ? "y" : "x", NULL, "t");
    vinfo(&g, 12, "y", 0, NULL);
    return model(&g, 17);
}

static void subgraph_captures(void) {
    dlp_error err;
    buf m = capture_model(false);
    dlp_model *mm = NULL;
    CHECK_MSG(dlp_model_open_memory(m.b, m.n, "t", &mm, &err) == DLP_OK, "%s",
              err.msg);
    if (mm) {
        const dlp_graph *g = &mm->graph;
        CHECK(g->n_nodes == 2 && g->topo);
        if (g->topo) CHECK(g->topo[0] == 1 && g->topo[1] == 0);
        const dlp_graph *sub = g->nodes[0].attrs[0].graph;
        int t = sub ? dlp_graph_find(sub, "t") : -1;
        CHECK(t >= 0 && (sub->values[t].flags & DLP_V_OUTER));
        dlp_model_free(mm);
    }
    bfree(&m);
    m = capture_model(true);
    EXPECT(open_buf(&m, &err), DLP_ERR_GRAPH, "cycle", "'cond'", "'t'");
    bfree(&m);
    /* an unnamed node in a named subgraph reading nothing */
    buf br = {0}, g = {0}, n = {0}, a = {0};
    node(&br, "Identity", NULL, "nowhere", NULL, "b_out");
    pstr(&br, 2, "branch_g");
    vinfo(&br, 12, "b_out", 0, NULL);
    vinfo(&g, 11, "c", 0, NULL);
    pstr(&n, 1, "c");
    pstr(&n, 2, "y");
    pstr(&n, 4, "If");
    pstr(&a, 1, "then_branch");
    pint(&a, 20, 5);
    pmsg(&a, 6, &br);
    pmsg(&n, 5, &a);
    pmsg(&g, 1, &n);
    m = model(&g, 17);
    EXPECT(open_buf(&m, &err), DLP_ERR_GRAPH, "#0 (Identity)", "branch_g",
           "'nowhere'");
    bfree(&m);
}

static void ten_million_nodes(void) {
    /* 10M Relu nodes of 8 bytes each: must stop at the node limit before
     * building anything */
    const size_t N = 10000000;
    const uint8_t nodeb[8] = {0x0a, 0x06, 0x22, 0x04, 'R', 'e', 'l', 'u'};
    buf g = {0};
    g.cap = N * 8 + 64;
    g.b = malloc(g.cap);
    CHECK(g.b != NULL);
    if (!g.b) return;
    for (size_t i = 0; i < N; i++) memcpy(g.b + i * 8, nodeb, 8);
    g.n = N * 8;
    buf m = model(&g, 17);
    dlp_error err;
    double t0 = dlp_now_s();
    EXPECT(open_buf(&m, &err), DLP_ERR_LIMIT, "more than 4000000 nodes");
    printf("  10M-node file (%zu MB) rejected in %.1f ms\n", m.n >> 20,
           (dlp_now_s() - t0) * 1e3);
    bfree(&m);
}

/* A FIFO, /dev/zero: refused at once, no blocking or endless reads. */
static void special_files(void) {
    char dir[] = "/tmp/dlp_fifo_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char path[64];
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    CHECK(mkfifo(path, 0600) == 0);
    dlp_model *m = NULL;
    dlp_error err;
    EXPECT(dlp_model_open(path, &m, &err), DLP_ERR_IO, "not a regular file");
    unlink(path);
    rmdir(dir);
    EXPECT(dlp_model_open("/dev/zero", &m, &err), DLP_ERR_IO,
           "not a regular file");
    CHECK(m == NULL);
}

static void bad_bind_args(void) {
    dlp_error err;
    CHECK(dlp_model_bind_dim(NULL, "x", 1, &err) == DLP_ERR_ARG);
    CHECK(dlp_model_set_batch(NULL, 1, &err) == DLP_ERR_ARG);
    CHECK(dlp_model_open(NULL, NULL, &err) == DLP_ERR_ARG);
    CHECK(dlp_model_warning_count(NULL) == 0);
    CHECK(dlp_model_warning(NULL, 0) == NULL);
}

int main(void) {
    RUN(baseline_ok);
    RUN(empty_and_garbage);
    RUN(truncated_files);
    RUN(other_protobuf);
    RUN(opsets);
    RUN(bad_dims);
    RUN(many_symbols);
    RUN(bad_tensor_data);
    RUN(bad_external);
    RUN(bad_graphs);
    RUN(deep_subgraphs);
    RUN(subgraph_captures);
    RUN(ten_million_nodes);
    RUN(special_files);
    RUN(bad_bind_args);
    return CHECK_DONE();
}
