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
	GPUSCHED_TUNE="idle_us=-3,latency_predict=sometimes,spin_us=20000,bogus=2,idle_us" \
	"$GS_CLIENT" --seconds 0.5 --threads 3
wait_bg env1; rc=$?
check "unknown GPUSCHED_* values: the program runs (exit $rc)" [ $rc = 0 ]
check "each bad value is named once" sh -c "for k in CLASS WEIGHT FAIL LABEL; do \
	[ \$(grep -c \"GPUSCHED_\$k\" '$T/env1.err') = 1 ] || exit 1; done"
check "each bad GPUSCHED_TUNE entry is named" sh -c "for k in idle_us=-3 latency_predict=sometimes spin_us=20000 bogus=2; do \
	[ \$(grep -c \"GPUSCHED_TUNE: ignoring .\$k.\" '$T/env1.err') = 1 ] || exit 1; done"
check "once each, the one without a value too" \
	[ "$(grep -c 'GPUSCHED_TUNE: ignoring' "$T/env1.err")" = 5 ]
check "and the launches were still gated" grep -q 'gated=[1-9]' "$T/env1.err"
show env1

# --- GPUSCHED_DEBUG: a list of log, stats and all; 1 is log, 0 is off
debug_run() {	# debug_run NAME VALUE [VAR=VALUE...]: a client with GPUSCHED_DEBUG=VALUE
	dr_name=$1 dr_value=$2
	shift 2
	client GPUSCHED_DEBUG="$dr_value" "$@" "$GS_CLIENT" --seconds 0.1 \
		>"$T/$dr_name.out" 2>"$T/$dr_name.err" || echo "# $dr_name: exit $?"
}
# says NAME LOG STATS: NAME's stderr has the log lines (the attach) if LOG
# is 1, else none, and the counters if STATS is 1, else none.
says() {
	sy_log=0 sy_stats=0
	grep -q 'attached to' "$T/$1.err" && sy_log=1
	grep -q ': stats launches=[1-9]' "$T/$1.err" && sy_stats=1
	[ "$sy_log $sy_stats" = "$2 $3" ] && return 0
	echo "# $1: log lines $sy_log, counters $sy_stats"
	return 1
}
# others NAME: NAME's stderr lines other than the counters.
others() { grep -v ': stats ' "$T/$1.err"; }
# pid NAME: NAME's process id, as its client printed it.
pid() { value pid "$T/$1.out"; }
debug_run d_log log
check "GPUSCHED_DEBUG=log: the log lines, no counters" says d_log 1 0
debug_run d_stats stats
check "GPUSCHED_DEBUG=stats: the counters, no log lines" says d_stats 0 1
debug_run d_both log,stats
check "GPUSCHED_DEBUG=log,stats: both" says d_both 1 1
debug_run d_all all
check "GPUSCHED_DEBUG=all: both" says d_all 1 1
debug_run d_one 1
check "GPUSCHED_DEBUG=1 is log" says d_one 1 0
debug_run d_zero 0
check "GPUSCHED_DEBUG=0: nothing on stderr" [ ! -s "$T/d_zero.err" ]
debug_run d_empty ""
check "GPUSCHED_DEBUG empty: nothing on stderr" [ ! -s "$T/d_empty.err" ]
debug_run d_bad stats,bogus,log
check "an unknown word is ignored, the others kept" says d_bad 1 1
check "and named once" [ "$(grep -c 'GPUSCHED_DEBUG: ignoring "bogus" (not log, stats, all, 1 or 0)' \
	"$T/d_bad.err")" = 1 ]
check "in the only line about the settings" [ "$(grep -c GPUSCHED_ "$T/d_bad.err")" = 1 ]
show d_bad
# The counters' own variable before GPUSCHED_DEBUG took them, still read.
debug_run d_alias "" GPUSCHED_STATS=1
check "deprecated GPUSCHED_STATS=1: the counters, no log lines" says d_alias 0 1
check "and says once that it is deprecated, and nothing more" [ "$(others d_alias)" = \
	"gpusched[$(pid d_alias)]: GPUSCHED_STATS is deprecated; use GPUSCHED_DEBUG=stats" ]
debug_run d_alias_log log GPUSCHED_STATS=1
check "GPUSCHED_STATS=1 beside GPUSCHED_DEBUG=log: both" says d_alias_log 1 1
debug_run d_alias_off "" GPUSCHED_STATS=0
check "GPUSCHED_STATS=0: no counters, the deprecation alone" [ "$(cat "$T/d_alias_off.err")" = \
	"gpusched[$(pid d_alias_off)]: GPUSCHED_STATS is deprecated; use GPUSCHED_DEBUG=stats" ]
show d_alias

# --- programs that never touch CUDA see nothing, whatever the settings
GPUSCHED_CLASS=bogus GPUSCHED_DEBUG=all,bogus GPUSCHED_STATS=1 LD_PRELOAD="$GS_LIB" \
	sh -c 'echo hello; ls / >/dev/null' >"$T/sh.out" 2>"$T/sh.err"
rc=$?
check "a shell under LD_PRELOAD: same output, nothing on stderr" \
	sh -c "[ $rc = 0 ] && [ \"\$(cat '$T/sh.out')\" = hello ] && [ ! -s '$T/sh.err' ]"
if command -v perl >/dev/null 2>&1; then
	# XS modules are found with dlsym on their handles.
	out=$(GPUSCHED_DEBUG=all LD_PRELOAD="$GS_LIB" perl -MPOSIX -MList::Util=sum -e 'print floor(sum(1.5, 1))' 2>"$T/perl.err")
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
# Mid-run: a second after their common start (0.5 to 1.5 s from now), not
# a fixed time from here, which could fall after their last launch.
sleep "$(awk -v a="$at" -v n="$(date +%s%N)" \
	'BEGIN { d = (a + 1e9 - n) / 1e9; if (d < 0) d = 0; printf "%.3f", d }')"
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
