// SPDX-License-Identifier: GPL-2.0
/*
 * max_gpus bounds the tokens: attaching a new UUID once max_gpus tokens
 * with clients exist gives ENOSPC, while existing ones stay usable.
 * Closing clients frees no token, but a new UUID takes the place of one
 * that has no client and no knob an administrator set (issue 21, bug 2:
 * before, made-up UUIDs kept real GPUs out until rmmod).
 *
 * Other programs' tokens would make the count depend on what ran before,
 * so this reloads the module: with no parameter (max_gpus defaults to 16),
 * then with max_gpus=3, and in the end as it was. It needs the runner's
 * /gpusched.ko and no client of any other program left.
 */
#include "gs_test.h"

#define MAX		3

FIXTURE(capacity) {
	char params[512];	/* as loaded by the runner */
	bool reloaded;
	int fds[MAX];
};

FIXTURE_SETUP(capacity)
{
	unsigned int i;

	if (access(GS_MODULE_PATH, R_OK))
		SKIP(return, "%s: not in the test VM", GS_MODULE_PATH);
	ASSERT_EQ(0, gs_module_params(self->params, sizeof(self->params)));
	for (i = 0; i < MAX; i++)
		self->fds[i] = -1;
}

FIXTURE_TEARDOWN(capacity)
{
	unsigned int i;

	for (i = 0; i < MAX; i++)
		if (self->fds[i] >= 0)
			close(self->fds[i]);
	/* Leave the module as the runner loaded it, failed test or not. */
	if (!self->reloaded)
		return;
	gs_module_unload();
	EXPECT_EQ(0, gs_module_load(self->params))
		TH_LOG("reloading with %s", self->params);
}

TEST_F(capacity, new_uuid_beyond_max_gpus_gives_enospc)
{
	int fd, i, gpu0;

	if (!self->params[0])
		return;	/* skipped */
	self->reloaded = true;
	ASSERT_EQ(0, gs_module_reload("")) TH_LOG("reload: clients left?");
	EXPECT_EQ(16, gs_param_read("max_gpus"));
	ASSERT_EQ(0, gs_module_reload("max_gpus=3"));
	ASSERT_EQ(MAX, gs_param_read("max_gpus"));
	ASSERT_EQ(0, gs_count_tokens());

	for (i = 0; i < MAX; i++) {
		self->fds[i] = gs_open_attached(GS_GPU_CAPACITY + i);
		ASSERT_LE(0, self->fds[i]) TH_LOG("token %d: %s", i,
						  strerror(-self->fds[i]));
	}
	EXPECT_EQ(MAX, gs_count_tokens());
	fd = gs_open();
	ASSERT_LE(0, fd);
	EXPECT_EQ(-ENOSPC, gs_attach(fd, GS_GPU_CAPACITY + MAX));
	EXPECT_EQ(MAX, gs_count_tokens());
	/* The refused client can still attach to a GPU that exists... */
	EXPECT_EQ(0, gs_attach(fd, GS_GPU_CAPACITY));
	EXPECT_EQ(0, gs_acquire(fd, 0, 0));
	EXPECT_EQ(0, gs_release(fd));
	close(fd);
	/* An administrator's knob keeps the first token... */
	gpu0 = gs_gpu_index(self->fds[0]);
	ASSERT_LE(0, gpu0);
	ASSERT_EQ(0, gs_gpu_write_u64(gpu0, "timeslice_us", 5000));
	/* ... and closing every client frees no token at once, */
	for (i = 0; i < MAX; i++) {
		close(self->fds[i]);
		self->fds[i] = -1;
	}
	EXPECT_EQ(MAX, gs_count_tokens());
	/* but new UUIDs take the places of the two unused ones. */
	for (i = 0; i < MAX - 1; i++) {
		self->fds[i] = gs_open_attached(GS_GPU_CAPACITY + MAX + i);
		EXPECT_LE(0, self->fds[i]) TH_LOG("new UUID %d: %s", i,
						  strerror(-self->fds[i]));
		EXPECT_EQ(MAX, gs_count_tokens());
	}
	fd = gs_open();
	ASSERT_LE(0, fd);
	EXPECT_EQ(-ENOSPC, gs_attach(fd, GS_GPU_CAPACITY + 2 * MAX));
	close(fd);
	EXPECT_EQ(5000, gs_gpu_read(gpu0, "timeslice_us"));
}

TEST_HARNESS_MAIN
