/*
 * pb.c — the protobuf wire-format reader behind the ONNX reader.
 *
 * Why our own decoder rather than protobuf-c: protobuf-c unpacks a whole
 * message tree, copying every field, including each initializer's raw_data
 * weight bytes, into heap memory. dlperf needs only the graph's structure,
 * names, dims and a few small constants, so it walks the memory-mapped file
 * in place: strings and payloads are pointers into the mapping and weight
 * bytes are skipped by length without being touched, so a 2 GB model
 * inspects in milliseconds using a few MB. A hand-written decoder is also
 * small enough to check every length against its enclosing message and cap
 * nesting depth, which matters because model files come from strangers.
 *
 * Wire format recap: a message is a sequence of (tag, payload); tag =
 * field_number << 3 | wire_type as a varint. Wire types: 0 varint, 1 fixed
 * 64-bit little-endian, 2 length-delimited (varint length + bytes), 5 fixed
 * 32-bit. Types 3/4 (groups) are deprecated and unused by ONNX: rejected.
 */
#include "pb.h"

dlp_pb dlp_pb_begin(const void *p, size_t len) {
    dlp_pb r;
    r.base = p;
    r.p = p;
    r.end = r.p + len;
    r.depth = 0;
    return r;
}

bool dlp_pb_varint(const uint8_t **pp, const uint8_t *end, uint64_t *out) {
    const uint8_t *p = *pp;
    uint64_t v = 0;
    for (int shift = 0; shift < 70; shift += 7) {
        if (p >= end) return false;
        uint8_t b = *p++;
        if (shift == 63 && b > 1) return false; /* more than 64 bits */
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *out = v;
            *pp = p;
            return true;
        }
    }
    return false;
}

dlp_status dlp_pb_sub(const dlp_pb *parent, const dlp_pb_field *f,
                      const char *what, dlp_pb *out, dlp_error *err) {
    if (f->wire != DLP_PB_LEN)
        return dlp_fail(err, DLP_ERR_FORMAT,
                        "malformed protobuf: %s at byte %zu has wire type %d, "
                        "expected a length-delimited message",
                        what, f->offset, f->wire);
    if (parent->depth + 1 > DLP_PB_MAX_DEPTH)
        return dlp_fail(err, DLP_ERR_LIMIT,
                        "protobuf messages nested deeper than %d levels "
                        "(%s at byte %zu)",
                        DLP_PB_MAX_DEPTH, what, f->offset);
    out->base = parent->base;
    out->p = f->data;
    out->end = f->data + f->len;
    out->depth = parent->depth + 1;
    return DLP_OK;
}

dlp_status dlp_pb_next(dlp_pb *r, dlp_pb_field *f, dlp_error *err) {
    f->end = false;
    if (r->p >= r->end) {
        f->end = true;
        return DLP_OK;
    }
    size_t off = (size_t)(r->p - r->base);
    uint64_t tag;
    if (!dlp_pb_varint(&r->p, r->end, &tag))
        return dlp_fail(err, DLP_ERR_FORMAT,
                        "malformed protobuf: truncated field tag at byte %zu",
                        off);
    uint64_t num = tag >> 3;
    int wire = (int)(tag & 7);
    if (num == 0 || num > 536870911u)
        return dlp_fail(err, DLP_ERR_FORMAT,
                        "malformed protobuf: invalid field number %llu at "
                        "byte %zu",
                        (unsigned long long)num, off);
    f->num = (uint32_t)num;
    f->wire = wire;
    f->offset = off;
    f->u = 0;
    f->data = NULL;
    f->len = 0;
    size_t left;
    switch (wire) {
    case DLP_PB_VARINT:
        if (!dlp_pb_varint(&r->p, r->end, &f->u))
            return dlp_fail(err, DLP_ERR_FORMAT,
                            "malformed protobuf: truncated varint in field "
                            "%u at byte %zu",
                            f->num, off);
        return DLP_OK;
    case DLP_PB_I64:
        if ((size_t)(r->end - r->p) < 8)
            return dlp_fail(err, DLP_ERR_FORMAT,
                            "malformed protobuf: truncated 64-bit field %u at "
                            "byte %zu",
                            f->num, off);
        f->u = dlp_pb_le64(r->p);
        r->p += 8;
        return DLP_OK;
    case DLP_PB_I32:
        if ((size_t)(r->end - r->p) < 4)
            return dlp_fail(err, DLP_ERR_FORMAT,
                            "malformed protobuf: truncated 32-bit field %u at "
                            "byte %zu",
                            f->num, off);
        f->u = dlp_pb_le32(r->p);
        r->p += 4;
        return DLP_OK;
    case DLP_PB_LEN: {
        uint64_t n;
        if (!dlp_pb_varint(&r->p, r->end, &n))
            return dlp_fail(err, DLP_ERR_FORMAT,
                            "malformed protobuf: truncated length of field %u "
                            "at byte %zu",
                            f->num, off);
        left = (size_t)(r->end - r->p);
        if (n > left)
            return dlp_fail(err, DLP_ERR_FORMAT,
                            "malformed or truncated protobuf: field %u at "
                            "byte %zu declares %llu bytes but only %zu remain",
                            f->num, off, (unsigned long long)n, left);
        f->data = r->p;
        f->len = (size_t)n;
        r->p += n;
        return DLP_OK;
    }
    default:
        return dlp_fail(err, DLP_ERR_FORMAT,
                        "malformed protobuf: unsupported wire type %d in "
                        "field %u at byte %zu",
                        wire, f->num, off);
    }
}

bool dlp_pb_count(const dlp_pb_field *f, int kind, size_t *n) {
    if (f->wire == kind) {
        *n = 1;
        return true;
    }
    if (f->wire != DLP_PB_LEN) return false;
    if (kind == DLP_PB_I32) {
        if (f->len % 4) return false;
        *n = f->len / 4;
        return true;
    }
    if (kind == DLP_PB_I64) {
        if (f->len % 8) return false;
        *n = f->len / 8;
        return true;
    }
    /* varints: a terminating byte has its top bit clear */
    size_t c = 0;
    for (size_t i = 0; i < f->len; i++)
        if (!(f->data[i] & 0x80)) c++;
    if (f->len && (f->data[f->len - 1] & 0x80)) return false;
    *n = c;
    return true;
}

bool dlp_pb_fetch(const dlp_pb_field *f, int kind, uint64_t *out, size_t *n,
                  size_t cap) {
    if (f->wire == kind) {
        if (*n >= cap) return false;
        out[(*n)++] = f->u;
        return true;
    }
    if (f->wire != DLP_PB_LEN) return false;
    const uint8_t *p = f->data, *end = f->data + f->len;
    while (p < end) {
        if (*n >= cap) return false;
        uint64_t v;
        if (kind == DLP_PB_I32) {
            if (end - p < 4) return false;
            v = dlp_pb_le32(p);
            p += 4;
        } else if (kind == DLP_PB_I64) {
            if (end - p < 8) return false;
            v = dlp_pb_le64(p);
            p += 8;
        } else if (!dlp_pb_varint(&p, end, &v)) {
            return false;
        }
        out[(*n)++] = v;
    }
    return true;
}
