#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Many threads launching on their own streams, every entry point and
# route, a fork in the middle whose child launches too, next to another
# process: no deadlock, no overlap.
l=$(dirname "$0")/lib.sh; [ -r "$l" ] || l=/usr/lib/gpusched/lib.sh; . "$l"

service "$(us 5000)" 500000

at=$(start_at)
run_bg many client GS_START_AT=$at timeout 60 "$GS_CLIENT" --seconds 2 --threads 6 \
	--route mixed --api mixed --kernel-us "$(us 200)" --fork-at 0.7
run_bg ptsz client GS_START_AT=$at timeout 60 "$GS_CLIENT" --seconds 2 --threads 3 \
	--route mixed --ptsz --kernel-us "$(us 300)"
wait_bg many; rc1=$?
wait_bg ptsz; rc2=$?
check "the threaded, forking client finished (no deadlock; exit $rc1)" [ $rc1 = 0 ]
check "the per-thread-stream client finished (exit $rc2)" [ $rc2 = 0 ]
check "the forked child launched and finished" grep -q '^child .*work_us=[1-9]' "$T/many.out"
check "the child used its own token client" sh -c "grep -c 'acquires=[1-9]' '$T/many.err' | grep -qx 2"
# Each process's token timings are its own: as many grants timed as it
# had (acquires + yields), the child's not counting the parent's.
check "each process timed only its own grants" awk '
	match($0, /gpusched\[[0-9]+\]/) { pid = substr($0, RSTART, RLENGTH) }
	/ stats launches=/ { for (i = 1; i <= NF; i++) {
		split($i, kv, "=")
		if (kv[1] == "acquires" || kv[1] == "yields") want[pid] += kv[2] } }
	/ stats grant_wait_us / { got[pid] = $NF; n++ }
	END { if (n != 2) exit 1
		for (p in got) if (got[p] != want[p]) exit 1 }' "$T/many.err"
# ... and its launch calls, one in 16 (GS_CALL_TIME_EVERY), the first
# included: so many of those it made (at most the 4,096 kept), the
# driver's part of each no longer than the whole call.
check "each process timed its own launch calls, the driver's part within" awk '
	match($0, /gpusched\[[0-9]+\]/) { pid = substr($0, RSTART, RLENGTH) }
	/ stats launches=/ { split($3, kv, "="); w = int((kv[2] + 15) / 16)
		want[pid] = w > 4096 ? 4096 : w }
	/ stats launch_call_us / { for (i = 4; i <= 7; i++) { split($i, kv, "="); call[pid, i] = kv[2] }
		got[pid] = $NF; n++ }
	/ stats launch_driver_us / { for (i = 4; i <= 7; i++) { split($i, kv, "=")
		if (kv[2] + 0 > call[pid, i] + 0) bad++ }
		if ($NF != got[pid]) bad++ }
	END { if (n != 2 || bad) exit 1
		for (p in got) if (got[p] != want[p]) exit 1 }' "$T/many.err"
check "no overlap on the GPU" [ "$(violations)" = 0 ]
show many ptsz
done_testing
