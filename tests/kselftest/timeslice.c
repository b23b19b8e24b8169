// SPDX-License-Identifier: GPL-2.0
/*
 * The time slice knob works: with two clients that always have work, the
 * kernel grants slices of timeslice_us as written through sysfs, asks for
 * the token back no earlier than the slice end, and a tenfold slice makes
 * grants about ten times longer.
 *
 * Grants are timed by the clients on CLOCK_MONOTONIC, not by the module's
 * held_ns. A grant began in the kernel after the call that ended the grant
 * before it (the other client's YIELD) and before the client woke; it
 * ended when the client saw the yield request. So "seen - previous YIELD"
 * is never shorter than the grant, and the kernel's promise is checked on
 * every grant: no request before a slice has passed since the previous
 * YIELD. The same span measures a grant's length, with the hand-off and
 * the wake-up in it. A grant lasts one slice, or several when the waiter
 * is ahead in virtual time, which is common on a busy host where a stalled
 * vCPU stretches a grant now and then and the other client then catches
 * up; so the slice shows in the shortest grants, taken as the 10th
 * percentile. Slices of 5 and 50 ms: under emulation a wake-up can take
 * milliseconds.
 */
#include "gs_test.h"

#define US	1000ll	/* ns */

FIXTURE(timeslice) {
	int fd;		/* keeps the GPU's knobs, holds nothing */
	int gpu;
	struct gs_busy *busy;
};

FIXTURE_SETUP(timeslice)
{
	self->fd = gs_open_attached(GS_GPU_TIMESLICE);
	ASSERT_LE(0, self->fd) TH_LOG("attach: %s", strerror(-self->fd));
	self->gpu = gs_gpu_index(self->fd);
	ASSERT_LE(0, self->gpu);
	ASSERT_EQ(0, gs_gpu_write_u64(self->gpu, "grace_us", 1000000));
	self->busy = mmap(NULL, sizeof(*self->busy), PROT_READ | PROT_WRITE,
			  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->busy);
}

FIXTURE_TEARDOWN(timeslice)
{
	close(self->fd);
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Run two busy clients with @slice_us; check what must hold for every
 * grant and return the 10th percentile of grant lengths in ns.
 */
static int64_t short_grant_ns(struct __test_metadata *_metadata,
			      struct gs_busy *busy, int gpu,
			      long long slice_us, unsigned int run_ms)
{
	static const __u32 weight[2] = { 100, 100 };
	static struct gs_grant g[2 * GS_BUSY_GRANTS];
	static uint64_t from[2 * GS_BUSY_GRANTS];
	static int64_t grant[2 * GS_BUSY_GRANTS];
	struct gs_busy_result *r = busy->res;
	int64_t max_left = 0, shortest = INT64_MAX;
	unsigned int i, n = 0, all, overlap, short_ones = 0, late = 0;

	EXPECT_EQ(0, gs_gpu_write_u64(gpu, "timeslice_us", slice_us));
	EXPECT_EQ(slice_us, gs_gpu_read(gpu, "timeslice_us"));
	EXPECT_EQ(0, gs_busy_pair(GS_GPU_TIMESLICE, weight, run_ms, busy))
		TH_LOG("children: %d %d", r[0].err, r[1].err);
	for (i = 0; i < 2; i++) {
		EXPECT_EQ(0, r[i].early_yields);
		EXPECT_EQ(0, r[i].lost);
	}
	all = gs_busy_grants(busy, g, from, &overlap);
	EXPECT_EQ(0, overlap);
	for (i = 0; i < all; i++) {
		int64_t len = g[i].asked_ns - from[i];

		if (!g[i].asked_ns)	/* ended by the run's end */
			continue;
		if (len < shortest)
			shortest = len;
		if (len < slice_us * US)
			short_ones++;
		if (g[i].late) {
			late++;
			continue;
		}
		if (g[i].slice_left_ns > max_left)
			max_left = g[i].slice_left_ns;
		grant[n++] = len;
	}
	EXPECT_LE(10, n);
	if (!n)
		return 0;
	qsort(grant, n, sizeof(grant[0]), cmp_i64);
	ksft_print_msg("timeslice_us %lld: %u grants (and %u woken too late) of %lld / %lld / %lld us (10th, 50th, 90th percentile), the shortest %lld us, at most %lld us left when granted\n",
		       slice_us, n, late, (long long)(grant[n / 10] / US),
		       (long long)(grant[n / 2] / US),
		       (long long)(grant[n * 9 / 10] / US),
		       (long long)(shortest / US), (long long)(max_left / US));
	/* Never asked back before a slice has passed. */
	EXPECT_EQ(0, short_ones);
	/*
	 * Granted slices end timeslice_us after the grant: never later, and
	 * nearly then for a client that woke up at once.
	 */
	EXPECT_GE(slice_us * US, max_left);
	EXPECT_LE(slice_us * US * 3 / 4, max_left);
	/*
	 * Asked to yield at the end of the first slice, or of a later one:
	 * a holder that was slow to yield is ahead of the waiter it yielded
	 * to, which then keeps the token for a second slice (the policy
	 * renews a slice while the waiter is not behind). Under emulation
	 * on a loaded host that is most grants, so the bound is 3 slices.
	 */
	EXPECT_GE(slice_us * US * 3, grant[n / 10]);
	return grant[n / 10];
}

TEST_F(timeslice, sysfs_slice_sets_grant_length)
{
	int64_t short_ns, long_ns;

	short_ns = short_grant_ns(_metadata, self->busy, self->gpu, 5000, 1000);
	long_ns = short_grant_ns(_metadata, self->busy, self->gpu, 50000, 2000);
	/* Ten times the slice: grants at least 3 and at most 15 times longer. */
	EXPECT_LE(3 * short_ns, long_ns);
	EXPECT_GE(15 * short_ns, long_ns);
}

TEST_HARNESS_MAIN
