#!/bin/sh
# asmeasured_mape.sh — the MAPE of `dlperf eval --host-norm` predictions
# against the labels as measured. With --host-norm, eval scores each
# prediction against its label brought to the reference host (the
# predictions moved to the label's host with its measured share); this
# scores the same predictions, as the files give them without
# --host-us, against each configuration's mean label of the dataset's
# rows of status ok or flagged (what `dlperf train` averages into one
# example), for one target. `dlperf eval --host-norm --record` prints
# and records the same figure for every target since the ninety-sixth
# session; this stays for predictions files written before.
#
#   scripts/asmeasured_mape.sh PREDICTIONS DATA [KIND] [TARGET]
#   scripts/asmeasured_mape.sh /tmp/p.csv data dippm+xgb training.step_ms
#
# TARGET: training.step_ms (default), inference.latency_ms or
# llm.throughput_samples_s. RUNTIME=eager or RUNTIME=graph keeps the
# predictions of that runtime only (default: all):
#   RUNTIME=eager scripts/asmeasured_mape.sh /tmp/p.csv data dippm inference.latency_ms
# Prints the rows, the MAPE against the
# labels the file holds and against the labels as measured, and the
# same for the rows whose label was changed (a relative difference over
# 1e-6). Exit: 0 done, 2 usage.
set -u
if [ $# -lt 2 ] || [ ! -f "$1" ] || [ ! -d "$2/batches" ]; then
    echo "usage: scripts/asmeasured_mape.sh PREDICTIONS DATA [KIND] [TARGET]" >&2
    exit 2
fi
P=$1 DATA=$2 KIND=${3:-dippm+xgb} TARGET=${4:-training.step_ms}
RUNTIME=${RUNTIME:-}
case "$RUNTIME" in
""|eager|graph) ;;
*) echo "asmeasured_mape: RUNTIME is eager or graph, not $RUNTIME" >&2; exit 2 ;;
esac
case "$TARGET" in
training.step_ms) table=training col=step_ms ;;
inference.latency_ms) table=inference col=latency_ms ;;
llm.throughput_samples_s) table=llm col=throughput_samples_s ;;
*) echo "asmeasured_mape: unknown target $TARGET" >&2; exit 2 ;;
esac
# shellcheck disable=SC2046 # the label files: words on purpose
awk -F, -v kind="$KIND" -v target="$TARGET" -v col="$col" -v table="$table" \
    -v pfile="$P" -v runtime="$RUNTIME" '
FNR == 1 {
    delete c
    for (i = 1; i <= NF; i++) { h = $i; sub(/^\xef\xbb\xbf/, "", h); c[h] = i }
    pred = FILENAME == pfile
    next
}
!pred {
    v = $c[col] + 0
    if (v <= 0 || ($c["status"] != "ok" && $c["status"] != "flagged")) next
    rt = table == "training" ? "train" : $c["runtime"]
    k = $c["hash"] "|" $c["device"] "|" rt "|" $c["precision"] "|" $c["batch"] "|" \
        (table == "training" ? 0 : $c["seq"] + 0) "|" ($c["height"] + 0) "|" ($c["width"] + 0)
    sum[k] += v; n[k]++
    next
}
$c["kind"] == kind && $c["target"] == target &&
(runtime == "" || $c["runtime"] == runtime) {
    k = $c["graph"] "|" $c["device"] "|" $c["runtime"] "|" $c["precision"] "|" $c["batch"] "|" \
        ($c["seq"] + 0) "|" ($c["height"] + 0) "|" ($c["width"] + 0)
    if (!(k in n)) next
    a = $c["actual"] + 0; p = $c["predicted"] + 0; r = sum[k] / n[k]
    if (a <= 0) next
    rows++; en += (p > a ? p - a : a - p) / a; er += (p > r ? p - r : r - p) / r
    d = r / a - 1
    if (d > 1e-6 || d < -1e-6) {
        ch++; cn += (p > a ? p - a : a - p) / a; cr += (p > r ? p - r : r - p) / r
    }
}
END {
    if (!rows) { print "no rows of " kind " " target " matched a label"; exit 1 }
    if (runtime != "") target = target " (" runtime ")"
    printf "%s %s: %d rows, MAPE %.2f%% against the labels of the file, %.2f%% against the labels as measured\n", kind, target, rows, 100 * en / rows, 100 * er / rows
    if (ch)
        printf "  the %d rows whose label was changed: %.2f%% / %.2f%%\n", ch, 100 * cn / ch, 100 * cr / ch
}' $(ls "$DATA"/batches/*/"$table.csv") "$P"
