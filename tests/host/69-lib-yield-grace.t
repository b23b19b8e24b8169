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

# Process $1 (kernels of $2 us, $3 s) first, $4 ($5 us, $6 s) 300 ms
# later, under the test's slice and grace; both run to their end.
pair() {
	service "$slice" "$grace"
	at=$(start_at)
	run_bg "$1" client GS_START_AT="$at" "$GS_CLIENT" --seconds "$3" \
		--kernel-us "$2"
	run_bg "$4" client GS_START_AT="$((at + $(us 300000) * 1000))" \
		"$GS_CLIENT" --seconds "$6" --kernel-us "$5"
	check "$1 ran to its end" wait_bg "$1"
	check "$4 ran to its end" wait_bg "$4"
}
pair long "$kern" "$long_s" short "$(us 500)" "$short_s"

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
pair short2 "$(us 500)" "$short_s" late "$kern" "$long_s"
judge late
show late short2
done_testing
