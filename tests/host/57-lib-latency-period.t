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
	busy_and_probe "$kern" "$period" GPUSCHED_DEBUG=log,stats \
		GPUSCHED_TUNE="$GPUSCHED_TUNE,latency_predict=$1"
	waits=$(value throttle_waits "$T/busy.err")
	share=$(value share "$T/busy.out")
	nl=$(value launches "$T/busy.out")
	p=$(value latency_period_us "$T/busy.err")
	echo "# latency_predict=$1: busy share $(value share "$T/busy.out"), $waits throttle waits in $nl launches, period ${p:-not learnt}; probe $(cat "$T/probe.out" | tail -1)"
}

run_probe 1
check "the probe's period was learnt (${p:-no} us of $period)" \
	within "${p:-0}" "$period" $((period / 10))
# Log lines (GPUSCHED_DEBUG=log) say when, in CLOCK_MONOTONIC seconds, so
# that two processes' lines can be put in order; the releases, logged
# under the device's lock, come in the order of their times.
stamps=$(sed -n 's/^gpusched\[[0-9]*\]: \([0-9]*\.[0-9]\{6\}\): .*: released (.*/\1/p' "$T/busy.err")
check "log lines carry their time, in order ($(echo "$stamps" | grep -c .) releases)" \
	awk 'NR > 1 && $1 < p { exit 1 } { p = $1; n++ } END { exit !(n > 0) }' <<EOF
$stamps
EOF
show busy
s1=$share
run_probe 0
check "latency_predict=0: no period learnt (${p:-none})" [ -z "$p" ]
s0=$share
# A deep queue between requests: the GPU idles less between them. Host
# only: in the emulated VMs a launch costs the CPU about as long as a
# kernel runs (0.5-0.7 ms against 1 ms), and no queue builds at all. (The
# launching thread's CPU time per launch cannot tell: the library's waits
# in the bounded queue count in it, and beside the probe the holder polls
# the last stretch of its work.)
if [ "$GS_TEST_SCALE" = 1 ]; then
	check "the prediction deepens the queue: the busy process keeps more of the GPU ($s1 against $s0)" \
		awk -v a="${s1:-0}" -v b="${s0:-1}" 'BEGIN { exit !(a > b) }'
else
	skip "a deeper queue: host only (launches cost ~1 ms in a VM)"
fi

# The latency class from outside (the daemon's rules; here gpuschedctl),
# not the environment: the library reads it from its status page, and its
# neighbour learns its period.
if [ -n "$GS_CTL" ]; then
	rm -f "$GS_DOUBLE_SHM"
	at=$(start_at)
	run_bg busy client GS_START_AT="$at" "$GS_CLIENT" --seconds "$secs" \
		--kernel-us "$kern"
	run_bg probe client GS_START_AT="$at" "$GS_CLIENT" --seconds "$secs" \
		--kernel-us "$(us 50)" --period-us "$period"
	pid=$(cat "$T/probe.pid")
	i=0
	until "$GS_CTL" set client "$pid" class=latency >"$T/ctl.out" 2>&1 ||
		[ $i -ge 50 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	wait_bg busy && wait_bg probe || not_ok "clients failed"
	p=$(value latency_period_us "$T/busy.err")
	echo "# class set by gpuschedctl: $(cat "$T/ctl.out"); busy learnt ${p:-no} period"
	check "a class set from outside: the busy client learnt the probe's period (${p:-no} us)" \
		within "${p:-0}" "$period" $((period / 10))
else
	skip "gpuschedctl not built"
fi
done_testing
