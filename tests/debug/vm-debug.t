#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The in-VM tests on the debug kernel (tests/debug/build-kernel.sh, cached),
# failing on any KASAN, lockdep, UBSAN, list or debug-objects report in the
# kernel log and on any kmemleak report that points at gpusched.
set -eu
cd "$(dirname "$0")/../.."
if ! dir=$(tests/debug/build-kernel.sh); then
	echo "Bail out! the debug kernel does not build: see build/debug-kernel/*/build.log"
	exit 1
fi
# Slower than a plain kernel under TCG: give each program longer.
VM_KIMAGE=$dir/bzImage VM_KDIR=$dir/linux \
VM_TEST_TIMEOUT=${VM_TEST_TIMEOUT:-600} VM_TIMEOUT=${VM_TIMEOUT:-3600} \
VM_APPEND="GSFUZZ_SECONDS=${DEBUG_FUZZ_SECONDS:-60} GSSTORM_CLIENTS=${DEBUG_STORM_CLIENTS:-16} GSSTORM_OPS=${DEBUG_STORM_OPS:-500} GSSTORM_KILLS=${DEBUG_STORM_KILLS:-1000} GSSTORM_RELOADS=${DEBUG_STORM_RELOADS:-5} GS_NLKILL_KILLS=${DEBUG_NLKILL_KILLS:-20} ${VM_APPEND:-}" \
	exec tests/vm/run.sh debug
