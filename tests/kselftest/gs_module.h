/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Loading and unloading gpusched.ko in the VM, for the programs that
 * reload it: the kselftests (through gs_test.h) and tests/fuzz/storm,
 * which has no kselftest harness. Only libc.
 */
#ifndef GS_MODULE_H
#define GS_MODULE_H

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
 * one of them, or a reload loses the knobs a test set. 0, or -1 with the
 * parameter that could not be read on stderr.
 */
static inline int gs_module_params(char *buf, size_t size)
{
	static const char *const names[] = {
		"max_gpus", "timeslice_us", "grace_us", "min_grant_us",
		"starve_us", "window_us", "latency_pct", "latency_queue_us",
		"handover_us", "dev_mode",
	};
	char path[256], val[64], *end;
	size_t len = 0;
	unsigned int i;
	long long v;
	ssize_t n;
	int fd;

	buf[0] = '\0';
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), GS_PARAM_DIR "/%s", names[i]);
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
			fprintf(stderr, "# parameter %s: unreadable\n", names[i]);
			return -1;
		}
		len += snprintf(buf + len, size - len, "%s=%lld ", names[i], v);
		if (len >= size)
			return -1;
	}
	return 0;
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
