/*
 * data.h — internal to libdlperf: the readers under the dataset loader.
 *
 *   dlp_csv   RFC 4180 CSV records from a memory buffer (quotes, "" escapes,
 *             newlines inside quotes, CRLF or LF), bounded record length.
 *   dlp_zst   zstd: whole-file decompression and a streaming reader.
 *   dlp_tar   a ustar/pax/GNU tar walker over any byte stream, bounds-
 *             checked (header checksum, octal fields, member size limit).
 *   dlp_sha256  content hashes of graph files.
 *
 * Every error names the file (and line or byte offset) it comes from.
 */
#ifndef DLP_DATA_H
#define DLP_DATA_H

#include "core/core.h"

#include <stdio.h>

/* ---- CSV ---------------------------------------------------------------- */

#define DLP_CSV_MAX_RECORD ((size_t)1 << 20) /* bytes of one record */
#define DLP_CSV_MAX_FIELDS 4096

typedef struct {
    const char *path;        /* for messages */
    const char *buf;         /* whole file, not owned */
    size_t len, pos;
    int64_t line;            /* 1-based line of the next unread byte */
    int64_t rec_line;        /* line where the current record started */
    size_t max_record;       /* 0 = DLP_CSV_MAX_RECORD */
    char *scratch;           /* unescaped fields, each NUL-terminated */
    size_t scap;
    size_t *offs;            /* field i starts at scratch + offs[i] */
    size_t *lens;
    size_t nf, fcap;
} dlp_csv;

/* Starts reading buf[0..len) (skips a UTF-8 byte-order mark). */
void dlp_csv_init(dlp_csv *c, const char *path, const char *buf, size_t len);
void dlp_csv_free(dlp_csv *c);
/* Reads the next record; *got = false at end of input. Blank lines are
 * skipped. Errors: DLP_ERR_FORMAT (bad quoting, NUL byte), DLP_ERR_LIMIT
 * (record longer than max_record, too many fields), DLP_ERR_NOMEM. */
dlp_status dlp_csv_next(dlp_csv *c, bool *got, dlp_error *err);
static inline const char *dlp_csv_field(const dlp_csv *c, size_t i) {
    return c->scratch + c->offs[i];
}

/* Finds each of the n names among the fields of the record just read (a
 * header): col[k] its index, *need the fields a record must have to hold
 * them all (1 + the largest index). DLP_ERR_FORMAT for the first one
 * missing, "PATH: no column 'NAME' (WHAT)". */
dlp_status dlp_csv_columns(const dlp_csv *c, const char *const *names, int n,
                           int *col, size_t *need, const char *what,
                           dlp_error *err);

/* A CSV field as a number: the whole field, base 10. An empty field is
 * false; f64 reads "nan" (Python's csv writes NaN so) as NAN, and refuses
 * infinities and overflow (an underflow to a tiny number is kept). */
bool dlp_csv_parse_i64(const char *v, int64_t *out);
bool dlp_csv_parse_f64(const char *v, double *out);

/* Reads a whole file into a malloc'd, NUL-terminated buffer. Files larger
 * than max_bytes give DLP_ERR_LIMIT. */
dlp_status dlp_read_file(const char *path, size_t max_bytes, char **out,
                         size_t *len, dlp_error *err);

/* ---- zstd --------------------------------------------------------------- */

/* Decompresses a whole .zst file (one or more frames) into a malloc'd,
 * NUL-terminated buffer of at most max_out bytes. A frame cut short gives
 * DLP_ERR_FORMAT "truncated zstd frame". */
dlp_status dlp_zst_read_file(const char *path, size_t max_out, char **out,
                             size_t *len, dlp_error *err);

typedef struct dlp_zst_reader dlp_zst_reader;
dlp_status dlp_zst_open(const char *path, dlp_zst_reader **out,
                        dlp_error *err);
/* Reads up to n bytes; *got < n only at the end of the stream. */
dlp_status dlp_zst_read(dlp_zst_reader *r, void *dst, size_t n, size_t *got,
                        dlp_error *err);
void dlp_zst_close(dlp_zst_reader *r);

/* ---- tar ---------------------------------------------------------------- */

#define DLP_TAR_MAX_MEMBER ((uint64_t)1 << 30) /* 1 GiB per member */
#define DLP_TAR_MAX_NAME 4096

/* A byte source: reads up to n bytes, *got < n only at end of input. */
typedef dlp_status (*dlp_read_fn)(void *ctx, void *dst, size_t n,
                                  size_t *got, dlp_error *err);

typedef struct {
    dlp_read_fn read;
    void *ctx;
    const char *path;        /* for messages */
    uint64_t offset;         /* bytes consumed so far */
    uint64_t remain;         /* unread bytes of the current member + pad */
    uint64_t size;           /* size of the current member */
    char name[DLP_TAR_MAX_NAME + 1]; /* current member's path */
    bool done;
} dlp_tar;

void dlp_tar_init(dlp_tar *t, const char *path, dlp_read_fn read, void *ctx);
/* Advances to the next regular file (skipping the rest of the current one,
 * directories, links and pax/GNU metadata, which it applies). *got = false
 * at the end-of-archive marker. A stream that ends early is DLP_ERR_FORMAT
 * "truncated tar". */
dlp_status dlp_tar_next(dlp_tar *t, bool *got, dlp_error *err);
/* Reads the current member's data into a malloc'd buffer (size t->size). */
dlp_status dlp_tar_read_data(dlp_tar *t, void **out, dlp_error *err);

/* A dlp_read_fn over a dlp_zst_reader. */
dlp_status dlp_zst_read_fn(void *ctx, void *dst, size_t n, size_t *got,
                           dlp_error *err);

/* ---- SHA-256 ---------------------------------------------------------- */

void dlp_sha256(const void *data, size_t len, unsigned char out[32]);
/* The first 16 hex digits (lowercase) of the SHA-256: a graph's hash. */
void dlp_sha256_hex16(const void *data, size_t len, char out[17]);

#endif /* DLP_DATA_H */
