/*
 * dataset_fresh.c — "fresh_probe" of the inference statistics: for each
 * batch whose env.json carries a fresh process's host probe (taken before
 * its workers start and after they stop, run_batch.fresh_probe; since
 * p69a), the reading beside the medians of the probes its own labels
 * carry (eager inference rows, training rows), which the collector takes
 * in its loaded worker process. Their ratio is the scale between what a
 * user's tools/host_probe.py reads and what the host corrections were
 * fitted on (docs/PREDICT.md, "The moment, not the host").
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "data/dataset.h"

/* the median of the positive host_us of batch_id's eager inference rows
 * (training: its training rows); NAN: none. v: scratch of n_rows. */
static double own_median(const dlp_dataset *ds, const char *batch_id,
                         bool training, double *v) {
    size_t n = 0, rows = training ? ds->ntrn : ds->ninf;
    for (size_t i = 0; i < rows; i++) {
        const dlp_label_common *c = training ? &ds->trn[i].c : &ds->inf[i].c;
        double h = training ? ds->trn[i].host_us : ds->inf[i].host_us;
        if (!training && strcmp(ds->inf[i].runtime, "eager")) continue;
        if (h > 0 && isfinite(h) && !strcmp(c->batch_id, batch_id)) v[n++] = h;
    }
    qsort(v, n, sizeof *v, dlp_cmp_double);
    return n ? dlp_quantile_sorted(v, n, 0.5) : NAN;
}

bool dlp_dataset_fresh_probes(const dlp_dataset *ds, cJSON *kind) {
    cJSON *a = cJSON_AddArrayToObject(kind, "fresh_probe");
    size_t cap = ds->ninf > ds->ntrn ? ds->ninf : ds->ntrn;
    double *v = malloc((cap ? cap : 1) * sizeof *v);
    bool ok = a && v;
    for (size_t i = 0; ok && i < ds->nbatches; i++) {
        const dlp_batch_env *b = &ds->batches[i];
        double fresh = dlp_dataset_fresh_probe_us(ds, b->batch_id);
        if (!(fresh > 0)) continue;
        cJSON *o = cJSON_CreateObject();
        ok = o && cJSON_AddItemToArray(a, o) &&
             cJSON_AddStringToObject(o, "batch", b->batch_id) &&
             cJSON_AddNumberToObject(o, "start_us", b->fresh_start_us) &&
             cJSON_AddNumberToObject(o, "end_us", b->fresh_end_us) &&
             cJSON_AddNumberToObject(o, "fresh_us", fresh) &&
             cJSON_AddNumberToObject(o, "inference_us",
                                     own_median(ds, b->batch_id, false, v)) &&
             cJSON_AddNumberToObject(o, "training_us",
                                     own_median(ds, b->batch_id, true, v));
    }
    free(v);
    return ok;
}
