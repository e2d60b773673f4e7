/*
 * nn_bench.c — the C side of bench/nn_bench.py: times the DIPPM-style model
 * of src/nn on a graph set written by the script (same graphs, features,
 * targets, batches and initial weights as the PyTorch side).
 *
 *   nn_bench train DATA BATCHES THREADS HIDDEN STEPS   -> graphs/s
 *   nn_bench infer DATA THREADS HIDDEN REPS GRAPH       -> ms per forward
 *
 * DATA: int32 n_graphs, in_dim, static_dim; per graph int32 n_nodes,
 * n_edges, src[E], dst[E], float32 x[N*in_dim], st[static_dim], y.
 * BATCHES: int32 n_batches, batch_size, then the graph ids of each batch.
 */
#define _GNU_SOURCE
#include "nn/nn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
    int n, in_dim, sdim;
    dlp_nn_graph_desc *d;
    float **x, **st, *y;
} dataset;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

/* CPU time of the whole process (all threads): robust against other jobs
 * taking the cores away, unlike wall time */
static double cpu_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static void rd(void *p, size_t sz, size_t n, FILE *f) {
    if (fread(p, sz, n, f) != n) { fprintf(stderr, "nn_bench: short data file\n"); exit(1); }
}

static void *xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) { fprintf(stderr, "nn_bench: out of memory\n"); exit(1); }
    return p;
}

static dataset load(const char *path) {
    dataset D;
    FILE *f = fopen(path, "rb");
    if (!f) { perror(path); exit(1); }
    int32_t h[3];
    rd(h, 4, 3, f);
    D.n = h[0]; D.in_dim = h[1]; D.sdim = h[2];
    D.d = xmalloc(sizeof *D.d * D.n);
    D.x = xmalloc(sizeof *D.x * D.n);
    D.st = xmalloc(sizeof *D.st * D.n);
    D.y = xmalloc(sizeof *D.y * D.n);
    for (int g = 0; g < D.n; g++) {
        int32_t ne[2];
        rd(ne, 4, 2, f);
        int32_t *s = xmalloc(4 * (size_t)ne[1]), *d = xmalloc(4 * (size_t)ne[1]);
        rd(s, 4, ne[1], f);
        rd(d, 4, ne[1], f);
        D.d[g] = (dlp_nn_graph_desc){ne[0], ne[1], s, d, NULL};
        D.x[g] = xmalloc(4 * (size_t)ne[0] * D.in_dim);
        rd(D.x[g], 4, (size_t)ne[0] * D.in_dim, f);
        D.st[g] = xmalloc(4 * (size_t)D.sdim);
        rd(D.st[g], 4, D.sdim, f);
        rd(&D.y[g], 4, 1, f);
    }
    fclose(f);
    return D;
}

static dlp_nn_sage_model make_model(const dataset *D, int hidden) {
    dlp_nn_sage_model m;
    dlp_nn_sage_model_cfg cfg = {D->in_dim, hidden, 3, D->sdim, 3, hidden, 1,
                                 DLP_NN_POOL_MEAN, false};
    dlp_error err;
    if (dlp_nn_sage_model_init(&m, &cfg, 1, &err)) { fprintf(stderr, "%s\n", err.msg); exit(1); }
    return m;
}

/* gathers features of the batch's graphs, in batch order */
static void gather(const dataset *D, const int32_t *ids, int B, const dlp_nn_graph *g,
                   float *x, float *st, float *y) {
    for (int k = 0; k < B; k++) {
        int gi = ids[k];
        memcpy(x + (size_t)g->graph_ptr[k] * D->in_dim, D->x[gi],
               4 * (size_t)D->d[gi].n_nodes * D->in_dim);
        memcpy(st + (size_t)k * D->sdim, D->st[gi], 4 * (size_t)D->sdim);
        y[k] = D->y[gi];
    }
}

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: see nn_bench.c\n"); return 2; }
    dlp_error err;
    if (!strcmp(argv[1], "train") && argc == 7) {
        dataset D = load(argv[2]);
        FILE *f = fopen(argv[3], "rb");
        if (!f) { perror(argv[3]); return 1; }
        int32_t hb[2];
        rd(hb, 4, 2, f);
        int nb = hb[0], B = hb[1];
        int32_t *ids = xmalloc(4 * (size_t)nb * B);
        rd(ids, 4, (size_t)nb * B, f);
        fclose(f);
        int threads = atoi(argv[4]), hidden = atoi(argv[5]), steps = atoi(argv[6]);
        dlp_nn_set_threads(threads);
        dlp_nn_sage_model m = make_model(&D, hidden);
        dlp_nn_opt o = dlp_nn_opt_default(DLP_NN_ADAM, 1e-3);
        double t0 = 0, c0 = 0, loss = 0, first = 0;
        long graphs = 0;
        for (int s = 0; s <= steps; s++) { /* step 0 is a warm-up */
            if (s == 1) { t0 = now(); c0 = cpu_now(); }
            const int32_t *bid = ids + (size_t)(s % nb) * B;
            dlp_nn_graph g;
            if (dlp_nn_graph_build(&g, D.d, bid, B, 0, &err)) { fprintf(stderr, "%s\n", err.msg); return 1; }
            float *x = xmalloc(4 * (size_t)g.n_nodes * D.in_dim), *st = xmalloc(4 * (size_t)B * D.sdim),
                  *y = xmalloc(4 * (size_t)B);
            gather(&D, bid, B, &g, x, st, y);
            if (dlp_nn_sage_model_train_step(&m, &g, x, st, y, &o, 0, &loss, &err)) {
                fprintf(stderr, "%s\n", err.msg); return 1;
            }
            if (s == 0) first = loss;
            if (s > 0) graphs += B;
            free(x); free(st); free(y);
            dlp_nn_graph_free(&g);
        }
        double dt = now() - t0, dc = cpu_now() - c0;
        printf("c train graphs_per_s=%.2f cpu_graphs_per_s=%.2f steps=%d batch=%d "
               "first_loss=%.6g last_loss=%.6g\n", graphs / dt, graphs / dc, steps, B, first, loss);
        dlp_nn_sage_model_free(&m);
        return 0;
    }
    if (!strcmp(argv[1], "infer") && argc == 7) {
        dataset D = load(argv[2]);
        int threads = atoi(argv[3]), hidden = atoi(argv[4]), reps = atoi(argv[5]);
        int gi = atoi(argv[6]);
        dlp_nn_set_threads(threads);
        dlp_nn_sage_model m = make_model(&D, hidden);
        int32_t id = gi;
        dlp_nn_graph g;
        float out;
        double *t = xmalloc(sizeof *t * reps), *tc = xmalloc(sizeof *tc * reps);
        for (int r = -3; r < reps; r++) {
            double t0 = now(), c0 = cpu_now();
            /* the predict path: batch one graph, forward */
            if (dlp_nn_graph_build(&g, D.d, &id, 1, 0, &err) ||
                dlp_nn_sage_model_forward(&m, &g, D.x[gi], D.st[gi], &out, &err)) {
                fprintf(stderr, "%s\n", err.msg); return 1;
            }
            dlp_nn_graph_free(&g);
            if (r >= 0) { t[r] = now() - t0; tc[r] = cpu_now() - c0; }
        }
        /* medians */
        for (int i = 1; i < reps; i++)
            for (int j = i; j > 0 && t[j] < t[j - 1]; j--) { double s = t[j]; t[j] = t[j - 1]; t[j - 1] = s; }
        for (int i = 1; i < reps; i++)
            for (int j = i; j > 0 && tc[j] < tc[j - 1]; j--) { double s = tc[j]; tc[j] = tc[j - 1]; tc[j - 1] = s; }
        printf("c infer median_ms=%.4f min_ms=%.4f cpu_median_ms=%.4f nodes=%d out=%.6g\n",
               t[reps / 2] * 1e3, t[0] * 1e3, tc[reps / 2] * 1e3, D.d[gi].n_nodes, out);
        dlp_nn_sage_model_free(&m);
        return 0;
    }
    fprintf(stderr, "usage: see nn_bench.c\n");
    return 2;
}
