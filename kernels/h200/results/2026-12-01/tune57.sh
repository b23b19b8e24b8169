#!/bin/bash
# A/B: build/ holds the committed library (3326cce), build/vT the one that
# times kernels one by one beside a latency client when launch lengths are
# unsteady (kernel_times()), alternated on one machine.
B=$PWD/build
T="
h-1 torch-infer gpusched
t-1 torch-infer gpusched GS_BUILD=$B/vT
h-2 torch-infer gpusched
t-2 torch-infer gpusched GS_BUILD=$B/vT
h-3 torch-infer gpusched
t-3 torch-infer gpusched GS_BUILD=$B/vT
d-1 torch-infer default"
P="
ph-1 probe-hog100 gpusched
pt-1 probe-hog100 gpusched GS_BUILD=$B/vT
ph-2 probe-hog100 gpusched
pt-2 probe-hog100 gpusched GS_BUILD=$B/vT"
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv > $OUT/machine.txt
GS_TUNE="$T" kernels/h200/tune.sh
mkdir -p $OUT/p
GS_TUNE="$P" GS_SECONDS=12 OUT=$OUT/p kernels/h200/tune.sh
cd $OUT && tar czf x.tgz */ build.log 2>/dev/null; rm -rf -- */
