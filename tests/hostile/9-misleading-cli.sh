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

# A text of one distinct byte is one class: its loss is 0 whatever the
# weights, so training it would say nothing was wrong.
hcase "run --task text:FILE of one distinct byte is refused, naming the byte"
printf 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa' > one.txt
hrun "$BPTT" run --length 10 --hidden 4 --batch 2 --iters 1 --task text:one.txt
expect_refusal 2 && { grep -q "one distinct byte (0x61)" err && hpass || hfail "$(shown err)"; }

hcase "run --input 255 on a text of 256 distinct bytes names the width that works"
awk 'BEGIN { for (r = 0; r < 2; r++) for (i = 0; i < 256; i++) printf "%c", i }' > all.bin
if [ "$(LC_ALL=C wc -c < all.bin)" -ne 512 ]; then hskip "awk here cannot write every byte"
else
    hrun "$BPTT" run --length 10 --hidden 4 --batch 2 --iters 1 --task text:all.bin --input 255
    expect_refusal 2 && { grep -q "256 here (give --input 256 or leave it out)" err && hpass || hfail "$(shown err)"; }
fi

# A share that is read but comes to more than a plan takes: the message
# must not quote a range that holds the value refused.
hcase "plan --memory 1000000% of a huge full peak names the largest share, not 'up to 1000000%'"
hrun "$BPTT" plan --length 2147483646 --alpha 1000000 --memory 1000000%
if expect_refusal 2; then
    if grep -q 'up to 1000000%' err; then hfail "quotes a range holding the value: $(shown err)"
    elif grep -q 'give at most 107374.182550%' err; then hpass
    else hfail "$(shown err)"; fi
fi

hcase "plan --memory 5% where full BPTT itself is past 64 bits: said so, not 'budget 0 slots'"
hrun "$BPTT" plan --length 2147483646 --alpha 999999.999999 --memory 5%
expect_refusal 2 && { grep -q 'more than 2^63 units' err && ! grep -q 'budget 0' err && hpass || hfail "$(shown err)"; }

hcase "plan --cell lstm --memory of 2^61 bytes: out of range with the largest, not 'not a budget'"
hrun "$BPTT" plan --length 100 --cell lstm --memory 2305843009213693952B
expect_refusal 2 && { grep -q 'give at most 2305843009213693951 bytes' err && hpass || hfail "$(shown err)"; }

hcase "run --memory 1e-320B: exponents refused, not 'give at most 4e18 bytes'"
hrun "$BPTT" run --length 10 --memory 1e-320B
expect_refusal 2 && { grep -q 'exponents are not read' err && ! grep -q '4e18' err && hpass || hfail "$(shown err)"; }
