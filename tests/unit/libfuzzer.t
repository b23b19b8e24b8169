#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The libFuzzer targets (tests/fuzz/lf-*.c, built by make check when clang
# is there), briefly: each replays its seed corpus, the inputs of the bugs
# it found included, then runs FUZZ_CHECK_RUNS inputs (default 5000, at
# most FUZZ_CHECK_SECONDS, default 60, each) from seed FUZZ_CHECK_SEED
# (default 1) and a fresh corpus, so that a failure here reproduces with
# the same seed. Long runs: make fuzz FUZZ_SECONDS=N.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd) || exit 1
cd "$top" || exit 1

bins=
for b in build/fuzz/lf-*; do
	case $b in
	*.log) ;;
	*) [ -x "$b" ] && bins="$bins $b" ;;
	esac
done
if [ -z "$bins" ]; then
	echo "1..0 # SKIP no libFuzzer targets built (clang, libclang-rt-14-dev)"
	exit 0
fi
# shellcheck disable=SC2086 # one word per target
FUZZ_SEED=${FUZZ_CHECK_SEED:-1} FUZZ_RUNS=${FUZZ_CHECK_RUNS:-5000} \
	exec tests/fuzz/run-libfuzzer.sh "${FUZZ_CHECK_SECONDS:-60}" $bins
