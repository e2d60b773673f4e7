/* main.c — dlperf's entry point: dispatches to a subcommand. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const struct {
    const char *name;
    int (*fn)(int, char **);
    const char *help;
} commands[] = {
    {"inspect", cmd_inspect, "read a model: shapes, parameters, MACs, FLOPs"},
    {"dataset", cmd_dataset, "validate a dataset and print its statistics"},
    {"devices", cmd_devices, "list the device database"},
    {"train", cmd_train, "train a predictor on a dataset"},
    {"eval", cmd_eval, "evaluate predictors on dataset splits"},
    {"predict", cmd_predict, "predict latency, memory, energy, MIG profile"},
    {"tree", cmd_tree, "XGBoost models: fit / cross-validate, convert to UBJSON"},
    {"partition", cmd_partition, "fit the SM-partition latency model"},
    {"host", cmd_host, "fit the host-aware eager latency correction"},
};

static void usage(FILE *f) {
    fprintf(f, "dlperf %s — deep-learning performance predictor\n\n"
               "usage: dlperf COMMAND [ARGS]\n\ncommands:\n", DLPERF_VERSION);
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].help);
    fprintf(f, "\nrun 'dlperf COMMAND --help' for a command's options\n");
}

int main(int argc, char **argv) {
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
        !strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("dlperf %s\n", DLPERF_VERSION);
        return 0;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(argv[1], commands[i].name))
            return commands[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "dlperf: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}
