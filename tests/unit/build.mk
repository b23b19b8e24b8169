# SPDX-License-Identifier: GPL-2.0
#
# Host unit tests of the fair-share policy (kmod/policy.c, shared with the
# module) with a simulated clock: built twice, plainly and under ASan+UBSan
# so that undefined behaviour in the shared code fails the tests.
# tests/unit/policy.t runs both.

UNIT_POLICY_SRCS := tests/unit/test_policy.c kmod/policy.c kmod/mem.c
UNIT_POLICY_DEPS := $(UNIT_POLICY_SRCS) tests/unit/tap.h kmod/policy.h $(KCOMPAT_HDRS) \
	kmod/uapi/linux/gpusched.h
UNIT_SAN_CFLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all \
	-fno-omit-frame-pointer

$(B)/tests/unit/test_policy: $(UNIT_POLICY_DEPS)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(USER_CFLAGS) -o $@ $(UNIT_POLICY_SRCS)

$(B)/tests/unit/test_policy-san: $(UNIT_POLICY_DEPS)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(USER_CFLAGS) $(UNIT_SAN_CFLAGS) -o $@ $(UNIT_POLICY_SRCS)

USER_TARGETS += $(B)/tests/unit/test_policy $(B)/tests/unit/test_policy-san

# Device memory accounting (kmod/mem.c), the same two ways; tests/unit/mem.t.
UNIT_MEM_SRCS := tests/unit/test_mem.c kmod/mem.c kmod/policy.c
UNIT_MEM_DEPS := $(UNIT_MEM_SRCS) tests/unit/tap.h kmod/policy.h kmod/gs_abi.h \
	kmod/uapi/linux/gpusched.h

$(B)/tests/unit/test_mem: $(UNIT_MEM_DEPS)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(USER_CFLAGS) -o $@ $(UNIT_MEM_SRCS)

$(B)/tests/unit/test_mem-san: $(UNIT_MEM_DEPS)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(USER_CFLAGS) $(UNIT_SAN_CFLAGS) -o $@ $(UNIT_MEM_SRCS)

USER_TARGETS += $(B)/tests/unit/test_mem $(B)/tests/unit/test_mem-san

# What the services tell clients (kmod/status.c), the same two ways;
# tests/unit/status.t.
UNIT_STATUS_SRCS := tests/unit/test_status.c kmod/status.c kmod/policy.c kmod/mem.c
UNIT_STATUS_DEPS := $(UNIT_STATUS_SRCS) tests/unit/tap.h kmod/policy.h kmod/gs_abi.h \
	$(KCOMPAT_HDRS) kmod/uapi/linux/gpusched.h

$(B)/tests/unit/test_status: $(UNIT_STATUS_DEPS)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(USER_CFLAGS) -o $@ $(UNIT_STATUS_SRCS)

$(B)/tests/unit/test_status-san: $(UNIT_STATUS_DEPS)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(USER_CFLAGS) $(UNIT_SAN_CFLAGS) -o $@ $(UNIT_STATUS_SRCS)

USER_TARGETS += $(B)/tests/unit/test_status $(B)/tests/unit/test_status-san

# The library's period tracker (libgpusched/period.c), the same two ways;
# tests/unit/period.t runs both.
UNIT_PERIOD_SRCS := tests/unit/test_period.c libgpusched/period.c
UNIT_PERIOD_DEPS := $(UNIT_PERIOD_SRCS) tests/unit/tap.h libgpusched/period.h

$(B)/tests/unit/test_period: $(UNIT_PERIOD_DEPS)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(USER_CFLAGS) -Ilibgpusched -o $@ $(UNIT_PERIOD_SRCS)

$(B)/tests/unit/test_period-san: $(UNIT_PERIOD_DEPS)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(USER_CFLAGS) $(UNIT_SAN_CFLAGS) -Ilibgpusched -o $@ $(UNIT_PERIOD_SRCS)

USER_TARGETS += $(B)/tests/unit/test_period $(B)/tests/unit/test_period-san

# GPUSCHED_MEM_LIMIT's syntax (libgpusched/memsize.c), the same two ways;
# tests/unit/memsize.t runs both.
UNIT_MEMSIZE_SRCS := tests/unit/test_memsize.c libgpusched/memsize.c
UNIT_MEMSIZE_DEPS := $(UNIT_MEMSIZE_SRCS) tests/unit/tap.h libgpusched/memsize.h

$(B)/tests/unit/test_memsize: $(UNIT_MEMSIZE_DEPS)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(USER_CFLAGS) -Ilibgpusched -o $@ $(UNIT_MEMSIZE_SRCS)

$(B)/tests/unit/test_memsize-san: $(UNIT_MEMSIZE_DEPS)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(USER_CFLAGS) $(UNIT_SAN_CFLAGS) -Ilibgpusched -o $@ $(UNIT_MEMSIZE_SRCS)

USER_TARGETS += $(B)/tests/unit/test_memsize $(B)/tests/unit/test_memsize-san

# GPUSCHED_DEBUG's syntax (libgpusched/diag.c), the same two ways;
# tests/unit/diag.t runs both.
UNIT_DIAG_SRCS := tests/unit/test_diag.c libgpusched/diag.c
UNIT_DIAG_DEPS := $(UNIT_DIAG_SRCS) tests/unit/tap.h libgpusched/diag.h

$(B)/tests/unit/test_diag: $(UNIT_DIAG_DEPS)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(USER_CFLAGS) -Ilibgpusched -o $@ $(UNIT_DIAG_SRCS)

$(B)/tests/unit/test_diag-san: $(UNIT_DIAG_DEPS)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(USER_CFLAGS) $(UNIT_SAN_CFLAGS) -Ilibgpusched -o $@ $(UNIT_DIAG_SRCS)

USER_TARGETS += $(B)/tests/unit/test_diag $(B)/tests/unit/test_diag-san

# The library's launch-length arithmetic (libgpusched/estimate.c), the
# same two ways; tests/unit/estimate.t runs both.
UNIT_ESTIMATE_SRCS := tests/unit/test_estimate.c libgpusched/estimate.c
UNIT_ESTIMATE_DEPS := $(UNIT_ESTIMATE_SRCS) tests/unit/tap.h libgpusched/estimate.h

$(B)/tests/unit/test_estimate: $(UNIT_ESTIMATE_DEPS)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(USER_CFLAGS) -Ilibgpusched -o $@ $(UNIT_ESTIMATE_SRCS)

$(B)/tests/unit/test_estimate-san: $(UNIT_ESTIMATE_DEPS)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(USER_CFLAGS) $(UNIT_SAN_CFLAGS) -Ilibgpusched -o $@ $(UNIT_ESTIMATE_SRCS)

USER_TARGETS += $(B)/tests/unit/test_estimate $(B)/tests/unit/test_estimate-san

# The gate's launch decision (libgpusched/gate_fsm.h), the same two ways;
# tests/unit/gate.t runs both.
UNIT_GATE_DEPS := tests/unit/test_gate.c tests/unit/tap.h libgpusched/gate_fsm.h

$(B)/tests/unit/test_gate: $(UNIT_GATE_DEPS)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(USER_CFLAGS) -Ilibgpusched -o $@ tests/unit/test_gate.c

$(B)/tests/unit/test_gate-san: $(UNIT_GATE_DEPS)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(USER_CFLAGS) $(UNIT_SAN_CFLAGS) -Ilibgpusched -o $@ tests/unit/test_gate.c

USER_TARGETS += $(B)/tests/unit/test_gate $(B)/tests/unit/test_gate-san

# The daemon's limit on repeated log lines (daemon/dlog.c), the same two
# ways; tests/unit/dlog.t runs both.
UNIT_DLOG_SRCS := tests/unit/test_dlog.c daemon/dlog.c
UNIT_DLOG_DEPS := $(UNIT_DLOG_SRCS) tests/unit/tap.h daemon/dlog.h

$(B)/tests/unit/test_dlog: $(UNIT_DLOG_DEPS)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(USER_CFLAGS) -Idaemon -o $@ $(UNIT_DLOG_SRCS)

$(B)/tests/unit/test_dlog-san: $(UNIT_DLOG_DEPS)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(USER_CFLAGS) $(UNIT_SAN_CFLAGS) -Idaemon -o $@ $(UNIT_DLOG_SRCS)

USER_TARGETS += $(B)/tests/unit/test_dlog $(B)/tests/unit/test_dlog-san
