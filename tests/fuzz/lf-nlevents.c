// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: gpuschedd's netlink mode on what arrives from the
 * module: events (attach, detach, overrun, the family going and coming,
 * overflow), the replies to its dumps and requests (acks, errors with
 * extended acks), and rule matching on the facts of the clients'
 * processes.
 *
 * genl.c and nlmode.c are compiled in, on libnl as they run, with the
 * kernel replaced by a model of gpusched.ko below: libnl's receive and
 * send hooks of the two sockets (gs_request() takes the socket's
 * callbacks as its base) hand each request to the model, which answers
 * as the module does, and, when the input says so, answers wrongly:
 * errors with made-up extended acks, bytes changed, messages cut, wrong
 * sequence numbers, no answer, or raw bytes. Process facts come from the
 * model too: this file defines gs_proc_init() in place of procfs.c, so
 * rules match on the comm, uid, gid, groups, exe, cgroup and label the
 * input gave a client, and the labels API in place of labels.c, whose
 * reads it never needs.
 *
 * Checks, beyond the sanitizers: every request is well formed (an id,
 * values in range, POLICY_SET only to a module that reports marks and
 * only for fields it sets); that a client that attached while every
 * answer was right has its rule's values, marked; and after each reload
 * and each restart of the daemon (its tables lost, the module's marks
 * kept) with no wrong answer since the last check, every client carries
 * what the policy in force says, as gpuschedd(8) promises: a rule's fields its values
 * (unless the client lowered one itself below it), a field no rule sets
 * the default if a policy set it, the client's own lowering only as far
 * as it is below the default, and anything else untouched.
 *
 * Input: [flags] then records [op] [bytes...] (see the switch in
 * LLVMFuzzerTestOneInput()).
 */
#define on_event genl_on_event
#include "../../daemon/genl.c"
#undef on_event
#include "../../daemon/nlmode.c"

#include <linux/genetlink.h>

#define FAM		0x2a	/* the family's id in the model */
#define GRP		7	/* its events group */
#define MAX_CLIENTS	24
#define MAX_GPUS	4
#define QLEN		64
#define MAX_OPS		256

struct mclient {
	bool live;
	uint64_t id;
	uint32_t gpu, pid, uid, gid;
	char comm[16];
	uint32_t weight, class, cap;
	uint64_t mem;			/* own memory limit; total always 0 */
	uint32_t pset, plow;		/* POLICY_SET, POLICY_LOWERED */
	/* for the rules */
	char exe[64], cgroup[64], label[32];
	uint32_t groups[2];
	size_t nr_groups;
	unsigned int known;
};

struct queue {
	uint8_t *buf[QLEN];
	size_t len[QLEN];
	int err[QLEN];			/* a libnl error instead of data */
	unsigned int head, tail;
};

static struct {
	bool marks;			/* a module that reports marks */
	struct mclient c[MAX_CLIENTS];
	uint32_t nr_gpus;
	struct gs_knob_set knobs[MAX_GPUS];
	uint64_t next_id;
	uint32_t next_pid;
	struct queue req, ev;		/* to the request and event sockets */
	const uint8_t *in;
	size_t left;
	unsigned int corrupt;		/* answer this many requests wrongly */
	bool dirty;			/* a wrong answer since the last check */
	bool family;			/* registered */
} M;

static struct gs_policy *policies[3];

/* Printed at exit with LF_NLEVENTS_STATS=1: what the inputs reached. */
static struct {
	unsigned long inputs, requests, spoiled, events, checks, fields;
} S;

static void print_stats(void)
{
	fprintf(stdout, "lf-nlevents: %lu inputs, %lu requests (%lu answered wrongly), %lu events, %lu checks of %lu fields\n",
		S.inputs, S.requests, S.spoiled, S.events, S.checks, S.fields);
}

/* --- the input --- */

static uint8_t in8(void)
{
	if (!M.left)
		return 0;
	M.left--;
	return *M.in++;
}

static uint16_t in16(void)
{
	return (uint16_t)(in8() | in8() << 8);
}

static uint32_t in32(void)
{
	return (uint32_t)in16() | (uint32_t)in16() << 16;
}

/* --- queues of datagrams --- */

static void q_push(struct queue *q, const void *data, size_t len, int err)
{
	unsigned int i;

	if (q->tail - q->head >= QLEN)
		return;
	i = q->tail++ % QLEN;
	q->buf[i] = len ? malloc(len) : NULL;
	if (len && !q->buf[i])
		abort();
	if (len)
		memcpy(q->buf[i], data, len);
	q->len[i] = len;
	q->err[i] = err;
}

static void q_clear(struct queue *q)
{
	while (q->head != q->tail)
		free(q->buf[q->head++ % QLEN]);
	q->head = q->tail = 0;
}

static int fake_recv(struct nl_sock *sk, struct sockaddr_nl *nla,
		     unsigned char **buf, struct ucred **creds)
{
	struct queue *q = D.ev && sk == D.ev->sk ? &M.ev : &M.req;
	unsigned int i;
	int n;

	(void)creds;
	if (q->head == q->tail)
		return -NLE_AGAIN;	/* a real socket would block: no hang */
	i = q->head++ % QLEN;
	if (q->err[i]) {
		free(q->buf[i]);
		return q->err[i];
	}
	n = (int)q->len[i];
	if (!n)
		return 0;	/* as nl_recv() on an empty datagram */
	memset(nla, 0, sizeof(*nla));
	nla->nl_family = AF_NETLINK;
	*buf = q->buf[i];	/* libnl frees it */
	return n;
}

/* --- messages of the model --- */

struct dgram {
	uint8_t b[1 << 14];
	size_t len;
};

static void dg_add(struct dgram *d, struct nl_msg *msg)
{
	struct nlmsghdr *nlh = nlmsg_hdr(msg);

	if (d->len + nlh->nlmsg_len <= sizeof(d->b)) {
		memcpy(d->b + d->len, nlh, nlh->nlmsg_len);
		d->len += NLMSG_ALIGN(nlh->nlmsg_len);
	}
	nlmsg_free(msg);
}

static struct nl_msg *msg_new(int type, uint32_t seq, int flags, uint8_t cmd)
{
	struct nl_msg *msg = nlmsg_alloc();

	if (!msg || !genlmsg_put(msg, 0, seq, type, 0, flags, cmd, 1))
		abort();
	return msg;
}

static struct nl_msg *client_msg(const struct mclient *c, uint32_t seq,
				 int flags, uint8_t cmd)
{
	struct nl_msg *msg = msg_new(FAM, seq, flags, cmd);

	nla_put_u32(msg, GPUSCHED_A_CLIENT_GPU, c->gpu);
	nla_put_u64(msg, GPUSCHED_A_CLIENT_ID, c->id);
	nla_put_u32(msg, GPUSCHED_A_CLIENT_PID, c->pid);
	nla_put_string(msg, GPUSCHED_A_CLIENT_COMM, c->comm);
	nla_put_u32(msg, GPUSCHED_A_CLIENT_UID, c->uid);
	nla_put_u32(msg, GPUSCHED_A_CLIENT_GID, c->gid);
	nla_put_u64(msg, GPUSCHED_A_CLIENT_CGROUP_ID, 1234);
	nla_put_u32(msg, GPUSCHED_A_CLIENT_WEIGHT, c->weight);
	nla_put_u32(msg, GPUSCHED_A_CLIENT_CLASS, c->class);
	nla_put_u32(msg, GPUSCHED_A_CLIENT_CAP_PCT, c->cap);
	nla_put_u32(msg, GPUSCHED_A_CLIENT_STATE, GPUSCHED_STATE_IDLE);
	nla_put_u64(msg, GPUSCHED_A_CLIENT_GRANTS, 7);
	if (M.marks) {
		nla_put_u32(msg, GPUSCHED_A_CLIENT_POLICY_SET, c->pset);
		nla_put_u32(msg, GPUSCHED_A_CLIENT_POLICY_LOWERED, c->plow);
		nla_put_u64(msg, GPUSCHED_A_CLIENT_MEM_LIMIT, c->mem);
		nla_put_u64(msg, GPUSCHED_A_CLIENT_MEM_TOTAL, 0);
	}
	return msg;
}

static struct nl_msg *gpu_msg(uint32_t index, uint32_t seq, int flags)
{
	struct nl_msg *msg = msg_new(FAM, seq, flags, GPUSCHED_CMD_GET_GPU);
	uint8_t uuid[GPUSCHED_UUID_LEN] = { 0xf0, (uint8_t)index };
	int k;

	nla_put_u32(msg, GPUSCHED_A_GPU_INDEX, index);
	nla_put(msg, GPUSCHED_A_GPU_UUID, GPUSCHED_UUID_LEN, uuid);
	for (k = 0; k < GS_POL_NR_KNOBS; k++)
		nla_put_u32(msg, gs_pol_knobs[k].nl_attr, M.knobs[index].val[k]);
	nla_put_u32(msg, GPUSCHED_A_GPU_NR_CLIENTS, 1);
	nla_put_u64(msg, GPUSCHED_A_GPU_GRANTS, 3);
	return msg;
}

/* An error (or, with @err 0, an ack) for the request @req. */
static void ack(struct dgram *d, const struct nlmsghdr *req, int err)
{
	struct {
		struct nlmsghdr h;
		struct nlmsgerr e;
	} a = {
		.h = { .nlmsg_len = sizeof(a), .nlmsg_type = NLMSG_ERROR,
		       .nlmsg_flags = NLM_F_CAPPED, .nlmsg_seq = req->nlmsg_seq },
		.e = { .error = err, .msg = *req },
	};

	memcpy(d->b + d->len, &a, sizeof(a));
	d->len += sizeof(a);
}

static void done(struct dgram *d, uint32_t seq, int err)
{
	struct {
		struct nlmsghdr h;
		int err;
	} m = {
		.h = { .nlmsg_len = sizeof(m), .nlmsg_type = NLMSG_DONE,
		       .nlmsg_flags = NLM_F_MULTI, .nlmsg_seq = seq },
		.err = err,
	};

	memcpy(d->b + d->len, &m, sizeof(m));
	d->len += sizeof(m);
}

/* An error with an extended ack made of the input's bytes. */
static void bad_ack(struct dgram *d, const struct nlmsghdr *req)
{
	static const int errs[] = { -EPERM, -ESRCH, -ENOMEM, -EINVAL, -ENODEV,
				    -EIO, -EBUSY, -EOPNOTSUPP, 0, -EMSGSIZE };
	struct nlmsghdr *h = (struct nlmsghdr *)(d->b + d->len);
	struct nlmsgerr *e = (struct nlmsgerr *)(h + 1);
	size_t n = in8() % 96, i;
	uint8_t f = in8();

	memset(h, 0, sizeof(*h) + sizeof(*e));
	h->nlmsg_type = NLMSG_ERROR;
	h->nlmsg_flags = (f & 1 ? NLM_F_CAPPED : 0) | (f & 2 ? NLM_F_ACK_TLVS : 0);
	h->nlmsg_seq = req->nlmsg_seq;
	e->error = errs[in8() % (sizeof(errs) / sizeof(errs[0]))];
	e->msg = *req;
	if (in8() & 1)
		e->msg.nlmsg_len = in32();
	for (i = 0; i < n; i++)
		((uint8_t *)(e + 1))[i] = in8();
	h->nlmsg_len = (uint32_t)(sizeof(*h) + sizeof(*e) + n);
	if (in8() & 1)
		h->nlmsg_len = in16();
	d->len += NLMSG_ALIGN(sizeof(*h) + sizeof(*e) + n);
}

/* Queue @d on @q, as it is or as the input spoils it. */
static void deliver(struct queue *q, struct dgram *d, bool spoil)
{
	unsigned int k;

	if (spoil) {
		M.dirty = true;
		switch (in8() % 6) {
		case 0:		/* bytes changed */
			for (k = in8() % 4 + 1; k && d->len; k--)
				d->b[in16() % d->len] = in8();
			break;
		case 1:		/* cut short */
			d->len = d->len ? in16() % d->len : 0;
			break;
		case 2:		/* another request's */
			if (d->len >= sizeof(struct nlmsghdr))
				((struct nlmsghdr *)d->b)->nlmsg_seq += 1 + in8();
			break;
		case 3:		/* not answered */
			return;
		case 4:		/* raw bytes before it */
			{
				uint8_t raw[256];
				size_t n = in8(), i;

				for (i = 0; i < n; i++)
					raw[i] = in8();
				q_push(q, raw, n, 0);
			}
			break;
		default:	/* as it is, twice */
			q_push(q, d->b, d->len, 0);
			break;
		}
	}
	q_push(q, d->b, d->len, 0);
}

static struct mclient *client_by_id(uint64_t id)
{
	int i;

	for (i = 0; i < MAX_CLIENTS; i++)
		if (M.c[i].live && M.c[i].id == id)
			return &M.c[i];
	return NULL;
}

/* --- the model's request handling --- */

static void set_client(const struct nlmsghdr *nlh, struct nlattr **tb,
		       struct dgram *d)
{
	struct mclient *c;
	uint32_t mask = 0, policy = 0, w = 0, cl = 0, cap = 0;
	uint64_t mem = 0;

	/* gpuschedd sets by id, never by pid. */
	if (!tb[GPUSCHED_A_CLIENT_ID] || tb[GPUSCHED_A_CLIENT_PID])
		abort();
	if (tb[GPUSCHED_A_CLIENT_WEIGHT]) {
		mask |= GPUSCHED_PARAM_WEIGHT;
		w = nla_get_u32(tb[GPUSCHED_A_CLIENT_WEIGHT]);
		if (w < GPUSCHED_WEIGHT_MIN || w > GPUSCHED_WEIGHT_MAX)
			abort();
	}
	if (tb[GPUSCHED_A_CLIENT_CLASS]) {
		mask |= GPUSCHED_PARAM_CLASS;
		cl = nla_get_u32(tb[GPUSCHED_A_CLIENT_CLASS]);
		if (cl > GPUSCHED_CLASS_MAX)
			abort();
	}
	if (tb[GPUSCHED_A_CLIENT_CAP_PCT]) {
		mask |= GPUSCHED_PARAM_CAP;
		cap = nla_get_u32(tb[GPUSCHED_A_CLIENT_CAP_PCT]);
		if (cap > 100)
			abort();
	}
	/* No client reports memory: gpuschedd sends no percentage. */
	if (tb[GPUSCHED_A_CLIENT_MEM_LIMIT_PCT])
		abort();
	if (tb[GPUSCHED_A_CLIENT_MEM_LIMIT]) {
		mask |= GPUSCHED_PARAM_MEM_LIMIT;
		mem = nla_get_u64(tb[GPUSCHED_A_CLIENT_MEM_LIMIT]);
	}
	if (!mask)
		abort();
	if (tb[GPUSCHED_A_CLIENT_POLICY_SET]) {
		/* An older module refuses the attribute: never send it one. */
		if (!M.marks)
			abort();
		policy = nla_get_u32(tb[GPUSCHED_A_CLIENT_POLICY_SET]);
		if (policy & ~mask)
			abort();
	}
	c = client_by_id(nla_get_u64(tb[GPUSCHED_A_CLIENT_ID]));
	if (!c) {
		ack(d, nlh, -ESRCH);
		return;
	}
	if (mask & GPUSCHED_PARAM_WEIGHT)
		c->weight = w;
	if (mask & GPUSCHED_PARAM_CLASS)
		c->class = cl;
	if (mask & GPUSCHED_PARAM_CAP)
		c->cap = cap;
	if (mask & GPUSCHED_PARAM_MEM_LIMIT)
		c->mem = mem;
	c->pset = (c->pset & ~mask) | (policy & mask);
	c->plow &= ~mask;
	ack(d, nlh, 0);
}

static int fake_send(struct nl_sock *sk, struct nl_msg *msg)
{
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	struct genlmsghdr *gh = genlmsg_hdr(nlh);
	struct nlattr *tb[GPUSCHED_A_CLIENT_MAX + GPUSCHED_A_GPU_MAX + 1];
	bool dump = nlh->nlmsg_flags & NLM_F_DUMP;
	bool spoil = M.corrupt > 0;
	struct dgram *d = calloc(1, sizeof(*d));
	uint32_t i;
	int k;

	(void)sk;
	if (!d)
		abort();
	if (nlh->nlmsg_type != FAM || !M.family)
		abort();	/* only to the family, while it is there */
	if (nla_parse(tb, GPUSCHED_A_CLIENT_MAX + GPUSCHED_A_GPU_MAX,
		      genlmsg_attrdata(gh, 0), genlmsg_attrlen(gh, 0), NULL))
		abort();
	S.requests++;
	if (spoil) {
		M.corrupt--;
		S.spoiled++;
	}
	if (spoil && in8() % 3 == 0) {
		bad_ack(d, nlh);
		deliver(&M.req, d, false);
		M.dirty = true;
		free(d);
		return 0;
	}
	switch (gh->cmd) {
	case GPUSCHED_CMD_GET_GPU:
		if (dump) {
			for (i = 0; i < M.nr_gpus; i++)
				dg_add(d, gpu_msg(i, nlh->nlmsg_seq, NLM_F_MULTI));
			done(d, nlh->nlmsg_seq, 0);
		} else if (!tb[GPUSCHED_A_GPU_INDEX]) {
			abort();
		} else if (nla_get_u32(tb[GPUSCHED_A_GPU_INDEX]) >= M.nr_gpus) {
			ack(d, nlh, -ENODEV);
		} else {
			dg_add(d, gpu_msg(nla_get_u32(tb[GPUSCHED_A_GPU_INDEX]),
					  nlh->nlmsg_seq, 0));
			/* A do's reply, then the ack that libnl asks for. */
			if (nlh->nlmsg_flags & NLM_F_ACK)
				ack(d, nlh, 0);
		}
		break;
	case GPUSCHED_CMD_SET_GPU:
		i = tb[GPUSCHED_A_GPU_INDEX] ?
		    nla_get_u32(tb[GPUSCHED_A_GPU_INDEX]) : UINT32_MAX;
		if (i >= M.nr_gpus) {
			ack(d, nlh, -ENODEV);
			break;
		}
		for (k = 0; k < GS_POL_NR_KNOBS; k++) {
			struct nlattr *a = tb[gs_pol_knobs[k].nl_attr];
			uint32_t v;

			if (!a)
				continue;
			v = nla_get_u32(a);
			if (v < gs_pol_knobs[k].min || v > gs_pol_knobs[k].max)
				abort();
			M.knobs[i].val[k] = v;
		}
		ack(d, nlh, 0);
		break;
	case GPUSCHED_CMD_GET_CLIENT:
		if (!dump)
			abort();
		for (i = 0; i < MAX_CLIENTS; i++) {
			const struct mclient *c = &M.c[i];

			if (!c->live || (tb[GPUSCHED_A_CLIENT_GPU] &&
					 nla_get_u32(tb[GPUSCHED_A_CLIENT_GPU]) != c->gpu))
				continue;
			dg_add(d, client_msg(c, nlh->nlmsg_seq, NLM_F_MULTI,
					     GPUSCHED_CMD_GET_CLIENT));
			/* Large dumps come in several datagrams. */
			if (d->len > 600) {
				q_push(&M.req, d->b, d->len, 0);
				d->len = 0;
			}
		}
		done(d, nlh->nlmsg_seq, 0);
		break;
	case GPUSCHED_CMD_SET_CLIENT:
		set_client(nlh, tb, d);
		break;
	default:
		abort();
	}
	deliver(&M.req, d, spoil);
	free(d);
	return 0;
}

/* --- the facts of the processes, for the rules (procfs.c's place) --- */

void gs_proc_init(struct gs_proc *p, pid_t pid, uint32_t uid, uint32_t gid,
		  const char *comm)
{
	int i;

	gs_proc_init_facts(p, uid, gid, comm);
	p->pid = pid;
	for (i = 0; i < MAX_CLIENTS; i++) {
		const struct mclient *c = &M.c[i];

		if (!c->live || c->pid != (uint32_t)pid)
			continue;
		snprintf(p->exe, sizeof(p->exe), "%s", c->exe);
		snprintf(p->cgroup, sizeof(p->cgroup), "%s", c->cgroup);
		snprintf(p->label, sizeof(p->label), "%s", c->label);
		p->groups = malloc(sizeof(c->groups));
		if (!p->groups)
			abort();
		memcpy(p->groups, c->groups, sizeof(c->groups));
		p->nr_groups = c->nr_groups;
		p->known = c->known;
		break;
	}
}

/* --- labels (labels.c's place): gs_proc_init() gives them already --- */

int gs_labels_init(void)
{
	return -1;
}

bool gs_labels_want(uint64_t id, pid_t pid, uid_t uid, uint64_t start)
{
	(void)id;
	(void)pid;
	(void)uid;
	(void)start;
	return false;
}

void gs_labels_reap(void (*got)(uint64_t id, const char *label))
{
	(void)got;
}

void gs_labels_forget(uint64_t id)
{
	(void)id;
}

void gs_proc_release(struct gs_proc *p)
{
	free(p->groups);
	p->groups = NULL;
}

/* --- events --- */

static struct gs_nl *fake_nl(void)
{
	struct gs_nl *nl = calloc(1, sizeof(*nl));
	struct nl_cb *cb;

	if (!nl || !(nl->sk = nl_socket_alloc()))
		abort();
	nl->family = FAM;
	cb = nl_socket_get_cb(nl->sk);
	nl_cb_overwrite_recv(cb, fake_recv);
	nl_cb_overwrite_send(cb, fake_send);
	nl_cb_put(cb);
	return nl;
}

static void read_events(void)
{
	int i;

	for (i = 0; i < 8 && M.ev.head != M.ev.tail; i++)
		gs_nl_events_read(D.ev, on_event, NULL);
	q_clear(&M.ev);
	/* What run() does after reading: family_connect(), on the model. */
	if (D.family_new) {
		D.family_new = false;
		gs_nl_close(D.nl);
		D.nl = NULL;
		D.st.family = false;
		if (M.family) {
			D.nl = fake_nl();
			D.ev->family = FAM;
			D.ev->group = GRP;
			D.st.family = true;
			D.nr_clients = 0;
			D.nr_gpus = 0;
			resync();
		}
	}
	if (D.resync)
		resync();
}

static void event(const struct mclient *c, uint8_t cmd)
{
	struct dgram *d = calloc(1, sizeof(*d));

	if (!d)
		abort();
	dg_add(d, client_msg(c, 0, 0, cmd));
	deliver(&M.ev, d, in8() % 16 == 0);
	S.events++;
	free(d);
}

static void family_event(uint8_t cmd)
{
	struct dgram *d = calloc(1, sizeof(*d));
	struct nl_msg *msg;

	if (!d)
		abort();
	msg = msg_new(GENL_ID_CTRL, 0, 0, cmd);
	nla_put_string(msg, CTRL_ATTR_FAMILY_NAME,
		       in8() % 8 ? GPUSCHED_GENL_NAME : "gpuschedX");
	nla_put_u16(msg, CTRL_ATTR_FAMILY_ID, FAM);
	dg_add(d, msg);
	deliver(&M.ev, d, false);
	free(d);
}

/* --- the model's clients --- */

static const char *pick(const char *const *v, size_t n, char *raw, size_t size)
{
	uint8_t s = in8();
	size_t i, len;

	if (s < n)
		return v[s];
	len = s % size;
	for (i = 0; i < len; i++)
		raw[i] = (char)(in8() | 1);
	raw[len] = '\0';
	return raw;
}

#define PICK(v, raw) pick(v, sizeof(v) / sizeof(v[0]), raw, sizeof(raw))

/*
 * The first rule matching client @c, or NULL; what it sets in @want
 * (nothing if none matches). Clients report no memory: a limit in percent
 * is dropped.
 */
static const struct gs_rule *rule_params(const struct mclient *c,
					 struct gpusched_params *want)
{
	const struct gs_rule *r;
	struct gs_proc p;

	gs_proc_init(&p, (pid_t)c->pid, c->uid, c->gid, c->comm);
	r = gs_rules_match(D.pol, &p);
	gs_proc_release(&p);
	*want = r ? r->set : (struct gpusched_params){ 0 };
	if (want->mem_limit & GS_MEM_PCT_FLAG)
		want->mask &= ~GPUSCHED_PARAM_MEM_LIMIT;
	return r;
}

/*
 * A client that attached while every answer was right: the first rule
 * that matches it gave it its fields, marked as the policy's.
 */
static void check_attached(const struct mclient *c)
{
	struct gpusched_params want;
	const struct gs_rule *r = rule_params(c, &want);

	if (((want.mask & GPUSCHED_PARAM_WEIGHT) ? want.weight :
	     GPUSCHED_WEIGHT_DEFAULT) != c->weight ||
	    ((want.mask & GPUSCHED_PARAM_CLASS) ? want.sched_class :
	     GPUSCHED_CLASS_NORMAL) != c->class ||
	    ((want.mask & GPUSCHED_PARAM_CAP) ? want.cap_pct :
	     GPUSCHED_CAP_NONE) != c->cap ||
	    (M.marks && ((want.mask & GPUSCHED_PARAM_MEM_LIMIT) ? want.mem_limit :
			 GPUSCHED_MEM_LIMIT_NONE) != c->mem) ||
	    (M.marks && c->pset != (want.mask & GS_PARAM_MASK))) {
		fprintf(stderr, "client %llu attached: %u %u %u marks %u, rule %s\n",
			(unsigned long long)c->id, c->weight, c->class, c->cap,
			c->pset, r ? r->name : "none");
		abort();
	}
	S.checks++;
}

static void attach(void)
{
	static const char *const comms[] = { "python3", "trainer", "infer-srv", "" };
	static const char *const exes[] = { "/usr/bin/python3", "/opt/trainer",
					    "/opt/x/infer (deleted)", "" };
	static const char *const cgroups[] = { "/batch", "/batch/job1", "/batchx",
					       "/", "" };
	static const char *const labels[] = { "inference", "infer", "train", "" };
	static const uint32_t ids[] = { 0, 1234, 4321, 100, 200 };
	struct mclient *c = NULL;
	char raw[64];
	bool clean;
	uint8_t s;
	int i;

	for (i = 0; i < MAX_CLIENTS && !c; i++)
		if (!M.c[i].live)
			c = &M.c[i];
	if (!c)
		return;
	memset(c, 0, sizeof(*c));
	c->live = true;
	c->id = ++M.next_id;
	c->pid = ++M.next_pid;
	c->gpu = in8() % MAX_GPUS;
	if (c->gpu >= M.nr_gpus)
		c->gpu = M.nr_gpus < MAX_GPUS ? M.nr_gpus++ : 0;
	s = in8();
	c->uid = s < 5 ? ids[s] : in32();
	s = in8();
	c->gid = s < 5 ? ids[s] : in32();
	snprintf(c->comm, sizeof(c->comm), "%s", PICK(comms, raw));
	snprintf(c->exe, sizeof(c->exe), "%s", PICK(exes, raw));
	snprintf(c->cgroup, sizeof(c->cgroup), "%s", PICK(cgroups, raw));
	snprintf(c->label, sizeof(c->label), "%s", PICK(labels, raw));
	c->nr_groups = in8() % 3;
	for (i = 0; i < (int)c->nr_groups; i++) {
		s = in8();
		c->groups[i] = s < 5 ? ids[s] : in16();
	}
	c->known = in8() & ((1U << GS_MATCH_GROUP) | (1U << GS_MATCH_EXE) |
			    (1U << GS_MATCH_CGROUP) | (1U << GS_MATCH_LABEL));
	c->weight = GPUSCHED_WEIGHT_DEFAULT;
	c->class = GPUSCHED_CLASS_NORMAL;
	c->cap = GPUSCHED_CAP_NONE;
	clean = !M.dirty && !M.corrupt && D.nl && D.ev->family;
	event(c, GPUSCHED_CMD_EV_ATTACH);
	read_events();
	if (clean && !M.dirty && c->live && D.nl)
		check_attached(c);
}

static struct mclient *some_client(void)
{
	int n = in8() % MAX_CLIENTS, i;

	for (i = 0; i < MAX_CLIENTS; i++)
		if (M.c[(n + i) % MAX_CLIENTS].live)
			return &M.c[(n + i) % MAX_CLIENTS];
	return NULL;
}

/* SET_PARAMS by the client itself, as token.c marks it. */
static void own_change(struct mclient *c)
{
	uint32_t bit = 1U << (in8() % 3), v = in16();
	bool priv = in8() & 1;
	uint32_t *f = bit == GPUSCHED_PARAM_WEIGHT ? &c->weight :
		      bit == GPUSCHED_PARAM_CLASS ? &c->class : &c->cap;

	if (bit == GPUSCHED_PARAM_WEIGHT)
		v = v % GPUSCHED_WEIGHT_MAX + 1;
	else if (bit == GPUSCHED_PARAM_CLASS)
		v %= GPUSCHED_CLASS_MAX + 1;
	else
		v %= 101;
	if (!priv && !lower_or_equal(bit, v, *f, 0))
		return;		/* EPERM */
	*f = v;
	if (priv) {
		c->pset &= ~bit;
		c->plow &= ~bit;
	} else {
		c->plow |= c->pset & bit;
		c->pset &= ~bit;
	}
}

/* --- the daemon's policy and its restarts --- */

static void use_policy(struct gs_policy *pol)
{
	uint64_t *hits = calloc(pol->nr_rules + 1, sizeof(*hits));

	if (!hits)
		abort();
	if (D.pol && D.pol != policies[0] && D.pol != policies[1] &&
	    D.pol != policies[2])
		gs_policy_free(D.pol);
	free(D.rule_hits);
	D.pol = pol;
	D.rule_hits = hits;
	D.gen++;
}

/* The policy an input chooses: a prepared one, or its own text. */
static bool choose_policy(void)
{
	uint8_t s = in8();
	char text[256], err[256];
	struct gs_policy *pol;
	size_t n, i;

	if (s < 3 * 64) {
		use_policy(policies[s % 3]);
		return true;
	}
	n = in8();
	for (i = 0; i < n; i++)
		text[i] = (char)in8();
	pol = gs_policy_parse("fuzz.conf", text, n, err, sizeof(err));
	if (!pol)
		return false;
	use_policy(pol);
	return true;
}

/*
 * The promise of gpuschedd(8), for each client there before and after a
 * reload or restart (@restart: the daemon's own table was lost) that
 * re-examined every client.
 */
static void check(const struct mclient *before, bool restart)
{
	const struct gpusched_params def = {
		.weight = GPUSCHED_WEIGHT_DEFAULT,
		.sched_class = GPUSCHED_CLASS_NORMAL,
	};
	int i;

	for (i = 0; i < MAX_CLIENTS; i++) {
		const struct mclient *b = &before[i], *a = &M.c[i];
		struct gpusched_params want, bv, av;
		const struct gs_rule *r;
		uint32_t bit;

		if (!b->live || !a->live || a->id != b->id)
			continue;
		r = rule_params(a, &want);
		bv = (struct gpusched_params){ .weight = b->weight,
					       .sched_class = b->class, .cap_pct = b->cap,
					       .mem_limit = b->mem };
		av = (struct gpusched_params){ .weight = a->weight,
					       .sched_class = a->class, .cap_pct = a->cap,
					       .mem_limit = a->mem };
		for (bit = 1; bit & GS_PARAM_MASK; bit <<= 1) {
			uint64_t was = param_get(&bv, bit), is = param_get(&av, bit);
			uint64_t target = param_get(want.mask & bit ? &want : &def, bit);
			uint64_t expect;

			if (!M.marks) {
				/* Only what this daemon set is known. */
				if (want.mask & bit)
					expect = target;
				else if (restart)
					expect = was;
				else
					continue;
			} else if ((b->plow & bit) && lower_or_equal(bit, was, target, 0)) {
				expect = was;
			} else if ((want.mask & bit) || ((b->pset | b->plow) & bit)) {
				expect = target;
			} else {
				expect = was;
			}
			S.fields++;
			if (is != expect) {
				fprintf(stderr, "client %llu field %u: %llu, want %llu (was %llu, marks %u/%u, rule %s)\n",
					(unsigned long long)a->id, bit,
					(unsigned long long)is, (unsigned long long)expect,
					(unsigned long long)was, b->pset, b->plow,
					r ? r->name : "none");
				abort();
			}
		}
	}
}

/* Re-examine every client: a reload (SIGHUP) or a restart. */
static void reexamine(bool restart)
{
	static struct mclient before[MAX_CLIENTS];

	if (!choose_policy())
		return;
	memcpy(before, M.c, sizeof(before));
	if (restart) {
		/* A new process: its tables are empty, the module's marks are not. */
		D.nr_clients = 0;
		D.nr_gpus = 0;
	}
	M.dirty = M.dirty || M.corrupt;
	if (!D.nl)
		return;
	resync();
	if (!M.dirty && !D.resync) {
		check(before, restart);
		S.checks++;
	}
	M.dirty = false;
}

/* --- the input's run --- */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const char *const texts[] = {
		"",
		"[gpu]\ntimeslice_us = 3000\n"
		"[rule labelled]\nlabel = infer*\nclass = latency\nweight = 400\n"
		"[rule user1234]\nuser = 1234\nweight = 50\nclass = batch\ncap = 30\n"
		"[rule py]\nexe = /usr/bin/py*\ncap = 40\n"
		"[rule batch-cg]\ncgroup = /batch\nclass = batch\n"
		"[rule group100]\ngroup = 100\nweight = 700\n"
		"[rule trainer]\nexe = trainer\nweight = 300\ncap = 80\n",
		"[gpu GPU-f0000000-0000-0000-0000-000000000000]\ngrace_us = 20000\n"
		"[rule user1234]\nuser = 1234\nweight = 20\n"
		"[rule root]\nuser = 0\nlabel = train\nweight = 111\nclass = latency\n",
	};
	char err[256];
	int i;

	(void)argc;
	(void)argv;
	for (i = 0; i < 3; i++) {
		policies[i] = gs_policy_parse("fuzz.conf", texts[i], strlen(texts[i]),
					      err, sizeof(err));
		if (!policies[i]) {
			fprintf(stderr, "%s\n", err);
			abort();
		}
	}
	gs_log_init("gpuschedd", LOG_DEBUG);
	if (getenv("LF_NLEVENTS_STATS"))
		atexit(print_stats);
	return 0;
}

static void setup(void)
{
	struct nl_cb *cb;
	int k;

	memset(&M, 0, sizeof(M));
	M.family = true;
	for (k = 0; k < MAX_GPUS; k++) {
		int j;

		M.knobs[k].mask = (1U << GS_POL_NR_KNOBS) - 1;
		for (j = 0; j < GS_POL_NR_KNOBS; j++)
			M.knobs[k].val[j] = gs_pol_knobs[j].min;
	}
	D.nl = fake_nl();
	D.ev = calloc(1, sizeof(*D.ev));
	if (!D.ev || !(D.ev->sk = nl_socket_alloc()))
		abort();
	/* As gs_nl_events_open() and gs_nl_events_join() leave it. */
	nl_socket_disable_seq_check(D.ev->sk);
	nl_socket_modify_cb(D.ev->sk, NL_CB_VALID, NL_CB_CUSTOM, genl_on_event, D.ev);
	cb = nl_socket_get_cb(D.ev->sk);
	nl_cb_overwrite_recv(cb, fake_recv);
	nl_cb_put(cb);
	D.ev->family = FAM;
	D.ev->group = GRP;
	D.st.family = true;
}

static void teardown(void)
{
	int i;

	q_clear(&M.req);
	q_clear(&M.ev);
	gs_nl_close(D.nl);
	gs_nl_events_close(D.ev);
	for (i = 0; i < 3; i++)
		if (D.pol == policies[i])
			D.pol = NULL;
	gs_policy_free(D.pol);
	free(D.rule_hits);
	free(D.clients);
	free(D.gpus);
	memset(&D, 0, sizeof(D));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mclient *c;
	int ops;

	S.inputs++;
	setup();
	M.in = data;
	M.left = size;
	M.marks = !(in8() & 1);
	use_policy(policies[1]);
	resync();
	for (ops = 0; M.left && ops < MAX_OPS; ops++) {
		switch (in8() % 12) {
		case 0:
		case 1:
		case 2:
			attach();
			break;
		case 3:
			c = some_client();
			if (c) {
				c->live = false;
				event(c, GPUSCHED_CMD_EV_DETACH);
				read_events();
			}
			break;
		case 4:
			c = some_client();
			if (c) {
				event(c, GPUSCHED_CMD_EV_OVERRUN);
				read_events();
			}
			break;
		case 5:
			c = some_client();
			if (c)
				own_change(c);
			break;
		case 6:		/* raw bytes on the event socket */
			{
				uint8_t raw[512];
				size_t n = in16() % sizeof(raw), i;

				for (i = 0; i < n; i++)
					raw[i] = in8();
				if (n >= sizeof(struct nlmsghdr) && (in8() & 1))
					((struct nlmsghdr *)raw)->nlmsg_type = FAM;
				q_push(&M.ev, raw, n, 0);
				read_events();
			}
			break;
		case 7:		/* ENOBUFS: events were lost */
			q_push(&M.ev, NULL, 0, -NLE_NOMEM);
			read_events();
			break;
		case 8:
			reexamine(false);
			break;
		case 9:
			reexamine(true);
			break;
		case 10:
			M.corrupt = 1 + in8() % 3;
			break;
		default:	/* the module unloaded, and loaded again */
			if (in8() & 1) {
				family_event(CTRL_CMD_DELFAMILY);
				read_events();
				if (!D.nl) {
					M.family = false;
					memset(M.c, 0, sizeof(M.c));
					M.nr_gpus = 0;
				}
			} else {
				M.family = true;
				family_event(CTRL_CMD_NEWFAMILY);
				read_events();
			}
			break;
		}
	}
	teardown();
	return 0;
}
