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
# parsers with clang and runs each for FUZZ_SECONDS from its seed corpus;
# `make check` builds them and runs each briefly from a fixed seed
# (tests/unit/libfuzzer.t).

FUZZ_DIR := $(B)/fuzz
FUZZ_VM_BINS := $(FUZZ_DIR)/fuzz-dev $(FUZZ_DIR)/fuzz-netlink $(FUZZ_DIR)/storm
FUZZ_VM_HDRS := tests/fuzz/fuzz-common.h tests/fuzz/fuzz-nl.h \
	tests/fuzz/one-holder.h tests/kselftest/gs_module.h \
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
$(addprefix $(KSELFTEST_DIR)/bin/,netlink-dump namespaces grant-page faultinject mem): \
	tests/fuzz/fuzz-nl.h

# make check-storm: the storm alone at the issue's sizes (64 clients x 10^4
# acquire/release, 1,000 SIGKILLs, 5 unload/reload cycles), in one VM of
# STORM_KERNEL (6.1, 6.12, or debug: tests/debug/'s cached kernel). Hours
# under TCG at worst: STORM_TIMEOUT bounds it (seconds), STORM_SEED
# reruns a seed, STORM_PROGRESS says how often it reports (seconds),
# STORM_SMP gives the VM its CPUs (Documentation/reliability.md: the time
# goes to two emulated CPUs waiting for each other on a busy host).
STORM_KERNEL ?= 6.1
STORM_CLIENTS ?= 64
STORM_OPS ?= 10000
STORM_KILLS ?= 1000
STORM_RELOADS ?= 5
STORM_TIMEOUT ?= 3600
STORM_SEED ?=
STORM_PROGRESS ?= 60
STORM_SMP ?= 2

.PHONY: check-storm
check-storm: $(FUZZ_DIR)/storm $(if $(filter debug,$(STORM_KERNEL)),debug-kernel)
	$(Q)env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL TAP_TIMEOUT=$$(($(STORM_TIMEOUT) + 900)) \
		STORM_KERNEL=$(STORM_KERNEL) STORM_CLIENTS=$(STORM_CLIENTS) \
		STORM_OPS=$(STORM_OPS) STORM_KILLS=$(STORM_KILLS) \
		STORM_RELOADS=$(STORM_RELOADS) STORM_TIMEOUT=$(STORM_TIMEOUT) \
		STORM_SEED=$(STORM_SEED) STORM_PROGRESS=$(STORM_PROGRESS) \
		VM_SMP=$(STORM_SMP) \
		tests/tools/prove-count $(PROVE_FLAGS) tests/fuzz/storm-vm.t

# libFuzzer: clang with its runtime (Debian: clang-14, libclang-rt-14-dev).
FUZZ_CC ?= clang
FUZZ_SECONDS ?= 60
FUZZ_CFLAGS = -g -O1 -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=undefined -std=gnu11 -D_GNU_SOURCE -Wall -Wextra \
	-I$(CURDIR)/kmod/uapi -I$(CURDIR)/include -I$(CURDIR)/kmod -I$(CURDIR)/libgpusched \
	-I$(CURDIR)/daemon
LF_BINS := $(FUZZ_DIR)/lf-policyfile $(FUZZ_DIR)/lf-config $(FUZZ_DIR)/lf-arbiter \
	$(FUZZ_DIR)/lf-nlevents

$(FUZZ_DIR)/lf-policyfile: tests/fuzz/lf-policyfile.c daemon/policyfile.c \
		daemon/knobs.c kmod/policy.c kmod/mem.c $(wildcard daemon/*.h) kmod/policy.h \
		$(KCOMPAT_HDRS) kmod/uapi/linux/gpusched.h
$(FUZZ_DIR)/lf-config: tests/fuzz/lf-config.c libgpusched/config.c \
		libgpusched/memsize.c libgpusched/diag.c $(LIBGS_HDRS)
$(FUZZ_DIR)/lf-arbiter: tests/fuzz/lf-arbiter.c tests/fuzz/one-holder.h daemon/arbiter.c \
		daemon/arbiter_token.c daemon/arbiter_ctl.c daemon/arbiter_socket.c \
		daemon/arbiter_closer.c daemon/labels.c \
		kmod/policy.c kmod/status.c kmod/mem.c daemon/policyfile.c daemon/policyload.c \
		daemon/rules.c daemon/procfs.c daemon/knobs.c daemon/metrics.c daemon/nvml.c \
		daemon/dlog.c \
		$(wildcard daemon/*.h) kmod/policy.h $(KCOMPAT_HDRS) kmod/uapi/linux/gpusched.h

# gpuschedd's netlink mode on libnl, with a model of the module for the
# kernel; the target defines gs_proc_init() itself (no procfs.c).
$(FUZZ_DIR)/lf-nlevents: tests/fuzz/lf-nlevents.c daemon/genl.c daemon/nlmode.c \
		daemon/rules.c daemon/policyfile.c daemon/policyload.c daemon/knobs.c \
		daemon/dlog.c daemon/metrics.c daemon/nvml.c kmod/policy.c kmod/mem.c \
		$(wildcard daemon/*.h) kmod/policy.h $(KCOMPAT_HDRS) kmod/uapi/linux/gpusched.h
$(FUZZ_DIR)/lf-nlevents: LF_CFLAGS = $(GSD_NL_CFLAGS)
$(FUZZ_DIR)/lf-nlevents: LF_LIBS = $(GSD_NL_LIBS)

# The target's own file includes config.c, genl.c or nlmode.c
# where it needs their static functions; other .c prerequisites are
# linked in.
LF_INCLUDED := libgpusched/config.c daemon/genl.c daemon/nlmode.c
$(LF_BINS):
	$(Q)command -v $(FUZZ_CC) >/dev/null || \
		{ echo "make fuzz needs clang: apt-get install clang libclang-rt-14-dev" >&2; exit 1; }
	$(Q)mkdir -p $(@D)
	$(call gs_msg,CCLD,$@)$(FUZZ_CC) $(FUZZ_CFLAGS) $(LF_CFLAGS) -pthread -o $@ $< \
		$(filter-out $< $(LF_INCLUDED),$(filter %.c,$^)) $(LF_LIBS)

# make check builds them too (tests/unit/libfuzzer.t runs them briefly).
ifneq ($(shell command -v $(FUZZ_CC) 2>/dev/null),)
CHECK_TARGETS += $(LF_BINS)
endif

.PHONY: fuzz
fuzz: $(LF_BINS)
	$(Q)tests/fuzz/run-libfuzzer.sh $(FUZZ_SECONDS) $(LF_BINS)
