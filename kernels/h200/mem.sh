#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# kernels/h200/mem.sh: device memory limits on the real GPU, through the
# user-space arbiter, with PyTorch (kernels/torch-mem.py, torch-train.py),
# in one command of about 4 minutes:
#  1. a 20 GiB limit (GPUSCHED_MEM_LIMIT=20G): torch.cuda.mem_get_info()
#     total and free, and NVML's total (nvmlDeviceGetMemoryInfo through
#     dlopen and dlsym, as pynvml); 1 GiB tensors until torch raises OutOfMemoryError;
#     then free and go on. With each PyTorch allocator: the default
#     (cudaMalloc, so cuMemAlloc), expandable_segments (cuMemCreate) and
#     backend:cudaMallocAsync (the stream-ordered pool);
#  2. while the limited process holds its 20 GiB, a neighbour under the
#     library without a limit allocates 60 GiB;
#  3. the hooks' uncontended cost: PyTorch allocating and freeing in a loop
#     through its caching allocator, plain (no library) and under the
#     library with a 20 GiB limit, four times each in turn; and the same with
#     torch.cuda.empty_cache() every 50 iterations, so that the driver (and
#     the hooks) are called often;
#  4. time shares: two torch-train.py loops, weights 3:1, without limits
#     and with a 20 GiB limit each, twice each in turn.
# Prints the results side by side and writes under $OUT: mem.jsonl (every
# process's JSON line), mem.log (their stderr, the library's stats, the
# arbiter's log), summary.txt (what it printed).
#
# The library and the arbiter come prebuilt in build/ (as for bench.sh):
#   run(command="kernels/h200/mem.sh", timeout_s=300,
#       carry=["build/libgpusched", "build/daemon", "build/devlibs"])
#   GS_SECONDS  seconds of each torch-train.py run (default 8)
#   GS_MEM_PARTS  which of the four parts to run (default "1 2 3 4")
#   GS_MEM_ROUNDS  rounds of part 3 (default 4)
set -u -o pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$ROOT/h200-out}
SECS=${GS_SECONDS:-8}
mkdir -p "$OUT"
J=$OUT/mem.jsonl
L=$OUT/mem.log
: > "$J"
: > "$L"
W=$(mktemp -d /tmp/gsmem.XXXXXX)
{
	echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
	python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'
} >> "$L" 2>&1

LD_LIBRARY_PATH="$ROOT/build/devlibs" "$ROOT/build/daemon/gpuschedd" --arbiter \
	--socket "$W/gs.sock" >> "$L" 2>&1 &
arb=$!
trap 'kill $arb 2>/dev/null; wait $arb 2>/dev/null; rm -rf "$W"' EXIT
for _ in $(seq 50); do [ -S "$W/gs.sock" ] && break; sleep 0.1; done
[ -S "$W/gs.sock" ] || { echo "the arbiter did not start"; cat "$L"; exit 1; }
LIB=(LD_PRELOAD="$ROOT/build/libgpusched/libgpusched.so.1"
     GPUSCHED_BACKEND=arbiter GPUSCHED_ARBITER="$W/gs.sock" GPUSCHED_DEBUG=stats)

# py LABEL VAR=VALUE... -- PROGRAM ARGS...: one process, its JSON line to
# mem.jsonl with the label, its stderr to mem.log.
py() {
	local label=$1; shift
	local -a env=()
	while [ "$1" != -- ]; do env+=("$1"); shift; done
	shift
	local err="$W/${label//\//_}.err"
	${PIN:+taskset -c "$PIN"} env "${env[@]}" python3 "$ROOT/kernels/$1" "${@:2}" --label "$label" \
		>> "$J" 2> "$err"
	sed "s|^|[$label] |" "$err" >> "$L"
}

# want N: part N is to run (GS_MEM_PARTS, default all four).
want() {
	case " ${GS_MEM_PARTS:-1 2 3 4} " in *" $1 "*) return 0 ;; esac
	return 1
}

if want 1; then
echo "== 1. a 20 GiB limit, three PyTorch allocators" | tee -a "$L"
py limit/cudaMalloc "${LIB[@]}" GPUSCHED_MEM_LIMIT=20G -- torch-mem.py oom
py limit/expandable "${LIB[@]}" GPUSCHED_MEM_LIMIT=20G \
	PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True -- torch-mem.py oom
py limit/cudaMallocAsync "${LIB[@]}" GPUSCHED_MEM_LIMIT=20G \
	PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync -- torch-mem.py oom

fi

if want 2; then
echo "== 2. a neighbour without a limit beside the limited process" | tee -a "$L"
py limit/held "${LIB[@]}" GPUSCHED_MEM_LIMIT=20G -- torch-mem.py oom \
	--ready-file "$W/held" --go-file "$W/go" &
held=$!
for _ in $(seq 600); do [ -e "$W/held" ] && break; sleep 0.1; done
py neighbour/nolimit "${LIB[@]}" -- torch-mem.py neighbour --gib 60
touch "$W/go"
wait $held
fi

if want 3; then
echo "== 3. allocate and free in a loop: plain and under the library" | tee -a "$L"
# Processes alternate, plain then library, so that the host's drift (clock,
# other load) falls on both alike, on one CPU, so that both run where the
# other did; the summary takes the median of the rounds' ratios.
PIN=$(($(nproc) - 1))
for round in $(seq "${GS_MEM_ROUNDS:-4}"); do
	py "loop/plain/$round" -- torch-mem.py loop --reps 7
	py "loop/limit/$round" "${LIB[@]}" GPUSCHED_MEM_LIMIT=20G -- torch-mem.py loop --reps 7
	py "empty50/plain/$round" -- torch-mem.py loop \
		--iters 5000 --empty-every 50 --reps 7
	py "empty50/limit/$round" "${LIB[@]}" GPUSCHED_MEM_LIMIT=20G -- torch-mem.py loop \
		--iters 5000 --empty-every 50 --reps 7
done

PIN=
fi

if want 4; then
echo "== 4. two training loops, weights 3:1, without and with limits" | tee -a "$L"
# Alternating too: none, 20G, none, 20G.
for run in 1 2; do
	for lim in none 20G; do
		t=$(awk -v t="$(date +%s.%N)" 'BEGIN { printf "%.3f", t + 10 }')
		extra=()
		[ "$lim" = none ] || extra=(GPUSCHED_MEM_LIMIT="$lim")
		py "share/$lim/$run/w3" "${LIB[@]}" "${extra[@]}" GPUSCHED_WEIGHT=300 GPUSCHED_START_AT="$t" \
			-- torch-train.py --seconds "$SECS" &
		a=$!
		py "share/$lim/$run/w1" "${LIB[@]}" "${extra[@]}" GPUSCHED_WEIGHT=100 GPUSCHED_START_AT="$t" \
			-- torch-train.py --seconds "$SECS" &
		b=$!
		wait $a $b
	done
done
fi

python3 - "$J" "$L" <<'PY' | tee "$OUT/summary.txt"
import json, re, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
by = {r["label"]: r for r in rows}
log = open(sys.argv[2]).read()
def stats(label):
    m = re.search(r"\[%s\] gpusched\[\d+\]: stats memory reserves=(\d+) refused=(\d+)" %
                  re.escape(label), log)
    return "%s reserves, %s refused" % m.groups() if m else "-"
print("1. a 20 GiB limit (GPUSCHED_MEM_LIMIT=20G): torch.cuda.mem_get_info(),")
print("   NVML's total, the device's total, 1 GiB tensors until the error, then")
print("%-16s %9s %9s %9s %9s %10s %-17s %8s %s" % ("allocator", "total", "free",
      "NVML", "GPU", "allocated", "then", "went on", "library"))
for a in ("cudaMalloc", "expandable", "cudaMallocAsync", "held"):
    r = by.get("limit/" + a)
    if not r:
        print("%-24s (no result: see mem.log)" % a)
        continue
    nv = "%.2fG" % r["nvml_total_gib"] if r.get("nvml_total_gib") is not None else "-"
    print("%-16s %8.2fG %8.2fG %9s %8.1fG %9dG %-17s %8s %s" % (a, r["total_gib"],
          r["free_gib"], nv, r["device_total_gib"], r["allocated_gib"],
          r["error"] or "no error", r.get("recovered"), stats("limit/" + a)))
r = by.get("neighbour/nolimit")
print("\n2. neighbour without a limit, beside the limited process holding its memory")
if r:
    print("   mem_get_info total %.2fG free %.2fG; allocated %d of 60 GiB (%s)" % (
          r["total_gib"], r["free_gib"], r["allocated_gib"], r["error"] or "no error"))
else:
    print("   (no result: see mem.log)")
print("\n3. allocate/free loop, iterations per second (median of 7 runs in each")
print("   process; processes alternate plain, library; diff: median of the rounds)")
print("%-34s %12s %12s %8s" % ("", "plain", "library", "diff"))
import statistics
for kind, what in (("loop", "caching allocator"), ("empty50", "empty_cache() every 50")):
    diffs = []
    for rnd in map(str, range(1, 100)):
        p = by.get("%s/plain/%s" % (kind, rnd))
        q = by.get("%s/limit/%s" % (kind, rnd))
        if p and q:
            d = 100.0 * (q["median_per_s"] - p["median_per_s"]) / p["median_per_s"]
            diffs.append(d)
            print("%-34s %12.0f %12.0f %+7.2f%%   %s" % ("%s, round %s" % (what, rnd),
                  p["median_per_s"], q["median_per_s"], d, stats("%s/limit/%s" % (kind, rnd))))
    if diffs:
        print("%-34s %12s %12s %+7.2f%%" % ("%s, median" % what, "", "",
              statistics.median(diffs)))
print("\n4. two torch-train.py loops, weights 3:1, steps per second")
print("%-12s %10s %10s %8s %8s" % ("limits", "w3", "w1", "w3 part", "sum"))
for run in ("1", "2"):
    for lim in ("none", "20G"):
        a, b = by.get("share/%s/%s/w3" % (lim, run)), by.get("share/%s/%s/w1" % (lim, run))
        if a and b:
            x, y = a["steps_per_s"], b["steps_per_s"]
            print("%-12s %10.2f %10.2f %8.3f %8.2f" % ("%s (%s)" % (lim, run), x, y,
                  x / (x + y), x + y))
        else:
            print("%-12s (no result: see mem.log)" % ("%s (%s)" % (lim, run)))
PY
