/*
 * xz_write.h — tests' helper: writes text as an .xz file (the probes'
 * format, data/probes), for the probe readers' tests.
 */
#ifndef DLP_TEST_XZ_WRITE_H
#define DLP_TEST_XZ_WRITE_H

#include "check.h"
#include "core/core.h"

#include <lzma.h>
#include <stdint.h>

static void write_xz(const char *path, const char *text) {
    size_t n = strlen(text), cap = n + 1024, pos = 0;
    uint8_t *out = malloc(cap);
    DLP_ASSERT(out && lzma_easy_buffer_encode(6, LZMA_CHECK_CRC64, NULL,
                                              (const uint8_t *)text, n, out,
                                              &pos, cap) == LZMA_OK);
    FILE *fp = fopen(path, "wb");
    DLP_ASSERT(fp && fwrite(out, 1, pos, fp) == pos);
    fclose(fp);
    free(out);
}

#endif
