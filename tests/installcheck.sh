#!/bin/sh
# tests/installcheck.sh: the installed files, used as a library user would
# (`make installcheck`, which `make distcheck` runs after its install).
#
#   tests/installcheck.sh PREFIX BINDIR LIBDIR INCLUDEDIR MANDIR SRCDIR
#
# (each directory with DESTDIR in front when installed there).  Checks:
# every file is there (the command, both libraries shared and static, the
# headers, the pkg-config files, the man page); the headers installed are
# exactly the public ones, and each compiles alone, with warnings as
# errors and pkg-config's cflags only, without <cblas.h> or any header that
# is not installed; the core's pkg-config file asks for nothing but the
# library, and `pkg-config --cflags bptt` works without OpenBLAS's or GSL's
# .pc; a C program built with `pkg-config --cflags --libs bpttcore` and the
# shared core loaded from python3 with ctypes give the plans the installed
# `bptt plan` prints; examples/lif.c, a user's own model, built with the
# core's .pc alone, neither it nor the core needing OpenBLAS or GSL (ldd),
# passes its checks; a C program built with `pkg-config --cflags --libs
# bptt` makes a model, and examples/train.c, one of our cells under a
# budget, passes its checks.
# Exit 0, or 1 with the first failure on stderr.
set -eu
[ $# -eq 6 ] || { echo "usage: $0 PREFIX BINDIR LIBDIR INCLUDEDIR MANDIR SRCDIR" >&2; exit 2; }
prefix=$1 bindir=$2 libdir=$3 includedir=$4 mandir=$5 srcdir=$6
CC=${CC:-cc}
fail() { echo "installcheck: $*" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for f in "$bindir/bptt" "$libdir/libbpttcore.so" "$libdir/libbpttcore.a" \
         "$libdir/libbptt.so" "$libdir/libbptt.a" \
         "$includedir/bptt/bptt.h" "$includedir/bptt/model.h" \
         "$includedir/bptt/real.h" "$includedir/bptt/steps.h" \
         "$libdir/pkgconfig/bpttcore.pc" \
         "$libdir/pkgconfig/bptt.pc" "$mandir/man1/bptt.1"; do
    [ -e "$f" ] || fail "$f was not installed"
done

# the installed headers: exactly those a library user calls (doc/api.md)
public="bptt.h budget.h cell.h data.h exec.h finite.h mem.h model.h online.h optim.h real.h session.h steps.h twolevel.h"
got=$(cd "$includedir/bptt" && LC_ALL=C ls | tr '\n' ' ' | sed 's/ $//')
[ "$got" = "$public" ] ||
    fail "installed headers: '$got', expected '$public'"

# pkg-config on the installed .pc files (their prefix moved to where they
# are, for a DESTDIR install)
pc() {
    PKG_CONFIG_PATH=$libdir/pkgconfig pkg-config \
        --define-variable=prefix="$prefix" "$@"
}
libs=$(pc --libs bpttcore)
for w in $libs; do
    case $w in
    -L*|-lbpttcore) ;;
    *) fail "pkg-config --libs bpttcore asks for '$w' (only the library was expected: $libs)" ;;
    esac
done
# the training library's cflags need no .pc of OpenBLAS or GSL (a user of
# its headers is not told where BLAS lives): asked with an empty search
# path for those two
mkdir "$tmp/pc"
cp "$libdir/pkgconfig/bpttcore.pc" "$libdir/pkgconfig/bptt.pc" "$tmp/pc/"
PKG_CONFIG_LIBDIR=$tmp/pc PKG_CONFIG_PATH= pkg-config \
    --define-variable=prefix="$prefix" --cflags bptt > "$tmp/cflags" 2>&1 ||
    fail "pkg-config --cflags bptt needs more than bptt.pc and bpttcore.pc: $(cat "$tmp/cflags")"
! grep -qi 'openblas\|gsl' "$tmp/cflags" ||
    fail "pkg-config --cflags bptt names OpenBLAS or GSL: $(cat "$tmp/cflags")"

# each installed header on its own, as the first and only include of a
# file: it must bring everything it needs (a header it includes that was
# not installed is not found) and nothing from OpenBLAS (the dependencies
# -M lists name no cblas.h or openblas)
for h in $public; do
    printf '#include <bptt/%s>\n' "$h" > "$tmp/alone.c"
    # shellcheck disable=SC2046
    $CC -std=c11 -Wall -Wextra -Werror -c -o "$tmp/alone.o" "$tmp/alone.c" \
        $(pc --cflags bptt) ||
        fail "<bptt/$h> does not compile on its own with pkg-config --cflags bptt"
    # shellcheck disable=SC2046
    $CC -std=c11 -M "$tmp/alone.c" $(pc --cflags bptt) > "$tmp/alone.d" ||
        fail "cannot list what <bptt/$h> includes"
    if grep -qi 'cblas\|openblas' "$tmp/alone.d"; then
        fail "<bptt/$h> includes OpenBLAS's headers: $(tr -s ' \\\n' ' ' < "$tmp/alone.d")"
    fi
done

# shellcheck disable=SC2046 # pkg-config's words
$CC -o "$tmp/use-planner" "$srcdir/tests/install/use-planner.c" \
    $(pc --cflags --libs bpttcore) ||
    fail "cannot build a program with pkg-config --cflags --libs bpttcore"
# shellcheck disable=SC2046
$CC -o "$tmp/use-train" "$srcdir/tests/install/use-train.c" \
    $(pc --cflags --libs bptt) ||
    fail "cannot build a program with pkg-config --cflags --libs bptt"
# a user's own model (examples/lif.c) through the installed executor,
# built as a user would, with warnings as errors, from the core alone
# shellcheck disable=SC2046
$CC -std=c11 -O2 -Wall -Wextra -Werror -o "$tmp/lif" "$srcdir/examples/lif.c" \
    $(pc --cflags --libs bpttcore) ||
    fail "cannot build examples/lif.c with pkg-config --cflags --libs bpttcore"
# one of our cells trained through a session (examples/train.c), the same way
# shellcheck disable=SC2046
$CC -std=c11 -O2 -Wall -Wextra -Werror -o "$tmp/train" "$srcdir/examples/train.c" \
    $(pc --cflags --libs bptt) ||
    fail "cannot build examples/train.c with pkg-config --cflags --libs bptt"
LD_LIBRARY_PATH=$libdir
export LD_LIBRARY_PATH
# neither the user's model nor the core loads OpenBLAS or GSL
for f in "$tmp/lif" "$libdir/libbpttcore.so"; do
    ldd "$f" > "$tmp/ldd" 2>&1 || fail "ldd $f failed: $(cat "$tmp/ldd")"
    if grep -qi 'openblas\|libgsl\|libbptt\.so' "$tmp/ldd"; then
        fail "${f##*/} needs more than the core: $(tr -s ' \t\n' ' ' < "$tmp/ldd")"
    fi
done

# a json field of `bptt plan --format json`
field() { sed -n "s/.*\"$2\":\([^,}]*\).*/\1/p" "$1"; }

have_python=yes
command -v python3 >/dev/null 2>&1 || have_python=no
n=0
for c in "msm 1000 4 199" "msm 1000 4 1" "hsm 100 1 10" "ism 60 3 20" \
         "chen 50 2 40" "full 30 2 200" "msm-paper 40 2 12" "ism 100 4 3"; do
    # shellcheck disable=SC2086
    set -- $c
    "$bindir/bptt" plan --strategy "$1" --length "$2" --alpha "$3" \
        --memory 100% --format json > "$tmp/full.json" ||
        fail "bptt plan --strategy $1 --length $2 --alpha $3 failed"
    least=$(field "$tmp/full.json" min_memory)
    if [ "$4" -lt "$least" ]; then
        want="infeasible $least"
    else
        "$bindir/bptt" plan --strategy "$1" --length "$2" --alpha "$3" \
            --memory "$4" --format json > "$tmp/p.json" ||
            fail "bptt plan $c failed"
        want="$(field "$tmp/p.json" forward_ops) $(field "$tmp/p.json" peak_slots) $(field "$tmp/p.json" actions)"
    fi
    got=$("$tmp/use-planner" "$@") || fail "use-planner $c failed"
    [ "$got" = "$want" ] ||
        fail "use-planner $c: '$got', bptt plan: '$want'"
    if [ $have_python = yes ]; then
        got=$(python3 "$srcdir/tests/install/planner_ctypes.py" \
            "$libdir/libbpttcore.so" "$@") || fail "ctypes $c failed"
        [ "$got" = "$want" ] || fail "ctypes $c: '$got', bptt plan: '$want'"
    fi
    n=$((n + 1))
done
[ $have_python = yes ] || fail "python3 is missing (scripts/setup installs it)"

# an LSTM with L = 1, B = 2, X = 3, H = 4, V = 5: 4H (X + H) weights, 4H
# biases, and the output layer's V H weights and V biases
set -- $("$tmp/use-train") || fail "use-train failed"
[ "${1:-}" = $((4 * 4 * (3 + 4) + 4 * 4 + 5 * 4 + 5)) ] ||
    fail "use-train: $* parameters (expected $((4 * 4 * (3 + 4) + 4 * 4 + 5 * 4 + 5)))"
"$tmp/lif" > "$tmp/lif.out" || fail "examples/lif failed: $(tail -n 3 "$tmp/lif.out")"
grep -q '^lif: ok: ' "$tmp/lif.out" || fail "examples/lif did not say ok"
"$tmp/train" > "$tmp/train.out" || fail "examples/train failed: $(tail -n 3 "$tmp/train.out")"
grep -q '^train: ok: ' "$tmp/train.out" || fail "examples/train did not say ok"
echo "installcheck: every file installed, each header compiling alone; $n plans equal from C, ctypes and bptt plan; examples/lif, built from bpttcore.pc alone (no OpenBLAS, no GSL), trained under every plan; a model made through bptt.pc; examples/train under a budget"
