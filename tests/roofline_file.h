/* roofline_file.h — a roofline predictor file for tests that need a model
 * directory (test_predict.c, test_partition.c): the given targets of mode,
 * trained on the H100, validation MAPE 0.5, residual interval x[0.8, 1.25].
 * The roofline kind has no parameters, so the file is complete. */
#ifndef DLP_TEST_ROOFLINE_FILE_H
#define DLP_TEST_ROOFLINE_FILE_H

#include "nn/nn.h"
#include "pred/pred.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>

static bool roofline_file_write(const char *path, dlp_pred_mode mode,
                                uint32_t targets, dlp_error *err) {
    dlp_pred_meta m;
    dlp_pred_meta_init(&m, "roofline", mode);
    m.targets = targets;
    snprintf(m.devices, sizeof m.devices, "H100-SXM5-80GB");
    for (int t = 0; t < DLP_T_COUNT; t++)
        if (targets >> t & 1) {
            m.val_error[t] = 0.5;
            m.resid_lo[t] = log(0.8);
            m.resid_hi[t] = log(1.25);
        }
    dlp_nn_file f = {0};
    bool ok = dlp_pred_meta_write(&m, &f, err) == DLP_OK &&
              dlp_nn_file_add_str(&f, "roofline/version", "1", err) == DLP_OK &&
              dlp_nn_file_save(&f, path, err) == DLP_OK;
    dlp_nn_file_free(&f);
    return ok;
}

#endif
