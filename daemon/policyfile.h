/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The policy file of gpuschedd, gpusched.conf(5): GPU knobs and rules that
 * set a client's weight, class and cap by who runs it. Parsed whole, then
 * used read-only; a reload parses a new one and swaps it in, so a file with
 * an error never replaces a good policy.
 */
#ifndef GSD_POLICYFILE_H
#define GSD_POLICYFILE_H

#include <stdbool.h>
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

/*
 * mem_admission: what gpuschedd does with a client whose memory limit
 * would push the sum of limits on its GPU past the GPU's memory less the
 * reserve (gs_mem_admit_over()). gpuschedd's own, not a module knob.
 */
enum gs_mem_admit {
	GS_ADMIT_UNSET,		/* not in this section */
	GS_ADMIT_OFF,		/* admit every client (the default) */
	GS_ADMIT_REFUSE,	/* a limit of 1 byte: every allocation fails */
	GS_ADMIT_BATCH,		/* the batch class */
};

/* [gpu UUID]: knobs of one GPU, over those of [gpu]. */
struct gs_gpu_conf {
	uint8_t uuid[GPUSCHED_UUID_LEN];
	unsigned int line;
	struct gs_knob_set knobs;
	enum gs_mem_admit admit;
};

struct gs_policy {
	char *path;
	struct gs_knob_set gpu_all;	/* [gpu] */
	enum gs_mem_admit gpu_all_admit;
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

/* The mem_admission of GPU @uuid: [gpu UUID]'s, else [gpu]'s, else off. */
enum gs_mem_admit gs_policy_gpu_admit(const struct gs_policy *pol,
				      const uint8_t uuid[GPUSCHED_UUID_LEN]);
const char *gs_mem_admit_name(enum gs_mem_admit a);

/*
 * A client's limit as admission counts it: @limit, or, for none (0), the
 * GPU's memory @total less @reserve (at least 1 byte, as the services'
 * effective limits are).
 */
uint64_t gs_mem_admit_counted(uint64_t total, uint64_t reserve,
			      uint64_t limit);

/*
 * Would a new client whose limit is @limit (0: none) push the sum of limits
 * on its GPU, @others for the clients already there (each as
 * gs_mem_admit_counted() counts it; sums saturate), past the GPU's memory
 * @total less @reserve? Never when @total is unknown (0).
 */
bool gs_mem_admit_over(uint64_t total, uint64_t reserve, uint64_t others,
		       uint64_t limit);

/* @sum plus @limit as gs_mem_admit_counted() counts it, saturating. */
uint64_t gs_mem_admit_add(uint64_t sum, uint64_t total, uint64_t reserve,
			  uint64_t limit);

/*
 * What mem_admission's decision @a sets on a client, added to @p: a limit
 * of 1 byte (REFUSE), the batch class (BATCH), or nothing.
 */
void gs_mem_admit_params(enum gs_mem_admit a, struct gpusched_params *p);

/* Whether any GPU section of @pol sets mem_admission other than off. */
bool gs_policy_admits(const struct gs_policy *pol);

/* Whether a rule of @pol (NULL: none) looks at labels. */
bool gs_policy_matches_labels(const struct gs_policy *pol);

/*
 * What mem_admission did with a client, for the log: "a limit of 3G beside
 * 6G of others' would pass the 7G the GPU has less its reserve: refused
 * (...)", for @a GS_ADMIT_REFUSE or GS_ADMIT_BATCH.
 */
void gs_mem_admit_text(char *buf, size_t size, enum gs_mem_admit a,
		       uint64_t total, uint64_t reserve, uint64_t others,
		       uint64_t limit);

#endif /* GSD_POLICYFILE_H */
