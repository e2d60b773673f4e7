/*
 * shape_seq.c — sequence models: the recurrent layers LSTM, GRU, RNN and
 * the opset-23 attention ops (Attention, RMSNormalization,
 * RotaryEmbedding).
 *
 * Recurrent layers, layout 0 (layout 1 swaps seq and batch):
 *   X [seq, batch, in] -> Y [seq, dirs, batch, hidden],
 *   Y_h / Y_c [dirs, batch, hidden]; dirs = 2 for "bidirectional".
 * Attention (4-D inputs): Q [B, Hq, S, D], K [B, Hkv, L, D], V [B, Hkv, L, Dv]
 *   -> Y [B, Hq, S, Dv], present K/V [B, Hkv, P+L, .], scores [B, Hq, S, P+L];
 * 3-D inputs [B, S, H*D] use the q_num_heads / kv_num_heads attributes.
 */
#include "shape.h"

#include <string.h>

static dlp_status sh_recurrent(dlp_sctx *c) {
    dlp_dtype dt = dlp_sh_dtype(c, 0);
    for (int i = 0; i < c->n->n_outputs; i++) dlp_sh_set_dtype(c, i, dt);
    const dlp_shape *x = dlp_sh_shape(c, 0);
    if (!x) return DLP_OK;
    if (x->rank != 3) return dlp_sh_bad(c, "input rank %d != 3", x->rank);
    int64_t hidden = dlp_node_attr_int(c->n, "hidden_size", -1);
    if (hidden < 0) {
        /* from R: [dirs, gates*hidden, hidden] */
        const dlp_shape *r = dlp_sh_shape(c, 2);
        if (r && r->rank == 3) hidden = r->dims[2].value;
    }
    const char *dir = dlp_node_attr_str(c->n, "direction", "forward");
    int64_t dirs = !strcmp(dir, "bidirectional") ? 2 : 1;
    bool l1 = dlp_node_attr_int(c->n, "layout", 0) != 0;
    dlp_dim seq = x->dims[l1 ? 1 : 0], batch = x->dims[l1 ? 0 : 1];
    dlp_dim hd = hidden >= 0 ? dlp_dim_of(hidden) : dlp_dim_unknown();
    dlp_shape y = dlp_shape_of_rank(4), s = dlp_shape_of_rank(3);
    if (l1) {
        y.dims[0] = batch; y.dims[1] = seq; y.dims[2] = dlp_dim_of(dirs);
        s.dims[0] = batch; s.dims[1] = dlp_dim_of(dirs);
    } else {
        y.dims[0] = seq; y.dims[1] = dlp_dim_of(dirs); y.dims[2] = batch;
        s.dims[0] = dlp_dim_of(dirs); s.dims[1] = batch;
    }
    y.dims[3] = hd;
    s.dims[2] = hd;
    dlp_sh_set(c, 0, dt, &y);
    dlp_sh_set(c, 1, dt, &s);
    return dlp_sh_set(c, 2, dt, &s);
}

static dlp_status sh_attention(dlp_sctx *c) {
    dlp_dtype dt = dlp_sh_dtype(c, 0);
    for (int i = 0; i < c->n->n_outputs; i++) dlp_sh_set_dtype(c, i, dt);
    const dlp_shape *q = dlp_sh_shape(c, 0), *k = dlp_sh_shape(c, 1),
                    *v = dlp_sh_shape(c, 2), *pk = dlp_sh_shape(c, 4);
    if (!q || !k || !v) return DLP_OK;
    if (q->rank != k->rank || q->rank != v->rank ||
        (q->rank != 3 && q->rank != 4))
        return dlp_sh_bad(c, "Q/K/V ranks %d/%d/%d", q->rank, k->rank,
                          v->rank);
    dlp_dim total = k->dims[q->rank - 2];
    if (pk && pk->rank == 4) {
        int64_t a = pk->dims[2].value, b = total.value;
        total = a >= 0 && b >= 0 ? dlp_dim_of(a + b) : dlp_dim_unknown();
    }
    if (q->rank == 4) {
        dlp_shape y = *q;
        y.dims[3] = v->dims[3];
        dlp_sh_set(c, 0, dt, &y);
        dlp_shape pres = *k;
        pres.dims[2] = total;
        dlp_sh_set(c, 1, dt, &pres);
        pres.dims[3] = v->dims[3];
        dlp_sh_set(c, 2, dt, &pres);
        dlp_shape sc = *q;
        sc.dims[3] = total;
        return dlp_sh_set(c, 3, dt, &sc);
    }
    int64_t hq = dlp_node_attr_int(c->n, "q_num_heads", 0);
    int64_t hkv = dlp_node_attr_int(c->n, "kv_num_heads", 0);
    if (hq <= 0 || hkv <= 0) return dlp_sh_bad(c, "3-D inputs need heads");
    dlp_shape y = *q;
    int64_t vh = v->dims[2].value;
    y.dims[2] = vh >= 0 && vh % hkv == 0 ? dlp_dim_of(vh / hkv * hq)
                                         : dlp_dim_unknown();
    dlp_sh_set(c, 0, dt, &y);
    int64_t kh = k->dims[2].value;
    dlp_shape pres = dlp_shape_of_rank(4);
    pres.dims[0] = q->dims[0];
    pres.dims[1] = dlp_dim_of(hkv);
    pres.dims[2] = total;
    pres.dims[3] = kh >= 0 ? dlp_dim_of(kh / hkv) : dlp_dim_unknown();
    dlp_sh_set(c, 1, dt, &pres);
    pres.dims[3] = vh >= 0 ? dlp_dim_of(vh / hkv) : dlp_dim_unknown();
    dlp_sh_set(c, 2, dt, &pres);
    dlp_shape sc = dlp_shape_of_rank(4);
    sc.dims[0] = q->dims[0];
    sc.dims[1] = dlp_dim_of(hq);
    sc.dims[2] = q->dims[1];
    sc.dims[3] = total;
    return dlp_sh_set(c, 3, dt, &sc);
}

/* RMSNormalization: like X; RotaryEmbedding: like X. */
static dlp_status sh_like_input(dlp_sctx *c) {
    return dlp_sh_set(c, 0, dlp_sh_dtype(c, 0), dlp_sh_shape(c, 0));
}

const dlp_shape_op dlp_shape_ops_seq[] = {
    {"LSTM", sh_recurrent}, {"GRU", sh_recurrent}, {"RNN", sh_recurrent},
    {"Attention", sh_attention}, {"RMSNormalization", sh_like_input},
    {"RotaryEmbedding", sh_like_input},
    {NULL, NULL},
};
