# Chapter 3, experiments/plot-sweep: the sweep file it reads is checked
# whole before anything is drawn.  Not a regular file (a FIFO must not
# hang it, /dev/zero neither, a directory is said to be one), too large, a
# NUL or a control byte (the line and the column named), a record cut
# short or not read whole (its line named): one line on stderr, exit 2,
# nothing written.  The valid files it came from still plot.
PLOT=$EXPERIMENTS/plot-sweep
have_gnuplot() { command -v gnuplot >/dev/null 2>&1; }
"$BPTT" sweep --strategy chen,msm --length 50:100:50 --alpha 2 --memory 20%:100%:40 \
    --infeasible record --out p.jsonl 2>/dev/null
"$BPTT" sweep --strategy chen,msm --length 50:100:50 --alpha 2 --memory 20%:100%:40 \
    --infeasible record --out p.csv 2>/dev/null

# refused NAME FILE SAYS [ARGS...]: plot-sweep [ARGS] FILE exits 2 in one
# clean line matching SAYS (grep -E), writes nothing and leaves no
# temporary folder
refused() {
    hcase "$1"
    if ! have_gnuplot; then hskip "gnuplot is not installed"; return; fi
    f=$2 says=$3; shift 3
    rm -rf o; mkdir o
    hrun -t 20 "$PLOT" -o o/x "$@" "$f"
    expect_refusal 2 || return 0
    if ! grep -Eq "^plot-sweep: .*$says" err; then hfail "does not say /$says/: $(shown err)"
    elif [ -n "$(ls -A o)" ]; then hfail "wrote: $(ls -A o | tr '\n' ' ')"
    else hpass; fi
}
# line N of p.jsonl / p.csv changed by the sed script S, into OUT
edit() { sed "$1" "$2" >"$3"; }

mkfifo fifo.jsonl
refused "plot-sweep: a FIFO is refused, not waited on" fifo.jsonl "not a regular file"
refused "plot-sweep: /dev/zero is refused, not read" /dev/zero "not a regular file"
ln -s /dev/zero zero.jsonl
refused "plot-sweep: a link to /dev/zero is refused" zero.jsonl "not a regular file"
mkdir dir.jsonl
refused "plot-sweep: a directory is said to be one" dir.jsonl "'dir.jsonl' is a directory"
: >empty.jsonl
refused "plot-sweep: an empty file" empty.jsonl "is empty"
cp p.jsonl big.jsonl && truncate -s 300M big.jsonl
refused "plot-sweep: a file over the size bound" big.jsonl "more than the [0-9]+ a sweep file may be"

printf '\000' >nul
awk 'NR == 3 { printf "%s", substr($0, 1, 9); system("cat nul"); print substr($0, 10); next } { print }' p.jsonl >nul.jsonl
refused "plot-sweep: a NUL byte, with its line and column" nul.jsonl "nul.jsonl:3:10: a NUL byte"
edit '2s/"strategy":"chen"/"strategy":"ch\x1b[2Jen"/' p.jsonl esc.jsonl
refused "plot-sweep: an escape byte in a jsonl record, with its line and column" esc.jsonl "esc.jsonl:2:[0-9]+: a control byte \\(\\\\x1b\\)"
edit '3s/,chen,/,ch\x07en,/' p.csv bel.csv
refused "plot-sweep: a control byte in a csv row, with its line and column" bel.csv "bel.csv:3:[0-9]+: a control byte \\(\\\\x07\\)"
edit '4s/,chen,/,ch\ren,/' p.csv cr.csv
refused "plot-sweep: a carriage return inside a csv row" cr.csv "cr.csv:4:[0-9]+: a carriage return"

head -c $(($(wc -c <p.jsonl) - 40)) p.jsonl >cut.jsonl
refused "plot-sweep: a jsonl file cut short inside its last record" cut.jsonl \
    "cut.jsonl:$(wc -l <p.jsonl): the last line does not end with a newline"
head -c $(($(wc -c <p.csv) - 1)) p.csv >cut.csv
refused "plot-sweep: a csv file whose last row lost its newline" cut.csv \
    "cut.csv:$(wc -l <p.csv): the last line does not end with a newline"
{ head -n 3 p.jsonl; sed -n 4p p.jsonl | cut -c 1-60; tail -n +5 p.jsonl; } >mid.jsonl
refused "plot-sweep: a jsonl record cut short in the middle of the file" mid.jsonl "mid.jsonl:4: not a sweep record"
edit '5s/"alpha":2/"alpha":{"v":2}/' p.jsonl nest.jsonl
refused "plot-sweep: a record that is not a flat object" nest.jsonl "nest.jsonl:5: not a sweep record"
edit '3s/"alpha":2/"alpha":2,"strategy":"msm"/' p.jsonl twice.jsonl
refused "plot-sweep: a record with a key twice" twice.jsonl "twice.jsonl:3: not a sweep record"
edit '3s/}$/}{"point":99}/' p.jsonl two.jsonl
refused "plot-sweep: two objects on one line" two.jsonl "two.jsonl:3: not a sweep record"
edit '5s/$/,7/' p.csv wide.csv
refused "plot-sweep: a csv row wider than its header" wide.csv "wide.csv:5: 16 fields where the header has 15"
edit '6s/,[^,]*$//' p.csv narrow.csv
refused "plot-sweep: a csv row narrower than its header" narrow.csv "narrow.csv:6: 14 fields where the header has 15"
edit '4s/,0\.204082,/,1e999,/' p.csv inf.csv
refused "plot-sweep: a value past the doubles, drawn" inf.csv "not a finite number" -x memory_fraction

# the valid files these came from still plot
for f in p.jsonl p.csv; do
    hcase "plot-sweep: the valid $f still plots"
    if ! have_gnuplot; then hskip "gnuplot is not installed"; continue; fi
    rm -rf o; mkdir o
    hrun -t 30 "$PLOT" -o o/x "$f"
    if [ "$hrc" -ne 0 ]; then hfail "exit $hrc: $(shown err)"
    elif ! one_line err || ! grep -q '^plot-sweep: wrote o/x.{png,svg,csv}: ' err; then hfail "stderr: $(shown err)"
    elif [ "$(ls o | tr '\n' ' ')" != "x.csv x.png x.svg " ]; then hfail "wrote: $(ls -A o | tr '\n' ' ')"
    else hpass; fi
done
# names that awk or head would take for something else: an assignment, an
# option
for n in "x=1.jsonl" "-p.jsonl"; do
    hcase "plot-sweep: a sweep file named $n is read as a file"
    if ! have_gnuplot; then hskip "gnuplot is not installed"; continue; fi
    cp p.jsonl "./$n"
    rm -rf o; mkdir o
    hrun -t 30 "$PLOT" -o o/x -- "$n"
    if [ "$hrc" -ne 0 ]; then hfail "exit $hrc: $(shown err)"
    elif ! grep -q '^plot-sweep: wrote o/x.{png,svg,csv}: 11 points' err; then hfail "stderr: $(shown err)"
    else hpass; fi
done
