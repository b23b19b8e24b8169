// SPDX-License-Identifier: GPL-2.0
/*
 * What a client costs the kernel (a struct and a whole status page) is
 * charged to the memory cgroup of the process that opens the device, so
 * that a process in a memory-limited container cannot pin gigabytes of
 * unaccounted kernel memory by opening /dev/gpusched many times.
 *
 * Measured without reaching the limit (that would call the OOM killer):
 * memory.current of a fresh cgroup before and after N opens. Skips where
 * the kernel has no cgroup v2 memory controller.
 */
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include "gs_test.h"

#define CG_ROOT		"/sys/fs/cgroup"
#define CG		CG_ROOT "/gs-memcg-account"
#define NR_OPENS	1000

static long long cg_read(const char *file)
{
	char path[256];

	snprintf(path, sizeof(path), CG "/%s", file);
	return gs_read_number(path);
}

/* 0, or a reason to skip. */
static const char *memcg_setup(void)
{
	char buf[512];

	if (gs_sysfs_read_path(CG_ROOT "/cgroup.controllers", buf, sizeof(buf)) &&
	    mount("cgroup2", CG_ROOT, "cgroup2", 0, NULL))
		return "no cgroup v2";
	if (gs_sysfs_read_path(CG_ROOT "/cgroup.controllers", buf, sizeof(buf)) ||
	    !strstr(buf, "memory"))
		return "no memory controller";
	if (gs_sysfs_write_path(CG_ROOT "/cgroup.subtree_control", "+memory"))
		return "cannot enable the memory controller";
	if (mkdir(CG, 0755) && errno != EEXIST)
		return "cannot create a cgroup";
	return NULL;
}

TEST(clients_are_charged_to_the_opener)
{
	const char *why = memcg_setup();
	long long before, after;
	int *ok, i, fd;
	pid_t pid;

	if (why)
		SKIP(return, "%s", why);
	ok = mmap(NULL, sizeof(*ok) * 3, PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, ok);
	pid = gs_fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct rlimit rl = { NR_OPENS + 64, NR_OPENS + 64 };
		char self[32];

		snprintf(self, sizeof(self), "%d\n", getpid());
		if (gs_sysfs_write_path(CG "/cgroup.procs", self) ||
		    setrlimit(RLIMIT_NOFILE, &rl))
			_exit(1);
		before = cg_read("memory.current");
		for (i = 0; i < NR_OPENS; i++) {
			fd = gs_open();
			if (fd < 0)
				break;
		}
		after = cg_read("memory.current");
		ok[0] = i;
		ok[1] = (int)(before / 1024);
		ok[2] = (int)(after / 1024);
		_exit(0);
	}
	ASSERT_EQ(0, gs_wait(pid));
	ksft_print_msg("%d opens: memory.current %d KiB -> %d KiB\n", ok[0],
		       ok[1], ok[2]);
	ASSERT_EQ(NR_OPENS, ok[0]);
	/* A page each at least: the status page. */
	EXPECT_LE((long long)ok[1] + NR_OPENS * 4, (long long)ok[2]);
	rmdir(CG);
}

TEST_HARNESS_MAIN
