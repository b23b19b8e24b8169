# SPDX-License-Identifier: GPL-2.0
#
# `make demo`: three busy clients with weights 1:2:4 share one token. On a
# machine with an NVIDIA GPU they are CUDA programs under libgpusched;
# elsewhere the module runs in a VM and the clients hold the token as the
# library would, without a GPU.

DEMO_DIR := $(B)/demo

$(DEMO_DIR)/bin/token-demo: tests/demo/token-demo.c kmod/uapi/linux/gpusched.h
	$(call tests_msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(USER_CFLAGS) -static -o $@ $<
	$(Q)echo "-s 4 -t 2000 100 200 400" >$(@D)/token-demo.args

# make check runs the demo too (tests/demo/demo.t).
CHECK_TARGETS += $(DEMO_DIR)/bin/token-demo

.PHONY: demo
demo:
	$(Q)tests/tools/install-deps.sh
	$(Q)$(MAKE) user $(DEMO_DIR)/bin/token-demo
	$(Q)tests/demo/demo.sh
