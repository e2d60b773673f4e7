#!/usr/bin/env bash
# Runs every test binary in $BUILD/tests and every tests/test_*.py oracle
# script, adds up their "N passed, N failed" lines, and prints the total.
set -u
BUILD=${BUILD:-build}
cd "$(dirname "$0")/.."
total_p=0; total_f=0; broken=0
run_one() {
    local name=$1; shift
    local log; log=$(mktemp)
    "$@" >"$log" 2>&1
    local rc=$?
    local line; line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -1)
    if [ -z "$line" ]; then
        echo "$name: no result line (exit $rc)"; tail -20 "$log"; broken=$((broken+1))
    else
        local p f; p=${line%% passed*}; f=${line#*passed, }; f=${f%% failed*}
        total_p=$((total_p+p)); total_f=$((total_f+f))
        if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then broken=$((broken+1)); echo "$name: exit $rc"; tail -20 "$log"; fi
        [ "$f" -ne 0 ] && grep -E 'FAIL|not ok' "$log" | head -40
        echo "$name: $p passed, $f failed"
    fi
    rm -f "$log"
}
for t in "$BUILD"/tests/test_*; do
    [ -x "$t" ] || continue
    run_one "$(basename "$t")" "$t"
done
if [ "${DLP_SKIP_PY:-0}" != 1 ]; then
    for t in tests/test_*.py; do
        [ -e "$t" ] || continue
        run_one "$(basename "$t")" env DLP_BUILD="$BUILD" /usr/bin/python3 "$t"
    done
fi
total_f=$((total_f+broken))
echo "$total_p passed, $total_f failed"
[ "$total_f" -eq 0 ]
