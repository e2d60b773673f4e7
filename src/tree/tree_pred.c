/*
 * tree_pred.c — the XGBoost tree predictor behind pred.h's vtable (kind
 * "xgb"): the layout of each mode (tree.h), the language-model feature
 * vector (architecture read from the graph, totals, batch / sequence /
 * precision / runtime, roofline estimates, device features) and its
 * analytical bases (the graph layout is tree_graph.c's), and load /
 * predict / free. Model-file payload: "xgb/schema" (i64 [schema, number of
 * features] of the file's mode), "xgb/offset" and one blob per target
 * ("xgb/<column>": XGBoost UBJSON; JSON in older files), or per target and
 * runtime where the layout splits them (llm schema 5: "xgb/<column>/eager",
 * "xgb/<column>/graph"; "xgb/offset" then [target][runtime]). Since the
 * seventy-ninth session a booster is stored as our forest instead
 * ("forest/<booster name>/trees|words|base", tree_forest.c), walked by
 * dlp_forest_eval: parsing the UBJSON into libxgboost was 57% of an LLM
 * request's instructions. Files with booster blobs still load (their
 * boosters parsed by XGBoost as before); `dlperf tree convert --forests`
 * rewrites them.
 */
#include "tree/tree.h"
#include "feat/feat.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const dlp_tree_layout LAYOUTS[] = {
    {DLP_MODE_LLM, DLP_TREE_SCHEMA, DLP_TREE_NFEAT,
     {DLP_T_LLM_THROUGHPUT, DLP_T_LLM_MEMORY_MIB, DLP_T_LLM_ENERGY_PER_SAMPLE},
     true},
    {DLP_MODE_INFERENCE, DLP_TREE_GSCHEMA, DLP_TREE_NGFEAT,
     {DLP_T_INF_LATENCY_MS, DLP_T_INF_MEMORY_MIB, DLP_T_INF_ENERGY_J}, true},
    {DLP_MODE_TRAINING, DLP_TREE_TSCHEMA, DLP_TREE_NGFEAT,
     {DLP_T_TRAIN_STEP_MS, DLP_T_TRAIN_MEMORY_MIB, DLP_T_TRAIN_POWER_W}, false},
};

void dlp_tree_booster_name(const dlp_tree_layout *L, int t, int g, char *buf,
                           size_t cap) {
    const char *col = dlp_target_column(L->targets[t]);
    if (L->by_runtime)
        snprintf(buf, cap, "xgb/%s/%s", col, dlp_runtime_name((dlp_runtime)g));
    else
        snprintf(buf, cap, "xgb/%s", col);
}

void dlp_tree_forest_prefix(const char *booster, char *buf, size_t cap) {
    snprintf(buf, cap, "forest/%s", booster);
}

const dlp_tree_layout *dlp_tree_layout_of(dlp_pred_mode mode) {
    for (size_t i = 0; i < sizeof LAYOUTS / sizeof *LAYOUTS; i++)
        if (LAYOUTS[i].mode == mode) return &LAYOUTS[i];
    return NULL;
}

static const char *const NAMES[DLP_TREE_NARCH - DLP_TREE_NBREAKDOWN] = {
    "layers", "heads", "hidden", "vocab", "intermediate", "gated",
    "log_params", "log_macs", "log_weights_mib", "log_peak_act_mib",
    "log2_batch", "log2_seq", "log2_tokens", "elem_bytes", "bf16",
    "graph_runtime", "log_compute_ms", "log_memory_ms", "log_roofline_ms",
    "log_launch_ms", "log_nodes",
    /* node counts per op category of the featurizer (log1p) */
    "log_n_conv", "log_n_matmul", "log_n_norm", "log_n_act", "log_n_elem",
    "log_n_softmax", "log_n_pool", "log_n_data", "log_n_reduce",
    "log_n_other", "nodes_per_layer", "mask_bidir", "log_scores_mib"};

const char *dlp_tree_feature_name(const dlp_tree_layout *L, int i) {
    if (!L || i < 0 || i >= L->nfeat) return NULL;
    if (L->mode != DLP_MODE_LLM) return dlp_tree_graph_feature_name(i);
    const int na = DLP_TREE_NARCH - DLP_TREE_NBREAKDOWN;
    if (i < na) return NAMES[i];
    if (i < DLP_TREE_NARCH)   /* schema 5: the graph layout's breakdown */
        return dlp_tree_breakdown_name(i - na);
    return dlp_device_feature_name(i - DLP_TREE_NARCH);
}

void dlp_tree_features(const dlp_tree_layout *L, const dlp_feat_graph *fg,
                       const dlp_pred_config *c, const dlp_llm_arch *arch,
                       float *x, double *base) {
    if (L->mode == DLP_MODE_LLM)
        dlp_tree_llm_features(fg, c, arch, x, base);
    else
        dlp_tree_graph_features(fg, c, x, base);
}

static float lg10(double x) { return (float)log10(x > 0 ? x : 0) ; }
static float lgp(double x) { return (float)log10(1 + (x > 0 ? x : 0)); }
static float lg2p(double x) { return (float)log2(1 + (x > 0 ? x : 0)); }

void dlp_tree_llm_features(const dlp_feat_graph *fg,
                           const dlp_pred_config *c, const dlp_llm_arch *arch,
                           float *x, double *base) {
    dlp_llm_arch a;
    if (!arch) {
        dlp_llm_arch_from_feat(fg, &a);
        arch = &a;
    }
    dlp_feat_roofline r;
    dlp_feat_roofline_of(fg, c, &r);
    double tokens = (double)c->batch * (double)(c->seq > 0 ? c->seq : 1);
    double elem_bytes = c->precision == DLP_PREC_FP32 ? 4 : 2;
    int k = 0;
    x[k++] = (float)arch->layers;
    x[k++] = (float)arch->heads;
    x[k++] = (float)arch->hidden;
    x[k++] = (float)arch->vocab;
    x[k++] = (float)arch->intermediate;
    x[k++] = (float)arch->gated;
    x[k++] = lgp(fg->params);
    x[k++] = lgp(fg->macs);
    x[k++] = lgp(r.weights_mib);
    x[k++] = lgp(r.peak_act_mib);
    x[k++] = lg2p((double)c->batch);
    x[k++] = lg2p((double)c->seq);
    x[k++] = lg2p(tokens);
    x[k++] = (float)elem_bytes;
    x[k++] = c->precision == DLP_PREC_BF16 ? 1.f : 0.f;
    x[k++] = c->runtime == DLP_RT_GRAPH ? 1.f : 0.f;
    x[k++] = lg10(r.compute_ms + 1e-6);
    x[k++] = lg10(r.memory_ms + 1e-6);
    x[k++] = lg10(r.roofline_ms + 1e-6);
    x[k++] = lg10(r.launch_ms + 1e-6);
    x[k++] = lgp(fg->n_nodes);
    /* the graph's make-up: eager and graph-replay time follow the number of
     * kernels of each kind, and families differ in it (T5's decomposed
     * RMSNorm, DeBERTa's relative attention) */
    for (int i = 0; i < DLP_FEAT_NCAT; i++) x[k++] = lgp((double)fg->cat[i]);
    x[k++] = arch->layers > 0 ? (float)fg->n_nodes / (float)arch->layers : 0.f;
    /* how attention runs (schema 4): a bidirectional padding mask (BERT,
     * RoBERTa, DistilBERT) is dropped in eager mode, where SDPA runs fused,
     * but built under CUDA-graph capture, where attention then runs with
     * its [B, heads, S, S] scores materialised (DLP_MEM_GRAPH_BIDIR_SCORE_BYTES):
     * measured graph / eager latency is 1.29-1.37 (median) for those three
     * at S > 128 against 0.53-0.77 for the causal decoders. The size of
     * the largest attention's scores lets the trees scale that penalty. */
    x[k++] = fg->mask_bidir ? 1.f : 0.f;
    x[k++] = lgp(fg->max_scores_elems * elem_bytes / 1048576.0);
    /* schema 5: where the time goes, per op category (the graph layout's
     * breakdown): the forests see attention, projections and the
     * memory-bound remainder apart, not only their sum */
    k += dlp_tree_breakdown_features(&r, x + k);
    double dev[DLP_DEVICE_NFEATURES];
    dlp_device_features(&c->device, c->has_mig ? &c->mig : NULL, dev,
                        DLP_DEVICE_NFEATURES);
    for (int i = 0; i < DLP_DEVICE_NFEATURES; i++) x[k++] = (float)dev[i];
    /* bases (schema 3), as the graph layout's (tree_graph.c): a replayed
     * graph's latency is at least each kernel's floor (launch latency or
     * roofline, dlp_feat_roofline.kernel_ms), eager adds a launch per node
     * to the roofline; memory is the liveness estimate of docs/COST.md.
     * Schema 2 used roofline + launches (a quarter of them for a graph) and
     * weights + peak activations: on the tenth session's data (5-fold
     * leave-models-out, 1,714 configurations) throughput 33.87% -> 31.01%,
     * memory 12.69% -> 6.16%, energy per sample 32.87% -> 30.26% MAPE. */
    double lat_ms, mem;
    dlp_tree_base_latency_memory(fg, c, &r, &lat_ms, &mem);
    double b = (double)(c->batch > 0 ? c->batch : 1);
    base[0] = b / lat_ms * 1e3;                            /* samples/s */
    base[1] = mem;                                         /* MiB */
    base[2] = (c->device.tdp_w > 0 ? c->device.tdp_w : 300) * lat_ms / 1e3 / b;
}

/* ---- the vtable ------------------------------------------------------------ */

typedef struct {
    const dlp_tree_layout *L;
    /* per target and booster group (dlp_tree_groups); with several
     * groups a booster is parsed when a request of its runtime first
     * needs it, from the bytes kept here (parsing is most of a load: a
     * request of one runtime would parse the other's for nothing) */
    dlp_tree *t[DLP_TREE_NT][DLP_RT_COUNT];
    /* or the booster's trees as our forest (files since the seventy-ninth
     * session): nothing to parse, its words checked when first walked */
    dlp_forest *fo[DLP_TREE_NT][DLP_RT_COUNT];
    void *bytes[DLP_TREE_NT][DLP_RT_COUNT];
    size_t nbytes[DLP_TREE_NT][DLP_RT_COUNT];
    double offset[DLP_TREE_NT][DLP_RT_COUNT];  /* added to the base
                                                  ("xgb/offset") */
    pthread_mutex_t lock;    /* XGBoost predicts into a per-booster buffer */
    dlp_optime *ot;          /* operator times (NULL: files before them) */
    dlp_convws *ws;          /* the training step's workspace model (NULL:
                                files before it, other modes) */
} tree_impl;

static void tree_free(dlp_predictor *p) {
    tree_impl *im = p->impl;
    if (!im) return;
    for (int i = 0; i < DLP_TREE_NT; i++)
        for (int g = 0; g < DLP_RT_COUNT; g++) {
            dlp_tree_free(im->t[i][g]);
            dlp_forest_free(im->fo[i][g]);
            free(im->bytes[i][g]);
        }
    dlp_optime_free(im->ot);
    dlp_convws_free(im->ws);
    pthread_mutex_destroy(&im->lock);
    free(im);
    p->impl = NULL;
}

static dlp_status tree_load(dlp_predictor *p, const dlp_nn_file *f,
                            dlp_error *err) {
    const dlp_tree_layout *L = dlp_tree_layout_of(p->meta.mode);
    if (!L)
        return dlp_fail(err, DLP_ERR_FORMAT, "xgb predictor file is for mode "
                        "%s, which the trees do not predict",
                        dlp_mode_name(p->meta.mode));
    const dlp_nn_entry *e = dlp_nn_file_get(f, "xgb/schema", DLP_NN_I64);
    if (!e || e->count != 2)
        return dlp_fail(err, DLP_ERR_FORMAT, "xgb predictor file: no "
                        "'xgb/schema' entry");
    const int64_t *v = e->data;
    if (v[0] != L->schema || v[1] != L->nfeat)
        return dlp_fail(err, DLP_ERR_UNSUPPORTED,
                        "xgb %s predictor has tree schema %lld with %lld "
                        "features; this build has %d with %d: retrain it",
                        dlp_mode_name(L->mode), (long long)v[0],
                        (long long)v[1], L->schema, L->nfeat);
    tree_impl *im = calloc(1, sizeof *im);
    if (!im) return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    pthread_mutex_init(&im->lock, NULL);
    im->L = L;
    p->impl = im;
    const int G = dlp_tree_groups(L);
    const dlp_nn_entry *oe = dlp_nn_file_get(f, "xgb/offset", DLP_NN_F32);
    if (oe && oe->count == (size_t)(DLP_TREE_NT * G))   /* [target][group] */
        for (int i = 0; i < DLP_TREE_NT * G; i++) {
            double v = ((const nn_real *)oe->data)[i];
            if (!isfinite(v) || v < 0 || v > 1e7) {
                tree_free(p);
                return dlp_fail(err, DLP_ERR_FORMAT, "xgb predictor: bad "
                                "offset %g", v);
            }
            im->offset[i / G][i % G] = v;
        }
    dlp_status ost = dlp_optime_load(f, &im->ot, err);
    if (!ost) ost = dlp_convws_load(f, &im->ws, err);
    if (ost) {
        tree_free(p);
        return ost;
    }
    for (int i = 0; i < DLP_TREE_NT; i++) {
        dlp_target t = L->targets[i];
        if (!(p->meta.targets >> t & 1)) continue;
        int found = 0;
        for (int g = 0; g < G; g++) {
            char name[64], prefix[80];
            dlp_tree_booster_name(L, i, g, name, sizeof name);
            dlp_tree_forest_prefix(name, prefix, sizeof prefix);
            dlp_status st = dlp_forest_load_for(f, prefix, L->nfeat,
                                                &im->fo[i][g], err);
            if (st) {
                tree_free(p);
                return st;
            }
            if (im->fo[i][g]) {
                found++;
                continue;
            }
            /* a runtime without rows to train on has no booster */
            if (G > 1 && !dlp_pred_blob_exists(f, name)) continue;
            if (G > 1) {   /* kept, parsed when first needed (above) */
                const void *b;
                size_t n;
                st = dlp_pred_blob_get(f, name, &b, &n, err);
                if (!st && !(im->bytes[i][g] = malloc(n ? n : 1)))
                    st = dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
                if (!st) {
                    memcpy(im->bytes[i][g], b, n);
                    im->nbytes[i][g] = n;
                }
            } else {
                st = dlp_tree_load_blob(f, name, L->nfeat, &im->t[i][g], err);
            }
            if (st) {
                tree_free(p);
                return st;
            }
            found++;
        }
        if (!found) {
            tree_free(p);
            return dlp_fail(err, DLP_ERR_FORMAT, "xgb predictor file: no "
                            "booster for %s", dlp_target_column(t));
        }
    }
    return DLP_OK;
}

/* Booster `name`'s bytes parsed into *out (set even when it fails: the
 * caller frees it); a failure names the booster. */
static dlp_status load_booster(const char *name, const void *bytes, size_t n,
                               int nfeat, dlp_tree **out, dlp_error *err) {
    dlp_status st = dlp_tree_load(bytes, n, out, err);
    if (st && err) {
        char why[sizeof err->msg];
        snprintf(why, sizeof why, "%s", err->msg);
        st = dlp_fail(err, st, "booster '%s': %s", name, why);
    }
    if (!st && dlp_tree_nfeatures(*out) != nfeat)
        st = dlp_fail(err, DLP_ERR_FORMAT, "booster '%s' has %d features, "
                      "expected %d", name, dlp_tree_nfeatures(*out), nfeat);
    return st;
}

dlp_status dlp_tree_load_blob(const dlp_nn_file *f, const char *name,
                              int nfeat, dlp_tree **out, dlp_error *err) {
    const void *bytes;
    size_t n;
    dlp_status st = dlp_pred_blob_get(f, name, &bytes, &n, err);
    return st ? st : load_booster(name, bytes, n, nfeat, out, err);
}

static dlp_status tree_predict(const dlp_predictor *p, const dlp_pred_input *in,
                               dlp_pred_result *out, dlp_error *err) {
    tree_impl *im = p->impl;
    const dlp_tree_layout *L = im->L;
    const dlp_pred_config *c = in->cfg;
    dlp_feat_graph local;
    const dlp_feat_graph *fg;
    dlp_feat_graph view;   /* with the operator times it was trained on */
    float *eff;
    dlp_status st = dlp_optime_pred_feat(im->ot, in, &local, &fg, &view, &eff,
                                         out, err);
    if (st) return st;
    dlp_llm_arch a = {0};
    if (L->mode == DLP_MODE_LLM) dlp_llm_arch_from_feat(fg, &a);
    float x[DLP_TREE_NFEAT_MAX];
    double base[DLP_TREE_NT];
    dlp_feat_graph wv;   /* and the workspace model's training estimate */
    st = dlp_convws_train_view(im->ws, &view, c, &wv, err);
    if (!st) dlp_tree_features(L, &wv, c, &a, x, base);
    free(eff);
    if (st) {
        if (fg == &local) dlp_feat_graph_free(&local);
        return st;
    }
    double macs = fg->macs;
    if (fg == &local) dlp_feat_graph_free(&local);
    /* this runtime's boosters, parsed on its first request (tree_impl) */
    const int g = dlp_tree_group_of(L, c);
    pthread_mutex_lock(&im->lock);
    for (int i = 0; i < DLP_TREE_NT && !st; i++)
        if (!im->t[i][g] && im->bytes[i][g]) {
            char name[64];
            dlp_tree_booster_name(L, i, g, name, sizeof name);
            st = load_booster(name, im->bytes[i][g], im->nbytes[i][g],
                              L->nfeat, &im->t[i][g], err);
            if (st) {    /* refused now and on every later request */
                dlp_tree_free(im->t[i][g]);
                im->t[i][g] = NULL;
            } else {
                free(im->bytes[i][g]);
                im->bytes[i][g] = NULL;
            }
        }
    pthread_mutex_unlock(&im->lock);
    if (st) return st;
    /* a runtime the file had no rows of (a booster group it lacks): those
     * targets stay without a value, said first */
    for (int i = 0; i < DLP_TREE_NT; i++)
        if (!im->t[i][g] && !im->fo[i][g] &&
            (p->meta.targets >> L->targets[i] & 1))
            dlp_pred_result_flag(out, "the xgb file has no %s trees for %s",
                                 dlp_runtime_name(c->runtime),
                                 dlp_target_column(L->targets[i]));
    if (L->mode == DLP_MODE_LLM && (!a.layers || !a.hidden))
        dlp_pred_result_flag(out, "not a transformer: no %s found "
                             "(the xgb model is for language models)",
                             !a.hidden ? "embedding table" : "attention softmax");
    if (p->meta.macs_max > 0 &&
        (macs < p->meta.macs_min / 4 || macs > p->meta.macs_max * 4))
        dlp_pred_result_flag(out, "%.3g MACs outside the trained range "
                             "%.3g..%.3g", macs, p->meta.macs_min,
                             p->meta.macs_max);
    for (int i = 0; i < DLP_TREE_NT; i++) {
        float y;
        if (im->fo[i][g]) {   /* checked on its first walk, naming it */
            if ((st = dlp_forest_ready(im->fo[i][g], err))) return st;
            y = dlp_forest_eval(im->fo[i][g], x);
        } else if (im->t[i][g]) {
            pthread_mutex_lock(&im->lock);
            st = dlp_tree_predict(im->t[i][g], x, 1, L->nfeat, &y, err);
            pthread_mutex_unlock(&im->lock);
            if (st) return st;
        } else {
            continue;
        }
        dlp_pred_value *v = &out->v[L->targets[i]];
        v->valid = true;
        v->value = (base[i] + im->offset[i][g]) * exp((double)y);
        v->lo = v->hi = 0;   /* interval from the residuals in the header */
        v->by = "xgb";
    }
    return DLP_OK;
}

const dlp_pred_vtable dlp_tree_pred_vtable = {"xgb", tree_load, tree_predict,
                                              tree_free, DLP_PRED_COST_MODEL};
