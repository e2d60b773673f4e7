#!/usr/bin/python3
"""dataset_bench.py -- `dlperf dataset stats --json` against a Python
equivalent (csv module + numpy + tarfile + hashlib + the zstd CLI), side by
side on the same synthetic dataset written to /tmp.

    /usr/bin/python3 bench/dataset_bench.py [--build build] [--n 5]
                                            [--graphs 2000] [--rows 20000]

The dataset has the data/FORMAT.md layout: GRAPHS small ONNX graphs in 4
packs, ROWS inference rows (both reps), ROWS/5 training, ROWS/10 llm and
ROWS*5 kernel rows. Both sides do the same work: parse every CSV, stream
every pack and SHA-256 each graph file, group rows into configurations,
compute distributions and the rep0/rep1 noise floor. dlperf is timed as a
whole process (fork/exec to exit, wall clock, median of N); Python in-process
(interpreter start-up not counted, which favours Python), median of N.
The configuration counts of both must agree, or the script fails.
"""
import argparse, csv, hashlib, io, json, os, random, shutil, statistics
import subprocess, sys, tarfile, tempfile, time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "fixtures", "dataset"))
import gen  # noqa: E402  (fixture generator: CSV/tar/zstd writers, oracle)


def build(root, n_graphs, n_rows, rng):
    graphs = []
    for i in range(n_graphs):
        data = gen.tiny_onnx("g%d" % i, 1 + i % 40)
        h = hashlib.sha256(data).hexdigest()[:16]
        graphs.append(dict(hash=h, family=["resnet", "vit", "bert", "llama"][i % 4],
                           model="m%d" % i, variant="width=%d" % (i % 7),
                           source="custom", exporter="legacy", opset=17,
                           nodes=1 + i % 40, file_bytes=len(data), params=i,
                           pack="pack-%d" % (i % 4), data=data))
    os.makedirs(os.path.join(root, "graphs"))
    text, _ = gen.csv_text(gen.INDEX, graphs)
    gen.write(os.path.join(root, "graphs", "index.csv"), text)
    for p in range(4):
        mem = [(g["hash"] + ".onnx", g["data"]) for g in graphs if g["pack"] == "pack-%d" % p]
        gen.zstd_file(gen.make_tar(mem, tarfile.PAX_FORMAT),
                      os.path.join(root, "graphs", "pack-%d.tar.zst" % p))
    bid = "20261126T0400-bench"
    bdir = os.path.join(root, "batches", bid)
    os.makedirs(bdir)
    gen.write(os.path.join(bdir, "env.json"), json.dumps({"device": gen.DEVICE,
                                                          "memory_mib": 81559}))
    dev = gen.DEVICE

    def common(g, rep):
        return dict(protocol="p1", batch_id=bid, hash=g["hash"], device=dev,
                    rep=rep, status="ok")
    inf, trn, llm, ker = [], [], [], []
    for i in range(n_rows // 2):
        g = graphs[i % n_graphs]
        lat, mem = rng.uniform(0.1, 50), rng.uniform(10, 60000)
        for rep in (0, 1):
            c = i // n_graphs  # configuration number of this graph
            inf.append(dict(common(g, rep), runtime=("eager", "graph")[c % 2],
                            precision=("fp32", "fp16")[(c // 2) % 2],
                            batch=1 + c // 4, height=224, width=224,
                            latency_ms=lat * (1 + 0.01 * rep), latency_p10_ms=lat,
                            latency_p90_ms=lat * 1.1, memory_mib=mem,
                            mem_reserved_mib=mem, nvml_used_mib=mem + 500,
                            energy_j=lat * 0.3 if rep == 0 else None, power_w=300.0))
    for i in range(n_rows // 10):
        g = graphs[i % n_graphs]
        for rep in (0, 1):
            trn.append(dict(common(g, rep), precision="fp32",
                            batch=1 + i // n_graphs, height=224, width=224,
                            optimizer="sgd_momentum", step_ms=rng.uniform(1, 500),
                            memory_mib=rng.uniform(100, 70000), power_w=400.0))
    for i in range(n_rows // 20):
        g = graphs[i % n_graphs]
        for rep in (0, 1):
            l = rng.uniform(1, 900)
            llm.append(dict(common(g, rep), runtime="graph", precision="bf16",
                            batch=1 + i // n_graphs, seq=512, latency_ms=l,
                            throughput_samples_s=1000 / l, memory_mib=5000.0))
    for i in range(n_rows * 5 // 20):
        g = graphs[(i // 20) % n_graphs]
        for rep in (0, 1):
            ker.append(dict(common(g, rep), mode="eager", precision="fp16",
                            batch=1 + (i // 20) // n_graphs, height=224, width=224,
                            kernel_idx=i % 20,
                            kernel="void at::native::vectorized_elementwise_kernel<4, float>",
                            duration_us=rng.uniform(1, 300), grid="120:1:1",
                            block="128:1:1", nodes="/a/b/Conv|/a/b/Relu"))
    for name, header, rows in (("inference.csv", gen.INF, inf), ("training.csv", gen.TRN, trn),
                               ("llm.csv", gen.LLM, llm)):
        gen.write(os.path.join(bdir, name), gen.csv_text(header, rows)[0])
    gen.zstd_file(gen.csv_text(gen.KER, ker)[0].encode(), os.path.join(bdir, "kernels.csv.zst"))
    return len(inf) + len(trn) + len(llm), len(ker)


NUM = {"rep", "batch", "seq", "height", "width", "kernel_idx", "sms"}


def python_stats(root):
    """The same work as dlp_dataset_open + dlp_dataset_check, in Python."""
    with open(os.path.join(root, "graphs", "index.csv"), newline="") as f:
        index = list(csv.DictReader(f))
    graphs = [dict(r) for r in index]
    by_hash = {g["hash"]: g for g in graphs}
    seen = set()
    for pack in sorted({g["pack"] for g in graphs}):
        raw = subprocess.run(["zstd", "-dc", os.path.join(root, "graphs", pack + ".tar.zst")],
                             stdout=subprocess.PIPE, check=True).stdout
        with tarfile.open(fileobj=io.BytesIO(raw)) as t:
            for m in t:
                if not m.isfile():
                    continue
                data = t.extractfile(m).read()
                h = os.path.basename(m.name)[:-5]
                assert hashlib.sha256(data).hexdigest()[:16] == h
                assert int(by_hash[h]["file_bytes"]) == len(data)
                seen.add(h)
    assert seen == set(by_hash)

    def rows(path, zst=False):
        if zst:
            text = subprocess.run(["zstd", "-dc", path], stdout=subprocess.PIPE,
                                  check=True).stdout.decode()
        else:
            text = open(path, newline="").read()
        out = []
        for r in csv.DictReader(io.StringIO(text)):
            q = {}
            for k, v in r.items():
                if k in NUM:
                    q[k] = int(v) if v else None
                elif k in gen.INF + gen.TRN + gen.LLM + gen.KER and k not in gen.COMMON \
                        and k not in ("runtime", "precision", "optimizer", "mode", "kernel",
                                      "grid", "block", "nodes"):
                    q[k] = float(v) if v else None
                else:
                    q[k] = v
            out.append(q)
        return out
    inf, trn, llm, ker = [], [], [], []
    bdir = os.path.join(root, "batches")
    for b in sorted(os.listdir(bdir)):
        p = os.path.join(bdir, b)
        inf += rows(os.path.join(p, "inference.csv"))
        trn += rows(os.path.join(p, "training.csv"))
        llm += rows(os.path.join(p, "llm.csv"))
        ker += rows(os.path.join(p, "kernels.csv.zst"), zst=True)
    si, _ = gen.kind_stats(inf, graphs, "latency_ms", "energy_j", lambda r: r["runtime"])
    st, _ = gen.kind_stats(trn, graphs, "step_ms", "energy_j", lambda r: "train")
    sl, _ = gen.kind_stats(llm, graphs, "latency_ms", "energy_per_sample_j", lambda r: r["runtime"])
    kcfg = {(r["hash"], r["device"], r["mode"], r["sms"] or 0, r["precision"], r["batch"],
             r["seq"] or 0, r["height"] or 0, r["width"] or 0) for r in ker}
    return dict(labeled_inference=si["configs"], labeled_training=st["configs"],
                labeled_llm=sl["configs"], kernel_traces=len(kcfg), graphs=len(graphs))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--n", type=int, default=5)
    ap.add_argument("--graphs", type=int, default=2000)
    ap.add_argument("--rows", type=int, default=20000)
    a = ap.parse_args()
    exe = os.path.join(a.build, "dlperf")
    root = tempfile.mkdtemp(prefix="dlp_dataset_bench_")
    try:
        t0 = time.time()
        nlab, nker = build(os.path.join(root, "d"), a.graphs, a.rows, random.Random(1))
        d = os.path.join(root, "d")
        size = sum(os.path.getsize(os.path.join(dp, f)) for dp, _, fs in os.walk(d) for f in fs)
        print("dataset: %d graphs, %d label rows, %d kernel rows, %.1f MB on disk "
              "(built in %.0f s)" % (a.graphs, nlab, nker, size / 1e6, time.time() - t0))
        tc, rep = [], None
        for _ in range(a.n):
            t = time.perf_counter()
            p = subprocess.run([exe, "dataset", "stats", d, "--json"], stdout=subprocess.PIPE)
            tc.append(time.perf_counter() - t)
            rep = json.loads(p.stdout)
            assert p.returncode == 0, rep["errors"][:5]
        tp, py = [], None
        for _ in range(a.n):
            t = time.perf_counter()
            py = python_stats(d)
            tp.append(time.perf_counter() - t)
        for k, v in py.items():
            assert rep[k] == v, (k, rep[k], v)
        mc, mp = statistics.median(tc), statistics.median(tp)
        print("dlperf dataset stats: %.3f s (median of %d, whole process)" % (mc, a.n))
        print("python csv+numpy+tarfile+hashlib: %.3f s (median of %d, in-process)" % (mp, a.n))
        print("ratio python/dlperf: %.1fx  (configs: inference %d, training %d, llm %d, "
              "kernel traces %d; both agree)" % (mp / mc, py["labeled_inference"],
                                                  py["labeled_training"], py["labeled_llm"],
                                                  py["kernel_traces"]))
    finally:
        shutil.rmtree(root)


if __name__ == "__main__":
    main()
