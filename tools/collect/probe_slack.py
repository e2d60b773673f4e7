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
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import probe_common  # noqa: E402

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


def probe(torch, spec, prec, batch, last, _rt):
    def body(out):
        probe_common.settle(torch)
        b0 = stats(torch)
        model, x = probe_common.build(torch, spec, prec, batch, last)
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
    return probe_common.guarded(
        torch, dict(spec=spec["id"], prec=prec, batch=batch, last=last), body)


if __name__ == "__main__":
    probe_common.main(probe)
