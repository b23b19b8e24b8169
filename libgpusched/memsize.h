/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * GPUSCHED_MEM_LIMIT's syntax, shared by the library and gpusched-run:
 * pure parsing, unit-tested (tests/unit/test_memsize.c).
 */
#ifndef GS_MEMSIZE_H
#define GS_MEMSIZE_H

#include <stdint.h>

/*
 * Parse a device memory limit: a whole number of bytes, optionally with
 * one suffix K, M, G or T (powers of 1024, either case), or a percentage
 * "N%" with N from 1 to 100. On success, sets exactly one of *@bytes
 * (>= 1) and *@pct (the other 0) and returns 0; -EINVAL for anything
 * else (empty, 0, signs, spaces, other suffixes), -ERANGE past 2^64 - 1.
 */
int gs_mem_size_parse(const char *s, uint64_t *bytes, unsigned int *pct);

#endif /* GS_MEMSIZE_H */
