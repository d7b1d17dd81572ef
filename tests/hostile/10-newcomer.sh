# Chapter 10: what a newcomer reads holds.  Every budget bptt plan prints
# (half slots at alpha 3.5 included) is taken back by --memory and by
# bptt validate --memory; a sweep takes a fractional alpha as plan does,
# with the same records; bptt plan has --infeasible as sweeps do; every
# csv's metadata line is one JSON object; README's first commands work as
# it says.
for alpha in 3.5 2.25 1.2 4; do
    hcase "alpha $alpha: every budget and peak plan prints is taken back"
    "$BPTT" plan --length 500 --alpha "$alpha" --memory 1%,3%,7%,20%,50%,100% --format csv >rows.csv
    ok=1
    for v in $(awk -F, 'NR > 1 { print $4; print $8 }' rows.csv | sort -u); do
        if ! "$BPTT" plan --length 500 --alpha "$alpha" --memory "$v" >/dev/null 2>err; then
            ok=0; hfail "plan --memory $v refused: $(shown err)"; break
        fi
        "$BPTT" plan --length 500 --alpha "$alpha" --memory "$v" --actions --format json >a.json
        if ! "$BPTT" validate --memory "$v" a.json >/dev/null 2>err; then
            ok=0; hfail "validate --memory $v refused: $(shown err)"; break
        fi
    done
    [ "$ok" -eq 0 ] || hpass
done

hcase "a budget that is not a whole number of units names the two around it"
hrun "$BPTT" plan --length 500 --alpha 3.5 --memory 20.3
expect_refusal 2 && { grep -q 'give 20 or 20.5' err && hpass || hfail "$(shown err)"; }

hcase "sweep --alpha 3.5: records equal bptt plan's"
SOURCE_DATE_EPOCH=1700000000 "$BPTT" sweep --alpha 3.5,2.25 --length 300 --memory 5%,10%,40.5 \
    --strategy msm,chen --infeasible record --out s.jsonl 2>err || true
if [ ! -s s.jsonl ]; then hfail "no sweep: $(shown err)"
else
    bad=0
    tail -n +2 s.jsonl | while read -r rec; do
        a=$(printf '%s' "$rec" | sed 's/.*"alpha":\([0-9.]*\).*/\1/')
        st=$(printf '%s' "$rec" | sed 's/.*"strategy":"\([a-z-]*\)".*/\1/')
        m=$(printf '%s' "$rec" | sed 's/.*"memory_spec":"\([^"]*\)".*/\1/')
        want=$("$BPTT" plan --length 300 --alpha "$a" --strategy "$st" --memory "$m" \
               --infeasible record --format json |
               sed 's/,"plan_seconds":[^,]*,"table_bytes":[^,}]*//; s/,"actions":[0-9a-z]*//')
        # the actions' count is left out: among plans of equal cost the one
        # made depends on the budgets asked together (one table serves them)
        got=$(printf '%s' "$rec" | sed 's/^{"point":[0-9]*,"memory_spec":"[^"]*",/{/; s/,"actions":[0-9a-z]*//')
        [ "$want" = "$got" ] || { echo "differs: $got / $want"; exit 1; }
    done >cmp.log 2>&1 || bad=1
    if [ "$bad" -eq 0 ] && [ "$(wc -l <s.jsonl)" -eq 13 ]; then hpass
    else hfail "$(head -c 300 cmp.log) ($(wc -l <s.jsonl) lines)"; fi
fi

for policy in record skip; do
    hcase "plan --infeasible $policy: several strategies, one infeasible budget, all planned"
    hrun "$BPTT" plan --length 1000 --memory 5%,10% --strategy chen,msm --infeasible "$policy" --format csv
    n=$(grep -c '^msm,' out || true)
    c=$(grep -c '^chen,' out || true)
    if [ "$hrc" -ne 0 ]; then hfail "exit $hrc: $(shown err)"
    elif [ "$n" -ne 2 ]; then hfail "msm rows: $n"
    elif [ "$policy" = record ] && { [ "$c" -ne 2 ] || ! grep -q '^chen,1000,1,49,,,,,,999,,62,' out; }; then
        hfail "chen rows: $(shown out)"
    elif [ "$policy" = skip ] && { [ "$c" -ne 1 ] || ! one_line err; }; then
        hfail "chen rows $c, stderr $(shown err)"
    else hpass; fi
done
hcase "plan --infeasible fail (the default): exit 3, nothing printed"
hrun "$BPTT" plan --length 1000 --memory 5% --strategy chen,msm
expect_refusal 3 && hpass

hcase "every csv's metadata line is one JSON object"
"$BPTT" run --length 5 --hidden 4 --batch 2 --input 3 --iters 1 --format csv >run.csv
"$BPTT" sweep --length 50 --memory 5% --out sw.csv 2>/dev/null
if ! command -v /usr/bin/python3 >/dev/null; then hskip "python3 is not installed"
elif /usr/bin/python3 - run.csv sw.csv <<'PY'
import json, sys
for path in sys.argv[1:]:
    first = open(path).readline()
    assert first.startswith('# {'), (path, first[:30])
    meta = json.loads(first[2:])['meta']
    assert meta['record_format'] == 1, path
PY
then hpass; else hfail "a metadata line that is not JSON"; fi

hcase "README's first command answers as README shows"
hrun "$BPTT" plan --length 1000 --memory 5%
if [ "$hrc" -eq 0 ] && grep -q '^msm  *1000  *1  *49  *1950  *1.9500  *49  *4.90%$' out; then hpass
else hfail "$(shown out)"; fi
hcase "README's suggestion (Chen at 10%) works"
hrun "$BPTT" plan --length 1000 --memory 10% --strategy chen
[ "$hrc" -eq 0 ] && hpass || hfail "exit $hrc: $(shown err)"
