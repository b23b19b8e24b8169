#!/bin/bash
# A/B again after tune57: build/ the committed library (3326cce), build/vT
# the kernel-timing one (a launch framed only when its own start event or
# a pending one came just before it); tq: the same with the queue toward a
# request bounded at 4 ms (GPUSCHED_QUEUE_US=4000).
B=$PWD/build
T="
h-1 torch-infer gpusched
t-1 torch-infer gpusched GS_BUILD=$B/vT
h-2 torch-infer gpusched
t-2 torch-infer gpusched GS_BUILD=$B/vT
tq-1 torch-infer gpusched GS_BUILD=$B/vT GPUSCHED_QUEUE_US=4000
t-3 torch-infer gpusched GS_BUILD=$B/vT"
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv > $OUT/machine.txt
GS_TUNE="$T" kernels/h200/tune.sh
cd $OUT && tar czf x.tgz */ build.log 2>/dev/null; rm -rf -- */
