/*
 * device_measured.c — measured overrides for the device table: the JSON
 * object tools/devbench prints for a card (data/devices/<name>.json):
 *   {"gpu_name": "NVIDIA H100 80GB HBM3", "sm_count": 132,
 *    "clock_mhz": 1980, "mem_mib": 81559, "l2_bytes": 52428800, "cc": "9.0",
 *    "fp32_tflops": .., "fp16_tc_tflops": .., "bf16_tc_tflops": ..,
 *    "hbm_gbs": .., "l2_gbs": .., "launch_us": .., ...}
 * A key that is missing or null keeps the datasheet figure; other keys are
 * ignored. Each applied key sets its DLP_DEVM_* bit.
 */
#include "device/device.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_JSON_BYTES ((size_t)1 << 20)

static dlp_status read_all(const char *path, char **out, dlp_error *err) {
    FILE *f = fopen(path, "rb");
    if (!f) return dlp_fail(err, DLP_ERR_IO, "%s: %s", path, strerror(errno));
    char *buf = malloc(MAX_JSON_BYTES + 1);
    if (!buf) {
        fclose(f);
        return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    }
    size_t n = fread(buf, 1, MAX_JSON_BYTES + 1, f);
    int bad = ferror(f);
    fclose(f);
    if (bad || n > MAX_JSON_BYTES) {
        free(buf);
        return dlp_fail(err, bad ? DLP_ERR_IO : DLP_ERR_LIMIT,
                        "%s: %s", path, bad ? "read error" : "larger than 1 MiB");
    }
    buf[n] = '\0';
    *out = buf;
    return DLP_OK;
}

/* Reads key as a positive number into *v (unchanged when absent/null). */
static dlp_status get_pos(const cJSON *j, const char *key, const char *path,
                          double *v, bool *set, dlp_error *err) {
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(j, key);
    *set = false;
    if (!it || cJSON_IsNull(it)) return DLP_OK;
    if (!cJSON_IsNumber(it))
        return dlp_fail(err, DLP_ERR_FORMAT, "%s: '%s' must be a number", path,
                        key);
    if (!(it->valuedouble > 0))
        return dlp_fail(err, DLP_ERR_FORMAT, "%s: '%s' must be positive (%g)",
                        path, key, it->valuedouble);
    *v = it->valuedouble;
    *set = true;
    return DLP_OK;
}

static dlp_status apply(dlp_device *d, const cJSON *j, const char *path,
                        dlp_error *err) {
    if (!cJSON_IsObject(j))
        return dlp_fail(err, DLP_ERR_FORMAT, "%s: not a JSON object", path);
    const cJSON *gn = cJSON_GetObjectItemCaseSensitive(j, "gpu_name");
    if (gn && !cJSON_IsNull(gn)) {
        if (!cJSON_IsString(gn))
            return dlp_fail(err, DLP_ERR_FORMAT, "%s: 'gpu_name' must be a "
                            "string", path);
        const dlp_device *m = dlp_device_lookup(gn->valuestring);
        if (m && strcmp(m->name, d->name) != 0)
            return dlp_fail(err, DLP_ERR_FORMAT,
                            "%s: measured on '%s' (%s), not %s", path,
                            gn->valuestring, m->name, d->name);
    }
    static const struct {
        const char *key;
        unsigned bit;
        size_t off;      /* double field of dlp_device, or SIZE_MAX */
        double scale;
    } nums[] = {
        {"clock_mhz", DLP_DEVM_CLOCK, offsetof(dlp_device, clock_mhz), 1},
        {"mem_mib", DLP_DEVM_MEM, offsetof(dlp_device, mem_mib), 1},
        {"hbm_gbs", DLP_DEVM_MEM_BW, offsetof(dlp_device, mem_bw_gbs), 1},
        {"l2_bytes", DLP_DEVM_L2, offsetof(dlp_device, l2_mib), 1.0 / 1048576},
        {"l2_gbs", DLP_DEVM_L2_BW, offsetof(dlp_device, l2_bw_gbs), 1},
        {"fp32_tflops", DLP_DEVM_FP32, offsetof(dlp_device, fp32_tflops), 1},
        {"fp16_tc_tflops", DLP_DEVM_FP16, offsetof(dlp_device, fp16_tc_tflops), 1},
        {"bf16_tc_tflops", DLP_DEVM_BF16, offsetof(dlp_device, bf16_tc_tflops), 1},
        {"launch_us", DLP_DEVM_LAUNCH, offsetof(dlp_device, launch_us), 1},
    };
    dlp_device n = *d;
    bool set;
    double v = 0;
    dlp_status s;
    for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++) {
        s = get_pos(j, nums[i].key, path, &v, &set, err);
        if (s) return s;
        if (!set) continue;
        double x = v * nums[i].scale;
        memcpy((char *)&n + nums[i].off, &x, sizeof x);
        n.measured |= nums[i].bit;
    }
    s = get_pos(j, "sm_count", path, &v, &set, err);
    if (s) return s;
    if (set) {
        if (v != (double)(int)v || v > 100000)
            return dlp_fail(err, DLP_ERR_FORMAT,
                            "%s: 'sm_count' must be an integer", path);
        n.sm_count = (int)v;
        n.measured |= DLP_DEVM_SM;
    }
    const cJSON *cc = cJSON_GetObjectItemCaseSensitive(j, "cc");
    if (cc && !cJSON_IsNull(cc)) {
        int ma = -1, mi = -1;
        char tail = 0;
        if (cJSON_IsString(cc)) {
            if (sscanf(cc->valuestring, "%d.%d%c", &ma, &mi, &tail) != 2)
                ma = -1;
        } else if (cJSON_IsNumber(cc) && cc->valuedouble > 0 &&
                   cc->valuedouble < 100) {
            ma = (int)cc->valuedouble;
            mi = (int)((cc->valuedouble - ma) * 10 + 0.5);
        }
        if (ma < 1 || ma > 99 || mi < 0 || mi > 9)
            return dlp_fail(err, DLP_ERR_FORMAT,
                            "%s: 'cc' must look like \"9.0\"", path);
        n.cc_major = ma;
        n.cc_minor = mi;
        n.measured |= DLP_DEVM_CC;
    }
    *d = n;
    return DLP_OK;
}

dlp_status dlp_device_apply_measured(dlp_device *d, const char *path,
                                     dlp_error *err) {
    if (!d || !path)
        return dlp_fail(err, DLP_ERR_ARG,
                        "dlp_device_apply_measured: NULL argument");
    char *text = NULL;
    dlp_status s = read_all(path, &text, err);
    if (s) return s;
    const char *where = NULL;
    cJSON *j = cJSON_ParseWithOpts(text, &where, 1);
    if (!j) {
        long off = where ? (long)(where - text) : -1;
        free(text);
        return dlp_fail(err, DLP_ERR_FORMAT, "%s: invalid JSON near byte %ld",
                        path, off);
    }
    s = apply(d, j, path, err);
    cJSON_Delete(j);
    free(text);
    return s;
}

dlp_status dlp_device_load(const char *name, const char *measured_dir,
                           dlp_device *out, dlp_error *err) {
    dlp_device d;
    dlp_status s = dlp_device_find(name, &d, err);
    if (s) return s;
    if (measured_dir) {
        char path[4096];
        int k = snprintf(path, sizeof path, "%s/%s.json", measured_dir, d.name);
        if (k < 0 || (size_t)k >= sizeof path)
            return dlp_fail(err, DLP_ERR_LIMIT, "measured path too long");
        struct stat st;
        if (stat(path, &st) == 0) {
            s = dlp_device_apply_measured(&d, path, err);
            if (s) return s;
        }
    }
    *out = d;
    return DLP_OK;
}
