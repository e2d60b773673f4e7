#!/usr/bin/python3
"""Two builds of dlperf timed side by side: each repetition runs
`dlperf predict` on ResNet-50 (inference, and a training step at batch
32), on the 2,000-node transformer and on a
tiny GPT as a language model (`--mode llm`, CUDA graph and eager) with this
checkout's build and models, then with another checkout's (a worktree of
an older commit, built), so both see the same machine state; prints the
median and min wall time of each, and the median CPU time (user + sys)
and minor page faults of each process (wait4's rusage). The graphs are bench/predict_bench.py's
(run it once first: it exports them into /tmp/dlp_predict_bench).

    git worktree add /tmp/old <rev> && make -C /tmp/old -j2
    /usr/bin/python3 bench/predict_interleaved.py /tmp/old [--reps 40]
"""
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORK = "/tmp/dlp_predict_bench"


def main(argv):
    if not argv or argv[0].startswith("-"):
        print(__doc__)
        return 2
    other, reps = argv[0], 40
    if len(argv) == 3 and argv[1] == "--reps":
        reps = int(argv[2])
    r50, tfm = os.path.join(WORK, "resnet50.onnx"), os.path.join(WORK, "transformer.onnx")
    if not (os.path.exists(r50) and os.path.exists(tfm)):
        print("run bench/predict_bench.py first (it exports the graphs)")
        return 2
    builds = [("this", ROOT), ("other", os.path.abspath(other))]
    gpt = os.path.join(ROOT, "tests", "fixtures", "models", "gpt_tiny.onnx")
    llm = [gpt, "--mode", "llm", "--precision", "bf16", "--batch", "4",
           "--dim", "seq=128", "--runtime"]
    cases = [("ResNet-50", [r50, "--batch", "8"]),
             ("ResNet-50 training", [r50, "--batch", "32", "--mode", "training"]),
             ("transformer", [tfm, "--batch", "8", "--dim", "seq=128"]),
             ("LLM graph", llm + ["graph"]), ("LLM eager", llm + ["eager"])]
    res = {}
    for _ in range(reps):
        for name, root in builds:
            for case, args in cases:
                cmd = [os.path.join(root, "build", "dlperf"), "predict", *args,
                       "--device", "h100", "--json", "--models",
                       os.path.join(root, "models")]
                t = time.perf_counter()
                p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
                _, st, ru = os.wait4(p.pid, 0)
                wall = (time.perf_counter() - t) * 1e3
                if st != 0:
                    raise SystemExit("%s: exit status %d" % (" ".join(cmd), st))
                res.setdefault((case, name), []).append(
                    (wall, (ru.ru_utime + ru.ru_stime) * 1e3, ru.ru_minflt))
    print("load average: %.2f %.2f %.2f" % os.getloadavg())
    for case, _ in cases:
        a, b = ([r[0] for r in res[(case, n)]] for n in ("this", "other"))
        print("%-12s this %7.2f ms median (min %.2f)   other %7.2f ms (min %.2f)   ratio %.3f"
              % (case, statistics.median(a), min(a), statistics.median(b), min(b),
                 statistics.median(a) / statistics.median(b)))
        ca, cb = ([r[1] for r in res[(case, n)]] for n in ("this", "other"))
        fa, fb = ([r[2] for r in res[(case, n)]] for n in ("this", "other"))
        print("%-12s   CPU this %.2f ms, other %.2f ms (ratio %.3f); page faults "
              "%d, %d" % ("", statistics.median(ca), statistics.median(cb),
                          statistics.median(ca) / statistics.median(cb),
                          statistics.median(fa), statistics.median(fb)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
