// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The explicit face: open, acquire, release, yield, gate, parameters and
 * accounting of one client, on whichever token service is present.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

static const struct gs_backend *pick_backend(void)
{
	switch (gs_config()->backend) {
	case GS_BACKEND_KMOD:
		return &gs_backend_kmod;
	case GS_BACKEND_ARBITER:
		return &gs_backend_arbiter;
	default:
		/* Like WireGuard: the kernel implementation when it is
		 * there, the user-space one otherwise.
		 */
		return access(GPUSCHED_DEVICE_PATH, F_OK) ? &gs_backend_arbiter
							  : &gs_backend_kmod;
	}
}

int gs_open(const unsigned char uuid[16], struct gpusched **out)
{
	struct gpusched *g;
	int err;

	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	g->fd = -1;
	pthread_mutex_init(&g->io_lock, NULL);
	memcpy(g->uuid, uuid, sizeof(g->uuid));
	g->be = pick_backend();
	err = g->be->open(g, uuid);
	if (err) {
		pthread_mutex_destroy(&g->io_lock);
		free(g);
		return err;
	}
	if (g->st->version != GPUSCHED_STATUS_VERSION ||
	    g->st->size < offsetof(struct gpusched_status, overruns)) {
		g->be->close(g, false);
		pthread_mutex_destroy(&g->io_lock);
		free(g);
		return -EPROTO;
	}
	*out = g;
	return 0;
}

/* In a forked child: the parent's client is not ours; drop our copies. */
void gs_close_forked(struct gpusched *g)
{
	g->be->close(g, true);
	free(g);
}

GPUSCHED_API int gpusched_open(const unsigned char uuid[16],
			       struct gpusched **out)
{
	if (!uuid || !out)
		return -EINVAL;
	return gs_open(uuid, out);
}

GPUSCHED_API int gpusched_close(struct gpusched *g)
{
	struct gpusched_release rel = { 0 };
	int err = 0;

	if (!g)
		return 0;
	if (g->st && (gs_status_flags(g) & GPUSCHED_ST_HOLDING))
		err = g->be->call(g, GPUSCHED_IOC_RELEASE, &rel);
	if (err == -EPERM)
		err = 0;	/* revoked meanwhile: nothing to give back */
	g->be->close(g, !g->st);
	pthread_mutex_destroy(&g->io_lock);
	free(g);
	return err;
}

static int wait_cmd(struct gpusched *g, unsigned int cmd, int64_t timeout_ns,
		    uint32_t due_us)
{
	struct gpusched_acquire a = { 0 };
	int err;

	if (!g)
		return -EINVAL;
	if (!g->st)
		return -ENOTCONN;
	if (timeout_ns == 0) {
		a.flags = GPUSCHED_ACQUIRE_NONBLOCK;
	} else if (timeout_ns > 0) {
		a.flags = GPUSCHED_ACQUIRE_TIMEOUT;
		a.timeout_ns = (uint64_t)timeout_ns;
	} else if (timeout_ns != GPUSCHED_FOREVER) {
		return -EINVAL;
	}
	if (due_us && !atomic_load_explicit(&g->no_due, memory_order_relaxed)) {
		a.flags |= GPUSCHED_ACQUIRE_DUE;
		a.due_us = due_us;
		err = g->be->call(g, cmd, &a);
		if (err != -EOPNOTSUPP)
			return err;
		/* A service older than the flag: ask as before. */
		atomic_store_explicit(&g->no_due, true, memory_order_relaxed);
		a.flags &= ~GPUSCHED_ACQUIRE_DUE;
		a.due_us = 0;
	}
	return g->be->call(g, cmd, &a);
}

GPUSCHED_API int gpusched_acquire(struct gpusched *g, int64_t timeout_ns)
{
	return wait_cmd(g, GPUSCHED_IOC_ACQUIRE, timeout_ns, 0);
}

int gs_acquire_due(struct gpusched *g, int64_t timeout_ns, uint32_t due_us)
{
	return wait_cmd(g, GPUSCHED_IOC_ACQUIRE, timeout_ns, due_us);
}

bool gs_due_supported(const struct gpusched *g)
{
	return !atomic_load_explicit(&g->no_due, memory_order_relaxed);
}

GPUSCHED_API int gpusched_yield(struct gpusched *g, int64_t timeout_ns)
{
	return wait_cmd(g, GPUSCHED_IOC_YIELD, timeout_ns, 0);
}

GPUSCHED_API int gpusched_release(struct gpusched *g)
{
	struct gpusched_release rel = { 0 };

	if (!g)
		return -EINVAL;
	if (!g->st)
		return -ENOTCONN;
	return g->be->call(g, GPUSCHED_IOC_RELEASE, &rel);
}

GPUSCHED_API int gpusched_holding(const struct gpusched *g)
{
	return g && g->st && (gs_status_flags(g) & GPUSCHED_ST_HOLDING);
}

GPUSCHED_API int gpusched_yield_requested(const struct gpusched *g)
{
	return g && g->st && YIELD_ASKED(gs_status_flags(g));
}

GPUSCHED_API int gpusched_gate(struct gpusched *g, int (*drain)(void *arg),
			       void *arg)
{
	uint32_t fl;
	int err;

	if (!g)
		return -EINVAL;
	if (!g->st)
		return -ENOTCONN;
	fl = gs_status_flags(g);
	if (HELD_ONLY(fl))
		return 0;
	if (fl & (GPUSCHED_ST_HOLDING | GPUSCHED_ST_REVOKED)) {
		/* Asked to yield, or revoked with work maybe still queued:
		 * finish that work before anyone else's can run.
		 */
		if (drain) {
			err = drain(arg);
			if (err)
				return err;
		}
		if (fl & GPUSCHED_ST_HOLDING)
			return wait_cmd(g, GPUSCHED_IOC_YIELD, GPUSCHED_FOREVER, 0);
	}
	err = wait_cmd(g, GPUSCHED_IOC_ACQUIRE, GPUSCHED_FOREVER, 0);
	return err == -EALREADY ? 0 : err;
}

GPUSCHED_API int gpusched_set_params(struct gpusched *g, int weight,
				     int sched_class, int cap_pct)
{
	struct gpusched_params p = { 0 };

	if (!g)
		return -EINVAL;
	if (!g->st)
		return -ENOTCONN;
	if (weight != GPUSCHED_KEEP) {
		if (weight < GPUSCHED_WEIGHT_MIN || weight > GPUSCHED_WEIGHT_MAX)
			return -EINVAL;
		p.mask |= GPUSCHED_PARAM_WEIGHT;
		p.weight = (uint32_t)weight;
	}
	if (sched_class != GPUSCHED_KEEP) {
		if (sched_class < 0 || sched_class > GPUSCHED_CLASS_MAX)
			return -EINVAL;
		p.mask |= GPUSCHED_PARAM_CLASS;
		p.class = (uint32_t)sched_class;
	}
	if (cap_pct != GPUSCHED_KEEP) {
		if (cap_pct < 0 || cap_pct > 100)
			return -EINVAL;
		p.mask |= GPUSCHED_PARAM_CAP;
		p.cap_pct = (uint32_t)cap_pct;
	}
	if (!p.mask)
		return 0;
	return g->be->call(g, GPUSCHED_IOC_SET_PARAMS, &p);
}

GPUSCHED_API int gpusched_info(struct gpusched *g, struct gpusched_info *info)
{
	struct gpusched_client_info ci = { .size = sizeof(ci) };
	int err;

	if (!g || !info)
		return -EINVAL;
	if (!g->st)
		return -ENOTCONN;
	err = g->be->call(g, GPUSCHED_IOC_GET_INFO, &ci);
	if (err)
		return err;
	memset(info, 0, sizeof(*info));
	info->state = ci.state;
	info->weight = ci.weight;
	info->sched_class = ci.class;
	info->cap_pct = ci.cap_pct;
	info->held_ns = ci.held_ns;
	info->grants = ci.grants;
	info->wait_ns_total = ci.wait_ns_total;
	info->wait_ns_max = ci.wait_ns_max;
	info->overruns = ci.overruns;
	info->yields = ci.yields;
	strncpy(info->backend, g->be->name, sizeof(info->backend) - 1);
	return 0;
}

GPUSCHED_API const char *gpusched_strerror(int err)
{
	const char *s = strerrordesc_np(err < 0 ? -err : err);

	return s ? s : "Unknown error";
}
