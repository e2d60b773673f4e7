/*
 * predict_json.c — a prediction result as one JSON object (the output of
 * `dlperf predict --json`, one line). Keys:
 *   model, device, mode, precision, runtime, batch, seq, height, width,
 *   partition (null = whole GPU), sms, scaling,
 *   latency_ms, memory_mib, energy_j, throughput_per_s, power_w
 *     (numbers, null when no predictor covers them),
 *   mig_profile (null when none qualifies or the GPU has no MIG), mig_note,
 *   context_mib, reserved_ratio (need = memory x ratio + context),
 *   intervals: {latency_ms: [lo, hi], ...},
 *   predictors: {latency_ms: "dippm", ...},
 *   flags: {ood, extrapolated, reasons: [...]}
 */
#include "predict/predict.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char *s;
    size_t n, cap;
    bool oom;
} jbuf;

static void put(jbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(jbuf *b, const char *fmt, ...) {
    if (b->oom) return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int k = vsnprintf(b->s + b->n, b->cap - b->n, fmt, ap);
        va_end(ap);
        if (k < 0) { b->oom = true; return; }
        if ((size_t)k < b->cap - b->n) { b->n += (size_t)k; return; }
        size_t nc = b->cap * 2 + (size_t)k + 64;
        char *ns = realloc(b->s, nc);
        if (!ns) { b->oom = true; return; }
        b->s = ns;
        b->cap = nc;
    }
}

/* Length of the valid UTF-8 sequence at p (1..4), 0 when invalid. */
static int utf8_len(const unsigned char *p) {
    int n = p[0] < 0x80 ? 1 : (p[0] & 0xE0) == 0xC0 ? 2
          : (p[0] & 0xF0) == 0xE0 ? 3 : (p[0] & 0xF8) == 0xF0 ? 4 : 0;
    if (n == 2 && p[0] < 0xC2) return 0;              /* overlong */
    for (int k = 1; k < n; k++)
        if ((p[k] & 0xC0) != 0x80) return 0;
    if (n == 3 && ((p[0] == 0xE0 && p[1] < 0xA0) ||  /* overlong */
                   (p[0] == 0xED && p[1] >= 0xA0)))  /* surrogates */
        return 0;
    if (n == 4 && ((p[0] == 0xF0 && p[1] < 0x90) || p[0] > 0xF4 ||
                   (p[0] == 0xF4 && p[1] >= 0x90)))
        return 0;
    return n;
}

/* A JSON string; bytes that are not UTF-8 (names from a damaged file)
 * become U+FFFD so the output always parses. */
static void str(jbuf *b, const char *s) {
    if (!s) { put(b, "null"); return; }
    put(b, "\"");
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        int n = utf8_len(p);
        if (*p == '"' || *p == '\\') put(b, "\\%c", *p);
        else if (*p < 0x20) put(b, "\\u%04x", *p);
        else if (n == 1) put(b, "%c", *p);
        else if (n == 0) put(b, "\\ufffd");
        else put(b, "%.*s", n, (const char *)p);
        p += n ? n : 1;
    }
    put(b, "\"");
}

static void num(jbuf *b, double v) {
    if (isfinite(v)) put(b, "%.6g", v);
    else put(b, "null");
}

static void val(jbuf *b, const char *key, const dlp_predict_value *v) {
    put(b, ",\"%s\":", key);
    if (v->valid) num(b, v->value);
    else put(b, "null");
}

dlp_status dlp_predict_to_json(const dlp_predict_result *r,
                               const char *model_name, char **json,
                               dlp_error *err) {
    if (!r || !json)
        return dlp_fail(err, DLP_ERR_ARG, "dlp_predict_to_json: NULL argument");
    *json = NULL;
    jbuf b = {malloc(1024), 0, 1024, false};
    if (!b.s) return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    put(&b, "{\"model\":");
    str(&b, model_name);
    put(&b, ",\"device\":");
    str(&b, r->device);
    put(&b, ",\"mode\":");
    str(&b, r->mode);
    put(&b, ",\"precision\":");
    str(&b, r->precision);
    put(&b, ",\"runtime\":");
    str(&b, r->runtime);
    put(&b, ",\"batch\":%lld,\"seq\":%lld,\"height\":%lld,\"width\":%lld",
        (long long)r->batch, (long long)r->seq, (long long)r->height,
        (long long)r->width);
    put(&b, ",\"partition\":");
    str(&b, r->partition[0] ? r->partition : NULL);
    put(&b, ",\"sms\":%d,\"scaling\":", r->sms);
    str(&b, r->scaling);
    put(&b, ",\"host_us\":");
    if (r->host_us > 0) num(&b, r->host_us);
    else put(&b, "null");
    put(&b, ",\"host_ref_us\":");
    if (r->host_ref_us > 0) num(&b, r->host_ref_us);
    else put(&b, "null");
    put(&b, ",\"host_factor\":");
    num(&b, r->host_factor);
    put(&b, ",\"host_energy_factor\":");
    num(&b, r->host_energy_factor);
    const dlp_predict_value *vals[5] = {&r->latency_ms, &r->memory_mib,
                                        &r->energy_j, &r->throughput_per_s,
                                        &r->power_w};
    static const char *const keys[5] = {"latency_ms", "memory_mib", "energy_j",
                                        "throughput_per_s", "power_w"};
    for (int i = 0; i < 5; i++) val(&b, keys[i], vals[i]);
    put(&b, ",\"mig_profile\":");
    str(&b, r->mig_profile[0] ? r->mig_profile : NULL);
    put(&b, ",\"mig_note\":");
    str(&b, r->mig_note);
    put(&b, ",\"context_mib\":");
    num(&b, r->context_mib);
    put(&b, ",\"reserved_ratio\":");
    num(&b, r->reserved_ratio);
    put(&b, ",\"intervals\":{");
    int first = 1;
    for (int i = 0; i < 5; i++) {
        if (!vals[i]->valid) continue;
        put(&b, "%s\"%s\":[", first ? "" : ",", keys[i]);
        num(&b, vals[i]->lo);
        put(&b, ",");
        num(&b, vals[i]->hi);
        put(&b, "]");
        first = 0;
    }
    put(&b, "},\"predictors\":{");
    first = 1;
    for (int i = 0; i < 5; i++) {
        if (!vals[i]->valid) continue;
        put(&b, "%s\"%s\":", first ? "" : ",", keys[i]);
        str(&b, vals[i]->by ? vals[i]->by : "?");
        first = 0;
    }
    /* the answering predictor's error on this figure (whole GPU) and the
     * basis: held-out (models/heldout.csv) or its validation models */
    put(&b, "},\"expected_error_pct\":{");
    first = 1;
    for (int i = 0; i < 5; i++) {
        if (!vals[i]->valid || !(vals[i]->err_pct > 0)) continue;
        put(&b, "%s\"%s\":", first ? "" : ",", keys[i]);
        num(&b, vals[i]->err_pct);
        first = 0;
    }
    put(&b, "},\"error_basis\":{");
    first = 1;
    for (int i = 0; i < 5; i++) {
        if (!vals[i]->valid || !(vals[i]->err_pct > 0) || !vals[i]->err_basis)
            continue;
        put(&b, "%s\"%s\":", first ? "" : ",", keys[i]);
        str(&b, vals[i]->err_basis);
        first = 0;
    }
    put(&b, "},\"flags\":{\"ood\":%s,\"extrapolated\":%s,\"reasons\":[",
        r->ood ? "true" : "false", r->extrapolated ? "true" : "false");
    for (int i = 0; i < r->n_reasons; i++) {
        if (i) put(&b, ",");
        str(&b, r->reasons[i]);
    }
    put(&b, "]}}");
    if (b.oom) {
        free(b.s);
        return dlp_fail(err, DLP_ERR_NOMEM, "out of memory writing JSON");
    }
    *json = b.s;
    return DLP_OK;
}
