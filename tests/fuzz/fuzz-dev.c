// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz-dev: random calls on /dev/gpusched from several processes (some as
 * root, some as nobody), each with several threads, for a bounded time:
 * ioctls with random numbers, sizes, directions, flag bits, struct contents
 * and bad pointers; mmap, mprotect, madvise, mremap and munmap of the
 * status page with random lengths, offsets and protections, and writes
 * through /proc/self/mem; close() of a file while another thread waits in
 * ACQUIRE on it; SIGUSR1 and SIGALRM interrupting waits; fork()ed clients
 * killed at random; SET_PARAMS with random values; random strings written
 * to the sysfs knobs.
 *
 * It checks what it can from user space: every errno is one the contract
 * allows, SET_PARAMS and ATTACH give exactly the documented answer,
 * GET_INFO and the status page hold no stray bytes, a mapping is never
 * writable, no worker hangs, at most one client holds a token at any time
 * (witness clients beside the workers, fuzz-common.h), and at the end every
 * token is free and can be taken at once. The kernel's own detectors
 * (KASAN, lockdep, UBSAN, kmemleak on the debug kernel) are read by the VM
 * runner.
 *
 * fuzz-dev [-s SEED] [-t SECONDS] [-p PROCS] [-j THREADS] [-H HANG_S]
 * (GSFUZZ_SEED, GSFUZZ_SECONDS in the environment; default 10 s)
 * Prints TAP. See fuzz-common.h for what a seed reproduces.
 */
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/uio.h>
#include "fuzz-common.h"
#include "gs_abi.h"

#define PAGE		4096
#define NFDS		4
#define NMAPS		4

enum {
	OP_OPEN, OP_CLOSE, OP_DUP, OP_ATTACH, OP_ACQUIRE, OP_YIELD, OP_RELEASE,
	OP_SET_PARAMS, OP_GET_INFO, OP_IOCTL_RANDOM, OP_MMAP, OP_MAP_OPS,
	OP_FORK, OP_CLOSE_WAIT, OP_SYSFS, OP_COMM, OP_RW, OP_MEM, NR_OPS,
	/* counters only */
	C_GRANTED = NR_OPS, C_EINTR, C_ETIMEDOUT, C_EFAULT, C_CLOSED_WAITING,
	C_CHILD_KILLED, C_MAPPED, C_EPERM_PARAMS, NR_COUNTERS,
};

static const char *const op_names[NR_COUNTERS] = {
	"open", "close", "dup", "attach", "acquire", "yield", "release",
	"set_params", "get_info", "ioctl_random", "mmap", "map_ops", "fork",
	"close_wait", "sysfs", "comm", "read_write", "mem",
	"granted", "eintr", "etimedout", "efault", "closed_while_waiting",
	"children_killed", "mapped", "set_params_eperm",
};

static const unsigned int op_weight[NR_OPS] = {
	[OP_OPEN] = 6, [OP_CLOSE] = 4, [OP_DUP] = 2, [OP_ATTACH] = 8,
	[OP_ACQUIRE] = 12, [OP_YIELD] = 6, [OP_RELEASE] = 8,
	[OP_SET_PARAMS] = 6, [OP_GET_INFO] = 5, [OP_IOCTL_RANDOM] = 10,
	[OP_MMAP] = 6, [OP_MAP_OPS] = 6, [OP_FORK] = 2, [OP_CLOSE_WAIT] = 3,
	[OP_SYSFS] = 5, [OP_COMM] = 1, [OP_RW] = 2, [OP_MEM] = 6,
};

static const unsigned long gs_cmds[] = {
	GPUSCHED_IOC_ATTACH, GPUSCHED_IOC_ACQUIRE, GPUSCHED_IOC_RELEASE,
	GPUSCHED_IOC_YIELD, GPUSCHED_IOC_SET_PARAMS, GPUSCHED_IOC_GET_INFO,
	GPUSCHED_IOC_MEM_RESERVE, GPUSCHED_IOC_MEM_RETURN,
};
#define NR_CMDS	(sizeof(gs_cmds) / sizeof(gs_cmds[0]))

/* The sysfs index of each fuzz GPU, found by the parent before the run. */

struct mapping {
	void *p;
	size_t len;
};

struct thr {
	int w;				/* worker number, for the shared beat */
	bool priv;			/* root: may raise its share, write sysfs */
	struct gs_rng rng;
	pthread_t thread;
	int fds[NFDS];
	struct mapping maps[NMAPS];
	char *buf;			/* PAGE read-write, PAGE none, PAGE read-only */
};

static int nthreads;
static struct thr *thrs;

static void on_signal(int sig)
{
	(void)sig;
}

static bool in(int err, const int *allowed, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (err == allowed[i])
			return true;
	return false;
}

#define EXPECT_IN(t, what, err, ...) do {				\
	static const int __ok[] = { __VA_ARGS__ };			\
	if (!in((err), __ok, sizeof(__ok) / sizeof(__ok[0])))		\
		gs_fail((t)->w, "%s: unexpected result %d (%s)", (what),	\
			(err), strerror(-(err)));				\
} while (0)

static int xioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? -errno : 0;
}

static int pick_fd(struct thr *t)
{
	int i = gs_below(&t->rng, NFDS);

	if (gs_chance(&t->rng, 3))
		return gs_chance(&t->rng, 50) ? -1 : 1000;	/* bad fds */
	return t->fds[i];
}

static int *free_fd_slot(struct thr *t)
{
	int i = gs_below(&t->rng, NFDS);

	if (t->fds[i] >= 0) {
		close(t->fds[i]);
		t->fds[i] = -1;
	}
	return &t->fds[i];
}

/*
 * An argument pointer: mostly a good buffer of @size bytes holding @good,
 * sometimes one that faults whole or in part, or points at the kernel.
 * *@valid says whether the kernel can copy all @size bytes.
 */
static void *pick_arg(struct thr *t, const void *good, size_t size, bool *valid)
{
	char *rw = t->buf, *ro = t->buf + 2 * PAGE;
	unsigned int k;

	*valid = false;
	switch (gs_below(&t->rng, 20)) {
	case 0:
		return NULL;
	case 1:
		return (void *)0xffff888000000000ul;
	case 2:
		return (void *)0x0000800000000000ul;	/* not canonical */
	case 3:
		return (void *)-1l;
	case 4:
		/* runs into the PROT_NONE page */
		k = 1 + gs_below(&t->rng, size);
		memcpy(rw + PAGE - k, good, k);
		*valid = k >= size;
		return rw + PAGE - k;
	case 5:
		return t->buf + PAGE;			/* PROT_NONE */
	case 6:
		/* readable only (what the kernel reads there is @good) */
		mprotect(ro, PAGE, PROT_READ | PROT_WRITE);
		memcpy(ro, good, size);
		mprotect(ro, PAGE, PROT_READ);
		*valid = true;
		return ro;
	default:
		k = gs_below(&t->rng, 8);		/* any alignment */
		memcpy(rw + k, good, size);
		*valid = true;
		return rw + k;
	}
}

static void fill_random(struct thr *t, void *p, size_t n)
{
	unsigned char *b = p;
	size_t i;

	for (i = 0; i < n; i++)
		b[i] = gs_rnd(&t->rng);
}

/* GET_INFO through a good buffer; checks every field it returns. */
static int get_info(struct thr *t, int fd, struct gpusched_client_info *ci)
{
	static const __u8 zero[sizeof(ci->reserved)];
	int err;

	memset(ci, 0xa5, sizeof(*ci));
	err = xioctl(fd, GPUSCHED_IOC_GET_INFO, ci);
	if (err)
		return err;
	if (ci->size != sizeof(*ci) || ci->state > GPUSCHED_STATE_HOLDING ||
	    memcmp(ci->reserved, zero, sizeof(zero)))
		gs_fail(t->w, "GET_INFO: bad size %u, state %u or reserved bytes",
			ci->size, ci->state);
	if (ci->state == GPUSCHED_STATE_DETACHED) {
		/* The service's version and features, even before ATTACH. */
		struct gpusched_client_info z = {
			.size = sizeof(z), .state = GPUSCHED_STATE_DETACHED,
			.abi_version = GPUSCHED_ABI_VERSION,
			.features = GS_FEATURES,
		};

		if (memcmp(ci, &z, sizeof(z)))
			gs_fail(t->w, "GET_INFO: detached client with non-zero fields");
	} else if (ci->weight < GPUSCHED_WEIGHT_MIN ||
		   ci->weight > GPUSCHED_WEIGHT_MAX ||
		   ci->sched_class > GPUSCHED_CLASS_MAX || ci->cap_pct > 100 ||
		   memcmp(ci->uuid, "gsFUZZ", 6) || ci->gpu_index >= 64) {
		gs_fail(t->w, "GET_INFO: bad weight %u class %u cap %u or uuid",
			ci->weight, ci->sched_class, ci->cap_pct);
	}
	return 0;
}

static void check_status_page(struct thr *t, const void *p)
{
	const struct gpusched_status *st = p;
	const unsigned char *b = p;
	struct gpusched_status copy;
	size_t i;

	memcpy(&copy, st, sizeof(copy));
	if (copy.version != GPUSCHED_STATUS_VERSION || copy.size != sizeof(copy))
		gs_fail(t->w, "status page: version %u size %u", copy.version,
			copy.size);
	if (copy.flags & ~0xfu || (copy.flags && !(copy.flags & GPUSCHED_ST_ATTACHED)))
		gs_fail(t->w, "status page: flags %#x", copy.flags);
	if (copy.reserved0)
		gs_fail(t->w, "status page: reserved0 = %#x", copy.reserved0);
	for (i = 0; i < sizeof(copy.reserved) / sizeof(copy.reserved[0]); i++)
		if (copy.reserved[i])
			gs_fail(t->w, "status page: reserved[%zu] = %#llx", i,
				(unsigned long long)copy.reserved[i]);
	for (i = sizeof(copy); i < PAGE; i++) {
		if (b[i]) {
			gs_fail(t->w, "status page: byte %zu past the struct is %#x",
				i, b[i]);
			break;
		}
	}
}

static void op_open(struct thr *t)
{
	static const int modes[] = { O_RDWR, O_RDWR, O_RDWR, O_RDONLY, O_WRONLY,
				     O_RDWR | O_NONBLOCK };
	int *slot = free_fd_slot(t);
	int fd = open(GPUSCHED_DEVICE_PATH,
		      modes[gs_below(&t->rng, 6)] | O_CLOEXEC);

	if (fd < 0)
		EXPECT_IN(t, "open", -errno, -EMFILE, -ENFILE, -ENOMEM);
	*slot = fd;
}

static void op_close(struct thr *t)
{
	int i = gs_below(&t->rng, NFDS);

	if (t->fds[i] >= 0 && close(t->fds[i]))
		gs_fail(t->w, "close: %s", strerror(errno));
	t->fds[i] = -1;
}

static void op_dup(struct thr *t)
{
	int fd = t->fds[gs_below(&t->rng, NFDS)], *slot, nfd;

	if (fd < 0)
		return;
	nfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (nfd < 0)
		return;
	slot = free_fd_slot(t);
	*slot = nfd;
}

static void op_attach(struct thr *t)
{
	struct gpusched_client_info ci;
	struct gpusched_attach a = { 0 };
	int fd = pick_fd(t), err, want, info;
	bool valid, attached;
	void *arg;

	gs_fuzz_uuid(a.uuid, gs_below(&t->rng, GS_FUZZ_NR_GPUS));
	if (gs_chance(&t->rng, 5))
		memset(a.uuid, 0, sizeof(a.uuid));
	if (gs_chance(&t->rng, 5))
		a.flags = gs_rnd(&t->rng);
	if (gs_chance(&t->rng, 5))
		a.reserved[0] = gs_rnd(&t->rng);
	if (gs_chance(&t->rng, 5))
		a.reserved0 = gs_rnd(&t->rng);
	info = get_info(t, fd, &ci);
	attached = !info && ci.state != GPUSCHED_STATE_DETACHED;
	arg = pick_arg(t, &a, sizeof(a), &valid);
	err = xioctl(fd, GPUSCHED_IOC_ATTACH, arg);
	if (info) {
		EXPECT_IN(t, "attach (bad fd)", err, -EBADF, -ENOTTY);
		return;
	}
	if (!valid)
		want = -EFAULT;
	else if (a.flags)
		want = -EOPNOTSUPP;
	else if (a.reserved0 || a.reserved[0] ||
		 !memcmp(a.uuid, (__u8[16]){ 0 }, 16))
		want = -EINVAL;
	else
		want = attached ? -EBUSY : 0;
	if (err != want)
		gs_fail(t->w, "attach: %d (%s), expected %d", err, strerror(-err),
			want);
}

static void op_acquire(struct thr *t, bool yield)
{
	struct gpusched_acquire a = { 0 };
	int fd = pick_fd(t), err;
	bool valid;
	void *arg;

	switch (gs_below(&t->rng, 8)) {
	case 0:
		a.flags = gs_rnd(&t->rng);
		break;
	case 1:
	case 2:
		a.flags = GPUSCHED_ACQUIRE_NONBLOCK;
		break;
	case 3:
	case 4:
		a.flags = GPUSCHED_ACQUIRE_TIMEOUT;
		break;
	case 5:
		a.flags = gs_chance(&t->rng, 2) ? GS_ACQUIRE_FLAGS :
			  gs_chance(&t->rng, 2) ? GPUSCHED_ACQUIRE_NUDGE :
						  GPUSCHED_ACQUIRE_NUDGE_DONE;
		break;
	default:
		break;	/* blocking: a signal or the grant ends it */
	}
	/* Without its flag a timeout is refused (EINVAL): now and then. */
	if ((a.flags & GPUSCHED_ACQUIRE_TIMEOUT) || gs_chance(&t->rng, 16))
		a.timeout_ns = gs_chance(&t->rng, 80) ?
			gs_below(&t->rng, 20000000) : gs_interesting(&t->rng);
	if (gs_chance(&t->rng, 8))
		a.gpu_ns = gs_chance(&t->rng, 2) ? gs_below(&t->rng, 20000000) :
						   gs_interesting(&t->rng);
	if (gs_chance(&t->rng, 32))
		a.reserved[0] = gs_rnd(&t->rng);
	/* A nudge's age: any; without NUDGE, EINVAL. */
	if (gs_chance(&t->rng, 8))
		a.age_ns = gs_chance(&t->rng, 2) ? gs_below(&t->rng, 20000000) :
						   gs_interesting(&t->rng);
	/* When the work comes: with the flag, any time; without, EINVAL. */
	if (gs_chance(&t->rng, 8))
		a.flags |= GPUSCHED_ACQUIRE_DUE;
	if (gs_chance(&t->rng, 8))
		a.due_us = gs_rnd(&t->rng);
	arg = pick_arg(t, &a, sizeof(a), &valid);
	err = xioctl(fd, yield ? GPUSCHED_IOC_YIELD : GPUSCHED_IOC_ACQUIRE, arg);
	if (!valid)
		EXPECT_IN(t, "acquire (bad pointer)", err, -EFAULT, -EBADF);
	else if (a.flags & ~GS_ACQUIRE_FLAGS)
		EXPECT_IN(t, "acquire (unknown flags)", err, -EOPNOTSUPP, -EBADF);
	else if ((a.flags & GPUSCHED_ACQUIRE_NONBLOCK) &&
		 (a.flags & GPUSCHED_ACQUIRE_TIMEOUT))
		EXPECT_IN(t, "acquire (NONBLOCK|TIMEOUT)", err, -EINVAL, -EBADF);
	else if (a.timeout_ns && !(a.flags & GPUSCHED_ACQUIRE_TIMEOUT))
		EXPECT_IN(t, "acquire (timeout_ns without the flag)", err,
			  -EINVAL, -EBADF);
	else if (a.due_us && !(a.flags & GPUSCHED_ACQUIRE_DUE))
		EXPECT_IN(t, "acquire (due_us without the flag)", err, -EINVAL,
			  -EBADF);
	else if ((a.flags & GPUSCHED_ACQUIRE_NUDGE) &&
		 (a.flags & ~GPUSCHED_ACQUIRE_NUDGE))
		EXPECT_IN(t, "acquire (NUDGE with another flag)", err, -EINVAL,
			  -EBADF);
	else if ((a.flags & GPUSCHED_ACQUIRE_NUDGE_DONE) &&
		 (a.flags & ~GPUSCHED_ACQUIRE_NUDGE_DONE))
		EXPECT_IN(t, "acquire (NUDGE_DONE with another flag)", err,
			  -EINVAL, -EBADF);
	else if (a.age_ns && !(a.flags & GPUSCHED_ACQUIRE_NUDGE))
		EXPECT_IN(t, "acquire (age_ns without NUDGE)", err, -EINVAL,
			  -EBADF);
	else if (a.reserved[0])
		EXPECT_IN(t, "acquire (reserved)", err, -EINVAL, -EBADF);
	else if ((a.flags & GPUSCHED_ACQUIRE_NUDGE) && yield)
		EXPECT_IN(t, "yield (NUDGE)", err, -EINVAL, -ENOTCONN, -EBADF);
	else if (a.flags & GPUSCHED_ACQUIRE_NUDGE)
		EXPECT_IN(t, "acquire (NUDGE)", err, 0, -EALREADY, -EPERM,
			  -EBUSY, -ENOTCONN, -EBADF);
	else if ((a.flags & GPUSCHED_ACQUIRE_NUDGE_DONE) && yield)
		EXPECT_IN(t, "yield (NUDGE_DONE)", err, -EINVAL, -ENOTCONN,
			  -EBADF);
	else if (a.flags & GPUSCHED_ACQUIRE_NUDGE_DONE)
		EXPECT_IN(t, "acquire (NUDGE_DONE)", err, 0, -EALREADY, -EPERM,
			  -ENOENT, -ENOTCONN, -EBADF);
	else
		EXPECT_IN(t, "acquire", err, 0, -EALREADY, -EBUSY, -EAGAIN,
			  -EINTR, -ETIMEDOUT, -ENOTCONN, -EBADF);
	if (!err && !(a.flags & (GPUSCHED_ACQUIRE_NUDGE |
				 GPUSCHED_ACQUIRE_NUDGE_DONE)))
		gs_count(C_GRANTED, 1);
	else if (err == -EINTR)
		gs_count(C_EINTR, 1);
	else if (err == -ETIMEDOUT)
		gs_count(C_ETIMEDOUT, 1);
	else if (err == -EFAULT)
		gs_count(C_EFAULT, 1);
}

static void op_release(struct thr *t)
{
	struct gpusched_release r = { 0 };
	int fd = pick_fd(t), err;
	bool valid;
	void *arg;

	if (gs_chance(&t->rng, 5))
		r.flags = gs_rnd(&t->rng);
	if (gs_chance(&t->rng, 5))
		r.reserved0 = gs_rnd(&t->rng);
	if (gs_chance(&t->rng, 8))
		r.reserved[gs_below(&t->rng, 2)] = gs_rnd(&t->rng);
	if (gs_chance(&t->rng, 8))
		r.gpu_ns = gs_chance(&t->rng, 2) ? gs_below(&t->rng, 20000000) :
						   gs_interesting(&t->rng);
	arg = pick_arg(t, &r, sizeof(r), &valid);
	err = xioctl(fd, GPUSCHED_IOC_RELEASE, arg);
	if (!valid)
		EXPECT_IN(t, "release (bad pointer)", err, -EFAULT, -EBADF);
	else if (r.flags)
		EXPECT_IN(t, "release (flags)", err, -EOPNOTSUPP, -EBADF);
	else if (r.reserved0 || r.reserved[0] || r.reserved[1])
		EXPECT_IN(t, "release (reserved)", err, -EINVAL, -EBADF);
	else
		EXPECT_IN(t, "release", err, 0, -EPERM, -ENOTCONN, -EBADF);
}

/* The share order of nice(2): does (w, cl, cap) not raise (ow, ocl, ocap)? */
static bool lowers(__u32 w, __u32 cl, __u32 cap, __u32 ow, __u32 ocl, __u32 ocap)
{
	__u32 nc = cap ? cap : 100, oc = ocap && ocap < 100 ? ocap : 100;

	return w <= ow && cl >= ocl && nc <= oc;
}

static void op_set_params(struct thr *t)
{
	struct gpusched_client_info ci;
	struct gpusched_params p = { 0 };
	int fd = t->fds[gs_below(&t->rng, NFDS)], err, want, info;
	__u32 w, cl, cap;
	bool valid, mem_ok;
	void *arg;

	p.mask = gs_chance(&t->rng, 90) ? gs_below(&t->rng, 16) : gs_rnd(&t->rng);
	p.mem_limit = gs_chance(&t->rng, 4) ? 0 :
		      gs_chance(&t->rng, 2) ? gs_below(&t->rng, 1ULL << 34) :
					      gs_interesting(&t->rng);
	p.weight = gs_chance(&t->rng, 70) ? 1 + gs_below(&t->rng, 200) :
					    gs_interesting(&t->rng);
	p.sched_class = gs_chance(&t->rng, 80) ? gs_below(&t->rng, 3) :
					   gs_interesting(&t->rng);
	p.cap_pct = gs_chance(&t->rng, 70) ? gs_below(&t->rng, 101) :
					     gs_interesting(&t->rng);
	if (gs_chance(&t->rng, 4))
		p.reserved[0] = gs_rnd(&t->rng) | 1;
	info = get_info(t, fd, &ci);
	arg = pick_arg(t, &p, sizeof(p), &valid);
	err = xioctl(fd, GPUSCHED_IOC_SET_PARAMS, arg);
	if (info) {
		EXPECT_IN(t, "set_params (bad fd)", err, -EBADF);
		return;
	}
	w = p.mask & GPUSCHED_PARAM_WEIGHT ? p.weight : ci.weight;
	cl = p.mask & GPUSCHED_PARAM_CLASS ? p.sched_class : ci.sched_class;
	cap = p.mask & GPUSCHED_PARAM_CAP ? p.cap_pct : ci.cap_pct;
	/*
	 * A limit may be set where there is none, or lowered. The clients
	 * report no memory at ATTACH, so the GPU's knobs (which other
	 * workers write) take no part in their limits.
	 */
	mem_ok = !(p.mask & GPUSCHED_PARAM_MEM_LIMIT) || !ci.mem_limit ||
		 (p.mem_limit && p.mem_limit <= ci.mem_limit);
	if (!valid)
		want = -EFAULT;
	else if (p.mask & ~GS_PARAM_MASK)
		want = -EOPNOTSUPP;
	else if (p.reserved[0])
		want = -EINVAL;
	else if (ci.state == GPUSCHED_STATE_DETACHED)
		want = -ENOTCONN;
	else if (w < GPUSCHED_WEIGHT_MIN || w > GPUSCHED_WEIGHT_MAX ||
		 cl > GPUSCHED_CLASS_MAX || cap > 100)
		want = -EINVAL;
	else if (!t->priv && !lowers(w, cl, cap, ci.weight, ci.sched_class, ci.cap_pct))
		want = -EPERM;
	else if (!t->priv && !mem_ok)
		want = -EPERM;
	else
		want = 0;
	if (err != want)
		gs_fail(t->w, "set_params mask %#x w %u cl %u cap %u (was %u %u %u, %s): %d, expected %d",
			p.mask, p.weight, p.sched_class, p.cap_pct, ci.weight,
			ci.sched_class, ci.cap_pct, t->priv ? "root" : "nobody",
			err, want);
	if (err == -EPERM)
		gs_count(C_EPERM_PARAMS, 1);
	if (!err && !get_info(t, fd, &ci) &&
	    (ci.weight != w || ci.sched_class != cl || ci.cap_pct != cap))
		gs_fail(t->w, "set_params: asked %u %u %u, GET_INFO says %u %u %u",
			w, cl, cap, ci.weight, ci.sched_class, ci.cap_pct);
	/* Without a total, the limit is the client's own. */
	if (!err && (p.mask & GPUSCHED_PARAM_MEM_LIMIT) && !get_info(t, fd, &ci) &&
	    ci.mem_limit != p.mem_limit)
		gs_fail(t->w, "set_params: mem_limit %llu, GET_INFO says %llu",
			(unsigned long long)p.mem_limit,
			(unsigned long long)ci.mem_limit);
}

/*
 * MEM_RESERVE or MEM_RETURN, good and bad: the errno contract. Forked
 * children share the files, so amounts are not checked across calls;
 * a refusal must leave the reservation where a retry can see it.
 */
static void op_mem(struct thr *t)
{
	bool reserve = gs_chance(&t->rng, 2);
	struct gpusched_mem m = { 0 };
	int fd = pick_fd(t), err;
	bool valid;
	void *arg;

	m.bytes = gs_chance(&t->rng, 10) ? 0 :
		  gs_chance(&t->rng, 2) ? gs_below(&t->rng, 1ULL << 32) :
					  gs_interesting(&t->rng);
	if (gs_chance(&t->rng, 8))
		m.flags = gs_rnd(&t->rng);
	if (gs_chance(&t->rng, 8))
		m.reserved0 = gs_rnd(&t->rng);
	if (gs_chance(&t->rng, 8))
		m.reserved[gs_below(&t->rng, 2)] = gs_rnd(&t->rng) | 1;
	arg = pick_arg(t, &m, sizeof(m), &valid);
	err = xioctl(fd, reserve ? GPUSCHED_IOC_MEM_RESERVE :
				   GPUSCHED_IOC_MEM_RETURN, arg);
	if (!valid)
		EXPECT_IN(t, "mem (bad pointer)", err, -EFAULT, -EBADF);
	else if (m.flags)
		EXPECT_IN(t, "mem (flags)", err, -EOPNOTSUPP, -EBADF);
	else if (m.reserved0 || m.reserved[0] || m.reserved[1] || !m.bytes)
		EXPECT_IN(t, "mem (reserved or 0)", err, -EINVAL, -EBADF);
	else if (reserve)
		EXPECT_IN(t, "mem_reserve", err, 0, -EDQUOT, -EINVAL, -ENOTCONN, -EBADF);
	else
		EXPECT_IN(t, "mem_return", err, 0, -EINVAL, -ENOTCONN, -EBADF);
}

static void op_get_info(struct thr *t)
{
	struct gpusched_client_info ci;
	int fd = pick_fd(t), err;
	bool valid;
	void *arg;

	if (gs_chance(&t->rng, 60)) {
		err = get_info(t, fd, &ci);
		EXPECT_IN(t, "get_info", err, 0, -EBADF);
		return;
	}
	arg = pick_arg(t, &ci, sizeof(ci), &valid);
	if (arg == t->buf + 2 * PAGE)
		valid = false;			/* read-only: cannot be written */
	err = xioctl(fd, GPUSCHED_IOC_GET_INFO, arg);
	if (valid)
		EXPECT_IN(t, "get_info", err, 0, -EBADF);
	else
		EXPECT_IN(t, "get_info (bad pointer)", err, -EFAULT, -EBADF);
}

/* Numbers that are not ours: ENOTTY for our magic, anything for others. */
static void op_ioctl_random(struct thr *t)
{
	int fd = pick_fd(t), err;
	unsigned long cmd;
	unsigned char good[256];
	unsigned int i;
	bool valid, ours;
	void *arg;

	switch (gs_below(&t->rng, 5)) {
	case 0:		/* one of ours with another size or direction */
		cmd = gs_cmds[gs_below(&t->rng, NR_CMDS)];
		cmd = _IOC(gs_below(&t->rng, 4), GPUSCHED_IOC_MAGIC,
			   _IOC_NR(cmd), gs_chance(&t->rng, 50) ?
			   _IOC_SIZE(cmd) : gs_below(&t->rng, 1 << 14));
		break;
	case 1:		/* our magic, any number */
		cmd = _IOC(gs_below(&t->rng, 4), GPUSCHED_IOC_MAGIC,
			   gs_below(&t->rng, 256), gs_below(&t->rng, 1 << 14));
		break;
	case 2:		/* one of ours, random contents */
		cmd = gs_cmds[gs_below(&t->rng, NR_CMDS)];
		break;
	case 3:		/* 32 random bits, but not the file-system ones */
		cmd = (__u32)gs_rnd(&t->rng);
		if (_IOC_TYPE(cmd) == 'X' || _IOC_TYPE(cmd) == 'f' ||
		    _IOC_TYPE(cmd) == 0x94 || (cmd >> 8 & 0xff) == 0x54)
			return;
		break;
	default:	/* 64 bits: the upper half must not matter or must fail */
		cmd = gs_cmds[gs_below(&t->rng, NR_CMDS)] |
		      (gs_rnd(&t->rng) << 32);
		break;
	}
	fill_random(t, good, sizeof(good));
	arg = pick_arg(t, good, sizeof(good), &valid);
	ours = false;
	for (i = 0; i < NR_CMDS; i++)
		ours |= (unsigned int)cmd == gs_cmds[i];
	err = xioctl(fd, cmd, arg);
	if (ours) {
		EXPECT_IN(t, "one of ours, random contents", err, 0, -EFAULT,
			  -EINVAL, -EOPNOTSUPP, -ENOTCONN, -EBUSY, -EALREADY,
			  -EAGAIN, -EINTR, -ETIMEDOUT, -EPERM, -EBADF);
		if (err == -EINTR)
			gs_count(C_EINTR, 1);
		if (!err && (unsigned int)cmd == GPUSCHED_IOC_ACQUIRE)
			gs_count(C_GRANTED, 1);
		return;		/* random contents: the others check these */
	}
	if (_IOC_TYPE(cmd) == GPUSCHED_IOC_MAGIC)
		EXPECT_IN(t, "ioctl with our magic, not ours", err, -ENOTTY,
			  -EBADF);
}

static struct mapping *free_map_slot(struct thr *t)
{
	struct mapping *m = &t->maps[gs_below(&t->rng, NMAPS)];

	if (m->p) {
		munmap(m->p, m->len);
		m->p = NULL;
	}
	return m;
}

static void op_mmap(struct thr *t)
{
	static const size_t lens[] = { PAGE, PAGE, PAGE, 1, PAGE - 1, 0,
				       PAGE + 1, 2 * PAGE, 16 * PAGE };
	int fd = pick_fd(t), prot, flags;
	size_t len = lens[gs_below(&t->rng, 9)];
	off_t off = 0;
	struct mapping *m;
	void *p;

	if (gs_chance(&t->rng, 15))
		off = gs_chance(&t->rng, 50) ? PAGE * (off_t)gs_below(&t->rng, 4) :
					       (off_t)(gs_interesting(&t->rng) & ~(PAGE - 1ull));
	prot = gs_chance(&t->rng, 70) ? PROT_READ : (int)gs_below(&t->rng, 8);
	flags = gs_chance(&t->rng, 80) ? MAP_SHARED : MAP_PRIVATE;
	if (gs_chance(&t->rng, 10))
		flags |= MAP_POPULATE;
	if (gs_chance(&t->rng, 5))
		flags |= MAP_LOCKED;
	p = mmap(NULL, len, prot, flags, fd, off);
	if (p == MAP_FAILED) {
		EXPECT_IN(t, "mmap", -errno, -EINVAL, -EPERM, -EACCES, -EBADF,
			  -ENODEV, -ENOMEM, -EAGAIN, -EOVERFLOW);
		return;
	}
	gs_count(C_MAPPED, 1);
	if (off || len == 0 || len > PAGE || prot & PROT_WRITE ||
	    !(flags & MAP_SHARED))
		gs_fail(t->w, "mmap len %zu off %lld prot %#x flags %#x succeeded",
			len, (long long)off, prot, flags);
	if (prot & PROT_READ)
		check_status_page(t, p);
	m = free_map_slot(t);
	m->p = p;
	m->len = len;
}

static void op_map_ops(struct thr *t)
{
	static const int advice[] = {
		MADV_NORMAL, MADV_RANDOM, MADV_SEQUENTIAL, MADV_WILLNEED,
		MADV_DONTNEED, MADV_FREE, MADV_REMOVE, MADV_DONTFORK,
		MADV_DOFORK, MADV_MERGEABLE, MADV_HUGEPAGE, MADV_DONTDUMP,
		MADV_DODUMP, MADV_WIPEONFORK, MADV_KEEPONFORK, MADV_COLD,
		MADV_PAGEOUT, MADV_POPULATE_READ, MADV_POPULATE_WRITE,
	};
	struct mapping *m = &t->maps[gs_below(&t->rng, NMAPS)];
	int prot, fd;
	size_t len;
	void *p;

	if (!m->p)
		return;
	switch (gs_below(&t->rng, 8)) {
	case 0:
		prot = gs_below(&t->rng, 8);
		if (!mprotect(m->p, m->len, prot) && (prot & PROT_WRITE))
			gs_fail(t->w, "mprotect(PROT_WRITE) of the status page succeeded");
		break;
	case 1:
		/*
		 * MADV_DONTNEED and co zap the page; the fault handler maps it
		 * again (hardening.c reads it), here it is only unmapped.
		 */
		madvise(m->p, m->len, advice[gs_below(&t->rng, sizeof(advice) / sizeof(advice[0]))]);
		munmap(m->p, m->len);
		m->p = NULL;
		break;
	case 2:
		len = gs_chance(&t->rng, 50) ? 2 * PAGE : m->len;
		p = mremap(m->p, m->len, len, MREMAP_MAYMOVE);
		if (p != MAP_FAILED && len > PAGE)
			gs_fail(t->w, "mremap grew the status page mapping");
		if (p != MAP_FAILED) {
			m->p = p;
			if (mprotect(p, PAGE, PROT_READ) == 0)
				check_status_page(t, p);
		}
		break;
	case 3:
		/* FOLL_FORCE must not write a page without VM_MAYWRITE either. */
		fd = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
		if (fd >= 0) {
			char c = 0x5a;

			if (pwrite(fd, &c, 1, (off_t)(uintptr_t)m->p) == 1)
				gs_fail(t->w, "/proc/self/mem wrote the status page");
			close(fd);
		}
		break;
	case 4:
		if (mprotect(m->p, PAGE, PROT_READ) == 0)
			check_status_page(t, m->p);
		break;
	case 5:
		mlock(m->p, m->len);
		munlock(m->p, m->len);
		break;
	case 6:
		msync(m->p, m->len, gs_chance(&t->rng, 50) ? MS_SYNC : MS_INVALIDATE);
		break;
	default:
		munmap(m->p, m->len);
		m->p = NULL;
		break;
	}
}

/* A few operations in a forked child on inherited files, then death. */
static void child_ops(struct thr *t)
{
	int i, n = 1 + gs_below(&t->rng, 30);

	for (i = 0; i < n; i++) {
		switch (gs_below(&t->rng, 6)) {
		case 0:
			op_attach(t);
			break;
		case 1:
		case 2:
			op_acquire(t, gs_chance(&t->rng, 30));
			break;
		case 3:
			op_release(t);
			break;
		case 4:
			op_set_params(t);
			break;
		default:
			op_mmap(t);
			break;
		}
	}
}

static void op_fork(struct thr *t)
{
	uint64_t child_seed = gs_rnd(&t->rng), end;
	bool killit = gs_chance(&t->rng, 50);
	int status = 0;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return;
	if (pid == 0) {
		struct thr c = *t;
		int i;

		/* The mappings were not inherited (VM_DONTCOPY) unless DOFORK. */
		for (i = 0; i < NMAPS; i++)
			c.maps[i].p = NULL;
		gs_rng_init(&c.rng, child_seed, 0);
		child_ops(&c);
		_exit(0);
	}
	if (killit) {
		gs_fuzz_sleep_us(gs_below(&t->rng, 5000));
		kill(pid, SIGKILL);
	}
	end = gs_fuzz_now_ns() + 5000000000ull;
	for (;;) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		if (r == pid || (r < 0 && errno != EINTR))
			break;
		if (gs_fuzz_now_ns() > end) {
			kill(pid, SIGKILL);
			while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
				;
			break;
		}
		gs_fuzz_sleep_us(1000);
	}
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
		gs_count(C_CHILD_KILLED, 1);
	else if (WIFSIGNALED(status))
		gs_fail(t->w, "forked client died of signal %d", WTERMSIG(status));
}

struct waiter {
	int fd;
	__u64 timeout_ns;
	__u32 flags;
	volatile int done;
	int err;
	uint64_t returned_ns;
};

static void *waiter_fn(void *arg)
{
	struct waiter *wt = arg;
	struct gpusched_acquire a = {
		.flags = wt->flags, .timeout_ns = wt->timeout_ns,
	};

	wt->err = xioctl(wt->fd, GPUSCHED_IOC_ACQUIRE, &a);
	wt->returned_ns = gs_fuzz_now_ns();
	__atomic_store_n(&wt->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* close() of a file while another thread waits in ACQUIRE on it. */
static void op_close_wait(struct thr *t)
{
	struct gpusched_attach a = { 0 };
	struct waiter wt = { 0 };
	uint64_t closed;
	pthread_t th;
	int fd;

	fd = open(GPUSCHED_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return;
	gs_fuzz_uuid(a.uuid, gs_below(&t->rng, GS_FUZZ_NR_GPUS));
	if (xioctl(fd, GPUSCHED_IOC_ATTACH, &a)) {
		close(fd);
		return;
	}
	wt.fd = fd;
	if (gs_chance(&t->rng, 50)) {
		wt.flags = GPUSCHED_ACQUIRE_TIMEOUT;
		wt.timeout_ns = gs_below(&t->rng, 200000000);
	}
	if (pthread_create(&th, NULL, waiter_fn, &wt)) {
		close(fd);
		return;
	}
	gs_fuzz_sleep_us(gs_below(&t->rng, 3000));
	close(fd);
	closed = gs_fuzz_now_ns();
	/* The waiter holds the file until it returns: a grant or a signal. */
	while (!__atomic_load_n(&wt.done, __ATOMIC_ACQUIRE)) {
		gs_fuzz_sleep_us(2000 + gs_below(&t->rng, 8000));
		if (!__atomic_load_n(&wt.done, __ATOMIC_ACQUIRE))
			pthread_kill(th, SIGUSR1);
	}
	pthread_join(th, NULL);
	/* The number may have been closed, or reused, before the call began. */
	EXPECT_IN(t, "acquire on a file closed meanwhile", wt.err, 0, -EINTR,
		  -ETIMEDOUT, -EBADF, -ENOTTY, -EINVAL, -EBUSY, -EALREADY,
		  -ENOTCONN, -EAGAIN);
	if (wt.returned_ns > closed && wt.err != -EBADF)
		gs_count(C_CLOSED_WAITING, 1);
}

static void random_string(struct thr *t, char *s, size_t size, size_t *len)
{
	static const char *const fixed[] = {
		"", "\n", " ", "-1", "+5\n", "0x10", "1e3", "10 20", "99999999999999999999",
		"18446744073709551615", "18446744073709551616", "4294967295",
		"4294967296", "  42", "42  ", "42\n\n", "0", "00000000000000100",
	};
	size_t n, i;

	switch (gs_below(&t->rng, 5)) {
	case 0:
		n = snprintf(s, size, "%llu", (unsigned long long)gs_interesting(&t->rng));
		break;
	case 1:
		n = snprintf(s, size, "%llu\n", (unsigned long long)gs_below(&t->rng, 200000));
		break;
	case 2:
		n = strlen(strcpy(s, fixed[gs_below(&t->rng, sizeof(fixed) / sizeof(fixed[0]))]));
		break;
	case 3:
		n = gs_below(&t->rng, 64);
		fill_random(t, s, n);
		break;
	default:
		n = gs_chance(&t->rng, 50) ? size - 1 : gs_below(&t->rng, size);
		for (i = 0; i < n; i++)
			s[i] = '0' + gs_below(&t->rng, 10);
		break;
	}
	*len = n;
}

static void op_sysfs(struct thr *t)
{
	static const char *const readable[] = {
		"uuid", "nr_clients", "nr_waiting", "holder_pid", "grants",
		"overruns", "held_ns", "mem_reserved",
	};
	static char big[2 * PAGE];	/* per process: contents do not matter */
	char path[256], buf[PAGE];
	unsigned int gpu = fuzz_gpu_index[gs_below(&t->rng, GS_FUZZ_NR_GPUS)];
	size_t len;
	int err;

	if (gs_chance(&t->rng, 40)) {
		const char *a = gs_chance(&t->rng, 50) ?
			readable[gs_below(&t->rng, sizeof(readable) / sizeof(readable[0]))] :
			gs_knob_names[gs_below(&t->rng, GS_NR_KNOBS)];

		snprintf(path, sizeof(path), GS_FUZZ_SYSFS "/gpu%u/%s", gpu, a);
		err = gs_file_read(path, buf, sizeof(buf));
		EXPECT_IN(t, "sysfs read", err, 0);
		return;
	}
	snprintf(path, sizeof(path), GS_FUZZ_SYSFS "/gpu%u/%s", gpu,
		 gs_knob_names[gs_below(&t->rng, GS_NR_KNOBS)]);
	random_string(t, big, sizeof(big), &len);
	err = gs_file_write(path, big, len);
	if (t->priv)
		EXPECT_IN(t, "sysfs write", err, 0, -EINVAL, -ERANGE, -E2BIG);
	else
		EXPECT_IN(t, "sysfs write as nobody", err, -EACCES);
}

static void op_comm(struct thr *t)
{
	char name[16];

	fill_random(t, name, sizeof(name));
	name[gs_below(&t->rng, sizeof(name))] = '\0';
	prctl(PR_SET_NAME, name);
}

/* The calls the device does not implement. */
static void op_rw(struct thr *t)
{
	int fd = pick_fd(t);
	struct pollfd pfd = { .fd = fd, .events = POLLIN | POLLOUT };
	char b[16] = { 0 };

	switch (gs_below(&t->rng, 4)) {
	case 0:
		if (read(fd, b, sizeof(b)) >= 0)
			gs_fail(t->w, "read() of the device succeeded");
		break;
	case 1:
		if (write(fd, b, sizeof(b)) >= 0)
			gs_fail(t->w, "write() to the device succeeded");
		break;
	case 2:
		lseek(fd, gs_rnd(&t->rng), SEEK_SET);
		break;
	default:
		poll(&pfd, 1, 0);
		break;
	}
}

static void *worker(void *arg)
{
	struct thr *t = arg;
	unsigned int i;

	gs_sh->beat[t->w].tid = gs_gettid();
	while (!gs_stopping()) {
		i = gs_pick(&t->rng, op_weight, NR_OPS);
		gs_beat_begin(t->w, i);
		switch (i) {
		case OP_OPEN: op_open(t); break;
		case OP_CLOSE: op_close(t); break;
		case OP_DUP: op_dup(t); break;
		case OP_ATTACH: op_attach(t); break;
		case OP_ACQUIRE: op_acquire(t, false); break;
		case OP_YIELD: op_acquire(t, true); break;
		case OP_RELEASE: op_release(t); break;
		case OP_SET_PARAMS: op_set_params(t); break;
		case OP_GET_INFO: op_get_info(t); break;
		case OP_IOCTL_RANDOM: op_ioctl_random(t); break;
		case OP_MMAP: op_mmap(t); break;
		case OP_MAP_OPS: op_map_ops(t); break;
		case OP_FORK: op_fork(t); break;
		case OP_CLOSE_WAIT: op_close_wait(t); break;
		case OP_SYSFS: op_sysfs(t); break;
		case OP_COMM: op_comm(t); break;
		case OP_MEM: op_mem(t); break;
		default: op_rw(t); break;
		}
		gs_count(i, 1);
		gs_beat_end(t->w);
	}
	for (i = 0; i < NFDS; i++)
		if (t->fds[i] >= 0)
			close(t->fds[i]);
	return NULL;
}

/* One process: its worker threads and a thread that interrupts them. */
static int worker_process(int proc, const struct gs_fuzz_opts *o, bool priv)
{
	struct sigaction sa = { .sa_handler = on_signal };	/* no SA_RESTART */
	struct gs_rng rng;
	bool *joined;
	int i, j;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGALRM, &sa, NULL);
	if (!priv)
		gs_drop_privileges();
	nthreads = o->threads;
	thrs = calloc(nthreads, sizeof(*thrs));
	for (i = 0; i < nthreads; i++) {
		struct thr *t = &thrs[i];

		t->w = proc * o->threads + i;
		t->priv = priv;
		gs_rng_init(&t->rng, o->seed, t->w + 1);
		for (j = 0; j < NFDS; j++)
			t->fds[j] = -1;
		t->buf = mmap(NULL, 3 * PAGE, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (t->buf == MAP_FAILED)
			return 1;
		mprotect(t->buf + PAGE, PAGE, PROT_NONE);
		mprotect(t->buf + 2 * PAGE, PAGE, PROT_READ);
		if (pthread_create(&t->thread, NULL, worker, t))
			return 1;
	}
	/* The interrupter: SIGUSR1 to one worker, now and then SIGALRM. */
	gs_rng_init(&rng, o->seed, 1000 + proc);
	joined = calloc(nthreads, sizeof(*joined));
	for (;;) {
		int alive = 0;

		gs_fuzz_sleep_us(200 + gs_below(&rng, 5000));
		for (i = 0; i < nthreads; i++) {
			if (!joined[i] && pthread_tryjoin_np(thrs[i].thread, NULL) == 0)
				joined[i] = true;
			alive += !joined[i];
		}
		if (!alive)
			break;
		i = gs_below(&rng, nthreads);
		if (!joined[i])
			pthread_kill(thrs[i].thread, SIGUSR1);
		if (gs_chance(&rng, 5)) {
			struct itimerval it = {
				.it_value = { 0, 100 + gs_below(&rng, 3000) },
			};

			setitimer(ITIMER_REAL, &it, NULL);
		}
	}
	return 0;
}

/*
 * After the run: every client gone, the token free, and a new client gets
 * it at once without waiting. The number of problems found.
 */
static int check_tokens(void)
{
	struct gpusched_acquire nb = { .flags = GPUSCHED_ACQUIRE_NONBLOCK };
	struct gpusched_attach a = { 0 };
	struct gpusched_release r = { 0 };
	unsigned int i;
	int bad = 0, fd, err;

	for (i = 0; i < GS_FUZZ_NR_GPUS; i++) {
		unsigned int g = fuzz_gpu_index[i];
		uint64_t end = gs_fuzz_now_ns() + 10000000000ull;

		while (gs_gpu_state(g, "nr_clients") != 0 && gs_fuzz_now_ns() < end)
			gs_fuzz_sleep_us(10000);
		if (gs_gpu_state(g, "nr_clients") || gs_gpu_state(g, "nr_waiting") ||
		    gs_gpu_state(g, "holder_pid")) {
			gs_fail(-1, "gpu%u after the run: %lld clients, %lld waiting, holder %lld",
				g, gs_gpu_state(g, "nr_clients"),
				gs_gpu_state(g, "nr_waiting"),
				gs_gpu_state(g, "holder_pid"));
			bad++;
		}
		fd = open(GPUSCHED_DEVICE_PATH, O_RDWR | O_CLOEXEC);
		gs_fuzz_uuid(a.uuid, i);
		err = fd < 0 ? -errno : xioctl(fd, GPUSCHED_IOC_ATTACH, &a);
		if (!err)
			err = xioctl(fd, GPUSCHED_IOC_ACQUIRE, &nb);
		if (!err)
			err = xioctl(fd, GPUSCHED_IOC_RELEASE, &r);
		if (err) {
			gs_fail(-1, "gpu%u after the run: a new client cannot take the token: %s",
				g, strerror(-err));
			bad++;
		}
		if (fd >= 0)
			close(fd);
	}
	return bad;
}

int main(int argc, char **argv)
{
	struct gs_fuzz_opts o = { .seconds = 10, .procs = 4, .threads = 3,
				  .hang_s = 60 };
	struct gs_knob_snap *knobs;
	pid_t pids[GS_FUZZ_MAX_WORKERS];
	uint64_t start, grants0[GS_FUZZ_NR_GPUS], overruns0[GS_FUZZ_NR_GPUS];
	uint64_t total;
	unsigned int i;
	int err, bad;

	gs_fuzz_start("fuzz-dev", op_names, argc, argv, &o);
	printf("# seed %#" PRIx64 " (GSFUZZ_SEED=%#" PRIx64 " or -s to rerun), %u s, %u processes x %u threads\n",
	       o.seed, o.seed, o.seconds, o.procs, o.threads);
	knobs = calloc(1, sizeof(*knobs));
	gs_knobs_save(knobs);
	err = gs_fuzz_find_gpus();
	if (err) {
		printf("not ok 1 - fuzz-dev: cannot attach: %s\n", strerror(-err));
		return 1;
	}
	for (i = 0; i < GS_FUZZ_NR_GPUS; i++) {
		grants0[i] = gs_gpu_state(fuzz_gpu_index[i], "grants");
		overruns0[i] = gs_gpu_state(fuzz_gpu_index[i], "overruns");
	}
	/* Fewer files than usual: EMFILE is a path worth taking too. */
	setrlimit(RLIMIT_NOFILE, &(struct rlimit){ 256, 256 });

	start = gs_fuzz_now_ns();
	gs_sh->end_ns = start + o.seconds * 1000000000ull;
	fflush(NULL);
	for (i = 0; i < o.procs; i++) {
		pids[i] = fork();
		if (pids[i] == 0)
			_exit(worker_process(i, &o, i % 2 == 0));
	}
	bad = gs_witness_start();
	gs_watch(pids, o.procs, o.procs * o.threads, &o);
	bad += gs_witness_stop();

	bad += check_tokens();
	bad += gs_knobs_restore(knobs);
	total = gs_fuzz_print_counts("operations", start, NR_OPS, NR_COUNTERS);
	printf("\n");
	for (i = 0; i < GS_FUZZ_NR_GPUS; i++)
		printf("# gpu%u: %lld grants, %lld overruns (revocations) during the run\n",
		       fuzz_gpu_index[i],
		       gs_gpu_state(fuzz_gpu_index[i], "grants") - (long long)grants0[i],
		       gs_gpu_state(fuzz_gpu_index[i], "overruns") - (long long)overruns0[i]);
	return gs_fuzz_verdict(o.seed, "operations", total, bad);
}
