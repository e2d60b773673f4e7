/*
 * load_bench.c — the cost of loading a predictor file, and whether two
 * model directories predict the same numbers (for a file re-encoded by
 * `dlperf tree convert`: XGBoost boosters as UBJSON instead of JSON).
 *
 *   load_bench time FILE.dlpm [REPS]
 *       loads the file REPS times (default 10) in this process: the first
 *       load (libxgboost opened on first use, as in a `dlperf predict`
 *       process) and the median / min of the others, wall and CPU ms.
 *   load_bench same DIR_A DIR_B MODEL.onnx...
 *       predicts every model with both directories over devices (H100,
 *       H200), precisions (fp32, fp16, bf16), runtimes (graph, eager) and
 *       batches (1, 8, 32); prints how many figures were compared and how
 *       many differ (bit for bit). Exit 1 when any differs.
 *
 * Build: cc -O2 -Iinclude -Isrc bench/load_bench.c build/libdlperf.a
 *        -lcjson -lzstd -lz -lxgboost -lm -lpthread -o build/load_bench
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "dlperf.h"
#include "pred/pred.h"
#include "predict/predict.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static double wall_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

static double cpu_ms(void) {
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e3 +
           (u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-3;
}

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int time_load(const char *path, int reps) {
    double *w = calloc((size_t)reps, sizeof *w), *c = calloc((size_t)reps, sizeof *c);
    if (!w || !c) return 1;
    for (int i = 0; i < reps; i++) {
        dlp_error err;
        dlp_predictor *p = NULL;
        double w0 = wall_ms(), c0 = cpu_ms();
        if (dlp_predictor_load(path, dlp_predict_extra_kinds(), &p, &err)) {
            fprintf(stderr, "load_bench: %s\n", err.msg);
            return 1;
        }
        w[i] = wall_ms() - w0;
        c[i] = cpu_ms() - c0;
        dlp_predictor_free(p);
    }
    printf("%s: first load %.1f ms wall, %.1f ms CPU", path, w[0], c[0]);
    if (reps > 1) {
        qsort(w + 1, (size_t)reps - 1, sizeof *w, cmp_d);
        qsort(c + 1, (size_t)reps - 1, sizeof *c, cmp_d);
        printf("; next %d: median %.1f / min %.1f ms wall, median %.1f ms CPU",
               reps - 1, w[1 + (reps - 1) / 2], w[1], c[1 + (reps - 1) / 2]);
    }
    printf("\n");
    free(w);
    free(c);
    return 0;
}

static int same(const char *da, const char *db, int nm, char **models) {
    dlp_error err;
    dlp_predictor_set *a = NULL, *b = NULL;
    if (dlp_predictor_open(da, &a, &err) || dlp_predictor_open(db, &b, &err)) {
        fprintf(stderr, "load_bench: %s\n", err.msg);
        return 1;
    }
    static const char *const devs[] = {"H100", "H200"};
    static const char *const precs[] = {"fp32", "fp16", "bf16"};
    static const char *const rts[] = {"graph", "eager"};
    static const int64_t batches[] = {1, 8, 32};
    long compared = 0, differ = 0, failed = 0;
    for (int k = 0; k < nm; k++)
        for (int d = 0; d < 2; d++)
            for (int p = 0; p < 3; p++)
                for (int r = 0; r < 2; r++)
                    for (int q = 0; q < 3; q++) {
                        dlp_model *m = NULL;
                        if (dlp_model_open(models[k], &m, &err)) {
                            fprintf(stderr, "load_bench: %s\n", err.msg);
                            return 1;
                        }
                        dlp_predict_config c;
                        dlp_predict_config_init(&c);
                        c.device = devs[d];
                        c.precision = precs[p];
                        c.runtime = rts[r];
                        c.batch = batches[q];
                        c.n_dims = 1;
                        c.dim_names[0] = "seq";
                        c.dim_values[0] = 128;
                        c.skip_absent_dims = 1;
                        dlp_predict_result ra, rb;
                        dlp_status sa = dlp_predict(a, m, &c, &ra, &err);
                        dlp_status sb = dlp_predict(b, m, &c, &rb, &err);
                        dlp_model_free(m);
                        if (sa || sb) {
                            failed += (sa != sb);
                            continue;
                        }
                        const dlp_predict_value *va[] = {
                            &ra.latency_ms, &ra.memory_mib, &ra.energy_j,
                            &ra.power_w};
                        const dlp_predict_value *vb[] = {
                            &rb.latency_ms, &rb.memory_mib, &rb.energy_j,
                            &rb.power_w};
                        for (int v = 0; v < 4; v++) {
                            if (!va[v]->valid && !vb[v]->valid) continue;
                            compared++;
                            if (va[v]->valid != vb[v]->valid ||
                                memcmp(&va[v]->value, &vb[v]->value,
                                       sizeof(double)) ||
                                memcmp(&va[v]->lo, &vb[v]->lo, sizeof(double)) ||
                                memcmp(&va[v]->hi, &vb[v]->hi, sizeof(double)))
                                differ++;
                        }
                    }
    printf("%ld figures compared (%d models x 36 configurations), %ld differ, "
           "%ld configurations failed in one directory only\n", compared, nm,
           differ, failed);
    dlp_predictor_close(a);
    dlp_predictor_close(b);
    return differ || failed ? 1 : 0;
}

int main(int argc, char **argv) {
    if (argc >= 3 && !strcmp(argv[1], "time"))
        return time_load(argv[2], argc > 3 ? atoi(argv[3]) : 10);
    if (argc >= 5 && !strcmp(argv[1], "same"))
        return same(argv[2], argv[3], argc - 4, argv + 4);
    fprintf(stderr, "usage: load_bench time FILE [REPS] | same DIR_A DIR_B "
            "MODEL.onnx...\n");
    return 2;
}
