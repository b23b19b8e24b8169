#!/bin/bash
# A/B: build/ holds the library kept (waits poll far from a request only
# while the launch length is steady; X_POLL, unset, was a switch of that
# build only), build/vD and build/vC as in tune53.sh and tune54.sh.
B=$PWD/build
T="
d-1 torch-infer gpusched GS_BUILD=$B/vD
h-1 torch-infer gpusched
d-2 torch-infer gpusched GS_BUILD=$B/vD
h-2 torch-infer gpusched
h-3 torch-infer gpusched"
P="
pc-1 probe-hog100 gpusched GS_BUILD=$B/vC
ph-1 probe-hog100 gpusched
pc-2 probe-hog100 gpusched GS_BUILD=$B/vC
ph-2 probe-hog100 gpusched"
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv > $OUT/machine.txt
GS_TUNE="$T" kernels/h200/tune.sh
mkdir -p $OUT/p
GS_TUNE="$P" GS_SECONDS=12 OUT=$OUT/p kernels/h200/tune.sh
cd $OUT && tar czf x.tgz */ build.log 2>/dev/null; rm -rf -- */
