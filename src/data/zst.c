/*
 * zst.c — zstd decompression for dataset files: a streaming reader (graph
 * packs are walked member by member, never held whole) and a whole-file
 * helper (kernels.csv.zst). A stream whose input ends inside a frame is
 * reported as "truncated zstd frame"; bytes that are not zstd at all give
 * zstd's own error name.
 */
#include "data/data.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

struct dlp_zst_reader {
    FILE *f;
    const char *path;
    ZSTD_DStream *ds;
    unsigned char *inbuf;
    size_t insz;
    ZSTD_inBuffer in;
    size_t last;        /* last ZSTD_decompressStream return: 0 = frame end */
    bool in_eof;        /* file exhausted */
    bool any_input;     /* saw at least one byte */
    bool done;          /* stream fully decoded */
};

dlp_status dlp_zst_open(const char *path, dlp_zst_reader **out,
                        dlp_error *err) {
    *out = NULL;
    dlp_zst_reader *r = calloc(1, sizeof *r);
    if (!r) return dlp_fail(err, DLP_ERR_NOMEM, "%s: out of memory", path);
    r->path = path;
    r->f = fopen(path, "rb");
    if (!r->f) {
        dlp_status s = dlp_fail(err, DLP_ERR_IO, "%s: %s", path,
                                strerror(errno));
        free(r);
        return s;
    }
    r->insz = ZSTD_DStreamInSize();
    r->inbuf = malloc(r->insz);
    r->ds = ZSTD_createDStream();
    if (!r->inbuf || !r->ds) {
        dlp_zst_close(r);
        return dlp_fail(err, DLP_ERR_NOMEM, "%s: out of memory", path);
    }
    ZSTD_initDStream(r->ds);
    /* Packs may be made with `zstd --long=31`: allow windows up to 2 GiB
     * (memory is only taken when a frame asks for it). */
    ZSTD_DCtx_setParameter(r->ds, ZSTD_d_windowLogMax, 31);
    r->in.src = r->inbuf;
    r->in.size = r->in.pos = 0;
    *out = r;
    return DLP_OK;
}

void dlp_zst_close(dlp_zst_reader *r) {
    if (!r) return;
    if (r->f) fclose(r->f);
    ZSTD_freeDStream(r->ds);
    free(r->inbuf);
    free(r);
}

dlp_status dlp_zst_read(dlp_zst_reader *r, void *dst, size_t n, size_t *got,
                        dlp_error *err) {
    ZSTD_outBuffer o = {dst, n, 0};
    while (o.pos < n && !r->done) {
        if (r->in.pos == r->in.size && !r->in_eof) {
            size_t k = fread(r->inbuf, 1, r->insz, r->f);
            if (k == 0) {
                if (ferror(r->f))
                    return dlp_fail(err, DLP_ERR_IO, "%s: read error",
                                    r->path);
                r->in_eof = true;
            } else {
                r->any_input = true;
            }
            r->in.size = k;
            r->in.pos = 0;
        }
        if (r->in.pos == r->in.size && r->in_eof) {
            if (!r->any_input)
                return dlp_fail(err, DLP_ERR_FORMAT, "%s: empty zstd file",
                                r->path);
            if (r->last == 0) { /* every frame ended: clean end */
                r->done = true;
                break;
            }
            /* Inside a frame with no input left: drain what the decoder
             * holds; no progress means the frame was cut short. */
            size_t before = o.pos;
            size_t ret = ZSTD_decompressStream(r->ds, &o, &r->in);
            if (ZSTD_isError(ret))
                return dlp_fail(err, DLP_ERR_FORMAT, "%s: zstd: %s", r->path,
                                ZSTD_getErrorName(ret));
            r->last = ret;
            if (o.pos > before || ret == 0) continue;
            return dlp_fail(err, DLP_ERR_FORMAT, "%s: truncated zstd frame",
                            r->path);
        }
        size_t ret = ZSTD_decompressStream(r->ds, &o, &r->in);
        if (ZSTD_isError(ret))
            return dlp_fail(err, DLP_ERR_FORMAT, "%s: zstd: %s", r->path,
                            ZSTD_getErrorName(ret));
        r->last = ret;
    }
    *got = o.pos;
    return DLP_OK;
}

dlp_status dlp_zst_read_fn(void *ctx, void *dst, size_t n, size_t *got,
                           dlp_error *err) {
    return dlp_zst_read(ctx, dst, n, got, err);
}

dlp_status dlp_zst_read_file(const char *path, size_t max_out, char **out,
                             size_t *len, dlp_error *err) {
    *out = NULL;
    *len = 0;
    dlp_zst_reader *r;
    dlp_status s = dlp_zst_open(path, &r, err);
    if (s) return s;
    char *buf = NULL;
    size_t cap = 0, n = 0;
    for (;;) {
        if (!dlp_grow((void **)&buf, &cap, n + (1u << 20) + 1, 1)) {
            s = dlp_fail(err, DLP_ERR_NOMEM, "%s: out of memory", path);
            break;
        }
        size_t want = cap - n - 1, got = 0;
        s = dlp_zst_read(r, buf + n, want, &got, err);
        if (s) break;
        n += got;
        if (n > max_out) {
            s = dlp_fail(err, DLP_ERR_LIMIT,
                         "%s: decompresses to more than %zu bytes", path,
                         max_out);
            break;
        }
        if (got < want) break;
    }
    dlp_zst_close(r);
    if (s) {
        free(buf);
        return s;
    }
    buf[n] = '\0';
    *out = buf;
    *len = n;
    return DLP_OK;
}
