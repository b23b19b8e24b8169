#!/bin/bash
# The probe's way to the token, from the library's own words: both
# processes of probe-hog100 with GPUSCHED_DEBUG=1 (the probe says per
# request how long before its request the early-asked token came; the
# busy one says which requests came off its predicted beat and how late it
# saw them). Two runs of the head; traces kept.
S=$PWD/kernels/h200/results/2026-12-01/scn/probe-hog100-debug.scn
P="
d-1 $S gpusched
d-2 $S gpusched"
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv > $OUT/machine.txt
GS_TUNE="$P" GS_SECONDS=12 GS_KEEP_TRACES=1 kernels/h200/tune.sh
cd $OUT && tar czf x.tgz */ build.log 2>/dev/null; rm -rf -- */
