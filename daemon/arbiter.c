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
 *
 * A connection whose first request is a control request (gpusched_ctl.h)
 * is gpuschedctl's, not a client: it lists GPUs and clients, changes them
 * (uid 0 only) or subscribes to events. A list longer than the socket
 * buffer is sent as the peer reads it (EPOLLOUT), resuming after the last
 * client id sent, as the module's netlink dumps do; meanwhile that
 * connection's further requests stay unread.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
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
#include <gpusched/arbiter_wire.h>

#include "arbiter.h"
#include "gpusched_ctl.h"
#include "metrics.h"
#include "policyfile.h"
#include "rules.h"

_Static_assert(GS_NR_KNOBS == GPUSCHED_CTL_NR_KNOBS,
	       "the control protocol's knob bits follow enum gs_knob");
_Static_assert(sizeof(struct gpusched_client_info) <= GPUSCHED_WIRE_MAX &&
	       sizeof(struct gpusched_acquire) <= GPUSCHED_WIRE_MAX,
	       "every ioctl struct fits the wire format");
_Static_assert((int)GS_NR_KNOBS == (int)GS_POL_NR_KNOBS,
	       "enum gs_knob follows the policy's knob table");

struct arb_client;

struct arb_dev {
	struct arb_dev *next;		/* in index order */
	unsigned char uuid[GPUSCHED_UUID_LEN];
	unsigned int index;
	struct gs_pol_dev pol;
	bool knobs_set;			/* by gpuschedctl: kept when unused */
	/* Its clients in attach order, which is id order (dumps resume by id). */
	struct arb_client *first, *last;
};

/* A reply of a control connection that is not sent whole yet. */
struct ctl_out {
	bool active;
	uint16_t cmd;
	uint32_t seq;
	int error;			/* a reply without records: its error */
	bool filtered;			/* GET_CLIENTS of one GPU */
	uint32_t gpu;			/* next GPU index to list */
	uint64_t last_id;		/* last client id sent */
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
	/* Attached clients: on their GPU's list, as the module lists them. */
	struct arb_client *dnext, *dprev;
	uint64_t id;
	char comm[16];
	uint64_t cgroup_id;
	/* Control connections (gpuschedctl) */
	bool ctl;
	bool subscribed;		/* receives events */
	bool ev_lost;			/* dropped some: EV_LOST is due */
	struct ctl_out out;
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
	uint64_t poll_until;		/* --poll-us: poll, not sleep, until */
	uint64_t started_ns;		/* for the CPU time said at exit */
	uint64_t accept_warned_ns;	/* when we last said so */
	uint64_t next_id;		/* of the next client to attach */
	struct gs_metrics *metrics;
	struct gs_daemon_stats st;	/* for the metrics */
	uint64_t *rule_hits;		/* per rule of pol */
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

/*
 * The arbiter is the page's one writer. @seq is a sequence count, odd
 * while the fields change (see the uapi header), as the module's.
 */
static void status_sync(struct arb_client *c, uint64_t now)
{
	struct gpusched_status *st = c->page, v;
	const uint64_t *src = (const uint64_t *)&v;
	uint64_t *dst = (uint64_t *)st;
	uint32_t seq = st->seq;

	_Static_assert(offsetof(struct gpusched_status, grant_gen) ==
		       GS_STATUS_FILL_FROM && sizeof(v) % 8 == 0,
		       "the page is filled in 64-bit words from grant_gen");
	gs_pol_status_fill(&c->dev->pol, &c->pol, c->grant_gen, now, &v);
	__atomic_store_n(&st->seq, seq + 1, __ATOMIC_RELAXED);
	/* The odd count is seen before any field of this update. */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	/* Word by word: clients load single fields without the count too. */
	for (size_t i = GS_STATUS_FILL_FROM / 8; i < sizeof(v) / 8; i++)
		__atomic_store_n(&dst[i], src[i], __ATOMIC_RELAXED);
	/* Clients load flags with acquire: the fields above are valid then. */
	__atomic_store_n(&st->flags, v.flags, __ATOMIC_RELEASE);
	__atomic_store_n(&st->seq, seq + 2, __ATOMIC_RELEASE);
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

/*
 * A parked request or a reply not sent whole leaves the connection's next
 * requests unread (replies keep the order of requests); then only the
 * peer going away, or room to send, is of interest.
 */
static void watch_update(struct arb_client *c)
{
	struct epoll_event ev = { .events = EPOLLRDHUP, .data.ptr = c };

	if (c->fd < 0)
		return;
	if (!c->parked && !c->out.active)
		ev.events |= EPOLLIN;
	if (c->out.active || c->ev_lost)
		ev.events |= EPOLLOUT;
	epoll_ctl(A.epfd, EPOLL_CTL_MOD, c->fd, &ev);
}

static void park(struct arb_client *c, bool on)
{
	c->parked = on;
	if (!on)
		c->deadline = 0;
	watch_update(c);
}

static void ctl_event(uint16_t cmd, struct arb_client *c);

/* Tell clients what the policy decided (every policy call ends here). */
static void apply(struct arb_dev *d, struct gs_pol_effects *fx, uint64_t now)
{
	if (fx->revoked) {
		struct arb_client *c = to_client(fx->revoked);

		status_sync(c, now);
		logmsg("gpu%u: pid %d did not yield within %llu us: revoked",
		       d->index, (int)c->cred.pid,
		       (unsigned long long)(d->pol.p.grace_ns / 1000));
		A.st.events[2]++;
		ctl_event(GPUSCHED_CTL_EV_OVERRUN, c);
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

/* Our CPU time, in s: what polling costs (--poll-us). */
static double cpu_s(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts))
		return 0;
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
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
	/* A metrics connection that times out. */
	if (A.metrics) {
		int ms = gs_metrics_timeout_ms(A.metrics);

		if (ms >= 0 && now + ms * 1000000ull < next)
			next = now + ms * 1000000ull;
	}
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
	if (A.metrics)
		gs_metrics_dispatch(A.metrics);	/* drops peers that timed out */
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

/*
 * An administrator's change (a rule, gpuschedctl): a memory limit in
 * percent (GS_MEM_PCT_FLAG) resolves against the client's own mem_total,
 * -EINVAL if it reported none, as GPUSCHED_A_CLIENT_MEM_LIMIT_PCT does.
 */
static int client_admin_set(struct arb_client *c,
			    const struct gpusched_params *p)
{
	struct gpusched_params q = *p;
	uint64_t bytes;

	if ((q.mask & GPUSCHED_PARAM_MEM_LIMIT) &&
	    (q.mem_limit & GS_MEM_PCT_FLAG)) {
		if (gs_mem_limit_pct(&c->pol,
				     (uint32_t)(q.mem_limit & ~GS_MEM_PCT_FLAG),
				     &bytes))
			return -EINVAL;
		q.mem_limit = bytes;
	}
	return client_set(c, &q, true);
}

/* The first matching rule's weight, class and cap, as an admin's set. */
static void client_apply_policy(struct arb_client *c)
{
	struct gpusched_params p = { 0 };
	const char *rule = NULL;

	if (!A.pol || !c->dev ||
	    gs_rules_classify(A.pol, c->cred.pid, c->cred.uid, c->cred.gid,
			      &p, &rule) != 1)
		return;
	for (size_t i = 0; i < A.pol->nr_rules; i++)
		if (A.rule_hits && A.pol->rules[i].name == rule)
			A.rule_hits[i]++;
	/* A limit in percent of nothing: the rest of the rule holds. */
	if ((p.mask & GPUSCHED_PARAM_MEM_LIMIT) &&
	    (p.mem_limit & GS_MEM_PCT_FLAG) && !c->pol.mem.total)
		p.mask &= ~GPUSCHED_PARAM_MEM_LIMIT;
	if (!p.mask)
		return;
	if (client_admin_set(c, &p)) {
		A.st.apply_errors++;
		logmsg("gpu%u: pid %d: rule %s not applied", c->dev->index,
		       (int)c->cred.pid, rule);
		return;
	}
	A.st.applied++;
	if (A.o->verbose)
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
	uint64_t *hits;
	char err[1024];
	struct stat st;
	bool absent = false;

	if (!A.o->config_given && stat(A.o->config, &st) && errno == ENOENT) {
		absent = true;
		pol = gs_policy_parse(A.o->config, "", 0, err, sizeof(err));
	} else {
		pol = gs_policy_load(A.o->config, err, sizeof(err));
	}
	hits = pol ? calloc(pol->nr_rules + 1, sizeof(*hits)) : NULL;
	if (!hits) {
		if (pol)
			snprintf(err, sizeof(err), "out of memory");
		gs_policy_free(pol);
		A.st.last_reload_ok = false;
		A.st.reloads_failed += reload;
		logmsg("%s%s", err, reload ? "; keeping the policy in force" : "");
		return -1;
	}
	gs_policy_free(A.pol);
	free(A.rule_hits);
	A.pol = pol;
	A.rule_hits = hits;
	A.st.last_reload_ok = true;
	A.st.last_reload_ok_time = (double)time(NULL);
	A.st.reloads_ok += reload;
	if (absent)
		logmsg("no policy file %s: defaults for every client", A.o->config);
	else
		logmsg("%s %s: %zu rules", reload ? "reloaded" : "loaded", A.o->config,
		       pol->nr_rules);
	for (d = A.devs; d; d = d->next)
		dev_apply_policy(d);
	for (c = A.clients.next; c != &A.clients; c = c->next)
		client_apply_policy(c);
	return 0;
}

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

/*
 * What the module reports of a client that the socket does not tell: its
 * command name and cgroup id (the inode of its cgroup v2 directory), read
 * once at attach. Best effort: a process in another mount or pid namespace
 * may not be found; then "?" and 0.
 */
static void proc_identify(struct arb_client *c)
{
	char path[64], line[PATH_MAX + 8], *nl;
	struct stat sb;
	FILE *f;

	strcpy(c->comm, "?");
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)c->cred.pid);
	f = fopen(path, "re");
	if (f) {
		if (fgets(line, sizeof(line), f)) {
			line[strcspn(line, "\n")] = '\0';
			line[sizeof(c->comm) - 1] = '\0';	/* TASK_COMM_LEN */
			memcpy(c->comm, line, strlen(line) + 1);
		}
		fclose(f);
	}
	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)c->cred.pid);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char dir[PATH_MAX + 32];

		if (strncmp(line, "0::/", 4))
			continue;
		nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		snprintf(dir, sizeof(dir), "/sys/fs/cgroup%s", line + 3);
		if (!stat(dir, &sb))
			c->cgroup_id = sb.st_ino;
		break;
	}
	fclose(f);
}

static void cmd_attach(struct arb_client *c, const struct gpusched_attach *a)
{
	int memfd = -1, err;
	struct arb_dev *d;
	uint64_t now;

	err = gs_pol_check_attach(a);
	if (!err && c->dev)
		err = -EBUSY;
	if (!err && c->ctl)
		err = -EISCONN;	/* a control connection is not a client */
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
	c->id = ++A.next_id;
	proc_identify(c);
	c->dprev = d->last;
	if (d->last)
		d->last->dnext = c;
	else
		d->first = c;
	d->last = c;
	gs_pol_client_init(&d->pol, &c->pol, now);
	gs_mem_attach(&c->pol, a->mem_total);
	status_sync(c, now);
	if (A.o->verbose)
		logmsg("gpu%u: pid %d uid %d attached", d->index,
		       (int)c->cred.pid, (int)c->cred.uid);
	A.st.events[0]++;
	ctl_event(GPUSCHED_CTL_EV_ATTACH, c);
	client_apply_policy(c);
out:
	reply(c, err, NULL, 0, memfd);
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
	err = gs_pol_acquire(&d->pol, &c->pol, yield,
			     a->flags & GPUSCHED_ACQUIRE_NONBLOCK, due,
			     a->gpu_ns, now, apply_cb, d);
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

	err = gs_pol_check_set_params(p);
	if (!err && !c->dev)
		err = -ENOTCONN;
	if (!err)	/* The module asks for CAP_SYS_NICE; from user space, root will do. */
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
	struct gpusched_client_info info = {
		.size = sizeof(info),
		.abi_version = GPUSCHED_ABI_VERSION,
		.features = GS_FEATURES,
	};
	struct gs_pol_client *pc = &c->pol;

	info.state = GPUSCHED_STATE_DETACHED;
	if (c->dev) {
		memcpy(info.uuid, c->dev->uuid, GPUSCHED_UUID_LEN);
		info.state = states[pc->state];
		info.weight = pc->weight;
		info.sched_class = pc->sched_class;
		info.gpu_ns = pc->gpu_ns;
		info.cap_pct = pc->cap_pct;
		info.gpu_index = c->dev->index;
		info.held_ns = gs_pol_held_now(pc, now_ns());
		info.grants = pc->grants;
		info.wait_ns_total = pc->wait_ns_total;
		info.wait_ns_max = pc->wait_ns_max;
		info.overruns = pc->overruns;
		info.yields = pc->yields;
		info.mem_reserved = pc->mem.reserved;
		info.mem_limit = gs_mem_limit(&c->dev->pol, pc);
		info.mem_refused = pc->mem.refused;
	}
	reply(c, 0, &info, sizeof(info), -1);
}

/* MEM_RESERVE or MEM_RETURN; the page shows the reservation at the reply. */
static void cmd_mem(struct arb_client *c, const struct gpusched_mem *m,
		    bool reserve)
{
	int err = gs_mem_check(m);

	if (!err && !c->dev)
		err = -ENOTCONN;
	if (!err)
		err = reserve ? gs_mem_reserve(&c->dev->pol, &c->pol, m->bytes) :
				gs_mem_return(&c->pol, m->bytes);
	if (!err)
		status_sync(c, now_ns());
	reply(c, err, NULL, 0, -1);
}

/* ------------------------------------------------------------------ */
/* What gpuschedctl and the metrics see: the module's records */

static void params_knobs(const struct gs_pol_params *p, struct gs_knob_set *ks)
{
	ks->mask = (1U << GS_NR_KNOBS) - 1;
	for (int k = 0; k < GS_NR_KNOBS; k++)
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

static uint32_t client_state(const struct arb_client *c)
{
	static const uint32_t states[] = {
		[GS_POL_IDLE] = GPUSCHED_STATE_IDLE,
		[GS_POL_WAITING] = GPUSCHED_STATE_WAITING,
		[GS_POL_HOLDING] = GPUSCHED_STATE_HOLDING,
	};

	return c->dev ? states[c->pol.state] : GPUSCHED_STATE_DETACHED;
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
}

/* The metrics page: the module's metric names, from the arbiter's state. */
static int render_metrics(void *arg, FILE *f)
{
	struct gs_metrics_data md = { .st = &A.st };
	struct gs_client_rec *cl = NULL;
	struct gs_gpu_rec *gpus = NULL;
	uint64_t now = now_ns();
	size_t nc = 0, ng = 0;

	(void)arg;
	gpus = calloc(A.nr_devs + 1, sizeof(*gpus));
	cl = calloc(A.nr_clients + 1, sizeof(*cl));
	if (!gpus || !cl) {
		free(gpus);
		free(cl);
		return -ENOMEM;
	}
	for (struct arb_dev *d = A.devs; d; d = d->next) {
		dev_snap(d, &gpus[ng++]);
		for (struct arb_client *c = d->first; c; c = c->dnext)
			client_snap(c, now, &cl[nc++]);
	}
	A.st.pol = A.pol;
	A.st.rule_hits = A.rule_hits;
	md.gpus = gpus;
	md.nr_gpus = ng;
	md.clients = cl;
	md.nr_clients = nc;
	gs_metrics_format(f, &md);
	free(gpus);
	free(cl);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Control connections (gpusched_ctl.h) */

#define CTL_CLIENTS_PER_MSG \
	((GPUSCHED_CTL_MSG_MAX - sizeof(struct gpusched_ctl_hdr)) / \
	 sizeof(struct gpusched_ctl_client))
#define CTL_GPUS_PER_MSG \
	((GPUSCHED_CTL_MSG_MAX - sizeof(struct gpusched_ctl_hdr)) / \
	 sizeof(struct gpusched_ctl_gpu))

/* What is sent, and what was received: never the same buffer. */
static union {
	struct gpusched_ctl_hdr hdr;
	char buf[GPUSCHED_CTL_MSG_MAX];
} ctl_msg;

static union {
	struct gpusched_wire_req req;
	struct gpusched_ctl_hdr hdr;
	char buf[GPUSCHED_CTL_MSG_MAX];
} in_msg;

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
static int ctl_flush(struct arb_client *c)
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
static void ctl_event(uint16_t cmd, struct arb_client *c)
{
	struct gpusched_ctl_client *w = (void *)(ctl_msg.buf + sizeof(ctl_msg.hdr));
	struct gs_client_rec r;
	bool snapped = false;

	for (struct arb_client *s = A.clients.next; s != &A.clients; s = s->next) {
		if (!s->subscribed || s->fd < 0 || s->ev_lost)
			continue;
		if (!snapped) {
			client_snap(c, now_ns(), &r);
			snapped = true;
		}
		/* ctl_send() writes the header over the same buffer only. */
		client_wire(&r, w);
		if (ctl_send(s, cmd, 0, 0, 0, sizeof(*w), 1)) {
			/* Never closed here: callers walk the client list. */
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
	/* The ranges of the module's netlink policy: one table, knobs.c. */
	for (k = 0; k < GS_NR_KNOBS; k++)
		if ((a->mask & (1U << k)) &&
		    (a->val[k] < gs_knobs[k].min || a->val[k] > gs_knobs[k].max))
			return -ERANGE;
	for (d = A.devs; d && d->index != a->index; d = d->next)
		;
	if (!d)
		return -ENODEV;
	p = d->pol.p;
	for (k = 0; k < GS_NR_KNOBS; k++)
		if (a->mask & (1U << k))
			gs_pol_knob_set(&p, &gs_pol_knobs[k], a->val[k]);
	now = now_ns();
	if (gs_pol_set_dev_params(&d->pol, &p, now, &fx))
		return -EINVAL;
	d->knobs_set = true;
	apply(d, &fx, now);
	for (struct arb_client *c = d->first; c; c = c->dnext)
		status_sync(c, now);	/* the grace time is on every page */
	logmsg("gpu%u: knobs set by gpuschedctl", d->index);
	return 0;
}

static int ctl_set_client(const struct gpusched_ctl_set_client *a)
{
	const struct gpusched_params *p = &a->params;
	int matched = 0, err = 0;

	if ((a->flags & ~GPUSCHED_CTL_F_ALL) || (p->mask & ~GS_PARAM_MASK))
		return -EOPNOTSUPP;
	if (a->reserved || p->reserved[0] || !p->mask ||
	    (!a->id && !a->pid))
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
			if ((a->id && c->id != a->id) ||
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

static void ctl_request(struct arb_client *c, size_t n, bool trunc)
{
	const struct gpusched_ctl_hdr *h = &in_msg.hdr;
	const void *arg = in_msg.buf + sizeof(*h);
	struct ctl_out *o = &c->out;
	bool admin = c->cred.uid == 0;
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

static void on_request(struct arb_client *c)
{
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int) * 8)];
	} cbuf;
	struct gpusched_wire_req *req = &in_msg.req;
	struct iovec iov = { .iov_base = in_msg.buf, .iov_len = sizeof(in_msg.buf) };
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
	if ((size_t)n >= sizeof(in_msg.hdr.magic) &&
	    in_msg.hdr.magic == GPUSCHED_CTL_MAGIC) {
		ctl_request(c, (size_t)n, msg.msg_flags & MSG_TRUNC);
		return;
	}
	if (n != sizeof(*req) || (msg.msg_flags & MSG_TRUNC) ||
	    req->magic != GPUSCHED_WIRE_MAGIC) {
		reply(c, -EPROTO, NULL, 0, -1);
		return;
	}

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
		cmd_get_info(c);
		break;
	case GPUSCHED_IOC_MEM_RESERVE:
	case GPUSCHED_IOC_MEM_RETURN:
		cmd_mem(c, (const void *)req->arg, req->cmd == GPUSCHED_IOC_MEM_RESERVE);
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
		struct arb_dev *d = c->dev;
		uint64_t now = now_ns();

		A.st.events[1]++;
		ctl_event(GPUSCHED_CTL_EV_DETACH, c);
		if (c->dprev)
			c->dprev->dnext = c->dnext;
		else
			d->first = c->dnext;
		if (c->dnext)
			c->dnext->dprev = c->dprev;
		else
			d->last = c->dprev;
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

/* Out of descriptors: how often to say so. */
#define ACCEPT_WARN_NS	(60 * 1000000000ull)

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
		 * has passed. Say so at most once a minute: at the limit every
		 * client that leaves lets one more in, and the next accept
		 * fails again.
		 */
		if (!A.accept_warned_ns ||
		    now_ns() - A.accept_warned_ns >= ACCEPT_WARN_NS) {
			logmsg("accept: %s; not accepting connections until a client leaves (%u connected)",
			       strerror(errno), A.nr_clients);
			A.accept_warned_ns = now_ns();
		}
		accept_pause(true);
		return;
	}
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

/*
 * --rt-priority: every hand-over passes through this process (the holder's
 * release, then the grant to the next), and a wake-up of it can wait for
 * another task's time on the CPU (up to 3.5 ms on the H200's host).
 * At a real-time priority it runs at once.
 * It sleeps between requests (unless --poll-us), so it takes no CPU time
 * from others; children, if any, start at the normal policy.
 */
static int set_rt(unsigned int prio)
{
	struct sched_param sp = { .sched_priority = (int)prio };

	if (sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK, &sp)) {
		logmsg("--rt-priority %u: %s%s", prio, strerror(errno),
		       errno == EPERM ? " (needs CAP_SYS_NICE)" : "");
		return -1;
	}
	return 0;
}

int arbiter_run(const struct arb_options *o)
{
	struct epoll_event evs[64];
	sigset_t mask;
	int status = 1;
	bool stop = false;

	A.o = o;
	A.started_ns = now_ns();
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
	if (o->rt_priority && set_rt(o->rt_priority))
		goto out;
	if (listen_socket(o->socket_path))
		goto out;
	if (add_fd(A.lfd, &A.lfd) || add_fd(A.sfd, &A.sfd) || add_fd(A.tfd, &A.tfd)) {
		logmsg("epoll_ctl: %s", strerror(errno));
		goto out_unlink;
	}
	if (o->metrics_addr) {
		char err[512];

		A.metrics = gs_metrics_open(o->metrics_addr, render_metrics, NULL,
					    err, sizeof(err));
		if (!A.metrics) {
			logmsg("%s", err);
			goto out_unlink;
		}
		if (add_fd(gs_metrics_fd(A.metrics), &A.metrics)) {
			logmsg("epoll_ctl: %s", strerror(errno));
			goto out_unlink;
		}
		logmsg("metrics on http://%s/metrics", o->metrics_addr);
	}
	logmsg("arbiter listening on %s (slice %llu us, grace %llu us)",
	       o->socket_path, (unsigned long long)(o->params.slice_ns / 1000),
	       (unsigned long long)(o->params.grace_ns / 1000));

	while (!stop) {
		/* --poll-us: soon after a request, look without sleeping
		 * (the next of a hand-over then needs no wake-up). Paused:
		 * try again in a second (ENFILE is system-wide).
		 */
		bool polling = o->poll_ns && now_ns() < A.poll_until;
		int n = epoll_wait(A.epfd, evs, 64, polling ? 0 :
				   A.accept_paused ? 1000 : -1);

		if (n > 0 && o->poll_ns)
			A.poll_until = now_ns() + o->poll_ns;
		if (n == 0 && polling)
			continue;

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
			} else if (p == &A.metrics) {
				gs_metrics_dispatch(A.metrics);
			} else if (p == &A.sfd) {
				struct signalfd_siginfo si;

				while (read(A.sfd, &si, sizeof(si)) == sizeof(si)) {
					if (si.ssi_signo == SIGHUP) {
						policy_load(true);
						continue;
					}
					logmsg("signal %u: exiting (%.3f s of CPU in %.1f s)",
					       si.ssi_signo, cpu_s(),
					       (now_ns() - A.started_ns) / 1e9);
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
				if ((e & EPOLLOUT) && ctl_flush(c)) {
					client_close(c, NULL);
					continue;
				}
				if ((e & EPOLLIN) && !c->out.active)
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
	gs_metrics_close(A.metrics);
	A.metrics = NULL;
	free(A.rule_hits);
	A.rule_hits = NULL;
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
