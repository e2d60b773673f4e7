/*
 * pred_convws.c — the cuDNN convolution workspace model of the inference
 * memory estimate (docs/COST.md, "cuDNN convolution workspaces"): cuDNN's
 * heuristics (benchmark off, as the collector measures) pick an algorithm
 * per shape and type, and at fp32 some shapes' algorithms take a
 * workspace of hundreds of MiB to GiBs (a 3x3 conv of [16, 192, 112, 112]:
 * 5 GiB) while their neighbours take none; at fp16 most 3x3 convs take
 * about their input and output (NCHW -> NHWC copies), most 1x1 nothing,
 * and some stems hundreds of MiB. The walk cannot derive that; the
 * per-convolution probes (tools/collect/probe_convws.py, the convws files
 * of data/probes; probe_convgrid.py's shapes of a fixed grid, no model
 * behind them) measured it, and gradient-boosted trees on the shape
 * (feat_convws.c's 20 features), one set per type, learn it: a classifier
 * (has a workspace) and a regressor of its log2 size, XGBoost to train
 * (dlp_tree_train), evaluated by tree_forest.c. bf16 takes the fp16 model
 * (cuDNN runs both on the same tensor-core paths; one bf16 probe).
 *
 * The roofline predictor fits it in training (pred_roofline.c) on the
 * probes of the models it trains on and on the grid's (a "model" no
 * dataset row has), so held-out models' probes never reach it, and
 * stores it in its model file ("convws/...").
 */
#include "pred_train.h"
#include "../tree/tree.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The classifier's label: a workspace above max(1 MiB, this x input +
 * output), the threshold of tools/collect/convws_learnability.py (below
 * it, the walk's own terms cover what the call allocates). */
#define CONVWS_LABEL_IO 0.5
/* Boosting, per type and forest: rounds, depth, eta. The first models
 * took 100 rounds of depth 6 at eta 0.1 (convws_learnability.py, 5-fold
 * by model on the probes: precision 0.930, recall 0.826 at 0.5, as good
 * as 300 of depth 8, before the grid's shapes). With the grid's 66,301
 * shapes (forty-first session, docs/COST.md) larger forests learn more:
 * held-out inference memory 2.2282% with 100 x 6 everywhere, 2.0802% with
 * the fp32 forests at 200 x 10 (eta 0.2), 2.0342% with the eager factor
 * (pred_roofline.c), then larger classifiers: fp32 500 x 14 (fp32 rows
 * 2.4768 -> 2.3886%), fp16 300 x 12 (fp16 rows 1.8577 -> 1.8498%; 500 x
 * 14 did worse, 1.8562%). The fp16 regressor stays small (deeper ones
 * did not help), and a small fp32 regressor cost 0.02 points. */
typedef struct { int rounds, depth; double eta; } convws_fit;
static const convws_fit CONVWS_FIT[2][2] = {
    {{500, 14, 0.2}, {200, 10, 0.2}},    /* fp32: classifier, regressor */
    {{300, 12, 0.2}, {100, 6, 0.1}}};    /* half */
/* The backward's forests, both types (sixty-fifth session: the grid's
 * shapes alone, 12,086 of them; the fp16 forward's sizes) */
static const convws_fit CONVBWD_FIT[2] = {
    {300, 12, 0.2}, {200, 10, 0.2}};

/* The probes' shapes, measured: cuDNN's choice is a function of the
 * shape, and CNN zoos share shapes (a ResNet stage's 3x3 conv at a batch
 * and resolution is the same call in a dozen networks), so a shape the
 * probes measured on another model is answered by the measurement: the
 * fraction of its calls with a workspace and the smallest of their sizes
 * (at fp16 one shape's extra differs with its input's layout: the 1x1
 * stride-2 conv of [32, 256, 56, 56] allocated 74 MiB in ResNets, 124 MiB
 * in the R26 / R50 hybrids' pre-activation blocks; the smallest gave
 * 2.303% held out against 2.317% for the mean). Keys: a hash
 * of the 18 features' bits (the shape's own function), sorted. */
typedef struct {
    int64_t key;
    float p, mib;
} convws_exact;

/* One type's model: forests and measured shapes. */
typedef struct {
    dlp_forest *cls, *reg;
    convws_exact *exact;
    int n_exact;
} convws_part;

/* part[0] fp32, part[1] half precision, the forward; part[2 + half] the
 * backward's (BWD_PART); a part without forests: none. */
#define N_PARTS 4
#define BWD_PART 2
struct dlp_convws {
    convws_part part[N_PARTS];
};
/* the parts' entries: "convws/...", "convws16/...", "convbwd/..." and
 * "convbwd16/..." */
static const char *const PART_PREFIX[N_PARTS] = {"convws", "convws16", "convbwd",
                                                 "convbwd16"};
const char *const dlp_pred_shared_groups[] = {DLP_OPTIME_GROUP, DLP_CONVWS_GROUP,
                                              DLP_CONVWS16_GROUP, DLP_CONVBWD_GROUP,
                                              DLP_CONVBWD16_GROUP, NULL};

void dlp_convws_calls_free(dlp_convws_calls *c) {
    if (!c) return;
    free(c->call);
    for (int i = 0; i < c->n_names; i++) free(c->names[i]);
    free(c->names);
    memset(c, 0, sizeof *c);
}

/* The i-th integer of JSON array a (>= lo), or -1. */
static int64_t int_at(const cJSON *a, int i, int64_t lo) {
    return dlp_probe_int(cJSON_GetArrayItem(a, i), lo, 1e12);
}

/* One dense 2-D conv call (JSON object v) appended: 1; 0 when it is not
 * one (kept out, not an error); -1 when out of memory. A backward call's
 * size: bwd_extra_mib where v has it (probe_convbwd.py), else extra_mib. */
static int add_call(dlp_convws_calls *c, const cJSON *v, int model, bool half,
                    bool grid, bool bwd) {
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(v, "x"),
                *w = cJSON_GetObjectItemCaseSensitive(v, "w"),
                *y = cJSON_GetObjectItemCaseSensitive(v, "y"),
                *s = cJSON_GetObjectItemCaseSensitive(v, "s"),
                *d = cJSON_GetObjectItemCaseSensitive(v, "d"),
                *p = cJSON_GetObjectItemCaseSensitive(v, "p"),
                *g = cJSON_GetObjectItemCaseSensitive(v, "g"),
                *cl = cJSON_GetObjectItemCaseSensitive(v, "cl"),
                *ex = cJSON_GetObjectItemCaseSensitive(v, "extra_mib"),
                *bx = cJSON_GetObjectItemCaseSensitive(v, "bwd_extra_mib"),
                *im = cJSON_GetObjectItemCaseSensitive(v, "in_mib"),
                *om = cJSON_GetObjectItemCaseSensitive(v, "out_mib");
    if (bwd && bx) ex = bx;
    if (cJSON_GetArraySize(x) != 4 || cJSON_GetArraySize(w) != 4 ||
        cJSON_GetArraySize(y) != 4 || cJSON_GetArraySize(s) < 2 ||
        cJSON_GetArraySize(d) < 1 || !cJSON_IsNumber(g) || g->valuedouble != 1 ||
        !cJSON_IsNumber(ex) || !cJSON_IsNumber(im) || !cJSON_IsNumber(om))
        return 0;
    dlp_conv_shape sh = {0};
    sh.n = int_at(x, 0, 1); sh.c = int_at(x, 1, 1);
    sh.h = int_at(x, 2, 1); sh.w = int_at(x, 3, 1);
    sh.k = int_at(w, 0, 1); sh.kh = int_at(w, 2, 1); sh.kw = int_at(w, 3, 1);
    sh.ho = int_at(y, 2, 1); sh.wo = int_at(y, 3, 1);
    sh.sh = int_at(s, 0, 1); sh.sw = int_at(s, 1, 1); sh.dh = int_at(d, 0, 1);
    sh.ph = cJSON_IsArray(p) ? int_at(p, 0, 0) : 0;   /* "same": a string */
    sh.cl = cJSON_IsTrue(cl);
    if (sh.n < 0 || sh.c < 0 || sh.h < 0 || sh.w < 0 || sh.k < 0 || sh.kh < 0 ||
        sh.kw < 0 || sh.ho < 0 || sh.wo < 0 || sh.sh < 0 || sh.sw < 0 ||
        sh.dh < 0 || sh.ph < 0 || !(ex->valuedouble > -1e9 && ex->valuedouble < 1e9))
        return 0;
    if (!dlp_grow((void **)&c->call, &c->cap, c->n + 1, sizeof *c->call)) return -1;
    c->call[c->n++] = (dlp_convws_call){sh, (float)ex->valuedouble,
                                        (float)(im->valuedouble + om->valuedouble),
                                        model, half, grid, bwd};
    return 1;
}

/* The calls read so far, and whether the file is of backward calls. */
typedef struct {
    dlp_convws_calls *calls;
    bool bwd;
} calls_reader;

/* One probe record: an fp32 or fp16 record's calls appended. */
static dlp_status add_record(const cJSON *r, void *user, dlp_error *err) {
    const calls_reader *rd = user;
    dlp_convws_calls *c = rd->calls;
    const cJSON *spec = cJSON_GetObjectItemCaseSensitive(r, "spec"),
                *prec = cJSON_GetObjectItemCaseSensitive(r, "prec"),
                *convs = cJSON_GetObjectItemCaseSensitive(r, "convs");
    /* "timm:NAME", "tv:NAME", "timmv:NAME:VARIANT": the model is NAME */
    const char *a = cJSON_IsString(spec) ? strchr(spec->valuestring, ':') : NULL;
    bool f32 = cJSON_IsString(prec) && !strcmp(prec->valuestring, "fp32"),
         f16 = cJSON_IsString(prec) && !strcmp(prec->valuestring, "fp16");
    if (!a || !(f32 || f16) || !cJSON_IsArray(convs)) return DLP_OK;
    char name[256];
    snprintf(name, sizeof name, "%s", a + 1);
    name[strcspn(name, ":")] = 0;
    int m = dlp_examples_intern(&c->names, &c->n_names, name);
    if (m < 0) return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    const cJSON *v;
    bool grid = !strncmp(spec->valuestring, "grid:", 5);
    cJSON_ArrayForEach(v, convs)
        if (add_call(c, v, m, f16, grid, rd->bwd) < 0)
            return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    return DLP_OK;
}

dlp_status dlp_convws_calls_read(const char *dir, dlp_convws_calls *out,
                                 dlp_error *err) {
    memset(out, 0, sizeof *out);
    calls_reader fwd = {out, false}, bwd = {out, true};
    int n_bwd = 0;
    dlp_status st = dlp_probe_records(dir, "convws", add_record, &fwd,
                                      &out->n_files, err);
    if (!st) st = dlp_probe_records(dir, "convbwd", add_record, &bwd, &n_bwd, err);
    out->n_files += n_bwd;
    if (st) dlp_convws_calls_free(out);
    return st;
}

void dlp_convws_free(dlp_convws *m) {
    if (!m) return;
    for (int t = 0; t < N_PARTS; t++) {
        free(m->part[t].exact);
        dlp_forest_free(m->part[t].cls);
        dlp_forest_free(m->part[t].reg);
    }
    free(m);
}

/* Trains one forest of part t on x[n, NF] against y. */
static dlp_status fit_forest(const float *x, size_t n, const float *y,
                             int logistic, int t, dlp_forest **out,
                             dlp_error *err) {
    dlp_tree_params p;
    dlp_tree_params_default(&p);
    const convws_fit *f = t >= BWD_PART ? &CONVBWD_FIT[!logistic]
                                        : &CONVWS_FIT[t][!logistic];
    p.rounds = f->rounds;
    p.max_depth = f->depth;
    p.eta = f->eta;
    p.subsample = 1;
    p.colsample = 1;
    p.logistic = logistic;
    p.min_child_weight = logistic ? 2 : 1;
    /* Tens of thousands of rows, unlike the other boosters: the exact
     * method's column-parallel split search gains from the engine's
     * threads (eighty-first session, `dlperf train data --mode training
     * --kind roofline --threads 2`, which fits all four parts: 3 min 27 s
     * -> 2 min 26 s on 2 cores, the file byte for byte the same). */
    p.threads = dlp_nn_threads();
    /* through the fit cache when one is set: the same probes give the
     * same forests in every call of a `make models` run (tree_cache.c) */
    return dlp_forest_fit(x, n, DLP_CONVWS_NF, y, &p, out, err);
}

/* FNV-1a over the bytes of the first DLP_CONVWS_NF_V1 features: they
 * identify the shape (the later ones are functions of it), and the keys
 * of files written before the FFT features stay valid. */
static int64_t shape_key(const float *x) {
    uint64_t h = 1469598103934665603ULL;
    const unsigned char *b = (const unsigned char *)x;
    for (size_t i = 0; i < DLP_CONVWS_NF_V1 * sizeof *x; i++) {
        h ^= b[i];
        h *= 1099511628211ULL;
    }
    return (int64_t)(h >> 1);   /* >= 0: stored as i64 */
}

/* Orders convws_exact and exact_call entries by their leading key. */
static int cmp_key(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* A probed call while the table is built: its shape's key, whether it
 * had a workspace and its size, and whether the classifier alone says
 * there is one. */
typedef struct {
    int64_t key;
    float mib;
    bool has, tree_has;
} exact_call;

/* The measured shapes of the rows fit_forest trained on (x[n, NF], their
 * labels y, their workspaces mib, 0 without; only the rows with tab[i]:
 * not the grid's shapes, which in the table changed the held-out estimate
 * by 0.0001 points (2.2254 -> 2.2253%) and cost 120 KB of the file that
 * every prediction reads; m->cls fitted): m->exact,
 * sorted, one per key, keeping only the shapes where the measurement
 * changes the answer: a shape measured below one half whose classifier
 * says below one half too is answered "none" either way, and most fp32
 * shapes are (its table went 15,054 -> 1,278 entries; the model file's
 * bytes are read and checked by every `dlperf predict`). Keeping also
 * only the shapes whose size the regressor misses by more than a fifth
 * kept 90% of the fp16 table and gave 2.328% against 2.303%. */
static bool build_exact(convws_part *m, const float *x, const float *y,
                        const float *mib, const bool *tab, size_t nrows) {
    exact_call *e = malloc((nrows ? nrows : 1) * sizeof *e);
    m->exact = malloc((nrows ? nrows : 1) * sizeof *m->exact);
    if (!e || !m->exact) { free(e); return false; }
    size_t n = 0;
    for (size_t i = 0; i < nrows; i++) {
        if (!tab[i]) continue;
        const float *xi = x + i * DLP_CONVWS_NF;
        e[n].key = shape_key(xi);
        e[n].has = y[i] > 0.5f;
        e[n].mib = mib[i];
        e[n].tree_has = dlp_forest_eval(m->cls, xi) >= 0.5f;
        n++;
    }
    qsort(e, (size_t)n, sizeof *e, cmp_key);
    int k = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        int np = 0;
        double lo = 0;
        for (; j < n && e[j].key == e[i].key; j++) {
            if (e[j].has && (!np || e[j].mib < lo)) lo = e[j].mib;
            np += e[j].has;
        }
        float p = (float)np / (float)(j - i);
        if (p >= 0.5f || e[i].tree_has)
            m->exact[k++] = (convws_exact){e[i].key, p, (float)lo};
        i = j;
    }
    free(e);
    m->n_exact = k;
    return true;
}

/* Fits part m (index t: type t % 2, the backward from BWD_PART) on the
 * calls of its type and pass whose model has use[m] (NULL: all); m
 * stays empty when fewer than 2 of them have a workspace. */
static dlp_status fit_part(const dlp_convws_calls *c, const bool *use, int t,
                           convws_part *m, dlp_error *err) {
    bool half = t % 2, bwd = t >= BWD_PART;
    size_t n = 0, npos = 0, cap = c->n ? c->n : 1;
    float *x = malloc(cap * DLP_CONVWS_NF * sizeof *x);
    float *y = malloc(cap * sizeof *y);
    float *xp = malloc(cap * DLP_CONVWS_NF * sizeof *xp);
    float *yp = malloc(cap * sizeof *yp);
    float *mib = malloc(cap * sizeof *mib);
    bool *tab = malloc(cap * sizeof *tab);
    dlp_status st = DLP_OK;
    if (!x || !y || !xp || !yp || !mib || !tab) {
        st = dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < c->n; i++) {
        const dlp_convws_call *k = &c->call[i];
        if (k->half != half || k->bwd != bwd || (use && !use[k->model])) continue;
        float *xi = x + n * DLP_CONVWS_NF;
        dlp_conv_shape_features(&k->shape, xi);
        bool pos = k->extra_mib > fmax(1.0, CONVWS_LABEL_IO * k->io_mib);
        mib[n] = pos ? k->extra_mib : 0;
        tab[n] = !k->grid;
        y[n++] = pos ? 1.0f : 0.0f;
        if (pos) {
            memcpy(xp + npos * DLP_CONVWS_NF, xi, DLP_CONVWS_NF * sizeof *xi);
            yp[npos++] = (float)log2(k->extra_mib);
        }
    }
    if (npos < 2) goto done;    /* nothing to learn: no model */
    st = fit_forest(x, n, y, 1, t, &m->cls, err);
    if (!st) st = fit_forest(xp, npos, yp, 0, t, &m->reg, err);
    if (!st && !build_exact(m, x, y, mib, tab, n))
        st = dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
done:
    free(x); free(y); free(xp); free(yp); free(mib); free(tab);
    return st;
}

dlp_status dlp_convws_fit(const dlp_convws_calls *c, const bool *use,
                          bool bwd, dlp_convws **out, dlp_error *err) {
    *out = NULL;
    dlp_convws *m = calloc(1, sizeof *m);
    if (!m) return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    dlp_status st = DLP_OK;
    for (int t = 0; !st && t < (bwd ? N_PARTS : BWD_PART); t++)
        st = fit_part(c, use, t, &m->part[t], err);
    if (!st && (m->part[0].cls || m->part[1].cls)) {
        *out = m;
        return DLP_OK;
    }
    dlp_convws_free(m);
    return st;
}

/* The measured answer for features x, or NULL. */
static const convws_exact *exact_of(const convws_part *t, const float *x) {
    if (!t->n_exact) return NULL;
    convws_exact q = {shape_key(x), 0, 0};
    return bsearch(&q, t->exact, (size_t)t->n_exact, sizeof q, cmp_key);
}

/* The forests' answers for the n feature vectors x[k] (no measured
 * answer): the classifier's probability, and the regressor's size where it
 * is one half or more (most calls: the regressor's trees not walked).
 * tmp: n floats. Fails, answering nothing, when a forest it walks is
 * broken (each is checked when first walked: dlp_forest_ready). */
static dlp_status forest_answers(const convws_part *t, const float **x, int n,
                                 double *p, double *mib, float *tmp,
                                 dlp_error *err) {
    dlp_status st = dlp_forest_ready(t->cls, err);
    if (st) return st;
    dlp_forest_eval_many(t->cls, x, n, tmp);
    int npos = 0;
    for (int k = 0; k < n; k++) {
        p[k] = fmin(1.0, fmax(0.0, (double)tmp[k]));
        mib[k] = 0;
        if (p[k] >= 0.5) x[npos++] = x[k];   /* x[npos] is done with */
    }
    if (!npos) return DLP_OK;
    if ((st = dlp_forest_ready(t->reg, err))) return st;
    dlp_forest_eval_many(t->reg, x, npos, tmp);
    for (int k = n - 1, j = npos - 1; j >= 0; k--)   /* <= 1 TiB */
        if (p[k] >= 0.5) mib[k] = exp2(fmin((double)tmp[j--], 20.0));
    return DLP_OK;
}

/* dlp_convws_predict's answer from part t. */
static bool part_predict(const convws_part *t, const float *x, double *p,
                         double *mib) {
    if (!t->cls) return false;
    const convws_exact *f = exact_of(t, x);
    if (f) {
        *p = f->p;
        *mib = f->mib;
    } else {
        float tmp;
        dlp_error err;
        if (forest_answers(t, &x, 1, p, mib, &tmp, &err)) return false;
    }
    return true;
}

bool dlp_convws_predict(const dlp_convws *m, bool half, const float *x,
                        double *p, double *mib) {
    return part_predict(&m->part[half], x, p, mib);
}

/* One distinct convolution's answer: conv, the first with its features
 * (-1: an empty slot). */
typedef struct {
    int conv;
    double p, mib;
} convws_memo;

/* A distinct convolution the forests answer: its features, its slot. */
typedef struct {
    const float *x;
    convws_memo *slot;
} convws_batch;

/* The slot of features x in the table memo[cap] (open addressing): the
 * entry whose convolution has exactly x, or the empty one to fill. */
static convws_memo *memo_slot(convws_memo *memo, int cap,
                              const dlp_feat_graph *fg, const float *x) {
    unsigned k = (unsigned)((uint64_t)shape_key(x) & (unsigned)(cap - 1));
    for (;; k = (k + 1) & (unsigned)(cap - 1)) {
        convws_memo *e = &memo[k];
        if (e->conv < 0 ||
            !memcmp(fg->convs[e->conv].x, x, DLP_CONVWS_NF * sizeof *x))
            return e;
    }
}

/* Part pt's answers for every convolution record of fg (p[i], mib[i]: the
 * classifier's probability and the workspace in MiB; dlp_convws_predict's
 * for conv i). A network repeats its shapes (ResNet-50's 53
 * convolutions are 23): each distinct one is answered once (without
 * memory for the table, every one is), the forests walked for all of
 * them together. Fails when a forest it walks is broken. */
static dlp_status conv_answers(const dlp_convws *m, int pt,
                               const dlp_feat_graph *fg, double *p, double *mib,
                               dlp_error *err) {
    const convws_part *t = &m->part[pt];
    dlp_status st = DLP_OK;
    int cap = 1;
    while (cap < 2 * fg->n_convs) cap *= 2;
    convws_memo *memo = malloc((size_t)cap * sizeof *memo);
    convws_batch *todo = malloc((size_t)fg->n_convs * sizeof *todo);
    if (!todo) {
        free(memo);
        memo = NULL;
    }
    for (int k = 0; memo && k < cap; k++) memo[k].conv = -1;
    int n_todo = 0;
    for (int i = 0; memo && i < fg->n_convs; i++) {
        const float *x = fg->convs[i].x;
        convws_memo *e = memo_slot(memo, cap, fg, x);
        if (e->conv >= 0) continue;
        const convws_exact *f = exact_of(t, x);
        *e = (convws_memo){i, f ? f->p : 0, f ? f->mib : 0};
        if (!f) todo[n_todo++] = (convws_batch){x, e};
    }
    if (n_todo) {
        const float **xs = malloc((size_t)n_todo * sizeof *xs);
        double *pm = malloc(2 * (size_t)n_todo * sizeof *pm);
        float *tmp = malloc((size_t)n_todo * sizeof *tmp);
        bool ok = xs && pm && tmp;
        for (int k = 0; ok && k < n_todo; k++) xs[k] = todo[k].x;
        if (ok) st = forest_answers(t, xs, n_todo, pm, pm + n_todo, tmp, err);
        for (int k = 0; !st && k < n_todo; k++) {
            convws_memo *e = todo[k].slot;
            if (ok) {
                e->p = pm[k];
                e->mib = pm[n_todo + k];
            } else if (!part_predict(t, todo[k].x, &e->p, &e->mib)) {
                st = dlp_forest_ready(t->reg, err);   /* out of memory: one at a time */
            }
        }
        free(xs); free(pm); free(tmp);
    }
    free(todo);
    for (int i = 0; !st && i < fg->n_convs; i++) {
        if (memo) {
            const convws_memo *e = memo_slot(memo, cap, fg, fg->convs[i].x);
            p[i] = e->p;
            mib[i] = e->mib;
        } else if (!part_predict(t, fg->convs[i].x, &p[i], &mib[i])) {
            st = dlp_forest_ready(t->reg, err);   /* the cls forest is sound */
        }
    }
    free(memo);
    return st;
}

/* Whether a workspace that raises the estimate base by d MiB, present
 * with probability p, is counted: when p is above (base + d) / (2 base +
 * d), counting it has the smaller expected relative error. */
static bool ws_counts(double p, double base, double d) {
    return d > 0 && base > 0 && p > (base + d) / (2 * base + d);
}

dlp_status dlp_convws_roofline(const dlp_convws *m, const dlp_feat_graph *fg,
                               const dlp_pred_config *c, dlp_feat_roofline *r,
                               dlp_error *err) {
    bool half = c->precision != DLP_PREC_FP32;
    const convws_part *t = m ? &m->part[half] : NULL;
    dlp_status st = DLP_OK;
    if (!t || !t->cls || c->mode != DLP_MODE_INFERENCE || !fg->n_convs ||
        (st = dlp_forest_ready(t->cls, err))) {
        /* a training step's memory is dlp_feat_mem_estimate_mib's (with
         * dlp_convws_train_view's answer) */
        dlp_feat_roofline_of(fg, c, r);
        return st;
    }
    double acc[2] = {0, 0};
    double base = dlp_feat_inference_mem_mib(fg, c, acc);
    /* The memory a workspace must fit in beside the rest: the card's (or
     * the MIG instance's) as named, the context not taken off. PyTorch
     * tries cuDNN's first plan and on running out of memory the next, so
     * on a smaller card a shape's workspace of tens of GiB (fp32 FFT
     * plans; the grid measured up to 137 GiB on the H200) is not taken,
     * and another plan's, not measured, is counted as none. */
    double room = c->has_mig ? c->mig.mem_gb * 1024.0 : c->device.mem_mib;
    double *pm = malloc(2 * (size_t)fg->n_convs * sizeof *pm);
    if (!pm) {
        dlp_feat_roofline_of(fg, c, r);
        return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    }
    st = conv_answers(m, half, fg, pm, pm + fg->n_convs, err);
    for (int i = 0; !st && i < fg->n_convs; i++) {
        const dlp_feat_conv *cv = &fg->convs[i];
        double p = pm[i], mib = pm[fg->n_convs + i];
        if (p < 0.5) continue;
        double one[2] = {0, 0};
        one[cv->post] = dlp_feat_conv_live_bytes(cv, c->precision) + mib * 1048576.0;
        if (one[cv->post] <= acc[cv->post]) continue;   /* below one counted */
        double d = dlp_feat_inference_mem_mib(fg, c, one) - base;
        if (!ws_counts(p, base, d)) continue;
        if (room > 0 && base + d > room) continue;   /* cannot be allocated */
        acc[cv->post] = one[cv->post];
    }
    free(pm);
    if (st)
        dlp_feat_roofline_of(fg, c, r);
    else
        dlp_feat_roofline_ws(fg, c, acc, r);
    return st;
}

/* The backward part's answers for fg's dense convolutions under c at
 * precision half, counted into the step's peak: each convolution's
 * backward point takes its predicted workspace in place of the walk's
 * rule (dlp_feat_train_bwd_mib), none where p < 0.5, and a workspace
 * that raises the step's peak without them (base) counts under
 * ws_counts. The result is the step's peak over every backward point,
 * at least fwd_best (the forward's); r: fg's roofline under c. */
static dlp_status bwd_peak(const dlp_convws *m, const dlp_feat_graph *fg,
                           const dlp_pred_config *c, const dlp_feat_roofline *r,
                           bool half, double room, double fwd_best,
                           double *peak, dlp_error *err) {
    int N = fg->n_train_curve;
    double *pm = malloc(2 * (size_t)fg->n_convs * sizeof *pm);
    int *conv_at = malloc((size_t)N * sizeof *conv_at);
    dlp_status st = pm && conv_at ? DLP_OK : dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    if (!st) st = conv_answers(m, BWD_PART + half, fg, pm, pm + fg->n_convs, err);
    if (st) {
        free(pm);
        free(conv_at);
        return st;
    }
    for (int t = 0; t < N; t++) conv_at[t] = -1;
    for (int i = 0; i < fg->n_convs; i++)
        if (fg->convs[i].tpos >= 0 && fg->convs[i].tpos < N) conv_at[fg->convs[i].tpos] = i;
    /* the step without the dense convolutions' backward workspaces */
    double base = fwd_best;
    for (int t = 0; t < N; t++) {
        /* a point of no dense convolution keeps the walk's rule (a
         * grouped one's input + output) */
        double walk = fg->train_curve[t].ws * (half ? 0.5 : 1.0);
        double at = dlp_feat_train_bwd_mib(fg, c, r, t, conv_at[t] < 0 ? walk : 0);
        if (at > base) base = at;
    }
    double best = base;
    for (int t = 0; t < N; t++) {
        int i = conv_at[t];
        if (i < 0 || pm[i] < 0.5) continue;
        double at = dlp_feat_train_bwd_mib(fg, c, r, t, pm[fg->n_convs + i] * 1048576.0);
        if (at > best && ws_counts(pm[i], base, at - base) && !(room > 0 && at > room))
            best = at;
    }
    free(pm);
    free(conv_at);
    *peak = best;
    return DLP_OK;
}

dlp_status dlp_convws_train_view(const dlp_convws *m, const dlp_feat_graph *fg,
                                 const dlp_pred_config *c,
                                 dlp_feat_graph *view, dlp_error *err) {
    *view = *fg;
    bool half = c->precision != DLP_PREC_FP32;
    const convws_part *t = m ? &m->part[half] : NULL;
    view->train_ws_mib[half] = 0;
    view->train_ws_peak[half] = false;
    if (!t || !t->cls || c->mode != DLP_MODE_TRAINING || !fg->n_convs ||
        !fg->n_train_curve)
        return DLP_OK;
    dlp_status st = dlp_forest_ready(t->cls, err);
    double *pm = st ? NULL : malloc(2 * (size_t)fg->n_convs * sizeof *pm);
    if (!st && !pm) st = dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    if (!st) st = conv_answers(m, half, fg, pm, pm + fg->n_convs, err);
    dlp_feat_roofline r;
    dlp_feat_roofline_of(fg, c, &r);
    double base = dlp_feat_mem_estimate_of(view, c, &r), best = 0;
    /* as in inference, a plan whose workspace the card cannot hold is
     * not taken (dlp_convws_roofline) */
    double room = c->has_mig ? c->mig.mem_gb * 1024.0 : c->device.mem_mib;
    for (int i = 0; !st && i < fg->n_convs; i++) {
        double p = pm[i], mib = pm[fg->n_convs + i];
        if (p < 0.5) continue;
        double at = dlp_feat_train_fwd_mib(fg, c, &r, fg->convs[i].tpos,
                                           mib * 1048576.0);
        if (at > best && ws_counts(p, base, at - base) &&
            !(room > 0 && at > room))
            best = at;
    }
    free(pm);
    if (!st && m->part[BWD_PART + half].cls) {
        st = bwd_peak(m, fg, c, &r, half, room, best, &best, err);
        if (!st) view->train_ws_peak[half] = true;
    }
    if (!st) view->train_ws_mib[half] = best;
    return st;
}

dlp_status dlp_convws_examples_fit(const dlp_examples *E, const int32_t *tr,
                                  int ntr, const int32_t *va, int nva,
                                  dlp_convws **ws, dlp_error *err) {
    *ws = NULL;
    const dlp_convws_calls *c = E->convws;
    if (!c || !c->n) return DLP_OK;
    bool *use = malloc((size_t)(c->n_names ? c->n_names : 1) * sizeof *use);
    bool *seen = calloc((size_t)(E->n_models ? E->n_models : 1), 1);
    bool *kept = calloc((size_t)(E->n_models ? E->n_models : 1), 1);
    if (!use || !seen || !kept) {
        free(use); free(seen); free(kept);
        return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    }
    for (int i = 0; i < E->n; i++) seen[E->ex[i].model] = true;
    for (int i = 0; i < ntr; i++) kept[E->ex[tr ? tr[i] : i].model] = true;
    for (int i = 0; i < nva; i++) kept[E->ex[va[i]].model] = true;
    for (int k = 0; k < c->n_names; k++) {
        use[k] = true;
        for (int m = 0; m < E->n_models; m++)
            if (seen[m] && !kept[m] && !strcmp(E->models[m], c->names[k])) {
                use[k] = false;
                break;
            }
    }
    dlp_status st = dlp_convws_fit(c, use, E->mode == DLP_MODE_TRAINING, ws, err);
    free(use); free(seen); free(kept);
    return st;
}


dlp_status dlp_convws_examples_annotate(const dlp_convws *ws,
                                        const dlp_examples *E, dlp_error *err) {
    if (!ws || E->mode != DLP_MODE_TRAINING) return DLP_OK;
    uint8_t *done = calloc((size_t)(E->n_fg ? E->n_fg : 1), 1);
    if (!done) return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    dlp_status st = DLP_OK;
    for (int i = 0; !st && i < E->n; i++) {
        const dlp_example *x = &E->ex[i];
        int h = x->cfg.precision != DLP_PREC_FP32;
        if (done[x->fg] >> h & 1) continue;
        done[x->fg] |= (uint8_t)(1 << h);
        dlp_feat_graph v;
        st = dlp_convws_train_view(ws, &E->fg[x->fg], &x->cfg, &v, err);
        if (!st) {
            E->fg[x->fg].train_ws_mib[h] = v.train_ws_mib[h];
            E->fg[x->fg].train_ws_peak[h] = v.train_ws_peak[h];
        }
    }
    free(done);
    if (st) dlp_convws_examples_clear(E);
    return st;
}

void dlp_convws_examples_clear(const dlp_examples *E) {
    for (int f = 0; f < E->n_fg; f++) {
        E->fg[f].train_ws_mib[0] = E->fg[f].train_ws_mib[1] = 0;
        E->fg[f].train_ws_peak[0] = E->fg[f].train_ws_peak[1] = false;
    }
}

/* Part t's forests and measured shapes, "<prefix>/...". */
static dlp_status save_part(const convws_part *m, const char *prefix,
                            dlp_nn_file *out, dlp_error *err) {
    char name[64];
    snprintf(name, sizeof name, "%s/cls", prefix);
    dlp_status st = dlp_forest_save(m->cls, out, name, err);
    snprintf(name, sizeof name, "%s/reg", prefix);
    if (!st) st = dlp_forest_save(m->reg, out, name, err);
    if (st || !m->n_exact) return st;
    int64_t *k = malloc((size_t)m->n_exact * sizeof *k);
    float *v = malloc((size_t)m->n_exact * 2 * sizeof *v);
    if (!k || !v) {
        free(k); free(v);
        return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    }
    for (int i = 0; i < m->n_exact; i++) {
        k[i] = m->exact[i].key;
        v[2 * i] = m->exact[i].p;
        v[2 * i + 1] = m->exact[i].mib;
    }
    snprintf(name, sizeof name, "%s/exact_keys", prefix);
    st = dlp_nn_file_add_i64(out, name, k, (uint64_t)m->n_exact, err);
    snprintf(name, sizeof name, "%s/exact", prefix);
    if (!st) st = dlp_nn_file_add_f32(out, name, v, 2 * (uint64_t)m->n_exact, err);
    free(k); free(v);
    return st;
}

dlp_status dlp_convws_save(const dlp_convws *m, dlp_nn_file *out,
                           dlp_error *err) {
    dlp_status st = DLP_OK;
    for (int t = 0; !st && t < N_PARTS; t++)
        if (m->part[t].cls) st = save_part(&m->part[t], PART_PREFIX[t], out, err);
    return st;
}

/* The measured shapes (none: an empty table): keys strictly increasing,
 * probabilities in [0, 1], sizes finite and >= 0. */
static dlp_status load_exact(const dlp_nn_file *in, const char *prefix,
                             convws_part *m, dlp_error *err) {
    char kn[64], vn[64];
    snprintf(kn, sizeof kn, "%s/exact_keys", prefix);
    snprintf(vn, sizeof vn, "%s/exact", prefix);
    const dlp_nn_entry *k = dlp_nn_file_get(in, kn, DLP_NN_I64);
    const dlp_nn_entry *v = dlp_nn_file_get(in, vn, DLP_NN_F32);
    if (!k && !v) return DLP_OK;
    if (!k || !v || v->count != 2 * k->count || k->count > (1u << 26))
        return dlp_fail(err, DLP_ERR_FORMAT, "%s: measured shapes malformed", prefix);
    int n = (int)k->count;
    float *f = malloc((size_t)(n > 0 ? 2 * n : 1) * sizeof *f);
    m->exact = malloc((size_t)(n ? n : 1) * sizeof *m->exact);
    if (!f || !m->exact) {
        free(f);
        return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    }
    dlp_status st = dlp_nn_file_read_f32(in, vn, f, 2 * (uint64_t)n, err);
    const int64_t *key = k->data;
    for (int i = 0; !st && i < n; i++) {
        if ((i && key[i] <= key[i - 1]) || !(f[2 * i] >= 0 && f[2 * i] <= 1) ||
            !(f[2 * i + 1] >= 0 && f[2 * i + 1] < 1e9f))
            st = dlp_fail(err, DLP_ERR_FORMAT, "%s: measured shape %d malformed",
                          prefix, i);
        m->exact[i] = (convws_exact){key[i], f[2 * i], f[2 * i + 1]};
    }
    free(f);
    if (!st) m->n_exact = n;
    return st;
}

/* Part t from "<prefix>/...": empty when the file has no such forests. */
static dlp_status load_part(const dlp_nn_file *in, const char *prefix,
                            convws_part *m, dlp_error *err) {
    char name[64];
    snprintf(name, sizeof name, "%s/cls", prefix);
    dlp_status st = dlp_forest_load(in, name, &m->cls, err);
    snprintf(name, sizeof name, "%s/reg", prefix);
    if (!st) st = dlp_forest_load(in, name, &m->reg, err);
    if (!st && (!m->cls) != (!m->reg))
        st = dlp_fail(err, DLP_ERR_FORMAT, "%s: one of its two forests is missing",
                      prefix);
    /* forests of files before the FFT features read the first
     * DLP_CONVWS_NF_V1 of the same vector (their node indices are checked
     * against their own count) */
    if (!st && m->cls && (m->cls->n_features != m->reg->n_features ||
                          (m->cls->n_features != DLP_CONVWS_NF &&
                           m->cls->n_features != DLP_CONVWS_NF_V1)))
        st = dlp_fail(err, DLP_ERR_FORMAT, "%s: forests take %d / %d features, "
                      "not %d (or %d)", prefix, m->cls->n_features,
                      m->reg->n_features, DLP_CONVWS_NF, DLP_CONVWS_NF_V1);
    if (!st && m->cls) st = load_exact(in, prefix, m, err);
    return st;
}

dlp_status dlp_convws_load(const dlp_nn_file *in, dlp_convws **out,
                           dlp_error *err) {
    *out = NULL;
    dlp_convws *m = calloc(1, sizeof *m);
    if (!m) return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    dlp_status st = DLP_OK;
    bool any = false;
    for (int t = 0; !st && t < N_PARTS; t++) {
        st = load_part(in, PART_PREFIX[t], &m->part[t], err);
        any = any || m->part[t].cls;
    }
    if (st || !any) {
        dlp_convws_free(m);
        return st;
    }
    *out = m;
    return DLP_OK;
}
