/*
 * pred_gnn.h — internal to src/pred. The GNN regressor shared by DIPPM and
 * TraPPM: a dlp_nn_sage_model (L GraphSAGE layers -> mean pool -> concat
 * static features -> FC stack) predicting log(target) - mean for every
 * target of a mode at once, on top of an optional ridge prior fitted on the
 * static features (the network learns the prior's residual), Huber loss on
 * the log values with missing labels masked out.
 *
 * TraPPM adds frozen graph-autoencoder embeddings (pred_gae.c) to the
 * static features; DIPPM uses none. Both store everything in one model
 * file: "gnn/..." entries (architecture, normalisation, prior), the
 * network's "param/..." tensors, and TraPPM's "gae/..." encoder.
 */
#ifndef DLP_PRED_GNN_H
#define DLP_PRED_GNN_H

#include "pred_train.h"

/* ---- the op one-hot as a block (pred_gnn.c) ------------------------------
 * A network's selected node columns (ascending: the kept op one-hot
 * columns first) are read with the op one-hot passed sparse to the first
 * SAGE layer (dlp_nn_cat): n of them are ops, pos[op] is an op's column
 * among them (-1: dropped), standardized to base + (hot) scale. */
typedef struct {
    int n;
    int16_t pos[DLP_FEAT_NOPS + 1];
    nn_real scale[DLP_FEAT_NOPS + 1], base[DLP_FEAT_NOPS + 1];
} dlp_op_block;
/* b from the columns and the per-column mean and std of the full rows. */
void dlp_op_block_setup(dlp_op_block *b, const int32_t *cols, int n_cols,
                        const float *mean, const float *std);

/* ---- graph autoencoder encoder (pred_gae.c) ------------------------------ */
#define DLP_GAE_LAYERS 4
typedef struct dlp_gae dlp_gae;

/* Node features the encoder reads: device-independent columns only (op
 * one-hot, attributes, shapes, costs), standardized. */
#define DLP_GAE_IN (DLP_FEAT_NOPS + 1 + DLP_FEAT_DENSE)

/* Pre-trains on the pool (link prediction: inner-product decoder, BCE with
 * one negative sample per edge). */
dlp_status dlp_gae_pretrain(dlp_gae **out, const dlp_feat_graph *pool,
                            int n_pool, int hidden, int epochs, uint64_t seed,
                            const dlp_train_opts *o, dlp_error *err);
int dlp_gae_dim(const dlp_gae *g);
/* Sum-pooled embedding of one graph: emb[dlp_gae_dim]. */
dlp_status dlp_gae_embed(dlp_gae *g, const dlp_feat_graph *fg, float *emb,
                         dlp_error *err);
dlp_status dlp_gae_save(const dlp_gae *g, dlp_nn_file *f, dlp_error *err);
dlp_status dlp_gae_load(dlp_gae **out, const dlp_nn_file *f, dlp_error *err);
void dlp_gae_free(dlp_gae *g);
/* Swaps the encoder's workspace with (*ws, *cap): a caller lends it a
 * buffer for one dlp_gae_embed and takes it back (grown, maybe moved) with
 * a second swap (pred_gnn.c's per-thread scratch). */
void dlp_gae_swap_ws(dlp_gae *g, nn_real **ws, size_t *cap);

/* ---- the shared regressor (pred_gnn.c) ----------------------------------- */
typedef struct {
    const char *kind;          /* "dippm" | "trappm" */
    int n_sage;                /* 3 for DIPPM, 2 for TraPPM's branch */
    int n_fc;                  /* 3 (DIPPM), 2 (TraPPM) */
    bool use_gae;
} dlp_gnn_arch;

dlp_status dlp_gnn_train(const dlp_gnn_arch *a, const dlp_examples *E,
                         const int32_t *tr, int ntr, const int32_t *va,
                         int nva, const dlp_train_opts *o,
                         dlp_pred_meta *meta, dlp_nn_file *out,
                         dlp_error *err);
dlp_status dlp_gnn_load(dlp_predictor *p, const dlp_nn_file *f,
                        dlp_error *err);
dlp_status dlp_gnn_predict(const dlp_predictor *p, const dlp_pred_input *in,
                           dlp_pred_result *out, dlp_error *err);
void dlp_gnn_free(dlp_predictor *p);

#endif /* DLP_PRED_GNN_H */
