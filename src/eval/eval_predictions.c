/* eval_predictions.c — the records of evaluation runs as CSV: one row per
 * (run, test record, target with a label), the prediction next to the
 * measured value. The tables of `dlperf eval` are aggregates; with the rows
 * the held-out errors can be cut any other way afterwards (signed bias per
 * family, error against batch size or device, two runs of different calls
 * compared record by record) without training again. The last column is
 * the prediction before the learned kinds' MAPE calibration factor
 * (src/pred/pred_train.c), so one run gives both errors. */
#include "eval.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* one CSV field: quoted when it holds a comma, a quote or a line break */
static void field(FILE *f, const char *s) {
    if (!strpbrk(s, ",\"\n\r")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static void num(FILE *f, double v) {
    if (isfinite(v)) fprintf(f, ",%.9g", v);
    else fputs(",", f);
}

dlp_status dlp_eval_write_predictions(const char *path, const dlp_examples *E,
                                      const dlp_eval_result *const *runs,
                                      int n_runs, dlp_error *err) {
    FILE *f = fopen(path, "w");
    if (!f) return dlp_fail(err, DLP_ERR_IO, "cannot write %s", path);
    fputs("kind,split,fold,model,family,graph,device,runtime,precision,batch,"
          "seq,height,width,target,actual,predicted,rel_err,uncalibrated\n", f);
    dlp_target ts[DLP_T_COUNT];
    int nt = dlp_mode_targets(E->mode, ts);
    for (int q = 0; q < n_runs; q++) {
        const dlp_eval_result *r = runs[q];
        for (int i = 0; i < r->n; i++) {
            const dlp_example *x = &E->ex[r->ex[i]];
            const dlp_pred_config *c = &x->cfg;
            for (int j = 0; j < nt; j++) {
                double y = x->y[ts[j]];
                double p = r->pred[(size_t)i * DLP_T_COUNT + ts[j]];
                if (!isfinite(y) || y <= 0) continue;   /* no label */
                field(f, r->kind);
                fprintf(f, ",%s,%d,", dlp_split_name(r->split), r->fold[i]);
                field(f, E->models[x->model]);
                fputc(',', f);
                field(f, E->families[x->family]);
                const char *h = E->fg_hash[x->fg];   /* "hash|binding" */
                fprintf(f, ",%.*s,", (int)strcspn(h, "|"), h);
                field(f, c->device.name ? c->device.name : "");
                fprintf(f, ",%s,%s,%lld,%lld,%lld,%lld,%s",
                        E->mode == DLP_MODE_TRAINING ? "train"
                                                     : dlp_runtime_name(c->runtime),
                        dlp_precision_name(c->precision), (long long)c->batch,
                        (long long)c->seq, (long long)c->height,
                        (long long)c->width, dlp_target_name(ts[j]));
                num(f, y);
                num(f, p);
                num(f, isfinite(p) ? (p - y) / y : NAN);
                num(f, r->raw ? r->raw[(size_t)i * DLP_T_COUNT + ts[j]] : p);
                fputc('\n', f);
            }
        }
    }
    bool bad = ferror(f) != 0;
    if (fclose(f) || bad)
        return dlp_fail(err, DLP_ERR_IO, "error writing %s", path);
    return DLP_OK;
}
