/* nn_act.c — elementwise activations (ReLU, LeakyReLU, ELU, GELU (erf),
 * Sigmoid, Tanh), PReLU and inverted dropout, forward and backward. */
#include "nn.h"

#include <math.h>

/* One loop per activation (the switch is outside the loops, so the simple
 * ones vectorise). */
void dlp_nn_act_forward(nn_real *out, const nn_real *x, size_t n,
                        dlp_nn_act a, nn_real alpha) {
    switch (a) {
    case DLP_NN_RELU:
        for (size_t k = 0; k < n; k++) out[k] = dlp_nn_relu_mask(x[k], x[k]);
        break;
    case DLP_NN_LEAKY_RELU:
        for (size_t k = 0; k < n; k++) out[k] = x[k] > 0 ? x[k] : alpha * x[k];
        break;
    case DLP_NN_ELU:
        for (size_t k = 0; k < n; k++)
            out[k] = x[k] > 0 ? x[k] : alpha * (nn_real)expm1((double)x[k]);
        break;
    case DLP_NN_GELU:
        for (size_t k = 0; k < n; k++)
            out[k] = (nn_real)(0.5 * x[k] * (1.0 + erf(x[k] * 0.70710678118654752440)));
        break;
    case DLP_NN_SIGMOID:
        for (size_t k = 0; k < n; k++) out[k] = (nn_real)(1.0 / (1.0 + exp(-(double)x[k])));
        break;
    case DLP_NN_TANH:
        for (size_t k = 0; k < n; k++) out[k] = (nn_real)tanh((double)x[k]);
        break;
    }
}

void dlp_nn_act_backward(nn_real *dx, const nn_real *dout, const nn_real *x,
                         const nn_real *out, size_t n, dlp_nn_act a,
                         nn_real alpha) {
    switch (a) {
    case DLP_NN_RELU:
        for (size_t k = 0; k < n; k++) dx[k] += dlp_nn_relu_mask(x[k], dout[k]);
        break;
    case DLP_NN_LEAKY_RELU:
        for (size_t k = 0; k < n; k++) dx[k] += x[k] > 0 ? dout[k] : alpha * dout[k];
        break;
    case DLP_NN_ELU:
        for (size_t k = 0; k < n; k++) dx[k] += (x[k] > 0 ? 1 : out[k] + alpha) * dout[k];
        break;
    case DLP_NN_GELU:
        for (size_t k = 0; k < n; k++) {
            double v = x[k];
            double cdf = 0.5 * (1.0 + erf(v * 0.70710678118654752440));
            double pdf = exp(-0.5 * v * v) * 0.39894228040143267794;
            dx[k] += (nn_real)((cdf + v * pdf) * dout[k]);
        }
        break;
    case DLP_NN_SIGMOID:
        for (size_t k = 0; k < n; k++) dx[k] += out[k] * (1 - out[k]) * dout[k];
        break;
    case DLP_NN_TANH:
        for (size_t k = 0; k < n; k++) dx[k] += (1 - out[k] * out[k]) * dout[k];
        break;
    }
}

/* x[N,C]; a[np] with np = 1 or C */
void dlp_nn_prelu_forward(nn_real *out, const nn_real *x, const nn_real *a,
                          int np, int N, int C) {
    for (int n = 0; n < N; n++)
        for (int c = 0; c < C; c++) {
            size_t k = (size_t)n * C + c;
            nn_real s = a[np == 1 ? 0 : c];
            out[k] = x[k] > 0 ? x[k] : s * x[k];
        }
}

void dlp_nn_prelu_backward(nn_real *dx, nn_real *da, const nn_real *dout,
                           const nn_real *x, const nn_real *a, int np, int N,
                           int C) {
    for (int n = 0; n < N; n++)
        for (int c = 0; c < C; c++) {
            size_t k = (size_t)n * C + c;
            int pi = np == 1 ? 0 : c;
            if (x[k] > 0) {
                if (dx) dx[k] += dout[k];
            } else {
                if (dx) dx[k] += a[pi] * dout[k];
                if (da) da[pi] += x[k] * dout[k];
            }
        }
}

void dlp_nn_dropout_forward(nn_real *out, nn_real *mask, const nn_real *x,
                            size_t n, nn_real p, dlp_nn_rng *r) {
    nn_real keep = p < 1 ? (nn_real)1 / (1 - p) : 0;
    for (size_t k = 0; k < n; k++) {
        mask[k] = (p > 0 && r && dlp_nn_rng_uniform(r) < p) ? 0 : (p > 0 && r ? keep : 1);
        out[k] = x[k] * mask[k];
    }
}

void dlp_nn_dropout_backward(nn_real *dx, const nn_real *dout,
                             const nn_real *mask, size_t n) {
    for (size_t k = 0; k < n; k++) dx[k] += dout[k] * mask[k];
}
