/*
 * eval_record.c — `dlperf eval --record FILE`: one evaluation's overall
 * MAPE per (runtime, target) as rows of the held-out error table
 * (src/pred/pred_heldout.h) that `dlperf predict` chooses files by. The
 * MAPE is dlp_metrics_compute's over the records of that runtime, the same
 * number the eval's table prints for "all" families when it ran on that
 * runtime alone with the same folds.
 */
#include "eval/eval.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

dlp_status dlp_eval_metrics_runtime(const dlp_examples *E,
                                    const dlp_eval_result *r, dlp_target t,
                                    int rt, dlp_metrics *m, dlp_error *err) {
    double *y = malloc((size_t)(r->n ? r->n : 1) * sizeof *y);
    double *p = malloc((size_t)(r->n ? r->n : 1) * sizeof *p);
    if (!y || !p) {
        free(y); free(p);
        return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    }
    int k = 0;
    for (int i = 0; i < r->n; i++) {
        const dlp_example *x = &E->ex[r->ex[i]];
        if (rt != DLP_HELDOUT_ALL_RT && (int)x->cfg.runtime != rt) continue;
        y[k] = x->y[t];
        p[k] = r->pred[(size_t)i * DLP_T_COUNT + t];
        k++;
    }
    dlp_metrics_compute(y, p, k, m);
    free(y); free(p);
    return DLP_OK;
}

dlp_status dlp_eval_record(const dlp_examples *E, const dlp_eval_result *r,
                           bool all_runtimes, const char *source,
                           dlp_heldout *h, dlp_error *err) {
    dlp_target ts[DLP_T_COUNT];
    int nt = dlp_mode_targets(E->mode, ts);
    /* training ignores the runtime: its rows are "all" only */
    bool per_rt = E->mode != DLP_MODE_TRAINING;
    for (int j = 0; j < nt; j++)
        for (int rt = per_rt ? 0 : DLP_RT_COUNT; rt <= DLP_RT_COUNT; rt++) {
            bool all = rt == DLP_RT_COUNT;
            if (all && per_rt && !all_runtimes) continue;
            dlp_metrics m;
            dlp_status st = dlp_eval_metrics_runtime(
                E, r, ts[j], all ? DLP_HELDOUT_ALL_RT : rt, &m, err);
            if (st) return st;
            if (m.n == 0 || !isfinite(m.mape)) continue;
            dlp_heldout_row row;
            memset(&row, 0, sizeof row);
            row.mode = E->mode;
            row.runtime = all ? DLP_HELDOUT_ALL_RT : rt;
            snprintf(row.kind, sizeof row.kind, "%s", r->kind);
            row.target = ts[j];
            snprintf(row.split, sizeof row.split, "%s",
                     dlp_split_name(r->split));
            row.n = m.n;
            row.mape_pct = 100 * m.mape;
            row.source = source;   /* copied by the put */
            if ((st = dlp_heldout_put(h, &row, err))) return st;
        }
    return DLP_OK;
}
