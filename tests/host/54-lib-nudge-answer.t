#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# A nudged holder lets its queue run out so that the driver runs the
# latency-class work queued beside it; once that work has ended, the rest
# of the holder's queue need not run out. The probe says so when its work
# ends (GPUSCHED_ACQUIRE_NUDGE_DONE) and the holder launches on at once.
# The double runs the two side by side: the probe's 50 us kernel ends long
# before the holder's queue of 3 ms kernels (the service's latency_queue_us
# raised to hold several), so every drain for a nudge that sees the answer
# in time ends by it.
l=$(dirname "$0")/lib.sh; [ -r "$l" ] || l=/usr/lib/gpusched/lib.sh; . "$l"

secs=3
[ "$GS_TEST_SCALE" = 1 ] || secs=8
kern=$(us 3000)
GS_ARB_ARGS="${GS_ARB_ARGS:-} --latency-queue-us $(us 10000)" \
	service "$(us 10000)" 1000000
if [ "$BACKEND" = kmod ]; then
	knob latency_queue_us "$(us 10000)" || bail "cannot set the service's latency_queue_us"
fi

BP_PROBE="GPUSCHED_TUNE=$GPUSCHED_TUNE,beside=1" \
	busy_and_probe "$kern" "$(us 2000)" GPUSCHED_DEBUG=stats
nudges=$(value nudges "$T/probe.err")
dones=$(value nudge_dones "$T/probe.err")
nudged=$(value nudged "$T/busy.err")
answered=$(value answered "$T/busy.err")
echo "# probe: ${nudges:-?} nudges, ${dones:-?} answered; holder: ${nudged:-?} drains for a nudge, ${answered:-?} ended by the answer; $(probe_figures)"
check "the holder ran without errors" grep -q 'errors=0' "$T/busy.out"
check "the probe nudged the holder (${nudges:-0} times)" [ "${nudges:-0}" -gt 0 ]
check "and said when its work had ended (${dones:-0} times)" [ "${dones:-0}" -gt 0 ]
check "the holder let its queue run out for the nudges (${nudged:-0} times)" [ "${nudged:-0}" -gt 0 ]
check "and most of those drains ended at the answer (${answered:-0} of ${nudged:-0})" \
	[ $((2 * ${answered:-0})) -gt "${nudged:-0}" ]
done_testing
