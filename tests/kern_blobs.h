/* kern_blobs.h — a kern model file as written before the eightieth
 * session, for tests of the booster-blob path (test_kern.c, test_blend.c):
 * the trained file's node and graph forests replaced by XGBoost booster
 * blobs ("<scope>blob/kern/node", "<scope>blob/kern/graph", UBJSON) of
 * boosters drawn on seeded data, of the widths "<scope>kern/schema"
 * records. Their trees are not the trained ones: predictions through them
 * differ from the trained file's, so a test sees which form answered. */
#ifndef DLP_TEST_KERN_BLOBS_H
#define DLP_TEST_KERN_BLOBS_H

#include "nn/nn.h"
#include "pred/pred.h"
#include "tree/tree.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A booster of nf features fitted to a seeded draw, or NULL. */
static dlp_tree *kern_blobs_draw(int nf, uint64_t seed, dlp_error *err) {
    enum { N = 300 };
    float *x = malloc((size_t)N * (size_t)nf * sizeof *x), y[N];
    if (!x) return NULL;
    uint64_t s = seed;
    for (size_t i = 0; i < (size_t)N * (size_t)nf; i++) {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        x[i] = (float)((s >> 11) * 0x1.0p-53) * 4.f - 2.f;
    }
    for (int i = 0; i < N; i++)
        y[i] = 0.3f * x[(size_t)i * nf] - 0.2f * x[(size_t)i * nf + nf - 1];
    dlp_tree_params tp;
    dlp_tree_params_default(&tp);
    tp.rounds = 30;
    dlp_tree *t = NULL;
    if (dlp_tree_train(x, N, nf, y, &tp, &t, err)) t = NULL;
    free(x);
    return t;
}

/* out (empty) = src with scope's kern forests as booster blobs. */
static dlp_status kern_blobs_file(const dlp_nn_file *src, const char *scope,
                                  dlp_nn_file *out, dlp_error *err) {
    static const char *const model[2] = {"kern/node", "kern/graph"};
    char name[160], forests[160];
    snprintf(name, sizeof name, "%skern/schema", scope);
    snprintf(forests, sizeof forests, "%sforest/kern/", scope);
    const dlp_nn_entry *se = dlp_nn_file_get(src, name, DLP_NN_I64);
    if (!se || se->count != 4)
        return dlp_fail(err, DLP_ERR_FORMAT, "no %s", name);
    dlp_status st = DLP_OK;
    for (int i = 0; i < src->n && !st; i++)
        if (strncmp(src->e[i].name, forests, strlen(forests)))
            st = dlp_nn_file_add_copy(out, src->e[i].name, &src->e[i], err);
    for (int b = 0; b < 2 && !st; b++) {
        int nf = (int)((const int64_t *)se->data)[1 + b];
        dlp_tree *t = kern_blobs_draw(nf, 11 + (uint64_t)b, err);
        void *buf = NULL;
        size_t len = 0;
        dlp_nn_file blob = {0};   /* the blob's entries, then scoped */
        st = t ? dlp_tree_save(t, &buf, &len, err)
               : dlp_fail(err, DLP_ERR_NOMEM, "booster draw failed");
        if (!st) st = dlp_pred_blob_add(&blob, model[b], buf, len, err);
        for (int i = 0; i < blob.n && !st; i++) {
            snprintf(name, sizeof name, "%s%s", scope, blob.e[i].name);
            st = dlp_nn_file_add_copy(out, name, &blob.e[i], err);
        }
        dlp_nn_file_free(&blob);
        free(buf);
        dlp_tree_free(t);
    }
    return st;
}

#endif
