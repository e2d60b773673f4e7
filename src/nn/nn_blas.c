/* nn_blas.c — OpenBLAS, opened with dlopen on the first dense product
 * that goes to it (the small A B^T products of a one-thread engine run in
 * nn_small_gemm.c instead, so a one-graph prediction never opens it).
 *
 * Why not link it: loading libopenblas (and libgfortran behind it) and its
 * thread pool costs 2.5-5 ms of CPU in every process (perf stat of an empty
 * program with and without it: 0.5 vs 5.7 ms), which every `dlperf inspect`
 * and `dlperf dataset` call paid without running a single product. Only
 * processes that run a network now pay it.
 *
 * Which library: the build's private copy of OpenBLAS first
 * (DLP_BLAS_PRIVATE, the Makefile's BLAS_SO: the same archive relinked with
 * its internal symbols bound, ~0.4 ms to open instead of ~4 ms, same
 * kernels and so the same bits), then the system's.
 *
 * If no BLAS library can be opened, the reference loops below run: correct,
 * slower (tests/test_nn_blas.c checks both against each other). */
#include "nn_blas.h"

#include "nn.h"

#include <cblas.h>
#undef I /* <complex.h>, pulled in by OpenBLAS, defines I */
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>

typedef __typeof__(cblas_sgemm) sgemm_t;
typedef __typeof__(cblas_dgemm) dgemm_t;
typedef void set_threads_t(int);

static sgemm_t *p_sgemm;
static dgemm_t *p_dgemm;
static set_threads_t *p_set_threads;
static const char *blas_name; /* the library opened, NULL: none */
static pthread_once_t blas_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t threads_lock = PTHREAD_MUTEX_INITIALIZER;
/* The engine's count (dlp_nn_set_threads, 1 until set): a process that
 * never sets it, `dlperf predict` on one graph, runs its products of a few
 * thousand rows on one thread. OpenBLAS's default of every core made that
 * slower on 2 cores: its threads wait in sched_yield (perf: 9% of the time),
 * and the 2,000-node transformer's prediction took 27.6 -> 23.5 ms (min of
 * 30 runs, hidden 32) with OPENBLAS_NUM_THREADS=1. */
static int want_threads = 1;

static void blas_open(void) {
    /* Debian: libopenblas.so.0 (openblas-pthread); libblas.so.3 is the
     * alternatives link, which carries the cblas_ symbols for OpenBLAS. */
    static const char *const names[] = {
#ifdef DLP_BLAS_PRIVATE
        DLP_BLAS_PRIVATE,
#endif
        "libopenblas.so.0", "libopenblas.so", "libblas.so.3"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        /* lazy binding: resolving all of OpenBLAS's symbols up front cost
         * ~2 ms of CPU per process (callgrind: 22.1 -> 19.8 M instructions) */
        void *h = dlopen(names[i], RTLD_LAZY | RTLD_LOCAL);
        if (!h) continue;
        sgemm_t *s = (sgemm_t *)dlsym(h, "cblas_sgemm");
        dgemm_t *d = (dgemm_t *)dlsym(h, "cblas_dgemm");
        if (!s || !d) {
            dlclose(h);
            continue;
        }
        p_set_threads = (set_threads_t *)dlsym(h, "openblas_set_num_threads");
        p_dgemm = d;
        p_sgemm = s; /* the handle stays open for the process's life */
        blas_name = names[i];
        break;
    }
    pthread_mutex_lock(&threads_lock);
    if (p_set_threads && want_threads > 0) p_set_threads(want_threads);
    pthread_mutex_unlock(&threads_lock);
}

bool dlp_nn_blas_loaded(void) {
    pthread_once(&blas_once, blas_open);
    return p_sgemm != NULL;
}

const char *dlp_nn_blas_name(void) {
    return dlp_nn_blas_loaded() ? blas_name : NULL;
}

void dlp_nn_blas_set_threads(int n) {
    pthread_mutex_lock(&threads_lock);
    want_threads = n;
    if (p_set_threads) p_set_threads(n);
    pthread_mutex_unlock(&threads_lock);
}

/* Reference products: C = alpha op(A) op(B) + beta C (row-major). */
#define REF_GEMM(T)                                                          \
    for (int i = 0; i < M; i++)                                              \
        for (int j = 0; j < N; j++) {                                        \
            T acc = 0;                                                       \
            for (int k = 0; k < K; k++)                                      \
                acc += (ta ? A[(size_t)k * lda + i] : A[(size_t)i * lda + k]) \
                     * (tb ? B[(size_t)j * ldb + k] : B[(size_t)k * ldb + j]); \
            T *c = &C[(size_t)i * ldc + j];                                  \
            *c = alpha * acc + (beta == 0 ? 0 : beta * *c);                  \
        }

void dlp_nn_ref_sgemm(bool ta, bool tb, int M, int N, int K, float alpha,
                      const float *A, int lda, const float *B, int ldb,
                      float beta, float *C, int ldc) {
    REF_GEMM(float)
}

void dlp_nn_ref_dgemm(bool ta, bool tb, int M, int N, int K, double alpha,
                      const double *A, int lda, const double *B, int ldb,
                      double beta, double *C, int ldc) {
    REF_GEMM(double)
}

void dlp_nn_blas_lib_sgemm(bool ta, bool tb, int M, int N, int K, float alpha,
                           const float *A, int lda, const float *B, int ldb,
                           float beta, float *C, int ldc) {
    if (dlp_nn_blas_loaded()) {
        p_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans,
                tb ? CblasTrans : CblasNoTrans, M, N, K, alpha, A, lda, B, ldb,
                beta, C, ldc);
        return;
    }
    dlp_nn_ref_sgemm(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

/* The products of one graph's forward on one engine thread (`dlperf
 * predict`: X[N,I] W[O,I]^T, at most ~2^26 multiply-adds each) go to
 * nn_small_gemm.c, so such a process never opens the library (the why and
 * the measurements are there). Training and evaluation set the engine's
 * thread count (`--threads`, 2 by default) and keep OpenBLAS and its
 * threads, so their results are unchanged. */
#define SMALL_MAX_MAC 67108864.0 /* 2^26 */

void dlp_nn_blas_sgemm(bool ta, bool tb, int M, int N, int K, float alpha,
                       const float *A, int lda, const float *B, int ldb,
                       float beta, float *C, int ldc) {
    if (!ta && tb && dlp_nn_threads() == 1 &&
        (double)M * N * K <= SMALL_MAX_MAC && dlp_nn_small_gemm_available()) {
        dlp_nn_small_sgemm_nt(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
        return;
    }
    dlp_nn_blas_lib_sgemm(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

void dlp_nn_blas_dgemm(bool ta, bool tb, int M, int N, int K, double alpha,
                       const double *A, int lda, const double *B, int ldb,
                       double beta, double *C, int ldc) {
    if (dlp_nn_blas_loaded()) {
        p_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans,
                tb ? CblasTrans : CblasNoTrans, M, N, K, alpha, A, lda, B, ldb,
                beta, C, ldc);
        return;
    }
    dlp_nn_ref_dgemm(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}
