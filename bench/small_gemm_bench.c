/*
 * small_gemm_bench.c — the product a prediction runs, C = A B^T (X[N,I]
 * W[O,I]^T), by src/nn/nn_small_gemm.c and by OpenBLAS (the library
 * src/nn/nn_blas.c opens: the build's private copy, one thread, as
 * `dlperf predict` would run it) side by side, in one process:
 *   1. what opening the library and its first product cost (the part a
 *      one-graph `dlperf predict` no longer pays);
 *   2. per shape, warm: microseconds per product for each, GFLOP/s, the
 *      ratio small / OpenBLAS, and the largest difference of the results.
 * Shapes: those of the shipped DIPPM (hidden 64) on ResNet-50 (169 nodes)
 * and on the 2,000-node transformer of bench/predict_bench.py, the 1-row
 * readout layers, and a training-sized one for contrast.
 *
 * Build and run (from the repository root, after `make`):
 *   cc -O2 -Iinclude -Isrc bench/small_gemm_bench.c build/libdlperf.a \
 *      $(pkg-config --libs libcjson libzstd zlib) -lm -lpthread -ldl \
 *      -o build/small_gemm_bench && build/small_gemm_bench
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "nn/nn_blas.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static float *randf(size_t n, unsigned *s) {
    float *p = malloc(n * sizeof *p);
    for (size_t i = 0; p && i < n; i++) {
        *s = *s * 1103515245u + 12345u;
        p[i] = ((*s >> 8) & 0xffff) / 32768.0f - 1.0f;
    }
    return p;
}

int main(void) {
    if (!dlp_nn_small_gemm_available()) {
        printf("this CPU lacks AVX2/FMA: the small kernel is the reference loop here\n");
    }
    unsigned seed = 1;
    float *A = randf(4000 * 400, &seed), *B = randf(128 * 400, &seed);
    float *C1 = malloc(4000 * 128 * sizeof *C1), *C2 = malloc(4000 * 128 * sizeof *C2);
    if (!A || !B || !C1 || !C2) return 1;

    double t0 = now();
    bool ok = dlp_nn_blas_loaded();
    double t1 = now();
    dlp_nn_blas_lib_sgemm(false, true, 169, 64, 112, 1, A, 112, B, 112, 0, C1, 64);
    double t2 = now();
    printf("OpenBLAS (%s): open %.2f ms, first 169x64x112 product %.2f ms\n",
           ok ? dlp_nn_blas_name() : "none found", (t1 - t0) * 1e3, (t2 - t1) * 1e3);

    static const int shapes[][3] = {{169, 64, 112}, {169, 64, 64}, {1, 64, 122},
                                    {1, 4, 64},     {20, 64, 64},  {1987, 64, 112},
                                    {1987, 64, 64}, {500, 64, 300}, {4000, 128, 128}};
    printf("%6s %4s %4s %12s %12s %9s %9s %8s %9s\n", "M", "N", "K", "small us",
           "openblas us", "small GF", "blas GF", "ratio", "max diff");
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
        int M = shapes[s][0], N = shapes[s][1], K = shapes[s][2];
        double flop = 2.0 * M * N * K;
        int reps = (int)(4e8 / flop) + 3;
        dlp_nn_small_sgemm_nt(M, N, K, 1, A, K, B, K, 0, C1, N);
        dlp_nn_blas_lib_sgemm(false, true, M, N, K, 1, A, K, B, K, 0, C2, N);
        double best_s = 1e9, best_b = 1e9;
        for (int round = 0; round < 5; round++) { /* interleaved, best round */
            double a = now();
            for (int r = 0; r < reps; r++)
                dlp_nn_small_sgemm_nt(M, N, K, 1, A, K, B, K, 0, C1, N);
            double b = now();
            for (int r = 0; r < reps; r++)
                dlp_nn_blas_lib_sgemm(false, true, M, N, K, 1, A, K, B, K, 0, C2, N);
            double c = now();
            if ((b - a) / reps < best_s) best_s = (b - a) / reps;
            if ((c - b) / reps < best_b) best_b = (c - b) / reps;
        }
        double md = 0;
        for (int i = 0; i < M * N; i++) md = fmax(md, fabs((double)C1[i] - C2[i]));
        printf("%6d %4d %4d %12.2f %12.2f %9.1f %9.1f %8.2f %9.1e\n", M, N, K,
               best_s * 1e6, best_b * 1e6, flop / best_s / 1e9, flop / best_b / 1e9,
               best_s / best_b, md);
    }
    free(A); free(B); free(C1); free(C2);
    return 0;
}
