/*
 * pred_blend.c — blends: a kind named "a+b[+c...]" ("dippm+kern") whose
 * model file holds every component, trained on the same training /
 * validation split, and predicts a target as the geometric mean of the
 * components' predictions (the mean of their logs: the learned kinds all
 * fit log targets, so their errors are ratios and a geometric mean
 * averages them). `dlperf eval --kind a+b` measures the same rule on the
 * same folds (src/eval/eval_run.c calls dlp_pred_blend_combine).
 *
 * Targets some components lack: the geometric mean of those that predict
 * it (with one, its value, interval and name pass through: "dippm" for
 * memory in dippm+kern). Inference energy, when a component lacks it
 * while every component predicts latency, is blended latency x the
 * components' power (DLP_BLEND_ENERGY_POWER, below): energy = power x
 * latency is what the labels measure, and the blend's latency is the
 * better one.
 *
 * A component is trained here, or taken from a model file trained before
 * on the same split (dlp_train_opts.parts_from, `dlperf train --parts`:
 * what scripts/train_models.sh does with the files it has just written,
 * rather than training the LLM DIPPM a second time); such a file's
 * recorded validation errors are measured again on the validation
 * examples and must match, so a file from another split is refused.
 *
 * The blend's own validation error, per target, is measured by
 * dlp_pred_train on the validation examples like any kind's, and
 * recorded in the file's header, so `dlperf predict` (predict_set.c)
 * picks the blend for a target only where that error is the lowest.
 *
 * Model file: the blend's "pred/..." header (kind "a+b"), "blend/schema"
 * (i64 [BLEND_SCHEMA, components, energy rule]) and every entry of
 * component c's own complete model file under "blend/<c>/" (its header
 * "blend/<c>/pred/kind" naming the c-th part of the kind, its payload:
 * "blend/1/blob/kern/node", ...). Components are loaded through
 * dlp_predictor_from_file on a view of those entries (no copy); a
 * component is never itself a blend (the parts of a kind have no '+').
 */
#include "pred_train.h"
#include "../tree/tree.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLEND_SCHEMA 1

/* how inference energy is blended when a component does not predict it */
enum { DLP_BLEND_ENERGY_MEAN = 0, DLP_BLEND_ENERGY_POWER = 1 };

typedef struct {
    int n;
    dlp_predictor *part[DLP_PRED_BLEND_MAX];
    int energy;                  /* DLP_BLEND_ENERGY_* */
    const char *name;            /* the kind, interned: `by` of blended values */
} blend_impl;

dlp_status dlp_pred_blend_parts(const char *kind, char *buf, size_t cap,
                                const char **parts, int *n_out,
                                dlp_error *err) {
    *n_out = 0;
    size_t l = strlen(kind);
    if (l == 0 || l >= cap)
        return dlp_fail(err, DLP_ERR_ARG, "bad predictor kind '%s'", kind);
    memcpy(buf, kind, l + 1);
    int n = 0;
    for (char *s = buf, *e; s; s = e) {
        e = strchr(s, '+');
        if (e) *e++ = 0;
        if (n == DLP_PRED_BLEND_MAX)
            return dlp_fail(err, DLP_ERR_ARG, "a blend of more than %d kinds: "
                            "'%s'", DLP_PRED_BLEND_MAX, kind);
        if (!dlp_pred_kind_find(s))
            return dlp_fail(err, DLP_ERR_NOT_FOUND, "unknown predictor kind "
                            "'%s' in '%s'", s, kind);
        parts[n++] = s;
    }
    *n_out = n;
    return DLP_OK;
}

static void combine(int energy, const double *pred, int n, double *out,
                    int *from) {
    int have[DLP_T_COUNT];
    for (int t = 0; t < DLP_T_COUNT; t++) {
        double l = 0;
        int k = 0, last = -1;
        for (int c = 0; c < n; c++) {
            double v = pred[(size_t)c * DLP_T_COUNT + t];
            if (v > 0 && isfinite(v)) {
                l += log(v);
                k++;
                last = c;
            }
        }
        out[t] = k > 1 ? exp(l / k) : k ? pred[(size_t)last * DLP_T_COUNT + t]
                                         : NAN;
        from[t] = k == 1 ? last : -1;
        have[t] = k;
    }
    const int L = DLP_T_INF_LATENCY_MS, E = DLP_T_INF_ENERGY_J,
              P = DLP_T_INF_POWER_W;
    if (energy == DLP_BLEND_ENERGY_POWER && have[E] < n && have[L] == n &&
        have[P] > 0) {
        out[E] = out[L] * out[P] / 1e3;   /* ms x W = mJ */
        from[E] = -1;
    }
}

void dlp_pred_blend_combine(const double *pred, int n, double *out,
                            int *from) {
    int f[DLP_T_COUNT];
    combine(DLP_BLEND_ENERGY_POWER, pred, n, out, from ? from : f);
}

/* `by` must outlive the predictor (results are read after the set that
 * made them is closed): the kind names of blends, kept for the process. */
static const char *intern(const char *kind) {
    static char names[16][DLP_PRED_KIND_MAX];
    static int n;
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    const char *r = "blend";
    pthread_mutex_lock(&lock);
    for (int i = 0; i < n; i++)
        if (!strcmp(names[i], kind)) {
            r = names[i];
            goto done;
        }
    if (n < 16) {
        snprintf(names[n], sizeof names[n], "%s", kind);
        r = names[n++];
    }
done:
    pthread_mutex_unlock(&lock);
    return r;
}

/* ---- the vtable ----------------------------------------------------------- */

static void blend_free(dlp_predictor *p) {
    blend_impl *im = p->impl;
    if (!im) return;
    for (int c = 0; c < im->n; c++) dlp_predictor_free(im->part[c]);
    free(im);
    p->impl = NULL;
}

/* Component c from the entries "blend/<c>/..." of f. */
static dlp_status load_part(const dlp_nn_file *f, int c, const char *want,
                            dlp_pred_mode mode, dlp_predictor **out,
                            dlp_error *err) {
    static const dlp_pred_vtable *const extra[] = {&dlp_tree_pred_vtable,
                                                   NULL};
    char prefix[32];
    size_t pl = (size_t)snprintf(prefix, sizeof prefix, "blend/%d/", c);
    dlp_nn_file view = {0};
    view.e = malloc((size_t)(f->n > 0 ? f->n : 1) * sizeof *view.e);
    if (!view.e) return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    for (int i = 0; i < f->n; i++)
        if (!strncmp(f->e[i].name, prefix, pl)) {
            view.e[view.n] = f->e[i];
            view.e[view.n].name = f->e[i].name + pl;
            view.n++;
        }
    view.cap = view.n;
    const dlp_nn_entry *k = dlp_nn_file_get(&view, "pred/kind", DLP_NN_STR);
    dlp_status st = DLP_OK;
    if (!view.n)
        st = dlp_fail(err, DLP_ERR_FORMAT, "no entries");
    else if (k && strcmp(k->data, want))
        st = dlp_fail(err, DLP_ERR_FORMAT, "it is a '%s' predictor",
                      (const char *)k->data);
    else
        st = dlp_predictor_from_file(&view, extra, out, err);
    free(view.e);   /* the entries' names and data belong to f */
    if (!st && (*out)->meta.mode != mode)
        st = dlp_fail(err, DLP_ERR_FORMAT, "it is for mode %s",
                      dlp_mode_name((*out)->meta.mode));
    if (st) {
        dlp_predictor_free(*out);
        *out = NULL;
        char msg[sizeof err->msg];
        snprintf(msg, sizeof msg, "%s", err ? err->msg : "");
        return dlp_fail(err, st, "blend predictor: component %d ('%s'): %s",
                        c, want, msg);
    }
    return DLP_OK;
}

static dlp_status blend_load(dlp_predictor *p, const dlp_nn_file *f,
                             dlp_error *err) {
    char buf[DLP_PRED_KIND_MAX];
    const char *parts[DLP_PRED_BLEND_MAX];
    int n = 0;
    dlp_status st = dlp_pred_blend_parts(p->meta.kind, buf, sizeof buf,
                                         parts, &n, err);
    if (st) return st;
    if (n < 2)
        return dlp_fail(err, DLP_ERR_FORMAT, "blend predictor '%s' names "
                        "fewer than two kinds", p->meta.kind);
    const dlp_nn_entry *e = dlp_nn_file_get(f, "blend/schema", DLP_NN_I64);
    if (!e || e->count != 3)
        return dlp_fail(err, DLP_ERR_FORMAT, "blend predictor file: no "
                        "'blend/schema' entry");
    const int64_t *v = e->data;
    if (v[0] != BLEND_SCHEMA)
        return dlp_fail(err, DLP_ERR_UNSUPPORTED, "blend predictor has "
                        "schema %lld, this build reads %d: retrain it",
                        (long long)v[0], BLEND_SCHEMA);
    if (v[1] != n || (v[2] != DLP_BLEND_ENERGY_MEAN &&
                      v[2] != DLP_BLEND_ENERGY_POWER))
        return dlp_fail(err, DLP_ERR_FORMAT, "blend predictor file: "
                        "'blend/schema' does not match kind '%s'",
                        p->meta.kind);
    blend_impl *im = calloc(1, sizeof *im);
    if (!im) return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    im->energy = (int)v[2];
    im->name = intern(p->meta.kind);
    p->impl = im;
    for (int c = 0; c < n; c++) {
        st = load_part(f, c, parts[c], p->meta.mode, &im->part[c], err);
        if (st) {
            blend_free(p);
            return st;
        }
        im->n++;
    }
    return DLP_OK;
}

static dlp_status blend_predict(const dlp_predictor *p,
                                const dlp_pred_input *in,
                                dlp_pred_result *out, dlp_error *err) {
    const blend_impl *im = p->impl;
    /* featurized once for every component */
    dlp_feat_graph local;
    const dlp_feat_graph *fg;
    dlp_status st = dlp_pred_feat(in, &local, &fg, out, err);
    if (st) return st;
    dlp_pred_input sub = *in;
    sub.feat = fg;
    dlp_pred_result r[DLP_PRED_BLEND_MAX];
    double pred[DLP_PRED_BLEND_MAX * DLP_T_COUNT];
    for (int c = 0; c < im->n && !st; c++) {
        dlp_pred_result_init(&r[c]);
        st = dlp_predictor_predict(im->part[c], &sub, &r[c], err);
        for (int t = 0; t < DLP_T_COUNT; t++)
            pred[c * DLP_T_COUNT + t] =
                r[c].v[t].valid ? r[c].v[t].value : NAN;
    }
    if (fg == &local) dlp_feat_graph_free(&local);
    if (st) return st;
    double val[DLP_T_COUNT];
    int from[DLP_T_COUNT];
    combine(im->energy, pred, im->n, val, from);
    for (int t = 0; t < DLP_T_COUNT; t++) {
        if (!isfinite(val[t]) || dlp_target_mode((dlp_target)t) != p->meta.mode)
            continue;
        dlp_pred_value *v = &out->v[t];
        if (from[t] >= 0) {
            *v = r[from[t]].v[t];   /* one component: as it predicted it */
        } else {
            v->valid = true;
            v->value = val[t];
            v->lo = v->hi = 0;      /* interval from the blend's residuals */
            v->by = im->name;
        }
    }
    const bool none[DLP_T_COUNT] = {false};
    for (int c = 0; c < im->n; c++) dlp_pred_result_take(out, &r[c], none);
    return DLP_OK;
}

/* cost: its costliest part's (dlp_pred_kind_cost) */
const dlp_pred_vtable dlp_pred_blend_vt = {"blend", blend_load, blend_predict,
                                           blend_free, DLP_PRED_COST_MODEL};

/* ---- training ------------------------------------------------------------- */

/* Component `kind` from the trained model file `path` (opts.parts_from),
 * checked to be that kind, of E's mode, and trained on this split: its
 * validation error per target, measured again on va, must be the one its
 * file recorded (stored as float: to 1e-4 relative). A file trained on
 * other data, another --seed or other filters fails that check. */
static dlp_status part_from_file(const char *path, const char *kind,
                                 const dlp_examples *E, const int32_t *va,
                                 int nva, dlp_predictor **pp,
                                 dlp_nn_file *file, dlp_error *err) {
    /* va: where dlp_pred_train measured it (the training part when there
     * is no validation part) */
    static const dlp_pred_vtable *const extra[] = {&dlp_tree_pred_vtable,
                                                   NULL};
    dlp_status st = dlp_nn_file_load(file, path, err);
    if (!st) st = dlp_predictor_from_file(file, extra, pp, err);
    if (st) return st;
    const dlp_pred_meta *m = &(*pp)->meta;
    if (strcmp(m->kind, kind))
        return dlp_fail(err, DLP_ERR_ARG, "%s is a '%s' model file", path,
                        m->kind);
    if (m->mode != E->mode)
        return dlp_fail(err, DLP_ERR_ARG, "%s is for mode %s, not %s", path,
                        dlp_mode_name(m->mode), dlp_mode_name(E->mode));
    if (!nva)
        return dlp_fail(err, DLP_ERR_ARG, "no examples to check %s against",
                        path);
    double here[DLP_T_COUNT];
    st = dlp_pred_val_errors(*pp, E, va, nva, here, NULL, NULL, err);
    for (int t = 0; t < DLP_T_COUNT && !st; t++) {
        if (!(m->targets >> t & 1) || !isfinite(m->val_error[t])) continue;
        if (!(fabs(here[t] - m->val_error[t]) <= 1e-4 * m->val_error[t] + 1e-9))
            st = dlp_fail(err, DLP_ERR_ARG, "%s was not trained on this "
                          "split: its %s validation MAPE is %.4f%% in the "
                          "file, %.4f%% on these %d validation examples "
                          "(train it on the same data with the same --seed "
                          "and filters)", path,
                          dlp_target_name((dlp_target)t),
                          100 * m->val_error[t], 100 * here[t], nva);
    }
    return st;
}

/* Copies f's entries into out under "blend/c/". */
static dlp_status add_part(dlp_nn_file *out, int c, const dlp_nn_file *f,
                           dlp_error *err) {
    dlp_status st = DLP_OK;
    for (int i = 0; i < f->n && !st; i++) {
        char name[512];
        if (snprintf(name, sizeof name, "blend/%d/%s", c, f->e[i].name) >=
            (int)sizeof name)
            st = dlp_fail(err, DLP_ERR_LIMIT, "entry name too long");
        else
            st = dlp_nn_file_add_copy(out, name, &f->e[i], err);
    }
    return st;
}

/* out: the blend of its parts' first fits, which dlp_pred_train measures
 * it on; refit_out (--refit, else NULL): the same with each part that
 * refits trained again on tr and va, the blend dlp_pred_train keeps */
dlp_status dlp_pred_blend_train(const dlp_examples *E, const int32_t *tr,
                                int ntr, const int32_t *va, int nva,
                                const dlp_train_opts *o, dlp_pred_meta *meta,
                                dlp_nn_file *out, dlp_nn_file *refit_out,
                                dlp_error *err) {
    char buf[DLP_PRED_KIND_MAX];
    const char *parts[DLP_PRED_BLEND_MAX];
    int n = 0;
    dlp_status st = dlp_pred_blend_parts(meta->kind, buf, sizeof buf, parts,
                                         &n, err);
    if (st) return st;
    if (n < 2)
        return dlp_fail(err, DLP_ERR_ARG, "a blend needs two or more kinds "
                        "('%s')", meta->kind);
    if (o && o->init_from)
        return dlp_fail(err, DLP_ERR_ARG, "a blend trains its components "
                        "from scratch: no --init-from");
    if (o && o->n_parts_from && o->n_parts_from != n)
        return dlp_fail(err, DLP_ERR_ARG, "%d component files for the %d "
                        "parts of '%s'", o->n_parts_from, n, meta->kind);
    const uint32_t all_rt = (1u << DLP_RT_COUNT) - 1,
                   all_pr = (1u << DLP_PREC_COUNT) - 1;
    uint32_t targets = 0, rt = all_rt, pr = all_pr, seen_rt = 0;
    int schema = 0;
    for (int c = 0; c < n && !st; c++) {
        dlp_predictor *pp = NULL;
        dlp_nn_file file = {0}, first = {0};
        const char *from = o && o->n_parts_from ? o->parts_from[c] : NULL;
        if (from)
            st = part_from_file(from, parts[c], E, nva ? va : tr,
                                nva ? nva : ntr, &pp, &file, err);
        else {
            /* a part that refits hands back its first fit too: the blend's
             * own validation figures and calibration are measured on its
             * parts' predictions of the validation examples */
            dlp_train_opts po;
            if (o) po = *o;
            else dlp_train_opts_init(&po);
            po.refit = refit_out && po.refit;
            st = dlp_pred_train_first(parts[c], E, tr, ntr, va, nva, &po,
                                      &pp, &file, &first, err);
        }
        if (!st) st = add_part(out, c, first.n ? &first : &file, err);
        if (!st && refit_out) st = add_part(refit_out, c, &file, err);
        if (!st) {
            targets |= pp->meta.targets;
            rt &= pp->meta.runtimes ? pp->meta.runtimes : all_rt;
            pr &= pp->meta.precisions ? pp->meta.precisions : all_pr;
            if (pp->meta.feat_schema > schema) schema = pp->meta.feat_schema;
        } else {
            char msg[sizeof err->msg];
            snprintf(msg, sizeof msg, "%s", err ? err->msg : "");
            st = dlp_fail(err, st, "blend component '%s': %s", parts[c], msg);
        }
        dlp_predictor_free(pp);
        dlp_nn_file_free(&file);
        dlp_nn_file_free(&first);
    }
    if (st) return st;
    /* the runtimes it was trained on (a blend trained on CUDA-graph rows
     * only must not answer for eager ones) */
    for (int i = 0; i < ntr; i++) seen_rt |= 1u << E->ex[tr[i]].cfg.runtime;
    if (E->mode != DLP_MODE_TRAINING && seen_rt) rt &= seen_rt;
    if (!rt || !pr)
        return dlp_fail(err, DLP_ERR_ARG, "the components of '%s' cover no "
                        "common runtime and precision", meta->kind);
    int64_t sch[3] = {BLEND_SCHEMA, n, DLP_BLEND_ENERGY_POWER};
    if ((st = dlp_nn_file_add_i64(out, "blend/schema", sch, 3, err)) ||
        (refit_out &&
         (st = dlp_nn_file_add_i64(refit_out, "blend/schema", sch, 3, err))))
        return st;
    meta->targets = targets;
    meta->runtimes = rt == all_rt ? 0 : rt;
    meta->precisions = pr == all_pr ? 0 : pr;
    meta->feat_schema = schema;
    return DLP_OK;
}
