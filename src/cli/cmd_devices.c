/*
 * cmd_devices.c — `dlperf devices [--json] [--measured DIR|--no-measured]
 * [NAME]`: lists the device database, or one device in detail (aliases,
 * MIG profiles, predictor features). Figures measured on the card
 * (DIR/<name>.json, default data/devices) replace datasheet ones and are
 * marked '*'. Exit status: 0, 1 unknown device or bad measured file, 2 usage.
 */
#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

static void usage(FILE *f) {
    fprintf(f,
            "usage: dlperf devices [--json] [--measured DIR | --no-measured] "
            "[NAME [--mig PROFILE]]\n"
            "  lists the GPU database (datasheet figures, dense tensor "
            "TFLOP/s);\n"
            "  NAME (or an alias, e.g. h100) shows one device in detail.\n"
            "  --measured DIR  apply DIR/<name>.json from tools/devbench "
            "(default data/devices)\n"
            "  --mig PROFILE   one MIG instance of NAME (e.g. 3g.40gb): its "
            "features\n");
}

static const char *mark(const dlp_device *d, unsigned bit) {
    return (d->measured & bit) ? "*" : "";
}

static cJSON *device_json(const dlp_device *d) {
    cJSON *o = cJSON_CreateObject();
    if (!o) return NULL;
    cJSON_AddStringToObject(o, "name", d->name);
    cJSON *al = cJSON_AddArrayToObject(o, "aliases");
    for (const char *const *a = d->aliases; al && a && *a; a++)
        cJSON_AddItemToArray(al, cJSON_CreateString(*a));
    cJSON_AddStringToObject(o, "arch", d->arch);
    cJSON_AddStringToObject(o, "memory_type", d->memory_type);
    cJSON_AddNumberToObject(o, "sm_count", d->sm_count);
    cJSON_AddNumberToObject(o, "clock_mhz", d->clock_mhz);
    cJSON_AddNumberToObject(o, "mem_mib", d->mem_mib);
    cJSON_AddNumberToObject(o, "mem_bw_gbs", d->mem_bw_gbs);
    cJSON_AddNumberToObject(o, "l2_mib", d->l2_mib);
    if (d->l2_bw_gbs > 0) cJSON_AddNumberToObject(o, "l2_bw_gbs", d->l2_bw_gbs);
    char cc[16];
    snprintf(cc, sizeof cc, "%d.%d", d->cc_major, d->cc_minor);
    cJSON_AddStringToObject(o, "cc", cc);
    cJSON_AddNumberToObject(o, "fp32_tflops", d->fp32_tflops);
    cJSON_AddNumberToObject(o, "fp16_tc_tflops", d->fp16_tc_tflops);
    cJSON_AddNumberToObject(o, "bf16_tc_tflops", d->bf16_tc_tflops);
    cJSON_AddNumberToObject(o, "tdp_w", d->tdp_w);
    cJSON_AddNumberToObject(o, "launch_us", d->launch_us);
    cJSON *pr = cJSON_AddArrayToObject(o, "precisions");
    static const char *const precs[] = {"fp32", "tf32", "fp16", "bf16", "fp8",
                                        "int8"};
    for (size_t i = 0; pr && i < sizeof precs / sizeof precs[0]; i++)
        if (dlp_device_supports(d, precs[i]))
            cJSON_AddItemToArray(pr, cJSON_CreateString(precs[i]));
    cJSON *mig = cJSON_AddArrayToObject(o, "mig");
    for (int i = 0; mig && i < d->n_mig; i++) {
        cJSON *m = cJSON_CreateObject();
        if (!m) break;
        cJSON_AddStringToObject(m, "name", d->mig[i].name);
        cJSON_AddNumberToObject(m, "slices", d->mig[i].slices);
        cJSON_AddNumberToObject(m, "mem_eighths", d->mig[i].mem_eighths);
        cJSON_AddNumberToObject(m, "mem_gb", d->mig[i].mem_gb);
        cJSON_AddNumberToObject(m, "sm_count", d->mig[i].sm_count);
        cJSON_AddNumberToObject(m, "max_instances", d->mig[i].max_instances);
        cJSON_AddItemToArray(mig, m);
    }
    double f[DLP_DEVICE_NFEATURES];
    dlp_device_features(d, NULL, f, DLP_DEVICE_NFEATURES);
    cJSON *fo = cJSON_AddObjectToObject(o, "features");
    for (int i = 0; fo && i < DLP_DEVICE_NFEATURES; i++)
        cJSON_AddNumberToObject(fo, dlp_device_feature_name(i), f[i]);
    cJSON *ms = cJSON_AddArrayToObject(o, "measured");
    static const struct { unsigned bit; const char *name; } bits[] = {
        {DLP_DEVM_SM, "sm_count"}, {DLP_DEVM_CLOCK, "clock_mhz"},
        {DLP_DEVM_MEM, "mem_mib"}, {DLP_DEVM_MEM_BW, "mem_bw_gbs"},
        {DLP_DEVM_L2, "l2_mib"}, {DLP_DEVM_CC, "cc"},
        {DLP_DEVM_FP32, "fp32_tflops"}, {DLP_DEVM_FP16, "fp16_tc_tflops"},
        {DLP_DEVM_BF16, "bf16_tc_tflops"}, {DLP_DEVM_L2_BW, "l2_bw_gbs"},
        {DLP_DEVM_LAUNCH, "launch_us"}};
    for (size_t i = 0; ms && i < sizeof bits / sizeof bits[0]; i++)
        if (d->measured & bits[i].bit)
            cJSON_AddItemToArray(ms, cJSON_CreateString(bits[i].name));
    cJSON_AddStringToObject(o, "source", d->source);
    return o;
}

/* One table cell: the value, then '*' when measured, right-aligned. */
static void cell(double v, int prec, bool measured, int width) {
    char buf[32];
    snprintf(buf, sizeof buf, "%.*f%s", prec, v, measured ? "*" : "");
    printf(" %*s", width, buf);
}

static void print_row(const dlp_device *d) {
    printf("%-16s %-7s", d->name, d->arch);
    cell(d->sm_count, 0, d->measured & DLP_DEVM_SM, 5);
    cell(d->clock_mhz, 0, d->measured & DLP_DEVM_CLOCK, 6);
    cell(d->mem_mib / 1024, 1, d->measured & DLP_DEVM_MEM, 7);
    cell(d->mem_bw_gbs, 0, d->measured & DLP_DEVM_MEM_BW, 7);
    cell(d->l2_mib, 1, d->measured & DLP_DEVM_L2, 6);
    cell(d->cc_major + d->cc_minor / 10.0, 1, d->measured & DLP_DEVM_CC, 4);
    cell(d->fp32_tflops, 1, d->measured & DLP_DEVM_FP32, 7);
    cell(d->fp16_tc_tflops, 1, d->measured & DLP_DEVM_FP16, 8);
    cell(d->bf16_tc_tflops, 1, d->measured & DLP_DEVM_BF16, 8);
    cell(d->tdp_w, 0, false, 5);
    printf(" %3d\n", d->n_mig);
}

static void print_detail(const dlp_device *d) {
    printf("%s (%s, %s)%s\n", d->name, d->arch, d->memory_type,
           d->measured ? "  * = measured on the card" : "");
    printf("  aliases:");
    for (const char *const *a = d->aliases; a && *a; a++)
        printf(" \"%s\"", *a);
    printf("\n");
    printf("  SMs %d%s, boost %.0f MHz%s, compute capability %d.%d%s\n",
           d->sm_count, mark(d, DLP_DEVM_SM), d->clock_mhz,
           mark(d, DLP_DEVM_CLOCK), d->cc_major, d->cc_minor,
           mark(d, DLP_DEVM_CC));
    printf("  memory %.0f MiB%s, %.0f GB/s%s; L2 %.1f MiB%s", d->mem_mib,
           mark(d, DLP_DEVM_MEM), d->mem_bw_gbs, mark(d, DLP_DEVM_MEM_BW),
           d->l2_mib, mark(d, DLP_DEVM_L2));
    if (d->l2_bw_gbs > 0)
        printf(", %.0f GB/s%s", d->l2_bw_gbs, mark(d, DLP_DEVM_L2_BW));
    printf("\n  peak TFLOP/s: FP32 %.1f%s, FP16 tensor %.1f%s, BF16 tensor "
           "%.1f%s (dense)\n", d->fp32_tflops, mark(d, DLP_DEVM_FP32),
           d->fp16_tc_tflops, mark(d, DLP_DEVM_FP16), d->bf16_tc_tflops,
           mark(d, DLP_DEVM_BF16));
    printf("  TDP %.0f W; kernel launch %.1f us%s\n", d->tdp_w, d->launch_us,
           d->measured & DLP_DEVM_LAUNCH ? "*" : " (estimate)");
    printf("  precisions:");
    static const char *const precs[] = {"fp32", "tf32", "fp16", "bf16", "fp8",
                                        "int8"};
    for (size_t i = 0; i < sizeof precs / sizeof precs[0]; i++)
        if (dlp_device_supports(d, precs[i])) printf(" %s", precs[i]);
    printf("\n  source: %s (docs/DEVICES.md)\n", d->source);
    if (d->n_mig) {
        printf("  MIG profiles:   slices  memory  SMs  instances\n");
        for (int i = 0; i < d->n_mig; i++)
            printf("    %-12s %5d/7   %2d/8  %4d  %5d\n", d->mig[i].name,
                   d->mig[i].slices, d->mig[i].mem_eighths, d->mig[i].sm_count,
                   d->mig[i].max_instances);
    } else {
        printf("  MIG: not supported\n");
    }
    double f[DLP_DEVICE_NFEATURES];
    dlp_device_features(d, NULL, f, DLP_DEVICE_NFEATURES);
    printf("  features:");
    for (int i = 0; i < DLP_DEVICE_NFEATURES; i++)
        printf("%s %s=%.4g", i % 5 == 0 && i ? "\n           " : "",
               dlp_device_feature_name(i), f[i]);
    printf("\n");
}

int cmd_devices(int argc, char **argv) {
    bool json = false;
    const char *name = NULL, *mdir = "data/devices", *mig = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json")) {
            json = true;
        } else if (!strcmp(argv[i], "--mig") && i + 1 < argc) {
            mig = argv[++i];
        } else if (!strcmp(argv[i], "--no-measured")) {
            mdir = NULL;
        } else if (!strcmp(argv[i], "--measured") && i + 1 < argc) {
            mdir = argv[++i];
        } else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return 0;
        } else if (argv[i][0] == '-' || name) {
            fprintf(stderr, "dlperf devices: unexpected argument '%s'\n",
                    argv[i]);
            usage(stderr);
            return 2;
        } else {
            name = argv[i];
        }
    }
    struct stat st;
    if (mdir && stat(mdir, &st) != 0) mdir = NULL; /* no measurements yet */
    dlp_error err;
    if (name) {
        dlp_device d;
        if (dlp_device_load(name, mdir, &d, &err) != DLP_OK) {
            fprintf(stderr, "dlperf devices: %s\n", err.msg);
            return 1;
        }
        if (mig) {
            dlp_mig_profile p;
            if (dlp_device_mig(&d, mig, &p, &err) != DLP_OK) {
                fprintf(stderr, "dlperf devices: %s\n", err.msg);
                return 1;
            }
            double f[DLP_DEVICE_NFEATURES];
            dlp_device_features(&d, &p, f, DLP_DEVICE_NFEATURES);
            if (json) {
                cJSON *o = cJSON_CreateObject();
                cJSON_AddStringToObject(o, "device", d.name);
                cJSON_AddStringToObject(o, "mig", p.name);
                cJSON_AddNumberToObject(o, "slices", p.slices);
                cJSON_AddNumberToObject(o, "mem_eighths", p.mem_eighths);
                cJSON_AddNumberToObject(o, "sm_count", p.sm_count);
                cJSON_AddNumberToObject(o, "max_instances", p.max_instances);
                cJSON *fo = cJSON_AddObjectToObject(o, "features");
                for (int i = 0; fo && i < DLP_DEVICE_NFEATURES; i++)
                    cJSON_AddNumberToObject(fo, dlp_device_feature_name(i), f[i]);
                char *txt = cJSON_Print(o);
                cJSON_Delete(o);
                if (!txt) return 1;
                printf("%s\n", txt);
                free(txt);
            } else {
                printf("%s MIG %s: %d/7 compute slices, %d/8 memory, %d SMs, up to "
                       "%d per GPU\n  features:", d.name, p.name, p.slices,
                       p.mem_eighths, p.sm_count, p.max_instances);
                for (int i = 0; i < DLP_DEVICE_NFEATURES; i++)
                    printf("%s %s=%.4g", i % 5 == 0 && i ? "\n           " : "",
                           dlp_device_feature_name(i), f[i]);
                printf("\n");
            }
            return 0;
        }
        if (json) {
            cJSON *o = device_json(&d);
            char *s = o ? cJSON_Print(o) : NULL;
            cJSON_Delete(o);
            if (!s) {
                fprintf(stderr, "dlperf devices: out of memory\n");
                return 1;
            }
            printf("%s\n", s);
            free(s);
        } else {
            print_detail(&d);
        }
        return 0;
    }
    cJSON *arr = json ? cJSON_CreateArray() : NULL;
    if (json && !arr) return 1;
    if (!json)
        printf("%-16s %-7s %5s %6s %7s %7s %6s %4s %7s %8s %8s %5s %3s\n",
               "name", "arch", "SMs", "MHz", "GiB", "GB/s", "L2MiB", "cc",
               "FP32", "FP16tc", "BF16tc", "TDP", "MIG");
    int rc = 0;
    for (int i = 0; i < dlp_device_count(); i++) {
        dlp_device d;
        if (dlp_device_load(dlp_device_at(i)->name, mdir, &d, &err) != DLP_OK) {
            fprintf(stderr, "dlperf devices: %s\n", err.msg);
            d = *dlp_device_at(i);
            rc = 1;
        }
        if (json)
            cJSON_AddItemToArray(arr, device_json(&d));
        else
            print_row(&d);
    }
    if (json) {
        char *s = cJSON_Print(arr);
        cJSON_Delete(arr);
        if (!s) return 1;
        printf("%s\n", s);
        free(s);
    } else {
        printf("TFLOP/s peak; tensor figures dense (not sparse); * = measured "
               "(%s)\n", mdir ? mdir : "none");
    }
    return rc;
}
