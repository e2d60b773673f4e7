/* nn_exp.c — exp(x[i] - m[i]) of a row of floats, for the log-sum-exp
 * readout (nn_pool.c).
 *
 * Why by hand: the readout takes two exps per node and embedding column,
 * one in the forward and one in the backward. glibc's expf is scalar, and
 * in a profile of the inference DIPPM's mean+lse member (ninetieth session,
 * `perf record` on a `make models` run) expf and the two pool loops around
 * it were 13.6% of that member's samples; the mean member, which has no
 * exps, ran its epochs in ~95 s against the mean+lse member's ~127 s, and
 * the training waits for the slower one.
 *
 * How: eight lanes at a time with AVX2 and FMA (checked once at run time):
 * t = x - m, k = round(t log2 e), r = t - k ln 2 (ln 2 split in two, so r
 * is exact to float rounding), exp(r) by its Taylor polynomial of degree 7
 * on |r| <= ln 2 / 2 (truncation below 6e-9 relative), times 2^k built in
 * the exponent bits. t is clamped to [-87.33, 88]: below, the result is 0
 * (expf would give a denormal under 1.2e-38); above, exp(88) (expf's
 * float range ends at 88.72). NaN stays NaN. Within 2 ulp of expf
 * elsewhere (tests/test_nn_engine.c, test_exp_diff, checks it against
 * exp in double over the range); a row's tail of fewer than 8 goes
 * through the same lanes from a padded copy, so a value does not depend
 * on its column.
 *
 * Other machines, and a double-precision engine, take exp or expf. */
#include "nn.h"
#include "nn_blas.h"

#include <math.h>
#include <string.h>

#if !defined(DLP_NN_DOUBLE) && defined(__x86_64__) && \
    (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define NN_EXP_X86 1
#endif

#ifdef NN_EXP_X86
#define AVX2 __attribute__((target("avx2,fma")))

AVX2 static inline __m256 exp8(__m256 t) {
    const __m256 lo = _mm256_set1_ps(-87.33654f), hi = _mm256_set1_ps(88.0f);
    __m256 nan = _mm256_cmp_ps(t, t, _CMP_UNORD_Q);
    __m256 under = _mm256_cmp_ps(t, lo, _CMP_LT_OQ);
    __m256 c = _mm256_min_ps(_mm256_max_ps(t, lo), hi);
    __m256 k = _mm256_round_ps(_mm256_mul_ps(c, _mm256_set1_ps(1.44269504089f)),
                               _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    /* ln 2 = 0.693359375 (exact in 8 bits) - 2.12194440e-4 */
    __m256 r = _mm256_fnmadd_ps(k, _mm256_set1_ps(0.693359375f), c);
    r = _mm256_fnmadd_ps(k, _mm256_set1_ps(-2.12194440e-4f), r);
    __m256 p = _mm256_set1_ps(1.0f / 5040);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 720));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 120));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 24));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 6));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
    __m256i e = _mm256_slli_epi32(
        _mm256_add_epi32(_mm256_cvtps_epi32(k), _mm256_set1_epi32(127)), 23);
    __m256 y = _mm256_mul_ps(p, _mm256_castsi256_ps(e));
    y = _mm256_andnot_ps(under, y);
    return _mm256_blendv_ps(y, t, nan);
}

AVX2 static void exp_diff_avx2(float *out, const float *x, const float *m,
                               int n) {
    int i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(out + i, exp8(_mm256_sub_ps(_mm256_loadu_ps(x + i),
                                                     _mm256_loadu_ps(m + i))));
    if (i < n) {   /* the tail through the same lanes */
        float tx[8] = {0}, tm[8] = {0}, to[8];
        memcpy(tx, x + i, (size_t)(n - i) * sizeof *tx);
        memcpy(tm, m + i, (size_t)(n - i) * sizeof *tm);
        _mm256_storeu_ps(to, exp8(_mm256_sub_ps(_mm256_loadu_ps(tx),
                                                _mm256_loadu_ps(tm))));
        memcpy(out + i, to, (size_t)(n - i) * sizeof *out);
    }
}
#endif

void dlp_nn_exp_diff(nn_real *out, const nn_real *x, const nn_real *m,
                     int n) {
#ifdef NN_EXP_X86
    if (dlp_nn_small_gemm_available()) {   /* AVX2 and FMA */
        exp_diff_avx2(out, x, m, n);
        return;
    }
#endif
#ifdef DLP_NN_DOUBLE
    for (int i = 0; i < n; i++) out[i] = exp(x[i] - m[i]);
#else
    for (int i = 0; i < n; i++) out[i] = expf(x[i] - m[i]);
#endif
}
