/*
 * pred_heldout.h — internal to libdlperf. The held-out error table
 * (models/heldout.csv): the overall MAPE of each predictor kind per (mode,
 * runtime, target, split) as `dlperf eval --record FILE` measured it on
 * models held out of training. `dlperf predict` chooses per target by the
 * leave-models-out rows of it where they exist (src/predict/predict_set.c).
 *
 * The file: one header line, then one row per key, every field plain (no
 * quotes, no commas):
 *   mode,runtime,kind,target,split,n,mape_pct,source
 *   inference,graph,dippm+kern,latency_ms,lmo,2024,17.02,data
 * mode: inference | training | llm; runtime: graph | eager, or "all" ("-"
 * read as the same) where the evaluation did not split by runtime; kind:
 * as the model file names it (a blend "a+b" as trained); target: the
 * short column name of a target of the mode (latency_ms); split: random |
 * mc | lmo | lofo; n: test predictions; mape_pct: MAPE in percent; source:
 * free text (what was evaluated). A key appears at most once.
 */
#ifndef DLP_PRED_HELDOUT_H
#define DLP_PRED_HELDOUT_H

#include "pred.h"

#define DLP_HELDOUT_FILE "heldout.csv"
#define DLP_HELDOUT_HEADER "mode,runtime,kind,target,split,n,mape_pct,source"
#define DLP_HELDOUT_ALL_RT (-1)      /* runtime "all" */

/* A row's source (its provenance: data, schema, command) holds up to this
 * many bytes - 1; with the other fields it fits the reader's 1,024-byte
 * line (the thirty-first session wrote a 300-byte source, which the
 * former 256-byte field refused, and every prediction failed). */
#define DLP_HELDOUT_SOURCE_MAX 896

typedef struct {
    dlp_pred_mode mode;
    int runtime;                     /* dlp_runtime or DLP_HELDOUT_ALL_RT */
    char kind[DLP_PRED_KIND_MAX];
    dlp_target target;
    char split[16];
    int n;                           /* test predictions */
    double mape_pct;                 /* MAPE, percent */
    const char *source;  /* free text, no commas or newlines, shorter than
                            DLP_HELDOUT_SOURCE_MAX; a table owns its rows'
                            sources (dlp_heldout_put copies one): rows are
                            a few dozen bytes, not a 1 KB buffer each */
} dlp_heldout_row;

typedef struct {
    dlp_heldout_row *rows;
    int n, cap;
} dlp_heldout;

/* Reads path into h (emptied first). A missing file: *found = false (found
 * may be NULL) and DLP_OK with h empty; any other problem: DLP_ERR_FORMAT
 * (or _IO / _NOMEM) with a message "path:line: what". */
dlp_status dlp_heldout_read(const char *path, dlp_heldout *h, bool *found,
                            dlp_error *err);
/* Writes h to path (via path.tmp and a rename: readers see the old or the
 * new file). Commas and newlines in source are written as ';' and ' '. */
dlp_status dlp_heldout_write(const char *path, const dlp_heldout *h,
                             dlp_error *err);
/* Puts r into h: replaces the row of the same (mode, runtime, kind,
 * target, split), else appends; h keeps its own copy of r->source (NULL:
 * empty; cut at DLP_HELDOUT_SOURCE_MAX - 1 bytes). */
dlp_status dlp_heldout_put(dlp_heldout *h, const dlp_heldout_row *r,
                           dlp_error *err);
/* The row of that key, or NULL. */
const dlp_heldout_row *dlp_heldout_find(const dlp_heldout *h,
                                        dlp_pred_mode mode, int runtime,
                                        const char *kind, dlp_target t,
                                        const char *split);
void dlp_heldout_free(dlp_heldout *h);   /* NULL or empty: nothing */

#endif /* DLP_PRED_HELDOUT_H */
