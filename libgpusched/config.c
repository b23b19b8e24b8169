// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Configuration from the environment, and the library's messages.
 *
 * The environment is read once, on first use, never in a constructor: a
 * program that never touches CUDA must see no output and no side effect
 * from the preloaded library, even with a bad GPUSCHED_* value.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "diag.h"
#include "internal.h"
#include "memsize.h"
#include "tune.h"

struct gs_config gs_cfg;
atomic_bool gs_cfg_ready;
static pthread_once_t cfg_once = PTHREAD_ONCE_INIT;

uint64_t gs_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * One line on standard error: "gpusched[PID]: ", for a log line (@stamp)
 * CLOCK_MONOTONIC seconds then (so that the lines of several processes,
 * and the times the status page gives, can be put side by side), and the
 * message.
 */
static void gs_vlog(bool stamp, const char *fmt, va_list ap)
{
	char buf[512];
	uint64_t t;
	int n, m;

	/* One write(2) per message, so lines of several threads and
	 * processes do not interleave; stdio's buffers may not be usable.
	 */
	n = snprintf(buf, sizeof(buf), "gpusched[%d]: ", (int)getpid());
	if (stamp) {
		t = gs_now_ns();
		n += snprintf(buf + n, sizeof(buf) - (size_t)n, "%llu.%06llu: ",
			      (unsigned long long)(t / 1000000000ull),
			      (unsigned long long)(t % 1000000000ull / 1000));
	}
	m = vsnprintf(buf + n, sizeof(buf) - (size_t)n - 1, fmt, ap);
	if (m < 0)
		return;
	n += m;
	if (n > (int)sizeof(buf) - 2)
		n = (int)sizeof(buf) - 2;
	buf[n++] = '\n';
	if (write(STDERR_FILENO, buf, (size_t)n) < 0)
		return;
}

void gs_log(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	gs_vlog(false, fmt, ap);
	va_end(ap);
}

void gs_debug(const char *fmt, ...)
{
	va_list ap;

	if (!gs_config()->debug)
		return;
	va_start(ap, fmt);
	gs_vlog(true, fmt, ap);
	va_end(ap);
}

void gs_format_uuid(const unsigned char u[16], char out[42])
{
	snprintf(out, 42,
		 "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9],
		 u[10], u[11], u[12], u[13], u[14], u[15]);
}

/* An integer in [lo, hi], else the default with one warning. */
static long env_long(const char *name, long lo, long hi, long def,
		     const char *unit)
{
	const char *s = getenv(name);
	char *end;
	long v;

	if (!s || !*s)
		return def;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || end == s || v < lo || v > hi) {
		gs_log("%s=\"%s\" is not a number from %ld to %ld%s; ignoring it",
		       name, s, lo, hi, unit);
		return def;
	}
	return v;
}

/* One of @words (index), else @def with one warning. */
static int env_word(const char *name, const char *const *words, int n,
		    int def, const char *expect)
{
	const char *s = getenv(name);

	if (!s || !*s)
		return def;
	for (int i = 0; i < n; i++)
		if (!strcmp(s, words[i]))
			return i;
	gs_log("%s=\"%s\" is not %s; ignoring it", name, s, expect);
	return def;
}

static bool env_bool_def(const char *name, bool def)
{
	static const char *const words[] = { "0", "1", "no", "yes", "off", "on" };

	return env_word(name, words, 6, def, "0 or 1") & 1;
}

static bool env_bool(const char *name)
{
	return env_bool_def(name, false);
}

/*
 * The internal constants (tune.h) that the tests may override, in
 * GPUSCHED_TUNE=name=value,... (later entries win). Not for users: what
 * they set is policy and deployment, above.
 */
static long t_idle_us = GS_IDLE_US, t_idle_wanted_us = -1, t_queue = GS_QUEUE,
	t_queue_us = GS_QUEUE_US, t_queue_alone_us = GS_QUEUE_ALONE_US,
	t_queue_latency_us = -1, t_handover_us = -1, t_spin_us = GS_SPIN_US,
	t_latency_predict = 1, t_beside = 1;

static const struct {
	const char *name;
	long *v;
	long lo, hi;
} tunables[] = {
	{ "idle_us", &t_idle_us, 100, 10000000 },
	{ "idle_wanted_us", &t_idle_wanted_us, 0, 10000000 },
	{ "queue", &t_queue, 2, 1024 },
	{ "queue_us", &t_queue_us, 100, 10000000 },
	{ "queue_alone_us", &t_queue_alone_us, 50, 10000000 },
	{ "queue_latency_us", &t_queue_latency_us, 50, 10000000 },
	{ "handover_us", &t_handover_us, 0, 100000 },
	{ "spin_us", &t_spin_us, 0, 10000 },
	{ "latency_predict", &t_latency_predict, 0, 1 },
	{ "beside", &t_beside, 0, 1 },
};

static void tune_one(const char *s, size_t n)
{
	const char *eq = memchr(s, '=', n);
	char *end;
	long v;

	for (size_t i = 0; eq && i < sizeof(tunables) / sizeof(tunables[0]); i++) {
		if (strlen(tunables[i].name) != (size_t)(eq - s) ||
		    memcmp(s, tunables[i].name, (size_t)(eq - s)))
			continue;
		errno = 0;
		v = strtol(eq + 1, &end, 10);
		if (!errno && end == s + n && end != eq + 1 &&
		    v >= tunables[i].lo && v <= tunables[i].hi) {
			*tunables[i].v = v;
			return;
		}
		break;
	}
	gs_log("GPUSCHED_TUNE: ignoring \"%.*s\"", (int)n, s);
}

static void tune_read(void)
{
	const char *s = getenv("GPUSCHED_TUNE");

	while (s && *s) {
		size_t n = strcspn(s, ",");

		if (n)
			tune_one(s, n);
		s += n + (s[n] == ',');
	}
	gs_cfg.idle_ns = 1000ull * (uint64_t)t_idle_us;
	gs_cfg.idle_wanted_ns = t_idle_wanted_us < 0 ? (uint64_t)-1 :
			     1000ull * (uint64_t)t_idle_wanted_us;
	gs_cfg.queue = (unsigned int)t_queue;
	gs_cfg.queue_ns = 1000ull * (uint64_t)t_queue_us;
	gs_cfg.queue_alone_ns = 1000ull * (uint64_t)t_queue_alone_us;
	gs_cfg.queue_latency_ns = t_queue_latency_us < 0 ? 0 :
			       1000ull * (uint64_t)t_queue_latency_us;
	gs_cfg.handover_set = t_handover_us >= 0;
	gs_cfg.handover_ns = 1000ull * (uint64_t)(t_handover_us < 0 ? GS_HANDOVER_US :
					       t_handover_us);
	gs_cfg.spin_ns = 1000ull * (uint64_t)t_spin_us;
	gs_cfg.latency_predict = t_latency_predict;
	gs_cfg.beside = t_beside;
}

static void diag_unknown(const char *word, size_t len, void *arg)
{
	(void)arg;
	gs_log("GPUSCHED_DEBUG: ignoring \"%.*s\" (not log, stats, all, 1 or 0)",
	       (int)len, word);
}

/*
 * GPUSCHED_DEBUG, the diagnostics: a list of facilities (diag.h). The
 * counters had a variable of their own, GPUSCHED_STATS=1: still read, so
 * that scripts that set it keep their counters, and named once on stderr
 * with what replaced it. It is not documented.
 */
static void diag_read(void)
{
	const char *s = getenv("GPUSCHED_STATS");
	unsigned int diag;

	gs_diag_parse(getenv("GPUSCHED_DEBUG"), &diag, diag_unknown, NULL);
	if (s && *s) {
		if (env_bool("GPUSCHED_STATS"))
			diag |= GS_DIAG_STATS;
		gs_log("GPUSCHED_STATS is deprecated; use GPUSCHED_DEBUG=stats");
	}
	gs_cfg.debug = diag & GS_DIAG_LOG;
	gs_cfg.stats = diag & GS_DIAG_STATS;
}

static void config_read(void)
{
	static const char *const classes[] = { "latency", "normal", "batch" };
	static const char *const fails[] = { "open", "closed" };
	static const char *const backends[] = { "auto", "kmod", "arbiter" };
	const char *s;
	bool mps;

	/* GPUSCHED_DEBUG first: gs_debug() calls gs_config(). */
	diag_read();
	gs_cfg.weight = (int)env_long("GPUSCHED_WEIGHT", GPUSCHED_WEIGHT_MIN,
				   GPUSCHED_WEIGHT_MAX, -1, "");
	gs_cfg.sched_class = env_word("GPUSCHED_CLASS", classes, 3, -1,
				   "latency, normal or batch");
	gs_cfg.cap_pct = (int)env_long("GPUSCHED_CAP", 0, 100, -1,
				    " (percent, 0 for no cap)");
	s = getenv("GPUSCHED_MEM_LIMIT");
	if (s && *s && gs_mem_size_parse(s, &gs_cfg.mem_limit, &gs_cfg.mem_limit_pct))
		gs_log("GPUSCHED_MEM_LIMIT=\"%s\" is not a size (bytes with an optional K, M, G or T suffix) or a percentage from 1%% to 100%%; ignoring it",
		       s);
	gs_cfg.fail = env_word("GPUSCHED_FAIL", fails, 2, GS_FAIL_OPEN,
			    "open or closed");
	gs_cfg.backend = env_word("GPUSCHED_BACKEND", backends, 3,
			       GS_BACKEND_AUTO, "auto, kmod or arbiter");
	tune_read();
	/* Under MPS the GPU runs contexts side by side: latency-class work
	 * need not wait for the token, which then divides the time of the
	 * others; and those others ask MPS for its lower client priority,
	 * so that the SMs their kernels free go to latency work first.
	 */
	mps = env_bool("GPUSCHED_MPS");
	gs_cfg.mps_beside = mps && gs_cfg.sched_class == GPUSCHED_CLASS_LATENCY;
	gs_cfg.mps_below = mps && gs_cfg.sched_class != GPUSCHED_CLASS_LATENCY;

	s = getenv("GPUSCHED_ARBITER");
	if (s && *s && strlen(s) < sizeof(gs_cfg.arbiter)) {
		strcpy(gs_cfg.arbiter, s);
	} else {
		if (s && *s)
			gs_log("GPUSCHED_ARBITER is longer than %zu bytes; using %s",
			       sizeof(gs_cfg.arbiter) - 1, GPUSCHED_ARBITER_SOCKET);
		strcpy(gs_cfg.arbiter, GPUSCHED_ARBITER_SOCKET);
	}

	s = getenv("GPUSCHED_LABEL");
	if (s && *s) {
		size_t n = strlen(s);
		bool ok = n < sizeof(gs_cfg.label);

		for (size_t i = 0; ok && i < n; i++)
			ok = s[i] > 0x20 && s[i] < 0x7f;
		if (ok)
			memcpy(gs_cfg.label, s, n + 1);
		else
			gs_log("GPUSCHED_LABEL must be 1 to %zu printable characters without spaces; ignoring it",
			       sizeof(gs_cfg.label) - 1);
	}
}

static void config_once(void)
{
	config_read();
	/* Released: whoever sees the flag sees the configuration. */
	atomic_store_explicit(&gs_cfg_ready, true, memory_order_release);
}

const struct gs_config *gs_config_read(void)
{
	pthread_once(&cfg_once, config_once);
	return &gs_cfg;
}
