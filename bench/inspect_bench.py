#!/usr/bin/python3
"""inspect_bench.py -- `dlperf inspect --json` against the Python pair
onnx.load + onnx.shape_inference.infer_shapes(data_prop=True), side by side
on the same files in one run.

    /usr/bin/python3 bench/inspect_bench.py [--build build] [--n 20]
                                            [--no-vgg]

dlperf is timed as a whole process (spawn to exit, wall clock, median of N
runs); its peak RSS is read through /usr/bin/time -f %M. Python is timed in-process (load +
binding the inputs' symbolic dims + infer_shapes; interpreter start-up not
counted, which favours Python), median of N/4 runs (at least 3). CPU time
(user + sys: dlperf's from RUSAGE_CHILDREN, Python's process_time) is shown
too: it is steadier than wall time on a shared, loaded machine. "lib ms" is
libdlperf.so called in-process through ctypes (open + bind + analyze +
to_json), the same footing as the Python pair. Both bind
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
import resource
import statistics
import subprocess
import sys
import tempfile
import time

import onnx

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIX = os.path.join(ROOT, "tests", "fixtures", "models")


def child_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_dlperf(exe, path, args):
    c0 = child_cpu()
    t0 = time.perf_counter()
    p = subprocess.run([exe, "inspect", path, "--json"] + args,
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    t = time.perf_counter() - t0
    if p.returncode != 0:
        raise RuntimeError("dlperf failed on %s" % path)
    return t, child_cpu() - c0, p.stdout


def peak_rss(exe, path, args):
    """Peak RSS of dlperf in bytes, through /usr/bin/time (a small C parent:
    Python's own wait4 would report the Python parent's pages, which a
    vfork'ed child inherits in its high-water mark)."""
    p = subprocess.run(["/usr/bin/time", "-f", "%M", exe, "inspect", path,
                        "--json"] + args, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True)
    return int(p.stderr.strip().splitlines()[-1]) * 1024


class Lib:
    """libdlperf.so through ctypes: the library's own time in-process
    (open + bind + analyze + to_json), the same footing as the Python pair."""
    def __init__(self, so):
        import ctypes
        self.c = ctypes
        self.lib = ctypes.CDLL(so)
        self.libc = ctypes.CDLL(None)
        self.err = ctypes.create_string_buffer(1024)

    def run(self, path, token):
        c, lib = self.c, self.lib
        t0 = time.perf_counter()
        m = c.c_void_p()
        if lib.dlp_model_open(path.encode(), c.byref(m), self.err) != 0:
            raise RuntimeError("dlp_model_open failed on %s" % path)
        if token:
            lib.dlp_model_bind_dim(m, b"seq", c.c_int64(16), self.err)
        lib.dlp_model_set_batch(m, c.c_int64(1), self.err)
        if lib.dlp_model_analyze(m, self.err) != 0:
            raise RuntimeError("dlp_model_analyze failed on %s" % path)
        out = c.c_void_p()
        lib.dlp_model_to_json(m, c.byref(out), self.err)
        t = time.perf_counter() - t0
        self.libc.free(out)
        lib.dlp_model_free(m)
        return t


def python_pair(path, token):
    c0 = time.process_time()
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
    c = time.process_time() - c0
    known = {}
    for vi in list(m.graph.value_info) + list(m.graph.output):
        tt = vi.type.tensor_type
        known[vi.name] = tt.HasField("shape") and all(
            d.HasField("dim_value") for d in tt.shape.dim)
    outs = [o for n in m.graph.node for o in n.output if o]
    unshaped = sum(1 for o in outs if not known.get(o, False))
    return t, c, unshaped, len(outs), len(m.graph.node)


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
    so = os.path.join(a.build, "libdlperf.so")
    lib = Lib(so) if os.path.exists(so) else None
    hdr = "%-24s %6s %8s %10s %10s %7s %8s %8s %7s %8s %7s %8s %14s" % (
        "file", "nodes", "size", "dlperf ms", "python ms", "ratio",
        "cpu ms", "py cpu", "ratio", "lib ms", "ratio", "RSS MiB",
        "unshaped py/us")
    print(hdr)
    print("-" * len(hdr))
    worst = None
    for name, path, tok in items:
        args = ["--batch", "1"] + (["--dim", "seq=16"] if tok else [])
        ts, cs, out = [], [], b""
        for _ in range(a.n):
            t, c, out = run_dlperf(exe, path, args)
            ts.append(t)
            cs.append(c)
        rss = [peak_rss(exe, path, args) for _ in range(3)]
        pt, pc = [], []
        for _ in range(max(3, a.n // 4)):
            t, c, un_py, n_out, nodes = python_pair(path, tok)
            pt.append(t)
            pc.append(c)
        lt = [lib.run(path, tok) for _ in range(a.n)] if lib else [0]
        lm = statistics.median(lt)
        un_us, n_us = ours_unshaped(out)
        d, p = statistics.median(ts), statistics.median(pt)
        dc, pcm = statistics.median(cs), statistics.median(pc)
        ratio = p / d
        worst = ratio if worst is None else min(worst, ratio)
        print("%-24s %6d %7.1fM %10.2f %10.1f %6.1fx %8.2f %8.1f %6.1fx "
              "%8.2f %6.1fx %8.1f %6.1f%%/%.1f%%" % (
                  name, nodes, os.path.getsize(path) / 2**20, d * 1e3,
                  p * 1e3, ratio, dc * 1e3, pcm * 1e3, pcm / max(dc, 1e-9),
                  lm * 1e3, p / max(lm, 1e-9),
                  max(rss) / 2**20, 100.0 * un_py / max(1, n_out),
                  100.0 * un_us / max(1, n_us)))
        sys.stdout.flush()
    for f in os.listdir(tmp):
        os.remove(os.path.join(tmp, f))
    os.rmdir(tmp)
    print("slowest wall-time ratio (python / dlperf): %.1fx" % worst)
    print("load average at the end: %.2f %.2f %.2f" % os.getloadavg())


if __name__ == "__main__":
    main()
