# Chapter 3, what `bptt sweep` reads back: FILE.partial when it resumes,
# the parts of --merge and --only, a finished FILE, its --config file.
# Every record is parsed whole and checked against the grid (its point,
# its coordinates, the fields of its mode) before it is kept; a bad one is
# refused on one line naming the file and line, and nothing is written.
# Only a last line without its newline (a sweep killed while writing it)
# is dropped silently.  Files that are not regular files, are too big, or
# hold NUL or control bytes (the config) are refused at once.
export SOURCE_DATE_EPOCH=1
G="--strategy msm,hsm --length 10,20 --alpha 2 --memory 50%"
"$BPTT" sweep $G --out ref.jsonl </dev/null >/dev/null 2>&1 || true
"$BPTT" sweep $G --out ref.csv </dev/null >/dev/null 2>&1 || true
"$BPTT" sweep --strategy msm,hsm --length 30,40 --alpha 2 --memory 50% \
    --out other.jsonl </dev/null >/dev/null 2>&1 || true

# partial N: k.jsonl.partial holding the header and N records (a sweep
# killed after N points), no k.jsonl.
partial() {
    rm -f k.jsonl k.jsonl.partial
    BPTT_SWEEP_DIE_AFTER=$1 "$BPTT" sweep $G --out k.jsonl </dev/null \
        >/dev/null 2>&1 || true
    [ -s k.jsonl.partial ] && [ ! -e k.jsonl ]
}

# refused_resume LINE: the resume exits 2 with one line naming
# k.jsonl.partial:LINE, writes no k.jsonl and leaves the partial file.
refused_resume() {
    cp k.jsonl.partial k.before
    hrun "$BPTT" sweep $G --out k.jsonl
    expect_refusal 2 || return 0
    grep -qF "k.jsonl.partial:$1 " err || { hfail "the line does not name k.jsonl.partial:$1: $(shown err)"; return 0; }
    grep -qF -- "--force" err || { hfail "the line does not say --force: $(shown err)"; return 0; }
    [ ! -e k.jsonl ] || { hfail "k.jsonl was written"; return 0; }
    cmp -s k.jsonl.partial k.before || { hfail "the partial file was changed"; return 0; }
    hpass
}

# resumed: the resume exits 0 and k.jsonl equals an uninterrupted sweep's.
resumed() {
    hrun "$BPTT" sweep $G --out k.jsonl "$@"
    [ "$hrc" -eq 0 ] || { hfail "exit $hrc: $(shown err)"; return 0; }
    cmp -s k.jsonl ref.jsonl || { hfail "k.jsonl differs from ref.jsonl"; return 0; }
    [ ! -e k.jsonl.partial ] || { hfail "the partial file is left"; return 0; }
    hpass
}

# set_line N TEXT: line N of k.jsonl.partial replaced by TEXT.
set_line() {
    awk -v n="$1" -v t="$2" 'NR == n { print t; next } { print }' \
        k.jsonl.partial >k.new && mv k.new k.jsonl.partial
}

# The header of FILE is the one an uninterrupted sweep writes, whatever
# the partial's says of the machine: a sweep short of descriptors (ulimit
# -n 4) could not read /proc/cpuinfo and wrote "cpu_model":"unknown"; the
# rerun's FILE is still byte for byte the reference.
hcase "resume after a run under ulimit -n 4 writes the header a whole sweep writes"
rm -f k.jsonl k.jsonl.partial
(ulimit -n 4; exec "$BPTT" sweep $G --out k.jsonl) </dev/null >/dev/null 2>&1 || true
if [ -e k.jsonl ] || [ ! -s k.jsonl.partial ]; then
    hskip "under ulimit -n 4 this sweep left no partial file here"
else
    resumed
fi

hcase "resume takes no machine fact from FILE.partial's header (a forged cpu_model)"
if partial 2; then
    sed -i '1s/"cpu_model":"[^"]*"/"cpu_model":"forged"/; 1s/"cpu_cores":[0-9]*/"cpu_cores":999/' k.jsonl.partial
    resumed
else hfail "no partial file"; fi

hcase "resume refuses a corrupted middle line of FILE.partial (JSON cut inside)"
if partial 3; then
    set_line 3 "$(sed -n 3p k.jsonl.partial | sed 's/"forward_ops":[0-9]*/"forward_ops":/')"
    refused_resume 3
else hfail "no partial file"; fi

hcase "resume refuses a record of another sweep's grid in FILE.partial"
if partial 3; then
    set_line 2 "$(sed -n 2p other.jsonl)"
    refused_resume 2
else hfail "no partial file"; fi

hcase "resume refuses a record whose point is not in the grid"
if partial 3; then
    set_line 4 "$(sed -n 2p ref.jsonl | sed 's/^{"point":0,/{"point":9,/')"
    refused_resume 4
else hfail "no partial file"; fi

hcase "resume refuses a record that lacks the fields plan mode writes"
if partial 3; then
    set_line 3 '{"point":1,"memory_spec":"50%","strategy":"msm","length":20,"alpha":2}'
    refused_resume 3
else hfail "no partial file"; fi

hcase "resume refuses a record whose memory_spec is not its point's"
if partial 3; then
    set_line 3 "$(sed -n 3p ref.jsonl | sed 's/"memory_spec":"50%"/"memory_spec":"5%"/')"
    refused_resume 3
else hfail "no partial file"; fi

hcase "resume refuses text after a record's object on its line"
if partial 3; then
    set_line 2 "$(sed -n 2p ref.jsonl) x"
    refused_resume 2
else hfail "no partial file"; fi

hcase "resume refuses two different records of one point"
if partial 3; then
    sed -n 2p ref.jsonl | sed 's/"actions":\([0-9]*\)/"actions":1\1/' >>k.jsonl.partial
    refused_resume 5
else hfail "no partial file"; fi

# A plan-mode record is a function of its point: one forged to say
# something else is refused, naming the file, the line and the field.
nulled='s/"\(forward_ops\|recompute_ops\|backward_ops\|peak_slots\|forward_ops_per_step\|memory_fraction\|actions\)":[0-9.]*/"\1":null/g'
for forged in "infeasible:$nulled:forward_ops" \
              "min_memory:s/\"min_memory\":[0-9.]*/\"min_memory\":999/:min_memory" \
              "full_peak_slots:s/\"full_peak_slots\":[0-9.]*/\"full_peak_slots\":7/:full_peak_slots" \
              "backward_ops:s/\"backward_ops\":[0-9]*/\"backward_ops\":3/:backward_ops" \
              "forward_ops_per_step:s/\"forward_ops_per_step\":[0-9.]*/\"forward_ops_per_step\":0.5/:forward_ops_per_step" \
              "peak_slots:s/\"peak_slots\":[0-9.]*/\"peak_slots\":1000/:peak_slots"; do
    what=${forged%%:*} rest=${forged#*:}
    field=${rest##*:} expr=${rest%:*}
    hcase "resume refuses a forged plan record ($what), naming the field"
    if partial 3; then
        set_line 3 "$(sed -n 3p ref.jsonl | sed "$expr")"
        cp k.jsonl.partial k.before
        hrun "$BPTT" sweep $G --out k.jsonl
        if expect_refusal 2; then
            if ! grep -qF "k.jsonl.partial:3 " err; then hfail "the line does not name k.jsonl.partial:3: $(shown err)"
            elif ! grep -qF "\"$field\"" err; then hfail "the line does not name \"$field\": $(shown err)"
            elif ! grep -qF -- "--force" err; then hfail "the line does not say --force: $(shown err)"
            elif [ -e k.jsonl ]; then hfail "k.jsonl was written"
            elif ! cmp -s k.jsonl.partial k.before; then hfail "the partial file was changed"
            else hpass; fi
        fi
    else hfail "no partial file"; fi
done

hcase "resume refuses a forged plan record (an infeasible point given counts)"
G2="--strategy msm --length 10 --alpha 2 --memory 0,50% --infeasible record"
rm -f i.jsonl i.jsonl.partial
"$BPTT" sweep $G2 --out i2.jsonl </dev/null >/dev/null 2>&1 || true
BPTT_SWEEP_DIE_AFTER=1 "$BPTT" sweep $G2 --out i.jsonl </dev/null >/dev/null 2>&1 || true
if [ -s i.jsonl.partial ] && [ ! -e i.jsonl ] && [ -s i2.jsonl ]; then
    # point 1's counts (50%, feasible) as point 0's (0 slots, infeasible)
    { sed -n 1p i.jsonl.partial
      sed -n 3p i2.jsonl | sed 's/"point":1,"memory_spec":"50%"/"point":0,"memory_spec":"0"/; s/"memory":[0-9]*/"memory":0/'
    } >i.new && mv i.new i.jsonl.partial
    hrun "$BPTT" sweep $G2 --out i.jsonl
    if expect_refusal 2; then
        grep -qF 'i.jsonl.partial:2 is not a record of this sweep (its "forward_ops" is 15, not this point'"'"'s null)' err &&
            hpass || hfail "$(shown err)"
    fi
else hfail "no partial file"; fi

# A run-mode record: training is not redone, but what the point and the
# record's own sizes determine is checked.
G3="--mode run --length 8 --hidden 4 --batch 2 --memory 50%,2slots --iters 1"
rm -f r.jsonl r.jsonl.partial
BPTT_SWEEP_DIE_AFTER=1 "$BPTT" sweep $G3 --out r.jsonl </dev/null >/dev/null 2>&1 || true
for forged in 's/"memory_budget_bytes":[0-9]*/"memory_budget_bytes":1/:memory_budget_bytes' \
              's/"backward_ops":[0-9]*/"backward_ops":9/:backward_ops' \
              's/"full_checkpoint_bytes":[0-9]*/"full_checkpoint_bytes":7/:full_checkpoint_bytes' \
              's/"memory_given":"[^"]*"/"memory_given":"99%"/:memory_given'; do
    field=${forged##*:} expr=${forged%:*}
    hcase "resume refuses a forged run record ($field), naming the field"
    if [ -s r.jsonl.partial ] && [ ! -e r.jsonl ] && [ "$(wc -l <r.jsonl.partial)" -eq 2 ]; then
        cp r.jsonl.partial r.keep
        sed -i "2$expr" r.jsonl.partial
        hrun "$BPTT" sweep $G3 --out r.jsonl
        if expect_refusal 2; then
            grep -qF "r.jsonl.partial:2 is not a record of this sweep (its \"$field\"" err &&
                hpass || hfail "$(shown err)"
        fi
        mv r.keep r.jsonl.partial; rm -f r.jsonl
    else hfail "no partial file of one run"; fi
done

hcase "resume refuses a record giving a key twice"
if partial 3; then
    set_line 3 "$(sed -n 3p ref.jsonl | sed 's/}$/,"forward_ops":1}/')"
    refused_resume 3
else hfail "no partial file"; fi

hcase "resume keeps one of two equal records of one point"
if partial 3; then
    sed -n 2p k.jsonl.partial >>k.jsonl.partial
    resumed
else hfail "no partial file"; fi

hcase "resume drops a last line cut short (a kill while writing it)"
if partial 3; then
    sed -n 2p ref.jsonl | head -c 40 >>k.jsonl.partial
    resumed
else hfail "no partial file"; fi

hcase "resume with --force starts over past a corrupted FILE.partial"
if partial 3; then
    set_line 3 'garbage'
    resumed --force
else hfail "no partial file"; fi

hcase "resume refuses a FILE.partial that is a directory, as a directory"
rm -rf k.jsonl k.jsonl.partial
mkdir k.jsonl.partial
hrun "$BPTT" sweep $G --out k.jsonl
expect_refusal 2 && { grep -q "directory" err || hfail "$(shown err)"; } &&
    [ ! -e k.jsonl ] && hpass
[ -z "$h_name" ] || hfail "k.jsonl was written"
rmdir k.jsonl.partial

hcase "resume refuses a FILE.partial that is a FIFO, at once"
mkfifo k.jsonl.partial
hrun -t 5 "$BPTT" sweep $G --out k.jsonl
expect_refusal 2 && [ ! -e k.jsonl ] && hpass
[ -z "$h_name" ] || hfail "k.jsonl was written"
rm -f k.jsonl.partial

# ---- a finished FILE -----------------------------------------------------

# refused_file FILE: a rerun exits 2 with one line saying how many
# records FILE holds and that --force recomputes it; FILE is left as it
# was; --force then makes it whole.
refused_file() {
    cp "$1" f.before
    hrun "$BPTT" sweep $G --out "$1"
    expect_refusal 2 || return 0
    grep -q "holds [0-9]* of 4 records" err || { hfail "no count: $(shown err)"; return 0; }
    grep -qF -- "--force recomputes it" err || { hfail "no --force: $(shown err)"; return 0; }
    cmp -s "$1" f.before || { hfail "$1 was changed"; return 0; }
    hrun "$BPTT" sweep $G --out "$1" --force
    [ "$hrc" -eq 0 ] || { hfail "--force: exit $hrc: $(shown err)"; return 0; }
    cmp -s "$1" "ref.${1##*.}" || { hfail "--force did not make it whole"; return 0; }
    hpass
}

hcase "a FILE cut down to its header is not called complete"
head -n 1 ref.jsonl >f.jsonl
refused_file f.jsonl

hcase "a FILE without its last record is not called complete"
head -n 4 ref.jsonl >f.jsonl
refused_file f.jsonl

hcase "a FILE whose last line is cut short is not called complete"
head -c -10 ref.jsonl >f.jsonl
refused_file f.jsonl

hcase "a FILE with a corrupted middle record is not called complete"
sed '3s/"strategy":"msm"/"strategy":"hsm"/' ref.jsonl >f.jsonl
refused_file f.jsonl

hcase "a FILE with records out of order is not called complete"
{ sed -n 1p ref.jsonl; sed -n 3p ref.jsonl; sed -n 2p ref.jsonl; sed -n '4,$p' ref.jsonl; } >f.jsonl
refused_file f.jsonl

hcase "a FILE with a line more than the grid's points is not called complete"
{ cat ref.jsonl; sed -n 2p ref.jsonl; } >f.jsonl
refused_file f.jsonl

hcase "a csv FILE without its last rows is not called complete"
head -n 3 ref.csv >f.csv
refused_file f.csv

hcase "a csv FILE cut down to its header line is not called complete"
head -n 1 ref.csv >f.csv
refused_file f.csv

hcase "a complete FILE is still called complete"
cp ref.jsonl f.jsonl
hrun "$BPTT" sweep $G --out f.jsonl
[ "$hrc" -eq 0 ] && grep -q "is complete" err && cmp -s f.jsonl ref.jsonl && hpass
[ -z "$h_name" ] || hfail "exit $hrc: $(shown err)"

# ---- parts: --merge and --only ------------------------------------------

# parts: m.jsonl.parts holding every point's part
parts() {
    rm -rf m.jsonl m.jsonl.parts
    for k in 0 1 2 3; do
        "$BPTT" sweep $G --out m.jsonl --only $k </dev/null >/dev/null 2>&1 ||
            return 1
    done
}

# refused_merge PART: --merge exits 2, one line naming PART, no m.jsonl
refused_merge() {
    hrun "$BPTT" sweep $G --out m.jsonl --merge
    expect_refusal 2 || return 0
    grep -qF "$1" err || { hfail "the line does not name $1: $(shown err)"; return 0; }
    [ ! -e m.jsonl ] || { hfail "m.jsonl was written"; return 0; }
    hpass
}

hcase "--merge refuses a part holding another point's record"
if parts; then
    cp m.jsonl.parts/1.jsonl m.jsonl.parts/2.jsonl
    refused_merge m.jsonl.parts/2.jsonl
else hfail "no parts"; fi

hcase "--merge refuses a part whose record is corrupted"
if parts; then
    sed -i '2s/"peak_slots":[0-9]*,//' m.jsonl.parts/3.jsonl
    refused_merge m.jsonl.parts/3.jsonl
else hfail "no parts"; fi

hcase "--merge refuses a part whose record is of another grid"
if parts; then
    { sed -n 1p m.jsonl.parts/0.jsonl; sed -n 2p other.jsonl; } >m.jsonl.parts/0.new
    mv m.jsonl.parts/0.new m.jsonl.parts/0.jsonl
    refused_merge m.jsonl.parts/0.jsonl
else hfail "no parts"; fi

hcase "--merge refuses a part whose plan record is forged (a feasible point called infeasible)"
if parts; then
    sed -i "2$nulled" m.jsonl.parts/1.jsonl
    refused_merge "m.jsonl.parts/1.jsonl is not point 1's part of this sweep (its \"forward_ops\" is null"
else hfail "no parts"; fi

hcase "--merge refuses a part that is a directory, as a directory"
if parts; then
    rm m.jsonl.parts/1.jsonl
    mkdir m.jsonl.parts/1.jsonl
    refused_merge "m.jsonl.parts/1.jsonl is a directory"
else hfail "no parts"; fi

hcase "--merge of whole parts equals a direct sweep"
if parts; then
    hrun "$BPTT" sweep $G --out m.jsonl --merge
    [ "$hrc" -eq 0 ] && cmp -s m.jsonl ref.jsonl && hpass
    [ -z "$h_name" ] || hfail "exit $hrc: $(shown err)"
else hfail "no parts"; fi

hcase "--merge takes no machine fact from a part's header (a forged cpu_model)"
if parts; then
    sed -i '1s/"cpu_model":"[^"]*"/"cpu_model":"forged"/' m.jsonl.parts/0.jsonl m.jsonl.parts/2.jsonl
    hrun "$BPTT" sweep $G --out m.jsonl --merge
    [ "$hrc" -eq 0 ] && cmp -s m.jsonl ref.jsonl && hpass
    [ -z "$h_name" ] || hfail "exit $hrc, or m.jsonl differs from ref.jsonl: $(shown err)"
else hfail "no parts"; fi

hcase "--only refuses an existing part whose record is corrupted (not 'done already')"
if parts; then
    sed -i '2s/}$/,/' m.jsonl.parts/2.jsonl
    hrun "$BPTT" sweep $G --out m.jsonl --only 2
    expect_refusal 2 && { grep -qF "m.jsonl.parts/2.jsonl" err || hfail "$(shown err)"; } && hpass
else hfail "no parts"; fi

# ---- --config ------------------------------------------------------------

# refused_config FILE WORD: --config FILE exits 2 at once (5 s at most),
# one line holding WORD
refused_config() {
    hrun -t 5 "$BPTT" sweep --config "$1" --out c.jsonl
    expect_refusal 2 || return 0
    grep -qF -- "$2" err || { hfail "no '$2': $(shown err)"; return 0; }
    [ ! -e c.jsonl ] || { hfail "c.jsonl was written"; return 0; }
    hpass
}

hcase "--config refuses a FIFO at once (no wait for a writer)"
mkfifo fifo.conf
refused_config fifo.conf "FIFO"

hcase "--config refuses /dev/zero at once"
refused_config /dev/zero "device"

hcase "--config refuses a directory as a directory, not as an I/O error"
mkdir dir.conf
refused_config dir.conf "'dir.conf' is a directory"

hcase "--config refuses a NUL byte, naming its line and column"
printf 'length = 10\nmemory = 5\000%%\n' >nul.conf
refused_config nul.conf "nul.conf:2:11"

hcase "--config refuses a control byte, naming its line and column"
printf 'length = 10\nstrategy = msm\033[2J\n' >esc.conf
refused_config esc.conf "esc.conf:2:15"

hcase "--config refuses a file over 1 MiB"
{ echo "length = 10"; head -c 1100000 /dev/zero | tr '\0' '#'; echo; } >big.conf
refused_config big.conf "more than 1048576 bytes"

hcase "--config written on Windows (CRLF line ends) is read as its lines; a lone CR is refused"
printf 'length = 100\r\nmemory = 5%%\r\nout = crlf.jsonl\r\n' >crlf.conf
printf 'length = 100\rmemory = 5%%\n' >cr.conf
hrc=0
"$BPTT" sweep --config crlf.conf </dev/null >out 2>err || hrc=$?
if [ "$hrc" -ne 0 ] || [ "$(wc -l <crlf.jsonl)" -ne 2 ]; then
    hfail "CRLF: exit $hrc, $(shown err)"
else
    hrun "$BPTT" sweep --config cr.conf --out cr.jsonl
    expect_refusal 2 && { grep -q 'cr.conf:1:13 holds the control byte 0x0d' err && hpass || hfail "$(shown err)"; }
fi
