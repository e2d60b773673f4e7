#!/bin/sh
# ensemble_mape.sh — held-out MAPE of an ensemble formed after the fact:
# the geometric mean of the predictions of several `dlperf eval
# --predictions` files (runs that differ in --seed alone and share their
# folds through --split-seed), next to each file's own MAPE, per target
# and runtime. Rows are matched on (kind, model, graph, device, runtime,
# precision, batch, seq, height, width, target); only rows present in
# every file count. KIND (default dippm) picks the kind's rows; a comma
# list picks one kind per file, in order (KIND=dippm,xgb: the blend of a
# DIPPM run and an XGBoost run on the same folds, as the shipped
# DIPPM + XGBoost files blend them). DEVICE (default: all) keeps the rows
# of one device (e.g. H100-SXM5-80GB). OUT=FILE also writes the
# ensemble's predictions in the same CSV format (kind: the kinds joined
# by "+", predicted and uncalibrated the geometric mean, rel_err against
# it; the other columns the first file's), e.g. for `dlperf host fit`.
#
#   KIND=dippm [DEVICE=name] [OUT=file] scripts/ensemble_mape.sh run1.csv run2.csv [run3.csv ...]
#
# The ensembles that `--members N` trains average the networks the same
# way (in log space); this estimates their error without training them.
set -eu
[ $# -ge 2 ] || { echo "usage: [KIND=k|k1,k2,..] [DEVICE=d] [OUT=file] $0 PRED.csv PRED.csv [...]" >&2; exit 2; }
case "${KIND:-dippm}" in
*,*) nk=$(echo "$KIND" | tr ',' '\n' | wc -l)
     [ "$nk" -eq $# ] ||
        { echo "ensemble_mape: KIND=$KIND names $nk kinds for $# files" >&2; exit 2; } ;;
esac
printf "%-28s %-7s %6s %10s" target runtime rows ensemble
i=1
while [ $i -le $# ]; do printf "   file %d" $i; i=$((i + 1)); done
printf "\n"
awk -F, -v kinds="${KIND:-dippm}" -v dev="${DEVICE:-}" -v nf="$#" \
    -v out="${OUT:-}" '
BEGIN {
    nk = split(kinds, kind, ",")
    ens_kind = kinds
    gsub(",", "+", ens_kind)
}
FNR == 1 {
    file++
    for (i = 1; i <= NF; i++) col[$i] = i
    if (file == 1) {   # where the written predictions change
        header = $0
        c1["kind"] = col["kind"]; c1["predicted"] = col["predicted"]
        c1["rel_err"] = col["rel_err"]
        c1["uncalibrated"] = ("uncalibrated" in col) ? col["uncalibrated"] : 0
    }
    next
}
$col["kind"] == kind[nk > 1 ? file : 1] && (dev == "" || $col["device"] == dev) {
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
    if (file == 1) line[key] = $0
}
END {
    if (out != "") print header > out
    for (k in n) {
        if (n[k] != nf) continue
        g = grp[k]
        cnt[g]++
        e = exp(logsum[k] / nf) / act[k] - 1
        if (out != "") {
            nfl = split(line[k], fl, ",")
            gm = sprintf("%.9g", exp(logsum[k] / nf))
            fl[c1["kind"]] = ens_kind
            fl[c1["predicted"]] = gm
            fl[c1["rel_err"]] = sprintf("%.9g", e)
            if (c1["uncalibrated"]) fl[c1["uncalibrated"]] = gm
            s = fl[1]
            for (i = 2; i <= nfl; i++) s = s "," fl[i]
            print s > out
        }
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
