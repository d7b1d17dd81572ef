# Chapter 6: bad input is found before the work.  An output name the file
# system cannot hold (with what bptt adds to it while writing) is refused
# at once, exit 2, one line, nothing made: never after a whole run.
long=$(printf 'n%.0s' $(seq 240))
deep=$(printf 'd%.0s' $(seq 300))/x.csv
RUN="run --length 2000 --hidden 64 --batch 16 --input 8 --iters 3"
for opt in --trace --memory-trace --dump-grads; do
    for name in "$long" "$deep"; do
        hcase "bptt run $opt <a name of ${#name} bytes>: refused before the run"
        # shellcheck disable=SC2086
        hrun -t 20 "$BPTT" $RUN "$opt" "$name"
        if expect_refusal 2; then
            if [ -n "$(ls)" ] && ls | grep -qv '^\(out\|err\)$'; then
                hfail "left files behind: $(ls | tr '\n' ' ')"
            else hpass; fi
        fi
    done
done
for name in "$long.jsonl" "$deep"; do
    hcase "bptt sweep --out <a name of ${#name} bytes>: refused before any point"
    hrun "$BPTT" sweep --length 100:1000:100 --memory 5% --out "$name"
    expect_refusal 2 && hpass
    hcase "bptt sweep --jobs <a name of ${#name} bytes>: refused"
    hrun "$BPTT" sweep --length 100 --memory 5% --out s.jsonl --jobs "$name"
    expect_refusal 2 && hpass
done

# A symbolic link where an output goes, dangling or not: the output would
# fail on it only at the end (or replace the link, or write through it),
# so it is refused before any work, exit 2, one line naming the link;
# --force (which replaces a regular file) does not make it an output
# either.  The link's target is neither written nor created.
SMALL="run --length 50 --hidden 8 --batch 2 --iters 1"
# link_refused: the case's command (hrun) refused the link in one line,
# wrote nothing and left the link and its target as they were
link_refused() {
    expect_refusal 2 || return 1
    if ! grep -q "is a symbolic link" err; then hfail "says: $(shown err)"
    elif [ -e nowhere ] || [ -L nowhere ]; then hfail "the dangling link's target was made"
    elif [ "$(cat victim)" != precious ]; then hfail "the link's target was written"
    elif [ -n "$(ls -A victim.d)" ]; then hfail "the linked directory was written: $(ls -A victim.d | tr '\n' ' ')"
    elif [ "$(ls -A | grep -v '^\(out\|err\|victim\|victim\.d\|link\)$')" ]; then
        hfail "left: $(ls -A | grep -v '^\(out\|err\|victim\|victim\.d\|link\)$' | tr '\n' ' ')"
    elif [ ! -L link ]; then hfail "the link was replaced"
    else hpass; fi
}
# plant KIND: ./link, dangling (to ./nowhere), to the file ./victim, or
# to the empty directory ./victim.d
plant() {
    rm -rf ./* && echo precious >victim && mkdir victim.d
    case $1 in
    dangling) ln -s nowhere link ;;
    file) ln -s victim link ;;
    dir) ln -s victim.d link ;;
    esac
}
for opt in --trace --memory-trace --dump-grads; do
    for kind in dangling file dir; do
        hcase "bptt run $opt <a link, $kind>: refused before the run"
        plant "$kind"
        # shellcheck disable=SC2086
        hrun -t 20 "$BPTT" $SMALL "$opt" link
        link_refused
    done
done
hcase "bptt run --dump-grads <a dangling link with a trailing slash>: refused"
plant dangling
# shellcheck disable=SC2086
hrun -t 20 "$BPTT" $SMALL --dump-grads link/
link_refused
SW="sweep --strategy msm --length 50 --memory 50%"
for force in "" --force; do
    for kind in dangling file; do
        hcase "bptt sweep ${force:+$force }--out <a link, $kind>: refused before any point"
        plant "$kind"
        # shellcheck disable=SC2086
        hrun "$BPTT" $SW --out link $force
        link_refused
        hcase "bptt sweep ${force:+$force }--jobs <a link, $kind>: refused"
        plant "$kind"
        # shellcheck disable=SC2086
        hrun "$BPTT" $SW --out s.jsonl --jobs link $force
        link_refused
    done
done
rm -rf ./*

# bptt run --online reads a text's lines: what it cannot use is refused in
# one line, exit 2, before the run (no gradient dump made), whatever the
# separator or the file is.
printf 'one line\ntwo\n' >lines.txt
printf '\n\n\n' >blank.txt
ONL="run --online --hidden 4 --iters 1 --threads 1"
for sep in ab '' 0x 0x1 0xzz '\\' '\q' "$(printf '\033')" "$(printf '\303\251')"; do
    hcase "bptt run --online --separator <$(printf '%s' "$sep" | od -An -c | tr -s ' ')>: refused before the run"
    # shellcheck disable=SC2086
    hrun "$BPTT" $ONL --task text:lines.txt --separator "$sep" --dump-grads d
    expect_refusal 2 && { [ ! -e d ] && hpass || hfail "made the dump"; }
done
for task in copy text:/dev/zero text:. text:blank.txt text:nothere.txt; do
    hcase "bptt run --online --task $task: refused before the run"
    # shellcheck disable=SC2086
    hrun "$BPTT" $ONL --task "$task" --dump-grads d
    expect_refusal 2 && { [ ! -e d ] && hpass || hfail "made the dump"; }
done
for extra in "--separator #" "--batch 3" "--strategy chen" "--memory-trace m.csv" "--length 0"; do
    hcase "bptt run --online $extra: refused before the run"
    # shellcheck disable=SC2086
    hrun "$BPTT" $ONL --task text:lines.txt $extra --dump-grads d
    expect_refusal 2 && { [ ! -e d ] && [ ! -e m.csv ] && hpass || hfail "made an output"; }
done
hcase "bptt run --separator without --online: refused"
hrun "$BPTT" run --length 10 --hidden 4 --iters 1 --separator ,
expect_refusal 2 && hpass
hcase "bptt run --online --memory 0: infeasible, exit 3 before the run"
# shellcheck disable=SC2086
hrun "$BPTT" $ONL --task text:lines.txt --memory 0B --dump-grads d
expect_refusal 3 && { [ ! -e d ] && hpass || hfail "made the dump"; }
rm -rf ./*
