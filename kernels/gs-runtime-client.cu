// SPDX-License-Identifier: GPL-2.0
/*
 * gs-runtime-client: fixed-work kernels through the CUDA runtime API
 * (<<<>>> launches; the runtime reaches the driver through cuGetProcAddress).
 * Busy (back to back) or periodic; prints one line of JSON at the end.
 * See gs-common.h and Documentation/performance.md.
 */
#include <string.h>

#include "rt-backend.cuh"

int main(int argc, char **argv)
{
	struct gs_backend b;
	struct gs_opts o;

	memset(&b, 0, sizeof(b));
	memset(&o, 0, sizeof(o));
	o.prog = "gs-runtime-client";
	o.kernel_us = 100;
	o.seconds = 10;
	o.warmup_ms = 200;
	gs_parse(&o, argc, argv, NULL, NULL);
	rt_backend(&b);
	return gs_main(&b, &o);
}
