// SPDX-License-Identifier: GPL-2.0
/*
 * gs-probe: the latency probe. A small fixed-work kernel (default 50 us of
 * solo work) every period (default 2 ms), through the CUDA runtime API;
 * records each launch's latency from submission to completion (host clock
 * after cudaStreamSynchronize) and prints p50/p99/max, on stderr in words and
 * in the one line of JSON on stdout.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt-backend.cuh"

int main(int argc, char **argv)
{
	struct gs_backend b;
	struct gs_opts o;

	memset(&b, 0, sizeof(b));
	memset(&o, 0, sizeof(o));
	o.prog = "gs-probe";
	o.kernel_us = 50;
	o.period_us = 2000;
	o.seconds = 10;
	o.warmup_ms = 200;
	gs_parse(&o, argc, argv, NULL, NULL);
	if (o.period_us <= 0 && !o.calibrate) {
		fprintf(stderr, "gs-probe: --period-us must be > 0 "
			"(use gs-runtime-client for busy loops)\n");
		return 2;
	}
	rt_backend(&b);
	return gs_main(&b, &o);
}
