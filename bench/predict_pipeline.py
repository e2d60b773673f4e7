"""predict_pipeline.py: the Python competitor of `dlperf predict`, doing the
same steps the way a Python tool would: onnx.load (weights not loaded),
bind batch / dims, onnx shape inference, a featurizer in Python (one-hot op
over a 210-op vocabulary + other, cost-changing attributes, input / output
shapes padded to 6 dims, log MACs / FLOPs / params / bytes, per-node
roofline times on the H100, static totals), then a PyTorch forward of a
DIPPM-shaped SAGE model of the same sizes as dlperf's (3 mean-aggregation
GraphSAGE layers of width 64, mean pooling, concatenated static features,
3 fully connected layers, 3 outputs). Weights are random: only the cost of
the steps is compared, not the numbers.

  /usr/bin/python3 bench/predict_pipeline.py MODEL.onnx|DIR [--batch N]
                                              [--dim NAME=V]...
prints one JSON object per model (latency_ms, memory_mib, energy_j,
throughput_per_s, mig_profile), like `dlperf predict --json`.
"""
import json
import math
import os
import sys

import numpy as np
import onnx
import torch

torch.set_num_threads(1)

N_OPS = 210
NODE_DIM = N_OPS + 1 + (12 + 2 * 7 + 5) + 3     # = dlperf's DLP_FEAT_NODE_DIM
STATIC_DIM = 54
HIDDEN = 64
PEAK_TC, PEAK_SIMT, BW = 989.4e12, 67e12, 3350e9

_VOCAB = None


def vocab():
    global _VOCAB
    if _VOCAB is None:
        names = sorted({s.name for s in onnx.defs.get_all_schemas() if s.domain == ""})
        _VOCAB = {n: i for i, n in enumerate(names[:N_OPS])}
    return _VOCAB


def lg(x):
    return math.log1p(max(x, 0.0))


def featurize(path, batch=1, dims=None):
    dims = dims or {}
    m = onnx.load(path, load_external_data=False)
    inits = {t.name: list(t.dims) for t in m.graph.initializer}
    for inp in m.graph.input:
        if inp.name in inits:
            continue
        for k, d in enumerate(inp.type.tensor_type.shape.dim):
            if d.dim_param == "batch" or (k == 0 and d.dim_param):
                d.dim_value = batch
            elif d.dim_param in dims:
                d.dim_value = dims[d.dim_param]
    m = onnx.shape_inference.infer_shapes(m)
    shapes = dict(inits)
    for vi in list(m.graph.input) + list(m.graph.value_info) + list(m.graph.output):
        shapes[vi.name] = [d.dim_value if d.HasField("dim_value") else 0
                           for d in vi.type.tensor_type.shape.dim]
    voc = vocab()
    nodes = m.graph.node
    n = len(nodes)
    x = np.zeros((n, NODE_DIM), np.float32)
    producer = {}
    src, dst = [], []
    tot = np.zeros(6)
    base = N_OPS + 1
    for i, nd in enumerate(nodes):
        x[i, voc.get(nd.op_type, N_OPS) if nd.domain in ("", "ai.onnx") else N_OPS] = 1
        a = {at.name: at for at in nd.attribute}
        def ints(name):
            return list(a[name].ints) if name in a else []
        ks, st, pd, dl = ints("kernel_shape"), ints("strides"), ints("pads"), ints("dilations")
        att = [ks[0] if ks else 0, ks[-1] if ks else 0, st[0] if st else 0,
               st[-1] if st else 0, pd[0] if pd else 0, pd[-1] if pd else 0,
               dl[0] if dl else 0, dl[-1] if dl else 0,
               a["group"].i if "group" in a else 0, a["axis"].i if "axis" in a else 0,
               len(ints("axes")), a["transB"].i if "transB" in a else 0]
        x[i, base:base + 12] = [lg(v) for v in att]
        ins = shapes.get(nd.input[0], []) if nd.input else []
        outs = shapes.get(nd.output[0], []) if nd.output else []
        for j, shp in enumerate((ins, outs)):
            o = base + 12 + j * 7
            pad = (list(shp) + [0] * 6)[:6]
            x[i, o:o + 6] = [math.log2(1 + v) for v in pad]
            x[i, o + 6] = len(shp)
        out_el = float(np.prod(outs)) if outs else 0.0
        macs = 0.0
        if nd.op_type == "Conv" and len(nd.input) > 1 and nd.input[1] in inits:
            w = inits[nd.input[1]]
            macs = out_el * float(np.prod(w[1:]))
        elif nd.op_type in ("Gemm", "MatMul") and ins:
            macs = out_el * ins[-1]
        params = sum(float(np.prod(inits[t])) for t in nd.input if t in inits)
        byts = 4 * (out_el + sum(float(np.prod(shapes.get(t, [0]))) for t in nd.input))
        flops = 2 * macs if macs else out_el
        x[i, base + 26:base + 31] = [lg(macs), lg(flops), lg(params), lg(byts), lg(out_el)]
        tc = flops / (PEAK_TC if macs else PEAK_SIMT) * 1e6
        tm = byts / BW * 1e6
        x[i, base + 31:base + 34] = [lg(tc), lg(tm), lg(max(tc, tm))]
        tot += [macs, flops, params, byts, out_el, max(tc, tm)]
        for t in nd.input:
            if t in producer:
                src.append(producer[t])
                dst.append(i)
        for t in nd.output:
            producer[t] = i
    st = np.zeros(STATIC_DIM, np.float32)
    st[:6] = [lg(v) for v in tot]
    st[6], st[7], st[8] = lg(n), lg(len(src)), math.log2(1 + batch)
    return x, np.array(src, np.int64), np.array(dst, np.int64), st, tot


class Sage(torch.nn.Module):
    def __init__(self, i, o):
        super().__init__()
        self.l = torch.nn.Linear(i, o)
        self.r = torch.nn.Linear(i, o, bias=False)

    def forward(self, h, src, dst, deg):
        agg = torch.zeros_like(h).index_add_(0, dst, h[src]) / deg
        return torch.relu(self.l(agg) + self.r(h))


class Dippm(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.sage = torch.nn.ModuleList([Sage(NODE_DIM, HIDDEN), Sage(HIDDEN, HIDDEN),
                                         Sage(HIDDEN, HIDDEN)])
        self.fc = torch.nn.Sequential(torch.nn.Linear(HIDDEN + STATIC_DIM, HIDDEN), torch.nn.ReLU(),
                                      torch.nn.Linear(HIDDEN, HIDDEN), torch.nn.ReLU(),
                                      torch.nn.Linear(HIDDEN, 3))

    def forward(self, x, src, dst, st):
        deg = torch.zeros(x.shape[0], 1).index_add_(0, dst, torch.ones(len(dst), 1)).clamp(min=1)
        h = x
        for layer in self.sage:
            h = layer(h, src, dst, deg)
        return self.fc(torch.cat([h.mean(0), st]))


PROFILES = [("1g.10gb", 10), ("1g.20gb", 20), ("3g.40gb", 40), ("7g.80gb", 80)]


def predict(net, path, batch, dims):
    x, src, dst, st, tot = featurize(path, batch, dims)
    with torch.inference_mode():
        y = net(torch.from_numpy(x), torch.from_numpy(src), torch.from_numpy(dst),
                torch.from_numpy(st)).numpy()
    lat = float(np.exp(y[0] * 0.01)) * (tot[5] / 1e3 + 1e-3)
    mem = float(np.exp(y[1] * 0.01)) * (tot[2] * 4 / 2**20 + 1)
    energy = float(np.exp(y[2] * 0.01)) * 400 * lat / 1e3
    mig = next((p for p, gb in PROFILES if gb * 1024 * 0.95 >= mem * 1.05 + 520), None)
    return {"model": os.path.basename(path), "latency_ms": lat, "memory_mib": mem,
            "energy_j": energy, "throughput_per_s": batch / lat * 1e3, "mig_profile": mig}


def main(argv):
    batch, dims, target = 1, {}, None
    i = 0
    while i < len(argv):
        if argv[i] == "--batch":
            batch = int(argv[i + 1]); i += 2
        elif argv[i] == "--dim":
            k, v = argv[i + 1].split("="); dims[k] = int(v); i += 2
        else:
            target = argv[i]; i += 1
    torch.manual_seed(0)
    net = Dippm().eval()
    files = ([os.path.join(target, f) for f in sorted(os.listdir(target)) if f.endswith(".onnx")]
             if os.path.isdir(target) else [target])
    for f in files:
        print(json.dumps(predict(net, f, batch, dims)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
