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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FOREST_MAX_NODES (1 << 24)   /* node indices stay exact in float32 */

void dlp_forest_free(dlp_forest *f) {
    if (!f) return;
    free(f->root); free(f->feat); free(f->left); free(f->right);
    free(f->dleft); free(f->value);
    free(f);
}

static dlp_forest *forest_alloc(int n_trees, int n_nodes) {
    dlp_forest *f = calloc(1, sizeof *f);
    if (!f) return NULL;
    size_t t = n_trees ? (size_t)n_trees : 1, n = n_nodes ? (size_t)n_nodes : 1;
    f->root = malloc(t * sizeof *f->root);
    f->feat = malloc(n * sizeof *f->feat);
    f->left = malloc(n * sizeof *f->left);
    f->right = malloc(n * sizeof *f->right);
    f->dleft = malloc(n);
    f->value = malloc(n * sizeof *f->value);
    if (!f->root || !f->feat || !f->left || !f->right || !f->dleft || !f->value) {
        dlp_forest_free(f);
        return NULL;
    }
    f->n_trees = n_trees;
    f->n_nodes = n_nodes;
    return f;
}

/* Every internal node's children after it and before end, its feature in
 * range; every leaf's value finite. */
static dlp_status check_tree(const dlp_forest *f, int begin, int end,
                             dlp_error *err) {
    for (int i = begin; i < end; i++) {
        if (f->feat[i] < 0) {
            if (!isfinite(f->value[i]))
                return dlp_fail(err, DLP_ERR_FORMAT, "forest: leaf %d not finite", i);
            continue;
        }
        if (f->feat[i] >= f->n_features || f->left[i] <= i || f->left[i] >= end ||
            f->right[i] <= i || f->right[i] >= end || isnan(f->value[i]))
            return dlp_fail(err, DLP_ERR_FORMAT, "forest: node %d of tree "
                            "[%d, %d) out of range", i, begin, end);
    }
    return DLP_OK;
}

static dlp_status check_forest(const dlp_forest *f, dlp_error *err) {
    if (f->n_features < 1)
        return dlp_fail(err, DLP_ERR_FORMAT, "forest: %d features", f->n_features);
    for (int t = 0; t < f->n_trees; t++) {
        int b = f->root[t], e = t + 1 < f->n_trees ? f->root[t + 1] : f->n_nodes;
        if (b < 0 || e <= b || e > f->n_nodes || (t == 0 && b != 0))
            return dlp_fail(err, DLP_ERR_FORMAT, "forest: tree %d spans [%d, %d)", t, b, e);
        dlp_status st = check_tree(f, b, e, err);
        if (st) return st;
    }
    if (!isfinite(f->base))
        return dlp_fail(err, DLP_ERR_FORMAT, "forest: base score not finite");
    return DLP_OK;
}

float dlp_forest_eval(const dlp_forest *f, const float *x) {
    float s = f->base;
    for (int t = 0; t < f->n_trees; t++) {
        int i = f->root[t];
        while (f->feat[i] >= 0) {
            float v = x[f->feat[i]];
            i = isnan(v) ? (f->dleft[i] ? f->left[i] : f->right[i])
                         : v < f->value[i] ? f->left[i] : f->right[i];
        }
        s += f->value[i];
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
            int li = cJSON_GetArrayItem(l, i)->valueint;
            f->left[at + i] = li < 0 ? -1 : at + li;
            int ri = cJSON_GetArrayItem(r, i)->valueint;
            f->right[at + i] = ri < 0 ? -1 : at + ri;
            f->feat[at + i] = li < 0 ? -1 : cJSON_GetArrayItem(si, i)->valueint;
            f->value[at + i] = (float)cJSON_GetArrayItem(sc, i)->valuedouble;
            f->dleft[at + i] = cJSON_GetArrayItem(dl, i)->valueint != 0;
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
        float *o = nd + 5 * (size_t)i;
        o[0] = (float)f->feat[i];
        o[1] = f->value[i];
        o[2] = (float)f->left[i];
        o[3] = (float)f->right[i];
        o[4] = f->dleft[i];
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
    float *v = malloc((size_t)nd->count * sizeof *v);
    dlp_forest *f = forest_alloc(nt, nn);
    if (!v || !f) {
        free(v); dlp_forest_free(f);
        return dlp_fail(err, DLP_ERR_NOMEM, "forest: out of memory");
    }
    dlp_status st = dlp_nn_file_read_f32(in, name, v, nd->count, err);
    snprintf(name, sizeof name, "%s/base", prefix);
    if (!st) st = dlp_nn_file_read_f32(in, name, &f->base, 1, err);
    const int64_t *ti = tr->data;
    f->n_features = ti[0] > 0 && ti[0] < 100000 ? (int)ti[0] : 0;
    f->logistic = ti[1] == 1;
    if (!st && ti[1] != 0 && ti[1] != 1)
        st = dlp_fail(err, DLP_ERR_FORMAT, "forest '%s': objective %lld", prefix,
                      (long long)ti[1]);
    for (int t = 0; !st && t < nt; t++)
        f->root[t] = ti[t + 2] >= 0 && ti[t + 2] < nn ? (int32_t)ti[t + 2] : -1;
    for (int i = 0; !st && i < nn; i++) {
        const float *o = v + 5 * (size_t)i;
        /* integers as float32: exact below 2^24; anything else fails the
         * range checks */
        f->feat[i] = o[0] >= -1 && o[0] < 1e6f ? (int32_t)o[0] : INT32_MAX;
        f->value[i] = o[1];
        f->left[i] = o[2] >= -1 && o[2] < (float)FOREST_MAX_NODES ? (int32_t)o[2] : -1;
        f->right[i] = o[3] >= -1 && o[3] < (float)FOREST_MAX_NODES ? (int32_t)o[3] : -1;
        f->dleft[i] = o[4] != 0;
    }
    free(v);
    if (!st) st = check_forest(f, err);
    if (st) {
        dlp_forest_free(f);
        return st;
    }
    *out = f;
    return DLP_OK;
}
