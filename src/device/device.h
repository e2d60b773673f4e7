/*
 * device.h — internal to libdlperf: the built-in device table
 * (device_table.c) behind the dlp_device_* API (device.c, and
 * device_measured.c for measured overrides).
 */
#ifndef DLP_DEVICE_H
#define DLP_DEVICE_H

#include "core/core.h"

extern const dlp_device dlp_device_table[];
extern const int dlp_device_table_len;

/* Lowercases and drops everything but letters and digits, so "H100-SXM5"
 * and "h100 sxm5" compare equal. Writes at most cap bytes (NUL included). */
void dlp_device_norm(const char *s, char *out, size_t cap);

/* The table entry for a name or alias, or NULL. */
const dlp_device *dlp_device_lookup(const char *name);

#endif /* DLP_DEVICE_H */
