/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Host side shared by the CUDA clients of kernels/: options, the start
 * barrier, calibration, the busy and periodic launch loops, statistics and
 * the one line of JSON each program prints at the end.
 *
 * Each client supplies a struct gs_backend (driver API or runtime API); this
 * file knows nothing of CUDA, so it builds with the plain C compiler.
 * A backend exits the process, with a message, on any CUDA error.
 */
#ifndef GS_COMMON_H
#define GS_COMMON_H

#include <stdint.h>
#include <stdio.h>

#include "fixedwork.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Most kernels a busy loop keeps queued; each slot owns one event. */
#define GS_MAX_DEPTH 1024
/* Most host threads (--threads), each with a stream of its own. */
#define GS_MAX_LANES 16
/* Most kernels in one CUDA graph (--graph). */
#define GS_MAX_GRAPH 64

/*
 * A lane is one stream with its own ring of events (depth slots); a client
 * has one lane per host thread (--threads). Lane 0 is the main thread's.
 */
struct gs_backend {
	const char *api;		/* "driver" or "runtime" */
	/* Filled by init: */
	char device_name[256];
	char device_uuid[64];		/* GPU-xxxxxxxx-... as nvidia-smi prints */
	int sms;			/* multiprocessors */
	int blocks;			/* grid: one full wave */
	int threads;			/* per block */

	/* Create the context, load the kernel, lanes streams of depth events. */
	void (*init)(struct gs_backend *b, int device, int lanes, int depth);
	/* A host thread other than the main one starts using the context. */
	void (*thread_enter)(struct gs_backend *b);
	/* Enqueue one kernel of iters iterations on lane, then record slot. */
	void (*launch)(struct gs_backend *b, int lane, uint32_t iters, int slot);
	/*
	 * Replay a CUDA graph of nk kernels of iters iterations each on lane,
	 * then record slot; NULL where the backend has no graphs.
	 */
	void (*launch_graph)(struct gs_backend *b, int lane, uint32_t iters,
			     int nk, int slot);
	/* Block until event slot of lane has completed (cuEventSynchronize). */
	void (*wait)(struct gs_backend *b, int lane, int slot);
	/* Has event slot of lane completed? (cuEventQuery; never blocks) */
	int (*query)(struct gs_backend *b, int lane, int slot);
	/* Block until everything enqueued on lane has completed. */
	void (*sync_lane)(struct gs_backend *b, int lane);
	/* Block until everything enqueued on every lane has completed. */
	void (*sync)(struct gs_backend *b);
	/* cuCtxSynchronize / cudaDeviceSynchronize. */
	void (*sync_device)(struct gs_backend *b);
	/* Time one kernel of iters iterations alone with events: microseconds. */
	double (*time_one)(struct gs_backend *b, uint32_t iters);
	void (*fini)(struct gs_backend *b);
	/*
	 * Tracing (--trace): trace_init allocates cap zeroed records on the
	 * device; while trace_on is set, each kernel launched takes the next
	 * record (up to cap; threads take them atomically); trace_fetch
	 * copies n records back.
	 */
	void (*trace_init)(struct gs_backend *b, unsigned int cap);
	void (*trace_fetch)(struct gs_backend *b, struct gs_trace_rec *r,
			    unsigned int n);
	int trace_on;
	unsigned int trace_cap, ntraced;
	struct gs_trace_rec *trace_dev;
	void *priv;
};

/* The trace record a launch passes to the kernel, or NULL. */
static inline struct gs_trace_rec *gs_trace_next(struct gs_backend *b)
{
	unsigned int i;

	if (!b->trace_on || !b->trace_dev ||
	    __atomic_load_n(&b->ntraced, __ATOMIC_RELAXED) >= b->trace_cap)
		return NULL;
	i = __atomic_fetch_add(&b->ntraced, 1u, __ATOMIC_RELAXED);
	return i < b->trace_cap ? b->trace_dev + i : NULL;
}

/* How a busy loop waits for room in its window (--wait). */
enum gs_wait {
	GS_WAIT_EVENT,		/* cuEventSynchronize on its own oldest event */
	GS_WAIT_QUERY,		/* poll cuEventQuery on it until it completes */
	GS_WAIT_DEVICE,		/* cuCtxSynchronize after every launch */
};

struct gs_opts {
	const char *prog;
	double kernel_us;	/* --kernel-us: solo work per kernel */
	double seconds;		/* --seconds: run time after the barrier */
	double period_us;	/* --period-us: 0 = busy */
	double start_at;	/* --start-at / GPUSCHED_START_AT, CLOCK_REALTIME s */
	double iters_per_us;	/* --iters-per-us / GPUSCHED_ITERS_PER_US; 0 = calibrate */
	double warmup_ms;	/* --warmup-ms */
	int depth;		/* --depth: busy mode, kernels in flight; 0 = auto */
	int wait;		/* --wait: enum gs_wait */
	int graph;		/* --graph: kernels per graph replay; 0 = none */
	int lanes;		/* --threads: host threads, a stream each */
	int mix;		/* --mix: kernel lengths cycle (gs-common.c) */
	int device;		/* --device */
	int calibrate;		/* --calibrate: calibrate, print, exit */
	const char *label;	/* --label: copied into the JSON */
	const char *trace;	/* --trace: file for the kernels' GPU times */
	const char *extra;	/* program-specific (--cubin for the driver client) */
};

/*
 * Parse argv into o (defaults already in o); extra_opt, if not NULL, names
 * one program-specific option taking a value, stored in o->extra.
 * Exits on --help (after usage) and on bad input (status 2).
 */
void gs_parse(struct gs_opts *o, int argc, char **argv, const char *extra_opt,
	      const char *extra_help);

/*
 * Run the whole program: init, calibrate or size, warm up, barrier, loop,
 * print JSON. Returns the exit status.
 */
int gs_main(struct gs_backend *b, struct gs_opts *o);

/* Monotonic clock in microseconds. */
double gs_now_us(void);

/* The program's name in messages (gs_die(), gs_parse_num()); gs_parse()
 * sets it from its options.
 */
void gs_set_prog(const char *name);

/* @s as a number within @lo..@hi, or the program exits 2 saying which
 * option (@what) was bad.
 */
double gs_parse_num(const char *what, const char *s, double lo, double hi);

/* Sort @v (@n values) and give its nearest-rank @q percentile (0 for none). */
double gs_sort_pct(double *v, size_t n, double q);

__attribute__((noreturn, format(printf, 1, 2)))
void gs_die(const char *fmt, ...);

#ifdef __cplusplus
}
#endif

#endif /* GS_COMMON_H */
