# Chapter 9: messages say what is true.  A directory is called a
# directory (not an I/O error); an infeasible budget is explained at the
# alpha that was planned and, for a byte budget, in bytes too.
mkdir -p dir
hcase "validate DIR says it is a directory"
hrun "$BPTT" validate dir
expect_refusal 2 && { grep -q "is a directory" err && ! grep -qi 'input/output' err && hpass || hfail "$(shown err)"; }

hcase "plan --cell lstm, a byte budget below the least: the cell's alpha and the bytes"
hrun "$BPTT" plan --length 1000 --cell lstm --memory 10KiB --strategy chen
if expect_refusal 3; then
    # an LSTM's internal state is 3.5 hidden states (doc/plan.md)
    if grep -q 'alpha 3.5' err && grep -q 'bytes)' err && ! grep -q 'alpha 1;' err; then hpass
    else hfail "$(shown err)"; fi
fi

hcase "plan --alpha 3.5: the smallest feasible budget is named in slots as --memory takes them"
hrun "$BPTT" plan --length 1000 --alpha 3.5 --memory 3 --strategy chen
if expect_refusal 3; then
    least=$(sed -n 's/.*smallest feasible budget is \([0-9.]*\) slots.*/\1/p' err)
    if [ -z "$least" ]; then hfail "no budget named: $(shown err)"
    elif "$BPTT" plan --length 1000 --alpha 3.5 --memory "$least" --strategy chen >/dev/null 2>&1; then hpass
    else hfail "--memory $least, the budget it names, is refused"; fi
fi
