#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Contexts that come and go under the library, as programs use them:
# - releasing one reference to the primary context (the runtime and
#   libraries retain and release in pairs) leaves it alive: its work in
#   flight still holds the token, and it keeps its state;
# - a context destroyed, or the primary context reset (cudaDeviceReset),
#   takes its allocations with it: their bytes come back to the limit,
#   and the library's record of it serves the next context;
# - a kernel that may wait for the host does not hold up the launches
#   after it for good.
l=$(dirname "$0")/lib.sh; [ -r "$l" ] || l=/usr/lib/gpusched/lib.sh; . "$l"

[ -n "$GS_MEM" ] || bail "gs-mem-client not built"
# A grace longer than the 300 ms of kernels below (scaled as they are):
# the holder is never revoked.
service "$(us 5000)" "$(us 1000000)"

# --- a release that is not the last
rm -f "$GS_DOUBLE_SHM"
at=$(start_at)
run_bg a client GS_START_AT=$at "$GS_MEM" retain kernels 3 "$(us 100000)" release sleep 1.2 sync
run_bg b client GS_START_AT=$at "$GS_CLIENT" --seconds 1.5 --kernel-us "$(us 500)"
wait_bg a
check "its kernels and release succeeded" \
	sh -c "grep -q '^op=kernels r=0' '$T/a.out' && grep -q '^op=release r=0' '$T/a.out'"
wait_bg b
v=$(violations)
check "its work in flight kept the token (violations=$v)" [ "$v" = 0 ]
show a b

mem cycle GPUSCHED_DEBUG=stats -- retain relcycle 50 release
check "50 retain, launch, release cycles beside a reference held" \
	grep -q '^op=relcycle n=50 failed=0' "$T/cycle.out"
n=$(grep -c 'stats context ' "$T/cycle.err")
check "... kept one context's state, not one per cycle ($n)" [ "$n" = 1 ]
show cycle

# --- allocations that go with their context (4 GiB of memory modelled)
export GS_DOUBLE_MEM=4G
mem destroy GPUSCHED_MEM_LIMIT=1G GPUSCHED_DEBUG=stats -- ctxcycle 8 256M info
check "8 contexts of 256 MiB each, destroyed unfreed, under a 1 GiB limit" \
	grep -q '^op=ctxcycle n=8 failed=0' "$T/destroy.out"
check "... and nothing of them left reserved" [ "$(reserved destroy)" = 0 ]
n=$(grep -c 'stats context ' "$T/destroy.err")
check "... one state record serving them in turn ($n)" [ "$n" = 1 ]
show destroy

mem reset GPUSCHED_MEM_LIMIT=1G GPUSCHED_DEBUG=stats -- alloc 768M reset alloc 768M reset alloc 768M
check "768 MiB allocated again after each reset, under a 1 GiB limit" \
	[ "$(at reset 1 r)$(at reset 2 r)$(at reset 3 r)$(at reset 4 r)$(at reset 5 r)" = 00000 ]
check "... with only the last allocation reserved at exit" [ "$(reserved reset)" = 805306368 ]
show reset

mem relaunch GPUSCHED_DEBUG=stats -- kernels 3 "$(us 1000)" reset kernels 3 "$(us 1000)" \
	reset kernels 3 "$(us 1000)" sync
check "launches after each reset succeeded" \
	[ "$(grep -c '^op=[a-z]* r=0' "$T/relaunch.out")" = 6 ]
n=$(grep -c 'stats context ' "$T/relaunch.err")
check "... one state record across the resets ($n)" [ "$n" = 1 ]
show relaunch
# --- a kernel that does not end until the program goes on
# (a flag it sets later, modelled as a kernel far longer than the wait):
# the launches after it wait for room only so long, then go ahead; and a
# drain for a yield (with the module, one may come) stops at the grace
# time, here well before the kernel's end.
unset GS_DOUBLE_MEM
service "$(us 5000)" "$(us 100000)"
mem stuck GPUSCHED_DEBUG=stats -- kernels 1 5000000 mark kernels 20 "$(us 10)" query sync
check "20 launches behind it returned before it ended" grep -q '^op=query r=600' "$T/stuck.out"
check "... the wait given up" grep -q 'stuck_waits=[1-9]' "$T/stuck.err"
show stuck

# ... and with a neighbour asking for the token meanwhile, the holder's
# drain for the yield stops at the grace time, where the service revokes
# the token anyway: its next launch returns while the kernel still runs.
rm -f "$GS_DOUBLE_SHM"
at=$(start_at)
run_bg held client GS_START_AT=$at GPUSCHED_DEBUG=stats "$GS_MEM" \
	kernels 1 5000000 mark sleep 1 kernels 1 "$(us 10)" query sync
run_bg asks client GS_START_AT=$at "$GS_CLIENT" --seconds 1 --kernel-us "$(us 100)"
wait_bg asks
wait_bg held
check "asked to yield, its next launch returned before that kernel ended" \
	grep -q '^op=query r=600' "$T/held.out"
check "... the drain given up" grep -q 'stuck_waits=[1-9]' "$T/held.err"
show held asks

# ... and where its work is on two streams: the drain waits for the
# library's join of both (an event its stream records once each stream's
# work before it is done), which it can give up on, where
# cuCtxSynchronize, the wait for a context's work of many streams, could
# not. In the VM (grace 1 s) the second stream's first launch may wait
# for room (the neighbour attached first), and the launch after the sleep
# for one drain given up and the neighbour's slice: about 3 s of the
# kernel's 8.
# two_streams NAME OP: NAME's 8 s kernel by gs-mem-client's OP, one of
# 10 us on a second stream, and after a second another by OP, with a
# neighbour (NAME-asks) asking for the token meanwhile.
two_streams() {
	rm -f "$GS_DOUBLE_SHM"
	at=$(start_at)
	run_bg "$1" client GS_START_AT=$at GPUSCHED_DEBUG=stats "$GS_MEM" \
		"$2" 1 8000000 kernels2 1 "$(us 10)" mark sleep 1 \
		"$2" 1 "$(us 10)" query sync
	run_bg "$1-asks" client GS_START_AT=$at "$GS_CLIENT" --seconds 1 \
		--kernel-us "$(us 100)"
	wait_bg "$1-asks"
	wait_bg "$1"
}
two_streams held2 kernels
check "two streams: asked to yield, its next launch returned before that kernel ended" \
	grep -q '^op=query r=600' "$T/held2.out"
check "... the drain given up" grep -q 'stuck_waits=[1-9]' "$T/held2.err"
show held2 held2-asks

# ... and where one of the two is the thread's own default stream, on
# which the library cannot record from another thread: no join, and the
# drain (the launch's, or the idle thread's) waits with cuCtxSynchronize(),
# made by the library's helper thread, which it stops waiting for at the
# grace time as it does for an event; made by the drain itself, the call
# would hold it for the kernel's 8 s.
two_streams held4 kernelsT
check "the thread's own stream and another: asked to yield, its next launch returned before that kernel ended" \
	grep -q '^op=query r=600' "$T/held4.out"
check "... the drain given up" grep -q 'stuck_waits=[1-9]' "$T/held4.err"
check "... no join made" grep -q ' joins=0 ' "$T/held4.err"
show held4 held4-asks

# ... and asked to yield again, with the token back and the kernel still
# running: the drain waits for it no more (each wait given up lasts the
# grace time). The first drain may give up on it, or a launch's wait for
# room before that, and where the neighbour attaches late both: fewer
# waits given up than drains, where every drain gave up before.
rm -f "$GS_DOUBLE_SHM"
at=$(start_at)
run_bg held3 client GS_START_AT=$at GPUSCHED_DEBUG=stats "$GS_MEM" \
	kernels 1 8000000 mark sleep 1 kernels 1 "$(us 10)" sleep 1 \
	kernels 1 "$(us 10)" sleep 1 kernels 1 "$(us 10)" query sync
run_bg asks3 client GS_START_AT=$at "$GS_CLIENT" --seconds 3 --kernel-us "$(us 100)"
wait_bg asks3
wait_bg held3
d3=$(value drains "$T/held3.err")
s3=$(value stuck_waits "$T/held3.err")
echo "# held3: ${d3:-?} drains, ${s3:-?} waits given up"
check "asked to yield more than once (${d3:-0} drains)" [ "${d3:-0}" -ge 2 ]
check "... its kernel not waited for at each drain (${s3:-?} waits given up)" \
	[ "${s3:-999}" -lt "${d3:-0}" ]
show held3
done_testing
