// SPDX-License-Identifier: GPL-2.0
/*
 * The "gpusched" generic netlink family from user space, with libnl-genl-3.
 *
 * libnl turns the kernel's error codes into its own (NLE_*), which loses
 * the difference between, say, ESRCH and ENODEV that a person needs to
 * hear about, and 3.7 knows nothing of extended acks. So every request
 * installs its own error handler that keeps the errno and the kernel's
 * message, and the socket asks for extended acks itself.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>

#include "genl.h"
#include "gs_abi.h"

#ifndef SOL_NETLINK
#define SOL_NETLINK	270
#endif

struct gs_nl {
	struct nl_sock *sk;
	int family;
	char errmsg[256];
};

struct gs_nl_events {
	struct nl_sock *sk;
	int family;		/* 0 until joined */
	int group;
	gs_nl_event_fn *fn;
	void *arg;
};

/* One request in flight: what its callbacks found. */
struct gs_req {
	struct gs_nl *nl;
	struct nl_msg *msg;	/* the request, to name a rejected attribute */
	int err;		/* 0 or -errno */
	uint32_t seq;		/* of the request */
	bool done;
	int (*parse)(struct gs_req *r, struct nlmsghdr *nlh);
	void *out;		/* of parse: an array and its size */
	size_t n, cap, size;
};

static const char *const client_attr_names[GPUSCHED_A_CLIENT_MAX + 1] = {
	[GPUSCHED_A_CLIENT_GPU] = "gpu",
	[GPUSCHED_A_CLIENT_ID] = "id",
	[GPUSCHED_A_CLIENT_PID] = "pid",
	[GPUSCHED_A_CLIENT_COMM] = "comm",
	[GPUSCHED_A_CLIENT_UID] = "uid",
	[GPUSCHED_A_CLIENT_GID] = "gid",
	[GPUSCHED_A_CLIENT_CGROUP_ID] = "cgroup-id",
	[GPUSCHED_A_CLIENT_WEIGHT] = "weight",
	[GPUSCHED_A_CLIENT_CLASS] = "class",
	[GPUSCHED_A_CLIENT_CAP_PCT] = "cap",
	[GPUSCHED_A_CLIENT_STATE] = "state",
	[GPUSCHED_A_CLIENT_POLICY_SET] = "policy-set",
	[GPUSCHED_A_CLIENT_POLICY_LOWERED] = "policy-lowered",
	[GPUSCHED_A_CLIENT_MEM_LIMIT] = "mem_limit",
	[GPUSCHED_A_CLIENT_MEM_LIMIT_PCT] = "mem_limit",
};

/* The knobs' attributes are named by the policy's knob table. */
static const char *const gpu_attr_names[GPUSCHED_A_GPU_MAX + 1] = {
	[GPUSCHED_A_GPU_INDEX] = "index",
	[GPUSCHED_A_GPU_UUID] = "uuid",
};

const char *gs_nl_client_attr_name(int attr)
{
	if (attr > 0 && attr <= GPUSCHED_A_CLIENT_MAX && client_attr_names[attr])
		return client_attr_names[attr];
	return "?";
}

const char *gs_nl_gpu_attr_name(int attr)
{
	int k;

	for (k = 0; k < GS_POL_NR_KNOBS; k++)
		if (gs_pol_knobs[k].nl_attr == attr)
			return gs_pol_knobs[k].name;
	if (attr > 0 && attr <= GPUSCHED_A_GPU_MAX && gpu_attr_names[attr])
		return gpu_attr_names[attr];
	return "?";
}

/* libnl's codes for what did not come from the kernel's ack. */
static int nle_to_errno(int nle)
{
	switch (nle < 0 ? -nle : nle) {
	case 0:			return 0;
	case NLE_INTR:		return -EINTR;
	case NLE_BAD_SOCK:	return -EBADF;
	case NLE_AGAIN:		return -EAGAIN;
	case NLE_NOMEM:		return -ENOMEM;
	case NLE_EXIST:		return -EEXIST;
	case NLE_INVAL:		return -EINVAL;
	case NLE_RANGE:		return -ERANGE;
	case NLE_OPNOTSUPP:	return -EOPNOTSUPP;
	case NLE_AF_NOSUPPORT:	return -EAFNOSUPPORT;
	case NLE_OBJ_NOTFOUND:	return -ENOENT;
	case NLE_PERM:		return -EPERM;
	case NLE_BUSY:		return -EBUSY;
	case NLE_PROTO_MISMATCH: return -EPROTONOSUPPORT;
	case NLE_NOACCESS:	return -EACCES;
	case NLE_NODEV:		return -ENODEV;
	default:		return -EIO;
	}
}

/* Ask for the kernel's explanations, without the request echoed back. */
static void want_ext_ack(struct nl_sock *sk)
{
	int one = 1, fd = nl_socket_get_fd(sk);

	setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
}

static int sock_open(struct nl_sock **out)
{
	struct nl_sock *sk = nl_socket_alloc();
	int err;

	if (!sk)
		return -ENOMEM;
	err = genl_connect(sk);
	if (err) {
		nl_socket_free(sk);
		return err == -NLE_PROTO_MISMATCH || err == -NLE_AF_NOSUPPORT ?
		       -EPROTONOSUPPORT : nle_to_errno(err);
	}
	/* Dumps of many clients come in messages of up to 32 KiB. */
	nl_socket_enable_msg_peek(sk);
	want_ext_ack(sk);
	*out = sk;
	return 0;
}

int gs_nl_open(struct gs_nl **out)
{
	struct gs_nl *nl = calloc(1, sizeof(*nl));
	int err;

	if (!nl)
		return -ENOMEM;
	err = sock_open(&nl->sk);
	if (err) {
		free(nl);
		return err;
	}
	nl->family = genl_ctrl_resolve(nl->sk, GPUSCHED_GENL_NAME);
	if (nl->family < 0) {
		err = nl->family == -NLE_OBJ_NOTFOUND ? -ENOENT :
		      nle_to_errno(nl->family);
		gs_nl_close(nl);
		return err;
	}
	*out = nl;
	return 0;
}

void gs_nl_close(struct gs_nl *nl)
{
	if (!nl)
		return;
	nl_socket_free(nl->sk);
	free(nl);
}

const char *gs_nl_errmsg(const struct gs_nl *nl)
{
	return nl->errmsg;
}

/* The attribute at byte @off of our request, for "bad attribute X". */
static int attr_at(struct nl_msg *msg, uint32_t off)
{
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	struct nlattr *a;

	if (off < NLMSG_HDRLEN + GENL_HDRLEN ||
	    off + sizeof(*a) > nlh->nlmsg_len)
		return 0;
	a = (struct nlattr *)((char *)nlh + off);
	return a->nla_type & NLA_TYPE_MASK;
}

static int on_error(struct sockaddr_nl *who, struct nlmsgerr *e, void *arg)
{
	struct nlmsghdr *nlh = (struct nlmsghdr *)((char *)e - NLMSG_HDRLEN);
	struct gs_req *r = arg;
	struct nlattr *a;
	size_t off = sizeof(*e), total;
	int len, rem, bad = 0, missing = 0;
	int cmd = genlmsg_hdr(nlmsg_hdr(r->msg))->cmd;
	const char *(*name)(int) = cmd == GPUSCHED_CMD_GET_GPU ||
				   cmd == GPUSCHED_CMD_SET_GPU ?
				   gs_nl_gpu_attr_name : gs_nl_client_attr_name;
	char *m = r->nl->errmsg;
	size_t msize = sizeof(r->nl->errmsg);

	(void)who;
	r->err = e->error < 0 ? e->error : -EIO;
	r->done = true;
	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
		return NL_STOP;
	/*
	 * libnl checked that the message is whole and holds *e, no more.
	 * Uncapped, the request comes back whole before the attributes: its
	 * length is the message's word, not to be trusted with an offset.
	 */
	total = nlh->nlmsg_len - NLMSG_HDRLEN;
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED)) {
		if (e->msg.nlmsg_len < NLMSG_HDRLEN ||
		    e->msg.nlmsg_len - NLMSG_HDRLEN > total - off)
			return NL_STOP;
		off += e->msg.nlmsg_len - NLMSG_HDRLEN;
	}
	if (total <= off)
		return NL_STOP;
	len = (int)(total - off);
	nla_for_each_attr(a, (struct nlattr *)((char *)e + off), len, rem) {
		switch (nla_type(a)) {
		case NLMSGERR_ATTR_MSG:
			snprintf(m, msize, "%.*s", nla_len(a), (char *)nla_data(a));
			break;
		case NLMSGERR_ATTR_OFFS:
			if (nla_len(a) >= 4)
				bad = attr_at(r->msg, nla_get_u32(a));
			break;
		case NLMSGERR_ATTR_MISS_TYPE:
			if (nla_len(a) >= 4)
				missing = (int)nla_get_u32(a);
			break;
		}
	}
	/* m[0] is cleared before each request; strip the message's NUL. */
	if (bad || missing) {
		size_t n = strnlen(m, msize);

		snprintf(m + n, msize - n, "%s(%s attribute \"%s\")",
			 n ? " " : "", bad ? "bad" : "missing",
			 name(bad ? bad : missing));
	}
	return NL_STOP;
}

static int on_ack(struct nl_msg *msg, void *arg)
{
	struct gs_req *r = arg;

	(void)msg;
	r->done = true;
	return NL_STOP;
}

static int on_finish(struct nl_msg *msg, void *arg)
{
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	struct gs_req *r = arg;

	/* A dump that failed part-way says so in its DONE message. */
	if (nlh->nlmsg_len >= NLMSG_HDRLEN + sizeof(int)) {
		int err = *(int *)nlmsg_data(nlh);

		if (err < 0)
			r->err = err;
	}
	r->done = true;
	return NL_STOP;
}

static int on_valid(struct nl_msg *msg, void *arg)
{
	struct gs_req *r = arg;
	int err;

	if (!r->parse || r->err)
		return NL_OK;
	err = r->parse(r, nlmsg_hdr(msg));
	if (err)
		r->err = err;
	return NL_OK;
}

/* Only the replies to this request: others are left from an earlier one. */
static int on_seq(struct nl_msg *msg, void *arg)
{
	struct gs_req *r = arg;

	return nlmsg_hdr(msg)->nlmsg_seq == r->seq ? NL_OK : NL_SKIP;
}

/* Room for one more record in the request's output array. */
static void *out_next(struct gs_req *r)
{
	if (r->n == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 16;
		void *p = realloc(r->out, cap * r->size);

		if (!p)
			return NULL;
		r->out = p;
		r->cap = cap;
	}
	return (char *)r->out + r->n++ * r->size;
}

/* Send @msg (consumed) and collect the reply, the dump or the ack. */
static int gs_request(struct gs_nl *nl, struct nl_msg *msg, struct gs_req *r)
{
	/*
	 * On the socket's callbacks: libnl's defaults, or a test transport
	 * that stands in for the kernel (tests/fuzz/lf-nlevents.c).
	 */
	struct nl_cb *base = nl_socket_get_cb(nl->sk);
	struct nl_cb *cb = base ? nl_cb_clone(base) : NULL;
	int err;

	nl_cb_put(base);

	nl->errmsg[0] = '\0';
	r->nl = nl;
	r->msg = msg;
	if (!cb) {
		nlmsg_free(msg);
		return -ENOMEM;
	}
	nl_cb_err(cb, NL_CB_CUSTOM, on_error, r);
	nl_cb_set(cb, NL_CB_ACK, NL_CB_CUSTOM, on_ack, r);
	nl_cb_set(cb, NL_CB_FINISH, NL_CB_CUSTOM, on_finish, r);
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, on_valid, r);
	nl_cb_set(cb, NL_CB_SEQ_CHECK, NL_CB_CUSTOM, on_seq, r);
	err = nl_send_auto(nl->sk, msg);
	if (err < 0) {
		r->err = nle_to_errno(err);
		goto out;
	}
	r->seq = nlmsg_hdr(msg)->nlmsg_seq;
	/*
	 * Up to this request's last message (the ack, the error, DONE), even
	 * after a reply that could not be used: what is left unread would
	 * be taken for the answer to the next request, and every request
	 * after it would get its predecessor's. Only a failure to receive
	 * ends the wait early; replies that the seq check finds are not
	 * ours, left from such a request, are skipped.
	 */
	while (!r->done) {
		err = nl_recvmsgs(nl->sk, cb);
		if (err < 0) {
			/* The error handler has the kernel's errno; keep it. */
			if (!r->err)
				r->err = nle_to_errno(err);
			if (!r->done)
				break;
		}
	}
out:
	nl_cb_put(cb);
	nlmsg_free(msg);
	return r->err;
}

static struct nl_msg *new_msg(struct gs_nl *nl, int flags, uint8_t cmd)
{
	struct nl_msg *msg = nlmsg_alloc();

	if (msg && !genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, nl->family, 0,
				flags, cmd, GPUSCHED_GENL_VERSION)) {
		nlmsg_free(msg);
		msg = NULL;
	}
	return msg;
}

/* Attribute getters that check the length the kernel sent. */
static void get_u32(struct nlattr **tb, int type, uint32_t *dst)
{
	if (tb[type] && nla_len(tb[type]) >= 4)
		*dst = nla_get_u32(tb[type]);
}

static void get_u64(struct nlattr **tb, int type, uint64_t *dst)
{
	if (tb[type] && nla_len(tb[type]) >= 8)
		*dst = nla_get_u64(tb[type]);
}

static int parse_gpu(struct nlmsghdr *nlh, struct gs_gpu_rec *g)
{
	struct nlattr *tb[GPUSCHED_A_GPU_MAX + 1];
	int k, err;

	err = genlmsg_parse(nlh, 0, tb, GPUSCHED_A_GPU_MAX, NULL);
	if (err)
		return nle_to_errno(err);
	if (!tb[GPUSCHED_A_GPU_INDEX])
		return -EBADMSG;
	memset(g, 0, sizeof(*g));
	get_u32(tb, GPUSCHED_A_GPU_INDEX, &g->index);
	if (tb[GPUSCHED_A_GPU_UUID] &&
	    nla_len(tb[GPUSCHED_A_GPU_UUID]) == GPUSCHED_UUID_LEN)
		memcpy(g->uuid, nla_data(tb[GPUSCHED_A_GPU_UUID]),
		       GPUSCHED_UUID_LEN);
	for (k = 0; k < GS_POL_NR_KNOBS; k++) {
		if (tb[gs_pol_knobs[k].nl_attr]) {
			get_u32(tb, gs_pol_knobs[k].nl_attr, &g->knobs.val[k]);
			g->knobs.mask |= 1U << k;
		}
	}
	get_u32(tb, GPUSCHED_A_GPU_NR_CLIENTS, &g->nr_clients);
	get_u32(tb, GPUSCHED_A_GPU_NR_WAITING, &g->nr_waiting);
	get_u32(tb, GPUSCHED_A_GPU_HOLDER_PID, &g->holder_pid);
	get_u64(tb, GPUSCHED_A_GPU_GRANTS, &g->grants);
	get_u64(tb, GPUSCHED_A_GPU_OVERRUNS, &g->overruns);
	get_u64(tb, GPUSCHED_A_GPU_HELD_NS, &g->held_ns);
	get_u64(tb, GPUSCHED_A_GPU_MEM_RESERVED, &g->mem_reserved);
	return 0;
}

static int parse_client(struct nlmsghdr *nlh, struct gs_client_rec *c)
{
	struct nlattr *tb[GPUSCHED_A_CLIENT_MAX + 1];
	int err;

	err = genlmsg_parse(nlh, 0, tb, GPUSCHED_A_CLIENT_MAX, NULL);
	if (err)
		return nle_to_errno(err);
	if (!tb[GPUSCHED_A_CLIENT_ID] || !tb[GPUSCHED_A_CLIENT_GPU])
		return -EBADMSG;
	memset(c, 0, sizeof(*c));
	get_u32(tb, GPUSCHED_A_CLIENT_GPU, &c->gpu);
	get_u64(tb, GPUSCHED_A_CLIENT_ID, &c->id);
	get_u32(tb, GPUSCHED_A_CLIENT_PID, &c->pid);
	if (tb[GPUSCHED_A_CLIENT_COMM])
		snprintf(c->comm, sizeof(c->comm), "%.*s",
			 nla_len(tb[GPUSCHED_A_CLIENT_COMM]),
			 (char *)nla_data(tb[GPUSCHED_A_CLIENT_COMM]));
	get_u32(tb, GPUSCHED_A_CLIENT_UID, &c->uid);
	get_u32(tb, GPUSCHED_A_CLIENT_GID, &c->gid);
	get_u64(tb, GPUSCHED_A_CLIENT_CGROUP_ID, &c->cgroup_id);
	get_u32(tb, GPUSCHED_A_CLIENT_WEIGHT, &c->weight);
	get_u32(tb, GPUSCHED_A_CLIENT_CLASS, &c->class);
	get_u32(tb, GPUSCHED_A_CLIENT_CAP_PCT, &c->cap_pct);
	get_u32(tb, GPUSCHED_A_CLIENT_STATE, &c->state);
	get_u64(tb, GPUSCHED_A_CLIENT_HELD_NS, &c->held_ns);
	get_u64(tb, GPUSCHED_A_CLIENT_GRANTS, &c->grants);
	get_u64(tb, GPUSCHED_A_CLIENT_WAIT_NS_TOTAL, &c->wait_ns_total);
	get_u64(tb, GPUSCHED_A_CLIENT_WAIT_NS_MAX, &c->wait_ns_max);
	get_u64(tb, GPUSCHED_A_CLIENT_OVERRUNS, &c->overruns);
	get_u64(tb, GPUSCHED_A_CLIENT_YIELDS, &c->yields);
	/* Ids start at 1; a record without one names no client. */
	if (!c->id)
		return -EBADMSG;
	c->has_marks = tb[GPUSCHED_A_CLIENT_POLICY_SET] &&
		       nla_len(tb[GPUSCHED_A_CLIENT_POLICY_SET]) >= 4;
	get_u32(tb, GPUSCHED_A_CLIENT_POLICY_SET, &c->policy_set);
	get_u32(tb, GPUSCHED_A_CLIENT_POLICY_LOWERED, &c->policy_lowered);
	c->policy_set &= GS_PARAM_MASK;
	c->policy_lowered &= GS_PARAM_MASK;
	c->has_mem = tb[GPUSCHED_A_CLIENT_MEM_LIMIT] &&
		     nla_len(tb[GPUSCHED_A_CLIENT_MEM_LIMIT]) >= 8;
	get_u64(tb, GPUSCHED_A_CLIENT_MEM_TOTAL, &c->mem_total);
	get_u64(tb, GPUSCHED_A_CLIENT_MEM_RESERVED, &c->mem_reserved);
	get_u64(tb, GPUSCHED_A_CLIENT_MEM_LIMIT, &c->mem_limit);
	get_u64(tb, GPUSCHED_A_CLIENT_MEM_REFUSED, &c->mem_refused);
	c->has_gpu_ns = tb[GPUSCHED_A_CLIENT_GPU_NS] &&
			nla_len(tb[GPUSCHED_A_CLIENT_GPU_NS]) >= 8;
	get_u64(tb, GPUSCHED_A_CLIENT_GPU_NS, &c->gpu_ns);
	return 0;
}

static int collect_gpu(struct gs_req *r, struct nlmsghdr *nlh)
{
	struct gs_gpu_rec *g = out_next(r);

	return g ? parse_gpu(nlh, g) : -ENOMEM;
}

static int collect_client(struct gs_req *r, struct nlmsghdr *nlh)
{
	struct gs_client_rec *c = out_next(r);

	return c ? parse_client(nlh, c) : -ENOMEM;
}

int gs_nl_get_gpus(struct gs_nl *nl, struct gs_gpu_rec **gpus, size_t *n)
{
	struct gs_req r = { .parse = collect_gpu, .size = sizeof(**gpus) };
	struct nl_msg *msg = new_msg(nl, NLM_F_DUMP, GPUSCHED_CMD_GET_GPU);
	int err;

	if (!msg)
		return -ENOMEM;
	err = gs_request(nl, msg, &r);
	if (err) {
		free(r.out);
		return err;
	}
	*gpus = r.out;
	*n = r.n;
	return 0;
}

int gs_nl_get_gpu(struct gs_nl *nl, uint32_t index, struct gs_gpu_rec *gpu)
{
	struct gs_req r = { .parse = collect_gpu, .size = sizeof(*gpu) };
	struct nl_msg *msg = new_msg(nl, 0, GPUSCHED_CMD_GET_GPU);
	int err;

	if (!msg)
		return -ENOMEM;
	if (nla_put_u32(msg, GPUSCHED_A_GPU_INDEX, index)) {
		nlmsg_free(msg);
		return -ENOMEM;
	}
	err = gs_request(nl, msg, &r);
	if (!err && r.n != 1)
		err = -EBADMSG;
	if (!err)
		*gpu = *(struct gs_gpu_rec *)r.out;
	free(r.out);
	return err;
}

int gs_nl_get_clients(struct gs_nl *nl, int64_t gpu,
		      struct gs_client_rec **clients, size_t *n)
{
	struct gs_req r = { .parse = collect_client, .size = sizeof(**clients) };
	struct nl_msg *msg = new_msg(nl, NLM_F_DUMP, GPUSCHED_CMD_GET_CLIENT);
	int err;

	if (!msg)
		return -ENOMEM;
	if (gpu >= 0 && nla_put_u32(msg, GPUSCHED_A_CLIENT_GPU, (uint32_t)gpu)) {
		nlmsg_free(msg);
		return -ENOMEM;
	}
	err = gs_request(nl, msg, &r);
	if (err) {
		free(r.out);
		return err;
	}
	*clients = r.out;
	*n = r.n;
	return 0;
}

int gs_nl_set_gpu(struct gs_nl *nl, uint32_t index,
		  const struct gs_knob_set *ks)
{
	struct nl_msg *msg = new_msg(nl, 0, GPUSCHED_CMD_SET_GPU);
	struct gs_req r = { 0 };
	int k;

	if (!msg)
		return -ENOMEM;
	if (nla_put_u32(msg, GPUSCHED_A_GPU_INDEX, index))
		goto nomem;
	for (k = 0; k < GS_POL_NR_KNOBS; k++)
		if ((ks->mask & (1U << k)) &&
		    nla_put_u32(msg, gs_pol_knobs[k].nl_attr, ks->val[k]))
			goto nomem;
	return gs_request(nl, msg, &r);
nomem:
	nlmsg_free(msg);
	return -ENOMEM;
}

int gs_nl_set_client(struct gs_nl *nl, uint64_t id, uint32_t pid,
		     int64_t gpu, const struct gpusched_params *p,
		     int64_t policy)
{
	struct nl_msg *msg = new_msg(nl, 0, GPUSCHED_CMD_SET_CLIENT);
	bool mem = p->mask & GPUSCHED_PARAM_MEM_LIMIT;
	bool pct = mem && (p->mem_limit & GS_MEM_PCT_FLAG);
	struct gs_req r = { 0 };

	if (!msg)
		return -ENOMEM;
	if ((id && nla_put_u64(msg, GPUSCHED_A_CLIENT_ID, id)) ||
	    (pid && nla_put_u32(msg, GPUSCHED_A_CLIENT_PID, pid)) ||
	    (gpu >= 0 && nla_put_u32(msg, GPUSCHED_A_CLIENT_GPU, (uint32_t)gpu)) ||
	    ((p->mask & GPUSCHED_PARAM_WEIGHT) &&
	     nla_put_u32(msg, GPUSCHED_A_CLIENT_WEIGHT, p->weight)) ||
	    ((p->mask & GPUSCHED_PARAM_CLASS) &&
	     nla_put_u32(msg, GPUSCHED_A_CLIENT_CLASS, p->sched_class)) ||
	    ((p->mask & GPUSCHED_PARAM_CAP) &&
	     nla_put_u32(msg, GPUSCHED_A_CLIENT_CAP_PCT, p->cap_pct)) ||
	    (mem && !pct &&
	     nla_put_u64(msg, GPUSCHED_A_CLIENT_MEM_LIMIT, p->mem_limit)) ||
	    (pct && nla_put_u32(msg, GPUSCHED_A_CLIENT_MEM_LIMIT_PCT,
				(uint32_t)(p->mem_limit & ~GS_MEM_PCT_FLAG))) ||
	    (policy >= 0 &&
	     nla_put_u32(msg, GPUSCHED_A_CLIENT_POLICY_SET, (uint32_t)policy))) {
		nlmsg_free(msg);
		return -ENOMEM;
	}
	return gs_request(nl, msg, &r);
}

/* --- events --- */

static int resolve_group(const char *family, const char *group, int *fam_id)
{
	struct nl_sock *sk;
	int err, grp;

	err = sock_open(&sk);
	if (err)
		return err;
	grp = genl_ctrl_resolve_grp(sk, family, group);
	if (grp >= 0 && fam_id)
		*fam_id = genl_ctrl_resolve(sk, family);
	nl_socket_free(sk);
	if (grp == -NLE_OBJ_NOTFOUND)
		return -ENOENT;
	if (grp < 0)
		return nle_to_errno(grp);
	if (fam_id && *fam_id < 0)
		return -ENOENT;
	return grp;
}

static int on_event(struct nl_msg *msg, void *arg)
{
	struct gs_nl_events *ev = arg;
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	struct genlmsghdr *gh;
	struct gs_client_rec c;

	if (!genlmsg_valid_hdr(nlh, 0))
		return NL_SKIP;
	gh = genlmsg_hdr(nlh);
	if (nlh->nlmsg_type == GENL_ID_CTRL) {
		struct nlattr *tb[CTRL_ATTR_MAX + 1];

		if (gh->cmd != CTRL_CMD_NEWFAMILY && gh->cmd != CTRL_CMD_DELFAMILY)
			return NL_SKIP;
		if (genlmsg_parse(nlh, 0, tb, CTRL_ATTR_MAX, NULL) ||
		    !tb[CTRL_ATTR_FAMILY_NAME] ||
		    strcmp(nla_get_string(tb[CTRL_ATTR_FAMILY_NAME]),
			   GPUSCHED_GENL_NAME))
			return NL_SKIP;
		if (gh->cmd == CTRL_CMD_DELFAMILY) {
			/* The kernel dropped the membership with the group. */
			ev->family = 0;
			ev->group = 0;
			ev->fn(ev->arg, GS_NL_EV_FAMILY_DEL, NULL);
		} else {
			ev->fn(ev->arg, GS_NL_EV_FAMILY_NEW, NULL);
		}
		return NL_OK;
	}
	if (!ev->family || nlh->nlmsg_type != ev->family)
		return NL_SKIP;
	if (parse_client(nlh, &c))
		return NL_SKIP;
	switch (gh->cmd) {
	case GPUSCHED_CMD_EV_ATTACH:
		ev->fn(ev->arg, GS_NL_EV_ATTACH, &c);
		break;
	case GPUSCHED_CMD_EV_DETACH:
		ev->fn(ev->arg, GS_NL_EV_DETACH, &c);
		break;
	case GPUSCHED_CMD_EV_OVERRUN:
		ev->fn(ev->arg, GS_NL_EV_OVERRUN, &c);
		break;
	}
	return NL_OK;
}

int gs_nl_events_open(struct gs_nl_events **out)
{
	struct gs_nl_events *ev = calloc(1, sizeof(*ev));
	int err, grp, fd, size = 8 << 20;

	if (!ev)
		return -ENOMEM;
	err = sock_open(&ev->sk);
	if (err)
		goto fail;
	/* Multicast messages carry no sequence number of ours. */
	nl_socket_disable_seq_check(ev->sk);
	nl_socket_modify_cb(ev->sk, NL_CB_VALID, NL_CB_CUSTOM, on_event, ev);
	/*
	 * A burst of attaches must not overflow the socket; root may go
	 * past rmem_max. An overflow is survivable (GS_NL_EV_LOST) but costs
	 * a resync.
	 */
	fd = nl_socket_get_fd(ev->sk);
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)))
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
	grp = resolve_group("nlctrl", "notify", NULL);
	if (grp < 0) {
		err = grp;
		goto fail;
	}
	err = nle_to_errno(nl_socket_add_membership(ev->sk, grp));
	if (err)
		goto fail;
	err = nle_to_errno(nl_socket_set_nonblocking(ev->sk));
	if (err)
		goto fail;
	*out = ev;
	return 0;
fail:
	gs_nl_events_close(ev);
	return err;
}

void gs_nl_events_close(struct gs_nl_events *ev)
{
	if (!ev)
		return;
	if (ev->sk)
		nl_socket_free(ev->sk);
	free(ev);
}

int gs_nl_events_fd(const struct gs_nl_events *ev)
{
	return nl_socket_get_fd(ev->sk);
}

int gs_nl_events_join(struct gs_nl_events *ev)
{
	int family = 0, grp, err;

	grp = resolve_group(GPUSCHED_GENL_NAME, GPUSCHED_GENL_MCGRP_EVENTS,
			    &family);
	if (grp < 0)
		return grp;
	if (ev->group == grp && ev->family == family)
		return 0;
	err = nl_socket_add_membership(ev->sk, grp);
	if (err)
		return err == -NLE_PERM || err == -NLE_NOACCESS ? -EPERM :
		       nle_to_errno(err);
	ev->family = family;
	ev->group = grp;
	return 0;
}

int gs_nl_events_read(struct gs_nl_events *ev, gs_nl_event_fn *fn, void *arg)
{
	int err;

	ev->fn = fn;
	ev->arg = arg;
	for (;;) {
		err = nl_recvmsgs_default(ev->sk);
		if (err == -NLE_AGAIN)
			return 0;
		/* ENOBUFS: messages were dropped; libnl calls that NOMEM. */
		if (err == -NLE_NOMEM) {
			fn(arg, GS_NL_EV_LOST, NULL);
			continue;
		}
		if (err < 0)
			return nle_to_errno(err);
	}
}
