// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Per-process statistics, printed at exit with GPUSCHED_DEBUG=stats.
 */
#include <dlfcn.h>
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "interpose.h"

struct gs_stats stats;

struct gs_times t_grant, t_answer, t_call, t_driver;

void times_add(struct gs_times *t, uint64_t ns)
{
	unsigned int i = atomic_fetch_add_explicit(&t->n, 1, memory_order_relaxed);

	__atomic_store_n(&t->us[i % GS_TIMES],
			 (uint32_t)(ns / 1000 > UINT32_MAX ? UINT32_MAX : ns / 1000),
			 __ATOMIC_RELAXED);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static void times_print(const char *what, struct gs_times *t)
{
	unsigned int n = atomic_load(&t->n);
	uint32_t v[GS_TIMES];

	if (!n)
		return;
	if (n > GS_TIMES)
		n = GS_TIMES;
	for (unsigned int i = 0; i < n; i++)
		v[i] = __atomic_load_n(&t->us[i], __ATOMIC_RELAXED);
	qsort(v, n, sizeof(*v), cmp_u32);
	gs_log("stats %s_us p50=%u p90=%u p99=%u max=%u of the last %u", what,
	       v[(n - 1) / 2], v[(n - 1) * 9 / 10], v[(n - 1) * 99 / 100],
	       v[n - 1], n);
}

void print_stats(void)
{
	const struct gs_config *c = gs_config();

	gs_log("stats launches=%llu symbol=%llu procaddr=%llu dlsym=%llu gated=%llu unscheduled=%llu captured=%llu denied=%llu acquires=%llu yields=%llu idle_releases=%llu yield_releases=%llu drains=%llu throttle_waits=%llu dry_yields=%llu stuck_waits=%llu procaddr_hooks=%llu dlsym_hooks=%llu beside=%llu beside_grants=%llu beside_yields=%llu nudges=%llu nudge_refusals=%llu nudge_dones=%llu nudged=%llu answered=%llu timed=%llu late_frames=%llu revoked=%llu%s%s",
	       STAT_GET(launches[ROUTE_SYMBOL]) + STAT_GET(launches[ROUTE_PROCADDR]) +
	       STAT_GET(launches[ROUTE_DLSYM]),
	       STAT_GET(launches[ROUTE_SYMBOL]), STAT_GET(launches[ROUTE_PROCADDR]),
	       STAT_GET(launches[ROUTE_DLSYM]), STAT_GET(gated),
	       STAT_GET(unscheduled), STAT_GET(captured), STAT_GET(denied),
	       STAT_GET(acquires), STAT_GET(yields), STAT_GET(idle_releases),
	       STAT_GET(yield_releases), STAT_GET(drains),
	       STAT_GET(throttle_waits), STAT_GET(dry_yields),
	       STAT_GET(stuck_waits), STAT_GET(procaddr_hooks),
	       STAT_GET(dlsym_hooks), STAT_GET(beside),
	       STAT_GET(beside_grants), STAT_GET(beside_yields),
	       STAT_GET(nudges), STAT_GET(nudge_refusals),
	       STAT_GET(nudge_dones), STAT_GET(nudged), STAT_GET(answered),
	       STAT_GET(timed), STAT_GET(late_frames),
	       STAT_GET(revoked),
	       c->label[0] ? " label=" : "", c->label);
	gs_log("stats holding slow_launches=%llu slow_launch_us=%llu dry_us=%llu grant_us=%llu reported_us=%llu early_releases=%llu relaunches=%llu span_back_us=%llu joins=%llu unjoined=%llu",
	       STAT_GET(slow_launches), STAT_GET(slow_launch_us),
	       STAT_GET(dry_us), atomic_load(&gs_held_ns_total) / 1000,
	       atomic_load(&gs_reported_ns_total) / 1000,
	       STAT_GET(early_releases), STAT_GET(relaunches),
	       STAT_GET(span_back_ns) / 1000, STAT_GET(joins),
	       STAT_GET(unjoined));
	/* A periodic latency-class neighbour, per GPU (read racily: the
	 * idle thread is stopped, an application thread may not be): a
	 * period that held (GS_PERIOD_CONFIRM intervals), not a candidate.
	 */
	for (struct gs_dev *d = atomic_load(&G.devs); d; d = d->next) {
		unsigned int n = __atomic_load_n(&d->lat.count, __ATOMIC_RELAXED);
		uint64_t p = __atomic_load_n(&d->lat.period, __ATOMIC_RELAXED);

		if (n >= GS_PERIOD_CONFIRM)
			gs_log("stats %s: latency_period_us=%llu latency_matched=%u",
			       d->name, (unsigned long long)(p / 1000), n);
	}
	if (STAT_GET(mem_reserves) + STAT_GET(mem_refused) +
	    STAT_GET(mem_unaccounted) + STAT_GET(mem_clamped))
		gs_log("stats memory reserves=%llu refused=%llu returns=%llu unaccounted=%llu clamped=%llu",
		       STAT_GET(mem_reserves), STAT_GET(mem_refused),
		       STAT_GET(mem_returns), STAT_GET(mem_unaccounted),
		       STAT_GET(mem_clamped));
	/* The service's account of us, per GPU, from its status page. */
	for (struct gs_dev *d = atomic_load(&G.devs); d; d = d->next) {
		struct gpusched *g = atomic_load(&d->g);
		struct gpusched_status st;

		if (!g || !g->st || !(g->features & GPUSCHED_FEAT_MEM))
			continue;
		gs_status_read(g, &st);
		gs_log("stats memory %s: reserved=%llu limit=%llu",
		       d->name, (unsigned long long)st.mem_reserved,
		       (unsigned long long)st.mem_limit);
	}
	/* The service's own counts for our client of each GPU. */
	for (struct gs_dev *d = atomic_load(&G.devs); d; d = d->next) {
		struct gpusched *g = atomic_load(&d->g);
		struct gpusched_info info;

		if (g && !gpusched_info(g, &info))
			gs_log("stats %s: service grants=%llu overruns=%llu held_us=%llu",
			       d->name, (unsigned long long)info.grants,
			       (unsigned long long)info.overruns,
			       (unsigned long long)(info.held_ns / 1000));
	}
	times_print("grant_wait", &t_grant);
	times_print("yield_answer", &t_answer);
	times_print("launch_call", &t_call);
	times_print("launch_driver", &t_driver);
	/* What the queue bound was measured against, per context. */
	for (struct gs_ctx *cs = atomic_load(&G.ctxs); cs; cs = cs->next)
		gs_log("stats context %p on %s: launches=%llu us_per_launch=%.1f"
		       " us_dev=%.1f scale=%.3f",
		       (void *)__atomic_load_n(&cs->ctx, __ATOMIC_RELAXED), cs->d->name,
		       (unsigned long long)cs->launches, cs->est.mean / 1000.0,
		       cs->est.dev / 1000.0,
		       (cs->scale ? cs->scale : GS_SCALE_ONE) / (double)GS_SCALE_ONE);
}
