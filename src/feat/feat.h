/*
 * feat.h — internal to libdlperf. The featurizer: an analysed graph (shapes
 * and per-node dlp_cost) + a prediction config -> the numbers predictors
 * read. Three groups, one fixed, versioned schema (DLP_FEAT_SCHEMA, stored
 * in every trained model file; a mismatch is an error at load):
 *
 *   node features [N, DLP_FEAT_NODE_DIM] per node of the main graph:
 *     one-hot op type over a fixed vocabulary of DLP_FEAT_NOPS ONNX ops
 *     plus "other" | cost-changing attributes (kernel, stride, padding,
 *     dilation, groups, axes) | first input and first output shape padded
 *     to 6 dims (log2(1+d)) and ranks | log MACs, FLOPs, params, bytes
 *     moved | per-device roofline times of the node (compute at the
 *     device's peak for the precision, memory traffic at its bandwidth, and
 *     their max, log microseconds).
 *   static features [DLP_FEAT_STATIC_DIM]: graph totals and op-category
 *     counts (log), batch / sequence / resolution, precision and runtime
 *     one-hot, analytical roofline and memory estimates (inference and
 *     training), eager kernel count and kernel-floor time (feat_kern.c),
 *     bidirectional mask under capture, largest attention scores, then the device's
 *     features (dlp_device_features, scaled for a MIG profile or an SM
 *     partition).
 *   edges: producer -> consumer between main-graph nodes.
 *
 * The device-independent part is computed once per (graph, batch, seq) in
 * a dlp_feat_graph, which is compact (op index + DLP_FEAT_DENSE floats per
 * node) so thousands of configurations can be cached; node and static
 * features for a config are assembled from it on demand.
 */
#ifndef DLP_FEAT_H
#define DLP_FEAT_H

#include "../graph/graph.h"
#include "../pred/pred.h"

#define DLP_FEAT_SCHEMA 9   /* 6: bidirectional masks under capture, in-place
                               SiLU; 7: T5 float softmax at half precision;
                               8: T5 float attention and fp16 inf clamps;
                               9: eager kernel counts from the traces
                               (feat_kern.c), static mask_bidir_graph,
                               log_scores_mib, training memory estimate */
#define DLP_FEAT_NOPS 210          /* vocabulary size; index NOPS = "other" */
#define DLP_FEAT_SHAPE_DIMS 6
#define DLP_FEAT_NATTR 12
/* positions in a node's attribute block (the first DLP_FEAT_NATTR of its
 * dense features): kernel height and width, log2 of the group count */
enum { DLP_FEAT_ATTR_KH = 0, DLP_FEAT_ATTR_KW = 1, DLP_FEAT_ATTR_LOG2_GROUP = 8 };
#define DLP_FEAT_DENSE (DLP_FEAT_NATTR + 2 * (DLP_FEAT_SHAPE_DIMS + 1) + 5)
#define DLP_FEAT_NROOF 3
#define DLP_FEAT_NODE_DIM (DLP_FEAT_NOPS + 1 + DLP_FEAT_DENSE + DLP_FEAT_NROOF)
#define DLP_FEAT_NCAT 10           /* op categories counted in static feats */
#define DLP_FEAT_STATIC_BASE 44    /* static features before the device's */
#define DLP_FEAT_STATIC_DIM (DLP_FEAT_STATIC_BASE + DLP_DEVICE_NFEATURES + 1)

/* Op vocabulary: index of an op type (default ONNX domain, or the
 * com.microsoft ops we list), or -1 when unseen (callers map it to
 * "other" = DLP_FEAT_NOPS and flag the graph out of distribution). */
int dlp_feat_op_index(const char *domain, const char *op_type);
const char *dlp_feat_op_name(int i);          /* "other" for NOPS */
const char *dlp_feat_node_name(int i);        /* node column names */
const char *dlp_feat_static_name(int i);      /* static column names */

/* ---- convolution workspaces (feat_convws.c) ------------------------------
 * cuDNN's workspace of a dense 2-D convolution is its algorithm choice
 * for the exact shape and type (data/probes: at fp32 0 for most shapes,
 * up to GiBs for some, not monotone in the size; at fp16 about the input
 * and output for most 3x3 convs, nothing for most 1x1), so the walk keeps,
 * for every such convolution, its shape's features and what is live while
 * it runs; a model fitted on the probes (src/pred/pred_convws.c) predicts
 * the workspace and dlp_feat_roofline_ws adds it to the peaks. */
typedef struct {
    int64_t n, c, h, w;     /* input [N, C, H, W] */
    int64_t k, kh, kw;      /* weight [K, C, kh, kw] (groups 1) */
    int64_t ho, wo;         /* output spatial size */
    int64_t sh, sw, dh, ph; /* strides, dilation (height), padding (top) */
    bool cl;                /* input channels-last (a permute's result or
                               1x1 spatial) */
} dlp_conv_shape;
#define DLP_CONVWS_NF 20
/* The first DLP_CONVWS_NF_V1 features are those of files written before
 * the fortieth session, whose forests read only them */
#define DLP_CONVWS_NF_V1 18
/* The model's features of one shape: log2 of N, C, H, W, K; kh, kw, sh,
 * sw, dh, ph, cl; log2 of Ho, Wo, the fp32 input + output MiB, N*H*W, the
 * weight's and the MAC count (the order of
 * tools/collect/convws_learnability.py); then log2 of the MiB of cuDNN's
 * FFT workspace for the shape, (N C + K C + N K) complex planes of the
 * padded input rounded up to powers of two, and of its ratio to the
 * input + output (docs/COST.md, "Fortieth session"). */
void dlp_conv_shape_features(const dlp_conv_shape *s, float *x);
/* The shape of node n when it is a dense (groups 1) 2-D Conv with known
 * input, weight and output shapes; false for any other node. */
bool dlp_feat_conv_shape(const dlp_graph *g, const dlp_node *n,
                         dlp_conv_shape *out);
typedef struct {
    float x[DLP_CONVWS_NF]; /* dlp_conv_shape_features */
    double live_bytes;      /* fp32 bytes live while it runs, besides its
                               workspace (the walk's units) */
    double live_half_bytes; /* the same at half precision, in the walk's
                               units of peak_pre_blas_bytes[1] */
    bool post;              /* at or after the first cuBLAS node */
    int tpos;               /* its position in the graph's order (the
                               training step's point, train_curve) */
} dlp_feat_conv;

/* ---- operator times (feat_optime.c) --------------------------------------
 * How long cuDNN's convolution or cuBLAS's product of one shape takes is
 * its kernel choice for the shape and type (benchmark off), often far
 * from the roofline (depthwise and grouped convolutions, products with
 * a dimension below a tile); probes of shapes without a model
 * (tools/collect/probe_optime.py) measured it, and a model fitted on them
 * (src/pred/pred_optime.c) predicts each such node's time relative to its
 * roofline. The other kernels (elementwise, normalizations, softmax,
 * pooling: memory-bound, near a floor of about a microsecond when small)
 * and the fused attention of an exported SDPA were probed the same way
 * (tools/collect/probe_memop.py). */
typedef enum {
    DLP_OP_CONV = 0, DLP_OP_MM = 1, DLP_OP_MEM = 2, DLP_OP_ATTN = 3
} dlp_op_kind;
#define DLP_OP_NKIND 4
/* The memory-bound operators (dlp_op_shape.cat) and their functions.
 * MFILL (fiftieth session): the scores' masked fill of an attention the
 * exporter spelled out (DeBERTa's scores.masked_fill(~mask, min), exported
 * as Where(mask, min, scores) before the Softmax): a copy of the scores,
 * then a broadcasting fill in place, ~4x the roofline of its bytes. A
 * forest fitted before its probes never separates it (pred_optime.c's
 * cat_timed), and such a node keeps its own roofline time.
 * GATHER (fifty-third session): rows of a float table gathered by an
 * index, Gather(x, idx, axis) (BEiT's relative position bias, a token
 * embedding): PyTorch's vectorized gather kernel, which it picks for
 * rows of a multiple of 16 bytes on the first axis, takes ~0.61 ns per
 * row whatever the row's width up to ~1.5 KB (BEiT-L at 512 px: 1,025^2
 * rows of 16 heads, 637 us a layer), the other kernel ~0.004 ns per
 * element; the same gate as MFILL's (cat_timed).
 * RESIZE (fifty-fourth session): an interpolation, Resize / Upsample of
 * [N, C, H, W] to [N, C, Ho, Wo] (fn: dlp_resize_fn). PyTorch's NCHW
 * bilinear and bicubic kernels give each output pixel one thread that
 * loops over the N x C planes, ~0.18 us a plane on the H200 when the
 * output has few pixels (EfficientFormerV2's [64, 1,024, 7, 7] to 14 x 14:
 * 12.2 ms, 83% of its forward); nearest, and any mode of a channels-last
 * input (CoaT's transposed tokens: cl from the layout pass, op_records),
 * run one thread per element. The same gate as MFILL's. */
typedef enum {
    DLP_MEM_UNARY = 0, DLP_MEM_BINARY, DLP_MEM_BN, DLP_MEM_LN, DLP_MEM_GN,
    DLP_MEM_SOFTMAX, DLP_MEM_POOL, DLP_MEM_COPY, DLP_MEM_MFILL, DLP_MEM_GATHER,
    DLP_MEM_RESIZE, DLP_MEM_NCAT
} dlp_mem_cat;
/* Their names, as the probes' records (probe_memop.py "op") spell them. */
extern const char *const dlp_mem_cat_name[DLP_MEM_NCAT];
/* unary fn: the probe's functions; binary fn: add, mul; pool fn: max,
 * avg, global average */
enum { DLP_FN_RELU = 0, DLP_FN_GELU, DLP_FN_SILU, DLP_FN_SIGMOID, DLP_FN_TANH,
       DLP_FN_HARDSWISH, DLP_FN_HARDSIGMOID, DLP_FN_EXP };
enum { DLP_FN_ADD = 0, DLP_FN_MUL };
enum { DLP_FN_MAX = 0, DLP_FN_AVG, DLP_FN_GAVG };
/* resize fn: linear (half-pixel centres), linear with align_corners,
 * nearest, cubic (the probes' "linear", "linear_ac", "nearest", "cubic") */
typedef enum { DLP_RESIZE_LINEAR = 0, DLP_RESIZE_LINEAR_AC, DLP_RESIZE_NEAREST,
               DLP_RESIZE_CUBIC } dlp_resize_fn;
typedef struct {
    uint8_t kind;             /* dlp_op_kind */
    bool cl;                  /* conv: channels-last input */
    bool bw;                  /* mm: B batched ([b, kk, nn]), else [kk, nn] */
    bool bias;                /* mm, not batched: a Linear's product with
                                 its bias (a Gemm's C, or the Add of a
                                 constant the product feeds alone), which
                                 cuBLAS runs in its epilogue: another
                                 kernel choice, at fp32 and few rows up to
                                 ~3x the product's time alone (the probes'
                                 "bias", fiftieth session) */
    int64_t n, c, h, w, k, kh, kw, ho, wo, s, p, g; /* conv: input
                                 [n, c, h, w], weight [k, c/g, kh, kw],
                                 output [n, k, ho, wo], stride, padding
                                 (height), groups; mem bn, gn, pool:
                                 n, c, h, w (gn: g groups), pool kh, s, p,
                                 ho, wo */
    int64_t b, m, kk, nn;     /* mm: [b, m, kk] x [kk, nn] or [b, kk, nn];
                                 attn: q [b, m (heads), kk (L), nn (D)] */
    uint8_t cat, fn;          /* mem: dlp_mem_cat and its function */
    uint8_t bc;               /* mem binary: the other operand broadcast
                                 0 same shape, 1 constant along the last
                                 dim (per channel), 2 along the rows (a
                                 bias), 3 a scalar, 4 other; mfill: the
                                 mask [.., L, S] of scores [B, H, L, S]
                                 0 the scores' shape, 1 broadcast over
                                 the heads ([B, 1, L, S], DeBERTa's), 2
                                 over heads and rows ([B, 1, 1, S]), 3
                                 over batch and heads ([1, 1, L, S]), 4
                                 other */
    bool causal;              /* attn: is_causal */
    bool masked;              /* attn: a [b, 1, L, S] mask (the probes'
                                 "bool" / "float" / "bcast") */
    bool bcast;               /* attn, masked: a broadcast view whose last
                                 stride is 0 (the probes' "bcast"), which
                                 no fused kernel takes: PyTorch's math
                                 path runs the attention */
    uint8_t hbias;            /* attn: its mask an additive position bias
                                 in the query's dtype whose head axis is
                                 innermost in memory (T5's, strides
                                 [.., 1, S H, H]), which no fused kernel
                                 takes: the math path in both runtimes;
                                 1 [1, H, L, S] (eagerly), 2 [B, H, L, S],
                                 3 the call under a graph: the bias masked
                                 by the padding mask first, a where over
                                 [B, H, L, S] (the probes' "hbias",
                                 "hbiasb", "hbiasw") */
    uint8_t gmask;            /* attn of a graph: its mask as exported,
                                 0 none, 1 bidirectional, 2 causal; what
                                 the call sees depends on the runtime
                                 (dlp_op_shape_at) */
    int64_t e, ye, r, d;      /* mem: elements of the input (binary: of the
                                 output) and of a binary's other operand
                                 (1: a scalar; mfill: the mask's); ln,
                                 softmax: rows r of d; mfill: n, c, h, w
                                 the scores' [B, H, L, S], d = S;
                                 attn: d keys (S); copy: d the
                                 innermost run it moves whole (the last
                                 dim when the permutation keeps it,
                                 else 1), r = e / d; gather: x [n, R,
                                 d] (n the dims before the axis
                                 multiplied, R the axis, d those after
                                 it) by r indices, e = n r d the
                                 output's elements, ye = n R d the
                                 table's; resize: n, c, h, w the input,
                                 ho, wo the output's pixels, e the
                                 input's elements, cl a channels-last
                                 input (from a graph: the layout
                                 pass's val_cl) */
} dlp_op_shape;
#define DLP_OPTIME_NF 23
/* Forests fitted before the seventy-sixth session take the first 22
 * features (conv's x[22] did not exist): they still load and answer as
 * they did, since a forest reads only the features it splits on. */
#define DLP_OPTIME_NF_OLD 22
#define DLP_OPTIME_HBIAS_X 18     /* attn: the feature of hbias (1-3) */
#define DLP_OPTIME_CAT_X 5        /* mem: the feature of cat */
#define DLP_OPTIME_BIAS_X 15      /* mm: the feature of bias */
/* The model's features of shape s at precision p: fp16 and bf16 flags, log2
 * FLOPs, bytes and their ratio, then per kind: conv log2 n, c, h, w, k; kh,
 * kw, stride, padding; log2 groups, channels per group; depthwise,
 * channels-last; log2 ho, wo, n ho wo; channels a multiple of 8; log2
 * outputs per group (k / g). mm: log2 b, m, kk, nn; bw; log2 b m; m, kk, nn
 * multiples of 8; log2 min(m, nn); bias. mem: cat, fn; log2 e, ye, e / ye;
 * log2 r, d; log2 n, c, h w, g; pool kh, s, p; log2 ho wo; d a multiple of
 * 8; bc (each log2 of an unset size 0; resize: x[16] log2 of the scale ho
 * wo / h w, x[17] the same size (PyTorch copies), x[20] channels-last,
 * x[21] log2 n c, the planes one thread loops over). attn: log2 b, heads,
 * L, S, D; causal; log2 b heads, b heads L; D a multiple of 8; masked, log2
 * of the mask's elements (b L S; 0 unmasked), S a multiple of 16; bcast;
 * hbias, log2 of its bias's elements (H L S, B H L S; 0 none; hbias is 1, 2
 * or 3). */
void dlp_op_shape_features(const dlp_op_shape *s, dlp_precision p, float *x);
/* The mfill code (dlp_op_shape.bc) of mask shape m against scores x
 * (both [B, H, L, S], a lower rank's leading dims 1); -1 when m does
 * not broadcast to x. */
int dlp_mfill_bcast(const int64_t x[4], const int64_t m[4]);
/* Shape s as the call sees it at runtime rt: transformers (5.x, the
 * collector's) drops an all-ones mask or passes is_causal when it runs
 * eagerly, and passes a materialized [B, 1, L, S] boolean mask while a
 * CUDA graph is captured (tools/collect/probe_sdpa.py, forty-seventh
 * session: BERT and Llama both), which the SDPA converts to an additive
 * float mask on every call. An attention of a graph whose mask is
 * exported (gmask) is so masked under a CUDA graph, causal (a causal
 * mask) or unmasked eagerly; every other shape is s. A bidirectional
 * mask (BERT, RoBERTa, DistilBERT, ELECTRA, ALBERT, XLM-R, ModernBERT)
 * is a broadcast view, strides [0, L, 1, 0], that no fused kernel takes:
 * under a graph those attentions run PyTorch's math path (float products
 * and softmax; probe_sdpa.py --kernels, forty-eighth session), so the
 * shape is bcast too. A decoder's causal mask is a contiguous block. An
 * attention with a position bias (hbias, T5's) gets the bias [1, H, L, S]
 * eagerly, and under a graph T5 first masks it with the padding mask in
 * each layer (3: a where writing [B, H, L, S]; a profile of the capture,
 * forty-ninth session). */
dlp_op_shape dlp_op_shape_at(const dlp_op_shape *s, dlp_runtime rt);
/* Its FLOPs (2 x MACs; mem: one per element read) and bytes (operands
 * and result, at p's size). */
void dlp_op_shape_work(const dlp_op_shape *s, dlp_precision p, double *flops,
                       double *bytes);
/* The shape of node n when it is a Conv of known 4-D shapes (any groups),
 * a MatMul / Gemm of known shapes or one of the memory-bound operators
 * (dlp_mem_cat) of known shape; false for any other node. The fused
 * attention's shape (DLP_OP_ATTN) comes from its Softmax and products
 * (dlp_feat_attn_shape). */
bool dlp_feat_op_shape(const dlp_graph *g, const dlp_node *n, dlp_op_shape *out);
/* The attention shape of an exported SDPA whose scores [b, h, L, S] feed
 * Softmax sm and whose PV product is node pv ([.., S, D] values). */
bool dlp_feat_attn_shape(const dlp_graph *g, const dlp_node *sm,
                         const dlp_node *pv, dlp_op_shape *out);
typedef struct {
    int32_t node;             /* index of the node in the graph */
    dlp_op_shape shape;
} dlp_feat_op;

/* One node's backward in the training step (feat.c: train_curve): the
 * share of the weights whose gradients exist by then, the activation
 * blocks live (saved blocks, gradients, its convolution workspace; the
 * graph's bytes; act_amp: those of an autocast step, in its own bytes),
 * and the share of the weights whose half copies an autocast step still
 * holds. fwd / fwd_amp: the saved blocks alone, what the forward holds
 * when it runs the node (no gradient exists yet), where a convolution's
 * cuDNN workspace can make the step's peak (dlp_feat_train_fwd_mib).
 * ws: the convolution workspace act counts by the walk's rule
 * (DLP_MEM_CONV_WS_FACTOR x input + output bytes; act_amp half of it),
 * which a backward workspace model replaces (dlp_feat_train_bwd_mib). */
typedef struct {
    double grad_w, act, act_amp, half_w, fwd, fwd_amp, ws;
} dlp_feat_train_point;
/* The bytes live while conv record r runs, at precision p (the walk's
 * units scaled as its peaks are). */
double dlp_feat_conv_live_bytes(const dlp_feat_conv *r, dlp_precision p);

/* The device-independent features of one graph at one binding. */
typedef struct dlp_feat_graph {
    int n_nodes, n_edges;
    int16_t *op;            /* [N] vocabulary index, NOPS for other */
    uint8_t *tc;            /* [N] 1: matmul-like (tensor-core) node */
    uint8_t *kern;          /* [N] 1: likely launches a GPU kernel (not a
                               view/shape op, output > 64 elements) */
    uint8_t *node_cat;      /* [N] op category (the order of cat[] below:
                               conv, matmul, norm, act, elementwise,
                               softmax, pool, data movement, reduce, other) */
    int n_kernels;
    /* the kernels PyTorch's eager mode launches (feat_kern.c): per node
     * at any precision, and the extra ones at fp16 / bf16 (cuDNN's
     * layout conversions); totals of both */
    uint8_t *eager_kern, *half_kern;
    int n_eager_kernels, n_half_kernels;
    uint8_t *in_sdpa;       /* [N] 1: inside an exported SDPA pattern (one
                               fused kernel), 2: that pattern's Softmax */
    uint8_t *half_f32;      /* [N] 1: runs in float at fp16 / bf16 (the
                               attention of a learned-bias language model,
                               T5: scale, QK^T, bias, softmax, PV) */
    float *clamp_elems;     /* [N] hidden-state elements Hugging Face's fp16
                               inf clamp checks after this node (a T5
                               sub-layer's residual Add), 0 elsewhere */
    float *dense;           /* [N, DLP_FEAT_DENSE] */
    float *flops;           /* [N] raw FLOPs (also MAC-based work) */
    float *bytes;           /* [N] raw bytes moved (in + out + weights) */
    int32_t *src, *dst;     /* [E] edges between nodes */
    /* totals */
    double macs, flops_total, params, weight_bytes, act_bytes,
        peak_act_bytes, io_bytes, sum_act_out_bytes;
    /* peak live activation bytes (inputs included) before the first
     * cuBLAS node (MatMul / Gemm outside fused attention) runs and from it
     * on, and the larger of the two, for an fp32 run ([0]) and an fp16 /
     * bf16 one ([1]): what a Conv allocates besides its output while it
     * runs depends on the precision (conv_extra_bytes in feat.c), and a
     * folded BatchNorm's output is counted beside the conv's; the feature
     * peak_act_bytes is peak_act_bytes_at[0] */
    double peak_pre_blas_bytes[2], peak_post_blas_bytes[2], peak_act_bytes_at[2];
    /* at fp16 only: the live bytes at a 7x7 stride-1 convolution of a
     * 3-channel image plus its cuDNN workspace (fp16_stem_ws_bytes in
     * feat.c), before the first cuBLAS node ([0]) and from it on ([1]),
     * in the walk's fp32 units like the peaks above; 0 when the graph has
     * no such stem */
    double fp16_stem_peak_bytes[2];
    /* peak_pre_blas_bytes[1] / peak_post_blas_bytes[1] without what dense
     * convolutions allocate besides their outputs (conv_extra_bytes): the
     * half-precision workspace model's base (the stem's workspace,
     * fp16_stem_peak_bytes, still raises it) */
    double peak_half_nodense_bytes[2];
    /* the dense 2-D convolutions, one record each (dlp_feat_conv): the
     * workspace model's inputs */
    dlp_feat_conv *convs;
    int n_convs;
    /* the convolutions and the products cuBLAS runs (not those inside a
     * fused attention), the memory-bound nodes that launch a kernel, and
     * each fused attention (at its Softmax), one record each
     * (dlp_feat_op): the operator-time model's inputs */
    dlp_feat_op *ops;
    int n_ops;
    int32_t *node_op;       /* [N] index into ops, -1: none */
    int32_t *sdpa_pv;       /* [N] a matched SDPA's Softmax, or a biased
                               one's (battn 2): its PV product's node,
                               else -1 */
    /* [N] an SDPA call of a language model with a learned position bias
     * as attn_mask (T5's; mark_sdpa's *biased), which the graph spells
     * out node by node and PyTorch runs on its math path: 2 at its
     * Softmax, 1 at its other nodes (the products, their scales, the
     * bias chain, casts), 0 elsewhere; battn_op[i] the DLP_OP_ATTN record
     * (hbias) of Softmax i, -1 */
    uint8_t *battn;
    int32_t *battn_op;
    /* [N] the nodes of an exported nn.MultiheadAttention (feat_mha.c):
     * DLP_MHA_VIEW its q, k, v views (no copy on either path); where the
     * slow path works more, the role of its attention, DLP_MHA_SLOW
     * (slow at inference too: an odd head count, or not batch_first) or
     * DLP_MHA_SLOW_TRAIN (fused at inference, slow in training); 0
     * elsewhere. mha_work: that work, one record per such node, which
     * op_records appends to ops; mha_op[i] its index there, -1. */
    uint8_t *mha;
    dlp_feat_op *mha_work;
    int n_mha_work, n_mha;
    int32_t *mha_op;
    /* [n_values] 1: the value's strides are channels-last (dlp_feat_layout;
     * the memory walk's, which op_records reads for a Resize's input) */
    uint8_t *val_cl;
    /* [n_ops, DLP_RT_COUNT, DLP_PREC_COUNT] (dlp_op_eff_at): log2 of
     * each op's time over its roofline time at each runtime and
     * precision, from the operator-time model
     * (dlp_optime_annotate); NULL: the roofline; NaN for an op whose kind
     * the model has no forest for: that node's own roofline. Every node
     * time of the features (node columns, the roofline sums, the
     * readout's weights) reads it. With attn_eff the attentions' times
     * come from the model, and the other nodes of their patterns take
     * none. */
    float *op_eff;
    bool attn_eff;
    /* the biased attentions' (battn) times come from the model's
     * attention forest, whole: it was fitted on hbias records (it splits
     * on their feature), and the other nodes of their patterns take
     * none; else each node is timed as its own operator */
    bool battn_eff;
    /* the training step through its backward (feat.c: train_curve), one
     * point per node in topological order */
    dlp_feat_train_point *train_curve;
    int n_train_curve;
    /* a workspace model's answer for the training step (pred_convws.c,
     * dlp_convws_train_view; 0 in a graph no model annotated): the step's
     * MiB at the forward of the convolution whose predicted cuDNN
     * workspace raises its peak most, [0] fp32, [1] autocast (fp16 /
     * bf16), 0 when none does; dlp_feat_mem_estimate_of takes it when
     * above its own, or, with train_ws_peak, instead of its own (the
     * whole step's peak with a backward workspace model's answers in
     * place of the walk's rule: dlp_convws_train_view) */
    double train_ws_mib[2];
    bool train_ws_peak[2];
    /* bytes of every activation block the forward allocates (views,
     * in-place results, host values and fused-attention intermediates
     * excluded): what autograd can save for backward */
    double sum_alloc_bytes;
    /* bytes of the activation blocks autograd saves for backward in
     * training (feat.c: saves_input / saves_output); a static feature
     * of every model (schema 8) */
    double saved_act_bytes;
    /* the blocks autograd really keeps, the training memory estimate's
     * count: the erf form of GELU as one op that saves its input alone
     * (feat.c: mark_gelu_temps, eighth session); the clone an in-place
     * SiLU / Clip / HardSwish / HardSigmoid keeps of its input, a saved
     * slice's whole base, MaxPool's int64 indices (ninth session;
     * tests/gen_train_saved.py). saved_act_bytes keeps the exported count,
     * so the models trained on schema 8 see the features they were
     * trained on; a schema change that retrains every model should feed
     * this value to the features too. */
    double saved_train_bytes;
    /* saved_train_bytes without the sixty-sixth session's rule (a batched
     * product saves at::matmul's copies of its operands, feat.c:
     * batched_matmul) and the seventy-second's (a standardised weight,
     * feat.c: computed_weight): the inference and LLM rows'
     * training-memory static feature, as their shipped networks were
     * trained on it */
    double saved_train_bytes_v65;
    /* the largest convolution workspace (conv_workspace_bytes in feat.c:
     * DLP_MEM_CONV_WS_FACTOR x its input + output bytes) */
    double max_conv_ws_bytes;
    /* bytes of the module's parameters as PyTorch holds them (feat.c:
     * param_bytes): the initializers less the exporter's folded copies of
     * weights for batch statistics, plus one copy per Identity of a
     * deduplicated parameter, less the folded relative position biases
     * (folded_bias_bytes); the memory estimate's weights */
    double mem_weight_bytes;
    double folded_bias_bytes; /* initializers an SDPA reads as a folded
                               constant bias (BEiT), each once */
    double buffer_bytes;    /* the module's integer buffers (int64
                               initializers, a cached bias' Constant index,
                               the [Sq, Sk] index behind each folded bias):
                               bytes at every precision */
    double bias_cache_bytes; /* attention biases an eval-mode module
                               caches (bias_cache in feat.c), at fp32 */
    /* what the caching allocator holds beyond the parameters' requests
     * after the collector's build at float [0] and its cast to half [1]
     * (feat_alloc.c): bytes at that precision */
    double alloc_slack_bytes[2];
    int n_blas;             /* cuBLAS nodes (MatMul / Gemm not fused) */
    int n_linear_bias;      /* Linear layers with a bias (dlp_feat_linear_bias) */
    int n_sdpa;             /* exported scaled_dot_product_attention */
    int n_mask_virt;        /* attention-mask values never built (feat.c) */
    int mask_bidir;         /* 1: that mask is bidirectional (BERT-style),
                               not causal (DLP_MEM_GRAPH_BIDIR_SCORE_BYTES) */
    double max_scores_elems;/* elements of the largest fused attention's
                               scores [B, heads, Sq, Sk] */
    double max_biased_scores_elems; /* the same for attention left
                               unfused by an additive learned bias (T5) */
    double max_biased_q_elems; /* elements of that attention's query
                               [B, heads, Sq, D] (DLP_MEM_BIAS_MATH_HALF_Q_BYTES) */
    int mask_causal;        /* 1: the virtual mask is causal (a decoder's;
                               DLP_MEM_GRAPH_CAUSAL_MASK_BYTES) */
    double max_mask_elems;  /* elements of the largest fused attention's
                               mask [B, 1, Sq, Sk] (scores / heads) */
    double max_gqa_scores_elems; /* the largest fused attention's scores
                               whose keys and values the export repeats
                               to the query's heads (grouped-query
                               attention, fewer key-value heads;
                               DLP_MEM_MATH_SDPA_BYTES) */
    double attn_extra_bytes[2]; /* the largest, over fused-pattern
                               attentions with blocks of their own (the
                               math path of operands that are not 4-D,
                               NesT's and Hiera's [B, heads, windows, N, D]:
                               math_sdpa_bytes() in feat.c; a folded
                               relative position bias, gathered and made
                               contiguous per call), of the activation bytes
                               live at one plus those blocks; [0] fp32,
                               [1] fp16 / bf16 */
    double sdpa_live_bytes; /* activation bytes live (inputs included) when
                               the fused attention runs, the largest over
                               them (the attention terms' base) */
    int64_t cat[DLP_FEAT_NCAT];  /* node counts per op category */
    int n_unknown;          /* nodes whose op is not in the vocabulary */
    char unknown_op[64];    /* the first such op */
    int n_uncosted;         /* nodes without a known cost */
    int n_shape_conflicts;  /* nodes the binding contradicts
                               (dlp_graph.n_shape_conflicts) */
    int64_t batch, seq, height, width;
} dlp_feat_graph;

/* Index of op k's answer at runtime rt and precision p in op_eff. */
static inline size_t dlp_op_eff_at(int k, dlp_runtime rt, dlp_precision p) {
    return ((size_t)k * DLP_RT_COUNT + (size_t)rt) * DLP_PREC_COUNT + (size_t)p;
}

/* Sets the spatial size of every rank-4 floating graph input [N, C, H, W]
 * to height x width before analysis (vision graphs are exported at one
 * resolution with fixed H, W; labels are measured at many). 0 = keep.
 * Returns the number of inputs changed. */
int dlp_feat_bind_resolution(dlp_graph *g, int64_t height, int64_t width);

struct dlp_model;
/* A dataset graph at one measured binding: opens the graph bytes (hash
 * names them in errors), binds batch, "seq" when > 0 (a graph without
 * that dimension keeps its shapes) and the resolution, and analyses
 * (shapes + costs). *out is the caller's (dlp_model_free); NULL on
 * failure. */
dlp_status dlp_feat_model_at(const void *bytes, size_t len, const char *hash,
                             int64_t batch, int64_t seq, int64_t height,
                             int64_t width, struct dlp_model **out,
                             dlp_error *err);

/* Builds fg from an analysed graph; batch/seq/height/width are the bound
 * values (0 = not applicable). */
dlp_status dlp_feat_graph_build(dlp_feat_graph *fg, const dlp_graph *g,
                                int64_t batch, int64_t seq, int64_t height,
                                int64_t width, dlp_error *err);
void dlp_feat_graph_free(dlp_feat_graph *fg);

/* Graph helpers of the featurizer's rules (feat.c): whether op is in the
 * NULL-terminated list l; the node producing value v, or NULL. */
bool dlp_feat_in_list(const char *op, const char *const *l);
const dlp_node *dlp_feat_producer_of(const dlp_graph *g, int v);
/* Whether n is a Conv with a BatchNormalization that the eval-mode export
 * folded into it, which PyTorch runs as its own op (feat.c). */
bool dlp_feat_folded_bn(const dlp_graph *g, const dlp_node *n);
/* Who reads each value of g, as lists: n[v] the input slots that read
 * value v, and node[start[v] .. start[v] + n[v]) the node of each slot,
 * in node index order (a node reading v twice is there twice, side by
 * side). Built once per graph (dlp_feat_graph_build) for the memory walk,
 * the kernel count and the operator records; false when out of memory. */
typedef struct {
    int *n, *start, *node;
} dlp_feat_uses;
bool dlp_feat_uses_of(const dlp_graph *g, dlp_feat_uses *u);
void dlp_feat_uses_free(dlp_feat_uses *u);
/* The only node reading value v, or -1 (none, several, v < 0). */
int dlp_feat_sole_use(const dlp_feat_uses *u, int v);
/* The nodes reading value v, in index order, the first max of them into
 * c; returns how many (at most max). */
int dlp_feat_readers(const dlp_feat_uses *u, int v, int *c, int max);

/* ---- nn.MultiheadAttention (feat_mha.c) ---------------------------------
 * The exported self-attention of nn.MultiheadAttention and the eager path
 * PyTorch runs it on: the fused one at inference with an even head count
 * and batch_first, else F.multi_head_attention_forward, whose copies and
 * separate bias add the roofline and the kernel count add (fg->mha). */
enum { DLP_MHA_SLOW = 1, DLP_MHA_SLOW_TRAIN = 2, DLP_MHA_VIEW = 3 };
/* Fills fg->mha, mha_work and n_mha from the graph and the matched SDPA
 * calls (in_sdpa, sdpa_pv); false when out of memory. */
bool dlp_feat_mha(dlp_feat_graph *fg, const dlp_graph *g,
                  const dlp_feat_uses *u);

/* Whether n is a Linear layer with a bias as exported: a Gemm with its C
 * input, or the Add / Sub of a constant to the output of a MatMul by a
 * constant weight (feat_kern.c). PyTorch runs those through cuBLASLt
 * with the bias in the epilogue. */
bool dlp_feat_linear_bias(const dlp_graph *g, const dlp_node *n);

/* Replays PyTorch's CUDA caching allocator over n tensors in order
 * (elems[i] elements; isfloat[i]: a float parameter, 4 bytes at the build;
 * else esize[i] bytes each): the build at float, then Module.to(half).
 * out[0]: allocated - requested bytes after the build, out[1] after the
 * cast. 0, or -1 when out of memory (feat_alloc.c). */
int dlp_feat_alloc_slack(const int64_t *elems, const uint8_t *esize,
                         const uint8_t *isfloat, size_t n, double out[2]);

/* The strides eager PyTorch gives g's activations and the copies they
 * force (feat_layout.c). act[v]: v is a device tensor of the walk;
 * sdpa[i]: node i belongs to an attention pattern whose own rule counts
 * its products' blocks, 2 for the PV product of a fused kernel (its
 * output laid out [B, S, heads, D]). Sets copy[v] = 1 where a Reshape,
 * Flatten, Squeeze or Unsqueeze cannot view its input (reshape copies
 * into a new block) and adds to tmp[i] the bytes (at the graph's types)
 * of the contiguous copies node i makes of its inputs while it runs
 * (at::matmul, layer_norm, softmax); with cl, cl[v] is 1 for a 4-D
 * activation whose strides are channels-last (a transposed token tensor
 * viewed as [B, C, H, W]: CoaT's, which PyTorch's NHWC kernels take); with
 * mm, mm[2 i + k] is the bytes of at::matmul's copy of MatMul i's operand k
 * (0: none; the training count's saved blocks). 0, or -1 when out of
 * memory. */
int dlp_feat_layout(const dlp_graph *g, const uint8_t *act, const uint8_t *sdpa,
                    uint8_t *copy, double *tmp, uint8_t *cl, double *mm);
/* The strides nst of a view of a tensor (sizes osz, strides ost, rank r)
 * as sizes nsz (rank m), as ATen's computeStride finds them; false when no
 * view exists (Tensor.view raises, reshape copies). feat_layout.c. */
bool dlp_feat_view_strides(const int64_t *osz, const int64_t *ost, int r,
                           const int64_t *nsz, int m, int64_t *nst);

/* Fills fg->eager_kern / half_kern and their totals from g and its
 * readers u (feat_kern.c); false when out of memory. Called by
 * dlp_feat_graph_build. */
bool dlp_feat_count_kernels(dlp_feat_graph *fg, const dlp_graph *g,
                            const dlp_feat_uses *u);

/* Analytical roofline of the graph under c (ms). */
typedef struct {
    double compute_ms;      /* sum of node FLOPs / peak */
    double memory_ms;       /* sum of node bytes / bandwidth */
    double roofline_ms;     /* sum over nodes of max(compute, memory) */
    double launch_ms;       /* nodes x launch latency */
    double kernel_ms;       /* sum over nodes of max(compute, memory,
                               launch latency x its eager kernels): a
                               floor per kernel (feat_kern.c) */
    double kernels;         /* eager kernels at the precision (feat_kern.c),
                               the fp16 clamps' included */
    double weights_mib;     /* weight bytes at the precision */
    double mem_weights_mib; /* parameter bytes at the precision, as the
                               memory estimate counts them (mem_weight_bytes) */
    double buffers_mib;     /* integer buffers (buffer_bytes) */
    double peak_act_mib;    /* peak live activations at the precision */
    double mem_mib;         /* inference peak allocated memory estimate
                               for c's runtime (docs/COST.md): weights,
                               buffers and cached biases + the allocator's
                               slack around them (feat_alloc.c) + peak live
                               activations + cuBLAS workspaces */
    /* where the time goes, per op category (the order of
     * dlp_feat_graph.cat[]): roofline ms (sum over its nodes of
     * max(compute, memory)) and kernel nodes; the tree predictor's graph
     * features (src/tree/tree_graph.c) */
    double roof_cat_ms[DLP_FEAT_NCAT], kernels_cat[DLP_FEAT_NCAT];
    /* and of the convolutions, two kinds whose kernels (above all their
     * backward) run far from the roofline: grouped ones (group > 1:
     * depthwise, RegNet's, ResNeXt's) and large-kernel ones (kernel area
     * >= 25: ConvNeXt's 7x7 depthwise, stems); roofline ms and kernels */
    double roof_gconv_ms, kernels_gconv, roof_kconv_ms, kernels_kconv;
} dlp_feat_roofline;

/* cuBLAS workspace PyTorch allocates through its caching allocator, once
 * per (handle, stream), on Hopper: 4096 KiB x 8 = 32 MiB (the default of
 * CUBLAS_WORKSPACE_CONFIG for sm90 in PyTorch). The data agree: eager rows
 * of matmul graphs with tiny activations sit 32 MiB above weights +
 * activations. */
#define DLP_MEM_CUBLAS_WS_MIB 32.0
/* Graph runtime: the collector warms up on a side stream (one more
 * workspace, alive from the start) and captures on another stream (one
 * more, allocated when the first matmul is captured). Each adds 33 MiB in
 * the data: the modal graph - eager difference is 33.0 MiB for CNNs whose
 * only matmul is the last Gemm (163 of 557 pairs) and 66.0 MiB for
 * transformers (two workspaces live with the activations). */
#define DLP_MEM_GRAPH_WS_MIB 33.0
/* cuBLASLt workspace: PyTorch runs a Linear layer with a bias through
 * cuBLASLt (bias in the GEMM epilogue), whose workspace of 1 MiB comes
 * from the caching allocator once per stream and stays. Evidence
 * (tools/collect/probe_slack.py, H200, 44 eager configurations, twenty-
 * eighth session): a 1.0 MiB block live before the measured call in every
 * model with such a layer whose list reaches 1 MiB (BERT, DistilBERT,
 * DeBERTa, ViT / DeiT / Mixer, CNNs with a Linear head), none in T5 and
 * LLaMA (Linear layers without bias); the estimate's residual on the
 * smallest rows was +1.0-1.1 MiB. Eager: one; CUDA graph: two (the
 * warm-up's and the capture's streams; 1 gave inference 3.56%, 2 3.47%,
 * 3 3.56% for the CUDA-graph rows). Inference estimate, lmo, 17,133 rows:
 * 4.25 -> 3.79% (eager 4.64 -> 4.10, graph 3.86 -> 3.47); LLM 2.79 ->
 * 2.46% (eager 2.84 -> 2.42). */
#define DLP_MEM_CUBLASLT_WS_MIB 1.0
#define DLP_MEM_GRAPH_LT_WS 2
/* cuDNN convolution workspace (PyTorch, cudnn.benchmark off, NCHW
 * tensors): while a Conv runs, this factor x (its input + its output
 * bytes) is live on top of the activations. Inference (conv_extra_bytes in
 * feat.c): grouped convs at any precision, dense ones at fp16 / bf16
 * unless pointwise with stride 1; dense fp32 and depthwise convs none.
 * Training counts it for every conv that is not depthwise.
 * Evidence, first (inference rows, y - estimate without it): fp16 VGG,
 * GoogLeNet, Inception, SqueezeNet, ResNet rows sit 1.00-1.05x the largest
 * conv's input + output above the liveness peak (vgg16 b32 fp16: +394 MiB
 * for a 196+196 MiB conv); RegNet's grouped convs the same (regnet_x_32gf
 * b64 fp16: +1034 MiB). Then (twenty-eighth session) per convolution:
 * tools/collect/probe_convws.py on an H200, 120 configurations, 9,310
 * conv calls, allocator peak during the call - before - output, over
 * input + output: fp32 dense 3x3 stride 1 zero for 73% (median 0), 1x1
 * 66%, strided 85%; fp32 grouped 3x3 median 1.00; fp16 dense 3x3 median
 * 1.56 (1.00 at p10), strided 1.00, 1x1 stride 1 zero for 74%; grouped
 * 1.00. fp32's heavy tail (p90 22.9x, max 288x: FFT / Winograd workspaces
 * the heuristics pick, resnet18 b32 [32,128,36,36] 661 MiB for 40 MiB of
 * input + output) follows no size rule and is not modelled. With the
 * folded-BatchNorm block (folded_bn_bytes) the inference estimate's MAPE,
 * lmo, 17,123 rows: 4.88 -> 4.26% (fp32 5.51 -> 4.75, fp16 4.84 ->
 * 4.21; the per-class medians 1.5 for half 3x3: 4.41, dropping strided
 * or grouped half convs 4.34-4.47, fp32 dense 0.25: 4.25). */
#define DLP_MEM_CONV_WS_FACTOR 1.0
/* A dense 7x7 stride-1 convolution of a 3-channel image (DLA's stem,
 * [N,3,H,W] -> 16 / 32 channels) at fp16 with N > 1 takes a cuDNN
 * workspace per image that follows the resolution in steps, not its
 * input + output: data/probes/20261130-convws-dla-stem.jsonl.xz (H200,
 * cudnn.benchmark off) measured 8.06-8.12 MiB per image at 128, 160, 192
 * and 224 px (dla46x_c b8 / b64, dla60x b32, dla34 b16), 2.03 at 96 px,
 * 2.62 at 256 px, none at batch 1 or at bf16. Outside 96-256 px the
 * general rule (conv_extra_bytes) stands: the probe has no size there. */
#define DLP_MEM_FP16_STEM_WS_MIB 8.09
#define DLP_MEM_FP16_STEM_WS_96_MIB 2.03
#define DLP_MEM_FP16_STEM_WS_256_MIB 2.62
/* CUDA-graph runtime, bidirectional attention masks: Hugging Face drops
 * an all-ones padding mask before SDPA only when it may look at the data,
 * not while a CUDA graph is captured; BERT-style encoders then build the
 * [B, 1, S, S] mask and run attention with the scores materialised. The
 * measured graph-runtime peak sits this many bytes per element of the
 * largest attention's scores ([B, heads, Sq, Sk]) above the liveness
 * estimate, in either precision: (measured - estimate) / score elements is
 * 9.2-10.2 bytes in fp16 and 8.3-9.2 in fp32 on the BERT / RoBERTa /
 * DistilBERT graph rows with at least 48 MiB of scores (inference, both
 * cards; scores, mask and softmax in float: about 9), against 0.7-1.5 for
 * causal decoders (GPT-2, whose mask needs no data check). Eager rows
 * match the estimate without it. */
#define DLP_MEM_GRAPH_BIDIR_SCORE_BYTES 9.0
/* CUDA-graph runtime, causal decoders (twenty-first session,
 * tools/collect/probe_memory.py on one H200: the allocator's blocks live
 * at the captured peak, by allocating frame). Under capture Hugging Face
 * builds the causal mask the eager call leaves to is_causal: a bool
 * [B, 1, Sq, Sk] block (masking_utils.sdpa_mask), live through the whole
 * forward, and inside each SDPA call the memory-efficient kernel's
 * additive copy of it at the model's precision, live while that call
 * runs. Llama variant bf16 32 x 2048: 128 MiB bool + 256 MiB bf16; OLMo-2
 * fp32 32 x 2048: 128 + 512; Qwen3 bf16 64 x 1024: 64 + 128. The
 * estimate adds this many bytes per mask element through the forward,
 * and the precision's element size per mask element at the attention. */
#define DLP_MEM_GRAPH_CAUSAL_MASK_BYTES 1.0
/* Eager runtime, fp32, grouped-query attention (fewer key-value heads than
 * query heads): Hugging Face calls SDPA with enable_gqa=True and no mask
 * (is_causal); no fused kernel takes that in fp32 (flash wants half
 * precision, the memory-efficient kernel no GQA), so PyTorch runs the math
 * path: float scores, float softmax and a bool mask of the scores' shape,
 * all live at once, 9 bytes per score element (the same probe: Llama
 * variant fp32 8 x 1024, 4 heads over 1: 128 + 128 + 32 MiB; Gemma variant
 * fp32 8 x 2048: 256 + 256 + 64 MiB). Measured rows of GQA models in eager
 * fp32 sat up to 4.3x over the estimate without it (granite, llama, gemma,
 * qwen2 variants); with equal head counts the fused kernel runs. */
#define DLP_MEM_MATH_SDPA_BYTES 9.0
/* Attention with an additive bias from a weight (T5's relative position
 * bias) runs unfused with its scores materialised (counted by the
 * liveness walk at the precision); Hugging Face's T5 also computes the
 * softmax in float (softmax(scores.float()).type_as(scores)), a no-op in
 * the float32 export, so at fp16 / bf16 a float copy of the scores lives
 * on top: measured - estimate is 3.9-4.8 bytes per score element on the
 * fp16 T5 rows with S >= 512 (eager), fp32 rows match without it. Only
 * for graphs with a sequence dimension: torchvision's Swin and MaxViT
 * (relative position bias tables too) keep their softmax in the model's
 * precision and got worse with it. */
#define DLP_MEM_BIAS_SOFTMAX_F32_BYTES 4.0
/* The same attention as PyTorch runs it today (twenty-first session,
 * tools/collect/probe_memory.py on one H200): Hugging Face's T5 passes
 * the position bias to SDPA as a float mask, and the math path runs it
 * with float scores, a float softmax and a bool block of the scores'
 * shape (_safe_softmax's all-masked-row check) live at once: 9 bytes per
 * score element, which the walk's scores, biased scores and softmax at the
 * precision plus the float copy above already covered (a bool term on top
 * made the T5 rows worse: eager fp32 5.40% -> 6.43% MAPE; the twenty-
 * seventh session found the "biased scores" to be the bias broadcast to
 * the batch, which PyTorch never builds: DLP_MEM_BIAS_BOOL_BYTES). At half
 * precision the path also upcasts query, key, value and its output to
 * float, 4 blocks of 4 bytes per query element [B, heads, Sq, D] (T5
 * variant fp16 64 x 256, 32 heads of 64: 512 + 512 MiB of float scores
 * and 5 x 128 MiB). Under capture the bias is also expanded to the batch
 * at the model's precision (sdpa_attention.create_position_bias_mask:
 * 256 MiB there). T5 rows, roofline memory MAPE held out: eager fp16
 * 8.05% -> 2.91%, graph fp16 10.10% -> 2.41%, graph fp32 7.20% -> 3.73%. */
#define DLP_MEM_BIAS_MATH_HALF_Q_BYTES 16.0
/* The bool block of that math path (_safe_softmax), counted now on top of
 * the walk's scores and softmax: the walk no longer counts the bias the
 * exporter broadcasts to the batch through a mask the model never builds
 * (alias_unmasked_bias in feat.c). Allocator history at the peak of 6
 * Hugging Face T5 encoder variants (twenty-seventh session, H200, eager;
 * 5 at fp32 with heads of 32 and 64, 1 at fp16): the position bias
 * [1, heads, S, S] once, float scores, float softmax and a bool block of
 * [B, heads, S, S] (fp32
 * 32 x 1,024, 12 heads: 1,536 + 1,536 + 384 MiB, 9 bytes per score
 * element; fp16 16 x 512: 192 + 192 + 48 MiB), and the layer's [B, S, D]
 * blocks. The walk counted a batch-sized bias besides: fp32 rows with
 * 32-dim heads sat 2.4 bytes per score element over. */
#define DLP_MEM_BIAS_BOOL_BYTES 1.0
/* Time of the same attention at half precision (schema 8; docs/COST.md).
 * Kernel traces of all 7 fp16 eager T5 encoder forwards in data/ (batch
 * 1, sequence 128, L = 6-15 layers, H100 and H200) show per layer:
 *   - 2 GEMMs in float (sm80_xmma_gemm_f32f32_..._ffma: CUDA-core FMA, not
 *     tensor cores; QK^T and PV, 6.5-7.8% of kernel time), 1 float softmax
 *     and the float bias Add around them: PyTorch's math SDPA upcasts q, k,
 *     v to float. Those nodes (half_f32) run at the device's fp32 peak
 *     with 4-byte elements, at fp16 and bf16 (bf16 not traced);
 *   - 3 boolean reductions: 1 all() over the float scores inside that
 *     attention (isneginf, its guard against fully masked rows; the
 *     exported graph has no node for it, 1.8-2.1% of the time), and 2 any()
 *     reductions, 1 per sub-layer (attention, feed-forward), of Hugging
 *     Face's fp16-only clamp after the residual Add: isinf(h).any(), where
 *     and clamp (6.9-11.5% of the time). Each clamp launches the 8 kernels
 *     counted below, over the [B, S, D] hidden states: abs (2 + 2 bytes an
 *     element), == inf (2 + 1), any (1), clamp (2 + 2), and two fills, a
 *     where and a neg of one element. torch.float16 only: not at bf16. */
#define DLP_FP16_CLAMP_BYTES 12.0
#define DLP_FP16_CLAMP_KERNELS 8
/* Training: the backward of the convolution with the largest workspace
 * holds, on top of the saved activations, its output gradient and its
 * input gradient (input + output bytes: one workspace's worth) and its
 * own cuDNN workspace, while the saved blocks of the layers after it are
 * already freed: this many workspaces. It was 2 while the saved count
 * missed in-place activations' clones and MaxPool indices (training
 * memory MAPE, roofline, lmo, 112 rows: 19.75% -> 17.29%); with them
 * (ninth session, 733 rows) 1: the estimate went over the measurement at
 * batch 64 (ResNet 1.10x, VGG 1.14x) and under it at batch 8. */
#define DLP_MEM_TRAIN_CONV_WS 1.0
/* Training: two cuBLAS workspaces, the forward's and the backward's
 * (autograd runs the backward on its own device thread, and PyTorch keeps
 * a cuBLAS handle, so a workspace, per thread). The training estimate was
 * 50-90 MiB under the measurement for small CNNs at batch 8 (ShuffleNetV2
 * 0.67x, ResNet 0.84x). Training memory MAPE (roofline, lmo, 733 rows)
 * 10.08% -> 7.27% with this and one conv workspace (one conv workspace
 * alone 10.16%, with 32 MiB 8.40%, with 96 MiB 7.10%). */
#define DLP_MEM_TRAIN_BLAS_WS_MIB (2 * DLP_MEM_CUBLAS_WS_MIB)
/* An initializer of at most this many elements is a constant, not a
 * weight, when deciding whether an attention mask is computed from shapes
 * and constants only (feat.c): exporters store scalars (-inf, 0, the
 * scale) as initializers; T5's relative position bias table (32 buckets x
 * heads) is a weight, and the bias it yields is real. */
#define DLP_MEM_MASK_CONST_MAX 16
/* Weights of the memory estimate (feat.c: param_bytes; docs/COST.md):
 * weight standardisation (timm's StdConv2d / ScaledStdConv2d, BiT and
 * NFNet: F.batch_norm(weight.reshape(1, out, -1), training=True)) exports
 * as a training-mode BatchNormalization whose mean / variance are
 * computed by ReduceMean / Sub / Mul from a second, constant-folded
 * (transposed) copy of the same weight. That copy is no tensor in
 * PyTorch: an initializer reached from a weight BatchNormalization's
 * statistics inputs with the weight's element count is not counted (up to
 * this many nodes back). nfnet_f3: 418.7 M initializer elements against
 * 254.9 M parameters; 254.9 M without the copies. */
#define DLP_MEM_WSTD_DEPTH 6
void dlp_feat_roofline_of(const dlp_feat_graph *fg, const dlp_pred_config *c,
                          dlp_feat_roofline *out);
/* The same with ws_peak[0] / [1] (bytes, NULL: no workspace model; 0:
 * none counted): the largest live bytes plus a convolution's predicted
 * workspace before the first cuBLAS node and from it on
 * (dlp_convws_roofline), raising the walk's peaks; at half precision they
 * raise peak_half_nodense_bytes in place of the walk's own rule. */
void dlp_feat_roofline_ws(const dlp_feat_graph *fg, const dlp_pred_config *c,
                          const double *ws_peak, dlp_feat_roofline *out);
/* Its mem_mib alone (no node loop): what the workspace model's decision
 * compares, once per candidate convolution. */
double dlp_feat_inference_mem_mib(const dlp_feat_graph *fg,
                                  const dlp_pred_config *c,
                                  const double *ws_peak);

/* The training step's MiB at the forward of the node at position t of
 * the graph's order (fg->train_curve) with ws_bytes of convolution
 * workspace (bytes at the step's precision) beside it: the weights and
 * momentum (2 W), at fp16 / bf16 the half copies of the weights made so
 * far, the saved blocks made so far at the step's scale, the workspace,
 * the buffers and the two cuBLAS workspaces; r is fg's roofline under c.
 * 0 when fg has no training curve. */
double dlp_feat_train_fwd_mib(const dlp_feat_graph *fg, const dlp_pred_config *c,
                              const dlp_feat_roofline *r, int t,
                              double ws_bytes);
/* The training step's MiB at the backward of the node at position t, as
 * the walk's peak counts it (weights, momentum, the gradients made by
 * then, the half copies still held, the blocks live; the buffers and
 * cuBLAS workspaces), with ws_bytes of convolution workspace (bytes at
 * the step's precision) in place of the walk's rule (the point's ws). 0
 * when fg has no training curve or t is outside it. */
double dlp_feat_train_bwd_mib(const dlp_feat_graph *fg, const dlp_pred_config *c,
                              const dlp_feat_roofline *r, int t,
                              double ws_bytes);

/* The analytic peak-memory estimate of c's mode (MiB): the inference
 * liveness estimate (dlp_feat_roofline.mem_mib) for inference and LLM
 * rows; 3x weights (weights, gradients, momentum) + the activation blocks
 * autograd saves for backward + DLP_MEM_TRAIN_CONV_WS x the largest conv
 * workspace + DLP_MEM_TRAIN_BLAS_WS_MIB for training (docs/COST.md), or
 * the graph's train_ws_mib when a workspace model put a larger one there. */
double dlp_feat_mem_estimate_mib(const dlp_feat_graph *fg,
                                 const dlp_pred_config *c);
/* The same from the roofline r of fg under c (dlp_feat_roofline_of), for
 * callers that have it already. */
double dlp_feat_mem_estimate_of(const dlp_feat_graph *fg,
                                const dlp_pred_config *c,
                                const dlp_feat_roofline *r);

/* Effective device figures of c (MIG / SM partition applied). */
typedef struct {
    double sm_share, mem_share;
    double peak_tc_flops, peak_simt_flops;  /* FLOP/s for the precision */
    double peak_fp32_flops;                 /* FP32 CUDA-core FLOP/s */
    double mem_bw;                          /* bytes/s */
    double launch_s;
    double mem_mib;
} dlp_feat_device;
void dlp_feat_device_of(const dlp_pred_config *c, dlp_feat_device *out);
/* Roofline time of every node of fg under c, microseconds: max(FLOPs /
 * peak, bytes / bandwidth), the node columns' third roofline feature
 * before its log (kind kern's split weights and target base). */
/* The roofline time of shape s at precision p on d, microseconds:
 * max(FLOPs / the precision's peak, bytes / bandwidth) (feat_optime.c). */
double dlp_op_shape_roof_us(const dlp_op_shape *s, dlp_precision p,
                            const dlp_feat_device *d);
void dlp_feat_node_roofline_us(const dlp_feat_graph *fg,
                               const dlp_pred_config *c, double *out);

/* node features out[N, DLP_FEAT_NODE_DIM] for config c */
void dlp_feat_nodes(const dlp_feat_graph *fg, const dlp_pred_config *c,
                    float *out);
/* the rows of nodes [lo, hi) only: out[hi - lo, DLP_FEAT_NODE_DIM] (a
 * caller that keeps a few columns of each row need not hold all N rows:
 * ~1 KB a node, 2 MB for a 2,000-node graph, each page a fault) */
void dlp_feat_nodes_range(const dlp_feat_graph *fg, const dlp_pred_config *c,
                          int lo, int hi, float *out);
/* static features out[DLP_FEAT_STATIC_DIM] for config c */
void dlp_feat_static(const dlp_feat_graph *fg, const dlp_pred_config *c,
                     float *out);

#endif /* DLP_FEAT_H */
