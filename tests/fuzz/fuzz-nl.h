/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Raw generic netlink for the in-VM fuzzer and tests: no libnl, so that the
 * programs link statically. Messages are built in a flat buffer; the
 * family id and the "events" group are resolved through nlctrl.
 */
#ifndef GS_FUZZ_NL_H
#define GS_FUZZ_NL_H

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/gpusched.h>

#define GS_NL_BUF	65536

struct gs_msg {
	unsigned char b[8192];
	size_t len;
	/* where each top-level attribute starts, for the mutator */
	size_t attr_off[64];
	unsigned int nr_attrs;
};

static inline struct nlmsghdr *gs_msg_hdr(struct gs_msg *m)
{
	return (struct nlmsghdr *)m->b;
}

static inline void gs_msg_init(struct gs_msg *m, __u16 type, __u16 flags,
			       __u8 cmd, __u8 version)
{
	struct nlmsghdr *h = gs_msg_hdr(m);
	struct genlmsghdr *g = (struct genlmsghdr *)(h + 1);

	memset(m->b, 0, NLMSG_HDRLEN + GENL_HDRLEN);
	h->nlmsg_type = type;
	h->nlmsg_flags = flags;
	g->cmd = cmd;
	g->version = version;
	m->len = NLMSG_HDRLEN + GENL_HDRLEN;
	m->nr_attrs = 0;
	h->nlmsg_len = m->len;
}

/* Append an attribute; NULL @data with @len fills zeros. The start offset. */
static inline size_t gs_msg_put(struct gs_msg *m, __u16 type, const void *data,
				size_t len)
{
	struct nlattr *a = (struct nlattr *)(m->b + m->len);
	size_t off = m->len, total = NLA_ALIGN(NLA_HDRLEN + len);

	if (m->len + total > sizeof(m->b))
		return off;
	a->nla_type = type;
	a->nla_len = NLA_HDRLEN + len;
	memset((char *)a + NLA_HDRLEN, 0, total - NLA_HDRLEN);
	if (data)
		memcpy((char *)a + NLA_HDRLEN, data, len);
	if (m->nr_attrs < 64)
		m->attr_off[m->nr_attrs++] = off;
	m->len += total;
	gs_msg_hdr(m)->nlmsg_len = m->len;
	return off;
}

static inline void gs_msg_u32(struct gs_msg *m, __u16 type, __u32 v)
{
	gs_msg_put(m, type, &v, sizeof(v));
}

static inline void gs_msg_u64(struct gs_msg *m, __u16 type, __u64 v)
{
	gs_msg_put(m, type, &v, sizeof(v));
}

/* A socket, or -errno. */
static inline int gs_nl_open(void)
{
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };

	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		return -errno;
	}
	return fd;
}

static inline int gs_nl_send(int fd, const void *buf, size_t len)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };

	if (sendto(fd, buf, len, 0, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return -errno;
	return 0;
}

/* One datagram, waiting at most @ms; its length, 0 on timeout, or -errno. */
static inline ssize_t gs_nl_recv(int fd, void *buf, size_t size, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	ssize_t n;

	if (poll(&p, 1, ms) <= 0)
		return 0;
	n = recv(fd, buf, size, MSG_DONTWAIT);
	if (n < 0)
		return errno == EAGAIN ? 0 : -errno;
	return n;
}

/* The attributes of a generic netlink message, by type; false if malformed. */
static inline bool gs_nl_attrs(const struct nlmsghdr *h, const struct nlattr **tb,
			       unsigned int max)
{
	const unsigned char *p = (const unsigned char *)NLMSG_DATA(h) + GENL_HDRLEN;
	const unsigned char *end = (const unsigned char *)h + h->nlmsg_len;

	memset(tb, 0, (max + 1) * sizeof(*tb));
	while (p + NLA_HDRLEN <= end) {
		const struct nlattr *a = (const void *)p;
		unsigned int type = a->nla_type & NLA_TYPE_MASK;

		if (a->nla_len < NLA_HDRLEN || p + a->nla_len > end)
			return false;
		if (type <= max)
			tb[type] = a;
		p += NLA_ALIGN(a->nla_len);
	}
	return true;
}

static inline const void *gs_nla_data(const struct nlattr *a)
{
	return (const char *)a + NLA_HDRLEN;
}

static inline __u32 gs_nla_u32(const struct nlattr *a)
{
	__u32 v;

	memcpy(&v, gs_nla_data(a), sizeof(v));
	return v;
}

static inline __u64 gs_nla_u64(const struct nlattr *a)
{
	__u64 v;

	memcpy(&v, gs_nla_data(a), sizeof(v));
	return v;
}

/* Ask on @fd for a GET_CLIENT dump of GPU @gpu: 0 or -errno. */
static inline int gs_nl_client_dump_send(int fd, int family, unsigned int gpu)
{
	struct gs_msg *m = calloc(1, sizeof(*m));
	int err;

	if (!m)
		return -ENOMEM;
	gs_msg_init(m, family, NLM_F_REQUEST | NLM_F_DUMP,
		    GPUSCHED_CMD_GET_CLIENT, GPUSCHED_GENL_VERSION);
	gs_msg_u32(m, GPUSCHED_A_CLIENT_GPU, gpu);
	err = gs_nl_send(fd, m->b, m->len);
	free(m);
	return err;
}

/*
 * Called for each client of a dump with its attributes and the number of
 * the datagram that carried it (1 for the first): 0 to go on, or -errno
 * to end the walk with.
 */
typedef int gs_nl_client_fn(const struct nlattr *const *tb,
			    unsigned int datagram, void *arg);

/*
 * Read the GET_CLIENT dump sent on @fd to its end, calling @fn for each
 * client; each recv() waits at most @ms. The number of datagrams read, or
 * -errno: @fn's, the kernel's (an error message ends the dump), -EBADMSG
 * for a malformed message, -ETIMEDOUT.
 */
static inline int gs_nl_client_dump_read(int fd, int ms, gs_nl_client_fn *fn,
					 void *arg)
{
	const struct nlattr *tb[GPUSCHED_A_CLIENT_MAX + 1];
	unsigned char *rx = malloc(GS_NL_BUF);
	int datagrams = 0, err = 0;
	bool done = false;

	if (!rx)
		return -ENOMEM;
	while (!done && !err) {
		const struct nlmsghdr *h = (const void *)rx;
		ssize_t n = gs_nl_recv(fd, rx, GS_NL_BUF, ms);

		if (n <= 0) {
			err = n ? n : -ETIMEDOUT;
			break;
		}
		datagrams++;
		for (; !done && !err && NLMSG_OK(h, n); h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_type == NLMSG_DONE) {
				done = true;
			} else if (h->nlmsg_type == NLMSG_ERROR) {
				err = ((const struct nlmsgerr *)NLMSG_DATA(h))->error;
				done = true;
			} else if (!gs_nl_attrs(h, tb, GPUSCHED_A_CLIENT_MAX)) {
				err = -EBADMSG;
			} else {
				err = fn(tb, datagrams, arg);
			}
		}
	}
	free(rx);
	return err ? err : datagrams;
}

/* A GET_CLIENT dump of GPU @gpu on @fd, sent and read: as above. */
static inline int gs_nl_client_dump(int fd, int family, unsigned int gpu,
				    int ms, gs_nl_client_fn *fn, void *arg)
{
	int err = gs_nl_client_dump_send(fd, family, gpu);

	return err ? err : gs_nl_client_dump_read(fd, ms, fn, arg);
}

/*
 * Resolve the "gpusched" family: its id, and the "events" group's id in
 * *@grp (0 if absent). The id, or -errno.
 */
static inline int gs_nl_family(int fd, __u32 *grp)
{
	static unsigned char buf[GS_NL_BUF];
	struct gs_msg *m = calloc(1, sizeof(*m));
	const struct nlattr *tb[CTRL_ATTR_MAX + 1];
	const struct nlmsghdr *h;
	int id = -ENOENT;
	ssize_t n;

	if (!m)
		return -ENOMEM;
	*grp = 0;
	gs_msg_init(m, GENL_ID_CTRL, NLM_F_REQUEST, CTRL_CMD_GETFAMILY, 1);
	gs_msg_put(m, CTRL_ATTR_FAMILY_NAME, GPUSCHED_GENL_NAME,
		   sizeof(GPUSCHED_GENL_NAME));
	n = gs_nl_send(fd, m->b, m->len);
	free(m);
	if (n < 0)
		return n;
	n = gs_nl_recv(fd, buf, sizeof(buf), 5000);
	if (n <= 0)
		return n ? n : -ETIMEDOUT;
	h = (const void *)buf;
	if (!NLMSG_OK(h, n))
		return -EBADMSG;
	if (h->nlmsg_type == NLMSG_ERROR)
		return ((const struct nlmsgerr *)NLMSG_DATA(h))->error;
	if (!gs_nl_attrs(h, tb, CTRL_ATTR_MAX) || !tb[CTRL_ATTR_FAMILY_ID])
		return -EBADMSG;
	id = *(const __u16 *)gs_nla_data(tb[CTRL_ATTR_FAMILY_ID]);
	if (tb[CTRL_ATTR_MCAST_GROUPS]) {
		const struct nlattr *g = tb[CTRL_ATTR_MCAST_GROUPS];
		const unsigned char *p = gs_nla_data(g);
		const unsigned char *end = (const unsigned char *)g + g->nla_len;

		/* An array of nests, each with a name and an id. */
		while (p + NLA_HDRLEN <= end) {
			const struct nlattr *e = (const void *)p;
			const unsigned char *q = gs_nla_data(e);
			const unsigned char *qe = p + e->nla_len;
			const char *name = NULL;
			__u32 gid = 0;

			while (q + NLA_HDRLEN <= qe) {
				const struct nlattr *f = (const void *)q;

				if (f->nla_type == CTRL_ATTR_MCAST_GRP_NAME)
					name = gs_nla_data(f);
				else if (f->nla_type == CTRL_ATTR_MCAST_GRP_ID)
					gid = gs_nla_u32(f);
				q += NLA_ALIGN(f->nla_len);
			}
			if (name && !strcmp(name, GPUSCHED_GENL_MCGRP_EVENTS))
				*grp = gid;
			p += NLA_ALIGN(e->nla_len);
		}
	}
	return id;
}

/* A socket with the family resolved (its id in *@family): the fd, or -errno. */
static inline int gs_nl_open_family(int *family)
{
	int fd = gs_nl_open();
	__u32 grp;

	if (fd < 0)
		return fd;
	*family = gs_nl_family(fd, &grp);
	if (*family < 0) {
		close(fd);
		return *family;
	}
	return fd;
}

/*
 * Send @m on @fd asking for an ack and wait at most @ms for it: the
 * kernel's answer (0 or -errno), -EBADMSG for another reply, -ETIMEDOUT.
 */
static inline int gs_nl_ack(int fd, struct gs_msg *m, int ms)
{
	unsigned char *rx = malloc(GS_NL_BUF);
	const struct nlmsghdr *h = (const void *)rx;
	ssize_t n;
	int err;

	if (!rx)
		return -ENOMEM;
	gs_msg_hdr(m)->nlmsg_flags |= NLM_F_ACK;
	err = gs_nl_send(fd, m->b, m->len);
	if (!err) {
		n = gs_nl_recv(fd, rx, GS_NL_BUF, ms);
		if (n <= 0)
			err = n ? n : -ETIMEDOUT;
		else if (!NLMSG_OK(h, n) || h->nlmsg_type != NLMSG_ERROR)
			err = -EBADMSG;
		else
			err = ((const struct nlmsgerr *)NLMSG_DATA(h))->error;
	}
	free(rx);
	return err;
}

#endif /* GS_FUZZ_NL_H */
