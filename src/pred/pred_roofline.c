/* pred_roofline.c — the analytical baseline: no fitted parameters. Time is
 * the roofline sum over kernel nodes (not view/shape ops),
 * sum_i max(launch latency, FLOPs_i / peak, bytes_i / BW) (tensor-core peak
 * for matmul-like nodes at fp16/bf16, CUDA-core peak otherwise; bytes
 * halved at 16-bit), plus one launch latency per kernel of host dispatch in
 * eager mode. Memory is the featurizer's liveness estimate (weights + peak
 * live activations + cuBLAS workspaces, docs/COST.md) for inference, or 3x
 * weights (weights, gradients, momentum) + the activation blocks autograd
 * saves for backward + the largest conv's gradients and workspace
 * (training, dlp_feat_mem_estimate_mib). Power is a fixed 60% of board power (scaled down on
 * a partition); energy = power x time. Training step = 3x the forward
 * (backward costs about twice the forward). */
#include "pred_train.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define POWER_FRACTION 0.6

dlp_status dlp_pred_roofline_train(const dlp_examples *E, const int32_t *tr,
                                   int ntr, const int32_t *va, int nva,
                                   const dlp_train_opts *o,
                                   dlp_pred_meta *meta, dlp_nn_file *out,
                                   dlp_error *err) {
    (void)o;
    dlp_target ts[DLP_T_COUNT];
    int nt = dlp_mode_targets(E->mode, ts);
    for (int j = 0; j < nt; j++) meta->targets |= 1u << ts[j];
    meta->feat_schema = DLP_FEAT_SCHEMA;
    dlp_status st = dlp_nn_file_add_str(out, "roofline/version", "1", err);
    if (st || !E->convws || !E->convws->n) return st;
    /* the fp32 workspace model, on the probes of the models trained on:
     * a probed model that has examples but none in tr / va is held out */
    const dlp_convws_calls *c = E->convws;
    bool *use = malloc((size_t)(c->n_names ? c->n_names : 1) * sizeof *use);
    bool *seen = calloc((size_t)(E->n_models ? E->n_models : 1), 1);
    bool *kept = calloc((size_t)(E->n_models ? E->n_models : 1), 1);
    if (!use || !seen || !kept) {
        free(use); free(seen); free(kept);
        return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    }
    for (int i = 0; i < E->n; i++) seen[E->ex[i].model] = true;
    for (int i = 0; i < ntr; i++) kept[E->ex[tr[i]].model] = true;
    for (int i = 0; i < nva; i++) kept[E->ex[va[i]].model] = true;
    for (int k = 0; k < c->n_names; k++) {
        use[k] = true;
        for (int m = 0; m < E->n_models; m++)
            if (seen[m] && !kept[m] && !strcmp(E->models[m], c->names[k])) {
                use[k] = false;
                break;
            }
    }
    dlp_convws *ws = NULL;
    st = dlp_convws_fit(c, use, &ws, err);
    if (!st && ws) st = dlp_convws_save(ws, out, err);
    dlp_convws_free(ws);
    free(use); free(seen); free(kept);
    return st;
}

static dlp_status roofline_load(dlp_predictor *p, const dlp_nn_file *f,
                                dlp_error *err) {
    if (!dlp_nn_file_get(f, "roofline/version", DLP_NN_STR))
        return dlp_fail(err, DLP_ERR_FORMAT, "roofline: no 'roofline/version'");
    dlp_convws *ws = NULL;   /* files without one predict without it */
    dlp_status st = dlp_convws_load(f, &ws, err);
    p->impl = ws;
    return st;
}

static void set(dlp_pred_result *r, const dlp_predictor *p, dlp_target t,
                double v) {
    if (!(p->meta.targets >> t & 1) || !(v > 0) || !isfinite(v)) return;
    r->v[t].valid = true;
    r->v[t].value = v;
}

static dlp_status roofline_predict(const dlp_predictor *p,
                                   const dlp_pred_input *in,
                                   dlp_pred_result *out, dlp_error *err) {
    dlp_feat_graph local;
    const dlp_feat_graph *fg;
    dlp_status st = dlp_pred_feat(in, &local, &fg, out, err);
    if (st) return st;
    const dlp_pred_config *c = in->cfg;
    dlp_feat_roofline r;
    dlp_convws_roofline(p->impl, fg, c, &r);
    dlp_feat_device d;
    dlp_feat_device_of(c, &d);
    double tdp = c->device.tdp_w > 0 ? c->device.tdp_w : 300;
    double power = POWER_FRACTION * tdp * (0.5 + 0.5 * d.sm_share);
    /* graph: every kernel takes at least one launch latency; eager adds a
     * host dispatch of about one launch latency per kernel */
    double launch_ms = r.kernels * (c->device.launch_us > 0 ? c->device.launch_us : 5) * 1e-3;
    double fwd_ms = r.kernel_ms + (c->runtime == DLP_RT_EAGER ? launch_ms : 0);
    double mem = r.mem_mib;
    if (c->mode == DLP_MODE_INFERENCE) {
        set(out, p, DLP_T_INF_LATENCY_MS, fwd_ms);
        set(out, p, DLP_T_INF_MEMORY_MIB, mem);
        set(out, p, DLP_T_INF_POWER_W, power);
        set(out, p, DLP_T_INF_ENERGY_J, power * fwd_ms / 1e3);
    } else if (c->mode == DLP_MODE_TRAINING) {
        double step = 3 * r.kernel_ms + 3 * launch_ms;
        set(out, p, DLP_T_TRAIN_STEP_MS, step);
        set(out, p, DLP_T_TRAIN_MEMORY_MIB, dlp_feat_mem_estimate_mib(fg, c));
        set(out, p, DLP_T_TRAIN_POWER_W, power);
    } else {
        double b = (double)(c->batch > 0 ? c->batch : 1);
        set(out, p, DLP_T_LLM_THROUGHPUT, b / (fwd_ms / 1e3));
        set(out, p, DLP_T_LLM_MEMORY_MIB, mem);
        set(out, p, DLP_T_LLM_ENERGY_PER_SAMPLE, power * fwd_ms / 1e3 / b);
    }
    if (fg == &local) dlp_feat_graph_free(&local);
    return DLP_OK;
}

static void roofline_free(dlp_predictor *p) {
    dlp_convws_free(p->impl);
    p->impl = NULL;
}

const dlp_pred_vtable dlp_pred_roofline_vt = {"roofline", roofline_load,
                                              roofline_predict, roofline_free,
                                              DLP_PRED_COST_FREE};
