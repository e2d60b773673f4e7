/* test_op_stats.c — dlp_model_op_stats against the summary and the onnx
 * package's node counts (tests/fixtures/models/oracle.json has none per op,
 * so the per-op counts below were read with onnx: Conv 53, Gemm 1 in the
 * ResNet-50 fixture), plus misuse. */
#include "dlperf.h"

#include "check.h"

static void totals_match_summary(void) {
    const char *files[] = {"tests/fixtures/models/resnet50.onnx",
                           "tests/fixtures/models/swin_t.onnx",
                           "tests/fixtures/models/gpt_tiny.onnx"};
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        dlp_error err;
        dlp_model *m = NULL;
        CHECK_MSG(dlp_model_open(files[f], &m, &err) == DLP_OK, "%s", err.msg);
        if (!m) continue;
        dlp_model_bind_dim(m, "seq", 16, &err); /* absent in CNNs: ignored */
        CHECK(dlp_model_set_batch(m, 2, &err) == DLP_OK);
        CHECK(dlp_model_analyze(m, &err) == DLP_OK);
        dlp_summary s;
        CHECK(dlp_model_summary(m, &s) == DLP_OK);
        dlp_op_stat *st = NULL;
        int n = 0;
        CHECK(dlp_model_op_stats(m, &st, &n, &err) == DLP_OK);
        int64_t count = 0;
        double macs = 0, flops = 0;
        for (int i = 0; i < n; i++) {
            count += st[i].count;
            macs += st[i].macs;
            flops += st[i].flops;
            for (int j = 0; j < i; j++) CHECK(strcmp(st[i].op, st[j].op) != 0);
        }
        CHECK(count == s.nodes);
        CHECK_CLOSE(macs, s.macs, 1e-12);
        CHECK_CLOSE(flops, s.flops, 1e-12);
        if (f == 0) {
            int conv = -1, gemm = -1;
            for (int i = 0; i < n; i++) {
                if (!strcmp(st[i].op, "Conv")) conv = i;
                if (!strcmp(st[i].op, "Gemm")) gemm = i;
            }
            CHECK(conv >= 0 && st[conv].count == 53);
            CHECK(gemm >= 0 && st[gemm].count == 1);
            /* ResNet-50's MACs are all Conv and the classifier Gemm */
            if (conv >= 0 && gemm >= 0)
                CHECK_CLOSE(st[conv].macs + st[gemm].macs, s.macs, 1e-12);
        }
        free(st);
        dlp_model_free(m);
    }
}

static void needs_analysis_and_arguments(void) {
    dlp_error err;
    dlp_model *m = NULL;
    dlp_op_stat *st = (dlp_op_stat *)&err; /* must be reset to NULL */
    int n = 7;
    CHECK(dlp_model_op_stats(NULL, &st, &n, &err) == DLP_ERR_ARG);
    CHECK(dlp_model_open("tests/fixtures/models/resnet50.onnx", &m, &err) ==
          DLP_OK);
    CHECK(dlp_model_op_stats(m, &st, &n, &err) == DLP_ERR_ARG);
    CHECK(st == NULL && n == 0);
    CHECK(strstr(err.msg, "analyse") != NULL);
    dlp_model_free(m);
}

int main(void) {
    RUN(totals_match_summary);
    RUN(needs_analysis_and_arguments);
    return CHECK_DONE();
}
