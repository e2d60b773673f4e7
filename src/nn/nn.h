/*
 * nn.h — internal to libdlperf. The graph-learning engine: graphs and
 * batches, layers (forward + backward side by side), losses, optimizers,
 * schedules, the parameter store and the model file format.
 *
 * Conventions (docs/NN.md has the long form):
 *  - nn_real is float; compiling with -DDLP_NN_DOUBLE makes it double (the
 *    gradient-check test builds the engine that way by #including the .c
 *    files into its own translation unit).
 *  - Tensors are plain row-major arrays; the caller owns every buffer. A
 *    layer is a pair `x_forward(out, saved.., in, params.., dims)` /
 *    `x_backward(din, dparams.., dout, saved.., in, params.., dims)`.
 *    Outputs come first, gradients carry a `d` prefix, and every backward
 *    ACCUMULATES (+=) into din and the parameter gradients, so a value used
 *    twice gets the sum of its gradients. Callers zero gradients.
 *  - Shapes are in the comments: N nodes, E edges, G graphs, I/O/C/H
 *    feature sizes.
 *  - No hidden state: randomness comes from a caller-owned dlp_nn_rng; the
 *    one process-wide setting is the thread count, set explicitly with
 *    dlp_nn_set_threads (it also sets OpenBLAS's). Same seed + same thread
 *    count give bit-identical results.
 */
#ifndef DLP_NN_H
#define DLP_NN_H

#include "../core/core.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef DLP_NN_DOUBLE
typedef double nn_real;
#else
typedef float nn_real;
#endif

/* ---- random numbers (nn_rng.c) ----------------------------------------- */
/* xoshiro256** seeded through splitmix64: same seed, same stream. */
typedef struct {
    uint64_t s[4];
} dlp_nn_rng;

void dlp_nn_rng_seed(dlp_nn_rng *r, uint64_t seed);
uint64_t dlp_nn_rng_u64(dlp_nn_rng *r);
double dlp_nn_rng_uniform(dlp_nn_rng *r);          /* [0, 1) */
double dlp_nn_rng_normal(dlp_nn_rng *r);           /* N(0, 1) */
uint64_t dlp_nn_rng_below(dlp_nn_rng *r, uint64_t n); /* [0, n), n > 0 */
void dlp_nn_rng_shuffle(dlp_nn_rng *r, int32_t *a, int n);

/* ---- threads (nn_thread.c) --------------------------------------------- */
/* Runs fn(ctx, lo, hi) over [0, n) split into n_threads contiguous chunks
 * (the caller's thread runs the first chunk). Each index is processed by
 * exactly one thread, so results never depend on the thread count. Falls
 * back to one thread if a thread cannot be created. */
typedef void (*dlp_nn_range_fn)(void *ctx, int lo, int hi);
void dlp_nn_parallel_for(int n_threads, int n, dlp_nn_range_fn fn, void *ctx);
/* Thread count for the dense products (OpenBLAS) and our own kernels. */
void dlp_nn_set_threads(int n);
int dlp_nn_threads(void);
/* Threads worth using for `work` multiply-adds (1 below ~64k: a thread
 * start costs more than the work). */
int dlp_nn_threads_for(size_t work);
/* A persistent pool of worker threads, owned by whoever creates it (a
 * model keeps one; nothing global): dlp_nn_workers_new(T) starts T-1 threads
 * that sleep between runs; _delete wakes and joins them (NULL is a no-op).
 * dlp_nn_workers_run is dlp_nn_parallel_for on the pool: the same fixed
 * chunks, so the same results, without starting threads per call. A NULL
 * pool (or one whose threads could not start) falls back to
 * dlp_nn_parallel_for. One run at a time per pool. _new returns NULL only
 * when out of memory. */
typedef struct dlp_nn_workers dlp_nn_workers;
dlp_nn_workers *dlp_nn_workers_new(int n_threads);
void dlp_nn_workers_delete(dlp_nn_workers *w);
int dlp_nn_workers_count(const dlp_nn_workers *w); /* threads incl. caller */
void dlp_nn_workers_run(dlp_nn_workers *w, int n_threads, int n,
                        dlp_nn_range_fn fn, void *ctx);

/* ---- graphs and batches (nn_graph.c) ----------------------------------- */
/* One graph as given by the caller, as an edge index (src[k] -> dst[k]) or,
 * when ptr is not NULL, as a CSR by source: node u's edges go to
 * dst[ptr[u] .. ptr[u+1]-1] (src unused, ptr[n_nodes] == n_edges). */
typedef struct {
    int n_nodes, n_edges;
    const int32_t *src, *dst;   /* [n_edges], 0 <= id < n_nodes */
    const int32_t *ptr;         /* [n_nodes+1] or NULL */
} dlp_nn_graph_desc;

/* A (batch of) graph(s) in the form the layers read. Graphs are packed
 * block-diagonally: nodes of graph g are graph_ptr[g] .. graph_ptr[g+1]-1.
 * Messages flow src -> dst; in_* is the CSR by destination (what a node
 * aggregates), out_* the CSR by source (used by backward passes to gather
 * instead of scatter, so both directions parallelise without atomics). */
typedef struct {
    int n_nodes, n_edges, n_graphs;
    int32_t *in_ptr;     /* [N+1] */
    int32_t *in_src;     /* [E] source of each in-edge, grouped by dst */
    int32_t *out_ptr;    /* [N+1] */
    int32_t *out_dst;    /* [E] destination of each out-edge, grouped by src */
    int32_t *out_eid;    /* [E] index of that edge in the in-CSR order */
    int32_t *graph_ptr;  /* [G+1] */
    int32_t *node_graph; /* [N] graph of each node */
    int32_t *loops;      /* [N] self-loop edges at each node */
    /* [N] borrowed, not owned: per-node weights summing to 1 over each
     * graph, read by DLP_NN_POOL_MEAN_COST only (NULL otherwise) */
    const float *node_w;
} dlp_nn_graph;

enum { DLP_NN_UNDIRECTED = 1 }; /* add the reverse of every non-loop edge */

/* Packs graphs[idx[0..count-1]] (idx NULL: 0..count-1) into one batch;
 * every idx entry must index `graphs`. Node ids, counts and CSR pointers
 * are validated. */
dlp_status dlp_nn_graph_build(dlp_nn_graph *g, const dlp_nn_graph_desc *graphs,
                              const int32_t *idx, int count, unsigned flags,
                              dlp_error *err);
void dlp_nn_graph_free(dlp_nn_graph *g);

/* ---- parameter store (nn_params.c) ------------------------------------- */
/* All parameters of a model in one block, the gradients in a second block
 * of the same layout and the optimizer state in two more: the optimizer is
 * one flat loop and saving a model is one array per tensor. Tensors are
 * declared first (dlp_nn_params_add), then dlp_nn_params_alloc makes the
 * blocks; dlp_nn_params_w/g give a tensor's views. */
#define DLP_NN_MAX_TENSORS 256
#define DLP_NN_NAME_MAX 48
typedef struct {
    char name[DLP_NN_NAME_MAX];
    size_t off, n;       /* offset and element count in the blocks */
    int rows, cols;      /* shape (cols = 1 for vectors) */
} dlp_nn_tensor_info;

typedef struct {
    dlp_nn_tensor_info t[DLP_NN_MAX_TENSORS];
    int n_tensors;
    size_t n;            /* total elements */
    nn_real *w, *g;      /* weights, gradients [n] */
    nn_real *m, *v;      /* optimizer state [n] (zeroed) */
    long step;           /* optimizer step count */
} dlp_nn_params;

/* Returns the tensor index, or -1 when full / name too long / after alloc. */
int dlp_nn_params_add(dlp_nn_params *p, const char *name, int rows, int cols);
/* weights and the training blocks (gradients, optimizer state), zeroed */
dlp_status dlp_nn_params_alloc(dlp_nn_params *p, dlp_error *err);
/* the weights alone, zeroed (g, m, v NULL): a model that only predicts */
dlp_status dlp_nn_params_alloc_weights(dlp_nn_params *p, dlp_error *err);
/* the training blocks, zeroed, when missing (a loaded model to train) */
dlp_status dlp_nn_params_alloc_grads(dlp_nn_params *p, dlp_error *err);
void dlp_nn_params_free(dlp_nn_params *p);
nn_real *dlp_nn_params_w(dlp_nn_params *p, int t);
nn_real *dlp_nn_params_g(dlp_nn_params *p, int t);
int dlp_nn_params_find(const dlp_nn_params *p, const char *name);
void dlp_nn_params_zero_grad(dlp_nn_params *p);
/* Kaiming-uniform like torch.nn.Linear: U(-1/sqrt(fan_in), 1/sqrt(fan_in)). */
void dlp_nn_init_uniform(nn_real *w, size_t n, double bound, dlp_nn_rng *r);

/* ---- dense layers (nn_linear.c) ---------------------------------------- */
/* C[M,N] = alpha op(A) op(B) + beta C, row-major, through OpenBLAS (sgemm
 * or dgemm by nn_real); empty products are no-ops. */
void dlp_nn_gemm(bool ta, bool tb, int M, int N, int K, nn_real alpha,
                 const nn_real *A, int lda, const nn_real *B, int ldb,
                 nn_real beta, nn_real *C, int ldc);
/* out[N,O] = in[N,I] @ W[O,I]^T + b[O] (b may be NULL). */
void dlp_nn_linear_forward(nn_real *out, const nn_real *in, const nn_real *W,
                           const nn_real *b, int N, int I, int O);
/* din (may be NULL) += dout @ W; dW += dout^T @ in; db (may be NULL) +=
 * column sums of dout. */
void dlp_nn_linear_backward(nn_real *din, nn_real *dW, nn_real *db,
                            const nn_real *dout, const nn_real *in,
                            const nn_real *W, int N, int I, int O);

/* ---- message passing ---------------------------------------------------- */
/* Mean of in-neighbour features: agg[i] = mean_{j->i} x[j] (0 if none). */
void dlp_nn_mean_aggregate_forward(nn_real *agg, const nn_real *x,
                                   const dlp_nn_graph *g, int F);
void dlp_nn_mean_aggregate_backward(nn_real *dx, const nn_real *dagg,
                                    const dlp_nn_graph *g, int F);
/* Sum of in-neighbour features. */
void dlp_nn_sum_aggregate_forward(nn_real *agg, const nn_real *x,
                                  const dlp_nn_graph *g, int F);
void dlp_nn_sum_aggregate_backward(nn_real *dx, const nn_real *dagg,
                                   const dlp_nn_graph *g, int F);

/* GraphSAGE (nn_sage.c), like PyG SAGEConv(aggr='mean', root_weight=True):
 *   out = agg @ Wl^T + bl + x @ Wr^T, then optionally out /= max(|out|, 1e-12)
 * Saved for backward: agg[N,I]; when normalize, pre[N,O] and nrm[N]. */
typedef struct {
    int I, O;
    bool normalize;
} dlp_nn_sage_cfg;
void dlp_nn_sage_forward(nn_real *out, nn_real *agg, nn_real *pre,
                         nn_real *nrm, const nn_real *x, const nn_real *Wl,
                         const nn_real *bl, const nn_real *Wr,
                         const dlp_nn_graph *g, dlp_nn_sage_cfg c);
void dlp_nn_sage_backward(nn_real *dx, nn_real *dWl, nn_real *dbl,
                          nn_real *dWr, nn_real *dagg_ws, nn_real *dpre_ws,
                          const nn_real *dout, const nn_real *out,
                          const nn_real *agg, const nn_real *nrm,
                          const nn_real *x, const nn_real *Wl,
                          const nn_real *Wr, const dlp_nn_graph *g,
                          dlp_nn_sage_cfg c);
/* The same layer, as models run it: the aggregation on the caller's worker
 * pool, fused with the bias fill (forward) and with the input-gradient
 * accumulation (backward), and optionally
 *  - dx_write: backward writes dx instead of adding to it (the caller need
 *    not zero it first);
 *  - relu_in[N,I]: backward then masks dx by the ReLU that produced x, i.e.
 *    leaves d(pre-activation of the previous layer): dx = relu_in > 0 ? dx : 0.
 * Results are bit-identical to dlp_nn_sage_forward / _backward followed by
 * the separate ReLU backward. e may be NULL (= all off). */
typedef struct {
    dlp_nn_workers *workers;
    bool dx_write;
    const nn_real *relu_in;
} dlp_nn_sage_exec;
void dlp_nn_sage_forward_ex(nn_real *out, nn_real *agg, nn_real *pre,
                            nn_real *nrm, const nn_real *x, const nn_real *Wl,
                            const nn_real *bl, const nn_real *Wr,
                            const dlp_nn_graph *g, dlp_nn_sage_cfg c,
                            const dlp_nn_sage_exec *e);
void dlp_nn_sage_backward_ex(nn_real *dx, nn_real *dWl, nn_real *dbl,
                             nn_real *dWr, nn_real *dagg_ws, nn_real *dpre_ws,
                             const nn_real *dout, const nn_real *out,
                             const nn_real *agg, const nn_real *nrm,
                             const nn_real *x, const nn_real *Wl,
                             const nn_real *Wr, const dlp_nn_graph *g,
                             dlp_nn_sage_cfg c, const dlp_nn_sage_exec *e);

/* A one-hot categorical block at the front of a node's input row, passed
 * sparse: row n's first dim columns are base[k] + (k == cat[n]) * scale[k]
 * (cat[n] < 0: none hot), the other I - dim are the dense x[n] (a
 * standardized one-hot: base = -mean / std, scale = 1 / std). The first
 * SAGE layer then multiplies only the dense columns; same results as the
 * dense layer on the full rows, up to rounding. */
typedef struct {
    int dim;
    const int32_t *cat;     /* [N], in [-1, dim) */
    const nn_real *scale;   /* [dim] */
    const nn_real *base;    /* [dim] */
} dlp_nn_cat;
/* values of the tables tab the two functions below need (dim, O) */
size_t dlp_nn_sage_cat_tab_size(int dim, int O);
/* The SAGE layer on [block | x]: x[N, I - dim], agg[N, I - dim] (the mean
 * of the dense columns, saved for backward); tab scratch. */
void dlp_nn_sage_forward_cat(nn_real *out, nn_real *agg, nn_real *pre,
                             nn_real *nrm, nn_real *tab, const nn_real *x,
                             const dlp_nn_cat *cat, const nn_real *Wl,
                             const nn_real *bl, const nn_real *Wr,
                             const dlp_nn_graph *g, dlp_nn_sage_cfg c,
                             const dlp_nn_sage_exec *e);
/* Its weight gradients (accumulated; no input gradient: an input layer). */
void dlp_nn_sage_backward_cat(nn_real *dWl, nn_real *dbl, nn_real *dWr,
                              nn_real *tab, nn_real *dpre_ws,
                              const nn_real *dout, const nn_real *out,
                              const nn_real *agg, const nn_real *nrm,
                              const nn_real *x, const dlp_nn_cat *cat,
                              const dlp_nn_graph *g, dlp_nn_sage_cfg c,
                              const dlp_nn_sage_exec *e);

/* GCN (nn_gcn.c), like PyG GCNConv: one self-loop per node (existing loops
 * replaced), d_i = 1 + in-degree without loops,
 *   out_i = sum_{j in N(i)+i} h_j / sqrt(d_i d_j) + b,  h = x @ W^T.
 * Saved: h[N,O]. */
void dlp_nn_gcn_forward(nn_real *out, nn_real *h, const nn_real *x,
                        const nn_real *W, const nn_real *b,
                        const dlp_nn_graph *g, int I, int O);
void dlp_nn_gcn_backward(nn_real *dx, nn_real *dW, nn_real *db,
                         nn_real *dh_ws, const nn_real *dout, const nn_real *x,
                         const nn_real *W, const dlp_nn_graph *g, int I, int O);

/* GIN aggregation (nn_gin.c), like PyG GINConv before its MLP:
 *   z_i = (1 + eps) x_i + sum_{j->i} x_j.
 * The inner MLP is composed by the caller from linear/activation layers.
 * deps (may be NULL for a fixed eps) += sum_i dz_i . x_i. */
void dlp_nn_gin_forward(nn_real *z, const nn_real *x, nn_real eps,
                        const dlp_nn_graph *g, int F);
void dlp_nn_gin_backward(nn_real *dx, nn_real *deps, const nn_real *dz,
                         const nn_real *x, nn_real eps, const dlp_nn_graph *g,
                         int F);

/* GAT (nn_gat.c), like PyG GATConv(heads=H, concat, negative_slope,
 * dropout, add_self_loops=True): existing loops replaced by one per node.
 *   h = x @ W^T  (N, H*C);  a_s[n,h] = h[n,h,:].att_src[h,:];  same for a_d
 *   e_ij = leaky(a_s[j] + a_d[i] + ae_ij);  alpha = softmax over j in N(i)+i
 *   out_i = sum_j drop(alpha_ij) h_j   (concat: N,H*C; mean over heads: N,C)
 *   out += bias.
 * Edge slots: k < E for in-CSR edge k, E + i for node i's self-loop.
 * ae[(E+N), H] (may be NULL) are additive edge attention logits: with edge
 * features (LILOU's LSTM edge encodings) the caller computes them with a
 * Linear(edge_dim -> H), which spans PyG's lin_edge + att_edge product; it
 * also chooses the self-loop slots' values (PyG: mean of incoming). */
typedef struct {
    int I, C, H;
    bool concat;
    nn_real slope;   /* LeakyReLU negative slope, PyG default 0.2 */
    nn_real dropout; /* attention dropout probability (training only) */
} dlp_nn_gat_cfg;
typedef struct {         /* what forward saves, caller-allocated */
    nn_real *h;          /* [N, H*C] */
    nn_real *as, *ad;    /* [N, H] */
    nn_real *alpha;      /* [(E+N), H] softmax output */
    nn_real *mask;       /* [(E+N), H] dropout scale (0 or 1/(1-p)), or NULL */
} dlp_nn_gat_saved;
int dlp_nn_gat_out_dim(dlp_nn_gat_cfg c);
/* rng NULL: no dropout (eval). */
void dlp_nn_gat_forward(nn_real *out, dlp_nn_gat_saved s, const nn_real *x,
                        const nn_real *W, const nn_real *att_src,
                        const nn_real *att_dst, const nn_real *bias,
                        const nn_real *ae, const dlp_nn_graph *g,
                        dlp_nn_gat_cfg c, dlp_nn_rng *rng);
/* dh_ws [N, H*C], de_ws [(E+3N), H] scratch; dae (may be NULL) +=
 * d(loss)/d(ae). */
void dlp_nn_gat_backward(nn_real *dx, nn_real *dW, nn_real *datt_src,
                         nn_real *datt_dst, nn_real *dbias, nn_real *dae,
                         nn_real *dh_ws,
                         nn_real *de_ws, const nn_real *dout,
                         dlp_nn_gat_saved s, const nn_real *x,
                         const nn_real *W, const nn_real *att_src,
                         const nn_real *att_dst, const nn_real *ae,
                         const dlp_nn_graph *g, dlp_nn_gat_cfg c);

/* ---- LSTM over short sequences (nn_lstm.c) ----------------------------- */
/* torch.nn.LSTM(I, Hd), one layer, gate order i, f, g, o; zero initial
 * state. x[T, B, I]; Wih[4Hd, I], Whh[4Hd, Hd], bih, bhh [4Hd].
 * Saved: hs[T, B, Hd] (the output), cs[T, B, Hd], gates[T, B, 4Hd] (after
 * their nonlinearities). LILOU encodes edge k as the sequence
 * [x_src, x_dst]: T = 2, B = E (dlp_nn_edge_pairs builds x). */
void dlp_nn_lstm_forward(nn_real *hs, nn_real *cs, nn_real *gates,
                         const nn_real *x, const nn_real *Wih,
                         const nn_real *Whh, const nn_real *bih,
                         const nn_real *bhh, int T, int B, int I, int Hd);
/* dhs[T,B,Hd] is the gradient of every step's output (zero where unused).
 * ws: scratch of 4*B*Hd + 2*B*Hd elements. */
void dlp_nn_lstm_backward(nn_real *dx, nn_real *dWih, nn_real *dWhh,
                          nn_real *dbih, nn_real *dbhh, nn_real *ws,
                          const nn_real *dhs, const nn_real *hs,
                          const nn_real *cs, const nn_real *gates,
                          const nn_real *x, const nn_real *Wih,
                          const nn_real *Whh, int T, int B, int I, int Hd);
/* x[2, E, F]: step 0 = x[src], step 1 = x[dst] for each edge (in-CSR order);
 * backward scatters into dxn[N, F]. */
void dlp_nn_edge_pairs_forward(nn_real *xe, const nn_real *xn,
                               const dlp_nn_graph *g, int F);
void dlp_nn_edge_pairs_backward(nn_real *dxn, const nn_real *dxe,
                                const dlp_nn_graph *g, int F);

/* ---- normalisation (nn_norm.c) ------------------------------------------ */
/* BatchNorm1d over rows of x[N, C]. Train: batch statistics (biased var to
 * normalise, unbiased var into running_var), running = (1-m) running + m
 * batch. Eval: running statistics. Saved: mean[C], rstd[C]. */
void dlp_nn_batchnorm_forward(nn_real *out, nn_real *mean, nn_real *rstd,
                              const nn_real *x, const nn_real *gamma,
                              const nn_real *beta, nn_real *running_mean,
                              nn_real *running_var, bool train,
                              nn_real momentum, nn_real eps, int N, int C);
void dlp_nn_batchnorm_backward(nn_real *dx, nn_real *dgamma, nn_real *dbeta,
                               const nn_real *dout, const nn_real *x,
                               const nn_real *mean, const nn_real *rstd,
                               const nn_real *gamma, bool train, int N, int C);
/* LayerNorm over the last dim of x[N, C]. Saved: mean[N], rstd[N]. */
void dlp_nn_layernorm_forward(nn_real *out, nn_real *mean, nn_real *rstd,
                              const nn_real *x, const nn_real *gamma,
                              const nn_real *beta, nn_real eps, int N, int C);
void dlp_nn_layernorm_backward(nn_real *dx, nn_real *dgamma, nn_real *dbeta,
                               const nn_real *dout, const nn_real *x,
                               const nn_real *mean, const nn_real *rstd,
                               const nn_real *gamma, int N, int C);
/* GraphSizeNorm: out = x / sqrt(|V_g|) for every node of graph g. */
void dlp_nn_graphsizenorm_forward(nn_real *out, const nn_real *x,
                                  const dlp_nn_graph *g, int F);
void dlp_nn_graphsizenorm_backward(nn_real *dx, const nn_real *dout,
                                   const dlp_nn_graph *g, int F);

/* ---- activations and dropout (nn_act.c) -------------------------------- */
/* Branch-free ReLU pieces: activation signs are random, so a branch
 * mispredicts half the time (compilers keep the branch for x > 0 ? x : 0
 * because of NaN rules). keep(x) is all ones where x > 0, else zero. */
#ifdef DLP_NN_DOUBLE
typedef uint64_t nn_rbits;
#else
typedef uint32_t nn_rbits;
#endif
static inline nn_real dlp_nn_relu_mask(nn_real x, nn_real v) {
    nn_rbits b;
    memcpy(&b, &v, sizeof b);
    b &= (nn_rbits)0 - (nn_rbits)(x > 0);
    memcpy(&v, &b, sizeof b);
    return v; /* v where x > 0, else +0 */
}

typedef enum {
    DLP_NN_RELU, DLP_NN_LEAKY_RELU, DLP_NN_ELU, DLP_NN_GELU,
    DLP_NN_SIGMOID, DLP_NN_TANH
} dlp_nn_act;
/* out[n] = f(x); alpha: LeakyReLU slope / ELU alpha. out may alias x. */
void dlp_nn_act_forward(nn_real *out, const nn_real *x, size_t n,
                        dlp_nn_act a, nn_real alpha);
/* dx += f'(x) * dout (uses x and out; not valid when out aliased x for
 * GELU/ELU/LeakyReLU — keep x). */
void dlp_nn_act_backward(nn_real *dx, const nn_real *dout, const nn_real *x,
                         const nn_real *out, size_t n, dlp_nn_act a,
                         nn_real alpha);
/* PReLU with `np` slopes (1, or C for per-channel) on x[N, C]. */
void dlp_nn_prelu_forward(nn_real *out, const nn_real *x, const nn_real *a,
                          int np, int N, int C);
void dlp_nn_prelu_backward(nn_real *dx, nn_real *da, const nn_real *dout,
                           const nn_real *x, const nn_real *a, int np, int N,
                           int C);
/* Inverted dropout: mask[n] = 0 or 1/(1-p); out = x * mask. p = 0: mask 1. */
void dlp_nn_dropout_forward(nn_real *out, nn_real *mask, const nn_real *x,
                            size_t n, nn_real p, dlp_nn_rng *r);
void dlp_nn_dropout_backward(nn_real *dx, const nn_real *dout,
                             const nn_real *mask, size_t n);

/* ---- pooling and concatenation (nn_pool.c) ----------------------------- */
/* MEAN_COST: the mean and the weighted mean by g->node_w side by side,
 * out[G, 2F] (dlp_nn_pool_dim); the weights are the caller's, e.g. each
 * node's share of the graph's roofline time, so the second half is the
 * embedding of where the time goes, which a plain mean dilutes.
 * MEAN_LSE: the mean and, per feature f, log sum_n node_w[n] exp(x[n,f])
 * side by side, out[G, 2F]: with node_w the roofline shares, the log of
 * the graph's time over its roofline time if node n runs exp(x[n,f])
 * times slower than its roofline, i.e. an additive per-node latency model
 * whose slowdowns the layers below learn */
typedef enum { DLP_NN_POOL_SUM, DLP_NN_POOL_MEAN, DLP_NN_POOL_MAX,
               DLP_NN_POOL_MEAN_COST, DLP_NN_POOL_MEAN_LSE } dlp_nn_pool;
#define DLP_NN_POOL_LAST DLP_NN_POOL_MEAN_LSE
/* true for the pools that read g->node_w */
bool dlp_nn_pool_weighted(dlp_nn_pool p);
/* the pooled width for node width F */
int dlp_nn_pool_dim(dlp_nn_pool p, int F);
/* out[i] = exp(x[i] - m[i]), i < n (nn_exp.c): the log-sum-exp readout's
 * exps, eight at a time where the CPU has AVX2 and FMA (within 2 ulp of
 * expf; 0 below x - m = -87.33, exp(88) above 88; NaN stays NaN), else
 * expf (exp in a double engine). out may not alias x or m. */
void dlp_nn_exp_diff(nn_real *out, const nn_real *x, const nn_real *m, int n);
/* out[G, dlp_nn_pool_dim(p, F)] from x[N, F]; arg[G, F] (MAX only, may be
 * NULL otherwise) keeps the winning node. An empty graph pools to 0.
 * MEAN_COST and MEAN_LSE need g->node_w. */
void dlp_nn_pool_forward(nn_real *out, int32_t *arg, const nn_real *x,
                         const dlp_nn_graph *g, int F, dlp_nn_pool p);
/* dx[N, F] += the gradient of dout; x and out are the forward's input and
 * output (read by MEAN_LSE only, may be NULL otherwise) */
void dlp_nn_pool_backward(nn_real *dx, const nn_real *dout,
                          const int32_t *arg, const dlp_nn_graph *g, int F,
                          dlp_nn_pool p, const nn_real *x, const nn_real *out);
/* out[R, A+B] = [a[R, A] | b[R, B]]. */
void dlp_nn_concat_forward(nn_real *out, const nn_real *a, const nn_real *b,
                           int R, int A, int B);
void dlp_nn_concat_backward(nn_real *da, nn_real *db, const nn_real *dout,
                            int R, int A, int B);

/* ---- losses (nn_loss.c) ------------------------------------------------ */
/* Each returns the mean loss and, when dpred is not NULL, WRITES (not
 * accumulates) its gradient with respect to pred. n = element count. */
double dlp_nn_mse_loss(nn_real *dpred, const nn_real *pred, const nn_real *y,
                       int n);
double dlp_nn_rmse_loss(nn_real *dpred, const nn_real *pred, const nn_real *y,
                        int n);
double dlp_nn_huber_loss(nn_real *dpred, const nn_real *pred,
                         const nn_real *y, int n, double delta);
/* mean |p - y| / max(|y|, eps) */
double dlp_nn_mape_loss(nn_real *dpred, const nn_real *pred, const nn_real *y,
                        int n, double eps);
/* Binary cross-entropy on logits, mean; y in {0, 1} (or soft targets). */
double dlp_nn_bce_logits_loss(nn_real *dlogit, const nn_real *logit,
                              const nn_real *y, int n);
/* logits[R, C], labels[R] in [0, C): mean cross-entropy. */
double dlp_nn_cross_entropy_loss(nn_real *dlogit, const nn_real *logit,
                                 const int32_t *label, int R, int C);
/* GraphMAE scaled cosine error over rows: mean (1 - cos(x_r, y_r))^gamma. */
double dlp_nn_sce_loss(nn_real *dx, const nn_real *x, const nn_real *y,
                       int R, int C, double gamma);

/* Edge decoder for graph autoencoders: score[k] = z[src_k] . z[dst_k]. */
void dlp_nn_edge_dot_forward(nn_real *score, const nn_real *z,
                             const int32_t *src, const int32_t *dst, int K,
                             int F);
void dlp_nn_edge_dot_backward(nn_real *dz, const nn_real *dscore,
                              const nn_real *z, const int32_t *src,
                              const int32_t *dst, int K, int F);
/* K negative pairs (src, dst) drawn uniformly inside the same graph of the
 * batch, rejecting existing edges and loops (gives up on a pair after 32
 * tries and keeps the last draw, for nearly complete graphs). Graphs with
 * fewer than 2 nodes are skipped. Returns the number of pairs written. */
int dlp_nn_negative_sample(int32_t *src, int32_t *dst, int K,
                           const dlp_nn_graph *g, dlp_nn_rng *r);

/* ---- masked-feature pre-training (nn_mask.c) ---------------------------- */
/* GraphMAE-style: a random subset of nodes gets its features replaced by a
 * learnable [MASK] token; the model is trained to reconstruct the original
 * features of those nodes (dlp_nn_sce_loss on the gathered rows). */
/* Picks K = round(rate * N) distinct nodes (at least 1 when N > 0 and
 * rate > 0), sorted ascending, into idx[N]; returns K. */
int dlp_nn_mask_select(int32_t *idx, int N, double rate, dlp_nn_rng *r);
/* out[N,F] = x with rows idx[0..K-1] replaced by token[F]. */
void dlp_nn_mask_forward(nn_real *out, const nn_real *x, const nn_real *token,
                         const int32_t *idx, int K, int N, int F);
/* dx (may be NULL) += dout on unmasked rows; dtoken += sum of dout over the
 * masked rows. idx must be sorted (as dlp_nn_mask_select returns it). */
void dlp_nn_mask_backward(nn_real *dx, nn_real *dtoken, const nn_real *dout,
                          const int32_t *idx, int K, int N, int F);
/* out[K,F] = x[idx[k]]; backward scatter-adds. */
void dlp_nn_gather_rows_forward(nn_real *out, const nn_real *x,
                                const int32_t *idx, int K, int F);
void dlp_nn_gather_rows_backward(nn_real *dx, const nn_real *dout,
                                 const int32_t *idx, int K, int F);

/* ---- optimizers, clipping, schedules (nn_optim.c) ----------------------- */
typedef enum { DLP_NN_SGD, DLP_NN_ADAM, DLP_NN_ADAMW } dlp_nn_opt_kind;
typedef struct {
    dlp_nn_opt_kind kind;
    double lr;
    double momentum;      /* SGD */
    double beta1, beta2, eps; /* Adam(W) */
    double weight_decay;  /* SGD/Adam: L2 added to grad; AdamW: decoupled */
} dlp_nn_opt;
/* PyTorch defaults for the kind (lr 1e-3, betas 0.9/0.999, eps 1e-8,
 * AdamW weight decay 1e-2). */
dlp_nn_opt dlp_nn_opt_default(dlp_nn_opt_kind kind, double lr);
/* One step over every parameter (same update rules as torch.optim). */
void dlp_nn_opt_step(dlp_nn_params *p, const dlp_nn_opt *o);
/* The same step, elementwise on a worker pool (NULL: threads started per
 * call when the store is large); the same weights for any pool. */
void dlp_nn_opt_step_ex(dlp_nn_params *p, const dlp_nn_opt *o,
                        dlp_nn_workers *workers);
/* torch.nn.utils.clip_grad_norm_: returns the total norm before clipping. */
double dlp_nn_clip_grad_norm(dlp_nn_params *p, double max_norm);

/* Learning rate at step t (0-based) of T total. */
double dlp_nn_lr_cosine(double base, double min_lr, long t, long T);
/* torch.optim.lr_scheduler.OneCycleLR (cos annealing, two phases). */
double dlp_nn_lr_one_cycle(double max_lr, long t, long T, double pct_start,
                           double div_factor, double final_div_factor);

/* Early stopping on a validation metric (lower is better): keeps a copy of
 * the best weights. */
typedef struct {
    int patience;
    double min_delta;
    double best;
    int best_epoch, bad_epochs, epoch;
    nn_real *best_w;   /* [n], owned */
    size_t n;
} dlp_nn_early_stop;
dlp_status dlp_nn_early_stop_init(dlp_nn_early_stop *s, const dlp_nn_params *p,
                                  int patience, double min_delta,
                                  dlp_error *err);
/* Records one epoch's metric; returns true when training should stop. */
bool dlp_nn_early_stop_update(dlp_nn_early_stop *s, const dlp_nn_params *p,
                              double metric);
void dlp_nn_early_stop_restore(const dlp_nn_early_stop *s, dlp_nn_params *p);
void dlp_nn_early_stop_free(dlp_nn_early_stop *s);

/* ---- model files (nn_file.c) ------------------------------------------- */
/* A model file is a list of named entries: float32 arrays (weights,
 * normalisation statistics), int64 arrays (architecture), strings
 * (metadata), byte arrays (data laid out for reading in place: the
 * workspace forests' nodes). Layout, all little-endian:
 *   "DLPNNMDL" u32 version u32 n_entries u64 payload_bytes
 *   entries: u8 kind, u16 name_len, name, u64 count, data
 *            (kind 1: count f32; 2: count i64; 3: count bytes of text;
 *             4: count bytes, version 2 on)
 *            version 3 on: a byte array of DLP_NN_LAZY_MIN bytes or
 *            more is followed by the u32 CRC-32 of its bytes
 *   u32 CRC-32 (IEEE) of everything before it, version 3 on save those
 *   large byte arrays' bytes (their own CRCs are inside it).
 * Written to a temp file in the same directory, fsync'd, then renamed.
 * Version 1 files (no byte arrays) and version 2 (one CRC for all) still
 * load. Why version 3: a request reads a few of the forests its model
 * files hold (the fp32 workspace forests, not the fp16 ones; a
 * classifier whose answer is "no workspace" leaves the regressor's trees
 * alone), and checking the whole file first read every byte of the 4.2 MB
 * an inference request loads; the arrays it never reads are now never
 * touched (docs/PREDICT.md, "Speed, forty-fifth session").
 *
 * Side files (.dlps): dlp_nn_file_save_shared moves the entries of a
 * group ("optime/": the operator-time forests, the same in most model
 * files) into a file of the same layout beside the model file, named by
 * a hash of its bytes, so that model files holding the same group share
 * one copy of it. In their place the model file holds one string entry
 * "<P><group>@" (P "" or a prefix ending in '/', e.g. "blend/0/") whose
 * value is the side file's base name. A string entry whose name ends in
 * "/@" is such a reference, wherever it is; dlp_nn_file_load replaces it
 * by the side file's entries under "<P><group>", so a reader sees the
 * entries the file had before. A side file holds no references. */
typedef enum {
    DLP_NN_F32 = 1, DLP_NN_I64 = 2, DLP_NN_STR = 3, DLP_NN_U8 = 4
} dlp_nn_entry_kind;
/* A loaded file's bytes, one block read from the file (a mapping of it
 * until the forty-ninth session: nn_file.c says why), shared by whoever
 * reads entries in place: the file holds one reference, dlp_nn_entry_keep
 * hands out more, and the last dlp_nn_map_release frees it. */
typedef struct dlp_nn_map dlp_nn_map;
typedef struct {
    char *name;
    dlp_nn_entry_kind kind;
    uint64_t count;
    void *data;     /* float[count], int64_t[count], char[count+1] or
                       uint8_t[count] */
    /* data NULL: a float32 or byte array of a loaded file (DLP_NN_LAZY_MIN
     * values or more) left in the file's bytes (dlp_nn_map), raw its little-endian
     * bytes; dlp_nn_file_read_f32 / dlp_nn_entry_bytes (and read_params,
     * add_copy, save) read it there */
    const uint8_t *raw;
    /* the block raw lies in (the model file's or a side file's bytes;
     * borrowed: the file holds the reference), NULL when data is set */
    dlp_nn_map *map;
    /* a large byte array of a version-3 file: the CRC-32 of its bytes,
     * not checked at load (dlp_nn_entry_verify checks it) */
    bool crc_pending;
    uint32_t crc;
} dlp_nn_entry;
typedef struct {
    dlp_nn_entry *e;
    int n, cap;
    dlp_nn_map *map;   /* the loaded file's bytes (lazy entries), or NULL */
    dlp_nn_map **side; /* [n_side] the side files' bytes (one reference */
    int n_side;        /* each) its entries came from, or NULL / 0 */
    uint32_t version;  /* a loaded file's format version; 0 when built */
} dlp_nn_file;
/* Loaded float32 and byte arrays of at least this many values stay in the
 * file's bytes until read: the weights are copied once (into the network's
 * parameters), not twice, and byte arrays are read in place (nn_file.c
 * says why). */
#define DLP_NN_LAZY_MIN 1024

/* Format versions: 3 is every file without side-file references (plain
 * saves, side files), which builds from the forty-fifth session on read;
 * 4 is the same layout with references, written only by
 * dlp_nn_file_save_shared when it moved entries out, so that an older
 * build refuses such a file (format version 4) instead of loading it
 * without the entries its side files hold (the operator-time forests: it
 * would predict from the roofline's node times, silently). */
#define DLP_NN_FILE_VERSION 4u
#define DLP_NN_FILE_VERSION_PLAIN 3u
dlp_status dlp_nn_file_add_f32(dlp_nn_file *f, const char *name,
                               const nn_real *x, uint64_t n, dlp_error *err);
dlp_status dlp_nn_file_add_i64(dlp_nn_file *f, const char *name,
                               const int64_t *x, uint64_t n, dlp_error *err);
dlp_status dlp_nn_file_add_str(dlp_nn_file *f, const char *name,
                               const char *s, dlp_error *err);
dlp_status dlp_nn_file_add_u8(dlp_nn_file *f, const char *name,
                              const void *x, uint64_t n, dlp_error *err);
/* A byte entry's count bytes, from its copy or from the file's bytes; a large
 * one of a version-3 file unchecked (dlp_nn_entry_verify). */
const uint8_t *dlp_nn_entry_bytes(const dlp_nn_entry *e);
/* DLP_OK when e's bytes match the CRC stored with them (or e has none
 * pending: its bytes were covered by the file's CRC at load); else
 * DLP_ERR_FORMAT naming the entry. Computed at every call: a reader that
 * checks once keeps the answer (tree_forest.c). */
dlp_status dlp_nn_entry_verify(const dlp_nn_entry *e, dlp_error *err);
/* Bytes after an entry's count values in a file of format version ver:
 * 4 (its CRC) for a byte array of DLP_NN_LAZY_MIN bytes or more from
 * version 3 on, else 0; the loader and predict_set.c's scan both read
 * entries by it. */
size_t dlp_nn_entry_tail(uint32_t ver, unsigned kind, uint64_t count);
/* A new reference to the block e's raw bytes lie in (the model file's or
 * a side file's; NULL when e holds its own copy): they stay until it is
 * released, after dlp_nn_file_free too. */
dlp_nn_map *dlp_nn_entry_keep(const dlp_nn_entry *e);
void dlp_nn_map_release(dlp_nn_map *m);
/* Bytes per element of an entry of kind k (4, 8; 1 for a string or bytes). */
size_t dlp_nn_elem_size(dlp_nn_entry_kind k);
/* The same for kind byte k of a file of format version ver, 0 when that
 * version has no such kind (byte arrays came with version 2): the one
 * rule the loader and predict_set.c's header scan read entries by. */
size_t dlp_nn_kind_size(uint32_t ver, unsigned k);
/* Adds a copy of src's data under another name (any kind). */
dlp_status dlp_nn_file_add_copy(dlp_nn_file *f, const char *name,
                                const dlp_nn_entry *src, dlp_error *err);
/* Removes and frees an entry; false when there is none. The other entries
 * keep their order. */
bool dlp_nn_file_remove(dlp_nn_file *f, const char *name,
                        dlp_nn_entry_kind kind);
const dlp_nn_entry *dlp_nn_file_get(const dlp_nn_file *f, const char *name,
                                    dlp_nn_entry_kind kind);
/* Values [k, k + n) of f32 entry e (k + n <= e->count) as float32, from
 * its copy or, for a large entry of a loaded file, from the file's bytes (a
 * reader that converts a large entry block by block needs no copy of it
 * all first). */
void dlp_nn_entry_f32s(const dlp_nn_entry *e, uint64_t k, uint64_t n, float *dst);
/* Copies an f32 entry of exactly n elements into x, or fails naming it. */
dlp_status dlp_nn_file_read_f32(const dlp_nn_file *f, const char *name,
                                nn_real *x, uint64_t n, dlp_error *err);
/* Fails (DLP_ERR_ARG) on a string entry named like a side-file reference
 * (ending in "/@"). */
dlp_status dlp_nn_file_save(const dlp_nn_file *f, const char *path,
                            dlp_error *err);
/* dlp_nn_file_save with the entries of each group of groups (a
 * NULL-terminated list, one at least) in side files. A group is a name
 * prefix ending in '/' (e.g. "optime/"), its other characters
 * [A-Za-z0-9._-], not starting with '.'. An entry named P + group + rest
 * (rest not empty, P "" or ending in '/', the first such place in the
 * name; the first group of the list that matches) goes to the side file
 * of (P, group): its entries, renamed to rest, in their order, make a
 * file image written beside path (same directory, same atomic write) as
 * "<group without its '/'>-<16 hex digits of a 64-bit hash of the
 * image>.dlps"; path gets, at the place of its first such entry, the
 * string entry P + group + "@" holding that base name. Side files are
 * written before path; identical groups (under several P, or of several
 * model files) land in one file. With no entry of a group it writes what
 * dlp_nn_file_save writes. Side files no longer referenced are left
 * where they are. */
dlp_status dlp_nn_file_save_shared(const dlp_nn_file *f, const char *path,
                                   const char *const *groups, dlp_error *err);
/* How many entries of f dlp_nn_file_save_shared would move into side
 * files for groups (0 when one of them is no valid group; a loaded file
 * holds its side files' entries again, f->n_side says whether it had
 * any). */
int dlp_nn_file_group_entries(const dlp_nn_file *f, const char *const *groups);
/* Checks and parses path. A file with side-file references loads each
 * side file it names from path's directory (once, fully checked) and
 * fails naming both files when one is missing or broken; DLP_ERR_FORMAT
 * when a reference is not a plain base name ending in .dlps or a side
 * file holds references itself. */
dlp_status dlp_nn_file_load(dlp_nn_file *f, const char *path, dlp_error *err);
void dlp_nn_file_free(dlp_nn_file *f);
/* Every parameter tensor as an f32 entry "param/<name>", and back (fails
 * on a missing tensor or a size mismatch). */
dlp_status dlp_nn_file_add_params(dlp_nn_file *f, const dlp_nn_params *p,
                                  dlp_error *err);
dlp_status dlp_nn_file_read_params(const dlp_nn_file *f, dlp_nn_params *p,
                                   dlp_error *err);
/* The same under another prefix (at most 30 characters) instead of
 * "param/": several networks of one architecture in one file (the members
 * of a GNN ensemble). */
dlp_status dlp_nn_file_add_params_as(dlp_nn_file *f, const char *prefix,
                                     const dlp_nn_params *p, dlp_error *err);
dlp_status dlp_nn_file_read_params_as(const dlp_nn_file *f, const char *prefix,
                                      dlp_nn_params *p, dlp_error *err);
uint32_t dlp_nn_crc32(uint32_t crc, const void *data, size_t n);

/* ---- the DIPPM-style model (nn_sage_model.c) --------------------------- */
/* L SAGE layers (ReLU after each) -> per-graph pooling -> concat static
 * features -> FC layers (ReLU between) -> out. A worked example of building
 * a predictor on the engine; other predictors follow the same pattern. */
#define DLP_NN_MAX_LAYERS 8
typedef struct {
    int in_dim;       /* node feature size */
    int hidden;       /* SAGE width */
    int n_sage;       /* number of SAGE layers */
    int static_dim;   /* static (graph-level) feature size, may be 0 */
    int n_fc;         /* FC layers, the last one maps to out_dim */
    int fc_hidden;    /* width of the FC layers before the last */
    int out_dim;
    dlp_nn_pool pool;
    bool normalize;   /* SAGE L2 normalisation */
} dlp_nn_sage_model_cfg;

typedef struct {
    dlp_nn_sage_model_cfg cfg;
    dlp_nn_params params;
    int t_wl[DLP_NN_MAX_LAYERS], t_bl[DLP_NN_MAX_LAYERS],
        t_wr[DLP_NN_MAX_LAYERS];
    int t_fw[DLP_NN_MAX_LAYERS], t_fb[DLP_NN_MAX_LAYERS];
    /* workspace, grown on demand (sizes in elements) */
    nn_real *ws;
    size_t ws_cap;
    int32_t *arg;
    size_t arg_cap;
    /* worker pool for the sparse kernels, started by the first forward that
     * runs with more than one thread (dlp_nn_threads()), restarted if that
     * count changes, joined by _free */
    dlp_nn_workers *workers;
} dlp_nn_sage_model;

dlp_status dlp_nn_sage_model_init(dlp_nn_sage_model *m,
                                  const dlp_nn_sage_model_cfg *cfg,
                                  uint64_t seed, dlp_error *err);
/* _init without the random draw and without the training blocks: the
 * weights are laid out and zeroed, for callers that fill every one of
 * them next (dlp_nn_file_read_params); drawing values only to overwrite
 * them cost ~0.5 ms per loaded predictor. Training such a model needs
 * dlp_nn_params_alloc_grads first (_train_step does it). */
dlp_status dlp_nn_sage_model_alloc(dlp_nn_sage_model *m,
                                   const dlp_nn_sage_model_cfg *cfg,
                                   dlp_error *err);
void dlp_nn_sage_model_free(dlp_nn_sage_model *m);
/* Heap-allocated handle for callers that keep the struct opaque (the CLI,
 * ctypes tests): NULL on failure with err filled; _delete(NULL) is a no-op. */
dlp_nn_sage_model *dlp_nn_sage_model_new(const dlp_nn_sage_model_cfg *cfg,
                                         uint64_t seed, dlp_error *err);
void dlp_nn_sage_model_delete(dlp_nn_sage_model *m);
dlp_nn_params *dlp_nn_sage_model_params(dlp_nn_sage_model *m);
/* Forward on a batch: x[N, in_dim], st[G, static_dim] -> out[G, out_dim].
 * Keeps activations in the model's workspace for a following backward, so
 * one model must not run two forwards at once (threads: one model each, or
 * a lock); the weights themselves are only read. */
dlp_status dlp_nn_sage_model_forward(dlp_nn_sage_model *m,
                                     const dlp_nn_graph *g, const nn_real *x,
                                     const nn_real *st, nn_real *out,
                                     dlp_error *err);
/* The same forward, same outputs, keeping nothing for a backward (the
 * layers reuse their buffers): for predictions, where every fresh page of
 * workspace is a page fault. A backward must follow _forward, not this. */
dlp_status dlp_nn_sage_model_predict(dlp_nn_sage_model *m,
                                     const dlp_nn_graph *g, const nn_real *x,
                                     const nn_real *st, nn_real *out,
                                     dlp_error *err);
/* Accumulates parameter gradients from dout[G, out_dim] (after a forward
 * on the same batch). */
void dlp_nn_sage_model_backward(dlp_nn_sage_model *m, const dlp_nn_graph *g,
                                const nn_real *x, const nn_real *st,
                                const nn_real *dout);
/* The same three with the input's first cat->dim columns a one-hot block
 * passed sparse (dlp_nn_cat; NULL or dim 0: none): x[N, in_dim - dim]
 * holds the rest. Same results as the dense input up to rounding, the
 * first layer's products over the dense columns only. The backward takes
 * the forward's cat. */
dlp_status dlp_nn_sage_model_forward_cat(dlp_nn_sage_model *m,
                                         const dlp_nn_graph *g,
                                         const nn_real *x,
                                         const dlp_nn_cat *cat,
                                         const nn_real *st, nn_real *out,
                                         dlp_error *err);
dlp_status dlp_nn_sage_model_predict_cat(dlp_nn_sage_model *m,
                                         const dlp_nn_graph *g,
                                         const nn_real *x,
                                         const dlp_nn_cat *cat,
                                         const nn_real *st, nn_real *out,
                                         dlp_error *err);
void dlp_nn_sage_model_backward_cat(dlp_nn_sage_model *m,
                                    const dlp_nn_graph *g, const nn_real *x,
                                    const dlp_nn_cat *cat, const nn_real *st,
                                    const nn_real *dout);
/* zero grad, forward, MSE loss against y[G, out_dim], backward, optional
 * clipping (clip <= 0: none), optimizer step. Returns the loss in *loss. */
dlp_status dlp_nn_sage_model_train_step(dlp_nn_sage_model *m,
                                        const dlp_nn_graph *g,
                                        const nn_real *x, const nn_real *st,
                                        const nn_real *y, const dlp_nn_opt *o,
                                        double clip, double *loss,
                                        dlp_error *err);
dlp_status dlp_nn_sage_model_save(const dlp_nn_sage_model *m,
                                  const char *path, const nn_real *feat_mean,
                                  const nn_real *feat_std, const char *meta,
                                  dlp_error *err);
/* Loads architecture + weights (+ optional normalisation stats into
 * feat_mean/feat_std of in_dim elements when not NULL). */
dlp_status dlp_nn_sage_model_load(dlp_nn_sage_model *m, const char *path,
                                  nn_real *feat_mean, nn_real *feat_std,
                                  dlp_error *err);

#endif /* DLP_NN_H */
