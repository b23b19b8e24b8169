/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The CUDA runtime API backend of gs-common (gs-runtime-client, gs-probe):
 * <<<>>> launches on a non-blocking stream of its own. The runtime reaches
 * the driver through cuGetProcAddress, which is the path libgpusched must
 * interpose for the runtime (and so PyTorch). Every return code is checked;
 * any error ends the process.
 */
#ifndef GS_RT_BACKEND_CUH
#define GS_RT_BACKEND_CUH

#include <stdio.h>
#include <stdlib.h>
#include <cuda_runtime.h>

#include "fixedwork.cuh"
#include "gs-common.h"

#define RT_CHECK(call)							\
	do {								\
		cudaError_t e_ = (call);				\
		if (e_ != cudaSuccess)					\
			gs_die("%s:%d: %s: %s (%s)", __FILE__, __LINE__, \
			       #call, cudaGetErrorString(e_),		\
			       cudaGetErrorName(e_));			\
	} while (0)

struct rt_priv {
	cudaStream_t stream;
	cudaEvent_t *ev;	/* one per slot, timing disabled */
	int nev;
	cudaEvent_t t0, t1;	/* for time_one */
	unsigned int *out;
	unsigned int sentinel;
};

static void rt_init(struct gs_backend *b, int device, int depth)
{
	struct rt_priv *p = (struct rt_priv *)calloc(1, sizeof(*p));
	struct cudaDeviceProp prop;
	const unsigned char *u;
	int i, per_sm = 0;

	if (!p)
		gs_die("out of memory");
	b->priv = p;
	RT_CHECK(cudaSetDevice(device));
	RT_CHECK(cudaFree(0));	/* create the context now */
	RT_CHECK(cudaGetDeviceProperties(&prop, device));
	snprintf(b->device_name, sizeof(b->device_name), "%s", prop.name);
	u = (const unsigned char *)prop.uuid.bytes;
	snprintf(b->device_uuid, sizeof(b->device_uuid),
		 "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
		 "%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2], u[3], u[4], u[5],
		 u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14],
		 u[15]);
	b->sms = prop.multiProcessorCount;
	b->threads = GS_FIXEDWORK_THREADS;
	RT_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm,
			gs_fixedwork, b->threads, 0));
	if (per_sm < 1)
		gs_die("the fixed-work kernel cannot run on this device");
	b->blocks = per_sm * b->sms;

	RT_CHECK(cudaStreamCreateWithFlags(&p->stream, cudaStreamNonBlocking));
	p->nev = depth;
	p->ev = (cudaEvent_t *)calloc((size_t)depth, sizeof(*p->ev));
	if (!p->ev)
		gs_die("out of memory");
	for (i = 0; i < depth; i++)
		RT_CHECK(cudaEventCreateWithFlags(&p->ev[i],
						  cudaEventDisableTiming));
	RT_CHECK(cudaEventCreate(&p->t0));
	RT_CHECK(cudaEventCreate(&p->t1));
	RT_CHECK(cudaMalloc((void **)&p->out, sizeof(*p->out)));
	p->sentinel = 0x5eed0001u;
}

static void rt_kernel(struct gs_backend *b, struct rt_priv *p, uint32_t iters,
		      struct gs_trace_rec *tr)
{
	gs_fixedwork<<<b->blocks, b->threads, 0, p->stream>>>(iters,
							       p->sentinel,
							       p->out, tr);
	RT_CHECK(cudaGetLastError());
}

static void rt_launch(struct gs_backend *b, uint32_t iters, int slot)
{
	struct rt_priv *p = (struct rt_priv *)b->priv;

	rt_kernel(b, p, iters, gs_trace_next(b));
	RT_CHECK(cudaEventRecord(p->ev[slot], p->stream));
}

static void rt_wait(struct gs_backend *b, int slot)
{
	struct rt_priv *p = (struct rt_priv *)b->priv;

	RT_CHECK(cudaEventSynchronize(p->ev[slot]));
}

static void rt_sync(struct gs_backend *b)
{
	struct rt_priv *p = (struct rt_priv *)b->priv;

	RT_CHECK(cudaStreamSynchronize(p->stream));
}

static double rt_time_one(struct gs_backend *b, uint32_t iters)
{
	struct rt_priv *p = (struct rt_priv *)b->priv;
	float ms = 0;

	RT_CHECK(cudaEventRecord(p->t0, p->stream));
	rt_kernel(b, p, iters, NULL);
	RT_CHECK(cudaEventRecord(p->t1, p->stream));
	RT_CHECK(cudaEventSynchronize(p->t1));
	RT_CHECK(cudaEventElapsedTime(&ms, p->t0, p->t1));
	return ms * 1e3;
}

static void rt_fini(struct gs_backend *b)
{
	struct rt_priv *p = (struct rt_priv *)b->priv;
	int i;

	RT_CHECK(cudaStreamSynchronize(p->stream));
	for (i = 0; i < p->nev; i++)
		RT_CHECK(cudaEventDestroy(p->ev[i]));
	RT_CHECK(cudaEventDestroy(p->t0));
	RT_CHECK(cudaEventDestroy(p->t1));
	RT_CHECK(cudaFree(p->out));
	if (b->trace_dev)
		RT_CHECK(cudaFree(b->trace_dev));
	RT_CHECK(cudaStreamDestroy(p->stream));
	free(p->ev);
	free(p);
	b->priv = NULL;
}

static void rt_trace_init(struct gs_backend *b, unsigned int cap)
{
	size_t sz = (size_t)cap * sizeof(struct gs_trace_rec);

	RT_CHECK(cudaMalloc((void **)&b->trace_dev, sz));
	RT_CHECK(cudaMemset(b->trace_dev, 0, sz));
	RT_CHECK(cudaDeviceSynchronize());
	b->trace_cap = cap;
}

static void rt_trace_fetch(struct gs_backend *b, struct gs_trace_rec *r,
			   unsigned int n)
{
	RT_CHECK(cudaMemcpy(r, b->trace_dev, (size_t)n * sizeof(*r),
			    cudaMemcpyDeviceToHost));
}

static void rt_backend(struct gs_backend *b)
{
	b->trace_init = rt_trace_init;
	b->trace_fetch = rt_trace_fetch;
	b->api = "runtime";
	b->init = rt_init;
	b->launch = rt_launch;
	b->wait = rt_wait;
	b->sync = rt_sync;
	b->time_one = rt_time_one;
	b->fini = rt_fini;
}

#endif /* GS_RT_BACKEND_CUH */
