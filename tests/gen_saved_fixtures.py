#!/usr/bin/python3
"""gen_saved_fixtures.py -- decomposed ops PyTorch runs as one (the tanh
form of GELU, GroupNorm, SiLU) for the training-memory count (feat.c:
mark_gelu_tanh_temps, mark_group_norm_temps, mark_silu_temps), with
PyTorch's autograd as the oracle.

Writes, under tests/fixtures/memest/ (weights stripped as the dataset
strips them, gen_model_fixtures.strip):
  memest_gelu_tanh.onnx   X [1, 256] -> Linear(1024) -> GELU(tanh) -> Linear(16)
  memest_tanh_gate.onnx   X -> Linear A, Linear B; Y = B * (1 + tanh(0.7 A)),
                          a tanh that is not a GELU (its product's other
                          operand is not the tanh's own input)
  memest_gn_silu.onnx     X [2, 8, 16, 16] -> Conv(32) -> GroupNorm(8) ->
                          SiLU -> Conv(8) (timm's GroupNormAct blocks)
  memest_gn_relu_pair.onnx  X [2, 8, 16, 16] -> two blocks of Conv(32) ->
                          GroupNorm(8) -> ReLU(inplace), then Conv(8): the
                          second GroupNorm's gamma and beta equal the
                          first's (ones, zeros), so the exporter merges
                          the initializers and the second block reads them
                          through Identity nodes (torchvision's ResNet-50
                          with GroupNorm: 43 of its 53 norms)
  memest_pool_mixer.onnx  X [2, 8, 16, 16] -> Conv(32) -> PoolFormer's
                          token mixer, x + ls * (AvgPool3x3(GroupNorm(1)(x))
                          - GroupNorm(1)(x)), -> Conv(8): AvgPool2DBackward0
                          saves the pool's input (feat.c: saves_input)
  memest_poolformerv2.onnx  X [2, 3, 16, 16] -> Conv(32) -> three of timm's
                          PoolFormerV2 (MetaFormer) blocks, GroupNorm(1)
                          without bias, the pooling mixer, a 1x1-conv MLP
                          with StarReLU (s * relu(x) ** 2 + b, one-element
                          parameters s and b, merged by the exporter from
                          the second block on) -> Conv(8) (feat.c:
                          train_saves_input)
  memest_norm_scale.onnx  X [2, 8, 16, 16] -> Conv(32) -> h * ||h||_2 over
                          H, W (x.norm, exported as ReduceL2; ConvNeXt-V2's
                          global response norm, F.normalize) -> Conv(8):
                          under CUDA autocast the norm runs with a float32
                          dtype argument and saves the half h itself, no
                          float32 copy (feat.c: amp_f32_nocopy_ops; the
                          test's autocast figure is derived by hand, CPU
                          autocast's policy for norm differs)
  memest_dark_block.onnx  X [2, 3, 16, 16] -> Conv-BN-SiLU(8) -> timm's
                          DarkBlock (CSPDarkNet: 1x1 and 3x3 Conv-BN-SiLU,
                          the SiLUs in place, plus the block's input) ->
                          Conv(4); exported in eval mode (the BNs folded,
                          as the dataset's graphs): the second in-place
                          SiLU's output goes to the residual Add, which
                          saves nothing, so its clone is all its backward
                          keeps (feat.c: the in-place clone, cx)
  memest_std_conv.onnx    X [2, 3, 16, 16] -> two weight-standardised
                          convs (timm's StdConv2d: F.batch_norm of the
                          weight in training mode), ReLU between: each conv
                          saves the standardised weight, a tensor the
                          forward makes, not a parameter (feat.c:
                          computed_weight)
  memest_dynamo_bn.onnx   X [2, 3, 16, 16] -> two Conv-BN-ReLU(in place)
                          blocks (16 channels, a HaloNet stem) -> Conv(8),
                          exported in eval mode (the BNs folded) and then
                          named as torch 2.11's dynamo exporter names such
                          a graph (the dataset's halonet26t, volo_d1): the
                          folded conv keeps its module's weight name, has
                          no bias input, and its output is the batch norm's
                          "getitem_<n>"; in training each BN is its own op,
                          whose input (the conv output) it saves beside
                          the output the next conv saves (feat.c:
                          dlp_feat_folded_bn)
  memest_unbind_attn.onnx X [2, 16, 32] -> timm's Attention (4 heads, the
                          explicit product): q, k, v = qkv.unbind(0) of
                          the permuted projection, exported and then
                          written as the dynamo exporter writes unbind,
                          one Slice -> Squeeze per part (the dataset's
                          naflexvit, aimv2): the explicit product saves
                          at::matmul's copies of q, k and v, not the qkv
                          block they are views of, so following the views
                          (feat.c: slice_base) must add nothing here
  memest_sdpa_unbind.onnx the same with the product as the dynamo
                          exporter writes F.scaled_dot_product_attention
                          (a scale Mul on q and on k^T, MatMul, Softmax,
                          MatMul): the fused kernel saves q, k and v as
                          given, views of the one qkv block; only v
                          reaches the product unscaled, and the other two
                          thirds of the block were missing. CPU torch 1.13
                          has no SDPA: test_memest.c derives its figure by
                          hand (no oracle entry)
  memest_talking_heads.onnx  X [2, 16, 32] -> CaiT's talking-heads
                          attention (4 heads): Linear layers over the heads
                          of the permuted scores before and after the
                          softmax, whose inputs at::matmul copies to fold
                          and saves (feat.c: linear_folds_copy)
  memest_shared_kv.onnx   X [2, 16, 32] -> attention of 4 query heads over
                          one shared key / value head (multi-query): the
                          transposed operands at::matmul copies to fold
                          their batch dimensions, the shared key and value
                          expanded to the 4 heads first, and saves those
                          copies, 4x the key's and value's own blocks
                          (feat.c: batched_matmul, feat_layout.c)
  saved_oracle.json       {name: {"file", "saved_bytes"}}: the distinct
                          non-parameter storages the backward graph of one
                          training forward saved (gen_train_saved.py's walk)
Run with Debian's torch: /usr/bin/python3 tests/gen_saved_fixtures.py
"""
import json
import os
import sys

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "fixtures", "memest")
sys.path.insert(0, os.path.join(ROOT, "tests"))
from gen_model_fixtures import strip  # noqa: E402
from gen_train_saved import saved_storages  # noqa: E402


class GeluTanhMlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(256, 1024, bias=False)
        self.act = torch.nn.GELU(approximate="tanh")
        self.fc2 = torch.nn.Linear(1024, 16, bias=False)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class TanhGate(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(256, 1024, bias=False)
        self.b = torch.nn.Linear(256, 1024, bias=False)
        self.fc2 = torch.nn.Linear(1024, 16, bias=False)

    def forward(self, x):
        return self.fc2(self.b(x) * (1 + torch.tanh(0.7 * self.a(x))))


class GroupNormSilu(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = torch.nn.Conv2d(8, 32, 3, padding=1, bias=False)
        self.gn = torch.nn.GroupNorm(8, 32)
        self.act = torch.nn.SiLU()
        self.c2 = torch.nn.Conv2d(32, 8, 3, padding=1, bias=False)

    def forward(self, x):
        return self.c2(self.act(self.gn(self.c1(x))))


class GroupNormReluPair(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = torch.nn.Conv2d(8, 32, 3, padding=1, bias=False)
        self.gn1 = torch.nn.GroupNorm(8, 32)
        self.c2 = torch.nn.Conv2d(32, 32, 3, padding=1, bias=False)
        self.gn2 = torch.nn.GroupNorm(8, 32)
        self.act = torch.nn.ReLU(inplace=True)
        self.c3 = torch.nn.Conv2d(32, 8, 3, padding=1, bias=False)

    def forward(self, x):
        x = self.act(self.gn1(self.c1(x)))
        return self.c3(self.act(self.gn2(self.c2(x))))


class PoolMixer(torch.nn.Module):
    """timm's PoolFormer block, token mixer half."""

    def __init__(self):
        super().__init__()
        self.c1 = torch.nn.Conv2d(8, 32, 1)
        self.norm = torch.nn.GroupNorm(1, 32)
        self.pool = torch.nn.AvgPool2d(3, 1, 1, count_include_pad=False)
        self.ls = torch.nn.Parameter(torch.full((32, 1, 1), 1e-5))
        self.c2 = torch.nn.Conv2d(32, 8, 1)

    def forward(self, x):
        x = self.c1(x)
        y = self.norm(x)
        return self.c2(x + self.ls * (self.pool(y) - y))


class GroupNorm1NoBias(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(c))

    def forward(self, x):
        return torch.nn.functional.group_norm(x, 1, self.weight, None, 1e-5)


class StarReLU(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = torch.nn.Parameter(torch.ones(1))
        self.bias = torch.nn.Parameter(torch.zeros(1))

    def forward(self, x):
        return self.scale * torch.relu(x) ** 2 + self.bias


class MetaFormerPoolBlock(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.norm1 = GroupNorm1NoBias(c)
        self.pool = torch.nn.AvgPool2d(3, 1, 1, count_include_pad=False)
        self.norm2 = GroupNorm1NoBias(c)
        self.fc1 = torch.nn.Conv2d(c, 4 * c, 1)
        self.act = StarReLU()
        self.fc2 = torch.nn.Conv2d(4 * c, c, 1)

    def forward(self, x):
        y = self.norm1(x)
        x = x + (self.pool(y) - y)
        return x + self.fc2(self.act(self.fc1(self.norm2(x))))


class PoolFormerV2(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = torch.nn.Conv2d(3, 32, 3, padding=1)
        self.blocks = torch.nn.Sequential(*[MetaFormerPoolBlock(32) for _ in range(3)])
        self.head = torch.nn.Conv2d(32, 8, 1)

    def forward(self, x):
        return self.head(self.blocks(self.stem(x)))


class NormScale(torch.nn.Module):
    """h * ||h||_2 over the spatial dimensions, between two 1x1 convs."""

    def __init__(self):
        super().__init__()
        self.a = torch.nn.Conv2d(8, 32, 1)
        self.b = torch.nn.Conv2d(32, 8, 1)

    def forward(self, x):
        h = self.a(x)
        return self.b(h * h.norm(p=2, dim=(2, 3), keepdim=True))


class ConvBnSilu(torch.nn.Sequential):
    def __init__(self, i, o, k):
        super().__init__(torch.nn.Conv2d(i, o, k, padding=k // 2, bias=False),
                         torch.nn.BatchNorm2d(o), torch.nn.SiLU(inplace=True))


class DarkBlockNet(torch.nn.Module):
    """A stem and one of timm's DarkBlocks (bottleneck ratio 0.5)."""

    def __init__(self):
        super().__init__()
        self.stem = ConvBnSilu(3, 8, 3)
        self.conv1 = ConvBnSilu(8, 4, 1)
        self.conv2 = ConvBnSilu(4, 8, 3)
        self.head = torch.nn.Conv2d(8, 4, 1)

    def forward(self, x):
        x = self.stem(x)
        return self.head(self.conv2(self.conv1(x)) + x)


class ConvBnRelu(torch.nn.Module):
    """timm's ConvNormAct with BatchNormAct2d: conv, BN, ReLU in place."""

    def __init__(self, i, o):
        super().__init__()
        self.conv = torch.nn.Conv2d(i, o, 3, padding=1, bias=False)
        self.bn = torch.nn.BatchNorm2d(o)

    def forward(self, x):
        return torch.relu_(self.bn(self.conv(x)))


class DynamoBnStem(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = ConvBnRelu(3, 16)
        self.conv2 = ConvBnRelu(16, 16)
        self.head = torch.nn.Conv2d(16, 8, 1)

    def forward(self, x):
        return self.head(self.conv2(self.conv1(x)))


def as_dynamo_names(path):
    """Renames a legacy eval-mode export's folded convs as the dynamo
    exporter leaves them: weight "m.<module>.conv.weight", no bias input
    (the exporter drops the folded bias, zero for a fresh BN) and the
    output "getitem_<n>", the batch norm's result it replaced."""
    import onnx
    m = onnx.load(path)
    g = m.graph
    inits = {t.name: t for t in g.initializer}
    rename, k = {}, 0
    for n in g.node:
        if n.op_type != "Conv" or not n.input[1].startswith("onnx::Conv"):
            continue
        k += 1
        inits[n.input[1]].name = "m.conv%d.conv.weight" % k
        n.input[1] = inits[n.input[1]].name
        if len(n.input) > 2:
            g.initializer.remove(inits[n.input[2]])
            del n.input[2]
        rename[n.output[0]] = "getitem" if k == 1 else "getitem_%d" % (5 * (k - 1))
        n.output[0] = rename[n.output[0]]
    for n in g.node:
        for j, v in enumerate(n.input):
            if v in rename:
                n.input[j] = rename[v]
    onnx.save(m, path)
    return k


class UnbindAttention(torch.nn.Module):
    """timm's Attention without the fused kernel."""

    def __init__(self, dim=32, heads=4):
        super().__init__()
        self.heads, self.scale = heads, (dim // heads) ** -0.5
        self.qkv = torch.nn.Linear(dim, 3 * dim)
        self.proj = torch.nn.Linear(dim, dim)

    def forward(self, x):
        b, n, c = x.shape
        qkv = self.qkv(x).reshape(b, n, 3, self.heads, c // self.heads)
        q, k, v = qkv.permute(2, 0, 3, 1, 4).unbind(0)
        attn = ((q * self.scale) @ k.transpose(-2, -1)).softmax(dim=-1)
        return self.proj((attn @ v).transpose(1, 2).reshape(b, n, c))


def split_as_slices(path):
    """Writes each Split of the legacy export as one Slice per part along
    its axis (parts of size 1), as the dynamo exporter writes unbind."""
    import onnx
    from onnx import helper, numpy_helper
    import numpy as np
    m = onnx.load(path)
    g = m.graph
    nodes, k = [], 0
    for n in g.node:
        if n.op_type != "Split":
            nodes.append(n)
            continue
        axis = next((a.i for a in n.attribute if a.name == "axis"), 0)
        for i, out in enumerate(n.output):
            names = ["slice%d_%s" % (k, t) for t in ("start", "end", "axis")]
            for name, val in zip(names, (i, i + 1, axis)):
                g.initializer.append(numpy_helper.from_array(
                    np.array([val], dtype=np.int64), name))
            nodes.append(helper.make_node("Slice", [n.input[0]] + names, [out]))
            k += 1
    del g.node[:]
    g.node.extend(nodes)
    onnx.save(m, path)
    return k


def sdpa_form(src, dst):
    """memest_unbind_attn with a scale Mul on k^T too: the pattern the
    dynamo exporter writes for F.scaled_dot_product_attention (feat.c:
    mark_sdpa), q * s and k^T * s into the QK^T product."""
    import onnx
    from onnx import helper, numpy_helper
    import numpy as np
    m = onnx.load(src, load_external_data=False)
    g = m.graph
    qk = [n for n in g.node if n.op_type == "MatMul" and
          any(p.op_type == "Mul" and p.output[0] == n.input[0] for p in g.node)]
    assert len(qk) == 1
    nodes = []
    for n in g.node:
        if n is qk[0]:
            g.initializer.append(numpy_helper.from_array(
                np.array(1.0, dtype=np.float32), "k_scale"))
            nodes.append(helper.make_node("Mul", [n.input[1], "k_scale"],
                                          ["k_scaled"]))
            n.input[1] = "k_scaled"
        nodes.append(n)
    del g.node[:]
    g.node.extend(nodes)
    onnx.save(m, dst)


class StdConv(torch.nn.Conv2d):
    """timm's StdConv2d: the weight standardised per output channel."""

    def forward(self, x):
        w = torch.nn.functional.batch_norm(
            self.weight.reshape(1, self.out_channels, -1), None, None,
            training=True, momentum=0., eps=1e-6).reshape_as(self.weight)
        return torch.nn.functional.conv2d(x, w, self.bias, self.stride,
                                          self.padding)


class StdConvNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = StdConv(3, 16, 3, padding=1)
        self.b = StdConv(16, 8, 1)

    def forward(self, x):
        return self.b(torch.relu(self.a(x)))


class TalkingHeads(torch.nn.Module):
    """timm's CaiT TalkingHeadAttn, small."""

    def __init__(self, dim=32, heads=4):
        super().__init__()
        self.heads = heads
        self.scale = (dim // heads) ** -0.5
        self.qkv = torch.nn.Linear(dim, dim * 3, bias=False)
        self.proj_l = torch.nn.Linear(heads, heads)
        self.proj_w = torch.nn.Linear(heads, heads)
        self.proj = torch.nn.Linear(dim, dim, bias=False)

    def forward(self, x):
        b, n, c = x.shape
        qkv = self.qkv(x).reshape(b, n, 3, self.heads, c // self.heads)
        qkv = qkv.permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0] * self.scale, qkv[1], qkv[2]
        attn = q @ k.transpose(-2, -1)
        attn = self.proj_l(attn.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)
        attn = attn.softmax(dim=-1)
        attn = self.proj_w(attn.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)
        return self.proj((attn @ v).transpose(1, 2).reshape(b, n, c))


class SharedKeyValue(torch.nn.Module):
    """Multi-query attention: 4 query heads, one key / value head."""

    def __init__(self, dim=32, heads=4):
        super().__init__()
        self.heads, self.d = heads, dim // heads
        self.q = torch.nn.Linear(dim, dim, bias=False)
        self.k = torch.nn.Linear(dim, self.d, bias=False)
        self.v = torch.nn.Linear(dim, self.d, bias=False)
        self.proj = torch.nn.Linear(dim, dim, bias=False)

    def forward(self, x):
        b, n, c = x.shape
        q = self.q(x).reshape(b, n, self.heads, self.d).transpose(1, 2)
        k = self.k(x).reshape(b, n, 1, self.d).transpose(1, 2)
        v = self.v(x).reshape(b, n, 1, self.d).transpose(1, 2)
        attn = (q @ k.transpose(-2, -1)).softmax(dim=-1)
        return self.proj((attn @ v).transpose(1, 2).reshape(b, n, c))


def main():
    torch.manual_seed(0)
    oracle = {}
    for name, model, shape in (("memest_gelu_tanh", GeluTanhMlp(), (1, 256)),
                               ("memest_tanh_gate", TanhGate(), (1, 256)),
                               ("memest_gn_silu", GroupNormSilu(), (2, 8, 16, 16)),
                               ("memest_gn_relu_pair", GroupNormReluPair(), (2, 8, 16, 16)),
                               ("memest_pool_mixer", PoolMixer(), (2, 8, 16, 16)),
                               ("memest_poolformerv2", PoolFormerV2(), (2, 3, 16, 16)),
                               ("memest_talking_heads", TalkingHeads(), (2, 16, 32)),
                               ("memest_shared_kv", SharedKeyValue(), (2, 16, 32)),
                               ("memest_norm_scale", NormScale(), (2, 8, 16, 16)),
                               ("memest_dark_block", DarkBlockNet(), (2, 3, 16, 16)),
                               ("memest_std_conv", StdConvNet(), (2, 3, 16, 16)),
                               ("memest_dynamo_bn", DynamoBnStem(), (2, 3, 16, 16)),
                               ("memest_unbind_attn", UnbindAttention(), (2, 16, 32))):
        model.train()
        x = torch.randn(*shape)
        total, per = saved_storages(model, x)
        model.eval()   # BatchNorm folded, as the collector exports
        path = os.path.join(OUT, name + ".onnx")
        torch.onnx.export(model, (x,), path, opset_version=17,
                          input_names=["X"], output_names=["Y"])
        if name == "memest_dynamo_bn":
            assert as_dynamo_names(path) == 2
        if name == "memest_unbind_attn":
            assert split_as_slices(path) == 3
        strip(path, path)
        oracle[name] = {"file": name + ".onnx", "saved_bytes": total,
                        "per_node": per}
        print("%-18s %6d bytes saved %s" % (name, total, per))
    sdpa_form(os.path.join(OUT, "memest_unbind_attn.onnx"),
              os.path.join(OUT, "memest_sdpa_unbind.onnx"))
    oracle["_env"] = {"torch": torch.__version__}
    with open(os.path.join(OUT, "saved_oracle.json"), "w") as f:
        json.dump(oracle, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
