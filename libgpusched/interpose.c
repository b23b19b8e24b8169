// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The transparent face: gate the CUDA driver API calls that submit work to
 * a GPU, so that processes take turns through the token of each GPU.
 *
 * Entry points are caught three ways, because the CUDA runtime (and so
 * PyTorch) never calls the driver by symbol:
 *  - by symbol, for programs linked against libcuda (this library is
 *    preloaded, so its definitions come first);
 *  - through cuGetProcAddress and cuGetProcAddress_v2, which the runtime
 *    uses for every driver entry point;
 *  - through dlsym on a libcuda handle, which is how the runtime finds
 *    cuGetProcAddress in the first place (see dlsym.S).
 * A pointer that cuGetProcAddress or dlsym returns is replaced only when it
 * is the very function this library resolved from libcuda by name, so the
 * version and per-thread-stream selection stay the driver's business.
 *
 * Gate (per GPU, struct gs_dev): a launch while the status page says
 * HOLDING and not YIELD makes no system call. Otherwise one thread, under
 * d->lock, acquires, or drains the process's work and yields. Threads on
 * the fast path announce themselves in d->launching before they read the
 * page and the "draining" flag; a thread about to give the token away
 * sets "draining" and then waits for d->launching to reach zero. Both are
 * sequentially consistent, so either the launcher sees the flag and backs
 * off, or the drainer sees the launcher and waits for its launch to be
 * queued before it synchronises the context.
 *
 * Queued work is bounded (struct gs_ctx): every few launches an event is
 * recorded on the launch's stream, and a launch waits for the oldest event
 * when more than GPUSCHED_QUEUE launches may be unfinished, so a drain
 * never waits for much. A background thread, awake only while a token is
 * held, releases the token when the process stops launching for
 * GPUSCHED_IDLE_US, and answers a yield request when no launch comes.
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

#include "cuda_abi.h"
#include "internal.h"
#include "period.h"

#define GS_EXPORT __attribute__((visibility("default")))

/* ------------------------------------------------------------------ */
/* The real driver */

typedef CUresult (*launch_kernel_fn)(CUfunction, unsigned int, unsigned int,
				     unsigned int, unsigned int, unsigned int,
				     unsigned int, unsigned int, CUstream,
				     void **, void **);
typedef CUresult (*launch_kernel_ex_fn)(const CUlaunchConfig *, CUfunction,
					void **, void **);
typedef CUresult (*launch_coop_fn)(CUfunction, unsigned int, unsigned int,
				   unsigned int, unsigned int, unsigned int,
				   unsigned int, unsigned int, CUstream,
				   void **);
typedef CUresult (*graph_launch_fn)(CUgraphExec, CUstream);
typedef CUresult (*get_proc_v1_fn)(const char *, void **, int, cuuint64_t);
typedef CUresult (*get_proc_v2_fn)(const char *, void **, int, cuuint64_t,
				   CUdriverProcAddressQueryResult *);
typedef CUresult (*ctx_fn)(CUcontext);
typedef CUresult (*dev_fn)(CUdevice);
typedef CUresult (*init_fn)(unsigned int);

struct real_tab {
	launch_kernel_fn cuLaunchKernel, cuLaunchKernel_ptsz;
	launch_kernel_ex_fn cuLaunchKernelEx, cuLaunchKernelEx_ptsz;
	launch_coop_fn cuLaunchCooperativeKernel, cuLaunchCooperativeKernel_ptsz;
	graph_launch_fn cuGraphLaunch, cuGraphLaunch_ptsz;
	get_proc_v1_fn cuGetProcAddress;
	get_proc_v2_fn cuGetProcAddress_v2;
	ctx_fn cuCtxDestroy, cuCtxDestroy_v2;
	dev_fn cuDevicePrimaryCtxRelease, cuDevicePrimaryCtxRelease_v2;
	dev_fn cuDevicePrimaryCtxReset, cuDevicePrimaryCtxReset_v2;
	init_fn cuInit;
	/* helpers, never replaced */
	CUresult (*cuCtxGetCurrent)(CUcontext *);
	CUresult (*cuCtxGetDevice)(CUdevice *);
	CUresult (*cuCtxPushCurrent_v2)(CUcontext);
	CUresult (*cuCtxPopCurrent_v2)(CUcontext *);
	CUresult (*cuCtxSynchronize)(void);
	CUresult (*cuDeviceGetUuid)(CUuuid *, CUdevice);
	CUresult (*cuDeviceGetUuid_v2)(CUuuid *, CUdevice);
	CUresult (*cuEventCreate)(CUevent *, unsigned int);
	CUresult (*cuEventRecord)(CUevent, CUstream);
	CUresult (*cuEventRecord_ptsz)(CUevent, CUstream);
	CUresult (*cuEventSynchronize)(CUevent);
	CUresult (*cuEventQuery)(CUevent);
	CUresult (*cuEventElapsedTime)(float *, CUevent, CUevent);
	CUresult (*cuStreamIsCapturing)(CUstream, CUstreamCaptureStatus *);
	CUresult (*cuStreamIsCapturing_ptsz)(CUstream, CUstreamCaptureStatus *);
	CUresult (*cuThreadExchangeStreamCaptureMode)(CUstreamCaptureMode *);
};

static struct real_tab real;

static atomic_bool real_resolved;
static pthread_mutex_t real_lock = PTHREAD_MUTEX_INITIALIZER;

static void *resolve(void *h, const char *name)
{
	return gs_real_dlsym()(h, name);
}

/*
 * Find libcuda's own entry points. Called before every use and cheap once
 * done; it retries until libcuda is loaded, because dlsym may be asked
 * about cu* names before the runtime has dlopen()ed libcuda. No lock is
 * held across dlopen/dlsym: a library constructor running under the
 * loader's lock may call dlsym, which comes here.
 */
static bool resolve_real(bool load)
{
	struct real_tab t;
	void *h;

	if (atomic_load_explicit(&real_resolved, memory_order_acquire))
		return true;
	h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
	if (!h && load)
		h = dlopen("libcuda.so.1", RTLD_LAZY);
	if (!h) {
		dlerror();
		return false;
	}
#define R(name) (*(void **)&t.name = resolve(h, #name))
	R(cuLaunchKernel); R(cuLaunchKernel_ptsz);
	R(cuLaunchKernelEx); R(cuLaunchKernelEx_ptsz);
	R(cuLaunchCooperativeKernel); R(cuLaunchCooperativeKernel_ptsz);
	R(cuGraphLaunch); R(cuGraphLaunch_ptsz);
	R(cuGetProcAddress); R(cuGetProcAddress_v2);
	R(cuCtxDestroy); R(cuCtxDestroy_v2);
	R(cuDevicePrimaryCtxRelease); R(cuDevicePrimaryCtxRelease_v2);
	R(cuDevicePrimaryCtxReset); R(cuDevicePrimaryCtxReset_v2);
	R(cuInit);
	R(cuCtxGetCurrent); R(cuCtxGetDevice);
	R(cuCtxPushCurrent_v2); R(cuCtxPopCurrent_v2); R(cuCtxSynchronize);
	R(cuDeviceGetUuid); R(cuDeviceGetUuid_v2);
	R(cuEventCreate); R(cuEventRecord); R(cuEventRecord_ptsz);
	R(cuEventSynchronize); R(cuEventQuery); R(cuEventElapsedTime);
	if (!t.cuEventElapsedTime)
		*(void **)&t.cuEventElapsedTime = resolve(h, "cuEventElapsedTime_v2");
	R(cuStreamIsCapturing); R(cuStreamIsCapturing_ptsz);
	R(cuThreadExchangeStreamCaptureMode);
#undef R
	dlerror();	/* missing optional symbols leave no error behind */
	/* The handle's reference is kept: libcuda stays loaded. Racing
	 * threads found the same pointers; the first one publishes.
	 */
	pthread_mutex_lock(&real_lock);
	if (!atomic_load_explicit(&real_resolved, memory_order_relaxed)) {
		real = t;
		atomic_store_explicit(&real_resolved, true, memory_order_release);
	}
	pthread_mutex_unlock(&real_lock);
	return true;
}

/* ------------------------------------------------------------------ */
/* Statistics: per process, printed at exit with GPUSCHED_STATS=1 */

enum gs_route { ROUTE_SYMBOL, ROUTE_PROCADDR, ROUTE_DLSYM, NR_ROUTES };

static struct {
	atomic_ullong launches[NR_ROUTES];
	atomic_ullong gated;		/* launched holding the token */
	atomic_ullong unscheduled;	/* launched without a token service */
	atomic_ullong captured;		/* stream capture: no work submitted */
	atomic_ullong beside;		/* latency class beside the holder (MPS) */
	atomic_ullong denied;		/* GPUSCHED_FAIL=closed */
	atomic_ullong acquires;
	atomic_ullong yields;
	atomic_ullong idle_releases;
	atomic_ullong yield_releases;	/* yield answered by the idle thread */
	atomic_ullong drains;
	atomic_ullong throttle_waits;
	atomic_ullong dry_yields;	/* yields seen polling the last event */
	atomic_ullong held_back;	/* launches held for a latency request */
	atomic_ullong timed;		/* kernels timed on the GPU (gs_klen) */
	/* A periodic latency client's acquires at a request (acquire_kind()) */
	atomic_ullong acq_again, acq_unpredicted, acq_off_beat, acq_on_beat;
	atomic_ullong early_asks;	/* tokens granted ahead of our request */
	atomic_ullong early_hits;	/* ... that our request then found */
	atomic_ullong early_misses;	/* ... given back with no request */
	atomic_ullong procaddr_hooks;	/* cuGetProcAddress results replaced */
	atomic_ullong dlsym_hooks;	/* dlsym results replaced */
} stats;

/*
 * The token's way, timed for GPUSCHED_STATS (the last GS_TIMES of each,
 * in microseconds): how long a grant took to come (acquire and yield
 * calls), and how long after a yield was asked the token was given away.
 */
#define GS_TIMES 4096
struct gs_times {
	atomic_uint n;
	uint32_t us[GS_TIMES];
};

static struct gs_times t_grant, t_answer;

static void times_add(struct gs_times *t, uint64_t ns)
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

#define STAT_INC(f) atomic_fetch_add_explicit(&stats.f, 1, memory_order_relaxed)
#define STAT_GET(f) atomic_load_explicit(&stats.f, memory_order_relaxed)

/* ------------------------------------------------------------------ */
/* Per GPU and per context state */

/* Progress events per context: a queue's worth while kernels are timed. */
#define GS_RING 32
#define GS_QUEUE_UNMEASURED 4
/* Samples of a launch's GPU time averaged before the first estimate. */
#define GS_EST_SEED 4
/*
 * Last-of-queue waits that poll for a sample after one found its kernel
 * done (wait_dry()). A sample needs two events seen in one turn, and
 * where a yield ends every turn after one launch (kernels longer than a
 * latency client's period) none comes: without a bound every wait polled
 * its kernel through, 1.3 ms of CPU a 3 ms launch (66-lib-long.t).
 */
#define GS_DRY_POLLS 8
/* While someone waits for a token we hold: how often the idle thread looks. */
#define GS_YIELD_POLL_NS 50000ull
/* An early hand-over spins this last stretch rather than trust a wake-up. */
#define GS_SPIN_NS 100000ull
/* Left running at a hand-over to a latency-class client (handover_left()). */
#define GS_LAT_HANDOVER_NS 100000ull

struct gs_dev;

/*
 * One kernel's GPU time, by what was launched (launch_key()): the function
 * and its grid, or the graph. Kept per context while kernel_times() holds,
 * in an open-addressed table of GS_KLEN, GS_KLEN_PROBE tries a key.
 */
#define GS_KLEN 128
#define GS_KLEN_PROBE 8
struct gs_klen {
	uint64_t key;			/* 0: free */
	uint64_t ns;			/* averaged 3:1, as est_ns */
};

/* A CUDA context seen launching, with its ring of progress events. */
struct gs_ctx {
	struct gs_ctx *next;		/* G.ctxs, append-only */
	struct gs_ctx *dev_next;	/* d->ctxs, append-only */
	CUcontext ctx;
	CUdevice ordinal;
	struct gs_dev *d;
	atomic_bool dead;		/* the context was destroyed */
	pthread_mutex_t lock;		/* everything below */
	uint64_t launches;		/* gated launches queued */
	uint64_t done;			/* launches known to have finished */
	uint64_t last_mark;		/* launches when the last event was recorded */
	uint64_t head_seq;		/* events popped so far */
	unsigned int head, nr;
	CUevent ev[GS_RING];
	uint64_t ev_mark[GS_RING];
	/* cum_ns when each event was recorded. */
	uint64_t ev_cum[GS_RING];
	/* The key of the launch an event follows, if the event before it
	 * marks that launch's start (frame_start()): the two events' GPU
	 * times then frame that kernel. 0: no.
	 */
	uint64_t ev_key[GS_RING];
	CUstream ev_stream[GS_RING];
	/* The newest event popped, kept unrecorded for the next one's
	 * frame while prev_ok (so the ring holds one event fewer).
	 */
	unsigned int prev;
	bool prev_ok;
	unsigned int nr_events;		/* events created */
	unsigned int throttled;		/* threads waiting in throttle() */
	/* GPU time per launch, measured between throttled waits: bounds the
	 * queue in time as well as in launches. 0: not known yet.
	 */
	uint64_t est_ns;
	/* How far the samples fall from est_ns, averaged the same way. */
	uint64_t dev_ns;
	/* Each launch's predicted GPU time (launch_ns()), summed over all
	 * launches, and up to cs->done: what is queued is the difference.
	 */
	uint64_t cum_ns, done_cum;
	struct gs_klen klen[GS_KLEN];
	uint64_t last_pop_ns, last_pop_mark;
	/* When our queued work will be done, predicted: from the last event
	 * seen completing, or a launch into an empty queue, then each launch
	 * adds its length after the end so far or after its own time (the
	 * queue may have run dry). 0: not known (the length unknown, or
	 * nothing seen completing or launched alone since the grant).
	 */
	uint64_t end_ns;
	/* The first GS_EST_SEED samples, summed: one alone can be far off. */
	uint64_t seed_sum;
	unsigned int seed_n;
	/* A last-of-queue wait found its kernel already done, and no sample
	 * was taken since: the next ones poll from the start (wait_dry()),
	 * this many more of them.
	 */
	unsigned int dry_poll;
};

enum gs_dev_mode { DEV_NEW, DEV_OPEN, DEV_UNSCHED };

/* One GPU, by UUID: one token client for all contexts on it. */
struct gs_dev {
	struct gs_dev *next;		/* G.devs, append-only */
	unsigned char uuid[GPUSCHED_UUID_LEN];
	char name[42];	/* GPU-xxxxxxxx-..., as nvidia-smi and sysfs */
	pthread_mutex_t lock;		/* slow path: open, acquire, drain, release */
	struct gpusched *_Atomic g;	/* NULL: no client */
	atomic_uint launching;		/* launches past the fast path */
	atomic_bool draining;		/* giving the token away: stay off */
	atomic_ullong launches;		/* gated launches, for idle detection */
	struct gs_ctx *_Atomic ctxs;
	enum gs_dev_mode mode;		/* under lock */
	uint64_t retry_at;		/* DEV_UNSCHED: next try to connect */
	/* the idle thread's view */
	uint64_t seen_launches, seen_at;
	/*
	 * A periodic latency-class client (lat_observe(), under lock). The
	 * prediction is read without the lock (queue_limit(), hold_back()):
	 * the next request is expected from lat_next on (0: none), off the
	 * beat after lat_tol, given up for after lat_due(). A client that
	 * says when its request comes (GPUSCHED_ACQUIRE_DUE) asks lat_lead
	 * before it (0: it does not say; lat_next is then when it asks).
	 */
	struct gs_period lat;
	atomic_ullong lat_next, lat_tol, lat_lead;
	/* The last yield_due_ns that came when predicted (lat_expected()). */
	atomic_ullong lat_hit;
	/*
	 * Our own requests, when this process is a periodic latency-class
	 * client (under lock: gate_slow() notes them, the idle thread reads
	 * them). ask_early() asks for the token GPUSCHED_LATENCY_LEAD_US
	 * before the next one is due (self_next; 0: no period), once per
	 * request (asked_for), and keeps it idle for the request until
	 * early_until (0: the token we hold was not asked early). early is
	 * set while such an ask is under way or early_until is set: a launch
	 * then waits for the status page to say the token is ours, not for
	 * d->lock, and once it is, records when it came in early_req (the
	 * first only) for ask_early() or idle_check() to note (early_done()).
	 */
	struct gs_period self;
	uint64_t self_next, asked_for, early_until;
	atomic_bool early;
	atomic_ullong early_req;
};

static struct {
	pthread_mutex_t lock;		/* lists, thread start */
	pthread_cond_t cond;		/* wakes the idle thread */
	struct gs_dev *_Atomic devs;
	struct gs_ctx *_Atomic ctxs;
	atomic_uint gen;		/* bumped when a context dies */
	bool bg_started, bg_stop, bg_kick;
	pthread_t bg;
	bool hooks_registered;
	atomic_bool warned_no_service, warned_lost, warned_params, warned_err;
} G = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
};

static pthread_once_t cond_once = PTHREAD_ONCE_INIT;

static __thread struct {
	CUcontext ctx;
	struct gs_ctx *cs;
	unsigned int gen;
} tls_cache;

static void cond_init(void)
{
	pthread_condattr_t a;

	pthread_condattr_init(&a);
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	pthread_cond_init(&G.cond, &a);
	pthread_condattr_destroy(&a);
}

static void process_init(void);

/* Register what the process needs once it really uses CUDA. */
static void ensure_process_init(void)
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

/* The state of the current context; NULL: launch unscheduled. */
static struct gs_ctx *ctx_current(void)
{
	unsigned int gen = atomic_load_explicit(&G.gen, memory_order_acquire);
	unsigned char uuid[16];
	struct gs_ctx *cs, *fresh;
	CUcontext ctx = NULL;
	CUdevice dev;

	if (!real.cuCtxGetCurrent || real.cuCtxGetCurrent(&ctx) != CUDA_SUCCESS ||
	    !ctx)
		return NULL;
	if (tls_cache.ctx == ctx && tls_cache.gen == gen)
		return tls_cache.cs;

	for (cs = atomic_load(&G.ctxs); cs; cs = cs->next)
		if (cs->ctx == ctx && !atomic_load(&cs->dead))
			goto found;

	/* New context: no CUDA call under G.lock (see the fork handlers). */
	if (!real.cuCtxGetDevice || real.cuCtxGetDevice(&dev) != CUDA_SUCCESS ||
	    ctx_uuid(dev, uuid))
		return NULL;
	fresh = calloc(1, sizeof(*fresh));
	if (!fresh)
		return NULL;
	pthread_mutex_init(&fresh->lock, NULL);
	fresh->ctx = ctx;
	fresh->ordinal = dev;
	for (unsigned int i = 0; i < GS_RING; i++) {
		if (!real.cuEventCreate || !real.cuEventSynchronize ||
		    real.cuEventCreate(&fresh->ev[i], CU_EVENT_BLOCKING_SYNC) !=
		    CUDA_SUCCESS)
			break;
		fresh->nr_events++;
	}

	pthread_mutex_lock(&G.lock);
	for (cs = atomic_load(&G.ctxs); cs; cs = cs->next)
		if (cs->ctx == ctx && !atomic_load(&cs->dead))
			break;
	if (!cs) {
		cs = fresh;
		fresh = NULL;
		cs->d = dev_get(uuid);
		if (!cs->d) {
			pthread_mutex_unlock(&G.lock);
			free(cs);	/* events die with the context */
			return NULL;
		}
		cs->dev_next = atomic_load(&cs->d->ctxs);
		atomic_store(&cs->d->ctxs, cs);
		cs->next = atomic_load(&G.ctxs);
		atomic_store(&G.ctxs, cs);
		gs_debug("context %p is device %d, %s", (void *)ctx, dev,
			 cs->d->name);
	}
	pthread_mutex_unlock(&G.lock);
	/* Lost a race with another thread: its events are in use, ours
	 * stay unused in the context (a handful, once).
	 */
	free(fresh);
found:
	tls_cache.ctx = ctx;
	tls_cache.cs = cs;
	tls_cache.gen = gen;
	return cs;
}

/* A context went away: forget its state (kept allocated, see below). */
static void ctx_forget(CUcontext ctx, int ordinal)
{
	struct gs_ctx *cs;

	/* Structures are never freed while the process runs, so a thread
	 * still holding a pointer from its cache reads valid memory; the
	 * generation bump makes every cache miss.
	 */
	for (cs = atomic_load(&G.ctxs); cs; cs = cs->next)
		if ((ctx && cs->ctx == ctx) || (!ctx && cs->ordinal == ordinal))
			atomic_store(&cs->dead, true);
	atomic_fetch_add(&G.gen, 1);
}

/* ------------------------------------------------------------------ */
/* Draining and the bounded queue */

enum gs_sharing { ALONE, SHARED, SHARED_LATENCY };

/* The token's grace time, from the status page; before it is open: none. */
static uint64_t grace_ns(struct gs_dev *d)
{
	struct gpusched *g = atomic_load(&d->g);
	uint64_t ns = g ? __atomic_load_n(&g->st->grace_ns, __ATOMIC_RELAXED) : 0;

	return ns ? ns : UINT64_MAX;
}

/*
 * Is this process of the latency class on @g? As the service last set it
 * (the daemon's rules may have), or, from a service that does not say, as
 * it was started (GPUSCHED_CLASS).
 */
static bool is_latency(const struct gpusched *g)
{
	uint32_t c = g ? __atomic_load_n(&g->st->class_plus_one,
					 __ATOMIC_RELAXED) : 0;

	if (c)
		return c - 1 == GPUSCHED_CLASS_LATENCY;
	return gs_config()->sched_class == GPUSCHED_CLASS_LATENCY;
}

/* Idle time after which the token goes to a waiter (GPUSCHED_IDLE_WANTED_US). */
static uint64_t idle_wanted(const struct gpusched *g)
{
	const struct gs_config *c = gs_config();

	if (c->idle_wanted_ns != (uint64_t)-1)
		return c->idle_wanted_ns;
	return is_latency(g) ? 100000 : c->idle_ns;
}

/*
 * Do other clients share @d's token, and may one of them need the GPU at
 * once (latency class, not us)? From the status page, whose counts are
 * current while we hold the token (they are rewritten with every change
 * of our state or of a client's class, and a newcomer who waits sets
 * YIELD). Before the token is open: assume shared.
 */
static enum gs_sharing dev_sharing(struct gs_dev *d)
{
	struct gpusched *g = atomic_load(&d->g);
	uint32_t lat, mine;

	if (!g)
		return SHARED;
	if (__atomic_load_n(&g->st->nr_clients, __ATOMIC_RELAXED) <= 1)
		return ALONE;
	lat = __atomic_load_n(&g->st->nr_latency, __ATOMIC_RELAXED);
	mine = is_latency(g);
	return lat > mine ? SHARED_LATENCY : SHARED;
}

/* Somebody waits for @g's token, or is about to be asked for it. */
static bool dev_wanted(const struct gpusched *g, uint32_t fl)
{
	return (fl & GPUSCHED_ST_YIELD) ||
	       __atomic_load_n(&g->st->nr_waiting, __ATOMIC_RELAXED);
}

/*
 * Holder of @d's token asked to yield (@fl) while a latency-class client
 * is attached: note when, and predict the next request once requests come
 * at a steady period (a probe, an inference server's ticks). Requests of
 * other waiters (the end of our slice) come at other times and break the
 * period, which then is not used until it holds again. queue_limit() then
 * lets our queue grow while the next request is far off and run dry when
 * it is due, so that the latency client neither waits for a deep queue
 * nor keeps ours shallow all the time. Called with d->lock held.
 */
static void lat_observe(struct gs_dev *d, const struct gpusched *g,
			uint32_t fl, uint64_t now)
{
	uint64_t at, due, next, was, tol, seen, last;

	if (!gs_config()->latency_predict || !YIELD_ASKED(fl) ||
	    dev_sharing(d) != SHARED_LATENCY)
		return;
	/* When we were asked; older services do not say: when we saw it.
	 * Seen late, the request would look due later than it is, and our
	 * queue, ending then, would make the next one wait as long again.
	 * A waiter that asks ahead says when its request comes (yield_due_ns):
	 * the period is then that of its requests, and our queue may run
	 * until the request rather than until the ask.
	 */
	at = __atomic_load_n(&g->st->yield_ns, __ATOMIC_RELAXED);
	due = __atomic_load_n(&g->st->yield_due_ns, __ATOMIC_RELAXED);
	seen = now;
	if (at && at < now)
		now = at;
	if (at && due > at) {
		if (!atomic_exchange(&d->lat_lead, due - at))
			gs_debug("%s: the latency-class client says when its requests come (%llu us after it asks)",
				 d->name, (unsigned long long)((due - at) / 1000));
		now = due;
	} else if (at) {
		atomic_store(&d->lat_lead, 0);
	}
	was = atomic_load(&d->lat_next);
	tol = atomic_load(&d->lat_tol);
	last = d->lat.last;
	if (due > at && at && was && !gs_period_off(due, was, tol))
		atomic_store(&d->lat_hit, due);
	next = gs_period_note(&d->lat, now);
	/* A request off the predicted time, for GPUSCHED_DEBUG: what breaks
	 * a period (queue_limit() and hold_back() go by it).
	 */
	if (was && d->lat.last == now && gs_period_off(now, was, tol))
		gs_debug("%s: latency-class request %+lld us from the predicted time (seen %lld us after it, yield_ns %s, %lld us after the last)",
			 d->name, ((long long)now - (long long)was) / 1000,
			 ((long long)seen - (long long)now) / 1000,
			 at ? "set" : "0", ((long long)now - (long long)last) / 1000);
	atomic_store(&d->lat_tol, gs_period_tol(d->lat.period));
	atomic_store(&d->lat_next, next);
	if (next && d->lat.count == GS_PERIOD_CONFIRM && d->lat.last == now)
		gs_debug("%s: latency-class requests every %llu us",
			 d->name, (unsigned long long)(d->lat.period / 1000));
}

/*
 * Until when the predicted request @next of @d's latency client may still
 * come: requests come late, not early (on the H200 one in a hundred came
 * 250-450 us after its 2 ms beat), so twice the period's tolerance.
 */
static uint64_t lat_due(const struct gs_dev *d, uint64_t next)
{
	return next + 2 * atomic_load_explicit(&d->lat_tol, memory_order_relaxed);
}

/*
 * What follows is not our work running back to back (the queue ran dry,
 * the token went away, a fork): no launch-length sample spans it and no
 * end is predicted until an event is seen completing again, or a launch
 * finds nothing of ours queued (queued()). Caller holds cs->lock.
 */
static void ctx_unstamp_locked(struct gs_ctx *cs)
{
	cs->last_pop_ns = 0;
	cs->end_ns = 0;
}

/* The same for every context of @d: the token changed hands. */
static void dev_unstamp(struct gs_dev *d)
{
	for (struct gs_ctx *cs = atomic_load(&d->ctxs); cs; cs = cs->dev_next) {
		pthread_mutex_lock(&cs->lock);
		ctx_unstamp_locked(cs);
		pthread_mutex_unlock(&cs->lock);
	}
}

static void ctx_pop_locked(struct gs_ctx *cs, unsigned int n);

/* Nothing queued is ours to wait for any more. Caller holds cs->lock. */
static void ctx_empty_locked(struct gs_ctx *cs)
{
	cs->done = cs->launches;
	cs->done_cum = cs->cum_ns;
	cs->head_seq += cs->nr;
	cs->nr = 0;
	cs->prev_ok = false;
	ctx_unstamp_locked(cs);
}

static void ctx_sync(struct gs_ctx *cs)
{
	CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
	CUcontext popped;
	CUresult r;

	if (atomic_load(&cs->dead) || !real.cuCtxPushCurrent_v2 ||
	    !real.cuCtxPopCurrent_v2 || !real.cuCtxSynchronize)
		return;
	if (real.cuCtxPushCurrent_v2(cs->ctx) != CUDA_SUCCESS)
		return;
	/* A synchronisation is "unsafe" while another thread captures a
	 * stream in global mode; in relaxed mode it is allowed and leaves
	 * that capture alone.
	 */
	if (real.cuThreadExchangeStreamCaptureMode)
		real.cuThreadExchangeStreamCaptureMode(&mode);
	r = real.cuCtxSynchronize();
	if (real.cuThreadExchangeStreamCaptureMode)
		real.cuThreadExchangeStreamCaptureMode(&mode);
	real.cuCtxPopCurrent_v2(&popped);
	if (r != CUDA_SUCCESS)
		gs_debug("cuCtxSynchronize of context %p: error %d",
			 (void *)cs->ctx, r);
	pthread_mutex_lock(&cs->lock);
	if (r == CUDA_SUCCESS && cs->nr)
		ctx_pop_locked(cs, cs->nr);	/* all done: frames too */
	ctx_empty_locked(cs);	/* the queue ran dry */
	pthread_mutex_unlock(&cs->lock);
}

/* Is @cs's GPU still busy with our work, or a thread waiting for room? */
static bool ctx_busy(struct gs_ctx *cs)
{
	bool busy;

	if (atomic_load(&cs->dead))
		return false;
	pthread_mutex_lock(&cs->lock);
	busy = cs->throttled > 0;
	if (!busy && cs->nr && real.cuEventQuery) {
		unsigned int last = (cs->head + cs->nr - 1) % cs->nr_events;

		busy = real.cuEventQuery(cs->ev[last]) == CUDA_ERROR_NOT_READY;
	}
	pthread_mutex_unlock(&cs->lock);
	return busy;
}

/*
 * Launch lengths that differ from launch to launch by more than a quarter
 * of their mean, on average: PyTorch's small element-wise kernels and its
 * GEMMs of a millisecond. The mean then says little of the next launch.
 */
static bool unsteady(const struct gs_ctx *cs)
{
	return cs->est_ns && 4 * cs->dev_ns > cs->est_ns;
}

/*
 * Time each kernel on the GPU, and predict each launch by what it launches
 * rather than by the mean (launch_ns()): where the lengths are unsteady and
 * a latency client's requests must not wait for a queue that the mean
 * misjudged. Beside PyTorch inference the training loop, its queue
 * counted in launches of the mean length, answered yields 1.3-1.5 ms late
 * at p90, 1.9-2.4 ms at p99; timed, 0.1-0.4 ms at p90 and 0.5-0.6 ms at
 * p99 in five runs of seven, and the inference's median halved
 * (Documentation/benchmarks.md, tune57-59).
 * Elsewhere the mean is as good and cheaper: an event every few launches.
 * While timed, the mean and its deviation come from the GPU's times too
 * (klen_sample()), so that the timing ends once the lengths are steady.
 */
static bool kernel_times(struct gs_ctx *cs)
{
	return gs_config()->time_kernels && unsteady(cs) &&
	       dev_sharing(cs->d) == SHARED_LATENCY;
}

/* @key's entry in @cs's table; @add: make one if none. Caller holds cs->lock. */
static struct gs_klen *klen_find(struct gs_ctx *cs, uint64_t key, bool add)
{
	uint64_t h = key ^ (key >> 29);
	struct gs_klen *k;

	for (unsigned int i = 0; i < GS_KLEN_PROBE; i++) {
		k = &cs->klen[(h + i) % GS_KLEN];
		if (k->key == key)
			return k;
		if (!k->key)
			goto take;
	}
	/* Full around it: the newest kernel takes the first place. */
	k = &cs->klen[h % GS_KLEN];
take:
	if (!add)
		return NULL;
	k->key = key;
	k->ns = 0;
	return k;
}

/* The GPU time predicted for a launch of @key. Caller holds cs->lock. */
static uint64_t launch_ns(struct gs_ctx *cs, uint64_t key)
{
	struct gs_klen *k;

	if (key && kernel_times(cs)) {
		k = klen_find(cs, key, false);
		if (k)
			return k->ns;
	}
	return cs->est_ns;
}

/* Our GPU time queued after cs->done, predicted. Caller holds cs->lock. */
static uint64_t queued_ns(struct gs_ctx *cs)
{
	if (kernel_times(cs))
		return cs->cum_ns - cs->done_cum;
	return (cs->launches - cs->done) * cs->est_ns;
}

/* The same after event @slot. */
static uint64_t work_after(struct gs_ctx *cs, unsigned int slot)
{
	if (kernel_times(cs))
		return cs->cum_ns - cs->ev_cum[slot];
	return (cs->launches - cs->ev_mark[slot]) * cs->est_ns;
}

static void est_sample(struct gs_ctx *cs, uint64_t ns);

/*
 * Event @slot completed, the one before it too (cs->prev): if the two frame
 * one kernel (ev_key), the GPU time between them is a sample of that
 * kernel's. Caller holds cs->lock.
 */
static void klen_sample(struct gs_ctx *cs, unsigned int slot)
{
	struct gs_klen *k;
	uint64_t ns;
	float ms;

	if (!cs->ev_key[slot] || !cs->prev_ok ||
	    cs->ev_mark[cs->prev] + 1 != cs->ev_mark[slot] ||
	    !real.cuEventElapsedTime ||
	    real.cuEventElapsedTime(&ms, cs->ev[cs->prev], cs->ev[slot]) !=
	    CUDA_SUCCESS || !(ms >= 0.0f && ms < 60000.0f))
		return;
	ns = (uint64_t)(ms * 1e6f);
	if (!ns)
		ns = 1;
	k = klen_find(cs, cs->ev_key[slot], true);
	k->ns = k->ns ? (3 * k->ns + ns) / 4 : ns;
	STAT_INC(timed);
	/* The mean and its deviation, from the GPU's times while it has
	 * them: the waits' samples, one launch each now, take the short
	 * kernels and miss the long ones (see wait_reach()), and the mean
	 * they made said the lengths were steady, which ended the timing.
	 */
	est_sample(cs, ns);
}

/* The oldest @n events of @cs completed: pop them. Caller holds cs->lock. */
static void ctx_pop_locked(struct gs_ctx *cs, unsigned int n)
{
	unsigned int last = (cs->head + n - 1) % cs->nr_events;

	for (unsigned int i = 0; i < n; i++) {
		unsigned int slot = (cs->head + i) % cs->nr_events;

		klen_sample(cs, slot);
		cs->prev = slot;
		cs->prev_ok = true;
	}
	cs->done = cs->ev_mark[last];
	cs->done_cum = cs->ev_cum[last];
	cs->head = (last + 1) % cs->nr_events;
	cs->head_seq += n;
	cs->nr -= n;
}

/*
 * The token's flags on @d (0: no client) and, with @due, its page's
 * yield_due_ns, for a thread outside the gate: read under the launching
 * count, as the gate's fast path reads them, since retire_locked() waits
 * for that count before it closes the client and unmaps its status page.
 */
static uint32_t dev_page(struct gs_dev *d, uint64_t *due)
{
	struct gpusched *g;
	uint32_t fl = 0;

	atomic_fetch_add(&d->launching, 1);
	g = atomic_load(&d->g);
	if (g) {
		fl = gs_status_flags(g);
		if (due)
			*due = __atomic_load_n(&g->st->yield_due_ns,
					       __ATOMIC_RELAXED);
	}
	atomic_fetch_sub(&d->launching, 1);
	return fl;
}

static uint32_t dev_flags(struct gs_dev *d)
{
	return dev_page(d, NULL);
}

static uint64_t dev_yield_due(struct gs_dev *d)
{
	uint64_t due = 0;

	dev_page(d, &due);
	return due;
}

/* Sleep until CLOCK_MONOTONIC reads @t (ns). */
static void sleep_until(uint64_t t)
{
	struct timespec ts = { (time_t)(t / 1000000000ull),
			       (long)(t % 1000000000ull) };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/*
 * Wait until about @left_ns of @cs's queued work is left unfinished: the
 * early hand-over. The token is then given away while our last kernels
 * run, so that the next holder's wake-up and first launches overlap them
 * and its kernels are queued by the time ours end (the GPU switches
 * contexts once ours has no work). The end is predicted from the newest
 * event with more than @left_ns of work after it, seen completing, and
 * the measured GPU time per launch. Without a measurement, or with no
 * event to go by: wait for everything (ctx_sync).
 */
static void ctx_drain_to(struct gs_ctx *cs, uint64_t left_ns)
{
	uint64_t until = 0;

	pthread_mutex_lock(&cs->lock);
	while (cs->est_ns && left_ns && !atomic_load(&cs->dead)) {
		uint64_t seq = cs->head_seq, now, after;
		unsigned int i = 0, slot;
		CUevent ev;

		if (queued_ns(cs) <= left_ns) {
			pthread_mutex_unlock(&cs->lock);
			return;
		}
		if (!cs->nr)
			break;
		/* One event left: it is the end of our work, and waiting for
		 * it would drain fully. Predict from the last one seen
		 * completing instead, as wait_dry() does.
		 */
		if (cs->nr == 1 && cs->end_ns) {
			now = gs_now_ns();
			until = cs->end_ns;
			if (until <= now + left_ns) {
				pthread_mutex_unlock(&cs->lock);
				return;
			}
			until -= left_ns;
			break;
		}
		for (unsigned int k = 1; k < cs->nr; k++) {
			slot = (cs->head + k) % cs->nr_events;
			if (work_after(cs, slot) > left_ns)
				i = k;
		}
		slot = (cs->head + i) % cs->nr_events;
		ev = cs->ev[slot];
		cs->throttled++;
		pthread_mutex_unlock(&cs->lock);
		real.cuEventSynchronize(ev);
		now = gs_now_ns();
		pthread_mutex_lock(&cs->lock);
		cs->throttled--;
		if (cs->head_seq != seq)
			continue;	/* a throttled launch popped it: look again */
		ctx_pop_locked(cs, i + 1);
		ctx_unstamp_locked(cs);
		after = queued_ns(cs);
		if (after > left_ns) {
			until = now + after - left_ns;
			break;
		}
	}
	pthread_mutex_unlock(&cs->lock);
	if (!until) {
		ctx_sync(cs);
		return;
	}
	/* Sleep most of the way, spin the rest: a wake-up can be late. */
	if (until > gs_now_ns() + GS_SPIN_NS)
		sleep_until(until - GS_SPIN_NS);
	while (gs_now_ns() < until)
		;
}

/*
 * Was the request due at @due (yield_due_ns) the one predicted? Only then
 * was our queue bounded to end by it; a request that came off the beat
 * finds a queue as deep as any other time.
 */
static bool lat_expected(struct gs_dev *d, uint64_t due)
{
	uint64_t next = atomic_load_explicit(&d->lat_next, memory_order_relaxed);
	uint64_t tol = atomic_load_explicit(&d->lat_tol, memory_order_relaxed);

	if (due == atomic_load_explicit(&d->lat_hit, memory_order_relaxed))
		return true;	/* noted by lat_observe() already */
	return next && !gs_period_off(due, next, tol);
}

/*
 * How much of our work may be left running when we give the token away
 * (GPUSCHED_HANDOVER_US): enough to hide the token's way behind it. A
 * latency-class client's request waits for all of it, holding the token
 * meanwhile: to one, no more than GS_LAT_HANDOVER_NS (the token's way on
 * the H200; Documentation/benchmarks.md has what 600 us did there). But
 * where it said when its request comes (yield_due_ns), and that request
 * was the one predicted (lat_expected()), our queue was bounded to end by
 * then (queue_bound()): what ends by the request, and GS_LAT_HANDOVER_NS
 * more, may run on, and the token goes at once. On the H200, asking 400
 * us ahead, the probe then had a p99 of 304-312 us with its busy
 * neighbour keeping 0.77 of the GPU, against 443-511 us for the ask
 * without a time (benchmarks.md, tune73). Leaving all of
 * GPUSCHED_HANDOVER_US for any such request took PyTorch's inference to a
 * p99 of 4.8 ms beside training (tune72): training's queue had not been
 * bounded by requests that came off its beat.
 */
static uint64_t handover_left(struct gs_dev *d)
{
	uint64_t ns = gs_config()->handover_ns, due, now;

	if (dev_sharing(d) != SHARED_LATENCY || ns <= GS_LAT_HANDOVER_NS)
		return ns;
	due = dev_yield_due(d);
	now = gs_now_ns();
	if (due <= now + GS_LAT_HANDOVER_NS || !lat_expected(d, due))
		return GS_LAT_HANDOVER_NS;
	due = due - now + GS_LAT_HANDOVER_NS;
	return due < ns ? due : ns;
}

/*
 * Stop this process's launches on @d and wait for its work to finish, or,
 * @early, for all but GPUSCHED_HANDOVER_US of it (ctx_drain_to()). Called
 * with d->lock held; the caller clears d->draining once the token is
 * given away (or kept).
 */
static void drain_locked(struct gs_dev *d, bool early)
{
	uint64_t left_ns = early ? handover_left(d) : 0;
	unsigned int spins = 0;

	atomic_store(&d->draining, true);
	while (atomic_load(&d->launching)) {
		/* Launches in flight are CPU work of microseconds. */
		if (++spins < 64) {
			sched_yield();
		} else {
			struct timespec ts = { 0, 20000 };

			nanosleep(&ts, NULL);
		}
	}
	for (struct gs_ctx *cs = atomic_load(&d->ctxs); cs; cs = cs->dev_next)
		ctx_drain_to(cs, left_ns);
	/* The token goes: the next wait spans another's turn, and its time
	 * is no sample of our launches' length.
	 */
	dev_unstamp(d);
	STAT_INC(drains);
}

/*
 * Launches allowed unfinished: GPUSCHED_QUEUE, and no more than
 * GPUSCHED_QUEUE_US of GPU time once the launches' length is known, so
 * that a yield drains within that time whatever the kernels' size; while
 * nobody else is attached to the token, GPUSCHED_QUEUE_ALONE_US instead
 * (no yield to drain for; a deep queue hides the CPU's hiccups).
 * queue_bound() is the bound in time (and *@floorp, the launches always
 * allowed), queue_limit() in launches of the mean length, queue_full()
 * applies one of them. Callers hold cs->lock.
 */
static uint64_t queue_bound(struct gs_ctx *cs, uint64_t *floorp)
{
	const struct gs_config *c = gs_config();
	uint64_t ns = c->queue_alone_ns, floor = 2, next, now;

	switch (dev_sharing(cs->d)) {
	case SHARED_LATENCY:
		/* Kernels longer than the bound run one at a time: each
		 * costs a CPU round trip, but a latency client waits for
		 * one kernel, not two.
		 */
		ns = c->queue_latency_ns;
		floor = 1;
		next = atomic_load_explicit(&cs->d->lat_next, memory_order_relaxed);
		if (!next)
			break;
		/* Its next request is predicted: until then, queue what
		 * ends by then (up to the shared bound); from then until
		 * it is overdue (lat_due()), one launch at a time.
		 */
		now = gs_now_ns();
		if (now < next) {
			ns = next - now;
			if (ns > c->queue_ns)
				ns = c->queue_ns;
		} else if (now <= lat_due(cs->d, next)) {
			ns = 0;
		}
		break;
	case SHARED:
		ns = c->queue_ns;
		break;
	case ALONE:
		break;
	}
	/* A holder asked to yield must be done within the grace time. */
	if (ns > grace_ns(cs->d) / 2)
		ns = grace_ns(cs->d) / 2;
	*floorp = floor;
	return ns;
}

static uint64_t queue_limit(struct gs_ctx *cs)
{
	uint64_t floor, ns = queue_bound(cs, &floor), n = gs_config()->queue;

	if (cs->est_ns && ns / cs->est_ns < n)
		n = ns / cs->est_ns;
	/* Until measured, kernels may be long: a few, so that the first
	 * yield drains in time too; the first waits measure them.
	 */
	if (!cs->est_ns && n > GS_QUEUE_UNMEASURED)
		n = GS_QUEUE_UNMEASURED;
	/* The next kernel is always queued, so that the GPU does not wait
	 * for the CPU (but see SHARED_LATENCY). With the early hand-over a
	 * deep queue costs no idle GPU at a yield, only a later one: PyTorch
	 * loops, which launch at Python's pace, keep the GPU busy only with
	 * ~10 ms queued (Documentation/benchmarks.md).
	 */
	return n < floor ? floor : n;
}

/*
 * Must a launch of @key wait for room? Timed kernels go by their predicted
 * GPU time (queue_bound()), others by the count of queue_limit().
 */
static bool queue_full(struct gs_ctx *cs, uint64_t key)
{
	uint64_t n = cs->launches - cs->done, floor, ns;

	if (!kernel_times(cs))
		return n >= queue_limit(cs);
	ns = queue_bound(cs, &floor);
	if (n < floor)
		return false;
	return n >= gs_config()->queue || queued_ns(cs) + launch_ns(cs, key) > ns;
}

/*
 * Beside a latency-class client whose next request on @d is predicted
 * (lat_next): from when a wait for our kernels should poll the status page,
 * GPUSCHED_SPIN_US before that request (before its ask, where it asks
 * lat_lead ahead), so that its yield is answered at once rather than after
 * the kernel we wait for (or a late wake-up: 60-70 us on the H200); until
 * when, in *@until (lat_due()). 0: no such request.
 */
static uint64_t lat_watch(struct gs_dev *d, uint64_t now, uint64_t *until)
{
	const struct gs_config *c = gs_config();
	uint64_t next = atomic_load_explicit(&d->lat_next, memory_order_relaxed);
	uint64_t ask;

	if (!next || !c->spin_ns || !c->handover_ns ||
	    dev_sharing(d) != SHARED_LATENCY)
		return 0;
	*until = lat_due(d, next);
	if (now >= *until)
		return 0;
	ask = next - atomic_load_explicit(&d->lat_lead, memory_order_relaxed);
	return ask > c->spin_ns ? ask - c->spin_ns : 1;
}

/*
 * Wait for @ev, recorded after @cs's newest launch: when it completes, the
 * GPU has none of our work left. A blocking wait wakes 100 us or more after
 * that, the GPU idle all along, and a yield asked meanwhile waits for it
 * too. So sleep until GPUSCHED_SPIN_US before the predicted @end, then poll
 * the event and the status page. DRY_YIELD, the work still running: asked
 * to yield with no more than GPUSCHED_HANDOVER_US left; the early hand-over
 * then gives the token away while our last kernel runs, and the next
 * holder's kernel is queued when it ends. DRY_LATE: done before the first
 * look after the sleep, so when is not known (a sample then would be as
 * long as the sleep, and the estimate would feed itself). Polls no longer
 * than twice the predicted time (a longer kernel, a time-sliced GPU), then
 * blocks.
 *
 * With @poll (cs->dry_poll) it does not sleep at all. Without that an
 * estimate too long stayed too long: when it exceeds the kernels by more
 * than GPUSCHED_SPIN_US, every such wait finds its kernel done (DRY_LATE)
 * and takes no sample, and only the waits that something else made long
 * (another context time-sliced in, a late wake-up) are samples. Beside a
 * latency-class probe, 100 us kernels read 444-700 us in three H200 runs of
 * about fourteen, and 900-1500 us in the CUDA double, where the busy
 * process then kept half its share (tests/host/63-lib-estimate.t). So
 * after a DRY_LATE the waits poll until a sample is taken (two seen in a
 * row), GS_DRY_POLLS of them at most. Letting each late look bound the
 * estimate from above instead (c590c00) took it below the mean of
 * PyTorch's mixed kernels, from the bounds of runs of small ones
 * (benchmarks.md). Called without cs->lock.
 */
enum { DRY_SEEN, DRY_LATE, DRY_YIELD };

static int wait_dry(struct gs_ctx *cs, CUevent ev, uint64_t end, uint64_t est,
		    bool poll)
{
	const struct gs_config *c = gs_config();
	uint64_t now = gs_now_ns(), until = end + 2 * est + c->spin_ns;
	uint64_t wake = end - c->spin_ns, due, from;
	bool first = true;

	/* A latency client's request due first: be up for its yield. */
	from = lat_watch(cs->d, now, &due);
	if (from && from < wake)
		wake = from;
	if (!poll && end > now + c->spin_ns && wake > now)
		sleep_until(wake);
	for (;; first = false) {
		if (real.cuEventQuery(ev) != CUDA_ERROR_NOT_READY)
			return first ? DRY_LATE : DRY_SEEN;
		now = gs_now_ns();
		if (c->handover_ns && end <= now + handover_left(cs->d) &&
		    YIELD_ASKED(dev_flags(cs->d)))
			return DRY_YIELD;
		if (now > until)
			break;
		sched_yield();
	}
	real.cuEventSynchronize(ev);
	return DRY_SEEN;
}

/*
 * Wait for @ev, recorded after some but not all of our queued launches.
 * Blocking, unless a latency client's next request is predicted
 * (lat_watch()) within @reach_ns from now: then look at the event and the
 * status page every GS_YIELD_POLL_NS until GPUSCHED_SPIN_US before the
 * request, and without sleeping from then until it is overdue. Returns
 * DRY_YIELD when asked to yield (the gate then gives the token away
 * early), DRY_SEEN when seen completing by a look that did not follow a
 * sleep, else DRY_LATE (no time sample). The caller picks @reach_ns
 * (wait_reach()).
 */
static int wait_ev(struct gs_ctx *cs, CUevent ev, uint64_t reach_ns)
{
	struct gs_dev *d = cs->d;
	uint64_t now = gs_now_ns(), until = 0, from = 0;
	bool slept = false;

	if (real.cuEventQuery && reach_ns)
		from = lat_watch(d, now, &until);
	if (from > now && from - now > reach_ns)
		from = 0;
	while (from) {
		if (real.cuEventQuery(ev) != CUDA_ERROR_NOT_READY)
			return slept ? DRY_LATE : DRY_SEEN;
		if (YIELD_ASKED(dev_flags(d)))
			return DRY_YIELD;
		now = gs_now_ns();
		if (now >= until)
			break;
		slept = now < from;
		if (slept)
			sleep_until(now + GS_YIELD_POLL_NS < from ?
				    now + GS_YIELD_POLL_NS : from);
		else
			sched_yield();
	}
	real.cuEventSynchronize(ev);
	return DRY_SEEN;
}

/*
 * How far ahead a latency client's request makes wait_ev() poll, for a wait
 * on event @slot: 0 (never) until our launch length is measured, as far
 * as predicted once it is steady, else only within the wait, at the
 * predicted lengths. Caller holds cs->lock.
 *
 * Polling takes no sample after a sleep, so it takes the waits that end at
 * once and drops the long ones. For launches of one length that costs
 * nothing and polling answers a yield at once: a blocking wake-up comes
 * 60-100 us after the event on the H200, the next launch waits for it, the
 * end of our queue predicted from it is as late, launches were held back
 * for the request far more often and its yield was answered 35-94 us late
 * at the median instead of at once (the probe's median 313-328 us instead
 * of 222-226 us). For launches of many lengths (PyTorch) it took the
 * estimate to 136-395 us a launch where 280 us is the mean, the queue ran
 * that much past each request, yields were answered 1.2-2.2 ms late at the
 * median, and the inference beside it had a p99 of 5.7-8.9 ms instead of
 * 2.7-3.4 ms (Documentation/benchmarks.md). The samples of the probe's
 * busy neighbour fall within 1 us of its 113 us estimate, PyTorch's within
 * 86-178 us of 350-530 us: steady is within a quarter. The deviation starts
 * at 0 when the seed is taken, so a new process polls until shown unsteady.
 * Not before the length is measured: a process that learnt the client's
 * period before its own launch length would never measure it
 * (61-lib-hold-back.t).
 */
static uint64_t wait_reach(struct gs_ctx *cs, unsigned int slot)
{
	if (!cs->est_ns)
		return 0;
	if (!unsteady(cs))
		return UINT64_MAX;
	return queued_ns(cs) - work_after(cs, slot);
}

/* A launch-length sample of @cs: @ns per launch. Caller holds cs->lock. */
static void est_sample(struct gs_ctx *cs, uint64_t ns)
{
	cs->dry_poll = 0;
	if (cs->est_ns) {
		uint64_t off = ns > cs->est_ns ? ns - cs->est_ns : cs->est_ns - ns;

		cs->dev_ns = (3 * cs->dev_ns + off) / 4;
		cs->est_ns = (3 * cs->est_ns + ns) / 4;
	} else {
		/* Until then the queue stays short, so the waits, and
		 * samples, come quickly.
		 */
		cs->seed_sum += ns;
		if (++cs->seed_n == GS_EST_SEED)
			cs->est_ns = cs->seed_sum / GS_EST_SEED;
	}
}

/* Wait while too much of @cs's work may be unfinished for a launch of @key. */
static void throttle(struct gs_ctx *cs, uint64_t key)
{
	pthread_mutex_lock(&cs->lock);
	while (cs->nr && queue_full(cs, key)) {
		uint64_t seq = cs->head_seq, mark = cs->ev_mark[cs->head];
		CUevent ev = cs->ev[cs->head];
		uint64_t now, end = 0, est = cs->est_ns;
		uint64_t reach = wait_reach(cs, cs->head);
		int dry = DRY_SEEN;
		bool waited, poll = cs->dry_poll, polled = false;

		/* The last of our work, with a predicted end: see wait_dry(). */
		if (mark == cs->launches && est && cs->end_ns &&
		    gs_config()->spin_ns && real.cuEventQuery)
			end = cs->end_ns;
		cs->throttled++;
		pthread_mutex_unlock(&cs->lock);
		STAT_INC(throttle_waits);
		/* An event that completed before we looked tells nothing of
		 * when: only one we saw complete is a time stamp.
		 */
		waited = !real.cuEventQuery ||
			 real.cuEventQuery(ev) == CUDA_ERROR_NOT_READY;
		if (waited && end) {
			dry = wait_dry(cs, ev, end, est, poll);
			waited = dry == DRY_SEEN;
			polled = poll;
		} else if (waited) {
			dry = wait_ev(cs, ev, reach);
			waited = dry == DRY_SEEN;
		}
		now = gs_now_ns();
		pthread_mutex_lock(&cs->lock);
		cs->throttled--;
		if (polled && cs->dry_poll)
			cs->dry_poll--;	/* est_sample() below ends it */
		if (dry == DRY_YIELD) {
			/* Asked to yield: launch_begin() gives the token
			 * away through the gate; the event is still ours.
			 */
			STAT_INC(dry_yields);
			break;
		}
		if (cs->head_seq == seq) {	/* nobody popped it meanwhile */
			/* Both stamps seen and the queue full since the first:
			 * the GPU ran our launches back to back in between.
			 */
			if (waited && cs->last_pop_ns && mark > cs->last_pop_mark &&
			    !kernel_times(cs))
				est_sample(cs, (now - cs->last_pop_ns) /
					   (mark - cs->last_pop_mark));
			if (dry == DRY_LATE && end)
				cs->dry_poll = GS_DRY_POLLS;
			cs->last_pop_ns = waited ? now : 0;
			cs->last_pop_mark = mark;
			ctx_pop_locked(cs, 1);
			cs->end_ns = waited && cs->est_ns ?
				     now + queued_ns(cs) : 0;
		}
	}
	pthread_mutex_unlock(&cs->lock);
}

/*
 * Beside a periodic latency-class client, a launch that would end more than
 * GPUSCHED_QUEUE_LATENCY_US after the client's next request is predicted
 * waits for that request while the token is ours. queue_limit() lets such a
 * queue run down, but not below one launch, and one kernel longer than the
 * bound would keep the request waiting for all of it. The wait ends when we
 * are asked to yield (the gate then gives the token away, and our kernel
 * follows the client's) or when the request is overdue (lat_due()). It
 * polls the status page from GPUSCHED_SPIN_US before the request on, as
 * wait_dry() does: the request should not wait for our wake-up either.
 * The GPU may idle meanwhile: the latency class asked for that. Called
 * without cs->lock.
 */
static void hold_back(struct gs_ctx *cs, uint64_t key)
{
	const struct gs_config *c = gs_config();
	struct gs_dev *d = cs->d;
	uint64_t next, until, now, end;
	bool hold;

	next = atomic_load_explicit(&d->lat_next, memory_order_relaxed);
	if (!c->hold_back || !next || dev_sharing(d) != SHARED_LATENCY ||
	    !HELD_ONLY(dev_flags(d)))
		return;
	until = lat_due(d, next);
	pthread_mutex_lock(&cs->lock);
	now = gs_now_ns();
	/* When our queued work ends; this launch's follows. */
	if (cs->end_ns)
		end = cs->end_ns > now ? cs->end_ns : now;
	else
		end = now + queued_ns(cs);
	/* The request comes at @next or, overdue, any moment now: a launch
	 * no longer than the bound never keeps it waiting longer.
	 */
	hold = cs->est_ns && now < until &&
	       end + launch_ns(cs, key) >
	       (now > next ? now : next) + c->queue_latency_ns;
	if (hold)
		cs->throttled++;	/* busy, not idle (idle_check()) */
	pthread_mutex_unlock(&cs->lock);
	if (!hold)
		return;
	STAT_INC(held_back);
	if (next > now + c->spin_ns)
		sleep_until(next - c->spin_ns);
	while (HELD_ONLY(dev_flags(d)) && gs_now_ns() < until &&
	       !atomic_load(&cs->dead))
		sched_yield();
	pthread_mutex_lock(&cs->lock);
	cs->throttled--;
	/* The GPU may have run out of our work meanwhile: the next pop is
	 * no sample of our launches' length.
	 */
	cs->last_pop_ns = 0;
	pthread_mutex_unlock(&cs->lock);
}

/* An event on @stream after our launches so far. Caller holds cs->lock. */
static bool ev_push(struct gs_ctx *cs, CUstream stream, bool ptsz, uint64_t key)
{
	CUresult (*rec)(CUevent, CUstream);
	unsigned int slot = (cs->head + cs->nr) % cs->nr_events;

	rec = ptsz ? real.cuEventRecord_ptsz : real.cuEventRecord;
	/* Recorded on the launch's own stream: an event on the legacy
	 * stream would serialise every blocking stream.
	 */
	if (!rec || cs->nr + cs->prev_ok >= cs->nr_events ||
	    rec(cs->ev[slot], stream) != CUDA_SUCCESS)
		return false;
	cs->ev_mark[slot] = cs->launches;
	cs->ev_cum[slot] = cs->cum_ns;
	cs->ev_key[slot] = key;
	cs->ev_stream[slot] = stream;
	cs->nr++;
	cs->last_mark = cs->launches;
	return true;
}

/*
 * A launch about to be timed (kernel_times()) needs an event just before it
 * on its stream: the last one, still pending (the kernel then starts as it
 * completes), or a fresh one (the GPU ran out of our work, or the last
 * event was not recorded: its time is not the kernel's start). Room is
 * left for the event after it. Caller holds cs->lock.
 */
static bool frame_start(struct gs_ctx *cs, CUstream stream, bool ptsz)
{
	unsigned int last = (cs->head + cs->nr + cs->nr_events - 1) % cs->nr_events;

	if (!kernel_times(cs) || !real.cuEventQuery ||
	    cs->nr + cs->prev_ok + 2 > cs->nr_events)
		return false;
	if (cs->nr && cs->ev_mark[last] == cs->launches &&
	    cs->ev_stream[last] == stream &&
	    real.cuEventQuery(cs->ev[last]) == CUDA_ERROR_NOT_READY)
		return true;
	return ev_push(cs, stream, ptsz, 0);
}

/*
 * Account one queued launch of @key; record an event every few, or after
 * every one while kernels are timed (kernel_times()).
 */
static void queued(struct gs_ctx *cs, CUstream stream, bool ptsz, uint64_t key,
		   bool framed_start)
{
	uint64_t every, len;
	bool timed;

	pthread_mutex_lock(&cs->lock);
	len = launch_ns(cs, key);
	timed = kernel_times(cs);
	cs->launches++;
	cs->cum_ns += len;
	if (cs->end_ns) {
		uint64_t now = gs_now_ns();

		cs->end_ns = (cs->end_ns > now ? cs->end_ns : now) + len;
	} else if (cs->est_ns && cs->launches - cs->done == 1) {
		/* Nothing else of ours queued: this kernel starts about now
		 * (after another holder's last, at worst), and its end can
		 * be predicted before any completion is seen. So the first
		 * kernel after a grant is polled for too (wait_dry()), and
		 * a yield during it hands over early (ctx_drain_to()).
		 */
		cs->end_ns = gs_now_ns() + len;
	} else if (!cs->est_ns && cs->launches - cs->done == 1) {
		/* Not measured yet, and nothing else of ours queued: the
		 * same start stamps the first sample, so that one event seen
		 * completing is one. Pop to pop needs two in a turn, and
		 * long kernels beside a latency client's short period may
		 * never have two: its yield ends the turn first. 15 ms
		 * kernels beside a probe every 20 ms stayed unmeasured for
		 * whole runs in the VMs, queued GS_QUEUE_UNMEASURED of them,
		 * and answered every yield after all four (66-lib-long.t).
		 * Another holder's last kernels may still run before ours:
		 * the sample reads long by as much, which the seed averages.
		 */
		cs->last_pop_ns = gs_now_ns();
		cs->last_pop_mark = cs->done;
	}
	every = timed ? 1 : (queue_limit(cs) + 3) / 4;
	if (cs->launches - cs->last_mark >= every &&
	    cs->nr + cs->prev_ok < cs->nr_events) {
		unsigned int last = (cs->head + cs->nr + cs->nr_events - 1) %
				    cs->nr_events;
		uint64_t framed = 0;

		/* The event just before this launch on its stream marks its
		 * start (frame_start()). Two threads launching on one stream
		 * at once may order their kernels one way and their events
		 * the other: that sample is off, once, and averaged away.
		 */
		if (timed && framed_start && cs->nr &&
		    cs->ev_mark[last] + 1 == cs->launches &&
		    cs->ev_stream[last] == stream)
			framed = key;
		ev_push(cs, stream, ptsz, framed);
		cs->last_mark = cs->launches;
	}
	pthread_mutex_unlock(&cs->lock);
}

/* ------------------------------------------------------------------ */
/* The gate */

enum { GATE_HELD, GATE_UNSCHED, GATE_DENIED, GATE_RETRY };

static void kick_idle_thread(void);

static int service_missing(struct gs_dev *d, int err, bool lost)
{
	const struct gs_config *c = gs_config();
	bool closed = c->fail == GS_FAIL_CLOSED;
	const char *then = closed ? "failing launches (GPUSCHED_FAIL=closed)"
				  : "running unscheduled";

	d->mode = DEV_UNSCHED;
	d->retry_at = gs_now_ns() + 1000000000ull;
	if (lost) {
		if (!atomic_exchange(&G.warned_lost, true))
			gs_log("lost the token service of %s (%s); %s",
			       d->name, strerror(-err), then);
	} else if (!atomic_exchange(&G.warned_no_service, true)) {
		if (access(GPUSCHED_DEVICE_PATH, F_OK) && c->backend == GS_BACKEND_AUTO)
			gs_log("no token service: %s is absent and the arbiter at %s: %s; %s",
			       GPUSCHED_DEVICE_PATH, c->arbiter, strerror(-err), then);
		else
			gs_log("no token service for %s (%s): %s; %s",
			       d->name, c->backend == GS_BACKEND_KMOD ||
			       !access(GPUSCHED_DEVICE_PATH, F_OK) ?
			       GPUSCHED_DEVICE_PATH : c->arbiter,
			       strerror(-err), then);
	}
	return closed ? GATE_DENIED : GATE_UNSCHED;
}

static void apply_params(struct gs_dev *d, struct gpusched *g)
{
	const struct gs_config *c = gs_config();
	int err;

	err = gpusched_set_params(g, c->weight, c->sched_class, c->cap_pct);
	if (err && !atomic_exchange(&G.warned_params, true))
		gs_log("GPUSCHED_WEIGHT/CLASS/CAP not applied on %s: %s%s",
		       d->name, strerror(-err), err == -EPERM ?
		       " (without CAP_SYS_NICE a process may only lower its share)" : "");
	gs_debug("attached to %s through %s%s%s", d->name, g->be->name,
		 c->label[0] ? ", label " : "", c->label);
}

/* Wait out the launches of other threads that passed the fast path with
 * the old client, then close it.
 */
static void retire_locked(struct gs_dev *d)
{
	struct gpusched *g = atomic_exchange(&d->g, NULL);

	while (atomic_load(&d->launching))
		sched_yield();
	if (g)
		gpusched_close(g);
}

static bool conn_error(int err)
{
	return err == -ECONNRESET || err == -EPIPE || err == -EPROTO ||
	       err == -ENOTCONN || err == -EBADF || err == -ENODEV;
}

/* We give the token away at @now: how long after we were asked. */
static void yield_answered(const struct gpusched *g, uint64_t now)
{
	uint64_t at = __atomic_load_n(&g->st->yield_ns, __ATOMIC_RELAXED);

	if (at && at <= now)
		times_add(&t_answer, now - at);
}

/*
 * This process, of the latency class, asks for @d's token at @t for a
 * launch it has to make (the first since it held it, or since the token
 * was asked for early): its own period, for ask_early(). Caller holds
 * d->lock.
 */
static void self_note(struct gs_dev *d, uint64_t t)
{
	if (is_latency(atomic_load(&d->g)))
		d->self_next = gs_period_note(&d->self, t);
}

/*
 * The token asked for early is used by our request at @t, or (@t 0) given
 * up for; a request that took the fast path meanwhile said when it came
 * (early_req). Caller holds d->lock.
 */
static void early_done(struct gs_dev *d, uint64_t t)
{
	uint64_t req = atomic_exchange(&d->early_req, 0);

	if (req)
		t = req;
	if (t) {
		self_note(d, t);
		STAT_INC(early_hits);
	} else {
		STAT_INC(early_misses);
		gs_debug("%s: no request came for the token asked for early",
			 d->name);
	}
	d->early_until = 0;
	atomic_store(&d->early, false);
}

/*
 * Why a latency-class client asked for the token when it launched at @t
 * rather than ahead of its request (ask_early()), for GPUSCHED_STATS: again
 * within a request (the token given back in a gap of it), no period learnt
 * yet, off the beat, or on the beat but not asked ahead. These acquires
 * find a neighbour's queue filled toward the predicted request, not
 * emptied for it. Caller holds d->lock, before self_note().
 */
static atomic_ullong *acquire_kind(struct gs_dev *d, uint64_t t)
{
	uint64_t due = d->self_next, tol = gs_period_tol(d->self.period);

	if (d->self.last && t >= d->self.last &&
	    t - d->self.last < GS_PERIOD_BURST_NS)
		return &stats.acq_again;
	if (!due)
		return &stats.acq_unpredicted;
	if (gs_period_off(t, due, tol))
		return &stats.acq_off_beat;
	return &stats.acq_on_beat;
}

/* A launch at @t (ns) found the token not ours, or asked for early. */
static int gate_slow(struct gs_dev *d, uint64_t t)
{
	atomic_ullong *kind = NULL;
	struct gpusched *g;
	uint64_t asked;
	unsigned int cmd;
	uint32_t fl;
	int err, ret = GATE_RETRY;

	pthread_mutex_lock(&d->lock);
	g = atomic_load(&d->g);
	if (!g) {
		bool retry = d->mode == DEV_UNSCHED;

		if (retry && gs_now_ns() < d->retry_at) {
			ret = gs_config()->fail == GS_FAIL_CLOSED ? GATE_DENIED
								  : GATE_UNSCHED;
			goto out;
		}
		err = gs_open(d->uuid, &g);
		if (err) {
			/* Said once already; try again in a second. */
			if (retry) {
				d->retry_at = gs_now_ns() + 1000000000ull;
				ret = gs_config()->fail == GS_FAIL_CLOSED ?
				      GATE_DENIED : GATE_UNSCHED;
			} else {
				ret = service_missing(d, err, false);
			}
			goto out;
		}
		if (d->mode == DEV_UNSCHED)
			gs_log("token service of %s is back (%s); scheduling again",
			       d->name, g->be->name);
		apply_params(d, g);
		d->mode = DEV_OPEN;
		atomic_store(&d->g, g);
	}

	fl = gs_status_flags(g);
	if (d->early_until)
		early_done(d, t);
	if (HELD_ONLY(fl))
		goto out;	/* another thread got it for us */
	lat_observe(d, g, fl, gs_now_ns());
	/* A revoked grant's leftovers must finish before we ask again. */
	if (fl & (GPUSCHED_ST_HOLDING | GPUSCHED_ST_REVOKED))
		drain_locked(d, !(fl & GPUSCHED_ST_REVOKED));
	cmd = fl & GPUSCHED_ST_HOLDING ? GPUSCHED_IOC_YIELD : GPUSCHED_IOC_ACQUIRE;
	if (cmd == GPUSCHED_IOC_ACQUIRE) {
		if (is_latency(g))
			kind = acquire_kind(d, t);
		self_note(d, t);
	}
	asked = gs_now_ns();
	if (cmd == GPUSCHED_IOC_YIELD)
		yield_answered(g, asked);
	/* EAGAIN: granted and revoked before we ran; queue again. */
	do {
		if (cmd == GPUSCHED_IOC_YIELD)
			err = gpusched_yield(g, GPUSCHED_FOREVER);
		else
			err = gpusched_acquire(g, GPUSCHED_FOREVER);
	} while (err == -EINTR || err == -EAGAIN);
	atomic_store(&d->draining, false);

	if (!err || err == -EALREADY) {
		times_add(&t_grant, gs_now_ns() - asked);
		if (cmd == GPUSCHED_IOC_YIELD)
			STAT_INC(yields);
		else
			STAT_INC(acquires);
		if (kind)
			atomic_fetch_add_explicit(kind, 1, memory_order_relaxed);
		/* Granted after someone else's turn: no wait of ours that
		 * began before it is a sample of our launches' length (the
		 * idle thread may have given the token away while a launching
		 * thread waited, and that thread popped after the drain).
		 */
		if (!err)
			dev_unstamp(d);
		d->seen_launches = atomic_load(&d->launches);
		d->seen_at = gs_now_ns();
		kick_idle_thread();
	} else if (conn_error(err)) {
		retire_locked(d);
		ret = service_missing(d, err, true);
	} else {
		if (!atomic_exchange(&G.warned_err, true))
			gs_log("token %s on %s failed: %s; launching unscheduled",
			       cmd == GPUSCHED_IOC_YIELD ? "yield" : "acquire",
			       d->name, strerror(-err));
		ret = GATE_UNSCHED;
	}
out:
	pthread_mutex_unlock(&d->lock);
	return ret;
}

static int gate_enter(struct gs_dev *d)
{
	uint64_t t = 0;

	for (bool spun = false;;) {
		struct gpusched *g;
		int ret;

		atomic_fetch_add(&d->launching, 1);
		g = atomic_load(&d->g);
		if (g && !atomic_load(&d->draining) &&
		    HELD_ONLY(gs_status_flags(g))) {
			/* Asked for early for this request: say when it came. */
			if (atomic_load_explicit(&d->early, memory_order_relaxed)) {
				uint64_t none = 0;

				if (!t)
					t = gs_now_ns();
				atomic_compare_exchange_strong(&d->early_req,
							       &none, t);
			}
			return GATE_HELD;
		}
		atomic_fetch_sub(&d->launching, 1);
		if (!t)
			t = gs_now_ns();
		/*
		 * The idle thread is asking for the token for this request,
		 * holding d->lock until the service's answer wakes it. The
		 * status page says the token is ours first: watch it rather
		 * than wait for two wake-ups (the H200 had this request wait
		 * 140-430 us after the grant). ask_early() waits no longer
		 * than a period, and early is then cleared.
		 */
		if (!spun && atomic_load(&d->early)) {
			while (atomic_load(&d->early) && !HELD_ONLY(dev_flags(d)))
				sched_yield();
			spun = true;
			continue;
		}
		ret = gate_slow(d, t);
		if (ret != GATE_RETRY)
			return ret;
	}
}

/* ------------------------------------------------------------------ */
/* The idle thread */

/* Give the token of @d back if the process stopped launching on it (or was
 * asked to yield and is not launching). Never blocks on d->lock.
 */
static bool idle_check(struct gs_dev *d, uint64_t now, uint64_t idle_ns,
		       uint64_t *next)
{
	struct gpusched *g;
	uint64_t n, wanted_ns;
	uint32_t fl;
	bool yield, soon;

	if (pthread_mutex_trylock(&d->lock))
		return true;	/* someone is in the slow path: look again */
	g = atomic_load(&d->g);
	fl = g ? gs_status_flags(g) : 0;
	if (!(fl & GPUSCHED_ST_HOLDING)) {
		pthread_mutex_unlock(&d->lock);
		return false;
	}
	if (!g->be->alive(g)) {
		/* Nobody will ask us to yield: say so, per the fail mode. */
		retire_locked(d);
		service_missing(d, -ECONNRESET, true);
		pthread_mutex_unlock(&d->lock);
		return false;
	}
	n = atomic_load(&d->launches);
	if (d->early_until) {
		if (n != d->seen_launches) {
			/* Our request took the fast path before ask_early()
			 * said the token was asked for early: it came now.
			 */
			early_done(d, now);
		} else if (now < d->early_until && !(fl & GPUSCHED_ST_YIELD)) {
			/* Kept for our request, though others wait; looked
			 * at as often as when they do, so that the token goes
			 * to them soon after the request's work.
			 */
			uint64_t at = now + GS_YIELD_POLL_NS;

			if (d->early_until < at)
				at = d->early_until;
			if (at < *next)
				*next = at;
			pthread_mutex_unlock(&d->lock);
			return true;
		} else {
			early_done(d, 0);
		}
	}
	if (n != d->seen_launches) {
		d->seen_launches = n;
		d->seen_at = now;
	} else if (!(fl & GPUSCHED_ST_YIELD)) {
		/* Idle means no launch and nothing of ours running: a thread
		 * waiting for its queued work is busy, not idle.
		 */
		for (struct gs_ctx *cs = atomic_load(&d->ctxs); cs; cs = cs->dev_next)
			if (ctx_busy(cs)) {
				d->seen_at = now;
				break;
			}
	}
	yield = (fl & GPUSCHED_ST_YIELD) && now > d->seen_at;
	wanted_ns = idle_wanted(g);
	soon = wanted_ns < idle_ns;
	if (dev_wanted(g, fl) && soon)
		idle_ns = wanted_ns;
	if (!yield && now - d->seen_at < idle_ns) {
		uint64_t at = d->seen_at + idle_ns;

		/* Someone waits: look again soon, so that the token does
		 * not sit idle here once our last kernel is done. So too
		 * while nobody waits if we would give it to a waiter sooner
		 * (the latency class): one that comes must not wait for our
		 * next tick. On the H200 a busy process that asked just
		 * after a probe's grant waited up to 1 ms for the probe's
		 * release, past the probe's next request.
		 */
		if ((dev_wanted(g, fl) || soon) && now + GS_YIELD_POLL_NS < at)
			at = now + GS_YIELD_POLL_NS;
		if (at < *next)
			*next = at;
		pthread_mutex_unlock(&d->lock);
		return true;
	}
	if (yield)
		lat_observe(d, g, fl, now);
	drain_locked(d, true);
	if (atomic_load(&d->launches) != n) {
		/* A launch slipped in before the flag: still busy. */
		atomic_store(&d->draining, false);
		pthread_mutex_unlock(&d->lock);
		return true;
	}
	if (yield)
		yield_answered(g, gs_now_ns());
	if (!gpusched_release(g)) {
		if (yield)
			STAT_INC(yield_releases);
		else
			STAT_INC(idle_releases);
		gs_debug("%s: released (%s)", d->name, yield ? "yield" : "idle");
	}
	atomic_store(&d->draining, false);
	pthread_mutex_unlock(&d->lock);
	return false;
}

/* ask_early()'s wait for the grant, at most: the thread has others to watch. */
#define GS_EARLY_WAIT_NS 20000000ull

/*
 * How far ahead of our request ask_early() asks, unless
 * GPUSCHED_LATENCY_LEAD_US says: a service that passes on when the request
 * comes (GPUSCHED_ACQUIRE_DUE) lets the holder's work run until then, so
 * asking early costs no GPU time, and 400 us covers the token's way in all
 * but the slowest requests (through the H200's arbiter: p90 177-271 us,
 * p99 351-732 us; 200-400 us ahead were tried, benchmarks.md tune70-73).
 * Without it the holder takes the ask for the request, and each 100 us
 * asked earlier idled the GPU as long: the busy neighbour of the H200's
 * probe kept 0.78 at 100 us, 0.68-0.69 at 300 us (tune69).
 */
#define GS_LEAD_DUE_NS 400000ull
#define GS_LEAD_NS 100000ull

static uint64_t ask_lead(const struct gpusched *g)
{
	const struct gs_config *c = gs_config();

	if (!c->lead_auto)
		return c->lead_ns;
	return gs_due_supported(g) ? GS_LEAD_DUE_NS : GS_LEAD_NS;
}

/*
 * As a periodic latency-class client beside others, ask for @d's token
 * GPUSCHED_LATENCY_LEAD_US before our next request is due, so that the
 * token's way (the holder's answer, the service's hand-over, our wake-up)
 * is behind the request, not on its path. Granted, the token is kept idle
 * for the request (idle_check()) until twice the period's tolerance after
 * it was due, or after the grant if that came later: requests come late,
 * not early. A launch meanwhile waits on d->lock for the grant, as it
 * would have waited for its own. Called by the idle thread; returns
 * whether to look again by *@next.
 */
static bool ask_early(struct gs_dev *d, uint64_t now, uint64_t *next)
{
	static __thread bool slack_set;
	const struct gs_config *c = gs_config();
	uint64_t due, at, tol, wait, lead;
	struct gpusched *g;
	uint32_t fl;
	int err;

	if (!c->lead_auto && !c->lead_ns)
		return false;
	if (pthread_mutex_trylock(&d->lock))
		return true;	/* a launch is asking: it gets the token */
	g = atomic_load(&d->g);
	if (!g || !is_latency(g)) {
		pthread_mutex_unlock(&d->lock);
		return false;
	}
	/* Asking ahead of a request by so many microseconds needs wake-ups
	 * to the microsecond, not the default 50 us of slack.
	 */
	if (!slack_set) {
		prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL);
		slack_set = true;
	}
	due = d->self_next;
	fl = gs_status_flags(g);
	/* Not while we hold it, nor before a revoked grant's leftovers are
	 * done (the gate drains them), nor when nobody else would hold it.
	 */
	if (!due || due == d->asked_for || due <= now ||
	    (fl & (GPUSCHED_ST_HOLDING | GPUSCHED_ST_REVOKED)) ||
	    dev_sharing(d) == ALONE) {
		pthread_mutex_unlock(&d->lock);
		return false;
	}
	lead = ask_lead(g);
	if (now + lead < due) {
		if (due - lead < *next)
			*next = due - lead;
		pthread_mutex_unlock(&d->lock);
		return true;
	}
	d->asked_for = due;
	atomic_store(&d->early_req, 0);
	tol = gs_period_tol(d->self.period);
	wait = d->self.period < GS_EARLY_WAIT_NS ? d->self.period : GS_EARLY_WAIT_NS;
	/* Before asking: the status page says the token is ours before the
	 * service's answer wakes us, and a launch in between must not take
	 * the fast path past us (it waits on d->lock, and then is our
	 * request).
	 */
	atomic_store(&d->early, true);
	err = gs_acquire_due(g, (int64_t)wait, (uint32_t)((due - now) / 1000));
	if (!err || err == -EALREADY) {
		at = gs_now_ns();
		STAT_INC(early_asks);
		dev_unstamp(d);
		d->seen_launches = atomic_load(&d->launches);
		d->seen_at = at;
		d->early_until = (at > due ? at : due) + 2 * tol;
		if (at + GS_YIELD_POLL_NS < *next)
			*next = at + GS_YIELD_POLL_NS;
		/* The request saw the token ours before we did, and went. */
		if (atomic_load(&d->early_req))
			early_done(d, 0);
		gs_debug("%s: asked for the token %llu us before our request, granted %lld us before it",
			 d->name, (unsigned long long)((due - now) / 1000),
			 ((long long)due - (long long)at) / 1000);
	} else if (conn_error(err)) {
		retire_locked(d);
		service_missing(d, err, true);
	} else if (err != -ETIMEDOUT && err != -EINTR && err != -EAGAIN &&
		   !atomic_exchange(&G.warned_err, true)) {
		gs_log("token acquire on %s failed: %s; not asking early",
		       d->name, strerror(-err));
	}
	if (!d->early_until)
		atomic_store(&d->early, false);
	pthread_mutex_unlock(&d->lock);
	return true;
}

static void *idle_thread(void *arg)
{
	uint64_t idle_ns = gs_config()->idle_ns;
	/* Yield requests are seen at this period when nothing launches. */
	uint64_t tick = idle_ns / 2;

	(void)arg;
	if (tick < 100000)
		tick = 100000;
	if (tick > 5000000)
		tick = 5000000;
	pthread_mutex_lock(&G.lock);
	while (!G.bg_stop) {
		bool busy = false;
		uint64_t now, next;

		G.bg_kick = false;
		pthread_mutex_unlock(&G.lock);
		now = gs_now_ns();
		next = now + tick;
		for (struct gs_dev *d = atomic_load(&G.devs); d; d = d->next) {
			busy |= idle_check(d, now, idle_ns, &next);
			busy |= ask_early(d, now, &next);
		}
		pthread_mutex_lock(&G.lock);
		if (G.bg_stop || G.bg_kick)
			continue;
		if (busy) {
			struct timespec ts;

			if (next > now + tick)
				next = now + tick;
			ts.tv_sec = (time_t)(next / 1000000000ull);
			ts.tv_nsec = (long)(next % 1000000000ull);
			pthread_cond_timedwait(&G.cond, &G.lock, &ts);
		} else {
			pthread_cond_wait(&G.cond, &G.lock);
		}
	}
	pthread_mutex_unlock(&G.lock);
	return NULL;
}

/* A token was granted: make sure the idle thread watches it. */
static void kick_idle_thread(void)
{
	pthread_mutex_lock(&G.lock);
	if (!G.bg_started && !G.bg_stop) {
		sigset_t all, old;

		/* The application's signals are not for this thread. */
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		if (!pthread_create(&G.bg, NULL, idle_thread, NULL)) {
			G.bg_started = true;
			pthread_setname_np(G.bg, "gpusched-idle");
		} else {
			gs_log("cannot start the idle thread: the token is released only when asked to yield");
		}
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	G.bg_kick = true;
	pthread_cond_signal(&G.cond);
	pthread_mutex_unlock(&G.lock);
}

/* ------------------------------------------------------------------ */
/* Process life: exit and fork */

static void print_stats(void)
{
	const struct gs_config *c = gs_config();

	gs_log("stats launches=%llu symbol=%llu procaddr=%llu dlsym=%llu gated=%llu unscheduled=%llu captured=%llu denied=%llu acquires=%llu yields=%llu idle_releases=%llu yield_releases=%llu drains=%llu throttle_waits=%llu dry_yields=%llu held_back=%llu early_asks=%llu early_hits=%llu early_misses=%llu procaddr_hooks=%llu dlsym_hooks=%llu beside=%llu timed=%llu%s%s",
	       STAT_GET(launches[ROUTE_SYMBOL]) + STAT_GET(launches[ROUTE_PROCADDR]) +
	       STAT_GET(launches[ROUTE_DLSYM]),
	       STAT_GET(launches[ROUTE_SYMBOL]), STAT_GET(launches[ROUTE_PROCADDR]),
	       STAT_GET(launches[ROUTE_DLSYM]), STAT_GET(gated),
	       STAT_GET(unscheduled), STAT_GET(captured), STAT_GET(denied),
	       STAT_GET(acquires), STAT_GET(yields), STAT_GET(idle_releases),
	       STAT_GET(yield_releases), STAT_GET(drains),
	       STAT_GET(throttle_waits), STAT_GET(dry_yields),
	       STAT_GET(held_back), STAT_GET(early_asks),
	       STAT_GET(early_hits), STAT_GET(early_misses),
	       STAT_GET(procaddr_hooks),
	       STAT_GET(dlsym_hooks), STAT_GET(beside), STAT_GET(timed),
	       c->label[0] ? " label=" : "", c->label);
	/* A periodic latency-class neighbour, per GPU (read racily: the
	 * idle thread is stopped, an application thread may not be).
	 */
	for (struct gs_dev *d = atomic_load(&G.devs); d; d = d->next) {
		unsigned int n = __atomic_load_n(&d->lat.count, __ATOMIC_RELAXED);
		uint64_t p = __atomic_load_n(&d->lat.period, __ATOMIC_RELAXED);

		if (n)
			gs_log("stats %s: latency_period_us=%llu latency_matched=%u",
			       d->name, (unsigned long long)(p / 1000), n);
	}
	if (STAT_GET(acq_again) + STAT_GET(acq_unpredicted) +
	    STAT_GET(acq_off_beat) + STAT_GET(acq_on_beat))
		gs_log("stats latency_acquires again=%llu unpredicted=%llu off_beat=%llu on_beat=%llu",
		       STAT_GET(acq_again), STAT_GET(acq_unpredicted),
		       STAT_GET(acq_off_beat), STAT_GET(acq_on_beat));
	times_print("grant_wait", &t_grant);
	times_print("yield_answer", &t_answer);
	/* What the queue bound was measured against, per context. */
	for (struct gs_ctx *cs = atomic_load(&G.ctxs); cs; cs = cs->next)
		gs_log("stats context %p on %s: launches=%llu us_per_launch=%.1f"
		       " us_dev=%.1f",
		       (void *)cs->ctx, cs->d->name,
		       (unsigned long long)cs->launches, cs->est_ns / 1000.0,
		       cs->dev_ns / 1000.0);
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
		/* Nobody clears it now the idle thread is gone: a launch of
		 * another thread must not wait for a token asked for early.
		 */
		d->early_until = 0;
		atomic_store(&d->early, false);
		g = atomic_load(&d->g);
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
		atomic_store(&d->draining, false);
		d->mode = DEV_NEW;
		/* The parent's requests, not ours. */
		memset(&d->self, 0, sizeof(d->self));
		d->self_next = 0;
		d->asked_for = 0;
		d->early_until = 0;
		atomic_store(&d->early, false);
		atomic_store(&d->early_req, 0);
	}
	for (struct gs_ctx *cs = atomic_load(&G.ctxs); cs; cs = cs->next) {
		pthread_mutex_init(&cs->lock, NULL);
		ctx_empty_locked(cs);	/* the parent's work, not ours */
	}
	memset(&stats, 0, sizeof(stats));
	memset(&t_grant, 0, sizeof(t_grant));
	memset(&t_answer, 0, sizeof(t_answer));
	atomic_fetch_add(&G.gen, 1);
}

static void process_init(void)
{
	pthread_once(&cond_once, cond_init);
	gs_config();
	pthread_atfork(fork_prepare, fork_parent, fork_child);
	atexit(at_exit);
}

/* ------------------------------------------------------------------ */
/* Launch wrappers */

struct gs_launch {
	struct gs_dev *d;
	struct gs_ctx *cs;
	uint64_t key;		/* launch_key() */
	bool held;
	bool framed;		/* frame_start() marked its start */
};

/*
 * What a launch runs, for its GPU time (struct gs_klen): the function or
 * graph and the launch's shape, mixed into 64 bits, never 0.
 */
static uint64_t launch_key(const void *f, unsigned int gx, unsigned int gy,
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

static uint64_t launch_key_ex(const CUlaunchConfig *c, const void *f)
{
	if (!c)
		return launch_key(f, 0, 0, 0, 0, 0, 0, 0);
	return launch_key(f, c->gridDimX, c->gridDimY, c->gridDimZ,
			  c->blockDimX, c->blockDimY, c->blockDimZ,
			  c->sharedMemBytes);
}

static CUresult launch_begin(struct gs_launch *l, enum gs_route route,
			     CUstream stream, bool ptsz, uint64_t key)
{
	CUresult (*is_capturing)(CUstream, CUstreamCaptureStatus *);
	CUstreamCaptureStatus cap = CU_STREAM_CAPTURE_STATUS_NONE;

	l->d = NULL;
	l->held = false;
	l->framed = false;
	l->key = key;
	ensure_process_init();
	atomic_fetch_add_explicit(&stats.launches[route], 1, memory_order_relaxed);

	/* A launch into a stream being captured only adds a graph node: no
	 * work reaches the GPU, and nothing may be synchronised here.
	 */
	is_capturing = ptsz ? real.cuStreamIsCapturing_ptsz : real.cuStreamIsCapturing;
	if (is_capturing && is_capturing(stream, &cap) == CUDA_SUCCESS &&
	    cap != CU_STREAM_CAPTURE_STATUS_NONE) {
		STAT_INC(captured);
		return CUDA_SUCCESS;
	}
	if (gs_config()->mps_beside) {
		STAT_INC(beside);
		return CUDA_SUCCESS;
	}

	l->cs = ctx_current();
	if (!l->cs) {
		STAT_INC(unscheduled);
		return CUDA_SUCCESS;
	}
	throttle(l->cs, key);
	hold_back(l->cs, key);
	switch (gate_enter(l->cs->d)) {
	case GATE_HELD:
		l->d = l->cs->d;
		l->held = true;
		pthread_mutex_lock(&l->cs->lock);
		l->framed = frame_start(l->cs, stream, ptsz);
		pthread_mutex_unlock(&l->cs->lock);
		return CUDA_SUCCESS;
	case GATE_DENIED:
		STAT_INC(denied);
		return CUDA_ERROR_NOT_PERMITTED;
	default:
		STAT_INC(unscheduled);
		return CUDA_SUCCESS;
	}
}

static void launch_end(struct gs_launch *l, CUresult r, CUstream stream,
		       bool ptsz)
{
	if (!l->held)
		return;
	if (r == CUDA_SUCCESS) {
		queued(l->cs, stream, ptsz, l->key, l->framed);
		atomic_fetch_add_explicit(&l->d->launches, 1, memory_order_relaxed);
		STAT_INC(gated);
	}
	atomic_fetch_sub(&l->d->launching, 1);
}

/*
 * One wrapper per entry point and route: the exported one is the route by
 * symbol; the static ones are handed out by cuGetProcAddress and dlsym, so
 * the counters tell how launches arrived.
 */
#define GS_LAUNCH(vis, fname, realfn, route, ptsz, PARAMS, ARGS, STREAM, KEY) \
vis CUresult fname PARAMS							\
{										\
	struct gs_launch l;							\
	CUstream s_;								\
	CUresult r;								\
										\
	if (!resolve_real(true) || !real.realfn)				\
		return CUDA_ERROR_NOT_INITIALIZED;				\
	s_ = (STREAM);								\
	r = launch_begin(&l, route, s_, ptsz, (KEY));				\
	if (r != CUDA_SUCCESS)							\
		return r;							\
	r = real.realfn ARGS;							\
	launch_end(&l, r, s_, ptsz);						\
	return r;								\
}

#define GS_LAUNCH_ALL(name, ptsz, PARAMS, ARGS, STREAM, KEY)			\
	GS_LAUNCH(GS_EXPORT, name, name, ROUTE_SYMBOL, ptsz, PARAMS, ARGS,	\
		  STREAM, KEY)							\
	GS_LAUNCH(static, pa_##name, name, ROUTE_PROCADDR, ptsz, PARAMS, ARGS,	\
		  STREAM, KEY)							\
	GS_LAUNCH(static, dl_##name, name, ROUTE_DLSYM, ptsz, PARAMS, ARGS,	\
		  STREAM, KEY)

#define P_KERNEL (CUfunction f, unsigned int gx, unsigned int gy,		\
		  unsigned int gz, unsigned int bx, unsigned int by,		\
		  unsigned int bz, unsigned int shmem, CUstream hStream,	\
		  void **params, void **extra)
#define A_KERNEL (f, gx, gy, gz, bx, by, bz, shmem, hStream, params, extra)
#define K_KERNEL launch_key(f, gx, gy, gz, bx, by, bz, shmem)
#define P_KERNEL_EX (const CUlaunchConfig *config, CUfunction f,		\
		     void **params, void **extra)
#define A_KERNEL_EX (config, f, params, extra)
#define S_KERNEL_EX (config ? config->hStream : NULL)
#define K_KERNEL_EX launch_key_ex(config, f)
#define P_COOP (CUfunction f, unsigned int gx, unsigned int gy,		\
		unsigned int gz, unsigned int bx, unsigned int by,		\
		unsigned int bz, unsigned int shmem, CUstream hStream,		\
		void **params)
#define A_COOP (f, gx, gy, gz, bx, by, bz, shmem, hStream, params)
#define P_GRAPH (CUgraphExec exec, CUstream hStream)
#define A_GRAPH (exec, hStream)
#define K_GRAPH launch_key(exec, 0, 0, 0, 0, 0, 0, 0)

GS_LAUNCH_ALL(cuLaunchKernel, false, P_KERNEL, A_KERNEL, hStream, K_KERNEL)
GS_LAUNCH_ALL(cuLaunchKernel_ptsz, true, P_KERNEL, A_KERNEL, hStream, K_KERNEL)
GS_LAUNCH_ALL(cuLaunchKernelEx, false, P_KERNEL_EX, A_KERNEL_EX, S_KERNEL_EX,
	      K_KERNEL_EX)
GS_LAUNCH_ALL(cuLaunchKernelEx_ptsz, true, P_KERNEL_EX, A_KERNEL_EX,
	      S_KERNEL_EX, K_KERNEL_EX)
GS_LAUNCH_ALL(cuLaunchCooperativeKernel, false, P_COOP, A_COOP, hStream,
	      K_KERNEL)
GS_LAUNCH_ALL(cuLaunchCooperativeKernel_ptsz, true, P_COOP, A_COOP, hStream,
	      K_KERNEL)
GS_LAUNCH_ALL(cuGraphLaunch, false, P_GRAPH, A_GRAPH, hStream, K_GRAPH)
GS_LAUNCH_ALL(cuGraphLaunch_ptsz, true, P_GRAPH, A_GRAPH, hStream, K_GRAPH)

/* Context teardown: forget the context before it goes. */
#define GS_CTX_HOOK(vis, fname, realfn)						\
vis CUresult fname(CUcontext ctx)						\
{										\
	if (!resolve_real(true) || !real.realfn)				\
		return CUDA_ERROR_NOT_INITIALIZED;				\
	ctx_forget(ctx, -1);							\
	return real.realfn(ctx);						\
}
#define GS_DEV_HOOK(vis, fname, realfn)						\
vis CUresult fname(CUdevice dev)						\
{										\
	if (!resolve_real(true) || !real.realfn)				\
		return CUDA_ERROR_NOT_INITIALIZED;				\
	ctx_forget(NULL, dev);							\
	return real.realfn(dev);						\
}
#define GS_HOOK_BOTH(kind, name)						\
	kind(GS_EXPORT, name, name)						\
	kind(static, in_##name, name)

/*
 * Under MPS (GPUSCHED_MPS=1), a client of a class other than latency asks
 * for MPS's below-normal client priority: the GPU then hands the SMs its
 * kernels free to the latency-class clients' waiting blocks first. The
 * driver reads CUDA_MPS_CLIENT_PRIORITY from the environment when it
 * connects to the MPS server, so this runs before the real cuInit. A value
 * the operator set is kept (0 keeps normal priority). Without MPS the
 * variable means nothing to the driver.
 */
static void mps_priority(void)
{
	if (!gs_config()->mps_below || getenv("CUDA_MPS_CLIENT_PRIORITY"))
		return;
	if (setenv("CUDA_MPS_CLIENT_PRIORITY", "1", 0))
		gs_log("cannot set CUDA_MPS_CLIENT_PRIORITY: %s", strerror(errno));
	else
		gs_debug("under MPS: CUDA_MPS_CLIENT_PRIORITY=1 (below normal)");
}

static pthread_once_t mps_once = PTHREAD_ONCE_INIT;

#define GS_INIT_HOOK(vis, fname, realfn)					\
vis CUresult fname(unsigned int flags)						\
{										\
	if (!resolve_real(true) || !real.realfn)				\
		return CUDA_ERROR_NOT_INITIALIZED;				\
	pthread_once(&mps_once, mps_priority);					\
	return real.realfn(flags);						\
}

GS_HOOK_BOTH(GS_INIT_HOOK, cuInit)
GS_HOOK_BOTH(GS_CTX_HOOK, cuCtxDestroy)
GS_HOOK_BOTH(GS_CTX_HOOK, cuCtxDestroy_v2)
GS_HOOK_BOTH(GS_DEV_HOOK, cuDevicePrimaryCtxRelease)
GS_HOOK_BOTH(GS_DEV_HOOK, cuDevicePrimaryCtxRelease_v2)
GS_HOOK_BOTH(GS_DEV_HOOK, cuDevicePrimaryCtxReset)
GS_HOOK_BOTH(GS_DEV_HOOK, cuDevicePrimaryCtxReset_v2)

/* ------------------------------------------------------------------ */
/* Replacing entry points handed out by cuGetProcAddress and dlsym */

struct gs_hook {
	const char *name;	/* libcuda's exported symbol */
	void **real;
	void *procaddr, *dlsym;	/* what the two lookups return instead */
};

#define H(n, pa, dl) { #n, (void **)&real.n, (void *)pa, (void *)dl }
#define HL(n) H(n, pa_##n, dl_##n)
#define HI(n) H(n, in_##n, in_##n)

static CUresult pa_cuGetProcAddress(const char *, void **, int, cuuint64_t);
static CUresult pa_cuGetProcAddress_v2(const char *, void **, int, cuuint64_t,
				       CUdriverProcAddressQueryResult *);

static const struct gs_hook hooks[] = {
	HL(cuLaunchKernel), HL(cuLaunchKernel_ptsz),
	HL(cuLaunchKernelEx), HL(cuLaunchKernelEx_ptsz),
	HL(cuLaunchCooperativeKernel), HL(cuLaunchCooperativeKernel_ptsz),
	HL(cuGraphLaunch), HL(cuGraphLaunch_ptsz),
	H(cuGetProcAddress, pa_cuGetProcAddress, pa_cuGetProcAddress),
	H(cuGetProcAddress_v2, pa_cuGetProcAddress_v2, pa_cuGetProcAddress_v2),
	HI(cuCtxDestroy), HI(cuCtxDestroy_v2),
	HI(cuDevicePrimaryCtxRelease), HI(cuDevicePrimaryCtxRelease_v2),
	HI(cuDevicePrimaryCtxReset), HI(cuDevicePrimaryCtxReset_v2),
	HI(cuInit),
};

/* Base names of the entry points that must not escape the gate. */
static const char *const gated_bases[] = {
	"cuLaunchKernel", "cuLaunchKernelEx", "cuLaunchCooperativeKernel",
	"cuGraphLaunch",
};

static void *substitute(void *p, const char *name, bool procaddr)
{
	static atomic_bool warned;

	for (size_t i = 0; i < sizeof(hooks) / sizeof(hooks[0]); i++) {
		if (*hooks[i].real && p == *hooks[i].real) {
			if (procaddr)
				STAT_INC(procaddr_hooks);
			else
				STAT_INC(dlsym_hooks);
			return procaddr ? hooks[i].procaddr : hooks[i].dlsym;
		}
	}
	for (size_t i = 0; name && procaddr &&
	     i < sizeof(gated_bases) / sizeof(gated_bases[0]); i++)
		if (!strcmp(name, gated_bases[i]) && !atomic_exchange(&warned, true))
			gs_log("cuGetProcAddress(\"%s\") returned an entry point that is not libcuda's %s or %s_ptsz; launches through it are not scheduled",
			       name, name, name);
	return p;
}

static CUresult get_proc(const char *symbol, void **pfn, int ver,
			 cuuint64_t flags, CUdriverProcAddressQueryResult *st,
			 bool v2)
{
	CUresult r;

	if (!resolve_real(true))
		return CUDA_ERROR_NOT_INITIALIZED;
	if (v2 ? !real.cuGetProcAddress_v2 : !real.cuGetProcAddress)
		return CUDA_ERROR_NOT_SUPPORTED;
	r = v2 ? real.cuGetProcAddress_v2(symbol, pfn, ver, flags, st)
	       : real.cuGetProcAddress(symbol, pfn, ver, flags);
	if (r == CUDA_SUCCESS && pfn && *pfn)
		*pfn = substitute(*pfn, symbol, true);
	return r;
}

static CUresult pa_cuGetProcAddress(const char *symbol, void **pfn, int ver,
				    cuuint64_t flags)
{
	return get_proc(symbol, pfn, ver, flags, NULL, false);
}

static CUresult pa_cuGetProcAddress_v2(const char *symbol, void **pfn, int ver,
				       cuuint64_t flags,
				       CUdriverProcAddressQueryResult *st)
{
	return get_proc(symbol, pfn, ver, flags, st, true);
}

/* CUDA 11 signature; CUDA 12 and 13 headers name the next one. */
GS_EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int ver,
				    cuuint64_t flags)
{
	return get_proc(symbol, pfn, ver, flags, NULL, false);
}

GS_EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int ver,
				       cuuint64_t flags,
				       CUdriverProcAddressQueryResult *st)
{
	return get_proc(symbol, pfn, ver, flags, st, true);
}

/* ------------------------------------------------------------------ */
/* dlsym (the entry point itself is in dlsym.S) */

static atomic_uintptr_t real_dlsym_p;

gs_dlsym_fn gs_real_dlsym(void)
{
	static const char *const versions[] = {
		"GLIBC_2.34", "GLIBC_2.2.5", "GLIBC_2.17", "GLIBC_2.0",
	};
	uintptr_t p = atomic_load_explicit(&real_dlsym_p, memory_order_acquire);

	/* Racing threads store the same pointer. RTLD_NEXT from here is the
	 * definition after this library: libc's (or an older libdl's).
	 */
	for (size_t i = 0; !p && i < sizeof(versions) / sizeof(versions[0]); i++) {
		p = (uintptr_t)dlvsym(RTLD_NEXT, "dlsym", versions[i]);
		if (!p)
			dlerror();
		else
			atomic_store_explicit(&real_dlsym_p, p, memory_order_release);
	}
	return (gs_dlsym_fn)p;
}

static bool hooked_name(const char *name)
{
	if (!name || name[0] != 'c' || name[1] != 'u')
		return false;
	for (size_t i = 0; i < sizeof(hooks) / sizeof(hooks[0]); i++)
		if (!strcmp(name, hooks[i].name))
			return true;
	return false;
}

static void *dlsym_null(void *handle, const char *name)
{
	(void)handle;
	(void)name;
	return NULL;
}

/* dlsym on a libcuda handle: hand out the wrapper instead. */
static void *dlsym_hook(void *handle, const char *name)
{
	void *p = gs_real_dlsym()(handle, name);

	if (p && resolve_real(false))
		p = substitute(p, name, false);
	return p;
}

/*
 * Called by the dlsym entry point with its arguments; returns the function
 * it then jumps to. RTLD_DEFAULT and RTLD_NEXT depend on the caller, so
 * they, and every name this library does not replace, go straight to the
 * real dlsym with the caller's return address intact. RTLD_DEFAULT finds
 * this library's definitions first anyway, as it is preloaded.
 */
GS_HIDDEN void *gs_dlsym_route(void *handle, const char *name);
void *gs_dlsym_route(void *handle, const char *name)
{
	gs_dlsym_fn real_fn = gs_real_dlsym();

	if (!real_fn)
		return (void *)dlsym_null;
	if (handle != RTLD_DEFAULT && handle != RTLD_NEXT && hooked_name(name))
		return (void *)dlsym_hook;
	return (void *)real_fn;
}
