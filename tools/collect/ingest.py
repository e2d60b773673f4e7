"""ingest.py - turns collector batch archives into data/ (data/FORMAT.md).

    /usr/bin/python3 tools/collect/ingest.py ARCHIVE... [--data data]

ARCHIVE: what run_batch.py left in $OUT: <batch_id>.tar.zst, its
.tar.zst.partNN pieces, or its <batch_id>.N.tar.xz shards (give all pieces
of a batch). Runs on the developer machine (torch not needed; onnx and the
zstd CLI are). For each batch it
- adds new graph files to data/graphs/<batch_id>.tar.zst and rows to
  data/graphs/index.csv; data/graphs/specmap.csv maps collector spec ids to
  graph hashes (several specs may give one graph);
- writes data/batches/<batch_id>/{env.json,inference.csv,training.csv,
  llm.csv,kernels.csv.zst,failures.csv} with the spec ids replaced by graph
  hashes, kernel module paths mapped to ONNX node names, and status=flagged
  on both rows of a graph-runtime pair whose reps differ by more than 5%;
- keeps rows whose graph is not exported yet in data/pending/ (resolved by a
  later ingest); never writes a row whose key (FORMAT.md) already exists;
- appends done-markers ("export ID", "label ID", "exportfail ID" for an
  export that failed) to data/collect_done.txt.
"""
import argparse
import csv
import glob
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import schema  # noqa: E402

INDEX_COLS = ["hash", "family", "model", "variant", "source", "exporter",
              "opset", "nodes", "file_bytes", "params", "pack"]
TABLE_COLS = dict(schema.LABEL_COLS, kernels=schema.KERNEL_COLS)
FAIL_COLS = schema.FAIL_COLS
KEY = ["hash", "device", "rep", "runtime", "precision", "batch", "seq",
       "height", "width"]
KEY_EXTRA = {"kernels": ["mode", "sms", "kernel_idx"]}
FLAG_REL = 0.05


def row_key(table, d):
    return tuple(d.get(k, "") for k in KEY + KEY_EXTRA.get(table, []))


# ------------------------------------------------------------ archive I/O
def extract(pieces, dest):
    """Extracts one batch's pieces into dest; returns the work folder."""
    pieces = sorted(pieces)
    zst = [p for p in pieces if ".tar.zst" in p]
    if zst:
        cat = subprocess.Popen(["cat"] + zst, stdout=subprocess.PIPE)
        subprocess.check_call("zstd -q -d --long=27 -c | tar -C %s -xf -" % dest,
                              shell=True, stdin=cat.stdout)
        cat.wait()
    for p in pieces:
        if p.endswith(".tar.xz"):
            with tarfile.open(p, "r:xz") as t:
                t.extractall(dest)
    dirs = glob.glob(os.path.join(dest, "collect_*"))
    if len(dirs) != 1:
        raise SystemExit("ingest: expected one collect_* folder in %s" % pieces)
    return dirs[0]


def read_csv(path):
    """Rows of a CSV file, [] where it does not exist; a path ending in
    .zst is read through zstd."""
    if not os.path.exists(path):
        return []
    if path.endswith(".zst"):
        return list(csv.DictReader(io.StringIO(zstd_read(path).decode())))
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def write_csv(path, cols, rows, append=False):
    """Writes rows under the header cols; appending to a file that exists
    keeps that file's header (a file written before a column was added
    gets no misaligned cells). A path ending in .zst is written through
    zstd; appending to one rewrites it, its old text kept as it was."""
    zst = path.endswith(".zst")
    new = not (append and os.path.exists(path))
    old = zstd_read(path).decode() if zst and not new else ""
    if not new:
        if zst:
            cols = next(csv.reader(io.StringIO(old)), cols)
        else:
            with open(path, newline="") as f:
                cols = next(csv.reader(f), cols)
    with (io.StringIO() if zst else
          open(path, "a" if append else "w", newline="")) as f:
        w = csv.DictWriter(f, cols, extrasaction="ignore", lineterminator="\n")
        if new:
            w.writeheader()
        w.writerows(rows)
        if zst:
            zstd_write(path, (old + f.getvalue()).encode())


def table_file(t):
    """The file of table t in a batch folder: kernel rows are many and
    stored compressed (kernels.csv.zst), the label tables as plain CSV."""
    return t + (".csv.zst" if t == "kernels" else ".csv")


def zstd_write(path, data):
    p = subprocess.run(["zstd", "-q", "-17", "-T0", "--long=27", "-o", path, "-f"],
                       input=data)
    if p.returncode:
        raise SystemExit("ingest: zstd failed for " + path)


def zstd_read(path):
    return subprocess.run(["zstd", "-q", "-d", "--long=27", "-c", path],
                          stdout=subprocess.PIPE, check=True).stdout


# ------------------------------------------------------ kernels -> nodes
def scope_components(path):
    """The legacy exporter's scope component of each module on the path: a
    module's own name, except that numbered children keep the dotted name
    back to the nearest named ancestor (m.blocks.0.0 -> blocks.0.0)."""
    parts = path.split(".")
    comps = []
    for i, p in enumerate(parts):
        j = i
        while j > 0 and parts[j].isdigit():
            j -= 1
        comps.append(".".join(parts[j:i + 1]))
    return comps


def module_prefixes(path):
    """Candidate ONNX scope prefixes of a module path, most literal first.
    The legacy exporter names nodes /a/b/b.0/c/Op: a numbered child's
    component is parent.N, and containers never called (ModuleList) have no
    component of their own."""
    comps = scope_components(path)
    full = "/" + "/".join(comps) + "/"
    drop = [c for i, c in enumerate(comps)
            if not (i + 1 < len(comps) and comps[i + 1].startswith(c + ".")
                    and comps[i + 1][len(c) + 1:].replace(".", "").isdigit())]
    alt = "/" + "/".join(drop) + "/"
    return [full] if alt == full else [full, alt]


def _norm(s):
    return re.sub(r"[^a-z]", "", s.lower())


ATEN_TO_ONNX = {
    "convolution": ["conv"], "cudnnconvolution": ["conv"], "conv": ["conv"],
    "addmm": ["gemm", "matmul", "add"], "linear": ["gemm", "matmul", "add"],
    "mm": ["matmul", "gemm"], "bmm": ["matmul"], "matmul": ["matmul"],
    "baddbmm": ["matmul", "add"], "cat": ["concat"], "softmax": ["softmax"],
    "layernorm": ["layernormalization"], "nativelayernorm": ["layernormalization"],
    "batchnorm": ["batchnormalization", "conv"], "gelu": ["gelu", "erf", "mul", "add", "div"],
    "scaleddotproductattention": ["matmul", "softmax", "mul", "add", "transpose"],
    "embedding": ["gather"], "indexselect": ["gather"], "gather": ["gather"],
    "meanreduce": ["reducemean", "globalaveragepool"], "mean": ["reducemean", "globalaveragepool"],
    "adaptiveavgpooldd": ["globalaveragepool", "averagepool", "reducemean"],
    "adaptiveavgpoold": ["globalaveragepool", "averagepool", "reducemean"],
    "convd": ["conv"], "maxpoold": ["maxpool"], "avgpoold": ["averagepool"],
    "iadd": ["add"], "imul": ["mul"], "truediv": ["div"], "hardswish": ["hardswish", "hardsigmoid", "mul"],
    "silu": ["sigmoid", "mul"], "sigmoid": ["sigmoid"], "flatten": ["flatten", "reshape"],
    "view": ["reshape"], "reshape": ["reshape"], "permute": ["transpose"],
    "transpose": ["transpose"], "contiguous": ["identity"], "getitem": ["gather", "slice", "split"],
}


FOLDED_INTO_PREVIOUS = ("aten::native_batch_norm", "aten::batch_norm",
                        "aten::cudnn_batch_norm", "aten::_native_batch_norm_legit_no_training")


def map_kernel_rows(rows, nodemap_for):
    """Fills `nodes` of kernel rows (in launch order per traced config).
    A batch-norm kernel whose module has no node of its own (the exporter
    folded it into the convolution before it) implements that convolution's
    node, so it gets the previous kernel's nodes when that was a conv."""
    prev = {}
    for d in rows:
        nm = nodemap_for(d["hash"])
        n = ""
        if nm and d.get("mode") == "compiled":
            # a fused kernel: one (module, op) per source FX node
            got = []
            for m, a in zip(d.get("module", "").split(";"), d.get("aten", "").split(";")):
                for x in nm.map(m, a).split("|"):
                    if x and x not in got:
                        got.append(x)
            n = "|".join(got)
        elif nm:
            n = nm.map(d.get("module", ""), d.get("aten", ""))
        cfg = tuple(d.get(c, "") for c in ("hash", "device", "mode", "sms", "precision",
                                            "batch", "seq", "height", "width"))
        if not n and d.get("mode") != "compiled" and d.get("aten", "") in FOLDED_INTO_PREVIOUS:
            pn, pa = prev.get(cfg, ("", ""))
            if "conv" in pa:
                n = pn
        d["nodes"] = n
        prev[cfg] = (n, d.get("aten", ""))


class NodeMap:
    """Maps (module path, aten op) to ONNX node names of one graph."""

    def __init__(self, onnx_bytes):
        import onnx
        m = onnx.load_model_from_string(onnx_bytes)
        self.nodes = [(n.name, n.op_type) for n in m.graph.node]
        self.scopes = set()
        for name, _ in self.nodes:
            parts = name.split("/")
            for i in range(2, len(parts)):
                self.scopes.add("/".join(parts[:i]) + "/")
        self.cache = {}

    def map(self, module, aten):
        if not module:
            return ""
        k = (module, aten)
        if k in self.cache:
            return self.cache[k]
        res = ""
        for pre in module_prefixes(module):
            if pre not in self.scopes:
                continue
            under = [(n, t) for n, t in self.nodes if n.startswith(pre)]
            direct = [(n, t) for n, t in under if "/" not in n[len(pre):]]
            deeper = len(direct) < len(under)
            if not deeper:  # a leaf module: it is all its nodes
                cand = [(n, t) for n, t in under
                        if t not in ("Constant", "Shape", "Identity")]
            else:
                cand = [(n, t) for n, t in direct
                        if t not in ("Constant", "Shape", "Identity")]
            a = _norm(aten.replace("aten::", ""))
            want = ATEN_TO_ONNX.get(a, [a])
            hit = [n for n, t in cand if _norm(t) in want]
            if hit:
                res = "|".join(hit)
            elif not deeper:
                res = "|".join(n for n, _ in cand)
            break
        self.cache[k] = res
        return res


# ------------------------------------------------------------------ ingest
class Data:
    def __init__(self, root):
        self.root = root
        self.gdir = os.path.join(root, "graphs")
        os.makedirs(self.gdir, exist_ok=True)
        self.index = {r["hash"]: r for r in read_csv(os.path.join(self.gdir, "index.csv"))}
        self.specmap = {r["spec_id"]: r["hash"] for r in
                        read_csv(os.path.join(self.gdir, "specmap.csv"))}
        self.keys = {t: set() for t in TABLE_COLS}
        # each table as the batches store it (table_file: kernels.csv.zst),
        # so that a batch labeled again, two chained calls without an ingest
        # between them (i36b / i36c), adds none of its kernel rows twice
        for t in TABLE_COLS:
            for p in glob.glob(os.path.join(root, "batches", "*", table_file(t))):
                for d in read_csv(p):
                    self.keys[t].add(row_key(t, d))
        self.done = set()
        dp = os.path.join(root, "collect_done.txt")
        if os.path.exists(dp):
            self.done = set(l.strip() for l in open(dp) if l.strip())
        self.pack_cache = {}

    def graph_bytes(self, h, batch_graphs):
        p = os.path.join(batch_graphs, h + ".onnx")
        if os.path.exists(p):
            return open(p, "rb").read()
        r = self.index.get(h)
        if not r:
            return None
        pack = r["pack"]
        if pack not in self.pack_cache:
            raw = zstd_read(os.path.join(self.gdir, pack + ".tar.zst"))
            t = tarfile.open(fileobj=io.BytesIO(raw))
            self.pack_cache[pack] = {m.name: t.extractfile(m).read()
                                     for m in t.getmembers() if m.isfile()}
        return self.pack_cache[pack].get(h + ".onnx")

    def save_meta(self):
        rows = sorted(self.index.values(), key=lambda r: r["hash"])
        write_csv(os.path.join(self.gdir, "index.csv"), INDEX_COLS, rows)
        write_csv(os.path.join(self.gdir, "specmap.csv"), ["spec_id", "hash"],
                  [dict(spec_id=k, hash=v) for k, v in sorted(self.specmap.items())])
        with open(os.path.join(self.root, "collect_done.txt"), "w") as f:
            f.write("\n".join(sorted(self.done)) + "\n")


def flag_pairs(rows, time_col="latency_ms"):
    """status=flagged on both rows of a graph-runtime rep pair whose
    latencies differ by more than 5% (relative to rep 0)."""
    by = {}
    for d in rows:
        if d.get("runtime") == "graph":
            k = tuple(d.get(c, "") for c in KEY if c != "rep")
            by.setdefault(k, {})[d["rep"]] = d
    n = 0
    for pair in by.values():
        if "0" in pair and "1" in pair:
            a, b = float(pair["0"][time_col]), float(pair["1"][time_col])
            if a > 0 and abs(a - b) / a > FLAG_REL:
                pair["0"]["status"] = pair["1"]["status"] = "flagged"
                n += 1
    return n


def failed_export_marker(e, specmap):
    """The done-marker of a failed export result e: "export ID" when it
    was skipped for its size (never retried), "exportfail ID" when it
    failed and the spec has no graph from an earlier batch (later batches
    skip it, run_batch.skip_specs, unless DLP_RETRY_EXPORT_FAILURES is
    set), else None."""
    if e.get("error", "").startswith("skipped_size"):
        return "export " + e["id"]
    if e["id"] not in specmap:
        return "exportfail " + e["id"]
    return None


def retry_ids(fail_rows):
    """Spec ids (the raw rows' "hash") to measure again: those whose only
    failure is a load in a broken context (schema.context_broken), i.e.
    the victims of an earlier item. An item with other failures broke the
    context itself (gemma4_vit_570m in h4a-g: a failed capture, then the
    same error at its next configuration) and is done: retried, it breaks
    every batch again."""
    victim, other = set(), set()
    for d in fail_rows:
        if d["stage"] == "load" and schema.context_broken(d["reason"]):
            victim.add(d["hash"])
        else:
            other.add(d["hash"])
    return victim - other


def label_markers(started, retry, device):
    """Done-markers of the items a worker started: "label ID" and
    "label@DEVICE ID", except for the ids in retry (items that failed to
    load in a broken CUDA context, to be measured again)."""
    out = set()
    for sid in started:
        if sid not in retry:
            out.update(("label " + sid, "label@%s %s" % (device, sid)))
    return out


def ingest_batch(data, work, log):
    env = json.load(open(os.path.join(work, "env.json")))
    bid = env["batch_id"]
    specs = {}
    for line in open(os.path.join(work, "specs.jsonl")):
        s = json.loads(line)
        specs[s["id"]] = s
    bdir = os.path.join(data.root, "batches", bid)
    os.makedirs(bdir, exist_ok=True)
    shutil.copy(os.path.join(work, "env.json"), os.path.join(bdir, "env.json"))
    # exports
    exports, fails = [], []
    for p in sorted(glob.glob(os.path.join(work, "export_*.jsonl"))):
        b = os.path.basename(p)
        if b in ("export_q.jsonl", "export_big.jsonl"):
            continue
        for line in open(p):
            exports.append(json.loads(line))
    gdir = os.path.join(work, "graphs")
    new_graphs = []
    for e in exports:
        s = specs.get(e["id"])
        if s is None:
            continue
        if "hash" in e:
            h = e["hash"]
            data.specmap[e["id"]] = h
            data.done.add("export " + e["id"])
            if h not in data.index:
                if not os.path.exists(os.path.join(gdir, h + ".onnx")):
                    continue
                data.index[h] = dict(hash=h, family=s["family"], model=s["model"],
                                     variant=s["variant"], source=s["source"],
                                     exporter=e.get("exporter", "legacy"),
                                     opset=e.get("opset", 17), nodes=e["nodes"],
                                     file_bytes=e["file_bytes"], params=e["params"],
                                     pack=bid)
                new_graphs.append(h)
        else:
            m = failed_export_marker(e, data.specmap)
            if m:
                data.done.add(m)
            fails.append(dict(protocol="p1", batch_id=bid, hash="", model=s["model"],
                              variant=s["variant"], device=env["device"],
                              stage=e.get("stage", "export"), reason=e.get("error", "")))
    if new_graphs:
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w", format=tarfile.USTAR_FORMAT) as t:
            # family-sorted order puts similar graphs next to each other
            for h in sorted(new_graphs, key=lambda h: (data.index[h]["family"], h)):
                p = os.path.join(gdir, h + ".onnx")
                ti = tarfile.TarInfo(h + ".onnx")
                ti.size = os.path.getsize(p)
                ti.mtime = 0
                with open(p, "rb") as f:
                    t.addfile(ti, f)
        zstd_write(os.path.join(data.gdir, bid + ".tar.zst"), buf.getvalue())
    # label tables
    counts = {}
    pend_dir = os.path.join(data.root, "pending")
    repeats = {}
    for t in ("inference", "training", "llm", "kernels"):
        rows = []
        for p in sorted(glob.glob(os.path.join(work, "w*_%s.csv" % t))):
            rows += read_csv(p)
        rows += read_csv(pending_path(pend_dir, bid, t))
        ok, pend, dup = [], [], 0
        pkeys = set()   # a batch ingested twice: its pending rows once
        maps = {}
        for d in rows:
            sid = d["hash"]
            h = data.specmap.get(sid, sid if sid in data.index else None)
            if h is None or h not in data.index:
                k = row_key(t, d)
                if k not in pkeys:
                    pkeys.add(k)
                    pend.append(d)
                continue
            d["hash"] = h
            k = row_key(t, d)
            if k in data.keys[t]:
                dup += 1
                if t in REPEAT_FILES:
                    repeats.setdefault(t, []).append(d)
                continue
            data.keys[t].add(k)
            ok.append(d)
        if t == "kernels":
            def nodemap_for(h):
                if h not in maps:
                    gb = data.graph_bytes(h, gdir)
                    maps[h] = NodeMap(gb) if gb else None
                return maps[h]
            map_kernel_rows(ok, nodemap_for)
        if t in ("inference", "llm"):
            nflag = flag_pairs(ok)
        else:
            nflag = 0
        if ok:
            write_csv(os.path.join(bdir, table_file(t)), TABLE_COLS[t], ok)
        pp = pending_path(pend_dir, bid, t)
        if pend:
            os.makedirs(pend_dir, exist_ok=True)
            cols = TABLE_COLS[t] + (["module", "aten"] if t == "kernels" else [])
            write_csv(pp, [c for c in cols if c != "nodes"], pend)
        elif os.path.exists(pp):
            os.remove(pp)
        counts[t] = (len(ok), len(pend), dup, nflag)
    for t, rows in repeats.items():
        counts["%s repeats" % t] = (save_repeats(data, rows, t), 0, 0, 0)
    # re-measured peak memory of earlier batches' rows (apply_memory)
    mrows = []
    for p in sorted(glob.glob(os.path.join(work, "w*_memory.csv"))):
        for d in read_csv(p):
            h = data.specmap.get(d["hash"], d["hash"] if d["hash"] in data.index else None)
            if h is not None:
                d["hash"] = h
                mrows.append(d)
    if mrows:
        write_csv(os.path.join(bdir, "memory.csv"), schema.MEMORY_COLS, mrows)
        counts["memory"] = (len(mrows), 0, 0, 0)
    # worker failures and crashed items; an item that failed to load in a
    # CUDA context an earlier item broke is not marked done (retry_ids)
    raw_fails = []
    for p in sorted(glob.glob(os.path.join(work, "w*_failures.csv"))):
        raw_fails += read_csv(p)
    retry = retry_ids(raw_fails)
    for d in raw_fails:
        fails.append(dict(d, hash=data.specmap.get(d["hash"], "")))
    for p in sorted(glob.glob(os.path.join(work, "w*_progress.txt"))):
        started, finished = [], set()
        for line in open(p):
            k, _, v = line.strip().partition(" ")
            (started.append(v) if k == "start" else finished.add(v))
        data.done.update(label_markers(started, retry, env["device"]))
        if started and started[-1] not in finished:
            s = specs.get(started[-1], {})
            fails.append(dict(protocol="p1", batch_id=bid,
                              hash=data.specmap.get(started[-1], ""),
                              model=s.get("model", ""), variant=s.get("variant", ""),
                              device=env["device"], stage="timeout",
                              reason="in flight when the batch deadline came"))
    if fails:
        write_csv(os.path.join(bdir, "failures.csv"), FAIL_COLS, fails)
    log("%s: %d new graphs; %s; %d failures" % (
        bid, len(new_graphs), ", ".join("%s %d (+%d pending, %d dup, %d flagged pairs)"
                                        % (t, *v) for t, v in counts.items()), len(fails)))


# the file of data/probes each table's repeated rows go to
REPEAT_FILES = {"inference": "repeats.csv",
                "training": "repeats-training.csv"}


def save_repeats(data, rows, table="inference"):
    """Rows of table (inference or training) whose key is stored already
    by another batch (a configuration measured again: run_batch
    --reference or --train-reference, or chained calls that repeated one)
    are not labels; they go to data/probes/<REPEAT_FILES[table]>, each
    with the stored row it repeats, so that `dlperf host replicates`
    pairs the two measurements (another card, another day). A batch
    ingested twice finds its own rows stored: those are not repeats. A row
    (batch_id and key) already in the file is not written twice. Returns
    the rows added."""
    path = os.path.join(data.root, "probes", REPEAT_FILES[table])
    have = set((r["batch_id"],) + row_key(table, r) for r in read_csv(path))
    want = {}
    for d in rows:
        want.setdefault(row_key(table, d), []).append(d)
    add = []
    for p in sorted(glob.glob(os.path.join(data.root, "batches", "*",
                                           table_file(table)))):
        for r in read_csv(p):
            k = row_key(table, r)
            for d in want.get(k, ()):
                if d["batch_id"] == r["batch_id"]:
                    continue
                for x in (r, d):
                    if (x["batch_id"],) + k not in have:
                        have.add((x["batch_id"],) + k)
                        add.append(x)
    if add:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        write_csv(path, TABLE_COLS[table], add, append=True)
    return len(add)


def memory_key(table, d):
    return (table, d["hash"], d["device"], str(d["rep"]), d.get("runtime", ""),
            d["precision"], str(d["batch"]), str(d.get("seq", "")),
            str(d.get("height", "")), str(d.get("width", "")))


def apply_memory(data, log):
    """Rows of the batches with defective memory labels (schema.
    DEFECTIVE_MEMORY_BATCHES) get the re-measured memory of the same
    configuration and rep from any batch's memory.csv, or a blank
    memory_mib (and mem_reserved_mib) where none was re-measured. Inference
    rows of language models give the llm table's memory too. Idempotent."""
    fresh = {}
    for p in glob.glob(os.path.join(data.root, "batches", "*", "memory.csv")):
        for d in read_csv(p):
            fresh[memory_key(d["table"], d)] = d
    for bdir in sorted(glob.glob(os.path.join(data.root, "batches", "*"))):
        if not os.path.basename(bdir).startswith(schema.DEFECTIVE_MEMORY_BATCHES):
            continue
        for t in ("inference", "llm", "training"):
            p = os.path.join(bdir, t + ".csv")
            rows = read_csv(p)
            if not rows:
                continue
            got = blank = 0
            for d in rows:
                src = fresh.get(memory_key("inference" if t == "llm" else t, d))
                if src is not None:
                    got += 1
                    d["memory_mib"] = src["memory_mib"]
                    if "mem_reserved_mib" in d:
                        d["mem_reserved_mib"] = src["mem_reserved_mib"]
                    if "nvml_used_mib" in d:
                        d["nvml_used_mib"] = src["nvml_used_mib"]
                else:
                    blank += 1
                    d["memory_mib"] = ""
                    if "mem_reserved_mib" in d:
                        d["mem_reserved_mib"] = ""
            # the file's own columns: a file written before a column was
            # added to the format stays as it was
            write_csv(p, list(rows[0].keys()), rows)
            log("%s %s: memory of %d rows re-measured, %d left blank"
                % (os.path.basename(bdir), t, got, blank))


def pending_path(pend_dir, bid, t):
    """Where a batch's pending rows of table t wait: <batch>_ and the
    table's file name, so kernel rows wait compressed as in the batch
    folder (one batch's were 5.7 MB as text, and the tree travels to the
    GPU machine under a size limit)."""
    return os.path.join(pend_dir, bid + "_" + table_file(t))


def resolve_pending(data, log):
    """Rows of earlier batches whose graph is exported by now. A resolved
    row whose configuration another batch stored meanwhile is a repeat, as
    in ingest_batch: to data/probes (save_repeats) for the tables that keep
    them, else dropped; either way it leaves the pending file."""
    pend_dir = os.path.join(data.root, "pending")
    for pp in sorted(glob.glob(os.path.join(pend_dir, "*.csv")) +
                     glob.glob(os.path.join(pend_dir, "*.csv.zst"))):
        name = os.path.basename(pp)
        bid, _, t = name[:name.index(".csv")].rpartition("_")
        rows = read_csv(pp)
        ok, pend, dup = [], [], []
        for d in rows:
            h = data.specmap.get(d["hash"])
            if h is None or h not in data.index:
                pend.append(d)
                continue
            d["hash"] = h
            k = row_key(t, d)
            if k not in data.keys[t]:
                data.keys[t].add(k)
                ok.append(d)
            else:
                dup.append(d)
        if t in ("inference", "llm"):
            flag_pairs(ok)
        if t == "kernels":
            nms = {}

            def nodemap_for(h):
                if h not in nms:
                    gb = data.graph_bytes(h, "/nonexistent")
                    nms[h] = NodeMap(gb) if gb else None
                return nms[h]
            map_kernel_rows(ok, nodemap_for)
        bdir = os.path.join(data.root, "batches", bid)
        if ok:
            write_csv(os.path.join(bdir, table_file(t)), TABLE_COLS[t], ok,
                      append=True)
        if not pend:
            os.remove(pp)
        elif len(pend) < len(rows):
            # rewritten only when rows left it: a compressed file rewritten
            # with the same rows differs in bytes, a diff in every commit
            write_csv(pp, list(rows[0].keys()), pend)
        if ok:
            log("%s %s: %d pending rows resolved, %d still pending" % (bid, t, len(ok), len(pend)))
        if dup:
            kept = save_repeats(data, dup, t) if t in REPEAT_FILES else 0
            log("%s %s: %d pending rows repeat stored configurations (%d "
                "rows to data/probes)" % (bid, t, len(dup), kept))


def remap_kernels(data, groups, log):
    """Rebuilds every batch's kernels.csv.zst from its archive with the
    current node mapping (same rows and dedup order as ingest)."""
    keys = set()
    for bid, pieces in sorted(groups.items()):
        tmp = tempfile.mkdtemp(prefix="remap_")
        try:
            work = extract(pieces, tmp)
            rows = []
            for p in sorted(glob.glob(os.path.join(work, "w*_kernels.csv"))):
                rows += read_csv(p)
            ok = []
            for d in rows:
                h = data.specmap.get(d["hash"])
                if h is None or h not in data.index:
                    continue
                d["hash"] = h
                k = row_key("kernels", d)
                if k in keys:
                    continue
                keys.add(k)
                ok.append(d)
            nms = {}

            def nodemap_for(h):
                if h not in nms:
                    gb = data.graph_bytes(h, os.path.join(work, "graphs"))
                    nms[h] = NodeMap(gb) if gb else None
                return nms[h]
            map_kernel_rows(ok, nodemap_for)
            if ok:
                write_csv(os.path.join(data.root, "batches", bid,
                                       table_file("kernels")),
                          TABLE_COLS["kernels"], ok)
            log("%s: %d kernel rows, %d mapped to nodes" % (
                bid, len(ok), sum(1 for d in ok if d["nodes"])))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


def group_archives(paths):
    groups = {}
    for p in paths:
        b = os.path.basename(p)
        m = re.match(r"(.+?)(\.\d+)?\.tar\.(zst|xz)(\.part\d+)?$", b)
        if not m:
            raise SystemExit("ingest: not a batch archive: " + p)
        groups.setdefault(m.group(1), []).append(p)
    return groups


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("archives", nargs="*")
    ap.add_argument("--remap-kernels", action="store_true",
                    help="rebuild kernels.csv.zst of the given batches only")
    ap.add_argument("--data", default=os.path.join(os.path.dirname(os.path.dirname(HERE)), "data"))
    a = ap.parse_args()
    data = Data(a.data)
    if a.remap_kernels:
        remap_kernels(data, group_archives(a.archives), print)
        return
    for bid, pieces in sorted(group_archives(a.archives).items()):
        tmp = tempfile.mkdtemp(prefix="ingest_")
        try:
            work = extract(pieces, tmp)
            ingest_batch(data, work, print)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        data.save_meta()
    resolve_pending(data, print)
    apply_memory(data, print)
    data.save_meta()


if __name__ == "__main__":
    main()
