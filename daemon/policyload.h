/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The policy in force in either mode of gpuschedd: read at start and on
 * SIGHUP, replaced only by a file without errors, counted for the metrics.
 */
#ifndef GSD_POLICYLOAD_H
#define GSD_POLICYLOAD_H

#include <stdbool.h>
#include <stdint.h>

#include "metrics.h"
#include "policyfile.h"

/* Where the policy comes from, and what its absence means. */
struct gs_policy_source {
	const char *path;
	bool given;		/* named by the admin: a missing file is an error */
	const char *absent;	/* for the log: what no file at the default path means */
};

/**
 * gs_policy_reload() - read the policy file in place of the one in force
 * @src: the file
 * @reload: a reload (SIGHUP), counted in @st; false: the first load
 * @pol: the policy in force (NULL before the first load), replaced
 * @rule_hits: its count of clients per rule, replaced by zeros
 * @st: the daemon's counters of loads and the time of the last good one;
 *      its pol and rule_hits follow *@pol and *@rule_hits
 *
 * A missing file at the default path is an empty policy: no rules, no
 * knobs. What happened is logged (dlog.h).
 *
 * Return: 0, or -1 with *@pol and *@rule_hits as they were.
 */
int gs_policy_reload(const struct gs_policy_source *src, bool reload,
		     struct gs_policy **pol, uint64_t **rule_hits,
		     struct gs_daemon_stats *st);

#endif /* GSD_POLICYLOAD_H */
