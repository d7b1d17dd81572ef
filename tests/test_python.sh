#!/bin/sh
# tests/test_python.sh: the Python package bptt_msm (python/) from the build
# tree, with Debian's /usr/bin/python3 (a pyenv python3 on PATH cannot see
# Debian's python3-torch), PYTHON=... for another: the planner against
# `bptt plan`, bptt_msm.torch.scan against the written-out loop
# (tests/python/test_bptt_msm.py), scan under the conditions of real
# training: dropout, BatchNorm, autocast, hooks, DDP over two processes,
# threads, nests (tests/python/test_field.py), scan over an iterable of
# unknown length and while_loop under the online planner
# (tests/python/test_online.py), two-level plans and scan with offload to
# host memory or disk (tests/python/test_offload.py), and
# experiments/torch-scan -q.  Without torch it fails, saying how to
# install it.  In a sanitizer build it is
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
"$PY" "$SRCDIR/tests/python/test_field.py"
"$PY" "$SRCDIR/tests/python/test_online.py"
"$PY" "$SRCDIR/tests/python/test_offload.py"
# the side-by-side at tiny sizes (the cells and the dropout+LayerNorm step):
# every way's row; MSM within the memory of the way it is matched with, and,
# for the cells, under 2 forward ops a step where per-step checkpointing
# needs 2 (not for ln-drop: at these sizes its generator state, 5056 B, is
# ten carries); the 5% and 10% rows, msm's and auto's (where scan takes
# "auto": both or neither, for every model), run the plan's forward ops and
# hold less than the plain loop and at most their budget and one step's
# internal state
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$PY" "$SRCDIR/experiments/torch-scan" -q -m lstm,gru,ln-drop -o "$tmp/side.csv" > "$tmp/side.txt"
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
{
    k = $1 "," $2; seen[k] = 1; n++
    fwd[k] = $col["forward_ops"]; step[k] = $col["forward_ops_per_step"]
    peak[k] = $col["saved_peak_bytes"]; internal[k] = $col["internal_bytes"]
    uses[k] = $col["strategy"]; planned[k] = $col["plan_forward_ops"]
    budget[k] = $col["budget_bytes"]
}
function fail(msg) { print "torch-scan -q: " msg; bad = 1; exit 1 }
END {
    if (bad) exit 1
    nm = split("lstm gru ln-drop", models, " ")
    split("plain ckpt chen msm@plain msm@ckpt msm@chen msm@5% msm@10%", need, " ")
    auto = ("lstm,auto@5%" in seen)
    if (n != nm * (auto ? 10 : 8)) fail(n " rows, not " nm * (auto ? 10 : 8))
    for (m = 1; m <= nm; m++) {
        for (w in need) if (!((models[m] "," need[w]) in seen)) fail("no row " models[m] "," need[w])
        split("plain ckpt chen", ways, " ")
        for (w in ways) {
            k = models[m] "," ways[w]; s = models[m] ",msm@" ways[w]
            if (peak[s] + 0 > peak[k] + 0) fail(s " peaks at " peak[s] " bytes, over " k "'"'"'s " peak[k])
        }
        if (models[m] != "ln-drop" && step[models[m] ",msm@ckpt"] + 0 >= 2)
            fail("msm at per-step checkpointing'"'"'s memory needs " step[models[m] ",msm@ckpt"] " forward ops a step for " models[m])
        split("msm@5% msm@10%" (auto ? " auto@5% auto@10%" : ""), shares, " ")
        for (w in shares) {
            s = models[m] "," shares[w]
            if (!(s in seen)) fail("no row " s)
            if (fwd[s] + 0 != planned[s] + 0) fail(s " ran " fwd[s] " forward ops, its plan " planned[s])
            if (peak[s] + 0 >= peak[models[m] ",plain"] + 0) fail(s " peaks at " peak[s] " bytes, not below the plain loop'"'"'s " peak[models[m] ",plain"])
            if (peak[s] + 0 > budget[s] + internal[s]) fail(s " peaks at " peak[s] " bytes, over its budget " budget[s] " and an internal state " internal[s])
            if (uses[s] != "msm" && !(shares[w] ~ /^auto/ && uses[s] == "chen")) fail(s " used strategy " uses[s])
        }
    }
}' "$tmp/side.csv" >&2 || { cat "$tmp/side.txt" >&2; exit 1; }
echo "test_python: torch-scan -q: $(($(wc -l < "$tmp/side.csv") - 1)) rows side by side"
# the example: a few iterations, the two trainings' parameters identical
"$PY" "$SRCDIR/python/examples/char_lstm.py" -n 3 -t 20 -B 4 -H 16 > "$tmp/char.txt" ||
    { cat "$tmp/char.txt" >&2; echo "test_python: char_lstm.py: the plain loop and scan trained apart" >&2; exit 1; }
grep -q 'parameters after training identical' "$tmp/char.txt" ||
    { cat "$tmp/char.txt" >&2; exit 1; }
echo "test_python: char_lstm.py: $(tail -1 "$tmp/char.txt")"
