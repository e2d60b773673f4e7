/* cli.h — the dlperf command-line tool: one file per subcommand. Only the
 * CLI prints and exits; each cmd_* returns the process exit status. */
#ifndef DLP_CLI_H
#define DLP_CLI_H

#include "dlperf.h"

int cmd_inspect(int argc, char **argv);   /* src/cli/cmd_inspect.c */
int cmd_dataset(int argc, char **argv);   /* src/cli/cmd_dataset.c */
int cmd_devices(int argc, char **argv);   /* src/cli/cmd_devices.c */
int cmd_train(int argc, char **argv);     /* src/cli/cmd_train.c */
int cmd_eval(int argc, char **argv);      /* src/cli/cmd_eval.c */
int cmd_predict(int argc, char **argv);   /* src/cli/cmd_predict.c */
int cmd_tree(int argc, char **argv);      /* src/cli/cmd_tree.c */
int cmd_partition(int argc, char **argv); /* src/cli/cmd_partition.c */
int cmd_host(int argc, char **argv);      /* src/cli/cmd_host.c */

/* Opens dataset dir into *ds; on failure prints "dlperf CMD: why" and
 * returns the exit status 1 (0 on success). src/cli/cli_dataset.c */
int cli_open_dataset(const char *cmd, const char *dir, dlp_dataset **ds);

/* With a fit cache set (--fit-cache), prints on stderr how many of the
 * probes' forests came from it and how many were fitted. cli_dataset.c */
void cli_fit_cache_note(const char *cmd);

/* Backs the next 16 MB of heap growth with transparent huge pages where
 * the kernel offers them (a one-shot process's page faults); no effect
 * elsewhere. src/cli/cli_heap.c */
void cli_heap_hugepages(void);

/* The shipped predictors' folder: <exe>/../models or <exe>/models when
 * there, else "models", written into buf. src/cli/cli_models.c */
const char *cli_default_models(char *buf, size_t cap);

#endif
