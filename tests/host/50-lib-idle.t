#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# A process that stops launching releases the token after its idle time (idle_us):
# with a 10 s slice, the waiter runs only because of that. The idle time
# held while the waiter waited is counted as dry (stats holding dry_us).
l=$(dirname "$0")/lib.sh; [ -r "$l" ] || l=/usr/lib/gpusched/lib.sh; . "$l"

service 10000000 10000000

at=$(start_at)
later=$((at + 200000000))
run_bg idler client GS_START_AT=$at GPUSCHED_TUNE="$GPUSCHED_TUNE,idle_us=$(us 5000)" "$GS_CLIENT" --seconds 3 \
	--kernel-us "$(us 2000)" --idle-after 0.3 --idle-for 2
run_bg waiter client GS_START_AT=$later "$GS_CLIENT" --seconds 2 --kernel-us "$(us 2000)"
wait_bg idler; rc1=$?
wait_bg waiter; rc2=$?
check "both finished (exit $rc1 and $rc2)" sh -c "[ $rc1 = 0 ] && [ $rc2 = 0 ]"
s=$(value share "$T/waiter.out")
echo "# waiter share $s (the idler pauses from 0.3 s to 2.3 s)"
check "the waiter ran while the idler was idle (share $s > 0.6)" above "${s:-0}" 0.6
check "the idler released for idleness" grep -q 'idle_releases=[1-9]' "$T/idler.err"
d=$(value dry_us "$T/idler.err")
check "its hold before that, the waiter waiting, counted dry (${d:-0} us >= $(us 2500))" \
	[ "${d:-0}" -ge "$(us 2500)" ]
check "no overlap on the GPU" [ "$(violations)" = 0 ]
show idler waiter

# Not idle while a kernel of ours runs: a program that launches kernels
# longer than the idle time one at a time and waits for each
# (cuStreamSynchronize, not a wait of the library's) keeps the token
# through its slice while another process waits for it. Our events follow
# a launch only now and then, and the newest says nothing of the launches
# after it (nor does an anchor, which opens a span of two streams' work,
# of anything): idle time was counted from the last launch while the
# kernel ran, and the token given away (the waiter then got 0.90 of its
# run with one thread, 0.92 with two taking turns). The idle thread now
# marks each stream's newest launch with an event and asks it. Kernels a
# tenth longer than the idle time, and an event of ours only after 100
# ms of work (half of queue_us), so that most launches have none; one
# thread with an idle time of 50 ms, so that a loaded host that keeps the
# program from launching that long is not what the check sees; two
# threads, whose spans open often, with 10 ms. A thread's own default
# stream (--ptsz: the _ptsz entry points), which the idle thread cannot
# record on, gets an event after the idle time of work instead; a stream
# destroyed with its kernel queued (the program then waits on the
# context) gets one as it goes.
s=1.2
[ "$GS_TEST_SCALE" = 1 ] || s=12
for v in "1" "2" "1 --ptsz" "1 --stream-churn 1"; do
	set -- $v
	th=$1
	shift
	idle=$(us $((th == 1 ? 50000 : 10000)))
	GS_DOUBLE_SHARED_STREAMS=1 run_bg holder client \
		GPUSCHED_TUNE="$GPUSCHED_TUNE,idle_us=$idle,queue_us=$(us 200000)" \
		"$GS_CLIENT" --seconds "$s" --threads "$th" "$@" \
		--kernel-us $((idle * 11 / 10)) --period-us 1
	sleep "$(echo "$s" | awk '{ print $1 / 12 }')"
	GS_DOUBLE_SHARED_STREAMS=1 client "$GS_CLIENT" \
		--seconds "$(echo "$s" | awk '{ print $1 / 2 }')" \
		--kernel-us "$(us 300)" >"$T/other.out" 2>"$T/other.err"
	wait_bg holder
	o=$(value share "$T/other.out")
	case "$*" in
	--ptsz) what="$th thread, on its own default stream" ;;
	--stream-churn*) what="$th thread, a new stream for each kernel" ;;
	*) what="$th thread(s)" ;;
	esac
	check "$what, kernels past the idle time: the token kept while they ran (the waiter's share ${o:-none})" \
		above 0.1 "${o:-1}"
done
done_testing
