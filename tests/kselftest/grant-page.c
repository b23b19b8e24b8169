// SPDX-License-Identifier: GPL-2.0
/*
 * When ACQUIRE or YIELD returns 0, the status page already shows the new
 * grant (its grant_gen has moved on): the library's fast path trusts the
 * page from that moment on.
 *
 * ACQUIRE used to decide that it need not sleep from an unlocked read of
 * the client's state. Another CPU granting the token sets that state
 * before it writes the page, in the same critical section, so the caller
 * could return 0 while its page still showed the previous grant (seen in
 * exclusion.c on a loaded debug kernel). The window is widest when the
 * grant follows a revocation: the revoking timer first sends the overrun
 * event to every listener, then writes the new holder's page. So: a
 * holder that never yields, revoked over and over, clients waiting for
 * the token, hundreds of sockets listening to the events, and CPU burners
 * that make preemption right after ACQUIRE's first critical section
 * likely. Before the fix about 1 in 2000 grants returned early on the
 * debug kernel under TCG.
 */
#include <sched.h>
#include "gs_test.h"
#include "../fuzz/fuzz-nl.h"

#define NGRABBERS	6
#define ROUNDS		400
#define NLISTENERS	400
#define NBURNERS	2

struct shared {
	int go;			/* 1: run, 2: stop */
	int early;		/* a 0 returned before the page showed the grant */
	int grants;
};

static __u64 gen(const struct gpusched_status *st)
{
	/* flags with acquire first: the fields are valid from then on. */
	gs_st_flags(st);
	return __atomic_load_n(&st->grant_gen, __ATOMIC_RELAXED);
}

/* After a 0 from ACQUIRE: count it if the page lags; wait for it. */
static void check_page(struct shared *sh, const struct gpusched_status *st,
		       __u64 before)
{
	if (gen(st) != before)
		return;
	__atomic_add_fetch(&sh->early, 1, __ATOMIC_SEQ_CST);
	while (gen(st) == before)
		sched_yield();
}

/* Holds until revoked, again and again. */
static int revokee(struct shared *sh)
{
	const struct gpusched_status *st;
	int fd = gs_open_attached(GS_GPU_GRANT_PAGE), err;
	__u64 before;

	if (fd < 0 || !(st = gs_map_status(fd)))
		return 1;
	/* The heaviest weight: it is granted often, and so revoked often. */
	if (gs_set_weight(fd, GPUSCHED_WEIGHT_MAX))
		return 3;
	while (!__atomic_load_n(&sh->go, __ATOMIC_ACQUIRE))
		sched_yield();
	while (__atomic_load_n(&sh->go, __ATOMIC_ACQUIRE) == 1) {
		before = gen(st);
		err = gs_acquire(fd, 0, 0);
		if (err == -EAGAIN)	/* granted and revoked before it ran */
			continue;
		if (err)
			return 2;
		check_page(sh, st, before);
		while ((gs_st_flags(st) & GPUSCHED_ST_HOLDING) &&
		       __atomic_load_n(&sh->go, __ATOMIC_ACQUIRE) == 1)
			sched_yield();
	}
	return 0;
}

static int grabber(struct shared *sh)
{
	const struct gpusched_status *st;
	int fd = gs_open_attached(GS_GPU_GRANT_PAGE), i, err;
	__u64 before;

	if (fd < 0 || !(st = gs_map_status(fd)))
		return 1;
	while (!__atomic_load_n(&sh->go, __ATOMIC_ACQUIRE))
		sched_yield();
	for (i = 0; i < ROUNDS; i++) {
		before = gen(st);
		err = gs_acquire(fd, 0, 0);
		if (err == -EAGAIN)
			continue;
		if (err)
			return 2;
		check_page(sh, st, before);
		__atomic_add_fetch(&sh->grants, 1, __ATOMIC_RELAXED);
		err = gs_release(fd);
		if (err && err != -EPERM)	/* EPERM: revoked meanwhile */
			return 3;
	}
	return 0;
}

FIXTURE(grant_page) {
	int fd;
	int gpu;
	struct shared *sh;
	pid_t pids[NGRABBERS + 1 + NBURNERS];
	int nl[NLISTENERS];
};

FIXTURE_SETUP(grant_page)
{
	__u32 grp;
	int i;

	for (i = 0; i < NLISTENERS; i++)
		self->nl[i] = -1;
	self->fd = gs_open_attached(GS_GPU_GRANT_PAGE);
	ASSERT_LE(0, self->fd);
	self->gpu = gs_gpu_index(self->fd);
	ASSERT_LE(0, self->gpu);
	ASSERT_EQ(0, gs_gpu_write_u64(self->gpu, "timeslice_us", 100));
	ASSERT_EQ(0, gs_gpu_write_u64(self->gpu, "grace_us", 1000));
	self->sh = mmap(NULL, sizeof(*self->sh), PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->sh);
	for (i = 0; i < NLISTENERS; i++) {
		self->nl[i] = gs_nl_open();
		ASSERT_LE(0, self->nl[i]);
		ASSERT_LT(0, gs_nl_family(self->nl[i], &grp));
		ASSERT_EQ(0, setsockopt(self->nl[i], SOL_NETLINK,
					NETLINK_ADD_MEMBERSHIP, &grp, sizeof(grp)));
	}
}

FIXTURE_TEARDOWN(grant_page)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(self->pids); i++)
		if (self->pids[i] > 0)
			kill(self->pids[i], SIGKILL);
	for (i = 0; i < NLISTENERS; i++)
		if (self->nl[i] >= 0)
			close(self->nl[i]);
	close(self->fd);
}

TEST_F_TIMEOUT(grant_page, page_shows_the_grant_when_acquire_returns, 900)
{
	pid_t *p = self->pids;
	int i;

	for (i = 0; i < NBURNERS; i++) {
		p[i] = gs_fork();
		ASSERT_LE(0, p[i]);
		if (p[i] == 0)
			for (;;)
				;
	}
	p[NBURNERS] = gs_fork();
	ASSERT_LE(0, p[NBURNERS]);
	if (p[NBURNERS] == 0)
		_exit(revokee(self->sh));
	for (i = NBURNERS + 1; i < NBURNERS + 1 + NGRABBERS; i++) {
		p[i] = gs_fork();
		ASSERT_LE(0, p[i]);
		if (p[i] == 0)
			_exit(grabber(self->sh));
	}
	__atomic_store_n(&self->sh->go, 1, __ATOMIC_RELEASE);
	for (i = NBURNERS + 1; i < NBURNERS + 1 + NGRABBERS; i++) {
		EXPECT_EQ(0, gs_wait(p[i]));
		p[i] = 0;
	}
	__atomic_store_n(&self->sh->go, 2, __ATOMIC_RELEASE);
	EXPECT_EQ(0, gs_wait(p[NBURNERS]));
	p[NBURNERS] = 0;
	ksft_print_msg("%d grants, %lld revocations, %d returned before the page showed the grant\n",
		       self->sh->grants, gs_gpu_read(self->gpu, "overruns"),
		       self->sh->early);
	EXPECT_EQ(0, self->sh->early);
}

TEST_HARNESS_MAIN
