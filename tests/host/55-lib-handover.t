#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Early hand-over (handover_us): a holder asked to yield gives the
# token away once at most that much of its queued work is left, so the
# next holder's first kernels start right behind its last; never earlier.
# The double counts each kernel that started while another process's ran,
# and how much of that one was left.
l=$(dirname "$0")/lib.sh; [ -r "$l" ] || l=/usr/lib/gpusched/lib.sh; . "$l"

secs=3
[ "$GS_TEST_SCALE" = 1 ] || secs=5
kern=$(us 100)
h=$(us 400)
service "$(us 10000)" 1000000

run_pair() {	# run_pair HANDOVER_US
	rm -f "$GS_DOUBLE_SHM"
	at=$(start_at)
	for n in a b; do
		run_bg $n client GS_START_AT=$at GPUSCHED_TUNE="$GPUSCHED_TUNE,handover_us=$1" \
			"$GS_CLIENT" --seconds "$secs" --kernel-us "$kern"
	done
	wait_bg a && wait_bg b || not_ok "clients failed"
	sa=$(value share "$T/a.out")
	sb=$(value share "$T/b.out")
	v=$(violations)
	o=$(overlap_max)
	echo "# hand-over $1 us, $kern us kernels: shares $sa $sb; $v kernels started behind the other's, at most $o us of it left"
}

run_pair "$h"
check "hand-overs were early: kernels started behind the other's last ($v)" \
	[ "${v:-0}" -gt 0 ]
# At most twice the allowance. The double measures the old holder's queued
# work left when the new holder's kernel starts, as of that moment (from
# the kernel's modelled start, a worker woken late on a loaded host read
# 583 us, and 4405 us with two CPU hogs). What is left is the allowance,
# the kernel then running, and the error of the predicted end: the launch
# length is measured on the host's clock, and CI's loaded host once left
# 574 us against 400 + 100. The figure follows the allowance (1318 us with
# 1500), and a runaway hand-over (970 us and more with a bad estimate)
# still fails.
check "never more than twice the hand-over allowance left ($o <= 2 x $h us)" \
	[ "${o:-999999999}" -le $((2 * h)) ]
# The allowance is counted in launches of the measured length: a length
# measured short would hand over too early (pops of events that had long
# completed once measured 1.7 us for these 100 us kernels).
for n in a b; do
	e=$(value us_per_launch "$T/$n.err")
	check "$n measured its kernels' length ($e us, of $kern)" above "${e:-0}" $((kern / 2))
done
show a b

run_pair 0
check "handover_us=0: no kernel started behind another's ($v)" [ "$v" = 0 ]
show a b
done_testing
