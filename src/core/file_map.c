/*
 * file_map.c — a file mapped read-only into memory, for readers that touch
 * only part of what they map (ONNX field headers) and let the page cache
 * skip the rest; or read whole, for readers of every byte (model files).
 */
#include "core.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* *fd open on path, a regular file of *n bytes (then the caller closes
 * it), or an error naming path */
static dlp_status open_regular(const char *path, int *fd_out, size_t *n_out,
                               dlp_error *err) {
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
        return dlp_fail(err, DLP_ERR_LIMIT, "'%s' is too large", path);
    }
    *fd_out = fd;
    *n_out = (size_t)sb.st_size;
    return DLP_OK;
}

dlp_status dlp_file_map(const char *path, const void **bytes, size_t *len,
                        dlp_error *err) {
    *bytes = NULL;
    *len = 0;
    int fd;
    size_t n;
    dlp_status st = open_regular(path, &fd, &n, err);
    if (st) return st;
    if (n == 0) {   /* nothing to map; the caller says why not */
        close(fd);
        return DLP_OK;
    }
    void *p = mmap(NULL, n, PROT_READ, MAP_PRIVATE, fd, 0);
    int e = errno;
    close(fd);
    if (p == MAP_FAILED)
        return dlp_fail(err, DLP_ERR_IO, "cannot map '%s': %s", path,
                        strerror(e));
    *bytes = p;
    *len = n;
    return DLP_OK;
}

/* For a reader of every byte (a model file: its checksum, its entries):
 * read, not mapped. On the project's VM a process pays ~1.6-8 us for the
 * first touch of each 4 KB page of a file mapping even when the mapping
 * was populated at once (MAP_POPULATE, the forty-second session's way),
 * while a read copies from the page cache through the kernel's own large
 * pages into one block of the heap, which `dlperf predict` keeps on huge
 * pages (cli_heap.c): the 3.75 MB inference DIPPM file, populated and
 * touched page by page 2.5-3.2 ms, read into a huge-page block 1.1-1.2 ms
 * (forty-ninth session, docs/PREDICT.md "Speed, forty-ninth session"). */
dlp_status dlp_file_read_all(const char *path, size_t max, void **bytes,
                             size_t *len, dlp_error *err) {
    *bytes = NULL;
    *len = 0;
    int fd;
    size_t n;
    dlp_status st = open_regular(path, &fd, &n, err);
    if (st) return st;
    if (n > max) {
        close(fd);
        return dlp_fail(err, DLP_ERR_LIMIT, "'%s' is larger than %zu bytes",
                        path, max);
    }
    uint8_t *p = n ? malloc(n) : NULL;
    if (n && !p) {
        close(fd);
        return dlp_fail(err, DLP_ERR_NOMEM, "cannot read '%s': out of memory",
                        path);
    }
    size_t got = 0;
    while (got < n) {
        ssize_t r = pread(fd, p + got, n - got, (off_t)got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
            int e = errno;
            free(p);
            close(fd);
            return r < 0 ? dlp_fail(err, DLP_ERR_IO, "cannot read '%s': %s",
                                    path, strerror(e))
                         : dlp_fail(err, DLP_ERR_IO, "cannot read '%s': it "
                                    "shrank while read (%zu of %zu bytes)",
                                    path, got, n);
        }
        got += (size_t)r;
    }
    close(fd);
    *bytes = p;
    *len = n;
    return DLP_OK;
}

void dlp_file_unmap(const void *bytes, size_t len) {
    if (bytes && len) munmap((void *)bytes, len);
}
