"""probe_kernels.py - where one eager forward's GPU time goes (fifty-fourth
session, docs/COST.md). On the GPU machine, for a few specs of the zoo,
built, cast and fed as the collector does (probe_common.build), three
warm-up calls, then one call under torch.profiler with the input shapes
recorded. For each configuration one JSON line: the sum and count of the
kernels' device times, the aten ops that launched the most device time
(self time, grouped by op and input shapes) and the kernels that took the
most. It names the operator a latency prediction misses when the operator
times of src/cost do not account for a model's measured latency.

    python3 tools/collect/probe_kernels.py SPEC_ID:PREC:BATCH:LAST ...

LAST is the sequence length of a text spec and the square input resolution
in pixels of a vision spec (probe_common.py).
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import probe_common  # noqa: E402

TOP_OPS = 14
TOP_KERNELS = 8


def self_device_us(ev):
    for name in ("self_device_time_total", "self_cuda_time_total"):
        v = getattr(ev, name, None)
        if v is not None:
            return float(v)
    return 0.0


def kernel_table(prof):
    """(total us, count, [(us, count, name)] largest first) of the kernels."""
    per = {}
    for e in prof.events():
        if getattr(e, "device_type", None) is None or "CUDA" not in str(e.device_type):
            continue
        us = float(getattr(e, "device_time", 0.0) or getattr(e, "cuda_time", 0.0) or 0.0)
        k = per.setdefault(e.name, [0.0, 0])
        k[0] += us
        k[1] += 1
    rows = sorted(((v[0], v[1], n) for n, v in per.items()), reverse=True)
    return sum(r[0] for r in rows), sum(r[1] for r in rows), rows


def probe(torch, spec, prec, batch, last, rt):
    from torch.profiler import ProfilerActivity, profile
    out = dict(spec=spec["id"], prec=prec, batch=batch, seq=last)

    def body(out):
        probe_common.settle(torch)
        model, x = probe_common.build(torch, spec, prec, batch, last)
        with torch.inference_mode():
            for _ in range(3):
                model(x)
            torch.cuda.synchronize()
            with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                         record_shapes=True) as prof:
                model(x)
                torch.cuda.synchronize()
        total, count, krows = kernel_table(prof)
        ops = []
        for ev in prof.key_averages(group_by_input_shape=True):
            us = self_device_us(ev)
            if us > 0:
                ops.append((us, ev.count, ev.key, str(ev.input_shapes)[:160]))
        ops.sort(reverse=True)
        out.update(kernel_us=round(total, 1), kernels=count,
                   ops=[dict(us=round(u, 1), n=n, op=k, shapes=s)
                        for u, n, k, s in ops[:TOP_OPS]],
                   top=[dict(us=round(u, 1), n=n, kernel=k[:110])
                        for u, n, k in krows[:TOP_KERNELS]])

    return probe_common.guarded(torch, out, body)


if __name__ == "__main__":
    probe_common.main(probe, with_runtime=False)
