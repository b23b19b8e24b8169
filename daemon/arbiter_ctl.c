// SPDX-License-Identifier: GPL-2.0
/*
 * gpuschedd --arbiter: gpuschedctl's control protocol (gpusched_ctl.h),
 * and the metrics page, from the arbiter's state in the module's records.
 *
 * A connection whose first request is a control request (gpusched_ctl.h)
 * is gpuschedctl's, not a client: it lists GPUs and clients, changes them
 * (uid 0 only) or subscribes to events. A list longer than the socket
 * buffer is sent as the peer reads it (EPOLLOUT), resuming after the last
 * client id sent, as the module's netlink dumps do; meanwhile that
 * connection's further requests stay unread.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "arbiter_int.h"
#include "gpusched_ctl.h"
#include "policyfile.h"

_Static_assert(GS_POL_NR_KNOBS == GPUSCHED_CTL_NR_KNOBS,
	       "the control protocol's knob bits follow enum gs_pol_knob_id");

/* ------------------------------------------------------------------ */
/* What gpuschedctl and the metrics see: the module's records */

static void params_knobs(const struct gs_pol_params *p, struct gs_knob_set *ks)
{
	ks->mask = (1U << GS_POL_NR_KNOBS) - 1;
	for (int k = 0; k < GS_POL_NR_KNOBS; k++)
		ks->val[k] = gs_pol_knob_get(p, &gs_pol_knobs[k]);
}

static void dev_snap(const struct arb_dev *d, struct gs_gpu_rec *r)
{
	memset(r, 0, sizeof(*r));
	r->index = d->index;
	memcpy(r->uuid, d->uuid, GPUSCHED_UUID_LEN);
	params_knobs(&d->pol.p, &r->knobs);
	r->nr_clients = d->pol.nr_clients;
	r->nr_waiting = d->pol.nr_waiting;
	r->holder_pid = d->pol.holder ? (uint32_t)to_client(d->pol.holder)->cred.pid : 0;
	r->grants = d->pol.grants;
	r->overruns = d->pol.overruns;
	r->held_ns = d->pol.held_ns;
	r->mem_reserved = gs_mem_dev_reserved(&d->pol);
	/* The running grant, as the clients' held time counts it. */
	if (d->pol.holder)
		r->held_ns += gs_pol_held_now(d->pol.holder, now_ns()) -
			      d->pol.holder->held_ns;
}

static void client_snap(const struct arb_client *c, uint64_t now,
			struct gs_client_rec *r)
{
	const struct gs_pol_client *pc = &c->pol;

	memset(r, 0, sizeof(*r));
	r->gpu = c->dev->index;
	r->id = c->id;
	r->pid = (uint32_t)c->cred.pid;
	memcpy(r->comm, c->comm, sizeof(r->comm));
	r->uid = c->cred.uid;
	r->gid = c->cred.gid;
	r->cgroup_id = c->cgroup_id;
	r->weight = pc->weight;
	r->class = pc->sched_class;
	r->cap_pct = pc->cap_pct;
	r->state = client_state(c);
	r->held_ns = gs_pol_held_now(pc, now);
	r->grants = pc->grants;
	r->wait_ns_total = pc->wait_ns_total;
	r->wait_ns_max = pc->wait_ns_max;
	r->overruns = pc->overruns;
	r->yields = pc->yields;
	r->has_mem = true;
	r->mem_total = pc->mem.total;
	r->mem_reserved = pc->mem.reserved;
	r->mem_limit = gs_mem_limit(&c->dev->pol, pc);
	r->mem_refused = pc->mem.refused;
	r->gpu_ns = pc->gpu_ns;
	r->has_gpu_ns = true;
}

static void gpu_wire(const struct gs_gpu_rec *r, struct gpusched_ctl_gpu *w)
{
	memset(w, 0, sizeof(*w));
	w->index = r->index;
	memcpy(w->uuid, r->uuid, GPUSCHED_UUID_LEN);
	memcpy(w->val, r->knobs.val, sizeof(w->val));
	w->nr_clients = r->nr_clients;
	w->nr_waiting = r->nr_waiting;
	w->holder_pid = r->holder_pid;
	w->grants = r->grants;
	w->overruns = r->overruns;
	w->held_ns = r->held_ns;
	w->mem_reserved = r->mem_reserved;
}

static void client_wire(const struct gs_client_rec *r,
			struct gpusched_ctl_client *w)
{
	memset(w, 0, sizeof(*w));
	w->id = r->id;
	w->gpu = r->gpu;
	w->pid = r->pid;
	memcpy(w->comm, r->comm, sizeof(w->comm));
	w->uid = r->uid;
	w->gid = r->gid;
	w->cgroup_id = r->cgroup_id;
	w->weight = r->weight;
	w->sched_class = r->class;
	w->cap_pct = r->cap_pct;
	w->state = r->state;
	w->held_ns = r->held_ns;
	w->grants = r->grants;
	w->wait_ns_total = r->wait_ns_total;
	w->wait_ns_max = r->wait_ns_max;
	w->overruns = r->overruns;
	w->yields = r->yields;
	w->mem_total = r->mem_total;
	w->mem_reserved = r->mem_reserved;
	w->mem_limit = r->mem_limit;
	w->mem_refused = r->mem_refused;
	w->gpu_ns = r->gpu_ns;
}

/* The metrics page's records: the module's, from the arbiter's state. */
static int metrics_records(void *arg, struct gs_gpu_rec **gpus, size_t *ng,
			   struct gs_client_rec **cl, size_t *nc)
{
	uint64_t now = now_ns();

	(void)arg;
	*gpus = calloc(A.nr_devs + 1, sizeof(**gpus));
	*cl = calloc(A.nr_clients + 1, sizeof(**cl));
	if (!*gpus || !*cl)
		return -ENOMEM;
	*ng = *nc = 0;
	for (struct arb_dev *d = A.devs; d; d = d->next) {
		dev_snap(d, &(*gpus)[(*ng)++]);
		for (struct arb_client *c = d->first; c; c = c->dnext)
			client_snap(c, now, &(*cl)[(*nc)++]);
	}
	return 0;
}

struct gs_metrics_page arb_metrics_page = {
	.records = metrics_records,
	.st = &A.st,
};

/* ------------------------------------------------------------------ */
/* Control connections (gpusched_ctl.h) */

#define CTL_CLIENTS_PER_MSG \
	((GPUSCHED_CTL_MSG_MAX - sizeof(struct gpusched_ctl_hdr)) / \
	 sizeof(struct gpusched_ctl_client))
#define CTL_GPUS_PER_MSG \
	((GPUSCHED_CTL_MSG_MAX - sizeof(struct gpusched_ctl_hdr)) / \
	 sizeof(struct gpusched_ctl_gpu))

/* What is sent; never the buffer received (on_request()'s). */
static union {
	struct gpusched_ctl_hdr hdr;
	char buf[GPUSCHED_CTL_MSG_MAX];
} ctl_msg;

/* 0, -EAGAIN (socket buffer full: try again when writable), or -errno. */
static int ctl_send(struct arb_client *c, uint16_t cmd, uint32_t seq,
		    uint32_t flags, int error, size_t rec_size, size_t nr)
{
	struct gpusched_ctl_hdr *h = &ctl_msg.hdr;
	size_t len = sizeof(*h) + rec_size * nr;
	ssize_t n;

	*h = (struct gpusched_ctl_hdr){
		.magic = GPUSCHED_CTL_MAGIC, .version = GPUSCHED_CTL_VERSION,
		.cmd = cmd, .seq = seq, .flags = flags, .error = error,
		.rec_size = (uint16_t)rec_size, .nr_recs = (uint16_t)nr,
	};
	n = send(c->fd, ctl_msg.buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
	if (n == (ssize_t)len)
		return 0;
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS))
		return -EAGAIN;
	return n < 0 ? -errno : -EIO;
}

/*
 * May control connection @c see the pid and command of client @k? As the
 * module's dump: its own user's (the effective uid at connect()), and
 * everyone's with CAP_SYS_PTRACE or CAP_NET_ADMIN, as /proc's hidepid=
 * hides other users' processes.
 */
static bool ctl_sees(const struct arb_client *c, const struct arb_client *k)
{
	return k->cred.uid == c->cred.uid ||
	       client_capable(c, CAP_SYS_PTRACE) ||
	       client_capable(c, CAP_NET_ADMIN);
}

/* The next client of a listing after (*gpu, *last), or NULL. */
static struct arb_client *ctl_next_client(const struct ctl_out *o,
					  uint32_t *gpu, uint64_t *last)
{
	for (struct arb_dev *d = A.devs; d; d = d->next) {
		if (d->index < *gpu || (o->filtered && d->index != o->gpu))
			continue;
		if (d->index > *gpu) {
			*gpu = d->index;
			*last = 0;
		}
		for (struct arb_client *c = d->first; c; c = c->dnext)
			if (c->id > *last) {
				*last = c->id;
				return c;
			}
	}
	return NULL;
}

/*
 * Send what is left of @c's reply, one message at a time while the socket
 * takes them. 0: sent whole, or waiting for room; -errno: close @c.
 */
int ctl_flush(struct arb_client *c)
{
	struct ctl_out *o = &c->out;
	uint64_t now = now_ns();
	int err = 0;

	if (c->ev_lost) {
		err = ctl_send(c, GPUSCHED_CTL_EV_LOST, 0, 0, 0, 0, 0);
		if (err)
			goto out;
		c->ev_lost = false;
	}
	while (o->active) {
		struct gpusched_ctl_gpu *gw = (void *)(ctl_msg.buf + sizeof(ctl_msg.hdr));
		struct gpusched_ctl_client *cw = (void *)gw;
		uint32_t gpu = o->gpu, flags = GPUSCHED_CTL_F_MULTI;
		uint64_t last = o->last_id;
		size_t nr = 0, rec = 0;

		if (o->cmd == GPUSCHED_CTL_GET_GPUS && !o->error) {
			struct arb_dev *d = A.devs;
			struct gs_gpu_rec r;

			rec = sizeof(*gw);
			while (d && d->index < gpu)
				d = d->next;
			for (; d && nr < CTL_GPUS_PER_MSG; d = d->next, gpu++) {
				dev_snap(d, &r);
				gpu_wire(&r, &gw[nr++]);
			}
			if (!d)
				flags = GPUSCHED_CTL_F_DONE;
		} else if (o->cmd == GPUSCHED_CTL_GET_CLIENTS && !o->error) {
			struct gs_client_rec r;
			struct arb_client *k;
			uint32_t g2;
			uint64_t l2;

			rec = sizeof(*cw);
			while (nr < CTL_CLIENTS_PER_MSG &&
			       (k = ctl_next_client(o, &gpu, &last))) {
				client_snap(k, now, &r);
				if (!ctl_sees(c, k)) {
					r.pid = 0;
					memset(r.comm, 0, sizeof(r.comm));
				}
				client_wire(&r, &cw[nr++]);
			}
			g2 = gpu;
			l2 = last;
			if (!ctl_next_client(o, &g2, &l2))
				flags = GPUSCHED_CTL_F_DONE;
		} else {
			flags = GPUSCHED_CTL_F_DONE;
		}
		err = ctl_send(c, o->cmd, o->seq, flags, o->error, rec, nr);
		if (err)
			goto out;
		o->gpu = gpu;
		o->last_id = last;
		if (flags & GPUSCHED_CTL_F_DONE)
			o->active = false;
	}
out:
	if (err == -EAGAIN)
		err = 0;
	watch_update(c);
	return err;
}

/* An event to every subscriber; one that cannot take it loses it. */
void ctl_event(uint16_t cmd, struct arb_client *c)
{
	struct gpusched_ctl_client *w = (void *)(ctl_msg.buf + sizeof(ctl_msg.hdr));
	struct gs_client_rec r;
	bool snapped = false;

	for (struct arb_client *s = A.clients.next; s != &A.clients; s = s->next) {
		if (!s->subscribed || s->closed || s->ev_lost)
			continue;
		if (!snapped) {
			client_snap(c, now_ns(), &r);
			snapped = true;
		}
		/* ctl_send() writes the header over the same buffer only. */
		client_wire(&r, w);
		if (ctl_send(s, cmd, 0, 0, 0, sizeof(*w), 1)) {
			/* Lost, not closed: a watcher that falls behind is told. */
			s->ev_lost = true;
			watch_update(s);
		}
	}
}

static int ctl_set_gpu(const struct gpusched_ctl_set_gpu *a)
{
	struct gs_pol_effects fx = { 0 };
	struct gs_pol_params p;
	struct arb_dev *d;
	uint64_t now;
	int k;

	if (a->mask & ~GPUSCHED_CTL_KNOBS_ALL)
		return -EOPNOTSUPP;
	if (a->reserved[0] || a->reserved[1])
		return -EINVAL;
	/* The ranges of the module's netlink policy: the policy's own table. */
	for (k = 0; k < GS_POL_NR_KNOBS; k++)
		if ((a->mask & (1U << k)) &&
		    (a->val[k] < gs_pol_knobs[k].min ||
		     a->val[k] > gs_pol_knobs[k].max))
			return -ERANGE;
	for (d = A.devs; d && d->index != a->index; d = d->next)
		;
	if (!d)
		return -ENODEV;
	p = d->pol.p;
	for (k = 0; k < GS_POL_NR_KNOBS; k++)
		if (a->mask & (1U << k))
			gs_pol_knob_set(&p, &gs_pol_knobs[k], a->val[k]);
	now = now_ns();
	if (gs_pol_set_dev_params(&d->pol, &p, now, &fx))
		return -EINVAL;
	d->knobs_set = true;
	apply(d, &fx, now);
	for (struct arb_client *c = d->first; c; c = c->dnext)
		status_sync(c, now);	/* the grace time is on every page */
	gs_log(LOG_INFO, "gpu%u: knobs set by gpuschedctl", d->index);
	return 0;
}

static int ctl_set_client(const struct gpusched_ctl_set_client *a)
{
	const struct gpusched_params *p = &a->params;
	int matched = 0, err;

	if (a->flags & ~GPUSCHED_CTL_F_ALL)
		return -EOPNOTSUPP;
	/* SET_PARAMS's checks of the parameters, as the module makes them. */
	err = gs_pol_check_set_params(p);
	if (err)
		return err;
	if (a->reserved || !p->mask || (!a->id && !a->pid))
		return -EINVAL;
	/* The ranges of the module's netlink policy, from the policy itself. */
	if (gs_pol_check_client_params(
		    p->mask & GPUSCHED_PARAM_WEIGHT ? p->weight : GPUSCHED_WEIGHT_DEFAULT,
		    p->mask & GPUSCHED_PARAM_CLASS ? p->sched_class : GPUSCHED_CLASS_NORMAL,
		    p->mask & GPUSCHED_PARAM_CAP ? p->cap_pct : GPUSCHED_CAP_NONE))
		return -ERANGE;
	for (struct arb_dev *d = A.devs; d && !err; d = d->next) {
		if ((a->flags & GPUSCHED_CTL_F_GPU) && d->index != a->gpu)
			continue;
		for (struct arb_client *c = d->first; c && !err; c = c->dnext) {
			if (c->closed || (a->id && c->id != a->id) ||
			    (a->pid && (uint32_t)c->cred.pid != a->pid))
				continue;
			err = client_admin_set(c, p);
			matched += !err;
		}
	}
	if (!err && !matched)
		err = -ESRCH;
	return err;
}

/* Is @h followed by exactly one @size-byte argument (or none, if @opt)? */
static int ctl_arg(const struct gpusched_ctl_hdr *h, size_t size, bool opt)
{
	if (!size || (opt && !h->nr_recs))
		return h->nr_recs ? -EINVAL : 0;
	if (h->nr_recs != 1)
		return -EINVAL;
	return h->rec_size == size ? 0 : -EMSGSIZE;
}

void ctl_request(struct arb_client *c, const void *msg, size_t n, bool trunc)
{
	const struct gpusched_ctl_hdr *h = msg;
	const void *arg = (const char *)msg + sizeof(*h);
	struct ctl_out *o = &c->out;
	/* As the module's netlink family: CAP_NET_ADMIN. */
	bool admin = client_capable(c, CAP_NET_ADMIN);
	int err = 0;

	*o = (struct ctl_out){ .active = true };
	if (n < sizeof(*h)) {
		o->error = -EPROTO;
		goto out;
	}
	/* Errors name the request they answer where it can be told. */
	o->cmd = h->cmd;
	o->seq = h->seq;
	if (trunc || h->version != GPUSCHED_CTL_VERSION ||
	    n != sizeof(*h) + (size_t)h->rec_size * h->nr_recs) {
		o->error = -EPROTO;
		goto out;
	}
	if (c->dev) {
		o->error = -EISCONN;	/* a client is not a control connection */
		goto out;
	}
	c->ctl = true;
	if (h->flags || h->error) {
		o->error = -EINVAL;
		goto out;
	}
	switch (h->cmd) {
	case GPUSCHED_CTL_GET_GPUS:
		err = ctl_arg(h, 0, false);
		break;
	case GPUSCHED_CTL_GET_CLIENTS: {
		struct gpusched_ctl_filter f;

		err = ctl_arg(h, sizeof(f), true);
		if (err || !h->nr_recs)
			break;
		memcpy(&f, arg, sizeof(f));
		if (f.flags & ~GPUSCHED_CTL_F_ALL)
			err = -EOPNOTSUPP;
		else if (f.reserved)
			err = -EINVAL;
		o->filtered = f.flags & GPUSCHED_CTL_F_GPU;
		o->gpu = o->filtered ? f.gpu : 0;
		break;
	}
	case GPUSCHED_CTL_SET_GPU: {
		struct gpusched_ctl_set_gpu a;

		err = ctl_arg(h, sizeof(a), false);
		if (!err && !admin)
			err = -EPERM;
		if (!err) {
			memcpy(&a, arg, sizeof(a));
			err = ctl_set_gpu(&a);
		}
		break;
	}
	case GPUSCHED_CTL_SET_CLIENT: {
		struct gpusched_ctl_set_client a;

		err = ctl_arg(h, sizeof(a), false);
		if (!err && !admin)
			err = -EPERM;
		if (!err) {
			memcpy(&a, arg, sizeof(a));
			err = ctl_set_client(&a);
		}
		break;
	}
	case GPUSCHED_CTL_SUBSCRIBE:
		err = ctl_arg(h, 0, false);
		/* Events name every user's processes: admins only, as the
		 * module's "events" group.
		 */
		if (!err && !admin)
			err = -EPERM;
		if (!err)
			c->subscribed = true;
		break;
	default:
		err = -EOPNOTSUPP;
		break;
	}
	o->error = err;
out:
	if (ctl_flush(c))
		client_close(c, "control reply failed");
}
