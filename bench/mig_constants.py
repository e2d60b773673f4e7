"""mig_constants.py: the constants of dlperf's MIG advice, from a dataset.

  /usr/bin/python3 bench/mig_constants.py [DATA_DIR]      (default: data)

Per inference.csv row recording memory_mib (max_memory_allocated),
mem_reserved_mib (max_memory_reserved) and nvml_used_mib (NVML used memory of
the card during the run, PROTOCOL.md):
  context   = nvml_used - reserved     (CUDA context + whatever else the
                                        process holds outside the allocator)
  slack     = reserved / allocated     (caching allocator overhead)
Prints median, p90 and max of each, per device, and the values to put in
src/predict/predict.h (DLP_CUDA_CONTEXT_MIB, DLP_RESERVED_RATIO): the p90 of
the context (conservative for advice) and the median slack. Also how often
need = allocated x slack + context underestimates the NVML figure."""
import csv
import glob
import os
import statistics
import sys


def q(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(p * (len(v) - 1) + 0.5))]


def main(argv):
    d = argv[0] if argv else "data"
    rows = []
    for f in sorted(glob.glob(os.path.join(d, "batches", "*", "inference.csv"))):
        with open(f, newline="", encoding="utf-8-sig") as fh:
            for r in csv.DictReader(fh):
                try:
                    a = float(r["memory_mib"]); res = float(r["mem_reserved_mib"])
                    nv = float(r["nvml_used_mib"])
                except (KeyError, ValueError):
                    continue
                if a > 0 and res >= a * 0.999 and nv > res:
                    rows.append((r["device"], a, res, nv))
    if not rows:
        print("no inference rows with memory_mib, mem_reserved_mib and nvml_used_mib in", d)
        return 1
    for dev in sorted({r[0] for r in rows}):
        ctx = [nv - res for dv, a, res, nv in rows if dv == dev]
        slack = [res / a for dv, a, res, nv in rows if dv == dev]
        print("%s: %d rows" % (dev, len(ctx)))
        print("  context = nvml_used - reserved: median %.0f MiB, p90 %.0f, max %.0f"
              % (statistics.median(ctx), q(ctx, 0.9), max(ctx)))
        print("  slack = reserved / allocated: median %.3f, p90 %.3f, max %.3f"
              % (statistics.median(slack), q(slack, 0.9), max(slack)))
    ctx = [nv - res for _, a, res, nv in rows]
    slack = [res / a for _, a, res, nv in rows]
    c, s = q(ctx, 0.9), statistics.median(slack)
    under = sum(1 for _, a, res, nv in rows if a * s + c < nv) / len(rows)
    print("use: DLP_CUDA_CONTEXT_MIB %.0f (p90), DLP_RESERVED_RATIO %.2f (median);"
          " need < NVML used on %.1f%% of %d rows" % (c, s, 100 * under, len(rows)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
