/* predict_host_repl.c — replicates: eager configurations the collector
 * measured more than once (rep 0 and rep 1 of one batch, or the same
 * configuration in two batches), paired to show how far the eager
 * latency moves with the host alone and how much of that the host
 * correction (predict_host.h) explains. Nothing here is predicted: one
 * measurement stands for the other, so the gaps are a floor under any
 * predictor that does not know the host's state. Training rows (a
 * step_ms column: data/probes/repeats-training.csv) pair the steps the
 * same way; a step has no CUDA-graph twin, and rows measured before the
 * collector probed the host keep their place in the gap as is. */
#include "predict/predict_host.h"
#include "data/data.h"
#include "device/device.h"
#include "pred/pred_train.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define MAX_REPL_BYTES ((size_t)256 << 20)

enum { R_BATCH, R_HASH, R_DEVICE, R_REP, R_STATUS, R_RUNTIME, R_PREC,
       R_B, R_SEQ, R_H, R_W, R_LAT, R_HOST, R_POWER, N_RCOL };
static const char *const RCOLS[N_RCOL] = {
    "batch_id", "hash", "device", "rep", "status", "runtime", "precision",
    "batch", "seq", "height", "width", "latency_ms", "host_us", "power_w"};
/* training rows: no runtime, no sequence, the step for the latency */
static const char *const TCOLS[N_RCOL] = {
    "batch_id", "hash", "device", "rep", "status", NULL, "precision",
    "batch", NULL, "height", "width", "step_ms", "host_us", "power_w"};

typedef struct {             /* one eager measurement (or training step) */
    int cfg;                 /* configuration (without batch and rep) */
    int batch, rep;
    double eager_ms, graph_ms, host_us;   /* host_us NAN: a training row
                                             without the probe */
    double graph_w;          /* its CUDA-graph twin's power, a training
                                step's own (NAN: none) */
    double share_w;          /* training: the power a fit's power rule
                                takes, its batch's rep 0's on rep 1 */
    double tdp_w;            /* its card's board power (0: unknown) */
} meas;

typedef struct {             /* one pair, bucketed by its two batches */
    int bucket;
    double gap, gap_cor, host_a, host_b;   /* gap_cor, hosts: NAN where
                                             a side has no host_us */
    double hx, ly;           /* h ln(host_b / host_a), ln(eager_b / a) */
    double graph_gap;        /* |graph_a / graph_b - 1| % of their twins
                                (NAN: training steps) */
    double graph_ly, power_ly;   /* ln(later / earlier) of the twins'
                                    latency and power (NAN: no power) */
} pair_gap;

static int cmp_meas(const void *x, const void *y) {
    const meas *a = x, *b = y;
    if (a->cfg != b->cfg) return a->cfg < b->cfg ? -1 : 1;
    if (a->batch != b->batch) return a->batch < b->batch ? -1 : 1;
    return (a->rep > b->rep) - (a->rep < b->rep);
}

/* median of v[0..n) (sorted in place; core's quantile) */
static double median(double *v, int n) {
    return dlp_quantile(v, (size_t)n, 0.5);
}

/* Reads the rows: every eager measurement with a positive latency and
 * host probe, its CUDA-graph twin's latency (same batch and rep) where
 * there is one. Batch names go to r->batches in first-seen order
 * (sort_batches puts them in name order). */
static dlp_status read_rows(const char *path, const char *text, size_t len,
                            dlp_host_repl *r, meas **out, int *n_out,
                            dlp_error *err) {
    dlp_arena a = {0};
    dlp_strmap cfgs, batches, graph_rows;
    bool maps = dlp_strmap_init(&cfgs, 1024);
    maps = dlp_strmap_init(&batches, 16) && maps;
    maps = dlp_strmap_init(&graph_rows, 1024) && maps;
    double *graph_ms = NULL, *graph_w = NULL;
    size_t gcap = 0, wcap = 0, mcap = 0;   /* graph_ms, graph_w, m */
    int n_cfg = 0, n_graph = 0, n = 0;
    meas *m = NULL;
    dlp_csv csv;
    dlp_csv_init(&csv, path, text, len);
    dlp_status st = maps ? 0 : dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    bool got = false;
    int col[N_RCOL];
    size_t need = 0;
    if (!st && !(st = dlp_csv_next(&csv, &got, err)) && !got)
        st = dlp_fail(err, DLP_ERR_FORMAT, "%s: empty file", path);
    if (!st) {              /* a training table names its step step_ms */
        for (size_t i = 0; i < csv.nf; i++)
            if (!strcmp(dlp_csv_field(&csv, i), "step_ms")) r->training = true;
        const char *const *names = r->training ? TCOLS : RCOLS;
        const char *want[N_RCOL];
        int at[N_RCOL], nw = 0, got_col[N_RCOL];
        for (int k = 0; k < N_RCOL; k++) {
            col[k] = -1;
            if (names[k]) {
                at[nw] = k;
                want[nw++] = names[k];
            }
        }
        st = dlp_csv_columns(&csv, want, nw, got_col, &need,
                             "not the collector's inference or training "
                             "rows", err);
        for (int k = 0; !st && k < nw; k++) col[at[k]] = got_col[k];
    }
    char key[512];
    while (!st && !(st = dlp_csv_next(&csv, &got, err)) && got) {
        if (csv.nf < need) {
            st = dlp_fail(err, DLP_ERR_FORMAT, "%s:%lld: %zu fields", path,
                          (long long)csv.rec_line, csv.nf);
            break;
        }
        const char *f[N_RCOL];
        for (int k = 0; k < N_RCOL; k++)
            f[k] = col[k] < 0 ? "" : dlp_csv_field(&csv, (size_t)col[k]);
        bool eager = r->training || !strcmp(f[R_RUNTIME], "eager");
        if ((strcmp(f[R_STATUS], "ok") && strcmp(f[R_STATUS], "flagged")) ||
            (!eager && strcmp(f[R_RUNTIME], "graph")))
            continue;
        int64_t rep;
        double lat, host = NAN, power = NAN;
        if (!dlp_csv_parse_i64(f[R_REP], &rep) || rep < 0 || rep > 1000 ||
            !dlp_csv_parse_f64(f[R_LAT], &lat) || !(lat > 0) ||
            (f[R_HOST][0] && !dlp_csv_parse_f64(f[R_HOST], &host)) ||
            (f[R_POWER][0] && !dlp_csv_parse_f64(f[R_POWER], &power))) {
            st = dlp_fail(err, DLP_ERR_FORMAT, "%s:%lld: bad number", path,
                          (long long)csv.rec_line);
            break;
        }
        int before = r->n_batches;
        int bi = dlp_strmap_intern(&batches, &a, f[R_BATCH], &r->n_batches);
        if (bi >= DLP_HOST_REPL_MAX_BATCHES) {
            st = dlp_fail(err, DLP_ERR_LIMIT, "%s: more than %d batches", path,
                          DLP_HOST_REPL_MAX_BATCHES);
            break;
        }
        if (bi == before && bi >= 0) {
            size_t cap = (size_t)before;
            if (!dlp_grow((void **)&r->batches, &cap, (size_t)bi + 1,
                          sizeof *r->batches)) {
                st = dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
                break;
            }
            snprintf(r->batches[bi], sizeof *r->batches, "%s", f[R_BATCH]);
        }
        int kl = snprintf(key, sizeof key, "%s|%s|%s|%s|%s|%s|%s", f[R_HASH],
                          f[R_DEVICE], f[R_PREC], f[R_B], f[R_SEQ], f[R_H],
                          f[R_W]);
        int ci = kl > 0 && (size_t)kl < sizeof key - 32
                     ? dlp_strmap_intern(&cfgs, &a, key, &n_cfg) : -2;
        if (bi < 0 || ci == -1) {
            st = dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
            break;
        }
        if (ci == -2) {
            st = dlp_fail(err, DLP_ERR_LIMIT, "%s:%lld: key too long", path,
                          (long long)csv.rec_line);
            break;
        }
        /* the measurement's own name: configuration, batch, rep */
        snprintf(key, sizeof key, "%d|%d|%lld", ci, bi, (long long)rep);
        if (!eager) {
            before = n_graph;
            int gi = dlp_strmap_intern(&graph_rows, &a, key, &n_graph);
            if (gi < 0 || (gi == before &&
                           (!dlp_grow((void **)&graph_ms, &gcap,
                                      (size_t)n_graph, sizeof *graph_ms) ||
                            !dlp_grow((void **)&graph_w, &wcap,
                                      (size_t)n_graph, sizeof *graph_w)))) {
                st = dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
                break;
            }
            graph_ms[gi] = lat;
            graph_w[gi] = power > 0 ? power : NAN;
            continue;
        }
        if (!(host > 0)) {
            r->n_no_host++;
            if (!r->training) continue;
            host = NAN;
        }
        if (!dlp_grow((void **)&m, &mcap, (size_t)n + 1, sizeof *m)) {
            st = dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
            break;
        }
        /* a training step's own power stands where a twin's would */
        double w = r->training && power > 0 ? power : NAN;
        const dlp_device *card =
            r->training ? dlp_device_lookup(f[R_DEVICE]) : NULL;
        m[n++] = (meas){ci, bi, (int)rep, lat, NAN, host, w, w,
                        card && card->tdp_w > 0 ? card->tdp_w : 0};
    }
    for (int i = 0; !st && i < n; i++) {   /* the CUDA-graph twins */
        snprintf(key, sizeof key, "%d|%d|%d", m[i].cfg, m[i].batch, m[i].rep);
        int gi = dlp_strmap_get(&graph_rows, key, strlen(key));
        if (gi >= 0) {
            m[i].graph_ms = graph_ms[gi];
            m[i].graph_w = graph_w[gi];
        }
    }
    dlp_csv_free(&csv);
    dlp_strmap_free(&cfgs);
    dlp_strmap_free(&batches);
    dlp_strmap_free(&graph_rows);
    dlp_arena_free(&a);
    free(graph_ms);
    free(graph_w);
    if (st) {
        free(m);
        return st;
    }
    *out = m;
    *n_out = n;
    return 0;
}

typedef struct {
    const char *name;
    int old;
} batch_name;

static int cmp_batch_name(const void *x, const void *y) {
    return strcmp(((const batch_name *)x)->name, ((const batch_name *)y)->name);
}

/* r->batches in name order (the collector's batch ids begin with their
 * UTC start time, so the earlier of a pair is the earlier batch whatever
 * order the rows come in: data/probes/repeats.csv appends a stored row
 * and its repeat per configuration), m's indexes renumbered */
static dlp_status sort_batches(dlp_host_repl *r, meas *m, int n,
                               dlp_error *err) {
    int nb = r->n_batches;
    if (nb < 2) return DLP_OK;
    batch_name *b = malloc((size_t)nb * sizeof *b);
    int *rank = malloc((size_t)nb * sizeof *rank);
    char (*names)[64] = malloc((size_t)nb * sizeof *names);
    if (!b || !rank || !names) {
        free(b);
        free(rank);
        free(names);
        return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    }
    for (int i = 0; i < nb; i++) b[i] = (batch_name){r->batches[i], i};
    qsort(b, (size_t)nb, sizeof *b, cmp_batch_name);
    for (int i = 0; i < nb; i++) {
        rank[b[i].old] = i;
        memcpy(names[i], b[i].name, sizeof *names);
    }
    for (int i = 0; i < n; i++) m[i].batch = rank[m[i].batch];
    free(r->batches);
    r->batches = names;
    free(b);
    free(rank);
    return DLP_OK;
}

static int cmp_pair(const void *x, const void *y) {
    const pair_gap *a = x, *b = y;
    return (a->bucket > b->bucket) - (a->bucket < b->bucket);
}

/* the median of the finite values of the field at byte offset off of
 * p[0..n), through v; NAN when none is */
static double finite_median(const pair_gap *p, int n, size_t off,
                            double *v) {
    int m = 0;
    for (int k = 0; k < n; k++) {
        double x;
        memcpy(&x, (const char *)&p[k] + off, sizeof x);
        if (isfinite(x)) v[m++] = x;
    }
    return m ? median(v, m) : NAN;
}

/* q's n, means and medians over p[0..n) (v: scratch of n doubles), and
 * the beta fitted on them: least squares of ln(later / earlier) on h
 * ln(host_us ratio), no intercept (the file's ref_us cancels in a
 * ratio), with the mean gap it leaves. The moved gaps, the hosts and the
 * fit take the pairs with both hosts (n_host; every pair of inference
 * rows), the CUDA-graph figures the pairs with twins (none of training
 * steps: NAN). */
static void summarize(const pair_gap *p, int n, double *v,
                      dlp_host_repl_pair *q) {
    double s = 0, sc = 0, sxy = 0, sxx = 0, sg = 0, sw = 0;
    int nw = 0, nh = 0, ng = 0, ncor = 0;
    for (int k = 0; k < n; k++) {
        if (isfinite(p[k].graph_ly)) {
            sg += p[k].graph_ly;
            ng++;
        }
        if (isfinite(p[k].power_ly)) {
            sw += p[k].power_ly;
            nw++;
        }
        s += p[k].gap;
        if (isfinite(p[k].gap_cor)) {
            sc += p[k].gap_cor;
            ncor++;
        }
        if (isfinite(p[k].hx)) {
            sxy += p[k].hx * p[k].ly;
            sxx += p[k].hx * p[k].hx;
            nh++;
        }
    }
    double beta = sxx > 0 ? sxy / sxx : NAN, sf = 0;
    for (int k = 0; sxx > 0 && k < n; k++)
        if (isfinite(p[k].hx))
            sf += 100 * fabs(exp(beta * p[k].hx - p[k].ly) - 1);
    *q = (dlp_host_repl_pair){
        .n = n, .n_host = nh, .gap = s / n,
        .gap_cor = ncor ? sc / ncor : NAN,
        .gap_med = finite_median(p, n, offsetof(pair_gap, gap), v),
        .gap_cor_med = finite_median(p, n, offsetof(pair_gap, gap_cor), v),
        .host_a = finite_median(p, n, offsetof(pair_gap, host_a), v),
        .host_b = finite_median(p, n, offsetof(pair_gap, host_b), v),
        .beta_fit = beta, .gap_fit = sxx > 0 ? sf / nh : NAN,
        .graph_med = finite_median(p, n, offsetof(pair_gap, graph_gap), v),
        .graph_shift = ng ? 100 * (exp(sg / ng) - 1) : NAN,
        .power_shift = nw ? 100 * (exp(sw / nw) - 1) : NAN, .n_power = nw};
}

void dlp_host_repl_free(dlp_host_repl *r) {
    if (!r) return;
    free(r->batches);
    free(r->pairs);
    r->batches = NULL;
    r->pairs = NULL;
    r->n_batches = r->n_pairs = 0;
}

dlp_status dlp_host_replicates(const char *path, const dlp_host_model *hm,
                               dlp_host_repl *r, dlp_error *err) {
    if (!path || !hm || !r)
        return dlp_fail(err, DLP_ERR_ARG, "dlp_host_replicates: NULL argument");
    memset(r, 0, sizeof *r);
    char *text = NULL;
    size_t len = 0, pl = strlen(path);
    dlp_status st = pl > 3 && !strcmp(path + pl - 3, ".xz")
                        ? dlp_probe_read_xz(path, &text, &len, err)
                        : dlp_read_file(path, MAX_REPL_BYTES, &text, &len, err);
    if (st) return st;
    meas *m = NULL;
    int n = 0;
    st = read_rows(path, text, len, r, &m, &n, err);
    free(text);
    if (!st) st = sort_batches(r, m, n, err);
    if (st) {
        free(m);
        return st;
    }
    if (n) qsort(m, (size_t)n, sizeof *m, cmp_meas);
    /* the collector reads a training step's power on rep 0 only: a rep 1
     * row takes the power of its batch's other row of the configuration
     * (adjacent once sorted) */
    for (int i = 0; r->training && i < n; i++)
        for (int j = i - 1; isnan(m[i].share_w) && j <= i + 1; j += 2)
            if (j >= 0 && j < n && m[j].cfg == m[i].cfg &&
                m[j].batch == m[i].batch)
                m[i].share_w = m[j].graph_w;
    /* every pair of measurements of a configuration, the earlier (batch,
     * rep) standing for the later; both need their CUDA-graph twins, but
     * for training steps, which have none: their host-bound share h is
     * the training fit's min(1, tau_ms / step), 1 for the pairs' own beta
     * where hm is not a training fit (its moved gap then NAN) */
    bool tfit = r->training && dlp_host_is_training(hm);
    int nb = r->n_batches, np = 0;
    size_t pcap = 0;
    pair_gap *p = NULL;
    for (int i = 0; !st && i < n; i++)
        for (int j = i + 1; j < n && m[j].cfg == m[i].cfg; j++) {
            const meas *x = &m[i], *y = &m[j];
            if (!r->training && (!(x->graph_ms > 0) || !(y->graph_ms > 0))) {
                r->n_no_graph++;
                continue;
            }
            if (!dlp_grow((void **)&p, &pcap, (size_t)np + 1, sizeof *p)) {
                st = dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
                break;
            }
            /* the earlier step's power, on the fit's board */
            double w = dlp_host_board_power(hm, x->share_w, x->tdp_w);
            double fx = dlp_host_factor(hm, x->host_us, x->eager_ms,
                                        x->graph_ms, w);
            double fy = dlp_host_factor(hm, y->host_us, x->eager_ms,
                                        x->graph_ms, w);
            double cor = x->eager_ms * fy / fx;
            double h = r->training && !tfit
                           ? 1
                           : dlp_host_share(hm, x->eager_ms, x->graph_ms, w);
            if ((r->training && !tfit) || !(x->host_us > 0) ||
                !(y->host_us > 0) || isnan(h))
                cor = NAN;
            p[np++] = (pair_gap){x->batch * nb + y->batch,
                                 100 * fabs(x->eager_ms / y->eager_ms - 1),
                                 100 * fabs(cor / y->eager_ms - 1),
                                 x->host_us, y->host_us,
                                 h * log(y->host_us / x->host_us),
                                 log(y->eager_ms / x->eager_ms),
                                 100 * fabs(x->graph_ms / y->graph_ms - 1),
                                 /* a training step's own shift */
                                 r->training
                                     ? log(y->eager_ms / x->eager_ms)
                                     : log(y->graph_ms / x->graph_ms),
                                 log(y->graph_w / x->graph_w)};
        }
    free(m);
    if (!st && np) qsort(p, (size_t)np, sizeof *p, cmp_pair);
    size_t qcap = 0;
    double *v = st ? NULL : malloc(((size_t)np + 1) * sizeof *v);
    if (!st && !v) st = dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    for (int i = 0, j; !st && i < np; i = j) {   /* a run of one bucket */
        for (j = i; j < np && p[j].bucket == p[i].bucket; j++) {}
        if (!dlp_grow((void **)&r->pairs, &qcap, (size_t)r->n_pairs + 1,
                      sizeof *r->pairs)) {
            st = dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
            break;
        }
        dlp_host_repl_pair *q = &r->pairs[r->n_pairs++];
        summarize(p + i, j - i, v, q);
        q->a = p[i].bucket / nb;
        q->b = p[i].bucket % nb;
    }
    /* within one batch, across two: the pairs in that order */
    int n_same = 0;
    for (int i = 0; !st && i < np; i++)
        if (p[i].bucket / nb == p[i].bucket % nb) {
            pair_gap t = p[n_same];
            p[n_same++] = p[i];
            p[i] = t;
        }
    if (!st && n_same) summarize(p, n_same, v, &r->all_same);
    if (!st && np > n_same)
        summarize(p + n_same, np - n_same, v, &r->all_across);
    free(v);
    free(p);
    if (!st && !r->n_pairs)
        st = dlp_fail(err, DLP_ERR_NOT_FOUND, r->training
                      ? "%s: no training configuration measured twice"
                      : "%s: no eager configuration measured twice with "
                        "host_us and a CUDA-graph twin", path);
    return st;
}
