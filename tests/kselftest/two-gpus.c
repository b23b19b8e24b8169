// SPDX-License-Identifier: GPL-2.0
/*
 * One process on two GPUs, as a program with two CUDA devices is: a client
 * per GPU, both tokens held, both status pages mapped, and a waiter on each
 * GPU in another process. SIGKILLed, the process gives both tokens back at
 * once: by the time its parent has reaped it (the kernel closes a dying
 * task's files before it tells the parent), each waiter already holds its
 * GPU's token, with no grace time or timer in between.
 */
#include "gs_test.h"

struct shared {
	int holding;			/* the two-GPU process holds both */
	int checked;			/* the waiters may let go */
};

FIXTURE(two_gpus) {
	int fd[2];	/* keep the GPUs' knobs, hold nothing */
	int gpu[2];
	struct shared *sh;
};

FIXTURE_SETUP(two_gpus)
{
	int i;

	for (i = 0; i < 2; i++) {
		self->fd[i] = gs_open_attached(GS_GPU_TWO + i);
		ASSERT_LE(0, self->fd[i])
			TH_LOG("attach: %s", strerror(-self->fd[i]));
		self->gpu[i] = gs_gpu_index(self->fd[i]);
		ASSERT_LE(0, self->gpu[i]);
		/* Nothing but the death may hand a token over. */
		ASSERT_EQ(0, gs_gpu_write_u64(self->gpu[i], "timeslice_us",
					      10000000));
		ASSERT_EQ(0, gs_gpu_write_u64(self->gpu[i], "grace_us", 10000000));
	}
	ASSERT_NE(self->gpu[0], self->gpu[1]);
	self->sh = mmap(NULL, sizeof(*self->sh), PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->sh);
	memset(self->sh, 0, sizeof(*self->sh));
}

FIXTURE_TEARDOWN(two_gpus)
{
	munmap(self->sh, sizeof(*self->sh));
	close(self->fd[0]);
	close(self->fd[1]);
}

/* The two-GPU process: both tokens, both pages, then wait to be killed. */
static int hold_both(struct shared *sh)
{
	const struct gpusched_status *st[2];
	int fd[2], i;

	for (i = 0; i < 2; i++) {
		fd[i] = gs_open_attached(GS_GPU_TWO + i);
		if (fd[i] < 0)
			return 1;
		st[i] = gs_map_status(fd[i]);
		if (!st[i])
			return 2;
		if (gs_acquire(fd[i], 0, 0))
			return 3;
	}
	if (!(gs_st_flags(st[0]) & gs_st_flags(st[1]) & GPUSCHED_ST_HOLDING))
		return 4;
	__atomic_store_n(&sh->holding, 1, __ATOMIC_RELEASE);
	for (;;)
		pause();
}

/* A waiter on GPU @i: granted, it holds until the test has looked. */
static int wait_for(struct shared *sh, int i)
{
	int fd = gs_open_attached(GS_GPU_TWO + i);

	if (fd < 0)
		return 1;
	if (gs_acquire(fd, GPUSCHED_ACQUIRE_TIMEOUT, 30000000000ull))
		return 2;
	while (!__atomic_load_n(&sh->checked, __ATOMIC_ACQUIRE))
		gs_sleep_us(1000);
	return gs_release(fd) ? 3 : 0;
}

TEST_F(two_gpus, sigkill_gives_both_tokens_back_at_once)
{
	pid_t holder, waiter[2];
	long long after[2], clients[2];
	int i;

	holder = gs_fork();
	ASSERT_LE(0, holder);
	if (holder == 0)
		_exit(hold_both(self->sh));
	ASSERT_TRUE(gs_wait_until(__atomic_load_n(&self->sh->holding,
						  __ATOMIC_ACQUIRE), 10000));
	for (i = 0; i < 2; i++) {
		EXPECT_EQ(holder, gs_gpu_read(self->gpu[i], "holder_pid"));
		waiter[i] = gs_fork();
		ASSERT_LE(0, waiter[i]);
		if (waiter[i] == 0)
			_exit(wait_for(self->sh, i));
		ASSERT_TRUE(gs_gpu_wait_waiting(self->gpu[i], 1));
	}

	ASSERT_EQ(0, kill(holder, SIGKILL));
	ASSERT_EQ(128 + SIGKILL, gs_wait(holder));
	/* Reaped: its files are closed, and each waiter was granted then. */
	for (i = 0; i < 2; i++) {
		after[i] = gs_gpu_read(self->gpu[i], "holder_pid");
		clients[i] = gs_gpu_read(self->gpu[i], "nr_clients");
	}
	ksft_print_msg("after the SIGKILL: holders %lld and %lld (waiters %d and %d), %lld and %lld clients\n",
		       after[0], after[1], waiter[0], waiter[1], clients[0],
		       clients[1]);
	__atomic_store_n(&self->sh->checked, 1, __ATOMIC_RELEASE);
	for (i = 0; i < 2; i++) {
		EXPECT_EQ(waiter[i], after[i]);
		/* This test's own client and the waiter. */
		EXPECT_EQ(2, clients[i]);
		EXPECT_EQ(0, gs_wait(waiter[i]));
	}
}

TEST_HARNESS_MAIN
