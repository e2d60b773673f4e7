/*
 * pred_optime.c — the operator-time model (docs/COST.md, "Convolution and
 * product times", "Memory-bound operators and attention"): how long one
 * convolution, product, memory-bound operator (elementwise, norm,
 * softmax, pooling) or fused attention runs on the GPU, relative to its
 * roofline. The roofline sum is far from the
 * CUDA-graph latency (held out 36%), and the learned predictors' error is
 * mostly one level per network and precision (docs/EVAL.md, seventeenth
 * session): how far its kernels run from their FLOPs and bytes. cuDNN and
 * cuBLAS pick a kernel per shape and type (benchmark off), a function of
 * the shape that probes of random shapes of a fixed grid, with no model
 * behind them, measure (tools/collect/probe_optime.py: CUDA-graph replays,
 * the collector's settings). Gradient-boosted trees on the shape
 * (feat_optime.c's features), one forest per kind (convolution, product,
 * memory-bound, attention; a file trained before the last two has none
 * of them, and those nodes keep their own roofline times),
 * learn the log2 of measured time over roofline time on the probes' card;
 * a node's time on a device is its roofline there times 2^forest, so a
 * shape larger than the grid's keeps the roofline's growth and another
 * card the roofline's ratio.
 *
 * The kinds that read it (the trees, DIPPM, TraPPM) fit it in training on
 * every probe (no dataset model is behind them, so no fold's held-out
 * models reach it: dlp_optime_examples_fit) and store it in their model
 * files ("optime/..."); at prediction each reads a view of the request's
 * graph with its own model's times (dlp_optime_view).
 */
#include "pred_train.h"
#include "../tree/tree.h"
#include "../device/device.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Boosting per kind: rounds, depth, eta (the forty-fourth session's
 * first choice; docs/COST.md has the held-out error). */
#define OPTIME_ROUNDS 300
#define OPTIME_DEPTH 8
#define OPTIME_ETA 0.1
/* The memory-bound forest's rounds (fifty-fourth session): with the
 * resize records at OPTIME_ROUNDS every other category lost 0.2-0.7
 * points, at 600 each is better than before (docs/COST.md). */
#define OPTIME_MEM_ROUNDS 600
/* A probed time outside these bounds (microseconds) is a broken record. */
#define OPTIME_MIN_US 0.5
#define OPTIME_MAX_US 1e7
/* The forest's answer is clamped to 2^[-OPTIME_MAX_LOG2, +...] of the
 * roofline: no kernel runs faster than its roofline by more than the
 * probes' noise, none 2^12 slower. */
#define OPTIME_MAX_LOG2 12.0f

static const char *const KIND_PREFIX[DLP_OP_NKIND] = {
    DLP_OPTIME_GROUP "conv", DLP_OPTIME_GROUP "mm", DLP_OPTIME_GROUP "mem",
    DLP_OPTIME_GROUP "attn"};

struct dlp_optime {
    dlp_forest *f[DLP_OP_NKIND];   /* per dlp_op_kind; NULL: the node's
                                      own roofline */
    /* whether the attention forest splits on hbias (battn_timed) and
     * which categories the memory-bound forest times (cat_timed), each
     * found once (forest_fact) */
    atomic_int hbias, mem_cats_known;
};

void dlp_optime_probes_free(dlp_optime_probes *p) {
    if (!p) return;
    free(p->rec);
    memset(p, 0, sizeof *p);
}

/* The i-th integer of JSON array a (>= 1), or -1. */
static int64_t pos_at(const cJSON *a, int i) {
    return dlp_probe_int(cJSON_GetArrayItem(a, i), 1, 1e9);
}

/* Member name of object o, an integer >= lo, or -1. */
static int64_t pos_of(const cJSON *o, const char *name, int64_t lo) {
    return dlp_probe_int(cJSON_GetObjectItemCaseSensitive(o, name), lo, 1e9);
}

/* Elements of a JSON shape array (at most 2^40), 1 for [], -1 when
 * malformed or larger. */
static int64_t arr_numel(const cJSON *a, int *rank) {
    *rank = cJSON_GetArraySize(a);
    if (!cJSON_IsArray(a) || *rank > 8) return -1;
    int64_t e = 1;
    for (int i = 0; i < *rank; i++) {
        int64_t d = pos_at(a, i);
        if (d < 1 || e > ((int64_t)1 << 40) / d) return -1;   /* at most 2^40 */
        e *= d;
    }
    return e;
}

/* Index of string member `name` of v in list (NULL-terminated), or -1. */
static int name_in(const cJSON *v, const char *name, const char *const *list) {
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(v, name);
    if (!cJSON_IsString(s)) return -1;
    for (int i = 0; list[i]; i++)
        if (!strcmp(s->valuestring, list[i])) return i;
    return -1;
}

/* A memory-bound or attention record of probe_memop.py (op names its
 * category); the same fields feat_optime.c sets from a graph node;
 * false when malformed. */
static bool memop_shape(const cJSON *v, const char *op, dlp_op_shape *s) {
    static const char *const unary[] = {"relu", "gelu", "silu", "sigmoid",
                                        "tanh", "hardswish", "hardsigmoid",
                                        "exp", NULL};
    static const char *const binary[] = {"add", "mul", NULL};
    static const char *const pool[] = {"max", "avg", "gavg", NULL};
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(v, "x");
    int rank;
    int64_t e = arr_numel(x, &rank);
    if (e < 1 || rank < 1) return false;
    int64_t last = pos_at(x, rank - 1);
    if (!strcmp(op, "sdpa")) {
        if (rank != 4) return false;
        s->kind = DLP_OP_ATTN;
        s->b = pos_at(x, 0); s->m = pos_at(x, 1); s->kk = pos_at(x, 2);
        s->nn = last;
        s->d = pos_of(v, "s", 1);
        s->causal = pos_of(v, "causal", 0) == 1;
        /* "mask" (forty-seventh session's records): none, causal (as
         * "causal"), bool or float, a materialized [B, 1, L, S] mask;
         * (forty-eighth) bcast, a bool [B, 1, L, S] view of L elements;
         * (forty-ninth) hbias / hbiasb, T5's position bias [1 / B, H, L,
         * S], hbiasw the bias masked by the padding mask in the call */
        static const char *const masks[] = {"none", "causal", "bool", "float",
                                            "bcast", "hbias", "hbiasb",
                                            "hbiasw", NULL};
        if (cJSON_GetObjectItemCaseSensitive(v, "mask")) {
            int m = name_in(v, "mask", masks);
            if (m < 0 || (m == 1) != s->causal) return false;
            s->masked = m >= 2 && m <= 4;
            s->bcast = m == 4;
            s->hbias = m >= 5 ? (uint8_t)(m - 4) : 0;
        }
        return s->d > 0;
    }
    int cat = -1;
    for (int i = 0; i < DLP_MEM_NCAT; i++)
        if (!strcmp(op, dlp_mem_cat_name[i])) cat = i;
    if (cat < 0) return false;
    s->kind = DLP_OP_MEM;
    s->cat = (uint8_t)cat;
    s->e = e;
    s->d = last;
    if (rank == 4) {
        s->n = pos_at(x, 0); s->c = pos_at(x, 1);
        s->h = pos_at(x, 2); s->w = pos_at(x, 3);
    }
    switch (cat) {
    case DLP_MEM_UNARY: {
        int fn = name_in(v, "fn", unary);
        s->fn = (uint8_t)fn;
        s->n = s->c = s->h = s->w = 0;
        return fn >= 0;
    }
    case DLP_MEM_BINARY: {
        const cJSON *y = cJSON_GetObjectItemCaseSensitive(v, "y");
        int yr, fn = name_in(v, "fn", binary);
        int64_t ye = arr_numel(y, &yr);
        if (fn < 0 || ye < 1 || ye > e) return false;
        s->n = s->c = s->h = s->w = 0;
        s->fn = (uint8_t)fn;
        s->ye = ye;
        int64_t ylast = yr ? pos_at(y, yr - 1) : 1;
        s->bc = ye == e ? 0 : ye == 1 ? 3 : ylast == 1 ? 1 : ylast == last ? 2 : 4;
        return true;
    }
    case DLP_MEM_BN:
        s->d = 0;
        return rank == 4;
    case DLP_MEM_GN:
        s->g = pos_of(v, "groups", 1);
        s->h *= s->w;     /* the spatial size flattened, as from a graph */
        s->w = 1;
        s->d = 0;
        return rank == 4 && s->g > 0 && s->c % s->g == 0;
    case DLP_MEM_LN: case DLP_MEM_SOFTMAX:
        if (rank != 2) return false;
        s->r = pos_at(x, 0);
        return true;
    case DLP_MEM_MFILL: {   /* scores x [B, H, L, S], the mask "y" */
        const cJSON *y = cJSON_GetObjectItemCaseSensitive(v, "y");
        int yr;
        int64_t ye = arr_numel(y, &yr);
        if (rank != 4 || yr != 4 || ye < 1) return false;
        int64_t xs[4] = {s->n, s->c, s->h, s->w}, ms[4];
        for (int i = 0; i < 4; i++) ms[i] = pos_at(y, i);
        int bc = dlp_mfill_bcast(xs, ms);
        if (bc < 0) return false;
        s->bc = (uint8_t)bc;
        s->ye = ye;
        return true;
    }
    case DLP_MEM_GATHER: {  /* x [R, W] (axis 0) or [O, R, W] (axis 1)
                               by "n" indices */
        int64_t ax = pos_of(v, "axis", 0), r = pos_of(v, "n", 1);
        if (rank < 2 || rank > 3 || ax != rank - 2 || r < 1 ||
            (double)e / pos_at(x, rank - 2) * (double)r > 0x1p40)
            return false;
        s->n = rank == 3 ? pos_at(x, 0) : 1;
        s->r = r;
        s->ye = e;
        s->e = s->n * r * last;
        return true;
    }
    case DLP_MEM_RESIZE: {  /* x [N, C, H, W] interpolated to "o" [Ho, Wo] */
        static const char *const modes[] = {"linear", "linear_ac", "nearest",
                                            "cubic", NULL};
        const cJSON *o = cJSON_GetObjectItemCaseSensitive(v, "o");
        int fn = name_in(v, "fn", modes);
        if (rank != 4 || fn < 0 || cJSON_GetArraySize(o) != 2) return false;
        s->fn = (uint8_t)fn;
        s->ho = pos_at(o, 0);
        s->wo = pos_at(o, 1);
        s->cl = pos_of(v, "cl", 0) == 1;
        s->d = 0;
        return s->ho > 0 && s->wo > 0;
    }
    case DLP_MEM_COPY:      /* x permuted by (0, 2, 1, 3): rows of D moved */
        s->n = s->c = s->h = s->w = 0;
        s->r = e / last;
        return rank == 4;
    default: {                                     /* pool */
        int fn = name_in(v, "fn", pool);
        if (rank != 4 || fn < 0) return false;
        s->fn = (uint8_t)fn;
        s->d = 0;
        if (fn == DLP_FN_GAVG) {
            s->ho = s->wo = 1;
            return true;
        }
        s->kh = pos_of(v, "k", 1); s->s = pos_of(v, "s", 1);
        s->p = pos_of(v, "p", 0);
        if (s->kh < 0 || s->s < 0 || s->p < 0 || s->h + 2 * s->p < s->kh ||
            s->w + 2 * s->p < s->kh)
            return false;
        s->ho = (s->h + 2 * s->p - s->kh) / s->s + 1;
        s->wo = (s->w + 2 * s->p - s->kh) / s->s + 1;
        return true;
    }
    }
}

/* The shape of record v; false when malformed. */
static bool record_shape(const cJSON *v, dlp_op_shape *s) {
    memset(s, 0, sizeof *s);
    const cJSON *op = cJSON_GetObjectItemCaseSensitive(v, "op");
    if (!cJSON_IsString(op)) return false;
    if (!strcmp(op->valuestring, "conv")) {
        const cJSON *x = cJSON_GetObjectItemCaseSensitive(v, "x"),
                    *w = cJSON_GetObjectItemCaseSensitive(v, "w");
        if (cJSON_GetArraySize(x) != 4 || cJSON_GetArraySize(w) != 4) return false;
        s->kind = DLP_OP_CONV;
        s->n = pos_at(x, 0); s->c = pos_at(x, 1); s->h = pos_at(x, 2);
        s->w = pos_at(x, 3); s->k = pos_at(w, 0); s->kh = pos_at(w, 2);
        s->kw = pos_at(w, 3);
        s->s = pos_of(v, "s", 1); s->p = pos_of(v, "p", 0);
        s->g = pos_of(v, "g", 1);
        s->cl = pos_of(v, "cl", 0) == 1;
        if (s->n < 0 || s->c < 0 || s->h < 0 || s->w < 0 || s->k < 0 ||
            s->kh < 0 || s->kw < 0 || s->s < 0 || s->p < 0 || s->g < 0 ||
            s->c % s->g || pos_at(w, 1) != s->c / s->g ||
            s->h + 2 * s->p < s->kh || s->w + 2 * s->p < s->kw)
            return false;
        s->ho = (s->h + 2 * s->p - s->kh) / s->s + 1;
        s->wo = (s->w + 2 * s->p - s->kw) / s->s + 1;
        return true;
    }
    if (!strcmp(op->valuestring, "mm")) {
        s->kind = DLP_OP_MM;
        s->b = pos_of(v, "b", 1); s->m = pos_of(v, "m", 1);
        s->kk = pos_of(v, "k", 1); s->nn = pos_of(v, "n", 1);
        s->bw = pos_of(v, "bw", 0) == 1;
        /* "bias" (fiftieth session's records): a Linear with its bias */
        const cJSON *bias = cJSON_GetObjectItemCaseSensitive(v, "bias");
        int64_t b = bias ? dlp_probe_int(bias, 0, 1) : 0;
        s->bias = b == 1;
        return s->b > 0 && s->m > 0 && s->kk > 0 && s->nn > 0 && b >= 0 &&
               !(s->bias && s->bw);
    }
    return memop_shape(v, op->valuestring, s);
}

/* Whether a line of spec `spec` is read: inference the forward times of
 * the optime, memop and memtrain probes, training the forward +
 * backward times of the optrain and memtrain ones. */
static bool spec_read(const char *spec, bool train) {
    if (!strcmp(spec, "grid:memtrain") || !strcmp(spec, "grid:optrain")) return true;
    return !train && (!strcmp(spec, "grid:optime") || !strcmp(spec, "grid:memop"));
}

/* One line's records appended (a line of another card's probes is read
 * with that card: its roofline normalises them). */
static dlp_status add_line(const cJSON *r, void *user, dlp_error *err) {
    dlp_optime_probes *p = user;
    const cJSON *spec = cJSON_GetObjectItemCaseSensitive(r, "spec"),
                *gpu = cJSON_GetObjectItemCaseSensitive(r, "gpu"),
                *ops = cJSON_GetObjectItemCaseSensitive(r, "ops");
    if (!cJSON_IsString(spec) || !spec_read(spec->valuestring, p->train) ||
        !cJSON_IsString(gpu) || !cJSON_IsArray(ops))
        return DLP_OK;
    dlp_device dev;
    if (dlp_device_find(gpu->valuestring, &dev, NULL)) {
        p->n_unknown_gpu++;
        return DLP_OK;
    }
    const cJSON *v;
    cJSON_ArrayForEach(v, ops) {
        const cJSON *prec = cJSON_GetObjectItemCaseSensitive(v, "prec"),
                    *us = cJSON_GetObjectItemCaseSensitive(
                        v, p->train ? "train_us" : "us");
        dlp_precision pr;
        dlp_optime_probe q;
        bool shape = record_shape(v, &q.shape);
        if (!cJSON_IsString(prec) || dlp_precision_parse(prec->valuestring, &pr, NULL) ||
            !cJSON_IsNumber(us) || !(us->valuedouble >= OPTIME_MIN_US &&
                                     us->valuedouble <= OPTIME_MAX_US) ||
            !shape) {
            p->n_bad++;
            continue;
        }
        dlp_pred_config c;
        dlp_pred_config_init(&c);
        c.device = dev;
        c.precision = pr;
        dlp_feat_device d;
        dlp_feat_device_of(&c, &d);
        q.prec = (uint8_t)pr;
        q.us = (float)us->valuedouble;
        q.roof_us = (float)((p->train ? 3 : 1) * dlp_op_shape_roof_us(&q.shape, pr, &d));
        if (!(q.roof_us > 0)) { p->n_bad++; continue; }
        if (!dlp_grow((void **)&p->rec, &p->cap, p->n + 1, sizeof *p->rec))
            return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
        p->rec[p->n++] = q;
    }
    return DLP_OK;
}

dlp_status dlp_optime_probes_read(const char *dir, bool train,
                                  dlp_optime_probes *out, dlp_error *err) {
    memset(out, 0, sizeof *out);
    out->train = train;
    dlp_status st = train ? DLP_OK
                          : dlp_probe_records(dir, "optime", add_line, out,
                                              &out->n_files, err);
    if (!st) st = dlp_probe_records(dir, "optrain", add_line, out, &out->n_files, err);
    if (!st) st = dlp_probe_records(dir, "memop", add_line, out, &out->n_files, err);
    if (st) dlp_optime_probes_free(out);
    return st;
}

/* The target of probe q: log2 of measured over roofline time. */
static float probe_target(const dlp_optime_probe *q) {
    return (float)log2((double)q->us / (double)q->roof_us);
}

/* Trains kind k's forest on the probes with use[i] (NULL: all); *out NULL
 * with fewer than 16 such probes. */
static dlp_status fit_kind(const dlp_optime_probes *p, const bool *use, int k,
                           int threads, dlp_forest **out, dlp_error *err) {
    *out = NULL;
    size_t n = 0;
    for (size_t i = 0; i < p->n; i++)
        n += p->rec[i].shape.kind == k && (!use || use[i]);
    if (n < 16) return DLP_OK;
    float *x = malloc(n * DLP_OPTIME_NF * sizeof *x), *y = malloc(n * sizeof *y);
    if (!x || !y) {
        free(x); free(y);
        return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    }
    size_t j = 0;
    for (size_t i = 0; i < p->n; i++) {
        const dlp_optime_probe *q = &p->rec[i];
        if (q->shape.kind != k || (use && !use[i])) continue;
        dlp_op_shape_features(&q->shape, (dlp_precision)q->prec, x + j * DLP_OPTIME_NF);
        y[j++] = probe_target(q);
    }
    dlp_tree_params tp;
    dlp_tree_params_default(&tp);
    tp.rounds = k == DLP_OP_MEM ? OPTIME_MEM_ROUNDS : OPTIME_ROUNDS;
    tp.max_depth = OPTIME_DEPTH;
    tp.eta = OPTIME_ETA;
    tp.hist = 1;
    tp.threads = threads > 0 ? threads : 1;
    /* through the fit cache when one is set (tree_cache.c) */
    dlp_status st = dlp_forest_fit(x, n, DLP_OPTIME_NF, y, &tp, out, err);
    free(x); free(y);
    return st;
}

/* Whether m has a forest of any kind. */
static bool any_forest(const dlp_optime *m) {
    for (int k = 0; k < DLP_OP_NKIND; k++)
        if (m->f[k]) return true;
    return false;
}

/* Whether m times fg's attentions: it has their forest and each matched
 * SDPA has its op (else the pattern's nodes keep their own times). */
static bool attn_timed(const dlp_optime *m, const dlp_feat_graph *fg) {
    if (!m->f[DLP_OP_ATTN]) return false;
    for (int i = 0; i < fg->n_nodes; i++)
        if (fg->in_sdpa[i] == 2 && fg->node_op[i] < 0) return false;
    return true;
}

/* ask(f) (>= 0), found at the first caller and kept in *slot as ask(f) +
 * 1 (0 not yet asked): ask reads the whole forest, and the answer depends
 * on the model only (the one field of m a reader writes, as
 * dlp_forest_ready's state; two threads store the same). */
static int forest_fact(const atomic_int *slot, const dlp_forest *f,
                       int (*ask)(const dlp_forest *)) {
    atomic_int *known = (atomic_int *)slot;
    int k = atomic_load_explicit(known, memory_order_relaxed);
    if (!k) {
        k = ask(f) + 1;
        atomic_store_explicit(known, k, memory_order_relaxed);
    }
    return k - 1;
}

/* 1 when an attention forest splits on hbias (x[18]), else 0. */
static int splits_hbias(const dlp_forest *f) {
    return dlp_forest_splits_on(f, DLP_OPTIME_HBIAS_X);
}

/* Whether fg's biased attentions (battn) are timed whole: each has its
 * record and m's attention forest splits on hbias (x[18]), so
 * it was fitted on T5-style probes; a forest fitted before them never
 * does (the flag was 0 in every row), and its file's predictions stay
 * what they were. */
static bool battn_timed(const dlp_optime *m, const dlp_feat_graph *fg) {
    const dlp_forest *f = m->f[DLP_OP_ATTN];
    bool any = false;
    for (int i = 0; f && i < fg->n_nodes; i++) {
        if (fg->battn[i] != 2) continue;
        if (fg->battn_op[i] < 0) return false;
        any = true;
    }
    return any && forest_fact(&m->hbias, f, splits_hbias) == 1;
}

/* The categories a memory-bound forest times: 1 + the last code it
 * splits off. Those before MFILL always; each later one (MFILL, GATHER,
 * RESIZE) when the forest was fitted on its probes: some split of the
 * category feature (x[5]) lies above the code before it
 * (dlp_forest_max_split), which a forest fitted before has not. */
static int mem_cats(const dlp_forest *f) {
    float t = dlp_forest_max_split(f, DLP_OPTIME_CAT_X);
    int top = DLP_MEM_MFILL - 1;
    while (top + 1 < DLP_MEM_NCAT && t > (float)top) top++;
    return top + 1;
}

/* Whether m's memory-bound forest times category cat (mem_cats, found
 * once); else those nodes keep their own roofline times and a file
 * fitted before answers as it did. */
static bool cat_timed(const dlp_optime *m, int cat) {
    const dlp_forest *f = m->f[DLP_OP_MEM];
    return f && (cat < DLP_MEM_MFILL || cat < forest_fact(&m->mem_cats_known, f, mem_cats));
}

dlp_status dlp_optime_fit(const dlp_optime_probes *p, const bool *use,
                          int threads, dlp_optime **out, dlp_error *err) {
    *out = NULL;
    dlp_optime *m = calloc(1, sizeof *m);
    if (!m) return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    atomic_init(&m->hbias, 0);
    atomic_init(&m->mem_cats_known, 0);
    dlp_status st = DLP_OK;
    for (int k = 0; !st && k < DLP_OP_NKIND; k++)
        st = fit_kind(p, use, k, threads, &m->f[k], err);
    if (!st && any_forest(m)) {
        *out = m;
        return DLP_OK;
    }
    dlp_optime_free(m);
    return st;
}

/* A forest's answer clamped (NaN to the lower bound). */
static float clamp_eff(float e) {
    if (!(e > -OPTIME_MAX_LOG2)) e = -OPTIME_MAX_LOG2;
    if (e > OPTIME_MAX_LOG2) e = OPTIME_MAX_LOG2;
    return e;
}

/* log2 of shape s's time over its roofline at precision p, clamped; 0
 * (the roofline) when m has no forest of its kind. */
static float op_eff(const dlp_optime *m, const dlp_op_shape *s, dlp_precision p) {
    const dlp_forest *f = m && s->kind < DLP_OP_NKIND ? m->f[s->kind] : NULL;
    if (!f) return 0;
    float x[DLP_OPTIME_NF];
    dlp_op_shape_features(s, p, x);
    return clamp_eff(dlp_forest_eval(f, x));
}

double dlp_optime_us(const dlp_optime *m, const dlp_op_shape *s,
                     dlp_precision p, const dlp_feat_device *d) {
    return dlp_op_shape_roof_us(s, p, d) * exp2((double)op_eff(m, s, p));
}

/* One answer to find: op `op` of the graph at runtime `rt` and
 * precision `prec`, written to out[at]; row: its features. */
typedef struct {
    const float *row;
    int kind, op, rt, prec;
    size_t at;
} eff_job;

static int job_cmp(const void *a, const void *b) {
    const eff_job *x = a, *y = b;
    if (x->kind != y->kind) return x->kind < y->kind ? -1 : 1;
    return memcmp(x->row, y->row, DLP_OPTIME_NF * sizeof *x->row);
}

/* Answers jobs j[0..n) (their op, rt, prec and at set) for graph fg
 * into out: NaN for an op of a kind m has no forest for (the node keeps
 * its own roofline time: feat.c, node_time) or a category m does not
 * time (cat_timed: a masked fill, a gather), which is dropped before its
 * features are computed; each distinct shape and precision walks its
 * kind's forest once, all of a kind in one pass (a network repeats its
 * shapes: ResNet-50's 53 convolutions are 23 shapes), and each tree is
 * walked for every row while its nodes are in cache. The answers are
 * those of op_eff, bit for bit: one row's sum runs over the trees in the
 * same order. Fails on a forest of a loaded file that is broken
 * (dlp_forest_ready). */
static dlp_status eval_jobs(const dlp_optime *m, const dlp_feat_graph *fg,
                            eff_job *j, size_t n, float *out, dlp_error *err) {
    size_t kept = 0;
    for (size_t k = 0; k < n; k++) {
        const dlp_op_shape *s = &fg->ops[j[k].op].shape;
        j[k].kind = s->kind;
        if (m->f[j[k].kind] &&
            (s->kind != DLP_OP_MEM || cat_timed(m, s->cat)))
            j[kept++] = j[k];
        else out[j[k].at] = NAN;
    }
    n = kept;
    if (!n) return DLP_OK;
    float *x = malloc(n * DLP_OPTIME_NF * sizeof *x);
    const float **rows = malloc(n * sizeof *rows);
    float *y = malloc(n * sizeof *y);
    dlp_status st = DLP_OK;
    if (!x || !rows || !y) {
        free(x); free(rows); free(y);
        return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    }
    for (size_t k = 0; k < n; k++) {
        dlp_op_shape s = dlp_op_shape_at(&fg->ops[j[k].op].shape,
                                         (dlp_runtime)j[k].rt);
        dlp_op_shape_features(&s, (dlp_precision)j[k].prec,
                              x + k * DLP_OPTIME_NF);
        j[k].row = x + k * DLP_OPTIME_NF;
    }
    qsort(j, n, sizeof *j, job_cmp);
    for (size_t b = 0, e; !st && b < n; b = e) {
        for (e = b; e < n && j[e].kind == j[b].kind; e++) {}
        const dlp_forest *f = m->f[j[b].kind];
        if ((st = dlp_forest_ready(f, err))) break;
        int u = 0;                                     /* distinct rows */
        for (size_t k = b; k < e; k++)
            if (k == b || job_cmp(&j[k - 1], &j[k])) rows[u++] = j[k].row;
        dlp_forest_eval_many(f, rows, u, y);
        u = -1;
        for (size_t k = b; k < e; k++) {
            if (k == b || job_cmp(&j[k - 1], &j[k])) u++;
            out[j[k].at] = clamp_eff(y[u]);
        }
    }
    free(x); free(rows); free(y);
    return st;
}

bool dlp_optime_annotate(const dlp_optime *m, dlp_feat_graph *fg) {
    free(fg->op_eff);
    fg->op_eff = NULL;
    fg->attn_eff = fg->battn_eff = false;
    if (!m || !fg->n_ops) return true;
    size_t n = (size_t)fg->n_ops * DLP_RT_COUNT * DLP_PREC_COUNT;
    float *e = malloc(n * sizeof *e);
    eff_job *j = malloc(n * sizeof *j);
    bool ok = e && j;
    for (size_t k = 0; ok && k < n; k++)   /* dlp_op_eff_at's order */
        j[k] = (eff_job){.op = (int)(k / (DLP_RT_COUNT * DLP_PREC_COUNT)),
                         .rt = (int)(k / DLP_PREC_COUNT % DLP_RT_COUNT),
                         .prec = (int)(k % DLP_PREC_COUNT), .at = k};
    dlp_error err;
    ok = ok && eval_jobs(m, fg, j, n, e, &err) == DLP_OK;
    free(j);
    if (!ok) {
        free(e);
        return false;
    }
    fg->op_eff = e;
    fg->attn_eff = attn_timed(m, fg);
    fg->battn_eff = battn_timed(m, fg);
    return true;
}

dlp_status dlp_optime_view(const dlp_optime *m, const dlp_feat_graph *fg,
                           dlp_runtime rt, dlp_precision p,
                           dlp_feat_graph *view, float **eff, dlp_error *err) {
    *view = *fg;
    *eff = NULL;
    view->op_eff = NULL;
    if (!m || !fg->n_ops) return DLP_OK;
    float *e = calloc((size_t)fg->n_ops * DLP_RT_COUNT * DLP_PREC_COUNT,
                      sizeof *e);
    eff_job *j = malloc((size_t)fg->n_ops * 2 * sizeof *j);
    size_t n = 0;
    for (int i = 0; e && j && i < fg->n_ops; i++) {
        j[n++] = (eff_job){.op = i, .rt = rt, .prec = p,
                           .at = dlp_op_eff_at(i, rt, p)};
        /* a product kept in float at half precision (T5's attention:
         * half_f32) takes the fp32 time */
        if (p != DLP_PREC_FP32 && fg->half_f32[fg->ops[i].node])
            j[n++] = (eff_job){.op = i, .rt = rt, .prec = DLP_PREC_FP32,
                               .at = dlp_op_eff_at(i, rt, DLP_PREC_FP32)};
    }
    dlp_status st = e && j ? eval_jobs(m, fg, j, n, e, err)
                           : dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    free(j);
    if (st) {
        free(e);
        return st;
    }
    view->op_eff = *eff = e;
    view->attn_eff = attn_timed(m, fg);
    view->battn_eff = battn_timed(m, fg);
    return DLP_OK;
}

dlp_status dlp_optime_node_us(const dlp_optime *m, const dlp_feat_graph *fg,
                              const dlp_pred_config *c, double *us,
                              double *roof_us, dlp_error *err) {
    if (roof_us) {
        dlp_feat_graph bare = *fg;
        bare.op_eff = NULL;
        bare.attn_eff = bare.battn_eff = false;
        dlp_feat_node_roofline_us(&bare, c, roof_us);
    }
    dlp_feat_graph view;
    float *eff = NULL;
    dlp_status st = dlp_optime_view(m, fg, c->runtime, c->precision, &view,
                                    &eff, err);
    if (!st) dlp_feat_node_roofline_us(&view, c, us);
    free(eff);
    return st;
}

dlp_status dlp_optime_pred_feat(const dlp_optime *m, const dlp_pred_input *in,
                                dlp_feat_graph *local, const dlp_feat_graph **fg,
                                dlp_feat_graph *view, float **eff,
                                dlp_pred_result *out, dlp_error *err) {
    *eff = NULL;
    dlp_status st = dlp_pred_feat(in, local, fg, out, err);
    if (st) return st;
    st = dlp_optime_view(m, *fg, in->cfg->runtime, in->cfg->precision, view,
                         eff, err);
    if (st && *fg == local) dlp_feat_graph_free(local);
    return st;
}

/* ---- annotating every binding on the engine's threads --------------------
 * Each graph's answers are its own (dlp_optime_annotate writes only that
 * graph; the model is read, its lazily found facts are atomics, and
 * dlp_forest_ready is safe to race), so the graphs are claimed one at a
 * time from a shared counter (their op counts differ by orders of
 * magnitude) and the features are the same for any thread count. On the
 * inference data's 9,618 bindings this was ~16 s on one thread of every
 * call that trains with the operator times (eighty-eighth session). */
typedef struct {
    const dlp_optime *m;
    const dlp_examples *E;
} annotate_job;

static bool annotate_item(void *ctx, int f) {
    annotate_job *J = ctx;
    return dlp_optime_annotate(J->m, &J->E->fg[f]);
}

dlp_status dlp_optime_annotate_all(const dlp_optime *m, const dlp_examples *E,
                                   dlp_error *err) {
    annotate_job J = {m, E};
    return dlp_parallel_each(dlp_nn_threads(), E->n_fg, annotate_item, &J)
               ? DLP_OK : dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
}

dlp_status dlp_optime_examples_fit(const dlp_examples *E, dlp_optime **out,
                                   dlp_error *err) {
    *out = NULL;
    if (!E->optime || !E->optime->n)
        return DLP_OK;
    /* one thread: the same probes give the same forests, whatever the
     * caller's thread count */
    dlp_status st = dlp_optime_fit(E->optime, NULL, 1, out, err);
    if (!st) st = dlp_optime_annotate_all(*out, E, err);
    if (st) {
        dlp_optime_examples_clear(E);
        dlp_optime_free(*out);
        *out = NULL;
    }
    return st;
}

void dlp_optime_examples_clear(const dlp_examples *E) {
    for (int f = 0; f < E->n_fg; f++) {
        free(E->fg[f].op_eff);
        E->fg[f].op_eff = NULL;
        E->fg[f].attn_eff = E->fg[f].battn_eff = false;
    }
}

dlp_status dlp_optime_save(const dlp_optime *m, dlp_nn_file *out,
                           dlp_error *err) {
    dlp_status st = DLP_OK;
    for (int k = 0; !st && k < DLP_OP_NKIND; k++)
        if (m->f[k]) st = dlp_forest_save(m->f[k], out, KIND_PREFIX[k], err);
    return st;
}

dlp_status dlp_optime_load(const dlp_nn_file *in, dlp_optime **out,
                           dlp_error *err) {
    *out = NULL;
    dlp_optime *m = calloc(1, sizeof *m);
    if (!m) return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    atomic_init(&m->hbias, 0);
    atomic_init(&m->mem_cats_known, 0);
    dlp_status st = DLP_OK;
    for (int k = 0; !st && k < DLP_OP_NKIND; k++) {
        st = dlp_forest_load(in, KIND_PREFIX[k], &m->f[k], err);
        if (!st && m->f[k] && m->f[k]->n_features != DLP_OPTIME_NF &&
            m->f[k]->n_features != DLP_OPTIME_NF_OLD)
            st = dlp_fail(err, DLP_ERR_FORMAT, "%s: forest takes %d features, "
                          "not %d (or %d, fitted before x[22])", KIND_PREFIX[k],
                          m->f[k]->n_features, DLP_OPTIME_NF, DLP_OPTIME_NF_OLD);
    }
    if (st || !any_forest(m)) {
        dlp_optime_free(m);
        return st;
    }
    *out = m;
    return DLP_OK;
}

void dlp_optime_free(dlp_optime *m) {
    if (!m) return;
    for (int k = 0; k < DLP_OP_NKIND; k++) dlp_forest_free(m->f[k]);
    free(m);
}

dlp_status dlp_optime_heldout(const dlp_optime_probes *p, int folds,
                              uint64_t seed, int threads,
                              dlp_optime_heldout_stats *out, dlp_error *err) {
    memset(out, 0, sizeof *out);
    if (folds < 2 || p->n < (size_t)folds)
        return dlp_fail(err, DLP_ERR_ARG, "optime: %zu probes for %d folds",
                        p->n, folds);
    int *fold = malloc(p->n * sizeof *fold);
    bool *use = malloc(p->n * sizeof *use);
    if (!fold || !use) {
        free(fold); free(use);
        return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    }
    uint64_t s = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    for (size_t i = 0; i < p->n; i++) {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        fold[i] = (int)((s >> 33) % (uint64_t)folds);
    }
    dlp_status st = DLP_OK;
    for (int f = 0; !st && f < folds; f++) {
        for (size_t i = 0; i < p->n; i++) use[i] = fold[i] != f;
        dlp_optime *m = NULL;
        st = dlp_optime_fit(p, use, threads, &m, err);
        for (size_t i = 0; !st && i < p->n; i++) {
            if (use[i]) continue;
            const dlp_optime_probe *q = &p->rec[i];
            int k = q->shape.kind, pr = q->prec;
            float x[DLP_OPTIME_NF];
            dlp_op_shape_features(&q->shape, (dlp_precision)pr, x);
            double e = m && m->f[k] ? dlp_forest_eval(m->f[k], x) : 0;
            double pred = q->roof_us * exp2(e), ape = fabs(pred / q->us - 1);
            double rape = fabs(q->roof_us / q->us - 1);
            out->n[k][pr]++;
            out->mape[k][pr] += ape;
            out->roof_mape[k][pr] += rape;
            if (k == DLP_OP_MEM) {
                out->n_cat[q->shape.cat]++;
                out->mape_cat[q->shape.cat] += ape;
                out->roof_mape_cat[q->shape.cat] += rape;
            }
        }
        dlp_optime_free(m);
    }
    for (int k = 0; k < DLP_OP_NKIND; k++)
        for (int pr = 0; pr < DLP_PREC_COUNT; pr++)
            if (out->n[k][pr]) {
                out->mape[k][pr] *= 100.0 / out->n[k][pr];
                out->roof_mape[k][pr] *= 100.0 / out->n[k][pr];
            }
    for (int c = 0; c < DLP_MEM_NCAT; c++)
        if (out->n_cat[c]) {
            out->mape_cat[c] *= 100.0 / out->n_cat[c];
            out->roof_mape_cat[c] *= 100.0 / out->n_cat[c];
        }
    free(fold); free(use);
    return st;
}
