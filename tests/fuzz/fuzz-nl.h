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

#endif /* GS_FUZZ_NL_H */
