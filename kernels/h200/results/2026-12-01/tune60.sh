#!/bin/bash
# The head (vH, 5da8ca8) against lat_back (the working tree): after a
# latency client's turn, the neighbour's queue stays at
# GPUSCHED_QUEUE_LATENCY_US for twice as long as the turn took. Beside the
# PyTorch inference (its latency_acquires say why it asked) and beside the
# probe (busy share must stay >= 0.75).
B=$PWD/build
T="
h-1 torch-infer gpusched GS_BUILD=$B/vH
b-1 torch-infer gpusched
h-2 torch-infer gpusched GS_BUILD=$B/vH
b-2 torch-infer gpusched"
P="
ph-1 probe-hog100 gpusched GS_BUILD=$B/vH
pb-1 probe-hog100 gpusched
ph-2 probe-hog100 gpusched GS_BUILD=$B/vH
pb-2 probe-hog100 gpusched"
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv > $OUT/machine.txt
mkdir -p $OUT/t
GS_TUNE="$T" OUT=$OUT/t kernels/h200/tune.sh
GS_TUNE="$P" GS_SECONDS=12 kernels/h200/tune.sh
cd $OUT && tar czf x.tgz */ build.log 2>/dev/null; rm -rf -- */
