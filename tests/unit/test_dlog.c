// SPDX-License-Identifier: GPL-2.0
/*
 * Host tests of the daemon's limit on lines a client can make it write
 * again and again (daemon/dlog.c, gs_log_allow()), with made-up times.
 * tests/unit/dlog.t runs it plainly and under ASan+UBSan.
 */
#include <stdint.h>

#include "tap.h"
#include "dlog.h"

#define S 1000000000ull

/* @n lines at @t; returns how many were let through, *@missed the last said. */
static int lines(struct gs_log_rl *rl, uint64_t t, int n, unsigned int *missed)
{
	unsigned int m;
	int let = 0;

	for (int i = 0; i < n; i++)
		if (gs_log_allow(rl, t, &m)) {
			let++;
			*missed = m;
		}
	return let;
}

static void t_burst(void)
{
	struct gs_log_rl rl = { 0 };
	unsigned int missed = 99;

	CHECK(lines(&rl, 7 * S, 1000, &missed) == GS_LOG_BURST,
	      "a flood in one instant: %d let through", GS_LOG_BURST);
	CHECK(missed == 0, "none held back before the burst's lines: %u", missed);
	CHECK(lines(&rl, 7 * S + GS_LOG_INTERVAL_NS - 1, 5, &missed) == 0,
	      "none more in the same interval");
	missed = 0;
	CHECK(lines(&rl, 7 * S + GS_LOG_INTERVAL_NS, 1, &missed) == 1,
	      "one in the next interval");
	CHECK(missed == 1000 - GS_LOG_BURST + 5,
	      "which says how many were held back: %u", missed);
	CHECK(lines(&rl, 7 * S + GS_LOG_INTERVAL_NS, 1, &missed) == 1 && missed == 0,
	      "and the next says none");
}

static void t_quiet(void)
{
	struct gs_log_rl rl = { 0 };
	unsigned int missed = 0;
	int let = 0;

	/* One line a second, for a minute: every one. */
	for (uint64_t t = 0; t < 60; t++)
		let += lines(&rl, t * S, 1, &missed);
	CHECK(let == 60, "one a second: %d of 60 let through", let);
	CHECK(missed == 0, "none held back: %u", missed);
}

static const struct tap_test tests[] = {
	{ "a flood: a burst an interval, then how many were held back", t_burst },
	{ "a line now and then always goes through", t_quiet },
};

int main(int argc, char **argv)
{
	return tap_run(tests, ARRAY_SIZE(tests), argc, argv);
}
