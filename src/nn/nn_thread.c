/* nn_thread.c — the engine's one source of parallelism besides OpenBLAS: a
 * fork-join loop over contiguous index ranges on pthreads. Ranges are fixed
 * by (n, n_threads) and every index is owned by one thread, so kernels that
 * write only their own rows give bit-identical results for any count. */
#include "nn.h"

#include <cblas.h>
#undef I /* <complex.h>, pulled in by OpenBLAS, defines I */
#include <pthread.h>

#define NN_MAX_THREADS 64

static int nn_n_threads = 1; /* set by dlp_nn_set_threads; read-only else */

void dlp_nn_set_threads(int n) {
    if (n < 1) n = 1;
    if (n > NN_MAX_THREADS) n = NN_MAX_THREADS;
    nn_n_threads = n;
    openblas_set_num_threads(n);
}

int dlp_nn_threads(void) { return nn_n_threads; }

typedef struct {
    dlp_nn_range_fn fn;
    void *ctx;
    int lo, hi;
} nn_job;

static void *nn_job_run(void *arg) {
    nn_job *j = arg;
    j->fn(j->ctx, j->lo, j->hi);
    return NULL;
}

void dlp_nn_parallel_for(int n_threads, int n, dlp_nn_range_fn fn, void *ctx) {
    if (n <= 0) return;
    if (n_threads > NN_MAX_THREADS) n_threads = NN_MAX_THREADS;
    if (n_threads > n) n_threads = n;
    if (n_threads <= 1) {
        fn(ctx, 0, n);
        return;
    }
    nn_job jobs[NN_MAX_THREADS];
    pthread_t tid[NN_MAX_THREADS];
    bool started[NN_MAX_THREADS] = {false};
    for (int t = 0; t < n_threads; t++) {
        jobs[t].fn = fn;
        jobs[t].ctx = ctx;
        jobs[t].lo = (int)((int64_t)n * t / n_threads);
        jobs[t].hi = (int)((int64_t)n * (t + 1) / n_threads);
    }
    for (int t = 1; t < n_threads; t++)
        started[t] = pthread_create(&tid[t], NULL, nn_job_run, &jobs[t]) == 0;
    fn(ctx, jobs[0].lo, jobs[0].hi);
    for (int t = 1; t < n_threads; t++) {
        if (started[t]) pthread_join(tid[t], NULL);
        else fn(ctx, jobs[t].lo, jobs[t].hi); /* could not start: run here */
    }
}

int dlp_nn_threads_for(size_t work) {
    return work < ((size_t)1 << 16) ? 1 : nn_n_threads;
}
