/*
 * tree_graph.c — the tree predictor's feature vector for any graph in
 * inference or training (layout "graph", schema DLP_TREE_GSCHEMA, training
 * DLP_TREE_TSCHEMA: the same features, another step base): the
 * featurizer's static vector, then where the roofline time goes (per op
 * category its roofline time and its kernel nodes), then the per-kernel
 * floor sum and the kernel count; and the analytical bases the boosters
 * correct (tree.h). A GNN sees the same totals through its static input;
 * what the trees add is a per-category breakdown they can split on, which
 * is how a convolution-bound and a data-movement-bound graph of the same
 * FLOPs differ.
 */
#include "tree/tree.h"

#include <math.h>

#define NSTATIC DLP_FEAT_STATIC_DIM

static const char *const NAMES[DLP_TREE_NGFEAT - NSTATIC] = {
    "log_roof_ms_conv", "log_roof_ms_matmul", "log_roof_ms_norm",
    "log_roof_ms_act", "log_roof_ms_elem", "log_roof_ms_softmax",
    "log_roof_ms_pool", "log_roof_ms_data", "log_roof_ms_reduce",
    "log_roof_ms_other", "log_kernels_conv", "log_kernels_matmul",
    "log_kernels_norm", "log_kernels_act", "log_kernels_elem",
    "log_kernels_softmax", "log_kernels_pool", "log_kernels_data",
    "log_kernels_reduce", "log_kernels_other", "log_kernel_floor_ms",
    "log_kernels_all", "log_roof_ms_grouped_conv", "log_kernels_grouped_conv",
    "log_roof_ms_large_kernel_conv", "log_kernels_large_kernel_conv"};

const char *dlp_tree_breakdown_name(int i) {
    return i >= 0 && i < DLP_TREE_NBREAKDOWN ? NAMES[i] : NULL;
}

int dlp_tree_breakdown_features(const dlp_feat_roofline *r, float *x) {
    int k = 0;
    for (int i = 0; i < DLP_FEAT_NCAT; i++)
        x[k++] = (float)log10(r->roof_cat_ms[i] + 1e-6);
    for (int i = 0; i < DLP_FEAT_NCAT; i++)
        x[k++] = (float)log1p(r->kernels_cat[i]);
    x[k++] = (float)log10(r->kernel_ms + 1e-6);
    x[k++] = (float)log1p(r->kernels);
    return k;
}

const char *dlp_tree_graph_feature_name(int i) {
    if (i < 0 || i >= DLP_TREE_NGFEAT) return NULL;
    return i < NSTATIC ? dlp_feat_static_name(i) : NAMES[i - NSTATIC];
}

void dlp_tree_graph_features(const dlp_feat_graph *fg,
                             const dlp_pred_config *c, float *x,
                             double *base) {
    dlp_feat_static(fg, c, x);
    int k = NSTATIC;
    dlp_feat_roofline r;
    dlp_feat_roofline_of(fg, c, &r);
    k += dlp_tree_breakdown_features(&r, x + k);
    /* schema 2 (inference) / 3 (training): the grouped and large-kernel
     * convolutions' share, whose backward and depthwise kernels run far
     * from the roofline (RegNet, ConvNeXt, EfficientNet) */
    x[k++] = (float)log10(r.roof_gconv_ms + 1e-6);
    x[k++] = (float)log1p(r.kernels_gconv);
    x[k++] = (float)log10(r.roof_kconv_ms + 1e-6);
    x[k++] = (float)log1p(r.kernels_kconv);
    double lat, mem;
    dlp_tree_base_latency_memory(fg, c, &r, &lat, &mem);
    double tdp = c->device.tdp_w > 0 ? c->device.tdp_w : 300;
    base[0] = lat;
    base[1] = mem;
    base[2] = c->mode == DLP_MODE_TRAINING ? tdp : tdp * lat / 1e3;
}

void dlp_tree_base_latency_memory(const dlp_feat_graph *fg,
                                  const dlp_pred_config *c,
                                  const dlp_feat_roofline *r, double *lat_ms,
                                  double *mem_mib) {
    /* a replayed graph costs at least each kernel's floor (launch latency
     * or roofline, dlp_feat_roofline.kernel_ms); eager adds a launch per
     * node; a training step (schema DLP_TREE_TSCHEMA 2) the forward's
     * kernel floors times DLP_TREE_TRAIN_GPU_FACTOR plus the host's time
     * per forward kernel (tree.h) */
    double lat = c->runtime == DLP_RT_GRAPH ? r->kernel_ms
                                            : r->roofline_ms + r->launch_ms;
    if (c->mode == DLP_MODE_TRAINING)
        lat = DLP_TREE_TRAIN_GPU_FACTOR * r->kernel_ms +
              DLP_TREE_TRAIN_HOST_MS * r->kernels;
    *lat_ms = lat > 1e-4 ? lat : 1e-4;
    double mem = dlp_feat_mem_estimate_of(fg, c, r);
    *mem_mib = mem > 1 ? mem : 1;
}
