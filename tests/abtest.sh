# tests/abtest.sh: the start the tests of the side-by-side tools
# (experiments/kernel-ab, experiments/lib-ab) share, sourced after
# `set -eu` with AB_NAME set to the tool's name: EXPERIMENTS, SRCDIR and
# BUILDDIR (set by make check) must be there, AB is the tool, $tmp a
# folder removed at exit, fail MESSAGE ends the test, and bad ARGS...
# checks that the tool refuses ARGS with one line on stderr that starts
# with its name, exit 2 and nothing on stdout (the line is left in
# $tmp/e).
: "${AB_NAME:?AB_NAME is not set}"
: "${EXPERIMENTS:?EXPERIMENTS is not set (run through make check)}"
: "${SRCDIR:?SRCDIR is not set (run through make check)}"
: "${BUILDDIR:?BUILDDIR is not set (run through make check)}"
AB="$EXPERIMENTS/$AB_NAME"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
bad() {
    rc=0
    "$AB" -b "$BUILDDIR" "$@" >"$tmp/o" 2>"$tmp/e" || rc=$?
    [ "$rc" -eq 2 ] || fail "$AB_NAME $*: exit $rc, want 2"
    [ ! -s "$tmp/o" ] || fail "$AB_NAME $*: stdout: $(head -c 200 "$tmp/o")"
    [ "$(wc -l <"$tmp/e")" -eq 1 ] || fail "$AB_NAME $*: want one line: $(cat "$tmp/e")"
    grep -q "^$AB_NAME: " "$tmp/e" || fail "$AB_NAME $*: $(cat "$tmp/e")"
}
