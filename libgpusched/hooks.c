// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The CUDA driver entry points this library replaces: the real driver's
 * table, the launch wrappers, cuGetProcAddress and dlsym.
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



struct real_tab real;

atomic_bool gs_real_resolved;
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
bool resolve_real_slow(bool load)
{
	struct real_tab t;
	void *h;

	if (atomic_load_explicit(&gs_real_resolved, memory_order_acquire))
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
	R(cuStreamDestroy); R(cuStreamDestroy_v2);
	R(cuDevicePrimaryCtxRelease); R(cuDevicePrimaryCtxRelease_v2);
	R(cuDevicePrimaryCtxReset); R(cuDevicePrimaryCtxReset_v2);
	R(cuInit);
	R(cuDevicePrimaryCtxRetain); R(cuDevicePrimaryCtxGetState);
	R(cuCtxGetCurrent); R(cuCtxGetDevice); R(cuStreamGetCtx);
	R(cuCtxPushCurrent_v2); R(cuCtxPopCurrent_v2); R(cuCtxSynchronize);
	R(cuDeviceGetUuid); R(cuDeviceGetUuid_v2);
	R(cuEventCreate); R(cuEventRecord); R(cuEventRecord_ptsz);
	R(cuEventSynchronize); R(cuEventQuery); R(cuEventElapsedTime);
	if (!t.cuEventElapsedTime)
		*(void **)&t.cuEventElapsedTime = resolve(h, "cuEventElapsedTime_v2");
	R(cuStreamIsCapturing); R(cuStreamIsCapturing_ptsz);
	R(cuThreadExchangeStreamCaptureMode);
	R(cuStreamCreate); R(cuStreamWaitEvent);
	R(cuMemAlloc_v2); R(cuMemAllocPitch_v2); R(cuMemAllocManaged);
	R(cuMemFree_v2); R(cuMemGetInfo_v2);
	R(cuMemAllocAsync); R(cuMemAllocAsync_ptsz);
	R(cuMemAllocFromPoolAsync); R(cuMemAllocFromPoolAsync_ptsz);
	R(cuMemFreeAsync); R(cuMemFreeAsync_ptsz);
	R(cuMemPoolCreate); R(cuMemPoolDestroy);
	R(cuDeviceGetDefaultMemPool); R(cuDeviceGetMemPool);
	R(cuMemCreate); R(cuMemRelease); R(cuDeviceTotalMem_v2);
#undef R
	dlerror();	/* missing optional symbols leave no error behind */
	/* The handle's reference is kept: libcuda stays loaded. Racing
	 * threads found the same pointers; the first one publishes.
	 */
	pthread_mutex_lock(&real_lock);
	if (!atomic_load_explicit(&gs_real_resolved, memory_order_relaxed)) {
		real = t;
		atomic_store_explicit(&gs_real_resolved, true, memory_order_release);
	}
	pthread_mutex_unlock(&real_lock);
	return true;
}

struct gs_launch {
	struct gs_dev *d;
	struct gs_ctx *cs;
	uint64_t key;		/* gs_launch_key() */
	bool held;		/* the token's: under d->launching */
	bool tracked;		/* in cs's ring: the token's, or beside it */
	struct gs_frame fr;	/* frame_start(): how its start is marked */
	bool ask;		/* beside: wake the idle thread once launched */
	uint64_t t;		/* with stats, held and timed: when the driver was called */
};

static uint64_t launch_key_ex(const CUlaunchConfig *c, const void *f)
{
	if (!c)
		return gs_launch_key(f, 0, 0, 0, 0, 0, 0, 0);
	return gs_launch_key(f, c->gridDimX, c->gridDimY, c->gridDimZ,
			  c->blockDimX, c->blockDimY, c->blockDimZ,
			  c->sharedMemBytes);
}

CUresult launch_begin(struct gs_launch *l, enum gs_route route,
			     CUstream stream, bool ptsz, uint64_t key)
{
	CUstreamCaptureStatus cap;
	bool ret_held, timed, lat, anchor;
	int gate;

	l->d = NULL;
	l->held = false;
	l->tracked = false;
	l->fr.how = FRAME_NONE;
	l->ask = false;
	l->t = 0;
	l->key = key;
	ensure_process_init();
	atomic_fetch_add_explicit(&stats.launches[route], 1, memory_order_relaxed);

	/* A launch into a stream being captured only adds a graph node: no
	 * work reaches the GPU, and nothing may be synchronised here.
	 */
	if (stream_capture(stream, ptsz, &cap) == CUDA_SUCCESS &&
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
	timed = throttle(l->cs, key);
	gate = gate_enter(l->cs->d);
	ret_held = gate == GATE_HELD;
	switch (gate) {
	case GATE_BESIDE_ASK:
		l->ask = true;
		/* fall through */
	case GATE_HELD:
	case GATE_BESIDE:
		l->d = l->cs->d;
		l->held = ret_held;
		l->tracked = true;
		if (!l->held)
			STAT_INC(beside);
		/* Under cs->lock only where there is something to do: a
		 * span's anchor after a join (ctx_anchor_locked()), a
		 * latency-class holder's look at its own queue
		 * (lat_held_launch_locked()), a timed launch's frame.
		 */
		lat = l->held && is_latency(atomic_load(&l->d->g));
		anchor = l->held && atomic_load_explicit(&l->cs->anchor_due,
							 memory_order_relaxed);
		if (lat || timed || anchor) {
			pthread_mutex_lock(&l->cs->lock);
			if (lat)
				lat_held_launch_locked(l->cs);
			/* After that look: it goes by the newest event. */
			if (anchor)
				ctx_anchor_locked(l->cs);
			if (timed)
				frame_start(l->cs, stream, ptsz, key, &l->fr);
			pthread_mutex_unlock(&l->cs->lock);
		}
		/* For the stats only (slow_launches), of the launches
		 * timed: a kernel's first ones, where the driver loads it,
		 * and the few timed on the GPU, whose events are recorded
		 * here anyway. Otherwise no clock is read between the gate
		 * and the driver, on the GPU's path where the program waits
		 * for each kernel (a clock read is a system call on hosts
		 * whose clock source is not the TSC).
		 */
		if (l->held && timed && gs_config()->stats)
			l->t = gs_now_ns();
		return CUDA_SUCCESS;
	case GATE_DENIED:
		STAT_INC(denied);
		return CUDA_ERROR_NOT_PERMITTED;
	default:
		STAT_INC(unscheduled);
		return CUDA_SUCCESS;
	}
}

/*
 * Does the end of @l's driver call need the time (launch_end())? Held (the
 * predicted end of our work; with stats, a timed call's length: @l->t is
 * only set on held launches), or timed (its frame).
 */
static inline bool launch_end_clock(const struct gs_launch *l)
{
	return l->tracked && (l->held || l->fr.how != FRAME_NONE);
}

/* @l's driver call returned @r at @now (0: launch_end_clock() was false). */
static void launch_end(struct gs_launch *l, CUresult r, CUstream stream,
		       bool ptsz, uint64_t now)
{
	if (!l->tracked)
		return;
	if (r == CUDA_SUCCESS) {
		queued(l->cs, stream, ptsz, l->key, &l->fr, now);
		atomic_fetch_add_explicit(&l->d->launches, 1, memory_order_relaxed);
		if (l->held)
			STAT_INC(gated);
	}
	if (l->held) {
		uint64_t us = l->t ? (now - l->t) / 1000 : 0;

		/* The token held through it: a kernel's first launch in a
		 * context, where the driver loads it, can take milliseconds.
		 */
		if (us >= GS_SLOW_LAUNCH_US) {
			STAT_INC(slow_launches);
			STAT_ADD(slow_launch_us, us);
		}
		atomic_fetch_sub(&l->d->launching, 1);
	}
	/* Queued first, so that a nudged holder's queue runs out into it. */
	if (l->ask)
		kick_idle_thread();
}

/*
 * With GPUSCHED_DEBUG=stats, how long a launch call took the program, and
 * the driver's part of it (the rest is the library's, the gate's waits
 * included), for one call in GS_CALL_TIME_EVERY: when the clock started
 * (0: not timed). A sample is as likely to hold a wait as any call.
 */
static inline uint64_t launch_clock(void)
{
	if (!gs_config()->stats ||
	    atomic_fetch_add_explicit(&stats.calls, 1, memory_order_relaxed) %
	    GS_CALL_TIME_EVERY)
		return 0;
	return gs_now_ns();
}

/* The launch call began at @t0, and the driver's from @t1 to @t2. */
static void launch_timed(uint64_t t0, uint64_t t1, uint64_t t2)
{
	times_add(&t_call, gs_now_ns() - t0);
	times_add(&t_driver, t2 - t1);
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
	uint64_t t0_, t1_, t2_;							\
	CUstream s_;								\
	CUresult r;								\
										\
	if (!resolve_real(true) || !real.realfn)				\
		return CUDA_ERROR_NOT_INITIALIZED;				\
	t0_ = launch_clock();							\
	s_ = (STREAM);								\
	r = launch_begin(&l, route, s_, ptsz, (KEY));				\
	if (r != CUDA_SUCCESS)							\
		return r;							\
	t1_ = !t0_ ? 0 : l.t ? l.t : gs_now_ns();				\
	r = real.realfn ARGS;							\
	t2_ = t0_ || launch_end_clock(&l) ? gs_now_ns() : 0;			\
	launch_end(&l, r, s_, ptsz, t2_);					\
	if (t0_)								\
		launch_timed(t0_, t1_, t2_);					\
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
#define K_KERNEL gs_launch_key(f, gx, gy, gz, bx, by, bz, shmem)
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
#define K_GRAPH gs_launch_key(exec, 0, 0, 0, 0, 0, 0, 0)

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

/*
 * Context teardown: forget the context before it goes (nothing may look at
 * its events meanwhile); once it went, its allocations went with it.
 */
#define GS_CTX_HOOK(vis, fname, realfn)						\
vis CUresult fname(CUcontext ctx)						\
{										\
	CUresult r;								\
										\
	if (!resolve_real(true) || !real.realfn)				\
		return CUDA_ERROR_NOT_INITIALIZED;				\
	ctx_forget(ctx);							\
	r = real.realfn(ctx);							\
	if (r == CUDA_SUCCESS)							\
		mem_ctx_gone(ctx);						\
	return r;								\
}

/*
 * The primary context of @dev through @fn, a reset (@reset) or a release.
 * A reset destroys it (its handle stays, and a retain makes it anew): the
 * same as a destroy. A release only drops a reference (the CUDA runtime
 * keeps one, libraries retain and release in pairs): the context goes only
 * with its last, seen afterwards as inactive. Forgetting it at every
 * release would let the token go with its work still running and give
 * every new reference fresh state and events. Only that context: the
 * others on the device (cuCtxCreate's) live on.
 */
static CUresult primary_down(dev_fn fn, CUdevice dev, bool reset)
{
	CUcontext pc = primary_ctx(dev);
	CUresult r;

	if (pc && reset)
		ctx_forget(pc);
	r = fn(dev);
	if (r != CUDA_SUCCESS || !pc || (!reset && primary_active(dev)))
		return r;
	if (!reset)
		ctx_forget(pc);
	mem_ctx_gone(pc);
	return r;
}

#define GS_PRIMARY_HOOK(vis, fname, realfn, reset)				\
vis CUresult fname(CUdevice dev)						\
{										\
	if (!resolve_real(true) || !real.realfn)				\
		return CUDA_ERROR_NOT_INITIALIZED;				\
	return primary_down(real.realfn, dev, reset);				\
}
#define GS_RESET_HOOK(vis, fname, realfn) GS_PRIMARY_HOOK(vis, fname, realfn, true)
#define GS_RELEASE_HOOK(vis, fname, realfn) GS_PRIMARY_HOOK(vis, fname, realfn, false)
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

/*
 * A stream of the program's goes: the library is done with its handle
 * before it does (ctx_stream_gone()).
 */
#define GS_STREAM_HOOK(vis, fname, realfn)					\
vis CUresult fname(CUstream stream)						\
{										\
	if (!resolve_real(true) || !real.realfn)				\
		return CUDA_ERROR_NOT_INITIALIZED;				\
	ctx_stream_gone(stream);						\
	return real.realfn(stream);						\
}

GS_HOOK_BOTH(GS_INIT_HOOK, cuInit)
GS_HOOK_BOTH(GS_CTX_HOOK, cuCtxDestroy)
GS_HOOK_BOTH(GS_CTX_HOOK, cuCtxDestroy_v2)
GS_HOOK_BOTH(GS_RELEASE_HOOK, cuDevicePrimaryCtxRelease)
GS_HOOK_BOTH(GS_RELEASE_HOOK, cuDevicePrimaryCtxRelease_v2)
GS_HOOK_BOTH(GS_RESET_HOOK, cuDevicePrimaryCtxReset)
GS_HOOK_BOTH(GS_RESET_HOOK, cuDevicePrimaryCtxReset_v2)
GS_HOOK_BOTH(GS_STREAM_HOOK, cuStreamDestroy)
GS_HOOK_BOTH(GS_STREAM_HOOK, cuStreamDestroy_v2)

/* ------------------------------------------------------------------ */
/* Replacing entry points handed out by cuGetProcAddress and dlsym */

#define H(n, pa, dl) GS_HOOK(n, pa, dl)
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
	HI(cuStreamDestroy), HI(cuStreamDestroy_v2),
	HI(cuInit),
};

/* Base names of the entry points that must not escape the gate. */
static const char *const gated_bases[] = {
	"cuLaunchKernel", "cuLaunchKernelEx", "cuLaunchCooperativeKernel",
	"cuGraphLaunch",
};

/* The hook whose real entry point is @p, in @tab of @n. */
static const struct gs_hook *hook_of(const struct gs_hook *tab, size_t n,
				     void *p)
{
	for (size_t i = 0; i < n; i++)
		if (*tab[i].real && p == *tab[i].real)
			return &tab[i];
	return NULL;
}

static void *substitute(void *p, const char *name, bool procaddr)
{
	static atomic_bool warned;
	const struct gs_hook *h;

	h = hook_of(hooks, sizeof(hooks) / sizeof(hooks[0]), p);
	if (!h)
		h = hook_of(gs_mem_hooks, gs_mem_nr_hooks, p);
	if (!h)
		h = hook_of(gs_nvml_hooks, gs_nvml_nr_hooks, p);
	if (h) {
		if (procaddr)
			STAT_INC(procaddr_hooks);
		else
			STAT_INC(dlsym_hooks);
		return procaddr ? h->procaddr : h->dlsym;
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
	if (name && !strncmp(name, "nvml", 4)) {
		for (size_t i = 0; i < gs_nvml_nr_hooks; i++)
			if (!strcmp(name, gs_nvml_hooks[i].name))
				return true;
		return false;
	}
	if (!name || name[0] != 'c' || name[1] != 'u')
		return false;
	for (size_t i = 0; i < sizeof(hooks) / sizeof(hooks[0]); i++)
		if (!strcmp(name, hooks[i].name))
			return true;
	for (size_t i = 0; i < gs_mem_nr_hooks; i++)
		if (!strcmp(name, gs_mem_hooks[i].name))
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

	/* hooked_name() let through only cu* and nvml* names. */
	if (p && (name[0] == 'n' ? nvml_resolve() : resolve_real(false)))
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
