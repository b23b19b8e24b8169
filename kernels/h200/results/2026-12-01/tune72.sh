#!/bin/bash
# The early ask with a time (GPUSCHED_ACQUIRE_DUE, yield_due_ns; the
# library asks 400 us ahead where the service takes it) against the head
# library (build/vH: 6ba674f's, which asks 100 us ahead without a time),
# both with this arbiter, alternated: three times beside busy 100 us
# kernels, once beside 1 ms kernels, once PyTorch training + inference.
B=$PWD/build
P="
h-1 probe-hog100 gpusched GS_BUILD=$B/vH
d-1 probe-hog100 gpusched
h-2 probe-hog100 gpusched GS_BUILD=$B/vH
d-2 probe-hog100 gpusched
h-3 probe-hog100 gpusched GS_BUILD=$B/vH
d-3 probe-hog100 gpusched
h1ms probe-hog1ms gpusched GS_BUILD=$B/vH
d1ms probe-hog1ms gpusched
htorch torch-infer gpusched GS_BUILD=$B/vH
dtorch torch-infer gpusched"
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv > $OUT/machine.txt
GS_TUNE="$P" GS_SECONDS=12 GS_KEEP_TRACES=1 kernels/h200/tune.sh
cd $OUT && tar czf x.tgz */ build.log 2>/dev/null; rm -rf -- */
