/*
 * test_dataset.c — the dataset loader and validator against the fixtures of
 * tests/fixtures/dataset/ and their oracle, expected.json (counts, stats,
 * rows and graph files computed independently by gen.py with Python's csv
 * module and numpy). Also: CSV, zstd and tar readers on crafted input, and
 * the repository's own data/ when it holds a dataset.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "core/core.h"
#include "data/dataset.h"

#define FIX "tests/fixtures/dataset"

static cJSON *expected;

static cJSON *load_json(const char *path) {
    char *text;
    size_t len;
    dlp_error err;
    if (dlp_read_file(path, 1 << 24, &text, &len, &err) != DLP_OK) {
        fprintf(stderr, "%s\n", err.msg);
        return NULL;
    }
    cJSON *j = cJSON_ParseWithLength(text, len);
    free(text);
    return j;
}

/* Every key of `want` must match in `got` (numbers to 1e-9 relative; a
 * null in `want` matches null / NaN). Returns the number of mismatches. */
static int compare(const cJSON *want, const cJSON *got, const char *path) {
    char sub[512];
    if (cJSON_IsNull(want)) {
        if (got && !cJSON_IsNull(got) &&
            !(cJSON_IsNumber(got) && isnan(got->valuedouble))) {
            fprintf(stderr, "  %s: want null\n", path);
            return 1;
        }
        return 0;
    }
    if (!got) {
        fprintf(stderr, "  %s: missing\n", path);
        return 1;
    }
    if (cJSON_IsNumber(want)) {
        double w = want->valuedouble, g = cJSON_IsNumber(got) ? got->valuedouble : NAN;
        if (!(fabs(w - g) <= 1e-9 * fmax(1.0, fabs(w)))) {
            fprintf(stderr, "  %s: want %.12g got %.12g\n", path, w, g);
            return 1;
        }
        return 0;
    }
    if (cJSON_IsString(want)) {
        if (!cJSON_IsString(got) || strcmp(want->valuestring, got->valuestring)) {
            fprintf(stderr, "  %s: want '%s'\n", path, want->valuestring);
            return 1;
        }
        return 0;
    }
    if (cJSON_IsBool(want)) {
        if (!cJSON_IsBool(got) || cJSON_IsTrue(want) != cJSON_IsTrue(got)) {
            fprintf(stderr, "  %s: bool differs\n", path);
            return 1;
        }
        return 0;
    }
    int bad = 0;
    if (cJSON_IsArray(want)) {
        if (!cJSON_IsArray(got) || cJSON_GetArraySize(want) != cJSON_GetArraySize(got)) {
            fprintf(stderr, "  %s: array size differs\n", path);
            return 1;
        }
        for (int i = 0; i < cJSON_GetArraySize(want); i++) {
            snprintf(sub, sizeof sub, "%s[%d]", path, i);
            bad += compare(cJSON_GetArrayItem(want, i), cJSON_GetArrayItem(got, i), sub);
        }
        return bad;
    }
    const cJSON *it;
    cJSON_ArrayForEach(it, want) {
        snprintf(sub, sizeof sub, "%s.%s", path, it->string);
        bad += compare(it, cJSON_GetObjectItemCaseSensitive(got, it->string), sub);
    }
    /* objects of counts must not have extra keys either */
    if (cJSON_IsObject(got) && cJSON_GetArraySize(got) != cJSON_GetArraySize(want) &&
        (strstr(path, "devices") || strstr(path, "runtimes") ||
         strstr(path, "precisions") || strstr(path, "families") ||
         strstr(path, "stages") || strstr(path, "modes"))) {
        fprintf(stderr, "  %s: %d keys, want %d\n", path, cJSON_GetArraySize(got),
                cJSON_GetArraySize(want));
        bad++;
    }
    return bad;
}

static bool any_contains(const cJSON *arr, const char *needle) {
    const cJSON *it;
    cJSON_ArrayForEach(it, arr) if (cJSON_IsString(it) && strstr(it->valuestring, needle)) return true;
    return false;
}

/* ---- the fixture cases --------------------------------------------------- */

static void run_case(const cJSON *c) {
    char dir[512];
    snprintf(dir, sizeof dir, FIX "/%s", c->string);
    bool open_ok = cJSON_IsTrue(cJSON_GetObjectItem(c, "open_ok"));
    const cJSON *words = cJSON_GetObjectItem(c, "error");
    dlp_dataset *ds = NULL;
    dlp_error err = {0};
    dlp_status s = dlp_dataset_open(dir, &ds, &err);
    if (!open_ok) {
        CHECK_MSG(s != DLP_OK, "%s: open should fail", c->string);
        const cJSON *w;
        cJSON_ArrayForEach(w, words)
            CHECK_MSG(strstr(err.msg, w->valuestring), "%s: '%s' not in '%s'",
                      c->string, w->valuestring, err.msg);
        CHECK(ds == NULL);
        return;
    }
    CHECK_MSG(s == DLP_OK, "%s: %s", c->string, err.msg);
    if (s) return;
    char *json = NULL;
    int ne = -1, nw = -1;
    s = dlp_dataset_check(ds, &json, &ne, &nw, &err);
    CHECK_MSG(s == DLP_OK, "%s: check: %s", c->string, err.msg);
    cJSON *r = json ? cJSON_Parse(json) : NULL;
    CHECK(r != NULL);
    const cJSON *n_err = cJSON_GetObjectItem(c, "n_errors");
    if (n_err) {
        CHECK_MSG(ne == n_err->valueint, "%s: %d errors, want %d:\n%s", c->string,
                  ne, n_err->valueint, json);
        CHECK(!cJSON_IsTrue(cJSON_GetObjectItem(r, "valid")));
    }
    const cJSON *w;
    cJSON_ArrayForEach(w, words)
        CHECK_MSG(any_contains(cJSON_GetObjectItem(r, "errors"), w->valuestring),
                  "%s: no error mentions '%s'", c->string, w->valuestring);
    const cJSON *want = cJSON_GetObjectItem(c, "report");
    if (want) CHECK_MSG(compare(want, r, c->string) == 0, "%s: report differs", c->string);
    const cJSON *gbf = cJSON_GetObjectItem(c, "graph_bytes_fails");
    cJSON_ArrayForEach(w, gbf) {
        void *b = NULL;
        size_t n = 0;
        dlp_status gs = dlp_dataset_graph_bytes(ds, w->valuestring, &b, &n, &err);
        CHECK_MSG(gs == DLP_ERR_FORMAT, "%s: graph_bytes(%s) = %d", c->string,
                  w->valuestring, gs);
        CHECK(b == NULL);
    }
    (void)nw;
    cJSON_Delete(r);
    free(json);
    dlp_dataset_free(ds);
}

static void test_fixture_cases(void) {
    CHECK(expected != NULL);
    if (!expected) return;
    int n = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, expected) {
        run_case(c);
        n++;
    }
    CHECK(n >= 15);
}

/* ---- the valid dataset in detail ----------------------------------------- */

typedef struct {
    const cJSON *files;
    int visited, bad;
} visit_ctx;

static int visit(const char *hash, const dlp_graph_info *g, const void *bytes,
                 size_t len, void *user) {
    visit_ctx *v = user;
    v->visited++;
    const cJSON *f = cJSON_GetObjectItem(v->files, hash);
    uint32_t sum = 0;
    for (size_t i = 0; i < len; i++) sum += ((const unsigned char *)bytes)[i];
    if (!f || !g || (double)len != cJSON_GetObjectItem(f, "size")->valuedouble ||
        (double)sum != cJSON_GetObjectItem(f, "sum")->valuedouble)
        v->bad++;
    /* the bytes are a model the reader opens in place */
    dlp_model *m = NULL;
    dlp_error err;
    dlp_summary s;
    if (dlp_model_open_memory(bytes, len, hash, &m, &err) != DLP_OK ||
        dlp_model_set_batch(m, 4, &err) != DLP_OK ||
        dlp_model_analyze(m, &err) != DLP_OK || dlp_model_summary(m, &s) != DLP_OK ||
        !g || s.nodes != g->nodes) {
        fprintf(stderr, "  graph %s: %s\n", hash, m ? "wrong summary" : err.msg);
        v->bad++;
    }
    dlp_model_free(m);
    return 0;
}

static int stop_at_first(const char *h, const dlp_graph_info *g, const void *b,
                         size_t n, void *user) {
    (void)h, (void)g, (void)b, (void)n;
    ++*(int *)user;
    return 1;
}

static void test_valid_rows_and_graphs(void) {
    const cJSON *v = cJSON_GetObjectItem(expected, "valid");
    CHECK(v != NULL);
    if (!v) return;
    dlp_dataset *ds;
    dlp_error err;
    CHECK_MSG(dlp_dataset_open(FIX "/valid/", &ds, &err) == DLP_OK, "%s", err.msg);
    if (!ds) return;
    CHECK(!strcmp(dlp_dataset_dir(ds), FIX "/valid"));
    dlp_dataset_counts n;
    dlp_dataset_get_counts(ds, &n);
    const cJSON *cn = cJSON_GetObjectItem(v, "counts");
    CHECK(n.graphs == (size_t)cJSON_GetObjectItem(cn, "graphs")->valueint);
    CHECK(n.packs == (size_t)cJSON_GetObjectItem(cn, "packs")->valueint);
    CHECK(n.batches == (size_t)cJSON_GetObjectItem(cn, "batches")->valueint);
    CHECK(n.inference == (size_t)cJSON_GetObjectItem(cn, "inference")->valueint);
    CHECK(n.training == (size_t)cJSON_GetObjectItem(cn, "training")->valueint);
    CHECK(n.llm == (size_t)cJSON_GetObjectItem(cn, "llm")->valueint);
    CHECK(n.kernels == (size_t)cJSON_GetObjectItem(cn, "kernels")->valueint);
    CHECK(n.failures == (size_t)cJSON_GetObjectItem(cn, "failures")->valueint);
    CHECK(dlp_dataset_inference(ds, n.inference) == NULL);
    CHECK(dlp_dataset_graph(ds, n.graphs) == NULL);

    const cJSON *row;
    cJSON_ArrayForEach(row, cJSON_GetObjectItem(v, "inference_rows")) {
        int i = cJSON_GetObjectItem(row, "index")->valueint;
        const dlp_inference_row *r = dlp_dataset_inference(ds, (size_t)i);
        CHECK(r != NULL);
        if (!r) continue;
        CHECK_MSG(r->c.line == cJSON_GetObjectItem(row, "line")->valueint,
                  "row %d line %lld", i, (long long)r->c.line);
        CHECK(!strcmp(r->c.hash, cJSON_GetObjectItem(row, "hash")->valuestring));
        CHECK(!strcmp(r->runtime, cJSON_GetObjectItem(row, "runtime")->valuestring));
        CHECK(!strcmp(r->precision, cJSON_GetObjectItem(row, "precision")->valuestring));
        CHECK(r->c.rep == cJSON_GetObjectItem(row, "rep")->valueint);
        CHECK(r->batch == cJSON_GetObjectItem(row, "batch")->valueint);
        CHECK(r->seq == cJSON_GetObjectItem(row, "seq")->valueint);
        CHECK(r->height == cJSON_GetObjectItem(row, "height")->valueint);
        CHECK_CLOSE(r->latency_ms, cJSON_GetObjectItem(row, "latency_ms")->valuedouble, 1e-12);
        const cJSON *e = cJSON_GetObjectItem(row, "energy_j");
        if (cJSON_IsNull(e))
            CHECK(isnan(r->energy_j));
        else
            CHECK_CLOSE(r->energy_j, e->valuedouble, 1e-12);
        CHECK(strstr(r->c.file, cJSON_GetObjectItem(row, "file_suffix")->valuestring));
        CHECK(!strcmp(r->c.protocol, "p1") && !strcmp(r->c.device, "H100-SXM5-80GB"));
    }
    /* graphs: one by hash, then all in one pass */
    const cJSON *files = cJSON_GetObjectItem(v, "graph_files"), *f;
    cJSON_ArrayForEach(f, files) {
        const dlp_graph_info *g = dlp_dataset_find_graph(ds, f->string);
        CHECK(g && !strcmp(g->pack, cJSON_GetObjectItem(f, "pack")->valuestring));
        void *b = NULL;
        size_t len = 0;
        CHECK_MSG(dlp_dataset_graph_bytes(ds, f->string, &b, &len, &err) == DLP_OK,
                  "%s", err.msg);
        uint32_t sum = 0;
        for (size_t i = 0; i < len; i++) sum += ((unsigned char *)b)[i];
        CHECK(len == (size_t)cJSON_GetObjectItem(f, "size")->valueint);
        CHECK((double)sum == cJSON_GetObjectItem(f, "sum")->valuedouble);
        CHECK(g && (int64_t)len == g->file_bytes);
        char h[17];
        dlp_sha256_hex16(b, len, h);
        CHECK(!strcmp(h, f->string)); /* the file hashes to its name */
        free(b);
    }
    visit_ctx vc = {files, 0, 0};
    CHECK(dlp_dataset_foreach_graph(ds, visit, &vc, &err) == DLP_OK);
    CHECK(vc.visited == cJSON_GetArraySize(files) && vc.bad == 0);
    int calls = 0;
    CHECK(dlp_dataset_foreach_graph(ds, stop_at_first, &calls, &err) == DLP_OK);
    CHECK(calls == 1);
    /* unknown hash */
    void *b = (void *)1;
    size_t len = 1;
    CHECK(dlp_dataset_find_graph(ds, "0000000000000000") == NULL);
    CHECK(dlp_dataset_graph_bytes(ds, "0000000000000000", &b, &len, &err) ==
          DLP_ERR_NOT_FOUND);
    CHECK(b == NULL && len == 0 && strstr(err.msg, "0000000000000000"));
    /* many graphs in one pass: the same bytes as one by one, a repeated
     * hash gets its own copy, an unknown one NULL */
    {
        const char *hs[8];
        int nh = 0;
        cJSON_ArrayForEach(f, files) if (nh < 6) hs[nh++] = f->string;
        int nf = nh;
        if (nf) hs[nh++] = hs[0];
        hs[nh++] = "0000000000000000";
        void *bs[8];
        size_t ls[8];
        CHECK_MSG(dlp_dataset_graphs_bytes(ds, hs, nh, bs, ls, &err) == DLP_OK,
                  "%s", err.msg);
        for (int i = 0; i < nf; i++) {
            void *one = NULL;
            size_t n1 = 0;
            CHECK(dlp_dataset_graph_bytes(ds, hs[i], &one, &n1, &err) == DLP_OK);
            CHECK(bs[i] && ls[i] == n1 && !memcmp(bs[i], one, n1));
            free(one);
        }
        if (nf) CHECK(bs[nf] && bs[nf] != bs[0] && ls[nf] == ls[0] &&
                      !memcmp(bs[nf], bs[0], ls[0]));
        CHECK(bs[nh - 1] == NULL && ls[nh - 1] == 0);
        for (int i = 0; i < nh; i++) free(bs[i]);
        CHECK(nf > 0);
        CHECK(dlp_dataset_graphs_bytes(ds, NULL, 2, bs, ls, &err) == DLP_ERR_ARG);
        CHECK(dlp_dataset_graphs_bytes(ds, hs, -1, bs, ls, &err) == DLP_ERR_ARG);
        CHECK(dlp_dataset_graphs_bytes(ds, hs, 0, NULL, NULL, &err) == DLP_OK);
    }
    /* typed rows of the other kinds */
    const dlp_training_row *t = dlp_dataset_training(ds, 0);
    CHECK(t && !strcmp(t->optimizer, "sgd_momentum") && t->height == 224 && t->step_ms > 0);
    const dlp_llm_row *l = dlp_dataset_llm(ds, 0);
    CHECK(l && !strcmp(l->c.protocol, "p1") && l->seq == 128 && l->batch == 1);
    CHECK(l && fabs(l->throughput_samples_s - l->batch / (l->latency_ms / 1000)) <
                   1e-3 * l->throughput_samples_s);
    const dlp_kernel_row *k = dlp_dataset_kernel(ds, 0);
    CHECK(k && strstr(k->kernel, "elementwise_kernel<128, 4>") && k->sms == 0 &&
          strchr(k->nodes, '|') && !strcmp(k->grid, "1:1:1"));
    const dlp_failure_row *fl = dlp_dataset_failure(ds, 0);
    CHECK(fl && !strcmp(fl->stage, "export") && strstr(fl->reason, "opset 17"));
    dlp_dataset_free(ds);
    dlp_dataset_free(NULL);
}

/* SHA-256 against Python's hashlib (the SHA-extension path on CPUs that
 * have it; test_sha256_portable reruns this in a child with it disabled). */
static void test_sha256(void) {
    const cJSON *v = cJSON_GetObjectItem(expected, "valid"), *sv;
    cJSON_ArrayForEach(sv, cJSON_GetObjectItem(v, "sha256")) {
        unsigned char d[32];
        char hex[65];
        dlp_sha256(sv->string, strlen(sv->string), d);
        for (int i = 0; i < 32; i++) snprintf(hex + 2 * i, 3, "%02x", d[i]);
        CHECK_MSG(!strcmp(hex, sv->valuestring), "sha256 of %zu bytes",
                  strlen(sv->string));
    }
    CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(v, "sha256")) == 8);
    /* a long input, split at every offset class, hashes the same in one go */
    size_t n = 100000;
    unsigned char *big = malloc(n);
    if (!big) return;
    for (size_t i = 0; i < n; i++) big[i] = (unsigned char)(i * 2654435761u >> 13);
    char a[17], b[17];
    dlp_sha256_hex16(big, n, a);
    dlp_sha256_hex16(big, n, b);
    CHECK(!strcmp(a, b) && strlen(a) == 16);
    free(big);
}

static const char *argv0;

static void test_sha256_portable(void) {
    char cmd[600];
    snprintf(cmd, sizeof cmd, "DLP_SHA256_PORTABLE=1 %s --sha-only >/dev/null", argv0);
    int rc = system(cmd);
    CHECK(WIFEXITED(rc) && WEXITSTATUS(rc) == 0);
}

static void test_bad_arguments(void) {
    dlp_dataset *ds = NULL;
    dlp_error err;
    CHECK(dlp_dataset_open(NULL, &ds, &err) == DLP_ERR_ARG);
    CHECK(dlp_dataset_open("tests/fixtures/dataset/nope", &ds, &err) == DLP_ERR_IO);
    CHECK(strstr(err.msg, "nope") != NULL);
    CHECK(dlp_dataset_open(FIX "/gen.py", &ds, &err) == DLP_ERR_IO);
    CHECK(dlp_dataset_check(NULL, NULL, NULL, NULL, &err) == DLP_ERR_ARG);
}

/* ---- readers ------------------------------------------------------------- */

static void test_csv_quoting(void) {
    const char *t = "\xEF\xBB\xBF" "a,b,c\r\n"
                    "1,\"x,y\",\"he said \"\"hi\"\"\"\r\n"
                    "\n"
                    "2,\"two\nlines\",\r\n"
                    "3,,last";
    dlp_csv c;
    dlp_error err;
    bool got;
    dlp_csv_init(&c, "t.csv", t, strlen(t));
    CHECK(dlp_csv_next(&c, &got, &err) == DLP_OK && got && c.nf == 3);
    CHECK(!strcmp(dlp_csv_field(&c, 0), "a") && !strcmp(dlp_csv_field(&c, 2), "c"));
    CHECK(dlp_csv_next(&c, &got, &err) == DLP_OK && got && c.nf == 3 && c.rec_line == 2);
    CHECK(!strcmp(dlp_csv_field(&c, 1), "x,y"));
    CHECK(!strcmp(dlp_csv_field(&c, 2), "he said \"hi\""));
    CHECK(dlp_csv_next(&c, &got, &err) == DLP_OK && got && c.nf == 3 && c.rec_line == 4);
    CHECK(!strcmp(dlp_csv_field(&c, 1), "two\nlines") && c.lens[2] == 0);
    CHECK(dlp_csv_next(&c, &got, &err) == DLP_OK && got && c.rec_line == 6);
    CHECK(c.nf == 3 && !strcmp(dlp_csv_field(&c, 2), "last") && c.lens[1] == 0);
    CHECK(dlp_csv_next(&c, &got, &err) == DLP_OK && !got);
    dlp_csv_free(&c);
}

static dlp_status csv_first_error(const char *t, size_t len, size_t maxrec,
                                  dlp_error *err) {
    dlp_csv c;
    bool got = true;
    dlp_status s = DLP_OK;
    dlp_csv_init(&c, "bad.csv", t, len);
    c.max_record = maxrec;
    while (!s && got) s = dlp_csv_next(&c, &got, err);
    dlp_csv_free(&c);
    return s;
}

static void test_csv_errors(void) {
    dlp_error err;
    const char *t1 = "a,b\n1,\"open\n2,3\n";
    CHECK(csv_first_error(t1, strlen(t1), 0, &err) == DLP_ERR_FORMAT);
    CHECK(strstr(err.msg, "bad.csv:2:") && strstr(err.msg, "unterminated"));
    const char *t2 = "a,b\n1,x\"y\n";
    CHECK(csv_first_error(t2, strlen(t2), 0, &err) == DLP_ERR_FORMAT);
    CHECK(strstr(err.msg, "bad.csv:2:") && strstr(err.msg, "quote inside"));
    const char *t3 = "a,b\n1,\"x\"y\n";
    CHECK(csv_first_error(t3, strlen(t3), 0, &err) == DLP_ERR_FORMAT);
    CHECK(strstr(err.msg, "after a closing quote") != NULL);
    const char t4[] = "a,b\n1,x\0y\n";
    CHECK(csv_first_error(t4, sizeof t4 - 1, 0, &err) == DLP_ERR_FORMAT);
    CHECK(strstr(err.msg, "NUL") != NULL);
    const char *t5 = "a,b\n1,0123456789012345678901234567890123456789\n";
    CHECK(csv_first_error(t5, strlen(t5), 16, &err) == DLP_ERR_LIMIT);
    CHECK(strstr(err.msg, "bad.csv:2:") && strstr(err.msg, "longer than 16"));
    /* the default bound: a record over DLP_CSV_MAX_RECORD bytes */
    size_t big = DLP_CSV_MAX_RECORD + 100;
    char *t6 = malloc(big + 8);
    CHECK(t6 != NULL);
    if (t6) {
        memcpy(t6, "a\n", 2);
        memset(t6 + 2, 'x', big);
        CHECK(csv_first_error(t6, big + 2, 0, &err) == DLP_ERR_LIMIT);
        free(t6);
    }
}

typedef struct {
    const unsigned char *p;
    size_t n, pos;
} mem_src;

static dlp_status mem_read(void *ctx, void *dst, size_t n, size_t *got,
                           dlp_error *err) {
    (void)err;
    mem_src *m = ctx;
    size_t k = m->n - m->pos < n ? m->n - m->pos : n;
    memcpy(dst, m->p + m->pos, k);
    m->pos += k;
    *got = k;
    return DLP_OK;
}

/* Walks a tar in memory; returns the status of the first failure. */
static dlp_status walk_mem(const unsigned char *p, size_t n, int *members,
                           dlp_error *err) {
    mem_src m = {p, n, 0};
    dlp_tar t;
    dlp_tar_init(&t, "mem.tar", mem_read, &m);
    *members = 0;
    for (;;) {
        bool got;
        dlp_status s = dlp_tar_next(&t, &got, err);
        if (s) return s;
        if (!got) return DLP_OK;
        void *d;
        s = dlp_tar_read_data(&t, &d, err);
        if (s) return s;
        free(d);
        ++*members;
    }
}

static void test_tar_and_zstd(void) {
    char *tar;
    size_t n;
    dlp_error err;
    CHECK(dlp_zst_read_file(FIX "/valid/graphs/pack-a.tar.zst", 1 << 24, &tar, &n,
                            &err) == DLP_OK);
    if (!tar) return;
    CHECK(n % 512 == 0 && n >= 3 * 512);
    int members = 0;
    CHECK(walk_mem((unsigned char *)tar, n, &members, &err) == DLP_OK);
    CHECK(members == 4); /* the directory and pax headers are not members */
    unsigned char *bad = malloc(n);
    if (!bad) return;
    /* a flipped byte in the first header's name: checksum error */
    memcpy(bad, tar, n);
    bad[3] ^= 0x20;
    CHECK(walk_mem(bad, n, &members, &err) == DLP_ERR_FORMAT);
    CHECK(strstr(err.msg, "checksum") != NULL);
    /* cut inside the archive: truncated */
    CHECK(walk_mem((unsigned char *)tar, n - 1024 - 700, &members, &err) == DLP_ERR_FORMAT);
    CHECK(strstr(err.msg, "truncated tar") != NULL);
    /* no end-of-archive blocks at all */
    memset(bad, 0, 512);
    CHECK(walk_mem(bad, 0, &members, &err) == DLP_ERR_FORMAT);
    /* a huge size (octal 77777777777 = 8 GiB) with a valid checksum */
    memcpy(bad, tar, 512);
    memcpy(bad + 124, "77777777777", 11);
    unsigned sum = 0;
    memset(bad + 148, ' ', 8);
    for (int i = 0; i < 512; i++) sum += bad[i];
    snprintf((char *)bad + 148, 8, "%06o", sum);
    CHECK(walk_mem(bad, 512, &members, &err) == DLP_ERR_LIMIT);
    free(bad);
    free(tar);
    /* zstd: two frames back to back decode as one stream */
    char *one, *two, *z;
    size_t n1, n2, nz;
    const char *kz = FIX "/valid/batches/20261126T0400-vision-a/kernels.csv.zst";
    CHECK(dlp_zst_read_file(kz, 1 << 24, &one, &n1, &err) == DLP_OK);
    CHECK(dlp_read_file(kz, 1 << 24, &z, &nz, &err) == DLP_OK);
    char twice[] = "/tmp/dlp_test_twice_XXXXXX";
    int fd = mkstemp(twice);
    CHECK(fd >= 0);
    if (fd >= 0 && z && one) {
        FILE *f = fdopen(fd, "wb");
        fwrite(z, 1, nz, f);
        fwrite(z, 1, nz, f);
        fclose(f);
        CHECK(dlp_zst_read_file(twice, 1 << 24, &two, &n2, &err) == DLP_OK);
        CHECK(n2 == 2 * n1 && !memcmp(two, one, n1) && !memcmp(two + n1, one, n1));
        free(two);
        unlink(twice);
    }
    free(one);
    free(z);
    /* zstd: missing file, not zstd, limit */
    CHECK(dlp_zst_read_file(FIX "/nope.zst", 100, &tar, &n, &err) == DLP_ERR_IO);
    CHECK(dlp_zst_read_file(FIX "/gen.py", 1 << 20, &tar, &n, &err) == DLP_ERR_FORMAT);
    CHECK(strstr(err.msg, "zstd") != NULL);
    CHECK(dlp_zst_read_file(FIX "/valid/graphs/pack-a.tar.zst", 1000, &tar, &n,
                            &err) == DLP_ERR_LIMIT);
}

/* ---- mutated input: never a crash, always a status ------------------------ */

static uint64_t rng_state = 0x2545F4914F6CDD1Dull;
static uint32_t rnd(void) {
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(rng_state >> 33);
}

/* Random edits that matter to a CSV reader or a tar walker. */
static size_t mutate(unsigned char *p, size_t n, size_t cap) {
    static const char pieces[] = "\",\n\r\"\"0-e9.x\0";
    int edits = 1 + (int)(rnd() % 4);
    for (int e = 0; e < edits && n; e++) {
        size_t at = rnd() % n;
        switch (rnd() % 5) {
        case 0: p[at] ^= (unsigned char)(1u << (rnd() % 8)); break;
        case 1: p[at] = (unsigned char)pieces[rnd() % (sizeof pieces - 1)]; break;
        case 2: n = at; break; /* truncate */
        case 3:
            if (n < cap) {
                memmove(p + at + 1, p + at, n - at);
                p[at] = (unsigned char)pieces[rnd() % (sizeof pieces - 1)];
                n++;
            }
            break;
        default: memset(p + at, rnd() & 1 ? 0 : 0xff, n - at < 12 ? n - at : 12);
        }
    }
    return n;
}

static bool write_bytes(const char *path, const void *p, size_t n) {
    FILE *f = fopen(path, "wb");
    if (!f) return false;
    bool ok = fwrite(p, 1, n, f) == n;
    return fclose(f) == 0 && ok;
}

static void test_mutated_inputs(void) {
    char *csv, *idx;
    size_t ncsv, nidx;
    dlp_error err;
    const char *src = FIX "/valid/batches/20261126T0400-vision-a/inference.csv";
    CHECK(dlp_read_file(src, 1 << 20, &csv, &ncsv, &err) == DLP_OK);
    CHECK(dlp_read_file(FIX "/valid/graphs/index.csv", 1 << 20, &idx, &nidx, &err) ==
          DLP_OK);
    char dir[] = "/tmp/dlp_test_dataset_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char p[256], cmd[300];
    snprintf(p, sizeof p, "%s/graphs", dir);
    mkdir(p, 0700);
    snprintf(p, sizeof p, "%s/batches", dir);
    mkdir(p, 0700);
    snprintf(p, sizeof p, "%s/batches/b", dir);
    mkdir(p, 0700);
    size_t cap = ncsv + 64;
    unsigned char *buf = malloc(cap);
    int opened = 0, failed = 0, bad = 0;
    for (int it = 0; buf && it < 400; it++) {
        bool on_index = it % 4 == 3;
        const char *orig = on_index ? idx : csv;
        size_t n0 = on_index ? nidx : ncsv;
        if (n0 + 64 > cap) continue;
        memcpy(buf, orig, n0);
        size_t n = mutate(buf, n0, n0 + 64);
        snprintf(p, sizeof p, "%s/graphs/index.csv", dir);
        write_bytes(p, on_index ? buf : (unsigned char *)idx, on_index ? n : nidx);
        snprintf(p, sizeof p, "%s/batches/b/inference.csv", dir);
        write_bytes(p, on_index ? (unsigned char *)csv : buf, on_index ? ncsv : n);
        dlp_dataset *ds = NULL;
        err.msg[0] = '\0';
        dlp_status s = dlp_dataset_open(dir, &ds, &err);
        if (s == DLP_OK) {
            opened++;
            char *json = NULL;
            if (dlp_dataset_check(ds, &json, NULL, NULL, &err) != DLP_OK) bad++;
            free(json);
            dlp_dataset_free(ds);
        } else {
            failed++;
            if (!err.msg[0] || (s != DLP_ERR_FORMAT && s != DLP_ERR_LIMIT)) bad++;
        }
    }
    CHECK_MSG(bad == 0, "%d mutated inputs gave no clear status", bad);
    CHECK(opened > 20 && failed > 20); /* both paths were exercised */
    /* tar walker on mutated packs */
    char *tar;
    size_t ntar;
    CHECK(dlp_zst_read_file(FIX "/valid/graphs/pack-a.tar.zst", 1 << 24, &tar, &ntar,
                            &err) == DLP_OK);
    unsigned char *tb = tar ? malloc(ntar + 64) : NULL;
    int tfail = 0;
    for (int it = 0; tb && it < 400; it++) {
        memcpy(tb, tar, ntar);
        size_t n = mutate(tb, ntar, ntar + 64);
        int members;
        dlp_status s = walk_mem(tb, n, &members, &err);
        if (s) tfail++;
        CHECK(s == DLP_OK || s == DLP_ERR_FORMAT || s == DLP_ERR_LIMIT);
    }
    CHECK(tfail > 50);
    free(tb);
    free(tar);
    free(buf);
    free(csv);
    free(idx);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
}

/* ---- the CLI: exit codes and the JSON it prints -------------------------- */

static int run_rc(const char *cmd) {
    int rc = system(cmd);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

static void test_cli(void) {
    char bin[512], cmd[1400];
    snprintf(bin, sizeof bin, "%s", argv0);
    char *slash = strrchr(bin, '/');
    if (!slash) return;
    *slash = '\0';
    slash = strrchr(bin, '/');
    if (!slash) return;
    strcpy(slash, "/dlperf");
    if (access(bin, X_OK) != 0) {
        printf("  (%s absent: CLI not checked)\n", bin);
        return;
    }
    snprintf(cmd, sizeof cmd, "%s dataset stats " FIX "/valid >/dev/null", bin);
    CHECK(run_rc(cmd) == 0);
    const cJSON *rep = cJSON_GetObjectItem(cJSON_GetObjectItem(expected, "valid"), "report");
    int li = cJSON_GetObjectItem(rep, "labeled_inference")->valueint;
    snprintf(cmd, sizeof cmd,
             "%s dataset stats " FIX "/valid --json | grep -q '\"labeled_inference\":\t%d,'",
             bin, li);
    CHECK(run_rc(cmd) == 0);
    snprintf(cmd, sizeof cmd,
             "%s dataset stats " FIX "/missing_graph | grep -q 'ffffffffffffffff is not in'",
             bin);
    CHECK(run_rc(cmd) == 0);
    snprintf(cmd, sizeof cmd, "%s dataset stats " FIX "/missing_graph >/dev/null", bin);
    CHECK(run_rc(cmd) == 1);
    snprintf(cmd, sizeof cmd,
             "%s dataset stats " FIX "/bad_quote 2>&1 >/dev/null | grep -q unterminated", bin);
    CHECK(run_rc(cmd) == 0);
    snprintf(cmd, sizeof cmd, "%s dataset stats " FIX "/bad_quote 2>/dev/null", bin);
    CHECK(run_rc(cmd) == 1);
    /* extract: the bytes hash to their name */
    const cJSON *files = cJSON_GetObjectItem(cJSON_GetObjectItem(expected, "valid"),
                                             "graph_files");
    const char *h = files && files->child ? files->child->string : "x";
    snprintf(cmd, sizeof cmd,
             "%s dataset extract " FIX "/valid %s | sha256sum | grep -q '^%s'", bin, h, h);
    CHECK(run_rc(cmd) == 0);
    snprintf(cmd, sizeof cmd, "%s dataset extract " FIX "/valid 0000000000000000 2>/dev/null",
             bin);
    CHECK(run_rc(cmd) == 1);
    /* kernels: the valid dataset's two eager traces, compared */
    snprintf(cmd, sizeof cmd, "%s dataset kernels " FIX "/valid | grep -q "
             "'^2 eager trace configurations (0 left out'", bin);
    CHECK(run_rc(cmd) == 0);
    snprintf(cmd, sizeof cmd, "%s dataset kernels " FIX "/no_such_dir 2>/dev/null", bin);
    CHECK(run_rc(cmd) == 1);
    snprintf(cmd, sizeof cmd, "%s dataset kernels 2>/dev/null", bin);
    CHECK(run_rc(cmd) == 2);
    snprintf(cmd, sizeof cmd, "%s dataset kernels --help >/dev/null", bin);
    CHECK(run_rc(cmd) == 0);
    snprintf(cmd, sizeof cmd, "%s dataset 2>/dev/null", bin);
    CHECK(run_rc(cmd) == 2);
    snprintf(cmd, sizeof cmd, "%s dataset stats a b 2>/dev/null", bin);
    CHECK(run_rc(cmd) == 2);
}

/* 1500 rows with unknown hashes: every problem counted, 1000 kept. */
static void test_problem_cap(void) {
    char dir[] = "/tmp/dlp_test_cap_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char p[256], cmd[300];
    snprintf(p, sizeof p, "%s/graphs", dir);
    mkdir(p, 0700);
    snprintf(p, sizeof p, "%s/graphs/index.csv", dir);
    FILE *f = fopen(p, "w");
    if (!f) return;
    fputs("hash,family,model,variant,source,exporter,opset,nodes,file_bytes,params,pack\n", f);
    fclose(f);
    snprintf(p, sizeof p, "%s/batches", dir);
    mkdir(p, 0700);
    snprintf(p, sizeof p, "%s/batches/b", dir);
    mkdir(p, 0700);
    snprintf(p, sizeof p, "%s/batches/b/llm.csv", dir);
    f = fopen(p, "w");
    if (!f) return;
    fputs("protocol,batch_id,hash,device,rep,status,runtime,precision,batch,seq,"
          "latency_ms,throughput_samples_s,memory_mib,energy_per_sample_j,power_w\n", f);
    for (int i = 0; i < 1500; i++)
        fprintf(f, "p1,b,%016x,H100-SXM5-80GB,0,ok,graph,bf16,1,%d,1.5,666,100,,\n", i, i + 1);
    fclose(f);
    dlp_dataset *ds;
    dlp_error err;
    CHECK(dlp_dataset_open(dir, &ds, &err) == DLP_OK);
    char *json = NULL;
    int ne = 0, nw = 0;
    CHECK(dlp_dataset_check(ds, &json, &ne, &nw, &err) == DLP_OK);
    CHECK(ne == 1500);
    cJSON *r = json ? cJSON_Parse(json) : NULL;
    CHECK(r && cJSON_GetArraySize(cJSON_GetObjectItem(r, "errors")) == 1000);
    CHECK(r && cJSON_GetObjectItem(r, "n_errors")->valueint == 1500);
    CHECK(r && cJSON_GetObjectItem(r, "labeled_llm")->valueint == 1500);
    cJSON_Delete(r);
    free(json);
    dlp_dataset_free(ds);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
}

/* host_us, a column added to inference.csv later: read where a file has
 * it (two_cards' card-b: 4.25 in rep 0, 4.75 + batch / 4 in rep 1), NAN where the
 * header lacks it (card-a), and a value out of range is an error */
static void test_late_column(void) {
    dlp_dataset *ds = NULL;
    dlp_error err;
    CHECK(dlp_dataset_open(FIX "/two_cards", &ds, &err) == DLP_OK);
    if (!ds) return;
    int with = 0, without = 0;
    const dlp_inference_row *r;
    for (size_t i = 0; (r = dlp_dataset_inference(ds, i)); i++) {
        if (!strcmp(r->c.device, "H200-SXM-141GB")) {
            with++;
            CHECK(r->host_us == (r->c.rep ? 4.75 + 0.25 * (double)r->batch : 4.25));
        } else {
            without++;
            CHECK(isnan(r->host_us));
        }
    }
    CHECK(with == 20 && without == 24);   /* 5 and 6 configs x 2 runtimes x 2 reps */
    dlp_dataset_free(ds);
    /* the same file with one host_us of -1 */
    char dir[] = "/tmp/dlp_late_XXXXXX", cmd[1024], path[600];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(cmd, sizeof cmd, "cp -r " FIX "/two_cards/. %s", dir);
    CHECK(run_rc(cmd) == 0);
    snprintf(path, sizeof path, "%s/batches/20261126T0800-card-b/inference.csv", dir);
    snprintf(cmd, sizeof cmd, "sed -i '2s/,4.25$/,-1/' %s", path);   /* rep 0 */
    CHECK(run_rc(cmd) == 0);
    CHECK(dlp_dataset_open(dir, &ds, &err) == DLP_OK);
    if (ds) {
        char *json = NULL;
        int ne = -1, nw = -1;
        CHECK(dlp_dataset_check(ds, &json, &ne, &nw, &err) == DLP_OK);
        CHECK_MSG(ne == 1 && json && strstr(json, "host_us = -1 outside"), "%d: %s",
                  ne, json ? json : "");
        free(json);
        dlp_dataset_free(ds);
    }
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    run_rc(cmd);
}

/* host_us in training.csv (collector since 2026-12-03): a copy of valid/
 * whose training file gains the column (rep 0: 6.5, rep 1: 7.5) reads
 * it, the same rows without it read NAN, and -2 is a range error */
static void test_late_column_training(void) {
    char dir[] = "/tmp/dlp_late_XXXXXX", cmd[2600], path[600];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(cmd, sizeof cmd, "cp -r " FIX "/valid/. %s", dir);
    CHECK(run_rc(cmd) == 0);
    snprintf(path, sizeof path, "%s/batches/20261126T0400-vision-a/training.csv",
             dir);
    /* (the fixture's lines end in CR LF) */
    snprintf(cmd, sizeof cmd, "awk -F, '{ sub(/\\r$/, \"\") } "
             "NR == 1 { print $0 \",host_us\"; next } "
             "{ print $0 \",\" ($5 == 0 ? 6.5 : 7.5) }' %s > %s.new && "
             "mv %s.new %s", path, path, path, path);
    CHECK(run_rc(cmd) == 0);
    for (int pass = 0; pass < 2; pass++) {
        dlp_dataset *ds = NULL;
        dlp_error err;
        CHECK(dlp_dataset_open(pass ? FIX "/valid" : dir, &ds, &err) == DLP_OK);
        if (!ds) continue;
        int n = 0, ok = 0;
        const dlp_training_row *t;
        for (size_t i = 0; (t = dlp_dataset_training(ds, i)); i++, n++)
            ok += pass ? isnan(t->host_us)
                       : t->host_us == (t->c.rep ? 7.5 : 6.5);
        CHECK_MSG(n == 16 && ok == n, "pass %d: %d of %d", pass, ok, n);
        dlp_dataset_free(ds);
    }
    snprintf(cmd, sizeof cmd, "sed -i '2s/,6.5$/,-2/' %s", path);
    CHECK(run_rc(cmd) == 0);
    dlp_dataset *ds = NULL;
    dlp_error err;
    CHECK(dlp_dataset_open(dir, &ds, &err) == DLP_OK);
    if (ds) {
        char *json = NULL;
        int ne = -1, nw = -1;
        CHECK(dlp_dataset_check(ds, &json, &ne, &nw, &err) == DLP_OK);
        CHECK_MSG(ne == 1 && json && strstr(json, "host_us = -2 outside"),
                  "%d: %s", ne, json ? json : "");
        free(json);
        dlp_dataset_free(ds);
    }
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    run_rc(cmd);
}

/* Training memory measured after CUDA-graph inference in the same worker
 * (src/data/dataset.c, withdraw_train_memory): valid/'s vision batch
 * holds fp32 graph inference of each of its four models, so every
 * training row's memory_mib is withdrawn and its step time kept. Without
 * one model's fp32 graph rows (a copy, sed), that model's training memory
 * stands; in a batch named from 20261201T12 on, every row's does. */
static int train_mem_counts(const char *dir, const char *hash, int *kept_hash,
                            int *steps) {
    dlp_dataset *ds = NULL;
    dlp_error err;
    *kept_hash = *steps = 0;
    if (dlp_dataset_open(dir, &ds, &err) != DLP_OK) return -1;
    int kept = 0;
    const dlp_training_row *t;
    for (size_t i = 0; (t = dlp_dataset_training(ds, i)); i++) {
        if (!isnan(t->memory_mib)) {
            kept++;
            if (hash && !strcmp(t->c.hash, hash)) (*kept_hash)++;
        }
        if (isfinite(t->step_ms)) (*steps)++;
    }
    dlp_dataset_free(ds);
    return kept;
}

static void test_train_memory_withdrawn(void) {
    const char *h = "2d9105cb3fcd5924", *b = "20261126T0400-vision-a";
    int kh, steps;
    CHECK(train_mem_counts(FIX "/valid", NULL, &kh, &steps) == 0);
    CHECK(steps == 16);
    char dir[] = "/tmp/dlp_trmem_XXXXXX", cmd[1400];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(cmd, sizeof cmd, "cp -r " FIX "/valid/. %s && sed -i '/,%s,.*,graph,fp32,/d' "
             "%s/batches/%s/inference.csv", dir, h, dir, b);
    CHECK(run_rc(cmd) == 0);
    CHECK(train_mem_counts(dir, h, &kh, &steps) == 4);   /* 2 sizes x 2 reps */
    CHECK(kh == 4 && steps == 16);
    snprintf(cmd, sizeof cmd, "cd %s/batches && mv %s 20261202T0400-vision-a && "
             "sed -i 's/%s/20261202T0400-vision-a/' 20261202T0400-vision-a/*.csv",
             dir, b, b);
    CHECK(run_rc(cmd) == 0);
    CHECK(train_mem_counts(dir, NULL, &kh, &steps) == 16);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    run_rc(cmd);
}

/* a fresh process's host probes in env.json (since p69a): the geometric
 * mean of before and after, the one where the other is null, NAN for a
 * batch without them or an unknown batch; a value that is no positive
 * number or null fails the open, naming the key */
static void test_fresh_probe(void) {
    const char *b = "20261126T0400-vision-a", *other = "20261126T0500-lm-a";
    static const struct {
        const char *start, *end;
        double want;          /* 0: the open fails */
    } cases[] = {{"7.5", "10.0", 8.660254037844387}, {"null", "6.5", 6.5},
                 {"9.25", "null", 9.25}, {"null", "null", NAN},
                 {"\\\"x\\\"", "7", 0}, {"-3", "7", 0}, {"0", "7", 0}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char dir[] = "/tmp/dlp_fresh_XXXXXX", cmd[1400];
        CHECK(mkdtemp(dir) != NULL);
        snprintf(cmd, sizeof cmd, "cp -r " FIX "/valid/. %s && sed -i "
                 "'s/}$/, \"host_probe_start_us\": %s, \"host_probe_end_us\": "
                 "%s}/' %s/batches/%s/env.json", dir, cases[i].start,
                 cases[i].end, dir, b);
        CHECK(run_rc(cmd) == 0);
        dlp_dataset *ds = NULL;
        dlp_error err;
        dlp_status st = dlp_dataset_open(dir, &ds, &err);
        if (cases[i].want == 0) {
            CHECK_MSG(st == DLP_ERR_FORMAT &&
                      strstr(err.msg, "host_probe_start_us"), "case %zu: %s",
                      i, st ? err.msg : "opened");
        } else {
            CHECK_MSG(st == DLP_OK, "case %zu: %s", i, err.msg);
            double f = dlp_dataset_fresh_probe_us(ds, b);
            if (isnan(cases[i].want))
                CHECK(isnan(f));
            else
                CHECK_CLOSE(f, cases[i].want, 1e-12);
            CHECK(isnan(dlp_dataset_fresh_probe_us(ds, other)));
            CHECK(isnan(dlp_dataset_fresh_probe_us(ds, "no-such-batch")));
            CHECK(isnan(dlp_dataset_fresh_probe_us(ds, NULL)));
            dlp_batch_host h;   /* the same through the batch list */
            CHECK(dlp_dataset_batch_host(ds, 0, &h) &&
                  !strcmp(h.batch_id, b) &&
                  (isnan(cases[i].want) ? isnan(h.fresh_us)
                                        : h.fresh_us == f));
            CHECK(!dlp_dataset_batch_host(ds, 2, &h) &&
                  !dlp_dataset_batch_host(NULL, 0, &h));
        }
        dlp_dataset_free(ds);
        snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
        run_rc(cmd);
    }
}

/* "fresh_probe" of the inference statistics: card-b of two_cards with a
 * fresh reading in env.json, its eager rows' median host_us (this
 * oracle) beside it; card-a, without one, is not listed */
static void test_fresh_probe_stats(void) {
    const char *b = "20261126T0800-card-b";
    char dir[] = "/tmp/dlp_fresh_XXXXXX", cmd[1400];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(cmd, sizeof cmd, "cp -r " FIX "/two_cards/. %s && sed -i "
             "'s/}$/, \"host_probe_start_us\": 4.0, \"host_probe_end_us\": "
             "9.0}/' %s/batches/%s/env.json", dir, dir, b);
    CHECK(run_rc(cmd) == 0);
    dlp_dataset *ds = NULL;
    dlp_error err;
    CHECK_MSG(dlp_dataset_open(dir, &ds, &err) == DLP_OK, "%s", err.msg);
    if (ds) {
        double v[64];
        size_t n = 0;
        const dlp_inference_row *r;
        for (size_t i = 0; (r = dlp_dataset_inference(ds, i)) && n < 64; i++)
            if (!strcmp(r->c.batch_id, b) && !strcmp(r->runtime, "eager") &&
                r->host_us > 0)
                v[n++] = r->host_us;
        qsort(v, n, sizeof *v, dlp_cmp_double);
        double med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
        char *json = NULL;
        int ne = -1, nw = -1;
        CHECK(n > 0 && dlp_dataset_check(ds, &json, &ne, &nw, &err) == DLP_OK);
        cJSON *j = json ? cJSON_Parse(json) : NULL;
        const cJSON *fp = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "inference"),
                                              "fresh_probe");
        const cJSON *e = cJSON_GetArrayItem(fp, 0);
        CHECK_MSG(cJSON_GetArraySize(fp) == 1 && e &&
                  !strcmp(cJSON_GetObjectItem(e, "batch")->valuestring, b),
                  "%s", json ? json : "");
        if (e) {
            CHECK_CLOSE(cJSON_GetObjectItem(e, "fresh_us")->valuedouble, 6.0,
                        1e-12);
            CHECK_CLOSE(cJSON_GetObjectItem(e, "inference_us")->valuedouble,
                        med, 1e-12);
            CHECK(!cJSON_IsNumber(cJSON_GetObjectItem(e, "training_us")));
        }
        cJSON_Delete(j);
        free(json);
        dlp_dataset_free(ds);
    }
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    run_rc(cmd);
}

/* ---- the repository's data/ ---------------------------------------------- */

static void test_repo_data(void) {
    struct stat st;
    if (stat("data/graphs/index.csv", &st) != 0) {
        printf("  (data/graphs/index.csv absent: repo dataset not checked)\n");
        return;
    }
    dlp_dataset *ds;
    dlp_error err;
    dlp_status s = dlp_dataset_open("data", &ds, &err);
    CHECK_MSG(s == DLP_OK, "data/: %s", err.msg);
    if (s) return;
    char *json = NULL;
    int ne = -1, nw = -1;
    CHECK(dlp_dataset_check(ds, &json, &ne, &nw, &err) == DLP_OK);
    CHECK_MSG(ne == 0, "data/ has %d errors: %s", ne, json ? json : "");
    cJSON *r = json ? cJSON_Parse(json) : NULL;
    if (r)
        printf("  data/: %g graphs, %g inference / %g training / %g llm configs, "
               "%g kernel traces, %d warnings\n",
               cJSON_GetObjectItem(r, "graphs")->valuedouble,
               cJSON_GetObjectItem(r, "labeled_inference")->valuedouble,
               cJSON_GetObjectItem(r, "labeled_training")->valuedouble,
               cJSON_GetObjectItem(r, "labeled_llm")->valuedouble,
               cJSON_GetObjectItem(r, "kernel_traces")->valuedouble, nw);
    cJSON_Delete(r);
    free(json);
    dlp_dataset_free(ds);
}

/* core's quantiles, which every summary here uses: numpy's default
 * (linear) rule, e.g. numpy.quantile([3, 1, 2, 10], 0.9) = 7.9 */
static void test_quantile(void) {
    double v[4] = {3, 1, 2, 10};
    CHECK(fabs(dlp_quantile(v, 4, 0.9) - 7.9) < 1e-12);
    CHECK(v[0] == 1 && v[3] == 10); /* sorted in place */
    CHECK(dlp_quantile_sorted(v, 4, 0.5) == 2.5);
    CHECK(dlp_quantile_sorted(v, 4, 0) == 1 && dlp_quantile_sorted(v, 4, 1) == 10);
    CHECK(dlp_quantile_sorted(v, 1, 0.7) == 1);
    CHECK(isnan(dlp_quantile(v, 0, 0.5)));
    double a = 1, b = 2;
    CHECK(dlp_cmp_double(&a, &b) < 0 && dlp_cmp_double(&b, &a) > 0 &&
          dlp_cmp_double(&a, &a) == 0);
}

/* dlp_dir_list (src/core/dir_list.c) against a directory built here: the
 * filter, strcmp order (not creation order), dot names skipped, and the
 * two errors. */
static void test_dir_list(void) {
    char dir[] = "/tmp/dlp_dirlist_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    const char *files[] = {"b.dlpm", "a.dlpm", "A.dlpm", ".hidden.dlpm", "c.txt",
                           "x-convws.jsonl.xz", "convws.jsonl", "z.dlpm.bak"};
    char p[256];
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, files[i]);
        FILE *fp = fopen(p, "w");
        CHECK(fp != NULL);
        if (fp) fclose(fp);
    }
    snprintf(p, sizeof p, "%s/sub.dlpm", dir);
    CHECK(mkdir(p, 0755) == 0);
    char **v = NULL;
    int n = -1;
    dlp_error err;
    dlp_dir_filter f = {".dlpm", NULL, false};
    CHECK(dlp_dir_list(dir, &f, &v, &n, &err) == DLP_OK && n == 4);
    if (n == 4)
        CHECK(!strcmp(v[0], "A.dlpm") && !strcmp(v[1], "a.dlpm") &&
              !strcmp(v[2], "b.dlpm") && !strcmp(v[3], "sub.dlpm"));
    dlp_dir_list_free(v, n);
    dlp_dir_filter g = {".jsonl.xz", "convws", false};
    CHECK(dlp_dir_list(dir, &g, &v, &n, &err) == DLP_OK && n == 1 &&
          !strcmp(v[0], "x-convws.jsonl.xz"));
    dlp_dir_list_free(v, n);
    dlp_dir_filter d = {NULL, NULL, true};
    CHECK(dlp_dir_list(dir, &d, &v, &n, &err) == DLP_OK && n == 1 &&
          !strcmp(v[0], "sub.dlpm"));
    dlp_dir_list_free(v, n);
    dlp_dir_filter none = {".onnx", NULL, false};
    CHECK(dlp_dir_list(dir, &none, &v, &n, &err) == DLP_OK && n == 0 && v == NULL);
    snprintf(p, sizeof p, "%s/missing", dir);
    CHECK(dlp_dir_list(p, &f, &v, &n, &err) == DLP_ERR_NOT_FOUND &&
          strstr(err.msg, "missing") != NULL && n == 0 && v == NULL);
    snprintf(p, sizeof p, "%s/c.txt", dir);   /* a file, not a directory */
    CHECK(dlp_dir_list(p, &f, &v, &n, &err) == DLP_ERR_NOT_FOUND &&
          strstr(err.msg, "c.txt") != NULL);
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, files[i]);
        unlink(p);
    }
    snprintf(p, sizeof p, "%s/sub.dlpm", dir);
    rmdir(p);
    rmdir(dir);
}

int main(int argc, char **argv) {
    argv0 = argv[0];
    expected = load_json(FIX "/expected.json");
    if (argc > 1 && !strcmp(argv[1], "--sha-only")) {
        RUN(test_sha256);
        cJSON_Delete(expected);
        return CHECK_DONE();
    }
    RUN(test_sha256);
    RUN(test_sha256_portable);
    RUN(test_quantile);
    RUN(test_dir_list);
    RUN(test_fixture_cases);
    RUN(test_late_column);
    RUN(test_late_column_training);
    RUN(test_train_memory_withdrawn);
    RUN(test_fresh_probe);
    RUN(test_fresh_probe_stats);
    RUN(test_valid_rows_and_graphs);
    RUN(test_bad_arguments);
    RUN(test_csv_quoting);
    RUN(test_csv_errors);
    RUN(test_tar_and_zstd);
    RUN(test_mutated_inputs);
    RUN(test_problem_cap);
    RUN(test_cli);
    RUN(test_repo_data);
    cJSON_Delete(expected);
    return CHECK_DONE();
}
