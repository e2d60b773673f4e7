"""probe_kernels.py - where one eager forward's GPU time goes (fifty-fourth
session, docs/COST.md). On the GPU machine, for a few specs of the zoo,
built, cast and fed as the collector does (probe_common.build), three
warm-up calls, then one call under torch.profiler with the input shapes
recorded. For each configuration one JSON line: the sum and count of the
kernels' device times, the aten ops that launched the most device time
(self time, grouped by op and input shapes) and the kernels that took the
most. It names the operator a latency prediction misses when the operator
times of src/cost do not account for a model's measured latency.

    python3 tools/collect/probe_kernels.py [--train] SPEC_ID:PREC:BATCH:LAST ...

LAST is the sequence length of a text spec and the square input resolution
in pixels of a vision spec (probe_common.py). With --train (vision specs)
the profiled call is one training step instead, built and warmed up as the
collector's (probe_common.build_train: SGD with momentum, fp16 / bf16 as
autocast of the fp32 model): which forward, backward or optimizer kernels
a training-step prediction misses (seventy-seventh session).
"""
import functools
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import probe_common  # noqa: E402

TOP_OPS = 20
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


def profiled_call(torch, spec, prec, batch, last, train):
    """(profiler, ms): the profiler over one warm call (an inference-mode
    forward, or with train one training step) and the median wall time of
    five unprofiled calls, synchronized."""
    import time
    from torch.profiler import ProfilerActivity, profile
    if train:
        call = probe_common.build_train(torch, spec, prec, batch, last)[2]
        ctx = torch.enable_grad()
    else:
        model, x = probe_common.build(torch, spec, prec, batch, last)
        ctx = torch.inference_mode()

        def call():
            model(x)
    with ctx:
        for _ in range(3):
            call()
        torch.cuda.synchronize()
        walls = []
        for _ in range(5):
            t0 = time.perf_counter()
            call()
            torch.cuda.synchronize()
            walls.append(1e3 * (time.perf_counter() - t0))
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                     record_shapes=True) as prof:
            call()
            torch.cuda.synchronize()
    return prof, sorted(walls)[2]


def probe(torch, spec, prec, batch, last, rt, train=False):
    out = dict(spec=spec["id"], prec=prec, batch=batch, seq=last,
               mode="training" if train else "inference")

    def body(out):
        probe_common.settle(torch)
        prof, wall_ms = profiled_call(torch, spec, prec, batch, last, train)
        total, count, krows = kernel_table(prof)
        ops = []
        for ev in prof.key_averages(group_by_input_shape=True):
            us = self_device_us(ev)
            if us > 0:
                ops.append((us, ev.count, ev.key, str(ev.input_shapes)[:160]))
        ops.sort(reverse=True)
        out.update(wall_ms=round(wall_ms, 3), kernel_us=round(total, 1),
                   kernels=count,
                   ops=[dict(us=round(u, 1), n=n, op=k, shapes=s)
                        for u, n, k, s in ops[:TOP_OPS]],
                   top=[dict(us=round(u, 1), n=n, kernel=k[:110])
                        for u, n, k in krows[:TOP_KERNELS]])

    return probe_common.guarded(torch, out, body)


if __name__ == "__main__":
    train = "--train" in sys.argv[1:]
    if train:
        sys.argv.remove("--train")
    probe_common.main(functools.partial(probe, train=train), with_runtime=False)
