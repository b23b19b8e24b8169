#!/bin/bash
# What timing every kernel costs (ae63b90): the PyTorch training beside the
# inference with GPUSCHED_TIME_KERNELS=0 and with the default, alternated
# twice; the PyTorch clients now report their CPU time (cores).
P="
on-1 torch-infer gpusched
off-1 torch-infer gpusched GPUSCHED_TIME_KERNELS=0
on-2 torch-infer gpusched
off-2 torch-infer gpusched GPUSCHED_TIME_KERNELS=0"
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv > $OUT/machine.txt
GS_TUNE="$P" kernels/h200/tune.sh
cd $OUT && tar czf x.tgz */ build.log 2>/dev/null; rm -rf -- */
