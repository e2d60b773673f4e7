"""probe_rnn.py - what a recurrent layer's forward keeps for its backward on
the GPU (seventy-fourth session, docs/COST.md "A recurrent layer's saved
state").

cuDNN's RNN forward in training mode writes a reserve buffer (the gates and
states of every step) that autograd keeps until the backward, beside the
input and output it saves; in inference it writes none. The training
memory estimate counted nothing for an LSTM or a GRU, and Sequencer2D's
steps (72 bidirectional LSTMs) came out 30-41% under. This probe records,
for nn.LSTM / nn.GRU of one layer over a grid of shapes, fp32 and under
fp16 autocast (as the collector's training steps run), every tensor the
backward node saves (grad_fn._saved_*: name, shape, dtype, bytes) and the
allocator's growth across the forward with gradients, so the rule can be
read off, not guessed.

    python3 tools/collect/probe_rnn.py OUT.csv

One CSV row per (configuration, saved tensor); the rows with saved
"(allocated)" hold the allocator's growth across the forward less the
output, h_n and c_n.
"""
import csv
import itertools
import sys

import torch


def saved_tensors(fn):
    """(name, tensor) of every tensor a backward node saves, lists flattened."""
    out = []
    for a in dir(fn):
        if not a.startswith("_saved_"):
            continue
        try:
            v = getattr(fn, a)
        except Exception:  # noqa: BLE001 - released or not a tensor
            continue
        if isinstance(v, torch.Tensor):
            out.append((a[7:], v))
        elif isinstance(v, (list, tuple)):
            out += [(f"{a[7:]}[{i}]", t) for i, t in enumerate(v)
                    if isinstance(t, torch.Tensor)]
    return out


def rnn_node(t):
    """The backward node of the cuDNN call behind output t."""
    seen, todo = set(), [t.grad_fn]
    while todo:
        fn = todo.pop()
        if fn is None or id(fn) in seen:
            continue
        seen.add(id(fn))
        if "Rnn" in type(fn).__name__:
            return fn
        todo += [f for f, _ in fn.next_functions]
    return None


def probe(w, cell, seq, batch, inp, hidden, bi, prec):
    dev = torch.device("cuda")
    m = getattr(torch.nn, cell)(inp, hidden, bidirectional=bi).to(dev)
    x = torch.randn(seq, batch, inp, device=dev, requires_grad=True)
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    with torch.autocast("cuda", dtype=torch.float16, enabled=prec == "fp16"):
        y, st = m(x)
    torch.cuda.synchronize()
    grown = torch.cuda.memory_allocated() - base
    outs = [y] + (list(st) if isinstance(st, tuple) else [st])
    grown -= sum(o.numel() * o.element_size() for o in outs)
    fn = rnn_node(y)
    key = [cell, seq, batch, inp, hidden, int(bi), prec,
           type(fn).__name__ if fn else "none"]
    w.writerow(key + ["(allocated)", "", "", grown])
    for name, t in saved_tensors(fn) if fn else []:
        w.writerow(key + [name, "x".join(map(str, t.shape)),
                          str(t.dtype).replace("torch.", ""),
                          t.numel() * t.element_size()])
    del y, st, outs, fn, x, m
    torch.cuda.empty_cache()


def main():
    torch.backends.cudnn.benchmark = False
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    with open(sys.argv[1], "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["cell", "seq", "batch", "input", "hidden", "bidirectional",
                    "prec", "node", "saved", "shape", "dtype", "bytes"])
        w.writerow(["#", torch.__version__, torch.backends.cudnn.version(),
                    torch.cuda.get_device_name(), "", "", "", "", "", "", "",
                    ""])
        grid = itertools.product(["LSTM", "GRU"], [8, 16, 32, 56],
                                 [1, 64, 512], [48, 192], [48, 96, 256],
                                 [False, True], ["fp32", "fp16"])
        for cell, seq, batch, inp, hidden, bi, prec in grid:
            try:
                probe(w, cell, seq, batch, inp, hidden, bi, prec)
            except Exception as e:  # noqa: BLE001 - record and go on
                w.writerow([cell, seq, batch, inp, hidden, int(bi), prec,
                            "error", type(e).__name__, "", "", ""])
        f.flush()


if __name__ == "__main__":
    main()
