/*
 * shape.h — internal to src/shape. The per-node context that every op's
 * shape function receives, and the small helpers they share: reading input
 * shapes and constant contents, writing outputs, broadcasting, axes.
 *
 * Contract of an op shape function (dlp_shape_fn): it is called with every
 * output of the node cleared (rank -1, no constant contents, dtype kept as
 * the file's hint). It sets what it can infer through dlp_sh_set* and
 * returns DLP_OK. Inconsistent input (a broadcast that fails, a Reshape
 * whose element count does not match) is not an error: the function calls
 * dlp_sh_bad(), which adds a warning naming the node, and leaves the outputs
 * unknown. Only allocation failure and limit overflow return an error.
 *
 * Constant contents: a value is "constant" when ival (integers, bool as 0/1)
 * or fval (floating) holds its n_const elements. Empty constants carry a
 * one-element dummy array and n_const 0. With symbols unbound, small integer
 * tensors may instead carry symbolic entries (dlp_symvec, shape_symval.c).
 * Rules and oracles: docs/SHAPES.md.
 */
#ifndef DLP_SHAPE_H
#define DLP_SHAPE_H

#include "../graph/graph.h"

#define DLP_SHAPE_MAX_DIM ((int64_t)1 << 40) /* dims above: DLP_ERR_LIMIT */
/* Folded floating-point contents are kept up to this many elements (integer
 * ones up to DLP_MAX_CONST_ELEMS): shapes rarely depend on big float
 * tensors, and masks of long sequences would cost memory at every node. */
#define DLP_SHAPE_MAX_FLOAT_CONST 4096

typedef struct dlp_shape_run dlp_shape_run;

typedef struct {
    dlp_shape_run *run;
    dlp_graph *g;        /* graph holding the node */
    dlp_graph *root;     /* main graph (symbols) */
    dlp_node *n;
    int opset;           /* default-domain opset */
    dlp_warnings *w;
    dlp_error *err;
} dlp_sctx;

typedef dlp_status (*dlp_shape_fn)(dlp_sctx *c);

/* ---- dims and shapes ---------------------------------------------------- */
static inline dlp_dim dlp_dim_of(int64_t v) { dlp_dim d = {v, -1}; return d; }
static inline dlp_dim dlp_dim_unknown(void) { dlp_dim d = {-1, -1}; return d; }
static inline dlp_shape dlp_shape_unknown(void) {
    dlp_shape s;
    s.rank = -1;
    for (int i = 0; i < DLP_MAX_RANK; i++) s.dims[i] = dlp_dim_unknown();
    return s;
}
/* A shape of the given rank with every dim unknown (rank -1 if too big). */
dlp_shape dlp_shape_of_rank(int rank);
/* A shape from known dims. */
dlp_shape dlp_shape_from(const int64_t *dims, int rank);

/* Checked int64 arithmetic for attribute-driven formulas: on overflow the
 * result is 0 and *bad is set (callers then warn and leave outputs unknown). */
static inline int64_t dlp_ck_add(bool *bad, int64_t a, int64_t b) {
    int64_t r;
    if (__builtin_add_overflow(a, b, &r)) { *bad = true; return 0; }
    return r;
}
static inline int64_t dlp_ck_sub(bool *bad, int64_t a, int64_t b) {
    int64_t r;
    if (__builtin_sub_overflow(a, b, &r)) { *bad = true; return 0; }
    return r;
}
static inline int64_t dlp_ck_mul(bool *bad, int64_t a, int64_t b) {
    int64_t r;
    if (__builtin_mul_overflow(a, b, &r)) { *bad = true; return 0; }
    return r;
}

/* numpy broadcasting of two shapes: 0 ok, -1 incompatible, 1 rank unknown */
int dlp_shape_broadcast(const dlp_shape *a, const dlp_shape *b,
                        dlp_shape *out);
/* Broadcast of two dims: false when incompatible. */
bool dlp_dim_broadcast(dlp_dim a, dlp_dim b, dlp_dim *out);
/* Multiply dims (unknown if any is unknown); false on overflow. */
bool dlp_dim_mul(dlp_dim a, dlp_dim b, dlp_dim *out);

/* ---- node inputs -------------------------------------------------------- */
dlp_value *dlp_sh_in(dlp_sctx *c, int i);          /* NULL when omitted */
/* Input shape when its rank is known, else NULL. */
const dlp_shape *dlp_sh_shape(dlp_sctx *c, int i);
dlp_dtype dlp_sh_dtype(dlp_sctx *c, int i);
/* Constant integer contents of input i (ival); false when not known. */
bool dlp_sh_ints(dlp_sctx *c, int i, const int64_t **vals, int64_t *n);
/* Constant contents as doubles (from fval, or ival converted into an
 * arena copy); false when not known. */
bool dlp_sh_nums(dlp_sctx *c, int i, const double **vals, int64_t *n);
/* Contents known and consistent with the shape (numel == n_const). */
bool dlp_value_is_const(const dlp_value *v);
/* First constant integer of input i (a scalar or a 1-element tensor). */
bool dlp_sh_scalar_int(dlp_sctx *c, int i, int64_t *out);
bool dlp_sh_scalar_num(dlp_sctx *c, int i, double *out);
/* Integer list from attribute `name` (INTS) or input i (opset-dependent):
 * *found false when neither exists. Returns false when the input exists but
 * is not constant. */
bool dlp_sh_ints_attr_or_input(dlp_sctx *c, const char *name, int i,
                               const int64_t **vals, int64_t *n, bool *found);

/* ---- node outputs ------------------------------------------------------- */
dlp_value *dlp_sh_out(dlp_sctx *c, int i);         /* NULL when omitted */
dlp_status dlp_sh_set(dlp_sctx *c, int i, dlp_dtype t, const dlp_shape *s);
/* Sets output i and its integer contents (copied into the arena). */
dlp_status dlp_sh_set_ints(dlp_sctx *c, int i, dlp_dtype t,
                           const dlp_shape *s, const int64_t *vals, int64_t n);
dlp_status dlp_sh_set_nums(dlp_sctx *c, int i, dlp_dtype t,
                           const dlp_shape *s, const double *vals, int64_t n);
/* Whether dlp_sh_set_nums(c, i, t, s, vals, n) would keep the n numbers
 * (held as integers for an integer dtype; floats up to
 * DLP_SHAPE_MAX_FLOAT_CONST): a fold whose result would be dropped can
 * skip computing it. */
bool dlp_sh_nums_kept(dlp_sctx *c, int i, dlp_dtype t, int64_t n);
/* Sets output i to a copy of input j (dtype, shape, contents). */
dlp_status dlp_sh_copy(dlp_sctx *c, int i, int j);
/* Sets dtype only (shape stays unknown). */
void dlp_sh_set_dtype(dlp_sctx *c, int i, dlp_dtype t);

/* Warns "node 'NAME' (OP): <msg>" and returns DLP_OK. */
dlp_status dlp_sh_bad(dlp_sctx *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Normalises axis into [0, rank); false when out of range. */
bool dlp_axis(int64_t axis, int rank, int *out);

/* Scratch memory from the graph arena; NULL on OOM (caller returns NOMEM). */
void *dlp_sh_alloc(dlp_sctx *c, size_t n, size_t size);
dlp_status dlp_sh_nomem(dlp_sctx *c);

/* Row-major strides of a known shape. */
void dlp_sh_strides(const dlp_shape *s, int64_t *strides);
/* Shape known with at most DLP_MAX_CONST_ELEMS elements. */
bool dlp_sh_small(const dlp_shape *s, int64_t *numel);
/* Folds output oi (shape os) as out[k] = input ij's contents[src[k]], when
 * input ij is constant. */
dlp_status dlp_sh_fold_pick(dlp_sctx *c, int oi, int ij, const dlp_shape *os,
                            const int64_t *src, int64_t n);
/* Folds output oi as a copy of input ij's contents (reshape-like ops). */
dlp_status dlp_sh_fold_same(dlp_sctx *c, int oi, int ij, const dlp_shape *os);

/* ---- symbolic shape values (shape_symval.c) ------------------------------ */
/* Contents of a rank-0/1 integer tensor whose entries are known numbers,
 * symbols or unknown: keeps unbound symbols through shape arithmetic. */
typedef struct {
    int rank;                     /* 0 or 1 */
    int n;                        /* entries */
    dlp_dim e[DLP_MAX_RANK];      /* value when known[k], else sym (or -1) */
    bool known[DLP_MAX_RANK];
} dlp_symvec;

#define DLP_SPEC_SYM INT64_MIN    /* spec entry: take dims[k] (symbolic) */

bool dlp_sh_symvec(dlp_sctx *c, int i, dlp_symvec *out);
/* Input i as a shape spec: known entries in spec[k], symbolic or unknown
 * ones as DLP_SPEC_SYM with their dim (sym, value -1) in dims[k]. */
bool dlp_sh_symdims(dlp_sctx *c, int i, int64_t *spec, dlp_dim *dims,
                    int *n);
/* Propagates symbolic contents to output 0 after the op's shape function. */
dlp_status dlp_shape_symprop(dlp_sctx *c);
/* The run's side table (infer.c). */
const dlp_symvec *dlp_shape_symvec_get(dlp_sctx *c, int value);
dlp_status dlp_shape_symvec_put(dlp_sctx *c, int value, const dlp_symvec *s);

/* Infers one subgraph (If/Loop/Scan body) with the run's settings. */
dlp_status dlp_shape_infer_sub(dlp_sctx *c, dlp_graph *sub);

/* ---- op tables (one per file) ------------------------------------------ */
typedef struct {
    const char *op;
    dlp_shape_fn fn;
} dlp_shape_op;

extern const dlp_shape_op dlp_shape_ops_elementwise[];
extern const dlp_shape_op dlp_shape_ops_nn[];
extern const dlp_shape_op dlp_shape_ops_tensor[];
extern const dlp_shape_op dlp_shape_ops_index[];
extern const dlp_shape_op dlp_shape_ops_const[];
extern const dlp_shape_op dlp_shape_ops_reduce[];
extern const dlp_shape_op dlp_shape_ops_seq[];
extern const dlp_shape_op dlp_shape_ops_misc[];
extern const dlp_shape_op dlp_shape_ops_control[];

#endif /* DLP_SHAPE_H */
