#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Device memory limits under concurrency and change: threads that race to
# allocate get exactly what the limit allows; threads that allocate and
# free at once leave nothing reserved; when the driver runs out
# after a reservation, the reservation goes back; two processes racing for
# one GPU's memory get exactly all of it, each within its limit; a process
# killed with memory reserved leaves nothing reserved; a limit changed
# while a process runs (the GPU's default, mem_default_pct, or its own,
# set with gpuschedctl) holds for its next allocation and for cuMemGetInfo;
# a restarted arbiter is found again by a process that only allocates.
l=$(dirname "$0")/lib.sh; [ -r "$l" ] || l=/usr/lib/gpusched/lib.sh; . "$l"

[ -n "$GS_MEM" ] || bail "gs-mem-client not built"
service 20000 200000

G=1073741824
M=1048576

# The service's sum of reservations on the double's GPU 0; empty if it
# cannot be read here (no gpuschedctl).
gpu_reserved() {
	if [ "$BACKEND" = kmod ]; then
		cat "$(kmod_gpu_dir 0)/mem_reserved"
	elif [ -n "$GS_CTL" ]; then
		"$GS_CTL" --json status | sed -n 's/.*"mem_reserved":\([0-9]*\).*/\1/p'
	fi
}

# --- threads of one process: exactly what the limit allows
rm -f "$GS_DOUBLE_SHM"
mem thr GS_DOUBLE_MEM=16G GPUSCHED_MEM_LIMIT=1G -- race 8 10M info
check "8 threads racing in 10 MiB steps under 1 GiB: 102 allocations ($(at thr 1 n))" \
	[ "$(at thr 1 n)" = 102 ]
check "each thread ended with CUDA_ERROR_OUT_OF_MEMORY" [ "$(at thr 1 oom)" = 8 ]
check "the limit refused them, not the driver" [ "$(double_count mem_refused)" = 0 ]
check "the service's account is what the threads hold ($(reserved thr))" \
	[ "$(reserved thr)" = "$(at thr 1 held)" ]
show thr

# --- threads allocating and freeing at once: the map and the service agree
mem churn GPUSCHED_MEM_LIMIT=64M -- churn 8 8M 500 info
check "8 threads x 500 allocate/free of 8 MiB under 8 x 8 MiB: none refused" \
	[ "$(at churn 1 failed)" = 0 ]
check "and nothing reserved after ($(at churn 2 free) free)" [ "$(at churn 2 free)" = $((64 * M)) ]
check "the service agrees at exit" [ "$(reserved churn)" = 0 ]

# --- threads and a driver that runs out first: reservations come back
rm -f "$GS_DOUBLE_SHM"
mem drv GS_DOUBLE_MEM=1G GPUSCHED_MEM_LIMIT=2G -- race 8 10M
check "with 1 GiB on the GPU and a 2 GiB limit: 102 allocations ($(at drv 1 n))" \
	[ "$(at drv 1 n)" = 102 ]
check "the driver refused the rest" [ "$(double_count mem_refused)" -ge 8 ]
check "every refused allocation's reservation went back ($(reserved drv) reserved)" \
	[ "$(reserved drv)" = $((102 * 10 * M)) ]

# --- two processes racing for 1 GiB, each with a 768 MiB limit
rm -f "$GS_DOUBLE_SHM" "$T/go" "$T/end"
for p in p1 p2; do
	run_bg $p client GS_DOUBLE_MEM=1G GPUSCHED_MEM_LIMIT=768M "$GS_MEM" \
		wait "$T/go" fill 16M touch "$T/$p.done" wait "$T/end"
done
sleep 0.5	# both attached and waiting
touch "$T/go"
wait_for "$T/p1.done" && wait_for "$T/p2.done"
used=$(double_count mem_used)
touch "$T/end"
wait_bg p1 && wait_bg p2 || not_ok "clients failed"
n1=$(at p1 2 n)
n2=$(at p2 2 n)
check "the two took all of the GPU's 64 blocks of 16 MiB ($n1 + $n2)" [ $((n1 + n2)) = 64 ]
check "the GPU's memory, all of it and no more, was in use ($used)" [ "$used" = $G ]
check "each within its limit of 48" [ "$n1" -le 48 -a "$n2" -le 48 ]
check "the service's accounts are what each holds" \
	[ "$(reserved p1) $(reserved p2)" = "$((n1 * 16 * M)) $((n2 * 16 * M))" ]
show p1 p2

# --- a process killed with memory reserved
if [ -n "$(gpu_reserved)" ]; then
	run_bg dead client "$GS_MEM" alloc 512M touch "$T/dead.ready" sleep 60
	wait_for "$T/dead.ready"
	before=$(gpu_reserved)
	kill -9 "$(cat "$T/dead.pid")"
	wait_bg dead
	i=0
	while [ "$(gpu_reserved)" != 0 ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
	check "the service counted the process's 512 MiB ($before)" [ "$before" = $((512 * M)) ]
	check "and nothing once it was killed ($(gpu_reserved))" [ "$(gpu_reserved)" = 0 ]
else
	skip "the service's reservations cannot be read here (no gpuschedctl, or its status has no mem_reserved)"
	skip "killed with memory reserved"
fi

# --- the limit changes while the process runs: the GPU's default
if [ "$BACKEND" = kmod ] || [ -n "$GS_CTL" ]; then
	rm -f "$T"/chg.*
	run_bg chg client GS_DOUBLE_MEM=4G "$GS_MEM" alloc 1G info touch "$T/chg.a" \
		wait "$T/chg.b" info alloc 1G alloc 1 touch "$T/chg.c" \
		wait "$T/chg.d" info alloc 1G freeall
	wait_for "$T/chg.a"
	knob mem_default_pct 50
	touch "$T/chg.b"
	wait_for "$T/chg.c"
	knob mem_default_pct 25
	touch "$T/chg.d"
	wait_bg chg || not_ok "client failed"
	knob mem_default_pct 0
	check "no limit at first: the GPU's 4 GiB" [ "$(at chg 2 total)" = $((4 * G)) ]
	check "a default of 50%: cuMemGetInfo says 2 GiB, 1 GiB free" \
		[ "$(at chg 5 total) $(at chg 5 free)" = "$((2 * G)) $G" ]
	check "and the next allocations keep to it" [ "$(at chg 6 r) $(at chg 7 r)" = "0 2" ]
	check "lowered to 25% below what is held: total 1 GiB, none free" \
		[ "$(at chg 10 total) $(at chg 10 free)" = "$G 0" ]
	check "nothing more is allocated" [ "$(at chg 11 r)" = 2 ]
	check "and what was held stays held: freed without error" [ "$(at chg 12 r)" = 0 ]
	show chg
else
	skip "the GPU's knobs cannot be set here (no gpuschedctl)"
fi

# --- the process's own limit set by an administrator while it runs
if [ -n "$GS_CTL" ]; then
	rm -f "$T"/set.*
	run_bg set client GS_DOUBLE_MEM=4G "$GS_MEM" alloc 256M touch "$T/set.a" \
		wait "$T/set.b" info alloc 512M alloc 256M touch "$T/set.c" \
		wait "$T/set.d" alloc 512M info freeall
	wait_for "$T/set.a"
	pid=$(cat "$T/set.pid")
	"$GS_CTL" set client "$pid" mem_limit=512M >"$T/set1.ctl" 2>&1
	touch "$T/set.b"
	wait_for "$T/set.c"
	"$GS_CTL" set client "$pid" mem_limit=1G >"$T/set2.ctl" 2>&1
	touch "$T/set.d"
	wait_bg set || not_ok "client failed"
	check "gpuschedctl set client mem_limit=512M: cuMemGetInfo says 512 MiB, 256 MiB free" \
		[ "$(at set 4 total) $(at set 4 free)" = "$((512 * M)) $((256 * M))" ]
	check "past it refused, within it allocated" [ "$(at set 5 r) $(at set 6 r)" = "2 0" ]
	check "raised to 1 GiB by root: 512 MiB more fit, none left" \
		[ "$(at set 9 r) $(at set 10 total) $(at set 10 free)" = "0 $G 0" ]
	show set set1 set2
else
	skip "no gpuschedctl to set a client's limit with"
fi
# --- the arbiter restarted under a process that only allocates
if [ "$BACKEND" = arbiter ]; then
	rm -f "$T"/rst.*
	run_bg rst client GS_DOUBLE_MEM=4G GPUSCHED_MEM_LIMIT=512M "$GS_MEM" alloc 256M \
		touch "$T/rst.a" wait "$T/rst.b" alloc 1M sleep 1.2 alloc 256M alloc 512M info
	wait_for "$T/rst.a"
	service 20000 200000	# a fresh arbiter on the same socket
	touch "$T/rst.b"
	wait_bg rst || not_ok "client failed"
	check "the allocation that found the arbiter gone went ahead" [ "$(at rst 4 r)" = 0 ]
	check "it said once that the service was lost" \
		[ "$(grep -c 'lost the token service' "$T/rst.err")" = 1 ]
	check "a second later the process is a client again, its limit reapplied" \
		[ "$(at rst 6 r) $(at rst 7 r) $(at rst 8 total)" = "0 2 $((512 * M))" ]
	check "the new arbiter counts what was allocated through it" [ "$(reserved rst)" = $((256 * M)) ]
	show rst
else
	skip "the module cannot go away under a client"
fi
done_testing
