# Chapter 8: the wrappers fail when what they wrap failed or did nothing.
# scripts/slurm-sweep's array task (a Slurm afterok merge must never start
# after a task that did nothing) and scripts/sweep-parallel run job lists
# whose jobs are a stand-in bptt that fails, or succeeds; lists that bptt
# did not write (no header, a command added to a job's line, a value that
# is not a single-quoted word, a list cut short) are refused before any of
# their jobs runs.  experiments/reproduce and scripts/headline are run as
# copies beside stand-in drivers: a step that fails fails the whole.  The
# figure drivers, with a gnuplot that fails or draws nothing, exit
# non-zero and write nothing.  The wrappers' refusals quote values on one
# line, control bytes escaped.
SCRIPTS=$SRCDIR/scripts
here=$(pwd)
mkdir -p fake
# the stand-in bptt: "sweep ... --only K" writes ran.K and exits with
# $FAKE_JOB (0 unless set; 1 when K is $FAKE_FAIL_ONLY); "sweep ... --merge" writes merged, exits
# $FAKE_MERGE; "--version" and "run" answer as bptt would ($FAKE_RUN)
cat >fake/bptt <<'EOF'
#!/bin/sh
for a; do last=$a; done
case $1 in
--version) echo "bptt 0.0.0 (stand-in)"; exit 0 ;;
run) echo '{"meta":{"version":"0"}}'; exit "${FAKE_RUN:-0}" ;;
esac
case $last in
--merge) touch merged; exit "${FAKE_MERGE:-0}" ;;
esac
touch "ran.$last"
[ "$last" != "${FAKE_FAIL_ONLY:-none}" ] || exit 1
exit "${FAKE_JOB:-0}"
EOF
chmod +x fake/bptt
# write_list FILE N: a job list of N jobs as bptt sweep --jobs writes it
write_list() {
    base="cd '$here' && '$here/fake/bptt' sweep --mode plan --strategy 'msm' --length '10' --format jsonl --out 'x.jsonl'"
    {
        echo "# bptt sweep job list: $2 points of grid 0123456789abcdef (plan mode)."
        echo "# Run every line below that does not start with #."
        echo "# merge: $base --merge"
        k=0
        while [ "$k" -lt "$2" ]; do echo "$base --only $k"; k=$((k + 1)); done
    } >"$1"
}
clean() { rm -f ran.* merged "$HOSTILE_MARK"; }
write_list good.txt 4
# hostile lists: no header; a command after a job; a $(...) value; cut short
sed 1d good.txt >nohead.txt
printf 'touch "$HOSTILE_MARK"\n' >>nohead.txt
sed '5s/$/; touch "$HOSTILE_MARK"/' good.txt >added.txt
sed "6s/--strategy 'msm'/--strategy \$(touch \"\$HOSTILE_MARK\")/" good.txt >subst.txt
head -c $(($(wc -c <good.txt) - 12)) good.txt >cut.txt
{ sed -n 1,3p good.txt; echo "cd '$here' && '$here/fake/bptt' sweep --mode plan --out 'y.jsonl' --only 0"; } >other.txt
write_list empty.txt 0

# ---- slurm-sweep, one array task ----------------------------------------------
task() { # TASK ROWS LIST: the task run as Slurm would (no terminal)
    t=$1; shift
    SLURM_ARRAY_TASK_ID=$t hrun -t 30 sh "$SCRIPTS/slurm-sweep" "$@"
}
hcase "slurm-sweep: a task whose jobs fail exits non-zero"
clean; FAKE_JOB=1 task 0 good.txt 2
if [ "$hrc" -eq 0 ]; then hfail "exit 0 after failed jobs"
elif [ ! -e ran.0 ] || [ ! -e ran.1 ]; then hfail "its jobs did not all run"
else hpass; fi
hcase "slurm-sweep: a task with one failing job of two exits non-zero"
clean; FAKE_FAIL_ONLY=3 task 1 good.txt 2
if [ "$hrc" -eq 0 ]; then hfail "exit 0"
elif [ ! -e ran.2 ]; then hfail "the other job did not run"
else hpass; fi
hcase "slurm-sweep: a task whose jobs succeed exits 0"
clean; task 1 good.txt 2
if [ "$hrc" -ne 0 ]; then hfail "exit $hrc: $(shown err)"; else hpass; fi
hcase "slurm-sweep: a task past the end of the list exits non-zero"
clean; task 2 good.txt 2
if [ "$hrc" -eq 0 ]; then hfail "exit 0 for a task that ran nothing"
elif ! one_line err; then hfail "stderr: $(shown err)"
else hpass; fi
hcase "slurm-sweep: a task of a missing list exits non-zero"
clean; task 0 nosuch.txt
if [ "$hrc" -eq 0 ]; then hfail "exit 0"; else expect_refusal 2 && hpass; fi
hcase "slurm-sweep: a task id that is not a number is refused"
clean; task 'x' good.txt
expect_refusal 2 && hpass
for l in nohead added subst cut other empty; do
    hcase "slurm-sweep: a list not written by bptt ($l) is refused before any job"
    clean; task 0 "$l.txt" 4
    if ! marker_absent; then hfail "a smuggled command ran"
    elif ls ran.* >/dev/null 2>&1; then hfail "jobs ran: $(ls ran.* | tr '\n' ' ')"
    else expect_refusal 2 && hpass; fi
done
# --submit: sbatch that fails, or answers with no job id
hcase "slurm-sweep --submit: sbatch failing is a failure"
mkdir -p sb
printf '#!/bin/sh\necho "sbatch: error: invalid partition" >&2\nexit 1\n' >sb/sbatch
printf '#!/bin/sh\nexit 0\n' >sb/scontrol
chmod +x sb/sbatch sb/scontrol
PATH="$here/sb:$PATH" hrun -t 30 sh "$SCRIPTS/slurm-sweep" --submit good.txt 2
if [ "$hrc" -eq 0 ]; then hfail "exit 0"; else hpass; fi
hcase "slurm-sweep --submit: sbatch printing no job id is a failure"
printf '#!/bin/sh\necho "$*" >>sbatch.log\nexit 0\n' >sb/sbatch
rm -f sbatch.log
PATH="$here/sb:$PATH" hrun -t 30 sh "$SCRIPTS/slurm-sweep" --submit good.txt 2
if [ "$hrc" -eq 0 ]; then hfail "exit 0, merge submitted as: $(tail -n 1 sbatch.log)"
elif grep -q 'afterok:$\|afterok: ' sbatch.log; then hfail "a merge job was submitted after no array"
else hpass; fi
hcase "slurm-sweep --submit: a list not written by bptt is not submitted"
printf '#!/bin/sh\necho "$*" >>sbatch.log\necho 42\n' >sb/sbatch
rm -f sbatch.log
PATH="$here/sb:$PATH" hrun -t 30 sh "$SCRIPTS/slurm-sweep" --submit added.txt 2
if [ -e sbatch.log ]; then hfail "submitted: $(shown sbatch.log)"
else expect_refusal 2 && hpass; fi

# ---- sweep-parallel ---------------------------------------------------------------
sp() { hrun -t 60 sh "$SCRIPTS/sweep-parallel" "$@"; }
if ! parallel --version 2>/dev/null | head -n 1 | grep -q '^GNU parallel'; then
    for c in "jobs that fail" "a merge that fails" "lists not written by bptt" "a parallel that is not GNU parallel"; do
        hcase "sweep-parallel: $c"; hskip "GNU parallel is not installed"
    done
else
    hcase "sweep-parallel: jobs that fail: exit non-zero, no merge"
    clean; rm -f good.txt.*.joblog
    FAKE_JOB=1 sp -j 2 good.txt
    if [ "$hrc" -eq 0 ]; then hfail "exit 0"
    elif [ -e merged ]; then hfail "merged after failed jobs"
    elif [ ! -e ran.3 ]; then hfail "the jobs did not run"
    else hpass; fi
    hcase "sweep-parallel: a merge that fails: exit non-zero"
    clean; rm -f good.txt.*.joblog
    FAKE_MERGE=1 sp -j 2 good.txt
    if [ "$hrc" -eq 0 ]; then hfail "exit 0"
    elif [ ! -e merged ]; then hfail "no merge was run"
    else hpass; fi
    hcase "sweep-parallel: jobs and merge that succeed: exit 0"
    clean; rm -f good.txt.*.joblog
    sp -j 2 good.txt
    if [ "$hrc" -ne 0 ]; then hfail "exit $hrc: $(shown err)"
    elif [ ! -e merged ] || [ ! -e ran.0 ]; then hfail "not run"
    else hpass; fi
    for l in nohead added subst cut other empty; do
        hcase "sweep-parallel: a list not written by bptt ($l) is refused before any job"
        clean
        sp -j 2 "$l.txt"
        if ! marker_absent; then hfail "a smuggled command ran"
        elif ls ran.* >/dev/null 2>&1 || [ -e merged ]; then hfail "jobs ran"
        else expect_refusal 2 && hpass; fi
    done
    hcase "sweep-parallel: a parallel that is not GNU parallel is refused"
    mkdir -p np
    printf '#!/bin/sh\necho "parallel from moreutils" >&2\nexit 0\n' >np/parallel
    chmod +x np/parallel
    clean; rm -f good.txt.*.joblog
    PATH="$here/np:$PATH" sp -j 2 good.txt
    if [ -e merged ]; then hfail "merged with no job run (exit $hrc)"
    else expect_refusal 2 && hpass; fi
fi

# -j: a value that is not a number of jobs is a usage error (exit 2, one
# line naming it), before any job runs: not GNU parallel's message and
# exit 1 after the list was checked (parallel not needed to see it)
for j in abc 0 2x 5.5 '' 1234567 0%; do
    hcase "sweep-parallel: -j '$j' is refused in one line before any job"
    clean; rm -f good.txt.*.joblog
    sp -j "$j" good.txt
    if ls ran.* >/dev/null 2>&1 || [ -e merged ]; then hfail "jobs ran"
    elif ls good.txt.*.joblog >/dev/null 2>&1; then hfail "a job log was written"
    elif expect_refusal 2; then
        if grep -q "^sweep-parallel: -j '$j' is not a number of jobs; give N" err; then hpass
        else hfail "says: $(shown err)"; fi
    fi
done
# the forms kept reach parallel and run the jobs
for j in 3 +0 -1 50%; do
    hcase "sweep-parallel: -j '$j' runs the jobs"
    if ! parallel --version 2>/dev/null | head -n 1 | grep -q '^GNU parallel'; then hskip "GNU parallel is not installed"; continue; fi
    clean; rm -f good.txt.*.joblog
    sp -j "$j" good.txt
    if [ "$hrc" -ne 0 ]; then hfail "exit $hrc: $(shown err)"
    elif [ ! -e merged ] || [ ! -e ran.3 ]; then hfail "not run"
    else hpass; fi
done
clean; rm -f good.txt.*.joblog

# ---- experiments/reproduce and scripts/headline, as copies --------------------------
# tree/: reproduce and headline copied, every driver a stand-in that
# writes its name into the output folder, or fails when named in FAIL_STEP
mkdir -p tree/experiments tree/scripts
cp "$EXPERIMENTS/reproduce" tree/experiments/
cp "$SCRIPTS/headline" tree/scripts/
cp fake/bptt tree/bptt
for d in headline fig6-training fig7-memory-time fig1-cost-memory fig2-chen-ratio fig4-cost-length fig5-schedule; do
    cat >"tree/experiments/$d" <<EOF
#!/bin/sh
[ "\${FAIL_STEP:-}" != "$d" ] || exit 3
while getopts o:t:H:i:n: o; do case \$o in o) out=\$OPTARG ;; esac; done
[ -z "\${out:-}" ] || touch "\$out/$d.done"
[ "$d" != headline ] || echo "strategy budget (a table)"
echo "$d stand-in"
[ "$d" != headline ] || echo "Figure: (where it is)"
EOF
    chmod +x "tree/experiments/$d"
done
printf '#!/bin/sh\nexit "${FAIL_SETUP:-0}"\n' >tree/scripts/setup
chmod +x tree/scripts/setup
repro() { rm -rf r; hrun -t 60 sh tree/experiments/reproduce -q -o "$here/r"; }
hcase "reproduce: stand-ins that succeed: exit 0, timings written"
repro
if [ "$hrc" -ne 0 ]; then hfail "exit $hrc: $(shown err)"
elif [ ! -s r/timings.csv ]; then hfail "no timings.csv"
else hpass; fi
for d in headline fig6-training fig1-cost-memory fig5-schedule; do
    hcase "reproduce: a failing $d fails the whole"
    FAIL_STEP=$d repro
    if [ "$hrc" -eq 0 ]; then hfail "exit 0"
    elif [ -e r/timings.csv ]; then hfail "timings.csv written"
    else hpass; fi
done
hcase "reproduce: bptt failing to give the machine's metadata fails the whole"
FAKE_RUN=1 repro
if [ "$hrc" -eq 0 ]; then hfail "exit 0"; elif [ -e r/timings.csv ]; then hfail "timings.csv written"; else hpass; fi
hcase "reproduce: a driver missing fails the whole"
chmod -x tree/experiments/fig4-cost-length
repro
chmod +x tree/experiments/fig4-cost-length
if [ "$hrc" -eq 0 ]; then hfail "exit 0 without fig4-cost-length"; else hpass; fi
# README's reference block: rewritten by a full run into results/ only
readme_with() { # $1 the block's old content, or "" for no markers at all
    {
        echo "# before"
        if [ -n "$1" ]; then
            echo "<!-- reference run: experiments/reproduce rewrites from here -->"
            echo "$1"
            echo "<!-- reference run: to here -->"
        fi
        echo "after"
    } >tree/README.md
}
hcase "reproduce: a full run into results/ rewrites README's reference block, nothing else of it"
rm -rf tree/results && mkdir tree/results && readme_with "    old numbers"
hrun -t 60 sh tree/experiments/reproduce
if [ "$hrc" -ne 0 ]; then hfail "exit $hrc: $(shown err)"
elif grep -q 'old numbers' tree/README.md; then hfail "the old block is still there"
elif [ "$(sed -n 1p tree/README.md)" != "# before" ] || [ "$(tail -n 1 tree/README.md)" != after ]; then
    hfail "text outside the block changed: $(shown tree/README.md)"
elif [ "$(grep -c -x '    strategy budget (a table)' tree/README.md)" -ne 1 ] ||
    [ "$(grep -c -x '    headline stand-in' tree/README.md)" -ne 1 ] || grep -q 'Figure:' tree/README.md; then
    hfail "the block is not the headline's table: $(shown tree/README.md)"
elif [ ! -s tree/results/timings.csv ]; then hfail "no timings.csv"
else hpass; fi
hcase "reproduce: a quick run into results/ leaves README alone"
rm -rf tree/results && mkdir tree/results && readme_with "    old numbers"
cp tree/README.md readme.before
hrun -t 60 sh tree/experiments/reproduce -q
if [ "$hrc" -ne 0 ]; then hfail "exit $hrc: $(shown err)"
elif ! cmp -s readme.before tree/README.md; then hfail "README changed"
else hpass; fi
hcase "reproduce: a README without its markers: refused before any driver runs"
rm -rf tree/results && mkdir tree/results && readme_with ""
hrun -t 60 sh tree/experiments/reproduce
if [ "$hrc" -ne 2 ]; then hfail "exit $hrc, not 2"
elif ! one_line err || ! grep -q 'lacks its two reference-run marker lines' err; then hfail "stderr: $(shown err)"
elif [ -n "$(ls tree/results)" ]; then hfail "written: $(ls tree/results | tr '\n' ' ')"
else hpass; fi
rm -rf tree/results tree/README.md readme.before
hcase "scripts/headline: a failing setup fails it, the driver not run"
FAIL_SETUP=1 hrun -t 30 sh tree/scripts/headline
if [ "$hrc" -eq 0 ]; then hfail "exit 0"
elif grep -q 'headline stand-in' out; then hfail "the driver ran"
else hpass; fi
hcase "scripts/headline: a failing driver fails it"
FAIL_STEP=headline hrun -t 30 sh tree/scripts/headline
if [ "$hrc" -eq 0 ]; then hfail "exit 0"; else hpass; fi

# ---- the figure drivers: a gnuplot that fails, or draws nothing -------------------
# Each driver, with small sizes, into an empty folder: it exits non-zero
# and leaves the folder empty (no CSV without its figures).
mkdir -p gpfail gpnone
printf '#!/bin/sh\necho "gnuplot: some error" >&2\nexit 1\n' >gpfail/gnuplot
printf '#!/bin/sh\nexit 0\n' >gpnone/gnuplot
chmod +x gpfail/gnuplot gpnone/gnuplot
for g in gpfail gpnone; do
    for c in "fig1-cost-memory -t 30 -a 2" "fig2-chen-ratio -t 40 -a 2" "fig3-headline -t 30 -H 8 -B 2 -r 1" \
             "fig4-cost-length -t 40 -m 10,20" "fig5-schedule -t 20 -a 2 -m 8" "fig6-training -n 3" \
             "fig7-memory-time -t 30 -H 8 -B 2"; do
        set -- $c
        d=$1; shift
        hcase "$d: a gnuplot that $( [ $g = gpfail ] && echo fails || echo draws nothing ): non-zero, nothing written"
        rm -rf fo; mkdir fo
        PATH="$here/$g:$PATH" hrun -t 120 "$EXPERIMENTS/$d" -b "$BPTT" -o "$here/fo" "$@"
        if [ "$hrc" -eq 0 ]; then hfail "exit 0"
        elif [ -n "$(ls -A fo)" ]; then hfail "wrote: $(ls -A fo | tr '\n' ' ')"
        else hpass; fi
    done
done

# ---- a refusal is one line, whatever the value it quotes holds ----------------------
bad=$(printf 'x\nslurm-sweep: all good\033[2J')
hcase "slurm-sweep: ROWS with a newline and an escape: one clean line"
SLURM_ARRAY_TASK_ID=0 hrun -t 30 sh "$SCRIPTS/slurm-sweep" good.txt "$bad"
expect_refusal 2 && hpass
hcase "slurm-sweep --submit: ROWS with a newline and an escape: one clean line"
PATH="$here/sb:$PATH" hrun -t 30 sh "$SCRIPTS/slurm-sweep" --submit good.txt "$bad"
expect_refusal 2 && hpass
hcase "sweep-parallel: an unknown option with a newline: one clean line"
hrun -t 30 sh "$SCRIPTS/sweep-parallel" "-$bad" good.txt
expect_refusal 2 && hpass
hcase "sweep-parallel: a TMPDIR with a newline: one clean line"
TMPDIR="/nonexistent/$bad" hrun -t 30 sh "$SCRIPTS/sweep-parallel" good.txt
expect_refusal 2 && hpass
