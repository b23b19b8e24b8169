#!/bin/bash
# The probe's slow requests wait in their launch call for the early-asked
# token (tune61). Alternated: the head; GPUSCHED_LATENCY_LEAD_US=200 (the
# ask twice as early); vQ (the neighbour's queue may end
# GS_LAT_HANDOVER_NS after the predicted ask, not at it: that much is
# left running at the hand-over anyway); both.
B=$PWD/build
P="
b-1 probe-hog100 gpusched
q-1 probe-hog100 gpusched GS_BUILD=$B/vQ
l-1 probe-hog100 gpusched GPUSCHED_LATENCY_LEAD_US=200
ql-1 probe-hog100 gpusched GS_BUILD=$B/vQ GPUSCHED_LATENCY_LEAD_US=200
b-2 probe-hog100 gpusched
q-2 probe-hog100 gpusched GS_BUILD=$B/vQ
l-2 probe-hog100 gpusched GPUSCHED_LATENCY_LEAD_US=200
ql-2 probe-hog100 gpusched GS_BUILD=$B/vQ GPUSCHED_LATENCY_LEAD_US=200
b1ms-1 probe-hog1ms gpusched
ql1ms-1 probe-hog1ms gpusched GS_BUILD=$B/vQ GPUSCHED_LATENCY_LEAD_US=200"
T="
tb-1 torch-infer gpusched
tql-1 torch-infer gpusched GS_BUILD=$B/vQ GPUSCHED_LATENCY_LEAD_US=200"
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv > $OUT/machine.txt
GS_TUNE="$P" GS_SECONDS=12 GS_KEEP_TRACES=1 kernels/h200/tune.sh
mkdir -p $OUT/t
GS_TUNE="$T" OUT=$OUT/t kernels/h200/tune.sh
cd $OUT && tar czf x.tgz */ build.log 2>/dev/null; rm -rf -- */
