#!/bin/sh
# tests/test_scripts.sh: every script of scripts/ and experiments/ (and
# .ci/run) answers -h and --help at once: exit 0, its description on
# stdout, nothing on stderr, no work done (under 5 seconds), and
# experiments/plot-sweep is among them; scripts/slurm-sweep outside a job
# array says so in one line and exits 2.
#
# Needs SRCDIR (the source tree), as make check sets it.
set -eu
: "${SRCDIR:?SRCDIR is not set (run through make check)}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

n=0 checked=""
for f in "$SRCDIR"/scripts/* "$SRCDIR"/experiments/* "$SRCDIR"/.ci/run; do
    [ -f "$f" ] && [ -x "$f" ] || continue
    case $f in *.c | *.h | *.gp | *.py) continue ;; esac
    # programs built in the tree (bench-train, ...) are not scripts
    [ "$(head -c 2 "$f")" = "#!" ] || continue
    for opt in -h --help; do
        start=$(date +%s)
        rc=0
        timeout 20 "$f" "$opt" >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
        took=$(($(date +%s) - start))
        [ "$rc" -eq 0 ] || fail "$f $opt: exit $rc ($(head -c 200 "$tmp/err"))"
        [ -s "$tmp/out" ] || fail "$f $opt: nothing on stdout"
        [ ! -s "$tmp/err" ] || fail "$f $opt: stderr: $(head -c 200 "$tmp/err")"
        [ "$took" -le 5 ] || fail "$f $opt: took $took s (did it do work?)"
        grep -q '[a-z]' "$tmp/out" || fail "$f $opt: no text on stdout"
        n=$((n + 1))
    done
    checked="$checked ${f#"$SRCDIR"/}"
done
[ "$n" -ge 20 ] || fail "only $n script answers checked"
# scripts that must be among them (a lost executable bit would skip them)
for s in experiments/plot-sweep; do
    case "$checked " in *" $s "*) ;; *) fail "$s: not checked (not an executable script?)" ;; esac
done

rc=0
env -u SLURM_ARRAY_TASK_ID "$SRCDIR/scripts/slurm-sweep" jobs.txt \
    >"$tmp/out" 2>"$tmp/err" || rc=$?
[ "$rc" -eq 2 ] || fail "slurm-sweep outside an array: exit $rc, not 2"
[ "$(wc -l < "$tmp/err")" -eq 1 ] || fail "slurm-sweep: not one line: $(cat "$tmp/err")"
grep -q '^slurm-sweep: not in a job array' "$tmp/err" ||
    fail "slurm-sweep: '$(cat "$tmp/err")'"
echo "PASS: $n --help answers; slurm-sweep outside an array"
