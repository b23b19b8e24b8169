#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# launch-cost.sh [CASE...]: libgpusched's host cost per launch, counted in
# instructions by callgrind, so that a change to the launch path can be
# judged on a shared machine where timings are noise. A client of the CUDA
# test double launches a kernel and synchronises after each (its pace is
# the host's), under the library and callgrind, against a private arbiter,
# with the library's own settings (no GPUSCHED_TUNE). The kernels last
# 200 us: callgrind runs the host some fifty times slower, and with 20 us
# kernels the event the library records after a launch would often have
# completed before it looks at it, which on a GPU it never has; the
# library's work per launch is the same for any length. CASEs:
#   plain  the same client without the library (whole process, per launch)
#   alone  nobody else attached
#   busy   beside a busy normal-class neighbour (20 us kernels back to back)
#   probe  beside a latency-class probe (50 us kernel every 2 ms)
#   latency  a latency-class client (a 200 us kernel every 2 ms, each
#          waited for), beside a busy normal-class neighbour: its launches
#          go beside the holder, each on its request's critical path
# Default: all five. The neighbours run natively. Figures are per launch
# of the measured client (tests/bench/cg-launch-cost.py says what is
# counted). A measurement: it judges nothing, and make check does not run
# it. Environment: LC_SECONDS (the measured run, default 4), LC_WARMUP
# (its first seconds, not counted, default 2), LC_KERNEL_US (default
# 200), LC_KEEP (a directory to keep callgrind's files in, for
# callgrind_annotate).
set -eu

cd "$(dirname "$0")/../.."
root=$(pwd)
command -v valgrind >/dev/null || { echo "launch-cost.sh: valgrind is not installed" >&2; exit 1; }
make -s user
secs=${LC_SECONDS:-4}
warmup=${LC_WARMUP:-2}
kus=${LC_KERNEL_US:-200}
lib=$root/build/libgpusched/libgpusched.so.1
client=$root/build/tests/cuda-double/gs-cuda-client
T=$(mktemp -d "${TMPDIR:-/tmp}/launchcost.XXXXXX")
arb=
nb=
cleanup() {
	[ -n "$nb" ] && kill "$nb" 2>/dev/null && wait "$nb" 2>/dev/null
	[ -n "$arb" ] && kill "$arb" 2>/dev/null && wait "$arb" 2>/dev/null
	[ -n "${LC_KEEP:-}" ] && mkdir -p "$LC_KEEP" && cp "$T"/*.[0-9]*-* "$LC_KEEP"/
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

export LD_LIBRARY_PATH="$root/build/tests/cuda-double${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export GS_DOUBLE_SHM="$T/gpu.shm" GPUSCHED_ARBITER="$T/arbiter.sock" GPUSCHED_BACKEND=arbiter
unset GPUSCHED_WEIGHT GPUSCHED_CLASS GPUSCHED_CAP GPUSCHED_FAIL GPUSCHED_STATS \
	GPUSCHED_LABEL GPUSCHED_MPS GPUSCHED_TUNE GPUSCHED_DEBUG GPUSCHED_MEM_LIMIT

"$root/build/daemon/gpuschedd" --arbiter --socket "$GPUSCHED_ARBITER" 2>"$T/arbiter.log" &
arb=$!
i=0
while ! grep -q 'listening on' "$T/arbiter.log" && [ $i -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done

# measure NAME PRELOAD PERIOD-US [ENV...]: the client under callgrind
# (PRELOAD: the library, or none; PERIOD-US: its --period-us; ENV: its
# environment's additions), one file per thread,
# its counts zeroed after the warm-up, so that what is counted is the
# steady state, not loading, attaching and making events (shared by a
# number of launches that varies with the machine's load). --fair-sched:
# threads take turns in order, so that the counts repeat.
measure() {
	name=$1 pre=$2 period=$3
	shift 3
	valgrind -q --tool=callgrind --fair-sched=yes --separate-threads=yes \
		--trace-children=yes --callgrind-out-file="$T/$name.%p" \
		env ${pre:+LD_PRELOAD=$pre} "$@" "$client" --kernel-us "$kus" \
		--period-us "$period" --seconds "$secs" >"$T/$name.out" 2>&1 &
	m=$!
	sleep "$warmup"
	callgrind_control -z "$m" >/dev/null
	wait "$m"
}

neighbour() {	# neighbour [ENV...] CLIENT ARG...: natively, in the background
	env LD_PRELOAD="$lib" "$@" --seconds $((secs * 3 + 5)) >/dev/null 2>&1 &
	nb=$!
	sleep 0.5
}

stop_neighbour() {
	kill "$nb" 2>/dev/null
	wait "$nb" 2>/dev/null || true
	nb=
}

for c in ${*:-plain alone busy probe latency}; do
	case $c in
	plain)
		measure plain "" 1
		;;
	alone)
		measure alone "$lib" 1
		;;
	busy)
		neighbour "$client" --kernel-us 20
		measure busy "$lib" 1
		stop_neighbour
		;;
	probe)
		neighbour GPUSCHED_CLASS=latency "$client" --kernel-us 50 --period-us 2000
		measure probe "$lib" 1
		stop_neighbour
		;;
	latency)
		neighbour "$client" --kernel-us 20
		measure latency "$lib" 2000 GPUSCHED_CLASS=latency
		stop_neighbour
		;;
	*)
		echo "launch-cost.sh: unknown case $c" >&2
		exit 2
		;;
	esac
	echo "== $c"
	python3 "$root/tests/bench/cg-launch-cost.py" "$T/$c".*-*
done
