/* feat_layout.c — the strides eager PyTorch gives each activation, and the
 * copies those strides force (the peak-memory walk's layout rule,
 * docs/COST.md).
 *
 * The exported graph names no layout: a Reshape is a view in PyTorch only
 * when the input's strides allow one (ATen's computeStride), else
 * reshape() copies into a new block; a permute() is a view whose strides
 * the next element-wise op keeps (TensorIterator lays its output out in
 * its input's dimension order); at::matmul folds batch dimensions by a
 * reshape and hands cuBLAS only row- or column-major matrices, copying
 * whatever else it is given; layer_norm and softmax make their input
 * contiguous first. SwinV2's window attention shows all of it (allocator
 * history, thirty-first session, H200, fp16 b64 256 px: the window
 * partition's copy and two matmul operand copies of the normalised q and
 * k, 48 MiB each, live at the scores). A convolution, batch_norm, pool
 * or upsampling given a channels-last input allocates a channels-last
 * output, so a LayerNorm2d's permute back leaves the whole block after it
 * channels-last (MetaFormer's, ConvNeXt's, ViTamin's), and cuDNN runs
 * those convolutions' NHWC kernels (val_cl, read by the op and workspace
 * records, feat.c). This file tracks strides through
 * the graph in topological order and reports those copies; values it
 * cannot shape are taken as contiguous. */
#include "feat.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define RMAX DLP_MAX_RANK

/* the ops whose output takes its first operand's dimension order */
static const char *const eltwise[] = {
    "Add", "Sub", "Mul", "Div", "Pow", "Sqrt", "Exp", "Log", "Neg", "Abs",
    "Reciprocal", "Relu", "Clip", "LeakyRelu", "HardSwish", "HardSigmoid",
    "Sigmoid", "Tanh", "Erf", "Gelu", "Elu", "Selu", "Softplus", "Mish",
    "Cast", "Where", "Max", "Min", "Sin", "Cos", "Floor", "Ceil", "Round",
    "Sign", "PRelu", NULL};
/* ops whose 4-D output takes its input's memory format (ATen's
 * suggest_memory_format): cuDNN's convolutions, batch_norm, the pools and
 * the upsampling kernels allocate a channels-last output for a
 * channels-last input, an NCHW one otherwise */
static const char *const keep_format[] = {
    "Conv", "ConvTranspose", "BatchNormalization", "MaxPool", "AveragePool",
    "Resize", NULL};
/* ops that read their input made contiguous (a temporary copy) */
static const char *const contig_in[] = {"LayerNormalization", "Softmax", NULL};

static bool sizes_of(const dlp_value *x, int64_t *sz) {
    if (!dlp_shape_known(&x->shape) || x->shape.rank > RMAX) return false;
    for (int i = 0; i < x->shape.rank; i++) sz[i] = x->shape.dims[i].value;
    return true;
}

static void contiguous(const int64_t *sz, int r, int64_t *st) {
    int64_t e = 1;
    for (int i = r - 1; i >= 0; i--) {
        st[i] = e;
        e *= sz[i] > 0 ? sz[i] : 1;
    }
}

static bool is_contiguous(const int64_t *sz, const int64_t *st, int r) {
    int64_t e = 1;
    for (int i = r - 1; i >= 0; i--) {
        if (sz[i] == 1) continue;
        if (st[i] != e) return false;
        e *= sz[i];
    }
    return true;
}

/* (feat.h) old dimensions group into chunks each of which is one linear
 * run of memory, and every chunk must be an exact run of new dimensions */
bool dlp_feat_view_strides(const int64_t *osz, const int64_t *ost, int r,
                           const int64_t *nsz, int m, int64_t *nst) {
    int64_t numel = 1;
    for (int i = 0; i < r; i++) numel *= osz[i];
    if (numel == 0 || r == 0) {
        contiguous(nsz, m, nst);
        return true;
    }
    int vd = m - 1;
    int64_t base = ost[r - 1], tn = 1, vn = 1;
    for (int td = r - 1; td >= 0; td--) {
        tn *= osz[td];
        if (td == 0 || (osz[td - 1] != 1 && ost[td - 1] != tn * base)) {
            while (vd >= 0 && (vn < tn || nsz[vd] == 1)) {
                nst[vd] = vn * base;
                vn *= nsz[vd];
                vd--;
            }
            if (vn != tn) return false;
            if (td > 0) {
                base = ost[td - 1];
                tn = vn = 1;
            }
        }
    }
    return vd == -1;
}

/* Dense strides for sz in the dimension order of st (outermost = largest
 * stride; ties keep the logical order): what TensorIterator allocates. */
static void dense_like(const int64_t *sz, const int64_t *st, int r,
                       int64_t *out) {
    int ord[RMAX];
    for (int i = 0; i < r; i++) ord[i] = i;
    for (int i = 1; i < r; i++)          /* stable insertion sort, st desc */
        for (int j = i; j > 0 && st[ord[j - 1]] < st[ord[j]]; j--) {
            int t = ord[j]; ord[j] = ord[j - 1]; ord[j - 1] = t;
        }
    int64_t e = 1;
    for (int i = r - 1; i >= 0; i--) {
        out[ord[i]] = e;
        e *= sz[ord[i]] > 0 ? sz[ord[i]] : 1;
    }
}

typedef struct {
    const dlp_graph *g;
    const uint8_t *act;
    int64_t *st;          /* [V][RMAX] strides of the values with lay[v] */
    uint8_t *lay;         /* 1: strides in st, else contiguous */
} layout;

/* v's sizes and strides; false when v is not a shaped activation */
static bool get(const layout *L, int v, int64_t *sz, int64_t *st, int *r) {
    if (v < 0 || !L->act[v] || !sizes_of(&L->g->values[v], sz)) return false;
    *r = L->g->values[v].shape.rank;
    if (L->lay[v]) memcpy(st, L->st + (size_t)v * RMAX, sizeof(int64_t) * RMAX);
    else contiguous(sz, *r, st);
    return true;
}

static void set(layout *L, int v, const int64_t *sz, const int64_t *st, int r) {
    if (is_contiguous(sz, st, r)) { L->lay[v] = 0; return; }
    L->lay[v] = 1;
    memcpy(L->st + (size_t)v * RMAX, st, sizeof(int64_t) * (size_t)r);
}

static double elem_bytes(const dlp_value *x, int64_t n) {
    return (double)n * (double)dlp_dtype_size(x->dtype);
}

/* Bytes at::matmul copies operand x (sizes sz, strides st, rank r) into
 * when the other operand has rank ro and batch sizes osz[0 .. ro-3]: the
 * batch dimensions broadcast (expanded, stride 0) and folded into one by
 * a reshape, then a matrix cuBLAS takes as it is (row- or column-major).
 * 0 when no copy. */
static double matmul_copy(const dlp_value *x, const int64_t *sz,
                          const int64_t *st, int r, const int64_t *osz,
                          int ro) {
    if (r < 2) return 0;
    int64_t esz[RMAX], est[RMAX];
    int er = r;
    for (int i = 0; i < r; i++) { esz[i] = sz[i]; est[i] = st[i]; }
    if (r >= 3 && ro > r && ro <= RMAX) {        /* leading batch dims of the other */
        int add = ro - r;
        for (int i = r - 1; i >= 0; i--) { esz[i + add] = sz[i]; est[i + add] = st[i]; }
        for (int i = 0; i < add; i++) { esz[i] = osz[i]; est[i] = 0; }
        er = ro;
    }
    if (r >= 3 && ro >= 3)                   /* broadcast size-1 batch dims */
        for (int i = 0; i < er - 2; i++) {
            int j = i - (er - ro);
            if (j >= 0 && esz[i] == 1 && osz[j] > 1) { esz[i] = osz[j]; est[i] = 0; }
        }
    int64_t b = 1;
    for (int i = 0; i < er - 2; i++) b *= esz[i];
    int64_t n = esz[er - 2], m = esz[er - 1], m3[3] = {b, n, m}, s3[3];
    if (er == 2) { s3[1] = est[0]; s3[2] = est[1]; }
    else if (!dlp_feat_view_strides(esz, est, er, m3, 3, s3)) return elem_bytes(x, b * n * m);
    bool rowmaj = (s3[2] == 1 || m == 1) && (s3[1] >= m || n == 1);
    bool colmaj = (s3[1] == 1 || n == 1) && (s3[2] >= n || m == 1);
    return rowmaj || colmaj ? 0 : elem_bytes(x, b * n * m);
}

/* Whether [N, C, H, W] sizes sz with strides st are channels-last, as
 * ATen's is_channels_last_strides_2d reads them (suggest_memory_format,
 * which the convolutions, batch_norm, the pools and the upsampling ask):
 * an order, not exact strides, C innermost, then W, H, N, each stride at
 * least the previous one times its size (a dim of size 1 may have any
 * stride). So a view of tokens after a class token is sliced off,
 * x[:, 1:].transpose(1, 2).reshape(B, C, H, W) with N's stride (HW + 1) C,
 * is channels-last (CoaT's interpolations and position encodings;
 * PyTorch's upsampling and convolution give it a channels-last output).
 * A single channel or a 1 x 1 map is taken as NCHW (nothing to choose). */
static bool channels_last(const int64_t *sz, const int64_t *st) {
    static const int order[4] = {1, 3, 2, 0};
    if (st[1] == 0 || sz[1] <= 1 || sz[2] * sz[3] <= 1) return false;
    int64_t min = 0;
    for (int k = 0; k < 4; k++) {
        int d = order[k];
        if (sz[d] == 0 || st[d] < min) return false;
        if (d == 0 && min == st[1]) return false;   /* ATen's N111 case */
        min = st[d] * (sz[d] > 1 ? sz[d] : 1);
    }
    return true;
}

/* One node: its outputs' strides, and the copies it makes. */
static void visit(layout *L, int i, const uint8_t *sdpa, uint8_t *copy,
                  double *tmp, double *mm) {
    const dlp_graph *g = L->g;
    const dlp_node *n = &g->nodes[i];
    const char *op = n->op_type;
    int64_t isz[RMAX], ist[RMAX], osz[RMAX], ost[RMAX];
    int ir = 0;
    if (!strcmp(op, "MatMul") && n->n_inputs == 2 && n->inputs[0] >= 0 &&
        n->inputs[1] >= 0) {
        const dlp_value *a = &g->values[n->inputs[0]], *b = &g->values[n->inputs[1]];
        int64_t asz[RMAX], bsz[RMAX], bst[RMAX];
        int br = 0;
        if (!sdpa[i] && sizes_of(a, asz) && sizes_of(b, bsz)) {
            double c[2] = {0, 0};
            if (get(L, n->inputs[0], isz, ist, &ir))
                c[0] = matmul_copy(a, isz, ist, ir, bsz, b->shape.rank);
            if (get(L, n->inputs[1], bsz, bst, &br))
                c[1] = matmul_copy(b, bsz, bst, br, asz, a->shape.rank);
            tmp[i] += c[0] + c[1];
            if (mm) {
                mm[2 * i] = c[0];
                mm[2 * i + 1] = c[1];
            }
        }
        int v = n->n_outputs ? n->outputs[0] : -1;
        if (sdpa[i] == 2 && v >= 0 && L->act[v] && sizes_of(&g->values[v], osz) &&
            g->values[v].shape.rank == 4) {
            /* a fused kernel's output: [B, S, heads, D] in memory */
            ost[3] = 1;
            ost[1] = osz[3];
            ost[2] = osz[1] * osz[3];
            ost[0] = osz[2] * osz[1] * osz[3];
            set(L, v, osz, ost, 4);
        }
        return;
    }
    /* an element-wise op lays its output out like its first operand that
     * is not broadcast (a scale's scalar first operand does not count,
     * StarReLU's s * relu(x)^2 + b: TensorIterator skips stride-0 dims) */
    int in0 = n->n_inputs > 0 ? n->inputs[0] : -1;
    if (dlp_feat_in_list(op, eltwise) && n->n_outputs > 0 && n->outputs[0] >= 0 &&
        sizes_of(&g->values[n->outputs[0]], osz))
        for (int j = 0; j < n->n_inputs; j++)
            if (get(L, n->inputs[j], isz, ist, &ir) &&
                ir == g->values[n->outputs[0]].shape.rank &&
                !memcmp(isz, osz, sizeof(int64_t) * (size_t)ir)) {
                in0 = n->inputs[j];
                break;
            }
    if (in0 < 0 || !get(L, in0, isz, ist, &ir)) return;
    if (dlp_feat_in_list(op, contig_in)) {
        int64_t ne = 0;
        const dlp_value *x = &g->values[n->inputs[0]];
        if (!is_contiguous(isz, ist, ir) && dlp_shape_numel(&x->shape, &ne))
            tmp[i] += elem_bytes(x, ne);
        return;
    }
    for (int k = 0; k < n->n_outputs; k++) {
        int v = n->outputs[k];
        if (v < 0 || !L->act[v] || !sizes_of(&g->values[v], osz)) continue;
        int orank = g->values[v].shape.rank;
        if (!strcmp(op, "Transpose")) {
            const dlp_attr *p = dlp_node_attr(n, "perm");
            if (orank != ir || (p && (p->n != ir || !p->ints))) continue;
            for (int d = 0; d < ir; d++) {
                int64_t s = p ? p->ints[d] : ir - 1 - d;
                if (s < 0 || s >= ir) return;
                ost[d] = ist[s];
            }
            set(L, v, osz, ost, orank);
        } else if (!strcmp(op, "Reshape") || !strcmp(op, "Flatten") ||
                   !strcmp(op, "Squeeze") || !strcmp(op, "Unsqueeze")) {
            if (dlp_feat_view_strides(isz, ist, ir, osz, orank, ost)) set(L, v, osz, ost, orank);
            else copy[v] = 1;
        } else if (!strcmp(op, "Identity") || !strcmp(op, "Dropout") ||
                   !strcmp(op, "Slice") || !strcmp(op, "Split")) {
            /* a slice keeps its base's strides */
            if (orank == ir) set(L, v, osz, ist, orank);
        } else if (!strcmp(op, "Gather") && n->n_inputs == 2 && n->inputs[1] >= 0 &&
                   g->values[n->inputs[1]].shape.rank == 0 && orank == ir - 1) {
            /* x[i] with a scalar index selects a view */
            int ax = (int)dlp_node_attr_int(n, "axis", 0);
            if (ax < 0) ax += ir;
            if (ax < 0 || ax >= ir) continue;
            for (int d = 0, j = 0; d < ir; d++)
                if (d != ax) ost[j++] = ist[d];
            set(L, v, osz, ost, orank);
        } else if (!strcmp(op, "Expand")) {
            int add = orank - ir;
            if (add < 0) continue;
            for (int d = 0; d < orank; d++) {
                int j = d - add;
                ost[d] = j < 0 || (isz[j] == 1 && osz[d] != 1) ? 0 : ist[j];
            }
            set(L, v, osz, ost, orank);
        } else if (k == 0 && dlp_feat_in_list(op, keep_format)) {
            if (orank != 4 || ir != 4 || !channels_last(isz, ist)) continue;
            ost[1] = 1;
            ost[3] = osz[1];
            ost[2] = osz[3] * osz[1];
            ost[0] = osz[2] * osz[3] * osz[1];
            set(L, v, osz, ost, 4);
        } else if (k == 0 && dlp_feat_in_list(op, eltwise) && orank == ir &&
                   !memcmp(isz, osz, sizeof(int64_t) * (size_t)ir)) {
            bool zero = false;
            for (int d = 0; d < ir; d++) zero |= ist[d] == 0 && isz[d] > 1;
            if (zero) continue;
            dense_like(osz, ist, orank, ost);
            set(L, v, osz, ost, orank);
        }
    }
}

int dlp_feat_layout(const dlp_graph *g, const uint8_t *act, const uint8_t *sdpa,
                    uint8_t *copy, double *tmp, uint8_t *cl, double *mm) {
    size_t V = g->n_values ? g->n_values : 1;
    layout L = {g, act, malloc(V * RMAX * sizeof(int64_t)), calloc(V, 1)};
    if (!L.st || !L.lay) {
        free(L.st); free(L.lay);
        return -1;
    }
    for (size_t t = 0; t < g->n_nodes; t++) visit(&L, g->topo[t], sdpa, copy, tmp, mm);
    for (size_t v = 0; cl && v < g->n_values; v++) {
        int64_t sz[RMAX], st[RMAX];
        int r = 0;
        cl[v] = L.lay[v] && get(&L, (int)v, sz, st, &r) && r == 4 &&
                channels_last(sz, st);
    }
    free(L.st); free(L.lay);
    return 0;
}
