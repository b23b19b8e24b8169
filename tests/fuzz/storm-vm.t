#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The fault storm alone, at the sizes `make check-storm` passes
# (tests/fuzz/build.mk), in one VM: STORM_KERNEL 6.1, 6.12 or debug (the
# cached debug kernel of tests/debug/, with its kernel log and kmemleak
# checks). TAP from tests/vm/run.sh.
set -eu
cd "$(dirname "$0")/../.."
: "${STORM_KERNEL:=6.1}" "${STORM_CLIENTS:=64}" "${STORM_OPS:=10000}"
: "${STORM_KILLS:=1000}" "${STORM_RELOADS:=5}" "${STORM_TIMEOUT:=3600}"
: "${STORM_SEED:=}" "${STORM_PROGRESS:=60}"
export VM_TESTS=${VM_TESTS:-build/fuzz/storm}
export VM_EXTRA=
# One program: its timeout is the VM's, less the boot and the build.
export VM_TEST_TIMEOUT=$STORM_TIMEOUT
export VM_TIMEOUT=$((STORM_TIMEOUT + 600))
seed=${STORM_SEED:+GSSTORM_SEED=$STORM_SEED}
if [ "$STORM_KERNEL" = debug ]; then
	export DEBUG_STORM_CLIENTS=$STORM_CLIENTS DEBUG_STORM_OPS=$STORM_OPS
	export DEBUG_STORM_KILLS=$STORM_KILLS DEBUG_STORM_RELOADS=$STORM_RELOADS
	VM_APPEND="GSSTORM_PROGRESS=$STORM_PROGRESS $seed" exec tests/debug/vm-debug.t
fi
VM_APPEND="GSSTORM_CLIENTS=$STORM_CLIENTS GSSTORM_OPS=$STORM_OPS GSSTORM_KILLS=$STORM_KILLS GSSTORM_RELOADS=$STORM_RELOADS GSSTORM_PROGRESS=$STORM_PROGRESS $seed" \
	exec tests/vm/run.sh "$STORM_KERNEL"
