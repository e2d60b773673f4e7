/* nn_rng.c — the engine's random numbers: xoshiro256** seeded through
 * splitmix64. Every random choice (init, dropout, shuffles, negative
 * sampling) draws from a caller-owned dlp_nn_rng, so a seed fixes them all. */
#include "nn.h"

#include <math.h>

static uint64_t splitmix64(uint64_t *x) {
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void dlp_nn_rng_seed(dlp_nn_rng *r, uint64_t seed) {
    uint64_t x = seed;
    for (int i = 0; i < 4; i++) r->s[i] = splitmix64(&x);
}

static inline uint64_t rotl(uint64_t x, int k) {
    return (x << k) | (x >> (64 - k));
}

uint64_t dlp_nn_rng_u64(dlp_nn_rng *r) {
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

double dlp_nn_rng_uniform(dlp_nn_rng *r) {
    return (double)(dlp_nn_rng_u64(r) >> 11) * 0x1.0p-53;
}

double dlp_nn_rng_normal(dlp_nn_rng *r) {
    /* Box-Muller; one value per call keeps the stream simple. */
    double u1 = dlp_nn_rng_uniform(r), u2 = dlp_nn_rng_uniform(r);
    if (u1 < 1e-300) u1 = 1e-300;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

uint64_t dlp_nn_rng_below(dlp_nn_rng *r, uint64_t n) {
    DLP_ASSERT(n > 0);
    /* rejection sampling: unbiased */
    uint64_t lim = UINT64_MAX - UINT64_MAX % n;
    uint64_t x;
    do x = dlp_nn_rng_u64(r); while (x >= lim);
    return x % n;
}

void dlp_nn_rng_shuffle(dlp_nn_rng *r, int32_t *a, int n) {
    for (int i = n - 1; i > 0; i--) {
        int j = (int)dlp_nn_rng_below(r, (uint64_t)i + 1);
        int32_t t = a[i]; a[i] = a[j]; a[j] = t;
    }
}
