#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Bad input: unknown settings, no token service, a stale socket, a service
# that dies mid-run, programs that never use CUDA. The process goes on (or
# fails, with GPUSCHED_FAIL=closed) and says so once.
l=$(dirname "$0")/lib.sh; [ -r "$l" ] || l=/usr/lib/gpusched/lib.sh; . "$l"

count() { grep -c "$1" "$2"; }

service "$(us 10000)" 200000

# --- unknown values: one warning each, defaults used, still scheduled
run_bg env1 client GPUSCHED_CLASS=bogus GPUSCHED_WEIGHT=abc GPUSCHED_FAIL=maybe \
	GPUSCHED_LABEL="two words" \
	GPUSCHED_TUNE="idle_us=-3,latency_predict=sometimes,lead_us=20000,bogus=2,idle_us" \
	"$GS_CLIENT" --seconds 0.5 --threads 3
wait_bg env1; rc=$?
check "unknown GPUSCHED_* values: the program runs (exit $rc)" [ $rc = 0 ]
check "each bad value is named once" sh -c "for k in CLASS WEIGHT FAIL LABEL; do \
	[ \$(grep -c \"GPUSCHED_\$k\" '$T/env1.err') = 1 ] || exit 1; done"
check "each bad GPUSCHED_TUNE entry is named" sh -c "for k in idle_us=-3 latency_predict=sometimes lead_us=20000 bogus=2; do \
	[ \$(grep -c \"GPUSCHED_TUNE: ignoring .\$k.\" '$T/env1.err') = 1 ] || exit 1; done"
check "once each, the one without a value too" \
	[ "$(grep -c 'GPUSCHED_TUNE: ignoring' "$T/env1.err")" = 5 ]
check "and the launches were still gated" grep -q 'gated=[1-9]' "$T/env1.err"
show env1

# --- programs that never touch CUDA see nothing, whatever the settings
GPUSCHED_CLASS=bogus GPUSCHED_DEBUG=1 LD_PRELOAD="$GS_LIB" sh -c 'echo hello; ls / >/dev/null' \
	>"$T/sh.out" 2>"$T/sh.err"
rc=$?
check "a shell under LD_PRELOAD: same output, nothing on stderr" \
	sh -c "[ $rc = 0 ] && [ \"\$(cat '$T/sh.out')\" = hello ] && [ ! -s '$T/sh.err' ]"
if command -v perl >/dev/null 2>&1; then
	# XS modules are found with dlsym on their handles.
	out=$(GPUSCHED_STATS=1 LD_PRELOAD="$GS_LIB" perl -MPOSIX -MList::Util=sum -e 'print floor(sum(1.5, 1))' 2>"$T/perl.err")
	check "perl with XS modules (dlsym) works under the library ($out)" \
		sh -c "[ '$out' = 2 ] && [ ! -s '$T/perl.err' ]"
else
	skip "perl not available"
fi
next=$(find_file "$t_root/build/tests/host/libgs-next.so" /usr/lib/gpusched/libgs-next.so) || next=
if [ -n "$next" ]; then
	out=$(LD_PRELOAD="$GS_LIB $next" id -u 2>&1)
	check "an interposer preloaded after us still gets dlsym(RTLD_NEXT) right ($out)" \
		[ "$out" = "$(id -u)" ]
else
	skip "libgs-next.so not built"
fi

# --- no token service: warn once, run unscheduled (open), or fail (closed)
run_bg none client GPUSCHED_BACKEND=arbiter GPUSCHED_ARBITER="$T/none.sock" \
	"$GS_CLIENT" --seconds 1.5 --threads 2
wait_bg none; rc=$?
check "no service, GPUSCHED_FAIL=open: runs (exit $rc)" [ $rc = 0 ]
check "no service: says so once" [ "$(count 'no token service' "$T/none.err")" = 1 ]
check "no service: launches ran unscheduled" \
	sh -c "grep -q 'unscheduled=[1-9]' '$T/none.err' && grep -q ' gated=0' '$T/none.err'"
show none
run_bg closed client GPUSCHED_BACKEND=arbiter GPUSCHED_ARBITER="$T/none.sock" \
	GPUSCHED_FAIL=closed "$GS_CLIENT" --seconds 0.3
wait_bg closed; rc=$?
check "no service, GPUSCHED_FAIL=closed: launches fail with CUDA_ERROR_NOT_PERMITTED" \
	sh -c "[ $rc = 1 ] && grep -q 'first_error=800' '$T/closed.out' && grep -q 'denied=[1-9]' '$T/closed.err'"
check "closed: says so once" [ "$(count 'no token service' "$T/closed.err")" = 1 ]
show closed

if [ "$BACKEND" != arbiter ] || [ -z "$GS_DAEMON" ]; then
	skip "arbiter checks (backend $BACKEND)"
	done_testing
fi

# --- a live socket is not taken over
"$GS_DAEMON" --arbiter --socket "$GPUSCHED_ARBITER" 2>"$T/second.err"
rc=$?
check "a second arbiter on a live socket refuses (exit $rc)" \
	sh -c "[ $rc != 0 ] && grep -q 'another arbiter is listening' '$T/second.err'"

# --- the arbiter dies mid-run: clients go on and say so once
at=$(start_at)
run_bg die1 client GS_START_AT=$at "$GS_CLIENT" --seconds 2 --kernel-us "$(us 500)"
run_bg die2 client GS_START_AT=$at "$GS_CLIENT" --seconds 2 --kernel-us "$(us 500)"
sleep 2.5
kill -9 "$ARB_PID"
wait "$ARB_PID" 2>/dev/null
ARB_PID=
wait_bg die1; rc1=$?
wait_bg die2; rc2=$?
check "arbiter killed mid-run: both clients finish (exit $rc1 $rc2)" sh -c "[ $rc1 = 0 ] && [ $rc2 = 0 ]"
check "each says once that it lost the service, and nothing more" \
	sh -c "for n in die1 die2; do [ \$(grep -c 'lost the token service' '$T/'\$n.err) = 1 ] && \
		[ \$(grep -vc 'stats' '$T/'\$n.err) = 1 ] || exit 1; done"
show die1 die2

# --- the stale socket it left
check "the killed arbiter left its socket file" [ -S "$GPUSCHED_ARBITER" ]
run_bg stale client "$GS_CLIENT" --seconds 0.3
wait_bg stale; rc=$?
check "a stale socket: the client runs unscheduled and says so once (exit $rc)" \
	sh -c "[ $rc = 0 ] && [ \$(grep -c 'no token service' '$T/stale.err') = 1 ]"
: >"$T/arbiter.log"
service "$(us 10000)" 200000
check "a new arbiter replaces the stale socket" grep -q 'removed the stale socket' "$T/arbiter.log"
run_bg back client "$GS_CLIENT" --seconds 0.3
wait_bg back
check "and clients are scheduled again" grep -q 'gated=[1-9]' "$T/back.err"

# --- a restarted arbiter picks running clients up again
run_bg again client "$GS_CLIENT" --seconds 4 --kernel-us "$(us 500)"
sleep 1
stop_arbiter
sleep 0.5
service "$(us 10000)" 200000
wait_bg again; rc=$?
check "a client outlives an arbiter restart (exit $rc)" [ $rc = 0 ]
check "and says the service is back" grep -q 'is back' "$T/again.err"
show again

# --- gpuschedd rejects bad options
"$GS_DAEMON" --arbiter --timeslice-us abc >/dev/null 2>&1
check "gpuschedd: a bad number is refused with status 2" [ $? = 2 ]
"$GS_DAEMON" --arbiter --timeslice-us 1 --socket "$T/x.sock" >/dev/null 2>&1
check "gpuschedd: a slice out of range is refused with status 2" [ $? = 2 ]
"$GS_DAEMON" --arbiter --no-such-option >/dev/null 2>&1
check "gpuschedd: an unknown option is refused with status 2" [ $? = 2 ]
"$GS_DAEMON" --arbiter --help | grep -q -- '--timeslice-us'
check "gpuschedd --arbiter --help documents the options" [ $? = 0 ]
done_testing
