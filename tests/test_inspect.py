#!/usr/bin/python3
"""test_inspect.py -- `dlperf inspect` on whole models against independent
oracles (run by scripts/run_tests.sh with DLP_BUILD=build).

Oracles (written by tests/gen_model_fixtures.py into
tests/fixtures/models/oracle.json):
  * torchvision's published op count ("_ops" / GFLOPS column): MACs within 5%
  * a PyTorch dispatch-mode count of conv/matmul multiply-adds: within 1%
  * the onnx package: float initializer elements (params), initializer
    bytes, nodes, producer->consumer edges, tensors -- exact
  * onnx.shape_inference on a static-shape export: every tensor's shape
  * bad command lines: non-zero exit and a one-line message

DLP_FULL_TV=1 also exports every torchvision classification model on the fly
(slow: about an hour) and checks it the same way; DLP_FULL_TV_DIR=DIR reuses
an earlier `gen_model_fixtures.py --set all --out DIR`.
"""
import json
import os
import subprocess
import sys
import tempfile

import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BUILD = os.environ.get("DLP_BUILD", "build")
EXE = os.path.join(ROOT, BUILD, "dlperf") if not os.path.isabs(BUILD) \
    else os.path.join(BUILD, "dlperf")
FIX = os.path.join(HERE, "fixtures", "models")

passed = failed = 0
report = []


def check(name, cond, msg=""):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAIL %s %s" % (name, msg))


def inspect(path, *args):
    p = subprocess.run([EXE, "inspect", path] + list(args),
                       capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def onnx_counts(path):
    """nodes, edges, tensors, float params, initializer bytes (onnx pkg)."""
    m = onnx.load(path, load_external_data=False)
    g = m.graph
    prod = {o for n in g.node for o in n.output if o}
    edges = sum(len({i for i in n.input if i in prod}) for n in g.node)
    names = set()
    for n in g.node:
        names.update(x for x in list(n.input) + list(n.output) if x)
    names.update(t.name for t in g.initializer)
    names.update(i.name for i in g.input)
    names.update(o.name for o in g.output)
    size = {1: 4, 2: 1, 3: 1, 5: 2, 6: 4, 7: 8, 9: 1, 10: 2, 11: 8, 12: 4,
            13: 8, 16: 2}
    params = wbytes = 0
    for t in g.initializer:
        k = 1
        for d in t.dims:
            k *= d
        if t.data_type in (1, 10, 11, 16):
            params += k
        wbytes += k * size.get(t.data_type, 0)
    return len(g.node), edges, len(names), params, wbytes


def check_model(name, ent, path):
    args = ["--batch", "1", "--json"]
    for k, v in ent.get("dims", {}).items():
        args += ["--dim", "%s=%d" % (k, v)]
    rc, out, err = inspect(path, *args)
    check(name + ":exit", rc == 0, err.strip()[:300])
    if rc != 0:
        report.append((name, None, ent.get("published_gmacs"), None, None,
                       None))
        return
    j = json.loads(out)
    s = j["summary"]
    macs = s["macs"]
    pub = ent.get("published_gmacs")
    if pub:
        e = macs / (pub * 1e9) - 1
        report.append((name, macs / 1e9, pub, e, s["params"],
                       ent["torch_params"]))
        check(name + ":published_macs", abs(e) <= 0.05,
              "ours %.4f G vs published %.3f G (%+.2f%%)" % (macs / 1e9, pub,
                                                             100 * e))
    else:
        report.append((name, macs / 1e9, None, None, s["params"],
                       ent["torch_params"]))
    tm = ent["torch_macs"]
    check(name + ":torch_macs", abs(macs - tm) <= 0.01 * tm,
          "ours %.0f vs torch %.0f" % (macs, tm))
    check(name + ":unshaped", s["unshaped_tensors"] == 0,
          "%d unshaped" % s["unshaped_tensors"])
    nodes, edges, tensors, params, wbytes = onnx_counts(path)
    check(name + ":params", s["params"] == params == ent["onnx_float_init"],
          "ours %d, onnx %d" % (s["params"], params))
    check(name + ":weight_bytes", s["weight_bytes"] == wbytes,
          "ours %d, onnx %d" % (s["weight_bytes"], wbytes))
    check(name + ":nodes", s["nodes"] == nodes == len(j["nodes"]),
          "ours %d, onnx %d" % (s["nodes"], nodes))
    check(name + ":edges", s["edges"] == edges,
          "ours %d, onnx %d" % (s["edges"], edges))
    check(name + ":tensors", s["tensors"] == tensors,
          "ours %d, onnx %d" % (s["tensors"], tensors))
    check(name + ":node_sums",
          abs(sum(n["macs"] for n in j["nodes"]) - macs) <= 1e-6 * max(1, macs)
          and abs(sum(n["flops"] for n in j["nodes"]) - s["flops"])
          <= 1e-6 * max(1, s["flops"]))
    check(name + ":flops>=2macs", s["flops"] >= 2 * macs)
    check(name + ":peak", 0 < s["peak_activation_bytes"]
          <= s["activation_bytes"])
    if ent.get("shape_oracle"):
        dims = dict(ent.get("dims", {}), batch=1)
        total, peak = liveness_oracle(j, path, dims)
        check(name + ":activation_bytes", s["activation_bytes"] == total,
              "ours %d, oracle %d" % (s["activation_bytes"], total))
        check(name + ":peak_bytes", s["peak_activation_bytes"] == peak,
              "ours %d, oracle %d" % (s["peak_activation_bytes"], peak))
        want = json.load(open(os.path.join(FIX, ent["shape_oracle"])))
        ours = {o["name"]: o["shape"] for n in j["nodes"]
                for o in n["outputs"]}
        common = [k for k in want if k in ours]
        bad = [(k, ours[k], want[k]) for k in common if ours[k] != want[k]]
        check(name + ":shape_overlap", len(common) >= 0.5 * len(want),
              "%d of %d oracle tensors found" % (len(common), len(want)))
        check(name + ":shapes", not bad, "%d differ, e.g. %s" % (
            len(bad), bad[:3]))


DT_SIZE = {"float32": 4, "float16": 2, "bfloat16": 2, "float64": 8,
           "int64": 8, "int32": 4, "int8": 1, "uint8": 1, "bool": 1}


def liveness_oracle(j, path, dims):
    """activation_bytes and peak recomputed from the JSON node list (our
    topological order and shapes) and the onnx graph's inputs/outputs."""
    m = onnx.load(path, load_external_data=False)
    bytes_of = {}
    for n in j["nodes"]:
        if n["op"] == "Constant":
            continue
        for o in n["outputs"]:
            k = DT_SIZE[o["dtype"]]
            for d in o["shape"]:
                k *= d
            bytes_of[o["name"]] = k
    live = 0
    for i in m.graph.input:
        k = 4 if i.type.tensor_type.elem_type == 1 else 8
        for d in i.type.tensor_type.shape.dim:
            k *= d.dim_value if d.HasField("dim_value") else \
                dims.get(d.dim_param, 1)
        bytes_of[i.name] = k
        live += k
    total = sum(bytes_of.values())
    last = {}
    for t, n in enumerate(j["nodes"]):
        for x in n["inputs"]:
            last[x] = t
    for o in m.graph.output:
        last[o.name] = len(j["nodes"])
    peak = live
    for t, n in enumerate(j["nodes"]):
        outs = [o["name"] for o in n["outputs"] if o["name"] in bytes_of]
        live += sum(bytes_of[o] for o in outs)
        peak = max(peak, live)
        for x in set(n["inputs"]):
            if x in bytes_of and last.get(x) == t:
                live -= bytes_of[x]
        for o in outs:
            if o not in last:
                live -= bytes_of[o]
    return total, peak


def check_batch_scaling():
    path = os.path.join(FIX, "resnet50.onnx")
    if not os.path.exists(path):
        return
    r1 = json.loads(inspect(path, "--batch", "1", "--json")[1])["summary"]
    r4 = json.loads(inspect(path, "--batch", "4", "--json")[1])["summary"]
    check("batch_scaling", abs(r4["macs"] - 4 * r1["macs"]) < 1e-6 * r4["macs"]
          and r4["params"] == r1["params"])


def check_text_output():
    path = os.path.join(FIX, "resnet18.onnx")
    rc, out, err = inspect(path, "--batch", "1", "--top", "3")
    check("text:exit", rc == 0, err)
    check("text:content", "MACs" in out and "Conv" in out and
          "peak activations" in out, out[:500])
    rc, out, _ = inspect("--help")
    check("help", rc == 0 and "--dim" in out)


def node_tables(out):
    """The --device tables: the sum line's two figures, the op-type rows
    {op: (count, us, roofline us)} and the node rows [(op, us, roof)]."""
    lines = out.splitlines()
    at = next(i for i, l in enumerate(lines) if " node times on " in l)
    sums = lines[at + 1].split()
    total, roof = float(sums[1]), float(sums[5])
    ops, nodes, part = {}, [], 0
    for l in lines[at + 2:]:
        f = l.split()
        if not f:
            continue
        if f[0] in ("op", "node"):
            part += 1
            continue
        if part == 1:
            ops[f[0]] = (int(f[1]), float(f[2]), float(f[4]))
        elif part == 2:
            nodes.append((f[-3], float(f[-2]), float(f[-1])))
    return total, roof, ops, nodes


def check_node_times():
    """--device: every node's time as the predictors read it. Oracles: the
    onnx package's op-type counts; the tables' own sums; the forests' time
    at or above the roofline's for every convolution (no kernel beats
    its roofline); and more work takes longer (batch 8 over batch 1)."""
    path = os.path.join(FIX, "resnet18.onnx")
    m = onnx.load(path, load_external_data=False)
    want = {}
    for n in m.graph.node:
        want[n.op_type] = want.get(n.op_type, 0) + 1
    got = {}
    for b in ("1", "8"):
        rc, out, err = inspect(path, "--batch", b, "--device", "h100",
                               "--precision", "fp16", "--top", "0")
        check("times:exit:b" + b, rc == 0, err)
        if rc:
            return
        got[b] = node_tables(out)
    total, roof, ops, nodes = got["8"]
    check("times:op_counts", {k: v[0] for k, v in ops.items()} == want,
          "%r vs %r" % (ops, want))
    check("times:all_nodes", len(nodes) == len(m.graph.node),
          "%d rows, %d nodes" % (len(nodes), len(m.graph.node)))
    check("times:sum", abs(sum(v[1] for v in ops.values()) - total) <=
          0.05 * len(ops) + 0.1 and abs(sum(x[1] for x in nodes) - total) <=
          0.05 * len(nodes) + 0.1, "%r" % total)
    conv = [x for x in nodes if x[0] == "Conv"]
    check("times:conv_over_roofline", conv and
          all(x[1] >= x[2] * 0.999 and x[1] > 0 for x in conv), "%r" % conv[:5])
    check("times:batch", total > got["1"][0] and roof > got["1"][1],
          "%r vs %r" % (total, got["1"][0]))
    rc, out, _ = inspect(path, "--batch", "8", "--device", "h100",
                         "--runtime", "eager", "--top", "3")
    check("times:eager", rc == 0 and "eager runtime" in out and
          len(node_tables(out)[3]) == 3, out[-400:])
    # --mode training: the training file's forests (a third of each node's
    # forward + backward); the same graph and op types, every convolution
    # still at or above its forward roofline, and the roofline unchanged
    rc, out, err = inspect(path, "--batch", "8", "--device", "h100",
                           "--precision", "fp16", "--mode", "training",
                           "--top", "0")
    ok = rc == 0 and "training node times on" in out and \
        "dippm-training" in out
    if ok:
        t_total, t_roof, t_ops, t_nodes = node_tables(out)
        t_conv = [x for x in t_nodes if x[0] == "Conv"]
        ok = {k: v[0] for k, v in t_ops.items()} == want and \
            abs(t_roof - roof) < 0.15 and t_conv and \
            all(x[1] >= x[2] * 0.999 for x in t_conv) and t_total != total
    check("times:training", ok, err + out[-400:])
    tmp = tempfile.mkdtemp()
    bad = [("times_device", [path, "--device", "nosuch"], 1),
           ("times_precision", [path, "--device", "h100", "--precision",
                                "fp64"], 2),
           ("times_runtime", [path, "--device", "h100", "--runtime", "jit"],
            2),
           ("times_json", [path, "--device", "h100", "--json"], 2),
           ("times_mode", [path, "--device", "h100", "--mode", "serve"], 2),
           ("times_no_forests", [path, "--device", "h100", "--models", tmp],
            1),
           ("times_no_training_forests", [path, "--device", "h100",
                                          "--mode", "training", "--models",
                                          tmp], 1)]
    for name, args, code in bad:
        p = subprocess.run([EXE, "inspect"] + args, capture_output=True,
                           text=True, timeout=60)
        lines = p.stderr.strip().splitlines()
        check("cli:" + name, p.returncode == code and lines and
              lines[-1].startswith("dlperf: ") and
              (name != "times_no_forests" or "dippm-inference" in lines[-1])
              and (name != "times_no_training_forests" or
                   "dippm-training" in lines[-1]),
              "rc %d stderr %r" % (p.returncode, p.stderr))
    os.rmdir(tmp)


def check_bad_cli():
    good = os.path.join(FIX, "bert_tiny.onnx")
    tmp = tempfile.mkdtemp()
    junk = os.path.join(tmp, "junk.onnx")
    with open(junk, "wb") as f:
        f.write(b"\x0a\xff\xff\xff\xff\x0f garbage, not a protobuf")
    cases = [
        ("missing_file", [os.path.join(tmp, "nope.onnx")]),
        ("junk_file", [junk]),
        ("dim_no_eq", [good, "--dim", "seq16"]),
        ("dim_bad_value", [good, "--dim", "seq=abc"]),
        ("unknown_symbol", [good, "--dim", "nosuch=3"]),
        ("seq_twice", [good, "--dim", "seq=8", "--dim", "seq=16"]),
        ("batch_vs_dim", [good, "--batch", "2", "--dim", "batch=4",
                          "--dim", "seq=8"]),
        ("batch_zero", [good, "--batch", "0"]),
        ("batch_abc", [good, "--batch", "abc"]),
        ("batch_missing", [good, "--batch"]),
        ("unknown_option", [good, "--frobnicate"]),
        ("no_model", []),
    ]
    for name, args in cases:
        p = subprocess.run([EXE, "inspect"] + args, capture_output=True,
                           text=True, timeout=60)
        lines = p.stderr.strip().splitlines()
        check("cli:" + name, p.returncode != 0 and len(lines) == 1 and
              lines[0].startswith("dlperf: ") and p.stdout == "",
              "rc %d stderr %r" % (p.returncode, p.stderr))
    os.remove(junk)
    os.rmdir(tmp)


def full_sweep(oracle):
    """DLP_FULL_TV=1: every torchvision model, exported on the fly (about an
    hour on 2 cores), or read from DLP_FULL_TV_DIR if that names a directory
    written earlier by gen_model_fixtures.py --set all --out DIR."""
    tmp = os.environ.get("DLP_FULL_TV_DIR")
    if not tmp:
        tmp = tempfile.mkdtemp(prefix="dlp_fulltv_")
        subprocess.run(["/usr/bin/python3", os.path.join(
            HERE, "gen_model_fixtures.py"), "--set", "all", "--out", tmp],
            check=False)
    full = json.load(open(os.path.join(tmp, "oracle.json")))
    for name, ent in sorted(full.items()):
        if "export_error" in ent:
            report.append((name, None, None, ent["export_error"][:60], None,
                           None))
        elif ent["kind"] == "torchvision" and name not in oracle:
            check_model(name, ent, os.path.join(tmp, ent["file"]))


def main():
    if not os.access(EXE, os.X_OK):
        print("FAIL no executable at %s" % EXE)
        print("0 passed, 1 failed")
        return 1
    oracle = json.load(open(os.path.join(FIX, "oracle.json")))
    for name, ent in sorted(oracle.items()):
        if "export_error" in ent:
            report.append((name, None, None, ent["export_error"][:60], None,
                           None))
            continue
        path = os.path.join(FIX, ent["file"])
        if os.path.exists(path):
            check_model(name, ent, path)
    check_batch_scaling()
    check_text_output()
    check_node_times()
    check_bad_cli()
    if os.environ.get("DLP_FULL_TV") == "1":
        full_sweep(oracle)
    # params: ours equal the exported graph's float initializers exactly
    # (checked above); PyTorch's count differs where the exporter folds
    # BatchNorm into Conv, keeps BN running stats, or folds constants.
    print("\n%-22s %11s %10s %8s %11s %11s" % (
        "model", "ours GMACs", "published", "error", "params", "torch"))
    for name, ours, pub, e, par, tpar in report:
        print("%-22s %11s %10s %8s %11s %11s" % (
            name, "-" if ours is None else "%.4f" % ours,
            "-" if pub is None else "%.3f" % pub,
            "-" if e is None else e if isinstance(e, str)
            else "%+.2f%%" % (100 * e),
            "-" if par is None else par, "-" if tpar is None else tpar))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
