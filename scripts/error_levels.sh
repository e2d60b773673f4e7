#!/bin/sh
# error_levels.sh — where a predictor's held-out error sits: the MAPE of
# one `dlperf eval --predictions` file as predicted, and again after the
# mean log error (ln predicted / actual) of each group of rows is taken
# out, for groups from coarse (the model) to fine (one configuration on
# both cards). What stays after a grouping is error that no per-group
# offset could remove; what goes is the groups' levels. Only rows whose
# group has two or more rows count in a grouped line (its n).
# With GROUP (columns of the file, comma-separated) it prints instead the
# rows, mean log error and MAPE of each group, e.g. GROUP=family,seq.
#
#   [KIND=dippm] [TARGET=inference.latency_ms] [RUNTIME=graph]
#   [DEVICE=name] [PRECISION=fp16,bf16] [GROUP=col,...]
#   scripts/error_levels.sh PRED.csv
#
# KIND (default dippm) and TARGET (default inference.latency_ms) pick the
# rows; RUNTIME, DEVICE and PRECISION (a comma list) filter them further.
set -eu
[ $# -eq 1 ] || { echo "usage: [KIND=k] [TARGET=t] [RUNTIME=r] [DEVICE=d] [PRECISION=p,..] [GROUP=c,..] $0 PRED.csv" >&2; exit 2; }
[ -r "$1" ] || { echo "error_levels: cannot read $1" >&2; exit 2; }
awk -F, -v kind="${KIND:-dippm}" -v target="${TARGET:-inference.latency_ms}" \
    -v rt="${RUNTIME:-}" -v dev="${DEVICE:-}" -v prec="${PRECISION:-}" \
    -v group="${GROUP:-}" '
function absval(e) { return (e < 0 ? -e : e) }
NR == 1 {
    for (i = 1; i <= NF; i++) col[$i] = i
    split("kind,target,actual,predicted,model,graph,device,runtime,precision,batch,seq,height,width", need, ",")
    for (k in need) if (!(need[k] in col)) {
        printf "error_levels: no column %s in the file\n", need[k] > "/dev/stderr"
        bad = 1; exit 2
    }
    ng = split(group, gcols, ",")
    for (k = 1; k <= ng; k++) if (!(gcols[k] in col)) {
        printf "error_levels: no column %s in the file (GROUP)\n", gcols[k] > "/dev/stderr"
        bad = 1; exit 2
    }
    np = split(prec, pl, ",")
    for (k = 1; k <= np; k++) pok[pl[k]] = 1
    next
}
$col["kind"] == kind && $col["target"] == target &&
(rt == "" || $col["runtime"] == rt) && (dev == "" || $col["device"] == dev) &&
(np == 0 || ($col["precision"] in pok)) &&
$col["actual"] > 0 && $col["predicted"] > 0 {
    n++
    lr[n] = log($col["predicted"] / $col["actual"])
    all += absval(exp(lr[n]) - 1)
    g = $col["graph"]; r = $col["runtime"]; p = $col["precision"]
    cfg = g SUBSEP r SUBSEP p SUBSEP $col["batch"] SUBSEP $col["seq"] SUBSEP $col["height"] SUBSEP $col["width"]
    key[1, n] = $col["model"]
    key[2, n] = g
    key[3, n] = g SUBSEP r
    key[4, n] = g SUBSEP r SUBSEP p
    key[5, n] = g SUBSEP r SUBSEP $col["device"] SUBSEP p
    key[6, n] = cfg
    if (ng) {
        gk = $col[gcols[1]]
        for (k = 2; k <= ng; k++) gk = gk "," $col[gcols[k]]
        gkey[n] = gk
    }
}
END {
    if (bad) exit 2
    if (n == 0) { print "error_levels: no rows of kind " kind ", target " target > "/dev/stderr"; exit 1 }
    if (ng) {
        for (i = 1; i <= n; i++) {
            gn[gkey[i]]++; gs[gkey[i]] += lr[i]; ga[gkey[i]] += absval(exp(lr[i]) - 1)
        }
        printf "%-40s %6s %14s %8s\n", group, "rows", "mean ln(p/a)", "MAPE"
        for (k in gn) printf "%-40s %6d %14.3f %7.2f%%\n", k, gn[k], gs[k] / gn[k], 100 * ga[k] / gn[k] | "sort"
        close("sort")
        exit 0
    }
    split("model,graph,graph+runtime,graph+runtime+precision,graph+runtime+device+precision,configuration (both cards)", names, ",")
    printf "%-46s %6s %8s\n", "mean log error removed per", "rows", "MAPE"
    printf "%-46s %6d %7.2f%%\n", "(nothing: as predicted)", n, 100 * all / n
    for (l = 1; l <= 6; l++) {
        delete cnt; delete sum
        for (i = 1; i <= n; i++) { cnt[key[l, i]]++; sum[key[l, i]] += lr[i] }
        m = 0; s = 0
        for (i = 1; i <= n; i++) {
            k = key[l, i]
            if (cnt[k] < 2) continue
            m++
            s += absval(exp(lr[i] - sum[k] / cnt[k]) - 1)
        }
        if (m) printf "%-46s %6d %7.2f%%\n", names[l], m, 100 * s / m
        else printf "%-46s %6d %8s\n", names[l], 0, "-"
    }
}' "$1"
