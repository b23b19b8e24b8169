// SPDX-License-Identifier: GPL-2.0
/*
 * The policy file parser. gpusched.conf(5) is the reference for the
 * format; in short:
 *
 *	# comment
 *	[gpu]			knobs of every GPU
 *	timeslice_us = 5000
 *	[gpu GPU-8c6f...]	knobs of one GPU, over [gpu]
 *	[rule NAME]		rules, tried in order: the first match wins
 *	user = alice, 1001	match keys: user group exe cgroup label
 *	weight = 300		actions: weight class cap mem_limit
 *	mem_admission = refuse	(in [gpu] sections) gpuschedd's, not a knob
 *
 * The first error stops the parse and is reported as "FILE:LINE: reason",
 * so that a person can go straight to the line.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "policy.h"
#include "policyfile.h"

#define GS_RULE_NAME_MAX	64

enum { SEC_NONE, SEC_GPU_ALL, SEC_GPU_ONE, SEC_RULE };

/* Actions of a rule, for duplicate keys: after the match kinds. */
enum { ACT_WEIGHT = GS_NR_MATCH, ACT_CLASS, ACT_CAP, ACT_MEM_LIMIT, NR_RULE_KEYS };

struct parser {
	const char *name;
	char *err;
	size_t errsize;
	unsigned int line;
	struct gs_policy *pol;
	int sec;
	unsigned int sec_line;
	unsigned int gpu_all_line;
	struct gs_knob_set *knobs;	/* of the [gpu] section being read */
	enum gs_mem_admit *admit;	/* its mem_admission */
	unsigned int admit_line;	/* where the section set it */
	/* Line of each key in the section being read, for duplicates. */
	unsigned int key_line[(int)NR_RULE_KEYS > (int)GS_POL_NR_KNOBS ?
			      (int)NR_RULE_KEYS : (int)GS_POL_NR_KNOBS];
};

static const char *const match_names[GS_NR_MATCH] = {
	[GS_MATCH_USER] = "user",
	[GS_MATCH_GROUP] = "group",
	[GS_MATCH_EXE] = "exe",
	[GS_MATCH_CGROUP] = "cgroup",
	[GS_MATCH_LABEL] = "label",
};

const char *gs_match_name(enum gs_match_kind kind)
{
	return kind < GS_NR_MATCH ? match_names[kind] : "?";
}

static int fail(struct parser *ps, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int fail(struct parser *ps, const char *fmt, ...)
{
	size_t n = 0;
	va_list ap;
	int len;

	if (ps->line)
		len = snprintf(ps->err, ps->errsize, "%s:%u: ", ps->name, ps->line);
	else
		len = snprintf(ps->err, ps->errsize, "%s: ", ps->name);
	if (len > 0)
		n = (size_t)len < ps->errsize ? (size_t)len : ps->errsize;
	va_start(ap, fmt);
	if (n < ps->errsize)
		vsnprintf(ps->err + n, ps->errsize - n, fmt, ap);
	va_end(ap);
	return -1;
}

static int nomem(struct parser *ps)
{
	return fail(ps, "out of memory");
}

static char *trim(char *s)
{
	char *end;

	while (isspace((unsigned char)*s))
		s++;
	end = s + strlen(s);
	while (end > s && isspace((unsigned char)end[-1]))
		*--end = '\0';
	return s;
}

/* "value  # comment": a '#' after a blank starts a comment. */
static void strip_comment(char *s)
{
	char *p;

	for (p = s; *p; p++) {
		if (*p == '#' && p > s && isspace((unsigned char)p[-1])) {
			*p = '\0';
			return;
		}
	}
}

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return false;
	return true;
}

/* A numeric id, as chown(1) takes one; (uid_t)-1 means "none" to the kernel. */
static int parse_id(const char *s, uint32_t *id)
{
	const char *why;

	return gs_parse_u32(s, 0, UINT32_MAX - 1, id, &why);
}

static int resolve_user(struct parser *ps, const char *s, uint32_t *uid)
{
	struct passwd pw, *res = NULL;
	char buf[4096];

	if (all_digits(s)) {
		if (parse_id(s, uid))
			return fail(ps, "user id \"%s\" out of range", s);
		return 0;
	}
	if (getpwnam_r(s, &pw, buf, sizeof(buf), &res) || !res)
		return fail(ps, "unknown user \"%s\" (give a name from the user database or a number)",
			    s);
	*uid = res->pw_uid;
	return 0;
}

static int resolve_group(struct parser *ps, const char *s, uint32_t *gid)
{
	struct group gr, *res = NULL;
	char buf[16384];

	if (all_digits(s)) {
		if (parse_id(s, gid))
			return fail(ps, "group id \"%s\" out of range", s);
		return 0;
	}
	if (getgrnam_r(s, &gr, buf, sizeof(buf), &res) || !res)
		return fail(ps, "unknown group \"%s\" (give a name from the group database or a number)",
			    s);
	*gid = res->gr_gid;
	return 0;
}

/* "/a//b/" -> "/a/b"; the root stays "/". In place. */
static int normalize_cgroup(struct parser *ps, char *s)
{
	char *r = s, *w = s;

	if (*s != '/')
		return fail(ps, "cgroup \"%s\" must be an absolute path in the cgroup v2 hierarchy, as in /proc/PID/cgroup (e.g. /user.slice)",
			    s);
	while (*r) {
		if (*r == '/' && w > s && w[-1] == '/') {
			r++;
			continue;
		}
		*w++ = *r++;
	}
	if (w - s > 1 && w[-1] == '/')
		w--;
	*w = '\0';
	return 0;
}

/* Add one value of a match list to @m. */
static int match_add(struct parser *ps, struct gs_match *m,
		     enum gs_match_kind kind, char *v)
{
	uint32_t id = 0;

	if (kind == GS_MATCH_USER || kind == GS_MATCH_GROUP) {
		uint32_t *ids;

		if ((kind == GS_MATCH_USER ? resolve_user : resolve_group)(ps, v, &id))
			return -1;
		ids = realloc(m->ids, (m->n + 1) * sizeof(*ids));
		if (!ids)
			return nomem(ps);
		m->ids = ids;
		m->ids[m->n++] = id;
	} else {
		char **strs, *dup;

		if (kind == GS_MATCH_CGROUP && normalize_cgroup(ps, v))
			return -1;
		dup = strdup(v);
		strs = dup ? realloc(m->strs, (m->n + 1) * sizeof(*strs)) : NULL;
		if (!strs) {
			free(dup);
			return nomem(ps);
		}
		m->strs = strs;
		m->strs[m->n++] = dup;
	}
	return 0;
}

/* "a, b c": values separated by commas, blanks or both. */
static int match_parse(struct parser *ps, struct gs_match *m,
		       enum gs_match_kind kind, char *value)
{
	char *piece = value, *next, *tok, *save;

	do {
		next = strchr(piece, ',');
		if (next)
			*next++ = '\0';
		piece = trim(piece);
		if (!*piece)
			return fail(ps, "empty value in the list of %s",
				    match_names[kind]);
		for (tok = strtok_r(piece, " \t\v\f\r", &save); tok;
		     tok = strtok_r(NULL, " \t\v\f\r", &save))
			if (match_add(ps, m, kind, tok))
				return -1;
		piece = next;
	} while (piece);
	return 0;
}

static struct gs_rule *cur_rule(struct parser *ps)
{
	return &ps->pol->rules[ps->pol->nr_rules - 1];
}

/* The section being left must make sense on its own. */
static int end_section(struct parser *ps)
{
	unsigned int line = ps->line;
	int err = 0;

	if (ps->sec == SEC_RULE && !cur_rule(ps)->set.mask) {
		ps->line = ps->sec_line;
		err = fail(ps, "rule \"%s\" sets nothing: give weight, class, cap or mem_limit",
			   cur_rule(ps)->name);
		ps->line = line;
	}
	ps->sec = SEC_NONE;
	memset(ps->key_line, 0, sizeof(ps->key_line));
	ps->admit_line = 0;
	return err;
}

static bool rule_name_ok(const char *s)
{
	size_t n = 0;

	for (; *s; s++, n++)
		if (!isalnum((unsigned char)*s) && !strchr("_.:@-", *s))
			return false;
	return n > 0 && n <= GS_RULE_NAME_MAX;
}

static int begin_section(struct parser *ps, char *hdr)
{
	struct gs_policy *pol = ps->pol;
	char *kind, *arg;
	size_t i;

	if (end_section(ps))
		return -1;
	kind = hdr;
	arg = hdr;
	while (*arg && !isspace((unsigned char)*arg))
		arg++;
	if (*arg)
		*arg++ = '\0';
	arg = trim(arg);
	ps->sec_line = ps->line;

	if (!strcmp(kind, "gpu") && !*arg) {
		if (ps->gpu_all_line)
			return fail(ps, "[gpu] given twice (first at line %u)",
				    ps->gpu_all_line);
		ps->gpu_all_line = ps->line;
		ps->sec = SEC_GPU_ALL;
		ps->knobs = &pol->gpu_all;
		ps->admit = &pol->gpu_all_admit;
		return 0;
	}
	if (!strcmp(kind, "gpu")) {
		uint8_t uuid[GPUSCHED_UUID_LEN];
		struct gs_gpu_conf *g;

		if (gs_uuid_parse(arg, uuid))
			return fail(ps, "bad GPU UUID \"%s\" (expected GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx, as nvidia-smi -L and gpuschedctl status print it)",
				    arg);
		for (i = 0; i < pol->nr_gpus; i++)
			if (!memcmp(pol->gpus[i].uuid, uuid, sizeof(uuid)))
				return fail(ps, "[gpu %s] given twice (first at line %u)",
					    arg, pol->gpus[i].line);
		g = realloc(pol->gpus, (pol->nr_gpus + 1) * sizeof(*g));
		if (!g)
			return nomem(ps);
		pol->gpus = g;
		g = &pol->gpus[pol->nr_gpus++];
		memset(g, 0, sizeof(*g));
		memcpy(g->uuid, uuid, sizeof(uuid));
		g->line = ps->line;
		ps->sec = SEC_GPU_ONE;
		ps->knobs = &g->knobs;
		ps->admit = &g->admit;
		return 0;
	}
	if (!strcmp(kind, "rule")) {
		struct gs_rule *r;

		if (!*arg)
			return fail(ps, "a rule needs a name, for the logs: [rule NAME]");
		if (!rule_name_ok(arg))
			return fail(ps, "bad rule name \"%s\" (1 to %d letters, digits and _.:@-)",
				    arg, GS_RULE_NAME_MAX);
		for (i = 0; i < pol->nr_rules; i++)
			if (!strcmp(pol->rules[i].name, arg))
				return fail(ps, "rule \"%s\" given twice (first at line %u)",
					    arg, pol->rules[i].line);
		r = realloc(pol->rules, (pol->nr_rules + 1) * sizeof(*r));
		if (!r)
			return nomem(ps);
		pol->rules = r;
		r = &pol->rules[pol->nr_rules];
		memset(r, 0, sizeof(*r));
		r->name = strdup(arg);
		if (!r->name)
			return nomem(ps);
		pol->nr_rules++;
		r->line = ps->line;
		ps->sec = SEC_RULE;
		return 0;
	}
	return fail(ps, "unknown section [%s%s%s] (expected [gpu], [gpu UUID] or [rule NAME])",
		    kind, *arg ? " " : "", arg);
}

static int dup_key(struct parser *ps, int slot, const char *key)
{
	if (ps->key_line[slot])
		return fail(ps, "%s given twice in this section (first at line %u)",
			    key, ps->key_line[slot]);
	ps->key_line[slot] = ps->line;
	return 0;
}

static const char *const admit_names[] = {
	[GS_ADMIT_UNSET] = "unset",
	[GS_ADMIT_OFF] = "off",
	[GS_ADMIT_REFUSE] = "refuse",
	[GS_ADMIT_BATCH] = "batch",
};

const char *gs_mem_admit_name(enum gs_mem_admit a)
{
	return a <= GS_ADMIT_BATCH ? admit_names[a] : "?";
}

/* mem_admission = off|refuse|batch: gpuschedd's, beside the knobs. */
static int admit_key(struct parser *ps, const char *value)
{
	enum gs_mem_admit a;

	if (ps->admit_line)
		return fail(ps, "mem_admission given twice in this section (first at line %u)",
			    ps->admit_line);
	for (a = GS_ADMIT_OFF; a <= GS_ADMIT_BATCH; a++) {
		if (!strcmp(value, admit_names[a])) {
			*ps->admit = a;
			ps->admit_line = ps->line;
			return 0;
		}
	}
	return fail(ps, "mem_admission \"%s\": expected off, refuse or batch", value);
}

static int gpu_key(struct parser *ps, const char *key, const char *value)
{
	char msg[256];
	int k = gs_knob_find(key);

	if (!strcmp(key, "mem_admission"))
		return admit_key(ps, value);
	if (k >= 0 && dup_key(ps, k, key))
		return -1;
	if (gs_knob_parse(key, value, ps->knobs, msg, sizeof(msg)))
		return fail(ps, "%s", msg);
	return 0;
}

static int rule_key(struct parser *ps, const char *key, char *value)
{
	struct gs_rule *r = cur_rule(ps);
	char msg[256];
	int i;

	for (i = 0; i < GS_NR_MATCH; i++) {
		if (strcmp(key, match_names[i]))
			continue;
		if (dup_key(ps, i, key))
			return -1;
		return match_parse(ps, &r->match[i], i, value);
	}
	if (!strcmp(key, "weight"))
		i = ACT_WEIGHT;
	else if (!strcmp(key, "class"))
		i = ACT_CLASS;
	else if (!strcmp(key, "cap"))
		i = ACT_CAP;
	else if (!strcmp(key, "mem_limit"))
		i = ACT_MEM_LIMIT;
	else
		return fail(ps, "unknown key \"%s\" in a rule (match: user, group, exe, cgroup, label; set: weight, class, cap, mem_limit)",
			    key);
	if (dup_key(ps, i, key))
		return -1;
	if (gs_client_param_parse(key, value, &r->set, msg, sizeof(msg)))
		return fail(ps, "%s", msg);
	return 0;
}

static int parse_line(struct parser *ps, char *s)
{
	char *eq, *key, *value;

	s = trim(s);
	if (!*s || *s == '#' || *s == ';')
		return 0;
	if (*s == '[') {
		char *close = strchr(s, ']'), *rest;

		if (!close)
			return fail(ps, "section header without ']'");
		*close = '\0';
		rest = trim(close + 1);
		if (*rest && *rest != '#' && *rest != ';')
			return fail(ps, "text after the section header: \"%s\"", rest);
		return begin_section(ps, trim(s + 1));
	}
	eq = strchr(s, '=');
	if (!eq)
		return fail(ps, "expected KEY = VALUE or [SECTION], got \"%s\"", s);
	*eq = '\0';
	key = trim(s);
	value = eq + 1;
	strip_comment(value);
	value = trim(value);
	if (!*key)
		return fail(ps, "expected KEY = VALUE: the key is missing");
	if (!*value)
		return fail(ps, "%s has no value", key);
	switch (ps->sec) {
	case SEC_GPU_ALL:
	case SEC_GPU_ONE:
		return gpu_key(ps, key, value);
	case SEC_RULE:
		return rule_key(ps, key, value);
	default:
		return fail(ps, "%s = ... outside a section: put it under [gpu], [gpu UUID] or [rule NAME]",
			    key);
	}
}

static bool matches_all(const struct gs_rule *r)
{
	int i;

	for (i = 0; i < GS_NR_MATCH; i++)
		if (r->match[i].n)
			return false;
	return true;
}

/* A rule after one that matches every client could never apply. */
static int check_reachable(struct parser *ps)
{
	const struct gs_policy *pol = ps->pol;
	size_t i;

	for (i = 0; i + 1 < pol->nr_rules; i++) {
		if (!matches_all(&pol->rules[i]))
			continue;
		ps->line = pol->rules[i + 1].line;
		return fail(ps, "rule \"%s\" can never match: rule \"%s\" (line %u) before it has no match keys and so matches every client; move the catch-all last",
			    pol->rules[i + 1].name, pol->rules[i].name,
			    pol->rules[i].line);
	}
	return 0;
}

struct gs_policy *gs_policy_parse(const char *name, const char *text,
				  size_t len, char *err, size_t size)
{
	struct parser ps = { .name = name, .err = err, .errsize = size };
	const char *p = text, *end = text + len;
	char *line = NULL;
	int rc = 0;

	if (size)
		err[0] = '\0';
	ps.pol = calloc(1, sizeof(*ps.pol));
	if (ps.pol)
		ps.pol->path = strdup(name);
	if (!ps.pol || !ps.pol->path) {
		fail(&ps, "out of memory");
		gs_policy_free(ps.pol);
		return NULL;
	}
	while (!rc && p < end) {
		const char *nl = memchr(p, '\n', end - p);
		size_t n = (nl ? nl : end) - p;

		ps.line++;
		if (memchr(p, '\0', n)) {
			rc = fail(&ps, "NUL byte in the line: is this a text file?");
			break;
		}
		free(line);
		line = strndup(p, n);
		if (!line) {
			rc = nomem(&ps);
			break;
		}
		rc = parse_line(&ps, line);
		p += n + (nl != NULL);
	}
	free(line);
	if (!rc)
		rc = end_section(&ps);
	if (!rc)
		rc = check_reachable(&ps);
	if (rc) {
		gs_policy_free(ps.pol);
		return NULL;
	}
	return ps.pol;
}

struct gs_policy *gs_policy_load(const char *path, char *err, size_t size)
{
	struct parser ps = { .name = path, .err = err, .errsize = size };
	struct gs_policy *pol = NULL;
	struct stat st;
	char *buf = NULL;
	size_t len = 0;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		fail(&ps, "cannot open: %s", strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st)) {
		fail(&ps, "cannot stat: %s", strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		fail(&ps, "not a regular file");
		goto out;
	}
	/*
	 * The daemon runs as root and the file decides who gets the GPU: a
	 * file that anybody may change is a way to raise one's own share.
	 */
	if (st.st_mode & S_IWOTH) {
		fail(&ps, "writable by every user, so anybody could change the policy: chmod o-w %s",
		     path);
		goto out;
	}
	if (st.st_size > GS_POLICY_MAX_SIZE) {
		fail(&ps, "larger than %d bytes: is this the policy file?",
		     GS_POLICY_MAX_SIZE);
		goto out;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		fail(&ps, "out of memory");
		goto out;
	}
	/* The size may change under us: read what is there, up to the limit. */
	while (len <= (size_t)st.st_size) {
		n = read(fd, buf + len, (size_t)st.st_size + 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			fail(&ps, "cannot read: %s", strerror(errno));
			goto out;
		}
		if (!n)
			break;
		len += (size_t)n;
	}
	if (len > (size_t)st.st_size) {
		fail(&ps, "changed while being read; try again");
		goto out;
	}
	pol = gs_policy_parse(path, buf, len, err, size);
out:
	free(buf);
	close(fd);
	return pol;
}

void gs_policy_free(struct gs_policy *pol)
{
	size_t i, j;
	int k;

	if (!pol)
		return;
	for (i = 0; i < pol->nr_rules; i++) {
		struct gs_rule *r = &pol->rules[i];

		for (k = 0; k < GS_NR_MATCH; k++) {
			free(r->match[k].ids);
			for (j = 0; r->match[k].strs && j < r->match[k].n; j++)
				free(r->match[k].strs[j]);
			free(r->match[k].strs);
		}
		free(r->name);
	}
	free(pol->rules);
	free(pol->gpus);
	free(pol->path);
	free(pol);
}

void gs_policy_gpu_knobs(const struct gs_policy *pol,
			 const uint8_t uuid[GPUSCHED_UUID_LEN],
			 struct gs_knob_set *out)
{
	size_t i;
	int k;

	*out = pol->gpu_all;
	for (i = 0; i < pol->nr_gpus; i++) {
		const struct gs_gpu_conf *g = &pol->gpus[i];

		if (memcmp(g->uuid, uuid, GPUSCHED_UUID_LEN))
			continue;
		for (k = 0; k < GS_POL_NR_KNOBS; k++) {
			if (g->knobs.mask & (1U << k)) {
				out->mask |= 1U << k;
				out->val[k] = g->knobs.val[k];
			}
		}
	}
}

enum gs_mem_admit gs_policy_gpu_admit(const struct gs_policy *pol,
				      const uint8_t uuid[GPUSCHED_UUID_LEN])
{
	enum gs_mem_admit a = pol->gpu_all_admit;

	for (size_t i = 0; i < pol->nr_gpus; i++)
		if (!memcmp(pol->gpus[i].uuid, uuid, GPUSCHED_UUID_LEN) &&
		    pol->gpus[i].admit != GS_ADMIT_UNSET)
			a = pol->gpus[i].admit;
	return a == GS_ADMIT_UNSET ? GS_ADMIT_OFF : a;
}

uint64_t gs_mem_admit_counted(uint64_t total, uint64_t reserve,
			      uint64_t limit)
{
	if (limit)
		return limit;
	return total > reserve ? total - reserve : 1;
}

bool gs_mem_admit_over(uint64_t total, uint64_t reserve, uint64_t others,
		       uint64_t limit)
{
	uint64_t room, mine;

	if (!total)
		return false;
	room = total > reserve ? total - reserve : 0;
	mine = gs_mem_admit_counted(total, reserve, limit);
	return others > room || mine > room - others;
}

uint64_t gs_mem_admit_add(uint64_t sum, uint64_t total, uint64_t reserve,
			  uint64_t limit)
{
	uint64_t v = gs_mem_admit_counted(total, reserve, limit);

	return sum + v < sum ? UINT64_MAX : sum + v;
}

void gs_mem_admit_params(enum gs_mem_admit a, struct gpusched_params *p)
{
	if (a == GS_ADMIT_REFUSE) {
		p->mask |= GPUSCHED_PARAM_MEM_LIMIT;
		p->mem_limit = 1;
	} else if (a == GS_ADMIT_BATCH) {
		p->mask |= GPUSCHED_PARAM_CLASS;
		p->sched_class = GPUSCHED_CLASS_BATCH;
	}
}

bool gs_policy_admits(const struct gs_policy *pol)
{
	if (pol->gpu_all_admit > GS_ADMIT_OFF)
		return true;
	for (size_t i = 0; i < pol->nr_gpus; i++)
		if (pol->gpus[i].admit > GS_ADMIT_OFF)
			return true;
	return false;
}

bool gs_policy_matches_labels(const struct gs_policy *pol)
{
	for (size_t i = 0; pol && i < pol->nr_rules; i++)
		if (pol->rules[i].match[GS_MATCH_LABEL].n)
			return true;
	return false;
}

void gs_mem_admit_text(char *buf, size_t size, enum gs_mem_admit a,
		       uint64_t total, uint64_t reserve, uint64_t others,
		       uint64_t limit)
{
	char l[GS_MEM_TEXT_LEN], o[GS_MEM_TEXT_LEN], m[GS_MEM_TEXT_LEN];

	gs_mem_format(gs_mem_admit_counted(total, reserve, limit), l);
	gs_mem_format(others, o);
	if (!others)	/* not "none" */
		snprintf(o, sizeof(o), "0");
	gs_mem_format(total > reserve ? total - reserve : 1, m);
	snprintf(buf, size, "a limit of %s beside %s of others' would pass the %s the GPU has less its reserve: %s",
		 l, o, m, a == GS_ADMIT_REFUSE ?
		 "refused (a limit of 1 byte: every allocation fails)" :
		 "made batch class");
}

void gs_policy_gpu_params(const struct gs_policy *pol,
			  const uint8_t uuid[GPUSCHED_UUID_LEN],
			  struct gs_pol_params *p)
{
	struct gs_knob_set ks;
	int k;

	gs_policy_gpu_knobs(pol, uuid, &ks);
	for (k = 0; k < GS_POL_NR_KNOBS; k++)
		if (ks.mask & (1U << k))
			gs_pol_knob_set(p, &gs_pol_knobs[k], ks.val[k]);
}
