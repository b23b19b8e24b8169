// SPDX-License-Identifier: GPL-2.0
/*
 * The bugs of issue 21 and the ABI v2 rules they led to, one test each,
 * every one of which failed on the module before its fix:
 *
 * - two threads of one file in ACQUIRE and YIELD: neither is lost (bug 1);
 * - a stop, ptrace or the freezer restarts ACQUIRE, with the time left of a
 *   timed wait and without taking the GPU time report twice (bug 6);
 * - the status page's mapping: shared only, refaults after MADV_DONTNEED,
 *   and does not keep the client once the file is closed (bug 4);
 * - the page's seq is a sequence count (bug 7);
 * - knob writes through sysfs do not undo each other (bug 10);
 * - a client whose opener exited reports pid 0 (bug 3);
 * - GPU time reports are charged as max(held, reported) (ABI v2).
 */
#include <pthread.h>
#include "gs_test.h"

#define MS		1000000ull	/* ns */
#define LONG_US		1000000

FIXTURE(hardening) {
	int h, f;
	int gpu;
	const struct gpusched_status *st;	/* f's page */
};

FIXTURE_SETUP(hardening)
{
	self->h = gs_open_attached(GS_GPU_HARDENING);
	ASSERT_LE(0, self->h) TH_LOG("client h: %s", strerror(-self->h));
	self->f = gs_open_attached(GS_GPU_HARDENING);
	ASSERT_LE(0, self->f) TH_LOG("client f: %s", strerror(-self->f));
	self->gpu = gs_gpu_index(self->f);
	ASSERT_LE(0, self->gpu);
	ASSERT_EQ(0, gs_gpu_write_u64(self->gpu, "timeslice_us", LONG_US));
	ASSERT_EQ(0, gs_gpu_write_u64(self->gpu, "grace_us", LONG_US));
	self->st = gs_map_status(self->f);
	ASSERT_NE(NULL, self->st) TH_LOG("mmap: %s", strerror(errno));
}

FIXTURE_TEARDOWN(hardening)
{
	gs_unmap_status(self->st);
	if (self->h >= 0)
		close(self->h);
	if (self->f >= 0)
		close(self->f);
}

static int acquire_ex(int fd, bool yield, __u32 flags, __u64 timeout_ns,
		      __u64 gpu_ns)
{
	struct gpusched_acquire a = {
		.flags = flags, .timeout_ns = timeout_ns, .gpu_ns = gpu_ns,
	};

	return gs_ioctl(fd, yield ? GPUSCHED_IOC_YIELD : GPUSCHED_IOC_ACQUIRE,
			&a);
}

/* ---- bug 1 ---------------------------------------------------------- */

struct two {
	int fd;
	const struct gpusched_status *st;
	int ret_a, ret_b;
	uint64_t b_ns;
};

static void *thread_a(void *arg)
{
	struct two *t = arg;

	t->ret_a = gs_acquire(t->fd, 0, 0);
	return NULL;
}

/*
 * YIELD again and again while thread a waits (EBUSY: the file waits
 * already), so that one YIELD lands as soon as the file is granted, often
 * while thread a, woken, goes for the lock.
 */
static void *thread_b(void *arg)
{
	struct two *t = arg;
	uint64_t start;

	do {
		start = gs_now_ns();
		t->ret_b = acquire_ex(t->fd, true, GPUSCHED_ACQUIRE_TIMEOUT,
				      2000 * MS, 0);
	} while (t->ret_b == -EBUSY);
	t->b_ns = gs_now_ns() - start;
	return NULL;
}

/*
 * Thread a waits in ACQUIRE on f; h yields to it; thread b, on the same
 * file, YIELDs as soon as f is granted, which hands the token back to h
 * and queues f again. Before the fix thread a then took b's wait for its
 * own, cancelled it and returned EINTR with no signal, and b slept until
 * its timeout (forever without one).
 */
TEST_F(hardening, two_threads_one_file)
{
	int i, eintr = 0, lost = 0, raced = 0;

	for (i = 0; i < 300; i++) {
		struct two t = { .fd = self->f, .st = self->st };
		pthread_t a, b;

		ASSERT_EQ(0, gs_acquire(self->h, 0, 0));
		ASSERT_EQ(0, pthread_create(&a, NULL, thread_a, &t));
		ASSERT_TRUE(gs_gpu_wait_waiting(self->gpu, 1));
		ASSERT_EQ(0, pthread_create(&b, NULL, thread_b, &t));
		/* f is granted; h is granted back by b's YIELD. */
		ASSERT_EQ(0, gs_yield(self->h));
		ASSERT_EQ(0, gs_release(self->h));
		pthread_join(a, NULL);
		pthread_join(b, NULL);
		eintr += t.ret_a == -EINTR;
		lost += t.ret_b != 0 || t.b_ns > 1000 * MS;
		raced += t.ret_a == -EAGAIN;
		EXPECT_TRUE(t.ret_a == 0 || t.ret_a == -EAGAIN)
			TH_LOG("round %d: thread a got %d (%s)", i, t.ret_a,
			       strerror(-t.ret_a));
		EXPECT_EQ(0, t.ret_b)
			TH_LOG("round %d: thread b got %d after %llu ms", i,
			       t.ret_b, (unsigned long long)(t.b_ns / MS));
		/* b holds now; give the token back for the next round. */
		EXPECT_EQ(0, gs_release(self->f));
		if (eintr || lost)
			break;
	}
	TH_LOG("%d rounds: the grant was given away before thread a returned in %d",
	       i, raced);
	EXPECT_EQ(0, eintr);
	EXPECT_EQ(0, lost);
}

/* ---- bug 6 ---------------------------------------------------------- */

static void on_usr1(int sig)
{
	(void)sig;
}

/* A child's ACQUIRE on its own client, reported by exit code. */
enum { CH_OK, CH_RET, CH_GPU, CH_SLOW, CH_SETUP };

static int child_acquire(__u32 flags, __u64 timeout_ns, int want,
			 uint64_t max_ns, __u64 gpu_ns)
{
	struct gpusched_client_info ci;
	uint64_t start;
	int fd = gs_open_attached(GS_GPU_HARDENING), ret;

	if (fd < 0)
		return CH_SETUP;
	/* A client's reports stay within the time since it attached. */
	if (gpu_ns)
		gs_sleep_us(gpu_ns / 1000 + 10000);
	start = gs_now_ns();
	ret = acquire_ex(fd, false, flags, timeout_ns, gpu_ns);
	if (ret != want) {
		fprintf(stderr, "# child: ACQUIRE gave %d (%s), want %d\n", ret,
			strerror(-ret), want);
		return CH_RET;
	}
	if (max_ns && gs_now_ns() - start > max_ns) {
		fprintf(stderr, "# child: ACQUIRE took %llu ms\n",
			(unsigned long long)((gs_now_ns() - start) / MS));
		return CH_SLOW;
	}
	if (gs_info(fd, &ci) || ci.gpu_ns != gpu_ns) {
		fprintf(stderr, "# child: %llu ns of GPU time charged, %llu reported once\n",
			(unsigned long long)ci.gpu_ns, (unsigned long long)gpu_ns);
		return CH_GPU;
	}
	return CH_OK;
}

/* Stop and continue @pid while it waits; false if it did not stop. */
static bool stop_cont(pid_t pid, unsigned int stopped_ms)
{
	int status;

	if (kill(pid, SIGSTOP) || waitpid(pid, &status, WUNTRACED) != pid ||
	    !WIFSTOPPED(status))
		return false;
	gs_sleep_us(stopped_ms * 1000);
	return !kill(pid, SIGCONT);
}

/*
 * SIGSTOP and SIGCONT are no reason to fail ACQUIRE: the call is restarted
 * and granted, and its GPU time report is taken once (before the fix:
 * EINTR).
 */
TEST_F(hardening, stop_restarts_wait)
{
	pid_t pid;

	ASSERT_EQ(0, gs_acquire(self->h, 0, 0));
	pid = gs_fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(child_acquire(GPUSCHED_ACQUIRE_TIMEOUT, 10000 * MS, 0, 0,
				    7 * MS));
	ASSERT_TRUE(gs_gpu_wait_waiting(self->gpu, 1));
	ASSERT_TRUE(stop_cont(pid, 100));
	ASSERT_TRUE(gs_gpu_wait_waiting(self->gpu, 1));
	gs_sleep_us(100000);
	ASSERT_EQ(0, gs_release(self->h));
	EXPECT_EQ(CH_OK, gs_wait(pid));
}

/*
 * A timed wait that is stopped past its deadline ends when continued, at
 * the deadline the caller gave, not a whole timeout later.
 */
TEST_F(hardening, stop_keeps_deadline)
{
	pid_t pid;

	ASSERT_EQ(0, gs_acquire(self->h, 0, 0));
	pid = gs_fork();
	ASSERT_LE(0, pid);
	/* 1 s timeout; stopped from ~0.2 s to ~1.4 s: ETIMEDOUT by ~1.4 s,
	 * where a fresh timeout would end at 2.4 s.
	 */
	if (pid == 0)
		_exit(child_acquire(GPUSCHED_ACQUIRE_TIMEOUT, 1000 * MS,
				    -ETIMEDOUT, 2000 * MS, 0));
	ASSERT_TRUE(gs_gpu_wait_waiting(self->gpu, 1));
	gs_sleep_us(200000);
	ASSERT_TRUE(stop_cont(pid, 1200));
	EXPECT_EQ(CH_OK, gs_wait(pid));
	EXPECT_EQ(0, gs_release(self->h));
}

/* A signal whose handler runs still ends the wait with EINTR. */
TEST_F(hardening, handler_gives_eintr)
{
	pid_t pid;

	ASSERT_EQ(0, gs_acquire(self->h, 0, 0));
	pid = gs_fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct sigaction sa = { .sa_handler = on_usr1,
					.sa_flags = SA_RESTART };

		sigaction(SIGUSR1, &sa, NULL);
		_exit(child_acquire(0, 0, -EINTR, 0, 0));
	}
	ASSERT_TRUE(gs_gpu_wait_waiting(self->gpu, 1));
	ASSERT_EQ(0, kill(pid, SIGUSR1));
	EXPECT_EQ(CH_OK, gs_wait(pid));
	EXPECT_EQ(0, gs_release(self->h));
}

/*
 * After EINTR the caller's next ACQUIRE, the same request, is a new call:
 * its report is taken again (a restart's is not).
 */
TEST_F(hardening, call_after_eintr_is_new)
{
	int fds[2];
	char c;
	pid_t pid;

	ASSERT_EQ(0, pipe(fds));
	ASSERT_EQ(0, gs_acquire(self->h, 0, 0));
	pid = gs_fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct sigaction sa = { .sa_handler = on_usr1 };
		struct gpusched_client_info ci;
		int fd = gs_open_attached(GS_GPU_HARDENING);

		sigaction(SIGUSR1, &sa, NULL);
		if (fd < 0)
			_exit(CH_SETUP);
		/* The 14 ms reported below fit in the time since ATTACH. */
		gs_sleep_us(24000);
		if (acquire_ex(fd, false, 0, 0, 7 * MS) != -EINTR)
			_exit(CH_RET);
		if (write(fds[1], "x", 1) != 1)
			_exit(CH_SETUP);
		if (acquire_ex(fd, false, 0, 0, 7 * MS))
			_exit(CH_RET);
		_exit(gs_info(fd, &ci) || ci.gpu_ns != 14 * MS ? CH_GPU : CH_OK);
	}
	close(fds[1]);
	ASSERT_TRUE(gs_gpu_wait_waiting(self->gpu, 1));
	ASSERT_EQ(0, kill(pid, SIGUSR1));
	ASSERT_EQ(1, read(fds[0], &c, 1));	/* EINTR; asking again */
	close(fds[0]);
	ASSERT_TRUE(gs_gpu_wait_waiting(self->gpu, 1));
	ASSERT_EQ(0, gs_release(self->h));
	EXPECT_EQ(CH_OK, gs_wait(pid));
}

/* ---- bug 4 ---------------------------------------------------------- */

TEST_F(hardening, private_mapping_refused)
{
	void *p = mmap(NULL, GPUSCHED_STATUS_SIZE, PROT_READ, MAP_PRIVATE,
		       self->f, GPUSCHED_STATUS_OFFSET);

	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	if (p != MAP_FAILED)
		munmap(p, GPUSCHED_STATUS_SIZE);
}

/*
 * A file opened read-only maps the page shared too (do_mmap() clears
 * VM_SHARED there and keeps VM_MAYSHARE): refused with EINVAL before.
 */
TEST_F(hardening, readonly_file_maps_page)
{
	int fd = open("/dev/gpusched", O_RDONLY | O_CLOEXEC);
	const struct gpusched_status *st;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, gs_attach(fd, GS_GPU_HARDENING));
	st = gs_map_status(fd);
	ASSERT_NE(NULL, st);
	EXPECT_EQ(GPUSCHED_STATUS_VERSION, st->version);
	gs_unmap_status(st);
	close(fd);
}

/* close() releases the token even while the page is mapped. */
TEST_F(hardening, close_with_page_mapped_releases)
{
	int fd = gs_open_attached(GS_GPU_HARDENING);
	const struct gpusched_status *st;

	ASSERT_LE(0, fd);
	st = gs_map_status(fd);
	ASSERT_NE(NULL, st);
	ASSERT_EQ(0, gs_acquire(fd, 0, 0));
	ASSERT_TRUE(gs_st_flags(st) & GPUSCHED_ST_HOLDING);
	close(fd);
	/* Free now: another client is granted at once. */
	EXPECT_EQ(0, gs_acquire(self->f, GPUSCHED_ACQUIRE_NONBLOCK, 0));
	EXPECT_EQ(0, gs_release(self->f));
	/* The page keeps its last contents. */
	EXPECT_EQ(GPUSCHED_STATUS_VERSION, st->version);
	gs_unmap_status(st);
}

/* After MADV_DONTNEED the page is mapped again, not SIGBUS or zeros. */
TEST_F(hardening, dontneed_refaults)
{
	pid_t pid = gs_fork();

	ASSERT_LE(0, pid);
	if (pid == 0) {
		/* The parent's mapping is not inherited: map our own. */
		const struct gpusched_status *st = gs_map_status(self->f);

		if (!st || gs_acquire(self->f, 0, 0))
			_exit(3);
		if (madvise((void *)st, GPUSCHED_STATUS_SIZE, MADV_DONTNEED))
			_exit(2);
		_exit(st->version == GPUSCHED_STATUS_VERSION &&
		      (gs_st_flags(st) & GPUSCHED_ST_HOLDING) ? 0 : 1);
	}
	EXPECT_EQ(0, gs_wait(pid));	/* 128 + SIGBUS before the fix */
	gs_release(self->f);
}

/* ---- bug 7 ---------------------------------------------------------- */

/* Every update makes seq odd, then even again: a reader sees it even. */
TEST_F(hardening, seq_is_a_seqcount)
{
	__u32 seq0 = __atomic_load_n(&self->st->seq, __ATOMIC_ACQUIRE), seq;
	int i;

	EXPECT_EQ(0, seq0 & 1);
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, gs_acquire(self->f, 0, 0));
		seq = __atomic_load_n(&self->st->seq, __ATOMIC_ACQUIRE);
		EXPECT_EQ(0, seq & 1) TH_LOG("seq %u after a grant", seq);
		ASSERT_EQ(0, gs_release(self->f));
		seq = __atomic_load_n(&self->st->seq, __ATOMIC_ACQUIRE);
		EXPECT_EQ(0, seq & 1) TH_LOG("seq %u after a release", seq);
	}
	EXPECT_LT(seq0, seq);
	EXPECT_EQ(GPUSCHED_FEAT_DUE | GPUSCHED_FEAT_GPU_TIME,
		  self->st->features & (GPUSCHED_FEAT_DUE | GPUSCHED_FEAT_GPU_TIME));
	/* The GPU's promises to latency clients, as its knobs say. */
	EXPECT_EQ(gs_gpu_read(self->gpu, "latency_queue_us") * 1000,
		  self->st->latency_queue_ns);
	EXPECT_EQ(gs_gpu_read(self->gpu, "handover_us") * 1000,
		  self->st->handover_ns);
	ASSERT_EQ(0, gs_gpu_write_u64(self->gpu, "handover_us", 250));
	EXPECT_EQ(250000, self->st->handover_ns);	/* every page, at once */
	ASSERT_EQ(0, gs_gpu_write_u64(self->gpu, "handover_us",
				      gs_param_read("handover_us")));
}

/* ---- bug 10 --------------------------------------------------------- */

struct writer {
	int gpu;
	const char *knob;
	unsigned int first, n;
	int err;
	unsigned int lost;
	long long last_lost;
};

/*
 * Write increasing values and read each back: the other writer changes
 * another knob only, so a smaller value read back is a lost update.
 */
static void *write_knob(void *arg)
{
	struct writer *w = arg;
	unsigned int i;
	long long v;

	for (i = 0; i < w->n && !w->err; i++) {
		w->err = gs_gpu_write_u64(w->gpu, w->knob, w->first + i);
		v = gs_gpu_read(w->gpu, w->knob);
		if (!w->err && v < w->first + i) {
			w->lost++;
			w->last_lost = v;
		}
	}
	return NULL;
}

/* Two knobs written at once: each ends at its writer's last value. */
TEST_F(hardening, knob_writes_not_lost)
{
	struct writer w[2] = {
		{ .gpu = self->gpu, .knob = "timeslice_us", .first = 10000, .n = 2000 },
		{ .gpu = self->gpu, .knob = "window_us", .first = 20000, .n = 2000 },
	};
	pthread_t t[2];
	int i;

	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, pthread_create(&t[i], NULL, write_knob, &w[i]));
	for (i = 0; i < 2; i++) {
		pthread_join(t[i], NULL);
		EXPECT_EQ(0, w[i].err);
		EXPECT_EQ(0, w[i].lost)
			TH_LOG("%s: %u writes undone by the other writer (e.g. %lld read back)",
			       w[i].knob, w[i].lost, w[i].last_lost);
	}
	EXPECT_EQ(11999, gs_gpu_read(self->gpu, "timeslice_us"));
	EXPECT_EQ(21999, gs_gpu_read(self->gpu, "window_us"));
	ASSERT_EQ(0, gs_gpu_write_u64(self->gpu, "timeslice_us", LONG_US));
}

/* ---- bug 3 ---------------------------------------------------------- */

/*
 * A client whose opener exited (its file kept by a child) holds the
 * token: holder_pid says 0, not a number another process may have now.
 */
TEST_F(hardening, exited_opener_has_no_pid)
{
	int fds[2];
	pid_t opener, keeper = 0;

	ASSERT_EQ(0, pipe(fds));
	opener = gs_fork();
	ASSERT_LE(0, opener);
	if (opener == 0) {
		int fd = gs_open_attached(GS_GPU_HARDENING);
		pid_t k;

		if (fd < 0 || gs_acquire(fd, 0, 0))
			_exit(1);
		k = fork();
		if (k == 0) {
			pause();
			_exit(0);
		}
		_exit(write(fds[1], &k, sizeof(k)) == sizeof(k) ? 0 : 1);
	}
	close(fds[1]);
	ASSERT_EQ(sizeof(keeper), read(fds[0], &keeper, sizeof(keeper)));
	close(fds[0]);
	EXPECT_EQ(0, gs_wait(opener));	/* reaped: its pid is free */
	EXPECT_EQ(0, gs_gpu_read(self->gpu, "holder_pid"));
	kill(keeper, SIGKILL);
	/* The keeper is not our child: wait for the token to come free. */
	EXPECT_EQ(0, gs_acquire(self->f, GPUSCHED_ACQUIRE_TIMEOUT, 5000 * MS));
	gs_release(self->f);
}

/* ---- GPU time ------------------------------------------------------- */

TEST_F(hardening, gpu_time_charged)
{
	struct gpusched_client_info ci;

	ASSERT_EQ(0, gs_info(self->f, &ci));
	EXPECT_EQ(GPUSCHED_ABI_VERSION, ci.abi_version);
	EXPECT_TRUE(ci.features & GPUSCHED_FEAT_GPU_TIME);
	/* Its reports below (60 ms) fit in the time since it attached. */
	gs_sleep_us(70000);
	ASSERT_EQ(0, gs_acquire(self->f, 0, 0));
	/* Held a moment; its 50 ms of work runs on after the release. */
	ASSERT_EQ(0, gs_release_gpu(self->f, 50 * MS));
	ASSERT_EQ(0, gs_info(self->f, &ci));
	EXPECT_EQ(50 * MS, ci.gpu_ns);
	EXPECT_EQ(50 * MS, ci.held_ns);
	/* More, after the release: the same grant; EPERM, taken. */
	EXPECT_EQ(-EPERM, gs_release_gpu(self->f, 10 * MS));
	ASSERT_EQ(0, gs_info(self->f, &ci));
	EXPECT_EQ(60 * MS, ci.gpu_ns);
	EXPECT_EQ(60 * MS, ci.held_ns);
	/* An invalid call takes none. */
	EXPECT_EQ(-EINVAL, acquire_ex(self->f, false, 0, 1, 5 * MS));
	ASSERT_EQ(0, gs_info(self->f, &ci));
	EXPECT_EQ(60 * MS, ci.gpu_ns);
}

TEST_HARNESS_MAIN
