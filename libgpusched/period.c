// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The beat of periodic requests (period.h). The period is an average of
 * the intervals that matched it (7/8 old, 1/8 new), counted from the last
 * request on the beat, so that one late request moves neither the period
 * nor the beat.
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
		/* On the beat, or a few beats on. */
		if (k == 1) {
			p->period = (7 * per + iv) / 8;
			p->count++;
			p->misses = 0;
		} else if (++p->misses >= GS_PERIOD_CONFIRM) {
			p->period = iv;
			p->count = 1;
			p->misses = 0;
		}
		p->anchor = t;
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
	/* The first beat after the last request. */
	return p->anchor + p->period * ((p->last - p->anchor) / p->period + 1);
}
