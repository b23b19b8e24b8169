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

struct gs_backend {
	const char *api;		/* "driver" or "runtime" */
	/* Filled by init: */
	char device_name[256];
	char device_uuid[64];		/* GPU-xxxxxxxx-... as nvidia-smi prints */
	int sms;			/* multiprocessors */
	int blocks;			/* grid: one full wave */
	int threads;			/* per block */

	/* Create the context, load the kernel, allocate depth events. */
	void (*init)(struct gs_backend *b, int device, int depth);
	/* Enqueue one kernel of iters iterations, then record event slot. */
	void (*launch)(struct gs_backend *b, uint32_t iters, int slot);
	/* Block until event slot has completed. */
	void (*wait)(struct gs_backend *b, int slot);
	/* Block until everything enqueued has completed. */
	void (*sync)(struct gs_backend *b);
	/* Time one kernel of iters iterations alone with events: microseconds. */
	double (*time_one)(struct gs_backend *b, uint32_t iters);
	void (*fini)(struct gs_backend *b);
	/*
	 * Tracing (--trace): trace_init allocates cap zeroed records on the
	 * device; while trace_on is set, launch gives kernel number ntraced
	 * record ntraced (up to cap); trace_fetch copies n records back.
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
	if (!b->trace_on || !b->trace_dev || b->ntraced >= b->trace_cap)
		return NULL;
	return b->trace_dev + b->ntraced++;
}

struct gs_opts {
	const char *prog;
	double kernel_us;	/* --kernel-us: solo work per kernel */
	double seconds;		/* --seconds: run time after the barrier */
	double period_us;	/* --period-us: 0 = busy */
	double start_at;	/* --start-at / GPUSCHED_START_AT, CLOCK_REALTIME s */
	double iters_per_us;	/* --iters-per-us / GPUSCHED_ITERS_PER_US; 0 = calibrate */
	double warmup_ms;	/* --warmup-ms */
	int depth;		/* --depth: busy mode, kernels in flight; 0 = auto */
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

__attribute__((noreturn, format(printf, 1, 2)))
void gs_die(const char *fmt, ...);

#ifdef __cplusplus
}
#endif

#endif /* GS_COMMON_H */
