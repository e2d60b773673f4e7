#!/bin/sh
# paired_mape.sh — two `dlperf eval --predictions` files of the same
# configurations (e.g. `scripts/prospective.sh` on one batch with two
# models folders: the session start's files and retrained ones) compared
# row by row: per target and runtime, the rows in both, each file's MAPE,
# and the mean paired difference of |error| (second minus first) with
# its standard error, sd / sqrt(n). A difference within about two
# standard errors is within what these rows can tell apart. Rows are
# matched on (model, graph, device, runtime, precision, batch, seq,
# height, width, target) among the rows of kind KIND (default dippm; a
# comma list of two picks one kind per file).
#
#   KIND=dippm+xgb scripts/paired_mape.sh OLD/training.csv NEW/training.csv
#
# Exit: 0 done, 2 usage.
set -eu
[ $# -eq 2 ] || { echo "usage: [KIND=k|k1,k2] $0 FIRST.csv SECOND.csv" >&2; exit 2; }
printf "%-28s %-6s %6s %9s %9s %18s\n" target runtime rows first second "second-first (se)"
awk -F, -v kinds="${KIND:-dippm}" '
BEGIN {
    nk = split(kinds, kind, ",")
    nc = split("model,graph,device,runtime,precision,batch,seq,height,width,target", kc, ",")
}
FNR == 1 {
    file++
    for (i = 1; i <= NF; i++) col[$i] = i
    next
}
$col["kind"] == kind[nk > 1 ? file : 1] {
    key = $col[kc[1]]
    for (i = 2; i <= nc; i++) key = key SUBSEP $col[kc[i]]
    y = $col["actual"] + 0; p = $col["predicted"] + 0
    if (y <= 0 || p <= 0) next
    e = p / y - 1
    err[key, file] = e < 0 ? -e : e
    grp[key] = $col["target"] " " $col["runtime"]
}
END {
    for (k in grp) {
        if (!((k, 1) in err) || !((k, 2) in err)) continue
        g = grp[k]
        d = err[k, 2] - err[k, 1]
        n[g]++; a[g] += err[k, 1]; b[g] += err[k, 2]; s[g] += d; ss[g] += d * d
    }
    for (g in n) {
        split(g, t, " ")
        m = s[g] / n[g]
        v = n[g] > 1 ? (ss[g] - n[g] * m * m) / (n[g] - 1) : 0
        se = v > 0 ? sqrt(v / n[g]) : 0
        printf "%-28s %-6s %6d %8.2f%% %8.2f%% %+8.2f (%.2f)\n", t[1], t[2],
               n[g], 100 * a[g] / n[g], 100 * b[g] / n[g], 100 * m, 100 * se
    }
}' "$@" | sort
