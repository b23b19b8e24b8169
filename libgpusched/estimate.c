// SPDX-License-Identifier: LGPL-2.1-or-later
/* Launch lengths from the GPU's clock (estimate.h). */
#include <stddef.h>

#include "estimate.h"

void gs_est_add(struct gs_est *e, uint64_t ns)
{
	uint64_t off;

	if (!e->mean) {
		e->mean = ns;
		return;
	}
	off = ns > e->mean ? ns - e->mean : e->mean - ns;
	e->dev = (3 * e->dev + off) / 4;
	e->mean = (3 * e->mean + ns) / 4;
}

bool gs_est_unsteady(const struct gs_est *e)
{
	return e->mean && 4 * e->dev > e->mean;
}

uint64_t gs_est_least(const struct gs_est *e)
{
	return gs_est_near(e, e->mean);
}

uint64_t gs_launch_key(const void *f, unsigned int gx, unsigned int gy,
		       unsigned int gz, unsigned int bx, unsigned int by,
		       unsigned int bz, unsigned int shmem)
{
	const uint64_t m = 0x9e3779b97f4a7c15ull;
	uint64_t k = (uint64_t)(uintptr_t)f;

	k = (k ^ gx) * m;
	k = (k ^ ((uint64_t)gy << 32 | gz)) * m;
	k = (k ^ ((uint64_t)bx << 32 | by)) * m;
	k = (k ^ ((uint64_t)bz << 32 | shmem)) * m;
	return (k ^ (k >> 31)) | 1;
}

uint64_t gs_elapsed_ns(float ms)
{
	uint64_t ns;

	if (!(ms >= 0.0f && ms < 60000.0f))
		return 0;
	ns = (uint64_t)((double)ms * 1e6);
	return ns ? ns : 1;
}

bool gs_frame_holds(uint64_t ns, uint64_t away, unsigned int part)
{
	return !away || (part && away <= ns / part);
}

uint64_t gs_est_near(const struct gs_est *e, uint64_t end)
{
	return end > 2 * e->dev ? end - 2 * e->dev : 0;
}

uint64_t gs_nap_next(struct gs_nap *n, uint64_t now, uint64_t near,
		     uint64_t until)
{
	uint64_t nap;

	if (now >= near || !n->cur)
		nap = n->min;
	else
		nap = n->cur < n->max / 2 ? 2 * n->cur : n->max;
	if (now < near && nap > near - now)
		nap = near - now;
	n->cur = nap;
	return until - now > nap ? now + nap : until;
}

uint64_t gs_nap_most(uint64_t behind, uint64_t spin, uint64_t min)
{
	if (behind >= spin)
		return 0;
	return behind / 2 > min ? behind / 2 : min;
}

unsigned int gs_scale_next(unsigned int scale, uint64_t ns, uint64_t span,
			   unsigned int most_streams)
{
	uint64_t want, least = GS_SCALE_ONE / (most_streams ? most_streams : 1);

	if (!scale)
		scale = GS_SCALE_ONE;
	if (!ns || !span)
		return scale;
	/* A span is under a minute (gs_elapsed_ns()): no overflow. */
	want = scale * span / ns;
	if (want > GS_SCALE_ONE)
		want = GS_SCALE_ONE;
	if (want < least)
		want = least;
	return (unsigned int)((3 * (uint64_t)scale + want) / 4);
}

unsigned int gs_time_interval(unsigned int every, uint64_t mean,
			      uint64_t budget, unsigned int most)
{
	uint64_t n = mean ? budget / mean : 0;

	if (n <= every)
		return every;
	return n < most ? (unsigned int)n : most;
}
