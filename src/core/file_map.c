/*
 * file_map.c — a file mapped read-only into memory, for readers that touch
 * only part of what they map (ONNX field headers, model-file entry
 * headers) and let the page cache skip the rest.
 */
#include "core.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static dlp_status map_file(const char *path, int flags, const void **bytes,
                           size_t *len, dlp_error *err) {
    *bytes = NULL;
    *len = 0;
    /* O_NONBLOCK: a FIFO must not block us; regular files ignore it */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return dlp_fail(err, DLP_ERR_IO, "cannot open '%s': %s", path,
                        strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        int e = errno;
        close(fd);
        return dlp_fail(err, DLP_ERR_IO, "cannot stat '%s': %s", path,
                        strerror(e));
    }
    if (!S_ISREG(sb.st_mode)) {
        close(fd);
        return dlp_fail(err, DLP_ERR_IO, "'%s' is not a regular file", path);
    }
    if ((uint64_t)sb.st_size > SIZE_MAX) {
        close(fd);
        return dlp_fail(err, DLP_ERR_LIMIT, "'%s' is too large to map", path);
    }
    if (sb.st_size == 0) {   /* nothing to map; the caller says why not */
        close(fd);
        return DLP_OK;
    }
    size_t n = (size_t)sb.st_size;
    void *p = mmap(NULL, n, PROT_READ, MAP_PRIVATE | flags, fd, 0);
    int e = errno;
    close(fd);
    if (p == MAP_FAILED)
        return dlp_fail(err, DLP_ERR_IO, "cannot map '%s': %s", path,
                        strerror(e));
    *bytes = p;
    *len = n;
    return DLP_OK;
}

dlp_status dlp_file_map(const char *path, const void **bytes, size_t *len,
                        dlp_error *err) {
    return map_file(path, 0, bytes, len, err);
}

/* For a reader of every byte (a model file's checksum): the pages are
 * mapped in one call (MAP_POPULATE) instead of a fault per 16 of them as
 * they are read; on the project's VM, where a page fault costs ~10-30 us,
 * that took ~1 ms off a ResNet-50 `dlperf predict` (forty-second
 * session, docs/PREDICT.md "Speed"). */
dlp_status dlp_file_map_all(const char *path, const void **bytes, size_t *len,
                            dlp_error *err) {
#ifdef MAP_POPULATE
    return map_file(path, MAP_POPULATE, bytes, len, err);
#else
    return map_file(path, 0, bytes, len, err);
#endif
}

void dlp_file_unmap(const void *bytes, size_t len) {
    if (bytes && len) munmap((void *)bytes, len);
}
