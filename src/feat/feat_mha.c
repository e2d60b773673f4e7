/* feat_mha.c — the two eager paths of torch.nn.MultiheadAttention.
 *
 * The exporter traces nn.MultiheadAttention's self-attention through
 * F.multi_head_attention_forward whatever PyTorch runs: a packed
 * in-projection (MatMul by in_proj_weight, Add of in_proj_bias), its
 * [L, B, 3 E] output unflattened, unsqueezed, transposed and squeezed
 * into [3, L, B, E] (a .contiguous() the graph does not show), q, k, v
 * selected by Gathers, each viewed as [L, B H, hd], transposed and viewed
 * as [B, H, L, hd] for the SDPA call, the output permuted back, the
 * out-projection, and with batch_first a Transpose at each end. At
 * inference (eval, no grad) PyTorch takes its fused path
 * (_native_multi_head_attention) instead, but only with an even head
 * count ("num_heads is odd" among its fast-path checks) and batch_first;
 * a training step always takes the slow path.
 *
 * Eager kernel traces of torchvision ViTs (data/batches; fp16):
 *   fast (1850a201, 8 heads): in-projection GEMM with the bias in its
 *     epilogue, one SDPA kernel, out-projection GEMM, residual Add,
 *     LayerNorm: 10 kernels a layer;
 *   slow (759de412, 3 heads): besides, the copy of the transposed input
 *     before the in-projection (a linear of a non-contiguous 3-D input is
 *     a matmul, its bias a separate add), that bias add over [L, B, 3 E],
 *     the packed q, k, v made contiguous, and a copy before each
 *     LayerNorm of the residual stream, which the transposed output
 *     leaves strided (the residual adds keep their first operand's
 *     layout): 15 kernels a layer, 443 of 1,522 us in those five.
 * The views of q, k and v as [B, H, L, hd] are views on both paths (the
 * generic rule, feat_kern.c, counts a Reshape of a Transpose as a copy).
 *
 * dlp_feat_mha marks those nodes (fg->mha) and keeps the slow path's
 * work as operator records (fg->mha_work), which op_records appends to
 * the operator-time model's inputs; the roofline (feat.c) adds their
 * kernels and times where the configuration takes the slow path. */
#include "feat.h"

#include <stdlib.h>
#include <string.h>

static bool is(const dlp_node *n, const char *op) {
    return n && !strcmp(n->op_type, op);
}

static int node_index(const dlp_graph *g, const dlp_node *n) {
    return n ? (int)(n - g->nodes) : -1;
}

/* the producer of node n's input k, or NULL */
static const dlp_node *in_node(const dlp_graph *g, const dlp_node *n, int k) {
    return n && k < n->n_inputs ? dlp_feat_producer_of(g, n->inputs[k]) : NULL;
}

static const dlp_shape *out_shape(const dlp_graph *g, const dlp_node *n) {
    if (!n || n->n_outputs < 1 || n->outputs[0] < 0) return NULL;
    const dlp_shape *s = &g->values[n->outputs[0]].shape;
    return dlp_shape_known(s) ? s : NULL;
}

/* whether node n is a Transpose by exactly perm[0 .. r-1] */
static bool transpose_by(const dlp_node *n, const int64_t *perm, int r) {
    if (!is(n, "Transpose")) return false;
    const dlp_attr *p = dlp_node_attr(n, "perm");
    if (!p || !p->ints || p->n != r) return false;
    for (int i = 0; i < r; i++)
        if (p->ints[i] != perm[i]) return false;
    return true;
}

static const int64_t swap01[3] = {1, 0, 2};

/* a record of memory-bound work: a copy of e elements moving runs of d */
static dlp_op_shape copy_record(int64_t e, int64_t d) {
    dlp_op_shape s;
    memset(&s, 0, sizeof s);
    s.kind = DLP_OP_MEM;
    s.cat = DLP_MEM_COPY;
    s.e = e;
    s.d = d;
    s.r = d > 0 ? e / d : 0;
    return s;
}

static bool add_work(dlp_feat_graph *fg, size_t *cap, int node,
                     dlp_op_shape s) {
    if (!dlp_grow((void **)&fg->mha_work, cap, (size_t)fg->n_mha_work + 1,
                  sizeof *fg->mha_work))
        return false;
    fg->mha_work[fg->n_mha_work++] = (dlp_feat_op){node, s};
    return true;
}

/* The pattern at the Squeeze sq that yields the packed [3, L, B, E]:
 * Squeeze <- Transpose <- Unsqueeze <- Reshape <- Add (bias) <- MatMul.
 * Fills the in-projection's MatMul and bias Add; false if not it. */
static bool packed_projection(const dlp_graph *g, const dlp_node *sq,
                              const dlp_node **mm, const dlp_node **add) {
    const dlp_node *t = in_node(g, sq, 0);
    const dlp_node *un = is(t, "Transpose") ? in_node(g, t, 0) : NULL;
    const dlp_node *r = is(un, "Unsqueeze") ? in_node(g, un, 0) : NULL;
    const dlp_node *a = is(r, "Reshape") ? in_node(g, r, 0) : NULL;
    if (!is(a, "Add") || !dlp_feat_linear_bias(g, a)) return false;
    const dlp_shape *ro = out_shape(g, r), *so = out_shape(g, sq);
    /* [L, B, 3, E] -> [3, L, B, E] */
    if (!ro || !so || ro->rank != 4 || so->rank != 4 ||
        ro->dims[2].value != 3 || so->dims[0].value != 3)
        return false;
    for (int k = 0; k < 2; k++) {
        const dlp_node *p = in_node(g, a, k);
        if (is(p, "MatMul")) {
            *mm = p;
            *add = a;
            return true;
        }
    }
    return false;
}

/* The only node reading value v besides Shape nodes (the exporter's
 * size arithmetic), or -1 */
static int data_use(const dlp_graph *g, const dlp_feat_uses *u, int v) {
    int c[8], found = -1;
    if (v >= 0 && u->n[v] > 8) return -1;
    int n = dlp_feat_readers(u, v, c, 8);
    for (int k = 0; k < n; k++) {
        if (is(&g->nodes[c[k]], "Shape")) continue;
        if (found >= 0) return -1;
        found = c[k];
    }
    return found;
}

/* From q, k or v's Gather: Reshape [L, B H, hd] -> Transpose -> Reshape
 * [B, H, L, hd]; the last Reshape, or NULL. */
static const dlp_node *head_view(const dlp_graph *g, const dlp_feat_uses *u,
                                 const dlp_node *gather, int64_t *hd) {
    int r1 = data_use(g, u, gather->outputs[0]);
    const dlp_node *a = r1 >= 0 ? &g->nodes[r1] : NULL;
    const dlp_shape *as = out_shape(g, a);
    if (!is(a, "Reshape") || !as || as->rank != 3) return NULL;
    int t = data_use(g, u, a->outputs[0]);
    if (t < 0 || !is(&g->nodes[t], "Transpose")) return NULL;
    int r2 = data_use(g, u, g->nodes[t].outputs[0]);
    const dlp_node *b = r2 >= 0 ? &g->nodes[r2] : NULL;
    const dlp_shape *bs = out_shape(g, b);
    if (!is(b, "Reshape") || !bs || bs->rank != 4) return NULL;
    *hd = as->dims[2].value;
    return b;
}

/* The batch_first output: the out-projection's [L B, E] viewed as
 * [L, B, E] and transposed to [B, L, E], after the attention whose PV
 * product is node pv. The Transpose, or NULL. */
static const dlp_node *batch_first_output(const dlp_graph *g,
                                          const dlp_feat_uses *u, int pv) {
    static const int64_t back[4] = {2, 0, 1, 3};
    int t = data_use(g, u, g->nodes[pv].outputs[0]);
    if (t < 0 || !transpose_by(&g->nodes[t], back, 4)) return NULL;
    int r = data_use(g, u, g->nodes[t].outputs[0]);
    if (r < 0 || !is(&g->nodes[r], "Reshape")) return NULL;
    int p = data_use(g, u, g->nodes[r].outputs[0]);
    if (p < 0 || !(is(&g->nodes[p], "Gemm") || is(&g->nodes[p], "MatMul")))
        return NULL;
    int v = g->nodes[p].outputs[0];
    if (is(&g->nodes[p], "MatMul")) {      /* its bias Add */
        int a = data_use(g, u, v);
        if (a < 0 || !dlp_feat_linear_bias(g, &g->nodes[a])) return NULL;
        v = g->nodes[a].outputs[0];
    }
    int r2 = data_use(g, u, v);
    if (r2 < 0 || !is(&g->nodes[r2], "Reshape")) return NULL;
    int t2 = data_use(g, u, g->nodes[r2].outputs[0]);
    return t2 >= 0 && transpose_by(&g->nodes[t2], swap01, 3) ? &g->nodes[t2] : NULL;
}

static bool same_dims(const dlp_shape *a, const dlp_shape *b) {
    if (a->rank != b->rank) return false;
    for (int i = 0; i < a->rank; i++)
        if (a->dims[i].value != b->dims[i].value) return false;
    return true;
}

/* The residual stream the transposed outputs leave strided: strided[v]
 * holds the role of the attention whose output v derives from (0: none).
 * An element-wise node whose first full-shape operand is strided writes
 * a strided output (feat_layout.c's rule); a LayerNormalization reading
 * one copies it first, a copy record at that role. */
static bool strided_stream(dlp_feat_graph *fg, const dlp_graph *g,
                           uint8_t *strided, size_t *cap) {
    static const char *const keep[] = {"Add", "Mul", "Sub", "Div", "Dropout",
                                       "Identity", NULL};
    for (size_t t = 0; t < g->n_nodes; t++) {
        int i = g->topo[t];
        const dlp_node *n = &g->nodes[i];
        if (n->n_outputs < 1 || n->outputs[0] < 0 || fg->mha[i]) continue;
        const dlp_shape *o = &g->values[n->outputs[0]].shape;
        if (is(n, "LayerNormalization")) {
            int x = n->n_inputs > 0 ? n->inputs[0] : -1;
            int64_t e = 0;
            if (x < 0 || !strided[x] || o->rank < 1 ||
                !dlp_shape_numel(&g->values[x].shape, &e))
                continue;
            fg->mha[i] = strided[x];
            if (!add_work(fg, cap, i, copy_record(e, o->dims[o->rank - 1].value)))
                return false;
            continue;
        }
        if (!dlp_feat_in_list(n->op_type, keep) || !dlp_shape_known(o)) continue;
        for (int k = 0; k < n->n_inputs; k++) {   /* first full-shape operand */
            int x = n->inputs[k];
            if (x < 0 || !dlp_shape_known(&g->values[x].shape) ||
                !same_dims(&g->values[x].shape, o))
                continue;
            strided[n->outputs[0]] = strided[x];
            break;
        }
    }
    return true;
}

bool dlp_feat_mha(dlp_feat_graph *fg, const dlp_graph *g,
                  const dlp_feat_uses *u) {
    size_t N = g->n_nodes, cap = 0;
    fg->mha = calloc(N ? N : 1, 1);
    if (!fg->mha) return false;
    uint8_t *strided = NULL;
    for (size_t i = 0; i < N; i++) {
        const dlp_node *sq = &g->nodes[i], *mm = NULL, *add = NULL;
        if (!is(sq, "Squeeze") || !packed_projection(g, sq, &mm, &add))
            continue;
        /* q, k, v: the Gathers reading the packed block, in slot order */
        const dlp_node *view[3] = {NULL, NULL, NULL};
        int64_t hd = 0;
        int rd[8], nrd = dlp_feat_readers(u, sq->outputs[0], rd, 8);
        for (int j = 0; j < nrd; j++) {
            const dlp_node *ga = &g->nodes[rd[j]];
            const dlp_shape *is0 = ga->n_inputs == 2 && ga->inputs[1] >= 0
                                       ? &g->values[ga->inputs[1]].shape : NULL;
            if (!is(ga, "Gather") || ga->inputs[0] != sq->outputs[0] || !is0 ||
                is0->rank != 0)
                continue;
            int64_t h = 0;
            const dlp_node *b = head_view(g, u, ga, &h);
            for (int s = 0; s < 3 && b; s++)
                if (!view[s]) { view[s] = b; hd = h; break; }
        }
        const dlp_shape *ps = out_shape(g, add), *bs = view[0] ? out_shape(g, view[0]) : NULL;
        if (!view[2] || !ps || ps->rank != 3 || !bs || hd <= 0) continue;
        int64_t E = ps->dims[2].value / 3, heads = bs->dims[1].value;
        if (E <= 0 || heads <= 0 || heads * hd != E) continue;
        /* the attention: v's view read by the PV product of a matched
         * SDPA (its Softmax's sdpa_pv) */
        int pv = data_use(g, u, view[2]->outputs[0]);
        const dlp_node *sm = pv >= 0 && g->nodes[pv].n_inputs > 1 &&
                                     g->nodes[pv].inputs[1] == view[2]->outputs[0]
                                 ? in_node(g, &g->nodes[pv], 0) : NULL;
        int smi = node_index(g, sm);
        if (smi < 0 || fg->in_sdpa[smi] != 2 || fg->sdpa_pv[smi] != pv) continue;
        fg->n_mha++;
        for (int s = 0; s < 3; s++) fg->mha[node_index(g, view[s])] = DLP_MHA_VIEW;
        const dlp_node *in_t = in_node(g, mm, 0);
        const dlp_node *out_t = batch_first_output(g, u, pv);
        bool batch_first = transpose_by(in_t, swap01, 3) && out_t;
        /* at inference the fused path: batch_first and even heads */
        uint8_t role = batch_first && heads % 2 == 0 ? DLP_MHA_SLOW_TRAIN : DLP_MHA_SLOW;
        int64_t ne = 0;
        if (!dlp_shape_numel(ps, &ne)) continue;
        fg->mha[node_index(g, sq)] = role;
        if (!add_work(fg, &cap, node_index(g, sq), copy_record(ne, E))) goto oom;
        if (!batch_first) continue;
        /* the input's copy before the matmul and the bias add after it */
        dlp_op_shape s;
        int64_t ni = 0;
        if (!dlp_shape_numel(&g->values[mm->inputs[0]].shape, &ni) ||
            !dlp_feat_op_shape(g, add, &s))
            continue;
        fg->mha[node_index(g, mm)] = fg->mha[node_index(g, add)] = role;
        if (!add_work(fg, &cap, node_index(g, mm), copy_record(ni, E)) ||
            !add_work(fg, &cap, node_index(g, add), s))
            goto oom;
        if (!strided && !(strided = calloc(g->n_values ? g->n_values : 1, 1)))
            goto oom;
        strided[out_t->outputs[0]] = role;
    }
    if (strided && !strided_stream(fg, g, strided, &cap)) goto oom;
    free(strided);
    return true;
oom:
    free(strided);
    return false;
}
