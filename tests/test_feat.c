/* test_feat.c — the featurizer: vocabulary, node features of a real model
 * checked against the graph and the cost model (independently summed),
 * roofline times against hand-computed values, unseen ops -> "other" and
 * an out-of-distribution flag, schema-version mismatch -> load error, the
 * reader index against a scan of the graph. */
#include "check.h"
#include "feat/feat.h"
#include "model/model.h"
#include "pred/pred_train.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* path opened, bound to batch b and (s > 0) sequence length s, analysed;
 * NULL (and the error on stderr) on failure */
static dlp_model *open_seq(const char *path, int64_t b, int64_t s) {
    dlp_error err;
    dlp_model *m = NULL;
    if (dlp_model_open(path, &m, &err) || dlp_model_set_batch(m, b, &err) ||
        (s > 0 && dlp_model_bind_dim(m, "seq", s, &err)) ||
        dlp_model_analyze(m, &err)) {
        fprintf(stderr, "%s: %s\n", path, err.msg);
        dlp_model_free(m);
        return NULL;
    }
    return m;
}

static dlp_model *open_model(const char *path, int64_t batch) {
    return open_seq(path, batch, 0);
}

static void h100(dlp_pred_config *c) {
    dlp_pred_config_init(c);
    dlp_error err;
    DLP_ASSERT(dlp_device_find("H100-SXM5-80GB", &c->device, &err) == DLP_OK);
}

static void test_vocabulary(void) {
    CHECK(DLP_FEAT_NOPS >= 100);
    CHECK(!strcmp(dlp_feat_op_name(DLP_FEAT_NOPS), "other"));
    CHECK(dlp_feat_op_name(DLP_FEAT_NOPS + 1) == NULL);
    CHECK(dlp_feat_op_index("", "Conv") >= 0);
    CHECK(dlp_feat_op_index("", "MatMul") >= 0);
    CHECK(dlp_feat_op_index("com.microsoft", "Attention") >= 0);
    CHECK(dlp_feat_op_index("", "NoSuchOp") == -1);
    CHECK(dlp_feat_op_index("my.domain", "Conv") == -1);
    /* names are unique and round-trip */
    for (int i = 0; i < DLP_FEAT_NOPS; i++) {
        CHECK(dlp_feat_op_index("", dlp_feat_op_name(i)) == i);
        for (int j = 0; j < i; j++)
            CHECK(strcmp(dlp_feat_op_name(i), dlp_feat_op_name(j)));
    }
    for (int i = 0; i < DLP_FEAT_NODE_DIM; i++) CHECK(dlp_feat_node_name(i) != NULL);
    for (int i = 0; i < DLP_FEAT_STATIC_DIM; i++) CHECK(dlp_feat_static_name(i) != NULL);
    CHECK(dlp_feat_node_name(DLP_FEAT_NODE_DIM) == NULL);
}

static void test_resnet_nodes(void) {
    dlp_model *m = open_model("tests/fixtures/models/resnet18.onnx", 4);
    CHECK(m != NULL);
    if (!m) return;
    dlp_error err;
    dlp_feat_graph fg;
    CHECK(dlp_feat_graph_build(&fg, &m->graph, 4, 0, 224, 224, &err) == DLP_OK);
    const dlp_graph *g = &m->graph;
    CHECK(fg.n_nodes == (int)g->n_nodes);
    CHECK(fg.n_unknown == 0);
    /* totals equal the library's summary (computed by src/model) */
    dlp_summary s;
    dlp_model_summary(m, &s);
    CHECK_CLOSE(fg.macs, s.macs, 1e-9);
    CHECK_CLOSE(fg.weight_bytes, (double)s.weight_bytes, 1e-9);
    /* the summary frees at last use but gives every tensor a block; the
     * featurizer's PyTorch liveness (views alias, in-place ReLU) can only
     * need fewer, plus at most one convolution's cuDNN workspace (its
     * input + output bytes) at a time (hand-computed cases:
     * test_memest.c) */
    double ws = 0;
    for (size_t i = 0; i < g->n_nodes; i++) {
        const dlp_node *n = &g->nodes[i];
        if (strcmp(n->op_type, "Conv")) continue;
        double b = (double)n->cost.in_bytes + (double)n->cost.out_bytes;
        if (b > ws) ws = b;
    }
    CHECK(ws > 0);
    CHECK(fg.peak_act_bytes > 0 &&
          fg.peak_act_bytes <= (double)s.peak_activation_bytes + ws);
    CHECK(fg.peak_act_bytes > (double)s.peak_activation_bytes / 2);
    /* edges: one per input slot fed by another node */
    int e = 0;
    for (size_t i = 0; i < g->n_nodes; i++)
        for (int k = 0; k < g->nodes[i].n_inputs; k++)
            if (g->nodes[i].inputs[k] >= 0 && g->values[g->nodes[i].inputs[k]].producer >= 0) e++;
    CHECK(fg.n_edges == e);
    dlp_pred_config c;
    h100(&c);
    c.batch = 4;
    float *x = malloc((size_t)fg.n_nodes * DLP_FEAT_NODE_DIM * sizeof *x);
    dlp_feat_nodes(&fg, &c, x);
    int conv = dlp_feat_op_index("", "Conv"), seen7 = 0;
    for (int i = 0; i < fg.n_nodes; i++) {
        float *r = x + (size_t)i * DLP_FEAT_NODE_DIM;
        double hot = 0;
        for (int k = 0; k <= DLP_FEAT_NOPS; k++) hot += r[k];
        CHECK(hot == 1.0);
        const dlp_node *n = &g->nodes[i];
        CHECK(r[dlp_feat_op_index("", n->op_type)] == 1.0f);
        float *d = r + DLP_FEAT_NOPS + 1;
        if (!strcmp(n->op_type, "Conv")) {
            const dlp_attr *ks = dlp_node_attr(n, "kernel_shape");
            CHECK(ks && d[0] == ks->ints[0] && d[1] == ks->ints[1]);
            if (d[0] == 7) {   /* the stem: 7x7 stride 2 pad 3 */
                seen7++;
                CHECK(d[2] == 2 && d[3] == 2 && d[4] == 6 && d[5] == 6);
                /* input [4,3,224,224] right-aligned into 6 slots, log2(1+d) */
                CHECK_CLOSE(d[DLP_FEAT_NATTR + 2], log2(5.0), 1e-6);
                CHECK_CLOSE(d[DLP_FEAT_NATTR + 5], log2(225.0), 1e-6);
                CHECK(d[DLP_FEAT_NATTR + 6] == 4);   /* rank */
            }
            CHECK(r[conv] == 1.0f);
            /* log MACs column */
            CHECK_CLOSE(d[DLP_FEAT_NATTR + 14], log1p(n->cost.macs), 1e-5);
            /* roofline: compute at the fp32 peak, memory at the bandwidth */
            double tc = fmax(n->cost.flops, 2 * n->cost.macs) /
                        (c.device.fp32_tflops * 1e12) * 1e6;
            double tm = ((double)n->cost.in_bytes + n->cost.out_bytes +
                         n->cost.weight_bytes) / (c.device.mem_bw_gbs * 1e9) * 1e6;
            float *rf = d + DLP_FEAT_DENSE;
            CHECK_CLOSE(rf[0], log1p(tc), 1e-4);
            CHECK_CLOSE(rf[1], log1p(tm), 1e-4);
            CHECK_CLOSE(rf[2], log1p(fmax(tc, tm)), 1e-4);
        }
    }
    CHECK(seen7 == 1);
    /* any split into row ranges gives the same rows */
    DLP_ASSERT(fg.n_nodes > 64);
    float *y = malloc((size_t)fg.n_nodes * DLP_FEAT_NODE_DIM * sizeof *y);
    int cuts[] = {0, 1, 7, 64, fg.n_nodes};
    for (int k = 0; k + 1 < (int)(sizeof cuts / sizeof *cuts); k++)
        dlp_feat_nodes_range(&fg, &c, cuts[k], cuts[k + 1],
                             y + (size_t)cuts[k] * DLP_FEAT_NODE_DIM);
    CHECK(memcmp(x, y, (size_t)fg.n_nodes * DLP_FEAT_NODE_DIM * sizeof *y) == 0);
    free(y);
    /* fp16: tensor-core peak for convs and half the bytes */
    dlp_pred_config c16 = c;
    c16.precision = DLP_PREC_FP16;
    dlp_feat_roofline r32, r16;
    dlp_feat_roofline_of(&fg, &c, &r32);
    dlp_feat_roofline_of(&fg, &c16, &r16);
    CHECK_CLOSE(r16.memory_ms, r32.memory_ms / 2, 1e-9);
    CHECK(r16.compute_ms < r32.compute_ms / 5);
    CHECK_CLOSE(r32.weights_mib, s.weight_bytes / 1048576.0, 1e-9);
    /* a MIG slice has less bandwidth and compute: slower roofline */
    dlp_pred_config cm = c;
    CHECK(dlp_device_mig(&c.device, "1g.10gb", &cm.mig, &err) == DLP_OK);
    cm.has_mig = true;
    dlp_feat_roofline rm;
    dlp_feat_roofline_of(&fg, &cm, &rm);
    CHECK(rm.roofline_ms > r32.roofline_ms * 3);
    float st[DLP_FEAT_STATIC_DIM];
    dlp_feat_static(&fg, &c, st);
    CHECK_CLOSE(st[0], log1p(s.macs), 1e-5);
    CHECK(st[24] == 1 && st[25] == 0 && st[26] == 0);   /* fp32 one-hot */
    for (int i = 0; i < DLP_FEAT_STATIC_DIM; i++) CHECK(isfinite(st[i]));
    free(x);
    dlp_feat_graph_free(&fg);
    dlp_model_free(m);
}

static void test_batch_scales(void) {
    dlp_model *a = open_model("tests/fixtures/models/resnet18.onnx", 1);
    dlp_model *b = open_model("tests/fixtures/models/resnet18.onnx", 8);
    CHECK(a && b);
    if (a && b) {
        dlp_error err;
        dlp_feat_graph fa, fb;
        CHECK(!dlp_feat_graph_build(&fa, &a->graph, 1, 0, 0, 0, &err));
        CHECK(!dlp_feat_graph_build(&fb, &b->graph, 8, 0, 0, 0, &err));
        CHECK_CLOSE(fb.macs, 8 * fa.macs, 1e-9);
        CHECK_CLOSE(fb.weight_bytes, fa.weight_bytes, 1e-12);
        dlp_feat_graph_free(&fa);
        dlp_feat_graph_free(&fb);
    }
    dlp_model_free(a);
    dlp_model_free(b);
}

/* An op the featurizer has never seen maps to "other" and the prediction
 * is flagged out of distribution (the roofline kind needs no training). */
/* A roofline predictor of inference latency, its file held in *f. */
static dlp_predictor *roofline_latency(dlp_nn_file *f) {
    dlp_error err;
    dlp_pred_meta meta;
    dlp_pred_meta_init(&meta, "roofline", DLP_MODE_INFERENCE);
    meta.targets = 1u << DLP_T_INF_LATENCY_MS;
    CHECK(!dlp_pred_meta_write(&meta, f, &err));
    CHECK(!dlp_nn_file_add_str(f, "roofline/version", "1", &err));
    dlp_predictor *p = NULL;
    CHECK(dlp_predictor_from_file(f, NULL, &p, &err) == DLP_OK);
    return p;
}

static void test_unseen_op(void) {
    dlp_model *m = open_model("tests/fixtures/models/resnet18.onnx", 1);
    CHECK(m != NULL);
    if (!m) return;
    for (size_t i = 0; i < m->graph.n_nodes; i++)
        if (!strcmp(m->graph.nodes[i].op_type, "Relu")) {
            m->graph.nodes[i].op_type = "FancyNewRelu";
            break;
        }
    dlp_error err;
    dlp_feat_graph fg;
    CHECK(!dlp_feat_graph_build(&fg, &m->graph, 1, 0, 0, 0, &err));
    CHECK(fg.n_unknown == 1);
    CHECK(!strcmp(fg.unknown_op, "FancyNewRelu"));
    int other = 0;
    for (int i = 0; i < fg.n_nodes; i++) other += fg.op[i] == DLP_FEAT_NOPS;
    CHECK(other == 1);
    dlp_feat_graph_free(&fg);
    /* through a predictor: flagged, still a number */
    dlp_nn_file f = {0};
    dlp_predictor *p = roofline_latency(&f);
    dlp_pred_config c;
    h100(&c);
    dlp_pred_input in = {&m->graph, &c, NULL, NULL};
    dlp_pred_result r;
    dlp_pred_result_init(&r);
    CHECK(p && dlp_predictor_predict(p, &in, &r, &err) == DLP_OK);
    CHECK(r.ood);
    CHECK(strstr(r.ood_reason, "FancyNewRelu") != NULL);
    CHECK(r.v[DLP_T_INF_LATENCY_MS].valid && r.v[DLP_T_INF_LATENCY_MS].value > 0);
    dlp_predictor_free(p);
    dlp_nn_file_free(&f);
    dlp_model_free(m);
}

/* A graph exported at a fixed size and bound to another: torchvision's
 * VGG-16 at 224 px folds its adaptive pooling to a fixed 7 x 7 input, so
 * at 32 px the classifier's Gemm gets 512 features for 25088 weights.
 * The shape inference counts the contradicted nodes, the featurizer keeps
 * the count, a predictor flags the binding out of distribution (the
 * dataset loader drops such labels, pred_data.c); at 224 px nothing. */
static void test_shape_conflict(void) {
    dlp_error err;
    for (int k = 0; k < 2; k++) {
        int64_t px = k ? 224 : 32;
        dlp_model *m = NULL;
        CHECK(dlp_model_open("tests/fixtures/models/vgg16.onnx", &m, &err) ==
                  DLP_OK &&
              dlp_model_set_batch(m, 2, &err) == DLP_OK);
        if (!m) return;
        CHECK(dlp_feat_bind_resolution(&m->graph, px, px) == 1);
        CHECK(dlp_model_analyze(m, &err) == DLP_OK);
        CHECK_MSG((m->graph.n_shape_conflicts > 0) == (px == 32), "%lld px: %d",
                  (long long)px, m->graph.n_shape_conflicts);
        dlp_feat_graph fg;
        CHECK(!dlp_feat_graph_build(&fg, &m->graph, 2, 0, px, px, &err));
        CHECK(fg.n_shape_conflicts == m->graph.n_shape_conflicts);
        dlp_nn_file f = {0};
        dlp_predictor *p = roofline_latency(&f);
        dlp_pred_config c;
        h100(&c);
        c.batch = 2;
        c.height = c.width = px;
        dlp_pred_input in = {&m->graph, &c, &fg, NULL};
        dlp_pred_result r;
        dlp_pred_result_init(&r);
        CHECK(p && dlp_predictor_predict(p, &in, &r, &err) == DLP_OK);
        CHECK(r.ood == (px == 32));
        CHECK(px != 32 || strstr(r.ood_reason, "cannot run at this binding"));
        dlp_predictor_free(p);
        dlp_nn_file_free(&f);
        dlp_feat_graph_free(&fg);
        dlp_model_free(m);
    }
}

/* nodes of fg whose output Hugging Face's fp16 inf clamp checks */
static int n_clamped(const dlp_feat_graph *fg) {
    int n = 0;
    for (int i = 0; i < fg->n_nodes; i++) n += fg->clamp_elems[i] > 0;
    return n;
}

/* log1p(us) roofline columns of node i: compute, memory */
static void roof_cols(const dlp_feat_graph *fg, const dlp_pred_config *c,
                      int i, double *cmp, double *mem) {
    float row[DLP_FEAT_NODE_DIM];
    dlp_feat_nodes_range(fg, c, i, i + 1, row);
    *cmp = row[DLP_FEAT_NOPS + 1 + DLP_FEAT_DENSE];
    *mem = row[DLP_FEAT_NOPS + 1 + DLP_FEAT_DENSE + 1];
}

/* Schema 8: a language model whose attention has a learned additive bias
 * (Hugging Face T5, tests/fixtures/memest/hf_t5.onnx: 4 layers, 6 heads,
 * hidden 384) runs that attention in float at half precision and, at
 * fp16 only, clamps its hidden states after each sub-layer (feat.h:
 * DLP_FP16_CLAMP_BYTES). The attention products' compute time is the FP32
 * CUDA-core rate and their bytes are 4 an element; each of the 2 x 4
 * residual Adds moves the clamp's 12 bytes an element on top and adds 8
 * kernels. A BERT-style encoder (DistilBERT, no bias) is untouched. */
/* path opened at batch b, sequence s and featurized (*m NULL when not),
 * with an H100 config of that binding */
static void open_featurized(const char *path, int64_t b, int64_t s,
                            dlp_model **m, dlp_feat_graph *fg,
                            dlp_pred_config *c) {
    dlp_error err;
    *m = open_seq(path, b, s);
    CHECK(*m != NULL);
    if (*m) CHECK(!dlp_feat_graph_build(fg, &(*m)->graph, b, s, 0, 0, &err));
    h100(c);
    c->batch = b;
    c->seq = s;
}

static void test_t5_half(void) {
    dlp_model *m;
    dlp_feat_graph fg;
    dlp_pred_config c;
    open_featurized("tests/fixtures/memest/hf_t5.onnx", 2, 128, &m, &fg, &c);
    if (!m) return;
    dlp_error err;
    const dlp_device *d = &c.device;
    double bw = d->mem_bw_gbs * 1e9;
    /* 2 sub-layers (attention, feed-forward) x 4 layers */
    CHECK_MSG(n_clamped(&fg) == 8, "%d clamped residual Adds", n_clamped(&fg));
    int attn_mm = 0, proj_mm = 0;
    for (int i = 0; i < fg.n_nodes; i++) {
        const dlp_node *n = &m->graph.nodes[i];
        double c16, m16, c32, m32, cb, mb;
        if (!strcmp(n->op_type, "MatMul")) {
            c.precision = DLP_PREC_FP16;
            roof_cols(&fg, &c, i, &c16, &m16);
            c.precision = DLP_PREC_FP32;
            roof_cols(&fg, &c, i, &c32, &m32);
            c.precision = DLP_PREC_BF16;
            roof_cols(&fg, &c, i, &cb, &mb);
            if (fg.half_f32[i]) {           /* QK^T, PV: float */
                attn_mm++;
                double want = log1p(fg.flops[i] / (d->fp32_tflops * 1e12) * 1e6);
                CHECK(fg.flops[i] > 0);
                CHECK_CLOSE(c16, want, 1e-5);
                CHECK_CLOSE(cb, want, 1e-5);
                CHECK_CLOSE(m16, log1p(fg.bytes[i] / bw * 1e6), 1e-5);
                CHECK_CLOSE(m16, m32, 1e-6);
            } else {                        /* projections: tensor cores */
                proj_mm++;
                double want = log1p(fg.flops[i] / (d->fp16_tc_tflops * 1e12) * 1e6);
                CHECK_CLOSE(c16, want, 1e-5);
                CHECK_CLOSE(m16, log1p(fg.bytes[i] * 0.5 / bw * 1e6), 1e-5);
            }
        }
        if (fg.clamp_elems[i] > 0) {
            CHECK(!strcmp(n->op_type, "Add"));
            CHECK(fg.clamp_elems[i] == 2 * 128 * 384);
            c.precision = DLP_PREC_FP16;
            roof_cols(&fg, &c, i, &c16, &m16);
            c.precision = DLP_PREC_BF16;    /* torch.float16 only */
            roof_cols(&fg, &c, i, &cb, &mb);
            CHECK_CLOSE(m16, log1p((fg.bytes[i] * 0.5 + fg.clamp_elems[i] *
                                    DLP_FP16_CLAMP_BYTES) / bw * 1e6), 1e-5);
            CHECK_CLOSE(mb, log1p(fg.bytes[i] * 0.5 / bw * 1e6), 1e-5);
        }
    }
    CHECK_MSG(attn_mm == 8 && proj_mm == 4 * 6, "%d attention, %d other "
              "MatMuls", attn_mm, proj_mm);
    dlp_feat_roofline r16, rb, r32;
    c.precision = DLP_PREC_FP16;
    dlp_feat_roofline_of(&fg, &c, &r16);
    c.precision = DLP_PREC_BF16;
    dlp_feat_roofline_of(&fg, &c, &rb);
    c.precision = DLP_PREC_FP32;
    dlp_feat_roofline_of(&fg, &c, &r32);
    /* half precision adds the float attention's casts and safe softmax,
     * the norms' .float() casts (feat_kern.c) and, at fp16, the clamps */
    CHECK(fg.n_half_kernels > 0);
    CHECK(r16.kernels == fg.n_eager_kernels + fg.n_half_kernels +
                             8 * DLP_FP16_CLAMP_KERNELS);
    CHECK(rb.kernels == fg.n_eager_kernels + fg.n_half_kernels);
    CHECK(r32.kernels == fg.n_eager_kernels);
    CHECK(r16.kernel_ms > rb.kernel_ms);
    dlp_feat_graph_free(&fg);
    dlp_model_free(m);
    /* without a sequence dimension (a vision model's relative position
     * bias, Swin / MaxViT): no rule */
    m = open_seq("tests/fixtures/memest/hf_t5.onnx", 2, 128);
    CHECK(m && !dlp_feat_graph_build(&fg, &m->graph, 2, 0, 0, 0, &err));
    int marked = 0;
    for (int i = 0; i < fg.n_nodes; i++) marked += fg.half_f32[i];
    CHECK(marked == 0 && n_clamped(&fg) == 0);
    dlp_feat_graph_free(&fg);
    dlp_model_free(m);
    /* BERT-style encoder: fused attention, no bias, no clamp */
    m = open_seq("tests/fixtures/memest/hf_distilbert.onnx", 2, 128);
    CHECK(m != NULL);
    if (!m) return;
    CHECK(!dlp_feat_graph_build(&fg, &m->graph, 2, 128, 0, 0, &err));
    marked = 0;
    for (int i = 0; i < fg.n_nodes; i++) marked += fg.half_f32[i];
    CHECK(marked == 0 && n_clamped(&fg) == 0 && fg.n_sdpa > 0);
    c.precision = DLP_PREC_FP16;
    for (int i = 0; i < fg.n_nodes; i++)
        if (!strcmp(m->graph.nodes[i].op_type, "MatMul")) {
            double c16, m16;
            roof_cols(&fg, &c, i, &c16, &m16);
            CHECK_CLOSE(c16, log1p(fg.flops[i] / (d->fp16_tc_tflops * 1e12) *
                                   1e6), 1e-5);
        }
    dlp_feat_roofline_of(&fg, &c, &r16);
    CHECK(r16.kernels == fg.n_eager_kernels + fg.n_half_kernels);
    dlp_feat_graph_free(&fg);
    dlp_model_free(m);
}

static void test_schema_mismatch(void) {
    dlp_error err;
    dlp_nn_file f = {0};
    dlp_pred_meta meta;
    dlp_pred_meta_init(&meta, "roofline", DLP_MODE_INFERENCE);
    meta.targets = 1u << DLP_T_INF_LATENCY_MS;
    meta.feat_schema = DLP_FEAT_SCHEMA + 1;
    CHECK(!dlp_pred_meta_write(&meta, &f, &err));
    CHECK(!dlp_nn_file_add_str(&f, "roofline/version", "1", &err));
    char path[] = "/tmp/dlp_test_feat_XXXXXX.dlpm";
    int fd = mkstemps(path, 5);
    CHECK(fd >= 0);
    close(fd);
    CHECK(dlp_nn_file_save(&f, path, &err) == DLP_OK);
    dlp_predictor *p = NULL;
    dlp_status st = dlp_predictor_load(path, NULL, &p, &err);
    CHECK(st == DLP_ERR_UNSUPPORTED);
    CHECK(p == NULL);
    CHECK(strstr(err.msg, "feature schema") != NULL);
    unlink(path);
    dlp_nn_file_free(&f);
}

static int static_index(const char *name) {
    for (int i = 0; i < DLP_FEAT_STATIC_DIM; i++)
        if (!strcmp(dlp_feat_static_name(i), name)) return i;
    return -1;
}

/* schema 9's static features: the bidirectional mask under capture (the
 * encoder's, not GPT-2's causal one) and the largest scores (batch x heads
 * x S x S elements; fp32 4 bytes, fp16 2), and the training memory
 * estimate in every mode (at half precision: mixed for training rows,
 * weights at half too for the others) */
static void test_attention_statics(void) {
    int ib = static_index("mask_bidir_graph"), is = static_index("log_scores_mib"),
        it = static_index("log_train_mem_mib");
    CHECK(ib >= 0 && is >= 0 && it >= 0);
    if (ib < 0 || is < 0 || it < 0) return;
    const char *fix[] = {"tests/fixtures/memest/hf_distilbert.onnx",
                         "tests/fixtures/memest/hf_gpt2.onnx"};
    for (int f = 0; f < 2; f++) {
        dlp_model *m;
        dlp_feat_graph fg;
        dlp_pred_config c;
        open_featurized(fix[f], 2, 128, &m, &fg, &c);
        if (!m) continue;
        float st[DLP_FEAT_STATIC_DIM];
        for (int rt = 0; rt < DLP_RT_COUNT; rt++)
            for (int p = 0; p < DLP_PREC_COUNT; p++) {
                c.runtime = (dlp_runtime)rt;
                c.precision = (dlp_precision)p;
                dlp_feat_static(&fg, &c, st);
                CHECK(st[ib] == (rt == DLP_RT_GRAPH && f == 0));
                double sc = fmax(fg.max_scores_elems, fg.max_biased_scores_elems);
                double heads = sc / (2.0 * 128 * 128);
                CHECK_MSG(heads >= 2 && heads == floor(heads), "%g heads", heads);
                CHECK_CLOSE(st[is], log1p(sc * (p == DLP_PREC_FP32 ? 4 : 2) /
                                          1048576.0), 1e-5);
                /* a training row: the estimate of its (mixed) precision,
                 * through the backward (train_curve); another mode's row:
                 * the form the shipped inference and LLM networks
                 * learned, 3 x weights + saved blocks (what the estimate
                 * is without a curve), the weights at half too at half */
                dlp_pred_config ct = c;
                ct.mode = DLP_MODE_TRAINING;
                double est = dlp_feat_mem_estimate_mib(&fg, &ct),
                       w = fg.mem_weight_bytes / 1048576.0;
                int ncurve = fg.n_train_curve;
                CHECK(ncurve > 0);
                fg.n_train_curve = 0;
                double old = dlp_feat_mem_estimate_mib(&fg, &ct);
                fg.n_train_curve = ncurve;
                CHECK(w > 1);
                CHECK(fabs(est - old) > 1e-3);
                CHECK_CLOSE(st[it], log1p(p == DLP_PREC_FP32 ? old : old - 1.5 * w),
                            1e-5);
                float stt[DLP_FEAT_STATIC_DIM];
                dlp_feat_static(&fg, &ct, stt);
                CHECK_CLOSE(stt[it], log1p(est), 1e-5);
            }
        dlp_feat_graph_free(&fg);
        dlp_model_free(m);
    }
}

/* The reader index (dlp_feat_uses) against a scan of every node's
 * inputs: per value the slot count, the distinct readers in index order
 * (dlp_feat_readers, cut at max) and the sole reader. The fixtures include
 * nodes that read one value twice (the x * x of a tanh GELU, a weight
 * standardisation's square, a Llama's SiLU). */
#define CHECK_EQ_INT(a, b) CHECK_MSG((a) == (b), "%d vs %d", (int)(a), (int)(b))

static void test_reader_index(void) {
    const char *fix[] = {"tests/fixtures/models/resnet18.onnx",
                         "tests/fixtures/models/llama_tiny.onnx",
                         "tests/fixtures/memest/memest_gelu_tanh.onnx",
                         "tests/fixtures/memest/memest_wstd.onnx"};
    int twice = 0;
    for (size_t f = 0; f < sizeof fix / sizeof *fix; f++) {
        dlp_error err;
        dlp_model *m = NULL;
        CHECK(dlp_model_open(fix[f], &m, &err) == DLP_OK);
        if (!m) continue;
        const dlp_graph *g = &m->graph;
        dlp_feat_uses u;
        CHECK(dlp_feat_uses_of(g, &u));
        for (size_t v = 0; v < g->n_values; v++) {
            int slots = 0, readers[64], nr = 0;
            for (size_t i = 0; i < g->n_nodes; i++) {
                int k0 = slots;
                for (int k = 0; k < g->nodes[i].n_inputs; k++)
                    slots += g->nodes[i].inputs[k] == (int)v;
                if (slots - k0 > 1) twice++;
                if (slots > k0 && nr < 64) readers[nr++] = (int)i;
            }
            CHECK_EQ_INT(u.n[v], slots);
            int c[64], n = dlp_feat_readers(&u, (int)v, c, 64);
            CHECK_EQ_INT(n, nr);
            for (int j = 0; j < n && j < nr; j++) CHECK_EQ_INT(c[j], readers[j]);
            if (nr > 1) CHECK_EQ_INT(dlp_feat_readers(&u, (int)v, c, 1), 1);
            CHECK_EQ_INT(dlp_feat_sole_use(&u, (int)v),
                         slots == 1 ? readers[0] : -1);
        }
        int c[2];
        CHECK_EQ_INT(dlp_feat_readers(&u, -1, c, 2), 0);
        CHECK_EQ_INT(dlp_feat_sole_use(&u, -1), -1);
        dlp_feat_uses_free(&u);
        dlp_model_free(m);
    }
    CHECK(twice >= 3);
}

int main(void) {
    RUN(test_vocabulary);
    RUN(test_resnet_nodes);
    RUN(test_batch_scales);
    RUN(test_unseen_op);
    RUN(test_shape_conflict);
    RUN(test_t5_half);
    RUN(test_attention_statics);
    RUN(test_schema_mismatch);
    RUN(test_reader_index);
    return CHECK_DONE();
}
