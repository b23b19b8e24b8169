#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# kernels/h200/tune.sh: the library's knobs swept on the borrowed H200 in one
# command, each setting a separate gpusched-bench run of one scenario.
# GS_SECONDS overrides the run time, GS_KEEP_TRACES=1 keeps the traces.
# Builds kernels/ there like bench.sh (the library and the arbiter come
# prebuilt in build/). Each line of $GS_TUNE (default: the list below) is
#
#   NAME SCENARIO MODES [VAR=VALUE...]
#
# and runs `gpusched-bench --modes MODES SCENARIO` with VAR=VALUE in the
# environment of every process, output under $OUT/NAME/. A summary of all
# of them goes to $OUT/tune.txt.
#
#   run(command="GS_SECONDS=4 kernels/h200/tune.sh",
#       carry=["build/libgpusched", "build/daemon", "build/devlibs"])
set -u -o pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$ROOT/h200-out}
mkdir -p "$OUT"
: > "$OUT/build.log"
"$ROOT/kernels/h200/build.sh" "$OUT/build.log" ||
	{ echo "build failed"; tail -30 "$OUT/build.log"; exit 1; }
DEFAULT_TUNE='
alone100-q250   alone100     default,gpusched GPUSCHED_QUEUE_ALONE_US=250
alone100-q1000  alone100     gpusched GPUSCHED_QUEUE_ALONE_US=1000
pair100-h0      pair100      gpusched GPUSCHED_HANDOVER_US=0
pair100-h100    pair100      gpusched GPUSCHED_HANDOVER_US=100
pair100-h200    pair100      gpusched GPUSCHED_HANDOVER_US=200
pair100-h400    pair100      gpusched GPUSCHED_HANDOVER_US=400
probe100-q300   probe-hog100 gpusched
probe100-q150   probe-hog100 gpusched GPUSCHED_QUEUE_LATENCY_US=150
probe100-q600   probe-hog100 gpusched GPUSCHED_QUEUE_LATENCY_US=600
probe100-h100   probe-hog100 gpusched GPUSCHED_HANDOVER_US=100
probe1ms-q300   probe-hog1ms gpusched
quad-mixed      quad-mixed   gpusched
'
args=()
[ -n "${GS_SECONDS:-}" ] && args+=(--seconds "$GS_SECONDS")
[ -n "${GS_KEEP_TRACES:-}" ] && args+=(--keep-traces)
echo "${GS_TUNE:-$DEFAULT_TUNE}" | while read -r name scn modes vars; do
	[ -n "$name" ] || continue
	case $name in \#*) continue ;; esac
	echo "== $name: $scn ($modes) ${vars:-defaults}"
	# shellcheck disable=SC2086
	env $vars PYTHONUNBUFFERED=1 python3 "$ROOT/kernels/gpusched-bench" \
		--out "$OUT/$name" --modes "$modes" "${args[@]}" "$scn" 2>&1 |
		grep -v '^no PNG'
done | tee "$OUT/tune.txt"
