/* nn_small_gemm.c — the product a prediction runs, C = alpha A B^T + beta C
 * (every GNN and dense layer's forward: X[N,I] W[O,I]^T), written here for
 * the sizes one graph gives, so that `dlperf predict` does not open OpenBLAS.
 *
 * Why by hand: opening OpenBLAS and its first product cost ~2.3 ms of a
 * ~10 ms ResNet-50 `dlperf predict` (dlopen of the 25 MB library with its
 * per-CPU kernel tables and thread pool, then its first-call buffers),
 * while the products themselves are ~10 M multiply-adds (0.2-0.3 ms at
 * either's speed). Warm, this kernel runs at 0.6-0.8x OpenBLAS's speed on
 * those shapes and faster on the 1-row ones of the readout
 * (bench/small_gemm_bench.c prints both side by side).
 *
 * How: each C element is a dot product of two contiguous rows (A's row i,
 * B's row j). A block of 3 rows of A by 4 rows of B keeps 12 AVX2
 * accumulators of 8 lanes; the k loop runs 8 at a time with fused
 * multiply-adds, the <8 left over in scalar, and the 4 sums of a row come
 * out of one horizontal add tree. Rows and columns outside whole blocks run
 * one dot product at a time. The summation order differs from OpenBLAS's,
 * so results agree to rounding (tests/test_nn_blas.c), not bit for bit.
 *
 * Only on x86-64 CPUs with AVX2 and FMA (checked once at run time); other
 * machines take the library path in nn_blas.c. */
#include "nn_blas.h"

#include <stddef.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define NN_SMALL_X86 1
#endif

#ifdef NN_SMALL_X86
#define RB 3 /* rows of A per block: 12 accumulators + 3 rows + 1 column = 16 */

#define AVX2 __attribute__((target("avx2,fma")))

/* [sum v0, sum v1, sum v2, sum v3] */
AVX2 static inline __m128 hsum4(__m256 v0, __m256 v1, __m256 v2, __m256 v3) {
    __m256 t = _mm256_hadd_ps(_mm256_hadd_ps(v0, v1), _mm256_hadd_ps(v2, v3));
    return _mm_add_ps(_mm256_castps256_ps128(t), _mm256_extractf128_ps(t, 1));
}

AVX2 static inline __attribute__((always_inline)) float dot(const float *a, const float *b, int K) {
    int K8 = K & ~7;
    __m256 acc = _mm256_setzero_ps(), z = _mm256_setzero_ps();
    for (int k = 0; k < K8; k += 8)
        acc = _mm256_fmadd_ps(_mm256_loadu_ps(a + k), _mm256_loadu_ps(b + k), acc);
    float s[4];
    _mm_storeu_ps(s, hsum4(acc, z, z, z));
    float t = s[0];
    for (int k = K8; k < K; k++) t += a[k] * b[k];
    return t;
}

static inline void put(float *c, float alpha, float s, float beta) {
    *c = alpha * s + (beta == 0 ? 0 : beta * *c);
}

AVX2 static inline __attribute__((always_inline)) void block(const float *const a[RB], const float *B, int ldb, int j,
                       int K, float alpha, float beta, float *C, int ldc) {
    int K8 = K & ~7;
    const float *b0 = B + (size_t)j * ldb, *b1 = b0 + ldb, *b2 = b1 + ldb,
                *b3 = b2 + ldb;
    __m256 acc[RB][4];
    for (int r = 0; r < RB; r++)
        for (int c = 0; c < 4; c++) acc[r][c] = _mm256_setzero_ps();
    for (int k = 0; k < K8; k += 8) {
        __m256 x[RB];
        for (int r = 0; r < RB; r++) x[r] = _mm256_loadu_ps(a[r] + k);
        __m256 y = _mm256_loadu_ps(b0 + k);
        for (int r = 0; r < RB; r++) acc[r][0] = _mm256_fmadd_ps(x[r], y, acc[r][0]);
        y = _mm256_loadu_ps(b1 + k);
        for (int r = 0; r < RB; r++) acc[r][1] = _mm256_fmadd_ps(x[r], y, acc[r][1]);
        y = _mm256_loadu_ps(b2 + k);
        for (int r = 0; r < RB; r++) acc[r][2] = _mm256_fmadd_ps(x[r], y, acc[r][2]);
        y = _mm256_loadu_ps(b3 + k);
        for (int r = 0; r < RB; r++) acc[r][3] = _mm256_fmadd_ps(x[r], y, acc[r][3]);
    }
    for (int r = 0; r < RB; r++) {
        float s[4];
        _mm_storeu_ps(s, hsum4(acc[r][0], acc[r][1], acc[r][2], acc[r][3]));
        for (int k = K8; k < K; k++) {
            float v = a[r][k];
            s[0] += v * b0[k];
            s[1] += v * b1[k];
            s[2] += v * b2[k];
            s[3] += v * b3[k];
        }
        float *c = C + (size_t)r * ldc + j;
        for (int q = 0; q < 4; q++) put(&c[q], alpha, s[q], beta);
    }
}

AVX2 static void nt_avx2(int M, int N, int K, float alpha, const float *A, int lda,
                         const float *B, int ldb, float beta, float *C, int ldc) {
    int i = 0;
    for (; i + RB <= M; i += RB) {
        const float *a[RB];
        for (int r = 0; r < RB; r++) a[r] = A + (size_t)(i + r) * lda;
        float *c = C + (size_t)i * ldc;
        int j = 0;
        for (; j + 4 <= N; j += 4) block(a, B, ldb, j, K, alpha, beta, c, ldc);
        for (; j < N; j++)
            for (int r = 0; r < RB; r++)
                put(&c[(size_t)r * ldc + j], alpha, dot(a[r], B + (size_t)j * ldb, K),
                    beta);
    }
    for (; i < M; i++)
        for (int j = 0; j < N; j++)
            put(&C[(size_t)i * ldc + j], alpha,
                dot(A + (size_t)i * lda, B + (size_t)j * ldb, K), beta);
}
#endif

bool dlp_nn_small_gemm_available(void) {
#ifdef NN_SMALL_X86
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
    return false;
#endif
}

void dlp_nn_small_sgemm_nt(int M, int N, int K, float alpha, const float *A,
                           int lda, const float *B, int ldb, float beta,
                           float *C, int ldc) {
#ifdef NN_SMALL_X86
    if (dlp_nn_small_gemm_available()) {
        nt_avx2(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
        return;
    }
#endif
    dlp_nn_ref_sgemm(false, true, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}
