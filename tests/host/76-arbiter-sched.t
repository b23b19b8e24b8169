#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The arbiter's own scheduling: --poll-us (look for the next request
# without sleeping for a while after each) and --rt-priority (SCHED_FIFO).
# Polling must serve the token as sleeping does and stop once requests
# stop; a real-time priority is taken where allowed and refused clearly
# where not.
l=$(dirname "$0")/lib.sh; [ -r "$l" ] || l=/usr/lib/gpusched/lib.sh; . "$l"

[ "$BACKEND" = arbiter ] || { echo "1..0 # SKIP the arbiter's own options"; exit 0; }

# Bad values: refused before anything starts.
for bad in "--poll-us x" "--poll-us 1000001" "--poll-us -1" \
	"--rt-priority 100" "--rt-priority x"; do
	# shellcheck disable=SC2086 # the option and its value
	"$GS_DAEMON" --arbiter --socket "$T/bad.sock" $bad >"$T/bad.out" 2>&1
	rc=$?
	check "gpuschedd --arbiter $bad is refused (exit status $rc: 2)" [ $rc = 2 ]
	check "and says which option (${bad%% *})" grep -q -- "${bad%% *}" "$T/bad.out"
done

# two_clients NAME: two clients share the token for 1.5 s; the arbiter's
# CPU time in the middle 0.5 s goes to $T/NAME.cpu.
two_clients() {
	run_bg "$1-a" client "$GS_CLIENT" --seconds 1.5 --kernel-us "$(us 200)"
	run_bg "$1-b" client "$GS_CLIENT" --seconds 1.5 --kernel-us "$(us 300)"
	sleep 0.7
	c0=$(arb_ticks)
	sleep 0.5
	c1=$(arb_ticks)
	ticks_s "$c0" "$c1" >"$T/$1.cpu"
	rc=0
	for n in "$1-a" "$1-b"; do wait_bg "$n" || rc=1; done
	return $rc
}

# Sleeping (the default), for comparison.
service "$(us 2000)" 500000
two_clients sleep
check "sleeping: two clients ran without launch errors" [ $? = 0 ]
slept=$(cat "$T/sleep.cpu")
stop_arbiter
rm -f "$GS_DOUBLE_SHM"

# Polling 2 ms after each request: the same, served as ever.
GS_ARB_ARGS="--poll-us 2000" service "$(us 2000)" 500000
two_clients poll
check "polling: two clients ran without launch errors" [ $? = 0 ]
v=$(violations)
check "polling: no two processes had work on the GPU at once (violations=$v)" [ "$v" = 0 ]
check "polling: both were granted the token" \
	sh -c "grep -q ' acquires=[1-9]' '$T/poll-a.err' && grep -q ' acquires=[1-9]' '$T/poll-b.err'"
busy=$(cat "$T/poll.cpu")
# Requests come every few milliseconds: the arbiter does not sleep.
check "polling: while requests come, the arbiter polls ($busy s of CPU in 0.5 s; $slept s sleeping)" \
	awk -v p="$busy" -v s="$slept" "$GS_AWK_NUM"'
	BEGIN { exit !(num(p) && num(s) && p + 0 > 0.1 && p + 0 > 4 * s) }'
sleep 0.2
c0=$(arb_ticks)
sleep 1
c1=$(arb_ticks)
idle=$(ticks_s "$c0" "$c1")
check "polling: once they stop, it sleeps ($idle s of CPU in 1 s)" \
	below "$idle" 0.1
stop_arbiter
show poll-a poll-b

# rt_refused ARGS...: the arbiter with --rt-priority 3, started by ARGS
# (a command prefix) where that is not allowed, must exit with status 1,
# say why, and not listen.
rt_refused() {
	rm -f "$T/rt.sock"
	"$@" "$GS_DAEMON" --arbiter --socket "$T/rt.sock" --rt-priority 3 >"$T/rt.log" 2>&1 &
	pid=$!
	i=0
	while kill -0 $pid 2>/dev/null && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
	if kill -0 $pid 2>/dev/null; then
		kill $pid
		not_ok "--rt-priority 3 without the right to it: still running"
	else
		wait $pid
		rc=$?
		check "--rt-priority 3 without the right to it: refused (exit status $rc: 1)" [ $rc = 1 ]
	fi
	check "and says why" grep -q 'needs CAP_SYS_NICE' "$T/rt.log"
	check "and does not listen" [ ! -e "$T/rt.sock" ]
	diag "$T/rt.log"
}

# --rt-priority: where this process may take SCHED_FIFO, so may the
# arbiter; elsewhere it must refuse to start, saying why.
rm -f "$GS_DOUBLE_SHM"
if command -v chrt >/dev/null && chrt -f 1 true 2>/dev/null; then
	GS_ARB_ARGS="--rt-priority 3" service "$(us 2000)" 500000
	pol=$(chrt -p "$ARB_PID" 2>&1 | tr '\n' ' ')
	check "--rt-priority 3: the arbiter runs SCHED_FIFO at 3 ($pol)" \
		sh -c 'echo "$1" | grep -q SCHED_FIFO && echo "$1" | grep -q "priority: 3"' sh "$pol"
	run_bg rt client "$GS_CLIENT" --seconds 0.3 --kernel-us "$(us 200)"
	check "--rt-priority 3: a client is served" wait_bg rt
	check "--rt-priority 3: it was granted the token" grep -q ' acquires=[1-9]' "$T/rt.err"
	stop_arbiter
	show rt
	# The refusal too, without the capability (and no real-time limit).
	if command -v setpriv >/dev/null &&
		setpriv --bounding-set -sys_nice --inh-caps -sys_nice true 2>/dev/null; then
		rt_refused prlimit --rtprio=0 setpriv --bounding-set -sys_nice \
			--inh-caps -sys_nice
	else
		skip "the refusal: cannot drop CAP_SYS_NICE here (no setpriv)"
	fi
else
	rt_refused env
fi
done_testing
