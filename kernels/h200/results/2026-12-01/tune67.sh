#!/bin/bash
# gpuschedd --arbiter --handover-poll-us (default 300): after asking a
# holder to yield, the arbiter looks for its release without sleeping, so
# that the grant to the waiter needs no wake-up. The debug scenario of
# tune64 (the probe's way from its early ask to the grant), alternated
# with --handover-poll-us=0 (as before); the arbiter's CPU time is in its
# exit line in bench.log.
S=$PWD/kernels/h200/results/2026-12-01/scn/probe-hog100-debug.scn
P="
off-1 $S gpusched GS_ARBITER_ARGS=--handover-poll-us=0
on-1 $S gpusched
off-2 $S gpusched GS_ARBITER_ARGS=--handover-poll-us=0
on-2 $S gpusched
off-3 $S gpusched GS_ARBITER_ARGS=--handover-poll-us=0
on-3 $S gpusched"
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv > $OUT/machine.txt
GS_TUNE="$P" GS_SECONDS=12 GS_KEEP_TRACES=1 kernels/h200/tune.sh
cd $OUT && tar czf x.tgz */ build.log 2>/dev/null; rm -rf -- */
