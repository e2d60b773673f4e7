#!/usr/bin/python3
"""gen_train_saved.py -- the PyTorch oracle of the training-memory estimate's
saved activations (feat.c, saved_train_bytes), for tests/test_memest.c.

For every torchvision model of tests/fixtures/models/oracle.json, builds the
model in train mode (random weights), runs one forward of a batch of 2 at
its fixture's input size on the CPU, and walks the autograd graph from the
output: every tensor a backward node saved (its `_saved_*` attributes),
counted once per storage, parameters left out, is what autograd keeps for
the backward pass. Writes tests/fixtures/models/train_saved.json:
{model: {"batch", "input_size", "saved_bytes", "per_node": {BackwardNode:
bytes}}, "_env": versions}. Run with /usr/bin/python3 (Debian's torch):

    /usr/bin/python3 tests/gen_train_saved.py
"""
import collections
import json
import os

import torch
import torchvision

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIX = os.path.join(ROOT, "tests", "fixtures", "models")
BATCH = 2


def saved_storages(model, x):
    """Bytes of the distinct non-parameter storages the backward graph of
    model(x) saved, in all and per backward node type."""
    params = {p.data_ptr() for p in model.parameters()}
    y = model(x)
    seen, kind = {}, {}
    stack, visited = [y.sum().grad_fn], set()
    while stack:
        fn = stack.pop()
        if fn is None or fn in visited:
            continue
        visited.add(fn)
        for attr in dir(fn):
            if not attr.startswith("_saved_"):
                continue
            try:
                val = getattr(fn, attr)
            except RuntimeError:
                continue
            for t in val if isinstance(val, (tuple, list)) else [val]:
                if not isinstance(t, torch.Tensor) or t.numel() == 0:
                    continue
                s = t.storage()
                if s.data_ptr() in params or s.data_ptr() in seen:
                    continue
                seen[s.data_ptr()] = s.size() * t.element_size()
                kind[s.data_ptr()] = type(fn).__name__
        stack.extend(f for f, _ in fn.next_functions)
    per = collections.Counter()
    for k, b in seen.items():
        per[kind[k]] += b
    return sum(seen.values()), dict(per)


def main():
    torch.manual_seed(0)
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    oracle = json.load(open(os.path.join(FIX, "oracle.json")))
    out = {"_env": {"torch": torch.__version__,
                    "torchvision": torchvision.__version__}}
    for name, meta in sorted(oracle.items()):
        if meta["kind"] != "torchvision":
            continue
        kw = {}
        if name in ("googlenet", "inception_v3"):
            kw = {"aux_logits": False, "init_weights": False}
        model = getattr(torchvision.models, name)(weights=None, **kw).train()
        size = meta["input_size"]
        total, per = saved_storages(model, torch.randn(BATCH, 3, size, size))
        out[name] = {"file": meta["file"], "batch": BATCH, "input_size": size,
                     "saved_bytes": total, "per_node": per}
        print("%-20s %10.2f MiB" % (name, total / 2 ** 20), flush=True)
    with open(os.path.join(FIX, "train_saved.json"), "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
