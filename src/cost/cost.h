/*
 * cost.h — internal to libdlperf. The cost model: per-node MACs, FLOPs,
 * parameter and byte counts (conventions in docs/COST.md).
 *
 * cost.c walks the graph and fills the byte/element fields every node has;
 * cost_ops.c holds the per-operator MAC/FLOP formulas.
 */
#ifndef DLP_COST_H
#define DLP_COST_H

#include "../graph/graph.h"

/* Known element count of value v of g (v may be -1: false). */
bool dlp_cost_numel(const dlp_graph *g, int v, int64_t *out);

/* Known shape of input k of n; NULL when absent or not fully known. */
const dlp_shape *dlp_cost_in_shape(const dlp_graph *g, const dlp_node *n,
                                   int k);

/* Fills *macs and *flops for node n of g. Returns false when the operator is
 * not in the table or a shape it needs is unknown (then both are 0). */
bool dlp_cost_op(const dlp_graph *g, const dlp_node *n, double *macs,
                 double *flops);

/* Whether the operator is in the cost table (known formula, maybe zero). */
bool dlp_cost_op_known(const char *domain, const char *op_type);

#endif /* DLP_COST_H */
