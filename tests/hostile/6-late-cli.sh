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
