#!/usr/bin/python3
"""gen_model_fixtures.py -- exports the whole-model fixtures of dlperf's
inspect tests and writes their oracles.

Run with Debian's python (torch 1.13, torchvision 0.14, onnx 1.12):

    /usr/bin/python3 tests/gen_model_fixtures.py [--out DIR] [--only a,b]
                                                [--set committed|all]

Every graph is exported per /work/shared/PROTOCOL.md "Graph files": legacy
exporter, opset 17, constant folding, dynamic `batch` (and `seq` for token
inputs), exported at batch 2 / seq 16; initializers >= 1 KiB are moved to
external data and the weight file is deleted (random init, no weights kept).

Oracles written to DIR/oracle.json, one entry per model:
  published_gmacs  torchvision's published op count ("_ops" of the weights
                   meta, shown as GFLOPS in the docs table; counted as
                   multiply-adds of conv/linear/matmul), None for our own
                   transformers
  torch_macs       multiply-adds of conv/mm/bmm/addmm counted by a PyTorch
                   dispatch-mode counter during one batch-1 forward
  torch_params     sum(p.numel()) of the PyTorch module
  onnx_float_init  elements of floating-point initializers in the exported
                   graph, counted with the onnx package (differs from
                   torch_params where the exporter folds BatchNorm into Conv)
  dims             symbol bindings for the test (batch 1, seq 16)
and for a few models shapes_<name>.json: every tensor shape that
onnx.shape_inference (data_prop=True) finds once the inputs' symbolic dims
are fixed to batch 1 / seq 16.
"""
import argparse
import json
import os
import sys
import tempfile

import onnx
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision
import torchvision.models as tvm
from onnx import external_data_helper
from torch.utils._python_dispatch import TorchDispatchMode

torch.set_num_threads(max(1, os.cpu_count() or 1))


def _zero_symbolic(g, self):
    # torch 1.13's legacy exporter has no symbolic for aten::zero (the
    # in-place x.zero_() of Swin V2's attention mask): x - x keeps the dtype
    # and the shape, which is all the graph needs.
    return g.op("Sub", self, self)


torch.onnx.register_custom_op_symbolic("aten::zero", _zero_symbolic, 17)

# torchvision's published op counts (GFLOPS column of the classification
# table, i.e. the weights meta "_ops" of torchvision >= 0.15; torchvision 0.14
# installed here predates the field). Source:
# https://pytorch.org/vision/stable/models.html#table-of-all-available-classification-weights
# and torchvision/models/*.py "_ops" (pytorch/vision PR #6936).
# Values are for the DEFAULT weights' crop size, except vit_h_14 and
# regnet_y_128gf (IMAGENET1K_SWAG_LINEAR_V1, 224x224).
PUBLISHED = {
    "alexnet": 0.714, "convnext_base": 15.355, "convnext_large": 34.361,
    "convnext_small": 8.684, "convnext_tiny": 4.456,
    "densenet121": 2.834, "densenet161": 7.728, "densenet169": 3.36,
    "densenet201": 4.291,
    "efficientnet_b0": 0.386, "efficientnet_b1": 0.687,
    "efficientnet_b2": 1.088, "efficientnet_b3": 1.827,
    "efficientnet_b4": 4.394, "efficientnet_b5": 10.266,
    "efficientnet_b6": 19.068, "efficientnet_b7": 37.746,
    "efficientnet_v2_l": 56.08, "efficientnet_v2_m": 24.582,
    "efficientnet_v2_s": 8.366,
    "googlenet": 1.498, "inception_v3": 5.713, "maxvit_t": 5.558,
    "mnasnet0_5": 0.104, "mnasnet0_75": 0.215, "mnasnet1_0": 0.314,
    "mnasnet1_3": 0.526, "mobilenet_v2": 0.301,
    "mobilenet_v3_large": 0.217, "mobilenet_v3_small": 0.057,
    "regnet_x_16gf": 15.941, "regnet_x_1_6gf": 1.603,
    "regnet_x_32gf": 31.736, "regnet_x_3_2gf": 3.177,
    "regnet_x_400mf": 0.414, "regnet_x_800mf": 0.8, "regnet_x_8gf": 7.995,
    "regnet_y_128gf": 127.518, "regnet_y_16gf": 15.912,
    "regnet_y_1_6gf": 1.612, "regnet_y_32gf": 32.28,
    "regnet_y_3_2gf": 3.176, "regnet_y_400mf": 0.402,
    "regnet_y_800mf": 0.834, "regnet_y_8gf": 8.473,
    "resnet101": 7.801, "resnet152": 11.514, "resnet18": 1.814,
    "resnet34": 3.664, "resnet50": 4.089,
    "resnext101_32x8d": 16.414, "resnext101_64x4d": 15.46,
    "resnext50_32x4d": 4.23,
    "shufflenet_v2_x0_5": 0.04, "shufflenet_v2_x1_0": 0.145,
    "shufflenet_v2_x1_5": 0.296, "shufflenet_v2_x2_0": 0.583,
    "squeezenet1_0": 0.819, "squeezenet1_1": 0.349,
    "swin_b": 15.431, "swin_s": 8.741, "swin_t": 4.491,
    "swin_v2_b": 20.325, "swin_v2_s": 11.546, "swin_v2_t": 5.94,
    "vgg11": 7.609, "vgg11_bn": 7.609, "vgg13": 11.308, "vgg13_bn": 11.308,
    "vgg16": 15.47, "vgg16_bn": 15.47, "vgg19": 19.632, "vgg19_bn": 19.632,
    "vit_b_16": 17.564, "vit_b_32": 4.409, "vit_h_14": 167.295,
    "vit_l_16": 61.555, "vit_l_32": 15.378,
    "wide_resnet101_2": 22.753, "wide_resnet50_2": 11.398,
}
PUBLISHED_SRC = ("torchvision weights meta '_ops' (GFLOPS column), "
                 "https://pytorch.org/vision/stable/models.html")

# The representative set committed to the repository (the full sweep is
# exported on the fly by tests/test_inspect.py with DLP_FULL_TV=1).
COMMITTED_TV = [
    "alexnet", "convnext_tiny", "densenet121", "efficientnet_b0",
    "efficientnet_v2_s", "googlenet", "inception_v3", "maxvit_t",
    "mnasnet1_0", "mobilenet_v2", "mobilenet_v3_large", "mobilenet_v3_small",
    "regnet_x_400mf", "regnet_y_400mf", "resnet18", "resnet50",
    "resnext50_32x4d", "shufflenet_v2_x1_0", "squeezenet1_1", "swin_t",
    "swin_v2_t", "vgg16", "vit_b_16", "vit_b_32", "wide_resnet50_2",
]
SHAPE_ORACLES = ["resnet50", "vit_b_16", "bert_tiny", "gpt_tiny",
                 "llama_tiny"]


# ---- hand-built transformers --------------------------------------------
class SelfAttention(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.h, self.dh = heads, d // heads
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)

    def split(self, t):  # [B, T, D] -> [B, H, T, Dh]
        b, t_, _ = t.shape
        return t.view(b, t_, self.h, self.dh).transpose(1, 2)

    def forward(self, x, bias=None, rot=None):
        b, t, d = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q, k, v = self.split(q), self.split(k), self.split(v)
        if rot is not None:
            q, k = rot(q), rot(k)
        s = torch.matmul(q, k.transpose(-2, -1)) / (self.dh ** 0.5)
        if bias is not None:
            s = bias(s)
        a = torch.softmax(s, dim=-1)
        o = torch.matmul(a, v).transpose(1, 2).reshape(b, t, d)
        return self.proj(o)


class BertTiny(nn.Module):
    """Token + position embeddings, padding mask arithmetic, post-LN."""
    def __init__(self, vocab=1000, d=64, heads=4, layers=2, ff=256, maxpos=128):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(maxpos, d)
        self.ln0 = nn.LayerNorm(d)
        self.att = nn.ModuleList(SelfAttention(d, heads) for _ in range(layers))
        self.ln1 = nn.ModuleList(nn.LayerNorm(d) for _ in range(layers))
        self.ff = nn.ModuleList(nn.Sequential(nn.Linear(d, ff), nn.GELU(),
                                              nn.Linear(ff, d))
                                for _ in range(layers))
        self.ln2 = nn.ModuleList(nn.LayerNorm(d) for _ in range(layers))

    def forward(self, ids):
        pos = torch.arange(ids.shape[1], device=ids.device).unsqueeze(0)
        x = self.ln0(self.tok(ids) + self.pos(pos))
        keep = (ids != 0).to(x.dtype)                      # [B, T]
        add = (1.0 - keep)[:, None, None, :] * -10000.0    # [B, 1, 1, T]
        for att, l1, ff, l2 in zip(self.att, self.ln1, self.ff, self.ln2):
            x = l1(x + att(x, bias=lambda s: s + add))
            x = l2(x + ff(x))
        return x


class GptTiny(nn.Module):
    """Causal decoder: Trilu mask + Where, pre-LN, tied LM head."""
    def __init__(self, vocab=1000, d=64, heads=4, layers=2, maxpos=128):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(maxpos, d)
        self.att = nn.ModuleList(SelfAttention(d, heads) for _ in range(layers))
        self.ln1 = nn.ModuleList(nn.LayerNorm(d) for _ in range(layers))
        self.mlp = nn.ModuleList(nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(),
                                               nn.Linear(4 * d, d))
                                 for _ in range(layers))
        self.ln2 = nn.ModuleList(nn.LayerNorm(d) for _ in range(layers))
        self.lnf = nn.LayerNorm(d)

    def forward(self, ids):
        t = ids.shape[1]
        pos = torch.arange(t, device=ids.device).unsqueeze(0)
        x = self.tok(ids) + self.pos(pos)
        ones = torch.ones(t, t, dtype=torch.bool, device=ids.device)
        future = torch.triu(ones, diagonal=1)               # [T, T]

        def mask(s):
            return torch.where(future, torch.tensor(float("-inf")), s)
        for att, l1, mlp, l2 in zip(self.att, self.ln1, self.mlp, self.ln2):
            x = x + att(l1(x), bias=mask)
            x = x + mlp(l2(x))
        return torch.matmul(self.lnf(x), self.tok.weight.t())


class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.w = nn.Parameter(torch.ones(d))
        self.eps = eps

    def forward(self, x):
        r = torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
        return x * r * self.w


class LlamaTiny(nn.Module):
    """LLaMA-like: RMSNorm, rotary embeddings, causal mask, SwiGLU MLP."""
    def __init__(self, vocab=1000, d=64, heads=4, layers=2, ff=172):
        super().__init__()
        self.dh = d // heads
        self.tok = nn.Embedding(vocab, d)
        self.att = nn.ModuleList(SelfAttention(d, heads) for _ in range(layers))
        self.n1 = nn.ModuleList(RMSNorm(d) for _ in range(layers))
        self.n2 = nn.ModuleList(RMSNorm(d) for _ in range(layers))
        self.gate = nn.ModuleList(nn.Linear(d, ff, bias=False) for _ in range(layers))
        self.up = nn.ModuleList(nn.Linear(d, ff, bias=False) for _ in range(layers))
        self.down = nn.ModuleList(nn.Linear(ff, d, bias=False) for _ in range(layers))
        self.nf = RMSNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, ids):
        t = ids.shape[1]
        x = self.tok(ids)
        # rotary tables computed in-graph from the sequence length
        inv = 1.0 / (10000.0 ** (torch.arange(0, self.dh, 2).float() / self.dh))
        f = torch.arange(t).float()[:, None] * inv[None, :]
        e = torch.cat([f, f], dim=-1)
        cos, sin = e.cos(), e.sin()

        def rot(q):
            h = q.shape[-1] // 2
            r = torch.cat([-q[..., h:], q[..., :h]], dim=-1)
            return q * cos + r * sin
        causal = torch.triu(torch.full((t, t), float("-inf")), diagonal=1)
        for i in range(len(self.att)):
            x = x + self.att[i](self.n1[i](x), bias=lambda s: s + causal, rot=rot)
            h = self.n2[i](x)
            x = x + self.down[i](F.silu(self.gate[i](h)) * self.up[i](h))
        return self.head(self.nf(x))


TRANSFORMERS = {"bert_tiny": BertTiny, "gpt_tiny": GptTiny,
                "llama_tiny": LlamaTiny}


# ---- oracles -------------------------------------------------------------
class MacCounter(TorchDispatchMode):
    """Counts multiply-adds of convolution and matrix products (aten level)."""
    def __init__(self):
        super().__init__()
        self.macs = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        name = func.overloadpacket.__name__
        if name in ("mm", "addmm", "bmm", "baddbmm"):
            a = args[1] if name in ("addmm", "baddbmm") else args[0]
            b = args[2] if name in ("addmm", "baddbmm") else args[1]
            n = 1
            for s in a.shape[:-1]:
                n *= s
            self.macs += n * a.shape[-1] * b.shape[-1]
        elif name == "convolution":
            w, groups = args[1], args[8]
            k = 1
            for s in w.shape[2:]:
                k *= s
            if args[6]:  # transposed: input elems x Cout/g x k
                self.macs += args[0].numel() * w.shape[1] * k
            else:
                self.macs += out.numel() * (w.shape[1]) * k
            del groups
        return out


def torch_macs(model, x):
    c = MacCounter()
    with c:
        model(x)
    return c.macs


class First(nn.Module):
    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, x):
        y = self.m(x)
        if isinstance(y, (tuple, list)):
            y = y[0]
        elif hasattr(y, "logits"):
            y = y.logits
        return y


def build(name):
    """Returns (module, example input at batch 2, is_token_model, size)."""
    torch.manual_seed(0)
    if name in TRANSFORMERS:
        m = TRANSFORMERS[name]()
        return m, torch.randint(1, 1000, (2, 16)), True, None
    kwargs = {"weights": None}
    if name in ("googlenet", "inception_v3"):
        kwargs["aux_logits"] = False
        kwargs["init_weights"] = False
    m = tvm.get_model(name, **kwargs)
    wenum = tvm.get_model_weights(name)
    w = wenum.DEFAULT
    if name in ("vit_h_14", "regnet_y_128gf"):
        w = wenum.IMAGENET1K_SWAG_LINEAR_V1
    size = w.transforms().crop_size[0]
    return m, torch.randn(2, 3, size, size), False, size


def strip(src, dst):
    """Moves initializers >= 1 KiB to external data, deletes the weights."""
    m = onnx.load(src, load_external_data=True)
    n = 0
    for t in m.graph.initializer:
        if t.data_type in (1, 10, 11, 16):
            k = 1
            for d in t.dims:
                k *= d
            n += k
    base = os.path.basename(dst)
    tmp = tempfile.mkdtemp(dir=os.path.dirname(src))
    external_data_helper.convert_model_to_external_data(
        m, all_tensors_to_one_file=True, location=base + ".weights",
        size_threshold=1024)
    onnx.save_model(m, os.path.join(tmp, base))
    os.replace(os.path.join(tmp, base), dst)
    os.remove(os.path.join(tmp, base + ".weights"))
    os.rmdir(tmp)
    return n


def export(model, x, path, token, dynamic=True):
    names = ["input_ids"] if token else ["input"]
    dyn = None
    if dynamic:
        dyn = {names[0]: {0: "batch"}, "output": {0: "batch"}}
        if token:
            dyn[names[0]][1] = "seq"
            dyn["output"][1] = "seq"
    torch.onnx.export(model, (x,), path, opset_version=17,
                      do_constant_folding=True, input_names=names,
                      output_names=["output"], dynamic_axes=dyn)


def shape_oracle(path, token):
    """Every tensor shape onnx.shape_inference (with data propagation) finds
    for the fixture with its symbolic input dims fixed to batch 1 / seq 16
    (the same file, so tensor names match ours); fully known shapes only."""
    m = onnx.load(path, load_external_data=False)
    for i in m.graph.input:
        dims = i.type.tensor_type.shape.dim
        dims[0].Clear()
        dims[0].dim_value = 1
        if token:
            dims[1].Clear()
            dims[1].dim_value = 16
    del m.graph.output[:]   # outputs keep their symbolic dims otherwise
    m = onnx.shape_inference.infer_shapes(m, data_prop=True)
    out = {}
    for vi in m.graph.value_info:
        t = vi.type.tensor_type
        if not t.HasField("shape"):
            continue
        dims = [d.dim_value if d.HasField("dim_value") else None
                for d in t.shape.dim]
        if None not in dims:
            out[vi.name] = dims
    return out


def write_shapes(outdir, name, token):
    shapes = shape_oracle(os.path.join(outdir, name + ".onnx"), token)
    with open(os.path.join(outdir, "shapes_" + name + ".json"), "w") as f:
        json.dump(shapes, f, sort_keys=True, separators=(",", ":"))
    return "shapes_" + name + ".json"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(os.path.dirname(
        os.path.abspath(__file__)), "fixtures", "models"))
    ap.add_argument("--only", default="")
    ap.add_argument("--set", default="committed", choices=["committed", "all"])
    ap.add_argument("--shapes-only", action="store_true",
                    help="only rewrite shapes_*.json of existing fixtures")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    if a.shapes_only:
        opath = os.path.join(a.out, "oracle.json")
        oracle = json.load(open(opath))
        for name in SHAPE_ORACLES:
            if name in oracle:
                oracle[name]["shape_oracle"] = write_shapes(
                    a.out, name, name in TRANSFORMERS)
        with open(opath, "w") as f:
            json.dump(oracle, f, indent=1, sort_keys=True)
        return 0
    names = list(TRANSFORMERS) + (COMMITTED_TV if a.set == "committed"
                                  else tvm.list_models(module=tvm))
    if a.only:
        names = a.only.split(",")
    opath = os.path.join(a.out, "oracle.json")
    oracle = json.load(open(opath)) if os.path.exists(opath) else {}
    tmpdir = tempfile.mkdtemp(prefix="dlp_fix_")
    for name in names:
        try:
            export_one(name, a.out, tmpdir, oracle)
        except Exception as e:  # record and go on with the next model
            oracle[name] = {"export_error": "%s: %s" % (type(e).__name__,
                                                       str(e)[:300])}
            print("%-22s export failed: %s" % (name, oracle[name]
                                               ["export_error"]), flush=True)
            for f in os.listdir(tmpdir):
                os.remove(os.path.join(tmpdir, f))
        with open(opath, "w") as f:
            json.dump(oracle, f, indent=1, sort_keys=True)
    os.rmdir(tmpdir)


def export_one(name, out, tmpdir, oracle):
    """Exports one model into out/ and adds its oracle entry."""
    model, x, token, size = build(name)
    model.eval()
    wrapped = First(model).eval()
    dst = os.path.join(out, name + ".onnx")
    raw = os.path.join(tmpdir, name + ".onnx")
    # grad left on: under no_grad nn.MultiheadAttention takes its fused
    # fast path (aten::_native_multi_head_attention), which has no ONNX export
    export(wrapped, x, raw, token)
    n_float = strip(raw, dst)
    for f in os.listdir(tmpdir):
        os.remove(os.path.join(tmpdir, f))
    macs = torch_macs(wrapped, x[:1])   # grad on: no fused MHA fast path
    ent = {
        "file": name + ".onnx",
        "kind": "transformer" if token else "torchvision",
        "published_gmacs": None if token else PUBLISHED.get(name),
        "published_source": None if token else PUBLISHED_SRC,
        "input_size": size,
        "torch_macs": macs,
        "torch_params": sum(p.numel() for p in model.parameters()),
        "onnx_float_init": n_float,
        "dims": {"seq": 16} if token else {},
        "torch": torch.__version__, "torchvision": torchvision.__version__,
    }
    if name in SHAPE_ORACLES:
        ent["shape_oracle"] = write_shapes(out, name, token)
    oracle[name] = ent
    print("%-22s %8.1f KB  torch %.3f GMACs  published %s" % (
        name, os.path.getsize(dst) / 1024, macs / 1e9,
        ent["published_gmacs"]), flush=True)
    del model, wrapped


if __name__ == "__main__":
    sys.exit(main())
