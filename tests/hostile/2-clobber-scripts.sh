# Chapter 2, experiments/plot-sweep and scripts/sweep-parallel: an output
# that exists is refused (exit 2, one line, the file as it was, nothing
# else written) unless --force, which replaces it; a directory or a
# dangling link where an output would go is refused as well, before any
# work (no temporary folder made).  sweep-parallel refuses a --joblog that
# names a file other than a job log of GNU parallel's (which it would
# append to).
PLOT=$EXPERIMENTS/plot-sweep
have_gnuplot() { command -v gnuplot >/dev/null 2>&1; }
"$BPTT" sweep --strategy chen,msm --length 50:100:50 --alpha 2 --memory 20%:100%:40 \
    --infeasible record --out p.jsonl 2>/dev/null

# kept NAME EXT: with o/x.EXT there already, plot-sweep -o o/x refuses and
# leaves o/ as it was
for ext in png svg csv; do
    hcase "plot-sweep: an existing o/x.$ext is refused without --force"
    if ! have_gnuplot; then hskip "gnuplot is not installed"; continue; fi
    rm -rf o; mkdir o; echo precious >"o/x.$ext"
    hrun -t 30 "$PLOT" -o o/x p.jsonl
    expect_refusal 2 || continue
    if ! grep -q "^plot-sweep: 'o/x.$ext' exists; give --force" err; then hfail "says: $(shown err)"
    elif [ "$(cat "o/x.$ext")" != precious ]; then hfail "o/x.$ext was changed"
    elif [ "$(ls -A o)" != "x.$ext" ]; then hfail "wrote: $(ls -A o | tr '\n' ' ')"
    else hpass; fi
done
hcase "plot-sweep: the default output name, existing, is refused too"
if ! have_gnuplot; then hskip "gnuplot is not installed"
else
    rm -f p-ops-vs-slots.*
    echo precious >p-ops-vs-slots.csv
    hrun -t 30 "$PLOT" p.jsonl
    if expect_refusal 2; then
        if [ "$(cat p-ops-vs-slots.csv)" != precious ] || [ -e p-ops-vs-slots.png ]; then hfail "written over"
        else hpass; fi
    fi
    rm -f p-ops-vs-slots.*
fi
hcase "plot-sweep: --force replaces existing outputs"
if ! have_gnuplot; then hskip "gnuplot is not installed"
else
    rm -rf o; mkdir o; for e in png svg csv; do echo old >"o/x.$e"; done
    hrun -t 30 "$PLOT" --force -o o/x p.jsonl
    if [ "$hrc" -ne 0 ]; then hfail "exit $hrc: $(shown err)"
    elif ! tail -n 2 o/x.svg | grep -q '</svg>' || ! grep -q '^group,x,y' o/x.csv; then hfail "not replaced"
    else hpass; fi
fi
hcase "plot-sweep: a directory where an output goes is refused, --force or not"
if ! have_gnuplot; then hskip "gnuplot is not installed"
else
    rm -rf o; mkdir -p o/x.svg
    hrun -t 30 "$PLOT" --force -o o/x p.jsonl
    if expect_refusal 2; then
        if [ "$(ls -A o)" != x.svg ] || [ -n "$(ls -A o/x.svg)" ]; then hfail "wrote: $(ls -A o | tr '\n' ' ')"
        else hpass; fi
    fi
fi
hcase "plot-sweep: a link where an output goes is refused, its target untouched"
if ! have_gnuplot; then hskip "gnuplot is not installed"
else
    rm -rf o; mkdir o; echo precious >target
    ln -s ../target o/x.csv
    hrun -t 30 "$PLOT" -o o/x p.jsonl
    if expect_refusal 2; then
        if [ "$(cat target)" != precious ]; then hfail "the link's target was written"
        else hpass; fi
    fi
    rm -f o/x.png o/x.svg; ln -s ../nowhere o/x.png
    hcase "plot-sweep: a dangling link where an output goes is refused"
    rm -f o/x.csv
    hrun -t 30 "$PLOT" -o o/x p.jsonl
    if expect_refusal 2; then
        if [ -e nowhere ]; then hfail "the dangling link's target was made"
        else hpass; fi
    fi
fi
hcase "plot-sweep: an existing output is refused before any work (no gnuplot run)"
mkdir -p fake; rm -f gp.ran
printf '#!/bin/sh\ntouch "%s/gp.ran"\n' "$(pwd)" >fake/gnuplot; chmod +x fake/gnuplot
rm -rf o; mkdir o; echo precious >o/x.png
PATH="$(pwd)/fake:$PATH" hrun -t 30 "$PLOT" -o o/x p.jsonl
if expect_refusal 2; then
    if [ -e gp.ran ]; then hfail "gnuplot ran"
    elif [ -n "$(ls -A o | grep -v '^x.png$')" ]; then hfail "left: $(ls -A o | tr '\n' ' ')"
    else hpass; fi
fi

# ---- scripts/sweep-parallel --joblog: parallel appends to the log it is given
here=$(pwd)
mkdir -p fake
printf '#!/bin/sh\nfor a; do last=$a; done\ntouch "ran.$last"\n' >fake/bptt
chmod +x fake/bptt
base="cd '$here' && '$here/fake/bptt' sweep --mode plan --out 'x.jsonl'"
{ echo "# bptt sweep job list: 1 points of grid 0123456789abcdef (plan mode)."
  echo "# merge: $base --merge"; echo "$base --only 0"; } >jobs.txt
hcase "sweep-parallel: --joblog naming a file that is not a job log is refused, the file kept"
if ! parallel --version 2>/dev/null | head -n 1 | grep -q '^GNU parallel'; then hskip "GNU parallel is not installed"
else
    echo precious >results.csv
    rm -f ran.*
    hrun -t 60 sh "$SRCDIR/scripts/sweep-parallel" --joblog results.csv jobs.txt
    if expect_refusal 2; then
        if [ "$(cat results.csv)" != precious ]; then hfail "results.csv was written"
        elif [ -e ran.0 ]; then hfail "the job ran"
        else hpass; fi
    fi
fi
# a link where the job log goes, given or the default name (the list's
# name and checksum: one another user can guess), dangling or to an empty
# file: parallel would append through it; refused, nothing run or made
for where in given default; do
    for kind in dangling empty; do
        hcase "sweep-parallel: a link ($kind) at the $where --joblog is refused, its target untouched"
        if ! parallel --version 2>/dev/null | head -n 1 | grep -q '^GNU parallel'; then hskip "GNU parallel is not installed"; continue; fi
        rm -f ran.* nowhere victim log.txt jobs.txt.*.joblog
        if [ "$where" = given ]; then log=log.txt; set -- --joblog log.txt
        else log=jobs.txt.$(cksum <jobs.txt | cut -d ' ' -f 1).joblog; set --; fi
        if [ "$kind" = dangling ]; then ln -s nowhere "$log"; else : >victim; ln -s victim "$log"; fi
        hrun -t 60 sh "$SRCDIR/scripts/sweep-parallel" "$@" jobs.txt
        if expect_refusal 2; then
            if [ -e ran.0 ]; then hfail "the job ran"
            elif [ -e nowhere ]; then hfail "the dangling link's target was made"
            elif [ "$kind" = empty ] && [ -s victim ]; then hfail "the link's target was written: $(shown victim)"
            elif [ ! -L "$log" ]; then hfail "the link was replaced"
            elif ! grep -q 'is a symbolic link' err; then hfail "says: $(shown err)"
            else hpass; fi
        fi
        rm -f "$log"
    done
done
