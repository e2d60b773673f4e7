/* test_nn_blas.c — the lazily opened OpenBLAS against the reference loops
 * (src/nn/nn_blas.c), every transpose combination, strided operands; the
 * build's private OpenBLAS (the Makefile's BLAS_SO) against the system's
 * library it was linked from, bit for bit; the small-product kernel
 * (src/nn/nn_small_gemm.c) against a double-precision oracle on block and
 * remainder shapes, and which of the two a product goes to. */
#include "nn/nn.h"
#include "nn/nn_blas.h"

#include "check.h"

#include <cblas.h>
#undef I
#include <dlfcn.h>
#include <stdint.h>

static double frand(unsigned *s) {
    *s = *s * 1103515245u + 12345u;
    return ((*s >> 8) & 0xffff) / 32768.0 - 1.0;
}

static void blas_is_loaded(void) { CHECK(dlp_nn_blas_loaded()); }

static void sgemm_matches_reference(void) {
    unsigned seed = 7;
    int M = 37, N = 29, K = 53, pad = 3;
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++) {
            int lda = (ta ? M : K) + pad, ldb = (tb ? K : N) + pad, ldc = N + pad;
            int ra = ta ? K : M, rb = tb ? N : K;
            float *A = malloc(sizeof(float) * ra * lda);
            float *B = malloc(sizeof(float) * rb * ldb);
            float *C1 = malloc(sizeof(float) * M * ldc);
            float *C2 = malloc(sizeof(float) * M * ldc);
            for (int i = 0; i < ra * lda; i++) A[i] = (float)frand(&seed);
            for (int i = 0; i < rb * ldb; i++) B[i] = (float)frand(&seed);
            for (int i = 0; i < M * ldc; i++) C1[i] = C2[i] = (float)frand(&seed);
            dlp_nn_blas_sgemm(ta, tb, M, N, K, 0.5f, A, lda, B, ldb, 2.0f, C1, ldc);
            dlp_nn_ref_sgemm(ta, tb, M, N, K, 0.5f, A, lda, B, ldb, 2.0f, C2, ldc);
            double worst = 0;
            for (int i = 0; i < M; i++)
                for (int j = 0; j < N; j++) {
                    double d = fabs(C1[i * ldc + j] - C2[i * ldc + j]);
                    if (d > worst) worst = d;
                }
            CHECK_MSG(worst < 1e-4, "ta=%d tb=%d max diff %g", ta, tb, worst);
            /* padding columns are untouched by both */
            CHECK(C1[ldc - 1] == C2[ldc - 1]);
            free(A); free(B); free(C1); free(C2);
        }
}

static void dgemm_matches_reference(void) {
    unsigned seed = 11;
    int M = 9, N = 14, K = 6;
    double A[9 * 6], B[14 * 6], C1[9 * 14], C2[9 * 14];
    for (int i = 0; i < 54; i++) A[i] = frand(&seed);
    for (int i = 0; i < 84; i++) B[i] = frand(&seed);
    for (int i = 0; i < 126; i++) C1[i] = C2[i] = frand(&seed);
    dlp_nn_blas_dgemm(false, true, M, N, K, 1.0, A, K, B, K, 0.0, C1, N);
    dlp_nn_ref_dgemm(false, true, M, N, K, 1.0, A, K, B, K, 0.0, C2, N);
    double worst = 0;
    for (int i = 0; i < 126; i++) worst = fmax(worst, fabs(C1[i] - C2[i]));
    CHECK_MSG(worst < 1e-12, "max diff %g", worst);
}

static void reference_known_product(void) {
    /* [1 2; 3 4] x [5 6; 7 8] = [19 22; 43 50] */
    float A[4] = {1, 2, 3, 4}, B[4] = {5, 6, 7, 8}, C[4] = {0};
    dlp_nn_ref_sgemm(false, false, 2, 2, 2, 1, A, 2, B, 2, 0, C, 2);
    CHECK(C[0] == 19 && C[1] == 22 && C[2] == 43 && C[3] == 50);
    /* A^T B^T = (BA)^T: [[1,3],[2,4]] x [[5,7],[6,8]] = [23 31; 34 46] */
    dlp_nn_ref_sgemm(true, true, 2, 2, 2, 1, A, 2, B, 2, 0, C, 2);
    CHECK(C[0] == 23 && C[1] == 31 && C[2] == 34 && C[3] == 46);
}

/* The private copy must give exactly the bits of the shared library built
 * from the same archive (DLP_BLAS_SHARED, from the Makefile; it is the same
 * OpenBLAS, relinked) at the same thread count (OpenBLAS's results depend on
 * it): on the products a prediction runs (GNN layers: C[nodes,32] +=
 * X[nodes,I] W[32,I]^T, here 1,987 nodes as in the 2,000-node transformer)
 * and on a training shape, on one thread (the engine's default) and on two
 * (`--threads 2`, where OpenBLAS splits them). Skipped where the private
 * copy or that library is absent. */
static void private_blas_matches_system_bits(void) {
#ifdef DLP_BLAS_SHARED
    const char *name = dlp_nn_blas_name();
    if (!name || !strchr(name, '/')) return; /* not the private copy */
    void *h = dlopen(DLP_BLAS_SHARED, RTLD_LAZY | RTLD_LOCAL);
    if (!h) return;
    __typeof__(cblas_sgemm) *sys_sgemm =
        (__typeof__(cblas_sgemm) *)dlsym(h, "cblas_sgemm");
    void (*sys_threads)(int) = (void (*)(int))dlsym(h, "openblas_set_num_threads");
    CHECK(sys_sgemm != NULL && sys_threads != NULL);
    static const int shapes[][3] = {{1987, 32, 106}, {1987, 32, 32}, {169, 32, 109},
                                    {1, 4, 32}, {3200, 128, 128}};
    unsigned seed = 13;
    for (int threads = 1; threads <= 2; threads++) {
        if (!sys_sgemm || !sys_threads) break;
        dlp_nn_blas_set_threads(threads);
        sys_threads(threads);
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
            int M = shapes[s][0], N = shapes[s][1], K = shapes[s][2];
            float *A = malloc(sizeof(float) * M * K), *B = malloc(sizeof(float) * N * K);
            float *C1 = malloc(sizeof(float) * M * N), *C2 = malloc(sizeof(float) * M * N);
            for (int i = 0; i < M * K; i++) A[i] = (float)frand(&seed);
            for (int i = 0; i < N * K; i++) B[i] = (float)frand(&seed);
            for (int i = 0; i < M * N; i++) C1[i] = C2[i] = (float)frand(&seed);
            dlp_nn_blas_lib_sgemm(false, true, M, N, K, 1, A, K, B, K, 1, C1, N);
            sys_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, M, N, K, 1, A, K, B, K,
                      1, C2, N);
            CHECK_MSG(memcmp(C1, C2, sizeof(float) * M * N) == 0,
                      "%d x %d x %d on %d threads: private and system OpenBLAS "
                      "differ", M, N, K, threads);
            free(A); free(B); free(C1); free(C2);
        }
    }
    dlp_nn_blas_set_threads(1);
    dlclose(h);
#endif
}

/* C = alpha A B^T + beta C by the small kernel, against the same sum in
 * double: every element within 1e-5 of the sum of |terms| (float rounding
 * over up to 200 terms), on 3x4 blocks and every remainder of rows (M % 3),
 * columns (N % 4) and depth (K % 8), with strided operands; the padding
 * columns of C stay untouched. */
static void small_kernel_matches_oracle(void) {
    static const int Ms[] = {1, 2, 3, 4, 5, 7, 169}, Ns[] = {1, 3, 4, 5, 8, 64},
                     Ks[] = {1, 7, 8, 9, 64, 113};
    static const float ab[][2] = {{1, 0}, {0.5f, 2}, {-1.5f, 1}};
    unsigned seed = 21;
    int checked = 0;
    for (size_t mi = 0; mi < sizeof Ms / sizeof *Ms; mi++)
        for (size_t ni = 0; ni < sizeof Ns / sizeof *Ns; ni++)
            for (size_t ki = 0; ki < sizeof Ks / sizeof *Ks; ki++) {
                int M = Ms[mi], N = Ns[ni], K = Ks[ki];
                int lda = K + 2, ldb = K + 1, ldc = N + 3;
                const float *c = ab[(mi + ni + ki) % 3];
                float alpha = c[0], beta = c[1];
                float *A = malloc(sizeof(float) * M * lda);
                float *B = malloc(sizeof(float) * N * ldb);
                float *C = malloc(sizeof(float) * M * ldc);
                float *C0 = malloc(sizeof(float) * M * ldc);
                for (int i = 0; i < M * lda; i++) A[i] = (float)frand(&seed);
                for (int i = 0; i < N * ldb; i++) B[i] = (float)frand(&seed);
                for (int i = 0; i < M * ldc; i++) C[i] = C0[i] = (float)frand(&seed);
                dlp_nn_small_sgemm_nt(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
                double worst = 0;
                int pad_ok = 1;
                for (int i = 0; i < M; i++) {
                    for (int j = 0; j < N; j++) {
                        double s = 0, mag = 0;
                        for (int k = 0; k < K; k++) {
                            double t = (double)A[i * lda + k] * B[j * ldb + k];
                            s += t;
                            mag += fabs(t);
                        }
                        double want = alpha * s + (beta == 0 ? 0 : beta * (double)C0[i * ldc + j]);
                        double tol = 1e-5 * (fabs(alpha) * mag + fabs(beta * C0[i * ldc + j])) + 1e-30;
                        double d = fabs(C[i * ldc + j] - want) / tol;
                        if (d > worst) worst = d;
                    }
                    for (int j = N; j < ldc; j++) pad_ok &= C[i * ldc + j] == C0[i * ldc + j];
                }
                CHECK_MSG(worst <= 1, "%d x %d x %d: error %.3g of the bound", M, N, K, worst);
                CHECK_MSG(pad_ok, "%d x %d x %d: padding written", M, N, K);
                checked++;
                free(A); free(B); free(C); free(C0);
            }
    CHECK(checked == 7 * 6 * 6);
}

/* Where a product goes: on a one-thread engine, small A B^T products to the
 * small kernel (the same bits as calling it), other transposes and products
 * over 2^26 multiply-adds to the library; with the engine on 2 threads
 * (training, evaluation) every product to the library. */
static void dispatch_by_shape_and_threads(void) {
    unsigned seed = 5;
    int M = 4096, N = 128, K = 160; /* 83.9 M multiply-adds: above 2^26 */
    float *A = malloc(sizeof(float) * M * K), *B = malloc(sizeof(float) * N * K);
    float *C1 = malloc(sizeof(float) * M * N), *C2 = malloc(sizeof(float) * M * N);
    for (int i = 0; i < M * K; i++) A[i] = (float)frand(&seed);
    for (int i = 0; i < N * K; i++) B[i] = (float)frand(&seed);
    bool fast = dlp_nn_small_gemm_available();
    /* small, one thread: the small kernel */
    int m = 169, n = 64, k = 112;
    memset(C1, 0, sizeof(float) * m * n);
    memset(C2, 0, sizeof(float) * m * n);
    dlp_nn_blas_sgemm(false, true, m, n, k, 1, A, k, B, k, 0, C1, n);
    dlp_nn_small_sgemm_nt(m, n, k, 1, A, k, B, k, 0, C2, n);
    CHECK(memcmp(C1, C2, sizeof(float) * m * n) == 0);
    if (fast && dlp_nn_blas_loaded()) {
        /* ... and not the library's summation order */
        dlp_nn_blas_lib_sgemm(false, true, m, n, k, 1, A, k, B, k, 0, C2, n);
        CHECK(memcmp(C1, C2, sizeof(float) * m * n) != 0);
    }
    /* large, one thread: the library */
    dlp_nn_blas_sgemm(false, true, M, N, K, 1, A, K, B, K, 0, C1, N);
    dlp_nn_blas_lib_sgemm(false, true, M, N, K, 1, A, K, B, K, 0, C2, N);
    CHECK(memcmp(C1, C2, sizeof(float) * M * N) == 0);
    /* small A B (no transpose): the library */
    dlp_nn_blas_sgemm(false, false, m, n, k, 1, A, k, B, n, 0, C1, n);
    dlp_nn_blas_lib_sgemm(false, false, m, n, k, 1, A, k, B, n, 0, C2, n);
    CHECK(memcmp(C1, C2, sizeof(float) * m * n) == 0);
    /* small, two engine threads: the library */
    dlp_nn_set_threads(2);
    dlp_nn_blas_sgemm(false, true, m, n, k, 1, A, k, B, k, 0, C1, n);
    dlp_nn_blas_lib_sgemm(false, true, m, n, k, 1, A, k, B, k, 0, C2, n);
    CHECK(memcmp(C1, C2, sizeof(float) * m * n) == 0);
    dlp_nn_set_threads(1);
    free(A); free(B); free(C1); free(C2);
}

int main(void) {
    RUN(blas_is_loaded);
    RUN(private_blas_matches_system_bits);
    RUN(reference_known_product);
    RUN(sgemm_matches_reference);
    RUN(dgemm_matches_reference);
    RUN(small_kernel_matches_oracle);
    RUN(dispatch_by_shape_and_threads);
    return CHECK_DONE();
}
