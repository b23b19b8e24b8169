/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Names, ranges and text forms shared by the policy file, gpuschedd's
 * netlink mode, gpuschedctl and the metrics: the per-GPU knobs, the client
 * parameters, classes, states and GPU UUIDs. One table, so that a knob is
 * spelled and bounded the same way in the file, on the command line, in
 * sysfs and in the module's parameters.
 */
#ifndef GSD_KNOBS_H
#define GSD_KNOBS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/gpusched.h>

#include "policy.h"

/*
 * The knobs are kmod/policy.c's table, gs_pol_knobs (enum gs_pol_knob_id):
 * their names, netlink attributes, ranges and help, written once for the
 * module, the arbiter and the tools. So are the classes' names
 * (gs_pol_class_names).
 */

/* A set of knob values; only those in @mask (bit n: knob n) are given. */
struct gs_knob_set {
	unsigned int mask;
	uint32_t val[GS_POL_NR_KNOBS];
};

/* The knob called @name, or -1. */
int gs_knob_find(const char *name);

/*
 * Client parameters, as struct gpusched_params: "weight", "class", "cap",
 * "mem_limit".
 */
#define GS_CAP_TEXT_NONE	"none"

/*
 * A memory limit given in percent ("mem_limit = 50%") travels in the
 * daemon's struct gpusched_params as GS_MEM_PCT_FLAG | percent, and is
 * resolved against each client's mem_total where it is applied
 * (GPUSCHED_A_CLIENT_MEM_LIMIT_PCT, or the arbiter's gs_mem_limit_pct()).
 * Never sent in a SET_PARAMS. Byte limits stay below the flag.
 */
#define GS_MEM_PCT_FLAG		(1ULL << 63)
#define GS_MEM_TEXT_LEN		24
/* "none", "N%", or bytes with a K/M/G/T (binary) suffix where exact. */
void gs_mem_format(uint64_t v, char out[GS_MEM_TEXT_LEN]);
/*
 * "none", "0", "N%" (1..100) or bytes with an optional K, M, G or T
 * suffix (powers of 1024, optionally followed by "iB" or "B"), below
 * GS_MEM_PCT_FLAG: 0 and *@out, or -1 with a reason in @why.
 */
int gs_mem_parse(const char *s, uint64_t *out, const char **why);

const char *gs_class_name(uint32_t class);
/* 0 and *class, or -1 if @s is not latency, normal or batch. */
int gs_class_parse(const char *s, uint32_t *class);
const char *gs_state_name(uint32_t state);

/*
 * A decimal number from @lo to @hi that fills all of @s: 0, or -1 with a
 * reason in @why (static text) for a message.
 */
int gs_parse_u32(const char *s, uint32_t lo, uint32_t hi, uint32_t *out,
		 const char **why);
int gs_parse_u64(const char *s, uint64_t *out);

/*
 * Parse "KEY=VALUE" for a client parameter into @p (mask, weight, class,
 * cap_pct): 0, or -1 with a message for a person in @msg.
 */
int gs_client_param_parse(const char *key, const char *value,
			  struct gpusched_params *p, char *msg, size_t size);
/* The same for a GPU knob into @ks. */
int gs_knob_parse(const char *key, const char *value, struct gs_knob_set *ks,
		  char *msg, size_t size);

/*
 * GPU UUIDs as nvidia-smi and sysfs print them:
 * GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx (lower case).
 */
#define GS_UUID_TEXT_LEN	(4 + 36 + 1)
void gs_uuid_format(const uint8_t uuid[GPUSCHED_UUID_LEN],
		    char out[GS_UUID_TEXT_LEN]);
/*
 * Accepts that form with or without "GPU-", in either case, with or
 * without the dashes: 0, or -1.
 */
int gs_uuid_parse(const char *s, uint8_t uuid[GPUSCHED_UUID_LEN]);

#endif /* GSD_KNOBS_H */
