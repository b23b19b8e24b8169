#!/bin/bash
# tune72: the early ask with a time met the probe's targets in two runs of
# three where the head met them in none, but PyTorch's inference beside
# training had a p99 of 4816 us against 2359 us: the training loop
# answered the ask 224 us late at the median (the head: 2 us), handing over
# with up to GPUSCHED_HANDOVER_US of its work left whether or not its
# queue had been bounded by that request. Now it leaves the work that ends
# by the request (plus 100 us) only for a request that came when
# predicted. Alternated with the head twice, both scenarios.
B=$PWD/build
P="
htorch-1 torch-infer gpusched GS_BUILD=$B/vH
dtorch-1 torch-infer gpusched
h-1 probe-hog100 gpusched GS_BUILD=$B/vH
d-1 probe-hog100 gpusched
htorch-2 torch-infer gpusched GS_BUILD=$B/vH
dtorch-2 torch-infer gpusched
h-2 probe-hog100 gpusched GS_BUILD=$B/vH
d-2 probe-hog100 gpusched"
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv > $OUT/machine.txt
GS_TUNE="$P" GS_SECONDS=12 GS_KEEP_TRACES=1 kernels/h200/tune.sh
cd $OUT && tar czf x.tgz */ build.log 2>/dev/null; rm -rf -- */
