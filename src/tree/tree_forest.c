/*
 * tree_forest.c — a booster's trees as flat arrays and their evaluation
 * without XGBoost (tree.h says why), built from the booster's JSON
 * (XGBoost 1.7: learner.gradient_booster.model.trees[], each with
 * left_children / right_children (-1 at a leaf), split_indices,
 * split_conditions (the leaf's value at a leaf), default_left; and
 * learner.learner_model_param.base_score, a string).
 */
#include "tree/tree.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FOREST_MAX_NODES (1 << 24)   /* node indices stay exact in float32 */
#define LOAD_BLOCK 256               /* nodes converted per block (5 KiB) */

void dlp_forest_free(dlp_forest *f) {
    if (!f) return;
    free(f->root);
    free(f->node);
    free(f);
}

static dlp_forest *forest_alloc(int n_trees, int n_nodes) {
    dlp_forest *f = calloc(1, sizeof *f);
    if (!f) return NULL;
    size_t t = n_trees ? (size_t)n_trees : 1, n = n_nodes ? (size_t)n_nodes : 1;
    f->root = malloc(t * sizeof *f->root);
    f->node = malloc(n * sizeof *f->node);
    if (!f->root || !f->node) {
        dlp_forest_free(f);
        return NULL;
    }
    f->n_trees = n_trees;
    f->n_nodes = n_nodes;
    return f;
}

/* Node i of the tree [begin, end): an internal node's children after it
 * and before end, its feature in range; a leaf's value finite. */
static bool node_ok(const dlp_forest *f, int i, int end) {
    const dlp_forest_node *n = &f->node[i];
    if (n->feat < 0) return n->feat == -1 && isfinite(n->value);
    return n->feat < f->n_features && n->left > i && n->left < end &&
           n->right > i && n->right < end && !isnan(n->value);
}

/* Tree t's nodes [*begin, *end), or false when the roots do not split
 * [0, n_nodes) in order. */
static bool tree_span(const dlp_forest *f, int t, int *begin, int *end) {
    *begin = f->root[t];
    *end = t + 1 < f->n_trees ? f->root[t + 1] : f->n_nodes;
    return *begin >= 0 && *end > *begin && *end <= f->n_nodes &&
           (t > 0 || *begin == 0);
}

static dlp_status check_forest(const dlp_forest *f, dlp_error *err) {
    if (f->n_features < 1 || f->n_features > INT16_MAX)
        return dlp_fail(err, DLP_ERR_FORMAT, "forest: %d features", f->n_features);
    for (int t = 0; t < f->n_trees; t++) {
        int b, e;
        if (!tree_span(f, t, &b, &e))
            return dlp_fail(err, DLP_ERR_FORMAT, "forest: tree %d spans [%d, %d)", t, b, e);
        for (int i = b; i < e; i++)
            if (!node_ok(f, i, e))
                return dlp_fail(err, DLP_ERR_FORMAT, "forest: node %d of tree "
                                "[%d, %d) out of range", i, b, e);
    }
    if (!isfinite(f->base))
        return dlp_fail(err, DLP_ERR_FORMAT, "forest: base score not finite");
    return DLP_OK;
}

float dlp_forest_eval(const dlp_forest *f, const float *x) {
    const dlp_forest_node *nd = f->node;
    float s = f->base;
    for (int t = 0; t < f->n_trees; t++) {
        const dlp_forest_node *n = &nd[f->root[t]];
        while (n->feat >= 0) {
            float v = x[n->feat];
            n = &nd[isnan(v) ? (n->dleft ? n->left : n->right)
                             : v < n->value ? n->left : n->right];
        }
        s += n->value;
    }
    return f->logistic ? 1.0f / (1.0f + expf(-s)) : s;
}

/* The n-element numeric array `name` of tree object t, or NULL. */
static const cJSON *arr(const cJSON *t, const char *name, int n) {
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(t, name);
    return cJSON_IsArray(a) && cJSON_GetArraySize(a) == n ? a : NULL;
}

static dlp_status from_json(const cJSON *root, int nf, dlp_forest **out,
                            dlp_error *err) {
    const cJSON *lr = cJSON_GetObjectItemCaseSensitive(root, "learner");
    const cJSON *mp = cJSON_GetObjectItemCaseSensitive(lr, "learner_model_param");
    const cJSON *bs = cJSON_GetObjectItemCaseSensitive(mp, "base_score");
    const cJSON *gb = cJSON_GetObjectItemCaseSensitive(lr, "gradient_booster");
    const cJSON *md = cJSON_GetObjectItemCaseSensitive(gb, "model");
    const cJSON *trees = cJSON_GetObjectItemCaseSensitive(md, "trees");
    if (!cJSON_IsString(bs) || !cJSON_IsArray(trees))
        return dlp_fail(err, DLP_ERR_FORMAT, "forest: booster JSON lacks "
                        "base_score or trees");
    int nt = cJSON_GetArraySize(trees), nn = 0;
    const cJSON *t;
    cJSON_ArrayForEach(t, trees) {
        const cJSON *l = cJSON_GetObjectItemCaseSensitive(t, "left_children");
        if (!cJSON_IsArray(l) || cJSON_GetArraySize(l) < 1 ||
            cJSON_GetArraySize(l) > FOREST_MAX_NODES - nn)
            return dlp_fail(err, DLP_ERR_FORMAT, "forest: a tree without nodes "
                            "or too many nodes");
        nn += cJSON_GetArraySize(l);
    }
    dlp_forest *f = forest_alloc(nt, nn);
    if (!f) return dlp_fail(err, DLP_ERR_NOMEM, "forest: out of memory");
    f->n_features = nf;
    f->base = strtof(bs->valuestring, NULL);
    const cJSON *ob = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(lr, "objective"), "name");
    if (cJSON_IsString(ob) && !strcmp(ob->valuestring, "binary:logistic")) {
        if (!(f->base > 0 && f->base < 1)) {
            dlp_forest_free(f);
            return dlp_fail(err, DLP_ERR_FORMAT, "forest: logistic base score "
                            "outside (0, 1)");
        }
        f->logistic = 1;
        f->base = logf(f->base / (1 - f->base));
    } else if (!cJSON_IsString(ob) || strcmp(ob->valuestring, "reg:squarederror")) {
        dlp_forest_free(f);
        return dlp_fail(err, DLP_ERR_UNSUPPORTED, "forest: objective not "
                        "reg:squarederror or binary:logistic");
    }
    int k = 0, at = 0;
    cJSON_ArrayForEach(t, trees) {
        int n = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(t, "left_children"));
        const cJSON *l = arr(t, "left_children", n), *r = arr(t, "right_children", n),
                    *si = arr(t, "split_indices", n), *sc = arr(t, "split_conditions", n),
                    *dl = arr(t, "default_left", n);
        if (!l || !r || !si || !sc || !dl) {
            dlp_forest_free(f);
            return dlp_fail(err, DLP_ERR_FORMAT, "forest: tree %d's arrays differ "
                            "in length", k);
        }
        f->root[k++] = at;
        for (int i = 0; i < n; i++) {
            dlp_forest_node *o = &f->node[at + i];
            int li = cJSON_GetArrayItem(l, i)->valueint;
            int ri = cJSON_GetArrayItem(r, i)->valueint;
            int fi = cJSON_GetArrayItem(si, i)->valueint;
            *o = (dlp_forest_node){
                .value = (float)cJSON_GetArrayItem(sc, i)->valuedouble,
                .left = li < 0 ? -1 : at + li,
                .right = ri < 0 ? -1 : at + ri,
                /* out of range: check_forest refuses it */
                .feat = (int16_t)(li < 0 ? -1 : fi >= 0 && fi < INT16_MAX ? fi : INT16_MAX),
                .dleft = cJSON_GetArrayItem(dl, i)->valueint != 0};
        }
        at += n;
    }
    dlp_status st = check_forest(f, err);
    if (st) { dlp_forest_free(f); return st; }
    *out = f;
    return DLP_OK;
}

dlp_status dlp_forest_from_tree(dlp_tree *t, int n_features, dlp_forest **out,
                                dlp_error *err) {
    *out = NULL;
    void *buf = NULL;
    size_t len = 0;
    dlp_status st = dlp_tree_save_as(t, DLP_TREE_JSON, &buf, &len, err);
    if (st) return st;
    cJSON *root = cJSON_ParseWithLength(buf, len);
    free(buf);
    if (!root) return dlp_fail(err, DLP_ERR_FORMAT, "forest: booster JSON does not parse");
    st = from_json(root, n_features, out, err);
    cJSON_Delete(root);
    return st;
}

dlp_status dlp_forest_save(const dlp_forest *f, dlp_nn_file *out,
                           const char *prefix, dlp_error *err) {
    char name[96];
    int64_t *tr = malloc((size_t)(f->n_trees + 2) * sizeof *tr);
    float *nd = malloc((size_t)f->n_nodes * 5 * sizeof *nd);
    if (!tr || !nd) {
        free(tr); free(nd);
        return dlp_fail(err, DLP_ERR_NOMEM, "forest: out of memory");
    }
    tr[0] = f->n_features;
    tr[1] = f->logistic;
    for (int t = 0; t < f->n_trees; t++) tr[t + 2] = f->root[t];
    for (int i = 0; i < f->n_nodes; i++) {
        const dlp_forest_node *n = &f->node[i];
        float *o = nd + 5 * (size_t)i;
        o[0] = (float)n->feat;
        o[1] = n->value;
        o[2] = (float)n->left;
        o[3] = (float)n->right;
        o[4] = n->dleft;
    }
    snprintf(name, sizeof name, "%s/trees", prefix);
    dlp_status st = dlp_nn_file_add_i64(out, name, tr, (uint64_t)f->n_trees + 2, err);
    snprintf(name, sizeof name, "%s/nodes", prefix);
    if (!st) st = dlp_nn_file_add_f32(out, name, nd, (uint64_t)f->n_nodes * 5, err);
    snprintf(name, sizeof name, "%s/base", prefix);
    if (!st) st = dlp_nn_file_add_f32(out, name, &f->base, 1, err);
    free(tr); free(nd);
    return st;
}

/* A stored index (an integer as float32: exact below 2^24), or `bad`
 * when it is not one in [-1, lim). */
static inline int32_t stored_index(float v, float lim, int32_t bad) {
    if (!(v >= -1 && v < lim)) return bad;
    int32_t k = (int32_t)v;
    return (float)k == v ? k : bad;
}

dlp_status dlp_forest_load(const dlp_nn_file *in, const char *prefix,
                           dlp_forest **out, dlp_error *err) {
    *out = NULL;
    char name[96];
    snprintf(name, sizeof name, "%s/trees", prefix);
    const dlp_nn_entry *tr = dlp_nn_file_get(in, name, DLP_NN_I64);
    if (!tr) return DLP_OK;
    snprintf(name, sizeof name, "%s/nodes", prefix);
    const dlp_nn_entry *nd = dlp_nn_file_get(in, name, DLP_NN_F32);
    if (tr->count < 3 || tr->count > FOREST_MAX_NODES || !nd || nd->count % 5 ||
        nd->count / 5 > FOREST_MAX_NODES || nd->count == 0)
        return dlp_fail(err, DLP_ERR_FORMAT, "forest '%s': trees or nodes "
                        "missing or malformed", prefix);
    int nt = (int)tr->count - 2, nn = (int)(nd->count / 5);
    dlp_forest *f = forest_alloc(nt, nn);
    if (!f) return dlp_fail(err, DLP_ERR_NOMEM, "forest: out of memory");
    snprintf(name, sizeof name, "%s/base", prefix);
    dlp_status st = dlp_nn_file_read_f32(in, name, &f->base, 1, err);
    const int64_t *ti = tr->data;
    f->n_features = ti[0] > 0 && ti[0] <= INT16_MAX ? (int)ti[0] : 0;
    f->logistic = ti[1] == 1;
    if (!st && ti[1] != 0 && ti[1] != 1)
        st = dlp_fail(err, DLP_ERR_FORMAT, "forest '%s': objective %lld", prefix,
                      (long long)ti[1]);
    for (int t = 0; !st && t < nt; t++)
        f->root[t] = ti[t + 2] >= 0 && ti[t + 2] < nn ? (int32_t)ti[t + 2] : -1;
    /* the nodes converted in blocks read from where they lie (a large
     * entry in the file's mapping: the fp32 workspace forests are 4 MB,
     * no copy of them all first), then checked */
    for (int i0 = 0; !st && i0 < nn; i0 += LOAD_BLOCK) {
        float o[5 * LOAD_BLOCK];
        int nb = nn - i0 < LOAD_BLOCK ? nn - i0 : LOAD_BLOCK;
        dlp_nn_entry_f32s(nd, 5 * (uint64_t)i0, 5 * (uint64_t)nb, o);
        for (int j = 0; j < nb; j++) {
            const float *q = o + 5 * j;
            f->node[i0 + j] = (dlp_forest_node){
                .feat = (int16_t)stored_index(q[0], INT16_MAX, INT16_MAX),
                .value = q[1],
                .left = stored_index(q[2], FOREST_MAX_NODES, -1),
                .right = stored_index(q[3], FOREST_MAX_NODES, -1),
                .dleft = q[4] != 0};
        }
    }
    if (!st) st = check_forest(f, err);
    if (st) {
        dlp_forest_free(f);
        return st;
    }
    *out = f;
    return DLP_OK;
}
