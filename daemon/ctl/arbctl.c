// SPDX-License-Identifier: GPL-2.0
/* gpuschedctl's side of the arbiter's control protocol (gpusched_ctl.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "arbctl.h"
#include "gpusched_ctl.h"

/* A stuck arbiter must not hang the tool forever. */
#define ARB_TIMEOUT_S	10

struct gs_arb {
	int fd;
	uint32_t seq;
	union {
		struct gpusched_ctl_hdr hdr;
		struct gpusched_wire_rep wire;
		char buf[GPUSCHED_CTL_MSG_MAX];
	} in;
};

int gs_arb_open(const char *path, struct gs_arb **out)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = ARB_TIMEOUT_S };
	struct gs_arb *a;
	int err;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (a->fd < 0) {
		err = -errno;
		free(a);
		return err;
	}
	if (connect(a->fd, (struct sockaddr *)&sa, sizeof(sa))) {
		err = -errno;
		gs_arb_close(a);
		return err;
	}
	setsockopt(a->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(a->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	*out = a;
	return 0;
}

void gs_arb_close(struct gs_arb *a)
{
	if (!a)
		return;
	if (a->fd >= 0)
		close(a->fd);
	free(a);
}

int gs_arb_fd(const struct gs_arb *a)
{
	return a->fd;
}

static int send_req(struct gs_arb *a, uint16_t cmd, const void *arg,
		    size_t size)
{
	char buf[sizeof(struct gpusched_ctl_hdr) + 128];
	struct gpusched_ctl_hdr h = {
		.magic = GPUSCHED_CTL_MAGIC, .version = GPUSCHED_CTL_VERSION,
		.cmd = cmd, .seq = ++a->seq, .rec_size = (uint16_t)size,
		.nr_recs = size ? 1 : 0,
	};

	if (size > sizeof(buf) - sizeof(h))
		return -EINVAL;
	memcpy(buf, &h, sizeof(h));
	if (size)
		memcpy(buf + sizeof(h), arg, size);
	if (send(a->fd, buf, sizeof(h) + size, MSG_NOSIGNAL) !=
	    (ssize_t)(sizeof(h) + size))
		return errno ? -errno : -EIO;
	return 0;
}

/*
 * One message of the reply to the last request: its records in
 * a->in, the header checked. 1: more follow, 0: the last, or -errno.
 */
static int recv_msg(struct gs_arb *a, size_t min_rec)
{
	const struct gpusched_ctl_hdr *h = &a->in.hdr;
	ssize_t n;

	for (;;) {
		n = recv(a->fd, a->in.buf, sizeof(a->in.buf), 0);
		if (n < 0)
			return errno == EAGAIN ? -ETIMEDOUT : -errno;
		if (n == 0)
			return -ECONNRESET;
		/* An arbiter that predates the control protocol. */
		if ((size_t)n == sizeof(a->in.wire) &&
		    a->in.wire.magic == GPUSCHED_WIRE_MAGIC)
			return -EPROTONOSUPPORT;
		if ((size_t)n < sizeof(*h) || h->magic != GPUSCHED_CTL_MAGIC ||
		    (size_t)n != sizeof(*h) + (size_t)h->rec_size * h->nr_recs)
			return -EBADMSG;
		if (h->seq == a->seq)
			break;
		/* Events (seq 0) are not asked for here: skip them. */
	}
	if (h->error)
		return h->error < 0 ? h->error : -EBADMSG;
	if (h->nr_recs && h->rec_size < min_rec)
		return -EBADMSG;
	return h->flags & GPUSCHED_CTL_F_DONE ? 0 : 1;
}

/* A request whose reply carries no records. */
static int simple(struct gs_arb *a, uint16_t cmd, const void *arg, size_t size)
{
	int err = send_req(a, cmd, arg, size);

	if (!err)
		err = recv_msg(a, 0);
	return err > 0 ? -EBADMSG : err;
}

/* Records of a listing, appended to *@arr by @conv. */
static int listing(struct gs_arb *a, uint16_t cmd, const void *arg,
		   size_t size, size_t wire_size, size_t rec_size,
		   void (*conv)(const void *wire, void *rec),
		   void **arr, size_t *n)
{
	size_t cap = 0, i;
	char *out = NULL;
	int more;

	*arr = NULL;
	*n = 0;
	more = send_req(a, cmd, arg, size);
	if (more)
		return more;
	do {
		const struct gpusched_ctl_hdr *h = &a->in.hdr;

		more = recv_msg(a, wire_size);
		if (more < 0)
			break;
		if (*n + h->nr_recs > cap) {
			char *p;

			cap = 2 * (*n + h->nr_recs);
			p = realloc(out, cap * rec_size);
			if (!p) {
				more = -ENOMEM;
				break;
			}
			out = p;
		}
		for (i = 0; i < h->nr_recs; i++)
			conv(a->in.buf + sizeof(*h) + i * h->rec_size,
			     out + (*n + i) * rec_size);
		*n += h->nr_recs;
	} while (more > 0);
	if (more < 0) {
		free(out);
		*n = 0;
		return more;
	}
	*arr = out;
	return 0;
}

static void conv_gpu(const void *wire, void *rec)
{
	struct gpusched_ctl_gpu w;
	struct gs_gpu_rec *r = rec;

	memcpy(&w, wire, sizeof(w));
	memset(r, 0, sizeof(*r));
	r->index = w.index;
	memcpy(r->uuid, w.uuid, sizeof(r->uuid));
	r->knobs.mask = (1U << GS_POL_NR_KNOBS) - 1;
	memcpy(r->knobs.val, w.val, sizeof(r->knobs.val));
	r->nr_clients = w.nr_clients;
	r->nr_waiting = w.nr_waiting;
	r->holder_pid = w.holder_pid;
	r->grants = w.grants;
	r->overruns = w.overruns;
	r->held_ns = w.held_ns;
	r->mem_reserved = w.mem_reserved;
}

static void conv_client(const void *wire, void *rec)
{
	struct gpusched_ctl_client w;
	struct gs_client_rec *r = rec;

	memcpy(&w, wire, sizeof(w));
	memset(r, 0, sizeof(*r));
	r->gpu = w.gpu;
	r->id = w.id;
	r->pid = w.pid;
	memcpy(r->comm, w.comm, sizeof(r->comm));
	r->comm[sizeof(r->comm) - 1] = '\0';
	r->uid = w.uid;
	r->gid = w.gid;
	r->cgroup_id = w.cgroup_id;
	r->weight = w.weight;
	r->class = w.sched_class;
	r->cap_pct = w.cap_pct;
	r->state = w.state;
	r->held_ns = w.held_ns;
	r->grants = w.grants;
	r->wait_ns_total = w.wait_ns_total;
	r->wait_ns_max = w.wait_ns_max;
	r->overruns = w.overruns;
	r->yields = w.yields;
	r->has_mem = true;
	r->mem_total = w.mem_total;
	r->mem_reserved = w.mem_reserved;
	r->mem_limit = w.mem_limit;
	r->mem_refused = w.mem_refused;
	r->gpu_ns = w.gpu_ns;
	r->has_gpu_ns = true;
}

int gs_arb_get_gpus(struct gs_arb *a, struct gs_gpu_rec **gpus, size_t *n)
{
	return listing(a, GPUSCHED_CTL_GET_GPUS, NULL, 0,
		       sizeof(struct gpusched_ctl_gpu), sizeof(**gpus),
		       conv_gpu, (void **)gpus, n);
}

int gs_arb_get_clients(struct gs_arb *a, int64_t gpu,
		       struct gs_client_rec **clients, size_t *n)
{
	struct gpusched_ctl_filter f = { 0 };

	if (gpu >= 0) {
		f.flags = GPUSCHED_CTL_F_GPU;
		f.gpu = (uint32_t)gpu;
	}
	return listing(a, GPUSCHED_CTL_GET_CLIENTS, &f, sizeof(f),
		       sizeof(struct gpusched_ctl_client), sizeof(**clients),
		       conv_client, (void **)clients, n);
}

int gs_arb_set_gpu(struct gs_arb *a, uint32_t index,
		   const struct gs_knob_set *ks)
{
	struct gpusched_ctl_set_gpu r = { .index = index, .mask = ks->mask };

	memcpy(r.val, ks->val, sizeof(r.val));
	return simple(a, GPUSCHED_CTL_SET_GPU, &r, sizeof(r));
}

int gs_arb_set_client(struct gs_arb *a, uint64_t id, uint32_t pid,
		      int64_t gpu, const struct gpusched_params *p)
{
	struct gpusched_ctl_set_client r = { .id = id, .pid = pid };

	if (gpu >= 0) {
		r.flags = GPUSCHED_CTL_F_GPU;
		r.gpu = (uint32_t)gpu;
	}
	r.params.mask = p->mask;
	r.params.weight = p->weight;
	r.params.sched_class = p->sched_class;
	r.params.cap_pct = p->cap_pct;
	r.params.mem_limit = p->mem_limit;
	return simple(a, GPUSCHED_CTL_SET_CLIENT, &r, sizeof(r));
}

int gs_arb_subscribe(struct gs_arb *a)
{
	return simple(a, GPUSCHED_CTL_SUBSCRIBE, NULL, 0);
}

int gs_arb_events_read(struct gs_arb *a, gs_nl_event_fn *fn, void *arg)
{
	const struct gpusched_ctl_hdr *h = &a->in.hdr;
	struct gs_client_rec rec;
	ssize_t n;

	for (;;) {
		n = recv(a->fd, a->in.buf, sizeof(a->in.buf), MSG_DONTWAIT);
		if (n < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : -errno;
		if (n == 0)
			return -ECONNRESET;
		if ((size_t)n < sizeof(*h) || h->magic != GPUSCHED_CTL_MAGIC ||
		    (size_t)n != sizeof(*h) + (size_t)h->rec_size * h->nr_recs)
			return -EBADMSG;
		if (h->cmd == GPUSCHED_CTL_EV_LOST) {
			fn(arg, GS_NL_EV_LOST, NULL);
			continue;
		}
		if (h->nr_recs != 1 || h->rec_size < sizeof(struct gpusched_ctl_client))
			continue;	/* not an event this tool knows */
		conv_client(a->in.buf + sizeof(*h), &rec);
		switch (h->cmd) {
		case GPUSCHED_CTL_EV_ATTACH:
			fn(arg, GS_NL_EV_ATTACH, &rec);
			break;
		case GPUSCHED_CTL_EV_DETACH:
			fn(arg, GS_NL_EV_DETACH, &rec);
			break;
		case GPUSCHED_CTL_EV_OVERRUN:
			fn(arg, GS_NL_EV_OVERRUN, &rec);
			break;
		}
	}
}
