/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The CUDA runtime API backend of gs-common (gs-runtime-client, gs-probe):
 * <<<>>> launches on non-blocking streams of its own (one per host thread),
 * and CUDA graphs of those kernels replayed whole. The runtime reaches
 * the driver through cuGetProcAddress, which is the path libgpusched must
 * interpose for the runtime (and so PyTorch). Every return code is checked;
 * any error ends the process.
 */
#ifndef GS_RT_BACKEND_CUH
#define GS_RT_BACKEND_CUH

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* A CUDA graph of n fixed-work kernels in a chain, built at first use. */
struct rt_graph {
	cudaGraph_t g;
	cudaGraphExec_t x;
	cudaGraphNode_t node[GS_MAX_GRAPH];
	struct gs_trace_rec *tr[GS_MAX_GRAPH];	/* each node's record now */
	int n;
	uint32_t iters;
};

struct rt_priv {
	int lanes, depth;
	cudaStream_t stream[GS_MAX_LANES];
	cudaEvent_t *ev;	/* lanes x depth, timing disabled */
	cudaEvent_t t0, t1;	/* for time_one */
	unsigned int *out;
	unsigned int sentinel;
	int device;
	struct rt_graph graph;	/* lane 0's */
};

static cudaEvent_t *rt_ev(struct rt_priv *p, int lane, int slot)
{
	return &p->ev[lane * p->depth + slot];
}

static void rt_init(struct gs_backend *b, int device, int lanes, int depth)
{
	struct rt_priv *p = (struct rt_priv *)calloc(1, sizeof(*p));
	struct cudaDeviceProp prop;
	const unsigned char *u;
	int i, per_sm = 0;

	if (!p)
		gs_die("out of memory");
	b->priv = p;
	p->device = device;
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

	p->lanes = lanes;
	p->depth = depth;
	for (i = 0; i < lanes; i++)
		RT_CHECK(cudaStreamCreateWithFlags(&p->stream[i],
						   cudaStreamNonBlocking));
	p->ev = (cudaEvent_t *)calloc((size_t)lanes * depth, sizeof(*p->ev));
	if (!p->ev)
		gs_die("out of memory");
	for (i = 0; i < lanes * depth; i++)
		RT_CHECK(cudaEventCreateWithFlags(&p->ev[i],
						  cudaEventDisableTiming));
	RT_CHECK(cudaEventCreate(&p->t0));
	RT_CHECK(cudaEventCreate(&p->t1));
	RT_CHECK(cudaMalloc((void **)&p->out, sizeof(*p->out)));
	p->sentinel = 0x5eed0001u;
}

static void rt_thread_enter(struct gs_backend *b)
{
	struct rt_priv *p = (struct rt_priv *)b->priv;

	RT_CHECK(cudaSetDevice(p->device));
}

static void rt_kernel(struct gs_backend *b, struct rt_priv *p, int lane,
		      uint32_t iters, struct gs_trace_rec *tr)
{
	gs_fixedwork<<<b->blocks, b->threads, 0, p->stream[lane]>>>(iters,
							p->sentinel, p->out, tr);
	RT_CHECK(cudaGetLastError());
}

static void rt_launch(struct gs_backend *b, int lane, uint32_t iters, int slot)
{
	struct rt_priv *p = (struct rt_priv *)b->priv;

	rt_kernel(b, p, lane, iters, gs_trace_next(b));
	RT_CHECK(cudaEventRecord(*rt_ev(p, lane, slot), p->stream[lane]));
}

static void rt_graph_free(struct rt_graph *g)
{
	if (g->x)
		RT_CHECK(cudaGraphExecDestroy(g->x));
	if (g->g)
		RT_CHECK(cudaGraphDestroy(g->g));
	g->x = NULL;
	g->g = NULL;
}

/*
 * A graph of nk kernels, each after the one before, replayed as a whole.
 * Each replay gives every kernel its trace record by updating the
 * instantiated graph's node (later replays only; one in flight keeps the
 * record it was launched with).
 */
static void rt_launch_graph(struct gs_backend *b, int lane, uint32_t iters,
			    int nk, int slot)
{
	struct rt_priv *p = (struct rt_priv *)b->priv;
	struct rt_graph *g = &p->graph;
	unsigned int it = iters, sentinel = p->sentinel, *out = p->out;
	struct gs_trace_rec *tr = NULL;
	void *args[] = { &it, &sentinel, &out, &tr };
	cudaKernelNodeParams kp = {};
	int i;

	if (lane)
		gs_die("graphs are launched on lane 0 only");
	kp.func = (void *)gs_fixedwork;
	kp.gridDim = dim3((unsigned int)b->blocks);
	kp.blockDim = dim3((unsigned int)b->threads);
	kp.sharedMemBytes = 0;
	kp.kernelParams = args;
	kp.extra = NULL;
	if (!g->x || g->iters != iters || g->n != nk) {
		RT_CHECK(cudaStreamSynchronize(p->stream[lane]));
		rt_graph_free(g);
		RT_CHECK(cudaGraphCreate(&g->g, 0));
		for (i = 0; i < nk; i++) {
			RT_CHECK(cudaGraphAddKernelNode(&g->node[i], g->g,
					i ? &g->node[i - 1] : NULL, i ? 1 : 0,
					&kp));
			g->tr[i] = NULL;
		}
		RT_CHECK(cudaGraphInstantiate(&g->x, g->g, 0));
		g->iters = iters;
		g->n = nk;
	}
	for (i = 0; i < nk; i++) {
		tr = gs_trace_next(b);
		if (tr != g->tr[i]) {
			RT_CHECK(cudaGraphExecKernelNodeSetParams(g->x,
							g->node[i], &kp));
			g->tr[i] = tr;
		}
	}
	RT_CHECK(cudaGraphLaunch(g->x, p->stream[lane]));
	RT_CHECK(cudaEventRecord(*rt_ev(p, lane, slot), p->stream[lane]));
}

static void rt_wait(struct gs_backend *b, int lane, int slot)
{
	struct rt_priv *p = (struct rt_priv *)b->priv;

	RT_CHECK(cudaEventSynchronize(*rt_ev(p, lane, slot)));
}

static int rt_query(struct gs_backend *b, int lane, int slot)
{
	struct rt_priv *p = (struct rt_priv *)b->priv;
	cudaError_t e = cudaEventQuery(*rt_ev(p, lane, slot));

	if (e == cudaErrorNotReady) {
		/* Not an error: leave no trace of it for cudaGetLastError. */
		(void)cudaGetLastError();
		return 0;
	}
	RT_CHECK(e);
	return 1;
}

static void rt_sync_lane(struct gs_backend *b, int lane)
{
	struct rt_priv *p = (struct rt_priv *)b->priv;

	RT_CHECK(cudaStreamSynchronize(p->stream[lane]));
}

static void rt_sync(struct gs_backend *b)
{
	struct rt_priv *p = (struct rt_priv *)b->priv;
	int i;

	for (i = 0; i < p->lanes; i++)
		RT_CHECK(cudaStreamSynchronize(p->stream[i]));
}

static void rt_sync_device(struct gs_backend *b)
{
	(void)b;
	RT_CHECK(cudaDeviceSynchronize());
}

static double rt_time_one(struct gs_backend *b, uint32_t iters)
{
	struct rt_priv *p = (struct rt_priv *)b->priv;
	float ms = 0;

	RT_CHECK(cudaEventRecord(p->t0, p->stream[0]));
	rt_kernel(b, p, 0, iters, NULL);
	RT_CHECK(cudaEventRecord(p->t1, p->stream[0]));
	RT_CHECK(cudaEventSynchronize(p->t1));
	RT_CHECK(cudaEventElapsedTime(&ms, p->t0, p->t1));
	return ms * 1e3;
}

static void rt_fini(struct gs_backend *b)
{
	struct rt_priv *p = (struct rt_priv *)b->priv;
	int i;

	rt_sync(b);
	rt_graph_free(&p->graph);
	for (i = 0; i < p->lanes * p->depth; i++)
		RT_CHECK(cudaEventDestroy(p->ev[i]));
	RT_CHECK(cudaEventDestroy(p->t0));
	RT_CHECK(cudaEventDestroy(p->t1));
	RT_CHECK(cudaFree(p->out));
	if (b->trace_dev)
		RT_CHECK(cudaFree(b->trace_dev));
	for (i = 0; i < p->lanes; i++)
		RT_CHECK(cudaStreamDestroy(p->stream[i]));
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
	b->thread_enter = rt_thread_enter;
	b->launch = rt_launch;
	b->launch_graph = rt_launch_graph;
	b->wait = rt_wait;
	b->query = rt_query;
	b->sync_lane = rt_sync_lane;
	b->sync = rt_sync;
	b->sync_device = rt_sync_device;
	b->time_one = rt_time_one;
	b->fini = rt_fini;
}

#endif /* GS_RT_BACKEND_CUH */
