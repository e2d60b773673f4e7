/*
 * dataset.h — internal to libdlperf: the in-memory dataset shared by the
 * loader (dataset.c), the pack reader (dataset_graphs.c) and the validator
 * (dataset_check.c).
 */
#ifndef DLP_DATASET_H
#define DLP_DATASET_H

#include "data/data.h"

typedef struct {             /* one batches/<id>/env.json */
    const char *batch_id;    /* folder name */
    const char *path;        /* env.json path, NULL when absent */
    const char *device;      /* "device" key, NULL when absent */
    double memory_mib;       /* "memory_mib", NAN when absent */
    double fresh_start_us, fresh_end_us;   /* "host_probe_start_us" /
                                "host_probe_end_us": a fresh process's host
                                probe before the workers start and after
                                they stop (since p69a); NAN when absent or
                                null */
    double inf_probe_us;     /* the median host_us of its eager inference
                                rows, NAN: none */
    double trn_probe_us;     /* of its training rows, NAN: none */
} dlp_batch_env;

struct dlp_dataset {
    char *dir;
    dlp_arena arena;          /* every string and path */
    dlp_strmap strs;          /* interned strings -> index in str_list */
    const char **str_list;
    size_t nstr, cstr;

    dlp_graph_info *graphs;
    size_t ngraphs, cgraphs;
    dlp_strmap by_hash;       /* hash -> first index row with it */
    const char **packs;       /* distinct pack names in index order */
    size_t npacks, cpacks;

    dlp_batch_env *batches;
    size_t nbatches, cbatches;

    dlp_inference_row *inf;
    size_t ninf, cinf;
    dlp_training_row *trn;
    size_t ntrn, ctrn;
    size_t ntrn_mem_withdrawn; /* memory_mib set to NAN (dataset.c:
                                  withdraw_train_memory) */
    dlp_llm_row *llm;
    size_t nllm, cllm;
    dlp_kernel_row *ker;
    size_t nker, cker;
    dlp_failure_row *fail;
    size_t nfail, cfail;
};

/* Writes the path of graphs/<pack>.tar.zst (a pack named with its
 * extension is accepted too); false when it does not fit in cap. */
bool dlp_dataset_pack_path(const dlp_dataset *ds, const char *pack, char *buf,
                           size_t cap);

/* Walks one pack: calls fn for each member as (hash-or-name, bytes, len).
 * Members whose name is not "<hash>.onnx" are passed with their name.
 * with_bytes = false passes bytes = NULL (cheaper: data is skipped). */
typedef int (*dlp_pack_visit_fn)(const char *name, bool is_graph,
                                 uint64_t size, const void *bytes,
                                 void *user);
/* dataset_xdev.c: adds "cross_device" (the agreement of two devices'
 * eager labels of one configuration beyond their CUDA-graph ratio) and
 * "host_probe" (eager latency against host_us, rep to rep) to the
 * inference statistics `kind`, per host-boundness class
 * (docs/DATASET_STATS.md); false when out of memory. */
struct cJSON;
bool dlp_dataset_eager_host(const dlp_dataset *ds, struct cJSON *kind);
/* dataset_fresh.c: adds "fresh_probe" (each batch's fresh-process host
 * probe from env.json beside the medians of its labels' own probes) to
 * the inference statistics `kind`; false when out of memory. */
bool dlp_dataset_fresh_probes(const dlp_dataset *ds, struct cJSON *kind);

dlp_status dlp_dataset_walk_pack(const char *path, bool with_bytes,
                                 dlp_pack_visit_fn fn, void *user,
                                 dlp_error *err);

#endif /* DLP_DATASET_H */
