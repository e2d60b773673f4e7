/*
 * device.c — the device database API: lookup by name or alias, iteration,
 * MIG profiles, precision support and the predictor feature vector.
 *
 * Feature vector (DLP_DEVICE_NFEATURES values, this order):
 *   0 sm_count          5 compute_capability (major + minor/10)
 *   1 clock_mhz         6 fp32_tflops
 *   2 mem_gib           7 fp16_tc_tflops
 *   3 mem_bw_gbs        8 bf16_tc_tflops (0 when unsupported)
 *   4 l2_mib            9 tdp_w
 *  10 launch_us        11 ridge_fp32 = fp32 FLOP per DRAM byte
 *  12 ridge_fp16 = fp16 tensor FLOP per DRAM byte
 * With a MIG profile: SMs become the instance's, FLOP/s scale by its SM
 * share, memory, bandwidth and L2 by its memory share (the MIG guide gives
 * L2 the memory fraction); clock, TDP and launch cost stay.
 */
#include "device/device.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

void dlp_device_norm(const char *s, char *out, size_t cap) {
    size_t n = 0;
    if (!cap) return;
    for (; *s && n + 1 < cap; s++)
        if (isalnum((unsigned char)*s)) out[n++] = (char)tolower((unsigned char)*s);
    out[n] = '\0';
}

const dlp_device *dlp_device_lookup(const char *name) {
    char want[128], have[128];
    if (!name) return NULL;
    dlp_device_norm(name, want, sizeof want);
    if (!want[0]) return NULL;
    for (int i = 0; i < dlp_device_table_len; i++) {
        const dlp_device *d = &dlp_device_table[i];
        dlp_device_norm(d->name, have, sizeof have);
        if (!strcmp(want, have)) return d;
        for (const char *const *a = d->aliases; a && *a; a++) {
            dlp_device_norm(*a, have, sizeof have);
            if (!strcmp(want, have)) return d;
        }
    }
    return NULL;
}

int dlp_device_count(void) { return dlp_device_table_len; }

const dlp_device *dlp_device_at(int i) {
    return i >= 0 && i < dlp_device_table_len ? &dlp_device_table[i] : NULL;
}

dlp_status dlp_device_find(const char *name, dlp_device *out, dlp_error *err) {
    if (!name || !out)
        return dlp_fail(err, DLP_ERR_ARG, "dlp_device_find: NULL argument");
    const dlp_device *d = dlp_device_lookup(name);
    if (d) {
        *out = *d;
        return DLP_OK;
    }
    char known[400];
    size_t n = 0;
    known[0] = '\0';
    for (int i = 0; i < dlp_device_table_len && n < sizeof known; i++) {
        int k = snprintf(known + n, sizeof known - n, "%s%s", i ? ", " : "",
                         dlp_device_table[i].name);
        if (k < 0) break;
        n += (size_t)k;
    }
    return dlp_fail(err, DLP_ERR_NOT_FOUND, "unknown device '%.60s'; known: %s",
                    name, known);
}

dlp_status dlp_device_mig(const dlp_device *d, const char *profile,
                          dlp_mig_profile *out, dlp_error *err) {
    if (!d || !profile || !out)
        return dlp_fail(err, DLP_ERR_ARG, "dlp_device_mig: NULL argument");
    const char *p = profile;
    if (!strncasecmp(p, "MIG", 3)) {
        p += 3;
        while (*p == ' ' || *p == '-' || *p == '_') p++;
    }
    for (int i = 0; i < d->n_mig; i++)
        if (!strcasecmp(d->mig[i].name, p)) {
            *out = d->mig[i];
            return DLP_OK;
        }
    if (d->n_mig == 0)
        return dlp_fail(err, DLP_ERR_NOT_FOUND, "%s does not support MIG",
                        d->name);
    char known[200];
    size_t n = 0;
    known[0] = '\0';
    for (int i = 0; i < d->n_mig && n < sizeof known; i++) {
        int k = snprintf(known + n, sizeof known - n, "%s%s", i ? ", " : "",
                         d->mig[i].name);
        if (k < 0) break;
        n += (size_t)k;
    }
    return dlp_fail(err, DLP_ERR_NOT_FOUND,
                    "%s has no MIG profile '%.40s'; known: %s", d->name,
                    profile, known);
}

int dlp_device_supports(const dlp_device *d, const char *precision) {
    if (!d || !precision) return 0;
    int cc = d->cc_major * 10 + d->cc_minor;
    if (!strcasecmp(precision, "fp32")) return 1;
    if (!strcasecmp(precision, "fp16")) return cc >= 53;
    if (!strcasecmp(precision, "int8")) return cc >= 61;
    if (!strcasecmp(precision, "tf32")) return cc >= 80;
    if (!strcasecmp(precision, "bf16")) return cc >= 80 && d->bf16_tc_tflops > 0;
    if (!strcasecmp(precision, "fp8")) return cc >= 89;
    return 0;
}

static const char *const FEATURE_NAMES[DLP_DEVICE_NFEATURES] = {
    "sm_count",    "clock_mhz",      "mem_gib",        "mem_bw_gbs",
    "l2_mib",      "compute_capability", "fp32_tflops", "fp16_tc_tflops",
    "bf16_tc_tflops", "tdp_w",       "launch_us",      "ridge_fp32",
    "ridge_fp16",
};

const char *dlp_device_feature_name(int i) {
    return i >= 0 && i < DLP_DEVICE_NFEATURES ? FEATURE_NAMES[i] : NULL;
}

int dlp_device_features(const dlp_device *d, const dlp_mig_profile *mig,
                        double *out, int cap) {
    double f[DLP_DEVICE_NFEATURES];
    double sm_share = 1.0, mem_share = 1.0, sms = d->sm_count;
    if (mig && d->sm_count > 0) {
        sm_share = (double)mig->sm_count / d->sm_count;
        mem_share = mig->mem_eighths / 8.0;
        sms = mig->sm_count;
    }
    f[0] = sms;
    f[1] = d->clock_mhz;
    f[2] = d->mem_mib / 1024.0 * mem_share;
    f[3] = d->mem_bw_gbs * mem_share;
    f[4] = d->l2_mib * mem_share;
    f[5] = d->cc_major + d->cc_minor / 10.0;
    f[6] = d->fp32_tflops * sm_share;
    f[7] = d->fp16_tc_tflops * sm_share;
    f[8] = d->bf16_tc_tflops * sm_share;
    f[9] = d->tdp_w;
    f[10] = d->launch_us;
    f[11] = f[3] > 0 ? f[6] * 1000.0 / f[3] : 0;
    f[12] = f[3] > 0 ? f[7] * 1000.0 / f[3] : 0;
    int n = cap < DLP_DEVICE_NFEATURES ? cap : DLP_DEVICE_NFEATURES;
    for (int i = 0; i < n; i++) out[i] = f[i];
    return DLP_DEVICE_NFEATURES;
}
