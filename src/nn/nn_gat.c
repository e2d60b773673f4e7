/* nn_gat.c — GAT convolution (Velickovic et al., PyG GATConv semantics):
 * multi-head additive attention with LeakyReLU, softmax over each node's
 * in-neighbourhood plus one self-loop, attention dropout, heads concatenated
 * or averaged, then a bias. Forward and backward side by side. */
#include "nn.h"

#include <math.h>
#include <string.h>

int dlp_nn_gat_out_dim(dlp_nn_gat_cfg c) { return c.concat ? c.H * c.C : c.C; }

typedef struct {
    nn_real *out;
    dlp_nn_gat_saved s;
    const nn_real *bias, *ae;
    const dlp_nn_graph *g;
    dlp_nn_gat_cfg c;
    /* backward */
    const nn_real *dout;
    nn_real *dh, *de, *das, *dad;
} nn_gat_ctx;

static inline nn_real leaky(nn_real z, nn_real s) { return z > 0 ? z : s * z; }
/* edge logit of slot k, head h (0 without edge logits) */
#define AE(ctx, k, h) ((ctx)->ae ? (ctx)->ae[(size_t)(k) * (ctx)->c.H + (h)] : 0)

/* slot of node i's neighbour at in-CSR position p, or the self slot */
static void gat_fwd_range(void *vctx, int lo, int hi) {
    nn_gat_ctx *x = vctx;
    const dlp_nn_graph *g = x->g;
    const int H = x->c.H, C = x->c.C, E = g->n_edges, HC = H * C;
    const int OD = dlp_nn_gat_out_dim(x->c);
    dlp_nn_gat_saved s = x->s;
    for (int i = lo; i < hi; i++) {
        nn_real *o = x->out + (size_t)i * OD;
        memset(o, 0, (size_t)OD * sizeof *o);
        for (int h = 0; h < H; h++) {
            nn_real adi = s.ad[(size_t)i * H + h];
            /* max for a stable softmax */
            nn_real m = leaky(s.as[(size_t)i * H + h] + adi + AE(x, E + i, h), x->c.slope);
            for (int p = g->in_ptr[i]; p < g->in_ptr[i + 1]; p++) {
                int j = g->in_src[p];
                if (j == i) continue;
                nn_real z = leaky(s.as[(size_t)j * H + h] + adi + AE(x, p, h), x->c.slope);
                if (z > m) m = z;
            }
            double sum = 0;
            nn_real *aself = &s.alpha[((size_t)E + i) * H + h];
            *aself = (nn_real)exp(leaky(s.as[(size_t)i * H + h] + adi + AE(x, E + i, h),
                                        x->c.slope) - m);
            sum += *aself;
            for (int p = g->in_ptr[i]; p < g->in_ptr[i + 1]; p++) {
                int j = g->in_src[p];
                nn_real *a = &s.alpha[(size_t)p * H + h];
                if (j == i) { *a = 0; continue; }
                *a = (nn_real)exp(leaky(s.as[(size_t)j * H + h] + adi + AE(x, p, h),
                                        x->c.slope) - m);
                sum += *a;
            }
            nn_real inv = (nn_real)(1.0 / sum);
            nn_real hs = x->c.concat ? 1 : (nn_real)1 / (nn_real)H;
            nn_real *oh = o + (x->c.concat ? (size_t)h * C : 0);
            *aself *= inv;
            nn_real w = *aself * (s.mask ? s.mask[((size_t)E + i) * H + h] : 1) * hs;
            const nn_real *hi_ = s.h + (size_t)i * HC + (size_t)h * C;
            for (int k = 0; k < C; k++) oh[k] += w * hi_[k];
            for (int p = g->in_ptr[i]; p < g->in_ptr[i + 1]; p++) {
                int j = g->in_src[p];
                if (j == i) continue;
                nn_real *a = &s.alpha[(size_t)p * H + h];
                *a *= inv;
                w = *a * (s.mask ? s.mask[(size_t)p * H + h] : 1) * hs;
                const nn_real *hj = s.h + (size_t)j * HC + (size_t)h * C;
                for (int k = 0; k < C; k++) oh[k] += w * hj[k];
            }
        }
        if (x->bias)
            for (int k = 0; k < OD; k++) o[k] += x->bias[k];
    }
}

/* x[N,I], W[H*C,I], att_src/att_dst[H,C], bias[out_dim] -> out[N,out_dim] */
void dlp_nn_gat_forward(nn_real *out, dlp_nn_gat_saved s, const nn_real *x,
                        const nn_real *W, const nn_real *att_src,
                        const nn_real *att_dst, const nn_real *bias,
                        const nn_real *ae, const dlp_nn_graph *g,
                        dlp_nn_gat_cfg c, dlp_nn_rng *rng) {
    const int N = g->n_nodes, H = c.H, C = c.C, HC = H * C;
    dlp_nn_linear_forward(s.h, x, W, NULL, N, c.I, HC);
    for (int n = 0; n < N; n++)
        for (int h = 0; h < H; h++) {
            const nn_real *hv = s.h + (size_t)n * HC + (size_t)h * C;
            double a = 0, b = 0;
            for (int k = 0; k < C; k++) {
                a += (double)hv[k] * att_src[h * C + k];
                b += (double)hv[k] * att_dst[h * C + k];
            }
            s.as[(size_t)n * H + h] = (nn_real)a;
            s.ad[(size_t)n * H + h] = (nn_real)b;
        }
    size_t slots = ((size_t)g->n_edges + N) * H;
    if (s.mask) {
        if (rng && c.dropout > 0) {
            nn_real keep = (nn_real)1 / (1 - c.dropout);
            for (size_t k = 0; k < slots; k++)
                s.mask[k] = dlp_nn_rng_uniform(rng) < c.dropout ? 0 : keep;
        } else {
            for (size_t k = 0; k < slots; k++) s.mask[k] = 1;
        }
    }
    nn_gat_ctx ctx = {.out = out, .s = s, .bias = bias, .ae = ae, .g = g, .c = c};
    size_t work = ((size_t)N + (size_t)g->n_edges) * (size_t)HC;
    dlp_nn_parallel_for(dlp_nn_threads_for(work), N, gat_fwd_range, &ctx);
}

/* dO[i,h,:]: the gradient reaching head h's sum at node i */
static inline const nn_real *gat_dO(const nn_gat_ctx *x, int i, int h) {
    int OD = dlp_nn_gat_out_dim(x->c);
    return x->dout + (size_t)i * OD + (x->c.concat ? (size_t)h * x->c.C : 0);
}

/* per destination i: softmax and LeakyReLU backward into de[slot,h] and
 * dad[i,h] */
static void gat_bwd_dst_range(void *vctx, int lo, int hi) {
    nn_gat_ctx *x = vctx;
    const dlp_nn_graph *g = x->g;
    const int H = x->c.H, C = x->c.C, E = g->n_edges, HC = H * C;
    dlp_nn_gat_saved s = x->s;
    nn_real hs = x->c.concat ? 1 : (nn_real)1 / (nn_real)H;
    for (int i = lo; i < hi; i++)
        for (int h = 0; h < H; h++) {
            const nn_real *dO = gat_dO(x, i, h);
            nn_real adi = s.ad[(size_t)i * H + h];
            /* dalpha (pre-dropout) = mask * hs * dO . h_j; store in de */
            double dot_sum = 0; /* sum_t alpha_t dalpha_t */
            size_t ks = ((size_t)E + i) * H + h;
            {
                const nn_real *hv = s.h + (size_t)i * HC + (size_t)h * C;
                double d = 0;
                for (int k = 0; k < C; k++) d += (double)dO[k] * hv[k];
                d *= hs * (s.mask ? s.mask[ks] : 1);
                x->de[ks] = (nn_real)d;
                dot_sum += s.alpha[ks] * d;
            }
            for (int p = g->in_ptr[i]; p < g->in_ptr[i + 1]; p++) {
                int j = g->in_src[p];
                size_t kp = (size_t)p * H + h;
                if (j == i) { x->de[kp] = 0; continue; }
                const nn_real *hv = s.h + (size_t)j * HC + (size_t)h * C;
                double d = 0;
                for (int k = 0; k < C; k++) d += (double)dO[k] * hv[k];
                d *= hs * (s.mask ? s.mask[kp] : 1);
                x->de[kp] = (nn_real)d;
                dot_sum += s.alpha[kp] * d;
            }
            /* de = alpha (dalpha - dot_sum) * leaky'(z) */
            double dad = 0;
            {
                nn_real z = s.as[(size_t)i * H + h] + adi + AE(x, E + i, h);
                double v = s.alpha[ks] * (x->de[ks] - dot_sum);
                v *= z > 0 ? 1 : x->c.slope;
                x->de[ks] = (nn_real)v;
                dad += v;
            }
            for (int p = g->in_ptr[i]; p < g->in_ptr[i + 1]; p++) {
                int j = g->in_src[p];
                if (j == i) continue;
                size_t kp = (size_t)p * H + h;
                nn_real z = s.as[(size_t)j * H + h] + adi + AE(x, p, h);
                double v = s.alpha[kp] * (x->de[kp] - dot_sum);
                v *= z > 0 ? 1 : x->c.slope;
                x->de[kp] = (nn_real)v;
                dad += v;
            }
            x->dad[(size_t)i * H + h] = (nn_real)dad;
        }
}

/* per source j: dh[j] = sum over its out-edges of alpha_eff * dO[dst] plus
 * its self slot; das[j] = sum of de over the same slots */
static void gat_bwd_src_range(void *vctx, int lo, int hi) {
    nn_gat_ctx *x = vctx;
    const dlp_nn_graph *g = x->g;
    const int H = x->c.H, C = x->c.C, E = g->n_edges, HC = H * C;
    dlp_nn_gat_saved s = x->s;
    nn_real hs = x->c.concat ? 1 : (nn_real)1 / (nn_real)H;
    for (int j = lo; j < hi; j++)
        for (int h = 0; h < H; h++) {
            nn_real *dh = x->dh + (size_t)j * HC + (size_t)h * C;
            size_t ks = ((size_t)E + j) * H + h;
            nn_real w = s.alpha[ks] * (s.mask ? s.mask[ks] : 1) * hs;
            const nn_real *dO = gat_dO(x, j, h);
            for (int k = 0; k < C; k++) dh[k] = w * dO[k];
            double das = x->de[ks];
            for (int p = g->out_ptr[j]; p < g->out_ptr[j + 1]; p++) {
                int i = g->out_dst[p];
                if (i == j) continue;
                size_t kp = (size_t)g->out_eid[p] * H + h;
                w = s.alpha[kp] * (s.mask ? s.mask[kp] : 1) * hs;
                dO = gat_dO(x, i, h);
                for (int k = 0; k < C; k++) dh[k] += w * dO[k];
                das += x->de[kp];
            }
            x->das[(size_t)j * H + h] = (nn_real)das;
        }
}

void dlp_nn_gat_backward(nn_real *dx, nn_real *dW, nn_real *datt_src,
                         nn_real *datt_dst, nn_real *dbias, nn_real *dae,
                         nn_real *dh_ws, nn_real *de_ws, const nn_real *dout,
                         dlp_nn_gat_saved s, const nn_real *x,
                         const nn_real *W, const nn_real *att_src,
                         const nn_real *att_dst, const nn_real *ae,
                         const dlp_nn_graph *g, dlp_nn_gat_cfg c) {
    const int N = g->n_nodes, H = c.H, C = c.C, HC = H * C, E = g->n_edges;
    const int OD = dlp_nn_gat_out_dim(c);
    if (dbias)
        for (int n = 0; n < N; n++)
            for (int k = 0; k < OD; k++) dbias[k] += dout[(size_t)n * OD + k];
    nn_gat_ctx ctx = {.s = s, .ae = ae, .g = g, .c = c, .dout = dout, .dh = dh_ws,
                      .de = de_ws,
                      .das = de_ws + ((size_t)E + N) * H,
                      .dad = de_ws + ((size_t)E + 2 * (size_t)N) * H};
    size_t work = ((size_t)N + (size_t)E) * (size_t)HC;
    int nt = dlp_nn_threads_for(work);
    dlp_nn_parallel_for(nt, N, gat_bwd_dst_range, &ctx);
    dlp_nn_parallel_for(nt, N, gat_bwd_src_range, &ctx);
    if (dae) /* de holds d(loss)/d(logit) per slot; loop-edge slots are 0 */
        for (size_t k = 0; k < ((size_t)E + N) * H; k++) dae[k] += de_ws[k];
    /* attention vectors: a_s = h . att_src, a_d = h . att_dst */
    for (int n = 0; n < N; n++)
        for (int h = 0; h < H; h++) {
            nn_real das = ctx.das[(size_t)n * H + h];
            nn_real dad = ctx.dad[(size_t)n * H + h];
            const nn_real *hv = s.h + (size_t)n * HC + (size_t)h * C;
            nn_real *dh = dh_ws + (size_t)n * HC + (size_t)h * C;
            for (int k = 0; k < C; k++) {
                if (datt_src) datt_src[h * C + k] += das * hv[k];
                if (datt_dst) datt_dst[h * C + k] += dad * hv[k];
                dh[k] += das * att_src[h * C + k] + dad * att_dst[h * C + k];
            }
        }
    dlp_nn_linear_backward(dx, dW, NULL, dh_ws, x, W, N, c.I, HC);
}
