#!/bin/bash
# After tune58: vT without the 256-launch stickiness of the timing (a
# process times its kernels only while its lengths are unsteady), beside
# the probe (steady 100 us kernels: the path that must not change) and
# once more beside the inference.
B=$PWD/build
P="
ph-1 probe-hog100 gpusched
pt-1 probe-hog100 gpusched GS_BUILD=$B/vT
ph-2 probe-hog100 gpusched
pt-2 probe-hog100 gpusched GS_BUILD=$B/vT
pt-3 probe-hog100 gpusched GS_BUILD=$B/vT"
T="
t-1 torch-infer gpusched GS_BUILD=$B/vT"
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv > $OUT/machine.txt
GS_TUNE="$P" GS_SECONDS=12 kernels/h200/tune.sh
mkdir -p $OUT/t
GS_TUNE="$T" OUT=$OUT/t kernels/h200/tune.sh
cd $OUT && tar czf x.tgz */ build.log 2>/dev/null; rm -rf -- */
