// SPDX-License-Identifier: GPL-2.0
/*
 * Weighted fair share: two clients that always have work split the token's
 * time in proportion to their weights, as charged by the kernel (GET_INFO
 * held_ns), within 5 points.
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
	struct gs_busy_result *r = self->busy->res;
	uint64_t total;
	double want, got;

	ASSERT_EQ(0, gs_busy_pair(GS_GPU_SHARE, variant->weight, RUN_MS,
				  self->busy))
		TH_LOG("children: %d %d", r[0].err, r[1].err);
	total = r[0].held_ns + r[1].held_ns;
	want = 100.0 * variant->weight[1] /
	       (variant->weight[0] + variant->weight[1]);
	got = total ? 100.0 * r[1].held_ns / total : 0;
	ksft_print_msg("weights %u:%u: held %.1f ms / %.1f ms in %llu / %llu grants: %.1f%% for the second (want %.1f%%)\n",
		       variant->weight[0], variant->weight[1],
		       r[0].held_ns / 1e6, r[1].held_ns / 1e6,
		       (unsigned long long)r[0].grants,
		       (unsigned long long)r[1].grants, got, want);
	/* Enough slices for the shares to mean something. */
	EXPECT_LE(RUN_MS / 2 * 1000000ull, total);
	EXPECT_LE(20, r[0].grants);
	EXPECT_LE(20, r[1].grants);
	EXPECT_EQ(0, r[0].overruns);
	EXPECT_EQ(0, r[1].overruns);
	EXPECT_GE(TOLERANCE_PCT, got > want ? got - want : want - got);
}

TEST_HARNESS_MAIN
