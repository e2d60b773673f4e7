/*
 * dataset.c — dlp_dataset_open: loads a dataset directory (data/FORMAT.md)
 * into typed rows.
 *
 * Each CSV kind is described by a column table (name, type, offset in the
 * row struct); one generic loader maps header names to columns, so column
 * order is free and unknown columns are ignored, while a missing column, a
 * record with the wrong number of fields or a cell that is not a number is
 * an error naming the file and line. Strings are interned in the dataset's
 * arena (device names, kernel names and runtimes repeat a lot).
 */
#include "data/dataset.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#define MAX_CSV_BYTES ((size_t)2 << 30)    /* 2 GiB of text per file */
#define MAX_ENV_BYTES ((size_t)1 << 20)

/* ---- interning --------------------------------------------------------- */

static const char *intern(dlp_dataset *ds, const char *s, size_t n) {
    int i = dlp_strmap_get(&ds->strs, s, n);
    if (i >= 0) return ds->str_list[i];
    if (ds->nstr >= (size_t)INT32_MAX) return NULL;
    char *c = dlp_arena_strndup(&ds->arena, s, n);
    if (!c) return NULL;
    if (!dlp_grow((void **)&ds->str_list, &ds->cstr, ds->nstr + 1,
                  sizeof *ds->str_list))
        return NULL;
    if (!dlp_strmap_put(&ds->strs, c, n, (int)ds->nstr)) return NULL;
    ds->str_list[ds->nstr] = c;
    return ds->str_list[ds->nstr++];
}

/* ---- column tables ----------------------------------------------------- */

typedef enum {
    C_STR,      /* const char * (may be empty) */
    C_INT,      /* int64_t, required */
    C_INT_OPT,  /* int64_t, empty -> 0 */
    C_OPSET,    /* int */
    C_DBL,      /* double, empty or "nan" -> NAN */
    C_DBL_LATE, /* C_DBL in a column added to the format later: a file
                   whose header lacks it reads NAN */
    C_REP       /* int, 0 or 1 */
} coltype;

typedef struct {
    const char *name;
    coltype type;
    size_t off;
} colspec;

#define COMMON(T)                                                            \
    {"protocol", C_STR, offsetof(T, c.protocol)},                            \
    {"batch_id", C_STR, offsetof(T, c.batch_id)},                            \
    {"hash", C_STR, offsetof(T, c.hash)},                                    \
    {"device", C_STR, offsetof(T, c.device)},                                \
    {"rep", C_REP, offsetof(T, c.rep)},                                      \
    {"status", C_STR, offsetof(T, c.status)}

static const colspec INDEX_COLS[] = {
    {"hash", C_STR, offsetof(dlp_graph_info, hash)},
    {"family", C_STR, offsetof(dlp_graph_info, family)},
    {"model", C_STR, offsetof(dlp_graph_info, model)},
    {"variant", C_STR, offsetof(dlp_graph_info, variant)},
    {"source", C_STR, offsetof(dlp_graph_info, source)},
    {"exporter", C_STR, offsetof(dlp_graph_info, exporter)},
    {"opset", C_OPSET, offsetof(dlp_graph_info, opset)},
    {"nodes", C_INT, offsetof(dlp_graph_info, nodes)},
    {"file_bytes", C_INT, offsetof(dlp_graph_info, file_bytes)},
    {"params", C_INT, offsetof(dlp_graph_info, params)},
    {"pack", C_STR, offsetof(dlp_graph_info, pack)},
};

#define T dlp_inference_row
static const colspec INF_COLS[] = {
    COMMON(T),
    {"runtime", C_STR, offsetof(T, runtime)},
    {"precision", C_STR, offsetof(T, precision)},
    {"batch", C_INT, offsetof(T, batch)},
    {"seq", C_INT_OPT, offsetof(T, seq)},
    {"height", C_INT_OPT, offsetof(T, height)},
    {"width", C_INT_OPT, offsetof(T, width)},
    {"latency_ms", C_DBL, offsetof(T, latency_ms)},
    {"latency_p10_ms", C_DBL, offsetof(T, latency_p10_ms)},
    {"latency_p90_ms", C_DBL, offsetof(T, latency_p90_ms)},
    {"memory_mib", C_DBL, offsetof(T, memory_mib)},
    {"mem_reserved_mib", C_DBL, offsetof(T, mem_reserved_mib)},
    {"nvml_used_mib", C_DBL, offsetof(T, nvml_used_mib)},
    {"energy_j", C_DBL, offsetof(T, energy_j)},
    {"power_w", C_DBL, offsetof(T, power_w)},
    {"host_us", C_DBL_LATE, offsetof(T, host_us)},
};
#undef T
#define T dlp_training_row
static const colspec TRN_COLS[] = {
    COMMON(T),
    {"precision", C_STR, offsetof(T, precision)},
    {"batch", C_INT, offsetof(T, batch)},
    {"height", C_INT_OPT, offsetof(T, height)},
    {"width", C_INT_OPT, offsetof(T, width)},
    {"optimizer", C_STR, offsetof(T, optimizer)},
    {"step_ms", C_DBL, offsetof(T, step_ms)},
    {"step_p10_ms", C_DBL, offsetof(T, step_p10_ms)},
    {"step_p90_ms", C_DBL, offsetof(T, step_p90_ms)},
    {"memory_mib", C_DBL, offsetof(T, memory_mib)},
    {"mem_reserved_mib", C_DBL, offsetof(T, mem_reserved_mib)},
    {"energy_j", C_DBL, offsetof(T, energy_j)},
    {"power_w", C_DBL, offsetof(T, power_w)},
    {"host_us", C_DBL_LATE, offsetof(T, host_us)},
};
#undef T
#define T dlp_llm_row
static const colspec LLM_COLS[] = {
    COMMON(T),
    {"runtime", C_STR, offsetof(T, runtime)},
    {"precision", C_STR, offsetof(T, precision)},
    {"batch", C_INT, offsetof(T, batch)},
    {"seq", C_INT_OPT, offsetof(T, seq)},
    {"latency_ms", C_DBL, offsetof(T, latency_ms)},
    {"throughput_samples_s", C_DBL, offsetof(T, throughput_samples_s)},
    {"memory_mib", C_DBL, offsetof(T, memory_mib)},
    {"energy_per_sample_j", C_DBL, offsetof(T, energy_per_sample_j)},
    {"power_w", C_DBL, offsetof(T, power_w)},
};
#undef T
#define T dlp_kernel_row
static const colspec KER_COLS[] = {
    COMMON(T),
    {"mode", C_STR, offsetof(T, mode)},
    {"sms", C_INT_OPT, offsetof(T, sms)},
    {"precision", C_STR, offsetof(T, precision)},
    {"batch", C_INT, offsetof(T, batch)},
    {"seq", C_INT_OPT, offsetof(T, seq)},
    {"height", C_INT_OPT, offsetof(T, height)},
    {"width", C_INT_OPT, offsetof(T, width)},
    {"kernel_idx", C_INT, offsetof(T, kernel_idx)},
    {"kernel", C_STR, offsetof(T, kernel)},
    {"duration_us", C_DBL, offsetof(T, duration_us)},
    {"grid", C_STR, offsetof(T, grid)},
    {"block", C_STR, offsetof(T, block)},
    {"nodes", C_STR, offsetof(T, nodes)},
};
#undef T
#define T dlp_failure_row
static const colspec FAIL_COLS[] = {
    {"protocol", C_STR, offsetof(T, protocol)},
    {"batch_id", C_STR, offsetof(T, batch_id)},
    {"hash", C_STR, offsetof(T, hash)},
    {"model", C_STR, offsetof(T, model)},
    {"variant", C_STR, offsetof(T, variant)},
    {"device", C_STR, offsetof(T, device)},
    {"stage", C_STR, offsetof(T, stage)},
    {"reason", C_STR, offsetof(T, reason)},
};
#undef T

#define NCOLS(a) (sizeof(a) / sizeof((a)[0]))

/* Where the generic loader puts file/line for a row kind. */
typedef struct {
    const colspec *cols;
    size_t ncols;
    size_t row_size;
    size_t off_file, off_line; /* SIZE_MAX: none */
    bool label;                /* starts with dlp_label_common */
} rowkind;

/* ---- cell parsing ------------------------------------------------------ */

static dlp_status cell_error(const dlp_csv *c, const char *col, const char *v,
                             const char *what, dlp_error *err) {
    return dlp_fail(err, DLP_ERR_FORMAT, "%s:%lld: column %s: '%.40s' is %s",
                    c->path, (long long)c->rec_line, col, v, what);
}

static dlp_status fill_row(dlp_dataset *ds, const dlp_csv *c,
                           const rowkind *k, const size_t *colidx,
                           unsigned char *row, dlp_error *err) {
    for (size_t j = 0; j < k->ncols; j++) {
        const colspec *cs = &k->cols[j];
        size_t fi = colidx[j];
        void *dst = row + cs->off;
        if (fi == SIZE_MAX) {   /* a C_DBL_LATE column the file lacks */
            double x = NAN;
            memcpy(dst, &x, sizeof x);
            continue;
        }
        const char *v = dlp_csv_field(c, fi);
        size_t vl = c->lens[fi];
        switch (cs->type) {
        case C_STR: {
            const char *s = intern(ds, v, vl);
            if (!s) return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
            memcpy(dst, &s, sizeof s);
            break;
        }
        case C_INT:
        case C_INT_OPT: {
            int64_t x = 0;
            if (vl == 0 && cs->type == C_INT)
                return cell_error(c, cs->name, v, "empty (required)", err);
            if (vl && !dlp_csv_parse_i64(v, &x))
                return cell_error(c, cs->name, v, "not an integer", err);
            memcpy(dst, &x, sizeof x);
            break;
        }
        case C_OPSET:
        case C_REP: {
            int64_t x = 0;
            if (!dlp_csv_parse_i64(v, &x) || x < 0 || x > 1000000)
                return cell_error(c, cs->name, v,
                                  vl ? "not a valid integer" : "empty (required)",
                                  err);
            int xi = (int)x;
            memcpy(dst, &xi, sizeof xi);
            break;
        }
        case C_DBL:
        case C_DBL_LATE: {
            double x = NAN;
            if (vl && !dlp_csv_parse_f64(v, &x))
                return cell_error(c, cs->name, v, "not a number", err);
            memcpy(dst, &x, sizeof x);
            break;
        }
        }
    }
    return DLP_OK;
}

/* Parses one CSV buffer into rows appended to *rows. */
static dlp_status load_rows(dlp_dataset *ds, const char *path,
                            const char *text, size_t len, const rowkind *k,
                            void **rows, size_t *n, size_t *cap,
                            dlp_error *err) {
    dlp_csv c;
    dlp_csv_init(&c, path, text, len);
    size_t colidx[32];
    DLP_ASSERT(k->ncols <= 32);
    bool got;
    dlp_status s = dlp_csv_next(&c, &got, err);
    if (s) goto done;
    if (!got) {
        s = dlp_fail(err, DLP_ERR_FORMAT, "%s: empty file (no header)", path);
        goto done;
    }
    size_t nhead = c.nf;
    for (size_t j = 0; j < k->ncols; j++) {
        colidx[j] = SIZE_MAX;
        for (size_t i = 0; i < nhead; i++) {
            if (strcmp(dlp_csv_field(&c, i), k->cols[j].name) != 0) continue;
            if (colidx[j] != SIZE_MAX) {
                s = dlp_fail(err, DLP_ERR_FORMAT,
                             "%s:%lld: column '%s' appears twice", path,
                             (long long)c.rec_line, k->cols[j].name);
                goto done;
            }
            colidx[j] = i;
        }
        if (colidx[j] == SIZE_MAX && k->cols[j].type != C_DBL_LATE) {
            s = dlp_fail(err, DLP_ERR_FORMAT,
                         "%s:%lld: missing column '%s' in header", path,
                         (long long)c.rec_line, k->cols[j].name);
            goto done;
        }
    }
    const char *ipath = intern(ds, path, strlen(path));
    if (!ipath) {
        s = dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
        goto done;
    }
    for (;;) {
        s = dlp_csv_next(&c, &got, err);
        if (s || !got) break;
        if (c.nf != nhead) {
            s = dlp_fail(err, DLP_ERR_FORMAT,
                         "%s:%lld: %zu fields, the header has %zu", path,
                         (long long)c.rec_line, c.nf, nhead);
            break;
        }
        if (!dlp_grow(rows, cap, *n + 1, k->row_size)) {
            s = dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
            break;
        }
        unsigned char *row = (unsigned char *)*rows + *n * k->row_size;
        memset(row, 0, k->row_size);
        s = fill_row(ds, &c, k, colidx, row, err);
        if (s) break;
        if (k->off_file != SIZE_MAX) {
            memcpy(row + k->off_file, &ipath, sizeof ipath);
            int64_t line = c.rec_line;
            memcpy(row + k->off_line, &line, sizeof line);
        }
        if (k->label) {
            dlp_label_common *lc = (dlp_label_common *)row;
            lc->flagged = strcmp(lc->status, "flagged") == 0;
        }
        (*n)++;
    }
done:
    dlp_csv_free(&c);
    return s;
}

static dlp_status load_file(dlp_dataset *ds, const char *path, bool zst,
                            const rowkind *k, void **rows, size_t *n,
                            size_t *cap, dlp_error *err) {
    char *text;
    size_t len;
    dlp_status s = zst ? dlp_zst_read_file(path, MAX_CSV_BYTES, &text, &len, err)
                       : dlp_read_file(path, MAX_CSV_BYTES, &text, &len, err);
    if (s) return s;
    s = load_rows(ds, path, text, len, k, rows, n, cap, err);
    free(text);
    return s;
}

/* ---- directory walking ------------------------------------------------- */

static bool is_file(const char *p) {
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static bool is_dir(const char *p) {
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static char *join(dlp_dataset *ds, const char *a, const char *b,
                  const char *c) {
    size_t n = strlen(a) + strlen(b) + (c ? strlen(c) + 1 : 0) + 2;
    char *p = dlp_arena_alloc(&ds->arena, n);
    if (!p) return NULL;
    if (c)
        snprintf(p, n, "%s/%s/%s", a, b, c);
    else
        snprintf(p, n, "%s/%s", a, b);
    return p;
}

static dlp_status load_env(dlp_dataset *ds, dlp_batch_env *b, const char *path,
                           dlp_error *err) {
    char *text;
    size_t len;
    dlp_status s = dlp_read_file(path, MAX_ENV_BYTES, &text, &len, err);
    if (s) return s;
    cJSON *j = cJSON_ParseWithLength(text, len);
    free(text);
    if (!j || !cJSON_IsObject(j)) {
        cJSON_Delete(j);
        return dlp_fail(err, DLP_ERR_FORMAT, "%s: not a JSON object", path);
    }
    b->path = path;
    const cJSON *dev = cJSON_GetObjectItemCaseSensitive(j, "device");
    const cJSON *mem = cJSON_GetObjectItemCaseSensitive(j, "memory_mib");
    if (dev && !cJSON_IsString(dev)) s = DLP_ERR_FORMAT;
    if (mem && !cJSON_IsNumber(mem)) s = DLP_ERR_FORMAT;
    if (s) {
        cJSON_Delete(j);
        return dlp_fail(err, s, "%s: 'device' must be a string and "
                        "'memory_mib' a number", path);
    }
    if (dev) {
        b->device = intern(ds, dev->valuestring, strlen(dev->valuestring));
        if (!b->device) s = dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    }
    if (mem) b->memory_mib = mem->valuedouble;
    /* the fresh process's probes: a positive number, or null (failed) */
    static const char *const fresh[2] = {"host_probe_start_us",
                                         "host_probe_end_us"};
    double *at[2] = {&b->fresh_start_us, &b->fresh_end_us};
    for (int k = 0; !s && k < 2; k++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, fresh[k]);
        *at[k] = NAN;
        if (v && cJSON_IsNumber(v) && v->valuedouble > 0 &&
            isfinite(v->valuedouble))
            *at[k] = v->valuedouble;
        else if (v && !cJSON_IsNull(v))
            s = dlp_fail(err, DLP_ERR_FORMAT, "%s: '%s' must be a positive "
                         "number or null", path, fresh[k]);
    }
    cJSON_Delete(j);
    return s;
}

static const rowkind K_INDEX = {INDEX_COLS, NCOLS(INDEX_COLS),
                                sizeof(dlp_graph_info), SIZE_MAX, SIZE_MAX,
                                false};
#define LABEL_KIND(cols, T)                                                  \
    {cols, NCOLS(cols), sizeof(T), offsetof(T, c.file), offsetof(T, c.line), \
     true}
static const rowkind K_INF = LABEL_KIND(INF_COLS, dlp_inference_row);
static const rowkind K_TRN = LABEL_KIND(TRN_COLS, dlp_training_row);
static const rowkind K_LLM = LABEL_KIND(LLM_COLS, dlp_llm_row);
static const rowkind K_KER = LABEL_KIND(KER_COLS, dlp_kernel_row);
static const rowkind K_FAIL = {FAIL_COLS, NCOLS(FAIL_COLS),
                               sizeof(dlp_failure_row),
                               offsetof(dlp_failure_row, file),
                               offsetof(dlp_failure_row, line), false};

/* Training steps measured, in the same worker, right after CUDA-graph
 * inference of their model (tools/collect/measure.py until the
 * forty-second session): the capture's side stream left its cuBLAS
 * workspaces allocated, and the step's peak counted them. Three such
 * configurations measured again alone (tools/collect/probe_train.py,
 * docs/COST.md "Peak memory (training)") were 64.6-66.0 MiB lower; over
 * the dataset, such rows sat a median 54 MiB above the others against the
 * same estimate. Their memory_mib is withdrawn (NAN), their step time and
 * energy stand. Batches from DLP_TRAIN_MEM_CLEAN_FROM on free the
 * workspaces before each step. */
#define DLP_TRAIN_MEM_CLEAN_FROM "20261201T12"

static void withdraw_train_memory(dlp_dataset *ds, const char *batch_id,
                                  size_t inf0, size_t trn0) {
    if (strcmp(batch_id, DLP_TRAIN_MEM_CLEAN_FROM) >= 0) return;
    for (size_t i = trn0; i < ds->ntrn; i++) {
        dlp_training_row *t = &ds->trn[i];
        for (size_t j = inf0; j < ds->ninf; j++) {
            const dlp_inference_row *r = &ds->inf[j];
            /* strings are interned: equal text, equal pointer */
            if (r->c.hash == t->c.hash && r->c.device == t->c.device &&
                r->runtime && !strcmp(r->runtime, "graph") && r->precision &&
                !strcmp(r->precision, "fp32")) {
                if (!isnan(t->memory_mib)) ds->ntrn_mem_withdrawn++;
                t->memory_mib = NAN;
                break;
            }
        }
    }
}

/* The median of the n positive finite values among v[0..n) (moved to its
 * front, sorted); NAN when there is none. */
static double positive_median(double *v, size_t n) {
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (v[i] > 0 && isfinite(v[i])) v[m++] = v[i];
    qsort(v, m, sizeof *v, dlp_cmp_double);
    return m ? dlp_quantile_sorted(v, m, 0.5) : NAN;
}

/* b's probe medians (inf_probe_us, trn_probe_us) over the rows its files
 * added: inference from inf0, training from trn0 */
static dlp_status probe_medians(dlp_dataset *ds, dlp_batch_env *b,
                                size_t inf0, size_t trn0, dlp_error *err) {
    size_t ni = ds->ninf - inf0, nt = ds->ntrn - trn0;
    double *v = malloc((ni > nt ? ni : nt ? nt : 1) * sizeof *v);
    if (!v) return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    size_t n = 0;
    for (size_t i = inf0; i < ds->ninf; i++)
        if (!strcmp(ds->inf[i].runtime, "eager")) v[n++] = ds->inf[i].host_us;
    b->inf_probe_us = positive_median(v, n);
    for (size_t i = 0; i < nt; i++) v[i] = ds->trn[trn0 + i].host_us;
    b->trn_probe_us = positive_median(v, nt);
    free(v);
    return DLP_OK;
}

static dlp_status load_batch(dlp_dataset *ds, const char *bdir,
                             dlp_batch_env *b, dlp_error *err) {
    dlp_status s = DLP_OK;
    size_t inf0 = ds->ninf, trn0 = ds->ntrn;
    b->memory_mib = b->fresh_start_us = b->fresh_end_us = NAN;
    struct {
        const char *file;
        bool zst;
        const rowkind *k;
        void **rows;
        size_t *n, *cap;
    } files[] = {
        {"inference.csv", false, &K_INF, (void **)&ds->inf, &ds->ninf, &ds->cinf},
        {"training.csv", false, &K_TRN, (void **)&ds->trn, &ds->ntrn, &ds->ctrn},
        {"llm.csv", false, &K_LLM, (void **)&ds->llm, &ds->nllm, &ds->cllm},
        {"kernels.csv.zst", true, &K_KER, (void **)&ds->ker, &ds->nker, &ds->cker},
        {"kernels.csv", false, &K_KER, (void **)&ds->ker, &ds->nker, &ds->cker},
        {"failures.csv", false, &K_FAIL, (void **)&ds->fail, &ds->nfail, &ds->cfail},
    };
    const char *env = join(ds, bdir, "env.json", NULL);
    if (!env) return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    if (is_file(env)) {
        s = load_env(ds, b, env, err);
        if (s) return s;
    }
    for (size_t i = 0; i < NCOLS(files); i++) {
        const char *p = join(ds, bdir, files[i].file, NULL);
        if (!p) return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
        if (!is_file(p)) continue;
        s = load_file(ds, p, files[i].zst, files[i].k, files[i].rows,
                      files[i].n, files[i].cap, err);
        if (s) return s;
    }
    withdraw_train_memory(ds, b->batch_id, inf0, trn0);
    return probe_medians(ds, b, inf0, trn0, err);
}

static dlp_status load_batches(dlp_dataset *ds, dlp_error *err) {
    const char *bdir = join(ds, ds->dir, "batches", NULL);
    if (!bdir) return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    if (!is_dir(bdir)) return DLP_OK; /* no labels yet */
    char **names = NULL;
    int n = 0;
    dlp_dir_filter f = {NULL, NULL, true};
    dlp_status s = dlp_dir_list(bdir, &f, &names, &n, err);
    if (s) return s;
    for (int i = 0; !s && i < n; i++) {
        if (!dlp_grow((void **)&ds->batches, &ds->cbatches, ds->nbatches + 1,
                      sizeof *ds->batches)) {
            s = dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
            break;
        }
        dlp_batch_env *b = &ds->batches[ds->nbatches++];
        memset(b, 0, sizeof *b);
        b->batch_id = dlp_arena_strdup(&ds->arena, names[i]);
        const char *p = join(ds, bdir, names[i], NULL);
        if (!p || !b->batch_id) {
            s = dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
            break;
        }
        s = load_batch(ds, p, b, err);
    }
    dlp_dir_list_free(names, n);
    return s;
}

static dlp_status load_index(dlp_dataset *ds, dlp_error *err) {
    const char *p = join(ds, ds->dir, "graphs", "index.csv");
    if (!p) return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    if (!is_file(p))
        return dlp_fail(err, DLP_ERR_IO, "%s: no such file (not a dataset "
                        "directory?)", p);
    dlp_status s = load_file(ds, p, false, &K_INDEX, (void **)&ds->graphs,
                             &ds->ngraphs, &ds->cgraphs, err);
    if (s) return s;
    if (!dlp_strmap_init(&ds->by_hash, ds->ngraphs))
        return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    dlp_strmap packs;
    if (!dlp_strmap_init(&packs, 16))
        return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < ds->ngraphs; i++) {
        const dlp_graph_info *g = &ds->graphs[i];
        if (i > (size_t)INT32_MAX) break;
        if (dlp_strmap_get(&ds->by_hash, g->hash, strlen(g->hash)) < 0 &&
            !dlp_strmap_put(&ds->by_hash, g->hash, strlen(g->hash), (int)i)) {
            s = dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
            break;
        }
        if (g->pack[0] && dlp_strmap_get(&packs, g->pack, strlen(g->pack)) < 0) {
            if (!dlp_strmap_put(&packs, g->pack, strlen(g->pack), 1) ||
                !dlp_grow((void **)&ds->packs, &ds->cpacks, ds->npacks + 1,
                          sizeof *ds->packs)) {
                s = dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
                break;
            }
            ds->packs[ds->npacks++] = g->pack;
        }
    }
    dlp_strmap_free(&packs);
    return s;
}

dlp_status dlp_dataset_open(const char *dir, dlp_dataset **out,
                            dlp_error *err) {
    if (!out || !dir)
        return dlp_fail(err, DLP_ERR_ARG, "dlp_dataset_open: NULL argument");
    *out = NULL;
    if (!is_dir(dir))
        return dlp_fail(err, DLP_ERR_IO, "%s: not a directory", dir);
    dlp_dataset *ds = calloc(1, sizeof *ds);
    if (!ds) return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    size_t dl = strlen(dir);
    while (dl > 1 && dir[dl - 1] == '/') dl--;
    ds->dir = malloc(dl + 1);
    dlp_status s = DLP_OK;
    if (!ds->dir || !dlp_strmap_init(&ds->strs, 256)) {
        s = dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    } else {
        memcpy(ds->dir, dir, dl);
        ds->dir[dl] = '\0';
        s = load_index(ds, err);
        if (!s) s = load_batches(ds, err);
    }
    if (s) {
        dlp_dataset_free(ds);
        return s;
    }
    *out = ds;
    return DLP_OK;
}

void dlp_dataset_free(dlp_dataset *ds) {
    if (!ds) return;
    free(ds->dir);
    dlp_strmap_free(&ds->strs);
    dlp_strmap_free(&ds->by_hash);
    free(ds->str_list);
    free(ds->graphs);
    free(ds->packs);
    free(ds->batches);
    free(ds->inf);
    free(ds->trn);
    free(ds->llm);
    free(ds->ker);
    free(ds->fail);
    dlp_arena_free(&ds->arena);
    free(ds);
}

/* ---- accessors --------------------------------------------------------- */

void dlp_dataset_get_counts(const dlp_dataset *ds, dlp_dataset_counts *out) {
    memset(out, 0, sizeof *out);
    if (!ds) return;
    out->graphs = ds->ngraphs;
    out->packs = ds->npacks;
    out->batches = ds->nbatches;
    out->inference = ds->ninf;
    out->training = ds->ntrn;
    out->llm = ds->nllm;
    out->kernels = ds->nker;
    out->failures = ds->nfail;
}

const char *dlp_dataset_dir(const dlp_dataset *ds) { return ds ? ds->dir : NULL; }

int dlp_dataset_batch_host(const dlp_dataset *ds, size_t i,
                           dlp_batch_host *out) {
    if (!ds || !out || i >= ds->nbatches) return 0;
    const dlp_batch_env *b = &ds->batches[i];
    double x = b->fresh_start_us, y = b->fresh_end_us;
    *out = (dlp_batch_host){
        b->batch_id,
        x > 0 && y > 0 ? sqrt(x * y) : x > 0 ? x : y > 0 ? y : NAN,
        b->inf_probe_us, b->trn_probe_us};
    return 1;
}

double dlp_dataset_fresh_probe_us(const dlp_dataset *ds,
                                  const char *batch_id) {
    dlp_batch_host h;
    for (size_t i = 0; batch_id && dlp_dataset_batch_host(ds, i, &h); i++)
        if (!strcmp(h.batch_id, batch_id)) return h.fresh_us;
    return NAN;
}

const char *dlp_dataset_last_batch(const dlp_dataset *ds) {
    const char *last = NULL;
    for (size_t i = 0; ds && i < ds->nbatches; i++)
        if (!last || strcmp(ds->batches[i].batch_id, last) > 0)
            last = ds->batches[i].batch_id;
    return last;
}

#define ACCESSOR(fn, T, arr, n)                                              \
    const T *fn(const dlp_dataset *ds, size_t i) {                           \
        return ds && i < ds->n ? &ds->arr[i] : NULL;                         \
    }
ACCESSOR(dlp_dataset_graph, dlp_graph_info, graphs, ngraphs)
ACCESSOR(dlp_dataset_inference, dlp_inference_row, inf, ninf)
ACCESSOR(dlp_dataset_training, dlp_training_row, trn, ntrn)
ACCESSOR(dlp_dataset_llm, dlp_llm_row, llm, nllm)
ACCESSOR(dlp_dataset_kernel, dlp_kernel_row, ker, nker)
ACCESSOR(dlp_dataset_failure, dlp_failure_row, fail, nfail)

const dlp_graph_info *dlp_dataset_find_graph(const dlp_dataset *ds,
                                             const char *hash) {
    if (!ds || !hash) return NULL;
    int i = dlp_strmap_get(&ds->by_hash, hash, strlen(hash));
    return i < 0 ? NULL : &ds->graphs[i];
}
