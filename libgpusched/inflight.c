// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Work in flight per context: events of our own after launches, launches
 * timed on the GPU's clock (each kernel until its length is known, then a
 * sample), the queue bounded by that time, and the waits and drains that
 * keep it so. What several streams' work reports is checked in span.c.
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
 * What follows is not our work running back to back (the queue ran dry,
 * the token went away, a fork): no launch-length sample spans it and no
 * end is predicted until an event is seen completing again, or a launch
 * finds nothing of ours queued (queued()). Caller holds cs->lock.
 */
static void ctx_unstamp_locked(struct gs_ctx *cs)
{
	cs->end_ns = 0;
}

/* The same for every context of @d: the token changed hands. */
void dev_unstamp(struct gs_dev *d)
{
	for (struct gs_ctx *cs = atomic_load(&d->ctxs); cs; cs = cs->dev_next) {
		pthread_mutex_lock(&cs->lock);
		ctx_unstamp_locked(cs);
		pthread_mutex_unlock(&cs->lock);
	}
}

static void ctx_pop_locked(struct gs_ctx *cs, unsigned int n);

/*
 * A stream captured in global mode (the default, and PyTorch's) forbids
 * the "potentially unsafe" calls, event queries and waits among them, to
 * every other thread whose mode is global, and to the capturing thread
 * itself: one fails and invalidates the application's capture. The library
 * makes its own in relaxed mode, which captures ignore, and puts the
 * thread's mode back after (it is the application's). The idle thread is
 * relaxed for good (gs_relax_thread()).
 */
static __thread bool tls_relaxed;

/* Relax the calling thread's capture mode: whether it did (*@old: to put
 * back with gs_unrelax()).
 */
bool gs_relax(CUstreamCaptureMode *old)
{
	if (tls_relaxed || !real.cuThreadExchangeStreamCaptureMode)
		return false;
	*old = CU_STREAM_CAPTURE_MODE_RELAXED;
	return real.cuThreadExchangeStreamCaptureMode(old) == CUDA_SUCCESS;
}

void gs_unrelax(bool relaxed, CUstreamCaptureMode old)
{
	if (relaxed)
		real.cuThreadExchangeStreamCaptureMode(&old);
}

/* For a thread of the library's own: relaxed from now on. */
void gs_relax_thread(void)
{
	CUstreamCaptureMode mode;

	if (gs_relax(&mode))
		tls_relaxed = true;
}

/* cuStreamIsCapturing() of @s, the _ptsz flavour with @ptsz, into *@cap. */
CUresult stream_capture(CUstream s, bool ptsz, CUstreamCaptureStatus *cap)
{
	CUresult (*is_capturing)(CUstream, CUstreamCaptureStatus *);

	is_capturing = ptsz ? real.cuStreamIsCapturing_ptsz :
			      real.cuStreamIsCapturing;
	return is_capturing ? is_capturing(s, cap) : CUDA_ERROR_NOT_SUPPORTED;
}

/* cuEventQuery() in relaxed mode (gs_relax()); the caller checked that
 * the driver has it.
 */
CUresult ev_query(CUevent ev)
{
	CUstreamCaptureMode old;
	bool relaxed = gs_relax(&old);
	CUresult r = real.cuEventQuery(ev);

	gs_unrelax(relaxed, old);
	return r;
}

/* Nothing queued is ours to wait for any more. Caller holds cs->lock. */
void ctx_empty_locked(struct gs_ctx *cs)
{
	cs->done = cs->launches;
	cs->done_cum = cs->cum_ns;
	cs->anchor_ok = false;
	/* Reported (ctx_sync()) or not ours to report (fork_child()). */
	cs->span_open = false;
	cs->span_ns = 0;
	cs->head_seq += cs->nr;
	cs->nr = 0;
	cs->prev_ok = false;
	ctx_unstamp_locked(cs);
}

static bool ev_sync(CUevent ev, uint64_t most, uint64_t until);
static int wait_end(struct gs_ctx *cs, CUevent ev, uint64_t end,
		    uint64_t wake, const struct gs_est *est, uint64_t giveup,
		    bool yield);
static int wait_answer(CUevent ev, uint64_t end, const struct gs_est *est,
		       uint64_t giveup, const struct gpusched *answer);

/*
 * The newest event of @cs if it follows all of its launches, all on one
 * stream, or is a join (join_locked(): its stream waited for every
 * stream launched on since the join before it, which waited for the
 * earlier ones), none unjoined since the context's work was last seen
 * to end: its completion is the end of all our work, and a wait for it
 * can give up. NULL otherwise. Caller holds cs->lock.
 */
static CUevent ctx_last_of_all(struct gs_ctx *cs)
{
	unsigned int last = ring_newest(cs);

	if (!cs->nr || !real.cuEventQuery || cs->ev_mark[last] != cs->launches)
		return NULL;
	if ((cs->ev_kind[last] & EVK_JOIN) && !cs->unjoined)
		return cs->ev[last];
	for (unsigned int k = 0; k < cs->nr; k++)
		if (cs->ev_stream[ring_mod(cs, cs->head + k)] != cs->ev_stream[last])
			return NULL;
	return cs->ev[last];
}

/*
 * Has all of @cs's work been seen to end? Every launch followed by an
 * event seen completing (popped), all on one stream: nothing of ours is
 * left on the GPU, and a drain has nothing to wait for. An event on one
 * of several streams says nothing of the others' work. Caller holds
 * cs->lock.
 */
static bool ctx_seen_done_locked(const struct gs_ctx *cs)
{
	return !cs->nr && cs->done == cs->launches && !cs->multi &&
	       !cs->strm_over;
}

/*
 * Is the oldest of @cs's work one that a wait gave up on (cs->stuck)? A
 * kernel that waits for the host ends only once the program goes on, and
 * each wait for it would last the whole grace time again: a drain (after
 * a revocation, say) hands over with it running at once. Caller holds
 * cs->lock.
 */
static bool head_stuck_locked(const struct gs_ctx *cs)
{
	return cs->nr && cs->stuck == cs->head_seq + 1;
}

/*
 * A drain for @cs's work gave up (drain_until()): the oldest of it, if it
 * has not ended, is waited for no more (head_stuck_locked(), throttle()).
 * Caller holds cs->lock.
 */
static void ctx_stuck_locked(struct gs_ctx *cs)
{
	if (cs->nr && ev_query(cs->ev[cs->head]) == CUDA_ERROR_NOT_READY)
		cs->stuck = cs->head_seq + 1;
}

/*
 * Wait until none of @cs's work is left, or until @giveup (drain_until()).
 * None, where all of it was seen to end (ctx_seen_done_locked(): a nudged
 * holder whose program waited for its last kernel has popped that
 * kernel's event by then, and a cuCtxSynchronize() would cost its next
 * launch microseconds for nothing). Where one event marks the end of it
 * all (ctx_last_of_all()), a wait for that event, which can end there,
 * the work still running; else cuCtxSynchronize(), made by a helper
 * thread that this wait can leave there too (ctxsync.c). The GPU
 * has nothing of ours to run from that event on, and a nudged holder's
 * next kernels, a drained holder's hand-over wait for this wait to see
 * it: where the end of our work is predicted, nap toward it and poll from
 * GS_SPIN_US before it (wait_end()), rather than nap up to
 * GS_EV_NAP_MAX_NS past it. With @answer, the holder's status page of a
 * drain for a nudge: until the nudging client says that its work ended
 * (wait_answer()), too.
 */
static void ctx_sync(struct gs_ctx *cs, uint64_t giveup,
		     const struct gpusched *answer)
{
	const struct gs_config *c = gs_config();
	uint64_t end = 0;
	struct gs_est est;
	unsigned int life;
	bool seen, ended;
	CUcontext ctx;
	CUevent last;
	CUresult r;

	if (atomic_load(&cs->dead))
		return;
	pthread_mutex_lock(&cs->lock);
	if (head_stuck_locked(cs)) {
		pthread_mutex_unlock(&cs->lock);
		return;
	}
	last = ctx_last_of_all(cs);
	ended = !last && ctx_seen_done_locked(cs);
	ctx = cs->ctx;
	life = cs->life;
	est = cs->est;
	if (last && est.mean && c->spin_ns)
		end = cs->end_ns;
	pthread_mutex_unlock(&cs->lock);
	r = CUDA_SUCCESS;
	if (ended)
		goto done;
	if (last) {
		int w;

		if (answer)
			w = wait_answer(last, end, &est, giveup, answer);
		else if (end)
			w = wait_end(cs, last, end, end - c->spin_ns, &est,
				     giveup, false);
		else
			w = ev_sync(last, GS_EV_NAP_MAX_NS, giveup) ?
			    DRY_SEEN : DRY_STUCK;
		if (w == DRY_ANSWERED) {
			/* Still running: nothing of it is popped. */
			STAT_INC(answered);
			return;
		}
		seen = w == DRY_SEEN;
		if (!seen) {
			STAT_INC(stuck_waits);
			pthread_mutex_lock(&cs->lock);
			if (cs->life == life)
				ctx_stuck_locked(cs);
			pthread_mutex_unlock(&cs->lock);
			return;
		}
		goto done;
	}
	if (!real.cuCtxPushCurrent_v2 || !real.cuCtxPopCurrent_v2 ||
	    !real.cuCtxSynchronize)
		return;
	/* Given up on at @giveup as the event waits are (ctxsync.c). */
	if (!ctx_sync_until(ctx, giveup, &r)) {
		STAT_INC(stuck_waits);
		pthread_mutex_lock(&cs->lock);
		if (cs->life == life)
			ctx_stuck_locked(cs);
		pthread_mutex_unlock(&cs->lock);
		return;
	}
	if (r == CUDA_ERROR_INVALID_CONTEXT)
		return;		/* destroyed meanwhile (ctx_sync_forget()) */
	if (r != CUDA_SUCCESS)
		gs_debug("cuCtxSynchronize of context %p: error %d",
			 (void *)ctx, r);
done:
	pthread_mutex_lock(&cs->lock);
	if (cs->life != life) {		/* the record serves another context */
		pthread_mutex_unlock(&cs->lock);
		return;
	}
	if (r == CUDA_SUCCESS && cs->nr)
		ctx_pop_locked(cs, cs->nr);	/* all done: frames too */
	if (r == CUDA_SUCCESS && !last)
		cs->unjoined = false;	/* every stream's, joined or not */
	/* and the launches after the last event */
	if (r == CUDA_SUCCESS && cs->cum_ns > cs->done_cum)
		ctx_report_locked(cs, cs->cum_ns - cs->done_cum);
	span_release_locked(cs);	/* no join left to check it */
	ctx_empty_locked(cs);	/* the queue ran dry */
	pthread_mutex_unlock(&cs->lock);
}

static void ctx_reap_locked(struct gs_ctx *cs, unsigned int upto);

/**
 * dev_work_ended() - has all of this process's work on @d ended?
 * @d: the GPU
 *
 * For a latency-class client's answer to its nudge (answer_nudge()): each
 * context's work seen to end, or its event after all of it completed.
 *
 * Return: 1 if so, 0 if some of it runs, -1 if no event tells (work on
 * several streams not joined, a context without events).
 */
int dev_work_ended(struct gs_dev *d)
{
	for (struct gs_ctx *cs = atomic_load(&d->ctxs); cs; cs = cs->dev_next) {
		CUevent last;
		int ended = 1;

		if (atomic_load(&cs->dead))
			continue;
		/* Queried under the lock, as ctx_busy() does: the context
		 * is not forgotten, and its events destroyed, meanwhile.
		 */
		pthread_mutex_lock(&cs->lock);
		if (!ctx_seen_done_locked(cs)) {
			last = ctx_last_of_all(cs);
			if (!last)
				ended = -1;
			else if (ev_query(last) == CUDA_ERROR_NOT_READY)
				ended = 0;
		}
		pthread_mutex_unlock(&cs->lock);
		if (ended < 1)
			return ended;
	}
	return 1;
}

/*
 * Is a thread waiting for room in @cs's queue, or more than @left_ns of our
 * work predicted unfinished on the GPU (0: any of it running, its streams'
 * newest launches marked for it: strm_running_locked())? Where no length
 * is measured yet, any of it running.
 */
bool ctx_busy(struct gs_ctx *cs, uint64_t left_ns)
{
	bool busy;

	if (atomic_load(&cs->dead))
		return false;
	pthread_mutex_lock(&cs->lock);
	busy = cs->throttled > 0;
	if (!busy && left_ns && cs->est.mean && real.cuEventQuery) {
		ctx_reap_locked(cs, cs->nr);
		busy = queued_ns(cs) > left_ns;
	} else if (!busy && real.cuEventQuery) {
		unsigned int last = ring_newest(cs);

		/* The ring's newest event: a join waits for every stream's
		 * work before it, an anchor for nothing. Then each stream's
		 * newest launch.
		 */
		busy = (cs->nr && !(cs->ev_kind[last] & EVK_ANCHOR) &&
			ev_query(cs->ev[last]) == CUDA_ERROR_NOT_READY) ||
		       strm_running_locked(cs);
	}
	pthread_mutex_unlock(&cs->lock);
	return busy;
}

/*
 * Had all of @cs's work completed before the launch being made: is the
 * event after its newest launch done? A latency-class client records one
 * after every launch (queued()). Caller holds cs->lock.
 */
static bool ctx_dry_locked(struct gs_ctx *cs)
{
	unsigned int last;

	if (!cs->launches || !real.cuEventQuery)
		return false;
	if (!cs->nr)
		return cs->done == cs->launches;
	last = ring_newest(cs);
	return cs->ev_mark[last] == cs->launches &&
	       ev_query(cs->ev[last]) == CUDA_SUCCESS;
}

/*
 * A latency-class process's launch on @cs's token, about to be made (the
 * caller has checked the class): if it is not its request's first (one
 * since the token last went back), note whether it found all of that work
 * done (lat_released()): a request that launches again after its work ran
 * out needs the token once that work is done. Caller holds cs->lock.
 */
void lat_held_launch_locked(struct gs_ctx *cs)
{
	struct gs_dev *d = cs->d;

	if (atomic_load(&d->launches) != atomic_load(&d->rel_launches) &&
	    ctx_dry_locked(cs))
		atomic_store(&d->lat_dry, true);
}

/* @key's entry in @cs's table of lengths (NULL: none). Caller holds cs->lock. */
static struct gs_klen *klen_of(struct gs_ctx *cs, uint64_t key)
{
	return key ? gs_klen_find(cs->klen, GS_KLEN, GS_KLEN_PROBE, key, false)
		   : NULL;
}

/* @ns of lengths timed on one stream each, as the GPU's time (cs->scale). */
static uint64_t scaled(const struct gs_ctx *cs, uint64_t ns)
{
	return cs->scale ? ns * cs->scale / GS_SCALE_ONE : ns;
}

/* What a launch whose entry is @k (klen_of()) is measured by: its
 * kernel's lengths, else (none yet) the context's.
 */
static const struct gs_est *klen_est(const struct gs_ctx *cs,
				     const struct gs_klen *k)
{
	return k && k->len.mean ? &k->len : &cs->est;
}

/* The GPU time predicted for that launch. */
static uint64_t klen_ns(const struct gs_ctx *cs, const struct gs_klen *k)
{
	return scaled(cs, klen_est(cs, k)->mean);
}

/* The least GPU time likely for that launch (gs_est_least()). */
static uint64_t klen_least(const struct gs_ctx *cs, const struct gs_klen *k)
{
	return scaled(cs, gs_est_least(klen_est(cs, k)));
}

/* The GPU time predicted for a launch of @key. Caller holds cs->lock. */
uint64_t launch_ns(struct gs_ctx *cs, uint64_t key)
{
	return klen_ns(cs, klen_of(cs, key));
}

/* Our GPU time queued after cs->done, predicted. Caller holds cs->lock. */
uint64_t queued_ns(struct gs_ctx *cs)
{
	return cs->cum_ns - cs->done_cum;
}

/* The same after event @slot. */
static uint64_t work_after(struct gs_ctx *cs, unsigned int slot)
{
	return cs->cum_ns - cs->ev_cum[slot];
}

/* The least GPU time likely after event @slot (klen_least()). */
static uint64_t least_after(struct gs_ctx *cs, unsigned int slot)
{
	return cs->cum_least - cs->ev_least[slot];
}

/*
 * Does the event recorded in @slot take timestamps? Popped, it may be the
 * anchor, its handle out of the ring (ctx_span_locked()). Caller holds
 * cs->lock.
 */
bool ev_timed(const struct gs_ctx *cs, unsigned int slot)
{
	return cs->ev[slot] == cs->ev_t[slot] ||
	       (cs->anchor_ok && cs->ev[slot] == cs->anchor_ev);
}

/*
 * Look at @ev, napping between looks (gs_nap_next(): GS_EV_NAP_NS doubling
 * up to @most before @near, GS_EV_NAP_NS from @near on, where it may
 * complete any time: a wake-up then comes that much after the event at
 * most, not a long nap's worth, and the GPU waits that long for the next
 * launch), until it completes (true) or @until passes (false).
 */
static bool ev_nap_most(CUevent ev, uint64_t near, uint64_t until,
			uint64_t most)
{
	struct gs_nap nap = { GS_EV_NAP_NS, most, 0 };
	uint64_t now;

	while (ev_query(ev) == CUDA_ERROR_NOT_READY) {
		now = gs_now_ns();
		if (now >= until)
			return false;
		sleep_until(gs_nap_next(&nap, now, near, until));
	}
	return true;
}

/* ev_nap_most() with naps of GS_EV_NAP_MAX_NS at most. */
static bool ev_nap_until(CUevent ev, uint64_t near, uint64_t until)
{
	return ev_nap_most(ev, near, until, GS_EV_NAP_MAX_NS);
}

/*
 * Wait for @ev to complete, naps of @most at most, until @until: whether
 * it completed. None of our events is blocking sync (see ctx_lookup()),
 * and cuEventSynchronize() would spin a CPU on them: so nap between looks
 * (ev_nap_most()). A short wait costs a few wake-ups and ends about as
 * late as a blocking one would, a long one a few thousand wake-ups a
 * second. A driver without cuEventQuery leaves only cuEventSynchronize(),
 * which cannot stop at @until.
 */
static bool ev_sync(CUevent ev, uint64_t most, uint64_t until)
{
	CUstreamCaptureMode mode;
	bool relaxed;

	if (real.cuEventQuery)
		return ev_nap_most(ev, UINT64_MAX, until, most);
	relaxed = gs_relax(&mode);
	real.cuEventSynchronize(ev);
	gs_unrelax(relaxed, mode);
	return true;
}

/*
 * cuEventElapsedTime() from @from to @to into *@ms, in relaxed mode as the
 * queries are (gs_relax()): it reads two events.
 */
CUresult ev_elapsed(CUevent from, CUevent to, float *ms)
{
	CUstreamCaptureMode mode;
	bool relaxed;
	CUresult r;

	if (!real.cuEventElapsedTime)
		return CUDA_ERROR_NOT_SUPPORTED;
	relaxed = gs_relax(&mode);
	r = real.cuEventElapsedTime(ms, from, to);
	gs_unrelax(relaxed, mode);
	return r;
}

/*
 * Event @slot completed, the one before it too (cs->prev): if the two frame
 * one kernel (ev_key), the GPU time between them is a sample of that
 * kernel's. Caller holds cs->lock.
 */
static void klen_sample(struct gs_ctx *cs, unsigned int slot)
{
	uint64_t ns;
	float ms;

	if (!cs->ev_key[slot] || !cs->prev_ok ||
	    !ev_timed(cs, cs->prev) || !ev_timed(cs, slot) ||
	    cs->ev_mark[cs->prev] + 1 != cs->ev_mark[slot] ||
	    ev_elapsed(cs->ev[cs->prev], cs->ev[slot], &ms) != CUDA_SUCCESS)
		return;
	ns = gs_elapsed_ns(ms);
	if (!gs_frame_holds(ns, cs->ev_away[slot], GS_FRAME_PART)) {
		STAT_INC(late_frames);
		return;
	}
	gs_est_add(&gs_klen_find(cs->klen, GS_KLEN, GS_KLEN_PROBE,
				 cs->ev_key[slot], true)->len, ns);
	gs_est_add(&cs->est, ns);
	cs->samples++;
	STAT_INC(timed);
}

/* The oldest @n events of @cs completed: pop them. Caller holds cs->lock. */
static void ctx_pop_locked(struct gs_ctx *cs, unsigned int n)
{
	unsigned int last = ring_mod(cs, cs->head + n - 1);
	uint64_t cum = cs->done_cum;

	for (unsigned int i = 0; i < n; i++) {
		unsigned int slot = ring_mod(cs, cs->head + i);

		/* What ran, in the GPU-timed lengths of what was launched
		 * (one launch in a few is timed away from a latency-class
		 * client), event by event, then checked against the GPU's
		 * clock.
		 */
		if (cs->ev_cum[slot] > cum) {
			ctx_report_locked(cs, cs->ev_cum[slot] - cum);
			cum = cs->ev_cum[slot];
		}
		klen_sample(cs, slot);
		if (ev_timed(cs, slot))
			ctx_span_locked(cs, slot);
		if (cs->ev_kind[slot] & EVK_RELEASE)
			span_release_locked(cs);
		cs->prev = slot;
		cs->prev_ok = true;
	}
	cs->done = cs->ev_mark[last];
	cs->done_cum = cs->ev_cum[last];
	cs->head = ring_mod(cs, last + 1);
	cs->head_seq += n;
	cs->nr -= n;
}

/*
 * Until when a drain for a yield starting @now may wait for our work: the
 * grace time the service gives a holder to yield, after which it revokes
 * the token anyway. A kernel that waits for the host (a flag the program
 * sets after its next launch) never ends while the drain holds that
 * launch up: the drain stops there, and the program goes on.
 */
static uint64_t drain_until(struct gs_ctx *cs, uint64_t now)
{
	uint64_t grace = grace_ns(cs->d);

	return grace > UINT64_MAX - now ? UINT64_MAX : now + grace;
}

/*
 * Wait until about @left_ns of @cs's queued work is left unfinished: the
 * early hand-over. The token is then given away while our last kernels
 * run, so that the next holder's wake-up and first launches overlap them
 * and its kernels are queued by the time ours end (the GPU switches
 * contexts once ours has no work). The end is predicted from the newest
 * event with more than @left_ns of work after it, seen completing, and
 * the measured GPU time per launch. Without a measurement, or with no
 * event to go by: wait for everything (ctx_sync). No wait lasts past
 * drain_until().
 */
void ctx_drain_to(struct gs_ctx *cs, uint64_t left_ns,
		  const struct gpusched *answer)
{
	uint64_t giveup = drain_until(cs, gs_now_ns()), until = 0, near;
	CUevent last = NULL;

	pthread_mutex_lock(&cs->lock);
	if (head_stuck_locked(cs)) {
		pthread_mutex_unlock(&cs->lock);
		return;
	}
	while (cs->est.mean && left_ns && !atomic_load(&cs->dead)) {
		uint64_t seq = cs->head_seq, now, after;
		unsigned int i = 0, slot, life;
		bool done;
		CUevent ev;

		if (queued_ns(cs) <= left_ns) {
			pthread_mutex_unlock(&cs->lock);
			return;
		}
		if (!cs->nr)
			break;
		/* One event left: it is the end of our work, and waiting for
		 * it would drain fully. Predict from the last one seen
		 * completing instead, as wait_dry() does.
		 */
		if (cs->nr == 1 && cs->end_ns) {
			now = gs_now_ns();
			until = cs->end_ns;
			if (until <= now + left_ns) {
				pthread_mutex_unlock(&cs->lock);
				return;
			}
			until -= left_ns;
			break;
		}
		for (unsigned int k = 1; k < cs->nr; k++) {
			slot = ring_mod(cs, cs->head + k);
			if (work_after(cs, slot) > left_ns)
				i = k;
		}
		slot = ring_mod(cs, cs->head + i);
		ev = cs->ev[slot];
		life = cs->life;
		cs->throttled++;
		pthread_mutex_unlock(&cs->lock);
		done = ev_sync(ev, GS_EV_NAP_MAX_NS, giveup);
		now = gs_now_ns();
		pthread_mutex_lock(&cs->lock);
		if (cs->life != life) {
			/* The context went, and the record serves another. */
			pthread_mutex_unlock(&cs->lock);
			return;
		}
		cs->throttled--;
		if (!done) {
			/* A kernel that may wait for the host: hand over
			 * with it running (drain_until()).
			 */
			STAT_INC(stuck_waits);
			ctx_stuck_locked(cs);
			pthread_mutex_unlock(&cs->lock);
			return;
		}
		if (cs->head_seq != seq)
			continue;	/* a throttled launch popped it: look again */
		ctx_pop_locked(cs, i + 1);
		ctx_unstamp_locked(cs);
		after = queued_ns(cs);
		if (after > left_ns) {
			until = now + after - left_ns;
			break;
		}
	}
	/* Our newest event, if it follows our newest launch: its completion
	 * is the end of our work.
	 */
	if (until && cs->nr && real.cuEventQuery) {
		unsigned int slot = ring_newest(cs);

		if (cs->ev_mark[slot] == cs->launches)
			last = cs->ev[slot];
	}
	near = gs_est_near(&cs->est, until);
	pthread_mutex_unlock(&cs->lock);
	if (!until) {
		ctx_sync(cs, giveup, answer);
		return;
	}
	/*
	 * Nap most of the way, spin the rest: a wake-up can be late. Looking
	 * at the end of our work meanwhile, where an event marks it: a kernel
	 * that ends before its predicted end (one time-sliced with another
	 * context's work ends anywhere about it) has left the GPU without
	 * work, and the next holder waits for the hand-over.
	 */
	if (until > gs_now_ns() + GS_SPIN_NS) {
		if (!last)
			sleep_until(until - GS_SPIN_NS);
		else if (ev_nap_until(last, near, until - GS_SPIN_NS))
			return;
	}
	while (gs_now_ns() < until)
		if (last && ev_query(last) != CUDA_ERROR_NOT_READY)
			return;
}

/*
 * GPU time allowed unfinished, once the launches are timed: so much that a
 * yield drains within it whatever the kernels' size; while nobody else is
 * attached to the token, a deeper queue (no yield to drain for; it hides
 * the CPU's hiccups). @want: the work that would be unfinished, where a
 * bound of at least that much is all the caller needs to know (0: the
 * bound itself). *@floorp: the launches allowed past it (queue_full()).
 * Callers hold cs->lock.
 */
static uint64_t queue_bound(struct gs_ctx *cs, uint64_t want,
			    uint64_t *floorp)
{
	const struct gs_config *c = gs_config();
	uint64_t ns = c->queue_alone_ns, floor = 2, next, grace;

	switch (dev_sharing(cs->d)) {
	case SHARED_LATENCY:
		/* Kernels longer than the bound run one at a time: each
		 * costs a CPU round trip, but a latency client waits for
		 * one kernel, not two. Its next request predicted, what
		 * ends by then may be queued (gs_period_bound()), never
		 * less than the client's bound: within that, the clock
		 * (a read before the kernel is queued) is not needed.
		 */
		floor = 1;
		ns = latency_queue_ns(cs->d);
		next = atomic_load_explicit(&cs->d->lat_next, memory_order_relaxed);
		if (next && (!want || want > ns))
			ns = gs_period_bound(next, gs_now_ns(), ns, c->queue_ns);
		break;
	case SHARED:
		ns = c->queue_ns;
		break;
	case ALONE:
		break;
	}
	/* A holder asked to yield must be done within the grace time. */
	grace = grace_ns(cs->d) / 2;
	if (ns > grace)
		ns = grace;
	*floorp = floor;
	return ns;
}

/*
 * Must a launch of @key wait for room? By the predicted GPU time of what is
 * queued and of this launch (queue_bound()), and never more than
 * GS_QUEUE launches. Caller holds cs->lock.
 */
static bool queue_full(struct gs_ctx *cs, uint64_t key)
{
	uint64_t n = cs->launches - cs->done, floor, ns, after;

	/* Until a launch is timed, its length may be anything: bound the
	 * work in flight by count. Beside others, one launch: a yield waits
	 * for all of it, and a few long kernels outlast the grace time.
	 */
	if (!cs->est.mean)
		return n >= (dev_sharing(cs->d) == ALONE ?
			     GS_QUEUE_UNMEASURED : 1);
	after = queued_ns(cs) + launch_ns(cs, key);
	ns = queue_bound(cs, after, &floor);
	/*
	 * The floor queues a launch behind one longer than the bound, so
	 * that the GPU has the next when it ends; not where the two would
	 * outlast half the grace time: a yield would wait for both and be
	 * revoked, and the next holder's work time-sliced with ours.
	 */
	if (!n || (n < floor && after <= grace_ns(cs->d) / 2))
		return false;
	return n >= gs_config()->queue || after > ns;
}

/*
 * Wait for @ev, recorded after @cs's newest launch: when it completes, the
 * GPU has none of our work left. A long nap (ev_sync()) ends up to
 * GS_EV_NAP_MAX_NS after that, the GPU idle all along, and a yield asked
 * meanwhile waits for it too. So nap until @wake (at the latest GS_SPIN_US
 * before the predicted @end), looking at the event between naps, then
 * poll it. With @yield, DRY_YIELD, the work still running: asked to yield
 * with no more than the hand-over allowance left; the early hand-over then
 * gives the token away while our last kernel runs, and the next holder's
 * kernel is queued when it ends. Polls no longer than twice the mean
 * launch length of @est (a longer kernel, a time-sliced GPU), then waits
 * (ev_sync()) until @giveup: DRY_STUCK if it has not completed by then.
 * Called without cs->lock.
 */
static int wait_end(struct gs_ctx *cs, CUevent ev, uint64_t end,
		    uint64_t wake, const struct gs_est *est, uint64_t giveup,
		    bool yield)
{
	const struct gs_config *c = gs_config();
	uint64_t now = gs_now_ns(), until = end + 2 * est->mean + c->spin_ns;

	/*
	 * Toward @wake, look at the event between naps rather than sleep
	 * blind: @end is predicted from measured lengths, and a kernel that
	 * the driver time-slices with another context's work ends anywhere
	 * about it. Slept past its end, the GPU would sit without our work
	 * until we woke. Short naps from twice the lengths' deviation before
	 * @end, where it may well end.
	 */
	if (end > now + c->spin_ns && wake > now &&
	    ev_nap_until(ev, gs_est_near(est, end), wake))
		return DRY_SEEN;
	for (;;) {
		if (ev_query(ev) != CUDA_ERROR_NOT_READY)
			return DRY_SEEN;
		now = gs_now_ns();
		if (yield && handover_ns(cs->d) &&
		    end <= now + handover_left(cs->d) &&
		    YIELD_ASKED(dev_flags(cs->d)))
			return DRY_YIELD;
		if (now > until)
			break;
		sched_yield();
	}
	return ev_sync(ev, GS_EV_NAP_MAX_NS, giveup) ? DRY_SEEN : DRY_STUCK;
}

/*
 * Wait for @ev, recorded after all of our work, for a drain for a nudge
 * (ctx_sync()): until it completes (DRY_SEEN), or until the client that
 * nudged us says on @answer's page that its work ended (DRY_ANSWERED):
 * the driver ran that work between our kernels already, and letting our
 * queue run out now would only idle the GPU before our next kernel. Naps
 * of GS_EV_NAP_NS, for the answer comes while our work runs and the
 * rest of it may be short; polls from GS_SPIN_US before our work's
 * predicted @end (0: none) as wait_end() does, then naps again until
 * @giveup (DRY_STUCK).
 */
static int wait_answer(CUevent ev, uint64_t end, const struct gs_est *est,
		       uint64_t giveup, const struct gpusched *answer)
{
	uint64_t spin = gs_config()->spin_ns, now, t;
	uint64_t from = end > spin ? end - spin : 0;
	uint64_t to = end + 2 * est->mean + spin;

	for (;;) {
		if (ev_query(ev) != CUDA_ERROR_NOT_READY)
			return DRY_SEEN;
		if (nudge_answered(answer))
			return DRY_ANSWERED;
		now = gs_now_ns();
		if (now >= giveup)
			return DRY_STUCK;
		if (end && now >= from && now <= to) {
			sched_yield();
			continue;
		}
		t = now + GS_EV_NAP_NS;
		if (end && now < from && t > from)
			t = from;
		sleep_until(t < giveup ? t : giveup);
	}
}

/*
 * wait_end() for a launch that waits for room (throttle()), up early for
 * a latency client's request due before the end (lat_watch()): its yield
 * is then answered at once.
 */
static int wait_dry(struct gs_ctx *cs, CUevent ev, uint64_t end,
		    const struct gs_est *est, uint64_t giveup)
{
	uint64_t wake = end - gs_config()->spin_ns, due, from;

	from = lat_watch(cs->d, gs_now_ns(), &due);
	if (from && from < wake)
		wake = from;
	return wait_end(cs, ev, end, wake, est, giveup, true);
}

/*
 * Wait for @ev, recorded after some but not all of our queued launches,
 * with at least @behind_ns of our GPU time likely after it (least_after():
 * launches of one kernel whose length varies may all be short), by
 * ev_sync(), unless a latency client's next request is predicted
 * (lat_watch()) within @reach_ns from now: then look at the event and the
 * status page every GS_YIELD_POLL_NS until GS_SPIN_US before the request,
 * and without sleeping from then until it is overdue. Neither napping
 * nor polling less often than gs_nap_most() says, where less than
 * GS_SPIN_US of work is behind the event: a wake-up can come later than
 * that (a long nap while our work waited behind another context's), and
 * the GPU would run out of our work before the next launch.
 * Returns DRY_YIELD when asked to yield (the gate then gives the token
 * away early), DRY_STUCK when @ev has not completed by @giveup
 * (wait_stuck_at()), else DRY_SEEN. The caller picks @reach_ns
 * (wait_reach()).
 */
static int wait_ev(struct gs_ctx *cs, CUevent ev, uint64_t reach_ns,
		   uint64_t behind_ns, uint64_t giveup)
{
	struct gs_dev *d = cs->d;
	uint64_t now = gs_now_ns(), until = 0, from = 0, step;
	uint64_t most = gs_nap_most(behind_ns, gs_config()->spin_ns,
				    GS_EV_NAP_NS);

	if (real.cuEventQuery && reach_ns)
		from = lat_watch(d, now, &until);
	if (from > now && from - now > reach_ns)
		from = 0;
	step = most && most < GS_YIELD_POLL_NS ? most : GS_YIELD_POLL_NS;
	while (from) {
		if (ev_query(ev) != CUDA_ERROR_NOT_READY)
			return DRY_SEEN;
		if (YIELD_ASKED(dev_flags(d)))
			return DRY_YIELD;
		now = gs_now_ns();
		if (now >= until)
			break;
		if (now < from)
			sleep_until(now + step < from ? now + step : from);
		else
			sched_yield();
	}
	return ev_sync(ev, most ? most : GS_EV_NAP_MAX_NS, giveup) ?
	       DRY_SEEN : DRY_STUCK;
}

/*
 * Until when a wait from @now for @cs's oldest event may last: past the
 * predicted end of all our queued work, GS_STUCK_NS more. A kernel that
 * waits for the host (a flag the program sets, a value it writes) ends
 * only after the program goes on; holding up its launch would hang it,
 * where the driver would have queued the launch. Caller holds cs->lock.
 */
static uint64_t wait_stuck_at(struct gs_ctx *cs, uint64_t now)
{
	return now + queued_ns(cs) + GS_STUCK_NS;
}

/*
 * How far ahead a latency client's request makes wait_ev() poll, for a wait
 * on event @slot: 0 (never) until our launch length is measured, as far
 * as predicted once it is steady, else only within the wait, at the
 * predicted lengths. Polling answers a yield as soon as it is asked, where
 * a wait (ev_sync()) wakes up to a long nap after the event; launches
 * of many lengths make the prediction too uncertain to poll for long.
 * Caller holds cs->lock.
 */
static uint64_t wait_reach(struct gs_ctx *cs, unsigned int slot)
{
	if (!cs->est.mean)
		return 0;
	if (!gs_est_unsteady(&cs->est))
		return UINT64_MAX;
	return queued_ns(cs) - work_after(cs, slot);
}

static bool time_this(struct gs_ctx *cs, uint64_t key);

/*
 * Wait while too much of @cs's work may be unfinished for a launch of @key.
 * Returns whether that launch is to be timed (time_this(), decided under
 * the same lock): the caller frames it (frame_start()) only then, so that
 * most launches take cs->lock twice, not three times. Another thread's
 * launch in between may make it the one that should have been timed; the
 * next one is.
 */
bool throttle(struct gs_ctx *cs, uint64_t key)
{
	bool timed;

	pthread_mutex_lock(&cs->lock);
	while (cs->nr && cs->stuck != cs->head_seq + 1 && queue_full(cs, key)) {
		uint64_t seq = cs->head_seq, mark = cs->ev_mark[cs->head];
		CUevent ev = cs->ev[cs->head];
		uint64_t now = gs_now_ns(), end = 0;
		struct gs_est est = cs->est;
		uint64_t reach = wait_reach(cs, cs->head);
		uint64_t behind = est.mean ? least_after(cs, cs->head) :
					     UINT64_MAX;
		uint64_t giveup = wait_stuck_at(cs, now);
		unsigned int life;
		int dry;

		/* The last of our work, with a predicted end: see wait_dry(). */
		if (mark == cs->launches && est.mean && cs->end_ns &&
		    gs_config()->spin_ns && real.cuEventQuery)
			end = cs->end_ns;
		life = cs->life;
		cs->throttled++;
		pthread_mutex_unlock(&cs->lock);
		STAT_INC(throttle_waits);
		if (real.cuEventQuery &&
		    ev_query(ev) != CUDA_ERROR_NOT_READY)
			dry = DRY_SEEN;
		else if (end)
			dry = wait_dry(cs, ev, end, &est, giveup);
		else
			dry = wait_ev(cs, ev, reach, behind, giveup);
		now = gs_now_ns();
		pthread_mutex_lock(&cs->lock);
		if (cs->life != life) {
			/* The context went meanwhile (its launch fails), and
			 * the record serves another: nothing here is ours.
			 */
			pthread_mutex_unlock(&cs->lock);
			return false;
		}
		cs->throttled--;
		if (dry == DRY_STUCK) {
			/* Not ended long past its time: launch, and wait for
			 * it no more (it stays in the ring until it ends).
			 */
			if (cs->head_seq == seq) {
				cs->stuck = seq + 1;
				STAT_INC(stuck_waits);
				gs_debug("a kernel of context %p has not ended %llu ms past its predicted end: launching without waiting for it",
					 (void *)cs->ctx,
					 (unsigned long long)(GS_STUCK_NS / 1000000));
			}
			continue;
		}
		if (dry == DRY_YIELD) {
			/* Asked to yield: launch_begin() gives the token
			 * away through the gate; the event is still ours.
			 */
			STAT_INC(dry_yields);
			break;
		}
		if (cs->head_seq == seq) {	/* nobody popped it meanwhile */
			ctx_pop_locked(cs, 1);
			cs->end_ns = cs->est.mean ? now + queued_ns(cs) : 0;
		}
	}
	timed = real.cuEventQuery && time_this(cs, key);
	pthread_mutex_unlock(&cs->lock);
	return timed;
}

/*
 * An event on @stream after our launches so far; @timing: one that takes
 * a timestamp (a timed launch's end, or the start of the next one's).
 * Caller holds cs->lock.
 */
bool ev_push(struct gs_ctx *cs, CUstream stream, bool ptsz,
	     uint64_t key, bool timing)
{
	CUresult (*rec)(CUevent, CUstream);
	unsigned int slot = ring_mod(cs, cs->head + cs->nr);
	CUevent ev = timing ? cs->ev_t[slot] : cs->ev_n[slot];

	rec = ptsz ? real.cuEventRecord_ptsz : real.cuEventRecord;
	/* Recorded on the launch's own stream: an event on the legacy
	 * stream would serialise every blocking stream.
	 */
	if (!rec || cs->nr + cs->prev_ok >= cs->nr_events ||
	    rec(ev, stream) != CUDA_SUCCESS)
		return false;
	cs->ev[slot] = ev;
	cs->ev_mark[slot] = cs->launches;
	cs->ev_cum[slot] = cs->cum_ns;
	cs->ev_least[slot] = cs->cum_least;
	cs->ev_key[slot] = key;
	cs->ev_away[slot] = 0;
	cs->ev_stream[slot] = stream;
	cs->ev_kind[slot] = 0;
	cs->nr++;
	cs->last_mark = cs->launches;
	cs->mark_cum = cs->cum_ns;
	if (!stream || (stream != cs->join_s && stream != cs->anchor_s)) {
		struct gs_strm *e = strm_of(cs, stream, ptsz);

		if (e) {
			e->ev_seq = cs->head_seq + cs->nr - 1;
			e->ev_mark = cs->launches;
			e->ev_ok = true;
		}
	}
	return true;
}

/*
 * Is the launch of @key about to be queued on @cs one to time? Every one
 * of a kernel whose length is not known yet (the queue bound would take
 * it for the mean); else one in about GS_TIME_EVERY, at varied intervals
 * so that a repeating mix of kernels is sampled throughout. Beside a
 * latency-class client too: the queue bound goes by each kernel's length,
 * learnt per kernel, and a timed launch costs the GPU about 2 us of
 * timestamp between two kernels (a tenth of a 20 us kernel), where the
 * plain event that queued() puts after every launch there costs it
 * nothing. @k: @key's entry (klen_of()). Caller holds cs->lock.
 */
static bool time_this_of(const struct gs_ctx *cs, uint64_t key,
			 const struct gs_klen *k)
{
	if (!cs->est.mean || cs->launches >= cs->sample_at)
		return true;
	return key && (!k || !k->len.mean);
}

/* time_this_of() with @key's entry looked up (klen_of()). */
static bool time_this(struct gs_ctx *cs, uint64_t key)
{
	return time_this_of(cs, key, klen_of(cs, key));
}

/*
 * How many launches to one timed (with @sharing, dev_sharing()), and,
 * away from a latency-class client, to one event at least: fewer still
 * while nobody else is attached, where a yield is not even pending.
 */
static unsigned int time_every(enum gs_sharing sharing)
{
	return sharing == ALONE ? GS_TIME_EVERY_STEADY : GS_TIME_EVERY;
}

/* The launch just queued was timed (@sharing: dev_sharing()): when to
 * time the next one. Less often once GS_TIME_EVERY lengths are measured
 * and they are steady (the estimate's deviation within a quarter of its
 * mean): the samples tell little then, and each costs the GPU about 2 us
 * of timestamps. Not before: a deviation of a few samples says nothing,
 * and one sample off (a context's first kernels) would stay in the
 * estimate. While nobody else is attached, and for a latency-class client
 * with steady lengths, no more often than once in GS_TIME_SPARSE_NS of our
 * GPU time either. Kernels not timed yet are timed anyway (time_this_of()).
 */
static void timed_one(struct gs_ctx *cs, enum gs_sharing sharing)
{
	bool steady = cs->samples >= GS_TIME_EVERY &&
		      !gs_est_unsteady(&cs->est);
	unsigned int every = steady ? GS_TIME_EVERY_STEADY :
				      time_every(sharing);

	/*
	 * By GPU time too: see GS_TIME_SPARSE_NS. Alone, nobody's queue or
	 * yield waits on our lengths. A latency-class client's timed launch
	 * puts its timestamps, and the record of the event before it inside
	 * the call, on its request's way (a few microseconds): at one in
	 * GS_TIME_EVERY_STEADY, more than one request in a hundred is timed,
	 * and its p99 would be theirs. Its steady lengths bound nobody's
	 * queue (it launches beside the holder, whose queue goes by its own
	 * lengths); they price what it is charged, which samples this rare
	 * keep right. No more than GS_QUEUE launches apart, which is as long
	 * as a process that others join then goes on the lengths measured
	 * alone.
	 */
	if (sharing == ALONE || (steady && is_latency(atomic_load(&cs->d->g))))
		every = gs_time_interval(every, cs->est.mean, GS_TIME_SPARSE_NS,
					 GS_QUEUE);

	cs->rng = cs->rng * 6364136223846793005ull + 1442695040888963407ull;
	cs->sample_at = cs->launches + every / 2 + (cs->rng >> 32) % every;
}

/*
 * A timed launch needs an event just before it on its stream: the last
 * one, still pending (the kernel then starts as it completes), or a fresh
 * one (the GPU ran out of our work, or the last event is on another
 * stream: its time is not the kernel's start). Room is left for the event
 * after it. *@fr says which (FRAME_NONE: not timed). Caller holds
 * cs->lock.
 */
void frame_start(struct gs_ctx *cs, CUstream stream, bool ptsz, uint64_t key,
		 struct gs_frame *fr)
{
	unsigned int last = ring_mod(cs, cs->head + cs->nr + cs->nr_events - 1);

	fr->how = FRAME_NONE;
	if (!real.cuEventQuery || cs->nr + cs->prev_ok + 2 > cs->nr_events ||
	    !time_this(cs, key))
		return;
	/* Before the look: a host away between it and the launch call's
	 * return is then in the call's time (frame_away_start()).
	 */
	fr->since = gs_now_ns();
	if (cs->nr && cs->ev_mark[last] == cs->launches &&
	    cs->ev_stream[last] == stream && ev_timed(cs, last) &&
	    ev_query(cs->ev[last]) == CUDA_ERROR_NOT_READY) {
		fr->how = FRAME_PENDING;
	} else if (ev_push(cs, stream, ptsz, 0, true)) {
		fr->how = FRAME_FRESH;
	}
}

/*
 * Host time that may lie inside the frame of a timed launch whose call
 * returned at @called, on the side of the event before the kernel
 * (@start). If that event is still pending once the call returned, the
 * kernel starts as it completes, and the frame starts with the kernel
 * however long the call took: none. If it completed, the frame holds the
 * part of the call before the kernel was submitted: the driver loading
 * the kernel, or a host away (a thread preempted, a virtual CPU held)
 * before the submission, or none of it if the host was away after it,
 * while the kernel ran. Which is not known, so the whole call counts
 * (from the look before the event was recorded, frame_start(), so that a
 * thread preempted in between is in it too). Taking it off the sample
 * instead would leave a host away while the kernel ran a sample of a
 * fraction of the kernel, and the queue bound and the early hand-over,
 * counted in those lengths, would let several times the work queue up and
 * be left behind. A call shorter than GS_FRAME_AWAY_US counts as none
 * (the look is a driver call saved): a few microseconds of a call that
 * only queues the kernel. Caller holds cs->lock.
 */
static uint64_t frame_away_start(const struct gs_frame *fr, CUevent start,
				 uint64_t called)
{
	uint64_t took = called > fr->since ? called - fr->since : 0;

	if (took < 1000ull * GS_FRAME_AWAY_US ||
	    ev_query(start) == CUDA_ERROR_NOT_READY)
		return 0;
	return took;
}

/*
 * The same on the other side of the kernel, the event after it (@end,
 * just recorded): where the host was away between the call's return and
 * that record (preempted, a virtual CPU held, a lock waited for) and the
 * event completed as it was recorded, the kernel had ended, when is not
 * known, and the frame ends when the host came back: the time since the
 * call returned counts. Less counts as none, as on the start's side: a
 * kernel of a few microseconds may end before the event is recorded.
 * Caller holds cs->lock.
 */
static uint64_t frame_away_end(CUevent end, uint64_t called)
{
	uint64_t away = gs_now_ns() - called;

	if (away < 1000ull * GS_FRAME_AWAY_US ||
	    ev_query(end) != CUDA_SUCCESS)
		return 0;
	return away;
}

/*
 * The events at the head of @cs's ring that completed, of its first @upto:
 * pop them, so that their frames are samples even when nothing waits for
 * them (a program that waits on its own events never fills our queue).
 * Stops at the first one still pending. Caller holds cs->lock.
 */
static void ctx_reap_locked(struct gs_ctx *cs, unsigned int upto)
{
	unsigned int n = 0;

	while (n < upto &&
	       ev_query(cs->ev[ring_mod(cs, cs->head + n)]) ==
	       CUDA_SUCCESS)
		n++;
	if (n)
		ctx_pop_locked(cs, n);
}

/*
 * Our GPU time still queued on @d's GPU, predicted, over all our contexts,
 * with what completed popped first.
 */
uint64_t dev_queued_ns(struct gs_dev *d)
{
	uint64_t ns = 0;

	for (struct gs_ctx *cs = atomic_load(&d->ctxs); cs; cs = cs->dev_next) {
		if (atomic_load(&cs->dead))	/* its events went with it */
			continue;
		pthread_mutex_lock(&cs->lock);
		if (real.cuEventQuery)
			ctx_reap_locked(cs, cs->nr);
		ns += queued_ns(cs);
		pthread_mutex_unlock(&cs->lock);
	}
	return ns;
}

/*
 * Account one queued launch of @key, and record an event after it if it
 * is timed: with the one before it (frame_start(), *@fr), its GPU time.
 * @called: when the launch call returned.
 */
void queued(struct gs_ctx *cs, CUstream stream, bool ptsz, uint64_t key,
	    const struct gs_frame *fr, uint64_t called)
{
	struct gs_strm *e;
	struct gs_klen *k;
	uint64_t len;

	pthread_mutex_lock(&cs->lock);
	/* Looked up once for the length and for time_this_of() below: the
	 * table does not change in between (cs->lock).
	 */
	k = klen_of(cs, key);
	len = klen_ns(cs, k);
	cs->launches++;
	cs->cum_ns += len;
	cs->cum_least += klen_least(cs, k);
	e = strm_of(cs, stream, ptsz);
	if (e)
		e->last = cs->launches;
	/* A span not ended by a drain (the token kept, nobody else
	 * attached) is joined now and then: what it holds is reported
	 * no later.
	 */
	if (cs->span_pushed && cs->cum_ns - cs->span_cum >= GS_SPAN_MAX_NS)
		join_now_locked(cs);
	/*
	 * The predicted end of our work moves on by this kernel, from now
	 * if it had passed. Where none was predicted and nothing else of
	 * ours is queued, this kernel starts about now (after another
	 * holder's last, at worst), and its end can be predicted before any
	 * completion is seen. So the first kernel after a grant is polled
	 * for too (wait_dry()), and a yield during it hands over early
	 * (ctx_drain_to()).
	 */
	if (cs->end_ns || (cs->est.mean && cs->launches - cs->done == 1)) {
		uint64_t now = called ? called : gs_now_ns();

		cs->end_ns = (cs->end_ns > now ? cs->end_ns : now) + len;
	}
	if (cs->nr + cs->prev_ok < cs->nr_events) {
		unsigned int last = ring_mod(cs, cs->head + cs->nr +
					     cs->nr_events - 1);
		uint64_t framed = 0, away = 0;
		/* Read from the status page once for this launch. */
		enum gs_sharing sharing = dev_sharing(cs->d);

		/* The event just before this launch on its stream marks its
		 * start (frame_start()). Two threads launching on one stream
		 * at once may order their kernels one way and their events
		 * the other: that sample is off, once, and averaged away.
		 */
		if (fr->how != FRAME_NONE && cs->nr &&
		    cs->ev_mark[last] + 1 == cs->launches &&
		    cs->ev_stream[last] == stream) {
			away = frame_away_start(fr, cs->ev[last], called);
			framed = key;
		}
		/* Untimed launches get an event now and then, so that
		 * what is in flight is known (the queue bound, a drain):
		 * after a few launches, or half the shared queue bound of
		 * work, whichever comes first (the throttle waits for
		 * events: with kernels of milliseconds, a few would
		 * outlast a yield's grace time); every one beside a
		 * latency-class client, whose wait our queue is, bounded
		 * kernel by kernel; and every one of a latency-class
		 * client, whose next launch asks whether it found our work
		 * done (ctx_dry_locked()). On a stream outside the table (a
		 * thread's own default stream: strm_of()), which the idle
		 * thread cannot mark, after the idle time of work: a
		 * kernel that long, waited for, is not idleness.
		 */
		if ((framed || cs->launches - cs->last_mark >= time_every(sharing) / 2 ||
		     cs->cum_ns - cs->mark_cum >= gs_config()->queue_ns / 2 ||
		     (!e && cs->cum_ns - cs->mark_cum >= gs_config()->idle_ns) ||
		     sharing == SHARED_LATENCY ||
		     is_latency(atomic_load(&cs->d->g)) ||
		     time_this_of(cs, key, k)) &&
		    ev_push(cs, stream, ptsz, framed, framed)) {
			if (framed) {
				unsigned int slot = ring_newest(cs);

				cs->ev_away[slot] = away +
					frame_away_end(cs->ev[slot], called);
				timed_one(cs, sharing);
			}
			/* Not the event just recorded: it follows the kernel
			 * just queued, which the GPU has had no time to run,
			 * and asking would be a driver call for a "not ready"
			 * (at every launch beside a latency-class client).
			 * The next look sees it.
			 */
			ctx_reap_locked(cs, cs->nr - 1);
		}
	}
	pthread_mutex_unlock(&cs->lock);
}
