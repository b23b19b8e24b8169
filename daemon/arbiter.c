// SPDX-License-Identifier: GPL-2.0
/*
 * gpuschedd --arbiter: the gpusched token served from user space, for hosts
 * that cannot load gpusched.ko. It runs the module's policy (kmod/policy.c)
 * and keeps the same contract (kmod/uapi/linux/gpusched.h): one connection
 * of a SOCK_SEQPACKET socket is one client, one message each way per
 * command, and the status page is a memfd that the client maps read-only.
 *
 * One thread, one epoll loop: the listening socket, a signalfd, one
 * timerfd armed for the earliest of the policy's next events and the
 * deadlines of parked requests, and every client. A blocking ACQUIRE is
 * parked (no reply) until it is granted or times out; while a request is
 * parked the client's further requests stay unread, so replies keep the
 * order of requests (the wire format has no request id). A closed
 * connection is a closed file: release, and remove the client.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <linux/gpusched.h>

#include "arbiter.h"
#include "policyfile.h"
#include "rules.h"

struct arb_dev {
	struct arb_dev *next;
	unsigned char uuid[GPUSCHED_UUID_LEN];
	unsigned int index;
	struct gs_pol_dev pol;
};

struct arb_client {
	struct arb_client *next, *prev;	/* all clients */
	int fd;
	struct ucred cred;
	struct arb_dev *dev;		/* NULL until ATTACH */
	struct gs_pol_client pol;
	struct gpusched_status *page;
	uint64_t grant_gen;
	bool parked;			/* an ACQUIRE or YIELD awaits its reply */
	uint64_t deadline;		/* of the parked request; 0: none */
};

static struct {
	const struct arb_options *o;
	int epfd, lfd, sfd, tfd;
	struct arb_dev *devs;
	unsigned int nr_devs;
	struct arb_client clients;	/* list head */
	unsigned int nr_clients;
	struct arb_client *zombies;	/* closed, to free after the batch */
	bool future_write_seal;
	struct gs_policy *pol;		/* the policy file's rules and knobs */
	dev_t sock_dev;
	ino_t sock_ino;
	bool accept_paused;		/* out of descriptors or memory */
	bool accept_warned;		/* said so; reset by the next accept */
} A;

#define container_of(p, type, member) \
	((type *)((char *)(p) - offsetof(type, member)))

static void logmsg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logmsg(const char *fmt, ...)
{
	va_list ap;

	fputs("gpuschedd: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ------------------------------------------------------------------ */
/* Status pages and policy effects, as kmod/token.c does them */

static void status_sync(struct arb_client *c, uint64_t now)
{
	struct gpusched_status *st = c->page;
	struct gs_pol_client *pc = &c->pol;
	uint32_t flags = GPUSCHED_ST_ATTACHED;

	if (pc->state == GS_POL_HOLDING)
		flags |= GPUSCHED_ST_HOLDING;
	if (pc->state == GS_POL_HOLDING && pc->yield_requested)
		flags |= GPUSCHED_ST_YIELD;
	if (pc->revoked)
		flags |= GPUSCHED_ST_REVOKED;
	st->grant_gen = c->grant_gen;
	st->slice_end_ns = pc->slice_end;
	st->grace_ns = c->dev->pol.p.grace_ns;
	st->nr_waiting = c->dev->pol.nr_waiting;
	st->nr_clients = c->dev->pol.nr_clients;
	st->held_ns = gs_pol_held_now(pc, now);
	st->overruns = pc->overruns;
	/* Clients load flags with acquire: the fields above are valid then. */
	__atomic_store_n(&st->flags, flags, __ATOMIC_RELEASE);
	__atomic_store_n(&st->seq, st->seq + 1, __ATOMIC_RELEASE);
}

static struct arb_client *to_client(struct gs_pol_client *pc)
{
	return container_of(pc, struct arb_client, pol);
}

static void accept_pause(bool pause)
{
	struct epoll_event ev = { .events = pause ? 0 : EPOLLIN, .data.ptr = &A.lfd };

	if (A.accept_paused == pause)
		return;
	if (epoll_ctl(A.epfd, EPOLL_CTL_MOD, A.lfd, &ev))
		logmsg("epoll_ctl: %s", strerror(errno));
	else
		A.accept_paused = pause;
}

static void client_close(struct arb_client *c, const char *why);

static void reply(struct arb_client *c, int ret, const void *arg, size_t size,
		  int memfd)
{
	struct gpusched_wire_rep rep = { .magic = GPUSCHED_WIRE_MAGIC, .ret = ret };
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int))];
	} cbuf;
	struct iovec iov = { .iov_base = &rep, .iov_len = sizeof(rep) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };

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
	/* A client that does not read its replies is not waited for. */
	if (sendmsg(c->fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT) != sizeof(rep))
		client_close(c, "reply failed");
}

static void park(struct arb_client *c, bool on)
{
	struct epoll_event ev = {
		/* Parked: only notice the peer going away. */
		.events = on ? EPOLLRDHUP : EPOLLIN | EPOLLRDHUP,
		.data.ptr = c,
	};

	c->parked = on;
	if (!on)
		c->deadline = 0;
	epoll_ctl(A.epfd, EPOLL_CTL_MOD, c->fd, &ev);
}

/* Tell clients what the policy decided (every policy call ends here). */
static void apply(struct arb_dev *d, struct gs_pol_effects *fx, uint64_t now)
{
	if (fx->revoked) {
		struct arb_client *c = to_client(fx->revoked);

		status_sync(c, now);
		logmsg("gpu%u: pid %d did not yield within %llu us: revoked",
		       d->index, (int)c->cred.pid,
		       (unsigned long long)(d->pol.p.grace_ns / 1000));
	}
	if (fx->released)
		status_sync(to_client(fx->released), now);
	if (fx->granted) {
		struct arb_client *c = to_client(fx->granted);

		c->grant_gen++;
		status_sync(c, now);
		if (c->parked) {
			park(c, false);
			reply(c, 0, NULL, 0, -1);
		}
	}
	/* The holder learns of yields and new waiters from its page. */
	if (d->pol.holder)
		status_sync(to_client(d->pol.holder), now);
}

/* Arm the timer for the earliest policy event or parked deadline. */
static void rearm(void)
{
	uint64_t now = now_ns(), next = GS_POL_NEVER;
	struct itimerspec its = { 0 };

	for (struct arb_dev *d = A.devs; d; d = d->next) {
		uint64_t t = gs_pol_next_event(&d->pol, now);

		if (t < next)
			next = t;
	}
	for (struct arb_client *c = A.clients.next; c != &A.clients; c = c->next)
		if (c->parked && c->deadline && c->deadline < next)
			next = c->deadline;
	if (next != GS_POL_NEVER) {
		if (next <= now)
			next = now + 1;
		its.it_value.tv_sec = (time_t)(next / 1000000000ull);
		its.it_value.tv_nsec = (long)(next % 1000000000ull);
	}
	timerfd_settime(A.tfd, TFD_TIMER_ABSTIME, &its, NULL);
}

static void on_timer(void)
{
	uint64_t expirations, now = now_ns();
	struct arb_client *c;

	if (read(A.tfd, &expirations, sizeof(expirations)) < 0 && errno != EAGAIN)
		logmsg("timerfd: %s", strerror(errno));
	for (struct arb_dev *d = A.devs; d; d = d->next) {
		struct gs_pol_effects fx = { 0 };

		gs_pol_tick(&d->pol, now, &fx);
		apply(d, &fx, now);
	}
again:
	for (c = A.clients.next; c != &A.clients; c = c->next) {
		if (c->parked && c->deadline && c->deadline <= now &&
		    c->pol.state == GS_POL_WAITING) {
			struct gs_pol_effects fx = { 0 };

			gs_pol_cancel_wait(&c->dev->pol, &c->pol, now, &fx);
			apply(c->dev, &fx, now);
			park(c, false);
			reply(c, -ETIMEDOUT, NULL, 0, -1);
			/* Replies may have closed clients: walk again. */
			goto again;
		}
	}
}

/* ------------------------------------------------------------------ */
/* Commands */

/* The knobs the policy file gives @d, over the command line's defaults. */
static void dev_apply_policy(struct arb_dev *d)
{
	struct gs_pol_effects fx = { 0 };
	struct gs_pol_params p = A.o->params;
	uint64_t now = now_ns();

	if (A.pol)
		gs_policy_gpu_params(A.pol, d->uuid, &p);
	if (gs_pol_set_dev_params(&d->pol, &p, now, &fx))
		logmsg("gpu%u: the policy's knobs are out of range; keeping the defaults",
		       d->index);
	apply(d, &fx, now);
}

static int client_set(struct arb_client *c, const struct gpusched_params *p,
		      bool priv);

/* The first matching rule's weight, class and cap, as an admin's set. */
static void client_apply_policy(struct arb_client *c)
{
	struct gpusched_params p = { 0 };
	const char *rule = NULL;

	if (!A.pol || !c->dev ||
	    gs_rules_classify(A.pol, c->cred.pid, c->cred.uid, c->cred.gid,
			      &p, &rule) != 1)
		return;
	if (client_set(c, &p, true))
		logmsg("gpu%u: pid %d: rule %s not applied", c->dev->index,
		       (int)c->cred.pid, rule);
	else if (A.o->verbose)
		logmsg("gpu%u: pid %d: rule %s applied", c->dev->index,
		       (int)c->cred.pid, rule);
}

/*
 * Read the policy file. At start an error is fatal; on SIGHUP it keeps the
 * policy in force. A missing file at the default path means no rules.
 */
static int policy_load(bool reload)
{
	struct gs_policy *pol;
	struct arb_client *c;
	struct arb_dev *d;
	char err[1024];
	struct stat st;

	if (!A.o->config_given && stat(A.o->config, &st) && errno == ENOENT)
		pol = gs_policy_parse(A.o->config, "", 0, err, sizeof(err));
	else
		pol = gs_policy_load(A.o->config, err, sizeof(err));
	if (!pol) {
		logmsg("%s%s", err, reload ? "; keeping the policy in force" : "");
		return -1;
	}
	gs_policy_free(A.pol);
	A.pol = pol;
	logmsg("%s %s: %zu rules", reload ? "reloaded" : "loaded", A.o->config,
	       pol->nr_rules);
	for (d = A.devs; d; d = d->next)
		dev_apply_policy(d);
	for (c = A.clients.next; c != &A.clients; c = c->next)
		client_apply_policy(c);
	return 0;
}

static struct arb_dev *dev_get(const unsigned char *uuid, int *err)
{
	struct arb_dev *d, **tail = &A.devs;

	for (d = A.devs; d; d = d->next) {
		if (!memcmp(d->uuid, uuid, GPUSCHED_UUID_LEN))
			return d;
		tail = &d->next;
	}
	if (A.nr_devs >= A.o->max_gpus) {
		*err = -ENOSPC;
		return NULL;
	}
	d = calloc(1, sizeof(*d));
	if (!d) {
		*err = -ENOMEM;
		return NULL;
	}
	memcpy(d->uuid, uuid, GPUSCHED_UUID_LEN);
	d->index = A.nr_devs++;
	gs_pol_dev_init(&d->pol, &A.o->params, now_ns());
	dev_apply_policy(d);
	*tail = d;
	return d;
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

static void cmd_attach(struct arb_client *c, const struct gpusched_attach *a)
{
	static const unsigned char zero[GPUSCHED_UUID_LEN];
	int memfd = -1, err = 0;
	struct arb_dev *d;
	uint64_t now;

	if (a->flags)
		err = -EOPNOTSUPP;
	else if (a->reserved || !memcmp(a->uuid, zero, sizeof(zero)))
		err = -EINVAL;
	else if (c->dev)
		err = -EBUSY;
	if (err)
		goto out;
	d = dev_get(a->uuid, &err);
	if (!d)
		goto out;
	err = page_create(c, &memfd);
	if (err)
		goto out;
	now = now_ns();
	c->dev = d;
	gs_pol_client_init(&d->pol, &c->pol, now);
	status_sync(c, now);
	if (A.o->verbose)
		logmsg("gpu%u: pid %d uid %d attached", d->index,
		       (int)c->cred.pid, (int)c->cred.uid);
	client_apply_policy(c);
out:
	reply(c, err, NULL, 0, memfd);
	if (memfd >= 0)
		close(memfd);
}

static void cmd_acquire(struct arb_client *c, const struct gpusched_acquire *a,
			bool yield)
{
	struct gs_pol_effects fx = { 0 };
	struct arb_dev *d = c->dev;
	uint64_t now;
	int err = 0;

	if (a->flags & ~GPUSCHED_ACQUIRE_ALL) {
		reply(c, -EOPNOTSUPP, NULL, 0, -1);
		return;
	}
	if (a->reserved || !d) {
		reply(c, a->reserved ? -EINVAL : -ENOTCONN, NULL, 0, -1);
		return;
	}
	now = now_ns();
	if (c->pol.state == GS_POL_HOLDING && yield)
		gs_pol_release(&d->pol, &c->pol, now, &fx);
	if (c->pol.state == GS_POL_HOLDING)
		err = -EALREADY;
	else if (c->pol.state == GS_POL_WAITING)
		err = -EBUSY;
	else if ((a->flags & GPUSCHED_ACQUIRE_NONBLOCK) && d->pol.holder)
		err = -EAGAIN;
	else
		gs_pol_wait(&d->pol, &c->pol, now, &fx);
	apply(d, &fx, now);
	if (!err && (a->flags & GPUSCHED_ACQUIRE_NONBLOCK) &&
	    c->pol.state == GS_POL_WAITING) {
		/* Free but not ours to take (a cap or a better waiter). */
		memset(&fx, 0, sizeof(fx));
		gs_pol_cancel_wait(&d->pol, &c->pol, now, &fx);
		apply(d, &fx, now);
		err = -EAGAIN;
	}
	if (err || c->pol.state == GS_POL_HOLDING) {
		reply(c, err, NULL, 0, -1);
		return;
	}
	park(c, true);
	if (a->flags & GPUSCHED_ACQUIRE_TIMEOUT)
		c->deadline = now + (a->timeout_ns ? a->timeout_ns : 1);
}

static void cmd_release(struct arb_client *c, const struct gpusched_release *r)
{
	struct gs_pol_effects fx = { 0 };
	uint64_t now;
	int err;

	if (r->flags)
		err = -EOPNOTSUPP;
	else if (r->reserved)
		err = -EINVAL;
	else if (!c->dev)
		err = -ENOTCONN;
	else {
		now = now_ns();
		err = gs_pol_release(&c->dev->pol, &c->pol, now, &fx);
		apply(c->dev, &fx, now);
	}
	reply(c, err, NULL, 0, -1);
}

/* Unless @priv, only lowering the client's share is allowed (nice(2)). */
static int client_set(struct arb_client *c, const struct gpusched_params *p,
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

	if (p->mask & ~GPUSCHED_PARAM_ALL)
		err = -EOPNOTSUPP;
	else if (p->reserved[0] || p->reserved[1])
		err = -EINVAL;
	else if (!c->dev)
		err = -ENOTCONN;
	else	/* The module asks for CAP_SYS_NICE; from user space, root will do. */
		err = client_set(c, p, c->cred.uid == 0);
	reply(c, err, NULL, 0, -1);
}

static void cmd_get_info(struct arb_client *c)
{
	static const uint32_t states[] = {
		[GS_POL_IDLE] = GPUSCHED_STATE_IDLE,
		[GS_POL_WAITING] = GPUSCHED_STATE_WAITING,
		[GS_POL_HOLDING] = GPUSCHED_STATE_HOLDING,
	};
	struct gpusched_client_info info = { .size = sizeof(info) };
	struct gs_pol_client *pc = &c->pol;

	info.state = GPUSCHED_STATE_DETACHED;
	if (c->dev) {
		memcpy(info.uuid, c->dev->uuid, GPUSCHED_UUID_LEN);
		info.state = states[pc->state];
		info.weight = pc->weight;
		info.class = pc->class;
		info.cap_pct = pc->cap_pct;
		info.gpu_index = c->dev->index;
		info.held_ns = gs_pol_held_now(pc, now_ns());
		info.grants = pc->grants;
		info.wait_ns_total = pc->wait_ns_total;
		info.wait_ns_max = pc->wait_ns_max;
		info.overruns = pc->overruns;
		info.yields = pc->yields;
	}
	reply(c, 0, &info, sizeof(info), -1);
}

static void on_request(struct arb_client *c)
{
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int) * 8)];
	} cbuf;
	struct gpusched_wire_req req;
	struct iovec iov = { .iov_base = &req, .iov_len = sizeof(req) };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf.buf, .msg_controllen = sizeof(cbuf.buf),
	};
	struct cmsghdr *cm;
	ssize_t n;

	n = recvmsg(c->fd, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		client_close(c, n ? strerror(errno) : NULL);
		return;
	}
	/* Nobody is meant to send us descriptors: do not keep them. */
	for (cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
			int *fds = (int *)CMSG_DATA(cm);
			size_t k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);

			for (size_t i = 0; i < k; i++)
				close(fds[i]);
		}
	}
	if (n != sizeof(req) || (msg.msg_flags & MSG_TRUNC) ||
	    req.magic != GPUSCHED_WIRE_MAGIC) {
		reply(c, -EPROTO, NULL, 0, -1);
		return;
	}

	switch (req.cmd) {
	case GPUSCHED_IOC_ATTACH:
		cmd_attach(c, (const void *)req.arg);
		break;
	case GPUSCHED_IOC_ACQUIRE:
		cmd_acquire(c, (const void *)req.arg, false);
		break;
	case GPUSCHED_IOC_YIELD:
		cmd_acquire(c, (const void *)req.arg, true);
		break;
	case GPUSCHED_IOC_RELEASE:
		cmd_release(c, (const void *)req.arg);
		break;
	case GPUSCHED_IOC_SET_PARAMS:
		cmd_set_params(c, (const void *)req.arg);
		break;
	case GPUSCHED_IOC_GET_INFO:
		cmd_get_info(c);
		break;
	default:
		reply(c, -ENOTTY, NULL, 0, -1);
		break;
	}
}

/* ------------------------------------------------------------------ */
/* Connections */

static void client_close(struct arb_client *c, const char *why)
{
	if (c->fd < 0)
		return;	/* already closing (a reply to it failed) */
	epoll_ctl(A.epfd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	c->fd = -1;
	if (c->dev) {
		struct gs_pol_effects fx = { 0 };
		uint64_t now = now_ns();

		gs_pol_client_exit(&c->dev->pol, &c->pol, now, &fx);
		if (A.o->verbose || why)
			logmsg("gpu%u: pid %d detached%s%s", c->dev->index,
			       (int)c->cred.pid, why ? ": " : "", why ? why : "");
		apply(c->dev, &fx, now);
	}
	if (c->page)
		munmap(c->page, GPUSCHED_STATUS_SIZE);
	c->prev->next = c->next;
	c->next->prev = c->prev;
	A.nr_clients--;
	accept_pause(false);	/* a descriptor is free again */
	/* Freed after the event batch, which may still point at it. */
	c->next = A.zombies;
	A.zombies = c;
}

static void free_zombies(void)
{
	while (A.zombies) {
		struct arb_client *c = A.zombies;

		A.zombies = c->next;
		free(c);
	}
}

static void on_accept(void)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP };
	socklen_t len = sizeof(struct ucred);
	struct arb_client *c;
	int fd;

	fd = accept4(A.lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (fd < 0) {
		if (errno == EAGAIN || errno == EINTR || errno == ECONNABORTED)
			return;
		/*
		 * Out of descriptors or memory: the connection stays queued
		 * and the listening socket stays readable, so polling it again
		 * would spin. Stop listening until a client leaves or a second
		 * has passed, and say so once per episode.
		 */
		if (!A.accept_warned)
			logmsg("accept: %s; not accepting connections until a client leaves (%u connected)",
			       strerror(errno), A.nr_clients);
		A.accept_warned = true;
		accept_pause(true);
		return;
	}
	A.accept_warned = false;
	c = calloc(1, sizeof(*c));
	if (!c) {
		close(fd);
		return;
	}
	c->fd = fd;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &c->cred, &len)) {
		logmsg("SO_PEERCRED: %s", strerror(errno));
		close(fd);
		free(c);
		return;
	}
	ev.data.ptr = c;
	if (epoll_ctl(A.epfd, EPOLL_CTL_ADD, fd, &ev)) {
		logmsg("epoll_ctl: %s", strerror(errno));
		close(fd);
		free(c);
		return;
	}
	c->next = &A.clients;
	c->prev = A.clients.prev;
	A.clients.prev->next = c;
	A.clients.prev = c;
	A.nr_clients++;
}

/* ------------------------------------------------------------------ */
/* Setup */

/*
 * A socket file with no listener is left over from an arbiter that died:
 * replace it. One that answers belongs to a live arbiter: refuse.
 */
static int claim_path(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat sb;
	int fd, err;

	if (lstat(path, &sb)) {
		if (errno == ENOENT)
			return 0;
		logmsg("%s: %s", path, strerror(errno));
		return -1;
	}
	if (!S_ISSOCK(sb.st_mode)) {
		logmsg("%s exists and is not a socket; not touching it", path);
		return -1;
	}
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		logmsg("socket: %s", strerror(errno));
		return -1;
	}
	err = connect(fd, (struct sockaddr *)&sa, sizeof(sa)) ? errno : 0;
	close(fd);
	if (!err) {
		logmsg("another arbiter is listening on %s; exiting", path);
		return -1;
	}
	if (err != ECONNREFUSED) {
		logmsg("%s: %s; not replacing it", path, strerror(err));
		return -1;
	}
	if (unlink(path) && errno != ENOENT) {
		logmsg("cannot remove the stale socket %s: %s", path, strerror(errno));
		return -1;
	}
	logmsg("removed the stale socket %s", path);
	return 0;
}

static int make_dir(const char *path)
{
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char *slash;

	strcpy(dir, path);
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return 0;
	*slash = '\0';
	/* Like /dev: anyone may reach the socket, only root may replace it. */
	if (mkdir(dir, 0755) && errno != EEXIST) {
		logmsg("cannot create %s: %s", dir, strerror(errno));
		return -1;
	}
	return 0;
}

static int listen_socket(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat sb;
	mode_t old;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		logmsg("socket path %s is too long (at most %zu bytes)", path,
		       sizeof(sa.sun_path) - 1);
		return -1;
	}
	if (make_dir(path) || claim_path(path))
		return -1;
	strcpy(sa.sun_path, path);
	A.lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (A.lfd < 0) {
		logmsg("socket: %s", strerror(errno));
		return -1;
	}
	old = umask(0);
	if (bind(A.lfd, (struct sockaddr *)&sa, sizeof(sa))) {
		umask(old);
		logmsg("bind %s: %s", path, strerror(errno));
		return -1;
	}
	umask(old);
	/* Any local user may connect, as anyone may open /dev/gpusched. */
	if (chmod(path, 0666) || stat(path, &sb) || listen(A.lfd, 128)) {
		logmsg("%s: %s", path, strerror(errno));
		unlink(path);
		return -1;
	}
	A.sock_dev = sb.st_dev;
	A.sock_ino = sb.st_ino;
	return 0;
}

/* Remove the socket file if it is still the one we made. */
static void unlink_ours(const char *path)
{
	struct stat sb;

	if (!stat(path, &sb) && sb.st_dev == A.sock_dev && sb.st_ino == A.sock_ino)
		unlink(path);
}

static bool probe_future_write_seal(void)
{
	int fd = memfd_create("gpusched-probe", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	bool ok;

	if (fd < 0)
		return false;
	ok = !fcntl(fd, F_ADD_SEALS, F_SEAL_FUTURE_WRITE);
	close(fd);
	return ok;
}

static int add_fd(int fd, void *ptr)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = ptr };

	return epoll_ctl(A.epfd, EPOLL_CTL_ADD, fd, &ev);
}

/* One descriptor per client: allow as many as the hard limit does. */
static void raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur >= rl.rlim_max)
		return;
	rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl))
		logmsg("cannot raise the descriptor limit: %s", strerror(errno));
}

int arbiter_run(const struct arb_options *o)
{
	struct epoll_event evs[64];
	sigset_t mask;
	int status = 1;
	bool stop = false;

	A.o = o;
	A.lfd = A.sfd = A.tfd = A.epfd = -1;
	raise_nofile();
	A.clients.next = A.clients.prev = &A.clients;
	A.future_write_seal = probe_future_write_seal();
	if (!A.future_write_seal)
		logmsg("this kernel has no F_SEAL_FUTURE_WRITE: clients could map their status page writable (harmless to others)");

	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);

	A.epfd = epoll_create1(EPOLL_CLOEXEC);
	A.sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	A.tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (A.epfd < 0 || A.sfd < 0 || A.tfd < 0) {
		logmsg("setup: %s", strerror(errno));
		goto out;
	}
	if (policy_load(false))
		goto out;
	if (listen_socket(o->socket_path))
		goto out;
	if (add_fd(A.lfd, &A.lfd) || add_fd(A.sfd, &A.sfd) || add_fd(A.tfd, &A.tfd)) {
		logmsg("epoll_ctl: %s", strerror(errno));
		goto out_unlink;
	}
	logmsg("arbiter listening on %s (slice %llu us, grace %llu us)",
	       o->socket_path, (unsigned long long)(o->params.slice_ns / 1000),
	       (unsigned long long)(o->params.grace_ns / 1000));

	while (!stop) {
		/* Paused: try again in a second (ENFILE is system-wide). */
		int n = epoll_wait(A.epfd, evs, 64, A.accept_paused ? 1000 : -1);

		if (n == 0 && A.accept_paused)
			accept_pause(false);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			logmsg("epoll_wait: %s", strerror(errno));
			goto out_unlink;
		}
		for (int i = 0; i < n; i++) {
			void *p = evs[i].data.ptr;

			if (p == &A.lfd) {
				on_accept();
			} else if (p == &A.tfd) {
				on_timer();
			} else if (p == &A.sfd) {
				struct signalfd_siginfo si;

				while (read(A.sfd, &si, sizeof(si)) == sizeof(si)) {
					if (si.ssi_signo == SIGHUP) {
						policy_load(true);
						continue;
					}
					logmsg("signal %u: exiting", si.ssi_signo);
					stop = true;
				}
			} else {
				struct arb_client *c = p;
				uint32_t e = evs[i].events;

				/* Closed earlier in this batch (a failed reply
				 * closes the client replied to): skip it.
				 */
				if (c->fd < 0)
					continue;
				if (e & EPOLLIN)
					on_request(c);
				else if (e & (EPOLLHUP | EPOLLRDHUP | EPOLLERR))
					client_close(c, NULL);
			}
		}
		free_zombies();
		rearm();
	}
	status = 0;
out_unlink:
	while (A.clients.next != &A.clients)
		client_close(A.clients.next, NULL);
	free_zombies();
	unlink_ours(o->socket_path);
out:
	if (A.lfd >= 0)
		close(A.lfd);
	if (A.tfd >= 0)
		close(A.tfd);
	if (A.sfd >= 0)
		close(A.sfd);
	if (A.epfd >= 0)
		close(A.epfd);
	gs_policy_free(A.pol);
	A.pol = NULL;
	while (A.devs) {
		struct arb_dev *d = A.devs;

		A.devs = d->next;
		free(d);
	}
	return status;
}
