/* nn_norm.c — BatchNorm (train and eval, running statistics), LayerNorm and
 * GraphSizeNorm, forward and backward. Statistics accumulate in double. */
#include "nn.h"

#include <math.h>

/* x[N,C] -> out[N,C]; saves mean[C], rstd[C] */
void dlp_nn_batchnorm_forward(nn_real *out, nn_real *mean, nn_real *rstd,
                              const nn_real *x, const nn_real *gamma,
                              const nn_real *beta, nn_real *running_mean,
                              nn_real *running_var, bool train,
                              nn_real momentum, nn_real eps, int N, int C) {
    for (int c = 0; c < C; c++) {
        double mu, var;
        if (train) {
            double s = 0, s2 = 0;
            for (int n = 0; n < N; n++) s += x[(size_t)n * C + c];
            mu = N ? s / N : 0;
            for (int n = 0; n < N; n++) {
                double d = x[(size_t)n * C + c] - mu;
                s2 += d * d;
            }
            var = N ? s2 / N : 0;
            if (running_mean)
                running_mean[c] = (nn_real)((1 - momentum) * running_mean[c] + momentum * mu);
            if (running_var && N > 1)
                running_var[c] = (nn_real)((1 - momentum) * running_var[c] +
                                           momentum * s2 / (N - 1));
        } else {
            mu = running_mean ? running_mean[c] : 0;
            var = running_var ? running_var[c] : 1;
        }
        mean[c] = (nn_real)mu;
        rstd[c] = (nn_real)(1.0 / sqrt(var + eps));
        nn_real gm = gamma ? gamma[c] : 1, bt = beta ? beta[c] : 0;
        for (int n = 0; n < N; n++)
            out[(size_t)n * C + c] =
                gm * (x[(size_t)n * C + c] - mean[c]) * rstd[c] + bt;
    }
}

void dlp_nn_batchnorm_backward(nn_real *dx, nn_real *dgamma, nn_real *dbeta,
                               const nn_real *dout, const nn_real *x,
                               const nn_real *mean, const nn_real *rstd,
                               const nn_real *gamma, bool train, int N, int C) {
    for (int c = 0; c < C; c++) {
        double sd = 0, sdx = 0;
        for (int n = 0; n < N; n++) {
            double xh = (x[(size_t)n * C + c] - mean[c]) * rstd[c];
            sd += dout[(size_t)n * C + c];
            sdx += dout[(size_t)n * C + c] * xh;
        }
        if (dgamma) dgamma[c] += (nn_real)sdx;
        if (dbeta) dbeta[c] += (nn_real)sd;
        if (!dx) continue;
        nn_real gm = gamma ? gamma[c] : 1;
        for (int n = 0; n < N; n++) {
            size_t k = (size_t)n * C + c;
            if (train) {
                double xh = (x[k] - mean[c]) * rstd[c];
                dx[k] += (nn_real)(gm * rstd[c] / N * (N * (double)dout[k] - sd - xh * sdx));
            } else {
                dx[k] += gm * rstd[c] * dout[k];
            }
        }
    }
}

/* x[N,C] -> out[N,C]; saves mean[N], rstd[N] */
void dlp_nn_layernorm_forward(nn_real *out, nn_real *mean, nn_real *rstd,
                              const nn_real *x, const nn_real *gamma,
                              const nn_real *beta, nn_real eps, int N, int C) {
    for (int n = 0; n < N; n++) {
        const nn_real *r = x + (size_t)n * C;
        double s = 0, s2 = 0;
        for (int c = 0; c < C; c++) s += r[c];
        double mu = s / C;
        for (int c = 0; c < C; c++) s2 += (r[c] - mu) * (r[c] - mu);
        mean[n] = (nn_real)mu;
        rstd[n] = (nn_real)(1.0 / sqrt(s2 / C + eps));
        for (int c = 0; c < C; c++)
            out[(size_t)n * C + c] = (r[c] - mean[n]) * rstd[n] * (gamma ? gamma[c] : 1) +
                                     (beta ? beta[c] : 0);
    }
}

void dlp_nn_layernorm_backward(nn_real *dx, nn_real *dgamma, nn_real *dbeta,
                               const nn_real *dout, const nn_real *x,
                               const nn_real *mean, const nn_real *rstd,
                               const nn_real *gamma, int N, int C) {
    for (int n = 0; n < N; n++) {
        const nn_real *r = x + (size_t)n * C, *d = dout + (size_t)n * C;
        double s = 0, sx = 0;
        for (int c = 0; c < C; c++) {
            double xh = (r[c] - mean[n]) * rstd[n];
            double dxh = d[c] * (gamma ? gamma[c] : 1);
            if (dgamma) dgamma[c] += (nn_real)(d[c] * xh);
            if (dbeta) dbeta[c] += d[c];
            s += dxh;
            sx += dxh * xh;
        }
        if (!dx) continue;
        for (int c = 0; c < C; c++) {
            double xh = (r[c] - mean[n]) * rstd[n];
            double dxh = d[c] * (gamma ? gamma[c] : 1);
            dx[(size_t)n * C + c] += (nn_real)(rstd[n] * (dxh - s / C - xh * sx / C));
        }
    }
}

/* out = x / sqrt(|V_g|) for each node of graph g; x[N,F] */
void dlp_nn_graphsizenorm_forward(nn_real *out, const nn_real *x,
                                  const dlp_nn_graph *g, int F) {
    for (int gi = 0; gi < g->n_graphs; gi++) {
        int a = g->graph_ptr[gi], b = g->graph_ptr[gi + 1];
        nn_real s = (nn_real)(1.0 / sqrt((double)(b - a)));
        for (size_t k = (size_t)a * F; k < (size_t)b * F; k++) out[k] = x[k] * s;
    }
}

void dlp_nn_graphsizenorm_backward(nn_real *dx, const nn_real *dout,
                                   const dlp_nn_graph *g, int F) {
    for (int gi = 0; gi < g->n_graphs; gi++) {
        int a = g->graph_ptr[gi], b = g->graph_ptr[gi + 1];
        nn_real s = (nn_real)(1.0 / sqrt((double)(b - a)));
        for (size_t k = (size_t)a * F; k < (size_t)b * F; k++) dx[k] += dout[k] * s;
    }
}
