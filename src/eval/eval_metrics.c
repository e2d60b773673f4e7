/* eval_metrics.c — accuracy metrics of predictions against labels: MAPE,
 * RMSPE, RMSE, Kendall's tau-b and the share within 10% (eval.h). */
#include "eval.h"

#include <math.h>
#include <stdlib.h>

/* tau-b = (C - D) / sqrt((n0 - n1)(n0 - n2)), n0 = n(n-1)/2, n1/n2 the
 * pairs tied in a/b. O(n^2) pairs, sampled down above 4000 points by
 * taking every k-th point (deterministic). */
double dlp_kendall_tau(const double *a, const double *b, int n) {
    int step = 1;
    while (n / step > 4000) step++;
    double C = 0, D = 0, ta = 0, tb = 0, n0 = 0;
    for (int i = 0; i < n; i += step)
        for (int j = i + step; j < n; j += step) {
            double da = a[i] - a[j], db = b[i] - b[j];
            n0++;
            if (da == 0) ta++;
            if (db == 0) tb++;
            if (da == 0 || db == 0) continue;
            if ((da > 0) == (db > 0)) C++;
            else D++;
        }
    double den = sqrt((n0 - ta) * (n0 - tb));
    return den > 0 ? (C - D) / den : NAN;
}

void dlp_metrics_compute(const double *y, const double *p, int n,
                         dlp_metrics *m) {
    double *a = malloc((size_t)(n ? n : 1) * sizeof *a);
    double *b = malloc((size_t)(n ? n : 1) * sizeof *b);
    double ape = 0, sq = 0, se = 0, w10 = 0;
    int k = 0;
    for (int i = 0; i < n; i++) {
        if (!(y[i] > 0) || !isfinite(y[i]) || !isfinite(p[i])) continue;
        double r = (p[i] - y[i]) / y[i];
        ape += fabs(r);
        sq += r * r;
        se += (p[i] - y[i]) * (p[i] - y[i]);
        w10 += fabs(r) <= 0.10 + 1e-12;
        if (a && b) { a[k] = y[i]; b[k] = p[i]; }
        k++;
    }
    m->n = k;
    m->mape = k ? ape / k : NAN;
    m->rmspe = k ? sqrt(sq / k) : NAN;
    m->rmse = k ? sqrt(se / k) : NAN;
    m->acc10 = k ? w10 / k : NAN;
    m->tau = a && b && k > 1 ? dlp_kendall_tau(a, b, k) : NAN;
    free(a);
    free(b);
}
