# SPDX-License-Identifier: GPL-2.0
#
# Programs of the library tests (tests/host/*.t): the token contract test,
# linked with the library's objects, and a second interposer for the
# RTLD_NEXT check. `make check` runs tests/host/*.t (tests/build.mk); the
# VM runs the same scripts against the module (VM_EXTRA below).

GSHOST_DIR := $(B)/tests/host
GSHOST_BINS := $(GSHOST_DIR)/gs-token-test $(GSHOST_DIR)/libgs-next.so \
	$(GSHOST_DIR)/gs-mem-test $(GSHOST_DIR)/libgs-clock.so \
	$(GSHOST_DIR)/libgs-nopassrights.so $(GSHOST_DIR)/libgs-stall-environ.so
GSHOST_TOKEN_OBJS := $(patsubst %,$(B)/libgpusched/%.o,token config backend_kmod backend_arbiter memsize diag)

$(GSHOST_DIR)/gs-token-test: tests/host/gs-token-test.c $(GSHOST_TOKEN_OBJS) $(LIBGS_HDRS) \
		tests/cuda-double/cuda_double.h tests/host/tap_ok.h
	$(Q)mkdir -p $(@D)
	$(call gs_msg,CCLD,$@)$(CC) $(USER_CFLAGS) -Itests/cuda-double -pthread \
		-o $@ $< $(GSHOST_TOKEN_OBJS)

# The arbiter's memory accounting on its own protocols (71-arbiter-mem.t).
$(GSHOST_DIR)/gs-mem-test: tests/host/gs-mem-test.c kmod/uapi/linux/gpusched.h \
		include/gpusched/arbiter_wire.h daemon/gpusched_ctl.h daemon/knobs.h \
		tests/cuda-double/cuda_double.h tests/host/tap_ok.h
	$(Q)mkdir -p $(@D)
	$(call gs_msg,CCLD,$@)$(CC) $(USER_CFLAGS) -Idaemon -Itests/cuda-double -o $@ $<

$(GSHOST_DIR)/libgs-next.so: tests/host/next-preload.c
	$(Q)mkdir -p $(@D)
	$(call gs_msg,CCLD,$@)$(CC) $(USER_CFLAGS) -fPIC -shared -o $@ $< -ldl

# Counts libgpusched's clock reads for the double (52-launch-clock.t).
$(GSHOST_DIR)/libgs-clock.so: tests/host/clock-preload.c
	$(Q)mkdir -p $(@D)
	$(call gs_msg,CCLD,$@)$(CC) $(USER_CFLAGS) -fPIC -shared -o $@ $< -ldl

# A kernel without SO_PASSRIGHTS, for the arbiter (83-arbiter-passfd.t).
$(GSHOST_DIR)/libgs-nopassrights.so: tests/host/nopassrights-preload.c
	$(Q)mkdir -p $(@D)
	$(call gs_msg,CCLD,$@)$(CC) $(USER_CFLAGS) -fPIC -shared -o $@ $< -ldl

# An environment whose read blocks, for the arbiter (82-arbiter-label.t).
$(GSHOST_DIR)/libgs-stall-environ.so: tests/host/stall-environ-preload.c
	$(Q)mkdir -p $(@D)
	$(call gs_msg,CCLD,$@)$(CC) $(USER_CFLAGS) -fPIC -shared -o $@ $< -ldl

USER_TARGETS += $(GSHOST_BINS)

# The library tests in the VM, against /dev/gpusched: scripts as /tests/
# programs, the rest under /usr/lib/gpusched/ where lib.sh looks.
GSHOST_VM_T := $(wildcard tests/host/*-lib-*.t) tests/host/70-token.t
VM_EXTRA += $(foreach t,$(GSHOST_VM_T),$(t):/tests/$(notdir $(t))) \
	tests/host/lib.sh:/usr/lib/gpusched/lib.sh \
	tests/host/compare.sh:/usr/lib/gpusched/compare.sh \
	tests/host/libgpusched.symbols:/usr/lib/gpusched/libgpusched.symbols \
	$(LIBGS_SO):/usr/lib/gpusched/libgpusched.so.1 \
	$(GSDBL_LIB):/usr/lib/gpusched/cuda-double/libcuda.so.1 \
	$(GSDBL_CLIENT):/usr/lib/gpusched/cuda-double/gs-cuda-client \
	$(GSDBL_MEM):/usr/lib/gpusched/cuda-double/gs-mem-client \
	$(GSDBL_NVML):/usr/lib/gpusched/cuda-double/libnvidia-ml.so.1 \
	$(GSHOST_DIR)/gs-token-test:/usr/lib/gpusched/gs-token-test \
	$(GSHOST_DIR)/libgs-next.so:/usr/lib/gpusched/libgs-next.so \
	$(GSD_DIR)/gpusched-run:/usr/lib/gpusched/gpusched-run

# The library under AddressSanitizer and UndefinedBehaviorSanitizer, for
# 95-sanitizers.t. hooks.c is built without them: its dlsym() serves the
# sanitizer runtime's own start-up, before that runtime can run
# instrumented code.
LIBGS_SAN_DIR := $(B)/san/libgpusched
LIBGS_SAN := $(LIBGS_SAN_DIR)/libgpusched.so.1
LIBGS_SAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer
LIBGS_SAN_LDFLAGS := -Wl,-z,now
$(eval $(call gs_lib_rules,$(LIBGS_SAN_DIR),LIBGS_SAN_FLAGS,LIBGS_SAN_LDFLAGS))

$(LIBGS_SAN_DIR)/hooks.o: libgpusched/hooks.c $(LIBGS_HDRS)
	$(Q)mkdir -p $(@D)
	$(call gs_msg,CC,$@)$(CC) $(LIBGS_CFLAGS) -c -o $@ $<

CHECK_TARGETS += $(LIBGS_SAN)
