/*
 * tree_model.c — one trained booster as a model file stores it: our
 * forest at "forest/<name>" (tree_forest.c; what training writes since
 * the seventy-ninth session, walked without XGBoost), or else the
 * booster blob `name` that XGBoost parses (files written before, until
 * `dlperf tree convert --forests` rewrites them). The kern predictor's
 * node and graph models load and predict through it; the xgb predictor
 * keeps its own per-runtime lazy parsing (tree_pred.c) and shares the
 * forest half, dlp_forest_load_for (tree_forest.c).
 */
#include "tree/tree.h"

#include <stdio.h>
#include <string.h>

dlp_status dlp_tree_model_load(const dlp_nn_file *f, const char *name,
                               int nfeat, dlp_tree_model *m, dlp_error *err) {
    memset(m, 0, sizeof *m);
    char prefix[160];
    if (strlen(name) + sizeof "forest/" > sizeof prefix)
        return dlp_fail(err, DLP_ERR_ARG, "booster name '%.40s...' too long",
                        name);
    dlp_tree_forest_prefix(name, prefix, sizeof prefix);
    dlp_status st = dlp_forest_load_for(f, prefix, nfeat, &m->forest, err);
    if (st || m->forest) return st;
    st = dlp_tree_load_blob(f, name, nfeat, &m->tree, err);
    if (st) dlp_tree_model_free(m);
    return st;
}

dlp_status dlp_tree_model_predict(dlp_tree_model *m, const float *x,
                                  size_t n, int d, float *out,
                                  dlp_error *err) {
    if (!m->forest) {
        if (!m->tree)
            return dlp_fail(err, DLP_ERR_ARG, "tree model: nothing loaded");
        return dlp_tree_predict(m->tree, x, n, d, out, err);
    }
    if (d != m->forest->n_features)
        return dlp_fail(err, DLP_ERR_ARG, "forest '%s' takes %d features, "
                        "got %d", m->forest->name, m->forest->n_features, d);
    dlp_status st = dlp_forest_ready(m->forest, err);
    if (st) return st;
    /* the rows by pointer, a stack's worth at a time: each chunk walks
     * every tree once (dlp_forest_eval_many) */
    enum { CHUNK = 64 };
    const float *rows[CHUNK];
    for (size_t k = 0; k < n; k += CHUNK) {
        int c = n - k < CHUNK ? (int)(n - k) : CHUNK;
        for (int r = 0; r < c; r++) rows[r] = x + (k + (size_t)r) * (size_t)d;
        dlp_forest_eval_many(m->forest, rows, c, out + k);
    }
    return DLP_OK;
}

void dlp_tree_model_free(dlp_tree_model *m) {
    if (!m) return;
    dlp_tree_free(m->tree);
    dlp_forest_free(m->forest);
    m->tree = NULL;
    m->forest = NULL;
}
