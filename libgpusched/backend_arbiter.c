// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Token service backend: the user-space arbiter (gpuschedd --arbiter).
 *
 * One SOCK_SEQPACKET connection is one client. Each command is one
 * struct gpusched_wire_req and one struct gpusched_wire_rep; the reply to
 * ATTACH carries the status page as a memfd, which is mapped read-only
 * (the arbiter seals it against writable mappings).
 *
 * The wire format has no request id, so requests on one connection are
 * serialised with g->io_lock: a request waits while an ACQUIRE of another
 * thread is parked in the arbiter. Memory calls (MEM_RESERVE, MEM_RETURN)
 * and GET_INFO therefore go on a second connection, the client's memory
 * channel, bound to it with the id and cookie of the ATTACH reply
 * (arbiter_wire.h), which the arbiter never parks: an allocation does not
 * wait for the token. Without a channel (an arbiter that offers none) they
 * share the first connection. A signal does not abandon a request (the
 * reply would then be read as the answer to the next one): a receive
 * interrupted by a signal is resumed.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "internal.h"

static int recv_reply(int fd, struct gpusched_wire_rep *rep, int *memfd)
{
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int))];
	} cbuf;
	struct iovec iov = { .iov_base = rep, .iov_len = sizeof(*rep) };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf.buf, .msg_controllen = sizeof(cbuf.buf),
	};
	struct cmsghdr *cm;
	ssize_t n;

	do
		n = recvmsg(fd, &msg, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (n == 0)
		return -ECONNRESET;	/* the arbiter went away */

	for (cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS &&
		    cm->cmsg_len == CMSG_LEN(sizeof(int))) {
			int f;

			memcpy(&f, CMSG_DATA(cm), sizeof(f));
			if (memfd && *memfd < 0)
				*memfd = f;
			else
				close(f);
		}
	}
	if (n != sizeof(*rep) || rep->magic != GPUSCHED_WIRE_MAGIC ||
	    (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)))
		return -EPROTO;
	return 0;
}

/* Send @req on @fd and receive its reply, under @lock. 0 or -errno. */
static int exchange(int fd, pthread_mutex_t *lock,
		    const struct gpusched_wire_req *req,
		    struct gpusched_wire_rep *rep, int *memfd)
{
	ssize_t n;
	int err;

	pthread_mutex_lock(lock);
	do
		n = send(fd, req, sizeof(*req), MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		err = -errno;
		if (err == -EPIPE)
			err = -ECONNRESET;
	} else {
		err = recv_reply(fd, rep, memfd);
	}
	pthread_mutex_unlock(lock);
	if (!err && (rep->ret > 0 || rep->ret < -4095))
		err = -EPROTO;
	return err;
}

/* Commands the memory channel takes: never parked by the arbiter. */
static bool on_channel(unsigned int cmd)
{
	return cmd == GPUSCHED_IOC_MEM_RESERVE || cmd == GPUSCHED_IOC_MEM_RETURN ||
	       cmd == GPUSCHED_IOC_GET_INFO;
}

static int arbiter_call(struct gpusched *g, unsigned int cmd, void *arg)
{
	struct gpusched_wire_req req = { .magic = GPUSCHED_WIRE_MAGIC, .cmd = cmd };
	struct gpusched_wire_rep rep;
	size_t size = _IOC_SIZE(cmd);
	int err;

	if (size > sizeof(req.arg))
		return -EINVAL;
	if (_IOC_DIR(cmd) & _IOC_WRITE)
		memcpy(req.arg, arg, size);
	if (g->mem_fd >= 0 && on_channel(cmd))
		err = exchange(g->mem_fd, &g->mem_lock, &req, &rep, NULL);
	else
		err = exchange(g->fd, &g->io_lock, &req, &rep, NULL);
	if (err)
		return err;
	if (!rep.ret && (_IOC_DIR(cmd) & _IOC_READ))
		memcpy(arg, rep.arg, size);
	return rep.ret;
}

static int connect_arbiter(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, err;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

/*
 * Open the memory channel of the client that ATTACH answered with @att.
 * Without one, memory calls share the first connection: slower to come
 * back while a thread waits for the token, never wrong.
 */
static void channel_open(struct gpusched *g,
			 const struct gpusched_wire_attached *att)
{
	static const unsigned char none[sizeof(att->cookie)];
	struct gpusched_wire_req req = {
		.magic = GPUSCHED_WIRE_MAGIC, .cmd = GPUSCHED_WIRE_BIND,
	};
	struct gpusched_wire_bind b = { .id = att->id };
	struct gpusched_wire_rep rep;
	int fd, err;

	if (!memcmp(att->cookie, none, sizeof(none)))
		return;	/* an arbiter without channels */
	fd = connect_arbiter(gs_config()->arbiter);
	if (fd < 0) {
		gs_debug("arbiter: no memory channel: %s", strerror(-fd));
		return;
	}
	memcpy(b.cookie, att->cookie, sizeof(b.cookie));
	memcpy(req.arg, &b, sizeof(b));
	err = exchange(fd, &g->mem_lock, &req, &rep, NULL);
	if (!err)
		err = rep.ret;
	if (err) {
		gs_debug("arbiter: memory channel refused: %s", strerror(-err));
		close(fd);
		return;
	}
	g->mem_fd = fd;
}

static int arbiter_open(struct gpusched *g, const unsigned char uuid[16])
{
	struct gpusched_wire_req req = {
		.magic = GPUSCHED_WIRE_MAGIC, .cmd = GPUSCHED_IOC_ATTACH,
	};
	struct gpusched_attach at = { 0 };
	struct gpusched_wire_attached att;
	struct gpusched_wire_rep rep;
	int memfd = -1, err;
	struct stat sb;
	void *p;

	g->mem_fd = -1;
	pthread_mutex_init(&g->mem_lock, NULL);
	g->fd = connect_arbiter(gs_config()->arbiter);
	if (g->fd < 0) {
		err = g->fd;
		goto out_lock;
	}

	memcpy(at.uuid, uuid, sizeof(at.uuid));
	at.mem_total = g->mem_total;
	memcpy(req.arg, &at, sizeof(at));
	err = exchange(g->fd, &g->io_lock, &req, &rep, &memfd);
	if (!err)
		err = rep.ret;
	if (err)
		goto out_memfd;
	err = -EPROTO;
	if (memfd < 0 || fstat(memfd, &sb) || sb.st_size != GPUSCHED_STATUS_SIZE)
		goto out_memfd;
	p = mmap(NULL, GPUSCHED_STATUS_SIZE, PROT_READ, MAP_SHARED, memfd, 0);
	if (p == MAP_FAILED) {
		err = -errno;
		goto out_memfd;
	}
	/* Like the module's VM_DONTCOPY: a child has no status page. */
	madvise(p, GPUSCHED_STATUS_SIZE, MADV_DONTFORK);
	close(memfd);
	g->st = p;
	memcpy(&att, rep.arg, sizeof(att));
	channel_open(g, &att);
	return 0;

out_memfd:
	if (memfd >= 0)
		close(memfd);
	close(g->fd);
	g->fd = -1;
out_lock:
	pthread_mutex_destroy(&g->mem_lock);
	return err;
}

/* In a forked child, only our copies go: the parent's client stays. */
static void arbiter_close(struct gpusched *g, bool forked)
{
	if (g->mem_fd >= 0)
		close(g->mem_fd);
	g->mem_fd = -1;
	/* The child's copy of mem_lock may be held by a thread it lacks. */
	if (!forked)
		pthread_mutex_destroy(&g->mem_lock);
	gs_backend_close(g, forked);
}

/* The holder makes no request for as long as it holds: this is how it
 * learns that the arbiter died.
 */
static bool arbiter_alive(struct gpusched *g)
{
	struct pollfd p = { .fd = g->fd, .events = POLLRDHUP };

	return poll(&p, 1, 0) <= 0 || !(p.revents & (POLLHUP | POLLRDHUP | POLLERR));
}

const struct gs_backend gs_backend_arbiter = {
	.name = "arbiter",
	.open = arbiter_open,
	.call = arbiter_call,
	.alive = arbiter_alive,
	.close = arbiter_close,
};
