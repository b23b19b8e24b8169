// SPDX-License-Identifier: GPL-2.0
/*
 * A GET_CLIENT dump lists every client, even one that spans several
 * messages and clients that attached in another order than they opened.
 * The dump resumes after the id of the last client it put, which is
 * right only if a GPU's list is in increasing id order: ids must be
 * given at attach, in list order, not at open.
 *
 * A client's GPU time, as it reported it, is listed with it.
 *
 * Another user's clients are listed without their pid and command, unless
 * the reader has CAP_SYS_PTRACE or CAP_NET_ADMIN (security.md, F6).
 *
 * Raw generic netlink (tests/fuzz/fuzz-nl.h), so that it links statically.
 */
#include "gs_test.h"
#include "../fuzz/fuzz-nl.h"

#define NR_CLIENTS	400	/* a few dump messages' worth */
#define MS		1000000ull	/* ns */

/* Each client listed must have an id: count them. */
static int count_client(const struct nlattr *const *tb, unsigned int datagram,
			void *arg)
{
	if (!tb[GPUSCHED_A_CLIENT_ID])
		return -EBADMSG;
	++*(unsigned int *)arg;
	return 0;
}

/*
 * Dump the clients of GPU @gpu: their number in @total, and the number of
 * datagrams they came in. 0 or -errno.
 */
static int dump_clients(int fd, int family, unsigned int gpu,
			unsigned int *total, unsigned int *messages)
{
	int n;

	*total = 0;
	n = gs_nl_client_dump(fd, family, gpu, 5000, count_client, total);
	if (n < 0)
		return n;
	*messages = n;
	return 0;
}

FIXTURE(dump) {
	int nl;
	int family;
	int fds[NR_CLIENTS];
	int gpu;
};

FIXTURE_SETUP(dump)
{
	__u32 grp;
	int i;

	for (i = 0; i < NR_CLIENTS; i++)
		self->fds[i] = -1;
	self->nl = gs_nl_open();
	ASSERT_LE(0, self->nl) TH_LOG("netlink: %s", strerror(-self->nl));
	self->family = gs_nl_family(self->nl, &grp);
	ASSERT_LT(0, self->family) TH_LOG("family: %s", strerror(-self->family));
}

FIXTURE_TEARDOWN(dump)
{
	int i;

	for (i = 0; i < NR_CLIENTS; i++)
		if (self->fds[i] >= 0)
			close(self->fds[i]);
	close(self->nl);
}

/* Open all, then attach in reverse: the list is in decreasing open order. */
TEST_F(dump, clients_attached_in_reverse_are_all_listed)
{
	unsigned int total, messages;
	struct gpusched_client_info ci;
	int i;

	for (i = 0; i < NR_CLIENTS; i++) {
		self->fds[i] = gs_open();
		ASSERT_LE(0, self->fds[i]) TH_LOG("open %d: %s", i,
						  strerror(-self->fds[i]));
	}
	for (i = NR_CLIENTS - 1; i >= 0; i--)
		ASSERT_EQ(0, gs_attach(self->fds[i], GS_GPU_NL_DUMP));
	ASSERT_EQ(0, gs_info(self->fds[0], &ci));
	self->gpu = ci.gpu_index;

	ASSERT_EQ(0, dump_clients(self->nl, self->family, self->gpu, &total,
				  &messages));
	ksft_print_msg("%u of %d clients listed in %u messages\n", total,
		       NR_CLIENTS, messages);
	EXPECT_LT(1, messages);	/* else the test proves nothing */
	EXPECT_EQ(NR_CLIENTS, total);
}

/* Attached in open order, as before: still all listed, once each. */
TEST_F(dump, clients_attached_in_order_are_all_listed)
{
	unsigned int total, messages;
	struct gpusched_client_info ci;
	int i;

	for (i = 0; i < NR_CLIENTS; i++) {
		self->fds[i] = gs_open_attached(GS_GPU_NL_DUMP);
		ASSERT_LE(0, self->fds[i]);
	}
	ASSERT_EQ(0, gs_info(self->fds[0], &ci));
	ASSERT_EQ(0, dump_clients(self->nl, self->family, ci.gpu_index, &total,
				  &messages));
	EXPECT_LT(1, messages);
	EXPECT_EQ(NR_CLIENTS, total);
}

/* The times listed for the client of process @pid (one only). */
struct times {
	__u32 pid;
	int found;
	__u64 held_ns, gpu_ns;
};

static int client_times(const struct nlattr *const *tb, unsigned int datagram,
			void *arg)
{
	struct times *t = arg;

	if (!tb[GPUSCHED_A_CLIENT_PID] ||
	    gs_nla_u32(tb[GPUSCHED_A_CLIENT_PID]) != t->pid)
		return 0;
	if (!tb[GPUSCHED_A_CLIENT_HELD_NS] || !tb[GPUSCHED_A_CLIENT_GPU_NS])
		return -EBADMSG;
	t->found++;
	t->held_ns = gs_nla_u64(tb[GPUSCHED_A_CLIENT_HELD_NS]);
	t->gpu_ns = gs_nla_u64(tb[GPUSCHED_A_CLIENT_GPU_NS]);
	return 0;
}

/*
 * A grant held a moment whose 50 ms of work ran on after the release: the
 * dump lists the GPU time reported, and the time charged, the larger.
 */
TEST_F(dump, gpu_time_listed)
{
	struct times t = { .pid = (__u32)getpid() };
	struct gpusched_client_info ci;

	self->fds[0] = gs_open_attached(GS_GPU_NL_DUMP);
	ASSERT_LE(0, self->fds[0]);
	ASSERT_EQ(0, gs_info(self->fds[0], &ci));
	ASSERT_LE(0, gs_nl_client_dump(self->nl, self->family, ci.gpu_index,
				       5000, client_times, &t));
	ASSERT_EQ(1, t.found);
	EXPECT_EQ(0, t.gpu_ns);

	/* The report below fits in the time since it attached. */
	gs_sleep_us(60000);
	ASSERT_EQ(0, gs_acquire(self->fds[0], 0, 0));
	ASSERT_EQ(0, gs_release_gpu(self->fds[0], 50 * MS));
	t.found = 0;
	ASSERT_LE(0, gs_nl_client_dump(self->nl, self->family, ci.gpu_index,
				       5000, client_times, &t));
	ASSERT_EQ(1, t.found);
	EXPECT_EQ(50 * MS, t.gpu_ns);
	EXPECT_EQ(50 * MS, t.held_ns);
}

/* Who opened the clients of uids 0 and GS_NOBODY, as a dump shows them. */
struct owners {
	int listed[2];		/* clients of uid 0, of GS_NOBODY */
	int with_pid[2];	/* of those, listed with a PID */
	int with_comm[2];	/* and with a COMM */
	__u32 pid[2];		/* the last PID listed */
};

static int client_owner(const struct nlattr *const *tb, unsigned int datagram,
			void *arg)
{
	struct owners *o = arg;
	__u32 uid;
	int i;

	if (!tb[GPUSCHED_A_CLIENT_UID])
		return -EBADMSG;
	uid = gs_nla_u32(tb[GPUSCHED_A_CLIENT_UID]);
	if (uid != 0 && uid != GS_NOBODY)
		return 0;
	i = uid == GS_NOBODY;
	o->listed[i]++;
	if (tb[GPUSCHED_A_CLIENT_PID]) {
		o->with_pid[i]++;
		o->pid[i] = gs_nla_u32(tb[GPUSCHED_A_CLIENT_PID]);
	}
	if (tb[GPUSCHED_A_CLIENT_COMM])
		o->with_comm[i]++;
	return 0;
}

/*
 * Root's client and nobody's on one GPU. Nobody's dump lists both, its own
 * with its pid and command, root's without them; root's shows both.
 */
TEST_F(dump, other_users_pid_and_comm_hidden)
{
	struct gpusched_client_info ci;
	struct owners o = {};
	int ready[2], done[2];
	pid_t child;
	char c;

	self->fds[0] = gs_open_attached(GS_GPU_NL_DUMP);
	ASSERT_LE(0, self->fds[0]);
	ASSERT_EQ(0, gs_info(self->fds[0], &ci));
	self->gpu = ci.gpu_index;
	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, pipe(done));
	child = gs_fork_nobody(false);
	ASSERT_LE(0, child);
	if (child == 0) {
		int fd = gs_open_attached(GS_GPU_NL_DUMP), nl = gs_nl_open();
		int code = 0;

		close(ready[0]);
		close(done[1]);
		if (fd < 0 || nl < 0 ||
		    gs_nl_client_dump(nl, self->family, self->gpu, 5000,
				      client_owner, &o) < 0)
			_exit(10);
		ksft_print_msg("nobody lists root's %d client(s), %d with a pid, %d with a command; its own %d, %d, %d (pid %u, its %d)\n",
			       o.listed[0], o.with_pid[0], o.with_comm[0],
			       o.listed[1], o.with_pid[1], o.with_comm[1],
			       o.pid[1], (int)getpid());
		if (o.listed[0] != 1 || o.listed[1] != 1)
			code = 11;
		else if (o.with_pid[0] || o.with_comm[0])
			code = 12;
		else if (o.with_pid[1] != 1 || o.with_comm[1] != 1 ||
			 o.pid[1] != (__u32)getpid())
			code = 13;
		/* Attached until root has listed it too. */
		if (write(ready[1], "r", 1) != 1 || read(done[0], &c, 1) < 0)
			code = 14;
		_exit(code);
	}
	close(ready[1]);
	close(done[0]);
	ASSERT_EQ(1, read(ready[0], &c, 1));
	ASSERT_LE(0, gs_nl_client_dump(self->nl, self->family, self->gpu, 5000,
				       client_owner, &o));
	close(done[1]);
	close(ready[0]);
	EXPECT_EQ(0, gs_wait(child));
	EXPECT_EQ(1, o.listed[0]);
	EXPECT_EQ(1, o.with_pid[0]);
	EXPECT_EQ(1, o.with_comm[0]);
	EXPECT_EQ(1, o.listed[1]);
	EXPECT_EQ(1, o.with_pid[1]);
	EXPECT_EQ((__u32)child, o.pid[1]);
}

TEST_HARNESS_MAIN
