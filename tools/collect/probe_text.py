"""probe_text.py - checks language-model families on the GPU machine before
a batch measures them (eighteenth session: the new families of
zoo.HF_FAMILIES2 could not be exported on the developer machine, whose
torch 1.13 runs no transformers 5).

For each family: the smallest sampled variant of 3 layers or more is exported with the
batch's own code path (export.export_spec, in parallel processes on the
CPU), and one forward runs on the GPU in eager mode and as a CUDA graph at
the precision a batch uses (bf16 decoders, fp16 encoders). --big SPEC_ID
exports those specs too (timed, --big-threads each). Writes OUT/probe.jsonl
(one line per check) and OUT/graphs/<hash>.onnx.

    python3 tools/collect/probe_text.py --out $OUT/probe [--big hf:olmo-1b]
"""
import argparse
import json
import multiprocessing as mp
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import zoo  # noqa: E402


def export_one(args):
    spec, out, threads = args
    import torch
    import export
    torch.set_num_threads(threads)
    wdir = os.path.join(out, "work_%d" % os.getpid())
    os.makedirs(wdir, exist_ok=True)
    t0 = time.time()
    rec = dict(check="export", id=spec["id"], family=spec["family"])
    try:
        data, info = export.export_spec(spec, wdir)
        with open(os.path.join(out, "graphs", info["hash"] + ".onnx"), "wb") as f:
            f.write(data)
        rec.update(info)
    except Exception as e:
        rec["error"] = "%s: %s" % (type(e).__name__, str(e).split("\n")[0][:300])
    rec["seconds"] = round(time.time() - t0, 1)
    return rec


def gpu_one(spec):
    """Eager forward and CUDA-graph replay of batch 2 x seq 128."""
    import torch
    rec = dict(check="gpu", id=spec["id"], family=spec["family"])
    t0 = time.time()
    try:
        torch.manual_seed(0)
        with torch.device("cuda"):
            m = zoo.build(spec)
        m = zoo.wrap(m, "text").eval()
        dt = torch.bfloat16 if spec["family"] in zoo.DECODERS else torch.float16
        m = m.to(dt)
        x = torch.randint(0, 1000, (2, 128), device="cuda")
        with torch.inference_mode():
            y = m(x)
            rec["out"] = list(y.shape)
            s = torch.cuda.Stream()
            s.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(s):
                for _ in range(3):
                    m(x)
            torch.cuda.current_stream().wait_stream(s)
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                m(x)
            g.replay()
            torch.cuda.synchronize()
        rec["attn"] = getattr(m.m.config, "_attn_implementation", "")
        rec["params"] = sum(p.numel() for p in m.parameters())
        del m, g
    except Exception as e:
        rec["error"] = "%s: %s" % (type(e).__name__, str(e).split("\n")[0][:300])
    torch.cuda.empty_cache()
    rec["seconds"] = round(time.time() - t0, 1)
    return rec


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--families", default=",".join(sorted(zoo.HF_FAMILIES2)))
    ap.add_argument("--big", default="")
    ap.add_argument("--big-threads", type=int, default=6)
    ap.add_argument("--procs", type=int, default=8)
    a = ap.parse_args()
    os.makedirs(os.path.join(a.out, "graphs"), exist_ok=True)
    specs = zoo.all_specs()
    fams = [f for f in a.families.split(",") if f]
    small = []
    for fam in fams:
        # three layers at least: ModernBERT's global attention every third
        vs = [s for s in specs if s["family"] == fam and s["id"].startswith("hfv:")
              and s["build"]["cfg"]["L"] >= 3]
        small.append(min(vs, key=lambda s: zoo.hf_params_estimate(s["build"]["cfg"])))
    byid = {s["id"]: s for s in specs}
    big = [byid[i] for i in a.big.split(",") if i]
    log = open(os.path.join(a.out, "probe.jsonl"), "a")
    ctx = mp.get_context("spawn")
    pool = ctx.Pool(a.procs, maxtasksperchild=1)
    bigpool = ctx.Pool(1, maxtasksperchild=1) if big else None
    res = pool.imap_unordered(export_one, [(s, a.out, 1) for s in small])
    bres = bigpool.imap_unordered(export_one, [(s, a.out, a.big_threads) for s in big]) \
        if big else iter(())
    for s in small:
        r = gpu_one(s)
        print(json.dumps(r), flush=True)
        log.write(json.dumps(r) + "\n")
        log.flush()
    for it in (res, bres):
        for r in it:
            print(json.dumps(r), flush=True)
            log.write(json.dumps(r) + "\n")
            log.flush()
    log.close()


if __name__ == "__main__":
    main()
