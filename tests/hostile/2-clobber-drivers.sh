# Chapter 2, the figure drivers and the Python comparisons: what they
# write in their output folder goes first to a temporary that mktemp
# makes there (a fresh name, made exclusively), never to a name another
# user can guess and plant a link at.  The names they used before were
# NAME.tmp.PID (and NAME.tmp for experiments/reproduce): each case plants
# a link at every such name, dangling or to a victim file, from a shell
# that then execs the driver (exec keeps the pid, so the names are the
# ones the driver would use), and checks that the driver still works, the
# victim is as it was, the dangling link's target was not made, and every
# output is a regular file.
here=$(pwd)
VICTIM=$here/victim NOWHERE=$here/nowhere
have_gnuplot() { command -v gnuplot >/dev/null 2>&1; }
have_torch() { /usr/bin/python3 -c 'import torch, numpy' 2>/dev/null; }

# planted KIND DIR NAMES -- COMMAND...: COMMAND run (hrun) from a shell of
# the pid it will have, which first plants in DIR a link at each of NAMES
# (PID in a name standing for that pid): dangling (to ./nowhere), or to
# ./victim, which holds "precious"
planted() {
    p_kind=$1 p_dir=$2 p_names=$3
    shift 4
    rm -f "$VICTIM" "$NOWHERE"
    echo precious >"$VICTIM"
    p_to=$VICTIM
    [ "$p_kind" = victim ] || p_to=$NOWHERE
    # shellcheck disable=SC2016 # expanded by that shell
    hrun -t 180 sh -c 'to=$1 dir=$2 names=$3; shift 3
        for n in $names; do ln -s "$to" "$dir/$(printf "%s" "$n" | sed "s/PID/$$/")" || exit 99; done
        exec "$@"' sh "$p_to" "$p_dir" "$p_names" "$@"
}
# untouched DIR FILES: the command succeeded, nothing was written through
# a link, and each of FILES is in DIR as a regular file that is not empty
untouched() {
    if [ "$(cat "$VICTIM")" != precious ]; then hfail "the victim was written: $(shown "$VICTIM")"; return; fi
    if [ -e "$NOWHERE" ]; then hfail "the dangling link's target was made: $(shown "$NOWHERE")"; return; fi
    if [ "$hrc" -ne 0 ]; then hfail "exit $hrc: $(shown err)"; return; fi
    for f in $2; do
        if [ -L "$1/$f" ] || [ ! -f "$1/$f" ] || [ ! -s "$1/$f" ]; then
            hfail "$f is not a regular file holding the output: $(ls -l "$1/$f" 2>&1)"; return
        fi
    done
    hpass
}

# ---- the figure drivers: NAME.tmp.PID in OUTDIR ----------------------------
FIG3_TMP="fig3-headline.csv.tmp.PID fig3-headline.csv.tmp.PID.raw fig3-headline.png.tmp.PID fig3-headline.svg.tmp.PID"
FIG6_TMP="fig6-training.csv.tmp.PID fig6-training.png.tmp.PID fig6-training.svg.tmp.PID"
FIG7_TMP="fig7-memory-time.csv.tmp.PID fig7-memory-time.png.tmp.PID fig7-memory-time.svg.tmp.PID"
for s in full chen hsm msm; do FIG7_TMP="$FIG7_TMP fig7-memory-time-$s.csv.tmp.PID"; done
for kind in dangling victim; do
    hcase "fig3-headline: links ($kind) planted at its temporaries' old names are not written through"
    if ! have_gnuplot; then hskip "gnuplot is not installed"
    else
        rm -rf o && mkdir o
        planted "$kind" o "$FIG3_TMP" -- "$EXPERIMENTS/fig3-headline" -b "$BPTT" -t 30 -H 8 -B 2 -r 1 -o o
        untouched o "fig3-headline.csv fig3-headline.png fig3-headline.svg"
    fi
    hcase "fig6-training: links ($kind) planted at its temporaries' old names are not written through"
    if ! have_gnuplot; then hskip "gnuplot is not installed"
    else
        rm -rf o && mkdir o
        planted "$kind" o "$FIG6_TMP" -- "$EXPERIMENTS/fig6-training" -b "$BPTT" -n 3 -o o
        untouched o "fig6-training.csv fig6-training.png fig6-training.svg"
    fi
    hcase "fig7-memory-time: links ($kind) planted at its temporaries' old names are not written through"
    if ! have_gnuplot; then hskip "gnuplot is not installed"
    else
        rm -rf o && mkdir o
        planted "$kind" o "$FIG7_TMP" -- "$EXPERIMENTS/fig7-memory-time" -b "$BPTT" -t 30 -H 8 -B 2 -o o
        untouched o "fig7-memory-time.csv fig7-memory-time.png fig7-memory-time.svg fig7-memory-time-msm.csv"
    fi
done
# a link to a directory at an output's own name: the output replaces the
# link (mv -T), never lands inside the directory
hcase "fig3-headline: a link to a directory at fig3-headline.csv is replaced, the directory left empty"
if ! have_gnuplot; then hskip "gnuplot is not installed"
else
    rm -rf o vdir && mkdir o vdir && ln -s ../vdir o/fig3-headline.csv
    hrun -t 180 "$EXPERIMENTS/fig3-headline" -b "$BPTT" -t 30 -H 8 -B 2 -r 1 -o o
    if [ "$hrc" -ne 0 ]; then hfail "exit $hrc: $(shown err)"
    elif [ -n "$(ls -A vdir)" ]; then hfail "written into the linked directory: $(ls -A vdir | tr '\n' ' ')"
    elif [ -L o/fig3-headline.csv ] || [ ! -s o/fig3-headline.csv ]; then hfail "fig3-headline.csv not in place"
    else hpass; fi
fi
hcase "the figure drivers leave no temporary in OUTDIR"
if ! have_gnuplot; then hskip "gnuplot is not installed"
elif ls -A o | grep -q '^\.'; then hfail "left: $(ls -A o | grep '^\.' | tr '\n' ' ')"
else hpass; fi

# ---- experiments/reproduce: OUTDIR/machine.txt.tmp, timings.csv.tmp, and
# headline.txt written in place ---------------------------------------------
mkdir -p tree/experiments fakegp
cp "$EXPERIMENTS/reproduce" tree/experiments/
# shellcheck disable=SC2016 # the stand-in's own words
printf '#!/bin/sh\ncase $1 in --version) echo bptt ;; run) echo "{}" ;; esac\n' >tree/bptt
for d in headline fig6-training fig7-memory-time fig1-cost-memory fig2-chen-ratio fig4-cost-length fig5-schedule; do
    printf '#!/bin/sh\necho "%s stand-in"\n' "$d" >"tree/experiments/$d"
done
printf '#!/bin/sh\necho "gnuplot 5.4 (stand-in)"\n' >fakegp/gnuplot
chmod +x tree/bptt tree/experiments/* fakegp/gnuplot
for kind in dangling victim; do
    hcase "reproduce: links ($kind) planted at machine.txt.tmp, timings.csv.tmp and headline.txt are not written through"
    rm -rf r && mkdir r
    PATH="$here/fakegp:$PATH" planted "$kind" r "machine.txt.tmp timings.csv.tmp headline.txt" -- \
        sh tree/experiments/reproduce -q -o "$here/r"
    untouched r "machine.txt timings.csv headline.txt"
done
rm -rf tree fakegp r

# ---- experiments/pytorch-compare: OUTDIR/pytorch-compare.csv.tmp.PID (the
# wrapper and python exec in turn: one pid); torch-scan -o FILE: FILE
# was opened for writing, through a link there --------------------------------
for kind in dangling victim; do
    hcase "pytorch-compare: links ($kind) planted at its temporary's old name are not written through"
    if ! have_torch; then hskip "python3 cannot import torch and numpy"
    else
        rm -rf o && mkdir o
        planted "$kind" o "pytorch-compare.csv.tmp.PID" -- "$EXPERIMENTS/pytorch-compare" -b "$BPTT" \
            -t 20 -H 8 -B 2 -X 4 -j 1 -i 1 -g 10,8,2,4 -o o
        untouched o pytorch-compare.csv
    fi
    hcase "torch-scan -o: a link ($kind) at the output's name is replaced, not written through"
    if ! have_torch; then hskip "python3 cannot import torch and numpy"
    elif [ "${BPTT_SANITIZERS:-no}" = yes ]; then
        hskip "a sanitizer build's library cannot be loaded into python3 (the plain build runs it)"
    else
        rm -rf o && mkdir o
        # the core library where make built it (the source tree holds
        # none in a build of its own, as make distcheck's)
        planted "$kind" o "scan.csv" -- env BPTT_MSM_LIBDIR="$(dirname "$BPTT")/.libs" \
            /usr/bin/python3 "$EXPERIMENTS/torch-scan" -q -m lstm -o o/scan.csv
        untouched o scan.csv
    fi
done
rm -rf o vdir victim nowhere
