#!/bin/sh
# tests/test_example_lif.sh: examples/lif, a user's own model (a spiking
# network, built against include/ alone), run as make check builds it: it
# passes its own checks (gradients bit-identical to full BPTT under every
# strategy and feasible budget, finite differences, measured checkpoint
# peaks equal to planned ones) and reports on every strategy; and each of
# its planted faults makes the check meant for it fail: a forward op that
# differs on recomputation breaks bit-identity, a backward op missing a
# term breaks finite differences.
#
# Needs LIF (the built example), as make check sets it.
set -eu
: "${LIF:?LIF is not set (run through make check)}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$LIF" >"$tmp/out" 2>"$tmp/err" || fail "lif: exit $? ($(cat "$tmp/err"))"
[ ! -s "$tmp/err" ] || fail "lif: stderr: $(cat "$tmp/err")"
grep -q '^lif: ok: ' "$tmp/out" || fail "lif: no ok line: $(cat "$tmp/out")"
for s in full chen hsm ism msm ism-paper msm-paper; do
    grep -q "^  $s " "$tmp/out" || fail "lif: no line for $s"
done
cat "$tmp/out"

# expect FLAG WORDS: exit 1 with WORDS on stderr
expect() {
    rc=0
    "$LIF" "$1" >"$tmp/out" 2>"$tmp/err" || rc=$?
    [ "$rc" -eq 1 ] || fail "lif $1: exit $rc, expected 1"
    grep -q "$2" "$tmp/err" ||
        fail "lif $1: stderr '$(cat "$tmp/err")' does not say '$2'"
    ! grep -q '^lif: ok' "$tmp/out" || fail "lif $1: said ok"
}
expect --break-recompute "gradients differ from full BPTT's"
expect --break-backward "smooth: finite differences"
rc=0
"$LIF" --no-such-flag >/dev/null 2>&1 || rc=$?
[ "$rc" -eq 2 ] || fail "lif --no-such-flag: exit $rc, expected 2"
echo "PASS: lif passes its checks, and each planted fault is caught"
