#!/bin/bash
# A/B of the PyTorch inference regression: build/vA holds the library of
# bcb9f72, build/vD that of daf7669 with tune53-vD.diff ("blocking"),
# build/ that of daf7669; each build/vX also links kernels, daemon and
# devlibs to ../ (Documentation/benchmarks.md, 2026-12-01).
B=$PWD/build
T=""
for r in 1 2 3; do
T="$T
a-$r torch-infer gpusched GS_BUILD=$B/vA
d-$r torch-infer gpusched GS_BUILD=$B/vD
c-$r torch-infer gpusched"
done
export GS_TUNE="$T"
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv > $OUT/machine.txt
kernels/h200/tune.sh
cd $OUT && tar czf x.tgz */ build.log 2>/dev/null; rm -rf -- */
