/*
 * test_optime.c — the operator-time model (src/feat/feat_optime.c,
 * src/pred/pred_optime.c): the convolutions and products of a graph whose
 * shapes onnx's own shape inference checked (tests/gen_optime_fixtures.py)
 * and their FLOPs counted by hand; the probe reader on .xz files written
 * here (good records, malformed ones, a card the table lacks); a fit on
 * probes whose times follow a known rule, which the forests must give
 * back; the model file round trip; and the view a predictor reads, whose
 * node times are the model's while the graph it came from keeps the
 * roofline's.
 */
#include "check.h"
#include "side_files.h"
#include "xz_write.h"
#include "feat/feat.h"
#include "model/model.h"
#include "pred/pred_train.h"
#include "tree/tree.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FIXTURE "tests/fixtures/optime/optime_ops.onnx"
#define MEM_FIXTURE "tests/fixtures/optime/memop_ops.onnx"
#define COPY_FIXTURE "tests/fixtures/optime/copy_ops.onnx"
#define RESIZE_FIXTURE "tests/fixtures/optime/resize_ops.onnx"
#define RESIZE_LAYOUT "tests/fixtures/optime/resize_layout.onnx"
#define CONV_LAYOUT "tests/fixtures/optime/conv_layout.onnx"
#define CLS_LAYOUT "tests/fixtures/optime/cls_layout.onnx"
#define SDPA "tests/fixtures/memest/memest_sdpa.onnx"
#define GN_SILU "tests/fixtures/memest/memest_gn_silu.onnx"
#define DISTILBERT "tests/fixtures/memest/hf_distilbert.onnx"
#define GQA "tests/fixtures/memest/hf_granite_gqa.onnx"
#define T5 "tests/fixtures/memest/hf_t5.onnx"
/* deberta-v3-base, one layer of 12 heads (H 384), stripped, from the
 * dataset (data/graphs: b271a72e891e71d0) */
#define DEBERTA "tests/fixtures/memest/hf_deberta.onnx"

static bool build_file(const char *path, int64_t batch, int64_t seq,
                       dlp_feat_graph *fg) {
    dlp_model *m = NULL;
    dlp_error err;
    bool ok = dlp_model_open(path, &m, &err) == DLP_OK &&
              dlp_model_set_batch(m, batch, &err) == DLP_OK &&
              (!seq || dlp_model_bind_dim(m, "seq", seq, &err) == DLP_OK) &&
              dlp_model_analyze(m, &err) == DLP_OK &&
              dlp_feat_graph_build(fg, &m->graph, batch, seq, 0, 0, &err) == DLP_OK;
    if (!ok) fprintf(stderr, "  %s: %s\n", path, err.msg);
    dlp_model_free(m);
    return ok;
}

static bool build(int64_t batch, dlp_feat_graph *fg) {
    return build_file(FIXTURE, batch, 0, fg);
}

/* The five ops of the fixture, in graph order, as the generator's
 * docstring lays them out (batch 3). */
static void test_op_shapes(void) {
    dlp_feat_graph fg;
    DLP_ASSERT(build(3, &fg));
    CHECK(fg.n_ops == 6);
    if (fg.n_ops != 6) {
        dlp_feat_graph_free(&fg);
        return;
    }
    const dlp_op_shape *s = &fg.ops[0].shape;   /* dense 3x3 */
    CHECK(s->kind == DLP_OP_CONV && s->n == 3 && s->c == 16 && s->h == 32 &&
          s->w == 32 && s->k == 32 && s->kh == 3 && s->kw == 3 && s->s == 1 &&
          s->p == 1 && s->g == 1 && s->ho == 32 && s->wo == 32 && !s->cl);
    s = &fg.ops[1].shape;                       /* depthwise 5x5 stride 2 */
    CHECK(s->kind == DLP_OP_CONV && s->c == 32 && s->k == 32 && s->g == 32 &&
          s->kh == 5 && s->s == 2 && s->p == 2 && s->ho == 16 && s->wo == 16);
    s = &fg.ops[2].shape;                       /* grouped 1x1 */
    CHECK(s->kind == DLP_OP_CONV && s->c == 32 && s->k == 64 && s->g == 4 &&
          s->kh == 1 && s->ho == 16);
    s = &fg.ops[3].shape;                       /* Linear: one GEMM */
    CHECK(s->kind == DLP_OP_MM && s->b == 1 && s->m == 3 * 256 && s->kk == 64 &&
          s->nn == 48 && !s->bw);
    s = &fg.ops[4].shape;                       /* batched q k^T */
    CHECK(s->kind == DLP_OP_MM && s->b == 12 && s->m == 256 && s->kk == 12 &&
          s->nn == 256 && s->bw);
    s = &fg.ops[5].shape;                       /* Gemm transB */
    CHECK(s->kind == DLP_OP_MM && s->b == 1 && s->m == 3 && s->kk == 4 &&
          s->nn == 10 && !s->bw);
    /* none with a bias (no Gemm C, no Add after the MatMul) */
    for (int i = 3; i < 6; i++) CHECK(!fg.ops[i].shape.bias);
    /* FLOPs and bytes by hand: the depthwise conv, 3 x 32 x 16 x 16 outputs
     * of 25 MACs each; its bytes at fp16 = 2 x (input + output + weight) */
    double fl, by;
    dlp_op_shape_work(&fg.ops[1].shape, DLP_PREC_FP16, &fl, &by);
    CHECK_CLOSE(fl, 2.0 * 3 * 32 * 16 * 16 * 25, 1e-12);
    CHECK_CLOSE(by, 2.0 * (3 * 32 * 32 * 32 + 3 * 32 * 16 * 16 + 32 * 25), 1e-12);
    /* the batched product reads 12 copies of its second operand */
    dlp_op_shape_work(&fg.ops[4].shape, DLP_PREC_FP32, &fl, &by);
    CHECK_CLOSE(fl, 2.0 * 12 * 256 * 12 * 256, 1e-12);
    CHECK_CLOSE(by, 4.0 * (12 * 256 * 12 + 12 * 12 * 256 + 12 * 256 * 256), 1e-12);
    /* the node's own MAC count (src/cost) agrees for the dense conv */
    double conv_fl;
    dlp_op_shape_work(&fg.ops[0].shape, DLP_PREC_FP32, &conv_fl, &by);
    CHECK_CLOSE(conv_fl, fg.flops[fg.ops[0].node], 1e-6);
    for (int i = 0; i < fg.n_nodes; i++)
        CHECK((fg.node_op[i] >= 0) == (i == fg.ops[0].node || i == fg.ops[1].node ||
                                        i == fg.ops[2].node || i == fg.ops[3].node ||
                                        i == fg.ops[4].node || i == fg.ops[5].node));
    /* outputs per group, x[22]: log2(k / g) of the dense (32 / 1), the
     * depthwise (32 / 32) and the grouped 1x1 (64 / 4) */
    float x[DLP_OPTIME_NF];
    const float want_opg[3] = {5.f, 0.f, 4.f};
    for (int i = 0; i < 3; i++) {
        dlp_op_shape_features(&fg.ops[i].shape, DLP_PREC_FP32, x);
        CHECK_CLOSE(x[22], want_opg[i], 1e-6);
    }
    dlp_op_shape_features(&fg.ops[3].shape, DLP_PREC_FP32, x);
    CHECK(x[22] == 0);                          /* a product has none */
    CHECK(!fg.op_eff);
    dlp_feat_graph_free(&fg);
}


/* The memory-bound nodes of the second fixture (batch 16: every output
 * above the 64 elements a kernel needs), in graph order, as
 * gen_optime_fixtures.py lays them out; the Flatten launches none. */
static void test_memop_shapes(void) {
    dlp_feat_graph fg;
    DLP_ASSERT(build_file(MEM_FIXTURE, 16, 0, &fg));
    CHECK(fg.n_ops == 12);
    if (fg.n_ops != 12) {
        dlp_feat_graph_free(&fg);
        return;
    }
    const dlp_op_shape *s;
    for (int i = 0; i < 12; i++) CHECK(fg.ops[i].shape.kind == DLP_OP_MEM);
    s = &fg.ops[0].shape;                        /* BatchNormalization */
    CHECK(s->cat == DLP_MEM_BN && s->n == 16 && s->c == 8 && s->h == 16 &&
          s->w == 16 && s->e == 16 * 8 * 256);
    s = &fg.ops[1].shape;                        /* Relu */
    CHECK(s->cat == DLP_MEM_UNARY && s->fn == DLP_FN_RELU && s->e == 16 * 8 * 256);
    s = &fg.ops[2].shape;                        /* MaxPool 3x3 s2 p1 */
    CHECK(s->cat == DLP_MEM_POOL && s->fn == DLP_FN_MAX && s->kh == 3 &&
          s->s == 2 && s->p == 1 && s->ho == 8 && s->wo == 8 && s->h == 16);
    s = &fg.ops[3].shape;                        /* per-channel Mul */
    CHECK(s->cat == DLP_MEM_BINARY && s->fn == DLP_FN_MUL && s->e == 16 * 8 * 64 &&
          s->ye == 8 && s->bc == 1);
    s = &fg.ops[4].shape;                        /* GlobalAveragePool */
    CHECK(s->cat == DLP_MEM_POOL && s->fn == DLP_FN_GAVG && s->ho == 1 &&
          s->wo == 1 && s->e == 16 * 8 * 64);
    s = &fg.ops[5].shape;                        /* LayerNormalization */
    CHECK(s->cat == DLP_MEM_LN && s->r == 16 * 32 && s->d == 64);
    s = &fg.ops[6].shape;                        /* Sigmoid */
    CHECK(s->cat == DLP_MEM_UNARY && s->fn == DLP_FN_SIGMOID && s->e == 16 * 32 * 64);
    s = &fg.ops[7].shape;                        /* Mul, same shapes */
    CHECK(s->cat == DLP_MEM_BINARY && s->bc == 0 && s->ye == s->e);
    s = &fg.ops[8].shape;                        /* Add of a row bias */
    CHECK(s->cat == DLP_MEM_BINARY && s->fn == DLP_FN_ADD && s->bc == 2 && s->ye == 64);
    s = &fg.ops[9].shape;                        /* Mul by a rank-0 scalar */
    CHECK(s->cat == DLP_MEM_BINARY && s->bc == 3 && s->ye == 1);
    s = &fg.ops[10].shape;                       /* InstanceNormalization */
    CHECK(s->cat == DLP_MEM_GN && s->n == 16 && s->c == 32 && s->g == 32 &&
          s->h == 64 && s->w == 1);
    s = &fg.ops[11].shape;                       /* Softmax */
    CHECK(s->cat == DLP_MEM_SOFTMAX && s->r == 16 * 32 && s->d == 64);
    /* bytes by hand: the pooling reads its input and writes a quarter; the
     * per-channel Mul reads its input, the 8 scales, writes its output */
    double fl, by;
    dlp_op_shape_work(&fg.ops[2].shape, DLP_PREC_FP16, &fl, &by);
    CHECK_CLOSE(by, 2.0 * (16 * 8 * 256 + 16 * 8 * 64), 1e-12);
    CHECK_CLOSE(fl, 16.0 * 8 * 64 * 9, 1e-12);
    dlp_op_shape_work(&fg.ops[3].shape, DLP_PREC_FP32, &fl, &by);
    CHECK_CLOSE(by, 4.0 * (2 * 16 * 8 * 64 + 8), 1e-12);
    dlp_feat_graph_free(&fg);
    /* at batch 4 the pooled [4, 8] (32 elements) launches no kernel by
     * the kernel count's rule, and is no op */
    DLP_ASSERT(build_file(MEM_FIXTURE, 4, 0, &fg));
    CHECK(fg.n_ops == 11);
    for (int i = 0; i < fg.n_ops; i++)
        CHECK(fg.ops[i].shape.cat != DLP_MEM_POOL || fg.ops[i].shape.fn != DLP_FN_GAVG);
    dlp_feat_graph_free(&fg);
}

/* The exported attention: one op at each matched Softmax, with the
 * scores' [b, heads, L, S] and the values' head width; the nodes inside
 * it are no ops. memest_sdpa (gen_memest_fixtures.py): Q, K, V [1, 2,
 * 64, 16]; hf_distilbert at batch 2, 128 tokens: every attention's
 * heads x head width is the hidden size its LayerNorms normalise. */
/* The layout copies of the third fixture (batch 4): the Reshape and the
 * Flatten of a Transpose's output each launch one copy kernel and are
 * ops, with the run each moves whole; the plain Reshape is a view. */
static void test_copy_shapes(void) {
    dlp_feat_graph fg;
    DLP_ASSERT(build_file(COPY_FIXTURE, 4, 0, &fg));
    CHECK(fg.n_ops == 2);
    for (int i = 0; i < fg.n_ops; i++) {
        const dlp_op_shape *s = &fg.ops[i].shape;
        int node = fg.ops[i].node;
        CHECK(s->kind == DLP_OP_MEM && s->cat == DLP_MEM_COPY &&
              s->e == 4 * 8 * 16 * 32 && fg.eager_kern[node] == 1);
        CHECK(s->d == (i == 0 ? 32 : 1) && s->r == s->e / s->d);
    }
    for (int i = 0; i < fg.n_nodes; i++)       /* the view: no kernel, no op */
        if (fg.node_op[i] < 0) CHECK(fg.eager_kern[i] == 0);
    dlp_feat_graph_free(&fg);
}

static void test_attn_shapes(void) {
    dlp_feat_graph fg;
    DLP_ASSERT(build_file(SDPA, 1, 0, &fg));
    CHECK(fg.n_sdpa == 1 && fg.n_ops == 1);
    if (fg.n_ops == 1) {
        const dlp_op_shape *s = &fg.ops[0].shape;
        CHECK(s->kind == DLP_OP_ATTN && s->b == 1 && s->m == 2 && s->kk == 64 &&
              s->d == 64 && s->nn == 16 && !s->causal && !s->masked &&
              s->gmask == 0);
        /* no mask exported: the call is the same at either runtime */
        dlp_op_shape g = dlp_op_shape_at(s, DLP_RT_GRAPH);
        CHECK(!memcmp(&g, s, sizeof g));
        CHECK(fg.in_sdpa[fg.ops[0].node] == 2);
        double fl, by;     /* QK^T and PV: 2 x 2 x (64 x 64 x 16) MACs */
        dlp_op_shape_work(s, DLP_PREC_FP32, &fl, &by);
        CHECK_CLOSE(fl, 4.0 * 2 * 64 * 64 * 16, 1e-12);
        CHECK_CLOSE(by, 4.0 * 4 * 2 * 64 * 16, 1e-12);   /* q, k, v, out */
    }
    for (int i = 0; i < fg.n_nodes; i++)
        if (fg.in_sdpa[i] == 1) CHECK(fg.node_op[i] < 0);
    dlp_feat_graph_free(&fg);
    DLP_ASSERT(build_file(DISTILBERT, 2, 128, &fg));
    int attn = 0;
    int64_t hidden = 0;
    for (int i = 0; i < fg.n_ops; i++)
        if (fg.ops[i].shape.kind == DLP_OP_MEM && fg.ops[i].shape.cat == DLP_MEM_LN)
            hidden = fg.ops[i].shape.d;
    for (int i = 0; i < fg.n_ops; i++) {
        const dlp_op_shape *s = &fg.ops[i].shape;
        if (s->kind != DLP_OP_ATTN) continue;
        attn++;
        CHECK(s->b == 2 && s->kk == 128 && s->d == 128 && s->m * s->nn == hidden);
        /* a bidirectional mask: materialized under a CUDA graph, dropped
         * eagerly (probe_sdpa.py, BERT) */
        dlp_op_shape g = dlp_op_shape_at(s, DLP_RT_GRAPH),
                     e = dlp_op_shape_at(s, DLP_RT_EAGER);
        CHECK(s->gmask == 1 && g.masked && !g.causal && !e.masked && !e.causal);
        /* ... as a broadcast view: the math path (probe_sdpa.py --kernels) */
        CHECK(g.bcast && !e.bcast && !s->bcast);
    }
    CHECK(attn > 0 && attn == fg.n_sdpa && hidden > 0);
    /* its Reshapes of a Transpose all take a fused attention's output,
     * which the kernel writes contiguous: no copy */
    for (int i = 0; i < fg.n_ops; i++)
        CHECK(fg.ops[i].shape.kind != DLP_OP_MEM || fg.ops[i].shape.cat != DLP_MEM_COPY);
    /* a memory-bound shape is the same at either runtime */
    for (int i = 0; i < fg.n_ops; i++)
        if (fg.ops[i].shape.kind == DLP_OP_MEM) {
            dlp_op_shape g = dlp_op_shape_at(&fg.ops[i].shape, DLP_RT_GRAPH);
            CHECK(!memcmp(&g, &fg.ops[i].shape, sizeof g));
            break;
        }
    dlp_feat_graph_free(&fg);
    /* a causal one (Granite, grouped-query): is_causal eagerly, the
     * materialized mask under a graph (Llama's) */
    DLP_ASSERT(build_file(GQA, 2, 256, &fg));
    attn = 0;
    for (int i = 0; i < fg.n_ops; i++) {
        const dlp_op_shape *s = &fg.ops[i].shape;
        if (s->kind != DLP_OP_ATTN) continue;
        attn++;
        dlp_op_shape g = dlp_op_shape_at(s, DLP_RT_GRAPH),
                     e = dlp_op_shape_at(s, DLP_RT_EAGER);
        CHECK(s->gmask == 2 && g.masked && !g.causal && !e.masked && e.causal);
        CHECK(!g.bcast && !e.bcast);    /* a contiguous block: fused */
    }
    CHECK(attn == 1);
    dlp_feat_graph_free(&fg);
    /* T5 (4 layers, 6 heads of 64): each attention an SDPA call with its
     * position bias as attn_mask, spelled out node by node (no fused
     * pattern), one hbias record at its Softmax beside the nodes' own */
    DLP_ASSERT(build_file(T5, 2, 128, &fg));
    attn = 0;
    int members = 0;
    for (int i = 0; i < fg.n_nodes; i++) {
        members += fg.battn[i] == 1;
        if (fg.battn[i] != 2) continue;
        CHECK(fg.in_sdpa[i] == 0 && fg.node_op[i] >= 0 &&
              fg.ops[fg.node_op[i]].shape.kind == DLP_OP_MEM &&
              fg.ops[fg.node_op[i]].shape.cat == DLP_MEM_SOFTMAX);
        int o = fg.battn_op[i];
        CHECK(o >= 0);
        if (o < 0) continue;
        attn++;
        const dlp_op_shape *s = &fg.ops[o].shape;
        CHECK(s->kind == DLP_OP_ATTN && fg.ops[o].node == i && s->hbias == 1 &&
              s->b == 2 && s->m == 6 && s->kk == 128 && s->d == 128 &&
              s->nn == 64 && !s->masked && !s->bcast && s->gmask == 0);
        /* the bias [1, H, L, S] eagerly; under a graph masked first,
         * [B, H, L, S] */
        dlp_op_shape g = dlp_op_shape_at(s, DLP_RT_GRAPH),
                     e = dlp_op_shape_at(s, DLP_RT_EAGER);
        CHECK(g.hbias == 3 && e.hbias == 1 && !g.masked && !e.masked);
        float xg[DLP_OPTIME_NF], xe[DLP_OPTIME_NF];
        dlp_op_shape_features(&g, DLP_PREC_FP16, xg);
        dlp_op_shape_features(&e, DLP_PREC_FP16, xe);
        CHECK(xg[DLP_OPTIME_HBIAS_X] == 3 && xe[DLP_OPTIME_HBIAS_X] == 1);
        CHECK_CLOSE(xe[19], log2(6.0 * 128 * 128), 1e-5);
        CHECK_CLOSE(xg[19], log2(2.0 * 6 * 128 * 128), 1e-5);
        CHECK(xg[14] == 0 && xg[17] == 0);     /* not a [B, 1, L, S] mask */
    }
    /* 4 x (QK^T, PV, Softmax's bias Add, the two scales at least) */
    CHECK_MSG(attn == 4 && members >= 4 * 4, "%d attentions, %d nodes", attn, members);
    CHECK(fg.n_sdpa == 0);
    dlp_feat_graph_free(&fg);
    /* DistilBERT's fused attentions are not biased ones */
    DLP_ASSERT(build_file(DISTILBERT, 2, 128, &fg));
    for (int i = 0; i < fg.n_nodes; i++) CHECK(!fg.battn[i] && fg.battn_op[i] < 0);
    dlp_feat_graph_free(&fg);
}

static void test_probe_reader(void) {
    char dir[] = "/tmp/dlp_optime_XXXXXX", path[256];
    DLP_ASSERT(mkdtemp(dir));
    dlp_optime_probes p;
    dlp_error err;
    CHECK(dlp_optime_probes_read("/nonexistent/probes", false, &p, &err) == DLP_OK && p.n == 0);
    snprintf(path, sizeof path, "%s/x-optime-1.jsonl.xz", dir);
    write_xz(path,
        "{\"spec\": \"grid:optime\", \"seed\": 1, \"gpu\": \"NVIDIA H200\", \"ops\": ["
        "{\"op\": \"conv\", \"prec\": \"fp16\", \"x\": [2, 32, 16, 16], \"w\": [32, 1, 3, 3],"
        " \"s\": 1, \"p\": 1, \"g\": 32, \"cl\": 0, \"us\": 3.5, \"r\": 40},"
        "{\"op\": \"mm\", \"prec\": \"fp32\", \"b\": 4, \"m\": 128, \"k\": 64, \"n\": 256,"
        " \"bw\": 1, \"us\": 9.25, \"r\": 20},"
        "{\"op\": \"mm\", \"prec\": \"fp32\", \"b\": 4, \"m\": 128, \"k\": 64, \"n\": 256,"
        " \"bw\": 0, \"us\": 0.01},"
        "{\"op\": \"conv\", \"prec\": \"fp16\", \"x\": [2, 30, 16, 16], \"w\": [32, 1, 3, 3],"
        " \"s\": 1, \"p\": 1, \"g\": 32, \"cl\": 0, \"us\": 3.5},"
        "{\"op\": \"pool\", \"prec\": \"fp16\", \"us\": 3},"
        "{\"op\": \"mm\", \"prec\": \"fp64\", \"b\": 1, \"m\": 2, \"k\": 2, \"n\": 2, \"us\": 3}]}\n"
        "{\"spec\": \"grid:optime\", \"gpu\": \"Some Future GPU\", \"ops\": ["
        "{\"op\": \"mm\", \"prec\": \"fp32\", \"b\": 1, \"m\": 2, \"k\": 2, \"n\": 2, \"us\": 3}]}\n"
        "{\"spec\": \"grid:convgrid\", \"gpu\": \"NVIDIA H200\", \"ops\": []}\n");
    snprintf(path, sizeof path, "%s/y-convws.jsonl.xz", dir);   /* not ours */
    write_xz(path, "not json\n");
    CHECK(dlp_optime_probes_read(dir, false, &p, &err) == DLP_OK);
    /* kept: the depthwise conv and the batched product; malformed: a time
     * below 0.5 us, channels not divisible by the groups, an unknown op
     * and an unknown precision; one line of an unknown card */
    CHECK(p.n_files == 1 && p.n == 2 && p.n_bad == 4 && p.n_unknown_gpu == 1);
    if (p.n == 2) {
        const dlp_optime_probe *q = &p.rec[1];
        CHECK(q->shape.kind == DLP_OP_MM && q->shape.b == 4 && q->shape.bw &&
              q->prec == DLP_PREC_FP32 && q->us == 9.25f);
        /* its roofline on the H200 of the device table, by hand */
        dlp_device d;
        DLP_ASSERT(dlp_device_find("h200", &d, &err) == DLP_OK);
        double fl = 2.0 * 4 * 128 * 64 * 256,
               by = 4.0 * (4 * 128 * 64 + 4 * 64 * 256 + 4 * 128 * 256);
        double roof = fmax(fl / (d.fp32_tflops * 1e12), by / (d.mem_bw_gbs * 1e9)) * 1e6;
        CHECK_CLOSE(q->roof_us, roof, 1e-6);
        CHECK(p.rec[0].shape.g == 32 && p.rec[0].shape.ho == 16 &&
              p.rec[0].prec == DLP_PREC_FP16);
    }
    dlp_optime_probes_free(&p);
    /* training times (probe_optime.py --train): an optrain file; with
     * train each record's time its train_us, its roofline three forward
     * rooflines, and a record without train_us is malformed there;
     * without, the forward times of both records. An optime file does
     * not reach the training model. */
    snprintf(path, sizeof path, "%s/z-optrain-2.jsonl.xz", dir);
    write_xz(path,
        "{\"spec\": \"grid:optrain\", \"seed\": 2, \"gpu\": \"NVIDIA H200\", \"ops\": ["
        "{\"op\": \"mm\", \"prec\": \"fp32\", \"b\": 4, \"m\": 128, \"k\": 64, \"n\": 256,"
        " \"bw\": 1, \"us\": 9.25, \"r\": 20, \"train_us\": 30.5, \"train_r\": 6},"
        "{\"op\": \"mm\", \"prec\": \"fp32\", \"b\": 4, \"m\": 128, \"k\": 64, \"n\": 256,"
        " \"bw\": 1, \"us\": 9.25}]}\n");
    dlp_optime_probes t;
    CHECK(dlp_optime_probes_read(dir, true, &t, &err) == DLP_OK);
    CHECK(t.train && t.n_files == 1 && t.n == 1 && t.n_bad == 1);
    CHECK(dlp_optime_probes_read(dir, false, &p, &err) == DLP_OK);
    CHECK(!p.train && p.n_files == 2 && p.n == 4);
    if (t.n == 1 && p.n == 4) {
        CHECK(t.rec[0].us == 30.5f);
        CHECK_CLOSE(t.rec[0].roof_us, 3.0 * p.rec[1].roof_us, 1e-6);
        CHECK(p.rec[2].us == 9.25f && p.rec[3].us == 9.25f &&
              p.rec[2].roof_us == p.rec[1].roof_us);
    }
    dlp_optime_probes_free(&t);
    dlp_optime_probes_free(&p);
    unlink(path);
    /* a line that is not JSON: an error naming the file and line */
    snprintf(path, sizeof path, "%s/x-optime-1.jsonl.xz", dir);
    write_xz(path, "{\"spec\": \"grid:optime\", \"gpu\": \"h200\", \"ops\": []}\n{oops\n");
    CHECK(dlp_optime_probes_read(dir, false, &p, &err) == DLP_ERR_FORMAT &&
          strstr(err.msg, "x-optime-1.jsonl.xz:2"));
    unlink(path);
    snprintf(path, sizeof path, "%s/y-convws.jsonl.xz", dir);
    unlink(path);
    rmdir(dir);
}

/* Probe records `text` read from a memop file of a temporary directory,
 * the forward times (train false) or the forward + backward ones, into
 * *p; the directory removed after. */
static void read_memop_text(const char *text, bool train, dlp_optime_probes *p) {
    char dir[] = "/tmp/dlp_memop_XXXXXX", path[256];
    DLP_ASSERT(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/x-memop-1.jsonl.xz", dir);
    write_xz(path, text);
    dlp_error err;
    DLP_ASSERT(dlp_optime_probes_read(dir, train, p, &err) == DLP_OK);
    unlink(path);
    rmdir(dir);
}

/* nn.GroupNorm as torch.onnx exports it (memest_gn_silu.onnx,
 * gen_saved_fixtures.py: GroupNorm(8, 32) of a [2, 32, 16, 16] conv
 * output) is Reshape [2, 8, -1] -> InstanceNormalization; its record is
 * the one the probe reader makes of the same call (probe_memop.py "gn":
 * F.group_norm of x [2, 32, 16, 16] in 8 groups), field by field, so the
 * operator-time model sees the same features for both. A genuine
 * InstanceNormalization (memop_ops.onnx's, not after a Reshape) keeps
 * its own channels as groups (test_memop_shapes). */
static void test_group_norm_record(void) {
    dlp_feat_graph fg;
    DLP_ASSERT(build_file(GN_SILU, 2, 0, &fg));
    const dlp_op_shape *s = NULL;
    for (int i = 0; i < fg.n_ops; i++)
        if (fg.ops[i].shape.kind == DLP_OP_MEM && fg.ops[i].shape.cat == DLP_MEM_GN)
            s = &fg.ops[i].shape;
    CHECK(s != NULL);
    dlp_optime_probes p;
    read_memop_text("{\"spec\": \"grid:memop\", \"gpu\": \"NVIDIA H200\", \"ops\": ["
                    "{\"op\": \"gn\", \"prec\": \"fp16\", \"x\": [2, 32, 16, 16],"
                    " \"groups\": 8, \"us\": 6.0}]}\n", false, &p);
    CHECK(p.n == 1);
    if (s && p.n == 1) {
        const dlp_op_shape *q = &p.rec[0].shape;
        CHECK(s->n == 2 && s->c == 32 && s->h == 256 && s->w == 1 && s->g == 8 &&
              s->e == 2 * 32 * 256);
        CHECK(q->n == s->n && q->c == s->c && q->h == s->h && q->w == s->w &&
              q->g == s->g && q->e == s->e);
        float a[DLP_OPTIME_NF], b[DLP_OPTIME_NF];
        dlp_op_shape_features(s, DLP_PREC_FP16, a);
        dlp_op_shape_features(q, DLP_PREC_FP16, b);
        CHECK(!memcmp(a, b, sizeof a));
    }
    dlp_optime_probes_free(&p);
    dlp_feat_graph_free(&fg);
}

/* A memop file (probe_memop.py --train): read for inference (us) and
 * training (train_us); its copies skipped, not counted as malformed; a
 * grid:memop line (no training times) read for inference only. */
static void test_memop_reader(void) {
    static const char *const text =
        "{\"spec\": \"grid:memtrain\", \"seed\": 1, \"gpu\": \"NVIDIA H200\", \"ops\": ["
        "{\"op\": \"unary\", \"prec\": \"fp16\", \"fn\": \"gelu\", \"x\": [64, 768],"
        " \"us\": 2.5, \"r\": 64, \"train_us\": 6.0, \"train_r\": 64},"
        "{\"op\": \"binary\", \"prec\": \"fp32\", \"fn\": \"mul\", \"x\": [8, 64, 14, 14],"
        " \"y\": [8, 64, 1, 1], \"us\": 3.0, \"train_us\": 9.0},"
        "{\"op\": \"sdpa\", \"prec\": \"bf16\", \"x\": [2, 12, 197, 64], \"s\": 197,"
        " \"causal\": 0, \"us\": 20.0, \"train_us\": 70.0},"
        "{\"op\": \"pool\", \"prec\": \"fp16\", \"fn\": \"max\", \"x\": [8, 64, 56, 56],"
        " \"k\": 3, \"s\": 2, \"p\": 1, \"us\": 12.0, \"train_us\": 40.0},"
        "{\"op\": \"copy\", \"prec\": \"fp16\", \"x\": [2, 8, 4, 64], \"us\": 2.0,"
        " \"train_us\": 3.0},"
        "{\"op\": \"ln\", \"prec\": \"fp16\", \"x\": [2, 64, 768], \"us\": 4.0,"
        " \"train_us\": 9.0},"
        "{\"op\": \"unary\", \"prec\": \"fp16\", \"fn\": \"cube\", \"x\": [64],"
        " \"us\": 2.0, \"train_us\": 5.0},"
        "{\"op\": \"unary\", \"prec\": \"fp16\", \"fn\": \"relu\","
        " \"x\": [1000000000, 1000000000, 1000000000], \"us\": 2.0, \"train_us\": 5.0},"
        "{\"op\": \"sdpa\", \"prec\": \"fp16\", \"x\": [2, 12, 128, 64], \"s\": 128,"
        " \"mask\": \"bool\", \"causal\": 0, \"us\": 30.0, \"train_us\": 90.0},"
        "{\"op\": \"sdpa\", \"prec\": \"fp16\", \"x\": [2, 12, 128, 64], \"s\": 128,"
        " \"mask\": \"causal\", \"causal\": 1, \"us\": 12.0, \"train_us\": 40.0},"
        "{\"op\": \"sdpa\", \"prec\": \"fp16\", \"x\": [2, 12, 128, 64], \"s\": 128,"
        " \"mask\": \"causal\", \"causal\": 0, \"us\": 12.0, \"train_us\": 40.0},"
        "{\"op\": \"sdpa\", \"prec\": \"fp16\", \"x\": [2, 12, 128, 64], \"s\": 128,"
        " \"mask\": \"half\", \"causal\": 0, \"us\": 12.0, \"train_us\": 40.0},"
        "{\"op\": \"sdpa\", \"prec\": \"fp16\", \"x\": [2, 12, 128, 64], \"s\": 128,"
        " \"mask\": \"bcast\", \"causal\": 0, \"us\": 90.0, \"train_us\": 200.0},"
        "{\"op\": \"sdpa\", \"prec\": \"fp16\", \"x\": [2, 12, 128, 64], \"s\": 128,"
        " \"mask\": \"bcast\", \"causal\": 1, \"us\": 90.0, \"train_us\": 200.0},"
        "{\"op\": \"sdpa\", \"prec\": \"fp16\", \"x\": [2, 12, 128, 64], \"s\": 128,"
        " \"mask\": \"hbias\", \"causal\": 0, \"us\": 70.0, \"train_us\": 150.0},"
        "{\"op\": \"sdpa\", \"prec\": \"fp16\", \"x\": [2, 12, 128, 64], \"s\": 128,"
        " \"mask\": \"hbiasb\", \"causal\": 0, \"us\": 71.0, \"train_us\": 151.0},"
        "{\"op\": \"sdpa\", \"prec\": \"fp16\", \"x\": [2, 12, 128, 64], \"s\": 128,"
        " \"mask\": \"hbiasw\", \"causal\": 0, \"us\": 78.0, \"train_us\": 160.0},"
        "{\"op\": \"sdpa\", \"prec\": \"fp16\", \"x\": [2, 12, 128, 64], \"s\": 128,"
        " \"mask\": \"hbias\", \"causal\": 1, \"us\": 70.0, \"train_us\": 150.0}]}\n"
        "{\"spec\": \"grid:memop\", \"gpu\": \"NVIDIA H200\", \"ops\": ["
        "{\"op\": \"softmax\", \"prec\": \"fp32\", \"x\": [4096, 197], \"us\": 5.0}]}\n";
    dlp_optime_probes p, t;
    dlp_error err;
    read_memop_text(text, false, &p);
    read_memop_text(text, true, &t);
    /* kept: unary, binary, sdpa, pool, copy, a masked, a causal, a
     * broadcast-masked sdpa and T5's three biases (+ the softmax for
     * inference); malformed: a 3-D layer norm, an unknown function, 10^27
     * elements, a "causal" mask without is_causal, an unknown mask, a
     * broadcast mask and a bias with is_causal */
    CHECK(p.n_files == 1 && p.n == 12 && p.n_bad == 7);
    CHECK(t.n_files == 1 && t.n == 11 && t.n_bad == 7);
    if (p.n == 12 && t.n == 11) {
        const dlp_op_shape *s = &p.rec[1].shape;
        CHECK(s->kind == DLP_OP_MEM && s->cat == DLP_MEM_BINARY && s->fn == DLP_FN_MUL &&
              s->e == 8 * 64 * 196 && s->ye == 8 * 64 && s->bc == 1);
        s = &p.rec[2].shape;
        CHECK(s->kind == DLP_OP_ATTN && s->b == 2 && s->m == 12 && s->kk == 197 &&
              s->d == 197 && s->nn == 64 && p.rec[2].prec == DLP_PREC_BF16 &&
              !s->masked && !s->causal);
        s = &p.rec[3].shape;
        CHECK(s->cat == DLP_MEM_POOL && s->fn == DLP_FN_MAX && s->ho == 28 && s->wo == 28);
        s = &p.rec[4].shape;      /* [2, 8, 4, 64] permuted: rows of 64 */
        CHECK(s->kind == DLP_OP_MEM && s->cat == DLP_MEM_COPY &&
              s->e == 2 * 8 * 4 * 64 && s->d == 64 && s->r == 2 * 8 * 4);
        s = &p.rec[5].shape;
        CHECK(s->kind == DLP_OP_ATTN && s->masked && !s->causal && !s->bcast);
        s = &p.rec[6].shape;
        CHECK(s->kind == DLP_OP_ATTN && !s->masked && s->causal && !s->bcast);
        s = &p.rec[7].shape;
        CHECK(s->kind == DLP_OP_ATTN && s->masked && !s->causal && s->bcast &&
              p.rec[7].us == 90.0f && t.rec[7].us == 200.0f);
        s = &p.rec[8].shape;
        CHECK(s->kind == DLP_OP_ATTN && !s->masked && !s->causal && !s->bcast &&
              s->hbias == 1 && p.rec[8].us == 70.0f && t.rec[8].us == 150.0f);
        CHECK(p.rec[9].shape.hbias == 2 && !p.rec[9].shape.masked);
        CHECK(p.rec[10].shape.hbias == 3 && t.rec[10].us == 160.0f);
        for (int k = 0; k < 8; k++) CHECK(!p.rec[k].shape.hbias);
        s = &p.rec[11].shape;
        CHECK(s->cat == DLP_MEM_SOFTMAX && s->r == 4096 && s->d == 197);
        CHECK(p.rec[0].shape.fn == DLP_FN_GELU && p.rec[0].us == 2.5f && t.rec[0].us == 6.0f);
        CHECK_CLOSE(t.rec[2].roof_us, 3.0 * p.rec[2].roof_us, 1e-6);
        /* the GELU's roofline on the H200, by hand: bytes over bandwidth */
        dlp_device d;
        DLP_ASSERT(dlp_device_find("h200", &d, &err) == DLP_OK);
        CHECK_CLOSE(p.rec[0].roof_us, 2.0 * 2 * 64 * 768 / (d.mem_bw_gbs * 1e9) * 1e6, 1e-6);
    }
    dlp_optime_probes_free(&p);
    dlp_optime_probes_free(&t);
}

static double u01(uint64_t *s) {
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(*s >> 11) / 9007199254740992.0;
}

/* Probes whose time is the roofline times 2^rule: depthwise convs 8x
 * slower than their roofline, dense ones 2x, products 1.5x at fp16 and
 * 3x at fp32 (on the H200's figures). */
static double rule(const dlp_op_shape *s, dlp_precision p) {
    if (s->kind == DLP_OP_CONV) return s->g > 1 ? 3.0 : 1.0;
    return p == DLP_PREC_FP32 ? log2(3.0) : log2(1.5);
}

/* A convolution (dense or depthwise) or a product drawn with state s. */
static void draw_conv_mm(dlp_op_shape *sh, uint64_t *s) {
    static const int64_t ch[] = {16, 32, 64, 128, 256};
    if (u01(s) < 0.5) {
        sh->kind = DLP_OP_CONV;
        sh->n = 1 + (int64_t)(u01(s) * 8);
        sh->c = ch[(int)(u01(s) * 5)];
        sh->h = sh->w = 8 + (int64_t)(u01(s) * 40);
        sh->kh = sh->kw = 3;
        sh->s = 1;
        sh->p = 1;
        sh->g = u01(s) < 0.5 ? sh->c : 1;
        sh->k = sh->g > 1 ? sh->c : ch[(int)(u01(s) * 5)];
        sh->ho = sh->h;
        sh->wo = sh->w;
    } else {
        sh->kind = DLP_OP_MM;
        sh->b = 1 + (int64_t)(u01(s) * 4);
        sh->m = 16 + (int64_t)(u01(s) * 1000);
        sh->kk = ch[(int)(u01(s) * 5)];
        sh->nn = ch[(int)(u01(s) * 5)];
        sh->bw = u01(s) < 0.5;
    }
}


/* The operator-time model fitted on p (one thread), asserted. */
static dlp_optime *fit_on(const dlp_optime_probes *p) {
    dlp_optime *m = NULL;
    dlp_error err;
    DLP_ASSERT(dlp_optime_fit(p, NULL, 1, &m, &err) == DLP_OK && m);
    return m;
}

/* A request's configuration on the H100, its defaults otherwise. */
static dlp_pred_config h100_config(void) {
    dlp_pred_config c;
    dlp_error err;
    dlp_pred_config_init(&c);
    DLP_ASSERT(dlp_device_find("H100-SXM5-80GB", &c.device, &err) == DLP_OK);
    return c;
}
/* The probes' set p of n shapes drawn by draw (seed), each timed at its
 * roofline on the H200 times 2^rule. */
static void synth_by(dlp_optime_probes *p, int n, uint64_t seed,
                     void (*draw)(dlp_op_shape *, uint64_t *),
                     double (*rule_of)(const dlp_op_shape *, dlp_precision)) {
    memset(p, 0, sizeof *p);
    p->rec = calloc((size_t)n, sizeof *p->rec);
    DLP_ASSERT(p->rec);
    dlp_pred_config c;
    dlp_pred_config_init(&c);
    dlp_error err;
    DLP_ASSERT(dlp_device_find("h200", &c.device, &err) == DLP_OK);
    uint64_t s = seed;
    for (int i = 0; i < n; i++) {
        dlp_optime_probe *q = &p->rec[i];
        q->prec = u01(&s) < 0.5 ? DLP_PREC_FP32 : DLP_PREC_FP16;
        draw(&q->shape, &s);
        c.precision = (dlp_precision)q->prec;
        dlp_feat_device d;
        dlp_feat_device_of(&c, &d);
        q->roof_us = (float)dlp_op_shape_roof_us(&q->shape, c.precision, &d);
        q->us = (float)(q->roof_us * exp2(rule_of(&q->shape, c.precision)));
    }
    p->n = p->cap = (size_t)n;
}

static void synth(dlp_optime_probes *p, int n, uint64_t seed) {
    synth_by(p, n, seed, draw_conv_mm, rule);
}

/* A forest of w features (a few rounds on a synthetic rule of x[2]) saved
 * under the conv forest's name at path and loaded back into *g; *fr the
 * forest itself (the caller frees both). */
static bool forest_file_of_width(int w, const char *path, dlp_forest **fr,
                                 dlp_nn_file *g) {
    enum { N = 64 };
    float *x = malloc((size_t)N * (size_t)w * sizeof *x), y[N];
    if (!x) return false;
    for (int i = 0; i < N; i++) {
        for (int k = 0; k < w; k++) x[i * w + k] = (float)((i * 5 + k * 3) % 13);
        y[i] = x[i * w + 2] > 6 ? 1.5f : -0.5f;
    }
    dlp_error err;
    dlp_tree_params tp;
    dlp_tree_params_default(&tp);
    tp.rounds = 5;
    dlp_tree *tr = NULL;
    dlp_nn_file h = {0};
    *fr = NULL;
    bool ok = dlp_tree_train(x, N, w, y, &tp, &tr, &err) == DLP_OK &&
              dlp_forest_from_tree(tr, w, fr, &err) == DLP_OK &&
              dlp_forest_save(*fr, &h, "optime/conv", &err) == DLP_OK &&
              dlp_nn_file_save(&h, path, &err) == DLP_OK &&
              dlp_nn_file_load(g, path, &err) == DLP_OK;
    dlp_nn_file_free(&h);
    dlp_tree_free(tr);
    free(x);
    return ok;
}

static void test_fit_and_file(void) {
    dlp_optime_probes p;
    synth(&p, 3000, 7);
    dlp_optime *m = NULL;
    dlp_error err;
    m = fit_on(&p);
    /* fresh shapes of the same rule come back within 2% on average (10%
     * at worst: the boosting's row and column samples) on the H200, and
     * on the H100 as its own roofline times the same factor */
    dlp_optime_probes t;
    synth(&t, 200, 99);
    dlp_pred_config c = h100_config();
    double worst = 0, worst_h100 = 0, sum = 0;
    for (size_t i = 0; i < t.n; i++) {
        const dlp_optime_probe *q = &t.rec[i];
        dlp_pred_config h = c;
        DLP_ASSERT(dlp_device_find("h200", &h.device, &err) == DLP_OK);
        h.precision = c.precision = (dlp_precision)q->prec;
        dlp_feat_device d, d100;
        dlp_feat_device_of(&h, &d);
        dlp_feat_device_of(&c, &d100);
        double e = fabs(dlp_optime_us(m, &q->shape, h.precision, &d) / q->us - 1);
        worst = fmax(worst, e);
        sum += e;
        double want = dlp_op_shape_roof_us(&q->shape, c.precision, &d100) *
                      exp2(rule(&q->shape, c.precision));
        worst_h100 = fmax(worst_h100,
                          fabs(dlp_optime_us(m, &q->shape, c.precision, &d100) / want - 1));
    }
    CHECK(sum / (double)t.n < 0.02 && worst < 0.1);
    CHECK(worst_h100 < 0.1);
    /* a model without forests is the roofline */
    dlp_feat_device d100;
    c.precision = DLP_PREC_FP32;
    dlp_feat_device_of(&c, &d100);
    CHECK(dlp_optime_us(NULL, &t.rec[0].shape, DLP_PREC_FP32, &d100) ==
          dlp_op_shape_roof_us(&t.rec[0].shape, DLP_PREC_FP32, &d100));
    /* the file round trip answers bit for bit; a forest of another width
     * is refused */
    dlp_nn_file f = {0};
    DLP_ASSERT(dlp_optime_save(m, &f, &err) == DLP_OK);
    const char *path = "/tmp/dlp_test_optime.dlpm";
    DLP_ASSERT(dlp_nn_file_save(&f, path, &err) == DLP_OK);
    dlp_nn_file_free(&f);
    dlp_nn_file g = {0};
    DLP_ASSERT(dlp_nn_file_load(&g, path, &err) == DLP_OK);
    dlp_optime *m2 = NULL;
    CHECK(dlp_optime_load(&g, &m2, &err) == DLP_OK && m2);
    dlp_nn_file_free(&g);
    if (m2)
        for (size_t i = 0; i < t.n; i++)
            CHECK(dlp_optime_us(m, &t.rec[i].shape, DLP_PREC_FP16, &d100) ==
                  dlp_optime_us(m2, &t.rec[i].shape, DLP_PREC_FP16, &d100));
    dlp_optime_free(m2);
    /* the same with the forests in a side file (what training writes):
     * the model file keeps one reference to it, a second model file with
     * the same forests shares it, and the loaded model answers bit for
     * bit */
    {
        char dir[] = "/tmp/dlp_optime_side_XXXXXX", p1[96], p2[96];
        DLP_ASSERT(mkdtemp(dir));
        snprintf(p1, sizeof p1, "%s/a.dlpm", dir);
        snprintf(p2, sizeof p2, "%s/b.dlpm", dir);
        dlp_nn_file h = {0};
        DLP_ASSERT(dlp_optime_save(m, &h, &err) == DLP_OK);
        DLP_ASSERT(dlp_nn_file_add_str(&h, "pred/kind", "x", &err) == DLP_OK);
        CHECK(dlp_nn_file_group_entries(&h, dlp_pred_shared_groups) == h.n - 1);
        CHECK(dlp_nn_file_save_shared(&h, p1, dlp_pred_shared_groups, &err) == DLP_OK);
        CHECK(dlp_nn_file_save_shared(&h, p2, dlp_pred_shared_groups, &err) == DLP_OK);
        dlp_nn_file_free(&h);
        DLP_ASSERT(dlp_nn_file_load(&h, p2, &err) == DLP_OK);
        CHECK(h.n_side == 1 && dlp_nn_file_get(&h, "pred/kind", DLP_NN_STR));
        dlp_optime *m3 = NULL;
        CHECK(dlp_optime_load(&h, &m3, &err) == DLP_OK && m3);
        dlp_nn_file_free(&h);   /* the forests keep the side file's bytes */
        for (size_t i = 0; m3 && i < t.n; i++)
            CHECK(dlp_optime_us(m, &t.rec[i].shape, DLP_PREC_FP16, &d100) ==
                  dlp_optime_us(m3, &t.rec[i].shape, DLP_PREC_FP16, &d100));
        dlp_optime_free(m3);
        bool gone;
        CHECK(side_files(dir, "", false, NULL, 0, NULL) == 1 &&
              side_files(dir, "optime-", true, NULL, 0, &gone) == 1 && gone);
        unlink(p1);
        unlink(p2);
        CHECK(rmdir(dir) == 0);
    }
    /* a forest fitted before x[22] (22 features) still loads and answers
     * its own value on the shape's features; one of another width is
     * refused */
    {
        dlp_forest *fr = NULL;
        dlp_nn_file g2 = {0};
        DLP_ASSERT(forest_file_of_width(DLP_OPTIME_NF_OLD, path, &fr, &g2));
        dlp_optime *old = NULL;
        CHECK(dlp_optime_load(&g2, &old, &err) == DLP_OK && old);
        dlp_nn_file_free(&g2);
        for (size_t i = 0; old && i < t.n; i++) {
            const dlp_op_shape *s = &t.rec[i].shape;
            if (s->kind != DLP_OP_CONV) continue;
            float f[DLP_OPTIME_NF];
            dlp_op_shape_features(s, DLP_PREC_FP32, f);
            CHECK_CLOSE(dlp_optime_us(old, s, DLP_PREC_FP32, &d100),
                        dlp_op_shape_roof_us(s, DLP_PREC_FP32, &d100) *
                            exp2((double)dlp_forest_eval(fr, f)), 1e-9);
        }
        dlp_optime_free(old);
        dlp_forest_free(fr);
        DLP_ASSERT(forest_file_of_width(5, path, &fr, &g2));
        dlp_optime *bad = NULL;
        CHECK(dlp_optime_load(&g2, &bad, &err) == DLP_ERR_FORMAT && !bad &&
              strstr(err.msg, "optime/conv"));
        dlp_nn_file_free(&g2);
        dlp_forest_free(fr);
    }
    unlink(path);
    /* no probes of a kind: no forest for it, the roofline answers */
    dlp_optime_probes conv_only = p;
    size_t k = 0;
    dlp_optime_probe *keep = malloc(p.n * sizeof *keep);
    DLP_ASSERT(keep);
    for (size_t i = 0; i < p.n; i++)
        if (p.rec[i].shape.kind == DLP_OP_CONV) keep[k++] = p.rec[i];
    conv_only.rec = keep;
    conv_only.n = k;
    dlp_optime *mc = NULL;
    mc = fit_on(&conv_only);
    for (size_t i = 0; i < t.n; i++)
        if (t.rec[i].shape.kind == DLP_OP_MM)
            CHECK(dlp_optime_us(mc, &t.rec[i].shape, DLP_PREC_FP32, &d100) ==
                  dlp_op_shape_roof_us(&t.rec[i].shape, DLP_PREC_FP32, &d100));
    dlp_optime_free(mc);
    free(keep);
    /* the view of the fixture: its conv and product nodes take the model's
     * times, every other node and the graph itself keep the roofline's */
    dlp_feat_graph fg, view;
    DLP_ASSERT(build(2, &fg));
    float *eff = NULL;
    c.precision = DLP_PREC_FP16;
    DLP_ASSERT(dlp_optime_view(m, &fg, c.runtime, c.precision, &view, &eff, &err) == DLP_OK);
    CHECK(eff && view.op_eff == eff && !fg.op_eff);
    double *a = malloc((size_t)fg.n_nodes * sizeof *a), *b = malloc((size_t)fg.n_nodes * sizeof *b);
    DLP_ASSERT(a && b);
    dlp_feat_node_roofline_us(&fg, &c, a);
    dlp_feat_node_roofline_us(&view, &c, b);
    dlp_feat_device dc;
    dlp_feat_device_of(&c, &dc);
    for (int i = 0; i < fg.n_nodes; i++) {
        int o = fg.node_op[i];
        if (o < 0) CHECK(a[i] == b[i]);
        else CHECK_CLOSE(b[i], dlp_optime_us(m, &fg.ops[o].shape, c.precision, &dc), 1e-9);
    }
    /* the roofline sums follow (the depthwise conv runs 8x its roofline;
     * at batch 2 every node is under its launch floor, which the kernel
     * sum keeps), the memory estimate does not move */
    dlp_feat_roofline r0, r1;
    dlp_feat_roofline_of(&fg, &c, &r0);
    dlp_feat_roofline_of(&view, &c, &r1);
    CHECK(r1.roofline_ms > r0.roofline_ms && r1.kernel_ms >= r0.kernel_ms &&
          r1.mem_mib == r0.mem_mib);
    free(a);
    free(b);
    free(eff);
    /* annotating the graph itself (what training does) gives the view's
     * times at that precision */
    DLP_ASSERT(dlp_optime_annotate(m, &fg));
    dlp_feat_roofline r2;
    dlp_feat_roofline_of(&fg, &c, &r2);
    CHECK_CLOSE(r2.roofline_ms, r1.roofline_ms, 1e-12);
    DLP_ASSERT(dlp_optime_annotate(NULL, &fg) && !fg.op_eff);
    dlp_feat_graph_free(&fg);
    dlp_optime_free(m);
    dlp_optime_probes_free(&p);
    dlp_optime_probes_free(&t);
}

/* Probes of memory-bound ops and attentions whose time is the roofline
 * times a known factor: unary 4x, binary 2x, layer norm 6x, attention
 * 3x at fp32 and 1.5x at fp16, twice that with a materialized mask,
 * four times more with a broadcast one (the math path), eight times
 * with T5's bias (hbias), a copy 2^1.5 moving rows, 8x moving
 * elements, a masked fill of scores 4x with a [B, 1, L, S] mask, else 2x,
 * a gather 32x when PyTorch's vectorized kernel takes its rows (rows of a
 * multiple of 16 bytes, on the first axis), else 2x. */
static double mem_rule(const dlp_op_shape *s, dlp_precision p) {
    if (s->kind == DLP_OP_ATTN)
        return (p == DLP_PREC_FP32 ? log2(3.0) : log2(1.5)) + (s->masked ? 1 : 0) +
               (s->bcast ? 2 : 0) + (s->hbias ? 3 : 0);
    if (s->cat == DLP_MEM_COPY) return s->d == 1 ? 3.0 : 1.5;
    if (s->cat == DLP_MEM_MFILL) return s->bc == 1 ? 2.0 : 1.0;
    if (s->cat == DLP_MEM_RESIZE)   /* NCHW linear / cubic: a loop per pixel */
        return s->fn == DLP_RESIZE_NEAREST || (s->ho == s->h && s->wo == s->w)
                   ? 1.0 : 6.0;
    if (s->cat == DLP_MEM_GATHER)   /* the vectorized kernel's rows */
        return s->n == 1 && (p == DLP_PREC_FP32 ? 4 : 2) * s->d % 16 == 0 ? 5.0 : 1.0;
    return s->cat == DLP_MEM_UNARY ? 2.0 : s->cat == DLP_MEM_BINARY ? 1.0 : log2(6.0);
}

/* A memory-bound op (unary, binary, layer norm) or an attention. */
static void draw_mem(dlp_op_shape *sh, uint64_t *s) {
    double u = u01(s);
    if (u < 0.3) {
        sh->kind = DLP_OP_ATTN;
        sh->b = 1 + (int64_t)(u01(s) * 4);
        sh->m = 1 + (int64_t)(u01(s) * 8);
        sh->kk = sh->d = 16 << (int)(u01(s) * 5);
        sh->nn = 16 << (int)(u01(s) * 3);
        sh->masked = u01(s) < 0.5;
        sh->bcast = sh->masked && u01(s) < 0.5;
    } else {
        sh->kind = DLP_OP_MEM;
        sh->cat = u < 0.5 ? DLP_MEM_UNARY : u < 0.7 ? DLP_MEM_BINARY
                  : u < 0.85 ? DLP_MEM_LN : DLP_MEM_COPY;
        sh->d = 16 << (int)(u01(s) * 6);
        sh->r = 1 + (int64_t)(u01(s) * 4000);
        sh->e = sh->r * sh->d;
        if (sh->cat == DLP_MEM_BINARY) {   /* same, per channel, bias,
                                               scalar */
            sh->bc = (uint8_t)(u01(s) * 4);
            sh->ye = sh->bc == 0 ? sh->e : sh->bc == 1 ? 8
                     : sh->bc == 2 ? sh->d : 1;
        }
        if (sh->cat == DLP_MEM_COPY && u01(s) < 0.5) {   /* a transpose */
            sh->d = 1;
            sh->r = sh->e;
        }
        if (sh->cat != DLP_MEM_LN && sh->cat != DLP_MEM_COPY) sh->r = 0;
    }
}

/* draw_mem, half of its attentions given T5's bias instead of a mask */
static void draw_mem_hbias(dlp_op_shape *sh, uint64_t *s) {
    draw_mem(sh, s);
    if (sh->kind == DLP_OP_ATTN && u01(s) < 0.5) {
        sh->masked = sh->bcast = false;
        sh->hbias = (uint8_t)(1 + u01(s) * 3);
    }
}

static void synth_mem(dlp_optime_probes *p, int n, uint64_t seed) {
    synth_by(p, n, seed, draw_mem, mem_rule);
}

/* Node times of fg read through m's view at precision p into t (the
 * caller frees it). */
static double *view_times_b(const dlp_optime *m, const dlp_feat_graph *fg,
                            const dlp_pred_config *c, bool *attn_eff,
                            bool *battn_eff) {
    dlp_feat_graph view;
    float *eff = NULL;
    dlp_error err;
    double *t = malloc((size_t)fg->n_nodes * sizeof *t);
    DLP_ASSERT(t);
    DLP_ASSERT(dlp_optime_view(m, fg, c->runtime, c->precision, &view, &eff, &err) == DLP_OK);
    dlp_feat_node_roofline_us(&view, c, t);
    *attn_eff = view.attn_eff;
    if (battn_eff) *battn_eff = view.battn_eff;
    free(eff);
    return t;
}

static double *view_times(const dlp_optime *m, const dlp_feat_graph *fg,
                          const dlp_pred_config *c, bool *attn_eff) {
    return view_times_b(m, fg, c, attn_eff, NULL);
}

/* A model of the memory-bound ops and attentions: their nodes take its
 * times; the other nodes of a timed attention take none; a model without
 * those forests (files trained before them) leaves every node its own
 * roofline, as does an attention whose shape is not read (5-D). */
static void test_mem_view(void) {
    dlp_optime_probes p, cm;
    synth_mem(&p, 3000, 11);
    synth(&cm, 1500, 5);
    dlp_optime *m = NULL, *mc = NULL;
    m = fit_on(&p);
    mc = fit_on(&cm);
    dlp_pred_config c = h100_config();
    c.precision = DLP_PREC_FP16;
    dlp_feat_device d;
    dlp_feat_device_of(&c, &d);
    static const char *const files[] = {MEM_FIXTURE, SDPA, COPY_FIXTURE};
    for (int f = 0; f < 3; f++) {
        dlp_feat_graph fg;
        DLP_ASSERT(build_file(files[f], 16, 0, &fg));
        double *own = malloc((size_t)fg.n_nodes * sizeof *own);
        DLP_ASSERT(own);
        dlp_feat_node_roofline_us(&fg, &c, own);
        bool ae, aec;
        double *t = view_times(m, &fg, &c, &ae), *tc = view_times(mc, &fg, &c, &aec);
        CHECK(ae && !aec);   /* (no attention in the first: none left out) */
        for (int i = 0; i < fg.n_nodes; i++) {
            int o = fg.node_op[i];
            CHECK(tc[i] == own[i]);
            if (o >= 0 && fg.ops[o].shape.kind >= DLP_OP_MEM) {
                const dlp_op_shape *s = &fg.ops[o].shape;
                double want = dlp_op_shape_roof_us(s, c.precision, &d) *
                              exp2(mem_rule(s, c.precision));
                if (s->cat == DLP_MEM_UNARY || s->cat == DLP_MEM_BINARY ||
                    s->cat == DLP_MEM_LN || s->cat == DLP_MEM_COPY ||
                    s->kind == DLP_OP_ATTN)
                {
                    if (fabs(t[i] / want - 1) >= 0.1)
                        fprintf(stderr, "kind %d cat %d bc %d: %g us, want %g\n",
                                s->kind, s->cat, s->bc, t[i], want);
                    CHECK(fabs(t[i] / want - 1) < 0.1);
                }
            } else if (fg.in_sdpa[i] == 1) {
                CHECK(t[i] == 0 && own[i] > 0);
            } else {
                CHECK(t[i] == own[i]);
            }
        }
        free(own); free(t); free(tc);
        dlp_feat_graph_free(&fg);
    }
    /* DistilBERT's attentions run masked (a broadcast mask: the math
     * path) under a CUDA graph and unmasked eagerly: the view at each
     * runtime takes the rule's time of each */
    {
        dlp_feat_graph fg;
        DLP_ASSERT(build_file(DISTILBERT, 4, 128, &fg));
        bool ae;
        c.runtime = DLP_RT_GRAPH;
        double *tg = view_times(m, &fg, &c, &ae);
        c.runtime = DLP_RT_EAGER;
        double *te = view_times(m, &fg, &c, &ae);
        int n = 0;
        for (int i = 0; i < fg.n_nodes; i++) {
            int o = fg.node_op[i];
            if (o < 0 || fg.ops[o].shape.kind != DLP_OP_ATTN) continue;
            dlp_op_shape g = dlp_op_shape_at(&fg.ops[o].shape, DLP_RT_GRAPH);
            double want = dlp_op_shape_roof_us(&g, c.precision, &d) *
                          exp2(mem_rule(&g, c.precision));
            CHECK_MSG(fabs(tg[i] / want - 1) < 0.1, "graph %g us, want %g", tg[i], want);
            CHECK_MSG(fabs(tg[i] / te[i] / 8 - 1) < 0.1, "graph / eager %g",
                      tg[i] / te[i]);
            n++;
        }
        CHECK(n == fg.n_sdpa && n > 0);
        free(tg); free(te);
        dlp_feat_graph_free(&fg);
    }
    /* T5's attentions: a model fitted on hbias probes times each whole
     * (the rule's 8x) at its Softmax and the other nodes of its pattern
     * none, at either runtime; m, fitted before them (no row with the
     * flag: its forest never splits on it), leaves every node the time
     * it had, each its own operator */
    {
        dlp_optime_probes ph;
        synth_by(&ph, 4000, 13, draw_mem_hbias, mem_rule);
        dlp_optime *mh = NULL;
        mh = fit_on(&ph);
        dlp_feat_graph fg;
        DLP_ASSERT(build_file(T5, 4, 128, &fg));
        double *own = malloc((size_t)fg.n_nodes * sizeof *own);
        DLP_ASSERT(own);
        for (int r = 0; r < 2; r++) {
            c.runtime = r ? DLP_RT_GRAPH : DLP_RT_EAGER;
            dlp_feat_node_roofline_us(&fg, &c, own);
            bool ae, be, aeh, beh;
            double *t0 = view_times_b(m, &fg, &c, &ae, &be),
                   *th = view_times_b(mh, &fg, &c, &aeh, &beh);
            CHECK(!be && beh);
            int n = 0, zero = 0;
            for (int i = 0; i < fg.n_nodes; i++) {
                int o = fg.node_op[i];
                /* (no forest of products here: their own rooflines) */
                bool mine = o < 0 || fg.ops[o].shape.kind < DLP_OP_MEM;
                if (mine) CHECK(t0[i] == own[i]);
                if (!fg.battn[i]) {
                    if (mine) CHECK(th[i] == own[i]);
                    continue;
                }
                CHECK(t0[i] > 0);        /* each its own operator */
                if (fg.battn[i] == 1) {
                    CHECK(th[i] == 0);
                    zero++;
                    continue;
                }
                dlp_op_shape s = dlp_op_shape_at(&fg.ops[fg.battn_op[i]].shape,
                                                  c.runtime);
                double want = dlp_op_shape_roof_us(&s, c.precision, &d) *
                              exp2(mem_rule(&s, c.precision));
                CHECK_MSG(fabs(th[i] / want - 1) < 0.1, "T5 %g us, want %g",
                          th[i], want);
                n++;
            }
            CHECK(n == 4 && zero >= 16);
            free(t0); free(th);
        }
        free(own);
        dlp_feat_graph_free(&fg);
        dlp_optime_free(mh);
        dlp_optime_probes_free(&ph);
    }
    /* the 5-D pattern (the math path): its Softmax has no attention op,
     * so its nodes keep their times */
    dlp_feat_graph fg;
    DLP_ASSERT(build_file("tests/fixtures/memest/memest_sdpa5.onnx", 1, 0, &fg));
    CHECK(fg.n_sdpa == 1);
    double *own = malloc((size_t)fg.n_nodes * sizeof *own);
    DLP_ASSERT(own);
    dlp_feat_node_roofline_us(&fg, &c, own);
    bool ae;
    double *t = view_times(m, &fg, &c, &ae);
    CHECK(!ae);
    for (int i = 0; i < fg.n_nodes; i++)
        if (fg.in_sdpa[i]) CHECK(t[i] == own[i]);
    free(own); free(t);
    dlp_feat_graph_free(&fg);
    dlp_optime_free(m);
    dlp_optime_free(mc);
    dlp_optime_probes_free(&p);
    dlp_optime_probes_free(&cm);
}

/* draw_mem, a third of its memory-bound ops masked fills of scores
 * [B, H, L, S] by a mask of each broadcast form */
static void draw_mem_mfill(dlp_op_shape *sh, uint64_t *s) {
    draw_mem(sh, s);
    if (sh->kind != DLP_OP_MEM || u01(s) >= 1.0 / 3) return;
    memset(sh, 0, sizeof *sh);
    sh->kind = DLP_OP_MEM;
    sh->cat = DLP_MEM_MFILL;
    sh->n = 1 + (int64_t)(u01(s) * 8);
    sh->c = 1 + (int64_t)(u01(s) * 16);
    sh->h = sh->w = sh->d = 16 << (int)(u01(s) * 6);
    sh->e = sh->n * sh->c * sh->h * sh->w;
    sh->bc = (uint8_t)(u01(s) * 4);
    sh->ye = sh->bc == 0 ? sh->e : sh->bc == 1 ? sh->n * sh->h * sh->w
             : sh->bc == 2 ? sh->n * sh->w : sh->h * sh->w;
}

/* draw_mem_mfill, a quarter of its memory-bound ops gathers of a table
 * [n, R, d] by r indices */
static void draw_mem_gather(dlp_op_shape *sh, uint64_t *s) {
    draw_mem_mfill(sh, s);
    if (sh->kind != DLP_OP_MEM || u01(s) >= 0.25) return;
    memset(sh, 0, sizeof *sh);
    sh->kind = DLP_OP_MEM;
    sh->cat = DLP_MEM_GATHER;
    sh->n = u01(s) < 0.7 ? 1 : 1 + (int64_t)(u01(s) * 8);
    sh->d = (1 + (int64_t)(u01(s) * 3)) << (int)(u01(s) * 10);
    sh->r = 64 << (int)(u01(s) * 12);
    sh->ye = sh->n * (100 + (int64_t)(u01(s) * 4000)) * sh->d;
    sh->e = sh->n * sh->r * sh->d;
}

/* draw_mem_gather, a quarter of its memory-bound ops interpolations of
 * [n, c, h, h] by 0.5, 1, 2 or 4 in any mode */
static void draw_mem_resize(dlp_op_shape *sh, uint64_t *s) {
    draw_mem_gather(sh, s);
    if (sh->kind != DLP_OP_MEM || u01(s) >= 0.25) return;
    memset(sh, 0, sizeof *sh);
    sh->kind = DLP_OP_MEM;
    sh->cat = DLP_MEM_RESIZE;
    sh->fn = (uint8_t)(u01(s) * 4);
    sh->n = 1 + (int64_t)(u01(s) * 8);
    sh->c = 8 << (int)(u01(s) * 6);
    sh->h = sh->w = 2 << (int)(u01(s) * 6);
    int sc = (int)(u01(s) * 4);   /* 0.5, 1, 2, 4 */
    sh->ho = sh->wo = sc == 0 ? sh->h / 2 : sh->h << (sc - 1);
    sh->e = sh->n * sh->c * sh->h * sh->w;
}

/* The gather records of probe_memop.py --ops gather: a table [R, W] on
 * axis 0 or [O, R, W] on axis 1 by "n" indices; another axis, rank or a
 * missing count refused; the roofline's bytes the output written and
 * read and the int64 index; the feature of PyTorch's vectorized kernel
 * (x[21]) set for rows of a multiple of 16 bytes on the first axis. */
static void test_gather_reader(void) {
    dlp_optime_probes p;
    dlp_error err;
    read_memop_text(
        "{\"spec\": \"grid:memop\", \"seed\": 11, \"gpu\": \"NVIDIA H200\", \"ops\": ["
        "{\"op\": \"gather\", \"prec\": \"fp16\", \"x\": [3972, 16], \"n\": 1050625,"
        " \"axis\": 0, \"us\": 637.4, \"r\": 2},"
        "{\"op\": \"gather\", \"prec\": \"fp16\", \"x\": [732, 12], \"n\": 38809,"
        " \"axis\": 0, \"us\": 3.5},"
        "{\"op\": \"gather\", \"prec\": \"fp32\", \"x\": [4, 225, 16], \"n\": 2401,"
        " \"axis\": 1, \"us\": 4.0},"
        "{\"op\": \"gather\", \"prec\": \"fp16\", \"x\": [4, 225, 16], \"n\": 2401,"
        " \"axis\": 0, \"us\": 4.0},"
        "{\"op\": \"gather\", \"prec\": \"fp16\", \"x\": [225, 16], \"axis\": 0, \"us\": 4.0},"
        "{\"op\": \"gather\", \"prec\": \"fp16\", \"x\": [2, 4, 225, 16], \"n\": 9,"
        " \"axis\": 2, \"us\": 4.0},"
        "{\"op\": \"gather\", \"prec\": \"fp16\", \"x\": [225], \"n\": 9,"
        " \"axis\": 0, \"us\": 4.0}]}\n", false, &p);
    CHECK(p.n == 3 && p.n_bad == 4);
    if (p.n == 3) {
        const dlp_op_shape *a = &p.rec[0].shape, *c = &p.rec[2].shape;
        for (int k = 0; k < 3; k++)
            CHECK(p.rec[k].shape.kind == DLP_OP_MEM &&
                  p.rec[k].shape.cat == DLP_MEM_GATHER);
        CHECK(a->n == 1 && a->r == 1050625 && a->d == 16 &&
              a->e == 1050625LL * 16 && a->ye == 3972 * 16 && p.rec[0].us == 637.4f);
        CHECK(c->n == 4 && c->r == 2401 && c->d == 16 && c->e == 4 * 2401 * 16 &&
              c->ye == 4 * 225 * 16);
        dlp_device d;
        DLP_ASSERT(dlp_device_find("h200", &d, &err) == DLP_OK);
        double e = 1050625.0 * 16;
        CHECK_CLOSE(p.rec[0].roof_us, (2 * 2 * e + 8.0 * 1050625) /
                                          (d.mem_bw_gbs * 1e9) * 1e6, 1e-6);
        float x[DLP_OPTIME_NF];
        dlp_op_shape_features(a, DLP_PREC_FP16, x);   /* 32-byte rows */
        CHECK(x[DLP_OPTIME_CAT_X] == DLP_MEM_GATHER && x[21] == 1);
        dlp_op_shape_features(&p.rec[1].shape, DLP_PREC_FP16, x);   /* 24 */
        CHECK(x[21] == 0);
        dlp_op_shape_features(&p.rec[1].shape, DLP_PREC_FP32, x);   /* 48 */
        CHECK(x[21] == 1);
        dlp_op_shape_features(c, DLP_PREC_FP32, x);   /* not the first axis */
        CHECK(x[21] == 0);
    }
    dlp_optime_probes_free(&p);
}

/* The resize records of probe_memop.py --ops resize: x [N, C, H, W] to
 * "o" [Ho, Wo] in one of four modes, channels-last or not; another
 * mode, rank or output refused; the roofline's bytes the input read and
 * the output written, its FLOPs one per output element; the features of
 * the scale, the same size and the planes a thread loops over. */
static void test_resize_reader(void) {
    dlp_optime_probes p;
    dlp_error err;
    read_memop_text(
        "{\"spec\": \"grid:memop\", \"seed\": 12, \"gpu\": \"NVIDIA H200\", \"ops\": ["
        "{\"op\": \"resize\", \"prec\": \"fp16\", \"x\": [64, 1024, 7, 7],"
        " \"fn\": \"linear\", \"o\": [14, 14], \"cl\": 0, \"us\": 12194.5, \"r\": 1},"
        "{\"op\": \"resize\", \"prec\": \"fp32\", \"x\": [2, 8, 16, 16],"
        " \"fn\": \"linear_ac\", \"o\": [16, 16], \"cl\": 1, \"us\": 3.0},"
        "{\"op\": \"resize\", \"prec\": \"bf16\", \"x\": [2, 8, 16, 16],"
        " \"fn\": \"nearest\", \"o\": [8, 8], \"cl\": 0, \"us\": 3.0},"
        "{\"op\": \"resize\", \"prec\": \"fp16\", \"x\": [2, 8, 16, 16],"
        " \"fn\": \"cubic\", \"o\": [64, 64], \"us\": 30.0},"
        "{\"op\": \"resize\", \"prec\": \"fp16\", \"x\": [2, 8, 16, 16],"
        " \"fn\": \"area\", \"o\": [8, 8], \"us\": 3.0},"
        "{\"op\": \"resize\", \"prec\": \"fp16\", \"x\": [2, 8, 16, 16],"
        " \"fn\": \"linear\", \"us\": 3.0},"
        "{\"op\": \"resize\", \"prec\": \"fp16\", \"x\": [2, 8, 16, 16],"
        " \"fn\": \"linear\", \"o\": [8, 8, 8], \"us\": 3.0},"
        "{\"op\": \"resize\", \"prec\": \"fp16\", \"x\": [8, 16, 16],"
        " \"fn\": \"linear\", \"o\": [8, 8], \"us\": 3.0},"
        "{\"op\": \"resize\", \"prec\": \"fp16\", \"x\": [2, 8, 16, 16],"
        " \"fn\": \"linear\", \"o\": [0, 8], \"us\": 3.0}]}\n", false, &p);
    CHECK(p.n == 4 && p.n_bad == 5);
    if (p.n == 4) {
        static const int fns[] = {DLP_RESIZE_LINEAR, DLP_RESIZE_LINEAR_AC,
                                  DLP_RESIZE_NEAREST, DLP_RESIZE_CUBIC};
        for (int k = 0; k < 4; k++)
            CHECK(p.rec[k].shape.kind == DLP_OP_MEM &&
                  p.rec[k].shape.cat == DLP_MEM_RESIZE && p.rec[k].shape.fn == fns[k]);
        const dlp_op_shape *a = &p.rec[0].shape;
        CHECK(a->n == 64 && a->c == 1024 && a->h == 7 && a->w == 7 && a->ho == 14 &&
              a->wo == 14 && a->e == 64 * 1024 * 49 && !a->cl && p.rec[0].us == 12194.5f);
        CHECK(p.rec[1].shape.cl && !p.rec[3].shape.cl);
        double flops, bytes;
        dlp_op_shape_work(a, DLP_PREC_FP16, &flops, &bytes);
        CHECK(flops == 64.0 * 1024 * 196 && bytes == 2.0 * 64 * 1024 * (49 + 196));
        dlp_device d;
        DLP_ASSERT(dlp_device_find("h200", &d, &err) == DLP_OK);
        CHECK_CLOSE(p.rec[0].roof_us, bytes / (d.mem_bw_gbs * 1e9) * 1e6, 1e-6);
        float x[DLP_OPTIME_NF];
        dlp_op_shape_features(a, DLP_PREC_FP16, x);
        CHECK(x[DLP_OPTIME_CAT_X] == DLP_MEM_RESIZE && x[6] == DLP_RESIZE_LINEAR &&
              x[16] == 2 && x[17] == 0 && x[20] == 0 && x[21] == 16);
        dlp_op_shape_features(&p.rec[1].shape, DLP_PREC_FP32, x);   /* same size */
        CHECK(x[16] == 0 && x[17] == 1 && x[20] == 1 && x[21] == 4);
        dlp_op_shape_features(&p.rec[2].shape, DLP_PREC_BF16, x);   /* halved */
        CHECK(x[16] == -2 && x[17] == 0);
    }
    dlp_optime_probes_free(&p);
}

/* The mfill records of probe_memop.py --ops mfill: the mask's broadcast
 * form read from its shape, one that does not broadcast to the scores or
 * has another rank refused; the roofline's bytes the scores read and
 * written and the bool mask once. */
static void test_mfill_reader(void) {
    dlp_optime_probes p;
    dlp_error err;
    read_memop_text(
        "{\"spec\": \"grid:memop\", \"seed\": 10, \"gpu\": \"NVIDIA H200\", \"ops\": ["
        "{\"op\": \"mfill\", \"prec\": \"fp16\", \"x\": [8, 12, 512, 512],"
        " \"y\": [8, 1, 512, 512], \"us\": 107.6, \"r\": 18},"
        "{\"op\": \"mfill\", \"prec\": \"fp32\", \"x\": [8, 12, 512, 256],"
        " \"y\": [8, 1, 1, 256], \"us\": 90.0},"
        "{\"op\": \"mfill\", \"prec\": \"bf16\", \"x\": [8, 12, 512, 512],"
        " \"y\": [1, 1, 512, 512], \"us\": 80.0},"
        "{\"op\": \"mfill\", \"prec\": \"fp16\", \"x\": [2, 3, 64, 64],"
        " \"y\": [2, 3, 64, 64], \"us\": 5.0},"
        "{\"op\": \"mfill\", \"prec\": \"fp16\", \"x\": [2, 3, 64, 64],"
        " \"y\": [2, 1, 64, 32], \"us\": 5.0},"
        "{\"op\": \"mfill\", \"prec\": \"fp16\", \"x\": [2, 3, 64, 64],"
        " \"y\": [2, 64, 64], \"us\": 5.0},"
        "{\"op\": \"mfill\", \"prec\": \"fp16\", \"x\": [2, 3, 64, 64], \"us\": 5.0},"
        "{\"op\": \"mfill\", \"prec\": \"fp16\", \"x\": [6, 64, 64],"
        " \"y\": [6, 64, 64], \"us\": 5.0}]}\n", false, &p);
    CHECK(p.n == 4 && p.n_bad == 4);
    if (p.n == 4) {
        static const uint8_t bc[4] = {1, 2, 3, 0};
        for (int k = 0; k < 4; k++)
            CHECK(p.rec[k].shape.kind == DLP_OP_MEM &&
                  p.rec[k].shape.cat == DLP_MEM_MFILL && p.rec[k].shape.bc == bc[k]);
        const dlp_op_shape *s = &p.rec[0].shape;
        CHECK(s->n == 8 && s->c == 12 && s->h == 512 && s->w == 512 &&
              s->d == 512 && s->e == 8LL * 12 * 512 * 512 &&
              s->ye == 8LL * 512 * 512 && p.rec[0].us == 107.6f);
        CHECK(p.rec[1].shape.ye == 8 * 256 && p.rec[2].shape.ye == 512 * 512);
        dlp_device d;
        DLP_ASSERT(dlp_device_find("h200", &d, &err) == DLP_OK);
        double e = 8.0 * 12 * 512 * 512;
        CHECK_CLOSE(p.rec[0].roof_us, (2 * 2 * e + 8.0 * 512 * 512) /
                                          (d.mem_bw_gbs * 1e9) * 1e6, 1e-6);
        float x[DLP_OPTIME_NF];
        dlp_op_shape_features(s, DLP_PREC_FP16, x);
        CHECK(x[DLP_OPTIME_CAT_X] == DLP_MEM_MFILL && x[21] == 1);
    }
    dlp_optime_probes_free(&p);
}

/* At eager fp32 and CUDA-graph fp16 on the H100: nodes at[0..n) of fg
 * keep their own roofline times under m_old (a forest fitted before their
 * category) and take `factor` x their records' rooflines (within tol),
 * more than min_own x their own times, under m_new. */
static void check_cat_times(const dlp_feat_graph *fg, const int *at, int n,
                            const dlp_optime *m_old, const dlp_optime *m_new,
                            double factor, double tol, double min_own,
                            const char *what) {
    dlp_pred_config c = h100_config();
    dlp_feat_device d;
    for (int r = 0; r < 2; r++) {
        c.runtime = r ? DLP_RT_GRAPH : DLP_RT_EAGER;
        c.precision = r ? DLP_PREC_FP16 : DLP_PREC_FP32;
        dlp_feat_device_of(&c, &d);
        double *own = malloc((size_t)fg->n_nodes * sizeof *own);
        DLP_ASSERT(own);
        dlp_feat_node_roofline_us(fg, &c, own);
        bool ae;
        double *t0 = view_times(m_old, fg, &c, &ae), *t1 = view_times(m_new, fg, &c, &ae);
        for (int k = 0; k < n; k++) {
            const dlp_op_shape *s = &fg->ops[fg->node_op[at[k]]].shape;
            double want = dlp_op_shape_roof_us(s, c.precision, &d) * factor;
            CHECK(t0[at[k]] == own[at[k]]);
            CHECK_MSG(fabs(t1[at[k]] / want - 1) < tol, "%s %g us, want %g", what,
                      t1[at[k]], want);
            CHECK(t1[at[k]] > min_own * own[at[k]]);
        }
        free(own); free(t0); free(t1);
    }
}

/* DeBERTa's scores masked before the Softmax, Where(mask, min, scores):
 * one mfill record, the scores [B, 12, L, L] by the padding mask [B, 1,
 * L, L], no kernel of its own in the count (as every Where: the files'
 * features stay theirs); no Where of DistilBERT, GPT-2 or T5 (mask
 * building, a bias) is one. A model fitted on mfill probes times it by
 * the rule (4x its roofline) at either runtime; one fitted before leaves
 * it, and every node, its own roofline time. */
static void test_mfill(void) {
    dlp_feat_graph fg;
    DLP_ASSERT(build_file(DEBERTA, 2, 128, &fg));
    int n = 0, at = -1;
    for (int i = 0; i < fg.n_ops; i++) {
        const dlp_op_shape *s = &fg.ops[i].shape;
        if (s->kind != DLP_OP_MEM || s->cat != DLP_MEM_MFILL) continue;
        n++;
        at = fg.ops[i].node;
        CHECK(s->n == 2 && s->c == 12 && s->h == 128 && s->w == 128 &&
              s->e == 2 * 12 * 128 * 128 && s->ye == 2 * 128 * 128 && s->bc == 1);
    }
    CHECK(n == 1 && at >= 0);
    if (at >= 0) CHECK(fg.eager_kern[at] == 0 && fg.in_sdpa[at] == 0);
    static const char *const others[] = {DISTILBERT, T5, "tests/fixtures/memest/hf_gpt2.onnx"};
    for (int f = 0; f < 3; f++) {
        dlp_feat_graph o;
        DLP_ASSERT(build_file(others[f], 2, 128, &o));
        for (int i = 0; i < o.n_ops; i++)
            CHECK(o.ops[i].shape.kind != DLP_OP_MEM || o.ops[i].shape.cat != DLP_MEM_MFILL);
        dlp_feat_graph_free(&o);
    }
    dlp_optime_probes p, pf;
    synth_mem(&p, 3000, 11);
    synth_by(&pf, 4000, 17, draw_mem_mfill, mem_rule);
    dlp_optime *m = NULL, *mf = NULL;
    m = fit_on(&p);
    mf = fit_on(&pf);
    if (at >= 0) check_cat_times(&fg, &at, 1, m, mf, 4, 0.1, 3, "mfill");
    dlp_feat_graph_free(&fg);
    dlp_optime_free(m);
    dlp_optime_free(mf);
    dlp_optime_probes_free(&p);
    dlp_optime_probes_free(&pf);
}

/* DistilBERT's embeddings: a gather record each, the word embedding
 * [1000, 256] by the ids [B, S] and the position embedding [2048, 256]
 * by [1, S]; LeViT's cached attention bias (memest_biascache: a Gather
 * of attention_biases, run in the warm-up call only) none. A model
 * fitted on gather probes times them by the rule (32x the roofline: 512-
 * byte rows at fp16 and fp32); one fitted before (on masked fills, the
 * category before) leaves them, and every node, their own roofline
 * times. */
static void test_gather(void) {
    dlp_feat_graph fg;
    DLP_ASSERT(build_file(DISTILBERT, 2, 128, &fg));
    int n = 0, at[2] = {-1, -1};
    for (int i = 0; i < fg.n_ops; i++) {
        const dlp_op_shape *s = &fg.ops[i].shape;
        if (s->kind != DLP_OP_MEM || s->cat != DLP_MEM_GATHER) continue;
        bool word = s->ye == 1000 * 256;
        CHECK(s->n == 1 && s->d == 256 && s->r == (word ? 256 : 128) &&
              s->e == s->r * 256 && (word || s->ye == 2048 * 256));
        if (n < 2) at[n] = fg.ops[i].node;
        n++;
    }
    CHECK(n == 2);
    dlp_feat_graph bc;
    DLP_ASSERT(build_file("tests/fixtures/memest/memest_biascache.onnx", 1, 0, &bc));
    for (int i = 0; i < bc.n_ops; i++)
        CHECK(bc.ops[i].shape.kind != DLP_OP_MEM || bc.ops[i].shape.cat != DLP_MEM_GATHER);
    dlp_feat_graph_free(&bc);
    dlp_optime_probes pf, pg;
    synth_by(&pf, 4000, 17, draw_mem_mfill, mem_rule);
    synth_by(&pg, 5000, 19, draw_mem_gather, mem_rule);
    dlp_optime *mf = fit_on(&pf), *mg = fit_on(&pg);
    if (n == 2) check_cat_times(&fg, at, 2, mf, mg, 32, 0.15, 0, "gather");
    dlp_feat_graph_free(&fg);
    dlp_optime_free(mf);
    dlp_optime_free(mg);
    dlp_optime_probes_free(&pf);
    dlp_optime_probes_free(&pg);
}

/* resize_ops.onnx: a record per Resize with its mode (align_corners read
 * from the coordinates), input and output; a model fitted on resize
 * probes times them by the rule (64x the roofline for linear and cubic
 * between sizes, 2x for nearest and the same size); one fitted before
 * (on gathers, the category before) leaves them, and every node, their
 * own roofline times. */
static void test_resize(void) {
    dlp_feat_graph fg;
    DLP_ASSERT(build_file(RESIZE_FIXTURE, 4, 0, &fg));
    static const struct { int fn, h, ho; } want[] = {
        {DLP_RESIZE_LINEAR, 7, 14}, {DLP_RESIZE_LINEAR_AC, 14, 28},
        {DLP_RESIZE_NEAREST, 28, 56}, {DLP_RESIZE_CUBIC, 56, 28},
        {DLP_RESIZE_LINEAR, 28, 28}};
    int n = 0, at[5], slow[3], fast[2], ns = 0, nf = 0;
    for (int i = 0; i < fg.n_ops; i++) {
        const dlp_op_shape *s = &fg.ops[i].shape;
        if (s->kind != DLP_OP_MEM || s->cat != DLP_MEM_RESIZE) continue;
        if (n < 5) {
            CHECK(s->fn == want[n].fn && s->n == 4 && s->c == 16 &&
                  s->h == want[n].h && s->w == want[n].h && s->ho == want[n].ho &&
                  s->wo == want[n].ho && s->e == 4 * 16 * s->h * s->w && !s->cl);
            at[n] = fg.ops[i].node;
        }
        n++;
    }
    CHECK(n == 5);
    if (n == 5) {
        for (int k = 0; k < 5; k++) {
            if (want[k].fn == DLP_RESIZE_NEAREST || want[k].h == want[k].ho)
                fast[nf++] = at[k];
            else
                slow[ns++] = at[k];
        }
    }
    dlp_optime_probes pg, pr;
    synth_by(&pg, 5000, 19, draw_mem_gather, mem_rule);
    synth_by(&pr, 6000, 23, draw_mem_resize, mem_rule);
    dlp_optime *mg = fit_on(&pg), *mr = fit_on(&pr);
    if (n == 5) {
        check_cat_times(&fg, slow, ns, mg, mr, 64, 0.15, 0, "resize");
        check_cat_times(&fg, fast, nf, mg, mr, 2, 0.15, 0, "resize (nearest, same)");
    }
    dlp_feat_graph_free(&fg);
    dlp_optime_free(mg);
    dlp_optime_free(mr);
    dlp_optime_probes_free(&pg);
    dlp_optime_probes_free(&pr);
}

/* resize_layout.onnx: a Resize of tokens [B, 196, 16] transposed and
 * viewed as [B, 16, 14, 14] reads a channels-last input (strides [3136,
 * 1, 224, 16]: CoaT's, PyTorch's NHWC kernel), one of heads [B, 2, 196,
 * 8] transposed to [B, 2, 8, 196] and reshaped, which no view can
 * express (the 2 and 8 do not merge), a contiguous copy: NCHW
 * (EfficientFormerV2's); the layout pass says which (val_cl). */
static void test_resize_layout(void) {
    dlp_feat_graph fg;
    DLP_ASSERT(build_file(RESIZE_LAYOUT, 3, 0, &fg));
    int n = 0;
    bool cl[2] = {false, false};
    for (int i = 0; i < fg.n_ops; i++) {
        const dlp_op_shape *s = &fg.ops[i].shape;
        if (s->kind != DLP_OP_MEM || s->cat != DLP_MEM_RESIZE) continue;
        CHECK(s->n == 3 && s->c == 16 && s->h == 14 && s->ho == 28);
        if (n < 2) cl[n] = s->cl;
        n++;
    }
    CHECK(n == 2 && cl[0] && !cl[1]);
    float x[DLP_OPTIME_NF];
    if (n == 2) {
        dlp_op_shape_features(&fg.ops[fg.node_op[2]].shape, DLP_PREC_FP16, x);
        CHECK(x[20] == 1);
    }
    dlp_feat_graph_free(&fg);
}

/* cls_layout.onnx: tokens after a class token is sliced off, viewed as
 * an image, whose N stride is (HW + 1) C: ATen's order rule calls the
 * view channels-last, so the upsampling and the depthwise convolution of
 * it read channels-last (PyTorch's outputs are, asserted by the
 * generator); an image with H and W transposed is not. */
static void test_cls_layout(void) {
    dlp_feat_graph fg;
    DLP_ASSERT(build_file(CLS_LAYOUT, 2, 0, &fg));
    int nr = 0, nc = 0;
    bool rcl[2] = {false, true}, ccl = false;
    for (int i = 0; i < fg.n_ops; i++) {
        const dlp_op_shape *s = &fg.ops[i].shape;
        if (s->kind == DLP_OP_MEM && s->cat == DLP_MEM_RESIZE) {
            CHECK(s->n == 2 && s->c == 16 && s->h == 14 && s->ho == 28);
            if (nr < 2) rcl[nr] = s->cl;
            nr++;
        } else if (s->kind == DLP_OP_CONV) {
            CHECK(s->n == 2 && s->h == 14 && s->ho == 14);
            ccl = s->cl;
            nc++;
        }
    }
    CHECK(nr == 2 && rcl[0] && !rcl[1]);
    CHECK(nc == 1 && ccl);
    dlp_feat_graph_free(&fg);
}

/* conv_layout.onnx: a depthwise convolution of tokens viewed as a
 * channels-last image (a LayerNorm2d's permute back) allocates a
 * channels-last output (ATen's suggest_memory_format), which the
 * BatchNormalization keeps, and so does a Mul whose first operand is a
 * scalar (StarReLU's scale: the layout comes from the operand not
 * broadcast); the 1x1 convolution after them reads channels-last: both
 * op records and the dense one's workspace record say so (x[11]). The
 * same two convolutions on an NCHW input stay NCHW. */
static void test_conv_layout(void) {
    dlp_feat_graph fg;
    DLP_ASSERT(build_file(CONV_LAYOUT, 2, 0, &fg));
    int n = 0;
    bool cl[4] = {false, false, false, false};
    int64_t g[4] = {0, 0, 0, 0};
    for (int i = 0; i < fg.n_ops; i++) {
        const dlp_op_shape *s = &fg.ops[i].shape;
        if (s->kind != DLP_OP_CONV) continue;
        CHECK(s->n == 2 && s->h == 14 && s->ho == 14);
        if (n < 4) {
            cl[n] = s->cl;
            g[n] = s->g;
        }
        n++;
    }
    CHECK(n == 4);
    CHECK(g[0] == 16 && g[1] == 1 && g[2] == 16 && g[3] == 1);
    CHECK(cl[0] && cl[1] && !cl[2] && !cl[3]);
    CHECK(fg.n_convs == 2);
    if (fg.n_convs == 2) {
        CHECK(fg.convs[0].x[11] == 1.0f);
        CHECK(fg.convs[1].x[11] == 0.0f);
    }
    dlp_feat_graph_free(&fg);
}

/* A Linear's bias (fiftieth session): the probes' "bias" read (0 / 1,
 * else malformed; never on a batched product), the mm feature x[15]; in
 * a graph each Linear of DistilBERT (MatMul, then the Add of its bias)
 * has it (the fixture of test_op_shapes: a MatMul and a Gemm without a
 * bias and a batched product, none). A model fitted on
 * probes where the bias doubles the time times those products 2x; one
 * fitted before (no row with it: its forest never splits on x[15])
 * answers as for the product alone. */
static void test_mm_bias(void) {
    dlp_optime_probes p;
    read_memop_text(
        "{\"spec\": \"grid:optime\", \"seed\": 8, \"gpu\": \"NVIDIA H200\", \"ops\": ["
        "{\"op\": \"mm\", \"prec\": \"fp32\", \"b\": 1, \"m\": 128, \"k\": 3072,"
        " \"n\": 768, \"bw\": 0, \"bias\": 1, \"us\": 63.0},"
        "{\"op\": \"mm\", \"prec\": \"fp32\", \"b\": 1, \"m\": 128, \"k\": 3072,"
        " \"n\": 768, \"bw\": 0, \"bias\": 0, \"us\": 22.0},"
        "{\"op\": \"mm\", \"prec\": \"fp32\", \"b\": 1, \"m\": 128, \"k\": 3072,"
        " \"n\": 768, \"bw\": 0, \"us\": 22.0},"
        "{\"op\": \"mm\", \"prec\": \"fp32\", \"b\": 1, \"m\": 128, \"k\": 3072,"
        " \"n\": 768, \"bw\": 0, \"bias\": 2, \"us\": 22.0},"
        "{\"op\": \"mm\", \"prec\": \"fp32\", \"b\": 4, \"m\": 128, \"k\": 64,"
        " \"n\": 128, \"bw\": 1, \"bias\": 1, \"us\": 9.0}]}\n", false, &p);
    CHECK(p.n == 3 && p.n_bad == 2);
    if (p.n == 3) {
        CHECK(p.rec[0].shape.bias && !p.rec[1].shape.bias && !p.rec[2].shape.bias);
        float x[DLP_OPTIME_NF], y[DLP_OPTIME_NF];
        dlp_op_shape_features(&p.rec[0].shape, DLP_PREC_FP32, x);
        dlp_op_shape_features(&p.rec[1].shape, DLP_PREC_FP32, y);
        CHECK(x[DLP_OPTIME_BIAS_X] == 1 && y[DLP_OPTIME_BIAS_X] == 0);
        x[DLP_OPTIME_BIAS_X] = 0;
        CHECK(!memcmp(x, y, sizeof x));    /* the bias is the one difference */
    }
    dlp_optime_probes_free(&p);
    dlp_feat_graph fg;
    DLP_ASSERT(build_file(DISTILBERT, 2, 128, &fg));
    int lin = 0;
    for (int i = 0; i < fg.n_ops; i++) {
        const dlp_op_shape *s = &fg.ops[i].shape;
        if (s->kind != DLP_OP_MM) continue;
        CHECK(s->bias == !s->bw);
        lin += !s->bw;
    }
    CHECK_MSG(lin >= 6 && lin % 6 == 0, "%d Linear products", lin);
    /* the rule's probes, a third of the products with a bias taking twice
     * the time */
    dlp_optime_probes pc, pb;
    synth(&pc, 1500, 5);
    synth(&pb, 1500, 5);
    uint64_t r = 9;
    for (size_t i = 0; i < pb.n; i++) {
        dlp_optime_probe *q = &pb.rec[i];
        if (q->shape.kind == DLP_OP_MM && !q->shape.bw && u01(&r) < 1.0 / 3) {
            q->shape.bias = true;
            q->us *= 2;
        }
    }
    dlp_optime *mc = NULL, *mb = NULL;
    mc = fit_on(&pc);
    mb = fit_on(&pb);
    dlp_pred_config c = h100_config();
    dlp_feat_device d;
    dlp_feat_device_of(&c, &d);
    int n = 0;
    for (int i = 0; i < fg.n_ops; i++) {
        const dlp_op_shape *s = &fg.ops[i].shape;
        if (s->kind != DLP_OP_MM || s->bw) continue;
        dlp_op_shape plain = *s;
        plain.bias = false;
        double tb = dlp_optime_us(mb, s, DLP_PREC_FP32, &d),
               tp = dlp_optime_us(mb, &plain, DLP_PREC_FP32, &d);
        CHECK_MSG(fabs(tb / tp / 2 - 1) < 0.15, "bias / plain %g", tb / tp);
        CHECK(dlp_optime_us(mc, s, DLP_PREC_FP32, &d) ==
              dlp_optime_us(mc, &plain, DLP_PREC_FP32, &d));
        n++;
    }
    CHECK(n == lin);   /* (its batched products are in fused attentions) */
    dlp_feat_graph_free(&fg);
    dlp_optime_free(mc);
    dlp_optime_free(mb);
    dlp_optime_probes_free(&pc);
    dlp_optime_probes_free(&pb);
}

/* The cross-validation on the rule's probes: the model within a few
 * percent, the roofline off by the rule's factors. */
static void test_heldout(void) {
    dlp_optime_probes p;
    synth(&p, 1500, 3);
    dlp_optime_heldout_stats s;
    dlp_error err;
    CHECK(dlp_optime_heldout(&p, 1, 1, 1, &s, &err) == DLP_ERR_ARG);
    DLP_ASSERT(dlp_optime_heldout(&p, 3, 1, 1, &s, &err) == DLP_OK);
    int n = 0;
    for (int k = 0; k < DLP_OP_NKIND; k++)
        for (int q = 0; q < DLP_PREC_COUNT; q++) {
            n += s.n[k][q];
            if (!s.n[k][q]) continue;
            CHECK(s.mape[k][q] < 3);
            CHECK(s.roof_mape[k][q] > 30);
        }
    CHECK(n == 1500);
    dlp_optime_probes_free(&p);
}

int main(void) {
    RUN(test_op_shapes);
    RUN(test_memop_shapes);
    RUN(test_group_norm_record);
    RUN(test_copy_shapes);
    RUN(test_attn_shapes);
    RUN(test_probe_reader);
    RUN(test_memop_reader);
    RUN(test_fit_and_file);
    RUN(test_mem_view);
    RUN(test_mfill_reader);
    RUN(test_mfill);
    RUN(test_gather_reader);
    RUN(test_gather);
    RUN(test_resize_reader);
    RUN(test_resize);
    RUN(test_resize_layout);
    RUN(test_conv_layout);
    RUN(test_cls_layout);
    RUN(test_mm_bias);
    RUN(test_heldout);
    return CHECK_DONE();
}
