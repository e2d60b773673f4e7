/*
 * predict.h — internal to libdlperf. The predict path behind the public
 * "predict" API (include/dlperf.h): config validation and binding
 * (predict.c), partition scaling by roofline (predict_scale.c), MIG advice
 * (predict_mig.c), the JSON writer (predict_json.c).
 */
#ifndef DLP_PREDICT_H
#define DLP_PREDICT_H

#include "../graph/graph.h"
#include "../pred/pred.h"
#include "../pred/pred_heldout.h"
#include "predict_host.h"
#include "predict_part.h"

#include <pthread.h>

/* Share of a MIG profile's named memory a process can use (predict_mig.c). */
#define DLP_MIG_USABLE 0.95

/* CUDA context + allocator slack added to the predicted peak (allocated)
 * memory for the MIG advice: NVML used = CUDA context (+ library handles)
 * + the caching allocator's reserved memory, and reserved >= allocated.
 *   need = peak_allocated x DLP_RESERVED_RATIO + DLP_CUDA_CONTEXT_MIB
 * Fitted on the dataset (bench/mig_constants.py data): the pair with the
 * smallest mean need for which need covers NVML used memory on 95% of the
 * inference rows that record allocated, reserved and NVML used memory
 * (2838 rows: 1316 H100, 1522 H200; torch 2.11 / CUDA 13; refitted after
 * the memory re-measurement of 2026-11-26, data/README.md). NVML used -
 * reserved alone is 1315 MiB median on the H100 (1451 max), 1476 on the
 * H200 (1586 max); reserved / allocated 1.38 median on both. */
#define DLP_CUDA_CONTEXT_MIB 1685.0
#define DLP_RESERVED_RATIO 1.20

/* One predictor file of the set: its header, scanned at open; the
 * predictor itself, loaded (and fully checked) when first needed. */
#define DLP_PRED_MAX_INST 16
typedef struct {
    char *path;
    dlp_pred_meta meta;      /* kind, mode, targets, runtimes, precisions,
                                val_error, devices (from the scan) */
    /* loaded copies: one per concurrent caller (a predictor may keep
     * scratch buffers in its impl, so one copy serves one thread at once) */
    dlp_predictor *inst[DLP_PRED_MAX_INST];
    bool busy[DLP_PRED_MAX_INST];
    int n_inst;
    dlp_status failed;       /* load failed: remembered, with why */
    char why[256];
} dlp_pred_file;

struct dlp_predictor_set {
    dlp_pred_file *files;    /* sorted by file name */
    char **names;            /* "kind (file)" per file */
    int n;
    dlp_part_model part;     /* <dir>/partition.csv (predict_part.h) */
    bool has_part;           /* false: partitions scale by roofline */
    /* the host-aware eager corrections by dlp_host_mode (inference, llm,
     * training): <dir>/dlp_host_file(mode) (predict_host.h); without
     * one, --host-us is refused in that mode */
    dlp_host_model host[DLP_HOST_N_MODES];
    bool has_host[DLP_HOST_N_MODES];
    dlp_heldout heldout;     /* <dir>/heldout.csv, read at open (empty
                                without one): the per-target choice */
    bool best;               /* slow kinds compete too
                                (dlp_predictor_set_best) */
    pthread_mutex_t lock;    /* guards loading and the busy flags */
    pthread_cond_t freed;    /* a copy became free */
};

/* predict_set.c: scan a directory / free / predict every target of the
 * config's mode with its best file (same rule as dlp_pred_set_predict). */
dlp_status dlp_predict_set_open(const char *dir, dlp_predictor_set *ps,
                                dlp_error *err);
void dlp_predict_set_close(dlp_predictor_set *ps);
dlp_status dlp_predict_set_run(dlp_predictor_set *ps, const dlp_pred_input *in,
                               dlp_pred_result *out, dlp_error *err);
/* The basis on which a target's file was chosen (dlp_predict_set_choose). */
typedef enum {
    DLP_CHOICE_NONE = 0,     /* no file covers the target */
    DLP_CHOICE_VALIDATION,   /* validation error recorded in each file */
    DLP_CHOICE_HELDOUT,      /* leave-models-out MAPE of the request's
                                runtime (heldout.csv) */
    DLP_CHOICE_HELDOUT_ALL   /* leave-models-out MAPE over all runtimes */
} dlp_choice_basis;
const char *dlp_choice_basis_name(dlp_choice_basis b);  /* "validation" .. */

/* The file index answering each target under c (-1: none), as
 * dlp_predict_set_run uses it, and on what basis (basis may be NULL).
 * Per target: where some covering file's kind has a leave-models-out row
 * in heldout.csv for (mode, request runtime, target), only such files
 * compete, by that MAPE; else the same with the "all" runtime row; else
 * every covering file by its recorded validation error. Then a target
 * whose file serves nothing else moves to a file already running when its
 * error (same basis) is within 10%, unless that file runs no network
 * (roofline, linreg); inference power rides on the energy file. */
void dlp_predict_set_choose(const dlp_predictor_set *ps,
                            const dlp_pred_config *c, int best[DLP_T_COUNT],
                            dlp_choice_basis basis[DLP_T_COUNT]);

/* The kinds src/pred does not build in (the XGBoost tree kind). */
const dlp_pred_vtable *const *dlp_predict_extra_kinds(void);

/* Roofline time of one forward of an analysed graph, in ms, on a share of
 * the device: every node costs max(FLOPs / (peak x sm_share), bytes /
 * (bandwidth x bw_share)) + a fixed per-kernel floor that does not scale
 * (launch_us for eager, 1 us for graph replay). Matrix ops (Conv, MatMul,
 * Gemm, ...) use the tensor-core peak of the precision (FP32: the non-tensor
 * peak, TF32 being off by protocol), the rest the FP32 peak; float tensors
 * count at the precision's element size. */
double dlp_predict_roofline_ms(const dlp_graph *g, const dlp_device *d,
                               dlp_precision prec, dlp_runtime rt,
                               double sm_share, double bw_share);

/* The per-node terms of that sum: calls fn for every node of g and of its
 * subgraphs (in order) with its compute time tc_s = FLOPs / (peak x
 * sm_share) and memory time tm_s = bytes / (bandwidth x bw_share), in
 * seconds, and whether it launches a kernel (work: not a shape-only op,
 * some FLOPs or output bytes). */
typedef void (*dlp_roofline_node_fn)(const dlp_node *n, double tc_s,
                                     double tm_s, bool work, void *user);
void dlp_predict_roofline_visit(const dlp_graph *g, const dlp_device *d,
                                dlp_precision prec, double sm_share,
                                double bw_share, dlp_roofline_node_fn fn,
                                void *user);

/* Factor by which latency grows on a partition: roofline(partition) /
 * roofline(whole GPU), >= 1. MIG: SM share = instance SMs / GPU SMs,
 * bandwidth share = memory slices / 8 (MIG partitions the memory system).
 * SM partition (green context): the memory system stays whole but few SMs
 * cannot saturate it: bandwidth share = min(1, 2 x SM share) (assumption:
 * HBM saturates with about half the SMs). */
double dlp_predict_partition_factor(const dlp_graph *g, const dlp_device *d,
                                    dlp_precision prec, dlp_runtime rt,
                                    int sms, const dlp_mig_profile *mig);

/* The same with the whole-GPU roofline already computed (full_ms). */
double dlp_predict_partition_factor_from(const dlp_graph *g,
                                         const dlp_device *d,
                                         dlp_precision prec, dlp_runtime rt,
                                         int sms, const dlp_mig_profile *mig,
                                         double full_ms);

#endif /* DLP_PREDICT_H */
