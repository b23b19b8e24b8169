#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# A periodic latency-class client (GPUSCHED_TUNE=latency_predict): the busy
# holder learns its period from the times it is asked to yield (yield_ns on
# the status page) or nudged, keeps a deep queue while the next request is
# far off and lets it run down to the latency bound when the request is
# due. Without the prediction it keeps the shallow latency bound all the
# time, waiting for every event.
l=$(dirname "$0")/lib.sh; [ -r "$l" ] || l=/usr/lib/gpusched/lib.sh; . "$l"

secs=3
[ "$GS_TEST_SCALE" = 1 ] || secs=8
kern=$(us 100)
period=$(us 5000)
service "$(us 10000)" 1000000

# The most kernels the busy process has queued or running is counted by
# the double from a second in until four fifths of the rest (at the very
# end the probe is gone and nothing bounds the queue).
run_probe() {	# run_probe PREDICT [BESIDE]
	BP_BUSY="--then-kernel-us $kern --then-at 1" \
		BP_PROBE="GPUSCHED_TUNE=$GPUSCHED_TUNE,beside=${2:-0}" \
		busy_and_probe "$kern" "$period" GPUSCHED_DEBUG=log,stats \
		GPUSCHED_TUNE="$GPUSCHED_TUNE,latency_predict=$1"
	waits=$(value throttle_waits "$T/busy.err")
	qmax=$(value then_queued_max "$T/busy.out")
	nl=$(value launches "$T/busy.out")
	p=$(value latency_period_us "$T/busy.err")
	matched=$(value latency_matched "$T/busy.err")
	yields=$(value yields "$T/busy.err")
	nudged=$(value nudged "$T/busy.err")
	echo "# latency_predict=$1, beside=${2:-0}: ${yields:-?} yields, ${nudged:-?} nudges let run out, ${matched:-0} requests on the beat; busy share $(value share "$T/busy.out"), at most ${qmax:-?} kernels queued, $waits throttle waits in $nl launches, period ${p:-not learnt}; probe $(probe_figures)"
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
q1=$qmax
run_probe 0
check "latency_predict=0: no period learnt (${p:-none})" [ -z "$p" ]
q0=$qmax
# A deep queue between requests: the GPU idles less between them. Without
# the prediction the latency bound (the service's latency_queue_us, 300 us)
# holds three kernels queued, four with the one running. Host only: in the
# emulated VMs a launch costs the CPU about as long as a kernel runs (0.5-
# 0.7 ms against 1 ms), and no queue builds at all.
lq=$(( $(us 300) / kern + 1 ))
if [ "$GS_TEST_SCALE" = 1 ]; then
	check "without the prediction the queue stays within the latency bound (at most $q0 kernels; $lq)" \
		[ "${q0:-999}" -le "$lq" ]
	check "the prediction deepens the queue between requests (at most $q1 kernels)" \
		[ "${q1:-0}" -gt "$lq" ]
else
	skip "the latency bound without the prediction: host only (launches cost ~1 ms in a VM)"
	skip "a deeper queue: host only (launches cost ~1 ms in a VM)"
fi

# A probe launched beside the holder (beside=1), one launch a request,
# nudges it rather than asking it to yield: the holder learns the period
# from the nudges' times (nudge_ns on its status page).
run_probe 1 1
check "a probe that nudges: its period was learnt (${p:-no} us of $period)" \
	within "${p:-0}" "$period" $((period / 10))
check "from the nudges: more requests on the beat (${matched:-0}) than yields asked (${yields:-?})" \
	[ "${matched:-0}" -gt "${yields:-999999}" ]

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
