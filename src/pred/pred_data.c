/* pred_data.c — dataset -> training examples: label rows of one mode are
 * grouped by configuration (rep 0 and rep 1 averaged), joined with their
 * graph from the packs, and each (graph, batch, seq) binding is opened,
 * analysed and featurized once (dlp_feat_graph), so thousands of
 * configurations cost one featurization per distinct binding. */
#include "pred_train.h"
#include "../model/model.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One label row reduced to what an example needs. */
typedef struct {
    const char *hash, *device, *runtime, *precision, *batch_id;
    int64_t batch, seq, height, width;
    int rep, flagged;
    double y[DLP_T_COUNT];
    double host_us;            /* NAN where the row has none */
} row_view;

static bool get_row(const dlp_dataset *ds, dlp_pred_mode mode, size_t i,
                    row_view *r) {
    memset(r, 0, sizeof *r);
    for (int t = 0; t < DLP_T_COUNT; t++) r->y[t] = NAN;
    r->host_us = NAN;
    if (mode == DLP_MODE_INFERENCE) {
        const dlp_inference_row *x = dlp_dataset_inference(ds, i);
        if (!x) return false;
        r->hash = x->c.hash; r->device = x->c.device; r->rep = x->c.rep;
        r->flagged = x->c.flagged; r->runtime = x->runtime;
        r->precision = x->precision; r->batch = x->batch; r->seq = x->seq;
        r->height = x->height; r->width = x->width;
        r->y[DLP_T_INF_LATENCY_MS] = x->latency_ms;
        r->y[DLP_T_INF_MEMORY_MIB] = x->memory_mib;
        r->y[DLP_T_INF_ENERGY_J] = x->energy_j;
        r->y[DLP_T_INF_POWER_W] = x->power_w;
        r->host_us = x->host_us;
    } else if (mode == DLP_MODE_TRAINING) {
        const dlp_training_row *x = dlp_dataset_training(ds, i);
        if (!x) return false;
        r->hash = x->c.hash; r->device = x->c.device; r->rep = x->c.rep;
        r->flagged = x->c.flagged; r->runtime = "eager";
        r->precision = x->precision; r->batch = x->batch;
        r->height = x->height; r->width = x->width;
        r->y[DLP_T_TRAIN_STEP_MS] = x->step_ms;
        r->y[DLP_T_TRAIN_MEMORY_MIB] = x->memory_mib;
        r->y[DLP_T_TRAIN_POWER_W] = x->power_w;
        r->host_us = x->host_us;
        r->batch_id = x->c.batch_id;
    } else {
        const dlp_llm_row *x = dlp_dataset_llm(ds, i);
        if (!x) return false;
        r->hash = x->c.hash; r->device = x->c.device; r->rep = x->c.rep;
        r->flagged = x->c.flagged; r->runtime = x->runtime;
        r->precision = x->precision; r->batch = x->batch; r->seq = x->seq;
        r->y[DLP_T_LLM_THROUGHPUT] = x->throughput_samples_s;
        r->y[DLP_T_LLM_MEMORY_MIB] = x->memory_mib;
        r->y[DLP_T_LLM_ENERGY_PER_SAMPLE] = x->energy_per_sample_j;
    }
    return true;
}

static size_t n_rows(const dlp_dataset *ds, dlp_pred_mode mode) {
    dlp_dataset_counts c;
    dlp_dataset_get_counts(ds, &c);
    return mode == DLP_MODE_INFERENCE ? c.inference
           : mode == DLP_MODE_TRAINING ? c.training : c.llm;
}

int dlp_examples_intern(char ***list, int *n, const char *s) {
    for (int i = 0; i < *n; i++)
        if (!strcmp((*list)[i], s)) return i;
    char **l = realloc(*list, (size_t)(*n + 1) * sizeof *l);
    if (!l) return -1;
    *list = l;
    if (!(l[*n] = strdup(s))) return -1;
    return (*n)++;
}

void dlp_examples_free(dlp_examples *E) {
    if (!E) return;
    free(E->ex);
    for (int i = 0; i < E->n_fg; i++) {
        dlp_feat_graph_free(&E->fg[i]);
        free(E->fg_hash[i]);
    }
    free(E->fg); free(E->fg_hash);
    for (int i = 0; i < E->n_models; i++) free(E->models[i]);
    for (int i = 0; i < E->n_families; i++) free(E->families[i]);
    free(E->models); free(E->families);
    for (int i = 0; i < E->n_pool; i++) dlp_feat_graph_free(&E->pool[i]);
    free(E->pool);
    dlp_traces_free(E);
    dlp_convws_calls_free(E->convws);
    free(E->convws);
    dlp_optime_probes_free(E->optime);
    free(E->optime);
    free(E->y_meas); free(E->host_probe); free(E->twin);
    memset(E, 0, sizeof *E);
}

/* the graphs to featurize, copied in one pass over the packs */
typedef struct {
    char **hash;
    void **bytes;
    size_t *len;
    int n;
} gather;

/* The featurized-graph slot of a graph at a binding, keyed
 * "hash|batch|seq|h|w" (read back before featurizing), added (empty,
 * featurized later) when new; -1 when out of memory. */
static int fg_slot(dlp_examples *E, const char *hash, int64_t batch,
                   int64_t seq, int64_t h, int64_t w) {
    char fk[96];
    snprintf(fk, sizeof fk, "%s|%lld|%lld|%lld|%lld", hash, (long long)batch,
             (long long)seq, (long long)h, (long long)w);
    for (int j = E->n_fg - 1; j >= 0; j--)
        if (!strcmp(E->fg_hash[j], fk)) return j;
    if (E->n_fg == E->cap_fg) {
        int nc = E->cap_fg ? 2 * E->cap_fg : 64;
        void *a = realloc(E->fg, (size_t)nc * sizeof *E->fg);
        if (a) E->fg = a;
        void *b = a ? realloc(E->fg_hash, (size_t)nc * sizeof *E->fg_hash) : NULL;
        if (b) E->fg_hash = b;
        if (!a || !b) return -1;
        E->cap_fg = nc;
    }
    int f = E->n_fg;
    memset(&E->fg[f], 0, sizeof E->fg[f]);
    if (!(E->fg_hash[f] = strdup(fk))) return -1;
    E->n_fg++;
    return f;
}

/* Opens graph bytes, binds, analyses and featurizes; with E given, also
 * attributes the kernel traces of slot f (they need the node names). */
static dlp_status featurize(const void *bytes, size_t len, const char *hash,
                            int64_t batch, int64_t seq, int64_t h, int64_t w,
                            dlp_feat_graph *fg, dlp_examples *E,
                            const dlp_dataset *ds, int f, bool *conflict,
                            dlp_error *err) {
    dlp_model *m = NULL;
    dlp_status st = dlp_feat_model_at(bytes, len, hash, batch, seq, h, w, &m, err);
    if (st) return st;
    /* a label measured at a size the graph cannot take (exported at a
     * fixed size whose constants the binding contradicts: NaFlexViT
     * exported at 384 px, measured at 32 px) is not an example of it */
    if (!st && m->graph.n_shape_conflicts) {
        if (conflict) *conflict = true;
        st = dlp_fail(err, DLP_ERR_SHAPE, "%s at batch %lld, seq %lld, "
                      "%lldx%lld px: %d node(s) contradict the binding", hash,
                      (long long)batch, (long long)seq, (long long)h,
                      (long long)w, m->graph.n_shape_conflicts);
    }
    if (!st) st = dlp_feat_graph_build(fg, &m->graph, batch, seq, h, w, err);
    if (!st && E && E->n_trace)
        st = dlp_traces_attribute_slot(E, ds, f, &m->graph, err);
    dlp_model_free(m);
    return st;
}

/* ---- featurizing on several threads ---------------------------------------
 * The bindings (and the pool's graphs) are claimed one at a time from a
 * shared counter, since their costs differ by orders of magnitude (a
 * 6,000-node decoder beside a 60-node CNN); each writes only its own slot
 * (features, status, message, trace attribution: dlp_traces_attribute_slot
 * touches the traces of its binding alone), and the slots are read in
 * order afterwards, so the examples are the same for any thread count. */
typedef struct {
    const gather *G;
    dlp_examples *E;           /* NULL: the pool */
    const dlp_dataset *ds;
    const dlp_examples_opts *o;
    int n, done_before, total; /* items; progress offset and total */
    dlp_feat_graph *out;       /* per item: its features */
    dlp_status *st;            /* per item: its status */
    dlp_error *err;            /* per item: its message */
    bool *conflict;            /* per item: shapes contradict the binding */
    pthread_mutex_t lock;      /* one progress call at a time */
    int done;                  /* items done (under lock) */
} feat_job;

static void feat_item(feat_job *J, int i) {
    if (!J->E) {   /* the pool: graph i at batch 1, sequence 16 */
        J->st[i] = J->G->bytes[i]
                       ? featurize(J->G->bytes[i], J->G->len[i], J->G->hash[i],
                                   1, 16, 0, 0, &J->out[i], NULL, NULL, -1,
                                   NULL, &J->err[i])
                       : DLP_ERR_NOT_FOUND;
        return;
    }
    const char *key = J->E->fg_hash[i];
    int j = 0;
    while (j < J->G->n && strncmp(J->G->hash[j], key, 16)) j++;
    long long b = 0, s = 0, hh = 0, ww = 0;
    const char *bar = strchr(key, '|');
    if (bar) sscanf(bar + 1, "%lld|%lld|%lld|%lld", &b, &s, &hh, &ww);
    J->st[i] = j == J->G->n || !J->G->bytes[j]
                   ? dlp_fail(&J->err[i], DLP_ERR_NOT_FOUND, "%.16s: graph "
                              "not in the packs", key)
                   : featurize(J->G->bytes[j], J->G->len[j], J->G->hash[j], b,
                               s, hh, ww, &J->out[i], J->E, J->ds, i,
                               &J->conflict[i], &J->err[i]);
}

/* item i (dlp_parallel_each); out of memory stops the run */
static bool feat_next(void *ctx, int i) {
    feat_job *J = ctx;
    feat_item(J, i);
    if (J->o->progress) {
        pthread_mutex_lock(&J->lock);
        J->o->progress(J->o->user, J->done_before + J->done++, J->total);
        pthread_mutex_unlock(&J->lock);
    }
    return J->st[i] != DLP_ERR_NOMEM;
}

/* features of n items into out[] (statuses st[], messages errs[],
 * conflict flags) on the options' threads; items never claimed after an
 * out of memory keep the status the caller set */
static void feat_run(feat_job *J) {
    J->done = 0;
    pthread_mutex_init(&J->lock, NULL);
    dlp_parallel_each(J->o->threads > 1 ? J->o->threads : 1, J->n, feat_next, J);
    pthread_mutex_destroy(&J->lock);
}

/* The configuration key a label row is grouped under (one example per
 * key), at runtime rt: "hash|device|runtime|precision|batch|seq|height|
 * width"; its length, as snprintf's. */
static int config_key(char *buf, size_t cap, const row_view *r,
                      dlp_runtime rt, dlp_precision prec) {
    return snprintf(buf, cap, "%s|%s|%d|%d|%lld|%lld|%lld|%lld", r->hash,
                    r->device, (int)rt, (int)prec, (long long)r->batch,
                    (long long)r->seq, (long long)r->height,
                    (long long)r->width);
}

double dlp_host_norm_factor(const dlp_host_norm *n, double host_us,
                            double h) {
    if (!n || !(host_us > 0) || !isfinite(host_us) || !(n->ref_us > 0) ||
        !isfinite(n->ref_us) || !isfinite(h) || !isfinite(n->beta))
        return 1;
    h = h < 0 ? 0 : h > 1 ? 1 : h;
    double beta = n->beta_quick > 0 && host_us < n->ref_us ? n->beta_quick
                                                            : n->beta;
    return exp(h * beta * log(host_us / n->ref_us));
}

double dlp_host_norm_share(const dlp_host_norm *n, double eager_ms,
                           double graph_ms, double power_w) {
    double h;
    if (!n) return NAN;
    if (n->tau_ms > 0)
        h = eager_ms > 0 ? n->tau_ms / eager_ms : NAN;
    else if (n->power_hi_w > 0)
        h = power_w > 0 && isfinite(power_w) && n->power_hi_w > n->power_lo_w
                ? (n->power_hi_w - power_w) / (n->power_hi_w - n->power_lo_w)
                : NAN;
    else
        h = graph_ms > 0 && isfinite(graph_ms) && eager_ms > 0
                ? 1 - graph_ms / eager_ms : NAN;
    return isnan(h) ? h : h < 0 ? 0 : h > 1 ? 1 : h;
}

bool dlp_host_norm_is_training(const dlp_host_norm *n) {
    return n && (n->tau_ms > 0 || n->power_hi_w > 0);
}

double dlp_host_norm_board_power(const dlp_host_norm *n, double power_w,
                                 double tdp_w) {
    return n && n->power_tdp_w > 0 && tdp_w > 0
               ? power_w * n->power_tdp_w / tdp_w : power_w;
}

double dlp_host_norm_energy_factor(const dlp_host_norm *n, double f) {
    if (!n || !(f > 0) || !isfinite(f)) return 1;
    return 1 + n->gamma * (f - 1);
}

/* Eager inference and LLM examples' labels to the reference host of n
 * (dlp_host_norm in pred_train.h): each needs its host probe and its
 * CUDA-graph twin for the share h: E->twin[e], the example under its own
 * key at the graph runtime (-1 for the others), and its probe
 * E->host_probe[e]. An LLM's
 * throughput is a latency's inverse (the same batch at both runtimes):
 * h = 1 - eager / graph throughput, and the throughput is multiplied by
 * f; its energy per sample is divided by the energy factor. */
static void host_normalize(dlp_examples *E, const dlp_host_norm *n) {
    bool llm = E->mode == DLP_MODE_LLM;
    int lat = llm ? DLP_T_LLM_THROUGHPUT : DLP_T_INF_LATENCY_MS;
    int energy = llm ? DLP_T_LLM_ENERGY_PER_SAMPLE : DLP_T_INF_ENERGY_J;
    for (int e = 0; e < E->n; e++) {
        dlp_example *x = &E->ex[e];
        double eager = x->y[lat], host_us = E->host_probe[e];
        int g = E->twin[e];
        if (g < 0 || !(host_us > 0) || !(eager > 0)) continue;
        double graph = E->ex[g].y[lat];
        if (!(graph > 0)) continue;
        /* an LLM's latencies are its throughputs' inverses */
        double f = dlp_host_norm_factor(
            n, host_us,
            llm ? dlp_host_norm_share(n, 1 / eager, 1 / graph, NAN)
                : dlp_host_norm_share(n, eager, graph, NAN));
        double fe = dlp_host_norm_energy_factor(n, f);
        if (!(fe > 0)) continue;
        x->host_f = f;
        E->n_host_normed++;
        if (llm) {
            x->y[lat] *= f;
        } else {
            x->y[lat] /= f;
            x->y[DLP_T_INF_POWER_W] *= f / fe;
        }
        x->y[energy] /= fe;
    }
}

/* The host probes of LLM examples into E->host_probe, where they have
 * none: the mean host_us of the eager inference rows under each eager LLM
 * example's key (keys: the LLM examples'). */
static dlp_status llm_host_probes(dlp_examples *E, const dlp_dataset *ds,
                                  const dlp_strmap *keys, dlp_error *err) {
    size_t nr = n_rows(ds, DLP_MODE_INFERENCE);
    double *sum = calloc((size_t)E->n + 1, sizeof *sum);
    int *cnt = calloc((size_t)E->n + 1, sizeof *cnt);
    if (!sum || !cnt) {
        free(sum);
        free(cnt);
        return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    }
    for (size_t i = 0; i < nr; i++) {
        row_view r;
        dlp_precision prec;
        if (!get_row(ds, DLP_MODE_INFERENCE, i, &r) ||
            strcmp(r.runtime, "eager") || !(r.host_us > 0) ||
            !isfinite(r.host_us) ||
            dlp_precision_parse(r.precision, &prec, NULL))
            continue;
        char key[256];
        int kl = config_key(key, sizeof key, &r, DLP_RT_EAGER, prec);
        int e = kl > 0 && (size_t)kl < sizeof key
                    ? dlp_strmap_get(keys, key, (size_t)kl) : -1;
        if (e < 0) continue;
        sum[e] += r.host_us;
        cnt[e]++;
    }
    for (int e = 0; e < E->n; e++)
        if (cnt[e] && !(E->host_probe[e] > 0))
            E->host_probe[e] = sum[e] / cnt[e];
    free(sum);
    free(cnt);
    return DLP_OK;
}

/* Training steps to the reference host of n: each needs its host probe
 * (its rows' own, else their batch's eager inference median) and, for the
 * power rule, its measured power. */
static void host_normalize_training(dlp_examples *E, const dlp_host_norm *n) {
    for (int e = 0; e < E->n; e++) {
        dlp_example *x = &E->ex[e];
        double host_us = E->host_probe[e];
        if (!(host_us > 0) || !(x->y[DLP_T_TRAIN_STEP_MS] > 0)) continue;
        /* the power rule's watts on a board of power_tdp_w */
        double w = dlp_host_norm_board_power(n, x->y[DLP_T_TRAIN_POWER_W],
                                             x->cfg.device.tdp_w);
        double h = dlp_host_norm_share(n, x->y[DLP_T_TRAIN_STEP_MS], NAN, w);
        if (!isfinite(h)) continue;
        double f = dlp_host_norm_factor(n, host_us, h);
        double fe = dlp_host_norm_energy_factor(n, f);
        if (!(fe > 0)) continue;
        x->host_f = f;
        E->n_host_normed++;
        x->y[DLP_T_TRAIN_STEP_MS] /= f;
        x->y[DLP_T_TRAIN_POWER_W] *= f / fe;
    }
}

/* The eager inference median probe of batch_id (NAN: none), the last
 * batch found kept in *last (rows come batch by batch). */
static double batch_inf_probe(const dlp_dataset *ds, const char *batch_id,
                              dlp_batch_host *last) {
    if (!batch_id) return NAN;
    if (last->batch_id && !strcmp(last->batch_id, batch_id))
        return last->inference_us;
    dlp_batch_host b;
    for (size_t i = 0; dlp_dataset_batch_host(ds, i, &b); i++)
        if (b.batch_id && !strcmp(b.batch_id, batch_id)) {
            *last = b;
            return b.inference_us;
        }
    return NAN;
}

/* E's labels from the measured ones kept, then to n's reference host
 * (NULL: as measured) */
static void host_norm_apply(dlp_examples *E, const dlp_host_norm *n) {
    for (int e = 0; e < E->n; e++) {
        memcpy(E->ex[e].y, E->y_meas + (size_t)e * DLP_T_COUNT,
               sizeof E->ex[e].y);
        E->ex[e].host_f = 1;
    }
    E->n_host_normed = 0;
    memset(&E->host_norm, 0, sizeof E->host_norm);
    if (!n) return;
    E->host_norm = *n;
    if (E->mode == DLP_MODE_TRAINING)
        host_normalize_training(E, n);
    else
        host_normalize(E, n);
}

dlp_status dlp_examples_host_norm(dlp_examples *E, const dlp_host_norm *n,
                                  dlp_error *err) {
    if (!E) return dlp_fail(err, DLP_ERR_ARG, "examples: NULL");
    if (!E->meas_kept || !E->y_meas || !E->host_probe || !E->twin)
        return dlp_fail(err, DLP_ERR_ARG, "these %s examples were built "
                        "with a runtime filter: the CUDA-graph twins a "
                        "reference host's shares come from are not among "
                        "them (build them with the host norm instead)",
                        dlp_mode_name(E->mode));
    host_norm_apply(E, n);
    return DLP_OK;
}

dlp_status dlp_examples_build(dlp_examples *E, const dlp_dataset *ds,
                              dlp_pred_mode mode, const dlp_examples_opts *o,
                              dlp_error *err) {
    return dlp_examples_build_pool(E, ds, mode, o, 0, err);
}

dlp_status dlp_examples_build_pool(dlp_examples *E, const dlp_dataset *ds,
                                   dlp_pred_mode mode,
                                   const dlp_examples_opts *o, int pool_max,
                                   dlp_error *err) {
    memset(E, 0, sizeof *E);
    E->mode = mode;
    dlp_examples_opts def = {NULL, -1, -1, false, NULL, NULL, 1, NULL};
    if (!o) o = &def;
    size_t nr = n_rows(ds, mode);
    dlp_status st = DLP_OK;
    /* group rows by configuration key */
    dlp_strmap keys;
    dlp_arena arena = {0};
    if (!dlp_strmap_init(&keys, nr + 16))
        return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    int *nrep = NULL;          /* reps per example, for averaging */
    double *sum = NULL, *y0 = NULL, *hsum = NULL, *psum = NULL;
    int *cnt = NULL, *hcnt = NULL, *pcnt = NULL;
    /* each eager inference or LLM example's key at the graph runtime (in
     * the arena), NULL for the others */
    char **twin = NULL;
    dlp_batch_host last_batch = {0};
    gather G = {0};
    for (size_t i = 0; i < nr && !st; i++) {
        row_view r;
        if (!get_row(ds, mode, i, &r)) continue;
        if (o->device && strcmp(o->device, r.device)) continue;
        dlp_precision prec;
        dlp_runtime rt;
        if (dlp_precision_parse(r.precision, &prec, NULL) ||
            dlp_runtime_parse(r.runtime, &rt, NULL))
            continue;
        if (o->precision >= 0 && (int)prec != o->precision) continue;
        /* an eager-only set brought to a host still reads the CUDA-graph
         * twins (their examples go after the normalization) */
        if (o->runtime >= 0 && mode != DLP_MODE_TRAINING &&
            (int)rt != o->runtime &&
            !(o->host_norm && o->runtime == DLP_RT_EAGER &&
              rt == DLP_RT_GRAPH))
            continue;
        char key[256];
        int kl = config_key(key, sizeof key, &r, rt, prec);
        int e = dlp_strmap_get(&keys, key, (size_t)kl);
        if (e < 0) {
            const dlp_graph_info *gi = dlp_dataset_find_graph(ds, r.hash);
            if (!gi) continue;
            dlp_device dev;
            if (dlp_device_find(r.device, &dev, NULL)) continue;
            if (E->n == E->cap) {
                int nc = E->cap ? 2 * E->cap : 256;
                void *a = realloc(E->ex, (size_t)nc * sizeof *E->ex);
                void *b = a ? realloc(sum, (size_t)nc * DLP_T_COUNT * sizeof *sum) : NULL;
                if (b) sum = b;
                void *c = b ? realloc(cnt, (size_t)nc * DLP_T_COUNT * sizeof *cnt) : NULL;
                if (c) cnt = c;
                void *d = c ? realloc(y0, (size_t)nc * 2 * sizeof *y0) : NULL;
                if (d) y0 = d;
                void *h = d ? realloc(hsum, (size_t)nc * sizeof *hsum) : NULL;
                if (h) hsum = h;
                void *hc = h ? realloc(hcnt, (size_t)nc * sizeof *hcnt) : NULL;
                if (hc) hcnt = hc;
                void *ek = hc ? realloc(twin, (size_t)nc * sizeof *twin) : NULL;
                if (ek) twin = ek;
                void *ps = ek ? realloc(psum, (size_t)nc * sizeof *psum) : NULL;
                if (ps) psum = ps;
                void *pc = ps ? realloc(pcnt, (size_t)nc * sizeof *pcnt) : NULL;
                if (pc) pcnt = pc;
                if (a) E->ex = a;
                if (!a || !b || !c || !d || !h || !hc || !ek || !ps || !pc) {
                    st = dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
                    break;
                }
                E->cap = nc;
            }
            e = E->n++;
            char *k = dlp_arena_strndup(&arena, key, (size_t)kl);
            if (!k || !dlp_strmap_put(&keys, k, (size_t)kl, e)) {
                st = dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
                break;
            }
            twin[e] = NULL;
            if (mode != DLP_MODE_TRAINING && rt == DLP_RT_EAGER) {
                char tk[256];
                int tl = config_key(tk, sizeof tk, &r, DLP_RT_GRAPH, prec);
                if (tl > 0 && (size_t)tl < sizeof tk &&
                    !(twin[e] = dlp_arena_strndup(&arena, tk, (size_t)tl))) {
                    st = dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
                    break;
                }
            }
            dlp_example *x = &E->ex[e];
            memset(x, 0, sizeof *x);
            dlp_pred_config_init(&x->cfg);
            x->cfg.device = dev;
            x->cfg.mode = mode;
            x->cfg.precision = prec;
            x->cfg.runtime = mode == DLP_MODE_TRAINING ? DLP_RT_EAGER : rt;
            x->cfg.batch = r.batch;
            x->cfg.seq = r.seq;
            x->cfg.height = r.height;
            x->cfg.width = r.width;
            x->model = dlp_examples_intern(&E->models, &E->n_models, gi->model);
            x->family = dlp_examples_intern(&E->families, &E->n_families, gi->family);
            if (x->model < 0 || x->family < 0) {
                st = dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
                break;
            }
            int f = fg_slot(E, r.hash, r.batch, r.seq, r.height, r.width);
            if (f < 0) {
                st = dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
                break;
            }
            x->fg = f;
            for (int t = 0; t < DLP_T_COUNT; t++) {
                sum[e * DLP_T_COUNT + t] = 0;
                cnt[e * DLP_T_COUNT + t] = 0;
            }
            y0[2 * e] = y0[2 * e + 1] = NAN;
            hsum[e] = psum[e] = 0;
            hcnt[e] = pcnt[e] = 0;
            if (!strstr(E->devices, r.device) &&
                strlen(E->devices) + strlen(r.device) + 2 < sizeof E->devices) {
                if (E->devices[0]) strcat(E->devices, ",");
                strcat(E->devices, r.device);
            }
        }
        dlp_example *x = &E->ex[e];
        x->flagged |= r.flagged;
        for (int t = 0; t < DLP_T_COUNT; t++)
            if (isfinite(r.y[t]) && r.y[t] > 0) {
                sum[e * DLP_T_COUNT + t] += r.y[t];
                cnt[e * DLP_T_COUNT + t]++;
            }
        int mt = dlp_mode_main_target(mode);
        if (r.rep >= 0 && r.rep <= 1) y0[2 * e + r.rep] = r.y[mt];
        /* the probe a host norm reads: a training step without one of
         * its own takes its batch's */
        double probe = r.host_us;
        if (mode == DLP_MODE_TRAINING && !(isfinite(probe) && probe > 0))
            probe = batch_inf_probe(ds, r.batch_id, &last_batch);
        if (isfinite(r.host_us) && r.host_us > 0) {
            hsum[e] += r.host_us;
            hcnt[e]++;
        }
        if (isfinite(probe) && probe > 0) {
            psum[e] += probe;
            pcnt[e]++;
        }
    }
    (void)nrep;
    for (int e = 0; e < E->n && !st; e++) {
        dlp_example *x = &E->ex[e];
        for (int t = 0; t < DLP_T_COUNT; t++)
            x->y[t] = cnt[e * DLP_T_COUNT + t]
                          ? sum[e * DLP_T_COUNT + t] / cnt[e * DLP_T_COUNT + t]
                          : NAN;
        double a = y0[2 * e], b = y0[2 * e + 1];
        x->rep_gap = isfinite(a) && isfinite(b) && a + b > 0
                         ? fabs(a - b) / (0.5 * (a + b)) : NAN;
        x->host_us = hcnt[e] ? hsum[e] / hcnt[e] : NAN;
        x->host_f = 1;
    }
    /* what a host norm reads, kept (dlp_examples_host_norm) */
    if (!st) {
        size_t n1 = E->n ? (size_t)E->n : 1;
        E->y_meas = malloc(n1 * DLP_T_COUNT * sizeof *E->y_meas);
        E->host_probe = malloc(n1 * sizeof *E->host_probe);
        E->twin = malloc(n1 * sizeof *E->twin);
        if (!E->y_meas || !E->host_probe || !E->twin)
            st = dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    }
    for (int e = 0; e < E->n && !st; e++) {
        memcpy(E->y_meas + (size_t)e * DLP_T_COUNT, E->ex[e].y,
               sizeof E->ex[e].y);
        E->host_probe[e] = pcnt[e] ? psum[e] / pcnt[e] : NAN;
        E->twin[e] = twin[e] ? dlp_strmap_get(&keys, twin[e], strlen(twin[e]))
                             : -1;
    }
    /* a runtime filter drops the CUDA-graph twins (below, or before) */
    E->meas_kept = !(o->runtime >= 0 && mode != DLP_MODE_TRAINING);
    /* an LLM row has no probe of its own: its configuration's eager
     * inference rows (the same run measures both) carry it */
    if (!st && mode == DLP_MODE_LLM)
        st = llm_host_probes(E, ds, &keys, err);
    free(sum); free(cnt); free(y0); free(hsum); free(hcnt); free(twin);
    free(psum); free(pcnt);
    dlp_strmap_free(&keys);
    dlp_arena_free(&arena);
    /* kernel traces: inference only (eager GPU time of one forward) */
    if (!st && mode == DLP_MODE_INFERENCE)
        st = dlp_traces_collect(E, ds, o, fg_slot, err);
    /* the per-convolution probes: the workspace model's rows (inference
     * memory, and the training step's forward, pred_roofline.c) */
    char probes[4096];
    snprintf(probes, sizeof probes, "%s/probes", dlp_dataset_dir(ds));
    if (!st && (mode == DLP_MODE_INFERENCE || mode == DLP_MODE_TRAINING)) {
        E->convws = calloc(1, sizeof *E->convws);
        if (!E->convws) st = dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
        else st = dlp_convws_calls_read(probes, E->convws, err);
    }
    /* the operator-time probes: the times of convolutions, products,
     * memory-bound operators and fused attention (pred_optime.c), a
     * training step's (forward + backward) in training mode. Language
     * models read the forward's since the forty-seventh session (with
     * the convolutions and products alone a trial had moved their
     * XGBoost's throughput 19.73 -> 19.69%, with all four kinds 19.73 ->
     * 18.51%; docs/COST.md) */
    if (!st) {
        E->optime = calloc(1, sizeof *E->optime);
        if (!E->optime) st = dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
        else st = dlp_optime_probes_read(probes, mode == DLP_MODE_TRAINING,
                                         E->optime, err);
    }
    if (st) { dlp_examples_free(E); return st; }

    /* gather graph bytes: labelled graphs, and every graph for the pool */
    size_t n_index = 0;
    {
        dlp_dataset_counts c;
        dlp_dataset_get_counts(ds, &c);
        n_index = c.graphs;
    }
    int cap = (int)n_index + E->n_fg + 1;
    G.hash = calloc((size_t)cap, sizeof *G.hash);
    G.bytes = calloc((size_t)cap, sizeof *G.bytes);
    G.len = calloc((size_t)cap, sizeof *G.len);
    if (!G.hash || !G.bytes || !G.len) st = dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    for (int f = 0; f < E->n_fg && !st; f++) {
        char h[17];
        snprintf(h, sizeof h, "%.16s", E->fg_hash[f]);
        bool have = false;
        for (int j = 0; j < G.n && !have; j++) have = !strcmp(G.hash[j], h);
        if (!have && !(G.hash[G.n++] = strdup(h)))
            st = dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    }
    int n_labeled_graphs = G.n;
    /* pool: every indexed graph, or an even sample of pool_max of them
     * (graphs above DLP_POOL_MAX_NODES nodes skipped when sampling) */
    size_t n_elig = 0;
    for (size_t i = 0; o->with_pool && i < n_index; i++) {
        const dlp_graph_info *gi = dlp_dataset_graph(ds, i);
        n_elig += !pool_max || gi->nodes <= DLP_POOL_MAX_NODES;
    }
    double stride = pool_max > 0 && n_elig > (size_t)pool_max
                        ? (double)n_elig / pool_max : 1.0;
    double next = 0;
    size_t k_elig = 0;
    int n_pool_pick = 0;
    if (o->with_pool)
        for (size_t i = 0; i < n_index && !st; i++) {
            const dlp_graph_info *gi = dlp_dataset_graph(ds, i);
            if (pool_max && gi->nodes > DLP_POOL_MAX_NODES) continue;
            if ((double)k_elig++ < next) continue;
            next += stride;
            n_pool_pick++;
            bool have = false;
            for (int j = 0; j < G.n && !have; j++) have = !strcmp(G.hash[j], gi->hash);
            if (!have && !(G.hash[G.n++] = strdup(gi->hash)))
                st = dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
        }
    (void)n_labeled_graphs;
    if (!st)
        st = dlp_dataset_graphs_bytes(ds, (const char *const *)G.hash, G.n,
                                      G.bytes, G.len, err);
    /* featurize every binding; drop examples whose graph fails */
    int n_items = E->n_fg > G.n ? E->n_fg : G.n;
    bool *bad = calloc((size_t)(E->n_fg ? E->n_fg : 1), sizeof *bad);
    bool *conflict = calloc((size_t)(n_items ? n_items : 1), sizeof *conflict);
    dlp_status *fst = calloc((size_t)(n_items ? n_items : 1), sizeof *fst);
    dlp_error *ferr = calloc((size_t)(n_items ? n_items : 1), sizeof *ferr);
    if (!st && (!bad || !conflict || !fst || !ferr))
        st = dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    feat_job J = {.G = &G, .E = E, .ds = ds, .o = o, .n = E->n_fg,
                  .total = E->n_fg + (o->with_pool ? G.n : 0), .out = E->fg,
                  .st = fst, .err = ferr, .conflict = conflict};
    for (int f = 0; f < E->n_fg && !st; f++) fst[f] = DLP_ERR_NOT_FOUND;
    if (!st) feat_run(&J);
    for (int f = 0; f < E->n_fg && !st; f++) {
        if (fst[f] == DLP_ERR_NOMEM) st = dlp_fail(err, fst[f], "%s", ferr[f].msg);
        else if (fst[f]) {
            bad[f] = true;
            E->n_conflict_bindings += conflict[f];
            if (E->n_skipped_graphs < DLP_EXAMPLES_SKIPPED_KEEP)
                E->skipped[E->n_skipped_graphs] = ferr[f];
            E->n_skipped_graphs++;
        }
    }
    int *moved = NULL;   /* an example's new index, -1: dropped */
    if (!st && E->twin && !(moved = malloc((size_t)(E->n ? E->n : 1) *
                                           sizeof *moved)))
        st = dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    if (!st) {   /* compact examples (and what a host norm reads) and traces */
        int k = 0;
        for (int e = 0; e < E->n; e++) {
            if (moved) moved[e] = bad[E->ex[e].fg] ? -1 : k;
            if (bad[E->ex[e].fg]) continue;
            if (E->twin) {
                memmove(E->y_meas + (size_t)k * DLP_T_COUNT,
                        E->y_meas + (size_t)e * DLP_T_COUNT,
                        DLP_T_COUNT * sizeof *E->y_meas);
                E->host_probe[k] = E->host_probe[e];
                E->twin[k] = E->twin[e];
            }
            E->ex[k++] = E->ex[e];
        }
        /* a twin shares its example's binding, so it is kept with it */
        for (int e = 0; E->twin && e < k; e++)
            if (E->twin[e] >= 0) E->twin[e] = moved[E->twin[e]];
        E->n = k;
        dlp_traces_finish(E, bad);
    }
    free(moved);
    free(bad);
    if (!st && o->with_pool) {   /* every pool graph at batch 1, seq 16 */
        E->pool = calloc((size_t)(G.n ? G.n : 1), sizeof *E->pool);
        if (!E->pool) st = dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
        feat_job P = {.G = &G, .E = NULL, .ds = ds, .o = o, .n = G.n,
                      .done_before = E->n_fg, .total = E->n_fg + G.n,
                      .out = E->pool, .st = fst, .err = ferr};
        /* an item left unclaimed (a thread ran out of memory) stays failed */
        for (int j = 0; j < G.n && !st; j++) fst[j] = DLP_ERR_NOT_FOUND;
        if (!st) feat_run(&P);
        /* the graphs that featurized, in order (a failed slot holds
         * nothing: dlp_feat_graph_build frees what it built on failure) */
        for (int j = 0; j < G.n && E->pool; j++) {
            if (fst[j] == DLP_ERR_NOMEM && !st)
                st = dlp_fail(err, fst[j], "%s", ferr[j].msg);
            else if (!fst[j]) E->pool[E->n_pool++] = E->pool[j];
        }
        for (int j = E->n_pool; j < G.n && E->pool; j++)
            memset(&E->pool[j], 0, sizeof E->pool[j]);
    }
    free(conflict);
    free(fst);
    free(ferr);
    for (int j = 0; j < G.n; j++) { free(G.hash[j]); free(G.bytes[j]); }
    free(G.hash); free(G.bytes); free(G.len);
    if (st) { dlp_examples_free(E); return st; }
    /* the host norm on the examples kept (a later dlp_examples_host_norm
     * gives the same), then the runtime filter it had kept the CUDA-graph
     * twins through */
    if (o->host_norm) {
        host_norm_apply(E, o->host_norm);
        if (o->runtime >= 0 && mode != DLP_MODE_TRAINING) {
            int n = 0;
            for (int e = 0; e < E->n; e++)
                if ((int)E->ex[e].cfg.runtime == o->runtime)
                    E->ex[n++] = E->ex[e];
            E->n = n;
        }
    }
    if (!E->meas_kept) {
        free(E->y_meas); free(E->host_probe); free(E->twin);
        E->y_meas = E->host_probe = NULL;
        E->twin = NULL;
    }
    if (E->n == 0) {
        dlp_examples_free(E);
        return dlp_fail(err, DLP_ERR_NOT_FOUND, "no usable %s labels in %s",
                        dlp_mode_name(mode), dlp_dataset_dir(ds));
    }
    return DLP_OK;
}
