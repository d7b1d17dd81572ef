#!/bin/bash
# Second device run: OpenBLAS 0.3.21 does not know this CPU (model 207) and
# fell back to a slow kernel; force its SkylakeX kernels and re-measure.
set -u
R=$(pwd)
export LD_LIBRARY_PATH=$R/dev/lib OPENBLAS_CORETYPE=SkylakeX
D=$R/dev/bin
O=${OUT:-/tmp/devout2}
mkdir -p "$O"
T0=$(date +%s)
el() { echo "## elapsed $(( $(date +%s) - T0 )) s: $*"; }
OPENBLAS_VERBOSE=2 "$D/bptt" --version 2>&1 | head -3
unset OPENBLAS_CORETYPE; OPENBLAS_VERBOSE=2 "$D/bptt" --version 2>&1 | head -3
export OPENBLAS_CORETYPE=SkylakeX
el "lstm 256"
timeout 90 "$D/bench-train" -r 3 -c lstm -H 256 -j 1,2,16 2>&1 | tee "$O/train2-lstm-256.txt"
el "lstm 512"
timeout 80 "$D/bench-train" -r 1 -c lstm -H 512 -j 1,16 2>&1 | tee "$O/train2-lstm-512.txt"
el "rnn 512"
timeout 30 "$D/bench-train" -r 1 -c rnn -H 512 -j 1,16 2>&1 | tee "$O/train2-rnn-512.txt"
el "pytorch 1 thread"
PYTHON=${PYTHON:-$(command -v python3)} timeout 100 "$R/experiments/pytorch-compare" \
    -b "$D/bptt" -j 1 -o "$O" -T -i 2 2>&1 | grep -v -i -E "warning|detach|rss0" | tee "$O/pytorch1.txt"
el done
