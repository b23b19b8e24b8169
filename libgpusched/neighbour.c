// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A latency-class client and its neighbour: the period learnt from the
 * requests, asking early, holding back, and launching beside the holder
 * when the token is slow to come.
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
 * Holder of @d's token asked to yield (@fl) while a latency-class client
 * is attached: note when, and predict the next request once requests come
 * at a steady period (a probe, an inference server's ticks). Requests of
 * other waiters (the end of our slice) come at other times and break the
 * period, which then is not used until it holds again. queue_bound() then
 * lets our queue grow while the next request is far off and run dry when
 * it is due, so that the latency client neither waits for a deep queue
 * nor keeps ours shallow all the time. Called with d->lock held.
 */
void lat_observe(struct gs_dev *d, const struct gpusched *g,
			uint32_t fl, uint64_t now)
{
	uint64_t at, due, next, was, tol, seen, last;
	struct gpusched_status st;

	if (!gs_config()->latency_predict || !YIELD_ASKED(fl) ||
	    dev_sharing(d) != SHARED_LATENCY)
		return;
	/* When we were asked; older services do not say: when we saw it.
	 * Seen late, the request would look due later than it is, and our
	 * queue, ending then, would make the next one wait as long again.
	 * A waiter that asks ahead says when its request comes (yield_due_ns):
	 * the period is then that of its requests, and our queue may run
	 * until the request rather than until the ask.
	 */
	gs_status_read(g, &st);	/* the two times of one update */
	at = st.yield_ns;
	due = st.yield_due_ns;
	seen = now;
	if (at && at < now)
		now = at;
	if (at && due > at) {
		if (!atomic_exchange(&d->lat_lead, due - at))
			gs_debug("%s: the latency-class client says when its requests come (%llu us after it asks)",
				 d->name, (unsigned long long)((due - at) / 1000));
		now = due;
	} else if (at) {
		atomic_store(&d->lat_lead, 0);
	}
	was = atomic_load(&d->lat_next);
	tol = atomic_load(&d->lat_tol);
	last = d->lat.last;
	if (due > at && at && was && !gs_period_off(due, was, tol))
		atomic_store(&d->lat_hit, due);
	next = gs_period_note(&d->lat, now);
	/* A request off the predicted time, for GPUSCHED_DEBUG: what breaks
	 * a period (queue_bound() goes by it).
	 */
	if (was && d->lat.last == now && gs_period_off(now, was, tol))
		gs_debug("%s: latency-class request %+lld us from the predicted time (seen %lld us after it, yield_ns %s, %lld us after the last)",
			 d->name, ((long long)now - (long long)was) / 1000,
			 ((long long)seen - (long long)now) / 1000,
			 at ? "set" : "0", ((long long)now - (long long)last) / 1000);
	atomic_store(&d->lat_tol, gs_period_tol(d->lat.period));
	atomic_store(&d->lat_next, next);
	if (next && d->lat.count == GS_PERIOD_CONFIRM && d->lat.last == now)
		gs_debug("%s: latency-class requests every %llu us",
			 d->name, (unsigned long long)(d->lat.period / 1000));
}

/*
 * Until when the predicted request @next of @d's latency client may still
 * come: requests come late (a host's wake-up), not early, so twice the
 * period's tolerance.
 */
uint64_t lat_due(const struct gs_dev *d, uint64_t next)
{
	return next + 2 * atomic_load_explicit(&d->lat_tol, memory_order_relaxed);
}

/*
 * Was the request due at @due (yield_due_ns) the one predicted? Only then
 * was our queue bounded to end by it; a request that came off the beat
 * finds a queue as deep as any other time.
 */
static bool lat_expected(struct gs_dev *d, uint64_t due)
{
	uint64_t next = atomic_load_explicit(&d->lat_next, memory_order_relaxed);
	uint64_t tol = atomic_load_explicit(&d->lat_tol, memory_order_relaxed);

	if (due == atomic_load_explicit(&d->lat_hit, memory_order_relaxed))
		return true;	/* noted by lat_observe() already */
	return next && !gs_period_off(due, next, tol);
}

/*
 * How much of our work may be left running when we give the token away
 * (the service's handover_ns): enough to hide the token's way behind it.
 * A latency-class client's request waits for all of it, holding the token
 * meanwhile: to one, no more than GS_LAT_HANDOVER_NS (the token's way).
 * But where it said when its request comes (yield_due_ns), and that
 * request was the one predicted (lat_expected()), our queue was bounded
 * to end by then (queue_bound()): what ends by the request, and
 * GS_LAT_HANDOVER_NS more, may run on, and the token goes at once. A
 * request that came off its beat finds a queue not bounded by it, and
 * gets no more than the token's way.
 */
uint64_t handover_left(struct gs_dev *d)
{
	uint64_t ns = handover_ns(d), due, now;

	if (dev_sharing(d) != SHARED_LATENCY || ns <= GS_LAT_HANDOVER_NS)
		return ns;
	due = dev_yield_due(d);
	now = gs_now_ns();
	if (due <= now + GS_LAT_HANDOVER_NS || !lat_expected(d, due))
		return GS_LAT_HANDOVER_NS;
	due = due - now + GS_LAT_HANDOVER_NS;
	return due < ns ? due : ns;
}

/*
 * Beside a latency-class client whose next request on @d is predicted
 * (lat_next): from when a wait for our kernels should poll the status page,
 * GS_SPIN_US before that request (before its ask, where it asks
 * lat_lead ahead), so that its yield is answered at once rather than after
 * the kernel we wait for (or a late wake-up); until
 * when, in *@until (lat_due()). 0: no such request.
 */
uint64_t lat_watch(struct gs_dev *d, uint64_t now, uint64_t *until)
{
	const struct gs_config *c = gs_config();
	uint64_t next = atomic_load_explicit(&d->lat_next, memory_order_relaxed);
	uint64_t ask;

	if (!next || !c->spin_ns || !handover_ns(d) ||
	    dev_sharing(d) != SHARED_LATENCY)
		return 0;
	*until = lat_due(d, next);
	if (now >= *until)
		return 0;
	ask = next - atomic_load_explicit(&d->lat_lead, memory_order_relaxed);
	return ask > c->spin_ns ? ask - c->spin_ns : 1;
}

/*
 * This process, of the latency class, asks for @d's token at @t for a
 * launch it has to make (the first since it held it, or since the token
 * was asked for early): its own period, for ask_early(). Caller holds
 * d->lock.
 */
void self_note(struct gs_dev *d, uint64_t t)
{
	if (is_latency(atomic_load(&d->g)))
		d->self_next = gs_period_note(&d->self, t);
}

/*
 * The token asked for early is used by our request at @t, or (@t 0) given
 * up for; a request that took the fast path meanwhile said when it came
 * (early_req). Caller holds d->lock.
 */
void early_done(struct gs_dev *d, uint64_t t)
{
	uint64_t req = atomic_exchange(&d->early_req, 0);

	if (req)
		t = req;
	if (t) {
		self_note(d, t);
		STAT_INC(early_hits);
	} else {
		STAT_INC(early_misses);
		gs_debug("%s: no request came for the token asked for early",
			 d->name);
	}
	d->early_until = 0;
	atomic_store(&d->early, false);
}

/*
 * Why a latency-class client asked for the token when it launched at @t
 * rather than ahead of its request (ask_early()), for GPUSCHED_DEBUG=stats:
 * again within a request (the token given back in a gap of it), no period
 * learnt yet, off the beat, or on the beat but not asked ahead. These
 * acquires find a neighbour's queue filled toward the predicted request,
 * not emptied for it. Caller holds d->lock, before self_note().
 */
atomic_ullong *acquire_kind(struct gs_dev *d, uint64_t t)
{
	uint64_t due = d->self_next, tol = gs_period_tol(d->self.period);

	if (d->self.last && t >= d->self.last &&
	    t - d->self.last < GS_PERIOD_BURST_NS)
		return &stats.acq_again;
	if (!due)
		return &stats.acq_unpredicted;
	if (gs_period_off(t, due, tol))
		return &stats.acq_off_beat;
	return &stats.acq_on_beat;
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
 * How far ahead of our request ask_early() asks: where the service passes
 * on when the request comes (GPUSCHED_ACQUIRE_DUE), the holder's work runs
 * until then and asking early costs no GPU time; where it does not, the
 * holder takes the ask for the request and idles the GPU for the lead.
 */
static uint64_t ask_lead(const struct gpusched *g)
{
	const struct gs_config *c = gs_config();

	if (!c->lead_auto)
		return c->lead_ns;
	return 1000ull * (gs_due_supported(g) ? GS_LEAD_DUE_US : GS_LEAD_US);
}

/*
 * As a periodic latency-class client beside others, ask for @d's token
 * ask_lead() before our next request is due, so that the
 * token's way (the holder's answer, the service's hand-over, our wake-up)
 * is behind the request, not on its path. Granted, the token is kept idle
 * for the request (idle_check()) until twice the period's tolerance after
 * it was due, or after the grant if that came later: requests come late,
 * not early. A launch meanwhile waits on d->lock for the grant, as it
 * would have waited for its own. Called by the idle thread; returns
 * whether to look again by *@next.
 */
bool ask_early(struct gs_dev *d, uint64_t now, uint64_t *next)
{
	static __thread bool slack_set;
	const struct gs_config *c = gs_config();
	uint64_t due, at, tol, wait, lead;
	struct gpusched *g;
	uint32_t fl;
	int err;

	if (!c->lead_auto && !c->lead_ns)
		return false;
	if (pthread_mutex_trylock(&d->lock))
		return true;	/* a launch is asking: it gets the token */
	g = atomic_load(&d->g);
	if (!g || !is_latency(g)) {
		pthread_mutex_unlock(&d->lock);
		return false;
	}
	/* Asking ahead of a request by so many microseconds needs wake-ups
	 * to the microsecond, not the default 50 us of slack.
	 */
	if (!slack_set) {
		prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL);
		slack_set = true;
	}
	due = d->self_next;
	fl = gs_status_flags(g);
	/* Not while we hold it, nor before a revoked grant's leftovers are
	 * done (the gate drains them), nor when nobody else would hold it.
	 */
	if (!due || due == d->asked_for || due <= now ||
	    (fl & (GPUSCHED_ST_HOLDING | GPUSCHED_ST_REVOKED)) ||
	    dev_sharing(d) == ALONE) {
		pthread_mutex_unlock(&d->lock);
		return false;
	}
	lead = ask_lead(g);
	if (now + lead < due) {
		if (due - lead < *next)
			*next = due - lead;
		pthread_mutex_unlock(&d->lock);
		return true;
	}
	d->asked_for = due;
	atomic_store(&d->early_req, 0);
	tol = gs_period_tol(d->self.period);
	wait = d->self.period < GS_EARLY_WAIT_NS ? d->self.period : GS_EARLY_WAIT_NS;
	/* Before asking: the status page says the token is ours before the
	 * service's answer wakes us, and a launch in between must not take
	 * the fast path past us (it waits on d->lock, and then is our
	 * request).
	 */
	atomic_store(&d->early, true);
	err = gs_acquire_due(g, (int64_t)wait, (uint32_t)((due - now) / 1000));
	if (!err || err == -EALREADY) {
		at = gs_now_ns();
		STAT_INC(early_asks);
		dev_unstamp(d);
		d->seen_launches = atomic_load(&d->launches);
		d->seen_at = at;
		d->early_until = (at > due ? at : due) + 2 * tol;
		if (at + GS_YIELD_POLL_NS < *next)
			*next = at + GS_YIELD_POLL_NS;
		/* The request saw the token ours before we did, and went. */
		if (atomic_load(&d->early_req))
			early_done(d, 0);
		gs_debug("%s: asked for the token %llu us before our request, granted %lld us before it",
			 d->name, (unsigned long long)((due - now) / 1000),
			 ((long long)due - (long long)at) / 1000);
	} else if (conn_error(err)) {
		retire_locked(d);
		service_missing(d, err, true);
	} else if (err != -ETIMEDOUT && err != -EINTR && err != -EAGAIN &&
		   !atomic_exchange(&G.warned_err, true)) {
		gs_log("token acquire on %s failed: %s; not asking early",
		       d->name, strerror(-err));
	}
	if (!d->early_until)
		atomic_store(&d->early, false);
	pthread_mutex_unlock(&d->lock);
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
 * GS_EARLY_WAIT_NS.
 * Called by the idle thread; returns whether to look again by *@next.
 */
bool ask_beside(struct gs_dev *d, uint64_t now, uint64_t *next)
{
	uint64_t t = atomic_load(&d->beside_ask), at;
	struct gpusched *g;
	int err;

	(void)now;
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
		err = gs_nudge(g);
		if (!err)
			STAT_INC(nudges);
		else if (err == -EBUSY)
			STAT_INC(nudge_refusals);	/* the class's budget */
		else if (conn_error(err)) {
			retire_locked(d);
			service_missing(d, err, true);
		}
		pthread_mutex_unlock(&d->lock);
		return false;
	}
	err = gs_acquire_due(g, (int64_t)GS_EARLY_WAIT_NS, 0);
	at = gs_now_ns();
	if (!err || err == -EALREADY) {
		STAT_INC(beside_grants);
		times_add(&t_grant, at - t);
		dev_unstamp(d);
		d->seen_launches = atomic_load(&d->launches);
		d->seen_at = at;
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
