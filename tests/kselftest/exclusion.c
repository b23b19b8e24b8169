// SPDX-License-Identifier: GPL-2.0
/*
 * Mutual exclusion, the invariant everything rests on: however many
 * processes compete, never two hold the token at once.
 *
 * NPROC processes each take the token ROUNDS times. While holding, a
 * process increments a counter in shared memory, lingers, and decrements
 * it; seeing it non-zero on entry means two holders. Between rounds a
 * process releases, or YIELDs when the kernel asked it to, so both paths
 * are checked. The grace time is long so that no holder is revoked (a
 * revoked holder rightly overlaps the next one).
 */
#include <sched.h>
#include "gs_test.h"

#define NPROC		8
#define ROUNDS		500

struct shared {
	int ready;
	int go;
	int holders;		/* processes inside the critical section */
	int overlaps;		/* entries that found another holder */
	int not_holding;	/* status page without HOLDING after a grant */
	int done_rounds;
	int yields;		/* rounds ended with YIELD */
	unsigned long long grants;	/* GET_INFO grants, summed */
};

FIXTURE(exclusion) {
	int fd;
	int gpu;
	struct shared *sh;
	pid_t pids[NPROC];
};

FIXTURE_SETUP(exclusion)
{
	self->fd = gs_open_attached(GS_GPU_EXCLUSION);
	ASSERT_LE(0, self->fd) TH_LOG("attach: %s", strerror(-self->fd));
	self->gpu = gs_gpu_index(self->fd);
	ASSERT_LE(0, self->gpu);
	/* Short slices, so that yield requests come often; long grace. */
	ASSERT_EQ(0, gs_gpu_write_u64(self->gpu, "timeslice_us", 1000));
	ASSERT_EQ(0, gs_gpu_write_u64(self->gpu, "grace_us", 10000000));
	self->sh = mmap(NULL, sizeof(*self->sh), PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->sh);
}

FIXTURE_TEARDOWN(exclusion)
{
	int i;

	for (i = 0; i < NPROC; i++)
		if (self->pids[i] > 0)
			kill(self->pids[i], SIGKILL);
	close(self->fd);
}

/* Exit status: 0, or the step that failed. */
static int worker(struct shared *sh)
{
	const struct gpusched_status *st;
	struct gpusched_client_info ci;
	bool holding = false;
	int fd, i, spin;

	fd = gs_open_attached(GS_GPU_EXCLUSION);
	if (fd < 0)
		return 1;
	st = gs_map_status(fd);
	if (!st)
		return 2;
	__atomic_add_fetch(&sh->ready, 1, __ATOMIC_SEQ_CST);
	while (!__atomic_load_n(&sh->go, __ATOMIC_ACQUIRE))
		sched_yield();

	for (i = 0; i < ROUNDS; i++) {
		if (!holding && gs_acquire(fd, 0, 0))
			return 3;
		holding = true;
		if (!(gs_st_flags(st) & GPUSCHED_ST_HOLDING))
			__atomic_add_fetch(&sh->not_holding, 1, __ATOMIC_SEQ_CST);
		if (__atomic_fetch_add(&sh->holders, 1, __ATOMIC_SEQ_CST))
			__atomic_add_fetch(&sh->overlaps, 1, __ATOMIC_SEQ_CST);
		/* Linger, and give the other CPU a chance to break in. */
		for (spin = 0; spin < 200; spin++)
			__atomic_load_n(&sh->holders, __ATOMIC_SEQ_CST);
		if (i % 16 == 0)
			sched_yield();
		__atomic_sub_fetch(&sh->holders, 1, __ATOMIC_SEQ_CST);
		__atomic_add_fetch(&sh->done_rounds, 1, __ATOMIC_SEQ_CST);

		/* The last round releases: no grant beyond ROUNDS. */
		if (i < ROUNDS - 1 && (gs_st_flags(st) & GPUSCHED_ST_YIELD)) {
			if (gs_yield(fd))
				return 4;
			__atomic_add_fetch(&sh->yields, 1, __ATOMIC_SEQ_CST);
		} else {
			if (gs_release(fd))
				return 5;
			holding = false;
		}
	}
	if (gs_info(fd, &ci))
		return 6;
	__atomic_add_fetch(&sh->grants, ci.grants, __ATOMIC_SEQ_CST);
	if (ci.overruns)
		return 7;
	return 0;
}

TEST_F_TIMEOUT(exclusion, never_two_holders, 300)
{
	long long gpu_grants = gs_gpu_read(self->gpu, "grants");
	long long gpu_overruns = gs_gpu_read(self->gpu, "overruns");
	int i;

	ASSERT_LE(0, gpu_grants);
	for (i = 0; i < NPROC; i++) {
		self->pids[i] = gs_fork();
		ASSERT_LE(0, self->pids[i]);
		if (self->pids[i] == 0)
			_exit(worker(self->sh));
	}
	ASSERT_TRUE(gs_wait_until(__atomic_load_n(&self->sh->ready,
				  __ATOMIC_SEQ_CST) == NPROC, 10000));
	__atomic_store_n(&self->sh->go, 1, __ATOMIC_RELEASE);
	for (i = 0; i < NPROC; i++) {
		EXPECT_EQ(0, gs_wait(self->pids[i])) TH_LOG("worker %d", i);
		self->pids[i] = 0;
	}

	EXPECT_EQ(0, self->sh->overlaps);
	EXPECT_EQ(0, self->sh->not_holding);
	EXPECT_EQ(NPROC * ROUNDS, self->sh->done_rounds);
	/* Every round began with a grant, from ACQUIRE or YIELD. */
	EXPECT_EQ(NPROC * ROUNDS, self->sh->grants);
	EXPECT_EQ(gpu_grants + NPROC * ROUNDS, gs_gpu_read(self->gpu, "grants"));
	EXPECT_EQ(gpu_overruns, gs_gpu_read(self->gpu, "overruns"));
	EXPECT_EQ(0, gs_gpu_read(self->gpu, "holder_pid"));
	EXPECT_EQ(0, gs_gpu_read(self->gpu, "nr_waiting"));
	ksft_print_msg("%d rounds, %d ended with YIELD\n", self->sh->done_rounds,
		       self->sh->yields);
}

TEST_HARNESS_MAIN
