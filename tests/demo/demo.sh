#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The main job of `make demo`. With an NVIDIA GPU, CUDA clients with
# weights 1:2:4 share it through libgpusched (kernels/demo-gpu.sh); without
# one, the module runs in a VM on Debian's 6.1 kernel and token-demo's busy
# clients share a token there.
set -eu
cd "$(dirname "$0")/../.."

if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU' &&
	[ -x kernels/demo-gpu.sh ]; then
	exec kernels/demo-gpu.sh
fi

echo "No GPU here: booting Debian's 6.1 kernel under QEMU with gpusched.ko;"
echo "three busy clients with weights 1:2:4 share one token for 4 s."
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! VM_TESTS=build/demo/bin/token-demo \
	VM_EXTRA=build/demo/bin/token-demo.args:/tests/token-demo.args \
	tests/vm/run.sh 6.1 >"$log" 2>&1; then
	cat "$log"
	echo "demo: the VM run failed (log above)" >&2
	exit 1
fi
out=$(ls -d build/vm-6.1.*/steps 2>/dev/null | tail -n 1)/token-demo.out
echo
cat "$out"
