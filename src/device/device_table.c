/*
 * device_table.c — the built-in GPU table: datasheet figures of each card,
 * its names and its MIG profiles. Every figure's source is listed in
 * docs/DEVICES.md under the card's `source` id. Conventions:
 *   - tensor-core TFLOP/s are DENSE (datasheets print sparse = 2x dense);
 *     FP16 with FP32 accumulate;
 *   - mem_mib is nominal: datasheet GB x 1024 (nvidia-smi shows a little
 *     less usable: 81559 MiB on an H100 80GB);
 *   - launch_us is an estimate, not a datasheet figure: host-side cost of
 *     one kernel launch (measured values replace it, tools/devbench);
 *   - MIG rows: name, compute slices (of 7), memory slices (of 8), GB as
 *     named, SMs of the instance, instances per GPU.
 */
#include "device/device.h"

#define LAUNCH_US_ESTIMATE 4.0

/* ---- MIG profiles (NVIDIA MIG User Guide, "Supported MIG Profiles";
 *      SM counts as reported by nvidia-smi mig -lgip) ---------------------- */

static const dlp_mig_profile MIG_A100_40[] = {
    {"1g.5gb", 1, 1, 5, 14, 7},   {"1g.10gb", 1, 2, 10, 14, 4},
    {"2g.10gb", 2, 2, 10, 28, 3}, {"3g.20gb", 3, 4, 20, 42, 2},
    {"4g.20gb", 4, 4, 20, 56, 1}, {"7g.40gb", 7, 8, 40, 98, 1},
};
static const dlp_mig_profile MIG_A100_80[] = {
    {"1g.10gb", 1, 1, 10, 14, 7}, {"1g.20gb", 1, 2, 20, 14, 4},
    {"2g.20gb", 2, 2, 20, 28, 3}, {"3g.40gb", 3, 4, 40, 42, 2},
    {"4g.40gb", 4, 4, 40, 56, 1}, {"7g.80gb", 7, 8, 80, 98, 1},
};
static const dlp_mig_profile MIG_H100_SXM[] = {
    {"1g.10gb", 1, 1, 10, 16, 7}, {"1g.20gb", 1, 2, 20, 26, 4},
    {"2g.20gb", 2, 2, 20, 32, 3}, {"3g.40gb", 3, 4, 40, 60, 2},
    {"4g.40gb", 4, 4, 40, 64, 1}, {"7g.80gb", 7, 8, 80, 132, 1},
};
static const dlp_mig_profile MIG_H100_PCIE[] = {
    {"1g.10gb", 1, 1, 10, 14, 7}, {"1g.20gb", 1, 2, 20, 14, 4},
    {"2g.20gb", 2, 2, 20, 30, 3}, {"3g.40gb", 3, 4, 40, 46, 2},
    {"4g.40gb", 4, 4, 40, 62, 1}, {"7g.80gb", 7, 8, 80, 114, 1},
};
/* H200: same GH100 die and GPC layout as H100 SXM5, so the same SMs. */
static const dlp_mig_profile MIG_H200[] = {
    {"1g.18gb", 1, 1, 18, 16, 7},  {"1g.35gb", 1, 2, 35, 26, 4},
    {"2g.35gb", 2, 2, 35, 32, 3},  {"3g.71gb", 3, 4, 71, 60, 2},
    {"4g.71gb", 4, 4, 71, 64, 1},  {"7g.141gb", 7, 8, 141, 132, 1},
};
#define MIG(a) a, (int)(sizeof(a) / sizeof((a)[0]))

/* ---- names ---------------------------------------------------------------- */

static const char *const AL_H100_SXM[] = {
    "h100", "h100-sxm", "h100-sxm5", "H100 SXM5 80GB", "NVIDIA H100 80GB HBM3",
    "NVIDIA H100 SXM5 80GB", NULL};
static const char *const AL_H100_PCIE[] = {
    "h100-pcie", "NVIDIA H100 PCIe", "H100 PCIe 80GB", NULL};
static const char *const AL_H200[] = {
    "h200", "h200-sxm", "h200-sxm5", "NVIDIA H200", "H200 SXM 141GB",
    "H200-SXM5-141GB", NULL};
static const char *const AL_A100_SXM40[] = {
    "a100-40gb", "a100-sxm4-40gb", "NVIDIA A100-SXM4-40GB", NULL};
static const char *const AL_A100_SXM80[] = {
    "a100", "a100-80gb", "a100-sxm4", "NVIDIA A100-SXM4-80GB", NULL};
static const char *const AL_A100_PCIE40[] = {
    "a100-pcie-40gb", "NVIDIA A100-PCIE-40GB", NULL};
static const char *const AL_A100_PCIE80[] = {
    "a100-pcie", "a100-pcie-80gb", "NVIDIA A100 80GB PCIe", NULL};
static const char *const AL_V100_16[] = {
    "v100", "v100-16gb", "Tesla V100-SXM2-16GB", NULL};
static const char *const AL_V100_32[] = {
    "v100-32gb", "Tesla V100-SXM2-32GB", NULL};
static const char *const AL_T4[] = {"t4", "Tesla T4", "NVIDIA T4", NULL};
static const char *const AL_A10G[] = {"a10g", "NVIDIA A10G", NULL};
static const char *const AL_L4[] = {"l4", "NVIDIA L4", NULL};
static const char *const AL_L40S[] = {"l40s", "NVIDIA L40S", NULL};

/* ---- the table ------------------------------------------------------------ */
/* name, aliases, arch, memory type, SMs, boost MHz, MiB, GB/s, L2 MiB,
 * L2 GB/s, cc, FP32, FP16 TC, BF16 TC, TDP W, launch us, MIG, source */

const dlp_device dlp_device_table[] = {
    {"H100-SXM5-80GB", AL_H100_SXM, "hopper", "HBM3", 132, 1980, 80 * 1024.0,
     3350, 50, 0, 9, 0, 67, 989.4, 989.4, 700, LAUNCH_US_ESTIMATE,
     MIG(MIG_H100_SXM), "nv-h100-ds", 0},
    {"H100-PCIe-80GB", AL_H100_PCIE, "hopper", "HBM2e", 114, 1755,
     80 * 1024.0, 2000, 50, 0, 9, 0, 51, 756, 756, 350, LAUNCH_US_ESTIMATE,
     MIG(MIG_H100_PCIE), "nv-h100-ds", 0},
    {"H200-SXM-141GB", AL_H200, "hopper", "HBM3e", 132, 1980, 141 * 1024.0,
     4800, 50, 0, 9, 0, 67, 989.4, 989.4, 700, LAUNCH_US_ESTIMATE,
     MIG(MIG_H200), "nv-h200-ds", 0},
    {"A100-SXM4-40GB", AL_A100_SXM40, "ampere", "HBM2", 108, 1410,
     40 * 1024.0, 1555, 40, 0, 8, 0, 19.5, 312, 312, 400, LAUNCH_US_ESTIMATE,
     MIG(MIG_A100_40), "nv-a100-ds", 0},
    {"A100-SXM4-80GB", AL_A100_SXM80, "ampere", "HBM2e", 108, 1410,
     80 * 1024.0, 2039, 40, 0, 8, 0, 19.5, 312, 312, 400, LAUNCH_US_ESTIMATE,
     MIG(MIG_A100_80), "nv-a100-ds", 0},
    {"A100-PCIe-40GB", AL_A100_PCIE40, "ampere", "HBM2", 108, 1410,
     40 * 1024.0, 1555, 40, 0, 8, 0, 19.5, 312, 312, 250, LAUNCH_US_ESTIMATE,
     MIG(MIG_A100_40), "nv-a100-ds", 0},
    {"A100-PCIe-80GB", AL_A100_PCIE80, "ampere", "HBM2e", 108, 1410,
     80 * 1024.0, 1935, 40, 0, 8, 0, 19.5, 312, 312, 300, LAUNCH_US_ESTIMATE,
     MIG(MIG_A100_80), "nv-a100-ds", 0},
    {"V100-SXM2-16GB", AL_V100_16, "volta", "HBM2", 80, 1530, 16 * 1024.0,
     900, 6, 0, 7, 0, 15.7, 125, 0, 300, LAUNCH_US_ESTIMATE, NULL, 0,
     "nv-v100-ds", 0},
    {"V100-SXM2-32GB", AL_V100_32, "volta", "HBM2", 80, 1530, 32 * 1024.0,
     900, 6, 0, 7, 0, 15.7, 125, 0, 300, LAUNCH_US_ESTIMATE, NULL, 0,
     "nv-v100-ds", 0},
    {"T4-16GB", AL_T4, "turing", "GDDR6", 40, 1590, 16 * 1024.0, 320, 4, 0,
     7, 5, 8.1, 65, 0, 70, LAUNCH_US_ESTIMATE, NULL, 0, "nv-t4-ds", 0},
    {"A10G-24GB", AL_A10G, "ampere", "GDDR6", 80, 1710, 24 * 1024.0, 600, 6,
     0, 8, 6, 35, 70, 70, 300, LAUNCH_US_ESTIMATE, NULL, 0, "aws-a10g", 0},
    {"L4-24GB", AL_L4, "ada", "GDDR6", 58, 2040, 24 * 1024.0, 300, 48, 0, 8,
     9, 30.3, 121, 121, 72, LAUNCH_US_ESTIMATE, NULL, 0, "nv-l4-ds", 0},
    {"L40S-48GB", AL_L40S, "ada", "GDDR6", 142, 2520, 48 * 1024.0, 864, 96,
     0, 8, 9, 91.6, 362.05, 362.05, 350, LAUNCH_US_ESTIMATE, NULL, 0,
     "nv-l40s-ds", 0},
};

const int dlp_device_table_len =
    (int)(sizeof dlp_device_table / sizeof dlp_device_table[0]);
