#!/bin/sh
# tests/test_usage_man.sh: the command line is described from one source
# of truth, the option tables the parsers use, and its two descriptions
# cannot disagree with them or with each other.  For each command (plan,
# run, compare, sweep, validate, calibrate):
#   - every option of its parser's table (src/cli: the struct option
#     entries; sweep: every grid key of src/io/grid.c and its own) is in
#     `bptt CMD --help`, but the test hooks (marked "test hook" beside
#     them);
#   - every option --help names is one the parser takes (bptt CMD --OPT
#     never says "unrecognized option");
#   - doc/bptt.1's paragraph of the command names exactly the options of
#     --help (--help and --version aside: the man page says them once for
#     all), and its SYNOPSIS names every command.
# A failure names the command, the option and the side that lacks it.
#
# Needs BPTT and SRCDIR (make check sets them).
set -eu
: "${BPTT:?BPTT is not set (run through make check)}"
: "${SRCDIR:?SRCDIR is not set (run through make check)}"
MAN=$SRCDIR/doc/bptt.1
CLI=$SRCDIR/src/cli
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { printf 'FAIL: %s\n' "$*"; fails=$((fails + 1)); }

# long options of a struct option table: {"name", X_argument ...}, not
# the lines marked as a test hook
table_options() {
    grep -h '{"[a-z][a-z-]*", *\(required\|no\|optional\)_argument' "$@" |
        grep -v 'test hook' |
        sed 's/.*{"\([a-z][a-z-]*\)".*/--\1/' | sort -u
}
# the grid's keys, each an option of bptt sweep
grid_options() {
    sed -n '/bptt_grid_keys\[\] *=/,/};/p' "$SRCDIR/src/io/grid.c" |
        grep -o '{"[a-z][a-z_-]*"' | sed 's/{"\(.*\)"/--\1/' | sort -u
}
# the options of --help: those of its usage lines (up to the first blank
# line) and those that begin a line of its option list; an option of
# another command named in prose ("as bptt plan --actions prints") is
# neither
help_options() {
    "$BPTT" "$1" --help | awk '
        /^$/ { usage_done = 1 }
        !usage_done { print; next }
        /^ *--[a-z]/ { print $1 }' |
        grep -o -- '--[a-z][a-z-]*' | sort -u
}
# the options doc/bptt.1 names in the .TP paragraph of command $1 (from
# ".B cmd" to the next .TP or section), written \fB\-\-name\fR
man_options() {
    awk -v cmd="$1" '
        /^\.(TP|SH|PP)/ { inside = 0 }
        inside { print }
        prev_tp && $0 == ".B " cmd { inside = 1 }
        { prev_tp = ($0 == ".TP") }' "$MAN" |
        sed 's/\\-/-/g' | grep -o -- '--[a-z][a-z-]*' | sort -u
}

for cmd in plan run compare sweep validate calibrate; do
    before=$fails
    case $cmd in
    plan) table_options "$CLI/plan_args.c" > "$tmp/table" ;;
    run) table_options "$CLI/run_args.c" "$CLI/run.h" > "$tmp/table" ;;
    compare) table_options "$CLI/compare.c" "$CLI/run.h" > "$tmp/table" ;;
    validate) table_options "$CLI/validate.c" > "$tmp/table" ;;
    calibrate) table_options "$CLI/calibrate.c" "$CLI/run.h" > "$tmp/table" ;;
    sweep) { table_options "$CLI/sweep.c"; grid_options; } | sort -u > "$tmp/table" ;;
    esac
    [ -s "$tmp/table" ] || fail "$cmd: no option table found in the sources"
    help_options "$cmd" > "$tmp/help"
    [ -s "$tmp/help" ] || fail "$cmd: --help names no option"
    man_options "$cmd" > "$tmp/man"
    [ -s "$tmp/man" ] || fail "$cmd: doc/bptt.1 has no paragraph naming its options"

    for o in $(comm -23 "$tmp/table" "$tmp/help"); do
        fail "$cmd: $o is in the parser's table but not in --help"
    done
    for o in $(cat "$tmp/help"); do
        "$BPTT" "$cmd" "$o" </dev/null >/dev/null 2>"$tmp/err" || true
        if grep -q "unrecognized option\|unknown option" "$tmp/err"; then
            fail "$cmd: --help names $o, which the parser refuses: $(head -c 200 "$tmp/err")"
        fi
    done
    grep -v -x -e --help -e --version "$tmp/help" > "$tmp/help.cmp" || true
    for o in $(comm -23 "$tmp/help.cmp" "$tmp/man"); do
        fail "$cmd: $o is in --help but not in doc/bptt.1's paragraph of $cmd"
    done
    for o in $(comm -13 "$tmp/help.cmp" "$tmp/man"); do
        fail "$cmd: doc/bptt.1 names $o for $cmd, which --help does not"
    done
    sed -n '/^\.SH SYNOPSIS/,/^\.SH/p' "$MAN" | grep -q "^\.B bptt $cmd\$" ||
        fail "$cmd: not in doc/bptt.1's SYNOPSIS"
    [ "$fails" -gt "$before" ] ||
        echo "ok: $cmd: $(wc -l < "$tmp/help" | tr -d ' ') options in --help, the table and doc/bptt.1 agree"
done
if [ "$fails" -gt 0 ]; then
    echo "test_usage_man: $fails disagreement(s)"
    exit 1
fi
echo "test_usage_man: all agree"
