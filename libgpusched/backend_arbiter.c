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
 * serialised with g->io_lock: a GET_INFO waits while an ACQUIRE of another
 * thread is parked in the arbiter. A signal does not abandon a request (the
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

static int arbiter_request(struct gpusched *g, unsigned int cmd, void *arg,
			   int *memfd)
{
	struct gpusched_wire_req req = { .magic = GPUSCHED_WIRE_MAGIC, .cmd = cmd };
	struct gpusched_wire_rep rep;
	size_t size = _IOC_SIZE(cmd);
	ssize_t n;
	int err;

	if (size > sizeof(req.arg))
		return -EINVAL;
	if (_IOC_DIR(cmd) & _IOC_WRITE)
		memcpy(req.arg, arg, size);

	pthread_mutex_lock(&g->io_lock);
	do
		n = send(g->fd, &req, sizeof(req), MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		err = -errno;
		if (err == -EPIPE)
			err = -ECONNRESET;
	} else {
		err = recv_reply(g->fd, &rep, memfd);
	}
	pthread_mutex_unlock(&g->io_lock);
	if (err)
		return err;
	if (rep.ret > 0 || rep.ret < -4095)
		return -EPROTO;
	if (!rep.ret && (_IOC_DIR(cmd) & _IOC_READ))
		memcpy(arg, rep.arg, size);
	return rep.ret;
}

static int arbiter_call(struct gpusched *g, unsigned int cmd, void *arg)
{
	return arbiter_request(g, cmd, arg, NULL);
}

static int arbiter_open(struct gpusched *g, const unsigned char uuid[16])
{
	const char *path = gs_config()->arbiter;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct gpusched_attach at = { 0 };
	int memfd = -1, err;
	struct stat sb;
	void *p;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	g->fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (g->fd < 0)
		return -errno;
	if (connect(g->fd, (struct sockaddr *)&sa, sizeof(sa))) {
		err = -errno;
		goto out_close;
	}

	memcpy(at.uuid, uuid, sizeof(at.uuid));
	at.mem_total = g->mem_total;
	err = arbiter_request(g, GPUSCHED_IOC_ATTACH, &at, &memfd);
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
	return 0;

out_memfd:
	if (memfd >= 0)
		close(memfd);
out_close:
	close(g->fd);
	g->fd = -1;
	return err;
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
	.close = gs_backend_close,
};
