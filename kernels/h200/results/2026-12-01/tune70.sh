#!/bin/bash
# tune69: a longer lead takes the probe's p99 to 242-251 us (lead 300)
# but the busy process to 0.68-0.69, because the holder takes the ask
# for the request: its queue ends at the predicted ask, and the GPU idles
# from there to the request. vN (GS_X_ASK_LEAD_US=A in the holder): the
# request comes A after the ask; the holder queues up to then and, when
# asked, hands the token over at once with that work still running.
# Alternated twice with the head (A unset is the head).
P="
h100-1 probe-hog100 gpusched
n300-1 probe-hog100 gpusched GPUSCHED_LATENCY_LEAD_US=300 GS_X_ASK_LEAD_US=300
n200-1 probe-hog100 gpusched GPUSCHED_LATENCY_LEAD_US=200 GS_X_ASK_LEAD_US=200
n400-1 probe-hog100 gpusched GPUSCHED_LATENCY_LEAD_US=400 GS_X_ASK_LEAD_US=400
h100-2 probe-hog100 gpusched
n300-2 probe-hog100 gpusched GPUSCHED_LATENCY_LEAD_US=300 GS_X_ASK_LEAD_US=300
n200-2 probe-hog100 gpusched GPUSCHED_LATENCY_LEAD_US=200 GS_X_ASK_LEAD_US=200
n400-2 probe-hog100 gpusched GPUSCHED_LATENCY_LEAD_US=400 GS_X_ASK_LEAD_US=400"
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv > $OUT/machine.txt
GS_TUNE="$P" GS_SECONDS=12 GS_KEEP_TRACES=1 kernels/h200/tune.sh
cd $OUT && tar czf x.tgz */ build.log 2>/dev/null; rm -rf -- */
