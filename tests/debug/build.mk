# SPDX-License-Identifier: GPL-2.0
#
# make check-debug: the in-VM tests on a debug kernel (KASAN, lockdep,
# UBSAN, kmemleak, DEBUG_LIST, DEBUG_VM, debug objects) built from Debian's
# linux-source-6.1 by tests/debug/build-kernel.sh and cached in
# build/debug-kernel/. The fuzzers run for DEBUG_FUZZ_SECONDS there.
#
# make check-kcsan: the same on the second debug kernel, KCSAN and fault
# injection (tests/debug/kcsan.config, cached in build/kcsan-kernel/),
# where tests/kselftest/faultinject.c runs. Same knobs; prove waits up to
# TAP_TIMEOUT (5400 s) for the VM, as faultinject adds to the run, and up
# to 2700 s for the debug kernel's (830 s of VM on 2026-12-01: over the
# default 900 s with the boot).

DEBUG_FUZZ_SECONDS ?= 60

.PHONY: check-debug debug-kernel check-kcsan kcsan-kernel
debug-kernel:
	$(Q)tests/tools/install-deps.sh
	$(Q)tests/debug/build-kernel.sh >/dev/null

kcsan-kernel:
	$(Q)tests/tools/install-deps.sh
	$(Q)tests/debug/build-kernel.sh kcsan >/dev/null

check-debug: debug-kernel
	$(Q)tests/tools/install-deps.sh
	$(Q)$(MAKE) user $(CHECK_TARGETS) || \
		{ echo "build failed"; echo "0 passed, 1 failed, 0 skipped"; exit 1; }
	$(Q)$(VM_ENV) DEBUG_FUZZ_SECONDS=$(DEBUG_FUZZ_SECONDS) \
		TAP_TIMEOUT=$${TAP_TIMEOUT:-2700} \
		tests/tools/prove-count $(PROVE_FLAGS) tests/debug/vm-debug.t

check-kcsan: kcsan-kernel
	$(Q)tests/tools/install-deps.sh
	$(Q)$(MAKE) user $(CHECK_TARGETS) || \
		{ echo "build failed"; echo "0 passed, 1 failed, 0 skipped"; exit 1; }
	$(Q)$(VM_ENV) DEBUG_FUZZ_SECONDS=$(DEBUG_FUZZ_SECONDS) \
		TAP_TIMEOUT=$${TAP_TIMEOUT:-5400} \
		tests/tools/prove-count $(PROVE_FLAGS) tests/debug/vm-kcsan.t
