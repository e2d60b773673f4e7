/* clock.c — the monotonic clock the progress lines and timings read. */
#include "core.h"

#include <time.h>

double dlp_now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}
