"""probe_sdpa.py - why one forward's CUDA-graph replay can be slower than
its eager run, and why T5's half-precision eager forward is slow (twentieth
session, docs/EVAL.md). On the GPU machine, for a few specs of the zoo,
built and called as the collector does (measure.py: input ids only):
  - every scaled_dot_product_attention call, eagerly and during CUDA-graph
    capture: whether it got a mask (and its shape) and is_causal;
  - the host-device synchronizations of one eager forward
    (torch.cuda.set_sync_debug_mode("warn"), counted);
  - the median eager and CUDA-graph-replay latency (CUDA events, 20 calls);
  - with --kernels, the GPU kernels of one eager forward and of one replay
    (torch.profiler), summed by name: which attention kernel each runtime
    runs (forty-eighth session: the graph rows of BERT-style encoders at
    long sequences are several times their eager time).
Writes one JSON line per (spec, precision, batch, seq) to stdout.

    python3 tools/collect/probe_sdpa.py [--kernels] [--top N] [SPEC_ID:PREC:BATCH:SEQ ...]

--top N keeps the N largest kernel names of each table (default 14).
"""
import json
import os
import statistics
import sys
import types
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import measure  # noqa: E402
import zoo  # noqa: E402

DEFAULT = ["hf:bert-base:fp16:16:1024", "hf:bert-base:fp32:16:1024",
           "hf:bert-base:fp16:16:128", "hf:t5-base-encoder:fp16:2:128",
           "hf:t5-base-encoder:fp32:2:128", "hf:llama-3.2-1b:bf16:4:1024"]


def median_ms(torch, fn, n=20):
    ts = []
    for _ in range(n):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        torch.cuda.synchronize()
        ts.append(a.elapsed_time(b))
    return statistics.median(ts)


def kernels(torch, fn, top=14):
    """The kernels of one call of fn, summed by name (largest first):
    [name (80 chars), launches, microseconds]."""
    from torch.profiler import profile, ProfilerActivity
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as p:
        fn()
        torch.cuda.synchronize()
    agg = {}
    for e in p.events():
        if e.device_type != torch.autograd.DeviceType.CUDA:
            continue
        k = agg.setdefault(e.name[:80], [0, 0.0])
        k[0] += 1
        k[1] += e.time_range.elapsed_us()
    rows = sorted(([n, c, round(t, 1)] for n, (c, t) in agg.items()),
                  key=lambda r: -r[2])
    return dict(total_us=round(sum(r[2] for r in rows), 1),
                launches=sum(r[1] for r in rows), top=rows[:top])


def probe(torch, spec, prec, batch, seq, with_kernels=False, top=14):
    F = torch.nn.functional
    calls = []
    orig = F.scaled_dot_product_attention

    def logged(q, k, v, attn_mask=None, *a, **kw):
        calls.append(dict(capturing=torch.cuda.is_current_stream_capturing(),
                          mask=None if attn_mask is None else list(attn_mask.shape),
                          mask_dtype=None if attn_mask is None else str(attn_mask.dtype),
                          mask_stride=None if attn_mask is None else list(attn_mask.stride()),
                          causal=bool(kw.get("is_causal", False))))
        return orig(q, k, v, attn_mask, *a, **kw)
    F.scaled_dot_product_attention = logged
    dtype = dict(fp32=torch.float32, fp16=torch.float16, bf16=torch.bfloat16)[prec]
    try:
        with torch.device("cuda"):
            model = zoo.build(spec, dtype=torch.float32)
        model = zoo.wrap(model, spec["kind"]).eval().to(dtype)
        x = torch.randint(0, 1000, (batch, seq), device="cuda")
        with torch.inference_mode():
            fn = lambda: model(x)  # noqa: E731
            for _ in range(3):
                fn()
            torch.cuda.synchronize()
            n_eager = len(calls)   # 3 warm-up forwards
            torch.cuda.set_sync_debug_mode("warn")
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                fn()
            torch.cuda.set_sync_debug_mode(0)
            syncs = sum("synchroniz" in str(m.message) for m in w)
            eager_ms = median_ms(torch, fn)
            # the collector's own capture (warm-up on a side stream first)
            g, _, _ = measure.capture_graph(
                types.SimpleNamespace(torch=torch, mem_base=0), fn)
            captured = [k for k in calls[n_eager:] if k["capturing"]]
            graph_ms = median_ms(torch, g.replay)
            out = dict(spec=spec["id"], prec=prec, batch=batch, seq=seq,
                       eager_ms=round(eager_ms, 3), graph_ms=round(graph_ms, 3),
                       syncs_per_eager_forward=syncs,
                       sdpa_eager=calls[:1], sdpa_calls_eager=n_eager // 3,
                       sdpa_captured=captured[:1],
                       sdpa_calls_captured=len(captured))
            if with_kernels:
                out["kernels_eager"] = kernels(torch, fn, top)
                out["kernels_graph"] = kernels(torch, g.replay, top)
        return out
    except Exception as e:  # one probe's failure is its result
        return dict(spec=spec["id"], prec=prec, batch=batch, seq=seq,
                    error="%s: %s" % (type(e).__name__, e))
    finally:
        F.scaled_dot_product_attention = orig


def main():
    import torch
    byid = {s["id"]: s for s in zoo.all_specs()}
    args = sys.argv[1:]
    top = 14
    if "--top" in args:
        i = args.index("--top")
        top = int(args[i + 1])
        del args[i:i + 2]
    with_kernels = "--kernels" in args
    args = [a for a in args if a != "--kernels"]
    for arg in args or DEFAULT:
        sid, prec, b, s = arg.rsplit(":", 3)
        print(json.dumps(probe(torch, byid[sid], prec, int(b), int(s),
                               with_kernels, top)), flush=True)
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
