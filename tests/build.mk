# SPDX-License-Identifier: GPL-2.0
#
# Tests: the kselftest programs that run inside a VM (tests/kselftest/), the
# VM runs on the Debian kernels (tests/vm/), and `make check`, which runs
# every TAP test of the tree under prove.

KSELFTEST_DIR := $(B)/kselftest
KSELFTEST_BINS := $(patsubst tests/kselftest/%.c,$(KSELFTEST_DIR)/bin/%, \
	$(wildcard tests/kselftest/*.c))

# Kernel series to boot: `make check VM_KERNELS=6.1` tests one.
VM_KERNELS ?= 6.1 6.12
VM_T = $(foreach k,$(VM_KERNELS),tests/vm/vm-$(k).t)
# Other fragments add "hostpath:guestpath" pairs to VM_EXTRA to put their
# programs and libraries in the VM; executables under /tests/ run as tests.
# Tests run as from a shell: make's flags and jobserver are not theirs (a
# make run inside a test would warn, and the module build fails on that).
VM_ENV = env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
	VM_TESTS="$(abspath $(KSELFTEST_BINS))" VM_EXTRA="$(VM_EXTRA)"
# -v: CI logs keep every diagnostic; PROVE_FLAGS= for the summary alone.
PROVE_FLAGS ?= -v

tests_msg = $(if $(Q),@echo "  $(1)	$(2)")

CHECK_TARGETS += vm-tests

.PHONY: vm-tests vm-check
vm-tests: $(KSELFTEST_BINS)

$(KSELFTEST_DIR)/kselftest_harness.h:
	$(call tests_msg,EXTRACT,$@)
	$(Q)tests/tools/extract-kselftest.sh $(KSELFTEST_DIR)

# The harness's EXPECT_*() compare values of mixed signedness on purpose
# (and print each with its own), and its signal handler has an unused
# parameter: -Wextra would reject the kernel's own header.
KSELFTEST_CFLAGS = $(USER_CFLAGS) -Wno-sign-compare -Wno-unused-parameter \
	-I$(KSELFTEST_DIR)

# Static, so that the VM needs no libraries for them.
$(KSELFTEST_DIR)/bin/%: tests/kselftest/%.c tests/kselftest/gs_test.h \
		tests/kselftest/gs_module.h kmod/uapi/linux/gpusched.h \
		$(KSELFTEST_DIR)/kselftest_harness.h
	$(call tests_msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(KSELFTEST_CFLAGS) -static -pthread -o $@ $<

# The scale measurement (Documentation/scale.md). Without arguments it is a
# small functional run, which joins the VM suite; the table is made by hand.
GS_SCALE := $(B)/tests/bench/gs-scale
$(GS_SCALE): tests/bench/gs-scale.c tests/fuzz/fuzz-nl.h kmod/uapi/linux/gpusched.h
	$(call tests_msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(USER_CFLAGS) -static -pthread -o $@ $<
vm-tests: $(GS_SCALE)
VM_EXTRA += $(GS_SCALE):/tests/gs-scale

# The policy's own cost per hand-off, on the host (Documentation/scale.md).
$(B)/tests/bench/pol-scale: tests/bench/pol-scale.c kmod/policy.c kmod/mem.c kmod/policy.h \
		$(KCOMPAT_HDRS) kmod/uapi/linux/gpusched.h
	$(call tests_msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(USER_CFLAGS) -o $@ tests/bench/pol-scale.c kmod/policy.c kmod/mem.c
USER_TARGETS += $(B)/tests/bench/pol-scale

deps:
	$(Q)tests/tools/install-deps.sh

# Unit tests are globbed when the recipe runs, after CHECK_TARGETS may
# have made them. A build that fails still ends with the line CI counts.
check:
	$(Q)tests/tools/install-deps.sh
	$(Q)$(MAKE) user $(CHECK_TARGETS) || \
		{ echo "build failed"; echo "0 passed, 1 failed, 0 skipped"; exit 1; }
	$(Q)$(VM_ENV) tests/tools/prove-count $(PROVE_FLAGS) \
		$$(ls tests/unit/*.t tests/host/*.t tests/pkg/*.t 2>/dev/null) $(VM_T) \
		tests/demo/demo.t

# The VM tests alone.
vm-check: vm-tests
	$(Q)$(VM_ENV) tests/tools/prove-count $(PROVE_FLAGS) $(VM_T)
