/*
 * model.h — internal to libdlperf. What a dlp_model handle holds: the
 * mapped file, the arena, the main graph, the symbol bindings and warnings.
 *
 * Stages: dlp_model_open (src/model/model.c, via src/onnx) fills `graph`;
 * dlp_model_analyze (src/model/analyze.c) runs dlp_shape_infer (src/shape)
 * then dlp_cost_graph (src/cost).
 */
#ifndef DLP_MODEL_H
#define DLP_MODEL_H

#include "../graph/graph.h"

struct dlp_model {
    char *path;              /* malloc'd copy, NULL for memory models */
    char *dir;               /* directory for external data, malloc'd */
    const uint8_t *bytes;    /* the model file (mmap or caller memory) */
    size_t len;
    bool mapped;             /* bytes came from mmap: munmap on free */
    dlp_arena arena;
    dlp_graph graph;
    int64_t batch;           /* --batch value, -1 when not given */
    bool analyzed;
    dlp_warnings warnings;
};

/* src/shape: infers every value's dtype, shape and (small) constant
 * contents, in topological order, through subgraphs. Symbol bindings come
 * from graph->sym_values. Unknown ops produce a warning, not an error. */
dlp_status dlp_shape_infer(dlp_graph *g, dlp_warnings *w, dlp_error *err);

/* src/cost: fills node->cost for every node of g and its subgraphs. */
void dlp_cost_graph(dlp_graph *g);

#endif /* DLP_MODEL_H */
