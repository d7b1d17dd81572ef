# Chapter 5: every error line of the command line is one line, whatever
# the value it quotes holds (a newline, an escape sequence, a carriage
# return, a DEL, invalid UTF-8).
esc=$(printf '\033')
for v in "$(printf '5\nbptt: all good')" "$(printf '5%s[2J%s]0;title\a' "$esc" "$esc")" \
         "$(printf 'x\rrewritten')" "$(printf 'a\177b')" "$(printf '\377\376')"; do
    for cmd in "plan --length 100 --memory" "plan --length" "run --length 10 --hidden" \
               "sweep --out x.jsonl --length" "validate --memory"; do
        hcase "bptt $cmd <bytes $(printf '%s' "$v" | od -An -tx1 | tr -d ' \n' | head -c 32)>"
        hrun "$BPTT" $cmd "$v"
        expect_refusal 2 && hpass
    done
done
