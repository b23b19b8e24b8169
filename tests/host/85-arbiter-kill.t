#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The arbiter killed under load: six clients (four GPUSCHED_FAIL=open,
# two closed) launch through `gpuschedd --arbiter` while it is SIGKILLed
# at random moments and started again on the same socket path,
# GS_ARBKILL_KILLS times (default 20). After each restart two new clients
# run on a modelled GPU of their own and must be scheduled by the new
# arbiter, without overlap. At the end every long client must have come
# back to the last arbiter, and then nobody overlaps any more.
#
# What is legitimate while the service is down, and so not checked: the
# open clients run unscheduled, on top of each other and of the holder
# the dead arbiter had, until each finds the new arbiter (it retries once
# a second); so the long clients' modelled GPU counts overlaps until all
# of them are back.
l=$(dirname "$0")/lib.sh; [ -r "$l" ] || l=/usr/lib/gpusched/lib.sh; . "$l"

if [ "$BACKEND" != arbiter ]; then
	skip "the arbiter storm (backend $BACKEND)"
	done_testing
fi

KILLS=${GS_ARBKILL_KILLS:-20}
SEED=${GS_ARBKILL_SEED:-$(date +%s)}
echo "# seed $SEED (GS_ARBKILL_SEED), $KILLS kills (GS_ARBKILL_KILLS)"
# Per kill: how long the arbiter lives after its new clients finished,
# and how long it stays dead (seconds).
moments=$(awk -v s="$SEED" -v n="$KILLS" 'BEGIN { srand(s)
	for (i = 0; i < n; i++) printf "%.2f:%.2f ", rand() * 0.3, 0.1 + rand() * 0.2 }')

count() { grep -c "$1" "$2"; }

# overlaps FILE: the violations of the modelled GPU in the double's FILE.
overlaps() {
	"$GS_CLIENT" --report "$1" | awk '$1 == "gpu=0" { sub("violations=", "", $2); print $2 }'
}

# alive PID: running, not a zombie waiting for us.
alive() {
	st=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -c1)
	[ -n "$st" ] && [ "$st" != Z ]
}

# wait_bounded NAME SECONDS: its exit status, or 124 after killing it
# if it was still there after SECONDS (a hang).
wait_bounded() {
	pid=$(cat "$T/$1.pid")
	i=0
	while alive "$pid" && [ $i -lt $(($2 * 10)) ]; do
		sleep 0.1
		i=$((i + 1))
	done
	if alive "$pid"; then
		kill -9 "$pid"
		wait "$pid"
		rm -f "$T/$1.pid"
		return 124
	fi
	wait_bg "$1"
}

# Slices of 10 ms, and a grace so long that no revocation is expected:
# every overlap of scheduled clients is then a fault. The long clients'
# kernels take 2 ms, which keeps their CPU time low on a small host.
service "$(us 10000)" 2000000
t_begin=$(date +%s)

# They stop when told to (SIGUSR1); their own limit is only a backstop.
life=$((60 + 5 * KILLS))
LONG_OPEN="o1 o2 o3 o4"
LONG_CLOSED="c1 c2"
for n in $LONG_OPEN; do
	run_bg "$n" client GS_DOUBLE_SHM="$T/long.shm" "$GS_CLIENT" --seconds $life \
		--kernel-us "$(us 2000)" --keep-going
done
for n in $LONG_CLOSED; do
	run_bg "$n" client GS_DOUBLE_SHM="$T/long.shm" GPUSCHED_FAIL=closed "$GS_CLIENT" \
		--seconds $life --kernel-us "$(us 2000)" --keep-going
done
sleep 1

k=0
arb_bad=0	# kills that found the arbiter already gone
gen_bad=	# generations whose new clients failed a check
gen_launches=0
for m in $moments; do
	k=$((k + 1))
	# New clients of this arbiter: scheduled, and never together.
	for p in a b; do
		run_bg "g$k$p" client GS_DOUBLE_SHM="$T/gen$k.shm" "$GS_CLIENT" \
			--seconds 0.3 --kernel-us "$(us 500)"
	done
	for p in a b; do
		wait_bounded "g$k$p" 20
		rc=$?
		e="$T/g$k$p.err"
		if [ $rc != 0 ] || ! grep -q 'gated=[1-9]' "$e" ||
			grep -q 'token service' "$e"; then
			gen_bad="$gen_bad $k$p(exit $rc)"
			show "g$k$p"
		fi
		gen_launches=$((gen_launches + $(value launches "$T/g$k$p.out")))
	done
	v=$(overlaps "$T/gen$k.shm")
	[ "$v" = 0 ] || gen_bad="$gen_bad $k(overlap $v)"

	sleep "${m%:*}"
	kill -9 "$ARB_PID"
	wait "$ARB_PID" 2>/dev/null
	[ $? = 137 ] || arb_bad=$((arb_bad + 1))
	ARB_PID=
	sleep "${m#*:}"
	# Counted now: no arbiter, so no client can be back before the
	# last start.
	if [ $k = "$KILLS" ]; then
		for n in $LONG_OPEN $LONG_CLOSED; do
			eval "back_$n=$(count 'is back' "$T/$n.err")"
		done
	fi
	service "$(us 10000)" 2000000
done
check "the arbiter was alive at each of the $KILLS kills ($arb_bad had exited)" [ $arb_bad = 0 ]
check "it started cleanly each time: $((KILLS + 1)) starts, the stale socket replaced $KILLS times, no complaint" \
	sh -c "[ \$(grep -c 'listening on' '$T/arbiter.log') = $((KILLS + 1)) ] &&
		[ \$(grep -c 'removed the stale socket' '$T/arbiter.log') = $KILLS ] &&
		! grep -Eiq 'error|cannot|fail|refus' '$T/arbiter.log'"
check "after each restart, new clients were scheduled and never overlapped ($((2 * KILLS)) clients, $gen_launches launches${gen_bad:+; failed:$gen_bad})" \
	[ -z "$gen_bad" ]

# Every long client finds the last arbiter (each retries once a second).
all_back() {
	for n in $LONG_OPEN $LONG_CLOSED; do
		eval "b=\$back_$n"
		[ "$(count 'is back' "$T/$n.err")" -gt "$b" ] || return 1
	done
}
i=0
while ! all_back && [ $i -lt 150 ]; do
	sleep 0.1
	i=$((i + 1))
done
check "every long client came back to the last arbiter" all_back
# Then their unscheduled work drains, and from there on they are
# scheduled: their modelled GPU counts no new overlap.
sleep 1
v1=$(overlaps "$T/long.shm")
sleep 2
v2=$(overlaps "$T/long.shm")
check "and once all are back, no new overlap among them ($v1 overlaps before, $v2 after 2 s)" \
	[ "$v1" = "$v2" ]

for n in $LONG_OPEN $LONG_CLOSED; do
	kill -USR1 "$(cat "$T/$n.pid")"
done
hung=
for n in $LONG_OPEN $LONG_CLOSED; do
	wait_bounded "$n" 20
	eval "rc_$n=$?"
	eval "[ \$rc_$n = 124 ] && hung=\"\$hung $n\""
done
check "nobody hangs: every long client exited within 20 s of being told to stop${hung:+ (hung:$hung)}" \
	[ -z "$hung" ]

# Their stderr: the loss said once, each return, the closing stats; nothing else.
only_expected() {
	[ "$(count 'lost the token service' "$1")" = 1 ] &&
		[ "$(count 'is back' "$1")" -ge 1 ] &&
		[ "$(grep -v 'lost the token service' "$1" | grep -v 'is back' |
			grep -vc ' stats ')" = 0 ]
}
unsched=0
for n in $LONG_OPEN; do
	eval "rc=\$rc_$n"
	e="$T/$n.err"
	u=$(sed -n 's/.* unscheduled=\([0-9]*\) .*/\1/p' "$e")
	unsched=$((unsched + ${u:-0}))
	if [ "$rc" = 0 ] && [ "${u:-0}" -gt 0 ] && grep -q 'gated=[1-9]' "$e" &&
		only_expected "$e"; then
		ok "open client $n: exit 0, said once that it lost the service and nothing else, came back $(count 'is back' "$e") times, ran $u launches unscheduled"
	else
		not_ok "open client $n: exit $rc, ${u:-no} launches unscheduled, or its messages"
		show "$n"
	fi
done
for n in $LONG_CLOSED; do
	eval "rc=\$rc_$n"
	e="$T/$n.err"
	d=$(sed -n 's/.* denied=\([0-9]*\) .*/\1/p' "$e")
	if [ "$rc" = 1 ] && grep -q 'first_error=800' "$T/$n.out" &&
		[ "${d:-0}" -gt 0 ] && grep -q 'gated=[1-9]' "$e" && only_expected "$e"; then
		ok "closed client $n: $d launches failed with CUDA_ERROR_NOT_PERMITTED while the service was gone (exit 1), said so once and nothing else, came back $(count 'is back' "$e") times"
	else
		not_ok "closed client $n: exit $rc, ${d:-no} denied launches, or its messages"
		show "$n"
	fi
done
echo "# $KILLS kills in $(($(date +%s) - t_begin)) s; $unsched launches ran unscheduled while the arbiter was down"
done_testing
