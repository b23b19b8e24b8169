/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The transparent face: gate the CUDA driver API calls that submit work to
 * a GPU, so that processes take turns through the token of each GPU. The
 * state the interposer's files share, one concern each:
 *  - hooks.c: the real driver's entry points, the launch wrappers, and
 *    their replacement in cuGetProcAddress and dlsym;
 *  - gate.c: the gate's state per GPU (gate_fsm.h) and the slow path of a
 *    launch that does not hold the token;
 *  - inflight.c: our own events around every launch, each launch timed on
 *    the GPU's clock, and the work in flight bounded by that time;
 *  - span.c: several streams' work, its GPU time reported between the
 *    library's own events (an anchor, a join of every stream);
 *  - neighbour.c: a latency-class client and its neighbour (the period
 *    learnt, the queue held back for it, launching beside the holder);
 *  - idle.c: the thread that gives a token back and answers yields when
 *    no launch comes;
 *  - ctxsync.c: cuCtxSynchronize() in a helper thread, so that a drain
 *    can stop waiting for it;
 *  - context.c: per GPU and per context state, the status page's values,
 *    exit and fork;
 *  - mem.c: device memory limits: the allocation entry points reserve
 *    with the service before the driver allocates, and cuMemGetInfo
 *    reports the limit;
 *  - nvml.c: NVML's memory report within the same limit;
 *  - stats.c: the counters of GPUSCHED_DEBUG=stats;
 *  - estimate.c and period.c: pure arithmetic, unit-tested.
 * Documentation/library.md describes the gate and its states.
 */
#ifndef GS_INTERPOSE_H
#define GS_INTERPOSE_H

#include <stdbool.h>
#include <stdint.h>

#include "cuda_abi.h"
#include "estimate.h"
#include "gate_fsm.h"
#include "internal.h"
#include "period.h"
#include "tune.h"

#define GS_EXPORT __attribute__((visibility("default")))

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
typedef CUresult (*stream_fn)(CUstream);
typedef CUresult (*init_fn)(unsigned int);

struct real_tab {
	launch_kernel_fn cuLaunchKernel, cuLaunchKernel_ptsz;
	launch_kernel_ex_fn cuLaunchKernelEx, cuLaunchKernelEx_ptsz;
	launch_coop_fn cuLaunchCooperativeKernel, cuLaunchCooperativeKernel_ptsz;
	graph_launch_fn cuGraphLaunch, cuGraphLaunch_ptsz;
	get_proc_v1_fn cuGetProcAddress;
	get_proc_v2_fn cuGetProcAddress_v2;
	ctx_fn cuCtxDestroy, cuCtxDestroy_v2;
	stream_fn cuStreamDestroy, cuStreamDestroy_v2;
	dev_fn cuDevicePrimaryCtxRelease, cuDevicePrimaryCtxRelease_v2;
	dev_fn cuDevicePrimaryCtxReset, cuDevicePrimaryCtxReset_v2;
	init_fn cuInit;
	/* device memory (mem.c) */
	CUresult (*cuMemAlloc_v2)(CUdeviceptr *, size_t);
	CUresult (*cuMemAllocPitch_v2)(CUdeviceptr *, size_t *, size_t, size_t,
				       unsigned int);
	CUresult (*cuMemAllocManaged)(CUdeviceptr *, size_t, unsigned int);
	CUresult (*cuMemFree_v2)(CUdeviceptr);
	CUresult (*cuMemGetInfo_v2)(size_t *, size_t *);
	CUresult (*cuMemAllocAsync)(CUdeviceptr *, size_t, CUstream);
	CUresult (*cuMemAllocAsync_ptsz)(CUdeviceptr *, size_t, CUstream);
	CUresult (*cuMemAllocFromPoolAsync)(CUdeviceptr *, size_t, CUmemoryPool,
					    CUstream);
	CUresult (*cuMemAllocFromPoolAsync_ptsz)(CUdeviceptr *, size_t,
						 CUmemoryPool, CUstream);
	CUresult (*cuMemFreeAsync)(CUdeviceptr, CUstream);
	CUresult (*cuMemFreeAsync_ptsz)(CUdeviceptr, CUstream);
	CUresult (*cuMemPoolCreate)(CUmemoryPool *, const CUmemPoolProps *);
	CUresult (*cuMemPoolDestroy)(CUmemoryPool);
	CUresult (*cuDeviceGetDefaultMemPool)(CUmemoryPool *, CUdevice);
	CUresult (*cuDeviceGetMemPool)(CUmemoryPool *, CUdevice);
	CUresult (*cuMemCreate)(CUmemGenericAllocationHandle *, size_t,
				const CUmemAllocationProp *, unsigned long long);
	CUresult (*cuMemRelease)(CUmemGenericAllocationHandle);
	/* helpers, never replaced */
	CUresult (*cuDeviceTotalMem_v2)(size_t *, CUdevice);
	CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
	CUresult (*cuDevicePrimaryCtxGetState)(CUdevice, unsigned int *, int *);
	CUresult (*cuCtxGetCurrent)(CUcontext *);
	CUresult (*cuCtxGetDevice)(CUdevice *);
	CUresult (*cuStreamGetCtx)(CUstream, CUcontext *);
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
	CUresult (*cuStreamCreate)(CUstream *, unsigned int);
	CUresult (*cuStreamWaitEvent)(CUstream, CUevent, unsigned int);
};

enum gs_route { ROUTE_SYMBOL, ROUTE_PROCADDR, ROUTE_DLSYM, NR_ROUTES };

struct gs_stats {
	atomic_ullong launches[NR_ROUTES];
	atomic_ullong gated;		/* launched holding the token */
	atomic_ullong unscheduled;	/* launched without a token service */
	atomic_ullong captured;		/* stream capture: no work submitted */
	atomic_ullong beside;		/* latency class beside the holder */
	atomic_ullong beside_grants;	/* ... then granted to the idle thread */
	atomic_ullong beside_yields;	/* asked to yield, gave it and went beside */
	atomic_ullong nudges;		/* holders nudged for work beside them */
	atomic_ullong nudge_refusals;	/* nudges the service refused (budget) */
	atomic_ullong nudged;		/* as holder: queue run out for a nudge */
	atomic_ullong nudge_dones;	/* nudges answered: our work ended */
	atomic_ullong answered;		/* as holder: a nudge's drain ended by its answer */
	atomic_ullong denied;		/* GPUSCHED_FAIL=closed */
	atomic_ullong acquires;
	atomic_ullong yields;
	atomic_ullong idle_releases;
	atomic_ullong yield_releases;	/* yield answered by the idle thread */
	atomic_ullong drains;
	atomic_ullong throttle_waits;
	atomic_ullong stuck_waits;	/* waits given up (GS_STUCK_NS) */
	atomic_ullong dry_yields;	/* yields seen polling the last event */
	atomic_ullong timed;		/* kernels timed on the GPU (gs_klen) */
	atomic_ullong late_frames;	/* ... not: the event after recorded late */
	atomic_ullong revoked;		/* grants found revoked (GPUSCHED_ST_REVOKED) */
	atomic_ullong procaddr_hooks;	/* cuGetProcAddress results replaced */
	atomic_ullong dlsym_hooks;	/* dlsym results replaced */
	/* Token time that did the GPU no good while another waited */
	atomic_ullong slow_launches;	/* launch calls of GS_SLOW_LAUNCH_US or more, holding */
	atomic_ullong slow_launch_us;	/* ... their time in the driver */
	atomic_ullong dry_us;		/* held, others waiting, nothing of ours queued */
	atomic_ullong early_releases;	/* latency class: given back as its last work ran */
	atomic_ullong relaunches;	/* ... and launched again within that request */
	atomic_ullong span_back_ns;	/* lengths' sum beyond the GPU clock's spans */
	atomic_ullong joins;		/* turns of several streams joined */
	atomic_ullong unjoined;		/* ... and not: reported as measured */
	atomic_ullong calls;		/* launch calls, for launch_clock() */
	/* Device memory (mem.c) */
	atomic_ullong mem_reserves;	/* MEM_RESERVEs granted */
	atomic_ullong mem_refused;	/* ... refused: CUDA_ERROR_OUT_OF_MEMORY */
	atomic_ullong mem_returns;	/* MEM_RETURNs (frees, failed allocations) */
	atomic_ullong mem_unaccounted;	/* allocations made without a reservation */
	atomic_ullong mem_clamped;	/* cuMemGetInfo answers clamped to a limit */
};
extern struct gs_stats stats GS_HIDDEN;

/*
 * The token's way, timed for GPUSCHED_DEBUG=stats (the last GS_TIMES of
 * each, in microseconds): how long a grant took to come (acquire and yield
 * calls), and how long after a yield was asked the token was given away.
 */
#define GS_TIMES 4096
struct gs_times {
	atomic_uint n;
	uint32_t us[GS_TIMES];
};

extern struct gs_times t_grant, t_answer, t_call, t_driver GS_HIDDEN;

#define STAT_INC(f) atomic_fetch_add_explicit(&stats.f, 1, memory_order_relaxed)
#define STAT_GET(f) atomic_load_explicit(&stats.f, memory_order_relaxed)
#define STAT_ADD(f, v) atomic_fetch_add_explicit(&stats.f, (v), memory_order_relaxed)

struct gs_dev;

/* What an event of the ring is, besides a mark of progress (gs_ctx.ev_kind). */
enum {
	EVK_ANCHOR = 1,		/* opens a span (ctx_anchor_locked()) */
	EVK_JOIN = 2,		/* closes it, capped (ctx_join()) */
	EVK_RELEASE = 4,	/* closes it as it is: a join failed */
};

/* A CUDA context seen launching, with its ring of progress events. */
struct gs_ctx {
	struct gs_ctx *next;		/* G.ctxs, append-only */
	struct gs_ctx *dev_next;	/* d->ctxs, append-only */
	CUcontext ctx;			/* written under lock; ctx_is() */
	CUdevice ordinal;
	struct gs_dev *d;
	atomic_bool dead;		/* the context was destroyed */
	pthread_mutex_t lock;		/* everything below */
	/* Bumped by ctx_set() each time the record serves a new context: a
	 * thread that waited without the lock compares it before it goes
	 * on with what it saw (throttle(), ctx_drain_to(), ctx_sync()).
	 */
	unsigned int life;
	/* From here on, one context's life: ctx_set() clears it where a
	 * new context takes over a destroyed one's record.
	 */
	uint64_t launches;		/* gated launches queued */
	uint64_t done;			/* launches known to have finished */
	uint64_t head_seq;		/* events popped so far */
	uint64_t last_mark;		/* launches when the last event was recorded */
	uint64_t mark_cum;		/* cum_ns then */
	uint64_t sample_at;		/* the next launch to time (time_this()) */
	uint64_t rng;			/* varies the interval between them */
	uint64_t samples;		/* launch lengths measured (klen_sample()) */
	unsigned int head, nr;
	/*
	 * Per slot of the ring, an event that takes GPU timestamps (a timed
	 * launch, and the one just before it) and one that does not (what is
	 * in flight, the queue bound, a drain): the GPU records the latter,
	 * made without timing, at no cost between two kernels, where a
	 * timestamp costs it about 2 us. Neither is blocking sync
	 * (ctx_lookup()). ev[] is the one recorded in each slot (ev_timed()).
	 */
	CUevent ev_t[GS_RING], ev_n[GS_RING];
	CUevent ev[GS_RING];
	uint64_t ev_mark[GS_RING];
	/* cum_ns and cum_least when each event was recorded. */
	uint64_t ev_cum[GS_RING], ev_least[GS_RING];
	/* The key of the launch an event follows, if the event before it
	 * marks that launch's start (frame_start()): the two events' GPU
	 * times then frame that kernel. 0: no.
	 */
	uint64_t ev_key[GS_RING];
	/* Host time that may lie inside that frame: where the host was away
	 * around the launch (frame_away_start(), frame_away_end()), what
	 * the frame may hold beyond the kernel (gs_frame_holds()).
	 */
	uint64_t ev_away[GS_RING];
	CUstream ev_stream[GS_RING];
	/* The newest event popped, kept unrecorded for the next one's
	 * frame while prev_ok (so the ring holds one event fewer).
	 */
	unsigned int prev;
	bool prev_ok;
	unsigned int nr_events;		/* events created */
	unsigned int throttled;		/* threads waiting in throttle() */
	/* head_seq + 1 of an event a wait gave up on (wait_stuck_at(),
	 * drain_until()): launches and drains no longer wait for it. 0: none.
	 */
	uint64_t stuck;
	/* GPU time per launch, from our own events around each launch
	 * (klen_sample()): bounds the queue in time as well as in launches.
	 * est.mean 0: not known yet.
	 */
	struct gs_est est;
	/* The same per kernel, by what was launched. */
	/* Each launch's predicted GPU time (launch_ns()), summed over all
	 * launches, and up to cs->done: what is queued is the difference.
	 */
	uint64_t cum_ns, done_cum;
	/* The least GPU time likely for each launch (klen_least()), summed:
	 * how soon the GPU may run out of what is queued after an event.
	 */
	uint64_t cum_least;
	/*
	 * The popped event that takes timestamps whose completion is the
	 * latest seen, and cum_ns when it was recorded: from it the GPU time
	 * reported is checked against the GPU's clock (ctx_span_locked()),
	 * while anchor_ok. Its handle is out of the ring, whose slot took the
	 * previous anchor's (a spare from ctx_set() at first); NULL: none
	 * made.
	 */
	CUevent anchor_ev;
	uint64_t anchor_cum;
	bool anchor_ok;
	/*
	 * Work on several streams at once (multi, for the context's life):
	 * an event on one stream says nothing of the others', so the GPU
	 * time reported is checked only between events on the library's own
	 * streams: an anchor on anchor_s, which has nothing to wait for,
	 * recorded as the first launch after a join, or after a second
	 * stream is seen, is made (anchor_due), and a join on join_s,
	 * recorded at a drain, or once GS_SPAN_MAX_NS of work was launched
	 * in the span, after join_s waited for the newest event of each
	 * stream launched on since the last join (strm[]; a stream
	 * destroyed meanwhile was waited for then and left the table:
	 * ctx_stream_gone()). While a span is open (span_open), what
	 * completes is held in span_ns rather than reported, until the join
	 * caps it (ctx_span_locked()).
	 */
	struct gs_strm {
		CUstream s;
		bool ptsz;
		uint64_t last;		/* launches up to its newest launch */
		uint64_t ev_seq;	/* head_seq of its newest event ... */
		uint64_t ev_mark;	/* ... and launches when recorded */
		bool ev_ok;		/* it has one */
	} strm[GS_JOIN_STREAMS];
	unsigned int nr_strm;
	bool strm_over;			/* more streams than strm[] holds */
	bool multi;
	/* Work of several streams went unjoined (join_now_locked()) and
	 * has not been seen to end (ctx_sync()): a join says nothing of it.
	 */
	bool unjoined;
	CUstream join_s, anchor_s;
	atomic_bool anchor_due;
	bool span_pushed;		/* an anchor recorded, its join not yet */
	uint64_t span_cum;		/* cum_ns when it was */
	bool span_open;
	uint64_t span_ns;
	/*
	 * The part of our lengths, each timed on its own stream, that the
	 * GPU's clock saw pass over the spans so far (gs_scale_next()): a
	 * kernel timed while another stream's ran took longer than it does
	 * alone, and the queue goes by the GPU's time. Applied to every
	 * predicted length (scaled()). 0: none measured, the whole.
	 */
	unsigned int scale;
	uint8_t ev_kind[GS_RING];	/* EVK_*: what each slot's event is */
	struct gs_klen klen[GS_KLEN];
	/* When our queued work will be done, predicted: from the last event
	 * seen completing, or a launch into an empty queue, then each launch
	 * adds its length after the end so far or after its own time (the
	 * queue may have run dry). 0: not known (the length unknown, or
	 * nothing seen completing or launched alone since the grant).
	 */
	uint64_t end_ns;
};

/*
 * @x modulo the ring's size. The ring has GS_RING events unless the driver
 * refused some: the divisor is then a constant, and the modulo a mask
 * rather than a division, of which a launch would make several.
 */
static inline unsigned int ring_mod(const struct gs_ctx *cs, unsigned int x)
{
	if (__builtin_expect(cs->nr_events == GS_RING, 1))
		return x % GS_RING;
	return x % cs->nr_events;
}

/* The slot of @cs's newest event in the ring (cs->nr of them). */
static inline unsigned int ring_newest(const struct gs_ctx *cs)
{
	return ring_mod(cs, cs->head + cs->nr - 1);
}

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
	/*
	 * The idle thread's view: when it last saw a launch or our work
	 * running (seen_at), or a launch or more than the hand-over
	 * allowance of our work (active_at, lat_early()); dry_at: up to
	 * when dry_us counts.
	 */
	uint64_t seen_launches, seen_at, active_at, dry_at;
	/*
	 * A periodic latency-class client (lat_observe(), lat_nudged(),
	 * under lock). The prediction is read without the lock
	 * (queue_bound()): the next request is expected from lat_next on
	 * (0: none), off the beat after lat_tol, given up for after
	 * lat_due(); lat_asks: the last asked for the token (else nudged).
	 */
	struct gs_period lat;
	atomic_ullong lat_next, lat_tol;
	atomic_bool lat_asks;
	/*
	 * A latency-class request launched beside the holder at beside_ask
	 * (0: none), for which the idle thread nudges the holder (or, where
	 * the service cannot, asks for the token).
	 */
	atomic_ullong beside_ask;
	/* The last nudge_ns of our page that a drain answered (gate_slow()). */
	atomic_ullong nudge_seen;
	/*
	 * Our nudge of the holder is unanswered until the idle thread sees
	 * our work end and says so (answer_nudge()), or until nudge_until
	 * (0: no nudge to answer).
	 */
	atomic_ullong nudge_until;
	/*
	 * Our last launch beside the holder, and whether the pending ask may
	 * nudge the holder (beside_ask()): the first launch of a request,
	 * when the request before it was one launch too (beside_multi: the
	 * current request launched more than once; beside_was_multi: the
	 * one before it did). Other asks are for the token.
	 */
	atomic_ullong beside_last;
	atomic_bool beside_first, beside_multi, beside_was_multi;
	/*
	 * Ours a latency-class client's: how its requests end (lat_early()).
	 * lat_ends counts the grants in a row in which no launch followed
	 * the end of our work (lat_dry, set by such a launch, other than
	 * the first since our last release, rel_launches: a request's
	 * first); early_until: after a release that left our work running,
	 * until when a launch would have been one of the same request (0:
	 * none pending).
	 */
	atomic_uint lat_ends;
	atomic_bool lat_dry;
	atomic_ullong early_until, rel_launches;
	/*
	 * Device memory (mem.c). mem_total: cuDeviceTotalMem of the GPU,
	 * reported at ATTACH (0: not known yet). mem_users counts threads of
	 * mem.c using d->g outside d->lock, as launching does for launches:
	 * retire_locked() waits for both before it closes the client.
	 * client_gen is bumped whenever d->g is set to a new client, so that
	 * a reservation made with an old one is never returned to the new.
	 */
	atomic_ullong mem_total;
	atomic_uint mem_users;
	atomic_uint client_gen;
};

struct gs_global {
	pthread_mutex_t lock;		/* lists, thread start */
	pthread_cond_t cond;		/* wakes the idle thread */
	struct gs_dev *_Atomic devs;
	struct gs_ctx *_Atomic ctxs;
	atomic_uint gen;		/* bumped when a context dies */
	bool bg_started, bg_stop, bg_kick;	/* set under lock */
	pthread_t bg;
	bool hooks_registered;
	atomic_bool warned_no_service, warned_lost, warned_params, warned_err;
};
extern struct gs_global G GS_HIDDEN;

enum gs_sharing { ALONE, SHARED, SHARED_LATENCY };

/*
 * A timed launch's start (frame_start()): the event before it on its
 * stream was still pending (the kernel starts as it completes), or was
 * recorded fresh (it may complete during the launch call, and the kernel
 * starts only once the call has submitted it: frame_away_start()). @since:
 * when the host last saw that event pending, or recorded it.
 */
struct gs_frame {
	enum { FRAME_NONE, FRAME_PENDING, FRAME_FRESH } how;
	uint64_t since;
};

/* What a wait for our work ended with (wait_dry(), wait_ev()). */
enum { DRY_SEEN, DRY_YIELD, DRY_STUCK, DRY_ANSWERED };

/*
 * gate_enter()'s answers. GATE_BESIDE_ASK: launch beside the holder, then
 * wake the idle thread (kick_idle_thread()), which nudges the holder once
 * the work is queued.
 */
enum { GATE_HELD, GATE_BESIDE, GATE_BESIDE_ASK, GATE_UNSCHED, GATE_DENIED,
       GATE_RETRY };

extern struct real_tab real GS_HIDDEN;

/* hooks.c: find libcuda's entry points (@load: dlopen it if need be) */
GS_HIDDEN bool resolve_real_slow(bool load);
extern atomic_bool gs_real_resolved GS_HIDDEN;

/*
 * Every call of a replaced entry point resolves the real ones first: once
 * they are, a flag says so here, without a call.
 */
static inline bool resolve_real(bool load)
{
	if (__builtin_expect(atomic_load_explicit(&gs_real_resolved,
						  memory_order_acquire), 1))
		return true;
	return resolve_real_slow(load);
}

/* context.c */
GS_HIDDEN void process_init_once(void);
extern atomic_bool gs_process_ready GS_HIDDEN;

/*
 * Register what the process needs once it really uses CUDA (every launch
 * asks): a flag, set once that is done, spares the call to pthread_once().
 */
static inline void ensure_process_init(void)
{
	if (!__builtin_expect(atomic_load_explicit(&gs_process_ready,
						   memory_order_acquire), 1))
		process_init_once();
}
GS_HIDDEN struct gs_ctx *ctx_current(void);
GS_HIDDEN void ctx_forget(CUcontext ctx);
GS_HIDDEN void cond_init_mono(pthread_cond_t *c);
GS_HIDDEN struct timespec ns_timespec(uint64_t t);
/* ctxsync.c */
GS_HIDDEN bool ctx_sync_until(CUcontext ctx, uint64_t giveup, CUresult *r);
GS_HIDDEN void ctx_sync_forget(CUcontext ctx);
GS_HIDDEN void ctx_sync_fork_child(void);
GS_HIDDEN CUcontext primary_ctx(CUdevice dev);
GS_HIDDEN bool primary_active(CUdevice dev);
GS_HIDDEN uint64_t grace_ns(struct gs_dev *d);
GS_HIDDEN uint64_t latency_queue_ns(struct gs_dev *d);
GS_HIDDEN uint64_t handover_ns(struct gs_dev *d);
GS_HIDDEN uint64_t idle_wanted(const struct gpusched *g);
GS_HIDDEN bool dev_wanted(const struct gpusched *g, uint32_t fl);
GS_HIDDEN uint32_t dev_flags(struct gs_dev *d);
GS_HIDDEN void sleep_until(uint64_t t);

/*
 * Has the client that nudged @g's holder (us) last said that the work of
 * that nudge ended (GPUSCHED_ACQUIRE_NUDGE_DONE)? Then the driver has run
 * it, and a drain for it has nothing left to wait for. Never, from a
 * service without GPUSCHED_FEAT_NUDGE_DONE (the field is reserved, 0).
 */
static inline bool nudge_answered(const struct gpusched *g)
{
	uint64_t n = __atomic_load_n(&g->st->nudge_ns, __ATOMIC_RELAXED);

	return n && __atomic_load_n(&g->st->nudge_done_ns,
				    __ATOMIC_RELAXED) == n;
}

/*
 * Is this process of the latency class on @g? As the service last set it
 * (the daemon's rules may have), or, from a service that does not say, as
 * it was started (GPUSCHED_CLASS). Inline, as dev_sharing(): a few loads
 * that launches make several times each.
 */
static inline bool is_latency(const struct gpusched *g)
{
	uint32_t c = g ? __atomic_load_n(&g->st->class_plus_one,
					 __ATOMIC_RELAXED) : 0;

	if (c)
		return c - 1 == GPUSCHED_CLASS_LATENCY;
	return gs_config()->sched_class == GPUSCHED_CLASS_LATENCY;
}

/*
 * Do other clients share @d's token, and may one of them need the GPU at
 * once (latency class, not us)? From the status page, whose counts are
 * current while we hold the token (they are rewritten with every change
 * of our state or of a client's class, and a newcomer who waits sets
 * YIELD). Before the token is open: assume shared.
 */
static inline enum gs_sharing dev_sharing(struct gs_dev *d)
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

/* stats.c */
GS_HIDDEN void times_add(struct gs_times *t, uint64_t ns);
GS_HIDDEN void print_stats(void);

/* inflight.c */
GS_HIDDEN void dev_unstamp(struct gs_dev *d);
GS_HIDDEN void ctx_empty_locked(struct gs_ctx *cs);
GS_HIDDEN bool ctx_busy(struct gs_ctx *cs, uint64_t left_ns);
GS_HIDDEN void lat_held_launch_locked(struct gs_ctx *cs);
GS_HIDDEN uint64_t launch_ns(struct gs_ctx *cs, uint64_t key);
GS_HIDDEN uint64_t queued_ns(struct gs_ctx *cs);
GS_HIDDEN uint64_t dev_queued_ns(struct gs_dev *d);
GS_HIDDEN void ctx_drain_to(struct gs_ctx *cs, uint64_t left_ns,
			     const struct gpusched *answer);
GS_HIDDEN int dev_work_ended(struct gs_dev *d);
GS_HIDDEN bool gs_relax(CUstreamCaptureMode *old);
GS_HIDDEN void gs_unrelax(bool relaxed, CUstreamCaptureMode old);
GS_HIDDEN void gs_relax_thread(void);
GS_HIDDEN CUresult ev_query(CUevent ev);
GS_HIDDEN bool ev_timed(const struct gs_ctx *cs, unsigned int slot);
GS_HIDDEN CUresult ev_elapsed(CUevent from, CUevent to, float *ms);
GS_HIDDEN bool ev_push(struct gs_ctx *cs, CUstream stream, bool ptsz,
			uint64_t key, bool timing);
GS_HIDDEN CUresult stream_capture(CUstream s, bool ptsz,
				 CUstreamCaptureStatus *cap);
GS_HIDDEN bool throttle(struct gs_ctx *cs, uint64_t key);
GS_HIDDEN void frame_start(struct gs_ctx *cs, CUstream stream, bool ptsz,
			    uint64_t key, struct gs_frame *fr);
GS_HIDDEN void queued(struct gs_ctx *cs, CUstream stream, bool ptsz, uint64_t key,
		      const struct gs_frame *fr, uint64_t called);

/* span.c */
GS_HIDDEN void ctx_report_locked(struct gs_ctx *cs, uint64_t ns);
GS_HIDDEN void span_release_locked(struct gs_ctx *cs);
GS_HIDDEN void ctx_span_locked(struct gs_ctx *cs, unsigned int slot);
GS_HIDDEN struct gs_strm *strm_of(struct gs_ctx *cs, CUstream stream, bool ptsz);
GS_HIDDEN void join_now_locked(struct gs_ctx *cs);
GS_HIDDEN bool strm_running_locked(struct gs_ctx *cs);
GS_HIDDEN void ctx_join(struct gs_ctx *cs);
GS_HIDDEN void ctx_anchor_locked(struct gs_ctx *cs);
GS_HIDDEN void ctx_stream_gone(CUstream stream);

/* neighbour.c */
GS_HIDDEN void lat_observe(struct gs_dev *d, const struct gpusched *g, uint32_t fl, uint64_t now);
GS_HIDDEN void lat_nudged(struct gs_dev *d, uint64_t at, uint64_t now);
GS_HIDDEN uint64_t handover_left(struct gs_dev *d);
GS_HIDDEN uint64_t lat_watch(struct gs_dev *d, uint64_t now, uint64_t *until);
GS_HIDDEN bool beside_now(struct gs_dev *d, const struct gpusched *g);
GS_HIDDEN bool beside_ask(struct gs_dev *d, uint64_t t);
GS_HIDDEN bool ask_beside(struct gs_dev *d, uint64_t now, uint64_t *next);
GS_HIDDEN bool answer_nudge(struct gs_dev *d, uint64_t now, uint64_t *next);
GS_HIDDEN bool lat_early(struct gs_dev *d, const struct gpusched *g);
GS_HIDDEN void lat_released(struct gs_dev *d, const struct gpusched *g, bool early,
			     uint64_t left_ns, uint64_t now);
GS_HIDDEN void lat_relaunch(struct gs_dev *d, uint64_t now);

/* gate.c */
GS_HIDDEN void drain_locked(struct gs_dev *d, bool early);
GS_HIDDEN void drain_nudged_locked(struct gs_dev *d, const struct gpusched *g);
GS_HIDDEN int service_missing(struct gs_dev *d, int err, bool lost);
GS_HIDDEN void retire_locked(struct gs_dev *d);
GS_HIDDEN bool conn_error(int err);
GS_HIDDEN void yield_answered(const struct gpusched *g, uint64_t now);
GS_HIDDEN int gate_enter(struct gs_dev *d);

/* idle.c */
GS_HIDDEN void kick_idle_thread(void);

/* gate.c: open @d's client if it has none (d->lock held); GATE_RETRY once open */
GS_HIDDEN int dev_open_locked(struct gs_dev *d);

/* context.c: the state of the GPU with CUDA ordinal @dev */
GS_HIDDEN struct gs_dev *dev_by_ordinal(CUdevice dev);
GS_HIDDEN struct gs_dev *dev_of_ctx(CUcontext ctx);

/* mem.c */
GS_HIDDEN void mem_apply_limit(struct gs_dev *d, struct gpusched *g);
GS_HIDDEN void mem_fork_child(void);
GS_HIDDEN void mem_ctx_gone(CUcontext ctx);
GS_HIDDEN bool mem_clamp(struct gs_dev *d, bool open, uint64_t *total,
			 uint64_t *free_b);

/* nvml.c: find NVML's entry points, if it is loaded */
GS_HIDDEN bool nvml_resolve(void);

/* An entry point replaced in cuGetProcAddress and dlsym results. */
struct gs_hook {
	const char *name;	/* libcuda's exported symbol */
	void **real;
	void *procaddr, *dlsym;	/* what the two lookups return instead */
};

#define GS_HOOK(n, pa, dl) { #n, (void **)&real.n, (void *)pa, (void *)dl }

/* mem.c's and nvml.c's shares of the table (hooks.c holds the rest). */
extern const struct gs_hook gs_mem_hooks[] GS_HIDDEN;
extern const size_t gs_mem_nr_hooks GS_HIDDEN;
extern const struct gs_hook gs_nvml_hooks[] GS_HIDDEN;
extern const size_t gs_nvml_nr_hooks GS_HIDDEN;

#endif /* GS_INTERPOSE_H */
