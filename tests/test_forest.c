/*
 * test_forest.c — src/tree/tree_forest.c and src/pred/pred_convws.c: the
 * hand-written tree evaluator against XGBoost itself (the oracle: the same
 * booster's dlp_tree_predict) on fresh random inputs, NaNs included, for
 * both objectives; the model-file round trip and corrupt entries; the
 * workspace model's decision rule on a graph whose numbers are worked out
 * by hand; and the probe reader on .xz files written here (good, corrupt,
 * and records it must skip).
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
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

/* a NULL-terminated list of side-file groups */
#define GROUPS(...) ((const char *const[]){__VA_ARGS__, NULL})

static double u01(uint64_t *s) {
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(*s >> 11) / 9007199254740992.0;
}

enum { N = 800, D = 5, NT = 300 };

/* A booster of parameters p on rows x, targets y, converted. */
static void train(const float *x, const float *y, const dlp_tree_params *p,
                  dlp_tree **t, dlp_forest **f) {
    dlp_error err;
    *t = NULL;
    *f = NULL;
    DLP_ASSERT(dlp_tree_train(x, N, D, y, p, t, &err) == DLP_OK);
    DLP_ASSERT(dlp_forest_from_tree(*t, D, f, &err) == DLP_OK);
}

/* A booster on y = [x0 > 0.3] + x1 x2 (or its 0/1 class), converted. */
static void fit(int logistic, uint64_t seed, dlp_tree **t, dlp_forest **f) {
    static float x[N * D], y[N];
    uint64_t s = seed;
    for (int i = 0; i < N; i++) {
        for (int k = 0; k < D; k++) x[i * D + k] = (float)u01(&s);
        if (i % 7 == 0) x[i * D + 1] = NAN;   /* missing values: default ways */
        double v = (x[i * D] > 0.3f) + (isnan(x[i * D + 1]) ? 0.5 : x[i * D + 1]) * x[i * D + 2];
        y[i] = logistic ? (float)(v > 0.8) : (float)v;
    }
    dlp_tree_params p;
    dlp_tree_params_default(&p);
    p.rounds = 40;
    p.max_depth = 5;
    p.eta = 0.2;
    p.logistic = logistic;
    train(x, y, &p, t, f);
}

/* A small booster (20 rounds of depth 4; hist: the histogram method)
 * on rows x, targets y, converted. */
static void fit_small(const float *x, const float *y, int hist, dlp_tree **t,
                      dlp_forest **f) {
    dlp_tree_params p;
    dlp_tree_params_default(&p);
    p.rounds = 20;
    p.max_depth = 4;
    p.hist = hist;
    train(x, y, &p, t, f);
}

/* dlp_forest_splits_on: a feature constant in every row is never split
 * on (what tells an older file's forest from one fitted on a newer
 * feature), an informative one is; out of range is no feature */
static void test_forest_splits_on(void) {
    static float x[N * D], y[N];
    uint64_t s = 5;
    for (int i = 0; i < N; i++) {
        for (int k = 0; k < D; k++) x[i * D + k] = (float)u01(&s);
        x[i * D + 3] = 0;
        y[i] = (float)((x[i * D] > 0.3f) + x[i * D + 1]);
    }
    dlp_tree *t;
    dlp_forest *f;
    fit_small(x, y, 0, &t, &f);
    CHECK(dlp_forest_splits_on(f, 0) && dlp_forest_splits_on(f, 1));
    CHECK(!dlp_forest_splits_on(f, 3));
    CHECK(!dlp_forest_splits_on(f, -1) && !dlp_forest_splits_on(f, D) &&
          !dlp_forest_splits_on(f, DLP_FOREST_LEAF));
    dlp_forest_free(f);
    dlp_tree_free(t);
}

/* dlp_forest_max_split: a category code (0-3, the histogram method the
 * operator times fit with) whose last code changes the target is split
 * off above the code before it; without rows of that code no split lies
 * above the codes seen (what tells an older file's forest from one
 * fitted on a category added later, pred_optime.c's mfill); a feature
 * never read or out of range has none. */
static void test_forest_max_split(void) {
    for (int with = 0; with < 2; with++) {
        static float x[N * D], y[N];
        uint64_t s = 7;
        for (int i = 0; i < N; i++) {
            for (int k = 0; k < D; k++) x[i * D + k] = (float)u01(&s);
            x[i * D + 3] = 0;
            int code = (int)(u01(&s) * (with ? 4 : 3));
            x[i * D + 2] = (float)code;
            y[i] = (float)(x[i * D] + (code == 1) + 3 * (code == 3));
        }
        dlp_tree *t;
        dlp_forest *f;
        fit_small(x, y, 1, &t, &f);
        float m = dlp_forest_max_split(f, 2);
        if (with) CHECK_MSG(m > 2 && m <= 3, "split %g", m);
        else CHECK_MSG(m > 0 && m <= 2, "split %g", m);
        CHECK(isinf(dlp_forest_max_split(f, 3)) && dlp_forest_max_split(f, 3) < 0);
        CHECK(isinf(dlp_forest_max_split(f, -1)) && isinf(dlp_forest_max_split(f, D)));
        dlp_forest_free(f);
        dlp_tree_free(t);
    }
}

static void test_forest_matches_xgboost(void) {
    for (int logistic = 0; logistic < 2; logistic++) {
        dlp_tree *t;
        dlp_forest *f;
        fit(logistic, 11 + (uint64_t)logistic, &t, &f);
        CHECK(f->n_trees == 40 && f->logistic == logistic);
        static float xt[NT * D], p[NT];
        uint64_t s = 99;
        for (int i = 0; i < NT * D; i++)
            xt[i] = u01(&s) < 0.1 ? NAN : (float)(1.4 * u01(&s) - 0.2);
        dlp_error err;
        DLP_ASSERT(dlp_tree_predict(t, xt, NT, D, p, &err) == DLP_OK);
        double worst = 0;
        for (int i = 0; i < NT; i++)
            worst = fmax(worst, fabs((double)dlp_forest_eval(f, xt + i * D) - p[i]));
        CHECK_MSG(worst < 1e-5, "objective %d: largest difference %g", logistic, worst);
        /* round trip through a model file */
        dlp_nn_file nf = {0};
        dlp_forest *g = NULL;
        CHECK(dlp_forest_save(f, &nf, "fx", &err) == DLP_OK);
        CHECK(dlp_forest_load(&nf, "fx", &g, &err) == DLP_OK && g);
        for (int i = 0; g && i < NT; i++)
            CHECK(dlp_forest_eval(g, xt + i * D) == dlp_forest_eval(f, xt + i * D));
        dlp_forest *none = (dlp_forest *)1;
        CHECK(dlp_forest_load(&nf, "other", &none, &err) == DLP_OK && !none);
        dlp_forest_free(g);
        /* and through a file on disk: the words (more than DLP_NN_LAZY_MIN
         * bytes) are read where they lie in the file's mapping, which the
         * forest keeps after the file is freed */
        char path[] = "/tmp/dlp_forest_XXXXXX";
        int fd = mkstemp(path);
        DLP_ASSERT(fd >= 0);
        close(fd);
        DLP_ASSERT(dlp_nn_file_save(&nf, path, &err) == DLP_OK);
        dlp_nn_file_free(&nf);
        DLP_ASSERT(dlp_nn_file_load(&nf, path, &err) == DLP_OK);
        const dlp_nn_entry *ne = dlp_nn_file_get(&nf, "fx/words", DLP_NN_U8);
        CHECK(ne && !ne->data && ne->count >= DLP_NN_LAZY_MIN);
        g = NULL;
        CHECK(dlp_forest_load(&nf, "fx", &g, &err) == DLP_OK && g);
        CHECK(g && ne && g->map && !g->own && g->node == ne->raw);
        unlink(path);
        dlp_nn_file_free(&nf);
        for (int i = 0; g && i < NT; i++)
            CHECK(dlp_forest_eval(g, xt + i * D) == dlp_forest_eval(f, xt + i * D));
        /* many rows at once: the same values, bit for bit */
        const float *rows[NT];
        static float many[NT];
        for (int i = 0; i < NT; i++) rows[i] = xt + i * D;
        if (g) dlp_forest_eval_many(g, rows, NT, many);
        for (int i = 0; g && i < NT; i++)
            CHECK(many[i] == dlp_forest_eval(f, xt + i * D));
        dlp_forest_free(g);
        dlp_forest_free(f);
        dlp_tree_free(t);
    }
}

/* A prefix is stored whole or refused: 249 characters (with "/words",
 * 255 and the terminator: the longest entry name the forest writes)
 * round-trip; one more is DLP_ERR_ARG for save and load alike, and
 * the file gains no entry (a cut name would be another forest's). */
static void test_forest_long_prefix(void) {
    dlp_tree *t;
    dlp_forest *f;
    fit(0, 23, &t, &f);
    dlp_error err;
    char pre[260];
    memset(pre, 'p', sizeof pre);
    pre[249] = '\0';
    dlp_nn_file nf = {0};
    dlp_forest *g = NULL;
    CHECK(dlp_forest_save(f, &nf, pre, &err) == DLP_OK && nf.n == 3);
    CHECK(dlp_forest_load(&nf, pre, &g, &err) == DLP_OK && g);
    CHECK(g && g->n_nodes == f->n_nodes && dlp_forest_ready(g, &err) == DLP_OK);
    dlp_forest_free(g);
    pre[249] = 'p';
    pre[250] = '\0';
    g = (dlp_forest *)1;
    CHECK(dlp_forest_save(f, &nf, pre, &err) == DLP_ERR_ARG && nf.n == 3);
    CHECK(strstr(err.msg, "250 characters") != NULL);
    CHECK(dlp_forest_load(&nf, pre, &g, &err) == DLP_ERR_ARG && !g);
    CHECK(dlp_forest_save(f, &nf, "", &err) == DLP_ERR_ARG && nf.n == 3);
    dlp_nn_file_free(&nf);
    dlp_forest_free(f);
    dlp_tree_free(t);
}

/* A forest saved twice in a model file, at the top ("g/f") and inside a
 * blend's component ("blend/0/g/f"), written with the group "g/" in a
 * side file: one side file serves both, each loaded forest reads its
 * words where they lie in the side file's bytes, which it keeps after the
 * file is freed, and answers as the forest it came from. */
static void test_forest_side_file(void) {
    dlp_tree *t;
    dlp_forest *f;
    fit(0, 21, &t, &f);
    dlp_error err;
    char dir[] = "/tmp/dlp_forest_side_XXXXXX", path[96];
    DLP_ASSERT(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/m.dlpm", dir);
    dlp_nn_file nf = {0};
    DLP_ASSERT(dlp_forest_save(f, &nf, "g/f", &err) == DLP_OK);
    DLP_ASSERT(dlp_forest_save(f, &nf, "blend/0/g/f", &err) == DLP_OK);
    CHECK(dlp_nn_file_save_shared(&nf, path, GROUPS("g/"), &err) == DLP_OK);
    dlp_nn_file_free(&nf);
    DLP_ASSERT(dlp_nn_file_load(&nf, path, &err) == DLP_OK);
    CHECK(nf.n == 6 && nf.n_side == 1);
    dlp_forest *g[2] = {NULL, NULL};
    const char *pre[2] = {"g/f", "blend/0/g/f"};
    for (int k = 0; k < 2; k++) {
        char name[64];
        snprintf(name, sizeof name, "%s/words", pre[k]);
        const dlp_nn_entry *ne = dlp_nn_file_get(&nf, name, DLP_NN_U8);
        CHECK(dlp_forest_load(&nf, pre[k], &g[k], &err) == DLP_OK && g[k]);
        CHECK(ne && g[k] && g[k]->map && g[k]->map == ne->map &&
              g[k]->map == nf.side[0] && !g[k]->own && g[k]->node == ne->raw);
    }
    dlp_nn_file_free(&nf);
    static float xt[NT * D];
    uint64_t s = 7;
    for (int i = 0; i < NT * D; i++) xt[i] = (float)(1.4 * u01(&s) - 0.2);
    for (int k = 0; k < 2; k++) {
        CHECK(g[k] && dlp_forest_ready(g[k], &err) == DLP_OK);
        for (int i = 0; g[k] && i < NT; i++)
            CHECK(dlp_forest_eval(g[k], xt + i * D) == dlp_forest_eval(f, xt + i * D));
        dlp_forest_free(g[k]);
    }
    bool gone;
    CHECK(side_files(dir, "g-", false, NULL, 0, NULL) == 1 &&
          side_files(dir, "", true, NULL, 0, &gone) == 1 && gone);
    unlink(path);
    CHECK(rmdir(dir) == 0);
    dlp_forest_free(f);
    dlp_tree_free(t);
}

/* Word i of the byte array b set to w (little-endian). */
static void set_word(uint8_t *b, int i, uint64_t w) {
    for (int k = 0; k < 8; k++) b[8 * i + k] = (uint8_t)(w >> (8 * k));
}

/* A corrupt stored forest: a right child pointing at its parent (a loop),
 * a feature out of range, a tree starting outside the nodes, a byte count
 * not a multiple of 8, an unknown objective, a right child past its tree's
 * end, a leaf that is not finite, a NaN threshold, two trees starting at
 * the same node, a tree cut one node short (a child in the next tree):
 * each DLP_ERR_FORMAT, at load (the trees' table) or at the first
 * dlp_forest_ready (the nodes, checked when first walked), and then
 * never walked: eval answers NaN. A forest in the first
 * layout (five float32 a node) is refused as unsupported. */
static void test_forest_corrupt(void) {
    dlp_tree *t;
    dlp_forest *f;
    fit(0, 5, &t, &f);
    dlp_error err;
    int leaf = 0;   /* the first leaf */
    while (dlp_forest_feat(dlp_forest_word(f->node, leaf)) != DLP_FOREST_LEAF) leaf++;
    DLP_ASSERT(leaf > 0 && f->n_trees > 2);
    const uint64_t split_bits = 0xFFFFFFFFull;   /* threshold or value */
    for (int k = 0; k < 10; k++) {
        dlp_nn_file nf = {0};
        DLP_ASSERT(dlp_forest_save(f, &nf, "fx", &err) == DLP_OK);
        dlp_nn_entry *tr = NULL, *nd = NULL;
        for (int i = 0; i < nf.n; i++) {
            if (!strcmp(nf.e[i].name, "fx/trees")) tr = &nf.e[i];
            if (!strcmp(nf.e[i].name, "fx/words")) nd = &nf.e[i];
        }
        DLP_ASSERT(tr && nd && nd->data);
        uint8_t *b = nd->data;
        int64_t *ti = tr->data;
        uint64_t root = dlp_forest_word(b, 0);
        float inf = INFINITY, nan = NAN;
        uint32_t ui, un;
        memcpy(&ui, &inf, 4);
        memcpy(&un, &nan, 4);
        if (k == 0) set_word(b, 0, root & ~(0xFFFFull << 48));   /* right: itself */
        if (k == 1) set_word(b, 0, (root & ~(0x7FFFull << 32)) | (uint64_t)D << 32);
        if (k == 2) ti[2 + f->n_trees - 1] = f->n_nodes + 3;
        if (k == 3) nd->count -= 2;
        if (k == 4) ti[1] = 7;
        if (k == 5) set_word(b, 0, (root & ~(0xFFFFull << 48)) |
                                   (uint64_t)(f->root[1] + 1) << 48);
        if (k == 6) set_word(b, leaf, (dlp_forest_word(b, leaf) & ~split_bits) | ui);
        if (k == 7) set_word(b, 0, (root & ~split_bits) | un);
        if (k == 8) ti[3] = ti[2];
        if (k == 9) ti[3] -= 1;   /* tree 0's last leaf: tree 1's */
        dlp_forest *g = NULL;
        dlp_status st = dlp_forest_load(&nf, "fx", &g, &err);
        bool at_load = k == 2 || k == 3 || k == 4 || k == 8;
        CHECK_MSG(at_load ? st == DLP_ERR_FORMAT && !g : st == DLP_OK && g,
                  "case %d: status %d", k, (int)st);
        if (g) {
            float x[D] = {0}, y[2];
            const float *rows[2] = {x, x};
            CHECK_MSG(dlp_forest_ready(g, &err) == DLP_ERR_FORMAT &&
                      strstr(err.msg, "'fx'") != NULL, "case %d", k);
            CHECK(dlp_forest_ready(g, &err) == DLP_ERR_FORMAT);   /* remembered */
            CHECK(isnan(dlp_forest_eval(g, x)));
            dlp_forest_eval_many(g, rows, 2, y);
            CHECK(isnan(y[0]) && isnan(y[1]));
        }
        dlp_forest_free(g);
        dlp_nn_file_free(&nf);
    }
    /* the first layout */
    dlp_nn_file nf = {0};
    int64_t tr[3] = {D, 0, 0};
    float nd[5] = {-1, 1, -1, -1, 0};
    DLP_ASSERT(dlp_nn_file_add_i64(&nf, "fx/trees", tr, 3, &err) == DLP_OK);
    DLP_ASSERT(dlp_nn_file_add_f32(&nf, "fx/nodes", nd, 5, &err) == DLP_OK);
    dlp_forest *g = NULL;
    CHECK(dlp_forest_load(&nf, "fx", &g, &err) == DLP_ERR_UNSUPPORTED && !g);
    CHECK(strstr(err.msg, "retrain") != NULL);
    dlp_nn_file_free(&nf);
    dlp_forest_free(f);
    dlp_tree_free(t);
}

/* A forest's words in a model file on disk (format 3): the file's CRC
 * leaves them out and their own CRC is checked when the forest is first
 * walked. A flipped bit in them loads, then fails dlp_forest_ready naming
 * the checksum, answers NaN, and is neither saved nor copied into another
 * file (that would give it a fresh CRC); a flipped bit outside them fails
 * the load. */
static void test_forest_file_crc(void) {
    dlp_tree *t;
    dlp_forest *f;
    fit(0, 9, &t, &f);
    dlp_error err;
    dlp_nn_file nf = {0};
    DLP_ASSERT(dlp_forest_save(f, &nf, "fx", &err) == DLP_OK);
    char path[] = "/tmp/dlp_forest_crc_XXXXXX", out[64];
    int fd = mkstemp(path);
    DLP_ASSERT(fd >= 0);
    close(fd);
    snprintf(out, sizeof out, "%s.2", path);
    DLP_ASSERT(dlp_nn_file_save(&nf, path, &err) == DLP_OK);
    dlp_nn_file_free(&nf);
    /* the words' offset in the file: they follow their name and count */
    FILE *fp = fopen(path, "rb");
    DLP_ASSERT(fp);
    static uint8_t buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf, fp);
    fclose(fp);
    DLP_ASSERT(n > 0 && n < sizeof buf);
    long words = -1;
    for (size_t i = 0; i + 8 < n; i++)
        if (!memcmp(buf + i, "fx/words", 8)) words = (long)i + 8 + 8;
    DLP_ASSERT(words > 0 && words + 8L * f->n_nodes + 4 <= (long)n);
    float x[D] = {0.5f, 0.5f, 0.5f, 0.5f, 0.5f};
    for (int k = 0; k < 3; k++) {
        /* 0: sound; 1: a bit of a middle word; 2: a bit of the int64
         * tree table (outside the words) */
        long off = k == 1 ? words + 4L * f->n_nodes : k == 2 ? words - 40 : -1;
        fp = fopen(path, "r+b");
        DLP_ASSERT(fp);
        if (off >= 0) {
            buf[off] ^= 0x10;
            DLP_ASSERT(fseek(fp, off, SEEK_SET) == 0 && fputc(buf[off], fp) != EOF);
            buf[off] ^= 0x10;
        }
        fclose(fp);
        dlp_status st = dlp_nn_file_load(&nf, path, &err);
        if (k == 2) {
            CHECK(st == DLP_ERR_FORMAT && strstr(err.msg, "checksum") != NULL);
            break;
        }
        DLP_ASSERT(st == DLP_OK);
        const dlp_nn_entry *e = dlp_nn_file_get(&nf, "fx/words", DLP_NN_U8);
        CHECK(e && e->crc_pending);
        dlp_forest *g = NULL;
        CHECK(dlp_forest_load(&nf, "fx", &g, &err) == DLP_OK && g);
        if (!g || !e) break;
        st = dlp_forest_ready(g, &err);
        if (k == 0) {
            CHECK(st == DLP_OK && dlp_nn_entry_verify(e, &err) == DLP_OK);
            CHECK(dlp_forest_eval(g, x) == dlp_forest_eval(f, x));
            CHECK(dlp_nn_file_save(&nf, out, &err) == DLP_OK);
        } else {
            CHECK(st == DLP_ERR_FORMAT && strstr(err.msg, "checksum") &&
                  strstr(err.msg, "'fx'"));
            CHECK(isnan(dlp_forest_eval(g, x)));
            CHECK(dlp_nn_entry_verify(e, &err) == DLP_ERR_FORMAT &&
                  strstr(err.msg, "fx/words"));
            CHECK(dlp_nn_file_save(&nf, out, &err) == DLP_ERR_FORMAT);
            dlp_nn_file cp = {0};
            CHECK(dlp_nn_file_add_copy(&cp, "w", e, &err) == DLP_ERR_FORMAT);
            dlp_nn_file_free(&cp);
            /* restore the bit for case 2 */
            fp = fopen(path, "r+b");
            DLP_ASSERT(fp && fseek(fp, off, SEEK_SET) == 0 && fputc(buf[off], fp) != EOF);
            fclose(fp);
        }
        dlp_forest_free(g);
        dlp_nn_file_free(&nf);
    }
    unlink(path);
    unlink(out);
    dlp_forest_free(f);
    dlp_tree_free(t);
}

/* A stored forest of one tree of one leaf: always `value`. */
static void add_const_forest_nf(dlp_nn_file *nf, const char *prefix, float value,
                                int logistic, int n_features) {
    dlp_error err;
    char name[64];
    int64_t tr[3] = {n_features, logistic, 0};
    float base = 0;
    uint32_t u;
    memcpy(&u, &value, 4);
    uint8_t word[8];
    set_word(word, 0, (uint64_t)u | (uint64_t)DLP_FOREST_LEAF << 32);
    snprintf(name, sizeof name, "%s/trees", prefix);
    DLP_ASSERT(dlp_nn_file_add_i64(nf, name, tr, 3, &err) == DLP_OK);
    snprintf(name, sizeof name, "%s/words", prefix);
    DLP_ASSERT(dlp_nn_file_add_u8(nf, name, word, 8, &err) == DLP_OK);
    snprintf(name, sizeof name, "%s/base", prefix);
    DLP_ASSERT(dlp_nn_file_add_f32(nf, name, &base, 1, &err) == DLP_OK);
}
static void add_const_forest(dlp_nn_file *nf, const char *prefix, float value,
                             int logistic) {
    add_const_forest_nf(nf, prefix, value, logistic, DLP_CONVWS_NF);
}

/* A workspace model of constant forests: every convolution's p =
 * sigmoid(logit), its workspace 2^log2_mib MiB (loaded from a file built
 * in memory: the forests copy what they read). */
static dlp_convws *const_convws(double logit, double log2_mib) {
    dlp_nn_file nf = {0};
    add_const_forest(&nf, "convws/cls", (float)logit, 1);
    add_const_forest(&nf, "convws/reg", (float)log2_mib, 0);
    dlp_convws *m = NULL;
    dlp_error err;
    DLP_ASSERT(dlp_convws_load(&nf, &m, &err) == DLP_OK && m);
    dlp_nn_file_free(&nf);
    return m;
}

/* The estimate of fg on device dev (and MIG profile mig, or NULL) with
 * constant forests: every convolution's p = sigmoid(logit), its workspace
 * 2^log2_mib MiB. */
static double mem_on(const dlp_feat_graph *fg, const char *dev, const char *mig,
                     dlp_precision prec, double logit, double log2_mib) {
    dlp_convws *m = const_convws(logit, log2_mib);
    dlp_error err;
    dlp_pred_config c;
    dlp_pred_config_init(&c);
    DLP_ASSERT(dlp_device_find(dev, &c.device, &err) == DLP_OK);
    if (mig) {
        DLP_ASSERT(dlp_device_mig(&c.device, mig, &c.mig, &err) == DLP_OK);
        c.has_mig = true;
    }
    c.precision = prec;
    dlp_feat_roofline r;
    DLP_ASSERT(dlp_convws_roofline(m, fg, &c, &r, &err) == DLP_OK);
    dlp_convws_free(m);
    return r.mem_mib;
}

static double mem_with(const dlp_feat_graph *fg, dlp_precision prec,
                       double logit, double log2_mib) {
    return mem_on(fg, "H100-SXM5-80GB", NULL, prec, logit, log2_mib);
}

/* memest_convbn (test_memest.c) featurized at batch 1, and c the
 * default request on the H100. */
static void convbn_h100(dlp_feat_graph *fg, dlp_pred_config *c) {
    dlp_model *mo = NULL;
    dlp_error err;
    DLP_ASSERT(dlp_model_open("tests/fixtures/memest/memest_convbn.onnx", &mo, &err) == DLP_OK);
    DLP_ASSERT(dlp_model_analyze(mo, &err) == DLP_OK);
    DLP_ASSERT(dlp_feat_graph_build(fg, &mo->graph, 1, 0, 0, 0, &err) == DLP_OK);
    dlp_model_free(mo);
    dlp_pred_config_init(c);
    DLP_ASSERT(dlp_device_find("H100-SXM5-80GB", &c->device, &err) == DLP_OK);
}

/* memest_convbn (test_memest.c): without workspaces B = weights + 8192 B;
 * its 3x3 conv runs at 7168 B live. A predicted workspace of w MiB raises
 * the estimate to weights + 7168 B + w MiB, d = that - B; it counts when
 * p > (B + d) / (2B + d). */
static void test_convws_decision(void) {
    dlp_feat_graph fg;
    dlp_pred_config c;
    convbn_h100(&fg, &c);
    dlp_feat_roofline r;
    dlp_feat_roofline_of(&fg, &c, &r);
    double B = r.mem_mib;
    /* both convolutions (the pointwise one at 6144 B) get w; the 3x3's
     * larger live set makes it the peak */
    double w = 2 * B, d = fg.weight_bytes / 1048576.0 + 7168 / 1048576.0 + w - B;
    double th = (B + d) / (2 * B + d), lo = log(th / (1 - th));
    CHECK_CLOSE(mem_with(&fg, DLP_PREC_FP32, lo + 0.05, log2(w)), B + d, 1e-6);
    CHECK_CLOSE(mem_with(&fg, DLP_PREC_FP32, lo - 0.05, log2(w)), B, 1e-9);
    /* p below one half: never; fp16: the model is fp32's */
    CHECK_CLOSE(mem_with(&fg, DLP_PREC_FP32, -0.1, -3.0), B, 1e-9);
    dlp_feat_roofline_of(&fg, &(dlp_pred_config){.precision = DLP_PREC_FP16,
                                                  .device = c.device,
                                                  .batch = c.batch}, &r);
    CHECK_CLOSE(mem_with(&fg, DLP_PREC_FP16, 9, log2(w)), r.mem_mib, 1e-9);
    /* a workspace of 4 KiB at p = 0.9: the peak 7168 + 4096 B, d = 3072 B
     * against B = 8192 B + 1664 B of weights: threshold 0.57, counts */
    CHECK_CLOSE(mem_with(&fg, DLP_PREC_FP32, log(9.0), -8), B + 3072 / 1048576.0, 1e-9);
    /* a workspace larger than the card: PyTorch cannot allocate it and
     * cuDNN runs another plan, counted as none. 100 GiB: not on the H100
     * (80 GB), on the H200 (141 GB); 12 GiB: on the H100, not in its
     * 1g.10gb MIG instance (p = 1: against this graph's few KiB any
     * smaller p is below the threshold) */
    double ws = 102400.0, wd = fg.weight_bytes / 1048576.0 + 7168 / 1048576.0 + ws - B;
    CHECK_CLOSE(mem_with(&fg, DLP_PREC_FP32, 40, log2(ws)), B, 1e-9);
    CHECK_CLOSE(mem_on(&fg, "H200-SXM-141GB", NULL, DLP_PREC_FP32, 40, log2(ws)),
                B + wd, 1e-6);
    CHECK(mem_with(&fg, DLP_PREC_FP32, 40, log2(12288.0)) > 12000);
    CHECK_CLOSE(mem_on(&fg, "H100-SXM5-80GB", "1g.10gb", DLP_PREC_FP32, 40, log2(12288.0)),
                B, 1e-9);
    dlp_feat_graph_free(&fg);
}


/* The training step's estimate with constant forests (p = sigmoid(logit),
 * workspace 2^log2_mib MiB) on fg under c: dlp_convws_train_view's. */
static double train_mem_of(dlp_convws *m, const dlp_feat_graph *fg,
                           const dlp_pred_config *c, bool *peak) {
    dlp_error err;
    dlp_feat_graph v;
    DLP_ASSERT(dlp_convws_train_view(m, fg, c, &v, &err) == DLP_OK);
    dlp_convws_free(m);
    if (peak) *peak = v.train_ws_peak[c->precision != DLP_PREC_FP32];
    return dlp_feat_mem_estimate_mib(&v, c);
}
static double train_mem_with(const dlp_feat_graph *fg, const dlp_pred_config *c,
                             double logit, double log2_mib) {
    return train_mem_of(const_convws(logit, log2_mib), fg, c, NULL);
}

/* memest_convbn as a training step on the H100 (convbn_h100), its
 * roofline *r and training estimate (returned). */
static double convbn_train(dlp_feat_graph *fg, dlp_pred_config *c,
                           dlp_feat_roofline *r) {
    convbn_h100(fg, c);
    c->mode = DLP_MODE_TRAINING;
    dlp_feat_roofline_of(fg, c, r);
    return dlp_feat_mem_estimate_of(fg, c, r);
}

/* The training step (docs/COST.md, "cuDNN workspaces in the training
 * step"): a convolution's predicted workspace counts at the forward's
 * point of that convolution, 2 W + the blocks saved so far + the
 * workspace, under the inference rule's condition. memest_convbn: a 3x3
 * conv, BatchNorm, ReLU, a pointwise conv. */
static void test_convws_train_decision(void) {
    dlp_feat_graph fg;
    dlp_pred_config c;
    dlp_feat_roofline r;
    double B = convbn_train(&fg, &c, &r);
    CHECK(fg.n_convs == 2 && fg.n_train_curve > 0 && B > 0);
    /* the forward point of each conv: its position in the walk, the
     * pointwise one after the 3x3; a point holds 2 W + what is saved by
     * then, never more than the backward's point there */
    CHECK(fg.convs[0].tpos < fg.convs[1].tpos);
    double W = fg.mem_weight_bytes / 1048576.0;
    double fixed = r.buffers_mib + DLP_MEM_TRAIN_BLAS_WS_MIB;
    for (int i = 0; i < 2; i++) {
        const dlp_feat_train_point *p = &fg.train_curve[fg.convs[i].tpos];
        double at = dlp_feat_train_fwd_mib(&fg, &c, &r, fg.convs[i].tpos, 0);
        CHECK_CLOSE(at, 2 * W + p->fwd / 1048576.0 + fixed, 1e-9);
        CHECK(p->fwd <= p->act && at <= B + 1e-9);
    }
    CHECK(dlp_feat_train_fwd_mib(&fg, &c, &r, -1, 0) == 0 &&
          dlp_feat_train_fwd_mib(&fg, &c, &r, fg.n_train_curve, 0) == 0);
    double t1 = dlp_feat_train_fwd_mib(&fg, &c, &r, fg.convs[1].tpos, 0);
    /* a workspace of w at p = 1 everywhere: the later conv's point, with
     * more saved by then, is the peak */
    double w = 4 * B;
    CHECK_CLOSE(train_mem_with(&fg, &c, 40, log2(w)), t1 + w, 1e-6);
    /* the threshold: d = t1 + w - B counts when p > (B + d) / (2B + d) */
    double d = t1 + w - B, th = (B + d) / (2 * B + d), lo = log(th / (1 - th));
    CHECK_CLOSE(train_mem_with(&fg, &c, lo + 0.05, log2(w)), t1 + w, 1e-6);
    /* below it neither counts: the 3x3 conv holds 2 KB less at its point
     * (B is mostly the 64 MiB of cuBLAS workspaces), its threshold is
     * inside the 0.05 margin */
    CHECK_CLOSE(train_mem_with(&fg, &c, lo - 0.05, log2(w)), B, 1e-9);
    /* p below one half, a workspace the walk's point already covers, one
     * larger than the card (100 GiB on the H100): the estimate as it was */
    CHECK_CLOSE(train_mem_with(&fg, &c, -0.1, log2(w)), B, 1e-9);
    CHECK_CLOSE(train_mem_with(&fg, &c, 40, -20), B, 1e-9);
    CHECK_CLOSE(train_mem_with(&fg, &c, 40, log2(102400.0)), B, 1e-9);
    /* an autocast step reads the half model (none here), inference reads
     * none of this */
    dlp_pred_config h = c;
    h.precision = DLP_PREC_FP16;
    CHECK_CLOSE(train_mem_with(&fg, &h, 40, log2(w)), dlp_feat_mem_estimate_mib(&fg, &h), 1e-9);
    dlp_pred_config inf = c;
    inf.mode = DLP_MODE_INFERENCE;
    CHECK_CLOSE(train_mem_with(&fg, &inf, 40, log2(w)), dlp_feat_mem_estimate_mib(&fg, &inf), 1e-9);
    dlp_feat_graph_free(&fg);
}

/* A workspace model of constant forests, forward (p = sigmoid(flogit),
 * 2^flog2 MiB) and backward (p = sigmoid(blogit), 2^blog2 MiB), fp32
 * and half; through a model file written and read back, so that the
 * backward's parts are saved and loaded under their own names. */
static dlp_convws *const_convws_bwd(double flogit, double flog2, double blogit,
                                    double blog2) {
    dlp_nn_file nf = {0};
    static const char *const part[4] = {"convws", "convws16", "convbwd", "convbwd16"};
    char name[64];
    for (int t = 0; t < 4; t++) {
        snprintf(name, sizeof name, "%s/cls", part[t]);
        add_const_forest(&nf, name, (float)(t < 2 ? flogit : blogit), 1);
        snprintf(name, sizeof name, "%s/reg", part[t]);
        add_const_forest(&nf, name, (float)(t < 2 ? flog2 : blog2), 0);
    }
    dlp_convws *m = NULL, *back = NULL;
    dlp_error err;
    DLP_ASSERT(dlp_convws_load(&nf, &m, &err) == DLP_OK && m);
    dlp_nn_file_free(&nf);
    dlp_nn_file out = {0};
    DLP_ASSERT(dlp_convws_save(m, &out, &err) == DLP_OK);
    CHECK(dlp_nn_file_get(&out, "convbwd/cls/trees", DLP_NN_I64) &&
          dlp_nn_file_get(&out, "convbwd16/reg/words", DLP_NN_U8));
    DLP_ASSERT(dlp_convws_load(&out, &back, &err) == DLP_OK && back);
    dlp_nn_file_free(&out);
    dlp_convws_free(m);
    return back;
}

static double train_mem_bwd(const dlp_feat_graph *fg, const dlp_pred_config *c,
                            double blogit, double blog2) {
    bool peak = false;
    double mib = train_mem_of(const_convws_bwd(-40, 0, blogit, blog2), fg, c, &peak);
    CHECK(peak);
    return mib;
}

/* The backward's workspaces (docs/COST.md, "cuDNN workspaces in the
 * training step"): a backward model's answer replaces the walk's rule
 * (input + output bytes) at each dense convolution's backward point.
 * memest_convbn's two convolutions, fp32 and fp16. */
static void test_convws_train_bwd(void) {
    dlp_feat_graph fg;
    dlp_pred_config c;
    dlp_feat_roofline r;
    double B = convbn_train(&fg, &c, &r);
    double W = fg.mem_weight_bytes, fixed = r.buffers_mib + DLP_MEM_TRAIN_BLAS_WS_MIB;
    /* the walk's rule at each conv's backward point: its input + output */
    double io[2];
    for (int i = 0; i < 2; i++) {
        const dlp_feat_train_point *p = &fg.train_curve[fg.convs[i].tpos];
        io[i] = p->ws;
        CHECK(p->ws > 0 && p->ws <= p->act);
        /* the point with the rule's own bytes is the walk's point */
        CHECK_CLOSE(dlp_feat_train_bwd_mib(&fg, &c, &r, fg.convs[i].tpos, p->ws),
                    (W * (2 + p->grad_w) + p->act) / 1048576.0 + fixed, 1e-9);
    }
    CHECK(dlp_feat_train_bwd_mib(&fg, &c, &r, -1, 0) == 0 &&
          dlp_feat_train_bwd_mib(&fg, &c, &r, fg.n_train_curve, 0) == 0);
    /* both convs' io is 6-7 KiB here: a model that answers each conv's
     * rule bytes (p = 1) gives back the walk's estimate; one constant
     * for both answers the larger where that conv's point is the peak */
    double lo_io = fmin(io[0], io[1]);
    double hi = train_mem_bwd(&fg, &c, 40, log2(fmax(io[0], io[1]) / 1048576.0));
    double lo = train_mem_bwd(&fg, &c, 40, log2(lo_io / 1048576.0));
    CHECK(lo <= B + 1e-9 && hi >= B - 1e-9);
    /* no backward workspace at all (p below one half): the step without
     * the rule's bytes at the dense convs, never above the walk's */
    double none = train_mem_bwd(&fg, &c, -40, 0);
    double want = 0;
    for (int t = 0; t < fg.n_train_curve; t++) {
        const dlp_feat_train_point *p = &fg.train_curve[t];
        bool conv = t == fg.convs[0].tpos || t == fg.convs[1].tpos;
        double b = W * (2 + p->grad_w) + p->act - (conv ? p->ws : 0);
        if (b > want) want = b;
    }
    CHECK_CLOSE(none, want / 1048576.0 + fixed, 1e-9);
    CHECK(none <= B + 1e-9);
    /* a large one, w at p = 1: the later conv's backward point (more
     * gradients made by then, fewer blocks freed) or the earlier one's,
     * whichever holds more, plus w */
    double w = 4 * B, best = 0;
    for (int i = 0; i < 2; i++) {
        const dlp_feat_train_point *p = &fg.train_curve[fg.convs[i].tpos];
        best = fmax(best, (W * (2 + p->grad_w) + p->act - p->ws) / 1048576.0 + fixed + w);
    }
    CHECK_CLOSE(train_mem_bwd(&fg, &c, 40, log2(w)), best, 1e-6);
    /* the inference rule's threshold against the step without them */
    double d = best - none, th = (none + d) / (2 * none + d), lg = log(th / (1 - th));
    CHECK_CLOSE(train_mem_bwd(&fg, &c, lg + 0.05, log2(w)), best, 1e-6);
    CHECK_CLOSE(train_mem_bwd(&fg, &c, lg - 0.05, log2(w)), none, 1e-9);
    /* larger than the card: not taken */
    CHECK_CLOSE(train_mem_bwd(&fg, &c, 40, log2(102400.0)), none, 1e-9);
    /* an autocast step: half the rule's bytes at its points (act_amp) */
    dlp_pred_config h = c;
    h.precision = DLP_PREC_FP16;
    dlp_feat_roofline rh;
    dlp_feat_roofline_of(&fg, &h, &rh);
    double wanth = 0;
    for (int t = 0; t < fg.n_train_curve; t++) {
        const dlp_feat_train_point *p = &fg.train_curve[t];
        bool conv = t == fg.convs[0].tpos || t == fg.convs[1].tpos;
        double b = W * (2 + p->grad_w + 0.5 * p->half_w) + p->act_amp -
                   (conv ? 0.5 * p->ws : 0);
        if (b > wanth) wanth = b;
    }
    CHECK_CLOSE(train_mem_bwd(&fg, &h, -40, 0),
                wanth / 1048576.0 + rh.buffers_mib + DLP_MEM_TRAIN_BLAS_WS_MIB, 1e-9);
    /* a forward-only model keeps the walk's backward (no peak flag) */
    bool peak = true;
    CHECK(train_mem_of(const_convws(-40, 0), &fg, &c, &peak) == B && !peak);
    dlp_feat_graph_free(&fg);
}

static void test_probe_reader(void) {
    char dir[] = "/tmp/dlp_convws_XXXXXX", path[256];
    DLP_ASSERT(mkdtemp(dir));
    dlp_convws_calls c;
    dlp_error err;
    /* no directory, or none of its files: no calls, no error */
    CHECK(dlp_convws_calls_read("/nonexistent/probes", &c, &err) == DLP_OK && c.n == 0);
    CHECK(dlp_convws_calls_read(dir, &c, &err) == DLP_OK && c.n == 0 && c.n_files == 0);
    snprintf(path, sizeof path, "%s/a-convws.jsonl.xz", dir);
    write_xz(path,
        "{\"spec\": \"timm:resnet18\", \"prec\": \"fp32\", \"batch\": 2, \"convs\": ["
        "{\"x\": [2, 3, 32, 32], \"w\": [8, 3, 3, 3], \"y\": [2, 8, 16, 16], \"s\": [2, 2],"
        " \"p\": [1, 1], \"d\": [1, 1], \"g\": 1, \"cl\": false, \"extra_mib\": 12.5,"
        " \"in_mib\": 0.023, \"out_mib\": 0.016},"
        "{\"x\": [2, 8, 16, 16], \"w\": [8, 1, 3, 3], \"y\": [2, 8, 16, 16], \"s\": [1, 1],"
        " \"p\": [1, 1], \"d\": [1, 1], \"g\": 8, \"cl\": false, \"extra_mib\": 0,"
        " \"in_mib\": 0.016, \"out_mib\": 0.016}]}\n"
        "{\"spec\": \"timm:resnet18\", \"prec\": \"fp16\", \"convs\": ["
        "{\"x\": [2, 3, 32, 32], \"w\": [8, 3, 3, 3], \"y\": [2, 8, 16, 16], \"s\": [2, 2],"
        " \"p\": [1, 1], \"d\": [1, 1], \"g\": 1, \"cl\": false, \"extra_mib\": 3,"
        " \"in_mib\": 0.01, \"out_mib\": 0.01}]}\n"
        "{\"spec\": \"timmv:poolformer_s12:a0c48d65b9\", \"prec\": \"fp32\", \"convs\": ["
        "{\"x\": [1, 64, 8, 8], \"w\": [32, 64, 1, 1], \"y\": [1, 32, 8, 8], \"s\": [1, 1],"
        " \"p\": \"same\", \"d\": [1, 1], \"g\": 1, \"cl\": true, \"extra_mib\": 0.5,"
        " \"in_mib\": 0.016, \"out_mib\": 0.008}]}\n"
        "{\"spec\": \"grid:convgrid\", \"prec\": \"fp16\", \"seed\": 40, \"convs\": ["
        "{\"x\": [4, 16, 8, 8], \"w\": [32, 16, 3, 3], \"y\": [4, 32, 8, 8], \"s\": [1, 1],"
        " \"p\": [1, 1], \"d\": [1, 1], \"g\": 1, \"cl\": false, \"extra_mib\": 0,"
        " \"in_mib\": 0.016, \"out_mib\": 0.031}]}\n"
        "{\"spec\": \"timm:bad\", \"error\": \"unknown spec\"}\n");
    snprintf(path, sizeof path, "%s/b-other.jsonl.xz", dir);   /* not a convws file */
    write_xz(path, "not json\n");
    CHECK(dlp_convws_calls_read(dir, &c, &err) == DLP_OK);
    /* the grouped conv and the error record are left out */
    CHECK(c.n_files == 1 && c.n == 4 && c.n_names == 3);
    if (c.n == 4) {
        CHECK(!c.call[0].grid && !c.call[2].grid && c.call[3].grid &&
              c.call[3].half && !strcmp(c.names[c.call[3].model], "convgrid"));
        const dlp_conv_shape *h = &c.call[0].shape;
        CHECK(h->n == 2 && h->c == 3 && h->k == 8 && h->kh == 3 && h->ho == 16 &&
              h->sh == 2 && h->ph == 1 && !h->cl && !c.call[0].half);
        CHECK(c.call[0].extra_mib == 12.5f && fabsf(c.call[0].io_mib - 0.039f) < 1e-6f);
        CHECK(c.call[1].half && c.call[1].extra_mib == 3 && c.call[1].model == c.call[0].model);
        CHECK(!strcmp(c.names[c.call[0].model], "resnet18"));
        CHECK(!strcmp(c.names[c.call[2].model], "poolformer_s12"));
        CHECK(c.call[2].shape.ph == 0 && c.call[2].shape.cl && !c.call[2].half);
    }
    dlp_convws_calls_free(&c);
    /* a line that is not JSON, and a truncated .xz: errors naming the file */
    snprintf(path, sizeof path, "%s/c-convws.jsonl.xz", dir);
    write_xz(path, "{\"spec\": \"timm:x\", \"prec\": \"fp32\", \"convs\": []}\n{oops\n");
    CHECK(dlp_convws_calls_read(dir, &c, &err) == DLP_ERR_FORMAT &&
          strstr(err.msg, "c-convws.jsonl.xz:2"));
    write_xz(path, "{\"spec\": \"timm:x\", \"prec\": \"fp32\", \"convs\": []}\n");
    FILE *fp = fopen(path, "r+b");
    DLP_ASSERT(fp);
    DLP_ASSERT(ftruncate(fileno(fp), 20) == 0);
    fclose(fp);
    CHECK(dlp_convws_calls_read(dir, &c, &err) == DLP_ERR_FORMAT &&
          strstr(err.msg, "c-convws.jsonl.xz"));
    unlink(path);
    snprintf(path, sizeof path, "%s/a-convws.jsonl.xz", dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/b-other.jsonl.xz", dir);
    unlink(path);
    rmdir(dir);
}

/* The backward's probes: convbwd files (probe_convgrid.py --backward's
 * extra_mib, probe_convbwd.py's bwd_extra_mib beside its forward's), read
 * after the convws files as backward calls; fitting with bwd gives the
 * backward parts from them alone. */
static void test_probe_reader_bwd(void) {
    char dir[] = "/tmp/dlp_convbwd_XXXXXX", a[256], b[256];
    DLP_ASSERT(mkdtemp(dir));
    snprintf(a, sizeof a, "%s/a-convws.jsonl.xz", dir);
    write_xz(a,
        "{\"spec\": \"timm:resnet18\", \"prec\": \"fp32\", \"convs\": ["
        "{\"x\": [2, 3, 32, 32], \"w\": [8, 3, 3, 3], \"y\": [2, 8, 16, 16], \"s\": [2, 2],"
        " \"p\": [1, 1], \"d\": [1, 1], \"g\": 1, \"cl\": false, \"extra_mib\": 12.5,"
        " \"in_mib\": 0.023, \"out_mib\": 0.016}]}\n");
    snprintf(b, sizeof b, "%s/b-convbwd.jsonl.xz", dir);
    write_xz(b,
        "{\"spec\": \"grid:convgrid-bwd\", \"prec\": \"fp16\", \"convs\": ["
        "{\"x\": [4, 16, 8, 8], \"w\": [32, 16, 3, 3], \"y\": [4, 32, 8, 8], \"s\": [1, 1],"
        " \"p\": [1, 1], \"d\": [1, 1], \"g\": 1, \"cl\": false, \"dgrad\": true,"
        " \"extra_mib\": 40, \"in_mib\": 0.016, \"out_mib\": 0.031, \"grad_mib\": 0.02}]}\n"
        "{\"spec\": \"tv:vgg16\", \"prec\": \"fp32\", \"batch\": 16, \"convs\": ["
        "{\"x\": [16, 512, 28, 28], \"w\": [512, 512, 3, 3], \"y\": [16, 512, 28, 28],"
        " \"s\": [1, 1], \"p\": [1, 1], \"d\": [1, 1], \"g\": 1, \"cl\": false,"
        " \"fwd_extra_mib\": 0.5, \"bwd_extra_mib\": 1147, \"in_mib\": 24.5,"
        " \"out_mib\": 24.5}]}\n");
    dlp_convws_calls c;
    dlp_error err;
    CHECK(dlp_convws_calls_read(dir, &c, &err) == DLP_OK);
    CHECK(c.n_files == 2 && c.n == 3);
    if (c.n == 3) {
        CHECK(!c.call[0].bwd && c.call[0].extra_mib == 12.5f);
        CHECK(c.call[1].bwd && c.call[1].grid && c.call[1].half && c.call[1].extra_mib == 40);
        CHECK(c.call[2].bwd && !c.call[2].grid && !c.call[2].half &&
              c.call[2].extra_mib == 1147 && !strcmp(c.names[c.call[2].model], "vgg16"));
    }
    dlp_convws_calls_free(&c);
    unlink(a);
    unlink(b);
    rmdir(dir);
}

/* Fitting on calls: the workspace the probes show for a shape comes back
 * for it, none for the shapes without, at each type from its own calls; a
 * held-out model's calls are not used (use[] false for every model with a
 * workspace: no model). */
static void test_convws_fit(void) {
    dlp_convws_calls c = {0};
    uint64_t s = 3;
    DLP_ASSERT(dlp_grow((void **)&c.call, &c.cap, 1200, sizeof *c.call));
    c.names = calloc(2, sizeof *c.names);
    DLP_ASSERT(c.names);
    c.names[0] = strdup("a");
    c.names[1] = strdup("b");
    c.n_names = 2;
    for (int i = 0; i < 600; i++) {
        dlp_convws_call *k = &c.call[c.n++];
        *k = (dlp_convws_call){0};
        dlp_conv_shape *h = &k->shape;
        h->n = 1 << (int)(u01(&s) * 6);
        h->c = h->k = 16 << (int)(u01(&s) * 5);
        h->h = h->w = h->ho = h->wo = 7 << (int)(u01(&s) * 4);
        h->kh = h->kw = u01(&s) < 0.5 ? 1 : 3;
        h->sh = h->sw = h->dh = 1;
        h->ph = h->kh / 2;
        k->io_mib = (float)(8.0 * h->n * h->c * h->h * h->w / 1048576.0);
        /* fp32: 3x3 convs with >= 256 channels take 64 MiB per image */
        bool ws = h->kh == 3 && h->c >= 256;
        k->extra_mib = ws ? 64.0f * (float)h->n : 0;
        k->model = ws ? 1 : 0;
    }
    dlp_convws *m = NULL;
    dlp_error err;
    DLP_ASSERT(dlp_convws_fit(&c, NULL, false, &m, &err) == DLP_OK && m);
    float x[DLP_CONVWS_NF];
    dlp_conv_shape q = {4, 512, 14, 14, 512, 3, 3, 14, 14, 1, 1, 1, 1, false};
    double p, mib;
    dlp_conv_shape_features(&q, x);
    CHECK(dlp_convws_predict(m, false, x, &p, &mib));
    CHECK_MSG(p > 0.9 && fabs(mib / 256 - 1) < 0.15, "p %g, %g MiB", p, mib);
    CHECK(!dlp_convws_predict(m, true, x, &p, &mib));   /* no fp16 calls */
    q.kh = q.kw = 1;
    q.ph = 0;
    dlp_conv_shape_features(&q, x);
    dlp_convws_predict(m, false, x, &p, &mib);
    CHECK_MSG(p < 0.1, "p %g", p);
    /* a probed shape: its measurement, exactly (the trees would not give
     * 64 x N MiB to the bit), through a model file and back */
    dlp_nn_file nf = {0};
    DLP_ASSERT(dlp_convws_save(m, &nf, &err) == DLP_OK);
    dlp_convws_free(m);
    m = NULL;
    DLP_ASSERT(dlp_convws_load(&nf, &m, &err) == DLP_OK && m);
    int hit = -1;
    for (size_t i = 0; i < c.n && hit < 0; i++)
        if (c.call[i].extra_mib > 0) hit = (int)i;
    DLP_ASSERT(hit >= 0);
    dlp_conv_shape_features(&c.call[hit].shape, x);
    dlp_convws_predict(m, false, x, &p, &mib);
    CHECK_MSG(p == 1 && mib == c.call[hit].extra_mib, "p %g, %g MiB vs %g", p, mib,
              (double)c.call[hit].extra_mib);
    dlp_convws_free(m);
    /* the same calls as grid shapes: the forests only, no measured-shape
     * table in the file */
    for (size_t i = 0; i < c.n; i++) c.call[i].grid = true;
    DLP_ASSERT(dlp_convws_fit(&c, NULL, false, &m, &err) == DLP_OK && m);
    dlp_nn_file gf = {0};
    DLP_ASSERT(dlp_convws_save(m, &gf, &err) == DLP_OK);
    CHECK(dlp_nn_file_get(&gf, "convws/cls/trees", DLP_NN_I64) &&
          !dlp_nn_file_get(&gf, "convws/exact_keys", DLP_NN_I64));
    dlp_nn_file_free(&gf);
    dlp_convws_free(m);
    for (size_t i = 0; i < c.n; i++) c.call[i].grid = false;
    /* the same calls as backward ones: no forward model (none fitted,
     * whatever bwd says); beside forward calls, backward parts only with
     * bwd, and the forward answers as before */
    for (size_t i = 0; i < c.n; i++) c.call[i].bwd = true;
    m = (dlp_convws *)1;
    CHECK(dlp_convws_fit(&c, NULL, true, &m, &err) == DLP_OK && !m);
    DLP_ASSERT(dlp_grow((void **)&c.call, &c.cap, 2 * c.n, sizeof *c.call));
    size_t n1 = c.n;
    for (size_t i = 0; i < n1; i++) {
        c.call[c.n] = c.call[i];
        c.call[c.n++].bwd = false;
    }
    for (int b = 0; b < 2; b++) {
        DLP_ASSERT(dlp_convws_fit(&c, NULL, b, &m, &err) == DLP_OK && m);
        dlp_nn_file bf = {0};
        DLP_ASSERT(dlp_convws_save(m, &bf, &err) == DLP_OK);
        CHECK(!!dlp_nn_file_get(&bf, "convbwd/cls/trees", DLP_NN_I64) == b &&
              !dlp_nn_file_get(&bf, "convbwd16/cls/trees", DLP_NN_I64));
        dlp_conv_shape_features(&c.call[hit].shape, x);
        CHECK(dlp_convws_predict(m, false, x, &p, &mib) && p == 1 &&
              mib == c.call[hit].extra_mib);
        dlp_nn_file_free(&bf);
        dlp_convws_free(m);
    }
    c.n = n1;
    for (size_t i = 0; i < c.n; i++) c.call[i].bwd = false;
    /* keys out of order: refused */
    for (int i = 0; i < nf.n; i++)
        if (!strcmp(nf.e[i].name, "convws/exact_keys") && nf.e[i].count > 1) {
            int64_t *k = nf.e[i].data, t = k[0];
            k[0] = k[1];
            k[1] = t;
        }
    m = (dlp_convws *)1;
    CHECK(dlp_convws_load(&nf, &m, &err) == DLP_ERR_FORMAT && !m);
    dlp_nn_file_free(&nf);
    bool use[2] = {true, false};
    m = (dlp_convws *)1;
    CHECK(dlp_convws_fit(&c, use, false, &m, &err) == DLP_OK && !m);
    /* the same shapes at fp16, where the 1x1 convs take 32 MiB per image
     * and the 3x3 none: each type answers from its own calls */
    for (int i = 0; i < 600; i++) {
        dlp_convws_call *k = &c.call[c.n++];
        *k = c.call[i];
        k->half = true;
        k->io_mib /= 2;
        k->extra_mib = k->shape.kh == 1 ? 32.0f * (float)k->shape.n : 0;
        k->model = 0;
    }
    DLP_ASSERT(dlp_convws_fit(&c, NULL, false, &m, &err) == DLP_OK && m);
    dlp_conv_shape_features(&q, x);   /* the 1x1 */
    CHECK(dlp_convws_predict(m, true, x, &p, &mib));
    CHECK_MSG(p > 0.9 && fabs(mib / 128 - 1) < 0.15, "fp16: p %g, %g MiB", p, mib);
    dlp_convws_predict(m, false, x, &p, &mib);
    CHECK_MSG(p < 0.1, "fp32: p %g", p);
    q.kh = q.kw = 3;
    q.ph = 1;
    dlp_conv_shape_features(&q, x);
    dlp_convws_predict(m, true, x, &p, &mib);
    CHECK_MSG(p < 0.1, "fp16: p %g", p);
    DLP_ASSERT(dlp_convws_save(m, &nf, &err) == DLP_OK);
    dlp_convws_free(m);
    /* only the fp16 part held out (use[0] false): the fp32 part alone */
    use[0] = false;
    use[1] = true;
    DLP_ASSERT(dlp_convws_fit(&c, use, false, &m, &err) == DLP_OK && m);
    CHECK(!dlp_convws_predict(m, true, x, &p, &mib) &&
          dlp_convws_predict(m, false, x, &p, &mib));
    dlp_convws_free(m);
    /* a file whose fp16 part lost a forest: refused */
    for (int i = 0; i < nf.n; i++)
        if (!strcmp(nf.e[i].name, "convws16/reg/trees")) nf.e[i].name[0] = 'X';
    m = (dlp_convws *)1;
    CHECK(dlp_convws_load(&nf, &m, &err) == DLP_ERR_FORMAT && !m &&
          strstr(err.msg, "convws16"));
    dlp_nn_file_free(&nf);
    dlp_convws_calls_free(&c);
}

/* The FFT features (fortieth session) against measured FFT workspaces of
 * data/probes (fp32, H200, 3x3 stride-1 padding-1 convolutions that
 * cuDNN ran with its FFT algorithm): the size is within x0.8-1.25 of each;
 * and files written before them (forests of 18 features) still load and
 * answer, while other feature counts are refused. */
static void test_convws_fft_features(void) {
    struct { dlp_conv_shape s; double mib; } probe[3] = {
        /* MaxxViTv2-nano b2 256 px, 20261129-convws.jsonl.xz */
        {{2, 48, 128, 128, 96, 3, 3, 128, 128, 1, 1, 1, 1, false}, 2388.85},
        /* LowFormer-E3 b1 320 px */
        {{1, 32, 160, 160, 128, 3, 3, 160, 160, 1, 1, 1, 1, false}, 2080.266},
        /* ViTamin-L b8 336 px */
        {{8, 160, 168, 168, 160, 3, 3, 168, 168, 1, 1, 1, 1, false}, 13823.45},
    };
    float x[DLP_CONVWS_NF];
    for (int i = 0; i < 3; i++) {
        dlp_conv_shape_features(&probe[i].s, x);
        double r = exp2(x[18]) / probe[i].mib;
        CHECK_MSG(r > 0.8 && r < 1.25, "probe %d: FFT size %g MiB vs %g measured",
                  i, exp2(x[18]), probe[i].mib);
        /* the ratio's denominator: the fp32 input + output MiB */
        double io = 4.0 * ((double)probe[i].s.n * probe[i].s.c * probe[i].s.h * probe[i].s.w +
                    (double)probe[i].s.n * probe[i].s.k * probe[i].s.ho * probe[i].s.wo) /
             1048576.0;
        CHECK_CLOSE(x[19], log2(exp2(x[18]) / io), 1e-4);
    }
    /* an 18-feature file: loads, its forests read the same vector */
    dlp_error err;
    for (int nf_feat = DLP_CONVWS_NF_V1; nf_feat <= DLP_CONVWS_NF; nf_feat++) {
        dlp_nn_file nf = {0};
        add_const_forest_nf(&nf, "convws/cls", 3.0f, 1, nf_feat);
        add_const_forest_nf(&nf, "convws/reg", 5.0f, 0, nf_feat);
        dlp_convws *m = (dlp_convws *)1;
        dlp_status st = dlp_convws_load(&nf, &m, &err);
        if (nf_feat == DLP_CONVWS_NF_V1 || nf_feat == DLP_CONVWS_NF) {
            double p = 0, mib = 0;
            CHECK(st == DLP_OK && m && dlp_convws_predict(m, false, x, &p, &mib));
            CHECK_CLOSE(p, 1 / (1 + exp(-3.0)), 1e-6);
            CHECK_CLOSE(mib, 32, 1e-4);
            dlp_convws_free(m);
        } else {
            CHECK_MSG(st == DLP_ERR_FORMAT && !m && strstr(err.msg, "features"),
                      "%d features: status %d", nf_feat, (int)st);
        }
        dlp_nn_file_free(&nf);
    }
}

/* The one file name in dir (a fit cache holding one forest), into out. */
static bool only_file(const char *dir, char *out, size_t cap) {
    DIR *d = opendir(dir);
    if (!d) return false;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.') {
            snprintf(out, cap, "%.40s/%.200s", dir, e->d_name);
            n++;
        }
    closedir(d);
    return n == 1;
}

/* Whether forests a and b answer the same, bit for bit, on rows x[N, D]. */
static bool same_forest(const dlp_forest *a, const dlp_forest *b,
                        const float *x) {
    for (int i = 0; i < N; i++) {
        float u = dlp_forest_eval(a, x + i * D), v = dlp_forest_eval(b, x + i * D);
        if (memcmp(&u, &v, sizeof u)) return false;
    }
    return true;
}

/* dlp_forest_fit through a fit cache (tree_cache.c): a fit it has seen
 * comes back bit for bit from the folder, one that differs in a label, a
 * parameter or (histogram method only) the thread count is fitted; a
 * corrupt entry or one holding another key is fitted again, never
 * returned; a folder that is not one is refused, and one that went away
 * fails the fit naming the file */
static void test_forest_fit_cache(void) {
    static float x[N * D], y[N], y2[N];
    uint64_t s = 77;
    for (int i = 0; i < N; i++) {
        for (int k = 0; k < D; k++) x[i * D + k] = (float)u01(&s);
        y[i] = y2[i] = (float)(x[i * D] * x[i * D + 3] + (x[i * D + 1] > 0.5f));
    }
    y2[N / 2] += 1.0f;
    dlp_tree_params p;
    dlp_tree_params_default(&p);
    p.rounds = 30;
    p.max_depth = 4;
    dlp_error err;
    dlp_tree *t;
    dlp_forest *ref, *ref2, *f = NULL;
    train(x, y, &p, &t, &ref);
    dlp_tree_free(t);
    train(x, y2, &p, &t, &ref2);
    dlp_tree_free(t);
    /* no folder: the booster's forest */
    CHECK(dlp_forest_cache() == NULL);
    DLP_ASSERT(dlp_forest_fit(x, N, D, y, &p, &f, &err) == DLP_OK && f);
    CHECK(same_forest(f, ref, x));
    dlp_forest_free(f);

    char dir[] = "/tmp/dlp_fit_cache_XXXXXX", path[300], moved[320];
    DLP_ASSERT(mkdtemp(dir));
    CHECK(dlp_forest_cache_set("/nonexistent/dlp_fit_cache", &err) == DLP_ERR_IO);
    CHECK(strstr(err.msg, "/nonexistent/dlp_fit_cache") != NULL);
    CHECK(dlp_forest_cache() == NULL);
    DLP_ASSERT(dlp_forest_cache_set(dir, &err) == DLP_OK);
    CHECK(dlp_forest_cache() && !strcmp(dlp_forest_cache(), dir));
    int h0, f0, h, n;
    dlp_forest_cache_counts(&h0, &f0);
    /* first fit: boosted and written; second: from the folder */
    DLP_ASSERT(dlp_forest_fit(x, N, D, y, &p, &f, &err) == DLP_OK && f);
    dlp_forest_cache_counts(&h, &n);
    CHECK(h == h0 && n == f0 + 1);
    CHECK(same_forest(f, ref, x));
    dlp_forest_free(f);
    DLP_ASSERT(only_file(dir, path, sizeof path));
    DLP_ASSERT(dlp_forest_fit(x, N, D, y, &p, &f, &err) == DLP_OK && f);
    dlp_forest_cache_counts(&h, &n);
    CHECK(h == h0 + 1 && n == f0 + 1);
    CHECK(same_forest(f, ref, x));
    dlp_forest_free(f);
    /* the exact method on another thread count: the same trees, a hit */
    dlp_tree_params q = p;
    q.threads = 2;
    DLP_ASSERT(dlp_forest_fit(x, N, D, y, &q, &f, &err) == DLP_OK && f);
    dlp_forest_cache_counts(&h, &n);
    CHECK(h == h0 + 2 && n == f0 + 1);
    dlp_forest_free(f);
    /* an entry under another fit's name (here: y2's) is not taken for it */
    snprintf(moved, sizeof moved, "%s.keep", path);
    DLP_ASSERT(rename(path, moved) == 0);
    DLP_ASSERT(dlp_forest_fit(x, N, D, y2, &p, &f, &err) == DLP_OK && f);
    dlp_forest_free(f);
    char path2[300];
    DLP_ASSERT(only_file(dir, path2, sizeof path2) == false);   /* .keep + y2's */
    DLP_ASSERT(remove(moved) == 0);
    DLP_ASSERT(only_file(dir, path2, sizeof path2));
    DLP_ASSERT(rename(path2, path) == 0);    /* y2's forest under y's name */
    DLP_ASSERT(dlp_forest_fit(x, N, D, y, &p, &f, &err) == DLP_OK && f);
    dlp_forest_cache_counts(&h, &n);
    CHECK(h == h0 + 2 && n == f0 + 3);
    CHECK(same_forest(f, ref, x) && !same_forest(f, ref2, x));
    dlp_forest_free(f);
    /* a label or a parameter changed: fitted */
    DLP_ASSERT(dlp_forest_fit(x, N, D, y2, &p, &f, &err) == DLP_OK && f);
    dlp_forest_cache_counts(&h, &n);
    CHECK(h == h0 + 2 && n == f0 + 4);   /* its entry went to y's name */
    CHECK(same_forest(f, ref2, x));
    dlp_forest_free(f);
    q = p;
    q.rounds = 31;
    DLP_ASSERT(dlp_forest_fit(x, N, D, y, &q, &f, &err) == DLP_OK && f);
    dlp_forest_cache_counts(&h, &n);
    CHECK(n == f0 + 5);
    dlp_forest_free(f);
    /* the histogram method: its thread count is part of the key */
    q = p;
    q.hist = 1;
    DLP_ASSERT(dlp_forest_fit(x, N, D, y, &q, &f, &err) == DLP_OK && f);
    dlp_forest_free(f);
    q.threads = 2;
    DLP_ASSERT(dlp_forest_fit(x, N, D, y, &q, &f, &err) == DLP_OK && f);
    dlp_forest_cache_counts(&h, &n);
    CHECK(h == h0 + 2 && n == f0 + 7);
    dlp_forest_free(f);
    /* a corrupt entry: fitted again and rewritten, then a hit */
    FILE *c = fopen(path, "r+b");
    DLP_ASSERT(c);
    fseek(c, 40, SEEK_SET);
    fputs("garbage garbage garbage", c);
    fclose(c);
    DLP_ASSERT(dlp_forest_fit(x, N, D, y, &p, &f, &err) == DLP_OK && f);
    CHECK(same_forest(f, ref, x));
    dlp_forest_free(f);
    DLP_ASSERT(dlp_forest_fit(x, N, D, y, &p, &f, &err) == DLP_OK && f);
    dlp_forest_cache_counts(&h, &n);
    CHECK(h == h0 + 3 && n == f0 + 8);
    CHECK(same_forest(f, ref, x));
    dlp_forest_free(f);
    /* a file is not a folder; a folder that went away fails the write */
    CHECK(dlp_forest_cache_set(path, &err) == DLP_ERR_IO);
    CHECK(!strcmp(dlp_forest_cache(), dir));
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    DLP_ASSERT(system(cmd) == 0);
    f = ref;
    CHECK(dlp_forest_fit(x, N, D, y, &p, &f, &err) != DLP_OK && f == NULL);
    CHECK(strstr(err.msg, dir) != NULL);
    DLP_ASSERT(dlp_forest_cache_set(NULL, &err) == DLP_OK);
    CHECK(dlp_forest_cache() == NULL);
    dlp_forest_free(ref);
    dlp_forest_free(ref2);
}

int main(void) {
    RUN(test_forest_matches_xgboost);
    RUN(test_forest_splits_on);
    RUN(test_forest_max_split);
    RUN(test_forest_corrupt);
    RUN(test_forest_side_file);
    RUN(test_forest_long_prefix);
    RUN(test_forest_fit_cache);
    RUN(test_forest_file_crc);
    RUN(test_convws_decision);
    RUN(test_convws_train_decision);
    RUN(test_convws_train_bwd);
    RUN(test_probe_reader);
    RUN(test_probe_reader_bwd);
    RUN(test_convws_fit);
    RUN(test_convws_fft_features);
    return CHECK_DONE();
}
