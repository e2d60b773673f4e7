/*
 * test_host.c — host-aware eager latency (src/predict/predict_host.h): the
 * factor's shape (1 when GPU-bound or at the reference host, d ln f / d ln
 * host = h beta by finite differences), the fit recovering known
 * parameters, cross-fitting equal to fits on the other folds done here, the
 * refusals, a fitted file applied as it is, the file's round trip and
 * errors, replicates (gaps of a hand-made file against their
 * definition, the refusals), the join of a predictions
 * file with the host probes of data/ (checked against the dataset's rows),
 * and the predict path (--host-us on a roofline model directory: the
 * factor from the graph and eager latencies predicted separately).
 */
#include "check.h"
#include "roofline_file.h"
#include "dlperf.h"
#include "predict/predict.h"
#include "predict/predict_host.h"

#include <unistd.h>

#define DATA "data"
#define RESNET "tests/fixtures/models/resnet50.onnx"

static void write_text(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    if (!f) return;
    fputs(text, f);
    fclose(f);
}

static void test_factor(void) {
    dlp_host_model m = {.beta = 0.9, .ref_us = 7.0};
    /* GPU-bound (graph >= eager): no change, whatever the host */
    CHECK_CLOSE(dlp_host_factor(&m, 20, 1.0, 1.0, NAN), 1, 1e-15);
    CHECK_CLOSE(dlp_host_factor(&m, 20, 1.0, 1.5, NAN), 1, 1e-15);
    /* at the reference host: no change */
    CHECK_CLOSE(dlp_host_factor(&m, 7, 4.0, 1.0, NAN), 1, 1e-15);
    /* host-bound share 3/4: f = (host / ref)^(0.75 beta) */
    CHECK_CLOSE(dlp_host_factor(&m, 14, 4.0, 1.0, NAN), pow(2, 0.75 * 0.9), 1e-12);
    /* finite differences of ln f in ln host */
    double h = 1e-6, x = log(9.0);
    double d = (log(dlp_host_factor(&m, exp(x + h), 4.0, 1.0, NAN)) -
                log(dlp_host_factor(&m, exp(x - h), 4.0, 1.0, NAN))) / (2 * h);
    CHECK_CLOSE(d, 0.75 * 0.9, 1e-6);
    /* monotone in the host, slower host never faster */
    CHECK(dlp_host_factor(&m, 8, 4, 1, NAN) < dlp_host_factor(&m, 9, 4, 1, NAN));
    /* bad inputs: 1 */
    CHECK(dlp_host_factor(&m, 0, 4, 1, NAN) == 1);
    CHECK(dlp_host_factor(&m, NAN, 4, 1, NAN) == 1);
    CHECK(dlp_host_factor(&m, 9, -4, 1, NAN) == 1);
    CHECK(dlp_host_factor(&m, 9, 4, 0, NAN) == 1);
    CHECK(dlp_host_factor(NULL, 9, 4, 1, NAN) == 1);
    /* training (tau_ms > 0): h = min(1, tau / step), no CUDA-graph
     * latency needed */
    dlp_host_model t = {.beta = 0.8, .ref_us = 9.0, .tau_ms = 32};
    CHECK_CLOSE(dlp_host_factor(&t, 18, 8.0, NAN, NAN), pow(2, 0.8), 1e-12);
    CHECK_CLOSE(dlp_host_factor(&t, 18, 32.0, NAN, NAN), pow(2, 0.8), 1e-12);
    CHECK_CLOSE(dlp_host_factor(&t, 18, 128.0, NAN, NAN), pow(2, 0.25 * 0.8),
                1e-12);
    CHECK_CLOSE(dlp_host_factor(&t, 18, 128.0, 1.0, NAN), pow(2, 0.25 * 0.8),
                1e-12);
    d = (log(dlp_host_factor(&t, exp(x + h), 64.0, NAN, NAN)) -
         log(dlp_host_factor(&t, exp(x - h), 64.0, NAN, NAN))) / (2 * h);
    CHECK_CLOSE(d, 0.5 * 0.8, 1e-6);
    CHECK(dlp_host_factor(&t, 9, 5.0, NAN, NAN) == 1);
    CHECK(dlp_host_factor(&t, 18, NAN, NAN, NAN) == 1);
    CHECK(dlp_host_factor(&t, 18, 0, NAN, NAN) == 1);
    /* training, power rule (power_hi_w > 0): h = clamp((hi - P) / (hi -
     * lo), 0, 1) of the predicted power P; the step and graph unused */
    dlp_host_model w = {.beta = 0.8, .ref_us = 9.0, .power_lo_w = 200,
                        .power_hi_w = 400};
    CHECK(dlp_host_is_training(&w) && dlp_host_is_training(&t) &&
          !dlp_host_is_training(&m) && !dlp_host_is_training(NULL));
    CHECK_CLOSE(dlp_host_factor(&w, 18, 50.0, NAN, 150), pow(2, 0.8), 1e-12);
    CHECK_CLOSE(dlp_host_factor(&w, 18, 500.0, 1.0, 200), pow(2, 0.8), 1e-12);
    CHECK_CLOSE(dlp_host_factor(&w, 18, 50.0, NAN, 350), pow(2, 0.25 * 0.8),
                1e-12);
    CHECK_CLOSE(dlp_host_share(&w, 50.0, NAN, 350), 0.25, 1e-15);
    CHECK(dlp_host_factor(&w, 18, 50.0, NAN, 400) == 1);
    CHECK(dlp_host_factor(&w, 18, 50.0, NAN, 650) == 1);
    CHECK(isnan(dlp_host_share(&w, 50.0, NAN, NAN)) &&
          dlp_host_factor(&w, 18, 50.0, NAN, NAN) == 1 &&
          dlp_host_factor(&w, 18, 50.0, NAN, 0) == 1);
    d = (log(dlp_host_factor(&w, exp(x + h), 64.0, NAN, 300)) -
         log(dlp_host_factor(&w, exp(x - h), 64.0, NAN, 300))) / (2 * h);
    CHECK_CLOSE(d, 0.5 * 0.8, 1e-6);
    /* the watts on the fit's board: 200 W of a 400 W card read as 350 W
     * of a 700 W one; unscaled where either board power is unknown */
    CHECK(dlp_host_board_power(&w, 200, 400) == 200);   /* tdp 0: as is */
    w.power_tdp_w = 700;
    CHECK_CLOSE(dlp_host_board_power(&w, 200, 400), 350, 1e-12);
    CHECK(dlp_host_board_power(&w, 200, 0) == 200 &&
          dlp_host_board_power(NULL, 200, 400) == 200);
}

/* deterministic samples: actual = E exp(h beta ln(host / ref) + noise) */
static uint64_t rng = 88172645463325252ull;
static double unif(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}

static void make_set(dlp_host_set *s, int n, double beta, double ref,
                     double noise) {
    memset(s, 0, sizeof *s);
    s->s = calloc((size_t)n, sizeof *s->s);
    s->n = s->cap = n;
    s->n_devices = 2;
    strcpy(s->devices[0], "H100-SXM5-80GB");
    strcpy(s->devices[1], "H200-SXM-141GB");
    s->n_models = n / 3;
    for (int i = 0; i < n; i++) {
        dlp_host_sample *x = &s->s[i];
        x->fold = i % 5;
        x->model = i / 3;
        x->device = i % 2;
        x->eager_ms = 0.5 + 10 * unif();
        x->graph_ms = x->eager_ms * (0.1 + 1.1 * unif());   /* h 0..0.9 */
        x->host_us = 5 + 7 * unif();
        double h = fmax(0, 1 - x->graph_ms / x->eager_ms);
        x->actual_ms = x->eager_ms * exp(h * beta * log(x->host_us / ref) +
                                         noise * (unif() - 0.5));
    }
}

/* training samples: steps 2-400 ms, actual = E exp(min(1, tau / E) beta
 * ln(host / ref) + noise) */
static void make_training_set(dlp_host_set *s, int n, double beta,
                              double ref, double tau, double noise) {
    make_set(s, n, beta, ref, 0);
    s->mode = DLP_HOST_TRAINING;
    for (int i = 0; i < n; i++) {
        dlp_host_sample *x = &s->s[i];
        x->eager_ms = 2 * pow(200, unif());
        x->graph_ms = NAN;
        x->host_us = 6 + 10 * unif();
        double h = fmin(1, tau / x->eager_ms);
        x->actual_ms = x->eager_ms * exp(h * beta * log(x->host_us / ref) +
                                         noise * (unif() - 0.5));
    }
}

/* training samples whose host-bound share comes from the predicted
 * power: P uniform in 100-700 W, actual = E exp(clamp((hi - P) / (hi -
 * lo), 0, 1) beta ln(host / ref) + noise) */
static void make_power_set(dlp_host_set *s, int n, double beta, double ref,
                           double lo, double hi, double noise) {
    make_training_set(s, n, beta, ref, 1, 0);
    for (int i = 0; i < n; i++) {
        dlp_host_sample *x = &s->s[i];
        x->power_w = 100 + 600 * unif();
        double h = fmin(1, fmax(0, (hi - x->power_w) / (hi - lo)));
        x->actual_ms = x->eager_ms * exp(h * beta * log(x->host_us / ref) +
                                         noise * (unif() - 0.5));
    }
}

/* a two-sided host effect (slope 0.6 above 9 us, 1.6 below) on the power
 * rule's share: the two-sided fit finds the rule, ref_us within its 1%
 * grid and both slopes; one beta does worse held out (cross-fitting), and
 * the factor takes beta_quick below ref_us and beta above */
static void test_fit_two_sided(void) {
    dlp_host_set s;
    dlp_host_model m, one;
    dlp_error err;
    make_power_set(&s, 800, 1, 9.0, 300, 360, 0);
    s.tdp_w = 700;
    for (int i = 0; i < s.n; i++) {
        dlp_host_sample *x = &s.s[i];
        double h = fmin(1, fmax(0, (360 - x->power_w) / 60)),
               l = log(x->host_us / 9.0);
        x->actual_ms = x->eager_ms * exp(h * (l < 0 ? 1.6 : 0.6) * l);
    }
    CHECK(dlp_host_fit(&s, NULL, &one, &err) == DLP_OK && one.beta_quick == 0);
    s.two_sided = true;
    CHECK_MSG(dlp_host_fit(&s, NULL, &m, &err) == DLP_OK, "%s", err.msg);
    CHECK_MSG(m.power_lo_w == 300 && m.power_hi_w == 360 &&
              fabs(log(m.ref_us / 9.0)) < 0.01 && fabs(m.beta - 0.6) < 0.05 &&
              fabs(m.beta_quick - 1.6) < 0.05, "lo %g hi %g ref %g beta %g "
              "quick %g", m.power_lo_w, m.power_hi_w, m.ref_us, m.beta,
              m.beta_quick);
    dlp_host_cv two_cv, one_cv;
    CHECK(dlp_host_cross_validate(&s, -1, &two_cv, NULL, &err) == DLP_OK);
    s.two_sided = false;
    CHECK(dlp_host_cross_validate(&s, -1, &one_cv, NULL, &err) == DLP_OK);
    CHECK_MSG(two_cv.host < 0.5 * one_cv.host && one_cv.host < one_cv.blind,
              "two-sided %g, one %g, blind %g", two_cv.host, one_cv.host,
              one_cv.blind);
    /* the factor: h = 1 at 200 W */
    double slow = dlp_host_factor(&m, 2 * m.ref_us, 5, NAN, 200),
           quick = dlp_host_factor(&m, m.ref_us / 2, 5, NAN, 200);
    CHECK_CLOSE(slow, exp(m.beta * log(2)), 1e-12);
    CHECK_CLOSE(quick, exp(-m.beta_quick * log(2)), 1e-12);
    /* steps that shrink on slower hosts: no positive pair of slopes */
    for (int i = 0; i < s.n; i++)
        s.s[i].actual_ms = s.s[i].eager_ms * s.s[i].eager_ms /
                           s.s[i].actual_ms;
    s.two_sided = true;
    CHECK(dlp_host_fit(&s, NULL, &m, &err) == DLP_ERR_ARG &&
          strstr(err.msg, "both slopes"));
    dlp_host_set_free(&s);
}

/* the power rule: lo and hi found on their 20 W grid with beta and ref
 * (and tau left 0); off the grid, close, with cross-fitting better than
 * blind; a sample without a power leaves the tau rule alone */
static void test_fit_training_power(void) {
    dlp_host_set s;
    dlp_host_model m;
    dlp_error err;
    make_power_set(&s, 600, 0.95, 10.0, 260, 520, 0);
    s.tdp_w = 700;   /* the samples' board: the fit's watts are on it */
    CHECK_MSG(dlp_host_fit(&s, NULL, &m, &err) == DLP_OK, "%s", err.msg);
    CHECK(m.tau_ms == 0 && m.power_lo_w == 260 && m.power_hi_w == 520 &&
          m.n_samples == 600 && m.power_tdp_w == 700);
    CHECK_CLOSE(m.beta, 0.95, 1e-9);
    CHECK_CLOSE(m.ref_us, 10.0, 1e-9);
    /* applied to samples on a board of another power (a 350 W file on
     * 700 W samples), each power is read as its share: P / 2 */
    dlp_host_model half = m;
    half.power_tdp_w = 350;
    double *hc = malloc((size_t)s.n * sizeof *hc);
    dlp_host_cv hcv;
    CHECK(dlp_host_apply(&s, &half, &hcv, hc, &err) == DLP_OK);
    bool same = true;
    for (int i = 0; i < s.n; i++)
        same &= fabs(hc[i] - s.s[i].eager_ms *
                     dlp_host_factor(&m, s.s[i].host_us, s.s[i].eager_ms,
                                     NAN, s.s[i].power_w / 2)) < 1e-9;
    CHECK(same);
    free(hc);
    s.s[7].power_w = NAN;   /* one sample without: no power pair fits */
    CHECK(dlp_host_fit(&s, NULL, &m, &err) == DLP_OK && m.tau_ms > 0 &&
          m.power_hi_w == 0 && m.power_tdp_w == 0);
    dlp_host_set_free(&s);
    make_power_set(&s, 3000, 0.7, 9.0, 305, 470, 0.1);
    CHECK(dlp_host_fit(&s, NULL, &m, &err) == DLP_OK);
    CHECK_MSG(m.tau_ms == 0 && fabs(m.power_lo_w - 305) <= 30 &&
              fabs(m.power_hi_w - 470) <= 30 && fabs(m.beta - 0.7) < 0.1 &&
              fabs(m.ref_us - 9) < 0.6, "lo %g hi %g beta %g ref %g",
              m.power_lo_w, m.power_hi_w, m.beta, m.ref_us);
    dlp_host_cv cv;
    CHECK(dlp_host_cross_validate(&s, -1, &cv, NULL, &err) == DLP_OK);
    CHECK_MSG(cv.folds == 5 && cv.host < cv.blind, "%g %g", cv.host,
              cv.blind);
    /* by the host's source: every sixth sample's probe its own (every
     * other model's first sample: make_set's model is i / 3); the
     * split's sums against the whole's, then only the own kept */
    for (int i = 0; i < s.n; i++) s.s[i].own_host = i % 6 == 0;
    double *cor = malloc((size_t)s.n * sizeof *cor);
    CHECK(dlp_host_cross_validate(&s, -1, &cv, cor, &err) == DLP_OK);
    double ob = 0, oh = 0;
    int on = 0;
    for (int i = 0; i < s.n; i += 6, on++) {
        ob += fabs(s.s[i].eager_ms / s.s[i].actual_ms - 1);
        oh += fabs(cor[i] / s.s[i].actual_ms - 1);
    }
    CHECK(cv.own_n == on && cv.median_n == s.n - on);
    CHECK_CLOSE(cv.own_blind, 100 * ob / on, 1e-9);
    CHECK_CLOSE(cv.own_host, 100 * oh / on, 1e-9);
    CHECK_CLOSE((cv.own_blind * on + cv.median_blind * (s.n - on)) / s.n,
                cv.blind, 1e-9);
    free(cor);
    int models_before = s.n_models;
    CHECK(dlp_host_set_source(&s, DLP_HOST_SRC_OWN, &err) == DLP_OK && s.n == on &&
          s.n_models == on && s.n_models < models_before);
    for (int i = 0; i < s.n; i++) CHECK(s.s[i].own_host);
    for (int i = 0; i < s.n; i++) s.s[i].own_host = false;
    CHECK(dlp_host_set_source(&s, DLP_HOST_SRC_OWN, &err) == DLP_ERR_NOT_FOUND && s.n == 0);
    dlp_host_set_free(&s);
}

/* the training fit finds tau on its grid (2^(k/4) ms) with beta and ref;
 * cross-fitting improves on the blind steps */
static void test_fit_training(void) {
    dlp_host_set s;
    dlp_host_model m;
    dlp_error err;
    make_training_set(&s, 400, 0.8, 9.0, 32, 0);   /* 32 = 2^(20/4) */
    CHECK_MSG(dlp_host_fit(&s, NULL, &m, &err) == DLP_OK, "%s", err.msg);
    CHECK_CLOSE(m.tau_ms, 32, 1e-9);
    CHECK_CLOSE(m.beta, 0.8, 1e-9);
    CHECK_CLOSE(m.ref_us, 9.0, 1e-9);
    dlp_host_set_free(&s);
    make_training_set(&s, 3000, 0.9, 10.0, 45, 0.1);   /* off the grid */
    CHECK(dlp_host_fit(&s, NULL, &m, &err) == DLP_OK);
    CHECK_MSG(m.tau_ms > 45 / 1.2 && m.tau_ms < 45 * 1.2 &&
              fabs(m.beta - 0.9) < 0.1 && fabs(m.ref_us - 10) < 0.6,
              "tau %g beta %g ref %g", m.tau_ms, m.beta, m.ref_us);
    dlp_host_cv cv;
    CHECK(dlp_host_cross_validate(&s, -1, &cv, NULL, &err) == DLP_OK);
    CHECK_MSG(cv.folds == 5 && cv.host < cv.blind, "%g %g", cv.host,
              cv.blind);
    dlp_host_set_free(&s);
}

static void test_fit_recovers(void) {
    dlp_host_set s;
    dlp_host_model m;
    dlp_error err;
    make_set(&s, 300, 0.9, 7.3, 0);
    CHECK_MSG(dlp_host_fit(&s, NULL, &m, &err) == DLP_OK, "%s", err.msg);
    CHECK_CLOSE(m.beta, 0.9, 1e-9);
    CHECK_CLOSE(m.ref_us, 7.3, 1e-9);
    CHECK(m.n_samples == 300);
    dlp_host_set_free(&s);
    make_set(&s, 2000, 1.1, 8.0, 0.2);
    CHECK(dlp_host_fit(&s, NULL, &m, &err) == DLP_OK);
    CHECK_MSG(fabs(m.beta - 1.1) < 0.1 && fabs(m.ref_us - 8.0) < 0.5,
              "beta %g ref %g", m.beta, m.ref_us);
    /* cross-fitting: each fold by the fit on the others, done here again */
    double *cor = calloc((size_t)s.n, sizeof *cor);
    bool *use = calloc((size_t)s.n, 1);
    dlp_host_cv cv;
    CHECK(dlp_host_cross_validate(&s, -1, &cv, cor, &err) == DLP_OK);
    CHECK(cv.folds == 5);
    CHECK(cv.host < cv.blind);
    for (int f = 0; f < 5; f++) {
        for (int i = 0; i < s.n; i++) use[i] = s.s[i].fold != f;
        dlp_host_model mf;
        CHECK(dlp_host_fit(&s, use, &mf, &err) == DLP_OK);
        for (int i = 0; i < s.n; i++)
            if (!use[i])
                CHECK_CLOSE(cor[i], s.s[i].eager_ms *
                                        dlp_host_factor(&mf, s.s[i].host_us,
                                                        s.s[i].eager_ms,
                                                        s.s[i].graph_ms, NAN),
                            1e-12);
    }
    double blind = 0, host = 0, b0 = 0;
    int n0 = 0;
    for (int i = 0; i < s.n; i++) {
        double e = fabs(s.s[i].eager_ms / s.s[i].actual_ms - 1);
        blind += e;
        host += fabs(cor[i] / s.s[i].actual_ms - 1);
        if (s.s[i].device == 0) b0 += e, n0++;
    }
    CHECK_CLOSE(cv.blind, 100 * blind / s.n, 1e-9);
    CHECK_CLOSE(cv.host, 100 * host / s.n, 1e-9);
    CHECK(cv.dev_n[0] == n0 && cv.dev_n[0] + cv.dev_n[1] == s.n);
    CHECK_CLOSE(cv.dev_blind[0], 100 * b0 / n0, 1e-9);
    /* fitted on one card's samples: every fold corrected by the fit on
     * the other folds' samples of device 0 */
    CHECK(dlp_host_cross_validate(&s, 0, &cv, cor, &err) == DLP_OK);
    for (int f = 0; f < 5; f++) {
        for (int i = 0; i < s.n; i++)
            use[i] = s.s[i].fold != f && s.s[i].device == 0;
        dlp_host_model mf;
        CHECK(dlp_host_fit(&s, use, &mf, &err) == DLP_OK);
        for (int i = 0; i < s.n; i++)
            if (s.s[i].fold == f)
                CHECK_CLOSE(cor[i], s.s[i].eager_ms *
                                        dlp_host_factor(&mf, s.s[i].host_us,
                                                        s.s[i].eager_ms,
                                                        s.s[i].graph_ms, NAN),
                            1e-12);
    }
    free(cor);
    free(use);
    dlp_host_set_free(&s);
}

/* A fitted file applied as it is (dlp_host_apply, `dlperf host apply`):
 * with the true parameters on noise-free samples every corrected latency
 * is the measured one (MAPE 0), each sample's correction is the factor's,
 * the MAPE as given is computed by hand here, and no samples is refused */
static void test_apply(void) {
    dlp_host_set s;
    dlp_error err;
    make_set(&s, 120, 0.8, 6.5, 0);
    dlp_host_model m = {.beta = 0.8, .ref_us = 6.5},
                   off = {.beta = 0.4, .ref_us = 9.0};
    double *cor = calloc((size_t)s.n, sizeof *cor);
    dlp_host_cv cv;
    CHECK(dlp_host_apply(&s, &m, &cv, cor, &err) == DLP_OK);
    CHECK(cv.folds == 0);
    CHECK_CLOSE(cv.host, 0, 1e-9);
    double blind = 0, dev1 = 0;
    int n1 = 0;
    for (int i = 0; i < s.n; i++) {
        CHECK_CLOSE(cor[i], s.s[i].actual_ms, 1e-9 * s.s[i].actual_ms);
        double e = fabs(s.s[i].eager_ms / s.s[i].actual_ms - 1);
        blind += e;
        if (s.s[i].device == 1) dev1 += e, n1++;
    }
    CHECK(blind > 0);
    CHECK_CLOSE(cv.blind, 100 * blind / s.n, 1e-9);
    CHECK(cv.dev_n[1] == n1);
    CHECK_CLOSE(cv.dev_blind[1], 100 * dev1 / n1, 1e-9);
    /* another file: each sample by that file's factor, the MAPE over them */
    CHECK(dlp_host_apply(&s, &off, &cv, cor, &err) == DLP_OK);
    double host = 0;
    for (int i = 0; i < s.n; i++) {
        double want = s.s[i].eager_ms * dlp_host_factor(&off, s.s[i].host_us,
                                                        s.s[i].eager_ms,
                                                        s.s[i].graph_ms, NAN);
        CHECK_CLOSE(cor[i], want, 1e-12 * want);
        host += fabs(want / s.s[i].actual_ms - 1);
    }
    CHECK(cv.host > 0);
    CHECK_CLOSE(cv.host, 100 * host / s.n, 1e-9);
    /* an LLM set: the same corrections, the MAPE of the throughputs they
     * stand for (actual / predicted latency) */
    s.mode = DLP_HOST_LLM;
    CHECK(dlp_host_apply(&s, &off, &cv, cor, &err) == DLP_OK);
    double tb = 0, th = 0;
    for (int i = 0; i < s.n; i++) {
        tb += fabs(s.s[i].actual_ms / s.s[i].eager_ms - 1);
        th += fabs(s.s[i].actual_ms / cor[i] - 1);
    }
    CHECK_CLOSE(cv.blind, 100 * tb / s.n, 1e-9);
    CHECK_CLOSE(cv.host, 100 * th / s.n, 1e-9);
    CHECK(fabs(cv.blind - 100 * blind / s.n) > 1e-3);
    s.mode = DLP_HOST_INFERENCE;
    CHECK(dlp_host_apply(&s, &m, &cv, NULL, &err) == DLP_OK);   /* no array */
    s.n = 0;
    CHECK(dlp_host_apply(&s, &m, &cv, NULL, &err) == DLP_ERR_ARG);
    s.n = 120;
    free(cor);
    dlp_host_set_free(&s);
}

/* energy: the factor's shape; gamma recovered exactly from noise-free
 * samples, the MAPE minimum of a brute-force scan of gamma on noisy ones,
 * clipped to 0..1; cross-fitting and apply scored against sums done here;
 * samples without an energy prediction left out of both */
static double energy_mape(const dlp_host_set *s, const dlp_host_model *m) {
    double sum = 0;
    int n = 0;
    for (int i = 0; i < s->n; i++) {
        const dlp_host_sample *x = &s->s[i];
        if (!(x->actual_j > 0)) continue;
        double f = dlp_host_factor(m, x->host_us, x->eager_ms, x->graph_ms, NAN);
        sum += fabs(x->energy_j * dlp_host_energy_factor(m, f) / x->actual_j
                    - 1);
        n++;
    }
    return 100 * sum / n;
}

/* energy labels for every other sample: actual = E (1 + gamma (f - 1)) x
 * exp(noise), f the factor of beta, ref; the rest without one */
static void add_energy(dlp_host_set *s, double beta, double ref,
                       double gamma, double noise) {
    dlp_host_model t = {.beta = beta, .ref_us = ref, .gamma = gamma};
    for (int i = 0; i < s->n; i++) {
        dlp_host_sample *x = &s->s[i];
        x->actual_j = x->energy_j = NAN;
        if (i % 2) continue;
        double f = dlp_host_factor(&t, x->host_us, x->eager_ms, x->graph_ms, NAN);
        x->energy_j = 0.2 + 5 * unif();
        x->actual_j = x->energy_j * (1 + gamma * (f - 1)) *
                      exp(noise * (unif() - 0.5));
    }
}

static void test_energy(void) {
    dlp_host_model m = {.beta = 0.9, .ref_us = 7.0, .gamma = 0.6};
    CHECK_CLOSE(dlp_host_energy_factor(&m, 1), 1, 1e-15);
    CHECK_CLOSE(dlp_host_energy_factor(&m, 2), 1.6, 1e-15);
    CHECK_CLOSE(dlp_host_energy_factor(&m, 0.5), 0.7, 1e-15);
    CHECK(dlp_host_energy_factor(&m, 0) == 1);
    CHECK(dlp_host_energy_factor(&m, NAN) == 1);
    CHECK(dlp_host_energy_factor(NULL, 2) == 1);
    m.gamma = 0;
    CHECK(dlp_host_energy_factor(&m, 3) == 1);

    dlp_host_set s;
    dlp_error err;
    make_set(&s, 400, 0.9, 7.3, 0);
    add_energy(&s, 0.9, 7.3, 0.6, 0);
    CHECK_MSG(dlp_host_fit(&s, NULL, &m, &err) == DLP_OK, "%s", err.msg);
    CHECK_CLOSE(m.gamma, 0.6, 1e-9);
    CHECK(m.n_energy == 200);
    /* clipped: a share above 1 or below 0 has no meaning */
    add_energy(&s, 0.9, 7.3, 1.6, 0);
    CHECK(dlp_host_fit(&s, NULL, &m, &err) == DLP_OK && m.gamma == 1);
    add_energy(&s, 0.9, 7.3, -0.5, 0);
    CHECK(dlp_host_fit(&s, NULL, &m, &err) == DLP_OK && m.gamma == 0);
    dlp_host_set_free(&s);

    /* noisy: no gamma of a fine scan gives a lower MAPE */
    make_set(&s, 1000, 1.2, 8.0, 0.2);
    add_energy(&s, 1.2, 8.0, 0.7, 0.3);
    CHECK(dlp_host_fit(&s, NULL, &m, &err) == DLP_OK);
    double best = energy_mape(&s, &m), scan = INFINITY, at = -1;
    dlp_host_model g = m;
    for (int k = 0; k <= 2000; k++) {
        g.gamma = k / 2000.0;
        double e = energy_mape(&s, &g);
        if (e < scan) scan = e, at = g.gamma;
    }
    CHECK_MSG(best <= scan + 1e-9 && fabs(m.gamma - at) < 0.01,
              "gamma %g: %g%%, scan %g: %g%%", m.gamma, best, at, scan);
    CHECK(fabs(m.gamma - 0.7) < 0.1);
    /* cross-fitting: each fold's energy by the fit on the other folds */
    dlp_host_cv cv;
    CHECK(dlp_host_cross_validate(&s, -1, &cv, NULL, &err) == DLP_OK);
    bool *use = calloc((size_t)s.n, 1);
    double blind = 0, host = 0;
    int n = 0;
    for (int f = 0; f < 5; f++) {
        for (int i = 0; i < s.n; i++) use[i] = s.s[i].fold != f;
        dlp_host_model mf;
        CHECK(dlp_host_fit(&s, use, &mf, &err) == DLP_OK);
        for (int i = 0; i < s.n; i++) {
            const dlp_host_sample *x = &s.s[i];
            if (use[i] || !(x->actual_j > 0)) continue;
            double fl = dlp_host_factor(&mf, x->host_us, x->eager_ms,
                                        x->graph_ms, NAN);
            blind += fabs(x->energy_j / x->actual_j - 1);
            host += fabs(x->energy_j * (1 + mf.gamma * (fl - 1)) /
                         x->actual_j - 1);
            n++;
        }
    }
    CHECK(cv.e_n == 500 && n == 500);
    CHECK_CLOSE(cv.e_blind, 100 * blind / n, 1e-9);
    CHECK_CLOSE(cv.e_host, 100 * host / n, 1e-9);
    CHECK(cv.e_host < cv.e_blind);
    CHECK(cv.dev_e_n[0] + cv.dev_e_n[1] == 500);
    /* applied as it is: the MAPE of the file's correction */
    CHECK(dlp_host_apply(&s, &m, &cv, NULL, &err) == DLP_OK);
    CHECK_CLOSE(cv.e_host, best, 1e-9);
    free(use);
    dlp_host_set_free(&s);
    /* no energy predictions: gamma 0, nothing scored */
    make_set(&s, 100, 0.9, 7.3, 0.1);
    CHECK(dlp_host_fit(&s, NULL, &m, &err) == DLP_OK);
    CHECK(m.gamma == 0 && m.n_energy == 0);
    CHECK(dlp_host_apply(&s, &m, &cv, NULL, &err) == DLP_OK && cv.e_n == 0);
    dlp_host_set_free(&s);
}

static void test_fit_refuses(void) {
    dlp_host_set s;
    dlp_host_model m;
    dlp_error err;
    make_set(&s, 50, -0.5, 7, 0);         /* faster with a slower host */
    CHECK(dlp_host_fit(&s, NULL, &m, &err) == DLP_ERR_NOT_FOUND);
    CHECK(strstr(err.msg, "beta") != NULL);
    for (int i = 0; i < s.n; i++) s.s[i].graph_ms = s.s[i].eager_ms; /* h 0 */
    CHECK(dlp_host_fit(&s, NULL, &m, &err) == DLP_ERR_ARG);
    s.n = 1;
    CHECK(dlp_host_fit(&s, NULL, &m, &err) == DLP_ERR_ARG);
    s.n = 0;
    dlp_host_cv cv;
    CHECK(dlp_host_cross_validate(&s, -1, &cv, NULL, &err) == DLP_ERR_ARG);
    s.n = 50;
    dlp_host_set_free(&s);
}

static void test_file(void) {
    char dir[] = "/tmp/dlp_host_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char p[256];
    snprintf(p, sizeof p, "%s/h.csv", dir);
    dlp_host_model m = {0.87, 7.25, 1234, 321, 5, 18.5, 16.25, 0.63, 1000,
                        15.5, 12.75, 0, 0, 0, 0, 0, 0, 0, 1.75}, r;
    dlp_error err;
    CHECK(dlp_host_save(p, &m, &err) == DLP_OK);
    CHECK_MSG(dlp_host_load(p, &r, &err) == DLP_OK, "%s", err.msg);
    CHECK(r.beta == m.beta && r.ref_us == m.ref_us && r.n_samples == 1234 &&
          r.n_models == 321 && r.folds == 5 && r.blind_mape == 18.5 &&
          r.host_mape == 16.25 && r.gamma == 0.63 && r.n_energy == 1000 &&
          r.energy_blind_mape == 15.5 && r.energy_host_mape == 12.75 &&
          r.beta_quick == 1.75);
    CHECK(r.tau_ms == 0);
    m.tau_ms = 22.627417;   /* a training fit's */
    CHECK(dlp_host_save(p, &m, &err) == DLP_OK);
    CHECK(dlp_host_load(p, &r, &err) == DLP_OK && r.tau_ms == m.tau_ms);
    m.tau_ms = 0;   /* a training fit's power rule */
    m.power_lo_w = 280;
    m.power_hi_w = 460;
    m.power_tdp_w = 700;
    CHECK(dlp_host_save(p, &m, &err) == DLP_OK);
    CHECK(dlp_host_load(p, &r, &err) == DLP_OK && r.tau_ms == 0 &&
          r.power_lo_w == 280 && r.power_hi_w == 460 &&
          r.power_tdp_w == 700);
    CHECK(r.host_source == DLP_HOST_SRC_OWN);
    m.host_source = DLP_HOST_SRC_BATCH;   /* on the batches' medians */
    CHECK(dlp_host_save(p, &m, &err) == DLP_OK);
    CHECK(dlp_host_load(p, &r, &err) == DLP_OK && r.host_source == DLP_HOST_SRC_BATCH);
    m.level_mape = 17.5;   /* the fit at the host's level */
    m.energy_level_mape = 14.25;
    CHECK(dlp_host_save(p, &m, &err) == DLP_OK);
    CHECK(dlp_host_load(p, &r, &err) == DLP_OK && r.level_mape == 17.5 &&
          r.energy_level_mape == 14.25);
    /* a file of before the energy correction: energy left as it is */
    write_text(p, "format,dlperf-host-1\nbeta,1\nref_us,7\n");
    CHECK(dlp_host_load(p, &r, &err) == DLP_OK && r.gamma == 0 &&
          r.energy_host_mape == 0);
    static const char *const bad[] = {
        "beta,1\nref_us,7\n",                                  /* no format */
        "format,dlperf-host-2\nbeta,1\nref_us,7\n",
        "format,dlperf-host-1\nref_us,7\n",                    /* no beta */
        "format,dlperf-host-1\nbeta,1\n",                      /* no ref */
        "format,dlperf-host-1\nbeta,0\nref_us,7\n",
        "format,dlperf-host-1\nbeta,5\nref_us,7\n",
        "format,dlperf-host-1\nbeta,1\nref_us,0.01\n",
        "format,dlperf-host-1\nbeta,1\nref_us,inf\n",
        "format,dlperf-host-1\nbeta,1x\nref_us,7\n",
        "format,dlperf-host-1\nbeta 1\n",
        "format,dlperf-host-1\nbeta,1\nref_us,7\nenergy_gamma,1.5\n",
        "format,dlperf-host-1\nbeta,1\nref_us,7\nenergy_gamma,-0.1\n",
        "format,dlperf-host-1\nbeta,1\nref_us,7\nenergy_gamma,nan\n",
        "format,dlperf-host-1\nbeta,1\nref_us,7\ntau_ms,-1\n",
        "format,dlperf-host-1\nbeta,1\nref_us,7\ntau_ms,1e9\n",
        "format,dlperf-host-1\nbeta,1\nref_us,7\npower_lo_w,300\n"
        "power_hi_w,300\n",                                  /* lo = hi */
        "format,dlperf-host-1\nbeta,1\nref_us,7\npower_lo_w,-5\n"
        "power_hi_w,300\n",
        "format,dlperf-host-1\nbeta,1\nref_us,7\npower_hi_w,9000\n",
        "format,dlperf-host-1\nbeta,1\nref_us,7\npower_hi_w,nan\n",
        "format,dlperf-host-1\nbeta,1\nref_us,7\npower_lo_w,100\n"
        "power_hi_w,300\npower_tdp_w,-700\n",
        "format,dlperf-host-1\nbeta,1\nref_us,7\npower_tdp_w,1e9\n",
        "format,dlperf-host-1\nbeta,1\nref_us,7\ntau_ms,20\n"
        "power_lo_w,100\npower_hi_w,300\n",                 /* both rules */
        "format,dlperf-host-1\nbeta,1\nref_us,7\nhost_source,3\n",
        "format,dlperf-host-1\nbeta,1\nref_us,7\nhost_source,0.5\n",
        "format,dlperf-host-1\nbeta,1\nref_us,7\nlevel_mape,-1\n",
        "format,dlperf-host-1\nbeta,1\nref_us,7\nenergy_level_mape,nan\n",
        "",
        NULL};
    for (int i = 0; bad[i]; i++) {
        write_text(p, bad[i]);
        CHECK_MSG(dlp_host_load(p, &r, &err) == DLP_ERR_FORMAT, "case %d", i);
        CHECK(strstr(err.msg, p) != NULL);
    }
    unlink(p);
    CHECK(dlp_host_load(p, &r, &err) == DLP_ERR_IO);
    rmdir(dir);
}

/* the modes' names and files: each name parses back to its mode, the
 * files are the header's three, another name is no mode */
static void test_mode_names(void) {
    static const char *const files[DLP_HOST_N_MODES] = {
        DLP_HOST_FILE, DLP_HOST_LLM_FILE, DLP_HOST_TRAINING_FILE};
    static const char *const names[DLP_HOST_N_MODES] = {
        "inference", "llm", "training"};
    for (int k = 0; k < DLP_HOST_N_MODES; k++) {
        CHECK(!strcmp(dlp_host_file((dlp_host_mode)k), files[k]));
        CHECK(!strcmp(dlp_host_mode_name((dlp_host_mode)k), names[k]));
        CHECK(dlp_host_mode_parse(names[k]) == (dlp_host_mode)k);
    }
    CHECK(dlp_host_mode_parse("eager") == DLP_HOST_N_MODES);
    CHECK(dlp_host_mode_parse("") == DLP_HOST_N_MODES);
    CHECK(dlp_host_mode_parse(NULL) == DLP_HOST_N_MODES);
}

/* each text of bad[] (NULL-ended) written to p is refused as a format
 * error naming p */
static void refused_rows(const char *p, const char *const *bad,
                         const dlp_host_model *m) {
    for (int i = 0; bad[i]; i++) {
        dlp_host_repl r = {0};
        dlp_error err;
        write_text(p, bad[i]);
        CHECK_MSG(dlp_host_replicates(p, m, &r, &err) == DLP_ERR_FORMAT,
                  "case %d", i);
        CHECK(strstr(err.msg, p) != NULL);
        dlp_host_repl_free(&r);
    }
}

/* replicates: a hand-made file of two batches; every gap computed here
 * from its definition (the earlier as it is, and moved by
 * (host_later / host_earlier)^(h beta), h = 1 - graph / eager of the
 * earlier), then the refusals */
static void test_replicates(void) {
    char dir[] = "/tmp/dlp_repl_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char p[256];
    snprintf(p, sizeof p, "%s/rows.csv", dir);
    const char *hdr = "protocol,batch_id,hash,device,rep,status,runtime,"
                      "precision,batch,seq,height,width,latency_ms,host_us,"
                      "power_w\n";
    char text[4096];
    snprintf(text, sizeof text, "%s"
        "p1,A,g1,H100,0,ok,graph,fp16,8,,224,224,2,,300\n"
        "p1,A,g1,H100,0,ok,eager,fp16,8,,224,224,10,8,200\n"
        "p1,A,g1,H100,1,flagged,graph,fp16,8,,224,224,2.2,,\n"  /* no power */
        "p1,A,g1,H100,1,flagged,eager,fp16,8,,224,224,11,9,\n"
        "p1,A,g2,H100,0,ok,eager,fp16,8,,224,224,5,,\n"      /* no host_us */
        "p1,A,g3,H100,0,ok,graph,fp32,1,,64,64,1,,100\n"
        "p1,A,g3,H100,0,ok,eager,fp32,1,,64,64,4,7,90\n"     /* once only */
        "p1,B,g1,H100,0,ok,graph,fp16,8,,224,224,2.5,,270\n"
        "p1,B,g1,H100,0,ok,eager,fp16,8,,224,224,15,12,150\n"
        "p1,B,g1,H100,1,failed,eager,fp16,8,,224,224,99,12,\n"
        "p1,B,g1,H100,0,ok,eager,fp16,16,,224,224,30,12,\n", /* other batch size */
        hdr);
    write_text(p, text);
    dlp_host_model m = {.beta = 0.5, .ref_us = 8};
    dlp_host_repl r = {0};
    dlp_error err;
    CHECK_MSG(dlp_host_replicates(p, &m, &r, &err) == DLP_OK, "%s", err.msg);
    CHECK(r.n_batches == 2 && !strcmp(r.batches[0], "A") &&
          !strcmp(r.batches[1], "B"));
    CHECK(r.n_no_host == 1 && r.n_no_graph == 0 && r.n_pairs == 2);
    CHECK_CLOSE(r.pairs[0].graph_med, 100 * fabs(2 / 2.2 - 1), 1e-9);
    CHECK_CLOSE(r.pairs[1].graph_med,
                50 * (fabs(2 / 2.5 - 1) + fabs(2.2 / 2.5 - 1)), 1e-9);
    /* the twins' signed shifts: latency over every pair, power over the
     * pairs whose twins both carry it (A rep 1's has none) */
    CHECK_CLOSE(r.pairs[0].graph_shift, 100 * (2.2 / 2 - 1), 1e-9);
    CHECK(r.pairs[0].n_power == 0 && isnan(r.pairs[0].power_shift));
    CHECK_CLOSE(r.pairs[1].graph_shift,
                100 * (sqrt(2.5 / 2 * 2.5 / 2.2) - 1), 1e-9);
    CHECK(r.pairs[1].n_power == 1);
    CHECK_CLOSE(r.pairs[1].power_shift, 100 * (270.0 / 300 - 1), 1e-9);
    /* A rep 0 -> A rep 1; A rep 0 -> B, A rep 1 -> B */
    double h0 = 1 - 2.0 / 10, h1 = 1 - 2.2 / 11;
    double s_as = 100 * fabs(10.0 / 11 - 1);
    double s_mv = 100 * fabs(10 * pow(9.0 / 8, 0.5 * h0) / 11 - 1);
    double x_as[2] = {100 * fabs(10.0 / 15 - 1), 100 * fabs(11.0 / 15 - 1)};
    double x_mv[2] = {100 * fabs(10 * pow(12.0 / 8, 0.5 * h0) / 15 - 1),
                      100 * fabs(11 * pow(12.0 / 9, 0.5 * h1) / 15 - 1)};
    const dlp_host_repl_pair *a = &r.pairs[0], *b = &r.pairs[1];
    CHECK(a->a == 0 && a->b == 0 && a->n == 1 && b->a == 0 && b->b == 1 &&
          b->n == 2);
    CHECK_CLOSE(a->gap, s_as, 1e-9);
    CHECK_CLOSE(a->gap_cor, s_mv, 1e-9);
    CHECK_CLOSE(a->host_a, 8, 1e-12);
    CHECK_CLOSE(a->host_b, 9, 1e-12);
    CHECK_CLOSE(b->gap, (x_as[0] + x_as[1]) / 2, 1e-9);
    CHECK_CLOSE(b->gap_med, (x_as[0] + x_as[1]) / 2, 1e-9);
    CHECK_CLOSE(b->gap_cor, (x_mv[0] + x_mv[1]) / 2, 1e-9);
    CHECK_CLOSE(b->host_a, 8.5, 1e-12);
    CHECK_CLOSE(b->host_b, 12, 1e-12);
    /* beta fitted on the two cross-batch pairs, least squares through 0 */
    double hx[2] = {h0 * log(12.0 / 8), h1 * log(12.0 / 9)};
    double ly[2] = {log(15.0 / 10), log(15.0 / 11)};
    double bf = (hx[0] * ly[0] + hx[1] * ly[1]) / (hx[0] * hx[0] + hx[1] * hx[1]);
    CHECK_CLOSE(b->beta_fit, bf, 1e-9);
    CHECK_CLOSE(b->gap_fit, 50 * (fabs(10 * pow(12.0 / 8, bf * h0) / 15 - 1) +
                                  fabs(11 * pow(12.0 / 9, bf * h1) / 15 - 1)),
                1e-9);
    CHECK(r.all_same.n == 1 && r.all_across.n == 2);
    CHECK_CLOSE(r.all_across.gap_cor, b->gap_cor, 1e-12);
    /* the correction moves the pairs toward each other here */
    CHECK(b->gap_cor < b->gap && a->gap_cor < a->gap);
    dlp_host_repl_free(&r);

    static const char *const bad[] = {
        /* no host_us column */
        "protocol,batch_id,hash,device,rep,status,runtime,precision,batch,"
        "seq,height,width,latency_ms\np1,A,g1,H100,0,ok,eager,fp16,8,,1,1,2\n",
        /* a latency that is not a number */
        "protocol,batch_id,hash,device,rep,status,runtime,precision,batch,"
        "seq,height,width,latency_ms,host_us,power_w\n"
        "p1,A,g1,H100,0,ok,eager,fp16,8,,1,1,fast,8,\n",
        /* a row too short to hold power_w */
        "protocol,batch_id,hash,device,rep,status,runtime,precision,batch,"
        "seq,height,width,latency_ms,host_us,power_w\n"
        "p1,A,g1,H100,0,ok,eager,fp16,8,,1,1,2,8\n",
        /* a power that is not a number */
        "protocol,batch_id,hash,device,rep,status,runtime,precision,batch,"
        "seq,height,width,latency_ms,host_us,power_w\n"
        "p1,A,g1,H100,0,ok,graph,fp16,8,,1,1,2,,hot\n",
        /* no power_w column */
        "protocol,batch_id,hash,device,rep,status,runtime,precision,batch,"
        "seq,height,width,latency_ms,host_us\n"
        "p1,A,g1,H100,0,ok,eager,fp16,8,,1,1,2,8\n",
        "",
        NULL};
    refused_rows(p, bad, &m);
    /* rows of the later batch first (as repeats.csv may hold them): the
     * batches in name order, the earlier standing for the later */
    snprintf(text, sizeof text, "%s"
        "p1,20990202T000000-b,g1,H200,0,ok,graph,fp16,8,,224,224,3,,330\n"
        "p1,20990202T000000-b,g1,H200,0,ok,eager,fp16,8,,224,224,6,9,\n"
        "p1,20990101T000000-a,g1,H200,0,ok,graph,fp16,8,,224,224,2,,300\n"
        "p1,20990101T000000-a,g1,H200,0,ok,eager,fp16,8,,224,224,4,8,\n",
        hdr);
    write_text(p, text);
    CHECK_MSG(dlp_host_replicates(p, &m, &r, &err) == DLP_OK, "%s", err.msg);
    CHECK(r.n_batches == 2 && !strcmp(r.batches[0], "20990101T000000-a") &&
          !strcmp(r.batches[1], "20990202T000000-b"));
    CHECK(r.n_pairs == 1 && r.pairs[0].a == 0 && r.pairs[0].b == 1);
    CHECK_CLOSE(r.pairs[0].graph_shift, 50, 1e-9);
    CHECK_CLOSE(r.pairs[0].power_shift, 10, 1e-9);
    CHECK_CLOSE(r.pairs[0].host_a, 8, 1e-12);
    dlp_host_repl_free(&r);
    /* no configuration measured twice */
    snprintf(text, sizeof text, "%s"
        "p1,A,g3,H100,0,ok,graph,fp32,1,,64,64,1,,\n"
        "p1,A,g3,H100,0,ok,eager,fp32,1,,64,64,4,7,\n", hdr);
    write_text(p, text);
    CHECK(dlp_host_replicates(p, &m, &r, &err) == DLP_ERR_NOT_FOUND);
    dlp_host_repl_free(&r);
    unlink(p);
    CHECK(dlp_host_replicates(p, &m, &r, &err) == DLP_ERR_IO);
    dlp_host_repl_free(&r);
    rmdir(dir);
}

/* data/, opened, and its counts (NULL, a failed check, when it cannot be) */
static dlp_dataset *open_data(dlp_dataset_counts *c) {
    dlp_dataset *ds = NULL;
    dlp_error err;
    CHECK_MSG(dlp_dataset_open(DATA, &ds, &err) == DLP_OK, "%s", err.msg);
    if (ds) dlp_dataset_get_counts(ds, c);
    return ds;
}

/* replicates of training steps (repeats-training.csv's columns): every
 * two steps of a configuration pair, rows without host_us in the gap as
 * is only; moved only by a training fit (h = min(1, tau_ms / step), or
 * from the earlier step's power); the power shift from the steps' own
 * power */
static void test_replicates_training(void) {
    char dir[] = "/tmp/dlp_replt_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char p[256];
    snprintf(p, sizeof p, "%s/rows.csv", dir);
    const char *hdr = "protocol,batch_id,hash,device,rep,status,precision,"
                      "batch,height,width,optimizer,step_ms,power_w,host_us\n";
    char text[4096];
    snprintf(text, sizeof text, "%s"
        "p1,A,g1,H200,0,ok,bf16,16,224,224,sgd_momentum,20,300,\n"
        "p1,A,g1,H200,1,ok,bf16,16,224,224,sgd_momentum,22,,\n"
        "p1,A,g1,H200,1,failed,bf16,16,224,224,sgd_momentum,99,,\n"
        "p1,A,g2,H200,0,ok,fp32,8,224,224,sgd_momentum,5,200,\n" /* once */
        "p1,B,g1,H200,0,ok,bf16,16,224,224,sgd_momentum,15,330,8\n"
        "p1,B,g1,H200,1,ok,bf16,16,224,224,sgd_momentum,16,,9\n"
        "p1,C,g1,H200,0,ok,bf16,16,224,224,sgd_momentum,14,,6\n", hdr);
    write_text(p, text);
    dlp_host_model m = {.beta = 0.5, .ref_us = 8};   /* not a training fit */
    dlp_host_repl r = {0};
    dlp_error err;
    CHECK_MSG(dlp_host_replicates(p, &m, &r, &err) == DLP_OK, "%s", err.msg);
    CHECK(r.training && r.n_batches == 3 && r.n_no_host == 3 &&
          r.n_no_graph == 0);
    /* buckets in order: A-A, A-B, A-C, B-B, B-C */
    CHECK(r.n_pairs == 5);
    const dlp_host_repl_pair *aa = &r.pairs[0], *ab = &r.pairs[1],
                             *ac = &r.pairs[2], *bb = &r.pairs[3],
                             *bc = &r.pairs[4];
    CHECK(aa->n == 1 && aa->n_host == 0 && ab->n == 4 && ab->n_host == 0 &&
          ac->n == 2 && bb->n == 1 && bb->n_host == 1 && bc->n == 2 &&
          bc->n_host == 2);
    CHECK(ab->a == 0 && ab->b == 1 && bc->a == 1 && bc->b == 2);
    CHECK_CLOSE(aa->gap, 100 * fabs(20.0 / 22 - 1), 1e-9);
    CHECK_CLOSE(ab->gap, 25 * (20.0 / 15 - 1 + 20.0 / 16 - 1 +
                               22.0 / 15 - 1 + 22.0 / 16 - 1), 1e-9);
    /* no twin, no training fit: nothing moved, no CUDA-graph figure */
    CHECK(isnan(ab->gap_cor) && isnan(bc->gap_cor) && isnan(ab->graph_med) &&
          isnan(ab->host_a) && isnan(ab->beta_fit));
    /* the steps' own signed shift, a geometric mean over the pairs */
    CHECK_CLOSE(ab->graph_shift,
                100 * (pow(15.0 * 16 * 15 * 16 / (20.0 * 20 * 22 * 22),
                           0.25) - 1), 1e-9);
    CHECK_CLOSE(ab->host_b, 8.5, 1e-12);
    /* the power of the one pair whose steps both carry it, A0 -> B0 */
    CHECK(ab->n_power == 1 && ac->n_power == 0);
    CHECK_CLOSE(ab->power_shift, 100 * (330.0 / 300 - 1), 1e-9);
    /* beta* with h = 1 over the pairs with both hosts */
    double hx[2] = {log(6.0 / 8), log(6.0 / 9)};
    double ly[2] = {log(14.0 / 15), log(14.0 / 16)};
    double bf = (hx[0] * ly[0] + hx[1] * ly[1]) /
                (hx[0] * hx[0] + hx[1] * hx[1]);
    CHECK_CLOSE(bc->beta_fit, bf, 1e-9);
    CHECK_CLOSE(bc->host_a, 8.5, 1e-12);
    CHECK_CLOSE(bc->host_b, 6, 1e-12);
    /* within / across: 2 pairs in a batch, 8 across */
    CHECK(r.all_same.n == 2 && r.all_same.n_host == 1 &&
          r.all_across.n == 8 && r.all_across.n_host == 2);
    dlp_host_repl_free(&r);

    /* a training fit moves the pairs with both hosts, h = min(1, tau /
     * the earlier step) */
    m.tau_ms = 10;
    CHECK_MSG(dlp_host_replicates(p, &m, &r, &err) == DLP_OK, "%s", err.msg);
    CHECK(r.n_pairs == 5 && isnan(r.pairs[1].gap_cor));
    double h0 = 10.0 / 15, h1 = 10.0 / 16;
    double mv[2] = {100 * fabs(15 * pow(6.0 / 8, 0.5 * h0) / 14 - 1),
                    100 * fabs(16 * pow(6.0 / 9, 0.5 * h1) / 14 - 1)};
    CHECK_CLOSE(r.pairs[4].gap_cor, (mv[0] + mv[1]) / 2, 1e-9);
    CHECK_CLOSE(r.pairs[3].gap_cor,
                100 * fabs(15 * pow(9.0 / 8, 0.5 * h0) / 16 - 1), 1e-9);
    CHECK_CLOSE(r.all_across.gap_cor, (mv[0] + mv[1]) / 2, 1e-9);
    dlp_host_repl_free(&r);

    /* the power rule takes the earlier step's measured power, a rep 1 row
     * its batch's rep 0 power (B1: B0's 330 W); h = (400 - 330) / 200 */
    m.tau_ms = 0;
    m.power_lo_w = 200;
    m.power_hi_w = 400;
    CHECK_MSG(dlp_host_replicates(p, &m, &r, &err) == DLP_OK, "%s", err.msg);
    double hw = (400 - 330) / 200.0;
    double mw[2] = {100 * fabs(15 * pow(6.0 / 8, 0.5 * hw) / 14 - 1),
                    100 * fabs(16 * pow(6.0 / 9, 0.5 * hw) / 14 - 1)};
    CHECK_CLOSE(r.pairs[4].gap_cor, (mw[0] + mw[1]) / 2, 1e-9);
    CHECK_CLOSE(r.pairs[3].gap_cor,
                100 * fabs(15 * pow(9.0 / 8, 0.5 * hw) / 16 - 1), 1e-9);
    /* the power shift stays over the steps that carry their own power */
    CHECK(r.pairs[1].n_power == 1 && r.pairs[2].n_power == 0);
    dlp_host_repl_free(&r);
    m.power_lo_w = m.power_hi_w = 0;

    /* refusals: a training table without host_us; a step not a number;
     * nothing measured twice */
    static const char *const bad[] = {
        "protocol,batch_id,hash,device,rep,status,precision,batch,height,"
        "width,step_ms,power_w\np1,A,g1,H200,0,ok,fp32,8,1,1,2,300\n",
        "protocol,batch_id,hash,device,rep,status,precision,batch,height,"
        "width,step_ms,power_w,host_us\np1,A,g1,H200,0,ok,fp32,8,1,1,slow,,\n",
        NULL};
    refused_rows(p, bad, &m);
    snprintf(text, sizeof text, "%s"
        "p1,A,g2,H200,0,ok,fp32,8,224,224,sgd_momentum,5,200,\n", hdr);
    write_text(p, text);
    CHECK(dlp_host_replicates(p, &m, &r, &err) == DLP_ERR_NOT_FOUND);
    CHECK(strstr(err.msg, "training configuration") != NULL);
    dlp_host_repl_free(&r);
    unlink(p);
    rmdir(dir);
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* the median of batch_id's eager inference probes (training: of its
 * training rows' own probes); NAN: none */
static double batch_median_probe(const dlp_dataset *ds, const char *batch_id,
                                 bool training) {
    dlp_dataset_counts c;
    dlp_dataset_get_counts(ds, &c);
    size_t rows = training ? c.training : c.inference;
    double *v = malloc((rows + 1) * sizeof *v);
    size_t n = 0;
    for (size_t i = 0; v && i < rows; i++) {
        const char *b;
        double h;
        if (training) {
            const dlp_training_row *t = dlp_dataset_training(ds, i);
            b = t->c.batch_id;
            h = t->host_us;
        } else {
            const dlp_inference_row *r = dlp_dataset_inference(ds, i);
            if (strcmp(r->runtime, "eager")) continue;
            b = r->c.batch_id;
            h = r->host_us;
        }
        if (h > 0 && !strcmp(b, batch_id)) v[n++] = h;
    }
    double med = NAN;
    if (n) {
        qsort(v, n, sizeof *v, cmp_double);
        med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    }
    free(v);
    return med;
}

/* the oracle of a training label's host: its own host_us, else the median
 * host_us of its batch's eager inference rows (NAN: none) */
static double training_host(const dlp_dataset *ds,
                            const dlp_training_row *t) {
    if (t->host_us > 0) return t->host_us;
    return batch_median_probe(ds, t->c.batch_id, false);
}

/* the oracle of a training label's host level: its batch's median of the
 * training rows' own probes, else of its eager inference rows */
static double training_level(const dlp_dataset *ds,
                             const dlp_training_row *t) {
    double m = batch_median_probe(ds, t->c.batch_id, true);
    return m > 0 ? m : batch_median_probe(ds, t->c.batch_id, false);
}

/* a predictions file naming real probed configurations of data/ */
static void test_join_with_data(void) {
    dlp_error err;
    dlp_dataset_counts c;
    dlp_dataset *ds = open_data(&c);
    if (!ds) return;
    const dlp_inference_row *a = NULL, *u = NULL;
    for (size_t i = 0; i < c.inference && (!a || !u); i++) {
        const dlp_inference_row *r = dlp_dataset_inference(ds, i);
        if (strcmp(r->runtime, "eager")) continue;
        if (!a && r->host_us > 0) a = r;
        if (!u && !(r->host_us > 0)) u = r;
    }
    CHECK(a && u);
    if (!a || !u) {
        dlp_dataset_free(ds);
        return;
    }
    /* the oracles: host_us of a's configuration averaged over its rows,
     * and the medians of their batches' probes (the host's level) */
    double sum = 0, level = 0;
    int n = 0;
    const char *batch = NULL;   /* its rows' batch, "" for several */
    for (size_t i = 0; i < c.inference; i++) {
        const dlp_inference_row *r = dlp_dataset_inference(ds, i);
        if (!strcmp(r->runtime, "eager") && !strcmp(r->c.hash, a->c.hash) &&
            !strcmp(r->c.device, a->c.device) &&
            !strcmp(r->precision, a->precision) && r->batch == a->batch &&
            r->seq == a->seq && r->height == a->height &&
            r->width == a->width && r->host_us > 0) {
            sum += r->host_us, n++;
            level += batch_median_probe(ds, r->c.batch_id, false);
            batch = !batch || !strcmp(batch, r->c.batch_id) ? r->c.batch_id
                                                             : "";
        }
    }
    char dir[] = "/tmp/dlp_host_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char p[256], row[512];
    snprintf(p, sizeof p, "%s/pred.csv", dir);
    FILE *f = fopen(p, "w");
    fputs("kind,split,fold,model,family,graph,device,runtime,precision,batch,"
          "seq,height,width,target,actual,predicted,rel_err\n", f);
#define ROW(kind, fold, r, rt, target, act, pred)                            \
    snprintf(row, sizeof row, "%s,lmo,%d,m,fam,%s,%s,%s,%s,%lld,%lld,%lld,"  \
             "%lld,%s,%g,%g,0\n", kind, fold, r->c.hash, r->c.device, rt,     \
             r->precision, (long long)r->batch, (long long)r->seq,           \
             (long long)r->height, (long long)r->width, target, act, pred);  \
    fputs(row, f)
    ROW("dippm", 2, a, "eager", "inference.latency_ms", 3.0, 2.5);
    ROW("dippm", 2, a, "graph", "inference.latency_ms", 1.0, 1.2);
    ROW("dippm", 3, a, "graph", "inference.latency_ms", 1.0, 9.9); /* other fold */
    ROW("dippm", 2, a, "eager", "inference.memory_mib", 100.0, 90.0);
    ROW("linreg", 2, a, "eager", "inference.latency_ms", 3.0, 7.0);
    ROW("dippm", 1, u, "eager", "inference.latency_ms", 3.0, 2.0); /* no probe */
    ROW("dippm", 1, u, "graph", "inference.latency_ms", 1.0, 1.0);
    /* an LLM run's throughput rows (samples/s), read as latencies */
    ROW("xgb", 4, a, "eager", "llm.throughput_samples_s", 100.0, 80.0);
    ROW("xgb", 4, a, "graph", "llm.throughput_samples_s", 300.0, 250.0);
    ROW("xgb", 4, a, "eager", "inference.latency_ms", 3.0, 2.5);
    fclose(f);
    dlp_host_set s;
    CHECK_MSG(dlp_host_set_load(p, ds, "xgb", DLP_HOST_LLM, &s, &err) == DLP_OK, "%s",
              err.msg);
    CHECK_MSG(s.n == 1 && s.n_eager == 1, "llm: n %d eager %d", s.n, s.n_eager);
    if (s.n == 1) {
        double b = (double)a->batch;
        CHECK_CLOSE(s.s[0].host_us, sum / n, 1e-12);
        CHECK_CLOSE(s.s[0].actual_ms, 1e3 * b / 100.0, 1e-9);
        CHECK_CLOSE(s.s[0].eager_ms, 1e3 * b / 80.0, 1e-9);
        CHECK_CLOSE(s.s[0].graph_ms, 1e3 * b / 250.0, 1e-9);
        CHECK(s.s[0].fold == 4);
    }
    dlp_host_set_free(&s);
    /* the inference reading takes xgb's latency row, not its throughput */
    CHECK(dlp_host_set_load(p, ds, "xgb", DLP_HOST_INFERENCE, &s, &err) == DLP_ERR_NOT_FOUND);
    CHECK_MSG(dlp_host_set_load(p, ds, "dippm", DLP_HOST_INFERENCE, &s, &err) == DLP_OK, "%s",
              err.msg);
    CHECK_MSG(s.n == 1 && s.n_eager == 2 && s.n_no_host == 1 &&
              s.n_no_graph == 0 && s.n_devices >= 1 && s.n_models == 1,
              "n %d eager %d no_host %d no_graph %d", s.n, s.n_eager,
              s.n_no_host, s.n_no_graph);
    if (s.n == 1) {
        CHECK_CLOSE(s.s[0].host_us, sum / n, 1e-12);
        CHECK_CLOSE(s.s[0].batch_host_us, level / n, 1e-12);
        /* the batch of its rows, or none where they are several */
        int k = s.s[0].batch;
        CHECK_MSG(*batch ? k >= 0 && k < s.n_batches &&
                               !strcmp(s.batches[k], batch)
                         : k == -1,
                  "batch %d of %d, oracle '%s'", k, s.n_batches, batch);
        CHECK(s.s[0].fold == 2 && s.s[0].eager_ms == 2.5 &&
              s.s[0].graph_ms == 1.2 && s.s[0].actual_ms == 3.0);
    }
    /* --batch-host: the host's level replaces the moment's probe */
    CHECK(dlp_host_set_source(&s, DLP_HOST_SRC_BATCH, &err) == DLP_OK &&
          s.n == 1 &&
          s.n_models == 1);
    if (s.n == 1) CHECK_CLOSE(s.s[0].host_us, level / n, 1e-12);
    dlp_host_set_free(&s);
    CHECK(dlp_host_set_load(p, ds, "linreg", DLP_HOST_INFERENCE, &s, &err) == DLP_ERR_NOT_FOUND);
    /* not a predictions file; a bad number */
    write_text(p, "kind,fold\ndippm,1\n");
    CHECK(dlp_host_set_load(p, ds, "dippm", DLP_HOST_INFERENCE, &s, &err) == DLP_ERR_FORMAT);
    CHECK(strstr(err.msg, "no column") != NULL);
    f = fopen(p, "w");
    fputs("kind,split,fold,model,family,graph,device,runtime,precision,batch,"
          "seq,height,width,target,actual,predicted,rel_err\n", f);
    ROW("dippm", 2, a, "eager", "inference.latency_ms", 3.0, 2.5);
    fputs("dippm,lmo,x,m,f,g,d,eager,fp32,1,0,0,0,inference.latency_ms,1,1,0\n", f);
    fclose(f);
    CHECK(dlp_host_set_load(p, ds, "dippm", DLP_HOST_INFERENCE, &s, &err) == DLP_ERR_FORMAT);
    /* a throughput of 0 has no latency */
    f = fopen(p, "w");
    fputs("kind,split,fold,model,family,graph,device,runtime,precision,batch,"
          "seq,height,width,target,actual,predicted,rel_err\n", f);
    ROW("xgb", 4, a, "eager", "llm.throughput_samples_s", 100.0, 0.0);
    fclose(f);
#undef ROW
    CHECK(dlp_host_set_load(p, ds, "xgb", DLP_HOST_LLM, &s, &err) == DLP_ERR_FORMAT);
    write_text(p, "");
    CHECK(dlp_host_set_load(p, ds, "dippm", DLP_HOST_INFERENCE, &s, &err) == DLP_ERR_FORMAT);
    unlink(p);
    CHECK(dlp_host_set_load(p, ds, "dippm", DLP_HOST_INFERENCE, &s, &err) == DLP_ERR_IO);
    rmdir(dir);
    dlp_dataset_free(ds);
}

/* --fresh-host: a label's host the fresh-process reading of its batch
 * (env.json, since p69a), against an oracle over data/; a label of a
 * batch before them has none and is dropped */
static void test_join_fresh(void) {
    dlp_error err;
    dlp_dataset_counts c;
    dlp_dataset *ds = open_data(&c);
    if (!ds) return;
    const dlp_inference_row *f = NULL, *o = NULL;
    for (size_t i = 0; i < c.inference && (!f || !o); i++) {
        const dlp_inference_row *r = dlp_dataset_inference(ds, i);
        if (strcmp(r->runtime, "eager") || !(r->host_us > 0)) continue;
        bool fresh = dlp_dataset_fresh_probe_us(ds, r->c.batch_id) > 0;
        if (fresh && !f) f = r;
        if (!fresh && !o) o = r;
    }
    CHECK(f && o);
    if (!f || !o) {
        dlp_dataset_free(ds);
        return;
    }
    double sum = 0;
    int n = 0;
    bool all = true;
    for (size_t i = 0; i < c.inference; i++) {
        const dlp_inference_row *r = dlp_dataset_inference(ds, i);
        if (!strcmp(r->runtime, "eager") && !strcmp(r->c.hash, f->c.hash) &&
            !strcmp(r->c.device, f->c.device) &&
            !strcmp(r->precision, f->precision) && r->batch == f->batch &&
            r->seq == f->seq && r->height == f->height &&
            r->width == f->width && r->host_us > 0) {
            double x = dlp_dataset_fresh_probe_us(ds, r->c.batch_id);
            all = all && x > 0;
            sum += x, n++;
        }
    }
    char dir[] = "/tmp/dlp_host_XXXXXX", p[256];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(p, sizeof p, "%s/pred.csv", dir);
    FILE *out = fopen(p, "w");
    fputs("kind,split,fold,model,family,graph,device,runtime,precision,batch,"
          "seq,height,width,target,actual,predicted,rel_err\n", out);
    const dlp_inference_row *rows[2] = {f, o};
    for (int k = 0; k < 2; k++)
        for (int g = 0; g < 2; g++)
            fprintf(out, "dippm,lmo,%d,m%d,fam,%s,%s,%s,%s,%lld,%lld,%lld,"
                    "%lld,inference.latency_ms,%g,%g,0\n", k, k,
                    rows[k]->c.hash, rows[k]->c.device, g ? "graph" : "eager",
                    rows[k]->precision, (long long)rows[k]->batch,
                    (long long)rows[k]->seq, (long long)rows[k]->height,
                    (long long)rows[k]->width, g ? 1.0 : 3.0, g ? 1.2 : 2.5);
    fclose(out);
    dlp_host_set s;
    CHECK_MSG(dlp_host_set_load(p, ds, "dippm", DLP_HOST_INFERENCE, &s,
                                &err) == DLP_OK, "%s", err.msg);
    /* every row of f's configuration is of a batch with the reading (the
     * batches since p69a measured graphs no batch had labeled) */
    CHECK(s.n == 2 && all);
    for (int i = 0; i < s.n; i++) {
        if (s.s[i].fold == 0)
            CHECK_CLOSE(s.s[i].fresh_host_us, sum / n, 1e-12);
        if (s.s[i].fold == 1) CHECK(isnan(s.s[i].fresh_host_us));
    }
    CHECK(dlp_host_set_source(&s, DLP_HOST_SRC_FRESH, &err) == DLP_OK &&
          s.n == 1 && s.n_models == 1);
    if (s.n == 1) {
        CHECK_CLOSE(s.s[0].host_us, sum / n, 1e-12);
        /* nothing left: refused, naming the source */
        s.s[0].fresh_host_us = NAN;
        CHECK(dlp_host_set_source(&s, DLP_HOST_SRC_FRESH, &err) ==
                  DLP_ERR_NOT_FOUND && strstr(err.msg, "fresh process"));
    }
    CHECK(dlp_host_set_source(&s, (dlp_host_source)7, &err) == DLP_ERR_ARG);
    dlp_host_set_free(&s);
    unlink(p);
    rmdir(dir);
    dlp_dataset_free(ds);
}

static bool same_training(const dlp_training_row *a,
                          const dlp_training_row *b) {
    return !strcmp(a->c.hash, b->c.hash) && !strcmp(a->c.device, b->c.device) &&
           !strcmp(a->precision, b->precision) && a->batch == b->batch &&
           a->height == b->height && a->width == b->width;
}

/* training labels joined with their hosts: a row's own host_us, a batch's
 * median, none; energy = power x step of each side */
static void test_join_training(void) {
    dlp_error err;
    dlp_dataset_counts c;
    dlp_dataset *ds = open_data(&c);
    if (!ds) return;
    const dlp_training_row *o = NULL, *b = NULL, *z = NULL;
    for (size_t i = 0; i < c.training && (!o || !b || !z); i++) {
        const dlp_training_row *t = dlp_dataset_training(ds, i);
        if (t->host_us > 0) {
            if (!o) o = t;
            continue;
        }
        if (b && z) continue;
        double h = training_host(ds, t);
        if (!b && h > 0) b = t;
        if (!z && !(h > 0)) z = t;
    }
    CHECK(o && b && z);
    if (!o || !b || !z) {
        dlp_dataset_free(ds);
        return;
    }
    /* the oracles: the host of each label row of the configuration,
     * averaged */
    double want[2] = {0, 0}, level[2] = {0, 0};
    const dlp_training_row *cfg[2] = {o, b};
    for (int k = 0; k < 2; k++) {
        int n = 0;
        for (size_t i = 0; i < c.training; i++) {
            const dlp_training_row *t = dlp_dataset_training(ds, i);
            double h;
            if (same_training(t, cfg[k]) && (h = training_host(ds, t)) > 0) {
                want[k] += h, n++;
                level[k] += training_level(ds, t);
            }
        }
        want[k] /= n;
        level[k] /= n;
    }
    char dir[] = "/tmp/dlp_host_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char p[256];
    snprintf(p, sizeof p, "%s/pred.csv", dir);
    FILE *f = fopen(p, "w");
    fputs("kind,split,fold,model,family,graph,device,runtime,precision,batch,"
          "seq,height,width,target,actual,predicted,rel_err\n", f);
#define TROW(fold, t, target, act, pred)                                     \
    fprintf(f, "dippm+xgb,lmo,%d,m%d,fam,%s,%s,train,%s,%lld,7,%lld,%lld,"   \
            "%s,%g,%g,0\n", fold, fold, t->c.hash, t->c.device,             \
            t->precision, (long long)t->batch, (long long)t->height,         \
            (long long)t->width, target, act, pred)
    TROW(0, o, "training.step_ms", 40.0, 30.0);
    TROW(0, o, "training.power_w", 400.0, 300.0);
    TROW(1, b, "training.step_ms", 20.0, 25.0);
    TROW(1, b, "training.memory_mib", 900.0, 800.0);
    TROW(1, b, "training.power_w", 250.0, 200.0);
    TROW(2, z, "training.step_ms", 10.0, 12.0);    /* no host */
    TROW(3, o, "training.step_ms", 40.0, 35.0);    /* no power */
    fclose(f);
#undef TROW
    dlp_host_set s;
    CHECK_MSG(dlp_host_set_load(p, ds, "dippm+xgb", DLP_HOST_TRAINING, &s,
                                &err) == DLP_OK, "%s", err.msg);
    /* fold 3's step has no power prediction: a training sample needs one
     * (the power rule's share, the energy), so it is left out, counted */
    CHECK_MSG(s.mode == DLP_HOST_TRAINING && s.n == 2 && s.n_eager == 4 &&
              s.n_no_host == 1 && s.n_no_graph == 1 && s.n_models == 2,
              "n %d eager %d no_host %d", s.n, s.n_eager, s.n_no_host);
    for (int i = 0; i < s.n; i++) {
        const dlp_host_sample *x = &s.s[i];
        int k = x->fold;
        CHECK(k == 0 || k == 1);
        if (k != 0 && k != 1) continue;
        CHECK_CLOSE(x->host_us, want[k], 1e-12);
        CHECK(isnan(x->graph_ms));
        CHECK(x->actual_ms == (k ? 20.0 : 40.0) &&
              x->eager_ms == (k ? 25.0 : 30.0));
        /* the host's source: o's own probe, b's batch median */
        CHECK(x->own_host == (k == 0));
        CHECK_CLOSE(x->actual_j, (k ? 250.0 * 20 : 400.0 * 40) / 1e3, 1e-12);
        CHECK_CLOSE(x->energy_j, (k ? 200.0 * 25 : 300.0 * 30) / 1e3, 1e-12);
        CHECK(x->power_w == (k ? 200.0 : 300.0));   /* the predicted power */
        CHECK_CLOSE(x->batch_host_us, level[k], 1e-12);
    }
    /* --batch-host: each step's host the batch's level */
    CHECK(dlp_host_set_source(&s, DLP_HOST_SRC_BATCH, &err) == DLP_OK &&
          s.n == 2);
    for (int i = 0; i < s.n; i++)
        if (s.s[i].fold == 0 || s.s[i].fold == 1)
            CHECK_CLOSE(s.s[i].host_us, level[s.s[i].fold], 1e-12);
    dlp_host_set_free(&s);
    /* the inference reading finds nothing of it */
    CHECK(dlp_host_set_load(p, ds, "dippm+xgb", DLP_HOST_INFERENCE, &s,
                            &err) == DLP_ERR_NOT_FOUND);
    unlink(p);
    rmdir(dir);
    dlp_dataset_free(ds);
}

static double predict_mode(const char *dir, const char *mode,
                           const char *runtime, double host_us,
                           dlp_predict_result *r, dlp_status *st) {
    dlp_predictor_set *ps = NULL;
    dlp_model *mod = NULL;
    dlp_error err;
    *st = dlp_predictor_open(dir, &ps, &err);
    if (!*st) *st = dlp_model_open(RESNET, &mod, &err);
    if (!*st) {
        dlp_predict_config c;
        dlp_predict_config_init(&c);
        c.device = "H100";
        c.runtime = runtime;
        c.mode = mode;
        c.batch = 4;
        c.host_us = host_us;
        *st = dlp_predict(ps, mod, &c, r, &err);
    }
    dlp_model_free(mod);
    dlp_predictor_close(ps);
    return *st ? NAN : r->latency_ms.value;
}

static double predict_eager(const char *dir, const char *runtime,
                            double host_us, dlp_predict_result *r,
                            dlp_status *st) {
    return predict_mode(dir, "inference", runtime, host_us, r, st);
}

/* a temporary models directory (dir: a "/tmp/dlp_host_XXXXXX" buffer)
 * holding one roofline file, name, of mode with the targets' bits set;
 * false (a failed check) when it cannot be made */
static bool roofline_models_dir(char *dir, const char *name,
                                dlp_pred_mode mode, unsigned targets) {
    char p[256];
    dlp_error err;
    CHECK(mkdtemp(dir) != NULL);
    snprintf(p, sizeof p, "%s/%s", dir, name);
    bool ok = roofline_file_write(p, mode, targets, &err);
    CHECK_MSG(ok, "%s", err.msg);
    return ok;
}

/* --mode training --host-us: models/host-training.csv's factor on the
 * step, h = min(1, tau / step); refused without the file or with an
 * inference fit (no tau_ms) in its place */
static void test_predict_training(void) {
    char dir[] = "/tmp/dlp_host_XXXXXX", p[256], cmd[300];
    if (!roofline_models_dir(dir, "a_train.dlpm", DLP_MODE_TRAINING,
                             1u << DLP_T_TRAIN_STEP_MS))
        return;
    dlp_error err;
    dlp_predict_result r;
    dlp_status st;
    double step = predict_mode(dir, "training", NULL, 0, &r, &st);
    CHECK_MSG(st == DLP_OK && step > 0, "status %d", (int)st);
    predict_mode(dir, "training", NULL, 9, &r, &st);
    CHECK(st == DLP_ERR_NOT_FOUND);
    /* an inference host.csv does not serve training */
    snprintf(p, sizeof p, "%s/" DLP_HOST_FILE, dir);
    dlp_host_model m = {.beta = 0.8, .ref_us = 7.0};
    CHECK(dlp_host_save(p, &m, &err) == DLP_OK);
    predict_mode(dir, "training", NULL, 9, &r, &st);
    CHECK(st == DLP_ERR_NOT_FOUND);
    snprintf(p, sizeof p, "%s/" DLP_HOST_TRAINING_FILE, dir);
    m.tau_ms = step / 4;   /* h = 1/4 */
    m.host_mape = 11;
    CHECK(dlp_host_save(p, &m, &err) == DLP_OK);
    double slow = predict_mode(dir, "training", NULL, 14.0, &r, &st);
    CHECK(st == DLP_OK);
    CHECK_CLOSE(slow / step, pow(2, 0.25 * 0.8), 1e-9);
    CHECK_CLOSE(r.host_factor, slow / step, 1e-12);
    CHECK(r.latency_ms.err_pct == 11 && !strcmp(r.latency_ms.err_basis,
                                                 "heldout-host"));
    m.tau_ms = 4 * step;   /* h = 1 */
    CHECK(dlp_host_save(p, &m, &err) == DLP_OK);
    slow = predict_mode(dir, "training", NULL, 3.5, &r, &st);
    CHECK(st == DLP_OK);
    CHECK_CLOSE(slow / step, pow(0.5, 0.8), 1e-9);
    /* a power rule needs the step's predicted power: none in this
     * directory (a step-only file), refused rather than left as is */
    m.tau_ms = 0;
    m.power_lo_w = 200;
    m.power_hi_w = 400;
    CHECK(dlp_host_save(p, &m, &err) == DLP_OK);
    predict_mode(dir, "training", NULL, 14.0, &r, &st);
    CHECK(st == DLP_ERR_NOT_FOUND);
    m.power_lo_w = m.power_hi_w = 0;
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
    /* a file that predicts the power too: the rule's share from it, the
     * watts scaled from the H100's 700 W board to the fit's */
    strcpy(dir, "/tmp/dlp_host_XXXXXX");
    if (!roofline_models_dir(dir, "a_train.dlpm", DLP_MODE_TRAINING,
                             1u << DLP_T_TRAIN_STEP_MS |
                             1u << DLP_T_TRAIN_POWER_W))
        return;
    step = predict_mode(dir, "training", NULL, 0, &r, &st);
    double pw = r.power_w.value;
    CHECK_MSG(st == DLP_OK && pw > 0, "status %d", (int)st);
    snprintf(p, sizeof p, "%s/" DLP_HOST_TRAINING_FILE, dir);
    dlp_host_model q = {.beta = 0.8, .ref_us = 7.0, .power_lo_w = pw / 2,
                        .power_hi_w = 1.5 * pw, .power_tdp_w = 700};
    CHECK(dlp_host_save(p, &q, &err) == DLP_OK);   /* h = 1/2 */
    slow = predict_mode(dir, "training", NULL, 14.0, &r, &st);
    CHECK(st == DLP_OK);
    CHECK_CLOSE(slow / step, pow(2, 0.5 * 0.8), 1e-9);
    q.power_tdp_w = 350;   /* P reads as half: h = (1.5 - 0.5) / 1 = 1 */
    CHECK(dlp_host_save(p, &q, &err) == DLP_OK);
    slow = predict_mode(dir, "training", NULL, 14.0, &r, &st);
    CHECK(st == DLP_OK);
    CHECK_CLOSE(slow / step, pow(2, 0.8), 1e-9);
    unlink(p);
    /* a training fit in the inference file's place fails the open */
    snprintf(p, sizeof p, "%s/" DLP_HOST_FILE, dir);
    m.tau_ms = 20;
    CHECK(dlp_host_save(p, &m, &err) == DLP_OK);
    dlp_predictor_set *ps = NULL;
    CHECK(dlp_predictor_open(dir, &ps, &err) == DLP_ERR_FORMAT);
    CHECK(strstr(err.msg, DLP_HOST_FILE) != NULL &&
          strstr(err.msg, "tau_ms") != NULL);
    m.tau_ms = 0;
    CHECK(dlp_host_save(p, &m, &err) == DLP_OK);
    snprintf(p, sizeof p, "%s/" DLP_HOST_TRAINING_FILE, dir);
    /* a training file without tau_ms fails the open, naming it */
    CHECK(dlp_host_save(p, &m, &err) == DLP_OK);
    CHECK(dlp_predictor_open(dir, &ps, &err) == DLP_ERR_FORMAT);
    CHECK(strstr(err.msg, DLP_HOST_TRAINING_FILE) != NULL);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
}

static void test_predict(void) {
    char dir[] = "/tmp/dlp_host_XXXXXX", p[256], cmd[300];
    if (!roofline_models_dir(dir, "a_inf.dlpm", DLP_MODE_INFERENCE,
                             1u << DLP_T_INF_LATENCY_MS |
                             1u << DLP_T_INF_ENERGY_J))
        return;
    dlp_error err;
    dlp_predict_result r;
    dlp_status st;
    double e = predict_eager(dir, "eager", 0, &r, &st);
    double ej = r.energy_j.value, epw = r.power_w.value;
    CHECK(r.energy_j.valid && ej > 0 && r.host_energy_factor == 1);
    double g = predict_eager(dir, "graph", 0, &r, &st);
    CHECK(st == DLP_OK && e > g && g > 0 && r.host_factor == 1);
    /* no host.csv: refused */
    predict_eager(dir, "eager", 9, &r, &st);
    CHECK(st == DLP_ERR_NOT_FOUND);
    snprintf(p, sizeof p, "%s/" DLP_HOST_FILE, dir);
    dlp_host_model m = {0.8, 7.0, 10, 5, 5, 20, 15, 0.5, 10, 18, 13, 0, 0, 0,
                        0, 0, 0, 0, 0};
    CHECK(dlp_host_save(p, &m, &err) == DLP_OK);
    double at_ref = predict_eager(dir, "eager", 7.0, &r, &st);
    CHECK(st == DLP_OK);
    CHECK_CLOSE(at_ref, e, 1e-12);
    double slow = predict_eager(dir, "eager", 14.0, &r, &st);
    CHECK(st == DLP_OK && r.host_us == 14.0);
    CHECK_CLOSE(slow / e, pow(2, (1 - g / e) * 0.8), 1e-9);
    CHECK_CLOSE(r.host_factor, slow / e, 1e-12);
    CHECK(r.latency_ms.err_pct == 15 && !strcmp(r.latency_ms.err_basis,
                                                 "heldout-host"));
    CHECK_CLOSE(r.throughput_per_s.value, 4 / slow * 1e3, 1e-12);
    /* energy: x (1 + gamma (f - 1)), its held-out error the file's; power
     * what is left of the blind one: (1 + gamma (f - 1)) / f */
    double f = slow / e;
    CHECK_CLOSE(r.host_energy_factor, 1 + 0.5 * (f - 1), 1e-12);
    CHECK_CLOSE(r.energy_j.value, ej * (1 + 0.5 * (f - 1)), 1e-9 * ej);
    CHECK_CLOSE(r.power_w.value, epw * (1 + 0.5 * (f - 1)) / f, 1e-9 * epw);
    CHECK(r.energy_j.err_pct == 13 && !strcmp(r.energy_j.err_basis,
                                               "heldout-host"));
    /* a file that measured its fit at the host's level reports that */
    m.level_mape = 17;
    m.energy_level_mape = 14;
    CHECK(dlp_host_save(p, &m, &err) == DLP_OK);
    predict_eager(dir, "eager", 14.0, &r, &st);
    CHECK(st == DLP_OK && r.latency_ms.err_pct == 17 &&
          !strcmp(r.latency_ms.err_basis, "heldout-host-level") &&
          r.energy_j.err_pct == 14 &&
          !strcmp(r.energy_j.err_basis, "heldout-host-level"));
    m.level_mape = m.energy_level_mape = 0;
    CHECK(dlp_host_save(p, &m, &err) == DLP_OK);
    /* refusals: not eager, out of range */
    predict_eager(dir, "graph", 9, &r, &st);
    CHECK(st == DLP_ERR_ARG);
    predict_eager(dir, "eager", 0.05, &r, &st);
    CHECK(st == DLP_ERR_ARG);
    predict_eager(dir, "eager", 5000, &r, &st);
    CHECK(st == DLP_ERR_ARG);
    predict_eager(dir, "eager", NAN, &r, &st);
    CHECK(st == DLP_ERR_ARG);
    /* a malformed host file fails the open, naming it */
    write_text(p, "format,dlperf-host-1\nbeta,1\n");
    dlp_predictor_set *ps = NULL;
    CHECK(dlp_predictor_open(dir, &ps, &err) == DLP_ERR_FORMAT);
    CHECK(strstr(err.msg, DLP_HOST_FILE) != NULL);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
}

int main(void) {
    RUN(test_factor);
    RUN(test_fit_recovers);
    RUN(test_fit_training);
    RUN(test_fit_training_power);
    RUN(test_fit_two_sided);
    RUN(test_apply);
    RUN(test_energy);
    RUN(test_fit_refuses);
    RUN(test_file);
    RUN(test_replicates);
    RUN(test_replicates_training);
    RUN(test_mode_names);
    RUN(test_join_with_data);
    RUN(test_join_training);
    RUN(test_join_fresh);
    RUN(test_predict);
    RUN(test_predict_training);
    return CHECK_DONE();
}
