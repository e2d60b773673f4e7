#!/usr/bin/python3
"""bench_reader.py — dlperf's ONNX reader against the onnx package.

Exports torchvision ResNet-50 with its weights embedded (about 100 MB) to a
temp directory (never committed), then times, side by side on the same warm
file, opening it with dlperf (dlp_model_open through ctypes on
build/libdlperf.so: mmap + graph, weights skipped) and with onnx.load (the
onnx package's protobuf parse, weights included; load_external_data=False
makes no difference for an embedded-weights file). Also times a cold open
(the file's pages evicted with posix_fadvise) for dlperf. Prints medians
and the ratio. Timings are informative, never pass/fail.

    /usr/bin/python3 bench/bench_reader.py [--build build] [--reps 20]
"""
import argparse
import ctypes as C
import os
import statistics
import sys
import tempfile
import time


class Err(C.Structure):
    _fields_ = [("code", C.c_int), ("msg", C.c_char * 512)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.environ.get("DLP_BUILD", "build"))
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--model", help="an existing .onnx instead of ResNet-50")
    a = ap.parse_args()
    lib = C.CDLL(os.path.join(a.build, "libdlperf.so"))
    lib.dlp_model_open.argtypes = [C.c_char_p, C.POINTER(C.c_void_p),
                                   C.POINTER(Err)]
    lib.dlp_model_free.argtypes = [C.c_void_p]

    tmp = None
    path = a.model
    if not path:
        import torch
        import torchvision
        tmp = tempfile.TemporaryDirectory()
        path = os.path.join(tmp.name, "resnet50.onnx")
        m = torchvision.models.resnet50(weights=None).eval()
        torch.onnx.export(m, torch.randn(1, 3, 224, 224), path,
                          opset_version=17, input_names=["x"],
                          output_names=["output"],
                          dynamic_axes={"x": {0: "batch"}})
    size = os.path.getsize(path)

    def dlp_open():
        h = C.c_void_p()
        e = Err()
        t0 = time.perf_counter()
        st = lib.dlp_model_open(path.encode(), C.byref(h), C.byref(e))
        t1 = time.perf_counter()
        if st != 0:
            sys.exit("dlperf failed: " + e.msg.decode())
        lib.dlp_model_free(h)
        return t1 - t0

    def evict():
        fd = os.open(path, os.O_RDONLY)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        os.close(fd)

    import onnx

    def onnx_open():
        t0 = time.perf_counter()
        onnx.load(path, load_external_data=False)
        return time.perf_counter() - t0

    cold = []
    for _ in range(5):
        evict()
        cold.append(dlp_open())
    dlp_open()
    onnx_open()  # warm the page cache
    ours = [dlp_open() for _ in range(a.reps)]
    theirs = [onnx_open() for _ in range(max(3, a.reps // 4))]
    mo, mt, mc = (statistics.median(x) for x in (ours, theirs, cold))
    print("model: %s (%.1f MB)" % (os.path.basename(path), size / 1e6))
    print("dlperf open (warm): %.3f ms median of %d" % (mo * 1e3, len(ours)))
    print("dlperf open (cold): %.3f ms median of %d" % (mc * 1e3, len(cold)))
    print("onnx.load   (warm): %.3f ms median of %d" % (mt * 1e3, len(theirs)))
    print("ratio onnx.load / dlperf (warm): %.0fx" % (mt / mo))
    return 0


if __name__ == "__main__":
    sys.exit(main())
