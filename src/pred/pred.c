/* pred.c — the generic half of the predictor interface (pred.h): target,
 * mode, precision and runtime names; prediction configs and results; the
 * "pred/..." header every model file carries; opaque blobs; loading a
 * predictor of any kind through its vtable. Predictor sets are in
 * pred_set.c, the kinds in pred_<kind>.c. */
#include "pred.h"
#include "../feat/feat.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- names -------------------------------------------------------------- */
static const struct {
    const char *col, *unit;
    dlp_pred_mode mode;
} TARGETS[DLP_T_COUNT] = {
    {"latency_ms", "ms", DLP_MODE_INFERENCE},
    {"memory_mib", "MiB", DLP_MODE_INFERENCE},
    {"energy_j", "J", DLP_MODE_INFERENCE},
    {"power_w", "W", DLP_MODE_INFERENCE},
    {"step_ms", "ms", DLP_MODE_TRAINING},
    {"memory_mib", "MiB", DLP_MODE_TRAINING},
    {"power_w", "W", DLP_MODE_TRAINING},
    {"throughput_samples_s", "samples/s", DLP_MODE_LLM},
    {"memory_mib", "MiB", DLP_MODE_LLM},
    {"energy_per_sample_j", "J", DLP_MODE_LLM},
};
static const char *const MODES[DLP_MODE_COUNT] = {"inference", "training",
                                                  "llm"};
static const char *const FULL[DLP_T_COUNT] = {
    "inference.latency_ms", "inference.memory_mib", "inference.energy_j",
    "inference.power_w",    "training.step_ms",     "training.memory_mib",
    "training.power_w",     "llm.throughput_samples_s", "llm.memory_mib",
    "llm.energy_per_sample_j"};
static const char *const PRECS[DLP_PREC_COUNT] = {"fp32", "fp16", "bf16"};
static const char *const RTS[DLP_RT_COUNT] = {"eager", "graph"};

const char *dlp_target_name(dlp_target t) {
    return (unsigned)t < DLP_T_COUNT ? FULL[t] : NULL;
}
const char *dlp_target_column(dlp_target t) {
    return (unsigned)t < DLP_T_COUNT ? TARGETS[t].col : NULL;
}
const char *dlp_target_unit(dlp_target t) {
    return (unsigned)t < DLP_T_COUNT ? TARGETS[t].unit : NULL;
}
dlp_target dlp_mode_main_target(dlp_pred_mode m) {
    return m == DLP_MODE_INFERENCE ? DLP_T_INF_LATENCY_MS
           : m == DLP_MODE_TRAINING ? DLP_T_TRAIN_STEP_MS
                                    : DLP_T_LLM_THROUGHPUT;
}

dlp_pred_mode dlp_target_mode(dlp_target t) {
    return (unsigned)t < DLP_T_COUNT ? TARGETS[t].mode : DLP_MODE_INFERENCE;
}
bool dlp_target_is_memory(dlp_target t) {
    return t == DLP_T_INF_MEMORY_MIB || t == DLP_T_TRAIN_MEMORY_MIB ||
           t == DLP_T_LLM_MEMORY_MIB;
}
const char *dlp_mode_name(dlp_pred_mode m) {
    return (unsigned)m < DLP_MODE_COUNT ? MODES[m] : NULL;
}
const char *dlp_precision_name(dlp_precision p) {
    return (unsigned)p < DLP_PREC_COUNT ? PRECS[p] : NULL;
}
const char *dlp_runtime_name(dlp_runtime r) {
    return (unsigned)r < DLP_RT_COUNT ? RTS[r] : NULL;
}

dlp_status dlp_target_parse(const char *s, dlp_target *out, dlp_error *err) {
    if (!s) return dlp_fail(err, DLP_ERR_ARG, "no target given");
    for (int t = 0; t < DLP_T_COUNT; t++)
        if (!strcasecmp(s, FULL[t])) { *out = (dlp_target)t; return DLP_OK; }
    int hit = -1, n = 0;
    for (int t = 0; t < DLP_T_COUNT; t++)
        if (!strcasecmp(s, TARGETS[t].col)) { if (hit < 0) hit = t; n++; }
    if (n == 1) { *out = (dlp_target)hit; return DLP_OK; }
    return dlp_fail(err, DLP_ERR_NOT_FOUND,
                    "unknown target '%.60s'%s; known: inference.latency_ms, "
                    "inference.memory_mib, inference.energy_j, "
                    "inference.power_w, training.step_ms, training.memory_mib, "
                    "training.power_w, llm.throughput_samples_s, "
                    "llm.memory_mib, llm.energy_per_sample_j", s,
                    n > 1 ? " (ambiguous: prefix it with the mode)" : "");
}

dlp_status dlp_mode_parse(const char *s, dlp_pred_mode *out, dlp_error *err) {
    for (int m = 0; s && m < DLP_MODE_COUNT; m++)
        if (!strcasecmp(s, MODES[m])) { *out = (dlp_pred_mode)m; return DLP_OK; }
    return dlp_fail(err, DLP_ERR_ARG,
                    "unknown mode '%.40s'; known: inference, training, llm",
                    s ? s : "");
}

dlp_status dlp_precision_parse(const char *s, dlp_precision *out,
                               dlp_error *err) {
    for (int p = 0; s && p < DLP_PREC_COUNT; p++)
        if (!strcasecmp(s, PRECS[p])) { *out = (dlp_precision)p; return DLP_OK; }
    return dlp_fail(err, DLP_ERR_ARG,
                    "unknown precision '%.40s'; known: fp32, fp16, bf16",
                    s ? s : "");
}

dlp_status dlp_runtime_parse(const char *s, dlp_runtime *out, dlp_error *err) {
    for (int r = 0; s && r < DLP_RT_COUNT; r++)
        if (!strcasecmp(s, RTS[r])) { *out = (dlp_runtime)r; return DLP_OK; }
    return dlp_fail(err, DLP_ERR_ARG,
                    "unknown runtime '%.40s'; known: eager, graph", s ? s : "");
}

/* ---- configs and results ------------------------------------------------ */
void dlp_pred_config_init(dlp_pred_config *c) {
    memset(c, 0, sizeof *c);
    c->precision = DLP_PREC_FP32;
    c->runtime = DLP_RT_GRAPH;
    c->mode = DLP_MODE_INFERENCE;
    c->batch = 1;
}

#define DLP_PRED_MAX_BATCH 65536
#define DLP_PRED_MAX_SEQ (1 << 20)

dlp_status dlp_pred_config_check(const dlp_pred_config *c, dlp_error *err) {
    if (!c->device.name)
        return dlp_fail(err, DLP_ERR_ARG, "no device in the prediction config");
    if ((unsigned)c->mode >= DLP_MODE_COUNT)
        return dlp_fail(err, DLP_ERR_ARG, "bad mode %d", (int)c->mode);
    if ((unsigned)c->precision >= DLP_PREC_COUNT)
        return dlp_fail(err, DLP_ERR_ARG, "bad precision %d", (int)c->precision);
    if ((unsigned)c->runtime >= DLP_RT_COUNT)
        return dlp_fail(err, DLP_ERR_ARG, "bad runtime %d", (int)c->runtime);
    if (c->batch < 1 || c->batch > DLP_PRED_MAX_BATCH)
        return dlp_fail(err, DLP_ERR_ARG,
                        "batch %lld out of range (1..%d)", (long long)c->batch,
                        DLP_PRED_MAX_BATCH);
    if (c->seq < 0 || c->seq > DLP_PRED_MAX_SEQ)
        return dlp_fail(err, DLP_ERR_ARG, "sequence length %lld out of range "
                        "(0..%d)", (long long)c->seq, DLP_PRED_MAX_SEQ);
    if (c->height < 0 || c->width < 0 || c->height > 65536 || c->width > 65536)
        return dlp_fail(err, DLP_ERR_ARG, "input size %lldx%lld out of range",
                        (long long)c->height, (long long)c->width);
    if (!dlp_device_supports(&c->device, PRECS[c->precision]))
        return dlp_fail(err, DLP_ERR_UNSUPPORTED, "%s does not support %s",
                        c->device.name, PRECS[c->precision]);
    if (c->sms < 0 || c->sms > c->device.sm_count)
        return dlp_fail(err, DLP_ERR_ARG, "--sms %d out of range (1..%d on %s)",
                        c->sms, c->device.sm_count, c->device.name);
    if (c->has_mig && c->sms)
        return dlp_fail(err, DLP_ERR_ARG, "give an SM count or a MIG profile, "
                        "not both");
    if (c->has_mig) {
        bool found = false;
        for (int i = 0; i < c->device.n_mig; i++)
            if (c->device.mig && !strcmp(c->device.mig[i].name, c->mig.name))
                found = true;
        if (!found)
            return dlp_fail(err, DLP_ERR_NOT_FOUND, "%s has no MIG profile '%s'",
                            c->device.name, c->mig.name ? c->mig.name : "");
    }
    return DLP_OK;
}

void dlp_pred_result_init(dlp_pred_result *r) { memset(r, 0, sizeof *r); }

int dlp_pred_result_take(dlp_pred_result *out, const dlp_pred_result *r,
                         const bool take[DLP_T_COUNT]) {
    int n = 0;
    for (int u = 0; u < DLP_T_COUNT; u++)
        if (take[u] && r->v[u].valid) {
            out->v[u] = r->v[u];
            n++;
        }
    if (r->ood && !out->ood) {
        out->ood = true;
        memcpy(out->ood_reason, r->ood_reason, sizeof out->ood_reason);
    }
    out->extrapolated |= r->extrapolated;
    return n;
}

dlp_status dlp_pred_none_covers(const dlp_pred_input *in, dlp_error *err) {
    return dlp_fail(err, DLP_ERR_NOT_FOUND,
                    "no trained predictor covers %s at %s/%s",
                    dlp_mode_name(in->cfg->mode),
                    dlp_precision_name(in->cfg->precision),
                    dlp_runtime_name(in->cfg->runtime));
}

dlp_status dlp_pred_feat(const dlp_pred_input *in, dlp_feat_graph *local,
                         const dlp_feat_graph **out, dlp_pred_result *r,
                         dlp_error *err) {
    const dlp_feat_graph *fg = in->feat;
    if (!fg) {
        const dlp_pred_config *c = in->cfg;
        dlp_status st = dlp_feat_graph_build(local, in->graph, c->batch, c->seq,
                                             c->height, c->width, err);
        if (st) return st;
        fg = local;
    }
    if (fg->n_shape_conflicts)
        dlp_pred_result_flag(r, "%d node(s) cannot run at this binding: "
                             "their input shapes contradict them (a graph "
                             "exported at a fixed size, bound to another?)",
                             fg->n_shape_conflicts);
    else if (fg->n_unknown)
        dlp_pred_result_flag(r, "%d node(s) of op types the featurizer has "
                             "never seen (first: %s), mapped to 'other'",
                             fg->n_unknown, fg->unknown_op);
    else if (fg->n_uncosted * 10 > fg->n_nodes)
        dlp_pred_result_flag(r, "%d of %d nodes have unknown shapes or cost",
                             fg->n_uncosted, fg->n_nodes);
    *out = fg;
    return DLP_OK;
}

void dlp_pred_result_flag(dlp_pred_result *r, const char *fmt, ...) {
    if (r->ood) return;
    r->ood = true;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->ood_reason, sizeof r->ood_reason, fmt, ap);
    va_end(ap);
}

/* ---- the model-file header ---------------------------------------------- */
void dlp_pred_meta_init(dlp_pred_meta *m, const char *kind,
                        dlp_pred_mode mode) {
    memset(m, 0, sizeof *m);
    snprintf(m->kind, sizeof m->kind, "%s", kind ? kind : "");
    m->mode = mode;
    m->feat_schema = DLP_FEAT_SCHEMA;
    for (int t = 0; t < DLP_T_COUNT; t++) {
        m->val_error[t] = m->resid_lo[t] = m->resid_hi[t] = NAN;
        m->scale[t] = 1;
    }
}

void dlp_pred_meta_ranges_reset(dlp_pred_meta *m) {
    m->batch_min = m->seq_min = m->macs_min = INFINITY;
    m->batch_max = m->seq_max = m->macs_max = 0;
}

void dlp_pred_meta_ranges_add(dlp_pred_meta *m, const dlp_pred_config *c,
                              double macs) {
    double b = (double)c->batch, s = (double)c->seq;
    m->batch_min = fmin(m->batch_min, b);
    m->batch_max = fmax(m->batch_max, b);
    if (s > 0) m->seq_min = fmin(m->seq_min, s);
    m->seq_max = fmax(m->seq_max, s);
    m->macs_min = fmin(m->macs_min, macs);
    m->macs_max = fmax(m->macs_max, macs);
    m->data_precisions |= 1u << c->precision;
}

void dlp_pred_meta_ranges_done(dlp_pred_meta *m) {
    if (!isfinite(m->batch_min)) m->batch_min = 0;
    if (!isfinite(m->seq_min)) m->seq_min = 0;
    if (!isfinite(m->macs_min)) m->macs_min = 0;
}

#define META_NUM 6   /* batch/seq/macs ranges */

dlp_status dlp_pred_meta_write(const dlp_pred_meta *m, dlp_nn_file *f,
                               dlp_error *err) {
    int64_t ints[6] = {m->feat_schema, m->mode, m->targets, m->runtimes,
                       m->precisions, 1 /* header version */};
    nn_real per[3 * DLP_T_COUNT], rng[META_NUM] = {
        (nn_real)m->batch_min, (nn_real)m->batch_max, (nn_real)m->seq_min,
        (nn_real)m->seq_max, (nn_real)m->macs_min, (nn_real)m->macs_max};
    for (int t = 0; t < DLP_T_COUNT; t++) {
        per[t] = (nn_real)m->val_error[t];
        per[DLP_T_COUNT + t] = (nn_real)m->resid_lo[t];
        per[2 * DLP_T_COUNT + t] = (nn_real)m->resid_hi[t];
    }
    dlp_status st;
    if ((st = dlp_nn_file_add_str(f, "pred/kind", m->kind, err)) ||
        (st = dlp_nn_file_add_i64(f, "pred/header", ints, 6, err)) ||
        (st = dlp_nn_file_add_str(f, "pred/devices", m->devices, err)) ||
        (st = dlp_nn_file_add_f32(f, "pred/per_target", per, 3 * DLP_T_COUNT,
                                  err)) ||
        (st = dlp_nn_file_add_f32(f, "pred/ranges", rng, META_NUM, err)) ||
        (st = dlp_nn_file_add_str(f, "pred/info", m->info, err)))
        return st;
    if (m->data_precisions) {
        int64_t dp = m->data_precisions;
        if ((st = dlp_nn_file_add_i64(f, "pred/data_precisions", &dp, 1, err)))
            return st;
    }
    nn_real sc[DLP_T_COUNT];
    bool any = false;
    for (int t = 0; t < DLP_T_COUNT; t++) {
        sc[t] = (nn_real)m->scale[t];
        any |= m->scale[t] != 1;
    }
    if (any && (st = dlp_nn_file_add_f32(f, "pred/scale", sc, DLP_T_COUNT, err)))
        return st;
    return DLP_OK;
}

static dlp_status get_str(const dlp_nn_file *f, const char *name, char *dst,
                          size_t cap, dlp_error *err) {
    const dlp_nn_entry *e = dlp_nn_file_get(f, name, DLP_NN_STR);
    if (!e) return dlp_fail(err, DLP_ERR_FORMAT,
                            "not a dlperf predictor file: no '%s' entry", name);
    if (e->count >= cap)
        return dlp_fail(err, DLP_ERR_FORMAT, "predictor file: '%s' too long",
                        name);
    memcpy(dst, e->data, (size_t)e->count);
    dst[e->count] = 0;
    return DLP_OK;
}

dlp_status dlp_pred_meta_read(const dlp_nn_file *f, dlp_pred_meta *m,
                              dlp_error *err) {
    dlp_pred_meta_init(m, "", DLP_MODE_INFERENCE);
    dlp_status st;
    if ((st = get_str(f, "pred/kind", m->kind, sizeof m->kind, err)) ||
        (st = get_str(f, "pred/devices", m->devices, sizeof m->devices, err)) ||
        (st = get_str(f, "pred/info", m->info, sizeof m->info, err)))
        return st;
    const dlp_nn_entry *h = dlp_nn_file_get(f, "pred/header", DLP_NN_I64);
    if (!h || h->count != 6)
        return dlp_fail(err, DLP_ERR_FORMAT,
                        "predictor file: missing or malformed 'pred/header'");
    const int64_t *v = h->data;
    if (v[5] != 1)
        return dlp_fail(err, DLP_ERR_UNSUPPORTED,
                        "predictor file header version %lld, this build reads 1",
                        (long long)v[5]);
    if (v[1] < 0 || v[1] >= DLP_MODE_COUNT || v[2] < 0 ||
        v[2] >= (1 << DLP_T_COUNT) || v[3] < 0 || v[3] >= (1 << DLP_RT_COUNT) ||
        v[4] < 0 || v[4] >= (1 << DLP_PREC_COUNT) || v[0] < 0 || v[0] > 1000000)
        return dlp_fail(err, DLP_ERR_FORMAT,
                        "predictor file: 'pred/header' values out of range");
    m->feat_schema = (int)v[0];
    m->mode = (dlp_pred_mode)v[1];
    m->targets = (uint32_t)v[2];
    m->runtimes = (uint32_t)v[3];
    m->precisions = (uint32_t)v[4];
    for (int t = 0; t < DLP_T_COUNT; t++)
        if ((m->targets >> t & 1) && dlp_target_mode((dlp_target)t) != m->mode)
            return dlp_fail(err, DLP_ERR_FORMAT, "predictor file: target %s "
                            "does not belong to mode %s",
                            dlp_target_name((dlp_target)t), MODES[m->mode]);
    nn_real per[3 * DLP_T_COUNT], rng[META_NUM];
    if ((st = dlp_nn_file_read_f32(f, "pred/per_target", per, 3 * DLP_T_COUNT,
                                   err)) ||
        (st = dlp_nn_file_read_f32(f, "pred/ranges", rng, META_NUM, err)))
        return st;
    for (int t = 0; t < DLP_T_COUNT; t++) {
        m->val_error[t] = per[t];
        m->resid_lo[t] = per[DLP_T_COUNT + t];
        m->resid_hi[t] = per[2 * DLP_T_COUNT + t];
    }
    m->batch_min = rng[0]; m->batch_max = rng[1];
    m->seq_min = rng[2]; m->seq_max = rng[3];
    m->macs_min = rng[4]; m->macs_max = rng[5];
    /* optional: files written before the entry existed have none */
    const dlp_nn_entry *dp = dlp_nn_file_get(f, "pred/data_precisions", DLP_NN_I64);
    if (dp) {
        const int64_t *w = dp->data;
        if (dp->count != 1 || w[0] <= 0 || w[0] >= (1 << DLP_PREC_COUNT))
            return dlp_fail(err, DLP_ERR_FORMAT, "predictor file: malformed "
                            "'pred/data_precisions'");
        m->data_precisions = (uint32_t)w[0];
    }
    if (dlp_nn_file_get(f, "pred/scale", DLP_NN_F32)) {   /* optional, likewise */
        nn_real sc[DLP_T_COUNT];
        if ((st = dlp_nn_file_read_f32(f, "pred/scale", sc, DLP_T_COUNT, err)))
            return st;
        for (int t = 0; t < DLP_T_COUNT; t++) {
            if (!(sc[t] >= DLP_PRED_SCALE_MIN && sc[t] <= DLP_PRED_SCALE_MAX))
                return dlp_fail(err, DLP_ERR_FORMAT, "predictor file: "
                                "'pred/scale' of %s is %g, outside [%g, %g]",
                                FULL[t], (double)sc[t], DLP_PRED_SCALE_MIN,
                                DLP_PRED_SCALE_MAX);
            m->scale[t] = sc[t];
        }
    }
    return DLP_OK;
}

double dlp_pred_meta_host_ref_us(const dlp_pred_meta *m) {
    const char *p = m ? strstr(m->info, DLP_HOST_NORM_INFO) : NULL;
    if (!p) return 0;
    char *end;
    double us = strtod(p + strlen(DLP_HOST_NORM_INFO), &end);
    return end != p + strlen(DLP_HOST_NORM_INFO) && us > 0 && isfinite(us) &&
                   !strncmp(end, " us", 3)
               ? us : 0;
}

bool dlp_pred_meta_has_device(const dlp_pred_meta *m, const char *device) {
    if (!device) return false;
    size_t n = strlen(device);
    for (const char *p = m->devices; *p;) {
        const char *q = strchr(p, ',');
        size_t len = q ? (size_t)(q - p) : strlen(p);
        if (len == n && !strncasecmp(p, device, n)) return true;
        if (!q) break;
        p = q + 1;
    }
    return false;
}

bool dlp_pred_meta_covers(const dlp_pred_meta *m, dlp_target t,
                          const dlp_pred_config *c) {
    if ((unsigned)t >= DLP_T_COUNT || !(m->targets >> t & 1)) return false;
    if (dlp_target_mode(t) != c->mode) return false;
    if (c->mode != DLP_MODE_TRAINING && m->runtimes &&
        !(m->runtimes >> c->runtime & 1))
        return false;
    if (m->precisions && !(m->precisions >> c->precision & 1)) return false;
    return true;
}

/* ---- blobs -------------------------------------------------------------- */
dlp_status dlp_pred_blob_add(dlp_nn_file *f, const char *name,
                             const void *bytes, size_t n, dlp_error *err) {
    char key[160];
    if (snprintf(key, sizeof key, "blob/%s", name) >= (int)sizeof key)
        return dlp_fail(err, DLP_ERR_ARG, "blob name too long");
    size_t words = (n + 7) / 8;
    int64_t *w = calloc(words ? words : 1, sizeof *w);
    if (!w) return dlp_fail(err, DLP_ERR_NOMEM, "out of memory for blob '%s'",
                            name);
    if (n) memcpy(w, bytes, n);
    dlp_status st = dlp_nn_file_add_i64(f, key, w, words, err);
    free(w);
    if (st) return st;
    int64_t len = (int64_t)n;
    snprintf(key, sizeof key, "bloblen/%s", name);
    return dlp_nn_file_add_i64(f, key, &len, 1, err);
}

dlp_status dlp_pred_blob_get(const dlp_nn_file *f, const char *name,
                             const void **bytes, size_t *n, dlp_error *err) {
    char key[160];
    snprintf(key, sizeof key, "blob/%s", name);
    const dlp_nn_entry *b = dlp_nn_file_get(f, key, DLP_NN_I64);
    snprintf(key, sizeof key, "bloblen/%s", name);
    const dlp_nn_entry *l = dlp_nn_file_get(f, key, DLP_NN_I64);
    if (!b || !l || l->count != 1)
        return dlp_fail(err, DLP_ERR_FORMAT, "predictor file: no blob '%s'",
                        name);
    int64_t len = *(const int64_t *)l->data;
    if (len < 0 || (uint64_t)(len + 7) / 8 != b->count)
        return dlp_fail(err, DLP_ERR_FORMAT,
                        "predictor file: blob '%s' has a bad length", name);
    *bytes = b->data;
    *n = (size_t)len;
    return DLP_OK;
}

bool dlp_pred_blob_exists(const dlp_nn_file *f, const char *name) {
    char key[160];
    snprintf(key, sizeof key, "blob/%s", name);
    return dlp_nn_file_get(f, key, DLP_NN_I64) != NULL;
}

bool dlp_pred_blob_remove(dlp_nn_file *f, const char *scope, const char *name) {
    char key[600];
    snprintf(key, sizeof key, "%.400sblob/%.160s", scope, name);
    bool had = dlp_nn_file_remove(f, key, DLP_NN_I64);
    snprintf(key, sizeof key, "%.400sbloblen/%.160s", scope, name);
    return dlp_nn_file_remove(f, key, DLP_NN_I64) | had;
}

/* ---- loading and running ------------------------------------------------ */
extern const dlp_pred_vtable dlp_pred_blend_vt;

static const dlp_pred_vtable *find_kind(const char *kind,
                                        const dlp_pred_vtable *const *extra) {
    if (strchr(kind, '+')) return &dlp_pred_blend_vt;   /* checks its parts */
    for (const dlp_pred_vtable *const *k = dlp_pred_builtin_kinds(); *k; k++)
        if (!strcmp((*k)->kind, kind)) return *k;
    for (const dlp_pred_vtable *const *k = extra; k && *k; k++)
        if (!strcmp((*k)->kind, kind)) return *k;
    return NULL;
}

dlp_pred_cost dlp_pred_kind_cost(const char *kind,
                                 const dlp_pred_vtable *const *extra) {
    dlp_pred_cost cost = 0;
    char part[64];
    for (const char *s = kind; *s;) {   /* a blend: its costliest part */
        size_t n = strcspn(s, "+");
        snprintf(part, sizeof part, "%.*s", (int)n, s);
        const dlp_pred_vtable *vt = find_kind(part, extra);
        dlp_pred_cost c = vt && vt->cost ? vt->cost : DLP_PRED_COST_MODEL;
        if (c > cost) cost = c;
        s += n + (s[n] == '+');
    }
    return cost ? cost : DLP_PRED_COST_MODEL;
}

dlp_status dlp_predictor_from_file(const dlp_nn_file *f,
                                   const dlp_pred_vtable *const *extra,
                                   dlp_predictor **out, dlp_error *err) {
    *out = NULL;
    dlp_predictor *p = calloc(1, sizeof *p);
    if (!p) return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    dlp_status st = dlp_pred_meta_read(f, &p->meta, err);
    if (st) { free(p); return st; }
    p->vt = find_kind(p->meta.kind, extra);
    if (!p->vt) {
        st = dlp_fail(err, DLP_ERR_UNSUPPORTED,
                      "predictor kind '%s' is not built into this dlperf",
                      p->meta.kind);
        free(p);
        return st;
    }
    if (p->meta.feat_schema && p->meta.feat_schema != DLP_FEAT_SCHEMA) {
        st = dlp_fail(err, DLP_ERR_UNSUPPORTED,
                      "predictor '%s' was trained with feature schema %d, this "
                      "build has schema %d: retrain it (make models)",
                      p->meta.kind, p->meta.feat_schema, DLP_FEAT_SCHEMA);
        free(p);
        return st;
    }
    st = p->vt->load(p, f, err);
    if (st) { free(p); return st; }
    *out = p;
    return DLP_OK;
}

dlp_status dlp_predictor_load(const char *path,
                              const dlp_pred_vtable *const *extra,
                              dlp_predictor **out, dlp_error *err) {
    *out = NULL;
    dlp_nn_file f = {0};
    dlp_status st = dlp_nn_file_load(&f, path, err);
    if (st) return st;
    st = dlp_predictor_from_file(&f, extra, out, err);
    dlp_nn_file_free(&f);
    if (st) {
        char msg[sizeof err->msg];
        snprintf(msg, sizeof msg, "%s", err ? err->msg : "");
        return dlp_fail(err, st, "%s: %s", path, msg);
    }
    (*out)->path = strdup(path);
    if (!(*out)->path) {
        dlp_predictor_free(*out);
        *out = NULL;
        return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    }
    return DLP_OK;
}

/* Inference energy from two estimates (fifty-eighth session). A predictor
 * that answers latency, energy and power in one call gives the energy
 * twice: directly, and as power x latency. Their errors are not the
 * same, and the geometric mean of the two beats either on held-out
 * models (docs/PREDICT.md, "Energy from two estimates"): energy becomes
 * sqrt(E x P x L / 1e3), on the raw outputs, before the calibration
 * factors, so a file's energy factor is fitted on (pred_train.c) and
 * applied to the same quantity. Its own interval, if any, moves with it;
 * latency and power are left as they are. */
static void combine_energy(dlp_pred_value *v, const dlp_pred_value *before) {
    dlp_pred_value *L = &v[DLP_T_INF_LATENCY_MS], *E = &v[DLP_T_INF_ENERGY_J],
                   *P = &v[DLP_T_INF_POWER_W];
    const dlp_pred_value *const mine[3] = {L, E, P};
    for (int i = 0; i < 3; i++) {
        const dlp_pred_value *x = mine[i];
        if (!x->valid || !memcmp(x, &before[x - v], sizeof *x) ||
            !isfinite(x->value) || !(x->value > 0))
            return;
    }
    double e = sqrt(E->value * P->value * L->value / 1e3);
    if (!isfinite(e) || !(e > 0)) return;
    double r = e / E->value;
    E->value = e;
    E->lo *= r;
    E->hi *= r;
}

dlp_status dlp_predictor_predict(const dlp_predictor *p,
                                 const dlp_pred_input *in,
                                 dlp_pred_result *out, dlp_error *err) {
    if (!in || (!in->graph && !in->feat) || !in->cfg)
        return dlp_fail(err, DLP_ERR_ARG, "prediction needs a graph and a config");
    dlp_status cst = dlp_pred_config_check(in->cfg, err);
    if (cst) return cst;
    if (in->cfg->mode != p->meta.mode)
        return dlp_fail(err, DLP_ERR_ARG, "predictor '%s' is for %s, not %s",
                        p->meta.kind, MODES[p->meta.mode],
                        MODES[in->cfg->mode]);
    dlp_pred_value before[DLP_T_COUNT];
    memcpy(before, out->v, sizeof before);
    dlp_status st = p->vt->predict(p, in, out, err);
    if (st) return st;
    if (p->meta.mode == DLP_MODE_INFERENCE) combine_energy(out->v, before);
    for (int t = 0; t < DLP_T_COUNT; t++) {
        dlp_pred_value *v = &out->v[t];
        if (!v->valid || !memcmp(v, &before[t], sizeof *v)) continue;
        if (!isfinite(v->value) || v->value <= 0) {
            return dlp_fail(err, DLP_ERR_UNSUPPORTED,
                            "predictor '%s' produced no finite %s (%g)",
                            p->meta.kind, FULL[t], v->value);
        }
        if (!v->by) v->by = p->vt->kind;
        double s = p->meta.scale[t];   /* the MAPE calibration (pred_train.c) */
        v->value *= s;
        if (v->lo > 0 && v->hi >= v->lo) {
            v->lo *= s;
            v->hi *= s;
        } else {
            double lo = p->meta.resid_lo[t], hi = p->meta.resid_hi[t];
            if (isfinite(lo) && isfinite(hi)) {
                v->lo = v->value * exp(lo);
                v->hi = v->value * exp(hi);
                if (v->lo > v->value) v->lo = v->value;
                if (v->hi < v->value) v->hi = v->value;
            } else {
                v->lo = v->hi = v->value;
            }
        }
    }
    const dlp_pred_config *c = in->cfg;
    if (p->meta.devices[0] && !dlp_pred_meta_has_device(&p->meta, c->device.name))
        out->extrapolated = true;
    const dlp_pred_meta *m = &p->meta;
    if (m->data_precisions && !(m->data_precisions >> c->precision & 1))
        dlp_pred_result_flag(out, "no %s %s data in training: predicted from "
                             "the precision features", dlp_precision_name(c->precision),
                             MODES[c->mode]);
    if (m->batch_max > 0 &&
        (c->batch < m->batch_min / 2 || c->batch > m->batch_max * 2))
        dlp_pred_result_flag(out, "batch %lld outside the trained range %g..%g",
                             (long long)c->batch, m->batch_min, m->batch_max);
    if (m->macs_max > 0) {
        double macs = 0;
        if (in->feat) macs = in->feat->macs;
        else
            for (size_t i = 0; i < in->graph->n_nodes; i++)
                macs += in->graph->nodes[i].cost.macs;
        if (macs > m->macs_max * 4 || macs < m->macs_min / 4)
            dlp_pred_result_flag(out, "%.3g MACs outside the trained range "
                                 "%.3g..%.3g", macs, m->macs_min, m->macs_max);
    }
    if (m->seq_max > 0 && c->seq > 0 &&
        (c->seq < m->seq_min / 2 || c->seq > m->seq_max * 2))
        dlp_pred_result_flag(out, "sequence %lld outside the trained range "
                             "%g..%g", (long long)c->seq, m->seq_min, m->seq_max);
    return DLP_OK;
}

void dlp_predictor_free(dlp_predictor *p) {
    if (!p) return;
    if (p->vt && p->vt->free) p->vt->free(p);
    free(p->path);
    free(p);
}
