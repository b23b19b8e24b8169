// SPDX-License-Identifier: GPL-2.0
/*
 * The token contract, through libgpusched's explicit API and its backends,
 * against whichever service is there (the module or the arbiter): the
 * errno of every command, the status page, yield with a drain, and the
 * rule that only a privileged client may raise its share. TAP output.
 *
 * Linked with the library's objects (not the .so) so that it can also
 * send malformed commands through the backend.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "cuda_double.h"
#include "tap_ok.h"

#define EXPECT(call, want) do { int r_ = (call); \
	ok(r_ == (want), "%s = %d (%s)", #call, r_, r_ ? gpusched_strerror(r_) : "0"); \
} while (0)

static uint64_t ns_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t ms_now(void)
{
	return ns_now() / 1000000;
}

static unsigned char uuid[16];

/*
 * A backend around the real one (the GPU-time checks): while a command is
 * out, take hook_unreport back from @hook_g's pending GPU time, or fail
 * with hook_fail as a service that is gone does, without sending it.
 */
static const struct gs_backend *real_be;
static struct gs_backend hook_be;
static struct gpusched *hook_g;
static uint64_t hook_unreport;
static int hook_fail, hook_calls;

static int hooked_call(struct gpusched *g, unsigned int cmd, void *arg)
{
	hook_calls++;
	if (hook_unreport)
		gs_unreport_gpu(hook_g, hook_unreport);
	if (hook_fail)
		return hook_fail;
	return real_be->call(g, cmd, arg);
}

static int drained;
static int drain(void *arg)
{
	(void)arg;
	drained++;
	return 0;
}

static void *acquire_thread(void *arg)
{
	struct gpusched *g = arg;
	long r = gpusched_acquire(g, 5000000000LL);

	if (!r) {
		usleep(20000);
		r = gpusched_release(g);
	}
	return (void *)r;
}

/* A waiter whose work comes 500 ms after it asks (GPUSCHED_ACQUIRE_DUE). */
#define DUE_US 500000u
static uint64_t due_asked;

static void *due_thread(void *arg)
{
	struct gpusched *g = arg;
	struct gpusched_acquire a = {
		.flags = GPUSCHED_ACQUIRE_TIMEOUT | GPUSCHED_ACQUIRE_DUE,
		.timeout_ns = 5000000000ull,
		.due_us = DUE_US,
	};
	long r;

	due_asked = ns_now();
	/* The library does not ask ahead: the ABI, through its backend. */
	r = g->be->call(g, GPUSCHED_IOC_ACQUIRE, &a);
	if (!r) {
		usleep(20000);
		r = gpusched_release(g);
	}
	return (void *)r;
}

/* A waiter that gives up after 300 ms: ETIMEDOUT expected. */
static void *give_up_thread(void *arg)
{
	return (void *)(long)gpusched_acquire(arg, 300000000LL);
}

static uint32_t st_flags(const struct gpusched *g)
{
	return __atomic_load_n(&g->st->flags, __ATOMIC_ACQUIRE);
}

/* Raise our own share from an unprivileged process: EPERM, and lowering
 * is allowed. Run in a child that dropped root.
 */
static int unprivileged_child(void)
{
	struct gpusched *g;
	int bad = 0;

	if (setgid(65534) || setuid(65534))
		return 99;
	if (gs_open(uuid, 0, &g))
		return 98;
	bad |= gpusched_set_params(g, 200, GPUSCHED_KEEP, GPUSCHED_KEEP) != -EPERM;
	bad |= (gpusched_set_params(g, GPUSCHED_KEEP, GPUSCHED_LATENCY, GPUSCHED_KEEP) != -EPERM) << 1;
	bad |= (gpusched_set_params(g, 50, GPUSCHED_BATCH, 30) != 0) << 2;
	bad |= (gpusched_set_params(g, 60, GPUSCHED_KEEP, GPUSCHED_KEEP) != -EPERM) << 3;
	bad |= (gpusched_set_params(g, GPUSCHED_KEEP, GPUSCHED_KEEP, 0) != -EPERM) << 4;
	gpusched_close(g);
	return bad;
}

int main(void)
{
	struct gpusched *g, *g2;
	struct gpusched_info info;
	struct gpusched_attach at = { 0 };
	struct gpusched_acquire aq = { 0 };
	struct gpusched_release rel = { 0 };
	struct gpusched_params par = { 0 };
	struct gpusched_client_info ci = { 0 };
	pthread_t t;
	void *res;
	uint64_t t0, asked, seen;
	int r;

	gsd_uuid(0, uuid);
	printf("# backend: %s\n", access(GPUSCHED_DEVICE_PATH, F_OK) ? "arbiter" : "kmod");

	r = gpusched_open(uuid, &g);
	ok(!r, "gpusched_open = %d (%s)", r, gpusched_strerror(r));
	if (r)
		return tap_done();
	EXPECT(gpusched_open(NULL, &g2), -EINVAL);
	EXPECT(gpusched_info(g, &info), 0);
	ok(info.state == GPUSCHED_STATE_IDLE && info.weight == GPUSCHED_WEIGHT_DEFAULT &&
	   info.sched_class == GPUSCHED_NORMAL && info.cap_pct == 0,
	   "a new client is idle, weight 100, normal, no cap (state %u weight %u class %u cap %u, %s)",
	   info.state, info.weight, info.sched_class, info.cap_pct, info.backend);
	ok(g->st->version == GPUSCHED_STATUS_VERSION &&
	   (g->st->flags & GPUSCHED_ST_ATTACHED) && !gpusched_holding(g),
	   "status page: version %u, attached, not holding", g->st->version);

	/* The page is read-only for good. */
	errno = 0;
	r = mprotect((void *)g->st, GPUSCHED_STATUS_SIZE, PROT_READ | PROT_WRITE);
	ok(r == -1 && errno == EACCES, "the status page cannot be made writable (mprotect: %s)",
	   r ? strerror(errno) : "allowed");

	/* Malformed commands, as the module rejects them. */
	at.flags = 1;
	memcpy(at.uuid, uuid, 16);
	EXPECT(g->be->call(g, GPUSCHED_IOC_ATTACH, &at), -EOPNOTSUPP);
	at.flags = 0;
	EXPECT(g->be->call(g, GPUSCHED_IOC_ATTACH, &at), -EBUSY);
	aq.flags = 1U << 7;
	EXPECT(g->be->call(g, GPUSCHED_IOC_ACQUIRE, &aq), -EOPNOTSUPP);
	aq.flags = 0;
	aq.due_us = 1;		/* without GPUSCHED_ACQUIRE_DUE */
	EXPECT(g->be->call(g, GPUSCHED_IOC_ACQUIRE, &aq), -EINVAL);
	aq.due_us = 0;
	rel.flags = 2;
	EXPECT(g->be->call(g, GPUSCHED_IOC_RELEASE, &rel), -EOPNOTSUPP);
	par.mask = 1U << 9;
	EXPECT(g->be->call(g, GPUSCHED_IOC_SET_PARAMS, &par), -EOPNOTSUPP);
	par.mask = GPUSCHED_PARAM_WEIGHT;
	par.weight = 100;
	par.reserved[0] = 1;
	EXPECT(g->be->call(g, GPUSCHED_IOC_SET_PARAMS, &par), -EINVAL);
	EXPECT(g->be->call(g, _IOW(GPUSCHED_IOC_MAGIC, 0x3f, struct gpusched_release), &rel), -ENOTTY);

	/* A second client, not attached yet: what needs a GPU says ENOTCONN. */
	g2 = calloc(1, sizeof(*g2));
	pthread_mutex_init(&g2->io_lock, NULL);
	g2->be = g->be;
	g2->fd = -1;
	if (!strcmp(g->be->name, "arbiter")) {
		/* Open the connection without attaching. */
		struct gpusched tmp = *g2;

		memset(at.uuid, 0, 16);
		r = gs_backend_arbiter.open(&tmp, at.uuid);
		ok(r == -EINVAL, "ATTACH with a zero uuid: %d (%s)", r, gpusched_strerror(r));
	} else {
		memset(at.uuid, 0, 16);
		r = gs_backend_kmod.open(g2, at.uuid);
		ok(r == -EINVAL, "ATTACH with a zero uuid: %d (%s)", r, gpusched_strerror(r));
	}
	pthread_mutex_destroy(&g2->io_lock);
	free(g2);

	/* Acquire, hold, release. */
	EXPECT(gpusched_acquire(g, GPUSCHED_FOREVER), 0);
	ok(gpusched_holding(g) && g->st->grant_gen >= 1, "holding after ACQUIRE (grant_gen %llu)",
	   (unsigned long long)g->st->grant_gen);
	EXPECT(gpusched_acquire(g, GPUSCHED_FOREVER), -EALREADY);
	EXPECT(gpusched_gate(g, drain, NULL), 0);

	r = gpusched_open(uuid, &g2);
	ok(!r, "a second client opens: %d", r);
	if (r)
		goto out;
	EXPECT(gpusched_acquire(g2, 0), -EAGAIN);
	t0 = ms_now();
	EXPECT(gpusched_acquire(g2, 100000000LL), -ETIMEDOUT);
	ok(ms_now() - t0 >= 95, "the timeout waited %llu ms (100 asked)",
	   (unsigned long long)(ms_now() - t0));
	EXPECT(gpusched_release(g2), -EPERM);
	EXPECT(gpusched_acquire(g2, -5), -EINVAL);

	/* A waiter, then the holder is asked to yield after its slice. */
	ok(!g->st->yield_ns, "no yield asked: yield_ns is 0 (%llu)",
	   (unsigned long long)g->st->yield_ns);
	asked = ns_now();
	pthread_create(&t, NULL, acquire_thread, g2);
	t0 = ms_now();
	while ((g->st->nr_waiting != 1 || !gpusched_yield_requested(g)) &&
	       ms_now() - t0 < 3000)
		usleep(1000);
	ok(gpusched_yield_requested(g), "the holder was asked to yield once someone waited (%llu ms)",
	   (unsigned long long)(ms_now() - t0));
	seen = ns_now();
	ok(g->st->yield_ns >= asked && g->st->yield_ns <= seen,
	   "yield_ns says when (%lld us after the waiter started, %lld us before seen)",
	   (long long)(g->st->yield_ns - asked) / 1000,
	   (long long)(seen - g->st->yield_ns) / 1000);
	ok(g->st->nr_waiting == 1 && g->st->nr_clients == 2,
	   "the page counts 1 waiting of 2 clients (%u of %u)", g->st->nr_waiting,
	   g->st->nr_clients);
	/* The gate drains, yields (queued again at once), and returns
	 * holding once the waiter had its turn and released.
	 */
	drained = 0;
	EXPECT(gpusched_gate(g, drain, NULL), 0);
	ok(drained == 1 && gpusched_holding(g) && !gpusched_yield_requested(g),
	   "gate drained once, yielded and holds again (drained %d)", drained);
	pthread_join(t, &res);
	ok((long)res == 0, "the waiter got the token in between and released it (%ld)",
	   (long)res);
	EXPECT(gpusched_release(g), 0);
	ok(!gpusched_holding(g), "not holding after RELEASE");

	EXPECT(gpusched_info(g, &info), 0);
	ok(info.yields >= 1 && info.grants >= 1, "accounting: %llu grants, %llu yields, %llu overruns, held %llu us",
	   (unsigned long long)info.grants, (unsigned long long)info.yields,
	   (unsigned long long)info.overruns, (unsigned long long)info.held_ns / 1000);

	/*
	 * A waiter that gives up after the holder was asked to yield takes
	 * the request with it: the holder keeps the token past the grace
	 * time (70-token.t gives 2 s) and is not revoked for nobody.
	 */
	EXPECT(gpusched_acquire(g, GPUSCHED_FOREVER), 0);
	pthread_create(&t, NULL, give_up_thread, g2);
	t0 = ms_now();
	while (!gpusched_yield_requested(g) && ms_now() - t0 < 3000)
		usleep(1000);
	ok(gpusched_yield_requested(g), "a waiter comes: the holder is asked to yield (%llu ms)",
	   (unsigned long long)(ms_now() - t0));
	pthread_join(t, &res);
	ok((long)res == -ETIMEDOUT, "the waiter gives up (%ld)", (long)res);
	ok(!gpusched_yield_requested(g) && gpusched_holding(g),
	   "the waiter gone, the request is withdrawn (flags %#x)", st_flags(g));
	usleep(2500000);
	ok(gpusched_holding(g) && !(st_flags(g) & GPUSCHED_ST_REVOKED),
	   "not revoked after the grace time with nobody waiting (flags %#x)",
	   st_flags(g));
	EXPECT(gpusched_release(g), 0);
	EXPECT(gpusched_info(g, &info), 0);
	ok(info.overruns == 0, "no overrun (%llu)", (unsigned long long)info.overruns);

	/*
	 * A waiter that says when its work comes (GPUSCHED_ACQUIRE_DUE): the
	 * holder's page says when, beside when it was asked; 0 before.
	 */
	EXPECT(gpusched_acquire(g, GPUSCHED_FOREVER), 0);
	ok(!g->st->yield_due_ns, "no yield asked: yield_due_ns is 0 (%llu)",
	   (unsigned long long)g->st->yield_due_ns);
	pthread_create(&t, NULL, due_thread, g2);
	t0 = ms_now();
	while (!gpusched_yield_requested(g) && ms_now() - t0 < 3000)
		usleep(1000);
	seen = ns_now();
	ok(gpusched_yield_requested(g) &&
	   g->st->yield_due_ns >= due_asked + DUE_US * 1000ull &&
	   g->st->yield_due_ns <= seen + DUE_US * 1000ull,
	   "yield_due_ns says when the waiter's work comes (%lld us after it asked; %u asked)",
	   (long long)(g->st->yield_due_ns - due_asked) / 1000, DUE_US);
	EXPECT(gpusched_gate(g, NULL, NULL), 0);
	pthread_join(t, &res);
	ok((long)res == 0 && gpusched_holding(g) && !g->st->yield_due_ns,
	   "granted in between; holding again, yield_due_ns 0 (%ld, %llu)",
	   (long)res, (unsigned long long)g->st->yield_due_ns);
	EXPECT(gpusched_release(g), 0);
	ok(g2->st->features & GPUSCHED_FEAT_DUE,
	   "the service says it takes GPUSCHED_ACQUIRE_DUE (features %#x)",
	   g2->st->features);

	/*
	 * GPU time: sent with the next call, taken even by a RELEASE that
	 * has nothing to give back, and charged to the last grant as the
	 * larger of its held time and the GPU time.
	 */
	{
		unsigned long long gpu0, held0;

		EXPECT(g->be->call(g, GPUSCHED_IOC_GET_INFO, &ci), 0);
		ok(ci.abi_version == GPUSCHED_ABI_VERSION &&
		   (ci.features & GPUSCHED_FEAT_GPU_TIME),
		   "GET_INFO: ABI %u, features %#x", ci.abi_version, ci.features);
		gpu0 = ci.gpu_ns;
		held0 = ci.held_ns;
		/* A client's reports stay within the time since it attached:
		 * these and the 5 ms below.
		 */
		usleep(600000);
		gs_report_gpu(g, 500000000ull);
		EXPECT(gpusched_release(g), -EPERM);
		EXPECT(g->be->call(g, GPUSCHED_IOC_GET_INFO, &ci), 0);
		ok(ci.gpu_ns == gpu0 + 500000000ull &&
		   ci.held_ns > held0 + 400000000ull &&
		   ci.held_ns <= held0 + 500000000ull &&
		   !atomic_load(&g->gpu_pending_ns),
		   "500 ms of GPU time reported: gpu_ns +%llu, held_ns +%llu, %llu pending",
		   (unsigned long long)(ci.gpu_ns - gpu0),
		   (unsigned long long)(ci.held_ns - held0),
		   (unsigned long long)atomic_load(&g->gpu_pending_ns));
	}

	/*
	 * GPU time taken back (gs_unreport_gpu()) while a call carries the
	 * report out is taken only from what is still pending: the call's
	 * backend takes it back at the moment it is out. And a report the
	 * service never got (the service gone) is pending again.
	 */
	{
		unsigned long long gpu0;

		EXPECT(g->be->call(g, GPUSCHED_IOC_GET_INFO, &ci), 0);
		gpu0 = ci.gpu_ns;
		real_be = g->be;
		hook_be = *real_be;
		hook_be.call = hooked_call;
		g->be = &hook_be;
		hook_g = g;
		hook_unreport = 5000000;
		gs_report_gpu(g, 3000000);
		EXPECT(gpusched_release(g), -EPERM);
		ok(hook_calls == 1 && !atomic_load(&g->gpu_pending_ns),
		   "5 ms taken back while 3 ms were out: %llu pending (%d call)",
		   (unsigned long long)atomic_load(&g->gpu_pending_ns),
		   hook_calls);
		hook_unreport = 0;
		hook_fail = -ENOTCONN;
		gs_report_gpu(g, 2000000);
		EXPECT(gpusched_release(g), -ENOTCONN);
		ok(atomic_load(&g->gpu_pending_ns) == 2000000,
		   "2 ms sent to a service gone: %llu pending again",
		   (unsigned long long)atomic_load(&g->gpu_pending_ns));
		hook_fail = 0;
		g->be = real_be;
		EXPECT(gpusched_release(g), -EPERM);
		EXPECT(g->be->call(g, GPUSCHED_IOC_GET_INFO, &ci), 0);
		ok(ci.gpu_ns == gpu0 + 5000000 &&
		   !atomic_load(&g->gpu_pending_ns),
		   "the service was charged 3 ms, then the 2 ms: gpu_ns +%llu, %llu pending",
		   (unsigned long long)(ci.gpu_ns - gpu0),
		   (unsigned long long)atomic_load(&g->gpu_pending_ns));
	}

	/*
	 * NUDGE: never waits or queues; only the latency class, only while
	 * another client holds; the holder sees when on its page and is not
	 * asked to yield, so no grace time runs.
	 */
	ok(gs_nudge_supported(g2) && (g2->st->features & GPUSCHED_FEAT_NUDGE),
	   "the service says it takes GPUSCHED_ACQUIRE_NUDGE (features %#x)",
	   g2->st->features);
	EXPECT(gs_nudge(g2, 0), -EPERM);	/* normal class */
	EXPECT(gpusched_set_params(g2, GPUSCHED_KEEP, GPUSCHED_LATENCY,
				   GPUSCHED_KEEP), 0);
	EXPECT(gs_nudge(g2, 0), -EALREADY);	/* nobody holds */
	aq.flags = GPUSCHED_ACQUIRE_NUDGE | GPUSCHED_ACQUIRE_NONBLOCK;
	EXPECT(g2->be->call(g2, GPUSCHED_IOC_ACQUIRE, &aq), -EINVAL);
	aq.flags = GPUSCHED_ACQUIRE_NUDGE;
	EXPECT(g2->be->call(g2, GPUSCHED_IOC_YIELD, &aq), -EINVAL);
	aq.flags = 0;
	EXPECT(gpusched_acquire(g, GPUSCHED_FOREVER), 0);
	{
		uint64_t before = g->st->nudge_ns, at = ns_now();

		EXPECT(gs_nudge(g2, 0), 0);
		ok(g->st->nudge_ns >= at && g->st->nudge_ns <= ns_now() &&
		   g->st->nudge_ns != before,
		   "the holder's page says when it was nudged (%lld us after the call began)",
		   (long long)(g->st->nudge_ns - at) / 1000);
		ok(gpusched_holding(g) && !gpusched_yield_requested(g) &&
		   !(g2->st->flags & GPUSCHED_ST_HOLDING),
		   "nudged: the holder keeps the token and is not asked to yield (flags %#x)",
		   st_flags(g));
		EXPECT(gpusched_info(g2, &info), 0);
		ok(info.state == GPUSCHED_STATE_IDLE,
		   "the nudger is not queued (state %u)", info.state);
	}
	/*
	 * A nudge's age: the page says when the nudging work was launched,
	 * 500 us before the call here, give or take the call's own time; a
	 * second nudge for the same launch still changes the page. After the
	 * nudge above by more than that: the page never goes back.
	 */
	usleep(2000);
	ok(g2->st->features & GPUSCHED_FEAT_NUDGE_AGE,
	   "the service takes a nudge's age (features %#x)", g2->st->features);
	{
		uint64_t t0 = ns_now(), at = t0 - 500000, t1, was;

		EXPECT(gs_nudge(g2, at), 0);
		t1 = ns_now();
		was = g->st->nudge_ns;
		ok(was >= at && was <= at + (t1 - t0),
		   "nudged for work launched 500 us before: the page says %lld us after that launch (the call took %lld us)",
		   (long long)(was - at) / 1000, (long long)(t1 - t0) / 1000);
		EXPECT(gs_nudge(g2, at), 0);
		ok(g->st->nudge_ns > was && g->st->nudge_ns <= ns_now(),
		   "a second nudge for the same launch moves the page on (%lld ns)",
		   (long long)(g->st->nudge_ns - was));
		aq.age_ns = 1000;
		EXPECT(g2->be->call(g2, GPUSCHED_IOC_ACQUIRE, &aq), -EINVAL);
		aq.age_ns = 0;
	}
	/*
	 * NUDGE_DONE: the client that nudged last says its work has ended;
	 * the holder's page answers that nudge (nudge_done_ns equal to
	 * nudge_ns), once. Only the latency class may (below).
	 */
	ok(g2->st->features & GPUSCHED_FEAT_NUDGE_DONE,
	   "the service takes GPUSCHED_ACQUIRE_NUDGE_DONE (features %#x)",
	   g2->st->features);
	ok(g->st->nudge_done_ns != g->st->nudge_ns,
	   "the holder's page: the last nudge not answered yet (nudge_done_ns %llu, nudge_ns %llu)",
	   (unsigned long long)g->st->nudge_done_ns,
	   (unsigned long long)g->st->nudge_ns);
	EXPECT(gs_nudge_done(g2), 0);
	ok(g->st->nudge_done_ns == g->st->nudge_ns,
	   "the holder's page answers the last nudge (nudge_done_ns %llu, nudge_ns %llu)",
	   (unsigned long long)g->st->nudge_done_ns,
	   (unsigned long long)g->st->nudge_ns);
	EXPECT(gs_nudge_done(g2), -ENOENT);	/* answered already */
	usleep(2500000);
	ok(gpusched_holding(g) && !(st_flags(g) & GPUSCHED_ST_REVOKED),
	   "not revoked after the grace time for a nudge (flags %#x)", st_flags(g));
	EXPECT(gpusched_release(g), 0);
	EXPECT(gpusched_set_params(g2, GPUSCHED_KEEP, GPUSCHED_NORMAL,
				   GPUSCHED_KEEP), 0);
	EXPECT(gs_nudge_done(g2), -EPERM);	/* normal class */

	/* Parameters. */
	EXPECT(gpusched_set_params(g, 0, GPUSCHED_KEEP, GPUSCHED_KEEP), -EINVAL);
	EXPECT(gpusched_set_params(g, GPUSCHED_KEEP, 3, GPUSCHED_KEEP), -EINVAL);
	EXPECT(gpusched_set_params(g, GPUSCHED_KEEP, GPUSCHED_KEEP, 101), -EINVAL);
	EXPECT(gpusched_set_params(g, 50, GPUSCHED_BATCH, 40), 0);
	EXPECT(g->be->call(g, GPUSCHED_IOC_GET_INFO, &ci), 0);
	ok(ci.weight == 50 && ci.sched_class == GPUSCHED_BATCH && ci.cap_pct == 40 &&
	   !memcmp(ci.uuid, uuid, 16) && ci.size == sizeof(ci),
	   "GET_INFO shows weight 50, batch, cap 40 and the uuid");
	if (geteuid() == 0) {
		pid_t pid;
		int st;

		EXPECT(gpusched_set_params(g, 300, GPUSCHED_LATENCY, 0), 0);
		fflush(stdout);
		pid = fork();
		if (pid == 0)
			_exit(unprivileged_child());
		waitpid(pid, &st, 0);
		ok(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		   "unprivileged: may lower its share, not raise it (failed checks 0x%x)",
		   WIFEXITED(st) ? WEXITSTATUS(st) : -1);
		/* The holder's page counts latency-class clients: it keeps
		 * less queued while one may need the GPU at once.
		 */
		EXPECT(gpusched_acquire(g, GPUSCHED_FOREVER), 0);
		ok(g->st->nr_latency == 1, "the holder's page counts 1 latency-class client (%u)",
		   g->st->nr_latency);
		EXPECT(gpusched_set_params(g2, GPUSCHED_KEEP, GPUSCHED_LATENCY, GPUSCHED_KEEP), 0);
		ok(g->st->nr_latency == 2, "and 2 once the other joins the class (%u)",
		   g->st->nr_latency);
		/* Each page says its own class (plus one), at once, waiting
		 * or not: a library learns a class set by the daemon there.
		 */
		ok(g->st->class_plus_one == GPUSCHED_LATENCY + 1 &&
		   g2->st->class_plus_one == GPUSCHED_LATENCY + 1,
		   "both pages say latency class (%u, %u)",
		   g->st->class_plus_one, g2->st->class_plus_one);
		EXPECT(gpusched_set_params(g2, GPUSCHED_KEEP, GPUSCHED_NORMAL, GPUSCHED_KEEP), 0);
		ok(g2->st->class_plus_one == GPUSCHED_NORMAL + 1,
		   "the other's page says normal once it lowered itself (%u)",
		   g2->st->class_plus_one);
		EXPECT(gpusched_set_params(g, GPUSCHED_KEEP, GPUSCHED_BATCH, GPUSCHED_KEEP), 0);
		ok(g->st->nr_latency == 0, "and 0 once both left it (%u)", g->st->nr_latency);
		EXPECT(gpusched_release(g), 0);
	} else {
		tap_skip("privilege checks need root");
	}

	gpusched_close(g2);
out:
	EXPECT(gpusched_close(g), 0);
	return tap_done();
}
