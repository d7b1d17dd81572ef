#!/bin/sh
# tests/test_kernel_ab.sh: experiments/kernel-ab, the kernel against a
# version of itself in one process, at tiny sizes (H = 16 and 40, B = 5,
# 2 rounds: seconds, most of it compiling).  The working tree's header
# against itself: exit 0, nothing on stderr, for each instruction set the
# CPU has four rows per H (gates, dh, wgrad, steps), every one with
# positive rates and "yes" (the same bits); a set the CPU lacks is a
# SKIP line naming it.  Against a copy with a planted fault (the n-path's
# last k skipped): exit 1 and "NO" on the gates rows, so the comparison
# of bits can fail.  Bad input (-H 0, -n x, -g sse, -k a missing file, a
# value with a control byte) is refused with one line on stderr, exit 2,
# nothing on stdout.
#
# Needs EXPERIMENTS, SRCDIR and BUILDDIR, as make check sets them.
set -eu
: "${SRCDIR:?SRCDIR is not set (run through make check)}"
AB_NAME=kernel-ab
. "$SRCDIR/tests/abtest.sh"
header="$SRCDIR/src/train/gemm_kernel.h"

grep -qw avx512f /proc/cpuinfo && has512=1 || has512=0
grep -qw avx2 /proc/cpuinfo && grep -qw fma /proc/cpuinfo && has2=1 || has2=0

rc=0
"$AB" -b "$BUILDDIR" -k "$header" -H 16,40 -B 5 -n 2 >"$tmp/out" 2>"$tmp/err" || rc=$?
[ "$rc" -eq 0 ] || fail "kernel-ab: exit $rc ($(head -c 400 "$tmp/err"))"
[ ! -s "$tmp/err" ] || fail "kernel-ab: stderr: $(head -c 400 "$tmp/err")"
for set in avx512 avx2; do
    if [ $set = avx512 ]; then has=$has512; else has=$has2; fi
    if [ "$has" = 1 ]; then
        n=$(awk -v s=$set '$1 == s && ($2 == 16 || $2 == 40) && $6 > 0 && $7 > 0 && $8 > 0 && $10 == "yes"' \
            "$tmp/out" | wc -l)
        [ "$n" -eq 8 ] || fail "$set: want 8 rows with positive rates and the same bits: $(cat "$tmp/out")"
    else
        grep -q "^SKIP: the $set kernel" "$tmp/out" || fail "$set: the CPU lacks it, but no SKIP line: $(cat "$tmp/out")"
        echo "SKIP: kernel-ab on the $set kernel: this CPU lacks it"
    fi
done

# a planted fault: the last k of every n-path tile left out
sed 's/const size_t kend = (kn);/const size_t kend = (kn) - 1;/' \
    "$header" >"$tmp/bad.h"
! cmp -s "$header" "$tmp/bad.h" || fail "the planted fault did not apply to $header"
if [ "$has512$has2" != 00 ]; then
    rc=0
    "$AB" -b "$BUILDDIR" -k "$tmp/bad.h" -H 16 -B 5 -n 1 >"$tmp/bad" 2>"$tmp/err" || rc=$?
    [ "$rc" -eq 1 ] || fail "a planted fault: exit $rc, want 1 ($(head -c 300 "$tmp/err"))"
    awk '$4 == "gates" && $10 != "NO" { bad = 1 } END { exit bad }' "$tmp/bad" ||
        fail "a planted fault: a gates row says the same bits: $(cat "$tmp/bad")"
fi

# bad input: one line, exit 2, nothing on stdout (abtest.sh)
bad -k "$header" -H 0
bad -k "$header" -n x
bad -k "$header" -g sse
bad -k "$tmp/missing.h"
bad -k "$header" -H "$(printf '16\033[2J')"
grep -q 'x1b' "$tmp/e" || fail "a control byte is not shown escaped: $(cat "$tmp/e")"
bad -k "$header" -B 5 extra
exit 0
