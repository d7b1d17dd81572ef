# Chapter 3 (plan files): bptt validate reads a plan file whole, bounded,
# and checks what it states: its counts must be its actions', its members
# their types; what it is not (a directory, a FIFO, a device, a file
# larger than the bound, NUL bytes, arrays where numbers go, a member
# given twice) is refused in one line before any work; its memory stays
# near the size of the plan, not of the document's tree.
"$BPTT" plan --length 60 --memory 10 --alpha 3.5 --actions --format json >p.json
good=$(cat p.json)

# mutate NAME SED: p.json edited by sed into NAME.json
mutate() { sed "$2" p.json >"$1.json"; }

# whole counts get 1, the others 0.25: neither is what the plan has
for f in forward_ops:1 recompute_ops:1 backward_ops:1 actions:1 peak_slots:0.25 \
         full_peak_slots:0.25 forward_ops_per_step:0.25 memory_fraction:0.25; do
    v=${f#*:} f=${f%%:*}
    hcase "validate: a file stating a wrong $f is exit 1 naming it"
    mutate bad "s/\"$f\":[0-9.]*/\"$f\":$v/"
    hrun "$BPTT" validate bad.json
    if expect_refusal 1; then
        if grep -q "\"$f\"" err; then hpass; else hfail "the line does not name $f: $(shown err)"; fi
    fi
done

hcase "validate: the file's own counts, as bptt plan printed them, pass"
hrun "$BPTT" validate p.json
if [ "$hrc" -eq 0 ] && grep -q '^valid plan' out; then hpass; else hfail "exit $hrc: $(shown err)"; fi

for m in '"alpha":"3.5"' '"length":"60"' '"memory":"10"' '"forward_ops":"127"' \
         '"alpha":true' '"length":60.5' '"length":-60' '"strategy":7' '"memory":null'; do
    key=${m%%:*}
    hcase "validate: $m (a member of the wrong type) is refused, naming it"
    mutate bad "s/$key:[^,]*/$m/"
    hrun "$BPTT" validate bad.json
    if expect_refusal 2; then
        if grep -qF "$key" err || grep -q 'not a budget\|not a whole number' err; then hpass
        else hfail "the line does not name $key: $(shown err)"; fi
    fi
done

hcase "validate: a member given twice is refused"
printf '%s\n' "$good" | sed 's/^{/{"length":60,/' >bad.json
hrun "$BPTT" validate bad.json
expect_refusal 2 && { grep -q 'twice' err && hpass || hfail "$(shown err)"; }

hcase "validate: an array where a number goes is refused without reading it whole"
printf '%s\n' "$good" | sed 's/"alpha":3.5/"alpha":[1,2,3]/' >bad.json
hrun "$BPTT" validate bad.json
expect_refusal 2 && { grep -q '"alpha" is an array' err && hpass || hfail "$(shown err)"; }

hcase "validate: a NUL byte is refused with its line and column"
printf '{"schedule":[{"op":"advance",\n"st\000ep":1}]}\n' >bad.json
hrun "$BPTT" validate bad.json
expect_refusal 2 && { grep -q 'bad.json:2:4: a NUL byte' err && hpass || hfail "$(shown err)"; }

hcase "validate: a directory is named as one"
mkdir -p dir
hrun "$BPTT" validate dir
expect_refusal 2 && { grep -q "'dir' is a directory" err && hpass || hfail "$(shown err)"; }

hcase "validate: a FIFO with no writer is refused at once, not waited on"
mkfifo fifo
hrun -t 5 "$BPTT" validate fifo
expect_refusal 2 && { grep -q 'is a FIFO' err && hpass || hfail "$(shown err)"; }

hcase "validate: /dev/zero is refused at once, not read forever"
hrun -t 5 "$BPTT" validate /dev/zero
expect_refusal 2 && { grep -q 'is a device' err && hpass || hfail "$(shown err)"; }

hcase "validate: a file over the bound (1 GiB) is refused before it is read"
truncate -s 1100M big.json
hrun -t 5 "$BPTT" validate big.json
expect_refusal 2 && { grep -q 'larger than' err && hpass || hfail "$(shown err)"; }
rm -f big.json

hcase "validate: memory stays near the plan's size (a 10^5-step plan)"
"$BPTT" plan --length 100000 --memory 1% --actions --format json >long.json
size=$(wc -c <long.json)
if [ "${BPTT_SANITIZERS:-no}" = yes ]; then
    hskip "a sanitizer build's allocator keeps freed memory in quarantine, so its peak says nothing of the reader"
elif [ ! -x /usr/bin/time ]; then
    hskip "/usr/bin/time (GNU time) is not installed"
else
    hrc=0
    /usr/bin/time -f '%M' -o rss "$BPTT" validate long.json >out 2>err || hrc=$?
    rss_kib=$(tail -n 1 rss)
    base_kib=$(/usr/bin/time -f '%M' "$BPTT" validate p.json 2>&1 >/dev/null | tail -n 1)
    grow=$(( (rss_kib - base_kib) * 1024 ))
    # the plan: 8 bytes an action, about 27 bytes of text each; the input
    # itself is held too: at most 2 times the input in all (the tree of
    # the document took about 20)
    if [ "$hrc" -ne 0 ]; then hfail "exit $hrc: $(shown err)"
    elif [ "$grow" -gt $((2 * size)) ]; then
        hfail "held $grow bytes more than for a small plan, for an input of $size bytes"
    else hpass; fi
fi

for shape in object array; do
    hcase "validate: a plan file ($shape) that starts with a UTF-8 byte order mark is read"
    if [ "$shape" = object ]; then cp p.json plain.json
    else "$BPTT" plan --length 60 --memory 10 --alpha 3.5 --actions --format json |
        sed -n 's/.*"schedule":\(\[.*\]\).*/\1/p' >plain.json; fi
    printf '\357\273\277' | cat - plain.json >bom.json
    hrun "$BPTT" validate --length 60 --alpha 3.5 bom.json
    if [ "$hrc" -eq 0 ] && grep -q '^valid plan' out; then hpass
    else hfail "exit $hrc: $(shown err)"; fi
done

# A stated count is a whole number a plan can have: 0 to 2^53 (a double
# holds no larger one exactly, and no plan has that many actions); any
# other (1e30, past the 9.2e18 that once meant "not stated", negative,
# fractional, beyond a double's range) is exit 1 naming the field and
# the value as given, as a wrong count is.
for f in forward_ops:1e30 recompute_ops:1e19 backward_ops:9223372036854775807 \
         actions:-3 forward_ops:2.5 recompute_ops:1e400 actions:1E+300; do
    v=${f#*:} f=${f%%:*}
    hcase "validate: a file stating \"$f\":$v (no plan's count) is exit 1 naming it"
    mutate bad "s/\"$f\":[0-9.]*/\"$f\":$v/"
    hrun "$BPTT" validate bad.json
    if expect_refusal 1; then
        if grep -qF "\"$f\":$v" err; then hpass; else hfail "the line does not name \"$f\":$v: $(shown err)"; fi
    fi
done

# The validator's work follows the plan's length (a byte a step): a small
# file stating a length its actions cannot cover (a plan of length T holds
# T backward actions) is refused in one line, not run on 4 GiB.
hcase "validate: a 100-byte plan stating length 4294967294 is refused at once"
printf '{"length":4294967294,"schedule":[{"op":"advance","step":1},{"op":"backward","step":1}]}\n' >long.json
if [ "${BPTT_SANITIZERS:-no}" = yes ]; then
    hskip "a sanitizer build cannot run under ulimit -v (AddressSanitizer maps terabytes of shadow memory)"
else
    hrc=0
    (ulimit -v 524288; exec timeout -k 2 10 "$BPTT" validate long.json) >out 2>err || hrc=$?
    if expect_refusal 2; then
        if grep -q '"length":4294967294 is more steps than the 2 actions' err; then hpass
        else hfail "$(shown err)"; fi
    fi
fi
hcase "validate: a step of 4294967294 alone (the length then) is refused at once"
printf '[{"op":"advance","step":4294967294}]\n' >step.json
hrun -t 10 "$BPTT" validate step.json
expect_refusal 2 && { grep -q 'length 4294967294 (the largest step)' err && hpass || hfail "$(shown err)"; }

# An online plan's record (its extra members: online, lookahead,
# prefix_actions, offline_forward_ops, online_offline_ratio) is read back
# as is, from stdin, and has the counts the record printed; its stated
# counts are still checked (a forged forward_ops is exit 1).
for st in hsm msm; do
    hcase "validate -: bptt plan --online --strategy $st --actions --format json, as is"
    "$BPTT" plan --online --strategy "$st" --length 90 --alpha 3.5 --memory 12% \
        --actions --format json >online.json 2>err || { hfail "plan: $(shown err)"; continue; }
    hrc=0
    timeout -k 2 10 "$BPTT" validate --format json - <online.json >out 2>err || hrc=$?
    want=$(sed 's/.*"forward_ops":\([0-9]*\),.*/\1/' online.json)
    if [ "$hrc" -ne 0 ]; then hfail "exit $hrc: $(shown err)"
    elif ! grep -q "\"valid\":true,.*\"forward_ops\":$want," out; then hfail "$(shown out) (record: $want)"
    else
        sed 's/"forward_ops":[0-9]*,/"forward_ops":1,/' online.json >forged.json
        hrun "$BPTT" validate forged.json
        if [ "$hrc" -eq 1 ] && grep -q '"forward_ops":1, the plan has' err out; then hpass
        else hfail "a forged count: exit $hrc: $(shown err) $(shown out)"; fi
    fi
done
