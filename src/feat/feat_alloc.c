/* feat_alloc.c — what PyTorch's CUDA caching allocator holds for a model's
 * parameters beyond the bytes they request (the "slack" of the memory
 * estimate, docs/COST.md).
 *
 * torch.cuda.max_memory_allocated() counts the blocks the allocator hands
 * out, and a block can be larger than its request: a request above 1 MiB
 * takes a whole free block when less than 1 MiB more would remain, and a
 * new segment is 20 MiB for requests under 10 MiB, the request rounded up
 * to 2 MiB above. The collector builds each model at float on the GPU and
 * then casts it (Module.to(half): per tensor, the half copy is allocated
 * before the float one is freed), so the half copies land in the holes the
 * float tensors leave, tensor by tensor. GPT-2-large at bf16 holds 24.0 MiB
 * more than its parameters request (tools/collect/probe_slack.py): every
 * 12.5 MiB MLP matrix but the first lands in a 13.5 MiB hole.
 *
 * This file replays those rules (PyTorch's CUDACachingAllocator.cpp without
 * expandable segments, max_split_size or rounding options: the defaults the
 * collector runs with) over the parameters in the order the graph lists its
 * initializers, which is the order the module registered them. Best fit:
 * the smallest free block of the pool that holds the request, ties by
 * segment and offset (the allocator orders by address; segments are taken
 * to come in increasing addresses). Freed blocks merge with free
 * neighbours of their segment. */
#include "feat.h"

#include <stdint.h>
#include <stdlib.h>

#define KMIN_BLOCK   512LL                 /* kMinBlockSize */
#define KSMALL_SIZE  (1LL << 20)           /* kSmallSize: small pool limit */
#define KSMALL_BUF   (2LL << 20)           /* kSmallBuffer: a small segment */
#define KLARGE_BUF   (20LL << 20)          /* kLargeBuffer */
#define KMIN_LARGE   (10LL << 20)          /* kMinLargeAlloc */
#define KROUND_LARGE (2LL << 20)           /* kRoundLarge */

typedef struct {
    int64_t size, off;
    int seg, prev, next;   /* neighbours in the segment, -1 at its ends */
    int fpos;              /* index in the free list, -1 while in use */
    uint8_t small;
} blk;

typedef struct {
    blk *b;
    int nb, cap;
    int *freel;            /* free blocks of both pools */
    int nfree;
    int nseg;
    int64_t allocated, requested;
} sim;

static int64_t round_size(int64_t n) {
    return n < KMIN_BLOCK ? KMIN_BLOCK : (n + KMIN_BLOCK - 1) / KMIN_BLOCK * KMIN_BLOCK;
}

static int64_t segment_size(int64_t n) {
    if (n <= KSMALL_SIZE) return KSMALL_BUF;
    if (n < KMIN_LARGE) return KLARGE_BUF;
    return (n + KROUND_LARGE - 1) / KROUND_LARGE * KROUND_LARGE;
}

static int new_block(sim *s) {
    if (s->nb == s->cap) {
        int cap = s->cap ? 2 * s->cap : 64;
        blk *b = realloc(s->b, (size_t)cap * sizeof *b);
        int *f = realloc(s->freel, (size_t)cap * sizeof *f);
        if (b) s->b = b;
        if (f) s->freel = f;
        if (!b || !f) return -1;
        s->cap = cap;
    }
    return s->nb++;
}

static void free_push(sim *s, int i) {
    s->b[i].fpos = s->nfree;
    s->freel[s->nfree++] = i;
}

static void free_drop(sim *s, int i) {
    int p = s->b[i].fpos, last = s->freel[--s->nfree];
    s->freel[p] = last;
    s->b[last].fpos = p;
    s->b[i].fpos = -1;
}

/* Allocates n bytes; returns the block, -1 when out of memory. */
static int sim_malloc(sim *s, int64_t n) {
    n = round_size(n);
    uint8_t small = n <= KSMALL_SIZE;
    int best = -1;
    for (int k = 0; k < s->nfree; k++) {
        const blk *c = &s->b[s->freel[k]];
        if (c->small != small || c->size < n) continue;
        if (best < 0) { best = s->freel[k]; continue; }
        const blk *o = &s->b[best];
        if (c->size < o->size ||
            (c->size == o->size &&
             (c->seg < o->seg || (c->seg == o->seg && c->off < o->off))))
            best = s->freel[k];
    }
    if (best >= 0) {
        free_drop(s, best);
    } else {
        if ((best = new_block(s)) < 0) return -1;
        s->b[best] = (blk){segment_size(n), 0, s->nseg++, -1, -1, -1, small};
    }
    int64_t rem = s->b[best].size - n;
    if (small ? rem >= KMIN_BLOCK : rem > KSMALL_SIZE) {
        int r = new_block(s);
        if (r < 0) return -1;
        blk *b = &s->b[best];
        s->b[r] = (blk){rem, b->off + n, b->seg, best, b->next, -1, small};
        if (b->next >= 0) s->b[b->next].prev = r;
        b->next = r;
        b->size = n;
        free_push(s, r);
    }
    s->allocated += s->b[best].size;
    s->requested += n;
    return best;
}

/* Frees block i (of a request of n bytes), merging free neighbours. */
static void sim_free(sim *s, int i, int64_t n) {
    blk *b = &s->b[i];
    s->allocated -= b->size;
    s->requested -= round_size(n);
    int nx = b->next;
    if (nx >= 0 && s->b[nx].fpos >= 0) {
        free_drop(s, nx);
        b->size += s->b[nx].size;
        b->next = s->b[nx].next;
        if (b->next >= 0) s->b[b->next].prev = i;
    }
    int pv = b->prev;
    if (pv >= 0 && s->b[pv].fpos >= 0) {
        s->b[pv].size += b->size;
        s->b[pv].next = b->next;
        if (b->next >= 0) s->b[b->next].prev = pv;
        return;
    }
    free_push(s, i);
}

int dlp_feat_alloc_slack(const int64_t *elems, const uint8_t *esize,
                         const uint8_t *isfloat, size_t n, double out[2]) {
    sim s = {0};
    int *blk_of = malloc((n ? n : 1) * sizeof *blk_of);
    int rc = -1;
    if (!blk_of) return -1;
    /* the build at float: every tensor in order */
    for (size_t i = 0; i < n; i++) {
        int64_t bytes = elems[i] * (isfloat[i] ? 4 : esize[i]);
        if ((blk_of[i] = sim_malloc(&s, bytes)) < 0) goto out;
    }
    out[0] = (double)(s.allocated - s.requested);
    /* Module.to(half): the half copy, then the float tensor freed */
    for (size_t i = 0; i < n; i++) {
        if (!isfloat[i]) continue;
        int h = sim_malloc(&s, elems[i] * 2);
        if (h < 0) goto out;
        sim_free(&s, blk_of[i], elems[i] * 4);
        blk_of[i] = h;
    }
    out[1] = (double)(s.allocated - s.requested);
    rc = 0;
out:
    free(blk_of); free(s.b); free(s.freel);
    return rc;
}
