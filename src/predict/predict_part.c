/*
 * predict_part.c — the learned SM-partition latency model: per-node
 * profiles of an analysed graph, the factor, the training set gathered from
 * the dataset's green-context kernel traces, the least-squares fit, the
 * leave-models-out cross-validation and the text file (model and rules in
 * predict_part.h).
 */
#include "predict/predict.h"
#include "predict/predict_part.h"
#include "feat/feat.h"
#include "model/model.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- profiles -------------------------------------------------------------- */

static void add_node(const dlp_node *n, double tc_s, double tm_s, bool work,
                     void *user) {
    dlp_part_profile *p = user;
    if (!work || p->n < 0) return;
    if (p->n == p->cap) {
        int cap = p->cap ? 2 * p->cap : 256;
        double *a = realloc(p->tc_us, (size_t)cap * sizeof *a);
        if (a) p->tc_us = a;
        double *b = a ? realloc(p->tm_us, (size_t)cap * sizeof *b) : NULL;
        if (b) p->tm_us = b;
        double *c = b ? realloc(p->elems, (size_t)cap * sizeof *c) : NULL;
        if (c) p->elems = c;
        if (!c) {
            p->n = -1;       /* out of memory: reported by the builder */
            return;
        }
        p->cap = cap;
    }
    p->tc_us[p->n] = tc_s * 1e6;
    p->tm_us[p->n] = tm_s * 1e6;
    p->elems[p->n] = n->cost.out_elems > 0 ? (double)n->cost.out_elems : 1;
    p->n++;
}

dlp_status dlp_part_profile_build(const dlp_graph *g, const dlp_device *d,
                                  dlp_precision prec, dlp_part_profile *out,
                                  dlp_error *err) {
    memset(out, 0, sizeof *out);
    if (!g || !d || d->sm_count <= 0)
        return dlp_fail(err, DLP_ERR_ARG, "partition profile: no graph or "
                        "device (or a device without SMs)");
    out->sm_count = d->sm_count;
    dlp_predict_roofline_visit(g, d, prec, 1, 1, add_node, out);
    if (out->n < 0) {
        dlp_part_profile_free(out);
        return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    }
    return DLP_OK;
}

void dlp_part_profile_free(dlp_part_profile *p) {
    if (!p) return;
    free(p->tc_us);
    free(p->tm_us);
    free(p->elems);
    memset(p, 0, sizeof *p);
}

/* sum over nodes of t(s) (predict_part.h) */
static double profile_time(const dlp_part_model *m, const dlp_part_profile *p,
                           double s, double cap) {
    double S = p->sm_count, tot = 0;
    for (int i = 0; i < p->n; i++) {
        double par = p->elems[i] / m->elems_per_sm;
        double u = par < 1 ? 1 : par;
        if (u > s) u = s;
        double tc = p->tc_us[i] * S / u;
        double bw = u / m->bw_sms;
        if (bw > cap) bw = cap;
        double tm = p->tm_us[i] / bw;
        tot += m->lat_us + (tc > tm ? tc : tm);
    }
    return tot;
}

double dlp_part_profile_factor(const dlp_part_model *m,
                               const dlp_part_profile *p, int sms,
                               double bw_cap) {
    if (p->n == 0 || (sms >= p->sm_count && bw_cap >= 1)) return 1;
    double full = profile_time(m, p, p->sm_count, 1);
    double part = profile_time(m, p, sms, bw_cap);
    double f = full > 0 ? part / full : 1;
    return f < 1 ? 1 : f;
}

dlp_status dlp_part_factor(const dlp_part_model *m, const dlp_graph *g,
                           const dlp_device *d, dlp_precision prec, int sms,
                           const dlp_mig_profile *mig, double *factor,
                           dlp_error *err) {
    if (!m || !g || !d || !factor)
        return dlp_fail(err, DLP_ERR_ARG, "partition factor: NULL argument");
    *factor = 1;
    double cap = 1;
    if (mig) {
        sms = mig->sm_count;
        cap = mig->mem_eighths / 8.0;
        if (!(cap > 0) || cap > 1)
            return dlp_fail(err, DLP_ERR_ARG, "MIG profile %s has %d memory "
                            "eighths", mig->name ? mig->name : "?",
                            mig->mem_eighths);
    }
    if (sms < 1 || sms > d->sm_count)
        return dlp_fail(err, DLP_ERR_ARG, "%d SMs is out of range (1..%d on "
                        "%s)", sms, d->sm_count, d->name ? d->name : "?");
    dlp_part_profile p;
    dlp_status st = dlp_part_profile_build(g, d, prec, &p, err);
    if (st) return st;
    *factor = dlp_part_profile_factor(m, &p, sms, cap);
    dlp_part_profile_free(&p);
    return DLP_OK;
}

/* ---- the training set ----------------------------------------------------- */

typedef struct {             /* one configuration while summing rows */
    const dlp_kernel_row *key;   /* its first row */
    int n;
    int sms[DLP_PART_MAX_SMS + 1];
    double us[DLP_PART_MAX_SMS + 1];
    int whole;               /* index of sms == 0, or -1 */
} acc;

static bool same_config(const dlp_kernel_row *a, const dlp_kernel_row *b) {
    return a->c.rep == b->c.rep && a->batch == b->batch &&
           a->seq == b->seq && a->height == b->height &&
           a->width == b->width && a->c.hash && b->c.hash &&
           !strcmp(a->c.hash, b->c.hash) && a->c.device && b->c.device &&
           !strcmp(a->c.device, b->c.device) && a->precision &&
           b->precision && !strcmp(a->precision, b->precision);
}

typedef struct {
    char (*hash)[17];
    const char **name;  /* hash[i], for dlp_dataset_graphs_bytes */
    void **bytes;
    size_t *len;
    int n;
} gather;

/* Opens, binds and analyses one configuration's graph; builds its profile
 * and the roofline factors. */
static dlp_status build_sample(const void *bytes, size_t len,
                               const char *measured_dir, dlp_part_sample *s,
                               dlp_error *err) {
    dlp_device d;
    dlp_status st = dlp_device_load(s->device, measured_dir, &d, err);
    if (st) return st;
    dlp_model *m = NULL;
    if ((st = dlp_feat_model_at(bytes, len, s->hash, s->batch, s->seq,
                                s->height, s->width, &m, err)))
        return st;
    st = dlp_part_profile_build(&m->graph, &d, s->prec, &s->prof, err);
    if (!st) {
        double fe = dlp_predict_roofline_ms(&m->graph, &d, s->prec,
                                            DLP_RT_EAGER, 1, 1);
        double fg = dlp_predict_roofline_ms(&m->graph, &d, s->prec,
                                            DLP_RT_GRAPH, 1, 1);
        for (int k = 0; k < s->n; k++) {
            s->roof_eager[k] = dlp_predict_partition_factor_from(
                &m->graph, &d, s->prec, DLP_RT_EAGER, s->sms[k], NULL, fe);
            s->roof_graph[k] = dlp_predict_partition_factor_from(
                &m->graph, &d, s->prec, DLP_RT_GRAPH, s->sms[k], NULL, fg);
        }
    }
    dlp_model_free(m);
    return st;
}

dlp_status dlp_part_set_load(const dlp_dataset *ds, dlp_part_set *out,
                             dlp_error *err) {
    memset(out, 0, sizeof *out);
    if (!ds) return dlp_fail(err, DLP_ERR_ARG, "no dataset");
    dlp_dataset_counts cnt;
    dlp_dataset_get_counts(ds, &cnt);
    acc *a = NULL;
    int na = 0, ca = 0, last = -1;
    dlp_status st = DLP_OK;
    for (size_t i = 0; i < cnt.kernels && !st; i++) {
        const dlp_kernel_row *r = dlp_dataset_kernel(ds, i);
        if (!r->mode || strcmp(r->mode, "eager") || !isfinite(r->duration_us))
            continue;
        int j = last >= 0 && same_config(a[last].key, r) ? last : -1;
        for (int k = na - 1; j < 0 && k >= 0; k--)
            if (same_config(a[k].key, r)) j = k;
        if (j < 0) {
            if (na == ca) {
                int c2 = ca ? 2 * ca : 64;
                acc *b = realloc(a, (size_t)c2 * sizeof *b);
                if (!b) {
                    st = dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
                    break;
                }
                a = b;
                ca = c2;
            }
            j = na++;
            memset(&a[j], 0, sizeof a[j]);
            a[j].key = r;
            a[j].whole = -1;
        }
        last = j;
        int k = 0;
        while (k < a[j].n && a[j].sms[k] != (int)r->sms) k++;
        if (k == a[j].n) {
            if (k == DLP_PART_MAX_SMS + 1) continue;   /* too many: ignored */
            a[j].sms[k] = (int)r->sms;
            a[j].us[k] = 0;
            if (r->sms == 0) a[j].whole = k;
            a[j].n++;
        }
        a[j].us[k] += r->duration_us;
    }
    /* configurations with the whole GPU and at least one partition */
    for (int j = 0; j < na && !st; j++) {
        acc *c = &a[j];
        if (c->whole < 0 || c->n < 2 || !(c->us[c->whole] > 0)) continue;
        dlp_precision prec;
        dlp_error e2;
        if (!c->key->precision ||
            dlp_precision_parse(c->key->precision, &prec, &e2) ||
            strlen(c->key->c.hash) != 16)
            continue;
        dlp_part_sample *s2 = realloc(out->s, (size_t)(out->n + 1) * sizeof *s2);
        if (!s2) {
            st = dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
            break;
        }
        out->s = s2;
        dlp_part_sample *s = &out->s[out->n++];
        memset(s, 0, sizeof *s);
        memcpy(s->hash, c->key->c.hash, 17);
        s->device = c->key->c.device;
        s->prec = prec;
        s->batch = c->key->batch > 0 ? c->key->batch : 1;
        s->seq = c->key->seq;
        s->height = c->key->height;
        s->width = c->key->width;
        s->rep = c->key->c.rep;
        s->full_us = c->us[c->whole];
        for (int k = 0; k < c->n; k++) {
            if (k == c->whole || c->sms[k] < 0) continue;
            /* sorted by SM count, ascending */
            int at = s->n;
            while (at > 0 && s->sms[at - 1] > c->sms[k]) {
                s->sms[at] = s->sms[at - 1];
                s->meas[at] = s->meas[at - 1];
                at--;
            }
            s->sms[at] = c->sms[k];
            s->meas[at] = c->us[k] / s->full_us;
            s->n++;
        }
    }
    free(a);
    if (!st && out->n == 0)
        st = dlp_fail(err, DLP_ERR_NOT_FOUND, "no eager kernel traces with "
                      "both the whole GPU and an SM partition in %s",
                      dlp_dataset_dir(ds));
    /* the graphs, one pass over the packs */
    gather G = {0};
    if (!st) {
        G.hash = calloc((size_t)out->n, sizeof *G.hash);
        G.bytes = calloc((size_t)out->n, sizeof *G.bytes);
        G.len = calloc((size_t)out->n, sizeof *G.len);
        G.name = calloc((size_t)out->n, sizeof *G.name);
        if (!G.hash || !G.bytes || !G.len || !G.name)
            st = dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
        for (int i = 0; !st && i < out->n; i++) {
            int k = 0;
            while (k < G.n && strcmp(G.hash[k], out->s[i].hash)) k++;
            if (k == G.n) {
                memcpy(G.hash[G.n], out->s[i].hash, 17);
                G.name[G.n] = G.hash[G.n];
                G.n++;
            }
        }
        if (!st)
            st = dlp_dataset_graphs_bytes(ds, G.name, G.n, G.bytes, G.len, err);
    }
    char mdir[4096] = "";
    if (!st && snprintf(mdir, sizeof mdir, "%s/devices", dlp_dataset_dir(ds)) >=
                   (int)sizeof mdir)
        st = dlp_fail(err, DLP_ERR_ARG, "dataset path too long");
    int kept = 0;
    for (int i = 0; !st && i < out->n; i++) {
        dlp_part_sample *s = &out->s[i];
        int k = 0;
        while (k < G.n && strcmp(G.hash[k], s->hash)) k++;
        dlp_error e2;
        if (k == G.n || !G.bytes[k] ||
            build_sample(G.bytes[k], G.len[k], mdir, s, &e2)) {
            dlp_part_profile_free(&s->prof);   /* graph missing or failed */
            out->n_skipped++;
            continue;
        }
        out->s[kept++] = *s;
    }
    if (!st) out->n = kept;
    for (int i = 0; i < G.n; i++) free(G.bytes[i]);
    free(G.hash);
    free(G.bytes);
    free(G.len);
    free(G.name);
    if (!st && out->n == 0)
        st = dlp_fail(err, DLP_ERR_NOT_FOUND, "no traced configuration's "
                      "graph could be analysed");
    if (st) dlp_part_set_free(out);
    return st;
}

void dlp_part_set_free(dlp_part_set *s) {
    if (!s) return;
    for (int i = 0; i < s->n; i++) dlp_part_profile_free(&s->s[i].prof);
    free(s->s);
    memset(s, 0, sizeof *s);
}

/* ---- fitting --------------------------------------------------------------- */

#define NPAR 3
static const double LO[NPAR] = {0.01, 1, 1};      /* L us, E elems, B SMs */
static const double HI[NPAR] = {1000, 1e9, 1e9};  /* B capped by S below */

static void set_params(dlp_part_model *m, const double th[NPAR]) {
    m->lat_us = exp(th[0]);
    m->elems_per_sm = exp(th[1]);
    m->bw_sms = exp(th[2]);
}

static double sse(const dlp_part_set *s, const bool *use, const double th[NPAR]) {
    dlp_part_model m = {0};
    set_params(&m, th);
    double e = 0;
    for (int i = 0; i < s->n; i++) {
        if (use && !use[i]) continue;
        const dlp_part_sample *x = &s->s[i];
        double full = profile_time(&m, &x->prof, x->prof.sm_count, 1);
        for (int k = 0; k < x->n; k++) {
            double f = profile_time(&m, &x->prof, x->sms[k], 1) / full;
            double r = log(f < 1 ? 1 : f) - log(x->meas[k]);
            e += r * r;
        }
    }
    return e;
}

dlp_status dlp_part_fit(const dlp_part_set *s, const bool *use,
                        dlp_part_model *m, dlp_error *err) {
    if (!s || !m) return dlp_fail(err, DLP_ERR_ARG, "partition fit: NULL");
    memset(m, 0, sizeof *m);
    int n = 0, pts = 0, maxsm = 1;
    for (int i = 0; i < s->n; i++)
        if (!use || use[i]) {
            n++;
            pts += s->s[i].n;
            if (s->s[i].prof.sm_count > maxsm) maxsm = s->s[i].prof.sm_count;
        }
    if (!n || !pts)
        return dlp_fail(err, DLP_ERR_ARG, "partition fit: no configuration");
    double lo[NPAR], hi[NPAR];
    for (int k = 0; k < NPAR; k++) {
        lo[k] = log(LO[k]);
        hi[k] = log(HI[k]);
    }
    hi[2] = log((double)maxsm);
    /* coarse grid */
    double best[NPAR] = {0}, be = INFINITY;
    for (double l = log(0.25); l <= log(64) + 1e-9; l += log(2))
        for (double e = log(1e2); e <= log(1e7) + 1e-9; e += log(10) / 2)
            for (double b = 0; b <= 4; b++) {
                double th[NPAR] = {l, e, lo[2] + (hi[2] - lo[2]) * b / 4};
                double v = sse(s, use, th);
                if (v < be) {
                    be = v;
                    memcpy(best, th, sizeof best);
                }
            }
    /* pattern search: +- step per parameter, halving the step */
    for (double step = 0.5; step > 0.005; step /= 2) {
        bool moved = true;
        for (int it = 0; moved && it < 50; it++) {
            moved = false;
            for (int k = 0; k < NPAR; k++)
                for (int sg = -1; sg <= 1; sg += 2) {
                    double th[NPAR];
                    memcpy(th, best, sizeof th);
                    th[k] += sg * step;
                    if (th[k] < lo[k] || th[k] > hi[k]) continue;
                    double v = sse(s, use, th);
                    if (v < be - 1e-12) {
                        be = v;
                        memcpy(best, th, sizeof best);
                        moved = true;
                    }
                }
        }
    }
    set_params(m, best);
    m->n_configs = n;
    m->n_points = pts;
    return DLP_OK;
}

/* ---- cross-validation ------------------------------------------------------ */

/* index of each sample's hash among the distinct hashes (first-seen order) */
static int hash_groups(const dlp_part_set *s, int *grp) {
    int ng = 0;
    for (int i = 0; i < s->n; i++) {
        grp[i] = -1;
        for (int j = 0; j < i && grp[i] < 0; j++)
            if (!strcmp(s->s[j].hash, s->s[i].hash)) grp[i] = grp[j];
        if (grp[i] < 0) grp[i] = ng++;
    }
    return ng;
}

dlp_status dlp_part_cross_validate(const dlp_part_set *s, int folds,
                                   dlp_part_cv *out, double *pred,
                                   dlp_error *err) {
    if (!s || !out) return dlp_fail(err, DLP_ERR_ARG, "partition cv: NULL");
    memset(out, 0, sizeof *out);
    int *grp = malloc((size_t)(s->n ? s->n : 1) * sizeof *grp);
    bool *use = malloc((size_t)(s->n ? s->n : 1) * sizeof *use);
    if (!grp || !use) {
        free(grp);
        free(use);
        return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    }
    int ng = hash_groups(s, grp);
    if (folds <= 0 || folds > ng) folds = ng;
    dlp_status st = ng < 2 ? dlp_fail(err, DLP_ERR_ARG, "partition cv: %d "
                                      "model(s), need 2", ng)
                           : DLP_OK;
    double sl = 0, se = 0, sg = 0;
    int np = 0;
    for (int f = 0; f < folds && !st; f++) {
        for (int i = 0; i < s->n; i++) use[i] = grp[i] % folds != f;
        dlp_part_model m;
        if ((st = dlp_part_fit(s, use, &m, err))) break;
        int p0 = 0;
        for (int i = 0; i < s->n; i++) {
            const dlp_part_sample *x = &s->s[i];
            for (int k = 0; k < x->n; k++, p0++) {
                if (use[i]) continue;
                double fl = dlp_part_profile_factor(&m, &x->prof, x->sms[k], 1);
                if (pred) pred[p0] = fl;
                double el = fabs(fl - x->meas[k]) / x->meas[k] * 100;
                double ee = fabs(x->roof_eager[k] - x->meas[k]) / x->meas[k] * 100;
                double eg = fabs(x->roof_graph[k] - x->meas[k]) / x->meas[k] * 100;
                sl += el;
                se += ee;
                sg += eg;
                if (el > out->learned_max) out->learned_max = el;
                if (ee > out->roof_eager_max) out->roof_eager_max = ee;
                np++;
            }
        }
    }
    free(grp);
    free(use);
    if (st) return st;
    out->learned = sl / np;
    out->roof_eager = se / np;
    out->roof_graph = sg / np;
    out->n_points = np;
    out->n_configs = s->n;
    out->n_models = ng;
    out->folds = folds;
    return DLP_OK;
}

/* ---- the file --------------------------------------------------------------- */

static const char *const PART_KEYS[] = {"lat_us", "elems_per_sm", "bw_sms",
                                        "configs", "models", "points",
                                        "folds", "cv_mape", "roofline_mape",
                                        NULL};

dlp_status dlp_part_save(const char *path, const dlp_part_model *m,
                         dlp_error *err) {
    if (!path || !m) return dlp_fail(err, DLP_ERR_ARG, "partition save: NULL");
    const double v[9] = {m->lat_us, m->elems_per_sm, m->bw_sms, m->n_configs,
                         m->n_models, m->n_points, m->folds, m->cv_mape,
                         m->roofline_mape};
    return dlp_kv_write(path,
        "# dlperf SM-partition latency model (src/predict/predict_part.h):\n"
        "# per kernel node t(s) = lat_us + max(tc*S/u, tm/min(cap, u/bw_sms)),\n"
        "# u = min(s, out_elems/elems_per_sm); factor = sum t(s) / sum t(S).\n"
        "# Refit: dlperf partition fit data -o models/partition.csv\n",
        "dlperf-partition-1", PART_KEYS, v, err);
}

dlp_status dlp_part_load(const char *path, dlp_part_model *m, dlp_error *err) {
    if (!path || !m) return dlp_fail(err, DLP_ERR_ARG, "partition load: NULL");
    memset(m, 0, sizeof *m);
    double v[9] = {0};
    uint32_t have = 0;
    dlp_status st = dlp_kv_read(path, "dlperf-partition-1", PART_KEYS, v,
                                &have, err);
    if (st) return st;
    if ((have & 7) != 7)
        return dlp_fail(err, DLP_ERR_FORMAT, "%s: missing %s", path,
                        !(have & 1) ? "lat_us"
                        : !(have & 2) ? "elems_per_sm" : "bw_sms");
    m->lat_us = v[0];
    m->elems_per_sm = v[1];
    m->bw_sms = v[2];
    m->n_configs = (int)v[3];
    m->n_models = (int)v[4];
    m->n_points = (int)v[5];
    m->folds = (int)v[6];
    m->cv_mape = v[7];
    m->roofline_mape = v[8];
    if (!(m->lat_us >= 0 && m->lat_us <= HI[0]) ||
        !(m->elems_per_sm >= LO[1] && m->elems_per_sm <= HI[1]) ||
        !(m->bw_sms >= LO[2] && m->bw_sms <= HI[2]))
        return dlp_fail(err, DLP_ERR_FORMAT, "%s: parameter out of range "
                        "(lat_us %g, elems_per_sm %g, bw_sms %g)", path,
                        m->lat_us, m->elems_per_sm, m->bw_sms);
    return DLP_OK;
}
