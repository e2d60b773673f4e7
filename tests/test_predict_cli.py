"""test_predict_cli.py: `dlperf predict` and `dlperf tree` from the outside.

Predictor files are written here by an independent Python writer of the
model-file container (src/nn/nn_file.c layout: "DLPNNMDL", version, entry
count, payload length, entries, CRC-32), holding roofline predictors (no
fitted parameters) trained "on" the H100. Checks: JSON keys and the derived
figures (throughput = batch / latency, power = energy / latency), the MIG
profile against a Python re-implementation of the rule over the H100 and
A100 profile tables, every bad input of the issue (clear error, exit code,
no crash) or a flagged prediction, directory mode (order, per-file errors,
thread-count independence), determinism, and the shipped models/ when
present. Run: DLP_BUILD=build /usr/bin/python3 tests/test_predict_cli.py
"""
import csv
import json
import math
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("DLP_BUILD", "build")
DLPERF = os.path.join(ROOT, BUILD, "dlperf") if not os.path.isabs(BUILD) else os.path.join(BUILD, "dlperf")
FIX = os.path.join(ROOT, "tests", "fixtures")
RESNET = os.path.join(FIX, "models", "resnet18.onnx")

passed = failed = 0


def check(cond, what):
    global passed, failed
    if cond:
        passed += 1
        print("ok", what.replace("\n", " "))
    else:
        failed += 1
        print("FAIL", what.replace("\n", " "))


# ---- an independent writer of predictor files ------------------------------
TARGETS = ["inference.latency_ms", "inference.memory_mib", "inference.energy_j",
           "inference.power_w", "training.step_ms", "training.memory_mib",
           "training.power_w", "llm.throughput_samples_s", "llm.memory_mib",
           "llm.energy_per_sample_j"]
MODES = {"inference": 0, "training": 1, "llm": 2}
FEAT_SCHEMA = None  # read from src/feat/feat.h


def feat_schema():
    with open(os.path.join(ROOT, "src", "feat", "feat.h")) as f:
        for line in f:
            if line.startswith("#define DLP_FEAT_SCHEMA"):
                return int(line.split()[2])
    raise RuntimeError("no DLP_FEAT_SCHEMA")


def entry(kind, name, values):
    nb = name.encode()
    if kind == 3:
        data = values.encode()
        count = len(data)
    elif kind == 2:
        data = b"".join(struct.pack("<q", v) for v in values)
        count = len(values)
    else:
        data = b"".join(struct.pack("<f", v) for v in values)
        count = len(values)
    return struct.pack("<BH", kind, len(nb)) + nb + struct.pack("<Q", count) + data


def write_model(path, kind, mode, targets, devices, extra,
                info="written by test_predict_cli.py"):
    bits = 0
    for t in targets:
        bits |= 1 << TARGETS.index(t)
    nan = float("nan")
    per = [nan] * 30
    for t in targets:
        i = TARGETS.index(t)
        per[i] = 0.5
        per[10 + i] = math.log(0.8)
        per[20 + i] = math.log(1.25)
    ents = [entry(3, "pred/kind", kind),
            entry(2, "pred/header", [feat_schema(), MODES[mode], bits, 0, 0, 1]),
            entry(3, "pred/devices", devices),
            entry(1, "pred/per_target", per),
            entry(1, "pred/ranges", [0.0] * 6),
            entry(3, "pred/info", info)] + extra
    payload = b"".join(ents)
    head = b"DLPNNMDL" + struct.pack("<IIQ", 1, len(ents), len(payload))
    body = head + payload
    with open(path, "wb") as f:
        f.write(body + struct.pack("<I", zlib.crc32(body) & 0xFFFFFFFF))


def run(*args, cwd=None):
    p = subprocess.run([DLPERF] + list(args), capture_output=True, text=True,
                       cwd=cwd, timeout=120)
    return p.returncode, p.stdout, p.stderr


# ---- MIG rule re-implemented ---------------------------------------------------
PROFILES = {  # name: (GB, slices, SMs)
    "H100-SXM5-80GB": [("1g.10gb", 10, 1, 16), ("1g.20gb", 20, 1, 26), ("2g.20gb", 20, 2, 32),
                       ("3g.40gb", 40, 3, 60), ("4g.40gb", 40, 4, 64), ("7g.80gb", 80, 7, 132)],
    "A100-SXM4-40GB": [("1g.5gb", 5, 1, 14), ("1g.10gb", 10, 1, 14), ("2g.10gb", 10, 2, 28),
                       ("3g.20gb", 20, 3, 42), ("4g.20gb", 20, 4, 56), ("7g.40gb", 40, 7, 98)],
}


def mig_rule(device, mem_mib, context, ratio):
    need = mem_mib * ratio + context
    for name, gb, slices, sms in sorted(PROFILES[device], key=lambda p: (p[1], p[2])):
        if gb * 1024 * 0.95 >= need:
            return name
    return None


def resolution_oracle(tmp, path, h, w):
    """path rewritten by the onnx package with its image input's height and
    width set to h x w (shapes only; weights stay external and absent);
    None without the onnx package."""
    try:
        import onnx
    except ImportError:
        print("skip --resolution oracle: no onnx package")
        return None
    m = onnx.load(path, load_external_data=False)
    d = m.graph.input[0].type.tensor_type.shape.dim
    d[2].dim_value, d[3].dim_value = h, w
    out = os.path.join(tmp, "resnet18_%dx%d.onnx" % (h, w))
    onnx.save(m, out)
    return out


def main():
    if not os.path.exists(DLPERF):
        print("no", DLPERF)
        print("0 passed, 1 failed")
        return 1
    tmp = tempfile.mkdtemp(prefix="dlp_predict_cli_")
    try:
        models = os.path.join(tmp, "models")
        os.makedirs(models)
        write_model(os.path.join(models, "inf.dlpm"), "roofline", "inference",
                    TARGETS[0:4], "H100-SXM5-80GB", [entry(3, "roofline/version", "1")])
        write_model(os.path.join(models, "train.dlpm"), "roofline", "training",
                    TARGETS[4:7], "H100-SXM5-80GB", [entry(3, "roofline/version", "1")])
        M = ["--models", models]

        rc, out, err = run("predict", "--help")
        check(rc == 0 and "--mig" in out and "--slo-ms" in out, "help")
        rc, out, err = run("predict")
        check(rc == 2 and "no model" in err, "no model: exit 2")
        rc, out, err = run("predict", RESNET, *M)
        check(rc == 2 and "--device" in err, "no device: exit 2")

        # happy path, JSON
        rc, out, err = run("predict", RESNET, "--device", "h100", "--batch", "8",
                           "--precision", "fp16", "--json", *M)
        check(rc == 0, "resnet18 json rc 0 (%s)" % err.strip())
        j = json.loads(out) if rc == 0 else {}
        keys = ["latency_ms", "memory_mib", "energy_j", "throughput_per_s",
                "mig_profile", "power_w", "intervals", "flags", "predictors"]
        check(all(k in j for k in keys), "json keys")
        check(out.count("\n") == 1, "one line")
        # the huge-page heap (src/cli/cli_heap.c) changes no number: the
        # same request with it turned off prints the same JSON
        p = subprocess.run([DLPERF, "predict", RESNET, "--device", "h100", "--batch",
                            "8", "--precision", "fp16", "--json", *M],
                           capture_output=True, text=True, timeout=120,
                           env=dict(os.environ, DLPERF_NO_HUGEPAGES="1"))
        check(p.returncode == 0 and p.stdout == out, "same JSON without huge pages")
        # ... and it takes effect: with the shipped models (a ResNet
        # request reads ~7 MB of them) the heap's first touches come in
        # 2 MB pages, not one fault per 4 KB (ninety-first session: the
        # heap had not been advised, 2,189 faults against 133 now). Only
        # where the kernel's huge pages are "madvise": with "always" the
        # run without them gets huge pages too, with "never" neither does
        try:
            with open("/sys/kernel/mm/transparent_hugepage/enabled") as f:
                thp = f.read()
        except OSError:
            thp = ""
        shipped = os.path.join(ROOT, "models")
        if "[madvise]" in thp and os.path.isdir(shipped):
            req = [DLPERF, "predict", RESNET, "--device", "h100", "--json",
                   "--models", shipped]
            def minor_faults(off):
                q = subprocess.Popen(req, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL,
                                     env=dict(os.environ, DLPERF_NO_HUGEPAGES=off))
                _, st, ru = os.wait4(q.pid, 0)
                return st, ru.ru_minflt
            st_on, f_on = minor_faults("0")
            st_off, f_off = minor_faults("1")
            if st_on == 0 and st_off == 0 and f_off > 1000:
                check(f_on * 2 < f_off, "heap on huge pages: %d page faults, "
                      "%d without" % (f_on, f_off))
            else:
                print("skipped: huge-page heap check (status %d / %d, %d faults "
                      "without)" % (st_on, st_off, f_off))
        else:
            print("skipped: huge-page heap check (transparent huge pages: %s)"
                  % (thp.strip() or "unknown"))
        # libxgboost is opened when a tree is trained or an XGBoost blob
        # read (src/tree/tree_xgb.c), never linked: its C++ initialisers
        # cost ~7 ms at every start (a direct call had linked it again)
        readelf = shutil.which("readelf")
        if readelf:
            dyn = subprocess.run([readelf, "-d", DLPERF], capture_output=True,
                                 text=True).stdout
            check("NEEDED" in dyn and "libxgboost" not in dyn,
                  "libxgboost not a link-time dependency of dlperf")
            # the compression libraries come from their static archives
            # where the compiler finds them (Makefile, CLI_LIBS): each
            # shared one cost every process its loading (~8 page faults)
            cc = os.environ.get("CC") or "cc"
            def archive(lib):
                try:
                    out = subprocess.run([cc, "-print-file-name=%s.a" % lib],
                                         capture_output=True, text=True).stdout
                except OSError:
                    return False
                return os.path.isabs(out.strip()) and os.path.exists(out.strip())
            libs = ("libzstd", "libz", "liblzma")
            if all(archive(l) for l in libs):
                needed = [l for l in dyn.splitlines() if "NEEDED" in l]
                shared = [l for l in libs
                          if any("[%s.so" % l in n for n in needed)]
                check(not shared, "compression libraries linked static "
                      "(shared: %s)" % (", ".join(shared) or "none"))
            else:
                print("skipped: static compression archives not found")
        else:
            print("skipped: readelf not found")
        if j:
            check(abs(j["throughput_per_s"] - 8 / (j["latency_ms"] / 1e3)) <=
                  1e-5 * j["throughput_per_s"], "throughput = batch / latency")
            check(abs(j["power_w"] - j["energy_j"] / (j["latency_ms"] / 1e3)) <=
                  1e-5 * j["power_w"], "power = energy / latency")
            lo, hi = j["intervals"]["latency_ms"]
            check(abs(lo / j["latency_ms"] - 0.8) < 1e-4 and
                  abs(hi / j["latency_ms"] - 1.25) < 1e-4, "interval from residuals")
            check(j["mig_profile"] == mig_rule("H100-SXM5-80GB", j["memory_mib"],
                                               j["context_mib"], j["reserved_ratio"]),
                  "MIG rule (H100)")
            check(j["flags"]["ood"] is False and j["flags"]["extrapolated"] is False,
                  "no flags on a known graph")
            check(j["predictors"]["latency_ms"] == "roofline", "predictor named")

        # host-aware eager (--host-us, models/host.csv): JSON keys, the
        # factor against the blind eager and graph predictions, refusals
        check(j.get("host_us", 0) is None and j.get("host_factor") == 1,
              "json host_us null, host_factor 1 without --host-us")
        base = ["predict", RESNET, "--device", "h100", "--batch", "8", "--json"]
        # the reference host a file's eager labels were brought to
        # (`train --host-norm`, recorded in its info string)
        check(j.get("host_ref_us", 0) is None, "json host_ref_us null: labels as measured")
        for info, want_ref in (("trained on 9 examples; eager labels at a host of "
                                "7.5 us (beta 1, gamma 1; 3 examples)", 7.5),
                               ("eager labels at a host of x us", None),
                               ("eager labels at a host of 7.5", None)):
            hm = os.path.join(tmp, "models_ref")
            os.makedirs(hm, exist_ok=True)
            write_model(os.path.join(hm, "inf.dlpm"), "roofline", "inference",
                        TARGETS[0:4], "H100-SXM5-80GB",
                        [entry(3, "roofline/version", "1")], info=info)
            je = json.loads(run(*base, "--runtime", "eager", "--models", hm)[1])
            jg = json.loads(run(*base, "--runtime", "graph", "--models", hm)[1])
            check(je["host_ref_us"] == want_ref and jg["host_ref_us"] is None,
                  "host_ref_us %s from info '%s' (eager), null for CUDA graph"
                  % (want_ref, info[-30:]))
        rc, out, err = run("predict", RESNET, "--device", "h100", "--batch", "8",
                           "--runtime", "eager", "--models", hm)
        check(rc == 0 and "predicted for a host of" not in out, "no reference host line")
        write_model(os.path.join(hm, "inf.dlpm"), "roofline", "inference",
                    TARGETS[0:4], "H100-SXM5-80GB", [entry(3, "roofline/version", "1")],
                    info="eager labels at a host of 7.5 us (beta 1)")
        rc, out, err = run("predict", RESNET, "--device", "h100", "--batch", "8",
                           "--runtime", "eager", "--models", hm)
        check(rc == 0 and "predicted for a host of 7.5 us per eager op" in out,
              "text: the reference host line")
        rc, out, err = run(*base, "--runtime", "eager", "--host-us", "9", *M)
        check(rc == 1 and "host.csv" in err, "--host-us without host.csv: exit 1")
        with open(os.path.join(models, "host.csv"), "w") as f:
            f.write("format,dlperf-host-1\nbeta,0.5\nref_us,6\n"
                    "energy_gamma,0.25\n")
        je = json.loads(run(*base, "--runtime", "eager", *M)[1])
        jg = json.loads(run(*base, "--runtime", "graph", *M)[1])
        rc, out, err = run(*base, "--runtime", "eager", "--host-us", "12", *M)
        jh = json.loads(out) if rc == 0 else {}
        want = math.exp((1 - jg["latency_ms"] / je["latency_ms"]) * 0.5 * math.log(2))
        check(rc == 0 and jh["host_us"] == 12 and
              abs(jh["host_factor"] - want) < 1e-4 * want and
              abs(jh["latency_ms"] / je["latency_ms"] - want) < 1e-4 * want,
              "--host-us 12 at ref 6: latency x 2^(h beta) (%s)" % err.strip())
        fe = 1 + 0.25 * (want - 1)
        check(rc == 0 and je["host_energy_factor"] == 1 and
              abs(jh["host_energy_factor"] - fe) < 1e-4 * fe and
              je["energy_j"] is not None and
              abs(jh["energy_j"] / je["energy_j"] - fe) < 1e-4 * fe,
              "--host-us 12: energy x 1 + gamma (f - 1) (%s %s)"
              % (jh.get("energy_j"), je.get("energy_j")))
        for bad, code in (("0", 2), ("-3", 2), ("x", 2), ("5000", 1)):
            rc, out, err = run(*base, "--runtime", "eager", "--host-us", bad, *M)
            check(rc == code, "--host-us %s: exit %d (%d)" % (bad, code, rc))
        rc, out, err = run(*base, "--host-us", "9", *M)
        check(rc == 1 and "eager" in err, "--host-us with the graph runtime: exit 1")
        os.unlink(os.path.join(models, "host.csv"))

        # a big batch needs a bigger profile; compare with the rule again
        for dev, b in (("h100", 256), ("h100", 2048), ("a100-40gb", 512)):
            rc, out, err = run("predict", RESNET, "--device", dev, "--batch", str(b),
                               "--json", *M)
            jj = json.loads(out) if rc == 0 else None
            name = "A100-SXM4-40GB" if dev.startswith("a100") else "H100-SXM5-80GB"
            check(jj is not None and jj["mig_profile"] ==
                  mig_rule(name, jj["memory_mib"], jj["context_mib"], jj["reserved_ratio"]),
                  "MIG rule %s batch %d -> %s" % (dev, b, jj and jj["mig_profile"]))
            if jj and dev.startswith("a100"):
                check(jj["flags"]["extrapolated"] is True, "A100 flagged extrapolated")

        # SLO: the chosen profile's predicted latency meets the goal
        rc, out, err = run("predict", RESNET, "--device", "h100", "--batch", "64",
                           "--json", *M)
        full = json.loads(out)["latency_ms"]
        slo = full * 2.5
        rc, out, err = run("predict", RESNET, "--device", "h100", "--batch", "64",
                           "--slo-ms", "%.9g" % slo, "--json", *M)
        prof = json.loads(out)["mig_profile"]
        check(prof is not None, "SLO profile found (%s)" % prof)
        if prof:
            rc, out, err = run("predict", RESNET, "--device", "h100", "--batch", "64",
                               "--mig", prof, "--json", *M)
            jm = json.loads(out)
            check(jm["latency_ms"] <= slo * (1 + 1e-6) and jm["partition"] == prof,
                  "latency on %s meets the goal" % prof)
            smaller = [p[0] for p in sorted(PROFILES["H100-SXM5-80GB"], key=lambda p: (p[1], p[2]))]
            for p in smaller[:smaller.index(prof)]:
                rc, out, err = run("predict", RESNET, "--device", "h100", "--batch", "64",
                                   "--mig", p, "--json", *M)
                check(json.loads(out)["latency_ms"] > slo, "smaller %s misses the goal" % p)
        rc, out, err = run("predict", RESNET, "--device", "h100", "--batch", "64",
                           "--slo-ms", "%.9g" % (full / 3), "--json", *M)
        jn = json.loads(out)
        check(rc == 0 and jn["mig_profile"] is None and "goal" in jn["mig_note"],
              "impossible goal: no profile, note says why")

        # text output
        rc, out, err = run("predict", RESNET, "--device", "h100", *M)
        check(rc == 0 and "latency" in out and "MIG profile" in out, "text output")

        # training mode
        rc, out, err = run("predict", RESNET, "--device", "h100", "--mode", "training",
                           "--batch", "16", "--json", *M)
        check(rc == 0 and json.loads(out)["mode"] == "training", "training mode")
        rc, out, err = run("predict", RESNET, "--device", "h100", "--mode", "llm", *M)
        check(rc == 1 and "llm" in err, "mode without a predictor: clear error")

        # bad input: (args, expected rc, text in stderr)
        bad = [
            (["--device", "h900"], 1, "H100-SXM5-80GB"),
            (["--device", "v100", "--precision", "bf16"], 1, "bf16"),
            (["--device", "t4", "--precision", "bf16"], 1, "bf16"),
            (["--device", "h100", "--precision", "fp64"], 1, "fp64"),
            (["--device", "h100", "--runtime", "jit"], 1, "jit"),
            (["--device", "h100", "--batch", "0"], 2, "--batch"),
            (["--device", "h100", "--batch", "100000"], 2, "--batch"),
            (["--device", "h100", "--batch", "abc"], 2, "--batch"),
            (["--device", "h100", "--mig", "9g.99gb"], 1, "3g.40gb"),
            (["--device", "t4", "--mig", "1g.10gb"], 1, "MIG"),
            (["--device", "h100", "--sms", "500"], 1, "132"),
            (["--device", "h100", "--sms", "0"], 2, "--sms"),
            (["--device", "h100", "--sms", "16", "--mig", "1g.10gb"], 1, "not both"),
            (["--device", "h100", "--slo-ms", "-3"], 2, "--slo-ms"),
            (["--device", "h100", "--dim", "seq"], 2, "NAME=VALUE"),
            (["--device", "h100", "--resolution", "0"], 2, "--resolution"),
            (["--device", "h100", "--resolution", "32x"], 2, "--resolution"),
            (["--device", "h100", "--resolution", "20000"], 2, "--resolution"),
            (["--device", "h100", "--dim", "nope=3"], 1, "nope"),
            (["--device", "h100", "--batch", "4", "--dim", "batch=8"], 1, "disagree"),
            (["--device", "h100", "--dim", "batch=2", "--dim", "batch=3"], 1, "twice"),
            (["--device", "h100", "--frobnicate"], 2, "unknown option"),
            (["--device"], 2, "needs a value"),
        ]
        for args, want_rc, text in bad:
            rc, out, err = run("predict", RESNET, *args, *M)
            check(rc == want_rc and text in err and out == "",
                  "bad input %s -> rc %d (%s)" % (" ".join(args), rc, err.strip()[:80]))
        rc, out, err = run("predict", os.path.join(FIX, "predict", "corrupt.onnx"),
                           "--device", "h100", *M)
        check(rc == 1 and "corrupt.onnx" in err or "protobuf" in err.lower(),
              "corrupt model: clear error (%s)" % err.strip()[:80])
        rc, out, err = run("predict", os.path.join(FIX, "predict", "absent.onnx"),
                           "--device", "h100", *M)
        check(rc == 1 and "absent.onnx" in err, "missing model: clear error")
        rc, out, err = run("predict", os.path.join(FIX, "predict", "cnn_dyn.onnx"),
                           "--device", "h100", *M)
        check(rc == 1 and "'size'" in err, "unbound dim named")
        rc, out, err = run("predict", os.path.join(FIX, "predict", "cnn_dyn.onnx"),
                           "--device", "h100", "--dim", "size=96", "--json", *M)
        check(rc == 0 and json.loads(out)["height"] == 96, "bound dim works")
        # --resolution against an independent rebinding: the onnx package
        # writes resnet18's input as [batch, 3, 320, 160]; the prediction
        # of that file equals the 224-px file's with --resolution 320x160
        res = resolution_oracle(tmp, RESNET, 320, 160)
        if res:
            args = ["--device", "h100", "--batch", "4", "--precision", "fp16", "--json", *M]
            rc1, o1, e1 = run("predict", res, *args)
            rc2, o2, e2 = run("predict", RESNET, "--resolution", "320x160", *args)
            j1 = json.loads(o1) if rc1 == 0 else {}
            j2 = json.loads(o2) if rc2 == 0 else {}
            same = j1 and j2 and all(j1[k] == j2[k] for k in
                                     ("latency_ms", "memory_mib", "energy_j", "height", "width"))
            check(same and j2["height"] == 320 and j2["width"] == 160,
                  "--resolution 320x160 = the graph written at 320x160 (%s %s)"
                  % (e1.strip()[:60], e2.strip()[:60]))
            rc3, o3, _ = run("predict", RESNET, "--resolution", "224", *args)
            rc4, o4, _ = run("predict", RESNET, *args)
            check(rc3 == 0 and o3 == o4, "--resolution at the exported size changes nothing")
        rc, out, err = run("predict", os.path.join(FIX, "models", "vit_b_16.onnx"),
                           "--device", "h100", "--resolution", "320", *M)
        check(rc == 1 and "fixes its resolution" in err and out == "",
              "--resolution a ViT's position embedding contradicts: clear error (%s)"
              % err.strip()[:80])
        rc, out, err = run("predict", os.path.join(FIX, "models", "bert_tiny.onnx"),
                           "--device", "h100", "--resolution", "224", *M)
        check(rc == 1 and "no 4-D float input" in err, "--resolution on a text model: clear error")
        rc, out, err = run("predict", os.path.join(FIX, "predict", "unknown_op.onnx"),
                           "--device", "h100", "--json", *M)
        ju = json.loads(out) if rc == 0 else {}
        check(rc == 0 and ju["flags"]["ood"] is True and
              any("NotARealOp" in r and "com.example.Fancy" in r for r in ju["flags"]["reasons"]),
              "unseen ops: prediction flagged OOD with the op names")
        empty = os.path.join(tmp, "empty")
        os.makedirs(empty)
        rc, out, err = run("predict", RESNET, "--device", "h100", "--models", empty)
        check(rc == 1 and "dlpm" in err, "empty models dir: clear error")
        bad_models = os.path.join(tmp, "bad_models")
        os.makedirs(bad_models)
        with open(os.path.join(bad_models, "x.dlpm"), "wb") as f:
            f.write(b"DLPNNMDL" + b"\0" * 40)
        rc, out, err = run("predict", RESNET, "--device", "h100", "--models", bad_models)
        check(rc == 1 and "x.dlpm" in err, "corrupt predictor file: clear error")

        # directory mode
        d = os.path.join(tmp, "nas")
        os.makedirs(d)
        for n in ("resnet18.onnx", "bert_tiny.onnx"):
            shutil.copy(os.path.join(FIX, "models", n), os.path.join(d, n))
        shutil.copy(os.path.join(FIX, "predict", "corrupt.onnx"), os.path.join(d, "a_corrupt.onnx"))
        shutil.copy(os.path.join(FIX, "predict", "unknown_op.onnx"), os.path.join(d, "z_unknown.onnx"))
        with open(os.path.join(d, "notes.txt"), "w") as f:
            f.write("not a model")
        rc1, out1, err1 = run("predict", d, "--device", "h100", "--json", "--jobs", "1",
                              "--dim", "seq=32", *M)
        rc2, out2, err2 = run("predict", d, "--device", "h100", "--json", "--jobs", "2",
                              "--dim", "seq=32", *M)
        lines = [json.loads(l) for l in out1.splitlines()]
        check(len(lines) == 4 and [l["model"] for l in lines] ==
              ["a_corrupt.onnx", "bert_tiny.onnx", "resnet18.onnx", "z_unknown.onnx"],
              "directory: one line per .onnx, sorted")
        check("error" in lines[0] and "latency_ms" in lines[2], "directory: per-file error")
        check(rc1 == 1 and "1 of 4" in err1, "directory: failure counted")
        check(out1 == out2, "directory: same output with 1 or 2 threads")

        # mutated model files: an error line or a prediction, never a crash
        import random
        rnd = random.Random(5)
        mut = os.path.join(tmp, "mutants")
        os.makedirs(mut)
        srcs = [open(os.path.join(FIX, "models", n), "rb").read()
                for n in ("resnet18.onnx", "gpt_tiny.onnx")]
        for k in range(200):
            b = bytearray(srcs[k % 2])
            for _ in range(rnd.randint(1, 8)):
                b[rnd.randrange(len(b))] = rnd.randrange(256)
            if k % 10 == 0:
                b = b[:rnd.randrange(len(b))]
            with open(os.path.join(mut, "m%03d.onnx" % k), "wb") as f:
                f.write(b)
        rc, out, err = run("predict", mut, "--device", "h100", "--json",
                           "--dim", "seq=8", *M)
        lines = out.splitlines()
        ok = rc in (0, 1) and len(lines) == 200 and "Sanitizer" not in err
        for l in lines:
            j = json.loads(l)
            ok = ok and ("error" in j or (j["latency_ms"] is None or j["latency_ms"] > 0))
        check(ok, "200 mutated models: JSON line each, no crash (rc %d)" % rc)

        # a GNN predictor (scratch buffers in its state): 2 threads must
        # give exactly the 1-thread output
        gm = os.path.join(tmp, "gnn_models")
        os.makedirs(gm)
        rc, out, err = run("train", os.path.join(FIX, "dataset", "valid"), "--kind", "dippm",
                           "-o", os.path.join(gm, "dippm.dlpm"), "--epochs", "2", "--quiet")
        if rc == 0:
            zoo = os.path.join(tmp, "zoo")
            os.makedirs(zoo)
            for n in os.listdir(os.path.join(FIX, "models")):
                if n.endswith(".onnx"):
                    for k in range(3):
                        shutil.copy(os.path.join(FIX, "models", n), os.path.join(zoo, "%d_%s" % (k, n)))
            o1 = run("predict", zoo, "--device", "h100", "--json", "--jobs", "1",
                     "--dim", "seq=16", "--models", gm)
            o2 = run("predict", zoo, "--device", "h100", "--json", "--jobs", "2",
                     "--dim", "seq=16", "--models", gm)
            check(o1[1] == o2[1] and o1[1].count("\n") > 50,
                  "GNN predictor: directory output independent of threads")
        else:
            check(False, "dlperf train dippm on fixtures (%s)" % err.strip()[:80])

        # --host-norm: an inference or LLM host fit for those labels, a training
        # step's fit for training steps
        ds_valid = os.path.join(FIX, "dataset", "valid")
        hostf = os.path.join(tmp, "host.csv")
        with open(hostf, "w") as f:
            f.write("format,dlperf-host-1\nbeta,1.35\nref_us,8.4\nenergy_gamma,0.68\n")
        hn = os.path.join(gm, "linreg_hn.dlpm")
        rc, out, err = run("train", ds_valid, "--kind", "linreg", "-o", hn,
                           "--host-norm", hostf, "--quiet")
        check(rc == 0 and os.path.exists(hn), "train --host-norm FILE: trains (%s)" % err.strip()[:80])
        rc, out, err = run("train", ds_valid, "--kind", "linreg", "-o", hn,
                           "--host-norm", "/nonexistent/host.csv", "--quiet")
        check(rc != 0 and "/nonexistent/host.csv" in err, "train --host-norm: missing file named")
        rc, out, err = run("train", ds_valid, "--kind", "linreg", "--mode", "training",
                           "-o", hn, "--host-norm", hostf, "--quiet")
        check(rc != 0 and "inference" in err and "LLM" in err,
              "train --host-norm: an inference fit refused for training steps")
        rc, out, err = run("train", ds_valid, "--kind", "linreg", "--mode", "llm",
                           "-o", hn, "--host-norm", hostf)
        check(rc == 0 and "brought to a host of 8.4 us" in err,
              "train --mode llm --host-norm FILE: trains, the count printed (%s)" % err.strip()[-80:])
        with open(hostf, "w") as f:
            f.write("format,dlperf-host-1\nbeta,0.57\nref_us,8.8\npower_lo_w,300\n"
                    "power_hi_w,360\npower_tdp_w,700\n")
        rc, out, err = run("train", ds_valid, "--kind", "linreg", "-o", hn,
                           "--host-norm", hostf, "--quiet")
        check(rc != 0 and "training" in err, "train --host-norm: a training fit refused for inference")

        # several --kind in one call: the examples featurized once, each
        # file the bytes its own call writes, --host-norm its file's alone
        # (a copy of the valid fixture whose eager rows carry host probes,
        # so that the norm moves labels; the files after the normed one
        # must see the labels as measured again)
        hds = os.path.join(tmp, "hostds")
        shutil.copytree(ds_valid, hds)
        for b in os.listdir(os.path.join(hds, "batches")):
            p = os.path.join(hds, "batches", b, "inference.csv")
            with open(p, newline="") as f:
                rows = list(csv.reader(f))
            keep = [j for j, c in enumerate(rows[0]) if c != "notes"]
            rt = rows[0].index("runtime")
            with open(p, "w", newline="") as f:
                w = csv.writer(f)
                w.writerow([rows[0][j] for j in keep] + ["host_us"])
                for i, r in enumerate(rows[1:]):
                    w.writerow([r[j] for j in keep] + [str(9 + i % 7) if r[rt] == "eager" else ""])
        hostf2 = os.path.join(tmp, "host2.csv")
        with open(hostf2, "w") as f:
            f.write("format,dlperf-host-1\nbeta,1.35\nref_us,8.4\nenergy_gamma,0.68\n")
        small = ["--epochs", "2", "--hidden", "8", "--threads", "2"]
        sep = {}
        for kind, extra in (("linreg", []), ("dippm", small + ["--host-norm", hostf2]),
                            ("roofline", [])):
            sep[kind] = os.path.join(gm, "sep_%s.dlpm" % kind)
            rc, out, err = run("train", hds, "--kind", kind, "-o", sep[kind], *extra)
            check(rc == 0, "train %s on the host-probe copy (%s)" % (kind, err.strip()[-80:]))
        rc, out, err = run("train", hds, "--kind", "linreg", "-o", os.path.join(gm, "one_linreg.dlpm"),
                           "--kind", "dippm", "-o", os.path.join(gm, "one_dippm.dlpm"), *small,
                           "--host-norm", hostf2, "--kind", "roofline", "-o", os.path.join(gm, "one_roofline.dlpm"))
        moved = [int(x.split()[3]) for x in err.splitlines() if "brought to a host" in x]
        check(rc == 0 and err.count("featurizing graphs 12/12") == 1 and moved and moved[0] > 0
              and err.count("brought to a host") == 1 and err.count("== dlperf train, ") == 3,
              "train, three --kind: featurized once, the host norm on dippm alone (%s)" % err.strip()[-200:])
        for kind in sep:
            with open(sep[kind], "rb") as f1, open(os.path.join(gm, "one_%s.dlpm" % kind), "rb") as f2:
                check(f1.read() == f2.read(), "train, three --kind: %s the bytes of its own call" % kind)
        # bad combinations: usage errors before anything is read
        for name, args, msg in (
                ("mode", ["--kind", "linreg", "-o", hn, "--kind", "roofline", "-o", hn + "2",
                          "--mode", "llm"], "chooses other examples"),
                ("same -o", ["--kind", "linreg", "-o", hn, "--kind", "roofline", "-o", hn],
                 "the -o of two --kind"),
                ("no -o", ["--kind", "linreg", "-o", hn, "--kind", "roofline"], "usage"),
                ("-o twice", ["--kind", "linreg", "-o", hn, "-o", hn + "2"], "given twice"),
                ("runtime+norm", ["--runtime", "eager", "--kind", "linreg", "-o", hn, "--kind",
                                  "roofline", "-o", hn + "2", "--host-norm", hostf2], "one --kind per call"),
                ("bad kind", ["--kind", "linreg", "-o", hn, "--kind", "nope", "-o", hn + "2"], "nope")):
            for q in (hn, hn + "2"):
                if os.path.exists(q):
                    os.remove(q)
            rc, out, err = run("train", hds, *args)
            check(rc == 2 and msg in err and not os.path.exists(hn) and not os.path.exists(hn + "2"),
                  "train, several --kind, %s: refused (%s)" % (name, err.strip()[-120:]))
        # a file that fails does not stop the others: exit 1, the rest written
        rc, out, err = run("train", hds, "--kind", "dippm+kern", "-o", hn + "3", "--parts",
                           sep["linreg"] + ",-", "--kind", "linreg", "-o", hn, "--quiet")
        check(rc == 1 and "dippm+kern -> " + hn + "3" in err and os.path.exists(hn)
              and not os.path.exists(hn + "3"),
              "train, several --kind: a failing file named, the others written (%s)" % err.strip()[-160:])
        rc, out, err = run("train", ds_valid, "--kind", "linreg", "--mode", "training",
                           "-o", hn, "--host-norm", hostf)
        check(rc == 0 and "brought to a host of 8.8 us" in err,
              "train --mode training --host-norm: a training fit trains (%s)" % err.strip()[-80:])

        # determinism
        a = run("predict", RESNET, "--device", "h100", "--batch", "5", "--json", *M)[1]
        b = run("predict", RESNET, "--device", "h100", "--batch", "5", "--json", *M)[1]
        check(a == b and a, "deterministic")

        # tree model: fit on the fixture dataset, predict a transformer
        xgb = os.path.join(models, "xgb_llm.dlpm")
        rc, out, err = run("tree", "fit", os.path.join(FIX, "dataset", "valid"), "-o", xgb,
                           "--rounds", "20")
        check(rc == 0 and os.path.exists(xgb) and "throughput_samples_s" in out,
              "dlperf tree fit writes a model")
        rc, out, err = run("predict", os.path.join(FIX, "models", "gpt_tiny.onnx"),
                           "--device", "h100", "--mode", "llm", "--precision", "bf16",
                           "--batch", "4", "--dim", "seq=64", "--json", *M)
        jl = json.loads(out) if rc == 0 else {}
        check(rc == 0 and jl["predictors"].get("throughput_per_s") == "xgb" and
              abs(jl["latency_ms"] - 4 / jl["throughput_per_s"] * 1e3) < 1e-4 * jl["latency_ms"],
              "llm mode through xgb (%s)" % err.strip()[:80])
        # host-aware LLM eager (--mode llm --host-us, models/host-llm.csv):
        # the factor on the eager and CUDA-graph throughputs seen as
        # latencies, throughput divided by it; refused without the file
        # and for training (a roofline LLM file: the fixture's LLM rows are
        # CUDA-graph only, so the trees above answer no eager request)
        lm = os.path.join(tmp, "models_llm")
        os.makedirs(lm)
        write_model(os.path.join(lm, "llm.dlpm"), "roofline", "llm", TARGETS[7:10],
                    "H100-SXM5-80GB", [entry(3, "roofline/version", "1")])
        lb = ["predict", os.path.join(FIX, "models", "gpt_tiny.onnx"), "--device",
              "h100", "--mode", "llm", "--precision", "bf16", "--batch", "4",
              "--dim", "seq=64", "--json", "--models", lm]
        rc, out, err = run(*lb, "--runtime", "eager", "--host-us", "12")
        check(rc == 1 and "host-llm.csv" in err,
              "llm --host-us without host-llm.csv: exit 1")
        with open(os.path.join(lm, "host-llm.csv"), "w") as f:
            f.write("format,dlperf-host-1\nbeta,0.75\nref_us,6\n"
                    "energy_gamma,0.8\n")
        le = json.loads(run(*lb, "--runtime", "eager")[1])
        lg = json.loads(run(*lb, "--runtime", "graph")[1])
        rc, out, err = run(*lb, "--runtime", "eager", "--host-us", "12")
        lh = json.loads(out) if rc == 0 else {}
        h = min(1, max(0, 1 - lg["latency_ms"] / le["latency_ms"]))
        want = math.exp(h * 0.75 * math.log(2))
        check(rc == 0 and lh["host_factor"] != 1 and
              abs(lh["host_factor"] - want) < 1e-4 * want and
              abs(lh["latency_ms"] / le["latency_ms"] - want) < 1e-4 * want and
              abs(le["throughput_per_s"] / lh["throughput_per_s"] - want) < 1e-4 * want,
              "llm --host-us 12 at ref 6: throughput / 2^(h beta), h %.3f (%s)"
              % (h, err.strip()[:80]))
        fe = 1 + 0.8 * (want - 1)
        check(rc == 0 and le["energy_j"] is not None and
              abs(lh["host_energy_factor"] - fe) < 1e-4 * fe and
              abs(lh["energy_j"] / le["energy_j"] - fe) < 1e-4 * fe,
              "llm --host-us 12: energy x 1 + gamma (f - 1) (%s %s)"
              % (lh.get("energy_j"), le.get("energy_j")))
        rc, out, err = run(*lb, "--runtime", "graph", "--host-us", "12")
        check(rc == 1 and "eager" in err, "llm --host-us with the graph runtime: exit 1")
        rc, out, err = run("predict", RESNET, "--device", "h100", "--mode", "training",
                           "--host-us", "12", *M)
        check(rc == 1 and "eager" in err, "--host-us for training: exit 1")
        # the batch bound by its symbolic name, as any other dim: same
        # request as --batch 4 (the default batch 1 used to win)
        rc2, out2, err2 = run("predict", os.path.join(FIX, "models", "gpt_tiny.onnx"),
                              "--device", "h100", "--mode", "llm", "--precision", "bf16",
                              "--dim", "batch=4", "--dim", "seq=64", "--json", *M)
        jd = json.loads(out2) if rc2 == 0 else {}
        check(rc2 == 0 and jd.get("batch") == 4 and jd.get("latency_ms") == jl.get("latency_ms"),
              "--dim batch=4 is --batch 4 (%s)" % (err2.strip()[:80] or jd.get("batch")))
        # the fit stores its trees as forests: nothing for convert --forests
        # to do (the file unchanged); --json with --forests is refused
        with open(xgb, "rb") as f:
            before = f.read()
        rc, out, err = run("tree", "convert", xgb, "--forests")
        with open(xgb, "rb") as f:
            after = f.read()
        check(rc == 0 and "0 booster(s) stored as forests" in out and
              "unchanged" in out and before == after and b"forest/xgb/" in before and
              b"blob/xgb/" not in before,
              "tree convert --forests on a fitted file: no boosters, unchanged (%s)"
              % (out.strip() or err.strip())[:80])
        rc, out, err = run("tree", "convert", xgb, "--forests", "--json")
        check(rc == 2 and "not both" in err, "tree convert --forests --json: exit 2")
        rc, out, err = run("tree", "fit", os.path.join(FIX, "dataset", "valid"),
                           "--device", "T4")
        check(rc == 1 and "llm" in err, "tree fit without rows: clear error")
        xgb_exact = os.path.join(models, "xgb_llm_exact.dlpm")
        rc, out, err = run("tree", "fit", os.path.join(FIX, "dataset", "valid"),
                           "-o", xgb_exact, "--rounds", "20", "--method", "exact")
        check(rc == 0 and os.path.exists(xgb_exact) and "throughput_samples_s" in out,
              "dlperf tree fit --method exact writes a model")
        rc, out, err = run("tree", "fit", "/nonexistent")
        check(rc == 1 and "/nonexistent" in err, "tree fit: bad dataset dir")
        # train --refit: the trees (no early stopping) trained again on the
        # training and validation examples once validated. The file keeps
        # the first fit's validation figures (printed the same) and says
        # so; scored on every example of the fixture (its validation model
        # included) the refitted file is far closer, the plain one missing
        # the model it never saw. In a blend the tree part refits once the
        # blend is measured: its validation figures print the same, its
        # tree part closes on the validation model; a blend with no part
        # that refits keeps its bytes. eval --refit records it in the
        # row's source
        ds_valid = os.path.join(FIX, "dataset", "valid")
        outs, mape, bouts, bmape = {}, {}, {}, {}
        for tag, extra in (("plain", []), ("refit", ["--refit"])):
            d = os.path.join(tmp, "refit_" + tag)
            os.makedirs(d)
            rc, out, err = run("train", ds_valid, "--kind", "xgb", "-o",
                               os.path.join(d, "xgb-inference.dlpm"), *extra)
            outs[tag] = (rc, [l for l in out.splitlines() if "validation MAPE" in l])
            rc2, sc, err2 = run("eval", ds_valid, "--models", d, "--kind", "xgb",
                                "--quiet", "--top-models", "0")
            rows = [l.split() for l in sc.splitlines() if l.startswith("inference.latency_ms")]
            mape[tag] = float(rows[0][3].rstrip("%")) if rc2 == 0 and rows else None
            rc3, out3, err3 = run("train", ds_valid, "--kind", "roofline+xgb",
                                  "-o", os.path.join(d, "roofline+xgb-inference.dlpm"),
                                  *extra)
            bouts[tag] = (rc3, [l for l in out3.splitlines() if "validation MAPE" in l])
            run("train", ds_valid, "--kind", "roofline", "-o",
                os.path.join(d, "roofline-inference.dlpm"))
            pf = os.path.join(d, "pred.csv")
            run("eval", ds_valid, "--models", d, "--kind", "roofline,xgb,roofline+xgb",
                "--quiet", "--top-models", "0", "--predictions", pf)
            lat = {}
            for r in (csv.DictReader(open(pf)) if os.path.exists(pf) else []):
                if r["target"] == "inference.latency_ms" and r["predicted"]:
                    key = (r["graph"], r["runtime"], r["precision"], r["batch"])
                    lat.setdefault(r["kind"], {})[key] = float(r["predicted"])
            bmape[tag] = lat
            run("train", ds_valid, "--kind", "roofline+linreg", "-o",
                os.path.join(d, "norefit.dlpm"), *extra)
        with open(os.path.join(tmp, "refit_refit", "xgb-inference.dlpm"), "rb") as f:
            info = f.read()
        check(outs["plain"][0] == 0 and outs["refit"][0] == 0 and
              len(outs["plain"][1]) == 3 and outs["plain"][1] == outs["refit"][1] and
              b"then trained on both (--refit" in info,
              "train --refit: the first fit's validation figures, said in the file: %s" % outs)
        check(mape["plain"] is not None and mape["refit"] is not None and
              mape["refit"] < 5 and mape["plain"] > 4 * mape["refit"],
              "train --refit: trained on the validation model too (%s)" % mape)
        with open(os.path.join(tmp, "refit_refit", "roofline+xgb-inference.dlpm"), "rb") as f:
            binfo = f.read()
        check(bouts["plain"][0] == 0 and bouts["refit"][0] == 0 and
              len(bouts["plain"][1]) >= 3 and bouts["plain"][1] == bouts["refit"][1] and
              b"then its tree parts trained on both (--refit" in binfo,
              "train --refit: a blend keeps the validation figures of its "
              "parts' first fits: %s" % bouts)
        # oracle: a blend's latency is the geometric mean of its parts'
        # (pred_blend.c), the tree part the one `train --kind xgb` writes
        # with the same options
        def blend_err(lat):
            b, r, x = (lat.get(k, {}) for k in ("roofline+xgb", "roofline", "xgb"))
            return max([abs(b[g] / math.sqrt(r[g] * x[g]) - 1) for g in b
                        if g in r and g in x] or [1]), len(b)
        ep, np_ = blend_err(bmape["plain"])
        er, nr = blend_err(bmape["refit"])
        moved = [g for g in bmape["refit"].get("roofline+xgb", {})
                 if abs(bmape["refit"]["roofline+xgb"][g] /
                        bmape["plain"].get("roofline+xgb", {}).get(g, 1e30) - 1) > 1e-3]
        check(np_ == 48 and nr == 48 and ep < 1e-6 and er < 1e-6 and len(moved) >= 4,
              "train --refit: a blend's tree part is the refitted tree "
              "(latency the geometric mean of roofline and the refitted xgb "
              "file to %.2g, of the plain one to %.2g without; %d of %d "
              "predictions moved)" % (er, ep, len(moved), nr))
        with open(os.path.join(tmp, "refit_plain", "norefit.dlpm"), "rb") as f:
            ba = f.read()
        with open(os.path.join(tmp, "refit_refit", "norefit.dlpm"), "rb") as f:
            bb = f.read()
        check(ba and ba == bb, "train --refit: a blend with no part that "
              "refits keeps its bytes")
        rec = os.path.join(tmp, "refit_rec.csv")
        rc, out, err = run("eval", ds_valid, "--kind", "xgb", "--refit",
                           "--record", rec, "--quiet", "--top-models", "0")
        check(rc == 0 and os.path.exists(rec) and
              all("; refit" in l for l in open(rec).read().splitlines()[1:]),
              "eval --refit: the record's source says refit (%s)" % err.strip()[-120:])
        for opt, bad in (("--rounds", "0"), ("--depth", "-2"), ("--eta", "0"),
                         ("--subsample", "0"), ("--colsample", "1.5"),
                         ("--colsample", "x"), ("--method", "approx")):
            rc, out, err = run("tree", "fit", os.path.join(FIX, "dataset", "valid"),
                               opt, bad)
            check(rc == 2 and opt in err and bad in err,
                  "tree fit %s %s: refused, not read as the mode's default" % (opt, bad))

        # the shipped models, when present: default --models from the binary
        shipped = os.path.join(ROOT, "models")
        has = os.path.isdir(shipped) and any(f.endswith(".dlpm") for f in os.listdir(shipped))
        names = os.listdir(shipped) if has else []
        if any("inference" in n for n in names) or not has:
            rc, out, err = run("predict", RESNET, "--device", "h100", "--json", cwd=tmp)
        else:   # only language-model predictors shipped so far
            rc, out, err = run("predict", os.path.join(FIX, "models", "gpt_tiny.onnx"),
                               "--device", "h100", "--mode", "llm", "--precision", "bf16",
                               "--dim", "seq=128", "--json", cwd=tmp)
        if has:
            check(rc == 0 and "latency_ms" in out,
                  "shipped models work from another cwd (%s)" % err.strip()[:80])
        else:
            check(rc == 1 and "models" in err, "no shipped models: clear error")
        # One graph's prediction runs its products in src/nn/nn_small_gemm.c
        # and never opens OpenBLAS (2.3 ms of a ~10 ms process): glibc's
        # LD_DEBUG=files lists every library the process opens, the dlopen'd
        # ones too. Only on CPUs with AVX2 and FMA (elsewhere the library
        # runs the products).
        flags = open("/proc/cpuinfo").read().split() if os.path.exists("/proc/cpuinfo") else []
        if has and "avx2" in flags and "fma" in flags and \
                any("dippm-inference" in n for n in names):
            p = subprocess.run([DLPERF, "predict", RESNET, "--device", "h100", "--json"],
                               capture_output=True, text=True, timeout=120, cwd=tmp,
                               env=dict(os.environ, LD_DEBUG="files"))
            opened = [l for l in p.stderr.splitlines() if "file=" in l]
            check(p.returncode == 0 and opened and
                  not any("blas" in l for l in opened),
                  "a one-graph DIPPM prediction opens no BLAS library (%d libraries: %s)"
                  % (len(opened), ", ".join(sorted({l.split("file=")[1].split()[0] for l in opened
                                                     if "blas" in l}))[:120]))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
