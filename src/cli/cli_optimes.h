/* cli_optimes.h — `dlperf inspect --device`: the node times the predictors
 * read (src/cli/cli_optimes.c). */
#ifndef DLP_CLI_OPTIMES_H
#define DLP_CLI_OPTIMES_H

#include "model/model.h"
#include "pred/pred.h"

/* Prints, for the analysed model m (its batch bound) under config c, the
 * time of every node from the operator-time forests of models_dir's
 * file of c->mode (dippm-<mode>) next to the roofline's: the sum, the op
 * types and the slowest nodes (top of each; top <= 0: all). Returns the
 * exit status; errors go to stderr. */
int cli_print_op_times(const dlp_model *m, const dlp_pred_config *c,
                       const char *models_dir, int top);

#endif
