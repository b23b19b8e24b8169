// SPDX-License-Identifier: GPL-2.0
/* Logging to standard error, journald-friendly; see dlog.h. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dlog.h"

static const char *log_prog = "gpuschedd";
static int log_max = LOG_INFO;
static bool log_prefix = true;

void gs_log_init(const char *prog, int max)
{
	log_prog = prog;
	log_max = max;
	log_prefix = !isatty(STDERR_FILENO);
}

bool gs_log_enabled(int prio)
{
	return prio <= log_max;
}

/* Format and write one line; the caller has checked gs_log_enabled(). */
static void log_v(int prio, const char *fmt, va_list ap)
{
	static const char *const words[] = {
		[LOG_EMERG] = "emergency: ", [LOG_ALERT] = "alert: ",
		[LOG_CRIT] = "critical: ", [LOG_ERR] = "error: ",
		[LOG_WARNING] = "warning: ", [LOG_NOTICE] = "",
		[LOG_INFO] = "", [LOG_DEBUG] = "debug: ",
	};
	char line[2048];

	vsnprintf(line, sizeof(line), fmt, ap);
	/*
	 * One fprintf() per line: glibc writes a line to unbuffered stderr
	 * in one write(), so journald never sees half a line.
	 */
	if (log_prefix)
		fprintf(stderr, "<%d>%s\n", prio & 7, line);
	else
		fprintf(stderr, "%s: %s%s\n", log_prog, words[prio & 7], line);
}

void gs_log(int prio, const char *fmt, ...)
{
	va_list ap;

	if (!gs_log_enabled(prio))
		return;
	va_start(ap, fmt);
	log_v(prio, fmt, ap);
	va_end(ap);
}

bool gs_log_allow(struct gs_log_rl *rl, uint64_t now, unsigned int *missed)
{
	*missed = 0;
	if (!rl->start || now - rl->start >= GS_LOG_INTERVAL_NS) {
		rl->start = now ? now : 1;
		rl->printed = 0;
	}
	if (rl->printed >= GS_LOG_BURST) {
		rl->missed++;
		return false;
	}
	rl->printed++;
	*missed = rl->missed;
	rl->missed = 0;
	return true;
}

void gs_log_rl_(struct gs_log_rl *rl, int prio, const char *fmt, ...)
{
	struct timespec ts;
	unsigned int missed;
	va_list ap;

	if (!gs_log_enabled(prio))
		return;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	if (!gs_log_allow(rl, (uint64_t)ts.tv_sec * 1000000000ull +
			  (uint64_t)ts.tv_nsec, &missed))
		return;
	if (missed)
		gs_log(prio, "%u lines like the next held back", missed);
	va_start(ap, fmt);
	log_v(prio, fmt, ap);
	va_end(ap);
}
