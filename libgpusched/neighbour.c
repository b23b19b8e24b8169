// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A latency-class client and its neighbour: the period the neighbour learns
 * from the client's requests, its queue held back for them, and the
 * client's launches beside the holder.
 */
#include <errno.h>
#include <string.h>

#include "interpose.h"

/*
 * A request of @d's latency-class client at @at, seen at @seen, asking
 * for the token (@asks: a yield to answer) or nudging the holder: predict
 * the next once requests come at a steady period (a probe, an inference
 * server's ticks). Requests of other waiters (the end of our slice) come
 * at other times and break the period, which then is not used until it
 * holds again. queue_bound() then lets our queue grow while the next
 * request is far off and run down to the client's bound when it is due,
 * so that the latency client neither waits for a deep queue nor keeps
 * ours shallow all the time. @at 0 or later than @seen (a service that
 * does not say when): @seen. Called with d->lock held.
 */
static void lat_note(struct gs_dev *d, uint64_t at, uint64_t seen, bool asks)
{
	uint64_t next, was, tol, last;

	if (!gs_config()->latency_predict || dev_sharing(d) != SHARED_LATENCY)
		return;
	if (!at || at > seen)
		at = seen;
	was = atomic_load(&d->lat_next);
	tol = atomic_load(&d->lat_tol);
	last = d->lat.last;
	next = gs_period_note(&d->lat, at);
	/* A request off the predicted time, for GPUSCHED_DEBUG: what breaks
	 * a period (queue_bound() goes by it).
	 */
	if (was && d->lat.last == at && gs_period_off(at, was, tol))
		gs_debug("%s: latency-class %s %+lld us from the predicted time (seen %lld us after it, %lld us after the last)",
			 d->name, asks ? "request" : "nudge",
			 ((long long)at - (long long)was) / 1000,
			 ((long long)seen - (long long)at) / 1000,
			 ((long long)at - (long long)last) / 1000);
	atomic_store(&d->lat_tol, gs_period_tol(d->lat.period));
	atomic_store(&d->lat_asks, asks);
	atomic_store(&d->lat_next, next);
	if (next && d->lat.count == GS_PERIOD_CONFIRM && d->lat.last == at)
		gs_debug("%s: latency-class requests every %llu us",
			 d->name, (unsigned long long)(d->lat.period / 1000));
}

/*
 * Holder of @d's token asked to yield (@fl) while a latency-class client
 * is attached, at @now: note the request (lat_note()). When we were
 * asked; older services do not say: when we saw it. Seen late, the
 * request would look due later than it is, and our queue, ending then,
 * would make the next one wait as long again. Called with d->lock held.
 */
void lat_observe(struct gs_dev *d, const struct gpusched *g,
			uint32_t fl, uint64_t now)
{
	if (YIELD_ASKED(fl))
		lat_note(d, __atomic_load_n(&g->st->yield_ns, __ATOMIC_RELAXED),
			 now, true);
}

/*
 * Holder of @d's token nudged at @at (the service's time, from the page),
 * seen at @now: a latency-class request of one launch, queued beside our
 * work (lat_note()). Called with d->lock held.
 */
void lat_nudged(struct gs_dev *d, uint64_t at, uint64_t now)
{
	if (at)
		lat_note(d, at, now, false);
}

/*
 * Until when the predicted request @next of @d's latency client may still
 * come: requests come late (a host's wake-up), not early, so twice the
 * period's tolerance.
 */
static uint64_t lat_due(const struct gs_dev *d, uint64_t next)
{
	return next + 2 * atomic_load_explicit(&d->lat_tol, memory_order_relaxed);
}

/*
 * How much of our work may be left running when we give the token away
 * (the service's handover_ns): enough to hide the token's way behind it.
 * A latency-class client's request waits for all of it, holding the token
 * meanwhile: to one, no more than GS_LAT_HANDOVER_NS (the token's way).
 */
uint64_t handover_left(struct gs_dev *d)
{
	uint64_t ns = handover_ns(d);

	if (dev_sharing(d) == SHARED_LATENCY && ns > GS_LAT_HANDOVER_NS)
		return GS_LAT_HANDOVER_NS;
	return ns;
}

/*
 * Beside a latency-class client whose next request on @d is predicted
 * (lat_next): from when a wait for our kernels should poll the status page,
 * GS_SPIN_US before that request, so that its yield is answered at once
 * rather than after the kernel we wait for (or a late wake-up); until when,
 * in *@until (lat_due()). 0: no such request, or requests that nudge
 * (lat_asks): they ask no yield, and their kernels run beside ours.
 */
uint64_t lat_watch(struct gs_dev *d, uint64_t now, uint64_t *until)
{
	const struct gs_config *c = gs_config();
	uint64_t next = atomic_load_explicit(&d->lat_next, memory_order_relaxed);

	if (!next || !c->spin_ns || !handover_ns(d) ||
	    !atomic_load_explicit(&d->lat_asks, memory_order_relaxed) ||
	    dev_sharing(d) != SHARED_LATENCY)
		return 0;
	*until = lat_due(d, next);
	if (now >= *until)
		return 0;
	return next > c->spin_ns ? next - c->spin_ns : 1;
}

/*
 * Does a launch of ours on @d, not holding the token, go beside the holder?
 * A latency-class client's, while others share the token. A token cannot
 * preempt a kernel: waiting for it, a request would wait for all of the
 * holder's work in flight, however long its kernels, where the driver's
 * own time-slicing lets a context with work run within a few
 * milliseconds. Beside, the request waits for the shorter of the two: the
 * holder, asked for the token at the same time, stops launching and hands
 * over when its work in flight is done, and meanwhile the driver slices.
 */
bool beside_now(struct gs_dev *d, const struct gpusched *g)
{
	return gs_config()->beside && is_latency(g) && dev_sharing(d) != ALONE &&
	       !(gs_status_flags(g) & GPUSCHED_ST_REVOKED);
}

/*
 * A launch at @t goes beside the holder: note it for the idle thread.
 * True when no note was pending: the caller wakes the idle thread once the
 * launch is queued (GATE_BESIDE_ASK).
 */
bool beside_ask(struct gs_dev *d, uint64_t t)
{
	uint64_t prev = atomic_exchange(&d->beside_last, t), none = 0;
	bool first = !prev || t - prev > idle_wanted(atomic_load(&d->g));

	if (first) {
		atomic_store(&d->beside_was_multi,
			     atomic_exchange(&d->beside_multi, false));
	} else {
		atomic_store(&d->beside_multi, true);
	}
	if (!atomic_compare_exchange_strong(&d->beside_ask, &none, t))
		return false;
	atomic_store(&d->beside_first,
		     first && !atomic_load(&d->beside_was_multi));
	return true;
}

/*
 * A request of ours launched beside the holder (beside_ask). Its first
 * launch nudges the holder (GPUSCHED_FEAT_NUDGE), which lets its queue run
 * out once and launches on, so that the driver runs our work between its
 * kernels with no hand-over. Later launches of the same request, and any
 * where the service cannot nudge, ask for the token: the holder stops
 * launching and hands it over, and our next launches are the token's
 * until we are idle again; the grant is waited for at most
 * GS_BESIDE_WAIT_NS.
 * Called by the idle thread; returns whether to look again by *@next.
 */
bool ask_beside(struct gs_dev *d, uint64_t now, uint64_t *next)
{
	uint64_t t = atomic_load(&d->beside_ask), at;
	struct gpusched *g;
	int err;

	if (!t)
		return false;
	if (pthread_mutex_trylock(&d->lock))
		return true;	/* a launch is in the slow path: it asks */
	g = atomic_load(&d->g);
	if (!g || (gs_status_flags(g) &
		   (GPUSCHED_ST_HOLDING | GPUSCHED_ST_REVOKED))) {
		atomic_store(&d->beside_ask, 0);
		pthread_mutex_unlock(&d->lock);
		return false;
	}
	if (gs_nudge_supported(g) && atomic_load(&d->beside_first)) {
		/*
		 * The first launch of a request (none for longer than we
		 * would keep the token idle), after a request of one launch:
		 * the holder lets its queue run out and launches on, and the
		 * driver runs our work in between. A request that launches
		 * again soon after gets the token for the rest of it instead
		 * (below), and so does the next one from its start: nudged
		 * for each launch, the holder would stop, and the GPU switch
		 * twice, for each.
		 */
		atomic_store(&d->beside_ask, 0);
		err = gs_nudge(g, 0);
		if (!err) {
			STAT_INC(nudges);
			/* Answered when our work ends (answer_nudge()). */
			if (g->features & GPUSCHED_FEAT_NUDGE_DONE)
				atomic_store(&d->nudge_until,
					     now + grace_ns(d));
		} else if (err == -EBUSY)
			STAT_INC(nudge_refusals);	/* the class's budget */
		else if (conn_error(err)) {
			retire_locked(d);
			service_missing(d, err, true);
		}
		pthread_mutex_unlock(&d->lock);
		return false;
	}
	err = gpusched_acquire(g, (int64_t)GS_BESIDE_WAIT_NS);
	at = gs_now_ns();
	if (!err || err == -EALREADY) {
		STAT_INC(beside_grants);
		times_add(&t_grant, at - t);
		dev_unstamp(d);
		d->seen_launches = atomic_load(&d->launches);
		d->seen_at = d->active_at = at;
		atomic_store(&d->beside_ask, 0);
		if (at + GS_YIELD_POLL_NS < *next)
			*next = at + GS_YIELD_POLL_NS;
	} else if (err != -ETIMEDOUT && err != -EINTR && err != -EAGAIN) {
		/* (those: asked again at the next look) */
		if (conn_error(err)) {
			retire_locked(d);
			service_missing(d, err, true);
		} else if (!atomic_exchange(&G.warned_err, true)) {
			gs_log("token acquire on %s failed: %s; launching unscheduled",
			       d->name, strerror(-err));
		}
		atomic_store(&d->beside_ask, 0);
	}
	pthread_mutex_unlock(&d->lock);
	return true;
}

/*
 * Our nudge's work ended: say so (GPUSCHED_ACQUIRE_NUDGE_DONE), so that the
 * holder, which lets its queue run out for that work, launches on at once
 * rather than when its queue has run out: the driver ran our work between
 * its kernels, and the rest of its queue keeps the GPU busy while its
 * next launches come. Looked at every GS_EV_NAP_NS while our work runs,
 * up to the grace time after the nudge, after which the holder's drain has
 * given up anyway; not answered where no event tells our work's end
 * (dev_work_ended()). Called by the idle thread; returns whether to look
 * again by *@next.
 */
bool answer_nudge(struct gs_dev *d, uint64_t now, uint64_t *next)
{
	uint64_t until = atomic_load(&d->nudge_until);
	struct gpusched *g;
	int ended, err;

	if (!until)
		return false;
	/* A launch in the slow path holds the lock: look again as soon. */
	if (pthread_mutex_trylock(&d->lock))
		goto again;
	g = atomic_load(&d->g);
	ended = g ? dev_work_ended(d) : -1;
	if (!ended && now < until) {
		pthread_mutex_unlock(&d->lock);
		goto again;
	}
	atomic_store(&d->nudge_until, 0);
	if (ended > 0) {
		err = gs_nudge_done(g);
		if (!err)
			STAT_INC(nudge_dones);
		else if (conn_error(err)) {
			retire_locked(d);
			service_missing(d, err, true);
		}
	}
	pthread_mutex_unlock(&d->lock);
	return false;
again:
	if (now + GS_EV_NAP_NS < *next)
		*next = now + GS_EV_NAP_NS;
	return true;
}

/*
 * Does @d's latency-class client (us, holding @g's token) give the token
 * back while its last work runs, rather than GS_IDLE_LATENCY_US after that
 * work is done? Once its requests end with their launches: in each of the
 * last GS_LAT_EARLY_AFTER grants, no launch came after our work had run
 * out (lat_dry). A request that waits for its work and then launches
 * again (a result read back in the middle of it) needs the token after
 * its work is done; for one that does not, holding on would leave the GPU
 * idle through that wait and the next holder's wake-up, where given back
 * early the next holder's first kernels queue behind our last ones.
 */
bool lat_early(struct gs_dev *d, const struct gpusched *g)
{
	return is_latency(g) &&
	       atomic_load(&d->lat_ends) >= GS_LAT_EARLY_AFTER;
}

/*
 * The idle thread gave our latency-class token @g on @d back at @now,
 * @early (lat_early()) with @left_ns of our work predicted still to run:
 * count the grant toward lat_early(), and, after an early one, note until
 * when a launch of ours would have been part of the same request (no
 * launch for the idle time, idle_wanted(), after that work). Called with
 * d->lock held.
 */
void lat_released(struct gs_dev *d, const struct gpusched *g, bool early,
		  uint64_t left_ns, uint64_t now)
{
	unsigned int n = atomic_load(&d->lat_ends);

	if (atomic_exchange(&d->lat_dry, false))
		n = 0;
	else if (n < GS_LAT_EARLY_AFTER)
		n++;
	atomic_store(&d->lat_ends, n);
	atomic_store(&d->rel_launches, atomic_load(&d->launches));
	atomic_store(&d->early_until,
		     early ? now + left_ns + idle_wanted(g) : 0);
	if (early)
		STAT_INC(early_releases);
}

/*
 * A launch of ours on @d at @now, not on the token. After an early release
 * (lat_released()), one that comes before our work was done and the idle
 * time more is of the request we took for finished: wait for our work
 * before giving the token back, from the next grant on.
 */
void lat_relaunch(struct gs_dev *d, uint64_t now)
{
	uint64_t until = atomic_load_explicit(&d->early_until,
					      memory_order_relaxed);

	if (!until || !atomic_compare_exchange_strong(&d->early_until, &until, 0))
		return;
	if (now < until) {
		atomic_store(&d->lat_ends, 0);
		STAT_INC(relaunches);
	}
}
