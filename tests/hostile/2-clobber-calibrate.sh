# Chapter 2, `bptt calibrate`: its scratch file is made new in the folder
# (O_CREAT|O_EXCL|O_NOFOLLOW), so whatever already has its name there (a
# file, a link, dangling or not, a FIFO) is refused in one line before any
# work and left as it was; a measurement leaves the folder as it found it,
# and its temporary folder under $TMPDIR is removed.
S=bptt-calibrate.scratch
CAL="calibrate --hidden 8 --batch 2 --repeats 2"
# left_alone: the refusal named the scratch file and ./d holds what it held
left_alone() {
    expect_refusal 2 || return 1
    if ! grep -q "$S' exists" err; then hfail "says: $(shown err)"
    elif [ "$(cat victim)" != precious ]; then hfail "the victim was written"
    elif [ -e d/nowhere ] || [ -L d/nowhere ]; then hfail "a link's target was made"
    elif [ "$(ls -A d | tr '\n' ' ')" != "$1" ]; then hfail "the folder holds: $(ls -A d | tr '\n' ' ')"
    else hpass; fi
}
fresh() { rm -rf d victim && mkdir d && echo precious >victim; }

hcase "calibrate: a file of the scratch file's name is refused and kept"
fresh; echo precious >"d/$S"
# shellcheck disable=SC2086
hrun -t 30 "$BPTT" $CAL --disk-dir d
if [ "$(cat "d/$S" 2>/dev/null)" != precious ]; then hfail "the planted file changed"
else left_alone "$S "; fi

for kind in dangling file; do
    hcase "calibrate: a link ($kind) of the scratch file's name is refused"
    fresh
    if [ "$kind" = dangling ]; then ln -s nowhere "d/$S"; else ln -s ../victim "d/$S"; fi
    # shellcheck disable=SC2086
    hrun -t 30 "$BPTT" $CAL --disk-dir d
    left_alone "$S "
done

hcase "calibrate: a FIFO of the scratch file's name is refused, not opened"
fresh
if mkfifo "d/$S" 2>/dev/null; then
    # shellcheck disable=SC2086
    hrun -t 30 "$BPTT" $CAL --disk-dir d
    left_alone "$S "
else hskip "no mkfifo here"; fi

hcase "calibrate --disk-dir: the folder is left as it was found"
fresh; echo keep >d/other
# shellcheck disable=SC2086
hrun -t 60 "$BPTT" $CAL --disk-dir d --format json
if [ "$hrc" -ne 0 ]; then hfail "exit $hrc: $(shown err)"
elif [ "$(ls -A d | tr '\n' ' ')" != "other " ]; then hfail "the folder holds: $(ls -A d | tr '\n' ' ')"
elif ! grep -q '"disk_dir_kind":"given"' out; then hfail "out: $(shown out)"
else hpass; fi

hcase "calibrate: the temporary folder under \$TMPDIR is removed"
rm -rf t && mkdir t
# shellcheck disable=SC2086
TMPDIR=$(pwd)/t hrun -t 60 "$BPTT" $CAL --format json
if [ "$hrc" -ne 0 ]; then hfail "exit $hrc: $(shown err)"
elif [ -n "$(ls -A t)" ]; then hfail "left: $(ls -A t | tr '\n' ' ')"
elif ! grep -q '"disk_dir_kind":"temporary"' out; then hfail "out: $(shown out)"
else hpass; fi
