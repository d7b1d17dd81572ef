#!/bin/sh
# tests/test_fig1_fig4.sh: experiments/fig1-cost-memory and experiments/
# fig4-cost-length at small sizes (t = 100), checked for what their figures
# and CSVs promise.
# 1. Figure 1 (alpha 2 and 5): CSV, PNG and SVG exist and are not empty, no
#    temporary folder is left, stderr holds one line (the summary: so
#    gnuplot said nothing); every budget from 1 slot to full BPTT's peak
#    (bptt plan --strategy full) has its row, and memory_pct_of_full (the
#    top axis) is 100 slots / that peak; HSM, ISM and MSM (ours, optimal)
#    never cost more with more memory; MSM costs no more than any other
#    strategy at any budget, nor than Chen's at Chen's own peak, and 1 op
#    per step at full memory.  In the SVG, the six line series of the
#    legend (HSM, ours and the paper's ISM and MSM, the 5% line) have six
#    stroke colours and six dash patterns, and every panel draws each
#    series with its legend entry's colour and dashes.
# 2. Figure 4: the same for files and stderr; forward_ops_per_step is
#    forward_ops / length, the growth column t^(1/m); every strategy does
#    at least one forward op per step, MSM never more than HSM, neither
#    more with a larger budget; the HSM table agrees with the closed form.
#    In the SVG every series has its own stroke colour, and within a
#    budget MSM, HSM and t^(1/m) have different dashes; each series' key
#    sample has its line's colour and dashes.
# 3. A gnuplot that warns (a stand-in on PATH that runs the real one, then
#    prints a warning) makes figure 4 fail, with nothing written; a bad -m
#    is refused in one line (exit 2).
#
# Needs BPTT (the binary, in its build tree) and EXPERIMENTS, as make check
# sets them; skipped (77) without gnuplot.
set -eu
: "${SRCDIR:?SRCDIR is not set (run through make check)}"
. "$SRCDIR/tests/figtest.sh"

# files NAME.{csv,png,svg} in DIR whole, nothing else left there
check_files() { # DIR NAME
    for e in csv png svg; do
        [ -s "$1/$2.$e" ] || fail "$2.$e missing or empty"
    done
    [ "$(head -c 4 "$1/$2.png" | od -An -c | tr -d ' ')" = '211PNG' ] ||
        fail "$2.png is not a PNG"
    grep -q '</svg>' "$1/$2.svg" || fail "$2.svg is not whole"
    [ -z "$(ls -A "$1" | grep -v "^$2\.\(csv\|png\|svg\)\$")" ] ||
        fail "left in $1: $(ls -A "$1")"
}
# stderr of a driver: exactly one line, its summary
check_err() { # FILE PREFIX
    [ "$(wc -l < "$1")" -eq 1 ] || fail "stderr is not one line: $(cat "$1")"
    grep -q "^$2" "$1" || fail "stderr: $(cat "$1")"
}
# the first path of each plot group of a gnuplot SVG: "title|stroke|dashes"
# (an untitled plot's title is its id, gnuplot_plot_<n><letter>)
svg_paths() {
    awk '/<g id="gnuplot_plot_[0-9]+[a-z]*" ><title>/ {
             t = $0; sub(/.*<title>/, "", t); sub(/<\/title>.*/, "", t)
             need = 1; next }
         need && /<path stroke=.*d=/ {
             s = $0; sub(/.*<path stroke=./, "", s); sub(/[^0-9a-z(), ].*/, "", s)
             gsub(/ /, "", s); d = "solid"
             if ($0 ~ /stroke-dasharray=/) {
                 d = $0; sub(/.*stroke-dasharray=./, "", d); sub(/[^0-9.,].*/, "", d) }
             print t "|" s "|" d; need = 0 }' "$1"
}

# ---- 1. figure 1 -------------------------------------------------------------
out="$tmp/f1"
"$EXPERIMENTS/fig1-cost-memory" -b "$BPTT" -o "$out" -t 100 -a "2 5" \
    >"$tmp/f1.out" 2>"$tmp/f1.err" || fail "fig1-cost-memory: exit $? ($(cat "$tmp/f1.err"))"
check_files "$out" fig1-cost-memory
check_err "$tmp/f1.err" "fig1-cost-memory: alpha 2: msm < msm-paper at"
csv="$out/fig1-cost-memory.csv"
grep -qx 'alpha,length,full_peak_slots,memory_slots,memory_pct_of_full,hsm,ism,msm,ism_paper,msm_paper,chen' "$csv" ||
    fail "fig1: CSV header"
for a in 2 5; do
    peak=$("$BPTT" plan --strategy full --length 100 --alpha "$a" --format csv |
        awk -F, 'NR == 2 { print $8 }')
    chen=$("$BPTT" plan --strategy chen --length 100 --alpha "$a" --format csv |
        awk -F, 'NR == 2 { print $5 "," $8 }')
    bad=$(awk -F, -v a="$a" -v peak="$peak" -v chen="$chen" '
        $1 != a { next }
        { n++
          if ($2 != 100) { print "length " $2; err = 1; exit }
          if ($3 != peak) { print "full_peak_slots " $3 " not " peak; err = 1; exit }
          if ($4 != n) { print "row " n " has budget " $4; err = 1; exit }
          p = 100 * $4 / peak; d = $5 - p
          if (d > 1e-5 || d < -1e-5) { print "m = " $4 ": " $5 "% not " p; err = 1; exit }
          for (c = 6; c <= 10; c++)
              if ($8 > $c) { print "m = " $4 ": msm " $8 " above column " c " (" $c ")"; err = 1; exit }
          if (n > 1) for (c = 6; c <= 8; c++)
              if ($c > prev[c]) { print "m = " $4 ": column " c " rose, " prev[c] " to " $c; err = 1; exit }
          for (c = 6; c <= 8; c++) prev[c] = $c
          last = $8
          if ($11 != "") { split(chen, ch, ","); cr++
              if ($4 != ch[2] || $11 != ch[1] || $8 > $11) { print "chen row " $0; err = 1; exit } } }
        END { if (err) exit
              if (n != peak) print n " rows, not " peak
              else if (last != 100) print "msm at full memory: " last " forward ops"
              else if (cr != 1) print cr " chen rows" }' "$csv")
    [ -z "$bad" ] || fail "fig1 alpha $a: $bad"
done
svg_paths "$out/fig1-cost-memory.svg" >"$tmp/f1.paths"
names="HSM|ISM (ours, optimal)|MSM (ours, optimal)|ISM, paper's recursion|MSM, paper's recursion"
legend=$(awk -F'|' -v names="$names|5% of full BPTT's peak" '
    BEGIN { n = split(names, nm, "|"); for (i = 1; i <= n; i++) want[nm[i]] = 1 }
    ($1 in want) && !($1 in seen) { seen[$1] = 1; print }' "$tmp/f1.paths")
[ "$(echo "$legend" | wc -l)" -eq 6 ] || fail "fig1 legend: $legend"
[ "$(echo "$legend" | cut -d'|' -f2 | sort -u | wc -l)" -eq 6 ] ||
    fail "fig1: legend colours not distinct: $legend"
[ "$(echo "$legend" | cut -d'|' -f3 | sort -u | wc -l)" -eq 6 ] ||
    fail "fig1: legend dash patterns not distinct: $legend"
# panel k's top row: untitled plots 1-5 (letters b, d: the second plot of
# the multiplot and every second one after it) in the order of names
bad=$(awk -F'|' -v names="$names" '
    BEGIN { split(names, nm, "|") }
    FNR == NR { leg[$1] = $2 "|" $3; next }
    $1 ~ /^gnuplot_plot_[1-5][bd]$/ {
        k = substr($1, 14, 1) + 0; seen++
        if ($2 "|" $3 != leg[nm[k]]) print $1 " drawn " $2 " " $3 ", legend " nm[k] " " leg[nm[k]] }
    END { if (seen != 10) print seen " panel lines, not 10" }' - "$tmp/f1.paths" <<EOF
$legend
EOF
)
[ -z "$bad" ] || fail "fig1 SVG: $bad"

# ---- 2. figure 4 -------------------------------------------------------------
out="$tmp/f4"
"$EXPERIMENTS/fig4-cost-length" -b "$BPTT" -o "$out" -t 100 \
    >"$tmp/f4.out" 2>"$tmp/f4.err" || fail "fig4-cost-length: exit $? ($(cat "$tmp/f4.err"))"
check_files "$out" fig4-cost-length
check_err "$tmp/f4.err" "fig4-cost-length: msm / t^(1+1/m) for 100 <= t <= 100:"
csv="$out/fig4-cost-length.csv"
grep -q 'the hsm table differs from the binomial closed form at 0 of' "$csv" ||
    fail "fig4: the HSM table against the closed form: $(grep '^# made' "$csv")"
bad=$(awk -F, '
    $1 !~ /^(msm|hsm)$/ { next }
    { n++; r = $5 / $4; d = $6 - r
      if (d > 1e-5 || d < -1e-5) { print "per step " $6 " not " r; err = 1; exit }
      g = exp(log($4) / $3); d = ($7 - g) / g
      if (d > 1e-5 || d < -1e-5) { print "growth " $7 " not " g; err = 1; exit }
      if ($5 < $4) { print $1 " m = " $3 " t = " $4 ": " $5 " forward ops"; err = 1; exit }
      c[$1, $3, $4] = $5; ms[$3] = 1; ts[$4] = 1 }
    END {
      if (err) exit
      if (n == 0) { print "no rows"; err = 1; exit }
      for (t in ts) {
          prev = ""
          for (m = 1; m <= 1000; m++) if (m in ms) {
              if (c["msm", m, t] > c["hsm", m, t]) print "t = " t " m = " m ": msm above hsm"
              if (prev != "" && (c["msm", m, t] > c["msm", prev, t] || c["hsm", m, t] > c["hsm", prev, t]))
                  print "t = " t ": cost rose from m = " prev " to " m
              prev = m } } }' "$csv" | head -3)
[ -z "$bad" ] || fail "fig4: $bad"
svg_paths "$out/fig4-cost-length.svg" >"$tmp/f4.paths"
bad=$(awk -F'|' '
    { if ($1 in first) { if (first[$1] != $2 "|" $3) print $1 ": key " first[$1] ", line " $2 "|" $3 }
      else { first[$1] = $2 "|" $3; n++
             if ($2 in colour) print $1 " and " colour[$2] " share " $2
             colour[$2] = $1
             if ($1 ~ /m = [0-9]+$/) { m = $1; sub(/.*m = /, "", m)
                 if ((m, $3) in dash) print $1 " and " dash[m, $3] " share dashes " $3
                 dash[m, $3] = $1 } } }
    END { if (n != 10) print n " series, not 10" }' "$tmp/f4.paths")
[ -z "$bad" ] || fail "fig4 SVG: $bad"

# ---- 3. a warning from gnuplot, a bad budget ------------------------------------
mkdir "$tmp/bin"
real=$(command -v gnuplot)
printf '#!/bin/sh\n"%s" "$@" || exit\necho "gnuplot: warning: a stand-in warns" >&2\n' "$real" >"$tmp/bin/gnuplot"
chmod +x "$tmp/bin/gnuplot"
rc=0
PATH="$tmp/bin:$PATH" "$EXPERIMENTS/fig4-cost-length" -b "$BPTT" -o "$tmp/warn" -t 100 \
    >/dev/null 2>"$tmp/warn.err" || rc=$?
[ "$rc" -ne 0 ] || fail "fig4: a gnuplot warning was not a failure"
grep -q 'a stand-in warns' "$tmp/warn.err" || fail "fig4: the warning was not shown: $(cat "$tmp/warn.err")"
[ -z "$(ls -A "$tmp/warn")" ] || fail "fig4 wrote files although gnuplot warned: $(ls -A "$tmp/warn")"
rc=0
"$EXPERIMENTS/fig4-cost-length" -b "$BPTT" -o "$tmp/bad" -m 5,x >/dev/null 2>"$tmp/bad.err" || rc=$?
[ "$rc" -eq 2 ] && [ "$(wc -l < "$tmp/bad.err")" -eq 1 ] ||
    fail "fig4 -m 5,x: exit $rc, $(cat "$tmp/bad.err")"
echo "PASS: figures 1 and 4 at t = 100: files whole, one stderr line each, CSVs consistent, series distinct and matching their keys; a gnuplot warning and a bad -m refused"
