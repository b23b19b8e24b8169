/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * GPUSCHED_DEBUG's syntax: pure parsing, unit-tested
 * (tests/unit/test_diag.c).
 */
#ifndef GS_DIAG_H
#define GS_DIAG_H

#include <stddef.h>

#define GS_DIAG_LOG	0x1u	/* log lines on stderr as things happen */
#define GS_DIAG_STATS	0x2u	/* the counters on stderr at exit */
#define GS_DIAG_ALL	(GS_DIAG_LOG | GS_DIAG_STATS)

/* Called with each word of the list that names no facility. */
typedef void (*gs_diag_unknown_fn)(const char *word, size_t len, void *arg);

/**
 * gs_diag_parse() - parse a GPUSCHED_DEBUG value
 * @s: a comma-separated list of log, stats and all; 1 is log, 0 names
 *     nothing (so "0" is off), and so do empty items; yes/on and no/off
 *     are taken as 1 and 0, as in the library's other switches. NULL is
 *     the empty list.
 * @flags: set to the GS_DIAG_* facilities the known words name
 * @unknown: called once for each other word, in order (may be NULL)
 * @arg: passed to @unknown
 *
 * Words are exact and lower case, without spaces.
 *
 * Return: the number of words that name no facility; *@flags holds the
 * others' whatever it is.
 */
int gs_diag_parse(const char *s, unsigned int *flags,
		  gs_diag_unknown_fn unknown, void *arg);

#endif /* GS_DIAG_H */
