"""probe_convws.py - what each convolution of a vision model allocates on
top of its output while it runs (twenty-eighth session, docs/COST.md
"cuDNN convolution workspaces"). On the GPU machine, for a few zoo specs
built, cast and called as the collector does (measure.py; cudnn.benchmark
off, so cuDNN's heuristics pick the algorithm), a forward pre-hook and a
forward hook on every Conv1d/2d/3d read the allocator around the call:

    extra = max_memory_allocated during the call - allocated before - output

that is the workspace plus any transposed copies cuDNN makes. Writes one
JSON line per (spec, precision, batch, resolution): the whole call's peak
(as the collector's eager memory) and, per conv, its shapes, attributes and
extra bytes.

    python3 tools/collect/probe_convws.py SPEC_ID:PREC:BATCH:RES ...
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import probe_common  # noqa: E402

MIB = 2 ** 20


def conv_fields(torch, mod, x, out):
    """A convolution call's record: shapes, attributes, layout, and its
    input's and output's MiB (probe_convbwd.py's too)."""
    return dict(x=list(x.shape), w=list(mod.weight.shape), y=list(out.shape),
                s=list(mod.stride),
                p=list(mod.padding) if not isinstance(mod.padding, str)
                else mod.padding,
                d=list(mod.dilation), g=mod.groups,
                bias=mod.bias is not None,
                cl=x.is_contiguous(memory_format=torch.channels_last)
                if x.dim() == 4 else False,
                in_mib=round(x.numel() * x.element_size() / MIB, 3),
                out_mib=round(out.numel() * out.element_size() / MIB, 3))


def hook_all(torch, model, post):
    """On every Conv1d/2d/3d of model, a forward pre-hook that resets the
    allocator's peak and notes what is allocated, and post(mod, args,
    out, extra_mib) after the call, extra_mib what it allocated beside its
    output; the handles."""
    def pre(mod, args):
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        mod._dlp_before = torch.cuda.memory_allocated()

    def after(mod, args, out):
        torch.cuda.synchronize()
        peak = torch.cuda.max_memory_allocated()
        ob = out.numel() * out.element_size()
        post(mod, args, out, round((peak - mod._dlp_before - ob) / MIB, 3))

    hooks = []
    kinds = (torch.nn.Conv1d, torch.nn.Conv2d, torch.nn.Conv3d)
    for m in model.modules():
        if isinstance(m, kinds):
            hooks.append(m.register_forward_pre_hook(pre))
            hooks.append(m.register_forward_hook(after))
    return hooks


def hook_convs(torch, model, log):
    """Pre/post hooks on every convolution; appends one dict per call."""

    def post(mod, args, out, extra_mib):
        rec = conv_fields(torch, mod, args[0], out)
        rec["extra_mib"] = extra_mib
        log.append(rec)

    return hook_all(torch, model, post)


def probe(torch, spec, prec, batch, res, _rt):
    def body(out):
        probe_common.settle(torch)
        base = torch.cuda.memory_allocated()
        model, x = probe_common.build(torch, spec, prec, batch, res)
        with torch.inference_mode():
            for _ in range(3):
                model(x)
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
            model(x)
            torch.cuda.synchronize()
            out["memory_mib"] = round(
                (torch.cuda.max_memory_allocated() - base) / MIB, 2)
            log = []
            hooks = hook_convs(torch, model, log)
            model(x)
            for h in hooks:
                h.remove()
            out["convs"] = log
    return probe_common.guarded(
        torch, dict(spec=spec["id"], prec=prec, batch=batch, res=res), body)


if __name__ == "__main__":
    probe_common.main(probe)
