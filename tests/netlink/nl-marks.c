// SPDX-License-Identifier: GPL-2.0
/*
 * Where a client's values came from: SET_CLIENT with POLICY_SET marks
 * the fields it names as the policy's; the client lowering such a field
 * itself without CAP_SYS_NICE turns the mark into POLICY_LOWERED; any
 * other change (a privileged SET_PARAMS, a SET_CLIENT without the mark)
 * clears both. Dumps and events report the two masks; bad masks are
 * refused. A restarted gpuschedd reads them (nl-daemon.c).
 */
#include "nl_test.h"

#define W	GPUSCHED_PARAM_WEIGHT
#define C	GPUSCHED_PARAM_CLASS
#define P	GPUSCHED_PARAM_CAP

FIXTURE(marks) {
	struct nlt t;
	int fd;
	__u64 id;
};

FIXTURE_SETUP(marks)
{
	ASSERT_EQ(0, nlt_open(&self->t));
	self->fd = gs_open_attached(NL_GPU_MARKS);
	ASSERT_LE(0, self->fd);
	self->id = nlt_client_id(&self->t, self->fd);
	ASSERT_NE(0, self->id);
}

FIXTURE_TEARDOWN(marks)
{
	close(self->fd);
	nlt_close(&self->t);
}

/* The client's record in a dump; false if it is not there. */
static bool get(struct nlt *t, __u64 id, struct nlt_client *out)
{
	struct nlt_clients cs = { 0 };
	const struct nlt_client *c;
	bool found = false;

	if (!nlt_get_clients(t, -1, &cs)) {
		c = nlt_find(&cs, id);
		if (c) {
			*out = *c;
			found = true;
		}
	}
	free(cs.c);
	return found;
}

/* SET_CLIENT of @id: weight, class, cap (< 0: not set), marks (< 0: none). */
static int set(struct nlt *t, __u64 id, int weight, int class, int cap,
	       long long policy)
{
	struct nlt_msg m;

	nlt_init(&m, t->family, GPUSCHED_CMD_SET_CLIENT, 0);
	nlt_put_u64(&m, GPUSCHED_A_CLIENT_ID, id);
	if (weight >= 0)
		nlt_put_u32(&m, GPUSCHED_A_CLIENT_WEIGHT, weight);
	if (class >= 0)
		nlt_put_u32(&m, GPUSCHED_A_CLIENT_CLASS, class);
	if (cap >= 0)
		nlt_put_u32(&m, GPUSCHED_A_CLIENT_CAP_PCT, cap);
	if (policy >= 0)
		nlt_put_u32(&m, GPUSCHED_A_CLIENT_POLICY_SET, (__u32)policy);
	return nlt_request(t, &m, NULL, NULL);
}

/* SET_PARAMS on @fd in a child running as nobody: 0 or its errno. */
static int set_params_as_nobody(int fd, const struct gpusched_params *p)
{
	pid_t pid = gs_fork();

	if (pid == 0) {
		if (nlt_drop_privileges(GS_NOBODY, GS_NOBODY))
			_exit(200);
		_exit(-gs_ioctl(fd, GPUSCHED_IOC_SET_PARAMS, (void *)p));
	}
	return pid < 0 ? -1 : gs_wait(pid);
}

TEST_F(marks, a_new_client_has_none)
{
	struct nlt_client c;

	ASSERT_TRUE(get(&self->t, self->id, &c));
	EXPECT_TRUE(c.has_marks);
	EXPECT_EQ(0, c.policy_set);
	EXPECT_EQ(0, c.policy_lowered);
}

TEST_F(marks, set_client_marks_what_it_names)
{
	struct nlt_client c;

	ASSERT_EQ(0, set(&self->t, self->id, 300, GPUSCHED_CLASS_BATCH, 40, W | P));
	ASSERT_TRUE(get(&self->t, self->id, &c));
	EXPECT_EQ(300, c.weight);
	EXPECT_EQ(W | P, c.policy_set);
	EXPECT_EQ(0, c.policy_lowered);
	/* Without the attribute, as gpuschedctl and older daemons set: unmarked. */
	ASSERT_EQ(0, set(&self->t, self->id, 200, -1, -1, -1));
	ASSERT_TRUE(get(&self->t, self->id, &c));
	EXPECT_EQ(P, c.policy_set);
	/* An empty mask unmarks too. */
	ASSERT_EQ(0, set(&self->t, self->id, -1, -1, 0, 0));
	ASSERT_TRUE(get(&self->t, self->id, &c));
	EXPECT_EQ(0, c.policy_set);
}

TEST_F(marks, bad_masks_are_refused_and_change_nothing)
{
	struct nlt_client c;
	struct nlt_msg m;

	ASSERT_EQ(0, set(&self->t, self->id, 250, -1, -1, W));
	EXPECT_EQ(-EOPNOTSUPP, set(&self->t, self->id, 120, -1, -1, W | 16));
	EXPECT_EQ(GPUSCHED_A_CLIENT_POLICY_SET, self->t.bad_attr);
	EXPECT_EQ(-EINVAL, set(&self->t, self->id, 120, -1, -1, W | C));
	EXPECT_EQ(GPUSCHED_A_CLIENT_POLICY_SET, self->t.bad_attr);
	EXPECT_NE(NULL, strstr(self->t.extack, "does not set"));
	ASSERT_TRUE(get(&self->t, self->id, &c));
	EXPECT_EQ(250, c.weight);
	EXPECT_EQ(W, c.policy_set);
	/* POLICY_LOWERED is the module's to say, not a request's. */
	nlt_init(&m, self->t.family, GPUSCHED_CMD_SET_CLIENT, 0);
	nlt_put_u64(&m, GPUSCHED_A_CLIENT_ID, self->id);
	nlt_put_u32(&m, GPUSCHED_A_CLIENT_WEIGHT, 120);
	nlt_put_u32(&m, GPUSCHED_A_CLIENT_POLICY_LOWERED, W);
	EXPECT_EQ(-EINVAL, nlt_request(&self->t, &m, NULL, NULL));
	EXPECT_EQ(GPUSCHED_A_CLIENT_POLICY_LOWERED, self->t.bad_attr);
}

TEST_F(marks, the_client_lowering_a_policy_value_keeps_it_from_the_policy)
{
	struct gpusched_params p = { .mask = W, .weight = 200 };
	struct nlt_client c;

	ASSERT_EQ(0, set(&self->t, self->id, 300, GPUSCHED_CLASS_LATENCY, -1, W | C));
	EXPECT_EQ(0, set_params_as_nobody(self->fd, &p));
	ASSERT_TRUE(get(&self->t, self->id, &c));
	EXPECT_EQ(200, c.weight);
	EXPECT_EQ(C, c.policy_set);
	EXPECT_EQ(W, c.policy_lowered);
	/* Raising is refused, and changes no mark. */
	p.weight = 250;
	EXPECT_EQ(EPERM, set_params_as_nobody(self->fd, &p));
	ASSERT_TRUE(get(&self->t, self->id, &c));
	EXPECT_EQ(W, c.policy_lowered);
	/* Lowering again: still lowered from the policy's value. */
	p.weight = 150;
	EXPECT_EQ(0, set_params_as_nobody(self->fd, &p));
	ASSERT_TRUE(get(&self->t, self->id, &c));
	EXPECT_EQ(W, c.policy_lowered);
	/* A field the policy never set is the client's own: no mark. */
	p.mask = P;
	p.cap_pct = 50;
	EXPECT_EQ(0, set_params_as_nobody(self->fd, &p));
	ASSERT_TRUE(get(&self->t, self->id, &c));
	EXPECT_EQ(W, c.policy_lowered);
	EXPECT_EQ(C, c.policy_set);
	/* The policy setting it again marks it as the policy's again. */
	ASSERT_EQ(0, set(&self->t, self->id, 300, -1, -1, W));
	ASSERT_TRUE(get(&self->t, self->id, &c));
	EXPECT_EQ(W | C, c.policy_set);
	EXPECT_EQ(0, c.policy_lowered);
}

TEST_F(marks, a_privileged_client_change_is_its_own)
{
	struct gpusched_params p = { .mask = W | C, .weight = 500,
				     .sched_class = GPUSCHED_CLASS_NORMAL };
	struct nlt_client c;

	ASSERT_EQ(0, set(&self->t, self->id, 300, GPUSCHED_CLASS_LATENCY, 20, W | C | P));
	/* Root has CAP_SYS_NICE: any value, and no longer the policy's. */
	ASSERT_EQ(0, gs_ioctl(self->fd, GPUSCHED_IOC_SET_PARAMS, &p));
	ASSERT_TRUE(get(&self->t, self->id, &c));
	EXPECT_EQ(500, c.weight);
	EXPECT_EQ(P, c.policy_set);
	EXPECT_EQ(0, c.policy_lowered);
}

TEST_HARNESS_MAIN
