/*
 * tar.c — a minimal, bounds-checked tar walker (POSIX ustar, pax 'x'/'g'
 * extended headers, GNU 'L' long names), reading from any byte stream.
 *
 * On-disk format: 512-byte blocks. A member is one header block (name[100]
 * at 0, size[12] octal at 124, chksum[8] at 148, typeflag at 156, magic
 * "ustar" at 257, prefix[155] at 345) followed by its data padded to a
 * block boundary. Two zero blocks end the archive. Python's tarfile writes
 * a pax 'x' header before members whose mtime is fractional, and GNU tar
 * writes 'L' members for names over 100 bytes: both set the next member's
 * name. Every header's checksum is verified; sizes are limited to
 * DLP_TAR_MAX_MEMBER; a stream ending before the end-of-archive blocks is
 * "truncated tar".
 */
#include "data/data.h"

#include <stdlib.h>
#include <string.h>

#define BLOCK 512

void dlp_tar_init(dlp_tar *t, const char *path, dlp_read_fn read, void *ctx) {
    memset(t, 0, sizeof *t);
    t->read = read;
    t->ctx = ctx;
    t->path = path;
}

/* Reads exactly n bytes or fails with "truncated tar". */
static dlp_status read_exact(dlp_tar *t, void *dst, size_t n, dlp_error *err) {
    size_t got = 0;
    dlp_status s = t->read(t->ctx, dst, n, &got, err);
    if (s) return s;
    t->offset += got;
    if (got < n)
        return dlp_fail(err, DLP_ERR_FORMAT,
                        "%s: truncated tar (stream ends at byte %llu)",
                        t->path, (unsigned long long)t->offset);
    return DLP_OK;
}

static dlp_status skip(dlp_tar *t, uint64_t n, dlp_error *err) {
    unsigned char buf[8192];
    while (n) {
        size_t k = n < sizeof buf ? (size_t)n : sizeof buf;
        dlp_status s = read_exact(t, buf, k, err);
        if (s) return s;
        n -= k;
    }
    return DLP_OK;
}

static uint64_t padded(uint64_t n) { return (n + BLOCK - 1) / BLOCK * BLOCK; }

/* Parses a numeric header field: octal digits padded with spaces/NULs, or
 * GNU base-256 (high bit of the first byte set). false when malformed. */
static bool parse_num(const unsigned char *f, size_t n, uint64_t *out) {
    uint64_t v = 0;
    if (f[0] & 0x80) {
        if (f[0] != 0x80) return false; /* negative or > 2^56 */
        for (size_t i = 1; i < n; i++) {
            if (v >> 56) return false;
            v = (v << 8) | f[i];
        }
        *out = v;
        return true;
    }
    size_t i = 0;
    while (i < n && (f[i] == ' ' || f[i] == '\0')) i++;
    if (i == n) {
        *out = 0;
        return true;
    }
    bool digits = false;
    for (; i < n && f[i] >= '0' && f[i] <= '7'; i++) {
        if (v >> 60) return false;
        v = v * 8 + (uint64_t)(f[i] - '0');
        digits = true;
    }
    for (; i < n; i++)
        if (f[i] != ' ' && f[i] != '\0') return false;
    if (!digits) return false;
    *out = v;
    return true;
}

static bool all_zero(const unsigned char *b) {
    for (int i = 0; i < BLOCK; i++)
        if (b[i]) return false;
    return true;
}

/* Applies the "path=" record of a pax extended header ("LEN key=value\n"). */
static dlp_status apply_pax(dlp_tar *t, const char *d, size_t n,
                            char *pending, bool *have, dlp_error *err) {
    size_t i = 0;
    while (i < n) {
        size_t len = 0, j = i;
        while (j < n && d[j] >= '0' && d[j] <= '9' && len < n + 1) {
            len = len * 10 + (size_t)(d[j] - '0');
            j++;
        }
        if (j == i || j >= n || d[j] != ' ' || len < 3 || len > n - i)
            return dlp_fail(err, DLP_ERR_FORMAT,
                            "%s: malformed pax header near byte %llu",
                            t->path, (unsigned long long)t->offset);
        const char *rec = d + j + 1, *end = d + i + len - 1; /* at '\n' */
        if (*end != '\n')
            return dlp_fail(err, DLP_ERR_FORMAT,
                            "%s: malformed pax record near byte %llu",
                            t->path, (unsigned long long)t->offset);
        if (end - rec > 5 && memcmp(rec, "path=", 5) == 0) {
            size_t vl = (size_t)(end - rec - 5);
            if (vl > DLP_TAR_MAX_NAME)
                return dlp_fail(err, DLP_ERR_LIMIT,
                                "%s: member name longer than %d bytes",
                                t->path, DLP_TAR_MAX_NAME);
            memcpy(pending, rec + 5, vl);
            pending[vl] = '\0';
            *have = true;
        }
        i += len;
    }
    return DLP_OK;
}

dlp_status dlp_tar_next(dlp_tar *t, bool *got, dlp_error *err) {
    *got = false;
    if (t->done) return DLP_OK;
    dlp_status s = skip(t, t->remain, err);
    if (s) return s;
    t->remain = 0;
    char pending[DLP_TAR_MAX_NAME + 1];
    bool have_pending = false;
    unsigned char h[BLOCK];
    for (;;) {
        uint64_t hoff = t->offset;
        size_t n = 0;
        s = t->read(t->ctx, h, BLOCK, &n, err);
        if (s) return s;
        t->offset += n;
        if (n < BLOCK)
            return dlp_fail(err, DLP_ERR_FORMAT,
                            "%s: truncated tar (no end-of-archive marker "
                            "after byte %llu)", t->path,
                            (unsigned long long)hoff);
        if (all_zero(h)) {
            /* End of archive: a second zero block should follow; accept
             * its absence at end of stream. */
            unsigned char h2[BLOCK];
            n = 0;
            s = t->read(t->ctx, h2, BLOCK, &n, err);
            if (s) return s;
            t->offset += n;
            t->done = true;
            return DLP_OK;
        }
        uint64_t want, sum = 0;
        if (!parse_num(h + 148, 8, &want))
            return dlp_fail(err, DLP_ERR_FORMAT,
                            "%s: bad tar header at byte %llu (checksum field)",
                            t->path, (unsigned long long)hoff);
        for (int i = 0; i < BLOCK; i++)
            sum += (i >= 148 && i < 156) ? (unsigned char)' ' : h[i];
        if (sum != want)
            return dlp_fail(err, DLP_ERR_FORMAT,
                            "%s: bad tar header checksum at byte %llu",
                            t->path, (unsigned long long)hoff);
        uint64_t size;
        if (!parse_num(h + 124, 12, &size))
            return dlp_fail(err, DLP_ERR_FORMAT,
                            "%s: bad tar size field at byte %llu", t->path,
                            (unsigned long long)hoff);
        if (size > DLP_TAR_MAX_MEMBER)
            return dlp_fail(err, DLP_ERR_LIMIT,
                            "%s: tar member at byte %llu is %llu bytes "
                            "(limit %llu)", t->path, (unsigned long long)hoff,
                            (unsigned long long)size,
                            (unsigned long long)DLP_TAR_MAX_MEMBER);
        char type = (char)h[156];
        if (type == 'x' || type == 'L') {
            if (size > (1u << 20))
                return dlp_fail(err, DLP_ERR_LIMIT,
                                "%s: tar metadata at byte %llu too large",
                                t->path, (unsigned long long)hoff);
            char *d = malloc((size_t)padded(size) + 1);
            if (!d) return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
            s = read_exact(t, d, (size_t)padded(size), err);
            if (!s && type == 'x') {
                s = apply_pax(t, d, (size_t)size, pending, &have_pending, err);
            } else if (!s) { /* GNU long name: NUL-terminated data */
                size_t l = strnlen(d, (size_t)size);
                if (l > DLP_TAR_MAX_NAME) {
                    s = dlp_fail(err, DLP_ERR_LIMIT,
                                 "%s: member name longer than %d bytes",
                                 t->path, DLP_TAR_MAX_NAME);
                } else {
                    memcpy(pending, d, l);
                    pending[l] = '\0';
                    have_pending = true;
                }
            }
            free(d);
            if (s) return s;
            continue;
        }
        if (type != '0' && type != '\0' && type != '7') {
            /* directory, link, global pax header, ...: skip its data */
            s = skip(t, padded(size), err);
            if (s) return s;
            have_pending = false;
            continue;
        }
        if (have_pending) {
            strcpy(t->name, pending);
        } else {
            char nm[101], pre[156];
            memcpy(nm, h, 100);
            nm[100] = '\0';
            pre[0] = '\0';
            if (memcmp(h + 257, "ustar\0", 6) == 0 && h[345]) { /* POSIX only */
                memcpy(pre, h + 345, 155);
                pre[155] = '\0';
            }
            if (pre[0])
                snprintf(t->name, sizeof t->name, "%s/%s", pre, nm);
            else
                snprintf(t->name, sizeof t->name, "%s", nm);
        }
        t->size = size;
        t->remain = padded(size);
        *got = true;
        return DLP_OK;
    }
}

dlp_status dlp_tar_read_data(dlp_tar *t, void **out, dlp_error *err) {
    *out = NULL;
    if (t->remain < t->size)
        return dlp_fail(err, DLP_ERR_ARG, "%s: member data already read",
                        t->path);
    void *buf = malloc(t->size ? (size_t)t->size : 1);
    if (!buf)
        return dlp_fail(err, DLP_ERR_NOMEM, "%s: out of memory for %llu bytes",
                        t->path, (unsigned long long)t->size);
    dlp_status s = read_exact(t, buf, (size_t)t->size, err);
    if (s) {
        free(buf);
        return s;
    }
    t->remain -= t->size;
    *out = buf;
    return DLP_OK;
}
