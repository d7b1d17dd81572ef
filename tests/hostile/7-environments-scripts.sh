# Chapter 7: experiments/plot-sweep, scripts/slurm-sweep and
# scripts/sweep-parallel in the environments batch jobs have: no terminal
# (setsid, stdin /dev/null), the C locale with nothing else set (env -i,
# as cron starts a job), TMPDIR unset, missing, a file, or read-only.
# Each works, or fails in one line saying what to set, before any work.
PLOT=$EXPERIMENTS/plot-sweep
SCRIPTS=$SRCDIR/scripts
here=$(pwd)
have_gnuplot() { command -v gnuplot >/dev/null 2>&1; }
have_parallel() { parallel --version 2>/dev/null | head -n 1 | grep -q '^GNU parallel'; }
# bare CMD...: CMD with no terminal, the C locale and only PATH (and what
# the case adds with VAR=VALUE before CMD)
bare() { hrun -t 60 setsid -w env -i PATH=/usr/bin:/bin "$@"; }
"$BPTT" sweep --strategy chen,msm --length 50:100:50 --alpha 2 --memory 20%:100%:40 \
    --infeasible record --out p.jsonl 2>/dev/null
"$BPTT" sweep --strategy chen,msm --length 50:100:50 --alpha 2 --memory 20%:100%:40 \
    --infeasible record --out p.csv 2>/dev/null
touch afile
mkdir -p ro && chmod 555 ro
# root writes into a mode-555 folder: such cases cannot be run as root
if [ "$(id -u)" -eq 0 ]; then ro_skip="run as root, who writes into read-only folders"; else ro_skip=; fi

# ---- plot-sweep ------------------------------------------------------------------
# drew NAME ARGS...: bare plot-sweep ARGS -o o/x drew all three files
drew() {
    hcase "$1"; shift
    if ! have_gnuplot; then hskip "gnuplot is not installed"; return; fi
    rm -rf o; mkdir o
    bare "$@"
    if [ "$hrc" -ne 0 ]; then hfail "exit $hrc: $(shown err)"
    elif ! one_line err; then hfail "stderr: $(shown err)"
    elif [ "$(ls o | tr '\n' ' ')" != "x.csv x.png x.svg " ]; then hfail "wrote: $(ls -A o | tr '\n' ' ')"
    else hpass; fi
}
for f in p.jsonl p.csv; do
    drew "plot-sweep: $f in the C locale, no terminal, nothing but PATH set" "$PLOT" -o o/x "$f"
done
drew "plot-sweep: LANG=C LC_ALL=POSIX" LANG=C LC_ALL=POSIX "$PLOT" -o o/x p.jsonl
drew "plot-sweep: an unknown locale" LANG=xx_YY.UTF-8 LC_ALL=xx_YY.UTF-8 "$PLOT" -o o/x p.csv
drew "plot-sweep: TMPDIR missing" TMPDIR=/nonexistent/tmp "$PLOT" -o o/x p.jsonl
drew "plot-sweep: TMPDIR a file" TMPDIR="$here/afile" "$PLOT" -o o/x p.jsonl
drew "plot-sweep: TMPDIR read-only" TMPDIR="$here/ro" "$PLOT" -o o/x p.jsonl
hcase "plot-sweep: a UTF-8 title in the C locale is drawn as given"
if ! have_gnuplot; then hskip "gnuplot is not installed"
else
    rm -rf o; mkdir o
    t=$(printf 'Co\303\273t \316\261 \342\200\224 x')
    bare "$PLOT" --title "$t" -o o/x p.jsonl
    if [ "$hrc" -ne 0 ]; then hfail "exit $hrc: $(shown err)"
    elif ! grep -qF "$t" o/x.svg; then hfail "the title is not in the SVG"
    else hpass; fi
fi
hcase "plot-sweep: an output folder it cannot write: one line, before any work"
if [ -n "$ro_skip" ]; then hskip "$ro_skip"
elif ! have_gnuplot; then hskip "gnuplot is not installed"
else
    bare "$PLOT" -o ro/x p.jsonl
    if expect_refusal 2; then
        if grep -q 'cannot write in' err && [ -z "$(ls -A ro)" ]; then hpass; else hfail "says: $(shown err)"; fi
    fi
fi

# ---- the job-list scripts, with a stand-in bptt -------------------------------------
mkdir -p fake
cat >fake/bptt <<'EOF'
#!/bin/sh
for a; do last=$a; done
case $last in --merge) touch merged; exit 0 ;; esac
touch "ran.$last"
EOF
chmod +x fake/bptt
base="cd '$here' && '$here/fake/bptt' sweep --mode plan --strategy 'msm' --format jsonl --out 'x.jsonl'"
{
    echo "# bptt sweep job list: 3 points of grid 0123456789abcdef (plan mode)."
    echo "# merge: $base --merge"
    for k in 0 1 2; do echo "$base --only $k"; done
} >jobs.txt
clean() { rm -f ran.* merged jobs.txt.*.joblog; }
for t in "unset" "missing:/nonexistent/tmp" "a file:$here/afile" "read-only:$here/ro"; do
    what=${t%%:*} dir=${t#*:}
    hcase "slurm-sweep: a task in the C locale, no terminal, TMPDIR $what"
    if [ "$what" = read-only ] && [ -n "$ro_skip" ]; then hskip "$ro_skip"; continue; fi
    clean
    if [ "$what" = unset ]; then bare SLURM_ARRAY_TASK_ID=0 sh "$SCRIPTS/slurm-sweep" jobs.txt 3
    else bare SLURM_ARRAY_TASK_ID=0 TMPDIR="$dir" sh "$SCRIPTS/slurm-sweep" jobs.txt 3; fi
    if [ "$hrc" -ne 0 ]; then hfail "exit $hrc: $(shown err)"
    elif [ ! -e ran.2 ]; then hfail "the jobs did not run"
    else hpass; fi
done
hcase "sweep-parallel: the C locale, no terminal, TMPDIR unset"
if ! have_parallel; then hskip "GNU parallel is not installed"
else
    clean
    bare sh "$SCRIPTS/sweep-parallel" -j 2 jobs.txt
    if [ "$hrc" -ne 0 ]; then hfail "exit $hrc: $(shown err)"
    elif [ ! -e merged ] || [ ! -e ran.2 ]; then hfail "not run and merged"
    else hpass; fi
fi
for t in "missing:/nonexistent/tmp" "a file:$here/afile" "read-only:$here/ro"; do
    what=${t%%:*} dir=${t#*:}
    hcase "sweep-parallel: TMPDIR $what: one line, before any job"
    if [ "$what" = read-only ] && [ -n "$ro_skip" ]; then hskip "$ro_skip"; continue; fi
    if ! have_parallel; then hskip "GNU parallel is not installed"; continue; fi
    clean
    bare TMPDIR="$dir" sh "$SCRIPTS/sweep-parallel" -j 2 jobs.txt
    if ls ran.* >/dev/null 2>&1; then hfail "jobs ran"
    elif expect_refusal 2; then
        if grep -q '^sweep-parallel: TMPDIR .*set TMPDIR' err; then hpass; else hfail "says: $(shown err)"; fi
    fi
done
chmod 755 ro
