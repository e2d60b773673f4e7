/* cmd_devices.c — placeholder until the devices command lands in this session. */
#include <stdio.h>
#include "cli.h"
int cmd_devices(int argc, char **argv) {
    (void)argc; (void)argv;
    fprintf(stderr, "dlperf devices: not built in this version\n");
    return 2;
}
