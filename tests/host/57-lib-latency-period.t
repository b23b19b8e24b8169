#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# A periodic latency-class client (GPUSCHED_TUNE=latency_predict): the busy
# holder learns its period from the times it is asked to yield (yield_ns on
# the status page), keeps a deep queue while the next request is far off
# and lets it run down when the request is due. Without the prediction it
# keeps the shallow latency bound all the time, waiting for every event.
l=$(dirname "$0")/lib.sh; [ -r "$l" ] || l=/usr/lib/gpusched/lib.sh; . "$l"

secs=3
[ "$GS_TEST_SCALE" = 1 ] || secs=8
kern=$(us 100)
period=$(us 5000)
service "$(us 10000)" 1000000

run_probe() {	# run_probe PREDICT
	busy_and_probe "$kern" "$period" GPUSCHED_DEBUG=stats \
		GPUSCHED_TUNE="$GPUSCHED_TUNE,latency_predict=$1"
	waits=$(value throttle_waits "$T/busy.err")
	share=$(value share "$T/busy.out")
	nl=$(value launches "$T/busy.out")
	cpu=$(value cpu_ns_per_launch "$T/busy.out")
	p=$(value latency_period_us "$T/busy.err")
	echo "# latency_predict=$1: busy share $(value share "$T/busy.out"), $waits throttle waits in $nl launches, period ${p:-not learnt}; probe $(cat "$T/probe.out" | tail -1)"
}

run_probe 1
check "the probe's period was learnt (${p:-no} us of $period)" \
	within "${p:-0}" "$period" $((period / 10))
show busy
s1=$share
run_probe 0
check "latency_predict=0: no period learnt (${p:-none})" [ -z "$p" ]
s0=$share
# A deep queue between requests: the GPU idles less between them. Only
# where launching is cheap next to a kernel: on the debug kernel's VM a
# launch costs more CPU than the kernel runs, and no queue builds at all.
if awk -v c="${cpu:-0}" -v k="$kern" 'BEGIN { exit !(c * 4 < k * 1000) }'; then
	check "the prediction deepens the queue: the busy process keeps more of the GPU ($s1 against $s0)" \
		awk -v a="${s1:-0}" -v b="${s0:-1}" 'BEGIN { exit !(a > b) }'
else
	skip "a launch costs $cpu ns of CPU against $kern us kernels: no queue to deepen"
fi
done_testing
