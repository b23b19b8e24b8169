/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A client's GPUSCHED_LABEL, read by threads of their own for an event
 * loop that must not block (the arbiter's, the netlink mode's); see
 * labels.c for why. One set of readers per process; the event loop calls
 * all of these.
 */
#ifndef GSD_LABELS_H
#define GSD_LABELS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* Start: the descriptor that becomes readable when reads ended; -1: error. */
int gs_labels_init(void);

/*
 * Read the label of process @pid of user @uid, started at @start
 * (gs_proc_start(); 0: not known), as read @id, the caller's number for
 * it, never used twice. The answer comes through gs_labels_reap(), once;
 * false: it cannot be read (out of memory), and no answer comes.
 */
bool gs_labels_want(uint64_t id, pid_t pid, uid_t uid, uint64_t start);

/* Once the descriptor is readable: @got(@id, label or NULL: none) for each. */
void gs_labels_reap(void (*got)(uint64_t id, const char *label));

/* Read @id is not wanted any more: if it waits in line, it is not started. */
void gs_labels_forget(uint64_t id);

#endif /* GSD_LABELS_H */
