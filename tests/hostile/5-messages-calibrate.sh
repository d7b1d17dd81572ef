# Chapter 5, `bptt calibrate`: its refusals are one line whatever the
# folder's name holds (a newline, an escape sequence, a carriage return,
# DEL, invalid UTF-8), the bytes shown escaped.
esc=$(printf '\033')
for v in "$(printf 'd\nbptt: all good')" "$(printf 'd%s[2J%s]0;title\a' "$esc" "$esc")" \
         "$(printf 'x\rrewritten')" "$(printf 'a\177b')" "$(printf '\377\376')"; do
    hcase "bptt calibrate --disk-dir <bytes $(printf '%s' "$v" | od -An -tx1 | tr -d ' \n' | head -c 32)>"
    hrun "$BPTT" calibrate --hidden 8 --batch 2 --disk-dir "$v"
    if expect_refusal 2; then
        if grep -q "$esc" err; then hfail "an escape byte reached stderr"
        else hpass; fi
    fi
    hcase "bptt calibrate --repeats <bytes $(printf '%s' "$v" | od -An -tx1 | tr -d ' \n' | head -c 32)>"
    hrun "$BPTT" calibrate --repeats "$v"
    expect_refusal 2 && hpass
done
