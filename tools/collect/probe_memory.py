"""probe_memory.py - what is live at a forward's peak memory (twenty-first
session, docs/COST.md). On the GPU machine, for a few specs of the zoo,
built, cast and called as the collector does (measure.py: seeded build,
to_dtype, input ids only, warm-up calls, then the measured call), records
the caching allocator's history over the measured eager call and over the
CUDA-graph capture (torch.cuda.memory._record_memory_history), replays it
to the moment of the peak, and lists the blocks live then: size, and the
Python frames that allocated them. What the liveness estimate of
src/feat/feat.c misses or adds shows there by name.
Writes one JSON line per (spec, precision, batch, seq, runtime), with the
bytes of the module's parameters and buffers (state_mib) beside what is
held before the call (before_mib).

    python3 tools/collect/probe_memory.py SPEC_ID:PREC:BATCH:SEQ[:RT] ...

RT is eager, graph or both (default both). For a vision spec SEQ is the
square input resolution in pixels (224: 3 x 224 x 224 images).
"""
import gc
import os
import sys
import types

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import measure  # noqa: E402
import probe_common  # noqa: E402

MIB = 2 ** 20


def frames_of(ev, keep=4):
    """The allocating frames worth reading: model code first (transformers,
    the zoo), then torch.nn.functional; file basename:line:function."""
    out = []
    for f in ev.get("frames", []):
        fn = f.get("filename", "")
        if ("transformers" in fn or "collect" in fn or "functional" in fn or
                "/timm/" in fn or "/torchvision/" in fn) and \
                "memory.py" not in fn:
            out.append("%s:%s:%s" % (os.path.basename(fn), f.get("line"), f.get("name")))
        if len(out) == keep:
            break
    return out


def live_at(trace, idx):
    """The blocks allocated and not freed by event idx of trace, by address."""
    live = {}
    for ev in trace[:idx + 1]:
        a = ev.get("action")
        if a == "alloc":
            live[ev["addr"]] = ev
        elif a == "free_requested":
            live.pop(ev["addr"], None)
    return live


def peak_index(trace, base):
    """Replays allocator events (alloc / free_requested) from `base` bytes;
    returns (peak bytes, the index of the event that first reached it)."""
    live, cur, best, best_i = {}, base, base, -1
    for i, ev in enumerate(trace):
        a = ev.get("action")
        if a == "alloc":
            live[ev["addr"]] = ev
            cur += ev["size"]
        elif a == "free_requested" and ev["addr"] in live:
            cur -= live.pop(ev["addr"])["size"]
        if cur > best:
            best, best_i = cur, i
    return best, best_i


def peak_blocks(trace, base, top=14):
    """(peak bytes, the blocks live at the peak, largest first, their count,
    the bytes of those past the top)."""
    best, best_i = peak_index(trace, base)
    blocks = sorted(live_at(trace, best_i).values(), key=lambda e: -e["size"])
    rows = [dict(mib=round(e["size"] / MIB, 3), at=frames_of(e)) for e in blocks[:top]]
    rest = sum(e["size"] for e in blocks[top:])
    return best, rows, len(blocks), rest


def recorded(torch, fn):
    """Runs fn with the allocator's history on; (max_memory_allocated over
    fn, memory allocated before it, the trace)."""
    torch.cuda.synchronize()
    torch.cuda.memory._record_memory_history(max_entries=400000, stacks="python")
    torch.cuda.reset_peak_memory_stats()
    base = torch.cuda.memory_allocated()
    out = fn()
    torch.cuda.synchronize()
    peak = torch.cuda.max_memory_allocated()
    snap = torch.cuda.memory._snapshot()
    torch.cuda.memory._record_memory_history(enabled=None)
    trace = snap["device_traces"][torch.cuda.current_device()]
    return peak, base, trace, out


def state_bytes(model):
    """Bytes of the module's parameters and buffers, each storage once:
    what `before_mib` holds besides the input and the library workspaces."""
    seen, n = set(), 0
    for t in list(model.parameters()) + list(model.buffers()):
        if t.device.type != "cuda":
            continue
        key = t.untyped_storage().data_ptr()
        if key not in seen:
            seen.add(key)
            n += t.untyped_storage().nbytes()
    return n


def probe(torch, spec, prec, batch, seq, rt):
    res = []
    rts = ["eager", "graph"] if rt == "both" else [rt]
    c = types.SimpleNamespace(torch=torch, mem_base=0)
    model = x = None
    try:
        probe_common.settle(torch)
        c.mem_base = torch.cuda.memory_allocated()
        model, x = probe_common.build(torch, spec, prec, batch, seq)
        with torch.inference_mode():
            fn = lambda: model(x)  # noqa: E731
            for _ in range(3):
                fn()
            for rt in rts:
                if rt == "eager":
                    peak, base, trace, _ = recorded(torch, fn)
                else:
                    peak, base, trace, g = recorded(
                        torch, lambda: measure.capture_graph(c, fn)[0])
                    del g
                best, rows, n, rest = peak_blocks(trace, base)
                res.append(dict(spec=spec["id"], prec=prec, batch=batch, seq=seq,
                                runtime=rt, state_mib=round(state_bytes(model) / MIB, 2),
                                memory_mib=round((peak - c.mem_base) / MIB, 2),
                                before_mib=round((base - c.mem_base) / MIB, 2),
                                replay_peak_mib=round((best - c.mem_base) / MIB, 2),
                                live_blocks=n, rest_mib=round(rest / MIB, 2),
                                top=rows))
    except Exception as e:  # one probe's failure is its result
        res.append(dict(spec=spec["id"], prec=prec, batch=batch, seq=seq,
                        error="%s: %s" % (type(e).__name__, e)))
    finally:
        model = x = None
        gc.collect()
        torch.cuda.empty_cache()
    return res


if __name__ == "__main__":
    probe_common.main(probe, with_runtime=True)
