/*
 * predict.c — the public predict API: open a models/ directory as a
 * predictor set (src/pred/ kinds plus the XGBoost tree kind of src/tree/),
 * validate a prediction config against the device database, bind and
 * analyse the model, check for unbound dims and unseen ops, run the best
 * predictor per target, turn the targets into the user's figures (latency,
 * memory, energy, throughput, power with intervals), scale to an SM / MIG
 * partition and recommend a MIG profile.
 */
#include "predict/predict.h"
#include "feat/feat.h"
#include "model/model.h"
#include "tree/tree.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- predictor sets ------------------------------------------------------ */

static const dlp_pred_vtable *const EXTRA_KINDS[] = {&dlp_tree_pred_vtable,
                                                     NULL};

const dlp_pred_vtable *const *dlp_predict_extra_kinds(void) {
    return EXTRA_KINDS;
}

/* path = dir/name; true when it fits and the file exists (an optional
 * file of the models directory) */
static bool present(char *path, size_t cap, const char *dir, const char *name) {
    int w = snprintf(path, cap, "%s/%s", dir, name);
    return w >= 0 && (size_t)w < cap && access(path, F_OK) == 0;
}

/* <dir>/dlp_host_file(mode) into ps->host[mode] where the file is
 * present (ps->has_host[mode] says so): a training fit (tau_ms or
 * power_hi_w > 0) in
 * the training file and nowhere else */
static dlp_status load_host(const char *dir, dlp_host_mode mode,
                            dlp_predictor_set *ps, dlp_error *err) {
    char path[4096];
    bool training = mode == DLP_HOST_TRAINING;
    dlp_host_model *m = &ps->host[mode];
    if (!present(path, sizeof path, dir, dlp_host_file(mode))) return DLP_OK;
    dlp_status st = dlp_host_load(path, m, err);
    if (!st && training && !dlp_host_is_training(m))
        st = dlp_fail(err, DLP_ERR_FORMAT, "%s: no tau_ms or power_hi_w (not "
                      "a `dlperf host fit --mode training` file)", path);
    else if (!st && !training && dlp_host_is_training(m))
        st = dlp_fail(err, DLP_ERR_FORMAT, "%s: tau_ms or power_hi_w is a "
                      "training fit's (%s)", path,
                      dlp_host_file(DLP_HOST_TRAINING));
    ps->has_host[mode] = st == DLP_OK;
    return st;
}

/* the host correction a prediction mode takes */
static dlp_host_mode host_mode(dlp_pred_mode mode) {
    return mode == DLP_MODE_LLM        ? DLP_HOST_LLM
           : mode == DLP_MODE_TRAINING ? DLP_HOST_TRAINING
                                       : DLP_HOST_INFERENCE;
}

/* the held-out error a --host-us prediction reports (energy: its energy's):
 * the file's at the host's level (a reading of the host, not of the
 * measurement's moment, is what --host-us is) where it has one, else its
 * cross-fitted one with each label's own probe; 0: none */
static double host_err(const dlp_host_model *m, bool energy) {
    double level = energy ? m->energy_level_mape : m->level_mape;
    return level > 0 ? level : energy ? m->energy_host_mape : m->host_mape;
}

static const char *host_basis(const dlp_host_model *m, bool energy) {
    return (energy ? m->energy_level_mape : m->level_mape) > 0
               ? "heldout-host-level" : "heldout-host";
}

dlp_status dlp_predictor_open(const char *models_dir, dlp_predictor_set **out,
                              dlp_error *err) {
    if (!out) return dlp_fail(err, DLP_ERR_ARG, "dlp_predictor_open: NULL out");
    *out = NULL;
    if (!models_dir)
        return dlp_fail(err, DLP_ERR_ARG, "no models directory given");
    dlp_predictor_set *ps = calloc(1, sizeof *ps);
    if (!ps) return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    pthread_mutex_init(&ps->lock, NULL);
    pthread_cond_init(&ps->freed, NULL);
    dlp_status st = dlp_predict_set_open(models_dir, ps, err);
    /* the learned partition model, when the directory has one */
    char path[4096];
    if (!st && present(path, sizeof path, models_dir, DLP_PART_FILE)) {
        st = dlp_part_load(path, &ps->part, err);
        ps->has_part = st == DLP_OK;
    }
    /* the host-aware eager corrections (inference, LLM, training),
     * likewise */
    for (int k = 0; !st && k < DLP_HOST_N_MODES; k++)
        st = load_host(models_dir, (dlp_host_mode)k, ps, err);
    if (st) {
        dlp_predictor_close(ps);
        return st;
    }
    *out = ps;
    return DLP_OK;
}

void dlp_predictor_close(dlp_predictor_set *ps) {
    if (!ps) return;
    dlp_predict_set_close(ps);
    pthread_mutex_destroy(&ps->lock);
    pthread_cond_destroy(&ps->freed);
    free(ps);
}

int dlp_predictor_set_size(const dlp_predictor_set *ps) {
    return ps ? ps->n : 0;
}

const char *dlp_predictor_set_name(const dlp_predictor_set *ps, int i) {
    return ps && i >= 0 && i < ps->n ? ps->names[i] : NULL;
}

/* ---- configs -------------------------------------------------------------- */

void dlp_predict_config_init(dlp_predict_config *c) {
    memset(c, 0, sizeof *c);
    c->batch = -1;
}

#define MAX_BATCH 65536

static void add_reason(dlp_predict_result *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void add_reason(dlp_predict_result *r, const char *fmt, ...) {
    if (r->n_reasons >= DLP_PREDICT_MAX_REASONS) return;
    char buf[sizeof r->reasons[0]];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    for (int i = 0; i < r->n_reasons; i++)
        if (!strcmp(r->reasons[i], buf)) return;
    memcpy(r->reasons[r->n_reasons++], buf, sizeof buf);
}

/* Lists the symbolic dims of graph inputs that are still unbound. */
static dlp_status check_bound(const dlp_graph *g, dlp_error *err) {
    char list[300];
    size_t used = 0;
    int n = 0;
    list[0] = 0;
    const char *first_input = NULL;
    for (size_t i = 0; i < g->n_inputs; i++) {
        const dlp_value *v = &g->values[g->inputs[i]];
        for (int k = 0; k < v->shape.rank; k++) {
            const dlp_dim *d = &v->shape.dims[k];
            if (d->value >= 0) continue;
            const char *name = "?";
            if (d->sym >= 0 && (size_t)d->sym < g->n_syms) {
                if (g->sym_values[d->sym] >= 0) continue;
                name = g->syms[d->sym];
            }
            if (strstr(list, name) && name[0] != '?') continue;
            if (!first_input) first_input = v->name;
            int w = snprintf(list + used, sizeof list - used, "%s'%s'",
                             n ? ", " : "", name);
            if (w > 0 && (size_t)w < sizeof list - used) used += (size_t)w;
            n++;
        }
    }
    if (!n) return DLP_OK;
    return dlp_fail(err, DLP_ERR_SHAPE,
                    "unbound symbolic dimension%s %s (input '%s'): bind with "
                    "--dim NAME=VALUE%s", n > 1 ? "s" : "", list,
                    first_input ? first_input : "?",
                    strstr(list, "'batch'") ? " or --batch N" : "");
}

/* Whether some input's first dim is an unbound symbol. */
static bool batch_unbound(const dlp_graph *g) {
    for (size_t i = 0; i < g->n_inputs; i++) {
        const dlp_shape *s = &g->values[g->inputs[i]].shape;
        if (s->rank < 1 || s->dims[0].value >= 0) continue;
        int sym = dlp_graph_input_batch_sym(g, i);
        if (sym < 0 || g->sym_values[sym] < 0) return true;
    }
    return false;
}

/* Batch, sequence and input size of the bound graph. */
static void read_sizes(const dlp_model *m, int64_t *batch, int64_t *seq,
                       int64_t *h, int64_t *w) {
    const dlp_graph *g = &m->graph;
    *batch = m->batch > 0 ? m->batch : 0;
    *seq = *h = *w = 0;
    for (size_t i = 0; i < g->n_syms; i++)
        if (!strcmp(g->syms[i], "seq") && g->sym_values[i] > 0)
            *seq = g->sym_values[i];
    for (size_t i = 0; i < g->n_inputs; i++) {
        const dlp_value *v = &g->values[g->inputs[i]];
        const dlp_shape *s = &v->shape;
        if (s->rank < 1) continue;
        if (!*batch && s->dims[0].value > 0) *batch = s->dims[0].value;
        if (s->rank == 4 && dlp_dtype_is_float(v->dtype) && !*h) {
            *h = s->dims[2].value > 0 ? s->dims[2].value : 0;
            *w = s->dims[3].value > 0 ? s->dims[3].value : 0;
        }
        if (s->rank == 2 && !dlp_dtype_is_float(v->dtype) && !*seq &&
            s->dims[1].value > 0)
            *seq = s->dims[1].value;
    }
    if (!*batch) *batch = 1;
}

/* Ops of g (and subgraphs) outside the featurizer's vocabulary. Each
 * distinct "domain.op" is looked up once (seen: name -> 1). */
static void unseen_ops(const dlp_graph *g, dlp_strmap *seen, char *list,
                       size_t cap, int *n) {
    for (size_t i = 0; i < g->n_nodes; i++) {
        const dlp_node *nd = &g->nodes[i];
        char name[96];
        size_t len;
        if (!nd->domain[0]) {          /* the common case: no formatting */
            len = strlen(nd->op_type);
            if (len >= sizeof name) len = sizeof name - 1;
            memcpy(name, nd->op_type, len);
            name[len] = 0;
        } else {
            int k = snprintf(name, sizeof name, "%s.%s", nd->domain,
                             nd->op_type);
            len = k < 0 || (size_t)k >= sizeof name ? sizeof name - 1
                                                    : (size_t)k;
        }
        if (dlp_strmap_get(seen, name, len) < 0) {
            /* keys must outlive the map: the node's strings when the
             * domain is empty, else a copy in the graph's arena */
            const char *key = nd->domain[0]
                                  ? dlp_arena_strndup(g->arena, name, len)
                                  : nd->op_type;
            if (key) dlp_strmap_put(seen, key, len, 1);
            if (dlp_feat_op_index(nd->domain, nd->op_type) < 0) {
                size_t used = strlen(list);
                snprintf(list + used, cap - used, "%s%s", *n ? ", " : "",
                         name);
                (*n)++;
            }
        }
        for (int a = 0; a < nd->n_attrs; a++)
            if (nd->attrs[a].graph)
                unseen_ops(nd->attrs[a].graph, seen, list, cap, n);
    }
}

/* ---- predicting ------------------------------------------------------------ */

static void set_val(dlp_predict_value *o, const dlp_pred_value *v) {
    o->valid = v->valid;
    o->value = v->value;
    o->lo = v->lo;
    o->hi = v->hi;
    o->by = v->by;
    o->err_pct = v->err_pct;
    o->err_basis = v->err_basis;
}

static void derived(dlp_predict_value *o, double value, double lo, double hi) {
    o->valid = isfinite(value) && value > 0;
    o->value = value;
    o->lo = lo <= value ? lo : value;
    o->hi = hi >= value ? hi : value;
    o->by = "derived";
    o->err_pct = 0;
    o->err_basis = NULL;
}

static void scale_val(dlp_predict_value *o, double f) {
    o->value *= f;
    o->lo *= f;
    o->hi *= f;
}

typedef struct {
    const dlp_graph *g;
    const dlp_device *d;
    dlp_precision prec;
    dlp_runtime rt;
    double lat_full;
    double roof_full;        /* roofline ms on the whole GPU */
    const dlp_part_model *part;   /* learned model, or NULL */
} mig_ctx;

/* Latency factor of an SM partition (sms, mig NULL) or a MIG instance:
 * the learned model when the models directory has one, else roofline
 * (roof_full: the whole-GPU roofline ms, or -1 to compute it). */
static dlp_status part_factor(const dlp_part_model *part, const dlp_graph *g,
                              const dlp_device *d, dlp_precision prec,
                              dlp_runtime rt, int sms,
                              const dlp_mig_profile *mig, double roof_full,
                              double *f, dlp_error *err) {
    if (part) return dlp_part_factor(part, g, d, prec, sms, mig, f, err);
    *f = dlp_predict_partition_factor_from(g, d, prec, rt, sms, mig,
                                           roof_full);
    return DLP_OK;
}

static double lat_at(int sms, const dlp_mig_profile *p, void *user) {
    (void)sms;
    mig_ctx *c = user;
    double f = 1;
    dlp_error e;
    if (part_factor(c->part, c->g, c->d, c->prec, c->rt, 0, p, c->roof_full,
                    &f, &e))
        f = dlp_predict_partition_factor_from(c->g, c->d, c->prec, c->rt, 0,
                                              p, c->roof_full);
    return c->lat_full * f;
}

dlp_status dlp_predict(dlp_predictor_set *ps, dlp_model *m,
                       const dlp_predict_config *c, dlp_predict_result *out,
                       dlp_error *err) {
    if (!ps || !m || !c || !out)
        return dlp_fail(err, DLP_ERR_ARG, "dlp_predict: NULL argument");
    memset(out, 0, sizeof *out);
    out->host_factor = 1;
    out->host_energy_factor = 1;
    if (!c->device || !c->device[0])
        return dlp_fail(err, DLP_ERR_ARG, "no device given (e.g. --device h100)");
    dlp_device dev;
    dlp_status st = dlp_device_load(c->device, c->measured_dir, &dev, err);
    if (st) return st;
    dlp_pred_config pc;
    dlp_pred_config_init(&pc);
    pc.device = dev;
    if (c->precision && (st = dlp_precision_parse(c->precision, &pc.precision,
                                                  err)))
        return st;
    if (c->runtime && (st = dlp_runtime_parse(c->runtime, &pc.runtime, err)))
        return st;
    if (c->mode && (st = dlp_mode_parse(c->mode, &pc.mode, err))) return st;
    /* training steps run eagerly (PROTOCOL.md): the examples say so too */
    if (pc.mode == DLP_MODE_TRAINING) pc.runtime = DLP_RT_EAGER;
    if (!dlp_device_supports(&dev, dlp_precision_name(pc.precision)))
        return dlp_fail(err, DLP_ERR_UNSUPPORTED,
                        "%s has no %s support (it runs: fp32, fp16%s)",
                        dev.name, dlp_precision_name(pc.precision),
                        dlp_device_supports(&dev, "bf16") ? ", bf16" : "");
    if (c->batch != -1 && (c->batch < 1 || c->batch > MAX_BATCH))
        return dlp_fail(err, DLP_ERR_ARG,
                        "batch %lld is out of range (1..%d)",
                        (long long)c->batch, MAX_BATCH);
    if (c->sms < 0 || c->sms > dev.sm_count)
        return dlp_fail(err, DLP_ERR_ARG,
                        "--sms %d is out of range (1..%d on %s)", c->sms,
                        dev.sm_count, dev.name);
    dlp_mig_profile mig;
    bool has_mig = c->mig && c->mig[0];
    if (has_mig && c->sms)
        return dlp_fail(err, DLP_ERR_ARG,
                        "give --sms or --mig, not both");
    if (has_mig && (st = dlp_device_mig(&dev, c->mig, &mig, err))) return st;
    if (!(c->slo_ms >= 0) || !isfinite(c->slo_ms))
        return dlp_fail(err, DLP_ERR_ARG, "latency goal %g ms is not >= 0",
                        c->slo_ms);
    if (c->host_us != 0) {   /* host-aware eager (predict_host.h) */
        if (!(c->host_us >= DLP_HOST_US_MIN && c->host_us <= DLP_HOST_US_MAX))
            return dlp_fail(err, DLP_ERR_ARG, "host dispatch time %g us per "
                            "op is out of range (%g..%g)", c->host_us,
                            DLP_HOST_US_MIN, DLP_HOST_US_MAX);
        if (pc.runtime != DLP_RT_EAGER)
            return dlp_fail(err, DLP_ERR_ARG, "a host dispatch time applies "
                            "to eager runs only (--runtime eager, or "
                            "--mode training)");
        dlp_host_mode hmode = host_mode(pc.mode);
        if (!ps->has_host[hmode])
            return dlp_fail(err, DLP_ERR_NOT_FOUND, "the models directory has "
                            "no host-aware eager correction for %s (%s; "
                            "`dlperf host fit --mode %s`)",
                            dlp_mode_name(pc.mode), dlp_host_file(hmode),
                            dlp_host_mode_name(hmode));
    }
    if (c->n_dims < 0 || c->n_dims > DLP_PREDICT_MAX_DIMS)
        return dlp_fail(err, DLP_ERR_ARG, "too many dims (at most %d)",
                        DLP_PREDICT_MAX_DIMS);

    /* bind and analyse */
    if ((st = dlp_model_check_binds(m, c->batch, c->n_dims, c->dim_names,
                                    c->dim_values, err)))
        return st;
    if (c->batch != -1 && (st = dlp_model_set_batch(m, c->batch, err)))
        return st;
    for (int i = 0; i < c->n_dims; i++) {
        st = dlp_model_bind_dim(m, c->dim_names[i], c->dim_values[i], err);
        if (st == DLP_ERR_NOT_FOUND && c->skip_absent_dims) continue;
        if (st) return st;
    }
    if (c->height || c->width) {
        if (c->height < 1 || c->width < 1 || c->height > DLP_PREDICT_MAX_SIDE ||
            c->width > DLP_PREDICT_MAX_SIDE)
            return dlp_fail(err, DLP_ERR_ARG, "resolution %lldx%lld is out "
                            "of range (1..%d each)", (long long)c->height,
                            (long long)c->width, DLP_PREDICT_MAX_SIDE);
        if (dlp_feat_bind_resolution(&m->graph, c->height, c->width))
            m->analyzed = false;
        else if (!c->skip_absent_dims)
            return dlp_fail(err, DLP_ERR_NOT_FOUND, "the model has no 4-D "
                            "float input whose height and width a resolution "
                            "could set");
    }
    /* default batch 1, unless exported with one or bound by a --dim */
    if (c->batch == -1 && m->batch < 0 && batch_unbound(&m->graph) &&
        (st = dlp_model_set_batch(m, 1, err)))
        return st;
    if ((st = check_bound(&m->graph, err))) return st;
    if (!m->analyzed && (st = dlp_model_analyze(m, err))) return st;
    read_sizes(m, &pc.batch, &pc.seq, &pc.height, &pc.width);
    if (pc.batch > MAX_BATCH)
        return dlp_fail(err, DLP_ERR_ARG, "batch %lld is out of range (1..%d)",
                        (long long)pc.batch, MAX_BATCH);
    if ((st = dlp_pred_config_check(&pc, err))) return st;

    snprintf(out->device, sizeof out->device, "%s", dev.name);
    snprintf(out->precision, sizeof out->precision, "%s",
             dlp_precision_name(pc.precision));
    snprintf(out->runtime, sizeof out->runtime, "%s",
             pc.mode == DLP_MODE_TRAINING ? "eager"
                                          : dlp_runtime_name(pc.runtime));
    snprintf(out->mode, sizeof out->mode, "%s", dlp_mode_name(pc.mode));
    out->batch = pc.batch;
    out->seq = pc.seq;
    out->height = pc.height;
    out->width = pc.width;
    out->sms = has_mig ? mig.sm_count : c->sms ? c->sms : dev.sm_count;
    if (has_mig)
        snprintf(out->partition, sizeof out->partition, "%s", mig.name);
    else if (c->sms)
        snprintf(out->partition, sizeof out->partition, "sms=%d", c->sms);
    snprintf(out->scaling, sizeof out->scaling, "%s",
             !has_mig && !c->sms ? "none"
             : ps->has_part      ? "learned"
                                 : "roofline");

    /* ops the featurizer never saw */
    char ops[160] = "";
    int n_unseen = 0;
    dlp_strmap seen;
    if (!dlp_strmap_init(&seen, 64))
        return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    unseen_ops(&m->graph, &seen, ops, sizeof ops, &n_unseen);
    dlp_strmap_free(&seen);
    if (n_unseen) {
        out->ood = 1;
        add_reason(out, "op%s never seen in training: %s",
                   n_unseen > 1 ? "s" : "", ops);
    }
    if (m->graph.n_nodes == 0) {
        out->ood = 1;
        add_reason(out, "the graph has no nodes");
    }

    /* predict on the whole GPU, then scale to the partition */
    dlp_pred_result pr;
    dlp_pred_result_init(&pr);
    /* featurized once, shared by every predictor of the request */
    dlp_feat_graph fg;
    if ((st = dlp_feat_graph_build(&fg, &m->graph, pc.batch, pc.seq,
                                   pc.height, pc.width, err)))
        return st;
    if ((c->height || c->width) && fg.n_shape_conflicts) {
        /* asked for by name: an error, not a flagged number */
        st = dlp_fail(err, DLP_ERR_SHAPE, "the graph fixes its resolution "
                      "elsewhere: %d node(s) contradict %lldx%lld px (export "
                      "it at that size, or with dynamic height and width)",
                      fg.n_shape_conflicts, (long long)c->height,
                      (long long)c->width);
        dlp_feat_graph_free(&fg);
        return st;
    }
    dlp_pred_input in = {&m->graph, &pc, &fg, NULL};
    st = dlp_predict_set_run(ps, &in, &pr, err);
    /* host-aware eager: the CUDA-graph latency too, for the share of the
     * eager time the host sets (predict_host.h; a training step's share
     * comes from the step itself) */
    double graph_ms = NAN;
    if (!st && c->host_us != 0 && pc.mode != DLP_MODE_TRAINING) {
        dlp_pred_config gc = pc;
        gc.runtime = DLP_RT_GRAPH;
        dlp_pred_input gin = {&m->graph, &gc, &fg, NULL};
        dlp_pred_result gr;
        dlp_pred_result_init(&gr);
        st = dlp_predict_set_run(ps, &gin, &gr, err);
        const dlp_pred_value *gv = &gr.v[DLP_T_INF_LATENCY_MS],
                             *gt = &gr.v[DLP_T_LLM_THROUGHPUT];
        if (!st && pc.mode == DLP_MODE_LLM && gt->valid && gt->value > 0)
            graph_ms = (double)pc.batch / gt->value * 1e3;
        else if (!st && pc.mode != DLP_MODE_LLM && gv->valid)
            graph_ms = gv->value;
        else if (!st)
            st = dlp_fail(err, DLP_ERR_NOT_FOUND, "--host-us needs a CUDA-graph "
                          "%s prediction, and no predictor covers it",
                          pc.mode == DLP_MODE_LLM ? "throughput" : "latency");
    }
    dlp_feat_graph_free(&fg);
    if (st) return st;
    if (pc.runtime == DLP_RT_EAGER || pc.mode == DLP_MODE_TRAINING)
        out->host_ref_us = pr.v[dlp_mode_main_target(pc.mode)].host_ref_us;
    if (pr.ood) {
        out->ood = 1;
        add_reason(out, "%s", pr.ood_reason);
    }
    if (pr.extrapolated) {
        out->extrapolated = 1;
        add_reason(out, "no training data on %s: predicted from its device "
                   "features (extrapolated)", dev.name);
    }

    double b = (double)pc.batch;
    dlp_predict_value *L = &out->latency_ms, *M = &out->memory_mib,
                      *E = &out->energy_j, *T = &out->throughput_per_s,
                      *P = &out->power_w;
    if (pc.mode == DLP_MODE_INFERENCE) {
        set_val(L, &pr.v[DLP_T_INF_LATENCY_MS]);
        set_val(M, &pr.v[DLP_T_INF_MEMORY_MIB]);
        set_val(E, &pr.v[DLP_T_INF_ENERGY_J]);
        if (!E->valid && L->valid && pr.v[DLP_T_INF_POWER_W].valid) {
            const dlp_pred_value *pw = &pr.v[DLP_T_INF_POWER_W];
            derived(E, pw->value * L->value / 1e3, pw->lo * L->lo / 1e3,
                    pw->hi * L->hi / 1e3);
        }
    } else if (pc.mode == DLP_MODE_TRAINING) {
        set_val(L, &pr.v[DLP_T_TRAIN_STEP_MS]);
        set_val(M, &pr.v[DLP_T_TRAIN_MEMORY_MIB]);
        const dlp_pred_value *pw = &pr.v[DLP_T_TRAIN_POWER_W];
        if (L->valid && pw->valid)
            derived(E, pw->value * L->value / 1e3, pw->lo * L->lo / 1e3,
                    pw->hi * L->hi / 1e3);
    } else {
        const dlp_pred_value *tp = &pr.v[DLP_T_LLM_THROUGHPUT];
        if (tp->valid) {
            derived(L, b / tp->value * 1e3, b / tp->hi * 1e3, b / tp->lo * 1e3);
            L->by = tp->by;
        }
        set_val(M, &pr.v[DLP_T_LLM_MEMORY_MIB]);
        const dlp_pred_value *es = &pr.v[DLP_T_LLM_ENERGY_PER_SAMPLE];
        if (es->valid) {
            derived(E, es->value * b, es->lo * b, es->hi * b);
            E->by = es->by;
            E->err_pct = es->err_pct;   /* x batch: the same relative error */
            E->err_basis = es->err_basis;
        }
    }
    if (!L->valid)
        return dlp_fail(err, DLP_ERR_NOT_FOUND,
                        "no predictor in the models directory covers %s "
                        "latency for %s %s", dlp_mode_name(pc.mode),
                        dlp_runtime_name(pc.runtime),
                        dlp_precision_name(pc.precision));

    const dlp_host_model *hm = &ps->host[host_mode(pc.mode)];
    if (c->host_us != 0) {
        out->host_us = c->host_us;
        /* a training fit's power rule takes the step's predicted power */
        const dlp_pred_value *tw = &pr.v[DLP_T_TRAIN_POWER_W];
        double power = pc.mode == DLP_MODE_TRAINING && tw->valid
                           ? dlp_host_board_power(hm, tw->value, dev.tdp_w)
                           : NAN;
        if (hm->power_hi_w > 0 && !(power > 0))
            return dlp_fail(err, DLP_ERR_NOT_FOUND,
                            "--host-us: %s takes the step's predicted "
                            "power, which no predictor in the models "
                            "directory gives",
                            dlp_host_file(host_mode(pc.mode)));
        out->host_factor = dlp_host_factor(hm, c->host_us, L->value, graph_ms,
                                           power);
        scale_val(L, out->host_factor);
        /* the time it adds is spent at a waiting GPU's power; power then
         * follows from energy / latency below */
        out->host_energy_factor = dlp_host_energy_factor(hm, out->host_factor);
        if (E->valid) {
            scale_val(E, out->host_energy_factor);
            if (host_err(hm, true) > 0) {   /* llm: per sample, the same */
                E->err_pct = host_err(hm, true);
                E->err_basis = host_basis(hm, true);
            }
        }
        /* the corrected held-out error (an LLM's is its throughput's,
         * below: its latency is derived) */
        if (host_err(hm, false) > 0 && pc.mode != DLP_MODE_LLM) {
            L->err_pct = host_err(hm, false);
            L->err_basis = host_basis(hm, false);
        }
    }
    double lat_full = L->value;
    if (has_mig || c->sms) {
        double f = 1;
        if ((st = part_factor(ps->has_part ? &ps->part : NULL, &m->graph,
                              &dev, pc.precision, pc.runtime, c->sms,
                              has_mig ? &mig : NULL, -1, &f, err)))
            return st;
        scale_val(L, f);
        /* energy of the same work is kept; power follows from it */
    }
    const char *lat_by = L->by;
    derived(T, b / L->value * 1e3, b / L->hi * 1e3, b / L->lo * 1e3);
    if (pc.mode == DLP_MODE_LLM) {
        T->by = lat_by;
        T->err_pct = pr.v[DLP_T_LLM_THROUGHPUT].err_pct;
        T->err_basis = pr.v[DLP_T_LLM_THROUGHPUT].err_basis;
        if (c->host_us != 0 && host_err(hm, false) > 0) {
            T->err_pct = host_err(hm, false);
            T->err_basis = host_basis(hm, false);
        }
    }
    if (E->valid) {
        double p = E->value / L->value * 1e3;
        double rel_lo = E->lo / E->value, rel_hi = E->hi / E->value;
        /* a board does not draw much beyond its power limit: the energy
         * interval's width, capped at 1.1 x TDP */
        double cap = dev.tdp_w > 0 ? 1.1 * dev.tdp_w : INFINITY;
        derived(P, p, p * rel_lo, fmax(p, fmin(p * rel_hi, cap)));
        if (pc.mode == DLP_MODE_INFERENCE && !has_mig && !c->sms &&
            pr.v[DLP_T_INF_POWER_W].valid) {
            /* a direct power prediction gives the interval's width */
            const dlp_pred_value *pw = &pr.v[DLP_T_INF_POWER_W];
            P->lo = p * pw->lo / pw->value;
            P->hi = fmax(p, fmin(p * pw->hi / pw->value, cap));
        }
    }
    if (L->value < 1e-3) {   /* below one kernel: no real forward is */
        out->ood = 1;
        add_reason(out, "predicted latency %.3g ms is below one kernel's "
                   "duration (1 us)", L->value);
    }
    if (out->power_w.valid && out->power_w.value > dev.tdp_w * 1.5 &&
        dev.tdp_w > 0) {
        out->ood = 1;
        add_reason(out, "predicted power %.0f W exceeds the board's %.0f W",
                   out->power_w.value, dev.tdp_w);
    }

    /* MIG advice */
    out->context_mib = DLP_CUDA_CONTEXT_MIB;
    out->reserved_ratio = DLP_RESERVED_RATIO;
    if (dev.n_mig > 0 && M->valid) {
        mig_ctx mc = {&m->graph, &dev, pc.precision, pc.runtime, lat_full,
                      dlp_predict_roofline_ms(&m->graph, &dev, pc.precision,
                                              pc.runtime, 1, 1),
                      ps->has_part ? &ps->part : NULL};
        dlp_mig_profile rec;
        dlp_error e2;
        double need = M->value * DLP_RESERVED_RATIO;
        if (dlp_mig_recommend(&dev, need, DLP_CUDA_CONTEXT_MIB, c->slo_ms,
                              lat_full, lat_at, &mc, &rec, &e2) == DLP_OK) {
            snprintf(out->mig_profile, sizeof out->mig_profile, "%s",
                     rec.name);
            double lat_rec = rec.sm_count >= dev.sm_count
                                 ? lat_full : lat_at(rec.sm_count, &rec, &mc);
            snprintf(out->mig_note, sizeof out->mig_note,
                     "smallest profile holding %.0f MiB (peak x %.2f + "
                     "context %.0f)%s; %.3g ms there",
                     need + DLP_CUDA_CONTEXT_MIB, DLP_RESERVED_RATIO,
                     DLP_CUDA_CONTEXT_MIB,
                     c->slo_ms > 0 ? " and meeting the latency goal" : "",
                     lat_rec);
        } else {
            snprintf(out->mig_note, sizeof out->mig_note, "%.199s", e2.msg);
        }
    } else if (dev.n_mig == 0) {
        snprintf(out->mig_note, sizeof out->mig_note,
                 "%s does not support MIG", dev.name);
    } else {
        snprintf(out->mig_note, sizeof out->mig_note,
                 "no memory prediction: no MIG advice");
    }
    if (c->slo_ms > 0 && L->value > c->slo_ms)
        add_reason(out, "predicted latency %.3g ms misses the %.3g ms goal",
                   L->value, c->slo_ms);
    return DLP_OK;
}
