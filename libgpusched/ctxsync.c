// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * cuCtxSynchronize() that a drain can stop waiting for.
 *
 * A drain of work that no event of ours follows (streams not joined:
 * span.c) waits for its context with cuCtxSynchronize(), which has no time
 * limit: a kernel of that work that waits for the host would hold the
 * launch that drains until the kernel ends, and a program whose host ends
 * it only once that launch returns would stop there. So one helper thread
 * of the process makes the call, and the drain waits for it until its
 * grace runs out, as the waits on events do; the call then goes on
 * without it.
 *
 * Requests are numbered; the helper takes the newest request, so one call
 * serves every request for that context made before it started. A request
 * for another context waits until the one asked for is taken. A context
 * that goes (ctx_forget()) waits until no call of the helper's is on it,
 * as the driver's own destroy waits for the context's work anyway.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "interpose.h"

static struct {
	pthread_mutex_t lock;	/* guards all below */
	pthread_cond_t cond;	/* CLOCK_MONOTONIC; any change */
	bool started;		/* the helper runs */
	CUcontext want;		/* asked for, not taken; NULL: none */
	bool want_gone;		/* ... and destroyed since */
	CUcontext busy;		/* in the helper's call; NULL: none */
	uint64_t asked;		/* requests made */
	uint64_t done;		/* the newest served */
	/* The newest call's result (a waiter that wakes after a later call
	 * reads that one's).
	 */
	CUresult r;
} S = { .lock = PTHREAD_MUTEX_INITIALIZER };

static pthread_once_t cond_once = PTHREAD_ONCE_INIT;

static void cond_init(void)
{
	cond_init_mono(&S.cond);
}

/* Wait on S.cond until @until (gs_now_ns()); false: timed out. */
static bool wait_until(uint64_t until)
{
	struct timespec ts = ns_timespec(until);

	return pthread_cond_timedwait(&S.cond, &S.lock, &ts) != ETIMEDOUT;
}

/* cuCtxSynchronize() of @ctx from this thread, none of its own current. */
static CUresult sync_now(CUcontext ctx)
{
	CUstreamCaptureMode mode;
	CUcontext popped;
	bool relaxed;
	CUresult r;

	r = real.cuCtxPushCurrent_v2(ctx);
	if (r != CUDA_SUCCESS)
		return r;
	/* "Unsafe" beside a capture: in relaxed mode (gs_relax()). */
	relaxed = gs_relax(&mode);
	r = real.cuCtxSynchronize();
	gs_unrelax(relaxed, mode);
	real.cuCtxPopCurrent_v2(&popped);
	return r;
}

static void *helper(void *arg)
{
	uint64_t seq;
	CUcontext ctx;
	CUresult r;

	(void)arg;
	pthread_mutex_lock(&S.lock);
	for (;;) {
		while (!S.want)
			pthread_cond_wait(&S.cond, &S.lock);
		ctx = S.want_gone ? NULL : S.want;
		S.busy = ctx;
		seq = S.asked;
		S.want = NULL;
		S.want_gone = false;
		pthread_cond_broadcast(&S.cond);
		pthread_mutex_unlock(&S.lock);

		/* A context destroyed has no work left to wait for. */
		r = ctx ? sync_now(ctx) : CUDA_ERROR_INVALID_CONTEXT;

		pthread_mutex_lock(&S.lock);
		S.busy = NULL;
		S.done = seq;
		S.r = r;
		pthread_cond_broadcast(&S.cond);
	}
	return NULL;
}

/* Start the helper once; caller holds S.lock. */
static bool helper_started_locked(void)
{
	pthread_attr_t a;
	pthread_t t;
	int err;

	if (S.started)
		return true;
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	err = pthread_create(&t, &a, helper, NULL);
	pthread_attr_destroy(&a);
	S.started = !err;
	return S.started;
}

/**
 * ctx_sync_until() - cuCtxSynchronize() of @ctx, waited for until @giveup
 * @ctx: the context (none of the caller's current)
 * @giveup: gs_now_ns() time to stop waiting at
 * @r: the call's result, where it ended in time
 *
 * Return: true where the call ended by @giveup (*@r set), false where the
 * wait was given up (the call goes on). Without a helper thread, the call
 * is made here, with no time limit.
 */
bool ctx_sync_until(CUcontext ctx, uint64_t giveup, CUresult *r)
{
	bool ok = true;
	uint64_t my;

	pthread_once(&cond_once, cond_init);
	pthread_mutex_lock(&S.lock);
	if (!helper_started_locked()) {
		pthread_mutex_unlock(&S.lock);
		*r = sync_now(ctx);
		return true;
	}
	/* Another context's request, not yet taken: ours comes after it. */
	while (ok && S.want && (S.want != ctx || S.want_gone))
		ok = wait_until(giveup) || gs_now_ns() < giveup;
	if (ok) {
		/* A request for @ctx not yet taken is served by a call that
		 * starts after now: ours is the same.
		 */
		if (!S.want) {
			S.want = ctx;
			S.asked++;
			pthread_cond_broadcast(&S.cond);
		}
		my = S.asked;
		while (ok && S.done < my)
			ok = wait_until(giveup) || gs_now_ns() < giveup;
		if (ok)
			*r = S.r;
	}
	pthread_mutex_unlock(&S.lock);
	return ok;
}

/**
 * ctx_sync_forget() - @ctx goes away: wait until the helper has no call on it
 * @ctx: the context about to be destroyed
 *
 * A request for it not yet taken is answered without a call (its handle
 * may name another context by then): the driver's destroy waits for the
 * context's work.
 */
void ctx_sync_forget(CUcontext ctx)
{
	pthread_once(&cond_once, cond_init);
	pthread_mutex_lock(&S.lock);
	if (S.want == ctx)
		S.want_gone = true;
	while (S.busy == ctx)
		pthread_cond_wait(&S.cond, &S.lock);
	pthread_mutex_unlock(&S.lock);
}

/* In a forked child: the helper is the parent's, and so are the requests. */
void ctx_sync_fork_child(void)
{
	pthread_mutex_init(&S.lock, NULL);
	cond_init();
	S.started = false;
	S.want = NULL;
	S.want_gone = false;
	S.busy = NULL;
	S.asked = S.done = 0;
}
