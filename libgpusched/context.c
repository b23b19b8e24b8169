// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Per GPU and per context state, what the status page says of the GPU,
 * and the process's life (exit, fork).
 */
#include <dlfcn.h>
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "interpose.h"

struct gs_global G = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
};

static pthread_once_t cond_once = PTHREAD_ONCE_INIT;

static __thread struct {
	CUcontext ctx;
	struct gs_ctx *cs;
	unsigned int gen;
} tls_cache;

/* gs_now_ns() time @t as a CLOCK_MONOTONIC deadline. */
struct timespec ns_timespec(uint64_t t)
{
	struct timespec ts = { (time_t)(t / 1000000000ull),
			       (long)(t % 1000000000ull) };

	return ts;
}

/* @c, its timed waits on CLOCK_MONOTONIC (gs_now_ns()'s). */
void cond_init_mono(pthread_cond_t *c)
{
	pthread_condattr_t a;

	pthread_condattr_init(&a);
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	pthread_cond_init(c, &a);
	pthread_condattr_destroy(&a);
}

static void cond_init(void)
{
	cond_init_mono(&G.cond);
}

static void process_init(void);

atomic_bool gs_process_ready;

/* ensure_process_init()'s way the first time (interpose.h). */
void process_init_once(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, process_init);
}

static struct gs_dev *dev_get(const unsigned char uuid[16])
{
	struct gs_dev *d;

	for (d = atomic_load(&G.devs); d; d = d->next)
		if (!memcmp(d->uuid, uuid, 16))
			return d;
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	memcpy(d->uuid, uuid, 16);
	gs_format_uuid(uuid, d->name);
	pthread_mutex_init(&d->lock, NULL);
	d->next = atomic_load(&G.devs);
	atomic_store(&G.devs, d);
	return d;
}

static int ctx_uuid(CUdevice dev, unsigned char uuid[16])
{
	CUuuid u;
	CUresult r = CUDA_ERROR_NOT_SUPPORTED;

	if (real.cuDeviceGetUuid_v2)
		r = real.cuDeviceGetUuid_v2(&u, dev);
	if (r != CUDA_SUCCESS && real.cuDeviceGetUuid)
		r = real.cuDeviceGetUuid(&u, dev);
	if (r != CUDA_SUCCESS)
		return -ENODEV;
	memcpy(uuid, u.bytes, 16);
	return 0;
}

/* cuDeviceTotalMem of @dev, for ATTACH; 0: not known. */
static uint64_t dev_total(CUdevice dev)
{
	size_t b = 0;

	if (!real.cuDeviceTotalMem_v2 ||
	    real.cuDeviceTotalMem_v2(&b, dev) != CUDA_SUCCESS)
		return 0;
	return b;
}

/* The first known total stays: it is what ATTACH reported. */
static void dev_set_total(struct gs_dev *d, uint64_t total)
{
	unsigned long long none = 0;

	if (total)
		atomic_compare_exchange_strong(&d->mem_total, &none, total);
}

/*
 * The state of the GPU of CUDA ordinal @dev, for calls that name a device
 * rather than use the current context (cuMemCreate); NULL if unknown.
 */
struct gs_dev *dev_by_ordinal(CUdevice dev)
{
	unsigned char uuid[16];
	uint64_t total;
	struct gs_dev *d;

	if (ctx_uuid(dev, uuid))
		return NULL;
	total = dev_total(dev);
	pthread_mutex_lock(&G.lock);
	d = dev_get(uuid);
	if (d)
		dev_set_total(d, total);
	pthread_mutex_unlock(&G.lock);
	return d;
}

/* Timing events made for a context before its record is chosen. */
struct ctx_events {
	CUevent t[GS_RING], n[GS_RING];
	CUevent a;	/* the spare for the anchor (struct gs_ctx); NULL: none */
	unsigned int nr;
};

/*
 * Make the ring's events in the current context: one that takes GPU
 * timestamps and one that does not per slot (struct gs_ctx). Neither kind
 * blocking sync: behind queued work, such a timing event takes the
 * launching thread about twice as long to record (2 us, not 1) and the GPU
 * 0.7 us more; ev_sync() looks at them between naps instead.
 */
static void ctx_events_make(struct ctx_events *e)
{
	CUstreamCaptureMode mode;
	bool relaxed;

	e->nr = 0;
	e->a = NULL;
	if (!real.cuEventCreate || !real.cuEventSynchronize)
		return;
	/* The first launch of a context may come beside another thread's
	 * capture: made in relaxed mode, as the queries are (gs_relax()).
	 */
	relaxed = gs_relax(&mode);
	for (unsigned int i = 0; i < GS_RING; i++) {
		if (real.cuEventCreate(&e->t[i], 0) != CUDA_SUCCESS)
			break;
		if (real.cuEventCreate(&e->n[i], CU_EVENT_DISABLE_TIMING) !=
		    CUDA_SUCCESS)
			e->n[i] = e->t[i];
		e->nr++;
	}
	if (e->nr && real.cuEventCreate(&e->a, 0) != CUDA_SUCCESS)
		e->a = NULL;
	gs_unrelax(relaxed, mode);
}

/*
 * Give @cs, new or revived, context @ctx of ordinal @dev and the events @e.
 * The fields from launches on belong to one context's life: a record taken
 * over from a destroyed context starts them afresh (its lengths were of
 * another program's kernels, keyed by handles that may come back). Caller
 * holds G.lock; cs->lock orders this after any thread still in the record.
 */
static void ctx_set(struct gs_ctx *cs, CUcontext ctx, CUdevice dev,
		    const struct ctx_events *e)
{
	pthread_mutex_lock(&cs->lock);
	cs->life++;
	memset((char *)cs + offsetof(struct gs_ctx, launches), 0,
	       sizeof(*cs) - offsetof(struct gs_ctx, launches));
	__atomic_store_n(&cs->ctx, ctx, __ATOMIC_RELAXED);
	cs->ordinal = dev;
	for (unsigned int i = 0; i < e->nr; i++) {
		cs->ev_t[i] = cs->ev[i] = e->t[i];
		cs->ev_n[i] = e->n[i];
	}
	cs->nr_events = e->nr;
	cs->anchor_ev = e->a;
	pthread_mutex_unlock(&cs->lock);
	atomic_store(&cs->dead, false);
}

/*
 * A record for a new context on @d: a destroyed context's if there is one
 * (a program that creates and destroys contexts, or resets the primary
 * one, in a loop keeps as many records as it has contexts at once), else
 * a new one. Records are never freed while the process runs (ctx_forget()).
 * Caller holds G.lock; NULL: out of memory.
 */
static struct gs_ctx *ctx_record(struct gs_dev *d)
{
	struct gs_ctx *cs;

	for (cs = atomic_load(&d->ctxs); cs; cs = cs->dev_next)
		if (atomic_load(&cs->dead))
			return cs;
	cs = calloc(1, sizeof(*cs));
	if (!cs)
		return NULL;
	pthread_mutex_init(&cs->lock, NULL);
	atomic_store(&cs->dead, true);	/* until ctx_set() */
	cs->d = d;
	cs->dev_next = atomic_load(&d->ctxs);
	atomic_store(&d->ctxs, cs);
	cs->next = atomic_load(&G.ctxs);
	atomic_store(&G.ctxs, cs);
	return cs;
}

/*
 * Is @cs the live record of @ctx? Read without cs->lock, as lookups do:
 * a record may be taken over by another context meanwhile (ctx_set()).
 */
static bool ctx_is(struct gs_ctx *cs, CUcontext ctx)
{
	return !atomic_load(&cs->dead) &&
	       __atomic_load_n(&cs->ctx, __ATOMIC_RELAXED) == ctx;
}

/* The live record of @ctx; NULL: none. */
static struct gs_ctx *ctx_find(CUcontext ctx)
{
	struct gs_ctx *cs;

	for (cs = atomic_load(&G.ctxs); cs; cs = cs->next)
		if (ctx_is(cs, ctx))
			break;
	return cs;
}

/*
 * The GPU of context @ctx, which need not be current (a stream's): its
 * record's where it has one, else the driver's answer with @ctx made
 * current for the question. NULL: not known.
 */
struct gs_dev *dev_of_ctx(CUcontext ctx)
{
	struct gs_ctx *cs = ctx_find(ctx);
	CUcontext popped;
	CUdevice dev;
	CUresult r;

	if (cs)
		return cs->d;
	if (!real.cuCtxPushCurrent_v2 || !real.cuCtxPopCurrent_v2 ||
	    !real.cuCtxGetDevice || real.cuCtxPushCurrent_v2(ctx) != CUDA_SUCCESS)
		return NULL;
	r = real.cuCtxGetDevice(&dev);
	real.cuCtxPopCurrent_v2(&popped);
	return r == CUDA_SUCCESS ? dev_by_ordinal(dev) : NULL;
}

/*
 * ctx_current() for a context not in this thread's cache: the list, else a
 * record for it (with its events).
 */
static __attribute__((noinline)) struct gs_ctx *ctx_lookup(CUcontext ctx,
							   unsigned int gen)
{
	unsigned char uuid[16];
	struct ctx_events e;
	struct gs_dev *d;
	struct gs_ctx *cs;
	uint64_t total;
	CUdevice dev;

	cs = ctx_find(ctx);
	if (cs)
		goto found;

	/* New context: no CUDA call under G.lock (see the fork handlers). */
	if (!real.cuCtxGetDevice || real.cuCtxGetDevice(&dev) != CUDA_SUCCESS ||
	    ctx_uuid(dev, uuid))
		return NULL;
	total = dev_total(dev);
	ctx_events_make(&e);

	pthread_mutex_lock(&G.lock);
	cs = ctx_find(ctx);
	/* Found: another thread made it first, and its events are in use;
	 * ours stay unused in the context (a handful, once).
	 */
	if (!cs) {
		d = dev_get(uuid);
		cs = d ? ctx_record(d) : NULL;
		if (!cs) {
			pthread_mutex_unlock(&G.lock);
			return NULL;	/* events die with the context */
		}
		dev_set_total(d, total);
		ctx_set(cs, ctx, dev, &e);
		gs_debug("context %p is device %d, %s", (void *)ctx, dev,
			 d->name);
	}
	pthread_mutex_unlock(&G.lock);
found:
	tls_cache.ctx = ctx;
	tls_cache.cs = cs;
	tls_cache.gen = gen;
	return cs;
}

/*
 * The state of the current context; NULL: launch unscheduled. Every launch
 * asks: the thread's cache answers, and only a miss takes ctx_lookup()'s
 * larger frame.
 */
struct gs_ctx *ctx_current(void)
{
	unsigned int gen = atomic_load_explicit(&G.gen, memory_order_acquire);
	CUcontext ctx = NULL;

	if (!real.cuCtxGetCurrent || real.cuCtxGetCurrent(&ctx) != CUDA_SUCCESS ||
	    !ctx)
		return NULL;
	/* The record checked too: one taken over since this thread read
	 * the generation (ctx_forget() bumps it after) is not ours.
	 */
	if (tls_cache.ctx == ctx && tls_cache.gen == gen &&
	    ctx_is(tls_cache.cs, ctx))
		return tls_cache.cs;
	return ctx_lookup(ctx, gen);
}

/*
 * Context @ctx goes away: forget its state (kept allocated, see below). Its
 * events go with it, so nothing may look at them any more.
 */
void ctx_forget(CUcontext ctx)
{
	struct gs_ctx *cs;

	/* Records are never freed while the process runs, so a thread
	 * still holding a pointer from its cache reads valid memory; the
	 * generation bump makes every cache miss. A later context may take
	 * the record over (ctx_record()).
	 */
	for (cs = atomic_load(&G.ctxs); cs; cs = cs->next) {
		if (!ctx_is(cs, ctx))
			continue;
		/* Marked dead under its lock: ctx_set() takes it too, so a
		 * new context that takes the record over meanwhile is not
		 * emptied here.
		 */
		pthread_mutex_lock(&cs->lock);
		if (ctx_is(cs, ctx)) {
			atomic_store(&cs->dead, true);
			ctx_empty_locked(cs);
		}
		pthread_mutex_unlock(&cs->lock);
	}
	atomic_fetch_add(&G.gen, 1);
	ctx_sync_forget(ctx);
}

/*
 * The primary context of @dev, if it is active (without making it so); its
 * handle stays the same while the process runs. NULL: none, or the driver
 * cannot say.
 */
CUcontext primary_ctx(CUdevice dev)
{
	unsigned int flags;
	CUcontext c = NULL;
	int active = 0;

	if (!real.cuDevicePrimaryCtxGetState || !real.cuDevicePrimaryCtxRetain ||
	    !real.cuDevicePrimaryCtxRelease_v2 ||
	    real.cuDevicePrimaryCtxGetState(dev, &flags, &active) != CUDA_SUCCESS ||
	    !active)
		return NULL;
	/* One more reference and one less: the count as it was. */
	if (real.cuDevicePrimaryCtxRetain(&c, dev) != CUDA_SUCCESS)
		return NULL;
	real.cuDevicePrimaryCtxRelease_v2(dev);
	return c;
}

/* Is the primary context of @dev active? On doubt, yes: keep its state. */
bool primary_active(CUdevice dev)
{
	unsigned int flags;
	int active = 1;

	if (real.cuDevicePrimaryCtxGetState)
		real.cuDevicePrimaryCtxGetState(dev, &flags, &active);
	return active;
}

/* The token's grace time, from the status page; before it is open: none. */
uint64_t grace_ns(struct gs_dev *d)
{
	struct gpusched *g = atomic_load(&d->g);
	uint64_t ns = g ? __atomic_load_n(&g->st->grace_ns, __ATOMIC_RELAXED) : 0;

	return ns ? ns : UINT64_MAX;
}

/*
 * What the service promises a latency-class client on @d, from the status
 * page, where it says: the GPU time its neighbour keeps queued, and the
 * work a holder may leave running when it gives the token away. Where it
 * does not (or a test overrides it, GPUSCHED_TUNE), tune.h's.
 */
static uint64_t dev_promise(struct gs_dev *d, bool handover)
{
	struct gpusched *g;
	uint64_t ns = 0;

	/* Under the launching count, as dev_flags() reads the page. */
	atomic_fetch_add(&d->launching, 1);
	g = atomic_load(&d->g);
	if (g)
		ns = __atomic_load_n(handover ? &g->st->handover_ns :
				     &g->st->latency_queue_ns, __ATOMIC_RELAXED);
	atomic_fetch_sub(&d->launching, 1);
	return ns;
}

uint64_t latency_queue_ns(struct gs_dev *d)
{
	const struct gs_config *c = gs_config();
	uint64_t ns;

	if (c->queue_latency_ns)
		return c->queue_latency_ns;
	ns = dev_promise(d, false);
	return ns ? ns : 1000ull * GS_QUEUE_LATENCY_US;
}

uint64_t handover_ns(struct gs_dev *d)
{
	const struct gs_config *c = gs_config();

	/* 0 on the page is a setting (drain fully), not "unsaid". */
	if (c->handover_set || !atomic_load(&d->g))
		return c->handover_ns;
	return dev_promise(d, true);
}
/* Idle time after which the token goes to a waiter. */
uint64_t idle_wanted(const struct gpusched *g)
{
	const struct gs_config *c = gs_config();

	if (c->idle_wanted_ns != (uint64_t)-1)
		return c->idle_wanted_ns;
	return is_latency(g) ? 1000ull * GS_IDLE_LATENCY_US : c->idle_ns;
}

/* Somebody waits for @g's token, or is about to be asked for it. */
bool dev_wanted(const struct gpusched *g, uint32_t fl)
{
	return (fl & GPUSCHED_ST_YIELD) ||
	       __atomic_load_n(&g->st->nr_waiting, __ATOMIC_RELAXED);
}

/*
 * The token's flags on @d (0: no client), for a thread outside the gate:
 * read under the launching count, as the gate's fast path reads them,
 * since retire_locked() waits for that count before it closes the client
 * and unmaps its status page.
 */
uint32_t dev_flags(struct gs_dev *d)
{
	struct gpusched *g;
	uint32_t fl = 0;

	atomic_fetch_add(&d->launching, 1);
	g = atomic_load(&d->g);
	if (g)
		fl = gs_status_flags(g);
	atomic_fetch_sub(&d->launching, 1);
	return fl;
}

/* Sleep until CLOCK_MONOTONIC reads @t (ns). */
void sleep_until(uint64_t t)
{
	struct timespec ts = ns_timespec(t);

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/*
 * At exit, before libcuda's own teardown (atexit handlers registered after
 * CUDA initialised run first): stop the idle thread, finish the work this
 * process queued and give the tokens back, so the next holder never shares
 * the GPU with our leftovers.
 */
static void at_exit(void)
{
	pthread_mutex_lock(&G.lock);
	G.bg_stop = true;
	pthread_cond_signal(&G.cond);
	pthread_mutex_unlock(&G.lock);
	if (G.bg_started)
		pthread_join(G.bg, NULL);
	G.bg_started = false;

	for (struct gs_dev *d = atomic_load(&G.devs); d; d = d->next) {
		struct gpusched *g;

		/* A thread blocked in ACQUIRE holds the lock: leave that one
		 * to the kernel or the arbiter, which release on close.
		 */
		if (pthread_mutex_trylock(&d->lock))
			continue;
		g = atomic_load(&d->g);
		/* The last grant, revoked after our last launch. */
		if (g && (gs_status_flags(g) & GPUSCHED_ST_REVOKED))
			STAT_INC(revoked);
		if (g && (gs_status_flags(g) & GPUSCHED_ST_HOLDING)) {
			drain_locked(d, false);
			gpusched_release(g);
			atomic_store(&d->draining, false);
		}
		pthread_mutex_unlock(&d->lock);
	}
	if (gs_config()->stats)
		print_stats();
}

static void fork_prepare(void)
{
	pthread_mutex_lock(&G.lock);
}

static void fork_parent(void)
{
	pthread_mutex_unlock(&G.lock);
}

/*
 * The child has the parent's lists but none of its token clients: the
 * status pages are not inherited and the parent's files are not ours.
 * Drop our copies, and start from scratch on the next launch; locks that
 * other threads of the parent held are re-initialised.
 */
static void fork_child(void)
{
	pthread_mutex_init(&G.lock, NULL);
	cond_init();
	G.bg_started = false;
	G.bg_stop = false;
	for (struct gs_dev *d = atomic_load(&G.devs); d; d = d->next) {
		struct gpusched *g = atomic_exchange(&d->g, NULL);

		if (g)
			gs_close_forked(g);
		pthread_mutex_init(&d->lock, NULL);
		atomic_store(&d->launching, 0);
		atomic_store(&d->mem_users, 0);
		atomic_store(&d->draining, false);
		d->mode = DEV_NEW;
		/* The parent's request and nudge, not ours. */
		atomic_store(&d->beside_ask, 0);
		atomic_store(&d->nudge_until, 0);
	}
	for (struct gs_ctx *cs = atomic_load(&G.ctxs); cs; cs = cs->next) {
		pthread_mutex_init(&cs->lock, NULL);
		ctx_empty_locked(cs);	/* the parent's work, not ours */
	}
	mem_fork_child();
	ctx_sync_fork_child();
	memset(&stats, 0, sizeof(stats));
	memset(&t_grant, 0, sizeof(t_grant));
	memset(&t_answer, 0, sizeof(t_answer));
	memset(&t_call, 0, sizeof(t_call));
	memset(&t_driver, 0, sizeof(t_driver));
	atomic_fetch_add(&G.gen, 1);
}

static void process_init(void)
{
	pthread_once(&cond_once, cond_init);
	gs_config();
	pthread_atfork(fork_prepare, fork_parent, fork_child);
	atexit(at_exit);
	atomic_store_explicit(&gs_process_ready, true, memory_order_release);
}
