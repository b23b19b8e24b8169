# SPDX-License-Identifier: GPL-2.0
#
# Shared by the library tests (tests/host/*.t), sourced. POSIX sh, so the
# same tests run on the host against the arbiter and in the VM (busybox)
# against gpusched.ko. They print TAP and exit non-zero on failure.
#
# Backend: /dev/gpusched when it exists, else a private arbiter started per
# test; GS_TEST_BACKEND=arbiter|kmod forces one.

set -u

t_n=0
t_failed=0
ok() { t_n=$((t_n + 1)); echo "ok $t_n - $*"; }
not_ok() { t_n=$((t_n + 1)); t_failed=$((t_failed + 1)); echo "not ok $t_n - $*"; }
skip() { t_n=$((t_n + 1)); echo "ok $t_n - # SKIP $*"; }
diag() { sed 's/^/# /' "$@"; }
check() {	# check DESCRIPTION COMMAND...: one simple command
	d=$1
	shift
	# In `check D [ A ] && [ B ]` only [ A ] is check's: the shell runs
	# [ B ] after check returns and drops its result. tests/unit/lint-checks.t
	# finds those; here, a first word that "$@" cannot run as one command
	# (a keyword, or a line of shell in one string) fails the check.
	case ${1-} in
	'' | '!' | '{' | '[[' | if | while | until | case | for | \
	*'&&'* | *'||'* | *';'* | '[ '* | 'test '*)
		not_ok "$d"
		echo "# check: '${1-}' is not one command: write test A -a B, a function, or two checks"
		return 0
		;;
	esac
	if "$@"; then ok "$d"; else not_ok "$d"; fi
}
done_testing() {
	echo "1..$t_n"
	[ "$t_failed" -eq 0 ]
	exit $?
}
bail() { echo "Bail out! $*"; exit 1; }

# --- where things are: the build tree, else the VM's layout.
t_here=$(cd "$(dirname "$0")" && pwd)
t_root=$(cd "$t_here/../.." 2>/dev/null && pwd)
find_file() {	# first existing of the arguments
	for f in "$@"; do
		[ -e "$f" ] && { echo "$f"; return 0; }
	done
	return 1
}
GS_LIB=${GS_LIB:-$(find_file "$t_root/build/libgpusched/libgpusched.so.1" \
	/usr/lib/gpusched/libgpusched.so.1)} || bail "libgpusched.so.1 not built (make user)"
GS_CLIENT=${GS_CLIENT:-$(find_file "$t_root/build/tests/cuda-double/gs-cuda-client" \
	/usr/lib/gpusched/cuda-double/gs-cuda-client)} || bail "gs-cuda-client not built"
GS_DOUBLE_DIR=$(dirname "$GS_CLIENT")
GS_MEM=${GS_MEM:-$(find_file "$GS_DOUBLE_DIR/gs-mem-client")} || GS_MEM=
GS_DAEMON=${GS_DAEMON:-$(find_file "$t_root/build/daemon/gpuschedd" \
	/usr/lib/gpusched/gpuschedd)} || GS_DAEMON=
GS_TOKEN_TEST=${GS_TOKEN_TEST:-$(find_file "$t_root/build/tests/host/gs-token-test" \
	/usr/lib/gpusched/gs-token-test)} || GS_TOKEN_TEST=
GS_RUN=${GS_RUN:-$(find_file "$t_root/build/daemon/gpusched-run" \
	/usr/lib/gpusched/gpusched-run)} || GS_RUN=
# gpuschedctl: the module's when loaded, else the arbiter at $GPUSCHED_ARBITER.
GS_CTL=${GS_CTL:-$(find_file "$t_root/build/daemon/gpuschedctl" \
	/usr/bin/gpuschedctl)} || GS_CTL=

if [ -n "${GS_TEST_BACKEND:-}" ]; then
	BACKEND=$GS_TEST_BACKEND
elif [ -c /dev/gpusched ]; then
	BACKEND=kmod
else
	BACKEND=arbiter
fi
[ "$BACKEND" = arbiter ] && [ -z "$GS_DAEMON" ] && bail "gpuschedd not built"

# Kernel lengths and slices are multiplied by GS_TEST_SCALE: the module's
# runs are in an emulated VM (TCG), where a launch costs ~10x the CPU time,
# and shares measure the scheduler only when launching is cheap next to
# the kernels.
if [ -z "${GS_TEST_SCALE:-}" ]; then
	GS_TEST_SCALE=1
	[ "$BACKEND" = kmod ] && GS_TEST_SCALE=10
fi
us() { echo $(( $1 * GS_TEST_SCALE )); }

T=$(mktemp -d "${TMPDIR:-/tmp}/gstest.XXXXXX") || bail "mktemp"
chmod 0755 "$T"	# unprivileged clients reach the socket too
ARB_PID=
cleanup() {
	[ -n "$ARB_PID" ] && kill "$ARB_PID" 2>/dev/null && wait "$ARB_PID" 2>/dev/null
	# Processes a failed test left behind: only ours, by pid file.
	for f in "$T"/*.pid; do
		[ -f "$f" ] && kill -9 "$(cat "$f")" 2>/dev/null
	done
	# The module's knobs a test changed (knob()), as they were.
	for f in "$T"/knob.*; do
		[ -f "$f" ] && cat "$f" >"$(kmod_gpu_dir 0)/${f##*/knob.}" 2>/dev/null
	done
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# Every client: the double as libcuda, a private modelled GPU, the library.
export GS_DOUBLE_SHM="$T/gpu.shm"
export LD_LIBRARY_PATH="$GS_DOUBLE_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export GPUSCHED_ARBITER="$T/arbiter.sock"
export GPUSCHED_BACKEND="$BACKEND"
unset GPUSCHED_WEIGHT GPUSCHED_CLASS GPUSCHED_CAP GPUSCHED_FAIL GPUSCHED_STATS \
	GPUSCHED_LABEL GPUSCHED_MPS CUDA_MPS_CLIENT_PRIORITY GS_START_AT \
	GPUSCHED_MEM_LIMIT GS_DOUBLE_MEM
# Every client prints its counters at exit; a test that wants the log
# lines too sets GPUSCHED_DEBUG=log,stats.
export GPUSCHED_DEBUG=stats
# The tests check that two processes never have work on the GPU at once:
# no early hand-over (55-lib-handover.t tests that on its own). Tests add
# to GPUSCHED_TUNE (the library's internal constants, libgpusched/tune.h):
# GPUSCHED_TUNE="$GPUSCHED_TUNE,name=value"; later entries win. Nor does a
# latency-class client launch beside the holder (66-lib-long.t tests that).
export GPUSCHED_TUNE=handover_us=0,beside=0

# "client" as the first word of run_bg/run_fg: under the library.
client() {
	env LD_PRELOAD="$GS_LIB" "$@"
}

# arbiter_start LOG ARG...: gpuschedd --arbiter on $GPUSCHED_ARBITER with
# the ARGs, its standard error appended to LOG, its pid in ARB_PID
# (stop_arbiter stops it); under `ulimit -n $AS_NOFILE` (soft and hard)
# where that is set. True once it says it listens, within 10 s: a stale
# socket file may be there before it is, and LOG may hold an earlier
# run's lines.
arbiter_start() {
	as_log=$1
	shift
	# The log exists before the daemon starts: the background job opens
	# it in its own time, and a grep that found no file would count
	# nothing, unlike the 0 before, and end the wait at once.
	: >>"$as_log"
	as_before=$(grep -c 'listening on' "$as_log")
	# shellcheck disable=SC2016 # expanded by the inner shell
	sh -c '[ -z "$0" ] || ulimit -n "$0" || exit; exec "$@"' "${AS_NOFILE:-}" \
		"$GS_DAEMON" --arbiter --socket "$GPUSCHED_ARBITER" "$@" 2>>"$as_log" &
	ARB_PID=$!
	as_i=0
	while [ "$(grep -c 'listening on' "$as_log")" = "${as_before:-0}" ] &&
		kill -0 "$ARB_PID" 2>/dev/null && [ $as_i -lt 200 ]; do
		sleep 0.05
		as_i=$((as_i + 1))
	done
	[ "$(grep -c 'listening on' "$as_log")" != "${as_before:-0}" ]
}

# free_port: a TCP port on 127.0.0.1 that nothing listens on now.
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# The token service, with a time slice and grace (microseconds). The
# arbiter is started afresh, with the options in $GS_ARB_ARGS too; the
# module's token is set through sysfs (a token exists once a client
# attached, and keeps its knobs until the module is unloaded, so every
# test sets them).
service() {
	slice=$1
	grace=$2
	if [ "$BACKEND" = arbiter ]; then
		stop_arbiter
		# shellcheck disable=SC2086 # options, word by word
		if ! arbiter_start "$T/arbiter.log" --timeslice-us "$slice" \
			--grace-us "$grace" ${GS_ARB_ARGS:-}; then
			# How it ended tells a crash from a kill from a hang.
			if kill -0 "$ARB_PID" 2>/dev/null; then
				how="still running after 10 s"
				# Not left behind holding the test's output open.
				kill "$ARB_PID" 2>/dev/null
				wait "$ARB_PID" 2>/dev/null
			else
				wait "$ARB_PID"
				how="exit status $?"
			fi
			ARB_PID=
			bail "gpuschedd --arbiter did not start ($how): $(cat "$T/arbiter.log")"
		fi
	else
		for gpu in ${GS_GPUS:-0}; do
			GPUSCHED_DEBUG=0 GS_DOUBLE_GPUS=${GS_DOUBLE_GPUS:-1} \
				CUDA_VISIBLE_DEVICES=$gpu client "$GS_CLIENT" \
				--seconds 0.01 >/dev/null 2>&1 || bail "cannot attach to the module"
			dir=$(kmod_gpu_dir "$gpu") || bail "no sysfs directory for GPU $gpu"
			echo "$slice" >"$dir/timeslice_us" && echo "$grace" >"$dir/grace_us" ||
				bail "cannot set $dir knobs"
		done
	fi
}

# arb_ticks: user + system CPU ticks of the arbiter so far.
arb_ticks() {
	awk '{ print $14 + $15 }' "/proc/$ARB_PID/stat"
}

# ticks_s T0 T1: the seconds between two arb_ticks readings.
ticks_s() {
	awk -v a="$1" -v b="$2" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.2f", (b - a) / hz }'
}

stop_arbiter() {
	if [ -n "$ARB_PID" ]; then
		kill "$ARB_PID" 2>/dev/null
		wait "$ARB_PID" 2>/dev/null
		ARB_PID=
	fi
}

# The sysfs directory of the token of the double's physical GPU N.
kmod_gpu_dir() {
	want=$(printf '67732d646f75626c652d6770750000%02x' $(( $1 + 1 )))
	for d in /sys/kernel/gpusched/gpu*; do
		u=$(sed 's/^GPU-//; s/-//g' "$d/uuid" 2>/dev/null | tr 'A-F' 'a-f')
		[ "$u" = "$want" ] && { echo "$d"; return 0; }
	done
	return 1
}

# knob NAME VALUE: a knob of the double's GPU 0's token, through the
# module's sysfs file or `gpuschedctl set gpu`; fails where neither can.
# The module outlives the test: its value before the test's first change
# is put back at exit.
knob() {
	if [ "$BACKEND" = kmod ]; then
		k_dir=$(kmod_gpu_dir 0) || return 1
		[ -e "$T/knob.$1" ] || cat "$k_dir/$1" >"$T/knob.$1" || return 1
		echo "$2" >"$k_dir/$1"
	else
		[ -n "$GS_CTL" ] && "$GS_CTL" set gpu 0 "$1=$2" >/dev/null
	fi
}

# A start instant 1 to 2 s ahead, so that clients started one after the other
# begin together (CLOCK_REALTIME ns).
start_at() {
	echo $(( $(date +%s) * 1000000000 + 1500000000 ))
}

# has_kv FILE KEY=VALUE...: each pair is a word of FILE.
has_kv() {
	hk_file=$1
	shift
	for kv in "$@"; do
		grep -q "\(^\| \)$kv\( \|$\)" "$hk_file" || return 1
	done
}

# value KEY FILE: the value of KEY=value on the first line that has it
# (FILE - for standard input).
value() {
	awk -v k="$1" '{ for (i = 1; i <= NF; i++) { n = index($i, "=");
		if (n && substr($i, 1, n - 1) == k) { print substr($i, n + 1); exit } } }' "$2"
}
# stat_pct NAME PCT FILE: a percentile (50, 90, 99) of the counters'
# "stats NAME_us" line; stat_p50 NAME FILE: its median.
stat_pct() {
	sed -n "s/.*stats $1_us .*p$2=\([0-9]*\).*/\1/p" "$3" | head -1
}
stat_p50() { stat_pct "$1" 50 "$2"; }

# double_count KEY [GPU]: one of the double's shared counters of a GPU.
double_count() {
	"$GS_CLIENT" --report "$GS_DOUBLE_SHM" | grep "^gpu=${2:-0} " | value "$1" -
}

# violations [GPU]: kernels that started while another process's ran.
violations() { double_count violations "$@"; }

# overlap_max [GPU]: the most of the old holder's queued work left when
# another process's kernel started (microseconds).
overlap_max() { double_count overlap_max_us "$@"; }

# Float comparisons (within, above, below), shared with tests/unit/bench.t.
t_cmp=$(find_file "$t_here/compare.sh" /usr/lib/gpusched/compare.sh) ||
	bail "compare.sh not found"
. "$t_cmp"

# run_bg NAME CMD...: in the background, output in $T/NAME.out/.err, pid in
# $T/NAME.pid.
run_bg() {
	name=$1
	shift
	# Not through the function: $! must be the client's own pid (env
	# execs it), so that kill reaches it.
	[ "$1" = client ] && { shift; set -- env LD_PRELOAD="$GS_LIB" "$@"; }
	"$@" >"$T/$name.out" 2>"$T/$name.err" &
	echo $! >"$T/$name.pid"
}

# wait_bg NAME: its exit status.
wait_bg() {
	wait "$(cat "$T/$1.pid")"
	rc=$?
	rm -f "$T/$1.pid"
	return $rc
}

show() {	# show NAME...: outputs as diagnostics
	for n in "$@"; do
		[ -s "$T/$n.out" ] && diag "$T/$n.out"
		[ -s "$T/$n.err" ] && diag "$T/$n.err"
	done
	return 0
}

# wait_for FILE: until it exists (at most 30 s); false if it never does.
wait_for() {
	wf_i=0
	while [ ! -e "$1" ] && [ $wf_i -lt 600 ]; do sleep 0.05; wf_i=$((wf_i + 1)); done
	[ -e "$1" ]
}

# --- the memory tests' client (tests/cuda-double/gs-mem-client, $GS_MEM)
# mem NAME [VAR=VALUE...] -- OP...: gs-mem-client under the library, its
# output in $T/NAME.out and .err.
mem() {
	name=$1
	shift
	vars=
	while [ "$1" != -- ]; do
		vars="$vars $1"
		shift
	done
	shift
	# shellcheck disable=SC2086 # VAR=VALUE words
	client $vars "$GS_MEM" "$@" >"$T/$name.out" 2>"$T/$name.err"
}
# at NAME N KEY: KEY of the Nth operation's line of NAME's output.
at() { sed -n "$2p" "$T/$1.out" | value "$3" -; }
# reserved NAME / limit NAME: the service's account of NAME at its exit
# (the library's counters line, GPUSCHED_DEBUG=stats).
reserved() { sed -n 's/.*stats memory GPU-[^:]*: reserved=\([0-9]*\) .*/\1/p' "$T/$1.err"; }
limit() { sed -n 's/.*stats memory GPU-[^:]*: .*limit=\([0-9]*\).*/\1/p' "$T/$1.err"; }

# busy_and_probe KERNEL_US PERIOD_US [VAR=VALUE...]: a busy client of
# KERNEL_US kernels with the VARs in its environment and, started with it,
# a latency-class probe of 50 us kernels every PERIOD_US (both scaled by
# the caller), each for $secs; outputs in $T/busy.* and $T/probe.*. What
# both should see, export before; the probe's own VAR=VALUEs: $BP_PROBE;
# more options of the busy client: $BP_BUSY.
busy_and_probe() {
	bp_kern=$1 bp_per=$2
	shift 2
	rm -f "$GS_DOUBLE_SHM"
	bp_at=$(start_at)
	# shellcheck disable=SC2086
	run_bg busy client GS_START_AT="$bp_at" "$@" \
		"$GS_CLIENT" --seconds "$secs" --kernel-us "$bp_kern" ${BP_BUSY:-}
	# shellcheck disable=SC2086
	run_bg probe client GS_START_AT="$bp_at" GPUSCHED_CLASS=latency \
		${BP_PROBE:-} "$GS_CLIENT" --seconds "$secs" --kernel-us "$(us 50)" \
		--period-us "$bp_per"
	wait_bg busy && wait_bg probe || not_ok "clients failed"
}

# The probe's figures of the last busy_and_probe, on one line: its waits
# (latency_*) and what its requests found queued ahead of them (ahead_*).
probe_figures() {
	grep -h '^latency_\|^ahead_' "$T/probe.out" | tr '\n' ' '
}

echo "# backend: $BACKEND"
