# Chapter 6, bptt plan --online: every combination its options do not
# take is refused at once, exit 2 (3: a budget below the one hidden state
# the online planner needs), one line that names what is wrong and what
# would work, nothing on stdout, nothing written; and the sizes it cannot
# hold are refused before the planner takes a step.
# online_refused CODE PHRASE ARGS...: bptt plan ARGS refused so
online_refused() {
    code=$1 phrase=$2
    shift 2
    hcase "bptt plan $*: refused ($phrase)"
    hrun -t 20 "$BPTT" plan "$@"
    if expect_refusal "$code"; then
        if ! grep -q -- "$phrase" err; then hfail "says: $(shown err)"
        elif ls | grep -qv '^\(out\|err\)$'; then hfail "left: $(ls | tr '\n' ' ')"
        else hpass; fi
    fi
}
online_refused 2 "(add --online)" --length 10 --curve --points 5
online_refused 2 "(add --online --curve)" --length 10 --points 5
online_refused 2 "(add --curve)" --length 10 --online --points 5
online_refused 2 "(add --online)" --length 10 --no-lookahead
online_refused 2 "(add --online)" --length 10 --strategy hsm --no-lookahead --actions
online_refused 2 "0 is out of range (give a whole number from 2" --length 10 --online --curve --points 0
online_refused 2 "1 is out of range" --length 10 --online --curve --points 1
online_refused 2 "'abc' is not an integer" --length 10 --online --curve --points abc
online_refused 2 "'5.5' is not an integer" --length 10 --online --curve --points 5.5
online_refused 2 "'' is not an integer" --length 10 --online --curve --points ""
online_refused 2 "is out of range" --length 10 --online --curve --points 99999999999999999999
online_refused 2 "needs a value" --length 10 --online --curve --points
online_refused 2 "needs a value, not the option '--online'" --length 10 --curve --points --online
online_refused 2 "--online takes no value" --length 10 --online=hsm
online_refused 2 "--no-lookahead takes no value" --length 10 --online --no-lookahead=yes
for s in full chen ism ism-paper msm-paper; do
    online_refused 2 "strategy $s has no online planner (give --strategy hsm or msm)" \
        --length 10 --online --strategy "$s"
done
online_refused 2 "strategy chen has no online planner" --length 10 --online --strategy chen --segment 3
online_refused 2 "unknown strategy 'HSM'" --length 10 --online --strategy HSM
online_refused 2 "one strategy, not a list" --length 10 --online --strategy hsm,msm
online_refused 2 "one budget, not a list" --length 10 --online --memory 3,5
online_refused 2 "not csv (give --format text or --format json)" --length 10 --online --format csv
online_refused 2 "--infeasible applies to offline plans" --length 10 --online --infeasible skip
online_refused 2 "exclude each other" --length 10 --online --curve --actions
online_refused 2 "is in bytes" --length 10 --online --memory 64MiB
online_refused 2 "is not a budget" --length 10 --online --memory lots
online_refused 2 "(give --points N" --length 20000000 --online --curve
online_refused 2 "more than half of this machine's" --length 2000000000 --online --curve --points 10
online_refused 2 "more than half of this machine's" --strategy hsm --length 2000000000 --online --memory 10
online_refused 2 "more than half of this machine's" --strategy msm --length 2000000000 --online --memory 10
online_refused 3 "the smallest feasible budget is 1 slots" --length 10 --online --memory 0
online_refused 3 "the smallest feasible budget is 1 slots" --length 10 --online --strategy hsm --alpha 3.5 --memory 0.5 --curve
online_refused 3 "the smallest feasible budget is 1 slots (" --length 10 --online --cell gru --memory 100B
