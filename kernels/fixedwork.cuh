/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The fixed-work kernel: every thread runs a dependent integer hash chain of
 * a given number of iterations. The work is fixed, not the time: a kernel
 * that is preempted or time-sliced still has to do all of its iterations, so
 * "kernels completed x solo microseconds" measures the GPU time a process
 * really obtained. (A kernel that spins until a clock value passes finishes
 * early after a preemption and lies.)
 *
 * The chain is xorshift-multiply, so each iteration depends on the one before
 * and the compiler can neither vectorise it nor fold it into a closed form.
 * The result is stored only when it equals a sentinel chosen by the host
 * (never, in practice), so the kernel touches no memory and its time is the
 * issue rate of the SMs, the same alone as next to another context. The grid
 * is one full wave (every SM at full occupancy) so the kernel fills the GPU.
 * With a trace record (fixedwork.h) it also stamps its start and end: two
 * atomics per block, nothing per iteration.
 *
 * Host code sizes kernels in microseconds of solo work: iterations per
 * microsecond come from a calibration alone (gs-common.c: gs_calibrate).
 */
#ifndef GS_FIXEDWORK_CUH
#define GS_FIXEDWORK_CUH

#include "fixedwork.h"

static __device__ __forceinline__ unsigned long long gs_globaltimer(void)
{
	unsigned long long t;

	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

extern "C" __global__ void __launch_bounds__(GS_FIXEDWORK_THREADS)
gs_fixedwork(unsigned int iters, unsigned int sentinel, unsigned int *out,
	     struct gs_trace_rec *tr)
{
	unsigned int x = blockIdx.x * blockDim.x + threadIdx.x + 0x9e3779b9u;
	unsigned int i;

	if (tr && threadIdx.x == 0 && atomicAdd(&tr->in, 1u) == 0)
		tr->start = gs_globaltimer();

#pragma unroll 8
	for (i = 0; i < iters; i++) {
		x ^= x >> 15;
		x *= 0x2c1b3c6du;
		x ^= x >> 12;
		x += 0x297a2d39u;
	}
	if (x == sentinel)
		out[0] = x;
	if (tr) {
		__syncthreads();
		if (threadIdx.x == 0 &&
		    atomicAdd(&tr->out, 1u) == gridDim.x - 1)
			tr->end = gs_globaltimer();
	}
}

#endif /* GS_FIXEDWORK_CUH */
