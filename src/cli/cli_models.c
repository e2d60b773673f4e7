/*
 * cli_models.c — where the CLI finds the shipped predictors when no
 * --models is given: next to the binary, else the working directory's
 * models/.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

const char *cli_default_models(char *buf, size_t cap) {
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    struct stat st;
    if (n > 0) {
        exe[n] = 0;
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = 0;
            snprintf(buf, cap, "%s/../models", exe);
            if (stat(buf, &st) == 0 && S_ISDIR(st.st_mode)) return buf;
            snprintf(buf, cap, "%s/models", exe);
            if (stat(buf, &st) == 0 && S_ISDIR(st.st_mode)) return buf;
        }
    }
    snprintf(buf, cap, "models");
    return buf;
}
