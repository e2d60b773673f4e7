"""measure.py - GPU worker: measures labels for a list of work items, per
PROTOCOL.md p1 (shared/PROTOCOL.md), on one GPU (CUDA_VISIBLE_DEVICES).

    python3 measure.py --items items.jsonl --out DIR --worker K --deadline T

Each item is {"spec": {...}, "tasks": [...], "infer": [...], "train": [...],
"trace": [...]}: one model load serves every configuration of the item.
Rows are appended (flushed after each item) to DIR/w<K>_<table>.csv; the
graph hash is not known here (exports run elsewhere), so rows carry the spec
id in the `hash` column and ingest.py maps it. Progress lines "start ID" /
"done ID" go to DIR/w<K>_progress.txt, so a cut-off loses at most the item in
flight, and a restarted worker skips what is done.

Per configuration: rep 0 pass then rep 1 pass (separate passes over the
item's configurations, per precision). Per pass and runtime: 10 warm-up
calls, 50 calls timed with CUDA event pairs (median, p10, p90), peak memory
of one call after warm-up (graph runtime: peak during capture, since replay
allocates nothing), NVML energy over max(20, 1000 ms / latency) calls (rep 0;
rep 1 only on a deterministic random 10%). Beyond p1: `host_us`, the host's
dispatch time per eager op (host_dispatch_us), the mean of one probe right
before and one right after each configuration's eager timing (before only
in batch h12c), on both of its rows, and since 2026-12-03 around each
training step's timing too: the eager labels of one
configuration differ between collection batches far beyond the GPUs
(docs/DATASET_STATS.md, "Eager across cards"), and this probe records the
host side of that.
"""
import argparse
import csv
import gc
import hashlib
import json
import math
import os
import re
import sys
import time


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import schema  # noqa: E402
import zoo  # noqa: E402

COLS = dict(schema.LABEL_COLS, kernels=schema.RAW_KERNEL_COLS,
            memory=schema.MEMORY_COLS,
            failures=schema.FAIL_COLS)
DTYPES = {}
MAX_CALL_S = 0.12  # a configuration whose single call is slower is skipped


def energy_in_rep1(key):
    return int(hashlib.sha1(key.encode()).hexdigest()[:8], 16) % 10 == 0


class Writer:
    def __init__(self, out, worker):
        self.files = {}
        self.out, self.worker = out, worker

    def row(self, table, d):
        if table not in self.files:
            p = os.path.join(self.out, "w%s_%s.csv" % (self.worker, table))
            new = not os.path.exists(p)
            f = open(p, "a", newline="")
            w = csv.DictWriter(f, COLS[table], extrasaction="ignore")
            if new:
                w.writeheader()
            self.files[table] = (f, w)
        self.files[table][1].writerow(d)

    def flush(self):
        for f, _ in self.files.values():
            f.flush()


class Nvml:
    def __init__(self):
        self.h = None
        try:
            import pynvml
            pynvml.nvmlInit()
            idx = int(os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(",")[0])
            self.h = pynvml.nvmlDeviceGetHandleByIndex(idx)
            self.nv = pynvml
        except Exception:
            self.h = None

    def energy_mj(self):
        return self.nv.nvmlDeviceGetTotalEnergyConsumption(self.h) if self.h else None

    def used_mib(self):
        if not self.h:
            return ""
        return round(self.nv.nvmlDeviceGetMemoryInfo(self.h).used / 2 ** 20, 1)


def _pct(v, q):
    v = sorted(v)
    k = (len(v) - 1) * q
    lo, hi = math.floor(k), math.ceil(k)
    return v[lo] + (v[hi] - v[lo]) * (k - lo)


def time_calls(torch, fn, warm=10, n=50):
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
          for _ in range(n)]
    for s, e in ev:
        s.record()
        fn()
        e.record()
    torch.cuda.synchronize()
    t = [s.elapsed_time(e) for s, e in ev]
    return _pct(t, 0.5), _pct(t, 0.1), _pct(t, 0.9)


def host_dispatch_us(torch, device="cuda", n=100, rounds=5):
    """Host dispatch time per eager op, microseconds: the median over
    `rounds` of n in-place adds to a 1-element tensor, synchronized at the
    end of each round. The kernel is ~2 us of GPU time, so the rate is the
    Python + ATen + launch path the eager runtime pays per op, as loaded at
    that moment."""
    x = torch.zeros(1, device=device)
    sync = torch.cuda.synchronize if device != "cpu" else (lambda: None)
    for _ in range(10):
        x.add_(1)
    sync()
    t = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(n):
            x.add_(1)
        sync()
        t.append((time.perf_counter() - t0) / n * 1e6)
    return _pct(t, 0.5)


def energy(torch, nvml, fn, lat_ms):
    if nvml.h is None:
        return "", ""
    n = max(20, int(math.ceil(1000.0 / max(lat_ms, 1e-3))))
    torch.cuda.synchronize()
    e0, t0 = nvml.energy_mj(), time.perf_counter()
    for _ in range(n):
        fn()
    torch.cuda.synchronize()
    e1, t1 = nvml.energy_mj(), time.perf_counter()
    ej = (e1 - e0) / 1000.0
    return round(ej / n, 6), round(ej / (t1 - t0), 2)


def _r(x, k=4):
    return "" if x == "" or x is None else round(x, k)


class Ctx:
    def __init__(self, a, torch, nvml, w, device):
        self.a, self.torch, self.nvml, self.w, self.device = a, torch, nvml, w, device
        self.mem_base = 0  # bytes allocated before the current model was built
        self.restart = False  # set after a failed CUDA-graph capture

    def fail(self, spec, stage, reason):
        self.w.row("failures", dict(protocol="p1", batch_id=self.a.batch_id,
                                    hash=spec["id"], model=spec["model"],
                                    variant=spec["variant"], device=self.device,
                                    stage=stage, reason=str(reason).split("\n")[0][:300]))

    def base(self, spec, rep):
        return dict(protocol="p1", batch_id=self.a.batch_id, hash=spec["id"],
                    device=self.device, rep=rep, status="ok")


def set_precision(torch, prec):
    tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32
    torch.backends.cudnn.benchmark = False


def to_dtype(model, dtype):
    """model.to(dtype), and the attention-bias caches emptied: timm's LeViT
    and EfficientFormer keep the biases gathered at their first eval-mode
    forward in a plain dict (attention_bias_cache), which .to() does not
    convert, so their fp16 forward after the fp32 one mixed a float bias
    into half attention ("expected scalar type Float but found Half", 7
    eager fp16 failures in h5a-h6b)."""
    model = model.to(dtype)
    for mod in model.modules():
        cache = getattr(mod, "attention_bias_cache", None)
        if isinstance(cache, dict):
            cache.clear()
    return model


def make_input(torch, spec, batch, seq, h, w, dtype):
    if spec["kind"] == "text":
        return torch.randint(0, 1000, (batch, seq), device="cuda")
    return torch.randn(batch, 3, h, w, device="cuda", dtype=dtype)


def _clear_workspaces(torch):
    """cuBLAS keeps a workspace per stream; the graph capture's side stream
    leaves one behind, a likely cause of rep-to-rep peak-memory differences
    (p90 ~5 %) in the first batches. Free them between configurations."""
    try:
        torch._C._cuda_clearCublasWorkspaces()
    except Exception:
        pass
    torch.cuda.empty_cache()


def peak_eager(c, fn):
    """PROTOCOL memory: peak of one call after warm-up, minus what was
    allocated before the model was built (MiB), reserved peak, NVML used."""
    torch = c.torch
    torch.cuda.reset_peak_memory_stats()
    fn()
    torch.cuda.synchronize()
    mem = (torch.cuda.max_memory_allocated() - c.mem_base) / 2 ** 20
    return mem, torch.cuda.max_memory_reserved() / 2 ** 20, c.nvml.used_mib()


def capture_graph(c, fn):
    """Warm-up on a side stream, then capture fn in a CUDA graph; returns
    (graph, peak MiB during capture minus the baseline, reserved peak)."""
    torch = c.torch
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        fn()
    torch.cuda.synchronize()
    gmem = (torch.cuda.max_memory_allocated() - c.mem_base) / 2 ** 20
    return g, gmem, torch.cuda.max_memory_reserved() / 2 ** 20


def measure_memory(c, spec, model, prec, dtype, cfgs):
    """Re-measures peak memory only (no timing, no energy) of configurations
    labeled by batches whose memory_mib was defective: cfgs are
    (table, batch, seq, h, w); eager peak after 10 warm-up calls and graph
    peak during capture, rep 0 and rep 1 as separate passes. Rows go to the
    `memory` table; ingest.py writes them over the old rows' memory."""
    torch = c.torch
    for rep in (0, 1):
        for (table, b, seq, h, w) in cfgs:
            if time.time() > c.a.deadline:
                return
            _clear_workspaces(torch)
            try:
                if table == "training":
                    mem_train(c, spec, model, dtype, rep, b, h, w)
                    continue
                x = make_input(torch, spec, b, seq, h, w, dtype)
                with torch.inference_mode():
                    fn = lambda: model(x)  # noqa: E731
                    for _ in range(10):
                        fn()
                    torch.cuda.synchronize()
                    rows = [("eager",) + peak_eager(c, fn)]
                    try:
                        g, gmem, gres = capture_graph(c, fn)
                        rows.append(("graph", gmem, gres, c.nvml.used_mib()))
                        del g
                    except Exception as e:
                        c.fail(spec, "mem_graph", "%s b=%s: %s" % (prec, b, e))
                for rt, mem, res, used in rows:
                    d = c.base(spec, rep)
                    d.update(table=table, runtime=rt, precision=prec, batch=b,
                             seq=seq or "", height=h or "", width=w or "",
                             memory_mib=_r(mem, 2), mem_reserved_mib=_r(res, 2),
                             nvml_used_mib=used, mem_base_mib=_r(c.mem_base / 2 ** 20, 2))
                    c.w.row("memory", d)
            except torch.cuda.OutOfMemoryError:
                c.fail(spec, "oom", "memory %s b=%s" % (prec, b))
            except Exception as e:
                c.fail(spec, "memory", "%s b=%s: %s" % (prec, b, e))
                if schema.context_broken(e):
                    raise
            finally:
                x = None
                torch.cuda.empty_cache()


def mem_train(c, spec, model, dtype, rep, b, h, w):
    """Peak memory of one training step after 10 warm-up steps."""
    torch = c.torch
    model.train()
    opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
    lossf = torch.nn.CrossEntropyLoss()
    try:
        x = torch.randn(b, 3, h, w, device="cuda", dtype=dtype)
        ncls = zoo._first_tensor(model(x)).shape[-1]
        lab = torch.randint(0, ncls, (b,), device="cuda")

        def step():
            opt.zero_grad(set_to_none=True)
            loss = lossf(zoo._first_tensor(model(x)).float(), lab)
            loss.backward()
            opt.step()
        for _ in range(10):
            step()
        torch.cuda.synchronize()
        mem, res, used = peak_eager(c, step)
        d = c.base(spec, rep)
        d.update(table="training", runtime="", precision="fp32", batch=b,
                 height=h, width=w, memory_mib=_r(mem, 2), mem_reserved_mib=_r(res, 2),
                 nvml_used_mib=used, mem_base_mib=_r(c.mem_base / 2 ** 20, 2))
        c.w.row("memory", d)
    finally:
        x = lab = None
        opt.zero_grad(set_to_none=True)
        opt = None
        model.eval()


def measure_infer(c, spec, model, prec, dtype, cfgs):
    """cfgs: list of (batch, seq, h, w). Two passes (rep 0, rep 1)."""
    torch = c.torch
    results = {}
    for rep in (0, 1):
        for (b, seq, h, w) in cfgs:
            if time.time() > c.a.deadline:
                return
            key = "%s|%s|%s|%s|%s|%s" % (spec["id"], prec, b, seq, h, w)
            if key in results and results[key] == "skip":
                continue
            _clear_workspaces(torch)
            x = make_input(torch, spec, b, seq, h, w, dtype)
            try:
                with torch.inference_mode():
                    fn = lambda: model(x)  # noqa: E731
                    torch.cuda.synchronize()
                    t0 = time.perf_counter()
                    fn()
                    torch.cuda.synchronize()
                    if time.perf_counter() - t0 > MAX_CALL_S and rep == 0:
                        # the first call may include lazy init: time another
                        t0 = time.perf_counter()
                        fn()
                        torch.cuda.synchronize()
                        if time.perf_counter() - t0 > MAX_CALL_S:
                            c.fail(spec, "too_slow", "%s b=%s seq=%s %sx%s one call %.2fs"
                                   % (prec, b, seq, h, w, time.perf_counter() - t0))
                            results[key] = "skip"
                            continue
                    do_energy = rep == 0 or energy_in_rep1(key)
                    rows = []
                    host_us = host_dispatch_us(torch)
                    lat, p10, p90 = time_calls(torch, fn)
                    # bracketing the timing: the host's load changes within
                    # seconds (h12c: rep 0 / rep 1 probes of one
                    # configuration differ by 0.19 in log, sd)
                    host_us = (host_us + host_dispatch_us(torch)) / 2
                    mem, res, used = peak_eager(c, fn)
                    ej, pw = energy(torch, c.nvml, fn, lat) if do_energy else ("", "")
                    rows.append(("eager", lat, p10, p90, mem, res, used, ej, pw))
                    # CUDA graph runtime
                    try:
                        g, gmem, gres = capture_graph(c, fn)
                        glat, g10, g90 = time_calls(torch, g.replay)
                        gused = c.nvml.used_mib()
                        gej, gpw = energy(torch, c.nvml, g.replay, glat) if do_energy else ("", "")
                        rows.append(("graph", glat, g10, g90, gmem, gres, gused, gej, gpw))
                        del g
                    except Exception as e:
                        if rep == 0:
                            c.fail(spec, "graph_capture", "%s b=%s: %s" % (prec, b, e))
                        # a failed capture can leave the context (the RNG's
                        # capture state) broken: restart after this item
                        c.restart = True
                        torch.cuda.synchronize()
                for (rt, lat, p10, p90, mem, res, used, ej, pw) in rows:
                    d = c.base(spec, rep)
                    d.update(runtime=rt, precision=prec, batch=b,
                             seq=seq if seq else "", height=h if h else "",
                             width=w if w else "", latency_ms=_r(lat),
                             latency_p10_ms=_r(p10), latency_p90_ms=_r(p90),
                             memory_mib=_r(mem, 2), mem_reserved_mib=_r(res, 2),
                             nvml_used_mib=used, energy_j=_r(ej, 6), power_w=_r(pw, 2),
                             host_us=_r(host_us, 3))
                    c.w.row("inference", d)
                    if spec["kind"] == "text":
                        l = c.base(spec, rep)
                        l.update(runtime=rt, precision=prec, batch=b, seq=seq,
                                 latency_ms=_r(lat),
                                 throughput_samples_s=_r(b / (lat / 1000.0), 3),
                                 memory_mib=_r(mem, 2),
                                 energy_per_sample_j=_r(ej / b if ej != "" else "", 6),
                                 power_w=_r(pw, 2))
                        c.w.row("llm", l)
            except torch.cuda.OutOfMemoryError:
                if rep == 0:
                    c.fail(spec, "oom", "%s b=%s seq=%s %sx%s" % (prec, b, seq, h, w))
                results[key] = "skip"
            except Exception as e:
                if rep == 0:
                    c.fail(spec, "eager", "%s b=%s seq=%s %sx%s: %s" % (prec, b, seq, h, w, e))
                results[key] = "skip"
                if schema.context_broken(e):
                    raise
            finally:
                x = None
                torch.cuda.empty_cache()


def train_step(torch, model, opt, lossf, x, amp, scaler):
    """(step, labels): the PROTOCOL training step on input x, random labels
    of the model's class count, autocast at `amp` (None: fp32) with
    `scaler` (a GradScaler at fp16, else None); also probe_train.py's."""
    with torch.autocast("cuda", dtype=amp or torch.float32, enabled=amp is not None):
        y0 = model(x)
    ncls = zoo._first_tensor(y0).shape[-1]
    y0 = None
    lab = torch.randint(0, ncls, (x.shape[0],), device="cuda")

    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=amp or torch.float32,
                            enabled=amp is not None):
            out = zoo._first_tensor(model(x))
            loss = lossf(out.float(), lab)
        if scaler is not None:
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
        else:
            loss.backward()
            opt.step()
    return step, lab


def measure_train(c, spec, model, prec, dtype, cfgs):
    """Training steps of cfgs [(batch, h, w)] at prec: fp32, or fp16 / bf16
    as automatic mixed precision (what people train with): the fp32 model
    and input under torch.autocast, fp32 master weights, gradients and
    momentum, and at fp16 a GradScaler (scale, unscale and inf check in the
    step). dtype: the model's dtype (fp32 for every prec)."""
    torch = c.torch
    model.train()
    opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
    lossf = torch.nn.CrossEntropyLoss()
    amp = {"fp16": torch.float16, "bf16": torch.bfloat16}.get(prec)
    scaler = torch.amp.GradScaler("cuda") if prec == "fp16" else None
    for rep in (0, 1):
        for (b, h, w) in cfgs:
            if time.time() > c.a.deadline:
                break
            key = "train|%s|%s|%s|%s|%s" % (spec["id"], prec, b, h, w)
            try:
                # the inference before it captured CUDA graphs on a side
                # stream, whose cuBLAS workspaces stay allocated: the
                # step's peak counted them (~65 MiB; data/README.md,
                # training memory withdrawn)
                _clear_workspaces(torch)
                x = torch.randn(b, 3, h, w, device="cuda", dtype=dtype)
                step, lab = train_step(torch, model, opt, lossf, x, amp, scaler)
                # the cap reads the second step: the first one loads and
                # picks the backward's (and, under autocast, the half
                # precision) kernels (t33a: alexnet's bf16 step at batch 8
                # failed it, 17 ms measured in fp32)
                step()
                torch.cuda.synchronize()
                t0 = time.perf_counter()
                step()
                torch.cuda.synchronize()
                if time.perf_counter() - t0 > MAX_CALL_S * 2:
                    if rep == 0:
                        c.fail(spec, "too_slow", "train %s b=%s" % (prec, b))
                    continue
                # the host probe bracketing the timing, as the eager
                # inference rows' (host_us, fifty-eighth session): a small
                # step is as host-bound as an eager forward
                host_us = host_dispatch_us(torch)
                lat, p10, p90 = time_calls(torch, step)
                host_us = (host_us + host_dispatch_us(torch)) / 2
                mem, res, _ = peak_eager(c, step)
                do_e = rep == 0 or energy_in_rep1(key)
                ej, pw = energy(torch, c.nvml, step, lat) if do_e else ("", "")
                d = c.base(spec, rep)
                d.update(precision=prec, batch=b, height=h, width=w,
                         optimizer="sgd_momentum", step_ms=_r(lat),
                         step_p10_ms=_r(p10), step_p90_ms=_r(p90),
                         memory_mib=_r(mem, 2), mem_reserved_mib=_r(res, 2),
                         energy_j=_r(ej, 6), power_w=_r(pw, 2),
                         host_us=_r(host_us, 3))
                c.w.row("training", d)
            except torch.cuda.OutOfMemoryError:
                if rep == 0:
                    c.fail(spec, "oom", "train %s b=%s" % (prec, b))
            except Exception as e:
                if rep == 0:
                    c.fail(spec, "train", "%s b=%s: %s" % (prec, b, e))
                if schema.context_broken(e):
                    raise
            finally:
                x = lab = None
                opt.zero_grad(set_to_none=True)
                torch.cuda.empty_cache()
    opt = None  # frees the momentum buffers
    model.eval()


def green_context(torch, sms):
    """(enter, exit) of a CUDA green context of `sms` SMs on device 0
    (torch.cuda.green_contexts, beta; method names differ across versions).
    Not yet run on a device: failures are recorded, stage green_context."""
    from torch.cuda.green_contexts import GreenContext
    gc = GreenContext.create(int(sms), 0)
    enter = getattr(gc, "set_context", None) or gc.make_current
    leave = getattr(gc, "pop_context", None) or gc.pop_current
    return gc, enter, leave


def profiled_events(torch, fn, tmpdir, tag):
    """Three warm-up calls, then one call under torch.profiler (CPU and CUDA
    activity); returns the Chrome-trace events."""
    from torch.profiler import ProfilerActivity, profile
    with torch.inference_mode():
        for _ in range(3):
            fn()
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            fn()
            torch.cuda.synchronize()
    path = os.path.join(tmpdir, "%s_%d.json" % (tag, os.getpid()))
    prof.export_chrome_trace(path)
    ev = json.load(open(path))
    os.remove(path)
    return ev["traceEvents"] if isinstance(ev, dict) else ev


def split_events(ev):
    """(launch events by correlation id, kernel events in time order, cpu
    ops as (start, end, name)) of a Chrome trace. cuBLAS/cuDNN launch
    through the driver API (cuLaunchKernel), hence cuda_driver too."""
    launches, kernels, ops = {}, [], []
    for e in ev:
        cat = e.get("cat", "")
        args = e.get("args", {}) or {}
        if cat == "kernel":
            kernels.append(e)
        elif cat in ("cuda_runtime", "cuda_driver") and "correlation" in args:
            launches[args["correlation"]] = e
        elif cat == "cpu_op":
            ops.append((e["ts"], e["ts"] + e.get("dur", 0), e["name"]))
    kernels.sort(key=lambda e: e["ts"])
    return launches, kernels, ops


def measure_trace(c, spec, model, prec, dtype, cfg, tmpdir, sms=None):
    """Eager kernel trace of one forward: every kernel with its module path
    (record_function ranges opened by module hooks) and launching aten op.
    With sms, the forward runs inside a green context of that many SMs."""
    torch = c.torch
    b, seq, h, w = cfg
    x = make_input(torch, spec, b, seq, h, w, dtype)
    names = {m: n for n, m in model.named_modules()}
    stack = []
    hooks = []

    def pre(m, inp):
        rf = torch.profiler.record_function("mod:" + names.get(m, "?"))
        rf.__enter__()
        stack.append(rf)

    def post(m, inp, out):
        if stack:
            stack.pop().__exit__(None, None, None)
    for m in model.modules():
        hooks.append(m.register_forward_pre_hook(pre))
        hooks.append(m.register_forward_hook(post))
    ctx = None  # (green context, enter, leave); the context lives until leave
    try:
        if sms:
            torch.cuda.synchronize()
            ctx = green_context(torch, sms)
            ctx[1]()
        ev = profiled_events(torch, lambda: model(x), tmpdir, "trace")
    finally:
        if ctx is not None:
            torch.cuda.synchronize()
            ctx[2]()
        for hk in hooks:
            hk.remove()
    launches, kernels, ops = split_events(ev)
    ann = [(e["ts"], e["ts"] + e.get("dur", 0), e["name"][4:]) for e in ev
           if e.get("cat") == "user_annotation" and e.get("name", "").startswith("mod:")]

    def innermost(lst, t):
        best = None
        for (s, f, n) in lst:
            if s <= t <= f and (best is None or f - s < best[1] - best[0]):
                best = (s, f, n)
        return best[2] if best else ""
    for i, k in enumerate(kernels):
        args = k.get("args", {})
        lt = launches.get(args.get("correlation"))
        t = lt["ts"] if lt else None
        mod = innermost(ann, t) if t is not None else ""
        op = innermost(ops, t) if t is not None else ""
        d = c.base(spec, 0)
        g, bl = args.get("grid", ["", "", ""]), args.get("block", ["", "", ""])
        d.update(mode="eager", sms=sms or "", precision=prec, batch=b,
                 seq=seq if seq else "", height=h if h else "",
                 width=w if w else "", kernel_idx=i, kernel=k.get("name", ""),
                 duration_us=_r(k.get("dur", 0), 3),
                 grid=":".join(str(v) for v in g), block=":".join(str(v) for v in bl),
                 module=mod, aten=op)
        c.w.row("kernels", d)


EXTERN_ATEN = ("aten::convolution", "aten::mm", "aten::addmm", "aten::bmm",
               "aten::baddbmm", "aten::_scaled_dot_product_flash_attention",
               "aten::_scaled_dot_product_efficient_attention",
               "aten::_scaled_dot_product_cudnn_attention")


def _fqn(src):
    """Module path of a Dynamo nn_module_stack source string, as
    named_modules() spells it: L['self'].m.layer1[0].conv1 -> m.layer1.0.conv1."""
    s = re.sub(r"^L\['self'\]", "", src)
    s = re.sub(r"\._modules\[['\"]([^'\"]+)['\"]\]", r".\1", s)
    s = re.sub(r"\[['\"]?([^'\"\]]+)['\"]?\]", r".\1", s)
    return s.strip(".")


def _target_name(n):
    t = n.target
    return t if isinstance(t, str) else getattr(t, "__name__", str(t))


SRC_RE = re.compile(r"#.*Source Nodes: \[([^\]]*)\]")


def parse_wrapper(text):
    """Inductor wrapper code -> ({triton kernel name: [source FX nodes]},
    [(extern function, [source FX nodes]) in call order])."""
    triton, extern, last = {}, [], []
    incall = False
    for line in text.splitlines():
        m = SRC_RE.search(line)
        if m:
            last = [x.strip() for x in m.group(1).split(",") if x.strip()]
            continue
        m = re.search(r"async_compile\.triton\(['\"]([A-Za-z0-9_]+)['\"]", line)
        if m:
            triton[m.group(1)] = last
            last = []
            continue
        if re.match(r"\s*def call\(", line):
            incall = True
        if re.search(r"\.run\(", line):
            last = []
            continue
        m = re.search(r"extern_kernels\.([A-Za-z0-9_]+)\(", line)
        if m and incall:
            extern.append((m.group(1), last))
            last = []
    return triton, extern


def measure_trace_compiled(c, spec, model, prec, dtype, cfg, tmpdir):
    """Kernel trace of one forward under torch.compile (Inductor, default
    mode). A backend wrapper records each Dynamo FX node's module path
    (nn_module_stack) and op, then hands the graph to Inductor. The generated
    wrapper code (this worker's TORCHINDUCTOR_CACHE_DIR) names the source FX
    nodes of every Triton kernel ("Topologically Sorted Source Nodes") and of
    every extern call (cuDNN/cuBLAS); Triton kernels are tied to them by
    name, extern kernels by the order of their launching aten op (when the
    op sequence matches the wrapper's). Rows: mode=compiled; module and aten
    are ';'-joined, one entry per source node."""
    torch = c.torch
    import torch._dynamo
    import torch._inductor.config as icfg
    from torch._inductor.compile_fx import compile_fx
    icfg.fx_graph_cache = False
    b, seq, h, w = cfg
    x = make_input(torch, spec, b, seq, h, w, dtype)
    fxinfo = {}

    def backend(gm, example_inputs):
        for n in gm.graph.nodes:
            st = n.meta.get("nn_module_stack") or {}
            path = _fqn(list(st.values())[-1][0]) if st else ""
            fxinfo[n.name] = (path, _target_name(n))
        return compile_fx(gm, example_inputs)
    cache = os.environ.get("TORCHINDUCTOR_CACHE_DIR", "")
    t0 = time.time()
    torch._dynamo.reset()
    cm = torch.compile(model, backend=backend)
    ev = profiled_events(torch, lambda: cm(x), tmpdir, "ctrace")
    compile_s = time.time() - t0
    triton, extern = {}, []
    wrappers = 0
    for root, _, files in os.walk(cache):
        for f in files:
            fp = os.path.join(root, f)
            if not f.endswith(".py") or os.path.getmtime(fp) < t0 - 1:
                continue
            text = open(fp, errors="replace").read()
            if "def call(" not in text:
                continue
            wrappers += 1
            tk, ex = parse_wrapper(text)
            triton.update(tk)
            extern += ex
    torch._dynamo.reset()
    cm = None
    launches, kernels, ops = split_events(ev)
    # outermost extern aten ops in time order (nested calls belong to them)
    ops = sorted(o for o in ops if o[2] in EXTERN_ATEN)
    top = []
    for o in ops:
        if not top or o[0] >= top[-1][1]:
            top.append(o)
    ext_ok = wrappers == 1 and len(top) == len(extern)
    for i, k in enumerate(kernels):
        args = k.get("args", {})
        name = k.get("name", "")
        src = triton.get(name)
        if src is None and ext_ok:
            lt = launches.get(args.get("correlation"))
            if lt is not None:
                for j, (s0, s1, _) in enumerate(top):
                    if s0 <= lt["ts"] <= s1:
                        src = extern[j][1]
                        break
        src = src or []
        mods = [fxinfo.get(n, ("", ""))[0] for n in src]
        ops_ = [fxinfo.get(n, ("", ""))[1] for n in src]
        d = c.base(spec, 0)
        g, bl = args.get("grid", ["", "", ""]), args.get("block", ["", "", ""])
        d.update(mode="compiled", sms="", precision=prec, batch=b,
                 seq=seq if seq else "", height=h if h else "",
                 width=w if w else "", kernel_idx=i, kernel=name,
                 duration_us=_r(k.get("dur", 0), 3),
                 grid=":".join(str(v) for v in g), block=":".join(str(v) for v in bl),
                 module=";".join(mods), aten=";".join(ops_))
        c.w.row("kernels", d)
    print("compiled %s in %.1f s: %d kernels, %d wrapper files, %d triton kernels "
          "named, %d extern calls vs %d extern aten ops, %d FX nodes"
          % (spec["id"], compile_s, len(kernels), wrappers, len(triton), len(extern),
             len(top), len(fxinfo)), flush=True)


def run_item(c, item, tmpdir):
    torch = c.torch
    spec = item["spec"]
    text = spec["kind"] == "text"
    torch.manual_seed(0)
    big = text and zoo.hf_params_estimate(spec["build"]["cfg"]) > 2.5e9
    dt0 = torch.bfloat16 if big else None
    # PROTOCOL memory_mib is this model's peak. The first batches showed
    # max_memory_allocated growing with everything measured before in the
    # same worker (tensors kept alive across items), so free what we can and
    # subtract what is still allocated before the model is built.
    gc.collect()
    _clear_workspaces(torch)
    c.mem_base = torch.cuda.memory_allocated()
    if c.mem_base > 2 ** 20:
        c.fail(spec, "mem_baseline", "%.1f MiB allocated before the model was "
               "built (subtracted from memory_mib)" % (c.mem_base / 2 ** 20))
    with torch.device("cuda"):
        model = zoo.build(spec, dtype=dt0)
    model = zoo.wrap(model, spec["kind"]).eval()
    h = w = None
    fixed = False
    if not text:
        h, w = zoo.input_size(spec, model.m)
        fixed = zoo.fixed_resolution(model.m)
    half = torch.bfloat16 if (text and spec["family"] in zoo.DECODERS) else torch.float16
    for prec in ("fp32", "fp16"):
        if time.time() > c.a.deadline:
            break
        dtype = torch.float32 if prec == "fp32" else half
        if prec == "fp32" and big:
            continue
        mine = [cf for cf in item.get("infer", []) if cf[2] == prec]
        if prec == "fp16" and half == torch.bfloat16:
            prec = "bf16"
        set_precision(torch, prec)
        model = to_dtype(model, dtype)
        cfgs = []
        for cf in mine:
            if text:
                cfgs.append((cf[0], cf[1], None, None))
            else:
                r = None if fixed else cf[1]
                cfgs.append((cf[0], None, r or h, r or w))
        cfgs = list(dict.fromkeys(cfgs))  # a sampled point may equal native
        mem = [(m[0], m[2], m[3] or None, m[4] or None, m[5] or None)
               for m in item.get("mem", []) if (m[1] == "fp32") == (prec == "fp32")]
        if mem:
            measure_memory(c, spec, model, prec, dtype, mem)
        measure_infer(c, spec, model, prec, dtype, cfgs)
        if prec == "fp32" and item.get("train") and not text:
            # entries [batch, res] or [batch, res, prec]; fp16 / bf16 are
            # mixed-precision steps of this fp32 model (measure_train)
            for tp in ("fp32", "fp16", "bf16"):
                tc = [(t[0], t[1] or h, t[1] or w) for t in item["train"]
                      if (t[2] if len(t) > 2 else "fp32") == tp]
                if tc:
                    measure_train(c, spec, model, tp, dtype, tc)
        if prec != "fp32" and item.get("trace"):
            for cf in item["trace"]:
                try:
                    tc = (cf[0], cf[1], None, None) if text else (cf[0], None, cf[1] or h, cf[1] or w)
                    measure_trace(c, spec, model, prec, dtype, tc, tmpdir)
                except Exception as e:
                    c.fail(spec, "trace", e)
                    if schema.context_broken(e):
                        raise
                # SM partitions (DLP_SMS="16,33,66,99"): the same trace
                # inside green contexts; opt-in, not yet run on a device
                for sms in [s for s in os.environ.get("DLP_SMS", "").split(",") if s]:
                    try:
                        measure_trace(c, spec, model, prec, dtype, tc, tmpdir, sms=int(sms))
                    except Exception as e:
                        c.fail(spec, "green_context", "sms=%s: %s" % (sms, e))
                        if schema.context_broken(e):
                            raise
        if prec != "fp32" and item.get("ctrace") and time.time() < c.a.deadline - 60:
            for cf in item["ctrace"]:
                tc = (cf[0], cf[1], None, None) if text else (cf[0], None, cf[1] or h, cf[1] or w)
                try:
                    measure_trace_compiled(c, spec, model, prec, dtype, tc, tmpdir)
                except Exception as e:
                    c.fail(spec, "compiled_trace", "%s: %s" % (type(e).__name__, e))
                    if schema.context_broken(e):
                        raise
        c.w.flush()
    del model
    gc.collect()
    torch.cuda.empty_cache()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--items", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--worker", default="0")
    ap.add_argument("--deadline", type=float, required=True)
    ap.add_argument("--batch-id", dest="batch_id", required=True)
    ap.add_argument("--device-name", dest="device_name", required=True)
    a = ap.parse_args()
    import torch
    torch.set_num_threads(1)
    nvml = Nvml()
    w = Writer(a.out, a.worker)
    c = Ctx(a, torch, nvml, w, a.device_name)
    prog_path = os.path.join(a.out, "w%s_progress.txt" % a.worker)
    done = set()
    if os.path.exists(prog_path):
        for line in open(prog_path):
            p = line.split(" ", 1)
            if len(p) == 2:
                done.add(p[1].strip())  # started or done: never retried
    prog = open(prog_path, "a")
    items = [json.loads(l) for l in open(a.items)]
    for it in items:
        sid = it["spec"]["id"]
        if sid in done:
            continue
        if time.time() > a.deadline - 5:
            break
        prog.write("start %s\n" % sid)
        prog.flush()
        try:
            run_item(c, it, a.out)
        except torch.cuda.OutOfMemoryError as e:
            c.fail(it["spec"], "oom", "load: %s" % str(e)[:200])
        except Exception as e:
            c.fail(it["spec"], "load", "%s: %s" % (type(e).__name__, e))
            if schema.context_broken(e):
                w.flush()
                prog.write("done %s\n" % sid)
                prog.flush()
                sys.exit(3)  # the context is broken: the runner restarts us
        torch.cuda.empty_cache()
        w.flush()
        prog.write("done %s\n" % sid)
        prog.flush()
        if c.restart:
            sys.exit(3)  # a fresh context for the next item
    w.flush()


if __name__ == "__main__":
    main()
