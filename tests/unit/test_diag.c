// SPDX-License-Identifier: GPL-2.0
/*
 * Host tests of GPUSCHED_DEBUG's syntax (libgpusched/diag.c), as the
 * library reads it. tests/unit/diag.t runs it plainly and under
 * ASan+UBSan.
 */
#include <stdio.h>
#include <string.h>

#include "tap.h"
#include "diag.h"

/* The unknown words the parser named, each in brackets. */
static char named[256];

static void name_word(const char *word, size_t len, void *arg)
{
	int *calls = arg;
	size_t at = strlen(named);

	(*calls)++;
	snprintf(named + at, sizeof(named) - at, "[%.*s]", (int)len, word);
}

/* @s parses to @want, naming the unknown words @want_named ("" for none). */
static void parses(const char *s, unsigned int want, const char *want_named)
{
	unsigned int flags = 0xff;
	int calls = 0, n;

	named[0] = '\0';
	n = gs_diag_parse(s, &flags, name_word, &calls);
	CHECK(flags == want && n == calls && !strcmp(named, want_named),
	      "\"%s\": flags %#x, unknown %s (got %#x, %d unknown, %d named: %s)",
	      s ? s : "(null)", want, want_named, flags, n, calls, named);
}

static void t_words(void)
{
	parses("log", GS_DIAG_LOG, "");
	parses("stats", GS_DIAG_STATS, "");
	parses("all", GS_DIAG_ALL, "");
}

static void t_lists(void)
{
	parses("log,stats", GS_DIAG_ALL, "");
	parses("stats,log", GS_DIAG_ALL, "");
	parses("stats,stats", GS_DIAG_STATS, "");
	parses("log,all", GS_DIAG_ALL, "");
	parses(",stats,", GS_DIAG_STATS, "");
	parses("log,,stats", GS_DIAG_ALL, "");
}

static void t_switch(void)
{
	parses("1", GS_DIAG_LOG, "");
	parses("yes", GS_DIAG_LOG, "");
	parses("on", GS_DIAG_LOG, "");
	parses("1,stats", GS_DIAG_ALL, "");
}

static void t_off(void)
{
	parses(NULL, 0, "");
	parses("", 0, "");
	parses("0", 0, "");
	parses("no", 0, "");
	parses("off", 0, "");
	parses(",", 0, "");
	/* 0 names nothing: it does not take back what others name. */
	parses("0,stats", GS_DIAG_STATS, "");
}

static void t_unknown(void)
{
	parses("bogus", 0, "[bogus]");
	parses("log,bogus", GS_DIAG_LOG, "[bogus]");
	parses("bogus,stats,2", GS_DIAG_STATS, "[bogus][2]");
	parses("LOG", 0, "[LOG]");
	parses("Stats", 0, "[Stats]");
	parses("log ", 0, "[log ]");
	parses(" stats", 0, "[ stats]");
	parses("log stats", 0, "[log stats]");
	parses("logs", 0, "[logs]");
	parses("lo", 0, "[lo]");
	parses("all=1", 0, "[all=1]");
	parses("log;stats", 0, "[log;stats]");
}

static void t_no_callback(void)
{
	unsigned int flags;
	int n = gs_diag_parse("stats,x,y", &flags, NULL, NULL);

	CHECK(n == 2 && flags == GS_DIAG_STATS,
	      "without a callback: 2 unknown, stats (got %d, %#x)", n, flags);
}

static const struct tap_test tests[] = {
	{ "each facility alone", t_words },
	{ "lists of facilities", t_lists },
	{ "1 (and yes, on) is log", t_switch },
	{ "0, empty (and no, off) are off", t_off },
	{ "unknown words are named, each once, and ignored", t_unknown },
	{ "unknown words counted without a callback", t_no_callback },
};

int main(int argc, char **argv)
{
	return tap_run(tests, ARRAY_SIZE(tests), argc, argv);
}
