"""probe_slack.py - how much of a forward's measured peak is the caching
allocator's rounding and unsplit blocks rather than tensors (twenty-eighth
session, docs/COST.md "Allocator slack"). On the GPU machine, for zoo specs
built, cast and called as the collector does (measure.py), reads the
allocator's statistics around the measured eager call:
allocated_bytes (what the collector's max_memory_allocated reports: block
sizes) against requested_bytes (the sizes the tensors asked for), at the
peak and before the call, relative to the allocator's state before the
model was built; and the blocks active before the call (weights, input,
library workspaces), largest first. One JSON line per configuration.

    python3 tools/collect/probe_slack.py SPEC_ID:PREC:BATCH:SEQ_OR_RES ...
    python3 tools/collect/probe_slack.py FILE   (one configuration a line)

For a vision spec the last field is the square resolution in pixels, for
a text spec the sequence length.
"""
import gc
import json
import os
import sys
import types

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import measure  # noqa: E402
import zoo  # noqa: E402

MIB = 2 ** 20


def stats(torch):
    s = torch.cuda.memory_stats()
    return dict(alloc=s.get("allocated_bytes.all.current", 0),
                alloc_peak=s.get("allocated_bytes.all.peak", 0),
                req=s.get("requested_bytes.all.current", 0),
                req_peak=s.get("requested_bytes.all.peak", 0),
                blocks=s.get("active.all.current", 0))


def active_blocks(torch, top=10):
    """Active blocks now: (size, requested) largest first, and the count."""
    out = []
    for seg in torch.cuda.memory_snapshot():
        for b in seg.get("blocks", []):
            if b.get("state") == "active_allocated":
                out.append((b["size"], b.get("requested_size", b["size"])))
    out.sort(reverse=True)
    return out[:top], len(out)


def probe(torch, spec, prec, batch, last, c):
    dtype = dict(fp32=torch.float32, fp16=torch.float16, bf16=torch.bfloat16)[prec]
    model = x = None
    out = dict(spec=spec["id"], prec=prec, batch=batch, last=last)
    try:
        gc.collect()
        measure._clear_workspaces(torch)
        b0 = stats(torch)
        torch.manual_seed(0)
        with torch.device("cuda"):
            model = zoo.build(spec, dtype=None)
        model = zoo.wrap(model, spec["kind"]).eval()
        measure.set_precision(torch, prec)
        model = measure.to_dtype(model, dtype)
        measure._clear_workspaces(torch)
        text = spec["kind"] == "text"
        x = measure.make_input(torch, spec, batch, last if text else 0,
                               None if text else last, None if text else last, dtype)
        with torch.inference_mode():
            for _ in range(3):
                model(x)
            torch.cuda.synchronize()
            pre = stats(torch)
            top, n = active_blocks(torch)
            torch.cuda.reset_peak_memory_stats()
            model(x)
            torch.cuda.synchronize()
            post = stats(torch)
        out.update(
            memory_mib=round((post["alloc_peak"] - b0["alloc"]) / MIB, 3),
            requested_mib=round((post["req_peak"] - b0["req"]) / MIB, 3),
            before_mib=round((pre["alloc"] - b0["alloc"]) / MIB, 3),
            before_requested_mib=round((pre["req"] - b0["req"]) / MIB, 3),
            before_blocks=n - b0["blocks"],
            before_top=[[round(s / MIB, 4), round(r / MIB, 4)] for s, r in top])
    except Exception as e:  # one probe's failure is its result
        out["error"] = "%s: %s" % (type(e).__name__, e)
    finally:
        model = x = None
        gc.collect()
        torch.cuda.empty_cache()
    return out


def main():
    import torch
    byid = {s["id"]: s for s in zoo.all_specs()}
    c = types.SimpleNamespace(torch=torch)
    args = sys.argv[1:]
    if len(args) == 1 and os.path.isfile(args[0]):
        args = open(args[0]).read().split()
    for arg in args:
        parts = arg.split(":")
        sid, prec, b, r = ":".join(parts[:-3]), parts[-3], int(parts[-2]), int(parts[-1])
        if sid not in byid:
            print(json.dumps(dict(spec=sid, error="unknown spec")), flush=True)
            continue
        print(json.dumps(probe(torch, byid[sid], prec, b, r, c)), flush=True)


if __name__ == "__main__":
    main()
