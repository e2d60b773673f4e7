#!/bin/sh
# split_by_op.sh — a dataset's labels split by whether their graph holds
# an operator, for an ablation that holds a kind of graph out whole: train
# on OUT/without, score the trained files on OUT/with (`dlperf eval
# OUT/with --models M`). The seventieth session's group-norm ablation
# (docs/EVAL.md) comes from
#
#   scripts/split_by_op.sh InstanceNormalization,GroupNormalization /tmp/ab
#   build/dlperf train /tmp/ab/without --mode inference --kind dippm \
#       -o M/dippm-inference.dlpm --epochs 12 --patience 4 --hidden 64 \
#       --members 2 --readout mixed-lse --threads 2 --seed 1
#   build/dlperf eval /tmp/ab/with --models M --kind dippm --predictions P
#   (the same with the other build), scripts/paired_mape.sh P_OLD P_NEW
#
# A graph holds an operator when its file in the pack (DATA/graphs)
# contains the operator's name: the op_type strings of an ONNX file are
# stored as they are (a node named after an operator it does not run
# would count too). OUT/with and OUT/without are datasets of links
# (graphs, probes, devices) whose batches keep env.json and the rows of
# inference.csv, training.csv and llm.csv whose graph holds one of the
# operators (with) or none (without); failures.csv and memory.csv are
# copied whole, kernel traces left out. OUT/graphs.txt lists the graphs
# holding one, one hash per line; the counts go to stdout.
#
#   DATA=data scripts/split_by_op.sh OP[,OP...] OUT
#
# Exit: 0 done, 1 a command failed, 2 usage (no operator, OUT exists).
set -u
DATA=${DATA:-data}
if [ $# -ne 2 ] || [ -z "$1" ]; then
    echo "usage: scripts/split_by_op.sh OP[,OP...] OUT" >&2
    exit 2
fi
OUT=$2
if [ -e "$OUT" ]; then
    echo "split_by_op: $OUT exists" >&2
    exit 2
fi
[ -d "$DATA/graphs" ] && [ -d "$DATA/batches" ] ||
    { echo "split_by_op: $DATA has no graphs/ or batches/" >&2; exit 1; }
mkdir -p "$OUT/with/batches" "$OUT/without/batches" || exit 1
T=$(mktemp -d "${TMPDIR:-/tmp}/dlp_split_XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
abs() { (cd "$1" && pwd -P); }

# the operators, one per line, for grep -F -f
echo "$1" | tr ',' '\n' | grep -v '^$' > "$T/ops"
: > "$OUT/graphs.txt"
for p in "$DATA"/graphs/*.tar.zst; do
    [ -f "$p" ] || continue
    mkdir "$T/x" || exit 1
    zstd -dcq "$p" | tar -x -C "$T/x" || { echo "split_by_op: cannot read $p" >&2; exit 1; }
    for f in "$T"/x/*.onnx; do
        [ -f "$f" ] || continue
        if grep -q -a -F -f "$T/ops" "$f"; then
            basename "$f" .onnx >> "$OUT/graphs.txt"
        fi
    done
    rm -rf "$T/x"
done
sort -u -o "$OUT/graphs.txt" "$OUT/graphs.txt"

for d in with without; do
    for x in graphs probes devices; do
        [ -e "$DATA/$x" ] && ln -s "$(abs "$DATA/$x")" "$OUT/$d/$x"
    done
done
# the hash column of a label table, by its header
for b in "$DATA"/batches/*/; do
    n=$(basename "$b")
    for d in with without; do
        mkdir "$OUT/$d/batches/$n" || exit 1
        for f in env.json failures.csv memory.csv; do
            [ -f "$b$f" ] && cp "$b$f" "$OUT/$d/batches/$n/"
        done
    done
    for t in inference training llm; do
        f="$b$t.csv"
        [ -f "$f" ] || continue
        awk -F, -v list="$OUT/graphs.txt" -v w="$OUT/with/batches/$n/$t.csv" \
            -v wo="$OUT/without/batches/$n/$t.csv" '
            BEGIN { while ((getline h < list) > 0) has[h] = 1 }
            NR == 1 {
                for (i = 1; i <= NF; i++) if ($i == "hash") c = i
                print > w; print > wo; next
            }
            c && ($c in has) { print > w; next }
            { print > wo }
            END { if (!c) exit 3 }' "$f" ||
            { echo "split_by_op: $f has no hash column" >&2; exit 1; }
    done
done
for d in with without; do
    for t in inference training llm; do
        set -- "$OUT/$d"/batches/*/"$t.csv"
        [ -f "$1" ] || { echo "$d $t 0"; continue; }
        echo "$d $t $(awk 'FNR > 1' "$@" | wc -l)"
    done
done
echo "graphs holding $(tr '\n' ' ' < "$T/ops")$(wc -l < "$OUT/graphs.txt")"
