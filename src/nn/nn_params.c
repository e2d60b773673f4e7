/* nn_params.c — the parameter store: named tensors laid out in one weight
 * block, with gradient and optimizer-state blocks of the same layout. The
 * three training blocks are one zeroed allocation, made only for a model
 * that trains (dlp_nn_params_alloc, or _alloc_grads after _alloc_weights):
 * a loaded model that only predicts has none. Where calloc maps a large
 * block fresh, an unused one cost nothing; where it comes from the heap
 * (`dlperf predict` takes large blocks from a heap on huge pages,
 * src/cli/cli_heap.c) calloc clears it: ~130 page faults and 1.5 MB of
 * memset for the two-network DIPPM file, for nothing. */
#include "nn.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int dlp_nn_params_add(dlp_nn_params *p, const char *name, int rows, int cols) {
    if (p->w || p->n_tensors >= DLP_NN_MAX_TENSORS || rows < 0 || cols < 1 ||
        strlen(name) >= DLP_NN_NAME_MAX || dlp_nn_params_find(p, name) >= 0)
        return -1;
    dlp_nn_tensor_info *t = &p->t[p->n_tensors];
    memset(t, 0, sizeof *t);
    strcpy(t->name, name);
    t->rows = rows; t->cols = cols;
    t->n = (size_t)rows * (size_t)cols;
    t->off = p->n;
    p->n += t->n;
    return p->n_tensors++;
}

dlp_status dlp_nn_params_alloc_weights(dlp_nn_params *p, dlp_error *err) {
    size_t n = p->n ? p->n : 1;
    p->w = calloc(n, sizeof(nn_real));
    p->g = p->m = p->v = NULL;
    p->step = 0;
    if (!p->w)
        return dlp_fail(err, DLP_ERR_NOMEM,
                        "nn params: cannot allocate %zu parameters", p->n);
    return DLP_OK;
}

dlp_status dlp_nn_params_alloc_grads(dlp_nn_params *p, dlp_error *err) {
    if (p->g) return DLP_OK;
    size_t n = p->n ? p->n : 1;
    p->g = n <= SIZE_MAX / 3 ? calloc(3 * n, sizeof(nn_real)) : NULL;
    p->m = p->g ? p->g + n : NULL;
    p->v = p->g ? p->g + 2 * n : NULL;
    if (!p->g)
        return dlp_fail(err, DLP_ERR_NOMEM, "nn params: cannot allocate the "
                        "gradients of %zu parameters", p->n);
    return DLP_OK;
}

dlp_status dlp_nn_params_alloc(dlp_nn_params *p, dlp_error *err) {
    dlp_status st = dlp_nn_params_alloc_weights(p, err);
    if (!st) st = dlp_nn_params_alloc_grads(p, err);
    if (st) dlp_nn_params_free(p);
    return st;
}

void dlp_nn_params_free(dlp_nn_params *p) {
    if (!p) return;
    free(p->w); free(p->g); /* g's block holds m and v */
    p->w = p->g = p->m = p->v = NULL;
}

nn_real *dlp_nn_params_w(dlp_nn_params *p, int t) {
    DLP_ASSERT(t >= 0 && t < p->n_tensors && p->w);
    return p->w + p->t[t].off;
}

nn_real *dlp_nn_params_g(dlp_nn_params *p, int t) {
    DLP_ASSERT(t >= 0 && t < p->n_tensors && p->g);
    return p->g + p->t[t].off;
}

int dlp_nn_params_find(const dlp_nn_params *p, const char *name) {
    for (int i = 0; i < p->n_tensors; i++)
        if (strcmp(p->t[i].name, name) == 0) return i;
    return -1;
}

void dlp_nn_params_zero_grad(dlp_nn_params *p) {
    if (p->g) memset(p->g, 0, p->n * sizeof(nn_real));
}

void dlp_nn_init_uniform(nn_real *w, size_t n, double bound, dlp_nn_rng *r) {
    for (size_t i = 0; i < n; i++)
        w[i] = (nn_real)((2.0 * dlp_nn_rng_uniform(r) - 1.0) * bound);
}
