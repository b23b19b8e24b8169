/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The beat of periodic requests: a latency-class client asking for the GPU
 * at a steady period (a probe, an inference server on a timer), as the
 * holder sees it asked to yield or nudged, and the queue the holder may
 * keep until the next. Pure arithmetic on times in ns, so that
 * tests/unit/test_period.c drives it with made-up sequences.
 */
#ifndef GS_PERIOD_H
#define GS_PERIOD_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Requests closer than GS_PERIOD_BURST_NS are one (a request of several
 * launches may ask again). GS_PERIOD_CONFIRM intervals alike, to within an
 * eighth of the period or GS_PERIOD_TOL_NS, make a period. Fewer than
 * GS_PERIOD_CONFIRM requests in a row off the beat, or up to
 * GS_PERIOD_SKIP beats on, do not break it; a period that is always
 * skipped is a multiple, relearnt; a longer silence ends it.
 */
#define GS_PERIOD_BURST_NS	1000000ull
#define GS_PERIOD_CONFIRM	3
#define GS_PERIOD_TOL_NS	200000ull
#define GS_PERIOD_SKIP		4
#define GS_PERIOD_MAX_NS	1000000000ull

struct gs_period {
	uint64_t last;		/* the last request */
	uint64_t anchor;	/* the last request on the beat */
	uint64_t period;	/* 0: none yet */
	unsigned int count;	/* intervals that matched it */
	unsigned int misses;	/* requests in a row that did not */
};

/* How far off the beat a request may come. */
static inline uint64_t gs_period_tol(uint64_t period)
{
	return period / 8 > GS_PERIOD_TOL_NS ? period / 8 : GS_PERIOD_TOL_NS;
}

/* Did a request at @t come off the beat predicted at @due, by more than @tol? */
static inline bool gs_period_off(uint64_t t, uint64_t due, uint64_t tol)
{
	return t + tol < due || t > due + tol;
}

/*
 * A request came at @t (not before the last one). Returns when the next is
 * expected, or 0 while no period holds.
 */
uint64_t gs_period_note(struct gs_period *p, uint64_t t)
	__attribute__((visibility("hidden")));

/*
 * The GPU time a holder may keep queued at @now beside a latency-class
 * client whose next request is predicted at @next (0: none): what ends by
 * then, up to @most, and never less than @promised, the client's bound.
 * Less would serve the client sooner than promised at the holder's cost:
 * a GPU idle between launches made one at a time.
 */
static inline uint64_t gs_period_bound(uint64_t next, uint64_t now,
				       uint64_t promised, uint64_t most)
{
	uint64_t ns;

	if (!next || now >= next || next - now <= promised)
		return promised;
	ns = next - now;
	if (ns > most)
		ns = most;
	return ns > promised ? ns : promised;
}

#endif /* GS_PERIOD_H */
