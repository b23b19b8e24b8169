#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# A periodic latency-class client learns its own period and asks for the
# token GPUSCHED_LATENCY_LEAD_US before each request is due; the token,
# granted, waits for the request (early_hits), so that the holder's
# answer, the hand-over and the client's wake-up are off the request's
# path. With GPUSCHED_LATENCY_LEAD_US=0 it asks only when it launches.
l=$(dirname "$0")/lib.sh; [ -r "$l" ] || l=/usr/lib/gpusched/lib.sh; . "$l"

secs=3
[ "$GS_TEST_SCALE" = 1 ] || secs=8
kern=$(us 100)
period=$(us 5000)
lead=$(us 1000)
service "$(us 10000)" 1000000

run_probe() {	# run_probe LEAD_US
	BP_PROBE="GPUSCHED_LATENCY_LEAD_US=$1" \
		busy_and_probe "$kern" "$period"
	asks=$(value early_asks "$T/probe.err")
	hits=$(value early_hits "$T/probe.err")
	miss=$(value early_misses "$T/probe.err")
	reqs=$(value launches "$T/probe.out")
	p50=$(value latency_p50_us "$T/probe.out")
	echo "# GPUSCHED_LATENCY_LEAD_US=$1: busy share $(value share "$T/busy.out"); probe: $reqs requests, asked early $asks times, $hits used, $miss given back; $(tail -1 "$T/probe.out")"
}

run_probe "$lead"
check "the probe asked early for most requests ($asks of $reqs)" \
	[ "${asks:-0}" -gt 0 ] && [ $((asks * 2)) -gt "${reqs:-0}" ]
check "every early grant was used or given back ($hits + $miss = $asks)" \
	[ $((${hits:-0} + ${miss:-0})) -eq "${asks:-1}" ]
check "most were used by the request ($hits of $asks)" \
	[ $((${hits:-0} * 4)) -ge $((${asks:-1} * 3)) ]
check "no kernel of one process started while the other's ran ($(violations))" \
	[ "$(violations)" = 0 ]
show probe
p1=$p50
run_probe 0
check "GPUSCHED_LATENCY_LEAD_US=0: never asked early (${asks:-?})" \
	[ "${asks:-1}" = 0 ]
check "the probe's median wait is shorter asking early: $p1 us against $p50 us" \
	[ "${p1:-999999}" -lt "${p50:-0}" ]
done_testing
