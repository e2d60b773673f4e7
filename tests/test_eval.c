/* test_eval.c — metrics against hand-computed values, split properties
 * (disjoint, complete, no model on both sides for leave-models-out, one
 * family per leave-one-family-out fold, sizes, deterministic in the seed),
 * the SVG plot, and the driver end to end on the fixture dataset. */
#include "check.h"
#include "eval/eval.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void test_metrics_hand(void) {
    double y[3] = {1, 2, 4}, p[3] = {1.1, 1.8, 4};
    dlp_metrics m;
    dlp_metrics_compute(y, p, 3, &m);
    CHECK(m.n == 3);
    CHECK_CLOSE(m.mape, (0.1 + 0.1 + 0) / 3, 1e-12);
    CHECK_CLOSE(m.rmspe, sqrt((0.01 + 0.01) / 3), 1e-12);
    CHECK_CLOSE(m.rmse, sqrt((0.01 + 0.04) / 3), 1e-12);
    CHECK_CLOSE(m.acc10, 1.0, 1e-12);
    CHECK_CLOSE(m.tau, 1.0, 1e-12);
    /* tau: one discordant pair of 6 -> (5-1)/6 */
    double a[4] = {1, 2, 3, 4}, b[4] = {1, 3, 2, 4};
    CHECK_CLOSE(dlp_kendall_tau(a, b, 4), 4.0 / 6, 1e-12);
    double c[4] = {4, 3, 2, 1};
    CHECK_CLOSE(dlp_kendall_tau(a, c, 4), -1.0, 1e-12);
    /* ties: tau-b = (C-D)/sqrt((n0-n1)(n0-n2)); a=[1,1,2], b=[1,2,3]:
     * pairs (0,1) tie in a, (0,2) C, (1,2) C -> 2/sqrt(2*3) */
    double t1[3] = {1, 1, 2}, t2[3] = {1, 2, 3};
    CHECK_CLOSE(dlp_kendall_tau(t1, t2, 3), 2 / sqrt(6.0), 1e-12);
    /* skipped: y <= 0, NaN; accuracy counts 10% exactly as inside */
    double y2[4] = {0, NAN, 10, 10}, p2[4] = {5, 5, 11, 12};
    dlp_metrics_compute(y2, p2, 4, &m);
    CHECK(m.n == 2);
    CHECK_CLOSE(m.mape, 0.15, 1e-12);
    CHECK_CLOSE(m.acc10, 0.5, 1e-12);
    dlp_metrics_compute(y2, p2, 0, &m);
    CHECK(m.n == 0 && isnan(m.mape));
}

/* 60 examples, 12 models in 4 families */
#define N 60
static int grp[N], fam[N];
static void setup(void) {
    for (int i = 0; i < N; i++) { grp[i] = (i * 7) % 12; fam[i] = grp[i] % 4; }
}

static void check_partition(const dlp_fold *f, int n) {
    int *seen = calloc((size_t)n, sizeof *seen);
    for (int i = 0; i < f->ntr; i++) seen[f->train[i]]++;
    for (int i = 0; i < f->nva; i++) seen[f->val[i]]++;
    for (int i = 0; i < f->nte; i++) seen[f->test[i]]++;
    for (int i = 0; i < n; i++) CHECK(seen[i] == 1);
    free(seen);
}

static bool any_shared_model(const int32_t *a, int na, const int32_t *b, int nb) {
    for (int i = 0; i < na; i++)
        for (int j = 0; j < nb; j++)
            if (grp[a[i]] == grp[b[j]]) return true;
    return false;
}

static void test_split_lmo(void) {
    setup();
    dlp_error err;
    dlp_fold *F;
    int K;
    CHECK(dlp_split_make(DLP_SPLIT_LMO, grp, fam, N, 7, &F, &K, &err) == DLP_OK);
    CHECK(K == 5);
    int tested[N] = {0};
    for (int k = 0; k < K; k++) {
        check_partition(&F[k], N);
        CHECK(F[k].nte > 0 && F[k].nva > 0);
        CHECK(!any_shared_model(F[k].train, F[k].ntr, F[k].test, F[k].nte));
        CHECK(!any_shared_model(F[k].train, F[k].ntr, F[k].val, F[k].nva));
        for (int i = 0; i < F[k].nte; i++) tested[F[k].test[i]]++;
    }
    for (int i = 0; i < N; i++) CHECK(tested[i] == 1);   /* each tested once */
    /* deterministic in the seed; a different seed differs */
    dlp_fold *G;
    int K2;
    CHECK(dlp_split_make(DLP_SPLIT_LMO, grp, fam, N, 7, &G, &K2, &err) == DLP_OK);
    bool same = K2 == K, diff = false;
    for (int k = 0; same && k < K; k++)
        same = G[k].nte == F[k].nte && !memcmp(G[k].test, F[k].test, F[k].nte * 4) &&
               !memcmp(G[k].val, F[k].val, F[k].nva * 4);
    CHECK(same);
    dlp_folds_free(G, K2);
    CHECK(dlp_split_make(DLP_SPLIT_LMO, grp, fam, N, 8, &G, &K2, &err) == DLP_OK);
    for (int k = 0; k < K; k++)
        diff |= G[k].nte != F[k].nte || memcmp(G[k].test, F[k].test, F[k].nte * 4);
    CHECK(diff);
    dlp_folds_free(G, K2);
    dlp_folds_free(F, K);
    /* one model only: a clear error */
    int one[4] = {0, 0, 0, 0};
    CHECK(dlp_split_make(DLP_SPLIT_LMO, one, one, 4, 1, &F, &K, &err) == DLP_ERR_ARG);
    CHECK(strstr(err.msg, "models") != NULL);
    /* lgo cuts by the group it is given (the graph) the same way */
    CHECK(dlp_split_make(DLP_SPLIT_LGO, one, one, 4, 1, &F, &K, &err) == DLP_ERR_ARG);
    CHECK(strstr(err.msg, "leave-graphs-out") != NULL);
    CHECK(dlp_split_make(DLP_SPLIT_LGO, grp, fam, N, 7, &F, &K, &err) == DLP_OK);
    CHECK(K == 5);
    for (int k = 0; k < K; k++) {
        check_partition(&F[k], N);
        CHECK(!any_shared_model(F[k].train, F[k].ntr, F[k].test, F[k].nte));
    }
    dlp_folds_free(F, K);
    dlp_split_kind sk;
    CHECK(dlp_split_parse("lgo", &sk, &err) == DLP_OK && sk == DLP_SPLIT_LGO);
    CHECK(!strcmp(dlp_split_name(DLP_SPLIT_LGO), "lgo"));
}

static void test_split_lofo(void) {
    setup();
    dlp_error err;
    dlp_fold *F;
    int K;
    CHECK(dlp_split_make(DLP_SPLIT_LOFO, grp, fam, N, 1, &F, &K, &err) == DLP_OK);
    CHECK(K == 4);
    for (int k = 0; k < K; k++) {
        check_partition(&F[k], N);
        int f0 = fam[F[k].test[0]];
        for (int i = 0; i < F[k].nte; i++) CHECK(fam[F[k].test[i]] == f0);
        for (int i = 0; i < F[k].ntr; i++) CHECK(fam[F[k].train[i]] != f0);
        for (int i = 0; i < F[k].nva; i++) CHECK(fam[F[k].val[i]] != f0);
    }
    dlp_folds_free(F, K);
}

static void test_split_random_mc(void) {
    setup();
    dlp_error err;
    dlp_fold *F;
    int K;
    CHECK(dlp_split_make(DLP_SPLIT_RANDOM, grp, fam, N, 3, &F, &K, &err) == DLP_OK);
    CHECK(K == 1);
    check_partition(&F[0], N);
    CHECK(F[0].ntr == 42 && F[0].nva == 9 && F[0].nte == 9);
    dlp_folds_free(F, K);
    CHECK(dlp_split_make(DLP_SPLIT_MC, grp, fam, N, 3, &F, &K, &err) == DLP_OK);
    CHECK(K == 5);
    for (int k = 0; k < K; k++) {
        check_partition(&F[k], N);
        for (int f = 0; f < 4; f++) {   /* 30% of every family is tested */
            int te = 0, all = 0;
            for (int i = 0; i < N; i++) all += fam[i] == f;
            for (int i = 0; i < F[k].nte; i++) te += fam[F[k].test[i]] == f;
            CHECK(te == all - (int)(0.7 * all + 0.5));
        }
    }
    CHECK(memcmp(F[0].test, F[1].test, (size_t)F[0].nte * 4) != 0);
    dlp_folds_free(F, K);
    dlp_split_kind s;
    CHECK(dlp_split_parse("lofo", &s, &err) == DLP_OK && s == DLP_SPLIT_LOFO);
    CHECK(dlp_split_parse("kfold", &s, &err) == DLP_ERR_ARG);
    CHECK(dlp_split_make(DLP_SPLIT_RANDOM, grp, fam, 1, 3, &F, &K, &err) == DLP_ERR_ARG);
}

static void test_svg(void) {
    char path[] = "/tmp/dlp_test_eval_XXXXXX.svg";
    int fd = mkstemps(path, 4);
    close(fd);
    double y[5] = {1, 10, 100, 0, 50}, p[5] = {1.2, 9, 130, 3, NAN};
    int g[5] = {0, 1, 1, 0, 0};
    const char *names[2] = {"resnet", "<vit&>"};
    dlp_error err;
    CHECK(dlp_svg_scatter(path, "t", "ms", y, p, g, names, 2, 5, &err) == DLP_OK);
    FILE *f = fopen(path, "r");
    char buf[20000];
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f) fclose(f);
    buf[n] = 0;
    CHECK(strstr(buf, "<svg") && strstr(buf, "</svg>"));
    int circles = 0, dots = 0;
    for (char *q = buf; (q = strstr(q, "<circle")); q++) circles++;
    for (char *q = buf; (q = strstr(q, "h0")); q++) dots++;
    CHECK(circles == 2);   /* the legend marks */
    CHECK(dots == 3);      /* the 3 valid points, as zero-length segments */
    /* (1, 1.2) and (10, 9) in their groups' colours: one path per colour */
    CHECK(strstr(buf, "stroke=\"#1f77b4\"") && strstr(buf, "stroke=\"#ff7f0e\""));
    CHECK(strstr(buf, "&lt;vit&amp;&gt;") != NULL);
    CHECK(strstr(buf, "<polygon") != NULL);   /* the 10% band */
    unlink(path);
    CHECK(dlp_svg_scatter("/nonexistent/dir/x.svg", "t", "ms", y, p, g, names,
                          2, 5, &err) == DLP_ERR_IO);
}

/* --predictions: one row per record and labelled target; the MAPE
 * recomputed from the file's actual and predicted columns is the one
 * dlp_eval_metrics gives for the same records */
static void test_predictions_csv(const dlp_examples *E, const dlp_eval_result *a,
                                 const dlp_eval_result *b) {
    char path[] = "/tmp/dlp_test_preds_XXXXXX.csv";
    int fd = mkstemps(path, 4);
    close(fd);
    dlp_error err;
    const dlp_eval_result *runs[2] = {a, b};
    CHECK_MSG(dlp_eval_write_predictions(path, E, runs, 2, &err) == DLP_OK, "%s", err.msg);
    FILE *f = fopen(path, "r");
    char line[1024];
    CHECK(f && fgets(line, sizeof line, f) && !strncmp(line, "kind,split,fold,", 16));
    int rows = 0, lat[2] = {0, 0};
    double sum[2] = {0, 0};
    while (f && fgets(line, sizeof line, f)) {
        rows++;
        char *fld[20];
        int nf = 0;
        for (char *s = line, *t; nf < 20 && (t = strsep(&s, ",\n")); ) fld[nf++] = t;
        CHECK_MSG(nf >= 17, "%d fields", nf);
        if (nf < 17 || strcmp(fld[13], dlp_target_name(DLP_T_INF_LATENCY_MS))) continue;
        int q = !strcmp(fld[0], "linreg") ? 0 : 1;
        double y = atof(fld[14]), p = atof(fld[15]), r = atof(fld[16]);
        CHECK(y > 0 && fabs(r - (p - y) / y) <= 1e-6 * (1 + fabs(r)));
        CHECK(!strcmp(fld[1], "lmo") && fld[6][0] && strlen(fld[5]) == 16);
        sum[q] += fabs(p - y) / y;
        lat[q]++;
    }
    if (f) fclose(f);
    int want = 0;
    dlp_target ts[DLP_T_COUNT];
    int nt = dlp_mode_targets(E->mode, ts);
    for (int q = 0; q < 2; q++)
        for (int i = 0; i < runs[q]->n; i++)
            for (int j = 0; j < nt; j++) {
                double y = E->ex[runs[q]->ex[i]].y[ts[j]];
                want += isfinite(y) && y > 0;
            }
    CHECK_MSG(rows == want, "%d rows, want %d", rows, want);
    for (int q = 0; q < 2; q++) {
        dlp_metrics m;
        dlp_eval_metrics(E, runs[q], DLP_T_INF_LATENCY_MS, -1, &m);
        CHECK(lat[q] == m.n);
        CHECK_MSG(lat[q] && fabs(sum[q] / lat[q] - m.mape) <= 1e-6 * m.mape,
                  "%g vs %g", lat[q] ? sum[q] / lat[q] : 0, m.mape);
    }
    unlink(path);
    CHECK(dlp_eval_write_predictions("/nonexistent/dir/p.csv", E, runs, 2, &err)
          == DLP_ERR_IO);
}

/* per-model error shares against a direct recomputation from the records:
 * shares sum to 1, sorted largest first, each model's n, MAPE and median
 * ratio as recounted here; a runtime filter keeps only its records */
static void test_model_shares(const dlp_examples *E, const dlp_eval_result *r) {
    dlp_error err;
    dlp_model_share *s;
    int n;
    dlp_target t = DLP_T_INF_LATENCY_MS;
    CHECK(dlp_eval_model_shares(E, r, t, -1, &s, &n, &err) == DLP_OK);
    CHECK(n >= 2 && n <= E->n_models);
    double sum = 0, total = 0;
    for (int i = 0; i < r->n; i++) {
        double y = E->ex[r->ex[i]].y[t], p = r->pred[(size_t)i * DLP_T_COUNT + t];
        if (y > 0 && p > 0) total += fabs(p - y) / y;
    }
    for (int k = 0; k < n; k++) {
        sum += s[k].share;
        if (k) CHECK(s[k - 1].share >= s[k].share);
        int cnt = 0, below = 0, above = 0;
        double e = 0;
        for (int i = 0; i < r->n; i++) {
            const dlp_example *x = &E->ex[r->ex[i]];
            double y = x->y[t], p = r->pred[(size_t)i * DLP_T_COUNT + t];
            if (x->model != s[k].model || !(y > 0 && p > 0)) continue;
            CHECK(x->family == s[k].family);
            cnt++;
            e += fabs(p - y) / y;
            below += p / y < s[k].median_ratio - 1e-12;
            above += p / y > s[k].median_ratio + 1e-12;
        }
        CHECK(cnt == s[k].n);
        CHECK(fabs(e / cnt - s[k].mape) <= 1e-12 * (1 + e));
        CHECK(fabs(e / total - s[k].share) <= 1e-12);
        CHECK(below <= cnt / 2 && above <= cnt / 2);   /* a median */
    }
    CHECK(fabs(sum - 1) < 1e-9);
    free(s);
    /* the fixture's records are eager and graph: each filter sees fewer */
    int ng = 0, all = 0;
    CHECK(dlp_eval_model_shares(E, r, t, DLP_RT_GRAPH, &s, &ng, &err) == DLP_OK);
    for (int k = 0; k < ng; k++) all += s[k].n;
    free(s);
    int total_n = 0;
    for (int i = 0; i < r->n; i++)
        total_n += E->ex[r->ex[i]].cfg.runtime == DLP_RT_GRAPH &&
                   E->ex[r->ex[i]].y[t] > 0;
    CHECK(all == total_n);
}

static void test_run_fixture(void) {
    dlp_error err;
    dlp_dataset *ds = NULL;
    CHECK(dlp_dataset_open("tests/fixtures/dataset/valid", &ds, &err) == DLP_OK);
    dlp_examples E;
    CHECK(dlp_examples_build(&E, ds, DLP_MODE_INFERENCE, NULL, &err) == DLP_OK);
    dlp_train_opts o;
    dlp_train_opts_init(&o);
    dlp_eval_result r;
    CHECK(dlp_eval_run(&E, "linreg", DLP_SPLIT_LMO, 1, &o, NULL, NULL, &r, &err) == DLP_OK);
    CHECK(r.n == E.n);   /* every example tested exactly once */
    for (int i = 0; i < r.n; i++) CHECK(r.pred[(size_t)i * DLP_T_COUNT] > 0);
    dlp_metrics m;
    dlp_eval_metrics(&E, &r, DLP_T_INF_LATENCY_MS, -1, &m);
    CHECK(m.n == E.n && isfinite(m.mape));
    dlp_eval_result_free(&r);
    CHECK(dlp_eval_run(&E, "nosuch", DLP_SPLIT_LMO, 1, &o, NULL, NULL, &r, &err) == DLP_ERR_NOT_FOUND);
    /* leave-graphs-out: every record of one graph in one fold, and the
     * (the fixture has one graph per model, so lgo folds are lmo's) */
    CHECK(dlp_eval_run(&E, "linreg", DLP_SPLIT_LGO, 1, &o, NULL, NULL, &r, &err) == DLP_OK);
    CHECK(r.n == E.n);
    int graphs = 0;
    for (int i = 0; i < r.n; i++) {
        const char *hi = E.fg_hash[E.ex[r.ex[i]].fg];
        bool first = true;
        for (int j = 0; j < r.n; j++) {
            const char *hj = E.fg_hash[E.ex[r.ex[j]].fg];
            bool same = strcspn(hi, "|") == strcspn(hj, "|") &&
                        !strncmp(hi, hj, strcspn(hi, "|"));
            if (same) CHECK(r.fold[i] == r.fold[j]);
            if (same && j < i) first = false;
        }
        graphs += first;
    }
    CHECK(graphs >= 5);
    dlp_eval_result_free(&r);
    /* a blend: the geometric mean of its parts' predictions, record by
     * record, whether run as one kind or blended from the parts' results */
    dlp_eval_result a, b, ab, ab2;
    CHECK(dlp_eval_run(&E, "linreg", DLP_SPLIT_LMO, 1, &o, NULL, NULL, &a, &err) == DLP_OK);
    CHECK(dlp_eval_run(&E, "roofline", DLP_SPLIT_LMO, 1, &o, NULL, NULL, &b, &err) == DLP_OK);
    CHECK_MSG(dlp_eval_run(&E, "linreg+roofline", DLP_SPLIT_LMO, 1, &o, NULL, NULL,
                           &ab, &err) == DLP_OK, "%s", err.msg);
    const dlp_eval_result *parts[2] = {&a, &b};
    CHECK(dlp_eval_blend(parts, 2, "linreg+roofline", &ab2, &err) == DLP_OK);
    CHECK(ab.n == a.n && ab2.n == a.n && !strcmp(ab.kind, "linreg+roofline"));
    int checked = 0;
    for (int i = 0; i < a.n && ab.n == a.n && ab2.n == a.n; i++) {
        CHECK(ab.ex[i] == a.ex[i] && ab.fold[i] == a.fold[i]);
        size_t k = (size_t)i * DLP_T_COUNT + DLP_T_INF_LATENCY_MS;
        double g = sqrt(a.pred[k] * b.pred[k]);
        CHECK_MSG(fabs(ab.pred[k] - g) <= 1e-9 * g, "%g vs %g", ab.pred[k], g);
        CHECK(fabs(ab2.pred[k] - g) <= 1e-9 * g);
        checked++;
    }
    CHECK(checked == E.n);
    dlp_eval_result_free(&ab2);
    test_predictions_csv(&E, &a, &ab);
    test_model_shares(&E, &a);
    /* records of different folds are refused */
    if (b.n > 1) {
        int32_t t = b.ex[0];
        b.ex[0] = b.ex[1];
        b.ex[1] = t;
        CHECK(dlp_eval_blend(parts, 2, "x", &ab2, &err) == DLP_ERR_ARG);
        CHECK(strstr(err.msg, "same folds") != NULL);
    }
    CHECK(dlp_eval_run(&E, "linreg+nosuch", DLP_SPLIT_LMO, 1, &o, NULL, NULL, &r,
                       &err) == DLP_ERR_NOT_FOUND);
    CHECK(strstr(err.msg, "nosuch") != NULL);
    CHECK(dlp_eval_run(&E, "linreg+", DLP_SPLIT_LMO, 1, &o, NULL, NULL, &r,
                       &err) == DLP_ERR_NOT_FOUND);
    dlp_eval_result_free(&a);
    dlp_eval_result_free(&b);
    dlp_eval_result_free(&ab);
    dlp_examples_free(&E);
    dlp_dataset_free(ds);
}

int main(void) {
    RUN(test_metrics_hand);
    RUN(test_split_lmo);
    RUN(test_split_lofo);
    RUN(test_split_random_mc);
    RUN(test_svg);
    RUN(test_run_fixture);
    return CHECK_DONE();
}
