#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# A process killed while it holds the token frees it: with a 10 s slice,
# the waiter gets the GPU only because the holder died.
l=$(dirname "$0")/lib.sh; [ -r "$l" ] || l=/usr/lib/gpusched/lib.sh; . "$l"

service 10000000 10000000

run_bg hog client "$GS_CLIENT" --seconds 20 --kernel-us "$(us 2000)"
sleep 1	# the hog attaches and holds the token
run_bg waiter client "$GS_CLIENT" --seconds 3 --kernel-us "$(us 2000)"
sleep 1
kill -9 "$(cat "$T/hog.pid")"
wait_bg hog
check "the waiter finished" wait_bg waiter
s=$(value share "$T/waiter.out")
echo "# waiter share $s over its 3 s (blocked for the first 1 s)"
check "the waiter got the GPU once the holder died (share $s > 0.4)" above "${s:-0}" 0.4
check "no overlap on the GPU" [ "$(violations)" = 0 ]
show waiter
done_testing
