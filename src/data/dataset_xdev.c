/*
 * dataset_xdev.c — the host side of the eager runtime's labels: how well
 * two cards' labels of the same configuration agree once the cards' own
 * speed is taken out ("cross_device"), and how eager latency follows the
 * host probe host_us within a batch ("host_probe").
 *
 * A configuration (graph, precision, batch, seq, height, width) labeled
 * on two devices A and B under both runtimes gives
 *     d = ln(eager_A / eager_B) - ln(graph_A / graph_B),
 * where a label is the mean of its reps. The CUDA-graph ratio is the GPUs'
 * speed ratio (rep to rep it agrees within ~1%), so d is what the eager
 * runtime adds beyond it: the hosts the two labels were measured on (CPU,
 * its load, the Python dispatch) and the eager runtime's own noise. Each
 * card's labels come from other collection batches, so other machines.
 * Pairs are split by how host-bound the configuration is, h = the smaller
 * of eager / graph over the two cards: "gpu_bound" h < 1.2, "mixed"
 * 1.2 <= h < 2, "host_bound" h >= 2. Per class: the pairs and the median,
 * p90 and mean of |exp(d) - 1|, comparable to the rep-to-rep noise floor,
 * and "floor": the mean of (|exp(d/2) - 1| + |exp(-d/2) - 1|) / 2, the
 * relative error on the two labels of a prediction at their geometric
 * middle. A prediction that knows the card but not the host, and whose
 * eager ratio between the cards is their CUDA-graph ratio, is as far in
 * log from the two labels as |d| at least (|ln p - ln a| + |ln p - ln b|
 * >= |ln a - ln b| with the GPU ratio divided out), so the middle is the
 * best it can do on such a pair.
 *
 * "host_probe": within one batch, the rows that carry host_us (the host's
 * dispatch time per eager op, probed around each eager timing, since
 * batch h12c): per class of the configuration on its own card, over its
 * rep 0 / rep 1 pairs, the correlation and least-squares slope of
 * ln(eager_0 / eager_1) on ln(host_us_0 / host_us_1). A slope near 1 with
 * a high correlation says eager latency moves with the host's dispatch
 * speed, i.e. host_us is the input a host-aware eager prediction needs.
 */
#include "data/dataset.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define XDEV_MAX_DEVICES 16

enum { XDEV_GPU, XDEV_MIXED, XDEV_HOST, XDEV_CLASSES };
static const char *const XDEV_NAME[XDEV_CLASSES] = {"gpu_bound", "mixed",
                                                    "host_bound"};

static int cmp_int64(int64_t a, int64_t b) { return (a > b) - (a < b); }

/* configuration, then device, then runtime */
static int xdev_cmp(const void *pa, const void *pb) {
    const dlp_inference_row *a = *(const dlp_inference_row *const *)pa;
    const dlp_inference_row *b = *(const dlp_inference_row *const *)pb;
    int c;
    if ((c = strcmp(a->c.hash, b->c.hash)) || (c = strcmp(a->precision, b->precision)) ||
        (c = cmp_int64(a->batch, b->batch)) || (c = cmp_int64(a->seq, b->seq)) ||
        (c = cmp_int64(a->height, b->height)) || (c = cmp_int64(a->width, b->width)) ||
        (c = strcmp(a->c.device, b->c.device)))
        return c;
    return strcmp(a->runtime, b->runtime);
}

static bool same_config(const dlp_inference_row *a, const dlp_inference_row *b) {
    return !strcmp(a->c.hash, b->c.hash) && !strcmp(a->precision, b->precision) &&
           a->batch == b->batch && a->seq == b->seq && a->height == b->height &&
           a->width == b->width;
}

typedef struct {
    const char *device;
    double sum[2];   /* eager, graph */
    int n[2];
    const dlp_inference_row *eager[2];   /* by rep */
} xdev_dev;

typedef struct {   /* sums for host_probe, per class */
    double n, x, y, xx, yy, xy;
} xdev_fit;

static int xdev_class(double h) {
    return h < 1.2 ? XDEV_GPU : h < 2 ? XDEV_MIXED : XDEV_HOST;
}

/* the rep pairs of one configuration's devices with host_us on both */
static void xdev_probe(const xdev_dev *d, int nd, xdev_fit *fit) {
    for (int i = 0; i < nd; i++) {
        const dlp_inference_row *a = d[i].eager[0], *b = d[i].eager[1];
        if (!a || !b || !d[i].n[1] || !(a->host_us > 0) || !(b->host_us > 0))
            continue;
        double h = (d[i].sum[0] / d[i].n[0]) / (d[i].sum[1] / d[i].n[1]);
        double x = log(a->host_us / b->host_us), y = log(a->latency_ms / b->latency_ms);
        if (!isfinite(h) || !isfinite(x) || !isfinite(y)) continue;
        xdev_fit *f = &fit[xdev_class(h)];
        f->n += 1, f->x += x, f->y += y;
        f->xx += x * x, f->yy += y * y, f->xy += x * y;
    }
}

typedef struct {
    double *v[XDEV_CLASSES];
    size_t n[XDEV_CLASSES];
    double floor[XDEV_CLASSES];   /* sums */
} xdev_acc;

/* the pairs of one configuration's devices d[0..nd-1] */
static void xdev_pairs(const xdev_dev *d, int nd, xdev_acc *acc) {
    for (int i = 0; i < nd; i++)
        for (int j = i + 1; j < nd; j++) {
            if (!d[i].n[0] || !d[i].n[1] || !d[j].n[0] || !d[j].n[1]) continue;
            double ea = d[i].sum[0] / d[i].n[0], ga = d[i].sum[1] / d[i].n[1];
            double eb = d[j].sum[0] / d[j].n[0], gb = d[j].sum[1] / d[j].n[1];
            double dd = log(ea / eb) - log(ga / gb);
            double h = fmin(ea / ga, eb / gb);
            if (!isfinite(dd) || !isfinite(h)) continue;
            int k = xdev_class(h);
            acc->v[k][acc->n[k]++] = fabs(expm1(dd));
            acc->floor[k] += (fabs(expm1(dd / 2)) + fabs(expm1(-dd / 2))) / 2;
        }
}

static bool add_fit(cJSON *o, const char *name, const xdev_fit *f) {
    cJSON *c = cJSON_AddObjectToObject(o, name);
    double vx = f->n ? f->xx / f->n - (f->x / f->n) * (f->x / f->n) : NAN;
    double vy = f->n ? f->yy / f->n - (f->y / f->n) * (f->y / f->n) : NAN;
    double cv = f->n ? f->xy / f->n - (f->x / f->n) * (f->y / f->n) : NAN;
    bool some = f->n >= 3 && vx > 0 && vy > 0;
    return c && cJSON_AddNumberToObject(c, "pairs", f->n) &&
           cJSON_AddNumberToObject(c, "corr", some ? cv / sqrt(vx * vy) : NAN) &&
           cJSON_AddNumberToObject(c, "slope", some ? cv / vx : NAN);
}

bool dlp_dataset_eager_host(const dlp_dataset *ds, cJSON *kind) {
    size_t n = ds->ninf, m = 0;
    const dlp_inference_row **row = malloc((n ? n : 1) * sizeof *row);
    xdev_acc acc = {{NULL}, {0}, {0}};
    xdev_fit fit[XDEV_CLASSES];
    memset(fit, 0, sizeof fit);
    cJSON *o = cJSON_AddObjectToObject(kind, "cross_device");
    cJSON *hp = cJSON_AddObjectToObject(kind, "host_probe");
    for (int k = 0; k < XDEV_CLASSES; k++)
        acc.v[k] = malloc((n ? n : 1) * sizeof *acc.v[k]);
    bool ok = row && o && hp && acc.v[0] && acc.v[1] && acc.v[2];
    for (size_t i = 0; ok && i < n; i++) {
        const dlp_inference_row *r = &ds->inf[i];
        if (r->c.flagged || !(r->latency_ms > 0) || !isfinite(r->latency_ms) ||
            (strcmp(r->runtime, "eager") && strcmp(r->runtime, "graph")))
            continue;
        row[m++] = r;
    }
    if (ok) qsort(row, m, sizeof *row, xdev_cmp);
    xdev_dev d[XDEV_MAX_DEVICES];
    for (size_t a = 0; ok && a < m;) {
        size_t b = a;
        int nd = 0;
        bool full = false;   /* more devices than d[] holds: the rest skipped */
        while (b < m && same_config(row[a], row[b])) {
            const dlp_inference_row *r = row[b++];
            if (!nd || strcmp(d[nd - 1].device, r->c.device)) {
                full = nd == XDEV_MAX_DEVICES;
                if (full) continue;
                memset(&d[nd], 0, sizeof d[nd]);
                d[nd++].device = r->c.device;
            }
            if (full) continue;
            int rt = strcmp(r->runtime, "eager") != 0;
            d[nd - 1].sum[rt] += r->latency_ms;
            d[nd - 1].n[rt]++;
            if (!rt && (r->c.rep == 0 || r->c.rep == 1)) d[nd - 1].eager[r->c.rep] = r;
        }
        xdev_pairs(d, nd, &acc);
        xdev_probe(d, nd, fit);
        a = b;
    }
    for (int k = 0; ok && k < XDEV_CLASSES; k++) {
        qsort(acc.v[k], acc.n[k], sizeof *acc.v[k], dlp_cmp_double);
        double sum = 0;
        for (size_t i = 0; i < acc.n[k]; i++) sum += acc.v[k][i];
        cJSON *c = cJSON_AddObjectToObject(o, XDEV_NAME[k]);
        ok = c && cJSON_AddNumberToObject(c, "pairs", (double)acc.n[k]) &&
             cJSON_AddNumberToObject(c, "median", dlp_quantile_sorted(acc.v[k], acc.n[k], 0.5)) &&
             cJSON_AddNumberToObject(c, "p90", dlp_quantile_sorted(acc.v[k], acc.n[k], 0.9)) &&
             cJSON_AddNumberToObject(c, "mean", acc.n[k] ? sum / (double)acc.n[k] : NAN) &&
             cJSON_AddNumberToObject(c, "floor", acc.n[k] ? acc.floor[k] / (double)acc.n[k] : NAN) &&
             add_fit(hp, XDEV_NAME[k], &fit[k]);
    }
    free(row);
    for (int k = 0; k < XDEV_CLASSES; k++) free(acc.v[k]);
    return ok;
}
