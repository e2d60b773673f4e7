/*
 * eval.h — internal to libdlperf. Evaluating predictors: splits of the
 * examples (random 70/15/15, Monte-Carlo 70/30 per family over 5 seeds,
 * 5-fold leave-models-out, leave-one-family-out), accuracy metrics (MAPE,
 * RMSPE, RMSE, Kendall's tau, accuracy within 10%), an actual-vs-predicted
 * SVG plot, and the driver that trains a kind on each fold's training part
 * and predicts its test part.
 */
#ifndef DLP_EVAL_H
#define DLP_EVAL_H

#include "../pred/pred_train.h"
#include "../pred/pred_heldout.h"

/* ---- splits (eval_split.c) ---------------------------------------------- */
typedef enum {
    DLP_SPLIT_RANDOM = 0,   /* one fold: 70% train, 15% val, 15% test */
    DLP_SPLIT_MC,           /* 5 seeds x per-family 70/30 (val from train) */
    DLP_SPLIT_LMO,          /* 5 folds, whole models held out */
    DLP_SPLIT_LOFO,         /* one fold per family, that family held out */
    DLP_SPLIT_LGO,          /* 5 folds, whole graphs held out (every
                               configuration of a variant together; other
                               variants of its model stay in training) */
    DLP_SPLIT_COUNT,
    /* no split: a trained model file scored on every example
     * (dlp_eval_score); not a --split value */
    DLP_SPLIT_NONE = DLP_SPLIT_COUNT
} dlp_split_kind;

/* random, mc, lmo, lofo, lgo; "none" for DLP_SPLIT_NONE */
const char *dlp_split_name(dlp_split_kind k);
dlp_status dlp_split_parse(const char *s, dlp_split_kind *out, dlp_error *err);

typedef struct {
    char name[64];          /* "fold 2", "seed 3", "family resnet" */
    int32_t *train, *val, *test;
    int ntr, nva, nte;
} dlp_fold;

/* Folds over n examples. group[i] (the model; for lgo the graph) keeps the
 * variants of one model (for lgo the configurations of one graph) on one
 * side of every train/test and train/val cut for lmo, lgo and lofo;
 * family[i] drives mc and lofo. Deterministic in seed. Validation sets (for
 * early stopping) are carved from the training part the same way as the
 * test part: by model for lmo/lofo, at random otherwise. */
dlp_status dlp_split_make(dlp_split_kind kind, const int *group,
                          const int *family, int n, uint64_t seed,
                          dlp_fold **folds, int *n_folds, dlp_error *err);
void dlp_folds_free(dlp_fold *folds, int n_folds);

/* ---- metrics (eval_metrics.c) ------------------------------------------- */
typedef struct {
    int n;
    double mape;            /* mean |p - y| / y, fraction */
    double rmspe;           /* sqrt(mean ((p - y) / y)^2) */
    double rmse;            /* sqrt(mean (p - y)^2), natural units */
    double tau;             /* Kendall's tau-b between p and y */
    double acc10;           /* fraction with |p - y| / y <= 0.10 */
} dlp_metrics;

/* Pairs with y <= 0 or a non-finite y or p are skipped. */
void dlp_metrics_compute(const double *y, const double *p, int n,
                         dlp_metrics *m);
double dlp_kendall_tau(const double *a, const double *b, int n);

/* ---- plot (eval_svg.c) -------------------------------------------------- */
/* Log-log scatter of predicted (y axis) vs actual (x axis), coloured by
 * group (names[group[i]]), the y = x line and the +-10% band. */
dlp_status dlp_svg_scatter(const char *path, const char *title,
                           const char *unit, const double *actual,
                           const double *pred, const int *group,
                           const char *const *names, int n_groups, int n,
                           dlp_error *err);

/* ---- the driver (eval_run.c) -------------------------------------------- */
typedef struct {
    int n;                  /* records: one per (fold, test example) */
    int32_t *ex;            /* example index */
    int32_t *fold;
    double *pred;           /* [n][DLP_T_COUNT], NAN where not predicted */
    int n_folds;
    char kind[DLP_PRED_KIND_MAX];
    dlp_split_kind split;
    double train_s;         /* total training time */
    double *raw;            /* [n][DLP_T_COUNT] pred before the learned kinds'
                               MAPE calibration factor (pred_train.c); NULL:
                               the same as pred */
} dlp_eval_result;

/* A kind "a+b" is a blend (eval_run.c): each component trains on the
 * fold; the prediction is the geometric mean of theirs. Splits kind into
 * parts (pointing into buf[cap]); the count, or -1 with err set for an
 * unknown component or more than DLP_EVAL_MAX_PARTS (dlp_pred_blend_parts). */
#define DLP_EVAL_MAX_PARTS DLP_PRED_BLEND_MAX
int dlp_eval_kind_parts(const char *kind, char *buf, size_t cap,
                        const char **parts, dlp_error *err);

/* The blend of n results of the same records (same split, folds and test
 * examples, as dlp_eval_run gives for one seed), per record by
 * dlp_pred_blend_combine: geometric mean over the parts that predict a
 * target, NAN where none does; inference energy where a part lacks it =
 * blended latency x power. */
dlp_status dlp_eval_blend(const dlp_eval_result *const *parts, int n,
                          const char *kind, dlp_eval_result *out,
                          dlp_error *err);

/* Called before each fold trains (fold i of n). */
typedef void (*dlp_eval_fold_fn)(void *user, int i, int n, const dlp_fold *f);

dlp_status dlp_eval_run(const dlp_examples *E, const char *kind,
                        dlp_split_kind split, uint64_t seed,
                        const dlp_train_opts *o, dlp_eval_fold_fn on_fold,
                        void *user, dlp_eval_result *out, dlp_error *err);
void dlp_eval_result_free(dlp_eval_result *r);

/* A trained predictor p (a model file, dlp_predictor_load) scored on every
 * example of E, nothing trained: one record per example, fold 0 of one,
 * split DLP_SPLIT_NONE, kind p's. How the shipped files do on
 * measurements they never saw (another card's, a new batch's). p must
 * predict E's mode (DLP_ERR_ARG naming both otherwise). */
dlp_status dlp_eval_score(const dlp_examples *E, const dlp_predictor *p,
                          dlp_eval_result *out, dlp_error *err);

/* Metrics of target t over the records, all families (family < 0) or one. */
void dlp_eval_metrics(const dlp_examples *E, const dlp_eval_result *r,
                      dlp_target t, int family, dlp_metrics *m);

/* ---- error share per model (eval_shares.c) ------------------------------- */
typedef struct {
    int model, family;   /* indices into E->models / E->families */
    int n;               /* records with a label and a prediction */
    double abs_err;      /* sum of |predicted - actual| / actual */
    double share;        /* abs_err / the sum over all models (0..1) */
    double mape;         /* abs_err / n */
    double median_ratio; /* median of predicted / actual */
} dlp_model_share;

/* Per model with at least one record of target t (and of runtime, a
 * dlp_runtime, unless runtime < 0) with a positive label and prediction:
 * its share of the summed absolute relative error, sorted by share,
 * largest first. *out (free()) holds *n_out entries. */
dlp_status dlp_eval_model_shares(const dlp_examples *E, const dlp_eval_result *r,
                                 dlp_target t, int runtime,
                                 dlp_model_share **out, int *n_out,
                                 dlp_error *err);

/* ---- the records as CSV (eval_predictions.c) ----------------------------- */
/* Writes path (replacing it): a header, then per run, record and target of
 * E's mode with a label, one row: kind, split, fold, model, family, graph
 * hash, device, runtime ("train" in mode training), precision, batch, seq,
 * height, width, target, actual, predicted (empty where the kind gave
 * none) and rel_err = (predicted - actual) / actual. DLP_ERR_IO when the
 * file cannot be written. */
dlp_status dlp_eval_write_predictions(const char *path, const dlp_examples *E,
                                      const dlp_eval_result *const *runs,
                                      int n_runs, dlp_error *err);

/* ---- the held-out error table (eval_record.c) ----------------------------- */
/* Metrics of target t over r's records of runtime rt (a dlp_runtime, or
 * DLP_HELDOUT_ALL_RT: every record), all families, against E's labels as
 * they are now (moved to a reference host or as measured). */
dlp_status dlp_eval_metrics_runtime(const dlp_examples *E,
                                    const dlp_eval_result *r, dlp_target t,
                                    int rt, dlp_metrics *m, dlp_error *err);
/* Puts r's overall MAPE per target of E's mode into h (replacing rows of
 * the same key, pred_heldout.h): per runtime present among r's records
 * (not for training, which ignores the runtime), and over all records under
 * runtime "all" when all_runtimes (the examples were not filtered by
 * runtime) or the mode is training. Targets without a valid record get no
 * row. kind and split are r's; source (may be NULL) is copied. */
dlp_status dlp_eval_record(const dlp_examples *E, const dlp_eval_result *r,
                           bool all_runtimes, const char *source,
                           dlp_heldout *h, dlp_error *err);

/* ---- kernel counts (eval_kernels.c) ------------------------------------ */
typedef struct {
    const char *hash, *device, *precision, *family, *model,
               *variant;    /* the dataset's */
    int64_t batch, seq, height, width;
    int measured;           /* kernel rows of the eager trace */
    double estimated;       /* dlp_feat_roofline.kernels at its precision */
    double node_rule;       /* schema 8's count: kernel-launching nodes
                               and the fp16 clamps' kernels */
} dlp_kcount;

/* One dlp_kcount per distinct eager trace configuration of ds (rep 0,
 * whole GPU, status ok; the first batch's when several measured it), in
 * the dataset's order; configurations whose graph fails to load or bind
 * are counted in *n_failed and left out. The caller frees *out. */
dlp_status dlp_eval_kernel_counts(const dlp_dataset *ds, dlp_kcount **out,
                                  size_t *n_out, size_t *n_failed,
                                  dlp_error *err);

#endif /* DLP_EVAL_H */
