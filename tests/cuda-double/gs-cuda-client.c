// SPDX-License-Identifier: GPL-2.0
/*
 * A driver-API test client for the CUDA test double: launches fixed-work
 * "kernels" for a fixed time and reports the work completed in that time.
 * It reaches the launch entry points the ways real programs do: by symbol,
 * through cuGetProcAddress, through dlsym on libcuda, or as the CUDA
 * runtime does (dlsym for cuGetProcAddress, then cuGetProcAddress).
 *
 * Output: one line of key=value pairs on stdout (a forked child prints its
 * own line, starting with "child"). With --report FILE it prints the
 * double's shared counters instead. SIGUSR1 ends the run early, as if its
 * time were up, so that a test can stop a client at a moment it chooses.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cuda_abi.h"
#include "cuda_double.h"

/* The driver API, declared as cuda.h does (linked against libcuda.so.1). */
CUresult cuInit(unsigned int);
CUresult cuDeviceGet(CUdevice *, int);
CUresult cuDevicePrimaryCtxRetain(CUcontext *, CUdevice);
CUresult cuCtxSetCurrent(CUcontext);
CUresult cuCtxSynchronize(void);
CUresult cuStreamCreate(CUstream *, unsigned int);
CUresult cuStreamDestroy_v2(CUstream);
CUresult cuStreamSynchronize(CUstream);
CUresult cuEventCreate(CUevent *, unsigned int);
CUresult cuEventDestroy_v2(CUevent);
CUresult cuEventRecord(CUevent, CUstream);
CUresult cuEventQuery(CUevent);
CUresult cuStreamBeginCapture_v2(CUstream, int);
CUresult cuStreamEndCapture(CUstream, void **);
CUresult cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode *);
CUresult cuMemAlloc_v2(uint64_t *, size_t);
CUresult cuMemFree_v2(uint64_t);
CUresult cuMemcpyHtoDAsync_v2(uint64_t, const void *, size_t, CUstream);
CUresult cuMemcpyDtoHAsync_v2(void *, uint64_t, size_t, CUstream);
CUresult cuGetErrorString(CUresult, const char **);
CUresult cuGetProcAddress_v2(const char *, void **, int, cuuint64_t,
			     CUdriverProcAddressQueryResult *);
CUresult cuLaunchKernel(CUfunction, unsigned int, unsigned int, unsigned int,
			unsigned int, unsigned int, unsigned int, unsigned int,
			CUstream, void **, void **);
CUresult cuLaunchKernel_ptsz(CUfunction, unsigned int, unsigned int,
			     unsigned int, unsigned int, unsigned int,
			     unsigned int, unsigned int, CUstream, void **,
			     void **);
CUresult cuLaunchKernelEx(const CUlaunchConfig *, CUfunction, void **, void **);
CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *, CUfunction, void **,
			       void **);
CUresult cuLaunchCooperativeKernel(CUfunction, unsigned int, unsigned int,
				   unsigned int, unsigned int, unsigned int,
				   unsigned int, unsigned int, CUstream, void **);
CUresult cuLaunchCooperativeKernel_ptsz(CUfunction, unsigned int, unsigned int,
					unsigned int, unsigned int,
					unsigned int, unsigned int,
					unsigned int, CUstream, void **);
CUresult cuGraphLaunch(CUgraphExec, CUstream);
CUresult cuGraphLaunch_ptsz(CUgraphExec, CUstream);

typedef CUresult (*kernel_fn)(CUfunction, unsigned int, unsigned int,
			      unsigned int, unsigned int, unsigned int,
			      unsigned int, unsigned int, CUstream, void **,
			      void **);
typedef CUresult (*kernel_ex_fn)(const CUlaunchConfig *, CUfunction, void **,
				 void **);
typedef CUresult (*coop_fn)(CUfunction, unsigned int, unsigned int,
			    unsigned int, unsigned int, unsigned int,
			    unsigned int, unsigned int, CUstream, void **);
typedef CUresult (*graph_fn)(CUgraphExec, CUstream);
typedef CUresult (*gpa_fn)(const char *, void **, int, cuuint64_t,
			   CUdriverProcAddressQueryResult *);

enum route { R_SYMBOL, R_PROCADDR, R_DLSYM, R_RUNTIME, R_MIXED };
enum api { A_KERNEL, A_EX, A_COOP, A_GRAPH, A_MIXED };

static struct {
	enum route route;
	enum api api;
	bool ptsz;
	unsigned int kernel_us;
	unsigned int then_kernel_us;	/* from then_at on, kernels of this */
	double then_at;
	unsigned int long_us;		/* every long_every-th kernel lasts this */
	unsigned int long_every;
	double seconds;
	unsigned int threads;
	double fork_at;
	double idle_after, idle_for;
	unsigned int period_us;	/* one launch per period, then wait for it */
	unsigned int burst;	/* ... or so many, burst_gap_us apart (CPU) */
	unsigned int burst_gap_us;
	unsigned int burst_pause_us;	/* the gap after the first half */
	bool burst_sync;	/* ... after waiting for the first half's work */
	bool memcpy_too;
	bool capture;
	bool capture_global;	/* --capture-global */
	int device;
	uint64_t start_at;	/* CLOCK_REALTIME ns; 0: now */
	bool keep_going;	/* on a failed launch, wait a kernel's time */
	unsigned int stream_churn;	/* a new stream after so many launches */
} opt = {
	.route = R_SYMBOL, .api = A_KERNEL, .kernel_us = 1000, .seconds = 2,
	.threads = 1, .fork_at = -1, .idle_after = -1, .then_at = -1,
};

/* Entry points per route and api; [ptsz]. */
static kernel_fn k_fn[4][2];
static kernel_ex_fn ex_fn[4][2];
static coop_fn coop_fns[4][2];
static graph_fn graph_fns[4][2];
/* cuInit per route (mixed: by symbol), so that each lookup of it meets the
 * library's hook.
 */
static CUresult (*init_fns[4])(unsigned int);

static CUcontext ctx;
static gsd_work_us_fn work_us;
static gsd_mps_priority_fn mps_priority;
static gsd_launched_over_fn launched_over;
static gsd_spin_syncs_fn spin_syncs;
static gsd_blocking_records_fn blocking_records;
static gsd_late_gaps_fn late_gaps;
static gsd_dead_stream_uses_fn dead_stream_uses;
static gsd_queued_max_fn queued_max;
static gsd_others_queued_us_fn others_queued_us;
static gsd_waited_launches_fn waited_launches;
static gsd_clock_before_launch_fn clock_before_launch;
static gsd_lib_ctx_syncs_fn lib_ctx_syncs;
static atomic_ullong launches, errors;
static atomic_int first_error;
static uint64_t t_start, t_end;
static volatile sig_atomic_t stop_now;	/* SIGUSR1 */
static double cpu_ns_per_launch;
/* --then-at: the share of the GPU from then on; < 0: not measured */
static double then_share = -1;
/* ... and the most kernels queued or running at once from then until four
 * fifths of the rest of the run
 */
static uint64_t then_queued_max;
/* --burst: requests in which a launch after the first found the request's
 * work done (its event after the launch before complete): the host was
 * slower than the GPU there, a stall of the host but with --burst-sync
 */
static atomic_ullong stalled_requests;
/* ... and which requests (their index from 0, the first thread's) */
#define MAX_STALLS 4096
static unsigned int stalled_at[MAX_STALLS];
static unsigned int nr_stalled_at;
/* --period-us: tick to kernel done, in the first thread */
#define MAX_LAT 100000
static uint64_t lat_us[MAX_LAT];
static unsigned int nr_lat;
static uint64_t lat_max, lat_max_tick;	/* the slowest, and when it was due */
/* ... and the other processes' work queued or running at each request's
 * launch (the double's gs_double_others_queued_us())
 */
static uint64_t ahead_us[MAX_LAT];
static unsigned int nr_ahead;

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Sleep until @clock reads @ns, through signals. */
static void sleep_until(clockid_t clock, uint64_t ns)
{
	struct timespec ts = {
		.tv_sec = (time_t)(ns / 1000000000ull),
		.tv_nsec = (long)(ns % 1000000000ull),
	};

	while (clock_nanosleep(clock, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static void die(const char *what, CUresult r)
{
	const char *s = NULL;

	cuGetErrorString(r, &s);
	fprintf(stderr, "gs-cuda-client: %s: error %d (%s)\n", what, r, s ? s : "?");
	exit(2);
}

#define CK(call) do { CUresult r_ = (call); if (r_) die(#call, r_); } while (0)

static void *sym(void *h, const char *name)
{
	void *p = dlsym(h, name);

	if (!p) {
		fprintf(stderr, "gs-cuda-client: dlsym %s: %s\n", name, dlerror());
		exit(2);
	}
	return p;
}

static void *by_procaddr(gpa_fn gpa, const char *name, bool ptsz)
{
	CUdriverProcAddressQueryResult st;
	void *p = NULL;

	CK(gpa(name, &p, 12000, ptsz ? CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM :
		       CU_GET_PROC_ADDRESS_DEFAULT, &st));
	if (!p || st != CU_GET_PROC_ADDRESS_SUCCESS) {
		fprintf(stderr, "gs-cuda-client: cuGetProcAddress(%s) found nothing\n", name);
		exit(2);
	}
	return p;
}

static void resolve(void)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	gpa_fn gpa_rt;

	if (!h) {
		fprintf(stderr, "gs-cuda-client: libcuda.so.1 is not loaded: %s\n", dlerror());
		exit(2);
	}
	k_fn[R_SYMBOL][0] = cuLaunchKernel;
	k_fn[R_SYMBOL][1] = cuLaunchKernel_ptsz;
	ex_fn[R_SYMBOL][0] = cuLaunchKernelEx;
	ex_fn[R_SYMBOL][1] = cuLaunchKernelEx_ptsz;
	coop_fns[R_SYMBOL][0] = cuLaunchCooperativeKernel;
	coop_fns[R_SYMBOL][1] = cuLaunchCooperativeKernel_ptsz;
	graph_fns[R_SYMBOL][0] = cuGraphLaunch;
	graph_fns[R_SYMBOL][1] = cuGraphLaunch_ptsz;
	init_fns[R_SYMBOL] = cuInit;

	k_fn[R_DLSYM][0] = sym(h, "cuLaunchKernel");
	k_fn[R_DLSYM][1] = sym(h, "cuLaunchKernel_ptsz");
	ex_fn[R_DLSYM][0] = sym(h, "cuLaunchKernelEx");
	ex_fn[R_DLSYM][1] = sym(h, "cuLaunchKernelEx_ptsz");
	coop_fns[R_DLSYM][0] = sym(h, "cuLaunchCooperativeKernel");
	coop_fns[R_DLSYM][1] = sym(h, "cuLaunchCooperativeKernel_ptsz");
	graph_fns[R_DLSYM][0] = sym(h, "cuGraphLaunch");
	graph_fns[R_DLSYM][1] = sym(h, "cuGraphLaunch_ptsz");
	init_fns[R_DLSYM] = sym(h, "cuInit");

	/* The runtime's way: cuGetProcAddress from dlsym, then everything
	 * through it, cuGetProcAddress itself included.
	 */
	gpa_rt = (gpa_fn)sym(h, "cuGetProcAddress_v2");
	gpa_rt = (gpa_fn)by_procaddr(gpa_rt, "cuGetProcAddress", false);
	init_fns[R_PROCADDR] = by_procaddr(cuGetProcAddress_v2, "cuInit", false);
	init_fns[R_RUNTIME] = by_procaddr(gpa_rt, "cuInit", false);

	for (int p = 0; p < 2; p++) {
		k_fn[R_PROCADDR][p] = by_procaddr(cuGetProcAddress_v2, "cuLaunchKernel", p);
		ex_fn[R_PROCADDR][p] = by_procaddr(cuGetProcAddress_v2, "cuLaunchKernelEx", p);
		coop_fns[R_PROCADDR][p] = by_procaddr(cuGetProcAddress_v2, "cuLaunchCooperativeKernel", p);
		graph_fns[R_PROCADDR][p] = by_procaddr(cuGetProcAddress_v2, "cuGraphLaunch", p);
		k_fn[R_RUNTIME][p] = by_procaddr(gpa_rt, "cuLaunchKernel", p);
		ex_fn[R_RUNTIME][p] = by_procaddr(gpa_rt, "cuLaunchKernelEx", p);
		coop_fns[R_RUNTIME][p] = by_procaddr(gpa_rt, "cuLaunchCooperativeKernel", p);
		graph_fns[R_RUNTIME][p] = by_procaddr(gpa_rt, "cuGraphLaunch", p);
	}
	work_us = (gsd_work_us_fn)sym(h, GSD_WORK_US_SYM);
	mps_priority = (gsd_mps_priority_fn)sym(h, GSD_MPS_PRIORITY_SYM);
	launched_over = (gsd_launched_over_fn)sym(h, GSD_LAUNCHED_OVER_SYM);
	spin_syncs = (gsd_spin_syncs_fn)sym(h, GSD_SPIN_SYNCS_SYM);
	blocking_records = (gsd_blocking_records_fn)sym(h, GSD_BLOCKING_RECORDS_SYM);
	late_gaps = (gsd_late_gaps_fn)sym(h, GSD_LATE_GAPS_SYM);
	dead_stream_uses = (gsd_dead_stream_uses_fn)sym(h, GSD_DEAD_STREAM_USES_SYM);
	queued_max = (gsd_queued_max_fn)sym(h, GSD_QUEUED_MAX_SYM);
	others_queued_us = (gsd_others_queued_us_fn)sym(h, GSD_OTHERS_QUEUED_US_SYM);
	waited_launches = (gsd_waited_launches_fn)sym(h, GSD_WAITED_LAUNCHES_SYM);
	clock_before_launch = (gsd_clock_before_launch_fn)sym(h, GSD_CLOCK_BEFORE_LAUNCH_SYM);
	lib_ctx_syncs = (gsd_lib_ctx_syncs_fn)sym(h, GSD_LIB_CTX_SYNCS_SYM);
}

/*
 * The length of launch @n, launched now: --kernel-us, or --then-kernel-us,
 * or --long-us for every --long-every-th.
 */
static unsigned int kernel_now(unsigned int n)
{
	if (opt.long_every && n % opt.long_every == opt.long_every - 1)
		return opt.long_us;
	if (opt.then_at >= 0 &&
	    mono_ns() >= t_start + (uint64_t)(opt.then_at * 1e9))
		return opt.then_kernel_us;
	return opt.kernel_us;
}

static CUresult launch_one(unsigned int n, CUstream s)
{
	int route = opt.route == R_MIXED ? (int)(n % 4) : (int)opt.route;
	int api = opt.api == A_MIXED ? (int)((n / 4) % 4) : (int)opt.api;
	CUfunction f = (CUfunction)(uintptr_t)kernel_now(n);
	int p = opt.ptsz;

	switch (api) {
	case A_EX: {
		CUlaunchConfig cfg = {
			.gridDimX = 1, .gridDimY = 1, .gridDimZ = 1,
			.blockDimX = 32, .blockDimY = 1, .blockDimZ = 1,
			.hStream = s,
		};

		return ex_fn[route][p](&cfg, f, NULL, NULL);
	}
	case A_COOP:
		return coop_fns[route][p](f, 1, 1, 1, 32, 1, 1, 0, s, NULL);
	case A_GRAPH:
		return graph_fns[route][p]((CUgraphExec)f, s);
	default:
		return k_fn[route][p](f, 1, 1, 1, 32, 1, 1, 0, s, NULL, NULL);
	}
}

static void note_error(CUresult r)
{
	int zero = 0;

	atomic_fetch_add(&errors, 1);
	atomic_compare_exchange_strong(&first_error, &zero, r);
}

static void *run_thread(void *arg)
{
	uintptr_t id = (uintptr_t)arg;
	bool idled = false;
	uint64_t buf = 0, dev = 0, tick = 0;
	CUstream s = NULL;
	CUevent bev = NULL;	/* --burst: after the request's last launch */
	unsigned int n = 0, req = 0;
	bool churned = false;	/* the last launch's stream destroyed */

	struct rusage ru0, ru1;

	getrusage(RUSAGE_THREAD, &ru0);
	CK(cuCtxSetCurrent(ctx));
	if (opt.threads > 1 || opt.capture || opt.stream_churn)
		CK(cuStreamCreate(&s, 0));
	if (opt.memcpy_too)
		CK(cuMemAlloc_v2(&dev, sizeof(buf)));
	if (opt.period_us && opt.burst > 1)
		CK(cuEventCreate(&bev, CU_EVENT_DISABLE_TIMING));
	/* At least one launch, however slow the host (an emulated VM). */
	for (bool first = true; first || (!stop_now && mono_ns() < t_end); first = false) {
		CUresult r;

		if (!idled && opt.idle_after >= 0 &&
		    mono_ns() >= t_start + (uint64_t)(opt.idle_after * 1e9)) {
			struct timespec ts = {
				.tv_sec = (time_t)opt.idle_for,
				.tv_nsec = (long)((opt.idle_for - (time_t)opt.idle_for) * 1e9),
			};

			/* Finish our work, then stay away from the GPU. */
			CK(cuCtxSynchronize());
			nanosleep(&ts, NULL);
			idled = true;
		}
		if (opt.capture && id == 0 && n % 16 == 0) {
			/* A launch into a capturing stream submits nothing. */
			CK(cuStreamBeginCapture_v2(s, opt.capture_global ?
						   CU_STREAM_CAPTURE_MODE_GLOBAL :
						   CU_STREAM_CAPTURE_MODE_RELAXED));
			r = launch_one(n, s);
			/* Global: open for a kernel's time, so that the other
			 * threads' launches (and what the library does for
			 * them) meet it; a query or wait of theirs in global
			 * mode invalidates it, and this fails.
			 */
			if (opt.capture_global)
				sleep_until(CLOCK_MONOTONIC,
					    mono_ns() + opt.kernel_us * 1000ull);
			CK(cuStreamEndCapture(s, NULL));
			if (r)
				note_error(r);
		}
		if (opt.period_us) {
			/* A probe: launch on the tick, wait for the kernel. */
			tick = t_start + (uint64_t)req++ * opt.period_us * 1000ull;
			if (n && tick >= t_end)
				break;
			sleep_until(CLOCK_MONOTONIC, tick);
			if (id == 0 && nr_ahead < MAX_LAT)
				ahead_us[nr_ahead++] = others_queued_us();
		}
		r = launch_one(n++, s);
		/* Its stream destroyed with the kernel still queued, and a
		 * new one made, as a program that makes a stream per task.
		 */
		churned = s && opt.stream_churn && n % opt.stream_churn == 0;
		if (churned) {
			CK(cuStreamDestroy_v2(s));
			CK(cuStreamCreate(&s, 0));
		}
		/* A request of several kernels, with the CPU's work between
		 * them (an inference's layers): counted as one launch.
		 */
		for (unsigned int b = 1, stalled = 0; bev && !r && b < opt.burst; b++) {
			unsigned int gap = b == opt.burst / 2 && opt.burst_pause_us ?
					   opt.burst_pause_us : opt.burst_gap_us;
			bool sync = b == opt.burst / 2 && opt.burst_sync;

			CK(cuEventRecord(bev, s));
			/* A result read back mid-request. */
			if (sync)
				CK(s ? cuStreamSynchronize(s) : cuCtxSynchronize());

			sleep_until(CLOCK_MONOTONIC, mono_ns() + gap * 1000ull);
			if (!sync && !stalled && cuEventQuery(bev) == CUDA_SUCCESS) {
				stalled = 1;
				atomic_fetch_add(&stalled_requests, 1);
				if (id == 0 && nr_stalled_at < MAX_STALLS)
					stalled_at[nr_stalled_at++] = req - 1;
			}
			r = launch_one(n++, s);
		}
		if (opt.period_us && !r) {
			/* The kernel's stream, unless that one is gone: then
			 * the context's work.
			 */
			CK(s && !churned ? cuStreamSynchronize(s) : cuCtxSynchronize());
			if (id == 0 && nr_lat < MAX_LAT) {
				uint64_t us = (mono_ns() - tick) / 1000;

				if (us > lat_max) {
					lat_max = us;
					lat_max_tick = tick;
				}
				lat_us[nr_lat++] = us;
			}
		}
		if (r) {
			note_error(r);
			if (opt.keep_going) {
				/* As a program that retries later would. */
				struct timespec ts = {
					.tv_sec = opt.kernel_us / 1000000,
					.tv_nsec = (long)(opt.kernel_us % 1000000) * 1000,
				};

				nanosleep(&ts, NULL);
			} else if (atomic_load(&errors) > 1000) {
				break;
			}
			continue;
		}
		atomic_fetch_add(&launches, 1);
		if (opt.memcpy_too && n % 8 == 0) {
			CK(cuMemcpyHtoDAsync_v2(dev, &buf, sizeof(buf), s));
			CK(cuMemcpyDtoHAsync_v2(&buf, dev, sizeof(buf), s));
		}
	}
	/* CPU time of the first thread per launch: what a launch costs,
	 * waits excluded (they block).
	 */
	getrusage(RUSAGE_THREAD, &ru1);
	if (id == 0 && n)
		cpu_ns_per_launch = ((ru1.ru_utime.tv_sec - ru0.ru_utime.tv_sec +
				      ru1.ru_stime.tv_sec - ru0.ru_stime.tv_sec) * 1e9 +
				     (ru1.ru_utime.tv_usec - ru0.ru_utime.tv_usec +
				      ru1.ru_stime.tv_usec - ru0.ru_stime.tv_usec) * 1e3) / n;
	if (s) {
		/* Another thread may be capturing in global mode: as such a
		 * program must, wait in relaxed mode.
		 */
		CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;

		CK(cuThreadExchangeStreamCaptureMode(&mode));
		CK(cuStreamSynchronize(s));
		CK(cuThreadExchangeStreamCaptureMode(&mode));
		CK(cuStreamDestroy_v2(s));
	}
	if (dev)
		CK(cuMemFree_v2(dev));
	if (bev)
		CK(cuEventDestroy_v2(bev));
	return NULL;
}

/* Run the launch loop in every thread until t_end; returns work in us. */
static uint64_t run(uint64_t *wall_ns)
{
	pthread_t t[64];
	uint64_t w0, w1, w_then = 0, t_then = 0;

	w0 = work_us();
	t_start = mono_ns();
	t_end = t_start + (uint64_t)(opt.seconds * 1e9);
	for (uintptr_t i = 0; i < opt.threads; i++)
		if (pthread_create(&t[i], NULL, run_thread, (void *)i)) {
			perror("pthread_create");
			exit(2);
		}
	if (opt.fork_at >= 0) {
		struct timespec ts = {
			.tv_sec = (time_t)opt.fork_at,
			.tv_nsec = (long)((opt.fork_at - (time_t)opt.fork_at) * 1e9),
		};
		pid_t pid;

		nanosleep(&ts, NULL);
		/* Fork while the other threads launch; the child launches
		 * on its own (its library must open its own token).
		 */
		pid = fork();
		if (pid == 0) {
			uint64_t c0;

			opt.threads = 1;
			opt.fork_at = -1;
			atomic_store(&launches, 0);
			atomic_store(&errors, 0);
			CK(cuCtxSetCurrent(ctx));
			c0 = work_us();
			t_start = mono_ns();
			t_end = t_start + (uint64_t)(0.3 * 1e9);
			run_thread((void *)0);
			CK(cuCtxSynchronize());
			printf("child pid=%d launches=%llu errors=%llu work_us=%llu\n",
			       (int)getpid(), (unsigned long long)atomic_load(&launches),
			       (unsigned long long)atomic_load(&errors),
			       (unsigned long long)(work_us() - c0));
			fflush(stdout);
			exit(atomic_load(&errors) ? 1 : 0);
		}
		if (pid < 0) {
			perror("fork");
			exit(2);
		}
		for (unsigned int i = 0; i < opt.threads; i++)
			pthread_join(t[i], NULL);
		w1 = work_us();
		*wall_ns = mono_ns() - t_start;
		{
			int st;

			if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
				fprintf(stderr, "gs-cuda-client: forked child failed\n");
				atomic_fetch_add(&errors, 1);
			}
		}
		return w1 - w0;
	}
	if (opt.then_at >= 0 && opt.then_at < opt.seconds) {
		sleep_until(CLOCK_MONOTONIC,
			    t_start + (uint64_t)(opt.then_at * 1e9));
		w_then = work_us();
		queued_max();
		t_then = mono_ns();
		/* Up to four fifths of the rest: the other processes of a
		 * test, started for as long, may be gone by the end.
		 */
		sleep_until(CLOCK_MONOTONIC, t_then + (t_end - t_then) * 4 / 5);
		then_queued_max = queued_max();
	}
	for (unsigned int i = 0; i < opt.threads; i++)
		pthread_join(t[i], NULL);
	/* Work completed inside the window, not what drains after it. */
	w1 = work_us();
	*wall_ns = mono_ns() - t_start;
	if (t_then)
		then_share = (double)(w1 - w_then) * 1000.0 /
			     (double)(t_start + *wall_ns - t_then);
	return w1 - w0;
}

static int report(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct gsd_shm *s;

	if (fd < 0) {
		fprintf(stderr, "gs-cuda-client: %s: %s\n", path, strerror(errno));
		return 2;
	}
	s = mmap(NULL, sizeof(*s), PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (s == MAP_FAILED || s->magic != GSD_MAGIC) {
		fprintf(stderr, "gs-cuda-client: %s is not the double's file\n", path);
		return 2;
	}
	for (uint32_t i = 0; i < s->nr_gpus && i < GSD_MAX_GPUS; i++) {
		uint64_t used = gsd_mem_used(&s->gpu[i]);

		printf("gpu=%u violations=%llu kernels=%llu busy_us=%llu overlap_max_us=%llu mem_used=%llu mem_refused=%llu\n",
		       i, (unsigned long long)s->gpu[i].violations,
		       (unsigned long long)s->gpu[i].kernels,
		       (unsigned long long)s->gpu[i].busy_us,
		       (unsigned long long)s->gpu[i].overlap_max_us,
		       (unsigned long long)used,
		       (unsigned long long)s->gpu[i].mem_refused);
	}
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void usage(FILE *f)
{
	fprintf(f,
"Usage: gs-cuda-client [OPTION]...   (needs the CUDA test double as libcuda.so.1)\n"
"  --route symbol|procaddr|dlsym|runtime|mixed   how cuInit and launches reach\n"
"                         the driver\n"
"  --api kernel|ex|coop|graph|mixed               which launch entry point\n"
"  --ptsz                 per-thread default stream flavours\n"
"  --kernel-us N          duration of one kernel (default 1000)\n"
"  --then-kernel-us N --then-at S   kernels of N us from S seconds on\n"
"  --long-us N --long-every K   every K-th kernel lasts N us (lengths that vary)\n"
"  --seconds S            run time (default 2)\n"
"  --threads N            launching threads, each with a stream (default 1)\n"
"  --stream-churn N       each thread launches on a stream of its own, destroys\n"
"                         it after every N-th launch, its kernel still queued,\n"
"                         and makes another (--period-us then waits for that\n"
"                         launch on the context)\n"
"  --fork-at S            fork after S seconds; the child launches 0.3 s\n"
"  --idle-after S --idle-for S   stop launching for a while\n"
"  --period-us N          one launch every N us, each waited for (a probe)\n"
"  --burst N              with --period-us: N launches a request (default 1)\n"
"  --burst-gap-us N       the CPU's time between them (default 0)\n"
"  --burst-pause-us N     ... but this long after the first half\n"
"  --burst-sync           ... and wait for the first half's kernels first\n"
"  --memcpy               also queue async copies\n"
"  --capture              also launch into a capturing stream (relaxed mode)\n"
"  --capture-global       ... in global mode, kept open a kernel's time\n"
"  --device N             CUDA ordinal (default 0)\n"
"  --start-at NS          start at this CLOCK_REALTIME time (or $GS_START_AT)\n"
"  --keep-going           after a failed launch, wait one kernel's time and go on\n"
"                         (default: stop after 1000 failures)\n"
"  --report FILE          print the double's shared counters and exit\n");
}

static void on_usr1(int sig)
{
	(void)sig;
	stop_now = 1;
}

static int pick(const char *s, const char *const *words, int n)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(s, words[i]))
			return i;
	fprintf(stderr, "gs-cuda-client: unknown value \"%s\"\n", s);
	exit(2);
}

int main(int argc, char **argv)
{
	static const char *const routes[] = { "symbol", "procaddr", "dlsym", "runtime", "mixed" };
	static const char *const apis[] = { "kernel", "ex", "coop", "graph", "mixed" };
	static const struct option opts[] = {
		{ "route", required_argument, NULL, 'r' },
		{ "api", required_argument, NULL, 'a' },
		{ "ptsz", no_argument, NULL, 'p' },
		{ "kernel-us", required_argument, NULL, 'k' },
		{ "then-kernel-us", required_argument, NULL, 'n' },
		{ "then-at", required_argument, NULL, 'N' },
		{ "long-us", required_argument, NULL, 'L' },
		{ "long-every", required_argument, NULL, 'E' },
		{ "seconds", required_argument, NULL, 's' },
		{ "threads", required_argument, NULL, 't' },
		{ "fork-at", required_argument, NULL, 'f' },
		{ "idle-after", required_argument, NULL, 'i' },
		{ "idle-for", required_argument, NULL, 'I' },
		{ "period-us", required_argument, NULL, 'P' },
		{ "burst", required_argument, NULL, 'B' },
		{ "burst-gap-us", required_argument, NULL, 'G' },
		{ "burst-pause-us", required_argument, NULL, 'Q' },
		{ "burst-sync", no_argument, NULL, 'Y' },
		{ "memcpy", no_argument, NULL, 'm' },
		{ "capture", no_argument, NULL, 'C' },
		{ "capture-global", no_argument, NULL, 'g' },
		{ "device", required_argument, NULL, 'd' },
		{ "start-at", required_argument, NULL, 'S' },
		{ "report", required_argument, NULL, 'R' },
		{ "keep-going", no_argument, NULL, 'K' },
		{ "stream-churn", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *env = getenv("GS_START_AT");
	uint64_t work, wall;
	CUdevice dev;
	int c;

	if (env)
		opt.start_at = strtoull(env, NULL, 10);
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'r':
			opt.route = pick(optarg, routes, 5);
			break;
		case 'a':
			opt.api = pick(optarg, apis, 5);
			break;
		case 'p':
			opt.ptsz = true;
			break;
		case 'k':
			opt.kernel_us = (unsigned int)atoi(optarg);
			break;
		case 'n':
			opt.then_kernel_us = (unsigned int)atoi(optarg);
			break;
		case 'N':
			opt.then_at = atof(optarg);
			break;
		case 'L':
			opt.long_us = (unsigned int)atoi(optarg);
			break;
		case 'E':
			opt.long_every = (unsigned int)atoi(optarg);
			break;
		case 's':
			opt.seconds = atof(optarg);
			break;
		case 't':
			opt.threads = (unsigned int)atoi(optarg);
			break;
		case 'f':
			opt.fork_at = atof(optarg);
			break;
		case 'i':
			opt.idle_after = atof(optarg);
			break;
		case 'I':
			opt.idle_for = atof(optarg);
			break;
		case 'P':
			opt.period_us = (unsigned int)strtoul(optarg, NULL, 10);
			break;
		case 'B':
			opt.burst = (unsigned int)strtoul(optarg, NULL, 10);
			break;
		case 'G':
			opt.burst_gap_us = (unsigned int)strtoul(optarg, NULL, 10);
			break;
		case 'Y':
			opt.burst_sync = true;
			break;
		case 'Q':
			opt.burst_pause_us = (unsigned int)strtoul(optarg, NULL, 10);
			break;
		case 'm':
			opt.memcpy_too = true;
			break;
		case 'C':
			opt.capture = true;
			break;
		case 'g':
			opt.capture = opt.capture_global = true;
			break;
		case 'd':
			opt.device = atoi(optarg);
			break;
		case 'S':
			opt.start_at = strtoull(optarg, NULL, 10);
			break;
		case 'R':
			return report(optarg);
		case 'K':
			opt.keep_going = true;
			break;
		case 'c':
			opt.stream_churn = (unsigned int)atoi(optarg);
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (!opt.kernel_us || (opt.then_at >= 0 && !opt.then_kernel_us) ||
	    !opt.long_every != !opt.long_us ||
	    (opt.burst > 1 && !opt.period_us) ||
	    opt.threads < 1 || opt.threads > 64 || opt.seconds <= 0) {
		usage(stderr);
		return 2;
	}

	signal(SIGUSR1, on_usr1);
	/* Entry points first, as the runtime does: cuInit is one of them. */
	resolve();
	CK(init_fns[opt.route == R_MIXED ? R_SYMBOL : opt.route](0));
	CK(cuDeviceGet(&dev, opt.device));
	CK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CK(cuCtxSetCurrent(ctx));
	if (opt.start_at)
		sleep_until(CLOCK_REALTIME, opt.start_at);
	work = run(&wall);
	CK(cuCtxSynchronize());
	printf("pid=%d launches=%llu errors=%llu first_error=%d work_us=%llu wall_us=%llu share=%.4f cpu_ns_per_launch=%.0f mps_client_priority=%s launched_over=%llu spin_syncs=%llu blocking_records=%llu late_gaps=%llu dead_stream_uses=%llu\n",
	       (int)getpid(), (unsigned long long)atomic_load(&launches),
	       (unsigned long long)atomic_load(&errors), atomic_load(&first_error),
	       (unsigned long long)work, (unsigned long long)(wall / 1000),
	       (double)work * 1000.0 / (double)wall, cpu_ns_per_launch,
	       mps_priority(), (unsigned long long)launched_over(),
	       (unsigned long long)spin_syncs(),
	       (unsigned long long)blocking_records(),
	       (unsigned long long)late_gaps(),
	       (unsigned long long)dead_stream_uses());
	printf("waited_launches=%llu clock_before_launch=%llu lib_ctx_syncs=%llu\n",
	       (unsigned long long)waited_launches(),
	       (unsigned long long)clock_before_launch(),
	       (unsigned long long)lib_ctx_syncs());
	if (opt.period_us && opt.burst > 1) {
		printf("stalled_requests=%llu stalled_at=",
		       (unsigned long long)atomic_load(&stalled_requests));
		for (unsigned int i = 0; i < nr_stalled_at; i++)
			printf("%s%u", i ? "," : "", stalled_at[i]);
		printf("%s\n", nr_stalled_at ? "" : "-");
	}
	if (then_share >= 0)
		printf("then_share=%.4f then_queued_max=%llu\n", then_share,
		       (unsigned long long)then_queued_max);
	if (nr_lat) {
		qsort(lat_us, nr_lat, sizeof(lat_us[0]), cmp_u64);
		printf("latency_p50_us=%llu latency_p99_us=%llu latency_max_us=%llu latency_max_at_s=%.3f\n",
		       (unsigned long long)lat_us[nr_lat / 2],
		       (unsigned long long)lat_us[nr_lat * 99 / 100],
		       (unsigned long long)lat_us[nr_lat - 1],
		       (double)(lat_max_tick - t_start) / 1e9);
	}
	if (nr_ahead) {
		qsort(ahead_us, nr_ahead, sizeof(ahead_us[0]), cmp_u64);
		printf("ahead_p50_us=%llu ahead_p90_us=%llu ahead_max_us=%llu\n",
		       (unsigned long long)ahead_us[nr_ahead / 2],
		       (unsigned long long)ahead_us[nr_ahead * 9 / 10],
		       (unsigned long long)ahead_us[nr_ahead - 1]);
	}
	fflush(stdout);
	return atomic_load(&errors) ? 1 : 0;
}
