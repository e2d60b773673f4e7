/* nn_linear.c — the dense layer (torch.nn.Linear) and the GEMM wrapper all
 * dense products go through. */
#include "nn.h"

#include "nn_blas.h"

void dlp_nn_gemm(bool ta, bool tb, int M, int N, int K, nn_real alpha,
                 const nn_real *A, int lda, const nn_real *B, int ldb,
                 nn_real beta, nn_real *C, int ldc) {
    if (M <= 0 || N <= 0) return;
    if (K <= 0) { /* C = beta C */
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++)
                C[(size_t)i * ldc + j] = beta == 0 ? 0 : beta * C[(size_t)i * ldc + j];
        return;
    }
#ifdef DLP_NN_DOUBLE
    dlp_nn_blas_dgemm(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
#else
    dlp_nn_blas_sgemm(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
#endif
}

/* out[N,O] = in[N,I] @ W[O,I]^T + b[O] */
void dlp_nn_linear_forward(nn_real *out, const nn_real *in, const nn_real *W,
                           const nn_real *b, int N, int I, int O) {
    for (int n = 0; n < N; n++)
        for (int o = 0; o < O; o++) out[(size_t)n * O + o] = b ? b[o] : 0;
    dlp_nn_gemm(false, true, N, O, I, 1, in, I, W, I, 1, out, O);
}

/* din[N,I] += dout[N,O] @ W[O,I]; dW[O,I] += dout^T @ in; db[O] += sum dout */
void dlp_nn_linear_backward(nn_real *din, nn_real *dW, nn_real *db,
                            const nn_real *dout, const nn_real *in,
                            const nn_real *W, int N, int I, int O) {
    if (din) dlp_nn_gemm(false, false, N, I, O, 1, dout, O, W, I, 1, din, I);
    if (dW) dlp_nn_gemm(true, false, O, I, N, 1, dout, O, in, I, 1, dW, I);
    if (db)
        for (int n = 0; n < N; n++)
            for (int o = 0; o < O; o++) db[o] += dout[(size_t)n * O + o];
}
