# tests/figtest.sh: the start every test of an experiment driver shares,
# sourced after `set -eu`: BPTT and EXPERIMENTS (set by make check) must be
# there, the test is skipped (77) without gnuplot, which draws the figures,
# $tmp is a folder removed at exit, and fail MESSAGE ends the test.
: "${BPTT:?BPTT is not set (run through make check)}"
: "${EXPERIMENTS:?EXPERIMENTS is not set (run through make check)}"
if ! command -v gnuplot >/dev/null 2>&1; then
    echo "SKIP: gnuplot is not installed (scripts/setup installs it)"
    exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
