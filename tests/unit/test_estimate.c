// SPDX-License-Identifier: GPL-2.0
/*
 * Host tests of the library's launch-length arithmetic
 * (libgpusched/estimate.c): the mean and deviation of GPU-timed samples,
 * the table of lengths by what was launched, launch keys, the
 * conversion of cuEventElapsedTime's milliseconds, the naps of a wait
 * for an event, and which frames are samples. Made-up samples in ns.
 * tests/unit/estimate.t runs it plainly and under ASan+UBSan.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "tap.h"
#include "estimate.h"

#define US 1000ull

static void t_first(void)
{
	struct gs_est e = { 0 };

	CHECK(!gs_est_unsteady(&e), "no sample: not unsteady");
	gs_est_add(&e, 100 * US);
	CHECK(e.mean == 100 * US, "the first sample is the mean (%llu)",
	      (unsigned long long)e.mean);
	CHECK(e.dev == 0, "and no deviation yet");
}

static void t_follow(void)
{
	struct gs_est e = { 0 };
	int n = 0;

	gs_est_add(&e, 1500 * US);
	/* Kernels that shrink to 100 us: the mean follows within 20 samples. */
	while (e.mean > 110 * US && n < 100) {
		gs_est_add(&e, 100 * US);
		n++;
	}
	CHECK(n > 0 && n <= 20, "1500 -> 100 us within 20 samples (%d)", n);
	CHECK(e.mean >= 100 * US, "never below the samples (%llu)",
	      (unsigned long long)e.mean);
}

static void t_steady(void)
{
	struct gs_est e = { 0 };

	for (int i = 0; i < 64; i++)
		gs_est_add(&e, (i & 1 ? 105 : 95) * US);
	CHECK(!gs_est_unsteady(&e), "+-5%% is steady (mean %llu dev %llu)",
	      (unsigned long long)e.mean, (unsigned long long)e.dev);
	for (int i = 0; i < 64; i++)
		gs_est_add(&e, (i % 8 == 7 ? 1000 : 20) * US);
	CHECK(gs_est_unsteady(&e), "seven of 20 us, one of 1 ms is unsteady (mean %llu dev %llu)",
	      (unsigned long long)e.mean, (unsigned long long)e.dev);
}

static void t_klen(void)
{
	struct gs_klen tab[16];
	struct gs_klen *a, *b;

	memset(tab, 0, sizeof(tab));
	CHECK(!gs_klen_find(tab, 16, 4, 7, false), "absent without add");
	a = gs_klen_find(tab, 16, 4, 7, true);
	CHECK(a && a->key == 7 && a->len.mean == 0, "made with add");
	gs_est_add(&a->len, 50 * US);
	CHECK(a->len.mean == 50 * US, "the first sample is the length");
	gs_est_add(&a->len, 150 * US);
	CHECK(a->len.mean == 75 * US, "then averaged 3:1 (%llu)",
	      (unsigned long long)a->len.mean);
	CHECK(gs_klen_find(tab, 16, 4, 7, false) == a, "found again");
	/* 16 + 7: the same home slot; probed to the next. */
	b = gs_klen_find(tab, 16, 4, 16 * 1024 + 7, true);
	CHECK(b && b != a && a->key == 7, "a colliding key takes another place");
}

static void t_klen_full(void)
{
	struct gs_klen tab[4];
	struct gs_klen *k;

	memset(tab, 0, sizeof(tab));
	for (uint64_t key = 1; key <= 4; key++)
		gs_est_add(&gs_klen_find(tab, 4, 4, key, true)->len, key * US);
	k = gs_klen_find(tab, 4, 4, 99, true);
	CHECK(k && k->key == 99 && k->len.mean == 0 && k->len.dev == 0, "a full table gives the newest key a place");
	CHECK(!gs_klen_find(tab, 4, 4, 1000, false), "and an absent key is still absent");
}

static void t_keys(void)
{
	static const int f, g;
	uint64_t a = gs_launch_key(&f, 1, 1, 1, 128, 1, 1, 0);

	CHECK(a != 0, "never 0");
	CHECK(a == gs_launch_key(&f, 1, 1, 1, 128, 1, 1, 0), "the same launch, the same key");
	CHECK(a != gs_launch_key(&g, 1, 1, 1, 128, 1, 1, 0), "another function, another key");
	CHECK(a != gs_launch_key(&f, 2, 1, 1, 128, 1, 1, 0), "another grid, another key");
	CHECK(gs_launch_key(NULL, 0, 0, 0, 0, 0, 0, 0) != 0, "nothing at all: still not 0");
}

static void t_elapsed(void)
{
	CHECK(gs_elapsed_ns(0.1f) > 99 * US && gs_elapsed_ns(0.1f) < 101 * US,
	      "0.1 ms is 100 us (%llu ns)", (unsigned long long)gs_elapsed_ns(0.1f));
	CHECK(gs_elapsed_ns(0.0f) == 1, "0 ms is a sample of 1 ns");
	CHECK(gs_elapsed_ns(-1.0f) == 0, "negative is none");
	CHECK(gs_elapsed_ns(NAN) == 0, "NaN is none");
	CHECK(gs_elapsed_ns(60000.0f) == 0, "a minute is none");
	CHECK(gs_elapsed_ns(50.0f) == 50000 * US, "50 ms (%llu ns)",
	      (unsigned long long)gs_elapsed_ns(50.0f));
}

static void t_near(void)
{
	struct gs_est e = { .mean = 50000 * US, .dev = 4000 * US };

	CHECK(gs_est_near(&e, 100000 * US) == 92000 * US,
	      "twice the deviation before the end (%llu)",
	      (unsigned long long)gs_est_near(&e, 100000 * US));
	CHECK(gs_est_near(&e, 5000 * US) == 0, "or any time, close to 0");
	e.dev = 0;
	CHECK(gs_est_near(&e, 100000 * US) == 100000 * US,
	      "steady lengths: the end itself");
}

static void t_least(void)
{
	struct gs_est e = { 0 };

	CHECK(gs_est_least(&e) == 0, "nothing measured: 0");
	for (int i = 0; i < 32; i++)
		gs_est_add(&e, 100 * US);
	CHECK(gs_est_least(&e) == 100 * US, "steady lengths: the mean (%llu)",
	      (unsigned long long)gs_est_least(&e));
	e = (struct gs_est){ .mean = 100 * US, .dev = 20 * US };
	CHECK(gs_est_least(&e) == 60 * US, "twice the deviation below it (%llu)",
	      (unsigned long long)gs_est_least(&e));
	/* One function of 25 to 200 us, by its argument. */
	e = (struct gs_est){ 0 };
	for (int i = 0; i < 64; i++)
		gs_est_add(&e, (25 + (uint64_t)(i * 37 % 8) * 25) * US);
	CHECK(gs_est_least(&e) < 25 * US,
	      "widely varied lengths: no more than the shortest (%llu, mean %llu dev %llu)",
	      (unsigned long long)gs_est_least(&e), (unsigned long long)e.mean,
	      (unsigned long long)e.dev);
}

static void t_scale(void)
{
	unsigned int s = 0;

	CHECK(gs_scale_next(0, 0, 100 * US, 8) == GS_SCALE_ONE,
	      "nothing held: the whole");
	CHECK(gs_scale_next(0, 100 * US, 150 * US, 8) == GS_SCALE_ONE,
	      "a span longer than its lengths (gaps): still the whole");
	CHECK(gs_scale_next(0, 200 * US, 100 * US, 8) == 7 * GS_SCALE_ONE / 8,
	      "half as long: a quarter of the way there (%u)",
	      gs_scale_next(0, 200 * US, 100 * US, 8));
	/* Two streams whose kernels wait for each other: each timed 155 us,
	 * 105 us of the GPU's time. The span holds the lengths at the
	 * scale so far, and the scale converges where they match it.
	 */
	for (int i = 0; i < 40; i++)
		s = gs_scale_next(s, 100 * 155 * US * (s ? s : GS_SCALE_ONE) /
				     GS_SCALE_ONE, 100 * 105 * US, 8);
	CHECK(s > 690 && s < 696, "converges to 105/155 of the whole (%u)", s);
	s = 0;
	for (int i = 0; i < 100; i++)
		s = gs_scale_next(s, 1000 * US * (s ? s : GS_SCALE_ONE) /
				     GS_SCALE_ONE, 1 * US, 8);
	CHECK(s == GS_SCALE_ONE / 8, "never below one stream's part of 8 (%u)", s);
}

static void t_nap(void)
{
	struct gs_nap n = { 10 * US, 200 * US, 0 };
	uint64_t now = 1000000 * US, near = now + 1000 * US, until = now + 5000 * US;
	uint64_t want[] = { 10, 20, 40, 80, 160, 200, 200 };
	uint64_t t;
	bool ok = true;

	/* Before @near: doubling from 10 us up to 200 us, never more. */
	for (unsigned int i = 0; i < ARRAY_SIZE(want); i++) {
		t = gs_nap_next(&n, now, UINT64_MAX, UINT64_MAX);
		ok &= t - now == want[i] * US;
	}
	CHECK(ok, "naps double from the least up to the most, never more");
	/* Toward @near: the nap ends there, and from there on is the least. */
	n.cur = 0;
	t = now;
	while (t < near)
		t = gs_nap_next(&n, t, near, until);
	CHECK(t == near, "no nap crosses the point from which the event may come");
	ok = true;
	for (int i = 0; i < 5; i++) {
		uint64_t next = gs_nap_next(&n, t, near, until);

		ok &= next - t == 10 * US;
		t = next;
	}
	CHECK(ok, "from there on each nap is the least");
	CHECK(gs_nap_next(&n, until - 3 * US, near, until) == until,
	      "and none goes past the end of the wait");
}

static void t_nap_most(void)
{
	CHECK(gs_nap_most(100 * US, 200 * US, 10 * US) == 50 * US,
	      "little work behind the event: naps of half of it at most");
	CHECK(gs_nap_most(12 * US, 200 * US, 10 * US) == 10 * US,
	      "and never shorter than the least");
	CHECK(gs_nap_most(200 * US, 200 * US, 10 * US) == 0,
	      "as much as the spin time behind it: the usual naps will do");
	CHECK(gs_nap_most(UINT64_MAX, 200 * US, 10 * US) == 0,
	      "nothing known behind it: the usual naps");
	CHECK(gs_nap_most(0, 0, 10 * US) == 0, "spin time 0: always the usual naps");
}

static void t_time_interval(void)
{
	CHECK(gs_time_interval(64, 20 * US, 20000 * US, 1024) == 1000,
	      "20 us kernels, 20 ms of GPU time to one timed: one in 1000");
	CHECK(gs_time_interval(64, 100 * US, 20000 * US, 1024) == 200,
	      "100 us kernels: one in 200");
	CHECK(gs_time_interval(64, 1000 * US, 20000 * US, 1024) == 64,
	      "1 ms kernels: the interval given, which is rarer");
	CHECK(gs_time_interval(64, 0, 20000 * US, 1024) == 64,
	      "not measured yet: the interval given");
	CHECK(gs_time_interval(64, 5 * US, 20000 * US, 1024) == 1024,
	      "5 us kernels: no more than the most");
	CHECK(gs_time_interval(16, 1, UINT64_MAX, 1024) == 1024,
	      "a huge ratio: the most, not wrapped");
}

static void t_frame_holds(void)
{
	CHECK(gs_frame_holds(20 * US, 0, 8),
	      "no host time in the frame: a sample");
	CHECK(gs_frame_holds(1 * US, 0, 0),
	      "however short, and whatever the part");
	CHECK(gs_frame_holds(800 * US, 100 * US, 8),
	      "an eighth of the frame away: a sample");
	CHECK(!gs_frame_holds(799 * US, 100 * US, 8),
	      "a little more than an eighth: none");
	CHECK(!gs_frame_holds(900 * US, 600 * US, 8),
	      "a 300 us kernel framed with 600 us of host time: none");
	CHECK(gs_frame_holds(5000 * US, 300 * US, 8),
	      "a 5 ms kernel with 300 us away: a sample");
	CHECK(!gs_frame_holds(7, 1, 8),
	      "a frame of fewer ns than the part: any host time is too much");
	CHECK(!gs_frame_holds(UINT64_MAX, 1, 0),
	      "part 0: no host time at all");
	CHECK(gs_frame_holds(UINT64_MAX, UINT64_MAX / 8, 8),
	      "huge values: divided, not wrapped");
}

static const struct tap_test tests[] = {
	{ "the first sample is the mean", t_first },
	{ "the mean follows kernels that get shorter", t_follow },
	{ "steady and unsteady lengths", t_steady },
	{ "lengths by what was launched", t_klen },
	{ "a full table", t_klen_full },
	{ "launch keys", t_keys },
	{ "milliseconds to nanoseconds", t_elapsed },
	{ "where a launch may end", t_near },
	{ "the least a launch is likely to take", t_least },
	{ "lengths of several streams against the GPU's clock", t_scale },
	{ "naps toward an event", t_nap },
	{ "naps with little of our work behind the event", t_nap_most },
	{ "launches to one timed, by GPU time", t_time_interval },
	{ "frames that may hold host time", t_frame_holds },
};

int main(int argc, char **argv)
{
	return tap_run(tests, ARRAY_SIZE(tests), argc, argv);
}
