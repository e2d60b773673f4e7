/*
 * pb.h — internal to libdlperf. A zero-copy protobuf wire-format reader:
 * walks the fields of one message held in memory, handing out varints,
 * fixed32/fixed64 words and pointers to length-delimited payloads (strings,
 * bytes, sub-messages, packed arrays) without copying them. Every length is
 * checked against the end of the enclosing message; nesting is limited.
 *
 * Usage (a message's fields, in file order):
 *
 *     dlp_pb r = dlp_pb_begin(bytes, len, 0);
 *     dlp_pb_field f;
 *     while ((st = dlp_pb_next(&r, &f, err)) == DLP_OK && !f.end) {
 *         if (f.num == 1 && f.wire == DLP_PB_LEN) { ... f.data, f.len ... }
 *     }
 */
#ifndef DLP_PB_H
#define DLP_PB_H

#include "../core/core.h"

/* Messages nested deeper than this are rejected (ONNX needs about 3 levels
 * per subgraph level, and subgraphs stop at DLP_MAX_SUBGRAPH_DEPTH). */
#define DLP_PB_MAX_DEPTH 64

enum {
    DLP_PB_VARINT = 0,
    DLP_PB_I64 = 1,
    DLP_PB_LEN = 2,
    DLP_PB_I32 = 5,
};

typedef struct {
    const uint8_t *base; /* start of the outermost buffer (for offsets) */
    const uint8_t *p;    /* next unread byte */
    const uint8_t *end;  /* one past the message's last byte */
    int depth;           /* 0 for the outermost message */
} dlp_pb;

typedef struct {
    bool end;            /* no more fields: the other members are unset */
    uint32_t num;        /* field number (>= 1) */
    int wire;            /* DLP_PB_* wire type */
    uint64_t u;          /* VARINT value, or I32/I64 bits */
    const uint8_t *data; /* LEN payload */
    size_t len;
    size_t offset;       /* byte offset of the field's tag from base */
} dlp_pb_field;

/* A reader over len bytes at p, as the outermost message (depth 0). */
dlp_pb dlp_pb_begin(const void *p, size_t len);

/* A reader over the payload of a LEN field of `parent`; DLP_ERR_LIMIT once
 * nesting exceeds DLP_PB_MAX_DEPTH. `what` names the message for errors. */
dlp_status dlp_pb_sub(const dlp_pb *parent, const dlp_pb_field *f,
                      const char *what, dlp_pb *out, dlp_error *err);

/* Reads the next field. At the end of the message sets f->end. Fails with
 * DLP_ERR_FORMAT on a truncated varint, a length past the end, field number
 * 0 or a group / unknown wire type. */
dlp_status dlp_pb_next(dlp_pb *r, dlp_pb_field *f, dlp_error *err);

/* Reads a varint at *p (< end) into *out, advancing *p; false when it is
 * truncated or longer than 10 bytes. */
bool dlp_pb_varint(const uint8_t **p, const uint8_t *end, uint64_t *out);

/* Repeated scalar fields arrive either packed (one LEN field) or one field
 * per element. These count and fetch elements of either form:
 *   kind DLP_PB_VARINT (int32/int64/uint64/bool/enum), DLP_PB_I32 (float),
 *   DLP_PB_I64 (double). */
/* Number of elements f contributes; false when a packed payload is
 * malformed (truncated varint, length not a multiple of the width) or the
 * wire type fits neither form. */
bool dlp_pb_count(const dlp_pb_field *f, int kind, size_t *n);
/* Appends f's elements as raw 64-bit words to out[*n..] (room is the
 * caller's, sized from dlp_pb_count); I32 words are zero-extended. */
bool dlp_pb_fetch(const dlp_pb_field *f, int kind, uint64_t *out, size_t *n,
                  size_t cap);

/* Little-endian loads from unaligned memory. */
static inline uint32_t dlp_pb_le32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}
static inline uint64_t dlp_pb_le64(const uint8_t *p) {
    return (uint64_t)dlp_pb_le32(p) | (uint64_t)dlp_pb_le32(p + 4) << 32;
}

#endif /* DLP_PB_H */
