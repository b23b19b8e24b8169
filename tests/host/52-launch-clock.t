#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# A program that waits for each kernel has the GPU idle from the kernel's
# end until its next launch reaches the driver, and whatever the library
# does in between is on the GPU's path: it reads no clock there (a
# system call where the clock source is not the TSC), but for the
# launches it times on the GPU (their frames) and, with
# GPUSCHED_DEBUG=stats, the one launch call in 16 whose time it takes.
# libgs-clock.so counts the library's clock reads per thread; the double
# counts the launches after the program's own waits that found one since.
l=$(dirname "$0")/lib.sh; [ -r "$l" ] || l=/usr/lib/gpusched/lib.sh; . "$l"

shim=$(find_file "$t_root/build/tests/host/libgs-clock.so") ||
	bail "libgs-clock.so not built"
service 1000000 1000000

# launch_clock ENV...: a client alone waiting for each 200 us kernel.
launch_clock() {
	env "$@" LD_PRELOAD="$shim $GS_LIB" "$GS_CLIENT" --seconds 0.5 \
		--kernel-us "$(us 200)" --period-us 1
}

# With the stats: every call in 16 reads it (the positive control: the
# counting works), and no launch but those, the timed ones and those
# that waited (the gate's slow path, an acquire or yield, or the queue's
# room: a loaded host) does.
launch_clock GPUSCHED_DEBUG=stats >"$T/stats.out" 2>"$T/stats.err"
check "with stats: the run succeeded" grep -q 'errors=0' "$T/stats.out"
n=$(value launches "$T/stats.out")
w=$(value waited_launches "$T/stats.out")
c=$(value clock_before_launch "$T/stats.out")
timed=$(value timed "$T/stats.err")
slow=$(( $(value acquires "$T/stats.err") + $(value yields "$T/stats.err") +
	$(value throttle_waits "$T/stats.err") ))
check "with stats: launches after the program's waits counted (${w:-none} of ${n:-none})" \
	[ $(( ${w:-0} >= ${n:-0} - 1 && ${w:-0} > 100 )) = 1 ]
check "with stats: the call in 16 read the clock (${c:-none} >= ${n:-0} / 16 - 1)" \
	[ "${c:-0}" -ge $(( (${n:-0} + 15) / 16 - 1 )) ]
check "with stats: no other launch but the timed ones and those that waited (${c:-none} <= $(( (${n:-0} + 15) / 16 )) + ${timed:-none} + $slow)" \
	[ "${c:-0}" -le $(( (${n:-0} + 15) / 16 + ${timed:-0} + slow )) ]

# Without: only the timed launches, a few in a hundred alone (one in 64
# at most once their lengths are steady), and those that waited: fewer
# than one in 8, where a read in every held launch would be all of them
# (the counts of the timed and the waits are the stats', not printed
# here).
launch_clock GPUSCHED_DEBUG=0 >"$T/plain.out" 2>"$T/plain.err"
check "without stats: the run succeeded" grep -q 'errors=0' "$T/plain.out"
w=$(value waited_launches "$T/plain.out")
c=$(value clock_before_launch "$T/plain.out")
check "without stats: fewer than one launch in 8 read the clock before the driver (${c:-none} of ${w:-none})" \
	[ $(( ${w:-0} > 100 && ${c:-0} * 8 < ${w:-0} )) = 1 ]
done_testing
