/* eval_run.c — the evaluation driver: for every fold of a split, train the
 * kind on the fold's training part (early stopping on its validation
 * part), predict its test part, keep one record per (fold, test example);
 * metrics over the records, overall or per family.
 *
 * A kind "a+b[+c...]" is a blend: every component is trained on the fold
 * and a target's prediction is the geometric mean of the components'
 * (the mean of log predictions: the learned kinds all fit log targets, so
 * their errors are relative), by the rule of the blend kind that `dlperf
 * train --kind a+b` ships (dlp_pred_blend_combine, src/pred/pred_blend.c:
 * a target only some components predict comes from those; inference
 * energy, where a component lacks it, is blended latency x power). */
#include "eval.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int dlp_eval_kind_parts(const char *kind, char *buf, size_t cap,
                        const char **parts, dlp_error *err) {
    int n = 0;
    if (dlp_pred_blend_parts(kind, buf, cap, parts, &n, err)) return -1;
    return n;
}

/* Room for cap records (at least one) in out's ex, fold, pred and raw;
 * false when out of memory (what was allocated stays for
 * dlp_eval_result_free). */
static bool records_alloc(dlp_eval_result *out, size_t cap) {
    if (!cap) cap = 1;
    out->ex = malloc(cap * sizeof *out->ex);
    out->fold = malloc(cap * sizeof *out->fold);
    out->pred = malloc(cap * DLP_T_COUNT * sizeof *out->pred);
    out->raw = malloc(cap * DLP_T_COUNT * sizeof *out->raw);
    return out->ex && out->fold && out->pred && out->raw;
}

/* p's prediction of example ex appended to out as a record of fold: NAN
 * where not predicted, raw without p's calibration factor. */
static dlp_status record_example(dlp_eval_result *out, const dlp_predictor *p,
                                 const dlp_examples *E, int ex, int fold,
                                 dlp_error *err) {
    dlp_pred_result r;
    dlp_status st = dlp_pred_example(p, E, ex, &r, err);
    if (st) return st;
    out->ex[out->n] = ex;
    out->fold[out->n] = fold;
    for (int t = 0; t < DLP_T_COUNT; t++) {
        double v = r.v[t].valid ? r.v[t].value : NAN;
        out->pred[(size_t)out->n * DLP_T_COUNT + t] = v;
        out->raw[(size_t)out->n * DLP_T_COUNT + t] = v / p->meta.scale[t];
    }
    out->n++;
    return DLP_OK;
}

dlp_status dlp_eval_blend(const dlp_eval_result *const *parts, int n,
                          const char *kind, dlp_eval_result *out,
                          dlp_error *err) {
    memset(out, 0, sizeof *out);
    if (n < 1 || !parts[0])
        return dlp_fail(err, DLP_ERR_ARG, "blend of no results");
    const dlp_eval_result *a = parts[0];
    for (int c = 1; c < n; c++)
        if (parts[c]->n != a->n || parts[c]->split != a->split ||
            memcmp(parts[c]->ex, a->ex, (size_t)a->n * sizeof *a->ex) ||
            memcmp(parts[c]->fold, a->fold, (size_t)a->n * sizeof *a->fold))
            return dlp_fail(err, DLP_ERR_ARG, "blend '%s': the results of "
                            "'%s' and '%s' are not on the same folds", kind,
                            a->kind, parts[c]->kind);
    if (!records_alloc(out, (size_t)a->n)) {
        dlp_eval_result_free(out);
        return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    }
    snprintf(out->kind, sizeof out->kind, "%s", kind);
    out->split = a->split;
    out->n_folds = a->n_folds;
    out->n = a->n;
    memcpy(out->ex, a->ex, (size_t)a->n * sizeof *out->ex);
    memcpy(out->fold, a->fold, (size_t)a->n * sizeof *out->fold);
    /* the rule of the shipped blend kind (src/pred/pred_blend.c), on the
     * calibrated predictions and on the raw ones */
    double pr[DLP_EVAL_MAX_PARTS * DLP_T_COUNT];
    for (int raw = 0; raw < 2; raw++)
        for (size_t i = 0; i < (size_t)a->n; i++) {
            for (int c = 0; c < n; c++) {
                const double *src = raw && parts[c]->raw ? parts[c]->raw : parts[c]->pred;
                memcpy(pr + c * DLP_T_COUNT, src + i * DLP_T_COUNT,
                       sizeof *pr * DLP_T_COUNT);
            }
            dlp_pred_blend_combine(pr, n, (raw ? out->raw : out->pred) + i * DLP_T_COUNT,
                                   NULL);
        }
    for (int c = 0; c < n; c++) out->train_s += parts[c]->train_s;
    return DLP_OK;
}

void dlp_eval_result_free(dlp_eval_result *r) {
    if (!r) return;
    free(r->ex); free(r->fold); free(r->pred); free(r->raw);
    memset(r, 0, sizeof *r);
}

/* group[i] = one id per graph (the hash before '|' of the example's
 * featurized binding "hash|batch|seq|h|w"); 0 ok, -1 out of memory */
static int graph_groups(const dlp_examples *E, int *group) {
    int *gid = malloc((size_t)(E->n_fg ? E->n_fg : 1) * sizeof *gid);
    dlp_strmap ids;
    if (!gid || !dlp_strmap_init(&ids, (size_t)E->n_fg)) {
        free(gid);
        return -1;
    }
    int rc = 0;
    for (int f = 0; f < E->n_fg && !rc; f++) {
        const char *h = E->fg_hash[f];
        size_t len = strcspn(h, "|");
        gid[f] = dlp_strmap_get(&ids, h, len);
        if (gid[f] < 0) {
            gid[f] = (int)ids.count;
            if (!dlp_strmap_put(&ids, h, len, gid[f])) rc = -1;
        }
    }
    if (!rc)
        for (int i = 0; i < E->n; i++) group[i] = gid[E->ex[i].fg];
    dlp_strmap_free(&ids);
    free(gid);
    return rc;
}

dlp_status dlp_eval_run(const dlp_examples *E, const char *kind,
                        dlp_split_kind split, uint64_t seed,
                        const dlp_train_opts *o, dlp_eval_fold_fn on_fold,
                        void *user, dlp_eval_result *out, dlp_error *err) {
    memset(out, 0, sizeof *out);
    snprintf(out->kind, sizeof out->kind, "%s", kind);
    out->split = split;
    char names[DLP_PRED_KIND_MAX * DLP_EVAL_MAX_PARTS];
    const char *parts[DLP_EVAL_MAX_PARTS];
    int nparts = dlp_eval_kind_parts(kind, names, sizeof names, parts, err);
    if (nparts < 0) return err->code;
    if (nparts > 1) {   /* each component on the same folds, then blended */
        dlp_eval_result r[DLP_EVAL_MAX_PARTS];
        const dlp_eval_result *rp[DLP_EVAL_MAX_PARTS];
        dlp_status st = DLP_OK;
        int done = 0;   /* parts evaluated (a failed run frees its own) */
        for (; done < nparts; done++) {
            st = dlp_eval_run(E, parts[done], split, seed, o, on_fold, user,
                              &r[done], err);
            if (st) break;
            rp[done] = &r[done];
        }
        if (!st) st = dlp_eval_blend(rp, nparts, kind, out, err);
        for (int c = 0; c < done; c++) dlp_eval_result_free(&r[c]);
        return st;
    }
    int *group = malloc((size_t)E->n * sizeof *group);
    int *fam = malloc((size_t)E->n * sizeof *fam);
    if (!group || !fam) {
        free(group); free(fam);
        return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    }
    for (int i = 0; i < E->n; i++) { group[i] = E->ex[i].model; fam[i] = E->ex[i].family; }
    if (split == DLP_SPLIT_LGO && graph_groups(E, group)) {
        free(group); free(fam);
        return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    }
    dlp_fold *F = NULL;
    int K = 0;
    dlp_status st = dlp_split_make(split, group, fam, E->n, seed, &F, &K, err);
    free(group); free(fam);
    if (st) return st;
    size_t cap = 0;
    for (int k = 0; k < K; k++) cap += (size_t)F[k].nte;
    if (!records_alloc(out, cap))
        st = dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    out->n_folds = K;
    for (int k = 0; k < K && !st; k++) {
        if (F[k].nte == 0 || F[k].ntr == 0) continue;
        if (on_fold) on_fold(user, k, K, &F[k]);
        double t0 = dlp_now_s();
        dlp_train_opts oo = *o;
        oo.seed = o->seed + (uint64_t)k;
        dlp_predictor *p = NULL;
        st = dlp_pred_train(kind, E, F[k].train, F[k].ntr, F[k].val, F[k].nva,
                            &oo, &p, NULL, err);
        out->train_s += dlp_now_s() - t0;
        for (int i = 0; i < F[k].nte && !st; i++)
            st = record_example(out, p, E, F[k].test[i], k, err);
        dlp_predictor_free(p);
    }
    dlp_folds_free(F, K);
    if (st) dlp_eval_result_free(out);
    return st;
}

dlp_status dlp_eval_score(const dlp_examples *E, const dlp_predictor *p,
                          dlp_eval_result *out, dlp_error *err) {
    memset(out, 0, sizeof *out);
    if (p->meta.mode != E->mode)
        return dlp_fail(err, DLP_ERR_ARG, "the %s file predicts %s, the "
                        "examples are %s", p->meta.kind,
                        dlp_mode_name(p->meta.mode), dlp_mode_name(E->mode));
    snprintf(out->kind, sizeof out->kind, "%s", p->meta.kind);
    out->split = DLP_SPLIT_NONE;
    out->n_folds = 1;
    dlp_status st = records_alloc(out, (size_t)E->n)
                        ? DLP_OK : dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    for (int i = 0; i < E->n && !st; i++)
        st = record_example(out, p, E, i, 0, err);
    if (st) dlp_eval_result_free(out);
    return st;
}

void dlp_eval_metrics(const dlp_examples *E, const dlp_eval_result *r,
                      dlp_target t, int family, dlp_metrics *m) {
    double *y = malloc((size_t)(r->n ? r->n : 1) * sizeof *y);
    double *p = malloc((size_t)(r->n ? r->n : 1) * sizeof *p);
    int k = 0;
    for (int i = 0; y && p && i < r->n; i++) {
        const dlp_example *x = &E->ex[r->ex[i]];
        if (family >= 0 && x->family != family) continue;
        y[k] = x->y[t];
        p[k] = r->pred[(size_t)i * DLP_T_COUNT + t];
        k++;
    }
    dlp_metrics_compute(y, p, k, m);
    free(y); free(p);
}
