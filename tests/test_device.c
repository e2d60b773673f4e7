/*
 * test_device.c — the device database: lookups and aliases, unknown names,
 * MIG profiles (the NVIDIA MIG User Guide's names, memory and instance
 * counts), precision support, the feature vector, measured-JSON overrides
 * and their error cases, and the `dlperf devices` command's exit codes.
 * Datasheet figures are cross-checked against an independent formula:
 * peak FP32 = SMs x FP32 lanes per SM x 2 x boost clock.
 */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "dlperf.h"

static char tmpdir[64];
static const char *argv0;

static void write_file(const char *name, const char *text) {
    char p[256];
    snprintf(p, sizeof p, "%s/%s", tmpdir, name);
    FILE *f = fopen(p, "w");
    if (!f) return;
    fputs(text, f);
    fclose(f);
}

static const char *tmp_path(const char *name) {
    static char p[256];
    snprintf(p, sizeof p, "%s/%s", tmpdir, name);
    return p;
}

static void test_table_sane(void) {
    CHECK(dlp_device_count() >= 13);
    CHECK(dlp_device_at(-1) == NULL && dlp_device_at(dlp_device_count()) == NULL);
    for (int i = 0; i < dlp_device_count(); i++) {
        const dlp_device *d = dlp_device_at(i);
        CHECK(d->name && d->name[0] && d->source && d->arch && d->memory_type);
        CHECK(d->sm_count > 0 && d->clock_mhz > 500 && d->mem_mib >= 16 * 1024);
        CHECK(d->mem_bw_gbs > 100 && d->l2_mib > 0 && d->tdp_w > 0);
        CHECK(d->fp16_tc_tflops > d->fp32_tflops && d->launch_us > 0);
        CHECK(d->measured == 0);
        /* peak FP32 = SMs x lanes x 2 FLOP (FMA) x clock: 64 lanes per SM
         * on Volta, Turing and GA100; 128 on GA10x, Ada and Hopper. */
        int cc = d->cc_major * 10 + d->cc_minor;
        int lanes = (cc <= 80) ? 64 : 128;
        double fp32 = d->sm_count * lanes * 2.0 * d->clock_mhz * 1e6 / 1e12;
        CHECK_MSG(fabs(fp32 - d->fp32_tflops) <= 0.02 * d->fp32_tflops,
                  "%s: %.2f vs formula %.2f", d->name, d->fp32_tflops, fp32);
        /* every name and alias finds this very device */
        dlp_device got;
        dlp_error err;
        CHECK(dlp_device_find(d->name, &got, &err) == DLP_OK &&
              !strcmp(got.name, d->name));
        for (const char *const *a = d->aliases; a && *a; a++)
            CHECK_MSG(dlp_device_find(*a, &got, &err) == DLP_OK &&
                          !strcmp(got.name, d->name),
                      "alias %s", *a);
        for (int j = 0; j < i; j++)
            CHECK(strcmp(dlp_device_at(j)->name, d->name) != 0);
    }
}

static void test_lookup_aliases(void) {
    static const struct { const char *q, *want; } cases[] = {
        {"h100", "H100-SXM5-80GB"},
        {"H100-SXM5-80GB", "H100-SXM5-80GB"},
        {"NVIDIA H100 80GB HBM3", "H100-SXM5-80GB"},
        {"h100_sxm5_80gb", "H100-SXM5-80GB"},
        {"NVIDIA H100 PCIe", "H100-PCIe-80GB"},
        {"NVIDIA H200", "H200-SXM-141GB"},
        {"H200-SXM-141GB", "H200-SXM-141GB"},
        {"a100", "A100-SXM4-80GB"},
        {"NVIDIA A100-SXM4-40GB", "A100-SXM4-40GB"},
        {"NVIDIA A100 80GB PCIe", "A100-PCIe-80GB"},
        {"Tesla V100-SXM2-32GB", "V100-SXM2-32GB"},
        {"Tesla T4", "T4-16GB"},
        {"NVIDIA A10G", "A10G-24GB"},
        {"l4", "L4-24GB"},
        {"NVIDIA L40S", "L40S-48GB"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        dlp_device d;
        dlp_error err;
        CHECK_MSG(dlp_device_find(cases[i].q, &d, &err) == DLP_OK &&
                      !strcmp(d.name, cases[i].want),
                  "%s", cases[i].q);
    }
    dlp_device d;
    CHECK(dlp_device_find("h100", &d, NULL) == DLP_OK);
    CHECK(d.sm_count == 132 && d.cc_major == 9 && d.cc_minor == 0);
    CHECK(d.fp16_tc_tflops == 989.4 && d.mem_bw_gbs == 3350 && d.l2_mib == 50);
    CHECK(dlp_device_find("h200", &d, NULL) == DLP_OK && d.mem_bw_gbs == 4800 &&
          d.mem_mib == 141 * 1024);
}

static void test_unknown_device(void) {
    dlp_device d;
    dlp_error err;
    CHECK(dlp_device_find("H300-SXM9", &d, &err) == DLP_ERR_NOT_FOUND);
    CHECK(strstr(err.msg, "H300-SXM9") && strstr(err.msg, "H100-SXM5-80GB") &&
          strstr(err.msg, "L40S-48GB"));
    CHECK(dlp_device_find("", &d, &err) == DLP_ERR_NOT_FOUND);
    CHECK(dlp_device_find("---", &d, &err) == DLP_ERR_NOT_FOUND);
    CHECK(dlp_device_find(NULL, &d, &err) == DLP_ERR_ARG);
    CHECK(dlp_device_load("nope", NULL, &d, &err) == DLP_ERR_NOT_FOUND);
}

/* The MIG User Guide's profile names, in order, per card. */
static void expect_profiles(const char *dev, const char *names[6], int gb) {
    dlp_device d;
    dlp_error err;
    CHECK(dlp_device_find(dev, &d, &err) == DLP_OK);
    CHECK_MSG(d.n_mig == 6, "%s has %d profiles", dev, d.n_mig);
    for (int i = 0; i < 6 && i < d.n_mig; i++) {
        dlp_mig_profile p;
        CHECK_MSG(!strcmp(d.mig[i].name, names[i]), "%s: %s", dev, d.mig[i].name);
        CHECK(dlp_device_mig(&d, names[i], &p, &err) == DLP_OK);
        /* memory as named = card memory x memory slices / 8, rounded */
        CHECK_MSG(fabs(p.mem_gb - gb * p.mem_eighths / 8.0) <= 1.0, "%s %s", dev,
                  p.name);
        CHECK(p.slices * p.max_instances <= 7 && p.mem_eighths * p.max_instances <= 8);
        CHECK(p.sm_count > 0 && p.sm_count <= d.sm_count);
        char gname[32];
        snprintf(gname, sizeof gname, "%dg.", p.slices);
        CHECK(!strncmp(p.name, gname, strlen(gname)));
    }
    CHECK(d.mig[5].slices == 7 && d.mig[5].mem_eighths == 8 &&
          d.mig[5].max_instances == 1 && d.mig[0].max_instances == 7);
}

static void test_mig_profiles(void) {
    const char *h100[6] = {"1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"};
    const char *a100_40[6] = {"1g.5gb", "1g.10gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb"};
    const char *h200[6] = {"1g.18gb", "1g.35gb", "2g.35gb", "3g.71gb", "4g.71gb", "7g.141gb"};
    expect_profiles("H100-SXM5-80GB", h100, 80);
    expect_profiles("H100-PCIe-80GB", h100, 80);
    expect_profiles("A100-SXM4-80GB", h100, 80);
    expect_profiles("A100-PCIe-80GB", h100, 80);
    expect_profiles("A100-SXM4-40GB", a100_40, 40);
    expect_profiles("A100-PCIe-40GB", a100_40, 40);
    expect_profiles("H200-SXM-141GB", h200, 141);
    dlp_device d;
    dlp_mig_profile p;
    dlp_error err;
    dlp_device_find("h100", &d, &err);
    CHECK(dlp_device_mig(&d, "MIG 3g.40gb", &p, &err) == DLP_OK);
    CHECK(p.slices == 3 && p.mem_gb == 40 && p.sm_count == 60 && p.max_instances == 2);
    CHECK(dlp_device_mig(&d, "7G.80GB", &p, &err) == DLP_OK && p.sm_count == 132);
    CHECK(dlp_device_mig(&d, "1g.5gb", &p, &err) == DLP_ERR_NOT_FOUND);
    CHECK(strstr(err.msg, "1g.5gb") && strstr(err.msg, "3g.40gb"));
    dlp_device_find("a100-40gb", &d, &err);
    CHECK(dlp_device_mig(&d, "1g.5gb", &p, &err) == DLP_OK && p.mem_gb == 5 &&
          p.max_instances == 7 && p.sm_count == 14);
    dlp_device_find("t4", &d, &err);
    CHECK(d.n_mig == 0 && d.mig == NULL);
    CHECK(dlp_device_mig(&d, "1g.5gb", &p, &err) == DLP_ERR_NOT_FOUND);
    CHECK(strstr(err.msg, "does not support MIG") != NULL);
}

static void test_precisions(void) {
    dlp_device d;
    static const struct { const char *dev, *prec; int want; } cases[] = {
        {"v100", "bf16", 0}, {"t4", "bf16", 0}, {"a100", "bf16", 1},
        {"h100", "bf16", 1}, {"l4", "bf16", 1}, {"v100", "fp16", 1},
        {"a100", "fp8", 0},  {"h100", "fp8", 1}, {"l40s", "fp8", 1},
        {"t4", "tf32", 0},   {"a10g", "tf32", 1}, {"t4", "int8", 1},
        {"h100", "fp32", 1}, {"h100", "fp64x", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        dlp_device_find(cases[i].dev, &d, NULL);
        CHECK_MSG(dlp_device_supports(&d, cases[i].prec) == cases[i].want, "%s %s",
                  cases[i].dev, cases[i].prec);
    }
    dlp_device_find("v100", &d, NULL);
    CHECK(d.bf16_tc_tflops == 0);
}

static void test_features(void) {
    CHECK(DLP_DEVICE_NFEATURES == 13);
    CHECK(!strcmp(dlp_device_feature_name(0), "sm_count"));
    CHECK(!strcmp(dlp_device_feature_name(12), "ridge_fp16"));
    CHECK(dlp_device_feature_name(13) == NULL && dlp_device_feature_name(-1) == NULL);
    dlp_device d;
    dlp_device_find("h100", &d, NULL);
    double f[DLP_DEVICE_NFEATURES + 1];
    f[DLP_DEVICE_NFEATURES] = -7;
    CHECK(dlp_device_features(&d, NULL, f, DLP_DEVICE_NFEATURES + 1) == 13);
    CHECK(f[DLP_DEVICE_NFEATURES] == -7);
    CHECK(f[0] == 132 && f[1] == 1980 && f[2] == 80 && f[3] == 3350 && f[4] == 50);
    CHECK_CLOSE(f[5], 9.0, 1e-12);
    CHECK(f[6] == 67 && f[7] == 989.4 && f[8] == 989.4 && f[9] == 700);
    CHECK_CLOSE(f[11], 67e3 / 3350, 1e-12);
    CHECK_CLOSE(f[12], 989.4e3 / 3350, 1e-12);
    dlp_mig_profile p;
    dlp_device_mig(&d, "3g.40gb", &p, NULL);
    CHECK(dlp_device_features(&d, &p, f, DLP_DEVICE_NFEATURES) == 13);
    CHECK(f[0] == 60 && f[2] == 40 && f[3] == 3350 / 2.0 && f[4] == 25);
    CHECK_CLOSE(f[7], 989.4 * 60 / 132, 1e-12);
    CHECK_CLOSE(f[12], (989.4 * 60 / 132) * 1e3 / (3350 / 2.0), 1e-12);
    double g[3] = {0, 0, -1};
    CHECK(dlp_device_features(&d, NULL, g, 2) == 13 && g[1] == 1980 && g[2] == -1);
    dlp_device_find("v100", &d, NULL);
    dlp_device_features(&d, NULL, f, DLP_DEVICE_NFEATURES);
    CHECK(f[8] == 0 && f[5] == 7.0);
}

static void test_measured_override(void) {
    write_file("H100-SXM5-80GB.json",
               "{\"gpu_name\": \"NVIDIA H100 80GB HBM3\", \"sm_count\": 132,\n"
               " \"clock_mhz\": 1755, \"mem_mib\": 81559, \"l2_bytes\": 52428800,\n"
               " \"cc\": \"9.0\", \"fp32_tflops\": 51.2, \"fp16_tc_tflops\": 702.5,\n"
               " \"bf16_tc_tflops\": null, \"hbm_gbs\": 2950.5, \"l2_gbs\": 7400,\n"
               " \"launch_us\": 2.4, \"measured_utc\": \"2026-11-26T04:10:00Z\",\n"
               " \"tool\": \"devbench 1\"}\n");
    dlp_device d;
    dlp_error err;
    CHECK_MSG(dlp_device_load("h100", tmpdir, &d, &err) == DLP_OK, "%s", err.msg);
    CHECK(d.clock_mhz == 1755 && d.mem_mib == 81559 && d.l2_mib == 50);
    CHECK(d.fp32_tflops == 51.2 && d.fp16_tc_tflops == 702.5 && d.mem_bw_gbs == 2950.5);
    CHECK(d.l2_bw_gbs == 7400 && d.launch_us == 2.4 && d.cc_major == 9);
    CHECK(d.bf16_tc_tflops == 989.4); /* null keeps the datasheet */
    unsigned want = DLP_DEVM_SM | DLP_DEVM_CLOCK | DLP_DEVM_MEM | DLP_DEVM_L2 |
                    DLP_DEVM_CC | DLP_DEVM_FP32 | DLP_DEVM_FP16 | DLP_DEVM_MEM_BW |
                    DLP_DEVM_L2_BW | DLP_DEVM_LAUNCH;
    CHECK_MSG(d.measured == want, "measured bits %x", d.measured);
    CHECK(!(d.measured & DLP_DEVM_BF16));
    /* the table itself is untouched; other cards have no file */
    CHECK(dlp_device_at(0)->clock_mhz == 1980 && dlp_device_at(0)->measured == 0);
    CHECK(dlp_device_load("a100", tmpdir, &d, &err) == DLP_OK && d.measured == 0);
    CHECK(dlp_device_load("h100", NULL, &d, &err) == DLP_OK && d.measured == 0);
    /* a partial file: only what it has */
    write_file("part.json", "{\"launch_us\": 3.5, \"cc\": 8.6}");
    dlp_device_find("a10g", &d, NULL);
    CHECK(dlp_device_apply_measured(&d, tmp_path("part.json"), &err) == DLP_OK);
    CHECK(d.launch_us == 3.5 && d.cc_major == 8 && d.cc_minor == 6);
    CHECK(d.measured == (DLP_DEVM_LAUNCH | DLP_DEVM_CC));
}

static void expect_bad(const char *text, dlp_status want, const char *words) {
    write_file("bad.json", text);
    dlp_device d, before;
    dlp_error err;
    dlp_device_find("h100", &d, NULL);
    before = d;
    dlp_status s = dlp_device_apply_measured(&d, tmp_path("bad.json"), &err);
    CHECK_MSG(s == want, "%s -> %d", text, s);
    CHECK_MSG(strstr(err.msg, "bad.json") && strstr(err.msg, words), "%s: %s", text,
              err.msg);
    CHECK(memcmp(&d, &before, sizeof d) == 0);
}

static void test_measured_corrupt(void) {
    expect_bad("{\"sm_count\": 132, \"clock_mhz\": 19", DLP_ERR_FORMAT, "invalid JSON");
    expect_bad("", DLP_ERR_FORMAT, "invalid JSON");
    expect_bad("[1, 2]", DLP_ERR_FORMAT, "not a JSON object");
    expect_bad("{\"sm_count\": \"132\"}", DLP_ERR_FORMAT, "sm_count");
    expect_bad("{\"sm_count\": 13.5}", DLP_ERR_FORMAT, "integer");
    expect_bad("{\"hbm_gbs\": -3}", DLP_ERR_FORMAT, "positive");
    expect_bad("{\"fp16_tc_tflops\": 0}", DLP_ERR_FORMAT, "positive");
    expect_bad("{\"cc\": \"nine\"}", DLP_ERR_FORMAT, "cc");
    expect_bad("{\"gpu_name\": 7}", DLP_ERR_FORMAT, "gpu_name");
    expect_bad("{\"gpu_name\": \"NVIDIA A100-SXM4-40GB\", \"sm_count\": 108}",
               DLP_ERR_FORMAT, "A100-SXM4-40GB");
    expect_bad("{\"clock_mhz\": 1980} trailing", DLP_ERR_FORMAT, "invalid JSON");
    dlp_device d;
    dlp_error err;
    dlp_device_find("h100", &d, NULL);
    CHECK(dlp_device_apply_measured(&d, tmp_path("absent.json"), &err) == DLP_ERR_IO);
    CHECK(dlp_device_apply_measured(NULL, "x", &err) == DLP_ERR_ARG);
    /* a corrupt file in the measured dir fails the load, naming the file */
    write_file("L4-24GB.json", "{\"sm_count\": ");
    CHECK(dlp_device_load("l4", tmpdir, &d, &err) == DLP_ERR_FORMAT);
    CHECK(strstr(err.msg, "L4-24GB.json") != NULL);
}

/* Every measured file the collector committed (data/devices/<name>.json)
 * must be named after a known card and load cleanly. */
static void test_repo_measured(void) {
    DIR *d = opendir("data/devices");
    if (!d) {
        printf("  (data/devices absent: no measured files checked)\n");
        return;
    }
    struct dirent *e;
    int n = 0;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len < 6 || strcmp(e->d_name + len - 5, ".json")) continue;
        char name[256];
        snprintf(name, sizeof name, "%.*s", (int)(len - 5), e->d_name);
        dlp_device dev;
        dlp_error err;
        CHECK_MSG(dlp_device_find(name, &dev, &err) == DLP_OK && !strcmp(dev.name, name),
                  "data/devices/%s: not a canonical device name", e->d_name);
        CHECK_MSG(dlp_device_load(name, "data/devices", &dev, &err) == DLP_OK, "%s",
                  err.msg);
        CHECK_MSG(dev.measured != 0, "data/devices/%s: nothing measured", e->d_name);
        /* a measurement cannot beat the datasheet peak by much */
        const dlp_device *ds = NULL;
        for (int i = 0; i < dlp_device_count(); i++)
            if (!strcmp(dlp_device_at(i)->name, dev.name)) ds = dlp_device_at(i);
        CHECK(ds && dev.fp16_tc_tflops <= 1.1 * ds->fp16_tc_tflops &&
              dev.mem_bw_gbs <= 1.1 * ds->mem_bw_gbs && dev.sm_count == ds->sm_count);
        printf("  data/devices/%s: measured bits %#x\n", e->d_name, dev.measured);
        n++;
    }
    closedir(d);
    (void)n;
}

/* `dlperf devices` exit codes (the binary sits next to tests/). */
static void test_cli(void) {
    char bin[512], cmd[1200];
    snprintf(bin, sizeof bin, "%s", argv0);
    char *slash = strrchr(bin, '/');
    if (!slash) return;
    *slash = '\0';
    slash = strrchr(bin, '/');
    if (!slash) return;
    strcpy(slash, "/dlperf");
    if (access(bin, X_OK) != 0) {
        printf("  (%s absent: CLI not checked)\n", bin);
        return;
    }
    snprintf(cmd, sizeof cmd, "%s devices --no-measured >/dev/null", bin);
    CHECK(system(cmd) == 0);
    snprintf(cmd, sizeof cmd, "%s devices --json h100 | grep -q '\"sm_count\":\t132'", bin);
    CHECK(system(cmd) == 0);
    snprintf(cmd, sizeof cmd, "%s devices --measured %s h100 | grep -q '1755 MHz\\*'",
             bin, tmpdir);
    CHECK(system(cmd) == 0);
    snprintf(cmd, sizeof cmd,
             "%s devices --no-measured h100 --mig 3g.40gb | grep -q 'sm_count=60 '", bin);
    CHECK(system(cmd) == 0);
    snprintf(cmd, sizeof cmd, "%s devices t4 --mig 1g.5gb 2>/dev/null", bin);
    int rc0 = system(cmd);
    CHECK(WIFEXITED(rc0) && WEXITSTATUS(rc0) == 1);
    snprintf(cmd, sizeof cmd, "%s devices h300 2>/dev/null >/dev/null", bin);
    int rc = system(cmd);
    CHECK(WIFEXITED(rc) && WEXITSTATUS(rc) == 1);
    snprintf(cmd, sizeof cmd, "%s devices --bogus 2>/dev/null", bin);
    rc = system(cmd);
    CHECK(WIFEXITED(rc) && WEXITSTATUS(rc) == 2);
}

int main(int argc, char **argv) {
    (void)argc;
    argv0 = argv[0];
    snprintf(tmpdir, sizeof tmpdir, "/tmp/dlp_test_device_XXXXXX");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    RUN(test_table_sane);
    RUN(test_lookup_aliases);
    RUN(test_unknown_device);
    RUN(test_mig_profiles);
    RUN(test_precisions);
    RUN(test_features);
    RUN(test_measured_override);
    RUN(test_measured_corrupt);
    RUN(test_repo_measured);
    RUN(test_cli);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmpdir);
    return CHECK_DONE();
}
