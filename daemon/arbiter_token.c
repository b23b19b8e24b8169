// SPDX-License-Identifier: GPL-2.0
/*
 * gpuschedd --arbiter: the token served to clients, over the ioctl contract
 * of kmod/uapi/linux/gpusched.h as include/gpusched/arbiter_wire.h carries
 * it: ATTACH (a GPU by UUID, and the status page, a sealed memfd), ACQUIRE,
 * YIELD, RELEASE, SET_PARAMS and GET_INFO. The module's policy
 * (kmod/policy.c) decides; apply() tells the clients through the module's
 * own kmod/status.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <search.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <unistd.h>

#include "arbiter_int.h"
#include "gpusched_ctl.h"
#include "rules.h"

_Static_assert(sizeof(struct gpusched_client_info) <= GPUSCHED_WIRE_MAX &&
	       sizeof(struct gpusched_acquire) <= GPUSCHED_WIRE_MAX,
	       "every ioctl struct fits the wire format");

/* ------------------------------------------------------------------ */
/* Status pages and policy effects: kmod/status.c, as the module tells them */

/* Publish @c's state on its status page; the arbiter is its one writer. */
void status_sync(struct arb_client *c, uint64_t now)
{
	gs_status_sync(&c->dev->pol, &c->pol, now);
}

void reply(struct arb_client *c, int ret, const void *arg, size_t size,
		  int memfd)
{
	struct gpusched_wire_rep rep = { .magic = GPUSCHED_WIRE_MAGIC, .ret = ret };
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int))];
	} cbuf;
	struct iovec iov = { .iov_base = &rep, .iov_len = sizeof(rep) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };

	if (c->closed)
		return;	/* gone for replies: nobody reads them */
	if (arg && size)
		memcpy(rep.arg, arg, size);
	if (memfd >= 0) {
		struct cmsghdr *cm;

		memset(&cbuf, 0, sizeof(cbuf));
		msg.msg_control = cbuf.buf;
		msg.msg_controllen = sizeof(cbuf.buf);
		cm = CMSG_FIRSTHDR(&msg);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &memfd, sizeof(int));
	}
	/*
	 * A client that does not read its replies is not waited for. This
	 * runs inside apply() (a parked request granted), whose callers go
	 * on using @c and their walk of the clients: client_close() only
	 * marks it.
	 */
	if (sendmsg(c->fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT) != sizeof(rep))
		client_close(c, "reply failed");
}

void park(struct arb_client *c, bool on)
{
	c->parked = on;
	if (!on)
		c->deadline = 0;
	watch_update(c);
}


/* A parked ACQUIRE or YIELD is answered once its page shows the grant. */
static void granted(void *arg, struct gs_pol_client *pc)
{
	struct arb_client *c = to_client(pc);

	(void)arg;
	if (c->parked) {
		park(c, false);
		reply(c, 0, NULL, 0, -1);
	}
}

static void revoked(void *arg, struct gs_pol_client *pc)
{
	struct arb_client *c = to_client(pc);
	struct arb_dev *d = arg;

	gs_log_limited(LOG_WARNING, "gpu%u: pid %d did not yield within %llu us: revoked",
		       d->index, (int)c->cred.pid,
		       (unsigned long long)(d->pol.p.grace_ns / 1000));
	A.st.events[2]++;
	ctl_event(GPUSCHED_CTL_EV_OVERRUN, c);
}

static const struct gs_status_ops status_ops = {
	.granted = granted,
	.revoked = revoked,
};

/* Tell clients what the policy decided (every policy call ends here). */
void apply(struct arb_dev *d, struct gs_pol_effects *fx, uint64_t now)
{
	gs_status_apply(&d->pol, fx, now, &status_ops, d);
}

/* ------------------------------------------------------------------ */
/* Commands */

/*
 * A token that a new UUID may take the place of: no client, and no knob
 * set by gpuschedctl (the policy file's are applied again if its UUID
 * comes back). As the module does: made-up UUIDs cannot keep GPUs out.
 */
static struct arb_dev *dev_unused(void)
{
	struct arb_dev *d;

	for (d = A.devs; d; d = d->next)
		if (!d->pol.nr_clients && !d->knobs_set)
			return d;
	return NULL;
}

static struct arb_dev *dev_get(const unsigned char *uuid, int *err)
{
	struct arb_dev *d, **pos;
	unsigned int index = 0;

	for (d = A.devs; d; d = d->next)
		if (!memcmp(d->uuid, uuid, GPUSCHED_UUID_LEN))
			return d;
	if (A.nr_devs >= A.o->max_gpus) {
		struct arb_dev *old = dev_unused();

		if (!old) {
			*err = -ENOSPC;
			return NULL;
		}
		for (pos = &A.devs; *pos != old; pos = &(*pos)->next)
			;
		*pos = old->next;
		A.nr_devs--;
		free(old);
	}
	d = calloc(1, sizeof(*d));
	if (!d) {
		*err = -ENOMEM;
		return NULL;
	}
	/* The lowest index free, keeping the list in index order. */
	for (pos = &A.devs; *pos && (*pos)->index == index; pos = &(*pos)->next)
		index++;
	memcpy(d->uuid, uuid, GPUSCHED_UUID_LEN);
	d->index = index;
	A.nr_devs++;
	gs_pol_dev_init(&d->pol, &A.o->params, now_ns());
	dev_apply_policy(d);
	d->next = *pos;
	*pos = d;
	return d;
}

/*
 * A user's clients on one GPU, counted against --max-clients-per-uid as
 * the module counts max_clients_per_uid, and a user's connections
 * (arbiter.c): the user is the uid that SO_PEERCRED gave, and root is
 * exempt (the module asks for CAP_SYS_RESOURCE, which root may lack where
 * the arbiter serves; a limit is a guard, not a privilege).
 */
struct arb_uid {
	uid_t uid;
	unsigned int n;
};

static int uid_cmp(const void *a, const void *b)
{
	uid_t x = ((const struct arb_uid *)a)->uid;
	uid_t y = ((const struct arb_uid *)b)->uid;

	return x < y ? -1 : x > y;
}

int uid_get(void **tree, uid_t uid, unsigned int limit, bool exempt)
{
	struct arb_uid key = { .uid = uid }, *u;
	void *found = tfind(&key, tree, uid_cmp);

	if (found) {
		u = *(struct arb_uid **)found;
		if (limit && u->n >= limit && !exempt)
			return -EUSERS;
		u->n++;
		return 0;
	}
	u = calloc(1, sizeof(*u));
	if (!u)
		return -ENOMEM;
	*u = (struct arb_uid){ .uid = uid, .n = 1 };
	if (!tsearch(u, tree, uid_cmp)) {
		free(u);
		return -ENOMEM;
	}
	return 0;
}

void uid_put(void **tree, uid_t uid)
{
	struct arb_uid key = { .uid = uid }, *u;
	void *found = tfind(&key, tree, uid_cmp);

	if (!found)
		return;
	u = *(struct arb_uid **)found;
	if (--u->n)
		return;
	tdelete(&key, tree, uid_cmp);
	free(u);
}

/* The status page: a sealed memfd, written here, mapped read-only there. */
static int page_create(struct arb_client *c, int *memfd)
{
	int seals = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL;
	void *p;
	int fd;

	fd = memfd_create("gpusched-status", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, GPUSCHED_STATUS_SIZE))
		goto fail;
	p = mmap(NULL, GPUSCHED_STATUS_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
		 fd, 0);
	if (p == MAP_FAILED)
		goto fail;
	/* Our mapping stays writable; the client can map it read-only only,
	 * like the module's page (EPERM for PROT_WRITE).
	 */
	if (A.future_write_seal)
		seals |= F_SEAL_FUTURE_WRITE;
	if (fcntl(fd, F_ADD_SEALS, seals)) {
		munmap(p, GPUSCHED_STATUS_SIZE);
		goto fail;
	}
	c->page = p;
	c->page->version = GPUSCHED_STATUS_VERSION;
	c->page->size = sizeof(*c->page);
	*memfd = fd;
	return 0;
fail:
	{
		int err = -errno;

		close(fd);
		return err;
	}
}

bool probe_future_write_seal(void)
{
	int fd = memfd_create("gpusched-probe", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	bool ok;

	if (fd < 0)
		return false;
	ok = !fcntl(fd, F_ADD_SEALS, F_SEAL_FUTURE_WRITE);
	close(fd);
	return ok;
}

static void cmd_attach(struct arb_client *c, const struct gpusched_attach *a)
{
	struct gpusched_wire_attached att = { 0 };
	int memfd = -1, err;
	struct arb_dev *d;
	uint64_t now;

	err = gs_pol_check_attach(a);
	if (!err && c->dev)
		err = -EBUSY;
	if (!err && c->ctl)
		err = -EISCONN;	/* a control connection is not a client */
	/*
	 * The process that connected has gone, and its pid may be another's
	 * now: the rules would judge that one by its groups and cgroup.
	 */
	if (!err && c->start && gs_proc_start(c->cred.pid) != c->start)
		err = -ESRCH;
	if (err)
		goto out;
	d = dev_get(a->uuid, &err);
	if (!d)
		goto out;
	err = uid_get(&d->uids, c->cred.uid, A.o->max_clients_per_uid,
		      c->cred.uid == 0);
	if (err)
		goto out;
	err = page_create(c, &memfd);
	if (err) {
		uid_put(&d->uids, c->cred.uid);
		goto out;
	}
	now = now_ns();
	c->dev = d;
	c->id = ++A.next_id;
	/* What the socket does not tell: the command and cgroup. */
	gs_proc_identify(c->cred.pid, c->comm, &c->cgroup_id);
	c->dprev = d->last;
	if (d->last)
		d->last->dnext = c;
	else
		d->first = c;
	d->last = c;
	gs_pol_client_init(&d->pol, &c->pol, now);
	c->pol.page = c->page;
	gs_mem_attach(&c->pol, a->mem_total);
	status_sync(c, now);
	gs_log(LOG_DEBUG, "gpu%u: pid %d uid %d attached", d->index,
	       (int)c->cred.pid, (int)c->cred.uid);
	A.st.events[0]++;
	ctl_event(GPUSCHED_CTL_EV_ATTACH, c);
	/* Without randomness, no memory channel: its calls wait in line. */
	c->has_cookie = getrandom(c->cookie, sizeof(c->cookie), GRND_NONBLOCK) ==
			sizeof(c->cookie);
	if (c->has_cookie) {
		att.id = c->id;
		memcpy(att.cookie, c->cookie, sizeof(att.cookie));
	}
	/*
	 * A rule looks at labels and @c's is being read: the rules wait for
	 * it, and so does the reply (attach_answer()), so that they have
	 * applied before the client allocates or asks for the GPU.
	 */
	if (client_label_due(c)) {
		c->attach_held = true;
		c->attach_deadline = now + LABEL_WAIT_NS;
		c->held_att = att;
		c->held_memfd = memfd;
		watch_update(c);
		return;
	}
	client_apply_policy(c);
out:
	reply(c, err, err ? NULL : &att, sizeof(att), memfd);
	if (memfd >= 0)
		close(memfd);
}

/* gs_pol_acquire()'s effects. */
static void apply_cb(void *d, struct gs_pol_effects *fx, uint64_t now)
{
	apply(d, fx, now);
}

static void cmd_acquire(struct arb_client *c, const struct gpusched_acquire *a,
			bool yield)
{
	struct arb_dev *d = c->dev;
	uint64_t now, due;
	int err;

	err = gs_pol_check_acquire(a);
	if (!err && !d)
		err = -ENOTCONN;
	if (err) {
		reply(c, err, NULL, 0, -1);
		return;
	}
	now = now_ns();
	due = gs_pol_due(a, now);
	err = gs_pol_acquire(&d->pol, &c->pol, yield, a->flags, due,
			     a->gpu_ns, now, apply_cb, d);
	/* Granted, refused, or a nudge (which never waits). */
	if (!gs_pol_acquire_waits(&c->pol, a->flags, err)) {
		reply(c, err, NULL, 0, -1);
		return;
	}
	park(c, true);
	if (a->flags & GPUSCHED_ACQUIRE_TIMEOUT) {
		uint64_t t = a->timeout_ns ? a->timeout_ns : 1;

		/* Saturated, as the module's: past the clock's end, never. */
		c->deadline = t < GS_POL_NEVER - now ? now + t : GS_POL_NEVER;
	}
}

static void cmd_release(struct arb_client *c, const struct gpusched_release *r)
{
	struct gs_pol_effects fx = { 0 };
	uint64_t now;
	int err;

	err = gs_pol_check_release(r);
	if (!err && !c->dev)
		err = -ENOTCONN;
	if (!err) {
		now = now_ns();
		err = gs_pol_release(&c->dev->pol, &c->pol, now, &fx);
		apply(c->dev, &fx, now);
		if (r->gpu_ns) {
			memset(&fx, 0, sizeof(fx));
			gs_pol_report_gpu(&c->dev->pol, &c->pol, r->gpu_ns, now,
					  &fx);
			apply(c->dev, &fx, now);
			status_sync(c, now);
		}
	}
	reply(c, err, NULL, 0, -1);
}

/* Unless @priv, only lowering the client's share is allowed (nice(2)). */
int client_set(struct arb_client *c, const struct gpusched_params *p,
		      bool priv)
{
	struct gs_pol_effects fx = { 0 };
	uint64_t now = now_ns();
	int err;

	err = gs_pol_set_params_masked(&c->dev->pol, &c->pol, p, priv, now, &fx);
	apply(c->dev, &fx, now);
	status_sync(c, now);
	return err;
}

static void cmd_set_params(struct arb_client *c, const struct gpusched_params *p)
{
	int err;

	err = gs_pol_check_set_params(p);
	if (!err && !c->dev)
		err = -ENOTCONN;
	if (!err)	/* As the module: raising takes CAP_SYS_NICE. */
		err = client_set(c, p, client_capable(c, CAP_SYS_NICE));
	reply(c, err, NULL, 0, -1);
}

/* The uapi state of @c, GPUSCHED_STATE_*. */
uint32_t client_state(const struct arb_client *c)
{
	return c->dev ? gs_status_state(&c->pol) : GPUSCHED_STATE_DETACHED;
}

/* GET_INFO of @c, answered on @to (@c, or its memory channel). */
static void cmd_get_info(struct arb_client *c, struct arb_client *to)
{
	struct gpusched_client_info info;

	if (c->dev) {
		gs_status_info(&c->dev->pol, &c->pol, now_ns(), &info);
		memcpy(info.uuid, c->dev->uuid, GPUSCHED_UUID_LEN);
		info.gpu_index = c->dev->index;
	} else {
		gs_status_info(NULL, NULL, 0, &info);
	}
	reply(to, 0, &info, sizeof(info), -1);
}

/*
 * MEM_RESERVE or MEM_RETURN of @c, answered on @to (@c, or its memory
 * channel); the page shows the reservation at the reply.
 */
static void cmd_mem(struct arb_client *c, struct arb_client *to,
		    const struct gpusched_mem *m, bool reserve)
{
	int err = gs_mem_check(m);

	if (!err && !c->dev)
		err = -ENOTCONN;
	if (!err)
		err = reserve ? gs_mem_reserve(&c->dev->pol, &c->pol, m->bytes) :
				gs_mem_return(&c->dev->pol, &c->pol, m->bytes);
	if (!err)
		status_sync(c, now_ns());
	reply(to, err, NULL, 0, -1);
}

/* Equal, in a time that does not depend on where they differ. */
static bool cookie_eq(const unsigned char *a, const unsigned char *b)
{
	unsigned char diff = 0;

	for (size_t i = 0; i < 16; i++)
		diff |= a[i] ^ b[i];
	return !diff;
}

static struct arb_client *client_by_id(uint64_t id)
{
	for (struct arb_dev *d = A.devs; d; d = d->next)
		for (struct arb_client *c = d->first; c; c = c->dnext)
			if (c->id == id && !c->closed)
				return c;
	return NULL;
}

/*
 * BIND: make @ch, a fresh connection, the memory channel of the client the
 * id and cookie name, if @ch's process is the client's. One error for a
 * wrong id, cookie or process: a guess learns nothing.
 */
static void cmd_bind(struct arb_client *ch, const struct gpusched_wire_bind *b)
{
	struct arb_client *c = client_by_id(b->id);
	int err = 0;

	if (b->reserved)
		err = -EINVAL;
	else if (ch->dev || ch->ctl)
		err = -EISCONN;
	else if (!c || !c->has_cookie || !cookie_eq(c->cookie, b->cookie) ||
		 c->cred.pid != ch->cred.pid || c->cred.uid != ch->cred.uid)
		err = -EACCES;
	else if (c->chan)
		err = -EBUSY;
	if (!err) {
		c->chan = ch;
		ch->owner = c;
		gs_log(LOG_DEBUG, "gpu%u: pid %d: memory channel bound",
		       c->dev->index, (int)c->cred.pid);
	}
	reply(ch, err, NULL, 0, -1);
}

void chan_request(struct arb_client *ch, const struct gpusched_wire_req *req)
{
	switch (req->cmd) {
	case GPUSCHED_IOC_GET_INFO:
		cmd_get_info(ch->owner, ch);
		break;
	case GPUSCHED_IOC_MEM_RESERVE:
	case GPUSCHED_IOC_MEM_RETURN:
		cmd_mem(ch->owner, ch, (const void *)req->arg,
			req->cmd == GPUSCHED_IOC_MEM_RESERVE);
		break;
	case GPUSCHED_WIRE_BIND:
		reply(ch, -EISCONN, NULL, 0, -1);
		break;
	default:
		reply(ch, -EOPNOTSUPP, NULL, 0, -1);
		break;
	}
}

/* A request of the ioctl contract, as the module's chardev.c takes it. */
void token_request(struct arb_client *c, const struct gpusched_wire_req *req)
{
	switch (req->cmd) {
	case GPUSCHED_IOC_ATTACH:
		cmd_attach(c, (const void *)req->arg);
		break;
	case GPUSCHED_IOC_ACQUIRE:
		cmd_acquire(c, (const void *)req->arg, false);
		break;
	case GPUSCHED_IOC_YIELD:
		cmd_acquire(c, (const void *)req->arg, true);
		break;
	case GPUSCHED_IOC_RELEASE:
		cmd_release(c, (const void *)req->arg);
		break;
	case GPUSCHED_IOC_SET_PARAMS:
		cmd_set_params(c, (const void *)req->arg);
		break;
	case GPUSCHED_IOC_GET_INFO:
		cmd_get_info(c, c);
		break;
	case GPUSCHED_IOC_MEM_RESERVE:
	case GPUSCHED_IOC_MEM_RETURN:
		cmd_mem(c, c, (const void *)req->arg,
			req->cmd == GPUSCHED_IOC_MEM_RESERVE);
		break;
	case GPUSCHED_WIRE_BIND:
		cmd_bind(c, (const void *)req->arg);
		break;
	default:
		reply(c, -ENOTTY, NULL, 0, -1);
		break;
	}
}
