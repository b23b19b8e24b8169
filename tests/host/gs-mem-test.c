// SPDX-License-Identifier: GPL-2.0
/*
 * Device memory accounting in the user-space arbiter, on its wire
 * protocol (include/gpusched/arbiter_wire.h) and its control protocol
 * (daemon/gpusched_ctl.h), the cases of tests/kselftest/mem.c for the
 * module: MEM_RESERVE and MEM_RETURN with their errors, the status page's
 * and GET_INFO's fields, the GPU's sum after close and after SIGKILL, the
 * knobs, a limit lowered below the reservation, the lowering rule as
 * nobody, and SET_CLIENT in bytes and percent; and the memory channel
 * (arbiter_wire.h): who may bind one, what it takes, and that it answers
 * while its client's ACQUIRE is parked. TAP output.
 *
 * Usage: gs-mem-test SOCKET          the tests
 *        gs-mem-test SOCKET limit    attach reporting 8 GiB, print the limit
 *        gs-mem-test SOCKET info     the same, then "class C" on that line
 *        gs-mem-test SOCKET hold N   attach, reserve N bytes, print "held",
 *                                    and stay until stdin ends
 *        gs-mem-test SOCKET token    attach to the CUDA double's GPU 0,
 *                                    acquire, print "holding", and hold
 *                                    until stdin ends
 */
#include <errno.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <linux/gpusched.h>
#include <gpusched/arbiter_wire.h>
#include "cuda_double.h"
#include "gpusched_ctl.h"
#include "knobs.h"
#include "tap_ok.h"

#define GIB	(1ull << 30)
#define TOTAL	(8 * GIB)

static const char *sock_path;
static const unsigned char uuid[16] = "gs-mem-test-gpu";

#define EXPECT(call, want) do { long long r_ = (call); \
	ok(r_ == (long long)(want), "%s = %lld (want %lld)", #call, r_, (long long)(want)); \
} while (0)

static int conn(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock_path);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		perror(sock_path);
		exit(1);
	}
	return fd;
}

/* The reply to the last ATTACH: the memory channel's id and cookie. */
static struct gpusched_wire_attached attached;

/* One command: 0 or -errno; @memfd gets a descriptor sent with the reply. */
static int call(int fd, unsigned int cmd, void *arg, int *memfd)
{
	struct gpusched_wire_req req = { .magic = GPUSCHED_WIRE_MAGIC, .cmd = cmd };
	struct gpusched_wire_rep rep;
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int))];
	} cbuf;
	struct iovec iov = { .iov_base = &rep, .iov_len = sizeof(rep) };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf.buf, .msg_controllen = sizeof(cbuf.buf),
	};
	struct cmsghdr *cm;

	if (_IOC_DIR(cmd) & _IOC_WRITE)
		memcpy(req.arg, arg, _IOC_SIZE(cmd));
	if (send(fd, &req, sizeof(req), 0) != sizeof(req) ||
	    recvmsg(fd, &msg, MSG_CMSG_CLOEXEC) != sizeof(rep))
		return -EPROTO;
	for (cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm))
		if (cm->cmsg_type == SCM_RIGHTS && memfd)
			memcpy(memfd, CMSG_DATA(cm), sizeof(int));
	if (!rep.ret && (_IOC_DIR(cmd) & _IOC_READ))
		memcpy(arg, rep.arg, _IOC_SIZE(cmd));
	if (!rep.ret && cmd == GPUSCHED_IOC_ATTACH)
		memcpy(&attached, rep.arg, sizeof(attached));
	return rep.ret;
}

struct client {
	int fd;
	const struct gpusched_status *st;
};

static int client_open_on(struct client *c, const unsigned char *gpu,
			  unsigned long long total)
{
	struct gpusched_attach at = { .mem_total = total };
	int memfd = -1, err;

	memcpy(at.uuid, gpu, sizeof(at.uuid));
	c->fd = conn();
	c->st = NULL;
	err = call(c->fd, GPUSCHED_IOC_ATTACH, &at, &memfd);
	if (err)
		return err;
	c->st = mmap(NULL, GPUSCHED_STATUS_SIZE, PROT_READ, MAP_SHARED, memfd, 0);
	close(memfd);
	return c->st == MAP_FAILED ? -ENOMEM : 0;
}

static int client_open(struct client *c, unsigned long long total)
{
	return client_open_on(c, uuid, total);
}

static void client_close(struct client *c)
{
	if (c->st && c->st != MAP_FAILED)
		munmap((void *)c->st, GPUSCHED_STATUS_SIZE);
	close(c->fd);
}

static int mem(struct client *c, unsigned int cmd, unsigned long long bytes)
{
	struct gpusched_mem m = { .bytes = bytes };

	return call(c->fd, cmd, &m, NULL);
}

#define RESERVE(c, b)	mem(c, GPUSCHED_IOC_MEM_RESERVE, b)
#define RETURN(c, b)	mem(c, GPUSCHED_IOC_MEM_RETURN, b)

static int set_limit(struct client *c, unsigned long long limit)
{
	struct gpusched_params p = {
		.mask = GPUSCHED_PARAM_MEM_LIMIT, .mem_limit = limit,
	};

	return call(c->fd, GPUSCHED_IOC_SET_PARAMS, &p, NULL);
}

/* GET_INFO and the page agree on @res and @lim, and @refused. */
static int mem_is(struct client *c, unsigned long long res,
		  unsigned long long lim, unsigned long long refused)
{
	struct gpusched_client_info ci;
	unsigned long long r, l;
	unsigned int seq;

	if (call(c->fd, GPUSCHED_IOC_GET_INFO, &ci, NULL))
		return 0;
	do {
		seq = __atomic_load_n(&c->st->seq, __ATOMIC_ACQUIRE);
		r = c->st->mem_reserved;
		l = c->st->mem_limit;
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
	} while ((seq & 1) || seq != __atomic_load_n(&c->st->seq, __ATOMIC_RELAXED));
	if (ci.mem_reserved != res || ci.mem_limit != lim ||
	    ci.mem_refused != refused || r != res || l != lim) {
		printf("# info %llu/%llu/%llu, page %llu/%llu; want %llu/%llu/%llu\n",
		       (unsigned long long)ci.mem_reserved,
		       (unsigned long long)ci.mem_limit,
		       (unsigned long long)ci.mem_refused, r, l, res, lim, refused);
		return 0;
	}
	return 1;
}

/* A control request with one record (or none); the reply's error. */
static int ctl(uint16_t cmd, const void *rec, size_t size, void *out,
	       size_t out_size)
{
	static union {
		struct gpusched_ctl_hdr hdr;
		char buf[GPUSCHED_CTL_MSG_MAX];
	} m;
	int fd = conn(), err = -EPROTO, got = 0;
	ssize_t len;

	memset(&m.hdr, 0, sizeof(m.hdr));
	m.hdr.magic = GPUSCHED_CTL_MAGIC;
	m.hdr.version = GPUSCHED_CTL_VERSION;
	m.hdr.cmd = cmd;
	m.hdr.seq = 1;
	m.hdr.rec_size = (uint16_t)size;
	m.hdr.nr_recs = rec ? 1 : 0;
	if (rec)
		memcpy(m.buf + sizeof(m.hdr), rec, size);
	if (send(fd, m.buf, sizeof(m.hdr) + (rec ? size : 0), 0) < 0)
		goto out;
	for (;;) {
		len = recv(fd, m.buf, sizeof(m.buf), 0);
		if (len < (ssize_t)sizeof(m.hdr))
			goto out;
		for (int i = 0; out && i < m.hdr.nr_recs && !got; i++) {
			const char *r = m.buf + sizeof(m.hdr) + i * m.hdr.rec_size;

			/* GET_GPUS: the record of our GPU. */
			if (!memcmp(((const struct gpusched_ctl_gpu *)r)->uuid,
				    uuid, sizeof(uuid))) {
				memcpy(out, r, out_size);
				got = 1;
			}
		}
		if (m.hdr.flags & GPUSCHED_CTL_F_DONE)
			break;
	}
	err = m.hdr.error;
	if (!err && out && !got)
		err = -ENOENT;
out:
	close(fd);
	return err;
}

static long long gpu_reserved(void)
{
	struct gpusched_ctl_gpu g;

	return ctl(GPUSCHED_CTL_GET_GPUS, NULL, 0, &g, sizeof(g)) ? -1 :
	       (long long)g.mem_reserved;
}

static int set_knob(uint32_t index, unsigned int mask, unsigned int k,
		    uint32_t v)
{
	struct gpusched_ctl_set_gpu s = { .index = index, .mask = mask };

	s.val[k] = v;
	return ctl(GPUSCHED_CTL_SET_GPU, &s, sizeof(s), NULL, 0);
}

static int set_client(uint64_t id, uint32_t pid, unsigned long long limit)
{
	struct gpusched_ctl_set_client s = {
		.id = id, .pid = pid,
		.params = { .mask = GPUSCHED_PARAM_MEM_LIMIT, .mem_limit = limit },
	};

	return ctl(GPUSCHED_CTL_SET_CLIENT, &s, sizeof(s), NULL, 0);
}

static int nobody_child(void)
{
	struct client c;
	int bad = 0;

	if (setgid(65534) || setuid(65534))
		return 99;
	if (client_open(&c, TOTAL))
		return 98;
	bad |= set_limit(&c, 0) != 0;			/* none where none */
	bad |= (set_limit(&c, 4 * GIB) != 0) << 1;
	bad |= (set_limit(&c, 4 * GIB + 1) != -EPERM) << 2;
	bad |= (set_limit(&c, 0) != -EPERM) << 3;
	bad |= (set_limit(&c, GIB) != 0) << 4;
	bad |= (set_limit(&c, 2 * GIB) != -EPERM) << 5;
	bad |= !mem_is(&c, 0, GIB, 0) << 6;
	bad |= (set_knob(0, GPUSCHED_CTL_MEM_DEFAULT_PCT, 8, 50) != -EPERM) << 7;
	client_close(&c);
	return bad;
}

static int bind_chan(int fd, uint64_t id, const unsigned char *cookie)
{
	struct gpusched_wire_bind b = { .id = id };

	memcpy(b.cookie, cookie, sizeof(b.cookie));
	return call(fd, GPUSCHED_WIRE_BIND, &b, NULL);
}

static int info_of(int fd, struct gpusched_client_info *ci)
{
	memset(ci, 0, sizeof(*ci));
	return call(fd, GPUSCHED_IOC_GET_INFO, ci, NULL);
}

/*
 * The memory channel: an id and a cookie in ATTACH's reply; BIND refused
 * for a wrong cookie or id and for another process; what a bound channel
 * takes; its answers while the client's ACQUIRE is parked; and its end
 * with its client.
 */
static void channel_tests(void)
{
	static const unsigned char zero[sizeof(attached.cookie)];
	struct gpusched_wire_req req = {
		.magic = GPUSCHED_WIRE_MAGIC, .cmd = GPUSCHED_IOC_ACQUIRE,
	};
	struct gpusched_acquire acq = { 0 };
	struct gpusched_wire_attached att;
	struct gpusched_wire_rep rep;
	struct gpusched_client_info ci;
	struct timeval tv = { .tv_sec = 30 };
	unsigned char bad[sizeof(att.cookie)];
	struct client h, c;
	int ch, ch2, st;
	pid_t pid;

	if (client_open(&h, TOTAL) || client_open(&c, TOTAL)) {
		ok(0, "channel: attach two clients");
		return;
	}
	att = attached;
	ok(att.id && memcmp(att.cookie, zero, sizeof(zero)),
	   "channel: ATTACH's reply gives an id and a cookie");
	ch = conn();
	ch2 = conn();
	memcpy(bad, att.cookie, sizeof(bad));
	bad[0] ^= 1;
	EXPECT(bind_chan(ch, att.id, bad), -EACCES);
	EXPECT(bind_chan(ch, ~0ull, att.cookie), -EACCES);
	pid = fork();
	if (!pid) {
		int fd = conn();

		_exit(bind_chan(fd, att.id, att.cookie) == -EACCES ? 0 : 1);
	}
	waitpid(pid, &st, 0);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	   "channel: another process's BIND with the right cookie: EACCES");
	{
		struct gpusched_wire_bind b = { .id = att.id, .reserved = 1 };

		memcpy(b.cookie, att.cookie, sizeof(b.cookie));
		EXPECT(call(ch, GPUSCHED_WIRE_BIND, &b, NULL), -EINVAL);
	}
	EXPECT(bind_chan(h.fd, att.id, att.cookie), -EISCONN);
	EXPECT(bind_chan(ch, att.id, att.cookie), 0);
	EXPECT(bind_chan(ch, att.id, att.cookie), -EISCONN);
	EXPECT(bind_chan(ch2, att.id, att.cookie), -EBUSY);
	EXPECT(call(ch, GPUSCHED_IOC_ACQUIRE, &acq, NULL), -EOPNOTSUPP);

	/* The client's ACQUIRE parked: h holds. The channel still answers. */
	EXPECT(call(h.fd, GPUSCHED_IOC_ACQUIRE, &acq, NULL), 0);
	memcpy(req.arg, &acq, sizeof(acq));
	ok(send(c.fd, &req, sizeof(req), 0) == sizeof(req),
	   "channel: the client asks for the token, which h holds");
	EXPECT(RESERVE(&(struct client){ .fd = ch }, GIB), 0);
	EXPECT(info_of(ch, &ci), 0);
	ok(ci.state == GPUSCHED_STATE_WAITING && ci.mem_reserved == GIB &&
	   ci.grants == 0,
	   "channel: reserved for the client while its ACQUIRE is parked (state %u, %llu bytes, %llu grants)",
	   ci.state, (unsigned long long)ci.mem_reserved,
	   (unsigned long long)ci.grants);
	{
		struct gpusched_release rel = { 0 };

		EXPECT(call(h.fd, GPUSCHED_IOC_RELEASE, &rel, NULL), 0);
	}
	setsockopt(c.fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	ok(recv(c.fd, &rep, sizeof(rep), 0) == sizeof(rep) && rep.ret == 0,
	   "channel: the client's ACQUIRE granted when h releases");
	EXPECT(RETURN(&(struct client){ .fd = ch }, GIB), 0);
	EXPECT(info_of(c.fd, &ci), 0);
	ok(ci.mem_reserved == 0, "channel: returned for the client");

	/* The channel ends with its client, and cannot be bound again. */
	client_close(&c);
	setsockopt(ch, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	ok(recv(ch, &rep, sizeof(rep), 0) == 0,
	   "channel: closed with its client");
	EXPECT(bind_chan(ch2, att.id, att.cookie), -EACCES);
	close(ch);
	close(ch2);
	client_close(&h);
}

/* Hold the token of the CUDA double's GPU 0 until stdin ends. */
static int hold_token(void)
{
	struct gpusched_acquire acq = { 0 };
	unsigned char gpu0[16];
	struct client c;
	char ch;

	gsd_uuid(0, gpu0);
	if (client_open_on(&c, gpu0, 0) ||
	    call(c.fd, GPUSCHED_IOC_ACQUIRE, &acq, NULL))
		return 1;
	printf("holding\n");
	while (read(0, &ch, 1) > 0)
		;
	return 0;
}

int main(int argc, char **argv)
{
	struct gpusched_mem bad = { .bytes = 1, .flags = 1 };
	struct gpusched_client_info ci;
	struct client a, b, none;
	uint32_t gpu;
	int pfd[2], st, fd;
	pid_t pid;
	char ch;

	if (argc < 2) {
		fprintf(stderr, "usage: gs-mem-test SOCKET [limit | info | hold BYTES | token]\n");
		return 2;
	}
	sock_path = argv[1];
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 3 && !strcmp(argv[2], "token"))
		return hold_token();
	if (argc > 2) {
		bool hold = !strcmp(argv[2], "hold") && argc == 4;
		bool info = !strcmp(argv[2], "info") && argc == 3;

		if (!hold && !info && (strcmp(argv[2], "limit") || argc != 3))
			return 2;
		if (client_open(&a, TOTAL) ||
		    call(a.fd, GPUSCHED_IOC_GET_INFO, &ci, NULL))
			return 1;
		if (info) {
			printf("limit %llu class %u\n",
			       (unsigned long long)ci.mem_limit, ci.sched_class);
			return 0;
		}
		if (!hold) {
			printf("limit %llu\n", (unsigned long long)ci.mem_limit);
			return 0;
		}
		if (RESERVE(&a, strtoull(argv[3], NULL, 0)))
			return 1;
		printf("held\n");
		while (read(0, &ch, 1) > 0)
			;
		return 0;
	}

	/* Errors before ATTACH, arguments first. */
	fd = conn();
	none.fd = fd;
	EXPECT(RESERVE(&none, 1), -ENOTCONN);
	EXPECT(RETURN(&none, 1), -ENOTCONN);
	EXPECT(RESERVE(&none, 0), -EINVAL);
	EXPECT(call(fd, GPUSCHED_IOC_MEM_RESERVE, &bad, NULL), -EOPNOTSUPP);
	bad.flags = 0;
	bad.reserved[0] = 1;
	EXPECT(call(fd, GPUSCHED_IOC_MEM_RETURN, &bad, NULL), -EINVAL);
	close(fd);

	if (client_open(&a, TOTAL) || client_open(&b, TOTAL)) {
		printf("Bail out! cannot attach\n");
		return 1;
	}
	EXPECT(call(a.fd, GPUSCHED_IOC_GET_INFO, &ci, NULL), 0);
	gpu = ci.gpu_index;
	ok((ci.features & GPUSCHED_FEAT_MEM) && (a.st->features & GPUSCHED_FEAT_MEM),
	   "GPUSCHED_FEAT_MEM in GET_INFO and on the page");
	ok(mem_is(&a, 0, 0, 0), "no limit, nothing reserved");

	/* To the limit and back. */
	EXPECT(set_limit(&a, 4 * GIB), 0);
	EXPECT(RESERVE(&a, 3 * GIB), 0);
	EXPECT(RESERVE(&a, GIB + 1), -EDQUOT);
	ok(mem_is(&a, 3 * GIB, 4 * GIB, 1), "refused: counted, nothing else");
	EXPECT(RESERVE(&a, GIB), 0);
	EXPECT(RESERVE(&a, 1), -EDQUOT);
	EXPECT(RETURN(&a, 4 * GIB + 1), -EINVAL);
	EXPECT(RETURN(&a, GIB), 0);
	ok(mem_is(&a, 3 * GIB, 4 * GIB, 2), "after returning 1 GiB");
	EXPECT(RETURN(&a, 0), -EINVAL);
	EXPECT(RESERVE(&b, ~0ull - 1), 0);
	EXPECT(RESERVE(&b, 2), -EINVAL);	/* overflow */
	EXPECT(RETURN(&b, ~0ull - 1), 0);

	/* A limit lowered below the reservation takes nothing back. */
	EXPECT(set_limit(&a, GIB), 0);
	ok(mem_is(&a, 3 * GIB, GIB, 2), "lowered below: still reserved");
	EXPECT(RESERVE(&a, 1), -EDQUOT);
	EXPECT(RETURN(&a, 2 * GIB), 0);
	EXPECT(RESERVE(&a, 1), -EDQUOT);
	EXPECT(set_limit(&a, 0), 0);		/* root may remove it */
	ok(mem_is(&a, GIB, 0, 4), "removed by root");

	/* Nobody may only lower. */
	pid = fork();
	if (!pid)
		_exit(nobody_child());
	waitpid(pid, &st, 0);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	   "as nobody: set, lower, never raise or remove; no knobs (status %#x)", st);

	/* The GPU's sum, after close and after death. */
	EXPECT(RESERVE(&b, 2 * GIB), 0);
	EXPECT(gpu_reserved(), 3 * GIB);
	client_close(&b);
	/* The arbiter may read the hang-up after our next request. */
	for (int i = 0; i < 200 && gpu_reserved() != (long long)GIB; i++)
		usleep(10000);
	EXPECT(gpu_reserved(), GIB);
	if (pipe(pfd))
		return 1;
	pid = fork();
	if (!pid) {
		struct client c;

		if (client_open(&c, TOTAL) || RESERVE(&c, 5 * GIB) ||
		    write(pfd[1], "r", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(pfd[1]);
	ok(read(pfd[0], &ch, 1) == 1, "the child reserved 5 GiB");
	EXPECT(gpu_reserved(), 6 * GIB);
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	for (int i = 0; i < 200 && gpu_reserved() != (long long)GIB; i++)
		usleep(10000);
	EXPECT(gpu_reserved(), GIB);

	/* Knobs: a default share of what each reported, and a reserve. */
	EXPECT(set_knob(gpu, GPUSCHED_CTL_MEM_DEFAULT_PCT, 8, 101), -ERANGE);
	EXPECT(set_knob(gpu, GPUSCHED_CTL_MEM_DEFAULT_PCT, 8, 25), 0);
	ok(mem_is(&a, GIB, 2 * GIB, 4), "default 25%% of 8 GiB");
	EXPECT(client_open(&b, 0), 0);
	ok(mem_is(&b, 0, 0, 0), "a client that reported no total: no default");
	EXPECT(set_knob(gpu, GPUSCHED_CTL_MEM_DEFAULT_PCT | GPUSCHED_CTL_MEM_RESERVE,
			8, 0), 0);
	{
		struct gpusched_ctl_set_gpu s = {
			.index = gpu,
			.mask = GPUSCHED_CTL_MEM_DEFAULT_PCT | GPUSCHED_CTL_MEM_RESERVE,
		};

		s.val[9] = 1024;
		EXPECT(ctl(GPUSCHED_CTL_SET_GPU, &s, sizeof(s), NULL, 0), 0);
	}
	ok(mem_is(&a, GIB, 7 * GIB, 4), "reserve 1 GiB: 7 GiB at most");

	/* SET_CLIENT: bytes, percent, percent of nothing. */
	EXPECT(call(b.fd, GPUSCHED_IOC_GET_INFO, &ci, NULL), 0);
	EXPECT(set_client(0, (uint32_t)getpid(), 3 * GIB), 0);
	ok(mem_is(&a, GIB, 3 * GIB, 4), "SET_CLIENT 3 GiB");
	/* b reported no total: a percent limit is refused for it. */
	EXPECT(set_client(0, (uint32_t)getpid(), GS_MEM_PCT_FLAG | 50), -EINVAL);
	ok(mem_is(&a, GIB, 4 * GIB, 4),
	   "a client matched before the refusal keeps its 50%% (4 GiB)");

	client_close(&a);
	client_close(&b);
	channel_tests();
	return tap_done();
}
