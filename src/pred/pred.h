/*
 * pred.h — internal to libdlperf. The predictor interface: what every
 * trained predictor (baselines, DIPPM, TraPPM in src/pred/, the XGBoost
 * tree model in src/tree/) looks like to `dlperf predict`, the library API
 * and the evaluation code.
 *
 * Data flow: analysed graph (dlp_graph with per-node dlp_cost) + a
 * prediction config (device, precision, runtime, mode, batch, ...) ->
 * predictor -> one value and an interval per target, plus an
 * out-of-distribution flag with its reason.
 *
 * Kinds plug in through a vtable (dlp_pred_vtable): a kind string, load
 * (from the shared model-file container), predict, free. Every model file,
 * whatever its kind, is a dlp_nn_file (src/nn/nn_file.c: versioned,
 * CRC-checked, atomic write) holding the common header entries below
 * ("pred/..."), written and read by dlp_pred_meta_write/_read, plus the
 * kind's payload: nn weights as "param/<name>" entries, or an opaque byte
 * blob (XGBoost's XGBoosterSaveModelToBuffer bytes) through
 * dlp_pred_blob_add/_get.
 *
 * A predictor set loads every *.dlpm file of a models/ directory and picks,
 * per target, the predictor with the lowest validation error recorded in
 * its file among those that cover the config (mode, runtime, precision).
 *
 * Targets are predicted in log space by the learned kinds (they span 4+
 * orders of magnitude; log makes a Huber/MSE loss a relative one); values
 * returned here are always in natural units.
 */
#ifndef DLP_PRED_H
#define DLP_PRED_H

#include "../graph/graph.h"
#include "../nn/nn.h"

#include <stdbool.h>
#include <stdint.h>

/* ---- targets ------------------------------------------------------------ */
typedef enum {
    DLP_MODE_INFERENCE = 0,
    DLP_MODE_TRAINING = 1,
    DLP_MODE_LLM = 2,
    DLP_MODE_COUNT
} dlp_pred_mode;

typedef enum {
    DLP_T_INF_LATENCY_MS = 0,    /* inference.latency_ms */
    DLP_T_INF_MEMORY_MIB,        /* inference.memory_mib (peak allocated) */
    DLP_T_INF_ENERGY_J,          /* inference.energy_j (per forward) */
    DLP_T_INF_POWER_W,           /* inference.power_w (average) */
    DLP_T_TRAIN_STEP_MS,         /* training.step_ms */
    DLP_T_TRAIN_MEMORY_MIB,      /* training.memory_mib */
    DLP_T_TRAIN_POWER_W,         /* training.power_w */
    DLP_T_LLM_THROUGHPUT,        /* llm.throughput_samples_s */
    DLP_T_LLM_MEMORY_MIB,        /* llm.memory_mib */
    DLP_T_LLM_ENERGY_PER_SAMPLE, /* llm.energy_per_sample_j */
    DLP_T_COUNT
} dlp_target;

/* "inference.latency_ms", ... (NULL out of range). */
const char *dlp_target_name(dlp_target t);
/* Parses a full name ("training.step_ms") or, with mode given, the short
 * column name ("step_ms"). DLP_ERR_NOT_FOUND listing the names otherwise. */
dlp_status dlp_target_parse(const char *s, dlp_target *out, dlp_error *err);
dlp_pred_mode dlp_target_mode(dlp_target t);
/* The mode's time target: inference latency, training step, LLM
 * throughput. */
dlp_target dlp_mode_main_target(dlp_pred_mode m);
/* Peak-memory targets (inference, training, LLM). */
bool dlp_target_is_memory(dlp_target t);
const char *dlp_target_column(dlp_target t);   /* "latency_ms" */
const char *dlp_target_unit(dlp_target t);     /* "ms", "MiB", "J", ... */
const char *dlp_mode_name(dlp_pred_mode m);    /* "inference", ... */
dlp_status dlp_mode_parse(const char *s, dlp_pred_mode *out, dlp_error *err);

typedef enum { DLP_PREC_FP32 = 0, DLP_PREC_FP16, DLP_PREC_BF16,
               DLP_PREC_COUNT } dlp_precision;
typedef enum { DLP_RT_EAGER = 0, DLP_RT_GRAPH, DLP_RT_COUNT } dlp_runtime;
const char *dlp_precision_name(dlp_precision p);   /* "fp32" */
dlp_status dlp_precision_parse(const char *s, dlp_precision *out,
                               dlp_error *err);
const char *dlp_runtime_name(dlp_runtime r);       /* "eager" | "graph" */
dlp_status dlp_runtime_parse(const char *s, dlp_runtime *out, dlp_error *err);

/* ---- what to predict for ------------------------------------------------- */
typedef struct {
    dlp_device device;        /* from dlp_device_load */
    bool has_mig;             /* run on a MIG instance */
    dlp_mig_profile mig;      /* valid when has_mig */
    int sms;                  /* SM partition (green context); 0 = whole GPU */
    dlp_precision precision;
    dlp_runtime runtime;      /* inference / llm; training ignores it */
    dlp_pred_mode mode;
    int64_t batch;            /* >= 1 */
    int64_t seq;              /* language models; 0 = not applicable */
    int64_t height, width;    /* vision input; 0 = not applicable */
} dlp_pred_config;

/* Defaults: fp32, graph runtime, inference, batch 1, whole GPU. The device
 * must be filled by the caller. */
void dlp_pred_config_init(dlp_pred_config *c);
/* Checks the config against its device (batch range, precision support,
 * sms range, MIG profile of this device). DLP_ERR_ARG with the reason. */
dlp_status dlp_pred_config_check(const dlp_pred_config *c, dlp_error *err);

struct dlp_feat_graph;        /* src/feat/feat.h: featurized graph */

/* One prediction request. graph must be analysed (shapes + dlp_cost) with
 * the config's batch/seq already bound, and for vision models the input
 * resolution (dlp_feat_bind_resolution(graph, height, width) before
 * dlp_model_analyze; graphs are exported at one fixed size). feat may carry the featurized graph
 * (dlp_feat_graph_build on the same graph) so several predictors share it;
 * NULL: the predictor featurizes itself (dlp_pred_feat). One of graph and
 * feat must be given (training/evaluation pass feat only). info (may be NULL) is the dataset
 * row of the graph, when known (family names for the LLM tree model). */
typedef struct {
    const dlp_graph *graph;
    const dlp_pred_config *cfg;
    const struct dlp_feat_graph *feat;
    const dlp_graph_info *info;
} dlp_pred_input;

/* ---- what comes out ------------------------------------------------------ */
typedef struct {
    bool valid;               /* this target was predicted */
    double value;             /* natural units (ms, MiB, J, W, samples/s) */
    double lo, hi;            /* ~90% interval from validation residuals */
    const char *by;           /* kind that produced it (static string) */
    double err_pct;           /* MAPE of the file that answered, on the
                                 basis it was chosen by; 0: unknown */
    const char *err_basis;    /* "heldout", "heldout-all", "validation" */
    double host_ref_us;       /* eager (training: the step): the host the
                                 answering file's labels were brought to
                                 (dlp_pred_meta_host_ref_us); 0: the
                                 labels' own hosts */
} dlp_pred_value;

typedef struct {
    dlp_pred_value v[DLP_T_COUNT];
    bool ood;                 /* outside the training distribution */
    char ood_reason[256];     /* first reason, "" when !ood */
    bool extrapolated;        /* device has no training data in the model */
} dlp_pred_result;

void dlp_pred_result_init(dlp_pred_result *r);
/* Merges one predictor's result r into out: the valid targets u with
 * take[u], and r's out-of-distribution (first reason kept) and
 * extrapolation flags. Returns how many targets were copied. */
int dlp_pred_result_take(dlp_pred_result *out, const dlp_pred_result *r,
                         const bool take[DLP_T_COUNT]);
/* The error for a request no predictor covers (mode, precision, runtime). */
dlp_status dlp_pred_none_covers(const dlp_pred_input *in, dlp_error *err);

/* For kinds: the featurized graph of a request: in->feat, or built from
 * in->graph into *local (then free it with dlp_feat_graph_free). Flags the
 * result OOD when the graph has ops outside the vocabulary or nodes
 * without a known cost. */
dlp_status dlp_pred_feat(const dlp_pred_input *in, struct dlp_feat_graph *local,
                         const struct dlp_feat_graph **out, dlp_pred_result *r,
                         dlp_error *err);
/* Sets ood and keeps the first reason (later ones are ignored). */
void dlp_pred_result_flag(dlp_pred_result *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* ---- the shared model-file header --------------------------------------- */
#define DLP_PRED_KIND_MAX 32
#define DLP_PRED_FILE_EXT ".dlpm"
/* the range a file's calibration factor may take (pred/scale) */
#define DLP_PRED_SCALE_MIN 0.5
#define DLP_PRED_SCALE_MAX 2.0

typedef struct {
    char kind[DLP_PRED_KIND_MAX]; /* "linreg", "roofline", "dippm", "trappm",
                                     "xgb", "kern", or a blend "dippm+kern" */
    int feat_schema;          /* DLP_FEAT_SCHEMA of the featurizer it was
                                 trained with; 0 = uses no graph features */
    dlp_pred_mode mode;
    uint32_t targets;         /* bit (1u << dlp_target) per predicted target */
    uint32_t runtimes;        /* bit (1u << dlp_runtime); 0 = any */
    uint32_t precisions;      /* bit (1u << dlp_precision); 0 = any */
    char devices[256];        /* comma-separated devices with training data */
    uint32_t data_precisions; /* bit (1u << dlp_precision) per precision of
                                 the training examples; 0 = not recorded
                                 (files before the thirty-third session):
                                 another precision is predicted, flagged */
    /* per target (NAN where not predicted / unknown): */
    double val_error[DLP_T_COUNT];   /* validation MAPE, fraction */
    double resid_lo[DLP_T_COUNT];    /* 5% quantile of log(actual/pred) */
    double resid_hi[DLP_T_COUNT];    /* 95% quantile of log(actual/pred) */
    double scale[DLP_T_COUNT];       /* the MAPE calibration factor the
                                        predictions are multiplied by (1:
                                        none; "pred/scale", optional;
                                        dlp_pred_train: pred_train.c) */
    /* training ranges, for the OOD check (0 = not recorded) */
    double batch_min, batch_max;
    double seq_min, seq_max;
    double macs_min, macs_max;       /* total MACs of the training graphs */
    char info[512];           /* free text: data commit, split, samples */
} dlp_pred_meta;

void dlp_pred_meta_init(dlp_pred_meta *m, const char *kind,
                        dlp_pred_mode mode);
/* The training ranges of the OOD check and the examples' precisions, one
 * example at a time: _reset, _add per example (macs: its graph's total),
 * _done (ranges that saw nothing become 0). A sequence of 0 (a model
 * without one) is no end of the sequence range. */
void dlp_pred_meta_ranges_reset(dlp_pred_meta *m);
void dlp_pred_meta_ranges_add(dlp_pred_meta *m, const dlp_pred_config *c,
                              double macs);
void dlp_pred_meta_ranges_done(dlp_pred_meta *m);
/* Adds the "pred/..." entries to f. */
dlp_status dlp_pred_meta_write(const dlp_pred_meta *m, dlp_nn_file *f,
                               dlp_error *err);
/* Reads them back; DLP_ERR_FORMAT naming a missing/wrong entry. */
dlp_status dlp_pred_meta_read(const dlp_nn_file *f, dlp_pred_meta *m,
                              dlp_error *err);
/* true when the device name is in m->devices. */
bool dlp_pred_meta_has_device(const dlp_pred_meta *m, const char *device);
/* The info string's record of `dlp_train --host-norm` (pred_train.c
 * writes it, "...; eager labels at a host of 8.409 us (...)"): the
 * reference host's us per eager op, 0 when the file learned the labels
 * as measured. */
#define DLP_HOST_NORM_INFO "eager labels at a host of "
double dlp_pred_meta_host_ref_us(const dlp_pred_meta *m);
/* true when the predictor covers target t for this config (mode, runtime,
 * precision). */
bool dlp_pred_meta_covers(const dlp_pred_meta *m, dlp_target t,
                          const dlp_pred_config *c);

/* Opaque bytes in a model file (stored as "blob/<name>": an i64 array
 * holding the bytes, plus the exact length). _get points into f. */
dlp_status dlp_pred_blob_add(dlp_nn_file *f, const char *name,
                             const void *bytes, size_t n, dlp_error *err);
dlp_status dlp_pred_blob_get(const dlp_nn_file *f, const char *name,
                             const void **bytes, size_t *n, dlp_error *err);
/* Whether f holds a blob `name` (its bytes entry; _get checks the rest). */
bool dlp_pred_blob_exists(const dlp_nn_file *f, const char *name);
/* Removes the blob `name` under `scope` (the prefix of a component's
 * entries, e.g. "blend/1/"; "" at the top level): its bytes and length
 * entries. False when it had neither. */
bool dlp_pred_blob_remove(dlp_nn_file *f, const char *scope, const char *name);

/* ---- predictors ---------------------------------------------------------- */
typedef struct dlp_predictor dlp_predictor;

/* What running a kind costs, which decides how `dlperf predict` shares
 * and ranks files (src/predict/predict_set.c). */
typedef enum {                /* in increasing order */
    DLP_PRED_COST_FREE = 1,   /* arithmetic on the features alone (roofline,
                                 linreg): never moved to a shared file */
    DLP_PRED_COST_MODEL = 2,  /* runs a learned model (a network, boosters):
                                 milliseconds per process */
    DLP_PRED_COST_SLOW = 3    /* ten times a network (kern's per-node
                                 boosters): competes only when asked */
} dlp_pred_cost;

typedef struct {
    const char *kind;
    /* Builds p->impl from the file (meta already read into p->meta). The
     * file is freed after load returns: copy what you keep. */
    dlp_status (*load)(dlp_predictor *p, const dlp_nn_file *f,
                       dlp_error *err);
    /* Fills out->v[t] for the targets it covers (others untouched), may
     * flag OOD. May use scratch kept in p->impl: one predictor must not
     * run in two threads at once. */
    dlp_status (*predict)(const dlp_predictor *p, const dlp_pred_input *in,
                          dlp_pred_result *out, dlp_error *err);
    void (*free)(dlp_predictor *p);   /* frees p->impl only */
    dlp_pred_cost cost;               /* every kind states it (0: as MODEL) */
} dlp_pred_vtable;

struct dlp_predictor {
    const dlp_pred_vtable *vt;
    dlp_pred_meta meta;
    char *path;               /* file it came from (malloc'd), may be NULL */
    void *impl;
};

/* The kinds built into src/pred/ (linreg, roofline, dippm, trappm),
 * NULL-terminated. */
const dlp_pred_vtable *const *dlp_pred_builtin_kinds(void);

/* The cost of running `kind` (a built-in kind, one of `extra`, or a blend
 * "a+b": its costliest part); DLP_PRED_COST_MODEL for a kind not built in. */
dlp_pred_cost dlp_pred_kind_cost(const char *kind,
                                 const dlp_pred_vtable *const *extra);

/* Loads a model file: reads the header, finds the kind among the built-in
 * kinds (a kind "a+b" is a blend, pred_blend.c) and `extra`
 * (NULL-terminated list, may be NULL: how src/tree/'s XGBoost kind plugs
 * in), checks the feature schema against this build's
 * (DLP_ERR_UNSUPPORTED naming both on mismatch), calls its load. */
dlp_status dlp_predictor_load(const char *path,
                              const dlp_pred_vtable *const *extra,
                              dlp_predictor **out, dlp_error *err);
/* Same from an already-loaded file (p->path stays NULL). */
dlp_status dlp_predictor_from_file(const dlp_nn_file *f,
                                   const dlp_pred_vtable *const *extra,
                                   dlp_predictor **out, dlp_error *err);
/* Runs it, then applies the interval from meta.resid_lo/hi to every value
 * it filled that has no interval yet, sets `by`, and flags OOD / an
 * extrapolated device from meta. */
dlp_status dlp_predictor_predict(const dlp_predictor *p,
                                 const dlp_pred_input *in,
                                 dlp_pred_result *out, dlp_error *err);
void dlp_predictor_free(dlp_predictor *p);

/* ---- blends (pred_blend.c) ------------------------------------------------ */
/* A kind "a+b[+c...]" is a blend: its model file holds every component
 * kind trained on the same split, and a target is the geometric mean of
 * the components' predictions (the rule below). dlp_predictor_load and
 * dlp_pred_train accept such kinds ("dippm+kern"). */
#define DLP_PRED_BLEND_MAX 4
/* Splits kind at '+' into parts (pointing into buf[cap]) and checks every
 * part is a known kind; *n_out = the count (1 for a plain kind).
 * DLP_ERR_NOT_FOUND naming an unknown part, DLP_ERR_ARG past
 * DLP_PRED_BLEND_MAX parts. */
dlp_status dlp_pred_blend_parts(const char *kind, char *buf, size_t cap,
                                const char **parts, int *n_out,
                                dlp_error *err);
/* The blend rule: pred[c * DLP_T_COUNT + t] is component c's prediction
 * of target t (NAN: none) for c < n. out[t] = geometric mean over the
 * components that predict t (NAN when none does); inference energy, when
 * some component lacks it and all predict latency, = blended latency x
 * power / 1e3 (J). from[t] (may be NULL): the component whose value passed
 * through when only one predicts t, else -1. */
void dlp_pred_blend_combine(const double *pred, int n, double *out,
                            int *from);

/* ---- predictor sets ------------------------------------------------------ */
/* Lists the *.dlpm files of dir (names only, sorted, malloc'd: free each)
 * into names[0..max); DLP_ERR_NOT_FOUND when there are none, DLP_ERR_LIMIT
 * past max. On error nothing is left allocated. */
dlp_status dlp_pred_list_files(const char *dir, char **names, int max,
                               int *n_out, dlp_error *err);

typedef struct dlp_pred_set dlp_pred_set;

/* Loads every *.dlpm file of dir (sorted by name). A file that fails to
 * load fails the whole set, naming the file. An empty directory is
 * DLP_ERR_NOT_FOUND. */
dlp_status dlp_pred_set_load(const char *dir,
                             const dlp_pred_vtable *const *extra,
                             dlp_pred_set **out, dlp_error *err);
int dlp_pred_set_count(const dlp_pred_set *s);
const dlp_predictor *dlp_pred_set_at(const dlp_pred_set *s, int i);
/* Best predictor for target t under config c (lowest meta.val_error among
 * those that cover it; ties: first by file name), or NULL. */
const dlp_predictor *dlp_pred_set_best(const dlp_pred_set *s, dlp_target t,
                                       const dlp_pred_config *c);
/* Predicts every target of c->mode that some predictor covers, each by its
 * best predictor. DLP_ERR_NOT_FOUND when no predictor covers the mode. */
dlp_status dlp_pred_set_predict(const dlp_pred_set *s,
                                const dlp_pred_input *in,
                                dlp_pred_result *out, dlp_error *err);
void dlp_pred_set_free(dlp_pred_set *s);

#endif /* DLP_PRED_H */
