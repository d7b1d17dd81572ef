#!/bin/sh
# tests/test_calibrate_direct.sh: `bptt calibrate --direct`.
#   - in a folder under the build folder (a disk filesystem) it measures,
#     exits 0, records "direct":1 and an alignment of at least 4096, and
#     leaves the folder empty; where that filesystem refuses O_DIRECT the
#     case says SKIPPED and why, and the refusal must be exit 2;
#   - in /dev/shm (tmpfs) it is refused in one line (exit 2, "refuses
#     O_DIRECT", nothing left) where tmpfs refuses O_DIRECT, and measures
#     where it takes it (Linux 6.6 and later: said SKIPPED for the
#     refusal);
#   - a missing folder is refused with exit 2 as without --direct.
# Needs BPTT (make check sets it).
set -eu
: "${BPTT:?BPTT is not set (run through make check)}"
CAL="calibrate --direct --hidden 8 --batch 2 --repeats 2 --threads 1"
fails=0
fail() { printf 'FAIL: %s\n' "$*"; fails=$((fails + 1)); }
d=$(mktemp -d "$PWD/bptt-test-caldirect.XXXXXX")
trap 'rm -rf "$d"' EXIT

# one run in folder $1: rc, out, err in $d
run_in() {
    rc=0
    # shellcheck disable=SC2086
    "$BPTT" $CAL --format json --disk-dir "$1" >"$d/out" 2>"$d/err" || rc=$?
}
# whether the run in $1 measured as it should
measured() {
    if [ "$rc" -ne 0 ]; then fail "$1: exit $rc: $(cat "$d/err")"
    elif ! grep -q '"direct":1' "$d/out"; then fail "$1: no \"direct\":1"
    elif ! grep -Eq '"direct_align":([4-9][0-9]{3}|[0-9]{5,})[,}]' "$d/out"
    then fail "$1: alignment below 4096: $(cat "$d/out")"
    elif [ -n "$(ls -A "$1")" ]; then fail "$1: left $(ls -A "$1")"
    else echo "ok: $1: measured with O_DIRECT"; fi
}
# whether the run in $1 was refused as it should
refused() {
    if [ "$rc" -ne 2 ]; then fail "$1: exit $rc, not 2"
    elif [ -s "$d/out" ]; then fail "$1: wrote on stdout"
    elif [ "$(wc -l <"$d/err")" -ne 1 ]; then fail "$1: not one line"
    elif [ -e "$1" ] && [ -n "$(ls -A "$1")" ]; then
        fail "$1: left $(ls -A "$1")"
    elif [ ! -e "$1" ] && [ -n "${2-}" ]; then fail "$1: removed"
    else echo "ok: $1: refused: $(cat "$d/err")"; fi
}

mkdir "$d/disk"
run_in "$d/disk"
if [ "$rc" -eq 2 ] && grep -q 'refuses O_DIRECT' "$d/err"; then
    echo "SKIPPED disk folder: the filesystem of $d refuses O_DIRECT"
    refused "$d/disk" there
else
    measured "$d/disk"
fi

if [ -d /dev/shm ] && [ -w /dev/shm ]; then
    s=$(mktemp -d /dev/shm/bptt-test-caldirect.XXXXXX)
    run_in "$s"
    if [ "$rc" -eq 2 ]; then
        grep -q 'refuses O_DIRECT' "$d/err" ||
            fail "/dev/shm: not the refusal: $(cat "$d/err")"
        refused "$s" there
    else
        echo "SKIPPED /dev/shm refusal: tmpfs takes O_DIRECT on this kernel"
        measured "$s"
    fi
    rm -rf "$s"
else
    echo "SKIPPED /dev/shm: none writable"
fi

run_in "$d/none"
refused "$d/none"
[ ! -e "$d/none" ] || fail "$d/none: made"

[ "$fails" -eq 0 ]
