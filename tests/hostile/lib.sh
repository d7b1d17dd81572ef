# tests/hostile/lib.sh: what every chapter of tests/test_hostile.sh
# shares; sourced, with the chapter's own empty folder as the working
# directory.
#
#   hcase NAME          starts a case (its name goes on every line it prints)
#   hpass / hskip WHY   ends it: passed, or not runnable here (said by name)
#   hfail WHY           ends it failed (the chapter goes on with the next)
#   hrun [-t SECS] CMD...  runs CMD with stdin from /dev/null, a time limit
#                       (default 10 s), stdout in ./out and stderr in ./err;
#                       $hrc is its exit status (124: it hung)
#   one_line FILE       0 when FILE is exactly one line, with no byte below
#                       0x20 (but the newline ending it) and no DEL
#   marker_absent       0 unless a command smuggled in by a case ran (it
#                       would have made ./PWNED or $HOSTILE_MARK)
#   shown FILE          FILE's first bytes as one printable line
#   expect_refusal CODE the case's command (hrun) exited CODE, with one
#                       line on stderr and nothing on stdout; else hfail
# A case that neither passes, skips nor fails by its end is counted failed.
BPTT=${BPTT:?}
HOSTILE_MARK=$(pwd)/PWNED
export HOSTILE_MARK
h_name= h_pass=0 h_skip=0 h_fail=0
h_close() {
    if [ -n "$h_name" ]; then
        echo "FAIL: $h_name: the case ended without a verdict"
        h_fail=$((h_fail + 1))
    fi
}
hcase() { h_close; h_name=$1; rm -f "$HOSTILE_MARK"; }
hpass() { printf "ok: %s\n" "$h_name"; h_pass=$((h_pass + 1)); h_name=; }
hskip() { printf "SKIP: %s: %s\n" "$h_name" "$*"; h_skip=$((h_skip + 1)); h_name=; }
hfail() { printf "FAIL: %s: %s\n" "$h_name" "$*"; h_fail=$((h_fail + 1)); h_name=; }
hostile_end() { h_close; echo "# counts: $h_pass $h_skip $h_fail"; }
hrun() {
    h_t=10
    if [ "$1" = -t ]; then h_t=$2; shift 2; fi
    hrc=0
    timeout -k 2 "$h_t" "$@" </dev/null >out 2>err || hrc=$?
}
one_line() {
    [ "$(wc -l <"$1")" -eq 1 ] || return 1
    [ "$(tail -c 1 "$1" | od -An -c | tr -d ' ')" = '\n' ] || return 1
    ! LC_ALL=C tr -d '\n' <"$1" | LC_ALL=C grep -q '[[:cntrl:]]'
}
# shown FILE: its first 200 bytes on one line, control bytes as \ooo
shown() { head -c 200 "$1" | od -An -c | tr '\n' ' ' | tr -s ' '; }
marker_absent() { [ ! -e "$HOSTILE_MARK" ] && [ ! -e PWNED ]; }
expect_refusal() {
    [ "$hrc" -eq "$1" ] || { hfail "exit $hrc, not $1 (stderr: $(shown err))"; return 1; }
    one_line err || { hfail "stderr is not one clean line: $(shown err)"; return 1; }
    [ ! -s out ] || { hfail "stdout not empty: $(shown out)"; return 1; }
    return 0
}
