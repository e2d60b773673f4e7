/*
 * csv.c — RFC 4180 CSV records from a memory buffer, and whole-file reads.
 *
 * Grammar accepted: records end in LF or CRLF (a final record may lack it);
 * fields are separated by ','; a field starting with '"' is quoted, may hold
 * commas, newlines and '""' (one quote), and must be followed by ',' or the
 * end of the record. A '"' inside an unquoted field is an error. Fields are
 * unescaped into a scratch buffer, each NUL-terminated, so a record costs
 * one copy. Line numbers count LFs, so a quoted newline advances them.
 */
#include "data/data.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void dlp_csv_init(dlp_csv *c, const char *path, const char *buf, size_t len) {
    memset(c, 0, sizeof *c);
    c->path = path;
    c->buf = buf;
    c->len = len;
    c->line = 1;
    if (len >= 3 && (unsigned char)buf[0] == 0xEF &&
        (unsigned char)buf[1] == 0xBB && (unsigned char)buf[2] == 0xBF)
        c->pos = 3;
}

void dlp_csv_free(dlp_csv *c) {
    if (!c) return;
    free(c->scratch);
    free(c->offs);
    free(c->lens);
    c->scratch = NULL;
    c->offs = c->lens = NULL;
    c->scap = c->fcap = c->nf = 0;
}

/* Appends one byte to the scratch buffer at *used. */
static inline bool put(dlp_csv *c, size_t *used, char ch) {
    if (*used >= c->scap &&
        !dlp_grow((void **)&c->scratch, &c->scap, *used + 1, 1))
        return false;
    c->scratch[(*used)++] = ch;
    return true;
}

static bool end_field(dlp_csv *c, size_t *used, size_t start) {
    if (c->nf + 1 > c->fcap) {
        size_t cap1 = c->fcap, cap2 = c->fcap;
        if (!dlp_grow((void **)&c->offs, &cap1, c->nf + 1, sizeof *c->offs) ||
            !dlp_grow((void **)&c->lens, &cap2, c->nf + 1, sizeof *c->lens))
            return false;
        c->fcap = cap1 < cap2 ? cap1 : cap2;
    }
    c->offs[c->nf] = start;
    c->lens[c->nf] = *used - start;
    c->nf++;
    return put(c, used, '\0');
}

dlp_status dlp_csv_next(dlp_csv *c, bool *got, dlp_error *err) {
    *got = false;
    c->nf = 0;
    const size_t maxrec = c->max_record ? c->max_record : DLP_CSV_MAX_RECORD;
    /* skip blank lines */
    while (c->pos < c->len) {
        if (c->buf[c->pos] == '\n') {
            c->pos++;
            c->line++;
        } else if (c->buf[c->pos] == '\r' && c->pos + 1 < c->len &&
                   c->buf[c->pos + 1] == '\n') {
            c->pos += 2;
            c->line++;
        } else {
            break;
        }
    }
    if (c->pos >= c->len) return DLP_OK;
    c->rec_line = c->line;
    const size_t rec_start = c->pos;
    size_t used = 0;
    for (;;) {
        size_t start = used;
        if (c->pos < c->len && c->buf[c->pos] == '"') {
            int64_t qline = c->line;
            c->pos++;
            for (;;) {
                if (c->pos >= c->len)
                    return dlp_fail(err, DLP_ERR_FORMAT,
                                    "%s:%lld: unterminated quoted field",
                                    c->path, (long long)qline);
                char ch = c->buf[c->pos];
                if (ch == '"') {
                    if (c->pos + 1 < c->len && c->buf[c->pos + 1] == '"') {
                        if (!put(c, &used, '"')) goto oom;
                        c->pos += 2;
                        continue;
                    }
                    c->pos++;
                    break;
                }
                if (ch == '\0')
                    return dlp_fail(err, DLP_ERR_FORMAT,
                                    "%s:%lld: NUL byte in text",
                                    c->path, (long long)c->line);
                if (ch == '\n') c->line++;
                if (!put(c, &used, ch)) goto oom;
                c->pos++;
                if (c->pos - rec_start > maxrec) goto toolong;
            }
            if (c->pos < c->len && c->buf[c->pos] != ',' &&
                c->buf[c->pos] != '\n' &&
                !(c->buf[c->pos] == '\r' &&
                  (c->pos + 1 >= c->len || c->buf[c->pos + 1] == '\n')))
                return dlp_fail(err, DLP_ERR_FORMAT,
                                "%s:%lld: unexpected character after a "
                                "closing quote", c->path, (long long)c->line);
        } else {
            while (c->pos < c->len) {
                char ch = c->buf[c->pos];
                if (ch == ',' || ch == '\n') break;
                if (ch == '\r' &&
                    (c->pos + 1 >= c->len || c->buf[c->pos + 1] == '\n'))
                    break;
                if (ch == '"')
                    return dlp_fail(err, DLP_ERR_FORMAT,
                                    "%s:%lld: quote inside an unquoted field",
                                    c->path, (long long)c->line);
                if (ch == '\0')
                    return dlp_fail(err, DLP_ERR_FORMAT,
                                    "%s:%lld: NUL byte in text",
                                    c->path, (long long)c->line);
                if (!put(c, &used, ch)) goto oom;
                c->pos++;
                if (c->pos - rec_start > maxrec) goto toolong;
            }
        }
        if (c->nf >= DLP_CSV_MAX_FIELDS)
            return dlp_fail(err, DLP_ERR_LIMIT, "%s:%lld: more than %d fields",
                            c->path, (long long)c->rec_line,
                            DLP_CSV_MAX_FIELDS);
        if (!end_field(c, &used, start)) goto oom;
        if (c->pos >= c->len) break;
        char ch = c->buf[c->pos];
        if (ch == ',') {
            c->pos++;
            continue;
        }
        if (ch == '\r') c->pos++;
        if (c->pos < c->len && c->buf[c->pos] == '\n') {
            c->pos++;
            c->line++;
        }
        break;
    }
    *got = true;
    return DLP_OK;
oom:
    return dlp_fail(err, DLP_ERR_NOMEM, "%s:%lld: out of memory", c->path,
                    (long long)c->rec_line);
toolong:
    return dlp_fail(err, DLP_ERR_LIMIT,
                    "%s:%lld: record longer than %zu bytes", c->path,
                    (long long)c->rec_line, maxrec);
}

dlp_status dlp_csv_columns(const dlp_csv *c, const char *const *names, int n,
                           int *col, size_t *need, const char *what,
                           dlp_error *err) {
    *need = 0;
    for (int k = 0; k < n; k++) {
        col[k] = -1;
        for (size_t i = 0; i < c->nf; i++)
            if (!strcmp(dlp_csv_field(c, i), names[k])) col[k] = (int)i;
        if (col[k] < 0)
            return dlp_fail(err, DLP_ERR_FORMAT, "%s: no column '%s' (%s)",
                            c->path, names[k], what);
        if ((size_t)col[k] + 1 > *need) *need = (size_t)col[k] + 1;
    }
    return 0;
}

dlp_status dlp_read_file(const char *path, size_t max_bytes, char **out,
                         size_t *len, dlp_error *err) {
    *out = NULL;
    *len = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return dlp_fail(err, DLP_ERR_IO, "%s: %s", path, strerror(errno));
    char *buf = NULL;
    size_t cap = 0, n = 0;
    for (;;) {
        if (!dlp_grow((void **)&buf, &cap, n + 65536 + 1, 1)) {
            fclose(f);
            free(buf);
            return dlp_fail(err, DLP_ERR_NOMEM, "%s: out of memory", path);
        }
        size_t r = fread(buf + n, 1, cap - n - 1, f);
        n += r;
        if (n > max_bytes) {
            fclose(f);
            free(buf);
            return dlp_fail(err, DLP_ERR_LIMIT, "%s: larger than %zu bytes",
                            path, max_bytes);
        }
        if (r == 0) break;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        return dlp_fail(err, DLP_ERR_IO, "%s: read error", path);
    }
    buf[n] = '\0';
    *out = buf;
    *len = n;
    return DLP_OK;
}

bool dlp_csv_parse_i64(const char *v, int64_t *out) {
    if (!*v) return false;
    errno = 0;
    char *end;
    long long x = strtoll(v, &end, 10);
    if (errno || *end) return false;
    *out = x;
    return true;
}

bool dlp_csv_parse_f64(const char *v, double *out) {
    if (!*v) return false;
    if (!strcasecmp(v, "nan")) { /* Python's csv writes NaN as "nan" */
        *out = NAN;
        return true;
    }
    errno = 0;
    char *end;
    double x = strtod(v, &end);
    if (errno == ERANGE && fabs(x) > 1.0) return false;
    if (*end || !isfinite(x)) return false;
    *out = x;
    return true;
}
