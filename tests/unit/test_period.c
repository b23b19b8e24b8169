// SPDX-License-Identifier: GPL-2.0
/*
 * Host tests of the library's period tracker (libgpusched/period.c): how
 * the busy holder learns a periodic latency-class client's beat from the
 * times it is asked to yield, and the queue it may keep until the next.
 * Made-up request times, in ns.
 * tests/unit/period.t runs it plainly and under ASan+UBSan.
 */
#include <stdint.h>

#include "tap.h"
#include "period.h"

#define US 1000ull
#define MS 1000000ull

/* Requests every @per from @t0, @n of them; returns the last prediction. */
static uint64_t beat(struct gs_period *p, uint64_t t0, uint64_t per, int n)
{
	uint64_t next = 0;

	for (int i = 0; i < n; i++)
		next = gs_period_note(p, t0 + (uint64_t)i * per);
	return next;
}

static void t_learn(void)
{
	struct gs_period p = { 0 };
	uint64_t t0 = 5 * MS, next;

	CHECK(!gs_period_note(&p, t0), "one request tells nothing");
	CHECK(!gs_period_note(&p, t0 + 2 * MS), "one interval is not a period");
	CHECK(!gs_period_note(&p, t0 + 4 * MS), "nor two");
	next = gs_period_note(&p, t0 + 6 * MS);
	CHECK(next == t0 + 8 * MS, "three alike: the next at +8 ms (got %llu us after t0)",
	      (unsigned long long)((next - t0) / US));
	CHECK(p.period == 2 * MS, "period %llu us", (unsigned long long)(p.period / US));
}

static void t_jitter(void)
{
	struct gs_period p = { 0 };
	static const int64_t j[] = { 0, 40, -30, 60, -50, 10, -20, 50, -60, 30 };
	uint64_t next = 0;

	/* 10 ms with +-60 us of wake-up jitter: within the tolerance. */
	for (unsigned int i = 0; i < 40; i++)
		next = gs_period_note(&p, 100 * MS + i * 10 * MS +
				      (uint64_t)(j[i % 10] * (int64_t)US));
	CHECK(p.count >= 30, "jittered requests keep matching (%u)", p.count);
	CHECK(p.period > 10 * MS - 50 * US && p.period < 10 * MS + 50 * US,
	      "period %llu us", (unsigned long long)(p.period / US));
	CHECK(next && next > 100 * MS + 39 * 10 * MS, "a prediction after the last request");
}

static void t_burst(void)
{
	struct gs_period p = { 0 };
	uint64_t next = beat(&p, 0, 5 * MS, 5);

	/* A request that asks again 300 us later is the same request. */
	CHECK(gs_period_note(&p, 20 * MS + 300 * US) == next,
	      "a second ask within 1 ms changes nothing");
	CHECK(gs_period_note(&p, 20 * MS) == next, "nor the same time seen again");
	CHECK(gs_period_note(&p, 19 * MS) == next, "nor an older one");
	CHECK(p.period == 5 * MS, "period %llu us", (unsigned long long)(p.period / US));
}

static void t_late_one(void)
{
	struct gs_period p = { 0 };
	uint64_t next;

	beat(&p, 0, 4 * MS, 6);		/* ... 20 ms */
	/* One request 1.5 ms late (off the beat), then back on it. */
	next = gs_period_note(&p, 25500 * US);
	CHECK(next == 28 * MS, "a late request keeps the beat: next at 28 ms (got %llu us)",
	      (unsigned long long)(next / US));
	next = gs_period_note(&p, 28 * MS);
	CHECK(next == 32 * MS && p.period == 4 * MS,
	      "the next one on the beat matches (next %llu us, period %llu us)",
	      (unsigned long long)(next / US), (unsigned long long)(p.period / US));
}

static void t_skips(void)
{
	struct gs_period p = { 0 };
	uint64_t next;

	beat(&p, 0, 2 * MS, 6);		/* ... 10 ms */
	/* Requests skipped: the next at 16 ms (3 beats on). */
	next = gs_period_note(&p, 16 * MS);
	CHECK(next == 18 * MS && p.period == 2 * MS,
	      "skipped beats keep the period (next %llu us)", (unsigned long long)(next / US));
	/* Always every other beat: the period is relearnt as 4 ms. */
	gs_period_note(&p, 20 * MS);
	gs_period_note(&p, 24 * MS);
	gs_period_note(&p, 28 * MS);
	next = beat(&p, 32 * MS, 4 * MS, 3);
	CHECK(p.period == 4 * MS, "a period always skipped is relearnt: %llu us",
	      (unsigned long long)(p.period / US));
	CHECK(next == 44 * MS, "next at 44 ms (got %llu us)", (unsigned long long)(next / US));
}

static void t_break(void)
{
	struct gs_period p = { 0 };

	beat(&p, 0, 3 * MS, 6);		/* ... 15 ms */
	/* Three in a row off the beat: not periodic any more. */
	gs_period_note(&p, 19300 * US);
	gs_period_note(&p, 24100 * US);
	CHECK(gs_period_note(&p, 25700 * US) == 0,
	      "three requests in a row off the beat drop the prediction");
	/* A new steady period is learnt from scratch. */
	CHECK(beat(&p, 40 * MS, 7 * MS, 4) == 40 * MS + 28 * MS,
	      "and a new one is learnt (period %llu us)", (unsigned long long)(p.period / US));
}

static void t_gap(void)
{
	struct gs_period p = { 0 };

	beat(&p, 0, 2 * MS, 6);
	/* Silent for two seconds, then requests again. */
	CHECK(gs_period_note(&p, 2010 * MS) == 0, "after a long silence: no prediction");
	CHECK(p.period == 0, "and no period from the silence (%llu us)",
	      (unsigned long long)(p.period / US));
	CHECK(beat(&p, 2012 * MS, 2 * MS, 3) == 2018 * MS, "relearnt after three more");
}

static void t_irregular(void)
{
	struct gs_period p = { 0 };
	uint64_t t = 0, x = 88172645463325252ull;
	int predicted = 0;

	/* Poisson-like arrivals (1-20 ms apart): rarely three alike. */
	for (int i = 0; i < 2000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		t += MS + x % (19 * MS);
		predicted += gs_period_note(&p, t) != 0;
	}
	CHECK(predicted < 100, "irregular requests are predicted rarely (%d of 2000)", predicted);
}

static void t_late_then_on_time(void)
{
	struct gs_period p = { 0 };
	uint64_t next = 0, t;
	int64_t off;

	/* A 2 ms timer, each request 30 us after its tick, one in eight
	 * 240 us after (a late wake-up, within the 250 us tolerance).
	 */
	for (unsigned int i = 0; i < 64; i++) {
		t = 10 * MS + i * 2 * MS + (i % 8 == 7 ? 240 : 30) * US;
		next = gs_period_note(&p, t);
	}
	CHECK(p.count >= 60 && p.misses == 0,
	      "a late request does not put the next one off the beat (%u matched, %u missed)",
	      p.count, p.misses);
	off = (int64_t)next - (int64_t)(10 * MS + 64 * 2 * MS);
	CHECK(off > -60 * (int64_t)US && off < 60 * (int64_t)US,
	      "the prediction stays on the ticks: %lld us off", (long long)(off / (int64_t)US));
	CHECK(p.period > 2 * MS - 10 * US && p.period < 2 * MS + 10 * US,
	      "period %llu us", (unsigned long long)(p.period / US));
}

static void t_off_beat_next(void)
{
	struct gs_period p = { 0 };
	uint64_t next;

	beat(&p, 0, 2 * MS, 6);		/* ... 10 ms */
	/* 300 us early for the beat at 12 ms: off the beat, and that beat
	 * taken; the next is at 14 ms, not 12.
	 */
	next = gs_period_note(&p, 11700 * US);
	CHECK(next == 14 * MS, "after an early request off the beat: next at 14 ms (got %llu us)",
	      (unsigned long long)(next / US));
	/* 300 us late for 14 ms: the next at 16 ms. */
	next = gs_period_note(&p, 14300 * US);
	CHECK(next == 16 * MS, "after a late one: next at 16 ms (got %llu us)",
	      (unsigned long long)(next / US));
	next = gs_period_note(&p, 16 * MS);
	CHECK(next == 18 * MS && p.misses == 0 && p.period == 2 * MS,
	      "back on the beat (next %llu us, %u missed)",
	      (unsigned long long)(next / US), p.misses);
}

static void t_tol(void)
{
	CHECK(gs_period_tol(0) == GS_PERIOD_TOL_NS, "tolerance at least 200 us");
	CHECK(gs_period_tol(10 * MS) == 1250 * US, "an eighth of 10 ms");
}

/* 300 us promised, 2 ms the most: the queue a holder may keep. */
static void t_bound(void)
{
	const uint64_t lq = 300 * US, most = 2 * MS, next = 10 * MS;

	CHECK(gs_period_bound(0, 5 * MS, lq, most) == lq,
	      "no request predicted: the promised bound");
	CHECK(gs_period_bound(next, 9 * MS, lq, most) == 1 * MS,
	      "1 ms before it: what ends by then (got %llu us)",
	      (unsigned long long)(gs_period_bound(next, 9 * MS, lq, most) / US));
	CHECK(gs_period_bound(next, 5 * MS, lq, most) == most,
	      "far off: no more than the most");
	CHECK(gs_period_bound(next, next - 100 * US, lq, most) == lq,
	      "100 us before it: still the promised bound, not less");
	CHECK(gs_period_bound(next, next, lq, most) == lq,
	      "when it is due: the promised bound");
	CHECK(gs_period_bound(next, next + 400 * US, lq, most) == lq,
	      "overdue: the promised bound, not one launch at a time");
	CHECK(gs_period_bound(next, 5 * MS, 3 * MS, most) == 3 * MS,
	      "a promise above the most is kept");
}

static const struct tap_test tests[] = {
	{ "three intervals alike make a period", t_learn },
	{ "wake-up jitter within the tolerance", t_jitter },
	{ "a request asking again is one", t_burst },
	{ "one late request keeps the beat", t_late_one },
	{ "late wake-ups within the tolerance move the beat little", t_late_then_on_time },
	{ "after a request off the beat, the next beat", t_off_beat_next },
	{ "skipped requests, and a period always skipped", t_skips },
	{ "three off the beat break it; a new one is learnt", t_break },
	{ "a long silence is no period", t_gap },
	{ "irregular requests are not periodic", t_irregular },
	{ "tolerance", t_tol },
	{ "the queue beside a predicted request", t_bound },
};

int main(int argc, char **argv)
{
	return tap_run(tests, ARRAY_SIZE(tests), argc, argv);
}
