# SPDX-License-Identifier: LGPL-2.1-or-later
#
# libgpusched as it is shipped: its glibc baseline and its pkg-config file.
# Included after libgpusched/build.mk, whose variables it extends.

# --- glibc 2.28 (glibc-compat.h says why and how). Only on x86_64, the
# one architecture whose symbol versions glibc-compat.h lists.
ifneq ($(filter x86_64-%,$(shell $(CC) -dumpmachine 2>/dev/null)),)
$(LIBGS_OBJS): LIBGS_CFLAGS += -include $(CURDIR)/libgpusched/glibc-compat.h
# The versions bound to were libpthread's and libdl's before glibc 2.34:
# older loaders look for them there.
$(LIBGS_SO): LIBGS_LDFLAGS += -Wl,--no-as-needed -l:libpthread.so.0 -l:libdl.so.2 -Wl,--as-needed
endif

# --- pkg-config: `pkg-config --cflags --libs libgpusched`.
LIBGS_PC := $(B)/libgpusched/libgpusched.pc

$(LIBGS_PC): libgpusched/libgpusched.pc.in dkms.conf FORCE
	$(Q)mkdir -p $(@D)
	$(Q)sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
		-e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(GS_VERSION)|' \
		libgpusched/libgpusched.pc.in >$@.tmp
	$(Q)cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@

USER_TARGETS += $(LIBGS_PC)

.PHONY: install-pc
install-pc: $(LIBGS_PC)
	install -d $(DESTDIR)$(LIBDIR)/pkgconfig
	install -m 0644 $(LIBGS_PC) $(DESTDIR)$(LIBDIR)/pkgconfig/libgpusched.pc

INSTALL_TARGETS += install-pc
