// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The idle thread: gives a token back when the process stops launching,
 * answers yields when no launch comes, and asks for tokens ahead.
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

/* Give the token of @d back if the process stopped launching on it (or was
 * asked to yield and is not launching). Never blocks on d->lock.
 */
bool idle_check(struct gs_dev *d, uint64_t now, uint64_t idle_ns,
		       uint64_t *next)
{
	struct gpusched *g;
	uint64_t n, wanted_ns, idle_at, allow = 0, left = 0;
	uint32_t fl;
	bool yield, soon, wanted, early;

	if (pthread_mutex_trylock(&d->lock))
		return true;	/* someone is in the slow path: look again */
	g = atomic_load(&d->g);
	fl = g ? gs_status_flags(g) : 0;
	if (!(fl & GPUSCHED_ST_HOLDING)) {
		pthread_mutex_unlock(&d->lock);
		return false;
	}
	if (!g->be->alive(g)) {
		/* Nobody will ask us to yield: say so, per the fail mode. */
		retire_locked(d);
		service_missing(d, -ECONNRESET, true);
		pthread_mutex_unlock(&d->lock);
		return false;
	}
	wanted = dev_wanted(g, fl);
	/* A latency-class holder whose requests end with their launches,
	 * another waiting: the token goes back once no launch came for the
	 * idle time and no more than the hand-over allowance of our work is
	 * left, the rest running on (lat_early()).
	 */
	early = wanted && !(fl & GPUSCHED_ST_YIELD) && lat_early(d, g);
	if (early)
		allow = handover_left(d);
	n = atomic_load(&d->launches);
	if (n != d->seen_launches) {
		d->seen_launches = n;
		d->seen_at = d->active_at = now;
	} else if (!(fl & GPUSCHED_ST_YIELD)) {
		/* Idle means no launch and nothing of ours running (early:
		 * no more than @allow): a thread waiting for its queued work
		 * is busy, not idle.
		 */
		for (struct gs_ctx *cs = atomic_load(&d->ctxs); cs; cs = cs->dev_next) {
			if (early && ctx_busy(cs, allow)) {
				d->seen_at = d->active_at = now;
				break;
			}
			if (d->seen_at != now && ctx_busy(cs, 0)) {
				d->seen_at = now;
				if (!early)
					break;
			}
		}
	}
	idle_at = early ? d->active_at : d->seen_at;
	/*
	 * Held, another waiting, and since the last look no launch and
	 * nothing of ours queued or running: token time the GPU did not use
	 * (stats). Counted between looks that both saw a waiter.
	 */
	if (!wanted || (fl & GPUSCHED_ST_YIELD)) {
		d->dry_at = 0;
	} else {
		if (d->dry_at && d->seen_at != now)
			STAT_ADD(dry_us, (now - (d->dry_at > d->seen_at ?
						 d->dry_at : d->seen_at)) / 1000);
		d->dry_at = now;
	}
	yield = (fl & GPUSCHED_ST_YIELD) && now > d->seen_at;
	wanted_ns = idle_wanted(g);
	soon = wanted_ns < idle_ns;
	if (wanted && soon)
		idle_ns = wanted_ns;
	if (!yield && now - idle_at < idle_ns) {
		uint64_t at = idle_at + idle_ns;

		/* Someone waits: look again soon, so that the token does
		 * not sit idle here once our last kernel is done. So too
		 * while nobody waits if we would give it to a waiter sooner
		 * (the latency class): one that comes must not wait for our
		 * next tick, which could be past the latency client's next
		 * request.
		 */
		if ((wanted || soon) && now + GS_YIELD_POLL_NS < at)
			at = now + GS_YIELD_POLL_NS;
		if (at < *next)
			*next = at;
		pthread_mutex_unlock(&d->lock);
		return true;
	}
	if (yield)
		lat_observe(d, g, fl, now);
	drain_locked(d, true);
	if (atomic_load(&d->launches) != n) {
		/* A launch slipped in before the flag: still busy. */
		atomic_store(&d->draining, false);
		pthread_mutex_unlock(&d->lock);
		return true;
	}
	if (yield)
		yield_answered(g, gs_now_ns());
	else if (early)	/* ours that runs on past the release */
		left = dev_queued_ns(d);
	if (!gpusched_release(g)) {
		if (yield) {
			STAT_INC(yield_releases);
		} else {
			STAT_INC(idle_releases);
			if (is_latency(g))
				lat_released(d, g, early, left, gs_now_ns());
		}
		gs_debug("%s: released (%s)", d->name, yield ? "yield" : "idle");
	}
	atomic_store(&d->draining, false);
	pthread_mutex_unlock(&d->lock);
	return false;
}

static void *idle_thread(void *arg)
{
	uint64_t idle_ns = gs_config()->idle_ns;
	/* Yield requests are seen at this period when nothing launches. */
	uint64_t tick = idle_ns / 2;

	(void)arg;
	/* Its queries and waits never meet an application's capture. */
	gs_relax_thread();
	if (tick < GS_IDLE_TICK_MIN_NS)
		tick = GS_IDLE_TICK_MIN_NS;
	if (tick > GS_IDLE_TICK_MAX_NS)
		tick = GS_IDLE_TICK_MAX_NS;
	pthread_mutex_lock(&G.lock);
	while (!G.bg_stop) {
		bool busy = false;
		uint64_t now, next;

		G.bg_kick = false;
		pthread_mutex_unlock(&G.lock);
		now = gs_now_ns();
		next = now + tick;
		for (struct gs_dev *d = atomic_load(&G.devs); d; d = d->next) {
			busy |= idle_check(d, now, idle_ns, &next);
			busy |= ask_beside(d, now, &next);
			busy |= answer_nudge(d, now, &next);
		}
		pthread_mutex_lock(&G.lock);
		if (G.bg_stop || G.bg_kick)
			continue;
		if (busy) {
			struct timespec ts;

			if (next > now + tick)
				next = now + tick;
			ts = ns_timespec(next);
			pthread_cond_timedwait(&G.cond, &G.lock, &ts);
		} else {
			pthread_cond_wait(&G.cond, &G.lock);
		}
	}
	pthread_mutex_unlock(&G.lock);
	return NULL;
}

/* A token was granted: make sure the idle thread watches it. */
void kick_idle_thread(void)
{
	pthread_mutex_lock(&G.lock);
	if (!G.bg_started && !G.bg_stop) {
		sigset_t all, old;

		/* The application's signals are not for this thread. */
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		if (!pthread_create(&G.bg, NULL, idle_thread, NULL)) {
			G.bg_started = true;
			pthread_setname_np(G.bg, "gpusched-idle");
		} else {
			gs_log("cannot start the idle thread: the token is released only when asked to yield");
		}
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	G.bg_kick = true;
	pthread_mutex_unlock(&G.lock);
	/* After the unlock: woken under it, the thread would wait for the
	 * lock at once, and the kicking launch call for its wake-up. The
	 * kick is not lost: the thread looks at it under the lock before
	 * it waits.
	 */
	pthread_cond_signal(&G.cond);
}
