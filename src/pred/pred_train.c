/* pred_train.c — drives a kind's trainer: trains on the training indices,
 * loads the result as a predictor, measures it on the validation indices
 * (MAPE per target and the 5%/95% quantiles of log(actual/pred), which
 * become the prediction interval), and assembles the model file. Also the
 * small numeric helpers every kind shares (ridge regression, column
 * statistics). */
#include "pred_train.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const dlp_pred_vtable dlp_pred_linreg_vt, dlp_pred_roofline_vt,
    dlp_pred_dippm_vt, dlp_pred_trappm_vt, dlp_pred_kern_vt;
dlp_status dlp_pred_linreg_train(const dlp_examples *, const int32_t *, int,
                                 const int32_t *, int, const dlp_train_opts *,
                                 dlp_pred_meta *, dlp_nn_file *, dlp_error *);
dlp_status dlp_pred_roofline_train(const dlp_examples *, const int32_t *, int,
                                   const int32_t *, int,
                                   const dlp_train_opts *, dlp_pred_meta *,
                                   dlp_nn_file *, dlp_error *);
dlp_status dlp_pred_dippm_train(const dlp_examples *, const int32_t *, int,
                                const int32_t *, int, const dlp_train_opts *,
                                dlp_pred_meta *, dlp_nn_file *, dlp_error *);
dlp_status dlp_pred_trappm_train(const dlp_examples *, const int32_t *, int,
                                 const int32_t *, int, const dlp_train_opts *,
                                 dlp_pred_meta *, dlp_nn_file *, dlp_error *);
dlp_status dlp_pred_kern_train(const dlp_examples *, const int32_t *, int,
                               const int32_t *, int, const dlp_train_opts *,
                               dlp_pred_meta *, dlp_nn_file *, dlp_error *);
extern const dlp_pred_vtable dlp_pred_blend_vt;
dlp_status dlp_pred_blend_train(const dlp_examples *, const int32_t *, int,
                                const int32_t *, int, const dlp_train_opts *,
                                dlp_pred_meta *, dlp_nn_file *, dlp_nn_file *,
                                dlp_error *);
static dlp_status blend_train(const dlp_examples *E, const int32_t *tr,
                              int ntr, const int32_t *va, int nva,
                              const dlp_train_opts *o, dlp_pred_meta *meta,
                              dlp_nn_file *out, dlp_error *err) {
    return dlp_pred_blend_train(E, tr, ntr, va, nva, o, meta, out, NULL, err);
}
/* the XGBoost kind lives in src/tree (it builds on this module) */
extern const dlp_pred_vtable dlp_tree_pred_vtable;
dlp_status dlp_tree_pred_train(const dlp_examples *, const int32_t *, int,
                               const int32_t *, int, const dlp_train_opts *,
                               dlp_pred_meta *, dlp_nn_file *, dlp_error *);

static const dlp_pred_kind KINDS[] = {
    {&dlp_pred_linreg_vt, dlp_pred_linreg_train, true, false},
    {&dlp_pred_roofline_vt, dlp_pred_roofline_train, false, false},
    {&dlp_pred_dippm_vt, dlp_pred_dippm_train, true, false},
    {&dlp_pred_trappm_vt, dlp_pred_trappm_train, true, false},
    {&dlp_tree_pred_vtable, dlp_tree_pred_train, true, true},
    {&dlp_pred_kern_vt, dlp_pred_kern_train, true, false},
    {NULL, NULL, false, false},
};

const dlp_pred_kind *dlp_pred_kinds(void) { return KINDS; }

/* blends ("a+b", pred_blend.c) are not in KINDS: any list of two or more
 * known kinds is one */
static const dlp_pred_kind BLEND = {&dlp_pred_blend_vt, blend_train, true,
                                    false};

const dlp_pred_kind *dlp_pred_kind_find(const char *kind) {
    if (strchr(kind, '+')) {
        char buf[DLP_PRED_KIND_MAX];
        const char *parts[DLP_PRED_BLEND_MAX];
        int n = 0;
        return dlp_pred_blend_parts(kind, buf, sizeof buf, parts, &n, NULL) ||
               n < 2 ? NULL : &BLEND;
    }
    for (const dlp_pred_kind *k = KINDS; k->vt; k++)
        if (!strcmp(k->vt->kind, kind)) return k;
    return NULL;
}

bool dlp_pred_kind_refits(const char *kind) {
    const dlp_pred_kind *k = dlp_pred_kind_find(kind);
    if (k != &BLEND) return k && k->refits;
    char buf[DLP_PRED_KIND_MAX];
    const char *parts[DLP_PRED_BLEND_MAX];
    int n = 0;
    if (dlp_pred_blend_parts(kind, buf, sizeof buf, parts, &n, NULL)) return false;
    for (int c = 0; c < n; c++)
        if (dlp_pred_kind_refits(parts[c])) return true;
    return false;
}

const dlp_pred_vtable *const *dlp_pred_builtin_kinds(void) {
    static const dlp_pred_vtable *const vts[] = {
        &dlp_pred_linreg_vt, &dlp_pred_roofline_vt, &dlp_pred_dippm_vt,
        &dlp_pred_trappm_vt, &dlp_pred_kern_vt, NULL};
    return vts;
}

void dlp_train_opts_init(dlp_train_opts *o) {
    memset(o, 0, sizeof *o);
    o->seed = 1;
    o->threads = 1;
}

int dlp_mode_targets(dlp_pred_mode m, dlp_target *t) {
    int n = 0;
    for (int i = 0; i < DLP_T_COUNT; i++)
        if (dlp_target_mode((dlp_target)i) == m) t[n++] = (dlp_target)i;
    return n;
}

dlp_status dlp_pred_example(const dlp_predictor *p, const dlp_examples *E,
                            int i, dlp_pred_result *r, dlp_error *err) {
    dlp_pred_input in = {NULL, &E->ex[i].cfg, &E->fg[E->ex[i].fg], NULL};
    dlp_pred_result_init(r);
    return dlp_predictor_predict(p, &in, r, err);
}

/* p's predictions of the examples vi into pred[nv][DLP_T_COUNT] (NAN
 * where not valid). */
static dlp_status predict_examples(const dlp_predictor *p, const dlp_examples *E,
                                   const int32_t *vi, int nv, double *pred,
                                   dlp_error *err) {
    dlp_status st = DLP_OK;
    for (int i = 0; i < nv && !st; i++) {
        dlp_pred_result r;
        st = dlp_pred_example(p, E, vi[i], &r, err);
        for (int t = 0; t < DLP_T_COUNT && !st; t++)
            pred[i * DLP_T_COUNT + t] = r.v[t].valid ? r.v[t].value : NAN;
    }
    return st;
}

/* dlp_pred_val_errors from p's predictions pred[nv][DLP_T_COUNT] of the
 * examples vi; res: room for nv residuals. */
static void errors_of(const dlp_predictor *p, const dlp_examples *E,
                      const int32_t *vi, int nv, const double *pred,
                      double *res, double *mape, double *lo, double *hi) {
    for (int t = 0; t < DLP_T_COUNT; t++) {
        mape[t] = NAN;
        if (lo) lo[t] = NAN;
        if (hi) hi[t] = NAN;
        if (!(p->meta.targets >> t & 1) ||
            dlp_target_mode((dlp_target)t) != E->mode)
            continue;
        int n = 0;
        double ape = 0;
        for (int i = 0; i < nv; i++) {
            double y = E->ex[vi[i]].y[t], f = pred[i * DLP_T_COUNT + t];
            if (!(y > 0) || !(f > 0)) continue;
            ape += fabs(f - y) / y;
            res[n++] = log(y / f);
        }
        if (n) {
            mape[t] = ape / n;
            if (lo) lo[t] = dlp_quantile(res, (size_t)n, 0.05);
            if (hi) hi[t] = dlp_quantile(res, (size_t)n, 0.95);
        }
    }
}

dlp_status dlp_pred_val_errors(const dlp_predictor *p, const dlp_examples *E,
                               const int32_t *vi, int nv, double *mape,
                               double *lo, double *hi, dlp_error *err) {
    double *res = malloc((size_t)(nv > 0 ? nv : 1) * sizeof *res);
    double *pred = malloc((size_t)(nv > 0 ? nv : 1) * DLP_T_COUNT * sizeof *pred);
    dlp_status st = !res || !pred ? dlp_fail(err, DLP_ERR_NOMEM, "out of memory")
                                  : predict_examples(p, E, vi, nv, pred, err);
    if (!st) errors_of(p, E, vi, nv, pred, res, mape, lo, hi);
    free(res); free(pred);
    return st;
}

double dlp_mape_factor(const double *y, const double *f, int n) {
    /* sum_i |c f_i - y_i| / y_i = sum_i (f_i / y_i) |c - y_i / f_i|: the
     * weighted median of the ratios y / f, weights f / y */
    dlp_wpoint *v = malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
    if (!v) return 1;
    size_t m = 0;
    for (int i = 0; i < n; i++) {
        if (!(y[i] > 0) || !(f[i] > 0) || !isfinite(y[i]) || !isfinite(f[i]))
            continue;
        v[m++] = (dlp_wpoint){y[i] / f[i], f[i] / y[i]};
    }
    double c = m ? dlp_weighted_median(v, m) : 1;
    free(v);
    return c;
}

double dlp_mape_factor_shrunk(const double *y, const double *f,
                              const int *group, int n, int min_groups) {
    double c = dlp_mape_factor(y, f, n);
    int *ids = malloc((size_t)(n > 0 ? n : 1) * sizeof *ids);
    double *yy = malloc((size_t)(n > 0 ? n : 1) * sizeof *yy);
    double *ff = malloc((size_t)(n > 0 ? n : 1) * sizeof *ff);
    double *lg = malloc((size_t)(n > 0 ? n : 1) * sizeof *lg);
    int ng = 0;
    for (int i = 0; ids && i < n; i++) {   /* the distinct groups */
        int g = 0;
        while (g < ng && ids[g] != group[i]) g++;
        if (g == ng) ids[ng++] = group[i];
    }
    double out = 1;
    if (ids && yy && ff && lg && ng >= 2 && ng >= min_groups && c > 0) {
        double mean = 0, var = 0, L = log(c);
        for (int g = 0; g < ng; g++) {   /* leave group g out */
            int m = 0;
            for (int i = 0; i < n; i++)
                if (group[i] != ids[g]) { yy[m] = y[i]; ff[m] = f[i]; m++; }
            lg[g] = log(dlp_mape_factor(yy, ff, m));
            mean += lg[g] / ng;
        }
        for (int g = 0; g < ng; g++) var += (lg[g] - mean) * (lg[g] - mean);
        var *= (double)(ng - 1) / ng;
        double lam = L != 0 ? fmax(0, 1 - var / (L * L)) : 0;
        out = exp(lam * L);
    }
    free(ids); free(yy); free(ff); free(lg);
    return out;
}

/* The MAPE calibration of a learned kind (docs/PREDICT.md, "Calibration"):
 * the learned kinds fit log targets, so a prediction estimates the
 * label's median given the features, while the goals are stated in MAPE,
 * whose best constant factor is dlp_mape_factor of the residuals. Fitted
 * per target on the validation examples: models the training part never
 * saw in leave-models-out folds (eval_split.c carves them by model) and in
 * `dlperf train` (cmd_train.c's validation part), so the factor is the
 * one a new model's error calls for. Never for peak memory: a low memory
 * estimate is an out-of-memory failure, not a smaller error. Fewer than
 * DLP_CAL_MIN labels or DLP_CAL_MIN_MODELS models leave a target at 1. */
static dlp_status calibrate(dlp_predictor *p, const dlp_examples *E,
                            const int32_t *vi, int nv, const double *pred,
                            dlp_error *err) {
    double *y = malloc((size_t)(nv > 0 ? nv : 1) * sizeof *y);
    double *f = malloc((size_t)(nv > 0 ? nv : 1) * sizeof *f);
    int *g = malloc((size_t)(nv > 0 ? nv : 1) * sizeof *g);
    dlp_status st = !y || !f || !g ? dlp_fail(err, DLP_ERR_NOMEM, "out of memory")
                                   : DLP_OK;
    for (int t = 0; t < DLP_T_COUNT && !st; t++) {
        if (!(p->meta.targets >> t & 1) || dlp_target_is_memory((dlp_target)t) ||
            dlp_target_mode((dlp_target)t) != E->mode)
            continue;
        int n = 0;
        for (int i = 0; i < nv; i++) {
            y[n] = E->ex[vi[i]].y[t];
            f[n] = pred[i * DLP_T_COUNT + t];
            g[n] = E->ex[vi[i]].model;
            n += y[n] > 0 && f[n] > 0;
        }
        if (n < DLP_CAL_MIN) continue;
        double c = dlp_mape_factor_shrunk(y, f, g, n, DLP_CAL_MIN_MODELS);
        /* at the file's float precision, so a loaded file predicts the same */
        p->meta.scale[t] = (float)fmin(fmax(c, DLP_PRED_SCALE_MIN), DLP_PRED_SCALE_MAX);
    }
    free(y); free(f); free(g);
    return st;
}

/* p reloaded from the second fit, which becomes *payload; p's meta (the
 * first fit's validation figures, calibration and residual quantiles)
 * stays. When first is not NULL it takes the first fit's complete file. */
static dlp_status swap_fit(const dlp_pred_kind *k, dlp_predictor *p,
                           dlp_nn_file *payload, dlp_nn_file *second,
                           dlp_nn_file *first, dlp_error *err) {
    dlp_status st = DLP_OK;
    if (first) {
        st = dlp_pred_meta_write(&p->meta, first, err);
        for (int i = 0; i < payload->n && !st; i++)
            st = dlp_nn_file_add_copy(first, payload->e[i].name,
                                      &payload->e[i], err);
    }
    if (st) {
        dlp_nn_file_free(second);
        return st;
    }
    k->vt->free(p);
    st = k->vt->load(p, second, err);
    dlp_nn_file_free(payload);
    *payload = *second;
    memset(second, 0, sizeof *second);
    return st;
}

/* --refit (dlp_train_opts.refit): kind k trained again on tr and va into
 * *payload, and p reloaded from it; p's meta stays, its targets those
 * both fits have. */
static dlp_status refit_on_all(const dlp_pred_kind *k, const dlp_examples *E,
                               const int32_t *tr, int ntr, const int32_t *va,
                               int nva, const dlp_train_opts *o,
                               dlp_predictor *p, dlp_nn_file *payload,
                               dlp_nn_file *first, dlp_error *err) {
    int32_t *all = malloc((size_t)(ntr + nva) * sizeof *all);
    if (!all) return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    memcpy(all, tr, (size_t)ntr * sizeof *all);
    memcpy(all + ntr, va, (size_t)nva * sizeof *all);
    dlp_pred_meta m2 = p->meta;
    dlp_nn_file second = {0};
    dlp_status st = k->train(E, all, ntr + nva, NULL, 0, o, &m2, &second, err);
    free(all);
    if (st) {
        dlp_nn_file_free(&second);
        return st;
    }
    p->meta.targets &= m2.targets;
    return swap_fit(k, p, payload, &second, first, err);
}

dlp_status dlp_pred_train(const char *kind, const dlp_examples *E,
                          const int32_t *tr, int ntr, const int32_t *va,
                          int nva, const dlp_train_opts *o,
                          dlp_predictor **out, dlp_nn_file *file,
                          dlp_error *err) {
    return dlp_pred_train_first(kind, E, tr, ntr, va, nva, o, out, file,
                                NULL, err);
}

dlp_status dlp_pred_train_first(const char *kind, const dlp_examples *E,
                                const int32_t *tr, int ntr,
                                const int32_t *va, int nva,
                                const dlp_train_opts *o, dlp_predictor **out,
                                dlp_nn_file *file, dlp_nn_file *first,
                                dlp_error *err) {
    *out = NULL;
    if (first) memset(first, 0, sizeof *first);
    const dlp_pred_kind *k = dlp_pred_kind_find(kind);
    if (!k) return dlp_fail(err, DLP_ERR_NOT_FOUND, "unknown predictor kind "
                            "'%s'; known: linreg, roofline, dippm, trappm, xgb, kern "
                            "or a blend of them (dippm+kern)", kind);
    if (ntr < 1) return dlp_fail(err, DLP_ERR_ARG, "no training examples");
    dlp_train_opts def;
    if (!o) { dlp_train_opts_init(&def); o = &def; }
    dlp_pred_meta meta;
    dlp_pred_meta_init(&meta, kind, E->mode);
    snprintf(meta.devices, sizeof meta.devices, "%s", E->devices);
    /* --refit: the second fit, on tr and va, is the model (below) */
    bool refit = o->refit && dlp_pred_kind_refits(kind) && nva > 0 &&
                 !(o->shots > 0 && o->shots < ntr);
    /* ranges for the OOD check: of what the model is trained on */
    dlp_pred_meta_ranges_reset(&meta);
    for (int i = 0; i < ntr + (refit ? nva : 0); i++) {
        const dlp_example *x = &E->ex[i < ntr ? tr[i] : va[i - ntr]];
        dlp_pred_meta_ranges_add(&meta, &x->cfg, E->fg[x->fg].macs);
    }
    dlp_pred_meta_ranges_done(&meta);
    int32_t *sub = NULL;
    if (o->shots > 0 && o->shots < ntr) {   /* few-shot: a random subset */
        sub = malloc((size_t)ntr * sizeof *sub);
        if (!sub) return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
        memcpy(sub, tr, (size_t)ntr * sizeof *sub);
        dlp_nn_rng r;
        dlp_nn_rng_seed(&r, o->seed * 31 + 7);
        dlp_nn_rng_shuffle(&r, sub, ntr);
        tr = sub;
        ntr = o->shots;
    }
    /* a blend refits inside: its parts that refit give a second payload,
     * swapped in once the blend is measured on the first (pred_blend.c) */
    dlp_nn_file payload = {0}, blend_refit = {0};
    dlp_status st = k == &BLEND
        ? dlp_pred_blend_train(E, tr, ntr, va, nva, o, &meta, &payload,
                               refit ? &blend_refit : NULL, err)
        : k->train(E, tr, ntr, va, nva, o, &meta, &payload, err);
    dlp_predictor *p = NULL;
    if (!st && !(p = calloc(1, sizeof *p)))
        st = dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    if (!st) {
        p->vt = k->vt;
        p->meta = meta;
        st = k->vt->load(p, &payload, err);
    }
    if (st) {
        free(p); free(sub);
        dlp_nn_file_free(&payload);
        dlp_nn_file_free(&blend_refit);
        return st;
    }
    /* the calibration factors, then validation error and residual
     * quantiles of the calibrated predictions (on train when no val set):
     * one prediction pass, scaled as dlp_predictor_predict scales */
    const int32_t *vs = nva ? va : tr;
    int nvs = nva ? nva : ntr;
    double *pred = malloc((size_t)(nvs > 0 ? nvs : 1) * DLP_T_COUNT * sizeof *pred);
    double *res = malloc((size_t)(nvs > 0 ? nvs : 1) * sizeof *res);
    st = !pred || !res ? dlp_fail(err, DLP_ERR_NOMEM, "out of memory")
                       : predict_examples(p, E, vs, nvs, pred, err);
    if (!st && nva && k->learned && k != &BLEND && !o->no_calibration) {
        st = calibrate(p, E, va, nva, pred, err);
        for (int i = 0; !st && i < nva * DLP_T_COUNT; i++)
            pred[i] *= p->meta.scale[i % DLP_T_COUNT];
    }
    if (!st)
        errors_of(p, E, vs, nvs, pred, res, p->meta.val_error, p->meta.resid_lo,
                  p->meta.resid_hi);
    free(pred); free(res);
    if (!st && refit)
        st = k == &BLEND
            ? swap_fit(k, p, &payload, &blend_refit, first, err)
            : refit_on_all(k, E, tr, ntr, va, nva, o, p, &payload, first, err);
    dlp_nn_file_free(&blend_refit);
    if (!st) {
        int il = refit
            ? snprintf(p->meta.info, sizeof p->meta.info, "trained on %d "
                       "examples, validated on %d, then %strained on both "
                       "(--refit: the validation figures are the first "
                       "fit's); %d graphs", ntr, nva,
                       k == &BLEND ? "its tree parts " : "", E->n_fg)
            : snprintf(p->meta.info, sizeof p->meta.info,
                       "trained on %d examples, validated on %d%s; %d "
                       "graphs", ntr, nva, nva ? "" : " (training set)",
                       E->n_fg);
        if (E->n_host_normed && il > 0 && (size_t)il < sizeof p->meta.info)
            snprintf(p->meta.info + il, sizeof p->meta.info - (size_t)il,
                     "; " DLP_HOST_NORM_INFO "%.4g us (beta %.4g, gamma "
                     "%.4g; %d examples)", E->host_norm.ref_us,
                     E->host_norm.beta, E->host_norm.gamma, E->n_host_normed);
        if (file) {
            memset(file, 0, sizeof *file);
            st = dlp_pred_meta_write(&p->meta, file, err);
            for (int i = 0; i < payload.n && !st; i++)
                st = dlp_nn_file_add_copy(file, payload.e[i].name, &payload.e[i], err);
            if (st) dlp_nn_file_free(file);
        }
    }
    dlp_nn_file_free(&payload);
    free(sub);
    if (st) { dlp_predictor_free(p); return st; }
    *out = p;
    return DLP_OK;
}

/* ---- numeric helpers ---------------------------------------------------- */
dlp_status dlp_ridge_fit(const double *X, const double *y, int n, int d,
                         double lambda, double *w, dlp_error *err) {
    double *A = calloc((size_t)d * d, sizeof *A);
    double *b = calloc((size_t)d, sizeof *b);
    if (!A || !b) {
        free(A); free(b);
        return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    }
    int used = 0;
    for (int i = 0; i < n; i++) {
        if (!isfinite(y[i])) continue;
        const double *x = X + (size_t)i * d;
        used++;
        for (int r = 0; r < d; r++) {
            b[r] += x[r] * y[i];
            for (int c = 0; c < d; c++) A[r * d + c] += x[r] * x[c];
        }
    }
    for (int r = 1; r < d; r++) A[r * d + r] += lambda;
    A[0] += 1e-9;
    /* Cholesky solve A w = b */
    for (int j = 0; j < d; j++) {
        double s = A[j * d + j];
        for (int k = 0; k < j; k++) s -= A[j * d + k] * A[j * d + k];
        if (s <= 1e-12) s = 1e-12;
        A[j * d + j] = sqrt(s);
        for (int i = j + 1; i < d; i++) {
            double t = A[i * d + j];
            for (int k = 0; k < j; k++) t -= A[i * d + k] * A[j * d + k];
            A[i * d + j] = t / A[j * d + j];
        }
    }
    for (int i = 0; i < d; i++) {
        double t = b[i];
        for (int k = 0; k < i; k++) t -= A[i * d + k] * w[k];
        w[i] = t / A[i * d + i];
    }
    for (int i = d - 1; i >= 0; i--) {
        double t = w[i];
        for (int k = i + 1; k < d; k++) t -= A[k * d + i] * w[k];
        w[i] = t / A[i * d + i];
    }
    free(A); free(b);
    if (!used) {
        for (int i = 0; i < d; i++) w[i] = 0;
        return dlp_fail(err, DLP_ERR_ARG, "ridge fit: no finite targets");
    }
    return DLP_OK;
}

void dlp_colstats(const float *x, size_t n, int d, float *mean, float *std) {
    double *s = calloc((size_t)d * 2, sizeof *s);
    if (!s) {   /* degrade to identity scaling */
        for (int j = 0; j < d; j++) { mean[j] = 0; std[j] = 1; }
        return;
    }
    double *s2 = s + d;
    for (size_t i = 0; i < n; i++)          /* row-major: one pass, cached */
        for (int j = 0; j < d; j++) s[j] += x[i * d + j];
    for (int j = 0; j < d; j++) s[j] = n ? s[j] / n : 0;
    for (size_t i = 0; i < n; i++)
        for (int j = 0; j < d; j++) {
            double z = x[i * d + j] - s[j];
            s2[j] += z * z;
        }
    for (int j = 0; j < d; j++) {
        double sd = n > 1 ? sqrt(s2[j] / (n - 1)) : 1;
        mean[j] = (float)s[j];
        std[j] = (float)(sd > 1e-6 ? sd : 1);
    }
    free(s);
}
