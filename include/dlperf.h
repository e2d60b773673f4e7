/*
 * dlperf.h — the one public header of libdlperf.
 *
 * dlperf predicts how a deep-learning model performs on a GPU without that
 * GPU. The data flow is: model file -> graph with shapes -> costs ->
 * features -> predictors -> report.
 *
 * Example (read a model, bind its symbolic dims, print its MACs):
 *
 *     dlp_error err;
 *     dlp_model *m = NULL;
 *     if (dlp_model_open("resnet50.onnx", &m, &err) != DLP_OK) {
 *         fprintf(stderr, "%s\n", err.msg);
 *         return 1;
 *     }
 *     dlp_model_set_batch(m, 8, &err);
 *     if (dlp_model_analyze(m, &err) == DLP_OK) {
 *         dlp_summary s;
 *         dlp_model_summary(m, &s);
 *         printf("%.3f GMACs\n", s.macs / 1e9);
 *     }
 *     dlp_model_free(m);
 *
 * Conventions: every name carries the dlp_ prefix; functions that can fail
 * return a dlp_status and fill a caller-owned dlp_error with a one-line
 * message naming the problem. The library never prints and never exits.
 * Freeing NULL is a no-op. Objects returned through an out-pointer are owned
 * by the caller and released with the matching _free function.
 */
#ifndef DLPERF_H
#define DLPERF_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DLPERF_VERSION "0.1.0"

/* ---- status ------------------------------------------------------------ */

typedef enum {
    DLP_OK = 0,
    DLP_ERR_ARG,         /* bad argument from the caller */
    DLP_ERR_IO,          /* file missing, unreadable, mmap failed */
    DLP_ERR_FORMAT,      /* malformed input (protobuf, ONNX, dataset) */
    DLP_ERR_UNSUPPORTED, /* valid but not handled (opset, dtype, ...) */
    DLP_ERR_SHAPE,       /* inconsistent shapes or unbound dims */
    DLP_ERR_LIMIT,       /* input exceeds a safety limit (size, depth) */
    DLP_ERR_NOMEM,       /* allocation failed */
    DLP_ERR_GRAPH,       /* cycle, dangling input, duplicate producer */
    DLP_ERR_NOT_FOUND    /* unknown device, profile, key */
} dlp_status;

typedef struct {
    dlp_status code;
    char msg[512];
} dlp_error;

const char *dlp_status_str(dlp_status s);

/* ---- element types (values are ONNX TensorProto.DataType) -------------- */

typedef enum {
    DLP_DT_UNDEFINED = 0,
    DLP_DT_FLOAT = 1,
    DLP_DT_UINT8 = 2,
    DLP_DT_INT8 = 3,
    DLP_DT_UINT16 = 4,
    DLP_DT_INT16 = 5,
    DLP_DT_INT32 = 6,
    DLP_DT_INT64 = 7,
    DLP_DT_STRING = 8,
    DLP_DT_BOOL = 9,
    DLP_DT_FLOAT16 = 10,
    DLP_DT_DOUBLE = 11,
    DLP_DT_UINT32 = 12,
    DLP_DT_UINT64 = 13,
    DLP_DT_COMPLEX64 = 14,
    DLP_DT_COMPLEX128 = 15,
    DLP_DT_BFLOAT16 = 16,
    DLP_DT_FLOAT8E4M3FN = 17,
    DLP_DT_FLOAT8E4M3FNUZ = 18,
    DLP_DT_FLOAT8E5M2 = 19,
    DLP_DT_FLOAT8E5M2FNUZ = 20,
    DLP_DT_UINT4 = 21,
    DLP_DT_INT4 = 22
} dlp_dtype;

const char *dlp_dtype_name(dlp_dtype t);   /* "float32", "int64", ... */
size_t dlp_dtype_size(dlp_dtype t);        /* bytes per element, 0 unknown */
int dlp_dtype_is_float(dlp_dtype t);

/* ---- models: file -> graph -> shapes -> costs --------------------------- */

typedef struct dlp_model dlp_model;

/* Opens an ONNX file. Weight bytes are never read unless a shape needs them
 * (small integer constants); external data files may be absent. */
dlp_status dlp_model_open(const char *path, dlp_model **out, dlp_error *err);

/* Opens an ONNX model held in memory (the bytes must outlive the model). */
dlp_status dlp_model_open_memory(const void *bytes, size_t len,
                                 const char *name, dlp_model **out,
                                 dlp_error *err);

void dlp_model_free(dlp_model *m);

/* Binds a symbolic dimension (e.g. "batch", "seq") before analysis. */
dlp_status dlp_model_bind_dim(dlp_model *m, const char *name, int64_t value,
                              dlp_error *err);

/* Binds the first dimension of every graph input to n, whatever its name. */
dlp_status dlp_model_set_batch(dlp_model *m, int64_t n, dlp_error *err);

/* Runs shape inference and the cost model. Unknown ops leave their outputs
 * unshaped and add a warning; they are not an error. */
dlp_status dlp_model_analyze(dlp_model *m, dlp_error *err);

/* Warnings gathered by open/analyze (unknown ops, unshaped tensors). */
int dlp_model_warning_count(const dlp_model *m);
const char *dlp_model_warning(const dlp_model *m, int i);

typedef struct {
    int64_t nodes;            /* nodes of the main graph + subgraph nodes */
    int64_t edges;            /* producer->consumer tensor edges */
    int64_t params;           /* elements of floating-point initializers */
    int64_t weight_bytes;     /* bytes of all initializers */
    double macs;              /* multiply-accumulates */
    double flops;             /* floating-point operations */
    int64_t activation_bytes; /* bytes of all non-initializer tensors */
    int64_t peak_activation_bytes; /* max live activation bytes in topo order */
    int64_t unshaped_tensors; /* tensors without a fully known shape */
    int64_t tensors;          /* all tensors */
    int opset;                /* default-domain opset */
} dlp_summary;

dlp_status dlp_model_summary(const dlp_model *m, dlp_summary *out);

/* The whole analysed graph as the JSON object documented in README
 * ("dlperf inspect --json"). *out is malloc'd; free it with free(). */
dlp_status dlp_model_to_json(const dlp_model *m, char **out, dlp_error *err);

#ifdef __cplusplus
}
#endif
#endif /* DLPERF_H */
