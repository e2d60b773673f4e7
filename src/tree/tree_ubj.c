/*
 * tree_ubj.c — a structural check of Universal Binary JSON (UBJSON, draft
 * 12 of ubjson.org: what XGBoost >= 1.6 writes for {"format": "ubj"}),
 * run on a booster's bytes before they reach XGBoost.
 *
 * Why: XGBoost's readers trust the lengths and counts in the bytes they
 * are given. A model file's CRC catches damage in transit, not a file
 * written to mislead; this walk guarantees that every length, count and
 * nesting level (at most UBJ_MAX_DEPTH) stays inside the buffer and that
 * one value fills it exactly, so XGBoost only ever parses well-formed
 * UBJSON (what the values mean is still its own business).
 *
 * The grammar walked (all numbers big-endian):
 *   value  := 'Z' | 'T' | 'F'                     null, true, false
 *           | 'i' | 'U' | 'C' 1 byte | 'I' 2 | 'l' | 'd' 4 | 'L' | 'D' 8
 *           | ('S' | 'H') int n, n bytes           string, big number
 *           | '[' body(']') | '{' body('}')
 *   int    := ('i' | 'U' | 'I' | 'l' | 'L') bytes  (a length: >= 0)
 *   body(e):= '$' type '#' int n, n elements       (typed: no markers)
 *           | '#' int n, n elements
 *           | elements, 'N' no-ops allowed, then e
 *   an object's element is a key (int n, n bytes; no 'S') and a value.
 * Typed containers of zero-size types (Z, T, F, N) and of containers are
 * refused: a count of them would cost no bytes, and XGBoost writes none.
 */
#include "tree/tree.h"

#include <stdint.h>

#define UBJ_MAX_DEPTH 64

typedef struct {
    const uint8_t *b;
    size_t n, at;       /* buffer, its length, the read position */
} ubj_in;

static bool have(const ubj_in *s, uint64_t k) { return k <= s->n - s->at; }

/* Payload bytes of a fixed-size type; 0 for Z/T/F/N; SIZE_MAX otherwise. */
static size_t fixed_size(uint8_t m) {
    switch (m) {
    case 'Z': case 'T': case 'F': case 'N': return 0;
    case 'i': case 'U': case 'C': return 1;
    case 'I': return 2;
    case 'l': case 'd': return 4;
    case 'L': case 'D': return 8;
    default: return SIZE_MAX;
    }
}

/* A length: an integer marker and its bytes, non-negative. */
static bool length(ubj_in *s, uint64_t *out) {
    if (!have(s, 1)) return false;
    uint8_t m = s->b[s->at++];
    size_t k = m == 'i' || m == 'U' ? 1 : m == 'I' ? 2 : m == 'l' ? 4
             : m == 'L' ? 8 : 0;
    if (!k || !have(s, k)) return false;
    uint64_t v = 0;
    for (size_t i = 0; i < k; i++) v = v << 8 | s->b[s->at + i];
    s->at += k;
    if (m != 'U' && (v >> (8 * k - 1) & 1)) return false;   /* negative */
    *out = v;
    return true;
}

static bool skip(ubj_in *s, uint64_t k) {
    if (!have(s, k)) return false;
    s->at += (size_t)k;
    return true;
}

static bool value(ubj_in *s, uint8_t m, int depth);

/* An object key or a string's bytes: a length, then that many bytes. */
static bool key(ubj_in *s) {
    uint64_t k;
    return length(s, &k) && skip(s, k);
}

static bool body(ubj_in *s, bool object, int depth) {
    if (depth > UBJ_MAX_DEPTH) return false;
    uint8_t type = 0;
    uint64_t count;
    if (have(s, 1) && s->b[s->at] == '$') {
        s->at++;
        if (!have(s, 2)) return false;
        type = s->b[s->at++];
        size_t fs = fixed_size(type);
        if (fs == 0 || (fs == SIZE_MAX && type != 'S' && type != 'H'))
            return false;
        if (s->b[s->at] != '#') return false;   /* '$' needs a count */
    }
    if (have(s, 1) && s->b[s->at] == '#') {
        s->at++;
        if (!length(s, &count)) return false;
        size_t fs = type ? fixed_size(type) : SIZE_MAX;
        if (!object && fs != SIZE_MAX)       /* a typed array of numbers */
            return count <= (s->n - s->at) / fs && skip(s, count * fs);
        /* every element takes at least one byte: the loop is bounded */
        for (uint64_t i = 0; i < count; i++) {
            if (!have(s, 1)) return false;
            if (object && !key(s)) return false;
            uint8_t m = type;
            if (!m) {
                if (!have(s, 1)) return false;
                m = s->b[s->at++];
            }
            if (!value(s, m, depth + 1)) return false;
        }
        return true;
    }
    const uint8_t end = object ? '}' : ']';
    for (;;) {
        if (!have(s, 1)) return false;
        uint8_t c = s->b[s->at];
        if (c == end) {
            s->at++;
            return true;
        }
        if (c == 'N') {
            s->at++;
            continue;
        }
        if (object && !key(s)) return false;
        if (!have(s, 1)) return false;
        uint8_t m = s->b[s->at++];
        if (!value(s, m, depth + 1)) return false;
    }
}

static bool value(ubj_in *s, uint8_t m, int depth) {
    switch (m) {
    case 'Z': case 'T': case 'F': return true;
    case 'S': case 'H': return key(s);
    case '[': return body(s, false, depth);
    case '{': return body(s, true, depth);
    default: {
        size_t fs = fixed_size(m);
        return fs != SIZE_MAX && fs > 0 && skip(s, fs);
    }
    }
}

bool dlp_ubj_check(const void *buf, size_t len, size_t *bad_at) {
    ubj_in s = {buf, buf ? len : 0, 0};
    bool ok = have(&s, 1);
    if (ok) {
        uint8_t m = s.b[s.at++];
        ok = value(&s, m, 0) && s.at == s.n;
    }
    if (bad_at) *bad_at = ok ? len : s.at;
    return ok;
}
