/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What host code needs to know about the fixed-work kernel (fixedwork.cuh),
 * in plain C: its symbol name (extern "C", unmangled, for cuModuleGetFunction)
 * and its block size.
 */
#ifndef GS_FIXEDWORK_H
#define GS_FIXEDWORK_H

#define GS_FIXEDWORK_NAME	"gs_fixedwork"
#define GS_FIXEDWORK_THREADS	256

/*
 * One traced kernel, filled by the kernel itself in device memory (zeroed
 * before use): the first block to start stamps start, the last to finish
 * stamps end, both from %globaltimer (ns, one clock for every context on
 * the GPU), so traces of several processes line up. gpusched-bench reads
 * them to find hand-off gaps and shares over time.
 */
struct gs_trace_rec {
	unsigned long long start, end;
	unsigned int in, out;		/* blocks started, finished */
	unsigned int pad[2];
};

/* Kernels a --trace run records (32 MiB of device memory). */
#define GS_TRACE_MAX	(1u << 20)

#endif /* GS_FIXEDWORK_H */
