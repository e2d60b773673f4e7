/*
 * model.c — the dlp_model handle: opening a model file (memory-mapped
 * read-only, so weight bytes are never paged in unless read) or a caller's
 * buffer, binding symbolic dims and the batch size, warnings, and freeing.
 * Analysis (shapes, costs) lives in analyze.c.
 */
#include "model.h"
#include "../onnx/onnx.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define DLP_MAX_BIND ((int64_t)1 << 31)

static dlp_model *model_new(void) {
    dlp_model *m = calloc(1, sizeof *m);
    if (m) m->batch = -1;
    return m;
}

static char *dup_str(const char *s, size_t n) {
    char *c = malloc(n + 1);
    if (!c) return NULL;
    memcpy(c, s, n);
    c[n] = 0;
    return c;
}

/* Reads m->bytes into m->graph; frees m on failure. */
static dlp_status model_read(dlp_model *m, dlp_model **out, dlp_error *err) {
    dlp_status st = dlp_onnx_read(m->bytes, m->len, m->dir, &m->arena,
                                  &m->graph, &m->warnings, err);
    if (st != DLP_OK) {
        dlp_model_free(m);
        return st;
    }
    *out = m;
    return DLP_OK;
}

dlp_status dlp_model_open(const char *path, dlp_model **out, dlp_error *err) {
    if (!out) return dlp_fail(err, DLP_ERR_ARG, "no output pointer given");
    *out = NULL;
    if (!path || !path[0])
        return dlp_fail(err, DLP_ERR_ARG, "no model path given");
    const void *p;
    size_t len;
    dlp_status st = dlp_file_map(path, &p, &len, err);
    if (st) return st;
    if (!len)
        return dlp_fail(err, DLP_ERR_FORMAT,
                        "not an ONNX model: '%s' is empty", path);
    dlp_model *m = model_new();
    const char *slash = strrchr(path, '/');
    if (m) {
        m->bytes = p;
        m->len = len;
        m->mapped = true;
        m->path = dup_str(path, strlen(path));
        m->dir = slash ? dup_str(path, (size_t)(slash - path) + (slash == path))
                       : dup_str(".", 1);
    }
    if (!m || !m->path || !m->dir) {
        if (m) dlp_model_free(m);
        else dlp_file_unmap(p, len);
        return dlp_fail(err, DLP_ERR_NOMEM, "out of memory opening '%s'",
                        path);
    }
    /* the reader touches only field headers and skips weight payloads:
     * no readahead, so a cold 2 GB file costs a few page reads */
    madvise((void *)p, len, MADV_RANDOM);
    return model_read(m, out, err);
}

dlp_status dlp_model_open_memory(const void *bytes, size_t len,
                                 const char *name, dlp_model **out,
                                 dlp_error *err) {
    (void)name;
    if (!out) return dlp_fail(err, DLP_ERR_ARG, "no output pointer given");
    *out = NULL;
    if (!bytes && len)
        return dlp_fail(err, DLP_ERR_ARG, "no model bytes given");
    dlp_model *m = model_new();
    if (!m) return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    m->bytes = bytes;
    m->len = len;
    return model_read(m, out, err);
}

void dlp_model_free(dlp_model *m) {
    if (!m) return;
    dlp_graph_free(&m->graph);
    dlp_arena_free(&m->arena);
    dlp_warnings_free(&m->warnings);
    if (m->mapped) dlp_file_unmap(m->bytes, m->len);
    free(m->path);
    free(m->dir);
    free(m);
}

dlp_status dlp_model_bind_dim(dlp_model *m, const char *name, int64_t value,
                              dlp_error *err) {
    if (!m || !name) return dlp_fail(err, DLP_ERR_ARG, "no model or name");
    if (value < 1 || value > DLP_MAX_BIND)
        return dlp_fail(err, DLP_ERR_ARG,
                        "dimension '%s' = %lld is out of range (1 to 2^31)",
                        name, (long long)value);
    dlp_graph *g = &m->graph;
    for (size_t i = 0; i < g->n_syms; i++)
        if (strcmp(g->syms[i], name) == 0) {
            g->sym_values[i] = value;
            m->analyzed = false;
            return DLP_OK;
        }
    /* list the symbols the model has */
    char list[400];
    size_t used = 0;
    list[0] = 0;
    for (size_t i = 0; i < g->n_syms && used < sizeof list - 1; i++) {
        int k = snprintf(list + used, sizeof list - used, "%s'%s'",
                         i ? ", " : "", g->syms[i]);
        if (k < 0) break;
        used += (size_t)k;
    }
    if (used >= sizeof list - 1) strcpy(list + sizeof list - 5, "...");
    if (g->n_syms == 0)
        return dlp_fail(err, DLP_ERR_NOT_FOUND,
                        "model has no symbolic dimension '%s' (it has none)",
                        name);
    return dlp_fail(err, DLP_ERR_NOT_FOUND,
                    "model has no symbolic dimension '%s' (it has: %s)", name,
                    list);
}

dlp_status dlp_model_check_binds(const dlp_model *m, int64_t batch, int n,
                                 const char *const *names,
                                 const int64_t *values, dlp_error *err) {
    if (!m || n < 0 || (n && (!names || !values)))
        return dlp_fail(err, DLP_ERR_ARG, "no model or bindings");
    const dlp_graph *g = &m->graph;
    for (int i = 0; i < n; i++) {
        if (!names[i]) return dlp_fail(err, DLP_ERR_ARG, "binding %d has no "
                                       "name", i);
        for (int j = 0; j < i; j++)
            if (!strcmp(names[i], names[j]) && values[i] != values[j])
                return dlp_fail(err, DLP_ERR_ARG, "dimension '%s' is bound "
                                "twice (%lld and %lld)", names[i],
                                (long long)values[j], (long long)values[i]);
        if (batch == -1 || values[i] == batch) continue;
        for (size_t k = 0; k < g->n_inputs; k++) {
            const dlp_value *v = &g->values[g->inputs[k]];
            int sym = dlp_graph_input_batch_sym(g, k);
            if (sym >= 0 && !strcmp(g->syms[sym], names[i]))
                return dlp_fail(err, DLP_ERR_ARG, "batch %lld and dimension "
                                "'%s' = %lld disagree ('%s' is the batch "
                                "dimension of input '%s')", (long long)batch,
                                names[i], (long long)values[i], names[i],
                                v->name);
        }
    }
    return DLP_OK;
}

dlp_status dlp_model_set_batch(dlp_model *m, int64_t n, dlp_error *err) {
    if (!m) return dlp_fail(err, DLP_ERR_ARG, "no model");
    if (n < 1 || n > DLP_MAX_BIND)
        return dlp_fail(err, DLP_ERR_ARG,
                        "batch size %lld is out of range (1 to 2^31)",
                        (long long)n);
    dlp_graph *g = &m->graph;
    for (size_t i = 0; i < g->n_inputs; i++) {
        dlp_value *v = &g->values[g->inputs[i]];
        if (v->shape.rank < 1) continue;
        int sym = dlp_graph_input_batch_sym(g, i);
        if (sym >= 0)
            g->sym_values[sym] = n;
        else
            v->shape.dims[0].value = n;
    }
    m->batch = n;
    m->analyzed = false;
    return DLP_OK;
}

int dlp_model_warning_count(const dlp_model *m) {
    return m ? (int)m->warnings.n : 0;
}

const char *dlp_model_warning(const dlp_model *m, int i) {
    if (!m || i < 0 || (size_t)i >= m->warnings.n) return NULL;
    return m->warnings.msgs[i];
}
