// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz-netlink: random and mutated messages to the generic netlink family
 * "gpusched" on raw NETLINK_GENERIC sockets, from processes running as
 * root and as nobody, while another process keeps clients coming and going
 * on the device: valid requests of every command, then the same with
 * random commands, versions, flags, attribute types and lengths, truncated
 * attributes and messages, nested garbage and batches of several messages;
 * dumps abandoned half-read and closed; the "events" group joined and left
 * with events queued; small receive buffers.
 *
 * Every message the kernel sends back is checked: lengths within bounds,
 * only the family's own commands and attributes, each of its type's size,
 * values in range, zero padding and reserved bytes (nothing uninitialised
 * reaches user space), errors from the documented set, and every
 * state-changing command refused to nobody. Meanwhile witness clients
 * check that at most one client holds a token at any time (fuzz-common.h),
 * whatever the knobs and client settings the messages change.
 *
 * fuzz-netlink [-s SEED] [-t SECONDS] [-p PROCS] [-H HANG_S]
 * (GSFUZZ_SEED, GSFUZZ_SECONDS in the environment; default 10 s)
 * Prints TAP. See fuzz-common.h for what a seed reproduces.
 */
#include <sys/ioctl.h>
#include "fuzz-common.h"
#include "fuzz-nl.h"

enum {
	OP_VALID, OP_MUTATED, OP_GARBAGE, OP_BATCH, OP_DUMP_ABANDON,
	OP_EVENTS, OP_SOCKOPT, OP_REOPEN, NR_OPS,
	C_REPLIES = NR_OPS, C_ERRORS, C_EPERM, C_EVENTS, C_DUMP_PARTS,
	C_CHURN, NR_COUNTERS,
};

static const char *const op_names[NR_COUNTERS] = {
	"valid", "mutated", "garbage", "batch", "dump_abandoned", "events",
	"sockopt", "reopen",
	"replies", "errors", "eperm", "events_read", "dump_messages",
	"client_churn",
};

static const unsigned int op_weight[NR_OPS] = {
	[OP_VALID] = 25, [OP_MUTATED] = 40, [OP_GARBAGE] = 8, [OP_BATCH] = 8,
	[OP_DUMP_ABANDON] = 8, [OP_EVENTS] = 4, [OP_SOCKOPT] = 4,
	[OP_REOPEN] = 3,
};

static int family;
static __u32 events_grp;
static pid_t churn_pid;
/* Errors seen, by errno, for the summary. */
#define MAX_ERRNO 150
static uint64_t *errno_seen;

struct nlw {
	int w;
	bool priv;
	struct gs_rng rng;
	int fd;
	int ev_fd;		/* joined to "events", or -1 */
	unsigned char rx[GS_NL_BUF];
	struct gs_msg msg, msg2;
	__u64 ids[32];		/* client ids seen in dumps and events */
	unsigned int nr_ids;
	__u32 seq;		/* of the last request sent */
};

static void remember_id(struct nlw *t, __u64 id)
{
	t->ids[t->nr_ids++ % 32] = id;
}

static void check_gpu_attrs(struct nlw *t, const struct nlattr **tb)
{
	static const struct { int attr; __u32 min, max; } range[] = {
		{ GPUSCHED_A_GPU_TIMESLICE_US, 100, 10000000 },
		{ GPUSCHED_A_GPU_GRACE_US, 1000, 10000000 },
		{ GPUSCHED_A_GPU_MIN_GRANT_US, 10, 1000000 },
		{ GPUSCHED_A_GPU_STARVE_US, 1000, 60000000 },
		{ GPUSCHED_A_GPU_WINDOW_US, 1000, 10000000 },
		{ GPUSCHED_A_GPU_LATENCY_PCT, 0, 90 },
		{ GPUSCHED_A_GPU_MEM_DEFAULT_PCT, 0, 100 },
		{ GPUSCHED_A_GPU_MEM_RESERVE_MB, 0, 1U << 24 },
		{ GPUSCHED_A_GPU_INDEX, 0, 63 },
	};
	unsigned int i;

	for (i = 0; i < sizeof(range) / sizeof(range[0]); i++) {
		const struct nlattr *a = tb[range[i].attr];

		if (!a) {
			gs_fail(t->w, "GPU reply without attribute %d", range[i].attr);
			continue;
		}
		if (gs_nla_u32(a) < range[i].min || gs_nla_u32(a) > range[i].max)
			gs_fail(t->w, "GPU attribute %d = %u out of range",
				range[i].attr, gs_nla_u32(a));
	}
	if (!tb[GPUSCHED_A_GPU_UUID])
		gs_fail(t->w, "GPU reply without UUID");
}

static void check_client_attrs(struct nlw *t, const struct nlattr **tb, int cmd)
{
	const struct nlattr *a;
	bool shown;

	if (!tb[GPUSCHED_A_CLIENT_ID] || !tb[GPUSCHED_A_CLIENT_UID] ||
	    !tb[GPUSCHED_A_CLIENT_WEIGHT]) {
		gs_fail(t->w, "client message (cmd %d) lacks ID, UID or WEIGHT", cmd);
		return;
	}
	remember_id(t, gs_nla_u64(tb[GPUSCHED_A_CLIENT_ID]));
	/* Pid and command: root's for all, nobody's for its own (F6). */
	shown = t->priv || gs_nla_u32(tb[GPUSCHED_A_CLIENT_UID]) == geteuid();
	if (shown != !!tb[GPUSCHED_A_CLIENT_PID] ||
	    shown != !!tb[GPUSCHED_A_CLIENT_COMM]) {
		gs_fail(t->w, "client message (cmd %d) of uid %u to %s: PID %s, COMM %s",
			cmd, gs_nla_u32(tb[GPUSCHED_A_CLIENT_UID]),
			t->priv ? "root" : "nobody",
			tb[GPUSCHED_A_CLIENT_PID] ? "given" : "left out",
			tb[GPUSCHED_A_CLIENT_COMM] ? "given" : "left out");
		return;
	}
	a = tb[GPUSCHED_A_CLIENT_COMM];
	if (a && (a->nla_len - NLA_HDRLEN > 16 ||
		  ((const char *)gs_nla_data(a))[a->nla_len - NLA_HDRLEN - 1]))
		gs_fail(t->w, "COMM of %d bytes, or not terminated",
			a->nla_len - NLA_HDRLEN);
	if (gs_nla_u32(tb[GPUSCHED_A_CLIENT_WEIGHT]) < GPUSCHED_WEIGHT_MIN ||
	    gs_nla_u32(tb[GPUSCHED_A_CLIENT_WEIGHT]) > GPUSCHED_WEIGHT_MAX ||
	    (tb[GPUSCHED_A_CLIENT_CLASS] &&
	     gs_nla_u32(tb[GPUSCHED_A_CLIENT_CLASS]) > GPUSCHED_CLASS_MAX) ||
	    (tb[GPUSCHED_A_CLIENT_CAP_PCT] &&
	     gs_nla_u32(tb[GPUSCHED_A_CLIENT_CAP_PCT]) > 100) ||
	    (tb[GPUSCHED_A_CLIENT_STATE] &&
	     (gs_nla_u32(tb[GPUSCHED_A_CLIENT_STATE]) < GPUSCHED_STATE_IDLE ||
	      gs_nla_u32(tb[GPUSCHED_A_CLIENT_STATE]) > GPUSCHED_STATE_HOLDING)))
		gs_fail(t->w, "client message (cmd %d) with a value out of range", cmd);
	if (shown && !gs_nla_u32(tb[GPUSCHED_A_CLIENT_PID]))
		gs_fail(t->w, "client message (cmd %d) with pid 0", cmd);
}

/* The size each attribute the kernel sends must have; 0: a string. */
static int attr_size(bool gpu, unsigned int type)
{
	if (gpu) {
		switch (type) {
		case GPUSCHED_A_GPU_UUID:
			return GPUSCHED_UUID_LEN;
		case GPUSCHED_A_GPU_GRANTS:
		case GPUSCHED_A_GPU_OVERRUNS:
		case GPUSCHED_A_GPU_HELD_NS:
		case GPUSCHED_A_GPU_MEM_RESERVED:
			return 8;
		case GPUSCHED_A_GPU_PAD:
			return -1;	/* never on x86_64 */
		default:
			return type <= GPUSCHED_A_GPU_MAX && type ? 4 : -1;
		}
	}
	switch (type) {
	case GPUSCHED_A_CLIENT_COMM:
		return 0;
	case GPUSCHED_A_CLIENT_ID:
	case GPUSCHED_A_CLIENT_CGROUP_ID:
	case GPUSCHED_A_CLIENT_HELD_NS:
	case GPUSCHED_A_CLIENT_GRANTS:
	case GPUSCHED_A_CLIENT_WAIT_NS_TOTAL:
	case GPUSCHED_A_CLIENT_WAIT_NS_MAX:
	case GPUSCHED_A_CLIENT_OVERRUNS:
	case GPUSCHED_A_CLIENT_YIELDS:
	case GPUSCHED_A_CLIENT_MEM_RESERVED:
	case GPUSCHED_A_CLIENT_MEM_LIMIT:
	case GPUSCHED_A_CLIENT_MEM_REFUSED:
	case GPUSCHED_A_CLIENT_MEM_TOTAL:
	case GPUSCHED_A_CLIENT_GPU_NS:
		return 8;
	case GPUSCHED_A_CLIENT_PAD:
		return -1;
	default:
		return type <= GPUSCHED_A_CLIENT_MAX && type ? 4 : -1;
	}
}

/* One message of the family from the kernel: everything about it. */
static void check_family_msg(struct nlw *t, const struct nlmsghdr *h)
{
	const struct genlmsghdr *g = NLMSG_DATA(h);
	const unsigned char *p, *end = (const unsigned char *)h + h->nlmsg_len;
	const struct nlattr *tb[32];
	bool gpu;

	if (h->nlmsg_len < NLMSG_HDRLEN + GENL_HDRLEN) {
		gs_fail(t->w, "family message of %u bytes", h->nlmsg_len);
		return;
	}
	if (g->version != GPUSCHED_GENL_VERSION || g->reserved)
		gs_fail(t->w, "genl header version %u reserved %u", g->version,
			g->reserved);
	switch (g->cmd) {
	case GPUSCHED_CMD_GET_GPU:
		gpu = true;
		break;
	case GPUSCHED_CMD_GET_CLIENT:
	case GPUSCHED_CMD_EV_ATTACH:
	case GPUSCHED_CMD_EV_DETACH:
	case GPUSCHED_CMD_EV_OVERRUN:
		gpu = false;
		break;
	default:
		gs_fail(t->w, "kernel sent command %u", g->cmd);
		return;
	}
	/* Every attribute: in bounds, of its size, padded with zeros. */
	for (p = (const unsigned char *)g + GENL_HDRLEN; p < end;) {
		const struct nlattr *a = (const void *)p;
		size_t i, pad;
		int size;

		if (p + NLA_HDRLEN > end || a->nla_len < NLA_HDRLEN ||
		    p + a->nla_len > end) {
			gs_fail(t->w, "attribute overruns its message (cmd %u)", g->cmd);
			return;
		}
		size = attr_size(gpu, a->nla_type);
		if (size < 0 || (size > 0 && a->nla_len - NLA_HDRLEN != size))
			gs_fail(t->w, "cmd %u attribute %u of %u bytes", g->cmd,
				a->nla_type, a->nla_len - NLA_HDRLEN);
		pad = NLA_ALIGN(a->nla_len) - a->nla_len;
		for (i = 0; i < pad && p + a->nla_len + i < end; i++)
			if (p[a->nla_len + i])
				gs_fail(t->w, "cmd %u attribute %u: padding byte %#x",
					g->cmd, a->nla_type, p[a->nla_len + i]);
		p += NLA_ALIGN(a->nla_len);
	}
	if (!gs_nl_attrs(h, tb, 31))
		return;
	if (gpu)
		check_gpu_attrs(t, tb);
	else
		check_client_attrs(t, tb, g->cmd);
}

static void check_error(struct nlw *t, const struct nlmsghdr *h, __u32 set_seq)
{
	const struct nlmsgerr *e = NLMSG_DATA(h);
	static const int ok[] = {
		0, -EINVAL, -ERANGE, -EOPNOTSUPP, -ENODEV, -ESRCH, -EPERM,
		-EMSGSIZE, -ENOENT,
		-EBUSY,		/* a second dump while one runs on the socket */
		-ENOBUFS,	/* a dump into a tiny receive buffer */
		-EAGAIN,	/* a GET_GPU reply that does not fit one */
	};
	unsigned int i;

	if (h->nlmsg_len < NLMSG_HDRLEN + sizeof(*e)) {
		gs_fail(t->w, "error message of %u bytes", h->nlmsg_len);
		return;
	}
	if (e->error) {
		gs_count(C_ERRORS, 1);
		if (-e->error > 0 && -e->error < MAX_ERRNO)
			__atomic_add_fetch(&errno_seen[-e->error], 1, __ATOMIC_RELAXED);
	}
	if (e->error == -EPERM)
		gs_count(C_EPERM, 1);
	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		if (e->error == ok[i])
			break;
	if (i == sizeof(ok) / sizeof(ok[0]))
		gs_fail(t->w, "error %d (%s)", e->error, strerror(-e->error));
	/*
	 * nobody must never get a state-changing command through; the ack
	 * is matched to the request by its sequence number, so that a late
	 * ack of an earlier request is not taken for it.
	 */
	if (set_seq && h->nlmsg_seq == set_seq && e->msg.nlmsg_seq == set_seq &&
	    !t->priv && e->error == 0) {
		char hex[3 * 96 + 1] = "";
		unsigned int i;

		for (i = 0; i < t->msg.len && i < 96; i++)
			sprintf(hex + 3 * i, "%02x ", t->msg.b[i]);
		gs_fail(t->w, "nobody's SET command (seq %u) succeeded: %s", set_seq, hex);
	}
}

/*
 * Read what the kernel sends back, checking every message, until the
 * @nreq requests sent last (sequence numbers up to t->seq) have ended (an
 * error or ack, or the end of a dump) or nothing comes for @ms. @set_seq:
 * the sequence number of a state-changing request (SET_*), or 0.
 */
static void drain(struct nlw *t, int fd, int ms, __u32 set_seq, int nreq)
{
	__u32 first = t->seq - nreq + 1;
	ssize_t n;

	while (nreq > 0 && (n = gs_nl_recv(fd, t->rx, sizeof(t->rx), ms)) != 0) {
		const struct nlmsghdr *h = (const void *)t->rx;
		ssize_t left = n;

		if (n < 0) {
			if (n != -ENOBUFS)
				gs_fail(t->w, "recv: %s", strerror(-n));
			continue;
		}
		for (; NLMSG_OK(h, left); h = NLMSG_NEXT(h, left)) {
			gs_count(C_REPLIES, 1);
			if ((h->nlmsg_type == NLMSG_ERROR || h->nlmsg_type == NLMSG_DONE) &&
			    h->nlmsg_seq - first <= t->seq - first)
				nreq--;
			if (h->nlmsg_type == NLMSG_ERROR)
				check_error(t, h, set_seq);
			else if (h->nlmsg_type == family) {
				check_family_msg(t, h);
				if (h->nlmsg_flags & NLM_F_MULTI)
					gs_count(C_DUMP_PARTS, 1);
			} else if (h->nlmsg_type != NLMSG_DONE &&
				   h->nlmsg_type != GENL_ID_CTRL)
				gs_fail(t->w, "reply of type %u", h->nlmsg_type);
		}
		if (left > 0 && left >= (ssize_t)NLMSG_HDRLEN)
			gs_fail(t->w, "%zd bytes after the last whole message", left);
		ms = 50;	/* what follows comes at once */
	}
}

static __u32 pick_gpu(struct nlw *t)
{
	if (gs_chance(&t->rng, 85))
		return fuzz_gpu_index[gs_below(&t->rng, GS_FUZZ_NR_GPUS)];
	return gs_chance(&t->rng, 50) ? gs_below(&t->rng, 70) :
					(__u32)gs_interesting(&t->rng);
}

static __u32 knob_value(struct nlw *t, __u32 lo, __u32 hi)
{
	if (gs_chance(&t->rng, 70))
		return lo + gs_below(&t->rng, (hi - lo) / 50 + 1);
	return gs_interesting(&t->rng);
}

/* A well-formed request of a random command. Returns whether it is a SET. */
static bool build_valid(struct nlw *t, struct gs_msg *m)
{
	/* An ack ends every request: the reader need not wait for silence. */
	__u16 flags = NLM_F_REQUEST | (gs_chance(&t->rng, 90) ? NLM_F_ACK : 0);
	unsigned int i;

	switch (gs_below(&t->rng, 5)) {
	case 0:
		gs_msg_init(m, family, flags, GPUSCHED_CMD_GET_GPU, 1);
		gs_msg_u32(m, GPUSCHED_A_GPU_INDEX, pick_gpu(t));
		return false;
	case 1:
		gs_msg_init(m, family, flags | NLM_F_DUMP,
			    gs_chance(&t->rng, 50) ? GPUSCHED_CMD_GET_GPU :
						     GPUSCHED_CMD_GET_CLIENT, 1);
		if (gs_chance(&t->rng, 40))
			gs_msg_u32(m, GPUSCHED_A_CLIENT_GPU, pick_gpu(t));
		return false;
	case 2:
		gs_msg_init(m, family, flags, GPUSCHED_CMD_SET_GPU, 1);
		gs_msg_u32(m, GPUSCHED_A_GPU_INDEX, pick_gpu(t));
		if (gs_chance(&t->rng, 50))
			gs_msg_u32(m, GPUSCHED_A_GPU_TIMESLICE_US, knob_value(t, 100, 200000));
		if (gs_chance(&t->rng, 50))
			gs_msg_u32(m, GPUSCHED_A_GPU_GRACE_US, knob_value(t, 1000, 200000));
		if (gs_chance(&t->rng, 30))
			gs_msg_u32(m, GPUSCHED_A_GPU_MIN_GRANT_US, knob_value(t, 10, 10000));
		if (gs_chance(&t->rng, 30))
			gs_msg_u32(m, GPUSCHED_A_GPU_STARVE_US, knob_value(t, 1000, 2000000));
		if (gs_chance(&t->rng, 30))
			gs_msg_u32(m, GPUSCHED_A_GPU_WINDOW_US, knob_value(t, 1000, 1000000));
		if (gs_chance(&t->rng, 30))
			gs_msg_u32(m, GPUSCHED_A_GPU_LATENCY_PCT, knob_value(t, 0, 90));
		if (gs_chance(&t->rng, 20))
			gs_msg_u32(m, GPUSCHED_A_GPU_MEM_DEFAULT_PCT, knob_value(t, 0, 100));
		if (gs_chance(&t->rng, 20))
			gs_msg_u32(m, GPUSCHED_A_GPU_MEM_RESERVE_MB, knob_value(t, 0, 1U << 24));
		return true;
	default:
		gs_msg_init(m, family, flags, GPUSCHED_CMD_SET_CLIENT, 1);
		i = gs_below(&t->rng, 4);
		if (i == 0 || i == 2)
			gs_msg_u64(m, GPUSCHED_A_CLIENT_ID, t->nr_ids ?
				   t->ids[gs_below(&t->rng, t->nr_ids < 32 ? t->nr_ids : 32)] :
				   gs_interesting(&t->rng));
		if (i == 1 || i == 2)
			gs_msg_u32(m, GPUSCHED_A_CLIENT_PID,
				   gs_chance(&t->rng, 70) ? (__u32)churn_pid :
				   (__u32)gs_interesting(&t->rng));
		if (gs_chance(&t->rng, 30))
			gs_msg_u32(m, GPUSCHED_A_CLIENT_GPU, pick_gpu(t));
		if (gs_chance(&t->rng, 60))
			gs_msg_u32(m, GPUSCHED_A_CLIENT_WEIGHT, knob_value(t, 1, 10000));
		if (gs_chance(&t->rng, 40))
			gs_msg_u32(m, GPUSCHED_A_CLIENT_CLASS, knob_value(t, 0, 2));
		if (gs_chance(&t->rng, 40))
			gs_msg_u32(m, GPUSCHED_A_CLIENT_CAP_PCT, knob_value(t, 0, 100));
		/* Both at once sometimes: EINVAL. */
		if (gs_chance(&t->rng, 25))
			gs_msg_u64(m, GPUSCHED_A_CLIENT_MEM_LIMIT,
				   gs_chance(&t->rng, 50) ? gs_below(&t->rng, 1ULL << 34) :
							    gs_interesting(&t->rng));
		if (gs_chance(&t->rng, 25))
			gs_msg_u32(m, GPUSCHED_A_CLIENT_MEM_LIMIT_PCT, knob_value(t, 1, 100));
		return true;
	}
}

static void put_garbage_nest(struct nlw *t, struct gs_msg *m, int depth)
{
	size_t start = m->len, n = gs_below(&t->rng, 4);
	struct nlattr *a;

	if (m->len + NLA_HDRLEN > sizeof(m->b) - 512)
		return;
	a = (struct nlattr *)(m->b + m->len);
	a->nla_type = gs_below(&t->rng, 24) | NLA_F_NESTED;
	m->len += NLA_HDRLEN;
	while (n--) {
		if (depth < 4 && gs_chance(&t->rng, 40)) {
			put_garbage_nest(t, m, depth + 1);
		} else {
			size_t len = gs_below(&t->rng, 24);
			unsigned char junk[24];
			size_t i;

			for (i = 0; i < len; i++)
				junk[i] = gs_rnd(&t->rng);
			m->nr_attrs = 64;	/* nested: not top-level */
			gs_msg_put(m, gs_below(&t->rng, 24), junk, len);
		}
	}
	a->nla_len = m->len - start;
	gs_msg_hdr(m)->nlmsg_len = m->len;
}

/* Damage a message in a few random ways. */
static void mutate(struct nlw *t, struct gs_msg *m)
{
	struct nlmsghdr *h = gs_msg_hdr(m);
	struct genlmsghdr *g = NLMSG_DATA(h);
	unsigned int n = 1 + gs_below(&t->rng, 4), nr = m->nr_attrs < 64 ? m->nr_attrs : 0;
	struct nlattr *a;
	size_t i;

	while (n--) {
		switch (gs_below(&t->rng, 14)) {
		case 0:
			g->cmd = gs_chance(&t->rng, 50) ? gs_below(&t->rng, 10) :
							  (__u8)gs_rnd(&t->rng);
			break;
		case 1:
			g->version = gs_rnd(&t->rng);
			break;
		case 2:
			g->reserved = gs_rnd(&t->rng);
			break;
		case 3:
			h->nlmsg_flags = gs_rnd(&t->rng) | NLM_F_REQUEST;
			break;
		case 4:		/* an attribute claims more or less than it has */
			if (!nr)
				break;
			a = (struct nlattr *)(m->b + m->attr_off[gs_below(&t->rng, nr)]);
			a->nla_len = gs_chance(&t->rng, 50) ? a->nla_len + gs_below(&t->rng, 64) - 32 :
							      (__u16)gs_rnd(&t->rng);
			break;
		case 5:		/* another type, maybe with the nested or byte-order flag */
			if (!nr)
				break;
			a = (struct nlattr *)(m->b + m->attr_off[gs_below(&t->rng, nr)]);
			a->nla_type = gs_chance(&t->rng, 60) ? gs_below(&t->rng, 24) :
							       (__u16)gs_rnd(&t->rng);
			break;
		case 6:		/* the message ends inside an attribute */
			if (m->len > NLMSG_HDRLEN + GENL_HDRLEN)
				m->len -= 1 + gs_below(&t->rng, m->len - NLMSG_HDRLEN - GENL_HDRLEN);
			h->nlmsg_len = gs_chance(&t->rng, 50) ? m->len : h->nlmsg_len;
			break;
		case 7:
			h->nlmsg_len = gs_chance(&t->rng, 50) ? gs_below(&t->rng, m->len + 64) :
								(__u32)gs_rnd(&t->rng);
			break;
		case 8:
			put_garbage_nest(t, m, 0);
			break;
		case 9:		/* a random attribute of random size */
			{
				unsigned char junk[64];
				size_t len = gs_below(&t->rng, 64);

				for (i = 0; i < len; i++)
					junk[i] = gs_rnd(&t->rng);
				gs_msg_put(m, gs_below(&t->rng, 24), junk, len);
			}
			break;
		case 10:	/* the same attribute twice */
			if (nr) {
				a = (struct nlattr *)(m->b + m->attr_off[gs_below(&t->rng, nr)]);
				if (a->nla_len >= NLA_HDRLEN && a->nla_len < 256 &&
				    (char *)a + a->nla_len <= (char *)m->b + m->len) {
					unsigned char copy[256];
					__u16 len = a->nla_len;

					memcpy(copy, gs_nla_data(a), len - NLA_HDRLEN);
					gs_msg_put(m, a->nla_type, copy, len - NLA_HDRLEN);
				}
			}
			break;
		case 11:	/* flip bits anywhere but the message's type */
			{
				/* A flipped type addresses another family
				 * (38 ^ 4 = 34): not ours to fuzz, its reply
				 * not ours to judge. The default case picks
				 * the type among ours and nlctrl.
				 */
				__u16 type = h->nlmsg_type;

				for (i = 0; i < 1 + gs_below(&t->rng, 4); i++)
					m->b[gs_below(&t->rng, m->len)] ^= 1 << gs_below(&t->rng, 8);
				h->nlmsg_type = type;
			}
			break;
		case 12:	/* an interesting value in an attribute */
			if (nr) {
				a = (struct nlattr *)(m->b + m->attr_off[gs_below(&t->rng, nr)]);
				if (a->nla_len >= NLA_HDRLEN + 4 &&
				    (char *)a + a->nla_len <= (char *)m->b + m->len) {
					__u64 v = gs_interesting(&t->rng);

					memcpy((char *)a + NLA_HDRLEN, &v,
					       a->nla_len >= NLA_HDRLEN + 8 ? 8 : 4);
				}
			}
			break;
		default:
			h->nlmsg_type = gs_chance(&t->rng, 80) ? family : GENL_ID_CTRL;
			break;
		}
	}
}

static bool is_set(const struct gs_msg *m)
{
	const struct genlmsghdr *g = (const void *)(m->b + NLMSG_HDRLEN);

	return g->cmd == GPUSCHED_CMD_SET_GPU || g->cmd == GPUSCHED_CMD_SET_CLIENT;
}

static void send_checked(struct nlw *t, const void *buf, size_t len)
{
	int err = gs_nl_send(t->fd, buf, len);

	if (err && err != -EINVAL && err != -ENODATA && err != -ENOBUFS && err != -EPERM &&
	    err != -EMSGSIZE && err != -ENOENT && err != -EOPNOTSUPP &&
	    err != -EAGAIN && err != -ERANGE && err != -ENODEV && err != -ESRCH)
		gs_fail(t->w, "send of %zu bytes: %s", len, strerror(-err));
}

/* Number the request; its sequence number. */
static __u32 number(struct nlw *t, struct gs_msg *m)
{
	gs_msg_hdr(m)->nlmsg_seq = ++t->seq;
	return t->seq;
}

static void op_valid(struct nlw *t)
{
	bool set = build_valid(t, &t->msg);
	__u32 seq = number(t, &t->msg);

	send_checked(t, t->msg.b, t->msg.len);
	drain(t, t->fd, 500, set ? seq : 0, 1);
}

static void op_mutated(struct nlw *t)
{
	__u32 seq;

	build_valid(t, &t->msg);
	seq = number(t, &t->msg);
	mutate(t, &t->msg);
	/* Whatever the message became, nobody must not change state. */
	send_checked(t, t->msg.b, t->msg.len);
	/* Without NLM_F_REQUEST the kernel acks (0) and does nothing. */
	drain(t, t->fd, 50, is_set(&t->msg) && gs_msg_hdr(&t->msg)->nlmsg_type == family &&
	      (gs_msg_hdr(&t->msg)->nlmsg_flags & NLM_F_REQUEST) &&
	      gs_msg_hdr(&t->msg)->nlmsg_len == t->msg.len &&
	      !(gs_msg_hdr(&t->msg)->nlmsg_flags & NLM_F_DUMP) ? seq : 0, 1);
}

static void op_garbage(struct nlw *t)
{
	struct gs_msg *m = &t->msg;
	size_t i, len = gs_below(&t->rng, 256);

	gs_msg_init(m, family, NLM_F_REQUEST | NLM_F_ACK, gs_rnd(&t->rng), gs_rnd(&t->rng));
	for (i = 0; i < len; i++)
		m->b[m->len + i] = gs_rnd(&t->rng);
	m->len += len;
	gs_msg_hdr(m)->nlmsg_len = gs_chance(&t->rng, 80) ? m->len : (__u32)gs_rnd(&t->rng);
	if (gs_chance(&t->rng, 20))
		gs_msg_hdr(m)->nlmsg_flags |= NLM_F_DUMP;
	gs_msg_hdr(m)->nlmsg_seq = ++t->seq;
	send_checked(t, m->b, gs_chance(&t->rng, 90) ? m->len : gs_below(&t->rng, m->len + 1));
	drain(t, t->fd, 50, 0, 1);
}

/* Several messages in one datagram, some damaged. */
static void op_batch(struct nlw *t)
{
	static unsigned char out[65536];
	size_t len = 0;
	unsigned int n = 2 + gs_below(&t->rng, 4), sent = 0;

	while (n--) {
		build_valid(t, &t->msg2);
		number(t, &t->msg2);
		if (gs_chance(&t->rng, 40))
			mutate(t, &t->msg2);
		if (len + NLMSG_ALIGN(t->msg2.len) > sizeof(out))
			break;
		memcpy(out + len, t->msg2.b, t->msg2.len);
		len += NLMSG_ALIGN(t->msg2.len);
		sent++;
	}
	send_checked(t, out, len);
	drain(t, t->fd, 50, 0, sent);
}

/* A dump left half-read, then the socket closed under it. */
static void op_dump_abandon(struct nlw *t)
{
	struct gs_msg *m = &t->msg;
	int fd = gs_nl_open(), rcv;

	if (fd < 0)
		return;
	if (gs_chance(&t->rng, 50)) {
		rcv = 256 + gs_below(&t->rng, 4096);
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv));
	}
	gs_msg_init(m, family, NLM_F_REQUEST | NLM_F_DUMP,
		    gs_chance(&t->rng, 70) ? GPUSCHED_CMD_GET_CLIENT : GPUSCHED_CMD_GET_GPU, 1);
	gs_nl_send(fd, m->b, m->len);
	if (gs_chance(&t->rng, 50)) {
		ssize_t n = recv(fd, t->rx, gs_chance(&t->rng, 50) ? 64 : sizeof(t->rx),
				 MSG_DONTWAIT);
		(void)n;
	}
	gs_fuzz_sleep_us(gs_below(&t->rng, 2000));
	close(fd);
}

/* Join the events group (root only), read a few, leave some queued. */
static void op_events(struct nlw *t)
{
	ssize_t n;
	int err;

	if (t->ev_fd < 0) {
		t->ev_fd = gs_nl_open();
		if (t->ev_fd < 0)
			return;
		err = setsockopt(t->ev_fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP,
				 &events_grp, sizeof(events_grp)) ? -errno : 0;
		if (!t->priv && err != -EPERM)
			gs_fail(t->w, "nobody joining events: %d", err);
		if (t->priv && err)
			gs_fail(t->w, "root joining events: %s", strerror(-err));
		if (err) {
			close(t->ev_fd);
			t->ev_fd = -1;
		}
		return;
	}
	if (gs_chance(&t->rng, 20)) {
		close(t->ev_fd);		/* with events queued */
		t->ev_fd = -1;
		return;
	}
	while ((n = gs_nl_recv(t->ev_fd, t->rx, sizeof(t->rx), 10)) > 0) {
		const struct nlmsghdr *h = (const void *)t->rx;
		ssize_t left = n;

		for (; NLMSG_OK(h, left); h = NLMSG_NEXT(h, left)) {
			gs_count(C_EVENTS, 1);
			if (h->nlmsg_type != family)
				gs_fail(t->w, "event of type %u", h->nlmsg_type);
			else
				check_family_msg(t, h);
		}
	}
}

static void op_sockopt(struct nlw *t)
{
	static const int opts[] = {
		NETLINK_EXT_ACK, NETLINK_CAP_ACK, NETLINK_GET_STRICT_CHK,
		NETLINK_NO_ENOBUFS, NETLINK_BROADCAST_ERROR,
	};
	int v = gs_below(&t->rng, 2), rcv;

	if (gs_chance(&t->rng, 20)) {
		rcv = gs_chance(&t->rng, 50) ? 512 : 1 << 20;
		setsockopt(t->fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv));
		return;
	}
	setsockopt(t->fd, SOL_NETLINK, opts[gs_below(&t->rng, 5)], &v, sizeof(v));
}

static void op_reopen(struct nlw *t)
{
	close(t->fd);
	t->fd = gs_nl_open();
	if (t->fd < 0)
		gs_fail(t->w, "socket: %s", strerror(-t->fd));
}

static int worker_process(int proc, const struct gs_fuzz_opts *o, bool priv)
{
	struct nlw *t = calloc(1, sizeof(*t));
	unsigned int i;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (!priv)
		gs_drop_privileges();
	t->w = proc;
	t->priv = priv;
	t->ev_fd = -1;
	gs_rng_init(&t->rng, o->seed, proc + 1);
	t->fd = gs_nl_open();
	if (t->fd < 0)
		return 1;
	gs_sh->beat[t->w].tid = gs_gettid();
	while (!gs_stopping()) {
		i = gs_pick(&t->rng, op_weight, NR_OPS);
		gs_beat_begin(t->w, i);
		switch (i) {
		case OP_VALID: op_valid(t); break;
		case OP_MUTATED: op_mutated(t); break;
		case OP_GARBAGE: op_garbage(t); break;
		case OP_BATCH: op_batch(t); break;
		case OP_DUMP_ABANDON: op_dump_abandon(t); break;
		case OP_EVENTS: op_events(t); break;
		case OP_SOCKOPT: op_sockopt(t); break;
		default: op_reopen(t); break;
		}
		if (t->fd < 0)
			t->fd = gs_nl_open();
		gs_count(i, 1);
		gs_beat_end(t->w);
	}
	return 0;
}

/*
 * Clients for the dumps and events: a few dozen files on the fuzz GPUs,
 * opened, attached out of order, acquired, released and closed at random.
 */
static int churn_process(const struct gs_fuzz_opts *o)
{
	struct gpusched_acquire aq = { .flags = GPUSCHED_ACQUIRE_TIMEOUT };
	struct gpusched_release rl = { 0 };
	struct gpusched_attach at = { 0 };
	int fds[48], i;
	struct gs_rng rng;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	gs_rng_init(&rng, o->seed, 999);
	for (i = 0; i < 48; i++)
		fds[i] = -1;
	while (!gs_stopping()) {
		int k = gs_below(&rng, 48);
		char name[16];

		switch (gs_below(&rng, 4)) {
		case 0:
			if (fds[k] >= 0)
				close(fds[k]);
			snprintf(name, sizeof(name), "churn-%llx",
				 (unsigned long long)gs_below(&rng, 1 << 20));
			prctl(PR_SET_NAME, name);
			fds[k] = open(GPUSCHED_DEVICE_PATH, O_RDWR | O_CLOEXEC);
			break;
		case 1:
			gs_fuzz_uuid(at.uuid, gs_below(&rng, GS_FUZZ_NR_GPUS));
			ioctl(fds[k], GPUSCHED_IOC_ATTACH, &at);
			break;
		case 2:
			aq.timeout_ns = gs_below(&rng, 2000000);
			ioctl(fds[k], GPUSCHED_IOC_ACQUIRE, &aq);
			break;
		default:
			ioctl(fds[k], GPUSCHED_IOC_RELEASE, &rl);
			if (gs_chance(&rng, 30)) {
				close(fds[k]);
				fds[k] = -1;
			}
			break;
		}
		gs_count(C_CHURN, 1);
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct gs_fuzz_opts o = { .seconds = 10, .procs = 4, .threads = 1,
				  .hang_s = 60 };
	pid_t pids[GS_FUZZ_MAX_WORKERS + 1];
	struct gs_knob_snap *knobs;
	uint64_t start, total;
	unsigned int i;
	int fd, err, bad;

	gs_fuzz_start("fuzz-netlink", op_names, argc, argv, &o);
	errno_seen = mmap(NULL, MAX_ERRNO * sizeof(*errno_seen),
			  PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	printf("# seed %#" PRIx64 " (GSFUZZ_SEED=%#" PRIx64 " or -s to rerun), %u s, %u processes\n",
	       o.seed, o.seed, o.seconds, o.procs);
	fd = gs_nl_open();
	family = fd < 0 ? fd : gs_nl_family(fd, &events_grp);
	if (fd >= 0)
		close(fd);
	err = family < 0 ? family : gs_fuzz_find_gpus();
	if (err < 0) {
		printf("not ok 1 - fuzz-netlink: family or GPUs: %s\n", strerror(-err));
		return 1;
	}
	printf("# family %d, events group %u\n", family, events_grp);
	knobs = calloc(1, sizeof(*knobs));
	gs_knobs_save(knobs);

	start = gs_fuzz_now_ns();
	gs_sh->end_ns = start + o.seconds * 1000000000ull;
	fflush(NULL);
	churn_pid = fork();
	if (churn_pid == 0)
		_exit(churn_process(&o));
	for (i = 0; i < o.procs; i++) {
		pids[i] = fork();
		if (pids[i] == 0)
			_exit(worker_process(i, &o, i % 2 == 0));
	}
	pids[o.procs] = churn_pid;
	bad = gs_witness_start();
	gs_watch(pids, o.procs + 1, o.procs, &o);
	bad += gs_witness_stop();

	bad += gs_knobs_restore(knobs);
	total = gs_fuzz_print_counts("requests", start, NR_OPS, NR_COUNTERS);
	printf("\n# errors:");
	for (i = 1; i < MAX_ERRNO; i++)
		if (errno_seen[i])
			printf(" %s %" PRIu64 ",", strerrorname_np(i) ?: "?", errno_seen[i]);
	printf("\n");
	return gs_fuzz_verdict(o.seed, "requests", total, bad);
}
