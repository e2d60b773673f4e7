/*
 * predict_host.h — internal to libdlperf: host-aware eager latency
 * (predict_host.c), the correction `dlperf predict --host-us X` applies to
 * an eager inference prediction for a host whose dispatch time per eager
 * op is X microseconds.
 *
 * Why. Eager PyTorch pays the host's dispatch path (Python, ATen, the
 * launch) per op; where that, not the GPU, sets the pace, one
 * configuration's eager latency moves with the host's speed at the moment
 * (slope 0.94 of ln eager on ln host_us over rep pairs, `dlperf dataset
 * stats data`, "host probe"). A prediction blind to the host is fitted to
 * the hosts of the collection batches. The collector records host_us (the
 * median time per op of in-place adds to a 1-element CUDA tensor,
 * tools/collect/measure.py host_dispatch_us) beside every eager row since
 * batch h12c; the same probe run on the user's host gives X.
 *
 * The model. With E and G the predicted eager and CUDA-graph latencies of
 * the configuration, h = clamp(1 - G / E, 0, 1) is the predicted share of
 * the eager time the GPU alone does not explain, and
 *     eager' = E x exp(h x beta x ln(X / ref_us))
 * so a GPU-bound configuration (h = 0) is left as it is and a host-bound
 * one moves as host_us^beta. beta and ln ref_us come from a least-squares
 * fit of ln(measured / E) on [h ln host_us, h] over held-out predictions
 * (`dlperf eval --predictions`) of eager rows that carry host_us; ref_us is
 * the host the blind predictor effectively assumes (the factor is 1
 * there).
 *
 * Language models (`--mode llm`): the same model on the LLM predictors'
 * eager throughput, seen as a latency (batch / throughput); the collector
 * records host_us beside the eager inference row a language model's LLM
 * row is the throughput view of, and a separate file holds the fit on the
 * LLM predictors' held-out throughput (their "blind" host differs from the
 * inference predictors').
 *
 * Training steps (`--mode training`, sixtieth session): a step runs
 * eagerly and has no CUDA-graph twin, so the host-bound share comes from
 * the predicted step S itself: h = min(1, tau_ms / S). Held-out slopes of
 * ln(measured / predicted) on ln host_us fall with the step (0.87 under
 * 16 ms, 0.52 at 32-64 ms, about 0 past 128 ms; docs/PREDICT.md); tau_ms
 * is the step below which the host sets the pace. It is fitted with beta
 * and ref_us: the least squares above for each tau of a log grid, keeping
 * the smallest residual. The host of a label is the training row's own
 * host_us (collector since batch p59a), else the median host_us of the
 * eager inference rows of the batch it was measured in. The energy is the
 * predicted power x step of each side, and gamma is fitted on it as
 * below.
 *
 * Sixty-seventh session: the share from the predicted power instead. A
 * step the GPU sets the pace of draws high power and repeats to 0.1%
 * across hosts; a host-bound one draws little and moves with host_us
 * (data/probes/repeats-training.csv: 25.7% apart as is, 14.2% with
 * h = 1, 10.1% with h from the earlier step's measured power; docs/
 * PREDICT.md). With P the predicted power of the step (W),
 *     h = clamp((power_hi_w - P) / (power_hi_w - power_lo_w), 0, 1),
 * power_lo_w < power_hi_w fitted with beta and ref_us over a grid of
 * 100-700 W pairs; the fit keeps whichever rule, tau or power, leaves
 * the smaller residual (a file has one: power_hi_w > 0, or tau_ms > 0).
 * The watts are on a board of power_tdp_w (the first sample's card, 700
 * W for every training label so far): a step predicted on a card of
 * another board power (the device database's tdp_w) enters as P x
 * power_tdp_w / tdp_w, the same share of its board's power.
 *
 * Energy (fifty-eighth session). The time the host adds (or saves) is
 * spent at the power of a GPU waiting for its next kernel, not at the
 * configuration's average power, so the eager energy E_j moves with the
 * latency factor f as
 *     energy' = E_j x (1 + gamma x (f - 1)),   0 <= gamma <= 1,
 * gamma the ratio of that waiting power to the average one. gamma is
 * fitted after beta, on the same samples' eager energy predictions, as
 * the minimizer of their MAPE: each sample's |a_i + gamma b_i| term is
 * convex, so the minimizer is the weighted median of -a_i / b_i with
 * weights |b_i| (a_i = E_j / actual - 1, b_i = E_j (f - 1) / actual),
 * clipped to [0, 1]. The energy the collector measures is NVML's board
 * energy over the timed loop (../shared/PROTOCOL.md), which counts the
 * waiting GPU's draw. A file without gamma (older ones) leaves energy as
 * it is.
 *
 * The files (models/host.csv, models/host-llm.csv, models/host-training.csv):
 * key,value lines after
 * format,dlperf-host-1 (core's dlp_kv_read), written by `dlperf host fit`.
 */
#ifndef DLP_PREDICT_HOST_H
#define DLP_PREDICT_HOST_H

#include "../core/core.h"
#include "../pred/pred_train.h"

#define DLP_HOST_FILE "host.csv"
#define DLP_HOST_LLM_FILE "host-llm.csv"
#define DLP_HOST_TRAINING_FILE "host-training.csv"
/* the --host-us values accepted, microseconds per op */
#define DLP_HOST_US_MIN 0.1
#define DLP_HOST_US_MAX 1000.0

typedef struct {
    double beta;             /* d ln eager / d ln host_us, host-bound share */
    double ref_us;           /* host_us at which the factor is 1 */
    /* recorded at fit time (informative) */
    int n_samples, n_models, folds;
    double blind_mape;       /* the predictions as given, % */
    double host_mape;        /* corrected, fitted on the other folds, % */
    double gamma;            /* energy: the waiting power's share, 0..1
                                (0: energy left as it is) */
    int n_energy;            /* samples with an eager energy prediction */
    double energy_blind_mape, energy_host_mape;   /* as blind / host */
    double tau_ms;           /* training: h = min(1, tau_ms / step); 0:
                                h = 1 - graph / eager (inference, llm) */
    double power_lo_w, power_hi_w;   /* training, where power_hi_w > 0
                                (then tau_ms is 0): h from the predicted
                                power, above */
    double power_tdp_w;      /* the board power those watts are on (0:
                                unscaled) */
    int host_source;         /* the labels' hosts it was fitted on, a
                                dlp_host_source: 0 their own probes (the
                                moment's), 1 their batches' medians (the
                                host's level, --batch-host), 2 their
                                batches' fresh readings (--fresh-host) */
    double level_mape, energy_level_mape;   /* corrected, % , with each
                                label's batch median probe as its host:
                                what a reading of the host's level (not
                                of the measurement's moment) gets; what
                                predict --host-us reports; 0: unmeasured */
    double beta_quick;       /* a two-sided fit (`dlperf host fit
                                --two-sided`): the slope for hosts quicker
                                than ref_us, beta the slower ones'; 0:
                                beta on both sides */
} dlp_host_model;

/* A power P (W) measured or predicted on a board of tdp_w, as m's power
 * rule reads it: P x m->power_tdp_w / tdp_w (P where either is not
 * positive). */
double dlp_host_board_power(const dlp_host_model *m, double power_w,
                            double tdp_w);

/* Whether m is a training fit (tau_ms > 0 or power_hi_w > 0). */
bool dlp_host_is_training(const dlp_host_model *m);
/* m's fields the pred layer's host formulas read (dlp_host_norm,
 * pred_train.h: the factor, the share, the board's power, training or
 * not), which `dlperf train --host-norm` normalizes labels with. */
dlp_host_norm dlp_host_norm_of(const dlp_host_model *m);

/* The host-bound share h in 0..1 of m's rule (below) for a prediction or
 * measurement; NAN where an input the rule uses is missing. */
double dlp_host_share(const dlp_host_model *m, double eager_ms,
                      double graph_ms, double power_w);

/* The factor eager' / E for a host of host_us (h from eager_ms and
 * graph_ms as above; with m->tau_ms > 0 from eager_ms alone; with
 * m->power_hi_w > 0 from power_w, the predicted power of the step; the
 * inputs a rule does not use are ignored; a non-positive or non-finite
 * input it uses gives 1). */
double dlp_host_factor(const dlp_host_model *m, double host_us,
                       double eager_ms, double graph_ms, double power_w);

/* The factor energy' / E_j for a latency factor f (above): 1 + gamma (f
 * - 1); 1 for a non-positive or non-finite f or without m. */
double dlp_host_energy_factor(const dlp_host_model *m, double f);

/* What a set of samples predicts: eager inference latency, an LLM's eager
 * throughput, or a training step. */
typedef enum {
    DLP_HOST_INFERENCE = 0,
    DLP_HOST_LLM = 1,
    DLP_HOST_TRAINING = 2,
    DLP_HOST_N_MODES
} dlp_host_mode;

/* The file name of a mode's fit in a models directory (DLP_HOST_FILE,
 * DLP_HOST_LLM_FILE, DLP_HOST_TRAINING_FILE) and the `--mode` argument
 * that names the mode ("inference", "llm", "training"). */
const char *dlp_host_file(dlp_host_mode mode);
const char *dlp_host_mode_name(dlp_host_mode mode);
/* The mode dlp_host_mode_name names; DLP_HOST_N_MODES for another name. */
dlp_host_mode dlp_host_mode_parse(const char *name);
/* What a mode's samples predict, for messages: "eager latency", "eager
 * throughput", "training step". */
const char *dlp_host_quantity(dlp_host_mode mode);

/* One held-out eager prediction with the host probe of its label. */
typedef struct {
    int fold;
    int model;               /* index of the model name (distinct count) */
    int device;              /* index into dlp_host_set.devices */
    double actual_ms, eager_ms, graph_ms, host_us;   /* graph_ms: NAN in
                                                        training */
    double power_w;          /* training: the predicted power of the step
                                (W on a board of the set's tdp_w; NAN
                                where none), else NAN */
    double actual_j, energy_j;   /* its eager energy (llm: per sample),
                                    measured and predicted; NAN when the
                                    file has no such prediction */
    bool own_host;           /* host_us is the label rows' own probe
                                (always for eager inference and llm;
                                training: rows since p59a), not their
                                batch's eager inference median */
    double batch_host_us;    /* the host's level: the median probe of its
                                label's batch (eager inference rows; a
                                training label: its batch's training rows'
                                own probes, else its eager inference
                                rows), mean over the label's rows; NAN
                                where a row's batch has none */
    double fresh_host_us;    /* a fresh process's reading of that batch's
                                host (dlp_dataset_fresh_probe_us), mean
                                over the label's rows; NAN where a row's
                                batch has none (before p69a) */
    int batch;               /* index into dlp_host_set.batches: the batch
                                of the label's rows; -1 where they come
                                from several */
} dlp_host_sample;

#define DLP_HOST_MAX_DEVICES 8
#define DLP_HOST_BATCH_ID 64   /* bytes of a batch_id, its NUL included */
typedef struct {
    dlp_host_sample *s;
    int n, cap;
    int n_models;            /* distinct models among the samples */
    char devices[DLP_HOST_MAX_DEVICES][48];
    int n_devices;
    char (*batches)[DLP_HOST_BATCH_ID];  /* the dataset's batch_ids, in
                                            its order (malloc'd) */
    int n_batches;
    int n_eager;             /* eager latency predictions of the kind */
    int n_no_host;           /* of them: label without host_us */
    int n_no_graph;          /* with host_us, but no CUDA-graph prediction
                                (training: no power prediction) of the
                                same fold and configuration */
    double tdp_w;            /* training: the board power the samples'
                                power_w are on (the first sample's card;
                                others scaled to it); 0: unknown */
    bool two_sided;          /* dlp_host_fit (and the cross-fitting) fits
                                beta_quick too (set by the caller) */
    dlp_host_mode mode;      /* llm: the samples' latencies are batch /
                                throughput, and the MAPE is the
                                throughput's, |actual_ms / eager_ms - 1|;
                                training: h from tau_ms (above) */
} dlp_host_set;

/* The absolute relative error of a sample's predicted latency pred_ms
 * against act_ms, or (llm) of the throughput it stands for. */
double dlp_host_ape(dlp_host_mode mode, double pred_ms, double act_ms);

/* Reads an eval predictions CSV (src/eval/eval_predictions.c columns) and
 * joins the kind's inference.latency_ms rows (llm: its
 * llm.throughput_samples_s rows, as latencies batch / throughput), and
 * its eager inference.energy_j (llm: llm.energy_per_sample_j) rows of the
 * same fold and configuration, with the
 * host_us of the dataset's eager inference labels (mean over reps) on
 * graph, device, precision, batch, seq, height and width (llm: the set's
 * MAPE figures are the throughput's, as `dlperf eval` reports an LLM
 * run's). Training: its training.step_ms rows, with training.power_w x
 * step as the energy, joined with the training labels' host_us on graph,
 * device, precision, batch, height and width (a label without one: the
 * median host_us of its batch's eager inference rows; mean over the
 * label's rows). DLP_ERR_FORMAT for a file without the columns,
 * DLP_ERR_NOT_FOUND when no sample results. */
dlp_status dlp_host_set_load(const char *pred_csv, const dlp_dataset *ds,
                             const char *kind, dlp_host_mode mode,
                             dlp_host_set *out, dlp_error *err);
void dlp_host_set_free(dlp_host_set *s);

/* Where a sample's host comes from: the label rows' own probe (the
 * moment of the measurement), the median probe of their batch (the
 * host's level), or a fresh process's reading of their batch's host
 * (env.json, before and after the batch; what tools/host_probe.py gives a
 * user). */
typedef enum {
    DLP_HOST_SRC_OWN = 0,
    DLP_HOST_SRC_BATCH = 1,
    DLP_HOST_SRC_FRESH = 2
} dlp_host_source;

/* Keeps the samples that have a host of source src and moves their
 * host_us to it (OWN: keeps those whose host is the label rows' own
 * probe, training rows since p59a; BATCH: batch_host_us; FRESH:
 * fresh_host_us), n_models recounted (the other counts stay the file's).
 * `dlperf host fit|apply --own-probe | --batch-host | --fresh-host`.
 * DLP_ERR_NOT_FOUND when none is left. */
dlp_status dlp_host_set_source(dlp_host_set *s, dlp_host_source src,
                               dlp_error *err);

/* Fits beta and ref_us (training: and tau_ms, over a log grid of 1 to
 * 1024 ms, or power_lo_w and power_hi_w, over 20 W steps of 100-700 W
 * where every selected sample has a power; the smaller residual wins)
 * on the samples with use[i] (NULL: all); with s->two_sided, beta for
 * hosts above ref_us and beta_quick below it, over a grid of ref_us in
 * 1% steps across the samples' hosts (both slopes by least squares
 * without an intercept at each; the smallest residual wins), then gamma
 * on those of them with an energy prediction (none: gamma 0).
 * DLP_ERR_ARG when fewer than 2 are selected or the fit is singular,
 * DLP_ERR_NOT_FOUND when the fitted beta is not positive (no host effect
 * to correct: ref_us would be meaningless). */
dlp_status dlp_host_fit(const dlp_host_set *s, const bool *use,
                        dlp_host_model *m, dlp_error *err);

/* Cross-fitting over the samples' folds: each fold corrected by the fit on
 * the others (fit_device >= 0: on the others' samples of that device only,
 * a test of the correction on another card). MAPE (%) as given and
 * corrected, overall and per device (arrays of n_devices), of the
 * latencies and of the energies. corrected (may be NULL) gets each
 * sample's corrected eager latency. */
typedef struct {
    double blind, host;
    double dev_blind[DLP_HOST_MAX_DEVICES], dev_host[DLP_HOST_MAX_DEVICES];
    int dev_n[DLP_HOST_MAX_DEVICES];
    int folds;
    /* the same of the energy predictions (e_n 0: none) */
    double e_blind, e_host;
    double dev_e_blind[DLP_HOST_MAX_DEVICES], dev_e_host[DLP_HOST_MAX_DEVICES];
    int e_n, dev_e_n[DLP_HOST_MAX_DEVICES];
    /* the latencies by the source of the host: the label's own probe,
     * and (training only) its batch's eager inference median */
    double own_blind, own_host, median_blind, median_host;
    int own_n, median_n;
} dlp_host_cv;
dlp_status dlp_host_cross_validate(const dlp_host_set *s, int fit_device,
                                   dlp_host_cv *out, double *corrected,
                                   dlp_error *err);

/* The fitted correction m applied to every sample as it is (no
 * refitting: a test of a shipped models/host.csv on new measurements);
 * out as dlp_host_cross_validate's with folds 0, corrected (may be NULL)
 * each sample's corrected eager latency. */
dlp_status dlp_host_apply(const dlp_host_set *s, const dlp_host_model *m,
                          dlp_host_cv *out, double *corrected,
                          dlp_error *err);

/* Replicates (predict_host_repl.c): the collector's raw inference rows
 * (the columns of data/FORMAT.md's inference.csv with batch_id, spec ids
 * or graph hashes alike, power_w among them) of one or more batches,
 * plain CSV or .xz. Every pair of eager measurements of one configuration
 * (same graph, device, precision, batch, seq, height, width): the earlier
 * (batch in name order, which is time order for the collector's ids,
 * each beginning with its UTC start; then rep) stands for the later, as
 * it is and moved by m's factor from its host_us to the later's, h from
 * the earlier's own eager and CUDA-graph latencies; both need their
 * CUDA-graph twins (same batch and rep), whose own gap is the GPU side's.
 * Pairs are grouped by their two batches (a == b: rep 0 against rep 1 of
 * one batch). Training rows (data/FORMAT.md's training.csv with batch_id:
 * a step_ms column, no runtime or seq; data/probes/repeats-training.csv)
 * pair every two steps of one configuration, host_us or not: no twin,
 * h = min(1, tau_ms / the earlier step) where m is a training fit (its
 * tau_ms > 0), else no moved gap and h = 1 for the pairs' own beta; the
 * latency and power shifts are the steps' own (graph_med NAN). */
#define DLP_HOST_REPL_MAX_BATCHES 4096
typedef struct {
    int a, b;                /* indexes into dlp_host_repl.batches */
    int n;                   /* pairs */
    int n_host;              /* of them with host_us on both sides (every
                                inference pair; gap_cor, beta_fit and
                                gap_fit are over these) */
    double gap, gap_cor;     /* mean |earlier / later - 1| %, as is, moved */
    double gap_med, gap_cor_med;
    double host_a, host_b;   /* median host_us of the earlier, the later */
    double beta_fit;         /* beta fitted on these pairs (least squares
                                of ln(later / earlier) on h ln(host_us
                                ratio)); NAN when the host never moved */
    double gap_fit;          /* mean gap % moved with beta_fit */
    double graph_med;        /* median |earlier / later - 1| % of the
                                same measurements' CUDA-graph twins */
    /* the card and the day rather than the host: the twins' signed
     * shift, 100 (exp(mean ln(later / earlier)) - 1) %, of the CUDA-graph
     * latency and of its power (over the n_power pairs whose twins both
     * carry power_w; NAN when none do) */
    double graph_shift, power_shift;
    int n_power;
} dlp_host_repl_pair;
typedef struct {
    char (*batches)[64];     /* names, in name order */
    int n_batches;
    dlp_host_repl_pair *pairs;   /* by a, then b */
    int n_pairs;
    bool training;           /* training rows (step_ms): no CUDA-graph
                                twins; rows without host_us kept for the
                                gap as is */
    int n_no_host;           /* eager rows without host_us (skipped;
                                training: counted, kept) */
    int n_no_graph;          /* pairs without both CUDA-graph twins */
    dlp_host_repl_pair all_same, all_across;  /* the pairs within one
                             batch, across two (a, b unused; n 0: none) */
} dlp_host_repl;
/* DLP_ERR_FORMAT for a file without the columns or with a bad number,
 * DLP_ERR_LIMIT past DLP_HOST_REPL_MAX_BATCHES batches, DLP_ERR_NOT_FOUND
 * when no pair results. dlp_host_repl_free releases *out (also after an
 * error). */
dlp_status dlp_host_replicates(const char *path, const dlp_host_model *m,
                               dlp_host_repl *out, dlp_error *err);
void dlp_host_repl_free(dlp_host_repl *r);

dlp_status dlp_host_save(const char *path, const dlp_host_model *m,
                         dlp_error *err);
/* DLP_ERR_IO when it cannot be opened, DLP_ERR_FORMAT when malformed or
 * beta / ref_us out of range. */
dlp_status dlp_host_load(const char *path, dlp_host_model *m, dlp_error *err);

#endif /* DLP_PREDICT_HOST_H */
