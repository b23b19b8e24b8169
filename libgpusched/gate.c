// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The gate: the state of a GPU's token for this process, and the slow path
 * of a launch that does not hold it (acquire, drain, yield).
 */
#include <dlfcn.h>
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "interpose.h"

/*
 * Keep launches off @d's token: set draining, then wait for the launches
 * that passed the fast path before it to be queued. Called with d->lock
 * held; the caller clears draining once the token is given away (or kept).
 */
static void stop_launches(struct gs_dev *d)
{
	unsigned int spins = 0;

	atomic_store(&d->draining, true);
	while (atomic_load(&d->launching)) {
		/* Launches in flight are CPU work of microseconds. */
		if (++spins < GS_SPIN_YIELDS) {
			sched_yield();
		} else {
			struct timespec ts = { 0, GS_SPIN_NAP_NS };

			nanosleep(&ts, NULL);
		}
	}
}

/*
 * Stop this process's launches on @d and wait until @left_ns of its work is
 * left (ctx_drain_to()), or, with @answer, a nudge's answer on that page.
 * Called with d->lock held; the caller clears d->draining once the token
 * is given away (or kept).
 */
static void drain_to(struct gs_dev *d, uint64_t left_ns,
		     const struct gpusched *answer)
{
	stop_launches(d);
	/* Joined first: the join completes on the GPU when our work ends,
	 * not when the drain sees it end.
	 */
	for (struct gs_ctx *cs = atomic_load(&d->ctxs); cs; cs = cs->dev_next)
		ctx_join(cs);
	for (struct gs_ctx *cs = atomic_load(&d->ctxs); cs; cs = cs->dev_next)
		ctx_drain_to(cs, left_ns, answer);
	/* The token goes: the next wait spans another's turn, and its time
	 * is no sample of our launches' length.
	 */
	dev_unstamp(d);
	STAT_INC(drains);
}

/*
 * drain_to() all of our work, or, @early, all but the hand-over allowance of
 * it: a yield's drain.
 */
void drain_locked(struct gs_dev *d, bool early)
{
	drain_to(d, early ? handover_left(d) : 0, NULL);
}

/*
 * Nudged (gate_slow()): stop this process's launches on @d and let its
 * queue run out, so that the driver runs the latency-class work queued
 * beside it, or until that work is done (nudge_answered() on our page @g):
 * then the driver has run it already, and the rest of our queue need not
 * run out. Called with d->lock held; the caller clears d->draining.
 */
void drain_nudged_locked(struct gs_dev *d, const struct gpusched *g)
{
	if (nudge_answered(g)) {
		STAT_INC(answered);
		return;
	}
	drain_to(d, 0, g->features & GPUSCHED_FEAT_NUDGE_DONE ? g : NULL);
}

int service_missing(struct gs_dev *d, int err, bool lost)
{
	const struct gs_config *c = gs_config();
	bool closed = c->fail == GS_FAIL_CLOSED;
	const char *then = closed ? "failing launches (GPUSCHED_FAIL=closed)"
				  : "running unscheduled";

	d->mode = DEV_UNSCHED;
	d->retry_at = gs_now_ns() + 1000000000ull;
	if (lost) {
		if (!atomic_exchange(&G.warned_lost, true))
			gs_log("lost the token service of %s (%s); %s",
			       d->name, strerror(-err), then);
	} else if (!atomic_exchange(&G.warned_no_service, true)) {
		if (access(GPUSCHED_DEVICE_PATH, F_OK) && c->backend == GS_BACKEND_AUTO)
			gs_log("no token service: %s is absent and the arbiter at %s: %s; %s",
			       GPUSCHED_DEVICE_PATH, c->arbiter, strerror(-err), then);
		else
			gs_log("no token service for %s (%s): %s; %s",
			       d->name, c->backend == GS_BACKEND_KMOD ||
			       !access(GPUSCHED_DEVICE_PATH, F_OK) ?
			       GPUSCHED_DEVICE_PATH : c->arbiter,
			       strerror(-err), then);
	}
	return closed ? GATE_DENIED : GATE_UNSCHED;
}

static void apply_params(struct gs_dev *d, struct gpusched *g)
{
	const struct gs_config *c = gs_config();
	int err;

	err = gpusched_set_params(g, c->weight, c->sched_class, c->cap_pct);
	if (err && !atomic_exchange(&G.warned_params, true))
		gs_log("GPUSCHED_WEIGHT/CLASS/CAP not applied on %s: %s%s",
		       d->name, strerror(-err), err == -EPERM ?
		       " (without CAP_SYS_NICE a process may only lower its share)" : "");
	gs_debug("attached to %s through %s%s%s", d->name, g->be->name,
		 c->label[0] ? ", label " : "", c->label);
}

/* Wait out the launches of other threads that passed the fast path with
 * the old client, and the allocations using it, then close it.
 */
void retire_locked(struct gs_dev *d)
{
	struct gpusched *g = atomic_exchange(&d->g, NULL);

	while (atomic_load(&d->launching) || atomic_load(&d->mem_users))
		sched_yield();
	if (g)
		gpusched_close(g);
}

bool conn_error(int err)
{
	return err == -ECONNRESET || err == -EPIPE || err == -EPROTO ||
	       err == -ENOTCONN || err == -EBADF || err == -ENODEV;
}

/* We give the token away at @now: how long after we were asked. */
void yield_answered(const struct gpusched *g, uint64_t now)
{
	uint64_t at = __atomic_load_n(&g->st->yield_ns, __ATOMIC_RELAXED);

	if (at && at <= now)
		times_add(&t_answer, now - at);
}

/*
 * Open @d's client if it has none: attach (reporting the GPU's memory),
 * apply the environment's parameters, publish it in d->g. Called with
 * d->lock held, by a launch or by an allocation (mem.c). GATE_RETRY once
 * d->g is set; GATE_UNSCHED or GATE_DENIED without a service (said once,
 * tried again a second later).
 */
int dev_open_locked(struct gs_dev *d)
{
	bool retry = d->mode == DEV_UNSCHED;
	struct gpusched *g;
	int err;

	if (atomic_load(&d->g))
		return GATE_RETRY;
	if (retry && gs_now_ns() < d->retry_at)
		return gs_config()->fail == GS_FAIL_CLOSED ? GATE_DENIED
							   : GATE_UNSCHED;
	err = gs_open(d->uuid, atomic_load(&d->mem_total), &g);
	if (err) {
		/* Said once already; try again in a second. */
		if (retry) {
			d->retry_at = gs_now_ns() + 1000000000ull;
			return gs_config()->fail == GS_FAIL_CLOSED ?
			       GATE_DENIED : GATE_UNSCHED;
		}
		return service_missing(d, err, false);
	}
	if (d->mode == DEV_UNSCHED)
		gs_log("token service of %s is back (%s); scheduling again",
		       d->name, g->be->name);
	apply_params(d, g);
	mem_apply_limit(d, g);
	d->mode = DEV_OPEN;
	/* Before d->g: whoever sees the new client sees its generation. */
	atomic_fetch_add(&d->client_gen, 1);
	atomic_store(&d->g, g);
	return GATE_RETRY;
}

/* The time of the last nudge on @g's page (0: none). */
static uint64_t page_nudge(const struct gpusched *g)
{
	return __atomic_load_n(&g->st->nudge_ns, __ATOMIC_RELAXED);
}

/* Has @d's holder @g been nudged since its queue last ran out for it? */
static bool nudged(struct gs_dev *d, const struct gpusched *g)
{
	return page_nudge(g) != atomic_load_explicit(&d->nudge_seen,
						     memory_order_relaxed);
}

/* A launch found the token not ours. */
static int gate_slow(struct gs_dev *d)
{
	struct gpusched *g;
	uint64_t asked;
	unsigned int cmd;
	uint32_t fl;
	int err, ret = GATE_RETRY;

	pthread_mutex_lock(&d->lock);
	g = atomic_load(&d->g);
	if (!g) {
		ret = dev_open_locked(d);
		if (ret != GATE_RETRY)
			goto out;
		g = atomic_load(&d->g);
	}

	fl = gs_status_flags(g);
	/*
	 * Nudged: a latency-class client's work is queued beside ours. Let
	 * our queue run out, so that the driver switches to that work, then
	 * launch on: by the time it is done our next kernels are queued, and
	 * the driver switches back without the host in between. Or only
	 * until that work is done, where the client says so first
	 * (drain_nudged_locked()): the driver ran it already. Unless our
	 * queue is longer than the service lets us keep beside such a
	 * client (kernels longer than that, one at a time): the driver's
	 * time slice then serves it sooner, and a drain would only idle the
	 * GPU between our kernels.
	 */
	if (HELD_ONLY(fl) && nudged(d, g)) {
		uint64_t at = page_nudge(g);

		lat_nudged(d, at, gs_now_ns());
		if (dev_queued_ns(d) <= latency_queue_ns(d)) {
			drain_nudged_locked(d, g);
			at = page_nudge(g);
			atomic_store(&d->draining, false);
			STAT_INC(nudged);
		}
		atomic_store(&d->nudge_seen, at);
		goto out;
	}
	if (HELD_ONLY(fl))
		goto out;	/* another thread got it for us */
	lat_observe(d, g, fl, gs_now_ns());
	/*
	 * A latency-class holder asked to yield: YIELD would hold this
	 * request until the token came back, past the new holder's work.
	 * Give it back and launch beside the new holder instead; our next
	 * request asks again.
	 */
	if ((fl & GPUSCHED_ST_HOLDING) && !(fl & GPUSCHED_ST_REVOKED) &&
	    beside_now(d, g)) {
		stop_launches(d);
		yield_answered(g, gs_now_ns());
		gpusched_release(g);
		atomic_store(&d->draining, false);
		STAT_INC(beside_yields);
		ret = GATE_BESIDE;
		goto out;
	}
	/* A revoked grant's leftovers must finish before we ask again. */
	if (fl & GPUSCHED_ST_REVOKED)
		STAT_INC(revoked);
	if (fl & (GPUSCHED_ST_HOLDING | GPUSCHED_ST_REVOKED))
		drain_locked(d, !(fl & GPUSCHED_ST_REVOKED));
	cmd = fl & GPUSCHED_ST_HOLDING ? GPUSCHED_IOC_YIELD : GPUSCHED_IOC_ACQUIRE;
	asked = gs_now_ns();
	if (cmd == GPUSCHED_IOC_YIELD)
		yield_answered(g, asked);
	/* EAGAIN: granted and revoked before we ran; queue again. */
	do {
		if (cmd == GPUSCHED_IOC_YIELD)
			err = gpusched_yield(g, GPUSCHED_FOREVER);
		else
			err = gpusched_acquire(g, GPUSCHED_FOREVER);
		if (err == -EAGAIN)
			STAT_INC(revoked);
	} while (err == -EINTR || err == -EAGAIN);
	atomic_store(&d->draining, false);

	if (!err || err == -EALREADY) {
		times_add(&t_grant, gs_now_ns() - asked);
		if (cmd == GPUSCHED_IOC_YIELD)
			STAT_INC(yields);
		else
			STAT_INC(acquires);
		/* Granted after someone else's turn: no wait of ours that
		 * began before it is a sample of our launches' length (the
		 * idle thread may have given the token away while a launching
		 * thread waited, and that thread popped after the drain).
		 */
		if (!err)
			dev_unstamp(d);
		/* Nudges of an earlier grant were for its queue, not ours. */
		atomic_store(&d->nudge_seen, page_nudge(g));
		d->seen_launches = atomic_load(&d->launches);
		d->seen_at = d->active_at = gs_now_ns();
		kick_idle_thread();
	} else if (conn_error(err)) {
		retire_locked(d);
		ret = service_missing(d, err, true);
	} else {
		if (!atomic_exchange(&G.warned_err, true))
			gs_log("token %s on %s failed: %s; launching unscheduled",
			       cmd == GPUSCHED_IOC_YIELD ? "yield" : "acquire",
			       d->name, strerror(-err));
		ret = GATE_UNSCHED;
	}
out:
	pthread_mutex_unlock(&d->lock);
	return ret;
}

/*
 * The gate's state on @d (gate_fsm.h), from the status page of its client
 * @g and this process's own flags. The caller counts itself in
 * d->launching first, so that a drainer either sees it or is seen.
 */
static enum gs_gate_state gate_state(struct gs_dev *d, struct gpusched *g)
{
	uint32_t fl;

	if (!g)
		return GS_GATE_CLOSED;
	if (atomic_load(&d->draining))
		return GS_GATE_DRAINING;
	fl = gs_status_flags(g);
	if (fl & GPUSCHED_ST_REVOKED)
		return GS_GATE_REVOKED;
	if ((fl & GPUSCHED_ST_HOLDING) && (fl & GPUSCHED_ST_YIELD))
		return GS_GATE_YIELDING;
	if (fl & GPUSCHED_ST_HOLDING)
		return nudged(d, g) ? GS_GATE_NUDGED : GS_GATE_HOLDING;
	if (atomic_load(&d->beside_ask))
		return GS_GATE_BESIDE;
	return GS_GATE_IDLE;
}

int gate_enter(struct gs_dev *d)
{
	uint64_t t = 0;	/* when this launch first left the fast path */

	for (;;) {
		enum gs_gate_state s;
		struct gpusched *g;
		int ret;

		atomic_fetch_add(&d->launching, 1);
		g = atomic_load(&d->g);
		s = gate_state(d, g);
		switch (gs_gate_on_launch(s, s == GS_GATE_IDLE && beside_now(d, g))) {
		case GS_LAUNCH_HELD:
			return GATE_HELD;
		case GS_LAUNCH_BESIDE:
			/* Noted for the idle thread, which nudges or asks. */
			atomic_fetch_sub(&d->launching, 1);
			if (!t)
				t = gs_now_ns();
			lat_relaunch(d, t);
			if (beside_ask(d, t))
				return GATE_BESIDE_ASK;
			return GATE_BESIDE;
		case GS_SLOW:
			atomic_fetch_sub(&d->launching, 1);
			if (!t) {
				t = gs_now_ns();
				lat_relaunch(d, t);
			}
			ret = gate_slow(d);
			if (ret != GATE_RETRY)
				return ret;
			continue;
		}
	}
}
