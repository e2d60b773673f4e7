"""test_python_binding.py: python/dlperf.py (ctypes over build/libdlperf.so)
against the CLI and the onnx package.

Oracles: `dlperf predict --json` and `dlperf inspect --json` for the same
model and options (the binding must answer exactly what the CLI prints:
same files, same config handling), the onnx package for the graph's node
and initializer counts. Also: a model from bytes equals one from its path,
threads sharing one Predictor give the serial answers, and every bad input
(unknown device, misspelt option, wrong type, batch 0, corrupt file,
missing file, closed model, contradicting bindings) raises DlperfError with
the library's message, never a crash or a number.
Run: DLP_BUILD=build /usr/bin/python3 tests/test_python_binding.py
"""
import concurrent.futures
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("DLP_BUILD", "build")
BUILD = BUILD if os.path.isabs(BUILD) else os.path.join(ROOT, BUILD)
os.environ["DLPERF_LIB"] = os.path.join(BUILD, "libdlperf.so")
sys.path.insert(0, os.path.join(ROOT, "python"))
import dlperf  # noqa: E402

DLPERF = os.path.join(BUILD, "dlperf")
FIX = os.path.join(ROOT, "tests", "fixtures")
MODELS = os.environ.get("DLPERF_MODELS") or os.path.join(ROOT, "models")
RESNET = os.path.join(FIX, "models", "resnet18.onnx")
BERT = os.path.join(FIX, "models", "bert_tiny.onnx")

passed = failed = 0


def check(cond, what):
    global passed, failed
    if cond:
        passed += 1
        print("ok", what)
    else:
        failed += 1
        print("FAIL", what)


def cli(*args):
    p = subprocess.run([DLPERF, *args], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def raises(fn, status, text, what):
    try:
        fn()
    except dlperf.DlperfError as e:
        check(e.status == status and text in str(e),
              "%s: %s %s" % (what, e.status, e))
        return
    except Exception as e:    # noqa: BLE001 - any other exception fails
        check(False, "%s: %s %s" % (what, type(e).__name__, e))
        return
    check(False, "%s: no error" % what)


def test_predict_matches_cli(pred):
    cases = [
        (RESNET, {"device": "h100"}, []),
        (RESNET, {"device": "h100", "precision": "fp16", "batch": 8,
                  "runtime": "eager"},
         ["--precision", "fp16", "--batch", "8", "--runtime", "eager"]),
        (RESNET, {"device": "h100", "mode": "training", "batch": 16},
         ["--mode", "training", "--batch", "16"]),
        # the shipped training host correction (models/host-training.csv)
        (RESNET, {"device": "h100", "mode": "training", "batch": 4,
                  "host_us": 12.5},
         ["--mode", "training", "--batch", "4", "--host-us", "12.5"]),
        (RESNET, {"device": "a100-80gb", "batch": 4, "slo_ms": 5.0},
         ["--batch", "4", "--slo-ms", "5"]),
        (RESNET, {"device": "h100", "mig": "3g.40gb", "batch": 2},
         ["--mig", "3g.40gb", "--batch", "2"]),
        (RESNET, {"device": "h100", "resolution": (160, 192), "batch": 2},
         ["--resolution", "160x192", "--batch", "2"]),
        (BERT, {"device": "h100", "dims": {"seq": 128}, "batch": 4,
                "precision": "bf16"},
         ["--dim", "seq=128", "--batch", "4", "--precision", "bf16"]),
    ]
    for path, kw, args in cases:
        dev = kw["device"]
        rc, out, err = cli("predict", path, "--device", dev, "--json",
                           "--models", MODELS, *args)
        got = pred.predict(path, **kw)
        want = json.loads(out) if rc == 0 else None
        check(rc == 0 and got == want,
              "predict %s %s equals the CLI's JSON (latency %s ms, memory %s "
              "MiB)" % (os.path.basename(path), args or "default",
                        got.get("latency_ms"), got.get("memory_mib")))
        for k in ("latency_ms", "memory_mib", "energy_j", "throughput_per_s",
                  "mig_profile"):
            check(k in got, "%s in the result" % k)
        if kw.get("host_us"):   # a host-bound step (the power rule) moved
            base = pred.predict(path, **dict(kw, host_us=None))
            check(got.get("host_factor", 1) > 1 and
                  abs(got["latency_ms"] / base["latency_ms"] -
                      got["host_factor"]) < 1e-4 * got["host_factor"],
                  "training --host-us: step x host_factor %s"
                  % got.get("host_factor"))


def test_model_reuse_and_bytes(pred):
    # the answers at seq 64 equal before and after seq 256; the 256
    # binding took effect: the activations (the memory estimate) grow
    # (the tiny fixture's latency is launch-bound: flat within the
    # predictor's error)
    with dlperf.Model(BERT) as m:
        r = [pred.predict(m, device="h100", dims={"seq": s})
             for s in (64, 256, 64)]
    a = [x["latency_ms"] for x in r]
    mem = [x["memory_mib"] for x in r]
    check(a[0] == a[2] and mem[0] == mem[2] and mem[1] > mem[0],
          "one Model, seq 64 / 256 / 64: latency %s, memory %s (rebinding "
          "is clean)" % (a, mem))
    with open(RESNET, "rb") as f:
        data = f.read()
    m = dlperf.Model(data=data, name="resnet18.onnx")
    check(pred.predict(m, device="h100", batch=4) ==
          pred.predict(RESNET, device="h100", batch=4),
          "a model from bytes predicts what its file does")
    m.close()
    raises(lambda: pred.predict(m, device="h100"), "ARG", "closed",
           "a closed model")


def test_inspect(pred):
    m = dlperf.Model(RESNET)
    got = m.inspect(batch=2)
    rc, out, _ = cli("inspect", RESNET, "--batch", "2", "--json")
    check(rc == 0 and got == json.loads(out), "inspect equals `dlperf inspect --json`")
    try:
        import onnx
    except ImportError:
        print("skip onnx oracle: no onnx package")
        return
    g = onnx.load(RESNET, load_external_data=False).graph
    s = got["summary"]
    check(s["nodes"] == len(g.node),
          "nodes %d = onnx's %d" % (s["nodes"], len(g.node)))
    check(len(got["nodes"]) == len(g.node), "one JSON node per onnx node")
    proto = onnx.load(RESNET, load_external_data=False)
    r = pred.predict(proto, device="h100", batch=4)
    want = pred.predict(RESNET, device="h100", batch=4)
    check(r["model"] == (proto.graph.name or "model") + ".onnx" and
          {k: v for k, v in r.items() if k != "model"} ==
          {k: v for k, v in want.items() if k != "model"},
          "an onnx.ModelProto in memory predicts what its file does")
    b = dlperf.Model(BERT).inspect(batch=1, dims={"seq": 32})
    check(b["summary"]["unshaped_tensors"] == 0, "bert_tiny at seq 32: every tensor shaped")


def test_threads(pred):
    files = [os.path.join(FIX, "models", f) for f in
             ("resnet18.onnx", "mobilenet_v2.onnx", "squeezenet1_1.onnx",
              "alexnet.onnx", "efficientnet_b0.onnx", "regnet_x_400mf.onnx")]
    serial = [pred.predict(f, device="h100", batch=8) for f in files]
    with concurrent.futures.ThreadPoolExecutor(4) as ex:
        par = list(ex.map(lambda f: pred.predict(f, device="h100", batch=8),
                          files * 3))
    check(par == serial * 3, "4 threads on one Predictor, 18 predictions = serial")


def test_predict_many(pred):
    # a directory: its *.onnx in name order, a failing file in its place,
    # as `dlperf predict DIR --json` prints them (one line each)
    import shutil
    import tempfile
    d = tempfile.mkdtemp(prefix="dlp_pybind_")
    try:
        for f in ("resnet18.onnx", "squeezenet1_1.onnx", "alexnet.onnx"):
            shutil.copy(os.path.join(FIX, "models", f), d)
        shutil.copy(os.path.join(FIX, "predict", "corrupt.onnx"), d)
        with open(os.path.join(d, "notes.txt"), "w") as f:
            f.write("not a model")
        got = pred.predict_many(d, device="h100", batch=4, jobs=3)
        rc, out, _ = cli("predict", d, "--device", "h100", "--batch", "4",
                         "--json", "--models", MODELS)
        want = [json.loads(line) for line in out.splitlines()]
        names = [g.get("model") for g in got]
        check(names == ["alexnet.onnx", "corrupt.onnx", "resnet18.onnx",
                        "squeezenet1_1.onnx"], "predict_many: name order %s" % names)
        check(rc == 1 and len(want) == 4 and all(
            (g == w) if "error" not in w else ("error" in g and g["status"] == "FORMAT")
            for g, w in zip(got, want)),
            "predict_many equals `dlperf predict DIR --json`, the corrupt file an error in place")
        import onnx
        proto = onnx.load(RESNET, load_external_data=False)
        bad = pred.predict_many([proto], device="nosuchgpu")
        check(len(bad) == 1 and bad[0].get("status") == "NOT_FOUND" and
              bad[0].get("model") == (proto.graph.name or "model") + ".onnx",
              "predict_many: an onnx.ModelProto that fails is an error in its place: %s"
              % bad)
        check(pred.predict_many([RESNET, RESNET], device="h100", batch=2) ==
              [pred.predict(RESNET, device="h100", batch=2)] * 2,
              "predict_many over a list")
    finally:
        shutil.rmtree(d)


def test_bad_input(pred):
    p = pred.predict
    raises(lambda: p(RESNET, device="nosuchgpu"), "NOT_FOUND", "nosuchgpu",
           "unknown device")
    raises(lambda: p(RESNET, device="h100", mig="9g.99gb"), "NOT_FOUND", "9g.99gb",
           "unknown MIG profile")
    raises(lambda: p(RESNET, device="h100", batch=0), "ARG", "batch",
           "batch 0")
    raises(lambda: p(RESNET, device="h100", batch=10**9), "ARG", "batch",
           "absurd batch")
    raises(lambda: p(RESNET, device="h100", resolution=0), "ARG", '"height" 0',
           "resolution 0")
    raises(lambda: p(RESNET, device="h100", batch="8"), "ARG",
           '"batch" must be an integer', "batch as a string")
    raises(lambda: p(RESNET, device="h100", batch=True), "ARG",
           '"batch" must be an integer', "batch as a bool")
    raises(lambda: p(RESNET, device="h100", slo_ms=float("nan")), "ARG",
           "slo_ms must be a finite number", "NaN latency goal")
    raises(lambda: p(RESNET, device="h100", slo_ms=-1.0), "ARG", "latency goal -1",
           "negative latency goal")
    raises(lambda: p(RESNET, device="h100", precision="fp8"), "ARG", "fp8",
           "unknown precision")
    raises(lambda: p(BERT, device="h100"), "SHAPE", "seq",
           "unbound seq")
    raises(lambda: p(RESNET, device="h100", batch=4, dims={"batch": 8}), "ARG",
           "batch 4", "batch and a contradicting batch dim")
    raises(lambda: p(os.path.join(FIX, "predict", "corrupt.onnx"), device="h100"),
           "FORMAT", "", "corrupt model file")
    raises(lambda: p("/nonexistent/model.onnx", device="h100"), "IO",
           "/nonexistent/model.onnx", "missing model file")
    raises(lambda: dlperf.Model(data=b"\x00\x01garbage"), "FORMAT", "",
           "garbage bytes")
    raises(lambda: dlperf.Predictor("/nonexistent/models"), "IO",
           "/nonexistent/models", "missing models directory")
    try:
        p(RESNET, device="h100", precison="fp16")
        check(False, "a misspelt keyword: no error")
    except TypeError as e:
        check("precison" in str(e), "a misspelt keyword is a TypeError: %s" % e)


def main():
    if not os.path.exists(os.path.join(BUILD, "libdlperf.so")):
        print("FAIL no %s/libdlperf.so (make first)" % BUILD)
        print("0 passed, 1 failed")
        return 1
    pred = dlperf.Predictor(MODELS)
    check(len(pred.files) > 0, "loaded %d predictor files" % len(pred.files))
    test_predict_matches_cli(pred)
    test_model_reuse_and_bytes(pred)
    test_inspect(pred)
    test_threads(pred)
    test_predict_many(pred)
    test_bad_input(pred)
    pred.close()
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
