#!/usr/bin/python3
"""test_shape_models.py — dlperf's shape inference on whole exported models
against onnx's own shape inference.

For every model of tests/fixtures/models/ and tests/fixtures/ops/tiny_hf:
  * `dlperf inspect --json` with batch 3 (and seq 7 for token models, both
    different from the export-time 2 / 16) must leave no tensor unshaped;
  * onnx.shape_inference.infer_shapes(data_prop=True), run on the same file
    with its inputs fixed to the same sizes, is the oracle: every tensor it
    shapes must have the same shape in dlperf's output;
  * it also prints how many tensors each tool shapes, the coverage claim of
    the shape-inference issue (onnx leaves part of transformer graphs
    unshaped, dlperf must shape all).
Also checks that without any binding, dlperf still gives every node output a
rank, with dims that are numbers or the symbols batch/seq.

Env: DLP_BUILD (build dir holding the dlperf binary, default build).
Prints "N passed, N failed"; exits non-zero on failure.
"""
import glob
import json
import os
import subprocess
import sys

import onnx

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("DLP_BUILD", "build")
DLPERF = os.path.join(ROOT, BUILD, "dlperf")
BATCH, SEQ = 3, 7

passed = failed = 0


def check(name, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print("ok", name)
    else:
        failed += 1
        print("not ok", name, detail)


def inspect(path, bind):
    args = [DLPERF, "inspect", path, "--json"]
    if bind is not None:
        args += ["--batch", str(BATCH)]
        for d in bind:
            args += ["--dim", "%s=%d" % (d, bind[d])]
    r = subprocess.run(args, capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        raise RuntimeError("%s: %s" % (" ".join(args), r.stderr[-500:]))
    return json.loads(r.stdout)


def onnx_shapes(path, token):
    m = onnx.load(path, load_external_data=False)
    for i in m.graph.input:
        dims = i.type.tensor_type.shape.dim
        for k, v in enumerate((BATCH, SEQ) if token else (BATCH,)):
            if k < len(dims):
                dims[k].Clear()
                dims[k].dim_value = v
    del m.graph.output[:]
    n_out = sum(1 for n in m.graph.node for o in n.output if o)
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
    return out, n_out


def main():
    if not os.path.exists(DLPERF):
        print("no %s; build first" % DLPERF)
        print("0 passed, 1 failed")
        return 1
    models = sorted(glob.glob(os.path.join(ROOT, "tests/fixtures/models/*.onnx")))
    models.append(os.path.join(ROOT, "tests/fixtures/ops/tiny_hf.onnx"))
    for path in models:
        name = os.path.basename(path)[:-5]
        m = onnx.load(path, load_external_data=False)
        token = m.graph.input[0].type.tensor_type.elem_type == onnx.TensorProto.INT64
        try:
            j = inspect(path, {"seq": SEQ} if token else {})
        except RuntimeError as e:
            check(name + ":inspect", False, str(e))
            continue
        ours = {o["name"]: o["shape"] for n in j["nodes"] for o in n["outputs"]}
        n_ours = sum(1 for s in ours.values()
                     if s is not None and all(isinstance(d, int) and d >= 0
                                              for d in s))
        want, n_out = onnx_shapes(path, token)
        bad = [(k, v, ours.get(k)) for k, v in want.items()
               if k in ours and ours[k] != v]
        check(name + ":unshaped", j["summary"]["unshaped_tensors"] == 0,
              "%d unshaped" % j["summary"]["unshaped_tensors"])
        check(name + ":agrees_with_onnx", not bad and len(want) > 0,
              "%d differ, e.g. %s" % (len(bad), bad[:3]))
        print("  %-14s node outputs %4d: dlperf shapes %4d (%.0f%%), onnx "
              "infer_shapes %4d (%.0f%%)" % (
                  name, n_out, n_ours, 100.0 * n_ours / max(n_out, 1),
                  len(want), 100.0 * len(want) / max(n_out, 1)))
        if token:
            j = inspect(path, None)
            dims_ok = True
            for n in j["nodes"]:
                for o in n["outputs"]:
                    s = o["shape"]
                    if s is None or not all(
                            (isinstance(d, int) and d >= 0) or
                            d in ("batch", "seq") for d in s):
                        dims_ok = False
            check(name + ":symbolic_unbound", dims_ok)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
