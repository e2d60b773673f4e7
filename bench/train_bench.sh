#!/bin/sh
# train_bench.sh — GNN training speed of two dlperf builds side by side:
# the same `dlperf train` on a sample of DATA's labels run by both at
# once, each on one thread (so each has a core of a 2-core machine), and
# the seconds per epoch of each network it trains, with their ratio.
# Not a test: timings are never pass/fail.
#
#   bench/train_bench.sh OLD_DLPERF NEW_DLPERF [DATA] [MODE] [SHOTS] [EPOCHS]
#
# DATA defaults to data, MODE to inference, SHOTS (training examples) to
# 4000, EPOCHS to 2; KIND=trappm (MODE training) times TraPPM's encoder
# pre-training and its supervised network. A binary is run from where it
# lies (copy a build elsewhere before rebuilding over it). The options are
# the shipped DIPPMs' (hidden 64, the lse readout) with one member.
set -eu
OLD=$1 NEW=$2
DATA=${3:-data} MODE=${4:-inference} SHOTS=${5:-4000} EPOCHS=${6:-2}
KIND=${KIND:-dippm}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
run() {
    "$1" train "$DATA" --mode "$MODE" --kind "$KIND" --hidden 64 \
        --readout mean+lse --members 1 --shots "$SHOTS" --epochs "$EPOCHS" \
        --patience "$EPOCHS" --threads 1 --seed 1 -o "$T/$2.dlpm" \
        >"$T/$2.log" 2>&1
}
run "$OLD" old &
p_old=$!
run "$NEW" new &
p_new=$!
wait $p_old
wait $p_new
# per network: "[LABEL] epoch E/N  ...  Ts elapsed, ..." (\r-separated),
# its last line -> "LABEL E T"
epochs() {
    tr '\r' '\n' <"$T/$1.log" |
        sed -n 's/^\[\([^]]*\)\] epoch \([0-9]*\)\/[0-9]*.* \([0-9.]*\)s elapsed.*/\1 \2 \3/p' |
        awk '{ last[$1] = $0 } END { for (k in last) print last[k] }' | sort
}
epochs old >"$T/old.ep"
epochs new >"$T/new.ep"
[ -s "$T/old.ep" ] && [ -s "$T/new.ep" ] || {
    echo "train_bench: no epoch lines (logs kept in $T)"; trap - EXIT; exit 1; }
echo "$(uname -m), $(nproc) cores; $MODE $KIND, $SHOTS examples, one thread each, side by side"
join "$T/old.ep" "$T/new.ep" | awk '{
    o = $3 / $2; n = $5 / $4
    printf "%-12s old %6.1f s/epoch  new %6.1f s/epoch  new/old %.3f  (%d epochs)\n", $1, o, n, n / o, $2 }'
grep "validation MAPE" "$T/old.log" | head -2 | sed 's/^/old /'
grep "validation MAPE" "$T/new.log" | head -2 | sed 's/^/new /'
# whether the change kept the numbers: a speed change that must not alter
# a trained file says so here
if cmp -s "$T/old.dlpm" "$T/new.dlpm"; then
    echo "the two model files: the same bytes"
else
    echo "the two model files differ"
fi
