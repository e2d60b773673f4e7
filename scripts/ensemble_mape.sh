#!/bin/sh
# ensemble_mape.sh — held-out MAPE of an ensemble formed after the fact:
# the geometric mean of the predictions of several `dlperf eval
# --predictions` files (runs that differ in --seed alone and share their
# folds through --split-seed), next to each file's own MAPE, per target
# and runtime. Rows are matched on (kind, model, graph, device, runtime,
# precision, batch, seq, height, width, target); only rows present in
# every file count. KIND (default dippm) picks the kind's rows; DEVICE
# (default: all) keeps the rows of one device (e.g. H100-SXM5-80GB).
#
#   KIND=dippm [DEVICE=name] scripts/ensemble_mape.sh run1.csv run2.csv [run3.csv ...]
#
# The ensembles that `--members N` trains average the networks the same
# way (in log space); this estimates their error without training them.
set -eu
[ $# -ge 2 ] || { echo "usage: [KIND=k] [DEVICE=d] $0 PRED.csv PRED.csv [...]" >&2; exit 2; }
printf "%-28s %-7s %6s %10s" target runtime rows ensemble
i=1
while [ $i -le $# ]; do printf "   file %d" $i; i=$((i + 1)); done
printf "\n"
awk -F, -v kind="${KIND:-dippm}" -v dev="${DEVICE:-}" -v nf="$#" '
FNR == 1 {
    file++
    for (i = 1; i <= NF; i++) col[$i] = i
    next
}
$col["kind"] == kind && (dev == "" || $col["device"] == dev) {
    key = $col["model"] SUBSEP $col["graph"] SUBSEP $col["device"] SUBSEP \
          $col["runtime"] SUBSEP $col["precision"] SUBSEP $col["batch"] SUBSEP \
          $col["seq"] SUBSEP $col["height"] SUBSEP $col["width"] SUBSEP \
          $col["target"]
    y = $col["actual"] + 0; p = $col["predicted"] + 0
    if (y <= 0 || p <= 0) next
    if ((key, file) in own) next
    n[key]++
    act[key] = y
    logsum[key] += log(p)
    own[key, file] = p
    grp[key] = $col["target"] " " $col["runtime"]
}
END {
    for (k in n) {
        if (n[k] != nf) continue
        g = grp[k]
        cnt[g]++
        e = exp(logsum[k] / nf) / act[k] - 1
        ens[g] += e < 0 ? -e : e
        for (f = 1; f <= nf; f++) {
            e = own[k, f] / act[k] - 1
            one[g, f] += e < 0 ? -e : e
        }
    }
    for (g in cnt) {
        split(g, a, " ")
        printf "%-28s %-6s %7d %9.2f%%", a[1], a[2], cnt[g], 100 * ens[g] / cnt[g]
        for (f = 1; f <= nf; f++) printf " %7.2f%%", 100 * one[g, f] / cnt[g]
        printf "\n"
    }
}' "$@" | sort
