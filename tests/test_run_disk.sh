#!/bin/sh
# tests/test_run_disk.sh: `bptt run --disk`, a training run under a
# two-level plan, as a user runs it: for LSTM, GRU and RNN, hsm and msm,
# bounded and unbounded slow levels, the slow level in a folder given
# (--disk-dir) or a temporary one: the gradients, parameters and data of
# the last iteration (--dump-grads) are byte for byte full BPTT's; the
# executor's counts and bytes equal the plan's (states written and read,
# bytes moved, the slow level's peak, forward ops); the folder is left as
# it was; and a plan with nothing to write moves nothing.
#
# Needs BPTT, as make check sets it.
set -eu
: "${BPTT:?BPTT is not set (run through make check)}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
# field KEY FILE: the number KEY holds in a one-line JSON record
field() {
    sed -n "s/.*\"$1\":\(-\{0,1\}[0-9.e+-]*\)[,}].*/\1/p" "$2"
}
mkdir "$tmp/slow"
checks=0
for cell in lstm gru rnn; do
    M="--cell $cell --hidden 12 --batch 3 --length 41 --iters 2 --threads 1 --format json"
    # shellcheck disable=SC2086
    "$BPTT" run $M --strategy full --dump-grads "$tmp/ref-$cell" \
        >"$tmp/ref.json" 2>"$tmp/err" || fail "$cell full: $(cat "$tmp/err")"
    n=0
    for plan in "msm 2% inf" "hsm 3slots 4slots" "msm 5% 10%" \
                "msm 3slots 2slots" "hsm 100% inf"; do
        set -- $plan
        n=$((n + 1))
        out="$tmp/$cell-$n"
        dir=
        [ $((n % 2)) -eq 1 ] && dir="--disk-dir $tmp/slow"
        # shellcheck disable=SC2086
        "$BPTT" run $M --strategy "$1" --memory "$2" --disk "$3" $dir \
            --write-cost 0.25 --read-cost 0.5 --dump-grads "$out" \
            >"$out.json" 2>"$tmp/err" ||
            fail "$cell $plan: exit $? ($(cat "$tmp/err"))"
        files=0
        for f in "$tmp/ref-$cell"/*.npy; do
            cmp -s "$f" "$out/${f##*/}" ||
                fail "$cell $plan: ${f##*/} differs from full BPTT's"
            files=$((files + 1))
        done
        [ "$files" -ge 8 ] || fail "$cell: only $files arrays dumped"
        for k in slow_writes:plan_slow_writes slow_reads:plan_slow_reads \
                 slow_bytes_written:predicted_slow_bytes_written \
                 slow_bytes_read:predicted_slow_bytes_read \
                 slow_peak_bytes:predicted_slow_peak_bytes \
                 forward_ops:plan_forward_ops; do
            a=$(field "${k%%:*}" "$out.json")
            b=$(field "${k##*:}" "$out.json")
            [ -n "$a" ] && [ "$a" = "$b" ] ||
                fail "$cell $plan: ${k%%:*} $a, the plan's ${k##*:} $b"
            checks=$((checks + 1))
        done
        [ -z "$(ls -A "$tmp/slow")" ] ||
            fail "$cell $plan: left in --disk-dir: $(ls -A "$tmp/slow")"
        w=$(field slow_writes "$out.json")
        case $plan in
        "hsm 100% inf")  # room for every state: nothing goes slow
            [ "$w" -eq 0 ] || fail "$cell $plan: $w states written" ;;
        *)
            [ "$w" -gt 0 ] || fail "$cell $plan: no state written" ;;
        esac
    done
done
# under O_DIRECT (--disk-direct): the same gradients; a filesystem that
# refuses it is said by name, not counted as a pass
M="--cell lstm --hidden 12 --batch 3 --length 41 --iters 2 --threads 1 --format json"
rc=0
# shellcheck disable=SC2086
"$BPTT" run $M --strategy msm --memory 3slots --disk 5slots --disk-direct \
    --disk-dir "$tmp/slow" --dump-grads "$tmp/direct" >"$tmp/direct.json" \
    2>"$tmp/err" || rc=$?
if [ "$rc" -eq 2 ] && grep -q "refuses O_DIRECT" "$tmp/err"; then
    echo "SKIP: --disk-direct: $(cat "$tmp/err")"
else
    [ "$rc" -eq 0 ] || fail "--disk-direct: exit $rc ($(cat "$tmp/err"))"
    for f in "$tmp/ref-lstm"/*.npy; do
        cmp -s "$f" "$tmp/direct/${f##*/}" ||
            fail "--disk-direct: ${f##*/} differs from full BPTT's"
    done
    grep -q '"disk_direct":1' "$tmp/direct.json" || fail "--disk-direct: not said"
    [ "$(field slow_bytes_read "$tmp/direct.json")" = \
      "$(field predicted_slow_bytes_read "$tmp/direct.json")" ] ||
        fail "--disk-direct: bytes read differ from the plan's"
    [ "$(field slow_writes "$tmp/direct.json")" -gt 0 ] ||
        fail "--disk-direct: no state written"
    [ -z "$(ls -A "$tmp/slow")" ] || fail "--disk-direct: left a file"
    echo "ok: --disk-direct: gradients identical, bytes the plan's"
fi
echo "PASS: $checks counts equal to the plan's; gradients, parameters and data identical to full BPTT's in 15 two-level runs"
