/*
 * fuzz_onnx.c — libFuzzer harness for the ONNX reader and everything that
 * runs on what it builds: each input is opened as a model from memory,
 * batch-bound, analysed (shape inference + cost model), summarised and
 * dumped as JSON. Any crash, hang, leak or sanitizer report is a bug; a
 * clean error status is the expected outcome for most inputs.
 *
 * With DLP_FUZZ_READER_ONLY=1 in the environment only the reader and
 * dlp_model_set_batch run (to fuzz the reader alone, e.g. with
 * UBSAN_OPTIONS=halt_on_error=1 while later stages still have findings).
 *
 * Build and run (docs/FUZZING.md):
 *     make fuzz
 *     ./build-fuzz/fuzz_onnx -max_total_time=600 -max_len=65536 corpus/
 */
#include "dlperf.h"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    dlp_error err;
    dlp_model *m = NULL;
    if (dlp_model_open_memory(data, size, "fuzz", &m, &err) != DLP_OK)
        return 0;
    (void)dlp_model_set_batch(m, 3, &err);
    static int reader_only = -1;
    if (reader_only < 0) {
        const char *e = getenv("DLP_FUZZ_READER_ONLY");
        reader_only = e && e[0] == '1';
    }
    if (!reader_only && dlp_model_analyze(m, &err) == DLP_OK) {
        dlp_summary s;
        (void)dlp_model_summary(m, &s);
        char *json = NULL;
        if (dlp_model_to_json(m, &json, &err) == DLP_OK) free(json);
    }
    for (int i = 0; i < dlp_model_warning_count(m); i++)
        (void)dlp_model_warning(m, i);
    dlp_model_free(m);
    return 0;
}
