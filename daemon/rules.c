// SPDX-License-Identifier: GPL-2.0
/*
 * Rule matching. A client attaches, the daemon hears of it within
 * microseconds and looks at the process in /proc. The process may have
 * exited by then; whatever cannot be read simply does not match, and the
 * kernel drops the client with its file anyway.
 *
 * The executable name and the label are chosen by the process's owner: a
 * rule that grants more than its user would otherwise get should also
 * match on user, group or cgroup (gpusched.conf(5) says so).
 */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rules.h"

/* environ is at most a few MiB (ARG_MAX); read it in one buffer. */
#define ENVIRON_MAX	(16 << 20)

void gs_proc_init(struct gs_proc *p, pid_t pid, uint32_t uid, uint32_t gid,
		  const char *comm)
{
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->uid = uid;
	p->gid = gid;
	p->proc = "/proc";
	if (comm)
		snprintf(p->comm, sizeof(p->comm), "%s", comm);
}

void gs_proc_release(struct gs_proc *p)
{
	free(p->groups);
	p->groups = NULL;
	p->nr_groups = 0;
}

/* The whole of /proc/PID/@name, NUL-terminated; NULL if unreadable. */
static char *read_proc(const struct gs_proc *p, const char *name, size_t max,
		       size_t *lenp)
{
	size_t len = 0, cap = 4096;
	char path[64], *buf, *nbuf;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%d/%s", p->proc, (int)p->pid, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	buf = malloc(cap + 1);
	while (buf) {
		n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n < 0) {
				free(buf);
				buf = NULL;
			}
			break;
		}
		len += (size_t)n;
		if (len < cap)
			continue;
		if (cap >= max)
			break;		/* truncated: what we have will do */
		cap *= 2;
		nbuf = realloc(buf, cap + 1);
		if (!nbuf)
			free(buf);
		buf = nbuf;
	}
	close(fd);
	if (buf) {
		buf[len] = '\0';
		if (lenp)
			*lenp = len;
	}
	return buf;
}

static void load_comm(struct gs_proc *p)
{
	char *s;

	if (p->comm[0])
		return;
	s = read_proc(p, "comm", 64, NULL);
	if (!s)
		return;
	s[strcspn(s, "\n")] = '\0';
	snprintf(p->comm, sizeof(p->comm), "%s", s);
	free(s);
}

static void load_groups(struct gs_proc *p)
{
	char *s = read_proc(p, "status", 1 << 16, NULL), *line, *tok, *save;
	unsigned long v;

	if (!s)
		return;
	line = strstr(s, "\nGroups:");
	if (line) {
		line += strlen("\nGroups:");
		line[strcspn(line, "\n")] = '\0';
		for (tok = strtok_r(line, " \t", &save); tok;
		     tok = strtok_r(NULL, " \t", &save)) {
			uint32_t *g = realloc(p->groups,
					      (p->nr_groups + 1) * sizeof(*g));

			if (!g)
				break;
			p->groups = g;
			v = strtoul(tok, NULL, 10);
			p->groups[p->nr_groups++] = (uint32_t)v;
		}
		p->known |= 1U << GS_MATCH_GROUP;
	}
	free(s);
}

static void load_exe(struct gs_proc *p)
{
	static const char deleted[] = " (deleted)";
	char path[64];
	ssize_t n;
	size_t len;

	snprintf(path, sizeof(path), "%s/%d/exe", p->proc, (int)p->pid);
	n = readlink(path, p->exe, sizeof(p->exe) - 1);
	if (n <= 0) {
		/* Not ours to read, or gone: match names on comm instead. */
		p->exe[0] = '\0';
		load_comm(p);
		return;
	}
	p->exe[n] = '\0';
	/* An upgraded binary still runs under its old name. */
	len = (size_t)n;
	if (len > sizeof(deleted) - 1 &&
	    !strcmp(p->exe + len - (sizeof(deleted) - 1), deleted))
		p->exe[len - (sizeof(deleted) - 1)] = '\0';
	p->known |= 1U << GS_MATCH_EXE;
}

static void load_cgroup(struct gs_proc *p)
{
	char *s = read_proc(p, "cgroup", 1 << 16, NULL), *line;

	if (!s)
		return;
	/* The v2 entry is "0::/path"; v1 entries have a controller name. */
	for (line = s; line && *line; line = strchr(line, '\n')) {
		if (*line == '\n')
			line++;
		if (!strncmp(line, "0::", 3)) {
			line += 3;
			line[strcspn(line, "\n")] = '\0';
			snprintf(p->cgroup, sizeof(p->cgroup), "%s", line);
			p->known |= 1U << GS_MATCH_CGROUP;
			break;
		}
	}
	free(s);
}

static void load_label(struct gs_proc *p)
{
	static const char key[] = GS_LABEL_ENV "=";
	size_t len, n;
	char *s = read_proc(p, "environ", ENVIRON_MAX, &len), *e;

	if (!s)
		return;
	/* Entries are NUL-terminated; the first definition wins, as getenv. */
	for (e = s; e < s + len; e += n + 1) {
		n = strnlen(e, s + len - e);
		if (n >= sizeof(key) - 1 && !memcmp(e, key, sizeof(key) - 1)) {
			snprintf(p->label, sizeof(p->label), "%.*s",
				 (int)(n - (sizeof(key) - 1)), e + sizeof(key) - 1);
			p->known |= 1U << GS_MATCH_LABEL;
			break;
		}
	}
	free(s);
}

/* Look up @kind once; true if it is known. */
static bool need(struct gs_proc *p, enum gs_match_kind kind)
{
	static void (*const load[GS_NR_MATCH])(struct gs_proc *) = {
		[GS_MATCH_GROUP] = load_groups,
		[GS_MATCH_EXE] = load_exe,
		[GS_MATCH_CGROUP] = load_cgroup,
		[GS_MATCH_LABEL] = load_label,
	};
	unsigned int bit = 1U << kind;

	if (!(p->loaded & bit)) {
		p->loaded |= bit;
		if (load[kind])
			load[kind](p);
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

int gs_rules_classify(const struct gs_policy *pol, pid_t pid, uid_t uid,
		      gid_t gid, struct gpusched_params *out,
		      const char **rule)
{
	const struct gs_rule *r;
	struct gs_proc p;

	gs_proc_init(&p, pid, uid, gid, NULL);
	r = gs_rules_match(pol, &p);
	gs_proc_release(&p);
	memset(out, 0, sizeof(*out));
	if (rule)
		*rule = r ? r->name : NULL;
	if (!r)
		return 0;
	*out = r->set;
	return 1;
}
