# Chapter 7: bptt where batch jobs run.  Under an address-space limit
# (ulimit -v, as clusters set it) OpenBLAS's start would spin forever on a
# buffer it cannot map: every command either works or refuses in one line
# (exit 2) naming a limit that works, never hangs; the limit it names does
# work.  With no terminal and in the C locale the commands answer as
# usual.
if [ "${BPTT_SANITIZERS:-no}" = yes ]; then
    hcase "ulimit -v: every command works or refuses in one line"
    hskip "a sanitizer build cannot run under ulimit -v (AddressSanitizer maps terabytes of shadow memory)"
else
    for threads in 1 2 4; do
        for v in 60000 120000 200000 300000 400000 500000 700000 900000; do
            for cmd in "plan --length 100 --memory 5%" \
                       "run --length 10 --hidden 4 --batch 2 --input 3 --iters 1 --threads $threads" \
                       "sweep --length 10,20 --memory 50% --out s$v-$threads.jsonl"; do
                hcase "ulimit -v $v, OMP_NUM_THREADS=$threads: bptt ${cmd%% --*}"
                hrc=0
                # shellcheck disable=SC2086
                (ulimit -v "$v"; OMP_NUM_THREADS=$threads exec timeout -k 2 10 "$BPTT" $cmd) \
                    </dev/null >out 2>err || hrc=$?
                if [ "$hrc" -eq 0 ]; then
                    hpass
                elif [ "$hrc" -eq 124 ] || [ "$hrc" -eq 137 ]; then
                    hfail "hung (killed after 10 s)"
                elif [ "$hrc" -eq 127 ] && grep -q 'error while loading shared libraries' err; then
                    # below what the system's loader needs to map the
                    # libraries at all: before any code of bptt runs
                    hpass
                elif expect_refusal 2; then
                    # the limit it names must work
                    want=$(sed -n 's/.*raise it to ulimit -v \([0-9]*\).*/\1/p' err)
                    if [ -z "$want" ]; then
                        hfail "the refusal names no limit: $(shown err)"
                    elif (ulimit -v "$want"; OMP_NUM_THREADS=$threads exec timeout -k 2 10 "$BPTT" $cmd) \
                            </dev/null >out2 2>err2 || [ "$?" -eq 3 ]; then
                        hpass
                    else
                        hfail "ulimit -v $want, the limit it names, does not work: $(shown err2)"
                    fi
                fi
                rm -f s$v-$threads.jsonl
            done
        done
    done
fi

hcase "no terminal, C locale: bptt plan answers"
hrun env -i PATH=/usr/bin:/bin "$BPTT" plan --length 1000 --memory 5%
if [ "$hrc" -eq 0 ] && grep -q '^msm  *1000 ' out && [ ! -s err ]; then hpass
else hfail "exit $hrc, stdout $(shown out), stderr $(shown err)"; fi

# BPTT_GEMM_KERNEL: a name that is no GEMM path (a typo, an oversized
# value, control bytes) is refused in one line before any work; a known
# one runs and is the path the result records
for bad in avx3 "" "$(printf 'avx2\033[2J')" "$(head -c 5000 /dev/zero | tr '\0' a)"; do
    hcase "BPTT_GEMM_KERNEL='$(printf %s "$bad" | head -c 12 | od -An -c | tr -d ' \n')': bptt run refuses"
    hrun env BPTT_GEMM_KERNEL="$bad" "$BPTT" run --length 5 --hidden 4 --batch 2 --input 3 --iters 1
    if expect_refusal 2; then
        if grep -q 'BPTT_GEMM_KERNEL=.*names no GEMM path' err &&
            ! grep -q "$(printf '\033')" err && [ "$(wc -c <err)" -lt 400 ]; then hpass
        else hfail "message: $(shown err)"; fi
    fi
done
hcase "BPTT_GEMM_KERNEL=cblas: bptt run records the cblas path"
hrun env BPTT_GEMM_KERNEL=cblas "$BPTT" run --length 5 --hidden 4 --batch 2 --input 3 --iters 1 --format json
if [ "$hrc" -eq 0 ] && grep -q '"gemm_kernel":"cblas"' out; then hpass
else hfail "exit $hrc, stdout $(shown out), stderr $(shown err)"; fi

# OMP_NUM_THREADS beyond what --threads takes (libgomp would start a team
# of 100000 and end the process), or garbage: every command works, and a
# huge count is capped, said in one note on stderr
for omp in 100000 abc 1,2,3; do
    for cmd in "plan --length 100 --memory 5%" \
               "run --length 10 --hidden 4 --batch 2 --input 3 --iters 1 --strategy full" \
               "sweep --length 10,20 --memory 50% --out omp.jsonl" \
               "compare --length 8 --hidden 4 --batch 2 --input 3 --rounds 1 --warmup 0 --plans full:100%"; do
        hcase "OMP_NUM_THREADS=$omp: bptt ${cmd%% --*} works"
        rm -f omp.jsonl omp.jsonl.partial
        # shellcheck disable=SC2086
        hrun -t 60 env OMP_NUM_THREADS="$omp" "$BPTT" $cmd
        if [ "$hrc" -ne 0 ]; then
            hfail "exit $hrc, stderr $(shown err)"
        elif [ ! -s out ] && [ ! -s omp.jsonl ]; then
            hfail "no output"
        elif [ -e omp.jsonl.partial ]; then
            hfail "left omp.jsonl.partial"
        elif [ "$omp" = 100000 ] &&
            ! grep -q "^bptt ${cmd%% *}: note: OMP_NUM_THREADS asks for 100000 threads; using 4096" err; then
            hfail "no note of the cap: $(shown err)"
        elif [ "$omp" = 100000 ] && [ "$(wc -l <err)" -ne 1 ]; then
            hfail "more than the note on stderr: $(shown err)"
        else
            hpass
        fi
    done
done
rm -f omp.jsonl

# Standard error closed by the caller: no file bptt opens takes fd 2, so
# the interrupted sweep's message cannot land in its FILE.partial (which
# the rerun would then refuse, losing the points done).
hcase "stderr closed: an interrupted sweep's FILE.partial holds only records"
rm -f ce.jsonl ce.jsonl.partial
CE="--strategy msm,hsm,ism --length 2000:40000:2000 --alpha 2,3,4 --memory 5%,10%,20%,30% --out ce.jsonl"
"$BPTT" sweep $CE 2>&- &
ce_pid=$!
n=0
while [ ! -s ce.jsonl.partial ] && [ "$n" -lt 100 ]; do sleep 0.05; n=$((n + 1)); done
sleep 0.3
kill -INT "$ce_pid" 2>/dev/null
ce_rc=0
wait "$ce_pid" || ce_rc=$?
if [ -e ce.jsonl ]; then hskip "the sweep finished before it was interrupted"
elif [ ! -e ce.jsonl.partial ]; then hfail "no FILE.partial (exit $ce_rc)"
elif grep -qv '^{' ce.jsonl.partial; then hfail "FILE.partial holds: $(grep -v '^{' ce.jsonl.partial | head -c 200)"
elif [ "$ce_rc" -ne 130 ]; then hfail "exit $ce_rc, not 130 (interrupted)"
else hpass; fi
rm -f ce.jsonl ce.jsonl.partial
