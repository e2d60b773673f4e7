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

/* Share of a MIG profile's named memory a process can use (predict_mig.c). */
#define DLP_MIG_USABLE 0.95

/* CUDA context + allocator slack added to the predicted peak (allocated)
 * memory for the MIG advice: NVML used memory = context + reserved, and
 * reserved >= allocated. Both figures come from the dataset (rows that
 * record memory_mib, mem_reserved_mib and nvml_used_mib; computed by
 * bench/mig_constants.py, numbers and command in README "MIG advice"):
 *   need = peak_allocated * DLP_RESERVED_RATIO + DLP_CUDA_CONTEXT_MIB  */
#define DLP_CUDA_CONTEXT_MIB 520.0
#define DLP_RESERVED_RATIO 1.05

struct dlp_predictor_set {
    dlp_pred_set *set;
    char **names;            /* "kind (file)" per predictor */
    int n;
};

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
