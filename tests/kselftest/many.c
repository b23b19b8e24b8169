// SPDX-License-Identifier: GPL-2.0
/*
 * Many clients on one token: 64 of them, as processes and as threads with
 * a file each, all attach, all are served every round, never two at once.
 */
#include <pthread.h>
#include <sched.h>
#include "gs_test.h"

#define NCLIENTS	64
#define ROUNDS		5

struct shared {
	int ready;
	int go;
	int holders;
	int overlaps;
	int served;		/* grants taken */
};

FIXTURE(many) {
	int fd;		/* the parent's own client: knobs and counts */
	int gpu;
	struct shared *sh;
	pid_t pids[NCLIENTS];
};

FIXTURE_SETUP(many)
{
	self->fd = gs_open_attached(GS_GPU_MANY);
	ASSERT_LE(0, self->fd) TH_LOG("attach: %s", strerror(-self->fd));
	self->gpu = gs_gpu_index(self->fd);
	ASSERT_LE(0, self->gpu);
	ASSERT_EQ(0, gs_gpu_write_u64(self->gpu, "grace_us", 10000000));
	self->sh = mmap(NULL, sizeof(*self->sh), PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->sh);
}

FIXTURE_TEARDOWN(many)
{
	int i;

	for (i = 0; i < NCLIENTS; i++)
		if (self->pids[i] > 0)
			kill(self->pids[i], SIGKILL);
	close(self->fd);
}

/* One client's life: 0, or the step that failed. */
static int client(struct shared *sh)
{
	const struct gpusched_status *st;
	struct gpusched_client_info ci;
	int fd, i, err = 0;

	fd = gs_open_attached(GS_GPU_MANY);
	if (fd < 0)
		return 1;
	st = gs_map_status(fd);
	if (!st) {
		close(fd);
		return 2;
	}
	__atomic_add_fetch(&sh->ready, 1, __ATOMIC_SEQ_CST);
	while (!__atomic_load_n(&sh->go, __ATOMIC_ACQUIRE))
		gs_sleep_us(1000);

	for (i = 0; i < ROUNDS && !err; i++) {
		if (gs_acquire(fd, 0, 0)) {
			err = 3;
			break;
		}
		if (!(gs_st_flags(st) & GPUSCHED_ST_HOLDING))
			err = 6;
		if (__atomic_fetch_add(&sh->holders, 1, __ATOMIC_SEQ_CST))
			__atomic_add_fetch(&sh->overlaps, 1, __ATOMIC_SEQ_CST);
		__atomic_add_fetch(&sh->served, 1, __ATOMIC_SEQ_CST);
		sched_yield();
		__atomic_sub_fetch(&sh->holders, 1, __ATOMIC_SEQ_CST);
		if (gs_release(fd))
			err = 4;
	}
	if (!err && (gs_info(fd, &ci) || ci.grants != ROUNDS))
		err = 5;
	gs_unmap_status(st);
	close(fd);
	return err;
}

static void check_counts(struct __test_metadata *_metadata,
			 const struct shared *sh, int gpu)
{
	EXPECT_EQ(NCLIENTS * ROUNDS, sh->served);
	EXPECT_EQ(0, sh->overlaps);
	EXPECT_EQ(0, gs_gpu_read(gpu, "nr_waiting"));
	EXPECT_EQ(0, gs_gpu_read(gpu, "holder_pid"));
	/* Exited processes close their files a little after waitpid(). */
	EXPECT_TRUE(gs_wait_until(gs_gpu_read(gpu, "nr_clients") == 1, 5000));
}

TEST_F_TIMEOUT(many, processes, 120)
{
	int i;

	for (i = 0; i < NCLIENTS; i++) {
		self->pids[i] = gs_fork();
		ASSERT_LE(0, self->pids[i]);
		if (self->pids[i] == 0)
			_exit(client(self->sh));
	}
	ASSERT_TRUE(gs_wait_until(__atomic_load_n(&self->sh->ready,
				  __ATOMIC_SEQ_CST) == NCLIENTS, 30000));
	EXPECT_EQ(NCLIENTS + 1, gs_gpu_read(self->gpu, "nr_clients"));
	__atomic_store_n(&self->sh->go, 1, __ATOMIC_RELEASE);
	for (i = 0; i < NCLIENTS; i++) {
		EXPECT_EQ(0, gs_wait(self->pids[i])) TH_LOG("client %d", i);
		self->pids[i] = 0;
	}
	check_counts(_metadata, self->sh, self->gpu);
}

struct thread_client {
	pthread_t thread;
	struct shared *sh;
	int err;
};

static void *thread_fn(void *arg)
{
	struct thread_client *t = arg;

	t->err = client(t->sh);
	return NULL;
}

TEST_F_TIMEOUT(many, threads, 120)
{
	static struct thread_client t[NCLIENTS];
	int i;

	for (i = 0; i < NCLIENTS; i++) {
		t[i].sh = self->sh;
		ASSERT_EQ(0, pthread_create(&t[i].thread, NULL, thread_fn, &t[i]));
	}
	ASSERT_TRUE(gs_wait_until(__atomic_load_n(&self->sh->ready,
				  __ATOMIC_SEQ_CST) == NCLIENTS, 30000));
	EXPECT_EQ(NCLIENTS + 1, gs_gpu_read(self->gpu, "nr_clients"));
	__atomic_store_n(&self->sh->go, 1, __ATOMIC_RELEASE);
	for (i = 0; i < NCLIENTS; i++) {
		pthread_join(t[i].thread, NULL);
		EXPECT_EQ(0, t[i].err) TH_LOG("client %d", i);
	}
	check_counts(_metadata, self->sh, self->gpu);
}

TEST_HARNESS_MAIN
