// SPDX-License-Identifier: GPL-2.0
/* The policy in force, for both modes of gpuschedd; see policyload.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>

#include "dlog.h"
#include "policyload.h"

int gs_policy_reload(const struct gs_policy_source *src, bool reload,
		     struct gs_policy **pol, uint64_t **rule_hits,
		     struct gs_daemon_stats *st)
{
	struct gs_policy *p;
	bool absent = false;
	char err[1024];
	struct stat sb;
	uint64_t *hits;

	if (!src->given && stat(src->path, &sb) && errno == ENOENT) {
		absent = true;
		p = gs_policy_parse(src->path, "", 0, err, sizeof(err));
	} else {
		p = gs_policy_load(src->path, err, sizeof(err));
	}
	hits = p ? calloc(p->nr_rules + 1, sizeof(*hits)) : NULL;
	if (!hits) {
		if (p)
			snprintf(err, sizeof(err), "out of memory");
		gs_policy_free(p);
		st->last_reload_ok = false;
		st->reloads_failed += reload;
		gs_log(LOG_ERR, "%s%s", err,
		       reload ? "; keeping the policy in force" : "");
		return -1;
	}
	gs_policy_free(*pol);
	free(*rule_hits);
	*pol = p;
	*rule_hits = hits;
	st->pol = p;
	st->rule_hits = hits;
	st->last_reload_ok = true;
	st->last_reload_ok_time = (double)time(NULL);
	st->reloads_ok += reload;
	if (absent)
		gs_log(LOG_NOTICE, "no policy file %s: %s", src->path, src->absent);
	else
		gs_log(LOG_NOTICE, "%s %s: %zu rules, %zu GPU sections%s",
		       reload ? "reloaded" : "loaded", src->path, p->nr_rules,
		       p->nr_gpus, p->gpu_all.mask || p->gpu_all_admit ? " and [gpu]" : "");
	return 0;
}
