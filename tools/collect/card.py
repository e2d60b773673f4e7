"""card.py - numbers for the dataset card (data/README.md) from data/.

    /usr/bin/python3 tools/collect/card.py [--data data]

Prints markdown: graph pool size by source, label counts per table and
device, distinct labeled graphs, the noise floor (rep 0 vs rep 1: median and
90th percentile of |rep0 - rep1| / rep0 per device, runtime and metric),
flagged pairs, and measurements per device-minute per batch.
"""
import argparse
import collections
import csv
import glob
import io
import json
import os
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))


def read(path):
    if path.endswith(".zst"):
        raw = subprocess.run(["zstd", "-q", "-d", "--long=27", "-c", path],
                             stdout=subprocess.PIPE, check=True).stdout.decode()
        return list(csv.DictReader(io.StringIO(raw)))
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def pct(v, q):
    v = sorted(v)
    if not v:
        return float("nan")
    k = (len(v) - 1) * q
    lo = int(k)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (k - lo)


def noise(rows, metric, keycols):
    pairs = collections.defaultdict(dict)
    for d in rows:
        if d.get(metric, "") == "":
            continue
        k = tuple(d.get(c, "") for c in keycols)
        pairs[k][d["rep"]] = float(d[metric])
    rel = [abs(p["0"] - p["1"]) / p["0"] for p in pairs.values()
           if "0" in p and "1" in p and p["0"] > 0]
    return rel


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=os.path.join(os.path.dirname(os.path.dirname(HERE)), "data"))
    a = ap.parse_args()
    D = a.data
    idx = read(os.path.join(D, "graphs", "index.csv"))
    print("## Graph pool\n")
    print("%d distinct graphs (%s)\n" % (len(idx), ", ".join(
        "%s %d" % kv for kv in collections.Counter(r["source"] for r in idx).most_common())))
    fams = collections.Counter(r["family"] for r in idx)
    print("%d families; largest: %s\n" % (len(fams), ", ".join(
        "%s %d" % kv for kv in fams.most_common(12))))
    tables = {}
    for t in ("inference", "training", "llm"):
        rows = []
        for p in sorted(glob.glob(os.path.join(D, "batches", "*", t + ".csv"))):
            rows += read(p)
        tables[t] = rows
    krows = []
    for p in sorted(glob.glob(os.path.join(D, "batches", "*", "kernels.csv.zst"))):
        krows += read(p)
    tables["kernels"] = krows
    print("## Labels\n")
    print("| table | device | rows | configurations | distinct graphs | flagged rows |")
    print("|---|---|---|---|---|---|")
    cfgkey = {"inference": ["hash", "precision", "batch", "seq", "height", "width"],
              "training": ["hash", "precision", "batch", "height", "width"],
              "llm": ["hash", "precision", "batch", "seq"],
              "kernels": ["hash", "mode", "sms", "precision", "batch", "seq", "height", "width"]}
    for t, rows in tables.items():
        for dev in sorted(set(r["device"] for r in rows)):
            rr = [r for r in rows if r["device"] == dev]
            cfgs = set(tuple(r[c] for c in cfgkey[t]) for r in rr)
            print("| %s | %s | %d | %d | %d | %d |" % (
                t, dev, len(rr), len(cfgs), len(set(r["hash"] for r in rr)),
                sum(1 for r in rr if r["status"] == "flagged")))
    both = collections.defaultdict(set)
    for r in tables["inference"]:
        both[(r["device"], r["hash"], r["precision"], r["batch"], r["seq"],
              r["height"], r["width"])].add(r["runtime"])
    nb = collections.Counter(k[0] for k, v in both.items() if v == {"eager", "graph"})
    print("\ninference configurations with both runtimes: %s\n" % dict(nb))
    mapped = sum(1 for r in krows if r.get("nodes"))
    print("kernel rows mapped to ONNX nodes: %d of %d\n" % (mapped, len(krows)))
    print("## Noise floor (rep 0 vs rep 1, |rep0 - rep1| / rep0)\n")
    print("| table | device | runtime | metric | pairs | median | p90 |")
    print("|---|---|---|---|---|---|---|")
    for t, metrics, rtcol in (("inference", ["latency_ms", "memory_mib", "energy_j", "power_w"], "runtime"),
                              ("training", ["step_ms", "memory_mib", "energy_j"], None),
                              ("llm", ["latency_ms", "energy_per_sample_j"], "runtime")):
        rows = tables[t]
        keycols = [c for c in ("hash", "runtime", "precision", "batch", "seq", "height", "width")
                   if rows and c in rows[0]]
        for dev in sorted(set(r["device"] for r in rows)):
            for rt in (sorted(set(r[rtcol] for r in rows)) if rtcol else [""]):
                rr = [r for r in rows if r["device"] == dev and (not rtcol or r[rtcol] == rt)]
                for m in metrics:
                    rel = noise(rr, m, keycols)
                    if rel:
                        print("| %s | %s | %s | %s | %d | %.2f %% | %.2f %% |" % (
                            t, dev, rt or "-", m, len(rel), 100 * pct(rel, .5), 100 * pct(rel, .9)))
    print("\n## Throughput of the collector\n")
    print("| batch | device | GPUs | wall s | label rows | rows per GPU-minute |")
    print("|---|---|---|---|---|---|")
    for p in sorted(glob.glob(os.path.join(D, "batches", "*", "env.json"))):
        env = json.load(open(p))
        bid = env["batch_id"]
        n = sum(1 for t in ("inference", "training", "llm") for r in tables[t]
                if r["batch_id"] == bid)
        g = env.get("gpus_used", 1)
        print("| %s | %s | %d | %.0f | %d | %.1f |" % (
            bid, env["device"], g, env["device_seconds"], n,
            n / (g * env["device_seconds"] / 60.0)))


if __name__ == "__main__":
    main()
