/* nn_file.c — the model file: a versioned, little-endian, CRC-checked list
 * of named float32 / int64 / string / byte entries (layout in nn.h). Saving builds
 * the image in memory, writes it to a temp file next to the target, fsyncs
 * and renames, so a crash leaves either the old file or the new one. Loading
 * checks size, magic, version, length and checksum before parsing, and
 * bounds-checks every entry. */
#include "nn.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NN_MAGIC "DLPNNMDL"
#define NN_HDR 24
#define NN_MAX_FILE ((uint64_t)1 << 31)
#define NN_MAX_ENTRIES 100000

struct dlp_nn_map {
    atomic_int refs;
    void *bytes;        /* the file, read whole (dlp_file_read_all) */
};

/* dlp_nn_crc32: nn_crc.c */

static void copy_le(void *dst, const uint8_t *src, size_t n, size_t es);

/* ---- building the entry list ---- */
/* raw non-NULL: the entry's values stay there (a loaded file's bytes,
 * little-endian) and it gets no data block; else data holds count values */
static dlp_status add_entry(dlp_nn_file *f, const char *name,
                            dlp_nn_entry_kind kind, uint64_t count,
                            size_t elem, const uint8_t *raw,
                            dlp_nn_entry **out, dlp_error *err) {
    size_t nl = strlen(name);
    if (nl == 0 || nl > 65535)
        return dlp_fail(err, DLP_ERR_ARG, "model file: bad entry name length");
    if (dlp_nn_file_get(f, name, kind))
        return dlp_fail(err, DLP_ERR_ARG, "model file: duplicate entry '%s'", name);
    if (count > NN_MAX_FILE / (elem ? elem : 1))
        return dlp_fail(err, DLP_ERR_LIMIT, "model file: entry '%s' too large", name);
    size_t cap = (size_t)f->cap;
    if (!dlp_grow((void **)&f->e, &cap, (size_t)f->n + 1, sizeof *f->e))
        return dlp_fail(err, DLP_ERR_NOMEM, "model file: out of memory");
    f->cap = (int)cap;
    dlp_nn_entry *e = &f->e[f->n];
    e->name = strdup(name);
    e->data = raw ? NULL : malloc((size_t)count * elem + 1);
    if (!e->name || (!raw && !e->data)) {
        free(e->name); free(e->data);
        return dlp_fail(err, DLP_ERR_NOMEM, "model file: out of memory");
    }
    e->kind = kind;
    e->count = count;
    e->raw = raw;
    e->crc_pending = false;
    e->crc = 0;
    f->n++;
    *out = e;
    return DLP_OK;
}

dlp_status dlp_nn_file_add_f32(dlp_nn_file *f, const char *name,
                               const nn_real *x, uint64_t n, dlp_error *err) {
    dlp_nn_entry *e;
    dlp_status st = add_entry(f, name, DLP_NN_F32, n, sizeof(float), NULL, &e, err);
    if (st) return st;
    float *d = e->data;
    for (uint64_t k = 0; k < n; k++) d[k] = (float)x[k];
    return DLP_OK;
}

dlp_status dlp_nn_file_add_i64(dlp_nn_file *f, const char *name,
                               const int64_t *x, uint64_t n, dlp_error *err) {
    dlp_nn_entry *e;
    dlp_status st = add_entry(f, name, DLP_NN_I64, n, sizeof(int64_t), NULL, &e, err);
    if (st) return st;
    if (n) memcpy(e->data, x, (size_t)n * sizeof(int64_t));
    return DLP_OK;
}

dlp_status dlp_nn_file_add_u8(dlp_nn_file *f, const char *name,
                              const void *x, uint64_t n, dlp_error *err) {
    dlp_nn_entry *e;
    dlp_status st = add_entry(f, name, DLP_NN_U8, n, 1, NULL, &e, err);
    if (st) return st;
    if (n) memcpy(e->data, x, (size_t)n);
    return DLP_OK;
}

const uint8_t *dlp_nn_entry_bytes(const dlp_nn_entry *e) {
    return e->data ? e->data : e->raw;
}

dlp_status dlp_nn_entry_verify(const dlp_nn_entry *e, dlp_error *err) {
    if (!e->crc_pending ||
        dlp_nn_crc32(0, dlp_nn_entry_bytes(e), (size_t)e->count) == e->crc)
        return DLP_OK;
    return dlp_fail(err, DLP_ERR_FORMAT, "model file: entry '%s' is corrupt "
                    "(checksum mismatch)", e->name);
}

size_t dlp_nn_entry_tail(uint32_t ver, unsigned kind, uint64_t count) {
    return ver >= 3 && kind == DLP_NN_U8 && count >= DLP_NN_LAZY_MIN ? 4 : 0;
}

dlp_nn_map *dlp_nn_file_keep(const dlp_nn_file *f) {
    if (!f->map) return NULL;
    atomic_fetch_add(&f->map->refs, 1);
    return f->map;
}

void dlp_nn_map_release(dlp_nn_map *m) {
    if (!m || atomic_fetch_sub(&m->refs, 1) != 1) return;
    free(m->bytes);
    free(m);
}

dlp_status dlp_nn_file_add_str(dlp_nn_file *f, const char *name,
                               const char *s, dlp_error *err) {
    dlp_nn_entry *e;
    uint64_t n = strlen(s);
    dlp_status st = add_entry(f, name, DLP_NN_STR, n, 1, NULL, &e, err);
    if (st) return st;
    memcpy(e->data, s, (size_t)n + 1);
    return DLP_OK;
}

size_t dlp_nn_elem_size(dlp_nn_entry_kind k) {
    return k == DLP_NN_F32 ? sizeof(float) : k == DLP_NN_I64 ? sizeof(int64_t)
                                                            : 1;
}

size_t dlp_nn_kind_size(uint32_t ver, unsigned k) {
    if (k < DLP_NN_F32 || k > (ver >= 2 ? DLP_NN_U8 : DLP_NN_STR)) return 0;
    return dlp_nn_elem_size((dlp_nn_entry_kind)k);
}

dlp_status dlp_nn_file_add_copy(dlp_nn_file *f, const char *name,
                                const dlp_nn_entry *src, dlp_error *err) {
    size_t elem = dlp_nn_elem_size(src->kind);
    dlp_nn_entry *e;
    dlp_status st = dlp_nn_entry_verify(src, err);   /* no copy launders it */
    if (!st) st = add_entry(f, name, src->kind, src->count, elem, NULL, &e, err);
    if (st) return st;
    if (src->count && !src->data) copy_le(e->data, src->raw, (size_t)src->count, elem);
    else if (src->count) memcpy(e->data, src->data, (size_t)src->count * elem);
    if (src->kind == DLP_NN_STR) ((char *)e->data)[src->count] = 0;
    return DLP_OK;
}

bool dlp_nn_file_remove(dlp_nn_file *f, const char *name,
                        dlp_nn_entry_kind kind) {
    for (int i = 0; i < f->n; i++)
        if (f->e[i].kind == kind && strcmp(f->e[i].name, name) == 0) {
            free(f->e[i].name);
            free(f->e[i].data);
            memmove(&f->e[i], &f->e[i + 1], (size_t)(f->n - i - 1) * sizeof *f->e);
            f->n--;
            return true;
        }
    return false;
}

const dlp_nn_entry *dlp_nn_file_get(const dlp_nn_file *f, const char *name,
                                    dlp_nn_entry_kind kind) {
    for (int i = 0; i < f->n; i++)
        if (f->e[i].kind == kind && strcmp(f->e[i].name, name) == 0) return &f->e[i];
    return NULL;
}

void dlp_nn_entry_f32s(const dlp_nn_entry *e, uint64_t k, uint64_t n, float *dst) {
    if (!n) return;
    if (e->data) memcpy(dst, (const float *)e->data + k, (size_t)n * sizeof *dst);
    else copy_le(dst, e->raw + 4 * k, (size_t)n, 4);
}

dlp_status dlp_nn_file_read_f32(const dlp_nn_file *f, const char *name,
                                nn_real *x, uint64_t n, dlp_error *err) {
    const dlp_nn_entry *e = dlp_nn_file_get(f, name, DLP_NN_F32);
    if (!e) return dlp_fail(err, DLP_ERR_FORMAT, "model file: no tensor '%s'", name);
    if (e->count != n)
        return dlp_fail(err, DLP_ERR_SHAPE,
                        "model file: tensor '%s' has %llu values, model expects %llu",
                        name, (unsigned long long)e->count, (unsigned long long)n);
#if !defined(DLP_NN_DOUBLE)
    dlp_nn_entry_f32s(e, 0, n, x);
#else
    for (uint64_t k = 0; k < n; k++) {
        float v;
        dlp_nn_entry_f32s(e, k, 1, &v);
        x[k] = (nn_real)v;
    }
#endif
    return DLP_OK;
}

void dlp_nn_file_free(dlp_nn_file *f) {
    if (!f) return;
    for (int i = 0; i < f->n; i++) { free(f->e[i].name); free(f->e[i].data); }
    free(f->e);
    dlp_nn_map_release(f->map);
    memset(f, 0, sizeof *f);
}

dlp_status dlp_nn_file_add_params_as(dlp_nn_file *f, const char *prefix,
                                     const dlp_nn_params *p, dlp_error *err) {
    char name[DLP_NN_NAME_MAX + 32];
    for (int t = 0; t < p->n_tensors; t++) {
        snprintf(name, sizeof name, "%.30s%s", prefix, p->t[t].name);
        dlp_status st = dlp_nn_file_add_f32(f, name, p->w + p->t[t].off, p->t[t].n, err);
        if (st) return st;
    }
    return DLP_OK;
}

dlp_status dlp_nn_file_read_params_as(const dlp_nn_file *f, const char *prefix,
                                      dlp_nn_params *p, dlp_error *err) {
    char name[DLP_NN_NAME_MAX + 32];
    for (int t = 0; t < p->n_tensors; t++) {
        snprintf(name, sizeof name, "%.30s%s", prefix, p->t[t].name);
        dlp_status st = dlp_nn_file_read_f32(f, name, p->w + p->t[t].off, p->t[t].n, err);
        if (st) return st;
    }
    return DLP_OK;
}

dlp_status dlp_nn_file_add_params(dlp_nn_file *f, const dlp_nn_params *p,
                                  dlp_error *err) {
    return dlp_nn_file_add_params_as(f, "param/", p, err);
}

dlp_status dlp_nn_file_read_params(const dlp_nn_file *f, dlp_nn_params *p,
                                   dlp_error *err) {
    return dlp_nn_file_read_params_as(f, "param/", p, err);
}

/* ---- little-endian byte image ---- */
static void put_u16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
static void put_u32(uint8_t *p, uint32_t v) { for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i)); }
static void put_u64(uint8_t *p, uint64_t v) { for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i)); }
static uint16_t get_u16(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }
static uint32_t get_u32(const uint8_t *p) {
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}
static uint64_t get_u64(const uint8_t *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

/* dst[0..n) = n little-endian values of es bytes (1, 4 or 8) at src: one
 * memcpy on a little-endian host (the file's layout), byte by byte else */
static void copy_le(void *dst, const uint8_t *src, size_t n, size_t es) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (n) memcpy(dst, src, n * es);
#else
    uint8_t *d = dst;
    for (size_t k = 0; k < n; k++, src += es, d += es)
        for (size_t b = 0; b < es; b++) d[b] = src[es - 1 - b];
#endif
}

static dlp_status write_all(int fd, const uint8_t *b, size_t n) {
    while (n) {
        ssize_t w = write(fd, b, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            return DLP_ERR_IO;
        }
        b += w; n -= (size_t)w;
    }
    return DLP_OK;
}

dlp_status dlp_nn_file_save(const dlp_nn_file *f, const char *path,
                            dlp_error *err) {
    uint64_t payload = 0;
    for (int i = 0; i < f->n; i++) {
        const dlp_nn_entry *e = &f->e[i];
        dlp_status st = dlp_nn_entry_verify(e, err);   /* no save launders it */
        if (st) return st;
        payload += 1 + 2 + strlen(e->name) + 8 + e->count * dlp_nn_elem_size(e->kind) +
                   dlp_nn_entry_tail(DLP_NN_FILE_VERSION, e->kind, e->count);
    }
    if (payload + NN_HDR + 4 > NN_MAX_FILE)
        return dlp_fail(err, DLP_ERR_LIMIT, "model file: %s would exceed 2 GiB", path);
    size_t total = (size_t)payload + NN_HDR + 4;
    uint8_t *buf = malloc(total);
    if (!buf) return dlp_fail(err, DLP_ERR_NOMEM, "model file: out of memory");
    memcpy(buf, NN_MAGIC, 8);
    put_u32(buf + 8, DLP_NN_FILE_VERSION);
    put_u32(buf + 12, (uint32_t)f->n);
    put_u64(buf + 16, payload);
    uint8_t *p = buf + NN_HDR, *span = buf;   /* span: start of what the
                                                  file's CRC covers next */
    uint32_t crc = 0;
    for (int i = 0; i < f->n; i++) {
        const dlp_nn_entry *e = &f->e[i];
        size_t nl = strlen(e->name);
        *p++ = (uint8_t)e->kind;
        put_u16(p, (uint16_t)nl); p += 2;
        memcpy(p, e->name, nl); p += nl;
        put_u64(p, e->count); p += 8;
        if (dlp_nn_entry_tail(DLP_NN_FILE_VERSION, e->kind, e->count)) {
            /* bytes, own CRC: outside the file's */
            size_t nb = (size_t)e->count;
            memcpy(p, dlp_nn_entry_bytes(e), nb);
            crc = dlp_nn_crc32(crc, span, (size_t)(p - span));
            put_u32(p + nb, dlp_nn_crc32(0, p, nb));
            p += nb;
            span = p;
            p += 4;
            continue;
        }
        if (!e->data) { /* a lazy array: already little-endian */
            size_t nb = (size_t)e->count * dlp_nn_elem_size(e->kind);
            memcpy(p, e->raw, nb);
            p += nb;
            continue;
        }
        for (uint64_t k = 0; k < e->count; k++) {
            if (e->kind == DLP_NN_F32) {
                uint32_t u; memcpy(&u, (const float *)e->data + k, 4);
                put_u32(p, u); p += 4;
            } else if (e->kind == DLP_NN_I64) {
                put_u64(p, (uint64_t)((const int64_t *)e->data)[k]); p += 8;
            } else {
                *p++ = ((const uint8_t *)e->data)[k];
            }
        }
    }
    put_u32(p, dlp_nn_crc32(crc, span, (size_t)(p - span)));
    /* temp file in the same directory, then rename over the target */
    size_t pl = strlen(path);
    char *tmp = malloc(pl + 16);
    if (!tmp) { free(buf); return dlp_fail(err, DLP_ERR_NOMEM, "model file: out of memory"); }
    memcpy(tmp, path, pl);
    memcpy(tmp + pl, ".tmp.XXXXXX", 12);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        dlp_status st = dlp_fail(err, DLP_ERR_IO, "model file: cannot create %s: %s",
                                 tmp, strerror(errno));
        free(tmp); free(buf);
        return st;
    }
    dlp_status st = write_all(fd, buf, total);
    if (!st && fsync(fd) != 0) st = DLP_ERR_IO;
    if (close(fd) != 0) st = DLP_ERR_IO;
    if (!st) (void)chmod(tmp, 0644);
    if (!st && rename(tmp, path) != 0) st = DLP_ERR_IO;
    if (st) {
        int e = errno;
        unlink(tmp);
        dlp_fail(err, DLP_ERR_IO, "model file: cannot write %s: %s", path, strerror(e));
    }
    free(tmp); free(buf);
    return st;
}

/* The file is read whole into one heap block (dlp_file_read_all), not
 * mapped: on the project's VM a process pays ~1.6-8 us for its first
 * touch of each 4 KB page of a mapping, populated or not, while the read
 * copies through the kernel's large pages into a heap `dlperf predict`
 * keeps on huge pages (forty-ninth session; the forty-third session had
 * mapped it, when read() filled fresh 4 KB heap pages). Float32 arrays of
 * DLP_NN_LAZY_MIN values or more (the weights) are not copied again: they
 * stay in that block, which the file keeps until dlp_nn_file_free, and
 * are read from there into the network's parameters. Byte arrays that
 * large are never copied either: their reader keeps the block
 * (dlp_nn_file_keep) and reads them where they lie. */
dlp_status dlp_nn_file_load(dlp_nn_file *f, const char *path, dlp_error *err) {
    memset(f, 0, sizeof *f);
    void *map = NULL;
    size_t n = 0;
    dlp_error me;
    dlp_status st = dlp_file_read_all(path, (size_t)NN_MAX_FILE, &map, &n, &me);
    if (st == DLP_ERR_LIMIT)
        return dlp_fail(err, st, "model file: %s is larger than 2 GiB", path);
    if (st) return dlp_fail(err, st, "model file: %s", me.msg);
    const uint8_t *buf = map;
    if (n < 8 || memcmp(buf, NN_MAGIC, 8) != 0) {
        st = dlp_fail(err, DLP_ERR_FORMAT, "model file: %s is not a dlperf model (bad magic)", path);
        goto done;
    }
    if (n < NN_HDR + 4) {
        st = dlp_fail(err, DLP_ERR_FORMAT, "model file: %s is truncated (%zu bytes)", path, n);
        goto done;
    }
    uint32_t ver = get_u32(buf + 8), n_ent = get_u32(buf + 12);
    uint64_t payload = get_u64(buf + 16);
    if (ver < 1 || ver > DLP_NN_FILE_VERSION) {
        st = dlp_fail(err, DLP_ERR_UNSUPPORTED,
                      "model file: %s has format version %u, this build reads 1 to %u",
                      path, ver, DLP_NN_FILE_VERSION);
        goto done;
    }
    if (payload != n - NN_HDR - 4) {
        st = dlp_fail(err, DLP_ERR_FORMAT,
                      "model file: %s is truncated or has trailing bytes "
                      "(header says %llu payload bytes, file has %zu)",
                      path, (unsigned long long)payload, n - NN_HDR - 4);
        goto done;
    }
    /* before version 3 the CRC covers every byte: checked before the
     * entries are read; from 3 on, what lies outside the large byte
     * arrays, summed while they are read and checked after */
    if (ver < 3 && dlp_nn_crc32(0, buf, n - 4) != get_u32(buf + n - 4))
        goto corrupt;
    if (n_ent > NN_MAX_ENTRIES) {
        st = dlp_fail(err, DLP_ERR_LIMIT, "model file: %s has too many entries", path);
        goto done;
    }
    const uint8_t *p = buf + NN_HDR, *end = buf + n - 4, *span = buf;
    uint32_t crc = 0;
    for (uint32_t i = 0; i < n_ent; i++) {
        if (end - p < 3) goto bad;
        uint8_t kind = *p++;
        uint16_t nl = get_u16(p); p += 2;
        size_t es = dlp_nn_kind_size(ver, kind);
        if (!es || nl == 0 || (size_t)(end - p) < (size_t)nl + 8) goto bad;
        char name[65536];
        memcpy(name, p, nl); name[nl] = 0; p += nl;
        if (strlen(name) != nl) goto bad;
        uint64_t cnt = get_u64(p); p += 8;
        size_t tail = dlp_nn_entry_tail(ver, kind, cnt);
        if ((size_t)(end - p) < tail || cnt > (uint64_t)(end - p - (ptrdiff_t)tail) / es) goto bad;
        dlp_nn_entry *e;
        bool lazy = (kind == DLP_NN_F32 || kind == DLP_NN_U8) &&
                    cnt >= DLP_NN_LAZY_MIN;
        st = add_entry(f, name, (dlp_nn_entry_kind)kind, cnt, es, lazy ? p : NULL,
                       &e, err);
        if (st) {
            if (st == DLP_ERR_ARG)
                st = dlp_fail(err, DLP_ERR_FORMAT, "model file: %s: duplicate entry '%s'", path, name);
            goto done;
        }
        if (!lazy) copy_le(e->data, p, (size_t)cnt, es);
        if (tail) {
            crc = dlp_nn_crc32(crc, span, (size_t)(p - span));
            e->crc_pending = true;
            e->crc = get_u32(p + cnt);
            span = p + cnt;
        }
        p += (size_t)cnt * es + tail;
        if (kind == DLP_NN_STR) ((char *)e->data)[cnt] = 0;
    }
    if (p != end) goto bad;
    if (ver >= 3 && dlp_nn_crc32(crc, span, (size_t)(end - span)) != get_u32(end))
        goto corrupt;
    f->version = ver;
    goto done;
bad:
    st = dlp_fail(err, DLP_ERR_FORMAT, "model file: %s: malformed entry table", path);
    goto done;
corrupt:
    st = dlp_fail(err, DLP_ERR_FORMAT, "model file: %s is corrupt (checksum mismatch)", path);
done:
    if (!st) {   /* the lazy entries' bytes; freed by the last release */
        f->map = malloc(sizeof *f->map);
        if (!f->map)
            st = dlp_fail(err, DLP_ERR_NOMEM, "model file: out of memory");
        else {
            atomic_init(&f->map->refs, 1);
            f->map->bytes = map;
        }
    }
    if (st) {
        dlp_nn_file_free(f);
        free(map);
    }
    return st;
}
