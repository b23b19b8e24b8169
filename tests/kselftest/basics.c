// SPDX-License-Identifier: GPL-2.0
/*
 * The client life cycle: attach, acquire, release, yield, a nudge beside
 * the client's own wait, a nudge's answer, the status page, GET_INFO
 * accounting, the sysfs state of a GPU, and the errors of each call used
 * out of turn.
 *
 * Two clients, a and b, on one GPU whose slice and grace are long (1 s), so
 * that no yield request or revocation happens unless a test waits for one.
 */
#include <pthread.h>
#include "gs_test.h"

#define LONG_US		1000000
#define MS		1000000ull	/* ns */
/* Slack for a wake-up under TCG emulation on a loaded host. */
#define SLACK_NS	(1000 * MS)

FIXTURE(basics) {
	int a, b;
	int gpu;
	const struct gpusched_status *sa, *sb;
};

FIXTURE_SETUP(basics)
{
	self->a = gs_open_attached(GS_GPU_BASICS);
	ASSERT_LE(0, self->a) TH_LOG("client a: %s", strerror(-self->a));
	self->b = gs_open_attached(GS_GPU_BASICS);
	ASSERT_LE(0, self->b) TH_LOG("client b: %s", strerror(-self->b));
	self->gpu = gs_gpu_index(self->a);
	ASSERT_LE(0, self->gpu);
	ASSERT_EQ(0, gs_gpu_write_u64(self->gpu, "timeslice_us", LONG_US));
	ASSERT_EQ(0, gs_gpu_write_u64(self->gpu, "grace_us", LONG_US));
	self->sa = gs_map_status(self->a);
	ASSERT_NE(NULL, self->sa) TH_LOG("mmap: %s", strerror(errno));
	self->sb = gs_map_status(self->b);
	ASSERT_NE(NULL, self->sb) TH_LOG("mmap: %s", strerror(errno));
}

FIXTURE_TEARDOWN(basics)
{
	gs_unmap_status(self->sa);
	gs_unmap_status(self->sb);
	if (self->a >= 0)
		close(self->a);
	if (self->b >= 0)
		close(self->b);
}

/* A thread that acquires on its own client and may hold for a while. */
struct waiter {
	pthread_t thread;
	int fd;
	bool yield;		/* YIELD instead of ACQUIRE */
	uint64_t hold_us;	/* then release, unless 0 */
	int ret;
	uint64_t granted_ns;	/* 0 until granted (atomic) */
	uint64_t released_ns;
};

static void *waiter_fn(void *arg)
{
	struct waiter *w = arg;

	w->ret = w->yield ? gs_yield(w->fd) : gs_acquire(w->fd, 0, 0);
	__atomic_store_n(&w->granted_ns, gs_now_ns(), __ATOMIC_RELEASE);
	if (!w->ret && w->hold_us) {
		gs_sleep_us(w->hold_us);
		w->released_ns = gs_now_ns();
		w->ret = gs_release(w->fd);
	}
	return NULL;
}

static int waiter_start(struct waiter *w, int fd, uint64_t hold_us)
{
	memset(w, 0, sizeof(*w));
	w->fd = fd;
	w->hold_us = hold_us;
	return pthread_create(&w->thread, NULL, waiter_fn, w);
}

static uint64_t waiter_granted(struct waiter *w)
{
	return __atomic_load_n(&w->granted_ns, __ATOMIC_ACQUIRE);
}

TEST_F(basics, acquire_release_accounting)
{
	struct gpusched_client_info before, holding, after;
	long long gpu_grants, gpu_held;
	uint64_t t0, t1, held;

	ASSERT_EQ(0, gs_info(self->a, &before));
	EXPECT_EQ(sizeof(before), before.size);
	EXPECT_EQ(GPUSCHED_STATE_IDLE, before.state);
	EXPECT_EQ(GPUSCHED_WEIGHT_DEFAULT, before.weight);
	EXPECT_EQ(GPUSCHED_CLASS_NORMAL, before.sched_class);
	EXPECT_EQ(GPUSCHED_CAP_NONE, before.cap_pct);
	EXPECT_EQ(0, before.grants);
	EXPECT_EQ(0, before.held_ns);
	EXPECT_EQ(GPUSCHED_STATUS_VERSION, self->sa->version);
	EXPECT_EQ(sizeof(struct gpusched_status), self->sa->size);
	EXPECT_EQ(GPUSCHED_ST_ATTACHED, gs_st_flags(self->sa));
	EXPECT_EQ(2, gs_gpu_read(self->gpu, "nr_clients"));
	gpu_grants = gs_gpu_read(self->gpu, "grants");
	gpu_held = gs_gpu_read(self->gpu, "held_ns");
	ASSERT_LE(0, gpu_grants);
	ASSERT_LE(0, gpu_held);
	EXPECT_EQ(0, gs_gpu_read(self->gpu, "holder_pid"));

	t0 = gs_now_ns();
	ASSERT_EQ(0, gs_acquire(self->a, 0, 0));
	EXPECT_EQ(GPUSCHED_ST_ATTACHED | GPUSCHED_ST_HOLDING,
		  gs_st_flags(self->sa));
	EXPECT_EQ(GPUSCHED_ST_ATTACHED, gs_st_flags(self->sb));
	EXPECT_EQ(2, self->sa->nr_clients);
	EXPECT_EQ(0, self->sa->nr_waiting);
	EXPECT_EQ(getpid(), gs_gpu_read(self->gpu, "holder_pid"));
	ASSERT_EQ(0, gs_info(self->a, &holding));
	EXPECT_EQ(GPUSCHED_STATE_HOLDING, holding.state);
	EXPECT_EQ(1, holding.grants);
	EXPECT_NE(0, self->sa->grant_gen);
	EXPECT_EQ(LONG_US * 1000ull, self->sa->grace_ns);
	EXPECT_LT(t0, self->sa->slice_end_ns);

	gs_sleep_us(20000);
	ASSERT_EQ(0, gs_release(self->a));
	t1 = gs_now_ns();
	EXPECT_EQ(GPUSCHED_ST_ATTACHED, gs_st_flags(self->sa));
	EXPECT_EQ(0, gs_gpu_read(self->gpu, "holder_pid"));
	ASSERT_EQ(0, gs_info(self->a, &after));
	EXPECT_EQ(GPUSCHED_STATE_IDLE, after.state);
	EXPECT_EQ(1, after.grants);
	held = after.held_ns;
	EXPECT_LE(20 * MS, held);
	EXPECT_GE(t1 - t0, held);
	EXPECT_EQ(held, self->sa->held_ns);
	EXPECT_EQ(gpu_grants + 1, gs_gpu_read(self->gpu, "grants"));
	EXPECT_LE(gpu_held + (long long)held, gs_gpu_read(self->gpu, "held_ns"));
}

TEST_F(basics, status_page_read_only)
{
	const struct gpusched_status *st = self->sa;
	pid_t pid;

	/* Writing through the mapping faults. */
	pid = gs_fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		__atomic_store_n((__u32 *)&st->flags, 0, __ATOMIC_RELAXED);
		_exit(0);
	}
	EXPECT_EQ(128 + SIGSEGV, gs_wait(pid));
	EXPECT_EQ(GPUSCHED_ST_ATTACHED, gs_st_flags(st));

	/* The mapping is not inherited: the child's copy is a hole. */
	pid = gs_fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(st->version);
	EXPECT_EQ(128 + SIGSEGV, gs_wait(pid));
}

TEST_F(basics, nonblock_gives_eagain)
{
	struct gpusched_client_info ci;

	ASSERT_EQ(0, gs_acquire(self->a, 0, 0));
	EXPECT_EQ(-EAGAIN, gs_acquire(self->b, GPUSCHED_ACQUIRE_NONBLOCK, 0));
	ASSERT_EQ(0, gs_info(self->b, &ci));
	EXPECT_EQ(GPUSCHED_STATE_IDLE, ci.state);
	EXPECT_EQ(0, gs_st_nr_waiting(self->sa));
	ASSERT_EQ(0, gs_release(self->a));
	EXPECT_EQ(0, gs_acquire(self->b, GPUSCHED_ACQUIRE_NONBLOCK, 0));
	EXPECT_EQ(0, gs_release(self->b));
}

TEST_F(basics, timeout_gives_etimedout)
{
	struct gpusched_client_info ci;
	uint64_t t0, dt;

	ASSERT_EQ(0, gs_acquire(self->a, 0, 0));
	t0 = gs_now_ns();
	EXPECT_EQ(-ETIMEDOUT,
		  gs_acquire(self->b, GPUSCHED_ACQUIRE_TIMEOUT, 100 * MS));
	dt = gs_now_ns() - t0;
	EXPECT_LE(100 * MS, dt);
	EXPECT_GT(100 * MS + SLACK_NS, dt);
	ASSERT_EQ(0, gs_info(self->b, &ci));
	EXPECT_EQ(GPUSCHED_STATE_IDLE, ci.state);
	EXPECT_EQ(0, ci.grants);
	EXPECT_EQ(0, gs_st_nr_waiting(self->sa));
	EXPECT_EQ(0, gs_release(self->a));
	/* A free token is granted at once, timeout or not. */
	EXPECT_EQ(0, gs_acquire(self->b, GPUSCHED_ACQUIRE_TIMEOUT, 100 * MS));
	EXPECT_EQ(0, gs_release(self->b));
}

TEST_F(basics, double_acquire_gives_ealready)
{
	ASSERT_EQ(0, gs_acquire(self->a, 0, 0));
	EXPECT_EQ(-EALREADY, gs_acquire(self->a, 0, 0));
	EXPECT_EQ(-EALREADY, gs_acquire(self->a, GPUSCHED_ACQUIRE_NONBLOCK, 0));
	EXPECT_NE(0, gs_st_flags(self->sa) & GPUSCHED_ST_HOLDING);
	EXPECT_EQ(0, gs_release(self->a));
	EXPECT_EQ(-EPERM, gs_release(self->a));
}

TEST_F(basics, release_without_holding_gives_eperm)
{
	EXPECT_EQ(-EPERM, gs_release(self->a));
	ASSERT_EQ(0, gs_acquire(self->b, 0, 0));
	EXPECT_EQ(-EPERM, gs_release(self->a));
	/* ... and b still holds. */
	EXPECT_NE(0, gs_st_flags(self->sb) & GPUSCHED_ST_HOLDING);
	EXPECT_EQ(getpid(), gs_gpu_read(self->gpu, "holder_pid"));
	EXPECT_EQ(0, gs_release(self->b));
}

TEST_F(basics, acquire_before_attach_gives_enotconn)
{
	int fd = gs_open();

	ASSERT_LE(0, fd);
	EXPECT_EQ(-ENOTCONN, gs_acquire(fd, 0, 0));
	EXPECT_EQ(-ENOTCONN, gs_acquire(fd, GPUSCHED_ACQUIRE_NONBLOCK, 0));
	close(fd);
}

TEST_F(basics, double_attach_gives_ebusy)
{
	EXPECT_EQ(-EBUSY, gs_attach(self->a, GS_GPU_BASICS));
	EXPECT_EQ(2, gs_gpu_read(self->gpu, "nr_clients"));
}

/* A waiter is granted when the holder releases, and its wait is counted. */
TEST_F(basics, handoff_and_wait_accounting)
{
	struct gpusched_client_info ci;
	struct waiter w;
	uint64_t released;

	ASSERT_EQ(0, gs_acquire(self->a, 0, 0));
	ASSERT_EQ(0, waiter_start(&w, self->b, 0));
	ASSERT_TRUE(gs_gpu_wait_waiting(self->gpu, 1));
	/* The holder's page shows the waiter. */
	EXPECT_EQ(1, gs_st_nr_waiting(self->sa));
	ASSERT_EQ(0, gs_info(self->b, &ci));
	EXPECT_EQ(GPUSCHED_STATE_WAITING, ci.state);
	gs_sleep_us(50000);
	EXPECT_EQ(0, waiter_granted(&w));

	released = gs_now_ns();
	ASSERT_EQ(0, gs_release(self->a));
	pthread_join(w.thread, NULL);
	EXPECT_EQ(0, w.ret);
	EXPECT_GT(released + SLACK_NS, w.granted_ns);
	EXPECT_NE(0, gs_st_flags(self->sb) & GPUSCHED_ST_HOLDING);
	EXPECT_EQ(0, gs_gpu_read(self->gpu, "nr_waiting"));
	ASSERT_EQ(0, gs_info(self->b, &ci));
	EXPECT_EQ(GPUSCHED_STATE_HOLDING, ci.state);
	EXPECT_LE(50 * MS, ci.wait_ns_total);
	EXPECT_LE(50 * MS, ci.wait_ns_max);
	EXPECT_GE(ci.wait_ns_total, ci.wait_ns_max);
	EXPECT_EQ(0, gs_release(self->b));
}

/* Closing the holder's file hands the token on. */
TEST_F(basics, close_releases)
{
	struct waiter w;
	uint64_t closed;

	ASSERT_EQ(0, gs_acquire(self->a, 0, 0));
	ASSERT_EQ(0, waiter_start(&w, self->b, 0));
	ASSERT_TRUE(gs_gpu_wait_waiting(self->gpu, 1));
	gs_unmap_status(self->sa);
	self->sa = NULL;
	closed = gs_now_ns();
	close(self->a);
	self->a = -1;
	pthread_join(w.thread, NULL);
	EXPECT_EQ(0, w.ret);
	EXPECT_GT(closed + SLACK_NS, w.granted_ns);
	EXPECT_EQ(1, gs_gpu_read(self->gpu, "nr_clients"));
	EXPECT_EQ(1, self->sb->nr_clients);
	EXPECT_EQ(0, gs_release(self->b));
}

/*
 * YIELD with a waiter lets the waiter run first and returns holding once
 * the waiter is done; without one it returns at once, still holding.
 */
TEST_F(basics, yield_hands_over_and_returns)
{
	struct gpusched_client_info before, after;
	struct waiter w;
	uint64_t back;

	ASSERT_EQ(0, gs_acquire(self->a, 0, 0));
	EXPECT_EQ(0, gs_yield(self->a));
	EXPECT_NE(0, gs_st_flags(self->sa) & GPUSCHED_ST_HOLDING);

	ASSERT_EQ(0, gs_info(self->a, &before));
	ASSERT_EQ(0, waiter_start(&w, self->b, 20000));
	ASSERT_TRUE(gs_gpu_wait_waiting(self->gpu, 1));
	EXPECT_EQ(1, gs_st_nr_waiting(self->sa));
	/* Held time after b queued makes a's virtual time the larger. */
	gs_sleep_us(10000);
	ASSERT_EQ(0, gs_yield(self->a));
	back = gs_now_ns();
	pthread_join(w.thread, NULL);
	EXPECT_EQ(0, w.ret);
	EXPECT_NE(0, w.granted_ns);
	EXPECT_LE(w.released_ns, back);
	EXPECT_NE(0, gs_st_flags(self->sa) & GPUSCHED_ST_HOLDING);
	ASSERT_EQ(0, gs_info(self->a, &after));
	EXPECT_EQ(before.grants + 1, after.grants);
	EXPECT_EQ(0, gs_release(self->a));

	/* YIELD when not holding is a plain ACQUIRE. */
	EXPECT_EQ(0, gs_yield(self->b));
	EXPECT_NE(0, gs_st_flags(self->sb) & GPUSCHED_ST_HOLDING);
	EXPECT_EQ(0, gs_release(self->b));
}

/* A NUDGE on its own thread, done set once it returned. */
struct nudger {
	pthread_t thread;
	int fd;
	int ret;
	int done;		/* atomic */
};

static void *nudger_fn(void *arg)
{
	struct gpusched_acquire a = { .flags = GPUSCHED_ACQUIRE_NUDGE };
	struct nudger *n = arg;

	n->ret = gs_ioctl(n->fd, GPUSCHED_IOC_ACQUIRE, &a);
	__atomic_store_n(&n->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * A nudge never waits, also where another thread of the same file waits
 * for the token: it returns while the holder still holds, and leaves that
 * wait as it was.
 */
TEST_F(basics, nudge_beside_own_wait_returns)
{
	struct gpusched_params p = {
		.mask = GPUSCHED_PARAM_CLASS,
		.sched_class = GPUSCHED_CLASS_LATENCY,
	};
	struct nudger n = { .fd = self->b };
	struct gpusched_client_info ci;
	struct waiter w;
	uint64_t until;
	int done;

	ASSERT_EQ(0, gs_ioctl(self->b, GPUSCHED_IOC_SET_PARAMS, &p));
	ASSERT_EQ(0, gs_acquire(self->a, 0, 0));
	ASSERT_EQ(0, waiter_start(&w, self->b, 0));
	ASSERT_TRUE(gs_gpu_wait_waiting(self->gpu, 1));
	ASSERT_EQ(0, pthread_create(&n.thread, NULL, nudger_fn, &n));
	/* a holds until the release below: the bound only keeps a nudge
	 * that waits from hanging the test.
	 */
	until = gs_now_ns() + SLACK_NS;
	while (!(done = __atomic_load_n(&n.done, __ATOMIC_ACQUIRE)) &&
	       gs_now_ns() < until)
		gs_sleep_us(1000);
	EXPECT_TRUE(done);
	ASSERT_EQ(0, gs_info(self->b, &ci));
	EXPECT_EQ(GPUSCHED_STATE_WAITING, ci.state);
	EXPECT_NE(0, self->sa->nudge_ns);

	ASSERT_EQ(0, gs_release(self->a));
	pthread_join(w.thread, NULL);
	pthread_join(n.thread, NULL);
	EXPECT_EQ(0, n.ret);
	EXPECT_EQ(0, w.ret);
	EXPECT_NE(0, gs_st_flags(self->sb) & GPUSCHED_ST_HOLDING);
	EXPECT_EQ(0, gs_release(self->b));
}

/*
 * NUDGE_DONE: the latency-class client that nudged the holder says its
 * work has ended, and the holder's page answers that nudge: nudge_done_ns
 * equal to nudge_ns.
 */
TEST_F(basics, nudge_done_answers_on_holder_page)
{
	struct gpusched_params p = {
		.mask = GPUSCHED_PARAM_CLASS,
		.sched_class = GPUSCHED_CLASS_LATENCY,
	};

	EXPECT_NE(0, self->sb->features & GPUSCHED_FEAT_NUDGE_DONE);
	ASSERT_EQ(0, gs_ioctl(self->b, GPUSCHED_IOC_SET_PARAMS, &p));
	ASSERT_EQ(0, gs_acquire(self->a, 0, 0));
	ASSERT_EQ(0, gs_acquire(self->b, GPUSCHED_ACQUIRE_NUDGE, 0));
	EXPECT_NE(0, self->sa->nudge_ns);
	EXPECT_NE(self->sa->nudge_ns, self->sa->nudge_done_ns);
	EXPECT_EQ(0, gs_acquire(self->b, GPUSCHED_ACQUIRE_NUDGE_DONE, 0));
	EXPECT_EQ(self->sa->nudge_ns, self->sa->nudge_done_ns);
	EXPECT_NE(0, gs_st_flags(self->sa) & GPUSCHED_ST_HOLDING);
	EXPECT_EQ(0, gs_release(self->a));
}

TEST_F(basics, sysfs_gpu_files)
{
	static const char *const numbers[] = {
		"timeslice_us", "grace_us", "min_grant_us", "starve_us",
		"window_us", "latency_pct", "nr_clients", "nr_waiting",
		"holder_pid", "grants", "overruns", "held_ns",
	};
	char path[256], uuid[64];
	unsigned int i;

	gs_gpu_path(path, sizeof(path), self->gpu, "uuid");
	ASSERT_EQ(0, gs_sysfs_read_path(path, uuid, sizeof(uuid)));
	/* The bytes of gs_uuid(GS_GPU_BASICS): "gsTEST", zeros, the id. */
	EXPECT_STREQ("GPU-67735445-5354-0000-0000-000000000001\n", uuid);
	for (i = 0; i < ARRAY_SIZE(numbers); i++) {
		long long v = gs_gpu_read(self->gpu, numbers[i]);

		EXPECT_LE(0, v) TH_LOG("gpu%d/%s unreadable", self->gpu, numbers[i]);
	}
	EXPECT_EQ(LONG_US, gs_gpu_read(self->gpu, "timeslice_us"));
	EXPECT_EQ(LONG_US, gs_gpu_read(self->gpu, "grace_us"));
	EXPECT_EQ(2, gs_gpu_read(self->gpu, "nr_clients"));
	EXPECT_EQ(0, gs_gpu_read(self->gpu, "nr_waiting"));
	/* The runner may raise max_gpus; the device's mode is the default. */
	EXPECT_LE(1, gs_param_read("max_gpus"));
	EXPECT_EQ(0666, gs_param_read("dev_mode"));
}

TEST_HARNESS_MAIN
