/* eval_shares.c — where the held-out error comes from, per model: each
 * model's share of the sum of absolute relative errors of one target, its
 * own MAPE and the median ratio predicted / measured (its bias). The
 * per-family tables average over a family's models; this says which single
 * models dominate the overall MAPE (the sixth session found one model, T5,
 * carrying 10% of the CUDA-graph latency error). */
#include "eval.h"

#include <math.h>
#include <stdlib.h>

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int cmp_share(const void *a, const void *b) {
    const dlp_model_share *x = a, *y = b;
    if (x->share != y->share) return x->share < y->share ? 1 : -1;
    return (x->model > y->model) - (x->model < y->model);
}

dlp_status dlp_eval_model_shares(const dlp_examples *E, const dlp_eval_result *r,
                                 dlp_target t, int runtime,
                                 dlp_model_share **out, int *n_out,
                                 dlp_error *err) {
    *out = NULL;
    *n_out = 0;
    int nm = E->n_models;
    dlp_model_share *s = calloc((size_t)(nm ? nm : 1), sizeof *s);
    int *cnt = calloc((size_t)(nm ? nm : 1), sizeof *cnt);
    int *start = calloc((size_t)nm + 1, sizeof *start);
    double *ratio = malloc((size_t)(r->n ? r->n : 1) * sizeof *ratio);
    int *model_of = malloc((size_t)(r->n ? r->n : 1) * sizeof *model_of);
    if (!s || !cnt || !start || !ratio || !model_of) {
        free(s); free(cnt); free(start); free(ratio); free(model_of);
        return dlp_fail(err, DLP_ERR_NOMEM, "out of memory for %d model shares", nm);
    }
    double total = 0;
    for (int i = 0; i < r->n; i++) {
        const dlp_example *x = &E->ex[r->ex[i]];
        double y = x->y[t], p = r->pred[(size_t)i * DLP_T_COUNT + t];
        model_of[i] = -1;
        if (!(isfinite(y) && y > 0 && isfinite(p) && p > 0)) continue;
        if (runtime >= 0 && (int)x->cfg.runtime != runtime) continue;
        double e = fabs(p - y) / y;
        s[x->model].abs_err += e;
        s[x->model].n++;
        s[x->model].family = x->family;
        total += e;
        model_of[i] = x->model;
    }
    /* the ratios of each model side by side, for its median */
    for (int m = 0; m < nm; m++) start[m + 1] = start[m] + s[m].n;
    for (int i = 0; i < r->n; i++) {
        int m = model_of[i];
        if (m < 0) continue;
        double y = E->ex[r->ex[i]].y[t], p = r->pred[(size_t)i * DLP_T_COUNT + t];
        ratio[start[m] + cnt[m]++] = p / y;
    }
    int k = 0;
    for (int m = 0; m < nm; m++) {
        if (!s[m].n) continue;
        double *v = ratio + start[m];
        qsort(v, (size_t)s[m].n, sizeof *v, cmp_double);
        int h = s[m].n / 2;
        dlp_model_share q = s[m];
        q.model = m;
        q.mape = q.abs_err / q.n;
        q.share = total > 0 ? q.abs_err / total : 0;
        q.median_ratio = s[m].n % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
        s[k++] = q;
    }
    qsort(s, (size_t)k, sizeof *s, cmp_share);
    free(cnt); free(start); free(ratio); free(model_of);
    *out = s;
    *n_out = k;
    return DLP_OK;
}
