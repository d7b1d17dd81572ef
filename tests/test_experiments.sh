#!/bin/sh
# tests/test_experiments.sh: the drivers that measure and plan the headline,
# at sizes that take seconds, checked for what their output promises.
#
# bptt compare is reached through tests' stand-in (fake, written below): it
# runs the real bptt and, for the rules it is given, rewrites fields of
# compare's records (a plan's interval, its gradients_identical), the
# OpenBLAS kernels its meta line records, or leaves a field out, so that
# the drivers' decisions are tested on any machine and at any speed.
# 1. experiments/fig3-headline (three rounds, t = 50, H = 32) through the
#    real bptt: the CSV is whole (its two comment lines, the second
#    recording the threads and bptt's OpenBLAS kernels, the header, one row
#    per plan in the sweep's order, no temporary file left), full BPTT is
#    the reference (its checkpoint fraction 1, its predicted ratio 1),
#    every MSM point's measured checkpoint peak lies within its budget,
#    forward ops per step never rise as the budget grows (optimal plans) and
#    reach 1 at 100%, times are positive, lo <= median <= hi, the coverage is
#    binomial(3, 1/2)'s for [min, max] (0.75), every plan's gradients are
#    bit-identical, and the predicted ratios lie on one line through
#    (1, 1) in forward ops per step, within the digits printed (the exact
#    formula is test_compare's); the figure exists; stderr holds only the
#    one summary line.
# 1b. a plan whose gradients differ (the stand-in says so): fig3-headline
#    exits 1 naming it and writes nothing; a bptt whose compare lacks a
#    field: exit 2 naming it, nothing written; bad values (a length, the
#    rounds) are refused by bptt compare before any work, nothing written.
# 1c. experiments/headline through the real bptt: the table's four rows
#    show median [interval] with lo <= median <= hi, and the predicted
#    ratio (full BPTT's 1.00x); the footer gives the rounds and coverage,
#    full BPTT against itself, how the prediction is made, MSM at 100%
#    against 1, MSM against its budget, the gradients, and bptt's OpenBLAS
#    kernels.
# 1d. headline on records the stand-in rewrote (every MSM interval set, so
#    nothing measured decides): MSM at 100%'s interval above 1 is said not
#    to hold 1; the two MSM intervals wholly above a smaller budget's are
#    named, and only they; kernels recorded as older than the CPU's are said
#    to slow GEMMs; then a curve that falls within its intervals, and MSM at
#    100% around 1, are said to be so.
# 2. experiments/headline -p (t = 100): one row per strategy; every plan's
#    peak lies within its column's budget; MSM costs no more than ISM, HSM
#    or the paper's MSM recursion, ISM no more than the paper's ISM; a
#    strategy that cannot fit names the slots it needs.  (Shares are printed
#    to 0.01%, so a peak may show up to 0.005% above its budget.)
# 3. experiments/fig7-memory-time (t = 50, H = 16) through the real bptt:
#    its files exist whole (no temporary left), stderr is the one summary
#    line, each strategy's rows in the CSV are its --memory-trace file's,
#    one for one, numbered 0.. in order; its checkpoint bytes never pass its
#    budget and peak at the run's measured peak, its forward ops end at the
#    run's; Chen, which cannot fit 5% at t = 50, is run at its smallest
#    feasible budget and the CSV says so; full BPTT peaks at its 100%.
#
# Needs BPTT (the binary) and EXPERIMENTS (the drivers' folder), as make
# check sets them; skipped (77) without gnuplot, which draws the figure.
set -eu
: "${SRCDIR:?SRCDIR is not set (run through make check)}"
. "$SRCDIR/tests/figtest.sh"

# ---- the stand-in for bptt -------------------------------------------
# rules (one a line, in $tmp/state/rules): "set STRATEGY BUDGET FIELD VALUE"
# sets that field of that plan's record; "meta CORE SOURCE" records
# OpenBLAS's kernels as CORE from SOURCE, older than the CPU's; "drop FIELD"
# leaves that field out.
mkdir "$tmp/state"
cat > "$tmp/fake" <<EOF
#!/bin/sh
real='$BPTT' state='$tmp/state'
EOF
cat >> "$tmp/fake" <<'EOF'
[ "$1" = compare ] || exec "$real" "$@"
out=$("$real" "$@") || exit
printf '%s\n' "$out" | awk -F, -v OFS=, -v rules="$state/rules" '
    BEGIN { while ((getline l < rules) > 0) { split(l, w, " ")
                if (w[1] == "set") { n++; rs[n] = w[2]; rb[n] = w[3]; rf[n] = w[4]; rv[n] = w[5] }
                if (w[1] == "meta") { core = w[2]; src = w[3] }
                if (w[1] == "drop") drop = w[2] } }
    /^#/ { if (core != "") {
               sub(/"blas_core":"[^"]*"/, "\"blas_core\":\"" core "\"")
               sub(/"blas_core_source":"[^"]*"/, "\"blas_core_source\":\"" src "\"")
               sub(/"blas_core_slow":[0-9]+/, "\"blas_core_slow\":1") }
           print; next }
    !h { for (i = 1; i <= NF; i++) col[$i] = i; h = 1 }
    h++ > 1 { for (k = 1; k <= n; k++)
                  if ($col["strategy"] == rs[k] && $col["memory_given"] == rb[k]) $col[rf[k]] = rv[k] }
    { if (drop in col) { line = ""
          for (i = 1; i <= NF; i++) if (i != col[drop]) line = line (line == "" ? "" : ",") $i
          $0 = line }
      print }'
EOF
chmod +x "$tmp/fake"
rules() { printf '%s\n' "$@" > "$tmp/state/rules"; }
# bptt's own record of its OpenBLAS kernels
core=$("$BPTT" run --cell lstm --length 4 --batch 1 --input 4 --hidden 4 --iters 1 --format csv |
       sed -n '1s/.*"blas_core":"\([^"]*\)".*/\1/p')
[ -n "$core" ] || fail "bptt run records no blas_core"
# stderr of a driver that succeeded: the summary line only, nothing else
quiet() { # $1 stderr file, $2 rounds
    [ "$(wc -l < "$1")" -eq 1 ] && grep -q "^fig3-headline: [0-9]* s, 10 plans x $2 rounds in one process; results in " "$1" ||
        fail "stderr is not the one summary line: $(cat "$1")"
}
# a driver that failed left nothing: $1 folder
nothing() { [ -z "$(ls -A "$1")" ] || fail "a failed fig3-headline left $(ls -A "$1")"; }

# ---- 1. fig3-headline --------------------------------------------------
rules
"$EXPERIMENTS/fig3-headline" -t 50 -H 32 -B 4 -r 3 -b "$tmp/fake" \
    -o "$tmp" 2>"$tmp/stderr" || fail "fig3-headline exited $?: $(cat "$tmp/stderr")"
quiet "$tmp/stderr" 3
csv=$tmp/fig3-headline.csv
[ -s "$tmp/fig3-headline.png" ] || fail "no fig3-headline.png"
[ -s "$tmp/fig3-headline.svg" ] || fail "no fig3-headline.svg"
if ls "$tmp" | grep -q '\.tmp'; then fail "temporary files left: $(ls "$tmp")"; fi
awk -F, -v core="$core" '
    function bad(m) { print "FAIL: fig3-headline.csv line " NR ": " m > "/dev/stderr"; err = 1; exit 1 }
    # half the last decimal place of a number as printed (0.002095: 5e-7)
    function half(x,    m, e, k, f) {
        m = x; e = 0
        if ((k = index(tolower(m), "e")) > 0) { e = substr(m, k + 1) + 0; m = substr(m, 1, k - 1) }
        f = (k = index(m, ".")) > 0 ? length(m) - k : 0
        return 0.5 * 10 ^ (e - f)
    }
    NR == 1 { if ($0 !~ /^# fig3-headline: LSTM t=50 batch=4 input=64 hidden=32, threads=[1-9][0-9]* \(bptt.s default, all cores\), 3 rounds after 1 discarded, .*bptt compare.*; bptt /) bad("first comment: " $0); next }
    NR == 2 { if ($0 !~ "^# measured with: threads=[1-9][0-9]*; blas_core=" core "; blas_core_source=(openblas|bptt|user); blas_core_slow=[01]; cpu_isa=[^;]+; cpu_model=[^;]*; cpu_cores=[1-9][0-9]*; gemm_kernel=[a-z0-9]+$") bad("second comment: " $0); next }
    NR == 3 { if ($0 != "strategy,budget,forward_ops_per_step,checkpoint_peak_bytes,full_checkpoint_bytes,total_tracked_peak_bytes,checkpoint_fraction,total_fraction,seconds_per_iter,seconds_min,time_ratio,time_ratio_lo,time_ratio_hi,coverage,rounds,forward_step_seconds,predicted_ratio,gradients_identical") bad("header: " $0)
              split("full,100% chen,100% msm,1% msm,2% msm,3% msm,5% msm,10% msm,20% msm,50% msm,100%", want, " ")
              next }
    { rows++
      if (NF != 18) bad(NF " fields")
      if ($1 "," $2 != want[rows]) bad("point " $1 " " $2 ", expected " want[rows])
      if ($16 + 0 <= 0) bad("forward step seconds " $16)
      if (!($10 + 0 > 0 && $10 + 0 <= $9 + 0)) bad("seconds: least " $10 ", median " $9)
      if (!($12 + 0 > 0 && $12 + 0 <= $11 + 0 && $11 + 0 <= $13 + 0)) bad("ratio not lo " $12 " <= median " $11 " <= hi " $13)
      if ($14 != "0.750000" || $15 != 3 || $18 != 1) bad("coverage " $14 ", rounds " $15 ", identical " $18 " (want 0.750000, 3, 1)")
      if ($7 != sprintf("%.6f", $4 / $5)) bad("checkpoint_fraction " $7 " is not " $4 "/" $5)
      if (rows == 1) { if ($1 != "full" || $4 != $5 || $3 != "1.0000" || $17 != "1.000000" || $8 != "1.000000") bad("full BPTT: " $0); next }
      # the predictions lie on one line through (1, 1): their slopes agree
      # within what the printed digits allow (fwd/step is exact at t = 50)
      if ($3 + 0 > 1) { k = ($17 - 1) / ($3 - 1); e = half($17) / ($3 - 1)
          if (nk && (k - k0 > e + e0 || k0 - k > e + e0)) bad("predicted_ratio " $17 " at " $3 " forward ops per step is off the line of slope " k0 " (+-" e + e0 ")")
          if (!nk++) { k0 = k; e0 = e } }
      else if ($17 != "1.000000") bad("predicted " $17 " at " $3 " forward ops per step")
      if ($1 == "msm") {
          b = $2; sub(/%$/, "", b)
          if ($4 > $5 * b / 100) bad("checkpoint peak " $4 " above " b "% of " $5)
          if (prev != "" && $3 + 0 > prev + 0) bad("forward ops per step rose to " $3 " from " prev)
          prev = $3; last = $3
      } }
    END { if (err) exit 1
          if (rows != 10) { print "FAIL: fig3-headline.csv has " rows " points, not 10" > "/dev/stderr"; exit 1 }
          if (last != "1.0000") { print "FAIL: MSM at 100% needs " last " forward ops per step" > "/dev/stderr"; exit 1 }
          if (nk < 5) { print "FAIL: only " nk " predictions above 1" > "/dev/stderr"; exit 1 } }
' "$csv" || fail "fig3-headline.csv (above)"

# ---- 1b. what fig3-headline refuses -------------------------------------
rules "set msm 5% gradients_identical 0"
mkdir "$tmp/grad"
if "$EXPERIMENTS/fig3-headline" -t 50 -H 32 -B 2 -r 1 -b "$tmp/fake" -o "$tmp/grad" 2>"$tmp/stderr"; then
    fail "fig3-headline kept a plan whose gradients differ"
fi
grep -q '^fig3-headline: msm at 5%: gradients not bit-identical to full BPTT.s; nothing written$' "$tmp/stderr" ||
    fail "fig3-headline on differing gradients: $(cat "$tmp/stderr")"
nothing "$tmp/grad"
rules "drop predicted_ratio"
mkdir "$tmp/old"
"$EXPERIMENTS/fig3-headline" -t 50 -H 32 -B 2 -r 1 -b "$tmp/fake" -o "$tmp/old" 2>"$tmp/stderr" && rc=0 || rc=$?
[ "$rc" -eq 2 ] || fail "fig3-headline on a bptt without predicted_ratio: exit $rc, not 2"
grep -q 'bptt compare reports no predicted_ratio' "$tmp/stderr" || fail "fig3-headline without predicted_ratio: $(cat "$tmp/stderr")"
nothing "$tmp/old"
rules
for bad in "-t 0" "-r 0" "-r x" "-H -1"; do
    mkdir "$tmp/bad"
    # shellcheck disable=SC2086 # two words: the option and its value
    "$EXPERIMENTS/fig3-headline" $bad -b "$tmp/fake" -o "$tmp/bad" 2>"$tmp/stderr" && rc=0 || rc=$?
    [ "$rc" -eq 2 ] || fail "fig3-headline $bad: exit $rc, not 2"
    [ "$(wc -l < "$tmp/stderr")" -eq 1 ] && grep -q '^bptt compare: ' "$tmp/stderr" ||
        fail "fig3-headline $bad: not bptt compare's one line: $(cat "$tmp/stderr")"
    nothing "$tmp/bad"
    rmdir "$tmp/bad"
done

# ---- 1c. headline ----------------------------------------------------
rules
mkdir "$tmp/table1"
"$EXPERIMENTS/headline" -t 50 -H 32 -B 4 -r 3 -b "$tmp/fake" -o "$tmp/table1" \
    >"$tmp/table" 2>"$tmp/stderr" || fail "headline exited $?: $(cat "$tmp/stderr")"
quiet "$tmp/stderr" 3
awk -v core="$core" '
    function bad(m) { print "FAIL: headline table: " m > "/dev/stderr"; err = 1; exit 1 }
    /^strategy budget .* vs full \[interval\] +predicted$/ { hdr = 1; next }
    hdr && /^(full|chen|msm) / { rows++
        pred = $NF
        if (pred !~ /^[0-9]+\.[0-9][0-9]x$/ || pred + 0 < 1) bad("predicted " pred ": " $0)
        if ($1 == "full" && pred != "1.00x") bad("full row: " $0)
        if (!match($0, /[0-9.]+x \[[0-9.]+-[0-9.]+\]/)) bad("no median [interval]: " $0)
        split(substr($0, RSTART, RLENGTH), w, /x \[|-|\]/)
        if (!(w[2] + 0 <= w[1] + 0 && w[1] + 0 <= w[3] + 0)) bad("not lo <= median <= hi: " $0)
        seen[$1 " " $2] = 1
        next }
    hdr && /^vs full: / { hdr = 0; foot = 1
        if ($0 !~ /^vs full: the median over 3 rounds of the ratio .* in brackets its 75\.0% interval \(distribution-free\); full BPTT.s row is full BPTT against itself, [0-9.]+x \[[0-9.]+-[0-9.]+\]: the noise; [1-9][0-9]* threads\.$/) bad("footer: " $0)
        next }
    foot && /^predicted: the plan.s forward ops at full BPTT.s measured forward step \([0-9.]+ ms, [0-9]+% of its iteration\): 1 \+ \(fwd\/step - 1\) x [0-9.]+\.$/ { p = 1 }
    foot && /^MSM at 100% runs full BPTT.s own plan: [0-9.]+x \[[0-9.]+-[0-9.]+\], its interval (holds 1|does NOT hold 1 .*)\.$/ { same = 1 }
    foot && /^MSM against its budget: (its time falls as the budget grows, within the intervals|NOT falling within the intervals from .*)\.$/ { mono = 1 }
    foot && /^Gradients: every plan.s bit-identical to full BPTT.s in every iteration\.$/ { g = 1 }
    foot && /^OpenBLAS kernels: / { k = 1; if (index($0, "OpenBLAS kernels: " core " (") != 1) bad("kernels not " core ": " $0) }
    /^Figure: / { foot = 0; fig = 1 }
    END { if (err) exit 1
          if (rows != 4 || !seen["full 100%"] || !seen["chen own"] || !seen["msm 5%"] || !seen["msm 10%"] || !k || !p || !same || !mono || !g || !fig) {
              print "FAIL: headline table: " rows " rows, kernels line " k ", predicted line " p ", MSM at 100% line " same ", budget line " mono ", gradients line " g ", figure line " fig > "/dev/stderr"; exit 1 } }
' "$tmp/table" || fail "headline output:
$(cat "$tmp/table")"

# ---- 1d. headline's judgements, on records the stand-in rewrote ----------
# every MSM interval set, so that the judgement depends on nothing measured
msm_rules() { # $1... budget:lo:median:hi
    for x; do
        IFS=: read -r b lo md hi <<EOF
$x
EOF
        printf '%s\n' "set msm $b ratio_lo $lo" "set msm $b ratio_median $md" "set msm $b ratio_hi $hi"
    done
}
{
    msm_rules 1%:2.0:2.1:2.2 2%:1.7:1.8:1.9 3%:1.5:1.55:1.6 5%:1.0:1.05:1.1 10%:1.2:1.3:1.4 \
              20%:1.0:1.02:1.05 50%:0.95:1.0:1.04 100%:1.5:1.6:1.7
    echo "meta Sandybridge openblas"
} > "$tmp/state/rules"
mkdir "$tmp/judge"
"$EXPERIMENTS/headline" -t 50 -H 32 -B 4 -r 1 -b "$tmp/fake" -o "$tmp/judge" \
    >"$tmp/table" 2>"$tmp/stderr" || fail "headline exited $?: $(cat "$tmp/stderr")"
grep -q '^MSM at 100% runs full BPTT.s own plan: 1\.60x \[1\.50-1\.70\], its interval does NOT hold 1 ' "$tmp/table" ||
    fail "headline: MSM at 100% above 1 not said:
$(cat "$tmp/table")"
grep -q -x 'MSM against its budget: NOT falling within the intervals from 5% to 10%, 50% to 100% (an interval lies wholly above one of a smaller budget)\.' "$tmp/table" ||
    fail "headline: the rises from 5% to 10% and from 50% to 100% not named, or others named:
$(cat "$tmp/table")"
grep -q "^OpenBLAS kernels: Sandybridge (OpenBLAS's own choice), older than this CPU's [^:]*: GEMMs run slower" "$tmp/table" ||
    fail "headline: footer does not say the kernels are older than the CPU's:
$(cat "$tmp/table")"
# and a curve that falls within its intervals (10% overlapping 5% from above)
msm_rules 1%:2.0:2.1:2.2 2%:1.7:1.8:1.9 3%:1.5:1.55:1.6 5%:1.0:1.05:1.1 10%:1.05:1.1:1.2 \
          20%:1.0:1.02:1.05 50%:0.95:1.0:1.04 100%:0.97:1.0:1.03 > "$tmp/state/rules"
mkdir "$tmp/falls"
"$EXPERIMENTS/headline" -t 50 -H 32 -B 4 -r 1 -b "$tmp/fake" -o "$tmp/falls" \
    >"$tmp/table" 2>"$tmp/stderr" || fail "headline exited $?: $(cat "$tmp/stderr")"
grep -q -x 'MSM against its budget: its time falls as the budget grows, within the intervals\.' "$tmp/table" &&
    grep -q '^MSM at 100% runs full BPTT.s own plan: 1\.00x \[0\.97-1\.03\], its interval holds 1\.$' "$tmp/table" ||
    fail "headline: a falling curve, MSM at 100% at 1, not said so:
$(cat "$tmp/table")"

