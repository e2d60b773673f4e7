#!/bin/sh
# lane_bench.sh — whether a call that trains no GNN can run beside a
# TraPPM training without slowing it (the eighty-ninth session's
# two-lane `make models`, docs/EVAL.md): a 2-epoch TraPPM call timed
# alone, then beside an XGBoost inference fit run at nice 19, then
# beside the same fit under SCHED_IDLE (`chrt --idle 0`); the fit starts
# 45 s before the TraPPM call (past its featurizing) and is stopped
# after it. The three TraPPM files must be the same bytes. Not a test:
# timings are never pass/fail.
#
#   bench/lane_bench.sh DLPERF [DATA]
set -eu
DLPERF=$1 DATA=${2:-data}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
: "${GLIBC_TUNABLES=glibc.malloc.hugetlb=1:glibc.malloc.mmap_threshold=268435456:glibc.malloc.trim_threshold=2147483648}"
export GLIBC_TUNABLES
trappm() {
    s=$(date +%s.%N)
    "$DLPERF" train "$DATA" --mode training --kind trappm -o "$T/$1.dlpm" \
        --epochs 2 --hidden 32 --patience 8 --threads 2 --seed 1 \
        >"$T/$1.log" 2>&1
    echo "$(date +%s.%N) $s" | awk -v n="$1" '{ printf "%-6s TraPPM %7.1f s\n", n, $1 - $2 }'
}
trappm alone
for how in nice idle; do
    if [ $how = nice ]; then pre="nice -n 19"; else pre="chrt --idle 0"; fi
    $pre "$DLPERF" tree fit "$DATA" --mode inference -o "$T/xgb-$how.dlpm" \
        --threads 2 >/dev/null 2>&1 &
    bg=$!
    sleep 45
    trappm $how
    echo "       the fit beside it had $(ps -o time= -p $bg) of CPU"
    kill $bg 2>/dev/null || true
    wait $bg 2>/dev/null || true
done
cmp -s "$T/alone.dlpm" "$T/nice.dlpm" && cmp -s "$T/alone.dlpm" "$T/idle.dlpm" &&
    echo "the three TraPPM files: the same bytes" || echo "the TraPPM files differ"
