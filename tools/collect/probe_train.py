"""probe_train.py - what is live at a training step's peak memory
(forty-second session, docs/COST.md "Peak memory (training)"). On the GPU
machine, for a few specs of the zoo, builds the model as the collector
does, runs its training step (measure.py, measure_train: SGD with
momentum, gradients set to None first, fp16 / bf16 as autocast of the
fp32 model with a GradScaler at fp16), two steps to warm up, then records
the caching allocator's history over one more step, replays it to the
moment of the peak and sorts the blocks live then: the parameters, their
gradients, the momentum buffers, and the rest by the phase that
allocated it (forward, backward, optimizer step), the largest of them
with their frames. What the training estimate of src/feat/feat.c
(train_curve) misses or adds shows there.

    python3 tools/collect/probe_train.py SPEC_ID:PREC:BATCH:RES ...

One JSON line per configuration (RES: the square input resolution).
"""
import gc
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import probe_common  # noqa: E402
import probe_memory  # noqa: E402

MIB = 2 ** 20


def phase_of(ev):
    """forward, backward or step: the phase whose code allocated ev. The
    autograd engine runs a CUDA backward on a thread of its own, without
    Python frames."""
    names = [os.path.basename(f.get("filename", "")) for f in ev.get("frames", [])]
    if not names or "_tensor.py" in names or "graph.py" in names:
        return "backward"
    if any(n in ("sgd.py", "grad_scaler.py", "optimizer.py") for n in names):
        return "step"
    return "forward"


def storages(tensors):
    return {t.untyped_storage().data_ptr() for t in tensors
            if t is not None and t.device.type == "cuda"}


def probe(torch, spec, prec, batch, res, _rt):
    out = dict(spec=spec["id"], prec=prec, batch=batch, res=res)

    def body(o):
        probe_common.settle(torch)
        base0 = torch.cuda.memory_allocated()
        model, opt, step, x, lab = probe_common.build_train(torch, spec, prec,
                                                            batch, res)
        peak, base, trace, _ = probe_memory.recorded(torch, step)
        params = storages(model.parameters())
        grads = storages(p.grad for p in model.parameters())
        moms = storages(s.get("momentum_buffer") for s in opt.state.values())
        best, bi = probe_memory.peak_index(trace, base)
        live = probe_memory.live_at(trace, bi)
        cat = dict(forward=0, backward=0, step=0, grads=0)
        rows = []
        for ev in sorted(live.values(), key=lambda e: -e["size"]):
            if ev["addr"] in grads:
                cat["grads"] += ev["size"]
                continue
            ph = phase_of(ev)
            cat[ph] += ev["size"]
            if len(rows) < 16:
                rows.append(dict(mib=round(ev["size"] / MIB, 3), phase=ph,
                                 at=probe_memory.frames_of(ev, keep=3)))
        n_fwd = sum(1 for ev in trace if ev.get("action") == "alloc" and
                    phase_of(ev) == "forward")
        o.update(memory_mib=round((peak - base0) / MIB, 2),
                 before_mib=round((base - base0) / MIB, 2),
                 state_mib=round(probe_memory.state_bytes(model) / MIB, 2),
                 momentum_mib=round(sum(s["momentum_buffer"].untyped_storage().nbytes()
                                        for s in opt.state.values()
                                        if s.get("momentum_buffer") is not None) / MIB, 2),
                 n_params=len(params), n_moms=len(moms),
                 peak_event=bi, events=len(trace), forward_allocs=n_fwd,
                 peak_phase=phase_of(trace[bi]) if bi >= 0 else None,
                 live_mib={k: round(v / MIB, 2) for k, v in cat.items()},
                 top=rows)
        del model, opt, x, lab

    res_ = probe_common.guarded(torch, out, body)
    gc.collect()
    return res_


if __name__ == "__main__":
    probe_common.main(probe)
