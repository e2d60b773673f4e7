/*
 * tree_convert.c — re-encodes the XGBoost boosters inside a model file
 * from one storage format to the other: model files written before
 * boosters were stored as UBJSON hold JSON, which loads ~13x slower
 * (kern-inference.dlpm: 190 ms of JSON parsing vs 16 ms). `dlperf tree
 * convert` runs it; training writes UBJSON directly.
 *
 * Boosters are blobs (src/pred/pred.c: "blob/<name>" + "bloblen/<name>"),
 * at the top of the file or inside a blend's component ("blend/1/blob/
 * kern/node": the scope "blend/1/"), whose bytes dlp_tree_format_of
 * recognises; other blobs are left alone. Each is loaded by XGBoost and
 * saved again, so the trees and their float32 values are unchanged.
 * With --forests (dlp_tree_file_forests) the xgb predictor's boosters
 * (and, since the eightieth session, the kern predictor's) are stored as
 * our forests instead (tree_forest.c), what training writes since.
 */
#include "tree/tree.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Offset of the "blob/" that starts a blob entry's own name (at 0 or after
 * a '/'), or -1. */
static int blob_at(const char *name) {
    for (const char *p = name; (p = strstr(p, "blob/")); p++)
        if (p == name || p[-1] == '/') return (int)(p - name);
    return -1;
}

/* The entries of f under scope, names without it (shallow: they point into
 * f, which must not change while the view is used; free view->e only). */
static dlp_status scope_view(const dlp_nn_file *f, const char *scope,
                             dlp_nn_file *view, dlp_error *err) {
    size_t sl = strlen(scope);
    memset(view, 0, sizeof *view);
    view->e = malloc((size_t)(f->n > 0 ? f->n : 1) * sizeof *view->e);
    if (!view->e) return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    for (int i = 0; i < f->n; i++)
        if (!strncmp(f->e[i].name, scope, sl)) {
            view->e[view->n] = f->e[i];
            view->e[view->n].name = f->e[i].name + sl;
            view->n++;
        }
    view->cap = view->n;
    return DLP_OK;
}

/* Re-encodes the blob `name` of scope when it is a booster in the other
 * format; *found / *changed set accordingly. */
static dlp_status convert_one(dlp_nn_file *f, const char *scope,
                              const char *name, dlp_tree_format to,
                              bool *found, bool *changed, dlp_error *err) {
    *found = *changed = false;
    dlp_nn_file view, blob = {0};
    dlp_status st = scope_view(f, scope, &view, err);
    if (st) return st;
    const void *bytes;
    size_t n;
    dlp_tree *t = NULL;
    void *buf = NULL;
    size_t len = 0;
    st = dlp_pred_blob_get(&view, name, &bytes, &n, err);
    int fmt = st ? -1 : dlp_tree_format_of(bytes, n);
    if (fmt >= 0) {
        *found = true;
        if (fmt != (int)to) {
            st = dlp_tree_load(bytes, n, &t, err);
            if (!st) st = dlp_tree_save_as(t, to, &buf, &len, err);
            /* the new entries in a file of their own, then moved in */
            if (!st) st = dlp_pred_blob_add(&blob, name, buf, len, err);
            *changed = !st;
        }
    }
    free(view.e);   /* before f changes */
    for (int i = 0; i < blob.n && !st; i++) {
        char full[512];
        snprintf(full, sizeof full, "%s%s", scope, blob.e[i].name);
        dlp_nn_file_remove(f, full, blob.e[i].kind);
        st = dlp_nn_file_add_copy(f, full, &blob.e[i], err);
    }
    dlp_nn_file_free(&blob);
    free(buf);
    dlp_tree_free(t);
    return st;
}

/* The names of f's blob entries (copies, in *out, *n of them; free each
 * and the array) whose own name starts with `own` ("" for every blob),
 * taken first since converting moves entries. */
static dlp_status blob_names(const dlp_nn_file *f, const char *own,
                             char ***out, int *n, dlp_error *err) {
    *n = 0;
    char **names = malloc((size_t)(f->n > 0 ? f->n : 1) * sizeof *names);
    if (!names) return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    dlp_status st = DLP_OK;
    for (int i = 0; i < f->n && !st; i++) {
        int at = f->e[i].kind == DLP_NN_I64 ? blob_at(f->e[i].name) : -1;
        if (at < 0 || strncmp(f->e[i].name + at + 5, own, strlen(own)) ||
            strlen(f->e[i].name) >= 400)
            continue;
        if (!(names[*n] = strdup(f->e[i].name)))
            st = dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
        else
            (*n)++;
    }
    *out = names;
    return st;
}

static void free_names(char **names, int n) {
    for (int i = 0; i < n; i++) free(names[i]);
    free(names);
}

/* st with the booster's entry name put before err's message */
static dlp_status booster_failed(dlp_status st, const char *name,
                                 dlp_error *err) {
    char msg[sizeof err->msg];
    snprintf(msg, sizeof msg, "%s", err ? err->msg : "");
    return dlp_fail(err, st, "booster '%s': %s", name, msg);
}

dlp_status dlp_tree_file_convert(dlp_nn_file *f, dlp_tree_format to,
                                 int *n_boosters, int *n_changed,
                                 dlp_error *err) {
    if (n_boosters) *n_boosters = 0;
    if (n_changed) *n_changed = 0;
    int nb = 0;
    char **names = NULL;
    dlp_status st = blob_names(f, "", &names, &nb, err);
    for (int i = 0; i < nb && !st; i++) {
        int at = blob_at(names[i]);
        char scope[400];
        snprintf(scope, sizeof scope, "%.*s", at, names[i]);
        bool found, changed;
        st = convert_one(f, scope, names[i] + at + 5, to, &found, &changed,
                         err);
        if (st) st = booster_failed(st, names[i], err);
        if (found && n_boosters) (*n_boosters)++;
        if (changed && n_changed) (*n_changed)++;
    }
    free_names(names, nb);
    return st;
}

/* ---- boosters to forests ---- */

/* The tree predictor's booster `name` of scope (a blob) as our forest at
 * "<scope>forest/<name>", the blob removed. */
static dlp_status forest_one(dlp_nn_file *f, const char *scope,
                             const char *name, dlp_error *err) {
    dlp_nn_file view;
    dlp_status st = scope_view(f, scope, &view, err);
    if (st) return st;
    const void *bytes;
    size_t n;
    dlp_tree *t = NULL;
    st = dlp_pred_blob_get(&view, name, &bytes, &n, err);
    if (!st) st = dlp_tree_load(bytes, n, &t, err);
    free(view.e);   /* before f changes */
    char fp[420], full[840];
    dlp_tree_forest_prefix(name, fp, sizeof fp);
    snprintf(full, sizeof full, "%.400s%.420s", scope, fp);
    if (!st) st = dlp_forest_save_tree(t, dlp_tree_nfeatures(t), f, full, err);
    if (!st) dlp_pred_blob_remove(f, scope, name);
    dlp_tree_free(t);
    return st;
}

dlp_status dlp_tree_file_forests(dlp_nn_file *f, int *n_converted,
                                 dlp_error *err) {
    if (n_converted) *n_converted = 0;
    /* the xgb predictor's boosters and the kern predictor's node and
     * graph models (both load either form: tree_pred.c, dlp_tree_model) */
    static const char *const owners[] = {"xgb/", "kern/"};
    dlp_status st = DLP_OK;
    for (size_t o = 0; o < sizeof owners / sizeof *owners && !st; o++) {
        int nb = 0;
        char **names = NULL;
        st = blob_names(f, owners[o], &names, &nb, err);
        for (int i = 0; i < nb && !st; i++) {
            int at = blob_at(names[i]);
            char scope[400];
            snprintf(scope, sizeof scope, "%.*s", at, names[i]);
            st = forest_one(f, scope, names[i] + at + 5, err);
            if (st) st = booster_failed(st, names[i], err);
            else if (n_converted) (*n_converted)++;
        }
        free_names(names, nb);
    }
    return st;
}
