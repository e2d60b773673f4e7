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
#include <cjson/cJSON.h>

#include "data/dataset.h"

bool dlp_dataset_fresh_probes(const dlp_dataset *ds, cJSON *kind) {
    cJSON *a = cJSON_AddArrayToObject(kind, "fresh_probe");
    bool ok = a != NULL;
    dlp_batch_host h;
    for (size_t i = 0; ok && dlp_dataset_batch_host(ds, i, &h); i++) {
        if (!(h.fresh_us > 0)) continue;
        const dlp_batch_env *b = &ds->batches[i];
        cJSON *o = cJSON_CreateObject();
        ok = o && cJSON_AddItemToArray(a, o) &&
             cJSON_AddStringToObject(o, "batch", h.batch_id) &&
             cJSON_AddNumberToObject(o, "start_us", b->fresh_start_us) &&
             cJSON_AddNumberToObject(o, "end_us", b->fresh_end_us) &&
             cJSON_AddNumberToObject(o, "fresh_us", h.fresh_us) &&
             cJSON_AddNumberToObject(o, "inference_us", h.inference_us) &&
             cJSON_AddNumberToObject(o, "training_us", h.training_us);
    }
    return ok;
}
