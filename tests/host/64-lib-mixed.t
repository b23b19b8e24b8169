#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Beside a periodic latency-class probe, a busy process whose kernels vary
# in length (seven short, then one long, like PyTorch's mix of small
# element-wise kernels and large ones) must not queue past the probe's
# requests. Every launch is timed on the GPU between the library's own
# events, and each is predicted by what it launches, so the queue toward
# a request holds what ends by it whatever the mix. The same probe beside
# kernels of one length (the mix's mean) is the reference, in the same
# test.
l=$(dirname "$0")/lib.sh; [ -r "$l" ] || l=/usr/lib/gpusched/lib.sh; . "$l"

# A request mostly finds a long kernel running (the GPU spends most of its
# time in them) and waits for the rest of it: never for a queue of them.
# Bounds: one long kernel for the median of the yield answer, and one long
# kernel and the latency queue bound (the service's latency_queue_us,
# 300 us) for nine yield answers in ten and for what nine requests in ten
# find queued ahead of them.
secs=4
[ "$GS_TEST_SCALE" = 1 ] || secs=12
short=$(us 20)
long=$(us 1000)
mean=$(( (7 * short + long) / 8 ))
service "$(us 10000)" 1000000

run_busy() {	# run_busy SHORT_US [VAR=VALUE...]: seven of SHORT_US, one long
	rb_short=$1
	shift
	BP_BUSY="--long-us $long --long-every 8" \
		busy_and_probe "$rb_short" "$(us 2000)" \
		GPUSCHED_TUNE="$GPUSCHED_TUNE,handover_us=$(us 600),spin_us=$(us 200)" \
		GPUSCHED_DEBUG=stats GS_DOUBLE_LATE_GAP_US=1 "$@"
	share=$(value share "$T/busy.out")
	launches=$(value launches "$T/busy.out")
	dry=$(value late_gaps "$T/busy.out")
	ahead=$(value ahead_p50_us "$T/probe.out")
	ahead90=$(value ahead_p90_us "$T/probe.out")
	answer=$(stat_p50 yield_answer "$T/busy.err")
	answer90=$(stat_pct yield_answer 90 "$T/busy.err")
	timed=$(value timed "$T/busy.err")
	est=$(sed -n 's/.*us_per_launch=\([0-9.]*\) us_dev=\([0-9.]*\).*/\1 us, deviation \2 us/p' "$T/busy.err" | head -1)
	echo "# $rb_short us kernels and every 8th $long us $*: busy keeps ${share:-?}, ${dry:-?} of its ${launches:-?} kernels queued with none of its own ahead, answers a yield in ${answer:-?} us (median), estimate ${est:-?}; probe $(probe_figures)"
}

# The reference: every kernel as long as the mix's mean.
long_saved=$long
long=$mean
run_busy "$mean"
ref_dry=$dry
ref_launches=$launches
long=$long_saved
run_busy "$short"
show busy
check "beside kernels that vary, the busy process answers a yield within one long kernel (${answer:-?} us, median)" \
	[ "${answer:-999999}" -le "$long" ]
check "nine in ten within one and the latency queue bound (${answer90:-?} us)" \
	[ "${answer90:-999999}" -le $((long + $(us 300))) ]
check "with the kernels timed on the GPU (${timed:-0})" [ "${timed:-0}" -gt 0 ]
# Most of the GPU's time goes to the long kernels: a request finds at most
# one of them, and the latency queue bound, queued ahead of it, never a
# queue of them (with the mix's mean for every kernel, two long ones nine
# times in ten). What a request finds is the double's count at its launch:
# the busy process's kernels not yet run on the modelled GPU's timeline,
# not the probe's own wait, which a slow host stretches.
check "nine in ten of the probe's requests find at most one long kernel and the latency queue bound queued ahead (${ahead90:-?} us; ${ahead:-?} us at the median)" \
	[ "${ahead90:-999999}" -le $((long + $(us 300))) ]
# Its queue bounded by the kernels it holds, not by the longest of them,
# the busy process keeps its work queued between requests: a kernel held
# back until the one before it ends leaves the GPU without the busy
# process's work (below what the driver's time-slicing would give it).
# The double counts each kernel queued after the process's work on the
# modelled GPU had run out (its late gaps of 1 us or more): about one or
# two per request come with each hand-over, and a queue bounded by the
# longest kernel gives one for every kernel.
check "most of the busy process's kernels are queued behind its own work (${dry:-?} of ${launches:-?} were not; beside kernels of one length ${ref_dry:-?} of ${ref_launches:-?})" \
	[ "$(( 2 * ${dry:-1} ))" -le "${launches:-0}" ]
done_testing
