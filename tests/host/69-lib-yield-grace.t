#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# A holder of long kernels answers every yield within the grace time. Its
# kernels (30 ms) are each longer than the shared queue bound and two of
# them outlast half the grace time (50 ms): it keeps one in flight, with
# an event after it to wait for, so a yield asked during a kernel is
# answered when that kernel ends. Were it to queue a second kernel behind
# the first, or several between events, a yield would wait for them and
# the service would revoke the grant. First it starts alone (its first
# kernels, not yet measured, are queued by count) and its neighbour of
# short kernels comes once its launches are timed; then it starts beside
# that neighbour, where its first kernel, not yet measured, must go alone.
l=$(dirname "$0")/lib.sh; [ -r "$l" ] || l=/usr/lib/gpusched/lib.sh; . "$l"

# In the VM (lengths ten times longer) the kernels are 150 ms, not 300: a
# wait for a kernel not measured yet gives up after 200 ms (a kernel may
# wait for the host), which is not scaled; the grace time is 250 ms.
kern=30000 slice=5000 grace=50000 long_s=1.5 short_s=1.2
[ "$GS_TEST_SCALE" = 1 ] ||
	{ kern=150000 slice=20000 grace=250000 long_s=6 short_s=5; }
service "$slice" "$grace"
at=$(start_at)
run_bg long client GS_START_AT="$at" "$GS_CLIENT" --seconds "$long_s" \
	--kernel-us "$kern"
run_bg short client GS_START_AT="$((at + $(us 300000) * 1000))" "$GS_CLIENT" \
	--seconds "$short_s" --kernel-us "$(us 500)"
check "the long process ran to its end" wait_bg long
check "its neighbour ran to its end" wait_bg short

# The long process's yields, from its stats (stderr in $T/$1.err).
judge() {
	revoked=$(grep 'stats launches=' "$T/$1.err" | value revoked -)
	yields=$(grep 'stats launches=' "$T/$1.err" | value yield_releases -)
	asked=$(grep 'stats launches=' "$T/$1.err" | value yields -)
	overruns=$(grep 'stats GPU-.*: service ' "$T/$1.err" | value overruns -)
	est=$(value us_per_launch "$T/$1.err")
	echo "# $1: ${est:-?} us per launch; yields answered: ${yields:-?} released, ${asked:-?} asking again; ${revoked:-?} grants found revoked, ${overruns:-?} overruns"
	check "$1: it timed its kernels (${est:-?} us for $kern us, within 10%)" \
		within "${est:-0}" "$kern" $((kern / 10))
	check "$1: it was asked to yield several times (${yields:-0} + ${asked:-0})" \
		[ $((${yields:-0} + ${asked:-0})) -ge 5 ]
	check "$1: no grant of it was revoked (${revoked:-?})" [ "${revoked:-1}" = 0 ]
	check "$1: the service counted no overrun (${overruns:-?})" [ "${overruns:-1}" = 0 ]
}
judge long
show long short

# Beside the neighbour from its first launch: were its first kernels
# queued by count as when alone, the first yield would wait for several.
service "$slice" "$grace"
at=$(start_at)
run_bg short2 client GS_START_AT="$at" "$GS_CLIENT" --seconds "$short_s" \
	--kernel-us "$(us 500)"
run_bg late client GS_START_AT="$((at + $(us 300000) * 1000))" "$GS_CLIENT" \
	--seconds "$long_s" --kernel-us "$kern"
check "late: the long process ran to its end" wait_bg late
check "late: its neighbour ran to its end" wait_bg short2
judge late
show late short2
done_testing
