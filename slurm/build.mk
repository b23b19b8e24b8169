# SPDX-License-Identifier: GPL-2.0
#
# The SPANK plugin, where Slurm's header is installed (libslurm-dev):
# $(B)/slurm/spank_gpusched.so. slurmd provides the spank_* functions it
# calls, so it is linked without -z defs.

SPANK_SO := $(B)/slurm/spank_gpusched.so
SPANK_HDR := $(firstword $(wildcard /usr/include/slurm/spank.h))

ifneq ($(SPANK_HDR),)
$(SPANK_SO): slurm/spank_gpusched.c kmod/uapi/linux/gpusched.h
	$(Q)mkdir -p $(@D)
	$(call gs_msg,CCLD,$@)$(CC) $(USER_CFLAGS) -fPIC -fvisibility=default -shared \
		-DGS_SPANK_LIBRARY='"$(LIBDIR)/libgpusched.so.1"' -o $@ $<

USER_TARGETS += $(SPANK_SO)

.PHONY: install-spank
install-spank: $(SPANK_SO)
	install -d $(DESTDIR)$(LIBDIR)/gpusched
	install -m 0644 $(SPANK_SO) $(DESTDIR)$(LIBDIR)/gpusched/spank_gpusched.so

INSTALL_TARGETS += install-spank
endif
