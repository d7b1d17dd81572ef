#!/bin/sh
# tests/test_hostile.sh: every surface of bptt given hostile input, the
# way a careless or malicious user would.  The chapters are the classes of
# defect doc/guarantees.md names in its threat model; each chapter is one
# or more files tests/hostile/N-*.sh (N the chapter), run in order, each in
# its own shell with tests/hostile/lib.sh sourced and its own empty
# folder as the working directory.  A case that this machine cannot run
# (no gnuplot, no python3, a sanitizer build under ulimit) is reported by
# name as SKIP; the test fails if any case fails, and is skipped (77) only
# if no case at all could run.
#
# Needs BPTT, SRCDIR and EXPERIMENTS (make check sets them).
set -eu
: "${BPTT:?BPTT is not set (run through make check)}"
: "${SRCDIR:?SRCDIR is not set (run through make check)}"
: "${EXPERIMENTS:?EXPERIMENTS is not set (run through make check)}"
HOSTILE=$SRCDIR/tests/hostile
export HOSTILE

chapter_title() {
    case $1 in
    1) echo "nothing written for a shell or for gnuplot carries a command" ;;
    2) echo "no output clobbers a file it was not told to replace" ;;
    3) echo "readers check everything they read back" ;;
    4) echo "locks hold: one sweep per output" ;;
    5) echo "messages are one line, control bytes escaped" ;;
    6) echo "bad input is found before the work" ;;
    7) echo "the environments batch jobs have" ;;
    8) echo "wrappers report failure" ;;
    9) echo "messages say what is true" ;;
    10) echo "what a newcomer reads holds" ;;
    *) echo "chapter $1" ;;
    esac
}

total=0 passed=0 skipped=0 failed=0 shown=
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for f in $(ls "$HOSTILE" | grep -E '^[0-9]+-.*\.sh$' | sort -n); do
    n=${f%%-*}
    if [ "$n" != "$shown" ]; then
        echo "# chapter $n: $(chapter_title "$n")"
        shown=$n
    fi
    dir="$work/${f%.sh}"
    mkdir -p "$dir"
    rc=0
    (cd "$dir" && . "$HOSTILE/lib.sh" && . "$HOSTILE/$f" && hostile_end) \
        >"$dir.log" 2>&1 || rc=$?
    cat "$dir.log"
    counts=$(sed -n 's/^# counts: //p' "$dir.log" | tail -n 1)
    set -- $counts
    if [ $# -ne 3 ]; then
        echo "FAIL: $f stopped before its end (exit $rc)"
        failed=$((failed + 1))
        continue
    fi
    total=$((total + $1 + $2 + $3))
    passed=$((passed + $1))
    skipped=$((skipped + $2))
    failed=$((failed + $3))
    [ "$rc" -eq 0 ] || [ "$3" -gt 0 ] || {
        echo "FAIL: $f exited $rc"; failed=$((failed + 1)); }
done
echo "# hostile: $total cases, $passed passed, $skipped skipped, $failed failed"
[ "$failed" -eq 0 ] || exit 1
[ "$passed" -gt 0 ] || exit 77
exit 0
