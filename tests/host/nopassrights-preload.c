// SPDX-License-Identifier: GPL-2.0
/*
 * A kernel without SO_PASSRIGHTS (before Linux 6.16), for a program run
 * under LD_PRELOAD on a newer one: setsockopt() of it fails with
 * ENOPROTOOPT, as it does there (83-arbiter-passfd.t).
 */
#include <dlfcn.h>
#include <errno.h>
#include <sys/socket.h>

#define SO_PASSRIGHTS_GENERIC	83	/* asm-generic/socket.h's */

int setsockopt(int fd, int level, int name, const void *val, socklen_t len)
{
	static int (*real)(int, int, int, const void *, socklen_t);

	if (level == SOL_SOCKET && name == SO_PASSRIGHTS_GENERIC) {
		errno = ENOPROTOOPT;
		return -1;
	}
	if (!real)
		real = (int (*)(int, int, int, const void *, socklen_t))
			dlsym(RTLD_NEXT, "setsockopt");
	return real(fd, level, name, val, len);
}
