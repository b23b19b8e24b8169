#!/bin/bash
# Where the probe's slowest 1 % beside busy 100 us kernels spend their
# time: the probe now records per request how long its launch call took
# (a wait for the token) and how late it woke for its tick. Three runs of
# the head library.
P="
p-1 probe-hog100 gpusched
p-2 probe-hog100 gpusched
p-3 probe-hog100 gpusched"
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv > $OUT/machine.txt
GS_TUNE="$P" GS_SECONDS=12 GS_KEEP_TRACES=1 kernels/h200/tune.sh
cd $OUT && tar czf x.tgz */ build.log 2>/dev/null; rm -rf -- */
