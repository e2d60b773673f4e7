"""probe_optime.py - how long one convolution or matrix product takes on
the GPU, for shapes drawn at random from a grid of typical sizes, with no
model behind them (forty-fourth session, docs/COST.md "Convolution and
matrix-product times").

The held-out CUDA-graph latency error is mostly a network's level at one
precision (docs/EVAL.md, seventeenth session: 11.22% -> 4.43% once each
graph-and-precision's mean log error is taken out): how fast its
convolutions and products run relative to their FLOPs and bytes. cuDNN and
cuBLAS pick a kernel per shape and type (benchmark off), so, as for the
workspaces (probe_convgrid.py), shapes sampled without any model teach the
rule and a held-out model's own shapes enter only where they coincide.

Each call is timed as the collector times a CUDA-graph forward (PROTOCOL
p1: TF32 off, cudnn.benchmark off, inference mode): one warm-up call, one
eager call timed to choose R (calls per graph, about 2 ms of work, 1-64),
R calls captured in one CUDA graph, three replays timed with CUDA events;
the record keeps the median replay's time per call (`us`). Convolutions
have no bias (the Conv of an exported graph is a conv followed by
BatchNorm in PyTorch) and are dense (groups 1), depthwise (groups = C) or
grouped; products are torch.matmul of [B, M, K] by [K, N] (a Linear's
weight) or by [B, K, N] (attention's batched product).

    python3 tools/collect/probe_optime.py --seconds S [--seed K] [--train]
                                          [--dry-run N] [--bias] [--dw]
                                          [--grouped]

One JSON line per chunk of records: {"spec": "grid:optime", "seed": K,
"gpu": NAME, "ops": [...]}; a record is {"op": "conv", "prec", "x":
[N, C, H, W], "w": [K, C/g, kh, kw], "s", "p", "g", "cl", "us"} or {"op":
"mm", "prec", "b", "m", "k", "n", "bw": 1 when the second operand is
batched, "us"}.

--bias (fiftieth session) draws products only, none batched, 3 in 4 of
them a Linear with its bias, `F.linear(a, w [N, K], bias)` ("bias": 1;
the others as without it, "bias": 0): cuBLAS's bias epilogue changes
the kernel, at fp32 and few rows 1.2-2.9x the time of the product
alone (an A/B on the H200, 192 shapes: fp32 median 1.10x, bf16 / fp16
1.04x; the weight's layout, [K, N] or [N, K], median 1.00x). Without
it the stream of a seed is the one the earlier runs drew.

--dw (fifty-fourth session) draws depthwise convolutions only (groups = C
= K), on maps of 1-96 pixels with kernels 3-13: the default stream's maps
start at 4 pixels and its depthwise kernels rarely pass 7, where cuDNN at
fp16 runs a 7x7 on a 2x2 map as one kernel per channel and a 9x9 on a
24-pixel map at ~0.3 TMAC/s (tools/collect/probe_kernels.py: rdnet_large,
ConvFormer, FocalNet).

--grouped (seventy-seventh session) draws grouped convolutions only (1 <
groups < C) whose group count is any of 2-192, odd and prime ones
included: C = (channels per group) x groups, as RegNet's widths (376 =
8 x 47, 1,056 = 8 x 132), where the default stream's channel counts are
round (probe_convgrid.CHANNELS) and its group counts powers of two and
small multiples of 3 and 5. A profile of a RegNet training step
(probe_kernels.py --train, data/probes/20261205-kernels-train77.jsonl.xz)
found cuDNN's fp32 forward and backward of [16, 376, 14, 14] by
[376, 8, 3, 3] (47 groups) at 0.05 TMAC/s, one launch per group, where
the grid's 128 groups of 8 at [16, 1,024, 24, 24] ran at 0.31.

--train (forty-fifth session; spec "grid:optrain"): each shape also gets
`train_us`, the time of its forward and backward (the input's and the
weight's gradients, `torch.autograd.grad` of the output against a random
output gradient) in a CUDA graph of R such calls, timed the same way:
what a training step spends on the op's kernels (the collector's step at
fp16 / bf16 is autocast, which runs these ops on half operands; the
gradient's cast back to the fp32 weight is not included).
"""
import argparse
import json
import os
import random
import sys
import time

PRECS = ("fp32", "fp16", "bf16")
PREC_W = (4, 4, 2)
# the workspace probe's grid of sizes, channels and dense kernels
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from probe_convgrid import (BATCHES, CHANNELS, KSP, SIZES, context_lost,  # noqa: E402
                            dry_run_or_skip)
# depthwise and grouped: kernels 3, 5, 7 (and 9, 11) at stride 1 or 2
KSP_DW = (((3, 1, 1), 35), ((3, 2, 1), 15), ((5, 1, 2), 12), ((5, 2, 2), 8),
          ((7, 1, 3), 20), ((7, 2, 3), 3), ((9, 1, 4), 3), ((11, 1, 5), 2),
          ((1, 1, 0), 2))
GROUP_WIDTH = (4, 8, 16, 24, 32, 48, 64, 128)   # channels per group
# products: rows M (batch x tokens, or tokens of one head), inner K, N
MM_DIMS = (1, 2, 4, 8, 16, 32, 49, 64, 96, 128, 196, 197, 256, 384, 512,
           576, 768, 1024, 1536, 2048, 3072, 4096, 5120, 8192, 11008, 16384)
MM_B = (1, 2, 4, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512,
        768, 1024)
# limits per call: operand + result bytes, multiply-accumulates
MAX_IO = 2 * 2 ** 30
MAX_MACS = 6e11
TARGET_MS = 2.0   # work per captured graph
MAX_R = 64
CHUNK = 500
# --dw (fifty-fourth session): depthwise convolutions where cuDNN leaves its
# fast kernels: maps of 1-6 pixels under a 5-13 kernel (one launch per
# channel at fp16 / bf16: rdnet_large's 7x7 on 2x2, 1,640 launches), and
# 9-13 kernels on larger maps (FocalNet's 9x9 at 24-96 px)
DW_SIZES = (1, 2, 2, 3, 3, 4, 5, 6, 7, 8, 12, 14, 16, 24, 28, 32, 48, 56, 96)
DW_KSP = (((3, 1, 1), 10), ((5, 1, 2), 10), ((7, 1, 3), 25), ((9, 1, 4), 20),
          ((11, 1, 5), 10), ((13, 1, 6), 8), ((3, 2, 1), 5), ((7, 2, 3), 3))
DW_CHANNELS = (64, 96, 128, 192, 256, 320, 384, 512, 640, 768, 920, 1024,
               1120, 1280, 1536, 1640, 2048)


def sample_conv(rng, prec):
    kind = rng.choices(("dense", "dw", "group"), (55, 30, 15))[0]
    table = KSP if kind == "dense" else KSP_DW
    (kh, s, p), = rng.choices([k for k, _ in table], [w for _, w in table])
    n = rng.choice(BATCHES)
    h = rng.choice(SIZES)
    w = h if rng.random() < 0.9 else rng.choice(SIZES)
    if kind == "dense":
        c = 3 if (kh >= 4 or s == 2) and rng.random() < 0.2 else rng.choice(CHANNELS)
        k, g = rng.choice(CHANNELS), 1
    elif kind == "dw":
        c = rng.choice(CHANNELS)
        g = c
        k = c if rng.random() < 0.85 else 2 * c
    else:
        gw = rng.choice(GROUP_WIDTH)
        c = rng.choice([x for x in CHANNELS if x % gw == 0 and x > gw] or [2 * gw])
        g = c // gw
        k = c if rng.random() < 0.7 else rng.choice(
            [x for x in CHANNELS if x % g == 0] or [c])
    cl = rng.random() < 0.25
    if not conv_fits(prec, n, c, h, w, k, kh, s, p, g):
        return None
    return dict(op="conv", prec=prec, n=n, c=c, h=h, w=w, k=k, kh=kh, s=s,
                p=p, g=g, cl=cl)


def conv_fits(prec, n, c, h, w, k, kh, s, p, g):
    """Whether a convolution of input [n, c, h, w] by weight [k, c / g,
    kh, kh] (stride s, padding p) has an output and stays within the
    limits per call (MAX_IO bytes, MAX_MACS)."""
    if h + 2 * p < kh or w + 2 * p < kh:
        return False
    ho = (h + 2 * p - kh) // s + 1
    wo = (w + 2 * p - kh) // s + 1
    es = 4 if prec == "fp32" else 2
    io = es * (n * (c * h * w + k * ho * wo) + k * (c // g) * kh * kh)
    macs = float(n) * k * ho * wo * (c // g) * kh * kh
    return io <= MAX_IO and macs <= MAX_MACS


def sample_dw(rng, prec):
    """A depthwise convolution of the --dw stream (groups = C = K)."""
    (kh, s, p), = rng.choices([k for k, _ in DW_KSP], [w for _, w in DW_KSP])
    n, h, c = rng.choice(BATCHES), rng.choice(DW_SIZES), rng.choice(DW_CHANNELS)
    if not conv_fits(prec, n, c, h, h, c, kh, s, p, c):
        return None
    return dict(op="conv", prec=prec, n=n, c=c, h=h, w=h, k=c, kh=kh, s=s,
                p=p, g=c, cl=rng.random() < 0.25)


def sample_grouped(rng, prec):
    """A grouped convolution of the --grouped stream: groups 2-192 of
    GROUP_WIDTH channels (RegNet's and ResNeXt's 3x3 at stride 1 or 2
    mostly), maps 4-112 pixels, at most 4,096 input channels."""
    (kh, s, p), = rng.choices([k for k, _ in KSP_DW], [w for _, w in KSP_DW])
    gw = rng.choice(GROUP_WIDTH)
    g = rng.randint(2, 192) if rng.random() < 0.7 else rng.randint(2, 48)
    c = gw * g
    k = c if rng.random() < 0.8 else 2 * c
    n, h = rng.choice(BATCHES), rng.choice(SIZES)
    if h > 112 or c > 4096 or not conv_fits(prec, n, c, h, h, k, kh, s, p, g):
        return None
    return dict(op="conv", prec=prec, n=n, c=c, h=h, w=h, k=k, kh=kh, s=s,
                p=p, g=g, cl=rng.random() < 0.25)


def sample_mm(rng, prec):
    bw = rng.random() < 0.35
    b = rng.choice(MM_B) if bw or rng.random() < 0.5 else 1
    m, k, n = rng.choice(MM_DIMS), rng.choice(MM_DIMS), rng.choice(MM_DIMS)
    if not bw and rng.random() < 0.5:   # a Linear over batch x tokens rows
        m = rng.choice(BATCHES) * rng.choice((1, 16, 49, 64, 128, 196, 197, 256, 512))
        b = 1
    if bw:
        k, n = (rng.choice((32, 64, 80, 96, 128)), n) if rng.random() < 0.5 \
            else (k, rng.choice((32, 64, 80, 96, 128)))
    es = 4 if prec == "fp32" else 2
    io = es * (b * m * k + (b if bw else 1) * k * n + b * m * n)
    macs = float(b) * m * k * n
    if io > MAX_IO or macs > MAX_MACS:
        return None
    return dict(op="mm", prec=prec, b=b, m=m, k=k, n=n, bw=int(bw))


def shapes(seed, a=None):
    rng = random.Random(seed)
    bias = bool(a is not None and getattr(a, "bias", False))
    dw = bool(a is not None and getattr(a, "dw", False))
    grouped = bool(a is not None and getattr(a, "grouped", False))
    while True:
        prec = rng.choices(PRECS, PREC_W)[0]
        if dw or grouped:
            sh = (sample_dw if dw else sample_grouped)(rng, prec)
            if sh is not None:
                yield sh
            continue
        if bias:
            sh = sample_mm(rng, prec)
            if sh is None or sh["bw"]:
                continue
            sh["bias"] = int(rng.random() < 0.75)
            yield sh
            continue
        sh = sample_conv(rng, prec) if rng.random() < 0.6 else sample_mm(rng, prec)
        if sh is not None:
            yield sh


def build(torch, sh, grad=False):
    dtype = {"fp32": torch.float32, "fp16": torch.float16,
             "bf16": torch.bfloat16}[sh["prec"]]
    if sh["op"] == "conv":
        conv = torch.nn.Conv2d(sh["c"], sh["k"], sh["kh"], sh["s"], sh["p"],
                               groups=sh["g"], bias=False, device="cuda",
                               dtype=dtype)
        x = torch.randn(sh["n"], sh["c"], sh["h"], sh["w"], device="cuda",
                        dtype=dtype)
        if sh["cl"]:
            x = x.contiguous(memory_format=torch.channels_last)
            conv = conv.to(memory_format=torch.channels_last)
        rec = dict(op="conv", prec=sh["prec"], x=list(x.shape),
                   w=list(conv.weight.shape), s=sh["s"], p=sh["p"], g=sh["g"],
                   cl=int(sh["cl"]))
        fwd = lambda: conv(x)   # noqa: E731
        leaves = (x.requires_grad_(), conv.weight)
    else:
        a = torch.randn(sh["b"], sh["m"], sh["k"], device="cuda", dtype=dtype)
        wshape = (sh["b"], sh["k"], sh["n"]) if sh["bw"] else (sh["k"], sh["n"])
        w = torch.randn(*wshape, device="cuda", dtype=dtype)
        rec = dict(op="mm", prec=sh["prec"], b=sh["b"], m=sh["m"], k=sh["k"],
                   n=sh["n"], bw=sh["bw"])
        fwd = lambda: torch.matmul(a, w)   # noqa: E731
        leaves = (a.requires_grad_(), w.requires_grad_())
        if "bias" in sh:
            rec["bias"] = sh["bias"]
        if sh.get("bias"):   # a Linear: weight [N, K], bias [N]
            w = torch.randn(sh["n"], sh["k"], device="cuda", dtype=dtype)
            bias = torch.randn(sh["n"], device="cuda", dtype=dtype)
            fwd = lambda: torch.nn.functional.linear(a, w, bias)   # noqa: E731
            leaves = (a.requires_grad_(), w.requires_grad_(),
                      bias.requires_grad_())
    if not grad:
        return fwd, None, rec
    with torch.no_grad():
        gout = torch.randn_like(fwd())
    return fwd, (lambda: torch.autograd.grad(fwd(), leaves, gout)), rec


def graph_us(torch, fn, warm):
    """(microseconds per call, R): fn timed as the collector times a
    CUDA-graph forward, after `warm` calls on a side stream."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(warm):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    ev0 = torch.cuda.Event(enable_timing=True)
    ev1 = torch.cuda.Event(enable_timing=True)
    ev0.record()
    fn()
    ev1.record()
    ev1.synchronize()
    t1 = ev0.elapsed_time(ev1)
    reps = max(1, min(MAX_R, int(TARGET_MS / max(t1, 1e-3))))
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(reps):
            fn()
    g.replay()
    times = []
    for _ in range(3):
        ev0.record()
        g.replay()
        ev1.record()
        ev1.synchronize()
        times.append(ev0.elapsed_time(ev1) * 1e3 / reps)
    del g
    times.sort()
    return times[1], reps


def measure_one(torch, sh, train=False):
    fn, step, rec = build(torch, sh, train)
    if train:   # autograd needs its warm-up outside inference mode
        with torch.enable_grad():
            us, reps = graph_us(torch, step, 3)
        rec["train_us"] = round(us, 3)
        rec["train_r"] = reps
    with torch.inference_mode():
        us, reps = graph_us(torch, fn, 1)
    rec["us"] = round(us, 3)
    rec["r"] = reps
    return rec


def run_probe(torch, stream, measure_one, spec, seed, seconds, tag):
    """Measures the shapes of `stream` with measure_one(sh) until `seconds`
    have passed, printing the records as JSON lines of CHUNK under `spec`;
    (shapes done, skipped, the shape that lost the CUDA context or None),
    or None when the first 20 shapes all failed (a broken setup)."""
    gpu = torch.cuda.get_device_name(0)
    t_end = time.time() + seconds
    pending, done, errors, lost = [], 0, 0, None

    def flush():
        if pending:
            print(json.dumps(dict(spec=spec, seed=seed, gpu=gpu,
                                  torch=torch.__version__, ops=pending)),
                  flush=True)
            pending.clear()

    for sh in stream:
        if time.time() > t_end:
            break
        try:
            pending.append(measure_one(sh))
        except Exception as e:  # out of memory, unsupported: skipped, counted
            errors += 1
            if errors <= 50:
                print("skip %s: %s" % (json.dumps(sh), str(e)[:200]),
                      file=sys.stderr)
            if context_lost(e):
                lost = sh
                break
        done += 1
        if done == 20 and errors == done:
            print("%s: the first 20 shapes all failed" % tag, file=sys.stderr)
            return None
        if len(pending) >= CHUNK:
            flush()
        if done % 200 == 0:
            torch.cuda.empty_cache()
    flush()
    return done, errors, lost


def probe_main(argv, shapes, measure_one, specs, tag, add_args=None):
    """The command line of a shape probe: shapes(seed) the stream
    (shapes(seed, args) when add_args(parser) adds the probe's own
    options), measure_one(torch, sh, train) a record, specs the (forward,
    --train) spec names."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=300)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--skip", type=int, default=0)
    ap.add_argument("--dry-run", type=int, default=0)
    ap.add_argument("--train", action="store_true",
                    help="also time each shape's forward + backward")
    if add_args:
        add_args(ap)
    a = ap.parse_args(argv)
    stream = shapes(a.seed, a) if add_args else shapes(a.seed)
    if dry_run_or_skip(stream, a.skip, a.dry_run):
        return 0
    import torch
    import measure
    measure.set_precision(torch, "fp32")   # TF32 off, benchmark off
    r = run_probe(torch, stream, lambda sh: measure_one(torch, sh, a.train),
                  specs[1] if a.train else specs[0], a.seed, a.seconds, tag)
    if r is None:
        return 4
    done, errors, lost = r
    print("%s: %d shapes, %d skipped, seed %d, stream index %d"
          % (tag, done, errors, a.seed, a.skip + done), file=sys.stderr)
    return 3 if lost is not None else 0


def add_args(ap):
    ap.add_argument("--bias", action="store_true",
                    help="products only, 3 in 4 a Linear with its bias")
    ap.add_argument("--dw", action="store_true",
                    help="depthwise convolutions only: small maps, large kernels")
    ap.add_argument("--grouped", action="store_true",
                    help="grouped convolutions only, any group count 2-192")


if __name__ == "__main__":
    sys.exit(probe_main(sys.argv[1:], shapes, measure_one,
                        ("grid:optime", "grid:optrain"), "optime", add_args))
