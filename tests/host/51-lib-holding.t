#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Token time that does the GPU no good, in the stats: a launch call that
# takes milliseconds holding the token (the driver loading a kernel on its
# first launch in a context; the test double's GS_DOUBLE_LOAD_US) is
# counted once per kernel, and a pause with nobody waiting is not dry time
# (50-lib-idle.t: with someone waiting it is).
l=$(dirname "$0")/lib.sh; [ -r "$l" ] || l=/usr/lib/gpusched/lib.sh; . "$l"

service 1000000 1000000

# Alone: two kernels (300 us and, every fourth, 900 us), each loaded once,
# and a pause of 1 ms (shorter than the idle time: the token stays).
GS_DOUBLE_LOAD_US=$(us 3000) client "$GS_CLIENT" --seconds 0.3 --kernel-us "$(us 300)" \
	--long-us "$(us 900)" --long-every 4 --idle-after 0.1 --idle-for 0.001 \
	>"$T/alone.out" 2>"$T/alone.err"
check "alone: the run succeeded" grep -q 'errors=0' "$T/alone.out"
n=$(value slow_launches "$T/alone.err")
check "alone: two slow launches, the first of each kernel (${n:-none})" [ "${n:-0}" = 2 ]
u=$(value slow_launch_us "$T/alone.err")
check "alone: their time in the driver counted (${u:-0} us >= 2 x $(us 3000))" \
	[ "${u:-0}" -ge $((2 * $(us 3000))) ]
d=$(value dry_us "$T/alone.err")
check "alone: a pause with nobody waiting is not dry (${d:-none})" [ "${d:-x}" = 0 ]

done_testing
