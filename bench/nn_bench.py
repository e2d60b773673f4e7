#!/usr/bin/python3
"""nn_bench.py — the C graph-learning engine against a PyTorch CPU
implementation of the same DIPPM-style model (3 SAGE + 3 FC, mean pooling,
static features), side by side in one run on the same cores.

Graphs are real exported computation graphs: torchvision models exported to
ONNX here (random weights, nothing downloaded, files deleted after their
graph is read) plus the ONNX fixtures in tests/fixtures/models; one node per
ONNX node, an edge wherever one node's output feeds another. Node features:
hashed one-hot op type (32 wide). A synthetic 200-node DAG serves the
single-graph latency test.

    make && /usr/bin/python3 bench/nn_bench.py [--threads 2] [--hidden 512]
        [--steps 4] [--batch 16] [--reps 30] [--rounds 2] [--exe BIN] [--c-only]

Prints graphs/s and latency for both and the ratios (best of --rounds
interleaved rounds, since the machine may be shared). Not a test: timings
are never pass/fail.
"""
import argparse
import glob
import os
import platform
import struct
import subprocess
import sys
import tempfile
import time
import warnings
import zlib

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("DLP_BUILD", os.path.join(ROOT, "build"))
CACHE = os.path.join(tempfile.gettempdir(), "dlp_nn_bench_graphs.npz")
IN_DIM, SDIM = 32, 8

TV_MODELS = ["resnet18", "resnet50", "mobilenet_v2", "mobilenet_v3_small", "vgg11",
             "squeezenet1_0", "shufflenet_v2_x1_0", "densenet121", "efficientnet_b0",
             "regnet_y_400mf", "mnasnet0_5", "vit_b_16", "resnext50_32x4d", "alexnet"]


def onnx_graph(path):
    import onnx
    m = onnx.load(path, load_external_data=False)
    nodes = list(m.graph.node)
    prod = {}
    for i, n in enumerate(nodes):
        for o in n.output:
            prod[o] = i
    src, dst = [], []
    for j, n in enumerate(nodes):
        for v in n.input:
            if v in prod:
                src.append(prod[v]); dst.append(j)
    ops = [n.op_type for n in nodes]
    return ops, np.array(src, np.int32), np.array(dst, np.int32)


def exported_graphs():
    if os.path.exists(CACHE):
        z = np.load(CACHE, allow_pickle=True)
        return list(z["graphs"])
    import torch
    import torchvision
    graphs = []
    tmp = tempfile.mkdtemp()
    for name in TV_MODELS:
        try:
            model = getattr(torchvision.models, name)(weights=None).eval()
            size = 224
            p = os.path.join(tmp, name + ".onnx")
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                torch.onnx.export(model, torch.zeros(1, 3, size, size), p, opset_version=13)
            graphs.append((name,) + onnx_graph(p))
            os.remove(p)
        except Exception as e:  # a model that does not export is skipped
            print("skip %s: %s" % (name, str(e).splitlines()[0][:80]), file=sys.stderr)
    for p in sorted(glob.glob(os.path.join(ROOT, "tests/fixtures/models/*.onnx"))):
        graphs.append((os.path.basename(p)[:-5],) + onnx_graph(p))
    os.rmdir(tmp)
    np.savez(CACHE, graphs=np.array(graphs, dtype=object))
    return graphs


def synthetic_dag(n, rng):
    src, dst = [], []
    for i in range(1, n):
        src.append(int(rng.integers(max(0, i - 8), i))); dst.append(i)
        if rng.random() < 0.3:
            src.append(int(rng.integers(0, i))); dst.append(i)
    return ["Conv"] * n, np.array(src, np.int32), np.array(dst, np.int32)


def features(ops, rng):
    x = np.zeros((len(ops), IN_DIM), np.float32)
    for i, op in enumerate(ops):
        x[i, zlib.crc32(op.encode()) % IN_DIM] = 1
    x += rng.standard_normal(x.shape).astype(np.float32) * 0.1
    return x


def write_data(path, items):
    with open(path, "wb") as f:
        f.write(struct.pack("<3i", len(items), IN_DIM, SDIM))
        for (s, d, x, st, y) in items:
            f.write(struct.pack("<2i", x.shape[0], len(s)))
            f.write(s.astype("<i4").tobytes()); f.write(d.astype("<i4").tobytes())
            f.write(x.astype("<f4").tobytes()); f.write(st.astype("<f4").tobytes())
            f.write(struct.pack("<f", y))


def build_c():
    exe = os.path.join(BUILD, "bench", "nn_bench")
    os.makedirs(os.path.dirname(exe), exist_ok=True)
    cflags = subprocess.run(["pkg-config", "--cflags", "openblas"], capture_output=True,
                            text=True).stdout.split()
    # the library opens OpenBLAS itself (src/nn/nn_blas.c); link what the
    # Makefile links
    libs = subprocess.run(["pkg-config", "--libs", "libcjson", "libzstd", "zlib"],
                          capture_output=True, text=True).stdout.split() or \
        ["-lcjson", "-lzstd", "-lz"]
    cmd = ["cc", "-std=c11", "-O2", "-Iinclude", "-Isrc"] + cflags + \
        ["bench/nn_bench.c", os.path.join(BUILD, "libdlperf.a")] + libs + \
        ["-lm", "-lpthread", "-o", exe]
    subprocess.run(cmd, cwd=ROOT, check=True)
    return exe


# ---- the PyTorch side --------------------------------------------------------
def torch_side(args, items, batches, infer_idx, rounds):
    import torch
    import torch.nn.functional as F
    torch.set_num_threads(args.threads)
    torch.manual_seed(1)

    class Sage(torch.nn.Module):
        def __init__(self, i, o):
            super().__init__()
            self.lin_l = torch.nn.Linear(i, o)
            self.lin_r = torch.nn.Linear(i, o, bias=False)

        def forward(self, x, src, dst, inv_deg):
            agg = torch.zeros_like(x).index_add_(0, dst, x[src]) * inv_deg
            return self.lin_l(agg) + self.lin_r(x)

    class Dippm(torch.nn.Module):
        def __init__(self, h):
            super().__init__()
            self.convs = torch.nn.ModuleList([Sage(IN_DIM, h), Sage(h, h), Sage(h, h)])
            self.fc = torch.nn.ModuleList([torch.nn.Linear(h + SDIM, h), torch.nn.Linear(h, h),
                                           torch.nn.Linear(h, 1)])

        def forward(self, x, src, dst, inv_deg, batch, inv_cnt, st, G):
            for c in self.convs:
                x = F.relu(c(x, src, dst, inv_deg))
            pooled = torch.zeros(G, x.shape[1]).index_add_(0, batch, x) * inv_cnt
            z = torch.cat([pooled, st], 1)
            z = F.relu(self.fc[0](z))
            z = F.relu(self.fc[1](z))
            return self.fc[2](z)

    def collate(ids):
        xs, ss, ds, bs, off = [], [], [], [], 0
        for k, gi in enumerate(ids):
            s, d, x, _, _ = items[gi]
            xs.append(x); ss.append(s.astype(np.int64) + off); ds.append(d.astype(np.int64) + off)
            bs.append(np.full(x.shape[0], k, np.int64)); off += x.shape[0]
        x = torch.from_numpy(np.concatenate(xs))
        src = torch.from_numpy(np.concatenate(ss)); dst = torch.from_numpy(np.concatenate(ds))
        batch = torch.from_numpy(np.concatenate(bs))
        deg = torch.bincount(dst, minlength=off).clamp(min=1).float()
        cnt = torch.bincount(batch, minlength=len(ids)).clamp(min=1).float()
        st = torch.from_numpy(np.stack([items[g][3] for g in ids]))
        y = torch.tensor([[items[g][4]] for g in ids])
        return x, src, dst, (1 / deg).unsqueeze(1), batch, (1 / cnt).unsqueeze(1), st, y

    def train():
        torch.manual_seed(1)
        model = Dippm(args.hidden)
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        t0, c0, graphs = 0.0, 0.0, 0
        for s in range(args.steps + 1):
            if s == 1:
                t0, c0 = time.perf_counter(), time.process_time()
            ids = batches[s % len(batches)]
            x, src, dst, inv_deg, batch, inv_cnt, st, y = collate(ids)
            opt.zero_grad()
            loss = F.mse_loss(model(x, src, dst, inv_deg, batch, inv_cnt, st, len(ids)), y)
            loss.backward()
            opt.step()
            if s > 0:
                graphs += len(ids)
        return graphs / (time.perf_counter() - t0), graphs / (time.process_time() - c0)

    def infer():
        torch.manual_seed(1)
        model = Dippm(args.hidden).eval()
        times, ctimes = [], []
        with torch.inference_mode():
            for r in range(args.reps + 3):
                t, c = time.perf_counter(), time.process_time()
                x, src, dst, inv_deg, batch, inv_cnt, st, _ = collate([infer_idx])
                out = model(x, src, dst, inv_deg, batch, inv_cnt, st, 1)
                float(out[0, 0])
                if r >= 3:
                    times.append(time.perf_counter() - t)
                    ctimes.append(time.process_time() - c)
        times.sort()
        ctimes.sort()
        return times[len(times) // 2] * 1e3, times[0] * 1e3, ctimes[len(ctimes) // 2] * 1e3

    return train, infer


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--hidden", type=int, default=512)
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--infer-nodes", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--exe", default=None,
                    help="C bench binary to run instead of building build/bench/nn_bench "
                         "(e.g. a copy built from an older commit, for before/after runs)")
    ap.add_argument("--c-only", action="store_true",
                    help="run only the C side (profiling); prints no ratios")
    args = ap.parse_args()
    # torch (Debian) calls the system OpenBLAS, whose own thread count is set
    # by this variable, not by torch.set_num_threads: fix it for both sides
    # before torch is imported
    os.environ["OPENBLAS_NUM_THREADS"] = str(args.threads)

    rng = np.random.default_rng(0)
    graphs = exported_graphs()
    items = []
    for name, ops, s, d in graphs:
        items.append((s, d, features(ops, rng), rng.standard_normal(SDIM).astype(np.float32),
                      float(np.log(len(ops)))))
    ops, s, d = synthetic_dag(args.infer_nodes, rng)
    items.append((s, d, features(ops, rng), rng.standard_normal(SDIM).astype(np.float32), 1.0))
    infer_idx = len(items) - 1
    n_real = len(graphs)
    sizes = sorted(len(g[1]) for g in graphs)
    batches = [list(rng.permutation(n_real)[:args.batch] if args.batch <= n_real
                    else rng.integers(0, n_real, args.batch)) for _ in range(args.steps + 1)]
    tmp = tempfile.mkdtemp()
    data, bfile = os.path.join(tmp, "data.bin"), os.path.join(tmp, "batches.bin")
    write_data(data, items)
    with open(bfile, "wb") as f:
        f.write(struct.pack("<2i", len(batches), args.batch))
        f.write(np.array(batches, "<i4").tobytes())

    exe = args.exe or build_c()
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(args.threads))
    t_train, t_infer = torch_side(args, items, batches, infer_idx, args.rounds)
    # rounds interleave the two sides; the best round of each is reported
    # (the machine is shared, so the best round is the least disturbed)
    c_gps = t_gps = c_cgps = t_cgps = 0.0
    c_med = c_min = t_med = t_min = c_cmed = t_cmed = float("inf")
    for r in range(args.rounds):
        c_train = subprocess.run([exe, "train", data, bfile, str(args.threads), str(args.hidden),
                                  str(args.steps)], capture_output=True, text=True, env=env,
                                 check=True).stdout
        if args.c_only:
            print(c_train.strip())
            print(subprocess.run([exe, "infer", data, str(args.threads), str(args.hidden),
                                  str(args.reps), str(infer_idx)], capture_output=True,
                                 text=True, env=env, check=True).stdout.strip())
            continue
        g, cg = t_train()
        t_gps, t_cgps = max(t_gps, g), max(t_cgps, cg)
        c_inf = subprocess.run([exe, "infer", data, str(args.threads), str(args.hidden),
                                str(args.reps), str(infer_idx)], capture_output=True, text=True,
                               env=env, check=True).stdout
        tm, tn, tc = t_infer()
        t_med, t_min, t_cmed = min(t_med, tm), min(t_min, tn), min(t_cmed, tc)

        def field(out, key):
            return float(out.split(key + "=")[1].split()[0])
        c_gps = max(c_gps, field(c_train, "graphs_per_s"))
        c_cgps = max(c_cgps, field(c_train, "cpu_graphs_per_s"))
        c_med = min(c_med, field(c_inf, "median_ms"))
        c_min = min(c_min, field(c_inf, "min_ms"))
        c_cmed = min(c_cmed, field(c_inf, "cpu_median_ms"))
        print("round %d: C %.2f graphs/s %.3f ms; torch %.2f graphs/s %.3f ms" %
              (r, c_gps, c_med, t_gps, t_med), file=sys.stderr)
    if args.c_only:
        os.remove(data); os.remove(bfile); os.rmdir(tmp)
        return
    try:
        load = os.getloadavg()[0]
    except OSError:
        load = float("nan")
    cpu = "unknown"
    try:
        cpu = [l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")][0]
    except (OSError, IndexError):
        pass
    import torch
    print("machine: %s, %d cores visible, %s; torch %s; threads %d; load avg %.1f" %
          (cpu, os.cpu_count(), platform.platform(), torch.__version__, args.threads, load))
    print("graphs: %d real exported (nodes %d..%d, median %d); batch %d graphs; hidden %d"
          % (n_real, sizes[0], sizes[-1], sizes[len(sizes) // 2], args.batch, args.hidden))
    print("best of %d interleaved rounds; C last round: %s" % (args.rounds, c_train.strip()))
    print("training   C %9.2f graphs/s  torch %9.2f graphs/s  ratio %.2fx"
          % (c_gps, t_gps, c_gps / t_gps))
    print("inference  C %9.3f ms (min %.3f)  torch %9.3f ms (min %.3f)  ratio %.2fx  (%d-node graph)"
          % (c_med, c_min, t_med, t_min, t_med / c_med, args.infer_nodes))
    print("CPU time (all threads; robust to other jobs on the machine):")
    print("training   C %9.2f graphs/cpu-s  torch %9.2f graphs/cpu-s  ratio %.2fx"
          % (c_cgps, t_cgps, c_cgps / t_cgps))
    print("inference  C %9.3f cpu-ms  torch %9.3f cpu-ms  ratio %.2fx"
          % (c_cmed, t_cmed, t_cmed / c_cmed))
    os.remove(data); os.remove(bfile); os.rmdir(tmp)


if __name__ == "__main__":
    main()
