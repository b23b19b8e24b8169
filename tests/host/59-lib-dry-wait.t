#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The wait for the last of the holder's work (GPUSCHED_SPIN_US): a thread
# whose next launch waits for the event after its newest one sleeps until
# just before the predicted end and then polls, so that it launches again
# as the GPU runs dry, and a yield asked meanwhile gives the token away
# while that last kernel still runs (an early hand-over, counted as
# dry_yields). Next to a periodic latency-class client with 1 ms kernels,
# the holder queues one kernel at a time; the launch-length estimate must
# not take in the other's turns (the idle thread may give the token away
# while the launching thread waits).
l=$(dirname "$0")/lib.sh; [ -r "$l" ] || l=/usr/lib/gpusched/lib.sh; . "$l"

secs=3
[ "$GS_TEST_SCALE" = 1 ] || secs=8
kern=$(us 1000)
h=$(us 400)
service "$(us 10000)" 1000000

run_probe() {	# run_probe SPIN_US
	rm -f "$GS_DOUBLE_SHM"
	at=$(start_at)
	run_bg busy client GS_START_AT=$at GPUSCHED_HANDOVER_US=$h \
		GPUSCHED_SPIN_US=$1 "$GS_CLIENT" --seconds "$secs" --kernel-us "$kern"
	run_bg probe client GS_START_AT=$at GPUSCHED_CLASS=latency \
		GPUSCHED_HANDOVER_US=$h "$GS_CLIENT" --seconds "$secs" \
		--kernel-us "$(us 50)" --period-us "$(us 5000)"
	wait_bg busy && wait_bg probe || not_ok "clients failed"
	dry=$(value dry_yields "$T/busy.err")
	est=$(value us_per_launch "$T/busy.err")
	o=$(overlap_max)
	echo "# GPUSCHED_SPIN_US=$1: busy share $(value share "$T/busy.out"), dry_yields $dry, launch length $est us of $kern, at most $o us of the old holder's work left at a start; probe $(tail -1 "$T/probe.out")"
}

run_probe 200
check "the holder gave the token away while its last kernel ran ($dry dry yields)" \
	[ "${dry:-0}" -gt 0 ]
check "its launch length is its kernels' ($est us of $kern), not their turns'" \
	within "${est:-0}" "$kern" $((kern * 2 / 5))
check "never more than twice the hand-over allowance left (${o:-?} <= 2 x $h us)" \
	[ "${o:-999999}" -le $((2 * h)) ]
show busy
run_probe 0
check "GPUSCHED_SPIN_US=0: the last kernel is waited for in full ($dry dry yields)" \
	[ "${dry:-1}" = 0 ]
done_testing
