// SPDX-License-Identifier: GPL-2.0
/*
 * What Documentation/security.md says about namespaces:
 * - a process in a new pid namespace lists only the clients it can see,
 *   under the pids it knows them by, and does not see a holder outside;
 * - root in a new user namespace is an ordinary user to gpusched: it may
 *   lower its share but not raise it, and netlink writes and the events
 *   group are refused;
 * - the netlink family does not exist in another network namespace.
 */
#include <sched.h>
#include "gs_test.h"
#include "../fuzz/fuzz-nl.h"

static unsigned char rx[GS_NL_BUF];

/* Client pids listed by a GET_CLIENT dump of @gpu; their number or -errno. */
static int dump_pids(int gpu, __u32 *pids, int max)
{
	const struct nlattr *tb[GPUSCHED_A_CLIENT_MAX + 1];
	struct gs_msg *m = calloc(1, sizeof(*m));
	int fd = gs_nl_open(), family, n = 0, err;
	__u32 grp;

	if (fd < 0)
		return fd;
	family = gs_nl_family(fd, &grp);
	if (family < 0) {
		close(fd);
		return family;
	}
	gs_msg_init(m, family, NLM_F_REQUEST | NLM_F_DUMP,
		    GPUSCHED_CMD_GET_CLIENT, GPUSCHED_GENL_VERSION);
	gs_msg_u32(m, GPUSCHED_A_CLIENT_GPU, gpu);
	err = gs_nl_send(fd, m->b, m->len);
	free(m);
	while (!err) {
		const struct nlmsghdr *h = (const void *)rx;
		ssize_t len = gs_nl_recv(fd, rx, sizeof(rx), 5000);

		if (len <= 0) {
			err = len ? len : -ETIMEDOUT;
			break;
		}
		for (; NLMSG_OK(h, len); h = NLMSG_NEXT(h, len)) {
			if (h->nlmsg_type == NLMSG_DONE)
				goto out;
			if (h->nlmsg_type == NLMSG_ERROR) {
				err = ((const struct nlmsgerr *)NLMSG_DATA(h))->error;
				goto out;
			}
			if (gs_nl_attrs(h, tb, GPUSCHED_A_CLIENT_MAX) &&
			    tb[GPUSCHED_A_CLIENT_PID] && n < max)
				pids[n++] = gs_nla_u32(tb[GPUSCHED_A_CLIENT_PID]);
		}
	}
out:
	close(fd);
	return err ? err : n;
}

/* A SET_GPU of @gpu's grace time: the kernel's answer. */
static int set_grace(int gpu, __u32 us)
{
	struct gs_msg *m = calloc(1, sizeof(*m));
	int fd = gs_nl_open(), family, err;
	__u32 grp;

	if (fd < 0)
		return fd;
	family = gs_nl_family(fd, &grp);
	err = family < 0 ? family : 0;
	if (!err) {
		gs_msg_init(m, family, NLM_F_REQUEST | NLM_F_ACK,
			    GPUSCHED_CMD_SET_GPU, GPUSCHED_GENL_VERSION);
		gs_msg_u32(m, GPUSCHED_A_GPU_INDEX, gpu);
		gs_msg_u32(m, GPUSCHED_A_GPU_GRACE_US, us);
		err = gs_nl_send(fd, m->b, m->len);
	}
	if (!err) {
		ssize_t len = gs_nl_recv(fd, rx, sizeof(rx), 5000);
		const struct nlmsghdr *h = (const void *)rx;

		err = len <= 0 ? -ETIMEDOUT :
		      h->nlmsg_type == NLMSG_ERROR ?
		      ((const struct nlmsgerr *)NLMSG_DATA(h))->error : -EBADMSG;
	}
	free(m);
	close(fd);
	return err;
}

static int join_events(void)
{
	int fd = gs_nl_open(), family, err;
	__u32 grp;

	if (fd < 0)
		return fd;
	family = gs_nl_family(fd, &grp);
	err = family < 0 ? family :
	      setsockopt(fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &grp,
			 sizeof(grp)) ? -errno : 0;
	close(fd);
	return err;
}

FIXTURE(ns) {
	int fd;		/* a client outside, holding the token */
	int gpu;
};

FIXTURE_SETUP(ns)
{
	self->fd = gs_open_attached(GS_GPU_NAMESPACES);
	ASSERT_LE(0, self->fd);
	self->gpu = gs_gpu_index(self->fd);
	ASSERT_LE(0, self->gpu);
	ASSERT_EQ(0, gs_gpu_write_u64(self->gpu, "timeslice_us", 5000000));
	ASSERT_EQ(0, gs_gpu_write_u64(self->gpu, "grace_us", 5000000));
	ASSERT_EQ(0, gs_acquire(self->fd, 0, 0));
}

FIXTURE_TEARDOWN(ns)
{
	close(self->fd);
}

/* 0, or the line of the check that failed, as the child's exit status. */
#define CHECK(cond) do { if (!(cond)) return __LINE__ % 250 + 1; } while (0)

static int in_new_pidns(int gpu)
{
	__u32 pids[8];
	int fd, n;

	CHECK(getpid() == 1);
	fd = gs_open_attached(GS_GPU_NAMESPACES);
	CHECK(fd >= 0);
	n = dump_pids(gpu, pids, 8);
	CHECK(n == 1);			/* ours only, not the holder outside */
	CHECK(pids[0] == 1);		/* under our pid for ourselves */
	CHECK(gs_gpu_read(gpu, "holder_pid") == 0);
	CHECK(getppid() == 0);		/* the parent is outside */
	close(fd);
	return 0;
}

TEST_F(ns, pid_namespace_sees_only_its_clients)
{
	__u32 pids[8];
	pid_t pid;
	int n;

	n = dump_pids(self->gpu, pids, 8);
	ASSERT_EQ(1, n);
	EXPECT_EQ(getpid(), (pid_t)pids[0]);
	EXPECT_EQ(getpid(), gs_gpu_read(self->gpu, "holder_pid"));

	pid = gs_fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		pid_t inner;

		if (unshare(CLONE_NEWPID))
			_exit(250);
		inner = fork();
		if (inner == 0)
			_exit(in_new_pidns(self->gpu));
		_exit(inner < 0 ? 251 : gs_wait(inner));
	}
	EXPECT_EQ(0, gs_wait(pid));
}

static int in_new_userns(int gpu)
{
	struct gpusched_params lower = {
		.mask = GPUSCHED_PARAM_WEIGHT, .weight = 50,
	};
	int fd;

	/* Root here, mapped to root outside: still no capability there. */
	CHECK(gs_sysfs_write_path("/proc/self/setgroups", "deny") == 0);
	CHECK(gs_sysfs_write_path("/proc/self/uid_map", "0 0 1") == 0);
	CHECK(gs_sysfs_write_path("/proc/self/gid_map", "0 0 1") == 0);
	fd = gs_open_attached(GS_GPU_NAMESPACES);
	CHECK(fd >= 0);
	CHECK(gs_set_weight(fd, 200) == -EPERM);
	CHECK(gs_ioctl(fd, GPUSCHED_IOC_SET_PARAMS, &lower) == 0);
	CHECK(gs_set_weight(fd, 100) == -EPERM);
	CHECK(set_grace(gpu, 200000) == -EPERM);
	CHECK(join_events() == -EPERM);
	close(fd);
	return 0;
}

TEST_F(ns, user_namespace_root_is_unprivileged)
{
	pid_t pid;

	/* The same calls outside succeed: the namespace makes the difference. */
	EXPECT_EQ(0, gs_set_weight(self->fd, 200));
	EXPECT_EQ(0, set_grace(self->gpu, 5000000));
	EXPECT_EQ(0, join_events());

	pid = gs_fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		if (unshare(CLONE_NEWUSER))
			_exit(250);
		_exit(in_new_userns(self->gpu));
	}
	EXPECT_EQ(0, gs_wait(pid));
}

TEST_F(ns, family_only_in_the_initial_network_namespace)
{
	pid_t pid = gs_fork();

	ASSERT_LE(0, pid);
	if (pid == 0) {
		int fd;
		__u32 grp;

		if (unshare(CLONE_NEWNET))
			_exit(250);
		fd = gs_nl_open();
		_exit(fd < 0 ? 251 : gs_nl_family(fd, &grp) == -ENOENT ? 0 : 252);
	}
	EXPECT_EQ(0, gs_wait(pid));
}

TEST_HARNESS_MAIN
