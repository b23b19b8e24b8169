// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the arbiter's wire protocol (daemon/arbiter*.c).
 *
 * Request handling is not a function of bytes alone: on_request() reads a
 * connection with recvmsg(), dispatches to the command handlers, which
 * change the arbiter's state (devices, clients, the policy) and answer
 * with sendmsg() on the same connection. So the arbiter is linked into
 * this program (its state and handlers are in arbiter_int.h), and each
 * input drives up to three clients, root and not, over real socket pairs: well-formed requests with fuzzed contents, raw
 * messages of any length, timer ticks and disconnects. Every reply must be
 * one whole struct gpusched_wire_rep with the magic, 0 or a -errno, and a
 * GET_INFO that holds nothing but in-range values; descriptors that come
 * with a reply are closed here. At most one client holds a GPU's token at
 * any time (one-holder.h): a client is inside from the reply that grants it
 * until it sends anything that may give the token back; two found inside
 * at once are two holders if the RELEASEs that end both succeed (a tick
 * may have revoked one), and a RELEASE refused needs a revocation. Raw
 * messages that start with the control protocol's magic (gpusched_ctl.h)
 * get control replies: whole messages whose last has GPUSCHED_CTL_F_DONE.
 *
 * Input: records of [op] [bytes...]; op bits 0-1: client, bits 2-3: kind
 * (0 request: [cmd selector] [len] [arg...], a selector below 0xe0 the
 * token commands, 0xe0-0xef MEM_RESERVE (even) and MEM_RETURN (odd), from
 * 0xf0 up followed by a raw 4-byte command; 1 raw: [len] [bytes]; 2 tick;
 * 3 disconnect and reconnect).
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "arbiter_int.h"
#include "gpusched_ctl.h"
#include "policyfile.h"
#include "one-holder.h"

#define NR_CLIENTS	3

static struct arb_options opts;
static struct arb_client *cl[NR_CLIENTS];
static int peer[NR_CLIENTS] = { -1, -1, -1 };

/*
 * The commands sent on each connection and not answered yet, oldest
 * first: the arbiter answers in request order (the wire format has no
 * request id), so each reply belongs to the oldest. 0: not a command.
 */
#define MAX_PENDING	4096
static struct pending {
	unsigned int cmd[MAX_PENDING];
	int judge[MAX_PENDING];		/* a RELEASE that ends a section: its GPU */
	unsigned int head, tail;
} pend[NR_CLIENTS];

static void pending_push(int i, unsigned int cmd, int judge)
{
	if (pend[i].tail - pend[i].head < MAX_PENDING) {
		pend[i].judge[pend[i].tail % MAX_PENDING] = judge;
		pend[i].cmd[pend[i].tail++ % MAX_PENDING] = cmd;
	}
}

/* Per GPU index (opts.max_gpus); a slot per client. */
#define NR_GPUS		4
static struct gs_holders hold[NR_GPUS];
static int inside[NR_CLIENTS] = { -1, -1, -1 };	/* the GPU, or -1 */

/* Client @i leaves its critical section, if in one; the GPU, or -1. */
static int leave(int i)
{
	int gpu = inside[i];

	if (gpu >= 0)
		gs_hold_leave(&hold[gpu], i);
	inside[i] = -1;
	return gpu;
}

/* A reply granted client @i the token. */
static void enter(int i)
{
	int gpu = cl[i] && cl[i]->dev ? (int)cl[i]->dev->index : -1;

	leave(i);
	if (gpu < 0 || gpu >= NR_GPUS)
		return;
	gs_hold_enter(&hold[gpu], i, true);
	inside[i] = gpu;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void setup(void)
{
	gs_pol_default_params(&opts.params);
	opts.params.grace_ns = 1000000;		/* 1 ms: revocations happen */
	opts.params.slice_ns = 100000;
	opts.max_gpus = 4;
	opts.socket_path = "unused";
	A.o = &opts;
	{
		/* Rules by uid (no /proc needed) and knobs: their paths run too. */
		static const char conf[] =
			"[gpu]\ntimeslice_us = 200\n"
			"[rule nobody-ish]\nuser = 1001\nweight = 50\nclass = batch\n"
			"[rule rest]\ncap = 90\n";
		char err[256];

		A.pol = gs_policy_parse("lf-arbiter.conf", conf, sizeof(conf) - 1,
				       err, sizeof(err));
		if (!A.pol)
			abort();
	}
	A.lfd = A.sfd = -1;
	A.clients.next = A.clients.prev = &A.clients;
	A.epfd = epoll_create1(EPOLL_CLOEXEC);
	A.tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	A.future_write_seal = probe_future_write_seal();
	signal(SIGPIPE, SIG_IGN);
	if (A.epfd < 0 || A.tfd < 0)
		abort();
}

/* A new connection for client @i, as on_accept() makes one. */
static void connect_client(int i)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP };
	struct arb_client *c = calloc(1, sizeof(*c));
	int sv[2];

	if (!c || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC,
			     0, sv))
		abort();
	c->fd = sv[0];
	c->cred.pid = 1000 + i;
	c->cred.uid = i == 0 ? 0 : 1000 + i;
	c->caps = i == 0 ? ~0ull : 0;		/* root may raise its share */
	c->cred.gid = c->cred.uid;
	ev.data.ptr = c;
	epoll_ctl(A.epfd, EPOLL_CTL_ADD, c->fd, &ev);
	c->next = &A.clients;
	c->prev = A.clients.prev;
	A.clients.prev->next = c;
	A.clients.prev = c;
	cl[i] = c;
	peer[i] = sv[1];
	pend[i].head = pend[i].tail = 0;
}

/*
 * As the event loop does after a batch (reap_closed()), one client at a
 * time, so that the closed ones, the arbiter's own (a reply it could not
 * send) among them, leave the model as they go: taking one down may
 * grant, and close another.
 */
static void reap(void)
{
	while (A.closing) {
		struct arb_client *z = A.closing;

		A.closing = z->close_next;
		for (int i = 0; i < NR_CLIENTS; i++)
			if (cl[i] == z) {
				leave(i);
				cl[i] = NULL;
			}
		client_reap(z);
	}
}

static void disconnect_client(int i)
{
	leave(i);
	if (cl[i] && !cl[i]->closed)
		client_close(cl[i], NULL);
	close(peer[i]);
	peer[i] = -1;
	cl[i] = NULL;
}

/* Every reply waiting for client @i: whole, well-formed, fds closed. */
static void read_replies(int i)
{
	unsigned int cmd;
	int judge;
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int) * 4)];
	} cbuf;
	union {
		struct gpusched_wire_rep rep;
		struct gpusched_ctl_hdr hdr;
		char buf[GPUSCHED_CTL_MSG_MAX];
	} in;
	struct gpusched_wire_rep rep;
	struct iovec iov = { .iov_base = &in, .iov_len = sizeof(in) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *cm;
	ssize_t n;

	for (;;) {
		msg.msg_control = cbuf.buf;
		msg.msg_controllen = sizeof(cbuf.buf);
		n = recvmsg(peer[i], &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
		if (n <= 0)
			return;
		for (cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
			if (cm->cmsg_type == SCM_RIGHTS) {
				int *fds = (int *)CMSG_DATA(cm);
				size_t k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);

				for (size_t j = 0; j < k; j++)
					close(fds[j]);
			}
		}
		if ((size_t)n >= sizeof(in.hdr) && in.hdr.magic == GPUSCHED_CTL_MAGIC) {
			if ((msg.msg_flags & MSG_TRUNC) ||
			    (size_t)n != sizeof(in.hdr) +
			    (size_t)in.hdr.rec_size * in.hdr.nr_recs ||
			    in.hdr.error > 0 || in.hdr.error < -4095)
				abort();
			if (in.hdr.cmd >= GPUSCHED_CTL_EV_ATTACH && !in.hdr.seq)
				continue;	/* an event */
			if (!(in.hdr.flags & GPUSCHED_CTL_F_DONE))
				continue;	/* more of the same reply */
			if (pend[i].head == pend[i].tail)
				abort();
			pend[i].head++;
			continue;
		}
		/* A reply to nothing would be read as the next one's answer. */
		if (pend[i].head == pend[i].tail)
			abort();
		judge = pend[i].judge[pend[i].head % MAX_PENDING];
		cmd = pend[i].cmd[pend[i].head++ % MAX_PENDING];
		memcpy(&rep, &in, n < (ssize_t)sizeof(rep) ? (size_t)n : sizeof(rep));
		if (n != sizeof(rep) || (msg.msg_flags & MSG_TRUNC) ||
		    rep.magic != GPUSCHED_WIRE_MAGIC || rep.ret > 0 ||
		    rep.ret < -4095)
			abort();
		if ((cmd == GPUSCHED_IOC_ACQUIRE || cmd == GPUSCHED_IOC_YIELD) &&
		    rep.ret == 0)
			enter(i);
		if (judge >= 0 && gs_hold_released(&hold[judge], i, rep.ret == 0)) {
			fprintf(stderr, "gpu %d: client %d and another held the token at once (both RELEASEs succeeded)\n",
				judge, i);
			abort();
		}
		/* Refused: only a revocation takes the token away. */
		if (judge >= 0 && rep.ret == -EPERM && cl[i] && !cl[i]->pol.revoked) {
			fprintf(stderr, "gpu %d: client %d lost the token without a revocation\n",
				judge, i);
			abort();
		}
		/* Memory: the errors the uapi header lists, nothing else. */
		if ((cmd == GPUSCHED_IOC_MEM_RESERVE || cmd == GPUSCHED_IOC_MEM_RETURN) &&
		    rep.ret && rep.ret != -EINVAL && rep.ret != -ENOTCONN &&
		    rep.ret != -EOPNOTSUPP &&
		    (rep.ret != -EDQUOT || cmd != GPUSCHED_IOC_MEM_RESERVE)) {
			fprintf(stderr, "MEM_%s: %d\n",
				cmd == GPUSCHED_IOC_MEM_RESERVE ? "RESERVE" : "RETURN",
				rep.ret);
			abort();
		}
		if (cmd == GPUSCHED_IOC_GET_INFO && rep.ret == 0) {
			struct gpusched_client_info info;

			memcpy(&info, rep.arg, sizeof(info));
			if (info.size != sizeof(info) ||
			    info.state > GPUSCHED_STATE_HOLDING ||
			    (info.state != GPUSCHED_STATE_DETACHED &&
			     (info.weight < GPUSCHED_WEIGHT_MIN ||
			      info.weight > GPUSCHED_WEIGHT_MAX ||
			      info.sched_class > GPUSCHED_CLASS_MAX ||
			      info.cap_pct > 100))) {
				fprintf(stderr, "GET_INFO: size %u state %u weight %u class %u cap %u\n",
					info.size, info.state, info.weight,
					info.sched_class, info.cap_pct);
				abort();
			}
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const unsigned int cmds[] = {
		GPUSCHED_IOC_ATTACH, GPUSCHED_IOC_ACQUIRE, GPUSCHED_IOC_RELEASE,
		GPUSCHED_IOC_YIELD, GPUSCHED_IOC_SET_PARAMS, GPUSCHED_IOC_GET_INFO,
	};
	static const unsigned int mem_cmds[] = {
		GPUSCHED_IOC_MEM_RESERVE, GPUSCHED_IOC_MEM_RETURN,
	};
	const uint8_t *p = data, *end = data + size;
	int i;

	if (!A.o)
		setup();
	for (i = 0; i < NR_CLIENTS; i++)
		connect_client(i);

	while (p < end) {
		uint8_t op = *p++;
		struct arb_client *c;
		unsigned int cmd = 0;
		size_t len;
		int judge;

		i = (op & 3) % NR_CLIENTS;
		if (!cl[i]) {
			disconnect_client(i);
			connect_client(i);
		}
		c = cl[i];
		switch ((op >> 2) & 3) {
		case 0: {
			struct gpusched_wire_req req = { .magic = GPUSCHED_WIRE_MAGIC };
			uint8_t sel = p < end ? *p++ : 0;

			if (sel < 0xe0) {
				cmd = cmds[sel % 6];
			} else if (sel < 0xf0) {
				cmd = mem_cmds[sel & 1];
			} else if (end - p >= 4) {
				memcpy(&cmd, p, 4);
				p += 4;
			}
			req.cmd = cmd;
			/* The fuzzer's bytes fill the argument. */
			len = p < end ? *p++ % (GPUSCHED_WIRE_MAX + 1) : 0;
			if (len > (size_t)(end - p))
				len = end - p;
			memcpy(req.arg, p, len);
			p += len;
			/* All but these may give the token back (bad ones too). */
			judge = cmd == GPUSCHED_IOC_GET_INFO ||
				cmd == GPUSCHED_IOC_SET_PARAMS ? -1 : leave(i);
			if (cmd != GPUSCHED_IOC_RELEASE)
				judge = -1;
			if (send(peer[i], &req, sizeof(req), MSG_DONTWAIT) == sizeof(req))
				pending_push(i, cmd, judge);
			break;
		}
		case 1:
			len = p < end ? *p++ : 0;
			if (len > (size_t)(end - p))
				len = end - p;
			/* Anything, a RELEASE too: not judged. */
			leave(i);
			/* Empty too: a request of the wrong size, EPROTO. */
			if (send(peer[i], p, len, MSG_DONTWAIT) >= 0)
				pending_push(i, 0, -1);
			p += len;
			break;
		case 2:
			on_timer();
			break;
		default:
			disconnect_client(i);
			connect_client(i);
			continue;
		}
		/*
		 * As the event loop does: a parked client is not read, nor one
		 * whose reply is not sent whole (here: until the peer reads).
		 */
		if (!c->closed && c->out.active && ctl_flush(c))
			client_close(c, NULL);
		if (!c->closed && !c->parked && !c->out.active)
			on_request(c);
		reap();
		for (int j = 0; j < NR_CLIENTS; j++)
			if (peer[j] >= 0)
				read_replies(j);
	}

	for (i = 0; i < NR_CLIENTS; i++)
		disconnect_client(i);
	reap();
	while (A.devs) {
		struct arb_dev *d = A.devs;

		A.devs = d->next;
		free(d);
	}
	A.nr_devs = 0;
	return 0;
}
