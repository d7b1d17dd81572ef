# Chapter 2, `bptt sweep --jobs JOBFILE`: an existing JOBFILE is replaced
# only with --force, and never, even with --force, when it is one of the
# sweep's own files (its --config, its --out, its FILE.partial) or the
# bptt binary that runs.
export SOURCE_DATE_EPOCH=1
G="--strategy msm,hsm --length 10,20 --alpha 2 --memory 50%"

# kept_refusal FILE COPY: the command was refused (exit 2, one line) and
# FILE is byte for byte COPY still.
kept_refusal() {
    expect_refusal 2 || return 0
    cmp -s "$1" "$2" || { hfail "$1 was changed"; return 0; }
    hpass
}

hcase "--jobs refuses an existing JOBFILE without --force, and leaves it"
echo "precious" >j.txt
cp j.txt j.orig
hrun "$BPTT" sweep $G --out o.jsonl --jobs j.txt
kept_refusal j.txt j.orig

hcase "--jobs --force replaces an old job list"
hrun "$BPTT" sweep $G --out o.jsonl --jobs j.txt --force
if [ "$hrc" -ne 0 ]; then hfail "exit $hrc: $(shown err)"
elif ! grep -q -- "--only 3\$" j.txt; then hfail "no job list: $(shown j.txt)"
else hpass; fi

hcase "--jobs --force refuses a JOBFILE that is the sweep's own --config"
printf 'strategy = msm,hsm\nlength = 10,20\nout = c.jsonl\n' >c.conf
cp c.conf c.orig
hrun "$BPTT" sweep --config c.conf --jobs c.conf --force
kept_refusal c.conf c.orig

hcase "--jobs --force refuses a JOBFILE that is FILE.partial (the progress)"
rc=0
BPTT_SWEEP_DIE_AFTER=2 "$BPTT" sweep $G --out p.jsonl </dev/null \
    >/dev/null 2>&1 || rc=$?
if [ "$rc" -ne 137 ]; then hfail "the killed sweep exited $rc"
else
    cp p.jsonl.partial p.orig
    hrun "$BPTT" sweep $G --out p.jsonl --jobs p.jsonl.partial --force
    kept_refusal p.jsonl.partial p.orig
fi

hcase "--jobs --force refuses a JOBFILE that is a link to FILE.partial"
if [ -e p.jsonl.partial ]; then
    ln -s p.jsonl.partial plink
    hrun "$BPTT" sweep $G --out p.jsonl --jobs plink --force
    kept_refusal p.jsonl.partial p.orig
else hfail "no partial file to test with"; fi

hcase "--jobs --force refuses a JOBFILE that is a hard link to --out"
hrun "$BPTT" sweep $G --out done.jsonl
cp done.jsonl done.orig
ln done.jsonl hard.txt
hrun "$BPTT" sweep $G --out done.jsonl --jobs hard.txt --force
kept_refusal done.jsonl done.orig

hcase "--jobs --force refuses a JOBFILE that is the running bptt binary"
cp "$BPTT" ./bptt-copy
cp ./bptt-copy bptt.orig
hrun ./bptt-copy sweep $G --out o.jsonl --jobs ./bptt-copy --force
kept_refusal ./bptt-copy bptt.orig

hcase "--jobs leaves no temporary file behind when it refuses"
if ls | grep -q '\.tmp\.'; then hfail "left: $(ls | grep '\.tmp\.')"
else hpass; fi

# ---- FILE appearing while a sweep works ----------------------------------

S="--strategy msm,hsm,ism --length 100:2000:100 --alpha 4 --memory 5%:50%:5 --threads 1"

# stopped_sweep: a sweep of $S on late.jsonl in the background ($live),
# stopped (SIGSTOP) once its partial file holds records; 1 if it ended
# before that.
stopped_sweep() {
    rm -f late.jsonl late.jsonl.partial
    "$BPTT" sweep $S --out late.jsonl </dev/null >/dev/null 2>late.err &
    live=$!
    n=0
    while [ "$(cat late.jsonl.partial 2>/dev/null | wc -l)" -lt 3 ] &&
        [ "$n" -lt 3000 ]; do
        sleep 0.01
        n=$((n + 1))
    done
    kill -STOP "$live" 2>/dev/null || true
    if [ -e late.jsonl ] || [ ! -e late.jsonl.partial ] ||
        ! kill -0 "$live" 2>/dev/null; then
        kill -CONT "$live" 2>/dev/null || true
        wait "$live" || true
        return 1
    fi
}

hcase "a FILE that appears while the sweep works is not replaced at its end"
tries=0
while ! stopped_sweep && [ "$tries" -lt 3 ]; do tries=$((tries + 1)); done
if [ "$tries" -ge 3 ]; then
    hfail "the sweep ended before it could be stopped, 3 times"
else
    echo "a file someone else wrote" >late.jsonl
    cp late.jsonl late.orig
    kill -CONT "$live"
    rc=0
    wait "$live" || rc=$?
    if [ "$rc" -ne 2 ]; then hfail "the sweep exited $rc: $(shown late.err)"
    elif ! one_line late.err; then hfail "stderr: $(shown late.err)"
    elif ! cmp -s late.jsonl late.orig; then hfail "late.jsonl was replaced"
    elif [ ! -s late.jsonl.partial ]; then hfail "the sweep's records are lost"
    else hpass; fi
fi

# A link planted at FILE.partial: the sweep writes through no link, with
# --force or without, and a dangling one does not create its target.
for force in "" --force; do
    hcase "a link planted at FILE.partial is refused${force:+ with $force}, its target left"
    rm -f s.jsonl s.jsonl.partial
    echo precious >victim
    cp victim victim.orig
    ln -s victim s.jsonl.partial
    hrun "$BPTT" sweep $G --out s.jsonl $force
    if [ ! -L s.jsonl.partial ]; then hfail "the link was replaced"
    elif ! grep -q "symbolic link" err; then hfail "says: $(shown err)"
    else kept_refusal victim victim.orig; fi
done
hcase "a dangling link at FILE.partial is refused, its target not created"
rm -f s.jsonl s.jsonl.partial nowhere
ln -s nowhere s.jsonl.partial
hrun "$BPTT" sweep $G --out s.jsonl
if [ -e nowhere ]; then hfail "the link's target was created"
elif [ -e s.jsonl ]; then hfail "the sweep ran"
else expect_refusal 2 && hpass; fi
rm -f s.jsonl.partial

# FILE.parts, where --only K writes its part: a link planted there would
# have the part written (with --force: replaced) wherever it points.
for force in "" --force; do
    hcase "--only 0 ${force:+$force }refuses FILE.parts that is a link to another folder"
    rm -rf victim p.jsonl.parts
    mkdir victim
    echo "precious" > victim/0.jsonl
    cp victim/0.jsonl v.orig
    ln -s victim p.jsonl.parts
    hrun "$BPTT" sweep $G --out p.jsonl --only 0 $force
    if expect_refusal 2; then
        if ! cmp -s victim/0.jsonl v.orig; then hfail "the part was written through the link"
        elif [ "$(ls victim)" != "0.jsonl" ]; then hfail "victim/ holds $(ls victim | tr '\n' ' ')"
        elif ! grep -q "symbolic link" err; then hfail "$(shown err)"
        else hpass; fi
    fi
    rm -f p.jsonl.parts
done
