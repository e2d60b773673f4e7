/* nn_loss.c — regression and classification losses with their gradients:
 * MSE, RMSE, Huber, MAPE-style relative error, BCE on logits,
 * cross-entropy and GraphMAE's scaled cosine error. Each returns the mean
 * loss (accumulated in double) and writes d(loss)/d(pred). */
#include "nn.h"

#include <math.h>

double dlp_nn_mse_loss(nn_real *dpred, const nn_real *pred, const nn_real *y,
                       int n) {
    if (n <= 0) return 0;
    double s = 0;
    for (int k = 0; k < n; k++) {
        double d = (double)pred[k] - y[k];
        s += d * d;
        if (dpred) dpred[k] = (nn_real)(2 * d / n);
    }
    return s / n;
}

double dlp_nn_rmse_loss(nn_real *dpred, const nn_real *pred, const nn_real *y,
                        int n) {
    double mse = dlp_nn_mse_loss(NULL, pred, y, n), r = sqrt(mse);
    if (dpred)
        for (int k = 0; k < n; k++)
            dpred[k] = r > 0 ? (nn_real)(((double)pred[k] - y[k]) / (n * r)) : 0;
    return r;
}

double dlp_nn_huber_loss(nn_real *dpred, const nn_real *pred,
                         const nn_real *y, int n, double delta) {
    if (n <= 0) return 0;
    double s = 0;
    for (int k = 0; k < n; k++) {
        double d = (double)pred[k] - y[k], a = fabs(d);
        s += a <= delta ? 0.5 * d * d : delta * (a - 0.5 * delta);
        if (dpred)
            dpred[k] = (nn_real)((a <= delta ? d : (d > 0 ? delta : -delta)) / n);
    }
    return s / n;
}

double dlp_nn_mape_loss(nn_real *dpred, const nn_real *pred, const nn_real *y,
                        int n, double eps) {
    if (n <= 0) return 0;
    double s = 0;
    for (int k = 0; k < n; k++) {
        double d = (double)pred[k] - y[k], den = fmax(fabs((double)y[k]), eps);
        s += fabs(d) / den;
        if (dpred) dpred[k] = (nn_real)((d > 0 ? 1 : d < 0 ? -1 : 0) / (den * n));
    }
    return s / n;
}

/* l = max(z,0) - z y + log(1 + exp(-|z|)) */
double dlp_nn_bce_logits_loss(nn_real *dlogit, const nn_real *logit,
                              const nn_real *y, int n) {
    if (n <= 0) return 0;
    double s = 0;
    for (int k = 0; k < n; k++) {
        double z = logit[k];
        s += fmax(z, 0) - z * y[k] + log1p(exp(-fabs(z)));
        if (dlogit) dlogit[k] = (nn_real)((1.0 / (1.0 + exp(-z)) - y[k]) / n);
    }
    return s / n;
}

/* logit[R,C]; returns NAN (gradient 0) if a label is outside [0, C) */
double dlp_nn_cross_entropy_loss(nn_real *dlogit, const nn_real *logit,
                                 const int32_t *label, int R, int C) {
    if (R <= 0) return 0;
    for (int r = 0; r < R; r++)
        if (label[r] < 0 || label[r] >= C) {
            if (dlogit)
                for (size_t k = 0; k < (size_t)R * C; k++) dlogit[k] = 0;
            return NAN;
        }
    double s = 0;
    for (int r = 0; r < R; r++) {
        const nn_real *z = logit + (size_t)r * C;
        double m = z[0], se = 0;
        for (int c = 1; c < C; c++) if (z[c] > m) m = z[c];
        for (int c = 0; c < C; c++) se += exp(z[c] - m);
        double lse = m + log(se);
        s += lse - z[label[r]];
        if (dlogit)
            for (int c = 0; c < C; c++)
                dlogit[(size_t)r * C + c] =
                    (nn_real)((exp(z[c] - lse) - (c == label[r])) / R);
    }
    return s / R;
}

/* x,y[R,C]: mean_r (1 - cos(x_r, y_r))^gamma, rows normalised with
 * max(|.|, 1e-12) like F.normalize */
double dlp_nn_sce_loss(nn_real *dx, const nn_real *x, const nn_real *y,
                       int R, int C, double gamma) {
    if (R <= 0) return 0;
    double s = 0;
    for (int r = 0; r < R; r++) {
        const nn_real *a = x + (size_t)r * C, *b = y + (size_t)r * C;
        double na = 0, nb = 0, ab = 0;
        for (int c = 0; c < C; c++) {
            na += (double)a[c] * a[c]; nb += (double)b[c] * b[c];
            ab += (double)a[c] * b[c];
        }
        na = fmax(sqrt(na), 1e-12); nb = fmax(sqrt(nb), 1e-12);
        double cs = ab / (na * nb), om = 1 - cs;
        s += pow(om, gamma);
        if (!dx) continue;
        double dc = om > 0 ? -gamma * pow(om, gamma - 1) / R : (gamma == 1 ? -1.0 / R : 0);
        for (int c = 0; c < C; c++)
            dx[(size_t)r * C + c] =
                (nn_real)(dc * (b[c] / nb - cs * a[c] / na) / na);
    }
    return s / R;
}
