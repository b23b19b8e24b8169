// SPDX-License-Identifier: GPL-2.0
/*
 * Permissions of the family: an unprivileged user's set requests get
 * EPERM and change nothing, its reads work (without the pid and command
 * of another user's client), and it may not join the events group;
 * gpuschedctl tells such a user what to do about it.
 */
#include <sys/wait.h>
#include "nl_test.h"

FIXTURE(perm) {
	int fd;		/* a client of the test GPU, held by root */
	int gpu;
	__u64 id;
	long long slice;
	struct nlt t;
};

FIXTURE_SETUP(perm)
{
	ASSERT_EQ(0, nlt_open(&self->t));
	self->fd = gs_open_attached(NL_GPU_PERM);
	ASSERT_LE(0, self->fd);
	self->gpu = gs_gpu_index(self->fd);
	ASSERT_LE(0, self->gpu);
	ASSERT_EQ(0, gs_set_weight(self->fd, 100));
	self->id = nlt_client_id(&self->t, self->fd);
	ASSERT_NE(0, self->id);
	ASSERT_EQ(0, gs_gpu_write_u64(self->gpu, "timeslice_us", 7000));
	self->slice = gs_gpu_read(self->gpu, "timeslice_us");
}

FIXTURE_TEARDOWN(perm)
{
	close(self->fd);
	nlt_close(&self->t);
}

/* What root sees of the client and the GPU: nothing may have changed. */
static void assert_unchanged(struct __test_metadata *_metadata,
			     FIXTURE_DATA(perm) *self)
{
	struct gpusched_client_info ci;

	ASSERT_EQ(0, gs_info(self->fd, &ci));
	EXPECT_EQ(100, ci.weight);
	EXPECT_EQ(GPUSCHED_CLASS_NORMAL, ci.sched_class);
	EXPECT_EQ(0, ci.cap_pct);
	EXPECT_EQ(7000, gs_gpu_read(self->gpu, "timeslice_us"));
}

/*
 * Run @fn as nobody in a child (the fixture's process keeps root), with a
 * netlink socket opened after dropping privileges.
 */
#define AS_NOBODY(body) do {						\
	pid_t __pid = gs_fork();					\
	ASSERT_LE(0, __pid);						\
	if (__pid == 0) {						\
		struct nlt u;						\
		if (nlt_drop_privileges(GS_NOBODY, GS_NOBODY))		\
			_exit(100);					\
		if (nlt_open(&u))					\
			_exit(101);					\
		body							\
		_exit(0);						\
	}								\
	EXPECT_EQ(0, gs_wait(__pid));					\
} while (0)

TEST_F(perm, unprivileged_reads_work)
{
	__u64 id = self->id;
	int gpu = self->gpu;

	AS_NOBODY({
		struct nlt_clients cs = { 0 };
		const struct nlt_client *c;
		struct nlt_msg m;

		if (nlt_get_clients(&u, gpu, &cs))
			_exit(1);
		/* Root's client: listed, without its pid (no PID). */
		c = nlt_find(&cs, id);
		if (!c || c->weight != 100 || c->uid != 0 || c->pid)
			_exit(2);
		nlt_init(&m, u.family, GPUSCHED_CMD_GET_GPU, 0);
		nlt_put_u32(&m, GPUSCHED_A_GPU_INDEX, gpu);
		if (nlt_request(&u, &m, NULL, NULL))
			_exit(3);
		nlt_init(&m, u.family, GPUSCHED_CMD_GET_GPU, NLM_F_DUMP);
		if (nlt_request(&u, &m, NULL, NULL) || u.nr_msgs < 1)
			_exit(4);
		free(cs.c);
	});
}

TEST_F(perm, unprivileged_sets_get_eperm_and_change_nothing)
{
	__u64 id = self->id;
	int gpu = self->gpu;

	AS_NOBODY({
		struct nlt_msg m;

		/* Lowering, as nice(2) would allow, is still a change. */
		if (nlt_set_client(&u, id, 50, -1, -1) != -EPERM)
			_exit(1);
		if (nlt_set_client(&u, id, 0, GPUSCHED_CLASS_BATCH, -1) != -EPERM)
			_exit(2);
		if (nlt_set_client(&u, id, 0, -1, 10) != -EPERM)
			_exit(3);
		if (nlt_set_client(&u, id, 10000, GPUSCHED_CLASS_LATENCY, 0) != -EPERM)
			_exit(4);
		nlt_init(&m, u.family, GPUSCHED_CMD_SET_CLIENT, 0);
		nlt_put_u32(&m, GPUSCHED_A_CLIENT_PID, getppid());
		nlt_put_u32(&m, GPUSCHED_A_CLIENT_WEIGHT, 1);
		if (nlt_request(&u, &m, NULL, NULL) != -EPERM)
			_exit(5);
		nlt_init(&m, u.family, GPUSCHED_CMD_SET_GPU, 0);
		nlt_put_u32(&m, GPUSCHED_A_GPU_INDEX, gpu);
		nlt_put_u32(&m, GPUSCHED_A_GPU_TIMESLICE_US, 200);
		if (nlt_request(&u, &m, NULL, NULL) != -EPERM)
			_exit(6);
		/* Even a malformed request: permission comes first. */
		nlt_init(&m, u.family, GPUSCHED_CMD_SET_GPU, 0);
		if (nlt_request(&u, &m, NULL, NULL) != -EPERM)
			_exit(7);
	});
	assert_unchanged(_metadata, self);
}

TEST_F(perm, unprivileged_cannot_join_events)
{
	__u32 group = self->t.events_group;

	ASSERT_NE(0, group);
	AS_NOBODY({
		if (!setsockopt(u.fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP,
				&group, sizeof(group)))
			_exit(1);
		if (errno != EPERM)
			_exit(2);
	});
	/* Root may. */
	ASSERT_EQ(0, setsockopt(self->t.fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP,
				&group, sizeof(group)));
}

/* Run gpuschedctl as nobody; its exit status, its output in @out. */
static int ctl_as_nobody(char *out, size_t size, char *const argv[])
{
	return nlt_run(NL_GPUSCHEDCTL, argv, GS_NOBODY, true, out, size);
}

TEST_F(perm, gpuschedctl_says_what_to_do)
{
	/* status lists every token in the VM: room for max_gpus of them. */
	static char out[65536];
	char pid[16], gpu[16];
	char *set_client[] = { "gpuschedctl", "set", "client", pid, "weight=5", NULL };
	char *set_gpu[] = { "gpuschedctl", "set", "gpu", gpu, "timeslice_us=300", NULL };
	char *status[] = { "gpuschedctl", "status", NULL };
	char *watch[] = { "gpuschedctl", "watch", NULL };

	if (access(NL_GPUSCHEDCTL, X_OK))
		SKIP(return, "%s not in the VM", NL_GPUSCHEDCTL);
	snprintf(pid, sizeof(pid), "%d", getpid());
	snprintf(gpu, sizeof(gpu), "%d", self->gpu);

	EXPECT_EQ(1, ctl_as_nobody(out, sizeof(out), set_client));
	EXPECT_NE(NULL, strstr(out, "permission denied: changing a client needs CAP_NET_ADMIN (run as root)"))
		TH_LOG("got: %s", out);
	EXPECT_EQ(1, ctl_as_nobody(out, sizeof(out), set_gpu));
	EXPECT_NE(NULL, strstr(out, "permission denied: changing a GPU's knobs needs CAP_NET_ADMIN (run as root)"))
		TH_LOG("got: %s", out);
	EXPECT_EQ(1, ctl_as_nobody(out, sizeof(out), watch));
	EXPECT_NE(NULL, strstr(out, "permission denied: watching events needs CAP_NET_ADMIN (run as root)"))
		TH_LOG("got: %s", out);
	EXPECT_EQ(0, ctl_as_nobody(out, sizeof(out), status));
	EXPECT_NE(NULL, strstr(out, "timeslice_us=7000")) TH_LOG("got: %s", out);
	assert_unchanged(_metadata, self);
}

TEST_HARNESS_MAIN
