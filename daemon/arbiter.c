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
 * order of requests (the wire format has no request id). A client's memory
 * calls come on a second connection, its memory channel (arbiter_wire.h),
 * which is never parked. A closed connection is a closed file: release,
 * and remove the client.
 *
 * This file: the event loop, the connections (each one's first request
 * tells a client, arbiter_token.c, from gpuschedctl, arbiter_ctl.c), the
 * timer and the policy file. The listening socket: arbiter_socket.c.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "arbiter_int.h"
#include "gpusched_ctl.h"
#include "labels.h"
#include "policyfile.h"
#include "policyload.h"
#include "rules.h"

/* Out of descriptors, or a user at its connections: how often to say so. */
#define ACCEPT_WARN_NS		(60 * 1000000000ull)
/*
 * A connection's first request comes at once (the library's ATTACH or
 * BIND, gpuschedctl's request); one idle this long only holds a descriptor.
 */
#define FIRST_REQUEST_NS	(5 * 1000000000ull)

struct arb_state A;

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void accept_pause(bool pause)
{
	struct epoll_event ev = { .events = pause ? 0 : EPOLLIN, .data.ptr = &A.lfd };

	if (A.accept_paused == pause)
		return;
	if (epoll_ctl(A.epfd, EPOLL_CTL_MOD, A.lfd, &ev))
		gs_log(LOG_ERR, "epoll_ctl: %s", strerror(errno));
	else
		A.accept_paused = pause;
}

/*
 * A parked request or a reply not sent whole leaves the connection's next
 * requests unread (replies keep the order of requests); then only the
 * peer going away, or room to send, is of interest.
 */
void watch_update(struct arb_client *c)
{
	struct epoll_event ev = { .events = EPOLLRDHUP, .data.ptr = c };

	if (c->closed)
		return;	/* out of the epoll set */
	if (!c->parked && !c->out.active && !c->attach_held)
		ev.events |= EPOLLIN;
	if (c->out.active || c->ev_lost)
		ev.events |= EPOLLOUT;
	epoll_ctl(A.epfd, EPOLL_CTL_MOD, c->fd, &ev);
}

/* Our CPU time, in s: what polling costs (--poll-us). */
static double cpu_s(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts))
		return 0;
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * Arm the timer for the earliest policy event, parked request's deadline
 * or first request due.
 */
static void rearm(void)
{
	uint64_t now = now_ns(), next = GS_POL_NEVER;
	struct itimerspec its = { 0 };

	for (struct arb_dev *d = A.devs; d; d = d->next) {
		uint64_t t = gs_pol_next_event(&d->pol, now);

		if (t < next)
			next = t;
	}
	for (struct arb_client *c = A.clients.next; c != &A.clients; c = c->next) {
		if (c->parked && c->deadline && c->deadline < next)
			next = c->deadline;
		if (c->idle_deadline && c->idle_deadline < next)
			next = c->idle_deadline;
		if (c->attach_held && c->attach_deadline < next)
			next = c->attach_deadline;
	}
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

void on_timer(void)
{
	uint64_t expirations, now = now_ns();
	struct arb_client *c;

	if (read(A.tfd, &expirations, sizeof(expirations)) < 0 && errno != EAGAIN)
		gs_log(LOG_ERR, "timerfd: %s", strerror(errno));
	if (A.metrics)
		gs_metrics_dispatch(A.metrics);	/* drops peers that timed out */
	for (struct arb_dev *d = A.devs; d; d = d->next) {
		struct gs_pol_effects fx = { 0 };

		gs_pol_tick(&d->pol, now, &fx);
		apply(d, &fx, now);
	}
	/* Replies close no client here (client_close() only marks it). */
	for (c = A.clients.next; c != &A.clients; c = c->next) {
		if (c->idle_deadline && c->idle_deadline <= now) {
			gs_log(LOG_DEBUG, "pid %d uid %d: no request in %llu s: closed",
			       (int)c->cred.pid, (int)c->cred.uid,
			       FIRST_REQUEST_NS / 1000000000ull);
			client_close(c, NULL);
			continue;
		}
		if (c->attach_held && !c->closed && c->attach_deadline <= now) {
			gs_log_limited(LOG_WARNING, "gpu%u: pid %d: its environment was not read within %llu ms: attached without its label",
				       c->dev->index, (int)c->cred.pid,
				       LABEL_WAIT_NS / 1000000ull);
			attach_answer(c);
			continue;
		}
		if (c->parked && c->deadline && c->deadline <= now &&
		    c->pol.state == GS_POL_WAITING) {
			struct gs_pol_effects fx = { 0 };

			gs_pol_cancel_wait(&c->dev->pol, &c->pol, now, &fx);
			apply(c->dev, &fx, now);
			park(c, false);
			reply(c, -ETIMEDOUT, NULL, 0, -1);
		}
	}
}

/* ------------------------------------------------------------------ */
/* The policy file */

/* The knobs the policy file gives @d, over the command line's defaults. */
void dev_apply_policy(struct arb_dev *d)
{
	struct gs_pol_effects fx = { 0 };
	struct gs_pol_params p = A.o->params;
	uint64_t now = now_ns();

	if (A.pol)
		gs_policy_gpu_params(A.pol, d->uuid, &p);
	if (gs_pol_set_dev_params(&d->pol, &p, now, &fx))
		gs_log(LOG_WARNING, "gpu%u: the policy's knobs are out of range; keeping the defaults",
		       d->index);
	apply(d, &fx, now);
}


/*
 * An administrator's change (a rule, gpuschedctl): a memory limit in
 * percent (GS_MEM_PCT_FLAG) resolves against the client's own mem_total,
 * -EINVAL if it reported none, as GPUSCHED_A_CLIENT_MEM_LIMIT_PCT does.
 */
int client_admin_set(struct arb_client *c, const struct gpusched_params *p)
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
static void client_apply_rule(struct arb_client *c)
{
	struct gpusched_params p = { 0 };
	const char *rule = NULL;

	if (!A.pol || !c->dev ||
	    gs_rules_classify(A.pol, c->cred.pid, c->cred.uid, c->cred.gid,
			      c->label_state == ARB_LABEL_READ ? c->label : NULL,
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
		gs_log(LOG_ERR, "gpu%u: pid %d: rule %s not applied", c->dev->index,
		       (int)c->cred.pid, rule);
		return;
	}
	A.st.applied++;
	gs_log(LOG_DEBUG, "gpu%u: pid %d: rule %s applied", c->dev->index,
	       (int)c->cred.pid, rule);
}

/*
 * mem_admission (gpusched.conf(5)): would @c's limit push the sum of the
 * limits on its GPU past the GPU's memory less the reserve? The memory is
 * what @c reported; clients that reported none take no part. Decided once,
 * when @c first gets its policy; a reload applies the decision again after
 * the rules, so that no rule undoes it.
 */
static void client_admit(struct arb_client *c)
{
	struct gs_pol_dev *pd = &c->dev->pol;
	uint64_t total = c->pol.mem.total, others = 0, limit;
	struct gpusched_params p = { 0 };
	enum gs_mem_admit mode;
	char text[160];

	if (c->admit == GS_ADMIT_UNSET) {
		c->admit = GS_ADMIT_OFF;
		mode = A.pol ? gs_policy_gpu_admit(A.pol, c->dev->uuid) : GS_ADMIT_OFF;
		if (mode == GS_ADMIT_OFF || !total)
			return;
		for (struct arb_client *o = c->dev->first; o; o = o->dnext)
			if (o != c && o->pol.mem.total)
				others = gs_mem_admit_add(others, total, pd->p.mem_reserve,
							  gs_mem_limit(pd, &o->pol));
		limit = gs_mem_limit(pd, &c->pol);
		if (!gs_mem_admit_over(total, pd->p.mem_reserve, others, limit))
			return;
		c->admit = mode;
		A.st.admit_refused += mode == GS_ADMIT_REFUSE;
		A.st.admit_batch += mode == GS_ADMIT_BATCH;
		gs_mem_admit_text(text, sizeof(text), mode, total,
				  pd->p.mem_reserve, others, limit);
		gs_log(LOG_WARNING, "gpu%u: pid %d: %s", c->dev->index,
		       (int)c->cred.pid, text);
	}
	gs_mem_admit_params(c->admit, &p);
	if (p.mask && client_set(c, &p, true))
		gs_log(LOG_ERR, "gpu%u: pid %d: mem_admission not applied",
		       c->dev->index, (int)c->cred.pid);
}

bool client_label_due(struct arb_client *c)
{
	if (gs_policy_matches_labels(A.pol) && c->label_state == ARB_LABEL_UNREAD)
		c->label_state = gs_labels_want(c->id, c->cred.pid, c->cred.uid,
						c->start) ?
				 ARB_LABEL_READING : ARB_LABEL_NONE;
	return c->label_state == ARB_LABEL_READING;
}

void client_apply_policy(struct arb_client *c)
{
	if (!c->dev)
		return;
	/* Its label, when a rule needs it, comes later: label_got(). */
	client_label_due(c);
	client_apply_rule(c);
	client_admit(c);
}

void label_got(uint64_t id, const char *label)
{
	struct arb_client *c;

	for (c = A.clients.next; c != &A.clients; c = c->next)
		if (c->id == id && c->dev)
			break;
	if (c == &A.clients || c->closed || c->label_state != ARB_LABEL_READING)
		return;
	c->label_state = label ? ARB_LABEL_READ : ARB_LABEL_NONE;
	snprintf(c->label, sizeof(c->label), "%s", label ? label : "");
	if (c->attach_held)
		attach_answer(c);
	else if (label)
		client_apply_policy(c);	/* after LABEL_WAIT_NS: as a reload */
}

void attach_answer(struct arb_client *c)
{
	c->attach_held = false;
	client_apply_policy(c);
	reply(c, 0, &c->held_att, sizeof(c->held_att), c->held_memfd);
	close(c->held_memfd);
	c->held_memfd = -1;
	watch_update(c);
}

/*
 * Read the policy file. At start an error is fatal; on SIGHUP it keeps the
 * policy in force. A missing file at the default path means no rules.
 */
static int policy_load(bool reload)
{
	const struct gs_policy_source src = {
		.path = A.o->config, .given = A.o->config_given,
		.absent = "defaults for every client",
	};
	struct arb_client *c;
	struct arb_dev *d;

	if (gs_policy_reload(&src, reload, &A.pol, &A.rule_hits, &A.st))
		return -1;
	for (d = A.devs; d; d = d->next)
		dev_apply_policy(d);
	for (c = A.clients.next; c != &A.clients; c = c->next)
		if (!c->closed)
			client_apply_policy(c);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Connections */

/* What was received: never the buffer sent (arbiter_ctl.c's). */
static union {
	struct gpusched_wire_req req;
	struct gpusched_ctl_hdr hdr;
	char buf[GPUSCHED_CTL_MSG_MAX];
} in_msg;

/*
 * Has the peer of @fd shut down its side? recvmsg() gives 0 at the end of
 * a connection only once it has (the socket's RCV_SHUTDOWN, which poll()
 * shows as POLLRDHUP), and 0 for an empty message otherwise.
 */
static bool hung_up(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLRDHUP };
	int n = poll(&p, 1, 0);

	return n < 0 || (n > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)));
}

void on_request(struct arb_client *c)
{
	struct gpusched_wire_req *req = &in_msg.req;
	struct iovec iov = { .iov_base = in_msg.buf, .iov_len = sizeof(in_msg.buf) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct msghdr peek = { 0 };
	ssize_t n;

	/*
	 * Nobody is meant to send us descriptors, and reading a message that
	 * carries some would make us their last holder (arbiter_closer.c):
	 * such a message stays on the queue and the connection is closed. A
	 * peek with no room for them tells (MSG_CTRUNC), and drops only
	 * references of its own. Where the kernel refuses them for us
	 * (SO_PASSRIGHTS), none can come.
	 */
	if (!A.rights_refused) {
		n = recvmsg(c->fd, &peek, MSG_PEEK | MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (n >= 0 && (peek.msg_flags & MSG_CTRUNC)) {
			client_close(c, "sent descriptors");
			return;
		}
	}
	n = recvmsg(c->fd, &msg, MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	/* 0 is the end, or an empty message: a request of the wrong size. */
	if (n < 0 || (n == 0 && hung_up(c->fd))) {
		client_close(c, n ? strerror(errno) : NULL);
		return;
	}
	c->idle_deadline = 0;
	if (!c->owner && (size_t)n >= sizeof(in_msg.hdr.magic) &&
	    in_msg.hdr.magic == GPUSCHED_CTL_MAGIC) {
		ctl_request(c, in_msg.buf, (size_t)n, msg.msg_flags & MSG_TRUNC);
		return;
	}
	if (n != sizeof(*req) || (msg.msg_flags & MSG_TRUNC) ||
	    req->magic != GPUSCHED_WIRE_MAGIC) {
		reply(c, -EPROTO, NULL, 0, -1);
		return;
	}
	if (c->owner)
		chan_request(c, req);
	else
		token_request(c, req);
}

void client_close(struct arb_client *c, const char *why)
{
	if (c->closed)
		return;
	c->closed = true;
	if (why)
		snprintf(c->why, sizeof(c->why), "%s", why);
	epoll_ctl(A.epfd, EPOLL_CTL_DEL, c->fd, NULL);
	c->parked = false;
	c->idle_deadline = 0;
	c->close_next = A.closing;
	A.closing = c;
	/* A client's memory channel goes with it; a channel, alone. */
	if (c->chan)
		client_close(c->chan, NULL);
}

void client_reap(struct arb_client *c)
{
	if (c->chan)
		c->chan->owner = NULL;
	if (c->owner)
		c->owner->chan = NULL;
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
		gs_pol_client_exit(&d->pol, &c->pol, now, &fx);
		uid_put(&d->uids, c->cred.uid);
		/*
		 * With a reason, limited (a client chooses to fail its replies,
		 * and may attach again); a plain close with --verbose.
		 */
		if (c->why[0])
			gs_log_limited(LOG_INFO, "gpu%u: pid %d detached: %s",
				       d->index, (int)c->cred.pid, c->why);
		else
			gs_log(LOG_DEBUG, "gpu%u: pid %d detached", d->index,
			       (int)c->cred.pid);
		/* May grant, and a failed reply close another: A.closing. */
		apply(d, &fx, now);
	}
	if (c->attach_held)
		close(c->held_memfd);
	if (c->label_state == ARB_LABEL_READING)
		gs_labels_forget(c->id);
	if (c->page) {
		c->pol.page = NULL;	/* the policy's pointer to it too */
		munmap(c->page, GPUSCHED_STATUS_SIZE);
		c->page = NULL;
	}
	c->prev->next = c->next;
	c->next->prev = c->prev;
	A.nr_clients--;
	closer_put(c);
}

void conn_release(struct arb_client *c)
{
	uid_put(&A.conn_uids, c->cred.uid);
	if (c->cred.uid)
		A.users_conns--;
	free(c);
	accept_pause(false);	/* a descriptor is free again */
}

/*
 * Close a connection that was not taken (@c not on A.clients): it counts
 * against its user until its descriptor is closed, as every connection
 * does (arbiter_closer.c), beyond the limit it was refused for.
 */
static void conn_drop(struct arb_client *c)
{
	if (uid_get(&A.conn_uids, c->cred.uid, 0, true)) {
		close(c->fd);	/* out of memory */
		free(c);
		return;
	}
	if (c->cred.uid)
		A.users_conns++;
	closer_put(c);
}

void reap_closed(void)
{
	while (A.closing) {
		struct arb_client *c = A.closing;

		A.closing = c->close_next;
		client_reap(c);
	}
}

/*
 * A user's connections (root's are not limited): as many as its clients
 * may need, each with its memory channel, on every token (--max-gpus x
 * --max-clients-per-uid x 2), and never more than half the descriptors,
 * so that one user cannot take them all. 0 (no client limit): none.
 */
static unsigned int conn_limit(void)
{
	uint64_t n = 2ull * A.o->max_gpus * A.o->max_clients_per_uid;
	struct rlimit rl;

	if (!n)
		return 0;
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur != RLIM_INFINITY &&
	    rl.rlim_cur / 2 < n)
		n = rl.rlim_cur / 2 ? rl.rlim_cur / 2 : 1;
	return n > UINT_MAX ? UINT_MAX : (unsigned int)n;
}

/*
 * All users' connections but root's together: three quarters of the
 * descriptors, so that many users (or one with many uids, as a user
 * namespace's subordinate ids give) cannot take them all and root, an
 * administrator's gpuschedctl, still connects. 0 (no limit on
 * descriptors): none.
 */
static unsigned int users_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur == RLIM_INFINITY)
		return 0;
	rl.rlim_cur -= rl.rlim_cur / 4;
	return rl.rlim_cur > UINT_MAX ? UINT_MAX : (unsigned int)rl.rlim_cur;
}

/* Refuse a connection at a limit: each limit said once a minute. */
static void conn_refuse(const struct arb_client *c, int err)
{
	uint64_t *warned = err == -ENFILE ? &A.users_warned_ns : &A.conn_warned_ns;
	uint64_t now = now_ns();

	if (*warned && now - *warned < ACCEPT_WARN_NS)
		return;
	*warned = now;
	if (err == -EUSERS)
		gs_log(LOG_WARNING, "uid %d has %u connections, the most one user may have: closing its next ones (pid %d)",
		       (int)c->cred.uid, A.conn_limit, (int)c->cred.pid);
	else if (err == -ENFILE)
		gs_log(LOG_WARNING, "users other than root have %u connections, the most they may have together (three quarters of the descriptors): closing their next ones (uid %d, pid %d)",
		       A.users_conns, (int)c->cred.uid, (int)c->cred.pid);
	else
		gs_log(LOG_ERR, "accept: %s", strerror(-err));
}

/* The contents of @path, NUL-terminated, in @buf of @size; false: none. */
static bool read_small(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f)
		return false;
	n = fread(buf, 1, size - 1, f);
	fclose(f);
	buf[n] = '\0';
	return n > 0;
}

/*
 * The effective capabilities of process @pid (a peer that just connected),
 * as the module would judge it: capable() looks at the capabilities in the
 * initial user namespace, and only a process in ours has them here. A
 * container's root in a user namespace of its own has a uid map of its
 * own (world-readable, as /proc/PID/status is, where /proc/PID/ns needs
 * ptrace access); one with the same map as ours was made by whoever may
 * map every uid, so is as good as ours. A rootful container's root is in
 * ours, without CAP_SYS_NICE or CAP_NET_ADMIN unless given them. 0 where
 * it cannot be read (the peer already gone).
 */
static uint64_t peer_caps(pid_t pid)
{
	char path[64], ours[512], theirs[512], status[4096], *p;
	unsigned long long v;

	snprintf(path, sizeof(path), "/proc/%d/uid_map", (int)pid);
	if (!read_small("/proc/self/uid_map", ours, sizeof(ours)) ||
	    !read_small(path, theirs, sizeof(theirs)) || strcmp(ours, theirs))
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (!read_small(path, status, sizeof(status)))
		return 0;
	p = strstr(status, "\nCapEff:");
	if (!p || sscanf(p + 8, "%llx", &v) != 1)
		return 0;
	return v;
}

static void on_accept(void)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP };
	socklen_t len = sizeof(struct ucred);
	struct arb_client *c;
	int fd, err;

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
			gs_log(LOG_WARNING, "accept: %s; not accepting connections until a client leaves (%u connected)",
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
		gs_log(LOG_ERR, "SO_PEERCRED: %s", strerror(errno));
		close(fd);
		free(c);
		return;
	}
	c->caps = peer_caps(c->cred.pid);
	c->start = gs_proc_start(c->cred.pid);
	/* Gone already (not merely hidden from us): no ATTACH for it. */
	if (!c->start && c->cred.pid > 0 && kill(c->cred.pid, 0) &&
	    errno == ESRCH)
		c->start = ARB_START_GONE;
	err = uid_get(&A.conn_uids, c->cred.uid, A.conn_limit, c->cred.uid == 0);
	if (!err && c->cred.uid && A.users_limit && A.users_conns >= A.users_limit) {
		uid_put(&A.conn_uids, c->cred.uid);
		err = -ENFILE;
	}
	if (err) {
		conn_refuse(c, err);
		conn_drop(c);
		return;
	}
	ev.data.ptr = c;
	if (epoll_ctl(A.epfd, EPOLL_CTL_ADD, fd, &ev)) {
		gs_log(LOG_ERR, "epoll_ctl: %s", strerror(errno));
		uid_put(&A.conn_uids, c->cred.uid);
		conn_drop(c);
		return;
	}
	if (c->cred.uid)
		A.users_conns++;
	c->idle_deadline = now_ns() + FIRST_REQUEST_NS;
	c->next = &A.clients;
	c->prev = A.clients.prev;
	A.clients.prev->next = c;
	A.clients.prev = c;
	A.nr_clients++;
}

static int add_fd(int fd, void *ptr)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = ptr };

	return epoll_ctl(A.epfd, EPOLL_CTL_ADD, fd, &ev);
}

/*
 * One descriptor per connection (two per library client, with its memory
 * channel): allow as many as the hard limit does.
 */
static void raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur >= rl.rlim_max)
		return;
	rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl))
		gs_log(LOG_WARNING, "cannot raise the descriptor limit: %s", strerror(errno));
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
		gs_log(LOG_ERR, "--rt-priority %u: %s%s", prio, strerror(errno),
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
	gs_log_init("gpuschedd", o->verbose ? LOG_DEBUG : LOG_INFO);
	A.started_ns = now_ns();
	A.lfd = A.sfd = A.tfd = A.epfd = A.cfd = A.lblfd = -1;
	raise_nofile();
	A.conn_limit = conn_limit();	/* after raise_nofile() */
	A.users_limit = users_limit();
	A.clients.next = A.clients.prev = &A.clients;
	A.future_write_seal = probe_future_write_seal();
	if (!A.future_write_seal)
		gs_log(LOG_WARNING, "this kernel has no F_SEAL_FUTURE_WRITE: clients could map their status page writable (harmless to others)");

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
		gs_log(LOG_ERR, "setup: %s", strerror(errno));
		goto out;
	}
	/* After sigprocmask(): the threads' signals are blocked too. */
	A.cfd = closer_start();
	A.lblfd = gs_labels_init();
	if (A.cfd < 0 || A.lblfd < 0)
		goto out;
	if (policy_load(false))
		goto out;
	if (o->rt_priority && set_rt(o->rt_priority))
		goto out;
	if (listen_socket(o->socket_path))
		goto out;
	if (add_fd(A.lfd, &A.lfd) || add_fd(A.sfd, &A.sfd) || add_fd(A.tfd, &A.tfd) ||
	    add_fd(A.cfd, &A.cfd) || add_fd(A.lblfd, &A.lblfd)) {
		gs_log(LOG_ERR, "epoll_ctl: %s", strerror(errno));
		goto out_unlink;
	}
	if (o->metrics_addr) {
		char err[512];

		A.metrics = gs_metrics_open(o->metrics_addr, gs_metrics_page_render,
					    &arb_metrics_page, err, sizeof(err));
		if (!A.metrics) {
			gs_log(LOG_ERR, "%s", err);
			goto out_unlink;
		}
		if (add_fd(gs_metrics_fd(A.metrics), &A.metrics)) {
			gs_log(LOG_ERR, "epoll_ctl: %s", strerror(errno));
			goto out_unlink;
		}
		gs_log(LOG_INFO, "metrics on http://%s/metrics", o->metrics_addr);
	}
	gs_log(LOG_NOTICE, "arbiter listening on %s (slice %llu us, grace %llu us)",
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
			gs_log(LOG_ERR, "epoll_wait: %s", strerror(errno));
			goto out_unlink;
		}
		for (int i = 0; i < n; i++) {
			void *p = evs[i].data.ptr;

			if (p == &A.lfd) {
				on_accept();
			} else if (p == &A.tfd) {
				on_timer();
			} else if (p == &A.cfd) {
				closer_reap();
			} else if (p == &A.lblfd) {
				gs_labels_reap(label_got);
			} else if (p == &A.metrics) {
				gs_metrics_dispatch(A.metrics);
			} else if (p == &A.sfd) {
				struct signalfd_siginfo si;

				while (read(A.sfd, &si, sizeof(si)) == sizeof(si)) {
					if (si.ssi_signo == SIGHUP) {
						policy_load(true);
						continue;
					}
					gs_log(LOG_NOTICE, "signal %u: exiting (%.3f s of CPU in %.1f s)",
					       si.ssi_signo, cpu_s(),
					       (now_ns() - A.started_ns) / 1e9);
					stop = true;
				}
			} else {
				struct arb_client *c = p;
				uint32_t e = evs[i].events;

				/* Closed earlier in this batch (a failed reply
				 * closes the client replied to): not read again.
				 */
				if (c->closed)
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
		reap_closed();
		rearm();
	}
	status = 0;
out_unlink:
	for (struct arb_client *c = A.clients.next; c != &A.clients; c = c->next)
		client_close(c, NULL);
	reap_closed();
	unlink_ours(o->socket_path);
out:
	closer_stop();
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
