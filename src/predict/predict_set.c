/*
 * predict_set.c — the predictor set behind dlp_predictor_open: a lazy
 * version of src/pred/pred_set.c. Opening a models/ directory only scans
 * the header entries of every *.dlpm file (kind, mode, targets, runtimes,
 * precisions, validation errors: no checksum, no weights); a prediction
 * picks, per target, the file with the lowest validation error that covers
 * the request (the same rule as dlp_pred_set_best) and loads just those
 * files, fully checked (dlp_predictor_load: CRC, schema, payload), once.
 * Where the directory holds heldout.csv (`dlperf eval --record`, see
 * src/pred/pred_heldout.h) the choice is by the leave-models-out MAPE of
 * each file's kind instead, for the targets it has rows for
 * (dlp_predict_set_choose in predict.h has the rule).
 *
 * Why: `dlperf predict` starts a process per model; the shipped set holds
 * a dozen files (4 kinds x 3 modes) and loading and checksumming all of
 * them cost ~25 ms of CPU, more than the whole ResNet-50 prediction.
 *
 * The scan reads the container layout documented in src/nn/nn.h
 * ("DLPNNMDL", u32 version, u32 entries, u64 payload bytes, entries of
 * u8 kind, u16 name length, name, u64 count, data; u32 CRC-32) with bounds
 * checks on every field it passes, up to the predictor header's entries;
 * a file it cannot read fails the open, naming it.
 */
#include "predict/predict.h"
#include "tree/tree.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_FILES 256
#define HDR 24

static uint64_t rd64(const uint8_t *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
    return v;
}
static uint32_t rd32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

/* The file read through a window of pread: the scan touches only the
 * entry headers, so the payloads (XGBoost boosters of ~230 KB, GNN
 * weights) are never read, and no mapping is made: mapping each of the
 * shipped files cost an mmap, a munmap and a page fault or more per file
 * (~2.7 ms for the 17 files of models/ on the project's VM, against ~0.2
 * ms for one). */
typedef struct {
    int fd;
    uint64_t size;          /* file bytes */
    uint64_t off;           /* window's file offset */
    size_t len;             /* window's valid bytes */
    uint8_t buf[8192];
} scan_reader;

/* bytes [off, off + n) of the file (n <= sizeof buf), or NULL when they
 * lie past its end or cannot be read */
static const uint8_t *scan_at(scan_reader *r, uint64_t off, size_t n) {
    if (n > sizeof r->buf || off > r->size || r->size - off < n) return NULL;
    if (off >= r->off && off - r->off + n <= r->len) return r->buf + (off - r->off);
    size_t got = 0;
    while (got < n) {
        ssize_t k = pread(r->fd, r->buf + got, sizeof r->buf - got,
                          (off_t)(off + got));
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return NULL;
        got += (size_t)k;
    }
    r->off = off;
    r->len = got;
    return r->buf;
}

/* Fills m (kind, mode, targets, runtimes, precisions, val_error, devices)
 * from the header entries of the open file r. It stops once the four
 * entries it reads are found (pred.c writes them together); the rest of
 * the file is checked, CRC included, when a prediction loads it. */
static dlp_status scan(const char *path, scan_reader *r, dlp_pred_meta *m,
                       dlp_error *err) {
    dlp_pred_meta_init(m, "", DLP_MODE_INFERENCE);
    const uint8_t *b = scan_at(r, 0, HDR);
    if (!b || r->size < HDR + 4 || memcmp(b, "DLPNNMDL", 8) ||
        rd32(b + 8) < 1 || rd32(b + 8) > DLP_NN_FILE_VERSION ||
        rd64(b + 16) != r->size - HDR - 4)
        return dlp_fail(err, DLP_ERR_FORMAT, "%s: not a dlperf model file "
                        "(bad magic, version or length)", path);
    uint32_t entries = rd32(b + 12), version = rd32(b + 8);
    uint64_t p = HDR, end = r->size - 4;
    bool have_kind = false, have_header = false, have_dev = false,
         have_err = false;
    for (uint32_t e = 0; e < entries; e++) {
        if (have_kind && have_header && have_dev && have_err) return DLP_OK;
        const uint8_t *h = end - p >= 11 ? scan_at(r, p, 3) : NULL;
        if (!h) goto bad;
        uint8_t kind = h[0];
        size_t nl = (size_t)(h[1] | h[2] << 8);
        p += 3;
        if (end - p < nl + 8) goto bad;
        char name[16] = "";
        if (nl < sizeof name) {   /* longer names are none of ours */
            const uint8_t *nm = scan_at(r, p, nl);
            if (!nm) goto bad;
            memcpy(name, nm, nl);
            name[nl] = 0;
        }
        p += nl;
        const uint8_t *c = scan_at(r, p, 8);
        if (!c) goto bad;
        uint64_t count = rd64(c);
        p += 8;
        uint64_t es = dlp_nn_kind_size(version, kind);
        uint64_t tail = dlp_nn_entry_tail(version, kind, count);
        if (!es || end - p < tail || count > (end - p - tail) / es) goto bad;
        uint64_t at = p;
        p += count * es + tail;
        const uint8_t *d;
#define IS(s) (nl == sizeof(s) - 1 && !strcmp(name, s))
        if (kind == 3 && IS("pred/kind") && count < sizeof m->kind) {
            if (!(d = scan_at(r, at, (size_t)count))) goto bad;
            memcpy(m->kind, d, (size_t)count);
            m->kind[count] = 0;
            have_kind = true;
        } else if (kind == 3 && IS("pred/devices") &&
                   count < sizeof m->devices) {
            if (!(d = scan_at(r, at, (size_t)count))) goto bad;
            memcpy(m->devices, d, (size_t)count);
            m->devices[count] = 0;
            have_dev = true;
        } else if (kind == 2 && IS("pred/header") && count == 6) {
            if (!(d = scan_at(r, at, 48))) goto bad;
            int64_t v[6];
            for (int k = 0; k < 6; k++) v[k] = (int64_t)rd64(d + 8 * k);
            if (v[1] < 0 || v[1] >= DLP_MODE_COUNT || v[2] < 0 ||
                v[2] >= (1 << DLP_T_COUNT) || v[3] < 0 ||
                v[3] >= (1 << DLP_RT_COUNT) || v[4] < 0 ||
                v[4] >= (1 << DLP_PREC_COUNT))
                goto bad;
            m->feat_schema = (int)v[0];
            m->mode = (dlp_pred_mode)v[1];
            m->targets = (uint32_t)v[2];
            m->runtimes = (uint32_t)v[3];
            m->precisions = (uint32_t)v[4];
            have_header = true;
        } else if (kind == 1 && IS("pred/per_target") &&
                   count == 3 * DLP_T_COUNT) {
            if (!(d = scan_at(r, at, 4 * DLP_T_COUNT))) goto bad;
            for (int t = 0; t < DLP_T_COUNT; t++) {
                float f;
                uint32_t u = rd32(d + 4 * t);
                memcpy(&f, &u, 4);
                m->val_error[t] = f;
            }
            have_err = true;
        }
#undef IS
    }
    if (p != end || !have_kind || !have_header) goto bad;
    return DLP_OK;
bad:
    return dlp_fail(err, DLP_ERR_FORMAT, "%s: malformed dlperf model file "
                    "(entries or predictor header)", path);
}

/* Opens path for scan: a regular file of a plausible size. */
static dlp_status scan_open(const char *path, scan_reader *r, dlp_error *err) {
    r->fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    r->off = r->len = 0;
    if (r->fd < 0)
        return dlp_fail(err, DLP_ERR_IO, "cannot open '%s': %s", path,
                        strerror(errno));
    struct stat sb;
    if (fstat(r->fd, &sb) != 0) {
        int e = errno;
        close(r->fd);
        return dlp_fail(err, DLP_ERR_IO, "cannot stat '%s': %s", path,
                        strerror(e));
    }
    if (!S_ISREG(sb.st_mode) || sb.st_size < HDR + 4 ||
        (uint64_t)sb.st_size > ((uint64_t)1 << 31)) {
        close(r->fd);
        return dlp_fail(err, DLP_ERR_FORMAT, "%s: not a dlperf model file "
                        "(not a regular file, or size %lld)", path,
                        (long long)sb.st_size);
    }
    r->size = (uint64_t)sb.st_size;
    return DLP_OK;
}

dlp_status dlp_predict_set_open(const char *dir, dlp_predictor_set *ps,
                                dlp_error *err) {
    char *names[MAX_FILES];
    int n = 0;
    scan_reader rd;
    dlp_status st = dlp_pred_list_files(dir, names, MAX_FILES, &n, err);
    if (st) return st;
    ps->files = calloc((size_t)n, sizeof *ps->files);
    ps->names = calloc((size_t)n, sizeof *ps->names);
    if (!ps->files || !ps->names)
        st = dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    for (int i = 0; !st && i < n; i++) {
        dlp_pred_file *f = &ps->files[i];
        size_t pl = strlen(dir) + strlen(names[i]) + 2;
        size_t nl = strlen(names[i]) + DLP_PRED_KIND_MAX + 4;
        f->path = malloc(pl);
        ps->names[i] = malloc(nl);
        if (!f->path || !ps->names[i]) {
            st = dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
            break;
        }
        ps->n = i + 1;
        snprintf(f->path, pl, "%s/%s", dir, names[i]);
        if ((st = scan_open(f->path, &rd, err))) break;
        st = scan(f->path, &rd, &f->meta, err);
        close(rd.fd);
        if (st) break;
        snprintf(ps->names[i], nl, "%s (%s)", f->meta.kind, names[i]);
    }
    for (int i = 0; i < n; i++) free(names[i]);
    /* the held-out error table, when the directory has one (tiny: parsed
     * here once, every field checked; a damaged one fails the open) */
    char path[4096];
    if (!st && snprintf(path, sizeof path, "%s/%s", dir, DLP_HELDOUT_FILE) <
                   (int)sizeof path)
        st = dlp_heldout_read(path, &ps->heldout, NULL, err);
    return st;
}

void dlp_predict_set_close(dlp_predictor_set *ps) {
    for (int i = 0; i < ps->n; i++) {
        for (int k = 0; k < ps->files[i].n_inst; k++)
            dlp_predictor_free(ps->files[i].inst[k]);
        free(ps->files[i].path);
        free(ps->names[i]);
    }
    free(ps->files);
    free(ps->names);
    dlp_heldout_free(&ps->heldout);
    ps->files = NULL;
    ps->names = NULL;
    ps->n = 0;
}

const char *dlp_choice_basis_name(dlp_choice_basis b) {
    switch (b) {
    case DLP_CHOICE_VALIDATION: return "validation";
    case DLP_CHOICE_HELDOUT: return "heldout";
    case DLP_CHOICE_HELDOUT_ALL: return "heldout-all";
    default: return "none";
    }
}

/* The held-out split whose rows choose files: leave-models-out. */
#define HELDOUT_SPLIT "lmo"

/* File i's error on t on basis b (a fraction); false when the file does
 * not compete on that basis (does not cover t, or its kind has no row). An
 * unknown validation error competes as a last resort. */
static bool file_error(const dlp_predictor_set *ps, int i, dlp_target t,
                       const dlp_pred_config *c, dlp_choice_basis b,
                       double *e) {
    const dlp_pred_meta *m = &ps->files[i].meta;
    if (!dlp_pred_meta_covers(m, t, c)) return false;
    if (b == DLP_CHOICE_VALIDATION) {
        *e = isfinite(m->val_error[t]) ? m->val_error[t] : 1e30;
        return true;
    }
    int rt = b == DLP_CHOICE_HELDOUT ? (int)c->runtime : DLP_HELDOUT_ALL_RT;
    const dlp_heldout_row *r = dlp_heldout_find(&ps->heldout, c->mode, rt,
                                                m->kind, t, HELDOUT_SPLIT);
    if (!r) return false;
    *e = r->mape_pct / 100;
    return true;
}

/* Kinds of cost DLP_PRED_COST_SLOW (kern and blends with it) compete only
 * with dlp_predictor_set_best. */
static dlp_pred_cost kind_cost(const char *kind) {
    return dlp_pred_kind_cost(kind, dlp_predict_extra_kinds());
}

void dlp_predictor_set_best(dlp_predictor_set *ps, int on) {
    if (ps) ps->best = on != 0;
}

/* The file with the lowest error on basis b that covers t under c (ties:
 * the first by file name), or -1. Slow kinds only with ps->best, or where
 * no other file covers t. */
static int best_file(const dlp_predictor_set *ps, dlp_target t,
                     const dlp_pred_config *c, dlp_choice_basis b) {
    for (int pass = ps->best ? 1 : 0; pass < 2; pass++) {
        int best = -1;
        double be = INFINITY;
        for (int i = 0; i < ps->n; i++) {
            double e;
            if (!pass && kind_cost(ps->files[i].meta.kind) == DLP_PRED_COST_SLOW)
                continue;
            if (!file_error(ps, i, t, c, b, &e)) continue;
            if (best < 0 || e < be) {
                best = i;
                be = e;
            }
        }
        if (best >= 0) return best;
    }
    return -1;
}

/* A target whose best file serves no other target moves to a file that
 * already runs for another target, when that file's error on it (on the
 * target's basis) is within DLP_PRED_SHARE_TOL (relative) of the best:
 * each GNN forward costs milliseconds (a 2,000-node graph: ~15-25 ms per
 * GNN), a gap of a few percent of the error is noise on ~100 validation
 * examples. Of the possible moves the one that loses least (relative
 * error) goes first, then the rest are re-examined: with the fifth
 * session's table, CUDA-graph latency alone in DIPPM (19.14%) and energy
 * alone in TraPPM (18.37%) could each join the other; moving energy costs
 * 2.1% of its error, moving latency 5.7%, so energy moves. A target on a
 * file of a kind of cost DLP_PRED_COST_FREE stays where it is: keeping it
 * for one target costs next to nothing (a sum over the graph's nodes, a dot
 * product of a few totals). With the eighth session's table the roofline
 * kind's memory estimate (5.34% held-out, CUDA-graph runtime) lost to
 * DIPPM's 5.65% only by the move. */
#define DLP_PRED_SHARE_TOL 0.10

static void share_files(const dlp_predictor_set *ps, const dlp_pred_config *c,
                        int *best, const dlp_choice_basis *basis) {
    for (;;) {
        int mt = -1, mj = -1;
        double mloss = INFINITY;
        for (int t = 0; t < DLP_T_COUNT; t++) {
            int i = best[t];
            if (i < 0) continue;
            bool alone = true;
            for (int u = 0; u < DLP_T_COUNT && alone; u++)
                alone = u == t || best[u] != i;
            if (!alone || kind_cost(ps->files[i].meta.kind) == DLP_PRED_COST_FREE)
                continue;
            double be;
            if (!file_error(ps, i, (dlp_target)t, c, basis[t], &be) ||
                be >= 1e30 || be <= 0)
                continue;
            for (int u = 0; u < DLP_T_COUNT; u++) {
                int j = best[u];
                if (u == t || j < 0 || j == i) continue;
                double e;
                if (file_error(ps, j, (dlp_target)t, c, basis[t], &e) &&
                    e < 1e30 && e <= be * (1 + DLP_PRED_SHARE_TOL) &&
                    e / be < mloss) {
                    mloss = e / be;
                    mt = t;
                    mj = j;
                }
            }
        }
        if (mt < 0) return;
        best[mt] = mj;
    }
}

void dlp_predict_set_choose(const dlp_predictor_set *ps,
                            const dlp_pred_config *c, int best[DLP_T_COUNT],
                            dlp_choice_basis basis[DLP_T_COUNT]) {
    dlp_choice_basis bs[DLP_T_COUNT];
    for (int t = 0; t < DLP_T_COUNT; t++) {
        /* held-out rows of the request's runtime, else of all runtimes
         * (training ignores the runtime), else the validation errors */
        static const dlp_choice_basis order[3] = {
            DLP_CHOICE_HELDOUT, DLP_CHOICE_HELDOUT_ALL, DLP_CHOICE_VALIDATION};
        best[t] = -1;
        bs[t] = DLP_CHOICE_NONE;
        for (int k = c->mode == DLP_MODE_TRAINING ? 1 : 0; k < 3; k++) {
            if (order[k] != DLP_CHOICE_VALIDATION && ps->heldout.n == 0)
                continue;
            best[t] = best_file(ps, (dlp_target)t, c, order[k]);
            if (best[t] >= 0) {
                bs[t] = order[k];
                break;
            }
        }
    }
    /* inference power is only a fallback for energy (energy = power x
     * latency when no file predicts energy): where one does, power must
     * not load a file of its own, nor keep the energy file from being
     * shared; it comes from the energy file, if that file has it */
    const int PW = DLP_T_INF_POWER_W, EN = DLP_T_INF_ENERGY_J;
    bool power_rides = best[EN] >= 0 && best[PW] >= 0;
    if (power_rides) best[PW] = -1;
    share_files(ps, c, best, bs);
    if (power_rides) {
        if (dlp_pred_meta_covers(&ps->files[best[EN]].meta, (dlp_target)PW, c)) {
            best[PW] = best[EN];
            bs[PW] = bs[EN];
        } else {
            bs[PW] = DLP_CHOICE_NONE;
        }
    }
    if (basis) memcpy(basis, bs, sizeof bs);
}

/* A free loaded copy of file i for this caller (loads one when all are
 * busy and fewer than DLP_PRED_MAX_INST exist, else waits). */
static dlp_status acquire(dlp_predictor_set *ps, int i, dlp_predictor **out,
                          int *slot, dlp_error *err) {
    dlp_status st = DLP_OK;
    dlp_pred_file *f = &ps->files[i];
    pthread_mutex_lock(&ps->lock);
    for (;;) {
        if (f->failed) {
            st = dlp_fail(err, f->failed, "%s", f->why);
            break;
        }
        int k = 0;
        while (k < f->n_inst && f->busy[k]) k++;
        if (k < f->n_inst) {
            f->busy[k] = true;
            *out = f->inst[k];
            *slot = k;
            break;
        }
        if (f->n_inst < DLP_PRED_MAX_INST) {
            dlp_predictor *p = NULL;
            st = dlp_predictor_load(f->path, dlp_predict_extra_kinds(), &p,
                                    err);
            if (st) {
                f->failed = st;
                snprintf(f->why, sizeof f->why, "%.255s", err ? err->msg : "");
                break;
            }
            f->inst[f->n_inst] = p;
            f->busy[f->n_inst] = true;
            *out = p;
            *slot = f->n_inst++;
            break;
        }
        pthread_cond_wait(&ps->freed, &ps->lock);
    }
    pthread_mutex_unlock(&ps->lock);
    return st;
}

static void release(dlp_predictor_set *ps, int i, int slot) {
    pthread_mutex_lock(&ps->lock);
    ps->files[i].busy[slot] = false;
    pthread_cond_signal(&ps->freed);
    pthread_mutex_unlock(&ps->lock);
}

dlp_status dlp_predict_set_run(dlp_predictor_set *ps, const dlp_pred_input *in,
                               dlp_pred_result *out, dlp_error *err) {
    dlp_pred_result_init(out);
    int best[DLP_T_COUNT], used[DLP_T_COUNT], n_used = 0, n_done = 0;
    dlp_choice_basis basis[DLP_T_COUNT];
    dlp_predict_set_choose(ps, in->cfg, best, basis);
    for (int t = 0; t < DLP_T_COUNT; t++) {
        int i = best[t];
        if (i < 0) continue;
        int k = 0;
        while (k < n_used && used[k] != i) k++;
        if (k < n_used) continue;
        used[n_used++] = i;
        dlp_predictor *p = NULL;
        int slot = 0;
        dlp_status st = acquire(ps, i, &p, &slot, err);
        if (st) return st;
        /* run it once; keep only the targets it is best for */
        dlp_pred_result r;
        dlp_pred_result_init(&r);
        st = dlp_predictor_predict(p, in, &r, err);
        /* the scan keeps no info string: the loaded file's */
        double ref = st ? 0 : dlp_pred_meta_host_ref_us(&p->meta);
        release(ps, i, slot);
        if (st) return st;
        bool take[DLP_T_COUNT];
        for (int u = 0; u < DLP_T_COUNT; u++) take[u] = u >= t && best[u] == i;
        n_done += dlp_pred_result_take(out, &r, take);
        for (int u = 0; u < DLP_T_COUNT; u++)
            if (take[u] && out->v[u].valid) out->v[u].host_ref_us = ref;
        /* the error the choice was made on, so a user sees what to expect */
        for (int u = 0; u < DLP_T_COUNT; u++) {
            double e;
            if (take[u] && out->v[u].valid &&
                file_error(ps, i, (dlp_target)u, in->cfg, basis[u], &e) &&
                e < 1e30) {
                out->v[u].err_pct = 100 * e;
                out->v[u].err_basis = dlp_choice_basis_name(basis[u]);
            }
        }
    }
    if (n_done == 0) return dlp_pred_none_covers(in, err);
    return DLP_OK;
}
