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
import measure  # noqa: E402
import probe_common  # noqa: E402
import zoo  # noqa: E402

MIB = 2 ** 20


def nbytes(t):
    return t.numel() * t.element_size() if t is not None else 0


def hook_convs(torch, model, log):
    """Forward hooks on every convolution that also hook its autograd
    node; appends one dict per call to log (backward fields filled when
    the backward runs)."""
    hooks = []
    kinds = (torch.nn.Conv1d, torch.nn.Conv2d, torch.nn.Conv3d)

    def pre(mod, args):
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        mod._dlp_before = torch.cuda.memory_allocated()

    def post(mod, args, out):
        torch.cuda.synchronize()
        peak = torch.cuda.max_memory_allocated()
        x = args[0]
        ob = nbytes(out)
        rec = dict(x=list(x.shape), w=list(mod.weight.shape), y=list(out.shape),
                   s=list(mod.stride),
                   p=list(mod.padding) if not isinstance(mod.padding, str)
                   else mod.padding,
                   d=list(mod.dilation), g=mod.groups,
                   bias=mod.bias is not None, dtype=str(out.dtype)[6:],
                   cl=x.is_contiguous(memory_format=torch.channels_last)
                   if x.dim() == 4 else False,
                   dgrad=bool(x.requires_grad),
                   fwd_extra_mib=round((peak - mod._dlp_before - ob) / MIB, 3),
                   in_mib=round(nbytes(x) / MIB, 3),
                   out_mib=round(ob / MIB, 3))
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

    for m in model.modules():
        if isinstance(m, kinds):
            hooks.append(m.register_forward_pre_hook(pre))
            hooks.append(m.register_forward_hook(post))
    return hooks


def probe(torch, spec, prec, batch, res, _rt):
    def body(o):
        probe_common.settle(torch)
        base0 = torch.cuda.memory_allocated()
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
        step()
        step()
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
