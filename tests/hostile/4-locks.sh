# Chapter 4, the lock of FILE.partial: one sweep writes an --out, whatever
# the timing of others started beside it, and --force never takes over the
# files of a sweep that is running.
export SOURCE_DATE_EPOCH=1
# about 0.4 s of planning on a 2-core machine: long enough for eight
# starts to overlap it
L="--strategy msm,hsm,ism --length 100:1000:100 --alpha 4 --memory 5%:50%:5 --threads 1"
"$BPTT" sweep $L --out lref.jsonl </dev/null >/dev/null 2>&1 || true

# one_round N: N sweeps of $L on race.jsonl, held at a gate (each has
# opened the FIFO for reading; only this shell holds it for writing) and
# released at once by closing it.  Their exit codes in rc.I, stderr in
# e.I.  1 if the gate could not be set up.
one_round() {
    rm -f race.jsonl race.jsonl.partial gate ready.* rc.* e.*
    mkfifo gate
    exec 3<>gate # a writer that never blocks (Linux): readers open at once
    i=0
    while [ "$i" -lt "$1" ]; do
        (
            exec 3>&-
            { : >"ready.$i"; read -r x || true; } <gate
            rc=0
            "$BPTT" sweep $L --out race.jsonl </dev/null >/dev/null \
                2>"e.$i" || rc=$?
            echo "$rc" >"rc.$i"
        ) &
        i=$((i + 1))
    done
    n=0
    while [ "$(ls | grep -c '^ready\.')" -lt "$1" ] && [ "$n" -lt 2000 ]; do
        sleep 0.01
        n=$((n + 1))
    done
    exec 3>&- # every reader gets end of file: all go at once
    wait
    [ "$n" -lt 2000 ]
}

# judge_round N: exactly one sweep computed (exit 0, nothing on stderr);
# each other one exited 1 naming the running sweep, or 0 finding the file
# complete; race.jsonl equals the uninterrupted sweep's, no partial left.
judge_round() {
    computed=0 i=0
    while [ "$i" -lt "$1" ]; do
        [ -f "rc.$i" ] || { why="sweep $i left no exit code"; return 1; }
        rc=$(cat "rc.$i")
        if [ "$rc" -eq 0 ] && [ ! -s "e.$i" ]; then
            computed=$((computed + 1))
        elif [ "$rc" -eq 1 ] && one_line "e.$i" &&
            grep -q "another bptt sweep (pid [0-9]*) is writing" "e.$i"; then :
        elif [ "$rc" -eq 0 ] && one_line "e.$i" && grep -q "is complete" "e.$i"; then :
        else
            why="sweep $i: exit $rc, stderr $(shown "e.$i")"
            return 1
        fi
        i=$((i + 1))
    done
    [ "$computed" -eq 1 ] || { why="$computed sweeps computed the file"; return 1; }
    cmp -s race.jsonl lref.jsonl || { why="race.jsonl differs from an uninterrupted sweep's"; return 1; }
    [ ! -e race.jsonl.partial ] || { why="race.jsonl.partial is left"; return 1; }
    return 0
}

hcase "8 sweeps released at one instant on one --out, 20 rounds: one computes, the file is whole"
round=0 bad=
while [ "$round" -lt 20 ] && [ -z "$bad" ]; do
    if ! one_round 8; then bad="round $round: the gate never filled"
    elif ! judge_round 8; then bad="round $round: $why"
    fi
    round=$((round + 1))
done
if [ -n "$bad" ]; then hfail "$bad"; else hpass; fi

# ---- --force against a running sweep --------------------------------------

# a longer sweep (several seconds), stopped with SIGSTOP once it has
# written records: it holds the lock for as long as the case wants
S="--strategy msm,hsm,ism --length 100:2000:100 --alpha 4 --memory 5%:50%:5 --threads 1"

# started_and_stopped: a sweep of $S on live.jsonl in the background
# ($live), stopped once its partial file holds records; 1 if it ended
# first (the machine was faster than the grid is long).
started_and_stopped() {
    rm -f live.jsonl live.jsonl.partial
    "$BPTT" sweep $S --out live.jsonl </dev/null >/dev/null 2>live.err &
    live=$!
    n=0
    while [ "$(cat live.jsonl.partial 2>/dev/null | wc -l)" -lt 3 ] &&
        [ "$n" -lt 3000 ]; do
        sleep 0.01
        n=$((n + 1))
    done
    kill -STOP "$live" 2>/dev/null || true
    if [ -e live.jsonl ] || [ ! -e live.jsonl.partial ] ||
        ! kill -0 "$live" 2>/dev/null; then
        kill -CONT "$live" 2>/dev/null || true
        wait "$live" || true
        return 1
    fi
}

hcase "--force is refused while another sweep writes the --out (exit 1, its pid), and that sweep's file ends whole"
"$BPTT" sweep $S --out sref.jsonl </dev/null >/dev/null 2>&1 || true
tries=0
while ! started_and_stopped && [ "$tries" -lt 3 ]; do tries=$((tries + 1)); done
if [ "$tries" -ge 3 ]; then
    hfail "the sweep ended before it could be stopped, 3 times"
else
    ino=$(ls -i live.jsonl.partial | cut -d' ' -f1)
    hrun "$BPTT" sweep $S --out live.jsonl --force
    forced=$hrc
    cp err force.err
    hrun "$BPTT" sweep $S --out live.jsonl
    plain=$hrc
    cp err plain.err
    ino2=$(ls -i live.jsonl.partial 2>/dev/null | cut -d' ' -f1)
    kill -CONT "$live"
    rc=0
    wait "$live" || rc=$?
    if [ "$forced" -ne 1 ]; then hfail "--force exited $forced: $(shown force.err)"
    elif ! one_line force.err || ! grep -q "another bptt sweep (pid $live) is writing" force.err
    then hfail "--force: $(shown force.err)"
    elif [ "$plain" -ne 1 ] || ! grep -q "(pid $live)" plain.err
    then hfail "a second sweep: exit $plain: $(shown plain.err)"
    elif [ "$ino" != "$ino2" ]; then hfail "the running sweep's partial file was replaced"
    elif [ "$rc" -ne 0 ]; then hfail "the running sweep exited $rc: $(shown live.err)"
    elif ! cmp -s live.jsonl sref.jsonl; then hfail "the running sweep's file is not whole"
    else hpass; fi
fi

hcase "--force with the lock free starts over a partial file of another grid"
rc=0
BPTT_SWEEP_DIE_AFTER=3 "$BPTT" sweep --length 10,20,30,40 --out f.jsonl \
    </dev/null >/dev/null 2>&1 || rc=$?
hrun "$BPTT" sweep $L --out f.jsonl --force
if [ "$rc" -ne 137 ]; then hfail "the first sweep exited $rc"
elif [ "$hrc" -ne 0 ]; then hfail "exit $hrc: $(shown err)"
elif ! cmp -s f.jsonl lref.jsonl; then hfail "f.jsonl is not the sweep's"
else hpass; fi

hcase "a FILE.partial holding half a header (a kill while it was made) is rewritten"
head -c 40 lref.jsonl >h.jsonl.partial
hrun "$BPTT" sweep $L --out h.jsonl
if [ "$hrc" -ne 0 ]; then hfail "exit $hrc: $(shown err)"
elif ! cmp -s h.jsonl lref.jsonl; then hfail "h.jsonl is not the sweep's"
elif [ -e h.jsonl.partial ]; then hfail "h.jsonl.partial is left"
else hpass; fi
