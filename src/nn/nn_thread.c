/* nn_thread.c — the engine's one source of parallelism besides OpenBLAS: a
 * fork-join loop over contiguous index ranges on pthreads. Ranges are fixed
 * by (n, n_threads) and every index is owned by one thread, so kernels that
 * write only their own rows give bit-identical results for any count. */
#include "nn.h"

#include <cblas.h>
#undef I /* <complex.h>, pulled in by OpenBLAS, defines I */
#include <pthread.h>
#include <stdlib.h>

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

/* ---- persistent workers ---------------------------------------------------
 * n-1 threads started once and parked on a condition variable; a run
 * publishes (fn, ctx, n, n_threads) under the mutex, bumps the generation and
 * wakes them; worker t (1-based) runs chunk t, the caller chunk 0, then the
 * caller waits until every worker has reported. The chunks are the same as
 * dlp_nn_parallel_for's, so results are identical to it for any pool. */
struct dlp_nn_workers {
    pthread_mutex_t mu;
    pthread_cond_t go, done;
    pthread_t tid[NN_MAX_THREADS];
    int n_started;       /* worker threads running (ids 1..n_started) */
    uint64_t gen;        /* bumped by each run */
    int pending;         /* workers that have not finished this run */
    bool quit;
    dlp_nn_range_fn fn;  /* the current run */
    void *ctx;
    int n, n_threads;
};

typedef struct {
    dlp_nn_workers *w;
    int id;
} nn_worker_arg;

static void *nn_worker_main(void *varg) {
    nn_worker_arg a = *(nn_worker_arg *)varg;
    free(varg);
    dlp_nn_workers *w = a.w;
    uint64_t seen = 0;
    pthread_mutex_lock(&w->mu);
    for (;;) {
        while (!w->quit && w->gen == seen) pthread_cond_wait(&w->go, &w->mu);
        if (w->quit) break;
        seen = w->gen;
        dlp_nn_range_fn fn = w->fn;
        void *ctx = w->ctx;
        int n = w->n, nt = w->n_threads;
        pthread_mutex_unlock(&w->mu);
        if (a.id < nt)
            fn(ctx, (int)((int64_t)n * a.id / nt), (int)((int64_t)n * (a.id + 1) / nt));
        pthread_mutex_lock(&w->mu);
        if (--w->pending == 0) pthread_cond_signal(&w->done);
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

dlp_nn_workers *dlp_nn_workers_new(int n_threads) {
    if (n_threads < 1) n_threads = 1;
    if (n_threads > NN_MAX_THREADS) n_threads = NN_MAX_THREADS;
    dlp_nn_workers *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    if (pthread_mutex_init(&w->mu, NULL)) { free(w); return NULL; }
    if (pthread_cond_init(&w->go, NULL)) {
        pthread_mutex_destroy(&w->mu); free(w); return NULL;
    }
    if (pthread_cond_init(&w->done, NULL)) {
        pthread_cond_destroy(&w->go); pthread_mutex_destroy(&w->mu); free(w); return NULL;
    }
    for (int t = 1; t < n_threads; t++) {
        nn_worker_arg *a = malloc(sizeof *a);
        if (!a) break;
        a->w = w;
        a->id = t;
        if (pthread_create(&w->tid[t], NULL, nn_worker_main, a) != 0) {
            free(a);
            break; /* fewer workers: runs do the missing chunks themselves */
        }
        w->n_started = t;
    }
    return w;
}

void dlp_nn_workers_delete(dlp_nn_workers *w) {
    if (!w) return;
    pthread_mutex_lock(&w->mu);
    w->quit = true;
    pthread_cond_broadcast(&w->go);
    pthread_mutex_unlock(&w->mu);
    for (int t = 1; t <= w->n_started; t++) pthread_join(w->tid[t], NULL);
    pthread_cond_destroy(&w->done);
    pthread_cond_destroy(&w->go);
    pthread_mutex_destroy(&w->mu);
    free(w);
}

int dlp_nn_workers_count(const dlp_nn_workers *w) {
    return w ? w->n_started + 1 : 1;
}

void dlp_nn_workers_run(dlp_nn_workers *w, int n_threads, int n,
                        dlp_nn_range_fn fn, void *ctx) {
    if (n <= 0) return;
    if (n_threads > NN_MAX_THREADS) n_threads = NN_MAX_THREADS;
    if (n_threads > n) n_threads = n;
    if (n_threads <= 1) {
        fn(ctx, 0, n);
        return;
    }
    if (!w || w->n_started == 0) {
        dlp_nn_parallel_for(n_threads, n, fn, ctx);
        return;
    }
    int workers = w->n_started < n_threads - 1 ? w->n_started : n_threads - 1;
    pthread_mutex_lock(&w->mu);
    w->fn = fn;
    w->ctx = ctx;
    w->n = n;
    w->n_threads = n_threads;
    w->pending = w->n_started; /* every worker wakes and reports */
    w->gen++;
    pthread_cond_broadcast(&w->go);
    pthread_mutex_unlock(&w->mu);
    fn(ctx, 0, (int)((int64_t)n / n_threads));
    /* chunks of threads the pool lacks run here, in order */
    for (int t = workers + 1; t < n_threads; t++)
        fn(ctx, (int)((int64_t)n * t / n_threads), (int)((int64_t)n * (t + 1) / n_threads));
    pthread_mutex_lock(&w->mu);
    while (w->pending > 0) pthread_cond_wait(&w->done, &w->mu);
    pthread_mutex_unlock(&w->mu);
}
