/*
 * pred_train.h — internal to libdlperf. The training side of the
 * predictors: labelled examples built from a dataset (pred_data.c),
 * training options and progress reporting, and the per-kind train
 * functions that write a model file (pred_train.c drives them and records
 * validation error and residual quantiles in the file's header).
 *
 * Targets are learned as log(y): labels span 4+ orders of magnitude (a
 * 0.05 ms op to a 30 s training step), and a loss on log values is a loss
 * on the ratio pred/actual, i.e. on the relative error the goals are
 * stated in; Huber on top keeps the few noisy eager outliers from
 * dominating the gradient.
 */
#ifndef DLP_PRED_TRAIN_H
#define DLP_PRED_TRAIN_H

#include "pred.h"
#include "../feat/feat.h"

/* ---- examples ------------------------------------------------------------ */
typedef struct {
    int fg;                    /* index into dlp_examples.fg */
    dlp_pred_config cfg;
    double y[DLP_T_COUNT];     /* labels, NAN where not measured */
    int model, family;         /* indices into models / families */
    int flagged;               /* a rep pair disagreed (kept, never dropped) */
    double rep_gap;            /* |rep0 - rep1| / mean of the main target */
    double host_us;            /* the host probe of its label rows (mean of
                                  those that have one; eager inference
                                  rows carry it), NAN where none does */
    double host_f;             /* the factor its eager labels were divided
                                  by (dlp_examples_opts.host_norm), 1 where
                                  none */
} dlp_example;

/* Eager labels brought to a reference host (eighty-fourth session): an
 * eager inference example whose rows carry the host probe host_us and
 * whose configuration was also measured as a CUDA graph has its latency
 * divided by f = (host_us / ref_us)^(h beta), h = clamp(1 - graph / eager,
 * 0, 1) of its measured latencies (the host-bound share), its energy by 1
 * + gamma (f - 1), and its power multiplied by their ratio: the host model
 * of models/host.csv (src/predict/predict_host.h) run backwards, so that
 * the labels a predictor learns from read as if measured on a host of
 * ref_us, whichever hosts measured them. */
typedef struct {
    double beta, ref_us, gamma;
    /* training steps (a models/host-training.csv fit): no CUDA-graph twin,
     * so the share comes from the step's length, h = tau_ms / step (where
     * tau_ms > 0), or from its measured power on a board of power_tdp_w
     * watts, h = (power_hi_w - power) / (power_hi_w - power_lo_w) (where
     * power_hi_w > 0); the step is divided by f and the power multiplied
     * by f over the energy factor. Zero for inference and LLM fits */
    double tau_ms, power_lo_w, power_hi_w, power_tdp_w;
    /* two-sided fits (ninety-second session): the slope for hosts quicker
     * than ref_us, beta the one for slower hosts; 0: beta on both sides */
    double beta_quick;
} dlp_host_norm;

/* The latency factor above: exp(h beta ln(host_us / ref_us)), beta_quick
 * in place of beta where it is positive and host_us < ref_us; 1 where an
 * input is missing, not positive or not finite (h NAN included). */
double dlp_host_norm_factor(const dlp_host_norm *n, double host_us, double h);
/* The host-bound share h, clamped to [0, 1], by n's rule: tau_ms /
 * eager_ms, else (power_hi_w - power_w) / (power_hi_w - power_lo_w) (the
 * watts on a board of power_tdp_w), else 1 - graph_ms / eager_ms; NAN
 * where an input the rule takes is missing or n is NULL. */
double dlp_host_norm_share(const dlp_host_norm *n, double eager_ms,
                           double graph_ms, double power_w);
/* A training step's fit (its share from tau_ms or the power rule), not
 * an inference or LLM one (the CUDA-graph twin's). */
bool dlp_host_norm_is_training(const dlp_host_norm *n);
/* power_w of a card of tdp_w watts on the fit's board of power_tdp_w
 * (the same share of its board's power); as it is where either is 0. */
double dlp_host_norm_board_power(const dlp_host_norm *n, double power_w,
                                 double tdp_w);
/* The energy's factor for a latency factor f: 1 + gamma (f - 1); 1 for a
 * non-positive or non-finite f or without n. */
double dlp_host_norm_energy_factor(const dlp_host_norm *n, double f);

/* Where a kernel naming no graph node goes. */
typedef enum {
    DLP_TRACE_PRECEDING = 0,   /* the nearest preceding mapped kernel's
                                  nodes, else the next one's */
    DLP_TRACE_HEAVIER = 1      /* of the nearest preceding and next mapped
                                  kernels, the one whose nodes have the
                                  larger roofline time (ties: preceding) */
} dlp_trace_rule;

/* One eager kernel trace (kernels.csv.zst, rep 0) of a configuration
 * (hash, device, precision, batch, seq, height, width, sms) reduced to the
 * measured GPU time of each node of its featurized graph (pred_trace.c has
 * the attribution rule). Built for mode inference only. */
typedef struct {
    int fg;                    /* index into dlp_examples.fg */
    dlp_pred_config cfg;       /* runtime eager; sms > 0: SM partition */
    int model, family;         /* indices into models / families */
    float *node_us;            /* [fg n_nodes] measured time, microseconds */
    double kernel_us;          /* sum of the kept kernel durations (= sum of
                                  node_us up to rounding) */
    int n_kernels;             /* kernel rows kept */
    int n_bad;                 /* rows dropped: duration <= 0 or not finite */
    int n_unmapped;            /* kept kernels naming no graph node, charged
                                  to a neighbour's nodes */
    int n_names, n_unmatched;  /* node names listed / not in the graph */
    int64_t rows_at;           /* while building: its kernel rows are */
    int n_rows;                /* trace_rows[rows_at .. rows_at + n_rows) */
} dlp_trace;

#define DLP_EXAMPLES_SKIPPED_KEEP 4

typedef struct {
    dlp_pred_mode mode;
    dlp_example *ex;
    int n, cap;
    dlp_feat_graph *fg;        /* featurized graphs, one per (hash, binding) */
    char **fg_hash;
    int n_fg, cap_fg;
    char **models, **families;
    int n_models, n_families;
    dlp_feat_graph *pool;      /* unlabeled pool (every graph of the index) */
    int n_pool;
    char devices[256];         /* devices present, comma-separated */
    int n_skipped_graphs;      /* graph bindings that failed to featurize */
    dlp_error skipped[DLP_EXAMPLES_SKIPPED_KEEP]; /* why, for the first
                                  min(n_skipped_graphs, KEEP) of them */
    int n_conflict_bindings;   /* of them: the graph's shapes contradict
                                  the binding (featurize in pred_data.c) */
    /* kernel traces (mode inference, datasets with kernel rows; else 0) */
    /* the per-convolution probes of the dataset (mode inference; none
     * when data/probes holds no convws file): the fp32 workspace model's
     * training rows (pred_convws.c) */
    struct dlp_convws_calls *convws;
    /* the operator-time probes (mode inference; none when data/probes
     * holds no optime file): the training rows of the model of the
     * convolutions' and products' times (pred_optime.c) */
    struct dlp_optime_probes_s *optime;
    dlp_trace *trace;
    int n_trace, cap_trace;
    int n_trace_dropped;       /* graph failed, or no kernel maps to a node */
    int64_t trace_names, trace_unmatched; /* over every kept trace */
    dlp_trace_rule trace_rule; /* attribution of unmapped kernels */
    int32_t *trace_rows;       /* while building: kernel rows per trace */
    int64_t n_trace_rows;
    /* the eager labels' reference host (dlp_examples_opts.host_norm) and
     * how many examples it changed; 0: labels as measured */
    dlp_host_norm host_norm;
    int n_host_normed;
    /* kept from the build so that dlp_examples_host_norm can bring the
     * labels to another reference host, or back as measured: the labels
     * as measured [n][DLP_T_COUNT]; each example's host probe as the
     * normalization reads it (its rows' own, else for a training step its
     * batch's eager inference median, for an LLM configuration its eager
     * inference rows'); the example measured as a CUDA graph under the
     * same configuration (eager inference and LLM examples; -1: none).
     * NULL where a runtime filter left the twins out (meas_kept false) */
    double *y_meas, *host_probe;
    int32_t *twin;
    bool meas_kept;
} dlp_examples;

#define DLP_POOL_MAX_NODES 6000

typedef struct {
    const char *device;        /* only this device (NULL: all) */
    int runtime;               /* -1 all, else dlp_runtime */
    int precision;             /* -1 all, else dlp_precision */
    bool with_pool;            /* featurize every indexed graph (TraPPM) */
    /* progress while featurizing: done of total graphs; with threads
     * above 1 it is called from the featurizing threads, one call at a
     * time (under a lock) */
    void (*progress)(void *user, int done, int total);
    void *user;
    int threads;               /* featurizing threads (0 or 1: this one) */
    /* inference, LLM and training: eager labels brought to this reference
     * host (above); NULL: as measured */
    const dlp_host_norm *host_norm;
} dlp_examples_opts;

/* Joins every label row of `mode` with its graph: rep 0 and rep 1 are
 * averaged into one example per configuration (hash, device, runtime,
 * precision, batch, seq, height, width); graph bytes come from the packs,
 * are opened, bound (batch, seq), analysed and featurized once per
 * binding, on o->threads threads (the examples do not depend on their
 * number). Graphs that fail to load are skipped and counted. */
dlp_status dlp_examples_build(dlp_examples *E, const dlp_dataset *ds,
                              dlp_pred_mode mode, const dlp_examples_opts *o,
                              dlp_error *err);
/* The same with the pool limited to an even sample of pool_max graphs of
 * at most DLP_POOL_MAX_NODES nodes (0: every graph): the compute budget of
 * TraPPM's pre-training. */
dlp_status dlp_examples_build_pool(dlp_examples *E, const dlp_dataset *ds,
                                   dlp_pred_mode mode,
                                   const dlp_examples_opts *o, int pool_max,
                                   dlp_error *err);
void dlp_examples_free(dlp_examples *E);
/* Brings E's labels to the reference host of n (as dlp_examples_opts
 * .host_norm does while building), or with n NULL back to the labels as
 * measured, from the measured labels the build kept: so that one set of
 * featurized examples serves predictors trained with and without a
 * reference host (`dlperf train` with several --kind). Fails where the
 * build had a runtime filter (the CUDA-graph twins the shares come from
 * were left out). */
dlp_status dlp_examples_host_norm(dlp_examples *E, const dlp_host_norm *n,
                                  dlp_error *err);

/* ---- kernel traces (pred_trace.c) ----------------------------------------- */

/* One kernel row of a trace, as the attribution reads it. */
typedef struct {
    int64_t idx;               /* launch order (kernel_idx) */
    double us;                 /* duration; <= 0 or not finite: dropped */
    const char *nodes;         /* '|'-separated node names, NULL or "" */
} dlp_trace_kernel;

typedef struct {
    int kernels, bad, unmapped, names, unmatched;
    double total_us;           /* sum of the kept durations */
} dlp_trace_stats;

/* Attributes kernel durations to graph nodes: k[n] in any order (sorted by
 * idx here, k is reordered), node names names[n_nodes]. A kernel listing
 * m matched nodes gives them its duration split in proportion to
 * weight[] (each node's roofline time; equal shares when weight is NULL or
 * the listed weights are all 0); names not in the graph are counted and
 * ignored; a kernel with no matched name is charged to the nodes of the
 * nearest preceding mapped kernel in launch order, else of the next one.
 * node_us[n_nodes] is overwritten; its sum equals st->total_us.
 * DLP_ERR_NOT_FOUND when no kernel maps to any node. */
dlp_status dlp_trace_attribute(dlp_trace_kernel *k, int n,
                               const char *const *names, int n_nodes,
                               const double *weight, dlp_trace_rule rule,
                               double *node_us, dlp_trace_stats *st,
                               dlp_error *err);
/* Collects the eager rep-0 trace configurations of ds (filters of o) into
 * E->trace, with their featurized-graph slot from slot_of (which adds the
 * slot when new) and their kernel rows in E->trace_rows. */
typedef int (*dlp_trace_slot_fn)(dlp_examples *E, const char *hash,
                                 int64_t batch, int64_t seq, int64_t height,
                                 int64_t width);
dlp_status dlp_traces_collect(dlp_examples *E, const dlp_dataset *ds,
                              const dlp_examples_opts *o,
                              dlp_trace_slot_fn slot_of, dlp_error *err);
/* Attributes every trace of slot f from the analysed graph g and the
 * featurized fg (built from g); a trace that cannot be attributed is
 * marked (node_us NULL) and dropped by dlp_traces_finish. */
dlp_status dlp_traces_attribute_slot(dlp_examples *E, const dlp_dataset *ds,
                                     int f, const dlp_graph *g,
                                     dlp_error *err);
/* Drops traces without times (bad[fg] set, or attribution failed) and
 * the kernel-row lists. */
void dlp_traces_finish(dlp_examples *E, const bool *bad_fg);
void dlp_traces_free(dlp_examples *E);
/* Index of s in the string table *list of *n entries, appended (a copy)
 * when absent: the models / families tables the examples and the traces
 * share. -1 when out of memory. */
int dlp_examples_intern(char ***list, int *n, const char *s);

/* ---- convolution workspaces (pred_convws.c) ------------------------------
 * The probes' fp32 and fp16 dense 2-D convolution calls (data/probes/
 * convws files, tools/collect/probe_convws.py): shape and the bytes
 * the call allocated besides its output; and their backward's (convbwd
 * files, probe_convgrid.py --backward and probe_convbwd.py): the bytes
 * beside the gradients it returns. */
typedef struct {
    dlp_conv_shape shape;
    float extra_mib, io_mib;   /* io: input + output at the call's type */
    int32_t model;             /* index into dlp_convws_calls.names */
    bool half;                 /* fp16 (else fp32) */
    bool grid;                 /* a shape of probe_convgrid.py's grid (spec
                                  "grid:..."): trains the forests only */
    bool bwd;                  /* the call's backward (a convbwd file) */
} dlp_convws_call;
typedef struct dlp_convws_calls {
    dlp_convws_call *call;
    size_t n, cap;
    char **names;              /* the probed models (timm / torchvision name) */
    int n_names;
    int n_files;
} dlp_convws_calls;
/* Reads every *convws*.jsonl.xz of dir (sorted by name), then every
 * *convbwd*.jsonl.xz (bwd calls: their bwd_extra_mib where a record has
 * it, probe_convbwd.py's, else extra_mib), into *out (zeroed first); none
 * found is not an error (n_files 0). */
dlp_status dlp_convws_calls_read(const char *dir, dlp_convws_calls *out,
                                 dlp_error *err);
void dlp_convws_calls_free(dlp_convws_calls *c);

/* The model, one per type (fp32; fp16, which bf16 shares) and pass
 * (the forward; with bwd fitted, the backward of a training step): a
 * classifier (has a workspace above max(1 MiB, half its input + output))
 * and, where it says so (>= 0.5), a regressor of log2(MiB). */
typedef struct dlp_convws dlp_convws;
/* Fits on the calls whose model m has use[m] (NULL: all), each type and
 * pass on its own calls, the backward's only with bwd; *out NULL when no
 * forward type has 2 calls with a workspace. */
dlp_status dlp_convws_fit(const dlp_convws_calls *c, const bool *use,
                          bool bwd, dlp_convws **out, dlp_error *err);
/* One convolution's probability of a workspace (the classifier, clamped
 * to [0, 1]) and its size if it has one, MiB (0 when the classifier says
 * p < 0.5: its size is then not predicted), at fp32 (half false) or half
 * precision; false when m has no model of that type or its forests are
 * broken (dlp_forest_ready: a loaded file's are checked when walked). */
bool dlp_convws_predict(const dlp_convws *m, bool half, const float *x,
                        double *p, double *mib);
/* dlp_feat_roofline_ws of fg under c with the workspaces the model
 * predicts (inference only; m NULL or without a model of the type, or
 * training: dlp_feat_roofline_of). At half precision the model's
 * workspaces replace the walk's rule for dense convolutions (feat.c:
 * conv_extra_bytes); the fp16 stem's (fp16_stem_ws_bytes) stays.
 * A workspace counts when its probability p beats the ratio that
 * minimises the expected relative error of the memory answer: with B the
 * estimate without it and d what it adds, counting it costs (1 - p) d / B
 * and leaving it out p d / (B + d), so it counts when
 * p > (B + d) / (2B + d): a workspace as large as the rest of the model
 * needs p > 2/3, ten times as large p > 11/12. DLP_ERR_FORMAT (r that of
 * dlp_feat_roofline_of) when a forest it walks is broken. */
dlp_status dlp_convws_roofline(const dlp_convws *m, const dlp_feat_graph *fg,
                               const dlp_pred_config *c, dlp_feat_roofline *r,
                               dlp_error *err);
/* fg as a training step under c reads it with workspace model m: *view
 * is *fg (sharing its arrays: free nothing of it) with train_ws_mib at
 * c's precision set to the step's MiB at the forward of the convolution
 * whose predicted cuDNN workspace raises the training estimate most, 0
 * when none does (docs/COST.md, "cuDNN workspaces in the training
 * step"), counted under the inference rule's condition (a probability
 * p of a workspace that raises the estimate base by d: p > (base + d) /
 * (2 base + d)). Where m has a backward model for c's precision, the
 * backward's points of the dense convolutions take its workspaces
 * instead of the walk's rule (input + output bytes), under the same
 * condition against the step without them, and train_ws_mib is the
 * whole step's peak (train_ws_peak set). Without m, a model for c's
 * precision, a training config or a convolution, *view is *fg with it
 * 0. */
dlp_status dlp_convws_train_view(const dlp_convws *m, const dlp_feat_graph *fg,
                                 const dlp_pred_config *c,
                                 dlp_feat_graph *view, dlp_error *err);
/* The workspace model on the probes of the models E's examples tr and
 * va belong to (tr NULL: of all ntr examples; a probed model whose
 * examples are all outside them is held out); *ws NULL when E has no
 * probes (E->convws: inference and training examples read them). */
dlp_status dlp_convws_examples_fit(const dlp_examples *E, const int32_t *tr,
                                  int ntr, const int32_t *va, int nva,
                                  dlp_convws **ws, dlp_error *err);
/* Sets train_ws_mib (and train_ws_peak) of every E->fg a training
 * example reads, at the example's precision, from ws
 * (dlp_convws_train_view), so that the
 * kinds trained on E read the training estimate with it;
 * dlp_convws_examples_clear takes it off again. Nothing without ws or
 * outside training mode. */
dlp_status dlp_convws_examples_annotate(const dlp_convws *ws,
                                        const dlp_examples *E, dlp_error *err);
void dlp_convws_examples_clear(const dlp_examples *E);
dlp_status dlp_convws_save(const dlp_convws *m, dlp_nn_file *out,
                           dlp_error *err);
/* *out NULL (DLP_OK) when the file holds no workspace model. */
dlp_status dlp_convws_load(const dlp_nn_file *in, dlp_convws **out,
                           dlp_error *err);
void dlp_convws_free(dlp_convws *m);

/* ---- probe files (pred_probes.c) ----------------------------------------- */
/* Decompresses the .xz probe file at path into *text (NUL-terminated,
 * malloc'd; at most 512 MiB of text). */
dlp_status dlp_probe_read_xz(const char *path, char **text, size_t *len,
                             dlp_error *err);
/* Calls fn on every line (a JSON object) of every *contains*.jsonl.xz of
 * dir, sorted by name; stops at fn's first error. A line that is not JSON
 * is DLP_ERR_FORMAT naming the file and line. No dir, or no such file,
 * is not an error. *n_files (may be NULL) counts the files read. */
struct cJSON;
typedef dlp_status (*dlp_probe_record_fn)(const struct cJSON *r, void *user,
                                          dlp_error *err);
dlp_status dlp_probe_records(const char *dir, const char *contains,
                             dlp_probe_record_fn fn, void *user, int *n_files,
                             dlp_error *err);
/* v as an integer in [lo, hi] (a whole JSON number), or -1: the probes'
 * dims and attributes. */
int64_t dlp_probe_int(const struct cJSON *v, int64_t lo, double hi);

/* ---- operator times (pred_optime.c) --------------------------------------
 * The probes' convolutions and products (data/probes/ optime files,
 * tools/collect/probe_optime.py) and memory-bound operators and fused
 * attentions (memop files, probe_memop.py): shape, precision, the
 * CUDA-graph time per call and its roofline on the probed card. */
typedef struct {
    dlp_op_shape shape;
    uint8_t prec;              /* dlp_precision */
    float us, roof_us;
} dlp_optime_probe;
typedef struct dlp_optime_probes_s {
    dlp_optime_probe *rec;
    size_t n, cap;
    bool train;                /* the training times (below) */
    int n_files;
    int n_bad;                 /* records kept out: malformed, or a time
                                  outside [0.5 us, 10 s] */
    int n_unknown_gpu;         /* lines of a card the device table lacks */
} dlp_optime_probes;
/* Reads every *optime*.jsonl.xz of dir (sorted by name), then every
 * *optrain* and *memop* one, into *out (zeroed first): each record's
 * forward time; none found is not an error (n_files 0); a memop file's
 * layout copies are not read. train: the *optrain* files' and the memop
 * files' training times instead (probe_optime.py and probe_memop.py
 * --train): us is a
 * shape's forward + backward time (train_us) and roof_us three forward
 * rooflines (the forward, the input's and the weight's gradient: as many
 * FLOPs each), so a model fitted on them answers, as its "time", a third
 * of the forward + backward: the op's forward-scale share of a training
 * step, which is what a training example's node times then read
 * (docs/COST.md, "Training times"). */
dlp_status dlp_optime_probes_read(const char *dir, bool train,
                                  dlp_optime_probes *out, dlp_error *err);
void dlp_optime_probes_free(dlp_optime_probes *p);

/* The model: per kind (convolution, product, memory-bound, attention) a
 * forest of log2(time / roofline time) on dlp_op_shape_features. */
typedef struct dlp_optime dlp_optime;
/* Fits on the probes with use[i] (NULL: all), XGBoost on `threads`
 * threads; *out NULL when no kind has 16 probes. */
dlp_status dlp_optime_fit(const dlp_optime_probes *p, const bool *use,
                          int threads, dlp_optime **out, dlp_error *err);
/* Shape s's time at precision p on d, microseconds: its roofline there
 * times 2^forest (clamped to 2^[-12, 12]); the roofline when m has no
 * forest of its kind. */
double dlp_optime_us(const dlp_optime *m, const dlp_op_shape *s,
                     dlp_precision p, const dlp_feat_device *d);
/* Sets fg->op_eff from m (every op at every runtime and precision; m NULL: frees
 * it, the roofline); false when out of memory or a forest of a loaded
 * model is broken (dlp_forest_ready; the training kinds annotate with
 * forests they fitted). */
bool dlp_optime_annotate(const dlp_optime *m, dlp_feat_graph *fg);
/* *view: fg with its own op_eff, m's answers at runtime rt and precision
 * p (the other columns 0, but fp32's for the half_f32 nodes), *eff that
 * array (the caller frees it; NULL when m is NULL or fg has no op: view
 * is then fg without op times). What a predictor trained on the operator
 * times reads, whatever fg carries. DLP_ERR_FORMAT when a forest it
 * walks is broken (dlp_forest_ready: a loaded file's are checked then). */
dlp_status dlp_optime_view(const dlp_optime *m, const dlp_feat_graph *fg,
                           dlp_runtime rt, dlp_precision p,
                           dlp_feat_graph *view, float **eff, dlp_error *err);
/* A request's graph as a kind with operator-time model m reads it:
 * dlp_pred_feat (*fg, built into *local when the request has none), then
 * dlp_optime_view at the request's runtime and precision (*view, *eff). On success
 * the caller frees *eff, and *local when *fg == local; on failure
 * nothing is left to free. */
dlp_status dlp_optime_pred_feat(const dlp_optime *m, const dlp_pred_input *in,
                                dlp_feat_graph *local, const dlp_feat_graph **fg,
                                dlp_feat_graph *view, float **eff,
                                dlp_pred_result *out, dlp_error *err);
/* Fits the model on E's probes (*out NULL when E has none: only
 * inference examples read them) on one thread, so the same probes give
 * the same forests, and annotates every E->fg with it, for a kind whose
 * training reads the operator times (the xgb trees, DIPPM, TraPPM);
 * dlp_optime_examples_clear takes the annotations off again, so that the
 * next kind trains on the roofline's times. */
dlp_status dlp_optime_examples_fit(const dlp_examples *E, dlp_optime **out,
                                   dlp_error *err);
void dlp_optime_examples_clear(const dlp_examples *E);
/* dlp_optime_annotate on every E->fg, on the engine's threads
 * (dlp_nn_threads; the same answers for any count). */
dlp_status dlp_optime_annotate_all(const dlp_optime *m, const dlp_examples *E,
                                   dlp_error *err);
/* The entries dlp_optime_save writes, all under this name prefix (forests
 * "optime/conv", "optime/mm", "optime/mem", "optime/attn"), and those of
 * dlp_convws_save (the workspace model's fp32 and half parts, forward
 * and backward): the groups
 * that the writers of trained model files put in shared side files
 * (dlp_nn_file_save_shared, with dlp_pred_shared_groups), since several
 * model files hold the same forests. */
#define DLP_OPTIME_GROUP "optime/"
#define DLP_CONVWS_GROUP "convws/"
#define DLP_CONVWS16_GROUP "convws16/"
#define DLP_CONVBWD_GROUP "convbwd/"
#define DLP_CONVBWD16_GROUP "convbwd16/"
extern const char *const dlp_pred_shared_groups[];
dlp_status dlp_optime_save(const dlp_optime *m, dlp_nn_file *out,
                           dlp_error *err);
/* *out NULL (DLP_OK) when the file holds no operator-time model. */
dlp_status dlp_optime_load(const dlp_nn_file *in, dlp_optime **out,
                           dlp_error *err);
/* Every node's time in fg under c, microseconds, as the features read it
 * (dlp_feat_node_roofline_us on the view of dlp_optime_view at c's
 * runtime and precision) into us[fg->n_nodes], and the roofline's alone
 * into roof_us (NULL: not wanted); m NULL: the roofline in both. */
dlp_status dlp_optime_node_us(const dlp_optime *m, const dlp_feat_graph *fg,
                              const dlp_pred_config *c, double *us,
                              double *roof_us, dlp_error *err);
void dlp_optime_free(dlp_optime *m);
/* k-fold cross-validation over the probes (random folds of `seed`): MAPE
 * of the model's time and of the roofline alone, per kind and precision. */
typedef struct {
    int n[DLP_OP_NKIND][DLP_PREC_COUNT];
    double mape[DLP_OP_NKIND][DLP_PREC_COUNT], roof_mape[DLP_OP_NKIND][DLP_PREC_COUNT];
    int n_cat[DLP_MEM_NCAT];   /* the memory-bound kind per dlp_mem_cat */
    double mape_cat[DLP_MEM_NCAT], roof_mape_cat[DLP_MEM_NCAT];
} dlp_optime_heldout_stats;
dlp_status dlp_optime_heldout(const dlp_optime_probes *p, int folds,
                              uint64_t seed, int threads,
                              dlp_optime_heldout_stats *out, dlp_error *err);

/* ---- training ------------------------------------------------------------ */
typedef struct {
    const char *kind;
    int epoch, epochs;
    double loss, val_error;    /* val_error: MAPE of the main target */
    double elapsed_s, eta_s;
} dlp_train_progress;

typedef struct {
    int epochs;                /* 0: kind default */
    double lr;                 /* 0: kind default */
    int hidden;                /* 0: kind default */
    int graphs_per_batch;      /* 0: kind default */
    int patience;              /* early stopping, epochs; 0: default */
    uint64_t seed;
    int threads;               /* 0: 1 */
    bool no_prior;             /* DIPPM/TraPPM: no ridge prior */
    bool no_calibration;       /* no MAPE calibration factor (pred_train.c) */
    bool refit;                /* a kind that refits (dlp_pred_kind.refits:
                                  xgb): once its validation errors,
                                  calibration and residual quantiles are
                                  measured, trained again on the training
                                  and validation examples; the file keeps
                                  those figures and holds the second fit.
                                  In a blend, its parts that refit do, once
                                  the blend is measured on their first
                                  fits (dlp_pred_kind_refits) */
    bool no_optime;            /* DIPPM/TraPPM: node times from the roofline,
                                  not the operator-time model (pred_optime.c) */
    const char *init_from;     /* transfer: start from this model file */
    int shots;                 /* > 0: train on this many random examples of
                                  the training part only (few-shot) */
    int members;               /* DIPPM/TraPPM: an ensemble of this many
                                  networks, averaged in log space; member
                                  k starts from seed + k *
                                  DLP_MEMBER_SEED_STEP; 0 or 1: one */
    double ema;                /* DIPPM/TraPPM: > 0, also keep an
                                  exponential moving average of each
                                  network's weights with this decay per
                                  step; at every epoch's end early stopping
                                  sees the average's validation error
                                  beside the weights' own and keeps the
                                  lower; 0: off */
    int readout;               /* DIPPM/TraPPM graph readout, DLP_READOUT_*:
                                  the mean of the node embeddings (0), or
                                  beside it their roofline-time weighted
                                  mean (--readout mean+cost), or that for
                                  the odd members of an ensemble only
                                  (--readout mixed); or beside the mean the
                                  log of the roofline-share-weighted sum of
                                  exp(embedding) (mean+lse), for the odd
                                  members only (mixed-lse) */
    const char *const *parts_from; /* a blend: component c's trained model
                                  file, parts_from[c] (NULL: train it);
                                  n_parts_from entries, one per component.
                                  A file must come from this split (its
                                  recorded validation errors are measured
                                  again on it and must match) */
    int n_parts_from;
    long long input_bytes;     /* DIPPM/TraPPM: each example's network
                                  inputs (node rows, static row, priors)
                                  derived once and held, the node rows up
                                  to this many bytes (0: 3 GiB); < 0: none,
                                  derived at every forward. The same
                                  networks either way (pred_gnn.c) */
    void (*progress)(void *user, const dlp_train_progress *p);
    void *user;
} dlp_train_opts;

enum { DLP_READOUT_MEAN, DLP_READOUT_COST, DLP_READOUT_MIXED,
       DLP_READOUT_LSE, DLP_READOUT_MIXED_LSE };
#define DLP_MEMBER_SEED_STEP 0x632be59bd9b4e019ull
#define DLP_MAX_MEMBERS 8

void dlp_train_opts_init(dlp_train_opts *o);

/* Writes the kind's payload into out and sets what it knows of meta
 * (targets, runtimes, precisions). tr/va index E->ex. */
typedef dlp_status (*dlp_pred_train_fn)(const dlp_examples *E,
                                        const int32_t *tr, int ntr,
                                        const int32_t *va, int nva,
                                        const dlp_train_opts *o,
                                        dlp_pred_meta *meta, dlp_nn_file *out,
                                        dlp_error *err);

typedef struct {
    const dlp_pred_vtable *vt;
    dlp_pred_train_fn train;
    bool learned;              /* false: analytical (roofline) */
    bool refits;               /* no early stopping: the validation rows
                                  only measure it (dlp_train_opts.refit) */
} dlp_pred_kind;

/* Built-in kinds with their trainers, NULL-terminated through vt. */
const dlp_pred_kind *dlp_pred_kinds(void);
const dlp_pred_kind *dlp_pred_kind_find(const char *kind);

/* Trains `kind` on tr, measures it on va (validation MAPE per target,
 * 5/95% quantiles of log(actual/pred)), and returns the predictor and,
 * when file is not NULL, the complete model file (meta + payload). */
dlp_status dlp_pred_train(const char *kind, const dlp_examples *E,
                          const int32_t *tr, int ntr, const int32_t *va,
                          int nva, const dlp_train_opts *o,
                          dlp_predictor **out, dlp_nn_file *file,
                          dlp_error *err);

/* dlp_pred_train that also hands back, in *first (emptied first), the
 * first fit's complete file when --refit trained the model again; it
 * stays empty otherwise. A blend's own validation figures are measured
 * on its parts' first fits (pred_blend.c). */
dlp_status dlp_pred_train_first(const char *kind, const dlp_examples *E,
                                const int32_t *tr, int ntr,
                                const int32_t *va, int nva,
                                const dlp_train_opts *o, dlp_predictor **out,
                                dlp_nn_file *file, dlp_nn_file *first,
                                dlp_error *err);
/* Whether `kind` refits (dlp_train_opts.refit): a kind with
 * dlp_pred_kind.refits, or a blend with such a part. */
bool dlp_pred_kind_refits(const char *kind);

/* The factor c that minimises sum_i |c f_i - y_i| / y_i over the n pairs
 * with y_i > 0 and f_i > 0 (a median of y_i / f_i weighted by f_i / y_i;
 * the smallest such median); 1 when there is none. */
double dlp_mape_factor(const double *y, const double *f, int n);
/* dlp_mape_factor's c shrunk towards 1 by how well the groups (models)
 * agree on it: with L = log c and v the jackknife variance of L over the
 * groups (each left out in turn), exp(max(0, 1 - v / L^2) L), positive-part
 * James-Stein; 1 with fewer than max(2, min_groups) groups. group[i] names
 * pair i's group (any integers). */
double dlp_mape_factor_shrunk(const double *y, const double *f,
                              const int *group, int n, int min_groups);
/* Fewest validation labels, and validation models, a target's calibration
 * factor is fitted on (fewer models: the jackknife variance is itself too
 * noisy to shrink by; the LLM folds' 8-10 validation models moved the
 * held-out throughput error 19.73 -> 20.02%). */
#define DLP_CAL_MIN 50
#define DLP_CAL_MIN_MODELS 20

/* Per target of E's mode that p predicts: its MAPE over the examples vi
 * (mape[t]) and the 5% / 95% quantiles of log(actual/pred) (lo, hi: may
 * be NULL); NAN where p does not predict t or no example has a label.
 * What dlp_pred_train records in a file's header, and what a blend checks
 * a component file against (pred_blend.c). */
dlp_status dlp_pred_val_errors(const dlp_predictor *p, const dlp_examples *E,
                               const int32_t *vi, int nv, double *mape,
                               double *lo, double *hi, dlp_error *err);

/* Predicts example i of E with p (through the cached featurized graph). */
dlp_status dlp_pred_example(const dlp_predictor *p, const dlp_examples *E,
                            int i, dlp_pred_result *r, dlp_error *err);

/* The targets of a mode, in order: fills t[] and returns the count. */
int dlp_mode_targets(dlp_pred_mode m, dlp_target *t);

/* Kind "kern" (pred_kern.c): the predicted kernel sum (microseconds: the
 * sum of the node model's per-node GPU times, before the graph step) of fg
 * under c. DLP_ERR_ARG when p is not a kern predictor. */
dlp_status dlp_kern_sum_us(const dlp_predictor *p, const dlp_feat_graph *fg,
                           const dlp_pred_config *c, double *us,
                           dlp_error *err);

/* ---- helpers shared by the kinds ---------------------------------------- */
/* Ridge regression: w[d] minimizing |Xw - y|^2 + lambda |w[1..]|^2 over rows
 * with finite y (X[n, d], column 0 is the intercept). */
dlp_status dlp_ridge_fit(const double *X, const double *y, int n, int d,
                         double lambda, double *w, dlp_error *err);

/* Feature standardisation: mean/std per column of x[n, d] (std >= 1e-6). */
void dlp_colstats(const float *x, size_t n, int d, float *mean, float *std);

#endif /* DLP_PRED_TRAIN_H */
