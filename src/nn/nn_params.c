/* nn_params.c — the parameter store: named tensors laid out in one weight
 * block, with gradient and optimizer-state blocks of the same layout. The
 * three training blocks are one zeroed allocation: a model that only
 * predicts never writes them, and once they are large enough for calloc to
 * map them fresh, never faults their pages in either (~170 page faults of
 * a `dlperf predict` with two GNNs, ~2.5 us each on the project's VM). */
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

dlp_status dlp_nn_params_alloc(dlp_nn_params *p, dlp_error *err) {
    size_t n = p->n ? p->n : 1;
    p->w = calloc(n, sizeof(nn_real));
    p->g = n <= SIZE_MAX / 3 ? calloc(3 * n, sizeof(nn_real)) : NULL;
    p->m = p->g ? p->g + n : NULL;
    p->v = p->g ? p->g + 2 * n : NULL;
    p->step = 0;
    if (!p->w || !p->g) {
        dlp_nn_params_free(p);
        return dlp_fail(err, DLP_ERR_NOMEM,
                        "nn params: cannot allocate %zu parameters", p->n);
    }
    return DLP_OK;
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
