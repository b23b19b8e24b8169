// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: libgpusched's environment settings (libgpusched/
 * config.c). The input is the values of the GPUSCHED_* variables, NUL
 * separated, in the order of vars[] (missing ones unset). config.c is
 * compiled into this file to reach its static reader, which runs once per
 * input on a fresh configuration; every setting must come out in range,
 * whatever the environment says.
 */
#include "../../libgpusched/config.c"

static const char *const vars[] = {
	"GPUSCHED_DEBUG", "GPUSCHED_STATS", "GPUSCHED_WEIGHT", "GPUSCHED_CLASS",
	"GPUSCHED_CAP", "GPUSCHED_FAIL", "GPUSCHED_BACKEND", "GPUSCHED_TUNE",
	"GPUSCHED_MPS", "GPUSCHED_ARBITER", "GPUSCHED_LABEL",
	"GPUSCHED_MEM_LIMIT",
};
#define NR_VARS	(sizeof(vars) / sizeof(vars[0]))

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
	memset(&cfg, 0, sizeof(cfg));
	config_read();
	free(copy);

	if ((cfg.weight != -1 && (cfg.weight < GPUSCHED_WEIGHT_MIN ||
				  cfg.weight > GPUSCHED_WEIGHT_MAX)) ||
	    cfg.sched_class < -1 || cfg.sched_class > GPUSCHED_CLASS_MAX ||
	    cfg.cap_pct < -1 || cfg.cap_pct > 100 ||
	    (cfg.fail != GS_FAIL_OPEN && cfg.fail != GS_FAIL_CLOSED) ||
	    cfg.backend > GS_BACKEND_ARBITER ||
	    cfg.idle_ns < 100000 || cfg.idle_ns > 10000000000ull ||
	    cfg.queue < 2 || cfg.queue > 1024 ||
	    cfg.queue_ns < 100000 || cfg.queue_ns > 10000000000ull ||
	    (cfg.mem_limit && cfg.mem_limit_pct) || cfg.mem_limit_pct > 100)
		abort();
	n = strnlen(cfg.arbiter, sizeof(cfg.arbiter));
	if (n == 0 || n == sizeof(cfg.arbiter))
		abort();
	n = strnlen(cfg.label, sizeof(cfg.label));
	if (n == sizeof(cfg.label))
		abort();
	for (i = 0; i < n; i++)
		if (cfg.label[i] <= 0x20 || cfg.label[i] >= 0x7f)
			abort();
	return 0;
}
