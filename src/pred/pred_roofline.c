/* pred_roofline.c — the analytical baseline. Time is
 * the roofline sum over kernel nodes (not view/shape ops),
 * sum_i max(launch latency, FLOPs_i / peak, bytes_i / BW) (tensor-core peak
 * for matmul-like nodes at fp16/bf16, CUDA-core peak otherwise; bytes
 * halved at 16-bit), plus one launch latency per kernel of host dispatch in
 * eager mode. Memory is the featurizer's liveness estimate (weights + peak
 * live activations + cuBLAS workspaces, docs/COST.md) for inference, or 3x
 * weights (weights, gradients, momentum) + the activation blocks autograd
 * saves for backward + the largest conv's gradients and workspace
 * (training, dlp_feat_mem_estimate_mib), raised to the forward's peak at a
 * convolution's cuDNN workspace where the workspace model predicts one
 * (dlp_convws_train_view). Power is a fixed 60% of board power (scaled down on
 * a partition); energy = power x time. Training step = 3x the forward
 * (backward costs about twice the forward). */
#include "pred_train.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define POWER_FRACTION 0.6
/* The eager inference memory factor's bounds: never below 1 (a low
 * memory estimate is an out-of-memory failure, not a smaller error: the
 * calibration of pred_train.c leaves memory alone for that reason), and
 * never more than this. */
#define EAGER_MEM_SCALE_MAX 1.05

/* What the estimate learns besides its workspace model: one factor for
 * eager inference memory. Eager PyTorch holds blocks the graph walk does
 * not see (Python locals and lists, docs/COST.md), so its estimate is low
 * by a fraction of a percent on most rows, while CUDA-graph replays are
 * centred; the factor is MAPE's best constant (dlp_mape_factor) over the
 * training examples' eager rows, at least 1. */
typedef struct {
    dlp_convws *ws;         /* NULL: no workspace model */
    double eager_mem_scale; /* 1 in files before it */
} roofline_impl;

/* dlp_mape_factor of the eager inference memory rows of E in tr and va,
 * estimated with ws, in [1, EAGER_MEM_SCALE_MAX]; 1 without such rows. */
static dlp_status eager_mem_scale(const dlp_examples *E, const int32_t *tr,
                                  int ntr, const int32_t *va, int nva,
                                  const dlp_convws *ws, double *out,
                                  dlp_error *err) {
    *out = 1;
    int cap = ntr + nva > 0 ? ntr + nva : 1, n = 0;
    double *y = malloc((size_t)cap * sizeof *y), *f = malloc((size_t)cap * sizeof *f);
    if (!y || !f) {
        free(y); free(f);
        return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    }
    for (int i = 0; i < ntr + nva; i++) {
        const dlp_example *x = &E->ex[i < ntr ? tr[i] : va[i - ntr]];
        double yi = x->y[DLP_T_INF_MEMORY_MIB];
        if (x->cfg.runtime != DLP_RT_EAGER || !(yi > 0)) continue;   /* E: inference */
        dlp_feat_roofline r;
        dlp_error me;   /* ws was fitted here: its forests are sound */
        if (dlp_convws_roofline(ws, &E->fg[x->fg], &x->cfg, &r, &me)) continue;
        if (!(r.mem_mib > 0)) continue;
        y[n] = yi;
        f[n++] = r.mem_mib;
    }
    if (n > 0) *out = fmin(fmax(dlp_mape_factor(y, f, n), 1.0), EAGER_MEM_SCALE_MAX);
    free(y); free(f);
    return DLP_OK;
}

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
    if (st || E->mode == DLP_MODE_LLM) return st;
    dlp_convws *ws = NULL;
    st = dlp_convws_examples_fit(E, tr, ntr, va, nva, &ws, err);
    if (!st && ws) st = dlp_convws_save(ws, out, err);
    if (E->mode == DLP_MODE_TRAINING) {   /* the forward's workspaces */
        dlp_convws_free(ws);
        return st;
    }
    double d = 1;
    if (!st) st = eager_mem_scale(E, tr, ntr, va, nva, ws, &d, err);
    float sc = (float)d;   /* as stored, so a loaded file predicts the same */
    if (!st) st = dlp_nn_file_add_f32(out, "roofline/eager_mem_scale", &sc, 1, err);
    dlp_convws_free(ws);
    return st;
}

static dlp_status roofline_load(dlp_predictor *p, const dlp_nn_file *f,
                                dlp_error *err) {
    if (!dlp_nn_file_get(f, "roofline/version", DLP_NN_STR))
        return dlp_fail(err, DLP_ERR_FORMAT, "roofline: no 'roofline/version'");
    roofline_impl *m = calloc(1, sizeof *m);
    if (!m) return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    m->eager_mem_scale = 1;
    /* files without a workspace model or the factor predict without them */
    dlp_status st = dlp_convws_load(f, &m->ws, err);
    if (!st && dlp_nn_file_get(f, "roofline/eager_mem_scale", DLP_NN_F32)) {
        float sc;
        st = dlp_nn_file_read_f32(f, "roofline/eager_mem_scale", &sc, 1, err);
        if (!st && !(sc >= 1 && sc <= EAGER_MEM_SCALE_MAX))
            st = dlp_fail(err, DLP_ERR_FORMAT, "roofline: eager memory factor %g "
                          "outside [1, %g]", (double)sc, EAGER_MEM_SCALE_MAX);
        m->eager_mem_scale = sc;
    }
    if (st) {
        dlp_convws_free(m->ws);
        free(m);
        return st;
    }
    p->impl = m;
    return DLP_OK;
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
    const roofline_impl *m = p->impl;
    dlp_feat_roofline r;
    st = dlp_convws_roofline(m->ws, fg, c, &r, err);
    if (st) {
        if (fg == &local) dlp_feat_graph_free(&local);
        return st;
    }
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
        set(out, p, DLP_T_INF_MEMORY_MIB,
            mem * (c->runtime == DLP_RT_EAGER ? m->eager_mem_scale : 1));
        set(out, p, DLP_T_INF_POWER_W, power);
        set(out, p, DLP_T_INF_ENERGY_J, power * fwd_ms / 1e3);
    } else if (c->mode == DLP_MODE_TRAINING) {
        double step = 3 * r.kernel_ms + 3 * launch_ms;
        dlp_feat_graph v;
        if ((st = dlp_convws_train_view(m->ws, fg, c, &v, err))) {
            if (fg == &local) dlp_feat_graph_free(&local);
            return st;
        }
        set(out, p, DLP_T_TRAIN_STEP_MS, step);
        set(out, p, DLP_T_TRAIN_MEMORY_MIB, dlp_feat_mem_estimate_of(&v, c, &r));
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
    roofline_impl *m = p->impl;
    if (m) dlp_convws_free(m->ws);
    free(m);
    p->impl = NULL;
}

const dlp_pred_vtable dlp_pred_roofline_vt = {"roofline", roofline_load,
                                              roofline_predict, roofline_free,
                                              DLP_PRED_COST_FREE};
