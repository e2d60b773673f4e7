/*
 * graph.h — internal to libdlperf. The in-memory computation graph that
 * every later stage reads: the ONNX reader (src/onnx) fills it, shape
 * inference (src/shape) completes the shapes and constant values, the cost
 * model (src/cost) fills each node's cost.
 *
 * Ownership: a dlp_graph owns everything reachable from it through its arena
 * (names, attribute arrays, constant data, subgraphs). Strings point either
 * into the arena or into the memory-mapped model file, which the owning
 * dlp_model keeps mapped for the graph's lifetime.
 *
 * Values (tensors) and nodes are addressed by index. A value has at most one
 * producer node; graph inputs and initializers have producer -1.
 */
#ifndef DLP_GRAPH_H
#define DLP_GRAPH_H

#include "../core/core.h"

#define DLP_MAX_RANK 8          /* ranks above this are left unshaped */
#define DLP_MAX_CONST_ELEMS 65536 /* constant data kept for shape arithmetic */
#define DLP_MAX_SUBGRAPH_DEPTH 16

/* One dimension: a known value (>= 0), or unknown with an optional symbol. */
typedef struct {
    int64_t value; /* >= 0 when known, -1 when not */
    int32_t sym;   /* index into graph->syms, -1 if none */
} dlp_dim;

typedef struct {
    int rank;                  /* -1: rank unknown */
    dlp_dim dims[DLP_MAX_RANK];
} dlp_shape;

/* Value flags */
enum {
    DLP_V_INPUT = 1u << 0,       /* graph input (not an initializer) */
    DLP_V_INITIALIZER = 1u << 1, /* weight/constant from the file */
    DLP_V_OUTPUT = 1u << 2,      /* graph output */
    DLP_V_EXTERNAL = 1u << 3,    /* initializer bytes live in an external file */
    DLP_V_OUTER = 1u << 4,       /* subgraph: captured from an enclosing scope */
};

typedef struct {
    const char *name;
    dlp_dtype dtype;
    dlp_shape shape;
    int producer;     /* node index, -1 for inputs/initializers/outer values */
    uint32_t flags;
    /* Constant contents known at analysis time (initializers small enough,
     * Constant nodes, or folded by shape inference). Stored converted:
     * integer and bool tensors as int64 in `ival`, floating tensors as double
     * in `fval`; at most DLP_MAX_CONST_ELEMS elements. Both NULL when the
     * contents are not known. n_const is the element count. */
    int64_t *ival;
    double *fval;
    int64_t n_const;
    /* Initializer storage (for weight_bytes; bytes are never read for big
     * tensors): size in bytes as declared by dims x dtype. */
    int64_t stored_bytes;
} dlp_value;

typedef enum {
    DLP_ATTR_UNDEFINED = 0,
    DLP_ATTR_FLOAT = 1,
    DLP_ATTR_INT = 2,
    DLP_ATTR_STRING = 3,
    DLP_ATTR_TENSOR = 4,
    DLP_ATTR_GRAPH = 5,
    DLP_ATTR_FLOATS = 6,
    DLP_ATTR_INTS = 7,
    DLP_ATTR_STRINGS = 8,
    DLP_ATTR_TENSORS = 9,
    DLP_ATTR_GRAPHS = 10,
    DLP_ATTR_SPARSE_TENSOR = 11,
    DLP_ATTR_TYPE_PROTO = 13
} dlp_attr_type;  /* values are ONNX AttributeProto.AttributeType */

struct dlp_graph;

typedef struct {
    const char *name;
    dlp_attr_type type;
    int64_t i;          /* INT */
    double f;           /* FLOAT */
    const char *s;      /* STRING (NUL-terminated copy) */
    int n;              /* element count of INTS / FLOATS / STRINGS */
    int64_t *ints;
    double *floats;
    const char **strings;
    int tensor;         /* TENSOR: index of a value holding it (not in the
                           graph's name map), -1 otherwise */
    struct dlp_graph *graph; /* GRAPH (first graph of GRAPHS) */
} dlp_attr;

/* Per-node cost, filled by src/cost. Conventions in README's design notes. */
typedef struct {
    double macs;
    double flops;
    int64_t params;        /* floating-point initializer elements read */
    int64_t weight_bytes;  /* initializer bytes read */
    int64_t in_bytes;      /* activation (non-initializer) input bytes */
    int64_t out_bytes;     /* output bytes */
    int64_t out_elems;     /* output elements */
    bool known;            /* all shapes needed were known */
} dlp_cost;

typedef struct {
    const char *name;
    const char *op_type;
    const char *domain;    /* "" for the default ONNX domain */
    int n_inputs, n_outputs, n_attrs;
    int *inputs;           /* value indices; -1 for an omitted optional input */
    int *outputs;          /* value indices; -1 for an omitted optional output */
    dlp_attr *attrs;
    dlp_cost cost;
} dlp_node;

typedef struct dlp_graph {
    dlp_arena *arena;         /* shared by a graph and its subgraphs */
    struct dlp_graph *parent; /* enclosing graph for If/Loop/Scan bodies */
    int depth;                /* 0 for the main graph */
    const char *name;

    dlp_value *values;
    size_t n_values, cap_values;
    dlp_node *nodes;
    size_t n_nodes, cap_nodes;
    int *inputs;              /* graph inputs (non-initializer), value idx */
    size_t n_inputs, cap_inputs;
    int *outputs;
    size_t n_outputs, cap_outputs;
    dlp_strmap by_name;       /* value name -> index */

    /* symbols (symbolic dim names) live in the main graph only */
    const char **syms;
    int64_t *sym_values;      /* bound value or -1 */
    size_t n_syms, cap_syms;

    int opset;                /* default-domain opset (main graph's) */
    int64_t ir_version;
    int *topo;                /* node order after dlp_graph_toposort */
    /* nodes whose inputs contradict them under the current binding (a
     * Reshape of 24576 elements into a multiple of 442368: a graph
     * exported at a fixed size, bound to another); counted on the main
     * graph by the last shape inference (dlp_sh_bad) */
    int n_shape_conflicts;
} dlp_graph;

/* Creates an empty graph using `arena` (caller keeps the arena). */
dlp_status dlp_graph_init(dlp_graph *g, dlp_arena *arena, dlp_graph *parent,
                          dlp_error *err);
void dlp_graph_free(dlp_graph *g);   /* frees heap arrays, not the arena */

/* Finds a value by name in g only; -1 if absent. */
int dlp_graph_find(const dlp_graph *g, const char *name);
/* Returns the index of the value named `name`, creating it (dtype undefined,
 * rank -1) when absent. The name is copied into the arena. -1 on OOM. */
int dlp_graph_value(dlp_graph *g, const char *name, size_t len);
/* Appends a value not entered in the name map (attribute tensors). */
int dlp_graph_anon_value(dlp_graph *g);
/* Appends a node; returns its index or -1 on OOM. The caller fills it. */
int dlp_graph_add_node(dlp_graph *g);
bool dlp_graph_add_input(dlp_graph *g, int v);
bool dlp_graph_add_output(dlp_graph *g, int v);

/* Interns a symbolic dimension name in the main graph; -1 on OOM. */
int dlp_graph_sym(dlp_graph *g, const char *name, size_t len);
/* The symbol of graph input i's first dimension (its batch), -1 when that
 * dimension is fixed or absent: what binding a batch size sets. */
int dlp_graph_input_batch_sym(const dlp_graph *g, size_t i);

/* Node attribute lookup; NULL if absent. */
const dlp_attr *dlp_node_attr(const dlp_node *n, const char *name);
int64_t dlp_node_attr_int(const dlp_node *n, const char *name, int64_t def);
double dlp_node_attr_float(const dlp_node *n, const char *name, double def);
const char *dlp_node_attr_str(const dlp_node *n, const char *name,
                              const char *def);

/* Checks every node input is produced, an input, an initializer or an outer
 * value, then orders nodes topologically into g->topo. DLP_ERR_GRAPH on a
 * cycle or a dangling input, naming the node and tensor. */
dlp_status dlp_graph_toposort(dlp_graph *g, dlp_error *err);

/* Shape helpers */
bool dlp_shape_known(const dlp_shape *s);        /* rank and all dims known */
/* Element count; false if unknown or overflowing int64. */
bool dlp_shape_numel(const dlp_shape *s, int64_t *out);

#endif /* DLP_GRAPH_H */
