#!/bin/sh
# tests/test_experiments.sh: the drivers that measure and plan the headline,
# at sizes that take seconds, checked for what their output promises.
#
# 1. experiments/fig3-headline (two rounds, t = 50): the CSV is whole (its
#    two comment lines, the header, one row per point in sweep order, no
#    temporary file left), full BPTT is the reference (ratio 1), every MSM
#    point's measured checkpoint peak lies within its budget, forward ops
#    per step never rise as the budget grows (optimal plans) and reach 1 at
#    100%, times and ratios are positive; the figure exists.
# 1b. fig3-headline -s -1 (rerun every run, as if the hypervisor had taken
#    CPU from each): three tries of every run, and the CSV says so.
# 2. experiments/headline -p (t = 100): one row per strategy; every plan's
#    peak lies within its column's budget; MSM costs no more than ISM, HSM
#    or the paper's MSM recursion, ISM no more than the paper's ISM; a
#    strategy that cannot fit names the slots it needs.  (Shares are printed
#    to 0.01%, so a peak may show up to 0.005% above its budget.)
#
# Needs BPTT (the binary) and EXPERIMENTS (the drivers' folder), as make
# check sets them; skipped (77) without gnuplot, which draws the figure.
set -eu
: "${BPTT:?BPTT is not set (run through make check)}"
: "${EXPERIMENTS:?EXPERIMENTS is not set (run through make check)}"
if ! command -v gnuplot >/dev/null 2>&1; then
    echo "SKIP: gnuplot is not installed (scripts/setup installs it)"
    exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# ---- 1. fig3-headline --------------------------------------------------
"$EXPERIMENTS/fig3-headline" -t 50 -H 16 -B 4 -i 1 -r 2 -b "$BPTT" \
    -o "$tmp" 2>"$tmp/stderr" || fail "fig3-headline exited $?: $(cat "$tmp/stderr")"
csv=$tmp/fig3-headline.csv
[ -s "$tmp/fig3-headline.png" ] || fail "no fig3-headline.png"
[ -s "$tmp/fig3-headline.svg" ] || fail "no fig3-headline.svg"
if ls "$tmp" | grep -q '\.tmp'; then fail "temporary files left: $(ls "$tmp")"; fi
awk -F, '
    function bad(m) { print "FAIL: fig3-headline.csv line " NR ": " m > "/dev/stderr"; err = 1; exit 1 }
    NR == 1 { if ($0 !~ /^# fig3-headline: LSTM t=50 batch=4 input=64 hidden=16, .*2 rounds/) bad("first comment: " $0); next }
    NR == 2 { n = split($0, w, " ")
              if ($0 !~ /^# full BPTT s\/iter, round by round/ || w[n] + 0 <= 0 || w[n - 2] + 0 <= 0) bad("second comment: " $0)
              next }
    NR == 3 { if ($0 != "strategy,budget,forward_ops_per_step,checkpoint_peak_bytes,full_checkpoint_bytes,total_tracked_peak_bytes,rss_peak_bytes,seconds_per_iter,checkpoint_fraction,total_fraction,time_ratio,steal_seconds") bad("header: " $0)
              split("full,100% chen,100% msm,1% msm,2% msm,3% msm,5% msm,7% msm,10% msm,15% msm,20% msm,30% msm,50% msm,70% msm,100%", want, " ")
              next }
    { rows++
      if (NF != 12) bad(NF " fields")
      if ($1 "," $2 != want[rows]) bad("point " $1 " " $2 ", expected " want[rows])
      if ($8 + 0 <= 0 || $11 + 0 <= 0 || $12 + 0 < 0) bad("time " $8 ", ratio " $11 ", steal " $12)
      if ($9 != sprintf("%.6f", $4 / $5)) bad("checkpoint_fraction " $9 " is not " $4 "/" $5)
      if ($1 == "full" && ($11 != "1.000000" || $3 != "1.0000" || $4 != $5)) bad("full BPTT: ratio " $11 ", fwd " $3)
      if ($1 == "msm") {
          b = $2; sub(/%$/, "", b)
          if ($4 > $5 * b / 100) bad("checkpoint peak " $4 " above " b "% of " $5)
          if (prev != "" && $3 + 0 > prev + 0) bad("forward ops per step rose to " $3 " from " prev)
          prev = $3; last = $3
      } }
    END { if (err) exit 1
          if (rows != 14) { print "FAIL: fig3-headline.csv has " rows " points, not 14" > "/dev/stderr"; exit 1 }
          if (last != "1.0000") { print "FAIL: MSM at 100% needs " last " forward ops per step" > "/dev/stderr"; exit 1 } }
' "$csv" || fail "fig3-headline.csv (above)"

# ---- 1b. reruns of disturbed runs ---------------------------------------
printf '#!/bin/sh\n[ "$1" = run ] && echo run >> "%s"\nexec "%s" "$@"\n' \
    "$tmp/calls" "$BPTT" > "$tmp/bptt-counted"
chmod +x "$tmp/bptt-counted"
mkdir "$tmp/rerun"
"$EXPERIMENTS/fig3-headline" -t 50 -H 8 -B 2 -i 1 -r 1 -s -1 \
    -b "$tmp/bptt-counted" -o "$tmp/rerun" 2>"$tmp/stderr" ||
    fail "fig3-headline -s -1 exited $?: $(cat "$tmp/stderr")"
calls=$(wc -l < "$tmp/calls")
[ "$calls" -eq 45 ] || fail "fig3-headline -s -1 ran bptt run $calls times, not 3 x 15"
head -n 1 "$tmp/rerun/fig3-headline.csv" | grep -q '; 30 reruns of runs' ||
    fail "fig3-headline -s -1 does not count its 30 reruns: $(head -n 1 "$tmp/rerun/fig3-headline.csv")"
[ "$(grep -c '^msm,' "$tmp/rerun/fig3-headline.csv")" -eq 12 ] ||
    fail "fig3-headline -s -1: not 12 MSM points"
for bad in x 0.5.1 1-2 ''; do
    if "$EXPERIMENTS/fig3-headline" -s "$bad" -b "$BPTT" -o "$tmp/rerun" 2>/dev/null; then
        fail "fig3-headline -s '$bad' was accepted"
    fi
done

# ---- 2. headline -p ----------------------------------------------------
"$EXPERIMENTS/headline" -p -t 100 -b "$BPTT" >"$tmp/plan" 2>"$tmp/stderr" ||
    fail "headline -p exited $?: $(cat "$tmp/stderr")"
awk '
    function bad(m) { print "FAIL: headline -p: " m > "/dev/stderr"; err = 1; exit 1 }
    /^Planned: t = 100, alpha = 4; full BPTT stores / { full = $11 }
    /^strategy / { for (i = 1; i <= NF; i++) if ($i ~ /^\([0-9]+\)$/) { c++; gsub(/[()]/, "", $i); cap[c] = $i } next }
    /^(full|chen|hsm|ism|msm|ism-paper|msm-paper) / {
        s = $1; n = 0; line = substr($0, 12)
        for (c = 1; c <= 3; c++) {
            cell = substr(line, 1 + 23 * (c - 1), 22)
            if (cell ~ /needs [0-9]+ slots/) { split(cell, w, " "); need[s, c] = w[2]; cost[s, c] = ""
                if (w[2] + 0 <= cap[c] + 0) bad(s " needs " w[2] " slots but budget " cap[c] " was refused") ; continue }
            if (split(cell, w, " ") != 3 || w[2] != "/") bad(s ": cell \"" cell "\"")
            cost[s, c] = w[1]; pct = w[3]; sub(/%$/, "", pct)
            if (pct / 100 > cap[c] / full + 0.00005) bad(s " peaks at " pct "% over budget " cap[c] " of " full)
            if (w[1] + 0 < 1) bad(s ": " w[1] " forward ops per step")
        }
        seen[s] = 1; next }
    END { if (err) exit 1
          if (full + 0 <= 0 || length(cap) != 3) { print "FAIL: headline -p: no header" > "/dev/stderr"; exit 1 }
          split("full chen hsm ism msm ism-paper msm-paper", all, " ")
          for (i = 1; i <= 7; i++) if (!seen[all[i]]) { print "FAIL: headline -p: no row for " all[i] > "/dev/stderr"; exit 1 }
          for (c = 1; c <= 3; c++) {
              if (cost["msm", c] == "") { print "FAIL: MSM cannot fit budget " cap[c] > "/dev/stderr"; exit 1 }
              split("ism hsm msm-paper", o, " ")
              for (i = 1; i <= 3; i++) if (cost[o[i], c] != "" && cost["msm", c] + 0 > cost[o[i], c] + 0) {
                  print "FAIL: MSM " cost["msm", c] " above " o[i] " " cost[o[i], c] " at budget " cap[c] > "/dev/stderr"; exit 1 }
              if (cost["ism", c] != "" && cost["ism-paper", c] != "" && cost["ism", c] + 0 > cost["ism-paper", c] + 0) {
                  print "FAIL: ISM above the paper ISM at budget " cap[c] > "/dev/stderr"; exit 1 } } }
' "$tmp/plan" || fail "headline -p output:
$(cat "$tmp/plan")"
echo "PASS: fig3-headline (14 points, 2 rounds; reruns), headline -p (7 strategies, 3 budgets)"
