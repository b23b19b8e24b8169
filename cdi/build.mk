# SPDX-License-Identifier: GPL-2.0
#
# gpusched-cdi, the CDI spec generator, installed with the library's path.

.PHONY: install-cdi
install-cdi:
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man8
	sed 's|@GPUSCHED_LIBRARY@|$(LIBDIR)/libgpusched.so.1|' cdi/gpusched-cdi \
		>$(DESTDIR)$(BINDIR)/gpusched-cdi
	chmod 0755 $(DESTDIR)$(BINDIR)/gpusched-cdi
	install -m 0644 Documentation/man/gpusched-cdi.8 $(DESTDIR)$(MANDIR)/man8/gpusched-cdi.8

INSTALL_TARGETS += install-cdi
