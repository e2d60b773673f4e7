/* predict_host.c — host-aware eager latency and energy: the factors, the
 * samples (held-out predictions joined with the dataset's host probe), the
 * two-parameter fit and the energy's gamma, their cross-fitting over the
 * evaluation's folds, and the models/host.csv file. predict_host.h has the
 * model and why. */
#include "predict/predict_host.h"
#include "pred/pred_train.h"
#include "data/data.h"
#include "device/device.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PRED_BYTES ((size_t)1 << 30)
#define BETA_MAX 4.0

/* the rule of a host-bound share: tau_ms > 0, min(1, tau_ms / eager);
 * else hi_w > 0, (hi_w - power) / (hi_w - lo_w) clamped; else 1 - graph
 * / eager (predict_host.h) */
typedef struct {
    double tau_ms, lo_w, hi_w;
} share_rule;

static share_rule rule_of(const dlp_host_model *m) {
    return (share_rule){m->tau_ms, m->power_lo_w, m->power_hi_w};
}

/* the share, NAN where an input the rule uses is missing (the formula
 * the training labels are normalized with, pred_data.c) */
static double host_share(share_rule r, double eager_ms, double graph_ms,
                         double power_w) {
    dlp_host_norm n = {.tau_ms = r.tau_ms, .power_lo_w = r.lo_w,
                       .power_hi_w = r.hi_w};
    return dlp_host_norm_share(&n, eager_ms, graph_ms, power_w);
}

dlp_host_norm dlp_host_norm_of(const dlp_host_model *m) {
    return (dlp_host_norm){m->beta, m->ref_us, m->gamma, m->tau_ms,
                           m->power_lo_w, m->power_hi_w, m->power_tdp_w,
                           m->beta_quick};
}

double dlp_host_board_power(const dlp_host_model *m, double power_w,
                            double tdp_w) {
    if (!m) return power_w;
    dlp_host_norm n = dlp_host_norm_of(m);
    return dlp_host_norm_board_power(&n, power_w, tdp_w);
}

double dlp_host_share(const dlp_host_model *m, double eager_ms,
                      double graph_ms, double power_w) {
    return m ? host_share(rule_of(m), eager_ms, graph_ms, power_w) : NAN;
}

bool dlp_host_is_training(const dlp_host_model *m) {
    if (!m) return false;
    dlp_host_norm n = dlp_host_norm_of(m);
    return dlp_host_norm_is_training(&n);
}

const char *dlp_host_file(dlp_host_mode mode) {
    return mode == DLP_HOST_LLM        ? DLP_HOST_LLM_FILE
           : mode == DLP_HOST_TRAINING ? DLP_HOST_TRAINING_FILE
                                       : DLP_HOST_FILE;
}

const char *dlp_host_mode_name(dlp_host_mode mode) {
    return mode == DLP_HOST_LLM        ? "llm"
           : mode == DLP_HOST_TRAINING ? "training"
                                       : "inference";
}

const char *dlp_host_quantity(dlp_host_mode mode) {
    return mode == DLP_HOST_LLM        ? "eager throughput"
           : mode == DLP_HOST_TRAINING ? "training step"
                                       : "eager latency";
}

dlp_host_mode dlp_host_mode_parse(const char *name) {
    for (int k = 0; name && k < DLP_HOST_N_MODES; k++)
        if (!strcmp(name, dlp_host_mode_name((dlp_host_mode)k)))
            return (dlp_host_mode)k;
    return DLP_HOST_N_MODES;
}

double dlp_host_factor(const dlp_host_model *m, double host_us,
                       double eager_ms, double graph_ms, double power_w) {
    if (!m || !(host_us > 0) || !(eager_ms > 0) || !isfinite(host_us) ||
        !isfinite(eager_ms) || !(m->ref_us > 0))
        return 1;
    /* the formula the training labels are normalized with (pred_data.c) */
    dlp_host_norm n = dlp_host_norm_of(m);
    return dlp_host_norm_factor(&n, host_us,
                                host_share(rule_of(m), eager_ms, graph_ms,
                                           power_w));
}

double dlp_host_energy_factor(const dlp_host_model *m, double f) {
    if (!m) return 1;
    dlp_host_norm n = dlp_host_norm_of(m);
    return dlp_host_norm_energy_factor(&n, f);
}

/* ---- samples ------------------------------------------------------------ */

/* key of a configuration: fold ("" for the dataset's probes, which hold
 * for every fold), graph, device, precision, batch, seq, height, width */
static int config_key(char *buf, size_t cap, const char *fold,
                      const char *graph, const char *device,
                      const char *prec, long long b, long long s,
                      long long h, long long w) {
    return snprintf(buf, cap, "%s|%s|%s|%s|%lld|%lld|%lld|%lld", fold, graph,
                    device, prec, b, s, h, w);
}

typedef struct {             /* host probe of one eager configuration */
    double sum;
    int n;
    int n_own;               /* of them the label row's own (a training
                                row's, not its batch's inference median) */
    double alt_sum[2];       /* over its rows: their batches' median
                                probes (the host's level, not the
                                moment's), their batches' fresh-process
                                readings (env.json) */
    int alt_n[2];
    int batch;               /* its rows' batch (dlp_host_set.batches),
                                -1 where they come from several */
} probe;

typedef struct {             /* one fold's predictions of a configuration */
    int fold, model, device;
    double actual_ms, eager_ms, graph_ms;
    double host_us, batch_host_us, fresh_host_us;
    int batch;               /* its probe's batch, -1 several or none */
    bool own_host;           /* every probe of it the label row's own */
    double actual_j, energy_j;   /* eager energy, NAN until read */
    double actual_w, power_w;    /* training: power, NAN until read */
} pending;

/* one probe h of configuration key into the map and its sums (*cap the
 * array's capacity; own: the label row's own probe; alt: the row's
 * batch's median probe and fresh-process reading, NAN where unknown;
 * batch: the row's, an index of dlp_host_set.batches); false when out of
 * memory */
static bool add_probe(dlp_strmap *map, dlp_arena *a, probe **out, int *n,
                      size_t *cap, const char *key, double h, bool own,
                      const double alt[2], int batch) {
    int before = *n;
    int k = dlp_strmap_intern(map, a, key, n);
    if (k < 0) return false;
    if (k == before) {
        if (!dlp_grow((void **)out, cap, (size_t)*n, sizeof **out))
            return false;
        memset(&(*out)[k], 0, sizeof **out);
        (*out)[k].batch = batch;
    }
    probe *p = &(*out)[k];
    if (p->batch != batch) p->batch = -1;
    p->sum += h;
    p->n++;
    p->n_own += own;
    for (int j = 0; j < 2; j++)
        if (alt[j] > 0 && isfinite(alt[j])) {
            p->alt_sum[j] += alt[j];
            p->alt_n[j]++;
        }
    return true;
}

typedef struct {             /* every batch's probes, by batch_id */
    dlp_strmap ids;
    dlp_batch_host *b;
    int n;
} batch_hosts;

/* h's batch names into s->batches, by the same index (a name longer than
 * DLP_HOST_BATCH_ID - 1 bytes is kept cut there) */
static dlp_status set_batches(dlp_host_set *s, const batch_hosts *h,
                              dlp_error *err) {
    s->batches = malloc((h->n ? (size_t)h->n : 1) * sizeof *s->batches);
    if (!s->batches) return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    for (int k = 0; k < h->n; k++)
        snprintf(s->batches[k], sizeof s->batches[k], "%s", h->b[k].batch_id);
    s->n_batches = h->n;
    return DLP_OK;
}

/* the dataset's batches (dlp_dataset_batch_host) into *h, keyed by name,
 * and their names into set->batches by the same index */
static dlp_status batch_hosts_load(batch_hosts *h, const dlp_dataset *ds,
                                   dlp_arena *a, dlp_host_set *set,
                                   dlp_error *err) {
    dlp_dataset_counts c;
    dlp_dataset_get_counts(ds, &c);
    h->b = malloc((c.batches ? c.batches : 1) * sizeof *h->b);
    bool ok = dlp_strmap_init(&h->ids, c.batches + 16) && h->b;
    int n = 0;
    for (size_t i = 0; ok && i < c.batches; i++) {
        dlp_batch_host x;
        int before = n, k;
        ok = dlp_dataset_batch_host(ds, i, &x) &&
             (k = dlp_strmap_intern(&h->ids, a, x.batch_id, &n)) >= 0;
        if (ok && k == before) h->b[k] = x;
    }
    h->n = n;
    return ok ? set_batches(set, h, err)
              : dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
}

/* batch_id's index in h (its probes h->b[k]); -1 for a batch the dataset
 * does not have */
static int batch_at(const batch_hosts *h, const char *batch_id) {
    return dlp_strmap_get(&h->ids, batch_id, strlen(batch_id));
}

static void batch_hosts_free(batch_hosts *h) {
    free(h->b);
    dlp_strmap_free(&h->ids);
}

/* host_us per configuration of the dataset's eager labels, beside the
 * median of their batches' and their batches' fresh readings; the
 * dataset's batches into set->batches */
static dlp_status load_probes(const dlp_dataset *ds, dlp_strmap *map,
                              dlp_arena *a, probe **out, int *n,
                              dlp_host_set *set, dlp_error *err) {
    dlp_dataset_counts c;
    dlp_dataset_get_counts(ds, &c);
    size_t cap = 0;
    *out = NULL;
    *n = 0;
    batch_hosts bh;
    dlp_status st = batch_hosts_load(&bh, ds, a, set, err);
    char key[256];
    for (size_t i = 0; !st && i < c.inference; i++) {
        const dlp_inference_row *r = dlp_dataset_inference(ds, i);
        if (strcmp(r->runtime, "eager") || !(r->host_us > 0) ||
            !isfinite(r->host_us))
            continue;
        config_key(key, sizeof key, "", r->c.hash, r->c.device, r->precision,
                   (long long)r->batch, (long long)r->seq,
                   (long long)r->height, (long long)r->width);
        int bk = batch_at(&bh, r->c.batch_id);
        const dlp_batch_host *b = bk < 0 ? NULL : &bh.b[bk];
        const double alt[2] = {b ? b->inference_us : NAN,
                               b ? b->fresh_us : NAN};
        if (!add_probe(map, a, out, n, &cap, key, r->host_us, true, alt, bk))
            st = dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    }
    batch_hosts_free(&bh);
    return st;
}

/* host_us per configuration of the dataset's training labels: the row's
 * own, else its batch's eager inference median (dlp_host_set_load);
 * beside it the batch's level: the median of the batch's training rows'
 * own probes, else that eager inference median; and its fresh reading;
 * the batches into set's as load_probes */
static dlp_status load_training_probes(const dlp_dataset *ds, dlp_strmap *map,
                                       dlp_arena *a, probe **out, int *n,
                                       dlp_host_set *set, dlp_error *err) {
    batch_hosts bh;
    dlp_status st = batch_hosts_load(&bh, ds, a, set, err);
    dlp_dataset_counts c;
    dlp_dataset_get_counts(ds, &c);
    size_t cap = 0;
    *out = NULL;
    *n = 0;
    char key[256];
    for (size_t i = 0; !st && i < c.training; i++) {
        const dlp_training_row *r = dlp_dataset_training(ds, i);
        int bk = batch_at(&bh, r->c.batch_id);
        const dlp_batch_host *b = bk < 0 ? NULL : &bh.b[bk];
        double h = r->host_us;
        double inf_med = b ? b->inference_us : NAN;
        double level = b && b->training_us > 0 ? b->training_us : inf_med;
        bool own = h > 0 && isfinite(h);
        if (!own) {
            if (!(inf_med > 0)) continue;
            h = inf_med;
        }
        config_key(key, sizeof key, "", r->c.hash, r->c.device, r->precision,
                   (long long)r->batch, 0, (long long)r->height,
                   (long long)r->width);
        const double alt[2] = {level, b ? b->fresh_us : NAN};
        if (!add_probe(map, a, out, n, &cap, key, h, own, alt, bk))
            st = dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    }
    batch_hosts_free(&bh);
    return st;
}

enum { C_KIND, C_FOLD, C_MODEL, C_GRAPH, C_DEVICE, C_RUNTIME, C_PREC,
       C_BATCH, C_SEQ, C_HEIGHT, C_WIDTH, C_TARGET, C_ACTUAL, C_PRED, N_COL };
static const char *const COLS[N_COL] = {
    "kind", "fold", "model", "graph", "device", "runtime", "precision",
    "batch", "seq", "height", "width", "target", "actual", "predicted"};

/* training: the samples' predicted powers on one board, the first
 * sample's card's (s->tdp_w), each scaled from its own card's board power
 * (the device database's tdp_w; a card it lacks is left as it is) */
static void board_powers(dlp_host_set *s) {
    double tdp[DLP_HOST_MAX_DEVICES];
    for (int d = 0; d < s->n_devices; d++) {
        const dlp_device *dev = dlp_device_lookup(s->devices[d]);
        tdp[d] = dev && dev->tdp_w > 0 ? dev->tdp_w : 0;
    }
    s->tdp_w = s->n ? tdp[s->s[0].device] : 0;
    for (int i = 0; s->tdp_w > 0 && i < s->n; i++)
        if (tdp[s->s[i].device] > 0)
            s->s[i].power_w *= s->tdp_w / tdp[s->s[i].device];
}

/* the distinct models among s's samples (indexes below n_names) into
 * s->n_models; false when out of memory */
static bool count_models(dlp_host_set *s, int n_names) {
    bool *seen = calloc((size_t)n_names + 1, 1);
    if (!seen) return false;
    s->n_models = 0;
    for (int i = 0; i < s->n; i++)
        if (!seen[s->s[i].model]) {
            seen[s->s[i].model] = true;
            s->n_models++;
        }
    free(seen);
    return true;
}

dlp_status dlp_host_set_source(dlp_host_set *s, dlp_host_source src,
                               dlp_error *err) {
    if (!s) return dlp_fail(err, DLP_ERR_ARG, "dlp_host_set_source: NULL");
    static const char *const what[] = {
        "whose label carries its own host probe",
        "whose label's batch has a median host probe",
        "whose label's batch has a fresh process's probe (env.json "
        "host_probe_start_us / host_probe_end_us, since p69a)"};
    if ((int)src < 0 || (int)src > 2)
        return dlp_fail(err, DLP_ERR_ARG, "dlp_host_set_source: source %d",
                        (int)src);
    int k = 0, top = 0;
    for (int i = 0; i < s->n; i++) {
        dlp_host_sample x = s->s[i];
        if (x.model >= top) top = x.model + 1;
        double h = src == DLP_HOST_SRC_BATCH   ? x.batch_host_us
                   : src == DLP_HOST_SRC_FRESH ? x.fresh_host_us
                                               : x.own_host ? x.host_us : NAN;
        if (!(h > 0)) continue;
        x.host_us = h;
        s->s[k++] = x;
    }
    s->n = k;
    if (!count_models(s, top))
        return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    if (!k)
        return dlp_fail(err, DLP_ERR_NOT_FOUND, "no %s sample %s",
                        dlp_host_quantity(s->mode), what[src]);
    return DLP_OK;
}

dlp_status dlp_host_set_load(const char *pred_csv, const dlp_dataset *ds,
                             const char *kind, dlp_host_mode mode,
                             dlp_host_set *out, dlp_error *err) {
    if (!pred_csv || !ds || !kind || !out)
        return dlp_fail(err, DLP_ERR_ARG, "dlp_host_set_load: NULL argument");
    memset(out, 0, sizeof *out);
    bool llm = mode == DLP_HOST_LLM, training = mode == DLP_HOST_TRAINING;
    out->mode = mode;
    const char *lat_target = llm ? "llm.throughput_samples_s"
                             : training ? "training.step_ms"
                                        : "inference.latency_ms";
    const char *energy_target = llm ? "llm.energy_per_sample_j"
                                : training ? "training.power_w"
                                           : "inference.energy_j";
    char *text = NULL;
    size_t len = 0;
    dlp_status st = dlp_read_file(pred_csv, MAX_PRED_BYTES, &text, &len, err);
    if (st) return st;
    dlp_arena a = {0};
    dlp_strmap probes_map, cfg_map, models;
    probe *probes = NULL;
    pending *pend = NULL;
    size_t pend_cap = 0;
    int n_probes = 0, n_pend = 0;
    bool maps = dlp_strmap_init(&probes_map, 4096);
    maps = dlp_strmap_init(&cfg_map, 4096) && maps;
    maps = dlp_strmap_init(&models, 256) && maps;
    dlp_csv csv;
    dlp_csv_init(&csv, pred_csv, text, len);
    if (!maps) st = dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    if (!st)
        st = (training ? load_training_probes : load_probes)(
            ds, &probes_map, &a, &probes, &n_probes, out, err);
    int col[N_COL];
    size_t need = 0;
    bool got = false;
    if (!st && !(st = dlp_csv_next(&csv, &got, err)) && !got)
        st = dlp_fail(err, DLP_ERR_FORMAT, "%s: empty file", pred_csv);
    if (!st)
        st = dlp_csv_columns(&csv, COLS, N_COL, col, &need,
                             "not a `dlperf eval --predictions` file", err);
    char key[256];
    while (!st && !(st = dlp_csv_next(&csv, &got, err)) && got) {
        if (csv.nf < need) {
            st = dlp_fail(err, DLP_ERR_FORMAT, "%s:%lld: %zu fields", pred_csv,
                          (long long)csv.rec_line, csv.nf);
            break;
        }
        const char *f[N_COL];
        for (int k = 0; k < N_COL; k++) f[k] = dlp_csv_field(&csv, (size_t)col[k]);
        bool energy = !strcmp(f[C_TARGET], energy_target);
        /* a training step is eager (`dlperf eval` writes "train") */
        bool eager = !strcmp(f[C_RUNTIME], training ? "train" : "eager");
        if (strcmp(f[C_KIND], kind) ||
            (!energy && strcmp(f[C_TARGET], lat_target)) ||
            (energy && (!eager || !*f[C_ACTUAL])))
            continue;
        if (!eager && (training || strcmp(f[C_RUNTIME], "graph"))) continue;
        int64_t fold, b, s, h, w;
        double act, pr;
        if (!dlp_csv_parse_i64(f[C_FOLD], &fold) ||
            !dlp_csv_parse_i64(f[C_BATCH], &b) ||
            !dlp_csv_parse_i64(f[C_SEQ], &s) ||
            !dlp_csv_parse_i64(f[C_HEIGHT], &h) ||
            !dlp_csv_parse_i64(f[C_WIDTH], &w) ||
            !dlp_csv_parse_f64(f[C_ACTUAL], &act) || !isfinite(act) ||
            !dlp_csv_parse_f64(f[C_PRED], &pr) || !isfinite(pr) || fold < 0 ||
            fold > 1000000 ||
            (llm && !energy && !(b >= 1 && act > 0 && pr > 0))) {
            st = dlp_fail(err, DLP_ERR_FORMAT, "%s:%lld: bad number", pred_csv,
                          (long long)csv.rec_line);
            break;
        }
        if (llm && !energy) {   /* throughput (samples/s) as a latency (ms) */
            act = 1e3 * (double)b / act;
            pr = 1e3 * (double)b / pr;
        }
        if (eager && !energy) out->n_eager++;
        config_key(key, sizeof key, f[C_FOLD], f[C_GRAPH], f[C_DEVICE],
                   f[C_PREC], (long long)b, training ? 0 : (long long)s,
                   (long long)h, (long long)w);
        int before = n_pend;
        int k = dlp_strmap_intern(&cfg_map, &a, key, &n_pend);
        if (k < 0) {
            st = dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
            break;
        }
        if (k == before) {
            if (!dlp_grow((void **)&pend, &pend_cap, (size_t)n_pend,
                          sizeof *pend)) {
                st = dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
                break;
            }
            pend[k] = (pending){.fold = (int)fold, .model = -1,
                                .device = -1, .actual_ms = NAN,
                                .eager_ms = NAN, .graph_ms = NAN,
                                .host_us = NAN, .batch_host_us = NAN,
                                .fresh_host_us = NAN, .batch = -1,
                                .actual_j = NAN,
                                .energy_j = NAN, .actual_w = NAN,
                                .power_w = NAN};
        }
        pending *p = &pend[k];
        if (energy && training) {
            p->actual_w = act;
            p->power_w = pr;
            continue;
        }
        if (energy) {
            p->actual_j = act;
            p->energy_j = pr;
            continue;
        }
        if (!eager) {
            p->graph_ms = pr;
            continue;
        }
        p->actual_ms = act;
        p->eager_ms = pr;
        p->model = dlp_strmap_intern(&models, &a, f[C_MODEL], &out->n_models);
        int dv = 0;
        while (dv < out->n_devices && strcmp(out->devices[dv], f[C_DEVICE])) dv++;
        if (dv == out->n_devices && dv < DLP_HOST_MAX_DEVICES)
            snprintf(out->devices[out->n_devices++], sizeof out->devices[0],
                     "%s", f[C_DEVICE]);
        p->device = dv < DLP_HOST_MAX_DEVICES ? dv : -1;
        /* the same configuration without the fold */
        const char *bar = strchr(key, '|');
        int q = dlp_strmap_get(&probes_map, bar, strlen(bar));
        if (q >= 0) {
            p->host_us = probes[q].sum / probes[q].n;
            p->batch = probes[q].batch;
            p->own_host = probes[q].n_own == probes[q].n;
            /* a source only where every row of the label has it */
            const probe *pq = &probes[q];
            p->batch_host_us = pq->alt_n[0] == pq->n
                                   ? pq->alt_sum[0] / pq->alt_n[0] : NAN;
            p->fresh_host_us = pq->alt_n[1] == pq->n
                                   ? pq->alt_sum[1] / pq->alt_n[1] : NAN;
        }
        if (p->model < 0) st = dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    }
    for (int i = 0; !st && i < n_pend; i++) {
        pending *p = &pend[i];
        if (!(p->eager_ms > 0)) continue;
        if (training) {   /* energy = power x step, of each side */
            p->actual_j = p->actual_w * p->actual_ms / 1e3;
            p->energy_j = p->power_w * p->eager_ms / 1e3;
        }
        if (!(p->host_us > 0)) {
            out->n_no_host++;
            continue;
        }
        /* a training step needs its predicted power (the power rule's
         * share; the energy), an eager latency its CUDA-graph twin */
        if ((!training && !(p->graph_ms > 0)) ||
            (training && !(p->power_w > 0)) || p->device < 0 ||
            !(p->actual_ms > 0)) {
            out->n_no_graph++;
            continue;
        }
        size_t cap = (size_t)out->cap;
        if (!dlp_grow((void **)&out->s, &cap, (size_t)out->n + 1,
                      sizeof *out->s)) {
            st = dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
            break;
        }
        out->cap = (int)cap;
        bool ej = p->actual_j > 0 && p->energy_j > 0;
        out->s[out->n++] = (dlp_host_sample){p->fold, p->model, p->device,
                                             p->actual_ms, p->eager_ms,
                                             p->graph_ms, p->host_us,
                                             training ? p->power_w : NAN,
                                             ej ? p->actual_j : NAN,
                                             ej ? p->energy_j : NAN,
                                             p->own_host, p->batch_host_us,
                                             p->fresh_host_us, p->batch};
    }
    if (!st && training) board_powers(out);
    if (!st && !count_models(out, out->n_models))
        st = dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    if (!st && out->n == 0)
        st = dlp_fail(err, DLP_ERR_NOT_FOUND,
                      "%s: no %s %s prediction whose label has host_us%s "
                      "(%d predictions, %d without host_us)", pred_csv, kind,
                      dlp_host_quantity(mode),
                      training ? "" : " and whose CUDA-graph one is "
                                      "predicted too",
                      out->n_eager, out->n_no_host);
    dlp_csv_free(&csv);
    dlp_strmap_free(&probes_map);
    dlp_strmap_free(&cfg_map);
    dlp_strmap_free(&models);
    dlp_arena_free(&a);
    free(probes);
    free(pend);
    free(text);
    if (st) dlp_host_set_free(out);
    return st;
}

void dlp_host_set_free(dlp_host_set *s) {
    if (!s) return;
    free(s->s);
    free(s->batches);
    memset(s, 0, sizeof *s);
}

/* ---- fit ---------------------------------------------------------------- */

static bool has_energy(const dlp_host_sample *x) {
    return x->actual_j > 0 && x->energy_j > 0;
}

/* gamma minimizing sum |E f_E / actual - 1| over the samples with use[i]
 * and an energy prediction, f_E = 1 + gamma (f - 1), f m's latency factor
 * (beta, ref_us set): the weighted median of the terms' zeros, clipped to
 * [0, 1] (predict_host.h). n_out the samples used. */
static dlp_status fit_gamma(const dlp_host_set *s, const bool *use,
                            const dlp_host_model *m, double *gamma,
                            int *n_out, dlp_error *err) {
    *gamma = 0;
    *n_out = 0;
    /* a term's zero and weight (a breakpoint of the MAPE in gamma) */
    dlp_wpoint *k = malloc((size_t)(s->n ? s->n : 1) * sizeof *k);
    if (!k) return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    size_t n = 0;
    int used = 0;
    for (int i = 0; i < s->n; i++) {
        const dlp_host_sample *x = &s->s[i];
        if ((use && !use[i]) || !has_energy(x)) continue;
        used++;
        double f = dlp_host_factor(m, x->host_us, x->eager_ms, x->graph_ms,
                                   dlp_host_board_power(m, x->power_w,
                                                        s->tdp_w));
        double a = x->energy_j / x->actual_j - 1,
               b = x->energy_j * (f - 1) / x->actual_j;
        if (!(fabs(b) > 1e-15)) continue;   /* a term gamma cannot move */
        k[n++] = (dlp_wpoint){-a / b, fabs(b)};
    }
    *n_out = used;
    if (n > 0) *gamma = fmin(1, fmax(0, dlp_weighted_median(k, n)));
    free(k);
    return DLP_OK;
}

/* the training fit's grid of tau_ms: 2^(k / 4) ms, k = 0 .. TAU_STEPS */
#define TAU_STEPS 40
#define TAU_MAX_MS 100000.0

/* the training fit's grid of power_lo_w < power_hi_w: 20 W steps */
#define POWER_MIN_W 100
#define POWER_MAX_W 700
#define POWER_STEP_W 20
#define POWER_LIMIT_W 5000.0

/* least squares of r = ln(actual / E) on x1 = h ln host, x2 = h (no
 * intercept: a GPU-bound configuration is left as it is), h the share of
 * rule r: *beta, *c and the residual sum of squares *sse over the *n
 * samples used; false when singular or a sample lacks the rule's input */
static bool fit_share(const dlp_host_set *s, const bool *use, share_rule rule,
                      double *beta, double *c, double *sse, int *n) {
    double s11 = 0, s12 = 0, s22 = 0, r1 = 0, r2 = 0, rr = 0;
    *n = 0;
    for (int i = 0; i < s->n; i++) {
        if (use && !use[i]) continue;
        const dlp_host_sample *x = &s->s[i];
        double h = host_share(rule, x->eager_ms, x->graph_ms, x->power_w);
        if (isnan(h)) return false;
        double x1 = h * log(x->host_us), x2 = h;
        double r = log(x->actual_ms / x->eager_ms);
        s11 += x1 * x1;
        s12 += x1 * x2;
        s22 += x2 * x2;
        r1 += x1 * r;
        r2 += x2 * r;
        rr += r * r;
        (*n)++;
    }
    double det = s11 * s22 - s12 * s12;
    if (*n < 2 || !(fabs(det) > 1e-12 * (s11 * s22 + 1e-300))) return false;
    *beta = (r1 * s22 - r2 * s12) / det;
    *c = (s11 * r2 - s12 * r1) / det;
    /* the normal equations leave rr - beta r1 - c r2 */
    *sse = rr - *beta * r1 - *c * r2;
    return true;
}

typedef struct {             /* the best rule so far and its fit */
    double beta, c, sse;
    share_rule rule;
    double beta_quick;       /* two-sided: the slope below ref (c = -beta
                                ln ref); 0 one-sided */
} rule_fit;

/* the two-sided fit's grid of ln ref_us: 1% steps */
#define REF_STEP 0.01

/* The two-sided fit of rule r: at each ln ref of the grid across the
 * samples' hosts, least squares of r = ln(actual / E) on x1 = h max(0,
 * ln host - ln ref) and x2 = h min(0, ln host - ln ref) (no intercept:
 * the factor is 1 at ref); a fit whose slopes are both positive and
 * whose residual is below best's replaces it. false when a sample lacks
 * the rule's input. */
static bool fit_two_sided(const dlp_host_set *s, const bool *use,
                          share_rule rule, rule_fit *best, int *n) {
    /* each sample's share h, ln host_us and residual r, once */
    double *v = malloc(3 * (size_t)(s->n ? s->n : 1) * sizeof *v);
    double lo = INFINITY, hi = -INFINITY;
    *n = 0;
    for (int i = 0; v && i < s->n; i++) {
        if (use && !use[i]) continue;
        const dlp_host_sample *x = &s->s[i];
        double h = host_share(rule, x->eager_ms, x->graph_ms, x->power_w);
        if (isnan(h)) {
            free(v);
            return false;
        }
        double *w = v + 3 * (size_t)*n;
        w[0] = h;
        w[1] = log(x->host_us);
        w[2] = log(x->actual_ms / x->eager_ms);
        lo = fmin(lo, w[1]);
        hi = fmax(hi, w[1]);
        (*n)++;
    }
    for (double lr = lo + REF_STEP; v && *n >= 2 && lr < hi; lr += REF_STEP) {
        double s11 = 0, s22 = 0, r1 = 0, r2 = 0, rr = 0;
        for (int i = 0; i < *n; i++) {
            const double *w = v + 3 * (size_t)i;
            double d = w[1] - lr, r = w[2];
            double x1 = w[0] * fmax(0, d), x2 = w[0] * fmin(0, d);
            s11 += x1 * x1;   /* x1 x2 = 0: the normal equations split */
            s22 += x2 * x2;
            r1 += x1 * r;
            r2 += x2 * r;
            rr += r * r;
        }
        if (!(s11 > 1e-12) || !(s22 > 1e-12)) continue;
        double b = r1 / s11, q = r2 / s22, sse = rr - b * r1 - q * r2;
        if (b > 0 && q > 0 && sse < best->sse)
            *best = (rule_fit){b, -b * lr, sse, rule, q};
    }
    bool ok = v != NULL;
    free(v);
    return ok;
}

/* rule r fitted (fit_share, or fit_two_sided with s->two_sided; *n the
 * samples used), kept in *best where its residual is smaller */
static void try_rule(const dlp_host_set *s, const bool *use, share_rule r,
                     rule_fit *best, int *n) {
    if (s->two_sided) {
        fit_two_sided(s, use, r, best, n);
        return;
    }
    double b, c, sse;
    if (fit_share(s, use, r, &b, &c, &sse, n) && sse < best->sse)
        *best = (rule_fit){b, c, sse, r, 0};
}

dlp_status dlp_host_fit(const dlp_host_set *s, const bool *use,
                        dlp_host_model *m, dlp_error *err) {
    if (!s || !m) return dlp_fail(err, DLP_ERR_ARG, "dlp_host_fit: NULL");
    /* the rules to try: inference and llm one (the CUDA-graph share);
     * training every tau of the grid, then every power pair (a rule
     * lacking a sample's input does not fit: n counts the others') */
    bool training = s->mode == DLP_HOST_TRAINING;
    rule_fit f = {NAN, NAN, INFINITY, {0, 0, 0}, 0};
    int n = 0, n_power;
    if (!training)
        try_rule(s, use, (share_rule){0, 0, 0}, &f, &n);
    else {
        for (int k = 0; k <= TAU_STEPS; k++)
            try_rule(s, use, (share_rule){exp2(k / 4.0), 0, 0}, &f, &n);
        for (int lo = POWER_MIN_W; lo < POWER_MAX_W; lo += POWER_STEP_W)
            for (int hi = lo + POWER_STEP_W; hi <= POWER_MAX_W;
                 hi += POWER_STEP_W)
                try_rule(s, use, (share_rule){0, lo, hi}, &f, &n_power);
    }
    if (!(f.sse < INFINITY))
        return s->two_sided
                   ? dlp_fail(err, DLP_ERR_ARG, "host fit: %d sample(s): no "
                              "reference host of the grid gives both slopes "
                              "(above and below it) a positive fit", n)
                   : dlp_fail(err, DLP_ERR_ARG, "host fit: %d sample(s), "
                              "singular (the host-bound shares or host "
                              "probes do not vary)", n);
    if (!(f.beta > 0))
        return dlp_fail(err, DLP_ERR_NOT_FOUND, "host fit: beta %.3g on %d "
                        "samples: eager %s does not grow with host_us in "
                        "these predictions", f.beta, n,
                        training ? "step time" : "latency");
    memset(m, 0, sizeof *m);
    m->beta = fmin(f.beta, BETA_MAX);
    m->ref_us = exp(-f.c / f.beta);
    m->beta_quick = fmin(f.beta_quick, BETA_MAX);
    m->tau_ms = f.rule.tau_ms;
    m->power_lo_w = f.rule.lo_w;
    m->power_hi_w = f.rule.hi_w;
    m->power_tdp_w = f.rule.hi_w > 0 ? s->tdp_w : 0;
    m->n_samples = n;
    m->n_models = s->n_models;
    return fit_gamma(s, use, m, &m->gamma, &m->n_energy, err);
}

double dlp_host_ape(dlp_host_mode mode, double pred_ms, double act_ms) {
    return mode == DLP_HOST_LLM ? fabs(act_ms / pred_ms - 1)
                                : fabs(pred_ms / act_ms - 1);
}

/* sums of |error| into MAPE (%) */
static void mean_pct(double *blind, double *host, int n) {
    if (n) {
        *blind *= 100.0 / n;
        *host *= 100.0 / n;
    }
}

/* The MAPE (%) of the samples as given and as corrected (cor[i]; ecor[i]
 * the energy's where the sample has one), overall and per device, into
 * out's blind / host fields. */
static void score(const dlp_host_set *s, const double *cor,
                  const double *ecor, dlp_host_cv *out) {
    for (int i = 0; i < s->n; i++) {
        const dlp_host_sample *x = &s->s[i];
        double b = dlp_host_ape(s->mode, x->eager_ms, x->actual_ms),
               h = dlp_host_ape(s->mode, cor[i], x->actual_ms);
        out->blind += b;
        out->host += h;
        out->dev_blind[x->device] += b;
        out->dev_host[x->device] += h;
        out->dev_n[x->device]++;
        if (x->own_host) {
            out->own_blind += b;
            out->own_host += h;
            out->own_n++;
        } else {
            out->median_blind += b;
            out->median_host += h;
            out->median_n++;
        }
        if (!has_energy(x)) continue;
        b = fabs(x->energy_j / x->actual_j - 1);
        h = fabs(ecor[i] / x->actual_j - 1);
        out->e_blind += b;
        out->e_host += h;
        out->dev_e_blind[x->device] += b;
        out->dev_e_host[x->device] += h;
        out->dev_e_n[x->device]++;
        out->e_n++;
    }
    mean_pct(&out->blind, &out->host, s->n);
    mean_pct(&out->e_blind, &out->e_host, out->e_n);
    mean_pct(&out->own_blind, &out->own_host, out->own_n);
    mean_pct(&out->median_blind, &out->median_host, out->median_n);
    for (int d = 0; d < s->n_devices; d++) {
        mean_pct(&out->dev_blind[d], &out->dev_host[d], out->dev_n[d]);
        mean_pct(&out->dev_e_blind[d], &out->dev_e_host[d], out->dev_e_n[d]);
    }
}

/* sample x of a set whose powers are on a board of tdp_w corrected by m
 * (NULL: left as predicted; its power read on m's board): its latency,
 * and its energy where it has one */
static void correct(const dlp_host_sample *x, double tdp_w,
                    const dlp_host_model *m, double *lat, double *energy) {
    double f = m ? dlp_host_factor(m, x->host_us, x->eager_ms, x->graph_ms,
                                   dlp_host_board_power(m, x->power_w, tdp_w))
                 : 1;
    *lat = x->eager_ms * f;
    *energy = has_energy(x) ? x->energy_j * dlp_host_energy_factor(m, f)
                            : NAN;
}

dlp_status dlp_host_cross_validate(const dlp_host_set *s, int fit_device,
                                   dlp_host_cv *out, double *corrected,
                                   dlp_error *err) {
    if (!s || !out || s->n == 0)
        return dlp_fail(err, DLP_ERR_ARG, "host cross-validation: no samples");
    memset(out, 0, sizeof *out);
    bool *use = malloc((size_t)s->n);
    double *cor = corrected ? corrected : calloc((size_t)s->n, sizeof *cor);
    double *ecor = calloc((size_t)s->n, sizeof *ecor);
    if (!use || !cor || !ecor) {
        free(use);
        free(ecor);
        if (!corrected) free(cor);
        return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    }
    int max_fold = 0;
    for (int i = 0; i < s->n; i++)
        if (s->s[i].fold > max_fold) max_fold = s->s[i].fold;
    dlp_status st = DLP_OK;
    for (int f = 0; !st && f <= max_fold; f++) {
        int in = 0;
        for (int i = 0; i < s->n; i++) {
            use[i] = s->s[i].fold != f &&
                     (fit_device < 0 || s->s[i].device == fit_device);
            in += s->s[i].fold == f;
        }
        if (!in) continue;
        out->folds++;
        dlp_host_model m;
        dlp_error e2;
        dlp_status fs = dlp_host_fit(s, use, &m, &e2);
        if (fs && fs != DLP_ERR_NOT_FOUND) st = dlp_fail(err, fs, "%s", e2.msg);
        /* no host effect on the other folds: left as predicted */
        for (int i = 0; !st && i < s->n; i++)
            if (s->s[i].fold == f)
                correct(&s->s[i], s->tdp_w, fs ? NULL : &m, &cor[i],
                        &ecor[i]);
    }
    if (!st) score(s, cor, ecor, out);
    free(use);
    free(ecor);
    if (!corrected) free(cor);
    return st;
}

dlp_status dlp_host_apply(const dlp_host_set *s, const dlp_host_model *m,
                          dlp_host_cv *out, double *corrected,
                          dlp_error *err) {
    if (!s || !m || !out || s->n == 0)
        return dlp_fail(err, DLP_ERR_ARG, "host correction: no samples");
    memset(out, 0, sizeof *out);
    double *cor = corrected ? corrected : calloc((size_t)s->n, sizeof *cor);
    double *ecor = calloc((size_t)s->n, sizeof *ecor);
    if (!cor || !ecor) {
        free(ecor);
        if (!corrected) free(cor);
        return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    }
    for (int i = 0; i < s->n; i++)
        correct(&s->s[i], s->tdp_w, m, &cor[i], &ecor[i]);
    score(s, cor, ecor, out);
    free(ecor);
    if (!corrected) free(cor);
    return DLP_OK;
}

/* ---- file --------------------------------------------------------------- */

static const char *const HOST_KEYS[] = {"beta", "ref_us", "samples",
                                        "models", "folds", "blind_mape",
                                        "host_mape", "energy_gamma",
                                        "energy_samples", "energy_blind_mape",
                                        "energy_host_mape", "tau_ms",
                                        "power_lo_w", "power_hi_w",
                                        "power_tdp_w", "host_source",
                                        "level_mape", "energy_level_mape",
                                        "beta_quick", NULL};
enum { N_KEYS = sizeof HOST_KEYS / sizeof *HOST_KEYS - 1 };

dlp_status dlp_host_save(const char *path, const dlp_host_model *m,
                         dlp_error *err) {
    if (!path || !m) return dlp_fail(err, DLP_ERR_ARG, "host save: NULL");
    const double v[N_KEYS] = {m->beta, m->ref_us, m->n_samples, m->n_models,
                              m->folds, m->blind_mape, m->host_mape,
                              m->gamma, m->n_energy, m->energy_blind_mape,
                              m->energy_host_mape, m->tau_ms,
                              m->power_lo_w, m->power_hi_w, m->power_tdp_w,
                              m->host_source, m->level_mape,
                              m->energy_level_mape, m->beta_quick};
    return dlp_kv_write(path,
        "# dlperf host-aware eager latency (src/predict/predict_host.h):\n"
        "# eager' = eager x exp(h x beta x ln(host_us / ref_us)),\n"
        "# beta_quick in place of beta where host_us < ref_us and it is\n"
        "# positive (a two-sided fit; 0: beta on both sides),\n"
        "# h = clamp(1 - graph / eager, 0, 1) of the predicted latencies,\n"
        "# or, where tau_ms > 0 (training), h = min(1, tau_ms / step),\n"
        "# or, where power_hi_w > 0 (training), h = clamp((power_hi_w -\n"
        "# P) / (power_hi_w - power_lo_w), 0, 1), P the predicted power\n"
        "# on a board of power_tdp_w (scaled from the card's own);\n"
        "# eager energy' = energy x (1 + energy_gamma x (f - 1)), f the\n"
        "# latency's factor above. host_source: the labels' host_us\n"
        "# fitted on, 0 their own probes, 1 their batches' medians (the\n"
        "# host's level), 2 their batches' fresh-process readings;\n"
        "# level_mape: corrected with the batch medians (what a reading\n"
        "# of the host before serving gets; predict --host-us reports it).\n"
        "# Refit: dlperf host fit PREDICTIONS.csv data [--mode M] -o FILE\n",
        "dlperf-host-1", HOST_KEYS, v, err);
}

/* a file's value of key v within 0..hi, else DLP_ERR_FORMAT naming it */
static dlp_status in_range(const char *path, const char *key, double v,
                           double hi, dlp_error *err) {
    return v >= 0 && v <= hi ? DLP_OK
                             : dlp_fail(err, DLP_ERR_FORMAT, "%s: %s %g is "
                                        "not in 0..%g", path, key, v, hi);
}

dlp_status dlp_host_load(const char *path, dlp_host_model *m, dlp_error *err) {
    if (!path || !m) return dlp_fail(err, DLP_ERR_ARG, "host load: NULL");
    memset(m, 0, sizeof *m);
    double v[N_KEYS] = {0};
    uint32_t have = 0;
    dlp_status st = dlp_kv_read(path, "dlperf-host-1", HOST_KEYS, v, &have,
                                err);
    if (st) return st;
    if ((have & 3) != 3)
        return dlp_fail(err, DLP_ERR_FORMAT, "%s: missing %s", path,
                        !(have & 1) ? "beta" : "ref_us");
    if (!(v[0] > 0 && v[0] <= BETA_MAX) ||
        !(v[1] >= DLP_HOST_US_MIN && v[1] <= DLP_HOST_US_MAX))
        return dlp_fail(err, DLP_ERR_FORMAT, "%s: parameter out of range "
                        "(beta %g: 0 < beta <= %g; ref_us %g: %g..%g)", path,
                        v[0], BETA_MAX, v[1], DLP_HOST_US_MIN, DLP_HOST_US_MAX);
    if ((st = in_range(path, "energy_gamma", v[7], 1, err))) return st;
    m->beta = v[0];
    m->ref_us = v[1];
    m->n_samples = (int)v[2];
    m->n_models = (int)v[3];
    m->folds = (int)v[4];
    m->blind_mape = v[5];
    m->host_mape = v[6];
    m->gamma = v[7];
    m->n_energy = (int)v[8];
    m->energy_blind_mape = v[9];
    m->energy_host_mape = v[10];
    if ((st = in_range(path, "tau_ms", v[11], TAU_MAX_MS, err))) return st;
    m->tau_ms = v[11];
    if (v[13] != 0 && !(v[12] >= 0 && v[13] > v[12] &&
                        v[13] <= POWER_LIMIT_W && !(v[11] > 0)))
        return dlp_fail(err, DLP_ERR_FORMAT, "%s: power_lo_w %g, power_hi_w "
                        "%g: want 0 <= lo < hi <= %g W and no tau_ms", path,
                        v[12], v[13], POWER_LIMIT_W);
    m->power_lo_w = v[12];
    m->power_hi_w = v[13];
    if ((st = in_range(path, "power_tdp_w", v[14], POWER_LIMIT_W, err)))
        return st;
    m->power_tdp_w = v[14];
    if (v[15] != 0 && v[15] != 1 && v[15] != 2)
        return dlp_fail(err, DLP_ERR_FORMAT, "%s: host_source %g is not 0, "
                        "1 or 2", path, v[15]);
    m->host_source = (int)v[15];
    if ((st = in_range(path, "level_mape", v[16], 1e4, err)) ||
        (st = in_range(path, "energy_level_mape", v[17], 1e4, err)))
        return st;
    m->level_mape = v[16];
    m->energy_level_mape = v[17];
    if ((st = in_range(path, "beta_quick", v[18], BETA_MAX, err))) return st;
    m->beta_quick = v[18];
    return DLP_OK;
}
