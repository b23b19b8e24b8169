#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The launch-length estimate follows kernels that get shorter. Every
# launch is timed on the GPU's clock between the library's own events, so
# the estimate is exact (the double's clock) whatever the waits see: here
# the busy process runs 1500 us kernels, then 100 us ones, beside a probe
# every 2 ms. Beside a latency-class client its queue is held to the
# service's latency queue (300 us) by the lengths learnt: after the change
# two or three kernels fit, where lengths stuck at 1500 us would keep it
# to one at a time. The double counts the most kernels the process had
# queued or running at once from the change on. Without the prediction of
# the probe's requests (57-lib-latency-period.t tests it), which would
# bound the queue by the time to the next request instead. Alone, a
# process times few of its launches.
l=$(dirname "$0")/lib.sh; [ -r "$l" ] || l=/usr/lib/gpusched/lib.sh; . "$l"

secs=4
at=1.5
[ "$GS_TEST_SCALE" = 1 ] || { secs=12 at=4; }
short=$(us 100)
service "$(us 10000)" 1000000
# Scaled as the kernels are: in the VM the default would hold kernels of
# $short us to one in flight whatever the estimate.
if [ "$GS_TEST_SCALE" != 1 ]; then
	knob latency_queue_us "$(us 300)" || bail "cannot set the service's latency_queue_us"
fi

BP_BUSY="--then-kernel-us $short --then-at $at" \
	busy_and_probe "$(us 1500)" "$(us 2000)" \
	GPUSCHED_TUNE="$GPUSCHED_TUNE,handover_us=$(us 600),spin_us=$(us 200),latency_predict=0"
show busy
est=$(sed -n 's/.*us_per_launch=\([0-9]*\).*/\1/p' "$T/busy.err" | head -1)
call=$(( $(value cpu_ns_per_launch "$T/busy.out") / 1000 ))
qmax=$(value then_queued_max "$T/busy.out")
echo "# $(us 1500) us kernels, then $short us after $at s: busy keeps $(value then_share "$T/busy.out") from then on; probe $(probe_figures)"
# The GPU's clock, not the host's: within 5%, however late the waits
# wake, and one launch call: a launch onto an idle stream is timed from an
# event recorded just before the call (in a VM a call costs 0.2-0.7 ms of
# emulated CPU).
check "after the kernels shrank, the estimate follows them (${est:-?} us for $short us kernels, not $(us 1500); a launch call ${call:-?} us)" \
	within "${est:-0}" "$short" $((short / 20 + ${call:-0}))
check "and the latency queue holds more than one of them at once (up to ${qmax:-?}; two or three fit, one if the estimate stayed at $(us 1500) us)" \
	[ "${qmax:-0}" -ge 2 ]

# The host sees each kernel end a millisecond late (the double's worker
# marks it done late, as one woken late on a loaded host does): the
# estimate is the kernels' length all the same, from the GPU's clock.
kern=$(us 3000)
busy_and_probe "$kern" "$(us 2000)" GS_DOUBLE_LATE_WAKE_US="$(us 1000)" \
	GPUSCHED_TUNE="$GPUSCHED_TUNE,handover_us=$(us 600),spin_us=$(us 200)"
est=$(value us_per_launch "$T/busy.err")
check "completions seen late do not lengthen the estimate (${est:-?} us for $kern us kernels, within 1%)" \
	within "${est:-0}" "$kern" $((kern / 100))

# Alone, launches are timed no more often than once per 20 ms of the
# process's GPU time (GS_TIME_ALONE_NS: a timed launch's timestamps cost
# the GPU a few microseconds): with 100 us kernels one in about 200, not
# the one in 64 of 1 ms kernels. Not scaled in the VM: the ratio is the
# kernels' length's, whatever the launches cost.
client "$GS_CLIENT" --seconds 1 --kernel-us 100 >"$T/alone.out" 2>"$T/alone.err"
n=$(grep 'stats launches=' "$T/alone.err" | value launches -)
timed=$(grep 'stats launches=' "$T/alone.err" | value timed -)
est=$(value us_per_launch "$T/alone.err")
check "alone, some of its launches timed (${timed:-?} of ${n:-?})" [ "${timed:-0}" -ge 2 ]
check "fewer than one in 128 (${timed:-?} of ${n:-?})" \
	[ $((${timed:-1000000} * 128)) -lt "${n:-0}" ]
check "and the estimate is the kernels' length (${est:-?} us for 100 us, within 5%)" \
	within "${est:-0}" 100 5

# A latency-class process, once its lengths are steady, times by its GPU
# time as one alone does, though another process is attached: a timed
# launch's timestamps lie on its request's way, and one in 64 would put
# them in its p99. A probe of 20 us kernels, each waited for: about 16
# launches timed until its lengths are known steady (one in 16), then one
# in about 1,000; one in 64 before. Host only: in a VM each launch call
# takes about 0.4 ms of emulated CPU, and the frames of a probe's kernels
# of 20 us (each on an idle stream, its frame holding the call) mostly
# give no sample, so how often it is timed says nothing of the rule.
if [ "$GS_TEST_SCALE" = 1 ]; then
	rm -f "$GS_DOUBLE_SHM"
	run_bg other client "$GS_CLIENT" --seconds 4 --kernel-us 100 --period-us 100000
	client GPUSCHED_CLASS=latency "$GS_CLIENT" --seconds 3 --kernel-us 20 \
		--period-us 100 >"$T/lat.out" 2>"$T/lat.err" ||
		not_ok "latency-class client failed"
	wait_bg other || not_ok "the other client failed"
	n=$(grep 'stats launches=' "$T/lat.err" | value launches -)
	timed=$(grep 'stats launches=' "$T/lat.err" | value timed -)
	check "latency class beside another: no more than 24 launches and one in 128 timed (${timed:-?} of ${n:-?})" \
		[ $(((${timed:-1000000} - 24) * 128)) -lt "${n:-0}" ]
else
	skip "a latency-class client's timed launches: host only (launch calls cost ~0.4 ms in a VM)"
fi
done_testing
