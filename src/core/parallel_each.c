/*
 * parallel_each.c — items of uneven cost (graphs to featurize or
 * annotate, model files to predict) on threads that claim them one at a
 * time from a shared counter, so that one large item does not hold back a
 * thread's whole share as fixed ranges would. The featurizer, the
 * operator-time annotation and `dlperf predict DIR` ran three copies of
 * this loop (eighty-eighth session's review); this is the one.
 */
#include "core.h"

#include <pthread.h>
#include <stdatomic.h>

#define EACH_MAX_THREADS 64

typedef struct {
    dlp_item_fn item;
    void *ctx;
    int n;
    atomic_int next;
    atomic_bool stop;
} each_job;

static void *each_worker(void *arg) {
    each_job *j = arg;
    while (!atomic_load(&j->stop)) {
        int i = atomic_fetch_add(&j->next, 1);
        if (i >= j->n) break;
        if (!j->item(j->ctx, i)) atomic_store(&j->stop, true);
    }
    return NULL;
}

bool dlp_parallel_each(int n_threads, int n, dlp_item_fn item, void *ctx) {
    each_job j = {.item = item, .ctx = ctx, .n = n};
    atomic_init(&j.next, 0);
    atomic_init(&j.stop, false);
    if (n_threads > EACH_MAX_THREADS) n_threads = EACH_MAX_THREADS;
    if (n_threads > n) n_threads = n;
    pthread_t tid[EACH_MAX_THREADS];
    int started = 0;
    for (int t = 1; t < n_threads; t++)
        if (pthread_create(&tid[started], NULL, each_worker, &j) == 0)
            started++;
    each_worker(&j);   /* the caller is one of them; alone if none started */
    for (int t = 0; t < started; t++) pthread_join(tid[t], NULL);
    return !atomic_load(&j.stop);
}
