/* nn_file.c — the model file: a versioned, little-endian, CRC-checked list
 * of named float32 / int64 / string / byte entries (layout in nn.h). Saving builds
 * the image in memory, writes it to a temp file next to the target, fsyncs
 * and renames, so a crash leaves either the old file or the new one. Loading
 * checks size, magic, version, length and checksum before parsing, and
 * bounds-checks every entry.
 *
 * Side files (.dlps, nn.h): a group of entries that many model files hold
 * alike (the operator-time forests, ~4.4 MB in ten files of models/) is
 * saved once, in a file of the same layout named by a hash of its image,
 * and referenced by a string entry "<prefix><group>@". Saving writes the
 * side files first, the model file last, each with the same atomic write;
 * loading reads the model file, then each side file it names (from its
 * directory, checked like any model file), and puts their entries back in
 * place of the references: the lazy ones stay in the side file's bytes,
 * which the model file holds a reference to (dlp_nn_file.side). */
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
    e->map = NULL;
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

dlp_nn_map *dlp_nn_entry_keep(const dlp_nn_entry *e) {
    if (!e->map) return NULL;
    atomic_fetch_add(&e->map->refs, 1);
    return e->map;
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
    for (int i = 0; i < f->n_side; i++) dlp_nn_map_release(f->side[i]);
    free(f->side);
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

/* A string entry named "<prefix>/@": a reference to a side file. */
static bool is_ref(const dlp_nn_entry *e) {
    size_t l = strlen(e->name);
    return e->kind == DLP_NN_STR && l >= 2 && !strcmp(e->name + l - 2, "/@");
}

/* What every save checks first: no entry named like a reference (the
 * loader would take it for one), no lazy entry whose bytes went bad. */
static dlp_status check_entries(const dlp_nn_file *f, dlp_error *err) {
    for (int i = 0; i < f->n; i++) {
        if (is_ref(&f->e[i]))
            return dlp_fail(err, DLP_ERR_ARG, "model file: entry name '%s' is "
                            "a side-file reference's", f->e[i].name);
        dlp_status st = dlp_nn_entry_verify(&f->e[i], err); /* no save launders it */
        if (st) return st;
    }
    return DLP_OK;
}

/* The file image of entries e[0..n) in format version ver (*buf
 * malloc'd, *len bytes); path only names the file in an error. */
static dlp_status image_build(const dlp_nn_entry *ent, int n, uint32_t ver,
                              const char *path, uint8_t **out, size_t *len,
                              dlp_error *err) {
    uint64_t payload = 0;
    for (int i = 0; i < n; i++) {
        const dlp_nn_entry *e = &ent[i];
        payload += 1 + 2 + strlen(e->name) + 8 + e->count * dlp_nn_elem_size(e->kind) +
                   dlp_nn_entry_tail(ver, e->kind, e->count);
    }
    if (payload + NN_HDR + 4 > NN_MAX_FILE)
        return dlp_fail(err, DLP_ERR_LIMIT, "model file: %s would exceed 2 GiB", path);
    size_t total = (size_t)payload + NN_HDR + 4;
    uint8_t *buf = malloc(total);
    if (!buf) return dlp_fail(err, DLP_ERR_NOMEM, "model file: out of memory");
    memcpy(buf, NN_MAGIC, 8);
    put_u32(buf + 8, ver);
    put_u32(buf + 12, (uint32_t)n);
    put_u64(buf + 16, payload);
    uint8_t *p = buf + NN_HDR, *span = buf;   /* span: start of what the
                                                  file's CRC covers next */
    uint32_t crc = 0;
    for (int i = 0; i < n; i++) {
        const dlp_nn_entry *e = &ent[i];
        size_t nl = strlen(e->name);
        *p++ = (uint8_t)e->kind;
        put_u16(p, (uint16_t)nl); p += 2;
        memcpy(p, e->name, nl); p += nl;
        put_u64(p, e->count); p += 8;
        if (dlp_nn_entry_tail(ver, e->kind, e->count)) {
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
    *out = buf;
    *len = total;
    return DLP_OK;
}

/* buf[0..n) to path: a temp file in the same directory, fsync'd, then
 * renamed over the target. */
static dlp_status write_atomic(const char *path, const uint8_t *buf, size_t n,
                               dlp_error *err) {
    size_t pl = strlen(path);
    char *tmp = malloc(pl + 16);
    if (!tmp) return dlp_fail(err, DLP_ERR_NOMEM, "model file: out of memory");
    memcpy(tmp, path, pl);
    memcpy(tmp + pl, ".tmp.XXXXXX", 12);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        dlp_status st = dlp_fail(err, DLP_ERR_IO, "model file: cannot create %s: %s",
                                 tmp, strerror(errno));
        free(tmp);
        return st;
    }
    dlp_status st = write_all(fd, buf, n);
    if (!st && fsync(fd) != 0) st = DLP_ERR_IO;
    if (close(fd) != 0) st = DLP_ERR_IO;
    if (!st) (void)chmod(tmp, 0644);
    if (!st && rename(tmp, path) != 0) st = DLP_ERR_IO;
    if (st) {
        int e = errno;
        unlink(tmp);
        dlp_fail(err, DLP_ERR_IO, "model file: cannot write %s: %s", path, strerror(e));
    }
    free(tmp);
    return st;
}

/* The image of e[0..n), format version ver, written to path. */
static dlp_status save_entries(const dlp_nn_entry *e, int n, uint32_t ver,
                               const char *path, dlp_error *err) {
    uint8_t *buf;
    size_t len;
    dlp_status st = image_build(e, n, ver, path, &buf, &len, err);
    if (st) return st;
    st = write_atomic(path, buf, len, err);
    free(buf);
    return st;
}

dlp_status dlp_nn_file_save(const dlp_nn_file *f, const char *path,
                            dlp_error *err) {
    dlp_status st = check_entries(f, err);
    return st ? st : save_entries(f->e, f->n, DLP_NN_FILE_VERSION_PLAIN, path, err);
}

/* ---- side files ---- */
#define SIDE_EXT ".dlps"
#define SIDE_NAME_MAX 255   /* a reference's value, in bytes */

/* s[0..n) is made of [A-Za-z0-9._-] and does not start with '.' */
static bool plain_chars(const char *s, size_t n) {
    if (!n || s[0] == '.') return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-'))
            return false;
    }
    return true;
}

/* A reference's value: a base name of plain characters ending in .dlps. */
static bool side_name_ok(const char *s) {
    size_t n = strlen(s), el = strlen(SIDE_EXT);
    return n > el && plain_chars(s, n) && !strcmp(s + n - el, SIDE_EXT);
}

/* Where group (gl characters) starts in name: its first place at 0 or
 * after a '/' with something after it; -1 when nowhere. */
static int group_at(const char *name, const char *group, size_t gl) {
    for (const char *p = name; (p = strstr(p, group)); p++)
        if ((p == name || p[-1] == '/') && p[gl]) return (int)(p - name);
    return -1;
}

/* a group its side files can be named after: "<group minus '/'>-<16
 * hex digits>.dlps" a plain name of at most SIDE_NAME_MAX bytes */
static bool group_ok(const char *group) {
    size_t gl = group ? strlen(group) : 0;
    return gl >= 2 && gl + 21 <= SIDE_NAME_MAX && group[gl - 1] == '/' &&
           plain_chars(group, gl - 1);
}

/* The group of groups[] (NULL-terminated) entry name `name` belongs to,
 * the first that matches (*at: where it starts), or -1. */
static int group_of(const char *name, const char *const *groups, int *at) {
    for (int g = 0; groups[g]; g++)
        if ((*at = group_at(name, groups[g], strlen(groups[g]))) >= 0) return g;
    return -1;
}

int dlp_nn_file_group_entries(const dlp_nn_file *f, const char *const *groups) {
    if (!groups) return 0;
    for (int g = 0; groups[g]; g++)
        if (!group_ok(groups[g])) return 0;
    int n = 0, at;
    for (int i = 0; i < f->n; i++) n += group_of(f->e[i].name, groups, &at) >= 0;
    return n;
}

/* Length of path's directory part, its last '/' included (0: none): a
 * side file's path is that and its base name. */
static size_t dir_len(const char *path) {
    const char *slash = strrchr(path, '/');
    return slash ? (size_t)(slash - path) + 1 : 0;
}

/* 64-bit FNV-1a: names a side file by its bytes */
static uint64_t hash64(const uint8_t *p, size_t n) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

/* Writes the side file of the entries of f in prefix group `first` (the
 * index of its first entry; at[i] where group starts in entry i's name,
 * pid[i] its group's first entry) beside path, its base name in *name
 * (malloc'd); v is scratch for f->n entries. A name an earlier group of
 * this save got (names[0..n_names)) is not written again. */
static dlp_status side_write(const dlp_nn_file *f, const char *path,
                             const char *group, const int *at, const int *pid,
                             int first, dlp_nn_entry *v, char **names,
                             int n_names, char **name, dlp_error *err) {
    size_t gl = strlen(group);
    int k = 0;
    for (int i = first; i < f->n; i++)
        if (pid[i] == first) {
            v[k] = f->e[i];
            v[k++].name = f->e[i].name + at[i] + gl;
        }
    size_t dl = dir_len(path), nl = gl - 1 + 1 + 16 + strlen(SIDE_EXT);
    char *sp = malloc(dl + nl + 1);
    if (!sp) return dlp_fail(err, DLP_ERR_NOMEM, "model file: out of memory");
    memcpy(sp, path, dl);
    uint8_t *buf;
    size_t len;
    dlp_status st = image_build(v, k, DLP_NN_FILE_VERSION_PLAIN, path, &buf, &len, err);
    if (!st) {
        snprintf(sp + dl, nl + 1, "%.*s-%016llx%s", (int)(gl - 1), group,
                 (unsigned long long)hash64(buf, len), SIDE_EXT);
        bool done = false;
        for (int j = 0; j < n_names; j++) done |= !strcmp(names[j], sp + dl);
        if (!done) st = write_atomic(sp, buf, len, err);
        free(buf);
    }
    if (!st && !(*name = strdup(sp + dl)))
        st = dlp_fail(err, DLP_ERR_NOMEM, "model file: out of memory");
    free(sp);
    return st;
}

dlp_status dlp_nn_file_save_shared(const dlp_nn_file *f, const char *path,
                                   const char *const *groups, dlp_error *err) {
    int ng = 0;
    for (; groups && groups[ng]; ng++)
        if (!group_ok(groups[ng]))
            return dlp_fail(err, DLP_ERR_ARG, "model file: bad side-file group "
                            "'%s'", groups[ng]);
    if (!ng)
        return dlp_fail(err, DLP_ERR_ARG, "model file: no side-file group");
    dlp_status st = check_entries(f, err);
    if (st) return st;
    if (!dlp_nn_file_group_entries(f, groups))
        return save_entries(f->e, f->n, DLP_NN_FILE_VERSION_PLAIN, path, err);
    size_t m = (size_t)f->n;
    int *at = malloc(m * sizeof *at), *pid = malloc(m * sizeof *pid),
        *gi = malloc(m * sizeof *gi);
    dlp_nn_entry *v = malloc(m * sizeof *v);
    char **side = calloc(m, sizeof *side), **ref = calloc(m, sizeof *ref);
    if (!at || !pid || !gi || !v || !side || !ref) {
        st = dlp_fail(err, DLP_ERR_NOMEM, "model file: out of memory");
        goto out;
    }
    /* each entry of a group to the first entry of the same group and
     * prefix */
    for (int i = 0; i < f->n; i++) {
        gi[i] = group_of(f->e[i].name, groups, &at[i]);
        pid[i] = -1;
        for (int j = 0; gi[i] >= 0 && j <= i && pid[i] < 0; j++)
            if (gi[j] == gi[i] && at[j] == at[i] && (j == i || pid[j] == j) &&
                !strncmp(f->e[j].name, f->e[i].name, (size_t)at[i]))
                pid[i] = j;
    }
    /* the side files, then the model file with a reference for each */
    int ns = 0, k = 0;
    for (int i = 0; i < f->n && !st; i++)
        if (pid[i] == i && !(st = side_write(f, path, groups[gi[i]], at, pid,
                                             i, v, side, ns, &side[ns], err)))
            ns++;
    for (int i = 0, s = 0; i < f->n && !st; i++) {
        if (pid[i] < 0) {
            v[k++] = f->e[i];
        } else if (pid[i] == i) {
            size_t gl = strlen(groups[gi[i]]);
            if (!(ref[s] = malloc((size_t)at[i] + gl + 2))) {
                st = dlp_fail(err, DLP_ERR_NOMEM, "model file: out of memory");
                break;
            }
            snprintf(ref[s], (size_t)at[i] + gl + 2, "%.*s%s@", at[i],
                     f->e[i].name, groups[gi[i]]);
            v[k++] = (dlp_nn_entry){.name = ref[s], .kind = DLP_NN_STR,
                                    .count = strlen(side[s]), .data = side[s]};
            s++;
        }
    }
    if (!st) st = save_entries(v, k, DLP_NN_FILE_VERSION, path, err);
out:
    for (size_t i = 0; side && ref && i < m; i++) { free(side[i]); free(ref[i]); }
    free(at); free(pid); free(gi); free(v); free(side); free(ref);
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
 * (dlp_nn_entry_keep) and reads them where they lie. One file, its
 * references left as they are. */
static dlp_status load_one(dlp_nn_file *f, const char *path, dlp_error *err) {
    memset(f, 0, sizeof *f);
    void *map = NULL;
    size_t n = 0;
    dlp_error me;
    dlp_status st = dlp_file_read_all(path, (size_t)NN_MAX_FILE, &map, &n, &me);
    if (st == DLP_ERR_LIMIT)
        return dlp_fail(err, st, "model file: %s is larger than 2 GiB", path);
    if (st) return dlp_fail(err, st, "model file: %s", me.msg);
    /* the lazy entries' bytes; freed by the last release */
    if (!(f->map = malloc(sizeof *f->map))) {
        free(map);
        return dlp_fail(err, DLP_ERR_NOMEM, "model file: out of memory");
    }
    atomic_init(&f->map->refs, 1);
    f->map->bytes = map;
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
        else e->map = f->map;
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
    if (st) dlp_nn_file_free(f);   /* and the bytes with its map */
    return st;
}

/* Appends e to g, which takes what e owns (its name, its data), or fails
 * when g has an entry of that name and kind (e then still owns it). */
static dlp_status push_entry(dlp_nn_file *g, const dlp_nn_entry *e,
                             const char *path, dlp_error *err) {
    if (dlp_nn_file_get(g, e->name, e->kind))
        return dlp_fail(err, DLP_ERR_FORMAT, "model file: %s: duplicate entry "
                        "'%s' (with its side files)", path, e->name);
    size_t cap = (size_t)g->cap;
    if (!dlp_grow((void **)&g->e, &cap, (size_t)g->n + 1, sizeof *g->e))
        return dlp_fail(err, DLP_ERR_NOMEM, "model file: out of memory");
    g->cap = (int)cap;
    g->e[g->n++] = *e;
    return DLP_OK;
}

/* Appends side file s's entries to g, each named prefix + its name (a
 * copy of its data, or its raw bytes in s's block). */
static dlp_status push_side(dlp_nn_file *g, const dlp_nn_file *s,
                            const char *prefix, size_t pl, const char *path,
                            dlp_error *err) {
    for (int i = 0; i < s->n; i++) {
        const dlp_nn_entry *se = &s->e[i];
        size_t nl = strlen(se->name), bytes = (size_t)se->count *
                                              dlp_nn_elem_size(se->kind);
        dlp_nn_entry e = *se;
        e.name = malloc(pl + nl + 1);
        e.data = se->data ? malloc(bytes + 1) : NULL;
        if (!e.name || (se->data && !e.data)) {
            free(e.name); free(e.data);
            return dlp_fail(err, DLP_ERR_NOMEM, "model file: out of memory");
        }
        memcpy(e.name, prefix, pl);
        memcpy(e.name + pl, se->name, nl + 1);
        if (se->data) memcpy(e.data, se->data, bytes + 1); /* a string's NUL */
        dlp_status st = pl + nl > 65535
            ? dlp_fail(err, DLP_ERR_FORMAT, "model file: %s: entry name too "
                       "long with its prefix", path)
            : push_entry(g, &e, path, err);
        if (st) {
            free(e.name); free(e.data);
            return st;
        }
    }
    return DLP_OK;
}

/* Replaces f's nr references by the entries of the side files they name
 * (each loaded once, from path's directory), in their place. */
static dlp_status resolve_refs(dlp_nn_file *f, const char *path, int nr,
                               dlp_error *err) {
    dlp_nn_file *sf = calloc((size_t)nr, sizeof *sf), g = {0};
    int *which = malloc((size_t)f->n * sizeof *which), ns = 0;
    size_t dl = dir_len(path);
    char *sp = malloc(dl + SIDE_NAME_MAX + 1);
    dlp_status st = DLP_OK;
    if (!sf || !which || !sp) {
        st = dlp_fail(err, DLP_ERR_NOMEM, "model file: out of memory");
        goto out;
    }
    memcpy(sp, path, dl);
    for (int i = 0; i < f->n && !st; i++) {
        const dlp_nn_entry *e = &f->e[i];
        const char *v = e->data;
        which[i] = -1;
        if (!is_ref(e)) continue;
        if (e->count > SIDE_NAME_MAX || strlen(v) != e->count ||
            !side_name_ok(v)) {
            st = dlp_fail(err, DLP_ERR_FORMAT, "model file: %s: reference "
                          "'%s' = '%.80s' is not the base name of a %s file",
                          path, e->name, v, SIDE_EXT);
            break;
        }
        /* a side file this load read already? */
        for (int j = 0; j < i && which[i] < 0; j++)
            if (which[j] >= 0 && !strcmp(f->e[j].data, v)) which[i] = which[j];
        if (which[i] >= 0) continue;
        memcpy(sp + dl, v, (size_t)e->count + 1);
        dlp_error le;
        st = load_one(&sf[ns], sp, &le);
        if (st) {
            const char *why = le.msg;
            if (!strncmp(why, "model file: ", 12)) why += 12;
            st = dlp_fail(err, st, "model file: %s needs side file %s: %s",
                          path, sp, why);
            break;
        }
        for (int j = 0; j < sf[ns].n && !st; j++)
            if (is_ref(&sf[ns].e[j]))
                st = dlp_fail(err, DLP_ERR_FORMAT, "model file: side file %s "
                              "(of %s) holds a reference", sp, path);
        which[i] = ns++;   /* sf[ns] is freed below, refused or not */
    }
    if (!st && !(g.side = malloc((size_t)ns * sizeof *g.side)))
        st = dlp_fail(err, DLP_ERR_NOMEM, "model file: out of memory");
    /* the entries in order, each reference replaced by its side file's */
    for (int i = 0; i < f->n && !st; i++) {
        dlp_nn_entry *e = &f->e[i];
        if (which[i] >= 0) {
            st = push_side(&g, &sf[which[i]], e->name, strlen(e->name) - 1,
                           path, err);
        } else if (!(st = push_entry(&g, e, path, err))) {
            e->name = NULL;   /* g's now */
            e->data = NULL;
        }
    }
    if (!st) {
        for (int k = 0; k < ns; k++) {
            g.side[k] = sf[k].map;
            sf[k].map = NULL;
        }
        g.n_side = ns;
        g.map = f->map;
        g.version = f->version;
        f->map = NULL;
        dlp_nn_file_free(f);   /* the references, and what g took */
        *f = g;
    } else {
        dlp_nn_file_free(&g);
    }
out:
    for (int k = 0; k < ns; k++) dlp_nn_file_free(&sf[k]);
    free(sf); free(which); free(sp);
    return st;
}

dlp_status dlp_nn_file_load(dlp_nn_file *f, const char *path, dlp_error *err) {
    dlp_status st = load_one(f, path, err);
    int nr = 0;
    for (int i = 0; !st && i < f->n; i++) nr += is_ref(&f->e[i]);
    /* references came with version 4 */
    if (!st && nr && f->version < DLP_NN_FILE_VERSION) {
        st = dlp_fail(err, DLP_ERR_FORMAT, "model file: %s: a side-file "
                      "reference in a version-%u file", path, f->version);
        dlp_nn_file_free(f);
    }
    if (!st && nr && (st = resolve_refs(f, path, nr, err))) dlp_nn_file_free(f);
    return st;
}
