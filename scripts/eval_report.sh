#!/bin/sh
# eval_report.sh — regenerates the tables and plots of docs/EVAL.md from
# data/: for each mode with labels, `dlperf eval` over the splits with the
# baselines and the GNNs; Markdown tables go to $MD (default
# docs/eval_tables.md, included by hand into docs/EVAL.md), SVG plots to
# docs/plots/. Each split trains one model per fold.
#
#   scripts/eval_report.sh
#   EPOCHS=10 SPLITS="lmo random" MODES=inference scripts/eval_report.sh
set -u
DATA=${DATA:-data}
DLPERF=${DLPERF:-build/dlperf}
EPOCHS=${EPOCHS:-20}
THREADS=${THREADS:-2}
MD=${MD:-docs/eval_tables.md}
PLOTS=${PLOTS:-docs/plots}
KINDS=${KINDS:-"linreg,roofline,dippm,trappm"}
SPLITS=${SPLITS:-"lmo random mc lofo"}
MODES=${MODES:-"inference training llm"}
EXTRA=${EXTRA:-}

mkdir -p "$PLOTS" "$(dirname "$MD")"
: > "$MD"
for mode in $MODES; do
    for split in $SPLITS; do
        echo "== $mode, $split" >&2
        echo "" >> "$MD"
        echo "### $mode, split \`$split\`" >> "$MD"
        # shellcheck disable=SC2086
        "$DLPERF" eval "$DATA" --mode "$mode" --kind "$KINDS" --split "$split" \
            --epochs "$EPOCHS" --threads "$THREADS" --plot-dir "$PLOTS/$mode" \
            --markdown "$MD" $EXTRA || echo "   ($mode/$split failed or has no labels)" >&2
    done
done
