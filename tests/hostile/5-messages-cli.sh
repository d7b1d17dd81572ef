# Chapter 5: every error line of the command line is one line, whatever
# the value it quotes holds (a newline, an escape sequence, a carriage
# return, a DEL, invalid UTF-8).
esc=$(printf '\033')
for v in "$(printf '5\nbptt: all good')" "$(printf '5%s[2J%s]0;title\a' "$esc" "$esc")" \
         "$(printf 'x\rrewritten')" "$(printf 'a\177b')" "$(printf '\377\376')"; do
    for cmd in "plan --length 100 --memory" "plan --length" "run --length 10 --hidden" \
               "sweep --out x.jsonl --length" "validate --memory" \
               "plan --length 100 --online --memory" "plan --length 100 --online --curve --points" \
               "plan --length 100 --online --strategy"; do
        hcase "bptt $cmd <bytes $(printf '%s' "$v" | od -An -tx1 | tr -d ' \n' | head -c 32)>"
        hrun "$BPTT" $cmd "$v"
        expect_refusal 2 && hpass
    done
done

# Numbers are decimal: hex ("0x10KiB" was read as 16 KiB, "0x1p10B" as
# 1024 bytes), exponents in budgets, "inf", "nan" and a decimal comma are
# refused in one line that names what is wrong and what would work, the
# value's control bytes escaped
for v in 0x10KiB 0x1p10B 0X10% inf% nan% infB 1e3B 1,5MiB "$(printf '0x10%s[2JKiB' "$esc")"; do
    case $v in
    0[xX]*) why="hexadecimal is not read" ;;
    inf* | nan*) why="infinity and NaN are not numbers here" ;;
    1e3B) why="exponents are not read" ;;
    *,*) why="a comma is no decimal point" ;;
    esac
    for cmd in "plan --length 100 --cell lstm --memory" \
               "run --length 5 --hidden 4 --batch 2 --input 3 --iters 1 --memory"; do
        # a comma makes a list of budgets for plan ("1,5MiB": 1 slot, 5 MiB)
        case $v,$cmd in *,*,plan*) continue ;; esac
        hcase "bptt ${cmd%% --*} --memory '$(printf '%s' "$v" | tr -d '\033')': refused, saying why"
        # shellcheck disable=SC2086
        hrun "$BPTT" $cmd "$v"
        if expect_refusal 2; then
            if grep -q "is not a budget: $why (write numbers in decimal digits with a point, e.g. " err &&
                ! grep -q "$esc" err; then hpass
            else hfail "message: $(shown err)"; fi
        fi
    done
done
for v in 0x1 0x1p-3 inf nan; do
    hcase "bptt run --lr $v: refused, saying why"
    hrun "$BPTT" run --length 5 --hidden 4 --batch 2 --input 3 --iters 1 --lr "$v"
    if expect_refusal 2; then
        if grep -q -- "--lr: '$v' is not a number in" err; then hpass
        else hfail "message: $(shown err)"; fi
    fi
done
hcase "bptt run --lr 1e-3: taken"
hrun "$BPTT" run --length 5 --hidden 4 --batch 2 --input 3 --iters 1 --strategy full --lr 1e-3
if [ "$hrc" -eq 0 ]; then hpass; else hfail "exit $hrc: $(shown err)"; fi

# A German locale in the caller's environment (LC_ALL, LC_NUMERIC): "2.5%"
# and "1.5MiB" are read as anywhere else.  The locale is the system's, or
# built here with localedef into a LOCPATH; without either, skipped.
locpath=
if ! locale -a 2>/dev/null | grep -qi '^de_DE\.utf-\{0,1\}8$'; then
    if localedef -i de_DE -f UTF-8 "$(pwd)/loc/de_DE.UTF-8" >/dev/null 2>&1 ||
        { mkdir -p loc && localedef -i de_DE -f UTF-8 "$(pwd)/loc/de_DE.UTF-8" >/dev/null 2>&1; }; then
        locpath=$(pwd)/loc
    else
        locpath=none
    fi
fi
for var in LC_ALL LC_NUMERIC; do
    for cmd in "plan --length 100 --memory 2.5%" \
               "plan --length 100 --cell lstm --strategy chen --memory 1.5MiB" \
               "run --length 5 --hidden 4 --batch 2 --input 3 --iters 1 --strategy full --memory 250%" \
               "run --length 5 --hidden 4 --batch 2 --input 3 --iters 1 --strategy full --memory 1.5MiB"; do
        hcase "$var=de_DE.UTF-8: bptt $cmd"
        if [ "$locpath" = none ]; then
            hskip "no de_DE locale installed, and localedef could not build one"
            continue
        fi
        # shellcheck disable=SC2086
        hrun env ${locpath:+LOCPATH=$locpath} "$var=de_DE.UTF-8" "$BPTT" $cmd
        if [ "$hrc" -eq 0 ] && [ -s out ]; then hpass
        else hfail "exit $hrc: $(shown err)"; fi
    done
done
rm -rf loc
