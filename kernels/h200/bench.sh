#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# kernels/h200/bench.sh: gpusched-bench on the borrowed H200 in one command.
# Builds kernels/ with that machine's nvcc (the library and the arbiter come
# prebuilt in build/, with copies of libnl in build/devlibs: the machine has
# no libnl-genl-3 and no apt), writes machine.txt, then runs
# kernels/gpusched-bench on the scenarios given (default: all shipped).
# Results under $OUT: bench.json, bench.log, summary.txt, build.log.
#
#   run(command="GS_SECONDS=5 kernels/h200/bench.sh pair100 quad-mixed",
#       carry=["build/libgpusched", "build/daemon", "build/devlibs"])
set -u -o pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$ROOT/h200-out}
mkdir -p "$OUT"
{
	echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "kernel: $(uname -r)  cpus: $(nproc)"
	nvidia-smi --query-gpu=name,uuid,driver_version,compute_mode,clocks.max.sm,power.limit --format=csv
	command -v nvcc && nvcc --version | tail -2
	python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)' 2>&1
} > "$OUT/machine.txt" 2>&1
: > "$OUT/build.log"
"$ROOT/kernels/h200/build.sh" "$OUT/build.log" ||
	{ echo "build failed"; tail -30 "$OUT/build.log"; exit 1; }
args=()
[ -n "${GS_SECONDS:-}" ] && args+=(--seconds "$GS_SECONDS")
[ -n "${GS_MODES:-}" ] && args+=(--modes "$GS_MODES")
[ $# -gt 0 ] || set -- $(cd "$ROOT/kernels/scenarios" && ls *.scn | sed 's/\.scn$//')
PYTHONUNBUFFERED=1 python3 "$ROOT/kernels/gpusched-bench" --out "$OUT" "${args[@]}" "$@" 2>&1 |
	tee "$OUT/summary.txt"
