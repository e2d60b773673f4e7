/* nn_optim.c — SGD with momentum, Adam and AdamW (update rules of
 * torch.optim), global gradient-norm clipping, cosine and one-cycle
 * learning-rate schedules and early stopping with best-weight restore. */
#include "nn.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

dlp_nn_opt dlp_nn_opt_default(dlp_nn_opt_kind kind, double lr) {
    dlp_nn_opt o = {kind, lr, 0, 0.9, 0.999, 1e-8, 0};
    if (kind == DLP_NN_ADAMW) o.weight_decay = 1e-2;
    return o;
}

typedef struct {
    dlp_nn_params *p;
    const dlp_nn_opt *o;
} nn_opt_ctx;

#define NN_OPT_CHUNK 4096 /* elements per parallel work item */

/* the update of elements [lo, hi) (of chunks) after p->step was bumped;
 * elementwise, so any split gives the same weights */
static void opt_range(void *vctx, int clo, int chi) {
    nn_opt_ctx *c = vctx;
    dlp_nn_params *p = c->p;
    const dlp_nn_opt *o = c->o;
    const size_t lo = (size_t)clo * NN_OPT_CHUNK;
    const size_t hi = (size_t)chi * NN_OPT_CHUNK < p->n ? (size_t)chi * NN_OPT_CHUNK : p->n;
    const nn_real lr = (nn_real)o->lr, wd = (nn_real)o->weight_decay;
    nn_real *w = p->w, *g = p->g, *m = p->m, *v = p->v;
    if (o->kind == DLP_NN_SGD) {
        const nn_real mu = (nn_real)o->momentum;
        for (size_t k = lo; k < hi; k++) {
            nn_real gk = g[k] + wd * w[k];
            if (mu != 0) {
                m[k] = p->step == 1 ? gk : mu * m[k] + gk;
                gk = m[k];
            }
            w[k] -= lr * gk;
        }
        return;
    }
    const nn_real b1 = (nn_real)o->beta1, b2 = (nn_real)o->beta2;
    const double bc1 = 1 - pow(o->beta1, (double)p->step);
    const double bc2 = 1 - pow(o->beta2, (double)p->step);
    const nn_real step_size = (nn_real)(o->lr / bc1);
    const nn_real sbc2 = (nn_real)sqrt(bc2), eps = (nn_real)o->eps;
    const bool decoupled = o->kind == DLP_NN_ADAMW;
    for (size_t k = lo; k < hi; k++) {
        nn_real gk = g[k];
        if (decoupled) w[k] *= 1 - lr * wd;
        else gk += wd * w[k];
        m[k] = b1 * m[k] + (1 - b1) * gk;
        v[k] = b2 * v[k] + (1 - b2) * gk * gk;
        nn_real denom = (nn_real)sqrt(v[k]) / sbc2 + eps;
        w[k] -= step_size * m[k] / denom;
    }
}

void dlp_nn_opt_step_ex(dlp_nn_params *p, const dlp_nn_opt *o,
                        dlp_nn_workers *workers) {
    p->step++;
    nn_opt_ctx c = {p, o};
    size_t chunks = (p->n + NN_OPT_CHUNK - 1) / NN_OPT_CHUNK;
    dlp_nn_workers_run(workers, dlp_nn_threads_for(p->n * 4), (int)chunks,
                       opt_range, &c);
}

void dlp_nn_opt_step(dlp_nn_params *p, const dlp_nn_opt *o) {
    p->step++;
    nn_opt_ctx c = {p, o};
    opt_range(&c, 0, (int)((p->n + NN_OPT_CHUNK - 1) / NN_OPT_CHUNK));
}

double dlp_nn_clip_grad_norm(dlp_nn_params *p, double max_norm) {
    double s = 0;
    for (size_t k = 0; k < p->n; k++) s += (double)p->g[k] * p->g[k];
    double norm = sqrt(s), coef = max_norm / (norm + 1e-6);
    if (coef < 1)
        for (size_t k = 0; k < p->n; k++) p->g[k] *= (nn_real)coef;
    return norm;
}

double dlp_nn_lr_cosine(double base, double min_lr, long t, long T) {
    if (T <= 0 || t >= T) return min_lr;
    if (t < 0) t = 0;
    return min_lr + (base - min_lr) * (1 + cos(M_PI * (double)t / (double)T)) / 2;
}

static double cos_anneal(double start, double end, double pct) {
    return end + (start - end) / 2.0 * (cos(M_PI * pct) + 1);
}

double dlp_nn_lr_one_cycle(double max_lr, long t, long T, double pct_start,
                           double div_factor, double final_div_factor) {
    double init = max_lr / div_factor, min_lr = init / final_div_factor;
    double end1 = pct_start * (double)T - 1, end2 = (double)T - 1;
    if ((double)t <= end1)
        return cos_anneal(init, max_lr, end1 > 0 ? t / end1 : 1);
    double span = end2 - end1;
    return cos_anneal(max_lr, min_lr, span > 0 ? ((double)t - end1) / span : 1);
}

dlp_status dlp_nn_early_stop_init(dlp_nn_early_stop *s, const dlp_nn_params *p,
                                  int patience, double min_delta,
                                  dlp_error *err) {
    memset(s, 0, sizeof *s);
    s->patience = patience < 1 ? 1 : patience;
    s->min_delta = min_delta;
    s->best = INFINITY;
    s->best_epoch = -1;
    s->n = p->n;
    s->best_w = malloc((p->n ? p->n : 1) * sizeof(nn_real));
    if (!s->best_w) return dlp_fail(err, DLP_ERR_NOMEM, "early stop: out of memory");
    memcpy(s->best_w, p->w, p->n * sizeof(nn_real));
    return DLP_OK;
}

bool dlp_nn_early_stop_update(dlp_nn_early_stop *s, const dlp_nn_params *p,
                              double metric) {
    int epoch = s->epoch++;
    if (metric == metric && metric < s->best - s->min_delta) {
        s->best = metric;
        s->best_epoch = epoch;
        s->bad_epochs = 0;
        memcpy(s->best_w, p->w, s->n * sizeof(nn_real));
        return false;
    }
    return ++s->bad_epochs >= s->patience;
}

void dlp_nn_early_stop_restore(const dlp_nn_early_stop *s, dlp_nn_params *p) {
    DLP_ASSERT(s->n == p->n);
    memcpy(p->w, s->best_w, s->n * sizeof(nn_real));
}

void dlp_nn_early_stop_free(dlp_nn_early_stop *s) {
    if (!s) return;
    free(s->best_w);
    s->best_w = NULL;
}
