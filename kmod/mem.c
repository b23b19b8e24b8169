// SPDX-License-Identifier: GPL-2.0
/*
 * Device memory accounting of a GPU's clients, shared by the module and
 * the arbiter as policy.c is: plain C, no clock, no allocation, every call
 * under the caller's lock of the device.
 *
 * The services count what each client reserved (MEM_RESERVE, MEM_RETURN)
 * and refuse a reservation past the client's effective limit; the client's
 * library asks before it allocates. The count goes with the client, so a
 * closed file or a dead process holds nothing. The uapi header's "Device
 * memory" section states the rules these functions implement.
 */
#include <linux/errno.h>
#include <linux/gpusched.h>
#include "policy.h"

/* @pct percent of @total, at least one byte (0 would read as no limit). */
static u64 gs_mem_pct(u64 total, u32 pct)
{
	u64 hundredths = div_u64(total, 100);
	u64 rest = total - hundredths * 100;
	u64 v = hundredths * pct + div_u64(rest * pct, 100);

	return v ? v : 1;
}

/**
 * gs_mem_check() - the argument checks of MEM_RESERVE and MEM_RETURN
 * @m: the request as copied in
 *
 * Return: 0, -EOPNOTSUPP for flags, -EINVAL for reserved fields set or
 * @m->bytes 0.
 */
int gs_mem_check(const struct gpusched_mem *m)
{
	if (m->flags)
		return -EOPNOTSUPP;
	if (m->reserved0 || m->reserved[0] || m->reserved[1] || !m->bytes)
		return -EINVAL;
	return 0;
}

/**
 * gs_mem_attach() - record the device memory a new client reported
 * @c: the client, just initialised (gs_pol_client_init())
 * @total: bytes its driver reports for the GPU; 0: unknown
 */
void gs_mem_attach(struct gs_pol_client *c, u64 total)
{
	c->mem = (struct gs_pol_mem){ .total = total };
}

/**
 * gs_mem_limit() - a client's effective device memory limit
 * @d: the device, for its knobs mem_default_pct and mem_reserve_mb
 * @c: the client
 *
 * The client's own limit if set, else mem_default_pct of its reported
 * total; then, where the total is known and a reserve is set, at most the
 * total less the reserve (at least one byte: a reserve of everything
 * leaves nothing to reserve, rather than no limit).
 *
 * Return: bytes, 0 for no limit.
 */
u64 gs_mem_limit(const struct gs_pol_dev *d, const struct gs_pol_client *c)
{
	const struct gs_pol_mem *m = &c->mem;
	u64 limit = m->limit;

	if (!limit && m->total && d->p.mem_default_pct)
		limit = gs_mem_pct(m->total, d->p.mem_default_pct);
	if (m->total && d->p.mem_reserve) {
		u64 most = m->total > d->p.mem_reserve ?
			   m->total - d->p.mem_reserve : 1;

		if (!limit || limit > most)
			limit = most;
	}
	return limit;
}

/**
 * gs_mem_lowers() - may a client without CAP_SYS_NICE set this own limit?
 * @d: the device
 * @c: the client
 * @limit: the limit asked for, bytes; 0: none
 *
 * As with nice(2), a client may only lower itself: set a limit where it
 * has none, or one no larger than its effective limit; never remove one.
 *
 * Return: true if allowed.
 */
bool gs_mem_lowers(const struct gs_pol_dev *d, const struct gs_pol_client *c,
		   u64 limit)
{
	u64 now = gs_mem_limit(d, c);

	return !now || (limit && limit <= now);
}

/**
 * gs_mem_limit_pct() - a limit given in percent of a client's memory
 * @c: the client
 * @pct: 1..100
 * @bytes: set to @pct percent of what @c reported at ATTACH
 *
 * Return: 0, or -EINVAL when @c reported no total or @pct is out of range.
 */
int gs_mem_limit_pct(const struct gs_pol_client *c, u32 pct, u64 *bytes)
{
	if (!c->mem.total || !pct || pct > 100)
		return -EINVAL;
	*bytes = gs_mem_pct(c->mem.total, pct);
	return 0;
}

/* The device's sum of reservations, exact however large (see policy.h). */
static void gs_mem_dev_add(struct gs_pol_dev *d, u64 bytes)
{
	d->mem_reserved += bytes;
	d->mem_reserved_wraps += d->mem_reserved < bytes;
}

static void gs_mem_dev_sub(struct gs_pol_dev *d, u64 bytes)
{
	d->mem_reserved_wraps -= bytes > d->mem_reserved;
	d->mem_reserved -= bytes;
}

/**
 * gs_mem_reserve() - MEM_RESERVE: add to a client's reservation
 * @d: the device
 * @c: the client
 * @bytes: checked by gs_mem_check()
 *
 * A reservation that would pass the effective limit changes nothing but
 * the client's count of refusals. A limit lowered below what is reserved
 * refuses further reservations and takes nothing back.
 *
 * Return: 0, -EINVAL if the sum overflows, -EDQUOT past the limit.
 */
int gs_mem_reserve(struct gs_pol_dev *d, struct gs_pol_client *c,
		   u64 bytes)
{
	u64 limit = gs_mem_limit(d, c);
	u64 sum = c->mem.reserved + bytes;

	if (sum < bytes)
		return -EINVAL;
	if (limit && sum > limit) {
		c->mem.refused++;
		return -EDQUOT;
	}
	c->mem.reserved = sum;
	gs_mem_dev_add(d, bytes);
	return 0;
}

/**
 * gs_mem_return() - MEM_RETURN: take from a client's reservation
 * @d: the device
 * @c: the client
 * @bytes: checked by gs_mem_check()
 *
 * Return: 0, or -EINVAL for more than is reserved (nothing changes).
 */
int gs_mem_return(struct gs_pol_dev *d, struct gs_pol_client *c, u64 bytes)
{
	if (bytes > c->mem.reserved)
		return -EINVAL;
	c->mem.reserved -= bytes;
	gs_mem_dev_sub(d, bytes);
	return 0;
}

/**
 * gs_mem_exit() - a client leaves: what it reserved no longer counts
 * @d: the device
 * @c: the client
 */
void gs_mem_exit(struct gs_pol_dev *d, struct gs_pol_client *c)
{
	gs_mem_dev_sub(d, c->mem.reserved);
	c->mem.reserved = 0;
}

/**
 * gs_mem_dev_reserved() - what a device's clients have reserved together
 * @d: the device
 *
 * Kept as each reservation changes (with its wraps past 2^64), so that
 * reading it under the device's lock costs nothing per client; saturates
 * at U64_MAX.
 *
 * Return: bytes.
 */
u64 gs_mem_dev_reserved(const struct gs_pol_dev *d)
{
	return d->mem_reserved_wraps ? ~(u64)0 : d->mem_reserved;
}
