/*
 * tree_fit.c — trains the XGBoost language-model predictor on a dataset's
 * llm.csv labels and measures it by leave-models-out cross-validation.
 *
 * Examples: one per configuration (hash, device, runtime, precision, batch,
 * seq), rep 0 and rep 1 averaged (energy where measured). Each graph is
 * extracted from its pack once, bound to the configuration's batch and
 * sequence, analysed and featurized (tree_pred.c). Targets are
 * log(actual / base) (see tree.h). Folds group by the `model` column of
 * graphs/index.csv, so variants of one model never straddle train and test.
 * The CV predictions give the validation MAPE and the 5% / 95% residual
 * quantiles stored in the model file (the prediction interval).
 */
#include "tree/tree.h"
#include "feat/feat.h"
#include "model/model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void dlp_tree_fit_opts_default(dlp_tree_fit_opts *o) {
    memset(o, 0, sizeof *o);
    dlp_tree_params_default(&o->tp);
    o->folds = 5;
    o->seed = 1;
}

typedef struct {
    const dlp_llm_row *row;        /* first row of the configuration */
    double y[DLP_TREE_NT];         /* actual, NAN when not measured */
    int ny[DLP_TREE_NT];
    const char *model;             /* fold group */
    int fold;
    float x[DLP_TREE_NFEAT];
    double base[DLP_TREE_NT];
    double macs;
} example;

static int same_config(const dlp_llm_row *a, const dlp_llm_row *b) {
    return !strcmp(a->c.hash, b->c.hash) && !strcmp(a->c.device, b->c.device) &&
           !strcmp(a->runtime, b->runtime) &&
           !strcmp(a->precision, b->precision) && a->batch == b->batch &&
           a->seq == b->seq;
}

static int cmp_rows(const void *pa, const void *pb) {
    const dlp_llm_row *a = *(const dlp_llm_row *const *)pa;
    const dlp_llm_row *b = *(const dlp_llm_row *const *)pb;
    int c;
    if ((c = strcmp(a->c.hash, b->c.hash))) return c;
    if (a->batch != b->batch) return a->batch < b->batch ? -1 : 1;
    if (a->seq != b->seq) return a->seq < b->seq ? -1 : 1;
    if ((c = strcmp(a->c.device, b->c.device))) return c;
    if ((c = strcmp(a->runtime, b->runtime))) return c;
    return strcmp(a->precision, b->precision);
}

/* ---- graph bytes of the needed hashes, one pass over the packs ---------- */
typedef struct {
    const char **hash;
    void **bytes;
    size_t *len;
    int n;
} graph_store;

static int store_visit(const char *hash, const dlp_graph_info *info,
                       const void *bytes, size_t len, void *user) {
    (void)info;
    graph_store *s = user;
    for (int i = 0; i < s->n; i++)
        if (!s->bytes[i] && !strcmp(s->hash[i], hash)) {
            s->bytes[i] = malloc(len ? len : 1);
            if (s->bytes[i]) {
                memcpy(s->bytes[i], bytes, len);
                s->len[i] = len;
            }
        }
    return 0;
}

/* ---- metrics ------------------------------------------------------------- */
static void metrics(const double *a, const double *p, int n,
                    dlp_tree_metrics *m) {
    memset(m, 0, sizeof *m);
    m->n = n;
    if (n == 0) {
        m->mape = m->rmspe = m->within10 = m->tau = NAN;
        return;
    }
    double s = 0, s2 = 0, w = 0;
    for (int i = 0; i < n; i++) {
        double r = (p[i] - a[i]) / a[i];
        s += fabs(r);
        s2 += r * r;
        w += fabs(r) <= 0.1;
    }
    m->mape = s / n;
    m->rmspe = sqrt(s2 / n);
    m->within10 = w / n;
    /* Kendall's tau-b */
    double conc = 0, disc = 0, ta = 0, tp = 0;
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++) {
            double da = a[i] - a[j], dp = p[i] - p[j];
            if (da == 0 && dp == 0) continue;
            if (da == 0) { ta++; continue; }
            if (dp == 0) { tp++; continue; }
            if ((da > 0) == (dp > 0)) conc++;
            else disc++;
        }
    double den = sqrt((conc + disc + ta) * (conc + disc + tp));
    m->tau = den > 0 ? (conc - disc) / den : NAN;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double quantile(double *v, int n, double q) {
    if (n == 0) return NAN;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    double pos = q * (n - 1);
    int i = (int)pos;
    if (i + 1 >= n) return v[n - 1];
    return v[i] + (pos - i) * (v[i + 1] - v[i]);
}

static void say(const dlp_tree_fit_opts *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
#include <stdarg.h>
static void say(const dlp_tree_fit_opts *o, const char *fmt, ...) {
    if (!o->progress) return;
    char line[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    o->progress(o->user, line);
}

/* Trains one booster on rows of ex whose fold != skip (skip -1: all) and
 * that have target t; NULL out when fewer than 2 such rows. */
static dlp_status train_target(const example *ex, int n, int t, int skip,
                               const dlp_tree_params *tp, dlp_tree **out,
                               dlp_error *err) {
    *out = NULL;
    float *x = malloc((size_t)(n ? n : 1) * DLP_TREE_NFEAT * sizeof *x);
    float *y = malloc((size_t)(n ? n : 1) * sizeof *y);
    if (!x || !y) {
        free(x);
        free(y);
        return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    }
    size_t m = 0;
    for (int i = 0; i < n; i++) {
        if (ex[i].fold == skip || !isfinite(ex[i].y[t])) continue;
        memcpy(x + m * DLP_TREE_NFEAT, ex[i].x, sizeof ex[i].x);
        y[m++] = (float)log(ex[i].y[t] / ex[i].base[t]);
    }
    dlp_status st = DLP_OK;
    if (m >= 2) st = dlp_tree_train(x, m, DLP_TREE_NFEAT, y, tp, out, err);
    free(x);
    free(y);
    return st;
}

static uint64_t mix(uint64_t h) {
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    return h;
}

static uint64_t str_hash(const char *s, uint64_t seed) {
    uint64_t h = 1469598103934665603ULL ^ seed;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return mix(h);
}

dlp_status dlp_tree_fit_llm(const dlp_dataset *ds, const dlp_tree_fit_opts *o,
                            const char *out_path, dlp_tree_report *rep,
                            dlp_error *err) {
    if (!ds || !o || !rep)
        return dlp_fail(err, DLP_ERR_ARG, "dlp_tree_fit_llm: NULL argument");
    memset(rep, 0, sizeof *rep);
    dlp_dataset_counts cnt;
    dlp_dataset_get_counts(ds, &cnt);
    const dlp_llm_row **rows = malloc((cnt.llm ? cnt.llm : 1) * sizeof *rows);
    example *ex = calloc(cnt.llm ? cnt.llm : 1, sizeof *ex);
    graph_store gs = {0};
    dlp_status st = DLP_OK;
    if (!rows || !ex) {
        st = dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
        goto done;
    }
    size_t nr = 0;
    for (size_t i = 0; i < cnt.llm; i++) {
        const dlp_llm_row *r = dlp_dataset_llm(ds, i);
        if (o->device && strcasecmp(r->c.device, o->device)) continue;
        if (!(r->throughput_samples_s > 0) || r->batch < 1) continue;
        rows[nr++] = r;
    }
    qsort(rows, nr, sizeof *rows, cmp_rows);
    /* group reps into examples */
    int n = 0;
    for (size_t i = 0; i < nr;) {
        size_t j = i;
        example *e = &ex[n];
        e->row = rows[i];
        double sum[DLP_TREE_NT] = {0};
        for (; j < nr && same_config(rows[i], rows[j]); j++) {
            double v[DLP_TREE_NT] = {rows[j]->throughput_samples_s,
                                     rows[j]->memory_mib,
                                     rows[j]->energy_per_sample_j};
            for (int t = 0; t < DLP_TREE_NT; t++)
                if (isfinite(v[t]) && v[t] > 0) {
                    sum[t] += v[t];
                    e->ny[t]++;
                }
        }
        for (int t = 0; t < DLP_TREE_NT; t++)
            e->y[t] = e->ny[t] ? sum[t] / e->ny[t] : NAN;
        const dlp_graph_info *gi = dlp_dataset_find_graph(ds, rows[i]->c.hash);
        e->model = gi && gi->model ? gi->model : rows[i]->c.hash;
        n++;
        i = j;
    }
    if (n < 4) {
        st = dlp_fail(err, DLP_ERR_NOT_FOUND,
                      "only %d language-model configurations%s%s in %s: need "
                      "at least 4", n, o->device ? " on " : "",
                      o->device ? o->device : "", dlp_dataset_dir(ds));
        goto done;
    }
    /* graph bytes */
    gs.hash = calloc((size_t)n, sizeof *gs.hash);
    gs.bytes = calloc((size_t)n, sizeof *gs.bytes);
    gs.len = calloc((size_t)n, sizeof *gs.len);
    if (!gs.hash || !gs.bytes || !gs.len) {
        st = dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
        goto done;
    }
    for (int i = 0; i < n; i++)
        if (!gs.n || strcmp(gs.hash[gs.n - 1], ex[i].row->c.hash))
            gs.hash[gs.n++] = ex[i].row->c.hash;
    rep->graphs = gs.n;
    say(o, "%d configurations of %d graphs: reading graphs", n, gs.n);
    if ((st = dlp_dataset_foreach_graph(ds, store_visit, &gs, err))) goto done;
    /* featurize */
    int kept = 0, g = 0;
    for (int i = 0; i < n; i++) {
        example *e = &ex[i];
        while (g < gs.n && strcmp(gs.hash[g], e->row->c.hash)) g++;
        if (g >= gs.n || !gs.bytes[g]) {
            rep->skipped++;
            continue;
        }
        dlp_pred_config pc;
        dlp_pred_config_init(&pc);
        dlp_error e2;
        if (dlp_device_find(e->row->c.device, &pc.device, &e2) ||
            dlp_precision_parse(e->row->precision, &pc.precision, &e2) ||
            dlp_runtime_parse(e->row->runtime, &pc.runtime, &e2)) {
            rep->skipped++;
            continue;
        }
        pc.mode = DLP_MODE_LLM;
        pc.batch = e->row->batch;
        pc.seq = e->row->seq;
        dlp_model *m = NULL;
        dlp_feat_graph fg;
        bool ok = dlp_model_open_memory(gs.bytes[g], gs.len[g], e->row->c.hash,
                                        &m, &e2) == DLP_OK &&
                  dlp_model_set_batch(m, pc.batch, &e2) == DLP_OK;
        if (ok && pc.seq > 0) dlp_model_bind_dim(m, "seq", pc.seq, &e2);
        ok = ok && dlp_model_analyze(m, &e2) == DLP_OK &&
             dlp_feat_graph_build(&fg, &m->graph, pc.batch, pc.seq, 0, 0,
                                  &e2) == DLP_OK;
        if (ok) {
            dlp_tree_llm_features(&m->graph, &fg, &pc, NULL, e->x, e->base);
            e->macs = fg.macs;
            dlp_feat_graph_free(&fg);
            ex[kept++] = *e;
        } else {
            rep->skipped++;
            say(o, "skipping %s batch %lld seq %lld: %s", e->row->c.hash,
                (long long)pc.batch, (long long)pc.seq, e2.msg);
        }
        dlp_model_free(m);
        if ((i + 1) % 50 == 0) say(o, "featurized %d/%d", i + 1, n);
    }
    n = kept;
    rep->examples = n;
    if (n < 4) {
        st = dlp_fail(err, DLP_ERR_NOT_FOUND,
                      "only %d language-model configurations could be "
                      "featurized", n);
        goto done;
    }
    /* folds by model name */
    int nmodels = 0;
    {
        const char **names = calloc((size_t)n, sizeof *names);
        uint64_t *keys = calloc((size_t)n, sizeof *keys);
        if (!names || !keys) {
            free(names);
            free(keys);
            st = dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
            goto done;
        }
        for (int i = 0; i < n; i++) {
            int k = 0;
            while (k < nmodels && strcmp(names[k], ex[i].model)) k++;
            if (k == nmodels) {
                names[k] = ex[i].model;
                keys[k] = str_hash(ex[i].model, o->seed);
                nmodels++;
            }
        }
        /* rank of each model's key = its position in a seeded shuffle */
        for (int i = 0; i < n; i++) {
            int k = 0;
            while (strcmp(names[k], ex[i].model)) k++;
            int rank = 0;
            for (int q = 0; q < nmodels; q++)
                if (keys[q] < keys[k]) rank++;
            int folds = o->folds > 1 ? o->folds : 5;
            if (folds > nmodels) folds = nmodels;
            ex[i].fold = folds > 1 ? rank % folds : -2;
        }
        free(names);
        free(keys);
    }
    rep->models = nmodels;
    int folds = o->folds > 1 ? o->folds : 5;
    if (folds > nmodels) folds = nmodels;
    /* cross-validation */
    double *act = malloc((size_t)n * sizeof *act);
    double *prd = malloc((size_t)n * sizeof *prd);
    double *bas = malloc((size_t)n * sizeof *bas);
    double *res = malloc((size_t)n * sizeof *res);
    if (!act || !prd || !bas || !res) {
        free(act); free(prd); free(bas); free(res);
        st = dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
        goto done;
    }
    dlp_pred_meta meta;
    dlp_pred_meta_init(&meta, "xgb", DLP_MODE_LLM);
    for (int t = 0; t < DLP_TREE_NT && !st; t++) {
        int m = 0;
        if (folds >= 2) {
            for (int f = 0; f < folds && !st; f++) {
                dlp_tree *tr = NULL;
                if ((st = train_target(ex, n, t, f, &o->tp, &tr, err))) break;
                /* the base alone, calibrated by the mean train log ratio */
                double mean = 0;
                int cnt_tr = 0;
                for (int i = 0; i < n; i++)
                    if (ex[i].fold != f && isfinite(ex[i].y[t])) {
                        mean += log(ex[i].y[t] / ex[i].base[t]);
                        cnt_tr++;
                    }
                mean = cnt_tr ? mean / cnt_tr : 0;
                for (int i = 0; i < n && !st; i++) {
                    if (ex[i].fold != f || !isfinite(ex[i].y[t])) continue;
                    float y = 0;
                    if (tr) st = dlp_tree_predict(tr, ex[i].x, 1,
                                                  DLP_TREE_NFEAT, &y, err);
                    act[m] = ex[i].y[t];
                    prd[m] = ex[i].base[t] * exp((double)(tr ? y : mean));
                    bas[m] = ex[i].base[t] * exp(mean);
                    res[m] = log(act[m] / prd[m]);
                    m++;
                }
                dlp_tree_free(tr);
            }
        }
        if (st) break;
        metrics(act, prd, m, &rep->cv[t]);
        metrics(act, bas, m, &rep->cv_base[t]);
        dlp_target tg = dlp_tree_targets[t];
        meta.val_error[tg] = rep->cv[t].mape;
        meta.resid_lo[tg] = quantile(res, m, 0.05);
        meta.resid_hi[tg] = quantile(res, m, 0.95);
        say(o, "%-24s CV (%d folds, %d held out): MAPE %.2f%%, base %.2f%%",
            dlp_target_column(tg), folds, m, 100 * rep->cv[t].mape,
            100 * rep->cv_base[t].mape);
    }
    free(act); free(prd); free(bas); free(res);
    if (st || !out_path) goto done;

    /* the shipped model: trained on every example */
    meta.batch_min = meta.seq_min = meta.macs_min = INFINITY;
    for (int i = 0; i < n; i++) {
        const dlp_llm_row *r = ex[i].row;
        dlp_precision p;
        dlp_runtime rt;
        if (!dlp_precision_parse(r->precision, &p, NULL))
            meta.precisions |= 1u << p;
        if (!dlp_runtime_parse(r->runtime, &rt, NULL)) meta.runtimes |= 1u << rt;
        if (!dlp_pred_meta_has_device(&meta, r->c.device)) {
            size_t l = strlen(meta.devices);
            snprintf(meta.devices + l, sizeof meta.devices - l, "%s%s",
                     l ? "," : "", r->c.device);
        }
        meta.batch_min = fmin(meta.batch_min, (double)r->batch);
        meta.batch_max = fmax(meta.batch_max, (double)r->batch);
        meta.seq_min = fmin(meta.seq_min, (double)r->seq);
        meta.seq_max = fmax(meta.seq_max, (double)r->seq);
        meta.macs_min = fmin(meta.macs_min, ex[i].macs);
        meta.macs_max = fmax(meta.macs_max, ex[i].macs);
    }
    snprintf(meta.info, sizeof meta.info,
             "xgb on %s: %d configurations, %d graphs, %d models; "
             "%d-fold leave-models-out CV MAPE throughput %.2f%%, memory "
             "%.2f%%, energy/sample %.2f%%",
             dlp_dataset_dir(ds), n, gs.n, nmodels, folds,
             100 * rep->cv[0].mape, 100 * rep->cv[1].mape,
             100 * rep->cv[2].mape);
    dlp_nn_file f = {0};
    int64_t schema[2] = {DLP_TREE_SCHEMA, DLP_TREE_NFEAT};
    st = dlp_nn_file_add_i64(&f, "xgb/schema", schema, 2, err);
    for (int t = 0; t < DLP_TREE_NT && !st; t++) {
        dlp_tree *tr = NULL;
        if ((st = train_target(ex, n, t, -1, &o->tp, &tr, err))) break;
        if (!tr) continue;
        void *buf = NULL;
        size_t len = 0;
        st = dlp_tree_save(tr, &buf, &len, err);
        dlp_tree_free(tr);
        if (st) break;
        char name[64];
        dlp_target tg = dlp_tree_targets[t];
        snprintf(name, sizeof name, "xgb/%s", dlp_target_column(tg));
        st = dlp_pred_blob_add(&f, name, buf, len, err);
        free(buf);
        meta.targets |= 1u << tg;
    }
    if (!st) st = dlp_pred_meta_write(&meta, &f, err);
    if (!st) st = dlp_nn_file_save(&f, out_path, err);
    dlp_nn_file_free(&f);
    if (!st) say(o, "wrote %s", out_path);
done:
    for (int i = 0; i < gs.n; i++) free(gs.bytes[i]);
    free(gs.hash);
    free(gs.bytes);
    free(gs.len);
    free(rows);
    free(ex);
    return st;
}
