/* test_alloc.c — the caching-allocator replay of src/feat/feat_alloc.c:
 * hand-worked block layouts, and the slack PyTorch's allocator measured on
 * an H200 (tools/collect/probe_slack.py, data/probes/20261129-slack.jsonl.xz).
 */
#include "check.h"
#include "feat/feat.h"

#include <stdint.h>
#include <stdlib.h>

#define MIB 1048576.0

static int run(const int64_t *el, size_t n, double out[2]) {
    uint8_t *es = malloc(n ? n : 1), *fl = malloc(n ? n : 1);
    for (size_t i = 0; i < n; i++) { es[i] = 4; fl[i] = 1; }
    int rc = dlp_feat_alloc_slack(el, es, fl, n, out);
    free(es); free(fl);
    return rc;
}

/* A 25 MiB float tensor takes a new 26 MiB segment (above 10 MiB: rounded
 * up to 2 MiB) and the whole of it (1 MiB would remain: not split): 1 MiB
 * of slack. Cast: the 12.5 MiB half copy takes a new 14 MiB segment, split
 * (1.5 MiB remain), the float segment is freed: none. */
static void test_one_large(void) {
    int64_t el[1] = {25 * 262144};
    double out[2] = {-1, -1};
    CHECK(run(el, 1, out) == 0);
    CHECK_MSG(out[0] == 1 * MIB && out[1] == 0, "%.0f %.0f", out[0], out[1]);
}

/* Two of them: 2 MiB after the build; the second half copy goes into the
 * first freed 26 MiB segment (13.5 MiB remain: split): none after. */
static void test_two_large(void) {
    int64_t el[2] = {25 * 262144, 25 * 262144};
    double out[2];
    CHECK(run(el, 2, out) == 0);
    CHECK_MSG(out[0] == 2 * MIB && out[1] == 0, "%.0f %.0f", out[0], out[1]);
}

/* Small tensors come from 2 MiB segments split to 512-byte multiples, a
 * 12 MiB float tensor fills a 12 MiB segment exactly, its 6 MiB half copy
 * splits a new 20 MiB one, an integer tensor is not cast: no slack at
 * either stage. No tensor at all: none. */
static void test_exact(void) {
    int64_t el[3] = {100, 3 * 1048576, 64};
    uint8_t es[3] = {4, 4, 8}, fl[3] = {1, 1, 0};
    double out[2];
    CHECK(dlp_feat_alloc_slack(el, es, fl, 3, out) == 0);
    CHECK_MSG(out[0] == 0 && out[1] == 0, "%.0f %.0f", out[0], out[1]);
    CHECK(dlp_feat_alloc_slack(el, es, fl, 0, out) == 0);
    CHECK(out[0] == 0 && out[1] == 0);
}

/* GPT-2-large's parameters in Hugging Face's registration order (wte,
 * wpe, 36 blocks of ln_1, c_attn, c_proj, ln_2, c_fc, mlp c_proj, ln_f).
 * probe_slack.py, hf:gpt2-large bf16 on an H200: 1533.353 MiB allocated
 * before the forward for 1509.353 requested, 24.000 MiB of slack (every
 * 12.5 MiB MLP matrix after the first in a 13.5 MiB hole). */
static void test_gpt2_large(void) {
    int64_t el[2 + 36 * 12 + 2];
    size_t n = 0;
    el[n++] = 50257LL * 1280;
    el[n++] = 1024LL * 1280;
    for (int l = 0; l < 36; l++) {
        const int64_t blk[12] = {1280, 1280, 1280LL * 3840, 3840, 1280LL * 1280,
                                 1280, 1280, 1280, 1280LL * 5120, 5120,
                                 5120LL * 1280, 1280};
        for (int k = 0; k < 12; k++) el[n++] = blk[k];
    }
    el[n++] = 1280;
    el[n++] = 1280;
    double out[2];
    CHECK(run(el, n, out) == 0);
    CHECK_MSG(out[1] == 24 * MIB, "half slack %.4f MiB", out[1] / MIB);
    /* the float build: each of the 72 MLP matrices (25 MiB) whole in a
     * 26 MiB segment, and wte (257,315,840 B) in a 246 MiB one */
    CHECK_MSG(out[0] == 72 * MIB + 633856, "float slack %.4f MiB", out[0] / MIB);
}

int main(void) {
    RUN(test_one_large);
    RUN(test_two_large);
    RUN(test_exact);
    RUN(test_gpt2_large);
    return CHECK_DONE();
}
