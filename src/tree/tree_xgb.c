/*
 * tree_xgb.c — gradient-boosted regression trees through XGBoost's C API
 * (Debian libxgboost-dev 1.7): train on a dense float matrix, predict,
 * save to / load from XGBoost's model bytes: UBJSON (binary JSON, written
 * since it parses ~13x faster: 12 vs 160 ms for the kern node booster) or
 * JSON (read, for files written before).
 *
 * Prediction uses XGBoosterPredictFromDense with an array-interface JSON
 * describing the caller's buffer (no DMatrix copy); XGBoost 1.7 requires
 * "cache_id": 0 in its config. XGBoost keeps the prediction buffer inside
 * the booster, so one booster must not predict from two threads at once.
 */
#include "tree/tree.h"

#ifdef __has_include
#if __has_include(<xgboost/c_api.h>)
#define DLP_HAVE_XGB 1
#endif
#endif

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Defaults for the dataset's size (a few hundred rows): shallow trees, a
 * small step, one thread (XGBoost's threads cost more than they save on
 * rows this few: 35 s vs 0.7 s for a 5-fold run on 2 busy cores). */
void dlp_tree_params_default(dlp_tree_params *p) {
    memset(p, 0, sizeof *p);
    p->rounds = 200;
    p->max_depth = 3;
    p->eta = 0.05;
    p->threads = 1;
    p->subsample = 0.8;
    p->colsample = 0.8;
    p->min_child_weight = 1;
    p->lambda = 1;
    p->seed = 1;
}

int dlp_tree_format_of(const void *buf, size_t len) {
    const unsigned char *b = buf;
    if (!b || len < 2 || b[0] != '{' || b[len - 1] != '}') return -1;
    if (b[1] == '"') return DLP_TREE_JSON;
    if (b[1] == 'i' || b[1] == 'U' || b[1] == 'I' || b[1] == 'l' ||
        b[1] == 'L')
        return DLP_TREE_UBJ;
    return -1;
}

dlp_status dlp_tree_save(dlp_tree *t, void **buf, size_t *len,
                         dlp_error *err) {
    return dlp_tree_save_as(t, DLP_TREE_UBJ, buf, len, err);
}

#ifndef DLP_HAVE_XGB

struct dlp_tree { int d; };

static dlp_status no_xgb(dlp_error *err) {
    return dlp_fail(err, DLP_ERR_UNSUPPORTED,
                    "built without XGBoost (install libxgboost-dev)");
}
dlp_status dlp_tree_train(const float *x, size_t n, int d, const float *y,
                          const dlp_tree_params *p, dlp_tree **out,
                          dlp_error *err) {
    (void)x; (void)n; (void)d; (void)y; (void)p; *out = NULL;
    return no_xgb(err);
}
dlp_status dlp_tree_predict(dlp_tree *t, const float *x, size_t n, int d,
                            float *out, dlp_error *err) {
    (void)t; (void)x; (void)n; (void)d; (void)out;
    return no_xgb(err);
}
int dlp_tree_nfeatures(const dlp_tree *t) { return t ? t->d : 0; }
dlp_status dlp_tree_save_as(dlp_tree *t, dlp_tree_format fmt, void **buf,
                            size_t *len, dlp_error *err) {
    (void)t; (void)fmt; *buf = NULL; *len = 0;
    return no_xgb(err);
}
dlp_status dlp_tree_load(const void *buf, size_t len, dlp_tree **out,
                         dlp_error *err) {
    (void)buf; (void)len; *out = NULL;
    return no_xgb(err);
}
void dlp_tree_free(dlp_tree *t) { free(t); }
void dlp_tree_xgb_version(int v[3]) { v[0] = v[1] = v[2] = 0; }

#else

#include <dlfcn.h>
#include <pthread.h>
#include <xgboost/c_api.h>

/* libxgboost is opened on first use, not linked: its C++ static
 * initialisers cost ~7 ms of CPU at every process start, which `dlperf
 * predict` of a CNN (no tree model involved) should not pay. */
#define XGB_FUNCS(X)                                                         \
    X(XGBGetLastError) X(XGBRegisterLogCallback) X(XGBSetGlobalConfig)       \
    X(XGDMatrixCreateFromMat) X(XGDMatrixSetFloatInfo) X(XGDMatrixFree)      \
    X(XGBoosterCreate) X(XGBoosterFree) X(XGBoosterSetParam)                 \
    X(XGBoosterUpdateOneIter) X(XGBoosterPredictFromDense)                   \
    X(XGBoosterSaveModelToBuffer) X(XGBoosterLoadModelFromBuffer)            \
    X(XGBoosterGetNumFeature) X(XGBoostVersion)
#define XGB_PTR(f) static __typeof__(f) *p_##f;
XGB_FUNCS(XGB_PTR)
static pthread_once_t xgb_once = PTHREAD_ONCE_INIT;
static bool xgb_ok;
static char xgb_why[200];

static void xgb_open(void) {
    const char *names[] = {"libxgboost.so.0", "libxgboost.so", NULL};
    void *h = NULL;
    for (int i = 0; names[i] && !h; i++) h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(xgb_why, sizeof xgb_why, "%s", e ? e : "libxgboost not found");
        return;
    }
#define XGB_SYM(f)                                                           \
    if (!(*(void **)&p_##f = dlsym(h, #f))) {                                \
        snprintf(xgb_why, sizeof xgb_why, "libxgboost lacks %s", #f);        \
        return;                                                              \
    }
    XGB_FUNCS(XGB_SYM)
    xgb_ok = true;
}

static dlp_status xgb_load(dlp_error *err) {
    pthread_once(&xgb_once, xgb_open);
    if (!xgb_ok)
        return dlp_fail(err, DLP_ERR_UNSUPPORTED,
                        "cannot load XGBoost (install libxgboost0): %s",
                        xgb_why);
    return DLP_OK;
}

#define XGBGetLastError p_XGBGetLastError
#define XGBRegisterLogCallback p_XGBRegisterLogCallback
#define XGBSetGlobalConfig p_XGBSetGlobalConfig
#define XGDMatrixCreateFromMat p_XGDMatrixCreateFromMat
#define XGDMatrixSetFloatInfo p_XGDMatrixSetFloatInfo
#define XGDMatrixFree p_XGDMatrixFree
#define XGBoosterCreate p_XGBoosterCreate
#define XGBoosterFree p_XGBoosterFree
#define XGBoosterSetParam p_XGBoosterSetParam
#define XGBoosterUpdateOneIter p_XGBoosterUpdateOneIter
#define XGBoosterPredictFromDense p_XGBoosterPredictFromDense
#define XGBoosterSaveModelToBuffer p_XGBoosterSaveModelToBuffer
#define XGBoosterLoadModelFromBuffer p_XGBoosterLoadModelFromBuffer
#define XGBoosterGetNumFeature p_XGBoosterGetNumFeature
#define XGBoostVersion p_XGBoostVersion

struct dlp_tree {
    BoosterHandle h;
    int d;            /* feature count */
};

static void quiet_log(const char *msg) { (void)msg; }

/* Silences XGBoost (it logs to stderr otherwise); idempotent. */
static void xgb_quiet(void) {
    XGBRegisterLogCallback(quiet_log);
    XGBSetGlobalConfig("{\"verbosity\": 0}");
}

static dlp_status xgb_fail(dlp_error *err, const char *what) {
    const char *m = XGBGetLastError();
    /* keep XGBoost's first line only: it appends a stack trace */
    char line[300];
    snprintf(line, sizeof line, "%s", m ? m : "unknown error");
    char *nl = strchr(line, '\n');
    if (nl) *nl = 0;
    return dlp_fail(err, DLP_ERR_FORMAT, "XGBoost %s failed: %s", what, line);
}

static dlp_status set_param(BoosterHandle h, const char *k, double v,
                            dlp_error *err) {
    char buf[64];
    snprintf(buf, sizeof buf, "%.17g", v);
    if (XGBoosterSetParam(h, k, buf) != 0) return xgb_fail(err, k);
    return DLP_OK;
}

dlp_status dlp_tree_train(const float *x, size_t n, int d, const float *y,
                          const dlp_tree_params *p, dlp_tree **out,
                          dlp_error *err) {
    if (!out) return dlp_fail(err, DLP_ERR_ARG, "dlp_tree_train: NULL out");
    *out = NULL;
    if (!x || !y || !p || n < 2 || d < 1)
        return dlp_fail(err, DLP_ERR_ARG,
                        "tree training needs at least 2 rows and 1 feature "
                        "(got %zu x %d)", n, d);
    for (size_t i = 0; i < n; i++)
        if (!isfinite(y[i]))
            return dlp_fail(err, DLP_ERR_ARG,
                            "tree training target %zu is not finite", i);
    if (p->rounds < 1 || p->rounds > 100000 || p->max_depth < 1 ||
        p->max_depth > 32 || !(p->eta > 0))
        return dlp_fail(err, DLP_ERR_ARG,
                        "bad tree parameters (rounds %d, depth %d, eta %g)",
                        p->rounds, p->max_depth, p->eta);
    dlp_status lst = xgb_load(err);
    if (lst) return lst;
    xgb_quiet();
    DMatrixHandle dm = NULL;
    if (XGDMatrixCreateFromMat(x, (bst_ulong)n, (bst_ulong)d, NAN, &dm) != 0)
        return xgb_fail(err, "DMatrix");
    dlp_status st = DLP_OK;
    BoosterHandle h = NULL;
    if (XGDMatrixSetFloatInfo(dm, "label", y, (bst_ulong)n) != 0) {
        st = xgb_fail(err, "set label");
        goto done;
    }
    if (XGBoosterCreate(&dm, 1, &h) != 0) {
        st = xgb_fail(err, "create");
        goto done;
    }
    if (XGBoosterSetParam(h, "objective", p->logistic ? "binary:logistic"
                                                    : "reg:squarederror") != 0 ||
        XGBoosterSetParam(h, "tree_method", p->hist > 0 ? "hist" : "exact") != 0 ||
        XGBoosterSetParam(h, "verbosity", "0") != 0) {
        st = xgb_fail(err, "set objective");
        goto done;
    }
    if ((st = set_param(h, "max_depth", p->max_depth, err)) ||
        (st = set_param(h, "eta", p->eta, err)) ||
        (st = set_param(h, "subsample", p->subsample > 0 ? p->subsample : 1,
                        err)) ||
        (st = set_param(h, "colsample_bytree",
                        p->colsample > 0 ? p->colsample : 1, err)) ||
        (st = set_param(h, "min_child_weight", p->min_child_weight, err)) ||
        (st = set_param(h, "lambda", p->lambda, err)) ||
        (st = set_param(h, "seed", (double)(p->seed % 2147483647u), err)))
        goto done;
    if (p->threads > 0 && (st = set_param(h, "nthread", p->threads, err)))
        goto done;
    for (int it = 0; it < p->rounds; it++)
        if (XGBoosterUpdateOneIter(h, it, dm) != 0) {
            st = xgb_fail(err, "training round");
            goto done;
        }
    dlp_tree *t = calloc(1, sizeof *t);
    if (!t) {
        st = dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
        goto done;
    }
    t->h = h;
    t->d = d;
    h = NULL;
    *out = t;
done:
    if (h) XGBoosterFree(h);
    XGDMatrixFree(dm);
    return st;
}

dlp_status dlp_tree_predict(dlp_tree *t, const float *x, size_t n, int d,
                            float *out, dlp_error *err) {
    if (!t || !x || !out)
        return dlp_fail(err, DLP_ERR_ARG, "dlp_tree_predict: NULL argument");
    if (d != t->d)
        return dlp_fail(err, DLP_ERR_ARG,
                        "tree model expects %d features, got %d", t->d, d);
    if (n == 0) return DLP_OK;
    /* __array_interface__ of the caller's row-major float32 buffer */
    char arr[200];
    snprintf(arr, sizeof arr,
             "{\"data\": [%llu, true], \"shape\": [%zu, %d], "
             "\"typestr\": \"<f4\", \"version\": 3}",
             (unsigned long long)(uintptr_t)x, n, d);
    static const char cfg[] =
        "{\"type\": 0, \"training\": false, \"iteration_begin\": 0, "
        "\"iteration_end\": 0, \"strict_shape\": false, \"cache_id\": 0, "
        "\"missing\": NaN}";
    const bst_ulong *shape = NULL;
    bst_ulong dim = 0;
    const float *res = NULL;
    if (XGBoosterPredictFromDense(t->h, arr, cfg, NULL, &shape, &dim, &res) !=
        0)
        return xgb_fail(err, "predict");
    bst_ulong total = 1;
    for (bst_ulong i = 0; i < dim; i++) total *= shape[i];
    if (total != n)
        return dlp_fail(err, DLP_ERR_FORMAT,
                        "XGBoost returned %llu predictions for %zu rows",
                        (unsigned long long)total, n);
    memcpy(out, res, n * sizeof *out);
    return DLP_OK;
}

int dlp_tree_nfeatures(const dlp_tree *t) { return t ? t->d : 0; }

dlp_status dlp_tree_save_as(dlp_tree *t, dlp_tree_format fmt, void **buf,
                            size_t *len, dlp_error *err) {
    if (!t || !buf || !len)
        return dlp_fail(err, DLP_ERR_ARG, "dlp_tree_save: NULL argument");
    *buf = NULL;
    *len = 0;
    bst_ulong n = 0;
    const char *p = NULL;
    const char *cfg = fmt == DLP_TREE_JSON ? "{\"format\": \"json\"}"
                                           : "{\"format\": \"ubj\"}";
    if (XGBoosterSaveModelToBuffer(t->h, cfg, &n, &p) != 0)
        return xgb_fail(err, "save");
    void *copy = malloc(n ? n : 1);
    if (!copy) return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    memcpy(copy, p, n);
    *buf = copy;
    *len = n;
    return DLP_OK;
}

dlp_status dlp_tree_load(const void *buf, size_t len, dlp_tree **out,
                         dlp_error *err) {
    if (!out) return dlp_fail(err, DLP_ERR_ARG, "dlp_tree_load: NULL out");
    *out = NULL;
    if (!buf || len < 2)
        return dlp_fail(err, DLP_ERR_FORMAT, "tree model payload is empty");
    /* Checked before XGBoost sees the bytes: its parser is not hardened
     * against garbage. UBJSON is walked whole (lengths and counts inside
     * the buffer); JSON, which only older files hold, as before. */
    int fmt = dlp_tree_format_of(buf, len);
    if (fmt < 0)
        return dlp_fail(err, DLP_ERR_FORMAT,
                        "tree model payload is not XGBoost JSON or UBJSON");
    size_t bad = 0;
    if (fmt == DLP_TREE_UBJ && !dlp_ubj_check(buf, len, &bad))
        return dlp_fail(err, DLP_ERR_FORMAT,
                        "tree model payload: malformed XGBoost UBJSON at "
                        "byte %zu of %zu (damaged or truncated)", bad, len);
    dlp_status lst = xgb_load(err);
    if (lst) return lst;
    xgb_quiet();
    BoosterHandle h = NULL;
    if (XGBoosterCreate(NULL, 0, &h) != 0) return xgb_fail(err, "create");
    if (XGBoosterLoadModelFromBuffer(h, buf, (bst_ulong)len) != 0) {
        dlp_status st = xgb_fail(err, "load");
        XGBoosterFree(h);
        return st;
    }
    bst_ulong nf = 0;
    if (XGBoosterGetNumFeature(h, &nf) != 0 || nf < 1 || nf > 100000) {
        XGBoosterFree(h);
        return dlp_fail(err, DLP_ERR_FORMAT,
                        "tree model has a bad feature count");
    }
    XGBoosterSetParam(h, "nthread", "1");
    dlp_tree *t = calloc(1, sizeof *t);
    if (!t) {
        XGBoosterFree(h);
        return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    }
    t->h = h;
    t->d = (int)nf;
    *out = t;
    return DLP_OK;
}

void dlp_tree_free(dlp_tree *t) {
    if (!t) return;
    if (xgb_ok) XGBoosterFree(t->h);
    free(t);
}

/* Through the opened library as every call here: a direct call (the
 * eighty-seventh session's fit cache) made libxgboost a link-time
 * dependency again, loaded at every process start (ResNet-50's predict
 * 17 instead of ~10 ms on the ninety-first session's VM). */
void dlp_tree_xgb_version(int v[3]) {
    v[0] = v[1] = v[2] = 0;
    if (xgb_load(NULL) == DLP_OK) XGBoostVersion(&v[0], &v[1], &v[2]);
}

#endif /* DLP_HAVE_XGB */
