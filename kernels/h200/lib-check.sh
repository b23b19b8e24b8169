#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# kernels/h200/lib-check.sh: libgpusched on the real GPU, through the
# user-space arbiter (the borrowed H200 cannot load modules). One command:
#  1. kernels/h200/run.sh in modes "default" and "gpusched": one process
#     alone with 20 us and 100 us kernels with and without the library (the
#     overhead), and two 100 us processes with weights 1:3;
#  2. an unmodified PyTorch training loop alone, plain and under the
#     library, with the library's counters (launches that came through
#     cuGetProcAddress);
#  3. two PyTorch loops with weights 3:1 under the library.
# Results under $OUT: run.sh's files, torch.jsonl and torch.log.
#
#   GS_LIB_PREBUILT=1  use build/libgpusched and build/daemon as carried
#   GS_SECONDS         seconds per case (default 10)
set -u -o pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$ROOT/h200-out}
SECS=${GS_SECONDS:-10}
mkdir -p "$OUT"

GS_MODES="default gpusched" \
GS_CASES=${GS_CASES:-"alone_rt_20 alone_rt_100 alone_drv_100 pair_w13"} \
	"$ROOT/kernels/h200/run.sh"

TL=$OUT/torch.log
TJ=$OUT/torch.jsonl
: > "$TL"
: > "$TJ"
python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)' >> "$TL" 2>&1

torch_run() {	# label env... -- extra args
	local label=$1; shift
	local -a env=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do env+=("$1"); shift; done
	[ $# -gt 0 ] && shift
	env "${env[@]}" python3 "$ROOT/kernels/torch-train.py" --seconds "$SECS" \
		--label "$label" "$@" >> "$TJ" 2> >(sed "s|^|[$label] |" >> "$TL")
}

start_at() { awk -v t="$(date +%s.%N)" 'BEGIN { printf "%.3f", t + 8 }'; }

echo "== torch alone, plain" | tee -a "$TL"
torch_run plain/alone GPUSCHED_START_AT=0

rm -f /tmp/gs.sock
LD_LIBRARY_PATH="$ROOT/build/devlibs" "$ROOT/build/daemon/gpuschedd" --arbiter \
	--socket /tmp/gs.sock >> "$TL" 2>&1 &
arb=$!
for _ in $(seq 50); do [ -S /tmp/gs.sock ] && break; sleep 0.1; done
LIB=(LD_PRELOAD="$ROOT/build/libgpusched/libgpusched.so.1"
     GPUSCHED_BACKEND=arbiter GPUSCHED_ARBITER=/tmp/gs.sock GPUSCHED_DEBUG=stats)

echo "== torch alone, under libgpusched" | tee -a "$TL"
torch_run gpusched/alone "${LIB[@]}" GPUSCHED_START_AT=0

echo "== two torch loops, weights 3:1, under libgpusched" | tee -a "$TL"
t=$(start_at)
torch_run gpusched/w3 "${LIB[@]}" GPUSCHED_WEIGHT=300 GPUSCHED_START_AT="$t" &
p1=$!
torch_run gpusched/w1 "${LIB[@]}" GPUSCHED_WEIGHT=100 GPUSCHED_START_AT="$t" &
p2=$!
wait $p1 $p2
echo "== two torch loops, plain (default time-slicing)" | tee -a "$TL"
t=$(start_at)
torch_run plain/a GPUSCHED_START_AT="$t" &
p1=$!
torch_run plain/b GPUSCHED_START_AT="$t" &
p2=$!
wait $p1 $p2
kill $arb 2>/dev/null
wait $arb 2>/dev/null

echo "== torch results" | tee -a "$OUT/summary.txt"
cat "$TJ" | tee -a "$OUT/summary.txt"
grep -h "stats" "$TL" "$OUT/run.log" | tee -a "$OUT/summary.txt"
