/* core.c — errors, arena, growable arrays, quantiles, string map. */
#include "core.h"

#include <math.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *dlp_status_str(dlp_status s) {
    switch (s) {
    case DLP_OK: return "ok";
    case DLP_ERR_ARG: return "bad argument";
    case DLP_ERR_IO: return "I/O error";
    case DLP_ERR_FORMAT: return "malformed input";
    case DLP_ERR_UNSUPPORTED: return "unsupported";
    case DLP_ERR_SHAPE: return "shape error";
    case DLP_ERR_LIMIT: return "limit exceeded";
    case DLP_ERR_NOMEM: return "out of memory";
    case DLP_ERR_GRAPH: return "invalid graph";
    case DLP_ERR_NOT_FOUND: return "not found";
    }
    return "unknown status";
}

dlp_status dlp_fail(dlp_error *err, dlp_status code, const char *fmt, ...) {
    if (err) {
        err->code = code;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return code;
}

void dlp_assert_fail(const char *expr, const char *file, int line) {
    fprintf(stderr, "dlperf: internal assertion failed: %s (%s:%d)\n", expr,
            file, line);
    abort();
}

/* ---- arena ---- */
struct dlp_arena_block {
    dlp_arena_block *next;
    size_t size, used;
    _Alignas(16) unsigned char data[];
};

void *dlp_arena_alloc(dlp_arena *a, size_t n) {
    size_t limit = a->limit ? a->limit : DLP_ARENA_DEFAULT_LIMIT;
    if (n > limit || a->used_total > limit - n) return NULL;
    n = (n + 15) & ~(size_t)15;
    if (n == 0) n = 16;
    dlp_arena_block *b = a->head;
    if (!b || b->size - b->used < n) {
        size_t sz = 64 * 1024;
        if (b && b->size < (16u << 20)) sz = b->size * 2;
        if (sz < n) sz = n;
        b = malloc(sizeof *b + sz);
        if (!b) return NULL;
        b->next = a->head;
        b->size = sz;
        b->used = 0;
        a->head = b;
    }
    void *p = b->data + b->used;
    b->used += n;
    a->used_total += n;
    memset(p, 0, n);
    return p;
}

void *dlp_arena_calloc(dlp_arena *a, size_t n, size_t size) {
    size_t tot;
    if (__builtin_mul_overflow(n, size, &tot)) return NULL;
    return dlp_arena_alloc(a, tot);
}

char *dlp_arena_strndup(dlp_arena *a, const char *s, size_t n) {
    if (n == SIZE_MAX) return NULL;
    char *p = dlp_arena_alloc(a, n + 1);
    if (!p) return NULL;
    if (n) memcpy(p, s, n);
    p[n] = 0;
    return p;
}

char *dlp_arena_strdup(dlp_arena *a, const char *s) {
    return dlp_arena_strndup(a, s, strlen(s));
}

void dlp_arena_free(dlp_arena *a) {
    if (!a) return;
    dlp_arena_block *b = a->head;
    while (b) {
        dlp_arena_block *n = b->next;
        free(b);
        b = n;
    }
    a->head = NULL;
    a->used_total = 0;
}

bool dlp_grow(void **ptr, size_t *cap, size_t need, size_t size) {
    if (need <= *cap) return true;
    size_t nc = *cap ? *cap : 8;
    while (nc < need) {
        if (nc > SIZE_MAX / 2) return false;
        nc *= 2;
    }
    size_t bytes;
    if (__builtin_mul_overflow(nc, size, &bytes)) return false;
    void *p = realloc(*ptr, bytes);
    if (!p) return false;
    *ptr = p;
    *cap = nc;
    return true;
}

int dlp_cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double dlp_quantile_sorted(const double *v, size_t n, double p) {
    if (!n) return NAN;
    double h = (double)(n - 1) * p;
    size_t lo = (size_t)floor(h);
    if (lo + 1 >= n) return v[n - 1];
    return v[lo] + (h - (double)lo) * (v[lo + 1] - v[lo]);
}

double dlp_quantile(double *v, size_t n, double p) {
    if (n) qsort(v, n, sizeof *v, dlp_cmp_double);
    return dlp_quantile_sorted(v, n, p);
}

static int wpoint_cmp(const void *a, const void *b) {
    double x = ((const dlp_wpoint *)a)->x, y = ((const dlp_wpoint *)b)->x;
    return (x > y) - (x < y);
}

double dlp_weighted_median(dlp_wpoint *v, size_t n) {
    if (!n) return NAN;
    qsort(v, n, sizeof *v, wpoint_cmp);
    double total = 0, cum = 0;
    for (size_t j = 0; j < n; j++) total += v[j].w;
    /* the slope of sum w |c - x| at c is (weight below c) - (weight
     * above c): the minimum is where the cumulative weight reaches half */
    for (size_t j = 0; j + 1 < n; j++)
        if ((cum += v[j].w) >= total / 2) return v[j].x;
    return v[n - 1].x;
}

/* ---- string map (SipHash-1-3 with a per-process random key, linear
 * probing). Keys are tensor names from untrusted files: a keyed hash keeps a
 * crafted file of colliding names from turning lookups quadratic. The key
 * only changes slot order, never results (nothing iterates the map). ---- */
#include <pthread.h>
#include <sys/random.h>

static uint64_t sip_k0, sip_k1;
static pthread_once_t sip_once = PTHREAD_ONCE_INIT;

/* Once per process, under pthread_once: the key must not change once a
 * map holds hashes made with it. (It used to be set by whichever thread
 * got there first, unsynchronised; two threads opening their first models
 * at once, as `dlperf predict DIR` does, could each store a different
 * key, and a map filled under one was then searched under the other:
 * "reads tensor 'w0' that no node, input or initializer produces" for
 * about 1 in 50 runs of the 1,000-CNN directory.) */
static void sip_key_init(void) {
    uint64_t k[2] = {0x736f6d6570736575ull, 0x646f72616e646f6dull};
    if (getrandom(k, sizeof k, GRND_NONBLOCK) != (ssize_t)sizeof k) {
        /* no entropy yet: fall back to address-space randomness */
        k[0] ^= (uint64_t)(uintptr_t)&sip_k0;
        k[1] ^= (uint64_t)(uintptr_t)&k;
    }
    sip_k0 = k[0];
    sip_k1 = k[1];
}

static void sip_key(void) { pthread_once(&sip_once, sip_key_init); }

#define ROTL(x, b) (((x) << (b)) | ((x) >> (64 - (b))))
#define SIPROUND                                                             \
    do {                                                                     \
        v0 += v1; v1 = ROTL(v1, 13); v1 ^= v0; v0 = ROTL(v0, 32);            \
        v2 += v3; v3 = ROTL(v3, 16); v3 ^= v2;                               \
        v0 += v3; v3 = ROTL(v3, 21); v3 ^= v0;                               \
        v2 += v1; v1 = ROTL(v1, 17); v1 ^= v2; v2 = ROTL(v2, 32);            \
    } while (0)

static uint64_t hash_str(const char *s, size_t n) {
    uint64_t v0 = sip_k0 ^ 0x736f6d6570736575ull;
    uint64_t v1 = sip_k1 ^ 0x646f72616e646f6dull;
    uint64_t v2 = sip_k0 ^ 0x6c7967656e657261ull;
    uint64_t v3 = sip_k1 ^ 0x7465646279746573ull;
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t m;
        memcpy(&m, p + i, 8); /* little-endian hosts only (x86-64, arm64) */
        v3 ^= m;
        SIPROUND;
        v0 ^= m;
    }
    uint64_t b = (uint64_t)n << 56;
    for (size_t j = 0; i + j < n; j++) b |= (uint64_t)p[i + j] << (8 * j);
    v3 ^= b;
    SIPROUND;
    v0 ^= b;
    v2 ^= 0xff;
    SIPROUND;
    SIPROUND;
    SIPROUND;
    return v0 ^ v1 ^ v2 ^ v3;
}

bool dlp_strmap_init(dlp_strmap *m, size_t expected) {
    sip_key();
    memset(m, 0, sizeof *m);
    size_t cap = 16;
    while (cap < expected * 2) {
        if (cap > SIZE_MAX / 4) return false;
        cap *= 2;
    }
    m->keys = calloc(cap, sizeof *m->keys);
    m->lens = calloc(cap, sizeof *m->lens);
    m->hashes = calloc(cap, sizeof *m->hashes);
    m->vals = calloc(cap, sizeof *m->vals);
    if (!m->keys || !m->lens || !m->hashes || !m->vals) {
        dlp_strmap_free(m);
        return false;
    }
    m->cap = cap;
    return true;
}

void dlp_strmap_free(dlp_strmap *m) {
    if (!m) return;
    free(m->keys);
    free(m->lens);
    free(m->hashes);
    free(m->vals);
    memset(m, 0, sizeof *m);
}

int dlp_strmap_get(const dlp_strmap *m, const char *key, size_t len) {
    if (!m->cap) return -1;
    uint64_t h = hash_str(key, len);
    size_t mask = m->cap - 1, i = h & mask;
    while (m->keys[i]) {
        if (m->hashes[i] == h && m->lens[i] == len &&
            memcmp(m->keys[i], key, len) == 0)
            return m->vals[i];
        i = (i + 1) & mask;
    }
    return -1;
}

/* Places a key known to be absent (growing, or a new key). */
static void strmap_place(dlp_strmap *m, const char *key, size_t len,
                         uint64_t h, int val) {
    size_t mask = m->cap - 1, i = h & mask;
    while (m->keys[i]) i = (i + 1) & mask;
    m->keys[i] = key;
    m->lens[i] = len;
    m->hashes[i] = h;
    m->vals[i] = val;
    m->count++;
}

static bool strmap_rehash(dlp_strmap *m) {
    dlp_strmap n;
    if (!dlp_strmap_init(&n, m->cap)) return false; /* doubles capacity */
    for (size_t i = 0; i < m->cap; i++)
        if (m->keys[i])
            strmap_place(&n, m->keys[i], m->lens[i], m->hashes[i], m->vals[i]);
    dlp_strmap_free(m);
    *m = n;
    return true;
}

bool dlp_strmap_put(dlp_strmap *m, const char *key, size_t len, int val) {
    if (!m->cap && !dlp_strmap_init(m, 16)) return false;
    if ((m->count + 1) * 2 > m->cap && !strmap_rehash(m)) return false;
    uint64_t h = hash_str(key, len);
    size_t mask = m->cap - 1, i = h & mask;
    while (m->keys[i]) {
        if (m->hashes[i] == h && m->lens[i] == len &&
            memcmp(m->keys[i], key, len) == 0) {
            m->vals[i] = val;
            return true;
        }
        i = (i + 1) & mask;
    }
    strmap_place(m, key, len, h, val);
    return true;
}

int dlp_strmap_intern(dlp_strmap *m, dlp_arena *a, const char *s, int *count) {
    size_t l = strlen(s);
    int v = dlp_strmap_get(m, s, l);
    if (v >= 0) return v;
    char *k = dlp_arena_strndup(a, s, l);
    if (!k || !dlp_strmap_put(m, k, l, *count)) return -1;
    return (*count)++;
}

/* ---- warnings ---- */
void dlp_warn(dlp_warnings *w, const char *fmt, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    for (size_t i = 0; i < w->n; i++)
        if (strcmp(w->msgs[i], buf) == 0) return;
    if (w->n >= DLP_MAX_WARNINGS) {
        w->dropped++;
        return;
    }
    if (!dlp_grow((void **)&w->msgs, &w->cap, w->n + 1, sizeof *w->msgs))
        return;
    char *c = malloc(strlen(buf) + 1);
    if (!c) return;
    strcpy(c, buf);
    w->msgs[w->n++] = c;
}

void dlp_warnings_free(dlp_warnings *w) {
    if (!w) return;
    for (size_t i = 0; i < w->n; i++) free(w->msgs[i]);
    free(w->msgs);
    memset(w, 0, sizeof *w);
}

dlp_status dlp_read_line(FILE *fp, char *buf, size_t cap, const char *path,
                         int *ln, bool *got, dlp_error *err) {
    *got = fgets(buf, (int)cap, fp) != NULL;
    if (!*got) return DLP_OK;
    ++*ln;
    size_t l = strlen(buf);
    if (l == cap - 1 && buf[l - 1] != '\n')
        return dlp_fail(err, DLP_ERR_FORMAT, "%s:%d: line too long", path, *ln);
    while (l && (buf[l - 1] == '\n' || buf[l - 1] == '\r')) buf[--l] = 0;
    return DLP_OK;
}
