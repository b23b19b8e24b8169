// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: gpuschedd's policy file parser (daemon/policyfile.c),
 * on any bytes. A parse either fails with "NAME:..." in the error buffer or
 * gives a policy whose every value is in range; both free cleanly (ASan,
 * UBSan and LeakSanitizer watch).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gs_abi.h"
#include "policyfile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t uuid[GPUSCHED_UUID_LEN] = { 0x8c, 0x6f };
	struct gs_knob_set ks;
	struct gs_policy *pol;
	char err[256];
	size_t i;
	int k;

	pol = gs_policy_parse("fuzz.conf", (const char *)data, size, err,
			      sizeof(err));
	if (!pol) {
		if (strncmp(err, "fuzz.conf", 9) || !memchr(err, '\0', sizeof(err)))
			abort();	/* a person needs "FILE:LINE: reason" */
		return 0;
	}
	for (i = 0; i < pol->nr_rules; i++) {
		const struct gpusched_params *p = &pol->rules[i].set;

		if (p->mask & ~GS_PARAM_MASK ||
		    (p->mask & GPUSCHED_PARAM_WEIGHT &&
		     (p->weight < GPUSCHED_WEIGHT_MIN || p->weight > GPUSCHED_WEIGHT_MAX)) ||
		    (p->mask & GPUSCHED_PARAM_CLASS && p->sched_class > GPUSCHED_CLASS_MAX) ||
		    (p->mask & GPUSCHED_PARAM_CAP && p->cap_pct > 100) ||
		    /* bytes below the percent flag, or 1..100 percent */
		    (p->mask & GPUSCHED_PARAM_MEM_LIMIT &&
		     (p->mem_limit & GS_MEM_PCT_FLAG) &&
		     ((p->mem_limit & ~GS_MEM_PCT_FLAG) < 1 ||
		      (p->mem_limit & ~GS_MEM_PCT_FLAG) > 100)))
			abort();
	}
	for (i = 0; i <= pol->nr_gpus; i++) {
		gs_policy_gpu_knobs(pol, i < pol->nr_gpus ? pol->gpus[i].uuid : uuid,
				    &ks);
		for (k = 0; k < GS_POL_NR_KNOBS; k++)
			if (ks.mask & (1u << k) &&
			    (ks.val[k] < gs_pol_knobs[k].min || ks.val[k] > gs_pol_knobs[k].max))
				abort();
	}
	gs_policy_free(pol);
	return 0;
}
