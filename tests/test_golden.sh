#!/bin/sh
# tests/test_golden.sh: `bptt plan` and `bptt sweep --mode plan` print, for a
# fixed set of calls, exactly what they printed before the command line was
# rebuilt over the library's one-call planner: every byte of tests/golden/
# (made with the bptt of the parent of the commit that added this test),
# but for the timing field plan_seconds and the sweep's metadata line
# (build, machine, date), which are masked on both sides; and the refusals
# of `bptt calibrate` (its numbers are times, never golden).  A deliberate
# change of output rewrites the golden files with `tests/test_golden.sh
# --update` (BPTT and GOLDEN set as below) and says why in its commit.
#
# Needs BPTT (the binary) and GOLDEN (tests/golden/), as make check sets
# them.
set -eu
: "${BPTT:?BPTT is not set (run through make check)}"
: "${GOLDEN:?GOLDEN is not set (run through make check)}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The calls: one per line, NAME then the arguments of bptt.
cat > "$tmp/calls" <<'CALLS'
plan-text plan --length 100 --memory 5%,10%,20%,100%
plan-json plan --length 100 --memory 5%,10%,20%,100% --format json
plan-csv plan --length 333 --memory 7,12,40 --alpha 3 --format csv
plan-strategies-full plan --length 60 --strategy full --format json
plan-strategies-chen plan --length 60 --strategy chen --memory 30 --format json
plan-strategies-chenk plan --length 60 --strategy chen --segment 5 --memory 30 --format json
plan-strategies-hsm plan --length 60 --strategy hsm --memory 4,9 --format json
plan-strategies-ism plan --length 60 --strategy ism --memory 9,20 --alpha 2 --format json
plan-strategies-ismp plan --length 60 --strategy ism-paper --memory 9,20 --alpha 2 --format json
plan-strategies-msmp plan --length 60 --strategy msm-paper --memory 9,20 --alpha 2 --format json
plan-actions plan --length 12 --memory 4 --alpha 2 --actions
plan-actions-json plan --length 12 --memory 4 --actions --format json
plan-actions-csv plan --length 12 --memory 4 --actions --format csv
plan-curve plan --length 40 --memory 12 --curve
plan-curve-csv plan --length 40 --memory 12 --alpha 2 --curve --format csv
plan-long plan --length 100000 --memory 1%,10% --format json
plan-infeasible plan --length 100 --memory 2 --alpha 3 --format json
plan-infeasible-chen plan --length 100 --strategy chen --memory 12
plan-online plan --online --strategy hsm --length 30 --memory 5
plan-online-noahead plan --online --strategy msm --length 300 --alpha 3.5 --memory 10% --no-lookahead
plan-online-actions-json plan --online --strategy msm --length 25 --alpha 2 --memory 8 --actions --format json
plan-online-actions plan --online --strategy hsm --length 12 --memory 3 --actions
plan-online-curve plan --online --strategy msm --length 200 --alpha 2 --memory 12 --curve --points 12
plan-online-curve-json plan --online --strategy hsm --length 30 --memory 4 --curve --no-lookahead --format json
plan-online-infeasible plan --online --length 10 --memory 0
plan-disk plan --strategy hsm --length 1000 --memory 10 --disk 10 --write-cost 2 --read-cost 2 --format json
plan-disk-inf plan --strategy hsm --length 1000 --memory 10 --disk inf --write-cost 2 --read-cost 2
plan-disk-csv plan --strategy hsm,msm --length 60 --alpha 3.5 --memory 4,9 --disk 7 --write-cost 0.5 --format csv
plan-disk-zero plan --strategy msm --length 60 --alpha 2 --memory 9 --disk 0 --format json
plan-disk-actions plan --strategy msm --length 12 --memory 3 --alpha 2 --disk 4 --actions
plan-disk-actions-json plan --strategy msm --length 12 --memory 3 --disk inf --write-cost 0.1 --read-cost 0.3 --actions --format json
plan-disk-actions-csv plan --strategy hsm --length 12 --memory 2 --disk 3 --read-cost 0.25 --actions --format csv
plan-disk-cell plan --cell gru --hidden 8 --batch 2 --length 30 --memory 3,1KiB --disk 512B --format json
plan-disk-refused plan --length 10 --memory 3 --disk 5 --strategy chen
calibrate-no-dir calibrate --disk-dir /nonexistent/bptt-golden
calibrate-repeats calibrate --repeats 100001
CALLS

# bptt's output for one call into OUT (stdout, then its exit status) and
# OUT.err (stderr), plan_seconds masked
one() {
    out=$1
    shift
    set +e
    "$BPTT" "$@" >"$out" 2>"$out.err"
    echo "exit $?" >>"$out"
    set -e
    sed -i 's/"plan_seconds":[0-9.e+-]*/"plan_seconds":T/g' "$out"
    # csv: the plan_seconds column, named in the header line
    awk -F, -v OFS=, '
        $0 ~ /(^|,)plan_seconds(,|$)/ { for (i = 1; i <= NF; i++)
                                            if ($i == "plan_seconds") c = i
                                        print; next }
        c && NF >= c { $c = "T" } { print }' "$out" > "$out.m"
    mv "$out.m" "$out"
}

mkdir "$tmp/now"
while read -r name args; do
    # shellcheck disable=SC2086
    one "$tmp/now/$name" $args
done < "$tmp/calls"

# plan-mode sweeps: jsonl and csv, infeasible points as records; the
# metadata line (first line; csv: the comment lines) dropped
for fmt in jsonl csv; do
    out=$tmp/sweep.$fmt
    "$BPTT" sweep --length 10,50,200 --memory 20%,50%,100%,7 \
        --strategy full,chen,hsm,ism,msm,ism-paper,msm-paper --alpha 1,3 \
        --infeasible record --format "$fmt" --out "$out" 2>"$tmp/sweep.err" ||
        { cat "$tmp/sweep.err" >&2; echo "FAIL: the $fmt sweep" >&2; exit 1; }
    grep -v '^{"meta"\|^#' "$out" > "$tmp/now/sweep-$fmt"
done

if [ "${1:-}" = --update ]; then
    rm -f "$GOLDEN"/*
    cp "$tmp/now"/* "$GOLDEN"/
    echo "tests/test_golden.sh: $(ls "$tmp/now" | wc -l) golden files written"
    exit 0
fi

fails=0
for f in "$tmp/now"/*; do
    [ -f "$f" ] || continue
    name=$(basename "$f")
    if ! cmp -s "$f" "$GOLDEN/$name"; then
        echo "FAIL: $name differs from tests/golden/$name:" >&2
        diff "$GOLDEN/$name" "$f" | head -n 10 >&2
        fails=$((fails + 1))
    fi
done
n=$(ls "$GOLDEN" | wc -l)
m=$(ls "$tmp/now" | wc -l)
[ "$n" -eq "$m" ] || { echo "FAIL: $n golden files, $m outputs" >&2; exit 1; }
[ "$fails" -eq 0 ] || exit 1
echo "PASS: $m outputs byte-identical to tests/golden/"
