#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The in-VM tests on the KCSAN and fault-injection kernel (tests/debug/
# kcsan.config, built by tests/debug/build-kernel.sh kcsan, cached), where
# faultinject runs instead of skipping. Fails on any lockdep, BUG, WARNING
# or list or debug-objects report, on any KCSAN report with a gpusched
# frame (tests/debug/kcsan-filter sets the others aside and lists them) and
# on any kmemleak report that points at gpusched.
set -eu
cd "$(dirname "$0")/../.."
if ! dir=$(tests/debug/build-kernel.sh kcsan); then
	echo "Bail out! the KCSAN kernel does not build: see build/kcsan-kernel/*/build.log"
	exit 1
fi
# As slow as the debug kernel under TCG, and faultinject walks long.
VM_KIMAGE=$dir/bzImage VM_KDIR=$dir/linux VM_KLOG_FILTER=tests/debug/kcsan-filter \
VM_TEST_TIMEOUT=${VM_TEST_TIMEOUT:-1200} VM_TIMEOUT=${VM_TIMEOUT:-5400} \
VM_APPEND="GSFUZZ_SECONDS=${DEBUG_FUZZ_SECONDS:-60} GSSTORM_CLIENTS=${DEBUG_STORM_CLIENTS:-16} GSSTORM_OPS=${DEBUG_STORM_OPS:-500} GSSTORM_KILLS=${DEBUG_STORM_KILLS:-1000} GSSTORM_RELOADS=${DEBUG_STORM_RELOADS:-5} GS_NLKILL_KILLS=${DEBUG_NLKILL_KILLS:-20} ${VM_APPEND:-}" \
	exec tests/vm/run.sh kcsan
