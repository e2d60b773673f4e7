/*
 * dir_list.c — the sorted names in a directory that pass a filter: model
 * files (*.dlpm), probe files (*convws*.jsonl.xz), graphs of a directory
 * prediction (*.onnx), batch directories. One listing for all of them, so
 * each reader sees its files in the same (strcmp) order on every system.
 */
#include "core.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int cmp_name(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool ends_with(const char *s, size_t l, const char *suffix) {
    size_t sl = strlen(suffix);
    return l > sl && !strcmp(s + l - sl, suffix);
}

/* Whether entry name of the open directory d is a directory (links
 * followed): fstatat on d, no path to build. */
static bool is_subdir(DIR *d, const char *name) {
    struct stat sb;
    return fstatat(dirfd(d), name, &sb, 0) == 0 && S_ISDIR(sb.st_mode);
}

dlp_status dlp_dir_list(const char *dir, const dlp_dir_filter *f,
                        char ***names, int *n_out, dlp_error *err) {
    *names = NULL;
    *n_out = 0;
    DIR *d = opendir(dir);
    if (!d)
        return dlp_fail(err, errno == ENOENT || errno == ENOTDIR
                                 ? DLP_ERR_NOT_FOUND : DLP_ERR_IO,
                        "cannot open directory %s: %s", dir, strerror(errno));
    char **v = NULL;
    size_t cap = 0;
    int n = 0;
    dlp_status st = DLP_OK;
    for (struct dirent *e; (e = readdir(d));) {
        const char *nm = e->d_name;
        size_t l = strlen(nm);
        if (nm[0] == '.' || (f->suffix && !ends_with(nm, l, f->suffix)) ||
            (f->contains && !strstr(nm, f->contains)) ||
            (f->dirs_only && !is_subdir(d, nm)))
            continue;
        if (n == INT32_MAX || !dlp_grow((void **)&v, &cap, (size_t)n + 1, sizeof *v) ||
            !(v[n] = strdup(nm))) {
            st = dlp_fail(err, DLP_ERR_NOMEM, "out of memory listing %s", dir);
            break;
        }
        n++;
    }
    closedir(d);
    if (st) {
        dlp_dir_list_free(v, n);
        return st;
    }
    if (n > 1) qsort(v, (size_t)n, sizeof *v, cmp_name);
    *names = v;
    *n_out = n;
    return DLP_OK;
}

void dlp_dir_list_free(char **names, int n) {
    for (int i = 0; i < n; i++) free(names[i]);
    free(names);
}
