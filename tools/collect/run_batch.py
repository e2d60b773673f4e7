"""run_batch.py - one collector batch on the GPU machine (never in CI).

    python3 tools/collect/run_batch.py NAME --seconds 500 --out $OUT

1. generates the zoo (zoo.all_specs), skips what data/collect_done.txt marks
   done (done-markers: "export ID" / "label ID"), and plans label items
   (deterministic: configurations drawn from a seed per spec id);
2. starts one measure.py worker per GPU (CUDA_VISIBLE_DEVICES=i, disjoint
   shards, pinned to two cores each) and export.py processes on the other
   cores, all with the same deadline; restarts a worker whose CUDA context
   broke (the item in flight is recorded as failed);
3. writes env.json and packs everything into $OUT/<batch_id>.tar.zst (split
   into 15 MiB parts if larger), which tools/collect/ingest.py turns into
   data/ on the developer machine.
"""
import argparse
import csv
import glob
import hashlib
import json
import math
import os
import platform
import random
import re
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import schema  # noqa: E402
import zoo  # noqa: E402

VIS_BATCH = [1, 2, 4, 8, 16, 32, 64, 128, 256]
VIS_RES = [32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 384, 448, 512]
LM_BATCH = [1, 2, 4, 8, 16, 32, 64]
TRAIN_BATCH = [8, 16, 32, 64]   # training steps of vision models
LM_SEQ = [32, 64, 128, 256, 512, 1024, 2048]


def device_name(nv):
    n = nv.upper()
    if "H100" in n:
        return "H100-SXM5-80GB" if ("HBM3" in n or "SXM" in n) else "H100-PCIE-80GB"
    if "H200" in n:
        return "H200-SXM-141GB"
    if "A100" in n:
        return "A100-SXM4-80GB" if "80GB" in n else "A100-SXM4-40GB"
    return n.replace("NVIDIA ", "").replace(" ", "-")


def infer_points():
    """Inference points per item: 3, or DLP_INFER_POINTS (3-12). The
    seventh session's new-models-first calls made 36-62 configurations per
    call against 73 before: each item loads a model never measured for
    three points; more points share one load. Extra points are drawn after
    the first three, so those stay as they were."""
    try:
        return min(12, max(3, int(os.environ.get("DLP_INFER_POINTS", "3"))))
    except ValueError:
        return 3


def plan_item(spec, idx):
    """Configurations of one spec: infer entries [batch, res_or_seq, prec]
    (res None = the model's native resolution), train [batch, res], trace
    [batch, res_or_seq]. Drawn from a generator seeded by the spec id."""
    rng = random.Random(spec["id"])
    it = dict(spec=spec)
    n_pts = infer_points()
    if spec["kind"] == "vision":
        pts = [[rng.choice([1, 8, 32, 64]), None, "fp16"]]
        while len(pts) < 2:
            b, r = rng.choice(VIS_BATCH), rng.choice(VIS_RES)
            if b * r * r <= 64 * 224 * 224:
                pts.append([b, r, "fp32"])
        it["infer"] = pts
        if idx % 3 == 0:
            it["train"] = [[rng.choice(TRAIN_BATCH), None]]
        if idx % 5 == 1 or os.environ.get("DLP_TRACE_ALL"):
            it["trace"] = [[rng.choice([1, 8, 32]), None]]
        # draws after the first batches' ones, so their plans stay as they were:
        # a third inference point (fp16, sampled batch x resolution), training
        # on two items of three, a torch.compile trace on one of six
        while len(pts) < 3:
            b, r = rng.choice(VIS_BATCH), rng.choice(VIS_RES)
            if b * r * r <= 64 * 224 * 224 and [b, r, "fp16"] not in pts:
                pts.append([b, r, "fp16"])
        if idx % 3 == 1:
            it["train"] = [[rng.choice(TRAIN_BATCH), None]]
        if idx % 6 == 2 or os.environ.get("DLP_CTRACE_ALL"):
            it["ctrace"] = [[rng.choice([1, 8, 32]), None]]
        # fifth session: training on every vision item (it grew by ~10
        # configurations per call with two items of three)
        if idx % 3 == 2:
            it["train"] = [[rng.choice(TRAIN_BATCH), None]]
        tries = 0
        while len(pts) < n_pts and tries < 200:
            tries += 1
            b, r = rng.choice(VIS_BATCH), rng.choice(VIS_RES)
            prec = "fp32" if len(pts) % 2 else "fp16"
            if b * r * r <= 64 * 224 * 224 and [b, r, prec] not in pts:
                pts.append([b, r, prec])
    else:
        c = spec["build"]["cfg"]
        params = zoo.hf_params_estimate(c)
        pmax = c["P"]
        pts, tries = [], 0
        # the first three points within 200 draws (the third in fp32 for
        # models under 2.5B parameters), extra ones within 400, alternating
        while len(pts) < n_pts and tries < (200 if len(pts) < 3 else 400):
            tries += 1
            b, s = rng.choice(LM_BATCH), rng.choice(LM_SEQ)
            if s > pmax or any(p[:2] == [b, s] for p in pts):
                continue
            if 2.0 * params * b * s > 4e13 or b * s > 65536:
                continue
            n = len(pts)
            fp32 = params < 2.5e9 and (n == 2 if n < 3 else n % 2 == 1)
            pts.append([b, s, "fp32" if fp32 else "fp16"])
        it["infer"] = pts
        if idx % 4 == 0 or os.environ.get("DLP_TRACE_ALL"):
            it["trace"] = [[1, 128 if pmax >= 128 else 32]]
        if (idx % 8 == 2 or os.environ.get("DLP_CTRACE_ALL")) and params < 2.5e9:
            it["ctrace"] = [[1, 128 if pmax >= 128 else 32]]
    if os.environ.get("DLP_NO_TRACE"):
        it.pop("trace", None)
        it.pop("ctrace", None)
    # DLP_NO_TRAIN: inference labels only. Batch h5a (new models first, big
    # timm models) spent its 9 items on 6 inference points each plus 8
    # training steps that failed too_slow or oom.
    if os.environ.get("DLP_NO_TRAIN"):
        it.pop("train", None)
    return it


REFERENCE_SPECS = os.path.join(HERE, "reference_specs.txt")


def reference_items(byid, dev, path=REFERENCE_SPECS):
    """--reference: an item per vision spec id listed in path (a "#"
    starts a comment) whose graph has inference rows on card `dev`, with
    every configuration [batch, resolution, precision] stored there as its
    points (not plan_item's: its draws depend on the spec's place in the
    ordered list, which changes as the zoo grows); no training step or
    trace. Ids not in byid or never labeled on dev are skipped."""
    s2h = spec_hashes()
    want = {}
    for line in open(path):
        sid = line.split("#")[0].strip()
        if sid in byid and byid[sid]["kind"] == "vision" and sid in s2h:
            want[s2h[sid]] = sid
    pts = {}
    for _, r in batch_rows(("inference",)):
        if r["hash"] in want and r["device"] == dev:
            c = [int(r["batch"]), int(r["height"]), r["precision"]]
            lst = pts.setdefault(want[r["hash"]], [])
            if c not in lst:
                lst.append(c)
    return [dict(spec=byid[sid], infer=sorted(pts[sid], key=str))
            for sid in want.values() if sid in pts]


def rank_configs(cfgs, seed):
    """cfgs (tuples of str and int) ranked by a seeded hash of each one
    alone: configurations added later take their own places and leave
    the others' order. (A seeded shuffle of the whole list, p66d's draw,
    changed with p66c's 34 new training rows and kept 3 of the 30 p66a
    had first.)"""
    return sorted(cfgs, key=lambda c: hashlib.sha256(
        "|".join(str(x) for x in (seed,) + tuple(c)).encode()).hexdigest())


def train_reference_items(byid, dev, n, seed="train-reference",
                          max_step_ms=150.0):
    """--train-reference N: N training configurations stored on card
    `dev` measured again (their rep 0 rows: precision, batch, square
    resolution), the first N of every such configuration whose step took
    at most max_step_ms ranked by a seeded hash of the configuration, so
    that batches run at other times draw the same ones (rows added since
    only displace some by their own); one item per spec, its drawn points as
    "train" entries [batch, resolution, precision]; no inference point.
    `ingest.py` keeps the repeated rows, with the stored ones they
    repeat, in data/probes/repeats-training.csv: the training step's
    noise across batches and hosts (`dlperf host replicates`), which the
    rep 0 / rep 1 pair of one batch does not show."""
    h2s = vision_hash_specs(byid)
    cfgs = set()
    for _, r in batch_rows(("training",)):
        if (r["device"] != dev or r["rep"] != "0" or r["hash"] not in h2s or
                r.get("status", "ok") != "ok" or not r["step_ms"] or
                r["height"] != r["width"] or not r["height"] or
                float(r["step_ms"]) > max_step_ms):
            continue
        cfgs.add((h2s[r["hash"]], int(r["batch"]), int(r["height"]),
                  r.get("precision") or "fp32"))
    return train_points(byid, rank_configs(cfgs, seed)[:max(0, n)])


def vision_hash_specs(byid):
    """graph hash -> the first vision spec id in byid exported to it."""
    h2s = {}
    for sid, h in spec_hashes().items():
        if sid in byid and byid[sid]["kind"] == "vision":
            h2s.setdefault(h, sid)
    return h2s


def train_points(byid, cfgs):
    """Items of training points from configurations (spec id, batch,
    resolution, precision): one per spec, its points sorted, the specs
    in their first configuration's order."""
    pts = {}
    for sid, b, res, prec in cfgs:
        pts.setdefault(sid, []).append([b, res, prec])
    return [dict(spec=byid[sid], train=sorted(p)) for sid, p in pts.items()]


def train_repeat_items(byid, dev, names, path=None):
    """--train-repeat NAMES: the training configurations on card `dev`
    that data/probes/repeats-training.csv holds from the batches whose
    name ends with one of names ("-p66a", ...), measured again. Those
    batches' rows carry the host probe (host_us), so every new repeat
    pairs with them probe to probe across hosts: what a host correction
    fitted on the replicates alone needs (`dlperf host replicates`, beta*),
    which --train-reference's draw gives only where it meets theirs.
    Configurations of graphs no vision spec exports to are skipped."""
    path = path or os.path.join(REPO, "data", "probes",
                                "repeats-training.csv")
    h2s = vision_hash_specs(byid)
    ends = tuple("-" + n.strip() for n in names if n.strip())
    cfgs = {}   # an ordered set: the file's order, each once
    if ends and os.path.exists(path):
        with open(path) as f:
            for r in csv.DictReader(f):
                if (r["device"] != dev or not r["batch_id"].endswith(ends) or
                        r["hash"] not in h2s):
                    continue
                cfgs.setdefault((h2s[r["hash"]], int(r["batch"]),
                                 int(r["height"]),
                                 r.get("precision") or "fp32"))
    return train_points(byid, cfgs)


def batch_rows(tables, prefix=""):
    """(table, row) of every data/batches/<batch>/<table>.csv, batch by
    batch in name order and, within a batch, in the order of tables; only
    batches whose name starts with prefix (a string or a tuple)."""
    for bdir in sorted(glob.glob(os.path.join(REPO, "data", "batches", "*"))):
        if not os.path.basename(bdir).startswith(prefix):
            continue
        for table in tables:
            p = os.path.join(bdir, table + ".csv")
            if os.path.exists(p):
                with open(p) as f:
                    for r in csv.DictReader(f):
                        yield table, r


def memory_items(specs, dev):
    """Items that re-measure peak memory of the rows on `dev` whose
    memory_mib is defective (schema.DEFECTIVE_MEMORY_BATCHES):
    one item per spec, "mem": [table, precision, batch, seq, h, w]."""
    byid = {s["id"]: s for s in specs}
    h2s = {}
    for r in csv.DictReader(open(os.path.join(REPO, "data", "graphs", "specmap.csv"))):
        if r["spec_id"] in byid:
            h2s.setdefault(r["hash"], r["spec_id"])
    cfgs = {}
    for table, r in batch_rows(("inference", "training"),
                               schema.DEFECTIVE_MEMORY_BATCHES):
        sid = h2s.get(r["hash"])
        if r["device"] != dev or sid is None or r["rep"] != "0":
            continue
        if table == "inference" and r["runtime"] != "eager":
            continue
        c = [table, r["precision"], int(r["batch"]), int(r.get("seq") or 0),
             int(r["height"] or 0), int(r["width"] or 0)]
        lst = cfgs.setdefault(sid, [])
        if c not in lst:
            lst.append(c)
    return [dict(spec=byid[sid], mem=c) for sid, c in sorted(cfgs.items())]


def train_items(ordered, dev, done):
    """--train-only: training-step items (no inference) of vision specs
    labeled on `dev`. First, one per spec whose graph has no training row
    there and whose training never failed there (too_slow / oom / error of
    stage "train" in a failures.csv; its planned point; models without a
    training label first); then, for specs with training rows, one more
    point at a batch size neither measured nor failed there yet (seeded by
    the spec id). A graph with a row and a failure (a rep 0 step over the
    time cap, a rep 1 step under it: 10 graphs of t26c) stays queued for
    other batch sizes; counting its failure for the whole graph dropped
    it.
    The eighth session ended with 420 H100 training configurations (v1: 500
    on the H100) and only 73 labeled, untrained, never-failed specs: the
    new-models-first batches add few, since large new models fail the
    step's time cap."""
    s2h = spec_hashes()
    batches, failed = train_history(dev)["fp32"]
    first, retry, second, have = [], [], [], set()
    for idx, sp in enumerate(ordered):
        h = s2h.get(sp["id"])
        if sp["kind"] != "vision" or h is None or sp["id"] not in done["label"]:
            continue
        if h not in batches:
            if h not in failed:
                first.append(dict(spec=sp, train=plan_item(sp, idx)["train"]))
            else:
                b = retry_batch(failed[h])
                if b:
                    retry.append(dict(spec=sp, train=[[b, None]]))
            continue
        have.add(sp.get("model"))
        left = [b for b in TRAIN_BATCH
                if b not in batches[h] and b not in failed.get(h, ())]
        if left:
            b = random.Random(sp["id"] + "|train2").choice(left)
            second.append(dict(spec=sp, train=[[b, None]]))
    return new_models_first(first + retry, have) + second


def spec_hashes():
    """{spec id: graph hash} of data/graphs/specmap.csv (the first hash of
    a spec exported twice)."""
    s2h = {}
    for r in csv.DictReader(open(os.path.join(REPO, "data", "graphs", "specmap.csv"))):
        s2h.setdefault(r["spec_id"], r["hash"])
    return s2h


TRAIN_PRECS = ("fp32", "fp16", "bf16")


def train_history(dev):
    """{prec: ({graph hash: batches with a training row}, {graph hash:
    batches whose training step failed})} on `dev`, for prec fp32 and
    fp16 / bf16 (mixed precision), in one pass over the batches. A
    failure's reason names its precision and batch ("train fp16 b=8",
    "fp32 b=8: <error>"; none: fp32); mixed-precision steps too slow in
    schema.FIRST_STEP_CAP_BATCHES do not count."""
    hist = {p: ({}, {}) for p in TRAIN_PRECS}
    for table, r in batch_rows(("training", "failures")):
        if r["device"] != dev:
            continue
        if table == "training":
            batches = hist[r.get("precision") or "fp32"][0]
            batches.setdefault(r["hash"], set()).add(int(r["batch"]))
        elif r["stage"] == "train" or r["reason"].startswith("train"):
            p = re.search(r"\b(fp32|fp16|bf16) b=", r["reason"])
            prec = p.group(1) if p else "fp32"
            if (prec != "fp32" and r["stage"] == "too_slow" and
                    r["batch_id"].startswith(schema.FIRST_STEP_CAP_BATCHES)):
                continue
            b = re.search(r"\bb=(\d+)", r["reason"])
            hist[prec][1].setdefault(r["hash"], set()).add(
                int(b.group(1)) if b else None)
    return hist


AMP_PRECS = TRAIN_PRECS[1:]   # fp16, bf16: autocast


def amp_items(ordered, dev, done):
    """--train-amp: mixed-precision training items of vision specs labeled
    on `dev` whose graph has an fp32 training row there: one step per
    graph at a batch size its fp32 step was measured at (the pair isolates
    the precision), in fp16 or bf16 (both seeded by the spec id), for
    graphs with no mixed-precision row and no failure at that precision
    yet; models without such a row first. Every training row before the
    thirty-third session was fp32."""
    s2h = spec_hashes()
    hist = train_history(dev)
    fp32 = hist["fp32"][0]
    items, have, seen = [], set(), set()
    for sp in ordered:
        h = s2h.get(sp["id"])
        if (sp["kind"] != "vision" or h is None or h not in fp32 or
                sp["id"] not in done["label"] or h in seen):
            continue
        seen.add(h)
        if any(h in hist[p][0] for p in AMP_PRECS):
            have.add(sp.get("model"))
            continue
        rng = random.Random(sp["id"] + "|amp")
        p = rng.choice(AMP_PRECS)
        left = sorted(b for b in fp32[h] if b not in hist[p][1].get(h, ()))
        if left:
            items.append(dict(spec=sp, train=[[rng.choice(left), None, p]]))
    return new_models_first(items, have)


def parse_part(text):
    """--part K/N -> (K - 1, N): the slice index, from 0. K counts from 1,
    as every chained call was written ("--part 1/2", "--part 2/2"); before
    the fifty-ninth session the slice was items[K::N], so such chains
    never ran slice 0: its first item and, reserved to slice 0, the
    exports of labeled specs without a graph and of pending rows."""
    m = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text or "")
    k, n = (int(m.group(1)), int(m.group(2))) if m else (0, 0)
    if not 1 <= k <= n:
        raise argparse.ArgumentTypeError(
            "--part wants K/N with 1 <= K <= N, got %r" % text)
    return k - 1, n


def slice_items(items, part, from_end=False):
    """This call's share of items (its label items; export_queue's specs
    that no part labels): with part = (k, n) (--part K/N) the k-th of n
    interleaved slices, items[k::n]; from_end (--from-end, label items
    only): that slice last item first. Calls chained on one warm machine without an
    ingest between them label their slices' first items, as far as their
    time reaches, so "--part 1/2" and "--part 2/2" between them label a
    prefix of the whole list; a third call with another N overlaps that
    prefix (p94c, "--part 2/3": 108 of its 120 inference rows repeated
    p94a's and p94b's), while "--part 2/2 --from-end" labels the items
    neither reached, until the two ends of the slice meet."""
    if part:
        items = items[part[0]::part[1]]
    return items[::-1] if from_end else items


def retry_batch(failed_batches):
    """A smaller batch for a graph whose training step only ever failed
    (too_slow over 2 x MAX_CALL_S, or oom): a quarter of the smallest
    failed batch, at least 2, if no batch that small failed. The
    thirty-first session ended with 214 such graphs (195 too slow, 28 out
    of memory) and no other queued training item: they are the large
    models the training set lacks. None when nothing is left to try."""
    known = [b for b in failed_batches if b]
    if not known:
        return None
    b = max(2, min(known) // 4)
    return b if b < min(known) else None


def order_specs(specs):
    """Labeled-first ordering: torchvision bases, named HF models, then a
    seeded shuffle of everything else (so every call sees a broad mix)."""
    first = [s for s in specs if s["id"].startswith("tv:")]
    first += [s for s in specs if s["id"].startswith("hf:")]
    rest = [s for s in specs if s not in first]
    random.Random(7).shuffle(rest)
    return first + rest


def new_models_first(items, labeled_models, prefer=()):
    """Items whose model (the spec's base architecture) has no label yet
    come first, one per such model in queue order, then the rest in queue
    order. Leave-models-out accuracy follows the number of distinct models,
    not configurations per model: after the sixth session 51 of the 88
    labeled families had a single model, and three sessions of more
    variants of the same ~200 models did not lower the held-out error.
    prefer (spec ids, --per-device: those labeled on another card) picks,
    for each new model, such a spec over one in queue order and puts those
    models first: their graphs are in the dataset already (no export, no
    label waiting in pending/) and they pair the two cards."""
    seen = set(labeled_models)
    pick = {}
    for it in items:
        m = it["spec"].get("model")
        if m is None or m in seen:
            continue
        if m not in pick or (it["spec"]["id"] in prefer
                             and pick[m]["spec"]["id"] not in prefer):
            pick[m] = it
    chosen = set(id(it) for it in pick.values())
    first = [it for it in items if id(it) in chosen]
    first.sort(key=lambda it: it["spec"]["id"] not in prefer)
    rest = [it for it in items if id(it) not in chosen]
    return first + rest


def spec_filter(kinds="", families=""):
    """Predicate of --kinds / --families (comma lists, empty: any): a
    batch with `--kinds text` labels and exports language models only, so
    new transformer families are measured first instead of waiting behind
    the vision specs of the --per-device queue (eighteenth session)."""
    ks = set(k for k in kinds.split(",") if k)
    fs = set(f for f in families.split(",") if f)
    return lambda s: ((not ks or s["kind"] in ks) and
                      (not fs or s["family"] in fs))


def big_exporter_count(n_big, largest=9e9):
    """Processes exporting the large language models (estimate over 0.9B
    parameters): up to 2, one where two exports of the largest (`largest`
    parameters) do not fit. The legacy export writes a model's fp32
    weights as external data beside the file (4 bytes a parameter, ~32 GB
    for an 8B model) and holds them in memory about twice: two 8B exports
    at once would fill a one-GPU machine's 64 GiB disk."""
    import shutil
    try:
        free = shutil.disk_usage("/tmp").free
        ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (OSError, ValueError):
        free = ram = 0
    need = 2 * 4 * 1.25 * largest
    return min(n_big, 2 if free > need and ram > 2 * need else 1)


def read_done(per_device=None):
    """Done-markers of data/collect_done.txt. With per_device (a normalized
    device name), only items labeled on that device count as done, so a
    batch on another card re-measures graphs labeled elsewhere first
    (cross-device pairs); "label@DEV ID" markers exist since batch h100d's
    ingest, older batches' devices are read from data/batches/*/env.json."""
    done = {"export": set(), "label": set(), "exportfail": set(),
            "label_any": set()}
    p = os.path.join(REPO, "data", "collect_done.txt")
    if os.path.exists(p):
        for line in open(p):
            k, _, v = line.strip().partition(" ")
            if k.startswith("label"):
                done["label_any"].add(v)
            if k in done and not (per_device and k == "label"):
                done[k].add(v)
            elif per_device and k == "label@" + per_device:
                done["label"].add(v)
    return done


def skip_specs(done, retry=None):
    """Spec ids a batch neither labels nor exports: those whose export
    failed in an earlier batch ("exportfail ID" markers, written by ingest
    since the fourth session) and never succeeded since. Their labels could
    only go to pending/ and their exports fail again (40 of the 95 failures
    of batches h1a-h1g were such retries). retry (DLP_RETRY_EXPORT_FAILURES
    set, e.g. after an exporter fix) tries them again."""
    if retry:
        return set()
    return done["exportfail"] - done["export"]


def graphs_known(root=None):
    """Spec ids and graph hashes the dataset has a graph for
    (data/graphs/specmap.csv keys, data/graphs/index.csv hashes)."""
    g = os.path.join(root or os.path.join(REPO, "data"), "graphs")
    known = set()
    for name, col in (("specmap.csv", "spec_id"), ("index.csv", "hash")):
        p = os.path.join(g, name)
        if os.path.exists(p):
            with open(p) as f:
                known.update(r[col] for r in csv.DictReader(f))
    return known


def labeled_without_graph(done, known, retry=None):
    """Spec ids labeled on some card whose graph never reached the dataset
    although an "export" marker says it is done: the exporter skipped them
    for their size (over MAX_EXPORT_PARAMS) after they had been measured,
    so their label rows wait in data/pending/ for ever (18 specs, 92 rows
    after the sixth session). Batches export these again, without the size
    limit (spec["export_anyway"]). Specs whose export then failed
    ("exportfail" marker; timm:gemma4_vit_570m on aten::rms_norm was
    retried by every batch of the seventh and eighth sessions) are not,
    unless retry (DLP_RETRY_EXPORT_FAILURES) is set."""
    failed = set() if retry else done["exportfail"]
    return sorted(i for i in done["label_any"] if i not in known
                  and i in done["export"] and i not in failed)


def waiting_exports(ordered, done, skip):
    """Spec ids (in queue order) labeled on some card that were never
    exported nor failed to export: their label rows wait in pending/."""
    return [s["id"] for s in ordered if s["id"] in done["label_any"]
            and s["id"] not in done["export"] and s["id"] not in skip]


def stop_early_on_term(deadline):
    """SIGTERM (the device tool's time limit: `timeout` signals the
    command's process group) moves deadline["t"] to now, so the batch
    stops its workers and packs the rows they flushed after each item,
    instead of dying with them: batch h7d, planned for 420 s, was cut at
    310 s and brought back nothing. The workers get the signal too; an
    item in flight is lost, as at any deadline."""
    def on_term(signum, frame):
        deadline["t"] = min(deadline["t"], time.time())
    signal.signal(signal.SIGTERM, on_term)


def collector_commit():
    """The commit the batch's collector ran from: DLP_COMMIT when the
    caller passes it, else the checkout's HEAD, else "unknown". DLP_COMMIT
    comes first because the device tool's copy of the tree carries a .git
    whose HEAD stays at the session's first commit: env.json of the later
    batches of a session named that commit (h5b-f all 3eb8c29, data/README
    lists what was passed)."""
    if os.environ.get("DLP_COMMIT"):
        return os.environ["DLP_COMMIT"]
    try:
        return subprocess.check_output(
            ["git", "-C", REPO, "rev-parse", "HEAD"], text=True,
            stderr=subprocess.DEVNULL).strip()
    except Exception:
        return "unknown"


def card_info(nv, uuid=None, index=0):
    """Which physical card and how it is set, read-only through NVML
    (module nv, initialized; the card of CUDA uuid, else NVML's index):
    gpu_uuid, vbios, power_limit_w (the enforced
    limit), sm_clock_max_mhz, mem_clock_max_mhz. Cards of one model may
    differ in power draw (the predictors' power fell 6.6% short on the
    sixtieth session's H200), so energy and power labels want the card
    beside them. A value NVML refuses is left out."""
    out = {}
    try:
        h = nv.nvmlDeviceGetHandleByUUID("GPU-%s" % uuid)
    except Exception:
        try:
            h = nv.nvmlDeviceGetHandleByIndex(index)
        except Exception:
            return out
    reads = (("gpu_uuid", lambda: nv.nvmlDeviceGetUUID(h)),
             ("vbios", lambda: nv.nvmlDeviceGetVbiosVersion(h)),
             ("power_limit_w",
              lambda: round(nv.nvmlDeviceGetEnforcedPowerLimit(h) / 1000, 1)),
             ("sm_clock_max_mhz",
              lambda: nv.nvmlDeviceGetMaxClockInfo(h, nv.NVML_CLOCK_SM)),
             ("mem_clock_max_mhz",
              lambda: nv.nvmlDeviceGetMaxClockInfo(h, nv.NVML_CLOCK_MEM)))
    for key, read in reads:
        try:
            v = read()
        except Exception:
            continue
        out[key] = v.decode() if isinstance(v, bytes) else v
    return out


def env_info(batch_id, dev):
    import torch
    info = dict(protocol="p1", batch_id=batch_id)
    p = torch.cuda.get_device_properties(0)
    info.update(gpu_name=p.name, device=dev, sm_count=p.multi_processor_count,
                memory_mib=int(p.total_memory / 2 ** 20))
    try:
        import pynvml
        pynvml.nvmlInit()
        info["driver"] = pynvml.nvmlSystemGetDriverVersion()
        if isinstance(info["driver"], bytes):
            info["driver"] = info["driver"].decode()
        info.update(card_info(pynvml, getattr(p, "uuid", None)))
    except Exception:
        info["driver"] = info.get("driver", "")
    info["cuda_runtime"] = torch.version.cuda
    info["torch"] = torch.__version__
    cpu = ""
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    info["host_cpu"] = cpu or platform.processor()
    info["collector_commit"] = collector_commit()
    for mod in ("torchvision", "transformers", "timm", "onnx"):
        try:
            info[mod] = __import__(mod).__version__
        except Exception:
            info[mod] = ""
    info["gpus"] = torch.cuda.device_count()
    return info


def fresh_probe(device="cuda", repeat=10, seconds=4.0, timeout=90,
                py=sys.executable):
    """tools/host_probe.py in a fresh process, as a user runs it (the GPU
    idle): its median host_us, or None when it fails. The batch's env.json
    keeps one from before its workers start and one from after they stop,
    beside the labels' probes, which the workers take in a loaded process:
    in the sixty-eighth session a fresh process on an idle host read 7.2 -
    10.8 us (two levels that alternate within a minute), the same hour's
    eager inference rows 10.8 - 11.9 and training rows 13.2 - 14.0
    (medians), and which of the scales a user's reading matches is what
    these pairs measure (docs/PREDICT.md, "The shipped training
    correction on a sixth card, and the probe's scale")."""
    cmd = [py, os.path.join(HERE, "..", "host_probe.py"), "--device", device,
           "--repeat", str(repeat), "--seconds", str(seconds)]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True,
                           timeout=timeout)
    except (OSError, subprocess.SubprocessError):
        return None
    w = p.stdout.split()
    if p.returncode != 0 or w[:1] != ["host_us"] or len(w) < 2:
        return None
    try:
        v = float(w[1])
    except ValueError:
        return None
    return v if math.isfinite(v) and v > 0 else None


def export_queue(ordered_ids, lab_ids, every_item, done_export, part=None,
                 only_labeled=False):
    """Spec ids to export, in order: this batch's label items first, then
    the rest of the pool (unless only_labeled), minus what is exported
    already, each once. With part = (k, n) (calls chained without an
    ingest between them), the rest is the k-th of n slices of the specs
    that no part labels (every_item: the label items of all parts), so
    every spec is exported by one part only: a spec another part labels is
    exported by that part (slicing after removing only this part's items
    exported 148 specs twice in batches x4g-x4i)."""
    lab_set = set(lab_ids)
    rest = [] if only_labeled else [i for i in ordered_ids if i not in lab_set]
    q, seen = [], set()
    for i in lab_ids + rest:
        if i not in done_export and i not in seen:
            seen.add(i)
            q.append(i)
    if part:
        q = [i for i in q if i in lab_set] + \
            slice_items([i for i in q if i not in every_item], part)
    return q


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("name")
    ap.add_argument("--seconds", type=float, default=500)
    ap.add_argument("--out", default=os.environ.get("OUT", "/tmp/collect_out"))
    ap.add_argument("--gpus", type=int, default=0)
    ap.add_argument("--max-items", type=int, default=100000)
    ap.add_argument("--exporters", type=int, default=0)
    ap.add_argument("--export-only-labeled", action="store_true")
    ap.add_argument("--remeasure-memory", action="store_true",
                    help="first re-measure peak memory of this card's rows "
                    "in the batches with defective memory labels")
    ap.add_argument("--part", default=None, type=parse_part,
                    help="K/N (K = 1..N): only the K-th of N slices of the "
                    "items and exports, for calls chained without an ingest")
    ap.add_argument("--from-end", action="store_true",
                    help="label the items (of the --part slice) last first: "
                    "a third call on the warm machine after --part 1/2 and "
                    "2/2, before their ingest, takes --part 2/2 --from-end "
                    "(slice_items)")
    ap.add_argument("--per-device", action="store_true",
                    help="skip only items already labeled on this card")
    ap.add_argument("--kinds", default="",
                    help="comma list (vision, text): only specs of these kinds "
                    "are labeled and exported")
    ap.add_argument("--families", default="",
                    help="comma list: only specs of these families")
    ap.add_argument("--train-only", action="store_true",
                    help="training steps only, of vision specs labeled on this "
                    "card: without a training row there first, then another "
                    "batch size (run_batch.train_items)")
    ap.add_argument("--train-amp", action="store_true",
                    help="mixed-precision (fp16 / bf16 autocast) training "
                    "steps of vision graphs with an fp32 training row on "
                    "this card (run_batch.amp_items)")
    ap.add_argument("--reference", action="store_true",
                    help="first measure again the inference points of the "
                    "specs in reference_specs.txt (the card against earlier "
                    "ones; ingest keeps the repeats in probes/repeats.csv)")
    ap.add_argument("--train-reference", type=int, default=0, metavar="N",
                    help="first measure again N training configurations "
                    "stored on this card (a seeded draw, the same in every "
                    "batch; ingest keeps the repeats in "
                    "probes/repeats-training.csv)")
    ap.add_argument("--train-repeat", default="", metavar="NAMES",
                    help="first measure again the training configurations "
                    "data/probes/repeats-training.csv holds from the "
                    "batches named (comma list of names, e.g. p66a,p66d): "
                    "repeats probe to probe across hosts")
    a = ap.parse_args()
    t_start = time.time()
    t_end = t_start + a.seconds
    import torch
    gpus = a.gpus or torch.cuda.device_count()
    dev = device_name(torch.cuda.get_device_name(0))
    batch_id = time.strftime("%Y%m%dT%H%M%S", time.gmtime(t_start)) + "-" + a.name
    work = os.path.join("/tmp", "collect_" + batch_id)
    os.makedirs(work, exist_ok=True)
    env = env_info(batch_id, dev)
    env["started_utc"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t_start))
    env["host_probe_start_us"] = fresh_probe()

    specs = zoo.all_specs()
    done = read_done(dev if a.per_device else None)
    ordered = order_specs(specs)
    with open(os.path.join(work, "specs.jsonl"), "w") as f:
        for s in ordered:
            f.write(json.dumps(s) + "\n")
    retry = os.environ.get("DLP_RETRY_EXPORT_FAILURES")
    skip = skip_specs(done, retry)
    byid = {s["id"]: s for s in specs}
    if a.train_amp:
        items = amp_items(ordered, dev, done)
    elif a.train_only:
        items = train_items(ordered, dev, done)
    else:
        items = [plan_item(s, idx) for idx, s in enumerate(ordered)
                 if s["id"] not in done["label"] and s["id"] not in skip]
        items = new_models_first(items, set(byid[i].get("model")
                                            for i in done["label"] if i in byid),
                                 done["label_any"] if a.per_device else ())
    keep = spec_filter(a.kinds, a.families)
    items = [it for it in items if keep(it["spec"])]
    every_item = set(it["spec"]["id"] for it in items)
    # calls chained on one warm machine without an ingest between them
    # take disjoint slices of the label items and of the export queue
    # (a.part: (slice index, slices) or None)
    first_part = not a.part or a.part[0] == 0
    items = slice_items(items, a.part, a.from_end)[:a.max_items]
    if a.reference:
        items = reference_items(byid, dev) + items
    if a.train_reference:
        items = train_reference_items(byid, dev, a.train_reference) + items
    if a.train_repeat:
        items = train_repeat_items(byid, dev, a.train_repeat.split(",")) + items
    if a.remeasure_memory:
        mitems = memory_items(specs, dev)
        print("memory re-measure: %d items, %d configurations"
              % (len(mitems), sum(len(m["mem"]) for m in mitems)), flush=True)
        # spread evenly: each worker starts with its share of them
        items = mitems + items
        per = [[] for _ in range(gpus)]
        for k, it in enumerate(mitems):
            per[k % gpus].append(it)
        rest_items = items[len(mitems):]
        for k, it in enumerate(rest_items):
            per[k % gpus].append(it)
    else:
        per = [items[k::gpus] for k in range(gpus)]
    # worker shards: round robin over the ordered item list
    for k in range(gpus):
        with open(os.path.join(work, "items_%d.jsonl" % k), "w") as f:
            for it in per[k]:
                f.write(json.dumps(it) + "\n")
    # export queue: labeled items first, then the rest of the pool;
    # the big language models go to dedicated multi-threaded exporters
    lab_ids = [it["spec"]["id"] for it in items]
    # labeled specs without a graph go first, in the first part only
    again = [i for i in labeled_without_graph(done, graphs_known(), retry)
             if i in byid and keep(byid[i])] if first_part else []
    for i in again:
        byid[i] = dict(byid[i], export_anyway=True)
    # then the specs labeled on some card whose export never ran (a batch
    # ended before its exporter reached them): their rows wait in pending/.
    # Batch l15a labeled 20 new language models and exported 8 of its 17
    # large ones; the next batch's own label items would have come first.
    waiting = [i for i in waiting_exports(ordered, done, skip) if keep(byid[i])] \
        if first_part else []
    q = again + waiting + export_queue([s["id"] for s in ordered if keep(s)],
                                       lab_ids, every_item,
                                       done["export"] | skip | set(again) |
                                       set(waiting),
                                       a.part,
                                       a.export_only_labeled)
    big = [i for i in q if i.startswith(("hf:", "hfv:")) and
           zoo.hf_params_estimate(byid[i]["build"]["cfg"]) > 0.9e9]
    small = [i for i in q if i not in set(big)]
    ncpu = os.cpu_count() or 8
    # sampled variants over MAX_EXPORT_PARAMS are skipped, not exported
    nb = big_exporter_count(len(big), max(
        [zoo.hf_params_estimate(byid[i]["build"]["cfg"]) for i in big
         if i.startswith("hf:") or byid[i].get("export_anyway")] or [0]))
    bthreads = 8 if ncpu >= 48 else (3 if nb > 1 else 6)
    n_exp = a.exporters or max(2, ncpu - 2 * gpus - 1 - bthreads * nb)
    with open(os.path.join(work, "export_q.jsonl"), "w") as f:
        for i in small:
            f.write(json.dumps(byid[i]) + "\n")
    with open(os.path.join(work, "export_big.jsonl"), "w") as f:
        for i in big:
            f.write(json.dumps(byid[i]) + "\n")
    print("batch %s: %d specs, %d label items, %d to export (%d big), %d gpus, "
          "%d exporters" % (batch_id, len(specs), len(items), len(q), len(big),
                            gpus, n_exp), flush=True)

    env_base = dict(os.environ, PYTHONUNBUFFERED="1", OMP_NUM_THREADS="1",
                    CUDA_DEVICE_ORDER="PCI_BUS_ID", TOKENIZERS_PARALLELISM="false")
    py = sys.executable
    logs = open(os.path.join(work, "log.txt"), "a")
    elogs = open(os.path.join("/tmp", "export_log_%s.txt" % batch_id), "a")
    exporters = []
    cores = list(range(ncpu))
    gpu_cores = cores[:2 * gpus]
    other = cores[2 * gpus:] or cores
    for i in range(n_exp):
        e = dict(env_base, CUDA_VISIBLE_DEVICES="")
        cmd = ["taskset", "-c", str(other[i % len(other)]), py,
               os.path.join(HERE, "export.py"), "--specs",
               os.path.join(work, "export_q.jsonl"), "--out", work,
               "--shard", "%d/%d" % (i, n_exp), "--deadline", str(t_end - 40)]
        exporters.append(subprocess.Popen(cmd, env=e, stdout=elogs, stderr=elogs))
    if big:
        for j in range(nb):
            cs = other[-bthreads * (j + 1):][:bthreads]
            e = dict(env_base, CUDA_VISIBLE_DEVICES="",
                     OMP_NUM_THREADS=str(bthreads))
            cmd = ["taskset", "-c", ",".join(str(c) for c in cs), py,
                   os.path.join(HERE, "export.py"), "--specs",
                   os.path.join(work, "export_big.jsonl"), "--out", work,
                   "--shard", "%d/%d" % (j, nb), "--threads", str(bthreads),
                   "--deadline", str(t_end - 40), "--tag", "big%d" % j]
            exporters.append(subprocess.Popen(cmd, env=e, stdout=elogs, stderr=elogs))

    def start_worker(k):
        e = dict(env_base, CUDA_VISIBLE_DEVICES=str(k),
                 TORCHINDUCTOR_CACHE_DIR="/tmp/inductor_%s_w%d" % (batch_id, k))
        cmd = ["taskset", "-c", "%d,%d" % (gpu_cores[2 * k], gpu_cores[2 * k + 1]),
               py, os.path.join(HERE, "measure.py"), "--items",
               os.path.join(work, "items_%d.jsonl" % k), "--out", work,
               "--worker", str(k), "--deadline", str(t_end - 45),
               "--batch-id", batch_id, "--device-name", dev]
        return subprocess.Popen(cmd, env=e, stdout=logs, stderr=logs)
    workers = {k: start_worker(k) for k in range(gpus)}
    restarts = 0
    # the main loop ends at deadline["t"] - 40: t_end, or earlier on SIGTERM
    deadline = {"t": t_end}
    stop_early_on_term(deadline)
    while time.time() < deadline["t"] - 40:
        time.sleep(2)
        alive = 0
        for k, p in list(workers.items()):
            rc = p.poll()
            if rc is None:
                alive += 1
            elif rc != 0 and time.time() < deadline["t"] - 60 and restarts < 60:
                restarts += 1
                print("worker %d exited %d, restarting" % (k, rc), flush=True)
                workers[k] = start_worker(k)
                alive += 1
        if not alive and all(p.poll() is not None for p in exporters):
            break
    # stop what is still running (an item in flight is lost, by design)
    for p in list(workers.values()) + exporters:
        if p.poll() is None:
            p.terminate()
    time.sleep(3)
    for p in list(workers.values()) + exporters:
        if p.poll() is None:
            p.kill()
    # not after a SIGTERM: the device tool is waiting for the pack
    env["host_probe_end_us"] = fresh_probe() if deadline["t"] == t_end else None
    env["finished_utc"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    env["device_seconds"] = round(time.time() - t_start, 1)
    env["gpus_used"] = gpus
    env["worker_restarts"] = restarts
    with open(os.path.join(work, "env.json"), "w") as f:
        json.dump(env, f, indent=1)
    for d in glob.glob(os.path.join(work, "work_*")):
        subprocess.call(["rm", "-rf", d])
    os.makedirs(a.out, exist_ok=True)
    summarize(work)
    pack(work, batch_id, a.out)
    print("done %s in %.0f s" % (batch_id, time.time() - t_start), flush=True)


def summarize(work):
    """Prints counts and the most common failure reasons."""
    import collections
    for t in ("inference", "training", "llm", "kernels", "failures"):
        n = 0
        for p in glob.glob(os.path.join(work, "w*_%s.csv" % t)):
            n += sum(1 for _ in open(p)) - 1
        print("rows %s: %d" % (t, n))
    ok, errs = 0, collections.Counter()
    for p in glob.glob(os.path.join(work, "export_*.jsonl")):
        if p.endswith("_q.jsonl") or p.endswith("_big.jsonl"):
            continue
        for line in open(p):
            d = json.loads(line)
            if "hash" in d:
                ok += 1
            else:
                errs[d.get("error", "")[:90]] += 1
    print("exports ok %d, failed %d" % (ok, sum(errs.values())))
    for m, n in errs.most_common(12):
        print("  export fail %4d %s" % (n, m))
    fl = collections.Counter()
    for p in glob.glob(os.path.join(work, "w*_failures.csv")):
        for d in csv.DictReader(open(p)):
            fl[(d["stage"] + " " + d["reason"])[:100]] += 1
    for m, n in fl.most_common(12):
        print("  fail %4d %s" % (n, m))
    sys.stdout.flush()


def pack(work, batch_id, out):
    """Packs the work folder: zstd when the CLI exists, else 4 parallel xz
    tars; parts of at most 15 MiB; at most 7 files."""
    import shutil
    base = os.path.basename(work)
    if shutil.which("zstd"):
        tarp = os.path.join("/tmp", batch_id + ".tar.zst")
        subprocess.check_call("tar -C /tmp -cf - %s | zstd -q -T0 -12 --long=27 -o %s"
                              % (base, tarp), shell=True)
        size = os.path.getsize(tarp)
        if size <= 15 * 2 ** 20:
            shutil.copy(tarp, out)
        else:
            subprocess.check_call(["split", "-b", "15M", "-d", tarp,
                                   os.path.join(out, batch_id + ".tar.zst.part")])
        print("packed zstd %.1f MiB" % (size / 2 ** 20), flush=True)
        return
    files = []
    for root, _, fs in os.walk(work):
        for f in fs:
            files.append(os.path.relpath(os.path.join(root, f), "/tmp"))
    files.sort()
    k = 4
    jobs = []
    for i in range(k):
        p = os.path.join(out, "%s.%d.tar.xz" % (batch_id, i))
        lst = os.path.join("/tmp", "pack_%d.txt" % i)
        with open(lst, "w") as f:
            f.write("\n".join(files[i::k]) + "\n")
        jobs.append(subprocess.Popen("tar -C /tmp -cf - -T %s | xz -T2 -6 > %s"
                                     % (lst, p), shell=True))
    for j in jobs:
        j.wait()
    print("packed xz", [os.path.getsize(os.path.join(out, "%s.%d.tar.xz" % (batch_id, i)))
                        for i in range(k)], flush=True)


if __name__ == "__main__":
    main()
