#!/usr/bin/env bash
# The README's test command: set up, build, run every test, then run the
# C tests again under AddressSanitizer + UndefinedBehaviorSanitizer.
set -uo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh || exit 1
make -j2 all >/dev/null && make -j2 build/dlperf >/dev/null || { make all; exit 1; }
rc=0
echo "== tests (build/) =="
make -s -j2 test 2>&1 | tee build/test.log || rc=1
echo "== tests under ASan+UBSan (build-san/) =="
DLP_SKIP_PY=1 ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  make -s -j2 SAN=1 test 2>&1 | tee build/test-san.log || rc=1
p=0; f=0
for log in build/test.log build/test-san.log; do
    line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$log" | tail -1)
    [ -z "$line" ] && { f=$((f+1)); continue; }
    p=$((p+${line%% passed*})); x=${line#*passed, }; f=$((f+${x%% failed*}))
done
echo "$p passed, $f failed"
[ $rc -eq 0 ] && [ $f -eq 0 ]
