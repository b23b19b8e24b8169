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
#include <stdint.h>
#include <syslog.h>

/* @max: the least important priority logged (LOG_INFO, or LOG_DEBUG). */
void gs_log_init(const char *prog, int max);
void gs_log(int prio, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
bool gs_log_enabled(int prio);

/*
 * A line a client can make us write again and again (a revocation) is let
 * through GS_LOG_BURST times an interval of GS_LOG_INTERVAL_NS at its call
 * site, as the module's pr_warn_ratelimited() lines are: a log that fills
 * stops the daemon's writes, and a flood hides every other line.
 */
#define GS_LOG_BURST		10
#define GS_LOG_INTERVAL_NS	5000000000ull

/* One call site's lines: its interval, and those let through and held. */
struct gs_log_rl {
	uint64_t start;		/* the interval's start; 0: none yet */
	unsigned int printed;	/* let through in it */
	unsigned int missed;	/* held back since the last one let through */
};

/**
 * gs_log_allow() - may a line of @rl's call site be written at @now?
 * @rl: the call site's state
 * @now: CLOCK_MONOTONIC time, ns
 * @missed: set to the lines held back before this one, where it may
 *
 * Return: true for the first GS_LOG_BURST lines of each interval.
 */
bool gs_log_allow(struct gs_log_rl *rl, uint64_t now, unsigned int *missed);

/* gs_log(), at most GS_LOG_BURST lines a GS_LOG_INTERVAL_NS from this call site. */
#define gs_log_limited(prio, ...)					\
	do {								\
		static struct gs_log_rl gs_rl_;				\
		gs_log_rl_(&gs_rl_, prio, __VA_ARGS__);			\
	} while (0)
void gs_log_rl_(struct gs_log_rl *rl, int prio, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif /* GSD_DLOG_H */
