// SPDX-License-Identifier: GPL-2.0
/*
 * What both token services tell their clients of the policy's decisions:
 * the status pages, the effects of a policy call, and GET_INFO. Shared by
 * the module and the arbiter as policy.c is: plain C, no clock, no
 * allocation. Every call is made under the caller's lock of the device;
 * each service brings only its own wake-up and overrun report
 * (struct gs_status_ops).
 */
#include <linux/gpusched.h>
#include "policy.h"

/* The first field that the page's header (seq, version, size) lacks. */
#define GS_STATUS_FILL_FROM	16

_Static_assert(offsetof(struct gpusched_status, grant_gen) == GS_STATUS_FILL_FROM &&
	       sizeof(struct gpusched_status) % sizeof(u64) == 0,
	       "the page is written in 64-bit words from grant_gen");

/**
 * gs_status_sync() - publish a client's state on its status page
 * @d: the device
 * @c: the client; nothing is written while its @page is NULL
 * @now: the time
 *
 * The caller's lock makes this the page's one writer. @seq is a sequence
 * count, odd while the fields change, so that a reader of several fields
 * can retry; the fields are stored one word at a time, since clients also
 * load single fields without the count, and @flags last with release, so
 * that a reader who loads it with acquire sees valid fields.
 */
void gs_status_sync(const struct gs_pol_dev *d, struct gs_pol_client *c,
		    u64 now)
{
	struct gpusched_status *st = c->page, v;
	const u64 *src = (const u64 *)&v;
	u64 *dst = (u64 *)st;
	size_t i;
	u32 seq;

	if (!st)
		return;
	seq = st->seq;
	gs_pol_status_fill(d, c, c->grant_gen, now, &v);
	WRITE_ONCE(st->seq, seq + 1);
	/* Readers see the odd count before any field of this update. */
	smp_wmb();
	for (i = GS_STATUS_FILL_FROM / sizeof(u64); i < sizeof(v) / sizeof(u64); i++)
		WRITE_ONCE(dst[i], src[i]);
	/* Readers load flags with acquire: the fields above are valid then. */
	smp_store_release(&st->flags, v.flags);
	/* Even again, after every field (pairs with the readers' fence). */
	smp_store_release(&st->seq, seq + 2);
}

/**
 * gs_status_apply() - tell clients what a policy call decided
 * @d: the device
 * @fx: the call's effects
 * @now: the time
 * @ops: the service's wake-up and overrun report
 * @arg: passed to @ops
 *
 * Every page that the call changed is published before its client is
 * woken or its overrun reported: a revoked holder, a released client, a
 * new holder (whose grant number grows by one) and the holder, who learns
 * of yield requests and new waiters from its page. Every policy call is
 * followed by this.
 */
void gs_status_apply(const struct gs_pol_dev *d,
		     const struct gs_pol_effects *fx, u64 now,
		     const struct gs_status_ops *ops, void *arg)
{
	if (fx->revoked) {
		gs_status_sync(d, fx->revoked, now);
		ops->revoked(arg, fx->revoked);
	}
	if (fx->released)
		gs_status_sync(d, fx->released, now);
	if (fx->granted) {
		fx->granted->grant_gen++;
		gs_status_sync(d, fx->granted, now);
		ops->granted(arg, fx->granted);
	}
	if (d->holder)
		gs_status_sync(d, d->holder, now);
}

/**
 * gs_status_state() - a client's state as the uapi header names it
 * @c: the client
 *
 * Return: GPUSCHED_STATE_IDLE, _WAITING or _HOLDING.
 */
u32 gs_status_state(const struct gs_pol_client *c)
{
	static const u32 states[] = {
		[GS_POL_IDLE] = GPUSCHED_STATE_IDLE,
		[GS_POL_WAITING] = GPUSCHED_STATE_WAITING,
		[GS_POL_HOLDING] = GPUSCHED_STATE_HOLDING,
	};

	return states[c->state];
}

/**
 * gs_status_info() - GET_INFO's answer, as both services give it
 * @d: the device, or NULL before ATTACH
 * @c: the client, or NULL before ATTACH
 * @now: the time
 * @info: filled in whole, the service's ABI version and features even
 *        before ATTACH; the caller adds the GPU's @uuid and @gpu_index
 */
void gs_status_info(const struct gs_pol_dev *d, const struct gs_pol_client *c,
		    u64 now, struct gpusched_client_info *info)
{
	/* Every byte, padding too: the struct is copied out whole. */
	memset(info, 0, sizeof(*info));
	info->size = sizeof(*info);
	info->state = GPUSCHED_STATE_DETACHED;
	info->abi_version = GPUSCHED_ABI_VERSION;
	info->features = GS_FEATURES;
	if (!d || !c)
		return;
	info->state = gs_status_state(c);
	info->weight = c->weight;
	info->sched_class = c->sched_class;
	info->cap_pct = c->cap_pct;
	info->gpu_ns = c->gpu_ns;
	info->held_ns = gs_pol_held_now(c, now);
	info->grants = c->grants;
	info->wait_ns_total = c->wait_ns_total;
	info->wait_ns_max = c->wait_ns_max;
	info->overruns = c->overruns;
	info->yields = c->yields;
	info->mem_reserved = c->mem.reserved;
	info->mem_limit = gs_mem_limit(d, c);
	info->mem_refused = c->mem.refused;
}
