#!/usr/bin/python3
"""Oracle fixtures for the eager kernel count (src/feat/feat_kern.c):
the kernels PyTorch launched, as the device's profiler recorded them in
the dataset's eager traces (data/batches/*/kernels.csv.zst, rep 0, whole
GPU), for one configuration of a small graph of each of these models
("vit_b_16:odd": a torchvision ViT variant with an odd head count); the
weight-stripped graphs are copied from the dataset's packs.

    /usr/bin/python3 tests/gen_kernel_fixtures.py   # from the repo root

writes tests/fixtures/kernels/<hash>.onnx and counts.csv."""
import csv
import glob
import io
import os
import subprocess
import tarfile

MODELS = ["vgg16", "resnet18", "vit_small_patch16_224", "resnext26ts",
          "mobilenetv1_125", "mnasnet1_0", "regnet_x_1_6gf", "efficientnet_b5",
          "gpt2", "convnext_tiny", "distilbert-base", "shufflenet_v2_x1_0",
          "bert-base", "t5-base-encoder", "qwen2-0.5b", "cait_xxs24_224",
          "densenet121", "inception_v3", "vit_b_16", "vit_b_16:odd"]
OUT = "tests/fixtures/kernels"
csv.field_size_limit(1 << 30)
index = {r["hash"]: r for r in csv.DictReader(open("data/graphs/index.csv"))}
counts = {}
for f in sorted(glob.glob("data/batches/*/kernels.csv.zst")):
    txt = subprocess.run(["zstd", "-dc", f], capture_output=True, text=True,
                         check=True).stdout
    for r in csv.DictReader(io.StringIO(txt)):
        if (r["rep"] != "0" or r["status"] != "ok" or r["mode"] != "eager"
                or r["sms"]):
            continue
        k = (r["hash"], r["device"], r["precision"], r["batch"],
             r["seq"] or "0", r["height"] or "0", r["width"] or "0",
             r["batch_id"])
        counts[k] = counts.get(k, 0) + 1


def odd_heads(g):
    """torchvision's ViT with an odd head count: nn.MultiheadAttention's
    slow path at inference (src/feat/feat_mha.c)"""
    v = dict(p.split("=", 1) for p in g["variant"].split(";") if "=" in p)
    return (g["source"] == "torchvision" and g["model"].startswith("vit_")
            and int(v.get("heads", "2")) % 2 == 1)


best = {}
for k, n in sorted(counts.items()):
    g = index.get(k[0])
    if not g:
        continue
    name = g["model"] + (":odd" if odd_heads(g) else "")
    if name not in MODELS:
        continue
    size = int(g["file_bytes"])
    if name not in best or size < best[name][0]:
        best[name] = (size, k, n)
os.makedirs(OUT, exist_ok=True)
rows = []
for model in MODELS:
    size, k, n = best[model]
    pack = "data/graphs/%s.tar.zst" % index[k[0]]["pack"]
    data = subprocess.run(["zstd", "-dc", pack], capture_output=True,
                          check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(data)) as t:
        m = t.extractfile("%s.onnx" % k[0]).read()
    with open(os.path.join(OUT, k[0] + ".onnx"), "wb") as o:
        o.write(m)
    rows.append([model, *k, n])
with open(os.path.join(OUT, "counts.csv"), "w", newline="") as o:
    w = csv.writer(o)
    w.writerow(["model", "hash", "device", "precision", "batch", "seq",
                "height", "width", "batch_id", "kernels"])
    w.writerows(rows)
print("%d graphs, %d bytes" % (len(rows), sum(
    os.path.getsize(os.path.join(OUT, r[1] + ".onnx")) for r in rows)))
