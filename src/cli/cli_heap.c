/*
 * cli_heap.c — the heap of a short `dlperf predict` process on huge pages.
 *
 * A prediction touches a few MB of fresh memory once (the ONNX graph, the
 * feature rows, the GNN workspace: ~1,550 page faults for the 2,000-node
 * transformer, ~480 for ResNet-50) and exits. On the project's VM a 4 KB
 * page fault costs ~10-20 us (a 4 MB block: 14-22 ms touched in 4 KB
 * pages, 0.3-0.4 ms in 2 MB ones once the kernel has them; bench/pagefault.c),
 * so the faults, not the arithmetic, were most of the 2,000-node
 * prediction's time.
 *
 * What this does, once, before the work: large blocks come from the heap
 * instead of one mmap each (M_MMAP_THRESHOLD), the heap is grown by 16 MB
 * in one step and not trimmed, and that fresh, still untouched range is
 * advised MADV_HUGEPAGE, so the kernel backs each 2 MB of it with one huge
 * page at its first touch (transparent huge pages in "madvise" or "always"
 * mode; with "never", or off Linux/glibc, nothing changes but the malloc
 * thresholds). Memory a process never touches costs nothing; one it
 * touches costs whole 2 MB pages (a few MB of resident memory more).
 *
 * The same as glibc's GLIBC_TUNABLES=glibc.malloc.hugetlb=1 with a large
 * top pad, which only the environment of a new process can set. Under
 * AddressSanitizer malloc is not glibc's: the heap range is checked and
 * nothing is advised. Where the kernel's huge-page defrag setting makes a
 * fault compact memory first, a fragmented host can stall that fault;
 * DLPERF_NO_HUGEPAGES=1 in the environment turns all of this off.
 */
#include "cli.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__) && defined(__GLIBC__)
#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>
#endif

#define HUGE_PAGE ((uintptr_t)2 << 20)
/* the heap growth advised: more than a 2,000-node prediction touches
 * with the model files it reads whole (dlp_file_read_all: 16 MB held the
 * inference files, not an LLM request's ~11 MB of them besides its work,
 * whose excess took 4 KB faults, ~630 more; forty-ninth session); below
 * M_MMAP_THRESHOLD, or malloc maps it apart and nothing is advised */
#define HEAP_BYTES ((size_t)48 << 20)

/* the block in front of the first huge page (see below): allocated once,
 * never touched or freed; volatile, or the compiler drops the malloc of a
 * block nobody reads */
static void *volatile heap_pad;

void cli_heap_hugepages(void) {
#if defined(__linux__) && defined(__GLIBC__) && defined(MADV_HUGEPAGE)
    const char *off = getenv("DLPERF_NO_HUGEPAGES");
    if (off && *off && strcmp(off, "0")) return;
    mallopt(M_MMAP_THRESHOLD, 64 << 20);
    mallopt(M_TRIM_THRESHOLD, (int)(2 * HEAP_BYTES));
    char *base = sbrk(0);
    if (base == (char *)-1) return;
    void *p = malloc(HEAP_BYTES); /* grows the heap that much, touches none */
    char *top = sbrk(0);
    /* ours: the block lies in the heap and ends in what this malloc grew
     * (it starts in the top chunk, which may begin below base: the space
     * left above the last block when the heap was grown before. Asking
     * for a start at or above base, as this did until the ninety-first
     * session, refused that case, and nothing was advised: ResNet-50 took
     * 2,268 page faults and 46 ms instead of 134 and 10.6 ms with the
     * other start-up mend, bench/predict_bench.py) */
    bool ours = p && (char *)p + HEAP_BYTES > base &&
                (char *)p + HEAP_BYTES <= top;
    /* the block's address as a number, through a volatile, and ours
     * decided before the free: GCC's -Wuse-after-free (at -O1, the
     * sanitizer build) reads any use after the free of a value computed
     * from p as a use of p */
    if (!ours) {
        free(p);
        return;
    }
    volatile uintptr_t addr = (uintptr_t)p;
    free(p);                   /* back to the heap's top: reused, not trimmed */
    uintptr_t start = addr;
    uintptr_t lo = (start + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
    size_t gap = (size_t)(lo - start);
    uintptr_t hi = (uintptr_t)top & ~(HUGE_PAGE - 1);
    if (hi <= lo) return;
    /* The next blocks come from the heap's top, at start; start lies
     * anywhere in a 2 MB page (the heap's base is randomised), and up to 2
     * MB of blocks below lo were touched in 4 KB pages: in about half of
     * the runs ResNet-50 took 300-580 page faults instead of 146, and its
     * median went from 8.2 to 10.6 ms (interleaved runs, batch 8, the
     * fortieth session's VM). A block from start to lo, never
     * touched, makes the next one start at lo. (A malloc chunk's header is
     * 2 size_t in front of its bytes; start is 16-byte aligned.) */
    if (gap > 2 * sizeof(size_t)) heap_pad = malloc(gap - 2 * sizeof(size_t));
    (void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
#endif
}
