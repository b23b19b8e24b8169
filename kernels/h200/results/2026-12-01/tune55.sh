#!/bin/bash
# A/B: build/vC holds the library of daf7669, build/ that of daf7669 with
# the queue toward a predicted request bounded at est + X_DEVK x deviation
# (not kept).
B=$PWD/build
T=""; P=""
for r in 1 2; do
T="$T
c-$r torch-infer gpusched GS_BUILD=$B/vC
f1-$r torch-infer gpusched X_DEVK=1
f2-$r torch-infer gpusched X_DEVK=2"
P="$P
pc-$r probe-hog100 gpusched GS_BUILD=$B/vC
pf1-$r probe-hog100 gpusched X_DEVK=1
pf2-$r probe-hog100 gpusched X_DEVK=2"
done
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv > $OUT/machine.txt
GS_TUNE="$T" kernels/h200/tune.sh
mkdir -p $OUT/p
GS_TUNE="$P" GS_SECONDS=12 OUT=$OUT/p kernels/h200/tune.sh
cd $OUT && tar czf x.tgz */ build.log 2>/dev/null; rm -rf -- */
