// SPDX-License-Identifier: GPL-2.0
/*
 * The facts of a process that rules look at, from /proc. A client
 * attaches, the daemon hears of it within microseconds and looks at the
 * process here. The process may have exited by then; whatever cannot be
 * read simply does not match, and the kernel drops the client with its
 * file anyway.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "rules.h"

/* environ is at most a few MiB (ARG_MAX); read it in one buffer. */
#define ENVIRON_MAX	(16 << 20)

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

static void load(struct gs_proc *p, enum gs_match_kind kind)
{
	static void (*const loaders[GS_NR_MATCH])(struct gs_proc *) = {
		[GS_MATCH_GROUP] = load_groups,
		[GS_MATCH_EXE] = load_exe,
		[GS_MATCH_CGROUP] = load_cgroup,
		[GS_MATCH_LABEL] = load_label,
	};

	if (loaders[kind])
		loaders[kind](p);
}

void gs_proc_init(struct gs_proc *p, pid_t pid, uint32_t uid, uint32_t gid,
		  const char *comm)
{
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->uid = uid;
	p->gid = gid;
	p->proc = "/proc";
	p->load = load;
	if (comm)
		snprintf(p->comm, sizeof(p->comm), "%s", comm);
}

void gs_proc_release(struct gs_proc *p)
{
	free(p->groups);
	p->groups = NULL;
	p->nr_groups = 0;
}

void gs_proc_identify(pid_t pid, char comm[GS_COMM_LEN], uint64_t *cgroup_id)
{
	char dir[sizeof("/sys/fs/cgroup") + PATH_MAX];
	struct gs_proc p;
	struct stat sb;

	gs_proc_init(&p, pid, 0, 0, NULL);
	load_comm(&p);
	snprintf(comm, GS_COMM_LEN, "%s", p.comm[0] ? p.comm : "?");
	*cgroup_id = 0;
	load_cgroup(&p);
	if (p.known & (1U << GS_MATCH_CGROUP)) {
		snprintf(dir, sizeof(dir), "/sys/fs/cgroup%s", p.cgroup);
		if (!stat(dir, &sb))
			*cgroup_id = sb.st_ino;
	}
	gs_proc_release(&p);
}

uint64_t gs_proc_start(pid_t pid)
{
	unsigned long long start = 0;
	struct gs_proc p;
	char *buf, *s;
	int field;

	gs_proc_init(&p, pid, 0, 0, NULL);
	buf = read_proc(&p, "stat", 4096, NULL);
	/*
	 * The command in parentheses may hold anything: the fields follow
	 * the last ')', from the state (field 3) to the start time (22).
	 */
	s = buf ? strrchr(buf, ')') : NULL;
	for (field = 2; s && field < 22; field++) {
		s = strchr(s + 1, ' ');
		if (s && field == 21 && sscanf(s + 1, "%llu", &start) != 1)
			start = 0;
	}
	free(buf);
	gs_proc_release(&p);
	return start;
}

bool gs_proc_label(pid_t pid, char *buf, size_t size)
{
	struct gs_proc p;
	bool found;

	gs_proc_init(&p, pid, 0, 0, NULL);
	load_label(&p);
	found = p.known & (1U << GS_MATCH_LABEL);
	snprintf(buf, size, "%s", found ? p.label : "");
	gs_proc_release(&p);
	return found;
}

int gs_rules_classify(const struct gs_policy *pol, pid_t pid, uid_t uid,
		      gid_t gid, const char *label, struct gpusched_params *out,
		      const char **rule)
{
	const struct gs_rule *r;
	struct gs_proc p;

	gs_proc_init(&p, pid, uid, gid, NULL);
	p.loaded |= 1U << GS_MATCH_LABEL;
	if (label) {
		snprintf(p.label, sizeof(p.label), "%s", label);
		p.known |= 1U << GS_MATCH_LABEL;
	}
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
