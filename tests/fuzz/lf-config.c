// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: libgpusched's environment settings (libgpusched/
 * config.c, with diag.c for GPUSCHED_DEBUG's list). The input is the
 * values of the GPUSCHED_* variables, NUL separated, in the order of
 * vars[] (missing ones unset); GPUSCHED_STATS is the deprecated alias of
 * GPUSCHED_DEBUG=stats, still read. config.c is compiled into this file to
 * reach its static reader, which runs once per input on a fresh
 * configuration; every setting must come out in range, whatever the
 * environment says. GPUSCHED_DEBUG is also parsed here on its own: each
 * unknown word named must be a whole, non-empty item of the list, and the
 * facilities must be what the library took.
 */
#include "../../libgpusched/config.c"

static const char *const vars[] = {
	"GPUSCHED_DEBUG", "GPUSCHED_STATS", "GPUSCHED_WEIGHT", "GPUSCHED_CLASS",
	"GPUSCHED_CAP", "GPUSCHED_FAIL", "GPUSCHED_BACKEND", "GPUSCHED_TUNE",
	"GPUSCHED_MPS", "GPUSCHED_ARBITER", "GPUSCHED_LABEL",
	"GPUSCHED_MEM_LIMIT",
};
#define NR_VARS	(sizeof(vars) / sizeof(vars[0]))

struct named {
	const char *list;
	size_t at;		/* where the next word may start */
	int n;
};

/* Each unknown word: the next non-empty item of the list, whole. */
static void check_unknown(const char *word, size_t len, void *arg)
{
	struct named *nd = arg;
	const char *p = nd->list + nd->at;

	while (*p == ',')
		p++;
	if (word < p || len == 0 || memchr(word, ',', len) ||
	    (word[len] != ',' && word[len] != '\0') ||
	    (word > nd->list && word[-1] != ','))
		abort();
	nd->at = (size_t)(word + len - nd->list);
	nd->n++;
}

static void check_diag(void)
{
	const char *list = getenv("GPUSCHED_DEBUG");
	const char *alias = getenv("GPUSCHED_STATS");
	struct named nd = { .list = list };
	unsigned int flags;
	int n;

	n = gs_diag_parse(list, &flags, list ? check_unknown : NULL, &nd);
	if (n < 0 || (list && n != nd.n) || (flags & ~GS_DIAG_ALL) ||
	    gs_cfg.debug != !!(flags & GS_DIAG_LOG))
		abort();
	/* The alias may only add the counters. */
	if ((flags & GS_DIAG_STATS) && !gs_cfg.stats)
		abort();
	if (gs_cfg.stats && !(flags & GS_DIAG_STATS) && !(alias && *alias))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *copy = malloc(size + 1), *p = copy, *end = copy + size;
	size_t i, n;

	if (!copy)
		return 0;
	memcpy(copy, data, size);
	copy[size] = '\0';
	for (i = 0; i < NR_VARS; i++) {
		if (p < end) {
			setenv(vars[i], p, 1);
			p += strlen(p) + 1;
		} else {
			unsetenv(vars[i]);
		}
	}
	memset(&gs_cfg, 0, sizeof(gs_cfg));
	config_read();
	check_diag();
	free(copy);

	if ((gs_cfg.weight != -1 && (gs_cfg.weight < GPUSCHED_WEIGHT_MIN ||
				     gs_cfg.weight > GPUSCHED_WEIGHT_MAX)) ||
	    gs_cfg.sched_class < -1 || gs_cfg.sched_class > GPUSCHED_CLASS_MAX ||
	    gs_cfg.cap_pct < -1 || gs_cfg.cap_pct > 100 ||
	    (gs_cfg.fail != GS_FAIL_OPEN && gs_cfg.fail != GS_FAIL_CLOSED) ||
	    gs_cfg.backend > GS_BACKEND_ARBITER ||
	    gs_cfg.idle_ns < 100000 || gs_cfg.idle_ns > 10000000000ull ||
	    gs_cfg.queue < 2 || gs_cfg.queue > 1024 ||
	    gs_cfg.queue_ns < 100000 || gs_cfg.queue_ns > 10000000000ull ||
	    (gs_cfg.mem_limit && gs_cfg.mem_limit_pct) || gs_cfg.mem_limit_pct > 100)
		abort();
	n = strnlen(gs_cfg.arbiter, sizeof(gs_cfg.arbiter));
	if (n == 0 || n == sizeof(gs_cfg.arbiter))
		abort();
	n = strnlen(gs_cfg.label, sizeof(gs_cfg.label));
	if (n == sizeof(gs_cfg.label))
		abort();
	for (i = 0; i < n; i++)
		if (gs_cfg.label[i] <= 0x20 || gs_cfg.label[i] >= 0x7f)
			abort();
	return 0;
}
