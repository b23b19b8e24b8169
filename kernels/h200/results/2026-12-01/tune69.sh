#!/bin/bash
# Two questions, one machine.
# 1. The inference loop alone at several MLP widths (design.md's baseline
#    loop had a p99 of 486 us alone; ours, 4096 wide, 856-992 us): how much
#    of its latency is the GPU's work and how much the host's?
# 2. The probe beside busy 100 us kernels: is there a setting on this
#    machine with p99 <= 400 us and the busy process >= 0.75? The lead
#    (0: no early ask; 100, the default; 300) and everything awake (the
#    arbiter polling, lead 200), alternated twice.
R=$PWD/kernels/h200/results/2026-12-01
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv > $OUT/machine.txt
kernels/h200/build.sh $OUT/build.log || { tail -20 $OUT/build.log; exit 1; }
for w in 4096 2048 1024 512 4096; do
	echo "== infer alone width $w"
	python3 kernels/torch-infer.py --seconds 6 --span --width $w
done 2>&1 | tee $OUT/infer-alone.txt
P="
w1024 $R/scn/torch-infer-w1024.scn default,gpusched
w2048 $R/scn/torch-infer-w2048.scn default,gpusched
l100-1 probe-hog100 gpusched
l0-1 probe-hog100 gpusched GPUSCHED_LATENCY_LEAD_US=0
l300-1 probe-hog100 gpusched GPUSCHED_LATENCY_LEAD_US=300
awake-1 probe-hog100 gpusched GPUSCHED_LATENCY_LEAD_US=200 GS_ARBITER_ARGS=--poll-us=3000
l100-2 probe-hog100 gpusched
l0-2 probe-hog100 gpusched GPUSCHED_LATENCY_LEAD_US=0
l300-2 probe-hog100 gpusched GPUSCHED_LATENCY_LEAD_US=300
awake-2 probe-hog100 gpusched GPUSCHED_LATENCY_LEAD_US=200 GS_ARBITER_ARGS=--poll-us=3000"
GS_TUNE="$P" GS_SECONDS=12 GS_KEEP_TRACES=1 kernels/h200/tune.sh
cd $OUT && tar czf x.tgz */ build.log 2>/dev/null; rm -rf -- */
