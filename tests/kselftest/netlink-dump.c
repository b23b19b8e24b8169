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

	ASSERT_EQ(0, gs_acquire(self->fds[0], 0, 0));
	ASSERT_EQ(0, gs_release_gpu(self->fds[0], 50 * MS));
	t.found = 0;
	ASSERT_LE(0, gs_nl_client_dump(self->nl, self->family, ci.gpu_index,
				       5000, client_times, &t));
	ASSERT_EQ(1, t.found);
	EXPECT_EQ(50 * MS, t.gpu_ns);
	EXPECT_EQ(50 * MS, t.held_ns);
}

TEST_HARNESS_MAIN
