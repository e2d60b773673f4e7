/*
 * tree.h — internal to libdlperf. Gradient-boosted trees: a thin wrapper
 * over XGBoost's C API (tree_xgb.c; boosters stored as UBJSON, checked by
 * tree_ubj.c, older files' JSON boosters re-encoded by tree_convert.c),
 * the language-model architecture read
 * from an analysed graph (tree_llm.c), the feature vectors of language
 * models (tree_pred.c) and of any graph in inference or training
 * (tree_graph.c), and the tree predictor behind src/pred/pred.h's vtable
 * (tree_pred.c).
 *
 * The XGBoost library logs through its own callback and may print; every
 * call here silences it first (verbosity 0, a no-op log callback), so the
 * library stays quiet as the project's rules require.
 */
#ifndef DLP_TREE_H
#define DLP_TREE_H

#include "../graph/graph.h"
#include "../pred/pred.h"
#include "../feat/feat.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* ---- boosters (tree_xgb.c) --------------------------------------------- */

typedef struct dlp_tree dlp_tree;   /* one booster: one scalar target */

typedef struct {
    int rounds;          /* boosting rounds (default 200) */
    int max_depth;       /* default 3 */
    double eta;          /* learning rate (default 0.05) */
    double subsample;    /* row subsample (default 0.8) */
    double colsample;    /* column subsample per tree (default 0.8) */
    double min_child_weight; /* default 1 */
    double lambda;       /* L2 on leaf weights (default 1) */
    int threads;         /* default 1; 0: XGBoost's default */
    int hist;            /* 1: histogram method, 0: exact split search,
                            -1: the mode's (dlp_tree_params_for_mode) */
    int logistic;        /* 1: binary:logistic on 0 / 1 labels (predictions
                            are probabilities), 0: squared error */
    uint64_t seed;
} dlp_tree_params;

void dlp_tree_params_default(dlp_tree_params *p);
/* Fills the rounds, max_depth and eta of p that are 0 with the mode's
 * defaults (tree_fit.c says how they were chosen): 1500 rounds of depth 5
 * at eta 0.02 for every mode (llm since the seventy-ninth session,
 * training since the eighty-first, inference since the eighty-second;
 * dlp_tree_params_default's are 200 of depth 3 at 0.05), and a hist of
 * -1 with the mode's split search (the histogram method since the
 * eighty-fourth session). Fields already set are kept (dlperf tree fit's
 * --rounds, --depth, --eta, --method). */
void dlp_tree_params_for_mode(dlp_tree_params *p, dlp_pred_mode mode);
/* Fills the subsample and colsample of p that are 0 with target t's
 * defaults: 0.5 / 0.5 for the llm energy per sample, 0.8 / 0.8 (the
 * generic ones) for every other booster. Set ones are kept (tree fit's
 * --subsample, --colsample). */
void dlp_tree_params_for_target(dlp_tree_params *p, dlp_pred_mode mode,
                                dlp_target t);
/* dlp_tree_params_default with rounds, max_depth and eta at the mode's
 * defaults and subsample and colsample 0, each booster's to be filled by
 * dlp_tree_params_for_target: the boosters `dlperf train --kind xgb` and
 * `eval --kind xgb` fit. */
void dlp_tree_params_of_mode(dlp_tree_params *p, dlp_pred_mode mode);

/* Trains on x[n, d] (row-major, NAN = missing) against y[n] with squared
 * error. n >= 2, d >= 1, every y finite. */
dlp_status dlp_tree_train(const float *x, size_t n, int d, const float *y,
                          const dlp_tree_params *p, dlp_tree **out,
                          dlp_error *err);
/* out[n] for x[n, d]; d must equal the training width. */
dlp_status dlp_tree_predict(dlp_tree *t, const float *x, size_t n, int d,
                            float *out, dlp_error *err);
int dlp_tree_nfeatures(const dlp_tree *t);

/* How a booster is stored: XGBoost's own model bytes, either UBJSON
 * (binary; what dlp_tree_save writes: the kern node booster's 3.8 MB of
 * JSON took 160 ms to parse, its 2.5 MB of UBJSON 12 ms) or JSON (text;
 * what model files written before held). Both begin with '{'; in JSON a
 * '"' follows (the first key), in UBJSON the key length's integer marker. */
typedef enum { DLP_TREE_UBJ = 0, DLP_TREE_JSON = 1 } dlp_tree_format;
/* The format of booster bytes, or -1 when they are neither. */
int dlp_tree_format_of(const void *buf, size_t len);
/* The booster as UBJSON (*buf malloc'd; free()). */
dlp_status dlp_tree_save(dlp_tree *t, void **buf, size_t *len,
                         dlp_error *err);
/* The same in either format. */
dlp_status dlp_tree_save_as(dlp_tree *t, dlp_tree_format fmt, void **buf,
                            size_t *len, dlp_error *err);
/* Loads UBJSON (checked by dlp_ubj_check first) or JSON bytes;
 * DLP_ERR_FORMAT naming the problem for anything else. */
dlp_status dlp_tree_load(const void *buf, size_t len, dlp_tree **out,
                         dlp_error *err);
void dlp_tree_free(dlp_tree *t);
/* The booster stored as blob `name` of model file f (dlp_pred_blob_get),
 * loaded into *out; DLP_ERR_FORMAT when it takes other than nfeat
 * features (*out is then set: the caller frees it with the rest). */
dlp_status dlp_tree_load_blob(const dlp_nn_file *f, const char *name,
                              int nfeat, dlp_tree **out, dlp_error *err);

/* ---- forests evaluated without XGBoost (tree_forest.c) -----------------
 * A trained booster's trees as flat arrays, evaluated by a loop of our
 * own: loading libxgboost costs ~7 ms of static initialisers, most of
 * `dlperf predict`'s 10 ms budget for a ResNet-50, for the ~1,000 node
 * visits a model's convolutions need. Built from XGBoost's JSON (one
 * booster, reg:squarederror, numerical splits); prediction is XGBoost's:
 * base score + the leaf reached in each tree, x[f] < threshold going left,
 * a NaN feature the tree's default way; through the logistic function for
 * a binary:logistic booster. */
/* A node is one 64-bit little-endian word, the trees laid out in
 * pre-order (a node's left child is the next node):
 *   bits  0-31  the threshold, or the leaf's value (float32 bits)
 *   bits 32-46  the split feature; DLP_FOREST_LEAF at a leaf
 *   bit  47     a missing (NaN) feature goes left
 *   bits 48-63  the right child's distance from the node (0 at a leaf)
 * Eight bytes a node where the first layout stored twenty (five float32
 * fields) and a loaded copy sixteen: the shipped workspace forests are
 * 270,000 nodes, and `dlperf predict` spent most of its time reading,
 * converting and checking them (docs/PREDICT.md, "Speed, forty-third
 * session"); the words of a model file are read where they lie in its
 * bytes (dlp_nn_map). A tree is at most 65,536 nodes (depth 15). */
#define DLP_FOREST_LEAF 0x7FFF
static inline uint64_t dlp_forest_word(const uint8_t *nodes, int i) {
    uint64_t w;
    memcpy(&w, nodes + 8 * (size_t)i, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    w = __builtin_bswap64(w);
#endif
    return w;
}
static inline int dlp_forest_feat(uint64_t w) { return (int)(w >> 32) & 0x7FFF; }
static inline float dlp_forest_value(uint64_t w) {
    uint32_t u = (uint32_t)w;
    float v;
    memcpy(&v, &u, 4);
    return v;
}

typedef struct {
    int n_trees, n_nodes, n_features;
    int32_t *root;           /* [n_trees + 1]: tree t is nodes
                                [root[t], root[t + 1]) */
    const uint8_t *node;     /* [8 * n_nodes]: the words */
    float base;              /* base score (a margin: logit of XGBoost's
                                base_score for binary:logistic) */
    int logistic;            /* 1: eval returns sigmoid(margin) */
    void *own;               /* the words when this forest holds them */
    dlp_nn_map *map;         /* else the model file's bytes they lie in */
    /* A loaded forest is checked when first walked, not at load
     * (dlp_forest_ready): FOREST_UNCHECKED, _SOUND or _BROKEN; crc the
     * words' CRC-32 to compare first, when has_crc (a version-3 file) */
    atomic_int state;
    bool has_crc;
    uint32_t crc;
    char name[64];           /* the prefix it was loaded from, for errors */
} dlp_forest;

/* The trees of booster t (trained on n_features columns). */
dlp_status dlp_forest_from_tree(dlp_tree *t, int n_features, dlp_forest **out,
                                dlp_error *err);
/* DLP_OK when f may be walked: a built forest always; a loaded one once
 * its words match their CRC (version-3 files) and every node is sound
 * (children after their parent and inside the tree, features in range,
 * values finite, so a walk always ends inside the words). Checked at the
 * first call and remembered, thread-safely: a request checks only the
 * forests it walks. Else DLP_ERR_FORMAT naming the forest and why. */
dlp_status dlp_forest_ready(const dlp_forest *f, dlp_error *err);
/* The sum of f's trees at x. A forest that is not ready (a broken one;
 * callers check dlp_forest_ready first to say why) answers NaN: its
 * nodes are never walked. */
float dlp_forest_eval(const dlp_forest *f, const float *x);
/* out[k] = dlp_forest_eval(f, x[k]) for k < n, bit for bit, walking the
 * forest tree by tree: a tree's nodes are read from memory once for all
 * n rows (a model's distinct convolutions, ResNet-50's 23), not n times. */
void dlp_forest_eval_many(const dlp_forest *f, const float *const *x, int n,
                          float *out);
/* Whether some split of f reads feature j: a feature constant in every
 * row it was fitted on never is (how a newer feature tells an older
 * file's forest). Reads the words only (not their checks). */
bool dlp_forest_splits_on(const dlp_forest *f, int j);
/* The largest threshold of f's splits on feature j, -INFINITY when none
 * reads it: a code no row it was fitted on had (a category added later)
 * is never split off, so no threshold lies above the largest code it
 * saw. Reads the words only. */
float dlp_forest_max_split(const dlp_forest *f, int j);
void dlp_forest_free(dlp_forest *f);
/* Stored in a model file as "<prefix>/trees" (i64: n_features, logistic,
 * then each tree's first node), "<prefix>/words" (bytes: the nodes'
 * words) and "<prefix>/base" (f32); loading checks the trees' bounds and
 * keeps the file's bytes rather than copying the words, whose CRC and
 * nodes dlp_forest_ready checks when the forest is first walked. Files
 * before the words ("<prefix>/nodes", five float32 a node) are refused:
 * retrain them. A prefix of more than 249 characters (or none) is
 * refused with DLP_ERR_ARG by save and load alike, never cut off. */
dlp_status dlp_forest_save(const dlp_forest *f, dlp_nn_file *out,
                           const char *prefix, dlp_error *err);
/* Booster t (trained on n_features columns) stored as a forest at prefix
 * (dlp_forest_from_tree, then dlp_forest_save). */
dlp_status dlp_forest_save_tree(dlp_tree *t, int n_features, dlp_nn_file *out,
                                const char *prefix, dlp_error *err);
/* *out NULL (and DLP_OK) when the file has no "<prefix>/trees". */
dlp_status dlp_forest_load(const dlp_nn_file *in, const char *prefix,
                           dlp_forest **out, dlp_error *err);
/* dlp_forest_load, and a forest of other than nfeat features refused
 * (DLP_ERR_FORMAT naming it; *out NULL). */
dlp_status dlp_forest_load_for(const dlp_nn_file *in, const char *prefix,
                               int nfeat, dlp_forest **out, dlp_error *err);

/* ---- fitting through a folder of fitted forests (tree_cache.c) -------- */
/* A process-wide folder of fitted forests, like the thread count
 * (dlp_nn_set_threads): set it before fitting, not while fits run. With
 * one set, dlp_forest_fit answers a fit whose rows, labels, parameters
 * (the thread count only for the histogram method, whose trees may
 * differ with it) and XGBoost version it has seen from the
 * folder ("forest-<32 hex digits of their SHA-256>.dlpm") instead of
 * boosting again, and writes each forest it fits there. NULL or "":
 * none (the default). DLP_ERR_IO when dir is not a folder this process
 * can write in. */
dlp_status dlp_forest_cache_set(const char *dir, dlp_error *err);
/* the folder set, or NULL */
const char *dlp_forest_cache(void);
/* Since the process started: forests dlp_forest_fit took from the folder
 * (hits) and boosted (fits). */
void dlp_forest_cache_counts(int *hits, int *fits);
/* dlp_tree_train(x, n, d, y, p), then the booster's forest
 * (dlp_forest_from_tree): through the folder when one is set. An entry
 * that does not load or holds another key is fitted again and
 * overwritten; failing to write it is an error naming the file. */
dlp_status dlp_forest_fit(const float *x, size_t n, int d, const float *y,
                          const dlp_tree_params *p, dlp_forest **out,
                          dlp_error *err);
/* The XGBoost library's version (0.0.0 in a build without it). */
void dlp_tree_xgb_version(int v[3]);

/* ---- one stored booster: forest or blob (tree_model.c) ----------------- */
typedef struct {
    dlp_tree *tree;          /* the blob `name`, parsed by XGBoost; or */
    dlp_forest *forest;      /* our forest at "forest/<name>" */
} dlp_tree_model;

/* Booster `name` of f taking nfeat features: its forest when f holds one,
 * else its blob; a missing or malformed one is an error naming it. */
dlp_status dlp_tree_model_load(const dlp_nn_file *f, const char *name,
                               int nfeat, dlp_tree_model *m, dlp_error *err);
/* out[k] for the n rows of x (row-major, d = nfeat columns), as
 * dlp_tree_predict; a forest is checked on its first walk (a broken one
 * fails here, named). A blob's booster predicts into XGBoost's
 * per-booster buffer: the caller serializes those calls. */
dlp_status dlp_tree_model_predict(dlp_tree_model *m, const float *x,
                                  size_t n, int d, float *out,
                                  dlp_error *err);
void dlp_tree_model_free(dlp_tree_model *m);

/* tree_ubj.c: true when buf[0..len) is exactly one well-formed UBJSON
 * value (every length and count inside the buffer, nesting at most 64
 * deep); else false with *bad_at (may be NULL) the offset where the walk
 * stopped. */
bool dlp_ubj_check(const void *buf, size_t len, size_t *bad_at);

/* tree_convert.c: re-encodes every booster blob of a model file
 * ("blob/<name>" entries, also inside a blend's components, whose bytes
 * are XGBoost JSON or UBJSON; other blobs are left alone) in format `to`,
 * in place: what
 * `dlperf tree convert` runs on files written before UBJSON. *n_boosters
 * (may be NULL) counts the boosters found, *n_changed (may be NULL) those
 * re-encoded. Predictions do not change (the values are float32 in both). */
dlp_status dlp_tree_file_convert(dlp_nn_file *f, dlp_tree_format to,
                                 int *n_boosters, int *n_changed,
                                 dlp_error *err);
/* tree_convert.c: stores every booster of the tree predictor ("blob/xgb/
 * <name>", also inside a blend's components) and of the kern predictor
 * ("blob/kern/node", "blob/kern/graph") as our forest at
 * "forest/<name>" (dlp_tree_forest_prefix) and removes the blob, in
 * place: what `dlperf tree convert --forests` runs on files written
 * before the forests. *n_converted (may be NULL) counts them. The forest
 * is XGBoost's prediction (dlp_forest_from_tree): the same float32
 * thresholds and leaves, summed in the same order. */
dlp_status dlp_tree_file_forests(dlp_nn_file *f, int *n_converted,
                                 dlp_error *err);

/* ---- language-model features (tree_llm.c) ------------------------------ */
/* What the graph says about a transformer, read from its patterns:
 *   layers        attention blocks = Softmax nodes over a rank >= 3 score
 *                 tensor whose last two dims are equal-length key axes
 *   heads         dim 1 of those scores when rank 4 ([B, heads, Sq, Sk])
 *   hidden        dim 1 of the largest embedding table (a Gather whose
 *                 data is a rank-2 floating initializer)
 *   vocab         dim 0 of that table
 *   intermediate  widest output of a weight [hidden, X] (MatMul/Gemm with a
 *                 rank-2 initializer) other than vocab and 3*hidden (fused
 *                 QKV); 0 when none
 *   gated         1 when the FFN has a gate (two weights [hidden, inter])
 * Zero means "not found": a graph that is not a transformer reads as all
 * zeros and the predictor flags it out of distribution. */
typedef struct {
    int64_t layers, heads, hidden, vocab, intermediate;
    int gated;
} dlp_llm_arch;

void dlp_llm_arch_read(const dlp_graph *g, dlp_llm_arch *out);
/* The same read from a featurized graph (what the predictor uses). */
void dlp_llm_arch_from_feat(const dlp_feat_graph *fg, dlp_llm_arch *out);

/* ---- the tree predictor (tree_pred.c, tree_graph.c) --------------------- */
/* Kind "xgb": one booster per target (for llm and inference, per target
 * and runtime: eager and CUDA-graph rows are two regimes, host-bound and
 * kernel-bound, and a forest of each fits its own better than one of both:
 * 5-fold leave-models-out on the data through p78a, llm CUDA-graph
 * throughput 7.52 -> 6.26%, energy 9.78 -> 9.41%, memory 1.96 -> 1.78%,
 * eager throughput 25.75 -> 25.33%, eager energy 21.58 -> 22.29%;
 * inference in docs/EVAL.md, seventy-eighth session), each predicting
 * log(actual / base)
 * where base is an analytical estimate: targets span orders of magnitude,
 * the log makes squared error a relative one, and the base lets the trees
 * extrapolate along the physics instead of flat-lining outside the
 * training range. Memory bases also get a constant fitted at training
 * ("xgb/offset": the median of actual - base, allocations the graph does
 * not show). A layout per mode fixes the feature vector and the targets:
 *
 *   llm (schema 5, tree_pred.c): the architecture read from the graph,
 *     totals, batch / sequence / precision / runtime, roofline estimates,
 *     op-category counts, the attention mask's kind (bidirectional or not)
 *     and the size of the largest attention's scores, per op category the
 *     roofline time and kernels, the kernel floor sum, device features;
 *     targets throughput (base: batch / the graph layout's latency base
 *     below), memory (the liveness estimate) and energy per sample (board
 *     power x base latency / batch).
 *   inference and training (graph schemas DLP_TREE_GSCHEMA and
 *     DLP_TREE_TSCHEMA, tree_graph.c; inference split by runtime): the
 *     featurizer's static vector (totals, op-category counts, batch /
 *     sequence /
 *     resolution, precision and runtime, roofline and memory estimates,
 *     device features) + where the roofline time goes: per op category its
 *     roofline time and its kernel nodes, and the per-kernel floor sum.
 *     Targets latency / memory / energy (inference) and step time / memory
 *     / power (training); bases: the kernel floor sum (graph runtime) or
 *     roofline + launches (eager), three times that for a training step;
 *     the liveness memory estimate of docs/COST.md; board power x latency.
 *
 * Names of the features from dlp_tree_feature_name. */
#define DLP_TREE_SCHEMA 5          /* llm layout (3: graph-layout bases,
                                      4: + mask_bidir, log_scores_mib,
                                      5: + roofline time and kernels per
                                      op category, kernel floors) */
#define DLP_TREE_GSCHEMA 4         /* inference layout (2: + grouped and
                                      large-kernel convolutions; 4: a
                                      booster per target and runtime; 3
                                      is the training layout's) */
#define DLP_TREE_TSCHEMA 3         /* training layout (1: the inference
                                      layout's, step base 3 x (roofline +
                                      launches); 2: the base below; 3: +
                                      the convolutions of schema 2) */
/* The training step's base: the forward's kernel floors
 * (dlp_feat_roofline.kernel_ms) times this factor (backward about twice the
 * forward, the optimizer, the fp32 backward of memory-bound ops) plus this
 * many ms per forward kernel (dlp_feat_roofline.kernels: the host's
 * dispatch of the forward, of the backward's kernels and of the
 * optimizer's, per kernel of the forward). Relative least squares over the
 * 1,595 training configurations through t32c (H100 and H200, fp32, SGD
 * with momentum; docs/EVAL.md, thirty-second session): 4.008 and 0.05374;
 * the same form refitted on each leave-models-out fold's training rows
 * gives 21.73% held out against 21.71% in sample, so the two constants
 * carry next to nothing of the held-out rows. The former base, 3 x
 * (roofline + launches), was 56% off. */
#define DLP_TREE_TRAIN_GPU_FACTOR 4.0
#define DLP_TREE_TRAIN_HOST_MS 0.0537
/* the graph layout's breakdown (tree_graph.c): per op category the
 * roofline time and the kernels, the kernel floor sum and the count */
#define DLP_TREE_NBREAKDOWN (2 * DLP_FEAT_NCAT + 2)
#define DLP_TREE_NARCH (21 + 11 + 2 + DLP_TREE_NBREAKDOWN)
                                    /* + op categories, nodes per layer,
                                       attention mask kind and scores,
                                       time and kernels per category,
                                       kernel floor sum and count */
#define DLP_TREE_NFEAT (DLP_TREE_NARCH + DLP_DEVICE_NFEATURES)
#define DLP_TREE_NGFEAT (DLP_FEAT_STATIC_DIM + 2 * DLP_FEAT_NCAT + 2 + 4)
#define DLP_TREE_NFEAT_MAX \
    (DLP_TREE_NFEAT > DLP_TREE_NGFEAT ? DLP_TREE_NFEAT : DLP_TREE_NGFEAT)
#define DLP_TREE_NT 3              /* targets per mode */

typedef struct {
    dlp_pred_mode mode;
    int schema, nfeat;
    dlp_target targets[DLP_TREE_NT];
    /* one booster and offset per target and runtime (llm schema 5:
     * "xgb/<column>/eager", "xgb/<column>/graph"), each trained on that
     * runtime's rows alone; false: one per target, on every row */
    bool by_runtime;
} dlp_tree_layout;

/* The breakdown's DLP_TREE_NBREAKDOWN features of r into x (the count)
 * and their names: the graph layout's first ones after the static vector,
 * the llm layout's (schema 5) before the device features. */
int dlp_tree_breakdown_features(const dlp_feat_roofline *r, float *x);
const char *dlp_tree_breakdown_name(int i);

/* Booster groups of a layout (DLP_RT_COUNT by runtime, else 1) and the
 * group a configuration's rows fall in. */
static inline int dlp_tree_groups(const dlp_tree_layout *L) {
    return L->by_runtime ? DLP_RT_COUNT : 1;
}
static inline int dlp_tree_group_of(const dlp_tree_layout *L,
                                    const dlp_pred_config *c) {
    return L->by_runtime && c->runtime == DLP_RT_GRAPH ? DLP_RT_GRAPH : 0;
}

/* A booster's name in the model file: "xgb/<column>", or with its
 * runtime, "xgb/<column>/<runtime>", for group g. */
void dlp_tree_booster_name(const dlp_tree_layout *L, int t, int g,
                           char *buf, size_t cap);
/* Where the booster `booster` (a name as above) is stored as our forest
 * (dlp_forest_save's prefix): "forest/<booster>". */
void dlp_tree_forest_prefix(const char *booster, char *buf, size_t cap);

extern const dlp_pred_vtable dlp_tree_pred_vtable;

/* The layout of a mode; NULL for a mode the trees do not predict. */
const dlp_tree_layout *dlp_tree_layout_of(dlp_pred_mode mode);
const char *dlp_tree_feature_name(const dlp_tree_layout *L, int i);
/* Features x[L->nfeat] and the analytical bases[DLP_TREE_NT] of a
 * featurized graph under config c; arch (llm only) may be NULL: read from
 * fg. */
void dlp_tree_features(const dlp_tree_layout *L, const dlp_feat_graph *fg,
                       const dlp_pred_config *c, const dlp_llm_arch *arch,
                       float *x, double *base);
void dlp_tree_llm_features(const dlp_feat_graph *fg,
                           const dlp_pred_config *c, const dlp_llm_arch *arch,
                           float *x, double *base);
/* The latency (ms, at least 1e-4) and peak-memory (MiB, at least 1) bases
 * both layouts correct: the per-kernel floor sum for a replayed CUDA graph,
 * roofline + a launch per node for eager, three times that for a training
 * step; the liveness memory estimate. */
void dlp_tree_base_latency_memory(const dlp_feat_graph *fg,
                                  const dlp_pred_config *c,
                                  const dlp_feat_roofline *r, double *lat_ms,
                                  double *mem_mib);
void dlp_tree_graph_features(const dlp_feat_graph *fg,
                             const dlp_pred_config *c, float *x,
                             double *base);
const char *dlp_tree_graph_feature_name(int i);

/* ---- training and comparison (tree_fit.c) ------------------------------ */
typedef struct {
    dlp_tree_params tp;      /* rounds, max_depth, eta 0 (the default):
                                the mode's (dlp_tree_params_for_mode) */
    dlp_pred_mode mode;      /* default DLP_MODE_LLM */
    const char *device;      /* only rows of this device; NULL: every device */
    int split;               /* dlp_split_kind of src/eval (default lmo) */
    uint64_t seed;
    const char *compare;     /* comma-separated kinds evaluated on the same
                                folds ("dippm,roofline,linreg"); NULL none */
    int epochs;              /* for the compared learned kinds; 0 default */
    /* progress lines (the CLI prints them); may be NULL */
    void (*progress)(void *user, const char *line);
    void *user;
} dlp_tree_fit_opts;

typedef struct {             /* held-out metrics: one kind, target, family */
    char kind[DLP_PRED_KIND_MAX];
    dlp_target target;
    char family[48];         /* "" = all families */
    int n;
    double mape, rmspe, rmse, tau, acc10;
} dlp_tree_row;

typedef struct {
    int examples, graphs, models, families, folds;
    double train_s_xgb;
    dlp_tree_row *rows;      /* malloc'd; dlp_tree_report_free */
    int n_rows;
} dlp_tree_report;

void dlp_tree_fit_opts_default(dlp_tree_fit_opts *o);
void dlp_tree_report_free(dlp_tree_report *r);
/* Builds the examples of o->mode of a dataset (src/pred/pred_data.c: reps
 * averaged per configuration, graphs featurized once per binding), splits
 * them (src/eval, default 5-fold leave-models-out), trains and tests the
 * trees on every fold, evaluates the `compare` kinds on the same folds
 * through src/eval's driver, and writes the model trained on all examples
 * to out_path (NULL: evaluate only), its header carrying the CV MAPE and
 * the 5% / 95% quantiles of the CV residuals log(actual / pred).
 * DLP_ERR_NOT_FOUND when the dataset has fewer than 4 configurations of
 * the mode; DLP_ERR_ARG for a mode without a tree layout. */
dlp_status dlp_tree_fit(const dlp_dataset *ds, const dlp_tree_fit_opts *o,
                        const char *out_path, dlp_tree_report *rep,
                        dlp_error *err);

/* The same trees as a src/pred trainer (dlp_pred_train_fn signature, see
 * src/pred/pred_train.h): trains on tr only (va stays out, so the
 * validation error dlp_pred_train measures on it is held out), writes
 * "xgb/schema", "xgb/offset" and one blob per target (and runtime, where
 * the layout splits them) into out, sets
 * meta->targets. src/pred's kind table lists it as kind "xgb", so
 * `dlperf train` and `dlperf eval` run it. */
#include "../pred/pred_train.h"
dlp_status dlp_tree_pred_train(const dlp_examples *E, const int32_t *tr,
                               int ntr, const int32_t *va, int nva,
                               const dlp_train_opts *o, dlp_pred_meta *meta,
                               dlp_nn_file *out, dlp_error *err);

#endif /* DLP_TREE_H */
