#!/bin/bash
# One prepared run on the 16-core device machine (thread scaling).
# Binaries built on the Debian 12 machine (-O2 -march=x86-64-v3, AVX-512
# kernel dispatched at run time), carried with their shared libraries.
# SMOKE=1: tiny sizes, to try the script here first.
set -u
R=$(pwd)
export LD_LIBRARY_PATH=$R/dev/lib
D=$R/dev/bin
O=${OUT:-/tmp/devout}
mkdir -p "$O"
T0=$(date +%s)
el() { echo "## elapsed $(( $(date +%s) - T0 )) s: $*"; }
{
    date -u; nproc; lscpu; head -3 /proc/meminfo; uname -a
    cat /etc/os-release | head -2; ldd --version | head -1
    ldd "$D/bench-train"
    python3 -c 'import torch; print("torch", torch.__version__, torch.get_num_threads(), torch.backends.mkldnn.is_available())'
} > "$O/machine.txt" 2>&1
grep -E "^(Model name|CPU\(s\)|Thread|Core|Socket|L3|Flags)" "$O/machine.txt" | cut -c1-200
if [ "${SMOKE:-0}" = 1 ]; then
    J=1,2 JP="1 2" HS=128 R3=1 PT="-t 100 -H 64 -i 1"
else
    J=1,2,4,8,16 JP="1 16 4 8 2" HS=256 R3=3 PT="-i 3"
fi
el "bench-train lstm $HS"
timeout 200 "$D/bench-train" -r $R3 -c lstm -H $HS -j $J 2>&1 | tee "$O/train-lstm-$HS.txt"
el "pytorch-compare at 16 threads"
PYTHON=${PYTHON:-$(command -v python3)} timeout 200 "$R/experiments/pytorch-compare" \
    -b "$D/bptt" -j "$(nproc)" -o "$O" $PT 2>&1 | tee "$O/pytorch.txt"
el "bench-train lstm 512, rnn"
if [ "${SMOKE:-0}" != 1 ]; then
    timeout 200 "$D/bench-train" -r 1 -c lstm -H 512 -j $J 2>&1 | tee "$O/train-lstm-512.txt"
    el "rnn"
    timeout 120 "$D/bench-train" -r 1 -c rnn -H 256,512 -j $J 2>&1 | tee "$O/train-rnn.txt"
fi
for j in $JP; do
    el "bench-plan $j"
    timeout 60 "$D/bench-plan" "$j" fast 2>&1 | tee -a "$O/plan.txt"
done
el done
