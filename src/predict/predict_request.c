/*
 * predict_request.c — a prediction asked and answered in JSON: the config
 * as one JSON object, the result as dlp_predict_to_json's. The entry point
 * of bindings that would otherwise mirror dlp_predict_config's layout
 * (python/dlperf.py). Keys and types are checked strictly: a misspelt key
 * ("precison") is an error naming it, never a default silently used.
 */
#include "predict/predict.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* the field a key sets: const char *, int64_t, int (an SM count), double,
 * int (a flag), or the dims arrays */
typedef enum { K_STR, K_INT, K_SMS, K_NUM, K_BOOL, K_DIMS } key_type;

typedef struct {
    const char *name;
    key_type type;
    size_t off;              /* of the field in dlp_predict_config */
} key_spec;

#define KEY(name, type) {#name, type, offsetof(dlp_predict_config, name)}
static const key_spec KEYS[] = {
    KEY(device, K_STR),    KEY(precision, K_STR), KEY(runtime, K_STR),
    KEY(mode, K_STR),      KEY(batch, K_INT),     KEY(sms, K_SMS),
    KEY(mig, K_STR),       KEY(slo_ms, K_NUM),    KEY(measured_dir, K_STR),
    {"dims", K_DIMS, 0},   KEY(skip_absent_dims, K_BOOL),
    KEY(host_us, K_NUM),   KEY(height, K_INT),    KEY(width, K_INT),
};
#undef KEY

static const char *type_name(key_type t) {
    switch (t) {
    case K_STR: return "a string";
    case K_INT: case K_SMS: return "an integer";
    case K_NUM: return "a number";
    case K_BOOL: return "true or false";
    case K_DIMS: return "an object of NAME: integer";
    }
    return "?";
}

/* An integral JSON number within +-2^53 (exact in a double) into *out. */
static bool json_int(const cJSON *v, int64_t *out) {
    if (!cJSON_IsNumber(v)) return false;
    double d = v->valuedouble;
    if (!isfinite(d) || d != floor(d) || fabs(d) > 9007199254740992.0)
        return false;
    *out = (int64_t)d;
    return true;
}

static dlp_status set_dims(dlp_predict_config *c, const cJSON *dims,
                           dlp_error *err) {
    const cJSON *d;
    cJSON_ArrayForEach(d, dims) {
        int64_t v;
        if (!d->string || !d->string[0])
            return dlp_fail(err, DLP_ERR_ARG, "predict request: \"dims\" has an empty name");
        if (!json_int(d, &v))
            return dlp_fail(err, DLP_ERR_ARG,
                            "predict request: dim \"%s\" is not an integer", d->string);
        for (int i = 0; i < c->n_dims; i++)
            if (!strcmp(c->dim_names[i], d->string))
                return dlp_fail(err, DLP_ERR_ARG,
                                "predict request: dim \"%s\" given twice", d->string);
        if (c->n_dims >= DLP_PREDICT_MAX_DIMS)
            return dlp_fail(err, DLP_ERR_LIMIT,
                            "predict request: more than %d dims", DLP_PREDICT_MAX_DIMS);
        c->dim_names[c->n_dims] = d->string;
        c->dim_values[c->n_dims++] = v;
    }
    return DLP_OK;
}

/* One key of the request into c (strings point into the cJSON tree). */
static dlp_status set_key(dlp_predict_config *c, const cJSON *v,
                          const key_spec *k, dlp_error *err) {
    int64_t i = 0;
    bool count = k->type == K_INT || k->type == K_SMS;
    bool ok = k->type == K_STR  ? cJSON_IsString(v) && v->valuestring
            : count             ? json_int(v, &i)
            : k->type == K_NUM  ? cJSON_IsNumber(v) && isfinite(v->valuedouble)
            : k->type == K_BOOL ? cJSON_IsBool(v)
                                : cJSON_IsObject(v);
    if (!ok)
        return dlp_fail(err, DLP_ERR_ARG, "predict request: \"%s\" must be %s",
                        k->name, type_name(k->type));
    /* the struct's "not given" values (batch -1, sms / height / width 0)
     * are what leaving the key out means; given, a size is at least 1 */
    if (count && i < 1)
        return dlp_fail(err, DLP_ERR_ARG,
                        "predict request: \"%s\" %lld is not >= 1 (leave the key out "
                        "for the default)", k->name, (long long)i);
    void *f = (char *)c + k->off;
    switch (k->type) {
    case K_STR: *(const char **)f = v->valuestring; break;
    case K_INT: *(int64_t *)f = i; break;
    case K_SMS:
        if (i > 100000)
            return dlp_fail(err, DLP_ERR_ARG, "predict request: \"%s\" %lld out of range",
                            k->name, (long long)i);
        *(int *)f = (int)i;
        break;
    case K_NUM: *(double *)f = v->valuedouble; break;
    case K_BOOL: *(int *)f = cJSON_IsTrue(v); break;
    case K_DIMS: return set_dims(c, v, err);
    }
    return DLP_OK;
}

static dlp_status config_from(const cJSON *root, dlp_predict_config *c,
                              dlp_error *err) {
    if (!cJSON_IsObject(root))
        return dlp_fail(err, DLP_ERR_ARG, "predict request: not a JSON object");
    dlp_predict_config_init(c);
    const cJSON *v;
    cJSON_ArrayForEach(v, root) {
        const key_spec *k = NULL;
        for (size_t j = 0; j < sizeof KEYS / sizeof *KEYS && !k; j++)
            if (v->string && !strcmp(v->string, KEYS[j].name)) k = &KEYS[j];
        if (!k) {
            char known[400] = "";
            for (size_t j = 0; j < sizeof KEYS / sizeof *KEYS; j++) {
                strcat(known, j ? ", " : "");
                strcat(known, KEYS[j].name);
            }
            return dlp_fail(err, DLP_ERR_ARG,
                            "predict request: unknown key \"%s\" (known: %s)",
                            v->string ? v->string : "", known);
        }
        for (const cJSON *u = root->child; u != v; u = u->next)
            if (u->string && !strcmp(u->string, k->name))
                return dlp_fail(err, DLP_ERR_ARG,
                                "predict request: \"%s\" given twice", k->name);
        dlp_status st = set_key(c, v, k, err);
        if (st) return st;
    }
    if (!c->device)
        return dlp_fail(err, DLP_ERR_ARG, "predict request: \"device\" is required");
    return DLP_OK;
}

dlp_status dlp_predict_json(dlp_predictor_set *ps, dlp_model *m,
                            const char *config_json, const char *model_name,
                            char **result_json, dlp_error *err) {
    if (!result_json)
        return dlp_fail(err, DLP_ERR_ARG, "predict request: no result pointer");
    *result_json = NULL;
    if (!ps || !m || !config_json)
        return dlp_fail(err, DLP_ERR_ARG,
                        "predict request: predictor set, model and config are required");
    const char *end = config_json;
    cJSON *root = cJSON_ParseWithOpts(config_json, &end, 1);
    if (!root)
        return dlp_fail(err, DLP_ERR_ARG,
                        "predict request: the config is not valid JSON (at byte %td)",
                        end ? end - config_json : 0);
    dlp_predict_config c;
    dlp_predict_result r;
    dlp_status st = config_from(root, &c, err);
    if (!st) st = dlp_predict(ps, m, &c, &r, err);
    if (!st) st = dlp_predict_to_json(&r, model_name, result_json, err);
    cJSON_Delete(root);
    return st;
}

void dlp_free(void *p) { free(p); }
