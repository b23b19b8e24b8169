// SPDX-License-Identifier: GPL-2.0
/*
 * gs-event-cost: what recording a CUDA event after each kernel costs, by
 * the event's kind (timing or not, blocking sync or not): the recording
 * thread's time in cuEventRecord() and the GPU's time per kernel over a
 * run without events. Fixed-work kernels of --kernel-us (the fatbin
 * embedded at build time, GPUSCHED_ITERS_PER_US as gs-driver-client reads
 * it) back to back on one non-blocking stream, with the work queued ahead
 * of each record, as a scheduler's events are: --ahead kernels queued or
 * running when each is launched (default 32; 0: one at a time, each
 * launched once the one before it ended, as a program that waits for each
 * kernel does). The pace is kept by a second ring of plain events,
 * recorded after the measured one and waited for, the same for every
 * kind. With kernels queued ahead, the kernels are longer than a record
 * and a launch take, so the GPU's figure is the GPU's cost, not the
 * host's pace. No gpusched: the driver alone.
 *
 *   gs-event-cost [--kernel-us N] [--kernels N] [--runs N] [--ahead N]
 *
 * One line per kind: the fastest of --runs runs (mean host time per
 * record, and its 99th percentile; GPU time per kernel over none).
 */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu-check.h"
#include "fixedwork.h"
#include "gs-common.h"
#include "fixedwork_fatbin.h"	/* generated: gs_fixedwork_fatbin[] */

/* Events recorded in turn: more than the kernels queued at once. */
#define EC_RING 64
/* The most kernels --ahead allows: the pace ring holds one event more. */
#define EC_AHEAD_MAX (EC_RING - 2)

static const struct {
	const char *name;
	unsigned int flags;
} kinds[] = {
	{ "none", 0 },
	{ "plain", CU_EVENT_DISABLE_TIMING },
	{ "plain, blocking sync", CU_EVENT_DISABLE_TIMING | CU_EVENT_BLOCKING_SYNC },
	{ "timing", CU_EVENT_DEFAULT },
	{ "timing, blocking sync", CU_EVENT_BLOCKING_SYNC },
};

struct ec {
	CUfunction fn;
	CUstream s;
	CUdeviceptr out;
	unsigned int blocks, sentinel, iters;
	int ahead;		/* --ahead */
	CUevent t0, t1;
	CUevent pace[EC_RING];	/* plain: after each kernel, waited for */
};

static void launch(struct ec *c)
{
	unsigned int it = c->iters;
	struct gs_trace_rec *tr = NULL;
	void *args[] = { &it, &c->sentinel, &c->out, &tr };

	CU_CHECK(cuLaunchKernel(c->fn, c->blocks, 1, 1, GS_FIXEDWORK_THREADS,
				1, 1, 0, c->s, args, NULL));
}

/*
 * One run of @n kernels with an event of kind @k after each (none for
 * kind 0), c->ahead kernels queued or running at each launch: the GPU's
 * time per kernel (us) in *@gpu, the host's per record (mean and 99th
 * percentile, us) in *@mean and *@p99.
 */
static void run(struct ec *c, int k, int n, double *rec, double *gpu,
		double *mean, double *p99)
{
	CUevent ev[EC_RING];
	double sum = 0;
	float ms;
	int i;

	for (i = 0; k && i < EC_RING; i++)
		CU_CHECK(cuEventCreate(&ev[i], kinds[k].flags));
	CU_CHECK(cuStreamSynchronize(c->s));
	CU_CHECK(cuEventRecord(c->t0, c->s));
	for (i = 0; i < n; i++) {
		double t;

		/* At most c->ahead of ours queued or running: kernel
		 * i - ahead - 1 has ended.
		 */
		if (i > c->ahead)
			CU_CHECK(cuEventSynchronize(c->pace[(i - c->ahead - 1) % EC_RING]));
		launch(c);
		if (k) {
			t = gs_now_us();
			CU_CHECK(cuEventRecord(ev[i % EC_RING], c->s));
			rec[i] = gs_now_us() - t;
			sum += rec[i];
		}
		CU_CHECK(cuEventRecord(c->pace[i % EC_RING], c->s));
	}
	CU_CHECK(cuEventRecord(c->t1, c->s));
	CU_CHECK(cuEventSynchronize(c->t1));
	CU_CHECK(cuEventElapsedTime(&ms, c->t0, c->t1));
	*gpu = (double)ms * 1000.0 / n;
	*mean = k ? sum / n : 0;
	*p99 = k ? gs_sort_pct(rec, (size_t)n, 0.99) : 0;
	for (i = 0; k && i < EC_RING; i++)
		CU_CHECK(cuEventDestroy(ev[i]));
}

static void usage(const char *me, int status)
{
	fprintf(status ? stderr : stdout,
		"usage: %s [--kernel-us N] [--kernels N] [--runs N] [--ahead N]\n"
		"What recording an event after each kernel costs, by kind.\n"
		"  --kernel-us N  each kernel's time (default 20)\n"
		"  --kernels N    kernels a run (%d or more, default 4000)\n"
		"  --runs N       runs of each kind, the fastest shown (default 3)\n"
		"  --ahead N      kernels queued or running at each launch (0-%d, default 32)\n"
		"GPUSCHED_ITERS_PER_US: the fixed-work kernel's iterations per us on this GPU.\n",
		me, EC_RING, EC_AHEAD_MAX);
	exit(status);
}

int main(int argc, char **argv)
{
	double kernel_us = 20, per_us, *rec, none = 0;
	int kernels = 4000, runs = 3, per_sm = 0, sms = 0, i, k;
	const char *env = getenv("GPUSCHED_ITERS_PER_US");
	struct ec c = { .sentinel = 0x5eed0001u, .ahead = 32 };
	CUcontext ctx;
	CUmodule mod;
	CUdevice dev;

	gs_set_prog("gs-event-cost");
	for (i = 1; i < argc; i++) {
		if (i + 1 < argc && !strcmp(argv[i], "--kernel-us"))
			kernel_us = gs_parse_num("--kernel-us", argv[++i], 0.01, 1e6);
		else if (i + 1 < argc && !strcmp(argv[i], "--kernels"))
			kernels = (int)gs_parse_num("--kernels", argv[++i], EC_RING, 1e7);
		else if (i + 1 < argc && !strcmp(argv[i], "--runs"))
			runs = (int)gs_parse_num("--runs", argv[++i], 1, 1000);
		else if (i + 1 < argc && !strcmp(argv[i], "--ahead"))
			c.ahead = (int)gs_parse_num("--ahead", argv[++i], 0, EC_AHEAD_MAX);
		else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
			usage(argv[0], 0);
		else
			usage(argv[0], 2);
	}
	if (!env)
		gs_die("set GPUSCHED_ITERS_PER_US (the fixed-work kernel's iterations per us on this GPU)");
	per_us = gs_parse_num("GPUSCHED_ITERS_PER_US", env, 1e-6, 1e9);
	c.iters = (unsigned int)(kernel_us * per_us);
	rec = calloc((size_t)kernels, sizeof(*rec));
	if (!rec)
		gs_die("out of memory");

	CU_CHECK(cuInit(0));
	CU_CHECK(cuDeviceGet(&dev, 0));
	CU_CHECK(cuCtxCreate(&ctx, NULL, 0, dev));
	CU_CHECK(cuModuleLoadData(&mod, gs_fixedwork_fatbin));
	CU_CHECK(cuModuleGetFunction(&c.fn, mod, GS_FIXEDWORK_NAME));
	CU_CHECK(cuOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, c.fn,
			GS_FIXEDWORK_THREADS, 0));
	CU_CHECK(cuDeviceGetAttribute(&sms,
			CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
	if (per_sm < 1)
		gs_die("the fixed-work kernel cannot run on this device");
	c.blocks = (unsigned int)(per_sm * sms);
	CU_CHECK(cuStreamCreate(&c.s, CU_STREAM_NON_BLOCKING));
	CU_CHECK(cuMemAlloc(&c.out, sizeof(unsigned int)));
	CU_CHECK(cuEventCreate(&c.t0, CU_EVENT_DEFAULT));
	CU_CHECK(cuEventCreate(&c.t1, CU_EVENT_DEFAULT));
	for (i = 0; i < EC_RING; i++)
		CU_CHECK(cuEventCreate(&c.pace[i], CU_EVENT_DISABLE_TIMING));

	printf("%.0f us kernels, %d a run, %d queued or running at each launch, the fastest of %d runs\n",
	       kernel_us, kernels, c.ahead, runs);
	printf("%-22s %14s %14s %18s\n", "event after each", "record us",
	       "record p99 us", "GPU us per kernel");
	for (k = 0; k < (int)(sizeof(kinds) / sizeof(kinds[0])); k++) {
		double gpu = 0, mean = 0, p99 = 0;

		for (i = 0; i < runs; i++) {
			double g, m, p;

			run(&c, k, kernels, rec, &g, &m, &p);
			if (!i || g < gpu) {
				gpu = g;
				mean = m;
				p99 = p;
			}
		}
		if (!k)
			none = gpu;
		printf("%-22s %14.2f %14.2f %11.2f (%+.2f)\n", kinds[k].name,
		       mean, p99, gpu, gpu - none);
	}
	free(rec);
	return 0;
}
