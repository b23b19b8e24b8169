/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Logging of gpuschedd's netlink mode to standard error. Under systemd
 * (stderr not a terminal) each line carries the sd-daemon(3) priority
 * prefix "<N>", which journald turns into the entry's priority; on a
 * terminal it reads "gpuschedd: warning: ...".
 */
#ifndef GSD_DLOG_H
#define GSD_DLOG_H

#include <stdbool.h>
#include <syslog.h>

/* @max: the least important priority logged (LOG_INFO, or LOG_DEBUG). */
void gs_log_init(const char *prog, int max);
void gs_log(int prio, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
bool gs_log_enabled(int prio);

#endif /* GSD_DLOG_H */
