/*
 * pagefault.c — what first touching fresh memory costs on this machine, in
 * 4 KB pages against 2 MB transparent huge pages: the reason `dlperf
 * predict` puts its heap on huge pages (src/cli/cli_heap.c).
 *
 *   pagefault [MB] [REPS]
 *       REPS times (default 5): maps MB (default 4) of anonymous memory
 *       and writes one byte per 4 KB page, once plainly and once in a
 *       2 MB-aligned range advised MADV_HUGEPAGE; prints both times, the
 *       ratio, and the transparent-huge-page mode of the kernel. The first
 *       repetition may include the kernel compacting memory for huge pages.
 *
 * Build: cc -O2 bench/pagefault.c -o build/pagefault
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define HUGE_PAGE ((uintptr_t)2 << 20)

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

/* microseconds to write one byte per 4 KB page of a fresh n-byte mapping,
 * advised MADV_HUGEPAGE when huge; -1 when the mapping fails */
static double touch(size_t n, int huge) {
    size_t len = n + (huge ? HUGE_PAGE : 0);
    char *m = mmap(NULL, len, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return -1;
    char *p = m;
    double t0 = now_us();
    if (huge) {
        p = (char *)(((uintptr_t)m + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1));
        (void)madvise(p, n, MADV_HUGEPAGE);
    }
    for (size_t i = 0; i < n; i += 4096) p[i] = 1;
    double t = now_us() - t0;
    munmap(m, len);
    return t;
}

int main(int argc, char **argv) {
    long mb = argc > 1 ? atol(argv[1]) : 4;
    int reps = argc > 2 ? atoi(argv[2]) : 5;
    if (mb < 2 || mb > 4096 || reps < 1 || reps > 1000) {
        fprintf(stderr, "usage: pagefault [MB 2..4096] [REPS 1..1000]\n");
        return 2;
    }
    char mode[128] = "unknown";
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    if (f) {
        if (fgets(mode, sizeof mode, f)) mode[strcspn(mode, "\n")] = 0;
        fclose(f);
    }
    size_t n = (size_t)mb << 20;
    printf("transparent huge pages: %s\n", mode);
    printf("%-4s %12s %12s %8s %14s\n", "rep", "4KB pages", "2MB pages",
           "ratio", "us per 4 KB");
    for (int r = 0; r < reps; r++) {
        double a = touch(n, 0), b = touch(n, 1);
        if (a < 0 || b < 0) {
            fprintf(stderr, "pagefault: mmap of %ld MB failed\n", mb);
            return 1;
        }
        printf("%-4d %9.0f us %9.0f us %7.1fx %14.2f\n", r + 1, a, b,
               b > 0 ? a / b : 0, a / (double)(n / 4096));
    }
    return 0;
}
