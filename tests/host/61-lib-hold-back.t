#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Beside a periodic latency-class client, the holder does not start a
# launch that would end more than GPUSCHED_QUEUE_LATENCY_US after the
# client's next predicted request: it waits for the request (counted as
# held_back), so that the request waits for little of its work, not for a
# whole kernel longer than that bound. With GPUSCHED_HOLD_BACK=0 nothing
# is held back, and the request waits for whatever kernel runs. Both are run here, one after the other, and
# their medians compared: in the double the p99 is the host's noise
# (2.4-3.8 ms either way on a 2-core host), the median is the wait.
l=$(dirname "$0")/lib.sh; [ -r "$l" ] || l=/usr/lib/gpusched/lib.sh; . "$l"

secs=3
[ "$GS_TEST_SCALE" = 1 ] || secs=8
kern=$(us 1000)
bound=$(us 300)
period=$(us 5000)
h=$(us 600)
service "$(us 10000)" 1000000

run_probe() {	# run_probe HOLD_BACK
	busy_and_probe "$kern" "$period" GPUSCHED_STATS=1 \
		GPUSCHED_HOLD_BACK="$1" GPUSCHED_QUEUE_LATENCY_US="$bound" \
		GPUSCHED_HANDOVER_US="$h" GPUSCHED_SPIN_US="$(us 200)"
	held=$(value held_back "$T/busy.err")
	p50=$(value latency_p50_us "$T/probe.out")
	o=$(overlap_max)
	p=$(value latency_period_us "$T/busy.err")
	echo "# GPUSCHED_HOLD_BACK=$1: busy share $(value share "$T/busy.out"), held_back $held, period ${p:-not learnt} us, at most $o us of its work left at the probe's start; probe $(tail -1 "$T/probe.out")"
}

run_probe 1
check "launches were held back for the predicted requests ($held)" \
	[ "${held:-0}" -gt 0 ]
# The early hand-over still gives the token away before our last kernel
# ends, within its allowance (59-lib-dry-wait.t).
check "never more than twice the hand-over allowance left (${o:-?} <= 2 x $h us)" \
	[ "${o:-999999}" -le $((2 * h)) ]
show busy
p1=$p50
run_probe 0
check "GPUSCHED_HOLD_BACK=0: the period learnt (${p:-no} us of $period), nothing held back (${held:-?})" \
	eval 'within "${p:-0}" "$period" $((period / 10)) && [ "${held:-1}" = 0 ]'
check "the probe's median wait is shorter with the hold-back: $p1 us against $p50 us" \
	[ "${p1:-999999}" -lt "${p50:-0}" ]
done_testing
