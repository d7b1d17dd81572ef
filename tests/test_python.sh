#!/bin/sh
# tests/test_python.sh: the Python package bptt_msm (python/) from the build
# tree, with Debian's /usr/bin/python3 (a pyenv python3 on PATH cannot see
# Debian's python3-torch), PYTHON=... for another: the planner against
# `bptt plan`, bptt_msm.torch.scan against the written-out loop
# (tests/python/test_bptt_msm.py), and experiments/torch-scan -q.  Without
# torch it fails, saying how to install it.  In a sanitizer build it is
# skipped by name: python3 cannot load libraries built with ASan unless its
# runtime is preloaded into the interpreter (and torch) too; the plain
# build, which scripts/check runs as well, runs it.
set -eu
# -h, --help: the comment above, and nothing else done
case ${1:-} in -h | --help) sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;; esac
PY=${PYTHON:-/usr/bin/python3}
: "${SRCDIR:?SRCDIR unset (run through make check)}" "${BPTT:?BPTT unset}"
if [ "${BPTT_SANITIZERS:-no}" = yes ]; then
    echo "SKIP: test_python: the libraries are built with ASan/UBSan, which $PY cannot load without preloading their runtime; the plain build runs this test"
    exit 77
fi
if ! "$PY" -c 'import torch, numpy' 2>/dev/null; then
    echo "test_python: $PY cannot import torch and numpy: install them with 'apt-get install python3-torch python3-numpy' (scripts/setup does)" >&2
    exit 1
fi
BPTT_MSM_LIBDIR=$(dirname "$BPTT")/.libs
PYTHONPATH=$SRCDIR/python:$SRCDIR/tests/python
PYTHONDONTWRITEBYTECODE=1 # nothing written into the source tree
OMP_NUM_THREADS=1
export BPTT_MSM_LIBDIR PYTHONPATH PYTHONDONTWRITEBYTECODE OMP_NUM_THREADS
"$PY" "$SRCDIR/tests/python/test_bptt_msm.py"
# the side-by-side at tiny sizes: every way's row; MSM within the memory of
# the way it is matched with, and under 2 forward ops a step where
# per-step checkpointing needs 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$PY" "$SRCDIR/experiments/torch-scan" -q -o "$tmp/side.csv" > "$tmp/side.txt"
awk -F, 'NR > 1 { peak[$1 "," $2] = $5; fwd[$1 "," $2] = $4; n++ }
END {
    if (n != 12) { print "torch-scan -q: " n " rows, not 12"; exit 1 }
    split("lstm gru", models, " "); split("plain ckpt chen", ways, " ")
    for (m in models) for (w in ways) {
        k = models[m] "," ways[w]; s = models[m] ",msm@" ways[w]
        if (!(s in peak)) { print "torch-scan -q: no row " s; exit 1 }
        if (peak[s] + 0 > peak[k] + 0) { print "torch-scan -q: " s " peaks at " peak[s] " bytes, over " k "'"'"'s " peak[k]; exit 1 }
    }
    for (m in models) if (fwd[models[m] ",msm@ckpt"] + 0 >= 2) {
        print "torch-scan -q: msm at per-step checkpointing'"'"'s memory needs " fwd[models[m] ",msm@ckpt"] " forward ops a step"; exit 1 }
}' "$tmp/side.csv" >&2 || { cat "$tmp/side.txt" >&2; exit 1; }
echo "test_python: torch-scan -q: $(($(wc -l < "$tmp/side.csv") - 1)) rows side by side"
# the example: a few iterations, the two trainings' parameters identical
"$PY" "$SRCDIR/python/examples/char_lstm.py" -n 3 -t 20 -B 4 -H 16 > "$tmp/char.txt" ||
    { cat "$tmp/char.txt" >&2; echo "test_python: char_lstm.py: the plain loop and scan trained apart" >&2; exit 1; }
grep -q 'parameters after training identical' "$tmp/char.txt" ||
    { cat "$tmp/char.txt" >&2; exit 1; }
echo "test_python: char_lstm.py: $(tail -1 "$tmp/char.txt")"
