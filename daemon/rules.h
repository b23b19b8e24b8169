/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Matching a client's process against the rules of a policy. The uid and
 * gid come from the token service (the credentials the client opened or
 * connected with); the executable, groups, cgroup and label are looked up
 * only when a rule asks for them, and at most once per process: from
 * /proc (procfs.c, gs_proc_init()), or given beforehand
 * (gs_proc_init_facts(), for tests and fuzzers). Matching itself
 * (rules.c) reads nothing but struct gs_proc.
 */
#ifndef GSD_RULES_H
#define GSD_RULES_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "policyfile.h"

#define GS_LABEL_ENV	"GPUSCHED_LABEL"
#define GS_LABEL_LEN	256		/* the label's bytes kept, with its NUL */
/* A command name with its NUL, as the kernel keeps it (TASK_COMM_LEN). */
#define GS_COMM_LEN	16

/* What the rules may look at, for one process. */
struct gs_proc {
	pid_t pid;
	uint32_t uid, gid;
	char comm[GS_COMM_LEN];		/* as the kernel reports it */
	const char *proc;		/* "/proc"; tests point it elsewhere */
	unsigned int loaded;		/* 1 << enum gs_match_kind: looked up */
	unsigned int known;		/* ... and found */
	uint32_t *groups;		/* supplementary groups */
	size_t nr_groups;
	char exe[PATH_MAX];		/* full path of the executable */
	char cgroup[PATH_MAX];		/* cgroup v2 path */
	char label[GS_LABEL_LEN];	/* GPUSCHED_LABEL */
	/* Finds @kind's fact, sets its bit in known if found; NULL: none. */
	void (*load)(struct gs_proc *p, enum gs_match_kind kind);
};

/*
 * procfs.c: facts from /proc/@pid, read as rules need them. @comm may be
 * NULL: it is then read from /proc when needed.
 */
void gs_proc_init(struct gs_proc *p, pid_t pid, uint32_t uid, uint32_t gid,
		  const char *comm);
void gs_proc_release(struct gs_proc *p);

/*
 * rules.c: no lookups; the caller fills in the other facts and sets their
 * bits in p->known (groups stay the caller's to free).
 */
void gs_proc_init_facts(struct gs_proc *p, uint32_t uid, uint32_t gid,
			const char *comm);

/* The first rule of @pol that matches @p, or NULL. */
const struct gs_rule *gs_rules_match(const struct gs_policy *pol,
				     struct gs_proc *p);

/**
 * gs_proc_identify() - what the module reports of a client, from /proc
 * @pid: the client's process
 * @comm: its command name, truncated as the kernel's; "?" if unreadable
 * @cgroup_id: the inode of its cgroup v2 directory; 0 if unknown
 *
 * For a token service that learns only a client's pid, uid and gid (the
 * arbiter, from SO_PEERCRED). Best effort: a process in another mount or
 * pid namespace may not be found.
 */
void gs_proc_identify(pid_t pid, char comm[GS_COMM_LEN], uint64_t *cgroup_id);

/**
 * gs_proc_start() - when a process started, from /proc/PID/stat
 * @pid: the process
 *
 * Return: its start time in clock ticks after boot, which tells a process
 * from a later one given the same pid; 0 if it cannot be read (gone, or
 * not in our pid namespace).
 */
uint64_t gs_proc_start(pid_t pid);

/*
 * procfs.c: for a token service that learns of a new client (the arbiter, from
 * SO_PEERCRED): the parameters that the first matching rule sets, in
 * *@out (only the fields in out->mask are meaningful; apply them as a
 * privileged SET_PARAMS), and the rule's name in *@rule. @label is the
 * process's GPUSCHED_LABEL as read beforehand (gs_proc_label()), NULL if
 * it has none or it is not known: the environment is not read here.
 * Returns 1 if a rule matched, 0 if none did (leave the client as it is).
 */
int gs_rules_classify(const struct gs_policy *pol, pid_t pid, uid_t uid,
		      gid_t gid, const char *label, struct gpusched_params *out,
		      const char **rule);

/**
 * gs_proc_label() - a process's GPUSCHED_LABEL, from /proc/PID/environ
 * @pid: the process
 * @buf: the label, NUL-terminated (truncated to fit)
 * @size: the size of @buf
 *
 * The environment is the process's own memory, and reading it can block
 * for as long as the process likes (it may map a FUSE file over it): call
 * it where blocking stops nobody else.
 *
 * Return: true if the process has the variable.
 */
bool gs_proc_label(pid_t pid, char *buf, size_t size);

#endif /* GSD_RULES_H */
