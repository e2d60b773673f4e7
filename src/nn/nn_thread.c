/* nn_thread.c — the engine's one source of parallelism besides OpenBLAS: a
 * fork-join loop over contiguous index ranges on pthreads. Ranges are fixed
 * by (n, n_threads) and every index is owned by one thread, so kernels that
 * write only their own rows give bit-identical results for any count. */
#include "nn.h"

#include "nn_blas.h"
#include <pthread.h>
#include <stdlib.h>

#define NN_MAX_THREADS 64

static int nn_n_threads = 1; /* set by dlp_nn_set_threads; read-only else */

void dlp_nn_set_threads(int n) {
    if (n < 1) n = 1;
    if (n > NN_MAX_THREADS) n = NN_MAX_THREADS;
    nn_n_threads = n;
    dlp_nn_blas_set_threads(n);
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
 * n-1 threads started once and parked on a condition variable. A run
 * publishes (fn, ctx, n, n_threads) under the mutex and wakes them; chunks
 * (the same fixed ranges as dlp_nn_parallel_for's) are then claimed one at a
 * time, under the mutex, by whichever thread is free: the caller runs chunk
 * 0 and then claims what is left, so on a busy machine it never sits waiting
 * for a worker the scheduler has not woken yet; it waits only for chunks a
 * worker has actually started. Who runs a chunk never changes its values. */
struct dlp_nn_workers {
    pthread_mutex_t mu;
    pthread_cond_t go, done;
    pthread_t tid[NN_MAX_THREADS];
    int n_started;       /* worker threads running */
    bool quit;
    dlp_nn_range_fn fn;  /* the current run */
    void *ctx;
    int n, n_threads;
    int next;            /* next unclaimed chunk (n_threads: none left) */
    int finished;        /* chunks done */
};

static void nn_chunk(const dlp_nn_workers *w, int t, int *lo, int *hi) {
    *lo = (int)((int64_t)w->n * t / w->n_threads);
    *hi = (int)((int64_t)w->n * (t + 1) / w->n_threads);
}

static void *nn_worker_main(void *varg) {
    dlp_nn_workers *w = varg;
    pthread_mutex_lock(&w->mu);
    for (;;) {
        while (!w->quit && w->next >= w->n_threads) pthread_cond_wait(&w->go, &w->mu);
        if (w->quit) break;
        int t = w->next++, lo, hi;
        nn_chunk(w, t, &lo, &hi);
        dlp_nn_range_fn fn = w->fn;
        void *ctx = w->ctx;
        pthread_mutex_unlock(&w->mu);
        fn(ctx, lo, hi);
        pthread_mutex_lock(&w->mu);
        if (++w->finished == w->n_threads) pthread_cond_signal(&w->done);
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
        if (pthread_create(&w->tid[w->n_started], NULL, nn_worker_main, w) != 0)
            break; /* fewer workers: the caller claims more chunks */
        w->n_started++;
    }
    return w;
}

void dlp_nn_workers_delete(dlp_nn_workers *w) {
    if (!w) return;
    pthread_mutex_lock(&w->mu);
    w->quit = true;
    pthread_cond_broadcast(&w->go);
    pthread_mutex_unlock(&w->mu);
    for (int t = 0; t < w->n_started; t++) pthread_join(w->tid[t], NULL);
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
    if (!w) {
        dlp_nn_parallel_for(n_threads, n, fn, ctx);
        return;
    }
    int lo, hi;
    pthread_mutex_lock(&w->mu);
    w->fn = fn;
    w->ctx = ctx;
    w->n = n;
    w->n_threads = n_threads;
    w->next = 1; /* chunk 0 is the caller's */
    w->finished = 0;
    nn_chunk(w, 0, &lo, &hi);
    if (w->n_started > 0) pthread_cond_broadcast(&w->go);
    pthread_mutex_unlock(&w->mu);
    fn(ctx, lo, hi);
    pthread_mutex_lock(&w->mu);
    w->finished++;
    while (w->next < w->n_threads) { /* help with what nobody has taken */
        int t = w->next++;
        nn_chunk(w, t, &lo, &hi);
        pthread_mutex_unlock(&w->mu);
        fn(ctx, lo, hi);
        pthread_mutex_lock(&w->mu);
        w->finished++;
    }
    while (w->finished < w->n_threads) pthread_cond_wait(&w->done, &w->mu);
    pthread_mutex_unlock(&w->mu);
}
