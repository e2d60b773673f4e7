"""probe_convbwd.py - what each convolution of a vision model allocates in
a training step, forward and backward (sixty-fifth session, docs/COST.md
"cuDNN workspaces in the training step"). On the GPU machine, for a few
zoo specs built and trained as probe_train.py does (the collector's step:
SGD with momentum, gradients set to None first, fp16 / bf16 as autocast of
the fp32 model), two steps to warm up, then one more with a forward
pre-hook and hook on every Conv1d/2d/3d and, on the autograd node of each
of its outputs (ConvolutionBackward0), a pre-hook and a hook:

    fwd_extra = max_memory_allocated during the call - allocated before - output
    bwd_extra = max_memory_allocated during the node - allocated before
                - the gradients it returns

bwd_extra is cuDNN's backward-data and backward-filter workspaces and any
copies; the grid probe (probe_convgrid.py --backward) measures the same on
shapes with no model behind them, this one the shapes, layouts and autocast
casts of real models, to check a workspace model against. Node hooks, not
module backward hooks: those break under the in-place activations that
follow many convolutions.

    python3 tools/collect/probe_convbwd.py SPEC_ID:PREC:BATCH:RES ...

One JSON line per configuration: the step's peak as the collector
measures it (memory_mib) and, per conv, its shapes, attributes, dtype,
dgrad (the input's gradient computed), fwd_extra_mib and bwd_extra_mib.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import probe_common  # noqa: E402
import probe_convws  # noqa: E402

MIB = 2 ** 20


def nbytes(t):
    return t.numel() * t.element_size() if t is not None else 0


def hook_convs(torch, model, log):
    """Forward hooks on every convolution that also hook its autograd
    node; appends one dict per call to log (backward fields filled when
    the backward runs)."""

    def post(mod, args, out, extra_mib):
        x = args[0]
        rec = probe_convws.conv_fields(torch, mod, x, out)
        rec.update(dtype=str(out.dtype)[6:], dgrad=bool(x.requires_grad),
                   fwd_extra_mib=extra_mib)
        log.append(rec)
        node = out.grad_fn
        if node is None:
            return
        state = {}

        def npre(grad_outputs):
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
            state["before"] = torch.cuda.memory_allocated()

        def npost(grad_inputs, grad_outputs):
            torch.cuda.synchronize()
            pk = torch.cuda.max_memory_allocated()
            gb = sum(nbytes(g) for g in grad_inputs)
            rec["bwd_extra_mib"] = round((pk - state["before"] - gb) / MIB, 3)
            rec["grad_mib"] = round(gb / MIB, 3)
            rec["node"] = type(node).__name__

        node.register_prehook(npre)
        node.register_hook(npost)

    return probe_convws.hook_all(torch, model, post)


def probe(torch, spec, prec, batch, res, _rt):
    def body(o):
        probe_common.settle(torch)
        base0 = torch.cuda.memory_allocated()
        model, opt, step, x, lab = probe_common.build_train(torch, spec, prec,
                                                            batch, res)
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        step()
        torch.cuda.synchronize()
        o["memory_mib"] = round((torch.cuda.max_memory_allocated() - base0) / MIB, 2)
        log = []
        hooks = hook_convs(torch, model, log)
        step()
        torch.cuda.synchronize()
        for h in hooks:
            h.remove()
        o["convs"] = log
        del model, opt, x, lab

    return probe_common.guarded(
        torch, dict(spec=spec["id"], prec=prec, batch=batch, res=res), body)


if __name__ == "__main__":
    probe_common.main(probe)
