// SPDX-License-Identifier: GPL-2.0
/* Names, ranges and text forms of knobs, parameters and UUIDs. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "knobs.h"

int gs_knob_find(const char *name)
{
	int i;

	for (i = 0; i < GS_POL_NR_KNOBS; i++)
		if (!strcmp(gs_pol_knobs[i].name, name))
			return i;
	return -1;
}

const char *gs_class_name(uint32_t class)
{
	return class <= GPUSCHED_CLASS_MAX ? gs_pol_class_names[class] : "?";
}

int gs_class_parse(const char *s, uint32_t *class)
{
	uint32_t i;

	for (i = 0; i <= GPUSCHED_CLASS_MAX; i++) {
		if (!strcasecmp(s, gs_pol_class_names[i])) {
			*class = i;
			return 0;
		}
	}
	return -1;
}

const char *gs_state_name(uint32_t state)
{
	static const char *const names[] = {
		[GPUSCHED_STATE_DETACHED] = "detached",
		[GPUSCHED_STATE_IDLE] = "idle",
		[GPUSCHED_STATE_WAITING] = "waiting",
		[GPUSCHED_STATE_HOLDING] = "holding",
	};

	return state < sizeof(names) / sizeof(names[0]) ? names[state] : "?";
}

int gs_parse_u64(const char *s, uint64_t *out)
{
	unsigned long long v;
	char *end;

	/* strtoull() takes "-1" and leading blanks; a knob must not. */
	if (!isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

int gs_parse_u32(const char *s, uint32_t lo, uint32_t hi, uint32_t *out,
		 const char **why)
{
	uint64_t v;

	if (gs_parse_u64(s, &v)) {
		*why = "not a number";
		return -1;
	}
	if (v < lo || v > hi) {
		*why = "out of range";
		return -1;
	}
	*out = (uint32_t)v;
	return 0;
}

int gs_client_param_parse(const char *key, const char *value,
			  struct gpusched_params *p, char *msg, size_t size)
{
	const char *why;

	if (!strcmp(key, "weight")) {
		if (gs_parse_u32(value, GPUSCHED_WEIGHT_MIN, GPUSCHED_WEIGHT_MAX,
				 &p->weight, &why)) {
			snprintf(msg, size, "weight \"%s\": %s (%u..%u)", value,
				 why, GPUSCHED_WEIGHT_MIN, GPUSCHED_WEIGHT_MAX);
			return -1;
		}
		p->mask |= GPUSCHED_PARAM_WEIGHT;
	} else if (!strcmp(key, "class")) {
		if (gs_class_parse(value, &p->sched_class)) {
			snprintf(msg, size,
				 "class \"%s\": expected %s, %s or %s", value,
				 gs_pol_class_names[GPUSCHED_CLASS_LATENCY],
				 gs_pol_class_names[GPUSCHED_CLASS_NORMAL],
				 gs_pol_class_names[GPUSCHED_CLASS_BATCH]);
			return -1;
		}
		p->mask |= GPUSCHED_PARAM_CLASS;
	} else if (!strcmp(key, "cap")) {
		if (!strcasecmp(value, GS_CAP_TEXT_NONE)) {
			p->cap_pct = GPUSCHED_CAP_NONE;
		} else if (gs_parse_u32(value, 0, 100, &p->cap_pct, &why)) {
			snprintf(msg, size,
				 "cap \"%s\": %s (1..100 percent, or none)",
				 value, why);
			return -1;
		}
		p->mask |= GPUSCHED_PARAM_CAP;
	} else if (!strcmp(key, "mem_limit")) {
		uint64_t bytes;

		if (gs_mem_parse(value, &bytes, &why)) {
			snprintf(msg, size,
				 "mem_limit \"%s\": %s (bytes with K, M, G or T, N%%, or none)",
				 value, why);
			return -1;
		}
		p->mem_limit = bytes;
		p->mask |= GPUSCHED_PARAM_MEM_LIMIT;
	} else {
		snprintf(msg, size,
			 "unknown client parameter \"%s\" (weight, class, cap or mem_limit)",
			 key);
		return -1;
	}
	return 0;
}

int gs_mem_parse(const char *s, uint64_t *out, const char **why)
{
	static const char suffixes[] = "KMGT";
	unsigned long long v;
	const char *sfx;
	char *end;
	int shift = 0;

	if (!strcasecmp(s, GS_CAP_TEXT_NONE)) {
		*out = 0;
		return 0;
	}
	if (!isdigit((unsigned char)*s)) {
		*why = "not a number";
		return -1;
	}
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno) {
		*why = "out of range";
		return -1;
	}
	if (!strcmp(end, "%")) {
		if (v < 1 || v > 100) {
			*why = "a percentage must be 1..100";
			return -1;
		}
		*out = GS_MEM_PCT_FLAG | v;
		return 0;
	}
	if (*end && (sfx = strchr(suffixes, toupper((unsigned char)*end)))) {
		shift = 10 * (int)(sfx - suffixes + 1);
		end++;
		if (!strcasecmp(end, "iB") || !strcasecmp(end, "B"))
			end += strlen(end);
	}
	if (*end) {
		*why = "not a size";
		return -1;
	}
	if (v >= GS_MEM_PCT_FLAG >> shift) {
		*why = "out of range";
		return -1;
	}
	*out = (uint64_t)v << shift;
	return 0;
}

void gs_mem_format(uint64_t v, char out[GS_MEM_TEXT_LEN])
{
	static const char suffixes[] = "KMGT";
	int i = -1;

	if (!v) {
		snprintf(out, GS_MEM_TEXT_LEN, "%s", GS_CAP_TEXT_NONE);
		return;
	}
	if (v & GS_MEM_PCT_FLAG) {
		snprintf(out, GS_MEM_TEXT_LEN, "%u%%", (unsigned int)(v & 0xff));
		return;
	}
	while (i < 3 && !(v & 1023)) {
		v >>= 10;
		i++;
	}
	if (i < 0)
		snprintf(out, GS_MEM_TEXT_LEN, "%llu", (unsigned long long)v);
	else
		snprintf(out, GS_MEM_TEXT_LEN, "%llu%c", (unsigned long long)v,
			 suffixes[i]);
}

int gs_knob_parse(const char *key, const char *value, struct gs_knob_set *ks,
		  char *msg, size_t size)
{
	int k = gs_knob_find(key);
	const struct gs_pol_knob *kn;
	const char *why;

	if (k < 0) {
		char names[256];
		size_t n = 0;

		/* "a, b, ... or z", from the table */
		names[0] = '\0';
		for (k = 0; k < GS_POL_NR_KNOBS && n < sizeof(names); k++)
			n += snprintf(names + n, sizeof(names) - n, "%s%s",
				      !k ? "" : k < GS_POL_NR_KNOBS - 1 ? ", " : " or ",
				      gs_pol_knobs[k].name);
		snprintf(msg, size, "unknown GPU knob \"%s\" (%s)", key, names);
		return -1;
	}
	kn = &gs_pol_knobs[k];
	if (gs_parse_u32(value, kn->min, kn->max, &ks->val[k], &why)) {
		snprintf(msg, size, "%s \"%s\": %s (%u..%u)", key, value, why,
			 kn->min, kn->max);
		return -1;
	}
	ks->mask |= 1U << k;
	return 0;
}

void gs_uuid_format(const uint8_t u[GPUSCHED_UUID_LEN],
		    char out[GS_UUID_TEXT_LEN])
{
	snprintf(out, GS_UUID_TEXT_LEN,
		 "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9],
		 u[10], u[11], u[12], u[13], u[14], u[15]);
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

int gs_uuid_parse(const char *s, uint8_t uuid[GPUSCHED_UUID_LEN])
{
	/* Where the dashes of the canonical form go: after these bytes. */
	static const unsigned int dash_after = 1 << 3 | 1 << 5 | 1 << 7 | 1 << 9;
	bool dashes;
	int i, hi, lo;

	if (!strncasecmp(s, "GPU-", 4))
		s += 4;
	dashes = strlen(s) == 36;
	if (!dashes && strlen(s) != 32)
		return -1;
	for (i = 0; i < GPUSCHED_UUID_LEN; i++) {
		hi = hexval(s[0]);
		lo = hi < 0 ? -1 : hexval(s[1]);
		if (lo < 0)
			return -1;
		uuid[i] = (uint8_t)(hi << 4 | lo);
		s += 2;
		if (dashes && (dash_after & (1U << i))) {
			if (*s != '-')
				return -1;
			s++;
		}
	}
	return *s ? -1 : 0;
}
