#!/bin/bash
# A/B: build/vC holds the library of daf7669, build/ that of daf7669 with
# every look of wait_ev() a sample (not kept), build/vD as in tune53.sh.
B=$PWD/build
T=""; P=""
for r in 1 2; do
T="$T
c-$r torch-infer gpusched GS_BUILD=$B/vC
e-$r torch-infer gpusched
d-$r torch-infer gpusched GS_BUILD=$B/vD"
P="$P
pc-$r probe-hog100 gpusched GS_BUILD=$B/vC
pe-$r probe-hog100 gpusched
pd-$r probe-hog100 gpusched GS_BUILD=$B/vD"
done
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv > $OUT/machine.txt
GS_TUNE="$T" kernels/h200/tune.sh
mkdir -p $OUT/p
GS_TUNE="$P" GS_SECONDS=12 OUT=$OUT/p kernels/h200/tune.sh
cd $OUT && tar czf x.tgz */ build.log 2>/dev/null; rm -rf -- */
