// SPDX-License-Identifier: GPL-2.0
/*
 * spank_gpusched: Slurm jobs under gpusched. Adds --gpu-weight,
 * --gpu-class and --gpu-cap to srun, salloc and sbatch, and runs each task
 * under libgpusched with what they asked for, labelled with the job:
 * LD_PRELOAD, GPUSCHED_WEIGHT, GPUSCHED_CLASS, GPUSCHED_CAP and
 * GPUSCHED_LABEL=slurm-JOBID, set in slurm_spank_task_init.
 *
 * These are requests from the user's environment, which the user controls:
 * without CAP_SYS_NICE a client may only lower its own share, so a weight
 * above the default, or the latency class, takes root or a gpuschedd rule
 * on the job's cgroup (admin-guide.md, "Slurm").
 *
 * plugstack.conf:
 *   optional /usr/lib/x86_64-linux-gnu/gpusched/spank_gpusched.so [ARG]...
 * ARGs: library=PATH (libgpusched.so.1), arbiter=PATH (the arbiter's
 * socket, for GPUSCHED_ARBITER), shard_weight=N (a job that asked for no
 * weight gets N times its gres/shard count on the node), preload=0 (only
 * the GPUSCHED_* variables; the job loads the library itself).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <slurm/spank.h>
#include <linux/gpusched.h>

SPANK_PLUGIN(gpusched, 1);

#ifndef GS_SPANK_LIBRARY
#define GS_SPANK_LIBRARY "/usr/local/lib/libgpusched.so.1"
#endif

static const char *library = GS_SPANK_LIBRARY;
static const char *arbiter;
static long shard_weight;
static int preload = 1;

/* What the job asked for; -1: nothing. */
static long opt_weight = -1, opt_cap = -1;
static const char *opt_class;

static int parse_long(const char *s, long lo, long hi, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

static int cb_weight(int val, const char *arg, int remote)
{
	(void)val;
	(void)remote;
	if (!arg || parse_long(arg, GPUSCHED_WEIGHT_MIN, GPUSCHED_WEIGHT_MAX, &opt_weight)) {
		slurm_error("gpusched: --gpu-weight=%s: expected %d to %d",
			    arg ? arg : "", GPUSCHED_WEIGHT_MIN, GPUSCHED_WEIGHT_MAX);
		return ESPANK_BAD_ARG;
	}
	return ESPANK_SUCCESS;
}

static int cb_class(int val, const char *arg, int remote)
{
	static const char *const classes[] = { "latency", "normal", "batch" };

	(void)val;
	(void)remote;
	for (size_t i = 0; arg && i < sizeof(classes) / sizeof(classes[0]); i++) {
		if (!strcmp(arg, classes[i])) {
			opt_class = classes[i];
			return ESPANK_SUCCESS;
		}
	}
	slurm_error("gpusched: --gpu-class=%s: expected latency, normal or batch",
		    arg ? arg : "");
	return ESPANK_BAD_ARG;
}

static int cb_cap(int val, const char *arg, int remote)
{
	(void)val;
	(void)remote;
	if (!arg || parse_long(arg, 1, 100, &opt_cap)) {
		slurm_error("gpusched: --gpu-cap=%s: expected a percentage, 1 to 100",
			    arg ? arg : "");
		return ESPANK_BAD_ARG;
	}
	return ESPANK_SUCCESS;
}

struct spank_option spank_options[] = {
	{ "gpu-weight", "N",
	  "GPU time weight under gpusched (1-10000; 100 is the default)", 1, 0, cb_weight },
	{ "gpu-class", "CLASS",
	  "gpusched class: latency, normal or batch", 1, 0, cb_class },
	{ "gpu-cap", "PCT",
	  "most GPU time the job may take under gpusched, in percent", 1, 0, cb_cap },
	SPANK_OPTIONS_TABLE_END
};

static int parse_args(int ac, char **av)
{
	for (int i = 0; i < ac; i++) {
		const char *a = av[i];
		int ok = 1;

		if (!strncmp(a, "library=", 8))
			library = a + 8;
		else if (!strncmp(a, "arbiter=", 8))
			arbiter = a + 8;
		else if (!strncmp(a, "shard_weight=", 13))
			ok = !parse_long(a + 13, 1, GPUSCHED_WEIGHT_MAX, &shard_weight);
		else if (!strcmp(a, "preload=0") || !strcmp(a, "preload=1"))
			preload = a[8] == '1';
		else
			ok = 0;
		if (!ok) {
			slurm_error("gpusched: plugstack.conf: unknown or bad argument \"%s\"", a);
			return ESPANK_BAD_ARG;
		}
	}
	return ESPANK_SUCCESS;
}

int slurm_spank_init(spank_t sp, int ac, char **av)
{
	(void)sp;
	return parse_args(ac, av);
}

static int set(spank_t sp, const char *name, const char *value)
{
	if (spank_setenv(sp, name, value, 1) != ESPANK_SUCCESS) {
		slurm_error("gpusched: cannot set %s in the task's environment", name);
		return -1;
	}
	return 0;
}

static int set_long(spank_t sp, const char *name, long v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%ld", v);
	return set(sp, name, buf);
}

/*
 * libgpusched first in LD_PRELOAD, ahead of what the job had, all of which
 * stays: a value too long to read whole is read again into a larger
 * buffer, never cut or dropped.
 */
static int set_preload(spank_t sp)
{
	size_t size = 4096, n;
	char *old = NULL, *val;
	spank_err_t err;
	int ret;

	for (;;) {
		char *p = realloc(old, size);

		if (!p) {
			free(old);
			slurm_error("gpusched: out of memory for LD_PRELOAD");
			return -1;
		}
		old = p;
		err = spank_getenv(sp, "LD_PRELOAD", old, (int)size);
		if (err != ESPANK_NOSPACE || size >= (1u << 20))
			break;
		size *= 2;
	}
	if (err == ESPANK_NOSPACE) {
		free(old);
		slurm_error("gpusched: LD_PRELOAD is over 1 MiB: left as it is, libgpusched not added");
		return -1;
	}
	if (err != ESPANK_SUCCESS)
		old[0] = '\0';
	if (strstr(old, library)) {
		free(old);
		return 0;
	}
	n = strlen(library) + 1 + strlen(old) + 1;
	val = malloc(n);
	if (!val) {
		free(old);
		slurm_error("gpusched: out of memory for LD_PRELOAD");
		return -1;
	}
	snprintf(val, n, "%s%s%s", library, old[0] ? ":" : "", old);
	ret = set(sp, "LD_PRELOAD", val);
	free(val);
	free(old);
	return ret;
}

/* gres/shard: N shards on this node make the weight N * shard_weight. */
static long shard_based_weight(spank_t sp)
{
	char buf[32];
	long n;

	if (!shard_weight ||
	    spank_getenv(sp, "SLURM_SHARDS_ON_NODE", buf, sizeof(buf)) != ESPANK_SUCCESS ||
	    parse_long(buf, 1, GPUSCHED_WEIGHT_MAX, &n))
		return -1;
	n *= shard_weight;
	return n > GPUSCHED_WEIGHT_MAX ? GPUSCHED_WEIGHT_MAX : n;
}

int slurm_spank_task_init(spank_t sp, int ac, char **av)
{
	uint32_t job_id = 0;
	char label[32];
	long weight = opt_weight;

	(void)ac;
	(void)av;
	if (!spank_remote(sp))
		return ESPANK_SUCCESS;
	if (weight < 0)
		weight = shard_based_weight(sp);
	if (spank_get_item(sp, S_JOB_ID, &job_id) != ESPANK_SUCCESS)
		job_id = 0;
	snprintf(label, sizeof(label), "slurm-%u", job_id);

	if ((preload && set_preload(sp)) ||
	    set(sp, "GPUSCHED_LABEL", label) ||
	    (weight >= 0 && set_long(sp, "GPUSCHED_WEIGHT", weight)) ||
	    (opt_class && set(sp, "GPUSCHED_CLASS", opt_class)) ||
	    (opt_cap >= 0 && set_long(sp, "GPUSCHED_CAP", opt_cap)) ||
	    (arbiter && set(sp, "GPUSCHED_ARBITER", arbiter)))
		return ESPANK_ERROR;
	return ESPANK_SUCCESS;
}
