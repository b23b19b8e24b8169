#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Weights 1:3 give 25/75 of the GPU, within 5 points; equal weights share
# equally.
l=$(dirname "$0")/lib.sh; [ -r "$l" ] || l=/usr/lib/gpusched/lib.sh; . "$l"

# Longer in the emulated VM, where the host's load makes shares noisier.
secs=${GS_SHARE_SECONDS:-4}
[ "$GS_TEST_SCALE" = 1 ] || secs=${GS_SHARE_SECONDS:-6}
service "$(us 10000)" 200000

share_pair() {	# share_pair W1 W2 KERNEL_US: runs both, sets s1 s2 f1
	at=$(start_at)
	run_bg w1 client GS_START_AT=$at GPUSCHED_WEIGHT=$1 "$GS_CLIENT" --seconds "$secs" --kernel-us "$3"
	run_bg w2 client GS_START_AT=$at GPUSCHED_WEIGHT=$2 "$GS_CLIENT" --seconds "$secs" --kernel-us "$3"
	wait_bg w1 && wait_bg w2 || not_ok "clients failed"
	s1=$(value share "$T/w1.out")
	s2=$(value share "$T/w2.out")
	f1=$(awk -v a="$s1" -v b="$s2" 'BEGIN { printf "%.3f", a / (a + b) }')
	echo "# weights $1:$2, ${3} us kernels: shares $s1 $s2 (first gets $f1 of the total)"
}

# used W: how much of the token time the service charged client W its
# GPU work filled (work_us / held_us).
used() {
	awk -v w="$(value work_us "$T/$1.out")" -v h="$(value held_us "$T/$1.err")" \
		'BEGIN { printf "%.2f", (h > 0 ? w / h : 0) }'
}

share_pair 1 3 "$(us 500)"
# A client holds the token at the GPU's pace only while its host runs: a
# loaded emulator that stops the guest for a while shows as a holder whose
# work filled far less of its held time than the clients' steady 0.95 or
# more. That run measured the host, not the weights: it is said and run once
# more (once: a library that sits on the token does it again and fails).
u1=$(used w1) u2=$(used w2)
if ! above "$u1" 0.85 || ! above "$u2" 0.85; then
	echo "# the clients' work filled $u1 and $u2 of the token time they held: the host stalled; once more"
	show w1 w2
	rm -f "$GS_DOUBLE_SHM"
	share_pair 1 3 "$(us 500)"
fi
check "weights 1:3 give 25/75 within 5 points (got $s1 / $s2)" within "$f1" 0.25 0.05
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
check "equal weights share equally within 5 points (got $s1 / $s2)" within "$f1" 0.5 0.05
check "no overlap on the GPU" [ "$(violations)" = 0 ]
show w1 w2
done_testing
