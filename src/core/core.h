/*
 * core.h — internal to libdlperf (not installed). Error reporting, a bump
 * arena, checked integer arithmetic and an interning string map shared by
 * every module.
 */
#ifndef DLP_CORE_H
#define DLP_CORE_H

#include "dlperf.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Fills err (may be NULL) with code and a printf-style message; returns code. */
dlp_status dlp_fail(dlp_error *err, dlp_status code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Invariants of our own code (never outside input): abort with file:line. */
#define DLP_ASSERT(x)                                                        \
    do {                                                                     \
        if (!(x)) dlp_assert_fail(#x, __FILE__, __LINE__);                   \
    } while (0)
/* Reads the next line of a text file into buf[cap] without its line end
 * ("\n", "\r\n"), counting it in *ln. *got is false at the end of the
 * file. A line that does not fit is DLP_ERR_FORMAT "path:N: line too long". */
dlp_status dlp_read_line(FILE *fp, char *buf, size_t cap,
                         const char *path, int *ln, bool *got, dlp_error *err);
/* path mapped read-only (file_map.c): *bytes NULL and *len 0 for an empty
 * file; errors name the path (cannot open / stat / map, not a regular
 * file, too large). dlp_file_unmap(NULL, 0) does nothing. */
dlp_status dlp_file_map(const char *path, const void **bytes, size_t *len,
                        dlp_error *err);
void dlp_file_unmap(const void *bytes, size_t len);
/* path read whole into one malloc'd block (*bytes, the caller frees it):
 * for readers of every byte; the same errors (cannot read, a short
 * read) and an empty file as dlp_file_map, and DLP_ERR_LIMIT for a file
 * of more than max bytes, refused before it is read. */
dlp_status dlp_file_read_all(const char *path, size_t max, void **bytes,
                             size_t *len, dlp_error *err);

/* The names in directory dir (dir_list.c) that pass f, sorted by strcmp,
 * each and the array malloc'd (dlp_dir_list_free): names starting with '.'
 * never, others when they end with f->suffix, contain f->contains (NULL:
 * any) and, with f->dirs_only, are directories. DLP_ERR_NOT_FOUND when dir
 * does not exist, DLP_ERR_IO when it cannot be read; both name it. */
typedef struct {
    const char *suffix;     /* e.g. ".dlpm"; NULL: any */
    const char *contains;   /* NULL: any */
    bool dirs_only;
} dlp_dir_filter;
dlp_status dlp_dir_list(const char *dir, const dlp_dir_filter *f,
                        char ***names, int *n, dlp_error *err);
void dlp_dir_list_free(char **names, int n);

/* Runs item(ctx, i) for each i in [0, n) on up to n_threads threads
 * (parallel_each.c; the caller's is one) that claim the next index from a
 * shared counter, for items of uneven cost. An item returning false stops
 * the run: no index is claimed after it (those already running finish),
 * and the call returns false. Each index runs at most once, on whichever
 * thread claims it: an item that writes only its own results gives the
 * same results for any thread count. A thread that cannot start leaves
 * its share to the others. */
typedef bool (*dlp_item_fn)(void *ctx, int i);
bool dlp_parallel_each(int n_threads, int n, dlp_item_fn item, void *ctx);

/* Seconds on the monotonic clock (clock.c): differences time a run. */
double dlp_now_s(void);

void dlp_assert_fail(const char *expr, const char *file, int line)
    __attribute__((noreturn));

/* Reads a "key,value" text file (kv_file.c): '#' comments and blank lines
 * skipped, first "format,<format>", then numbers. For each keys[i] (a
 * NULL-terminated list of at most 32) found, vals[i] gets its value and bit
 * i of *have is set; unknown keys are skipped. DLP_ERR_IO when the file
 * cannot be opened, DLP_ERR_FORMAT naming file and line when malformed. */
dlp_status dlp_kv_read(const char *path, const char *format,
                       const char *const *keys, double *vals, uint32_t *have,
                       dlp_error *err);
/* Writes such a file: comment (may be NULL; its own '#' lines), the format
 * line, then keys[i],vals[i] for the NULL-terminated keys (%.17g: read back
 * exactly). DLP_ERR_IO naming the file. */
dlp_status dlp_kv_write(const char *path, const char *comment,
                        const char *format, const char *const *keys,
                        const double *vals, dlp_error *err);

/* ---- checked arithmetic: false on overflow ----------------------------- */
static inline bool dlp_mul_i64(int64_t a, int64_t b, int64_t *out) {
    return !__builtin_mul_overflow(a, b, out);
}
static inline bool dlp_add_i64(int64_t a, int64_t b, int64_t *out) {
    return !__builtin_add_overflow(a, b, out);
}

/* ---- arena: many small allocations, one free --------------------------- */
/* Blocks are chained; allocation fails (NULL) once `limit` bytes have been
 * handed out, so hostile input cannot make us allocate without bound. */
typedef struct dlp_arena_block dlp_arena_block;
typedef struct {
    dlp_arena_block *head;
    size_t used_total;   /* bytes handed out so far */
    size_t limit;        /* 0 = default limit (DLP_ARENA_DEFAULT_LIMIT) */
} dlp_arena;

#define DLP_ARENA_DEFAULT_LIMIT ((size_t)4 << 30) /* 4 GiB */

void *dlp_arena_alloc(dlp_arena *a, size_t n);        /* zeroed, 16-aligned */
void *dlp_arena_calloc(dlp_arena *a, size_t n, size_t size); /* overflow-checked */
char *dlp_arena_strndup(dlp_arena *a, const char *s, size_t n);
char *dlp_arena_strdup(dlp_arena *a, const char *s);
void dlp_arena_free(dlp_arena *a);                    /* frees every block */

/* ---- growable array of anything (malloc-backed) ------------------------ */
/* Grows *ptr to hold at least `need` items of `size` bytes; false on OOM or
 * overflow. *cap is updated. */
bool dlp_grow(void **ptr, size_t *cap, size_t need, size_t size);

/* ---- order statistics of doubles --------------------------------------- */
/* qsort's ascending order of doubles; the p-quantile (0..1) of an already
 * sorted v[n], linearly interpolated between neighbours (NAN when n is 0). */
int dlp_cmp_double(const void *a, const void *b);
double dlp_quantile_sorted(const double *v, size_t n, double p);
/* the same of v[n] in any order: sorts v in place first */
double dlp_quantile(double *v, size_t n, double p);
/* A value x with weight w >= 0. dlp_weighted_median sorts v[n] by x and
 * returns the first x whose cumulative weight reaches half the total (the
 * minimizer of sum w |c - x|, a convex piecewise-linear function of c:
 * the MAPE calibration factor, the host file's energy gamma); NAN when n
 * is 0. */
typedef struct {
    double x, w;
} dlp_wpoint;
double dlp_weighted_median(dlp_wpoint *v, size_t n);

/* ---- string -> int map (open addressing, keys not copied) -------------- */
typedef struct {
    const char **keys;
    size_t *lens;
    uint64_t *hashes; /* kept so growing never hashes a key again */
    int *vals;
    size_t cap;   /* power of two */
    size_t count;
} dlp_strmap;

bool dlp_strmap_init(dlp_strmap *m, size_t expected);
void dlp_strmap_free(dlp_strmap *m);
/* Returns the value or -1. */
int dlp_strmap_get(const dlp_strmap *m, const char *key, size_t len);
/* Inserts or replaces; false on OOM. */
bool dlp_strmap_put(dlp_strmap *m, const char *key, size_t len, int val);
/* The value of s, or a new one, *count (then incremented), with s copied
 * into a (names numbered 0, 1, ... in first-seen order); -1 on OOM. */
int dlp_strmap_intern(dlp_strmap *m, dlp_arena *a, const char *s, int *count);

/* ---- warnings: a de-duplicated list of one-line messages --------------- */
typedef struct {
    char **msgs;
    size_t n, cap;
    size_t dropped;   /* beyond DLP_MAX_WARNINGS */
} dlp_warnings;

#define DLP_MAX_WARNINGS 1000
/* Adds a warning unless an identical one exists; silently drops on OOM. */
void dlp_warn(dlp_warnings *w, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void dlp_warnings_free(dlp_warnings *w);

#endif /* DLP_CORE_H */
