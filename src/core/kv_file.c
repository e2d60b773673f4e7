/* kv_file.c — the small "key,value" text files beside the predictor files
 * in models/ (partition.csv, host.csv): '#' comments and blank lines
 * skipped, a first line "format,<name>" naming what the file is, then one
 * number per key. Not *.dlpm containers: the predictor set loads every
 * *.dlpm as a predictor of its targets, and a handful of numbers are best
 * read and diffed as text. */
#include "core/core.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

dlp_status dlp_kv_read(const char *path, const char *format,
                       const char *const *keys, double *vals, uint32_t *have,
                       dlp_error *err) {
    if (!path || !format || !keys || !vals || !have)
        return dlp_fail(err, DLP_ERR_ARG, "dlp_kv_read: NULL argument");
    *have = 0;
    FILE *f = fopen(path, "r");
    if (!f)
        return dlp_fail(err, DLP_ERR_IO, "cannot open %s: %s", path,
                        strerror(errno));
    char line[256];
    int ln = 0;
    bool seen_format = false, got = true;
    dlp_status st = DLP_OK;
    while (!st) {
        st = dlp_read_line(f, line, sizeof line, path, &ln, &got, err);
        if (st || !got) break;
        if (!line[0] || line[0] == '#') continue;
        char *comma = strchr(line, ',');
        if (!comma) {
            st = dlp_fail(err, DLP_ERR_FORMAT, "%s:%d: expected key,value",
                          path, ln);
            break;
        }
        *comma = 0;
        const char *key = line, *val = comma + 1;
        if (!seen_format) {
            if (strcmp(key, "format") || strcmp(val, format))
                st = dlp_fail(err, DLP_ERR_FORMAT, "%s:%d: not a %s file "
                              "(format,%s first)", path, ln, format, format);
            seen_format = true;
            continue;
        }
        char *end;
        errno = 0;
        double v = strtod(val, &end);
        if (end == val || *end || errno || !isfinite(v)) {
            st = dlp_fail(err, DLP_ERR_FORMAT, "%s:%d: bad number '%s' for %s",
                          path, ln, val, key);
            break;
        }
        for (int k = 0; k < 32 && keys[k]; k++)
            if (!strcmp(keys[k], key)) {
                vals[k] = v;
                *have |= (uint32_t)1 << k;
                break;
            }
        /* unknown keys: a later version's additions */
    }
    if (!st && ferror(f))
        st = dlp_fail(err, DLP_ERR_IO, "error reading %s", path);
    fclose(f);
    if (!st && !seen_format)
        st = dlp_fail(err, DLP_ERR_FORMAT, "%s: missing format line", path);
    return st;
}

dlp_status dlp_kv_write(const char *path, const char *comment,
                        const char *format, const char *const *keys,
                        const double *vals, dlp_error *err) {
    if (!path || !format || !keys || !vals)
        return dlp_fail(err, DLP_ERR_ARG, "dlp_kv_write: NULL argument");
    FILE *f = fopen(path, "w");
    if (!f)
        return dlp_fail(err, DLP_ERR_IO, "cannot write %s: %s", path,
                        strerror(errno));
    if (comment) fputs(comment, f);
    fprintf(f, "format,%s\n", format);
    for (int k = 0; k < 32 && keys[k]; k++)
        fprintf(f, "%s,%.17g\n", keys[k], vals[k]);
    bool bad = ferror(f) != 0;
    if (fclose(f) != 0) bad = true;
    return bad ? dlp_fail(err, DLP_ERR_IO, "error writing %s", path) : DLP_OK;
}
