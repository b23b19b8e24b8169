/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers for the in-VM tests of the generic netlink family "gpusched":
 * a raw netlink client (no libnl), so that a test can send exactly the
 * bytes it means, malformed ones included, and read the kernel's errno
 * and extended ack. Every function returns 0 (or a count) or -errno.
 *
 * The tests build on tests/kselftest/gs_test.h (ioctls, status page,
 * forking). Each program owns one GPU UUID from enum nl_test_gpu, away
 * from those of tests/kselftest/ (1..8, and 0x80.. for zz-capacity).
 */
#ifndef GS_NL_TEST_H
#define GS_NL_TEST_H

#include <grp.h>
#include <sys/socket.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#include "gs_test.h"

enum nl_test_gpu {
	NL_GPU_YNL = 0x40,
	NL_GPU_DAEMON,
	NL_GPU_PERM,
	NL_GPU_BADMSG,
	NL_GPU_CTL,
	NL_GPU_DAEMON_KILL,
	NL_GPU_MARKS,
	NL_GPU_MEM,
};

#ifndef SOL_NETLINK
#define SOL_NETLINK	270
#endif

#define NL_HELPER	"/usr/libexec/gpusched-tests/gs-nl-helper"
#define NL_GPUSCHEDD	"/usr/sbin/gpuschedd"
#define NL_GPUSCHEDCTL	"/usr/bin/gpuschedctl"
#define NL_PYTHON	"/usr/bin/python3"

struct nlt {
	int fd;
	__u16 family;
	__u32 events_group;
	__u32 seq;
	char extack[256];	/* the kernel's message about the last error */
	int bad_attr;		/* type of the attribute it blamed, or 0 */
	int nr_msgs;		/* replies to the last request */
	int nr_batches;		/* datagrams they came in */
};

struct nlt_msg {
	union {
		struct nlmsghdr nlh;
		char buf[4096];
	};
};

#define NLT_ALIGN(len)	(((len) + 3) & ~3U)

static inline void nlt_put(struct nlt_msg *m, __u16 type, const void *data,
			   __u16 len)
{
	struct nlattr *a = (struct nlattr *)(m->buf + NLT_ALIGN(m->nlh.nlmsg_len));

	a->nla_type = type;
	a->nla_len = sizeof(*a) + len;
	memcpy(a + 1, data, len);
	m->nlh.nlmsg_len = NLT_ALIGN(m->nlh.nlmsg_len) + NLT_ALIGN(a->nla_len);
}

static inline void nlt_put_u32(struct nlt_msg *m, __u16 type, __u32 v)
{
	nlt_put(m, type, &v, sizeof(v));
}

static inline void nlt_put_u64(struct nlt_msg *m, __u16 type, __u64 v)
{
	nlt_put(m, type, &v, sizeof(v));
}

static inline void nlt_init(struct nlt_msg *m, __u16 family, __u8 cmd,
			    __u16 flags)
{
	struct genlmsghdr *g;

	memset(m, 0, sizeof(*m));
	m->nlh.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
	m->nlh.nlmsg_type = family;
	m->nlh.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | flags;
	g = NLMSG_DATA(&m->nlh);
	g->cmd = cmd;
	g->version = GPUSCHED_GENL_VERSION;
}

/* Attributes of a message into @tb (zeroed, @max + 1 entries). */
static inline void nlt_parse(const struct nlmsghdr *nlh, struct nlattr **tb,
			     int max)
{
	const char *p = (const char *)NLMSG_DATA(nlh) + GENL_HDRLEN;
	const char *end = (const char *)nlh + nlh->nlmsg_len;

	memset(tb, 0, (max + 1) * sizeof(*tb));
	while (p + sizeof(struct nlattr) <= end) {
		struct nlattr *a = (struct nlattr *)p;
		int type = a->nla_type & NLA_TYPE_MASK;

		if (a->nla_len < sizeof(*a) || p + a->nla_len > end)
			break;
		if (type <= max)
			tb[type] = a;
		p += NLT_ALIGN(a->nla_len);
	}
}

static inline __u32 nlt_u32(const struct nlattr *a)
{
	__u32 v = 0;

	if (a && a->nla_len >= sizeof(*a) + 4)
		memcpy(&v, a + 1, 4);
	return v;
}

static inline __u64 nlt_u64(const struct nlattr *a)
{
	__u64 v = 0;

	if (a && a->nla_len >= sizeof(*a) + 8)
		memcpy(&v, a + 1, 8);
	return v;
}

/* Record an error ack's errno, message and blamed attribute. */
static inline int nlt_error(struct nlt *t, const struct nlt_msg *req,
			    const struct nlmsghdr *nlh)
{
	const struct nlmsgerr *e = NLMSG_DATA(nlh);
	const char *p = (const char *)(e + 1), *end;

	if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
		p += e->msg.nlmsg_len - NLMSG_HDRLEN;
	end = (const char *)nlh + nlh->nlmsg_len;
	while ((nlh->nlmsg_flags & NLM_F_ACK_TLVS) &&
	       p + sizeof(struct nlattr) <= end) {
		const struct nlattr *a = (const struct nlattr *)p;

		if (a->nla_len < sizeof(*a))
			break;
		if (a->nla_type == NLMSGERR_ATTR_MSG)
			snprintf(t->extack, sizeof(t->extack), "%.*s",
				 (int)(a->nla_len - sizeof(*a)), (const char *)(a + 1));
		if (a->nla_type == NLMSGERR_ATTR_OFFS && req) {
			__u32 off = nlt_u32(a);

			if (off + sizeof(struct nlattr) <= req->nlh.nlmsg_len)
				t->bad_attr = ((const struct nlattr *)
					       (req->buf + off))->nla_type;
		}
		if (a->nla_type == NLMSGERR_ATTR_MISS_TYPE)
			t->bad_attr = (int)nlt_u32(a);
		p += NLT_ALIGN(a->nla_len);
	}
	return e->error;
}

typedef int nlt_msg_fn(void *arg, const struct nlmsghdr *nlh);

/*
 * Send @m and read until its ack, error or DONE, calling @fn (if given)
 * for each reply. 0 or the kernel's -errno.
 */
static inline int nlt_request(struct nlt *t, struct nlt_msg *m, nlt_msg_fn *fn,
			      void *arg)
{
	static char buf[1 << 16];
	int err = 0;
	bool done = false;

	t->extack[0] = '\0';
	t->bad_attr = 0;
	t->nr_msgs = 0;
	t->nr_batches = 0;
	m->nlh.nlmsg_seq = ++t->seq;
	if (send(t->fd, m->buf, m->nlh.nlmsg_len, 0) < 0)
		return -errno;
	while (!done) {
		ssize_t n = recv(t->fd, buf, sizeof(buf), 0);
		struct nlmsghdr *nlh;

		if (n < 0)
			return -errno;
		t->nr_batches++;
		for (nlh = (struct nlmsghdr *)buf; NLMSG_OK(nlh, n);
		     nlh = NLMSG_NEXT(nlh, n)) {
			if (nlh->nlmsg_seq != m->nlh.nlmsg_seq)
				continue;
			if (nlh->nlmsg_type == NLMSG_ERROR) {
				err = nlt_error(t, m, nlh);
				done = true;
			} else if (nlh->nlmsg_type == NLMSG_DONE) {
				done = true;
			} else {
				t->nr_msgs++;
				if (fn && !err)
					err = fn(arg, nlh);
			}
		}
	}
	return err;
}

struct nlt_family_info {
	__u16 id;
	__u32 group;
};

static inline int nlt_family_cb(void *arg, const struct nlmsghdr *nlh)
{
	struct nlt_family_info *fi = arg;
	struct nlattr *tb[CTRL_ATTR_MAX + 1], *g;
	const char *p, *end;

	nlt_parse(nlh, tb, CTRL_ATTR_MAX);
	if (tb[CTRL_ATTR_FAMILY_ID])
		memcpy(&fi->id, tb[CTRL_ATTR_FAMILY_ID] + 1, 2);
	g = tb[CTRL_ATTR_MCAST_GROUPS];
	if (!g)
		return 0;
	/* Nested: one nest per group, with a name and an id. */
	for (p = (const char *)(g + 1), end = (const char *)g + g->nla_len;
	     p + sizeof(struct nlattr) <= end;) {
		const struct nlattr *grp = (const struct nlattr *)p;
		const char *q = (const char *)(grp + 1);
		const char *gend = (const char *)grp + grp->nla_len;
		__u32 id = 0;
		bool ours = false;

		if (grp->nla_len < sizeof(*grp))
			break;
		while (q + sizeof(struct nlattr) <= gend) {
			const struct nlattr *a = (const struct nlattr *)q;

			if (a->nla_len < sizeof(*a))
				break;
			if (a->nla_type == CTRL_ATTR_MCAST_GRP_NAME)
				ours = !strcmp((const char *)(a + 1),
					       GPUSCHED_GENL_MCGRP_EVENTS);
			if (a->nla_type == CTRL_ATTR_MCAST_GRP_ID)
				id = nlt_u32(a);
			q += NLT_ALIGN(a->nla_len);
		}
		if (ours)
			fi->group = id;
		p += NLT_ALIGN(grp->nla_len);
	}
	return 0;
}

/* Open a socket with extended acks and resolve the family. */
static inline int nlt_open(struct nlt *t)
{
	struct nlt_family_info fi = { 0 };
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	struct nlt_msg m;
	int one = 1, err;

	memset(t, 0, sizeof(*t));
	t->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (t->fd < 0)
		return -errno;
	if (bind(t->fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    setsockopt(t->fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one)) ||
	    setsockopt(t->fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one))) {
		err = -errno;
		close(t->fd);
		return err;
	}
	nlt_init(&m, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 0);
	((struct genlmsghdr *)NLMSG_DATA(&m.nlh))->version = 1;
	nlt_put(&m, CTRL_ATTR_FAMILY_NAME, GPUSCHED_GENL_NAME,
		sizeof(GPUSCHED_GENL_NAME));
	err = nlt_request(t, &m, nlt_family_cb, &fi);
	if (err) {
		close(t->fd);
		return err;
	}
	t->family = fi.id;
	t->events_group = fi.group;
	return fi.id ? 0 : -ENOENT;
}

static inline void nlt_close(struct nlt *t)
{
	if (t->fd >= 0)
		close(t->fd);
	t->fd = -1;
}

/* One client of a GET_CLIENT dump. */
struct nlt_client {
	__u32 gpu, pid, uid, weight, class, cap_pct, state;
	__u64 id, held_ns;
	char comm[16];
	bool has_marks;
	__u32 policy_set, policy_lowered;
};

struct nlt_clients {
	struct nlt_client *c;
	size_t n, cap;
};

static inline int nlt_client_cb(void *arg, const struct nlmsghdr *nlh)
{
	struct nlt_clients *cs = arg;
	struct nlattr *tb[GPUSCHED_A_CLIENT_MAX + 1];
	struct nlt_client *c;

	if (cs->n == cs->cap) {
		size_t cap = cs->cap ? 2 * cs->cap : 64;
		void *p = realloc(cs->c, cap * sizeof(*cs->c));

		if (!p)
			return -ENOMEM;
		cs->c = p;
		cs->cap = cap;
	}
	c = &cs->c[cs->n++];
	memset(c, 0, sizeof(*c));
	nlt_parse(nlh, tb, GPUSCHED_A_CLIENT_MAX);
	c->gpu = nlt_u32(tb[GPUSCHED_A_CLIENT_GPU]);
	c->id = nlt_u64(tb[GPUSCHED_A_CLIENT_ID]);
	c->pid = nlt_u32(tb[GPUSCHED_A_CLIENT_PID]);
	c->uid = nlt_u32(tb[GPUSCHED_A_CLIENT_UID]);
	c->weight = nlt_u32(tb[GPUSCHED_A_CLIENT_WEIGHT]);
	c->class = nlt_u32(tb[GPUSCHED_A_CLIENT_CLASS]);
	c->cap_pct = nlt_u32(tb[GPUSCHED_A_CLIENT_CAP_PCT]);
	c->state = nlt_u32(tb[GPUSCHED_A_CLIENT_STATE]);
	c->held_ns = nlt_u64(tb[GPUSCHED_A_CLIENT_HELD_NS]);
	c->has_marks = tb[GPUSCHED_A_CLIENT_POLICY_SET] &&
		       tb[GPUSCHED_A_CLIENT_POLICY_LOWERED];
	c->policy_set = nlt_u32(tb[GPUSCHED_A_CLIENT_POLICY_SET]);
	c->policy_lowered = nlt_u32(tb[GPUSCHED_A_CLIENT_POLICY_LOWERED]);
	if (tb[GPUSCHED_A_CLIENT_COMM])
		snprintf(c->comm, sizeof(c->comm), "%.*s",
			 (int)(tb[GPUSCHED_A_CLIENT_COMM]->nla_len - sizeof(struct nlattr)),
			 (const char *)(tb[GPUSCHED_A_CLIENT_COMM] + 1));
	return 0;
}

/* Dump the clients (of GPU @gpu, or all if @gpu < 0) into @cs. */
static inline int nlt_get_clients(struct nlt *t, int gpu, struct nlt_clients *cs)
{
	struct nlt_msg m;

	cs->n = 0;
	nlt_init(&m, t->family, GPUSCHED_CMD_GET_CLIENT, NLM_F_DUMP);
	if (gpu >= 0)
		nlt_put_u32(&m, GPUSCHED_A_CLIENT_GPU, gpu);
	return nlt_request(t, &m, nlt_client_cb, cs);
}

static inline const struct nlt_client *nlt_find(const struct nlt_clients *cs,
						__u64 id)
{
	size_t i;

	for (i = 0; i < cs->n; i++)
		if (cs->c[i].id == id)
			return &cs->c[i];
	return NULL;
}

/* SET_CLIENT by id: the fields of @p->mask. */
static inline int nlt_set_client(struct nlt *t, __u64 id, __u32 weight,
				 int class, int cap)
{
	struct nlt_msg m;

	nlt_init(&m, t->family, GPUSCHED_CMD_SET_CLIENT, 0);
	nlt_put_u64(&m, GPUSCHED_A_CLIENT_ID, id);
	if (weight)
		nlt_put_u32(&m, GPUSCHED_A_CLIENT_WEIGHT, weight);
	if (class >= 0)
		nlt_put_u32(&m, GPUSCHED_A_CLIENT_CLASS, class);
	if (cap >= 0)
		nlt_put_u32(&m, GPUSCHED_A_CLIENT_CAP_PCT, cap);
	return nlt_request(t, &m, NULL, NULL);
}

/* The id of the client behind @fd, found by pid and GPU in a dump. */
static inline __u64 nlt_client_id(struct nlt *t, int fd)
{
	struct gpusched_client_info ci;
	struct nlt_clients cs = { 0 };
	__u64 id = 0;
	size_t i;

	if (gs_info(fd, &ci) || nlt_get_clients(t, ci.gpu_index, &cs))
		return 0;
	/* The newest client of this process on that GPU. */
	for (i = 0; i < cs.n; i++)
		if (cs.c[i].pid == (__u32)getpid() && cs.c[i].id > id)
			id = cs.c[i].id;
	free(cs.c);
	return id;
}

/* A file (the daemon's log) as diagnostics, for a failed test. */
static inline void nlt_show_file(const char *path)
{
	char buf[8192];
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return;
	ksft_print_msg("%s:\n", path);
	while ((n = read(fd, buf, sizeof(buf) - 1)) > 0) {
		buf[n] = '\0';
		fputs(buf, stdout);
	}
	close(fd);
}

/* Write @text to the file @path, created or emptied: 0 or -errno. */
static inline int nlt_write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	int err = 0;

	if (!f)
		return -errno;
	if (fputs(text, f) == EOF)
		err = -EIO;
	if (fclose(f) && !err)
		err = -errno;
	return err;
}

/* How many times the file @path (all of it) has @needle; 0 if unreadable. */
static inline int nlt_file_count(const char *path, const char *needle)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), n = 0;
	size_t len = 0, size = 1 << 16;
	char *buf = malloc(size), *p;
	ssize_t r;

	if (fd < 0 || !buf) {
		if (fd >= 0)
			close(fd);
		free(buf);
		return 0;
	}
	while ((r = read(fd, buf + len, size - 1 - len)) > 0) {
		len += r;
		if (len == size - 1) {
			p = realloc(buf, 2 * size);
			if (!p)
				break;
			buf = p;
			size *= 2;
		}
	}
	close(fd);
	buf[len] = '\0';
	for (p = buf; (p = strstr(p, needle)); p++)
		n++;
	free(buf);
	return n;
}

static inline bool nlt_file_has(const char *path, const char *needle)
{
	return nlt_file_count(path, needle) > 0;
}

/* Test GPU @id's UUID as a policy file names it: "GPU-xxxxxxxx-xxxx-...". */
static inline void nlt_uuid_str(char *buf, size_t size, unsigned int id)
{
	__u8 u[GPUSCHED_UUID_LEN];

	gs_uuid(u, id);
	snprintf(buf, size,
		 "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9],
		 u[10], u[11], u[12], u[13], u[14], u[15]);
}

/* Drop to an unprivileged user for good. */
static inline int nlt_drop_privileges(uid_t uid, gid_t gid)
{
	if (setgroups(0, NULL) || setgid(gid) || setuid(uid))
		return -errno;
	return 0;
}

/*
 * Run @path with @argv, as user and group @uid when it is not 0: its exit
 * status (gs_wait(): 126 when it cannot become @uid, 127 when it cannot be
 * run), or -1. Its standard output, and with @with_stderr its standard
 * error too, goes to @out (@size bytes at most, NUL-terminated).
 */
static inline int nlt_run(const char *path, char *const argv[], uid_t uid,
			  bool with_stderr, char *out, size_t size)
{
	int pipefd[2], status;
	size_t len = 0;
	ssize_t n;
	pid_t pid;

	if (pipe(pipefd))
		return -1;
	pid = gs_fork();
	if (pid == 0) {
		close(pipefd[0]);
		dup2(pipefd[1], STDOUT_FILENO);
		if (with_stderr)
			dup2(pipefd[1], STDERR_FILENO);
		if (uid && nlt_drop_privileges(uid, uid))
			_exit(126);
		execv(path, argv);
		_exit(127);
	}
	close(pipefd[1]);
	if (pid < 0) {
		close(pipefd[0]);
		return -1;
	}
	while (len < size - 1 &&
	       (n = read(pipefd[0], out + len, size - 1 - len)) > 0)
		len += n;
	out[len] = '\0';
	close(pipefd[0]);
	status = gs_wait(pid);
	return status;
}

/*
 * gpuschedd with the policy file @conf, metrics served on @metrics (NULL:
 * none), its output appended to @log.
 */
static inline pid_t nlt_daemon_start(const char *conf, const char *log,
				     const char *metrics)
{
	pid_t pid = gs_fork();

	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);

		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
		if (metrics)
			execl(NL_GPUSCHEDD, "gpuschedd", "--config", conf,
			      "--verbose", "--metrics", metrics, (char *)NULL);
		else
			execl(NL_GPUSCHEDD, "gpuschedd", "--config", conf,
			      "--verbose", (char *)NULL);
		_exit(127);
	}
	return pid;
}

/* Stop gpuschedd @pid with SIGTERM: its exit status (gs_wait()). */
static inline int nlt_daemon_stop(pid_t pid)
{
	if (kill(pid, SIGTERM))
		return -1;
	return gs_wait(pid);
}

/*
 * A fixture's teardown with gpuschedd @*daemon (0: none) writing to @log:
 * the log shown if the test failed, the daemon stopped.
 */
static inline void nlt_daemon_end(const struct __test_metadata *_metadata,
				  pid_t *daemon, const char *log)
{
	if (!_metadata->passed)
		nlt_show_file(log);
	if (*daemon > 0)
		nlt_daemon_stop(*daemon);
	*daemon = 0;
}

#endif /* GS_NL_TEST_H */
