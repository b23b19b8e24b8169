// SPDX-License-Identifier: GPL-2.0
/*
 * An environment whose read blocks, for a program run under LD_PRELOAD
 * (82-arbiter-label.t): while the file that GS_STALL_ENVIRON names exists,
 * opening any /proc/PID/environ waits, as reading a process's environment
 * waits when the process mapped a FUSE file over it. Each open that waited
 * creates GS_STALL_ENVIRON.seen.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void stall(const char *path)
{
	const char *flag = getenv("GS_STALL_ENVIRON");
	size_t n = strlen(path);
	char seen[4096];
	int fd;

	if (!flag || n < 8 || strcmp(path + n - 8, "/environ") ||
	    access(flag, F_OK))
		return;
	snprintf(seen, sizeof(seen), "%s.seen", flag);
	fd = creat(seen, 0644);
	if (fd >= 0)
		close(fd);
	while (!access(flag, F_OK))
		usleep(10000);
}

#define OPEN_WRAPPER(name)						\
int name(const char *path, int flags, ...)				\
{									\
	static int (*real)(const char *, int, ...);			\
	mode_t mode = 0;						\
	va_list ap;							\
									\
	va_start(ap, flags);						\
	if (flags & (O_CREAT | O_TMPFILE))				\
		mode = va_arg(ap, mode_t);				\
	va_end(ap);							\
	stall(path);							\
	if (!real)							\
		real = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, #name); \
	return real(path, flags, mode);					\
}

OPEN_WRAPPER(open)
OPEN_WRAPPER(open64)
