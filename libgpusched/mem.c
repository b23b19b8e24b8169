// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Device memory limits. The service keeps each client's reservation and
 * its limit (GPUSCHED_IOC_MEM_RESERVE and MEM_RETURN, GPUSCHED_FEAT_MEM);
 * this file makes the allocation entry points keep to them:
 *
 *  - an allocation first reserves its size with the service, then asks
 *    the driver; a refused reservation fails the call with exactly
 *    CUDA_ERROR_OUT_OF_MEMORY and one log line, and a failed driver call
 *    returns the reservation;
 *  - what was reserved for an address (or a cuMemCreate handle) is kept in
 *    a hash map, and returned when it is freed (released);
 *  - stream-ordered frees (cuMemFreeAsync) return their bytes at the call:
 *    the limit counts what the program holds, not what a pool keeps
 *    cached for reuse, so a pool never leaks reservations, and a program
 *    whose pool keeps much cached may hold more device memory than its
 *    limit (a pool's release threshold bounds that);
 *  - cuMemGetInfo reports total = min(limit, physical) and free =
 *    min(physical free, limit - reserved), from the status page.
 *
 * One service call per allocation and per free: PyTorch's caching
 * allocator, like other frameworks', calls the driver rarely (it keeps
 * and reuses what it got), so this costs an application next to nothing.
 * No lock is held across a driver or service call. Without a service, or
 * one without GPUSCHED_FEAT_MEM, allocations pass through unaccounted.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <time.h>

#include "interpose.h"

/* What a live allocation reserved, by address or cuMemCreate handle. */
enum mem_kind { MEM_PTR, MEM_HANDLE };

struct mem_ent {
	struct mem_ent *next;
	uint64_t key;
	uint64_t bytes;		/* reserved for it; 0: unaccounted */
	struct gs_dev *d;
	CUcontext ctx;		/* MEM_PTR: its context, which frees it too */
	unsigned int gen;	/* d->client_gen it was reserved with */
	enum mem_kind kind;
};

/*
 * The map, chained, grown by doubling. Its lock is held only for the
 * map's own work, never across a driver or service call.
 */
static struct {
	pthread_mutex_t lock;
	struct mem_ent **b;
	size_t nb, n;
} map = { .lock = PTHREAD_MUTEX_INITIALIZER };

/*
 * The pools the program made or asked the driver for, and where each
 * keeps its memory: cuMemAllocFromPoolAsync allocates on the pool's GPU
 * (or in host memory), whatever the current context is. A short list
 * under its own lock: programs have a pool or two per GPU.
 */
struct pool_ent {
	struct pool_ent *next;
	CUmemoryPool pool;
	struct gs_dev *d;	/* NULL: host memory */
};

static struct {
	pthread_mutex_t lock;
	struct pool_ent *list;
} pools = { .lock = PTHREAD_MUTEX_INITIALIZER };

static size_t slot_of(uint64_t key, enum mem_kind kind, size_t nb)
{
	uint64_t h = (key ^ (uint64_t)kind) * UINT64_C(0x9e3779b97f4a7c15);

	return (size_t)(h >> 32) & (nb - 1);
}

/* Grow to twice the buckets; keeps the old table if memory is short. */
static void map_grow_locked(void)
{
	size_t nb = map.nb ? 2 * map.nb : 256;
	struct mem_ent **b = calloc(nb, sizeof(*b));

	if (!b)
		return;
	for (size_t i = 0; i < map.nb; i++) {
		while (map.b[i]) {
			struct mem_ent *e = map.b[i];
			size_t k = slot_of(e->key, e->kind, nb);

			map.b[i] = e->next;
			e->next = b[k];
			b[k] = e;
		}
	}
	free(map.b);
	map.b = b;
	map.nb = nb;
}

static bool map_put(struct mem_ent *e)
{
	size_t k;

	pthread_mutex_lock(&map.lock);
	if (map.n >= 2 * map.nb)
		map_grow_locked();
	if (!map.nb) {
		pthread_mutex_unlock(&map.lock);
		return false;
	}
	k = slot_of(e->key, e->kind, map.nb);
	e->next = map.b[k];
	map.b[k] = e;
	map.n++;
	pthread_mutex_unlock(&map.lock);
	return true;
}

/* Unlist the entry of @key; NULL if there is none. */
static struct mem_ent *map_take(uint64_t key, enum mem_kind kind)
{
	struct mem_ent **pp, *e = NULL;

	pthread_mutex_lock(&map.lock);
	if (map.nb) {
		for (pp = &map.b[slot_of(key, kind, map.nb)]; *pp; pp = &(*pp)->next) {
			if ((*pp)->key == key && (*pp)->kind == kind) {
				e = *pp;
				*pp = e->next;
				map.n--;
				break;
			}
		}
	}
	pthread_mutex_unlock(&map.lock);
	return e;
}

/*
 * A forked child has none of the parent's device memory (its client is
 * new, and CUDA gives a child none of the parent's contexts): forget it.
 * The entries are left, not freed: another thread of the parent may have
 * been changing the map when it forked.
 */
void mem_fork_child(void)
{
	pthread_mutex_init(&map.lock, NULL);
	pthread_mutex_init(&pools.lock, NULL);
	map.b = NULL;
	map.nb = 0;
	map.n = 0;
}

/*
 * @d's client, counted in d->mem_users so that it stays open until
 * mem_put(); with @open, opened first if the process has none yet (an
 * allocation may come before the first launch). NULL: no client, or one
 * without memory accounting (no mem_put() needed then).
 */
static struct gpusched *mem_get(struct gs_dev *d, bool open)
{
	struct gpusched *g;

	for (unsigned int spins = 0;; spins++) {
		atomic_fetch_add(&d->mem_users, 1);
		g = atomic_load(&d->g);
		if (g || !open)
			break;
		atomic_fetch_sub(&d->mem_users, 1);
		/*
		 * Never wait on d->lock: a launch may hold it for as long
		 * as the token takes to come. It does so only with d->g
		 * set, which the loop then finds.
		 */
		if (!pthread_mutex_trylock(&d->lock)) {
			dev_open_locked(d);
			pthread_mutex_unlock(&d->lock);
			open = false;
		} else if (spins < GS_SPIN_YIELDS) {
			sched_yield();
		} else {
			struct timespec ts = { 0, GS_OPEN_NAP_NS };

			nanosleep(&ts, NULL);
		}
	}
	if (g && (g->features & GPUSCHED_FEAT_MEM))
		return g;
	atomic_fetch_sub(&d->mem_users, 1);
	return NULL;
}

static void mem_put(struct gs_dev *d)
{
	atomic_fetch_sub(&d->mem_users, 1);
}

/*
 * Where an allocation is made: its GPU (NULL: not known, or not GPU
 * memory; unaccounted) and the calling thread's context, which takes
 * what was allocated in it along when it goes (mem_ctx_gone()).
 */
struct mem_at {
	struct gs_dev *d;
	CUcontext ctx;
};

/* The calling thread's current context and its GPU. */
static struct mem_at cur_at(void)
{
	struct mem_at at = { NULL, NULL };
	struct gs_ctx *cs;

	ensure_process_init();
	cs = ctx_current();
	if (cs) {
		at.d = cs->d;
		at.ctx = __atomic_load_n(&cs->ctx, __ATOMIC_RELAXED);
	}
	return at;
}

/*
 * The link to @pool's note in the list, or the list's end (NULL there):
 * for a look, an unlisting or an append. Caller holds pools.lock.
 */
static struct pool_ent **pool_link(CUmemoryPool pool)
{
	struct pool_ent **pp = &pools.list;

	while (*pp && (*pp)->pool != pool)
		pp = &(*pp)->next;
	return pp;
}

/* @pool keeps its memory on @d (NULL: in host memory). */
static void pool_note(CUmemoryPool pool, struct gs_dev *d)
{
	struct pool_ent **pp, *e;

	pthread_mutex_lock(&pools.lock);
	pp = pool_link(pool);
	e = *pp;
	if (!e) {
		e = malloc(sizeof(*e));
		if (e) {
			e->pool = pool;
			e->next = NULL;
			*pp = e;
		}
	}
	if (e)
		e->d = d;
	pthread_mutex_unlock(&pools.lock);
	/* No memory for the note: its allocations count where the
	 * calling thread's context is, as before.
	 */
}

/* Take @pool's note out of the list: the caller frees it (or puts it back). */
static struct pool_ent *pool_unlist(CUmemoryPool pool)
{
	struct pool_ent **pp, *e;

	pthread_mutex_lock(&pools.lock);
	pp = pool_link(pool);
	e = *pp;
	if (e)
		*pp = e->next;
	pthread_mutex_unlock(&pools.lock);
	return e;
}

/*
 * Where a stream-ordered allocation on @s is made: in the pool of the
 * stream's device (the driver's rule), which a stream of a context other
 * than the current one puts on another GPU.
 */
static struct mem_at stream_at(CUstream s)
{
	struct mem_at at = cur_at();
	CUcontext c;

	if (!s || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD ||
	    !real.cuStreamGetCtx || real.cuStreamGetCtx(s, &c) != CUDA_SUCCESS ||
	    !c || c == at.ctx)
		return at;
	at.d = dev_of_ctx(c);
	at.ctx = c;
	return at;
}

/*
 * Where an allocation from @pool on @s is made: the pool's GPU where it is
 * known, else (a pool imported from another process) the stream's. On
 * another GPU than the stream's context, the memory is that GPU's pool's,
 * which the context does not take along when it goes (mem_ctx_gone()):
 * then no context.
 */
static struct mem_at pool_at(CUmemoryPool pool, CUstream s)
{
	struct mem_at at = stream_at(s);
	struct pool_ent *e;

	pthread_mutex_lock(&pools.lock);
	e = *pool_link(pool);
	if (e) {
		if (e->d != at.d)
			at.ctx = NULL;
		at.d = e->d;
	}
	pthread_mutex_unlock(&pools.lock);
	return at;
}

/* A reservation made for one allocation (bytes 0: none made). */
struct mem_res {
	struct gs_dev *d;
	CUcontext ctx;		/* current at the allocation */
	uint64_t bytes;
	unsigned int gen;
};

static void say_refused(struct gs_dev *d, struct gpusched *g, const char *fn,
			uint64_t bytes)
{
	struct gpusched_status st;

	gs_status_read(g, &st);
	gs_log("%s of %" PRIu64 " bytes on %s refused: CUDA_ERROR_OUT_OF_MEMORY (limit %" PRIu64 " bytes, %" PRIu64 " in use)",
	       fn, bytes, d->name, (uint64_t)st.mem_limit,
	       (uint64_t)st.mem_reserved);
}

/*
 * @d's client of generation @gen lost its service: retire it, as a launch
 * would, so that the next allocation or launch connects afresh (a program
 * may allocate for long before it launches). Without waiting on d->lock:
 * if a launch holds it, the launch finds out itself.
 */
static void mem_lost(struct gs_dev *d, unsigned int gen, int err)
{
	if (pthread_mutex_trylock(&d->lock))
		return;
	if (atomic_load(&d->g) && atomic_load(&d->client_gen) == gen) {
		retire_locked(d);
		service_missing(d, err, true);
	}
	pthread_mutex_unlock(&d->lock);
}

/*
 * Reserve @bytes on @at's GPU for a call of @fn. CUDA_ERROR_OUT_OF_MEMORY if the
 * service refuses; otherwise CUDA_SUCCESS, with @r saying what to return
 * if the driver fails (nothing where there is no accounting).
 */
static CUresult reserve(struct mem_at at, uint64_t bytes, const char *fn,
			struct mem_res *r)
{
	struct gpusched_mem m = { .bytes = bytes };
	struct gs_dev *d = at.d;
	struct gpusched *g;
	int err;

	r->d = d;
	r->ctx = at.ctx;
	r->bytes = 0;
	if (!d || !bytes) {
		STAT_INC(mem_unaccounted);
		return CUDA_SUCCESS;	/* the driver judges it */
	}
	g = mem_get(d, true);
	if (!g) {
		STAT_INC(mem_unaccounted);
		return CUDA_SUCCESS;
	}
	r->gen = atomic_load(&d->client_gen);
	err = g->be->call(g, GPUSCHED_IOC_MEM_RESERVE, &m);
	if (err == -EDQUOT)
		say_refused(d, g, fn, bytes);
	mem_put(d);
	if (!err) {
		r->bytes = bytes;
		STAT_INC(mem_reserves);
		return CUDA_SUCCESS;
	}
	if (err == -EDQUOT) {
		STAT_INC(mem_refused);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	/* The service is gone or refuses for another reason: allow it. */
	gs_debug("%s: reserving %" PRIu64 " bytes on %s failed: %s; unaccounted",
		 fn, bytes, d->name, strerror(-err));
	if (conn_error(err))
		mem_lost(d, r->gen, err);
	STAT_INC(mem_unaccounted);
	return CUDA_SUCCESS;
}

/* Give back @bytes reserved on @d with client generation @gen. */
static void give_back(struct gs_dev *d, uint64_t bytes, unsigned int gen)
{
	struct gpusched_mem m = { .bytes = bytes };
	struct gpusched *g;
	int err;

	if (!d || !bytes)
		return;
	g = mem_get(d, false);
	if (!g)
		return;		/* the client is gone, and its reservations */
	err = 0;
	if (atomic_load(&d->client_gen) == gen) {
		err = g->be->call(g, GPUSCHED_IOC_MEM_RETURN, &m);
		STAT_INC(mem_returns);
	}
	mem_put(d);
	if (err)
		gs_debug("returning %" PRIu64 " bytes on %s failed: %s",
			 bytes, d->name, strerror(-err));
}

static void unreserve(const struct mem_res *r)
{
	give_back(r->d, r->bytes, r->gen);
}

/* The driver allocated @key: remember what it reserved. */
static void remember(const struct mem_res *r, uint64_t key, enum mem_kind kind)
{
	struct mem_ent *e;

	if (!r->bytes)
		return;		/* nothing to give back at free */
	e = malloc(sizeof(*e));
	if (e) {
		e->key = key;
		e->kind = kind;
		e->bytes = r->bytes;
		e->d = r->d;
		e->ctx = kind == MEM_PTR ? r->ctx : NULL;
		e->gen = r->gen;
		if (map_put(e))
			return;
		free(e);
	}
	/* Cannot track it: rather unaccounted than never returned. */
	gs_debug("no memory to track an allocation; %" PRIu64 " bytes unaccounted",
		 r->bytes);
	unreserve(r);
}

/*
 * The driver answered @r to an allocation reserved with @res: remember
 * what it reserved for @key, or give it back.
 */
static CUresult allocated(const struct mem_res *res, CUresult r, uint64_t key,
			  enum mem_kind kind)
{
	if (r == CUDA_SUCCESS)
		remember(res, key, kind);
	else
		unreserve(res);
	return r;
}

/*
 * Context @ctx was destroyed (or reset), and with it every allocation made
 * in it that the program had not freed: give their bytes back, or a
 * program that destroys contexts without freeing (a test suite, a job per
 * context, cudaDeviceReset() between phases) would drift into a false
 * CUDA_ERROR_OUT_OF_MEMORY. cuMemCreate handles are the device's, freed
 * by cuMemRelease() only.
 */
void mem_ctx_gone(CUcontext ctx)
{
	struct mem_ent *gone = NULL, *e;

	if (!ctx)
		return;
	pthread_mutex_lock(&map.lock);
	for (size_t i = 0; i < map.nb; i++) {
		for (struct mem_ent **pp = &map.b[i]; *pp;) {
			e = *pp;
			if (e->kind == MEM_PTR && e->ctx == ctx) {
				*pp = e->next;
				map.n--;
				e->next = gone;
				gone = e;
			} else {
				pp = &e->next;
			}
		}
	}
	pthread_mutex_unlock(&map.lock);
	while (gone) {
		e = gone;
		gone = e->next;
		give_back(e->d, e->bytes, e->gen);
		free(e);
	}
}

/*
 * The driver answered @r to freeing what @e (taken out of the map before
 * the call, so that an address the driver hands out again at once is
 * never confused with it) was for: give its bytes back, or, if the driver
 * refused, put it back.
 */
static CUresult freed(struct mem_ent *e, CUresult r)
{
	if (!e)
		return r;
	if (r == CUDA_SUCCESS) {
		give_back(e->d, e->bytes, e->gen);
		free(e);
	} else if (!map_put(e)) {
		free(e);	/* cannot be: the map had it */
	}
	return r;
}

/* ------------------------------------------------------------------ */
/* The entry points */

#define NEED(fn)								\
	do {									\
		if (!resolve_real(true) || !real.fn)				\
			return CUDA_ERROR_NOT_INITIALIZED;			\
	} while (0)

static CUresult mem_alloc(CUdeviceptr *p, size_t n)
{
	struct mem_res res;
	CUresult r;

	NEED(cuMemAlloc_v2);
	if (!p)
		return real.cuMemAlloc_v2(p, n);
	r = reserve(cur_at(), n, "cuMemAlloc", &res);
	if (r != CUDA_SUCCESS)
		return r;
	r = real.cuMemAlloc_v2(p, n);
	return allocated(&res, r, r ? 0 : *p, MEM_PTR);
}

/*
 * The pitch is known only after the call: reserve the rows' width first,
 * then what the padding adds; if that is refused, the allocation is freed
 * and the call fails as if it had been refused at once.
 */
static CUresult mem_alloc_pitch(CUdeviceptr *p, size_t *pitch, size_t width,
				size_t height, unsigned int elem)
{
	struct mem_res res, pad;
	struct mem_at at;
	uint64_t want, got;
	CUresult r;

	NEED(cuMemAllocPitch_v2);
	if (!p || !pitch || __builtin_mul_overflow(width, height, &want))
		return real.cuMemAllocPitch_v2(p, pitch, width, height, elem);
	at = cur_at();
	r = reserve(at, want, "cuMemAllocPitch", &res);
	if (r != CUDA_SUCCESS)
		return r;
	r = real.cuMemAllocPitch_v2(p, pitch, width, height, elem);
	if (r != CUDA_SUCCESS) {
		unreserve(&res);
		return r;
	}
	if (res.bytes && !__builtin_mul_overflow(*pitch, height, &got) &&
	    got > want) {
		if (reserve(at, got - want, "cuMemAllocPitch", &pad) != CUDA_SUCCESS) {
			if (real.cuMemFree_v2)
				real.cuMemFree_v2(*p);
			unreserve(&res);
			return CUDA_ERROR_OUT_OF_MEMORY;
		}
		/* Both made with one client, or neither counts (gen) */
		if (pad.bytes && pad.gen == res.gen)
			res.bytes += pad.bytes;
		else
			unreserve(&pad);
	}
	remember(&res, *p, MEM_PTR);
	return CUDA_SUCCESS;
}

static CUresult mem_alloc_managed(CUdeviceptr *p, size_t n, unsigned int fl)
{
	struct mem_res res;
	CUresult r;

	NEED(cuMemAllocManaged);
	if (!p)
		return real.cuMemAllocManaged(p, n, fl);
	r = reserve(cur_at(), n, "cuMemAllocManaged", &res);
	if (r != CUDA_SUCCESS)
		return r;
	r = real.cuMemAllocManaged(p, n, fl);
	return allocated(&res, r, r ? 0 : *p, MEM_PTR);
}

static CUresult mem_free(CUdeviceptr p)
{
	struct mem_ent *e;

	NEED(cuMemFree_v2);
	e = map_take(p, MEM_PTR);
	return freed(e, real.cuMemFree_v2(p));
}

/*
 * Stream-ordered allocations count against the GPU of their stream, the
 * calling thread's context's for the default streams (stream_at()).
 */
static CUresult mem_alloc_async(CUdeviceptr *p, size_t n, CUstream s,
				bool ptsz)
{
	CUresult (*fn)(CUdeviceptr *, size_t, CUstream);
	struct mem_res res;
	CUresult r;

	NEED(cuMemAllocAsync);
	fn = ptsz && real.cuMemAllocAsync_ptsz ? real.cuMemAllocAsync_ptsz :
						 real.cuMemAllocAsync;
	if (!p)
		return fn(p, n, s);
	r = reserve(stream_at(s), n, "cuMemAllocAsync", &res);
	if (r != CUDA_SUCCESS)
		return r;
	r = fn(p, n, s);
	return allocated(&res, r, r ? 0 : *p, MEM_PTR);
}

static CUresult mem_alloc_pool(CUdeviceptr *p, size_t n, CUmemoryPool pool,
			       CUstream s, bool ptsz)
{
	CUresult (*fn)(CUdeviceptr *, size_t, CUmemoryPool, CUstream);
	struct mem_res res;
	CUresult r;

	NEED(cuMemAllocFromPoolAsync);
	fn = ptsz && real.cuMemAllocFromPoolAsync_ptsz ?
	     real.cuMemAllocFromPoolAsync_ptsz : real.cuMemAllocFromPoolAsync;
	if (!p)
		return fn(p, n, pool, s);
	r = reserve(pool_at(pool, s), n, "cuMemAllocFromPoolAsync", &res);
	if (r != CUDA_SUCCESS)
		return r;
	r = fn(p, n, pool, s);
	return allocated(&res, r, r ? 0 : *p, MEM_PTR);
}

/* A pool the program makes: its memory is where its properties say. */
static CUresult mem_pool_create(CUmemoryPool *pool, const CUmemPoolProps *props)
{
	struct gs_dev *d = NULL;
	CUresult r;

	NEED(cuMemPoolCreate);
	r = real.cuMemPoolCreate(pool, props);
	if (r != CUDA_SUCCESS || !pool || !props)
		return r;
	ensure_process_init();
	if (props->location.type == CU_MEM_LOCATION_TYPE_DEVICE) {
		d = dev_by_ordinal(props->location.id);
		if (!d)
			return r;	/* unknown: counted as before */
	}
	pool_note(*pool, d);
	return r;
}

static CUresult mem_pool_destroy(CUmemoryPool pool)
{
	struct pool_ent *e;
	CUresult r;

	NEED(cuMemPoolDestroy);
	/* Forgotten first: once destroyed, its handle may come back for
	 * another thread's new pool, whose note must stay.
	 */
	e = pool_unlist(pool);
	r = real.cuMemPoolDestroy(pool);
	if (e && r != CUDA_SUCCESS)
		pool_note(pool, e->d);
	free(e);
	return r;
}

/* A device's default or current pool: on that device. */
static CUresult mem_dev_pool(CUmemoryPool *pool, CUdevice dev, bool current)
{
	struct gs_dev *d;
	CUresult r;

	if (current) {
		NEED(cuDeviceGetMemPool);
		r = real.cuDeviceGetMemPool(pool, dev);
	} else {
		NEED(cuDeviceGetDefaultMemPool);
		r = real.cuDeviceGetDefaultMemPool(pool, dev);
	}
	if (r != CUDA_SUCCESS || !pool)
		return r;
	ensure_process_init();
	d = dev_by_ordinal(dev);
	if (d)
		pool_note(*pool, d);
	return r;
}

/* The bytes go back now: the program no longer holds them (see above). */
static CUresult mem_free_async(CUdeviceptr p, CUstream s, bool ptsz)
{
	CUresult (*fn)(CUdeviceptr, CUstream);
	struct mem_ent *e;

	NEED(cuMemFreeAsync);
	fn = ptsz && real.cuMemFreeAsync_ptsz ? real.cuMemFreeAsync_ptsz :
						real.cuMemFreeAsync;
	e = map_take(p, MEM_PTR);
	return freed(e, fn(p, s));
}

/*
 * Physical memory of the virtual memory management API, on the device
 * its properties name; counted until cuMemRelease (the driver keeps it
 * while still mapped, which the library does not follow).
 */
static CUresult mem_create(CUmemGenericAllocationHandle *h, size_t n,
			   const CUmemAllocationProp *prop,
			   unsigned long long fl)
{
	struct mem_at at = { NULL, NULL };
	struct mem_res res;
	CUresult r;

	NEED(cuMemCreate);
	if (!h || !prop)
		return real.cuMemCreate(h, n, prop, fl);
	ensure_process_init();
	if (prop->location.type == CU_MEM_LOCATION_TYPE_DEVICE)
		at.d = dev_by_ordinal(prop->location.id);
	r = reserve(at, n, "cuMemCreate", &res);
	if (r != CUDA_SUCCESS)
		return r;
	r = real.cuMemCreate(h, n, prop, fl);
	return allocated(&res, r, r ? 0 : *h, MEM_HANDLE);
}

static CUresult mem_release(CUmemGenericAllocationHandle h)
{
	struct mem_ent *e;

	NEED(cuMemRelease);
	e = map_take(h, MEM_HANDLE);
	return freed(e, real.cuMemRelease(h));
}

/*
 * @total and @free_b (the driver's, or NVML's) within @d's limit: total at
 * most the limit, free at most what the limit leaves. Read from the status
 * page, which the service keeps current when either changes. @open: open
 * the client if the process has none yet. False (nothing changed) without
 * a limit.
 */
bool mem_clamp(struct gs_dev *d, bool open, uint64_t *total, uint64_t *free_b)
{
	struct gpusched_status st;
	struct gpusched *g;
	uint64_t left;

	g = mem_get(d, open);
	if (!g)
		return false;
	gs_status_read(g, &st);
	mem_put(d);
	if (!st.mem_limit)
		return false;
	left = st.mem_limit > st.mem_reserved ? st.mem_limit - st.mem_reserved : 0;
	if (*total > st.mem_limit)
		*total = st.mem_limit;
	if (*free_b > left)
		*free_b = left;
	STAT_INC(mem_clamped);
	return true;
}

static CUresult mem_get_info(size_t *free_b, size_t *total)
{
	uint64_t t, f;
	struct gs_dev *d;
	CUresult r;

	NEED(cuMemGetInfo_v2);
	r = real.cuMemGetInfo_v2(free_b, total);
	if (r != CUDA_SUCCESS || !free_b || !total)
		return r;
	d = cur_at().d;
	t = *total;
	f = *free_b;
	if (d && mem_clamp(d, true, &t, &f)) {
		*total = (size_t)t;
		*free_b = (size_t)f;
	}
	return r;
}

/*
 * GPUSCHED_MEM_LIMIT, once @d's client @g is attached: SET_PARAMS, which
 * only lowers (the service refuses to raise or remove a limit that the
 * policy set). Called from dev_open_locked() with d->lock held.
 */
void mem_apply_limit(struct gs_dev *d, struct gpusched *g)
{
	const struct gs_config *c = gs_config();
	struct gpusched_params p = { .mask = GPUSCHED_PARAM_MEM_LIMIT };
	uint64_t total = atomic_load(&d->mem_total);
	int err;

	if (!c->mem_limit && !c->mem_limit_pct)
		return;
	if (!(g->features & GPUSCHED_FEAT_MEM)) {
		gs_debug("the token service of %s keeps no memory accounts; GPUSCHED_MEM_LIMIT has no effect",
			 d->name);
		return;
	}
	p.mem_limit = c->mem_limit;
	if (c->mem_limit_pct) {
		if (!total) {
			gs_log("GPUSCHED_MEM_LIMIT=%u%%: the memory of %s is not known; no limit set",
			       c->mem_limit_pct, d->name);
			return;
		}
		/* total * pct / 100, exactly and without overflow */
		p.mem_limit = total / 100 * c->mem_limit_pct +
			      total % 100 * c->mem_limit_pct / 100;
	}
	err = g->be->call(g, GPUSCHED_IOC_SET_PARAMS, &p);
	if (err == -EPERM)
		gs_debug("GPUSCHED_MEM_LIMIT on %s: the service's limit is lower; kept it",
			 d->name);
	else if (err)
		gs_log("GPUSCHED_MEM_LIMIT not applied on %s: %s", d->name,
		       strerror(-err));
	else
		gs_debug("memory limit on %s: %" PRIu64 " bytes", d->name,
			 (uint64_t)p.mem_limit);
}

/* ------------------------------------------------------------------ */
/*
 * Each entry point twice: exported, for programs linked against libcuda,
 * and static, for cuGetProcAddress and dlsym to hand out (gs_mem_hooks).
 */
#define GS_MEM_BOTH(name, PARAMS, ARGS, body)					\
	GS_EXPORT CUresult name PARAMS { return body ARGS; }			\
	static CUresult in_##name PARAMS { return body ARGS; }

static CUresult alloc_async(CUdeviceptr *p, size_t n, CUstream s)
{
	return mem_alloc_async(p, n, s, false);
}

static CUresult alloc_async_ptsz(CUdeviceptr *p, size_t n, CUstream s)
{
	return mem_alloc_async(p, n, s, true);
}

static CUresult alloc_pool(CUdeviceptr *p, size_t n, CUmemoryPool pool,
			   CUstream s)
{
	return mem_alloc_pool(p, n, pool, s, false);
}

static CUresult alloc_pool_ptsz(CUdeviceptr *p, size_t n, CUmemoryPool pool,
				CUstream s)
{
	return mem_alloc_pool(p, n, pool, s, true);
}

static CUresult dev_default_pool(CUmemoryPool *pool, CUdevice dev)
{
	return mem_dev_pool(pool, dev, false);
}

static CUresult dev_current_pool(CUmemoryPool *pool, CUdevice dev)
{
	return mem_dev_pool(pool, dev, true);
}

static CUresult free_async(CUdeviceptr p, CUstream s)
{
	return mem_free_async(p, s, false);
}

static CUresult free_async_ptsz(CUdeviceptr p, CUstream s)
{
	return mem_free_async(p, s, true);
}

GS_MEM_BOTH(cuMemAlloc_v2, (CUdeviceptr *p, size_t n), (p, n), mem_alloc)
GS_MEM_BOTH(cuMemAllocPitch_v2, (CUdeviceptr *p, size_t *pitch, size_t w,
				 size_t h, unsigned int e),
	    (p, pitch, w, h, e), mem_alloc_pitch)
GS_MEM_BOTH(cuMemAllocManaged, (CUdeviceptr *p, size_t n, unsigned int fl),
	    (p, n, fl), mem_alloc_managed)
GS_MEM_BOTH(cuMemFree_v2, (CUdeviceptr p), (p), mem_free)
GS_MEM_BOTH(cuMemGetInfo_v2, (size_t *f, size_t *t), (f, t), mem_get_info)
GS_MEM_BOTH(cuMemAllocAsync, (CUdeviceptr *p, size_t n, CUstream s),
	    (p, n, s), alloc_async)
GS_MEM_BOTH(cuMemAllocAsync_ptsz, (CUdeviceptr *p, size_t n, CUstream s),
	    (p, n, s), alloc_async_ptsz)
GS_MEM_BOTH(cuMemAllocFromPoolAsync, (CUdeviceptr *p, size_t n,
				      CUmemoryPool pool, CUstream s),
	    (p, n, pool, s), alloc_pool)
GS_MEM_BOTH(cuMemAllocFromPoolAsync_ptsz, (CUdeviceptr *p, size_t n,
					   CUmemoryPool pool, CUstream s),
	    (p, n, pool, s), alloc_pool_ptsz)
GS_MEM_BOTH(cuMemFreeAsync, (CUdeviceptr p, CUstream s), (p, s), free_async)
GS_MEM_BOTH(cuMemFreeAsync_ptsz, (CUdeviceptr p, CUstream s), (p, s),
	    free_async_ptsz)
GS_MEM_BOTH(cuMemPoolCreate, (CUmemoryPool *pool, const CUmemPoolProps *props),
	    (pool, props), mem_pool_create)
GS_MEM_BOTH(cuMemPoolDestroy, (CUmemoryPool pool), (pool), mem_pool_destroy)
GS_MEM_BOTH(cuDeviceGetDefaultMemPool, (CUmemoryPool *pool, CUdevice dev),
	    (pool, dev), dev_default_pool)
GS_MEM_BOTH(cuDeviceGetMemPool, (CUmemoryPool *pool, CUdevice dev),
	    (pool, dev), dev_current_pool)
GS_MEM_BOTH(cuMemCreate, (CUmemGenericAllocationHandle *h, size_t n,
			  const CUmemAllocationProp *prop,
			  unsigned long long fl),
	    (h, n, prop, fl), mem_create)
GS_MEM_BOTH(cuMemRelease, (CUmemGenericAllocationHandle h), (h), mem_release)

#define HM(n) GS_HOOK(n, in_##n, in_##n)

const struct gs_hook gs_mem_hooks[] = {
	HM(cuMemAlloc_v2), HM(cuMemAllocPitch_v2), HM(cuMemAllocManaged),
	HM(cuMemFree_v2), HM(cuMemGetInfo_v2),
	HM(cuMemAllocAsync), HM(cuMemAllocAsync_ptsz),
	HM(cuMemAllocFromPoolAsync), HM(cuMemAllocFromPoolAsync_ptsz),
	HM(cuMemFreeAsync), HM(cuMemFreeAsync_ptsz),
	HM(cuMemPoolCreate), HM(cuMemPoolDestroy),
	HM(cuDeviceGetDefaultMemPool), HM(cuDeviceGetMemPool),
	HM(cuMemCreate), HM(cuMemRelease),
};

const size_t gs_mem_nr_hooks = sizeof(gs_mem_hooks) / sizeof(gs_mem_hooks[0]);
