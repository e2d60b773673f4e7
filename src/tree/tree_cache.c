/*
 * tree_cache.c — fitting a forest through a folder of forests already
 * fitted (dlp_forest_fit).
 *
 * The probes' models (the cuDNN workspace forests of pred_convws.c, the
 * operator-time forests of pred_optime.c) are fitted on data/probes, not
 * on a split of the examples, so every `dlperf train` and `tree fit` of a
 * `make models` run boosts the same forests from the same rows again: the
 * training step's workspace model took ~100 s of each of the five
 * training-mode calls (eighty-seventh session). With a folder set, a fit
 * is keyed by the SHA-256 of everything the booster reads (rows, labels,
 * parameters, XGBoost's version; the thread count for the histogram
 * method only: the exact method's trees are the same on any number) and
 * answered from "<folder>/forest-<32 hex>.dlpm" when an earlier fit wrote
 * one, so the forest is the same bytes as a fit would give. A file that
 * does not load, or holds another key, is fitted again and overwritten.
 */
#include "tree/tree.h"
#include "data/data.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* bumped when what a fit computes from the same key changes */
#define FIT_KEY_MAGIC "dlperf forest fit 1"
#define CACHE_PATH_MAX 4096

static char g_dir[CACHE_PATH_MAX];   /* "" when none */
static atomic_int g_hits, g_fits;

dlp_status dlp_forest_cache_set(const char *dir, dlp_error *err) {
    if (!dir || !*dir) {
        g_dir[0] = '\0';
        return DLP_OK;
    }
    struct stat sb;
    if (stat(dir, &sb) != 0)
        return dlp_fail(err, DLP_ERR_IO, "fit cache %s: %s", dir,
                        strerror(errno));
    if (!S_ISDIR(sb.st_mode))
        return dlp_fail(err, DLP_ERR_IO, "fit cache %s: not a directory", dir);
    if (access(dir, W_OK | X_OK) != 0)
        return dlp_fail(err, DLP_ERR_IO, "fit cache %s: not writable", dir);
    if (strlen(dir) + 48 >= sizeof g_dir)
        return dlp_fail(err, DLP_ERR_LIMIT, "fit cache %s: path too long", dir);
    strcpy(g_dir, dir);
    return DLP_OK;
}

const char *dlp_forest_cache(void) { return g_dir[0] ? g_dir : NULL; }

void dlp_forest_cache_counts(int *hits, int *fits) {
    if (hits) *hits = atomic_load(&g_hits);
    if (fits) *fits = atomic_load(&g_fits);
}

/* Appends v's bytes at *p. */
static void put(unsigned char **p, const void *v, size_t n) {
    memcpy(*p, v, n);
    *p += n;
}

/* The key of a fit: 64 hex digits of the SHA-256 of a header (magic,
 * XGBoost's version, n, d, the parameters the booster reads) followed by
 * x's and y's bytes. False when out of memory. */
static bool fit_key(const float *x, size_t n, int d, const float *y,
                    const dlp_tree_params *p, char hex[65]) {
    int ver[3];
    dlp_tree_xgb_version(ver);
    /* the exact method's trees are the same on any number of threads
     * (pred_convws.c: the file byte for byte the same on 1 and 2); the
     * histogram method's are not promised to be, so its count is in */
    int32_t ints[] = {ver[0], ver[1], ver[2], d, p->rounds, p->max_depth,
                      p->hist, p->logistic, p->hist > 0 ? p->threads : 0};
    double reals[] = {p->eta, p->subsample, p->colsample,
                      p->min_child_weight, p->lambda};
    uint64_t nn = n, seed = p->seed;
    size_t head = sizeof FIT_KEY_MAGIC + sizeof ints + sizeof reals +
                  2 * sizeof nn;
    size_t bytes = head + n * (size_t)(d + 1) * sizeof(float);
    unsigned char *buf = malloc(bytes), *w = buf;
    if (!buf) return false;
    put(&w, FIT_KEY_MAGIC, sizeof FIT_KEY_MAGIC);
    put(&w, ints, sizeof ints);
    put(&w, reals, sizeof reals);
    put(&w, &nn, sizeof nn);
    put(&w, &seed, sizeof seed);
    put(&w, x, n * (size_t)d * sizeof *x);
    put(&w, y, n * sizeof *y);
    unsigned char h[32];
    dlp_sha256(buf, bytes, h);
    free(buf);
    for (int i = 0; i < 32; i++) snprintf(hex + 2 * i, 3, "%02x", h[i]);
    return true;
}

/* The cached forest of key at path, or NULL (none, unreadable, another
 * key, another feature count). */
static dlp_forest *cache_load(const char *path, const char *key, int d) {
    dlp_nn_file f;
    dlp_error e;
    if (dlp_nn_file_load(&f, path, &e)) return NULL;   /* none or unreadable */
    dlp_forest *out = NULL;
    const dlp_nn_entry *k = dlp_nn_file_get(&f, "fit/key", DLP_NN_STR);
    if (k && k->count == 64 && !memcmp(k->data, key, 64) &&
        !dlp_forest_load_for(&f, "forest", d, &out, &e) && out &&
        dlp_forest_ready(out, &e)) {
        dlp_forest_free(out);
        out = NULL;
    }
    dlp_nn_file_free(&f);
    return out;
}

static dlp_status cache_store(const char *path, const char *key,
                              const dlp_forest *fo, dlp_error *err) {
    dlp_nn_file f = {0};
    dlp_status st = dlp_nn_file_add_str(&f, "fit/key", key, err);
    if (!st) st = dlp_forest_save(fo, &f, "forest", err);
    if (!st) st = dlp_nn_file_save(&f, path, err);
    dlp_nn_file_free(&f);
    return st;
}

dlp_status dlp_forest_fit(const float *x, size_t n, int d, const float *y,
                          const dlp_tree_params *p, dlp_forest **out,
                          dlp_error *err) {
    *out = NULL;
    char key[65], path[CACHE_PATH_MAX + 64];
    const char *dir = dlp_forest_cache();
    if (dir) {
        if (!fit_key(x, n, d, y, p, key))
            return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
        snprintf(path, sizeof path, "%s/forest-%.32s.dlpm", dir, key);
        if ((*out = cache_load(path, key, d))) {
            atomic_fetch_add(&g_hits, 1);
            return DLP_OK;
        }
    }
    dlp_tree *t = NULL;
    dlp_status st = dlp_tree_train(x, n, d, y, p, &t, err);
    if (!st) st = dlp_forest_from_tree(t, d, out, err);
    dlp_tree_free(t);
    if (!st) atomic_fetch_add(&g_fits, 1);
    if (!st && dir) st = cache_store(path, key, *out, err);
    if (st) {
        dlp_forest_free(*out);
        *out = NULL;
    }
    return st;
}
