/* pred_set.c — a predictor set: every *.dlpm model file of a directory,
 * and per target the one with the lowest validation error recorded in its
 * file among those that cover the request (mode, runtime, precision). */
#include "pred.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DLP_PRED_SET_MAX 256

struct dlp_pred_set {
    dlp_predictor **p;
    int n;
};

dlp_status dlp_pred_list_files(const char *dir, char **names, int max,
                               int *n_out, dlp_error *err) {
    *n_out = 0;
    char **v = NULL;
    int n = 0;
    dlp_dir_filter f = {DLP_PRED_FILE_EXT, NULL, false};
    dlp_error le;
    dlp_status st = dlp_dir_list(dir, &f, &v, &n, &le);
    if (st == DLP_ERR_NOMEM) return dlp_fail(err, st, "%s", le.msg);
    if (st) return dlp_fail(err, DLP_ERR_IO, "cannot open model directory %s", dir);
    if (n > max)
        st = dlp_fail(err, DLP_ERR_LIMIT, "more than %d model files in %s", max, dir);
    else if (n == 0)
        st = dlp_fail(err, DLP_ERR_NOT_FOUND, "no *%s model files in %s",
                      DLP_PRED_FILE_EXT, dir);
    if (st) {
        dlp_dir_list_free(v, n);
        return st;
    }
    memcpy(names, v, (size_t)n * sizeof *v);
    free(v);
    *n_out = n;
    return DLP_OK;
}

dlp_status dlp_pred_set_load(const char *dir,
                             const dlp_pred_vtable *const *extra,
                             dlp_pred_set **out, dlp_error *err) {
    *out = NULL;
    char *names[DLP_PRED_SET_MAX];
    int n = 0;
    dlp_status st = dlp_pred_list_files(dir, names, DLP_PRED_SET_MAX, &n, err);
    if (st) return st;
    dlp_pred_set *s = calloc(1, sizeof *s);
    if (s) s->p = calloc((size_t)n, sizeof *s->p);
    if (!s || !s->p) st = dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    for (int i = 0; !st && i < n; i++) {
        char path[4096];
        if (snprintf(path, sizeof path, "%s/%s", dir, names[i]) >=
            (int)sizeof path) {
            st = dlp_fail(err, DLP_ERR_ARG, "model path too long");
            break;
        }
        st = dlp_predictor_load(path, extra, &s->p[s->n], err);
        if (!st) s->n++;
    }
    for (int i = 0; i < n; i++) free(names[i]);
    if (st) {
        dlp_pred_set_free(s);
        return st;
    }
    *out = s;
    return DLP_OK;
}

int dlp_pred_set_count(const dlp_pred_set *s) { return s ? s->n : 0; }

const dlp_predictor *dlp_pred_set_at(const dlp_pred_set *s, int i) {
    return s && i >= 0 && i < s->n ? s->p[i] : NULL;
}

const dlp_predictor *dlp_pred_set_best(const dlp_pred_set *s, dlp_target t,
                                       const dlp_pred_config *c) {
    const dlp_predictor *best = NULL;
    double be = INFINITY;
    for (int i = 0; s && i < s->n; i++) {
        const dlp_predictor *p = s->p[i];
        if (!dlp_pred_meta_covers(&p->meta, t, c)) continue;
        double e = p->meta.val_error[t];
        if (!isfinite(e)) e = 1e30;   /* unknown error: last resort */
        if (!best || e < be) { best = p; be = e; }
    }
    return best;
}

dlp_status dlp_pred_set_predict(const dlp_pred_set *s,
                                const dlp_pred_input *in,
                                dlp_pred_result *out, dlp_error *err) {
    dlp_pred_result_init(out);
    const dlp_predictor *used[DLP_T_COUNT];
    int n_used = 0, n_done = 0;
    for (int t = 0; t < DLP_T_COUNT; t++) {
        const dlp_predictor *p = dlp_pred_set_best(s, (dlp_target)t, in->cfg);
        if (!p) continue;
        int k = 0;
        while (k < n_used && used[k] != p) k++;
        if (k == n_used) {
            /* run p once; keep only the targets it is best for */
            dlp_pred_result r;
            dlp_pred_result_init(&r);
            dlp_status st = dlp_predictor_predict(p, in, &r, err);
            if (st) return st;
            used[n_used++] = p;
            bool take[DLP_T_COUNT];
            for (int u = 0; u < DLP_T_COUNT; u++)
                take[u] = u >= t &&
                          dlp_pred_set_best(s, (dlp_target)u, in->cfg) == p;
            n_done += dlp_pred_result_take(out, &r, take);
        }
    }
    if (n_done == 0) return dlp_pred_none_covers(in, err);
    return DLP_OK;
}

void dlp_pred_set_free(dlp_pred_set *s) {
    if (!s) return;
    for (int i = 0; i < s->n; i++) dlp_predictor_free(s->p[i]);
    free(s->p);
    free(s);
}
