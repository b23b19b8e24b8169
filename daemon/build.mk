# SPDX-License-Identifier: GPL-2.0
#
# gpuschedd (for now its arbiter mode) and gpusched-run. The arbiter
# compiles the module's policy, kmod/policy.c, status.c and mem.c, as they
# are.

GSD_DIR := $(B)/daemon
GSD_BINS := $(GSD_DIR)/gpuschedd $(GSD_DIR)/gpusched-run
GSD_CFLAGS = $(USER_CFLAGS) -Idaemon -fPIE

$(GSD_DIR)/%.o: daemon/%.c $(wildcard daemon/*.h daemon/ctl/*.h) kmod/policy.h $(KCOMPAT_HDRS) kmod/gs_abi.h \
		kmod/uapi/linux/gpusched.h include/gpusched/arbiter_wire.h
	$(Q)mkdir -p $(@D)
	$(call gs_msg,CC,$@)$(CC) $(GSD_CFLAGS) -c -o $@ $<

$(GSD_DIR)/policy.o $(GSD_DIR)/status.o $(GSD_DIR)/mem.o: $(GSD_DIR)/%.o: kmod/%.c kmod/policy.h \
		$(KCOMPAT_HDRS) kmod/gs_abi.h kmod/uapi/linux/gpusched.h
	$(Q)mkdir -p $(@D)
	$(call gs_msg,CC,$@)$(CC) $(GSD_CFLAGS) -c -o $@ $<

# The arbiter: the event loop, the token, the control protocol, the socket,
# the thread that closes connections.
GSD_ARB_OBJS := $(addprefix $(GSD_DIR)/,arbiter.o arbiter_token.o arbiter_ctl.o \
	arbiter_socket.o arbiter_closer.o policy.o status.o mem.o)

$(GSD_DIR)/gpuschedd: $(GSD_DIR)/gpuschedd.o $(GSD_ARB_OBJS)
	$(call gs_msg,LD,$@)$(CC) $(CFLAGS) -pie -o $@ $^ $(GSD_LDLIBS)

# The installed library's path is compiled in (GPUSCHED_LIBRARY overrides
# it at run time); the header changes when LIBDIR does, so does the program.
$(GSD_DIR)/gsrun-libdir.h: FORCE
	$(Q)mkdir -p $(@D)
	$(Q)echo '#define GPUSCHED_LIBRARY "$(LIBDIR)/libgpusched.so.1"' >$@.tmp
	$(Q)cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@
$(GSD_DIR)/gpusched-run.o: GSD_CFLAGS += -include $(GSD_DIR)/gsrun-libdir.h -Ilibgpusched
$(GSD_DIR)/gpusched-run.o: $(GSD_DIR)/gsrun-libdir.h
.PHONY: FORCE
FORCE:
# GPUSCHED_MEM_LIMIT's syntax is the library's (libgpusched/memsize.c).
$(GSD_DIR)/gpusched-run.o: libgpusched/memsize.h
$(GSD_DIR)/memsize.o: libgpusched/memsize.c libgpusched/memsize.h
	$(Q)mkdir -p $(@D)
	$(call gs_msg,CC,$@)$(CC) $(GSD_CFLAGS) -c -o $@ $<
$(GSD_DIR)/gpusched-run: $(GSD_DIR)/gpusched-run.o $(GSD_DIR)/memsize.o
	$(call gs_msg,LD,$@)$(CC) $(CFLAGS) -pie -o $@ $^

USER_TARGETS += $(GSD_BINS)

.PHONY: install-daemon
install-daemon: $(GSD_BINS)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man8
	install -m 0755 $(GSD_DIR)/gpuschedd $(DESTDIR)$(BINDIR)/gpuschedd
	install -m 0755 $(GSD_DIR)/gpusched-run $(DESTDIR)$(BINDIR)/gpusched-run
	install -m 0644 Documentation/man/gpuschedd.8 $(DESTDIR)$(MANDIR)/man8/gpuschedd.8
	install -m 0644 Documentation/man/gpusched-run.1 $(DESTDIR)$(MANDIR)/man1/gpusched-run.1

INSTALL_TARGETS += install-daemon

# The netlink mode and gpuschedctl.
include daemon/nl.mk
