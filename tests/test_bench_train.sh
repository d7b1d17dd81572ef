#!/bin/sh
# tests/test_bench_train.sh: experiments/bench-train against oneDNN at a
# tiny size (T = 20, B = 4, X = 8, H = 16, one thread, 8 iterations; a few
# seconds, mostly its 2048^3 SGEMM peaks): it exits 0 with nothing on
# stderr and one row per cell, lstm and rnn; our column's times, rate and
# checkpoint bytes are positive, and the peak is at least OpenBLAS's SGEMM
# rate.  Built with oneDNN (BENCH_DNNL=yes): its
# times, min <= median <= max, the side-by-side ratio, rate and workspace
# are finite and positive, its hidden states and gradients agree with ours
# (hdiff, gdiff < 1e-4), nothing is flagged NONFINITE, and the header names
# what oneDNN ran.  Without it (BENCH_DNNL=no): the header says "n/a (no
# libdnnl-dev)" and every oneDNN column n/a.  Bad options (-n 0, -m bogus,
# -T x) are refused with one line on stderr, exit 2 and nothing on stdout.
#
# Needs BENCH (the bench-train binary) and BENCH_DNNL, as make check sets
# them.
set -eu
: "${BENCH:?BENCH is not set (run through make check)}"
: "${BENCH_DNNL:?BENCH_DNNL is not set (run through make check)}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

rc=0
"$BENCH" -m onednn -T 20 -B 4 -X 8 -H 16 -j 1 -n 8 -c lstm,rnn \
    >"$tmp/out" 2>"$tmp/err" || rc=$?
[ "$rc" -eq 0 ] || fail "bench-train: exit $rc ($(head -c 300 "$tmp/err"))"
[ ! -s "$tmp/err" ] || fail "bench-train: stderr: $(head -c 300 "$tmp/err")"
grep -v '^#' "$tmp/out" | sed 1d >"$tmp/rows"
[ "$(wc -l <"$tmp/rows")" -eq 2 ] || fail "want 2 rows: $(cat "$tmp/out")"
[ "$(cut -d' ' -f1 "$tmp/rows" | tr '\n' ' ')" = "lstm rnn " ] ||
    fail "rows are not lstm, rnn: $(cat "$tmp/rows")"

# ours: columns 8-10 times, 15 OpenBLAS's SGEMM rate, 16 the peak (at
# least that), 17 rate, 23 checkpoint MiB
awk '{ if (!($8 > 0 && $9 > 0 && $10 > 0 && $9 <= $8 && $8 <= $10 &&
             $15 > 0 && $16 >= $15 && $17 > 0 && $23 > 0)) { print; exit 1 } }' \
    "$tmp/rows" || fail "bptt's column: $(cat "$tmp/rows")"

case $BENCH_DNNL in
yes)
    # 11-13 times, 14 ratio, 19 rate, 24 workspace, 25-27 differences
    awk '{ if (!($11 > 0 && $12 > 0 && $13 > 0 && $12 <= $11 &&
                 $11 <= $13 && $14 > 0 && $19 > 0 && $24 > 0 &&
                 $25 < 1e-4 && $26 < 1e-4 && $27 < 1e-4) ||
               $0 ~ /NONFINITE|n\/a|nan|inf/) { print; exit 1 } }' \
        "$tmp/rows" || fail "oneDNN's column: $(cat "$tmp/rows")"
    grep -q '^# oneDNN lstm: forward ' "$tmp/out" ||
        fail "no line on what oneDNN ran: $(cat "$tmp/out")"
    ;;
no)
    grep -qx '# oneDNN: n/a (no libdnnl-dev)' "$tmp/out" ||
        fail "no n/a line: $(cat "$tmp/out")"
    awk '{ if ($11 != "n/a" || $14 != "n/a" || $19 != "n/a" ||
               $24 != "n/a" || $26 != "n/a") { print; exit 1 } }' \
        "$tmp/rows" || fail "oneDNN's columns are not n/a: $(cat "$tmp/rows")"
    ;;
*) fail "BENCH_DNNL is '$BENCH_DNNL' (yes or no)" ;;
esac

# -m kernels: one row per path this CPU has, cblas first; the times
# ordered, the ratio to cblas 1 on cblas's row, the two kernels' gradients
# the same bits (gap 0) and cblas's within rounding; 2 layers, B = 5
"$BENCH" -m kernels -L 2 -T 12 -B 5 -X 3 -H 13 -j 1 -n 3 -c gru \
    >"$tmp/out" 2>"$tmp/err" || fail "bench-train -m kernels: $(cat "$tmp/err")"
[ ! -s "$tmp/err" ] || fail "bench-train -m kernels: stderr: $(cat "$tmp/err")"
grep -v '^#' "$tmp/out" | sed 1d >"$tmp/rows"
want=cblas
grep -qw avx2 /proc/cpuinfo && grep -qw fma /proc/cpuinfo && want="$want avx2"
grep -qw avx512f /proc/cpuinfo && want="$want avx512"
[ "$(cut -c1- "$tmp/rows" | awk '{ printf "%s%s", n++ ? " " : "", $6 }')" = "$want" ] ||
    fail "bench-train -m kernels: paths are not $want: $(cat "$tmp/rows")"
awk '{ if (!($1 == "gru" && $2 == 2 && $3 == 5 && $4 == 13 &&
             $8 <= $7 && $7 <= $9 && $10 > 0 && $12 > 0 &&
             ($6 == "cblas" ? $10 == 1 && $15 < 1e-3 : $15 == 0))) {
           print; exit 1 } }' "$tmp/rows" ||
    fail "bench-train -m kernels: $(cat "$tmp/rows")"
for p in avx2 avx512; do
    case " $want " in *" $p "*) ;; *) echo "SKIP: bench-train -m kernels on $p: this CPU lacks it" ;; esac
done

for bad in "-n 0" "-m bogus" "-T x" "-g bogus" "-L 2 -m onednn" "-L 0"; do
    rc=0
    # shellcheck disable=SC2086 # the option and its value, split on purpose
    "$BENCH" $bad -c lstm >"$tmp/out" 2>"$tmp/err" || rc=$?
    [ "$rc" -eq 2 ] || fail "bench-train $bad: exit $rc, want 2"
    [ ! -s "$tmp/out" ] || fail "bench-train $bad: stdout: $(cat "$tmp/out")"
    [ "$(wc -l <"$tmp/err")" -eq 1 ] ||
        fail "bench-train $bad: want one line on stderr: $(cat "$tmp/err")"
done
echo "bench-train against oneDNN (BENCH_DNNL=$BENCH_DNNL): ok"
