/* cmd_dataset.c — placeholder until the dataset command lands in this session. */
#include <stdio.h>
#include "cli.h"
int cmd_dataset(int argc, char **argv) {
    (void)argc; (void)argv;
    fprintf(stderr, "dlperf dataset: not built in this version\n");
    return 2;
}
