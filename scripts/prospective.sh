#!/bin/sh
# prospective.sh — the prospective test of shipped predictors: batches
# measured after the files in MODELS were trained, scored as they are
# (no training; `dlperf eval --models`). It builds a dataset folder of
# links (graphs -> DATA/graphs, batches/ -> the batches named), then runs
#   inference, per runtime: dlperf eval N --models MODELS
#       --kind dippm,roofline --runtime graph|eager --predictions ...
#   the eager host correction: dlperf host apply <both runtimes'
#       predictions> N --kind dippm --host MODELS/host.csv
#   training steps: dlperf eval N --mode training --models MODELS
#       --kind dippm,xgb,dippm+xgb
#   their host correction (seventy-seventh session on): dlperf host
#       apply <its predictions> N --mode training --kind dippm+xgb
#       --host MODELS/host-training.csv
#   language models, per runtime: dlperf eval N --mode llm --models
#       MODELS --kind dippm+xgb,xgb --runtime graph|eager --predictions ...
#   their eager host correction: dlperf host apply <both runtimes'
#       predictions> N --mode llm --kind dippm+xgb --host
#       MODELS/host-llm.csv
# (a mode whose batches hold no labels is skipped), keeps each command's
# output and predictions in OUT, and prints the "all" line of every target
# and kind (OUT: a new temporary folder unless given). Every prospective figure in README.md and docs/EVAL.md since
# the sixty-first session comes from it.
#
#   scripts/prospective.sh p61a p61b p61c          # batch ids or suffixes
#   MODELS=/tmp/m OUT=/tmp/p scripts/prospective.sh 20261203T162652-p61a
#   MODES="training llm" scripts/prospective.sh p85a     # those modes only
#
# Exit: 0 done, 1 a command failed, 2 usage (no batch, or a name that
# matches no batch or several).
set -u
DATA=${DATA:-data}
MODELS=${MODELS:-models}
DLPERF=${DLPERF:-build/dlperf}
OUT=${OUT:-}
MODES=${MODES:-"inference training llm"}

if [ $# -eq 0 ]; then
    echo "usage: scripts/prospective.sh BATCH..." >&2
    exit 2
fi
N=$(mktemp -d "${TMPDIR:-/tmp}/dlp_prospective_XXXXXX") || exit 1
trap 'rm -rf "$N"' EXIT
if [ -z "$OUT" ]; then
    OUT=$(mktemp -d "${TMPDIR:-/tmp}/dlp_prospective_out_XXXXXX") || exit 1
fi
mkdir -p "$N/batches" "$OUT" || exit 1
abs() { (cd "$1" && pwd -P); }
ln -s "$(abs "$DATA/graphs")" "$N/graphs" || exit 1
for b in "$@"; do
    # a full batch id, or the end of one (p61a matches *-p61a)
    set -- "$DATA/batches/$b" "$DATA/batches/"*"-$b"
    found=""
    for d in "$@"; do
        if [ -d "$d" ]; then
            case " $found " in *" $d "*) ;; *) found="$found $d" ;; esac
        fi
    done
    # shellcheck disable=SC2086
    set -- $found
    if [ $# -ne 1 ]; then
        echo "prospective: '$b' names $# batches in $DATA/batches" >&2
        exit 2
    fi
    ln -s "$(abs "$1")" "$N/batches/$(basename "$1")" || exit 1
done
echo "prospective test of $MODELS on: $(ls "$N/batches" | tr '\n' ' ')(outputs in $OUT)"

# has_rows TABLE: TABLE is one of MODES and some linked batch holds rows
# of it
has_rows() {
    case " $MODES " in *" $1 "*) ;; *) return 1 ;; esac
    for f in "$N"/batches/*/"$1.csv"; do
        [ -f "$f" ] && [ "$(wc -l < "$f")" -gt 1 ] && return 0
    done
    return 1
}
# run NAME ARGS...: one command, its output to OUT/NAME.txt; prints the
# kind headers and "all" lines
run() {
    name=$1
    shift
    if ! "$DLPERF" "$@" > "$OUT/$name.txt" 2>&1; then
        echo "prospective: '$DLPERF $*' failed (output: $OUT/$name.txt)" >&2
        tail -3 "$OUT/$name.txt" >&2
        return 1
    fi
    grep -E '^== .*predictions ==$|^[a-z]+\.[a-z_]+ +all +[0-9]|^(all|[A-Z][A-Za-z0-9-]+) +[0-9]+ +[0-9.]+ +[0-9.]+$|predictions [0-9]+:|energy' \
        "$OUT/$name.txt" | grep -v '^  ' | sed "s/^/[$name] /"
}

# both_runtimes NAME: NAME-graph.csv and NAME-eager.csv (the per-runtime
# predictions) as one file, NAME.csv: host apply reads each eager
# prediction's CUDA-graph twin
both_runtimes() {
    { cat "$OUT/$1-graph.csv" && tail -n +2 "$OUT/$1-eager.csv"; } > "$OUT/$1.csv"
}

st=0
if has_rows inference; then
    for rt in graph eager; do
        run "inference-$rt" eval "$N" --models "$MODELS" --kind dippm,roofline \
            --runtime "$rt" --predictions "$OUT/inference-$rt.csv" || st=1
    done
    if [ -f "$MODELS/host.csv" ] && both_runtimes inference; then
        run host-eager host apply "$OUT/inference.csv" "$N" \
            --kind dippm --host "$MODELS/host.csv" || st=1
    fi
fi
if has_rows training; then
    run training eval "$N" --mode training --models "$MODELS" \
        --kind dippm,xgb,dippm+xgb --predictions "$OUT/training.csv" || st=1
    if [ -f "$MODELS/host-training.csv" ] && [ -f "$OUT/training.csv" ]; then
        run host-training host apply "$OUT/training.csv" "$N" --mode training \
            --kind dippm+xgb --host "$MODELS/host-training.csv" || st=1
    fi
fi
if has_rows llm; then
    # per runtime, as for inference: one "all" line over both runtimes
    # mixes the host-bound eager rows into the CUDA-graph figure (the
    # sixty-second session's "21.90%" was that mix: graph 5.06%, eager
    # 37.61%)
    for rt in graph eager; do
        run "llm-$rt" eval "$N" --mode llm --models "$MODELS" \
            --kind dippm+xgb,xgb --runtime "$rt" \
            --predictions "$OUT/llm-$rt.csv" || st=1
    done
    if [ -f "$MODELS/host-llm.csv" ] && both_runtimes llm; then
        run host-llm host apply "$OUT/llm.csv" "$N" --mode llm \
            --kind dippm+xgb --host "$MODELS/host-llm.csv" || st=1
    fi
fi
exit $st
