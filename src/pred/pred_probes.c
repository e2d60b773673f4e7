/*
 * pred_probes.c — reading the probes' files (data/probes: one JSON object
 * per line, xz-compressed, written by tools/collect/probe_*.py): the
 * convolution workspaces' (pred_convws.c) and the operator times'
 * (pred_optime.c) training rows.
 */
#include "pred_train.h"

#include <cjson/cJSON.h>
#include <lzma.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A probe file decompresses to a few MiB; refuse more than this. */
#define PROBE_MAX_TEXT (512u << 20)

dlp_status dlp_probe_read_xz(const char *path, char **text, size_t *len,
                             dlp_error *err) {
    FILE *fp = fopen(path, "rb");
    if (!fp) return dlp_fail(err, DLP_ERR_IO, "cannot open %s", path);
    lzma_stream s = LZMA_STREAM_INIT;
    if (lzma_stream_decoder(&s, UINT64_MAX, 0) != LZMA_OK) {
        fclose(fp);
        return dlp_fail(err, DLP_ERR_NOMEM, "%s: lzma decoder", path);
    }
    size_t cap = 1 << 20, n = 0;
    char *out = malloc(cap + 1);
    uint8_t in[1 << 16];
    dlp_status st = DLP_OK;
    lzma_ret r = LZMA_OK;
    s.next_out = (uint8_t *)out;
    s.avail_out = cap;
    while (out && r == LZMA_OK) {
        if (s.avail_in == 0 && !feof(fp)) {
            s.next_in = in;
            s.avail_in = fread(in, 1, sizeof in, fp);
            if (ferror(fp)) { st = dlp_fail(err, DLP_ERR_IO, "%s: read error", path); break; }
        }
        r = lzma_code(&s, feof(fp) && s.avail_in == 0 ? LZMA_FINISH : LZMA_RUN);
        n = cap - s.avail_out;
        if (r == LZMA_OK && s.avail_out == 0) {
            if (cap >= PROBE_MAX_TEXT) {
                st = dlp_fail(err, DLP_ERR_LIMIT, "%s: more than %u MiB of text",
                              path, PROBE_MAX_TEXT >> 20);
                break;
            }
            char *p = realloc(out, 2 * cap + 1);
            if (!p) { free(out); out = NULL; break; }
            out = p;
            s.next_out = (uint8_t *)out + cap;
            s.avail_out = cap;
            cap *= 2;
        }
    }
    lzma_end(&s);
    fclose(fp);
    if (!out) return dlp_fail(err, DLP_ERR_NOMEM, "%s: out of memory", path);
    if (!st && r != LZMA_STREAM_END)
        st = dlp_fail(err, DLP_ERR_FORMAT, "%s: not a valid .xz stream (lzma "
                      "code %d)", path, (int)r);
    if (st) { free(out); return st; }
    out[n] = 0;
    *text = out;
    *len = n;
    return DLP_OK;
}

int64_t dlp_probe_int(const struct cJSON *v, int64_t lo, double hi) {
    if (!cJSON_IsNumber(v) || v->valuedouble < (double)lo || v->valuedouble > hi ||
        v->valuedouble != floor(v->valuedouble))
        return -1;
    return (int64_t)v->valuedouble;
}

dlp_status dlp_probe_records(const char *dir, const char *contains,
                             dlp_probe_record_fn fn, void *user, int *n_files,
                             dlp_error *err) {
    char **names = NULL;
    int n = 0;
    dlp_dir_filter f = {".jsonl.xz", contains, false};
    dlp_status st = dlp_dir_list(dir, &f, &names, &n, err);
    if (st == DLP_ERR_NOT_FOUND) return DLP_OK;   /* no probes */
    for (int i = 0; !st && i < n; i++) {
        char path[4096], *text = NULL;
        size_t len = 0;
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        st = dlp_probe_read_xz(path, &text, &len, err);
        int line = 0;
        for (char *p = text, *nl; !st && p && *p; p = nl ? nl + 1 : p + strlen(p)) {
            nl = strchr(p, '\n');
            if (nl) *nl = 0;
            line++;
            if (!*p) continue;
            cJSON *r = cJSON_Parse(p);
            if (!r) st = dlp_fail(err, DLP_ERR_FORMAT, "%s:%d: not JSON", path, line);
            else st = fn(r, user, err);
            cJSON_Delete(r);
        }
        free(text);
        if (n_files) (*n_files)++;
    }
    dlp_dir_list_free(names, n);
    return st;
}
