"""probe_common.py - what the allocator probes share (probe_memory.py,
probe_convws.py, probe_slack.py): their command line, and building a zoo
spec the way the collector does before a measured call (measure.py: seeded
build, wrap, precision settings, cast, workspaces cleared, the input).

A configuration is SPEC_ID:PREC:BATCH:LAST[:RT]; LAST is the sequence
length of a text spec and the square input resolution in pixels of a
vision spec; RT (eager, graph or both) only where the probe takes it. A
single argument naming a file reads the configurations from it, one per
line or separated by spaces.
"""
import gc
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

RUNTIMES = ("eager", "graph", "both")


def parse_configs(args, with_runtime=False):
    """Yields (spec_id, prec, batch, last, rt) per configuration, rt None
    unless with_runtime (then "both" when not given); raises ValueError
    naming a malformed one."""
    if len(args) == 1 and os.path.isfile(args[0]):
        with open(args[0]) as f:
            args = f.read().split()
    for arg in args:
        parts = arg.split(":")
        rt = None
        if with_runtime:
            rt = parts.pop() if parts[-1] in RUNTIMES else "both"
        if len(parts) < 4 or parts[-3] not in ("fp32", "fp16", "bf16"):
            raise ValueError("bad configuration %r: want SPEC_ID:PREC:BATCH:LAST%s"
                             % (arg, "[:RT]" if with_runtime else ""))
        try:
            batch, last = int(parts[-2]), int(parts[-1])
        except ValueError:
            raise ValueError("bad configuration %r: BATCH and LAST are integers" % arg)
        yield ":".join(parts[:-3]), parts[-3], batch, last, rt


def build(torch, spec, prec, batch, last):
    """(model, input) on the GPU, as the collector builds, casts and
    feeds them; the caller has taken its allocator baseline before."""
    import measure
    import zoo
    dtype = dict(fp32=torch.float32, fp16=torch.float16, bf16=torch.bfloat16)[prec]
    torch.manual_seed(0)
    with torch.device("cuda"):
        model = zoo.build(spec, dtype=None)
    model = zoo.wrap(model, spec["kind"]).eval()
    measure.set_precision(torch, prec)
    model = measure.to_dtype(model, dtype)
    measure._clear_workspaces(torch)
    text = spec["kind"] == "text"
    hw = None if text else last
    x = measure.make_input(torch, spec, batch, last if text else 0, hw, hw, dtype)
    return model, x


def build_train(torch, spec, prec, batch, res):
    """(model, opt, step, x, lab) after two warm-up steps: spec built,
    seeded and trained as the collector's training step
    (measure.train_step: SGD with momentum, gradients set to None first,
    fp16 / bf16 as autocast of the fp32 model with a GradScaler at fp16)
    on a [batch, 3, res, res] input; the caller has taken its allocator
    baseline before (probe_train.py, probe_convbwd.py)."""
    import measure
    import zoo
    torch.manual_seed(0)
    with torch.device("cuda"):
        model = zoo.build(spec, dtype=None)
    model = zoo.wrap(model, spec["kind"])
    measure.set_precision(torch, "fp32")
    model.train()
    opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
    lossf = torch.nn.CrossEntropyLoss()
    amp = {"fp16": torch.float16, "bf16": torch.bfloat16}.get(prec)
    scaler = torch.amp.GradScaler("cuda") if prec == "fp16" else None
    x = torch.randn(batch, 3, res, res, device="cuda")
    step, lab = measure.train_step(torch, model, opt, lossf, x, amp, scaler)
    step()   # two steps to warm up: kernels picked, state made
    step()
    return model, opt, step, x, lab


def settle(torch):
    """Frees what a probe left and clears the library workspaces."""
    import measure
    gc.collect()
    measure._clear_workspaces(torch)


def guarded(torch, out, body):
    """[out] after body(out) filled it; an exception is the probe's result
    (out["error"]). The GPU memory body held is freed after, either way."""
    try:
        body(out)
    except Exception as e:  # one probe's failure is its result
        out["error"] = "%s: %s" % (type(e).__name__, e)
    finally:
        gc.collect()
        torch.cuda.empty_cache()
    return [out]


def main(probe_one, with_runtime=False):
    """Runs probe_one(torch, spec, prec, batch, last, rt) -> list of dicts
    for each configuration of the command line; one JSON line per dict."""
    import torch
    import zoo
    byid = {s["id"]: s for s in zoo.all_specs()}
    for sid, prec, b, last, rt in parse_configs(sys.argv[1:], with_runtime):
        if sid not in byid:
            print(json.dumps(dict(spec=sid, error="unknown spec")), flush=True)
            continue
        for r in probe_one(torch, byid[sid], prec, b, last, rt):
            print(json.dumps(r), flush=True)
