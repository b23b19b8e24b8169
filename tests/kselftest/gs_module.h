/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Loading and unloading gpusched.ko in the VM, for the programs that
 * reload it: the kselftests (through gs_test.h) and tests/fuzz/storm,
 * which has no kselftest harness. Only libc.
 */
#ifndef GS_MODULE_H
#define GS_MODULE_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

/* The module as the VM runner put it there. */
#define GS_MODULE_PATH	"/gpusched.ko"
#define GS_PARAM_DIR	"/sys/module/gpusched/parameters"

/*
 * The module's parameters as loaded now, as insmod's arguments in @buf, so
 * that a program that reloads the module can put it back as it was: every
 * file in GS_PARAM_DIR, or a reload loses the knobs a test set. 0, or -1
 * with the parameter that could not be read on stderr.
 */
static inline int gs_module_params(char *buf, size_t size)
{
	char path[512], val[64], *end;
	DIR *dir = opendir(GS_PARAM_DIR);
	struct dirent *e;
	size_t len = 0;
	long long v;
	int fd, ret = 0;
	ssize_t n;

	buf[0] = '\0';
	if (!dir) {
		fprintf(stderr, "# %s: %s\n", GS_PARAM_DIR, strerror(errno));
		return -1;
	}
	while (!ret && (e = readdir(dir))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), GS_PARAM_DIR "/%s", e->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		n = fd < 0 ? -1 : read(fd, val, sizeof(val) - 1);
		if (fd >= 0)
			close(fd);
		v = -1;
		if (n > 0) {
			val[n] = '\0';
			errno = 0;
			v = strtoll(val, &end, 10);
			if (errno || end == val || (*end && *end != '\n'))
				v = -1;
		}
		if (v < 0) {
			fprintf(stderr, "# parameter %s: unreadable\n", e->d_name);
			ret = -1;
			break;
		}
		len += snprintf(buf + len, size - len, "%s=%lld ", e->d_name, v);
		if (len >= size)
			ret = -1;
	}
	closedir(dir);
	return ret;
}

/* rmmod gpusched: 0 or -errno (EWOULDBLOCK while a file is open). */
static inline int gs_module_unload(void)
{
	return syscall(SYS_delete_module, "gpusched", O_NONBLOCK) ? -errno : 0;
}

/* insmod GS_MODULE_PATH @params: 0 or -errno. */
static inline int gs_module_load(const char *params)
{
	int fd = open(GS_MODULE_PATH, O_RDONLY | O_CLOEXEC), err;

	if (fd < 0)
		return -errno;
	err = syscall(SYS_finit_module, fd, params, 0) ? -errno : 0;
	close(fd);
	return err;
}

static inline int gs_module_reload(const char *params)
{
	int err = gs_module_unload();

	return err ? err : gs_module_load(params);
}

#endif /* GS_MODULE_H */
