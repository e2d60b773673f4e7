#!/bin/sh
# park.sh — keeps the working tree that the device tool copies under its
# 64 MiB: moves aside the tracked paths a collector batch never reads, and
# puts them back before anything here needs them.
#
#   tools/collect/park.sh park      # before `run ... run_batch.sh ...`
#   tools/collect/park.sh unpark    # right after, before ingest.py
#   tools/collect/park.sh status
#
# Parked: models/ (the predictors; 34 MB in the ninety-third session) and
# data/graphs/*.tar.zst (the graph packs, 24 MB; run_batch.py reads only
# data/graphs/specmap.csv and index.csv, and new exports go to $OUT). The
# tree's tracked files were 65.3 MB with them, 41.9 MB without. They go
# to PARK_DIR (default /tmp/dlperf-park), outside the tree. park refuses
# when PARK_DIR holds a parked tree already (an unpark was missed);
# unpark refuses to overwrite a path that came back meanwhile, and checks
# that the tree's tracked files are all there again (git ls-files -d).
#
# Exit: 0 done, 1 refused or failed, 2 usage.
set -u
cd "$(dirname "$0")/../.." || exit 1
PARK=${PARK_DIR:-/tmp/dlperf-park}

case "${1:-}" in
park)
    if [ -e "$PARK/models" ] || [ -e "$PARK/graphs" ]; then
        echo "park: $PARK already holds a parked tree; unpark it first" >&2
        exit 1
    fi
    mkdir -p "$PARK/graphs" || exit 1
    if [ -d models ]; then mv models "$PARK/models" || exit 1; fi
    n=0
    for f in data/graphs/*.tar.zst; do
        [ -e "$f" ] || continue
        mv "$f" "$PARK/graphs/" || exit 1
        n=$((n + 1))
    done
    echo "parked models/ and $n graph pack(s) in $PARK"
    ;;
unpark)
    if [ ! -d "$PARK/graphs" ]; then
        echo "unpark: nothing parked in $PARK" >&2
        exit 1
    fi
    if [ -e "$PARK/models" ] && [ -e models ]; then
        echo "unpark: models/ exists here again; $PARK/models left as is" >&2
        exit 1
    fi
    for f in "$PARK"/graphs/*.tar.zst; do
        [ -e "$f" ] || continue
        if [ -e "data/graphs/$(basename "$f")" ]; then
            echo "unpark: data/graphs/$(basename "$f") exists here again" >&2
            exit 1
        fi
    done
    if [ -e "$PARK/models" ]; then mv "$PARK/models" models || exit 1; fi
    for f in "$PARK"/graphs/*.tar.zst; do
        [ -e "$f" ] || continue
        mv "$f" data/graphs/ || exit 1
    done
    rmdir "$PARK/graphs" 2>/dev/null
    missing=$(git ls-files -d 2>/dev/null)
    if [ -n "$missing" ]; then
        echo "unpark: tracked files still missing:" >&2
        echo "$missing" | head -5 >&2
        exit 1
    fi
    echo "unparked from $PARK"
    ;;
status)
    if [ -d "$PARK/graphs" ]; then
        echo "parked in $PARK: $(ls "$PARK/graphs" | wc -l) graph pack(s)$([ -e "$PARK/models" ] && echo ", models/")"
    else
        echo "nothing parked in $PARK"
    fi
    ;;
*)
    echo "usage: tools/collect/park.sh park|unpark|status" >&2
    exit 2
    ;;
esac
