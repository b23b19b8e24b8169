#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Kernels longer than a latency-class client's period. The busy process
# times each launch on the GPU's clock (its own events around it), so it
# knows its length from the first kernels whatever the probe does to its
# turns: the double's clock makes that exact. A token cannot preempt a
# kernel: beside 3 ms kernels the probe would wait for one, where the
# driver's own time slice would let it run within about 2 ms. So the probe
# launches beside the holder and nudges it (the holder lets its queue run
# out once and keeps the token), and the driver (here the double, which
# runs the two side by side) slices; the same run without that (beside=0)
# is the reference.
l=$(dirname "$0")/lib.sh; [ -r "$l" ] || l=/usr/lib/gpusched/lib.sh; . "$l"

secs=3
[ "$GS_TEST_SCALE" = 1 ] || secs=8
kern=$(us 3000)
service "$(us 10000)" 1000000

run_probe() {	# run_probe 0|1
	BP_PROBE="GPUSCHED_TUNE=$GPUSCHED_TUNE,beside=$1" \
		busy_and_probe "$kern" "$(us 2000)" \
		GPUSCHED_TUNE="$GPUSCHED_TUNE,handover_us=$(us 600),spin_us=$(us 200)"
	est=$(value us_per_launch "$T/busy.err")
	p50=$(value latency_p50_us "$T/probe.out")
	beside=$(value beside "$T/probe.err")
	nudges=$(value nudges "$T/probe.err")
	nudged=$(value nudged "$T/busy.err")
	yields=$(value yields "$T/busy.err")
	acquires=$(value acquires "$T/probe.err")
	echo "# beside=$1: $kern us kernels beside a probe every $(us 2000) us: estimate ${est:-?} us; probe launched beside ${beside:-?} times, nudged ${nudges:-?} times; the holder ran its queue out ${nudged:-?} times, yielded ${yields:-?} times; $(probe_figures)"
}

run_probe 0
show busy probe
ref_p50=$p50
check "the busy process timed its launches on the GPU (${est:-?} us for $kern us kernels, within 1%)" \
	within "${est:-0}" "$kern" $((kern / 100))
check "beside=0: the probe never launched beside the holder (${beside:-?})" \
	[ "${beside:-1}" = 0 ]
run_probe 1
show probe
check "beside=1: the probe launched beside the holder (${beside:-0})" \
	[ "${beside:-0}" -gt 0 ]
check "and nudged the holder (${nudges:-0} times)" \
	[ "${nudges:-0}" -gt 0 ]
check "which let its queue run out for it (${nudged:-0} times)" \
	[ "${nudged:-0}" -gt 0 ]
check "and gave the token away only for the probe's acquires, none for a nudge (${yields:-?} yields, ${acquires:-?} acquires)" \
	[ "${yields:-1}" -le "${acquires:-0}" ]
check "its median wait is less than half of waiting for the token (${p50:-?} us against ${ref_p50:-?} us)" \
	[ $((2 * ${p50:-999999999})) -lt "${ref_p50:-0}" ]
done_testing
