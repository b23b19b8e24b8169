// SPDX-License-Identifier: GPL-2.0
/*
 * What Documentation/security.md says about namespaces:
 * - a process in a new pid namespace lists only the clients it can see,
 *   under the pids it knows them by, and does not see a holder outside;
 * - a dump gives pids in the pid namespace of the process that sent the
 *   request, to its end, whoever reads the rest of it;
 * - root in a new user namespace is an ordinary user to gpusched: it may
 *   lower its share but not raise it, and netlink writes and the events
 *   group are refused;
 * - uids are given in the user namespace of the netlink socket's opener,
 *   whoever uses the socket (after unshare(), or passed with SCM_RIGHTS);
 * - the netlink family does not exist in another network namespace.
 */
#include <sched.h>
#include "gs_test.h"
#include "../fuzz/fuzz-nl.h"

/*
 * A GET_CLIENT dump of @gpu sent on @fd: 0 or -errno. The family is looked
 * up on a socket of its own, so that @fd has received nothing yet and the
 * kernel sizes the dump's first message for a reader it does not know
 * (a page), not for the buffer of an earlier recv().
 */
static int dump_request(int fd, int gpu)
{
	int family, lookup = gs_nl_open_family(&family);

	if (lookup < 0)
		return lookup;
	close(lookup);
	return gs_nl_client_dump_send(fd, family, gpu);
}

/* Where dump_read() puts what it reads. */
struct ns_dump {
	__u32 *pids, *uids;
	int max, n, first;
};

static int ns_client(const struct nlattr *const *tb, unsigned int datagram,
		     void *arg)
{
	struct ns_dump *d = arg;

	if (!tb[GPUSCHED_A_CLIENT_PID] || !tb[GPUSCHED_A_CLIENT_UID])
		return -EBADMSG;
	if (d->n < d->max && d->pids)
		d->pids[d->n] = gs_nla_u32(tb[GPUSCHED_A_CLIENT_PID]);
	if (d->n < d->max && d->uids)
		d->uids[d->n] = gs_nla_u32(tb[GPUSCHED_A_CLIENT_UID]);
	d->n++;
	d->first += datagram == 1;
	return 0;
}

/*
 * The clients of the dump sent on @fd, read to its end: their pids and
 * uids (either may be NULL), their number or -errno. @first: the number
 * in the first recv(), if not NULL.
 */
static int dump_read(int fd, __u32 *pids, __u32 *uids, int max, int *first)
{
	struct ns_dump d = { .pids = pids, .uids = uids, .max = max };
	int err = gs_nl_client_dump_read(fd, 5000, ns_client, &d);

	if (err < 0)
		return err;
	if (first)
		*first = d.first;
	return d.n;
}

/* A GET_CLIENT dump of @gpu on @fd: see dump_read(). */
static int dump_on(int fd, int gpu, __u32 *pids, __u32 *uids, int max)
{
	int err = dump_request(fd, gpu);

	return err ? err : dump_read(fd, pids, uids, max, NULL);
}

/* Client pids listed by a GET_CLIENT dump of @gpu; their number or -errno. */
static int dump_pids(int gpu, __u32 *pids, int max)
{
	int fd = gs_nl_open(), n;

	if (fd < 0)
		return fd;
	n = dump_on(fd, gpu, pids, NULL, max);
	close(fd);
	return n;
}

/* A SET_GPU of @gpu's grace time: the kernel's answer. */
static int set_grace(int gpu, __u32 us)
{
	int family, err, fd = gs_nl_open_family(&family);
	struct gs_msg m;

	if (fd < 0)
		return fd;
	gs_msg_init(&m, family, NLM_F_REQUEST, GPUSCHED_CMD_SET_GPU,
		    GPUSCHED_GENL_VERSION);
	gs_msg_u32(&m, GPUSCHED_A_GPU_INDEX, gpu);
	gs_msg_u32(&m, GPUSCHED_A_GPU_GRACE_US, us);
	err = gs_nl_ack(fd, &m, 5000);
	close(fd);
	return err;
}

/*
 * gs_fork() a child in a new namespace of kind @flag (a CLONE_NEW* flag):
 * its pid in the parent, or -errno; 0 in the child. In a new pid
 * namespace the child is its first process (pid 1), forked by the one
 * that unshared, which exits with its status. A child that cannot
 * unshare exits with 250, one whose fork fails with 251.
 */
static pid_t fork_in_new_ns(int flag)
{
	pid_t pid = gs_fork(), inner;

	if (pid < 0)
		return -errno;
	if (pid)
		return pid;
	if (unshare(flag))
		_exit(250);
	if (flag != CLONE_NEWPID)
		return 0;
	inner = fork();
	if (inner == 0)
		return 0;
	_exit(inner < 0 ? 251 : gs_wait(inner));
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

	pid = fork_in_new_ns(CLONE_NEWPID);
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(in_new_pidns(self->gpu));
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

	pid = fork_in_new_ns(CLONE_NEWUSER);
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(in_new_userns(self->gpu));
	EXPECT_EQ(0, gs_wait(pid));
}

/* Pass @fd over the Unix socket @sock (SCM_RIGHTS): 0 or -errno. */
static int send_fd(int sock, int fd)
{
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(sizeof(int))];
	} u = {};
	char byte = 0;
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = u.b, .msg_controllen = sizeof(u.b),
	};
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);

	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	return sendmsg(sock, &mh, 0) == 1 ? 0 : -errno;
}

/* The file passed over @sock, or -errno. */
static int recv_fd(int sock)
{
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(sizeof(int))];
	} u = {};
	char byte;
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = u.b, .msg_controllen = sizeof(u.b),
	};
	struct cmsghdr *c;
	int fd;

	if (recvmsg(sock, &mh, 0) != 1)
		return -EIO;
	c = CMSG_FIRSTHDR(&mh);
	if (!c || c->cmsg_type != SCM_RIGHTS)
		return -EBADMSG;
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

/* The uid that a dump on @fd gives the only client of @gpu, or -errno. */
static long long only_uid(int fd, int gpu)
{
	__u32 uid;
	int n = dump_on(fd, gpu, NULL, &uid, 1);

	return n < 0 ? n : n == 1 ? uid : -E2BIG;
}

/*
 * Root outside, uid 1000 inside: root's client is listed under 1000 on a
 * socket opened inside, and under 0 on one opened outside, whoever reads.
 */
static int in_mapped_userns(int gpu, int outside, int sock)
{
	int inside;

	CHECK(gs_sysfs_write_path("/proc/self/setgroups", "deny") == 0);
	CHECK(gs_sysfs_write_path("/proc/self/uid_map", "1000 0 1") == 0);
	CHECK(gs_sysfs_write_path("/proc/self/gid_map", "1000 0 1") == 0);
	CHECK(getuid() == 1000);
	inside = gs_nl_open();
	CHECK(inside >= 0);
	CHECK(only_uid(inside, gpu) == 1000);
	/* Opened before unshare(), used after it: the socket's namespace. */
	CHECK(only_uid(outside, gpu) == 0);
	/* And the other way round: to the parent, outside. */
	CHECK(send_fd(sock, inside) == 0);
	close(inside);
	return 0;
}

TEST_F(ns, uids_in_the_sockets_user_namespace)
{
	int sv[2], outside, passed;
	pid_t pid;

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	outside = gs_nl_open();
	ASSERT_LE(0, outside);
	EXPECT_EQ(0, only_uid(outside, self->gpu));

	pid = fork_in_new_ns(CLONE_NEWUSER);
	ASSERT_LE(0, pid);
	if (pid == 0) {
		close(sv[0]);
		_exit(in_mapped_userns(self->gpu, outside, sv[1]));
	}
	close(sv[1]);
	passed = recv_fd(sv[0]);
	EXPECT_EQ(0, gs_wait(pid));
	ASSERT_LE(0, passed);
	/* Opened inside the child's namespace, read by root outside. */
	EXPECT_EQ(1000, only_uid(passed, self->gpu));
	close(passed);
	close(sv[0]);
	close(outside);
}

#define NS_MANY 64

/*
 * Read, in a new pid namespace, the rest of a dump that @parent sent:
 * every client is still listed under @parent's pid in @parent's namespace.
 */
static int read_in_new_pidns(int fd, pid_t parent, int clients)
{
	static __u32 pids[NS_MANY + 8];
	int n, i, first = -1;

	CHECK(getpid() == 1);
	n = dump_read(fd, pids, NULL, NS_MANY + 8, &first);
	CHECK(n == clients);
	/* The sender built the first message; the rest were built here. */
	CHECK(first > 0 && first < clients);
	for (i = 0; i < n; i++)
		CHECK(pids[i] == (__u32)parent);
	return 0;
}

TEST_F(ns, dump_in_the_senders_pid_namespace)
{
	int fds[NS_MANY], fd, i;
	pid_t pid, me = getpid();

	for (i = 0; i < NS_MANY; i++) {
		fds[i] = gs_open_attached(GS_GPU_NAMESPACES);
		ASSERT_LE(0, fds[i]);
	}
	fd = gs_nl_open();
	ASSERT_LE(0, fd);
	/*
	 * Sent here: the first message is built at once, in this process,
	 * and the rest (more clients than one message holds) when the child
	 * reads them, from a pid namespace where none of them is visible.
	 */
	ASSERT_EQ(0, dump_request(fd, self->gpu));
	pid = fork_in_new_ns(CLONE_NEWPID);
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(read_in_new_pidns(fd, me, NS_MANY + 1));
	EXPECT_EQ(0, gs_wait(pid));
	close(fd);
	for (i = 0; i < NS_MANY; i++)
		close(fds[i]);
}

TEST_F(ns, family_only_in_the_initial_network_namespace)
{
	pid_t pid = fork_in_new_ns(CLONE_NEWNET);

	ASSERT_LE(0, pid);
	if (pid == 0) {
		int fd;
		__u32 grp;

		fd = gs_nl_open();
		_exit(fd < 0 ? 251 : gs_nl_family(fd, &grp) == -ENOENT ? 0 : 252);
	}
	EXPECT_EQ(0, gs_wait(pid));
}

TEST_HARNESS_MAIN
