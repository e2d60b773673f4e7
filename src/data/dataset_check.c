/*
 * dataset_check.c — dlp_dataset_check: validates a loaded dataset against
 * the rules of data/FORMAT.md and computes its statistics, as one JSON
 * report (documented in docs/DATASET_STATS.md).
 *
 * Errors (the dataset is invalid): a label or kernel row whose hash is not
 * in graphs/index.csv; an index row whose file is not in its pack (or whose
 * pack is missing or unreadable, or whose size differs from file_bytes); two
 * rows with the same key; values outside the FORMAT.md unit ranges; bad
 * rep/status/protocol values; duplicate or malformed index hashes.
 * Warnings: flagged pairs (kept by design), pairs whose status disagrees with
 * their numbers, unknown runtimes/precisions/devices, pack members missing
 * from the index, batches without env.json.
 *
 * Statistics: a configuration is a row key without rep. Category counts
 * (devices, runtimes, precisions, families) count configurations; min /
 * median / max run over rows; the noise floor is |rep0 - rep1| / rep0 over
 * configurations that have both reps, per runtime and metric (median and
 * p90, linear interpolation between order statistics, as numpy does).
 */
#include "data/dataset.h"
#include "device/device.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LISTED 1000 /* problems kept in the report; all are counted */
#define MAX_TIME_MS 600000.0

typedef struct {
    const dlp_dataset *ds;
    cJSON *errors, *warnings;
    int nerr, nwarn;
    dlp_arena arena;          /* keys */
    bool oom;
} ctx;

static void problem(ctx *x, bool is_error, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void problem(ctx *x, bool is_error, const char *fmt, ...) {
    int *n = is_error ? &x->nerr : &x->nwarn;
    (*n)++;
    if (*n > MAX_LISTED) return;
    char buf[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    cJSON *s = cJSON_CreateString(buf);
    if (!s || !cJSON_AddItemToArray(is_error ? x->errors : x->warnings, s)) {
        cJSON_Delete(s);
        x->oom = true;
    }
}
#define ERR(x, ...) problem(x, true, __VA_ARGS__)
#define WARN(x, ...) problem(x, false, __VA_ARGS__)

/* ---- small helpers: counters, number lists, quantiles ------------------- */

typedef struct {               /* name -> count */
    dlp_strmap map;
    const char **names;
    int64_t *counts;
    size_t n, cap, cap2;
} counter;

static void counter_add(ctx *x, counter *c, const char *name, int64_t k) {
    if (!name || !name[0]) name = "(none)";
    int i = dlp_strmap_get(&c->map, name, strlen(name));
    if (i < 0) {
        if (!dlp_grow((void **)&c->names, &c->cap, c->n + 1, sizeof *c->names) ||
            !dlp_grow((void **)&c->counts, &c->cap2, c->n + 1,
                      sizeof *c->counts) ||
            !dlp_strmap_put(&c->map, name, strlen(name), (int)c->n)) {
            x->oom = true;
            return;
        }
        c->names[c->n] = name;
        c->counts[c->n] = 0;
        i = (int)c->n++;
    }
    c->counts[i] += k;
}

static void counter_free(counter *c) {
    dlp_strmap_free(&c->map);
    free(c->names);
    free(c->counts);
    memset(c, 0, sizeof *c);
}

static int cmp_cstr(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* {"name": count, ...} with sorted keys. */
static cJSON *counter_json(ctx *x, const counter *c) {
    cJSON *o = cJSON_CreateObject();
    const char **names = malloc((c->n ? c->n : 1) * sizeof *names);
    if (!o || !names) {
        x->oom = true;
        free(names);
        return o;
    }
    for (size_t i = 0; i < c->n; i++) names[i] = c->names[i];
    qsort(names, c->n, sizeof *names, cmp_cstr);
    for (size_t i = 0; i < c->n; i++) {
        int k = dlp_strmap_get(&c->map, names[i], strlen(names[i]));
        if (!cJSON_AddNumberToObject(o, names[i], (double)c->counts[k]))
            x->oom = true;
    }
    free(names);
    return o;
}

typedef struct {
    double *v;
    size_t n, cap;
} dlist;

static void dl_push(ctx *x, dlist *l, double v) {
    if (!isfinite(v)) return;
    if (!dlp_grow((void **)&l->v, &l->cap, l->n + 1, sizeof *l->v)) {
        x->oom = true;
        return;
    }
    l->v[l->n++] = v;
}

static cJSON *summary_json(ctx *x, dlist *l) {
    cJSON *o = cJSON_CreateObject();
    if (!o) {
        x->oom = true;
        return NULL;
    }
    if (l->n) qsort(l->v, l->n, sizeof *l->v, dlp_cmp_double);
    cJSON_AddNumberToObject(o, "n", (double)l->n);
    cJSON_AddNumberToObject(o, "min", l->n ? l->v[0] : NAN);
    cJSON_AddNumberToObject(o, "median", dlp_quantile_sorted(l->v, l->n, 0.5));
    cJSON_AddNumberToObject(o, "max", l->n ? l->v[l->n - 1] : NAN);
    return o;
}

/* ---- key maps ---------------------------------------------------------- */

typedef struct {
    dlp_strmap map;            /* key -> slot */
    int64_t *a, *b;            /* per slot: rep-0 row and rep-1 row (-1) */
    size_t n, cap, cap2;
} keymap;

/* Returns the slot of key (created with a = b = -1), or -1 on OOM. */
static int key_slot(ctx *x, keymap *m, const char *key) {
    size_t len = strlen(key);
    int i = dlp_strmap_get(&m->map, key, len);
    if (i >= 0) return i;
    char *k = dlp_arena_strndup(&x->arena, key, len);
    if (!k || m->n >= (size_t)INT32_MAX ||
        !dlp_grow((void **)&m->a, &m->cap, m->n + 1, sizeof *m->a) ||
        !dlp_grow((void **)&m->b, &m->cap2, m->n + 1, sizeof *m->b) ||
        !dlp_strmap_put(&m->map, k, len, (int)m->n)) {
        x->oom = true;
        return -1;
    }
    m->a[m->n] = m->b[m->n] = -1;
    return (int)m->n++;
}

static void keymap_free(keymap *m) {
    dlp_strmap_free(&m->map);
    free(m->a);
    free(m->b);
    memset(m, 0, sizeof *m);
}

/* ---- label rows as one shape ------------------------------------------- */

typedef struct {
    const dlp_label_common *c;
    const char *runtime, *precision;
    int64_t batch, seq, height, width;
    double t, t10, t90;           /* latency or step time, ms */
    double mem, mem_res, nvml, energy, power, tput;
    double host_us;               /* inference and training, else NAN */
} lview;

typedef enum { K_INF, K_TRN, K_LLM } kind;

static const char *const KIND_NAME[] = {"inference", "training", "llm"};
static const char *const TIME_NAME[] = {"latency_ms", "step_ms", "latency_ms"};
static const char *const ENERGY_NAME[] = {"energy_j", "energy_j",
                                          "energy_per_sample_j"};

static size_t kind_rows(const dlp_dataset *ds, kind k) {
    return k == K_INF ? ds->ninf : k == K_TRN ? ds->ntrn : ds->nllm;
}

static void view(const dlp_dataset *ds, kind k, size_t i, lview *v) {
    memset(v, 0, sizeof *v);
    v->t10 = v->t90 = v->mem_res = v->nvml = v->tput = v->host_us = NAN;
    if (k == K_INF) {
        const dlp_inference_row *r = &ds->inf[i];
        v->c = &r->c;
        v->runtime = r->runtime;
        v->precision = r->precision;
        v->batch = r->batch, v->seq = r->seq;
        v->height = r->height, v->width = r->width;
        v->t = r->latency_ms, v->t10 = r->latency_p10_ms;
        v->t90 = r->latency_p90_ms;
        v->mem = r->memory_mib, v->mem_res = r->mem_reserved_mib;
        v->nvml = r->nvml_used_mib;
        v->energy = r->energy_j, v->power = r->power_w;
        v->host_us = r->host_us;
    } else if (k == K_TRN) {
        const dlp_training_row *r = &ds->trn[i];
        v->c = &r->c;
        v->runtime = "train";
        v->precision = r->precision;
        v->batch = r->batch;
        v->height = r->height, v->width = r->width;
        v->t = r->step_ms, v->t10 = r->step_p10_ms, v->t90 = r->step_p90_ms;
        v->mem = r->memory_mib, v->mem_res = r->mem_reserved_mib;
        v->energy = r->energy_j, v->power = r->power_w;
        v->host_us = r->host_us;
    } else {
        const dlp_llm_row *r = &ds->llm[i];
        v->c = &r->c;
        v->runtime = r->runtime;
        v->precision = r->precision;
        v->batch = r->batch, v->seq = r->seq;
        v->t = r->latency_ms;
        v->mem = r->memory_mib;
        v->energy = r->energy_per_sample_j, v->power = r->power_w;
        v->tput = r->throughput_samples_s;
    }
}

/* Card memory (MiB) for range checks: the device table, else the batch's
 * env.json; NAN when unknown. */
static double card_mib(ctx *x, const dlp_label_common *c) {
    const dlp_device *d = dlp_device_lookup(c->device);
    if (d) return d->mem_mib;
    for (size_t i = 0; i < x->ds->nbatches; i++)
        if (!strcmp(x->ds->batches[i].batch_id, c->batch_id) &&
            isfinite(x->ds->batches[i].memory_mib))
            return x->ds->batches[i].memory_mib;
    return NAN;
}

/* Checks shared by label and kernel rows. */
static void check_common(ctx *x, const dlp_label_common *c,
                         counter *unknown_dev) {
    const char *f = c->file;
    long long ln = (long long)c->line;
    if (!c->protocol[0])
        ERR(x, "%s:%lld: empty protocol", f, ln);
    else if (strcmp(c->protocol, "p1") != 0)
        WARN(x, "%s:%lld: unknown protocol '%s'", f, ln, c->protocol);
    if (c->rep != 0 && c->rep != 1)
        ERR(x, "%s:%lld: rep %d is not 0 or 1", f, ln, c->rep);
    if (strcmp(c->status, "ok") != 0 && strcmp(c->status, "flagged") != 0)
        ERR(x, "%s:%lld: status '%s' is not ok or flagged", f, ln, c->status);
    if (!c->hash[0])
        ERR(x, "%s:%lld: empty hash", f, ln);
    else if (!dlp_dataset_find_graph(x->ds, c->hash))
        ERR(x, "%s:%lld: hash %s is not in graphs/index.csv", f, ln, c->hash);
    if (!c->device[0])
        ERR(x, "%s:%lld: empty device", f, ln);
    else if (!dlp_device_lookup(c->device) &&
             dlp_strmap_get(&unknown_dev->map, c->device,
                            strlen(c->device)) < 0) {
        counter_add(x, unknown_dev, c->device, 1);
        WARN(x, "%s:%lld: device '%s' is not in the device database", f, ln,
             c->device);
    }
    /* The device of the row should be the one env.json names. */
    for (size_t i = 0; i < x->ds->nbatches; i++) {
        const dlp_batch_env *b = &x->ds->batches[i];
        if (!b->device || strcmp(b->batch_id, c->batch_id) != 0) continue;
        if (strcmp(b->device, c->device) != 0) {
            char key[300];
            snprintf(key, sizeof key, "%s|%s", c->batch_id, c->device);
            if (dlp_strmap_get(&unknown_dev->map, key, strlen(key)) < 0) {
                const char *k = dlp_arena_strdup(&x->arena, key);
                if (k) counter_add(x, unknown_dev, k, 0);
                WARN(x, "%s:%lld: device %s, but %s says %s", f, ln, c->device,
                     b->path, b->device);
            }
        }
        break;
    }
    /* A row of batches/<id>/ should carry batch_id <id>. */
    char want[512];
    snprintf(want, sizeof want, "/batches/%s/", c->batch_id);
    if (!strstr(f, want))
        WARN(x, "%s:%lld: batch_id '%s' differs from its folder", f, ln,
             c->batch_id);
}

static void range(ctx *x, const lview *v, const char *col, double val,
                  double lo, double hi, bool required, bool lo_open) {
    const char *f = v->c->file;
    long long ln = (long long)v->c->line;
    if (!isfinite(val)) {
        if (required) ERR(x, "%s:%lld: %s is empty", f, ln, col);
        return;
    }
    bool bad = lo_open ? !(val > lo) : !(val >= lo);
    if (bad || (isfinite(hi) && !(val < hi)))
        ERR(x, "%s:%lld: %s = %g outside (%g, %g)", f, ln, col, val, lo, hi);
}

static void check_units(ctx *x, kind k, const lview *v) {
    const char *tn = TIME_NAME[k];
    range(x, v, tn, v->t, 0, MAX_TIME_MS, true, true);
    range(x, v, k == K_TRN ? "step_p10_ms" : "latency_p10_ms", v->t10, 0,
          MAX_TIME_MS, false, true);
    range(x, v, k == K_TRN ? "step_p90_ms" : "latency_p90_ms", v->t90, 0,
          MAX_TIME_MS, false, true);
    double card = card_mib(x, v->c);
    double hi = isfinite(card) ? card : INFINITY;
    /* empty where a defective measurement was withdrawn (data/FORMAT.md) */
    range(x, v, "memory_mib", v->mem, 0, hi, false, true);
    range(x, v, "mem_reserved_mib", v->mem_res, 0, hi, false, true);
    range(x, v, "nvml_used_mib", v->nvml, 0, hi, false, true);
    range(x, v, ENERGY_NAME[k], v->energy, 0, INFINITY, false, true);
    range(x, v, "power_w", v->power, 10, 1500.0000001, false, false);
    range(x, v, "throughput_samples_s", v->tput, 0, INFINITY, false, true);
    range(x, v, "host_us", v->host_us, 0, 100000, false, true);
    const char *f = v->c->file;
    long long ln = (long long)v->c->line;
    if (v->batch < 1) ERR(x, "%s:%lld: batch %lld < 1", f, ln, (long long)v->batch);
    if (v->seq < 0 || v->height < 0 || v->width < 0)
        ERR(x, "%s:%lld: negative seq/height/width", f, ln);
    if (k != K_TRN && strcmp(v->runtime, "eager") && strcmp(v->runtime, "graph"))
        WARN(x, "%s:%lld: unknown runtime '%s'", f, ln, v->runtime);
    if (strcmp(v->precision, "fp32") && strcmp(v->precision, "fp16") &&
        strcmp(v->precision, "bf16"))
        WARN(x, "%s:%lld: unknown precision '%s'", f, ln, v->precision);
}

/* Per-kind statistics accumulators. */
typedef struct {
    counter devices, runtimes, precisions, families, graphs;
    dlist time, mem, energy;
    counter noise_rt;          /* runtime -> index into noise[] */
    dlist noise[8][3];         /* per runtime (max 8) x metric */
} kstats;

static void kstats_free(kstats *s) {
    counter_free(&s->devices);
    counter_free(&s->runtimes);
    counter_free(&s->precisions);
    counter_free(&s->families);
    counter_free(&s->graphs);
    counter_free(&s->noise_rt);
    free(s->time.v);
    free(s->mem.v);
    free(s->energy.v);
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 3; j++) free(s->noise[i][j].v);
}

static double rel(double a, double b) {
    return isfinite(a) && isfinite(b) && a > 0 ? fabs(a - b) / a : NAN;
}

static cJSON *check_kind(ctx *x, kind k, counter *all_devices,
                         counter *labeled_graphs, counter *unknown_dev,
                         size_t *n_configs) {
    const dlp_dataset *ds = x->ds;
    size_t n = kind_rows(ds, k);
    keymap rows = {0}, cfgs = {0};
    kstats st;
    memset(&st, 0, sizeof st);
    char key[1024];
    lview v, w;
    for (size_t i = 0; i < n && !x->oom; i++) {
        view(ds, k, i, &v);
        check_common(x, v.c, unknown_dev);
        check_units(x, k, &v);
        counter_add(x, all_devices, v.c->device, 1);
        counter_add(x, labeled_graphs, v.c->hash, 1);
        counter_add(x, &st.graphs, v.c->hash, 1);
        dl_push(x, &st.time, v.t);
        dl_push(x, &st.mem, v.mem);
        dl_push(x, &st.energy, v.energy);
        snprintf(key, sizeof key, "%s|%s|%s|%s|%lld|%lld|%lld|%lld",
                 v.c->hash, v.c->device, v.runtime, v.precision,
                 (long long)v.batch, (long long)v.seq, (long long)v.height,
                 (long long)v.width);
        int slot = key_slot(x, &cfgs, key);
        size_t klen = strlen(key);
        snprintf(key + klen, sizeof key - klen, "|rep=%d", v.c->rep);
        int rslot = key_slot(x, &rows, key);
        if (slot < 0 || rslot < 0) break;
        if (rows.a[rslot] >= 0) {
            lview p;
            view(ds, k, (size_t)rows.a[rslot], &p);
            ERR(x, "%s:%lld: duplicate key %s (first at %s:%lld)", v.c->file,
                (long long)v.c->line, key, p.c->file, (long long)p.c->line);
            continue;
        }
        rows.a[rslot] = (int64_t)i;
        if (cfgs.a[slot] < 0 && cfgs.b[slot] < 0) {
            const dlp_graph_info *g = dlp_dataset_find_graph(ds, v.c->hash);
            counter_add(x, &st.devices, v.c->device, 1);
            counter_add(x, &st.runtimes, v.runtime, 1);
            counter_add(x, &st.precisions, v.precision, 1);
            counter_add(x, &st.families, g ? g->family : "(not in index)", 1);
        }
        if (v.c->rep == 0) cfgs.a[slot] = (int64_t)i;
        if (v.c->rep == 1) cfgs.b[slot] = (int64_t)i;
    }
    /* pairs: noise floor and flagged status */
    size_t pairs = 0, flagged = 0;
    for (size_t s = 0; s < cfgs.n && !x->oom; s++) {
        int64_t a = cfgs.a[s], b = cfgs.b[s];
        bool fa = false, fb = false;
        if (a >= 0) view(ds, k, (size_t)a, &v), fa = v.c->flagged;
        if (b >= 0) view(ds, k, (size_t)b, &w), fb = w.c->flagged;
        const lview *any = a >= 0 ? &v : &w;
        if (a < 0 && b < 0) continue;
        if (fa || fb) {
            flagged++;
            WARN(x, "%s:%lld: flagged pair (%s %s %s %s batch %lld)",
                 any->c->file, (long long)any->c->line, any->c->hash,
                 any->c->device, any->runtime, any->precision,
                 (long long)any->batch);
        }
        if (a < 0 || b < 0) continue;
        pairs++;
        if (fa != fb)
            WARN(x, "%s:%lld: status differs between rep 0 and rep 1",
                 v.c->file, (long long)v.c->line);
        double rt = rel(v.t, w.t);
        if (k == K_INF && !strcmp(v.runtime, "graph") && !fa && !fb &&
            rt > 0.05)
            WARN(x, "%s:%lld: graph latency reps differ by %.1f%% but the "
                 "pair is not flagged", v.c->file, (long long)v.c->line,
                 rt * 100);
        int ri = dlp_strmap_get(&st.noise_rt.map, v.runtime, strlen(v.runtime));
        if (ri < 0) {
            if (st.noise_rt.n >= 8) continue;
            ri = (int)st.noise_rt.n;
            counter_add(x, &st.noise_rt, v.runtime, 0);
        }
        dl_push(x, &st.noise[ri][0], rt);
        dl_push(x, &st.noise[ri][1], rel(v.mem, w.mem));
        dl_push(x, &st.noise[ri][2], rel(v.energy, w.energy));
    }
    *n_configs = cfgs.n;
    cJSON *o = cJSON_CreateObject();
    if (!o) x->oom = true;
    if (o && !x->oom) {
        cJSON_AddNumberToObject(o, "rows", (double)n);
        cJSON_AddNumberToObject(o, "configs", (double)cfgs.n);
        cJSON_AddNumberToObject(o, "graphs", (double)st.graphs.n);
        cJSON_AddNumberToObject(o, "pairs", (double)pairs);
        cJSON_AddNumberToObject(o, "flagged_pairs", (double)flagged);
        cJSON_AddItemToObject(o, "devices", counter_json(x, &st.devices));
        cJSON_AddItemToObject(o, "runtimes", counter_json(x, &st.runtimes));
        cJSON_AddItemToObject(o, "precisions", counter_json(x, &st.precisions));
        cJSON_AddItemToObject(o, "families", counter_json(x, &st.families));
        cJSON_AddItemToObject(o, TIME_NAME[k], summary_json(x, &st.time));
        cJSON_AddItemToObject(o, "memory_mib", summary_json(x, &st.mem));
        cJSON_AddItemToObject(o, ENERGY_NAME[k], summary_json(x, &st.energy));
        cJSON *noise = cJSON_AddObjectToObject(o, "noise");
        const char *mnames[3] = {TIME_NAME[k], "memory_mib", ENERGY_NAME[k]};
        for (size_t r = 0; noise && r < st.noise_rt.n; r++) {
            cJSON *rt = cJSON_AddObjectToObject(noise, st.noise_rt.names[r]);
            for (int m = 0; rt && m < 3; m++) {
                dlist *l = &st.noise[r][m];
                if (l->n) qsort(l->v, l->n, sizeof *l->v, dlp_cmp_double);
                cJSON *mo = cJSON_AddObjectToObject(rt, mnames[m]);
                if (!mo) break;
                cJSON_AddNumberToObject(mo, "pairs", (double)l->n);
                cJSON_AddNumberToObject(mo, "median", dlp_quantile_sorted(l->v, l->n, 0.5));
                cJSON_AddNumberToObject(mo, "p90", dlp_quantile_sorted(l->v, l->n, 0.9));
                /* the mean too: a label (the mean of two reps) sits half
                 * the mean gap from either rep, a floor for any MAPE */
                double sum = 0;
                for (size_t i = 0; i < l->n; i++) sum += l->v[i];
                cJSON_AddNumberToObject(mo, "mean", l->n ? sum / (double)l->n : NAN);
            }
        }
    }
    kstats_free(&st);
    keymap_free(&rows);
    keymap_free(&cfgs);
    return o;
}

/* ---- kernels ----------------------------------------------------------- */

static cJSON *check_kernels(ctx *x, counter *all_devices, counter *unknown_dev,
                            size_t *n_configs) {
    const dlp_dataset *ds = x->ds;
    keymap rows = {0}, cfgs = {0};
    counter modes = {0}, graphs = {0};
    size_t mapped = 0;
    char key[1024];
    for (size_t i = 0; i < ds->nker && !x->oom; i++) {
        const dlp_kernel_row *r = &ds->ker[i];
        const char *f = r->c.file;
        long long ln = (long long)r->c.line;
        check_common(x, &r->c, unknown_dev);
        counter_add(x, all_devices, r->c.device, 1);
        counter_add(x, &graphs, r->c.hash, 1);
        if (!isfinite(r->duration_us) || r->duration_us < 0)
            ERR(x, "%s:%lld: duration_us is empty or negative", f, ln);
        if (r->kernel_idx < 0) ERR(x, "%s:%lld: negative kernel_idx", f, ln);
        if (r->batch < 1) ERR(x, "%s:%lld: batch < 1", f, ln);
        if (r->sms < 0) ERR(x, "%s:%lld: negative sms", f, ln);
        if (strcmp(r->mode, "eager") && strcmp(r->mode, "compiled"))
            WARN(x, "%s:%lld: unknown mode '%s'", f, ln, r->mode);
        if (r->nodes[0]) mapped++;
        snprintf(key, sizeof key, "%s|%s|%s|%lld|%s|%lld|%lld|%lld|%lld",
                 r->c.hash, r->c.device, r->mode, (long long)r->sms,
                 r->precision, (long long)r->batch, (long long)r->seq,
                 (long long)r->height, (long long)r->width);
        int slot = key_slot(x, &cfgs, key);
        if (slot >= 0 && cfgs.a[slot] < 0) {
            cfgs.a[slot] = (int64_t)i;
            counter_add(x, &modes, r->mode, 1);
        }
        size_t klen = strlen(key);
        snprintf(key + klen, sizeof key - klen, "|rep=%d|k=%lld", r->c.rep,
                 (long long)r->kernel_idx);
        int rslot = key_slot(x, &rows, key);
        if (rslot < 0) break;
        if (rows.a[rslot] >= 0) {
            const dlp_kernel_row *p = &ds->ker[rows.a[rslot]];
            ERR(x, "%s:%lld: duplicate kernel key %s (first at %s:%lld)", f,
                ln, key, p->c.file, (long long)p->c.line);
        } else {
            rows.a[rslot] = (int64_t)i;
        }
    }
    *n_configs = cfgs.n;
    cJSON *o = cJSON_CreateObject();
    if (o) {
        cJSON_AddNumberToObject(o, "rows", (double)ds->nker);
        cJSON_AddNumberToObject(o, "configs", (double)cfgs.n);
        cJSON_AddNumberToObject(o, "graphs", (double)graphs.n);
        cJSON_AddNumberToObject(o, "mapped_rows", (double)mapped);
        cJSON_AddItemToObject(o, "modes", counter_json(x, &modes));
    } else {
        x->oom = true;
    }
    counter_free(&modes);
    counter_free(&graphs);
    keymap_free(&rows);
    keymap_free(&cfgs);
    return o;
}

/* ---- index and packs --------------------------------------------------- */

typedef struct {
    ctx *x;
    const char *pack, *path;
    dlp_strmap seen;           /* hashes found in this pack */
} pack_ctx;

static int pack_visit(const char *name, bool is_graph, uint64_t size,
                      const void *bytes, void *user) {
    (void)bytes;
    pack_ctx *p = user;
    ctx *x = p->x;
    if (!is_graph) {
        WARN(x, "%s: member '%s' is not a <hash>.onnx file", p->path, name);
        return 0;
    }
    const dlp_graph_info *g = dlp_dataset_find_graph(x->ds, name);
    if (!g) {
        WARN(x, "%s: member %s.onnx is not in graphs/index.csv", p->path, name);
        return 0;
    }
    if (strcmp(g->pack, p->pack) != 0) {
        WARN(x, "%s: holds %s, which the index places in pack '%s'", p->path,
             name, g->pack);
        return 0;
    }
    if (dlp_strmap_get(&p->seen, g->hash, strlen(g->hash)) >= 0) {
        WARN(x, "%s: %s.onnx appears twice", p->path, name);
        return 0;
    }
    if (!dlp_strmap_put(&p->seen, g->hash, strlen(g->hash), 1)) x->oom = true;
    if (g->file_bytes > 0 && (uint64_t)g->file_bytes != size)
        ERR(x, "%s: %s.onnx is %llu bytes, index says file_bytes %lld",
            p->path, name, (unsigned long long)size, (long long)g->file_bytes);
    char h[17];
    dlp_sha256_hex16(bytes, (size_t)size, h);
    if (strcmp(h, name) != 0)
        ERR(x, "%s: %s.onnx has content hash %s (corrupt or renamed)", p->path,
            name, h);
    return x->oom;
}

static bool is_hex16(const char *h) {
    if (strlen(h) != 16) return false;
    for (int i = 0; i < 16; i++)
        if (!((h[i] >= '0' && h[i] <= '9') || (h[i] >= 'a' && h[i] <= 'f')))
            return false;
    return true;
}

static void check_index(ctx *x, cJSON *report) {
    const dlp_dataset *ds = x->ds;
    char ipath[4096];
    snprintf(ipath, sizeof ipath, "%s/graphs/index.csv", ds->dir);
    dlp_strmap seen;
    if (!dlp_strmap_init(&seen, ds->ngraphs)) {
        x->oom = true;
        return;
    }
    counter families = {0};
    for (size_t i = 0; i < ds->ngraphs; i++) {
        const dlp_graph_info *g = &ds->graphs[i];
        long long ln = (long long)i + 1; /* data row number */
        if (!is_hex16(g->hash))
            ERR(x, "%s: row %lld: hash '%s' is not 16 lowercase hex digits",
                ipath, ln, g->hash);
        if (dlp_strmap_get(&seen, g->hash, strlen(g->hash)) >= 0)
            ERR(x, "%s: row %lld: duplicate hash %s", ipath, ln, g->hash);
        else if (!dlp_strmap_put(&seen, g->hash, strlen(g->hash), 1))
            x->oom = true;
        if (!g->pack[0]) ERR(x, "%s: row %lld: empty pack", ipath, ln);
        if (g->file_bytes <= 0 || g->nodes < 0 || g->params < 0)
            ERR(x, "%s: row %lld: nodes/file_bytes/params out of range", ipath,
                ln);
        counter_add(x, &families, g->family, 1);
    }
    dlp_strmap_free(&seen);
    cJSON_AddItemToObject(report, "graph_families", counter_json(x, &families));
    counter_free(&families);

    for (size_t p = 0; p < ds->npacks && !x->oom; p++) {
        char path[4096];
        if (!dlp_dataset_pack_path(ds, ds->packs[p], path, sizeof path)) {
            ERR(x, "pack path too long: %s", ds->packs[p]);
            continue;
        }
        pack_ctx pc = {x, ds->packs[p], path, {0}};
        if (!dlp_strmap_init(&pc.seen, 64)) {
            x->oom = true;
            break;
        }
        dlp_error e;
        dlp_status s = dlp_dataset_walk_pack(path, true, pack_visit, &pc, &e);
        if (s) {
            ERR(x, "%s", e.msg);
        } else {
            size_t missing = 0;
            for (size_t i = 0; i < ds->ngraphs; i++) {
                const dlp_graph_info *g = &ds->graphs[i];
                if (strcmp(g->pack, ds->packs[p]) != 0) continue;
                if (dlp_strmap_get(&pc.seen, g->hash, strlen(g->hash)) >= 0)
                    continue;
                if (++missing <= 20)
                    ERR(x, "graph %s (%s) is missing from %s", g->hash,
                        g->model, path);
            }
            if (missing > 20)
                ERR(x, "%s: %zu more graphs of the index are missing", path,
                    missing - 20);
        }
        dlp_strmap_free(&pc.seen);
    }
}

/* ---- the report -------------------------------------------------------- */

static cJSON *sorted_names(ctx *x, const counter *c) {
    cJSON *a = cJSON_CreateArray();
    const char **names = malloc((c->n ? c->n : 1) * sizeof *names);
    if (!a || !names) {
        x->oom = true;
        free(names);
        return a;
    }
    for (size_t i = 0; i < c->n; i++) names[i] = c->names[i];
    qsort(names, c->n, sizeof *names, cmp_cstr);
    for (size_t i = 0; i < c->n; i++) {
        cJSON *s = cJSON_CreateString(names[i]);
        if (!s || !cJSON_AddItemToArray(a, s)) x->oom = true;
    }
    free(names);
    return a;
}

dlp_status dlp_dataset_check(const dlp_dataset *ds, char **json,
                             int *n_errors, int *n_warnings, dlp_error *err) {
    if (!ds || !json)
        return dlp_fail(err, DLP_ERR_ARG, "dlp_dataset_check: NULL argument");
    *json = NULL;
    ctx x;
    memset(&x, 0, sizeof x);
    x.ds = ds;
    x.errors = cJSON_CreateArray();
    x.warnings = cJSON_CreateArray();
    cJSON *r = cJSON_CreateObject();
    counter devices = {0}, labeled = {0}, unknown_dev = {0}, stages = {0};
    if (!x.errors || !x.warnings || !r) x.oom = true;
    if (!x.oom) {
        cJSON_AddStringToObject(r, "dir", ds->dir);
        check_index(&x, r);
        size_t cfg[3], kcfg = 0;
        cJSON *kinds[3];
        for (int k = 0; k < 3; k++)
            kinds[k] = check_kind(&x, (kind)k, &devices, &labeled,
                                  &unknown_dev, &cfg[k]);
        if (kinds[K_INF] && !x.oom &&
            (!dlp_dataset_eager_host(ds, kinds[K_INF]) ||
             !dlp_dataset_fresh_probes(ds, kinds[K_INF])))
            x.oom = true;
        cJSON *ker = check_kernels(&x, &devices, &unknown_dev, &kcfg);
        for (size_t i = 0; i < ds->nfail; i++) {
            const dlp_failure_row *fr = &ds->fail[i];
            counter_add(&x, &stages, fr->stage, 1);
            if (fr->hash[0] && !dlp_dataset_find_graph(ds, fr->hash))
                WARN(&x, "%s:%lld: failure hash '%s' is not in graphs/index.csv "
                     "(FORMAT.md: a graph hash, or empty when export failed)",
                     fr->file, (long long)fr->line, fr->hash);
        }
        for (size_t i = 0; i < ds->nbatches; i++)
            if (!ds->batches[i].path)
                WARN(&x, "%s/batches/%s: no env.json", ds->dir,
                     ds->batches[i].batch_id);
        cJSON_AddBoolToObject(r, "valid", x.nerr == 0);
        cJSON_AddNumberToObject(r, "n_errors", x.nerr);
        cJSON_AddNumberToObject(r, "n_warnings", x.nwarn);
        cJSON_AddNumberToObject(r, "graphs", (double)ds->ngraphs);
        cJSON_AddNumberToObject(r, "packs", (double)ds->npacks);
        cJSON_AddNumberToObject(r, "batches", (double)ds->nbatches);
        cJSON_AddNumberToObject(r, "labeled_graphs", (double)labeled.n);
        cJSON_AddNumberToObject(r, "labeled_inference", (double)cfg[K_INF]);
        cJSON_AddNumberToObject(r, "labeled_training", (double)cfg[K_TRN]);
        /* rows whose memory_mib the loader withdrew (dataset.c) */
        cJSON_AddNumberToObject(r, "training_memory_withdrawn",
                                (double)ds->ntrn_mem_withdrawn);
        cJSON_AddNumberToObject(r, "labeled_llm", (double)cfg[K_LLM]);
        cJSON_AddNumberToObject(r, "kernel_traces", (double)kcfg);
        cJSON_AddNumberToObject(r, "failures", (double)ds->nfail);
        cJSON_AddItemToObject(r, "failure_stages", counter_json(&x, &stages));
        cJSON_AddItemToObject(r, "devices", sorted_names(&x, &devices));
        for (int k = 0; k < 3; k++)
            cJSON_AddItemToObject(r, KIND_NAME[k], kinds[k]);
        cJSON_AddItemToObject(r, "kernels", ker);
        cJSON_AddItemToObject(r, "errors", x.errors);
        cJSON_AddItemToObject(r, "warnings", x.warnings);
        x.errors = x.warnings = NULL;
    }
    counter_free(&devices);
    counter_free(&labeled);
    counter_free(&unknown_dev);
    counter_free(&stages);
    dlp_status s = DLP_OK;
    if (!x.oom) {
        *json = cJSON_Print(r);
        if (!*json) x.oom = true;
    }
    if (x.oom) s = dlp_fail(err, DLP_ERR_NOMEM, "dlp_dataset_check: out of memory");
    if (n_errors) *n_errors = x.nerr;
    if (n_warnings) *n_warnings = x.nwarn;
    cJSON_Delete(r);
    cJSON_Delete(x.errors);
    cJSON_Delete(x.warnings);
    dlp_arena_free(&x.arena);
    return s;
}
