// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * GPUSCHED_MEM_LIMIT's syntax (memsize.h).
 */
#include <errno.h>
#include <stddef.h>

#include "memsize.h"

int gs_mem_size_parse(const char *s, uint64_t *bytes, unsigned int *pct)
{
	unsigned int shift = 0;
	uint64_t v = 0;
	const char *p;

	*bytes = 0;
	*pct = 0;
	if (!s)
		return -EINVAL;
	for (p = s; *p >= '0' && *p <= '9'; p++) {
		if (v > (UINT64_MAX - (uint64_t)(*p - '0')) / 10)
			return -ERANGE;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	if (p == s || !v)
		return -EINVAL;
	switch (*p) {
	case '\0':
		break;
	case '%':
		if (p[1] || v > 100)
			return -EINVAL;
		*pct = (unsigned int)v;
		return 0;
	case 'k': case 'K':
		shift = 10;
		break;
	case 'm': case 'M':
		shift = 20;
		break;
	case 'g': case 'G':
		shift = 30;
		break;
	case 't': case 'T':
		shift = 40;
		break;
	default:
		return -EINVAL;
	}
	if (shift && p[1])
		return -EINVAL;
	if (shift && v > UINT64_MAX >> shift)
		return -ERANGE;
	*bytes = v << shift;
	return 0;
}
