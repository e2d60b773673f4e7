/* eval_split.c — train/validation/test splits of the examples (eval.h):
 * random 70/15/15, Monte-Carlo 70/30 per family over 5 seeds, 5-fold
 * leave-models-out (grouped by the `model` column so the variants of one
 * model never straddle a cut), leave-one-family-out, and 5-fold
 * leave-graphs-out (grouped by graph: a held-out variant's other
 * configurations are never in training, its siblings are; the NAS case of
 * predicting new variants of a known architecture). Deterministic in the
 * seed (xoshiro256** from src/nn). */
#include "eval.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const NAMES[DLP_SPLIT_COUNT] = {"random", "mc", "lmo",
                                                   "lofo", "lgo"};

const char *dlp_split_name(dlp_split_kind k) {
    if (k == DLP_SPLIT_NONE) return "none";
    return (unsigned)k < DLP_SPLIT_COUNT ? NAMES[k] : NULL;
}

dlp_status dlp_split_parse(const char *s, dlp_split_kind *out, dlp_error *err) {
    for (int k = 0; s && k < DLP_SPLIT_COUNT; k++)
        if (!strcasecmp(s, NAMES[k])) { *out = (dlp_split_kind)k; return DLP_OK; }
    return dlp_fail(err, DLP_ERR_ARG, "unknown split '%.40s'; known: random "
                    "(70/15/15), mc (Monte-Carlo 70/30 per family, 5 seeds), "
                    "lmo (5-fold leave-models-out), lofo "
                    "(leave-one-family-out), lgo (5-fold leave-graphs-out)",
                    s ? s : "");
}

void dlp_folds_free(dlp_fold *folds, int n_folds) {
    for (int i = 0; folds && i < n_folds; i++) {
        free(folds[i].train); free(folds[i].val); free(folds[i].test);
    }
    free(folds);
}

static bool fold_alloc(dlp_fold *f, int n) {
    f->train = malloc((size_t)(n ? n : 1) * sizeof *f->train);
    f->val = malloc((size_t)(n ? n : 1) * sizeof *f->val);
    f->test = malloc((size_t)(n ? n : 1) * sizeof *f->test);
    f->ntr = f->nva = f->nte = 0;
    return f->train && f->val && f->test;
}

/* Moves ~frac of the training part's groups (or examples when group is
 * NULL) into val. Keeps at least one group in train. */
static void carve_val(dlp_fold *f, const int *group, int n_groups,
                      double frac, dlp_nn_rng *r) {
    if (f->ntr < 4) return;
    if (!group) {
        dlp_nn_rng_shuffle(r, f->train, f->ntr);
        int nv = (int)(f->ntr * frac + 0.5);
        if (nv < 1) nv = 1;
        memcpy(f->val, f->train + f->ntr - nv, (size_t)nv * sizeof *f->val);
        f->nva = nv;
        f->ntr -= nv;
        return;
    }
    char *in_tr = calloc((size_t)n_groups, 1);
    int32_t *gl = malloc((size_t)n_groups * sizeof *gl);
    if (!in_tr || !gl) { free(in_tr); free(gl); return; }
    int ng = 0;
    for (int i = 0; i < f->ntr; i++)
        if (!in_tr[group[f->train[i]]]) {
            in_tr[group[f->train[i]]] = 1;
            gl[ng++] = group[f->train[i]];
        }
    if (ng >= 2) {
        dlp_nn_rng_shuffle(r, gl, ng);
        int nvg = (int)(ng * frac + 0.5);
        if (nvg < 1) nvg = 1;
        if (nvg >= ng) nvg = ng - 1;
        memset(in_tr, 0, (size_t)n_groups);
        for (int k = 0; k < nvg; k++) in_tr[gl[k]] = 1;   /* 1 = to val */
        int k = 0;
        for (int i = 0; i < f->ntr; i++) {
            int32_t e = f->train[i];
            if (in_tr[group[e]]) f->val[f->nva++] = e;
            else f->train[k++] = e;
        }
        f->ntr = k;
    }
    free(in_tr); free(gl);
}

dlp_status dlp_split_make(dlp_split_kind kind, const int *group,
                          const int *family, int n, uint64_t seed,
                          dlp_fold **folds, int *n_folds, dlp_error *err) {
    *folds = NULL;
    *n_folds = 0;
    if (n < 2) return dlp_fail(err, DLP_ERR_ARG, "need at least 2 examples to "
                               "split, have %d", n);
    int ng = 0, nf = 0;
    for (int i = 0; i < n; i++) {
        if (group[i] + 1 > ng) ng = group[i] + 1;
        if (family[i] + 1 > nf) nf = family[i] + 1;
    }
    dlp_nn_rng r;
    dlp_nn_rng_seed(&r, seed);
    int32_t *perm = malloc((size_t)n * sizeof *perm);
    int32_t *gperm = malloc((size_t)(ng + nf + 1) * sizeof *gperm);
    if (!perm || !gperm) {
        free(perm); free(gperm);
        return dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    }
    dlp_fold *F = NULL;
    int K = 0;
    dlp_status st = DLP_OK;
    if (kind == DLP_SPLIT_RANDOM) {
        K = 1;
        F = calloc(1, sizeof *F);
        if (!F || !fold_alloc(&F[0], n)) { st = DLP_ERR_NOMEM; goto done; }
        snprintf(F[0].name, sizeof F[0].name, "random 70/15/15");
        for (int i = 0; i < n; i++) perm[i] = i;
        dlp_nn_rng_shuffle(&r, perm, n);
        int ntr = (int)(0.70 * n + 0.5), nva = (int)(0.15 * n + 0.5);
        if (ntr < 1) ntr = 1;
        if (ntr + nva >= n) nva = n - ntr - 1 > 0 ? n - ntr - 1 : 0;
        for (int i = 0; i < n; i++) {
            if (i < ntr) F[0].train[F[0].ntr++] = perm[i];
            else if (i < ntr + nva) F[0].val[F[0].nva++] = perm[i];
            else F[0].test[F[0].nte++] = perm[i];
        }
    } else if (kind == DLP_SPLIT_MC) {
        K = 5;
        F = calloc((size_t)K, sizeof *F);
        if (!F) { st = DLP_ERR_NOMEM; goto done; }
        for (int s = 0; s < K; s++) {
            if (!fold_alloc(&F[s], n)) { st = DLP_ERR_NOMEM; goto done; }
            snprintf(F[s].name, sizeof F[s].name, "seed %d", s);
            dlp_nn_rng rs;
            dlp_nn_rng_seed(&rs, seed * 1000003u + (uint64_t)s);
            for (int fam = 0; fam < nf; fam++) {
                int m = 0;
                for (int i = 0; i < n; i++)
                    if (family[i] == fam) perm[m++] = i;
                dlp_nn_rng_shuffle(&rs, perm, m);
                int ntr = (int)(0.70 * m + 0.5);
                if (m >= 2 && ntr == m) ntr = m - 1;
                for (int i = 0; i < m; i++) {
                    if (i < ntr) F[s].train[F[s].ntr++] = perm[i];
                    else F[s].test[F[s].nte++] = perm[i];
                }
            }
            carve_val(&F[s], NULL, 0, 0.15, &rs);
        }
    } else if (kind == DLP_SPLIT_LMO || kind == DLP_SPLIT_LGO) {
        int present = 0;
        char *seen = calloc((size_t)ng, 1);
        if (!seen) { st = DLP_ERR_NOMEM; goto done; }
        for (int i = 0; i < n; i++)
            if (!seen[group[i]]) { seen[group[i]] = 1; gperm[present++] = group[i]; }
        free(seen);
        if (present < 2) {
            const char *what = kind == DLP_SPLIT_LGO ? "graphs" : "models";
            st = dlp_fail(err, DLP_ERR_ARG, "leave-%s-out needs at least 2 "
                          "%s, the data has %d", what, what, present);
            goto done;
        }
        K = present < 5 ? present : 5;
        /* sort the model list so the shuffle only depends on the seed */
        for (int a = 1; a < present; a++)
            for (int b = a; b > 0 && gperm[b - 1] > gperm[b]; b--) {
                int32_t t = gperm[b]; gperm[b] = gperm[b - 1]; gperm[b - 1] = t;
            }
        dlp_nn_rng_shuffle(&r, gperm, present);
        int *gfold = malloc((size_t)ng * sizeof *gfold);
        F = calloc((size_t)K, sizeof *F);
        if (!gfold || !F) { free(gfold); st = DLP_ERR_NOMEM; goto done; }
        for (int k = 0; k < present; k++) gfold[gperm[k]] = k % K;
        for (int k = 0; k < K && !st; k++) {
            if (!fold_alloc(&F[k], n)) { st = DLP_ERR_NOMEM; break; }
            snprintf(F[k].name, sizeof F[k].name, "fold %d", k);
            for (int i = 0; i < n; i++) {
                if (gfold[group[i]] == k) F[k].test[F[k].nte++] = i;
                else F[k].train[F[k].ntr++] = i;
            }
            carve_val(&F[k], group, ng, 0.15, &r);
        }
        free(gfold);
    } else if (kind == DLP_SPLIT_LOFO) {
        int present = 0;
        for (int fam = 0; fam < nf; fam++) {
            bool any = false;
            for (int i = 0; i < n && !any; i++) any = family[i] == fam;
            if (any) gperm[present++] = fam;
        }
        if (present < 2) {
            st = dlp_fail(err, DLP_ERR_ARG, "leave-one-family-out needs at least "
                          "2 families, the data has %d", present);
            goto done;
        }
        K = present;
        F = calloc((size_t)K, sizeof *F);
        if (!F) { st = DLP_ERR_NOMEM; goto done; }
        for (int k = 0; k < K && !st; k++) {
            if (!fold_alloc(&F[k], n)) { st = DLP_ERR_NOMEM; break; }
            snprintf(F[k].name, sizeof F[k].name, "family %d", gperm[k]);
            for (int i = 0; i < n; i++) {
                if (family[i] == gperm[k]) F[k].test[F[k].nte++] = i;
                else F[k].train[F[k].ntr++] = i;
            }
            carve_val(&F[k], group, ng, 0.15, &r);
        }
    } else {
        st = dlp_fail(err, DLP_ERR_ARG, "bad split kind %d", (int)kind);
    }
done:
    free(perm);
    free(gperm);
    if (st == DLP_ERR_NOMEM) st = dlp_fail(err, DLP_ERR_NOMEM, "out of memory");
    if (st) { dlp_folds_free(F, K); return st; }
    *folds = F;
    *n_folds = K;
    return DLP_OK;
}
