/*
 * dlperf.h — the one public header of libdlperf.
 *
 * dlperf predicts how a deep-learning model performs on a GPU without that
 * GPU. The data flow is: model file -> graph with shapes -> costs ->
 * features -> predictors -> report.
 *
 * Example (read a model, bind its symbolic dims, print its MACs):
 *
 *     dlp_error err;
 *     dlp_model *m = NULL;
 *     if (dlp_model_open("resnet50.onnx", &m, &err) != DLP_OK) {
 *         fprintf(stderr, "%s\n", err.msg);
 *         return 1;
 *     }
 *     dlp_model_set_batch(m, 8, &err);
 *     if (dlp_model_analyze(m, &err) == DLP_OK) {
 *         dlp_summary s;
 *         dlp_model_summary(m, &s);
 *         printf("%.3f GMACs\n", s.macs / 1e9);
 *     }
 *     dlp_model_free(m);
 *
 * Conventions: every name carries the dlp_ prefix; functions that can fail
 * return a dlp_status and fill a caller-owned dlp_error with a one-line
 * message naming the problem. The library never prints and never exits.
 * Freeing NULL is a no-op. Objects returned through an out-pointer are owned
 * by the caller and released with the matching _free function.
 */
#ifndef DLPERF_H
#define DLPERF_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DLPERF_VERSION "0.1.0"

/* ---- status ------------------------------------------------------------ */

typedef enum {
    DLP_OK = 0,
    DLP_ERR_ARG,         /* bad argument from the caller */
    DLP_ERR_IO,          /* file missing, unreadable, mmap failed */
    DLP_ERR_FORMAT,      /* malformed input (protobuf, ONNX, dataset) */
    DLP_ERR_UNSUPPORTED, /* valid but not handled (opset, dtype, ...) */
    DLP_ERR_SHAPE,       /* inconsistent shapes or unbound dims */
    DLP_ERR_LIMIT,       /* input exceeds a safety limit (size, depth) */
    DLP_ERR_NOMEM,       /* allocation failed */
    DLP_ERR_GRAPH,       /* cycle, dangling input, duplicate producer */
    DLP_ERR_NOT_FOUND    /* unknown device, profile, key */
} dlp_status;

typedef struct {
    dlp_status code;
    char msg[512];
} dlp_error;

const char *dlp_status_str(dlp_status s);

/* ---- element types (values are ONNX TensorProto.DataType) -------------- */

typedef enum {
    DLP_DT_UNDEFINED = 0,
    DLP_DT_FLOAT = 1,
    DLP_DT_UINT8 = 2,
    DLP_DT_INT8 = 3,
    DLP_DT_UINT16 = 4,
    DLP_DT_INT16 = 5,
    DLP_DT_INT32 = 6,
    DLP_DT_INT64 = 7,
    DLP_DT_STRING = 8,
    DLP_DT_BOOL = 9,
    DLP_DT_FLOAT16 = 10,
    DLP_DT_DOUBLE = 11,
    DLP_DT_UINT32 = 12,
    DLP_DT_UINT64 = 13,
    DLP_DT_COMPLEX64 = 14,
    DLP_DT_COMPLEX128 = 15,
    DLP_DT_BFLOAT16 = 16,
    DLP_DT_FLOAT8E4M3FN = 17,
    DLP_DT_FLOAT8E4M3FNUZ = 18,
    DLP_DT_FLOAT8E5M2 = 19,
    DLP_DT_FLOAT8E5M2FNUZ = 20,
    DLP_DT_UINT4 = 21,
    DLP_DT_INT4 = 22
} dlp_dtype;

const char *dlp_dtype_name(dlp_dtype t);   /* "float32", "int64", ... */
size_t dlp_dtype_size(dlp_dtype t);        /* bytes per element, 0 unknown */
int dlp_dtype_is_float(dlp_dtype t);

/* ---- models: file -> graph -> shapes -> costs --------------------------- */

typedef struct dlp_model dlp_model;

/* Opens an ONNX file. Weight bytes are never read unless a shape needs them
 * (small integer constants); external data files may be absent. */
dlp_status dlp_model_open(const char *path, dlp_model **out, dlp_error *err);

/* Opens an ONNX model held in memory (the bytes must outlive the model). */
dlp_status dlp_model_open_memory(const void *bytes, size_t len,
                                 const char *name, dlp_model **out,
                                 dlp_error *err);

void dlp_model_free(dlp_model *m);

/* Binds a symbolic dimension (e.g. "batch", "seq") before analysis. */
dlp_status dlp_model_bind_dim(dlp_model *m, const char *name, int64_t value,
                              dlp_error *err);

/* Binds the first dimension of every graph input to n, whatever its name. */
dlp_status dlp_model_set_batch(dlp_model *m, int64_t n, dlp_error *err);

/* Checks bindings before they are applied: refuses one name bound twice
 * to different values, and a name that is some input's batch dimension
 * bound to another size than batch (-1: no batch given), since the graph
 * would be analysed at one size while the caller reports the other. */
dlp_status dlp_model_check_binds(const dlp_model *m, int64_t batch, int n,
                                 const char *const *names,
                                 const int64_t *values, dlp_error *err);

/* Runs shape inference and the cost model. Unknown ops leave their outputs
 * unshaped and add a warning; they are not an error. */
dlp_status dlp_model_analyze(dlp_model *m, dlp_error *err);

/* Warnings gathered by open/analyze (unknown ops, unshaped tensors). */
int dlp_model_warning_count(const dlp_model *m);
const char *dlp_model_warning(const dlp_model *m, int i);

typedef struct {
    int64_t nodes;            /* nodes of the main graph + subgraph nodes */
    int64_t edges;            /* producer->consumer tensor edges */
    int64_t params;           /* elements of floating-point initializers */
    int64_t weight_bytes;     /* bytes of all initializers */
    double macs;              /* multiply-accumulates */
    double flops;             /* floating-point operations */
    int64_t activation_bytes; /* bytes of all non-initializer tensors */
    int64_t peak_activation_bytes; /* max live activation bytes in topo order */
    int64_t unshaped_tensors; /* tensors without a fully known shape */
    int64_t tensors;          /* all tensors */
    int opset;                /* default-domain opset */
} dlp_summary;

dlp_status dlp_model_summary(const dlp_model *m, dlp_summary *out);

/* The whole analysed graph as the JSON object documented in README
 * ("dlperf inspect --json"). *out is malloc'd; free it with free(). */
dlp_status dlp_model_to_json(const dlp_model *m, char **out, dlp_error *err);

/* Totals per operator type over the analysed graph and its subgraphs, in
 * order of first appearance. *out is malloc'd (free() it); the op strings
 * belong to the model and live as long as it. */
typedef struct {
    const char *op;
    int64_t count;
    double macs;
    double flops;
} dlp_op_stat;

dlp_status dlp_model_op_stats(const dlp_model *m, dlp_op_stat **out, int *n,
                              dlp_error *err);

/* ---- datasets ---- */
/* A dataset directory in the layout of data/FORMAT.md (graphs/index.csv,
 * graphs/<pack>.tar.zst, batches/<id>/{inference,training,llm}.csv,
 * kernels.csv.zst, failures.csv, env.json). dlp_dataset_open parses every
 * label file and the index (columns found by header name, unknown columns
 * ignored); malformed files fail with the file and line in err. Graph packs
 * are read only on demand (graph_bytes, foreach_graph, check).
 * Empty numeric cells read as NAN; empty integer cells (seq, height, width,
 * sms) read as 0. Row strings live as long as the dataset. */
typedef struct dlp_dataset dlp_dataset;

typedef struct {
    const char *hash;        /* 16 hex digits of the SHA-256 of the file */
    const char *family, *model, *variant, *source, *exporter;
    const char *pack;        /* graphs/<pack>.tar.zst */
    int opset;
    int64_t nodes, file_bytes, params;
} dlp_graph_info;

typedef struct {             /* the columns every label row starts with */
    const char *protocol, *batch_id, *hash, *device, *status;
    int rep;                 /* 0 or 1 */
    int flagged;             /* status == "flagged" */
    const char *file;        /* CSV the row came from */
    int64_t line;            /* 1-based line where the row starts */
} dlp_label_common;

typedef struct {
    dlp_label_common c;
    const char *runtime, *precision;       /* eager|graph, fp32|fp16|bf16 */
    int64_t batch, seq, height, width;
    double latency_ms, latency_p10_ms, latency_p90_ms;
    double memory_mib, mem_reserved_mib, nvml_used_mib, energy_j, power_w;
    double host_us;   /* host dispatch us per eager op, where the batch
                         measured it (collector since 2026-11-27); NAN */
} dlp_inference_row;

typedef struct {
    dlp_label_common c;
    const char *precision, *optimizer;
    int64_t batch, height, width;
    double step_ms, step_p10_ms, step_p90_ms;
    double memory_mib, mem_reserved_mib, energy_j, power_w;
    double host_us;   /* host dispatch us per eager op around the step's
                         timing (collector since 2026-12-03); NAN */
} dlp_training_row;

typedef struct {
    dlp_label_common c;
    const char *runtime, *precision;
    int64_t batch, seq;
    double latency_ms, throughput_samples_s, memory_mib;
    double energy_per_sample_j, power_w;
} dlp_llm_row;

typedef struct {
    dlp_label_common c;
    const char *mode, *precision;          /* eager|compiled */
    int64_t sms, batch, seq, height, width, kernel_idx; /* sms 0: whole GPU */
    const char *kernel, *grid, *block;     /* grid, block: "x:y:z" */
    const char *nodes;                     /* '|'-separated ONNX node names */
    double duration_us;
} dlp_kernel_row;

typedef struct {
    const char *protocol, *batch_id, *hash, *model, *variant, *device;
    const char *stage, *reason;
    const char *file;
    int64_t line;
} dlp_failure_row;

typedef struct {             /* row counts (not configurations) */
    size_t graphs, packs, batches;
    size_t inference, training, llm, kernels, failures;
} dlp_dataset_counts;

dlp_status dlp_dataset_open(const char *dir, dlp_dataset **out,
                            dlp_error *err);
void dlp_dataset_free(dlp_dataset *ds);
void dlp_dataset_get_counts(const dlp_dataset *ds, dlp_dataset_counts *out);
const char *dlp_dataset_dir(const dlp_dataset *ds);
/* The newest collection batch (batches/<id>: the greatest id, ids start
 * with their UTC start time), naming what data a result was measured on;
 * NULL when the dataset has no batch. */
const char *dlp_dataset_last_batch(const dlp_dataset *ds);
/* A fresh process's host probe of batch batch_id (its env.json
 * host_probe_start_us and host_probe_end_us, us per eager op, taken
 * before its workers start and after they stop; since p69a): the
 * geometric mean of the two, the one where the other is null; NAN when
 * the batch has neither or does not exist. */
double dlp_dataset_fresh_probe_us(const dlp_dataset *ds,
                                  const char *batch_id);
/* The host probes of batch i (< dlp_dataset_counts.batches, in the
 * batches/ folder's order): its fresh-process reading (as above) and the
 * medians of the positive host_us of its eager inference rows and of its
 * training rows (the probes the collector takes beside each label), each
 * NAN where there is none. 1, or 0 when i is out of range. */
typedef struct {
    const char *batch_id;    /* the folder's name */
    double fresh_us, inference_us, training_us;
} dlp_batch_host;
int dlp_dataset_batch_host(const dlp_dataset *ds, size_t i,
                           dlp_batch_host *out);

/* Row i (0-based, < the matching count); NULL when out of range. */
const dlp_graph_info *dlp_dataset_graph(const dlp_dataset *ds, size_t i);
const dlp_inference_row *dlp_dataset_inference(const dlp_dataset *ds, size_t i);
const dlp_training_row *dlp_dataset_training(const dlp_dataset *ds, size_t i);
const dlp_llm_row *dlp_dataset_llm(const dlp_dataset *ds, size_t i);
const dlp_kernel_row *dlp_dataset_kernel(const dlp_dataset *ds, size_t i);
const dlp_failure_row *dlp_dataset_failure(const dlp_dataset *ds, size_t i);

/* The index row of a hash, or NULL. */
const dlp_graph_info *dlp_dataset_find_graph(const dlp_dataset *ds,
                                             const char *hash);

/* Extracts one graph file from its pack (streams the pack: O(pack size)).
 * *bytes is malloc'd; free it with free(). Pass it to
 * dlp_model_open_memory. DLP_ERR_NOT_FOUND when absent from index or pack. */
dlp_status dlp_dataset_graph_bytes(const dlp_dataset *ds, const char *hash,
                                   void **bytes, size_t *len, dlp_error *err);

/* Calls fn once per graph file of every pack, one pass per pack (the way to
 * featurize many graphs). info is NULL for a member missing from the index.
 * bytes is valid only during the call. A non-zero return from fn stops the
 * walk (the function then returns DLP_OK). */
typedef int (*dlp_graph_visit_fn)(const char *hash, const dlp_graph_info *info,
                                  const void *bytes, size_t len, void *user);
dlp_status dlp_dataset_foreach_graph(const dlp_dataset *ds,
                                     dlp_graph_visit_fn fn, void *user,
                                     dlp_error *err);

/* Copies the graph files of n hashes out of their packs in one pass over
 * the packs (the way to load many graphs). bytes[i] is malloc'd (free()),
 * NULL with lens[i] 0 when hashes[i] is in no pack; a hash may repeat (each
 * entry gets its own copy). On error nothing is left allocated. */
dlp_status dlp_dataset_graphs_bytes(const dlp_dataset *ds,
                                    const char *const *hashes, int n,
                                    void **bytes, size_t *lens,
                                    dlp_error *err);

/* Validates the dataset (FORMAT.md rules: hashes in the index, graph files
 * in their packs, duplicate keys, unit ranges, flagged pairs) and computes
 * its statistics. *json (malloc'd, free()) is the report documented in
 * docs/DATASET_STATS.md: {"valid","errors":[..],"warnings":[..],"graphs",
 * "labeled_inference","labeled_training","labeled_llm","kernel_traces",
 * "devices",...,"inference":{...},"training":{...},"llm":{...}}.
 * Problems are not a failure: the return is DLP_OK and *n_errors /
 * *n_warnings (either may be NULL) count them. */
dlp_status dlp_dataset_check(const dlp_dataset *ds, char **json,
                             int *n_errors, int *n_warnings, dlp_error *err);

/* ---- devices ---- */
/* The built-in GPU database: datasheet figures (sources in docs/DEVICES.md),
 * optionally overridden by figures measured on the card (data/devices/
 * <name>.json, written by tools/devbench). dlp_device is a plain value:
 * copy it freely; its string pointers are static. */
typedef struct {
    const char *name;        /* "3g.40gb" */
    int slices;              /* compute slices (the "g"), of 7 */
    int mem_eighths;         /* memory slices, of 8 (L2 follows memory) */
    double mem_gb;           /* memory in GB as named */
    int sm_count;            /* SMs of the GPU instance */
    int max_instances;       /* how many fit on one GPU */
} dlp_mig_profile;

enum {                       /* bits of dlp_device.measured */
    DLP_DEVM_SM = 1u << 0, DLP_DEVM_CLOCK = 1u << 1, DLP_DEVM_MEM = 1u << 2,
    DLP_DEVM_MEM_BW = 1u << 3, DLP_DEVM_L2 = 1u << 4, DLP_DEVM_CC = 1u << 5,
    DLP_DEVM_FP32 = 1u << 6, DLP_DEVM_FP16 = 1u << 7, DLP_DEVM_BF16 = 1u << 8,
    DLP_DEVM_L2_BW = 1u << 9, DLP_DEVM_LAUNCH = 1u << 10
};

typedef struct {
    const char *name;          /* canonical, as in datasets: "H100-SXM5-80GB" */
    const char *const *aliases;/* NULL-terminated; includes the NVML name */
    const char *arch;          /* "hopper", "ampere", ... */
    const char *memory_type;   /* "HBM3", "GDDR6", ... */
    int sm_count;
    double clock_mhz;          /* boost clock */
    double mem_mib;            /* nominal: datasheet GB x 1024 */
    double mem_bw_gbs;         /* DRAM bandwidth, GB/s */
    double l2_mib;             /* L2 cache, MiB (1 datasheet MB = 1 MiB) */
    double l2_bw_gbs;          /* 0 = unknown (measured only) */
    int cc_major, cc_minor;    /* compute capability */
    double fp32_tflops;        /* peak non-tensor FP32 */
    double fp16_tc_tflops;     /* FP16 tensor core, dense, FP32 accumulate */
    double bf16_tc_tflops;     /* BF16 tensor core, dense; 0 = unsupported */
    double tdp_w;              /* board power */
    double launch_us;          /* kernel launch overhead (estimate) */
    const dlp_mig_profile *mig;/* MIG profiles (n_mig of them), or NULL */
    int n_mig;
    const char *source;        /* datasheet id; docs/DEVICES.md has the URL */
    unsigned measured;         /* DLP_DEVM_* bits overridden by measurement */
} dlp_device;

int dlp_device_count(void);
const dlp_device *dlp_device_at(int i);          /* NULL out of range */

/* Case-insensitive lookup of a name or alias, ignoring spaces, '-' and '_'
 * ("h100", "H100-SXM5-80GB", "NVIDIA H100 80GB HBM3"). Unknown names give
 * DLP_ERR_NOT_FOUND with the known names in err. */
dlp_status dlp_device_find(const char *name, dlp_device *out, dlp_error *err);

/* dlp_device_find, then applies <measured_dir>/<canonical name>.json when
 * that file exists (measured_dir may be NULL: datasheet only). */
dlp_status dlp_device_load(const char *name, const char *measured_dir,
                           dlp_device *out, dlp_error *err);

/* Overrides fields of d with the JSON written by tools/devbench (keys
 * gpu_name, sm_count, clock_mhz, mem_mib, l2_bytes, cc, fp32_tflops,
 * fp16_tc_tflops, bf16_tc_tflops, hbm_gbs, l2_gbs, launch_us; null or
 * missing keys keep the datasheet value) and sets d->measured bits.
 * Malformed JSON, wrong types, non-positive values or a gpu_name of another
 * card give DLP_ERR_FORMAT naming the file; d is unchanged then. */
dlp_status dlp_device_apply_measured(dlp_device *d, const char *path,
                                     dlp_error *err);

/* A MIG profile of d by name ("3g.40gb", also "MIG 3g.40gb"). */
dlp_status dlp_device_mig(const dlp_device *d, const char *profile,
                          dlp_mig_profile *out, dlp_error *err);

/* 1 when the card runs that precision ("fp32","tf32","fp16","bf16","fp8",
 * "int8") in hardware, else 0. */
int dlp_device_supports(const dlp_device *d, const char *precision);

/* The device as a fixed-order feature vector for predictors (names from
 * dlp_device_feature_name; order documented in docs/DEVICES.md). With a MIG
 * profile, SM-bound figures scale by its SM share and memory-bound ones by
 * its memory share. Writes min(cap, DLP_DEVICE_NFEATURES) values and
 * returns DLP_DEVICE_NFEATURES. */
#define DLP_DEVICE_NFEATURES 13
int dlp_device_features(const dlp_device *d, const dlp_mig_profile *mig,
                        double *out, int cap);
const char *dlp_device_feature_name(int i);      /* NULL out of range */

/* ---- predict ---- */
/* Predicts latency, peak memory, energy, throughput and average power of a
 * model on a GPU from the trained predictors of a models/ directory, with
 * an uncertainty interval per figure, out-of-distribution / extrapolation
 * flags and a MIG profile recommendation. Example:
 *
 *     dlp_predictor_set *ps;
 *     dlp_predictor_open("models", &ps, &err);
 *     dlp_predict_config c;
 *     dlp_predict_config_init(&c);
 *     c.device = "h100"; c.precision = "fp16"; c.batch = 8;
 *     dlp_predict_result r;
 *     if (dlp_predict(ps, model, &c, &r, &err) == DLP_OK)
 *         printf("%.3f ms, %s\n", r.latency_ms.value, r.mig_profile);
 *     dlp_predictor_close(ps);
 *
 * The model may be analysed already or not: dlp_predict binds the config's
 * batch and dims and (re-)analyses as needed. Error cases: unknown device
 * or MIG profile (DLP_ERR_NOT_FOUND listing the known ones), a precision
 * the device lacks (DLP_ERR_UNSUPPORTED), batch outside 1..65536 or a bad
 * SM count (DLP_ERR_ARG), symbolic dims still unbound (DLP_ERR_SHAPE naming
 * them), a resolution (height / width) outside 1..DLP_PREDICT_MAX_SIDE
 * (DLP_ERR_ARG), for a model without a 4-D float input (DLP_ERR_NOT_FOUND)
 * or whose graph fixes its size elsewhere (DLP_ERR_SHAPE). Ops the
 * featurizer never saw, configs outside the training ranges and devices
 * without training data are not errors: the result is flagged (ood,
 * extrapolated) with the reasons. */
typedef struct dlp_predictor_set dlp_predictor_set;

/* Loads every predictor file (*.dlpm) of models_dir. */
dlp_status dlp_predictor_open(const char *models_dir, dlp_predictor_set **out,
                              dlp_error *err);
void dlp_predictor_close(dlp_predictor_set *ps);
int dlp_predictor_set_size(const dlp_predictor_set *ps);
/* "kind (file name)" of predictor i; NULL out of range. */
const char *dlp_predictor_set_name(const dlp_predictor_set *ps, int i);
/* on != 0: per target, the file with the lowest error even when it is a
 * slow kind (the per-node kernel model kern and its blends: ~40-55 ms per
 * process and ~2.5 ms per graph, for the XGBoost library and its node
 * boosters, against ~5 ms and ~0.25 ms for DIPPM on ResNet-50); 0
 * (default): slow kinds answer only targets no other file covers. */
void dlp_predictor_set_best(dlp_predictor_set *ps, int on);

#define DLP_PREDICT_MAX_DIMS 16
#define DLP_PREDICT_MAX_SIDE 16384   /* pixels per side of a resolution */
typedef struct {
    const char *device;      /* required: name or alias ("h100") */
    const char *precision;   /* "fp32" (default), "fp16", "bf16"; a training
                                step at fp16 / bf16 is mixed precision
                                (autocast over fp32 weights) */
    const char *runtime;     /* "graph" (default) or "eager" */
    const char *mode;        /* "inference" (default), "training", "llm" */
    int64_t batch;           /* -1: as bound in the model (else 1) */
    int sms;                 /* SM partition; 0 = whole GPU */
    const char *mig;         /* run on this MIG profile; NULL = whole GPU */
    double slo_ms;           /* latency goal for the MIG advice; 0 = none */
    const char *measured_dir;/* measured device figures (data/devices); NULL */
    int n_dims;              /* symbolic dims to bind ("seq" = 128) */
    int skip_absent_dims;    /* 1: a dim the model lacks is skipped, not an
                                error (directory mode: mixed models) */
    const char *dim_names[DLP_PREDICT_MAX_DIMS];
    int64_t dim_values[DLP_PREDICT_MAX_DIMS];
    double host_us;          /* eager inference or LLM: the host's dispatch
                                time per eager op, us (the collector's
                                probe, docs/PREDICT.md); 0 = not given (the
                                prediction is for the result's host_ref_us,
                                or the training hosts' mix) */
    int64_t height, width;   /* > 0: rebind every 4-D float input's H x W
                                (an image model exported at a fixed
                                resolution); a graph whose other shapes fix
                                the old size fails its analysis by name;
                                0 = as exported */
} dlp_predict_config;

void dlp_predict_config_init(dlp_predict_config *c);

typedef struct {
    int valid;               /* 0: no predictor covers this figure */
    double value;            /* natural units */
    double lo, hi;           /* ~90% interval (validation residuals) */
    const char *by;          /* predictor kind (or "derived") */
    double err_pct;          /* that predictor's MAPE on this figure for
                                the whole GPU: held out (models/heldout.csv)
                                or on its validation models; 0: unknown */
    const char *err_basis;   /* "heldout", "heldout-all" (rows over both
                                runtimes), "validation", "heldout-host"
                                (latency / LLM throughput with host_us:
                                models/host.csv's or host-llm.csv's
                                corrected MAPE); NULL: unknown */
} dlp_predict_value;

#define DLP_PREDICT_MAX_REASONS 8
typedef struct {
    char device[48], precision[8], runtime[8], mode[12];
    int64_t batch, seq, height, width;
    int sms;                 /* SMs the prediction is for */
    char partition[24];      /* "" whole GPU, "sms=N" or the MIG profile */
    char scaling[16];        /* partition scaling: "none" or "roofline" */
    dlp_predict_value latency_ms;       /* per forward (training: per step) */
    dlp_predict_value memory_mib;       /* peak allocated, context excluded */
    dlp_predict_value energy_j;         /* per forward / step */
    dlp_predict_value throughput_per_s; /* samples per second */
    dlp_predict_value power_w;          /* energy / latency */
    char mig_profile[24];    /* recommended; "" when no profile qualifies */
    char mig_note[200];      /* why (or why none) */
    double context_mib;      /* CUDA context added for the MIG advice */
    double reserved_ratio;   /* allocator slack: need = peak x this + context */
    int ood;                 /* outside the training distribution */
    int extrapolated;        /* device without training data */
    double host_us;          /* the config's host_us; 0: not given */
    double host_ref_us;      /* eager (a training step too): the host, in
                                us per eager op, the answering file
                                predicts for when no host_us is given (its
                                labels were brought there, `dlperf train
                                --host-norm`); 0: the mix of hosts its
                                labels were measured on, or CUDA graph */
    double host_factor;      /* latency x this for that host (1: none) */
    double host_energy_factor;   /* energy x this: 1 + gamma (host_factor -
                                    1), gamma of the host file (1: none) */
    int n_reasons;
    char reasons[DLP_PREDICT_MAX_REASONS][200];
} dlp_predict_result;

dlp_status dlp_predict(dlp_predictor_set *ps, dlp_model *m,
                       const dlp_predict_config *c, dlp_predict_result *out,
                       dlp_error *err);

/* The result as one JSON object (keys documented in README "dlperf
 * predict"); *json is malloc'd, free() it. model_name may be NULL. */
dlp_status dlp_predict_to_json(const dlp_predict_result *r,
                               const char *model_name, char **json,
                               dlp_error *err);

/* dlp_predict with the config and the result in JSON (the entry point of
 * python/dlperf.py): config_json is one object with the keys of
 * dlp_predict_config, "device" required: device, precision, runtime,
 * mode, mig, measured_dir (strings); batch, sms, height, width
 * (integers >= 1; a key left out is the default); slo_ms, host_us (numbers); skip_absent_dims (bool); dims
 * ({"seq": 128, ...}). An unknown or repeated key, a wrong type or
 * malformed JSON is DLP_ERR_ARG naming it; then dlp_predict's errors.
 * *result_json is dlp_predict_to_json's object (free with dlp_free). */
dlp_status dlp_predict_json(dlp_predictor_set *ps, dlp_model *m,
                            const char *config_json, const char *model_name,
                            char **result_json, dlp_error *err);
/* Frees what the library returned through a char ** (JSON texts): free()
 * for callers that do not share the library's C runtime (bindings). */
void dlp_free(void *p);

/* MIG advice on its own: the smallest profile of the device (by memory,
 * then compute slices) whose memory holds peak_mib + context_mib and, when
 * slo_ms > 0, whose latency (latency_at(profile SMs) through the callback,
 * or latency_full_ms scaled by the SM share when the callback is NULL) meets
 * slo_ms. DLP_ERR_NOT_FOUND when the device has no MIG or nothing fits
 * (message says why); *out gets the profile. */
typedef double (*dlp_latency_at_fn)(int sms, const dlp_mig_profile *p,
                                    void *user);
dlp_status dlp_mig_recommend(const dlp_device *d, double peak_mib,
                             double context_mib, double slo_ms,
                             double latency_full_ms, dlp_latency_at_fn at,
                             void *user, dlp_mig_profile *out,
                             dlp_error *err);
/* Memory of a MIG profile usable by a process, MiB (see README). */
double dlp_mig_capacity_mib(const dlp_device *d, const dlp_mig_profile *p);

#ifdef __cplusplus
}
#endif
#endif /* DLPERF_H */
