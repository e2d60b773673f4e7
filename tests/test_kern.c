/* test_kern.c — kernel traces as training data (src/pred/pred_trace.c) and
 * the per-node latency kind "kern" (src/pred/pred_kern.c): the attribution
 * rule on hand-written traces (sum preserved, unmapped kernels charged to
 * the preceding mapped kernel's nodes, multi-node split, bad rows), the
 * trace set of a fixture dataset (tests/fixtures/kern/gen.py: eight MLPs
 * whose kernel durations follow a known law), the trainer refusing a
 * dataset without traces, a train + predict whose held-out kernel sums beat
 * a constant, a save / load round trip giving the same predictions, and
 * the node and graph models stored as forests: a file of XGBoost booster
 * blobs (before the eightieth session) and that file converted by
 * dlp_tree_file_forests predict alike, a corrupt forest fails the
 * request naming it, a forest of another width is refused at load. */
#include "check.h"
#include "dlperf.h"
#include "pred/pred_train.h"
#include "tree/tree.h"
#include "kern_blobs.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define KFIX "tests/fixtures/kern/data"

static const char *const NAMES[4] = {"a", "b", "c", "d"};

/* a=0 b=1 c=2 d=3, roofline weights 1 : 3 : 1 : 1 */
static void test_attribute_rule(void) {
    const double w[4] = {1, 3, 1, 1};
    dlp_trace_kernel k[] = {   /* deliberately out of launch order */
        {2, 10.0, "a|b"},      /* split 1:3 -> a 2.5, b 7.5 */
        {3, 4.0, ""},          /* unmapped: the preceding mapped (2) */
        {0, 5.0, NULL},        /* unmapped, nothing before: the next (1) */
        {1, 6.0, "c"},
        {4, 2.0, "zz"},        /* names only an absent node: unmapped */
        {5, 0.0, "d"},         /* dropped */
        {6, -1.0, "d"},        /* dropped */
        {7, NAN, "d"},         /* dropped */
        {8, 3.0, "d|ghost"},   /* ghost ignored: d gets all of it */
    };
    double us[4];
    dlp_trace_stats s;
    dlp_error err;
    CHECK(dlp_trace_attribute(k, 9, NAMES, 4, w, DLP_TRACE_PRECEDING, us, &s,
                              &err) == DLP_OK);
    CHECK_CLOSE(us[0], 2.5 + 1.0 + 0.5, 1e-12);
    CHECK_CLOSE(us[1], 7.5 + 3.0 + 1.5, 1e-12);
    CHECK_CLOSE(us[2], 5.0 + 6.0, 1e-12);
    CHECK_CLOSE(us[3], 3.0, 1e-12);
    CHECK_CLOSE(us[0] + us[1] + us[2] + us[3], s.total_us, 1e-12);
    CHECK_CLOSE(s.total_us, 30.0, 1e-12);
    CHECK(s.kernels == 6 && s.bad == 3 && s.unmapped == 3);
    CHECK(s.names == 6 && s.unmatched == 2);
    /* sorted by launch order in place */
    for (int i = 1; i < 9; i++) CHECK(k[i - 1].idx < k[i].idx);
}

static void test_attribute_equal_and_heavier(void) {
    dlp_error err;
    dlp_trace_stats s;
    double us[4];
    /* no weights: equal shares */
    dlp_trace_kernel k1[] = {{0, 10.0, "a|b"}, {1, 4.0, "c|d|a"}};
    CHECK(dlp_trace_attribute(k1, 2, NAMES, 4, NULL, DLP_TRACE_PRECEDING, us,
                              &s, &err) == DLP_OK);
    CHECK_CLOSE(us[0], 5.0 + 4.0 / 3, 1e-12);
    CHECK_CLOSE(us[1], 5.0, 1e-12);
    CHECK_CLOSE(us[2], 4.0 / 3, 1e-12);
    /* zero weights on the listed nodes: equal shares too */
    const double w0[4] = {0, 0, 5, 5};
    dlp_trace_kernel k2[] = {{0, 8.0, "a|b"}};
    CHECK(dlp_trace_attribute(k2, 1, NAMES, 4, w0, DLP_TRACE_PRECEDING, us,
                              &s, &err) == DLP_OK);
    CHECK_CLOSE(us[0], 4.0, 1e-12);
    CHECK_CLOSE(us[1], 4.0, 1e-12);
    /* a GEMM launched before the kernel that names its node: the preceding
     * rule charges it to the light node before, the heavier rule to the
     * heavy node after */
    const double w[4] = {1, 100, 1, 1};
    dlp_trace_kernel k3[] = {{0, 2.0, "a"}, {1, 50.0, ""}, {2, 3.0, "b"}};
    CHECK(dlp_trace_attribute(k3, 3, NAMES, 4, w, DLP_TRACE_PRECEDING, us, &s,
                              &err) == DLP_OK);
    CHECK_CLOSE(us[0], 52.0, 1e-12);
    CHECK_CLOSE(us[1], 3.0, 1e-12);
    dlp_trace_kernel k4[] = {{0, 2.0, "a"}, {1, 50.0, ""}, {2, 3.0, "b"}};
    CHECK(dlp_trace_attribute(k4, 3, NAMES, 4, w, DLP_TRACE_HEAVIER, us, &s,
                              &err) == DLP_OK);
    CHECK_CLOSE(us[0], 2.0, 1e-12);
    CHECK_CLOSE(us[1], 53.0, 1e-12);
    /* nothing maps: an error, not a crash */
    dlp_trace_kernel k5[] = {{0, 2.0, "x|y"}, {1, 3.0, ""}};
    CHECK(dlp_trace_attribute(k5, 2, NAMES, 4, w, DLP_TRACE_PRECEDING, us, &s,
                              &err) == DLP_ERR_NOT_FOUND);
    CHECK(strstr(err.msg, "no kernel") != NULL);
    CHECK(dlp_trace_attribute(k5, 0, NAMES, 4, w, DLP_TRACE_PRECEDING, us, &s,
                              &err) == DLP_ERR_NOT_FOUND);
}

static int open_fixture(dlp_dataset **ds, dlp_examples *E) {
    dlp_error err;
    if (dlp_dataset_open(KFIX, ds, &err)) {
        CHECK_MSG(0, "%s", err.msg);
        return -1;
    }
    if (dlp_examples_build(E, *ds, DLP_MODE_INFERENCE, NULL, &err)) {
        CHECK_MSG(0, "%s", err.msg);
        dlp_dataset_free(*ds);
        return -1;
    }
    return 0;
}

/* the trace set of the fixture: one trace per configuration, sums equal to
 * the positive durations of its rows, bad rows counted */
static void test_fixture_traces(void) {
    dlp_dataset *ds;
    dlp_examples E;
    if (open_fixture(&ds, &E)) return;
    CHECK(E.n == 48);
    CHECK(E.n_trace == 24);
    CHECK(E.n_trace_dropped == 0);
    CHECK(E.trace_unmatched == 1);            /* the ghost node */
    dlp_dataset_counts c;
    dlp_dataset_get_counts(ds, &c);
    int bad = 0;
    for (int t = 0; t < E.n_trace; t++) {
        const dlp_trace *x = &E.trace[t];
        const dlp_feat_graph *fg = &E.fg[x->fg];
        double s = 0, rows = 0;
        for (int i = 0; i < fg->n_nodes; i++) s += x->node_us[i];
        CHECK_CLOSE(s, x->kernel_us, 1e-5);
        const char *hash = E.fg_hash[x->fg];
        for (size_t i = 0; i < c.kernels; i++) {
            const dlp_kernel_row *r = dlp_dataset_kernel(ds, i);
            if (!strncmp(r->c.hash, hash, 16) && r->batch == x->cfg.batch &&
                r->duration_us > 0)
                rows += r->duration_us;
        }
        CHECK_CLOSE(x->kernel_us, rows, 1e-9);
        CHECK(x->cfg.runtime == DLP_RT_EAGER && x->cfg.sms == 0);
        bad += x->n_bad;
        /* every cast kernel is unmapped: one per MatMul */
        CHECK(x->n_unmapped * 3 == fg->n_nodes);
    }
    CHECK(bad == 2);
    /* traces share the examples' featurized graphs (same bindings) */
    CHECK(E.n_fg == 24);
    dlp_examples_free(&E);
    dlp_dataset_free(ds);
}

static void test_refuses_without_traces(void) {
    dlp_dataset *ds;
    dlp_examples E;
    if (open_fixture(&ds, &E)) return;
    int32_t idx[64];
    for (int i = 0; i < E.n; i++) idx[i] = i;
    int saved = E.n_trace;
    E.n_trace = 0;   /* as if the dataset had no kernels.csv.zst */
    dlp_predictor *p = NULL;
    dlp_error err;
    dlp_status st = dlp_pred_train("kern", &E, idx, E.n, NULL, 0, NULL, &p,
                                   NULL, &err);
    CHECK(st == DLP_ERR_NOT_FOUND && p == NULL);
    CHECK(strstr(err.msg, "kernel traces") != NULL);
    E.n_trace = saved;
    dlp_examples_free(&E);
    dlp_dataset_free(ds);
    /* the format fixture: compiled and rep-1 rows are not traces; a trace
     * whose graph is in no pack is dropped; training on it succeeds or
     * fails cleanly */
    if (dlp_dataset_open("tests/fixtures/dataset/valid", &ds, &err)) {
        CHECK_MSG(0, "%s", err.msg);
        return;
    }
    CHECK(dlp_examples_build(&E, ds, DLP_MODE_INFERENCE, NULL, &err) == DLP_OK);
    for (int t = 0; t < E.n_trace; t++)
        CHECK(E.trace[t].cfg.runtime == DLP_RT_EAGER && E.trace[t].node_us &&
              E.trace[t].kernel_us > 0);
    CHECK(E.n_trace >= 1);
    for (int i = 0; i < E.n && i < 64; i++) idx[i] = i;
    st = dlp_pred_train("kern", &E, idx, E.n < 64 ? E.n : 64, NULL, 0, NULL,
                        &p, NULL, &err);
    CHECK((st == DLP_OK) == (p != NULL));
    dlp_predictor_free(p);
    p = NULL;
    dlp_examples_free(&E);
    /* other modes are refused with a reason */
    CHECK(dlp_examples_build(&E, ds, DLP_MODE_LLM, NULL, &err) == DLP_OK);
    for (int i = 0; i < E.n && i < 64; i++) idx[i] = i;
    st = dlp_pred_train("kern", &E, idx, E.n < 64 ? E.n : 64, NULL, 0, NULL,
                        &p, NULL, &err);
    CHECK(st == DLP_ERR_ARG && strstr(err.msg, "inference") != NULL);
    dlp_examples_free(&E);
    dlp_dataset_free(ds);
}

/* A kern predictor trained on rows tr of E (default options), its file
 * in *file; a failure is reported here and returned. */
static dlp_status train_kern(dlp_examples *E, const int32_t *tr, int ntr,
                             dlp_predictor **p, dlp_nn_file *file,
                             dlp_error *err) {
    dlp_train_opts o;
    dlp_train_opts_init(&o);
    dlp_status st = dlp_pred_train("kern", E, tr, ntr, NULL, 0, &o, p, file,
                                   err);
    CHECK_MSG(st == DLP_OK, "%s", err->msg);
    return st;
}

/* trains on models m0..m5, holds m6 and m7 out */
static void test_train_predict_roundtrip(void) {
    dlp_dataset *ds;
    dlp_examples E;
    if (open_fixture(&ds, &E)) return;
    int32_t tr[64], te[64];
    int ntr = 0, nte = 0;
    for (int i = 0; i < E.n; i++) {
        const char *m = E.models[E.ex[i].model];
        if (!strcmp(m, "m6") || !strcmp(m, "m7")) te[nte++] = i;
        else tr[ntr++] = i;
    }
    CHECK(ntr == 36 && nte == 12);
    dlp_predictor *p = NULL;
    dlp_nn_file file = {0};
    dlp_error err;
    dlp_status st = train_kern(&E, tr, ntr, &p, &file, &err);
    if (st) {
        dlp_examples_free(&E);
        dlp_dataset_free(ds);
        return;
    }
    CHECK(p->meta.targets == 1u << DLP_T_INF_LATENCY_MS);
    /* held-out kernel sums against measured, and against a constant (the
     * geometric mean of the training traces' sums) */
    uint8_t held[16] = {0};
    for (int i = 0; i < nte; i++) held[E.ex[te[i]].model] = 1;
    double lsum = 0, ape = 0, ape_c = 0;
    int nl = 0, nh = 0;
    for (int t = 0; t < E.n_trace; t++)
        if (!held[E.trace[t].model]) { lsum += log(E.trace[t].kernel_us); nl++; }
    double cst = exp(lsum / nl);
    for (int t = 0; t < E.n_trace; t++) {
        const dlp_trace *x = &E.trace[t];
        if (!held[x->model]) continue;
        double us = NAN;
        CHECK(dlp_kern_sum_us(p, &E.fg[x->fg], &x->cfg, &us, &err) == DLP_OK);
        ape += fabs(us - x->kernel_us) / x->kernel_us;
        ape_c += fabs(cst - x->kernel_us) / x->kernel_us;
        nh++;
    }
    CHECK(nh == 6);
    ape /= nh;
    ape_c /= nh;
    CHECK_MSG(isfinite(ape) && ape < ape_c, "kernel-sum MAPE %.3f vs "
              "constant %.3f", ape, ape_c);
    /* latency on the held-out examples: finite, positive */
    double pred[64];
    for (int i = 0; i < nte; i++) {
        dlp_pred_result r;
        CHECK(dlp_pred_example(p, &E, te[i], &r, &err) == DLP_OK);
        CHECK(r.v[DLP_T_INF_LATENCY_MS].valid);
        pred[i] = r.v[DLP_T_INF_LATENCY_MS].value;
        CHECK(isfinite(pred[i]) && pred[i] > 0);
        CHECK(!r.v[DLP_T_INF_ENERGY_J].valid);
    }
    /* save / load: the same predictions */
    char path[] = "/tmp/test_kern_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd >= 0) close(fd);
    CHECK_MSG(dlp_nn_file_save(&file, path, &err) == DLP_OK, "%s", err.msg);
    dlp_predictor *q = NULL;
    CHECK_MSG(dlp_predictor_load(path, NULL, &q, &err) == DLP_OK, "%s",
              err.msg);
    if (q) {
        CHECK(!strcmp(q->meta.kind, "kern"));
        for (int i = 0; i < nte; i++) {
            dlp_pred_result r;
            CHECK(dlp_pred_example(q, &E, te[i], &r, &err) == DLP_OK);
            CHECK_CLOSE(r.v[DLP_T_INF_LATENCY_MS].value, pred[i], 1e-9);
        }
        for (int t = 0; t < E.n_trace; t++) {
            double a, b;
            CHECK(dlp_kern_sum_us(p, &E.fg[E.trace[t].fg], &E.trace[t].cfg,
                                  &a, &err) == DLP_OK);
            CHECK(dlp_kern_sum_us(q, &E.fg[E.trace[t].fg], &E.trace[t].cfg,
                                  &b, &err) == DLP_OK);
            CHECK_CLOSE(a, b, 1e-9);
        }
    }
    /* a kern predictor is not a tree predictor, and vice versa */
    double us;
    CHECK(dlp_kern_sum_us(NULL, &E.fg[0], &E.ex[0].cfg, &us, &err) ==
          DLP_ERR_ARG);
    /* a damaged schema is refused at load */
    for (int i = 0; i < file.n; i++)
        if (!strcmp(file.e[i].name, "kern/schema"))
            ((int64_t *)file.e[i].data)[1] = 7;
    dlp_predictor *r = NULL;
    CHECK(dlp_predictor_from_file(&file, NULL, &r, &err) ==
          DLP_ERR_UNSUPPORTED);
    CHECK(r == NULL);
    unlink(path);
    dlp_predictor_free(q);
    dlp_predictor_free(p);
    dlp_nn_file_free(&file);
    dlp_examples_free(&E);
    dlp_dataset_free(ds);
}

static void test_kern_forests(void) {
    dlp_dataset *ds;
    dlp_examples E;
    if (open_fixture(&ds, &E)) return;
    int32_t tr[64];
    int ntr = 0;
    for (int i = 0; i < E.n && ntr < 64; i++) tr[ntr++] = i;
    dlp_predictor *p = NULL;
    dlp_nn_file file = {0};
    dlp_error err;
    dlp_status st = train_kern(&E, tr, ntr, &p, &file, &err);
    const dlp_nn_entry *se = dlp_nn_file_get(&file, "kern/schema", DLP_NN_I64);
    CHECK(se && se->count == 4);
    if (st || !se) {
        dlp_predictor_free(p);
        dlp_nn_file_free(&file);
        dlp_examples_free(&E);
        dlp_dataset_free(ds);
        return;
    }
    /* trained files hold forests, no booster blobs */
    static const char *const model[2] = {"kern/node", "kern/graph"};
    const int nfeat[2] = {(int)((const int64_t *)se->data)[1],
                          (int)((const int64_t *)se->data)[2]};
    for (int b = 0; b < 2; b++) {
        char trees[64];
        snprintf(trees, sizeof trees, "forest/%s/trees", model[b]);
        CHECK(dlp_nn_file_get(&file, trees, DLP_NN_I64) != NULL);
        CHECK(!dlp_pred_blob_exists(&file, model[b]));
    }
    /* the legacy file: both models as XGBoost blobs of other boosters */
    dlp_nn_file h = {0}, h2 = {0};
    CHECK_MSG(kern_blobs_file(&file, "", &h, &err) == DLP_OK, "%s", err.msg);
    for (int b = 0; b < 2; b++) CHECK(dlp_pred_blob_exists(&h, model[b]));
    for (int i = 0; i < h.n; i++)
        CHECK(dlp_nn_file_add_copy(&h2, h.e[i].name, &h.e[i], &err) == DLP_OK);
    int nconv = -1;
    CHECK_MSG(dlp_tree_file_forests(&h2, &nconv, &err) == DLP_OK, "%s", err.msg);
    CHECK(nconv == 2);
    for (int b = 0; b < 2; b++) CHECK(!dlp_pred_blob_exists(&h2, model[b]));
    dlp_predictor *ph = NULL, *ph2 = NULL;
    CHECK_MSG(dlp_predictor_from_file(&h, NULL, &ph, &err) == DLP_OK, "%s",
              err.msg);
    CHECK_MSG(dlp_predictor_from_file(&h2, NULL, &ph2, &err) == DLP_OK, "%s",
              err.msg);
    int differs = 0;
    for (int i = 0; ph && ph2 && i < E.n; i++) {
        dlp_pred_result a, b, c;
        CHECK(dlp_pred_example(p, &E, i, &a, &err) == DLP_OK);
        CHECK(dlp_pred_example(ph, &E, i, &b, &err) == DLP_OK);
        CHECK(dlp_pred_example(ph2, &E, i, &c, &err) == DLP_OK);
        double vb = b.v[DLP_T_INF_LATENCY_MS].value;
        double vc = c.v[DLP_T_INF_LATENCY_MS].value;
        CHECK_MSG(isfinite(vb) && vb > 0 && fabs(vc / vb - 1) < 1e-5,
                  "example %d: blobs %g, their forests %g", i, vb, vc);
        differs += fabs(vb / a.v[DLP_T_INF_LATENCY_MS].value - 1) > 1e-3;
    }
    CHECK(differs > 0);
    dlp_predictor_free(ph);
    dlp_predictor_free(ph2);
    /* a corrupt node forest (its root a split on a feature past the last,
     * whose right child is itself): the file loads, the request fails
     * naming it */
    for (int i = 0; i < h2.n; i++)
        if (!strcmp(h2.e[i].name, "forest/kern/node/words")) {
            uint8_t *w = (uint8_t *)dlp_nn_entry_bytes(&h2.e[i]);
            const float half = 0.5f;
            memcpy(w, &half, 4);   /* little-endian words (tree.h) */
            w[4] = (uint8_t)(nfeat[0] & 0xff);
            w[5] = (uint8_t)(nfeat[0] >> 8);
            w[6] = w[7] = 0;
        }
    dlp_predictor *pc = NULL;
    CHECK_MSG(dlp_predictor_from_file(&h2, NULL, &pc, &err) == DLP_OK, "%s",
              err.msg);
    if (pc) {
        dlp_pred_result r;
        st = dlp_pred_example(pc, &E, 0, &r, &err);
        CHECK_MSG(st == DLP_ERR_FORMAT && strstr(err.msg, "forest/kern/node"), "%d %s", st, st ? err.msg : "");
    }
    dlp_predictor_free(pc);
    /* the graph forest given the node model's width: refused at load */
    dlp_nn_file w = {0};
    for (int i = 0; i < file.n; i++) {
        dlp_nn_entry e = file.e[i];
        if (!strcmp(e.name, "forest/kern/graph/trees")) {
            int64_t *v = malloc((size_t)e.count * sizeof *v);
            memcpy(v, e.data, (size_t)e.count * sizeof *v);
            v[0] = nfeat[0];
            CHECK(dlp_nn_file_add_i64(&w, e.name, v, e.count, &err) == DLP_OK);
            free(v);
        } else {
            CHECK(dlp_nn_file_add_copy(&w, e.name, &e, &err) == DLP_OK);
        }
    }
    dlp_predictor *pw = NULL;
    CHECK(dlp_predictor_from_file(&w, NULL, &pw, &err) == DLP_ERR_FORMAT &&
          !pw && strstr(err.msg, "forest/kern/graph"));
    dlp_nn_file_free(&w);
    dlp_nn_file_free(&h);
    dlp_nn_file_free(&h2);
    dlp_predictor_free(p);
    dlp_nn_file_free(&file);
    dlp_examples_free(&E);
    dlp_dataset_free(ds);
}

int main(void) {
    RUN(test_attribute_rule);
    RUN(test_attribute_equal_and_heavier);
    RUN(test_fixture_traces);
    RUN(test_refuses_without_traces);
    RUN(test_train_predict_roundtrip);
    RUN(test_kern_forests);
    return CHECK_DONE();
}
