# SPDX-License-Identifier: GPL-2.0
#
# Host unit tests of the fair-share policy (kmod/policy.c, shared with the
# module) with a simulated clock: built twice, plainly and under ASan+UBSan
# so that undefined behaviour in the shared code fails the tests.
# tests/unit/policy.t runs both.

UNIT_POLICY_SRCS := tests/unit/test_policy.c kmod/policy.c
UNIT_POLICY_DEPS := $(UNIT_POLICY_SRCS) tests/unit/tap.h kmod/policy.h \
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
