/*
 * tree_forest.c — a booster's trees as packed node words (tree.h gives the
 * layout and says why) and their evaluation without XGBoost, built from
 * the booster's JSON (XGBoost 1.7: learner.gradient_booster.model.trees[],
 * each with left_children / right_children (-1 at a leaf), split_indices,
 * split_conditions (the leaf's value at a leaf), default_left; and
 * learner.learner_model_param.base_score, a string).
 */
#include "tree/tree.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* dlp_forest.state */
enum { FOREST_UNCHECKED, FOREST_SOUND, FOREST_BROKEN };

#define FOREST_MAX_NODES (1 << 24)
#define TREE_MAX_NODES (1 << 16)     /* a right child at most 65,535 on */

void dlp_forest_free(dlp_forest *f) {
    if (!f) return;
    free(f->root);
    free(f->own);
    dlp_nn_map_release(f->map);
    free(f);
}

static dlp_forest *forest_alloc(int n_trees) {
    dlp_forest *f = calloc(1, sizeof *f);
    if (!f) return NULL;
    f->root = malloc((size_t)(n_trees + 1) * sizeof *f->root);
    if (!f->root) {
        free(f);
        return NULL;
    }
    f->n_trees = n_trees;
    atomic_init(&f->state, FOREST_UNCHECKED);
    return f;
}

static uint64_t make_word(float value, int feat, bool dleft, unsigned right) {
    uint32_t u;
    memcpy(&u, &value, 4);
    return (uint64_t)u | (uint64_t)feat << 32 | (uint64_t)dleft << 47 |
           (uint64_t)right << 48;
}

static void put_word(uint8_t *nodes, int i, uint64_t w) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    w = __builtin_bswap64(w);
#endif
    memcpy(nodes + 8 * (size_t)i, &w, 8);
}

/* Node i of the tree [.., end) is sound: a leaf's value finite; an
 * internal node's feature below n_features, its threshold not NaN, its
 * children (i + 1 and i + distance) after it and before end. Without
 * branches (leaves and splits alternate unpredictably: a branchy check of
 * the 270,000 shipped nodes took longer than reading them). */
static inline bool node_ok(const uint8_t *nodes, int nf, int i, int end) {
    uint64_t w = dlp_forest_word(nodes, i);
    uint32_t mag = (uint32_t)w & 0x7fffffffu;
    unsigned feat = (unsigned)dlp_forest_feat(w), right = (unsigned)(w >> 48);
    bool leaf = (feat == DLP_FOREST_LEAF) & (mag < 0x7f800000u);
    bool split = (feat < (unsigned)nf) & (mag <= 0x7f800000u) & (i + 1 < end) &
                 (right >= 2) & (right < (unsigned)(end - i));
    return leaf | split;
}

/* Whether some node of the tree [b, e) is unsound: the failures OR-ed
 * into an int, which GCC vectorizes at -O2 (a bool AND it does not): a
 * ResNet-50 request's forest checks 13.5 -> 5.0 M instructions
 * (callgrind, forty-eighth session). The loop is compiled twice, for the
 * x86-64 baseline (SSE2: two words a step) and for AVX2 (four), picked
 * at run time. */
#define TREE_BAD_BODY                                                      \
    int bad = 0;                                                           \
    for (int i = b; i < e; i++) bad |= !node_ok(nodes, nf, i, e);          \
    return bad;
static int tree_bad_base(const uint8_t *nodes, int nf, int b, int e) {
    TREE_BAD_BODY
}
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx2")))
static int tree_bad_avx2(const uint8_t *nodes, int nf, int b, int e) {
    TREE_BAD_BODY
}
#endif

static int tree_bad(const uint8_t *nodes, int nf, int b, int e) {
#if defined(__x86_64__) && defined(__GNUC__)
    static int avx2 = -1;   /* racing threads store the same answer */
    if (avx2 < 0) avx2 = __builtin_cpu_supports("avx2") ? 1 : 0;
    if (avx2) return tree_bad_avx2(nodes, nf, b, e);
#endif
    return tree_bad_base(nodes, nf, b, e);
}

/* The checks of dlp_forest_ready. With f->has_crc the words' CRC is
 * summed tree by tree in the same pass, while a tree's nodes are in the
 * first-level cache: one read of the words from memory, not two (the
 * operator-time forests are 1.6 MB); a mismatch is reported before any
 * fault of the nodes it explains. */
static dlp_status check_forest(const dlp_forest *f, dlp_error *err) {
    const char *nm = f->name[0] ? f->name : "built";
    dlp_status st = DLP_OK;
    uint32_t crc = 0;
    if (f->n_features < 1 || f->n_features >= DLP_FOREST_LEAF)
        st = dlp_fail(err, DLP_ERR_FORMAT, "forest '%s': %d features", nm,
                      f->n_features);
    else if (f->root[0] != 0 || f->root[f->n_trees] != f->n_nodes)
        st = dlp_fail(err, DLP_ERR_FORMAT, "forest '%s': the trees do not "
                      "cover the %d nodes", nm, f->n_nodes);
    for (int t = 0; !st && t < f->n_trees; t++) {
        int b = f->root[t], e = f->root[t + 1];
        if (!(e > b && e - b <= TREE_MAX_NODES)) {
            st = dlp_fail(err, DLP_ERR_FORMAT, "forest '%s': tree %d spans "
                          "[%d, %d)", nm, t, b, e);
            break;
        }
        if (f->has_crc)   /* the trees follow one another from word 0 */
            crc = dlp_nn_crc32(crc, f->node + 8 * (size_t)b, 8 * (size_t)(e - b));
        int bad = tree_bad(f->node, f->n_features, b, e);
        for (int i = b; bad && i < e; i++)
            if (!node_ok(f->node, f->n_features, i, e)) {
                st = dlp_fail(err, DLP_ERR_FORMAT, "forest '%s': node %d of "
                              "tree [%d, %d) out of range", nm, i, b, e);
                break;
            }
    }
    bool summed = !st;   /* the loop ran through: crc covers every word */
    if (!st && !isfinite(f->base))
        st = dlp_fail(err, DLP_ERR_FORMAT, "forest '%s': base score not "
                      "finite", nm);
    if (f->has_crc && !summed)
        crc = dlp_nn_crc32(0, f->node, 8 * (size_t)f->n_nodes);
    if (f->has_crc && crc != f->crc)
        st = dlp_fail(err, DLP_ERR_FORMAT, "forest '%s' is corrupt (its "
                      "words' checksum does not match)", nm);
    return st;
}

dlp_status dlp_forest_ready(const dlp_forest *f, dlp_error *err) {
    /* the state is the one field a reader writes: the forest was
     * allocated writable (forest_alloc), and two threads that check it
     * at once store the same answer */
    atomic_int *state = (atomic_int *)&f->state;
    if (atomic_load_explicit(state, memory_order_acquire) == FOREST_SOUND)
        return DLP_OK;
    dlp_status st = check_forest(f, err);
    atomic_store_explicit(state, st ? FOREST_BROKEN : FOREST_SOUND,
                          memory_order_release);
    return st;
}

void dlp_forest_eval_many(const dlp_forest *f, const float *const *x, int n,
                          float *out) {
    dlp_error e;
    if (n > 0 && dlp_forest_ready(f, &e)) {
        for (int k = 0; k < n; k++) out[k] = NAN;
        return;
    }
    for (int k = 0; k < n; k++) out[k] = f->base;
    for (int t = 0; t < f->n_trees; t++)
        for (int k = 0; k < n; k++) {
            int i = f->root[t];
            uint64_t w = dlp_forest_word(f->node, i);
            for (int j; (j = dlp_forest_feat(w)) != DLP_FOREST_LEAF;) {
                float v = x[k][j];
                bool left = isnan(v) ? (w >> 47) & 1 : v < dlp_forest_value(w);
                i += left ? 1 : (int)(w >> 48);
                w = dlp_forest_word(f->node, i);
            }
            out[k] += dlp_forest_value(w);
        }
    if (f->logistic)
        for (int k = 0; k < n; k++) out[k] = 1.0f / (1.0f + expf(-out[k]));
}

bool dlp_forest_splits_on(const dlp_forest *f, int j) {
    if (j < 0 || j >= f->n_features) return false;   /* (a leaf's mark) */
    for (int i = 0; i < f->n_nodes; i++)
        if (dlp_forest_feat(dlp_forest_word(f->node, i)) == j) return true;
    return false;
}

float dlp_forest_max_split(const dlp_forest *f, int j) {
    float m = -INFINITY;
    if (j < 0 || j >= f->n_features) return m;
    for (int i = 0; i < f->n_nodes; i++) {
        uint64_t w = dlp_forest_word(f->node, i);
        if (dlp_forest_feat(w) == j && dlp_forest_value(w) > m)
            m = dlp_forest_value(w);
    }
    return m;
}

float dlp_forest_eval(const dlp_forest *f, const float *x) {
    float s;
    dlp_forest_eval_many(f, &x, 1, &s);
    return s;
}

/* ---- from XGBoost's JSON ---- */

/* One tree's arrays as XGBoost numbers its nodes (0 the root). */
typedef struct {
    int n;
    int *left, *right, *feat, *pos, *stack;
    float *value;
    bool *dleft;
} json_tree;

/* The n-element numeric array `name` of tree object t, or NULL. */
static const cJSON *arr(const cJSON *t, const char *name, int n) {
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(t, name);
    return cJSON_IsArray(a) && cJSON_GetArraySize(a) == n ? a : NULL;
}

static bool read_tree(const cJSON *t, json_tree *j) {
    const cJSON *l = arr(t, "left_children", j->n), *r = arr(t, "right_children", j->n),
                *si = arr(t, "split_indices", j->n), *sc = arr(t, "split_conditions", j->n),
                *dl = arr(t, "default_left", j->n);
    if (!l || !r || !si || !sc || !dl) return false;
    l = l->child; r = r->child; si = si->child; sc = sc->child; dl = dl->child;
    for (int i = 0; i < j->n; i++) {
        j->left[i] = l->valueint;
        j->right[i] = r->valueint;
        j->feat[i] = si->valueint;
        j->value[i] = (float)sc->valuedouble;
        j->dleft[i] = dl->valueint != 0;
        l = l->next; r = r->next; si = si->next; sc = sc->next; dl = dl->next;
    }
    return true;
}

/* Tree j's nodes in pre-order as words at out[0..j->n): every node
 * reached once from the root, children in range, features below nf. */
static dlp_status pack_tree(json_tree *j, int nf, uint8_t *out, int t,
                            dlp_error *err) {
    int n = j->n, k = 0, top = 0;
    for (int i = 0; i < n; i++) j->pos[i] = -1;
    j->stack[top++] = 0;
    while (top) {
        int v = j->stack[--top];
        if (v < 0 || v >= n || j->pos[v] >= 0)
            return dlp_fail(err, DLP_ERR_FORMAT, "forest: tree %d is not a tree "
                            "(node %d)", t, v);
        j->pos[v] = k++;
        bool leaf = j->left[v] < 0;
        if (!leaf && (j->right[v] < 0 || j->feat[v] < 0 || j->feat[v] >= nf))
            return dlp_fail(err, DLP_ERR_FORMAT, "forest: tree %d node %d: "
                            "children %d, %d, feature %d", t, v, j->left[v],
                            j->right[v], j->feat[v]);
        if (!leaf) {   /* n nodes: the stack never holds more than n */
            j->stack[top++] = j->right[v];
            j->stack[top++] = j->left[v];
        }
    }
    if (k != n)
        return dlp_fail(err, DLP_ERR_FORMAT, "forest: tree %d reaches %d of its "
                        "%d nodes", t, k, n);
    for (int v = 0; v < n; v++) {
        bool leaf = j->left[v] < 0;
        unsigned right = leaf ? 0 : (unsigned)(j->pos[j->right[v]] - j->pos[v]);
        put_word(out, j->pos[v], make_word(j->value[v], leaf ? DLP_FOREST_LEAF
                                           : j->feat[v], !leaf && j->dleft[v], right));
    }
    return DLP_OK;
}

static dlp_status from_json(const cJSON *root, int nf, dlp_forest **out,
                            dlp_error *err) {
    const cJSON *lr = cJSON_GetObjectItemCaseSensitive(root, "learner");
    const cJSON *mp = cJSON_GetObjectItemCaseSensitive(lr, "learner_model_param");
    const cJSON *bs = cJSON_GetObjectItemCaseSensitive(mp, "base_score");
    const cJSON *gb = cJSON_GetObjectItemCaseSensitive(lr, "gradient_booster");
    const cJSON *md = cJSON_GetObjectItemCaseSensitive(gb, "model");
    const cJSON *trees = cJSON_GetObjectItemCaseSensitive(md, "trees");
    if (!cJSON_IsString(bs) || !cJSON_IsArray(trees))
        return dlp_fail(err, DLP_ERR_FORMAT, "forest: booster JSON lacks "
                        "base_score or trees");
    if (nf < 1 || nf >= DLP_FOREST_LEAF)
        return dlp_fail(err, DLP_ERR_ARG, "forest: %d features", nf);
    int nt = cJSON_GetArraySize(trees), nn = 0, most = 0;
    const cJSON *t;
    cJSON_ArrayForEach(t, trees) {
        int n = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(t, "left_children"));
        if (n < 1 || n > TREE_MAX_NODES || n > FOREST_MAX_NODES - nn)
            return dlp_fail(err, DLP_ERR_FORMAT, "forest: a tree of %d nodes "
                            "(1 to %d)", n, TREE_MAX_NODES);
        nn += n;
        if (n > most) most = n;
    }
    dlp_forest *f = forest_alloc(nt);
    json_tree j = {0};
    size_t m = (size_t)most + 1;
    j.left = malloc(m * sizeof *j.left);
    j.right = malloc(m * sizeof *j.right);
    j.feat = malloc(m * sizeof *j.feat);
    j.pos = malloc(m * sizeof *j.pos);
    j.stack = malloc(m * sizeof *j.stack);
    j.value = malloc(m * sizeof *j.value);
    j.dleft = malloc(m * sizeof *j.dleft);
    dlp_status st = DLP_OK;
    if (!f || !(f->own = malloc(8 * (size_t)(nn ? nn : 1))) || !j.left || !j.right ||
        !j.feat || !j.pos || !j.stack || !j.value || !j.dleft)
        st = dlp_fail(err, DLP_ERR_NOMEM, "forest: out of memory");
    if (!st) {
        f->node = f->own;
        f->n_nodes = nn;
        f->n_features = nf;
        f->base = strtof(bs->valuestring, NULL);
        const cJSON *ob = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(lr, "objective"), "name");
        if (cJSON_IsString(ob) && !strcmp(ob->valuestring, "binary:logistic")) {
            if (!(f->base > 0 && f->base < 1))
                st = dlp_fail(err, DLP_ERR_FORMAT, "forest: logistic base score "
                              "outside (0, 1)");
            f->logistic = 1;
            f->base = logf(f->base / (1 - f->base));
        } else if (!cJSON_IsString(ob) || strcmp(ob->valuestring, "reg:squarederror")) {
            st = dlp_fail(err, DLP_ERR_UNSUPPORTED, "forest: objective not "
                          "reg:squarederror or binary:logistic");
        }
    }
    int k = 0, at = 0;
    for (t = st ? NULL : trees->child; t; t = t->next, k++) {
        j.n = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(t, "left_children"));
        if (!read_tree(t, &j)) {
            st = dlp_fail(err, DLP_ERR_FORMAT, "forest: tree %d's arrays differ "
                          "in length", k);
            break;
        }
        f->root[k] = at;
        st = pack_tree(&j, nf, (uint8_t *)f->own + 8 * (size_t)at, k, err);
        if (st) break;
        at += j.n;
    }
    if (!st) {
        f->root[nt] = nn;
        st = dlp_forest_ready(f, err);
    }
    free(j.left); free(j.right); free(j.feat); free(j.pos); free(j.stack);
    free(j.value); free(j.dleft);
    if (st) {
        dlp_forest_free(f);
        return st;
    }
    *out = f;
    return DLP_OK;
}

dlp_status dlp_forest_from_tree(dlp_tree *t, int n_features, dlp_forest **out,
                                dlp_error *err) {
    *out = NULL;
    void *buf = NULL;
    size_t len = 0;
    dlp_status st = dlp_tree_save_as(t, DLP_TREE_JSON, &buf, &len, err);
    if (st) return st;
    cJSON *root = cJSON_ParseWithLength(buf, len);
    free(buf);
    if (!root) return dlp_fail(err, DLP_ERR_FORMAT, "forest: booster JSON does not parse");
    st = from_json(root, n_features, out, err);
    cJSON_Delete(root);
    return st;
}

/* ---- model files ---- */

/* The entries of a forest are "<prefix>/trees", "/words" and "/base" (and
 * "/nodes" of the format before packed nodes): a prefix that would not
 * fit FOREST_NAME_MAX with its longest part is refused, never cut off
 * (a cut name would save or look up another forest's entries). */
#define FOREST_NAME_MAX 256

static dlp_status check_prefix(const char *prefix, dlp_error *err) {
    size_t n = prefix ? strlen(prefix) : 0;
    if (n == 0 || n + sizeof "/words" > FOREST_NAME_MAX)
        return dlp_fail(err, DLP_ERR_ARG, "forest: prefix of %zu characters "
                        "(1 to %zu)", n, FOREST_NAME_MAX - sizeof "/words");
    return DLP_OK;
}

dlp_status dlp_forest_save(const dlp_forest *f, dlp_nn_file *out,
                           const char *prefix, dlp_error *err) {
    char name[FOREST_NAME_MAX];
    dlp_status st = check_prefix(prefix, err);
    if (st) return st;
    int64_t *tr = malloc((size_t)(f->n_trees + 2) * sizeof *tr);
    if (!tr) return dlp_fail(err, DLP_ERR_NOMEM, "forest: out of memory");
    tr[0] = f->n_features;
    tr[1] = f->logistic;
    for (int t = 0; t < f->n_trees; t++) tr[t + 2] = f->root[t];
    snprintf(name, sizeof name, "%s/trees", prefix);
    st = dlp_nn_file_add_i64(out, name, tr, (uint64_t)f->n_trees + 2, err);
    snprintf(name, sizeof name, "%s/words", prefix);
    if (!st) st = dlp_nn_file_add_u8(out, name, f->node, 8 * (uint64_t)f->n_nodes, err);
    snprintf(name, sizeof name, "%s/base", prefix);
    if (!st) st = dlp_nn_file_add_f32(out, name, &f->base, 1, err);
    free(tr);
    return st;
}

dlp_status dlp_forest_save_tree(dlp_tree *t, int n_features, dlp_nn_file *out,
                                const char *prefix, dlp_error *err) {
    dlp_forest *f = NULL;
    dlp_status st = dlp_forest_from_tree(t, n_features, &f, err);
    if (!st) st = dlp_forest_save(f, out, prefix, err);
    dlp_forest_free(f);
    return st;
}

dlp_status dlp_forest_load(const dlp_nn_file *in, const char *prefix,
                           dlp_forest **out, dlp_error *err) {
    *out = NULL;
    char name[FOREST_NAME_MAX];
    dlp_status st = check_prefix(prefix, err);
    if (st) return st;
    snprintf(name, sizeof name, "%s/trees", prefix);
    const dlp_nn_entry *tr = dlp_nn_file_get(in, name, DLP_NN_I64);
    if (!tr) return DLP_OK;
    snprintf(name, sizeof name, "%s/words", prefix);
    const dlp_nn_entry *nd = dlp_nn_file_get(in, name, DLP_NN_U8);
    snprintf(name, sizeof name, "%s/nodes", prefix);
    if (!nd && dlp_nn_file_get(in, name, DLP_NN_F32))
        return dlp_fail(err, DLP_ERR_UNSUPPORTED, "forest '%s' is stored in the "
                        "format before packed nodes (2026-12-01): retrain the "
                        "model (make models)", prefix);
    if (tr->count < 3 || tr->count > FOREST_MAX_NODES || !nd || nd->count % 8 ||
        nd->count / 8 > FOREST_MAX_NODES || nd->count == 0)
        return dlp_fail(err, DLP_ERR_FORMAT, "forest '%s': trees or nodes "
                        "missing or malformed", prefix);
    int nt = (int)tr->count - 2;
    dlp_forest *f = forest_alloc(nt);
    if (!f) return dlp_fail(err, DLP_ERR_NOMEM, "forest: out of memory");
    f->n_nodes = (int)(nd->count / 8);
    snprintf(name, sizeof name, "%s/base", prefix);
    st = dlp_nn_file_read_f32(in, name, &f->base, 1, err);
    const int64_t *ti = tr->data;
    f->n_features = ti[0] > 0 && ti[0] < DLP_FOREST_LEAF ? (int)ti[0] : 0;
    f->logistic = ti[1] == 1;
    if (!st && ti[1] != 0 && ti[1] != 1)
        st = dlp_fail(err, DLP_ERR_FORMAT, "forest '%s': objective %lld", prefix,
                      (long long)ti[1]);
    /* each tree starts after the one before */
    for (int t = 0; !st && t < nt; t++) {
        int64_t r = ti[t + 2];
        if (r < (t ? f->root[t - 1] + 1 : 0) || r >= f->n_nodes)
            st = dlp_fail(err, DLP_ERR_FORMAT, "forest '%s': tree %d starts at "
                          "node %lld", prefix, t, (long long)r);
        else
            f->root[t] = (int32_t)r;
    }
    f->root[nt] = f->n_nodes;
    /* the words stay where they lie in the file's bytes, or its side
     * file's (the fp32 workspace forests are 1.6 MB); an entry of a file
     * built in memory is copied, since that file may be freed first */
    if (!st) f->map = dlp_nn_entry_keep(nd);
    f->has_crc = nd->crc_pending;
    f->crc = nd->crc;
    snprintf(f->name, sizeof f->name, "%s", prefix);
    if (!st && f->map) {
        f->node = nd->raw;
    } else if (!st) {
        f->own = malloc((size_t)nd->count);
        if (!f->own)
            st = dlp_fail(err, DLP_ERR_NOMEM, "forest: out of memory");
        else
            memcpy(f->own, dlp_nn_entry_bytes(nd), (size_t)nd->count);
        f->node = f->own;
    }
    if (st) {
        dlp_forest_free(f);
        return st;
    }
    *out = f;
    return DLP_OK;
}

dlp_status dlp_forest_load_for(const dlp_nn_file *in, const char *prefix,
                               int nfeat, dlp_forest **out, dlp_error *err) {
    dlp_status st = dlp_forest_load(in, prefix, out, err);
    if (!st && *out && (*out)->n_features != nfeat) {
        st = dlp_fail(err, DLP_ERR_FORMAT, "forest '%s' has %d features, "
                      "expected %d", prefix, (*out)->n_features, nfeat);
        dlp_forest_free(*out);
        *out = NULL;
    }
    return st;
}
