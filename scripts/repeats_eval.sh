#!/bin/sh
# scripts/repeats_eval.sh BATCH...: the shipped training files scored on
# training steps measured twice, once when they were labeled and again in
# the repeat batches BATCH... (`run_batch.py --train-reference`, the ends
# of their ids, e.g. p66a p66b), whose rows ingest.py keeps in
# data/probes/repeats-training.csv beside the stored ones.
#
# The files trained on the stored labels of these very configurations, so
# against them the score is in-sample; against the same configurations
# measured again in another session it is what a user on that session's
# host sees, and the difference is the labels' reproducibility, not the
# model (docs/PREDICT.md, "Replicates").
# ROWS (default data/probes/repeats-training.csv), DATA (data), MODELS
# (models), DLPERF (build/dlperf), OUT (a new temporary folder: the
# outputs and predictions) from the environment; HOST=FILE also applies
# a training host correction (`dlperf host fit --mode training`) to the
# blend's predictions of each set, with the rows' own host_us.
set -u
ROWS=${ROWS:-data/probes/repeats-training.csv}
DATA=${DATA:-data}
MODELS=${MODELS:-models}
DLPERF=${DLPERF:-build/dlperf}
OUT=${OUT:-}
if [ $# -eq 0 ]; then
    echo "usage: scripts/repeats_eval.sh BATCH..." >&2
    exit 2
fi
if [ ! -f "$ROWS" ]; then
    echo "repeats_eval: no file $ROWS" >&2
    exit 2
fi
N=$(mktemp -d "${TMPDIR:-/tmp}/dlp_repeats_XXXXXX") || exit 1
trap 'rm -rf "$N"' EXIT
if [ -z "$OUT" ]; then
    OUT=$(mktemp -d "${TMPDIR:-/tmp}/dlp_repeats_out_XXXXXX") || exit 1
fi
mkdir -p "$OUT" || exit 1
graphs=$(cd "$DATA/graphs" && pwd -P) || exit 1
# split ROWS: a row that data/batches holds as a label is "stored"; a row
# of a named batch goes to that batch; any other (a repeat of a batch not
# named) to neither
awk -F, -v names="$*" -v dir="$N" '
    function key() {
        return $c["batch_id"] "|" $c["hash"] "|" $c["device"] "|" $c["rep"] \
            "|" $c["precision"] "|" $c["batch"] "|" $c["height"] "|" $c["width"]
    }
    FNR == 1 {
        split("", c)
        for (i = 1; i <= NF; i++) c[$i] = i
        if (!("batch_id" in c)) {
            print "repeats_eval: " FILENAME ": no batch_id column" > "/dev/stderr"
            exit 2
        }
        if (FILENAME == rows) {
            header = $0
            n = split(names, want, " ")
        }
        next
    }
    FILENAME != rows { label[key()] = 1; next }
    {
        out = ""
        if (key() in label) out = "stored"
        for (k = 1; k <= n && out == ""; k++) {
            s = "-" want[k]
            b = $c["batch_id"]
            if (substr(b, length(b) - length(s) + 1) == s) out = want[k]
        }
        if (out == "") next
        f = dir "/" out ".csv"
        if (!(f in seen)) { print header > f; seen[f] = 1 }
        print > f
    }
' rows="$ROWS" "$DATA"/batches/*/training.csv "$ROWS" || exit 1
st=0
for name in stored "$@"; do
    if [ ! -f "$N/$name.csv" ]; then
        echo "repeats_eval: no row of '$name' in $ROWS" >&2
        st=2
        continue
    fi
    d="$N/$name"
    mkdir -p "$d/batches/00000000T000000-$name" || exit 1
    ln -s "$graphs" "$d/graphs" || exit 1
    mv "$N/$name.csv" "$d/batches/00000000T000000-$name/training.csv" || exit 1
    if ! "$DLPERF" eval "$d" --mode training --models "$MODELS" \
        --kind dippm+xgb,xgb,dippm --top-models 0 \
        --predictions "$OUT/$name.csv" > "$OUT/$name.txt" 2>&1; then
        echo "repeats_eval: the evaluation on '$name' failed ($OUT/$name.txt)" >&2
        tail -3 "$OUT/$name.txt" >&2
        st=1
        continue
    fi
    grep -E '^== .*predictions ==$|^training\.[a-z_]+ +all +[0-9]' \
        "$OUT/$name.txt" | sed "s/^/[$name] /"
    if [ -n "${HOST:-}" ]; then
        if "$DLPERF" host apply "$OUT/$name.csv" "$d" --mode training \
            --kind dippm+xgb --host "$HOST" > "$OUT/$name-host.txt" 2>&1; then
            grep -E 'predictions [0-9]+:|^all ' "$OUT/$name-host.txt" |
                sed "s/^/[$name host] /"
        else
            echo "repeats_eval: host apply on '$name' failed ($OUT/$name-host.txt)" >&2
            st=1
        fi
    fi
done
echo "outputs in $OUT"
exit $st
