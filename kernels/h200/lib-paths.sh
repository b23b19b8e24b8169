#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# kernels/h200/lib-paths.sh: libgpusched's correctness paths on the real
# GPU, through the user-space arbiter (the borrowed H200 cannot load
# modules): kernels/lib-paths.py's checks (CUDA graph capture beside
# another thread's launches, primary-context retain/release and reset,
# contexts created and destroyed, memory pools), each run plainly (the
# program is right without the library) and under the library beside a
# busy neighbour of 100 us kernels. Under the library the checks that
# cycle contexts must leave one state record (GPUSCHED_DEBUG=stats).
# Results: $OUT/paths.txt (a line per check and mode), $OUT/paths.log.
#
# Needs build/libgpusched, build/daemon (carried or built) and
# build/kernels/gs-runtime-client (kernels/h200/build.sh).
set -u -o pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$ROOT/h200-out}
mkdir -p "$OUT"
LOG=$OUT/paths.log
RES=$OUT/paths.txt
: > "$LOG"
: > "$RES"
PY=$ROOT/kernels/lib-paths.py
SOCK=/tmp/gs-paths.sock

rm -f "$SOCK"
LD_LIBRARY_PATH="$ROOT/build/devlibs" "$ROOT/build/daemon/gpuschedd" --arbiter \
	--socket "$SOCK" >> "$LOG" 2>&1 &
arb=$!
for _ in $(seq 50); do [ -S "$SOCK" ] && break; sleep 0.1; done
LIB=(LD_PRELOAD="$ROOT/build/libgpusched/libgpusched.so.1"
     GPUSCHED_BACKEND=arbiter GPUSCHED_ARBITER="$SOCK" GPUSCHED_DEBUG=stats)

# records NAME: the library's state records at exit (one line each).
records() { grep -c 'stats context ' "$OUT/paths-$1.err"; }

for c in capture retain ctxcycle reset pools; do
	lim=()
	[ "$c" = pools ] && lim=(GPUSCHED_MEM_LIMIT=1G)
	# Plainly, alone: the control (no limit without the library).
	if [ "$c" != pools ]; then
		python3 "$PY" "$c" > "$OUT/paths-plain-$c.out" 2>> "$LOG"
		echo "plain    $(cat "$OUT/paths-plain-$c.out")" | tee -a "$RES"
	fi
	LD_PRELOAD="$ROOT/build/libgpusched/libgpusched.so.1" \
		GPUSCHED_BACKEND=arbiter GPUSCHED_ARBITER="$SOCK" \
		"$ROOT/build/kernels/gs-runtime-client" --kernel-us 100 \
		--seconds 30 --label neighbour > "$OUT/paths-neighbour-$c.json" 2>> "$LOG" &
	nb=$!
	sleep 2
	env "${LIB[@]}" "${lim[@]}" python3 "$PY" "$c" > "$OUT/paths-$c.out" \
		2> "$OUT/paths-$c.err"
	echo "gpusched $(cat "$OUT/paths-$c.out")" | tee -a "$RES"
	case $c in
	retain|ctxcycle|reset)
		n=$(records "$c")
		if [ "$n" = 1 ]; then r=ok; else r="not ok"; fi
		echo "gpusched $r $c-records: $n state records of the library" | tee -a "$RES"
		;;
	esac
	kill "$nb" 2>/dev/null
	wait "$nb" 2>/dev/null
	grep -h 'stats launch_\|stats context\|stats memory\|stats launches=' \
		"$OUT/paths-$c.err" | sed "s|^|[$c] |" >> "$LOG"
done
kill "$arb" 2>/dev/null
wait "$arb" 2>/dev/null
echo "== $(grep -vc ' not ok ' "$RES") ok, $(grep -c ' not ok ' "$RES") not ok" | tee -a "$RES"
