"""convws_learnability.py - can cuDNN's fp32 workspace choice be learned from
the convolution's shape? An analysis of the probe_convws.py output
(data/probes/*convws*.jsonl.xz), run on the developer machine; the product
does not use it. Planning evidence for a per-convolution workspace model
in the peak-memory estimate (docs/COST.md, "cuDNN convolution
workspaces"; not built yet).

For every fp32 dense (groups = 1) 2-D convolution call of the probes: 18
shape features (log2 of N, C, H, W, K, output H and W, input + output
bytes, N*H*W, the weight and MAC counts; kernel, stride, dilation,
padding; whether the input is channels-last-contiguous, true for every
[N, C, 1, 1] input), the label "has a workspace": extra bytes during the
call above max(1 MiB, half its input + output). 5-fold cross-validation
grouped by model (every call of a model in one fold, folds seeded),
XGBoost through libxgboost's C API (ctypes; Debian's libxgboost, no
Python package): a classifier (binary:logistic, 300 rounds of depth 8)
and, on the calls with a workspace, a regressor of log2(workspace MiB).
Prints precision / recall at three thresholds, how many of the calls
with a workspace above 50 MiB are caught, and the predicted / measured
size ratio's quantiles.

With --predictions FILE (`dlperf eval DATA --runtime eager --kind roofline
--predictions FILE`, the estimate's held-out rows), it also joins the
probed configurations to their eager fp32 rows and prints the estimate's
MAPE points that the probed workspaces explain (an upper bound of what a
perfect workspace model would gain on those rows).

    /usr/bin/python3 tools/collect/convws_learnability.py [--predictions F]
"""
import argparse
import collections
import ctypes
import glob
import json
import lzma
import math
import os
import random

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class Xgb:
    """The few libxgboost C API calls this needs."""

    def __init__(self):
        self.L = ctypes.cdll.LoadLibrary("libxgboost.so.0")
        self.L.XGBGetLastError.restype = ctypes.c_char_p

    def _ok(self, r):
        if r:
            raise RuntimeError(self.L.XGBGetLastError().decode())

    def _dmat(self, X, y=None):
        X = np.ascontiguousarray(X, dtype=np.float32)
        h = ctypes.c_void_p()
        self._ok(self.L.XGDMatrixCreateFromMat(
            X.ctypes.data_as(ctypes.POINTER(ctypes.c_float)),
            ctypes.c_uint64(X.shape[0]), ctypes.c_uint64(X.shape[1]),
            ctypes.c_float(float("nan")), ctypes.byref(h)))
        if y is not None:
            y = np.ascontiguousarray(y, dtype=np.float32)
            self._ok(self.L.XGDMatrixSetFloatInfo(
                h, b"label", y.ctypes.data_as(ctypes.POINTER(ctypes.c_float)),
                ctypes.c_uint64(len(y))))
        return h

    def fit(self, X, y, params, rounds):
        d = self._dmat(X, y)
        b = ctypes.c_void_p()
        self._ok(self.L.XGBoosterCreate((ctypes.c_void_p * 1)(d), 1, ctypes.byref(b)))
        for k, v in params.items():
            self._ok(self.L.XGBoosterSetParam(b, k.encode(), str(v).encode()))
        for i in range(rounds):
            self._ok(self.L.XGBoosterUpdateOneIter(b, i, d))
        self.L.XGDMatrixFree(d)
        return b

    def predict(self, b, X):
        d = self._dmat(X)
        n = ctypes.c_uint64()
        out = ctypes.POINTER(ctypes.c_float)()
        self._ok(self.L.XGBoosterPredict(b, d, 0, 0, 0, ctypes.byref(n), ctypes.byref(out)))
        r = np.array(out[:n.value])
        self.L.XGDMatrixFree(d)
        return r


def probe_configs():
    files = sorted(glob.glob(os.path.join(ROOT, "data", "probes", "*convws*.jsonl.xz")))
    for f in files:
        for line in lzma.open(f, "rt"):
            r = json.loads(line)
            if r["prec"] == "fp32":
                yield r


def features(c):
    N, C, H, W = c["x"]
    K, _, kh, kw = c["w"]
    Ho, Wo = c["y"][2], c["y"][3]
    p = c["p"] if isinstance(c["p"], list) else [0, 0]
    io = c["in_mib"] + c["out_mib"]
    return [math.log2(N), math.log2(C), math.log2(H), math.log2(W), math.log2(K),
            kh, kw, c["s"][0], c["s"][1], c["d"][0], p[0], float(c["cl"]),
            math.log2(Ho), math.log2(Wo), math.log2(io + 1e-6),
            math.log2(N * H * W + 1), math.log2(C * K * kh * kw),
            math.log2(N * Ho * Wo * K * C * kh * kw)] + fft_features(N, C, H, W, K, p[0], io)


def pow2_at_least(v):
    p = 1
    while p < v:
        p *= 2
    return p


def fft_features(N, C, H, W, K, pad, io):
    """log2 of cuDNN's FFT workspace in MiB, (N C + K C + N K) complex
    planes of the padded input rounded up to powers of two, and of its
    ratio to the input + output MiB (fortieth session)."""
    ph, pw = pow2_at_least(H + 2 * pad), pow2_at_least(W + 2 * pad)
    mib = (N * C + K * C + N * K) * ph * (pw // 2 + 1) * 16 / 2 ** 20
    return [math.log2(mib), math.log2(mib / (io + 1e-6))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--predictions", help="dlperf eval --predictions CSV (eager, roofline)")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    configs = list(probe_configs())     # the xz files, read once
    rows = []
    for r in configs:
        model = r["spec"].split(":")[1]
        for c in r["convs"]:
            if c["g"] == 1 and len(c["x"]) == 4:
                c["model"] = model
                rows.append(c)
    X = np.array([features(c) for c in rows])
    io = np.array([c["in_mib"] + c["out_mib"] for c in rows])
    ex = np.array([c["extra_mib"] for c in rows])
    y = (ex > np.maximum(1, 0.5 * io)).astype(float)
    models = sorted({c["model"] for c in rows})
    random.Random(a.seed).shuffle(models)
    fold = {m: i % 5 for i, m in enumerate(models)}
    F = np.array([fold[c["model"]] for c in rows])
    xgb = Xgb()
    pc, pr = np.zeros(len(rows)), np.zeros(len(rows))
    for k in range(5):
        tr, te = F != k, F == k
        b = xgb.fit(X[tr], y[tr], {"objective": "binary:logistic", "max_depth": 8,
                                   "eta": 0.1, "nthread": 2, "min_child_weight": 2,
                                   "seed": a.seed}, 300)
        pc[te] = xgb.predict(b, X[te])
        m = tr & (y == 1)
        b2 = xgb.fit(X[m], np.log2(ex[m]), {"objective": "reg:squarederror",
                                            "max_depth": 6, "eta": 0.1, "nthread": 2,
                                            "seed": a.seed}, 300)
        pr[te] = 2 ** xgb.predict(b2, X[te])
    print("fp32 dense conv calls %d (%d models), with a workspace %d"
          % (len(rows), len(models), int(y.sum())))
    for th in (0.3, 0.5, 0.7):
        p = pc > th
        tp, fp = int((p & (y == 1)).sum()), int((p & (y == 0)).sum())
        fn = int((~p & (y == 1)).sum())
        print("threshold %.1f: precision %.3f recall %.3f (tp %d fp %d fn %d)"
              % (th, tp / max(1, tp + fp), tp / max(1, tp + fn), tp, fp, fn))
    big, p = ex > 50, pc > 0.5
    print("workspaces > 50 MiB: %d, caught %d; false positives predicted > 50 MiB: %d"
          % (int(big.sum()), int((p & big).sum()), int((p & (y == 0) & (pr > 50)).sum())))
    m = (y == 1) & p
    q = np.quantile(pr[m] / ex[m], [0.1, 0.25, 0.5, 0.75, 0.9])
    print("predicted / measured size, caught calls: p10 %.2f p25 %.2f median %.2f "
          "p75 %.2f p90 %.2f" % tuple(q))
    if a.predictions:
        import csv
        pred = collections.defaultdict(list)
        n_all = 0
        for r in csv.DictReader(open(a.predictions)):
            if r["target"] != "inference.memory_mib":
                continue
            n_all += 1
            if r["precision"] == "fp32":
                pred[(r["model"], int(r["batch"]), int(r["height"]))].append(r)
        pts, n_join, n_under, n_expl = 0.0, 0, 0, 0
        for r in configs:
            k = (r["spec"].split(":")[1], r["batch"], r["res"])
            if k not in pred:
                continue
            n_join += 1
            act, est = float(pred[k][0]["actual"]), float(pred[k][0]["predicted"])
            ws = max([c["extra_mib"] for c in r["convs"] if c["g"] == 1] or [0])
            if (est - act) / act < -0.05:
                n_under += 1
                if ws > 0.5 * (act - est):
                    n_expl += 1
                    pts += (act - est) / act
        print("probed configurations in the predictions: %d; estimate under by > 5%%: %d; "
              "of them the largest workspace > half the gap: %d, worth %.3f MAPE points "
              "of %d rows" % (n_join, n_under, n_expl, 100 * pts / max(1, n_all), n_all))


if __name__ == "__main__":
    main()
