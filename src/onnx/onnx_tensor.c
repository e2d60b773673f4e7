/*
 * onnx_tensor.c — TensorProto, SparseTensorProto and ValueInfoProto /
 * TypeProto into dlp_values.
 *
 * A tensor's weight bytes are never read unless the tensor is small enough
 * to matter for shape arithmetic: integer/bool tensors up to
 * DLP_MAX_CONST_ELEMS elements, floating ones up to DLP_ONNX_MAX_FLOAT_CONST.
 * Big tensors cost one pass over their fields, skipping raw_data by length.
 * Constant contents come from raw_data (little-endian, as ONNX specifies),
 * from the typed repeated fields (float_data, int32_data, int64_data,
 * double_data, uint64_data), or, for small integer tensors only, from the
 * external data file when it exists next to the model.
 *
 * TensorProto fields: dims=1 data_type=2 float_data=4 int32_data=5
 * string_data=6 int64_data=7 name=8 raw_data=9 double_data=10
 * uint64_data=11 external_data=13 (key=1 value=2) data_location=14.
 */
#include "onnx.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int dlp_onnx_value(dlp_onnx_ctx *c, dlp_graph *g, const char *name,
                   size_t len, dlp_error *err) {
    size_t before = g->n_values;
    if (c->n_values >= DLP_ONNX_MAX_VALUES) {
        int idx = dlp_strmap_get(&g->by_name, name, len);
        if (idx >= 0) return idx;
        dlp_fail(err, DLP_ERR_LIMIT, "model has more than %d tensors",
                 DLP_ONNX_MAX_VALUES);
        return -1;
    }
    int idx = dlp_graph_value(g, name, len);
    if (idx < 0) {
        dlp_fail(err, DLP_ERR_NOMEM, "out of memory adding tensor '%.*s'",
                 (int)(len > 200 ? 200 : len), name);
        return -1;
    }
    if (g->n_values > before) c->n_values++;
    return idx;
}

int dlp_onnx_anon_value(dlp_onnx_ctx *c, dlp_graph *g, dlp_error *err) {
    if (c->n_values >= DLP_ONNX_MAX_VALUES) {
        dlp_fail(err, DLP_ERR_LIMIT, "model has more than %d tensors",
                 DLP_ONNX_MAX_VALUES);
        return -1;
    }
    int idx = dlp_graph_anon_value(g);
    if (idx < 0) {
        dlp_fail(err, DLP_ERR_NOMEM, "out of memory adding a tensor");
        return -1;
    }
    c->n_values++;
    return idx;
}

/* ---- element conversion ------------------------------------------------ */

static double half_to_double(uint32_t h) {
    int sign = (h >> 15) & 1, e = (h >> 10) & 31;
    double m = (double)(h & 1023);
    double v;
    if (e == 0) v = ldexp(m, -24);
    else if (e == 31) v = m ? NAN : INFINITY;
    else v = ldexp(1.0 + m / 1024.0, e - 15);
    return sign ? -v : v;
}

static double f32_bits(uint32_t b) {
    float f;
    memcpy(&f, &b, sizeof f);
    return f;
}

static double f64_bits(uint64_t b) {
    double d;
    memcpy(&d, &b, sizeof d);
    return d;
}

/* Whether constant contents of dt can be kept, and where (int or float). */
static int const_kind(dlp_dtype dt) { /* 0 no, 1 int, 2 float */
    switch (dt) {
    case DLP_DT_BOOL: case DLP_DT_INT8: case DLP_DT_UINT8: case DLP_DT_INT16:
    case DLP_DT_UINT16: case DLP_DT_INT32: case DLP_DT_UINT32:
    case DLP_DT_INT64: case DLP_DT_UINT64:
        return 1;
    case DLP_DT_FLOAT: case DLP_DT_DOUBLE: case DLP_DT_FLOAT16:
    case DLP_DT_BFLOAT16:
        return 2;
    default:
        return 0;
    }
}

/* Converts one element's bits (zero- or sign-extended, either from raw
 * bytes or a typed field) to int64 or double by dtype. */
static void conv_elem(dlp_dtype dt, uint64_t b, int64_t *iv, double *fv) {
    switch (dt) {
    case DLP_DT_BOOL: *iv = (b & 0xff) != 0; break;
    case DLP_DT_INT8: *iv = (int8_t)(uint8_t)b; break;
    case DLP_DT_UINT8: *iv = (uint8_t)b; break;
    case DLP_DT_INT16: *iv = (int16_t)(uint16_t)b; break;
    case DLP_DT_UINT16: *iv = (uint16_t)b; break;
    case DLP_DT_INT32: *iv = (int32_t)(uint32_t)b; break;
    case DLP_DT_UINT32: *iv = (uint32_t)b; break;
    case DLP_DT_INT64: case DLP_DT_UINT64: *iv = (int64_t)b; break;
    case DLP_DT_FLOAT: *fv = f32_bits((uint32_t)b); break;
    case DLP_DT_DOUBLE: *fv = f64_bits(b); break;
    case DLP_DT_FLOAT16: *fv = half_to_double((uint32_t)b & 0xffff); break;
    case DLP_DT_BFLOAT16: *fv = f32_bits(((uint32_t)b & 0xffff) << 16); break;
    default: break;
    }
}

/* Which typed field holds dt's elements, and its wire kind. */
static int typed_field(dlp_dtype dt, int *kind) {
    switch (dt) {
    case DLP_DT_FLOAT: *kind = DLP_PB_I32; return 4;
    case DLP_DT_INT64: *kind = DLP_PB_VARINT; return 7;
    case DLP_DT_DOUBLE: *kind = DLP_PB_I64; return 10;
    case DLP_DT_UINT32: case DLP_DT_UINT64: *kind = DLP_PB_VARINT; return 11;
    case DLP_DT_BOOL: case DLP_DT_INT8: case DLP_DT_UINT8: case DLP_DT_INT16:
    case DLP_DT_UINT16: case DLP_DT_INT32: case DLP_DT_FLOAT16:
    case DLP_DT_BFLOAT16:
        *kind = DLP_PB_VARINT;
        return 5;
    default:
        return 0;
    }
}

static const char *typed_name(int fnum) {
    switch (fnum) {
    case 4: return "float_data";
    case 5: return "int32_data";
    case 7: return "int64_data";
    case 10: return "double_data";
    case 11: return "uint64_data";
    default: return "typed data";
    }
}

/* ---- TensorProto ------------------------------------------------------- */

typedef struct {
    dlp_pb msg;              /* the tensor's fields, for a second scan */
    const char *name;
    size_t name_len;
    int64_t dtype_raw;
    int rank;                /* dims seen (may exceed DLP_MAX_RANK) */
    int64_t dims[DLP_MAX_RANK];
    int64_t numel;
    bool overflow;           /* numel overflowed int64 */
    int64_t bad_dim;         /* first negative or absurd dim */
    bool has_bad_dim;
    const uint8_t *raw;
    size_t raw_len;
    bool has_raw;
    bool external;
    const char *loc;
    size_t loc_len;
    int64_t ext_off, ext_len; /* -1 when absent */
} tparse;

static void add_dim(tparse *t, int64_t d) {
    if (t->rank < DLP_MAX_RANK) t->dims[t->rank] = d;
    if (t->rank < INT32_MAX) t->rank++;
    if ((d < 0 || d > DLP_ONNX_MAX_DIM) && !t->has_bad_dim) {
        t->has_bad_dim = true;
        t->bad_dim = d;
    }
    if (d >= 0 && !t->overflow && !dlp_mul_i64(t->numel, d, &t->numel))
        t->overflow = true;
}

static int64_t parse_i64_str(const char *s, size_t n) {
    int64_t v = 0;
    if (n == 0 || n > 18) return -1;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

static dlp_status parse_external_entry(tparse *t, const dlp_pb *msg,
                                       const dlp_pb_field *f,
                                       dlp_error *err) {
    dlp_pb r;
    dlp_status st = dlp_pb_sub(msg, f, "TensorProto.external_data", &r, err);
    if (st) return st;
    const char *key = NULL, *val = NULL;
    size_t klen = 0, vlen = 0;
    dlp_pb_field e;
    while ((st = dlp_pb_next(&r, &e, err)) == DLP_OK && !e.end) {
        if (e.wire != DLP_PB_LEN) continue;
        if (e.num == 1) { key = (const char *)e.data; klen = e.len; }
        if (e.num == 2) { val = (const char *)e.data; vlen = e.len; }
    }
    if (st) return st;
    if (!key || !val) return DLP_OK;
    if (klen == 8 && memcmp(key, "location", 8) == 0) {
        t->loc = val;
        t->loc_len = vlen;
    } else if (klen == 6 && memcmp(key, "offset", 6) == 0) {
        t->ext_off = parse_i64_str(val, vlen);
    } else if (klen == 6 && memcmp(key, "length", 6) == 0) {
        t->ext_len = parse_i64_str(val, vlen);
    }
    return DLP_OK;
}

static dlp_status tensor_parse(const dlp_pb *parent, const dlp_pb_field *f,
                               tparse *t, dlp_error *err) {
    memset(t, 0, sizeof *t);
    t->numel = 1;
    t->ext_off = t->ext_len = -1;
    t->name = "";
    dlp_status st = dlp_pb_sub(parent, f, "TensorProto", &t->msg, err);
    if (st) return st;
    dlp_pb r = t->msg;
    dlp_pb_field e;
    while ((st = dlp_pb_next(&r, &e, err)) == DLP_OK && !e.end) {
        switch (e.num) {
        case 1: /* dims, packed or not */
            if (e.wire == DLP_PB_VARINT) {
                add_dim(t, (int64_t)e.u);
            } else if (e.wire == DLP_PB_LEN) {
                const uint8_t *p = e.data, *end = e.data + e.len;
                while (p < end) {
                    uint64_t v;
                    if (!dlp_pb_varint(&p, end, &v))
                        return dlp_fail(err, DLP_ERR_FORMAT,
                                        "malformed TensorProto.dims at byte "
                                        "%zu",
                                        e.offset);
                    add_dim(t, (int64_t)v);
                }
            }
            break;
        case 2:
            if (e.wire == DLP_PB_VARINT) t->dtype_raw = (int64_t)e.u;
            break;
        case 8:
            if (e.wire == DLP_PB_LEN) {
                t->name = (const char *)e.data;
                t->name_len = e.len;
            }
            break;
        case 9:
            if (e.wire == DLP_PB_LEN) {
                t->raw = e.data;
                t->raw_len = e.len;
                t->has_raw = true;
            }
            break;
        case 13:
            t->external = true;
            st = parse_external_entry(t, &t->msg, &e, err);
            if (st) return st;
            break;
        case 14:
            if (e.wire == DLP_PB_VARINT && e.u == 1) t->external = true;
            break;
        default:
            break;
        }
    }
    return st;
}

/* Label for messages: "initializer 'w'" or the caller's description. */
static const char *label(const tparse *t, const char *what, char *buf,
                         size_t n) {
    if (t->name_len)
        snprintf(buf, n, "%s '%.*s'", what,
                 (int)(t->name_len > 200 ? 200 : t->name_len), t->name);
    else
        snprintf(buf, n, "%s", what);
    return buf;
}

static dlp_status check_dims(const tparse *t, const char *lbl,
                             dlp_error *err) {
    if (t->has_bad_dim && t->bad_dim < 0)
        return dlp_fail(err, DLP_ERR_FORMAT, "%s has negative dimension %lld",
                        lbl, (long long)t->bad_dim);
    if (t->has_bad_dim)
        return dlp_fail(err, DLP_ERR_LIMIT,
                        "%s has dimension %lld, above the limit 2^40", lbl,
                        (long long)t->bad_dim);
    if (t->overflow)
        return dlp_fail(err, DLP_ERR_LIMIT,
                        "%s has dimensions whose product overflows int64",
                        lbl);
    return DLP_OK;
}

/* Bytes dims x dtype need; -1 when unknown (strings, unknown dtypes). */
static int64_t tensor_bytes(dlp_dtype dt, int64_t numel, bool *ovf) {
    *ovf = false;
    if (dt == DLP_DT_INT4 || dt == DLP_DT_UINT4) return numel / 2 + numel % 2;
    size_t sz = dlp_dtype_size(dt);
    if (!sz) return -1;
    int64_t b;
    if (!dlp_mul_i64(numel, (int64_t)sz, &b)) {
        *ovf = true;
        return -1;
    }
    return b;
}

/* External-data warnings: the first few individually, the rest counted
 * (a file with a million small external tensors must not make a million
 * warnings; dlp_onnx_read adds the summary). */
#define EXT_WARN_MAX 8
static void ext_warn(dlp_onnx_ctx *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void ext_warn(dlp_onnx_ctx *c, const char *fmt, ...) {
    if (c->n_ext_warn++ >= EXT_WARN_MAX) return;
    char buf[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    dlp_warn(c->warnings, "%s", buf);
}

/* Is the external location a plain relative path inside the model dir? */
static bool safe_location(const char *s, size_t n) {
    if (n == 0 || n > 1024 || s[0] == '/') return false;
    if (memchr(s, 0, n)) return false;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && s[j] != '/' && s[j] != '\\') j++;
        if (j - i == 2 && s[i] == '.' && s[i + 1] == '.') return false;
        i = j + 1;
    }
    return true;
}

/* Reads nbytes of a small external tensor into buf. false (with a warning
 * where useful) when the file is absent, short or unsafe. */
static bool read_external(dlp_onnx_ctx *c, const tparse *t, const char *lbl,
                          uint8_t *buf, size_t nbytes) {
    if (!c->dir || !t->loc) return false;
    if (!safe_location(t->loc, t->loc_len)) {
        ext_warn(c,
                 "%s: external data location is not a relative path inside "
                 "the model directory; contents not read", lbl);
        return false;
    }
    if (t->ext_len >= 0 && (uint64_t)t->ext_len != nbytes) {
        ext_warn(c,
                 "%s: external data length %lld does not match dims x dtype "
                 "(%zu bytes); contents not read",
                 lbl, (long long)t->ext_len, nbytes);
        return false;
    }
    int64_t off = t->ext_off >= 0 ? t->ext_off : 0;
    size_t plen = strlen(c->dir) + 1 + t->loc_len + 1;
    char *path = malloc(plen);
    if (!path) return false;
    snprintf(path, plen, "%s/%.*s", c->dir, (int)t->loc_len, t->loc);
    bool ok = false;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        ext_warn(c,
                 "%s: external data file '%.*s' not found; its contents are "
                 "unknown",
                 lbl, (int)(t->loc_len > 200 ? 200 : t->loc_len), t->loc);
        free(path);
        return false;
    }
    struct stat sb;
    if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size >= 0 &&
        (uint64_t)off <= (uint64_t)sb.st_size &&
        nbytes <= (uint64_t)sb.st_size - (uint64_t)off) {
        size_t got = 0;
        while (got < nbytes) {
            ssize_t r = pread(fd, buf + got, nbytes - got, (off_t)(off + got));
            if (r < 0 && errno == EINTR) continue;
            if (r <= 0) break;
            got += (size_t)r;
        }
        ok = got == nbytes;
    }
    if (!ok)
        ext_warn(c,
                 "%s: external data file '%.*s' is shorter than offset + "
                 "length; contents not read",
                 lbl, (int)(t->loc_len > 200 ? 200 : t->loc_len), t->loc);
    close(fd);
    free(path);
    return ok;
}

/* Fills v's constant contents from the tensor when small and available. */
static dlp_status tensor_contents(dlp_onnx_ctx *c, dlp_graph *g,
                                  const tparse *t, dlp_dtype dt, int v,
                                  const char *lbl, dlp_error *err) {
    int kind = const_kind(dt);
    if (!kind) return DLP_OK;
    int64_t lim = kind == 1 ? DLP_MAX_CONST_ELEMS : DLP_ONNX_MAX_FLOAT_CONST;
    if (t->numel > lim) return DLP_OK;
    size_t n = (size_t)t->numel, esz = dlp_dtype_size(dt);
    uint64_t *bits = malloc((n ? n : 1) * sizeof *bits);
    if (!bits) return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    bool have = false;
    dlp_status st = DLP_OK;
    if (t->has_raw || (t->external && kind == 1)) {
        const uint8_t *src = t->raw;
        uint8_t *ext = NULL;
        if (!t->has_raw) {
            ext = malloc(n * esz + 1);
            if (!ext) {
                free(bits);
                return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
            }
            if (read_external(c, t, lbl, ext, n * esz)) src = ext;
        }
        if (src) {
            for (size_t i = 0; i < n; i++) {
                const uint8_t *p = src + i * esz;
                bits[i] = esz == 1   ? p[0]
                          : esz == 2 ? (uint64_t)p[0] | (uint64_t)p[1] << 8
                          : esz == 4 ? dlp_pb_le32(p)
                                     : dlp_pb_le64(p);
            }
            have = true;
        }
        free(ext);
    } else if (!t->external) {
        int wkind, fnum = typed_field(dt, &wkind);
        size_t got = 0;
        bool any = false;
        dlp_pb r = t->msg;
        dlp_pb_field e;
        while (fnum && (st = dlp_pb_next(&r, &e, err)) == DLP_OK && !e.end) {
            if (e.num != (uint32_t)fnum) continue;
            any = true;
            size_t cnt;
            if (!dlp_pb_count(&e, wkind, &cnt) || cnt > n - got ||
                !dlp_pb_fetch(&e, wkind, bits, &got, n)) {
                st = dlp_fail(err, DLP_ERR_FORMAT,
                              "%s: %s is malformed or holds more than the "
                              "%zu elements its dims declare",
                              lbl, typed_name(fnum), n);
                break;
            }
        }
        if (st == DLP_OK && any && got != n)
            st = dlp_fail(err, DLP_ERR_FORMAT,
                          "%s: %s holds %zu elements, dims declare %zu", lbl,
                          typed_name(fnum), got, n);
        have = st == DLP_OK && any;
        if (n == 0 && st == DLP_OK) have = true;
    }
    if (have) {
        dlp_value *val = &g->values[v];
        if (kind == 1) {
            int64_t *iv = dlp_arena_calloc(g->arena, n ? n : 1, sizeof *iv);
            if (!iv) st = dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
            else {
                for (size_t i = 0; i < n; i++) conv_elem(dt, bits[i], &iv[i], NULL);
                val->ival = iv;
                val->n_const = (int64_t)n;
            }
        } else {
            double *fv = dlp_arena_calloc(g->arena, n ? n : 1, sizeof *fv);
            if (!fv) st = dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
            else {
                for (size_t i = 0; i < n; i++) conv_elem(dt, bits[i], NULL, &fv[i]);
                val->fval = fv;
                val->n_const = (int64_t)n;
            }
        }
    }
    free(bits);
    return st;
}

static dlp_dtype to_dtype(int64_t raw) {
    return raw >= 0 && raw <= DLP_DT_INT4 ? (dlp_dtype)raw : DLP_DT_UNDEFINED;
}

dlp_status dlp_onnx_tensor(dlp_onnx_ctx *c, dlp_graph *g, const dlp_pb *parent,
                           const dlp_pb_field *f, const char *what, int v,
                           int *out_v, dlp_error *err) {
    tparse t;
    char lbl[320];
    dlp_status st = tensor_parse(parent, f, &t, err);
    if (st) return st;
    label(&t, what, lbl, sizeof lbl);
    if ((st = check_dims(&t, lbl, err))) return st;
    dlp_dtype dt = to_dtype(t.dtype_raw);
    bool ovf;
    int64_t nbytes = tensor_bytes(dt, t.numel, &ovf);
    if (ovf)
        return dlp_fail(err, DLP_ERR_LIMIT,
                        "%s: byte size of %lld elements overflows int64", lbl,
                        (long long)t.numel);
    if (t.has_raw && nbytes >= 0 && (uint64_t)nbytes != t.raw_len)
        return dlp_fail(err, DLP_ERR_FORMAT,
                        "%s: raw_data holds %zu bytes but its dims and dtype "
                        "need %lld",
                        lbl, t.raw_len, (long long)nbytes);
    if (v < 0) {
        if (t.name_len == 0)
            return dlp_fail(err, DLP_ERR_FORMAT, "%s at byte %zu has no name",
                            what, f->offset);
        v = dlp_onnx_value(c, g, t.name, t.name_len, err);
        if (v < 0) return err ? err->code : DLP_ERR_NOMEM;
    }
    if (out_v) *out_v = v;
    dlp_value *val = &g->values[v];
    val->dtype = dt;
    val->shape.rank = t.rank > DLP_MAX_RANK ? -1 : t.rank;
    for (int i = 0; i < t.rank && i < DLP_MAX_RANK; i++) {
        val->shape.dims[i].value = t.dims[i];
        val->shape.dims[i].sym = -1;
    }
    val->stored_bytes = nbytes > 0 ? nbytes : 0;
    if (t.external) val->flags |= DLP_V_EXTERNAL;
    return tensor_contents(c, g, &t, dt, v, lbl, err);
}

dlp_status dlp_onnx_sparse_tensor(dlp_onnx_ctx *c, dlp_graph *g,
                                  const dlp_pb *parent, const dlp_pb_field *f,
                                  int *out_v, dlp_error *err) {
    dlp_pb r;
    dlp_status st = dlp_pb_sub(parent, f, "SparseTensorProto", &r, err);
    if (st) return st;
    tparse vals, idx, dims;
    bool have_vals = false, have_idx = false;
    memset(&dims, 0, sizeof dims);
    dims.numel = 1;
    dlp_pb_field e;
    while ((st = dlp_pb_next(&r, &e, err)) == DLP_OK && !e.end) {
        if (e.num == 1 && e.wire == DLP_PB_LEN) {
            if ((st = tensor_parse(&r, &e, &vals, err))) return st;
            have_vals = true;
        } else if (e.num == 2 && e.wire == DLP_PB_LEN) {
            if ((st = tensor_parse(&r, &e, &idx, err))) return st;
            have_idx = true;
        } else if (e.num == 3) {
            size_t n;
            if (!dlp_pb_count(&e, DLP_PB_VARINT, &n))
                return dlp_fail(err, DLP_ERR_FORMAT,
                                "malformed SparseTensorProto.dims at byte %zu",
                                e.offset);
            if (e.wire == DLP_PB_VARINT) {
                add_dim(&dims, (int64_t)e.u);
            } else {
                const uint8_t *p = e.data, *end = e.data + e.len;
                uint64_t d;
                while (p < end && dlp_pb_varint(&p, end, &d))
                    add_dim(&dims, (int64_t)d);
            }
        }
    }
    if (st) return st;
    if (!have_vals || vals.name_len == 0)
        return dlp_fail(err, DLP_ERR_FORMAT,
                        "sparse initializer at byte %zu has no named values "
                        "tensor",
                        f->offset);
    char lbl[320];
    label(&vals, "sparse initializer", lbl, sizeof lbl);
    if ((st = check_dims(&vals, lbl, err)) || (st = check_dims(&dims, lbl, err)))
        return st;
    if (have_idx && (st = check_dims(&idx, lbl, err))) return st;
    int v = dlp_onnx_value(c, g, vals.name, vals.name_len, err);
    if (v < 0) return err ? err->code : DLP_ERR_NOMEM;
    dlp_value *val = &g->values[v];
    val->dtype = to_dtype(vals.dtype_raw);
    val->shape.rank = dims.rank > DLP_MAX_RANK ? -1 : dims.rank;
    for (int i = 0; i < dims.rank && i < DLP_MAX_RANK; i++) {
        val->shape.dims[i].value = dims.dims[i];
        val->shape.dims[i].sym = -1;
    }
    bool o1, o2;
    int64_t b1 = tensor_bytes(val->dtype, vals.numel, &o1);
    int64_t b2 = have_idx ? tensor_bytes(to_dtype(idx.dtype_raw), idx.numel, &o2)
                          : 0;
    if (!have_idx) o2 = false;
    int64_t tot = 0;
    if (o1 || o2 || !dlp_add_i64(b1 > 0 ? b1 : 0, b2 > 0 ? b2 : 0, &tot))
        return dlp_fail(err, DLP_ERR_LIMIT, "%s: byte size overflows int64",
                        lbl);
    val->stored_bytes = tot;
    if (vals.external) val->flags |= DLP_V_EXTERNAL;
    *out_v = v;
    return DLP_OK;
}

/* ---- ValueInfoProto / TypeProto --------------------------------------- */

static dlp_status read_dim(dlp_onnx_ctx *c, dlp_graph *g, const dlp_pb *parent,
                           const dlp_pb_field *f, bool strict,
                           const dlp_onnx_vinfo *vi, dlp_dim *d,
                           dlp_error *err) {
    dlp_pb r;
    dlp_status st = dlp_pb_sub(parent, f, "TensorShapeProto.Dimension", &r, err);
    if (st) return st;
    d->value = -1;
    d->sym = -1;
    dlp_pb_field e;
    int nl = (int)(vi->name_len > 200 ? 200 : vi->name_len);
    while ((st = dlp_pb_next(&r, &e, err)) == DLP_OK && !e.end) {
        if (e.num == 1 && e.wire == DLP_PB_VARINT) {
            int64_t x = (int64_t)e.u;
            if (x < 0 && strict)
                return dlp_fail(err, DLP_ERR_FORMAT,
                                "tensor '%.*s' has negative dimension %lld",
                                nl, vi->name, (long long)x);
            if (x > DLP_ONNX_MAX_DIM && strict)
                return dlp_fail(err, DLP_ERR_LIMIT,
                                "tensor '%.*s' has dimension %lld, above the "
                                "limit 2^40",
                                nl, vi->name, (long long)x);
            d->value = x >= 0 && x <= DLP_ONNX_MAX_DIM ? x : -1;
            d->sym = -1;
        } else if (e.num == 2 && e.wire == DLP_PB_LEN) {
            d->value = -1;
            d->sym = -1;
            if (e.len) {
                if (e.len > 4096)
                    return dlp_fail(err, DLP_ERR_LIMIT,
                                    "tensor '%.*s': dimension name of %zu "
                                    "bytes",
                                    nl, vi->name, e.len);
                int s = dlp_strmap_get(&c->syms, (const char *)e.data, e.len);
                if (s < 0) {
                    const dlp_graph *root = g;
                    while (root->parent) root = root->parent;
                    if (root->n_syms >= DLP_ONNX_MAX_SYMS)
                        return dlp_fail(err, DLP_ERR_LIMIT,
                                        "model has more than %d symbolic "
                                        "dimension names",
                                        DLP_ONNX_MAX_SYMS);
                    s = dlp_graph_sym(g, (const char *)e.data, e.len);
                    if (s < 0 || !dlp_strmap_put(&c->syms, root->syms[s],
                                                 e.len, s))
                        return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
                }
                d->sym = s;
            }
        }
    }
    return st;
}

static dlp_status read_tensor_type(dlp_onnx_ctx *c, dlp_graph *g,
                                   const dlp_pb *parent, const dlp_pb_field *f,
                                   bool strict, dlp_onnx_vinfo *vi,
                                   dlp_error *err) {
    dlp_pb r;
    dlp_status st = dlp_pb_sub(parent, f, "TypeProto.Tensor", &r, err);
    if (st) return st;
    dlp_pb_field e;
    while ((st = dlp_pb_next(&r, &e, err)) == DLP_OK && !e.end) {
        if (e.num == 1 && e.wire == DLP_PB_VARINT) {
            vi->dtype = to_dtype((int64_t)e.u);
        } else if (e.num == 2 && e.wire == DLP_PB_LEN) {
            dlp_pb sr;
            if ((st = dlp_pb_sub(&r, &e, "TensorShapeProto", &sr, err)))
                return st;
            dlp_shape sh;
            sh.rank = 0;
            dlp_pb_field d;
            while ((st = dlp_pb_next(&sr, &d, err)) == DLP_OK && !d.end) {
                if (d.num != 1) continue;
                dlp_dim dim;
                if ((st = read_dim(c, g, &sr, &d, strict, vi, &dim, err)))
                    return st;
                if (sh.rank >= 0 && sh.rank < DLP_MAX_RANK)
                    sh.dims[sh.rank++] = dim;
                else
                    sh.rank = -1; /* rank above DLP_MAX_RANK: unshaped */
            }
            if (st) return st;
            /* a graph input's known dims must multiply within int64 */
            int64_t numel = 1;
            for (int i = 0; strict && i < sh.rank; i++)
                if (sh.dims[i].value >= 0 &&
                    !dlp_mul_i64(numel, sh.dims[i].value, &numel))
                    return dlp_fail(err, DLP_ERR_LIMIT,
                                    "tensor '%.*s' has dimensions whose "
                                    "product overflows int64",
                                    (int)(vi->name_len > 200 ? 200
                                                             : vi->name_len),
                                    vi->name);
            vi->shape = sh;
        }
    }
    return st;
}

dlp_status dlp_onnx_value_info(dlp_onnx_ctx *c, dlp_graph *g,
                               const dlp_pb *parent, const dlp_pb_field *f,
                               bool strict, dlp_onnx_vinfo *out,
                               dlp_error *err) {
    memset(out, 0, sizeof *out);
    out->name = "";
    out->shape.rank = -1;
    dlp_pb r;
    dlp_status st = dlp_pb_sub(parent, f, "ValueInfoProto", &r, err);
    if (st) return st;
    dlp_pb_field e;
    const dlp_pb_field *type = NULL;
    dlp_pb_field type_f;
    /* the name may follow the type: find both before reading the type */
    while ((st = dlp_pb_next(&r, &e, err)) == DLP_OK && !e.end) {
        if (e.num == 1 && e.wire == DLP_PB_LEN) {
            out->name = (const char *)e.data;
            out->name_len = e.len;
        } else if (e.num == 2 && e.wire == DLP_PB_LEN) {
            type_f = e;
            type = &type_f;
        }
    }
    if (st || !type) return st;
    dlp_pb tr;
    if ((st = dlp_pb_sub(&r, type, "TypeProto", &tr, err))) return st;
    out->has_type = true;
    while ((st = dlp_pb_next(&tr, &e, err)) == DLP_OK && !e.end) {
        if (e.num == 1 && e.wire == DLP_PB_LEN) {
            if ((st = read_tensor_type(c, g, &tr, &e, strict, out, err)))
                return st;
        }
        /* sequence (4), map (5), sparse (8), optional (9): left unknown */
    }
    return st;
}
