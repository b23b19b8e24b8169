// SPDX-License-Identifier: GPL-2.0
/* Logging to standard error, journald-friendly; see dlog.h. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
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

void gs_log(int prio, const char *fmt, ...)
{
	static const char *const words[] = {
		[LOG_EMERG] = "emergency: ", [LOG_ALERT] = "alert: ",
		[LOG_CRIT] = "critical: ", [LOG_ERR] = "error: ",
		[LOG_WARNING] = "warning: ", [LOG_NOTICE] = "",
		[LOG_INFO] = "", [LOG_DEBUG] = "debug: ",
	};
	char line[2048];
	va_list ap;

	if (!gs_log_enabled(prio))
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	/*
	 * One fprintf() per line: glibc writes a line to unbuffered stderr
	 * in one write(), so journald never sees half a line.
	 */
	if (log_prefix)
		fprintf(stderr, "<%d>%s\n", prio & 7, line);
	else
		fprintf(stderr, "%s: %s%s\n", log_prog, words[prio & 7], line);
}
