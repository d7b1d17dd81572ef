#!/bin/sh
# tests/test_loops.sh: no two source files of src/ call each other in a
# loop, as the built objects say it (scripts/file-loops, run in this
# build directory); skipped (77) where nm is missing.
#
# Needs SRCDIR (the source tree), as make check sets it.
set -eu
: "${SRCDIR:?SRCDIR is not set (run through make check)}"
exec "$SRCDIR/scripts/file-loops" .
