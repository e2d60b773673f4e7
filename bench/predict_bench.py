"""predict_bench.py: how fast `dlperf predict` answers, side by side with the
Python pipeline doing the same steps (bench/predict_pipeline.py: onnx load,
shape inference, a Python featurizer, a PyTorch forward of a DIPPM-shaped
SAGE model).

  /usr/bin/python3 bench/predict_bench.py [--models DIR] [--reps N] [--work DIR]

Inputs, generated once under --work (default /tmp/dlp_predict_bench, never
committed; weights stripped as in PROTOCOL.md):
  resnet50.onnx      torchvision ResNet-50, legacy exporter, dynamic batch
  transformer.onnx   a GPT-style decoder with enough layers for ~2,000 nodes
  cnns/*.onnx        1,000 small CNNs built with the onnx package from random
                     specs (depth, widths, kernels, strides, residuals)
Measured (wall clock, subprocess start to exit, JSON printed):
  1. dlperf predict resnet50.onnx --json           goal < 10 ms
  2. dlperf predict transformer.onnx --json        goal < 30 ms
  3. dlperf predict cnns/ --json (1,000 graphs)    goal >= 1,000 per s
  and the Python pipeline on the same inputs: per process (import torch
  included, as a user runs it) and in-process (imports excluded); and
  dlperf's own Python binding (python/dlperf.py) in-process: one
  prediction of each graph, and the 1,000 CNNs through predict_many
  (a thread pool of one thread per CPU).
Predictors: the *.dlpm files of --models (default: the repository's
models/); with none there, a DIPPM trained on the test fixtures (printed).
"""
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DLPERF = os.path.join(ROOT, "build", "dlperf")


def strip(path):
    import onnx
    from onnx.external_data_helper import convert_model_to_external_data
    m = onnx.load(path)
    loc = os.path.basename(path) + ".data"
    convert_model_to_external_data(m, all_tensors_to_one_file=True, location=loc,
                                   size_threshold=1024)
    onnx.save(m, path)
    if os.path.exists(os.path.join(os.path.dirname(path), loc)):
        os.remove(os.path.join(os.path.dirname(path), loc))


def make_resnet50(path):
    import torch
    import torchvision
    m = torchvision.models.resnet50().eval()
    torch.onnx.export(m, torch.randn(2, 3, 224, 224), path, opset_version=17,
                      do_constant_folding=True, input_names=["input"],
                      output_names=["output"], dynamic_axes={"input": {0: "batch"}})
    strip(path)


def make_transformer(path, target_nodes=2000):
    import onnx
    import torch
    import torch.nn as nn

    class Block(nn.Module):
        def __init__(self, d, h):
            super().__init__()
            self.h, self.dh = h, d // h
            self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.qkv, self.o = nn.Linear(d, 3 * d), nn.Linear(d, d)
            self.up, self.down = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

        def forward(self, x):
            b, s, d = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(d, dim=-1)
            q = q.view(b, s, self.h, self.dh).transpose(1, 2)
            k = k.view(b, s, self.h, self.dh).transpose(1, 2)
            v = v.view(b, s, self.h, self.dh).transpose(1, 2)
            a = torch.softmax(q @ k.transpose(-1, -2) / self.dh ** 0.5, dim=-1) @ v
            x = x + self.o(a.transpose(1, 2).reshape(b, s, d))
            return x + self.down(torch.nn.functional.gelu(self.up(self.ln2(x))))

    class GPT(nn.Module):
        def __init__(self, layers, d=256, h=4, vocab=32000):
            super().__init__()
            self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(2048, d)
            self.blocks = nn.ModuleList(Block(d, h) for _ in range(layers))
            self.head = nn.Linear(d, vocab, bias=False)

        def forward(self, ids):
            pos = torch.arange(ids.shape[1], device=ids.device).unsqueeze(0)
            x = self.tok(ids) + self.pos(pos)
            for blk in self.blocks:
                x = blk(x)
            return self.head(x)

    def export(layers, p):
        torch.onnx.export(GPT(layers).eval(), torch.randint(0, 1000, (2, 16)), p,
                          opset_version=17, do_constant_folding=True,
                          input_names=["input_ids"], output_names=["output"],
                          dynamic_axes={"input_ids": {0: "batch", 1: "seq"}})
        return len(onnx.load(p, load_external_data=False).graph.node)

    n2, n4 = export(2, path), export(4, path)
    per = (n4 - n2) / 2
    layers = max(1, round((target_nodes - (n2 - 2 * per)) / per))
    export(layers, path)
    strip(path)
    return layers


def make_cnns(d, n=1000, seed=0):
    import numpy as np
    import onnx
    from onnx import TensorProto, helper
    rng = np.random.default_rng(seed)
    os.makedirs(d, exist_ok=True)
    for k in range(n):
        inits, nodes = [], []
        c, hw = 3, int(rng.choice([32, 64, 96, 128, 224]))
        cur, skip = "input", None

        def w(name, dims):
            inits.append(helper.make_tensor(name, TensorProto.FLOAT, dims,
                                            np.zeros(int(np.prod(dims)), np.float32)))
        depth = int(rng.integers(3, 16))
        for i in range(depth):
            co = int(rng.choice([8, 16, 24, 32, 48, 64, 96, 128]))
            ks = int(rng.choice([1, 3, 5, 7]))
            s = int(rng.choice([1, 1, 1, 2])) if hw > 8 else 1
            w(f"w{i}", [co, c, ks, ks]); w(f"b{i}", [co])
            nodes.append(helper.make_node("Conv", [cur, f"w{i}", f"b{i}"], [f"c{i}"],
                                          kernel_shape=[ks, ks], strides=[s, s],
                                          pads=[ks // 2] * 4, name=f"/conv{i}/Conv"))
            nodes.append(helper.make_node("Relu", [f"c{i}"], [f"r{i}"], name=f"/relu{i}/Relu"))
            cur = f"r{i}"
            if skip and skip[1] == co and s == 1:
                nodes.append(helper.make_node("Add", [cur, skip[0]], [f"a{i}"], name=f"/add{i}/Add"))
                cur = f"a{i}"
            hw = (hw + s - 1) // s
            c = co
            skip = (cur, co) if s == 1 else None
        nodes.append(helper.make_node("GlobalAveragePool", [cur], ["gap"]))
        nodes.append(helper.make_node("Flatten", ["gap"], ["flat"]))
        w("fcw", [10, c]); w("fcb", [10])
        nodes.append(helper.make_node("Gemm", ["flat", "fcw", "fcb"], ["output"], transB=1))
        g = helper.make_graph(nodes, f"cnn{k}",
                              [helper.make_tensor_value_info("input", TensorProto.FLOAT,
                                                             ["batch", 3, hw * 0 + int(rng.choice([32, 64, 128, 224])), 0])],
                              [helper.make_tensor_value_info("output", TensorProto.FLOAT, ["batch", 10])],
                              inits)
        # input resolution: square, recorded in the input type
        res = g.input[0].type.tensor_type.shape.dim
        res[3].dim_value = res[2].dim_value
        path = os.path.join(d, f"cnn{k:04d}.onnx")
        onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)
        strip(path)


CPU = {}   # id(list of wall times) -> list of child CPU times (user + sys)
FAULTS = {}  # id(list of wall times) -> list of the child's minor page faults


def timed(cmd, reps, env=None):
    """Wall seconds per run (process start to exit, output captured); the
    child's CPU seconds (user + sys, from getrusage) go to CPU[id(ts)]: on a
    loaded machine wall time includes waiting for a core, CPU time does
    not."""
    import resource
    ts, cs, fs = [], [], []
    out = ""
    for _ in range(reps):
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        p = subprocess.run(cmd, capture_output=True, text=True, env=env)
        ts.append(time.perf_counter() - t0)
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cs.append(r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime)
        fs.append(r1.ru_minflt - r0.ru_minflt)
        if p.returncode != 0:
            raise RuntimeError("%s failed: %s" % (" ".join(cmd), p.stderr[-500:]))
        out = p.stdout
    CPU[id(ts)] = cs
    FAULTS[id(ts)] = fs
    return ts, out


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def main(argv):
    work, models, reps = "/tmp/dlp_predict_bench", None, 30
    i = 0
    while i < len(argv):
        if argv[i] == "--work": work = argv[i + 1]; i += 2
        elif argv[i] == "--models": models = argv[i + 1]; i += 2
        elif argv[i] == "--reps": reps = int(argv[i + 1]); i += 2
        else:
            print(__doc__); return 2
    os.makedirs(work, exist_ok=True)
    r50 = os.path.join(work, "resnet50.onnx")
    tfm = os.path.join(work, "transformer.onnx")
    cnns = os.path.join(work, "cnns")
    if not os.path.exists(r50):
        print("exporting ResNet-50 ..."); make_resnet50(r50)
    if not os.path.exists(tfm):
        print("exporting the transformer ..."); make_transformer(tfm)
    if not os.path.isdir(cnns) or len(os.listdir(cnns)) < 1000:
        print("generating 1,000 CNNs ..."); make_cnns(cnns)
    import onnx
    tnodes = len(onnx.load(tfm, load_external_data=False).graph.node)
    rnodes = len(onnx.load(r50, load_external_data=False).graph.node)

    models = models or os.path.join(ROOT, "models")
    note = "models: %s" % models
    have = os.path.isdir(models) and any(f.endswith(".dlpm") and "inference" in f
                                         for f in os.listdir(models))
    if not have:
        # nothing shipped: a DIPPM trained on the test fixtures (numbers
        # meaningless, cost representative: same model size and forward)
        models = os.path.join(work, "models_fixture")
        os.makedirs(models, exist_ok=True)
        subprocess.run([DLPERF, "train", os.path.join(ROOT, "tests", "fixtures", "dataset", "valid"),
                        "--kind", "dippm", "-o", os.path.join(models, "dippm.dlpm"),
                        "--epochs", "3", "--quiet"], check=True, capture_output=True)
        note = ("models: no inference predictor in models/ -> a DIPPM trained on the "
                "test fixtures (%s)" % models)
    kinds = sorted({f for f in os.listdir(models) if f.endswith(".dlpm")})

    print("machine: %s, %d CPUs online; %s" % (cpu_name(), os.cpu_count(), note))
    print("predictor files: %s" % ", ".join(kinds))
    base = [DLPERF, "predict", "--device", "h100", "--json", "--models", models]
    res = {}
    ts, out = timed(base[:2] + [r50] + base[2:] + ["--batch", "8"], reps)
    res["c_r50"] = ts
    print("predictors used for ResNet-50: %s" % json.loads(out)["predictors"])
    ts, _ = timed(base[:2] + [tfm] + base[2:] + ["--batch", "8", "--dim", "seq=128"], reps)
    res["c_tfm"] = ts
    ts, out = timed(base[:2] + [cnns] + base[2:] + ["--batch", "8"], 3)
    ncnn = len(out.splitlines())
    res["c_dir"] = ts

    py = ["/usr/bin/python3", os.path.join(ROOT, "bench", "predict_pipeline.py")]
    preps = max(3, reps // 10)
    res["py_r50"], _ = timed(py + [r50, "--batch", "8"], preps)
    res["py_tfm"], _ = timed(py + [tfm, "--batch", "8", "--dim", "seq=128"], preps)
    # in-process (imports and model construction excluded)
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    import predict_pipeline as pp
    import torch
    torch.manual_seed(0)
    net = pp.Dippm().eval()
    pp.predict(net, r50, 8, {})
    t0 = time.perf_counter()
    for _ in range(5):
        pp.predict(net, r50, 8, {})
    res["py_r50_inproc"] = (time.perf_counter() - t0) / 5
    t0 = time.perf_counter()
    for _ in range(3):
        pp.predict(net, tfm, 8, {"seq": 128})
    res["py_tfm_inproc"] = (time.perf_counter() - t0) / 3
    files = sorted(os.listdir(cnns))[:200]
    t0 = time.perf_counter()
    for f in files:
        pp.predict(net, os.path.join(cnns, f), 8, {})
    res["py_dir_rate"] = len(files) / (time.perf_counter() - t0)

    # dlperf's own Python binding (python/dlperf.py), in-process: the
    # predictor files loaded once, each prediction opens its graph
    sys.path.insert(0, os.path.join(ROOT, "python"))
    import dlperf as dl
    pset = dl.Predictor(models)
    pset.predict(r50, device="h100", batch=8)
    t0 = time.perf_counter()
    for _ in range(20):
        pset.predict(r50, device="h100", batch=8)
    res["b_r50"] = (time.perf_counter() - t0) / 20
    t0 = time.perf_counter()
    for _ in range(5):
        pset.predict(tfm, device="h100", batch=8, dims={"seq": 128})
    res["b_tfm"] = (time.perf_counter() - t0) / 5
    t0 = time.perf_counter()
    nb = len(pset.predict_many(cnns, device="h100", batch=8))
    res["b_dir_rate"] = nb / (time.perf_counter() - t0)

    med = statistics.median
    c_rate = ncnn / min(res["c_dir"])
    rows = [
        ("ResNet-50 (%d nodes), process start to JSON" % rnodes, med(res["c_r50"]) * 1e3,
         med(res["py_r50"]) * 1e3, "ms", "< 10 ms"),
        ("transformer (%d nodes), process start to JSON" % tnodes, med(res["c_tfm"]) * 1e3,
         med(res["py_tfm"]) * 1e3, "ms", "< 30 ms"),
        ("ResNet-50, in-process Python (imports excluded)", med(res["c_r50"]) * 1e3,
         res["py_r50_inproc"] * 1e3, "ms", ""),
        ("transformer, in-process Python (imports excluded)", med(res["c_tfm"]) * 1e3,
         res["py_tfm_inproc"] * 1e3, "ms", ""),
    ]
    print("\n%-52s %12s %12s %9s  %s" % ("case", "dlperf", "python", "ratio", "goal"))
    for name, c, p, unit, goal in rows:
        print("%-52s %9.2f %s %9.1f %s %8.1fx  %s" % (name, c, unit, p, unit, p / c, goal))
    print("%-52s %9.0f /s %9.1f /s %8.1fx  >= 1000/s" %
          ("directory of %d CNNs (dlperf: 1 process, %d threads)" % (ncnn, os.cpu_count()),
           c_rate, res["py_dir_rate"], c_rate / res["py_dir_rate"]))
    print("\ndlperf's Python binding (python/dlperf.py), in-process, against the "
          "Python pipeline in-process:")
    for name, b, p in (("ResNet-50", res["b_r50"], res["py_r50_inproc"]),
                       ("transformer", res["b_tfm"], res["py_tfm_inproc"])):
        print("%-52s %9.2f ms %9.1f ms %8.1fx" % ("  " + name + ", one prediction", b * 1e3,
                                                  p * 1e3, p / b))
    print("%-52s %9.0f /s %9.1f /s %8.1fx" %
          ("  directory of %d CNNs (%d threads, one Predictor)" % (nb, os.cpu_count()),
           res["b_dir_rate"], res["py_dir_rate"], res["b_dir_rate"] / res["py_dir_rate"]))
    print("\ndlperf min wall: ResNet-50 %.2f ms, transformer %.2f ms, directory %.3f s"
          % (min(res["c_r50"]) * 1e3, min(res["c_tfm"]) * 1e3, min(res["c_dir"])))
    print("dlperf median CPU (user+sys): ResNet-50 %.2f ms, transformer %.2f ms, "
          "directory %.3f s (%.0f graphs per CPU-second); python per process: "
          "ResNet-50 %.0f ms, transformer %.0f ms"
          % (med(CPU[id(res["c_r50"])]) * 1e3, med(CPU[id(res["c_tfm"])]) * 1e3,
             med(CPU[id(res["c_dir"])]), ncnn / med(CPU[id(res["c_dir"])]),
             med(CPU[id(res["py_r50"])]) * 1e3, med(CPU[id(res["py_tfm"])]) * 1e3))
    # each 4 KB page fault costs ~10-20 us on the project's VM: a run
    # whose heap missed its huge pages shows here (src/cli/cli_heap.c)
    print("dlperf median page faults per process: ResNet-50 %d (max %d), "
          "transformer %d (max %d)"
          % (med(FAULTS[id(res["c_r50"])]), max(FAULTS[id(res["c_r50"])]),
             med(FAULTS[id(res["c_tfm"])]), max(FAULTS[id(res["c_tfm"])])))
    print("load average while measuring: %.1f %.1f %.1f" % os.getloadavg())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
