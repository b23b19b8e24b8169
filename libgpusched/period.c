// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The beat of periodic requests (period.h). The beat follows the requests
 * on it: at once to an early one, by an eighth to a late one; the period
 * is an average (7/8 old, 1/8 new) of how far the beat moved. So a late
 * request moves neither the period nor the beat much, and one off the beat
 * not at all.
 */
#include "period.h"

uint64_t gs_period_note(struct gs_period *p, uint64_t t)
{
	uint64_t per = p->period, tol = gs_period_tol(per), iv, k;

	if (t <= p->last || t - p->last < GS_PERIOD_BURST_NS)
		goto predict;	/* seen already, or the same request */
	iv = t - p->anchor;
	k = per ? (iv + per / 2) / per : 0;
	if (k >= 1 && k <= GS_PERIOD_SKIP && iv + tol >= k * per &&
	    iv <= k * per + tol) {
		/* On the beat, or a few beats on. A request comes at its
		 * timer's tick or after it, late by a wake-up or two: one
		 * early shows where the ticks are; one late moves the beat by
		 * an eighth of its lateness, so that the next, on time, is
		 * not taken for one off the beat. The period follows the
		 * beat, not the raw intervals, which the late ones lengthen.
		 */
		uint64_t beat = p->anchor + k * per;
		uint64_t at = t <= beat ? t : beat + (t - beat) / 8;

		/* Beats on, but the last request came in between (off the
		 * beat): none was skipped.
		 */
		if (k == 1 || t - p->last <= per + tol) {
			p->period = (7 * per + (at - p->anchor) / k) / 8;
			p->count++;
			p->misses = 0;
		} else if (++p->misses >= GS_PERIOD_CONFIRM) {
			p->period = iv;
			p->count = 1;
			p->misses = 0;
			at = t;
		}
		p->anchor = at;
	} else if (p->count >= GS_PERIOD_CONFIRM && k <= GS_PERIOD_SKIP &&
		   ++p->misses < GS_PERIOD_CONFIRM) {
		/* Off the beat (a late wake-up): keep the beat. After a
		 * longer silence the beat is stale.
		 */
	} else {
		/* A new period to confirm, unless the last request is too
		 * old to tell one.
		 */
		iv = t - p->last;
		p->period = p->last && iv <= GS_PERIOD_MAX_NS ? iv : 0;
		p->count = p->period != 0;
		p->misses = 0;
		p->anchor = t;
	}
	p->last = t;
predict:
	if (p->count < GS_PERIOD_CONFIRM)
		return 0;
	/* The beat after the one nearest the last request: one off the beat
	 * took the beat it was early or late for.
	 */
	return p->anchor + p->period * ((p->last - p->anchor + p->period / 2) /
					p->period + 1);
}
