// SPDX-License-Identifier: GPL-2.0
/*
 * Process death releases: a holder killed with SIGKILL hands the token to
 * the waiter at once, not after the grace time; a waiter killed while it
 * waits leaves the queue. Slice and grace are long (5 s), so only the
 * death itself can explain a prompt grant.
 */
#include <pthread.h>
#include "gs_test.h"

#define LONG_US		5000000
#define MS		1000000ull	/* ns */
#define PROMPT_NS	(1000 * MS)	/* TCG wake-up slack, well under grace */

FIXTURE(kill) {
	int fd;
	int gpu;
	const struct gpusched_status *st;
	pid_t child;
	int *child_holds;	/* shared: the child's acquire returned 0 */
};

FIXTURE_SETUP(kill)
{
	self->fd = gs_open_attached(GS_GPU_KILL);
	ASSERT_LE(0, self->fd) TH_LOG("attach: %s", strerror(-self->fd));
	self->gpu = gs_gpu_index(self->fd);
	ASSERT_LE(0, self->gpu);
	ASSERT_EQ(0, gs_gpu_write_u64(self->gpu, "timeslice_us", LONG_US));
	ASSERT_EQ(0, gs_gpu_write_u64(self->gpu, "grace_us", LONG_US));
	self->st = gs_map_status(self->fd);
	ASSERT_NE(NULL, self->st);
	self->child_holds = mmap(NULL, sizeof(int), PROT_READ | PROT_WRITE,
				 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->child_holds);
}

FIXTURE_TEARDOWN(kill)
{
	if (self->child > 0)
		kill(self->child, SIGKILL);
	gs_unmap_status(self->st);
	close(self->fd);
}

/* A child that acquires the token, says so, and then sleeps forever. */
static pid_t spawn_acquirer(int *holds)
{
	pid_t pid = gs_fork();
	int fd;

	if (pid)
		return pid;
	fd = gs_open_attached(GS_GPU_KILL);
	if (fd < 0 || gs_acquire(fd, 0, 0))
		_exit(1);
	__atomic_store_n(holds, 1, __ATOMIC_RELEASE);
	for (;;)
		pause();
}

struct waiter {
	int fd;
	int ret;
	uint64_t granted_ns;
};

static void *waiter_fn(void *arg)
{
	struct waiter *w = arg;

	w->ret = gs_acquire(w->fd, 0, 0);
	w->granted_ns = gs_now_ns();
	return NULL;
}

TEST_F(kill, holder_death_grants_waiter)
{
	struct waiter w = { .fd = self->fd };
	pthread_t thread;
	uint64_t killed;

	self->child = spawn_acquirer(self->child_holds);
	ASSERT_LT(0, self->child);
	ASSERT_TRUE(gs_wait_until(__atomic_load_n(self->child_holds,
						  __ATOMIC_ACQUIRE), 5000));
	EXPECT_EQ(self->child, gs_gpu_read(self->gpu, "holder_pid"));

	ASSERT_EQ(0, pthread_create(&thread, NULL, waiter_fn, &w));
	ASSERT_TRUE(gs_gpu_wait_waiting(self->gpu, 1));
	gs_sleep_us(50000);
	EXPECT_EQ(0, gs_st_flags(self->st) & GPUSCHED_ST_HOLDING);

	killed = gs_now_ns();
	ASSERT_EQ(0, kill(self->child, SIGKILL));
	pthread_join(thread, NULL);
	EXPECT_EQ(0, w.ret);
	EXPECT_GT(killed + PROMPT_NS, w.granted_ns)
		TH_LOG("granted %.1f ms after the kill",
		       (w.granted_ns - killed) / 1e6);
	EXPECT_EQ(128 + SIGKILL, gs_wait(self->child));
	self->child = 0;
	EXPECT_NE(0, gs_st_flags(self->st) & GPUSCHED_ST_HOLDING);
	EXPECT_EQ(getpid(), gs_gpu_read(self->gpu, "holder_pid"));
	EXPECT_EQ(1, gs_gpu_read(self->gpu, "nr_clients"));
	EXPECT_EQ(0, gs_gpu_read(self->gpu, "overruns"));
	EXPECT_EQ(0, gs_release(self->fd));
}

TEST_F(kill, waiter_death_leaves_queue)
{
	ASSERT_EQ(0, gs_acquire(self->fd, 0, 0));
	self->child = spawn_acquirer(self->child_holds);
	ASSERT_LT(0, self->child);
	ASSERT_TRUE(gs_gpu_wait_waiting(self->gpu, 1));
	/* The holder's page shows the waiter. */
	EXPECT_EQ(1, gs_st_nr_waiting(self->st));
	EXPECT_EQ(2, gs_gpu_read(self->gpu, "nr_clients"));

	ASSERT_EQ(0, kill(self->child, SIGKILL));
	EXPECT_EQ(128 + SIGKILL, gs_wait(self->child));
	self->child = 0;
	EXPECT_EQ(0, __atomic_load_n(self->child_holds, __ATOMIC_ACQUIRE));
	/* The file is closed when the process has gone. */
	EXPECT_TRUE(gs_wait_until(gs_gpu_read(self->gpu, "nr_clients") == 1,
				  5000));
	EXPECT_EQ(0, gs_st_nr_waiting(self->st));
	EXPECT_EQ(0, gs_gpu_read(self->gpu, "nr_waiting"));
	/* Nobody is left to take over. */
	EXPECT_EQ(0, gs_release(self->fd));
	EXPECT_EQ(0, gs_gpu_read(self->gpu, "holder_pid"));
	EXPECT_EQ(0, gs_acquire(self->fd, GPUSCHED_ACQUIRE_NONBLOCK, 0));
	EXPECT_EQ(0, gs_release(self->fd));
}

TEST_HARNESS_MAIN
