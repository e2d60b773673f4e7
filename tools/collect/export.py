"""export.py - exports specs to stripped ONNX graph files (PROTOCOL.md).

Convention (PROTOCOL.md "Graph files"): legacy exporter (dynamo=False),
opset 17 (the dynamo exporter, at its default opset, where the legacy one
cannot express an operator; `exporter` records which), constant folding, batch 2 (seq 16 for language models), dynamic
axes `batch` (dim 0) and `seq` (dim 1 of token ids); then every initializer of
1 KiB or more becomes external data (location "weights.bin", offsets laid out
one after another, as onnx's convert_model_to_external_data does without
alignment) and the weight bytes are never written. hash = first 16 hex digits
of the SHA-256 of the stripped file.

    python3 export.py --specs specs.jsonl --out DIR [--shard i/n] [--deadline T]
writes DIR/graphs/<hash>.onnx and appends one JSON line per spec to
DIR/export_<i>.jsonl ({"id", "hash", ...} or {"id", "error", "stage"}).
"""
import argparse
import hashlib
import json
import os
import sys
import time


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import zoo  # noqa: E402

MAX_EXPORT_PARAMS = 400e6        # vision / small text models
MAX_EXPORT_PARAMS_LLM = 9e9      # named language models are exported anyway


def strip_model(m):
    """Moves initializers >= 1 KiB to external data, without their bytes."""
    from onnx import TensorProto
    offset = 0
    tensors = list(m.graph.initializer)
    for node in m.graph.node:
        for a in node.attribute:
            if a.HasField("t"):
                tensors.append(a.t)
    for t in tensors:
        if t.data_location == TensorProto.EXTERNAL:
            length = 0
            for kv in t.external_data:
                if kv.key == "length":
                    length = int(kv.value)
        else:
            if not t.HasField("raw_data"):
                continue
            length = len(t.raw_data)
            if length < 1024:
                continue
        del t.external_data[:]
        for k, v in (("location", "weights.bin"), ("offset", str(offset)),
                     ("length", str(length))):
            e = t.external_data.add()
            e.key, e.value = k, v
        t.data_location = TensorProto.EXTERNAL
        t.ClearField("raw_data")
        offset += length
    return m


def export_spec(spec, workdir):
    """Returns (stripped bytes, info dict). Raises on failure."""
    import onnx
    import torch
    torch.manual_seed(0)
    is_text = spec["kind"] == "text"
    if is_text:
        _patch_transformers()
    model = zoo.build(spec)
    model.eval()
    params = sum(p.numel() for p in model.parameters())
    limit = MAX_EXPORT_PARAMS_LLM if spec["id"].startswith("hf:") else MAX_EXPORT_PARAMS
    if params > limit and not spec.get("export_anyway"):
        raise RuntimeError("skipped_size: %d params" % params)
    w = zoo.wrap(model, spec["kind"])
    if is_text:
        x = torch.randint(0, 1000, (2, 16))
        names, axes = ["input_ids"], {"input_ids": {0: "batch", 1: "seq"},
                                      "output": {0: "batch", 1: "seq"}}
    else:
        h, wd = zoo.input_size(spec, model)
        x = torch.randn(2, 3, h, wd)
        names, axes = ["input"], {"input": {0: "batch"}, "output": {0: "batch"}}
    path = os.path.join(workdir, "tmp_%d.onnx" % os.getpid())
    kw = dict(dynamo=False) if _has_dynamo_arg() else {}
    exporter = "legacy"
    # Grad mode stays on: under no_grad, nn.MultiheadAttention takes its
    # fused fast path, which the legacy exporter cannot export.
    try:
        torch.onnx.export(w, (x,), path, opset_version=17,
                          do_constant_folding=True, input_names=names,
                          output_names=["output"], dynamic_axes=axes, **kw)
    except Exception as e:
        # PROTOCOL.md: models the legacy exporter cannot handle may use
        # dynamo=True (its own default opset); the file records which
        if not (_has_dynamo_arg() and legacy_unsupported(e)):
            raise
        try:
            torch.onnx.export(w, (x,), path, input_names=names,
                              output_names=["output"], dynamic_axes=axes,
                              dynamo=True)
        except Exception as e2:
            raise RuntimeError("legacy: %s | dynamo: %s" % (
                str(e).split("\n")[0][:140], str(e2).split("\n")[0][:140]))
        exporter = "dynamo"
    m = onnx.load(path, load_external_data=False)
    opset = next((o.version for o in m.opset_import if o.domain in ("", "ai.onnx")), 17)
    # Large models are written with external data by the exporter itself.
    for f in os.listdir(workdir):
        p = os.path.join(workdir, f)
        if f != os.path.basename(path) and not f.endswith(".onnx") and \
                not f.startswith("export_") and os.path.isfile(p) and \
                f != "graphs":
            try:
                os.remove(p)
            except OSError:
                pass
    os.remove(path)
    strip_model(m)
    data = m.SerializeToString()
    h = hashlib.sha256(data).hexdigest()[:16]
    info = dict(hash=h, nodes=len(m.graph.node), file_bytes=len(data),
                params=params, opset=opset, exporter=exporter)
    return data, info


def legacy_unsupported(e):
    """True for the legacy exporter's "cannot express this op" failures
    (aten::col2im, rms_norm, bicubic antialias, Unfold ...), where the dynamo
    exporter may succeed; not for errors of the model itself."""
    msg = str(e)
    return ("is not supported" in msg or msg.startswith("Unsupported: ONNX export")
            or "UnsupportedOperatorError" in type(e).__name__)


_DYN = None


def _patch_transformers():
    """transformers 5 looks for packed sequences in position_ids with
    torch.diff, which the legacy exporter lacks; our inputs are never packed
    (position ids are an arange), so the check is answered directly."""
    try:
        import transformers.masking_utils as mu
        if hasattr(mu, "find_packed_sequence_indices"):
            mu.find_packed_sequence_indices = lambda *a, **k: None
    except Exception:
        pass


def _has_dynamo_arg():
    global _DYN
    if _DYN is None:
        import inspect
        import torch
        _DYN = "dynamo" in inspect.signature(torch.onnx.export).parameters
    return _DYN


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--specs", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--shard", default="0/1")
    ap.add_argument("--deadline", type=float, default=0)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--tag", default="")
    a = ap.parse_args()
    import torch
    torch.set_num_threads(a.threads)
    i, n = (int(v) for v in a.shard.split("/"))
    specs = [json.loads(l) for l in open(a.specs)]
    specs = specs[i::n]
    gdir = os.path.join(a.out, "graphs")
    os.makedirs(gdir, exist_ok=True)
    tag = a.tag or str(i)
    wdir = os.path.join(a.out, "work_%s" % tag)
    os.makedirs(wdir, exist_ok=True)
    log = open(os.path.join(a.out, "export_%s.jsonl" % tag), "a")
    for s in specs:
        if a.deadline and time.time() > a.deadline:
            break
        t0 = time.time()
        rec = dict(id=s["id"])
        try:
            data, info = export_spec(s, wdir)
            gp = os.path.join(gdir, info["hash"] + ".onnx")
            if not os.path.exists(gp):
                with open(gp + ".tmp", "wb") as f:
                    f.write(data)
                os.replace(gp + ".tmp", gp)
            rec.update(info)
        except Exception as e:  # one failure never stops the queue
            msg = str(e).split("\n")[0][:300]
            rec.update(error=msg, stage="skip" if msg.startswith("skipped_size")
                       else "export")
        rec["seconds"] = round(time.time() - t0, 2)
        log.write(json.dumps(rec) + "\n")
        log.flush()


if __name__ == "__main__":
    main()
