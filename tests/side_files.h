/* side_files.h — the side files (*.dlps, src/nn/nn.h "Side files") a test
 * wrote into a directory of its own: counted, the first one's name, and
 * removed (test_nn_engine.c, test_forest.c, test_optime.c). */
#ifndef DLP_TEST_SIDE_FILES_H
#define DLP_TEST_SIDE_FILES_H

#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* How many side files of dir have names starting with prefix ("": any);
 * the first's name in first[0..n) when first is not NULL; with remove,
 * each is unlinked (false when one cannot be). */
static int side_files(const char *dir, const char *prefix, bool remove,
                      char *first, size_t n, bool *removed) {
    DIR *d = opendir(dir);
    int k = 0;
    struct dirent *e;
    char p[1024];
    if (removed) *removed = true;
    while (d && (e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (l <= 5 || strcmp(e->d_name + l - 5, ".dlps") ||
            strncmp(e->d_name, prefix, strlen(prefix)))
            continue;
        if (k++ == 0 && first) snprintf(first, n, "%s", e->d_name);
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        if (remove && unlink(p) != 0 && removed) *removed = false;
    }
    if (d) closedir(d);
    return k;
}

#endif
