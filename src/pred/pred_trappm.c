/* pred_trappm.c — TraPPM (Panner Selvam & Brorsson): a graph autoencoder
 * (pred_gae.c: 4 GraphSAGE layers with BatchNorm, ReLU, dropout 0.5,
 * inner-product decoder, BCE with negative sampling) pre-trained on the
 * whole unlabeled pool; its frozen sum-pooled embedding is concatenated
 * with a supervised 2-layer GraphSAGE branch and the static features, then
 * 2 fully connected layers. Targets: those of the mode (the paper's are
 * training step time, training memory and power). Transfer to another GPU
 * fine-tunes a trained file on a few samples (dlp_train_opts.init_from). */
#include "pred_gnn.h"

static const dlp_gnn_arch ARCH = {"trappm", 2, 2, true};

dlp_status dlp_pred_trappm_train(const dlp_examples *E, const int32_t *tr,
                                 int ntr, const int32_t *va, int nva,
                                 const dlp_train_opts *o, dlp_pred_meta *meta,
                                 dlp_nn_file *out, dlp_error *err) {
    return dlp_gnn_train(&ARCH, E, tr, ntr, va, nva, o, meta, out, err);
}

const dlp_pred_vtable dlp_pred_trappm_vt = {"trappm", dlp_gnn_load,
                                            dlp_gnn_predict, dlp_gnn_free,
                                            DLP_PRED_COST_MODEL};
