#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Beside a periodic latency-class probe, a busy process whose kernels vary
# in length (seven short, then one long, like PyTorch's mix of small
# element-wise kernels and large ones) must not queue past the probe's
# requests. Its waits polled whenever a request was predicted, and a poll
# takes no sample after a sleep: the long waits were dropped, the estimate
# read below the mean, and the queue ran that far past each request. The
# busy process answered a yield 550-610 us late at the median here (8 ms in
# the 6.1 VM), the probe's median was 700-740 us, and on the H200 PyTorch
# inference beside training had a p99 of 5.7-8.9 ms instead of 2.7-3.4 ms.
# Launches of lengths that vary now make the waits block unless the
# request falls within them. Even so the mean said little of the next
# launch: the queue toward a request, counted in mean launches, could hold
# a long kernel or several, and yields were answered 730-750 us late at
# p90 here. Such a process's kernels are now timed one by one on the GPU
# and each launch is predicted by what it launches (kernel_times()). The
# same probe beside kernels of one length (the mean of the mix) is the
# reference, in the same test.
l=$(dirname "$0")/lib.sh; [ -r "$l" ] || l=/usr/lib/gpusched/lib.sh; . "$l"

# Bounds: the yield answer's median and the probe's, in parts of the long
# kernel. Looser in a VM, where a launch costs 0.4-1 ms of emulated CPU and
# the busy process's samples scatter as far as its kernels' length varies
# (6.1 and 6.12 VMs: answers 0.3-3.6 ms and probe 4.3-5.2 ms, against 8.1
# ms and 9.9 ms before).
secs=4 answer_max=4 p50_max=60
[ "$GS_TEST_SCALE" = 1 ] || { secs=12 answer_max=2 p50_max=75; }
short=$(us 20)
long=$(us 1000)
mean=$(( (7 * short + long) / 8 ))
service "$(us 10000)" 1000000

run_busy() {	# run_busy SHORT_US [VAR=VALUE...]: seven of SHORT_US, one long
	rb_short=$1
	shift
	BP_BUSY="--long-us $long --long-every 8" \
		busy_and_probe "$rb_short" "$(us 2000)" GPUSCHED_HANDOVER_US="$(us 600)" \
		GPUSCHED_SPIN_US="$(us 200)" GPUSCHED_STATS=1 "$@"
	share=$(value share "$T/busy.out")
	p50=$(value latency_p50_us "$T/probe.out")
	answer=$(stat_p50 yield_answer "$T/busy.err")
	answer90=$(stat_pct yield_answer 90 "$T/busy.err")
	timed=$(value timed "$T/busy.err")
	est=$(sed -n 's/.*us_per_launch=\([0-9.]*\) us_dev=\([0-9.]*\).*/\1 us, deviation \2 us/p' "$T/busy.err" | head -1)
	echo "# $rb_short us kernels and every 8th $long us $*: busy keeps ${share:-?}, answers a yield in ${answer:-?} us (median), estimate ${est:-?}; probe $(tail -1 "$T/probe.out")"
}

# The reference: every kernel as long as the mix's mean.
long_saved=$long
long=$mean
run_busy "$mean"
ref_share=$share ref_p50=$p50
long=$long_saved
# The same without the kernels timed, for comparison (GPUSCHED_TIME_KERNELS).
run_busy "$short" GPUSCHED_TIME_KERNELS=0
untimed90=$answer90 untimed_n=$timed
run_busy "$short"
show busy
check "beside kernels that vary, the busy process answers a yield within 1/$answer_max of its long kernel (${answer:-?} us, median)" \
	[ "${answer:-999999}" -le $((long / answer_max)) ]
# Nine yields in ten within half a long kernel: one of them queued at a
# request is the exception. Untimed: 727-747 us here.
check "nine in ten within half of it (${answer90:-?} us; untimed ${untimed90:-?} us)" \
	[ "${answer90:-999999}" -le $((long / 2)) ]
check "with the kernels timed (${timed:-0})" [ "${timed:-0}" -gt 0 ]
check "GPUSCHED_TIME_KERNELS=0 times none (${untimed_n:-?})" [ "${untimed_n:-1}" = 0 ]
# Most of the GPU's time goes to the long kernels: a request that found
# one running would wait half of one at the median (704-739 us here, 9.9
# ms in the 6.1 VM, before); one held back for lands in the gaps.
check "the probe's median is under $p50_max% of the long kernel (${p50:-?} us; ${ref_p50:-?} us beside kernels of one length)" \
	[ "${p50:-999999}" -le $((p50_max * long / 100)) ]
# Held back for the probe's requests, it keeps less than beside kernels of
# one length. A long kernel that would end more than
# GPUSCHED_QUEUE_LATENCY_US (300 us) after a request waits until after it:
# the request comes at a point of the mix's GPU time, a long kernel's in
# 7 of 8 cases, with 0 to 700 us of it left, so the GPU idles 440 us of
# every 2 ms on average for the busy process, 0.22 of the GPU. Kept here:
# 0.57-0.58 against 0.82-0.85 (0.71-0.75 before the kernels were timed,
# when the probe waited for them instead).
check "and the busy process keeps at least 0.6 of its share beside kernels of one length (${share:-?} against ${ref_share:-?})" \
	above "${share:-0}" "$(awk -v r="${ref_share:-9}" 'BEGIN { print 0.6 * r }')"
done_testing
