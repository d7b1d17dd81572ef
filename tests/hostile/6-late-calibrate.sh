# Chapter 6, `bptt calibrate`: a folder that is not there or not a folder,
# a $TMPDIR it cannot use and rounds out of bounds are refused in one line,
# exit 2, before any work: nothing made, nothing measured.
CAL="calibrate --hidden 8 --batch 2"
nothing_made() {
    expect_refusal 2 || return 1
    if ! grep -q -- "$1" err; then hfail "says: $(shown err)"
    elif [ -n "$(ls -A | grep -v '^\(out\|err\|afile\)$')" ]; then
        hfail "left: $(ls -A | tr '\n' ' ')"
    else hpass; fi
}
echo x >afile
for dir in nowhere nowhere/deeper afile afile/x; do
    hcase "calibrate --disk-dir $dir: refused before the work"
    # shellcheck disable=SC2086
    hrun "$BPTT" $CAL --disk-dir "$dir"
    case $dir in afile) want="is a regular file, not a folder" ;;
    afile/x) want="cannot open\|not a folder\|does not exist" ;;
    *) want="does not exist" ;; esac
    nothing_made "$want"
done
for t in "$(pwd)/nowhere" "$(pwd)/afile"; do
    hcase "calibrate with TMPDIR=${t##*/}: refused, naming \$TMPDIR"
    # shellcheck disable=SC2086
    TMPDIR=$t hrun "$BPTT" $CAL
    nothing_made "(\$TMPDIR)"
done
for n in 0 -3 100001 99999999999999999999 "" 1.5 1e3; do
    hcase "calibrate --repeats '$n': refused"
    # shellcheck disable=SC2086
    hrun "$BPTT" $CAL --repeats "$n"
    nothing_made "--repeats"
done
