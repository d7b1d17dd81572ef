# Chapter 1, the job list of `bptt sweep --jobs`: scripts/sweep-parallel
# and scripts/slurm-sweep hand each of its lines to a shell.  A value that
# reaches it with a control byte (a newline would end the command and start
# one of the attacker's choosing) is refused before any work, naming the
# option; printable values of any kind (quotes, $( ), backticks, ;, *,
# spaces) are quoted so that running every line runs nothing else, and the
# merge yields the records.
export SOURCE_DATE_EPOCH=1
G="--strategy msm,hsm --length 10,20 --alpha 2 --memory 50%"
nl='
'
cr=$(printf '\r')
tab=$(printf '\t')
esc=$(printf '\033')
del=$(printf '\177')
cmd="touch \"\$HOSTILE_MARK\""

# refused_jobs CASE JOBFILE ARGS...: exit 2, one line naming the value's
# origin (from the case), no job list, nothing run.
refused_jobs() {
    j=$1
    shift
    rm -f "$j"
    hrun "$BPTT" sweep "$@" --jobs "$j"
    expect_refusal 2 || return 0
    [ ! -e "$j" ] || { hfail "a job list was written: $(shown "$j")"; return 0; }
    marker_absent || { hfail "a smuggled command ran"; return 0; }
    grep -q -- "$want" err || { hfail "the line does not name $want: $(shown err)"; return 0; }
    hpass
}

for c in "$nl" "$cr" "$tab" "$esc" "$del"; do
    b=$(printf '%s' "$c" | od -An -tx1 | tr -d ' ')
    hcase "--jobs refuses an --out holding byte 0x$b (a command on a line of its own)"
    want="--out value"
    refused_jobs j.txt $G --out "o${c}${cmd}${c}.jsonl"

    # refused as it is read (a config file is text), or, for the newline,
    # as the line it starts, which is no setting
    hcase "--jobs refuses an out = line of --config holding byte 0x$b"
    printf 'length = 10\nout = o%s%s%s.jsonl\n' "$c" "$cmd" "$c" >c.conf
    want="c.conf:[23]"
    refused_jobs j.txt --config c.conf
done

hcase "--jobs refuses a --task path holding a newline (run mode)"
echo "the quick brown fox jumps over the lazy dog" >"t${nl}${cmd}.txt"
want="--task value"
refused_jobs j.txt --mode run --cell rnn --length 4 --hidden 2 --batch 1 \
    --iters 1 --threads 1 --task "text:t${nl}${cmd}.txt" --out r.jsonl

hcase "--jobs refuses a --strategy holding a newline"
want="strategy"
refused_jobs j.txt --strategy "msm${nl}${cmd}" --length 10 --out o.jsonl

hcase "--jobs refuses a --memory holding a newline"
want="memory"
refused_jobs j.txt --memory "5%${nl}${cmd}" --length 10 --out o.jsonl

hcase "--jobs refuses a working directory holding a newline"
mkdir "w${nl}${cmd}"
(cd "w${nl}${cmd}" && hrun "$BPTT" sweep $G --out o.jsonl --jobs j.txt;
    echo "$hrc" >../rc; mv out err ..)
hrc=$(cat rc)
if expect_refusal 2; then
    if [ -e "w${nl}${cmd}/j.txt" ]; then hfail "a job list was written"
    elif ! grep -q "working directory" err; then hfail "$(shown err)"
    else hpass; fi
fi

hcase "--jobs refuses a bptt binary whose path holds a newline"
mkdir "b${nl}${cmd}"
cp "$BPTT" "b${nl}${cmd}/bptt"
hrun "./b${nl}${cmd}/bptt" sweep $G --out o.jsonl --jobs j.txt
if expect_refusal 2; then
    if [ -e j.txt ]; then hfail "a job list was written"
    elif ! grep -q "binary" err; then hfail "$(shown err)"
    else hpass; fi
fi

# ---- printable hostile values survive a round trip -----------------------

# run_jobs JOBFILE: every command line of the job list, then its merge
# command, each through sh; 0 when all succeeded.
run_jobs() {
    grep -v '^#' "$1" >lines.sh || return 1
    sh lines.sh >/dev/null 2>jobs.err || return 1
    sh -c "$(sed -n 's/^# merge: //p' "$1")" >/dev/null 2>>jobs.err
}

H1="o '\$(touch \"\$HOSTILE_MARK\")' \`touch \"\$HOSTILE_MARK\"\` ; x'\"*?[a] & | > y"

hcase "--jobs: a hostile printable --out and directory run nothing and merge whole"
d="d '\$(touch \"\$HOSTILE_MARK\")' \`touch \"\$HOSTILE_MARK\"\`; *"
mkdir "$d"
hrun "$BPTT" sweep $G --out ref.jsonl
cp ref.jsonl "$d/ref.jsonl"
rc=0
(cd "$d" && "$BPTT" sweep $G --out "$H1.jsonl" --jobs "j $H1" </dev/null \
    >/dev/null 2>../jerr) || rc=$?
if [ "$rc" -ne 0 ]; then hfail "--jobs failed: $(shown jerr)"
elif ! run_jobs "$d/j $H1"; then hfail "a job failed: $(shown jobs.err)"
elif ! marker_absent; then hfail "a command smuggled in --out or the directory ran"
elif ! cmp -s "$d/$H1.jsonl" ref.jsonl; then hfail "the merged file differs from a direct sweep's"
else hpass; fi

hcase "--jobs: a hostile printable --config path and its out = value run nothing"
cf="c '\$(touch \"\$HOSTILE_MARK\")' \`touch x\`;*.conf"
printf 'strategy = msm,hsm\nlength = 10,20\nalpha = 2\nmemory = 50%%\nout = %s.jsonl\n' "$H1" >"$cf"
rm -f "$H1.jsonl" jc.txt
hrun "$BPTT" sweep --config "$cf" --jobs jc.txt
if [ "$hrc" -ne 0 ]; then hfail "exit $hrc: $(shown err)"
elif ! run_jobs jc.txt; then hfail "a job failed: $(shown jobs.err)"
elif ! marker_absent; then hfail "a smuggled command ran"
elif ! cmp -s "$H1.jsonl" ref.jsonl; then hfail "the merged file differs"
else hpass; fi

hcase "--jobs: a hostile printable --task path and binary path run nothing (run mode)"
tf="t '\$(touch \"\$HOSTILE_MARK\")' \`touch x\`;*.txt"
echo "the quick brown fox jumps over the lazy dog" >"$tf"
bd="bin '\$(touch \"\$HOSTILE_MARK\")' \`touch x\`; *"
mkdir "$bd"
cp "$BPTT" "$bd/bptt"
rm -f jr.txt
hrun "./$bd/bptt" sweep --mode run --cell rnn --length 4 --hidden 2 --batch 1 \
    --seed 1,2 --iters 1 --threads 1 --task "text:$tf" --out "r $H1.jsonl" \
    --jobs jr.txt
if [ "$hrc" -ne 0 ]; then hfail "exit $hrc: $(shown err)"
elif ! grep -qF "bptt' sweep --mode run" jr.txt || ! grep -qF "/bin '\\''" jr.txt; then hfail "the job list does not run the copied binary"
elif ! run_jobs jr.txt; then hfail "a job failed: $(shown jobs.err)"
elif ! marker_absent; then hfail "a smuggled command ran"
elif [ "$(grep -c '"point":' "r $H1.jsonl")" -ne 2 ]; then hfail "the merged file lacks records"
elif ! grep -q "\"task\":\"text:" "r $H1.jsonl"; then hfail "the records lack the task"
else hpass; fi

hcase "--jobs: a --config path holding a newline never reaches the job list"
cn="c${nl}${cmd}.conf"
printf 'strategy = msm,hsm\nlength = 10,20\nalpha = 2\nmemory = 50%%\nout = n.jsonl\n' >"$cn"
rm -f n.jsonl jn.txt
hrun "$BPTT" sweep --config "$cn" --jobs jn.txt
if [ "$hrc" -ne 0 ]; then hfail "exit $hrc: $(shown err)"
elif grep -q "HOSTILE_MARK" jn.txt; then hfail "the config path is in the job list"
elif ! run_jobs jn.txt; then hfail "a job failed: $(shown jobs.err)"
elif ! marker_absent; then hfail "a smuggled command ran"
elif ! cmp -s n.jsonl ref.jsonl; then hfail "the merged file differs"
else hpass; fi

# the other settings are names or numbers the grid checks: a hostile
# value there, printable or not, is refused before a job list exists
for key in strategy cell memory optimizer lr iters length hidden; do
    for v in "msm'\$(touch \"\$HOSTILE_MARK\")'" "1\`touch \"\$HOSTILE_MARK\"\`" "2;touch x"; do
        hcase "--jobs refuses a hostile --$key <$(printf '%s' "$v" | head -c 12)...>"
        rm -f jk.txt
        hrun "$BPTT" sweep --mode run --length 4 --out k.jsonl --$key "$v" --jobs jk.txt
        if expect_refusal 2; then
            if [ -e jk.txt ]; then hfail "a job list was written"
            elif ! marker_absent; then hfail "a smuggled command ran"
            else hpass; fi
        fi
    done
done
