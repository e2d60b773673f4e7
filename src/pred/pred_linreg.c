/* pred_linreg.c — the linear-regression baseline (LILOU's LR baseline):
 * log(target) = a + b log(1 + FLOPs) + c log(1 + params), one fit per
 * (runtime, precision) cell that has data (a pooled fit elsewhere). Fitted
 * in log space because the targets span orders of magnitude (a fit in
 * natural units is dominated by the largest models). */
#include "pred_train.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NCELL (DLP_RT_COUNT * DLP_PREC_COUNT)
#define NW 3

typedef struct {
    double w[NCELL + 1][DLP_T_COUNT][NW];  /* last cell: pooled */
    int has[NCELL + 1][DLP_T_COUNT];
} linreg;

static int cell_of(const dlp_pred_config *c) {
    return (c->mode == DLP_MODE_TRAINING ? 0 : (int)c->runtime) * DLP_PREC_COUNT +
           (int)c->precision;
}

static void xrow(const dlp_feat_graph *fg, double *x) {
    x[0] = 1;
    x[1] = log1p(fg->flops_total > 0 ? fg->flops_total : 2 * fg->macs);
    x[2] = log1p(fg->params > 0 ? fg->params : fg->weight_bytes / 4);
}

dlp_status dlp_pred_linreg_train(const dlp_examples *E, const int32_t *tr,
                                 int ntr, const int32_t *va, int nva,
                                 const dlp_train_opts *o, dlp_pred_meta *meta,
                                 dlp_nn_file *out, dlp_error *err) {
    (void)va; (void)nva; (void)o;
    dlp_target ts[DLP_T_COUNT];
    int nt = dlp_mode_targets(E->mode, ts);
    double *X = malloc((size_t)ntr * NW * sizeof *X);
    double *y = malloc((size_t)ntr * sizeof *y);
    nn_real *w = calloc((NCELL + 1) * DLP_T_COUNT * NW, sizeof *w);
    int64_t *has = calloc((NCELL + 1) * DLP_T_COUNT, sizeof *has);
    dlp_status st = DLP_OK;
    if (!X || !y || !w || !has) st = dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    for (int i = 0; i < ntr && !st; i++) xrow(&E->fg[E->ex[tr[i]].fg], X + i * NW);
    for (int c = 0; c <= NCELL && !st; c++)
        for (int j = 0; j < nt && !st; j++) {
            dlp_target t = ts[j];
            int n = 0;
            for (int i = 0; i < ntr; i++) {
                const dlp_example *x = &E->ex[tr[i]];
                bool in = c == NCELL || cell_of(&x->cfg) == c;
                y[i] = in && x->y[t] > 0 ? log(x->y[t]) : NAN;
                n += isfinite(y[i]);
            }
            if (n < (c == NCELL ? 1 : 4)) continue;
            double wd[NW];
            dlp_error e2;
            if (dlp_ridge_fit(X, y, ntr, NW, 1e-3, wd, &e2)) continue;
            for (int k = 0; k < NW; k++) w[(c * DLP_T_COUNT + t) * NW + k] = (nn_real)wd[k];
            has[c * DLP_T_COUNT + t] = 1;
            if (c == NCELL) meta->targets |= 1u << t;
        }
    if (!st && !meta->targets)
        st = dlp_fail(err, DLP_ERR_ARG, "linreg: no target has labels");
    if (!st) st = dlp_nn_file_add_f32(out, "linreg/w", w, (NCELL + 1) * DLP_T_COUNT * NW, err);
    if (!st) st = dlp_nn_file_add_i64(out, "linreg/has", has, (NCELL + 1) * DLP_T_COUNT, err);
    free(X); free(y); free(w); free(has);
    return st;
}

static dlp_status linreg_load(dlp_predictor *p, const dlp_nn_file *f,
                              dlp_error *err) {
    linreg *m = calloc(1, sizeof *m);
    nn_real *w = malloc((NCELL + 1) * DLP_T_COUNT * NW * sizeof *w);
    dlp_status st = !m || !w ? dlp_fail(err, DLP_ERR_NOMEM, "out of memory") : DLP_OK;
    if (!st) st = dlp_nn_file_read_f32(f, "linreg/w", w, (NCELL + 1) * DLP_T_COUNT * NW, err);
    const dlp_nn_entry *h = dlp_nn_file_get(f, "linreg/has", DLP_NN_I64);
    if (!st && (!h || h->count != (NCELL + 1) * DLP_T_COUNT))
        st = dlp_fail(err, DLP_ERR_FORMAT, "linreg: missing or malformed 'linreg/has'");
    if (!st) {
        for (int c = 0; c <= NCELL; c++)
            for (int t = 0; t < DLP_T_COUNT; t++) {
                m->has[c][t] = ((const int64_t *)h->data)[c * DLP_T_COUNT + t] != 0;
                for (int k = 0; k < NW; k++)
                    m->w[c][t][k] = w[(c * DLP_T_COUNT + t) * NW + k];
            }
        p->impl = m;
    } else {
        free(m);
    }
    free(w);
    return st;
}

static dlp_status linreg_predict(const dlp_predictor *p,
                                 const dlp_pred_input *in,
                                 dlp_pred_result *out, dlp_error *err) {
    const linreg *m = p->impl;
    dlp_feat_graph local;
    const dlp_feat_graph *fg;
    dlp_status st = dlp_pred_feat(in, &local, &fg, out, err);
    if (st) return st;
    double x[NW];
    xrow(fg, x);
    int c = cell_of(in->cfg);
    for (int t = 0; t < DLP_T_COUNT; t++) {
        if (!(p->meta.targets >> t & 1)) continue;
        int cc = m->has[c][t] ? c : NCELL;
        if (!m->has[cc][t]) continue;
        double z = 0;
        for (int k = 0; k < NW; k++) z += m->w[cc][t][k] * x[k];
        if (z > 50) z = 50;
        if (z < -50) z = -50;
        out->v[t].valid = true;
        out->v[t].value = exp(z);
    }
    if (fg == &local) dlp_feat_graph_free(&local);
    return DLP_OK;
}

static void linreg_free(dlp_predictor *p) { free(p->impl); p->impl = NULL; }

const dlp_pred_vtable dlp_pred_linreg_vt = {"linreg", linreg_load,
                                            linreg_predict, linreg_free,
                                            DLP_PRED_COST_FREE};
