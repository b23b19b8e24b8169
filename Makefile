# SPDX-License-Identifier: GPL-2.0
#
# Thin wrapper: the module through Kbuild, user space through the build.mk
# fragment of each directory. `make check` runs every test; `make demo` the
# main job. V=1 shows the commands.

KVER_RUNNING := $(shell uname -r)
# The running kernel's build tree, else the newest Debian 6.1 headers.
KDIR ?= $(firstword $(wildcard /lib/modules/$(KVER_RUNNING)/build) \
	$(lastword $(sort $(wildcard /usr/src/linux-headers-6.1.*-amd64))))

PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR ?= $(PREFIX)/share/man
DOCDIR ?= $(PREFIX)/share/doc/gpusched
SYSCONFDIR ?= /etc
DESTDIR ?=
# The version of the whole tree; DKMS needs it in dkms.conf, so it lives there.
GS_VERSION := $(shell sed -n 's/^PACKAGE_VERSION="\(.*\)"$$/\1/p' $(CURDIR)/dkms.conf)

B := build
CC ?= cc
WERROR ?= -Werror
CFLAGS ?= -O2 -g
USER_CFLAGS := -std=gnu11 -Wall -Wextra $(WERROR) -D_GNU_SOURCE \
	-I$(CURDIR)/kmod/uapi -I$(CURDIR)/include -I$(CURDIR)/kmod -I$(CURDIR)/libgpusched $(CFLAGS)

ifeq ($(V),1)
Q :=
else
Q := @
MAKEFLAGS += --no-print-directory
endif

# User-space stand-ins for the kernel's list and rbtree, which kmod/policy.h
# includes outside the kernel: whatever depends on policy.h depends on them.
KCOMPAT_HDRS := $(wildcard include/kcompat/*.h)

# Fragments add to these.
USER_TARGETS :=
CHECK_TARGETS :=
INSTALL_TARGETS :=

.PHONY: all module user check demo install install-module install-headers style clean deps \
	install-user install-dkms deb
all: module user

module:
	$(Q)test -n "$(KDIR)" || { echo "no kernel build tree: install linux-headers-amd64 or set KDIR" >&2; exit 1; }
	$(Q)$(MAKE) -C $(KDIR) M=$(CURDIR) modules

include libgpusched/build.mk
include libgpusched/dist.mk
include cdi/build.mk
include slurm/build.mk
include daemon/build.mk
include kernels/build.mk
include tests/build.mk
include tests/demo/build.mk
-include tests/unit/build.mk
# Fuzzers (make fuzz; in-VM ones join make check) and the debug kernel
# (make check-debug): issue 6.
-include tests/fuzz/build.mk
-include tests/debug/build.mk

user: $(USER_TARGETS)

install: install-module install-user
# Everything but the module (the packages build it with DKMS instead).
install-user: install-headers $(INSTALL_TARGETS)

# The module's source as DKMS takes it (dkms.conf), and as gpusched-dkms
# ships it: `dkms add $(DESTDIR)/usr/src/gpusched-$(GS_VERSION)`.
DKMS_SRC := dkms.conf Kbuild $(wildcard kmod/*.[ch] kmod/uapi/linux/*.h)
install-dkms:
	$(Q)for f in $(DKMS_SRC); do \
		install -D -m 0644 $$f $(DESTDIR)/usr/src/gpusched-$(GS_VERSION)/$$f || exit; \
	done

# The Debian packages (debian/), built from a copy of the tree in $(B)/deb/,
# where they are left: gpusched-dkms, libgpusched1, libgpusched-dev, gpusched,
# gpusched-slurm.
deb:
	$(Q)debian/build-debs.sh $(B)/deb

# DESTDIR applies here too (INSTALL_MOD_PATH); depmod only on the live system.
install-module: module
	$(Q)$(MAKE) -C $(KDIR) M=$(CURDIR) INSTALL_MOD_PATH=$(DESTDIR) \
		INSTALL_MOD_DIR=updates modules_install
	$(Q)test -n "$(DESTDIR)" || depmod -a $(shell $(MAKE) -s -C $(KDIR) kernelrelease 2>/dev/null)

install-headers:
	$(Q)install -D -m 0644 kmod/uapi/linux/gpusched.h \
		$(DESTDIR)$(INCLUDEDIR)/linux/gpusched.h

style:
	$(Q)tests/tools/checkpatch.sh

clean:
	$(Q)test -z "$(KDIR)" || $(MAKE) -C $(KDIR) M=$(CURDIR) clean
	$(Q)rm -rf $(B)
