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
done_testing
