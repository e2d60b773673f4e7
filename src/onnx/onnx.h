/*
 * onnx.h — internal to libdlperf. Reads an ONNX ModelProto (serialized
 * protobuf, usually memory-mapped) into a dlp_graph, following graph.h's
 * contract. Weight bytes are never copied or touched except small constants
 * (see onnx_tensor.c); strings are copied into the graph's arena.
 *
 * Files: onnx_read.c walks ModelProto / GraphProto / NodeProto /
 * AttributeProto; onnx_tensor.c reads TensorProto (dims, dtype, constant
 * contents, external data) and ValueInfoProto / TypeProto.
 */
#ifndef DLP_ONNX_H
#define DLP_ONNX_H

#include "../graph/graph.h"
#include "pb.h"

/* Safety limits (hostile files must fail fast, not allocate without bound) */
#define DLP_ONNX_MAX_NODES 4000000    /* main graph + subgraphs */
#define DLP_ONNX_MAX_VALUES 8000000   /* tensors, all graphs */
#define DLP_ONNX_MAX_DIM ((int64_t)1 << 40)
#define DLP_ONNX_MAX_SYMS 10000       /* distinct dim_param names */
#define DLP_ONNX_MIN_OPSET 7
#define DLP_ONNX_MAX_OPSET 23
/* Floating-point constants are kept only up to this many elements (shape
 * arithmetic needs scalars and scale vectors, never weight matrices);
 * integer and bool constants up to DLP_MAX_CONST_ELEMS. */
#define DLP_ONNX_MAX_FLOAT_CONST 1024

/* Reads the model in bytes[0..len) into g (uninitialised on entry; on
 * success the caller owns it and frees it with dlp_graph_free). `dir` is the
 * directory that external-data locations are relative to, NULL when there
 * is none (models opened from memory). Strings and constants go into
 * `arena`. Warnings (e.g. unreadable small external tensors) go to w. */
dlp_status dlp_onnx_read(const uint8_t *bytes, size_t len, const char *dir,
                         dlp_arena *arena, dlp_graph *g, dlp_warnings *w,
                         dlp_error *err);

/* ---- shared between onnx_read.c and onnx_tensor.c ---------------------- */

typedef struct {
    const char *dir;      /* external data directory or NULL */
    dlp_arena *arena;
    dlp_warnings *warnings;
    int64_t n_nodes;      /* nodes declared so far, all graphs */
    int64_t n_values;     /* values created so far, all graphs */
    dlp_strmap syms;      /* dim_param name -> symbol index (main graph) */
    int64_t n_ext_warn;   /* external-data problems seen */
    dlp_strmap funcs;     /* "domain:name" of model-local functions */
    int64_t n_func_calls; /* nodes calling them */
} dlp_onnx_ctx;

/* Reads the TensorProto in field f (of message `parent`) into value v of g:
 * dtype, shape (rank -1 above DLP_MAX_RANK), stored_bytes, the EXTERNAL
 * flag and, when small and available, constant contents. `what` describes
 * the tensor for messages ("initializer", "attribute 'value' of node 'c'").
 * When v < 0 the tensor's own name is used: the value is created (or found)
 * in g and returned through *out_v. */
dlp_status dlp_onnx_tensor(dlp_onnx_ctx *c, dlp_graph *g, const dlp_pb *parent,
                           const dlp_pb_field *f, const char *what, int v,
                           int *out_v, dlp_error *err);

/* Reads the dims and dtype of a SparseTensorProto into a new value of g. */
dlp_status dlp_onnx_sparse_tensor(dlp_onnx_ctx *c, dlp_graph *g,
                                  const dlp_pb *parent, const dlp_pb_field *f,
                                  int *out_v, dlp_error *err);

/* Reads a ValueInfoProto: name and, for tensor types, dtype and shape (dims
 * as numbers, dim_param as symbols of the main graph). Non-tensor types
 * (sequence, optional, map) leave dtype undefined and rank -1. With
 * `strict`, a negative dim is an error; otherwise it reads as unknown. */
typedef struct {
    const char *name;  /* not NUL-terminated: name_len bytes */
    size_t name_len;
    bool has_type;
    dlp_dtype dtype;
    dlp_shape shape;
} dlp_onnx_vinfo;
dlp_status dlp_onnx_value_info(dlp_onnx_ctx *c, dlp_graph *g,
                               const dlp_pb *parent, const dlp_pb_field *f,
                               bool strict, dlp_onnx_vinfo *out,
                               dlp_error *err);

/* dlp_graph_value (find or create by name), counting created values
 * against DLP_ONNX_MAX_VALUES; -1 with err filled on failure. */
int dlp_onnx_value(dlp_onnx_ctx *c, dlp_graph *g, const char *name,
                   size_t len, dlp_error *err);
/* dlp_graph_anon_value, counted the same way. */
int dlp_onnx_anon_value(dlp_onnx_ctx *c, dlp_graph *g, dlp_error *err);

#endif /* DLP_ONNX_H */
