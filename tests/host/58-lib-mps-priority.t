#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Under MPS (GPUSCHED_MPS=1) a client of a class other than latency asks
# for MPS's below-normal client priority: CUDA_MPS_CLIENT_PRIORITY=1 is in
# the environment when the driver's cuInit reads it, whichever way the
# program reached cuInit. Latency-class clients, clients outside MPS mode
# and a value the operator set are left alone. The double's cuInit records
# what it saw; the client prints it as mps_client_priority.
l=$(dirname "$0")/lib.sh; [ -r "$l" ] || l=/usr/lib/gpusched/lib.sh; . "$l"

service "$(us 10000)" 200000

# seen NAME ENV... -- ARGS...: run a client under the library with ENV,
# print the priority its cuInit saw.
seen() {
	name=$1
	shift
	client "$@" --seconds 0.05 >"$T/$name.out" 2>"$T/$name.err" ||
		{ show "$name"; echo failed; return; }
	value mps_client_priority "$T/$name.out"
}

# Without the library the double reports the environment as it is.
got=$(GPUSCHED_MPS=1 "$GS_CLIENT" --seconds 0.05 | value mps_client_priority -)
check "without the library, cuInit sees no priority ($got)" [ "$got" = unset ]
got=$(CUDA_MPS_CLIENT_PRIORITY=1 "$GS_CLIENT" --seconds 0.05 | value mps_client_priority -)
check "and the double reports one that is set ($got)" [ "$got" = 1 ]

for route in symbol procaddr dlsym runtime; do
	got=$(seen "normal-$route" env GPUSCHED_MPS=1 GPUSCHED_CLASS=normal \
		"$GS_CLIENT" --route "$route")
	check "MPS, class normal, cuInit by $route: below normal ($got)" [ "$got" = 1 ]
done
check "and the normal-class client's launches are still gated" \
	grep -q ' gated=[1-9]' "$T/normal-runtime.err"

got=$(seen batch env GPUSCHED_MPS=1 GPUSCHED_CLASS=batch "$GS_CLIENT")
check "MPS, class batch: below normal ($got)" [ "$got" = 1 ]
got=$(seen noclass env GPUSCHED_MPS=1 "$GS_CLIENT")
check "MPS, no class set: below normal ($got)" [ "$got" = 1 ]
got=$(seen debug env GPUSCHED_MPS=1 GPUSCHED_DEBUG=log "$GS_CLIENT")
check "GPUSCHED_DEBUG=log says so" \
	sh -c "[ '$got' = 1 ] && grep -q 'CUDA_MPS_CLIENT_PRIORITY=1' '$T/debug.err'"

got=$(seen latency env GPUSCHED_MPS=1 GPUSCHED_CLASS=latency "$GS_CLIENT" --route runtime)
check "MPS, class latency: normal priority, left unset ($got)" [ "$got" = unset ]
check "and its launches run beside the holder, ungated" \
	grep -q ' beside=[1-9]' "$T/latency.err"
got=$(seen nompsmode env GPUSCHED_CLASS=batch "$GS_CLIENT" --route runtime)
check "without GPUSCHED_MPS: left unset ($got)" [ "$got" = unset ]
got=$(seen operator env GPUSCHED_MPS=1 CUDA_MPS_CLIENT_PRIORITY=0 "$GS_CLIENT" --route runtime)
check "the operator's CUDA_MPS_CLIENT_PRIORITY=0 is kept ($got)" [ "$got" = 0 ]
check "without a word about it" sh -c "! grep -q CUDA_MPS '$T/operator.err'"
done_testing
