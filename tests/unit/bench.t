#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# kernels/gpusched-bench without a GPU: a test double of the CUDA clients
# (tests/bench/fake-client) writes synthetic traces whose figures are known,
# and the bench must compute them: shares, sum, error against the weights,
# hand-offs per second and the gap, each process's gap between its own
# kernels and its idle between them where no other's kernel starts,
# targets met and short, JSON and PNG; the gpusched mode starts and stops
# the real arbiter; a bad scenario file is refused with its file and line.
# The client matrix: the shipped plan names every client kind and fits its
# time, each kind reaches the client as its options, PyTorch kinds run the
# (fake) loops, and every case where gpusched is worse than default is
# listed, and no other, judged where processes compete on the window in
# which all of them ran; a base build of the library (--base-lib) runs as
# a mode of its own, and every figure where gpusched is worse than it is
# listed. GS_TEST_BUILD: where the library and the arbiter are built
# (default build/).
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bench=$root/kernels/gpusched-bench
n=0; failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; }
check() { d=$1; shift; if "$@"; then ok "$d"; else not_ok "$d"; fi; }
command -v python3 >/dev/null || { echo "1..0 # SKIP no python3"; exit 0; }

T=$(mktemp -d "${TMPDIR:-/tmp}/gsbench.XXXXXX")
trap 'rm -rf "$T"' EXIT
chmod 755 "$T"
mkdir -p "$T/build/kernels" "$T/build/libgpusched" "$T/build/daemon" "$T/out"
for p in gs-runtime-client gs-driver-client gs-probe; do
	ln -s "$root/tests/bench/fake-client" "$T/build/kernels/$p"
done
B=${GS_TEST_BUILD:-$root/build}
ln -s "$B/libgpusched/libgpusched.so.1" "$T/build/libgpusched/"
ln -s "$B/daemon/gpuschedd" "$T/build/daemon/"
ln -s "$root/tests/bench/fake-gpuschedctl" "$T/build/daemon/gpuschedctl"

cat >"$T/pair.scn" <<'SCN'
title: fake pair
seconds: 2
modes: default gpusched
proc: runtime kernel_us=100 FAKE_INDEX=0 FAKE_N=2 FAKE_GAP_US=100
proc: runtime kernel_us=100 FAKE_INDEX=1 FAKE_N=2 FAKE_GAP_US=100
target: gpusched handoff_p50_us <= 150
target: gpusched sum >= 0.999
SCN
cat >"$T/w13.scn" <<'SCN'
title: fake 1:3
seconds: 2
modes: default
proc: runtime kernel_us=100 weight=1 FAKE_INDEX=0 FAKE_N=2 FAKE_WEIGHTS=1,3
proc: runtime kernel_us=100 weight=3 FAKE_INDEX=1 FAKE_N=2 FAKE_WEIGHTS=1,3
target: default err_pts <= 1
target: default share[*] ~ 0.25+-0.01
SCN

GS_BUILD=$T/build "$bench" --out "$T/out" "$T/pair.scn" "$T/w13.scn" >"$T/log" 2>&1
rc=$?
sed 's/^/# /' "$T/log"
check "the bench ran both scenarios (exit $rc)" [ $rc = 0 ]
j=$T/out/bench.json
# jget FILE EXPR: EXPR of the JSON in FILE, loaded as r; get EXPR: of $j.
jget() { python3 -c "import json; r=json.load(open('$1')); print($2)" 2>/dev/null; }
get() { jget "$j" "$1"; }
# within A B TOL: |A - B| <= TOL, all three decimal numbers (a figure the
# bench left out, or printed as nan, fails).
. "$root/tests/host/compare.sh"
# with_bench: the Python on stdin, with the bench loaded as module b.
with_bench() {
	python3 -c 'import importlib.machinery, importlib.util, sys
ld = importlib.machinery.SourceFileLoader("gsb", sys.argv[1])
spec = importlib.util.spec_from_loader("gsb", ld)
b = importlib.util.module_from_spec(spec)
ld.exec_module(b)
exec(sys.stdin.read())' "$bench"
}

# Idle between a process's own kernels: kernels of two streams overlap
# (idle only once none of its own runs), and a gap that another's kernel
# starts in is not its own.
oi=$(with_bench <<'EOF'
print(b.own_idle([(0, 100, 0), (10, 20, 0), (30, 40, 0), (150, 200, 0)], []),
      b.own_idle([(0, 100, 0), (150, 200, 0)], [120]))
EOF
)
check "own_idle: overlapping kernels, then a gap another starts in (0.25 0.0: $oi)" \
	[ "$oi" = "0.25 0.0" ]

# Pair, 10 ms slices with 100 us gaps, 100 us kernels: 99 kernels a slice,
# 0.495 of the GPU each, 100 hand-offs a second, every gap 100 us.
s0=$(get "r[0]['summary']['default']['share'][0]")
sum=$(get "r[0]['summary']['default']['sum']")
check "pair: share 0.495 each ($s0)" within "$s0" 0.495 0.002
# Between their slices each waits for the other's: no idle of its own.
o0=$(get "r[0]['summary']['default']['own_idle'][0]")
o1=$(get "r[0]['summary']['gpusched']['own_idle'][1]")
check "pair: the gaps the other's kernels start in are not idle of its own ($o0 $o1)" \
	[ "$o0 $o1" = "0.0 0.0" ]
check "pair: sum 0.99 ($sum)" within "$sum" 0.99 0.004
g=$(get "r[0]['summary']['default']['gpu_share'][1]")
check "pair: share from the GPU clock, common window ($g)" within "$g" 0.495 0.005
h=$(get "r[0]['summary']['default']['handoffs_per_s']")
check "pair: 100 hand-offs a second ($h)" within "$h" 100 2
p50=$(get "r[0]['summary']['default']['handoff_p50_us']")
check "pair: hand-off gap 100 us ($p50)" within "$p50" 100 0.5
c1=$(get "r[0]['summary']['default']['cpu'][1]")
check "pair: CPU time in cores, from the client's own count ($c1)" within "$c1" 0.25 0.001
check "and the table has a row for it" grep -q '^cpu 1, cores  *0.25  ' "$T/log"
svc=$(get "r[0]['runs']['gpusched']['service']")
check "gpusched mode ran with the arbiter ($svc)" [ "$svc" = arbiter ]
check "the arbiter started and stopped, saying its CPU time" sh -c "grep -q 'listening on' '$T/out/bench.log' && grep -q 'exiting ([0-9.]* s of CPU in [0-9.]* s)' '$T/out/bench.log'"
check "without --keep-traces no trace is left" [ ! -e "$T/out/traces" ]
GS_BUILD=$T/build "$bench" --out "$T/kept" --modes default --seconds 1 \
	--keep-traces "$T/pair.scn" >"$T/kept.log" 2>&1
check "--keep-traces keeps each process's trace under OUT/traces" \
	sh -c "[ -s '$T/kept/traces/pair-default-0.trace' ] && [ -s '$T/kept/traces/pair-default-1.trace' ]"
ok1=$(get "r[0]['targets'][0]['ok']")
ok2=$(get "r[0]['targets'][1]['ok']")
check "a target met is PASS, one missed is short ($ok1, $ok2)" \
	sh -c "[ '$ok1' = True ] && [ '$ok2' = False ] && grep -q 'short' '$T/log' && grep -q 'PASS' '$T/log'"
# 1:3: slices of 5 ms and 15 ms, 20 ms rounds: 0.2480 and 0.7480.
f=$(get "r[1]['summary']['default']['frac'][0]")
e=$(get "r[1]['summary']['default']['err_pts']")
check "1:3: first has 0.249 of the total ($f), error $e points" within "$f" 0.249 0.002
jn=$(get "r[1]['summary']['default']['jain']")
check "1:3: Jain's index of weight-normalised shares is 1 ($jn)" within "$jn" 1 0.001
t2=$(get "r[1]['targets'][1]['ok']")
check "share[*] ~ 0.25+-0.01 is short for 0.248 and 0.748 ($t2)" [ "$t2" = False ]
if command -v gnuplot >/dev/null; then
	check "a PNG of shares over time" python3 -c \
		"import sys; sys.exit(open('$T/out/pair.png', 'rb').read(8) != b'\\x89PNG\\r\\n\\x1a\\n')"
else
	ok "# SKIP gnuplot not installed"
fi

refused() {	# refused WHAT SCENARIO_TEXT MESSAGE: exit 2, saying MESSAGE
	printf %b "$2" >"$T/bad.scn"
	"$bench" --out "$T/out" "$T/bad.scn" >"$T/bad.log" 2>&1
	rc=$?
	check "$1 (exit $rc)" sh -c "[ $rc = 2 ] && grep -q '$3' '$T/bad.log'"
}
refused "a bad scenario is refused with file and line" \
	'title: x\nproc: runtime kernel_us=100\nbogus: 1\n' 'bad.scn:3: unknown key'
refused "width= only for the PyTorch loops" \
	'proc: runtime kernel_us=100 width=2048\n' 'bad.scn:1: width is for torch-train'
refused "batch=0 is refused" \
	'proc: torch-infer batch=0\n' 'bad.scn:1: batch must be an integer'
# Each client's command line is in the log: a PyTorch loop's width and
# batch reach it (the loop itself fails here, without torch or a GPU).
printf 'title: torch width\nproc: torch-infer width=2048 batch=32 class=latency\nproc: runtime kernel_us=100 FAKE_INDEX=0 FAKE_N=1\n' >"$T/tw.scn"
GS_BUILD=$T/build "$bench" --modes default --seconds 1 --out "$T/tw" "$T/tw.scn" >"$T/tw.log" 2>&1
check "the bench logs each command; width= and batch= reach the loop" \
	sh -c "grep -q 'torch-infer.py .*--period-ms 10.0 --width 2048 --batch 32\$' '$T/tw/bench.log' &&
	       grep -q '\\$ .*gs-runtime-client .*--kernel-us 100' '$T/tw/bench.log' &&
	       grep -q 'torch-infer every 10 ms width 2048 batch 32 w1 latency' '$T/tw.log'"
printf 'proc: runtime kernel_us=100 FAKE_INDEX=0 FAKE_N=1 FAKE_FAIL=1\n' >"$T/fail.scn"
GS_BUILD=$T/build "$bench" --modes default --seconds 1 --out "$T/out" "$T/fail.scn" >"$T/fail.log" 2>&1
check "a client that fails is reported" grep -q 'failed / started late' "$T/fail.log"

# Where a probe's slowest requests spent their time (tail_parts): the other
# process runs 1 ms kernels with two pauses; a request at 2300 us finds
# 700 us of a kernel left, then a 138 us gap, then its own 50 us kernel
# (888 us in all); one at 5000 us finds 300 us left (488 us); one at
# 7600 us finds the other's kernel just ended and two more started after
# it (a holder that did not see the request): 2 started after, 2538 us;
# its launch call took 300 us and it woke 120 us late. read_lat() reads the
# probe's three columns and an older probe's one.
tp=$(with_bench <<'PY'
us = lambda a, e: (int(a * 1000), int(e * 1000))
others = [us(0, 1000), us(1000, 2000), us(2000, 3000), us(3300, 4300),
          us(4300, 5300), us(5600, 6600), us(6600, 7600), us(7610, 8610),
          us(8610, 9610)]
ours = [us(3138, 3188), us(5438, 5488), us(10088, 10138)]
import os, tempfile
d = tempfile.mkdtemp()
with open(os.path.join(d, "p.lat"), "w") as f:
    f.write("888.0 5.0 0.0\n488.0 4.0 0.0\n2538.0 300.0 120.0\n")
with open(os.path.join(d, "o.lat"), "w") as f:
    f.write("888.0\n488.0\n")
lat = b.read_lat(os.path.join(d, "p"))
old = b.read_lat(os.path.join(d, "o"))
t = b.tail_parts(ours, lat, others, frac=0.34)
s, a = t["slowest"], t["all"]
print("%d %.0f %.0f %.0f %.0f %.0f %.0f %.0f %.0f %.0f %s" % (t["n_slowest"],
      s["latency_us"], s["after"], s["gap_us"], s["run_us"], a["left_us"],
      a["gap_us"], s["call_us"], s["woke_us"], a["call_us"],
      "old" if old == [(888, None, None), (488, None, None)] else old))
PY
)
check "tail_parts: the slowest request, 2 kernels started after it, gap 478 us, call 300 us, woke 120 us late; all: 333 us left, gap 251 us, call 103 us ($tp)" \
	[ "$tp" = "1 2538 2 478 50 333 251 300 120 103 old" ]

# ---- the client matrix ----------------------------------------------------------
# The shipped plan: every kind of the matrix exists; the default run has
# every matrix scenario and fits in about 8 minutes by the bench's own
# estimate; --clients all covers every kind.
"$bench" --matrix --dry-run >"$T/plan" 2>&1
rc=$?
sed 's/^/# /' "$T/plan"
est=$(sed -n 's/.*estimated \([0-9]*\) s.*/\1/p' "$T/plan")
check "the default matrix plan fits in 8.5 minutes (exit $rc, ~${est:-?} s)" \
	sh -c "[ $rc = 0 ] && [ -n '$est' ] && [ '$est' -le 510 ]"
for s in alone20 alone100 pair100 eight100 quad-w4321 probe-hog100 probe-hog1ms \
	probe-hog5ms probe-hog20ms probe-hog50ms torch-w31 torch-infer; do
	grep -q "^run $s " "$T/plan" || missing="$missing $s"
done
check "the default plan runs every matrix scenario (missing:${missing:- none})" [ -z "$missing" ]
"$bench" --matrix --dry-run --clients all >"$T/plan-all" 2>&1
miss=
for c in window1 window4 window16 sync graph threads2 mixed torch-train torch-train-sync torch-infer; do
	grep -q "^run [^ ]*  *$c " "$T/plan-all" || miss="$miss $c"
done
check "--clients all runs every client kind (missing:${miss:- none})" [ -z "$miss" ]
check "each kind is its client's options: windows, sync, graph, threads, mix, PyTorch" sh -c "
	grep -q '^run pair100  *window1 .*runtime 100 us --depth 1 ' '$T/plan-all' &&
	grep -q '^run pair100  *window16 .*runtime 100 us --depth 16 ' '$T/plan-all' &&
	grep -q '^run pair100  *sync .*runtime 100 us --wait device ' '$T/plan-all' &&
	grep -q '^run pair100  *graph .*runtime 100 us --graph 4 --depth 2 ' '$T/plan-all' &&
	grep -q '^run pair100  *threads2 .*runtime 100 us --threads 2 --depth 4 ' '$T/plan-all' &&
	grep -q '^run pair100  *mixed .*runtime 100 us --mix --depth 4 ' '$T/plan-all' &&
	grep -q '^run pair100  *torch-train-sync .*torch-train sync w1; torch-train sync w1' '$T/plan-all' &&
	grep -q '^run probe-hog20ms  *torch-infer .*torch-infer every 10 ms w1 latency; runtime 20000 us --depth 4' '$T/plan-all'"
check "a run that repeats one (torch loops for 20 us and 100 us alone) runs once" \
	grep -q '^not run: alone100 torch-train: the same run as alone20 torch-train' "$T/plan-all"
check "a kind with nothing to play is not run (torch-infer, no latency process)" \
	grep -q '^not run: pair100 torch-infer: ' "$T/plan-all"

# A matrix run with the fakes, all four modes (a fake MPS control daemon):
# under gpusched the sync client's gaps grow (its sum drops), the latency
# processes' p99 rises, they miss a fifth of their periods (1000 requests,
# 250 periods missed: the probe's work with them, so the work done by
# all processes falls by a fifth of its 0.025) and the training loops slow
# down; nothing else moves.
mkdir -p "$T/bin" "$T/torch"
printf '#!/bin/sh\ncase "$1" in -d) exit 0 ;; esac\ncat >/dev/null\n' >"$T/bin/nvidia-cuda-mps-control"
chmod +x "$T/bin/nvidia-cuda-mps-control"
ln -s "$root/tests/bench/fake-client" "$T/torch/torch-train.py"
ln -s "$root/tests/bench/fake-client" "$T/torch/torch-infer.py"
cat >"$T/mxpair.scn" <<'SCN'
title: fake pair, matrix
seconds: 1
clients: window4 sync mixed
proc: runtime kernel_us=100 FAKE_INDEX=0 FAKE_N=2 FAKE_GAP_US=100 FAKE_GPUSCHED_GAP_US=2000 FAKE_WORSE_IF=--wait FAKE_GPUSCHED_MEASURED=1.1
proc: runtime kernel_us=100 FAKE_INDEX=1 FAKE_N=2 FAKE_GAP_US=100 FAKE_GPUSCHED_GAP_US=2000 FAKE_WORSE_IF=--wait FAKE_GPUSCHED_MEASURED=1.1
SCN
cat >"$T/mxprobe.scn" <<'SCN'
title: fake probe beside a busy process, matrix
seconds: 1
clients: window4 torch-infer
proc: probe kernel_us=50 period_us=2000 class=latency FAKE_P99_US=500 FAKE_GPUSCHED_P99_US=900 FAKE_GPUSCHED_MISSED=250
proc: runtime kernel_us=1000 FAKE_INDEX=0 FAKE_N=1 FAKE_GAP_US=0
SCN
cat >"$T/mxtorch.scn" <<'SCN'
title: fake PyTorch training loops 3:1, matrix
seconds: 1
clients: torch-train-sync
proc: torch-train weight=3 FAKE_STEPS=10 FAKE_GPUSCHED_STEPS=12
proc: torch-train weight=1 FAKE_STEPS=10 FAKE_GPUSCHED_STEPS=4
SCN
PATH=$T/bin:$PATH GS_BUILD=$T/build GS_TORCH_DIR=$T/torch FAKE_ARGV_LOG=$T/argv \
	"$bench" --out "$T/mx" \
	"$T/mxpair.scn" "$T/mxprobe.scn" "$T/mxtorch.scn" >"$T/mx.log" 2>&1
rc=$?
sed 's/^/# /' "$T/mx.log"
check "the matrix ran (exit $rc)" [ $rc = 0 ]
mj=$T/mx/matrix.json
mget() { python3 -c "import json; m=json.load(open('$mj')); print($1)" 2>/dev/null; }
nrow=$(mget "len(m['rows'])")
check "a matrix row per figure: 3 x 1 + 6 + 4 + 2 ($nrow)" [ "$nrow" = 15 ]
vals=$(mget "sorted(m['rows'][0]['values'])")
check "each row has default, MPS, gpusched and MPS+gpusched ($vals)" \
	[ "$vals" = "['default', 'gpusched', 'mps', 'mps+gpusched']" ]
grep '^WORSE' "$T/mx.log" | sort -u >"$T/worse"
cat >"$T/worse.want" <<'W'
WORSE mxpair sync: throughput sum: gpusched 0.8016, default 0.9901
WORSE mxprobe torch-infer: torch-infer 0 latency p99 us: gpusched 900, default 500
WORSE mxprobe torch-infer: torch-infer 0 periods with a request: gpusched 0.8, default 1
WORSE mxprobe window4: probe 0 latency p99 us: gpusched 900, default 500
WORSE mxprobe window4: probe 0 periods with a request: gpusched 0.8, default 1
WORSE mxprobe window4: work done, all processes: gpusched 1.02, default 1.025
WORSE mxtorch torch-train-sync: throughput sum: gpusched 1.6, default 2
W
check "WORSE lists every case where gpusched is worse than default, and only those" \
	cmp -s "$T/worse" "$T/worse.want"
check "printed again at the end, with the count" sh -c "
	[ \$(grep -c '^WORSE' '$T/mx.log') = 14 ] &&
	grep -q '^7 case(s) where gpusched is worse than default' '$T/mx.log'"
nw=$(mget "len(m['worse'])")
check "and kept in matrix.json ($nw)" [ "$nw" = 7 ]
check "matrix.md: the table of performance.md, a worse figure marked" sh -c "
	grep -q '^| commit | GPU | driver | date | scenario | client | default | MPS | gpusched | MPS+gpusched |' '$T/mx/matrix.md' &&
	grep -q '| mxpair: throughput sum | sync | 0.9901 | 0.9901 | 0.8016 \*\*worse\*\* | 0.8016 |' '$T/mx/matrix.md'"
# Beside one latency process, the time its neighbour went without per
# request of it: half of each 2 ms period (1 ms kernels, 1 ms idle after
# each) over the probe's 500 requests under default, 400 under gpusched
# (it misses a fifth of its periods), in the window of about 0.998 s.
cat >"$T/lp.scn" <<'SCN'
title: fake probe beside a process that leaves the GPU half idle
seconds: 1
proc: probe kernel_us=50 period_us=2000 class=latency FAKE_GPUSCHED_MISSED=250
proc: runtime kernel_us=1000 FAKE_INDEX=0 FAKE_N=1 FAKE_GAP_US=0 FAKE_KGAP_US=1000
SCN
GS_BUILD=$T/build "$bench" --out "$T/lp" --modes default,gpusched "$T/lp.scn" \
	>"$T/lp.log" 2>&1
rc=$?
lp=$(python3 -c "import json; s=json.load(open('$T/lp/bench.json'))[0]['summary']; print('%.0f %.0f' % (s['default']['lost_per_req_us'], s['gpusched']['lost_per_req_us']))" 2>/dev/null)
check "the neighbour's loss per request, by the requests in the window (exit $rc; default, gpusched: $lp)" \
	[ "$lp" = "998 1245" ]
check "shown in the matrix, not judged" sh -c "
	grep -q \"neighbour's loss per request us  *998 .* 1245 \" '$T/lp.log' &&
	! grep -q '^WORSE.*loss per request' '$T/lp.log'"

# A process that runs on alone once the others stop (its queue still full)
# raises its wall share by work that shared nothing; the judged figure is
# the sum over the window in which both ran, equal in both modes here.
cat >"$T/mxtail.scn" <<'SCN'
title: fake pair, one runs on alone after the end under default
seconds: 1
proc: runtime kernel_us=100 FAKE_INDEX=0 FAKE_N=2 FAKE_GAP_US=100 FAKE_TAIL_US=200000 FAKE_GPUSCHED_TAIL_US=0
proc: runtime kernel_us=100 FAKE_INDEX=1 FAKE_N=2 FAKE_GAP_US=100
SCN
GS_BUILD=$T/build "$bench" --out "$T/tail" --modes default,gpusched \
	"$T/mxtail.scn" >"$T/tail.log" 2>&1
rc=$?
sed 's/^/# /' "$T/tail.log"
tget() { python3 -c "import json; r=json.load(open('$T/tail/bench.json')); s=r[0]['summary']; print($1)" 2>/dev/null; }
ws=$(tget "'%.3f %.3f' % (s['default']['sum'], s['gpusched']['sum'])")
check "the wall sum counts the lone tail (exit $rc; default, gpusched: $ws)" \
	[ "$ws" = "1.074 0.990" ]
gs=$(tget "'%.3f %.3f' % (s['default']['gpu_sum'], s['gpusched']['gpu_sum'])")
check "the common window's sum does not ($gs)" [ "$gs" = "0.990 0.990" ]
mv=$(python3 -c "import json; m=json.load(open('$T/tail/matrix.json')); v=m['rows'][0]['values']; print('%.3f %.3f' % (v['default'], v['gpusched']))" 2>/dev/null)
check "the matrix judges the common window's ($mv)" [ "$mv" = "0.990 0.990" ]
check "and finds nothing worse" sh -c "! grep -q '^WORSE' '$T/tail.log'"
# By wall time the lone tail gives the first 0.539 of the sum for 0.5; the
# window, from the second's first kernel, holds 49 slices of the first's
# and 50 of the second's: 0.495 of the sum.
we=$(tget "'%.1f %.1f' % (s['default']['err_pts'], s['default']['err_pts_wall'])")
check "the error against the weights is the common window's too, the wall's kept ($we)" \
	[ "$we" = "0.5 3.9" ]
# A kernel across an edge of the window counts for its part inside: 50 ms
# kernels in a window of a few seconds would otherwise move a share by
# up to one kernel's worth.
pr=$(with_bench <<'PY'
print(b.inside(0, 100, 25, 1000), b.inside(900, 1100, 0, 1000),
      b.inside(10, 20, 0, 1000), b.inside(1000, 1200, 0, 1000))
PY
)
check "inside(): 0.75 and 0.5 of kernels across the edges, all of one within, none past ($pr)" \
	[ "$pr" = "0.75 0.5 1.0 0.0" ]
check "each kind reached its client: --wait device, --mix, --sync-each, torch-infer's period" sh -c "
	grep -q '^gs-runtime-client .*--kernel-us 100.0 .*--wait device\$' '$T/argv' &&
	grep -q '^gs-runtime-client .*--mix --depth 4\$' '$T/argv' &&
	grep -q '^torch-train.py .*--sync-each\$' '$T/argv' &&
	grep -q '^torch-infer.py .*--period-ms 10.0\$' '$T/argv'"
# The mixed client's kernels: 25, 50, 125 and 200 us in turn; the share
# from the GPU clock (its trace, each kernel's own length) is its own.
mxj=$T/mx/bench.json
mx1=$(python3 -c "
import json
r = [x for x in json.load(open('$mxj')) if x['tag'] == 'mxpair.mixed'][0]
s = r['summary']['default']
print('%.3f %.3f' % (s['share'][0], s['gpu_share'][0]))" 2>/dev/null)
check "mixed lengths: the share from the trace matches the client's ($mx1)" \
	within "${mx1%% *}" "${mx1#* }" 0.01
# The launch length measured over the kernels' own: per process where a
# launch is one kernel of one length; none for mixed lengths, whose
# context mean is not what the library goes by.
ml=$(python3 -c "
import json
r = dict((x['tag'], x['summary']['gpusched']['measured']) for x in json.load(open('$mxj')))
print(r['mxpair.window4'], r['mxpair.mixed'])" 2>/dev/null)
check "launch length measured: 1.1 of the kernels' own, none for mixed lengths ($ml)" \
	[ "$ml" = "[1.1, 1.1] [None, None]" ]
ts=$(python3 -c "
import json
r = [x for x in json.load(open('$mxj')) if x['tag'] == 'mxtorch.torch-train-sync'][0]
print(r['summary']['gpusched']['share'], round(r['summary']['gpusched']['err_pts'], 1))" 2>/dev/null)
check "PyTorch loops: shares are step rates over the loop alone ($ts)" [ "$ts" = "[1.2, 0.4] 0.0" ]

# The token time charged: the fake gpuschedctl charges each process as its
# FAKE_CHARGE_NS_PER_S says. Equal charges for weights 1:3 are 25 points
# off, charges of 1:3 none; a process the service does not list has no
# charge, and then the split has no figure; default has no service to ask.
cat >"$T/charge.scn" <<'SCN'
title: fake charges
seconds: 1
modes: default gpusched
proc: runtime kernel_us=100 weight=1 FAKE_INDEX=0 FAKE_N=2 FAKE_CHARGE_NS_PER_S=2e8
proc: runtime kernel_us=100 weight=3 FAKE_INDEX=1 FAKE_N=2 FAKE_CHARGE_NS_PER_S=2e8
SCN
sed 's/FAKE_INDEX=1 FAKE_N=2 FAKE_CHARGE_NS_PER_S=2e8/FAKE_INDEX=1 FAKE_N=2 FAKE_CHARGE_NS_PER_S=6e8/' \
	"$T/charge.scn" >"$T/charge13.scn"
sed 's/ FAKE_CHARGE_NS_PER_S=6e8$//' "$T/charge13.scn" >"$T/charge1.scn"
GS_BUILD=$T/build "$bench" --out "$T/ch" "$T/charge.scn" "$T/charge13.scn" \
	"$T/charge1.scn" >"$T/ch.log" 2>&1
sed 's/^/# /' "$T/ch.log"
chj=$T/ch/bench.json
chg() { jget "$chj" "$1"; }
ch=$(chg "round(r[0]['summary']['gpusched']['err_charged_pts'], 3)")
check "charges: equal for weights 1:3, 25 points off ($ch)" [ "$ch" = 25.0 ]
check "and the table has the row" grep -q '^  the same of token time charged  *-  *25$' "$T/ch.log"
ch=$(chg "round(r[1]['summary']['gpusched']['err_charged_pts'], 3)")
check "charges: 1:3 as the weights, 0 points ($ch)" [ "$ch" = 0.0 ]
ch=$(chg "r[2]['runs']['gpusched']['charged'][1], r[2]['summary']['gpusched'].get('err_charged_pts')")
check "charges: a process not listed has none, and the split no figure ($ch)" \
	[ "$ch" = "None None" ]
ch=$(chg "r[0]['runs']['default']['charged'], r[0]['summary']['default'].get('err_charged_pts')")
check "charges: none under default ($ch)" [ "$ch" = "None None" ]

# A process started late (start_s): launched that long after the instant,
# for the rest of the run, and not judged: the sum is the others'.
cat >"$T/late.scn" <<'SCN'
title: fake late start
seconds: 2
modes: default
proc: runtime kernel_us=100 FAKE_INDEX=0 FAKE_N=1
proc: runtime kernel_us=100 start_s=0.5
SCN
GS_BUILD=$T/build FAKE_ARGV_LOG=$T/late-argv "$bench" --out "$T/late" "$T/late.scn" \
	>"$T/late.log" 2>&1
lj=$T/late/bench.json
lg() { python3 -c "import json; r = json.load(open('$lj')); d = r[0]['runs']['default']; s = r[0]['summary']['default']; print($1)" 2>/dev/null; }
la=$(lg "d['procs'][1]['result']['launched_at'] - d['t0'] >= 0.5")
check "late: launched no sooner than 0.5 s after the instant ($la)" [ "$la" = True ]
check "late: run for the rest of the run (--seconds 1.5)" \
	grep -q '^gs-runtime-client --seconds 1.5 ' "$T/late-argv"
la=$(lg "s['sum'] == s['share'][0] and s['share'][0] > 0.9")
check "late: the sum is the other process's share ($la)" [ "$la" = True ]
check "late: the matrix judges the share beside a start" \
	grep -q '^late  *as-is  *share beside a start ' "$T/late.log"
sed 's/start_s=0.5/start_s=2/' "$T/late.scn" >"$T/late-bad.scn"
GS_BUILD=$T/build "$bench" --out "$T/lateb" "$T/late-bad.scn" >"$T/lateb.log" 2>&1
rc=$?
check "late: a start_s past the run is refused (exit $rc)" \
	sh -c "[ $rc != 0 ] && grep -q 'start_s is not within' '$T/lateb.log'"

# --rounds: each case runs its modes in turn that many times, and the
# matrix judges each figure's median over the rounds, with the range shown.
# Under gpusched the first pair is worse in rounds 0 and 2 (the median is
# worse), the second only in round 1 (it is not).
for r in 0,2 1; do
	cat >"$T/rnd$r.scn" <<SCN
title: fake pair, gpusched worse in rounds $r
seconds: 1
modes: default gpusched
proc: runtime kernel_us=100 FAKE_INDEX=0 FAKE_N=2 FAKE_GAP_US=100 FAKE_GPUSCHED_GAP_US=2000 FAKE_WORSE_ROUNDS=$r
proc: runtime kernel_us=100 FAKE_INDEX=1 FAKE_N=2 FAKE_GAP_US=100 FAKE_GPUSCHED_GAP_US=2000 FAKE_WORSE_ROUNDS=$r
SCN
done
mv "$T/rnd0,2.scn" "$T/rnd02.scn"
GS_BUILD=$T/build FAKE_ARGV_LOG=$T/rnd-argv "$bench" --out "$T/rnd" --rounds 3 \
	"$T/rnd02.scn" "$T/rnd1.scn" >"$T/rnd.log" 2>&1
rc=$?
sed 's/^/# /' "$T/rnd.log"
check "rounds: the bench ran (exit $rc)" [ $rc = 0 ]
nr=$(python3 -c "import json; r = json.load(open('$T/rnd/bench.json')); print(' '.join('%s.%s' % (x['name'], x['round']) for x in r))" 2>/dev/null)
check "rounds: bench.json holds every round of each case ($nr)" \
	[ "$nr" = "rnd02.0 rnd02.1 rnd02.2 rnd1.0 rnd1.1 rnd1.2" ]
check "rounds: each process is told its round in its label" \
	grep -q -- '--label gpusched/rnd1.r2/1 ' "$T/rnd-argv"
grep '^WORSE' "$T/rnd.log" | sort -u >"$T/rnd-worse"
echo 'WORSE rnd02 as-is: throughput sum: gpusched 0.8016, default 0.9901 (median of 3 rounds; worse in 2)' >"$T/rnd-worse.want"
check "rounds: worse where the median is, with the rounds it was worse in; not where one round was" \
	cmp -s "$T/rnd-worse" "$T/rnd-worse.want"
check "rounds: matrix.md gives the median and the rounds' range" \
	grep -q '| rnd1: throughput sum | as-is | 0.9901 (0.9901-0.9901) | not run | 0.9901 (0.8016-0.9901) | not run |' "$T/rnd/matrix.md"
mr=$(python3 -c "import json; m = json.load(open('$T/rnd/matrix.json')); print(' '.join('%.4f' % v for v in m['rows'][1]['rounds']['gpusched']))" 2>/dev/null)
check "rounds: matrix.json keeps each round's figure ($mr)" [ "$mr" = "0.9901 0.8016 0.9901" ]
"$bench" --dry-run --rounds 3 "$T/rnd1.scn" >"$T/rnd-plan" 2>&1
d1=$("$bench" --dry-run "$T/rnd1.scn" 2>&1 | sed -n 's/.*estimated \([0-9]*\) s.*/\1/p')
d3=$(sed -n 's/.*estimated \([0-9]*\) s.*/\1/p' "$T/rnd-plan")
check "rounds: the plan says so and its estimate holds every round ($d1 s, $d3 s)" \
	sh -c "grep -q 'default,gpusched x 3 rounds' '$T/rnd-plan' &&
	[ \$(( ($d3 - 3) - 3 * ($d1 - 3) )) -le 1 ] && [ \$(( ($d3 - 3) - 3 * ($d1 - 3) )) -ge -1 ]"
"$bench" --dry-run --rounds 0 "$T/rnd1.scn" >"$T/rnd0.log" 2>&1
rc=$?
check "rounds: --rounds 0 is refused (exit $rc)" \
	sh -c "[ $rc != 0 ] && grep -q 'rounds: at least 1' '$T/rnd0.log'"

# A process alone that waits for each kernel before it launches the next:
# the GPU idles 10 us after each of its kernels (11 under gpusched), which
# the matrix gives by the GPU's clock beside the ratio to plain. Under
# gpusched its library's stats say it measured 1.25 times its kernels'
# traced mean length per launch, over twice the launches traced.
cat >"$T/gap.scn" <<'SCN'
title: fake loop alone, waiting for each kernel
seconds: 1
modes: default gpusched
proc: runtime kernel_us=20 FAKE_INDEX=0 FAKE_N=1 FAKE_KGAP_US=10 FAKE_GPUSCHED_KGAP_US=11 FAKE_GPUSCHED_MEASURED=1.25
SCN
GS_BUILD=$T/build "$bench" --out "$T/gap" "$T/gap.scn" >"$T/gap.log" 2>&1
rc=$?
sed 's/^/# /' "$T/gap.log"
check "gap: the bench ran (exit $rc)" [ $rc = 0 ]
check "gap: the table gives the process's gap between its kernels, per mode" \
	grep -q '^  0 gap between its kernels p50 us  *10  *11$' "$T/gap.log"
check "gap: the matrix gives it beside the ratio to plain, not judged" \
	grep -q '| gap: gap between kernels p50 us | as-is | 10 | not run | 11 | not run |' "$T/gap/matrix.md"
# The GPU idle between the process's kernels, over its trace's span: in
# each 10 ms slice, 332 kernels of 20 us 30 us apart after a 40 us gap
# (0.336 idle), 321 of them 31 us apart under gpusched (0.358).
i0=$(jget "$T/gap/bench.json" "r[0]['summary']['default']['own_idle'][0]")
i1=$(jget "$T/gap/bench.json" "r[0]['summary']['gpusched']['own_idle'][0]")
check "gap: idle between its kernels, 0.336 of the time ($i0)" within "$i0" 0.336 0.001
check "gap: ... and 0.358 under gpusched ($i1)" within "$i1" 0.358 0.001
check "gap: the table gives it per mode" \
	grep -q "^  0 idle between its kernels, others' apart  *0.336  *0.358$" "$T/gap.log"
check "gap: the table gives the launch length measured over the traced, under gpusched only" \
	grep -q "^  0 launch length measured / its kernels' own  *-  *1.25$" "$T/gap.log"

# bench_run NAME ARG...: the bench with --out $T/NAME, its output in
# $T/NAME.log (shown), its exit status in rc.
bench_run() {
	br=$1
	shift
	GS_BUILD=$T/build "$bench" --out "$T/$br" "$@" >"$T/$br.log" 2>&1
	rc=$?
	sed 's/^/# /' "$T/$br.log"
}
# mode_order NAME: the modes run of scenario NAME, in order, on one line.
mode_order() {
	sed -n "s/^== $1: \\([a-z+-]*\\) .*/\\1/p" "$T/$1.log" | tr '\n' ' '
}

# --modes hooks: the library's hooks alone (GPUSCHED_MPS=1, the latency
# class; the fake's gap is then 11 us, 12 under gpusched), run just before gpusched and given
# in a column of its own; not run unless named (the gap run above).
sed 's/FAKE_GPUSCHED_KGAP_US=11/FAKE_GPUSCHED_KGAP_US=12 FAKE_HOOKS_KGAP_US=11/' "$T/gap.scn" >"$T/hooks.scn"
bench_run hooks --modes gpusched,hooks,default "$T/hooks.scn"
check "hooks: the bench ran (exit $rc)" [ $rc = 0 ]
check "hooks: the modes in the scenario's order, the hooks just before gpusched" \
	[ "$(mode_order hooks)" = 'default hooks gpusched ' ]
check "hooks: the processes run with the hooks alone (their gap 11 us)" \
	grep -q '^  0 gap between its kernels p50 us  *10  *11  *12$' "$T/hooks.log"
check "hooks: matrix.md gives the hooks a column of their own" \
	grep -q '| hooks: gap between kernels p50 us | as-is | 10 | not run | 11 | 12 | not run |' "$T/hooks/matrix.md"

# --base-lib: mode gpusched-base, gpusched with another build of the
# library (here the same file under another name: the fake's gap is then
# 10 us, 11 under gpusched), just before gpusched, in a column of its own;
# every figure where gpusched is worse than it is listed.
ln -s "$B/libgpusched/libgpusched.so.1" "$T/base.so"
sed 's/FAKE_GPUSCHED_KGAP_US=11/FAKE_GPUSCHED_KGAP_US=11 FAKE_BASE_KGAP_US=10/' "$T/gap.scn" >"$T/base.scn"
FAKE_BASE_LIB=$T/base.so bench_run base --base-lib "$T/base.so" "$T/base.scn"
check "base: the bench ran (exit $rc)" [ $rc = 0 ]
check "base: the modes in the scenario's order, the base library just before gpusched" \
	[ "$(mode_order base)" = 'default gpusched-base gpusched ' ]
check "base: the processes run with the base library (their gap 10 us)" \
	grep -q '^  0 gap between its kernels p50 us  *10  *10  *11$' "$T/base.log"
check "base: gpusched's lower throughput than the base library's is listed" \
	grep -q '^REGRESSED base as-is: throughput: gpusched 0.6[0-9]*, gpusched-base 0.6' "$T/base.log"
check "base: and counted" grep -q '^1 case(s) where gpusched is worse than gpusched-base$' "$T/base.log"
check "base: matrix.md gives the base library a column of its own" \
	grep -q '| scenario | client | default | MPS | gpusched-base | gpusched | MPS+gpusched |' "$T/base/matrix.md"
bench_run nobase --modes default,gpusched-base "$T/base.scn"
check "base: mode gpusched-base without --base-lib is refused (exit $rc)" [ $rc = 2 ]
check "base: saying what is missing" grep -q 'give the library to run with --base-lib' "$T/nobase.log"

echo "1..$n"
[ $failed = 0 ]
