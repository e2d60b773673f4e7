/*
 * predict_mig.c — MIG advice: the smallest MIG profile of a GPU whose
 * memory holds a predicted peak plus the CUDA context and, with a latency
 * goal, whose compute share still meets it.
 *
 * Profile memory usable by a process: the named GB x 1024 MiB less 5%
 * (the MIG user guide lists e.g. A100-40GB 1g.5gb as 4.75 GB: the rest is
 * taken by the instance itself). "Smallest" orders profiles by memory, then
 * by compute slices, so 1g.20gb comes before 2g.20gb.
 */
#include "predict/predict.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

double dlp_mig_capacity_mib(const dlp_device *d, const dlp_mig_profile *p) {
    (void)d;
    return p ? p->mem_gb * 1024.0 * DLP_MIG_USABLE : 0;
}

/* Profile order: memory, then slices, then table order. */
static int smaller(const dlp_mig_profile *a, const dlp_mig_profile *b) {
    if (a->mem_gb != b->mem_gb) return a->mem_gb < b->mem_gb;
    return a->slices < b->slices;
}

dlp_status dlp_mig_recommend(const dlp_device *d, double peak_mib,
                             double context_mib, double slo_ms,
                             double latency_full_ms, dlp_latency_at_fn at,
                             void *user, dlp_mig_profile *out,
                             dlp_error *err) {
    if (!d || !out) return dlp_fail(err, DLP_ERR_ARG, "dlp_mig_recommend: NULL");
    if (!(peak_mib >= 0) || !(context_mib >= 0) || !(slo_ms >= 0) ||
        !isfinite(peak_mib) || !isfinite(slo_ms))
        return dlp_fail(err, DLP_ERR_ARG,
                        "MIG advice needs a finite memory >= 0 and SLO >= 0");
    if (d->n_mig <= 0 || !d->mig)
        return dlp_fail(err, DLP_ERR_NOT_FOUND, "%s does not support MIG",
                        d->name);
    /* order of indices by size (n_mig is small: insertion sort) */
    int order[32], n = d->n_mig < 32 ? d->n_mig : 32;
    for (int i = 0; i < n; i++) {
        int j = i;
        while (j > 0 && smaller(&d->mig[i], &d->mig[order[j - 1]])) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = i;
    }
    double need = peak_mib + context_mib;
    int mem_ok = 0;
    double best_lat = INFINITY;
    const char *best_name = NULL;
    for (int k = 0; k < n; k++) {
        const dlp_mig_profile *p = &d->mig[order[k]];
        if (dlp_mig_capacity_mib(d, p) < need) continue;
        mem_ok++;
        if (slo_ms > 0) {
            double lat;
            if (at)
                lat = at(p->sm_count, p, user);
            else
                lat = latency_full_ms * d->sm_count / (double)p->sm_count;
            if (!(lat <= slo_ms)) {
                if (lat < best_lat) {
                    best_lat = lat;
                    best_name = p->name;
                }
                continue;
            }
        }
        *out = *p;
        return DLP_OK;
    }
    if (!mem_ok)
        return dlp_fail(err, DLP_ERR_NOT_FOUND,
                        "no MIG profile of %s holds %.0f MiB (peak %.0f + "
                        "context %.0f)", d->name, need, peak_mib, context_mib);
    return dlp_fail(err, DLP_ERR_NOT_FOUND,
                    "no MIG profile of %s meets the %.3g ms goal (best: %s at "
                    "%.3g ms)", d->name, slo_ms, best_name ? best_name : "?",
                    best_lat);
}
