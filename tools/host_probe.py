"""host_probe.py - the host's dispatch time per eager op, in microseconds,
measured the way the collector measures it beside every eager label
(tools/collect/measure.py host_dispatch_us), for `dlperf predict --runtime
eager --host-us X`, inference, training or `--mode llm` (docs/PREDICT.md,
"Host-aware eager latency").

    python3 tools/host_probe.py [--device cuda:0] [--repeat 30] [--seconds 60]

Run it on the serving host, with its GPU idle (a probe beside a running
model times the GPU's time slices: 26 us against 7-12 idle, sixty-eighth
session), under the CPU load the service will see. One probe is a moment's
reading: on an idle H200 host the probes of one process alternate between
two levels, ~7.5 and ~10.5 us, within a minute, so --seconds spreads the
--repeat probes evenly over that many seconds (0: back to back, a single
moment). It prints the median, which --host-us takes, and the spread.

What a reading can do (sixty-ninth session, docs/PREDICT.md "The moment,
not the host"): the corrections gain most where they see the probe taken
beside each measurement, which no reading before serving can; with one
reading per host their held-out gain is 19.69 -> 17.88% (inference), and
on the newest batches this fresh-process reading gained nothing. The
collector's loaded workers read 1.07-1.47x what a fresh process reads on
the same host (`dlperf dataset stats` lists both per batch); the reading
is passed as is.
"""
import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "collect"))
from measure import host_dispatch_us  # noqa: E402


def probes(fn, repeat, seconds, sleep=time.sleep, clock=time.monotonic):
    """repeat readings of fn(), the k-th started at k x seconds / (repeat -
    1) after the first (back to back when seconds is 0)."""
    repeat = max(1, repeat)
    gap = seconds / (repeat - 1) if repeat > 1 else 0.0
    t0 = clock()
    v = []
    for k in range(repeat):
        wait = t0 + k * gap - clock()
        if wait > 0:
            sleep(wait)
        v.append(fn())
    return v


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--repeat", type=int, default=30)
    ap.add_argument("--seconds", type=float, default=60.0)
    a = ap.parse_args()
    if a.repeat < 1 or not 0 <= a.seconds <= 86400:
        sys.exit("host_probe: --repeat must be >= 1 and --seconds within "
                 "0..86400")
    import torch
    if a.device.startswith("cuda") and not torch.cuda.is_available():
        sys.exit("host_probe: no CUDA device: the probe times eager CUDA "
                 "launches, run it on the GPU host")
    v = probes(lambda: host_dispatch_us(torch, a.device), a.repeat, a.seconds)
    q = statistics.quantiles(v, n=4) if len(v) > 1 else [v[0]] * 3
    print("host_us %.3f (min %.3f, quartiles %.3f / %.3f, max %.3f over %d "
          "probes in %.0f s)" % (statistics.median(v), min(v), q[0], q[2],
                                 max(v), len(v), a.seconds))


if __name__ == "__main__":
    main()
