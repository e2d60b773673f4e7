/*
 * cli_dataset.c — opening the dataset directory a subcommand was given,
 * with the error printed as "dlperf CMD: message" (dataset, tree,
 * partition share it), and the fit cache's note after a training.
 */
#include <stdio.h>

#include "cli.h"
#include "tree/tree.h"

int cli_open_dataset(const char *cmd, const char *dir, dlp_dataset **ds) {
    dlp_error err = {0};
    *ds = NULL;
    if (dlp_dataset_open(dir, ds, &err) == DLP_OK) return 0;
    fprintf(stderr, "dlperf %s: %s\n", cmd, err.msg);
    return 1;
}

void cli_fit_cache_note(const char *cmd) {
    const char *dir = dlp_forest_cache();
    if (!dir) return;
    int hits, fits;
    dlp_forest_cache_counts(&hits, &fits);
    fprintf(stderr, "dlperf %s: fit cache %s: %d forest(s) taken from it, "
            "%d fitted\n", cmd, dir, hits, fits);
}
