#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The policy file's host tests (tests/unit/test_policyfile.c): the program,
# then under valgrind (no errors, no leaks). Builds it if needed. Extra
# arguments go to both runs, e.g.  tests/unit/policyfile.t --only matching
set -u
top=$(cd "$(dirname "$0")/../.." && pwd) || exit 1
cd "$top" || exit 1
bin=build/tests/unit/test_policyfile

make -s "$bin" >&2 || { echo "Bail out! cannot build $bin"; exit 1; }
# The label that the /proc test expects to find in its own environment.
GPUSCHED_LABEL=unit-test-label exec tests/netlink/tap-valgrind.sh "$bin" "$@"
