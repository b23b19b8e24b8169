#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# A holder nudged by a latency-class client's request lets its queue run
# out before it launches on (the drain). A program that waits for each of
# its kernels has the event after the last one seen completing by then,
# and that drain has nothing to wait for: it makes no cuCtxSynchronize(),
# a driver call of microseconds before the launch, on the GPU's path. The
# double counts the library's calls of it.
l=$(dirname "$0")/lib.sh; [ -r "$l" ] || l=/usr/lib/gpusched/lib.sh; . "$l"

secs=2
[ "$GS_TEST_SCALE" = 1 ] || secs=4
service "$(us 10000)" 1000000

# The holder launches a 200 us kernel and waits for it, again and again;
# the probe launches one of 50 us every 2 ms beside it, which nudges.
BP_BUSY="--period-us 1" BP_PROBE="GPUSCHED_TUNE=$GPUSCHED_TUNE,beside=1" \
	busy_and_probe "$(us 200)" "$(us 2000)" GPUSCHED_DEBUG=stats
nudged=$(value nudged "$T/busy.err")
syncs=$(value lib_ctx_syncs "$T/busy.out")
echo "# holder: $(value launches "$T/busy.out") launches, ${nudged:-no} drains for a nudge, ${syncs:-?} cuCtxSynchronize() of the library's; probe $(probe_figures)"
check "the holder ran without errors" grep -q 'errors=0' "$T/busy.out"
check "nudged, it let its queue run out (${nudged:-never})" [ "${nudged:-0}" -ge 10 ]
check "those drains made no cuCtxSynchronize() (${syncs:-not counted})" [ "${syncs:-x}" = 0 ]
done_testing
