#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# scale-vm.sh [SERIES [N...]]: the scale table of Documentation/scale.md.
# Boots Debian's SERIES kernel (default 6.1) under QEMU with gpusched.ko
# and runs tests/bench/gs-scale for N attached clients each (default
# 10 100 1000 10000), then prints its table. A measurement: it judges
# nothing, and `make check` runs only gs-scale's small functional run.
#
# Environment: GS_SCALE_GRANTS (hand-offs timed per N, default 20000),
# GS_SCALE_WAITERS (clients that wait, default 0: all but one),
# GS_SCALE_HOT (waiters of the greatest weight, the others of the least;
# default 0: all of one weight),
# VM_MEM (MiB, default 4096: 10,000 waiting threads), VM_SMP (default 1:
# see Documentation/scale.md), VM_KO (an older module, to compare),
# and what tests/vm/run.sh takes.
set -eu

cd "$(dirname "$0")/../.."
series=${1:-6.1}
[ $# -gt 0 ] && shift
counts=${*:-10 100 1000 10000}
make -s build/tests/bench/gs-scale
args=build/tests/bench/gs-scale.args
echo "-g ${GS_SCALE_GRANTS:-20000} -w ${GS_SCALE_WAITERS:-0} -H ${GS_SCALE_HOT:-0} $counts" >"$args"
VM_TESTS=build/tests/bench/gs-scale VM_EXTRA="$args:/tests/gs-scale.args" \
VM_MEM=${VM_MEM:-4096} VM_TEST_TIMEOUT=${VM_TEST_TIMEOUT:-3000} \
VM_SMP=${VM_SMP:-1} VM_TIMEOUT=${VM_TIMEOUT:-3600} \
	tests/vm/run.sh "$series" >build/tests/bench/scale-vm.tap || true
out=$(sed -n 's/^# kernel .*, artefacts in //p' build/tests/bench/scale-vm.tap)
cat "$out/steps/gs-scale.out"
grep -q '^not ok' build/tests/bench/scale-vm.tap && {
	echo "scale-vm.sh: the VM run failed: build/tests/bench/scale-vm.tap" >&2
	exit 1
}
exit 0
