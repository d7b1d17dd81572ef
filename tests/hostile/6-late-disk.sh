# Chapter 6, bptt plan --disk (two-level plans): every hostile value of
# --disk, --write-cost and --read-cost, and every option they do not go
# with, is refused at once, exit 2 (3: a budget below the smallest), in
# one line that names what is wrong and what would work, control bytes
# escaped, nothing on stdout, nothing written; a table too big for this
# machine is refused, naming its size, before it is built.  bptt validate
# reads the slow level's budget of a plan file as strictly.
# disk_refused CODE PHRASE ARGS...: bptt plan ARGS refused so
disk_refused() {
    code=$1 phrase=$2
    shift 2
    hcase "bptt plan $(printf '%s ' "$@" | od -An -c | tr -d '\n' | tr -s ' '): refused ($phrase)"
    hrun -t 20 "$BPTT" plan "$@"
    if expect_refusal "$code"; then
        if ! grep -qF -- "$phrase" err; then hfail "says: $(shown err)"
        elif ls | grep -qv '^\(out\|err\)$'; then hfail "left: $(ls | tr '\n' ' ')"
        else hpass; fi
    fi
}
D="--length 10 --memory 3"
# shellcheck disable=SC2086
{
for v in "" lots -1 1e3 0x10 nan NaN INF Inf infinity 5, " 5" "5 " 5x \
         99999999999999999999 "$(printf '5\033[31m')" "$(printf '5\nPWNED')"; do
    disk_refused 2 "--disk: " $D --disk "$v"
done
disk_refused 2 "or give inf, no bound" $D --disk lots
disk_refused 2 "is in bytes, which needs the network's sizes" $D --disk 1GiB
disk_refused 2 "\\x1b[31m" $D --disk "$(printf '5\033[31m')"
for o in --write-cost --read-cost; do
    for v in "" nan inf -inf -1 -0.5 1000001 1e7 1e400 0x10 2x "1,5" " 2" \
             +2 "$(printf '2\033]0;x\007')" "$(printf '2\r')"; do
        disk_refused 2 "$o: '" $D --disk 5 $o "$v"
    done
    disk_refused 2 "from 0 to 1000000" $D --disk 5 $o 1000001
    disk_refused 2 "$o applies to two-level plans (add --disk D" $D $o 2
    disk_refused 2 "$o is given twice" $D --disk 5 $o 1 $o 2
    disk_refused 2 "$o needs a value" $D --disk 5 $o
done
disk_refused 2 "--disk needs a value, not the option '--memory'" --length 10 --disk --memory 3
disk_refused 2 "--disk needs --memory M" --length 10 --disk 5
for s in full chen ism ism-paper msm-paper; do
    disk_refused 2 "strategy $s has no two-level planner (give --strategy hsm or msm)" \
        $D --disk 5 --strategy "$s"
done
disk_refused 2 "--disk and --online exclude each other" $D --disk 5 --online --strategy hsm
disk_refused 2 "--disk and --curve exclude each other" $D --disk inf --curve
disk_refused 2 "--infeasible applies to one-level plans' records" $D --disk 5 --infeasible skip
disk_refused 2 "exclude each other" $D --disk 5 --actions --curve
disk_refused 3 "the smallest feasible budget is 1 slots" --length 10 --memory 0 --disk inf
disk_refused 2 "would hold" --length 100000000 --memory 3 --disk 3
disk_refused 2 "more than half of this machine's" --length 1000 --memory 99999999 --disk inf
disk_refused 2 "more than half of this machine's" --length 100000 --memory 3 --disk 99999
disk_refused 2 "does not take length 2000000000" --length 2000000000 --memory 3 --disk 3
}

# validate: the slow level's budget of a plan file
"$BPTT" plan --length 12 --memory 3 --disk 4 --write-cost 0.5 --actions --format json >p.json
for m in '"disk":"4"' '"disk":-4' '"disk":true' '"disk":null' '"disk":"INF"' \
         '"disk":1.5' '"disk":1e30' '"disk":[4]'; do
    hcase "validate: $m is refused, naming disk"
    sed "s/\"disk\":4/$m/" p.json >bad.json
    hrun "$BPTT" validate bad.json
    if expect_refusal 2; then
        if grep -q 'disk' err; then hpass; else hfail "$(shown err)"; fi
    fi
done
hcase "validate: a slow level's op without a slow level is refused, naming the action"
sed 's/"disk":4,//' p.json >bad.json
hrun "$BPTT" validate bad.json
expect_refusal 2 && { grep -q 'uses a slow level, and the plan has none' err && hpass || hfail "$(shown err)"; }
hcase "validate: a cost the plan does not have is exit 1 naming it"
sed 's/"cost":[0-9.]*/"cost":1e308/' p.json >bad.json
hrun "$BPTT" validate bad.json
expect_refusal 1 && { grep -q '"cost"' err && hpass || hfail "$(shown err)"; }
for v in "" lots -1 nan "$(printf '4\033[31m')"; do
    hcase "validate --disk '$(printf '%s' "$v" | od -An -c | tr -d '\n')': refused"
    hrun "$BPTT" validate --disk "$v" p.json
    expect_refusal 2 && { grep -q -- '--disk: ' err && hpass || hfail "$(shown err)"; }
done
hcase "validate: the plan as printed is valid, its slow level counted"
hrun "$BPTT" validate p.json
if [ "$hrc" -eq 0 ] && grep -q 'slow level (disk 4 slots)' out; then hpass; else hfail "exit $hrc: $(shown out) $(shown err)"; fi

# bptt run --disk and bptt compare's two-level items: the same refusals
# before any work, and a slow level's folder left as it was found
# run_refused CODE PHRASE ARGS...: bptt run ARGS refused so
run_refused() {
    code=$1 phrase=$2
    shift 2
    hcase "bptt run $(printf '%s ' "$@" | od -An -c | tr -d '\n' | tr -s ' '): refused ($phrase)"
    hrun -t 20 "$BPTT" "$@"
    if expect_refusal "$code"; then
        if ! grep -qF -- "$phrase" err; then hfail "says: $(shown err)"
        elif ls | grep -qv '^\(out\|err\|p.json\|bad.json\|slow\)$'; then hfail "left: $(ls | tr '\n' ' ')"
        else hpass; fi
    fi
}
mkdir slow
R="run --cell rnn --hidden 8 --batch 2 --length 30 --iters 2 --threads 1"
# shellcheck disable=SC2086
{
for v in "" lots -1 nan 5x 200 "$(printf '5\033[31m')" "$(printf '5\nPWNED')"; do
    run_refused 2 "--disk: " $R --disk "$v"
done
run_refused 2 "\\x1b[31m" $R --disk "$(printf '5\033[31m')"
for o in --write-cost --read-cost --disk-dir; do
    run_refused 2 "$o applies to two-level plans (add --disk D" $R $o 2
done
run_refused 2 "--disk-direct applies to two-level plans (add --disk D" $R --disk-direct
run_refused 2 "--disk-direct takes no value" $R --disk inf --disk-direct=1
for v in nan -1 1e7 "$(printf '2\033]0;x\007')"; do
    run_refused 2 "--write-cost: '" $R --disk inf --write-cost "$v"
done
for s in full chen ism msm-paper; do
    run_refused 2 "strategy $s has no two-level planner" $R --disk inf --strategy $s
done
run_refused 2 "--disk plans a known length" run --task text:p.json --batch 1 --online --disk inf
run_refused 2 "does not exist" $R --disk inf --disk-dir nope
run_refused 2 "is a regular file, not a folder" $R --disk inf --disk-dir p.json
run_refused 2 "empty folder name" $R --disk inf --disk-dir ""
run_refused 2 "'\\x1b[2J' does not exist" $R --disk inf --disk-dir "$(printf '\033[2J')"
run_refused 3 "the smallest feasible budget is 64 bytes" $R --disk inf --memory 1B
run_refused 2 "--disk-direct applies to two-level plans" compare --cell rnn --hidden 8 --batch 2 --length 30 --rounds 1 --disk-direct
run_refused 2 "--disk-dir applies to two-level plans" compare --cell rnn --hidden 8 --batch 2 --length 30 --rounds 1 --disk-dir slow
run_refused 2 "does not exist" compare --cell rnn --hidden 8 --batch 2 --length 30 --rounds 1 --plans full:100%,msm:5%/inf --disk-dir nope
}
# a planted link where the slow level's file would go, a linked folder:
# the run writes through neither, and leaves the folder as it found it
ln -s ../p.json slow/bptt-slow-victim
ln -s slow slowlink
for d in slow slowlink; do
    hcase "bptt run --disk inf --disk-dir $d: the folder is left as found"
    cp p.json want.json
    hrun -t 60 "$BPTT" $R --disk inf --memory 2% --disk-dir $d --format json
    if [ "$hrc" -ne 0 ]; then hfail "exit $hrc: $(shown err)"
    elif [ "$(ls -A slow)" != bptt-slow-victim ]; then hfail "slow holds: $(ls -A slow | tr '\n' ' ')"
    elif ! cmp -s p.json want.json; then hfail "the link's target changed"
    elif ! grep -q '"slow_writes":[1-9]' out; then hfail "no state went to the slow level: $(shown out)"
    else hpass; fi
    rm -f want.json
done
rm -f slowlink
# a slow level that cannot grow (a file size limit, SIGXFSZ ignored): one
# line naming the folder and the cause, exit 1, the folder left as found
hcase "bptt run --disk inf under ulimit -f: the slow level's failure said in one line"
mkdir full
hrun -t 60 sh -c "trap '' XFSZ; ulimit -f 8; exec \"\$0\" \"\$@\"" "$BPTT" \
    run --cell lstm --hidden 64 --batch 8 --length 50 --iters 2 --threads 1 \
    --memory 2slots --disk inf --disk-dir full
if expect_refusal 1; then
    if ! grep -q "the slow level's file in full: " err; then hfail "says: $(shown err)"
    elif [ -n "$(ls -A full)" ]; then hfail "left: $(ls -A full | tr '\n' ' ')"
    else hpass; fi
fi
