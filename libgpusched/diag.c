// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * GPUSCHED_DEBUG's syntax (diag.h).
 */
#include <string.h>

#include "diag.h"

static const struct {
	const char *word;
	unsigned int flags;
} words[] = {
	{ "log", GS_DIAG_LOG },
	{ "stats", GS_DIAG_STATS },
	{ "all", GS_DIAG_ALL },
	/* GPUSCHED_DEBUG was a switch for the log lines before it was a list. */
	{ "1", GS_DIAG_LOG },
	{ "yes", GS_DIAG_LOG },
	{ "on", GS_DIAG_LOG },
	{ "0", 0 },
	{ "no", 0 },
	{ "off", 0 },
	{ NULL, 0 }
};

/* The facilities that the @n bytes at @s name; -1 when they name none. */
static int word_flags(const char *s, size_t n)
{
	for (size_t i = 0; words[i].word; i++)
		if (strlen(words[i].word) == n && !memcmp(s, words[i].word, n))
			return (int)words[i].flags;
	return -1;
}

int gs_diag_parse(const char *s, unsigned int *flags,
		  gs_diag_unknown_fn unknown, void *arg)
{
	int nr_unknown = 0, f;
	size_t n;

	*flags = 0;
	while (s && *s) {
		n = strcspn(s, ",");
		f = n ? word_flags(s, n) : 0;	/* empty items name nothing */
		if (f >= 0) {
			*flags |= (unsigned int)f;
		} else {
			nr_unknown++;
			if (unknown)
				unknown(s, n, arg);
		}
		s += n + (s[n] == ',');
	}
	return nr_unknown;
}
