/*
 * check.h — the test harness: one binary per tests/test_*.c, each test a
 * function run by RUN(); a test passes when none of its CHECKs failed. The
 * binary ends with the line "N passed, N failed" and exits non-zero on any
 * failure. scripts/run_tests.sh adds up every binary's line.
 */
#ifndef DLP_CHECK_H
#define DLP_CHECK_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int check_passed, check_failed, check_cur_failed;
static const char *check_cur_name;

/* The whole file at path, NUL-terminated, its length in *len (len may be
 * NULL); NULL when it cannot be read. The caller frees it. */
static inline char *check_slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    if (b) b[n] = 0;
    fclose(f);
    if (b && len) *len = (size_t)n;
    return b;
}

#define CHECK(cond)                                                          \
    do {                                                                     \
        if (!(cond)) {                                                       \
            fprintf(stderr, "  FAIL %s: %s (%s:%d)\n", check_cur_name,       \
                    #cond, __FILE__, __LINE__);                              \
            check_cur_failed = 1;                                            \
        }                                                                    \
    } while (0)

#define CHECK_MSG(cond, ...)                                                 \
    do {                                                                     \
        if (!(cond)) {                                                       \
            fprintf(stderr, "  FAIL %s: %s (%s:%d): ", check_cur_name,       \
                    #cond, __FILE__, __LINE__);                              \
            fprintf(stderr, __VA_ARGS__);                                    \
            fputc('\n', stderr);                                             \
            check_cur_failed = 1;                                            \
        }                                                                    \
    } while (0)

/* |a-b| <= tol * max(1, |b|) */
#define CHECK_CLOSE(a, b, tol)                                               \
    CHECK_MSG(fabs((double)(a) - (double)(b)) <=                             \
                  (tol) * fmax(1.0, fabs((double)(b))),                      \
              "%.9g vs %.9g", (double)(a), (double)(b))

#define RUN(fn)                                                              \
    do {                                                                     \
        check_cur_name = #fn;                                                \
        check_cur_failed = 0;                                                \
        fn();                                                                \
        if (check_cur_failed) {                                              \
            check_failed++;                                                  \
            fprintf(stderr, "not ok %s\n", #fn);                             \
        } else {                                                             \
            check_passed++;                                                  \
            printf("ok %s\n", #fn);                                          \
        }                                                                    \
    } while (0)

#define CHECK_DONE()                                                         \
    (printf("%d passed, %d failed\n", check_passed, check_failed),           \
     check_failed ? 1 : 0)

#endif
