"""eval_summary.py — compact Markdown summaries of `dlperf eval` text
outputs (the tables docs/EVAL.md quotes).

    /usr/bin/python3 scripts/eval_summary.py TITLE OUT.txt [OUT2.txt ...]

Prints, per (mode, split) found: one table of kinds x targets with MAPE /
RMSPE / Kendall tau / within-10% over all test predictions, then a table of
the main target's MAPE per family and kind."""
import re
import sys

HEAD = re.compile(r"^== (\S+), (\S+), split (\S+): (\d+) folds, (\d+) test")
ROW = re.compile(r"^(\S*)\s+(\S+)\s+(\d+)\s+([\d.]+%|-)\s+([\d.]+%|-)\s+(\S+)\s+(\S+)\s+([\d.]+%|-)")


def parse(paths):
    runs = []
    for p in paths:
        cur = None
        target = None
        for line in open(p):
            m = HEAD.match(line)
            if m:
                cur = dict(kind=m.group(1), mode=m.group(2), split=m.group(3),
                           folds=int(m.group(4)), n=int(m.group(5)), rows=[])
                runs.append(cur)
                continue
            if cur is None or line.startswith("target"):
                continue
            m = ROW.match(line)
            if not m:
                if not line.strip() or line.startswith(("dippm", "trappm", "  ")):
                    cur = None if not line.strip() else cur
                continue
            if m.group(1):
                target = m.group(1)
            cur["rows"].append(dict(target=target, family=m.group(2),
                                    n=int(m.group(3)), mape=m.group(4),
                                    rmspe=m.group(5), tau=m.group(7),
                                    acc=m.group(8)))
    return runs


def main():
    title, paths = sys.argv[1], sys.argv[2:]
    runs = parse(paths)
    groups = {}
    for r in runs:
        groups.setdefault((r["mode"], r["split"]), []).append(r)
    for (mode, split), rs in groups.items():
        print("\n**%s — %s, split `%s`** (%d folds, %d test predictions)\n"
              % (title, mode, split, rs[0]["folds"], rs[0]["n"]))
        targets = []
        for r in rs:
            for row in r["rows"]:
                if row["family"] == "all" and row["target"] not in targets:
                    targets.append(row["target"])
        print("| kind | " + " | ".join(t.split(".")[1] for t in targets) + " |")
        print("|---|" + "---|" * len(targets))
        for r in rs:
            cells = []
            for t in targets:
                a = [x for x in r["rows"] if x["target"] == t and x["family"] == "all"]
                cells.append("%s (tau %s, %s in 10%%)" % (a[0]["mape"], a[0]["tau"], a[0]["acc"]) if a else "-")
            print("| %s | %s |" % (r["kind"], " | ".join(cells)))
        main_t = targets[0] if targets else None
        fams = []
        for r in rs:
            for row in r["rows"]:
                if row["target"] == main_t and row["family"] != "all" and row["family"] not in fams:
                    fams.append(row["family"])
        if len(fams) > 1:
            print("\n%s MAPE per family (n = test predictions):\n" % main_t)
            print("| family | n | " + " | ".join(r["kind"] for r in rs) + " |")
            print("|---|---|" + "---|" * len(rs))
            for f in fams:
                cells, n = [], ""
                for r in rs:
                    a = [x for x in r["rows"] if x["target"] == main_t and x["family"] == f]
                    cells.append(a[0]["mape"] if a else "-")
                    if a:
                        n = a[0]["n"]
                print("| %s | %s | %s |" % (f, n, " | ".join(cells)))


if __name__ == "__main__":
    main()
