// SPDX-License-Identifier: GPL-2.0
/*
 * Rule matching, a function of a process's facts (struct gs_proc): the
 * uid, gid and comm given, the others looked up through p->load when a
 * rule first asks for them (procfs.c reads them from /proc; a test or a
 * fuzzer gives them all at once). Whatever cannot be found simply does
 * not match.
 *
 * The executable name and the label are chosen by the process's owner: a
 * rule that grants more than its user would otherwise get should also
 * match on user, group or cgroup (gpusched.conf(5) says so).
 */
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>

#include "rules.h"

void gs_proc_init_facts(struct gs_proc *p, uint32_t uid, uint32_t gid,
			const char *comm)
{
	memset(p, 0, sizeof(*p));
	p->uid = uid;
	p->gid = gid;
	p->loaded = ~0U;
	if (comm)
		snprintf(p->comm, sizeof(p->comm), "%s", comm);
}

/* Look up @kind once; true if it is known. */
static bool need(struct gs_proc *p, enum gs_match_kind kind)
{
	unsigned int bit = 1U << kind;

	if (!(p->loaded & bit)) {
		p->loaded |= bit;
		if (p->load)
			p->load(p, kind);
	}
	return p->known & bit;
}

static bool id_in(const struct gs_match *m, uint32_t id)
{
	size_t i;

	for (i = 0; i < m->n; i++)
		if (m->ids[i] == id)
			return true;
	return false;
}

/* "/a" is a prefix of "/a" and "/a/b", not of "/ab". "/" of everything. */
static bool cgroup_under(const char *path, const char *prefix)
{
	size_t n = strlen(prefix);

	if (!strcmp(prefix, "/"))
		return true;
	return !strncmp(path, prefix, n) && (path[n] == '\0' || path[n] == '/');
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

static bool match_one(const struct gs_match *m, enum gs_match_kind kind,
		      struct gs_proc *p)
{
	size_t i, j;

	switch (kind) {
	case GS_MATCH_USER:
		return id_in(m, p->uid);
	case GS_MATCH_GROUP:
		if (id_in(m, p->gid))
			return true;
		if (!need(p, kind))
			return false;
		for (j = 0; j < p->nr_groups; j++)
			if (id_in(m, p->groups[j]))
				return true;
		return false;
	case GS_MATCH_EXE: {
		bool have_exe = need(p, kind);
		const char *name = have_exe ? base_name(p->exe) : p->comm;

		for (i = 0; i < m->n; i++) {
			/* A pattern with a slash is on the full path. */
			if (strchr(m->strs[i], '/')) {
				if (have_exe && !fnmatch(m->strs[i], p->exe, 0))
					return true;
			} else if (*name && !fnmatch(m->strs[i], name, 0)) {
				return true;
			}
		}
		return false;
	}
	case GS_MATCH_CGROUP:
		if (!need(p, kind))
			return false;
		for (i = 0; i < m->n; i++)
			if (cgroup_under(p->cgroup, m->strs[i]))
				return true;
		return false;
	case GS_MATCH_LABEL:
		if (!need(p, kind))
			return false;
		for (i = 0; i < m->n; i++)
			if (!fnmatch(m->strs[i], p->label, 0))
				return true;
		return false;
	default:
		return false;
	}
}

const struct gs_rule *gs_rules_match(const struct gs_policy *pol,
				     struct gs_proc *p)
{
	size_t i;
	int k;

	for (i = 0; i < pol->nr_rules; i++) {
		const struct gs_rule *r = &pol->rules[i];
		bool ok = true;

		/* In enum order: the cheap keys first, /proc last. */
		for (k = 0; ok && k < GS_NR_MATCH; k++)
			if (r->match[k].n)
				ok = match_one(&r->match[k], k, p);
		if (ok)
			return r;
	}
	return NULL;
}
