// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Several streams' work of one context: the GPU time it reports, checked
 * on the GPU's clock between the library's own events. Kernels of two
 * streams that run at once each take longer than alone, and the sum of
 * their lengths counts the time they shared once per stream. The table of
 * streams launched on since the last join, an anchor recorded at the
 * first launch of a turn on a stream of the library's with nothing to wait
 * for, and a join that waits for every stream's newest event, recorded at
 * the drain that ends the turn (or after GS_SPAN_MAX_NS of work), frame a
 * span: what completes within it is held, and reported up to the clock's
 * span between the two. A stream the program destroys is waited for as it
 * goes (ctx_stream_gone()). All of it under cs->lock.
 */
#include <pthread.h>

#include "interpose.h"

/*
 * @ns of our work ran on @d's GPU: tell the token service, which charges
 * what the GPU did where it is more than the time we held the token; with
 * @back, @ns reported before was counted twice (ctx_span_locked()). Under
 * the launching count, as dev_flags() reads the page, since
 * retire_locked() waits for that count before it closes the client.
 */
static void report_gpu(struct gs_dev *d, uint64_t ns, bool back)
{
	struct gpusched *g;

	atomic_fetch_add(&d->launching, 1);
	g = atomic_load(&d->g);
	if (g && back)
		gs_unreport_gpu(g, ns);
	else if (g)
		gs_report_gpu(g, ns);
	atomic_fetch_sub(&d->launching, 1);
}

/*
 * @ns of @cs's work completed: reported, or held while a span of several
 * streams' work is open (struct gs_ctx). Caller holds cs->lock.
 */
void ctx_report_locked(struct gs_ctx *cs, uint64_t ns)
{
	if (cs->span_open)
		cs->span_ns += ns;
	else if (ns)
		report_gpu(cs->d, ns, false);
}

/* What a span held, reported as it is: no join will check it. Caller
 * holds cs->lock.
 */
void span_release_locked(struct gs_ctx *cs)
{
	uint64_t ns = cs->span_ns;

	cs->span_open = false;
	cs->span_ns = 0;
	ctx_report_locked(cs, ns);
}

/*
 * The event in @slot, which takes timestamps, completed: check our GPU time
 * reported since the last such event (the anchor) against the GPU's clock.
 * What report_gpu() reports is the GPU-timed lengths of what was launched,
 * and a kernel's length is timed on its own stream: kernels of ours on
 * several streams at once each take longer than alone, and the sum of
 * their lengths counts the time they shared more than once. The GPU time
 * of a context is when any of its work runs, which is no longer than the
 * clock's span between the two events: what was reported beyond it is
 * taken back from the report not yet sent (gs_unreport_gpu()). Work that
 * ran back to back and alone spans its lengths and more (gaps, other
 * contexts' turns), and keeps them. An event that completed before the
 * anchor (another stream's) waits for a later one. The event then becomes
 * the anchor: its handle leaves the ring, which takes the old anchor's
 * in its place, so that the ring's later events never record over it.
 *
 * Once the context's work ran on several streams at once, an event on one
 * of them may complete while work launched before it on another still
 * runs: only the library's own events frame a span then. Its anchor, the
 * first launch after a drain, opens one, and what completes meanwhile is
 * held (ctx_report_locked()); the drain's join, recorded once the work of
 * every stream before it, closes it: what was held is reported up to the
 * clock's span, within the grant, so that no span holds other holders'
 * turns. Caller holds cs->lock.
 */
void ctx_span_locked(struct gs_ctx *cs, unsigned int slot)
{
	uint64_t ns = cs->ev_cum[slot] - cs->anchor_cum, span;
	bool ours = cs->ev_kind[slot] & (EVK_ANCHOR | EVK_JOIN);
	CUevent spare;
	CUresult r;
	float ms;

	if (!cs->anchor_ev || cs->ev[slot] != cs->ev_t[slot] ||
	    (cs->multi && !ours))
		return;
	if (cs->ev_kind[slot] & EVK_ANCHOR) {
		span_release_locked(cs);	/* none left open: a no-op */
		cs->span_open = true;
	} else if (ours) {
		ns = cs->span_ns;
		if (cs->span_open && cs->anchor_ok &&
		    ev_elapsed(cs->anchor_ev, cs->ev[slot], &ms) == CUDA_SUCCESS &&
		    ms > 0) {
			span = gs_elapsed_ns(ms);
			cs->scale = gs_scale_next(cs->scale, ns, span,
						  GS_JOIN_STREAMS);
			if (ns > span) {
				STAT_ADD(span_back_ns, ns - span);
				ns = span;
			}
		}
		cs->span_open = false;
		cs->span_ns = 0;
		ctx_report_locked(cs, ns);
	} else if (cs->anchor_ok) {
		r = ev_elapsed(cs->anchor_ev, cs->ev[slot], &ms);
		if (r == CUDA_SUCCESS && ms <= 0)
			return;
		span = r == CUDA_SUCCESS ? gs_elapsed_ns(ms) : ns;
		if (span < ns) {
			STAT_ADD(span_back_ns, ns - span);
			report_gpu(cs->d, ns - span, true);
		}
	}
	spare = cs->anchor_ev;
	cs->anchor_ev = cs->ev[slot];
	cs->ev_t[slot] = spare;
	cs->anchor_cum = cs->ev_cum[slot];
	cs->anchor_ok = true;
}

/*
 * @stream's entry among the streams @cs launched on since the last join
 * (struct gs_ctx), added if new. NULL where the table cannot say: full,
 * or a thread's own default stream (the per-thread stream, or NULL in the
 * _ptsz calls), which one handle names for every thread, and on which
 * only that thread could record. The grant's work then goes unjoined
 * (strm_over). Caller holds cs->lock.
 */
struct gs_strm *strm_of(struct gs_ctx *cs, CUstream stream, bool ptsz)
{
	struct gs_strm *e;

	for (unsigned int i = 0; i < cs->nr_strm; i++)
		if (cs->strm[i].s == stream)
			return &cs->strm[i];
	if (stream == CU_STREAM_PER_THREAD || (ptsz && !stream) ||
	    cs->nr_strm == GS_JOIN_STREAMS) {
		cs->strm_over = true;
		return NULL;
	}
	e = &cs->strm[cs->nr_strm++];
	*e = (struct gs_strm){ .s = stream, .ptsz = ptsz };
	if (cs->nr_strm > 1) {
		cs->multi = true;
		if (!cs->span_pushed)	/* a span from the next launch on */
			atomic_store(&cs->anchor_due, true);
	}
	return e;
}

/* cuStreamIsCapturing() of @e's stream: whether it is not, as far as the
 * driver says.
 */
static bool strm_idle(const struct gs_strm *e)
{
	CUstreamCaptureStatus cap;

	return stream_capture(e->s, e->ptsz, &cap) == CUDA_SUCCESS &&
	       cap == CU_STREAM_CAPTURE_STATUS_NONE;
}

/*
 * The library's own streams in @cs's context, which must be current: made
 * at the first call. Two: the anchor's must have nothing to wait for,
 * where the joins' waits for the program's streams. Whether there are.
 * Caller holds cs->lock.
 */
static bool lib_streams_locked(struct gs_ctx *cs)
{
	if (!real.cuStreamCreate)
		return false;
	if (!cs->join_s &&
	    real.cuStreamCreate(&cs->join_s, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS)
		cs->join_s = NULL;
	if (cs->join_s && !cs->anchor_s &&
	    real.cuStreamCreate(&cs->anchor_s, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS)
		cs->anchor_s = NULL;
	return cs->anchor_s;
}

/* Has @e's stream no event of ours after its newest launch? */
static bool strm_unmarked(const struct gs_strm *e)
{
	return !e->ev_ok || e->ev_mark < e->last;
}

/*
 * Mark @e's stream: where its newest launch has no event of ours after it,
 * record one (in @cs's context, current), unless the stream is being
 * captured. Whether its newest launch has one now. Caller holds cs->lock.
 */
static bool strm_mark_locked(struct gs_ctx *cs, struct gs_strm *e)
{
	return !strm_unmarked(e) ||
	       (strm_idle(e) && ev_push(cs, e->s, e->ptsz, 0, false));
}

/*
 * The ring slot of @e's newest event in *@slot: whether it has one not
 * yet popped (one popped completed). Caller holds cs->lock.
 */
static bool strm_slot(const struct gs_ctx *cs, const struct gs_strm *e,
		      unsigned int *slot)
{
	if (!e->ev_ok || e->ev_seq < cs->head_seq)
		return false;
	*slot = ring_mod(cs, cs->head + (unsigned int)(e->ev_seq - cs->head_seq));
	return true;
}

/*
 * Make @cs's context current on the calling thread (cuCtxPushCurrent):
 * whether it did. ctx_leave() pops it.
 */
static bool ctx_enter(struct gs_ctx *cs)
{
	return real.cuCtxPushCurrent_v2 && real.cuCtxPopCurrent_v2 &&
	       real.cuCtxPushCurrent_v2(cs->ctx) == CUDA_SUCCESS;
}

static void ctx_leave(void)
{
	CUcontext popped;

	real.cuCtxPopCurrent_v2(&popped);
}

/*
 * The join stream waits for @e's newest event, one recorded after its
 * newest launch where none follows it (in @cs's context, current).
 * Whether it does (or nothing is left to wait for). Caller holds cs->lock.
 */
static bool strm_wait_locked(struct gs_ctx *cs, struct gs_strm *e)
{
	unsigned int slot;

	if (!strm_mark_locked(cs, e))
		return false;
	if (!strm_slot(cs, e, &slot))
		return true;	/* completed */
	return real.cuStreamWaitEvent(cs->join_s, cs->ev[slot], 0) == CUDA_SUCCESS;
}

/**
 * strm_running_locked() - is work on @cs's streams still running?
 * @cs: a context, its lock held
 *
 * Whether the event after the newest launch of a stream in the table is
 * still pending, recorded now (in the context, made current) where none
 * follows that launch yet. Our events follow a launch only now and then
 * (queued()), and the ring's newest says nothing of the launches after
 * it, nor of other streams' work: a program that launches a kernel longer
 * than the idle time and waits for it would look idle while it runs. A
 * stream being captured, or one that cannot be recorded on (the ring
 * full), says nothing. Nor do a thread's own default streams, not in the
 * table (strm_of()).
 */
bool strm_running_locked(struct gs_ctx *cs)
{
	bool entered = false, busy = false;
	unsigned int slot;

	if (atomic_load(&cs->dead))
		return false;
	for (unsigned int i = 0; i < cs->nr_strm && !busy; i++) {
		struct gs_strm *e = &cs->strm[i];

		if (strm_unmarked(e) && !entered) {
			entered = ctx_enter(cs);
			if (!entered)
				break;
		}
		busy = strm_mark_locked(cs, e) && strm_slot(cs, e, &slot) &&
		       ev_query(cs->ev[slot]) == CUDA_ERROR_NOT_READY;
	}
	if (entered)
		ctx_leave();
	return busy;
}

/*
 * Record @cs's join (ctx_join()): in the context (pushed current), the
 * join stream waits for each stream in the table (strm_wait_locked()),
 * then records an event that takes timestamps. Whether it was. Caller
 * holds cs->lock.
 */
static bool join_locked(struct gs_ctx *cs)
{
	unsigned int need = 1;
	CUstreamCaptureMode mode;
	bool ok = false, relaxed;

	/* cuStreamCreate: lib_streams_locked(). */
	if (!real.cuStreamWaitEvent || !real.cuEventQuery)
		return false;
	for (unsigned int i = 0; i < cs->nr_strm; i++)
		need += strm_unmarked(&cs->strm[i]);
	if (cs->nr + cs->prev_ok + need > cs->nr_events || !ctx_enter(cs))
		return false;
	/* Waits and records beside another thread's capture: relaxed, as
	 * the queries are (gs_relax()).
	 */
	relaxed = gs_relax(&mode);
	if (!lib_streams_locked(cs))
		goto out;
	for (unsigned int i = 0; i < cs->nr_strm; i++)
		if (!strm_wait_locked(cs, &cs->strm[i]))
			goto out;
	if (ev_push(cs, cs->join_s, false, 0, true)) {
		cs->ev_kind[ring_newest(cs)] = EVK_JOIN;
		cs->span_pushed = false;
		atomic_store(&cs->anchor_due, true);
		ok = true;
	}
out:
	gs_unrelax(relaxed, mode);
	ctx_leave();
	return ok;
}

/* ctx_join() under cs->lock, the context alive. */
void join_now_locked(struct gs_ctx *cs)
{
	/* Not joined: what the span holds is reported as it is once the
	 * work before now completed (its anchor may not have yet).
	 */
	if (cs->multi && !cs->strm_over && join_locked(cs)) {
		STAT_INC(joins);
	} else {
		if (cs->multi) {
			STAT_INC(unjoined);
			cs->unjoined = true;
		}
		if (cs->nr)
			cs->ev_kind[ring_newest(cs)] |= EVK_RELEASE;
		else
			span_release_locked(cs);
		cs->span_pushed = false;
	}
	cs->nr_strm = 0;
	cs->strm_over = false;
}

/*
 * The stream of @cs's table entry @i is about to be destroyed: the join
 * stream waits for it now (strm_wait_locked(), in the context made
 * current), and its entry leaves the table. Where it cannot, the turn
 * goes unjoined. A context of one stream marks its newest launch
 * instead. Caller holds cs->lock.
 */
static void strm_gone_locked(struct gs_ctx *cs, unsigned int i)
{
	bool alive = !atomic_load(&cs->dead);	/* else its events went too */

	if (alive && cs->multi) {
		if (!real.cuStreamWaitEvent || !ctx_enter(cs)) {
			cs->strm_over = true;
		} else {
			if (!lib_streams_locked(cs) ||
			    !strm_wait_locked(cs, &cs->strm[i]))
				cs->strm_over = true;
			ctx_leave();
		}
	} else if (alive && strm_unmarked(&cs->strm[i]) && ctx_enter(cs)) {
		/* Its last work gets an event of ours, which the idle
		 * thread's look (strm_running_locked()) no longer could.
		 */
		strm_mark_locked(cs, &cs->strm[i]);
		ctx_leave();
	}
	cs->strm[i] = cs->strm[--cs->nr_strm];
}

/**
 * ctx_stream_gone() - a stream of the program's is about to be destroyed
 * @stream: its handle, valid until this returns
 *
 * A join records an event on a stream whose newest launch has none after
 * it; once the stream is destroyed its handle may be freed, or be another
 * stream's. So the join stream waits for it now, through that event
 * recorded while the handle is the stream's (strm_gone_locked()), and the
 * stream leaves the table: the library does not touch the handle again,
 * and a new stream of that handle is a new entry.
 */
void ctx_stream_gone(CUstream stream)
{
	CUstreamCaptureMode mode;
	bool relaxed;

	if (!stream || stream == CU_STREAM_LEGACY || stream == CU_STREAM_PER_THREAD)
		return;
	relaxed = gs_relax(&mode);
	for (struct gs_ctx *cs = atomic_load(&G.ctxs); cs; cs = cs->next) {
		pthread_mutex_lock(&cs->lock);
		for (unsigned int i = 0; i < cs->nr_strm; i++)
			if (cs->strm[i].s == stream)
				strm_gone_locked(cs, i--);
		pthread_mutex_unlock(&cs->lock);
	}
	gs_unrelax(relaxed, mode);
}

/**
 * ctx_join() - join the streams of @cs's work as a drain begins
 * @cs: a context of the device being drained, its launches stopped
 *
 * Where its work since the last join ran on several streams, record the
 * join (join_locked()): on the GPU's clock, the end of all of that work,
 * against which the GPU time it reported is checked (ctx_span_locked()).
 * The next launch records the next anchor (ctx_anchor_locked()). Where it
 * cannot (a stream it cannot record on, one being captured, no room in
 * the ring), what a span holds is reported as it is.
 */
void ctx_join(struct gs_ctx *cs)
{
	pthread_mutex_lock(&cs->lock);
	if (!atomic_load(&cs->dead))
		join_now_locked(cs);
	pthread_mutex_unlock(&cs->lock);
}

/*
 * The first launch after a join, holding the token, about to be made on
 * @cs: record the anchor of its span on the library's own stream, which
 * has nothing else to wait for, so that it completes as it is recorded.
 * Caller holds cs->lock.
 */
void ctx_anchor_locked(struct gs_ctx *cs)
{
	if (atomic_exchange(&cs->anchor_due, false) && lib_streams_locked(cs) &&
	    ev_push(cs, cs->anchor_s, false, 0, true)) {
		cs->ev_kind[ring_newest(cs)] = EVK_ANCHOR;
		cs->span_pushed = true;
		cs->span_cum = cs->cum_ns;
	}
}
