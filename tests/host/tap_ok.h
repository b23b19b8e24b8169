/* SPDX-License-Identifier: GPL-2.0 */
/*
 * TAP for the host test programs that number their checks as they go
 * (gs-token-test, gs-mem-test): ok() prints a check's line, tap_skip() a
 * skipped one, tap_done() the plan after the last and the exit status.
 */
#ifndef GS_TAP_OK_H
#define GS_TAP_OK_H

#include <stdarg.h>
#include <stdio.h>

static int tap_n, tap_failed;

/* One check: "ok N - ..." when @cond holds, else "not ok N - ...". */
static inline __attribute__((format(printf, 2, 3)))
void ok(int cond, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d - ", cond ? "" : "not ", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	if (!cond)
		tap_failed++;
}

/* A check not made, for @why. */
static inline void tap_skip(const char *why)
{
	printf("ok %d - # SKIP %s\n", ++tap_n, why);
	fflush(stdout);
}

/* The plan, after the last check; the exit status: 1 if one failed. */
static inline int tap_done(void)
{
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}

#endif /* GS_TAP_OK_H */
