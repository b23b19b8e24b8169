// SPDX-License-Identifier: GPL-2.0
/*
 * max_gpus bounds the tokens: attaching a new UUID once max_gpus tokens
 * exist gives ENOSPC, while existing ones stay usable.
 *
 * Tokens live until rmmod, so this fills every free slot and must run
 * after every other test program: the runner runs them in name order,
 * hence the "zz-". The runner loads the module with max_gpus=64 so that
 * all programs find room; the default (16) is not checked here.
 */
#include <dirent.h>
#include "gs_test.h"

static int count_gpus(void)
{
	struct dirent *d;
	DIR *dir = opendir(GS_SYSFS_DIR);
	int n = 0;

	if (!dir)
		return -errno;
	while ((d = readdir(dir)))
		n += !strncmp(d->d_name, "gpu", 3);
	closedir(dir);
	return n;
}

TEST(new_uuid_beyond_max_gpus_gives_enospc)
{
	long long max = gs_param_read("max_gpus");
	int fds[64], n, i, fd, filled = 0;

	ASSERT_LT(0, max);
	ASSERT_GE(64, max);
	n = count_gpus();
	ASSERT_LE(0, n);
	ASSERT_GE(max, n);
	ksft_print_msg("%d of %lld tokens exist\n", n, max);

	for (i = 0; n + i < max; i++) {
		fds[i] = gs_open_attached(GS_GPU_CAPACITY + i);
		ASSERT_LE(0, fds[i]) TH_LOG("filler %d: %s", i, strerror(-fds[i]));
		filled++;
	}
	EXPECT_EQ(max, count_gpus());

	fd = gs_open();
	ASSERT_LE(0, fd);
	EXPECT_EQ(-ENOSPC, gs_attach(fd, GS_GPU_CAPACITY + filled));
	EXPECT_EQ(max, count_gpus());
	/* The refused client can still attach to a GPU that exists... */
	EXPECT_EQ(0, gs_attach(fd, GS_GPU_BASICS));
	EXPECT_EQ(0, gs_acquire(fd, 0, 0));
	EXPECT_EQ(0, gs_release(fd));
	close(fd);
	/* ... and closing clients does not free a token. */
	for (i = 0; i < filled; i++)
		close(fds[i]);
	fd = gs_open();
	ASSERT_LE(0, fd);
	EXPECT_EQ(-ENOSPC, gs_attach(fd, GS_GPU_CAPACITY + filled));
	close(fd);
}

TEST_HARNESS_MAIN
