# SPDX-License-Identifier: GPL-2.0
#
# libgpusched.so.1, and (below) the test double and host-test programs
# that exercise it. Outputs go under $(B)/.

ifeq ($(Q),@)
gs_msg = @printf '  %-8s %s\n' '$(1)' '$(2)';
else
gs_msg =
endif

LIBGS_SRCS := token.c config.c backend_kmod.c backend_arbiter.c period.c estimate.c \
	hooks.c gate.c context.c inflight.c span.c neighbour.c idle.c stats.c mem.c \
	memsize.c diag.c nvml.c ctxsync.c
LIBGS_OBJS := $(patsubst %.c,$(B)/libgpusched/%.o,$(LIBGS_SRCS)) \
	$(B)/libgpusched/dlsym.o
LIBGS_SO := $(B)/libgpusched/libgpusched.so.1
LIBGS_HDRS := $(wildcard libgpusched/*.h) kmod/uapi/linux/gpusched.h \
	include/gpusched/arbiter_wire.h
# Shared with the other fragments: PIC, hidden by default.
LIBGS_CFLAGS = $(USER_CFLAGS) -fPIC -fvisibility=hidden -pthread

# gs_lib_rules DIR,CFLAGS,LDFLAGS: libgpusched.so.1 in DIR from the
# sources above, compiled and linked with the extra flags named (variables'
# names: link flags hold commas, which would split call's arguments).
# Besides this build, tests/host/build.mk makes a sanitized one.
define gs_lib_rules
$(1)/%.o: libgpusched/%.c $$(LIBGS_HDRS)
	$$(Q)mkdir -p $$(@D)
	$$(call gs_msg,CC,$$@)$$(CC) $$(LIBGS_CFLAGS) $$($(2)) -c -o $$@ $$<

$(1)/dlsym.o: libgpusched/dlsym.S
	$$(Q)mkdir -p $$(@D)
	$$(call gs_msg,AS,$$@)$$(CC) $$(LIBGS_CFLAGS) -c -o $$@ $$<

$(1)/libgpusched.so.1: $$(patsubst %.c,$(1)/%.o,$$(LIBGS_SRCS)) $(1)/dlsym.o \
		libgpusched/libgpusched.map
	$$(call gs_msg,LD,$$@)$$(CC) $$(CFLAGS) $$($(2)) -shared -pthread \
		-Wl,-soname,libgpusched.so.1 \
		-Wl,--version-script=libgpusched/libgpusched.map \
		-o $$@ $$(filter %.o,$$^) $$($(3)) -ldl
	$$(Q)ln -sf libgpusched.so.1 $$(@D)/libgpusched.so
endef

LIBGS_LDFLAGS := -Wl,-z,defs -Wl,-z,relro -Wl,-z,now -Wl,--as-needed
$(eval $(call gs_lib_rules,$(B)/libgpusched,,LIBGS_LDFLAGS))

USER_TARGETS += $(LIBGS_SO)

.PHONY: install-libgpusched
install-libgpusched: $(LIBGS_SO)
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR) \
		$(DESTDIR)$(MANDIR)/man3 $(DESTDIR)$(MANDIR)/man7
	install -m 0755 $(LIBGS_SO) $(DESTDIR)$(LIBDIR)/libgpusched.so.1
	ln -sf libgpusched.so.1 $(DESTDIR)$(LIBDIR)/libgpusched.so
	install -m 0644 libgpusched/gpusched.h $(DESTDIR)$(INCLUDEDIR)/gpusched.h
	install -m 0644 Documentation/man/gpusched.3 $(DESTDIR)$(MANDIR)/man3/gpusched.3
	install -m 0644 Documentation/man/libgpusched.7 $(DESTDIR)$(MANDIR)/man7/libgpusched.7

INSTALL_TARGETS += install-libgpusched

include tests/cuda-double/build.mk
include tests/host/build.mk
