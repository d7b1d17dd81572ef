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
