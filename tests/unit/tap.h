/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A tiny TAP producer for the host unit tests.
 *
 * A program lists its tests in a table of struct tap_test and hands it to
 * tap_run(). Each test is one TAP line, "ok N - name" or "not ok N - name";
 * inside a test, CHECK(cond, fmt, ...) records a failure and prints it as a
 * "# " diagnostic (the first TAP_MAX_DIAGS of each test, then a count).
 *
 * Options understood by tap_run() (a program takes its own out first):
 *   --count        print the number of tests that would run, and exit
 *   --list         print their names, and exit
 *   --only SUB     run only the tests whose name contains SUB
 *   --no-plan      do not print "1..N" (a driver prints one plan for several
 *                  programs)
 *   --offset K     number the tests from K + 1
 *   --suffix S     append S to every test name
 */
#ifndef GS_TAP_H
#define GS_TAP_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TAP_MAX_DIAGS	12

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif
#ifndef __printf
#define __printf(a, b)	__attribute__((format(printf, a, b)))
#endif

struct tap_test {
	const char *name;
	void (*fn)(void);
};

static int tap_fails;		/* failed checks in the running test */
static int tap_diags;		/* diagnostics printed for it */

static __printf(1, 2) void tap_diag(const char *fmt, ...);
static void tap_diag(const char *fmt, ...)
{
	va_list ap;

	fputs("# ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
}

static __printf(5, 6) bool tap_check(bool ok, const char *expr,
				      const char *file, int line,
				      const char *fmt, ...);
static bool tap_check(bool ok, const char *expr, const char *file, int line,
		      const char *fmt, ...)
{
	va_list ap;

	if (ok)
		return true;
	tap_fails++;
	if (tap_diags++ >= TAP_MAX_DIAGS)
		return false;
	printf("# %s:%d: failed: %s\n#   ", file, line, expr);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
	return false;
}

/* CHECK(cond, fmt, ...): true when @cond holds; a diagnostic otherwise. */
#define CHECK(cond, ...) \
	tap_check(!!(cond), #cond, __FILE__, __LINE__, __VA_ARGS__)

static bool tap_selected(const struct tap_test *t, const char *only)
{
	return !only || strstr(t->name, only);
}

static double tap_secs(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * Runs the tests of @tests (@n of them) as the options in @argv say.
 * Returns the exit status: 0 when every test passed, 2 for a bad option.
 */
static int tap_run(const struct tap_test *tests, int n, int argc, char **argv)
{
	const char *only = NULL, *suffix = "";
	bool plan = true, count = false, list = false;
	int offset = 0, selected = 0, failed = 0, num, i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--count")) {
			count = true;
		} else if (!strcmp(argv[i], "--list")) {
			list = true;
		} else if (!strcmp(argv[i], "--no-plan")) {
			plan = false;
		} else if (!strcmp(argv[i], "--only") && i + 1 < argc) {
			only = argv[++i];
		} else if (!strcmp(argv[i], "--offset") && i + 1 < argc) {
			offset = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "--suffix") && i + 1 < argc) {
			suffix = argv[++i];
		} else {
			fprintf(stderr, "%s: unknown option %s\n", argv[0],
				argv[i]);
			return 2;
		}
	}

	for (i = 0; i < n; i++)
		if (tap_selected(&tests[i], only))
			selected++;
	if (count) {
		printf("%d\n", selected);
		return 0;
	}
	if (list) {
		for (i = 0; i < n; i++)
			if (tap_selected(&tests[i], only))
				printf("%s\n", tests[i].name);
		return 0;
	}
	if (plan)
		printf("1..%d\n", selected);
	fflush(stdout);

	num = offset;
	for (i = 0; i < n; i++) {
		double t0;

		if (!tap_selected(&tests[i], only))
			continue;
		tap_fails = 0;
		tap_diags = 0;
		t0 = tap_secs();
		tests[i].fn();
		if (tap_diags > TAP_MAX_DIAGS)
			tap_diag("(%d more failed checks not shown)",
				 tap_diags - TAP_MAX_DIAGS);
		printf("%sok %d - %s%s\n", tap_fails ? "not " : "", ++num,
		       tests[i].name, suffix);
		tap_diag("%.2f s", tap_secs() - t0);
		fflush(stdout);
		if (tap_fails)
			failed++;
	}
	return failed ? 1 : 0;
}

#endif /* GS_TAP_H */
