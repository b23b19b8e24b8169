// SPDX-License-Identifier: GPL-2.0
/*
 * Weighted fair share: two clients that always have work split the token's
 * time in proportion to their weights, within 5 points. The clients time
 * their grants on CLOCK_MONOTONIC: the module's own figure (held_ns) is not
 * the judge. A grant is the client's from the call that gave the token up
 * before it (the other client's YIELD) to its own YIELD, so the spans of
 * the two cover the run, and the wake-up that the module charges to the
 * client granted (milliseconds under emulation) counts as its time, not
 * as lost. By the same clocks the two never held the token at once, and
 * the module charged each at least the time it held the token awake.
 */
#include "gs_test.h"

#define RUN_MS		2500
#define TOLERANCE_PCT	5

FIXTURE(share) {
	int fd;		/* keeps the GPU's knobs, holds nothing */
	int gpu;
	struct gs_busy *busy;
};

FIXTURE_VARIANT(share) {
	__u32 weight[2];
};

FIXTURE_VARIANT_ADD(share, equal) {
	.weight = { 100, 100 },
};

FIXTURE_VARIANT_ADD(share, one_to_three) {
	.weight = { 100, 300 },
};

FIXTURE_SETUP(share)
{
	self->fd = gs_open_attached(GS_GPU_SHARE);
	ASSERT_LE(0, self->fd) TH_LOG("attach: %s", strerror(-self->fd));
	self->gpu = gs_gpu_index(self->fd);
	ASSERT_LE(0, self->gpu);
	ASSERT_EQ(0, gs_gpu_write_u64(self->gpu, "timeslice_us", 2000));
	/* Long grace: a late yield under emulation must not be an overrun. */
	ASSERT_EQ(0, gs_gpu_write_u64(self->gpu, "grace_us", 1000000));
	self->busy = mmap(NULL, sizeof(*self->busy), PROT_READ | PROT_WRITE,
			  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->busy);
}

FIXTURE_TEARDOWN(share)
{
	close(self->fd);
}

TEST_F(share, held_time_follows_weights)
{
	static struct gs_grant g[2 * GS_BUSY_GRANTS];
	static uint64_t from[2 * GS_BUSY_GRANTS];
	struct gs_busy_result *r = self->busy->res;
	uint64_t span[2] = { 0, 0 }, total;
	unsigned int i, n, overlap;
	double want, got;

	ASSERT_EQ(0, gs_busy_pair(GS_GPU_SHARE, variant->weight, RUN_MS,
				  self->busy))
		TH_LOG("children: %d %d", r[0].err, r[1].err);
	n = gs_busy_grants(self->busy, g, from, &overlap);
	for (i = 0; i < n; i++)
		span[g[i].child] += g[i].yielded_ns - from[i];
	total = span[0] + span[1];
	want = 100.0 * variant->weight[1] /
	       (variant->weight[0] + variant->weight[1]);
	got = total ? 100.0 * span[1] / total : 0;
	ksft_print_msg("weights %u:%u: held %.1f ms / %.1f ms by their clocks (%.1f / %.1f ms of it awake; %.1f / %.1f ms by the module) in %u / %u grants: %.1f%% for the second (want %.1f%%)\n",
		       variant->weight[0], variant->weight[1],
		       span[0] / 1e6, span[1] / 1e6,
		       r[0].own_ns / 1e6, r[1].own_ns / 1e6,
		       r[0].held_ns / 1e6, r[1].held_ns / 1e6,
		       r[0].n, r[1].n, got, want);
	EXPECT_EQ(0, r[0].lost);
	EXPECT_EQ(0, r[1].lost);
	EXPECT_EQ(0, overlap);
	/* Enough slices for the shares to mean something. */
	EXPECT_LE(RUN_MS / 2 * 1000000ull, total);
	EXPECT_LE(20, r[0].n);
	EXPECT_LE(20, r[1].n);
	EXPECT_EQ(0, r[0].overruns);
	EXPECT_EQ(0, r[1].overruns);
	/* The module holds the token for a client from before it wakes up. */
	EXPECT_LE(r[0].own_ns, r[0].held_ns);
	EXPECT_LE(r[1].own_ns, r[1].held_ns);
	EXPECT_GE(TOLERANCE_PCT, got > want ? got - want : want - got);
}

TEST_HARNESS_MAIN
