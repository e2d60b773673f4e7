/* pred_dippm.c — DIPPM (Panner Selvam & Brorsson, 2023): 3 GraphSAGE
 * layers over the node features, mean-pooled, concatenated with the static
 * features, 3 fully connected layers, one output per target of the mode
 * (inference: latency, memory, energy, power), Huber loss on log targets.
 * The network itself is the shared regressor of pred_gnn.c. */
#include "pred_gnn.h"

static const dlp_gnn_arch ARCH = {"dippm", 3, 3, false};

dlp_status dlp_pred_dippm_train(const dlp_examples *E, const int32_t *tr,
                                int ntr, const int32_t *va, int nva,
                                const dlp_train_opts *o, dlp_pred_meta *meta,
                                dlp_nn_file *out, dlp_error *err) {
    return dlp_gnn_train(&ARCH, E, tr, ntr, va, nva, o, meta, out, err);
}

const dlp_pred_vtable dlp_pred_dippm_vt = {"dippm", dlp_gnn_load,
                                           dlp_gnn_predict, dlp_gnn_free,
                                           DLP_PRED_COST_MODEL};
