#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# kernels/h200/bench.sh: gpusched-bench on a machine with a GPU (the
# borrowed H200) in one command. Builds kernels/ with that machine's nvcc
# (the library and the arbiter come prebuilt in build/, with copies of
# libnl in build/devlibs where the machine has no libnl-genl-3), writes
# machine.txt, then runs kernels/gpusched-bench with the arguments given
# (default: --matrix, the client matrix of Documentation/performance.md).
# gpusched-bench serves the token with /dev/gpusched where the module is
# loaded, else with its own `gpuschedd --arbiter` on a private socket.
# Results under $OUT: bench.json, matrix.json, matrix.md, bench.log,
# summary.txt (what it printed), machine.txt, build.log; with --keep-traces,
# traces.tgz (the device tool brings back a bounded number of files, so the
# traces come back as one).
#
#   GS_SECONDS  override every scenario's run time
#   GS_ROUNDS   run each case that many times (--rounds; medians judged)
#   GS_MODES    a subset of default,mps,gpusched,mps+gpusched
#   GS_PLOT=1   draw PNGs of the shares over time (needs gnuplot)
#   GS_COMMIT   the commit for the results table (default: git's HEAD here,
#               which a copied tree may not match)
#   GS_BASE_LIB another build of libgpusched.so.1 (an earlier commit's, carried
#               in build/): mode gpusched-base runs it (--base-lib)
#
# Device tool (Documentation/performance.md has the build before it):
#   run(command="kernels/h200/bench.sh --matrix", timeout_s=600,
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
[ -n "${GS_ROUNDS:-}" ] && args+=(--rounds "$GS_ROUNDS")
[ -n "${GS_MODES:-}" ] && args+=(--modes "$GS_MODES")
[ "${GS_PLOT:-0}" = 1 ] || args+=(--no-plot)
[ $# -gt 0 ] || set -- --matrix
PYTHONUNBUFFERED=1 python3 "$ROOT/kernels/gpusched-bench" --out "$OUT" "${args[@]}" "$@" 2>&1 |
	tee "$OUT/summary.txt"
rc=$?
if [ -d "$OUT/traces" ]; then
	tar czf "$OUT/traces.tgz" -C "$OUT" traces && rm -rf "$OUT/traces"
fi
exit $rc
