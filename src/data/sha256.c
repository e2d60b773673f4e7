/*
 * sha256.c — SHA-256 (FIPS 180-4), used to verify that a graph file in a
 * pack still has the content its name (the first 16 hex digits of its
 * SHA-256, data/FORMAT.md) promises.
 *
 * Two block functions with the same contract (64-byte block into state
 * h[8]): the portable one, and on x86-64 CPUs with the SHA extensions one
 * built on sha256rnds2/msg1/msg2 (about 5x faster, chosen at run time by
 * cpuid). The test vectors in tests/test_dataset.c run through whichever
 * this CPU uses; DLP_SHA256_PORTABLE=1 in the environment forces the
 * portable one so both are testable.
 */
#include "data/data.h"

#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
    0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
    0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
    0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
    0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
    0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
    0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
    0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

static inline uint32_t ror(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

/* One 64-byte block into the state h[8]. */
static void block(uint32_t h[8], const unsigned char *p) {
    uint32_t w[64];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
               (uint32_t)p[4 * i + 2] << 8 | (uint32_t)p[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = ror(w[i - 15], 7) ^ ror(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = ror(w[i - 2], 17) ^ ror(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3];
    uint32_t e = h[4], f = h[5], g = h[6], k = h[7];
    for (int i = 0; i < 64; i++) {
        uint32_t t1 = k + (ror(e, 6) ^ ror(e, 11) ^ ror(e, 25)) +
                      ((e & f) ^ (~e & g)) + K[i] + w[i];
        uint32_t t2 = (ror(a, 2) ^ ror(a, 13) ^ ror(a, 22)) +
                      ((a & b) ^ (a & c) ^ (b & c));
        k = g, g = f, f = e, e = d + t1;
        d = c, c = b, b = a, a = t1 + t2;
    }
    h[0] += a, h[1] += b, h[2] += c, h[3] += d;
    h[4] += e, h[5] += f, h[6] += g, h[7] += k;
}

#if defined(__x86_64__)
/* Four rounds' constants K[4g..4g+3] as one vector. */
#define KV(g) _mm_loadu_si128((const __m128i *)&K[4 * (g)])

__attribute__((target("sha,sse4.1,ssse3")))
static void block_shani(uint32_t h[8], const unsigned char *p) {
    const __m128i mask = _mm_set_epi64x(0x0c0d0e0f08090a0bull,
                                        0x0405060700010203ull);
    /* state as the instructions want it: s0 = ABEF, s1 = CDGH */
    __m128i t = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)&h[0]), 0xB1);
    __m128i s1 = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)&h[4]), 0x1B);
    __m128i s0 = _mm_alignr_epi8(t, s1, 8);
    s1 = _mm_blend_epi16(s1, t, 0xF0);
    const __m128i save0 = s0, save1 = s1;
    __m128i m[4];
    for (int g = 0; g < 16; g++) { /* 4 rounds per step */
        if (g < 4)
            m[g] = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 16 * g)),
                                    mask);
        __m128i msg = _mm_add_epi32(m[g & 3], KV(g));
        s1 = _mm_sha256rnds2_epu32(s1, s0, msg);
        if (g >= 3 && g <= 14) { /* W for the step after next */
            __m128i w = _mm_alignr_epi8(m[g & 3], m[(g + 3) & 3], 4);
            m[(g + 1) & 3] = _mm_sha256msg2_epu32(
                _mm_add_epi32(m[(g + 1) & 3], w), m[g & 3]);
        }
        s0 = _mm_sha256rnds2_epu32(s0, s1, _mm_shuffle_epi32(msg, 0x0E));
        if (g >= 1 && g <= 12)
            m[(g + 3) & 3] = _mm_sha256msg1_epu32(m[(g + 3) & 3], m[g & 3]);
    }
    s0 = _mm_add_epi32(s0, save0);
    s1 = _mm_add_epi32(s1, save1);
    t = _mm_shuffle_epi32(s0, 0x1B);
    s1 = _mm_shuffle_epi32(s1, 0xB1);
    _mm_storeu_si128((__m128i *)&h[0], _mm_blend_epi16(t, s1, 0xF0));
    _mm_storeu_si128((__m128i *)&h[4], _mm_alignr_epi8(s1, t, 8));
}

static bool have_shani(void) {
    static int cached = -1;
    if (cached < 0) {
        unsigned a, b, c, d;
        bool ok = __get_cpuid(1, &a, &b, &c, &d) && (c & (1u << 9)) &&
                  (c & (1u << 19)) && __get_cpuid_count(7, 0, &a, &b, &c, &d) &&
                  (b & (1u << 29));
        const char *env = getenv("DLP_SHA256_PORTABLE");
        if (env && env[0] == '1') ok = false;
        cached = ok;
    }
    return cached;
}
#endif

/* Hashes n whole blocks. */
static void blocks(uint32_t h[8], const unsigned char *p, size_t n) {
#if defined(__x86_64__)
    if (have_shani()) {
        for (size_t i = 0; i < n; i++) block_shani(h, p + 64 * i);
        return;
    }
#endif
    for (size_t i = 0; i < n; i++) block(h, p + 64 * i);
}

void dlp_sha256(const void *data, size_t len, unsigned char out[32]) {
    uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                     0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    const unsigned char *p = data;
    size_t n = len;
    blocks(h, p, n / 64);
    p += n / 64 * 64;
    n %= 64;
    unsigned char tail[128] = {0};
    if (n) memcpy(tail, p, n);
    tail[n] = 0x80;
    size_t tl = n + 9 <= 64 ? 64 : 128;
    uint64_t bits = (uint64_t)len * 8;
    for (int i = 0; i < 8; i++) tail[tl - 1 - i] = (unsigned char)(bits >> (8 * i));
    blocks(h, tail, tl / 64);
    for (int i = 0; i < 8; i++) {
        out[4 * i] = (unsigned char)(h[i] >> 24);
        out[4 * i + 1] = (unsigned char)(h[i] >> 16);
        out[4 * i + 2] = (unsigned char)(h[i] >> 8);
        out[4 * i + 3] = (unsigned char)h[i];
    }
}

void dlp_sha256_hex16(const void *data, size_t len, char out[17]) {
    static const char hex[] = "0123456789abcdef";
    unsigned char d[32];
    dlp_sha256(data, len, d);
    for (int i = 0; i < 8; i++) {
        out[2 * i] = hex[d[i] >> 4];
        out[2 * i + 1] = hex[d[i] & 15];
    }
    out[16] = '\0';
}
