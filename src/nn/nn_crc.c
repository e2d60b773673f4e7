/*
 * nn_crc.c — CRC-32 (IEEE 802.3, the zlib / PNG polynomial, reflected) of
 * model files, the checksum every dlperf model file ends with.
 *
 * Why by hand: `dlperf predict` checks the whole of every file it loads,
 * 5.8 MB for an inference request with the shipped models/ (the workspace
 * forests of roofline-inference.dlpm are 5.4 MB of it), and perf record
 * of ResNet-50's prediction put zlib's crc32_z at 27% of the process's
 * CPU time (forty-second session, docs/PREDICT.md "Speed"): Debian's
 * zlib 1.2.13 computes it with tables, about 1.7 GB/s on the project's
 * VM. On x86-64 with PCLMULQDQ this folds 64 bytes at a time with
 * carry-less multiplications (Intel's "Fast CRC Computation for Generic
 * Polynomials Using PCLMULQDQ Instruction", 2009: fold by four 128-bit
 * lanes, fold to one, reduce 128 -> 64 -> 32 bits, Barrett reduction),
 * and zlib does the head, the tail and every other machine. The values
 * are zlib's (tests/test_nn_engine.c, test_crc32_vs_zlib, compares them
 * on many lengths, offsets and chained calls), so files stay valid.
 */
#include "nn/nn.h"

#include <stdint.h>
#include <string.h>
#include <zlib.h>

/* zlib over any length (it takes a uInt: 1 GiB pieces) */
static uint32_t crc_zlib(uint32_t crc, const uint8_t *p, size_t n) {
    uLong c = crc;
    while (n > 0) {
        uInt piece = n > (1u << 30) ? (1u << 30) : (uInt)n;
        c = crc32(c, p, piece);
        p += piece;
        n -= piece;
    }
    return (uint32_t)c;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

#define FOLD_TARGET __attribute__((target("pclmul,sse4.1")))

/* x folded over 128 bits by the constant pair k, then the next block d */
FOLD_TARGET static inline __m128i fold(__m128i x, __m128i k, __m128i d) {
    __m128i lo = _mm_clmulepi64_si128(x, k, 0x00);
    __m128i hi = _mm_clmulepi64_si128(x, k, 0x11);
    return _mm_xor_si128(_mm_xor_si128(lo, hi), d);
}

/* The CRC register (not inverted) after n bytes of p, n >= 64 and a
 * multiple of 16. */
FOLD_TARGET static uint32_t crc_fold(uint32_t crc, const uint8_t *p, size_t n) {
    /* x^(4*128+32), x^(4*128-32) mod P; x^(128+32), x^(128-32); x^64;
     * P and floor(x^64 / P), bit-reflected */
    const __m128i k1k2 = _mm_set_epi64x(0x1c6e41596LL, 0x154442bd4LL);
    const __m128i k3k4 = _mm_set_epi64x(0x0ccaa009eLL, 0x1751997d0LL);
    const __m128i k5 = _mm_set_epi64x(0, 0x163cd6124LL);
    const __m128i poly = _mm_set_epi64x(0x1f7011641LL, 0x1db710641LL);
    const __m128i mask32 = _mm_set_epi32(0, 0, 0, -1);
    __m128i x1 = _mm_loadu_si128((const __m128i *)p);
    __m128i x2 = _mm_loadu_si128((const __m128i *)(p + 16));
    __m128i x3 = _mm_loadu_si128((const __m128i *)(p + 32));
    __m128i x4 = _mm_loadu_si128((const __m128i *)(p + 48));
    x1 = _mm_xor_si128(x1, _mm_cvtsi32_si128((int)crc));
    p += 64;
    n -= 64;
    for (; n >= 64; p += 64, n -= 64) {
        x1 = fold(x1, k1k2, _mm_loadu_si128((const __m128i *)p));
        x2 = fold(x2, k1k2, _mm_loadu_si128((const __m128i *)(p + 16)));
        x3 = fold(x3, k1k2, _mm_loadu_si128((const __m128i *)(p + 32)));
        x4 = fold(x4, k1k2, _mm_loadu_si128((const __m128i *)(p + 48)));
    }
    x1 = fold(x1, k3k4, x2);
    x1 = fold(x1, k3k4, x3);
    x1 = fold(x1, k3k4, x4);
    for (; n >= 16; p += 16, n -= 16)
        x1 = fold(x1, k3k4, _mm_loadu_si128((const __m128i *)p));
    /* 128 -> 64 bits */
    __m128i t = _mm_clmulepi64_si128(x1, k3k4, 0x10);
    x1 = _mm_xor_si128(t, _mm_srli_si128(x1, 8));
    /* 64 -> 32 bits */
    t = _mm_clmulepi64_si128(_mm_and_si128(x1, mask32), k5, 0x00);
    x1 = _mm_xor_si128(t, _mm_srli_si128(x1, 4));
    /* Barrett reduction */
    t = _mm_clmulepi64_si128(_mm_and_si128(x1, mask32), poly, 0x10);
    t = _mm_clmulepi64_si128(_mm_and_si128(t, mask32), poly, 0x00);
    x1 = _mm_xor_si128(x1, t);
    return (uint32_t)_mm_extract_epi32(x1, 1);
}

/* libgcc fills the CPU model in a constructor before main, so this only
 * reads it: no cache of our own, which two threads loading model files
 * at once (directory mode) would race on. */
static int have_clmul(void) {
    return __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
}

uint32_t dlp_nn_crc32(uint32_t crc, const void *data, size_t n) {
    const uint8_t *p = data;
    if (n < 256 || !have_clmul()) return crc_zlib(crc, p, n);
    size_t bulk = n & ~(size_t)15;
    /* zlib's value is the complement of the register, before and after */
    uint32_t r = crc_fold(~crc, p, bulk);
    return crc_zlib(~r, p + bulk, n - bulk);
}
#else
uint32_t dlp_nn_crc32(uint32_t crc, const void *data, size_t n) {
    return crc_zlib(crc, data, n);
}
#endif
