#!/bin/bash
# The holder's late answers to the probe's early ask (tune67: p90 92-160
# us) are mostly its drain: yield_answer_us runs to the yield call, after
# draining to GS_LAT_HANDOVER_NS (100 us) of work left, and the slowest
# requests had one or two of its kernels start after the request. vL
# leaves 200 us to a latency client: the release, and with it the grant,
# no longer waits for work that ends before the request launches anyway.
# Alternated three times with the head, the debug scenario of tune64.
B=$PWD/build
S=$PWD/kernels/h200/results/2026-12-01/scn/probe-hog100-debug.scn
P="
h-1 $S gpusched
l-1 $S gpusched GS_BUILD=$B/vL
h-2 $S gpusched
l-2 $S gpusched GS_BUILD=$B/vL
h-3 $S gpusched
l-3 $S gpusched GS_BUILD=$B/vL"
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv > $OUT/machine.txt
GS_TUNE="$P" GS_SECONDS=12 GS_KEEP_TRACES=1 kernels/h200/tune.sh
cd $OUT && tar czf x.tgz */ build.log 2>/dev/null; rm -rf -- */
