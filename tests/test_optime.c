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

static bool build(int64_t batch, dlp_feat_graph *fg) {
    dlp_model *m = NULL;
    dlp_error err;
    bool ok = dlp_model_open(FIXTURE, &m, &err) == DLP_OK &&
              dlp_model_set_batch(m, batch, &err) == DLP_OK &&
              dlp_model_analyze(m, &err) == DLP_OK &&
              dlp_feat_graph_build(fg, &m->graph, batch, 0, 0, 0, &err) == DLP_OK;
    if (!ok) fprintf(stderr, "  %s: %s\n", FIXTURE, err.msg);
    dlp_model_free(m);
    return ok;
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
    CHECK(!fg.op_eff);
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
    /* training times (probe_optime.py --train): an optrain file, read only
     * with train; each record's time its train_us, its roofline three
     * forward rooflines; a record without train_us is malformed there. An
     * optrain file does not reach the forward model, nor an optime file
     * the training one. */
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
    CHECK(!p.train && p.n_files == 1 && p.n == 2);
    if (t.n == 1 && p.n == 2) {
        CHECK(t.rec[0].us == 30.5f);
        CHECK_CLOSE(t.rec[0].roof_us, 3.0 * p.rec[1].roof_us, 1e-6);
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

static void synth(dlp_optime_probes *p, int n, uint64_t seed) {
    memset(p, 0, sizeof *p);
    p->rec = calloc((size_t)n, sizeof *p->rec);
    DLP_ASSERT(p->rec);
    dlp_pred_config c;
    dlp_pred_config_init(&c);
    dlp_error err;
    DLP_ASSERT(dlp_device_find("h200", &c.device, &err) == DLP_OK);
    uint64_t s = seed;
    static const int64_t ch[] = {16, 32, 64, 128, 256};
    for (int i = 0; i < n; i++) {
        dlp_optime_probe *q = &p->rec[i];
        dlp_op_shape *sh = &q->shape;
        q->prec = u01(&s) < 0.5 ? DLP_PREC_FP32 : DLP_PREC_FP16;
        if (u01(&s) < 0.5) {
            sh->kind = DLP_OP_CONV;
            sh->n = 1 + (int64_t)(u01(&s) * 8);
            sh->c = ch[(int)(u01(&s) * 5)];
            sh->h = sh->w = 8 + (int64_t)(u01(&s) * 40);
            sh->kh = sh->kw = 3;
            sh->s = 1;
            sh->p = 1;
            sh->g = u01(&s) < 0.5 ? sh->c : 1;
            sh->k = sh->g > 1 ? sh->c : ch[(int)(u01(&s) * 5)];
            sh->ho = sh->h;
            sh->wo = sh->w;
        } else {
            sh->kind = DLP_OP_MM;
            sh->b = 1 + (int64_t)(u01(&s) * 4);
            sh->m = 16 + (int64_t)(u01(&s) * 1000);
            sh->kk = ch[(int)(u01(&s) * 5)];
            sh->nn = ch[(int)(u01(&s) * 5)];
            sh->bw = u01(&s) < 0.5;
        }
        c.precision = (dlp_precision)q->prec;
        dlp_feat_device d;
        dlp_feat_device_of(&c, &d);
        q->roof_us = (float)dlp_op_shape_roof_us(sh, c.precision, &d);
        q->us = (float)(q->roof_us * exp2(rule(sh, c.precision)));
    }
    p->n = p->cap = (size_t)n;
}

static void test_fit_and_file(void) {
    dlp_optime_probes p;
    synth(&p, 3000, 7);
    dlp_optime *m = NULL;
    dlp_error err;
    DLP_ASSERT(dlp_optime_fit(&p, NULL, 1, &m, &err) == DLP_OK && m);
    /* fresh shapes of the same rule come back within 2% on average (10%
     * at worst: the boosting's row and column samples) on the H200, and
     * on the H100 as its own roofline times the same factor */
    dlp_optime_probes t;
    synth(&t, 200, 99);
    dlp_pred_config c;
    dlp_pred_config_init(&c);
    DLP_ASSERT(dlp_device_find("H100-SXM5-80GB", &c.device, &err) == DLP_OK);
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
    /* a forest of another width under the model's name is refused */
    {
        float x[64 * 5], y[64];
        for (int i = 0; i < 64; i++) {
            for (int k = 0; k < 5; k++) x[i * 5 + k] = (float)((i * 7 + k * 3) % 11);
            y[i] = x[i * 5] > 5 ? 1.f : 0.f;
        }
        dlp_tree_params tp;
        dlp_tree_params_default(&tp);
        tp.rounds = 3;
        dlp_tree *tr = NULL;
        dlp_forest *fr = NULL;
        DLP_ASSERT(dlp_tree_train(x, 64, 5, y, &tp, &tr, &err) == DLP_OK);
        DLP_ASSERT(dlp_forest_from_tree(tr, 5, &fr, &err) == DLP_OK);
        dlp_nn_file h = {0};
        DLP_ASSERT(dlp_forest_save(fr, &h, "optime/conv", &err) == DLP_OK);
        DLP_ASSERT(dlp_nn_file_save(&h, path, &err) == DLP_OK);
        dlp_nn_file_free(&h);
        dlp_nn_file g2 = {0};
        DLP_ASSERT(dlp_nn_file_load(&g2, path, &err) == DLP_OK);
        dlp_optime *bad = NULL;
        CHECK(dlp_optime_load(&g2, &bad, &err) == DLP_ERR_FORMAT && !bad &&
              strstr(err.msg, "optime/conv"));
        dlp_nn_file_free(&g2);
        dlp_forest_free(fr);
        dlp_tree_free(tr);
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
    DLP_ASSERT(dlp_optime_fit(&conv_only, NULL, 1, &mc, &err) == DLP_OK && mc);
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
    DLP_ASSERT(dlp_optime_view(m, &fg, c.precision, &view, &eff, &err) == DLP_OK);
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
    for (int k = 0; k < 2; k++)
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
    RUN(test_probe_reader);
    RUN(test_fit_and_file);
    RUN(test_heldout);
    return CHECK_DONE();
}
