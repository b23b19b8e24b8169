// SPDX-License-Identifier: GPL-2.0
/*
 * max_clients_per_uid: a user may attach that many clients to one GPU;
 * the next ATTACH fails with EUSERS until one of them closes. Other users,
 * other GPUs and CAP_SYS_RESOURCE are not held back, and 0 lifts the limit.
 */
#include "gs_test.h"

#define LIMIT	3

FIXTURE(uid_limit) {
	long long saved;
};

static int set_limit(long long n)
{
	char v[32];

	snprintf(v, sizeof(v), "%lld\n", n);
	return gs_sysfs_write_path(GS_PARAM_DIR "/max_clients_per_uid", v);
}

FIXTURE_SETUP(uid_limit)
{
	self->saved = gs_param_read("max_clients_per_uid");
	ASSERT_LE(0, self->saved);
	ASSERT_EQ(0, set_limit(LIMIT));
}

FIXTURE_TEARDOWN(uid_limit)
{
	set_limit(self->saved);
}

/* Act as @uid (saved uid 0, so that root can be taken back). */
static int as_user(uid_t uid)
{
	if (seteuid(0))
		return -errno;
	return seteuid(uid) ? -errno : 0;
}

TEST_F(uid_limit, per_user_per_gpu)
{
	int mine[LIMIT], theirs[LIMIT], root[LIMIT + 2];
	int i, fd;

	/* In a child, so that the ids do not outlive the test. */
	if (!gs_nobody_child(_metadata, true))
		return;
	for (i = 0; i < LIMIT; i++) {
		mine[i] = gs_open_attached(GS_GPU_UID_LIMIT);
		ASSERT_LE(0, mine[i]) TH_LOG("client %d: %s", i, strerror(-mine[i]));
	}
	fd = gs_open();
	ASSERT_LE(0, fd);
	EXPECT_EQ(-EUSERS, gs_attach(fd, GS_GPU_UID_LIMIT));
	/* The same user on another GPU. */
	EXPECT_EQ(0, gs_attach(fd, GS_GPU_UID_LIMIT_B));
	close(fd);

	/* Another user on the same GPU. */
	ASSERT_EQ(0, as_user(65533));
	for (i = 0; i < LIMIT; i++) {
		theirs[i] = gs_open_attached(GS_GPU_UID_LIMIT);
		EXPECT_LE(0, theirs[i]) TH_LOG("other user: %s", strerror(-theirs[i]));
	}

	/* A closed client makes room, for its user only. */
	ASSERT_EQ(0, as_user(GS_NOBODY));
	close(mine[0]);
	mine[0] = gs_open_attached(GS_GPU_UID_LIMIT);
	EXPECT_LE(0, mine[0]) TH_LOG("after a close: %s", strerror(-mine[0]));
	fd = gs_open_attached(GS_GPU_UID_LIMIT);
	EXPECT_EQ(-EUSERS, fd);

	/* CAP_SYS_RESOURCE: no limit. */
	ASSERT_EQ(0, as_user(0));
	for (i = 0; i < LIMIT + 2; i++) {
		root[i] = gs_open_attached(GS_GPU_UID_LIMIT);
		EXPECT_LE(0, root[i]) TH_LOG("root's client %d: %s", i,
					     strerror(-root[i]));
	}

	/* 0: no limit for anyone. */
	ASSERT_EQ(0, set_limit(0));
	ASSERT_EQ(0, as_user(GS_NOBODY));
	fd = gs_open_attached(GS_GPU_UID_LIMIT);
	EXPECT_LE(0, fd) TH_LOG("no limit: %s", strerror(-fd));
	_exit(_metadata->passed ? 0 : 1);
}

/* The limit is read at each ATTACH: lowering it keeps attached clients. */
TEST_F(uid_limit, lowered_below_attached)
{
	int fds[LIMIT];
	int i;

	if (!gs_nobody_child(_metadata, true))
		return;
	for (i = 0; i < LIMIT; i++) {
		fds[i] = gs_open_attached(GS_GPU_UID_LIMIT_B);
		ASSERT_LE(0, fds[i]);
	}
	ASSERT_EQ(0, as_user(0));
	ASSERT_EQ(0, set_limit(1));
	ASSERT_EQ(0, as_user(GS_NOBODY));
	for (i = 0; i < LIMIT; i++)
		EXPECT_EQ(0, gs_acquire(fds[i], 0, 0) ?: gs_release(fds[i]));
	EXPECT_EQ(-EUSERS, gs_open_attached(GS_GPU_UID_LIMIT_B));
	for (i = 0; i < LIMIT; i++)
		close(fds[i]);
	/* All gone: one fits again. */
	EXPECT_LE(0, gs_open_attached(GS_GPU_UID_LIMIT_B));
	_exit(_metadata->passed ? 0 : 1);
}

TEST_HARNESS_MAIN
