#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The wait for the last of the holder's work (spin_us, GPUSCHED_TUNE): a thread
# whose next launch waits for the event after its newest one sleeps until
# just before the predicted end and then polls, so that it launches again
# as the GPU runs dry, and a yield asked meanwhile gives the token away
# while that last kernel still runs (an early hand-over, counted as
# dry_yields). Next to a periodic latency-class client the holder queues
# one kernel at a time. The launch length beside the probe (samples must
# not span its turns) is not checked here: in the double, under load, it
# strays by half even when right; runs on the H200 showed it
# (1.8-2.0 ms for 1 ms kernels before, 1.02-1.09 ms after).
l=$(dirname "$0")/lib.sh; [ -r "$l" ] || l=/usr/lib/gpusched/lib.sh; . "$l"

secs=3
[ "$GS_TEST_SCALE" = 1 ] || secs=8
h=$(us 400)
# Both hand over early (lib.sh's default is 0, to drain fully).
export GPUSCHED_TUNE="$GPUSCHED_TUNE,handover_us=$h"
service "$(us 10000)" 1000000

run_probe() {	# run_probe KERNEL_US SPIN_US
	busy_and_probe "$1" "$(us 5000)" GPUSCHED_TUNE="$GPUSCHED_TUNE,spin_us=$2"
	dry=$(value dry_yields "$T/busy.err")
	est=$(value us_per_launch "$T/busy.err")
	cpu=$(value cpu_ns_per_launch "$T/busy.out")
	o=$(overlap_max)
	echo "# $1 us kernels, spin_us=$2: busy share $(value share "$T/busy.out"), dry_yields $dry, launch length $est us, $cpu ns of CPU a launch, at most $o us of the old holder's work left at a start; probe $(probe_figures)"
}

# Kernels shorter than the polling time: the holder polls through each.
run_probe "$(us 100)" "$(us 200)"
check "the holder gave the token away while its last kernel ran ($dry dry yields)" \
	[ "${dry:-0}" -gt 0 ]
check "never more than twice the hand-over allowance left (${o:-?} <= 2 x $h us)" \
	[ "${o:-999999}" -le $((2 * h)) ]
waits=$(value throttle_waits "$T/busy.err")
spins=$(value spin_syncs "$T/busy.out")
check "the holder waited for its queue beside the probe ($waits throttle waits)" \
	[ "${waits:-0}" -gt 0 ]
# Its events there are plain (no timestamp, no blocking sync: free on the
# GPU), and the driver spins a CPU in cuEventSynchronize() on those.
check "none of those waits was a spinning cuEventSynchronize() ($spins)" \
	[ "${spins:-1}" = 0 ]
# Nor are its timing events blocking sync: behind queued work the driver
# takes about twice as long to record one, the GPU 0.7 us more.
brec=$(value blocking_records "$T/busy.out")
check "no event of the holder's was recorded blocking sync behind its work (${brec:-?})" \
	[ "${brec:-1}" = 0 ]
timed=$(value timed "$T/busy.err")
nl=$(value launches "$T/busy.err")
# Beside a latency-class client too, a kernel whose length is known is
# timed one launch in about GS_TIME_EVERY: a timestamp between two kernels
# costs the GPU about 2 us.
sampled=$(( ${timed:-0} > 0 && ${timed:-0} * 4 < ${nl:-0} ))
check "the holder timed a sample of its launches beside the probe ($timed of $nl)" \
	[ "$sampled" = 1 ]
show busy
run_probe "$(us 100)" 0
check "spin_us=0: the last kernel is waited for in full ($dry dry yields)" \
	[ "${dry:-1}" = 0 ]

# Kernels whose length strays (the double stretches each by 0-300%, as
# time-slicing with another context's work does): the wait looks at the
# event between naps rather than sleep to the predicted end, past which
# the GPU would have none of the holder's work.
if [ "$BACKEND" = kmod ]; then
	# Under emulation a launch costs about 1 ms of CPU, and the host's
	# own pace, not the wait, decides when the next kernel is queued.
	skip "stretched kernels: host only (launches cost ~1 ms in a VM)"
else
	# The probe launches beside the holder, which keeps the token throughout.
	tune=$GPUSCHED_TUNE
	export GPUSCHED_TUNE="$tune,handover_us=0,beside=1"
	late=$(us 500)
	busy_and_probe "$(us 1000)" "$(us 5000)" GS_DOUBLE_STRETCH_PCT=300 \
		GS_DOUBLE_LATE_GAP_US="$late"
	GPUSCHED_TUNE=$tune
	gaps=$(value late_gaps "$T/busy.out")
	nl=$(value launches "$T/busy.out")
	echo "# stretched kernels: busy share $(value share "$T/busy.out"), $gaps of $nl kernels queued $late us or more after the holder's last one ended"
	check "stretched kernels: the GPU waited $late us or more for the holder's next kernel less than one time in five ($gaps of $nl)" \
		[ "$(( ${gaps:-1000000} * 5 ))" -lt "${nl:-0}" ]
fi

kern=$(us 1000)
run_probe "$kern" "$(us 200)"
# Here the idle thread often answers the yield first, when the launching
# thread sleeps: either gives the token away early, within the allowance.
check "longer kernels: never more than twice the hand-over allowance left (${o:-?} <= 2 x $h us)" \
	[ "${o:-999999}" -le $((2 * h)) ]
done_testing
