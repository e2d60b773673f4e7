/*
 * feat_convws.c — the shape of a dense 2-D convolution as the fp32
 * workspace model sees it (feat.h: dlp_conv_shape), from a graph node
 * (the walk's records) or from a probe's call (data/probes, read by
 * src/data/dataset_probes.c): one feature function for both, so that the
 * model is trained and applied on the same numbers.
 */
#include "feat.h"

#include <math.h>
#include <string.h>

static float lg2(double v) { return (float)log2(v > 0 ? v : 1e-30); }

void dlp_conv_shape_features(const dlp_conv_shape *s, float *x) {
    double io_mib = 4.0 * ((double)s->n * s->c * s->h * s->w +
                           (double)s->n * s->k * s->ho * s->wo) / 1048576.0;
    x[0] = lg2((double)s->n);
    x[1] = lg2((double)s->c);
    x[2] = lg2((double)s->h);
    x[3] = lg2((double)s->w);
    x[4] = lg2((double)s->k);
    x[5] = (float)s->kh;
    x[6] = (float)s->kw;
    x[7] = (float)s->sh;
    x[8] = (float)s->sw;
    x[9] = (float)s->dh;
    x[10] = (float)s->ph;
    x[11] = s->cl ? 1.0f : 0.0f;
    x[12] = lg2((double)s->ho);
    x[13] = lg2((double)s->wo);
    x[14] = lg2(io_mib + 1e-6);
    x[15] = lg2((double)s->n * s->h * s->w + 1);
    x[16] = lg2((double)s->c * s->k * s->kh * s->kw);
    x[17] = lg2((double)s->n * s->ho * s->wo * s->k * s->c * s->kh * s->kw);
    /* the FFT algorithm's workspace: 53% of the probed fp32 workspace
     * bytes are within x0.8-1.25 of it (thirty-ninth session) */
    double ph = 1, pw = 1;
    while (ph < (double)(s->h + 2 * s->ph)) ph *= 2;
    while (pw < (double)(s->w + 2 * s->ph)) pw *= 2;
    double fft_mib = ((double)s->n * s->c + (double)s->k * s->c +
                      (double)s->n * s->k) * ph * (pw / 2 + 1) * 16.0 / 1048576.0;
    x[18] = lg2(fft_mib);
    x[19] = lg2(fft_mib / (io_mib + 1e-6));
}

/* ints[i] of attribute name, def when absent or shorter. */
static int64_t attr_at(const dlp_node *n, const char *name, int i, int64_t def) {
    const dlp_attr *a = dlp_node_attr(n, name);
    if (!a || a->type != DLP_ATTR_INTS || a->n <= i) return def;
    return a->ints[i];
}

/* Whether a shape's dims are all known and positive. */
static bool known4(const dlp_shape *s) {
    if (s->rank != 4) return false;
    for (int i = 0; i < 4; i++)
        if (s->dims[i].value <= 0) return false;
    return true;
}

bool dlp_feat_conv_shape(const dlp_graph *g, const dlp_node *n,
                         dlp_conv_shape *o) {
    if (strcmp(n->op_type, "Conv") || n->n_inputs < 2 || n->inputs[0] < 0 ||
        n->inputs[1] < 0 || n->n_outputs < 1 || n->outputs[0] < 0 ||
        dlp_node_attr_int(n, "group", 1) != 1)
        return false;
    const dlp_shape *x = &g->values[n->inputs[0]].shape,
                    *w = &g->values[n->inputs[1]].shape,
                    *y = &g->values[n->outputs[0]].shape;
    if (!known4(x) || !known4(w) || !known4(y)) return false;
    memset(o, 0, sizeof *o);
    o->n = x->dims[0].value; o->c = x->dims[1].value;
    o->h = x->dims[2].value; o->w = x->dims[3].value;
    o->k = w->dims[0].value; o->kh = w->dims[2].value; o->kw = w->dims[3].value;
    o->ho = y->dims[2].value; o->wo = y->dims[3].value;
    o->sh = attr_at(n, "strides", 0, 1);
    o->sw = attr_at(n, "strides", 1, o->sh);
    o->dh = attr_at(n, "dilations", 0, 1);
    o->ph = attr_at(n, "pads", 0, 0);
    /* channels-last input: PyTorch's NHWC permute back to NCHW (a
     * LayerNorm2d's, ConvNeXt's downsampling) hands the conv a view whose
     * strides are channels-last; a 1x1 spatial input is both layouts */
    int p = g->values[n->inputs[0]].producer;
    const dlp_node *pn = p >= 0 ? &g->nodes[p] : NULL;
    o->cl = (o->h == 1 && o->w == 1) ||
            (pn && !strcmp(pn->op_type, "Transpose") &&
             attr_at(pn, "perm", 0, -1) == 0 && attr_at(pn, "perm", 1, -1) == 3 &&
             attr_at(pn, "perm", 2, -1) == 1 && attr_at(pn, "perm", 3, -1) == 2);
    return true;
}
