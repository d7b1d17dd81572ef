#!/bin/sh
# tests/test_plot_sweep.sh: experiments/plot-sweep on real sweeps.
#
# A plan-mode sweep (chen, hsm, msm, full at t = 50..200, budgets 5%..100%,
# infeasible points recorded), written as jsonl and as csv, and a run-mode
# sweep (tiny LSTM and RNN, 1 iteration, 12 points, some infeasible), run
# point by point (--only) and merged into both formats from the same parts
# (so both hold the same timings).  Each is plotted from one format and the
# data the driver says it drew (OUT.csv) is compared with the records read
# from the other format by Python's json and csv modules (values within a
# relative 1e-9, the same points, groups and count); the units follow the
# rule of --help (bytes in B below 10 KiB, seconds in ms below 1 s).  Also:
# the PNG and SVG exist, are whole, and gnuplot said nothing (stderr holds
# the one summary line, which counts the infeasible points left out); -f
# png writes no SVG; the comparison itself catches a changed value; an
# existing output is refused, and replaced with --force.  Bad
# input (unknown field, shorthand of the other mode, bad --by, empty file,
# not a sweep, a malformed record, a short csv row, no records, nothing left
# after --where) and a gnuplot that fails or warns: one line on stderr
# naming the problem, exit 2 (1 for gnuplot), nothing written, no
# temporary left.
#
# Needs BPTT and SRCDIR (make check sets them); skipped (77) without
# gnuplot or python3.
set -eu
: "${SRCDIR:?SRCDIR is not set (run through make check)}"
. "$SRCDIR/tests/figtest.sh"
PLOT="$EXPERIMENTS/plot-sweep"
command -v python3 >/dev/null || { echo "SKIP: python3 is not installed"; exit 77; }
cd "$tmp"
SOURCE_DATE_EPOCH=1700000000
export SOURCE_DATE_EPOCH

# ---- the sweeps ---------------------------------------------------------------
PG="--strategy chen,hsm,msm,full --length 50:200:50 --alpha 2 --memory 5%:100%:5 --infeasible record"
"$BPTT" sweep $PG --out p.jsonl
"$BPTT" sweep $PG --out p.csv
RG="--mode run --cell lstm,rnn --input 3 --hidden 4 --batch 2 --length 20 \
--strategy full,chen,msm --memory 100%,5% --iters 1 --threads 1 --infeasible record"
for k in $(seq 0 11); do "$BPTT" sweep $RG --out r.jsonl --only "$k"; done
"$BPTT" sweep $RG --out r.jsonl --merge
cp -r r.jsonl.parts r.csv.parts
"$BPTT" sweep $RG --out r.csv --merge
[ "$(grep -c '"error"' r.jsonl)" -gt 0 ] || fail "the run sweep has no infeasible point"

# ---- what the records say, read by Python ----------------------------------------
# expect.py FILE CASE BY [FIELD=VALUE]: the sorted (group, x, y) rows the
# plot should hold, then a line "infeasible N"
cat >expect.py <<'EOF'
import csv, json, sys
path, case, by = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
where = sys.argv[4].split("=") if len(sys.argv) > 4 else None
with open(path) as f:
    lines = f.read().splitlines()
if path.endswith(".csv"):
    recs = [dict((k, v) for k, v in r.items() if v != "")
            for r in csv.DictReader(lines[1:])]
else:
    recs = [dict((k, v) for k, v in json.loads(l).items() if v is not None)
            for l in lines[1:] if l.strip()]
num = float
cases = {
    "plan-slots-ops": (lambda r: num(r["peak_slots"]),
                       lambda r: num(r["forward_ops"]) / num(r["length"])),
    "plan-percent-ops": (lambda r: 100 * num(r["peak_slots"]) / num(r["full_peak_slots"]),
                         lambda r: num(r["forward_ops"]) / num(r["length"])),
    "run-bytes-time": (lambda r: num(r["checkpoint_peak_bytes"]),
                       lambda r: num(r["seconds_per_iter"])),
    "run-percent-ops": (lambda r: 100 * num(r["checkpoint_peak_bytes"]) / num(r["full_checkpoint_bytes"]),
                        lambda r: num(r["forward_ops"]) / num(r["length"])),
}
fx, fy = cases[case]
rows, infeasible = [], 0
for r in recs:
    if where and str(r[where[0]]) != where[1]:
        continue
    if "error" in r or "forward_ops" not in r:
        infeasible += 1
        continue
    rows.append((", ".join(str(r[b]) for b in by), fx(r), fy(r)))
# the units of plot-sweep --help, by the largest value: bytes in B below
# 10 KiB, KiB below 10 MiB; seconds in us below 1 ms, ms below 1 s, else s
units = "none none"
if case == "run-bytes-time":
    mx, my = max(x for _, x, _ in rows), max(y for _, _, y in rows)
    xs, xu = (1, "B") if mx < 10 * 1024 else (1024, "KiB")
    ys, yu = (1e-6, "us") if my < 1e-3 else (1e-3, "ms") if my < 1 else (1, "s")
    rows = [(g, x / xs, y / ys) for g, x, y in rows]
    units = "%s %s" % (xu, yu)
for g, x, y in sorted(rows):
    print("%s\t%.17g\t%.17g" % (g, x, y))
print("infeasible %d" % infeasible)
print("units %s" % units)
EOF
# same.py WANT GOT: GOT (a plot-sweep CSV) holds WANT's rows
cat >same.py <<'EOF'
import csv, sys
want = [l.split("\t") for l in open(sys.argv[1]).read().splitlines() if "\t" in l]
want = [(g, float(x), float(y)) for g, x, y in want]
rows = list(csv.reader(l for l in open(sys.argv[2]) if not l.startswith("#")))
if rows[0] != ["group", "x", "y"]:
    sys.exit("%s: header %r, not group,x,y" % (sys.argv[2], rows[0]))
got = sorted((g, float(x), float(y)) for g, x, y in rows[1:])
if len(got) != len(want):
    sys.exit("%d points plotted, %d in the records" % (len(got), len(want)))
close = lambda a, b: abs(a - b) <= 1e-9 * max(abs(a), abs(b)) + 1e-12
for w, g in zip(want, got):
    if w[0] != g[0] or not close(w[1], g[1]) or not close(w[2], g[2]):
        sys.exit("plotted %r, the records say %r" % (g, w))
EOF

# check NAME RECORDS CASE BY [WHERE] -- plot-sweep arguments: plots, checks
check() {
    name=$1 recs=$2 case=$3 by=$4 where=$5; shift 5
    rm -rf out; mkdir out
    rc=0
    "$PLOT" "$@" -o "out/$name" >out.txt 2>err.txt || rc=$?
    [ "$rc" -eq 0 ] || fail "$name: exit $rc: $(cat err.txt)"
    [ ! -s out.txt ] || fail "$name: stdout: $(cat out.txt)"
    [ "$(wc -l <err.txt)" -eq 1 ] || fail "$name: stderr is not one line: $(cat err.txt)"
    grep -q "^plot-sweep: wrote out/$name\.{png,svg,csv}: " err.txt ||
        fail "$name: summary: $(cat err.txt)"
    for f in png svg csv; do [ -s "out/$name.$f" ] || fail "$name: no out/$name.$f"; done
    [ "$(head -c 8 "out/$name.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] ||
        fail "$name: out/$name.png is not a PNG"
    tail -n 2 "out/$name.svg" | grep -q '</svg>' || fail "$name: out/$name.svg is not whole"
    [ "$(ls -A out | wc -l)" -eq 3 ] || fail "$name: left in out/: $(ls -A out)"
    python3 expect.py "$recs" "$case" "$by" $where >want.txt
    python3 same.py want.txt "out/$name.csv" || fail "$name: the plotted data is not the records'"
    n=$(sed -n 's/^infeasible //p' want.txt)
    grep -q "; $n infeasible left out" err.txt || fail "$name: not '$n infeasible left out': $(cat err.txt)"
}

# plan mode: forward ops per step against the peak in slots, by strategy, at
# t = 200, from the jsonl, checked against the csv; then % of full BPTT's,
# by length, MSM only, from the csv, checked against the jsonl
check plan p.csv plan-slots-ops strategy length=200 \
    p.jsonl -x slots -y ops --where length=200
grep -q '^msm,' out/plan.csv && grep -q '^chen,' out/plan.csv || fail "plan: curves missing"
grep -q 'x = checkpoint memory (slots)' out/plan.csv || fail "plan: x label: $(head -1 out/plan.csv)"
check plan-length p.jsonl plan-percent-ops length strategy=msm \
    p.csv -x percent --by length --where strategy=msm --log x
# run mode: time per iteration against the checkpoint peak (the defaults),
# by strategy and cell, from the jsonl, checked against the csv; forward
# ops per step against % of full BPTT's from the csv, against the jsonl
check run r.csv run-bytes-time strategy,cell "" r.jsonl --by strategy,cell
set -- $(sed -n 's/^units //p' want.txt)
grep -q "x = checkpoint memory ($1).*y = time per iteration ($2)" out/run.csv ||
    fail "run: units not $1 and $2: $(head -1 out/run.csv)"
check run-ops r.jsonl run-percent-ops strategy "" r.csv -x percent -y ops
# the comparison catches a changed value
python3 expect.py r.jsonl run-percent-ops strategy >want.txt
awk -F, '!/^#/ && NR == 5 {$3 = $3 + 0.001; print $1 "," $2 "," $3; next} {print}' \
    out/run-ops.csv >changed.csv
! python3 same.py want.txt changed.csv 2>/dev/null || fail "same.py misses a changed value"
# -f png: no SVG
rm -rf out; mkdir out
"$PLOT" -f png -o out/one p.jsonl 2>err.txt
[ -s out/one.png ] && [ -s out/one.csv ] && [ ! -e out/one.svg ] || fail "-f png: $(ls out)"

# existing outputs: refused (exit 2, one line, left as they were) unless
# --force, which replaces them
rm -rf out; mkdir out
echo old >out/one.svg
rc=0
"$PLOT" -o out/one p.jsonl 2>err.txt || rc=$?
[ "$rc" -eq 2 ] && [ "$(wc -l <err.txt)" -eq 1 ] &&
    grep -q "^plot-sweep: 'out/one.svg' exists; give --force" err.txt ||
    fail "an existing output: exit $rc: $(cat err.txt)"
[ "$(cat out/one.svg)" = old ] && [ "$(ls -A out)" = one.svg ] || fail "an existing output was touched: $(ls -A out)"
"$PLOT" --force -o out/one p.jsonl 2>err.txt || fail "--force: $(cat err.txt)"
tail -n 2 out/one.svg | grep -q '</svg>' && [ -s out/one.png ] && [ -s out/one.csv ] ||
    fail "--force did not replace out/one.svg"

# ---- bad input: one line, exit 2, nothing written ---------------------------------
: >empty.jsonl
echo 'not a sweep' >notsweep.jsonl
{ head -n 3 p.jsonl; echo '{"point":3,"strategy":["msm"]}'; } >bad.jsonl
{ head -n 4 r.csv; echo '5,10%,lstm'; } >short.csv
head -n 1 p.jsonl >header.jsonl
# bad EXIT WHAT-THE-LINE-SAYS -- arguments
bad() {
    want=$1 says=$2; shift 2
    rm -rf out; mkdir out
    rc=0
    "$PLOT" -o out/x "$@" >out.txt 2>err.txt || rc=$?
    [ "$rc" -eq "$want" ] || fail "$*: exit $rc, not $want ($(cat err.txt))"
    [ "$(wc -l <err.txt)" -eq 1 ] || fail "$*: not one line: $(cat err.txt)"
    grep -q "^plot-sweep: .*$says" err.txt || fail "$*: '$(cat err.txt)' does not say '$says'"
    [ ! -s out.txt ] || fail "$*: stdout: $(cat out.txt)"
    [ -z "$(ls -A out)" ] || fail "$*: left in out/: $(ls -A out)"
    [ -z "$(ls -A . | grep plot-sweep)" ] || fail "$*: left a temporary"
}
bad 2 "no field 'nope'.*its fields: point, memory_spec, strategy, length.*peak_slots" p.jsonl -y nope
bad 2 "no field 'wall'.*seconds_per_iter" r.csv -x wall
bad 2 "no field 'celll'" p.csv --by celll
bad 2 "-x slots: not for a run-mode sweep" r.jsonl -x slots
bad 2 "-y time: not for a plan-mode sweep" p.jsonl -y time
bad 2 "'strategy' is not a number" p.jsonl -y strategy
bad 2 "is empty" empty.jsonl
bad 2 "not a bptt sweep file" notsweep.jsonl
bad 2 "bad.jsonl:4: not a sweep record" bad.jsonl
bad 2 "short.csv:5: 3 fields where the header has" short.csv
bad 2 "holds no records" header.jsonl
bad 2 "nothing to plot: no record .* passes --where length=7" p.jsonl --where length=7
bad 2 "bad --where" p.jsonl --where 'length~7'
bad 2 "no file 'nosuch.jsonl'" nosuch.jsonl
# a gnuplot that fails half way (a PNG begun): exit 1, nothing written
mkdir fake
cat >fake/gnuplot <<'EOF'
#!/bin/sh
echo x >plot.png
echo "line 9: some error" >&2
exit 1
EOF
chmod +x fake/gnuplot
PATH="$tmp/fake:$PATH" bad 1 "gnuplot failed: line 9: some error" p.jsonl
# one that warns but draws: a warning is a failure too
cat >fake/gnuplot <<'EOF'
#!/bin/sh
for f in png svg; do echo x >"plot.$f"; done
echo "warning: some warning" >&2
EOF
PATH="$tmp/fake:$PATH" bad 1 "gnuplot failed: warning: some warning" p.jsonl
echo "PASS: plan and run sweeps, jsonl and csv, plotted as recorded; bad input refused"
