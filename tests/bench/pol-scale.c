// SPDX-License-Identifier: GPL-2.0
/*
 * pol-scale: what kmod/policy.c alone costs per hand-off with N waiters,
 * on the host, with a simulated clock (Documentation/scale.md). N clients
 * wait; the holder releases, the policy grants the next, and the old
 * holder waits again, round and round. No lock, no wake-up, no VM: the
 * policy's own work, as the module and the arbiter run it under their
 * locks. A measurement: it prints numbers and judges none. The counts are
 * measured in turn, five rounds, and each is given as the least and the
 * median of its rounds, so that a busy host shows as spread, not as a trend.
 *
 * Usage: pol-scale [-g HANDOFFS] N...
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <linux/gpusched.h>
#include "policy.h"

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* ns per hand-off over @handoffs of them, with @n clients all waiting. */
static double run(unsigned int n, unsigned int handoffs)
{
	struct gs_pol_client *c = calloc(n, sizeof(*c));
	struct gs_pol_effects fx;
	struct gs_pol_params p;
	struct gs_pol_dev d;
	uint64_t t = 1000000, t0;
	unsigned int i;

	if (!c) {
		perror("calloc");
		exit(1);
	}
	gs_pol_default_params(&p);
	gs_pol_dev_init(&d, &p, t);
	for (i = 0; i < n; i++) {
		gs_pol_client_init(&d, &c[i], t);
		memset(&fx, 0, sizeof(fx));
		gs_pol_wait(&d, &c[i], t, &fx);
	}
	t0 = now_ns();
	for (i = 0; i < handoffs; i++) {
		struct gs_pol_client *h = d.holder;

		t += 1000;	/* each holds 1 us, well inside its slice */
		memset(&fx, 0, sizeof(fx));
		gs_pol_release(&d, h, t, &fx);
		memset(&fx, 0, sizeof(fx));
		gs_pol_wait(&d, h, t, &fx);
		if (!d.holder || d.holder == h) {
			fprintf(stderr, "pol-scale: no hand-off at %u\n", i);
			exit(1);
		}
	}
	t0 = now_ns() - t0;
	free(c);
	return (double)t0 / handoffs;
}

#define ROUNDS	5

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	unsigned int handoffs = 1000000;
	double (*ns)[ROUNDS];
	int i = 1, first, r;

	if (argc > 2 && !strcmp(argv[1], "-g")) {
		handoffs = strtoul(argv[2], NULL, 0);
		i = 3;
	}
	if (i >= argc) {
		fprintf(stderr, "usage: pol-scale [-g HANDOFFS] N...\n");
		return 2;
	}
	first = i;
	ns = calloc(argc, sizeof(*ns));
	if (!ns)
		return 1;
	for (r = 0; r < ROUNDS; r++)
		for (i = first; i < argc; i++)
			ns[i][r] = run(strtoul(argv[i], NULL, 0), handoffs);
	printf("| waiting clients | policy ns per hand-off: least | median |\n");
	printf("| ---: | ---: | ---: |\n");
	for (i = first; i < argc; i++) {
		qsort(ns[i], ROUNDS, sizeof(ns[i][0]), cmp_double);
		printf("| %s | %.0f | %.0f |\n", argv[i], ns[i][0],
		       ns[i][ROUNDS / 2]);
	}
	free(ns);
	return 0;
}
