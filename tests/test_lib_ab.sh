#!/bin/sh
# tests/test_lib_ab.sh: experiments/lib-ab, the library against a version
# of itself in one process, at tiny sizes (H = 16, T = 20, B = 5, X = 7,
# 2 rounds: most of the time is compiling).  The source tree against
# itself (-s, as make distcheck has no git): exit 0, nothing on stderr,
# one row per cell and thread count, each with positive times and "yes"
# (the same bits).  Against a copy of src/ and include/ with a planted
# fault (1 added to the first gradient after each iteration): exit 1 and
# "NO" on every row, so that the comparison of bits can fail; with -d exit
# 0, still "NO" (skipped, by name, in a build with sanitizers).  Both
# sides at a revision (-r HEAD -R HEAD, where the sources are in git):
# the header names the revision on both lines, "yes".  Bad input
# (-H 0, -n x, -g sse, -s a missing folder, a value with a control byte,
# an argument left over) is refused with one line on stderr, exit 2,
# nothing on stdout.
#
# Needs EXPERIMENTS, SRCDIR and BUILDDIR, as make check sets them.
set -eu
: "${SRCDIR:?SRCDIR is not set (run through make check)}"
AB_NAME=lib-ab
. "$SRCDIR/tests/abtest.sh"
small="-c lstm,rnn -H 16 -T 20 -B 5 -X 7 -n 2"
[ "$(nproc 2>/dev/null || echo 1)" -ge 2 ] && threads=1,2 rows=4 || threads=1 rows=2

rc=0
# shellcheck disable=SC2086
"$AB" -b "$BUILDDIR" -s "$SRCDIR" $small -j $threads >"$tmp/out" 2>"$tmp/err" || rc=$?
[ "$rc" -eq 0 ] || fail "lib-ab: exit $rc ($(head -c 400 "$tmp/err"))"
[ ! -s "$tmp/err" ] || fail "lib-ab: stderr: $(head -c 400 "$tmp/err")"
n=$(awk '($1 == "lstm" || $1 == "rnn") && $2 == 16 && $4 > 0 && $5 > 0 && $6 > 0 && $11 == "yes"' \
    "$tmp/out" | wc -l)
[ "$n" -eq "$rows" ] || fail "want $rows rows with positive times and the same bits: $(cat "$tmp/out")"
[ "$(grep -cv '^#' "$tmp/out")" -eq $((rows + 1)) ] || fail "rows besides the points: $(cat "$tmp/out")"

# a planted fault: the first gradient changed after every iteration.  In a
# build with sanitizers each run of lib-ab compiles gemm.c with them for
# a minute: there the run above is the one that checks lib-ab's own code
# under them, and this part is left to the plain build.
if [ "${BPTT_SANITIZERS:-no}" = yes ]; then
    echo "SKIP: test_lib_ab's planted fault: a sanitizer build compiles gemm.c for a minute a run; the plain build runs it"
else
    mkdir "$tmp/tree"
    cp -R "$SRCDIR/src" "$SRCDIR/include" "$tmp/tree/"
    chmod -R u+w "$tmp/tree"
    ops=src/train/exec.c
    sed 's/bptt_model_finish_grads(m);/bptt_model_finish_grads(m), m->grads[0] += 1;/' \
        "$SRCDIR/$ops" >"$tmp/tree/$ops"
    ! cmp -s "$SRCDIR/$ops" "$tmp/tree/$ops" || fail "the planted fault did not apply to $ops"
    for d in "" -d; do
        rc=0
        # shellcheck disable=SC2086
        "$AB" -b "$BUILDDIR" -s "$tmp/tree" $small -j 1 $d >"$tmp/bad" 2>"$tmp/err" || rc=$?
        if [ -z "$d" ]; then want=1; else want=0; fi
        [ "$rc" -eq $want ] || fail "a planted fault ($d): exit $rc, want $want ($(head -c 300 "$tmp/err"))"
        n=$(awk '($1 == "lstm" || $1 == "rnn") && $11 == "NO" && $12 > 0' "$tmp/bad" | wc -l)
        [ "$n" -eq 2 ] || fail "a planted fault ($d): want 2 rows saying NO: $(cat "$tmp/bad")"
    done
    if git -C "$SRCDIR" ls-files --error-unmatch src/train/model.c >/dev/null 2>&1 &&
        head=$(git -C "$SRCDIR" rev-parse --verify -q 'HEAD^{commit}' 2>/dev/null); then
        rc=0
        # shellcheck disable=SC2086
        "$AB" -b "$BUILDDIR" -r HEAD -R HEAD $small -c rnn -j 1 >"$tmp/rev" 2>"$tmp/err" || rc=$?
        [ "$rc" -eq 0 ] || fail "-r HEAD -R HEAD: exit $rc ($(head -c 300 "$tmp/err"))"
        [ "$(grep -c "^# old: HEAD ($head)\|^# new: HEAD ($head)" "$tmp/rev")" -eq 2 ] ||
            fail "-R HEAD: the header does not name HEAD on both sides: $(cat "$tmp/rev")"
        n=$(awk '$1 == "rnn" && $11 == "yes"' "$tmp/rev" | wc -l)
        [ "$n" -eq 1 ] || fail "-r HEAD -R HEAD: want one row with the same bits: $(cat "$tmp/rev")"
    else
        echo "SKIP: test_lib_ab's -R: the sources are not in git here (a release tree)"
    fi
fi

# bad input: one line, exit 2, nothing on stdout (abtest.sh)
bad -s "$SRCDIR" -H 0
bad -s "$SRCDIR" -n x
bad -s "$SRCDIR" -g sse
bad -s "$tmp/missing"
bad -s "$SRCDIR" -H 16,16,16,16,16,16,16,16,16
bad -s "$SRCDIR" -H "$(printf '16\033[2J')"
grep -q 'x1b' "$tmp/e" || fail "a control byte is not shown escaped: $(cat "$tmp/e")"
bad -s "$SRCDIR" -T 20 extra
bad -s "$SRCDIR" -R -x
exit 0
