/* eval_kernels.c — the featurizer's eager kernel count (feat_kern.c)
 * against the kernels PyTorch launched: one comparison per eager trace
 * configuration of the dataset (kernels.csv.zst, rep 0, whole GPU, status
 * ok), with the count of the schema-8 rule (kernel-launching nodes:
 * dlp_feat_graph.n_kernels) beside it. `dlperf dataset kernels` prints it. */
#include "eval.h"

#include "../feat/feat.h"
#include "../model/model.h"

#include <stdlib.h>
#include <string.h>

/* whether kernel rows a and b belong to the same trace */
static bool same_trace(const dlp_kernel_row *a, const dlp_kernel_row *b) {
    return a->c.rep == b->c.rep && a->sms == b->sms &&
           !strcmp(a->c.status, b->c.status) && !strcmp(a->mode, b->mode) &&
           !strcmp(a->c.batch_id, b->c.batch_id) && !strcmp(a->c.hash, b->c.hash) &&
           !strcmp(a->c.device, b->c.device) && !strcmp(a->precision, b->precision) &&
           a->batch == b->batch && a->seq == b->seq && a->height == b->height &&
           a->width == b->width;
}

/* the same configuration measured in another batch (kept once) */
static bool same_config(const dlp_kcount *a, const dlp_kernel_row *b) {
    return !strcmp(a->hash, b->c.hash) && !strcmp(a->device, b->c.device) &&
           !strcmp(a->precision, b->precision) && a->batch == b->batch &&
           a->seq == b->seq && a->height == b->height && a->width == b->width;
}

static bool wanted(const dlp_kernel_row *k) {
    return k->c.rep == 0 && k->c.status && !strcmp(k->c.status, "ok") &&
           k->mode && !strcmp(k->mode, "eager") && k->sms == 0;
}

/* estimates of row r from the graph bytes; false when the graph fails */
static bool estimate(const void *bytes, size_t len, dlp_kcount *r,
                     dlp_error *err) {
    dlp_model *m = NULL;
    dlp_status st = dlp_feat_model_at(bytes, len, r->hash, r->batch, r->seq,
                                      r->height, r->width, &m, err);
    dlp_feat_graph fg;
    if (!st) st = dlp_feat_graph_build(&fg, &m->graph, r->batch, r->seq,
                                       r->height, r->width, err);
    if (!st) {
        dlp_pred_config c;
        dlp_pred_config_init(&c);
        st = dlp_device_find(r->device, &c.device, err);
        if (!st) {
            st = dlp_precision_parse(r->precision, &c.precision, err);
            c.batch = r->batch;
            c.seq = r->seq;
            c.height = r->height;
            c.width = r->width;
        }
        if (!st) {
            dlp_feat_roofline rf;
            dlp_feat_roofline_of(&fg, &c, &rf);
            r->estimated = rf.kernels;
            /* schema 8: those nodes, and the fp16 clamps' kernels */
            double own = fg.n_eager_kernels +
                         (c.precision != DLP_PREC_FP32 ? fg.n_half_kernels : 0);
            r->node_rule = fg.n_kernels + (rf.kernels - own);
        }
        dlp_feat_graph_free(&fg);
    }
    dlp_model_free(m);
    return st == DLP_OK;
}

dlp_status dlp_eval_kernel_counts(const dlp_dataset *ds, dlp_kcount **out,
                                  size_t *n_out, size_t *n_failed,
                                  dlp_error *err) {
    *out = NULL;
    *n_out = *n_failed = 0;
    dlp_dataset_counts cnt;
    dlp_dataset_get_counts(ds, &cnt);
    dlp_kcount *r = NULL;
    size_t n = 0, cap = 0;
    for (size_t i = 0; i < cnt.kernels;) {
        const dlp_kernel_row *k = dlp_dataset_kernel(ds, i);
        size_t j = i + 1;
        while (j < cnt.kernels && same_trace(k, dlp_dataset_kernel(ds, j))) j++;
        bool dup = false;
        for (size_t q = 0; q < n && !dup; q++) dup = same_config(&r[q], k);
        if (wanted(k) && !dup) {
            if (n == cap) {
                size_t nc = cap ? 2 * cap : 64;
                dlp_kcount *t = realloc(r, nc * sizeof *t);
                if (!t) {
                    free(r);
                    return dlp_fail(err, DLP_ERR_NOMEM, "kernel counts: out of memory");
                }
                r = t;
                cap = nc;
            }
            const dlp_graph_info *gi = dlp_dataset_find_graph(ds, k->c.hash);
            r[n] = (dlp_kcount){.hash = k->c.hash, .device = k->c.device,
                                .precision = k->precision,
                                .family = gi ? gi->family : "?",
                                .model = gi ? gi->model : "?",
                                .variant = gi ? gi->variant : "?",
                                .batch = k->batch, .seq = k->seq,
                                .height = k->height, .width = k->width,
                                .measured = (int)(j - i)};
            n++;
        }
        i = j;
    }
    /* the graphs, in one pass over the packs */
    const char **hashes = malloc((n ? n : 1) * sizeof *hashes);
    void **bytes = calloc(n ? n : 1, sizeof *bytes);
    size_t *lens = calloc(n ? n : 1, sizeof *lens);
    dlp_status st = hashes && bytes && lens ? DLP_OK
                    : dlp_fail(err, DLP_ERR_NOMEM, "kernel counts: out of memory");
    for (size_t i = 0; !st && i < n; i++) hashes[i] = r[i].hash;
    if (!st) st = dlp_dataset_graphs_bytes(ds, hashes, (int)n, bytes, lens, err);
    size_t kept = 0;
    for (size_t i = 0; !st && i < n; i++) {
        dlp_error e;
        if (!bytes[i] || !estimate(bytes[i], lens[i], &r[i], &e)) ++*n_failed;
        else r[kept++] = r[i];
    }
    for (size_t i = 0; bytes && i < n; i++) free(bytes[i]);
    free(hashes); free(bytes); free(lens);
    if (st) {
        free(r);
        return st;
    }
    *out = r;
    *n_out = kept;
    return DLP_OK;
}
