#!/bin/bash
# Is the tail of the probe's way to the token (tune64: asked -> granted
# p90 177-206 us, p99 372-451 us) the arbiter's wake-ups? The debug
# scenario of tune64, alternated: the arbiter as it is, and with
# --poll-us 3000 (it looks without sleeping for 3 ms after each request:
# with a request every 2 ms, always).
S=$PWD/kernels/h200/results/2026-12-01/scn/probe-hog100-debug.scn
P="
b-1 $S gpusched
p-1 $S gpusched GS_ARBITER_ARGS=--poll-us=3000
b-2 $S gpusched
p-2 $S gpusched GS_ARBITER_ARGS=--poll-us=3000"
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv > $OUT/machine.txt
GS_TUNE="$P" GS_SECONDS=12 GS_KEEP_TRACES=1 kernels/h200/tune.sh
cd $OUT && tar czf x.tgz */ build.log 2>/dev/null; rm -rf -- */
