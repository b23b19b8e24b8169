#!/bin/bash
# tune70: vN's holder answered the early ask 100-200 us late (yield_answer
# p50 104-204 us against 2 us for the head): it drained until its queue
# held no more than the time to the request, and its queue counts the
# kernel running whole. vN2: asked early, the holder hands the token over
# at once (up to GPUSCHED_HANDOVER_US of work left): its queue was built
# to end by the request. Alternated twice with the head.
P="
h100-1 probe-hog100 gpusched
n200-1 probe-hog100 gpusched GPUSCHED_LATENCY_LEAD_US=200 GS_X_ASK_LEAD_US=200
n300-1 probe-hog100 gpusched GPUSCHED_LATENCY_LEAD_US=300 GS_X_ASK_LEAD_US=300
n400-1 probe-hog100 gpusched GPUSCHED_LATENCY_LEAD_US=400 GS_X_ASK_LEAD_US=400
h100-2 probe-hog100 gpusched
n200-2 probe-hog100 gpusched GPUSCHED_LATENCY_LEAD_US=200 GS_X_ASK_LEAD_US=200
n300-2 probe-hog100 gpusched GPUSCHED_LATENCY_LEAD_US=300 GS_X_ASK_LEAD_US=300
n400-2 probe-hog100 gpusched GPUSCHED_LATENCY_LEAD_US=400 GS_X_ASK_LEAD_US=400"
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv > $OUT/machine.txt
GS_TUNE="$P" GS_SECONDS=12 GS_KEEP_TRACES=1 kernels/h200/tune.sh
cd $OUT && tar czf x.tgz */ build.log 2>/dev/null; rm -rf -- */
