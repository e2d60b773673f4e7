/* test_parallel.c — dlp_parallel_each (src/core/parallel_each.c): every
 * index runs exactly once for any thread count, results written per index
 * do not depend on it, an item returning false stops the run, and the
 * edge counts (no items, more threads than items, no threads). */
#include "check.h"
#include "core/core.h"

#include <stdatomic.h>
#include <stdint.h>

#define N 5000

typedef struct {
    atomic_int runs[N];
    uint64_t out[N];
    int stop_at;          /* the item that returns false; -1: none */
    atomic_int n_run;
} job;

/* uneven items: index i loops i % 97 times */
static bool item(void *ctx, int i) {
    job *j = ctx;
    atomic_fetch_add(&j->runs[i], 1);
    atomic_fetch_add(&j->n_run, 1);
    uint64_t h = (uint64_t)i * 0x9e3779b97f4a7c15ull;
    for (int k = 0; k < i % 97; k++) h = h * 6364136223846793005ull + 1442695040888963407ull;
    j->out[i] = h;
    return i != j->stop_at;
}

static job *new_job(int stop_at) {
    job *j = calloc(1, sizeof *j);
    for (int i = 0; i < N; i++) atomic_init(&j->runs[i], 0);
    atomic_init(&j->n_run, 0);
    j->stop_at = stop_at;
    return j;
}

static void test_each_once_any_threads(void) {
    job *ref = new_job(-1);
    CHECK(dlp_parallel_each(1, N, item, ref));
    int threads[] = {2, 3, 8, 64, 1000};
    for (size_t t = 0; t < sizeof threads / sizeof *threads; t++) {
        job *j = new_job(-1);
        CHECK(dlp_parallel_each(threads[t], N, item, j));
        int bad = 0;
        for (int i = 0; i < N; i++)
            bad += atomic_load(&j->runs[i]) != 1 || j->out[i] != ref->out[i];
        CHECK_MSG(bad == 0, "%d threads: %d indices not run once or differing",
                  threads[t], bad);
        free(j);
    }
    free(ref);
}

static void test_stop(void) {
    /* one thread: the indices after the stopping one never run */
    job *j = new_job(100);
    CHECK(!dlp_parallel_each(1, N, item, j));
    CHECK(atomic_load(&j->n_run) == 101);
    CHECK(atomic_load(&j->runs[100]) == 1 && atomic_load(&j->runs[101]) == 0);
    free(j);
    /* several: false, each index at most once, and the run ends early
     * (the others stop claiming once they see it: at most one claim each
     * after the stop) */
    j = new_job(10);
    CHECK(!dlp_parallel_each(4, N, item, j));
    int twice = 0;
    for (int i = 0; i < N; i++) twice += atomic_load(&j->runs[i]) > 1;
    CHECK(twice == 0);
    CHECK(atomic_load(&j->runs[10]) == 1);
    CHECK_MSG(atomic_load(&j->n_run) < N, "%d of %d ran", atomic_load(&j->n_run), N);
    free(j);
}

static void test_edges(void) {
    job *j = new_job(-1);
    CHECK(dlp_parallel_each(4, 0, item, j));      /* no items: nothing runs */
    CHECK(atomic_load(&j->n_run) == 0);
    CHECK(dlp_parallel_each(0, 3, item, j));      /* no threads: the caller's */
    CHECK(dlp_parallel_each(-2, 3, item, j));
    CHECK(dlp_parallel_each(16, 1, item, j));     /* more threads than items */
    CHECK(atomic_load(&j->n_run) == 7);
    CHECK(atomic_load(&j->runs[0]) == 3 && atomic_load(&j->runs[2]) == 2 &&
          atomic_load(&j->runs[3]) == 0);
    free(j);
}

int main(void) {
    RUN(test_each_once_any_threads);
    RUN(test_stop);
    RUN(test_edges);
    return CHECK_DONE();
}
