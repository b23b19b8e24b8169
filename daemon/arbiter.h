/* SPDX-License-Identifier: GPL-2.0 */
/* The user-space arbiter: the gpusched token served on a Unix socket. */
#ifndef GSD_ARBITER_H
#define GSD_ARBITER_H

#include <stdbool.h>
#include <stdint.h>
#include "policy.h"

struct arb_options {
	const char *socket_path;
	const char *config;		/* policy file: rules and GPU knobs */
	bool config_given;		/* a missing file is then an error */
	const char *metrics_addr;	/* serve Prometheus metrics here */
	struct gs_pol_params params;
	unsigned int max_gpus;
	unsigned int max_clients_per_uid;	/* on one GPU; 0: no limit */
	unsigned int rt_priority;	/* SCHED_FIFO priority; 0: not real-time */
	uint64_t poll_ns;		/* poll this long after a request */
	bool verbose;
};

/* Serve until SIGTERM or SIGINT; returns the exit status. */
int arbiter_run(const struct arb_options *o);

#endif
