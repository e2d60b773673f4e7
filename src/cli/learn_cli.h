/* learn_cli.h — pieces shared by `dlperf train` (cmd_train.c) and
 * `dlperf eval` (cmd_eval.c), defined in cmd_train.c: the common options
 * (which data, which mode, training hyper-parameters) and building the
 * examples with progress on stderr. */
#ifndef DLP_LEARN_CLI_H
#define DLP_LEARN_CLI_H

#include "pred/pred_train.h"

typedef struct {
    const char *data;          /* dataset directory */
    dlp_pred_mode mode;
    const char *device;        /* filter */
    int runtime, precision;    /* -1: all */
    dlp_train_opts train;
    bool quiet;
    int pool_max;              /* TraPPM pool sample (0: every graph) */
    bool has_host_norm;        /* --host-norm FILE read into host_norm */
    dlp_host_norm host_norm;
    long long split_seed;      /* --split-seed: eval's folds', train's
                                  validation split's seed (-1: --seed's) */
} learn_opts;

void learn_opts_init(learn_opts *o);
/* Consumes argv[*i] (and its value) when it is a common option: 1 taken,
 * 0 not ours, -1 bad value (message printed). */
int learn_opt(learn_opts *o, int argc, char **argv, int *i);
const char *learn_opts_help(void);
/* The --readout name of DLP_READOUT_* r; NULL past the last. */
const char *learn_readout_name(int r);
/* Opens the dataset and builds the examples (with the unlabeled pool when
 * pool is set). Prints errors; returns 0 on success. */
int learn_examples(const learn_opts *o, bool pool, dlp_dataset **ds,
                   dlp_examples *E);
/* Progress printer for dlp_train_opts.progress (stderr, one line per
 * epoch). */
void learn_progress(void *user, const dlp_train_progress *p);

#endif
