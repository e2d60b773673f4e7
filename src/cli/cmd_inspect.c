/* cmd_inspect.c — placeholder until the inspect command lands in this session. */
#include <stdio.h>
#include "cli.h"
int cmd_inspect(int argc, char **argv) {
    (void)argc; (void)argv;
    fprintf(stderr, "dlperf inspect: not built in this version\n");
    return 2;
}
