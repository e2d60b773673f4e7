/*
 * predict_part.h — internal to libdlperf: the learned SM-partition latency
 * model (predict_part.c), fitted on the green-context kernel traces of the
 * dataset (kernels.csv.zst rows with `sms` set, data/FORMAT.md).
 *
 * The model. Every node of the analysed graph that launches a kernel costs,
 * on s of the device's S SMs,
 *     t(s) = L + max(tc x S / u(s), tm / min(cap, u(s) / B))
 *     u(s) = min(s, max(1, out_elems / E))       SMs the node can fill
 * with tc, tm its roofline compute and memory times on the whole device
 * (dlp_predict_roofline_visit), cap the bandwidth share of the partition
 * (1 for an SM partition, memory slices / 8 for MIG). Three parameters:
 *     L  us a kernel takes whatever its size (launch tail, sync, latency)
 *     E  output elements one SM's share covers: a node of out_elems
 *        elements keeps at most out_elems / E SMs busy (small kernels and
 *        batch 1 do not speed up with more SMs)
 *     B  SMs needed to saturate memory bandwidth
 * The latency factor of the partition is sum t(s) / sum t(S) (>= 1, and
 * never smaller for fewer SMs: u is nondecreasing in s). The parameters are
 * fitted by least squares on log factors (sum over configurations and SM
 * counts of (log predicted - log measured)^2): a coarse grid then a
 * pattern search in log space.
 *
 * The file (models/partition.csv): a text file of `key,value` lines
 * (`format,dlperf-partition-1` first; `#` comments): not a *.dlpm because
 * the predictor set loads every *.dlpm as a predictor of its targets, and
 * three numbers are best read and diffed as text.
 */
#ifndef DLP_PREDICT_PART_H
#define DLP_PREDICT_PART_H

#include "../graph/graph.h"
#include "../pred/pred.h"

#define DLP_PART_FILE "partition.csv"
#define DLP_PART_MAX_SMS 8      /* partition SM counts per configuration */

typedef struct {
    double lat_us;           /* L */
    double elems_per_sm;     /* E */
    double bw_sms;           /* B */
    /* recorded at fit time (informative) */
    int n_configs, n_models, n_points, folds;
    double cv_mape;          /* leave-models-out factor MAPE, % */
    double roofline_mape;    /* the roofline factor's (eager), % */
} dlp_part_model;

/* The per-node terms of one analysed graph on one device and precision. */
typedef struct {
    double *tc_us, *tm_us, *elems;
    int n, cap;
    int sm_count;            /* S */
} dlp_part_profile;

dlp_status dlp_part_profile_build(const dlp_graph *g, const dlp_device *d,
                                  dlp_precision prec, dlp_part_profile *out,
                                  dlp_error *err);
void dlp_part_profile_free(dlp_part_profile *p);   /* NULL-safe */

/* Factor of latency on sms (1..S) SMs with the memory bandwidth capped at
 * bw_cap (0 < bw_cap <= 1); no argument checks (the fit's inner loop). */
double dlp_part_profile_factor(const dlp_part_model *m,
                               const dlp_part_profile *p, int sms,
                               double bw_cap);

/* The factor of an SM partition (sms, mig NULL) or a MIG instance (mig):
 * DLP_ERR_ARG for sms outside 1..device SMs, a NULL argument, or a MIG
 * profile with no SMs. */
dlp_status dlp_part_factor(const dlp_part_model *m, const dlp_graph *g,
                           const dlp_device *d, dlp_precision prec, int sms,
                           const dlp_mig_profile *mig, double *factor,
                           dlp_error *err);

/* One traced configuration: GPU time (sum of kernel durations of one eager
 * forward) on the whole device and on each partition. */
typedef struct {
    char hash[17];
    const char *device;      /* the dataset's string */
    dlp_precision prec;
    int64_t batch, seq, height, width;
    int rep;
    double full_us;          /* whole GPU */
    int n;                   /* partitions */
    int sms[DLP_PART_MAX_SMS];
    double meas[DLP_PART_MAX_SMS];        /* measured T(sms) / T(S) */
    double roof_eager[DLP_PART_MAX_SMS];  /* roofline factor, eager */
    double roof_graph[DLP_PART_MAX_SMS];  /* roofline factor, graph */
    dlp_part_profile prof;
} dlp_part_sample;

typedef struct {
    dlp_part_sample *s;
    int n;
    int n_skipped;           /* configurations whose graph failed */
} dlp_part_set;

/* Gathers every configuration with eager kernel rows on the whole GPU and
 * on at least one SM partition; device figures from <dataset>/devices
 * (as predict with --measured-dir). DLP_ERR_NOT_FOUND when there is none. */
dlp_status dlp_part_set_load(const dlp_dataset *ds, dlp_part_set *out,
                             dlp_error *err);
void dlp_part_set_free(dlp_part_set *s);

/* Fits m on the samples with use[i] (use NULL: all). DLP_ERR_ARG when no
 * sample is selected. */
dlp_status dlp_part_fit(const dlp_part_set *s, const bool *use,
                        dlp_part_model *m, dlp_error *err);

/* k-fold leave-models-out cross-validation (configurations grouped by graph
 * hash; folds = 0 or more than the hashes: one fold per hash). MAPE (%) of
 * the factor over every partition point, for the learned model (fitted on
 * the other folds) and for the roofline factor (eager and graph floors).
 * pred (may be NULL) gets the held-out factor of each point, samples in
 * order, partitions in order. */
typedef struct {
    double learned, roof_eager, roof_graph;   /* MAPE, % */
    double learned_max, roof_eager_max;       /* worst point, % */
    int n_points, n_configs, n_models, folds;
} dlp_part_cv;
dlp_status dlp_part_cross_validate(const dlp_part_set *s, int folds,
                                   dlp_part_cv *out, double *pred,
                                   dlp_error *err);

dlp_status dlp_part_save(const char *path, const dlp_part_model *m,
                         dlp_error *err);
/* Reads and checks a file written by dlp_part_save: DLP_ERR_IO when it
 * cannot be opened, DLP_ERR_FORMAT (naming file and line) when malformed
 * or a parameter is out of range. */
dlp_status dlp_part_load(const char *path, dlp_part_model *m, dlp_error *err);

#endif /* DLP_PREDICT_PART_H */
