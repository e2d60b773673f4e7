/*
 * predict_scale.c — roofline time of an analysed graph on a device or a
 * share of it, and the latency factor of an SM / MIG partition derived from
 * it (the documented scaling used when no predictor was trained on SM
 * partitions; rules in predict.h).
 */
#include "predict/predict.h"

#include <string.h>

static bool is_matrix_op(const char *op) {
    if (!strchr("CMGQAELR", op[0])) return false;   /* fast reject */
    static const char *const ops[] = {
        "Conv", "ConvTranspose", "MatMul", "Gemm", "MatMulInteger",
        "QLinearConv", "QLinearMatMul", "ConvInteger", "Attention",
        "LSTM", "GRU", "RNN", "Einsum", NULL};
    for (int i = 0; ops[i]; i++)
        if (!strcmp(op, ops[i])) return true;
    return false;
}

static bool is_shape_only(const char *op) {
    if (!strchr("SCRFUI", op[0])) return false;   /* fast reject */
    static const char *const ops[] = {"Shape", "Constant", "Reshape",
                                      "Flatten", "Squeeze", "Unsqueeze",
                                      "Identity", NULL};
    for (int i = 0; ops[i]; i++)
        if (!strcmp(op, ops[i])) return true;
    return false;
}

static double peak_flops(const dlp_device *d, dlp_precision p, bool matrix) {
    double tf = d->fp32_tflops;
    if (matrix && p == DLP_PREC_FP16 && d->fp16_tc_tflops > 0)
        tf = d->fp16_tc_tflops;
    if (matrix && p == DLP_PREC_BF16 && d->bf16_tc_tflops > 0)
        tf = d->bf16_tc_tflops;
    return tf > 0 ? tf * 1e12 : 1e12;
}

void dlp_predict_roofline_visit(const dlp_graph *g, const dlp_device *d,
                                dlp_precision prec, double sm_share,
                                double bw_share, dlp_roofline_node_fn fn,
                                void *user) {
    double bw = (d->mem_bw_gbs > 0 ? d->mem_bw_gbs : 100) * 1e9 * bw_share;
    double elem = prec == DLP_PREC_FP32 ? 1.0 : 0.5;  /* vs the fp32 export */
    for (size_t i = 0; i < g->n_nodes; i++) {
        const dlp_node *n = &g->nodes[i];
        const dlp_cost *c = &n->cost;
        bool mat = is_matrix_op(n->op_type);
        double tc = c->flops / (peak_flops(d, prec, mat) * sm_share);
        double bytes =
            (double)(c->in_bytes + c->out_bytes + c->weight_bytes) * elem;
        double tm = bytes / bw;
        /* shape-only ops (Shape, Constant, Reshape...) launch nothing */
        bool work = (c->flops > 0 || c->out_bytes > 0) &&
                    !is_shape_only(n->op_type);
        fn(n, tc, tm, work, user);
        for (int a = 0; a < n->n_attrs; a++)
            if (n->attrs[a].graph)
                dlp_predict_roofline_visit(n->attrs[a].graph, d, prec,
                                           sm_share, bw_share, fn, user);
    }
}

typedef struct {
    double floor_s;          /* per-kernel floor */
    double total_s;
} time_sum;

static void add_node_time(const dlp_node *n, double tc_s, double tm_s,
                          bool work, void *user) {
    (void)n;
    time_sum *t = user;
    t->total_s += (tc_s > tm_s ? tc_s : tm_s) + (work ? t->floor_s : 0);
}

double dlp_predict_roofline_ms(const dlp_graph *g, const dlp_device *d,
                               dlp_precision prec, dlp_runtime rt,
                               double sm_share, double bw_share) {
    if (!g || !d || !(sm_share > 0) || !(bw_share > 0)) return 0;
    time_sum t = {(rt == DLP_RT_EAGER ? d->launch_us : 1.0) * 1e-6, 0};
    dlp_predict_roofline_visit(g, d, prec, sm_share, bw_share, add_node_time,
                               &t);
    return t.total_s * 1e3;
}

double dlp_predict_partition_factor(const dlp_graph *g, const dlp_device *d,
                                    dlp_precision prec, dlp_runtime rt,
                                    int sms, const dlp_mig_profile *mig) {
    return dlp_predict_partition_factor_from(g, d, prec, rt, sms, mig, -1);
}

double dlp_predict_partition_factor_from(const dlp_graph *g,
                                         const dlp_device *d,
                                         dlp_precision prec, dlp_runtime rt,
                                         int sms, const dlp_mig_profile *mig,
                                         double full_ms) {
    if (!g || !d || d->sm_count <= 0) return 1;
    double sm_share = 1, bw_share = 1;
    if (mig) {
        sm_share = (double)mig->sm_count / d->sm_count;
        bw_share = mig->mem_eighths / 8.0;
    } else if (sms > 0) {
        sm_share = (double)sms / d->sm_count;
        bw_share = 2 * sm_share < 1 ? 2 * sm_share : 1;
    }
    if (sm_share >= 1 && bw_share >= 1) return 1;
    double full = full_ms >= 0 ? full_ms
                               : dlp_predict_roofline_ms(g, d, prec, rt, 1, 1);
    double part = dlp_predict_roofline_ms(g, d, prec, rt, sm_share, bw_share);
    if (!(full > 0)) return 1 / (sm_share < bw_share ? sm_share : bw_share);
    double f = part / full;
    return f < 1 ? 1 : f;
}
