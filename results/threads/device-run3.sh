#!/bin/bash
# Third device run: PyTorch side by side at 16 threads with OpenBLAS's SkylakeX kernels, and
# the LSTM H=256 curve at 4 and 8 threads.
set -u
R=$(pwd)
export LD_LIBRARY_PATH=$R/dev/lib OPENBLAS_CORETYPE=SkylakeX
D=$R/dev/bin
O=${OUT:-/tmp/devout3}
mkdir -p "$O"
PYTHON=${PYTHON:-$(command -v python3)} timeout 80 "$R/experiments/pytorch-compare" \
    -b "$D/bptt" -j 16 -o "$O" -T -i 3 2>&1 | grep -v -i -E "warning|detach|rss0" | tee "$O/pytorch16.txt"
timeout 30 "$D/bench-train" -r 1 -c lstm -H 256 -j 4,8 2>&1 | tee "$O/train3-lstm-256.txt"
