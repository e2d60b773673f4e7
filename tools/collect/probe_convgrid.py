"""probe_convgrid.py - what cuDNN allocates beside the output for dense 2-D
convolutions of shapes drawn at random from a grid of typical sizes, with
no model behind them (fortieth session, docs/COST.md "cuDNN convolution
workspaces").

probe_convws.py measures the convolutions of zoo models; a held-out
model's shapes that no other model has are where the workspace model
(src/pred/pred_convws.c) misses (the thirty-ninth session: 0.36 of the
2.29 points of inference-memory MAPE; fp32 FFT workspaces of 2-14 GiB at
small batch, e.g. a 3x3 conv of [1, 32, 160, 160] -> 128 channels took
2,080 MiB). cuDNN's choice (benchmark off) is a function of the shape and
type, so shapes sampled without any model teach the same rule: the grid
is fixed here (batch, square or not resolution, channels, kernel / stride
/ padding, channels-last), not drawn from the dataset's graphs, so a
held-out model's own shapes enter only where they coincide with it.

Each call is measured as probe_convws.py's hooks do: after one warm-up
call, synchronize, reset the peak, then

    extra = max_memory_allocated during the call - allocated before - output

under torch.inference_mode, with the collector's precision settings
(measure.set_precision: TF32 off, cudnn.benchmark off). Records are
probe_convws.py's: one JSON line per chunk of calls, spec "grid:convgrid",
so the workspace model reads them (dlp_convws_calls_read: files named
*convws*.jsonl.xz) and, as a model no dataset row has, trains on them in
every fold.

    python3 tools/collect/probe_convgrid.py --seconds S [--seed K]
                                             [--chunk N] [--focus fft]
                                             [--backward]
                                             [--cache-gib G] [--skip N]
                                             [--dry-run N]

A later session should draw with another seed (the fortieth used 40, the
forty-first 41-44), so that its shapes add to the committed ones instead
of repeating them. Run one probe at a time on a GPU: a second process's
memory makes cuDNN fall back to other plans (data/probes/README.md).

--backward measures each shape's backward instead (sixty-fifth session:
the training step's cuDNN workspaces, repvgg_b1 fp32 b64 peaked at a
1,360 MiB one in the backward, data/probes/README.md): spec
"grid:convgrid-bwd", extra_mib beside the gradients (measure_one_bwd).
Write those records to a file whose name does not hold "convws", so that
the forward's workspace model does not read them.

--dry-run N prints N sampled shapes (JSON) without a GPU or torch.
"""
import argparse
import json
import os
import random
import sys
import time

MIB = 2 ** 20
BATCHES = (1, 2, 4, 8, 16, 32, 64, 128, 256)
SIZES = (4, 7, 8, 12, 14, 16, 20, 24, 28, 32, 40, 48, 56, 64, 80, 96, 112,
         128, 160, 192, 224, 256, 320, 384)
CHANNELS = (8, 16, 24, 32, 48, 64, 96, 128, 160, 192, 256, 320, 384, 512,
            640, 768, 1024, 1280, 1536, 2048)
# (kernel, stride, padding): weight
KSP = (((1, 1, 0), 35), ((3, 1, 1), 25), ((3, 2, 1), 10), ((1, 2, 0), 4),
       ((5, 1, 2), 3), ((5, 2, 2), 2), ((7, 1, 3), 3), ((7, 2, 3), 4),
       ((2, 2, 0), 3), ((4, 4, 0), 3), ((8, 8, 0), 2), ((14, 14, 0), 2),
       ((16, 16, 0), 3), ((32, 32, 0), 1))
# limits per call: input + output bytes, multiply-accumulates
MAX_IO = 3 * 2 ** 30
MAX_MACS = 1.5e12


# --focus fft: where the held-out misses are (docs/COST.md, "Fortieth
# session": fp32 3x3 stride-1 calls, 7% of which take cuDNN's FFT
# workspace of GiBs): fp32 at this share, and 3x3 stride 1 at this share of
# the kernel choices; the rest of the grid as before
FOCUS_FP32 = 0.8
FOCUS_3X3 = 0.6


def sample(rng, focus=""):
    """One shape: dict(prec, n, c, h, w, k, kh, s, p, cl), or None when it
    is over the limits (the caller draws again)."""
    fft = focus == "fft"
    prec = ("fp32" if rng.random() < FOCUS_FP32 else "fp16") if fft else \
        rng.choice(("fp32", "fp16"))
    if fft and rng.random() < FOCUS_3X3:
        kh, s, p = 3, 1, 1
    else:
        (kh, s, p), = rng.choices([k for k, _ in KSP], [w for _, w in KSP])
    n = rng.choice(BATCHES)
    h = rng.choice(SIZES)
    w = h if rng.random() < 0.9 else rng.choice(SIZES)
    stem = kh >= 4 or s == 2
    c = 3 if stem and rng.random() < 0.2 else rng.choice(CHANNELS)
    k = rng.choice(CHANNELS)
    cl = rng.random() < 0.3
    if h + 2 * p < kh or w + 2 * p < kh:
        return None
    ho = (h + 2 * p - kh) // s + 1
    wo = (w + 2 * p - kh) // s + 1
    es = 4 if prec == "fp32" else 2
    io = es * n * (c * h * w + k * ho * wo)
    macs = float(n) * k * ho * wo * c * kh * kh
    if io > MAX_IO or macs > MAX_MACS:
        return None
    return dict(prec=prec, n=n, c=c, h=h, w=w, k=k, kh=kh, s=s, p=p, cl=cl)


def shapes(seed, focus=""):
    """The endless stream of shapes for seed (and focus)."""
    rng = random.Random(seed)
    while True:
        sh = sample(rng, focus)
        if sh is not None:
            yield sh


# A sticky CUDA error (an illegal memory access: the forty-first session's
# seed-44 run hit one in cuDNN at the fp16 32x32 stride-32 conv of
# [1, 2048, 40, 40] to 2,048 channels, and the fortieth's parallel run at a
# fp32 one) fails every later call in the process: stop there instead of
# skipping the rest of the stream (that run went on to skip 902,779
# shapes in 425 s and wrote 278 MB of messages).
MAX_SKIP_LINES = 50


def dry_run_or_skip(stream, skip, dry_run):
    """Skips the first `skip` shapes of `stream`; with dry_run > 0 prints
    that many more as JSON and returns True (no GPU needed)."""
    for _ in range(skip):
        next(stream)
    for _ in range(dry_run):
        print(json.dumps(next(stream)))
    return dry_run > 0


def context_lost(e):
    """True when exception e leaves the CUDA context unusable."""
    text = str(e)
    return type(e).__name__ == "AcceleratorError" or \
        "illegal memory access" in text or "unspecified launch failure" in text


def make_call(torch, sh):
    """(conv, x): the convolution and input of shape sh on the GPU."""
    dtype = torch.float32 if sh["prec"] == "fp32" else torch.float16
    conv = torch.nn.Conv2d(sh["c"], sh["k"], sh["kh"], sh["s"], sh["p"],
                           bias=True, device="cuda", dtype=dtype)
    x = torch.randn(sh["n"], sh["c"], sh["h"], sh["w"], device="cuda", dtype=dtype)
    if sh["cl"]:
        x = x.contiguous(memory_format=torch.channels_last)
        conv = conv.to(memory_format=torch.channels_last)
    return conv, x


def record(torch, conv, x, y, extra_bytes):
    """probe_convws.py's record of one call (conv_fields) with extra_mib."""
    import probe_convws
    rec = probe_convws.conv_fields(torch, conv, x, y)
    rec["extra_mib"] = round(extra_bytes / MIB, 3)
    return rec


def measure_one(torch, sh):
    """probe_convws.py's record of one call of shape sh."""
    conv, x = make_call(torch, sh)
    with torch.inference_mode():
        conv(x)
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        before = torch.cuda.memory_allocated()
        y = conv(x)
        torch.cuda.synchronize()
        peak = torch.cuda.max_memory_allocated()
    rec = record(torch, conv, x, y, peak - before - y.numel() * y.element_size())
    del x, y, conv
    return rec


def measure_one_bwd(torch, sh):
    """The backward of one call of shape sh, as a training step runs it
    (autograd's ConvolutionBackward: the gradient of the input, except
    for a stem's 3-channel image, which needs none, of the weight and the
    bias), measured around torch.autograd.grad after one warm-up:

        extra = max_memory_allocated during it - allocated before - grads

    that is the backward's cuDNN workspace and any transposed copies.
    Records as measure_one's, with dgrad (whether the input's gradient
    was computed) and extra_mib the backward's."""
    conv, x = make_call(torch, sh)
    dgrad = sh["c"] != 3
    x.requires_grad_(dgrad)
    wrt = ([x] if dgrad else []) + [conv.weight, conv.bias]
    y = conv(x)
    g = torch.randn_like(y)
    torch.autograd.grad(y, wrt, g)
    y = conv(x)
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    before = torch.cuda.memory_allocated()
    grads = torch.autograd.grad(y, wrt, g)
    torch.cuda.synchronize()
    peak = torch.cuda.max_memory_allocated()
    gb = sum(t.numel() * t.element_size() for t in grads)
    rec = record(torch, conv, x, y, peak - before - gb)
    rec.update(dgrad=dgrad, grad_mib=round(gb / MIB, 3))
    del x, y, g, grads, conv, wrt
    return rec


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=300)
    ap.add_argument("--seed", type=int, default=40)
    ap.add_argument("--chunk", type=int, default=400,
                    help="calls per JSON line (per precision)")
    ap.add_argument("--focus", choices=("", "fft"), default="",
                    help="fft: mostly fp32 3x3 stride-1 shapes (FOCUS_*)")
    ap.add_argument("--cache-gib", type=float, default=40,
                    help="empty torch's cache when it reserves more; set it "
                         "low when several probes share the GPU, so that no "
                         "process's cache starves another's workspace (cuDNN "
                         "would then fall back to another algorithm)")
    ap.add_argument("--skip", type=int, default=0,
                    help="start at this index of the stream (to go on after "
                         "a run that lost its CUDA context)")
    ap.add_argument("--backward", action="store_true",
                    help="measure each shape's backward (measure_one_bwd), "
                         "spec grid:convgrid-bwd")
    ap.add_argument("--dry-run", type=int, default=0,
                    help="print this many sampled shapes and stop (no GPU)")
    a = ap.parse_args(argv)
    stream = shapes(a.seed, a.focus)
    if dry_run_or_skip(stream, a.skip, a.dry_run):
        return 0
    import torch
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import measure
    t_end = time.time() + a.seconds
    pending = {"fp32": [], "fp16": []}
    errors = 0

    def flush(prec):
        if pending[prec]:
            print(json.dumps(dict(spec=spec, prec=prec, batch=0, res=0,
                                  seed=a.seed, focus=a.focus, convs=pending[prec])),
                  flush=True)
            pending[prec] = []

    measure.set_precision(torch, "fp32")   # TF32 off, benchmark off (any prec)
    spec = "grid:convgrid-bwd" if a.backward else "grid:convgrid"
    one = measure_one_bwd if a.backward else measure_one
    done = 0
    lost = None
    for sh in stream:
        if time.time() > t_end:
            break
        try:
            pending[sh["prec"]].append(one(torch, sh))
        except Exception as e:  # out of memory, unsupported: skipped, counted
            errors += 1
            if errors <= MAX_SKIP_LINES:
                print("skip %s: %s" % (json.dumps(sh), str(e)[:200]), file=sys.stderr)
            if context_lost(e):
                lost = sh
                break
        done += 1
        if len(pending[sh["prec"]]) >= a.chunk:
            flush(sh["prec"])
        if torch.cuda.memory_reserved() > a.cache_gib * 2 ** 30:
            torch.cuda.empty_cache()
    for prec in pending:
        flush(prec)
    print("convgrid: %d shapes, %d skipped, seed %d" % (done, errors, a.seed),
          file=sys.stderr)
    if lost is not None:
        print("convgrid: the CUDA context was lost at stream index %d (%s); "
              "the records above were measured before it; go on with --skip %d"
              % (a.skip + done, json.dumps(lost), a.skip + done + 1), file=sys.stderr)
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
