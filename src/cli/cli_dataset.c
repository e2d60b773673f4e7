/*
 * cli_dataset.c — opening the dataset directory a subcommand was given,
 * with the error printed as "dlperf CMD: message" (dataset, tree,
 * partition share it).
 */
#include <stdio.h>

#include "cli.h"

int cli_open_dataset(const char *cmd, const char *dir, dlp_dataset **ds) {
    dlp_error err = {0};
    *ds = NULL;
    if (dlp_dataset_open(dir, ds, &err) == DLP_OK) return 0;
    fprintf(stderr, "dlperf %s: %s\n", cmd, err.msg);
    return 1;
}
