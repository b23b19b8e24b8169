// SPDX-License-Identifier: GPL-2.0
/*
 * gs-driver-client: fixed-work kernels through the CUDA driver API, linked
 * against libcuda and calling cuLaunchKernel by symbol (the path
 * libgpusched interposes for programs that use the driver directly).
 * cuInit, cuDeviceGet, cuCtxCreate, cuModuleLoadData of the fatbin embedded
 * at build time (sm_90 code plus compute_90 PTX; --cubin FILE loads a file
 * with cuModuleLoad instead), cuLaunchKernel on non-blocking streams (one
 * per host thread, --threads). Busy or periodic; no graphs (the runtime
 * client has them). Prints one line of JSON at the end (gs-common.h).
 */
#include <cuda.h>
#include <stdlib.h>
#include <string.h>

#include "cu-check.h"
#include "fixedwork.h"
#include "gs-common.h"
#include "fixedwork_fatbin.h"	/* generated: gs_fixedwork_fatbin[] */

struct drv_priv {
	const char *cubin;
	CUcontext ctx;
	CUmodule mod;
	CUfunction fn;
	CUstream stream[GS_MAX_LANES];
	CUevent *ev;		/* lanes x depth */
	int lanes, depth;
	CUevent t0, t1;
	CUdeviceptr out;
	unsigned int sentinel;
};

static CUevent drv_ev(struct drv_priv *p, int lane, int slot)
{
	return p->ev[lane * p->depth + slot];
}

static void drv_init(struct gs_backend *b, int device, int lanes, int depth)
{
	struct drv_priv *p = b->priv;
	CUdevice dev;
	CUuuid uuid;
	const unsigned char *u;
	int i, per_sm = 0;

	CU_CHECK(cuInit(0));
	CU_CHECK(cuDeviceGet(&dev, device));
	CU_CHECK(cuDeviceGetName(b->device_name, sizeof(b->device_name), dev));
	CU_CHECK(cuDeviceGetUuid(&uuid, dev));
	u = (const unsigned char *)uuid.bytes;
	snprintf(b->device_uuid, sizeof(b->device_uuid),
		 "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
		 "%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2], u[3], u[4], u[5],
		 u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14],
		 u[15]);
	CU_CHECK(cuDeviceGetAttribute(&b->sms,
			CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
	/* CUDA 13 signature; no creation parameters. */
	CU_CHECK(cuCtxCreate(&p->ctx, NULL, 0, dev));

	if (p->cubin)
		CU_CHECK(cuModuleLoad(&p->mod, p->cubin));
	else
		CU_CHECK(cuModuleLoadData(&p->mod, gs_fixedwork_fatbin));
	CU_CHECK(cuModuleGetFunction(&p->fn, p->mod, GS_FIXEDWORK_NAME));
	b->threads = GS_FIXEDWORK_THREADS;
	CU_CHECK(cuOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, p->fn,
							      b->threads, 0));
	if (per_sm < 1)
		gs_die("the fixed-work kernel cannot run on this device");
	b->blocks = per_sm * b->sms;

	p->lanes = lanes;
	p->depth = depth;
	for (i = 0; i < lanes; i++)
		CU_CHECK(cuStreamCreate(&p->stream[i], CU_STREAM_NON_BLOCKING));
	p->ev = calloc((size_t)lanes * depth, sizeof(*p->ev));
	if (!p->ev)
		gs_die("out of memory");
	for (i = 0; i < lanes * depth; i++)
		CU_CHECK(cuEventCreate(&p->ev[i], CU_EVENT_DISABLE_TIMING));
	CU_CHECK(cuEventCreate(&p->t0, CU_EVENT_DEFAULT));
	CU_CHECK(cuEventCreate(&p->t1, CU_EVENT_DEFAULT));
	CU_CHECK(cuMemAlloc(&p->out, sizeof(unsigned int)));
	p->sentinel = 0x5eed0001u;
}

static void drv_thread_enter(struct gs_backend *b)
{
	struct drv_priv *p = b->priv;

	CU_CHECK(cuCtxSetCurrent(p->ctx));
}

static void drv_kernel(struct gs_backend *b, struct drv_priv *p, int lane,
		       uint32_t iters, struct gs_trace_rec *tr)
{
	unsigned int it = iters;
	void *args[] = { &it, &p->sentinel, &p->out, &tr };

	CU_CHECK(cuLaunchKernel(p->fn, (unsigned int)b->blocks, 1, 1,
				(unsigned int)b->threads, 1, 1, 0, p->stream[lane],
				args, NULL));
}

static void drv_launch(struct gs_backend *b, int lane, uint32_t iters,
		       int slot)
{
	struct drv_priv *p = b->priv;

	drv_kernel(b, p, lane, iters, gs_trace_next(b));
	CU_CHECK(cuEventRecord(drv_ev(p, lane, slot), p->stream[lane]));
}

static void drv_wait(struct gs_backend *b, int lane, int slot)
{
	struct drv_priv *p = b->priv;

	CU_CHECK(cuEventSynchronize(drv_ev(p, lane, slot)));
}

static int drv_query(struct gs_backend *b, int lane, int slot)
{
	struct drv_priv *p = b->priv;
	CUresult e = cuEventQuery(drv_ev(p, lane, slot));

	if (e == CUDA_ERROR_NOT_READY)
		return 0;
	CU_CHECK(e);
	return 1;
}

static void drv_sync_lane(struct gs_backend *b, int lane)
{
	struct drv_priv *p = b->priv;

	CU_CHECK(cuStreamSynchronize(p->stream[lane]));
}

static void drv_sync(struct gs_backend *b)
{
	struct drv_priv *p = b->priv;
	int i;

	for (i = 0; i < p->lanes; i++)
		CU_CHECK(cuStreamSynchronize(p->stream[i]));
}

static void drv_sync_device(struct gs_backend *b)
{
	(void)b;
	CU_CHECK(cuCtxSynchronize());
}

static double drv_time_one(struct gs_backend *b, uint32_t iters)
{
	struct drv_priv *p = b->priv;
	float ms = 0;

	CU_CHECK(cuEventRecord(p->t0, p->stream[0]));
	drv_kernel(b, p, 0, iters, NULL);
	CU_CHECK(cuEventRecord(p->t1, p->stream[0]));
	CU_CHECK(cuEventSynchronize(p->t1));
	CU_CHECK(cuEventElapsedTime(&ms, p->t0, p->t1));
	return ms * 1e3;
}

static void drv_fini(struct gs_backend *b)
{
	struct drv_priv *p = b->priv;
	int i;

	drv_sync(b);
	for (i = 0; i < p->lanes * p->depth; i++)
		CU_CHECK(cuEventDestroy(p->ev[i]));
	CU_CHECK(cuEventDestroy(p->t0));
	CU_CHECK(cuEventDestroy(p->t1));
	CU_CHECK(cuMemFree(p->out));
	if (b->trace_dev)
		CU_CHECK(cuMemFree((CUdeviceptr)b->trace_dev));
	for (i = 0; i < p->lanes; i++)
		CU_CHECK(cuStreamDestroy(p->stream[i]));
	CU_CHECK(cuModuleUnload(p->mod));
	CU_CHECK(cuCtxDestroy(p->ctx));
	free(p->ev);
}

static void drv_trace_init(struct gs_backend *b, unsigned int cap)
{
	size_t sz = (size_t)cap * sizeof(struct gs_trace_rec);
	CUdeviceptr d;

	CU_CHECK(cuMemAlloc(&d, sz));
	CU_CHECK(cuMemsetD8(d, 0, sz));
	CU_CHECK(cuCtxSynchronize());
	b->trace_dev = (struct gs_trace_rec *)d;
	b->trace_cap = cap;
}

static void drv_trace_fetch(struct gs_backend *b, struct gs_trace_rec *r,
			    unsigned int n)
{
	CU_CHECK(cuMemcpyDtoH(r, (CUdeviceptr)b->trace_dev, (size_t)n * sizeof(*r)));
}

int main(int argc, char **argv)
{
	static struct drv_priv priv;
	struct gs_backend b;
	struct gs_opts o;

	memset(&b, 0, sizeof(b));
	memset(&o, 0, sizeof(o));
	o.prog = "gs-driver-client";
	o.kernel_us = 100;
	o.seconds = 10;
	o.warmup_ms = 200;
	gs_parse(&o, argc, argv, "cubin",
		 "load the kernel from this .cubin (cuModuleLoad) instead of "
		 "the embedded fatbin");
	priv.cubin = o.extra;
	b.api = "driver";
	b.priv = &priv;
	b.init = drv_init;
	b.thread_enter = drv_thread_enter;
	b.launch = drv_launch;
	b.wait = drv_wait;
	b.query = drv_query;
	b.sync_lane = drv_sync_lane;
	b.sync = drv_sync;
	b.sync_device = drv_sync_device;
	b.time_one = drv_time_one;
	b.fini = drv_fini;
	b.trace_init = drv_trace_init;
	b.trace_fetch = drv_trace_fetch;
	return gs_main(&b, &o);
}
