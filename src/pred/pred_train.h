/*
 * pred_train.h — internal to libdlperf. The training side of the
 * predictors: labelled examples built from a dataset (pred_data.c),
 * training options and progress reporting, and the per-kind train
 * functions that write a model file (pred_train.c drives them and records
 * validation error and residual quantiles in the file's header).
 *
 * Targets are learned as log(y): labels span 4+ orders of magnitude (a
 * 0.05 ms op to a 30 s training step), and a loss on log values is a loss
 * on the ratio pred/actual, i.e. on the relative error the goals are
 * stated in; Huber on top keeps the few noisy eager outliers from
 * dominating the gradient.
 */
#ifndef DLP_PRED_TRAIN_H
#define DLP_PRED_TRAIN_H

#include "pred.h"
#include "../feat/feat.h"

/* ---- examples ------------------------------------------------------------ */
typedef struct {
    int fg;                    /* index into dlp_examples.fg */
    dlp_pred_config cfg;
    double y[DLP_T_COUNT];     /* labels, NAN where not measured */
    int model, family;         /* indices into models / families */
    int flagged;               /* a rep pair disagreed (kept, never dropped) */
    double rep_gap;            /* |rep0 - rep1| / mean of the main target */
} dlp_example;

typedef struct {
    dlp_pred_mode mode;
    dlp_example *ex;
    int n, cap;
    dlp_feat_graph *fg;        /* featurized graphs, one per (hash, binding) */
    char **fg_hash;
    int n_fg, cap_fg;
    char **models, **families;
    int n_models, n_families;
    dlp_feat_graph *pool;      /* unlabeled pool (every graph of the index) */
    int n_pool;
    char devices[256];         /* devices present, comma-separated */
    char **skipped;            /* why graphs were skipped (first few) */
    int n_skipped_graphs;
} dlp_examples;

#define DLP_POOL_MAX_NODES 6000

typedef struct {
    const char *device;        /* only this device (NULL: all) */
    int runtime;               /* -1 all, else dlp_runtime */
    int precision;             /* -1 all, else dlp_precision */
    bool with_pool;            /* featurize every indexed graph (TraPPM) */
    /* progress while featurizing: done of total graphs */
    void (*progress)(void *user, int done, int total);
    void *user;
} dlp_examples_opts;

/* Joins every label row of `mode` with its graph: rep 0 and rep 1 are
 * averaged into one example per configuration (hash, device, runtime,
 * precision, batch, seq, height, width); graph bytes come from the packs,
 * are opened, bound (batch, seq), analysed and featurized once per
 * binding. Graphs that fail to load are skipped and counted. */
dlp_status dlp_examples_build(dlp_examples *E, const dlp_dataset *ds,
                              dlp_pred_mode mode, const dlp_examples_opts *o,
                              dlp_error *err);
/* The same with the pool limited to an even sample of pool_max graphs of
 * at most DLP_POOL_MAX_NODES nodes (0: every graph): the compute budget of
 * TraPPM's pre-training. */
dlp_status dlp_examples_build_pool(dlp_examples *E, const dlp_dataset *ds,
                                   dlp_pred_mode mode,
                                   const dlp_examples_opts *o, int pool_max,
                                   dlp_error *err);
void dlp_examples_free(dlp_examples *E);

/* ---- training ------------------------------------------------------------ */
typedef struct {
    const char *kind;
    int epoch, epochs;
    double loss, val_error;    /* val_error: MAPE of the main target */
    double elapsed_s, eta_s;
} dlp_train_progress;

typedef struct {
    int epochs;                /* 0: kind default */
    double lr;                 /* 0: kind default */
    int hidden;                /* 0: kind default */
    int graphs_per_batch;      /* 0: kind default */
    int patience;              /* early stopping, epochs; 0: default */
    uint64_t seed;
    int threads;               /* 0: 1 */
    bool no_prior;             /* DIPPM/TraPPM: no ridge prior */
    const char *init_from;     /* transfer: start from this model file */
    int shots;                 /* > 0: train on this many random examples of
                                  the training part only (few-shot) */
    void (*progress)(void *user, const dlp_train_progress *p);
    void *user;
} dlp_train_opts;

void dlp_train_opts_init(dlp_train_opts *o);

/* Writes the kind's payload into out and sets what it knows of meta
 * (targets, runtimes, precisions). tr/va index E->ex. */
typedef dlp_status (*dlp_pred_train_fn)(const dlp_examples *E,
                                        const int32_t *tr, int ntr,
                                        const int32_t *va, int nva,
                                        const dlp_train_opts *o,
                                        dlp_pred_meta *meta, dlp_nn_file *out,
                                        dlp_error *err);

typedef struct {
    const dlp_pred_vtable *vt;
    dlp_pred_train_fn train;
    bool learned;              /* false: analytical (roofline) */
} dlp_pred_kind;

/* Built-in kinds with their trainers, NULL-terminated through vt. */
const dlp_pred_kind *dlp_pred_kinds(void);
const dlp_pred_kind *dlp_pred_kind_find(const char *kind);

/* Trains `kind` on tr, measures it on va (validation MAPE per target,
 * 5/95% quantiles of log(actual/pred)), and returns the predictor and,
 * when file is not NULL, the complete model file (meta + payload). */
dlp_status dlp_pred_train(const char *kind, const dlp_examples *E,
                          const int32_t *tr, int ntr, const int32_t *va,
                          int nva, const dlp_train_opts *o,
                          dlp_predictor **out, dlp_nn_file *file,
                          dlp_error *err);

/* Predicts example i of E with p (through the cached featurized graph). */
dlp_status dlp_pred_example(const dlp_predictor *p, const dlp_examples *E,
                            int i, dlp_pred_result *r, dlp_error *err);

/* The targets of a mode, in order: fills t[] and returns the count. */
int dlp_mode_targets(dlp_pred_mode m, dlp_target *t);

/* ---- helpers shared by the kinds ---------------------------------------- */
/* Ridge regression: w[d] minimizing |Xw - y|^2 + lambda |w[1..]|^2 over rows
 * with finite y (X[n, d], column 0 is the intercept). */
dlp_status dlp_ridge_fit(const double *X, const double *y, int n, int d,
                         double lambda, double *w, dlp_error *err);

/* Feature standardisation: mean/std per column of x[n, d] (std >= 1e-6). */
void dlp_colstats(const float *x, size_t n, int d, float *mean, float *std);

#endif /* DLP_PRED_TRAIN_H */
