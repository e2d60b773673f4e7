"""mig_constants.py: the constants of dlperf's MIG advice, from a dataset.

  /usr/bin/python3 bench/mig_constants.py [DATA_DIR]      (default: data)

Per inference.csv row recording memory_mib (max_memory_allocated),
mem_reserved_mib (max_memory_reserved) and nvml_used_mib (NVML used memory of
the card during the run, PROTOCOL.md):
  context   = nvml_used - reserved     (CUDA context + whatever else the
                                        process holds outside the allocator)
  slack     = reserved / allocated     (caching allocator overhead)
Prints median, p90 and max of each, per device, and the values to put in
src/predict/predict.h (DLP_RESERVED_RATIO s, DLP_CUDA_CONTEXT_MIB c): the
pair for which need = allocated x s + c covers the NVML figure on 95% of the
rows with the smallest mean need (conservative: a profile too small OOMs)."""
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
    # need = allocated x s + c must cover NVML used on 95% of the rows; of
    # the (s, c) pairs on a grid, the one with the smallest mean need
    def fit(rs):
        best = None
        for k in range(0, 41):
            s = 1.0 + 0.025 * k
            c = q([nv - a * s for _, a, res, nv in rs], 0.95)
            mean = statistics.mean(a * s + c for _, a, res, nv in rs)
            if best is None or mean < best[2]:
                best = (s, c, mean)
        s, c, _ = best
        under = sum(1 for _, a, res, nv in rs if a * s + c < nv) / len(rs)
        return s, c, under
    for dev in sorted({r[0] for r in rows}):
        s, c, under = fit([r for r in rows if r[0] == dev])
        print("%s alone: ratio %.3f, context %.0f MiB (misses %.1f%%)" % (dev, s, c, 100 * under))
    s, c, under = fit(rows)
    print("use: DLP_RESERVED_RATIO %.3f, DLP_CUDA_CONTEXT_MIB %.0f: need = "
          "allocated x %.3f + %.0f is below NVML used on %.1f%% of %d rows"
          % (s, c, s, c, 100 * under, len(rows)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
