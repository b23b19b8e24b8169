# SPDX-License-Identifier: GPL-2.0
#
# Fuzzers (tests/fuzz/README).
#
# In the VM: fuzz-dev (/dev/gpusched), fuzz-netlink (the generic netlink
# family) and storm (SIGKILL, rmmod and contention storms), static, run by
# `make check` on every kernel as /tests/ programs (10 s per fuzzer, a small
# storm), and by `make check-debug` longer (tests/debug/vm-debug.t).
#
# On the host: `make fuzz` builds the libFuzzer targets of the user-space
# parsers with clang and runs each for FUZZ_SECONDS from its seed corpus.

FUZZ_DIR := $(B)/fuzz
FUZZ_VM_BINS := $(FUZZ_DIR)/fuzz-dev $(FUZZ_DIR)/fuzz-netlink $(FUZZ_DIR)/storm
FUZZ_VM_HDRS := tests/fuzz/fuzz-common.h tests/fuzz/fuzz-nl.h \
	kmod/uapi/linux/gpusched.h

$(FUZZ_VM_BINS): $(FUZZ_DIR)/%: tests/fuzz/%.c $(FUZZ_VM_HDRS)
	$(Q)mkdir -p $(@D)
	$(call gs_msg,CC,$@)$(CC) $(USER_CFLAGS) -static -pthread -o $@ $<

USER_TARGETS += $(FUZZ_VM_BINS)
# storm reloads the module: it runs last (tokens, and so what zz-capacity
# counts, do not survive a reload).
VM_EXTRA += $(FUZZ_DIR)/fuzz-dev:/tests/fuzz-dev \
	$(FUZZ_DIR)/fuzz-netlink:/tests/fuzz-netlink \
	$(FUZZ_DIR)/storm:/tests/zzz-storm
vm-tests: $(FUZZ_VM_BINS)

# The kselftest programs that share the raw netlink helpers.
$(addprefix $(KSELFTEST_DIR)/bin/,netlink-dump namespaces grant-page faultinject): \
	tests/fuzz/fuzz-nl.h

# libFuzzer: clang with its runtime (Debian: clang-14, libclang-rt-14-dev).
FUZZ_CC ?= clang
FUZZ_SECONDS ?= 60
FUZZ_CFLAGS = -g -O1 -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=undefined -std=gnu11 -D_GNU_SOURCE -Wall -Wextra \
	-I$(CURDIR)/kmod/uapi -I$(CURDIR)/kmod -I$(CURDIR)/libgpusched \
	-I$(CURDIR)/daemon
LF_BINS := $(FUZZ_DIR)/lf-policyfile $(FUZZ_DIR)/lf-config $(FUZZ_DIR)/lf-arbiter

$(FUZZ_DIR)/lf-policyfile: tests/fuzz/lf-policyfile.c daemon/policyfile.c \
		daemon/knobs.c $(wildcard daemon/*.h) kmod/uapi/linux/gpusched.h
$(FUZZ_DIR)/lf-config: tests/fuzz/lf-config.c libgpusched/config.c \
		$(LIBGS_HDRS)
$(FUZZ_DIR)/lf-arbiter: tests/fuzz/lf-arbiter.c daemon/arbiter.c \
		kmod/policy.c daemon/policyfile.c daemon/rules.c daemon/knobs.c \
		daemon/metrics.c \
		$(wildcard daemon/*.h) kmod/policy.h kmod/uapi/linux/gpusched.h

# The target's own file includes config.c or arbiter.c where it needs
# their static functions; other .c prerequisites are linked in.
$(LF_BINS):
	$(Q)command -v $(FUZZ_CC) >/dev/null || \
		{ echo "make fuzz needs clang: apt-get install clang libclang-rt-14-dev" >&2; exit 1; }
	$(Q)mkdir -p $(@D)
	$(call gs_msg,CCLD,$@)$(FUZZ_CC) $(FUZZ_CFLAGS) -pthread -o $@ $< \
		$(filter-out $< libgpusched/config.c daemon/arbiter.c,$(filter %.c,$^))

.PHONY: fuzz
fuzz: $(LF_BINS)
	$(Q)tests/fuzz/run-libfuzzer.sh $(FUZZ_SECONDS) $(LF_BINS)
