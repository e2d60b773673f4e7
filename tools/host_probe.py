"""host_probe.py - the host's dispatch time per eager op, in microseconds,
measured the way the collector measures it beside every eager label
(tools/collect/measure.py host_dispatch_us), for `dlperf predict --runtime
eager --host-us X`, inference or `--mode llm` (docs/PREDICT.md,
"Host-aware eager latency").

    python3 tools/host_probe.py [--device cuda:0] [--repeat 5]

Run it on the serving host, with its GPU, under the load the service will
see (the probe is a moment's reading: the collector's probes of one
machine vary by ~1.5x between moments). It prints the median of --repeat
probes and the spread; pass the median to --host-us.
"""
import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "collect"))
from measure import host_dispatch_us  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    import torch
    if a.device.startswith("cuda") and not torch.cuda.is_available():
        sys.exit("host_probe: no CUDA device: the probe times eager CUDA "
                 "launches, run it on the GPU host")
    v = [host_dispatch_us(torch, a.device) for _ in range(max(1, a.repeat))]
    print("host_us %.3f (min %.3f, max %.3f over %d probes)"
          % (statistics.median(v), min(v), max(v), len(v)))


if __name__ == "__main__":
    main()
