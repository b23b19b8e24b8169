# SPDX-License-Identifier: GPL-2.0
#
# gpuschedd's netlink mode (its default mode) and gpuschedctl, over the
# generic netlink family "gpusched" with libnl-genl-3; the policy file's
# host tests; and the in-VM tests of the family, the daemon and the tool.
# Included by daemon/build.mk, whose GSD_* variables and pattern rule
# compile the objects.

GSD_NL_PKG := libnl-genl-3.0
GSD_NL_CFLAGS := $(shell pkg-config --cflags $(GSD_NL_PKG) 2>/dev/null)
GSD_NL_LIBS := $(or $(shell pkg-config --libs $(GSD_NL_PKG) 2>/dev/null),-lnl-genl-3 -lnl-3)

# The netlink mode's objects, linked into gpuschedd next to the arbiter.
GSD_NL_OBJS := $(addprefix $(GSD_DIR)/,nlmode.o genl.o metrics.o rules.o procfs.o \
	labels.o policyfile.o policyload.o knobs.o dlog.o nvml.o)
# gpuschedctl: daemon/ctl/, one file per command, and what it shares with
# the daemon.
GSD_CTL_OBJS := $(addprefix $(GSD_DIR)/ctl/,main.o conn.o util.o rows.o status.o \
	clients.o top.o set.o watch.o arbctl.o) \
	$(addprefix $(GSD_DIR)/,genl.o knobs.o procfs.o rules.o nvml.o policy.o mem.o)

$(GSD_DIR)/genl.o: GSD_CFLAGS += $(GSD_NL_CFLAGS)

$(GSD_DIR)/gpuschedd: $(GSD_NL_OBJS)
GSD_LDLIBS += $(GSD_NL_LIBS) -ldl -pthread

$(GSD_DIR)/gpuschedctl: $(GSD_CTL_OBJS)
	$(call gs_msg,LD,$@)$(CC) $(CFLAGS) -pie -o $@ $^ $(GSD_NL_LIBS) -lm -ldl -pthread

USER_TARGETS += $(GSD_DIR)/gpuschedctl

# --- host tests of the policy file and of the metrics:
# tests/unit/policyfile.t and metrics.t run them, plainly and under valgrind.
GSD_UNIT_PF := $(B)/tests/unit/test_policyfile
GSD_UNIT_PF_SRCS := tests/unit/test_policyfile.c daemon/policyfile.c \
	daemon/rules.c daemon/procfs.c daemon/knobs.c kmod/policy.c kmod/mem.c

$(GSD_UNIT_PF): $(GSD_UNIT_PF_SRCS) tests/unit/tap.h daemon/policyfile.h \
		daemon/rules.h daemon/knobs.h kmod/policy.h $(KCOMPAT_HDRS) kmod/uapi/linux/gpusched.h
	$(Q)mkdir -p $(@D)
	$(call gs_msg,CC,$@)$(CC) $(USER_CFLAGS) -Idaemon -o $@ $(GSD_UNIT_PF_SRCS)

GSD_UNIT_METRICS := $(B)/tests/unit/test_metrics
GSD_UNIT_METRICS_SRCS := tests/unit/test_metrics.c daemon/metrics.c daemon/knobs.c \
	daemon/nvml.c daemon/dlog.c kmod/policy.c kmod/mem.c

$(GSD_UNIT_METRICS): $(GSD_UNIT_METRICS_SRCS) tests/unit/tap.h daemon/metrics.h \
		daemon/genl.h daemon/knobs.h daemon/policyfile.h daemon/nvml.h \
		daemon/dlog.h kmod/policy.h $(KCOMPAT_HDRS) kmod/uapi/linux/gpusched.h
	$(Q)mkdir -p $(@D)
	$(call gs_msg,CC,$@)$(CC) $(USER_CFLAGS) -Idaemon -o $@ $(GSD_UNIT_METRICS_SRCS) -ldl -pthread

USER_TARGETS += $(GSD_UNIT_PF) $(GSD_UNIT_METRICS)

# Where udev and systemd look for an administrator's additions; a package
# would use /usr/lib/udev/rules.d and /usr/lib/systemd/system.
UDEVRULESDIR ?= $(SYSCONFDIR)/udev/rules.d
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system

.PHONY: install-gpuschedctl
install-gpuschedctl: $(GSD_DIR)/gpuschedctl
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man5 \
		$(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(SYSCONFDIR)/gpusched \
		$(DESTDIR)$(UDEVRULESDIR) $(DESTDIR)$(SYSTEMDUNITDIR)
	install -m 0755 $(GSD_DIR)/gpuschedctl $(DESTDIR)$(BINDIR)/gpuschedctl
	install -m 0644 Documentation/man/gpuschedctl.8 $(DESTDIR)$(MANDIR)/man8/gpuschedctl.8
	install -m 0644 Documentation/man/gpusched.conf.5 $(DESTDIR)$(MANDIR)/man5/gpusched.conf.5
	# An admin's edited policy and udev rule survive a reinstall. The
	# policy as installed sets nothing; the example shows each part.
	test -e $(DESTDIR)$(SYSCONFDIR)/gpusched/gpusched.conf || \
		install -m 0644 etc/gpusched.conf $(DESTDIR)$(SYSCONFDIR)/gpusched/gpusched.conf
	install -d $(DESTDIR)$(DOCDIR)/examples
	install -m 0644 etc/gpusched.conf.example $(DESTDIR)$(DOCDIR)/examples/gpusched.conf
	test -e $(DESTDIR)$(UDEVRULESDIR)/70-gpusched.rules || \
		install -m 0644 etc/udev/70-gpusched.rules $(DESTDIR)$(UDEVRULESDIR)/70-gpusched.rules
	sed 's|/usr/local/bin/|$(BINDIR)/|g' etc/systemd/gpuschedd.service \
		>$(DESTDIR)$(SYSTEMDUNITDIR)/gpuschedd.service
	chmod 0644 $(DESTDIR)$(SYSTEMDUNITDIR)/gpuschedd.service

INSTALL_TARGETS += install-gpuschedctl

# --- in-VM tests (tests/netlink/): kselftest programs and shell scripts
# that the VM runner runs from /tests, with what they need in VM_EXTRA:
# gpuschedd and gpuschedctl, libnl's genl-ctrl-list, and the kernel's YNL
# client cli.py (linux-source-6.12) with Debian's python3.11 and the part
# of its standard library that cli.py uses (tests/netlink/pyzip.py).
NL_DIR := $(B)/netlink
NL_TEST_PROGS := $(patsubst tests/netlink/%.c,$(NL_DIR)/bin/%, \
	$(wildcard tests/netlink/nl-*.c))
NL_HELPER := $(NL_DIR)/bin/gs-nl-helper
YNL_DIR := $(B)/ynl
YNL_CLI := $(YNL_DIR)/tools/net/ynl/cli.py
NL_PYZIP := $(NL_DIR)/python311.zip
# Debian's interpreter: the one whose python3-yaml the zip takes.
NL_PYTHON := /usr/bin/python3.11

$(NL_DIR)/bin/%: tests/netlink/%.c tests/netlink/nl_test.h \
		tests/kselftest/gs_test.h tests/kselftest/gs_module.h \
		kmod/uapi/linux/gpusched.h $(B)/kselftest/kselftest_harness.h
	$(Q)mkdir -p $(@D)
	$(call gs_msg,CC,$@)$(CC) $(KSELFTEST_CFLAGS) -Itests/kselftest -static \
		-pthread -o $@ $<

# The helper uses gs_test.h's ioctl wrappers, not the harness it brings.
$(NL_HELPER): KSELFTEST_CFLAGS += -Wno-unused-function

$(YNL_CLI): tests/netlink/ynl-extract.sh
	$(call gs_msg,EXTRACT,$(YNL_DIR))tests/netlink/ynl-extract.sh $(YNL_DIR)

$(NL_PYZIP): tests/netlink/pyzip.py $(YNL_CLI) Documentation/netlink/specs/gpusched.yaml
	$(Q)mkdir -p $(@D)
	$(call gs_msg,PYZIP,$@)$(NL_PYTHON) tests/netlink/pyzip.py \
		$(YNL_DIR)/tools/net/ynl $@ Documentation/netlink/specs/gpusched.yaml >/dev/null

# A preload that stalls reads of environments (nl-daemon), from tests/host/.
NL_STALL_SHIM := $(B)/tests/host/libgs-stall-environ.so
NL_VM_DEPS := $(NL_TEST_PROGS) $(NL_HELPER) $(NL_PYZIP) $(YNL_CLI) \
	$(GSD_DIR)/gpuschedd $(GSD_DIR)/gpuschedctl $(NL_STALL_SHIM)
vm-tests: $(NL_VM_DEPS)
CHECK_TARGETS += $(NL_VM_DEPS)

VM_EXTRA += $(foreach p,$(NL_TEST_PROGS),$(p):/tests/$(notdir $(p))) \
	tests/netlink/nl-ctrl.sh:/tests/nl-ctrl \
	tests/netlink/nl-ynl.sh:/tests/nl-ynl \
	$(NL_HELPER):/usr/libexec/gpusched-tests/gs-nl-helper \
	$(NL_STALL_SHIM):/usr/lib/gpusched/libgs-stall-environ.so \
	$(GSD_DIR)/gpuschedd:/usr/sbin/gpuschedd \
	$(GSD_DIR)/gpuschedctl:/usr/bin/gpuschedctl \
	/usr/bin/genl-ctrl-list:/usr/bin/genl-ctrl-list \
	$(NL_PYTHON):/usr/bin/python3 \
	$(NL_PYZIP):/usr/lib/python311.zip \
	$(YNL_CLI):/opt/ynl/cli.py \
	$(foreach f,__init__ nlspec ynl,$(YNL_DIR)/tools/net/ynl/lib/$(f).py:/opt/ynl/lib/$(f).py) \
	Documentation/netlink/specs/gpusched.yaml:/usr/share/gpusched/gpusched.yaml
