#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Token time that does the GPU no good, in the stats: a launch call that
# takes milliseconds holding the token (the driver loading a kernel on its
# first launch in a context; the test double's GS_DOUBLE_LOAD_US) is
# counted once per kernel; time held while another waits, with no launch
# and nothing queued (a pause of the holder's), counts as dry_us, and with
# nobody waiting it does not.
l=$(dirname "$0")/lib.sh; [ -r "$l" ] || l=/usr/lib/gpusched/lib.sh; . "$l"

service 1000000 1000000

# Alone: two kernels (300 us and, every fourth, 900 us), each loaded once.
GS_DOUBLE_LOAD_US=$(us 3000) client "$GS_CLIENT" --seconds 0.3 --kernel-us "$(us 300)" \
	--long-us "$(us 900)" --long-every 4 >"$T/alone.out" 2>"$T/alone.err"
check "alone: the run succeeded" grep -q 'errors=0' "$T/alone.out"
n=$(value slow_launches "$T/alone.err")
check "alone: two slow launches, the first of each kernel (${n:-none})" [ "${n:-0}" = 2 ]
u=$(value slow_launch_us "$T/alone.err")
check "alone: their time in the driver counted (${u:-0} us >= 2 x $(us 3000))" \
	[ "${u:-0}" -ge $((2 * $(us 3000))) ]
d=$(value dry_us "$T/alone.err")
check "alone: a pause with nobody waiting is not dry (${d:-none})" [ "${d:-x}" = 0 ]

# A holds (a 1 s slice) and pauses 20 ms, its idle time longer, while B
# waits: most of the pause is dry.
at=$(start_at)
later=$((at + 100000000))
run_bg a client GS_START_AT=$at GPUSCHED_TUNE="$GPUSCHED_TUNE,idle_us=$(us 50000)" \
	"$GS_CLIENT" --seconds 0.6 --kernel-us "$(us 500)" --idle-after 0.3 --idle-for 0.02
run_bg b client GS_START_AT=$later "$GS_CLIENT" --seconds 0.3 --kernel-us "$(us 500)"
wait_bg a; rc1=$?
wait_bg b; rc2=$?
check "pair: both finished (exit $rc1 and $rc2)" sh -c "[ $rc1 = 0 ] && [ $rc2 = 0 ]"
d=$(value dry_us "$T/a.err")
echo "# the holder's pause of 20 ms with a waiter: dry_us=${d:-none}"
check "pair: the pause, another waiting, counted dry (${d:-0} us >= 10000)" \
	[ "${d:-0}" -ge 10000 ]
show a b
done_testing
