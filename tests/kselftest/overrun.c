// SPDX-License-Identifier: GPL-2.0
/*
 * A holder that ignores the yield request is revoked once the grace time
 * has passed: the waiter gets the token, the holder is charged an overrun
 * and told through its status page, and its late RELEASE fails. A waiter
 * that leaves (timeout, kill) before then takes the request with it: the
 * holder keeps the token past the grace time. The overrun is reported (its
 * event built and multicast) in process context, with no lock held.
 */
#include <pthread.h>
#include <sys/mount.h>
#include "gs_test.h"

#define SLICE_US	10000
#define GRACE_US	20000
#define US		1000ull		/* ns */
#define SLACK_NS	(1000000 * US)	/* TCG wake-up slack */

FIXTURE(overrun) {
	int h, w;	/* holder, waiter */
	int gpu;
	const struct gpusched_status *sh;
};

FIXTURE_SETUP(overrun)
{
	self->h = gs_open_attached(GS_GPU_OVERRUN);
	ASSERT_LE(0, self->h) TH_LOG("attach: %s", strerror(-self->h));
	self->w = gs_open_attached(GS_GPU_OVERRUN);
	ASSERT_LE(0, self->w) TH_LOG("attach: %s", strerror(-self->w));
	self->gpu = gs_gpu_index(self->h);
	ASSERT_LE(0, self->gpu);
	ASSERT_EQ(0, gs_gpu_write_u64(self->gpu, "timeslice_us", SLICE_US));
	ASSERT_EQ(0, gs_gpu_write_u64(self->gpu, "grace_us", GRACE_US));
	self->sh = gs_map_status(self->h);
	ASSERT_NE(NULL, self->sh);
}

FIXTURE_TEARDOWN(overrun)
{
	gs_unmap_status(self->sh);
	close(self->h);
	close(self->w);
}

struct waiter {
	int fd;
	int ret;
	uint64_t timeout_ns;	/* 0: none */
	uint64_t queued_ns;	/* just before it queued */
	uint64_t granted_ns;	/* atomic */
};

static void *waiter_fn(void *arg)
{
	struct waiter *w = arg;

	w->queued_ns = gs_now_ns();
	w->ret = gs_acquire(w->fd, w->timeout_ns ? GPUSCHED_ACQUIRE_TIMEOUT : 0,
			    w->timeout_ns);
	__atomic_store_n(&w->granted_ns, gs_now_ns(), __ATOMIC_RELEASE);
	return NULL;
}

TEST_F(overrun, ignored_yield_is_revoked)
{
	struct waiter w = { .fd = self->w };
	uint64_t t_start, held_at_yield = 0;
	struct gpusched_client_info ci;
	long long overruns;
	pthread_t thread;
	__u32 flags = 0;
	bool yield_seen = false;

	overruns = gs_gpu_read(self->gpu, "overruns");
	ASSERT_LE(0, overruns);
	ASSERT_EQ(0, gs_acquire(self->h, 0, 0));
	t_start = gs_now_ns();
	ASSERT_EQ(0, pthread_create(&thread, NULL, waiter_fn, &w));

	/*
	 * Watch the holder's page, as the library would, and do nothing.
	 * The page's held_ns is the grant's age as of the kernel's last
	 * update: the yield request, until the revocation updates it again.
	 * The waiter is not awaited in nr_waiting first: it waits for slice
	 * and grace only (30 ms), which a slow emulated machine can let pass
	 * between two polls; the revocation stays on the page.
	 */
	while (gs_now_ns() < t_start + 5 * SLACK_NS) {
		flags = gs_st_flags(self->sh);
		if (flags & GPUSCHED_ST_REVOKED)
			break;
		if (!yield_seen && (flags & GPUSCHED_ST_YIELD)) {
			yield_seen = true;
			held_at_yield = __atomic_load_n(&self->sh->held_ns,
							__ATOMIC_RELAXED);
		}
	}
	pthread_join(thread, NULL);
	ASSERT_EQ(0, w.ret);
	ASSERT_NE(0, flags & GPUSCHED_ST_REVOKED)
		TH_LOG("never revoked (flags %#x)", flags);
	ASSERT_EQ(0, gs_info(self->h, &ci));
	ksft_print_msg("yield asked %.1f ms into the grant, revoked at %.1f ms, waiter granted %.1f ms after it queued\n",
		       held_at_yield / 1e6, ci.held_ns / 1e6,
		       (w.granted_ns - w.queued_ns) / 1e6);

	/*
	 * By the kernel's clock: revoked (and charged) once slice and grace
	 * were over, not before, and on time; asked to yield at the end of
	 * the slice, when this thread was quick enough to see the request
	 * before the revocation.
	 */
	EXPECT_LE((SLICE_US + GRACE_US) * US, ci.held_ns);
	EXPECT_GT((SLICE_US + GRACE_US) * US + SLACK_NS, ci.held_ns);
	if (yield_seen) {
		EXPECT_LE(SLICE_US * US, held_at_yield);
		EXPECT_LE(held_at_yield + GRACE_US * US, ci.held_ns);
	}
	/* The waiter did not wait for anything else. */
	EXPECT_GT(w.queued_ns + (SLICE_US + GRACE_US) * US + SLACK_NS,
		  w.granted_ns);

	flags = gs_st_flags(self->sh);
	EXPECT_NE(0, flags & GPUSCHED_ST_REVOKED);
	EXPECT_EQ(0, flags & GPUSCHED_ST_HOLDING);
	EXPECT_EQ(1, self->sh->overruns);
	EXPECT_EQ(1, ci.overruns);
	EXPECT_LE(1, ci.yields);
	EXPECT_NE(GPUSCHED_STATE_HOLDING, ci.state);
	EXPECT_EQ(-EPERM, gs_release(self->h));
	EXPECT_EQ(overruns + 1, gs_gpu_read(self->gpu, "overruns"));

	/* The waiter holds now; the revoked client can queue again. */
	EXPECT_EQ(-EAGAIN, gs_acquire(self->h, GPUSCHED_ACQUIRE_NONBLOCK, 0));
	EXPECT_EQ(0, gs_release(self->w));
	EXPECT_EQ(0, gs_acquire(self->h, 0, 0));
	flags = gs_st_flags(self->sh);
	EXPECT_NE(0, flags & GPUSCHED_ST_HOLDING);
	EXPECT_EQ(0, flags & GPUSCHED_ST_REVOKED);
	EXPECT_EQ(0, gs_release(self->h));
	ASSERT_EQ(0, gs_info(self->w, &ci));
	EXPECT_EQ(0, ci.overruns);
}

#define TRACEFS		"/sys/kernel/tracing"
#define TRACED_FN	"gs_netlink_event"

/* Write @val to tracefs file @name, emptying it first: 0 or -errno. */
static int trace_write(const char *name, const char *val)
{
	char path[128];
	ssize_t len = strlen(val);
	int fd, err = 0;

	snprintf(path, sizeof(path), TRACEFS "/%s", name);
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (len && write(fd, val, len) != len)
		err = -errno;
	close(fd);
	return err;
}

/*
 * Trace lines of TRACED_FN in @buf (up to @size), waiting up to 5 s for
 * the first: their number, or -errno.
 */
static int trace_lines(char *buf, size_t size)
{
	uint64_t end = gs_now_ns() + 5000000000ull;
	int n;

	do {
		FILE *f = fopen(TRACEFS "/trace", "re");
		char line[512];
		size_t used = 0;

		if (!f)
			return -errno;
		n = 0;
		buf[0] = 0;
		while (fgets(line, sizeof(line), f)) {
			if (line[0] == '#' || !strstr(line, " " TRACED_FN " "))
				continue;
			n++;
			if (used + strlen(line) < size) {
				strcpy(buf + used, line);
				used += strlen(line);
			}
		}
		fclose(f);
		if (!n)
			gs_sleep_us(20000);
	} while (!n && gs_now_ns() < end);
	return n;
}

/*
 * Whether a trace line was written in process context with interrupts and
 * bottom halves enabled and no preemption count (no spinlock held): its
 * context column ("d..2." and the like: irqs-off, need-resched,
 * hardirq/softirq/bh-off, preempt depth) shows none of those.
 */
static bool traced_unlocked(const char *line)
{
	const char *f = strstr(line, "] ");

	if (!f)
		return false;
	f += 2;
	return f[0] == '.' && f[2] == '.' && (f[3] == '.' || f[3] == '0');
}

/*
 * Bug 9 of issue 21: the module built, multicast and logged the overrun
 * under gpu->lock, in the softirq of the grace timer. The function that
 * builds and multicasts every event is traced (ftrace's function tracer)
 * across a revocation: it must run in process context, bottom halves and
 * interrupts enabled, no spinlock held. It is entered for every event,
 * whether anyone listens or not.
 */
TEST_F(overrun, reported_outside_lock_and_softirq)
{
	struct waiter w = { .fd = self->w };
	static char lines[8192];
	pthread_t thread;
	const char *l;
	int n;

	if (access(TRACEFS "/trace", F_OK))
		mount("nodev", TRACEFS, "tracefs", 0, NULL);
	if (access(TRACEFS "/trace", F_OK))
		SKIP(return, "no tracefs at " TRACEFS);
	if (trace_write("set_ftrace_filter", TRACED_FN) ||
	    trace_write("current_tracer", "function"))
		SKIP(return, "the function tracer cannot trace " TRACED_FN);
	ASSERT_EQ(0, trace_write("trace", ""));

	ASSERT_EQ(0, gs_acquire(self->h, 0, 0));
	ASSERT_EQ(0, pthread_create(&thread, NULL, waiter_fn, &w));
	pthread_join(thread, NULL);	/* granted once the holder is revoked */
	ASSERT_EQ(0, w.ret);
	EXPECT_NE(0, gs_st_flags(self->sh) & GPUSCHED_ST_REVOKED);
	n = trace_lines(lines, sizeof(lines));
	trace_write("current_tracer", "nop");
	trace_write("set_ftrace_filter", "");
	ksft_print_msg("%d traced call(s):\n%s", n, lines);
	ASSERT_LE(1, n) TH_LOG("the overrun's event was never built");
	for (l = lines; *l; l = strchr(l, '\n') + 1) {
		bool unlocked = traced_unlocked(l);

		if (!unlocked)
			ksft_print_msg("in atomic context: %.*s\n",
				       (int)strcspn(l, "\n"), l);
		EXPECT_TRUE(unlocked);
	}
	EXPECT_EQ(-EPERM, gs_release(self->h));
	EXPECT_EQ(0, gs_release(self->w));
}

/*
 * A grace time long enough that a waiter on an emulated, busy machine
 * leaves well within it, and the waiter's timeout.
 */
#define LONG_GRACE_US	2000000
#define GIVE_UP_NS	(500000 * US)

/* Spin on the holder's page until it says @flag; when it did, or 0. */
static uint64_t wait_flag(const struct gpusched_status *st, __u32 flag)
{
	uint64_t end = gs_now_ns() + 5 * SLACK_NS;

	while (gs_now_ns() < end)
		if (gs_st_flags(st) & flag)
			return gs_now_ns();
	return 0;
}

/*
 * After the waiter left: no YIELD on the page at once, and no revocation
 * after the grace time either; the holder releases normally.
 */
static void check_not_revoked(struct __test_metadata *_metadata,
			      FIXTURE_DATA(overrun) *self, uint64_t t_yield,
			      long long overruns)
{
	uint64_t end = t_yield + LONG_GRACE_US * US + SLACK_NS;
	struct gpusched_client_info ci;
	__u32 flags = gs_st_flags(self->sh);

	EXPECT_EQ(0, flags & GPUSCHED_ST_YIELD)
		TH_LOG("yield still requested after the waiter left (flags %#x)",
		       flags);
	EXPECT_NE(0, flags & GPUSCHED_ST_HOLDING);
	if (gs_now_ns() < end)
		gs_sleep_us((end - gs_now_ns()) / US);
	flags = gs_st_flags(self->sh);
	EXPECT_EQ(0, flags & GPUSCHED_ST_REVOKED)
		TH_LOG("revoked after the grace time though nobody waited");
	EXPECT_NE(0, flags & GPUSCHED_ST_HOLDING);
	EXPECT_EQ(0, flags & GPUSCHED_ST_YIELD);
	ASSERT_EQ(0, gs_info(self->h, &ci));
	EXPECT_EQ(0, ci.overruns);
	EXPECT_EQ(GPUSCHED_STATE_HOLDING, ci.state);
	EXPECT_EQ(overruns, gs_gpu_read(self->gpu, "overruns"));
	EXPECT_EQ(0, gs_release(self->h));
}

TEST_F(overrun, waiter_timeout_withdraws_yield)
{
	struct waiter w = { .fd = self->w, .timeout_ns = GIVE_UP_NS };
	long long overruns = gs_gpu_read(self->gpu, "overruns");
	uint64_t t_yield;
	pthread_t thread;

	ASSERT_LE(0, overruns);
	ASSERT_EQ(0, gs_gpu_write_u64(self->gpu, "grace_us", LONG_GRACE_US));
	ASSERT_EQ(0, gs_acquire(self->h, 0, 0));
	ASSERT_EQ(0, pthread_create(&thread, NULL, waiter_fn, &w));
	t_yield = wait_flag(self->sh, GPUSCHED_ST_YIELD);
	pthread_join(thread, NULL);
	ASSERT_NE(0, t_yield) TH_LOG("the holder was never asked to yield");
	ASSERT_EQ(-ETIMEDOUT, w.ret);
	check_not_revoked(_metadata, self, t_yield, overruns);
}

TEST_F(overrun, waiter_kill_withdraws_yield)
{
	long long overruns = gs_gpu_read(self->gpu, "overruns");
	uint64_t t_yield;
	pid_t pid;

	ASSERT_LE(0, overruns);
	ASSERT_EQ(0, gs_gpu_write_u64(self->gpu, "grace_us", LONG_GRACE_US));
	ASSERT_EQ(0, gs_acquire(self->h, 0, 0));
	pid = gs_fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int fd = gs_open_attached(GS_GPU_OVERRUN);

		_exit(fd < 0 || gs_acquire(fd, 0, 0) ? 1 : 0);
	}
	t_yield = wait_flag(self->sh, GPUSCHED_ST_YIELD);
	/* The killed waiter's ACQUIRE ends, and its file closes. */
	kill(pid, SIGKILL);
	ASSERT_EQ(128 + SIGKILL, gs_wait(pid));
	ASSERT_NE(0, t_yield) TH_LOG("the holder was never asked to yield");
	check_not_revoked(_metadata, self, t_yield, overruns);
}

TEST_HARNESS_MAIN
