#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# kernels/h200/run.sh: one command for the borrowed H200 (Ubuntu 24.04,
# CUDA 13, gcc 13). Builds kernels/ with that machine's nvcc, calibrates the
# fixed-work kernel alone, then runs the cases below, each process started
# together at a common wall-clock instant, and prints a table. Everything
# lands under $OUT (the device tool's folder; default ./h200-out):
#   machine.txt   nvidia-smi, driver, kernel, nvcc, gcc
#   build.log     the build
#   calib.json    calibration, runtime API and driver API
#   results.jsonl one JSON line per process per case (label = mode/case/index)
#   run.log       clients' stderr, clocks after each case
#   summary.txt   the table printed at the end
#
# From the repository root:
#   kernels/h200/run.sh
# Environment:
#   GS_CASES        cases to run (default: $GS_DEFAULT_CASES below)
#   GS_MODES        modes, in order (default: "default"); see mode_start
#   GS_SECONDS      run time of each case (default 10)
#   GS_START_DELAY  seconds from launch to the common start (default 4)
#   GS_PREBUILT     a directory of kernels/ programs built elsewhere, used
#                   only if the build here fails
#
# Device tool, e.g.:
#   run(command="kernels/h200/run.sh", timeout_s=300)
set -u -o pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$ROOT/h200-out}
SECS=${GS_SECONDS:-10}
DELAY=${GS_START_DELAY:-4}
GS_DEFAULT_CASES="alone_rt_20 alone_rt_100 alone_drv_100 pair_rt_100 probe_alone probe_hog100"
CASES=${GS_CASES:-$GS_DEFAULT_CASES}
MODES=${GS_MODES:-default}
K=$ROOT/build/kernels
TMP=$(mktemp -d /tmp/gs-h200.XXXXXX)
LOG=$OUT/run.log
RES=$OUT/results.jsonl
NPROC=$(nproc 2>/dev/null || echo 4)

mkdir -p "$OUT"
: > "$LOG"
: > "$RES"
say() { echo "== $*" | tee -a "$LOG"; }

# ---- the machine -----------------------------------------------------------
{
	echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "kernel: $(uname -r)"
	echo "cpus: $NPROC"
	nvidia-smi --query-gpu=name,uuid,driver_version,pci.bus_id,memory.total,compute_mode,persistence_mode,mig.mode.current,clocks.sm,clocks.max.sm,power.limit,temperature.gpu --format=csv
	nvidia-smi
	command -v nvcc && nvcc --version | tail -2
	gcc --version | head -1
	echo "libnl-genl-3: $(ldconfig -p | grep -c 'libnl-genl-3') entries in ldconfig"
} > "$OUT/machine.txt" 2>&1
say "machine: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1)"

# ---- build -------------------------------------------------------------------
: > "$OUT/build.log"
build_ok=0
"$ROOT/kernels/h200/build.sh" "$OUT/build.log" && build_ok=1
if [ $build_ok = 0 ]; then
	if [ -n "${GS_PREBUILT:-}" ] && [ -x "$ROOT/$GS_PREBUILT/gs-runtime-client" ]; then
		say "build FAILED (see build.log); using prebuilt $GS_PREBUILT"
		K=$ROOT/$GS_PREBUILT
	else
		say "build FAILED"; tail -30 "$OUT/build.log"; exit 1
	fi
else
	say "built kernels/ with $(command -v nvcc || echo /usr/local/cuda/bin/nvcc)"
fi

# ---- calibration, alone, plain --------------------------------------------------
say "calibration"
"$K/gs-runtime-client" --calibrate --label calib/runtime > "$OUT/calib.json" 2>> "$LOG" ||
	{ say "calibration FAILED"; tail -5 "$LOG"; exit 1; }
"$K/gs-driver-client" --calibrate --label calib/driver >> "$OUT/calib.json" 2>> "$LOG" ||
	say "driver-API calibration FAILED"
IPU=$(sed -n 's/.*"iters_per_us":\([0-9.]*\).*/\1/p' "$OUT/calib.json" | head -1)
[ -n "$IPU" ] || { say "no iters_per_us in calib.json"; exit 1; }
export GPUSCHED_ITERS_PER_US=$IPU
say "iters_per_us $IPU (runtime-API calibration, used by every client)"

# ---- cases --------------------------------------------------------------------
# A case is a list of process specs, one per word group separated by '|':
# leading VAR=value words go to that process's environment, then the program
# (in build/kernels) and its arguments. Every process gets --seconds $SECS
# (a spec may override it) and a --label mode/case/index.
case_spec() {
	case $1 in
	alone_rt_20)	echo "gs-runtime-client --kernel-us 20" ;;
	alone_rt_100)	echo "gs-runtime-client --kernel-us 100" ;;
	alone_drv_20)	echo "gs-driver-client --kernel-us 20" ;;
	alone_drv_100)	echo "gs-driver-client --kernel-us 100" ;;
	pair_rt_100)	echo "gs-runtime-client --kernel-us 100 | gs-runtime-client --kernel-us 100" ;;
	pair_rt_20)	echo "gs-runtime-client --kernel-us 20 | gs-runtime-client --kernel-us 20" ;;
	pair_drv_100)	echo "gs-driver-client --kernel-us 100 | gs-driver-client --kernel-us 100" ;;
	# Weights only mean something in mode gpusched; as root the arbiter
	# lets a client raise its weight.
	pair_w13)	echo "GPUSCHED_WEIGHT=100 gs-runtime-client --kernel-us 100 | GPUSCHED_WEIGHT=300 gs-runtime-client --kernel-us 100" ;;
	mixed_100_10ms)	echo "gs-runtime-client --kernel-us 100 | gs-runtime-client --kernel-us 10000" ;;
	quad)		echo "gs-runtime-client --kernel-us 50 | gs-runtime-client --kernel-us 500 | gs-runtime-client --kernel-us 5000 | gs-runtime-client --kernel-us 50000" ;;
	quad_w1234)	echo "GPUSCHED_WEIGHT=1 gs-runtime-client --kernel-us 100 | GPUSCHED_WEIGHT=2 gs-runtime-client --kernel-us 100 | GPUSCHED_WEIGHT=3 gs-runtime-client --kernel-us 100 | GPUSCHED_WEIGHT=4 gs-runtime-client --kernel-us 100" ;;
	probe_alone)	echo "gs-probe" ;;
	probe_hog100)	echo "GPUSCHED_CLASS=latency gs-probe | gs-runtime-client --kernel-us 100" ;;
	probe_hog1ms)	echo "GPUSCHED_CLASS=latency gs-probe | gs-runtime-client --kernel-us 1000" ;;
	probe_hog20ms)	echo "GPUSCHED_CLASS=latency gs-probe | gs-runtime-client --kernel-us 20000" ;;
	*) return 1 ;;
	esac
}

WRAP=()		# words put before each client: env VAR=... for the mode

run_case() {	# mode case
	local mode=$1 name=$2 spec start i=0 rc=0 p w prog
	local -a pids=() words env args
	spec=$(case_spec "$name") || { say "unknown case $name"; return 1; }
	start=$(awk -v t="$(date +%s.%N)" -v d="$DELAY" 'BEGIN { printf "%.6f", t + d }')
	IFS='|' read -ra procs <<< "$spec"
	for p in "${procs[@]}"; do
		read -ra words <<< "$p"
		env=(); args=(); prog=
		for w in "${words[@]}"; do
			if [ -z "$prog" ] && [[ $w == *=* ]]; then env+=("$w")
			elif [ -z "$prog" ]; then prog=$w
			else args+=("$w"); fi
		done
		env "${WRAP[@]}" GPUSCHED_START_AT="$start" "${env[@]}" \
			"$K/$prog" --seconds "$SECS" --label "$mode/$name/$i" "${args[@]}" \
			> "$TMP/$i.json" 2> >(sed "s|^|[$mode/$name/$i] |" >> "$LOG") &
		pids+=($!)
		i=$((i + 1))
	done
	for p in "${pids[@]}"; do wait "$p" || rc=1; done
	sleep 0.1	# let the stderr filters finish
	for ((p = 0; p < i; p++)); do
		cat "$TMP/$p.json" >> "$RES"
		rm -f "$TMP/$p.json"
	done
	echo "[$mode/$name] clocks after: $(nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv,noheader 2>&1)" >> "$LOG"
	[ $rc = 0 ] || say "$mode/$name: a client FAILED (see run.log)"
	return $rc
}

# ---- modes --------------------------------------------------------------------
# default   plain processes: the driver's own time-slicing.
# gpusched  every client under LD_PRELOAD=libgpusched.so.1, served by
#           gpuschedd --arbiter --socket /tmp/gs.sock.
#           The module cannot load on this machine (modules_disabled=1).
# mps       MPS in a private pipe directory, stopped at the end (design.md).
#           Not yet run on the device.
GS_ARB_PID=
mode_start() {
	WRAP=()
	case $1 in
	default) ;;
	gpusched)
		# The library and the arbiter: built here unless GS_LIB_PREBUILT
		# says they were carried in build/ (the arbiter's netlink half
		# needs libnl-genl-3, which this machine may lack; carried copies
		# of its libraries go in build/devlibs).
		if [ -z "${GS_LIB_PREBUILT:-}" ]; then
			make -C "$ROOT" -j"$NPROC" WERROR= build/libgpusched/libgpusched.so.1 \
				build/daemon/gpuschedd >> "$OUT/build.log" 2>&1 ||
				{ say "gpusched: build failed (build.log); mode skipped"; return 1; }
		fi
		rm -f /tmp/gs.sock
		LD_LIBRARY_PATH="$ROOT/build/devlibs" "$ROOT/build/daemon/gpuschedd" \
			--arbiter --socket /tmp/gs.sock >> "$LOG" 2>&1 &
		GS_ARB_PID=$!
		for _ in $(seq 50); do [ -S /tmp/gs.sock ] && break; sleep 0.1; done
		[ -S /tmp/gs.sock ] || { say "gpusched: arbiter did not come up"; mode_stop gpusched; return 1; }
		WRAP=(LD_PRELOAD="$ROOT/build/libgpusched/libgpusched.so.1"
		      GPUSCHED_BACKEND=arbiter GPUSCHED_ARBITER=/tmp/gs.sock
		      GPUSCHED_DEBUG=stats)
		;;
	mps)
		command -v nvidia-cuda-mps-control > /dev/null ||
			{ say "mps: nvidia-cuda-mps-control not found; mode skipped"; return 1; }
		export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps CUDA_MPS_LOG_DIRECTORY=/tmp/mpslog
		mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
		nvidia-cuda-mps-control -d || { say "mps: start failed"; return 1; }
		;;
	*) say "unknown mode $1"; return 1 ;;
	esac
}

mode_stop() {
	case $1 in
	gpusched)
		if [ -n "$GS_ARB_PID" ]; then
			kill "$GS_ARB_PID" 2> /dev/null
			wait "$GS_ARB_PID" 2> /dev/null
			GS_ARB_PID=
		fi
		;;
	mps)
		echo quit | nvidia-cuda-mps-control
		sleep 1
		unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
		;;
	esac
	WRAP=()
}

for mode in $MODES; do
	mode_start "$mode" || continue
	for c in $CASES; do
		say "$mode/$c"
		run_case "$mode" "$c"
	done
	mode_stop "$mode"
done
rm -rf "$TMP"

# ---- table --------------------------------------------------------------------
if command -v python3 > /dev/null; then
	python3 "$ROOT/kernels/h200/summarize.py" "$OUT/calib.json" "$RES" | tee "$OUT/summary.txt"
else
	cat "$OUT/calib.json" "$RES" | tee "$OUT/summary.txt"
fi
