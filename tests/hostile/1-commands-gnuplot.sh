# Chapter 1, experiments/plot-sweep: nothing the data, the options or the
# file names hold reaches gnuplot as a command.  Each case puts a payload
# that would make $HOSTILE_MARK (a newline followed by a gnuplot command,
# a shell escape line, a backquoted command, an @macro) in one value that
# goes into the gnuplot script: a jsonl or csv string used as a curve's
# label (--by strategy, --by memory_spec), --title, a --where value, the
# name of the sweep file and of the output.  The plot is drawn all the
# same (the value shown with its control bytes escaped), or, for a name
# with a control byte, refused in one line; the marker never appears.
# Then the figure drivers (experiments/fig1..fig7) with an output folder
# (or TMPDIR) whose name would end a single-quoted gnuplot string and call
# system(), and experiments/reproduce with one that would end a quoted
# shell word: each draws, and runs nothing.
PLOT=$EXPERIMENTS/plot-sweep
# the payloads: a newline then a command, commented to the end of the
# line; each names the marker as $HOSTILE_MARK (exported), which the shell
# gnuplot would start expands (so that file names can hold them: no /)
P_SYS='x
system("touch $HOSTILE_MARK") # '
P_BANG='x
!touch $HOSTILE_MARK
# '
P_BQ='a`touch $HOSTILE_MARK`b'
P_AT='m@x'
# quotes that gnuplot 5.4 reads wrongly when doubled (four in a row end a
# single-quoted string), then a command after ;
P_Q=$(printf 'it\047\047s "q" \047\047\047\047; system("touch $HOSTILE_MARK"); \047\047 `touch $HOSTILE_MARK` @x $(touch $HOSTILE_MARK)')

# drawn BASE: BASE.png (a PNG), BASE.svg (whole) and BASE.csv are there
drawn() {
    [ "$(head -c 8 "$1.png" 2>/dev/null | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] &&
        tail -n 2 "$1.svg" 2>/dev/null | grep -q '</svg>' && [ -s "$1.csv" ]
}
# json_str S: S as a JSON string's inside (backslash, quote, newline escaped)
json_str() { printf '%s' "$1" | sed 's/\\/\\\\/g; s/"/\\"/g' | awk 'NR > 1 { printf "\\n" } { printf "%s", $0 }'; }
# csv_str S: S as a quoted csv field (a newline stays a newline)
csv_str() { printf '"%s"' "$(printf '%s' "$1" | sed 's/"/""/g')"; }

# plot_case NAME ARGS...: plot-sweep ARGS draws out/x.* and runs no payload
plot_case() {
    hcase "$1"; shift
    if ! command -v gnuplot >/dev/null 2>&1; then hskip "gnuplot is not installed"; return; fi
    rm -rf out.d; mkdir out.d
    hrun -t 30 "$PLOT" -o out.d/x "$@"
    if ! marker_absent; then hfail "a command smuggled in ran"
    elif [ "$hrc" -ne 0 ]; then hfail "exit $hrc: $(shown err)"
    elif ! one_line err; then hfail "stderr is not one clean line: $(shown err)"
    elif ! drawn out.d/x; then hfail "no plot drawn: $(ls -A out.d | tr '\n' ' ')"
    else hpass; fi
}
# name_case NAME ARGS...: plot-sweep ARGS runs no payload and either draws
# or refuses in one clean line (exit 2)
name_case() {
    hcase "$1"; shift
    if ! command -v gnuplot >/dev/null 2>&1; then hskip "gnuplot is not installed"; return; fi
    hrun -t 30 "$PLOT" "$@"
    if ! marker_absent; then hfail "a command smuggled in ran"
    elif [ "$hrc" -eq 0 ]; then hpass
    else expect_refusal 2 && hpass; fi
}

"$BPTT" sweep --strategy chen,msm --length 50:100:50 --alpha 2 --memory 20%:100%:40 \
    --infeasible record --out p.jsonl 2>/dev/null
"$BPTT" sweep --strategy chen,msm --length 50:100:50 --alpha 2 --memory 20%:100%:40 \
    --infeasible record --out p.csv 2>/dev/null
# hostile_jsonl FIELD VALUE OUT: p.jsonl with FIELD of its records' second
# half set to VALUE
hostile_jsonl() {
    HV=$(json_str "$2") HF=$1
    export HV HF
    awk 'BEGIN { f = ENVIRON["HF"]; v = ENVIRON["HV"] } NR > 1 && NR % 2 == 0 {
        i = index($0, "\"" f "\":\""); j = index(substr($0, i + length(f) + 4), "\"")
        $0 = substr($0, 1, i + length(f) + 3) v substr($0, i + length(f) + 3 + j) } { print }' \
        p.jsonl >"$3"
}
# hostile_csv FIELD VALUE OUT: the same for p.csv (VALUE a quoted field)
hostile_csv() {
    HV=$(csv_str "$2") HF=$1
    export HV HF
    awk -F, 'BEGIN { f = ENVIRON["HF"]; v = ENVIRON["HV"] } NR == 2 { for (i = 1; i <= NF; i++) if ($i == f) c = i }
        NR > 2 && NR % 2 == 0 { n = split($0, a, ","); $0 = ""
            for (i = 1; i <= n; i++) $0 = $0 (i > 1 ? "," : "") (i == c ? v : a[i]) }
        { print }' p.csv >"$3"
}

for p in SYS BANG BQ AT Q; do
    eval "v=\$P_$p"
    hostile_jsonl strategy "$v" "s-$p.jsonl"
    plot_case "plot-sweep: jsonl strategy label holding $p" "s-$p.jsonl"
    hostile_jsonl memory_spec "$v" "m-$p.jsonl"
    plot_case "plot-sweep: jsonl --by memory_spec label holding $p" --by memory_spec "m-$p.jsonl"
    plot_case "plot-sweep: jsonl --by strategy,memory_spec label holding $p" --by strategy,memory_spec "m-$p.jsonl"
    hostile_csv strategy "$v" "s-$p.csv"
    plot_case "plot-sweep: csv strategy label holding $p" "s-$p.csv"
    plot_case "plot-sweep: --title holding $p" --title "$v" p.jsonl
done
# the metadata line's values reach the title (version, revision, grid)
for p in SYS BANG Q; do
    eval "v=\$P_$p"
    HV=$(json_str "$v")
    export HV
    awk 'NR == 1 { v = ENVIRON["HV"]; gsub(/&/, "\\\\&", v)
        sub(/"version":"[^"]*"/, "\"version\":\"" v "\"")
        sub(/"git_revision":"[^"]*"/, "\"git_revision\":\"" v "\"")
        sub(/; alpha=2;/, "; alpha=2" v ";") } { print }' p.jsonl >"meta-$p.jsonl"
    plot_case "plot-sweep: metadata (version, revision, grid) holding $p" "meta-$p.jsonl"
done
# a csv column named with a payload, used by --where (the filter is in the title)
HV=$(csv_str "$P_BQ@x")
export HV
awk 'BEGIN { n = ENVIRON["HV"] } NR == 2 { sub(/,recompute_ops,/, "," n ",") } { print }' p.csv >where.csv
plot_case "plot-sweep: --where on a csv field named with a payload" --where "$P_BQ@x!=zz" where.csv
plot_case "plot-sweep: --where value holding quotes, backquotes, @" \
    --where "strategy!=$P_Q" p.jsonl
plot_case "plot-sweep: --where value holding a backquoted command" \
    --where "strategy!=$P_BQ,$P_AT" p.csv
name_case "plot-sweep: --where value holding a newline and a command" \
    --where "strategy!=$P_SYS" -o w p.jsonl

# names: the sweep file's and the output's
for p in BQ AT Q; do
    eval "v=\$P_$p"
    cp p.jsonl "f$v.jsonl"
    plot_case "plot-sweep: a sweep file named with $p" "f$v.jsonl"
    mkdir -p "d$v"
    hcase "plot-sweep: an output directory named with $p"
    if ! command -v gnuplot >/dev/null 2>&1; then hskip "gnuplot is not installed"
    else
        hrun -t 30 "$PLOT" -o "d$v/x" p.csv
        if ! marker_absent; then hfail "a command smuggled in ran"
        elif [ "$hrc" -ne 0 ]; then hfail "exit $hrc: $(shown err)"
        elif ! drawn "d$v/x"; then hfail "no plot drawn in d$v"
        else hpass; fi
    fi
done
for p in SYS BANG; do
    eval "v=\$P_$p"
    cp p.jsonl "f$v.jsonl"
    name_case "plot-sweep: a sweep file named with a newline and $p" "f$v.jsonl"
    mkdir -p "d$v"
    name_case "plot-sweep: an output directory named with a newline and $p" -o "d$v/x" p.jsonl
    name_case "plot-sweep: an output named with a newline and $p" -o "o$v" p.jsonl
    mkdir -p "e$v"
    cp p.jsonl "e$v/in.jsonl"
    name_case "plot-sweep: the default output beside a file in a directory named with $p" "e$v/in.jsonl"
done
# field names from the header reach the labels: a csv column named with a
# payload (recompute_ops renamed), drawn as -y
hcase "plot-sweep: a csv field name holding a payload, as -y"
if ! command -v gnuplot >/dev/null 2>&1; then hskip "gnuplot is not installed"
else
    HV=$(csv_str "$P_BQ@x")
    export HV
    awk 'BEGIN { n = ENVIRON["HV"] } NR == 2 { sub(/,recompute_ops,/, "," n ",") } { print }' p.csv >hdr.csv
    hrun -t 30 "$PLOT" -y "$P_BQ@x" -o hdr hdr.csv
    if ! marker_absent; then hfail "a command smuggled in ran"
    elif [ "$hrc" -eq 0 ] || expect_refusal 2; then hpass; fi
fi

# ---- the figure drivers: OUTDIR (and TMPDIR) reach gnuplot's command line --
# a directory named to end a single-quoted string there and call system()
P_DIR='o'"'"'; system("touch $HOSTILE_MARK"); x='"'"
mkdir -p "$P_DIR" "t$P_DIR"
# driver_case NAME FILES -- COMMAND...: COMMAND exits 0, runs no payload
# and writes FILES (in $P_DIR)
driver_case() {
    hcase "$1"; files=$2; shift 3
    if ! command -v gnuplot >/dev/null 2>&1; then hskip "gnuplot is not installed"; return; fi
    rm -f "$P_DIR"/*
    hrun -t 120 "$@"
    if ! marker_absent; then hfail "a command smuggled in ran"
    elif [ "$hrc" -ne 0 ]; then hfail "exit $hrc: $(shown err)"
    else
        for f in $files; do [ -s "$P_DIR/$f" ] || { hfail "no $f"; return; }; done
        hpass
    fi
}
driver_case "fig1-cost-memory: -o naming a directory that holds a gnuplot command" \
    "fig1-cost-memory.png fig1-cost-memory.csv" -- \
    "$EXPERIMENTS/fig1-cost-memory" -b "$BPTT" -t 30 -a 2 -o "$P_DIR"
driver_case "fig2-chen-ratio: -o naming a directory that holds a gnuplot command" \
    "fig2-chen-ratio.png fig2-chen-ratio.csv" -- \
    "$EXPERIMENTS/fig2-chen-ratio" -b "$BPTT" -t 40 -a 2 -o "$P_DIR"
driver_case "fig3-headline: -o naming a directory that holds a gnuplot command" \
    "fig3-headline.png fig3-headline.csv" -- \
    "$EXPERIMENTS/fig3-headline" -b "$BPTT" -t 30 -H 8 -B 2 -r 1 -o "$P_DIR"
driver_case "fig4-cost-length: -o naming a directory that holds a gnuplot command" \
    "fig4-cost-length.png fig4-cost-length.csv" -- \
    "$EXPERIMENTS/fig4-cost-length" -b "$BPTT" -t 40 -m 10,20 -o "$P_DIR"
driver_case "fig5-schedule: -o naming a directory that holds a gnuplot command" \
    "fig5-schedule.png fig5-schedule.csv" -- \
    "$EXPERIMENTS/fig5-schedule" -b "$BPTT" -t 20 -a 2 -m 8 -o "$P_DIR"
driver_case "fig6-training: TMPDIR naming a directory that holds a gnuplot command" \
    "fig6-training.png fig6-training.csv" -- \
    env TMPDIR="$(pwd)/t$P_DIR" "$EXPERIMENTS/fig6-training" -b "$BPTT" -n 3 -o "$P_DIR"
driver_case "fig7-memory-time: -o and TMPDIR naming directories that hold a gnuplot command" \
    "fig7-memory-time.png fig7-memory-time.csv" -- \
    env TMPDIR="$(pwd)/t$P_DIR" "$EXPERIMENTS/fig7-memory-time" -b "$BPTT" -t 30 -H 8 -B 2 -o "$P_DIR"

# ---- experiments/reproduce: OUTDIR went into an sh -c command line ----------
hcase "reproduce: -o naming a directory that holds a shell command"
mkdir -p tree/experiments
cp "$EXPERIMENTS/reproduce" tree/experiments/
printf '#!/bin/sh\ncase $1 in --version) echo bptt ;; run) echo "{}" ;; esac\n' >tree/bptt
for d in headline fig6-training fig7-memory-time fig1-cost-memory fig2-chen-ratio fig4-cost-length fig5-schedule; do
    printf '#!/bin/sh\necho stand-in\n' >"tree/experiments/$d"
done
chmod +x tree/bptt tree/experiments/*
S_DIR='r'"'"'; touch "$HOSTILE_MARK"; x='"'"
hrun -t 60 sh tree/experiments/reproduce -q -o "$(pwd)/$S_DIR"
if ! marker_absent; then hfail "a command smuggled in ran"
elif [ "$hrc" -ne 0 ]; then hfail "exit $hrc: $(shown err)"
elif [ ! -s "$S_DIR/timings.csv" ]; then hfail "no timings.csv"
else hpass; fi
