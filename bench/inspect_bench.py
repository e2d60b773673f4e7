#!/usr/bin/python3
"""inspect_bench.py -- `dlperf inspect --json` against the Python pair
onnx.load + onnx.shape_inference.infer_shapes(data_prop=True), side by side
on the same files in one run.

    /usr/bin/python3 bench/inspect_bench.py [--build build] [--n 20]
                                            [--no-vgg]

dlperf is timed as a whole process (fork/exec to exit, wall clock, median of
N runs, peak RSS of the child from wait4). Python is timed in-process (load +
binding the inputs' symbolic dims + infer_shapes; interpreter start-up not
counted, which favours Python), median of N/4 runs (at least 3). Both bind
batch 1 (and seq 16 for token inputs). "unshaped" is the share of node
output tensors without a fully known shape after each tool.

Files: the stripped fixtures (tests/fixtures/models: ResNet-50, ViT-B/16,
Swin-T, the three transformers) and VGG-16 exported with its ~528 MB of
weights inside the file (random init, written to /tmp, deleted after).
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

import onnx

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIX = os.path.join(ROOT, "tests", "fixtures", "models")


def run_dlperf(exe, path, args):
    t0 = time.perf_counter()
    p = subprocess.Popen([exe, "inspect", path, "--json"] + args,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    out = p.stdout.read()
    _, status, ru = os.wait4(p.pid, 0)
    t = time.perf_counter() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        raise RuntimeError("dlperf failed on %s" % path)
    return t, ru.ru_maxrss * 1024, out


def python_pair(path, token):
    t0 = time.perf_counter()
    m = onnx.load(path, load_external_data=False)
    for i in m.graph.input:
        d = i.type.tensor_type.shape.dim
        if len(d) > 0 and not d[0].HasField("dim_value"):
            d[0].dim_value = 1
        if token and len(d) > 1:
            d[1].dim_value = 16
    m = onnx.shape_inference.infer_shapes(m, data_prop=True)
    t = time.perf_counter() - t0
    known = {}
    for vi in list(m.graph.value_info) + list(m.graph.output):
        tt = vi.type.tensor_type
        known[vi.name] = tt.HasField("shape") and all(
            d.HasField("dim_value") for d in tt.shape.dim)
    outs = [o for n in m.graph.node for o in n.output if o]
    unshaped = sum(1 for o in outs if not known.get(o, False))
    return t, unshaped, len(outs), len(m.graph.node)


def ours_unshaped(js):
    j = json.loads(js)
    outs = [o for n in j["nodes"] if "parent" not in n for o in n["outputs"]]
    bad = sum(1 for o in outs if o["shape"] is None or
              any(not isinstance(d, int) for d in o["shape"]))
    return bad, len(outs)


def make_vgg(tmp):
    import torch
    import torchvision
    torch.manual_seed(0)
    m = torchvision.models.vgg16(weights=None).eval()
    path = os.path.join(tmp, "vgg16_full.onnx")
    with torch.no_grad():
        torch.onnx.export(m, (torch.randn(2, 3, 224, 224),), path,
                          opset_version=17, do_constant_folding=True,
                          input_names=["input"], output_names=["output"],
                          dynamic_axes={"input": {0: "batch"},
                                        "output": {0: "batch"}})
    return path


def cpu_name():
    try:
        for line in subprocess.run(["lscpu"], capture_output=True,
                                   text=True).stdout.splitlines():
            if line.startswith("Model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--n", type=int, default=20)
    ap.add_argument("--no-vgg", action="store_true")
    a = ap.parse_args()
    exe = os.path.join(a.build, "dlperf")
    files = [("resnet50", False), ("vit_b_16", False), ("swin_t", False),
             ("bert_tiny", True), ("gpt_tiny", True), ("llama_tiny", True)]
    items = [(n, os.path.join(FIX, n + ".onnx"), tok) for n, tok in files
             if os.path.exists(os.path.join(FIX, n + ".onnx"))]
    tmp = tempfile.mkdtemp(prefix="dlp_bench_")
    if not a.no_vgg:
        items.append(("vgg16 (weights in file)", make_vgg(tmp), False))
    print("machine: %s, %d cores; onnx %s; python %s" % (
        cpu_name(), os.cpu_count(), onnx.__version__,
        platform.python_version()))
    hdr = "%-24s %6s %9s %10s %10s %8s %9s %13s" % (
        "file", "nodes", "size", "dlperf ms", "python ms", "ratio",
        "RSS MiB", "unshaped py/us")
    print(hdr)
    print("-" * len(hdr))
    worst = None
    for name, path, tok in items:
        args = ["--batch", "1"] + (["--dim", "seq=16"] if tok else [])
        ts, rss, out = [], [], b""
        for _ in range(a.n):
            t, r, out = run_dlperf(exe, path, args)
            ts.append(t)
            rss.append(r)
        pt = []
        for _ in range(max(3, a.n // 4)):
            t, un_py, n_out, nodes = python_pair(path, tok)
            pt.append(t)
        un_us, n_us = ours_unshaped(out)
        d, p = statistics.median(ts), statistics.median(pt)
        ratio = p / d
        worst = ratio if worst is None else min(worst, ratio)
        print("%-24s %6d %8.1fM %10.2f %10.1f %7.1fx %9.1f %6.1f%%/%.1f%%" % (
            name, nodes, os.path.getsize(path) / 2**20, d * 1e3, p * 1e3,
            ratio, max(rss) / 2**20, 100.0 * un_py / max(1, n_out),
            100.0 * un_us / max(1, n_us)))
        sys.stdout.flush()
    for f in os.listdir(tmp):
        os.remove(os.path.join(tmp, f))
    os.rmdir(tmp)
    print("slowest ratio (python / dlperf): %.1fx" % worst)


if __name__ == "__main__":
    main()
