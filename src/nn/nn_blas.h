/* nn_blas.h — internal to src/nn: the BLAS entry points the engine uses,
 * resolved from OpenBLAS on first use (nn_blas.c). */
#ifndef DLP_NN_BLAS_H
#define DLP_NN_BLAS_H

#include <stdbool.h>

/* C[M,N] = alpha op(A) op(B) + beta C, row-major, like cblas_?gemm. */
void dlp_nn_blas_sgemm(bool ta, bool tb, int M, int N, int K, float alpha,
                       const float *A, int lda, const float *B, int ldb,
                       float beta, float *C, int ldc);
void dlp_nn_blas_dgemm(bool ta, bool tb, int M, int N, int K, double alpha,
                       const double *A, int lda, const double *B, int ldb,
                       double beta, double *C, int ldc);
/* The same product, always through the library (the reference loops where
 * none opens); dlp_nn_blas_sgemm sends small A B^T products of a one-thread
 * engine to dlp_nn_small_sgemm_nt instead. */
void dlp_nn_blas_lib_sgemm(bool ta, bool tb, int M, int N, int K, float alpha,
                           const float *A, int lda, const float *B, int ldb,
                           float beta, float *C, int ldc);
/* C[M,N] = alpha A[M,K] B[N,K]^T + beta C without the library
 * (nn_small_gemm.c): AVX2/FMA where available, else the reference loops. */
void dlp_nn_small_sgemm_nt(int M, int N, int K, float alpha, const float *A,
                           int lda, const float *B, int ldb, float beta,
                           float *C, int ldc);
/* true on CPUs where dlp_nn_small_sgemm_nt has its AVX2/FMA kernel. */
bool dlp_nn_small_gemm_available(void);
/* The reference loops that run when no BLAS library can be opened. */
void dlp_nn_ref_sgemm(bool ta, bool tb, int M, int N, int K, float alpha,
                      const float *A, int lda, const float *B, int ldb,
                      float beta, float *C, int ldc);
void dlp_nn_ref_dgemm(bool ta, bool tb, int M, int N, int K, double alpha,
                      const double *A, int lda, const double *B, int ldb,
                      double beta, double *C, int ldc);
/* Thread count for BLAS: applied now if BLAS is loaded, else at load. */
void dlp_nn_blas_set_threads(int n);
/* true when a BLAS library was found (false: the reference loops run). */
bool dlp_nn_blas_loaded(void);
/* The file or soname it was opened from (NULL: none), for tests and notes. */
const char *dlp_nn_blas_name(void);

#endif
