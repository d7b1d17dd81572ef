#!/bin/sh
# tests/test_exports.sh: each installed library exports exactly what its
# installed headers declare, no more and no less.
#   libbpttcore: bptt.h, mem.h, steps.h, budget.h, online.h, twolevel.h
#   libbptt:     real.h, cell.h, model.h, optim.h, data.h, exec.h,
#                finite.h, session.h
# The declared functions come from the compiler itself (gcc -aux-info over
# a file that includes the headers: every prototype with the header and
# line it came from), the declared variables from the headers' extern
# declarations, the exports from the shared library's dynamic symbol
# table (nm -D).  A failure names the symbol, the library and the side
# that lacks it: a header declaring a function the library hides (a user's
# link fails), or a library exporting a name no header declares (the
# library's insides, which users would come to call).
#
# Needs SRCDIR and BUILDDIR (make check sets them); skipped (77) where the
# shared libraries were not built (--disable-shared).
set -eu
: "${SRCDIR:?SRCDIR is not set (run through make check)}"
: "${BUILDDIR:?BUILDDIR is not set (run through make check)}"
CC=${CC:-gcc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { printf 'FAIL: %s\n' "$*"; fails=$((fails + 1)); }

core="bptt.h mem.h steps.h budget.h online.h twolevel.h"
train="real.h cell.h model.h optim.h data.h exec.h finite.h session.h"

# every installed header belongs to one library
installed=$(sed -n '/^CORE_HDRS =/,/[^\\]$/p; /^TRAIN_HDRS =/,/[^\\]$/p' \
    "$SRCDIR/Makefile.am" | grep -o 'include/bptt/[a-z_]*\.h' |
    sed 's|include/bptt/||' | sort | tr '\n' ' ')
listed=$(printf '%s\n' $core $train | sort | tr '\n' ' ')
[ "$installed" = "$listed" ] ||
    fail "Makefile.am installs '$installed'; this test knows '$listed'"

# declared NAMES...: the functions and variables the headers declare, one a
# line, sorted
declared() {
    : > "$tmp/decl.c"
    for h in "$@"; do printf '#include <bptt/%s>\n' "$h" >> "$tmp/decl.c"; done
    (cd "$tmp" && $CC -std=c11 -I"$SRCDIR/include" -fsyntax-only \
        -aux-info decl.aux decl.c) || { fail "the headers $* do not compile"; return; }
    for h in "$@"; do
        # functions: the prototypes gcc saw in this header
        grep -F "/include/bptt/$h:" "$tmp/decl.aux" | grep ' extern ' |
            sed 's/^.*\*\/ *//; s/ *(.*//; s/.*[ *]//'
        # variables: extern declarations that are not prototypes
        sed -n 's/^extern [^(]*[ *]\([a-z_][a-z0-9_]*\)\(\[[^]]*\]\)*;.*/\1/p' \
            "$SRCDIR/include/bptt/$h"
    done | sort -u
}
# exported LIB: the names the shared library defines for others
exported() {
    nm -D --defined-only "$1" | awk '$2 ~ /^[TDBRVW]$/ { print $3 }' |
        grep -v '^_' | sort -u
}

for lib in core train; do
    before=$fails
    case $lib in
    core) so=$BUILDDIR/.libs/libbpttcore.so; headers=$core ;;
    train) so=$BUILDDIR/.libs/libbptt.so; headers=$train ;;
    esac
    if [ ! -f "$so" ]; then
        echo "SKIP: test_exports: $so was not built (shared libraries disabled)"
        exit 77
    fi
    # shellcheck disable=SC2086 # the header list
    declared $headers > "$tmp/$lib.declared"
    exported "$so" > "$tmp/$lib.exported"
    [ -s "$tmp/$lib.declared" ] || fail "$lib: its headers declare nothing"
    for s in $(comm -23 "$tmp/$lib.declared" "$tmp/$lib.exported"); do
        fail "${so##*/}: its headers declare $s, which it does not export"
    done
    for s in $(comm -13 "$tmp/$lib.declared" "$tmp/$lib.exported"); do
        fail "${so##*/} exports $s, which no installed header of it declares"
    done
    [ "$fails" -gt "$before" ] ||
        echo "ok: ${so##*/}: $(wc -l < "$tmp/$lib.exported" | tr -d ' ') symbols exported, each declared by $headers"
done
[ "$fails" -eq 0 ] || { echo "test_exports: $fails mismatch(es)"; exit 1; }
echo "test_exports: every export declared, every declaration exported"
