// SPDX-License-Identifier: GPL-2.0
/*
 * Malformed requests to the family get clean errors (the right errno, an
 * extended ack that names the attribute where there is one, and no change
 * of state), and a dump of 1,000 clients is complete and consistent, also
 * while other clients come and go.
 */
#include <sys/resource.h>
#include "nl_test.h"

#define NR_DUMP_CLIENTS	1000

FIXTURE(bad) {
	struct nlt t;
	int fd;
	int gpu;
	__u64 id;
};

FIXTURE_SETUP(bad)
{
	ASSERT_EQ(0, nlt_open(&self->t));
	self->fd = gs_open_attached(NL_GPU_BADMSG);
	ASSERT_LE(0, self->fd);
	self->gpu = gs_gpu_index(self->fd);
	ASSERT_LE(0, self->gpu);
	ASSERT_EQ(0, gs_set_weight(self->fd, 100));
	ASSERT_EQ(0, gs_gpu_write_u64(self->gpu, "timeslice_us", 10000));
	self->id = nlt_client_id(&self->t, self->fd);
	ASSERT_NE(0, self->id);
}

FIXTURE_TEARDOWN(bad)
{
	close(self->fd);
	nlt_close(&self->t);
}

static void assert_unchanged(struct __test_metadata *_metadata,
			     FIXTURE_DATA(bad) *self)
{
	struct gpusched_client_info ci;

	ASSERT_EQ(0, gs_info(self->fd, &ci));
	EXPECT_EQ(100, ci.weight);
	EXPECT_EQ(GPUSCHED_CLASS_NORMAL, ci.sched_class);
	EXPECT_EQ(0, ci.cap_pct);
	EXPECT_EQ(10000, gs_gpu_read(self->gpu, "timeslice_us"));
}

/* A request with the attributes added by @fill: its errno. */
#define REQ(cmd, flags, fill) ({					\
	struct nlt_msg __m;						\
	nlt_init(&__m, self->t.family, (cmd), (flags));			\
	{ fill; }							\
	nlt_request(&self->t, &__m, NULL, NULL);			\
})

TEST_F(bad, missing_attributes)
{
	EXPECT_EQ(-EINVAL, REQ(GPUSCHED_CMD_GET_GPU, 0, ));
	EXPECT_EQ(GPUSCHED_A_GPU_INDEX, self->t.bad_attr)
		TH_LOG("extack: %s", self->t.extack);
	EXPECT_EQ(-EINVAL, REQ(GPUSCHED_CMD_SET_GPU, 0,
			       nlt_put_u32(&__m, GPUSCHED_A_GPU_TIMESLICE_US, 500)));
	EXPECT_EQ(GPUSCHED_A_GPU_INDEX, self->t.bad_attr);
	EXPECT_EQ(-EINVAL, REQ(GPUSCHED_CMD_SET_CLIENT, 0,
			       nlt_put_u32(&__m, GPUSCHED_A_CLIENT_WEIGHT, 5)));
	EXPECT_STREQ("client ID or PID required", self->t.extack);
	assert_unchanged(_metadata, self);
}

TEST_F(bad, wrong_types_and_lengths)
{
	__u8 one = 1;
	__u16 two = 2;

	/* A u32 attribute one byte long, then two. */
	EXPECT_GT(0, REQ(GPUSCHED_CMD_GET_GPU, 0,
			 nlt_put(&__m, GPUSCHED_A_GPU_INDEX, &one, 1)));
	EXPECT_EQ(GPUSCHED_A_GPU_INDEX, self->t.bad_attr)
		TH_LOG("extack: %s", self->t.extack);
	EXPECT_GT(0, REQ(GPUSCHED_CMD_SET_CLIENT, 0,
			 nlt_put_u64(&__m, GPUSCHED_A_CLIENT_ID, self->id);
			 nlt_put(&__m, GPUSCHED_A_CLIENT_WEIGHT, &two, 2)));
	EXPECT_EQ(GPUSCHED_A_CLIENT_WEIGHT, self->t.bad_attr)
		TH_LOG("extack: %s", self->t.extack);
	/* A u64 id given as a u32. */
	EXPECT_GT(0, REQ(GPUSCHED_CMD_SET_CLIENT, 0,
			 nlt_put_u32(&__m, GPUSCHED_A_CLIENT_ID, (__u32)self->id);
			 nlt_put_u32(&__m, GPUSCHED_A_CLIENT_WEIGHT, 5)));
	EXPECT_EQ(GPUSCHED_A_CLIENT_ID, self->t.bad_attr);
	/* Read-only attributes in a set request: refused, not ignored. */
	EXPECT_EQ(-EINVAL, REQ(GPUSCHED_CMD_SET_CLIENT, 0,
			       nlt_put_u64(&__m, GPUSCHED_A_CLIENT_ID, self->id);
			       nlt_put(&__m, GPUSCHED_A_CLIENT_COMM, "evil", 5)));
	EXPECT_EQ(GPUSCHED_A_CLIENT_COMM, self->t.bad_attr);
	EXPECT_EQ(-EINVAL, REQ(GPUSCHED_CMD_SET_GPU, 0,
			       nlt_put_u32(&__m, GPUSCHED_A_GPU_INDEX, self->gpu);
			       nlt_put_u64(&__m, GPUSCHED_A_GPU_GRANTS, 0)));
	EXPECT_EQ(GPUSCHED_A_GPU_GRANTS, self->t.bad_attr);
	/* An attribute of another operation: policies are per operation. */
	EXPECT_EQ(-EINVAL, REQ(GPUSCHED_CMD_GET_GPU, 0,
			       nlt_put_u32(&__m, GPUSCHED_A_GPU_INDEX, self->gpu);
			       nlt_put_u32(&__m, GPUSCHED_A_GPU_TIMESLICE_US, 500)));
	EXPECT_EQ(GPUSCHED_A_GPU_TIMESLICE_US, self->t.bad_attr);
	/* An attribute type beyond the family's. */
	EXPECT_EQ(-EINVAL, REQ(GPUSCHED_CMD_GET_GPU, 0,
			       nlt_put_u32(&__m, GPUSCHED_A_GPU_INDEX, self->gpu);
			       nlt_put_u32(&__m, 200, 0)));
	/* A command the family does not have, and an event as a request. */
	EXPECT_EQ(-EOPNOTSUPP, REQ(99, 0, ));
	EXPECT_EQ(-EOPNOTSUPP, REQ(GPUSCHED_CMD_EV_ATTACH, 0, ));
	assert_unchanged(_metadata, self);
}

TEST_F(bad, out_of_range_values)
{
	static const struct { int attr; __u32 val; } gpu_bad[] = {
		{ GPUSCHED_A_GPU_TIMESLICE_US, 99 },
		{ GPUSCHED_A_GPU_TIMESLICE_US, 10000001 },
		{ GPUSCHED_A_GPU_GRACE_US, 999 },
		{ GPUSCHED_A_GPU_MIN_GRANT_US, 9 },
		{ GPUSCHED_A_GPU_STARVE_US, 60000001 },
		{ GPUSCHED_A_GPU_WINDOW_US, 0 },
		{ GPUSCHED_A_GPU_LATENCY_PCT, 91 },
	};
	static const struct { int attr; __u32 val; } client_bad[] = {
		{ GPUSCHED_A_CLIENT_WEIGHT, 0 },
		{ GPUSCHED_A_CLIENT_WEIGHT, GPUSCHED_WEIGHT_MAX + 1 },
		{ GPUSCHED_A_CLIENT_CLASS, GPUSCHED_CLASS_MAX + 1 },
		{ GPUSCHED_A_CLIENT_CAP_PCT, 101 },
	};
	size_t i;

	for (i = 0; i < sizeof(gpu_bad) / sizeof(gpu_bad[0]); i++) {
		EXPECT_EQ(-ERANGE, REQ(GPUSCHED_CMD_SET_GPU, 0,
				       nlt_put_u32(&__m, GPUSCHED_A_GPU_INDEX, self->gpu);
				       nlt_put_u32(&__m, GPUSCHED_A_GPU_TIMESLICE_US, 500);
				       nlt_put_u32(&__m, gpu_bad[i].attr, gpu_bad[i].val)))
			TH_LOG("gpu attr %d = %u", gpu_bad[i].attr, gpu_bad[i].val);
		EXPECT_EQ(gpu_bad[i].attr, self->t.bad_attr);
	}
	for (i = 0; i < sizeof(client_bad) / sizeof(client_bad[0]); i++) {
		EXPECT_EQ(-ERANGE, REQ(GPUSCHED_CMD_SET_CLIENT, 0,
				       nlt_put_u64(&__m, GPUSCHED_A_CLIENT_ID, self->id);
				       nlt_put_u32(&__m, GPUSCHED_A_CLIENT_WEIGHT, 300);
				       nlt_put_u32(&__m, client_bad[i].attr, client_bad[i].val)))
			TH_LOG("client attr %d = %u", client_bad[i].attr, client_bad[i].val);
		EXPECT_EQ(client_bad[i].attr, self->t.bad_attr);
	}
	/* pid 0 is no process. */
	EXPECT_EQ(-ERANGE, REQ(GPUSCHED_CMD_SET_CLIENT, 0,
			       nlt_put_u32(&__m, GPUSCHED_A_CLIENT_PID, 0);
			       nlt_put_u32(&__m, GPUSCHED_A_CLIENT_WEIGHT, 5)));
	/* Nothing of a partly good request was applied (the 500 us slice). */
	assert_unchanged(_metadata, self);
}

TEST_F(bad, unknown_gpu_or_client)
{
	struct nlt_clients cs = { 0 };

	EXPECT_EQ(-ENODEV, REQ(GPUSCHED_CMD_GET_GPU, 0,
			       nlt_put_u32(&__m, GPUSCHED_A_GPU_INDEX, 9999)));
	EXPECT_STREQ("no such GPU", self->t.extack);
	EXPECT_EQ(-ENODEV, REQ(GPUSCHED_CMD_SET_GPU, 0,
			       nlt_put_u32(&__m, GPUSCHED_A_GPU_INDEX, 9999);
			       nlt_put_u32(&__m, GPUSCHED_A_GPU_TIMESLICE_US, 500)));
	EXPECT_EQ(-ESRCH, nlt_set_client(&self->t, 1ull << 60, 5, -1, -1));
	EXPECT_STREQ("no such client", self->t.extack);
	EXPECT_EQ(-ESRCH, REQ(GPUSCHED_CMD_SET_CLIENT, 0,
			      nlt_put_u32(&__m, GPUSCHED_A_CLIENT_PID, 0x3fffffff);
			      nlt_put_u32(&__m, GPUSCHED_A_CLIENT_WEIGHT, 5)));
	/* Our pid, on a GPU that is not ours; our id with another pid. */
	EXPECT_EQ(-ESRCH, REQ(GPUSCHED_CMD_SET_CLIENT, 0,
			      nlt_put_u32(&__m, GPUSCHED_A_CLIENT_PID, getpid());
			      nlt_put_u32(&__m, GPUSCHED_A_CLIENT_GPU, 9999);
			      nlt_put_u32(&__m, GPUSCHED_A_CLIENT_WEIGHT, 5)));
	EXPECT_EQ(-ESRCH, REQ(GPUSCHED_CMD_SET_CLIENT, 0,
			      nlt_put_u64(&__m, GPUSCHED_A_CLIENT_ID, self->id);
			      nlt_put_u32(&__m, GPUSCHED_A_CLIENT_PID, 0x3fffffff);
			      nlt_put_u32(&__m, GPUSCHED_A_CLIENT_WEIGHT, 5)));
	/* A dump filtered on a GPU that does not exist is empty, not an error. */
	EXPECT_EQ(0, nlt_get_clients(&self->t, 9999, &cs));
	EXPECT_EQ(0, cs.n);
	free(cs.c);
	assert_unchanged(_metadata, self);
}

TEST_F(bad, good_requests_still_work)
{
	struct nlt_clients cs = { 0 };
	const struct nlt_client *c;

	/* By id, by pid, by pid on a GPU. */
	ASSERT_EQ(0, nlt_set_client(&self->t, self->id, 300, GPUSCHED_CLASS_BATCH, 40));
	ASSERT_EQ(0, nlt_get_clients(&self->t, self->gpu, &cs));
	c = nlt_find(&cs, self->id);
	ASSERT_NE(NULL, c);
	EXPECT_EQ(300, c->weight);
	EXPECT_EQ(GPUSCHED_CLASS_BATCH, c->class);
	EXPECT_EQ(40, c->cap_pct);
	EXPECT_EQ(0, REQ(GPUSCHED_CMD_SET_CLIENT, 0,
			 nlt_put_u32(&__m, GPUSCHED_A_CLIENT_PID, getpid());
			 nlt_put_u32(&__m, GPUSCHED_A_CLIENT_GPU, self->gpu);
			 nlt_put_u32(&__m, GPUSCHED_A_CLIENT_WEIGHT, 100);
			 nlt_put_u32(&__m, GPUSCHED_A_CLIENT_CLASS, GPUSCHED_CLASS_NORMAL);
			 nlt_put_u32(&__m, GPUSCHED_A_CLIENT_CAP_PCT, 0)));
	free(cs.c);
	assert_unchanged(_metadata, self);
}

/* Churn: attach and detach other clients of @gpu until killed. */
static void churn(unsigned int gpu)
{
	for (;;) {
		int fd = gs_open_attached(gpu);

		if (fd >= 0)
			close(fd);
	}
}

static int cmp_u64(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return x < y ? -1 : x > y;
}

static int cmp_client_id(const void *a, const void *b)
{
	return cmp_u64(&((const struct nlt_client *)a)->id,
		       &((const struct nlt_client *)b)->id);
}

TEST_F(bad, dump_of_1000_clients_is_complete_and_consistent)
{
	struct rlimit rl = { NR_DUMP_CLIENTS + 64, NR_DUMP_CLIENTS + 64 };
	static int fds[NR_DUMP_CLIENTS];
	struct nlt_clients cs = { 0 };
	pid_t churner[2];
	int i, round, seen, dups;

	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &rl));
	/*
	 * Open them all, then attach them in the reverse order: a library
	 * opens /dev/gpusched early and attaches at the first CUDA call, so
	 * the order of attaching is not that of opening.
	 */
	for (i = 0; i < NR_DUMP_CLIENTS; i++) {
		fds[i] = gs_open();
		ASSERT_LE(0, fds[i]) TH_LOG("client %d: %s", i, strerror(-fds[i]));
	}
	for (i = NR_DUMP_CLIENTS - 1; i >= 0; i--)
		ASSERT_EQ(0, gs_attach(fds[i], NL_GPU_BADMSG));

	ASSERT_EQ(0, nlt_get_clients(&self->t, self->gpu, &cs));
	/* Several datagrams: the dump was resumed, several times. */
	EXPECT_LT(2, self->t.nr_batches);
	ksft_print_msg("dump: %zu clients in %d datagrams\n", cs.n, self->t.nr_batches);
	/* Ours: the fixture's client and the 1,000. */
	EXPECT_EQ(NR_DUMP_CLIENTS + 1, cs.n);
	EXPECT_EQ(NR_DUMP_CLIENTS + 1, gs_gpu_read(self->gpu, "nr_clients"));

	/* The same, from a dump of every GPU, while others come and go. */
	for (i = 0; i < 2; i++) {
		churner[i] = gs_fork();
		ASSERT_LE(0, churner[i]);
		if (churner[i] == 0) {
			churn(NL_GPU_BADMSG);
			_exit(0);
		}
	}
	for (round = 0; round < 10; round++) {
		__u64 *mine;
		size_t j;

		ASSERT_EQ(0, nlt_get_clients(&self->t, -1, &cs));
		mine = calloc(cs.n + 1, sizeof(*mine));
		ASSERT_NE(NULL, mine);
		for (j = 0, seen = 0; j < cs.n; j++) {
			if (cs.c[j].gpu == (__u32)self->gpu && cs.c[j].pid == (__u32)getpid())
				mine[seen++] = cs.c[j].id;
		}
		qsort(mine, seen, sizeof(*mine), cmp_u64);
		for (j = 1, dups = 0; j < (size_t)seen; j++)
			dups += mine[j] == mine[j - 1];
		/* Every client attached throughout: once each. */
		EXPECT_EQ(NR_DUMP_CLIENTS + 1, seen) TH_LOG("round %d", round);
		EXPECT_EQ(0, dups) TH_LOG("round %d", round);
		/* No id twice among the churners' either. */
		qsort(cs.c, cs.n, sizeof(*cs.c), cmp_client_id);
		for (j = 1, dups = 0; j < cs.n; j++)
			dups += cs.c[j].id == cs.c[j - 1].id;
		EXPECT_EQ(0, dups) TH_LOG("round %d", round);
		free(mine);
	}
	for (i = 0; i < 2; i++) {
		kill(churner[i], SIGKILL);
		gs_wait(churner[i]);
	}
	for (i = 0; i < NR_DUMP_CLIENTS; i++)
		close(fds[i]);
	free(cs.c);
}

TEST_HARNESS_MAIN
