// SPDX-License-Identifier: GPL-2.0
/*
 * Caps and the batch class end to end, with the module's timers (the
 * policy's unit tests simulate the clock; these run it in a kernel). The
 * clients time everything on CLOCK_MONOTONIC; the module's figures judge
 * nothing.
 *
 * A capped client alone: once its bucket is empty it waits with the token
 * free, and only the refill timer can grant it again. By its own clock,
 * before its last grant it held the token at most cap_pct of the time, plus
 * the bucket it started with; no grant ran much past what the bucket
 * allowed; and it was granted again and again.
 *
 * A batch client beside a normal one that always wants the GPU is granted
 * only once it has waited starve_us (its rank rises then, by the module's
 * timer), and again and again. Beside a client that holds the token and
 * then gives it up, it is granted at once.
 */
#include "gs_test.h"

#define MS		1000000ull	/* ns */
#define NR_GRANTS	1024

struct log {
	int err;			/* 0, or the step that failed */
	int holding;			/* the first grant came */
	uint64_t start_ns;		/* before its first call */
	uint64_t overruns;
	unsigned int n;
	struct grant {
		uint64_t called_ns;	/* ACQUIRE or YIELD called: it waits */
		uint64_t granted_ns;	/* ... returned */
		uint64_t asked_ns;	/* the yield request seen, or the end */
		uint64_t released_ns;	/* RELEASE returned; 0 after a YIELD */
	} g[NR_GRANTS];
};

struct run {
	uint64_t end_ns;
	uint64_t released_ns;		/* the other's RELEASE called */
	struct log log[2];
};

FIXTURE(cap_batch) {
	int fd;		/* keeps the GPU's knobs, holds nothing */
	int gpu;
	struct run *run;
};

FIXTURE_SETUP(cap_batch)
{
	self->fd = gs_open_attached(GS_GPU_CAP_BATCH);
	ASSERT_LE(0, self->fd) TH_LOG("attach: %s", strerror(-self->fd));
	self->gpu = gs_gpu_index(self->fd);
	ASSERT_LE(0, self->gpu);
	/* No revocation: a client slow to see its request still yields. */
	ASSERT_EQ(0, gs_gpu_write_u64(self->gpu, "grace_us", 1000000));
	self->run = mmap(NULL, sizeof(*self->run), PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->run);
	memset(self->run, 0, sizeof(*self->run));
}

FIXTURE_TEARDOWN(cap_batch)
{
	munmap(self->run, sizeof(*self->run));
	close(self->fd);
}

/* The class field is sched_class from the ABI's version 2. */
static int set_params(int fd, __u32 mask, __u32 sched_class, __u32 cap_pct)
{
	struct gpusched_params p = { .mask = mask, .cap_pct = cap_pct };

#if GPUSCHED_ABI_VERSION >= 2
	p.sched_class = sched_class;
#else
	p.class = sched_class;
#endif
	return gs_ioctl(fd, GPUSCHED_IOC_SET_PARAMS, &p);
}

/* Until the yield request or @end; when it was seen. */
static uint64_t hold(const struct gpusched_status *st, uint64_t end)
{
	while (!(gs_st_flags(st) & GPUSCHED_ST_YIELD) && gs_now_ns() < end)
		;
	return gs_now_ns();
}

/*
 * A client that always wants the GPU until @end: ACQUIRE, hold until asked,
 * then RELEASE and ACQUIRE again (@release) or YIELD. Class @sched_class,
 * cap @cap_pct. Its exit status: 0, or the step that failed.
 */
static int busy(struct run *r, struct log *l, __u32 sched_class,
		__u32 cap_pct, bool release)
{
	const struct gpusched_status *st;
	struct gpusched_client_info ci;
	struct grant *g;
	uint64_t end = r->end_ns, now;
	int fd, err;

	l->start_ns = gs_now_ns();
	fd = gs_open_attached(GS_GPU_CAP_BATCH);
	if (fd < 0)
		return 1;
	if (set_params(fd, GPUSCHED_PARAM_CLASS | GPUSCHED_PARAM_CAP,
		       sched_class, cap_pct))
		return 2;
	st = gs_map_status(fd);
	if (!st)
		return 3;
	for (;;) {
		now = gs_now_ns();
		if (now >= end)
			break;
		g = &l->g[l->n < NR_GRANTS ? l->n : NR_GRANTS - 1];
		g->called_ns = now;
		if (l->n && !release)
			err = gs_yield(fd);
		else
			err = gs_acquire(fd, GPUSCHED_ACQUIRE_TIMEOUT, end - now);
		if (err == -ETIMEDOUT)
			break;
		if (err)
			return 4;
		g->granted_ns = gs_now_ns();
		__atomic_store_n(&l->holding, 1, __ATOMIC_RELEASE);
		g->asked_ns = hold(st, end);
		g->released_ns = 0;
		if (release || g->asked_ns >= end) {
			if (gs_release(fd))
				return 5;
			g->released_ns = gs_now_ns();
		}
		if (l->n < NR_GRANTS)
			l->n++;
		if (g->asked_ns >= end)
			break;
	}
	if (gs_info(fd, &ci))
		return 6;
	l->overruns = ci.overruns;
	close(fd);
	return 0;
}

static pid_t start(struct run *r, struct log *l, __u32 sched_class,
		   __u32 cap_pct, bool release)
{
	pid_t pid = gs_fork();

	if (pid == 0)
		_exit(busy(r, l, sched_class, cap_pct, release));
	return pid;
}

TEST_F(cap_batch, cap_holds_a_lone_client_to_its_share)
{
	const uint64_t run_ms = 2000, window_ms = 100, min_grant_ms = 50;
	const unsigned int cap = 25;
	struct log *l = &self->run->log[0];
	uint64_t own = 0, before_last = 0, bound, longest = 0, allowed, g;
	unsigned int i;
	pid_t pid;

	ASSERT_EQ(0, gs_gpu_write_u64(self->gpu, "window_us", window_ms * 1000));
	ASSERT_EQ(0, gs_gpu_write_u64(self->gpu, "min_grant_us",
				      min_grant_ms * 1000));
	ASSERT_EQ(0, gs_gpu_write_u64(self->gpu, "timeslice_us", 1000000));
	self->run->end_ns = gs_now_ns() + run_ms * MS;
	pid = start(self->run, l, GPUSCHED_CLASS_NORMAL, cap, true);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, gs_wait(pid));
	ASSERT_LT(0, l->n);
	ASSERT_GT(NR_GRANTS, l->n);
	for (i = 0; i < l->n; i++) {
		g = l->g[i].asked_ns - l->g[i].granted_ns;
		own += g;
		if (i < l->n - 1)
			before_last += g;
		if (g > longest)
			longest = g;
	}
	/*
	 * A grant needs credit in the bucket, so the debt of every grant
	 * before the last was repaid when the last began: charged time
	 * before it < the bucket (cap x window) + cap x (fill to last grant).
	 * Held time is at least what the client saw of it, from waking to
	 * the request; the fill came after start_ns, the last grant before
	 * the client woke. Exact, with no margin.
	 */
	bound = cap * (window_ms * MS + l->g[l->n - 1].granted_ns -
		       l->start_ns) / 100;
	/*
	 * A grant runs until the bucket is empty, at least min_grant: at most
	 * a full bucket's runway, cap x window / (100 - cap). The request
	 * then waits for a timer: 100 ms for a late one under emulation.
	 */
	allowed = cap * window_ms * MS / (100 - cap);
	if (allowed < min_grant_ms * MS)
		allowed = min_grant_ms * MS;
	allowed += 100 * MS;
	ksft_print_msg("cap %u%% alone for %llu ms: %u grants, held %llu ms by its clock, %llu ms before the last grant (at most %llu ms), the longest grant %llu ms (at most %llu ms), %llu overruns\n",
		       cap, (unsigned long long)run_ms, l->n,
		       (unsigned long long)(own / MS),
		       (unsigned long long)(before_last / MS),
		       (unsigned long long)(bound / MS),
		       (unsigned long long)(longest / MS),
		       (unsigned long long)(allowed / MS),
		       (unsigned long long)l->overruns);
	EXPECT_EQ(0, l->overruns);
	EXPECT_GT(bound, before_last);
	EXPECT_GE(allowed, longest);
	/*
	 * After the first grant the bucket runs dry, and only the refill
	 * timer grants a lone waiter: about run / (min_grant x 100 / cap),
	 * 10 here; without the timer, one. And it gets its share, not just
	 * a little.
	 */
	EXPECT_LE(4, l->n);
	EXPECT_LE(cap * run_ms * MS / 100 / 4, own);
}

/* Grants of @b that overlap one of @a's, by the clients' clocks. */
static unsigned int overlaps(const struct log *a, const struct log *b)
{
	unsigned int i, j, n = 0;

	for (i = 0; i < a->n; i++)
		for (j = 0; j < b->n; j++)
			n += a->g[i].granted_ns < b->g[j].asked_ns &&
			     b->g[j].granted_ns < a->g[i].asked_ns;
	return n;
}

TEST_F(cap_batch, batch_waits_starve_us_beside_a_busy_client)
{
	const uint64_t run_ms = 2000, starve_ms = 100;
	struct log *normal = &self->run->log[0], *batch = &self->run->log[1];
	uint64_t wanted_until, shortest = UINT64_MAX;
	unsigned int i, starved = 0, early = 0;
	pid_t pid[2];

	ASSERT_EQ(0, gs_gpu_write_u64(self->gpu, "timeslice_us", 10000));
	ASSERT_EQ(0, gs_gpu_write_u64(self->gpu, "starve_us", starve_ms * 1000));
	self->run->end_ns = gs_now_ns() + run_ms * MS;
	pid[0] = start(self->run, normal, GPUSCHED_CLASS_NORMAL, 0, false);
	ASSERT_LT(0, pid[0]);
	/* The batch client comes once the other holds the token. */
	ASSERT_TRUE(gs_wait_until(__atomic_load_n(&normal->holding,
						  __ATOMIC_ACQUIRE), 5000));
	pid[1] = start(self->run, batch, GPUSCHED_CLASS_BATCH, 0, false);
	ASSERT_LT(0, pid[1]);
	EXPECT_EQ(0, gs_wait(pid[0]));
	EXPECT_EQ(0, gs_wait(pid[1]));
	ASSERT_LT(0, normal->n);
	ASSERT_GT(NR_GRANTS, normal->n);
	ASSERT_GT(NR_GRANTS, batch->n);
	/* The normal client wants the GPU until its last RELEASE. */
	wanted_until = normal->g[normal->n - 1].asked_ns;
	for (i = 0; i < batch->n; i++) {
		const struct grant *g = &batch->g[i];
		uint64_t waited = g->granted_ns - g->called_ns;

		if (g->granted_ns >= wanted_until)
			continue;
		starved++;
		early += waited < starve_ms * MS;
		if (waited < shortest)
			shortest = waited;
	}
	ksft_print_msg("starve_us %llu: %u grants to the batch client while the other wanted the GPU, after %llu ms at the least; the other %u grants\n",
		       (unsigned long long)starve_ms * 1000, starved,
		       (unsigned long long)(starved ? shortest / MS : 0),
		       normal->n);
	/* Never before it starved: the kernel's wait began after the call. */
	EXPECT_EQ(0, early);
	/* About run / (starve + slice), 18; none without the starve timer. */
	EXPECT_LE(4, starved);
	EXPECT_EQ(0, overlaps(normal, batch));
	EXPECT_EQ(0, normal->overruns);
	EXPECT_EQ(0, batch->overruns);
}

/*
 * The other client holds the token for @hold_ms, gives it up and stays
 * attached without wanting it; the batch client waits meanwhile.
 */
TEST_F(cap_batch, batch_runs_at_once_when_others_do_not_want_the_gpu)
{
	const uint64_t hold_ms = 200, starve_ms = 5000;
	uint64_t called, granted, released;
	int fd, batch_fd;
	pid_t pid;

	ASSERT_EQ(0, gs_gpu_write_u64(self->gpu, "timeslice_us", 10000));
	ASSERT_EQ(0, gs_gpu_write_u64(self->gpu, "starve_us", starve_ms * 1000));
	fd = gs_open_attached(GS_GPU_CAP_BATCH);
	ASSERT_LE(0, fd);
	batch_fd = gs_open_attached(GS_GPU_CAP_BATCH);
	ASSERT_LE(0, batch_fd);
	ASSERT_EQ(0, set_params(batch_fd, GPUSCHED_PARAM_CLASS,
				GPUSCHED_CLASS_BATCH, 0));
	ASSERT_EQ(0, gs_acquire(fd, 0, 0));
	pid = gs_fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		gs_sleep_us(hold_ms * 1000);
		__atomic_store_n(&self->run->released_ns, gs_now_ns(),
				 __ATOMIC_RELEASE);
		_exit(gs_release(fd) ? 1 : 0);
	}
	called = gs_now_ns();
	EXPECT_EQ(0, gs_acquire(batch_fd, GPUSCHED_ACQUIRE_TIMEOUT,
				2 * starve_ms * MS));
	granted = gs_now_ns();
	EXPECT_EQ(0, gs_wait(pid));
	released = __atomic_load_n(&self->run->released_ns, __ATOMIC_ACQUIRE);
	ksft_print_msg("batch client granted %llu ms after it asked, %llu ms after the other's RELEASE was called (starve_us %llu)\n",
		       (unsigned long long)((granted - called) / MS),
		       (unsigned long long)((granted - released) / MS),
		       (unsigned long long)starve_ms * 1000);
	EXPECT_LE(released, granted);
	/* Not because it starved: 200 ms against 5 s. */
	EXPECT_GT(starve_ms * MS, granted - called);
	EXPECT_EQ(0, gs_release(batch_fd));
	close(batch_fd);
	close(fd);
}

TEST_HARNESS_MAIN
