/*
 * pred_heldout.c — the held-out error table (pred_heldout.h): read with
 * every field checked, merged row by row, written whole. The file is tiny
 * (one row per mode x runtime x kind x target x split: tens of rows), so
 * lookups are a linear scan.
 */
#include "pred/pred_heldout.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NFIELDS 8
#define LINE_MAX_BYTES 1024

static bool same_key(const dlp_heldout_row *a, const dlp_heldout_row *b) {
    return a->mode == b->mode && a->runtime == b->runtime &&
           a->target == b->target && !strcmp(a->kind, b->kind) &&
           !strcmp(a->split, b->split);
}

const dlp_heldout_row *dlp_heldout_find(const dlp_heldout *h,
                                        dlp_pred_mode mode, int runtime,
                                        const char *kind, dlp_target t,
                                        const char *split) {
    for (int i = 0; h && i < h->n; i++) {
        const dlp_heldout_row *r = &h->rows[i];
        if (r->mode == mode && r->runtime == runtime && r->target == t &&
            !strcmp(r->kind, kind) && !strcmp(r->split, split))
            return r;
    }
    return NULL;
}

/* Appends r, whose source the table then owns. */
static dlp_status append(dlp_heldout *h, const dlp_heldout_row *r,
                         dlp_error *err) {
    if (h->n == h->cap) {
        int cap = h->cap ? 2 * h->cap : 64;
        dlp_heldout_row *p = realloc(h->rows, (size_t)cap * sizeof *p);
        if (!p) return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
        h->rows = p;
        h->cap = cap;
    }
    h->rows[h->n++] = *r;
    return DLP_OK;
}

dlp_status dlp_heldout_put(dlp_heldout *h, const dlp_heldout_row *r,
                           dlp_error *err) {
    dlp_heldout_row c = *r;
    c.source = strndup(r->source ? r->source : "",
                       DLP_HELDOUT_SOURCE_MAX - 1);
    if (!c.source) return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    for (int i = 0; i < h->n; i++)
        if (same_key(&h->rows[i], r)) {
            free((char *)h->rows[i].source);
            h->rows[i] = c;
            return DLP_OK;
        }
    dlp_status st = append(h, &c, err);
    if (st) free((char *)c.source);
    return st;
}

void dlp_heldout_free(dlp_heldout *h) {
    if (!h) return;
    for (int i = 0; i < h->n; i++) free((char *)h->rows[i].source);
    free(h->rows);
    h->rows = NULL;
    h->n = h->cap = 0;
}

/* A name of [a-z0-9_+.-], 1..cap-1 bytes. */
static bool name_ok(const char *s, size_t cap) {
    size_t n = strlen(s);
    if (n == 0 || n >= cap) return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') ||
              strchr("_+.-", *s)))
            return false;
    return true;
}

/* Fills r from the NFIELDS fields f of line ln, or fails naming what. */
static dlp_status parse_row(char **f, const char *path, int ln,
                            dlp_heldout_row *r, dlp_error *err) {
    memset(r, 0, sizeof *r);
    dlp_error e;
    if (dlp_mode_parse(f[0], &r->mode, &e))
        return dlp_fail(err, DLP_ERR_FORMAT, "%s:%d: unknown mode '%s'",
                        path, ln, f[0]);
    if (!strcmp(f[1], "all") || !strcmp(f[1], "-")) {
        r->runtime = DLP_HELDOUT_ALL_RT;
    } else {
        dlp_runtime rt;
        if (dlp_runtime_parse(f[1], &rt, &e))
            return dlp_fail(err, DLP_ERR_FORMAT, "%s:%d: unknown runtime "
                            "'%s' (graph, eager or all)", path, ln, f[1]);
        r->runtime = (int)rt;
    }
    if (!name_ok(f[2], sizeof r->kind))
        return dlp_fail(err, DLP_ERR_FORMAT, "%s:%d: bad kind '%s'", path, ln,
                        f[2]);
    snprintf(r->kind, sizeof r->kind, "%s", f[2]);
    int t = 0;
    while (t < DLP_T_COUNT &&
           (dlp_target_mode((dlp_target)t) != r->mode ||
            strcmp(dlp_target_column((dlp_target)t), f[3])))
        t++;
    if (t == DLP_T_COUNT)
        return dlp_fail(err, DLP_ERR_FORMAT, "%s:%d: '%s' is not a target of "
                        "mode %s", path, ln, f[3], f[0]);
    r->target = (dlp_target)t;
    if (!name_ok(f[4], sizeof r->split))
        return dlp_fail(err, DLP_ERR_FORMAT, "%s:%d: bad split '%s'", path, ln,
                        f[4]);
    snprintf(r->split, sizeof r->split, "%s", f[4]);
    char *end;
    errno = 0;
    long n = strtol(f[5], &end, 10);
    if (end == f[5] || *end || errno || n < 0 || n > 1000000000L)
        return dlp_fail(err, DLP_ERR_FORMAT, "%s:%d: bad count n '%s'", path,
                        ln, f[5]);
    r->n = (int)n;
    errno = 0;
    double v = strtod(f[6], &end);
    if (end == f[6] || *end || errno || !isfinite(v) || v < 0)
        return dlp_fail(err, DLP_ERR_FORMAT, "%s:%d: bad mape_pct '%s' (a "
                        "percentage >= 0)", path, ln, f[6]);
    r->mape_pct = v;
    if (strlen(f[7]) >= DLP_HELDOUT_SOURCE_MAX)
        return dlp_fail(err, DLP_ERR_FORMAT, "%s:%d: source longer than %d "
                        "bytes", path, ln, DLP_HELDOUT_SOURCE_MAX - 1);
    if (!(r->source = strdup(f[7])))   /* the caller owns it now */
        return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    return DLP_OK;
}

dlp_status dlp_heldout_read(const char *path, dlp_heldout *h, bool *found,
                            dlp_error *err) {
    if (!path || !h) return dlp_fail(err, DLP_ERR_ARG, "heldout read: NULL");
    dlp_heldout_free(h);
    if (found) *found = false;
    FILE *fp = fopen(path, "r");
    if (!fp) {
        if (errno == ENOENT) return DLP_OK;
        return dlp_fail(err, DLP_ERR_IO, "cannot open %s: %s", path,
                        strerror(errno));
    }
    if (found) *found = true;
    char line[LINE_MAX_BYTES];
    int ln = 0;
    bool header = false;
    dlp_status st = DLP_OK;
    bool got = true;
    while (!st) {
        st = dlp_read_line(fp, line, sizeof line, path, &ln, &got, err);
        if (st || !got) break;
        if (!line[0]) continue;
        if (!header) {
            if (strcmp(line, DLP_HELDOUT_HEADER))
                st = dlp_fail(err, DLP_ERR_FORMAT, "%s:%d: not a dlperf "
                              "held-out error table (header '%s' expected)",
                              path, ln, DLP_HELDOUT_HEADER);
            header = true;
            continue;
        }
        char *f[NFIELDS];
        int nf = 0;
        char *p = line;
        for (;;) {
            char *c = strchr(p, ',');
            if (nf < NFIELDS) f[nf] = p;
            nf++;
            if (!c) break;
            *c = 0;
            p = c + 1;
        }
        if (nf != NFIELDS) {
            st = dlp_fail(err, DLP_ERR_FORMAT, "%s:%d: %d fields, expected %d "
                          "(%s)", path, ln, nf, NFIELDS, DLP_HELDOUT_HEADER);
            break;
        }
        dlp_heldout_row r;
        if ((st = parse_row(f, path, ln, &r, err))) break;
        for (int i = 0; i < h->n && !st; i++)
            if (same_key(&h->rows[i], &r))
                st = dlp_fail(err, DLP_ERR_FORMAT, "%s:%d: a second row for "
                              "%s,%s,%s,%s,%s", path, ln, f[0], f[1], f[2],
                              f[3], f[4]);
        if (!st) st = append(h, &r, err);
        if (st) free((char *)r.source);
    }
    if (!st && ferror(fp))
        st = dlp_fail(err, DLP_ERR_IO, "error reading %s", path);
    if (!st && !header)
        st = dlp_fail(err, DLP_ERR_FORMAT, "%s: empty (header '%s' expected)",
                      path, DLP_HELDOUT_HEADER);
    fclose(fp);
    if (st) dlp_heldout_free(h);
    return st;
}

dlp_status dlp_heldout_write(const char *path, const dlp_heldout *h,
                             dlp_error *err) {
    if (!path || !h) return dlp_fail(err, DLP_ERR_ARG, "heldout write: NULL");
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp)
        return dlp_fail(err, DLP_ERR_ARG, "path too long: %s", path);
    FILE *fp = fopen(tmp, "w");
    if (!fp)
        return dlp_fail(err, DLP_ERR_IO, "cannot write %s: %s", tmp,
                        strerror(errno));
    fprintf(fp, "%s\n", DLP_HELDOUT_HEADER);
    for (int i = 0; i < h->n; i++) {
        const dlp_heldout_row *r = &h->rows[i];
        char src[DLP_HELDOUT_SOURCE_MAX];
        snprintf(src, sizeof src, "%s", r->source ? r->source : "");
        for (char *c = src; *c; c++)
            if (*c == ',') *c = ';';
            else if (*c == '\n' || *c == '\r') *c = ' ';
        fprintf(fp, "%s,%s,%s,%s,%s,%d,%.4f,%s\n", dlp_mode_name(r->mode),
                r->runtime == DLP_HELDOUT_ALL_RT
                    ? "all" : dlp_runtime_name((dlp_runtime)r->runtime),
                r->kind, dlp_target_column(r->target), r->split, r->n,
                r->mape_pct, src);
    }
    bool bad = ferror(fp) != 0;
    if (fclose(fp) != 0) bad = true;
    if (bad) {
        remove(tmp);
        return dlp_fail(err, DLP_ERR_IO, "error writing %s", tmp);
    }
    if (rename(tmp, path)) {
        int e = errno;
        remove(tmp);
        return dlp_fail(err, DLP_ERR_IO, "cannot rename %s to %s: %s", tmp,
                        path, strerror(e));
    }
    return DLP_OK;
}
