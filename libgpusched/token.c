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

int gs_open(const unsigned char uuid[16], uint64_t mem_total,
	    struct gpusched **out)
{
	struct gpusched *g;
	int err;

	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	g->fd = -1;
	pthread_mutex_init(&g->io_lock, NULL);
	memcpy(g->uuid, uuid, sizeof(g->uuid));
	g->mem_total = mem_total;
	g->be = pick_backend();
	err = g->be->open(g, uuid);
	if (err) {
		pthread_mutex_destroy(&g->io_lock);
		free(g);
		return err;
	}
	if (g->st->version != GPUSCHED_STATUS_VERSION ||
	    g->st->size < sizeof(struct gpusched_status)) {
		g->be->close(g, false);
		pthread_mutex_destroy(&g->io_lock);
		free(g);
		return -EPROTO;
	}
	g->features = __atomic_load_n(&g->st->features, __ATOMIC_ACQUIRE);
	*out = g;
	return 0;
}

void gs_report_gpu(struct gpusched *g, uint64_t ns)
{
	if (g && ns)
		atomic_fetch_add_explicit(&g->gpu_pending_ns, ns,
					  memory_order_relaxed);
}

void gs_unreport_gpu(struct gpusched *g, uint64_t ns)
{
	uint64_t was = atomic_load_explicit(&g->gpu_pending_ns,
					    memory_order_relaxed);

	while (!atomic_compare_exchange_weak_explicit(&g->gpu_pending_ns, &was,
						      was > ns ? was - ns : 0,
						      memory_order_relaxed,
						      memory_order_relaxed))
		;
}

/*
 * What to send now, at most what the service takes in one report, taken
 * from what is pending as it is read: gs_unreport_gpu() may run in another
 * thread while the call is out, and takes back only what is still
 * pending, never part of what is in flight (taking it after the call, what
 * was taken back meanwhile would wrap the count).
 */
static uint64_t gpu_take(struct gpusched *g)
{
	uint64_t was = atomic_load_explicit(&g->gpu_pending_ns,
					    memory_order_relaxed), ns;

	if (!(g->features & GPUSCHED_FEAT_GPU_TIME))
		return 0;
	do {
		ns = was < (UINT64_C(1) << 40) ? was : UINT64_C(1) << 40;
	} while (ns && !atomic_compare_exchange_weak_explicit(
			&g->gpu_pending_ns, &was, was - ns,
			memory_order_relaxed, memory_order_relaxed));
	return ns;
}

/* Is GPU time pending, for a service that takes it? */
static bool gpu_owed(struct gpusched *g)
{
	return (g->features & GPUSCHED_FEAT_GPU_TIME) &&
	       atomic_load_explicit(&g->gpu_pending_ns, memory_order_relaxed);
}

atomic_ullong gs_held_ns_total, gs_reported_ns_total;

/* The grant we held (if any) ended at @now: count its time. */
static void held_end(struct gpusched *g, uint64_t now)
{
	uint64_t at = atomic_exchange_explicit(&g->held_at, 0,
					       memory_order_relaxed);

	if (at && now > at)
		atomic_fetch_add_explicit(&gs_held_ns_total, now - at,
					  memory_order_relaxed);
}

/*
 * The service took @sent (gpu_take()) unless the call failed its argument
 * checks (uapi header, "GPU time"), or the service is gone: then it is
 * pending again, to be sent with the next call.
 */
static void gpu_sent(struct gpusched *g, uint64_t sent, int err)
{
	if (!sent)
		return;
	if (err == -EFAULT || err == -EINVAL || err == -EOPNOTSUPP ||
	    err == -ENOTCONN || err == -ENOTTY)
		gs_report_gpu(g, sent);
	else
		atomic_fetch_add_explicit(&gs_reported_ns_total, sent,
					  memory_order_relaxed);
}

void gs_status_read(const struct gpusched *g, struct gpusched_status *out)
{
	const struct gpusched_status *st = g->st;
	uint32_t seq;

	for (;;) {
		seq = __atomic_load_n(&st->seq, __ATOMIC_ACQUIRE);
		if (seq & 1)
			continue;
		/* Word by word: the service may be writing meanwhile. */
		for (size_t i = 0; i < sizeof(*out) / sizeof(uint32_t); i++)
			((uint32_t *)out)[i] = __atomic_load_n(
				(const uint32_t *)st + i, __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&st->seq, __ATOMIC_RELAXED) == seq)
			return;
	}
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
	return gs_open(uuid, 0, out);
}

static int release_cmd(struct gpusched *g)
{
	struct gpusched_release rel = { .gpu_ns = gpu_take(g) };
	int err;

	err = g->be->call(g, GPUSCHED_IOC_RELEASE, &rel);
	gpu_sent(g, rel.gpu_ns, err);
	held_end(g, gs_now_ns());
	return err;
}

GPUSCHED_API int gpusched_close(struct gpusched *g)
{
	int err = 0;

	if (!g)
		return 0;
	if (g->st && ((gs_status_flags(g) & GPUSCHED_ST_HOLDING) ||
		      gpu_owed(g)))
		err = release_cmd(g);
	if (err == -EPERM)
		err = 0;	/* revoked meanwhile: nothing to give back */
	g->be->close(g, !g->st);
	pthread_mutex_destroy(&g->io_lock);
	free(g);
	return err;
}

/* ACQUIRE or YIELD @cmd with @a, carrying the pending GPU-time report. */
static int acquire_cmd(struct gpusched *g, unsigned int cmd,
		       struct gpusched_acquire *a)
{
	int err;

	a->gpu_ns = gpu_take(g);
	err = g->be->call(g, cmd, a);
	gpu_sent(g, a->gpu_ns, err);
	return err;
}

static int wait_cmd(struct gpusched *g, unsigned int cmd, int64_t timeout_ns)
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
	if (cmd == GPUSCHED_IOC_YIELD)
		held_end(g, gs_now_ns());
	err = acquire_cmd(g, cmd, &a);
	if (!err)
		atomic_store_explicit(&g->held_at, gs_now_ns(),
				      memory_order_relaxed);
	return err;
}

GPUSCHED_API int gpusched_acquire(struct gpusched *g, int64_t timeout_ns)
{
	return wait_cmd(g, GPUSCHED_IOC_ACQUIRE, timeout_ns);
}

int gs_nudge(struct gpusched *g, uint64_t at)
{
	struct gpusched_acquire a = { .flags = GPUSCHED_ACQUIRE_NUDGE };
	uint64_t now;

	if (!g)
		return -EINVAL;
	if (!g->st)
		return -ENOTCONN;
	now = gs_now_ns();
	if (at && at < now && (g->features & GPUSCHED_FEAT_NUDGE_AGE))
		a.age_ns = now - at;
	return acquire_cmd(g, GPUSCHED_IOC_ACQUIRE, &a);
}

bool gs_nudge_supported(const struct gpusched *g)
{
	return g->features & GPUSCHED_FEAT_NUDGE;
}

int gs_nudge_done(struct gpusched *g)
{
	struct gpusched_acquire a = { .flags = GPUSCHED_ACQUIRE_NUDGE_DONE };

	if (!g)
		return -EINVAL;
	if (!g->st)
		return -ENOTCONN;
	if (!(g->features & GPUSCHED_FEAT_NUDGE_DONE))
		return -EOPNOTSUPP;
	return acquire_cmd(g, GPUSCHED_IOC_ACQUIRE, &a);
}

GPUSCHED_API int gpusched_yield(struct gpusched *g, int64_t timeout_ns)
{
	return wait_cmd(g, GPUSCHED_IOC_YIELD, timeout_ns);
}

GPUSCHED_API int gpusched_release(struct gpusched *g)
{
	if (!g)
		return -EINVAL;
	if (!g->st)
		return -ENOTCONN;
	return release_cmd(g);
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
			return wait_cmd(g, GPUSCHED_IOC_YIELD, GPUSCHED_FOREVER);
	}
	err = wait_cmd(g, GPUSCHED_IOC_ACQUIRE, GPUSCHED_FOREVER);
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
		p.sched_class = (uint32_t)sched_class;
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
	info->sched_class = ci.sched_class;
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
