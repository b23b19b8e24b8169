#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Weights 1:3 give 25/75 of the GPU, within 5 points; equal weights share
# equally (in the VM: of the token time charged, judge_split()).
l=$(dirname "$0")/lib.sh; [ -r "$l" ] || l=/usr/lib/gpusched/lib.sh; . "$l"

# Longer in the emulated VM, where the host's load makes shares noisier.
secs=${GS_SHARE_SECONDS:-4}
[ "$GS_TEST_SCALE" = 1 ] || secs=${GS_SHARE_SECONDS:-6}
# A second's grace, as in the other share tests: a revoked holder's last
# kernels run beside the next one's (the overlap check below), and in the
# VM a stalled vCPU can keep a holder from yielding for 200 ms.
service "$(us 10000)" 1000000

share_pair() {	# share_pair W1 W2 KERNEL_US: runs both, sets s1 s2 f1 h1
	at=$(start_at)
	run_bg w1 client GS_START_AT=$at GPUSCHED_WEIGHT=$1 "$GS_CLIENT" --seconds "$secs" --kernel-us "$3"
	run_bg w2 client GS_START_AT=$at GPUSCHED_WEIGHT=$2 "$GS_CLIENT" --seconds "$secs" --kernel-us "$3"
	wait_bg w1 && wait_bg w2 || not_ok "clients failed"
	s1=$(value share "$T/w1.out")
	s2=$(value share "$T/w2.out")
	f1=$(awk -v a="$s1" -v b="$s2" 'BEGIN { printf "%.3f", a / (a + b) }')
	# The token time the service charged each (GPUSCHED_DEBUG=stats).
	h1=$(awk -v a="$(value held_us "$T/w1.err")" -v b="$(value held_us "$T/w2.err")" \
		'BEGIN { if (a + b > 0) printf "%.3f", a / (a + b); else print -1 }')
	echo "# weights $1:$2, ${3} us kernels: shares $s1 $s2 (first gets $f1 of the GPU time, $h1 of the token time charged)"
}

# judge_split WANT WHAT: the first client's part of the two's GPU time
# within 5 points of WANT. Not in the emulated VM: there the host runs the
# guest's vCPUs late at times, a client's launching thread falls behind
# while it holds the token, its queue runs dry, and its work fills far less
# of its token time than the 0.95 or more of a steady host. The VM judges
# what the policy decides instead, the split of the token time the service
# charged, which includes that lost time.
judge_split() {
	if [ "$GS_TEST_SCALE" = 1 ]; then
		check "$2 within 5 points of the GPU time (got $s1 / $s2)" within "$f1" "$1" 0.05
	else
		check "$2 within 5 points of the token time charged (got $h1 of it; $s1 / $s2 of the GPU)" \
			within "$h1" "$1" 0.05
	fi
}

share_pair 1 3 "$(us 500)"
judge_split 0.25 "weights 1:3 give 25/75"
# Little lost to hand-overs, where launching is cheap (not in an emulated
# VM, whose CPU cost per launch is what it measures then).
if [ "$GS_TEST_SCALE" = 1 ]; then
	sum=$(awk -v a="$s1" -v b="$s2" 'BEGIN { print a + b }')
	check "the two together used most of the GPU ($sum > 0.7)" above "$sum" 0.7
fi
check "no overlap on the GPU" [ "$(violations)" = 0 ]
show w1 w2

rm -f "$GS_DOUBLE_SHM"
share_pair 100 100 "$(us 2000)"
judge_split 0.5 "equal weights share equally"
check "no overlap on the GPU" [ "$(violations)" = 0 ]
show w1 w2
done_testing
