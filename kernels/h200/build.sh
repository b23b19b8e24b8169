#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# kernels/h200/build.sh LOG: build kernels/ with this machine's nvcc, output
# appended to LOG. If the top-level make fails (another directory's
# build.mk mid-change, or headers this machine lacks), kernels/build.mk is
# built alone. Exit status 0 when build/kernels/gs-runtime-client exists.
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
LOG=${1:-/dev/null}
NPROC=$(nproc 2>/dev/null || echo 4)
make -C "$ROOT" -j"$NPROC" WERROR= kernels >> "$LOG" 2>&1 &&
	[ -x "$ROOT/build/kernels/gs-runtime-client" ] && exit 0
echo "--- top-level make failed; kernels/build.mk alone" >> "$LOG"
make -C "$ROOT" -j"$NPROC" -f - kernels >> "$LOG" 2>&1 <<'MK'
B := build
Q := @
CC ?= cc
USER_CFLAGS := -std=gnu11 -Wall -Wextra -D_GNU_SOURCE -O2 -g
USER_TARGETS :=
include kernels/build.mk
MK
[ -x "$ROOT/build/kernels/gs-runtime-client" ]
