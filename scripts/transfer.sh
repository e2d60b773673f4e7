#!/bin/sh
# transfer.sh — transfer learning to another GPU, measured (the TraPPM
# thesis's "with vs without transfer"): a GNN trained on every label of
# one device (FROM), then scored on the other device's (TO) labels
#   zero-shot    the FROM file as it is, on every TO example
#                (dlperf eval --models: no training; its device
#                features are TO's)
#   fine-tuned   5-fold leave-models-out over TO's examples, each fold
#                training on N random examples of its training models
#                only, starting from the FROM file (--shots N
#                --init-from FILE), for each N of SHOTS
#   scratch      the same folds and N examples, from scratch (--shots
#                N), for each kind of SCRATCH
#   all          the same folds, from scratch on every training example
#                (the reference; skipped when FULL=0)
# and prints, per setting and target, the examples, the MAPE (against the
# labels moved to the reference host where HOST_NORM is given; what the
# GNNs train on) and the MAPE against the labels as measured (the
# "against the labels as measured" table of each eval). Every run's
# output and predictions stay in OUT. Early stopping uses each fold's
# validation models in full in every setting (only the training examples
# are few).
#
#   scripts/transfer.sh                              # TraPPM, training steps
#   SHOTS="20 60 200" OUT=/tmp/tx scripts/transfer.sh
#   MODE=inference HOST_NORM=models/host.csv scripts/transfer.sh
#
# Environment (defaults): DATA (data), MODE (training), KIND (trappm),
# FROM (H200-SXM-141GB), TO (H100-SXM5-80GB), SHOTS ("20 60"), SCRATCH
# (dippm,trappm), FULL (1), HOST_NORM (models/host-training.csv for
# training, models/host-llm.csv for llm, models/host.csv for inference;
# empty: the labels as measured), GNN ("--epochs 40 --hidden 64 --patience
# 8 --members 2": the shipped training GNNs' options), THREADS (2),
# DLPERF (build/dlperf), OUT (a new temporary folder).
# Exit: 0 done, 1 a command failed, 2 usage.
set -u
DATA=${DATA:-data}
MODE=${MODE:-training}
KIND=${KIND:-trappm}
FROM=${FROM:-H200-SXM-141GB}
TO=${TO:-H100-SXM5-80GB}
SHOTS=${SHOTS:-"20 60"}
SCRATCH=${SCRATCH:-dippm,trappm}
FULL=${FULL:-1}
GNN=${GNN:-"--epochs 40 --hidden 64 --patience 8 --members 2"}
THREADS=${THREADS:-2}
DLPERF=${DLPERF:-build/dlperf}
OUT=${OUT:-}
case $MODE in
training) hn=models/host-training.csv ;;
llm) hn=models/host-llm.csv ;;
inference) hn=models/host.csv ;;
*) echo "transfer: MODE is inference, training or llm, not '$MODE'" >&2; exit 2 ;;
esac
HOST_NORM=${HOST_NORM-$hn}
if [ $# -ne 0 ]; then
    echo "usage: [DATA=dir] [MODE=m] [KIND=k] [FROM=dev] [TO=dev] [SHOTS=\"n ...\"] [SCRATCH=k,..] [FULL=0|1] [OUT=dir] scripts/transfer.sh" >&2
    exit 2
fi
for n in $SHOTS; do
    case $n in
    '' | *[!0-9]* | 0) echo "transfer: SHOTS are counts above 0, not '$n'" >&2; exit 2 ;;
    esac
done
[ "$FROM" != "$TO" ] || { echo "transfer: FROM and TO are the same device" >&2; exit 2; }
[ -d "$DATA" ] || { echo "transfer: no dataset folder $DATA" >&2; exit 2; }
[ -x "$DLPERF" ] || { echo "transfer: build dlperf first (make)" >&2; exit 2; }
if [ -z "$OUT" ]; then
    OUT=$(mktemp -d "${TMPDIR:-/tmp}/dlp_transfer_XXXXXX") || exit 1
fi
mkdir -p "$OUT/from" || exit 1
hn_opt=""
[ -z "$HOST_NORM" ] || hn_opt="--host-norm $HOST_NORM"
src="$OUT/from/$KIND-$MODE.dlpm"

# run NAME CMD...: the command's output to OUT/NAME.log, its status noted
run() {
    name=$1
    shift
    t0=$(date +%s)
    if "$@" >"$OUT/$name.log" 2>&1; then
        echo "$name: $(($(date +%s) - t0)) s" >&2
    else
        echo "transfer: $name failed (OUT/$name.log):" >&2
        tail -3 "$OUT/$name.log" >&2
        exit 1
    fi
}
# shellcheck disable=SC2086 # GNN, hn_opt: words on purpose
run from "$DLPERF" train "$DATA" --mode "$MODE" --device "$FROM" \
    --kind "$KIND" $GNN $hn_opt --threads "$THREADS" --seed 1 -o "$src"
# shellcheck disable=SC2086
run zero-shot "$DLPERF" eval "$DATA" --mode "$MODE" --device "$TO" \
    --kind "$KIND" --models "$OUT/from" $hn_opt --threads "$THREADS" \
    --top-models 0 --predictions "$OUT/zero-shot.csv"
folds="--mode $MODE --device $TO --split lmo --seed 1 --split-seed 1 $GNN $hn_opt --threads $THREADS --top-models 0"
for n in $SHOTS; do
    # shellcheck disable=SC2086
    run "fine-tuned-$n" "$DLPERF" eval "$DATA" $folds --kind "$KIND" \
        --shots "$n" --init-from "$src" --predictions "$OUT/fine-tuned-$n.csv"
    # shellcheck disable=SC2086
    run "scratch-$n" "$DLPERF" eval "$DATA" $folds --kind "$SCRATCH" \
        --shots "$n" --predictions "$OUT/scratch-$n.csv"
done
if [ "$FULL" != 0 ]; then
    # shellcheck disable=SC2086
    run all "$DLPERF" eval "$DATA" $folds --kind "$SCRATCH" \
        --predictions "$OUT/all.csv"
fi

# the table: each log's "against the labels as measured" section (kind,
# target, runtime, n, moved, as measured); without HOST_NORM the eval
# prints no such section, and the MAPE comes from its own table
row="%-16s %-8s %-28s %-8s %6s %9s %12s\n"
# shellcheck disable=SC2059 # row: the one format of every line
printf "$row" setting kind target runtime n MAPE "as measured"
for log in zero-shot $(for n in $SHOTS; do echo "fine-tuned-$n scratch-$n"; done) \
    $([ "$FULL" != 0 ] && echo all); do
    awk -v setting="$log" -v hn="$HOST_NORM" -v row="$row" '
    /^== against the labels as measured/ { sec = 1; next }
    sec && /^kind / { next }
    sec && NF == 6 { printf row, setting, $1, $2, $3, $4, $5, $6; next }
    sec && NF != 6 { sec = 0 }
    hn == "" && /^== / { split($2, k, ","); kind = k[1] }
    hn == "" && $2 == "all" && $1 ~ /\./ && NF >= 4 {
        printf row, setting, kind, $1, "all", $3, $4, $4 }
    ' "$OUT/$log.log"
done
echo "(logs and predictions in $OUT)" >&2
