/*
 * dataset_graphs.c — graph files inside graphs/<pack>.tar.zst: walk a pack
 * member by member (zstd stream -> tar walker, never the whole pack in
 * memory), extract one graph by hash, or visit every graph once.
 */
#include "data/dataset.h"

#include <stdlib.h>
#include <string.h>

bool dlp_dataset_pack_path(const dlp_dataset *ds, const char *pack, char *buf,
                           size_t cap) {
    size_t pl = strlen(pack);
    const char *ext = ".tar.zst";
    bool has_ext = pl > 8 && strcmp(pack + pl - 8, ext) == 0;
    int n = snprintf(buf, cap, "%s/graphs/%s%s", ds->dir, pack,
                     has_ext ? "" : ext);
    return n > 0 && (size_t)n < cap;
}

/* "dir/abc.onnx" -> "abc", is_graph = true; other names pass unchanged. */
static const char *member_hash(const char *name, char *buf, size_t cap,
                               bool *is_graph) {
    const char *base = strrchr(name, '/');
    base = base ? base + 1 : name;
    size_t n = strlen(base);
    *is_graph = n > 5 && strcmp(base + n - 5, ".onnx") == 0 && n - 5 < cap;
    if (!*is_graph) return name;
    memcpy(buf, base, n - 5);
    buf[n - 5] = '\0';
    return buf;
}

dlp_status dlp_dataset_walk_pack(const char *path, bool with_bytes,
                                 dlp_pack_visit_fn fn, void *user,
                                 dlp_error *err) {
    dlp_zst_reader *z;
    dlp_status s = dlp_zst_open(path, &z, err);
    if (s) return s;
    dlp_tar t;
    dlp_tar_init(&t, path, dlp_zst_read_fn, z);
    for (;;) {
        bool got;
        s = dlp_tar_next(&t, &got, err);
        if (s || !got) break;
        char hb[DLP_TAR_MAX_NAME + 1];
        bool is_graph;
        const char *h = member_hash(t.name, hb, sizeof hb, &is_graph);
        void *bytes = NULL;
        if (with_bytes) {
            s = dlp_tar_read_data(&t, &bytes, err);
            if (s) break;
        }
        int stop = fn(h, is_graph, t.size, bytes, user);
        free(bytes);
        if (stop) break;
    }
    dlp_zst_close(z);
    return s;
}

dlp_status dlp_dataset_graph_bytes(const dlp_dataset *ds, const char *hash,
                                   void **bytes, size_t *len, dlp_error *err) {
    if (!ds || !hash || !bytes || !len)
        return dlp_fail(err, DLP_ERR_ARG, "dlp_dataset_graph_bytes: NULL "
                        "argument");
    *bytes = NULL;
    *len = 0;
    const dlp_graph_info *g = dlp_dataset_find_graph(ds, hash);
    if (!g)
        return dlp_fail(err, DLP_ERR_NOT_FOUND,
                        "graph %s is not in %s/graphs/index.csv", hash,
                        ds->dir);
    char path[4096];
    if (!dlp_dataset_pack_path(ds, g->pack, path, sizeof path))
        return dlp_fail(err, DLP_ERR_LIMIT, "pack path too long");
    /* Walk without bytes until the member is found, then read it: only
     * one graph is ever held. */
    dlp_zst_reader *z;
    dlp_status s = dlp_zst_open(path, &z, err);
    if (s) return s;
    dlp_tar t;
    dlp_tar_init(&t, path, dlp_zst_read_fn, z);
    bool found = false;
    for (;;) {
        bool got;
        s = dlp_tar_next(&t, &got, err);
        if (s || !got) break;
        char hb[DLP_TAR_MAX_NAME + 1];
        bool is_graph;
        const char *h = member_hash(t.name, hb, sizeof hb, &is_graph);
        if (!is_graph || strcmp(h, hash) != 0) continue;
        s = dlp_tar_read_data(&t, bytes, err);
        if (!s) {
            *len = (size_t)t.size;
            found = true;
        }
        break;
    }
    dlp_zst_close(z);
    if (s) return s;
    if (!found)
        return dlp_fail(err, DLP_ERR_NOT_FOUND, "graph %s is missing from %s",
                        hash, path);
    return DLP_OK;
}

typedef struct {
    const dlp_dataset *ds;
    dlp_graph_visit_fn fn;
    void *user;
    bool stopped;
} each_ctx;

static int each_visit(const char *name, bool is_graph, uint64_t size,
                      const void *bytes, void *user) {
    each_ctx *e = user;
    if (!is_graph) return 0;
    const dlp_graph_info *g = dlp_dataset_find_graph(e->ds, name);
    if (e->fn(name, g, bytes, (size_t)size, e->user)) {
        e->stopped = true;
        return 1;
    }
    return 0;
}

dlp_status dlp_dataset_foreach_graph(const dlp_dataset *ds,
                                     dlp_graph_visit_fn fn, void *user,
                                     dlp_error *err) {
    if (!ds || !fn)
        return dlp_fail(err, DLP_ERR_ARG, "dlp_dataset_foreach_graph: NULL "
                        "argument");
    each_ctx e = {ds, fn, user, false};
    for (size_t i = 0; i < ds->npacks && !e.stopped; i++) {
        char path[4096];
        if (!dlp_dataset_pack_path(ds, ds->packs[i], path, sizeof path))
            return dlp_fail(err, DLP_ERR_LIMIT, "pack path too long");
        dlp_status s = dlp_dataset_walk_pack(path, true, each_visit, &e, err);
        if (s) return s;
    }
    return DLP_OK;
}

typedef struct {
    const char *const *hash;
    void **bytes;
    size_t *lens;
    int n;
    bool oom;
} copy_ctx;

static int copy_visit(const char *hash, const dlp_graph_info *info,
                      const void *bytes, size_t len, void *user) {
    copy_ctx *c = user;
    (void)info;
    for (int i = 0; i < c->n; i++) {
        if (c->bytes[i] || strcmp(c->hash[i], hash)) continue;
        if (!(c->bytes[i] = malloc(len ? len : 1))) {
            c->oom = true;
            return 1;
        }
        memcpy(c->bytes[i], bytes, len);
        c->lens[i] = len;
    }
    return 0;
}

dlp_status dlp_dataset_graphs_bytes(const dlp_dataset *ds,
                                    const char *const *hashes, int n,
                                    void **bytes, size_t *lens,
                                    dlp_error *err) {
    if (!ds || n < 0 || (n && (!hashes || !bytes || !lens)))
        return dlp_fail(err, DLP_ERR_ARG, "dlp_dataset_graphs_bytes: NULL "
                        "argument or negative count");
    for (int i = 0; i < n; i++) {
        bytes[i] = NULL;
        lens[i] = 0;
    }
    copy_ctx c = {hashes, bytes, lens, n, false};
    dlp_status s = n ? dlp_dataset_foreach_graph(ds, copy_visit, &c, err) : DLP_OK;
    if (!s && c.oom)
        s = dlp_fail(err, DLP_ERR_NOMEM, "out of memory copying graph files");
    if (s)
        for (int i = 0; i < n; i++) {
            free(bytes[i]);
            bytes[i] = NULL;
        }
    return s;
}
