#!/bin/sh
# featurize_bench.sh — how long two dlperf builds take to read a mode's
# labels and featurize its graphs, side by side, and what glibc's
# allocator tunables (the ones scripts/train_models.sh sets) change.
# The work timed is `dlperf train DATA --mode MODE --kind linreg` on one
# thread: the linear baseline fits in milliseconds, so its wall time is
# the dataset read and the featurizer, which every call of `make models`
# pays. Two runs at a time, each on one thread (a core each on a 2-core
# machine): OLD beside NEW, then NEW beside NEW with the tunables. The
# files the runs write must be the same bytes (the featurizer's answers
# did not change); the script says so, or fails. Not a test: timings are
# never pass/fail.
#
#   bench/featurize_bench.sh OLD_DLPERF NEW_DLPERF [DATA] [MODE]
#
# DATA defaults to data, MODE to inference. A binary is run from where it
# lies (copy a build elsewhere before rebuilding over it).
set -eu
OLD=$1 NEW=$2
DATA=${3:-data} MODE=${4:-inference}
TUNED=glibc.malloc.hugetlb=1:glibc.malloc.mmap_threshold=268435456:glibc.malloc.trim_threshold=2147483648
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# run NAME DLPERF TUNABLES: the wall seconds into $T/NAME.s
run() {
    s=$(date +%s.%N)
    GLIBC_TUNABLES=$3 "$2" train "$DATA" --mode "$MODE" --kind linreg \
        --threads 1 --seed 1 -o "$T/$1.dlpm" >"$T/$1.log" 2>&1 || {
        echo "featurize_bench: $1 failed:"; tail -3 "$T/$1.log"; exit 1; }
    echo "$(date +%s.%N) $s" | awk '{ printf "%.2f\n", $1 - $2 }' >"$T/$1.s"
}
pair() {
    run "$1" "$2" "$3" &
    a=$!
    run "$4" "$5" "$6" &
    b=$!
    wait $a
    wait $b
}
pair old "$OLD" "" new "$NEW" ""
pair new2 "$NEW" "" tuned "$NEW" "$TUNED"
for f in new new2 tuned; do
    cmp -s "$T/old.dlpm" "$T/$f.dlpm" || {
        echo "featurize_bench: $f wrote another file than old"; exit 1; }
done
echo "$(uname -m), $(nproc) cores; $MODE, $(grep -m1 'examples' "$T/old.log")"
echo "one thread each, two runs side by side; the four files the same bytes"
awk -v o="$(cat "$T/old.s")" -v n="$(cat "$T/new.s")" \
    -v n2="$(cat "$T/new2.s")" -v t="$(cat "$T/tuned.s")" 'BEGIN {
    printf "old %7.2f s   new %7.2f s   new/old %.3f\n", o, n, n / o
    printf "new %7.2f s   new, tunables %7.2f s   tuned/new %.3f\n", n2, t, t / n2 }'
