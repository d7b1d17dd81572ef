#!/bin/sh
# tests/test_fig6.sh: experiments/fig6-training at 20 iterations (one
# thread), checked for what its output promises:
# 1. exit 0; the CSV, PNG and SVG are there and nothing else (no temporary
#    file); the CSV has its two comment lines (the second giving both
#    chance levels and MSM 5%'s forward ops per step, above 1: a real
#    recompute plan), its header and 20 rows numbered 1..20, each with the
#    full BPTT and MSM 5% losses and gradient norms equal as written (bit
#    for bit); stderr holds only the two summary lines, the first saying
#    the largest difference is 0; on both tasks the loss of iteration 20
#    lies below iteration 1's, and the first loss lies above the chance
#    level (the network starts knowing nothing).  At 1 iteration too,
#    stderr holds only the two summary lines (gnuplot draws single points
#    without a warning).
# 2. a stand-in bptt whose MSM runs log one loss a little off: the driver
#    fails (exit 1) with one line naming the difference, and writes
#    nothing.
# 3. bad input (-n 0, -n x, -s -1, an unreadable -f, a stray argument):
#    one line on stderr, exit 2, nothing written.
#
# Needs BPTT (the binary) and EXPERIMENTS (the drivers' folder), as make
# check sets them; skipped (77) without gnuplot, which draws the figure.
set -eu
: "${SRCDIR:?SRCDIR is not set (run through make check)}"
. "$SRCDIR/tests/figtest.sh"
drv=$EXPERIMENTS/fig6-training

# ---- 1. a whole run ------------------------------------------------------
mkdir "$tmp/out"
"$drv" -n 20 -j 1 -b "$BPTT" -o "$tmp/out" 2>"$tmp/err" ||
    fail "fig6-training exited $?: $(cat "$tmp/err")"
[ "$(ls "$tmp/out" | tr '\n' ' ')" = "fig6-training.csv fig6-training.png fig6-training.svg " ] ||
    fail "output folder holds: $(ls "$tmp/out" | tr '\n' ' ')"
for f in png svg; do
    [ -s "$tmp/out/fig6-training.$f" ] || fail "fig6-training.$f is empty"
done
awk -F, '
    function bad(m) { print "FAIL: fig6-training.csv: " m > "/dev/stderr"; err = 1; exit 1 }
    NR == 1 { if ($0 !~ /^# fig6-training: LSTM, Adam, seed 1, 20 iterations, threads 1; adding: t=100 /) bad("line 1: " $0); next }
    NR == 2 { if (!match($0, /^# chance levels \(nats\): adding [0-9.]+, text [0-9.]+; MSM 5% forward ops per step: adding [0-9.]+, text [0-9.]+$/))
                  bad("line 2: " $0)
              n = split($0, w, /[ ,;]+/)
              ca = w[6]; cx = w[8]; fa = w[n - 2]; fx = w[n]
              if (!(ca > 1.9 && ca < 2.1)) bad("adding chance level " ca " (2.00 expected at t = 100)")
              if (!(cx > 0)) bad("text chance level " cx)
              if (!(fa > 1 && fx > 1)) bad("MSM 5% forward ops per step " fa ", " fx " (no recomputation)")
              next }
    NR == 3 { if ($0 != "iteration,adding_full,adding_msm5,text_full,text_msm5,adding_grad_norm_full,adding_grad_norm_msm5,text_grad_norm_full,text_grad_norm_msm5")
                  bad("header: " $0)
              next }
    { rows++
      if (NF != 9 || $1 != rows) bad("row " rows ": " $0)
      for (c = 2; c <= 8; c += 2) if ($c == "" || $c != $(c + 1)) bad("row " rows ": full and MSM differ: " $0)
      if (rows == 1) { a1 = $2; x1 = $4 }
      a = $2; x = $4 }
    END { if (err) exit 1
          if (rows != 20) { print "FAIL: fig6-training.csv: " rows " rows, 20 expected" > "/dev/stderr"; exit 1 }
          if (!(a + 0 < a1 + 0) || !(x + 0 < x1 + 0)) { print "FAIL: fig6-training.csv: loss not falling: adding " a1 " -> " a ", text " x1 " -> " x > "/dev/stderr"; exit 1 }
          if (!(a1 + 0 > ca + 0) || !(x1 + 0 > cx + 0)) { print "FAIL: fig6-training.csv: first loss below chance: adding " a1 ", text " x1 > "/dev/stderr"; exit 1 } }
' "$tmp/out/fig6-training.csv" || exit 1
[ "$(wc -l < "$tmp/err")" -eq 2 ] || fail "stderr is not the two summary lines:
$(cat "$tmp/err")"
grep -q '^fig6-training: loss (nats), iteration 1 -> 20: adding .*; largest difference between full BPTT and MSM 5%: 0 (loss), 0 (gradient norm), over every iteration; MSM 5% forward ops per step: ' "$tmp/err" ||
    fail "no summary line with difference 0: $(cat "$tmp/err")"
grep -q '^fig6-training: [0-9]* s; results in ' "$tmp/err" || fail "no closing line: $(cat "$tmp/err")"

# ---- 1b. one iteration: a figure of single points, drawn without a warning
mkdir "$tmp/one"
"$drv" -n 1 -j 1 -b "$BPTT" -o "$tmp/one" 2>"$tmp/err" ||
    fail "fig6-training -n 1 exited $?: $(cat "$tmp/err")"
[ "$(wc -l < "$tmp/err")" -eq 2 ] && [ -s "$tmp/one/fig6-training.png" ] ||
    fail "fig6-training -n 1: stderr: $(cat "$tmp/err")"

# ---- 2. MSM made to differ ------------------------------------------------
# The stand-in runs the real bptt, then, for an MSM run, changes the last
# digit of the loss of iteration 2 in its trace.
cat > "$tmp/fake" <<EOF
#!/bin/sh
trace= msm= prev=
for a in "\$@"; do
    [ "\$prev" = --trace ] && trace=\$a
    [ "\$prev" = --strategy ] && [ "\$a" = msm ] && msm=1
    prev=\$a
done
"$BPTT" "\$@" || exit \$?
[ -z "\$msm" ] || [ -z "\$trace" ] ||
    { awk -F, -v OFS=, '\$1 == 2 {\$2 = sprintf("%.9g", \$2 + 1e-6)} {print}' "\$trace" > "\$trace.x" && mv "\$trace.x" "\$trace"; }
EOF
chmod +x "$tmp/fake"
mkdir "$tmp/bad"
rc=0
"$drv" -n 3 -j 1 -b "$tmp/fake" -o "$tmp/bad" 2>"$tmp/err" || rc=$?
[ "$rc" -eq 1 ] || fail "MSM differing: exit $rc, 1 expected ($(cat "$tmp/err"))"
[ "$(wc -l < "$tmp/err")" -eq 1 ] && grep -q '^fig6-training: full BPTT and MSM 5% differ: largest loss difference [1-9]' "$tmp/err" ||
    fail "MSM differing: stderr: $(cat "$tmp/err")"
[ -z "$(ls "$tmp/bad")" ] || fail "MSM differing: written: $(ls "$tmp/bad")"

# ---- 3. bad input -----------------------------------------------------------
for args in "-n 0" "-n x" "-s -1" "-f $tmp/none" "-n 3 extra"; do
    rc=0
    # shellcheck disable=SC2086 # the words of args are the options
    "$drv" $args -b "$BPTT" -o "$tmp/bad" 2>"$tmp/err" >/dev/null || rc=$?
    [ "$rc" -eq 2 ] || fail "$args: exit $rc, 2 expected ($(cat "$tmp/err"))"
    [ "$(wc -l < "$tmp/err")" -eq 1 ] || fail "$args: stderr: $(cat "$tmp/err")"
    [ -z "$(ls "$tmp/bad")" ] || fail "$args: written: $(ls "$tmp/bad")"
done
echo "PASS: fig6-training (20 iterations: files, full == MSM 5% bit for bit, loss falling, chance levels, stderr); a differing MSM refused; bad input refused"
