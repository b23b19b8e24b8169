/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The policy file of gpuschedd, gpusched.conf(5): GPU knobs and rules that
 * set a client's weight, class and cap by who runs it. Parsed whole, then
 * used read-only; a reload parses a new one and swaps it in, so a file with
 * an error never replaces a good policy.
 */
#ifndef GSD_POLICYFILE_H
#define GSD_POLICYFILE_H

#include <stddef.h>
#include <stdint.h>
#include <linux/gpusched.h>

#include "knobs.h"

#define GS_POLICY_DEFAULT_PATH	"/etc/gpusched/gpusched.conf"
/* A policy file is a few hundred lines; refuse what cannot be one. */
#define GS_POLICY_MAX_SIZE	(1 << 20)

enum gs_match_kind {
	GS_MATCH_USER,		/* uid of the client (names resolved at parse) */
	GS_MATCH_GROUP,		/* gid, or any supplementary group */
	GS_MATCH_EXE,		/* glob on the executable's name or path */
	GS_MATCH_CGROUP,	/* cgroup v2 path prefix, by whole components */
	GS_MATCH_LABEL,		/* glob on GPUSCHED_LABEL in the environment */
	GS_NR_MATCH
};

/* The values of one match key: any of them may match. n == 0: no key. */
struct gs_match {
	size_t n;
	uint32_t *ids;		/* USER, GROUP */
	char **strs;		/* EXE, CGROUP, LABEL */
};

struct gs_rule {
	char *name;
	unsigned int line;
	/* Every key given must match (and); a rule with none matches all. */
	struct gs_match match[GS_NR_MATCH];
	struct gpusched_params set;	/* mask, weight, class, cap_pct */
};

/* [gpu UUID]: knobs of one GPU, over those of [gpu]. */
struct gs_gpu_conf {
	uint8_t uuid[GPUSCHED_UUID_LEN];
	unsigned int line;
	struct gs_knob_set knobs;
};

struct gs_policy {
	char *path;
	struct gs_knob_set gpu_all;	/* [gpu] */
	struct gs_gpu_conf *gpus;
	size_t nr_gpus;
	struct gs_rule *rules;		/* in file order: first match wins */
	size_t nr_rules;
};

/*
 * Parse the file at @path. A policy, or NULL with "PATH:LINE: reason" (or
 * "PATH: reason" when no line is to blame) in @err.
 */
struct gs_policy *gs_policy_load(const char *path, char *err, size_t size);

/* The same for text in memory, named @name in messages (tests). */
struct gs_policy *gs_policy_parse(const char *name, const char *text,
				  size_t len, char *err, size_t size);

void gs_policy_free(struct gs_policy *pol);

/* The knobs the policy gives the GPU @uuid: [gpu UUID] over [gpu]. */
void gs_policy_gpu_knobs(const struct gs_policy *pol,
			 const uint8_t uuid[GPUSCHED_UUID_LEN],
			 struct gs_knob_set *out);

struct gs_pol_params;

/*
 * For the arbiter, which runs kmod/policy.c itself: the knobs the policy
 * gives GPU @uuid, written over @p (the arbiter's defaults).
 */
void gs_policy_gpu_params(const struct gs_policy *pol,
			  const uint8_t uuid[GPUSCHED_UUID_LEN],
			  struct gs_pol_params *p);

const char *gs_match_name(enum gs_match_kind kind);

#endif /* GSD_POLICYFILE_H */
