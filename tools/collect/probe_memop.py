"""probe_memop.py - how long the operators that are not convolutions or
matrix products take on the GPU: elementwise functions, broadcast
arithmetic, normalizations, softmax, pooling, layout copies and fused
attention (F.scaled_dot_product_attention), for shapes drawn at random from
a grid of typical sizes with no model behind them (forty-sixth session,
docs/COST.md "Memory-bound and attention times").

probe_optime.py measured the convolutions and products, whose kernels
cuDNN and cuBLAS choose; the roofline node time of every other operator is
max(FLOPs / peak, bytes / bandwidth), which for a small tensor is far below
the kernel's floor and for a large one ignores how close each kernel gets to
the bandwidth. These records measure that, the same way: each call timed as
the collector times a CUDA-graph forward (PROTOCOL p1: TF32 off,
cudnn.benchmark off, inference mode), R calls captured in one graph (about
2 ms of work, 1-64), three replays, the median replay's time per call.

    python3 tools/collect/probe_memop.py --seconds S [--seed K] [--skip N] [--train]
                                         [--dry-run N] [--ops OP,..] [--masks]
                                         [--bcast] [--hbias] [--hbiasw]
    python3 tools/collect/probe_memop.py --ops mfill ...

--ops draws only those ops (their weights as below); --masks draws each
attention's mask (forty-seventh session); --bcast draws it from the
broadcast mask (3 in 4) and the materialized bool one (forty-eighth
session); --hbias draws T5's relative position bias, eager's or a graph's
(forty-ninth session), --hbiasw the graph's with the padding mask applied
in the timed call, as T5 does under capture. Without these the stream of
a seed is the one the earlier runs drew. --ops mfill (fiftieth session)
draws the masked fill of attention scores, an op no default stream draws;
--ops gather (fifty-third session) the rows of a table gathered by an
index, another; --ops resize (fifty-fourth session) an interpolation.

One JSON line per chunk of records: {"spec": "grid:memop" (or
"grid:memtrain" with --train), "seed": K, "gpu": NAME, "torch": VERSION,
"ops": [...]}. A record is {"op", "prec", "fn", "x": input shape, ...,
"us", "r"}:
  op "unary"   fn relu|gelu|silu|sigmoid|tanh|hardswish|hardsigmoid|exp
  op "binary"  fn add|mul, "y": the second operand's shape (broadcast)
  op "bn"      batch_norm in eval mode over x [N, C, H, W]
  op "ln"      layer_norm over the last dim of x [R, D]
  op "gn"      group_norm of x [N, C, H, W] in "groups"
  op "softmax" softmax over the last dim of x [R, D]
  op "pool"    fn max|avg with "k", "s", "p", or fn gavg (adaptive to 1x1)
  op "copy"    x [A, B, C, D] permuted by (0, 2, 1, 3) made contiguous
  op "mfill"   x [B, H, L, S] scores .masked_fill(m, min) out of place (a
               copy of x, then the fill in place: DeBERTa's scores in each
               layer, exported as Where(m, min, x)), "y": the bool mask's
               shape: [B, 1, L, S] (DeBERTa's), [B, 1, 1, S], [1, 1, L, S]
               or x's
  op "gather"  x[idx] (aten::index, "axis" 0: a table [R, W]) or x[:, idx]
               ("axis" 1: x [O, R, W]) by "n" random int64 indices in
               [0, R): BEiT's relative position bias gathered from its
               table (fifty-third session), exported as Gather
  op "resize"  F.interpolate of x [N, C, H, W] to "o" [Ho, Wo], fn
               linear (bilinear, align_corners False), linear_ac (True),
               nearest or cubic (bicubic), "cl" 1 when x is channels-last:
               PyTorch's NCHW bilinear kernel gives each output pixel one
               thread that loops over N x C (EfficientFormerV2's 7 -> 14
               upsampling of [64, 1024, 7, 7]: 12.2 ms, 83% of its forward;
               tools/collect/probe_kernels.py)
  op "sdpa"    q [B, H, L, D], k and v [B, H, S, D] ("s"), "causal"; with
               --masks also "mask": none, causal (is_causal, as "causal"),
               bool or float (a materialized [B, 1, L, S] mask: what
               transformers passes a decoder while a CUDA graph is captured,
               where eagerly it passes is_causal); with --bcast also
               bcast: a bool [B, 1, L, S] view of L elements, strides
               [0, L, 1, 0], what transformers passes an encoder (BERT,
               RoBERTa, DistilBERT) while a graph is captured (eagerly it
               drops the all-ones mask). No fused kernel takes a mask whose
               last stride is 0: PyTorch's math path runs it (float
               products and softmax; tools/collect/probe_sdpa.py --kernels)
               with --hbias "mask" is hbias or hbiasb: T5's additive
               position bias in the query's dtype, [1, H, L, S] (eager) or
               [B, H, L, S] (with the padding mask, while a graph is
               captured), the head axis innermost in memory (strides
               [.., 1, S H, H]: the bias table's embedding permuted), so
               no fused kernel takes it either: the math path, in both
               runtimes (probe_sdpa.py --kernels, forty-ninth session);
               with --hbiasw "mask" is hbiasw: the call T5 makes in each
               layer while a graph is captured, the bias masked by the
               padding mask first, torch.where(pad [B, 1, L, S], bias
               [1, H, L, S], min), its [B, H, L, S] result the attn_mask
               (a profile of the capture: aten::where per layer)
--train adds "train_us": the forward and the backward (the gradients of
every floating input, and of the normalizations' weights, against a random
output gradient), batch_norm then in training mode, timed the same way.
"""
import argparse
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from probe_convgrid import BATCHES, CHANNELS, SIZES  # noqa: E402
from probe_optime import graph_us, probe_main  # noqa: E402

PRECS = ("fp32", "fp16", "bf16")
PREC_W = (4, 4, 2)
OPS = (("unary", 16), ("binary", 18), ("bn", 8), ("ln", 10), ("gn", 4),
       ("softmax", 10), ("pool", 8), ("copy", 8), ("sdpa", 18))
# drawn only when --ops names them (the default streams stay as measured)
EXTRA_OPS = (("mfill", 8), ("gather", 8), ("resize", 8))
# resize: F.interpolate of x [N, C, H, W] to [Ho, Wo] = scale x [H, W]
RESIZE_FN = ("linear", "linear", "linear", "linear_ac", "nearest", "cubic")
RESIZE_SCALE = (2, 2, 2, 4, 8, 0.5)
RESIZE_SIZES = (1, 2, 4, 7, 7, 8, 12, 14, 14, 16, 24, 28, 32, 48, 56, 64,
                96, 128)
# gather: the tables' rows (relative position tables of Swin, BEiT at 224,
# 384 and 512 px, vocabularies), their row widths (heads, hidden sizes) and
# the index counts (L^2 of attention maps, or tokens)
GATHER_ROWS = (169, 225, 484, 732, 2212, 3972, 30522, 32000, 50257, 151936)
GATHER_WIDTH = (1, 2, 3, 4, 6, 8, 12, 16, 20, 24, 32, 48, 64, 96, 128, 256,
                768, 1024, 4096)
GATHER_L = (7, 49, 50, 145, 197, 257, 577, 785, 1025, 1297, 2049)
MFILL_MASKS = ("b1ls", "b1ls", "b1ls", "b11s", "11ls", "same")
UNARY = ("relu", "gelu", "silu", "sigmoid", "tanh", "hardswish",
         "hardsigmoid", "exp")
TOKENS = (1, 16, 49, 50, 64, 128, 196, 197, 256, 384, 512, 577, 1024, 2048,
          4096)
WIDTH = (64, 96, 128, 192, 256, 320, 384, 512, 640, 768, 1024, 1280, 1536,
         2048, 3072, 4096, 5120, 8192, 11008, 16384, 32000, 50257)
HEAD_DIM = (32, 40, 48, 64, 80, 96, 128)
HEADS = (1, 2, 3, 4, 6, 8, 12, 16, 20, 32)
SEQ = (16, 49, 50, 64, 128, 196, 197, 256, 384, 512, 577, 1024, 2048, 4096)
MAX_ELEMS = 2 ** 28        # per tensor
MAX_FLOPS = 4e11           # attention


def nchw(rng):
    n, c, h = rng.choice(BATCHES), rng.choice(CHANNELS), rng.choice(SIZES)
    return [n, c, h, h if rng.random() < 0.9 else rng.choice(SIZES)]


def rows(rng):
    return [rng.choice(BATCHES) * rng.choice(TOKENS), rng.choice(WIDTH)]


def numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


MASKS = ("none", "causal", "bool", "bool", "float")
BCAST_MASKS = ("bcast", "bcast", "bcast", "bool")
HBIAS_MASKS = ("hbias", "hbiasb")
MAX_SCORES = 2 ** 30       # the math path's float score blocks


def sample(rng, prec, ops=OPS, masks=False, bcast=False, hbias=False,
           hbiasw=False):
    op = rng.choices([o for o, _ in ops], [w for _, w in ops])[0]
    sh = dict(op=op, prec=prec)
    if op == "unary":
        sh["fn"] = rng.choice(UNARY)
        sh["x"] = nchw(rng) if rng.random() < 0.5 else rows(rng)
    elif op == "binary":
        sh["fn"] = rng.choice(("add", "mul"))
        form = rng.choice(("same", "same", "chan", "row", "scalar"))
        if form == "chan":     # a per-channel scale, as squeeze-excitation's
            x = nchw(rng)
            y = [x[0] if rng.random() < 0.5 else 1, x[1], 1, 1]
        elif form == "row":    # a bias over the last dim
            x = rows(rng)
            y = [x[1]]
        else:
            x = nchw(rng) if rng.random() < 0.5 else rows(rng)
            y = list(x) if form == "same" else []
        sh["x"], sh["y"] = x, y
    elif op in ("bn", "gn"):
        sh["x"] = nchw(rng)
        if op == "gn":
            c = sh["x"][1]
            sh["groups"] = rng.choice([g for g in (1, 8, 16, 32) if c % g == 0])
    elif op in ("ln", "softmax"):
        sh["x"] = rows(rng)
        if op == "softmax" and rng.random() < 0.5:   # attention scores
            s = rng.choice(SEQ)
            sh["x"] = [rng.choice(BATCHES) * rng.choice(HEADS) * s, s]
    elif op == "pool":
        sh["x"] = nchw(rng)
        sh["fn"] = rng.choice(("max", "max", "avg", "gavg", "gavg"))
        if sh["fn"] != "gavg":
            sh["k"], sh["s"], sh["p"] = rng.choice(
                ((3, 2, 1), (2, 2, 0), (3, 1, 1), (5, 1, 2), (7, 1, 3)))
            if sh["x"][2] + 2 * sh["p"] < sh["k"] or \
                    sh["x"][3] + 2 * sh["p"] < sh["k"]:
                return None
    elif op == "copy":
        b, h, s = rng.choice(BATCHES), rng.choice(HEADS), rng.choice(SEQ)
        sh["x"] = [b, s, h, rng.choice(HEAD_DIM)] if rng.random() < 0.5 \
            else [b, h, s, rng.choice(HEAD_DIM)]
    elif op == "mfill":
        b, h, seq = rng.choice(BATCHES), rng.choice(HEADS), rng.choice(SEQ)
        s = seq if rng.random() < 0.8 else rng.choice(SEQ)
        sh["x"] = [b, h, seq, s]
        sh["y"] = {"b1ls": [b, 1, seq, s], "b11s": [b, 1, 1, s],
                   "11ls": [1, 1, seq, s],
                   "same": [b, h, seq, s]}[rng.choice(MFILL_MASKS)]
    elif op == "gather":
        w = rng.choice(GATHER_WIDTH)
        sh["x"] = [rng.choice(GATHER_ROWS), w]
        if rng.random() < 0.5:
            sh["n"] = rng.choice(GATHER_L) ** 2
        else:
            sh["n"] = rng.choice(BATCHES) * rng.choice(TOKENS)
        if rng.random() < 0.2:       # x[:, idx]: a gather on axis 1
            sh["x"] = [rng.choice(BATCHES)] + sh["x"]
        sh["axis"] = len(sh["x"]) - 2
        if sh["n"] * numel(sh["x"]) // sh["x"][-2] > MAX_ELEMS:
            return None
    elif op == "resize":
        h = rng.choice(RESIZE_SIZES)
        sh["x"] = [rng.choice(BATCHES), rng.choice(CHANNELS), h, h]
        sh["fn"] = rng.choice(RESIZE_FN)
        sc = rng.choice(RESIZE_SCALE)
        sh["o"] = [max(1, int(h * sc))] * 2
        sh["cl"] = int(rng.random() < 0.2)
        if numel(sh["x"][:2] + sh["o"]) > MAX_ELEMS:
            return None
    else:
        b, h, d = rng.choice(BATCHES), rng.choice(HEADS), rng.choice(HEAD_DIM)
        seq = rng.choice(SEQ)
        s = seq if rng.random() < 0.8 else rng.choice(SEQ)
        sh["x"], sh["s"] = [b, h, seq, d], s
        if hbiasw:
            sh["mask"], sh["causal"] = "hbiasw", 0
        elif hbias:
            sh["mask"], sh["causal"] = rng.choice(HBIAS_MASKS), 0
        elif bcast:
            sh["mask"], sh["causal"] = rng.choice(BCAST_MASKS), 0
        elif masks:
            sh["mask"] = rng.choice(MASKS if s == seq else MASKS[2:])
            sh["causal"] = int(sh["mask"] == "causal")
        else:
            sh["causal"] = int(rng.random() < 0.3 and s == seq)
        if 4.0 * b * h * seq * s * d > MAX_FLOPS or \
                (sh.get("mask") in ("bool", "float") and b * seq * s > MAX_ELEMS) or \
                (sh.get("mask") in ("bcast", "hbias", "hbiasb", "hbiasw") and
                 b * h * seq * s > MAX_SCORES):
            return None
    if numel(sh["x"]) > MAX_ELEMS:
        return None
    return sh


def shapes(seed, ops=OPS, masks=False, bcast=False, hbias=False,
           hbiasw=False):
    rng = random.Random(seed)
    while True:
        sh = sample(rng, rng.choices(PRECS, PREC_W)[0], ops, masks, bcast,
                    hbias, hbiasw)
        if sh is not None:
            yield sh


def attn_mask(torch, sh, dtype, dev):
    """The mask of an sdpa record: None, or the [B, 1, L, S] bool / float
    block, or (bcast) a bool view of L elements with strides [0, L, 1, 0],
    as transformers' encoder mask is while a graph is captured, or (hbias,
    hbiasb) T5's position bias: a [L, S, H] block permuted to [1, H, L, S]
    ([B, L, S, H] to [B, H, L, S] as the padding mask broadcasts it under
    capture), in the query's dtype."""
    b, h, l, _ = sh["x"]
    m = sh.get("mask")
    if m == "bool":
        return torch.ones(b, 1, l, sh["s"], device=dev, dtype=torch.bool)
    if m == "float":
        return torch.zeros(b, 1, l, sh["s"], device=dev, dtype=dtype)
    if m == "bcast":
        return torch.ones(1, 1, l, 1, device=dev,
                          dtype=torch.bool).expand(b, 1, l, sh["s"])
    if m in ("hbias", "hbiasb", "hbiasw"):
        nb = b if m == "hbiasb" else 1
        return torch.randn(nb, l, sh["s"], h, device=dev,
                           dtype=dtype).permute(0, 3, 1, 2)
    return None


def build(torch, sh, train):
    """(forward, forward + backward or None, record)."""
    F = torch.nn.functional
    dtype = {"fp32": torch.float32, "fp16": torch.float16,
             "bf16": torch.bfloat16}[sh["prec"]]
    dev = "cuda"

    def rand(*shape):
        return torch.randn(*shape, device=dev, dtype=dtype)

    op, x = sh["op"], rand(*sh["x"])
    leaves = [x]
    if op == "unary":
        f = {"relu": F.relu, "gelu": F.gelu, "silu": F.silu,
             "sigmoid": torch.sigmoid, "tanh": torch.tanh,
             "hardswish": F.hardswish, "hardsigmoid": F.hardsigmoid,
             "exp": torch.exp}[sh["fn"]]
        fwd = lambda: f(x)   # noqa: E731
    elif op == "binary":
        y = rand(*sh["y"]) if sh["y"] else 0.5
        if sh["y"]:
            leaves.append(y)
        fwd = (lambda: x + y) if sh["fn"] == "add" else (lambda: x * y)
    elif op == "bn":
        c = sh["x"][1]
        mean, var = rand(c), rand(c).abs() + 1
        w, b = rand(c), rand(c)
        leaves += [w, b]
        fwd = lambda: F.batch_norm(x, mean, var, w, b, training=train)  # noqa: E731
    elif op == "gn":
        c = sh["x"][1]
        w, b = rand(c), rand(c)
        leaves += [w, b]
        fwd = lambda: F.group_norm(x, sh["groups"], w, b)   # noqa: E731
    elif op == "ln":
        d = sh["x"][-1]
        w, b = rand(d), rand(d)
        leaves += [w, b]
        fwd = lambda: F.layer_norm(x, (d,), w, b)   # noqa: E731
    elif op == "softmax":
        fwd = lambda: torch.softmax(x, -1)   # noqa: E731
    elif op == "pool":
        if sh["fn"] == "gavg":
            fwd = lambda: F.adaptive_avg_pool2d(x, 1)   # noqa: E731
        else:
            pf = F.max_pool2d if sh["fn"] == "max" else F.avg_pool2d
            fwd = lambda: pf(x, sh["k"], sh["s"], sh["p"])   # noqa: E731
    elif op == "copy":
        fwd = lambda: x.permute(0, 2, 1, 3).contiguous()   # noqa: E731
    elif op == "gather":   # aten::index: BEiT's table[index.view(-1)]
        idx = torch.randint(0, sh["x"][-2], (sh["n"],), device=dev)
        fwd = (lambda: x[idx]) if sh["axis"] == 0 else (lambda: x[:, idx])  # noqa: E731
    elif op == "resize":
        if sh["cl"]:
            x = x.contiguous(memory_format=torch.channels_last)
            leaves = [x]
        mode = {"linear": "bilinear", "linear_ac": "bilinear",
                "nearest": "nearest", "cubic": "bicubic"}[sh["fn"]]
        ac = {"linear": False, "linear_ac": True, "cubic": False}.get(sh["fn"])
        fwd = lambda: F.interpolate(x, size=sh["o"], mode=mode,   # noqa: E731
                                    align_corners=ac)
    elif op == "mfill":
        m = torch.rand(*sh["y"], device=dev) < 0.1
        low = torch.finfo(dtype).min
        fwd = lambda: x.masked_fill(m, low)   # noqa: E731
    else:
        b, h, _, d = sh["x"]
        k, v = rand(b, h, sh["s"], d), rand(b, h, sh["s"], d)
        leaves += [k, v]
        mask = attn_mask(torch, sh, dtype, dev)
        if sh.get("mask") == "hbiasw":   # masked in the timed call
            pad = torch.ones(b, 1, sh["x"][2], sh["s"], device=dev,
                             dtype=torch.bool)
            low = torch.finfo(dtype).min
            fwd = lambda: F.scaled_dot_product_attention(   # noqa: E731
                x, k, v, attn_mask=torch.where(pad, mask, low))
        else:
            fwd = lambda: F.scaled_dot_product_attention(   # noqa: E731
                x, k, v, attn_mask=mask, is_causal=bool(sh["causal"]))
    rec = dict(sh)
    if not train:
        return fwd, None, rec
    for t in leaves:
        t.requires_grad_()
    with torch.no_grad():
        gout = torch.randn_like(fwd())
    return fwd, (lambda: torch.autograd.grad(fwd(), leaves, gout)), rec


def measure_one(torch, sh, train):
    if train:
        _, step, rec = build(torch, sh, True)
        with torch.enable_grad():
            us, reps = graph_us(torch, step, 3)
        train_us, train_r = round(us, 3), reps
    fn, _, rec = build(torch, sh, False)
    with torch.inference_mode():
        us, reps = graph_us(torch, fn, 1)
    rec["us"] = round(us, 3)
    rec["r"] = reps
    if train:
        rec["train_us"], rec["train_r"] = train_us, train_r
    return rec


def op_list(text):
    """--ops: a comma-separated subset of OPS, with their weights."""
    want = text.split(",")
    bad = [o for o in want if o not in dict(OPS + EXTRA_OPS)]
    if bad:
        raise argparse.ArgumentTypeError("unknown op %s" % bad[0])
    return tuple(o for o in OPS + EXTRA_OPS if o[0] in want)


def add_args(ap):
    ap.add_argument("--ops", type=op_list, default=OPS,
                    help="draw only these ops (comma-separated)")
    ap.add_argument("--masks", action="store_true",
                    help="draw each attention's mask")
    ap.add_argument("--bcast", action="store_true",
                    help="draw each attention's mask: broadcast or bool")
    ap.add_argument("--hbias", action="store_true",
                    help="draw each attention's mask: T5's position bias")
    ap.add_argument("--hbiasw", action="store_true",
                    help="each attention T5's under capture (bias masked)")


def main(argv):
    return probe_main(argv, lambda seed, a: shapes(seed, a.ops, a.masks,
                                                      a.bcast, a.hbias,
                                                      a.hbiasw),
                      measure_one, ("grid:memop", "grid:memtrain"), "memop",
                      add_args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
