"""test_eval.py — metrics of src/eval checked against an independent
pure-Python implementation (definitions of MAPE, RMSPE, RMSE, accuracy
within 10% and Kendall's tau-b with ties), through ctypes on libdlperf.so,
on random data with ties and skipped points."""
import ctypes
import json
import math
import os
import random
import sys

BUILD = os.environ.get("DLP_BUILD", "build")
lib = ctypes.CDLL(os.path.join(BUILD, "libdlperf.so"))


class Metrics(ctypes.Structure):
    _fields_ = [("n", ctypes.c_int), ("mape", ctypes.c_double),
                ("rmspe", ctypes.c_double), ("rmse", ctypes.c_double),
                ("tau", ctypes.c_double), ("acc10", ctypes.c_double)]


D = ctypes.POINTER(ctypes.c_double)
lib.dlp_metrics_compute.argtypes = [D, D, ctypes.c_int, ctypes.POINTER(Metrics)]
lib.dlp_kendall_tau.argtypes = [D, D, ctypes.c_int]
lib.dlp_kendall_tau.restype = ctypes.c_double


def arr(xs):
    return (ctypes.c_double * len(xs))(*xs)


def tau_b(a, b):
    n0 = n1 = n2 = c = d = 0
    for i in range(len(a)):
        for j in range(i + 1, len(a)):
            n0 += 1
            da, db = a[i] - a[j], b[i] - b[j]
            n1 += da == 0
            n2 += db == 0
            if da and db:
                if (da > 0) == (db > 0):
                    c += 1
                else:
                    d += 1
    return (c - d) / math.sqrt((n0 - n1) * (n0 - n2))


def oracle(y, p):
    pts = [(a, b) for a, b in zip(y, p) if a > 0 and math.isfinite(a) and math.isfinite(b)]
    r = [(b - a) / a for a, b in pts]
    n = len(pts)
    return dict(n=n, mape=sum(abs(x) for x in r) / n,
                rmspe=math.sqrt(sum(x * x for x in r) / n),
                rmse=math.sqrt(sum((b - a) ** 2 for a, b in pts) / n),
                acc10=sum(abs(x) <= 0.1 + 1e-12 for x in r) / n,
                tau=tau_b([a for a, _ in pts], [b for _, b in pts]))


passed = failed = 0


def check(name, ok, msg=""):
    global passed, failed
    if ok:
        passed += 1
        print("ok", name)
    else:
        failed += 1
        print("not ok", name, msg, file=sys.stderr)


def write_rows(path, rows):
    """rows (csv.DictReader dicts) back into a CSV file at path"""
    with open(path, "w", newline="") as fo:
        w = csv.DictWriter(fo, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)


def read_kv(path):
    """a key,value file (models/host.csv) as a dict; {} when absent"""
    if not os.path.exists(path):
        return {}
    return dict(l.strip().split(",", 1) for l in open(path)
                if "," in l and not l.startswith("#"))


rng = random.Random(5)
for trial in range(5):
    n = 300
    y = [round(rng.uniform(0.1, 100), 1) for _ in range(n)]   # ties
    p = [v * rng.choice([0.8, 0.95, 1.0, 1.05, 1.3]) for v in y]
    y[3], y[7] = 0.0, float("nan")                           # skipped
    p[11] = float("inf")
    m = Metrics()
    lib.dlp_metrics_compute(arr(y), arr(p), n, ctypes.byref(m))
    o = oracle(y, p)
    ok = m.n == o["n"] and all(
        abs(getattr(m, k) - o[k]) <= 1e-9 * max(1, abs(o[k]))
        for k in ("mape", "rmspe", "rmse", "acc10", "tau"))
    check("metrics_random_%d" % trial, ok,
          "%r vs %r" % ({k: getattr(m, k) for k in o}, o))

# a deliberately wrong oracle must disagree (the check can fail)
y = [1.0, 2.0, 3.0, 4.0]
p = [1.0, 3.0, 2.0, 4.0]
t = lib.dlp_kendall_tau(arr(y), arr(p), 4)
check("tau_discordant", abs(t - 4 / 6) < 1e-12 and abs(t - 1.0) > 0.1)

# the CLI: a blend kind, a nested plot directory created on demand, and
# the errors for a plot path that is a file and for an unknown blend part
import subprocess
import tempfile
DLPERF = os.path.join(BUILD, "dlperf")
FIXDS = os.path.join("tests", "fixtures", "dataset", "valid")
with tempfile.TemporaryDirectory() as tmp:
    pd = os.path.join(tmp, "a", "b")
    r = subprocess.run([DLPERF, "eval", FIXDS, "--kind",
                        "linreg,roofline,linreg+roofline", "--quiet",
                        "--plot-dir", pd], capture_output=True, text=True)
    check("cli_blend_rc", r.returncode == 0, r.stderr[-300:])
    check("cli_blend_table", "== linreg+roofline, inference" in r.stdout,
          r.stdout[-300:])
    svgs = sorted(os.listdir(pd)) if os.path.isdir(pd) else []
    check("cli_nested_plot_dir",
          "linreg+roofline-lmo-inference.latency_ms.svg" in svgs and
          "linreg-lmo-inference.latency_ms.svg" in svgs, repr(svgs[:4]))
    f = os.path.join(tmp, "file")
    open(f, "w").close()
    r = subprocess.run([DLPERF, "eval", FIXDS, "--kind", "linreg", "--quiet",
                        "--plot-dir", os.path.join(f, "x")],
                       capture_output=True, text=True)
    check("cli_plot_dir_is_file", r.returncode == 1 and
          "cannot create" in r.stderr, r.stderr[-200:])
    r = subprocess.run([DLPERF, "eval", FIXDS, "--kind", "linreg+nosuch"],
                       capture_output=True, text=True)
    check("cli_blend_unknown_part", r.returncode == 2 and
          "nosuch" in r.stderr, r.stderr[-200:])
    # the largest error shares per model: printed by default, 2 rows
    # with --top-models 2, none with 0, and a bad count is a usage error
    r = subprocess.run([DLPERF, "eval", FIXDS, "--kind", "linreg", "--quiet",
                        "--top-models", "2"], capture_output=True, text=True)
    rows = [l for l in r.stdout.splitlines() if "  share " in l]
    check("cli_top_models", r.returncode == 0 and
          "largest shares of the inference.latency_ms error" in r.stdout and
          len([l for l in rows if l.strip()]) >= 2, r.stdout[-400:])
    r = subprocess.run([DLPERF, "eval", FIXDS, "--kind", "linreg", "--quiet",
                        "--top-models", "0"], capture_output=True, text=True)
    check("cli_top_models_off", r.returncode == 0 and
          "largest shares" not in r.stdout, r.stdout[-200:])
    r = subprocess.run([DLPERF, "eval", FIXDS, "--top-models", "-1"],
                       capture_output=True, text=True)
    check("cli_top_models_bad", r.returncode == 2 and
          "--top-models" in r.stderr, r.stderr[-200:])
    # --split-seed: runs differing in --seed alone share their folds (the
    # ensemble ablation of docs/EVAL.md); the networks differ
    def folds(extra, name):
        pf = os.path.join(tmp, name)
        r = subprocess.run([DLPERF, "eval", FIXDS, "--kind", "dippm", "--quiet",
                            "--epochs", "2", "--hidden", "8", "--top-models", "0",
                            "--predictions", pf] + extra,
                           capture_output=True, text=True)
        if r.returncode != 0 or not os.path.exists(pf):
            return None, r.stderr[-300:]
        import csv
        rows = list(csv.DictReader(open(pf)))
        key = lambda x: (x["graph"], x["device"], x["runtime"], x["precision"],
                         x["batch"], x["seq"], x["height"], x["target"])
        return {key(x): (x["fold"], x["predicted"]) for x in rows}, ""
    a, ea = folds(["--seed", "5"], "s5.csv")
    b, eb = folds(["--seed", "6", "--split-seed", "5"], "s6.csv")
    check("cli_split_seed_runs", a is not None and b is not None, ea + eb)
    if a and b:
        check("cli_split_seed_same_folds", a.keys() == b.keys() and
              all(a[k][0] == b[k][0] for k in a), "folds differ")
        check("cli_split_seed_other_net",
              any(a[k][1] != b[k][1] for k in a), "same predictions")
    r = subprocess.run([DLPERF, "eval", FIXDS, "--split-seed", "x"],
                       capture_output=True, text=True)
    check("cli_split_seed_bad", r.returncode == 2 and
          "--split-seed" in r.stderr, r.stderr[-200:])
    # --ema: the weights' moving average never moves the training itself
    # (the epochs' losses are those of the run without it), and each
    # epoch's validation error is the lower of the weights' and the
    # average's, so with patience past the last epoch it is at or below
    # the plain run's epoch by epoch; where the average won an epoch the
    # file differs
    import re
    def epochs(extra, name):
        f = os.path.join(tmp, name)
        r = subprocess.run([DLPERF, "train", FIXDS, "--kind", "dippm",
                            "--epochs", "6", "--patience", "9", "--hidden",
                            "8", "--seed", "3", "-o", f] + extra,
                           capture_output=True, text=True)
        ep = re.findall(r"epoch (\d+)/6  loss ([0-9.]+)  val MAPE ([0-9.]+)%",
                        r.stderr)
        data = open(f, "rb").read() if os.path.exists(f) else b""
        return r, [(e[1], float(e[2])) for e in ep], data
    r0, e0, d0 = epochs([], "plain.dlpm")
    r1, e1, d1 = epochs(["--ema", "0.9"], "ema.dlpm")
    check("cli_ema_runs", r0.returncode == 0 and r1.returncode == 0 and
          len(e0) == 6 and len(e1) == 6, r0.stderr[-300:] + r1.stderr[-300:])
    if len(e0) == len(e1) == 6:
        check("cli_ema_same_training", [x[0] for x in e0] == [x[0] for x in e1],
              repr(e0) + repr(e1))
        check("cli_ema_val_lower", all(b[1] <= a[1] for a, b in zip(e0, e1)),
              repr(e0) + repr(e1))
        won = any(b[1] < a[1] for a, b in zip(e0, e1))
        check("cli_ema_file", won and d0 and d1 and d0 != d1,
              "average never won: " + repr(e1))
    for bad in ("1", "x", "-0.5"):
        f = os.path.join(tmp, "bad_ema.dlpm")
        r = subprocess.run([DLPERF, "train", FIXDS, "--kind", "dippm",
                            "--ema", bad, "-o", f], capture_output=True,
                           text=True)
        check("cli_ema_bad_" + bad, r.returncode == 2 and "--ema" in r.stderr
              and not os.path.exists(f), r.stderr[-200:])
    # --record: each row's source names the data (its newest batch, the
    # feature schema) and the run's options, without a comma (a CSV cell)
    rec = os.path.join(tmp, "held.csv")
    r = subprocess.run([DLPERF, "eval", FIXDS, "--kind", "linreg", "--quiet",
                        "--top-models", "0", "--seed", "4", "--split-seed", "2",
                        "--epochs", "3", "--readout", "mean+lse",
                        "--ema", "0.9", "--record", rec],
                       capture_output=True, text=True)
    import csv
    recs = list(csv.DictReader(open(rec))) if os.path.exists(rec) else []
    newest = max(os.listdir(os.path.join(FIXDS, "batches")))
    check("cli_record_source", r.returncode == 0 and recs and all(
        (" through %s; schema " % newest) in x["source"] and
        "; seed 4; split-seed 2; epochs 3; ema 0.9; readout mean+lse" in
        x["source"] and
        "," not in x["source"] for x in recs),
        r.stderr[-200:] + repr(recs[:1]))
    # scripts/ensemble_mape.sh: the geometric mean of matching rows of two
    # predictions files against each file's own MAPE (hand-computed)
    hdr = ("kind,split,fold,model,family,graph,device,runtime,precision,"
           "batch,seq,height,width,target,actual,predicted,rel_err\n")
    def row(kind, graph, pred, actual=10.0, rt="graph"):
        return ("%s,lmo,0,m,f,%s,H100-SXM5-80GB,%s,fp16,1,0,224,224,"
                "inference.latency_ms,%g,%g,0\n" % (kind, graph, rt, actual, pred))
    fa, fb = os.path.join(tmp, "ea.csv"), os.path.join(tmp, "eb.csv")
    with open(fa, "w") as f:
        f.write(hdr + row("dippm", "g1", 8) + row("dippm", "g2", 10) +
                row("dippm", "g3", 5) + row("xgb", "g1", 1))
    with open(fb, "w") as f:   # g3 only in the first file: not counted
        f.write(hdr + row("dippm", "g2", 22.5) + row("dippm", "g1", 12.5))
    r = subprocess.run(["sh", os.path.join("scripts", "ensemble_mape.sh"), fa, fb],
                       capture_output=True, text=True)
    line = [l.split() for l in r.stdout.splitlines() if l.startswith("inference.latency_ms")]
    # g1: sqrt(8 * 12.5) = 10 -> 0%; g2: sqrt(10 * 22.5) = 15 -> 50%;
    # file 1: (20% + 0%) / 2; file 2: (25% + 125%) / 2
    want = ["inference.latency_ms", "graph", "2", "25.00%", "10.00%", "75.00%"]
    check("ensemble_mape_oracle", r.returncode == 0 and line == [want],
          r.stdout + r.stderr)
    # DEVICE keeps one device's rows: none here are the H200's
    env = dict(os.environ, DEVICE="H200-SXM-141GB")
    r = subprocess.run(["sh", os.path.join("scripts", "ensemble_mape.sh"), fa, fb],
                       capture_output=True, text=True, env=env)
    check("ensemble_mape_device", r.returncode == 0 and
          not any(l.startswith("inference.") for l in r.stdout.splitlines()),
          r.stdout + r.stderr)
    env["DEVICE"] = "H100-SXM5-80GB"
    r2 = subprocess.run(["sh", os.path.join("scripts", "ensemble_mape.sh"), fa, fb],
                        capture_output=True, text=True, env=env)
    check("ensemble_mape_device_kept", r2.returncode == 0 and
          [l.split() for l in r2.stdout.splitlines()
           if l.startswith("inference.latency_ms")] == [want], r2.stdout + r2.stderr)
    r = subprocess.run(["sh", os.path.join("scripts", "ensemble_mape.sh"), fa],
                       capture_output=True, text=True)
    check("ensemble_mape_usage", r.returncode == 2 and "usage" in r.stderr,
          r.stderr[-200:])
    # scripts/paired_mape.sh on the same two files: g1 and g2 in both;
    # |error| file 1: 20%, 0%; file 2: 25%, 125%; differences +5, +125;
    # mean +65, sd sqrt(((5-65)^2 + (125-65)^2) / 1) = 84.85, se 60.00
    r = subprocess.run(["sh", os.path.join("scripts", "paired_mape.sh"), fa, fb],
                       capture_output=True, text=True)
    line = [l.split() for l in r.stdout.splitlines() if l.startswith("inference.latency_ms")]
    check("paired_mape_oracle", r.returncode == 0 and line == [
        ["inference.latency_ms", "graph", "2", "10.00%", "75.00%", "+65.00",
         "(60.00)"]], r.stdout + r.stderr)
    env = dict(os.environ, KIND="xgb,dippm")   # file 1's xgb g1 (90%)
    r = subprocess.run(["sh", os.path.join("scripts", "paired_mape.sh"), fa, fb],
                       capture_output=True, text=True, env=env)
    line = [l.split() for l in r.stdout.splitlines() if l.startswith("inference.latency_ms")]
    check("paired_mape_kinds", r.returncode == 0 and line == [
        ["inference.latency_ms", "graph", "1", "90.00%", "25.00%", "-65.00",
         "(0.00)"]], r.stdout + r.stderr)
    r = subprocess.run(["sh", os.path.join("scripts", "paired_mape.sh"), fa],
                       capture_output=True, text=True)
    check("paired_mape_usage", r.returncode == 2 and "usage" in r.stderr,
          r.stderr[-200:])
    # scripts/asmeasured_mape.sh: a --host-norm run's predictions against
    # the labels as measured (the mean of each configuration's rows), per
    # runtime with RUNTIME. g1 eager measured 10 and 12 (mean 11), the file
    # holds it moved to 10, predicted 9: 10% against the file, 2/11 =
    # 18.18% as measured; g1 graph 5 both ways, predicted 6: 20%.
    dd = os.path.join(tmp, "asm")
    os.makedirs(os.path.join(dd, "batches", "b1"), exist_ok=True)
    with open(os.path.join(dd, "batches", "b1", "inference.csv"), "w") as f:
        f.write("hash,device,rep,status,runtime,precision,batch,seq,height,"
                "width,latency_ms\n")
        for rep_, rt, v in ((0, "eager", 10), (1, "eager", 12),
                            (0, "graph", 5), (1, "graph", 5)):
            f.write("g1,H100-SXM5-80GB,%d,ok,%s,fp16,1,,224,224,%g\n"
                    % (rep_, rt, v))
        f.write("g1,H100-SXM5-80GB,0,oom,eager,fp16,1,,224,224,99\n")
    fp = os.path.join(tmp, "asm.csv")
    with open(fp, "w") as f:
        f.write(hdr + row("dippm", "g1", 9, 10, "eager") +
                row("dippm", "g1", 6, 5, "graph") +
                row("xgb", "g1", 1, 10, "eager"))
    def asm(rt):
        env = dict(os.environ, RUNTIME=rt)
        return subprocess.run(["sh", os.path.join("scripts", "asmeasured_mape.sh"),
                               fp, dd, "dippm", "inference.latency_ms"],
                              capture_output=True, text=True, env=env)
    r = asm("")
    check("asmeasured_all", r.returncode == 0 and
          "2 rows, MAPE 15.00% against the labels of the file, 19.09% against "
          "the labels as measured" in r.stdout and
          "the 1 rows whose label was changed: 10.00% / 18.18%" in r.stdout,
          r.stdout + r.stderr)
    r = asm("eager")
    check("asmeasured_eager", r.returncode == 0 and
          "(eager): 1 rows, MAPE 10.00% against the labels of the file, "
          "18.18% against the labels as measured" in r.stdout, r.stdout + r.stderr)
    r = asm("graph")
    check("asmeasured_graph", r.returncode == 0 and
          "(graph): 1 rows, MAPE 20.00% against the labels of the file, "
          "20.00% against the labels as measured" in r.stdout and
          "changed" not in r.stdout, r.stdout + r.stderr)
    r = asm("cuda")
    check("asmeasured_bad_runtime", r.returncode == 2 and "RUNTIME" in r.stderr,
          r.stderr[-200:])
    # one kind per file (KIND=xgb,dippm: file 1's xgb rows with file 2's
    # dippm rows) and the ensemble's predictions written by OUT
    fo = os.path.join(tmp, "eo.csv")
    env = dict(os.environ, KIND="xgb,dippm", OUT=fo)
    r = subprocess.run(["sh", os.path.join("scripts", "ensemble_mape.sh"), fa, fb],
                       capture_output=True, text=True, env=env)
    line = [l.split() for l in r.stdout.splitlines() if l.startswith("inference.latency_ms")]
    # g1 only (file 1 has no xgb g2): sqrt(1 * 12.5) = 3.5355 -> 64.64%;
    # file 1 90%, file 2 25%
    got = list(csv.DictReader(open(fo))) if os.path.exists(fo) else []
    gm = math.sqrt(12.5)
    check("ensemble_mape_kinds_out", r.returncode == 0 and
          line == [["inference.latency_ms", "graph", "1", "64.64%", "90.00%", "25.00%"]] and
          len(got) == 1 and got[0]["kind"] == "xgb+dippm" and got[0]["graph"] == "g1" and
          abs(float(got[0]["predicted"]) - gm) < 1e-6 and
          abs(float(got[0]["rel_err"]) - (gm / 10 - 1)) < 1e-6 and
          got[0]["actual"] == "10", r.stdout + r.stderr + repr(got))
    env = dict(os.environ, KIND="xgb,dippm,linreg")
    r = subprocess.run(["sh", os.path.join("scripts", "ensemble_mape.sh"), fa, fb],
                       capture_output=True, text=True, env=env)
    check("ensemble_mape_kinds_count", r.returncode == 2 and "3 kinds for 2 files"
          in r.stderr, r.stderr[-200:])
    # scripts/error_levels.sh: the MAPE after each group's mean log error
    # is taken out (hand-computed). g1 at two batch sizes, ln errors +ln 2
    # and -ln 2 (100% and 50%); g2 once, exact; all one model
    def lrow(graph, prec, batch, pred, actual=10.0, kind="dippm"):
        return ("%s,lmo,0,m,f,%s,H100-SXM5-80GB,graph,%s,%d,0,224,224,"
                "inference.latency_ms,%g,%g,0\n" % (kind, graph, prec, batch,
                                                     actual, pred))
    fl = os.path.join(tmp, "levels.csv")
    with open(fl, "w") as f:
        f.write(hdr + lrow("g1", "fp16", 1, 20) + lrow("g1", "fp16", 2, 5) +
                lrow("g2", "fp32", 1, 10) + lrow("g1", "fp16", 1, 99, kind="xgb"))
    levels = os.path.join("scripts", "error_levels.sh")
    r = subprocess.run(["sh", levels, fl], capture_output=True, text=True)
    got = {l[:46].strip(): l[46:].split() for l in r.stdout.splitlines()[1:]}
    # as predicted (100 + 50 + 0) / 3; the model's mean is 0: the same;
    # g1's mean is 0 (g2 alone does not count): (100 + 50) / 2; each
    # configuration is alone: no rows
    check("error_levels_oracle", r.returncode == 0 and
          got.get("(nothing: as predicted)") == ["3", "50.00%"] and
          got.get("model") == ["3", "50.00%"] and
          got.get("graph") == ["2", "75.00%"] and
          got.get("configuration (both cards)") == ["0", "-"],
          r.stdout + r.stderr)
    env = dict(os.environ, GROUP="graph,precision")
    r = subprocess.run(["sh", levels, fl], capture_output=True, text=True, env=env)
    rows = sorted(l.split() for l in r.stdout.splitlines()[1:])
    check("error_levels_group", r.returncode == 0 and
          rows == [["g1,fp16", "2", "0.000", "75.00%"],
                   ["g2,fp32", "1", "0.000", "0.00%"]], r.stdout + r.stderr)
    env = dict(os.environ, PRECISION="fp32")
    r = subprocess.run(["sh", levels, fl], capture_output=True, text=True, env=env)
    got = {l[:46].strip(): l[46:].split() for l in r.stdout.splitlines()[1:]}
    check("error_levels_filter", r.returncode == 0 and
          got.get("(nothing: as predicted)") == ["1", "0.00%"] and
          got.get("model") == ["0", "-"], r.stdout + r.stderr)
    env = dict(os.environ, GROUP="nosuchcolumn")
    r = subprocess.run(["sh", levels, fl], capture_output=True, text=True, env=env)
    check("error_levels_bad_group", r.returncode == 2 and
          "nosuchcolumn" in r.stderr, r.stdout + r.stderr)
    env = dict(os.environ, KIND="trappm")
    r = subprocess.run(["sh", levels, fl], capture_output=True, text=True, env=env)
    check("error_levels_no_rows", r.returncode == 1 and "no rows" in r.stderr,
          r.stdout + r.stderr)
    r = subprocess.run(["sh", levels], capture_output=True, text=True)
    check("error_levels_usage", r.returncode == 2 and "usage" in r.stderr,
          r.stderr[-200:])
    # labels at sizes the graph cannot take (gen.py's conflict/ dataset):
    # dlperf train says how many bindings it skipped and which, and trains
    # on the 6 examples left
    r = subprocess.run([DLPERF, "train", os.path.join("tests", "fixtures",
                        "dataset", "conflict"), "--kind", "roofline", "-o",
                        os.path.join(tmp, "c.dlpm")], capture_output=True,
                       text=True)
    why = [l for l in r.stderr.splitlines() if "contradict the binding" in l]
    check("cli_train_skipped_why", r.returncode == 0 and
          "3 graph bindings could not be featurized" in r.stderr and
          len(why) == 3 and sum("16x16 px" in l for l in why) == 2 and
          sum("32x32 px" in l for l in why) == 1 and
          "on 6 examples" in r.stderr, r.stderr[-600:])
    # --readout takes mean, mean+cost or mixed and nothing else
    r = subprocess.run([DLPERF, "train", os.path.join("tests", "fixtures",
                        "dataset", "conflict"), "--kind", "dippm", "--readout",
                        "max", "-o", os.path.join(tmp, "r.dlpm")],
                       capture_output=True, text=True)
    check("cli_readout_bad", r.returncode != 0 and
          "--readout is mean, mean+cost, mixed, mean+lse or mixed-lse, not 'max'" in r.stderr and
          not os.path.exists(os.path.join(tmp, "r.dlpm")), r.stderr[-300:])

    # --fit-cache: the probes' workspace forests fitted once, then taken
    # from the folder; the files written are the same bytes with and
    # without it; a folder that is not one is refused before any work
    import lzma
    import shutil
    fcd = os.path.join(tmp, "fcdata")
    shutil.copytree(FIXDS, fcd)
    os.makedirs(os.path.join(fcd, "probes"), exist_ok=True)
    rng = random.Random(5)
    lines = []
    for prec in ("fp32", "fp16"):
        convs = []
        for i in range(80):
            n, c, k = rng.choice([1, 4, 16]), rng.choice([3, 16, 64]), rng.choice([8, 32, 128])
            hw, kk = rng.choice([8, 16, 32]), rng.choice([1, 3])
            io = (n * c * hw * hw + n * k * hw * hw) * (4 if prec == "fp32" else 2) / 2**20
            extra = rng.choice([0.0, 0.0, max(1.5, io) * rng.uniform(1.0, 8.0)])
            convs.append({"x": [n, c, hw, hw], "w": [k, c, kk, kk],
                          "y": [n, k, hw, hw], "s": [1, 1],
                          "p": [kk // 2, kk // 2], "d": [1, 1], "g": 1,
                          "cl": False, "extra_mib": extra,
                          "in_mib": n * c * hw * hw * 4 / 2**20,
                          "out_mib": n * k * hw * hw * 4 / 2**20})
        lines.append(json.dumps({"spec": "grid:convgrid", "prec": prec,
                                 "seed": 1, "convs": convs}))
    with lzma.open(os.path.join(fcd, "probes", "t-convws.jsonl.xz"), "wt") as f:
        f.write("\n".join(lines) + "\n")
    cache = os.path.join(tmp, "fitcache")
    os.makedirs(cache)
    outs, notes = [], []
    for k, extra in enumerate((["--fit-cache", cache], ["--fit-cache", cache], [])):
        od = os.path.join(tmp, "fc%d" % k)
        os.makedirs(od)
        r = subprocess.run([DLPERF, "train", fcd, "--kind", "roofline", "-o",
                            os.path.join(od, "r.dlpm"), "--quiet"] + extra,
                           capture_output=True, text=True)
        notes.append([l for l in r.stderr.splitlines() if "fit cache" in l])
        outs.append({f: open(os.path.join(od, f), "rb").read()
                     for f in sorted(os.listdir(od))} if r.returncode == 0 else None)
    check("cli_fit_cache_fits_then_takes", notes[0] == [
        "dlperf train: fit cache %s: 0 forest(s) taken from it, 4 fitted" % cache]
          and notes[1] == ["dlperf train: fit cache %s: 4 forest(s) taken "
                           "from it, 0 fitted" % cache] and notes[2] == [],
          repr(notes))
    check("cli_fit_cache_same_bytes", outs[0] is not None and
          any(f.startswith("convws-") for f in outs[0]) and
          outs[0] == outs[1] == outs[2], repr([sorted(o) if o else o for o in outs]))
    for cmd in (["train", fcd, "--kind", "roofline", "-o", os.path.join(tmp, "x.dlpm")],
                ["tree", "fit", fcd, "--mode", "inference"]):
        r = subprocess.run([DLPERF] + cmd + ["--fit-cache", "/nonexistent/fc"],
                           capture_output=True, text=True)
        check("cli_fit_cache_bad_" + cmd[0], r.returncode == 2 and
              "fit cache /nonexistent/fc" in r.stderr, r.stderr[-300:])

    # --parts: a blend's component from a file trained before on the same
    # split (the kern fixture; scripts/train_models.sh does this for the
    # LLM blend); the file checked against the split, the count and the
    # kind checked, nothing written when refused
    kdata = os.path.join("tests", "fixtures", "kern", "data")
    small = ["--epochs", "2", "--threads", "1", "--quiet"]
    dfile, kfile = os.path.join(tmp, "pd.dlpm"), os.path.join(tmp, "pk.dlpm")
    r1 = subprocess.run([DLPERF, "train", kdata, "--kind", "dippm", "-o", dfile]
                        + small, capture_output=True, text=True)
    r2 = subprocess.run([DLPERF, "train", kdata, "--kind", "kern", "-o", kfile]
                        + small, capture_output=True, text=True)
    bfile = os.path.join(tmp, "pb.dlpm")
    r = subprocess.run([DLPERF, "train", kdata, "--kind", "dippm+kern",
                        "--parts", dfile + ",-", "-o", bfile] + small,
                       capture_output=True, text=True)
    check("cli_parts_ok", r1.returncode == 0 and r2.returncode == 0 and
          r.returncode == 0 and "wrote" in r.stdout and
          os.path.getsize(bfile) > os.path.getsize(dfile),
          r1.stderr[-200:] + r2.stderr[-200:] + r.stderr[-300:])
    other = os.path.join(tmp, "po.dlpm")
    for name, parts, rc, msg in (
            ("kind", kfile + "," + kfile, 1, "is a 'kern' model file"),
            ("count", dfile + ",-,-", 2, "one file or '-' per part"),
            ("plain", dfile, 2, "--parts is for a blend"),
            ("split", dfile + ",-", 1, "was not trained on this split")):
        extra = ["--seed", "5"] if name == "split" else []
        r = subprocess.run([DLPERF, "train", kdata, "--kind",
                            "dippm" if name == "plain" else "dippm+kern",
                            "--parts", parts, "-o", other] + small + extra,
                           capture_output=True, text=True)
        check("cli_parts_bad_" + name, r.returncode == rc and msg in r.stderr
              and not os.path.exists(other), r.stderr[-300:])

    # --split-seed: the validation split's seed apart from --seed. A
    # roofline file depends on the split alone (its calibration on the
    # validation models): with --split-seed S it is the bytes of --seed
    # S's, whatever --seed, and seeds 1 and 5 split differently here. A
    # DIPPM file with the default seed's split named is the default's
    # bytes; another --seed on that split gives other networks
    def split_run(kind, extra, name):
        f = os.path.join(tmp, name)
        r = subprocess.run([DLPERF, "train", kdata, "--kind", kind, "-o", f,
                            "--epochs", "2", "--threads", "1", "--quiet"]
                           + extra, capture_output=True, text=True)
        return (r.returncode,
                open(f, "rb").read() if os.path.exists(f) else b"")
    roof = [split_run("roofline", e, "sr%d.dlpm" % i) for i, e in enumerate(
        (["--seed", "1"], ["--seed", "5"], ["--seed", "5", "--split-seed", "1"],
         ["--seed", "1", "--split-seed", "5"]))]
    gnn = [split_run("dippm", e, "sd%d.dlpm" % i) for i, e in enumerate(
        ([], ["--split-seed", "1"], ["--seed", "5", "--split-seed", "1"]))]
    check("cli_train_split_seed", all(r[0] == 0 and r[1] for r in roof + gnn)
          and roof[0][1] != roof[1][1] and roof[2][1] == roof[0][1] and
          roof[3][1] == roof[1][1] and gnn[1][1] == gnn[0][1] and
          gnn[2][1] != gnn[0][1],
          "rc %s" % [r[0] for r in roof + gnn])
    r = subprocess.run([DLPERF, "train", kdata, "--kind", "dippm", "-o",
                        os.path.join(tmp, "ss4.dlpm"), "--split-seed", "-3"],
                       capture_output=True, text=True)
    check("cli_train_split_seed_bad", r.returncode == 2 and
          "--split-seed wants a number >= 0, not '-3'" in r.stderr and
          not os.path.exists(os.path.join(tmp, "ss4.dlpm")), r.stderr[-300:])

    # --models: trained files scored on every example, nothing trained;
    # each prediction is what `dlperf predict` answers for the same graph
    # and configuration, and the printed MAPE is the oracle's over the
    # predictions file
    mdir = os.path.join(tmp, "m")
    os.makedirs(mdir)
    for kind in ("dippm", "roofline"):
        r = subprocess.run([DLPERF, "train", FIXDS, "--kind", kind, "--epochs",
                            "2", "--hidden", "8", "--quiet", "-o",
                            os.path.join(mdir, kind + "-inference.dlpm")],
                           capture_output=True, text=True)
        check("cli_models_train_" + kind, r.returncode == 0, r.stderr[-300:])
    sp = os.path.join(tmp, "scored.csv")
    r = subprocess.run([DLPERF, "eval", FIXDS, "--models", mdir, "--kind",
                        "dippm,roofline", "--quiet", "--top-models", "0",
                        "--predictions", sp], capture_output=True, text=True)
    rows = list(csv.DictReader(open(sp))) if os.path.exists(sp) else []
    lab = [x for x in rows if x["kind"] == "dippm" and
           x["target"] == "inference.latency_ms"]
    check("cli_models_scored", r.returncode == 0 and
          "== dippm, inference, the file in %s: 48 predictions ==" % mdir
          in r.stdout and len(lab) == 48 and
          all(x["split"] == "none" and x["fold"] == "0" for x in rows) and
          {x["kind"] for x in rows} == {"dippm", "roofline"},
          r.stdout[-300:] + r.stderr[-300:])
    o = oracle([float(x["actual"]) for x in lab],
               [float(x["predicted"]) for x in lab]) if lab else {"mape": -1}
    line = [l for l in r.stdout.splitlines()
            if l.startswith("inference.latency_ms") and " all " in l]
    check("cli_models_mape", line and
          ("%.2f%%" % (100 * o["mape"])) in line[0], repr(line[:1]) + repr(o))
    idx = {x["hash"]: x for x in csv.DictReader(open(os.path.join(
        FIXDS, "graphs", "index.csv")))}
    import shutil
    only = os.path.join(tmp, "only_dippm")   # predict's one file to choose
    os.makedirs(only)
    shutil.copy(os.path.join(mdir, "dippm-inference.dlpm"), only)
    seen, agree = set(), 0
    for x in lab:
        if x["seq"] != "0" or x["graph"] in seen:
            continue
        seen.add(x["graph"])
        subprocess.run(["tar", "--zstd", "-xf", os.path.join(
            FIXDS, "graphs", idx[x["graph"]]["pack"] + ".tar.zst"), "-C", tmp,
            x["graph"] + ".onnx"], check=True)
        dev = "h100" if x["device"].startswith("H100") else "h200"
        r = subprocess.run([DLPERF, "predict", os.path.join(tmp, x["graph"] +
                            ".onnx"), "--device", dev, "--precision",
                            x["precision"], "--runtime", x["runtime"],
                            "--batch", x["batch"], "--resolution", "%sx%s" %
                            (x["height"], x["width"]), "--models", only,
                            "--json"], capture_output=True, text=True)
        import json
        got = json.loads(r.stdout)["latency_ms"] if r.returncode == 0 else -1
        ok = abs(got - float(x["predicted"])) <= 1e-4 * float(x["predicted"])
        agree += ok
        check("cli_models_as_predict_" + x["graph"], ok,
              "predict %s, eval %s" % (got, x["predicted"]))
    check("cli_models_as_predict_count", agree >= 3, "%d graphs" % agree)
    for name, extra, rc, msg in (
            ("split", ["--split", "lmo"], 2, "no --split"),
            ("record", ["--record", os.path.join(tmp, "h.csv")], 2, "--record"),
            ("missing", ["--kind", "xgb"], 1, "xgb-inference.dlpm")):
        r = subprocess.run([DLPERF, "eval", FIXDS, "--models", mdir, "--quiet"]
                           + extra,
                           capture_output=True, text=True)
        check("cli_models_bad_" + name, r.returncode == rc and msg in r.stderr,
              "rc %d: %s" % (r.returncode, r.stderr[-300:]))
    # a file of another mode than the examples' is refused, naming both
    shutil.copy(os.path.join(mdir, "roofline-inference.dlpm"),
                os.path.join(mdir, "roofline-training.dlpm"))
    r = subprocess.run([DLPERF, "eval", FIXDS, "--models", mdir, "--kind",
                        "roofline", "--mode", "training", "--quiet"],
                       capture_output=True, text=True)
    check("cli_models_bad_mode", r.returncode == 1 and
          "the roofline file predicts inference, the examples are training"
          in r.stderr, r.stderr[-300:])

    # dlperf host apply: a fitted host file applied as it is to the scored
    # predictions of a copy of the fixture whose eager rows carry host_us;
    # the corrected MAPE against this oracle of the formula
    # (src/predict/predict_host.h), a missing file refused
    hds = os.path.join(tmp, "hostds")
    shutil.copytree(FIXDS, hds)
    hrng = random.Random(9)
    host_of, batch_of, batch_probes = {}, {}, {}
    for b in os.listdir(os.path.join(hds, "batches")):
        f = os.path.join(hds, "batches", b, "inference.csv")
        if not os.path.exists(f):
            continue
        rs = list(csv.DictReader(open(f)))
        cols = list(rs[0].keys()) + ["host_us"]
        for x in rs:
            x["host_us"] = ""
            if x["runtime"] == "eager":
                x["host_us"] = "%.3f" % hrng.uniform(5, 14)
                k = (x["hash"], x["device"], x["precision"], x["batch"],
                     x["seq"] or "0", x["height"] or "0", x["width"] or "0")
                host_of.setdefault(k, []).append(float(x["host_us"]))
                batch_of.setdefault(k, []).append(x["batch_id"])
                batch_probes.setdefault(x["batch_id"], []).append(float(x["host_us"]))
        with open(f, "w", newline="") as fo:
            w = csv.DictWriter(fo, fieldnames=cols)
            w.writeheader()
            w.writerows(rs)
    hp = os.path.join(tmp, "hostpred.csv")
    r = subprocess.run([DLPERF, "eval", hds, "--models", mdir, "--kind",
                        "dippm", "--quiet", "--top-models", "0",
                        "--predictions", hp], capture_output=True, text=True)
    # the fixture's files predict no eager latency above its CUDA-graph
    # twin (host-bound share h = 0, the correction a no-op): the eager
    # latencies x 3 give each an h of 2/3 or more
    if os.path.exists(hp):
        prs = list(csv.DictReader(open(hp)))
        for x in prs:
            if x["runtime"] == "eager" and x["target"] == "inference.latency_ms":
                x["predicted"] = repr(3 * float(x["predicted"]))
        write_rows(hp, prs)
    hfile = os.path.join(tmp, "host.csv")
    with open(hfile, "w") as f:
        f.write("format,dlperf-host-1\nbeta,1.3\nref_us,7.5\n"
                "energy_gamma,0.6\n")
    r = subprocess.run([DLPERF, "host", "apply", hp, hds, "--host", hfile],
                       capture_output=True, text=True)
    lat = [x for x in csv.DictReader(open(hp))
           if x["target"] == "inference.latency_ms"] if os.path.exists(hp) else []
    key = lambda x: (x["graph"], x["device"], x["precision"], x["batch"],
                     x["seq"], x["height"], x["width"])
    graph = {key(x): float(x["predicted"]) for x in lat if x["runtime"] == "graph"}

    def moved(x, hu, beta=1.3, ref=7.5):
        """the eager row x's predicted latency moved to host hu (the
        formula of src/predict/predict_host.h)"""
        e = float(x["predicted"])
        h = min(1.0, max(0.0, 1 - graph[key(x)] / e))
        return e * math.exp(h * beta * math.log(hu / ref))

    def eager_rows(rows, hosts):
        """the eager latency rows of rows with a CUDA-graph twin and a key
        in hosts"""
        return [x for x in rows if x["runtime"] == "eager" and
                x["target"] == "inference.latency_ms" and
                key(x) in graph and key(x) in hosts]
    # eager energy: x (1 + gamma (f - 1)), f the latency's factor
    ener = {key(x): (float(x["actual"]), float(x["predicted"]))
            for x in csv.DictReader(open(hp))
            if x["target"] == "inference.energy_j" and x["runtime"] == "eager"
            and x["actual"]} if os.path.exists(hp) else {}
    blind = host = eblind = ehost = 0.0
    n = en = 0
    for x in eager_rows(lat, host_of):
        k = key(x)
        e, a = float(x["predicted"]), float(x["actual"])
        corr = moved(x, sum(host_of[k]) / len(host_of[k]))
        blind += abs(e / a - 1)
        host += abs(corr / a - 1)
        n += 1
        if k in ener:
            ea, ep = ener[k]
            eblind += abs(ep / ea - 1)
            ehost += abs(ep * (1 + 0.6 * (corr / e - 1)) / ea - 1)
            en += 1
    allrow = [l.split() for l in r.stdout.splitlines() if l.startswith("all ")]
    check("cli_host_apply", r.returncode == 0 and n > 0 and allrow and
          int(allrow[0][1]) == n and
          abs(float(allrow[0][2]) - 100 * blind / n) < 0.006 and
          abs(float(allrow[0][3]) - 100 * host / n) < 0.006 and
          "beta 1.3, ref_us 7.5" in r.stdout,
          "n %d oracle %.2f %.2f: %s %s" % (n, 100 * blind / max(n, 1),
                                            100 * host / max(n, 1),
                                            r.stdout[-400:], r.stderr[-300:]))
    check("cli_host_apply_energy", r.returncode == 0 and en > 0 and
          len(allrow) == 2 and int(allrow[1][1]) == en and
          abs(float(allrow[1][2]) - 100 * eblind / en) < 0.006 and
          abs(float(allrow[1][3]) - 100 * ehost / en) < 0.006 and
          "energy_gamma 0.6" in r.stdout,
          "n %d oracle %.2f %.2f: %s" % (en, 100 * eblind / max(en, 1),
                                         100 * ehost / max(en, 1),
                                         r.stdout[-400:]))
    # --by-batch: per batch of the labels' rows (the batch_id column), n,
    # the mean ln(measured / predicted) as given and corrected, and both
    # MAPEs, against the same oracle; the samples' n add up to the total
    r = subprocess.run([DLPERF, "host", "apply", hp, hds, "--host", hfile,
                        "--by-batch"], capture_output=True, text=True)
    want = {}
    for x in eager_rows(lat, host_of):
        k = key(x)
        ids = set(batch_of[k])
        b = ids.pop() if len(ids) == 1 else "(several)"
        e, a = float(x["predicted"]), float(x["actual"])
        corr = moved(x, sum(host_of[k]) / len(host_of[k]))
        w = want.setdefault(b, [0, 0.0, 0.0, 0.0, 0.0])
        w[0] += 1
        w[1] += math.log(a / e)
        w[2] += math.log(a / corr)
        w[3] += abs(e / a - 1)
        w[4] += abs(corr / a - 1)
    lines = r.stdout.splitlines()
    start = [i for i, l in enumerate(lines) if l.startswith("by batch")]
    got = {}
    for l in lines[start[0] + 2:] if start else []:
        f = l.split()
        got[f[0]] = [int(f[1])] + [float(v) for v in f[3:7]]
    ok = r.returncode == 0 and len(want) > 1 and set(got) == set(want)
    for b, w in want.items():
        g = got.get(b)
        ok = ok and g is not None and g[0] == w[0] and all(
            abs(g[j] - w[j] / w[0]) < 6e-5 for j in (1, 2)) and all(
            abs(g[j] - 100 * w[j] / w[0]) < 0.006 for j in (3, 4))
    check("cli_host_apply_by_batch", ok,
          "want %s got %s: %s %s" % (
              {b: [w[0]] + [v / w[0] for v in w[1:]] for b, w in want.items()},
              got, r.stdout[-600:], r.stderr[-300:]))
    r = subprocess.run([DLPERF, "host", "apply", hp, hds, "--host",
                        os.path.join(tmp, "nosuch.csv")],
                       capture_output=True, text=True)
    check("cli_host_apply_missing_file", r.returncode == 1 and
          "nosuch.csv" in r.stderr, r.stderr[-300:])
    r = subprocess.run([DLPERF, "host", "apply", hp, hds, "-o", hfile],
                       capture_output=True, text=True)
    check("cli_host_apply_no_output", r.returncode == 2 and
          "-o" in r.stderr, r.stderr[-300:])
    # eval --host-norm trains and tabulates on eager labels moved to the
    # file's reference host; --record holds the errors against the labels
    # as measured (each configuration's mean over its rows: what predict
    # without --host-us meets), the predictions file the moved labels.
    # Oracle: the predictions against the measured rows read here.
    rec, hpp = os.path.join(tmp, "hn_rec.csv"), os.path.join(tmp, "hn_pred.csv")
    r = subprocess.run([DLPERF, "eval", hds, "--kind", "linreg", "--split",
                        "lmo", "--host-norm", hfile, "--record", rec,
                        "--predictions", hpp, "--quiet", "--top-models", "0"],
                       capture_output=True, text=True)
    meas = {}
    for b in os.listdir(os.path.join(hds, "batches")):
        f = os.path.join(hds, "batches", b, "inference.csv")
        for x in csv.DictReader(open(f)) if os.path.exists(f) else []:
            if x["status"] not in ("ok", "flagged"):   # flagged: a label
                continue
            k = (x["hash"], x["runtime"], x["precision"], x["batch"],
                 x["seq"] or "0", x["height"] or "0", x["width"] or "0")
            for t in ("latency_ms", "energy_j"):
                if x[t]:
                    meas.setdefault((k, t), []).append(float(x[t]))
    got = {(x["runtime"], x["target"]): float(x["mape_pct"])
           for x in csv.DictReader(open(rec))} if os.path.exists(rec) else {}
    srcs = {x["source"] for x in csv.DictReader(open(rec))} \
        if os.path.exists(rec) else set()
    prs = list(csv.DictReader(open(hpp))) if os.path.exists(hpp) else []
    ok, why, moved_rows = r.returncode == 0, [], 0
    for rt in ("eager", "graph", "all"):
        for t in ("latency_ms", "energy_j"):
            errs, ferrs = [], []
            for x in prs:
                if x["target"] != "inference." + t or not x["predicted"] or \
                        (rt != "all" and x["runtime"] != rt):
                    continue
                k = (x["graph"], x["runtime"], x["precision"], x["batch"],
                     x["seq"], x["height"], x["width"])
                v = meas.get((k, t))
                if not v:
                    continue
                y, p = sum(v) / len(v), float(x["predicted"])
                errs.append(abs(p / y - 1))
                ferrs.append(abs(p / float(x["actual"]) - 1))
                moved_rows += rt == "eager" and abs(float(x["actual"]) / y - 1) > 1e-6
            want = 100 * sum(errs) / max(len(errs), 1)
            g = got.get((rt, t))
            ok = ok and errs and g is not None and abs(g - want) < 6e-4
            why.append("%s %s: record %s, oracle %.4f (%d), file's labels %.4f" % (
                rt, t, g, want, len(errs), 100 * sum(ferrs) / max(len(ferrs), 1)))
    check("cli_eval_host_norm_record_as_measured", ok and moved_rows > 0 and
          srcs and all("errors against the labels as measured" in x
                       for x in srcs) and
          "against the labels as measured" in r.stdout,
          "moved %d; %s; %s %s" % (moved_rows, why, srcs, r.stderr[-300:]))
    # the same for training steps (a copy whose steps carry host_us, a
    # training host fit): the steps have no runtime, so the table's rows
    # and the record's are runtime "all" only; the record's step MAPE is
    # the table's as-measured one, not its moved one
    tds = os.path.join(tmp, "hostds_train")
    shutil.copytree(hds, tds)
    for b in os.listdir(os.path.join(tds, "batches")):
        f = os.path.join(tds, "batches", b, "training.csv")
        rs = list(csv.DictReader(open(f))) if os.path.exists(f) else []
        if not rs:
            continue
        cols = list(rs[0].keys()) + [c for c in ("host_us",) if c not in rs[0]]
        for x in rs:
            x["host_us"] = "%.3f" % hrng.uniform(5, 14)
        with open(f, "w", newline="") as fo:
            w = csv.DictWriter(fo, fieldnames=cols)
            w.writeheader()
            w.writerows(rs)
    thf = os.path.join(tmp, "host-training.csv")
    with open(thf, "w") as f:
        f.write("format,dlperf-host-1\nbeta,0.57\nref_us,8.8\npower_lo_w,300\n"
                "power_hi_w,360\npower_tdp_w,700\n")
    trec = os.path.join(tmp, "hn_rec_train.csv")
    r = subprocess.run([DLPERF, "eval", tds, "--mode", "training", "--kind",
                        "linreg", "--split", "lmo", "--host-norm", thf,
                        "--record", trec, "--quiet", "--top-models", "0"],
                       capture_output=True, text=True)
    lines = r.stdout.splitlines()
    at = [i for i, l in enumerate(lines) if "against the labels as measured" in l]
    table = [l.split() for l in lines[at[0] + 2:] if l.startswith("linreg")] if at else []
    recs = list(csv.DictReader(open(trec))) if os.path.exists(trec) else []
    step = [t for t in table if t[1] == "training.step_ms"]
    rstep = [x for x in recs if x["target"] == "step_ms"]
    check("cli_eval_host_norm_training_all_only", r.returncode == 0 and
          table and all(t[2] == "all" for t in table) and
          recs and all(x["runtime"] == "all" for x in recs) and
          step and rstep and step[0][4] != step[0][5] and
          abs(float(rstep[0]["mape_pct"]) - float(step[0][5].rstrip("%"))) < 0.006,
          "%s | %s | %s" % (table, recs, r.stderr[-300:]))
    # --mode: llm reads the throughput rows, training the step rows (an
    # inference run has neither); another mode is a usage error
    r = subprocess.run([DLPERF, "host", "apply", hp, hds, "--host", hfile,
                        "--mode", "llm"], capture_output=True, text=True)
    check("cli_host_apply_llm_no_rows", r.returncode == 1 and
          "eager throughput" in r.stderr, r.stderr[-300:])
    r = subprocess.run([DLPERF, "host", "fit", hp, hds, "--mode", "training"],
                       capture_output=True, text=True)
    check("cli_host_fit_training_no_rows", r.returncode == 1 and
          "training step" in r.stderr, r.stderr[-300:])
    r = subprocess.run([DLPERF, "host", "fit", hp, hds, "--mode", "kernels"],
                       capture_output=True, text=True)
    check("cli_host_fit_mode_bad", r.returncode == 2 and
          "--mode kernels" in r.stderr, r.stderr[-300:])
    # --own-probe: every eager inference label carries its own probe, so
    # the inference set keeps every sample and apply prints the same
    # table; replicates have no such option
    outs = [subprocess.run([DLPERF, "host", "apply", hp, hds, "--host",
                            hfile] + extra, capture_output=True, text=True)
            for extra in ([], ["--own-probe"])]
    allrows = [[l for l in o.stdout.splitlines() if l.startswith("all ")]
               for o in outs]
    check("cli_host_apply_own_probe_inference",
          all(o.returncode == 0 for o in outs) and allrows[0] and
          allrows[0] == allrows[1], "%s | %s" % (allrows, outs[1].stderr[-200:]))
    r = subprocess.run([DLPERF, "host", "replicates", hp, "--own-probe"],
                       capture_output=True, text=True)
    check("cli_host_replicates_no_own_probe", r.returncode == 2 and
          "--own-probe" in r.stderr, r.stderr[-300:])
    # --batch-host: each label's host is the median probe of its batch
    # (the host's level), mean over the configuration's rows; the
    # corrected MAPE against this oracle; a fit records it in its file;
    # with --own-probe it is a usage error
    import statistics
    bmed = {b: statistics.median(v) for b, v in batch_probes.items()}
    level = lambda k: sum(bmed[b] for b in batch_of[k]) / len(batch_of[k])
    bhost = bn = 0
    for x in eager_rows(lat, batch_of):
        bhost += abs(moved(x, level(key(x))) / float(x["actual"]) - 1)
        bn += 1
    r = subprocess.run([DLPERF, "host", "apply", hp, hds, "--host", hfile,
                        "--batch-host"], capture_output=True, text=True)
    ball = [l.split() for l in r.stdout.splitlines() if l.startswith("all ")]
    check("cli_host_apply_batch_host", r.returncode == 0 and bn > 0 and ball
          and int(ball[0][1]) == bn and
          abs(float(ball[0][3]) - 100 * bhost / bn) < 0.006 and
          abs(float(ball[0][3]) - float(allrow[0][3])) > 0.01,
          "n %d oracle %.2f: %s %s" % (bn, 100 * bhost / max(bn, 1),
                                       ball, r.stderr[-300:]))
    # a fit on labels made to follow the law at their batches' level
    # (beta 1.1, ref_us 8, folds by model) recovers it with --batch-host
    # and records it in the file
    hp2 = os.path.join(tmp, "hostpred2.csv")
    bfile = os.path.join(tmp, "host-batch.csv")
    kv = {}
    if os.path.exists(hp):
        prs = list(csv.DictReader(open(hp)))
        models = sorted(set(x["model"] for x in prs))
        for x in prs:
            x["fold"] = str(models.index(x["model"]) % 3)
        for x in eager_rows(prs, batch_of):
            x["actual"] = repr(moved(x, level(key(x)), 1.1, 8))
        write_rows(hp2, prs)
        r = subprocess.run([DLPERF, "host", "fit", hp2, hds, "--batch-host",
                            "-o", bfile], capture_output=True, text=True)
        kv = read_kv(bfile)
    check("cli_host_fit_batch_host", kv.get("host_source") == "1" and
          abs(float(kv.get("beta", "nan")) - 1.1) < 1e-3 and
          abs(float(kv.get("ref_us", "nan")) - 8) < 1e-2 and
          float(kv.get("host_mape", "nan")) < 1e-3 and
          kv.get("level_mape") == kv.get("host_mape"),
          "%s %s" % (kv, r.stderr[-300:]))
    # labels made at their own probes: the fit recovers the law, and its
    # level_mape is the fit applied with the batch medians (this oracle)
    ofile = os.path.join(tmp, "host-own.csv")
    kv, lvl, ln = {}, 0.0, 0
    if os.path.exists(hp):
        for x in eager_rows(prs, batch_of):
            k = key(x)
            a = moved(x, sum(host_of[k]) / len(host_of[k]), 1.1, 8)
            x["actual"] = repr(a)
            lvl += abs(moved(x, level(k), 1.1, 8) / a - 1)
            ln += 1
        write_rows(hp2, prs)
        r = subprocess.run([DLPERF, "host", "fit", hp2, hds, "-o", ofile],
                           capture_output=True, text=True)
        kv = read_kv(ofile)
    check("cli_host_fit_level", kv.get("host_source") == "0" and ln > 0 and
          abs(float(kv.get("beta", "nan")) - 1.1) < 1e-3 and
          float(kv.get("host_mape", "nan")) < 1e-3 and
          abs(float(kv.get("level_mape", "nan")) - 100 * lvl / ln) < 1e-3 and
          100 * lvl / ln > 1 and "host's level" in r.stdout,
          "%s oracle %.4f %s" % (kv, 100 * lvl / max(ln, 1), r.stderr[-300:]))
    r = subprocess.run([DLPERF, "host", "apply", hp, hds, "--host", hfile,
                        "--batch-host", "--own-probe"],
                       capture_output=True, text=True)
    check("cli_host_batch_host_own_probe", r.returncode == 2 and
          "one host source" in r.stderr, r.stderr[-300:])
    # --fresh-host: the fixture's batches carry no fresh-process reading
    r = subprocess.run([DLPERF, "host", "apply", hp, hds, "--host", hfile,
                        "--fresh-host"], capture_output=True, text=True)
    check("cli_host_fresh_host_none", r.returncode == 1 and
          "fresh process" in r.stderr, r.stderr[-300:])
    # host replicates: the three p57 batches' raw rows (the same three
    # graphs measured in each), the within / across means recomputed here,
    # the earlier of a pair the batch first in name order, and the
    # CUDA-graph twins' signed latency and power shifts
    import io
    import lzma
    rows_f = os.path.join("data", "probes",
                          "20261203-replicates-p57.csv.xz")
    r = subprocess.run([DLPERF, "host", "replicates", rows_f, "--host", hfile],
                       capture_output=True, text=True)
    eag, gra = {}, {}
    for x in csv.DictReader(io.StringIO(lzma.open(rows_f, "rt").read())):
        if x["status"] not in ("ok", "flagged"):
            continue
        k = (x["hash"], x["device"], x["precision"], x["batch"], x["seq"],
             x["height"], x["width"])
        m = (x["batch_id"], int(x["rep"]))
        if x["runtime"] == "graph":
            gra[k + m] = (float(x["latency_ms"]),
                          float(x["power_w"]) if x["power_w"] else None)
        elif x["runtime"] == "eager" and x["host_us"]:
            eag.setdefault(k, []).append(m + (float(x["latency_ms"]),
                                              float(x["host_us"])))
    sums = {True: [0, 0.0, 0.0], False: [0, 0.0, 0.0]}
    fit = {True: [], False: []}      # (h ln host ratio, ln eager ratio)
    gaps = {True: [], False: []}     # the CUDA-graph twins' gaps
    shift = {True: ([], []), False: ([], [])}   # their ln ratios: latency, power
    for k, ms in eag.items():
        ms.sort()
        for i in range(len(ms)):
            for j in range(i + 1, len(ms)):
                (ba, ra, ea, ha), (bb, rb, eb, hb) = ms[i], ms[j]
                tw, twb = gra.get(k + (ba, ra)), gra.get(k + (bb, rb))
                if tw is None or twb is None:
                    continue
                (g, pa), (gb, pb) = tw, twb
                shift[ba == bb][0].append(math.log(gb / g))
                if pa and pb:
                    shift[ba == bb][1].append(math.log(pb / pa))
                h = min(1.0, max(0.0, 1 - g / ea))
                mv = ea * math.exp(h * 1.3 * math.log(hb / ha))
                t = sums[ba == bb]
                t[0] += 1
                t[1] += abs(ea / eb - 1)
                t[2] += abs(mv / eb - 1)
                fit[ba == bb].append((h * math.log(hb / ha), math.log(eb / ea)))
                gaps[ba == bb].append(100 * abs(g / gb - 1))
    got = {l.split("(")[1].split(")")[0]: l.split(")")[1].split()
           for l in r.stdout.splitlines() if l.startswith("all ")}
    ok = r.returncode == 0 and len(got) == 2
    for same, name in ((True, "within a batch"), (False, "across batches")):
        n, a, c = sums[same]
        v = got.get(name, [0] * 13)
        f = fit[same]
        bf = sum(x * y for x, y in f) / sum(x * x for x, y in f)
        gf = 100 * sum(abs(math.exp(bf * x - y) - 1) for x, y in f) / len(f)
        ok = ok and n > 0 and int(v[0]) == n and int(v[1]) == n and \
            abs(float(v[4]) - 100 * a / n) < 0.006 and \
            abs(float(v[6]) - 100 * c / n) < 0.006 and \
            abs(float(v[8]) - bf) < 0.0006 and abs(float(v[9]) - gf) < 0.006 \
            and abs(float(v[10]) - statistics.median(gaps[same])) < 0.0006
        ls, ps = shift[same]
        ok = ok and abs(float(v[11]) - 100 * (math.exp(
            statistics.mean(ls)) - 1)) < 0.006 and len(ps) > 0 and \
            abs(float(v[12]) - 100 * (math.exp(statistics.mean(ps)) - 1)) < 0.006
    check("cli_host_replicates", ok, "%s %s %s" % (sums, r.stdout[-600:],
                                                 r.stderr[-300:]))
    # training steps measured again (run_batch.py --train-reference):
    # every two steps of a configuration, host_us or not, the earlier
    # standing for the later; the pairs with both hosts counted apart
    rows_f = os.path.join("data", "probes", "repeats-training.csv")
    r = subprocess.run([DLPERF, "host", "replicates", rows_f, "--host", hfile],
                       capture_output=True, text=True)
    steps = {}
    for x in csv.DictReader(open(rows_f)):
        if x["status"] in ("ok", "flagged"):
            k = (x["hash"], x["device"], x["precision"], x["batch"],
                 x["height"], x["width"])
            steps.setdefault(k, []).append(
                (x["batch_id"], int(x["rep"]), float(x["step_ms"]),
                 float(x["host_us"]) if x["host_us"] else None))
    tsum = {True: [0, 0, 0.0], False: [0, 0, 0.0]}
    for ms in steps.values():
        ms.sort()
        for i in range(len(ms)):
            for j in range(i + 1, len(ms)):
                (ba, _, ea, ha), (bb, _, eb, hb) = ms[i], ms[j]
                t = tsum[ba == bb]
                t[0] += 1
                t[1] += bool(ha and hb)
                t[2] += abs(ea / eb - 1)
    got = {l.split("(")[1].split(")")[0]: l.split(")")[1].split()
           for l in r.stdout.splitlines() if l.startswith("all ")}
    ok = r.returncode == 0 and "training-step replicates" in r.stdout
    for same, name in ((True, "within a batch"), (False, "across batches")):
        n, nh, a = tsum[same]
        v = got.get(name, [0] * 13)
        ok = ok and n > 0 and int(v[0]) == n and int(v[1]) == nh and \
            abs(float(v[4]) - 100 * a / n) < 0.006 and v[6] == "nan"
    check("cli_host_replicates_training", ok, "%s %s %s" % (
        tsum, r.stdout[-600:], r.stderr[-300:]))
    r = subprocess.run([DLPERF, "host", "replicates", hp],
                       capture_output=True, text=True)
    check("cli_host_replicates_not_rows", r.returncode == 1 and
          "batch_id" in r.stderr, r.stderr[-300:])

    # scripts/prospective.sh: the shipped files on one batch; its printed
    # CUDA-graph MAPE recomputed from the predictions it keeps, which hold
    # that batch's configurations and runtime only; bad batch names
    import glob
    import tempfile
    script = os.path.join("scripts", "prospective.sh")
    env = dict(os.environ, DLPERF=DLPERF)
    r = subprocess.run(["sh", script], capture_output=True, text=True, env=env)
    check("prospective_usage", r.returncode == 2 and "usage" in r.stderr,
          r.stderr[-200:])
    r = subprocess.run(["sh", script, "no-such-batch"], capture_output=True,
                       text=True, env=env)
    check("prospective_unknown_batch", r.returncode == 2 and
          "names 0 batches" in r.stderr, r.stderr[-200:])
    bdirs = glob.glob(os.path.join("data", "batches", "*-p61c"))
    if len(bdirs) == 1 and os.path.isdir("models"):
        out = tempfile.mkdtemp()
        r = subprocess.run(["sh", script, "p61c"], capture_output=True,
                           text=True, env=dict(env, OUT=out))
        lines = r.stdout.splitlines()
        k = [i for i, l in enumerate(lines)
             if l.startswith("[inference-graph] == dippm,")]
        row = lines[k[0] + 1].split() if k and k[0] + 1 < len(lines) else []
        want = set()
        for x in csv.DictReader(open(os.path.join(bdirs[0], "inference.csv"))):
            want.add((x["hash"], x["runtime"], x["precision"], x["batch"],
                      x["height"]))
        errs, seen = [], set()
        for x in csv.DictReader(open(os.path.join(out, "inference-graph.csv"))):
            seen.add((x["graph"], x["runtime"], x["precision"], x["batch"],
                      x["height"]))
            if x["kind"] == "dippm" and x["target"] == "inference.latency_ms":
                errs.append(abs(float(x["predicted"]) / float(x["actual"]) - 1))
        check("prospective_graph_mape", r.returncode == 0 and len(row) > 4 and
              row[1] == "inference.latency_ms" and int(row[3]) == len(errs) > 0
              and abs(float(row[4].rstrip("%")) - 100 * sum(errs) / len(errs))
              < 0.006 and seen <= want and
              all(t[1] == "graph" for t in seen),
              "%s %s" % (r.stdout[-400:], r.stderr[-300:]))
        check("prospective_host_and_training", "[host-eager] all" in r.stdout
              and "[training] training.step_ms" in r.stdout and
              "[host-training] all" in r.stdout, r.stdout[-300:])

    # scripts/transfer.sh: its bad settings are refused before anything
    # trains (the experiment itself takes over an hour and a half on data/)
    script = os.path.join("scripts", "transfer.sh")
    for name, args, extra, want in [
            ("transfer_usage", ["x"], {}, "usage"),
            ("transfer_bad_shots", [], {"SHOTS": "20 0"}, "SHOTS"),
            ("transfer_bad_shots_word", [], {"SHOTS": "many"}, "SHOTS"),
            ("transfer_same_device", [], {"FROM": "H100-SXM5-80GB",
                                          "TO": "H100-SXM5-80GB"}, "same"),
            ("transfer_bad_mode", [], {"MODE": "serving"}, "MODE"),
            ("transfer_no_data", [], {"DATA": "/nonexistent"}, "no dataset")]:
        r = subprocess.run(["sh", script] + args, capture_output=True,
                           text=True, env=dict(env, **extra))
        check(name, r.returncode == 2 and want in r.stderr and
              r.stdout == "", r.stderr[-200:])

# scripts/split_by_op.sh: a pack of two graphs, an exported GroupNorm
# (memest_gn_silu.onnx) and a plain convolution (memest_conv.onnx); which
# holds an InstanceNormalization is the onnx package's to say (the
# oracle). Two batches, one without training rows; every label row lands
# in exactly one half, with its graph's side.
try:
    import onnx
except ImportError:
    onnx = None
if onnx is not None:
    with tempfile.TemporaryDirectory() as tmp:
        ds = os.path.join(tmp, "ds")
        src = {"aaaa000000000001": "tests/fixtures/memest/memest_gn_silu.onnx",
               "bbbb000000000002": "tests/fixtures/memest/memest_conv.onnx"}
        stage = os.path.join(tmp, "stage")
        os.makedirs(stage)
        for h, f in src.items():
            with open(f, "rb") as fi, open(os.path.join(stage, h + ".onnx"), "wb") as fo:
                fo.write(fi.read())
        os.makedirs(os.path.join(ds, "graphs"))
        pack = os.path.join(ds, "graphs", "p.tar.zst")
        r = subprocess.run("tar -C %s -cf - . | zstd -q -o %s" % (stage, pack),
                           shell=True)
        has = {h for h, f in src.items()
               if "InstanceNormalization" in
               {n.op_type for n in onnx.load(f, load_external_data=False).graph.node}}
        ihdr = "protocol,batch_id,hash,device,rep,status,runtime\n"
        rows = {"b1": {"inference": ["p1,b1,aaaa000000000001,H,0,ok,graph",
                                     "p1,b1,bbbb000000000002,H,0,ok,eager",
                                     "p1,b1,cccc000000000003,H,0,ok,graph"],
                       "training": ["p1,b1,aaaa000000000001,H,0,ok,graph"]},
                "b2": {"inference": ["p1,b2,bbbb000000000002,H,1,ok,graph"]}}
        for b, tabs in rows.items():
            os.makedirs(os.path.join(ds, "batches", b))
            with open(os.path.join(ds, "batches", b, "env.json"), "w") as fo:
                fo.write("{}\n")
            for t, lines in tabs.items():
                with open(os.path.join(ds, "batches", b, t + ".csv"), "w") as fo:
                    fo.write(ihdr + "".join(l + "\n" for l in lines))
        split = os.path.join("scripts", "split_by_op.sh")
        out = os.path.join(tmp, "ab")
        env = dict(os.environ, DATA=ds)
        r = subprocess.run(["sh", split, "InstanceNormalization,GroupNormalization",
                            out], capture_output=True, text=True, env=env)
        listed = open(os.path.join(out, "graphs.txt")).read().split() \
            if os.path.exists(os.path.join(out, "graphs.txt")) else None
        ok = r.returncode == 0 and listed == sorted(has) and has == {"aaaa000000000001"}
        for b, tabs in rows.items():
            for t, lines in tabs.items():
                got = {}
                for d in ("with", "without"):
                    f = os.path.join(out, d, "batches", b, t + ".csv")
                    got[d] = open(f).read().splitlines() if os.path.exists(f) else None
                ok = ok and all(got[d] is not None and got[d][0] == ihdr.strip()
                                for d in got)
                if not ok:
                    break
                ok = ok and got["with"][1:] == [l for l in lines
                                                if l.split(",")[2] in has]
                ok = ok and got["without"][1:] == [l for l in lines
                                                   if l.split(",")[2] not in has]
            ok = ok and os.path.exists(os.path.join(out, "with", "batches", b, "env.json"))
        ok = ok and not os.path.exists(os.path.join(out, "with", "batches", "b2",
                                                    "training.csv"))
        ok = ok and os.path.realpath(os.path.join(out, "with", "graphs")) == \
            os.path.realpath(os.path.join(ds, "graphs"))
        check("split_by_op_oracle", ok and "with inference 1" in r.stdout and
              "without inference 3" in r.stdout and "with training 1" in r.stdout,
              r.stdout + r.stderr)
        r = subprocess.run(["sh", split, "InstanceNormalization", out],
                           capture_output=True, text=True, env=env)
        check("split_by_op_exists", r.returncode == 2 and "exists" in r.stderr,
              r.stderr[-200:])
        r = subprocess.run(["sh", split, "", os.path.join(tmp, "x")],
                           capture_output=True, text=True, env=env)
        check("split_by_op_usage", r.returncode == 2 and "usage" in r.stderr,
              r.stderr[-200:])
        with open(os.path.join(ds, "batches", "b2", "inference.csv"), "w") as fo:
            fo.write("protocol,batch_id,graph\np1,b2,x\n")
        r = subprocess.run(["sh", split, "InstanceNormalization",
                            os.path.join(tmp, "y")],
                           capture_output=True, text=True, env=env)
        check("split_by_op_no_hash", r.returncode == 1 and "no hash column" in r.stderr,
              r.stderr[-200:])

print("%d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
